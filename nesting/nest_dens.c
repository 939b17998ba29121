/* nest_dens.c - nearest-neighbour densities of the delay histograms */
/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>

#include "nesting/nest_int.h"

/* The support: a delay with no mass within this factor of it either way
 * (47 bins of 1.05) stays impossible, as with the bins alone; only where
 * there is mass near does a window take its density from further. With
 * densities everywhere, a call's auth server took a PostgreSQL call on two
 * of the rig's runs at low load: the histogram of auth -> pg, all of it
 * coincidental overlaps, then had density at every delay (docs/accuracy.md,
 * "Densities from the nearest neighbours"). */
#define NEST_DENS_REACH 10.0

/* One histogram half h (bins.n values) as nearest-neighbour densities: each
 * bin's mass becomes what the narrowest window of bins centred on it that
 * holds at least m of mass puts on the bin's width (window mass / window
 * width x bin width), so h[k] x binw[k] reads as that density. A bin that
 * holds m alone keeps its mass; one with no mass within reach bins either
 * side keeps its zero. P is scratch of bins.n + 1 values, W the prefix sums of
 * the bins' widths (in units of bin 1's), as many.
 *
 * Why: the scoreboard's bins are log-spaced, 50 ns wide at 1 us and 30 us
 * at 600 us, and a density is mass / width. A quarter of one child's mass
 * that a wrong candidate put at 0.7 us (bin 0) scored 3 times the true
 * 0.6 ms peak of a delay that is never under 0.1 ms (social-r390,
 * nginx -> social), and on the rig a few wrong gaps of 1-2 us outscored the
 * true 10-30 us ones. Such stray mass decides wherever the times of two
 * candidates are close, and the rounds learn it back from their own
 * choices. The estimate needs no shape; where the mass is dense it is the
 * bin's own. */
static void dens_half(const struct bb_nest *n, double *h, const double *bw, double m,
                      uint32_t reach, double *P, const double *W)
{
	uint32_t nb = n->cfg.bins.n;
	P[0] = 0;
	for (uint32_t k = 0; k < nb; k++)
		P[k + 1] = P[k] + h[k];
	if (!(P[nb] > 0))
		return;
	if (m > P[nb])
		m = P[nb];
	/* a bin further than reach from the first and the last with mass has
	 * none near: the loop below would leave it */
	uint32_t first = 0, last = nb - 1;
	while (!(h[first] > 0))
		first++;
	while (!(h[last] > 0))
		last--;
	uint32_t k0 = first > reach ? first - reach : 0;
	uint32_t k1 = reach >= nb - 1 - last ? nb : last + reach + 1;
	for (uint32_t k = k0; k < k1; k++) {
		if (h[k] >= m)
			continue;
		uint32_t a0 = k > reach ? k - reach : 0, b0 = reach >= nb - k ? nb : k + reach + 1;
		if (!(P[b0] - P[a0] > 0))
			continue; /* no mass near: stays impossible */
		uint32_t lo = 0, hi = nb; /* the least radius r with mass >= m */
		while (lo < hi) {
			uint32_t r = lo + (hi - lo) / 2;
			uint32_t a = k > r ? k - r : 0, b = r >= nb - k ? nb : k + r + 1;
			if (P[b] - P[a] >= m)
				hi = r;
			else
				lo = r + 1;
		}
		uint32_t a = k > lo ? k - lo : 0, b = lo >= nb - k ? nb : k + lo + 1;
		h[k] = (P[b] - P[a]) / (W[b] - W[a]) / bw[k];
	}
}

/* The histograms of which as nearest-neighbour densities (dens_half), with
 * density scores and a density mass: the scoreboard's after pass 1, the
 * return side's after their replay, the sequence gaps' after each round
 * learns them. (The timing-only bound keeps its raw bins, which it learns
 * from true delays only: with these densities it put 190 instead of 181 of
 * social-r390's 4,028 instances wrong.) */
void nest_densities(struct bb_nest *n, enum nest_dens which)
{
	double m = n->cfg.p.density_mass;
	if (!n->cfg.p.score_density || !(m > 0))
		return;
	uint32_t nb = n->cfg.bins.n;
	double r = floor(log(NEST_DENS_REACH) / log(n->cfg.bins.base));
	uint32_t reach = r < (double)nb ? (uint32_t)r : nb;
	double *P = bb_xmalloc(2 * ((size_t)nb + 1) * sizeof(*P)), *W = P + nb + 1;
	struct triple *t = which == NEST_DENS_RETURN ? n->board.rsb.t : n->board.tri;
	size_t nt = which == NEST_DENS_RETURN ? n->board.rsb.n : n->board.ntri;
	/* the widths' prefix sums, in units of bin 1's: binw's two halves hold
	 * the same widths (nest_bin_weights), so one table serves both */
	W[0] = 0;
	for (uint32_t k = 0; k < nb; k++)
		W[k + 1] = W[k] + 1.0 / n->board.binw[k];
	for (size_t i = 0; i < nt; i++) {
		int seq = (t[i].c & (NEST_SEQ_FIRST | NEST_SEQ_NEXT)) != 0;
		if ((which != NEST_DENS_RETURN && seq != (which == NEST_DENS_SEQ)) || !t[i].h)
			continue; /* or a sequence histogram no one reads (nest_seq.c) */
		for (uint32_t half = 0; half < nest_tri_halves(&t[i]); half++)
			dens_half(n, t[i].h + (size_t)half * nb, n->board.binw + (size_t)half * nb, m,
			          reach, P, W);
	}
	free(P);
}

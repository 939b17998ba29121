/* conv_spike.c - spikes of a correlation: N standard deviations up, S between */
/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "convolution/conv_int.h"

/* Section 5.2: a spike is a local maximum at least N standard deviations
 * above the mean; close maxima form one group unless some point between them
 * falls under S standard deviations (S < N); each group is represented by its
 * largest point.
 *
 * The mean and deviation are those of the computed lag window only,
 * [-w, max delay], not of the whole correlation: the window is all we
 * compute. A short window has a problem the paper's whole-trace statistics
 * did not: one strong spike inflates the deviation so much that a secondary
 * spike (figure 16's 10 s and 15 s beside 0 s) stays under N deviations. So
 * the statistics are recomputed without the points of the groups already
 * found (those at or above S deviations), and the search repeats until it
 * finds no new spike (at most 8 rounds). In later rounds the spikes already
 * found also cut groups, so that a secondary spike next to the primary one
 * (10 s beside 15 s at mu = 5 s) is not merged into it. The flanks of a broad
 * spike may then pass as spikes too; the path search drops them, because the
 * messages they would match are claimed by the stronger spike first. On a
 * window without a spike this is exactly the paper's rule.
 *
 * Groups are formed from index `from` on only (the lag 0): the negative lags
 * count in the statistics but hold no spike, and a group is cut at lag 0.
 * Otherwise a strong anti-causal peak just before 0 (the call that a return
 * answers, one return delay earlier) would swallow the causal spike just
 * after 0 into its group, and both would be lost. */

#define ROUNDS 8

/* One pass: the statistics of the points not in stat_excl; groups of points
 * in [from, n) at or above S deviations, cut by points under S and by the
 * spikes of earlier rounds (is_spike); the largest point of a group is a new
 * spike if it reaches N deviations. Marks the points of the groups that hold
 * a new spike in grp. Returns the number of new spikes, written to pos. */
static size_t pass(const double *c, size_t n, size_t from, const unsigned char *stat_excl,
                   const unsigned char *is_spike, double n_sd, double s_sd, size_t *pos, size_t max,
                   unsigned char *grp)
{
	double sum = 0, sum2 = 0, top = 0;
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		top = fmax(top, fabs(c[i]));
		if (!stat_excl[i]) {
			sum += c[i];
			m++;
		}
	}
	if (m == 0)
		return 0;
	double mean = sum / (double)m;
	for (size_t i = 0; i < n; i++)
		if (!stat_excl[i])
			sum2 += (c[i] - mean) * (c[i] - mean);
	double sd = sqrt(sum2 / (double)m);
	/* A flat window has no spike; the floor hides the FFT's rounding noise
	 * (about 1e-12 of the largest value) on an otherwise flat window. */
	if (sd <= 1e-9 * top)
		sd = 1e-9 * top;
	if (sd == 0)
		return 0;
	double hi = mean + n_sd * sd, lo = mean + s_sd * sd;
	size_t found = 0, best = 0, gstart = 0;
	int in_group = 0, have = 0;
	for (size_t i = from; i <= n; i++) {
		if (i == n || c[i] < lo || is_spike[i]) {
			if (in_group && have) {
				if (found < max)
					pos[found] = best;
				found++;
				for (size_t k = gstart; k < i; k++)
					grp[k] = 1;
			}
			in_group = have = 0;
			continue;
		}
		if (!in_group)
			gstart = i;
		in_group = 1;
		/* The largest point of a group is a local maximum by construction;
		 * on a plateau the first point wins. */
		if (c[i] >= hi && (!have || c[i] > c[best])) {
			best = i;
			have = 1;
		}
	}
	return found;
}

static int cmp_size(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return x < y ? -1 : x > y;
}

size_t conv_spikes(const double *c, size_t n, size_t from, double n_sd, double s_sd, size_t *pos,
                   size_t max)
{
	if (n == 0 || from >= n)
		return 0;
	unsigned char *excl = bb_xcalloc(n, 1), *grp = bb_xcalloc(n, 1), *spk = bb_xcalloc(n, 1);
	size_t *fresh = bb_xmalloc(n * sizeof(*fresh));
	size_t found = 0;
	for (int round = 0; round < ROUNDS; round++) {
		memset(grp, 0, n);
		size_t f = pass(c, n, from, excl, spk, n_sd, s_sd, fresh, n, grp);
		if (f == 0)
			break;
		for (size_t i = 0; i < f && i < n; i++) {
			spk[fresh[i]] = 1;
			if (found < max)
				pos[found] = fresh[i];
			found++;
		}
		for (size_t i = 0; i < n; i++)
			if (grp[i])
				excl[i] = 1;
	}
	qsort(pos, found < max ? found : max, sizeof(*pos), cmp_size);
	free(excl);
	free(grp);
	free(spk);
	free(fresh);
	return found;
}

/* Sliding median of c over [i - k, i + k] (clamped to the window), kept as a
 * sorted array: O(n k). */
void conv_detrend(const double *c, size_t n, size_t k, double *out)
{
	if (n == 0)
		return;
	double *win = bb_xmalloc((2 * k + 1) * sizeof(*win));
	size_t m = 0, lo = 0, hi = 0; /* window holds c[lo..hi) */
	for (size_t i = 0; i < n; i++) {
		size_t want_lo = i > k ? i - k : 0, want_hi = i + k + 1 < n ? i + k + 1 : n;
		while (lo < want_lo) { /* remove c[lo] */
			double v = c[lo++];
			size_t p = 0;
			while (p < m && win[p] != v)
				p++;
			for (; p + 1 < m; p++)
				win[p] = win[p + 1];
			m--;
		}
		while (hi < want_hi) { /* insert c[hi] */
			double v = c[hi++];
			size_t p = m;
			while (p > 0 && win[p - 1] > v) {
				win[p] = win[p - 1];
				p--;
			}
			win[p] = v;
			m++;
		}
		double med = m % 2 ? win[m / 2] : 0.5 * (win[m / 2 - 1] + win[m / 2]);
		out[i] = c[i] - med;
	}
	free(win);
}

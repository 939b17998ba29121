/* nest_hist.c - log-1.05 bins and sparse duration histograms */
/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nesting/nest_int.h"

/* Bin k (1..n-2) starts at edge[k] = round(min * base^(k-1)); edge[n-1] is
 * max. The edges are computed once here: nest_bin used to call pow() twice
 * per delay, which was a tenth of bbnest's time. */
static int64_t edge_at(const struct nest_bins *b, uint32_t k)
{
	return llround((double)b->min_ns * pow(b->base, (double)(k - 1)));
}

/* The bin of d by the edges alone: the last k in 1..n-2 with edge[k] <= d
 * (d in [min, max)). */
static uint32_t search_bin(const struct nest_bins *b, int64_t d)
{
	uint32_t lo = 1, hi = b->n - 2; /* edge[lo] <= d; answer in [lo, hi] */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo + 1) / 2;
		if (b->edge[mid] <= d)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

void nest_bins_init(struct nest_bins *b, int64_t min_ns, int64_t max_ns, double base)
{
	memset(b, 0, sizeof(*b));
	b->min_ns = min_ns;
	b->max_ns = max_ns;
	b->base = base;
	b->lbase = log(base);
	b->n = 2 + (uint32_t)ceil(log((double)max_ns / (double)min_ns) / b->lbase - 1e-9);
	b->edge = bb_xmalloc(b->n * sizeof(*b->edge));
	b->edge[0] = 0;
	for (uint32_t k = 1; k + 1 < b->n; k++)
		b->edge[k] = edge_at(b, k);
	b->edge[b->n - 1] = max_ns;
	/* The fast lookup (a table over octave cells, then a walk along the
	 * edges) gives the bin the edges say, which is what the log() formula
	 * gives as long as every bin is at least 2 ns wide (its one-step
	 * correction then covers log's rounding and the rounded edges). */
	int fast = max_ns < (INT64_C(1) << 53) && b->n >= 3;
	for (uint32_t k = 1; fast && k + 1 < b->n; k++)
		fast = b->edge[k + 1] - b->edge[k] >= 2;
	if (!fast)
		return;
	b->cell0 = nest_cell_of(min_ns);
	uint32_t ncell = nest_cell_of(max_ns - 1) - b->cell0 + 1;
	b->cell = bb_xmalloc(ncell * sizeof(*b->cell));
	for (uint32_t i = 0; i < ncell; i++) {
		/* the smallest d >= min in cell i */
		uint64_t u = (uint64_t)(b->cell0 + i) << (52 - NEST_CELL_BITS);
		double v;
		memcpy(&v, &u, sizeof(v));
		int64_t d = (int64_t)ceil(v);
		if (d < min_ns)
			d = min_ns;
		b->cell[i] = d < max_ns ? search_bin(b, d) : b->n - 2;
	}
	b->ncell = ncell;
}

void nest_bins_free(struct nest_bins *b)
{
	free(b->edge);
	free(b->cell);
	b->edge = NULL;
	b->cell = NULL;
	b->ncell = 0;
}

/* The bin by the log formula, corrected by one step at the edges. */
uint32_t nest_bin_log(const struct nest_bins *b, int64_t d)
{
	double x = log((double)d / (double)b->min_ns) / b->lbase;
	uint32_t k = 1 + (uint32_t)x;
	/* log() may land a hair on either side of an exact edge */
	int64_t lo, hi;
	nest_bin_range(b, k, &lo, &hi);
	if (d < lo && k > 1)
		k--;
	else if (d >= hi && k < b->n - 2)
		k++;
	return k < b->n - 2 ? k : b->n - 2;
}

uint32_t nest_bin_slow(const struct nest_bins *b, int64_t d)
{
	if (d < b->min_ns)
		return 0;
	if (d >= b->max_ns)
		return b->n - 1;
	return nest_bin_log(b, d);
}

void nest_bin_range(const struct nest_bins *b, uint32_t k, int64_t *lo, int64_t *hi)
{
	if (k == 0) {
		*lo = 0;
		*hi = b->min_ns;
	} else if (k >= b->n - 1) {
		*lo = b->max_ns;
		*hi = INT64_MAX;
	} else if (b->edge) {
		*lo = b->edge[k];
		*hi = b->edge[k + 1];
	} else {
		*lo = edge_at(b, k);
		*hi = k == b->n - 2 ? b->max_ns : edge_at(b, k + 1);
	}
}

/* A histogram with this many adds a bin counts in an array of all the bins
 * from then on (dense): no search and no insertion an add (a pattern's
 * histograms take most of a trace's adds: 1.9 M on table1-par-medium, 1.0%
 * of its instructions less with 2, 0.4% with 8), and the array (8 bytes a
 * bin) is at most 4 bytes an add. */
#define HIST_DENSE 2

static void to_dense(struct nest_hist *h, const struct nest_bins *bins)
{
	h->dense = bb_xcalloc(bins->n, sizeof(*h->dense));
	for (uint32_t i = 0; i < h->nb; i++)
		h->dense[h->b[i].bin] = h->b[i].count;
	free(h->b);
	h->b = NULL;
	h->nb = h->cap = 0;
}

void nest_hist_seal(struct nest_hist *h, const struct nest_bins *bins)
{
	if (!h->dense)
		return;
	h->cap = 0; /* the bins in use: one at least, as h->n > 0 */
	for (uint32_t k = 0; k < bins->n; k++)
		h->cap += h->dense[k] != 0;
	h->b = bb_xmalloc(h->cap * sizeof(*h->b));
	h->nb = 0;
	for (uint32_t k = 0; k < bins->n; k++)
		if (h->dense[k])
			h->b[h->nb++] = (struct nest_hbin){k, h->dense[k]};
	free(h->dense);
	h->dense = NULL;
}

void nest_hist_add(struct nest_hist *h, const struct nest_bins *bins, int64_t v)
{
	if (h->n == 0 || v < h->min)
		h->min = v;
	if (h->n == 0 || v > h->max)
		h->max = v;
	h->n++;
	h->sum += (double)v;
	uint32_t k = nest_bin(bins, v);
	if (h->dense) {
		h->dense[k]++;
		return;
	}
	if (h->n >= (uint64_t)HIST_DENSE * bins->n) {
		to_dense(h, bins);
		h->dense[k]++;
		return;
	}
	/* the first entry with bin >= k; branch-free halving, as the bins hit
	 * are too irregular for a branch predictor */
	uint32_t lo = 0;
	if (h->nb) {
		const struct nest_hbin *b = h->b;
		uint32_t len = h->nb;
		while (len > 1) {
			uint32_t half = len / 2;
			b = b[half].bin < k ? b + half : b;
			len -= half;
		}
		lo = (uint32_t)(b - h->b) + (b->bin < k);
	}
	if (lo < h->nb && h->b[lo].bin == k) {
		h->b[lo].count++;
		return;
	}
	if (h->nb == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 4;
		h->b = bb_xrealloc(h->b, h->cap * sizeof(*h->b));
	}
	memmove(&h->b[lo + 1], &h->b[lo], (h->nb - lo) * sizeof(*h->b));
	h->b[lo].bin = k;
	h->b[lo].count = 1;
	h->nb++;
}

void nest_hist_free(struct nest_hist *h)
{
	free(h->b);
	free(h->dense);
	memset(h, 0, sizeof(*h));
}

int64_t nest_hist_quantile(const struct nest_hist *h, const struct nest_bins *bins, double q)
{
	if (h->n == 0)
		return 0;
	uint64_t want = (uint64_t)ceil(q * (double)h->n);
	if (want < 1)
		want = 1;
	uint64_t cum = 0;
	uint32_t k = h->b[h->nb - 1].bin;
	for (uint32_t i = 0; i < h->nb; i++) {
		cum += h->b[i].count;
		if (cum >= want) {
			k = h->b[i].bin;
			break;
		}
	}
	int64_t v;
	if (k == 0)
		v = h->min;
	else if (k >= bins->n - 1)
		v = h->max;
	else
		v = llround((double)bins->min_ns * pow(bins->base, (double)k - 0.5));
	if (v < h->min)
		v = h->min;
	if (v > h->max)
		v = h->max;
	return v;
}

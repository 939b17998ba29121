/* nest_hist.c - log-1.05 bins and sparse duration histograms */
/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nesting/nest_int.h"

void nest_bins_init(struct nest_bins *b, int64_t min_ns, int64_t max_ns, double base)
{
	b->min_ns = min_ns;
	b->max_ns = max_ns;
	b->base = base;
	b->lbase = log(base);
	b->n = 2 + (uint32_t)ceil(log((double)max_ns / (double)min_ns) / b->lbase - 1e-9);
}

uint32_t nest_bin(const struct nest_bins *b, int64_t d)
{
	if (d < b->min_ns)
		return 0;
	if (d >= b->max_ns)
		return b->n - 1;
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

void nest_bin_range(const struct nest_bins *b, uint32_t k, int64_t *lo, int64_t *hi)
{
	if (k == 0) {
		*lo = 0;
		*hi = b->min_ns;
	} else if (k >= b->n - 1) {
		*lo = b->max_ns;
		*hi = INT64_MAX;
	} else {
		*lo = llround((double)b->min_ns * pow(b->base, (double)(k - 1)));
		*hi = k == b->n - 2 ? b->max_ns
		                    : llround((double)b->min_ns * pow(b->base, (double)k));
	}
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
	uint32_t lo = 0, hi = h->nb;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (h->b[mid].bin < k)
			lo = mid + 1;
		else
			hi = mid;
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

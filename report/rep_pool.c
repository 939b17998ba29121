/* rep_pool.c - delay distributions pooled from histogram bins: merged bins, quantiles */
/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/rep_int.h"

/* The middle of a bin: geometric for log bins, the lower end for the open
 * last bin, half the upper end for the first. */
double rep_bin_mid(const struct bb_vbin *b)
{
	if (b->hi_ns == INT64_MAX || b->hi_ns <= b->lo_ns)
		return (double)b->lo_ns;
	if (b->lo_ns <= 0)
		return (double)b->hi_ns / 2;
	return sqrt((double)b->lo_ns * (double)b->hi_ns);
}

void rep_pool_add(struct rep_pool *p, const struct bb_vstat *s)
{
	p->n += s->n;
	p->sum += s->mean * (double)s->n;
	for (size_t i = 0; i < s->nbins; i++) {
		size_t k = 0;
		while (k < p->nb && p->b[k].lo_ns < s->bins[i].lo_ns)
			k++;
		if (k < p->nb && p->b[k].lo_ns == s->bins[i].lo_ns) {
			p->b[k].count += s->bins[i].count;
			continue;
		}
		if (p->nb == p->cap) {
			p->cap = p->cap ? 2 * p->cap : 32;
			p->b = bb_xrealloc(p->b, p->cap * sizeof(*p->b));
		}
		memmove(&p->b[k + 1], &p->b[k], (p->nb - k) * sizeof(*p->b));
		p->b[k] = s->bins[i];
		p->nb++;
	}
}

int64_t rep_pool_quantile(const struct rep_pool *p, double q)
{
	uint64_t total = 0, want, acc = 0;
	for (size_t i = 0; i < p->nb; i++)
		total += p->b[i].count;
	if (!total)
		return 0;
	want = (uint64_t)ceil(q * (double)total);
	for (size_t i = 0; i < p->nb; i++) {
		acc += p->b[i].count;
		if (acc >= want)
			return llround(rep_bin_mid(&p->b[i]));
	}
	return llround(rep_bin_mid(&p->b[p->nb - 1]));
}

void rep_pool_dist(const struct rep_pool *p, struct bb_rep_dist *d)
{
	d->n = p->n;
	d->mean_ns = p->n ? p->sum / (double)p->n : 0;
	d->p50 = rep_pool_quantile(p, 0.50);
	d->p90 = rep_pool_quantile(p, 0.90);
	d->p99 = rep_pool_quantile(p, 0.99);
}


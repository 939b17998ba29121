/* nest_bound.c - --bound: the timing-only reference assignment, by the true delay distributions */
/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nesting/nest_int.h"

/* How well could any assignment of children to parents do that looks at
 * nothing but the times, if it knew the true delay distributions and the true
 * number of children of every call? This answers with one such assignment
 * (docs/nesting.md, "The timing-only bound"):
 *
 * 1. A replay collects every child call's candidates (the calls into its
 *    caller open over it, as for the inference) and its true parent: the
 *    candidate of the same path instance (path=) that the oracle takes
 *    (nest_path_better).
 * 2. From the true pairs it learns, per kind (the parent's caller, the
 *    parent's node, its req= label, and the child's callee), the histograms
 *    of the delay from the parent's call to the child's call and of the delay
 *    from the child's return to the parent's return, in the scoreboard's log
 *    bins; and per parent call, its true number of children into each callee.
 * 3. Every candidate gets the log-likelihood of its two delays under its
 *    kind's histograms (densities, with a small pseudo-count so that an empty
 *    bin is unlikely, not impossible; -inf when the kind never occurs), and
 *    the min-cost-flow solver of --global (nest_global.c) chooses the
 *    assignment with the highest total under the true counts as capacities.
 *
 * It is learnt on the trace it assigns and its per-candidate score ignores
 * the siblings, so it is a reference, not a proof that no timing-only method
 * can do better (docs/nesting.md). */

#define PSEUDO 0.01 /* counts added to every bin of a learnt histogram */

struct bkind {
	uint32_t pfrom, pto, preq, c;
	uint64_t n;
	double *h; /* 2 * bins.n: call-side delays, then return-side delays */
};

struct bcap {
	uint32_t par, c; /* par BB_NONE: empty */
	uint32_t n;
};

struct nest_bound {
	struct bkind *k;
	size_t nk, capk;
	uint32_t *kidx; /* open addressing: kind index + 1, 0 empty */
	size_t kcap;
	struct bcap *cap;
	size_t ncap, capcap;
};

static uint64_t mix(uint64_t h, uint32_t v)
{
	h = (h ^ v) * 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 29);
}

static uint64_t kind_hash(uint32_t pfrom, uint32_t pto, uint32_t preq, uint32_t c)
{
	return mix(mix(mix(mix(0, pfrom), pto), preq), c);
}

/* The kind (pfrom, pto, preq, c): its index, or BB_NONE when it is new and
 * create is 0. */
static uint32_t kind_find(struct bb_nest *n, uint32_t pfrom, uint32_t pto, uint32_t preq,
                          uint32_t c, int create)
{
	struct nest_bound *b = n->solve.bnd;
	uint64_t h = kind_hash(pfrom, pto, preq, c);
	if (b->kcap) {
		for (size_t q = h & (b->kcap - 1); b->kidx[q]; q = (q + 1) & (b->kcap - 1)) {
			const struct bkind *k = &b->k[b->kidx[q] - 1];
			if (k->pfrom == pfrom && k->pto == pto && k->preq == preq && k->c == c)
				return b->kidx[q] - 1;
		}
	}
	if (!create)
		return BB_NONE;
	if (b->nk == b->capk) {
		b->capk = b->capk ? 2 * b->capk : 64;
		b->k = bb_xrealloc(b->k, b->capk * sizeof(*b->k));
	}
	b->k[b->nk] =
	    (struct bkind){pfrom, pto, preq, c, 0, bb_xcalloc(2 * n->cfg.bins.n, sizeof(double))};
	b->nk++;
	if (2 * b->nk > b->kcap) {
		/* grow, and index every kind (the new one too) again */
		b->kcap = b->kcap ? 2 * b->kcap : 64;
		free(b->kidx);
		b->kidx = bb_xcalloc(b->kcap, sizeof(*b->kidx));
		for (size_t i = 0; i < b->nk; i++) {
			const struct bkind *k = &b->k[i];
			size_t q = kind_hash(k->pfrom, k->pto, k->preq, k->c) & (b->kcap - 1);
			while (b->kidx[q])
				q = (q + 1) & (b->kcap - 1);
			b->kidx[q] = (uint32_t)i + 1;
		}
	} else {
		size_t q = h & (b->kcap - 1);
		while (b->kidx[q])
			q = (q + 1) & (b->kcap - 1);
		b->kidx[q] = (uint32_t)b->nk;
	}
	return (uint32_t)(b->nk - 1);
}

/* The true-count entry of (par, c), created at 0 when create. */
static struct bcap *cap_find(struct nest_bound *b, uint32_t par, uint32_t c, int create)
{
	if (create && 2 * (b->ncap + 1) > b->capcap) {
		size_t ncap = b->capcap ? 2 * b->capcap : 1024;
		struct bcap *t = bb_xmalloc(ncap * sizeof(*t));
		for (size_t i = 0; i < ncap; i++)
			t[i].par = BB_NONE;
		for (size_t i = 0; i < b->capcap; i++) {
			if (b->cap[i].par == BB_NONE)
				continue;
			size_t q = mix(mix(0, b->cap[i].par), b->cap[i].c) & (ncap - 1);
			while (t[q].par != BB_NONE)
				q = (q + 1) & (ncap - 1);
			t[q] = b->cap[i];
		}
		free(b->cap);
		b->cap = t;
		b->capcap = ncap;
	}
	if (!b->capcap)
		return NULL;
	size_t q = mix(mix(0, par), c) & (b->capcap - 1);
	for (; b->cap[q].par != BB_NONE; q = (q + 1) & (b->capcap - 1))
		if (b->cap[q].par == par && b->cap[q].c == c)
			return &b->cap[q];
	if (!create)
		return NULL;
	b->cap[q] = (struct bcap){par, c, 0};
	b->ncap++;
	return &b->cap[q];
}

/* nest_cap_fn: the true counts. */
static uint32_t true_cap(struct bb_nest *n, uint32_t par, uint32_t c)
{
	const struct bcap *e = cap_find(n->solve.bnd, par, c, 0);
	return e ? e->n : 0;
}

void nest_bound_collect(struct bb_nest *n, const struct call *c, struct call **cand, size_t nc)
{
	struct nest_global *g = &n->solve.glob;
	size_t ci = g->nch;
	nest_global_collect(n, c, cand, nc);
	if (g->nch == ci)
		return; /* over the memory budget */
	if (g->nch > g->captruth) {
		g->captruth = g->capch;
		g->truth = bb_xrealloc(g->truth, g->captruth * sizeof(*g->truth));
	}
	g->truth[ci] = BB_NONE;
	uint32_t path = c->ridx != BB_NONE ? n->recs.rpath[c->ridx] : BB_NONE;
	if (path == BB_NONE)
		return;
	size_t best = nc;
	for (size_t i = 0; i < nc; i++)
		if (cand[i]->ridx != BB_NONE && n->recs.rpath[cand[i]->ridx] == path &&
		    (best == nc || nest_path_better(c, cand[i], cand[best])))
			best = i;
	if (best < nc)
		g->truth[ci] = g->ch[ci].off + (uint32_t)best;
}

/* How far candidate p's times are from nesting child c (0 when they do):
 * what the skew window had to allow. */
static int64_t path_slack(const struct call *c, const struct call *p)
{
	int64_t s = p->call_ts > c->call_ts ? p->call_ts - c->call_ts : 0;
	if (p->ret_ts != BB_NO_TIME && c->ret_ts != BB_NO_TIME && c->ret_ts > p->ret_ts)
		s += c->ret_ts - p->ret_ts;
	return s;
}

int nest_path_better(const struct call *c, const struct call *a, const struct call *b)
{
	int64_t sa = path_slack(c, a), sb = path_slack(c, b);
	return sa != sb ? sa < sb : a->call_ts > b->call_ts;
}

/* The kind of parent call par (a CALL record) with a child into c. */
static uint32_t kind_of(struct bb_nest *n, uint32_t par, uint32_t c, int create)
{
	const struct mrec *m = &n->recs.rec[par];
	uint32_t req = n->recs.rreq ? n->recs.rreq[par] : BB_NONE;
	return kind_find(n, m->op_from & REC_NODE_MAX, m->arg, req, c, create);
}

/* The two delays of child ch under parent par; BB_NO_TIME where a return is
 * missing. */
static void delays(const struct bb_nest *n, uint32_t par, uint32_t ch, int64_t *call_d,
                   int64_t *ret_d)
{
	*call_d = nest_sub(n->recs.rec[ch].u.ts, n->recs.rec[par].u.ts);
	int64_t pr = n->recs.rret[par], cr = n->recs.rret[ch];
	*ret_d = pr == BB_NO_TIME || cr == BB_NO_TIME ? BB_NO_TIME : nest_sub(pr, cr);
}

/* log density of d in histogram h (n samples) of the scoreboard's bins */
static double log_density(const struct bb_nest *n, const double *h, uint64_t cnt, int64_t d)
{
	uint32_t k = nest_bin(&n->cfg.bins, d < 0 ? 0 : d);
	int64_t lo, hi;
	nest_bin_range(&n->cfg.bins, k, &lo, &hi);
	double w = hi > lo ? (double)(hi - lo) : 1.0;
	return log((h[k] + PSEUDO) / (((double)cnt + PSEUDO * n->cfg.bins.n) * w));
}

void nest_bound_solve(struct bb_nest *n)
{
	struct nest_global *g = &n->solve.glob;
	if (g->full || !n->recs.rret || !n->recs.rpath)
		return;
	nest_bound_free(n);
	n->solve.bnd = bb_xcalloc(1, sizeof(*n->solve.bnd));
	uint32_t nb = n->cfg.bins.n;
	uint64_t taught = 0;
	/* what the true pairs show */
	for (size_t ci = 0; ci < g->nch; ci++) {
		if (g->truth[ci] == BB_NONE)
			continue;
		const struct nest_gchild *x = &g->ch[ci];
		uint32_t par = g->ent[g->truth[ci]].par;
		uint32_t ki = kind_of(n, par, x->c, 1);
		struct bkind *k = &n->solve.bnd->k[ki];
		int64_t d1, d2;
		delays(n, par, x->ridx, &d1, &d2);
		k->h[nest_bin(&n->cfg.bins, d1 < 0 ? 0 : d1)] += 1;
		k->h[nb + nest_bin(&n->cfg.bins, d2 == BB_NO_TIME || d2 < 0 ? 0 : d2)] += 1;
		k->n++;
		cap_find(n->solve.bnd, par, x->c, 1)->n++;
		cap_find(n->solve.bnd, par, NEST_ANY, 1)->n++;
		taught++;
	}
	/* every candidate's log-likelihood */
	for (size_t ci = 0; ci < g->nch; ci++) {
		const struct nest_gchild *x = &g->ch[ci];
		for (uint32_t j = 0; j < x->nc; j++) {
			struct nest_gent *e = &g->ent[x->off + j];
			uint32_t ki = kind_of(n, e->par, x->c, 0);
			if (ki == BB_NONE) {
				e->w = -INFINITY;
				continue;
			}
			const struct bkind *k = &n->solve.bnd->k[ki];
			int64_t d1, d2;
			delays(n, e->par, x->ridx, &d1, &d2);
			double w = log_density(n, k->h, k->n, d1);
			if (d2 != BB_NO_TIME)
				w += log_density(n, k->h + nb, k->n, d2);
			e->w = (float)w;
		}
	}
	n->st.bound_children = taught;
	if (!taught) {
		/* no true pair (no path= attributes): nothing to learn, no bound */
		nest_bound_free(n);
		return;
	}
	/* the flow solver of --global, with the true counts as capacities and no
	 * penalties (the counts already say how many children a call has) */
	double py = n->cfg.p.penalty_y, pz = n->cfg.p.penalty_z;
	n->cfg.p.penalty_y = n->cfg.p.penalty_z = 0;
	g->cap = true_cap;
	nest_global_solve(n);
	n->cfg.p.penalty_y = py;
	n->cfg.p.penalty_z = pz;
	n->st.bound_used = 1;
	nest_bound_free(n);
}

void nest_bound_free(struct bb_nest *n)
{
	struct nest_bound *b = n->solve.bnd;
	if (!b)
		return;
	for (size_t i = 0; i < b->nk; i++)
		free(b->k[i].h);
	free(b->k);
	free(b->kidx);
	free(b->cap);
	free(b);
	n->solve.bnd = NULL;
}

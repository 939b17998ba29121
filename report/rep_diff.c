/* rep_diff.c - what got slower between a baseline and a slow run: matched patterns, own delays, tests */
/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/rep_int.h"

/* How a change is found (docs/report.md, "bbdiff"):
 * 1. Patterns are matched by their text (node names in call order).
 * 2. In each pattern seen at least min_count times in both runs, every edge
 *    (the call delay of a call: from its parent's call to it) and every node
 *    (its latency) is a quantity whose mean may have changed. A node's or an
 *    edge's raw change also carries what happened before it: when pg gets
 *    30 ms slower, so do app2, nginx and the client, and app2's calls after
 *    pg come 30 ms later. The change that is its own is the raw change less
 *    that of what it waited for: for an edge, the end (call delay + latency)
 *    of the latest earlier sibling that had returned before it was called (in
 *    the baseline's means), else nothing; for a node, the end of its child
 *    that ends last. Its standard error counts each term as independent (an
 *    overestimate: the terms are positively correlated).
 * 3. Each quantity's raw distributions (histogram bins) are compared by the
 *    Mann-Whitney U test (ties within a bin), the p values corrected for
 *    the number of tests by Holm's step-down method.
 * 4. A change is flagged when its corrected p is below alpha and its own
 *    change is at least min_delta and min_z standard errors. Flagged entries
 *    of the same edge or node in several patterns make one change.
 * 5. A pattern's share of the instances is compared by a two-proportion z
 *    test (Holm again), flagged from min_share. */

void bb_rep_diff_params_init(struct bb_rep_diff_params *p)
{
	p->alpha = 0.01;
	p->min_delta_ns = 1000000;
	p->min_z = 4;
	p->min_share = 0.02;
	p->min_count = 10;
}

/* ---- distributions -------------------------------------------------------------- */

static double stat_var(const struct bb_vstat *s)
{
	if (s->n < 2 || !s->nbins)
		return 0;
	double m2 = 0;
	for (size_t i = 0; i < s->nbins; i++) {
		double x = rep_bin_mid(&s->bins[i]) - s->mean;
		m2 += (double)s->bins[i].count * x * x;
	}
	return m2 / (double)(s->n - 1);
}

/* Two-sided p of the Mann-Whitney U test between two binned samples (bins
 * of the same run parameters: equal lo_ns means the same bin), ties
 * corrected, with continuity correction; normal approximation. */
static double mwu_p(const struct bb_vstat *a, const struct bb_vstat *b)
{
	double na = (double)a->n, nb = (double)b->n;
	if (a->n == 0 || b->n == 0)
		return 1;
	size_t i = 0, j = 0;
	double u = 0, below_b = 0, ties = 0;
	while (i < a->nbins || j < b->nbins) {
		int64_t lo = i < a->nbins && (j >= b->nbins || a->bins[i].lo_ns <= b->bins[j].lo_ns)
		                 ? a->bins[i].lo_ns
		                 : b->bins[j].lo_ns;
		double ca = 0, cb = 0;
		if (i < a->nbins && a->bins[i].lo_ns == lo)
			ca = (double)a->bins[i++].count;
		if (j < b->nbins && b->bins[j].lo_ns == lo)
			cb = (double)b->bins[j++].count;
		u += ca * (below_b + cb / 2);
		below_b += cb;
		double t = ca + cb;
		ties += t * t * t - t;
	}
	double n = na + nb, mu = na * nb / 2;
	double var = na * nb / 12 * ((n + 1) - ties / (n * (n - 1)));
	if (!(var > 0))
		return 1;
	double z = (fabs(u - mu) - 0.5) / sqrt(var);
	if (z < 0)
		z = 0;
	return erfc(z / sqrt(2));
}

/* ---- the tests ----------------------------------------------------------------- */

struct entry {
	enum bb_rep_kind kind;
	const char *from, *to;
	size_t pat;               /* index in the slow run */
	double own, se, w;
	double p, ph;             /* raw and Holm-corrected */
	const struct bb_vstat *qb, *qs; /* the raw quantity */
	int flagged;
};

struct bb_rep_diff {
	struct bb_rep_diff_params p;
	const struct bb_vpatterns *base, *slow;
	struct entry *e;
	size_t ne, cape;
	char **shape_b, **shape_s, **id_b, **id_s;
	size_t matched, only_b, only_s;
	struct bb_rep_change *ch;
	size_t nch;
	const char **lists;       /* the changes' pattern lists, one block */
	size_t nlists;
	struct rep_pool *pools;
	size_t npools;
};

static struct entry *entry_new(struct bb_rep_diff *d)
{
	if (d->ne == d->cape) {
		d->cape = d->cape ? 2 * d->cape : 64;
		d->e = bb_xrealloc(d->e, d->cape * sizeof(*d->e));
	}
	struct entry *e = &d->e[d->ne++];
	memset(e, 0, sizeof(*e));
	return e;
}

static double end_mean(const struct bb_vnode *c)
{
	return c->call_delay.mean + c->latency.mean;
}

static double dvar(const struct bb_vstat *b, const struct bb_vstat *s)
{
	return stat_var(b) / (double)(b->n ? b->n : 1) + stat_var(s) / (double)(s->n ? s->n : 1);
}

static void add_test(struct bb_rep_diff *d, enum bb_rep_kind kind, const char *from,
                     const char *to, size_t pat, const struct bb_vstat *qb,
                     const struct bb_vstat *qs, double own, double var)
{
	if (qb->n < d->p.min_count || qs->n < d->p.min_count)
		return;
	struct entry *e = entry_new(d);
	e->kind = kind;
	e->from = from;
	e->to = to;
	e->pat = pat;
	e->own = own;
	e->se = sqrt(var);
	e->w = (double)(qb->n < qs->n ? qb->n : qs->n);
	e->p = mwu_p(qb, qs);
	e->qb = qb;
	e->qs = qs;
}

/* b and s: the same position in the same pattern of the two runs. */
static void visit(struct bb_rep_diff *d, size_t pat, const struct bb_vnode *b,
                  const struct bb_vnode *s, int depth)
{
	size_t n = b->nchildren;
	/* the pattern's root is the client: its latency is its first call's */
	if (depth > 0) {
		double own = s->latency.mean - b->latency.mean;
		double var = dvar(&b->latency, &s->latency);
		if (n) {
			size_t last = 0;
			for (size_t i = 1; i < n; i++)
				if (end_mean(&b->children[i]) > end_mean(&b->children[last]))
					last = i;
			const struct bb_vnode *cb = &b->children[last], *cs = &s->children[last];
			own -= end_mean(cs) - end_mean(cb);
			var += dvar(&cb->call_delay, &cs->call_delay) + dvar(&cb->latency, &cs->latency);
		}
		add_test(d, BB_REP_NODE, b->name, NULL, pat, &b->latency, &s->latency, own, var);
	}
	for (size_t i = 0; i < n; i++) {
		const struct bb_vnode *cb = &b->children[i], *cs = &s->children[i];
		if (depth > 0) {
			double start = cb->call_delay.mean;
			double own = cs->call_delay.mean - start;
			double var = dvar(&cb->call_delay, &cs->call_delay);
			size_t pred = SIZE_MAX;
			for (size_t j = 0; j < i; j++)
				if (end_mean(&b->children[j]) <= start &&
				    (pred == SIZE_MAX ||
				     end_mean(&b->children[j]) > end_mean(&b->children[pred])))
					pred = j;
			if (pred != SIZE_MAX) {
				const struct bb_vnode *pb = &b->children[pred], *ps = &s->children[pred];
				own -= end_mean(ps) - end_mean(pb);
				var += dvar(&pb->call_delay, &ps->call_delay) +
				       dvar(&pb->latency, &ps->latency);
			}
			add_test(d, BB_REP_EDGE, b->name, cb->name, pat, &cb->call_delay, &cs->call_delay,
			         own, var);
		}
		visit(d, pat, cb, cs, depth + 1);
	}
}

static int has_bins(const struct bb_vpatterns *p)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].root.latency.n && !p->v[i].root.latency.nbins)
			return 0;
	return 1;
}

static int cmp_p(const void *x, const void *y)
{
	const struct entry *const *a = x, *const *b = y;
	return (*a)->p < (*b)->p ? -1 : (*a)->p > (*b)->p;
}

/* Holm's step-down correction of the entries' p values, in place. */
static void holm(struct entry **v, size_t m)
{
	qsort(v, m, sizeof(*v), cmp_p);
	double run = 0;
	for (size_t i = 0; i < m; i++) {
		double q = v[i]->p * (double)(m - i);
		if (q > 1)
			q = 1;
		if (q > run)
			run = q;
		v[i]->ph = run;
	}
}

static char **shapes_of(const struct bb_vpatterns *p, char ***ids)
{
	char **s = bb_xcalloc(p->n ? p->n : 1, sizeof(*s));
	*ids = bb_xcalloc(p->n ? p->n : 1, sizeof(**ids));
	for (size_t i = 0; i < p->n; i++) {
		s[i] = bb_viz_pattern_shape(&p->v[i]);
		(*ids)[i] = bb_xmalloc(BB_PATTERN_ID_BUFSZ);
		bb_viz_pattern_id(s[i], (*ids)[i]);
	}
	return s;
}

static size_t find_shape(char **shapes, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(shapes[i], s) == 0)
			return i;
	return SIZE_MAX;
}

static int cmp_change(const void *x, const void *y)
{
	const struct bb_rep_change *a = x, *b = y;
	int pa = a->kind == BB_REP_PATTERN, pb = b->kind == BB_REP_PATTERN;
	if (pa != pb)
		return pa - pb;
	double ka = pa ? fabs(a->share_slow - a->share_base) : fabs(a->delta_ns);
	double kb = pb ? fabs(b->share_slow - b->share_base) : fabs(b->delta_ns);
	if (ka != kb)
		return ka > kb ? -1 : 1;
	return a->p < b->p ? -1 : a->p > b->p;
}

static const char *shape_of_id(const struct bb_rep_diff *d, const char *id)
{
	for (size_t i = 0; i < d->slow->n; i++)
		if (d->id_s[i] == id)
			return d->shape_s[i];
	return "";
}

/* Groups the flagged entries by edge or node into changes. */
static void group(struct bb_rep_diff *d)
{
	size_t nflag = 0;
	for (size_t i = 0; i < d->ne; i++)
		nflag += d->e[i].flagged;
	d->ch = bb_xcalloc(nflag + d->slow->n + d->base->n + 1, sizeof(*d->ch));
	d->lists = bb_xcalloc(2 * (nflag + d->slow->n + d->base->n) + 1, sizeof(*d->lists));
	d->pools = bb_xcalloc(2 * nflag + 1, sizeof(*d->pools));
	char *done = bb_xcalloc(d->ne + 1, 1);
	for (size_t i = 0; i < d->ne; i++) {
		struct entry *e = &d->e[i];
		if (!e->flagged || done[i])
			continue;
		struct bb_rep_change *c = &d->ch[d->nch++];
		struct rep_pool *pb = &d->pools[d->npools++], *ps = &d->pools[d->npools++];
		c->kind = e->kind;
		c->from = e->from;
		c->to = e->to;
		c->p = 1;
		c->patterns = d->lists + d->nlists;
		double sw = 0, sd = 0;
		size_t k = 0;
		for (size_t j = i; j < d->ne; j++) {
			struct entry *f = &d->e[j];
			if (!f->flagged || done[j] || f->kind != e->kind || strcmp(f->from, e->from) != 0 ||
			    (e->to && strcmp(f->to, e->to) != 0))
				continue;
			done[j] = 1;
			sw += f->w;
			sd += f->w * f->own;
			if (f->ph < c->p)
				c->p = f->ph;
			rep_pool_add(pb, f->qb);
			rep_pool_add(ps, f->qs);
			d->lists[d->nlists + k++] = d->id_s[f->pat];
		}
		c->npatterns = k;
		c->shapes = d->lists + d->nlists + k;
		for (size_t m = 0; m < k; m++) /* the shapes, in the order of the ids */
			d->lists[d->nlists + k + m] = shape_of_id(d, d->lists[d->nlists + m]);
		d->nlists += 2 * k;
		c->delta_ns = sw > 0 ? sd / sw : 0;
		rep_pool_dist(pb, &c->base);
		rep_pool_dist(ps, &c->slow);
	}
	free(done);
}

/* A node's own time also grows by the delay of a call the nesting left out
 * of some of its patterns (WS2(AUTH) where WS2 called AP2 after AUTH): a
 * node change no larger (by 10%) than a change of the same sign on an edge
 * out of that node is taken for it and dropped. */
static void explain(struct bb_rep_diff *d)
{
	size_t k = 0;
	for (size_t i = 0; i < d->nch; i++) {
		const struct bb_rep_change *c = &d->ch[i];
		int drop = 0;
		for (size_t j = 0; c->kind == BB_REP_NODE && j < d->nch && !drop; j++) {
			const struct bb_rep_change *e = &d->ch[j];
			drop = e->kind == BB_REP_EDGE && strcmp(e->from, c->from) == 0 &&
			       (e->delta_ns > 0) == (c->delta_ns > 0) &&
			       fabs(c->delta_ns) <= 1.1 * fabs(e->delta_ns);
		}
		if (!drop)
			d->ch[k++] = *c;
	}
	d->nch = k;
}

/* Pattern shares, tested and flagged into changes. */
static void pattern_mix(struct bb_rep_diff *d)
{
	const struct bb_vpatterns *B = d->base, *S = d->slow;
	double nb = 0, ns = 0;
	for (size_t i = 0; i < B->n; i++)
		nb += (double)B->v[i].count;
	for (size_t i = 0; i < S->n; i++)
		ns += (double)S->v[i].count;
	if (nb <= 0 || ns <= 0)
		return;
	size_t m = B->n + S->n;
	struct entry *pe = bb_xcalloc(m + 1, sizeof(*pe));
	struct entry **pv = bb_xcalloc(m + 1, sizeof(*pv));
	size_t k = 0;
	/* every slow pattern, then the base patterns not in the slow run */
	for (size_t i = 0; i < S->n + B->n; i++) {
		size_t ib, is;
		if (i < S->n) {
			is = i;
			ib = find_shape(d->shape_b, B->n, d->shape_s[i]);
		} else {
			ib = i - S->n;
			if (find_shape(d->shape_s, S->n, d->shape_b[ib]) != SIZE_MAX)
				continue;
			is = SIZE_MAX;
		}
		double cb = ib != SIZE_MAX ? (double)B->v[ib].count : 0;
		double cs = is != SIZE_MAX ? (double)S->v[is].count : 0;
		double p1 = cb / nb, p2 = cs / ns, pp = (cb + cs) / (nb + ns);
		double se = sqrt(pp * (1 - pp) * (1 / nb + 1 / ns));
		struct entry *e = &pe[k];
		e->pat = is != SIZE_MAX ? is : ib;
		e->to = is != SIZE_MAX ? "s" : "b"; /* which run names it */
		e->own = p2 - p1;
		e->w = cb;
		e->se = cs;
		e->p = se > 0 ? erfc(fabs(p2 - p1) / se / sqrt(2)) : 1;
		pv[k] = e;
		k++;
	}
	holm(pv, k);
	for (size_t i = 0; i < k; i++) {
		struct entry *e = &pe[i];
		double top = e->w > e->se ? e->w : e->se;
		if (!(e->ph < d->p.alpha) || fabs(e->own) < d->p.min_share ||
		    top < (double)d->p.min_count)
			continue;
		struct bb_rep_change *c = &d->ch[d->nch++];
		c->kind = BB_REP_PATTERN;
		c->p = e->ph;
		c->count_base = (uint64_t)e->w;
		c->count_slow = (uint64_t)e->se;
		c->share_base = e->w / nb;
		c->share_slow = e->se / ns;
		c->npatterns = 1;
		c->patterns = d->lists + d->nlists;
		c->shapes = d->lists + d->nlists + 1;
		int in_slow = e->to[0] == 's';
		d->lists[d->nlists] = in_slow ? d->id_s[e->pat] : d->id_b[e->pat];
		d->lists[d->nlists + 1] = in_slow ? d->shape_s[e->pat] : d->shape_b[e->pat];
		d->nlists += 2;
	}
	free(pe);
	free(pv);
}

struct bb_rep_diff *bb_rep_diff_new(const struct bb_vpatterns *base,
                                    const struct bb_vpatterns *slow,
                                    const struct bb_rep_diff_params *p, struct bb_err *err)
{
	if (!has_bins(base) || !has_bins(slow)) {
		bb_err_set(err, "the distributions have no histogram bins (bbnest --no-bins): "
		                "give the traces or bbnest --json without --no-bins");
		return NULL;
	}
	struct bb_rep_diff *d = bb_xcalloc(1, sizeof(*d));
	d->p = *p;
	d->base = base;
	d->slow = slow;
	d->shape_b = shapes_of(base, &d->id_b);
	d->shape_s = shapes_of(slow, &d->id_s);
	for (size_t i = 0; i < slow->n; i++) {
		size_t j = find_shape(d->shape_b, base->n, d->shape_s[i]);
		if (j == SIZE_MAX) {
			d->only_s++;
			continue;
		}
		d->matched++;
		if (base->v[j].count >= p->min_count && slow->v[i].count >= p->min_count)
			visit(d, i, &base->v[j].root, &slow->v[i].root, 0);
	}
	d->only_b = base->n - d->matched;
	struct entry **v = bb_xcalloc(d->ne + 1, sizeof(*v));
	for (size_t i = 0; i < d->ne; i++)
		v[i] = &d->e[i];
	holm(v, d->ne);
	free(v);
	for (size_t i = 0; i < d->ne; i++) {
		struct entry *e = &d->e[i];
		double a = fabs(e->own);
		e->flagged = e->ph < p->alpha && a >= (double)p->min_delta_ns && a >= p->min_z * e->se;
	}
	group(d);
	explain(d);
	pattern_mix(d);
	qsort(d->ch, d->nch, sizeof(*d->ch), cmp_change);
	return d;
}

void bb_rep_diff_free(struct bb_rep_diff *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->base->n; i++) {
		free(d->shape_b[i]);
		free(d->id_b[i]);
	}
	for (size_t i = 0; i < d->slow->n; i++) {
		free(d->shape_s[i]);
		free(d->id_s[i]);
	}
	free(d->shape_b);
	free(d->shape_s);
	free(d->id_b);
	free(d->id_s);
	for (size_t i = 0; i < d->npools; i++)
		free(d->pools[i].b);
	free(d->pools);
	free(d->e);
	free(d->ch);
	free(d->lists);
	free(d);
}

size_t bb_rep_diff_changes(const struct bb_rep_diff *d, const struct bb_rep_change **out)
{
	*out = d->ch;
	return d->nch;
}

void bb_rep_diff_counts(const struct bb_rep_diff *d, size_t *tests, size_t *matched,
                        size_t *only_base, size_t *only_slow)
{
	*tests = d->ne;
	*matched = d->matched;
	*only_base = d->only_b;
	*only_slow = d->only_s;
}

void bb_rep_diff_runs(const struct bb_rep_diff *d, const struct bb_vpatterns **base,
                      const struct bb_vpatterns **slow)
{
	*base = d->base;
	*slow = d->slow;
}

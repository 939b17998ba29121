/* nest_paths.c - FindCallPaths: instance trees, pattern aggregation, ranking, export to viz */
/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nesting/nest_int.h"

/* Children are kept in call order (ties in trace order): that order is part
 * of a pattern's identity. */
void nest_attach(struct call *parent, struct call *child)
{
	struct call **pp = &parent->child;
	while (*pp && ((*pp)->call_ts < child->call_ts ||
	               ((*pp)->call_ts == child->call_ts && (*pp)->seq < child->seq)))
		pp = &(*pp)->sibling;
	child->sibling = *pp;
	*pp = child;
	child->parent = parent;
	parent->nchildren++;
}

static void kput(struct bb_nest *n, const char *s, size_t len)
{
	if (n->pats.klen + len + 1 > n->pats.kcap) {
		n->pats.kcap = 2 * (n->pats.klen + len + 1) + 64;
		n->pats.kbuf = bb_xrealloc(n->pats.kbuf, n->pats.kcap);
	}
	memcpy(n->pats.kbuf + n->pats.klen, s, len);
	n->pats.klen += len;
	n->pats.kbuf[n->pats.klen] = '\0';
}

static void kput_u32(struct bb_nest *n, uint32_t v)
{
	char b[16], *e = b + sizeof(b), *q = e;
	do
		*--q = (char)('0' + v % 10);
	while (v /= 10);
	kput(n, q, (size_t)(e - q));
}

/* The shape of the subtree under c (c's callee and its children), as text of
 * node indices: "5(7,8(9))". */
static void key_of(struct bb_nest *n, const struct call *c)
{
	kput_u32(n, c->to);
	if (!c->child)
		return;
	kput(n, "(", 1);
	for (const struct call *ch = c->child; ch; ch = ch->sibling) {
		key_of(n, ch);
		if (ch->sibling)
			kput(n, ",", 1);
	}
	kput(n, ")", 1);
}

static void shape_of(struct anode *a, const struct call *c)
{
	a->name = c->to;
	a->nchildren = c->nchildren;
	a->children = c->nchildren ? bb_xcalloc(c->nchildren, sizeof(*a->children)) : NULL;
	uint32_t i = 0;
	for (const struct call *ch = c->child; ch; ch = ch->sibling)
		shape_of(&a->children[i++], ch);
}

static void aggregate(struct bb_nest *n, struct anode *a, const struct call *c,
                      const struct call *parent)
{
	nest_hist_add(&a->lat, &n->cfg.bins, nest_sub(c->ret_ts, c->call_ts));
	if (parent)
		nest_hist_add(&a->delay, &n->cfg.bins, nest_sub(c->call_ts, parent->call_ts));
	uint32_t i = 0;
	for (const struct call *ch = c->child; ch; ch = ch->sibling)
		aggregate(n, &a->children[i++], ch, c);
}

/* Whether a call under c had an ambiguous parent or was a likely parent of
 * an ambiguous child (c included); *exact is cleared when a parent was not
 * found by ctx=. */
static int tree_flags(const struct call *c, int *exact)
{
	int amb = c->palt;
	for (const struct call *ch = c->child; ch; ch = ch->sibling) {
		amb |= ch->pamb;
		if (!ch->cexact)
			*exact = 0;
		amb |= tree_flags(ch, exact);
	}
	return amb;
}

/* CreatePathNode and the T_paths update of figure 4 for one complete root:
 * the pattern is the caller of the root call with one child, the callee. The
 * first call's own delay is not defined (the root is where the path starts).
 * Returns the pattern's index. */
uint32_t nest_add_instance(struct bb_nest *n, struct call *root)
{
	n->pats.klen = 0;
	kput_u32(n, root->from);
	kput(n, "(", 1);
	key_of(n, root);
	kput(n, ")", 1);
	uint32_t k = bb_intern_add(n->pats.keys, n->pats.kbuf, n->pats.klen);
	if (k == n->pats.npat) {
		if (n->pats.npat == n->pats.cappat) {
			n->pats.cappat = n->pats.cappat ? 2 * n->pats.cappat : 64;
			n->pats.pat =
			    bb_xrealloc(n->pats.pat, n->pats.cappat * sizeof(*n->pats.pat));
		}
		struct pattern *p = &n->pats.pat[n->pats.npat++];
		memset(p, 0, sizeof(*p));
		p->key = k;
		p->root.name = root->from;
		p->root.nchildren = 1;
		p->root.children = bb_xcalloc(1, sizeof(*p->root.children));
		shape_of(&p->root.children[0], root);
		p->req = root->req;
		n->st.patterns = n->pats.npat;
	}
	struct pattern *p = &n->pats.pat[k];
	int64_t lat = nest_sub(root->ret_ts, root->call_ts);
	p->count++;
	if (root->req != p->req)
		p->req_mixed = 1;
	int exact = root->child != NULL;
	if (tree_flags(root, &exact)) {
		p->ambiguous++;
		n->st.ambiguous_instances++;
	}
	p->exact += exact;
	p->root_lat_sum += (double)lat;
	nest_hist_add(&p->root.lat, &n->cfg.bins, lat);
	aggregate(n, &p->root.children[0], root, NULL);
	return k;
}

static void anode_free(struct anode *a)
{
	for (uint32_t i = 0; i < a->nchildren; i++)
		anode_free(&a->children[i]);
	free(a->children);
	nest_hist_free(&a->lat);
	nest_hist_free(&a->delay);
}

void nest_pats_init(struct nest_pats *ps)
{
	memset(ps, 0, sizeof(*ps));
	ps->keys = bb_intern_new();
}

void nest_pats_free(struct nest_pats *ps)
{
	for (size_t i = 0; i < ps->npat; i++)
		anode_free(&ps->pat[i].root);
	free(ps->pat);
	free(ps->kbuf);
	bb_intern_free(ps->keys);
	memset(ps, 0, sizeof(*ps));
}

static void text_of(const struct bb_nest *n, const struct anode *a, char **buf, size_t *len,
                    size_t *cap)
{
	const char *name = bb_intern_str(n->nodes.names, a->name);
	size_t nl = strlen(name);
	if (*len + nl + 4 > *cap) {
		*cap = 2 * (*len + nl + 4);
		*buf = bb_xrealloc(*buf, *cap);
	}
	memcpy(*buf + *len, name, nl);
	*len += nl;
	if (a->nchildren) {
		(*buf)[(*len)++] = '(';
		for (uint32_t i = 0; i < a->nchildren; i++) {
			if (i)
				(*buf)[(*len)++] = ' ';
			text_of(n, &a->children[i], buf, len, cap);
			if (*len + 4 > *cap) {
				*cap = 2 * (*len + 4);
				*buf = bb_xrealloc(*buf, *cap);
			}
		}
		(*buf)[(*len)++] = ')';
	}
	(*buf)[*len] = '\0';
}

char *nest_pattern_text(const struct bb_nest *n, const struct pattern *p)
{
	size_t len = 0, cap = 64;
	char *buf = bb_xmalloc(cap);
	buf[0] = '\0';
	text_of(n, &p->root, &buf, &len, &cap);
	return buf;
}

char *bb_nest_pattern_key(const struct bb_nest *n, size_t i)
{
	if (!n->ex.order || i >= n->ex.norder)
		return NULL;
	return nest_pattern_text(n, &n->pats.pat[n->ex.order[i]]);
}

/* ---- export ----------------------------------------------------------------- */

static void *ealloc(struct bb_nest *n, size_t size)
{
	if (n->ex.nallocs == n->ex.capallocs) {
		n->ex.capallocs = n->ex.capallocs ? 2 * n->ex.capallocs : 64;
		n->ex.allocs = bb_xrealloc(n->ex.allocs, n->ex.capallocs * sizeof(*n->ex.allocs));
	}
	void *p = bb_xcalloc(1, size ? size : 1);
	n->ex.allocs[n->ex.nallocs++] = p;
	return p;
}

/* Frees the patterns' export, not its params and stats. */
static void export_reset(struct nest_export *ex)
{
	for (size_t i = 0; i < ex->nallocs; i++)
		free(ex->allocs[i]);
	free(ex->allocs);
	ex->allocs = NULL;
	ex->nallocs = ex->capallocs = 0;
	free(ex->order);
	ex->order = NULL;
	ex->norder = 0;
	ex->vpat = NULL;
}

void nest_export_free(struct nest_export *ex)
{
	export_reset(ex);
	bb_vval_free(ex->params);
	bb_vval_free(ex->stats);
	memset(ex, 0, sizeof(*ex));
}

static void export_stat(struct bb_nest *n, struct bb_vstat *s, const struct nest_hist *h)
{
	s->n = h->n;
	s->mean = h->n ? h->sum / (double)h->n : 0;
	s->p50 = nest_hist_quantile(h, &n->cfg.bins, 0.50);
	s->p90 = nest_hist_quantile(h, &n->cfg.bins, 0.90);
	s->p99 = nest_hist_quantile(h, &n->cfg.bins, 0.99);
	s->max = h->n ? h->max : 0;
	s->nbins = 0;
	s->bins = NULL;
	if (n->cfg.p.bins_in_output && h->nb) {
		struct bb_vbin *b = ealloc(n, h->nb * sizeof(*b));
		for (uint32_t i = 0; i < h->nb; i++) {
			nest_bin_range(&n->cfg.bins, h->b[i].bin, &b[i].lo_ns, &b[i].hi_ns);
			b[i].count = h->b[i].count;
		}
		s->nbins = h->nb;
		s->bins = b;
	}
}

static void export_node(struct bb_nest *n, struct bb_vnode *v, const struct anode *a)
{
	v->name = bb_intern_str(n->nodes.names, a->name);
	export_stat(n, &v->latency, &a->lat);
	export_stat(n, &v->call_delay, &a->delay);
	v->nchildren = a->nchildren;
	struct bb_vnode *ch = ealloc(n, a->nchildren * sizeof(*ch));
	for (uint32_t i = 0; i < a->nchildren; i++)
		export_node(n, &ch[i], &a->children[i]);
	v->children = a->nchildren ? ch : NULL;
}

struct rank_key {
	double total;
	uint64_t count;
	const char *key;
	size_t idx;
	int by_latency;
};

static int rank_cmp(const void *x, const void *y)
{
	const struct rank_key *a = x, *b = y;
	if (a->by_latency && a->total != b->total)
		return a->total > b->total ? -1 : 1;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return strcmp(a->key, b->key);
}

struct root_edge {
	uint64_t edge; /* root caller << 32 | root callee */
	size_t idx;
};

static int root_edge_cmp(const void *x, const void *y)
{
	const struct root_edge *a = x, *b = y;
	return a->edge < b->edge ? -1 : a->edge > b->edge;
}

/* Per pattern, the unclear instances of the other patterns with the same
 * root call (caller and callee): an instance whose parent choice was unclear
 * could have been any of them. Returns new (caller frees). */
static uint64_t *unclear_elsewhere(const struct bb_nest *n)
{
	size_t np = n->pats.npat;
	struct root_edge *r = bb_xmalloc((np ? np : 1) * sizeof(*r));
	for (size_t i = 0; i < np; i++) {
		const struct anode *a = &n->pats.pat[i].root;
		r[i].edge = (uint64_t)a->name << 32 | a->children[0].name;
		r[i].idx = i;
	}
	qsort(r, np, sizeof(*r), root_edge_cmp);
	uint64_t *out = bb_xcalloc(np ? np : 1, sizeof(*out));
	for (size_t i = 0, j; i < np; i = j) {
		uint64_t sum = 0;
		for (j = i; j < np && r[j].edge == r[i].edge; j++)
			sum += n->pats.pat[r[j].idx].ambiguous;
		for (size_t k = i; k < j; k++)
			out[r[k].idx] = sum - n->pats.pat[r[k].idx].ambiguous;
	}
	free(r);
	return out;
}

/* Every histogram under a back to its sorted bins (nest_hist_seal). */
static void anode_seal(struct bb_nest *n, struct anode *a)
{
	nest_hist_seal(&a->lat, &n->cfg.bins);
	nest_hist_seal(&a->delay, &n->cfg.bins);
	for (uint32_t i = 0; i < a->nchildren; i++)
		anode_seal(n, &a->children[i]);
}

/* Ranks, prunes and converts the patterns into viz's model. */
void nest_export(struct bb_nest *n)
{
	for (size_t i = 0; i < n->pats.npat; i++)
		anode_seal(n, &n->pats.pat[i].root);
	export_reset(&n->ex);
	struct rank_key *rk = bb_xmalloc((n->pats.npat ? n->pats.npat : 1) * sizeof(*rk));
	size_t k = 0;
	for (size_t i = 0; i < n->pats.npat; i++)
		if (n->pats.pat[i].count >= n->cfg.p.min_count)
			rk[k++] =
			    (struct rank_key){n->pats.pat[i].root_lat_sum, n->pats.pat[i].count,
			                      bb_intern_str(n->pats.keys, n->pats.pat[i].key), i,
			                      n->cfg.p.rank == BB_NEST_RANK_LATENCY};
	qsort(rk, k, sizeof(*rk), rank_cmp);
	n->ex.order = bb_xmalloc((k ? k : 1) * sizeof(*n->ex.order));
	for (size_t i = 0; i < k; i++)
		n->ex.order[i] = rk[i].idx;
	free(rk);
	if (n->cfg.p.top && k > n->cfg.p.top)
		k = n->cfg.p.top;
	n->ex.norder = k;
	n->ex.vpat = ealloc(n, k * sizeof(*n->ex.vpat));
	uint64_t *other = unclear_elsewhere(n);
	for (size_t i = 0; i < k; i++) {
		const struct pattern *p = &n->pats.pat[n->ex.order[i]];
		struct bb_vpattern *v = &n->ex.vpat[i];
		v->rank = (unsigned)(i + 1);
		v->count = p->count;
		v->count_lo = p->moved ? p->mlo : p->count - p->ambiguous;
		v->count_hi = p->moved ? p->mhi : p->count + other[n->ex.order[i]];
		v->exact = p->exact;
		/* the root call's label: "(mixed)" when its instances differ */
		v->root.req = p->req_mixed        ? "(mixed)"
		              : p->req != BB_NONE ? bb_intern_str(n->recs.reqs, p->req)
		                                  : NULL;
		v->total_latency_ns = llround(p->root_lat_sum);
		export_node(n, &v->root, &p->root);
	}
	free(other);
	n->ex.out.n = k;
	n->ex.out.v = n->ex.vpat;
}

/* conv_truth.c - inferred paths and edges scored against path= ground truth (section 7.5.7) */
/* SPDX-License-Identifier: MIT */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convolution/conv_int.h"

/* Ground truth: the messages of one path instance (same path= value), in
 * time order, form its pattern: the node sequence sender(m0), receiver(m0),
 * receiver(m1), ... (when a message does not start where the previous one
 * ended, the break is kept in the pattern as "|"). True causal edges are the
 * consecutive pairs (i->j then j->k) of an instance, with their delay.
 *
 * Inferred: every root-to-leaf path of the delay graph is a pattern (its
 * count is the last edge's), every vertex with a grandparent an edge triple
 * (i, j, k) with its most frequent delay.
 *
 * Paths: a false positive is an inferred pattern that no instance follows; a
 * false negative a true pattern with at least min_count instances that is not
 * inferred. Edges likewise over triples; a found triple's delay is right when
 * within one quantum plus 5% of the true median delay. */

struct sbuf {
	char *s;
	size_t n, cap;
};

static void sb_add(struct sbuf *b, const char *s)
{
	size_t len = strlen(s);
	if (b->n + len + 1 > b->cap) {
		b->cap = (b->n + len + 1) * 2;
		b->s = bb_xrealloc(b->s, b->cap);
	}
	memcpy(b->s + b->n, s, len + 1);
	b->n += len;
}

/* A set of string keys with counts and (for triples) delays. */
struct kset {
	struct bb_intern *in;
	uint64_t *count;
	int64_t **delays;
	size_t *ndel, cap;
	int64_t *inferred_delay;
};

static uint32_t ks_add(struct kset *k, const char *key, uint64_t n)
{
	uint32_t i = bb_intern_add(k->in, key, strlen(key));
	if (i >= k->cap) {
		size_t cap = k->cap ? 2 * k->cap : 64;
		while (cap <= i)
			cap *= 2;
		k->count = bb_xrealloc(k->count, cap * sizeof(*k->count));
		k->delays = bb_xrealloc(k->delays, cap * sizeof(*k->delays));
		k->ndel = bb_xrealloc(k->ndel, cap * sizeof(*k->ndel));
		k->inferred_delay =
		    bb_xrealloc(k->inferred_delay, cap * sizeof(*k->inferred_delay));
		for (size_t j = k->cap; j < cap; j++) {
			k->count[j] = 0;
			k->delays[j] = NULL;
			k->ndel[j] = 0;
			k->inferred_delay[j] = 0;
		}
		k->cap = cap;
	}
	k->count[i] += n;
	return i;
}

static void ks_free(struct kset *k)
{
	bb_intern_free(k->in);
	for (size_t i = 0; i < k->cap; i++)
		free(k->delays[i]);
	free(k->delays);
	free(k->count);
	free(k->ndel);
	free(k->inferred_delay);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static char *display(const char *key)
{
	struct sbuf b = {0};
	sb_add(&b, "");
	char one[2] = {0, 0};
	for (const char *p = key; *p; p++) {
		if (*p == '\x1f') {
			sb_add(&b, "->");
		} else {
			one[0] = *p;
			sb_add(&b, one);
		}
	}
	return b.s;
}

static void triple_key(const struct bb_conv *c, uint32_t i, uint32_t j, uint32_t k, struct sbuf *b)
{
	b->n = 0;
	sb_add(b, bb_intern_str(c->names, i));
	sb_add(b, "\x1f");
	sb_add(b, bb_intern_str(c->names, j));
	sb_add(b, "\x1f");
	sb_add(b, bb_intern_str(c->names, k));
}

struct ranked {
	uint32_t i;
	uint64_t n;
};

static int cmp_ranked(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Up to 10 keys of `from` with the flag unset, by count, as display strings. */
static struct bb_vval *top_list(const struct kset *from, const unsigned char *flag, uint64_t minc)
{
	uint32_t n = bb_intern_count(from->in);
	struct ranked *r = bb_xmalloc((n ? n : 1) * sizeof(*r));
	size_t nr = 0;
	for (uint32_t i = 0; i < n; i++)
		if (!flag[i] && from->count[i] >= minc)
			r[nr++] = (struct ranked){i, from->count[i]};
	qsort(r, nr, sizeof(*r), cmp_ranked);
	struct bb_vval *arr = bb_vval_array();
	for (size_t i = 0; i < nr && i < 10; i++) {
		struct bb_vval *o = bb_vval_push(arr, bb_vval_object());
		char *d = display(bb_intern_str(from->in, r[i].i));
		bb_vval_set_str(o, "path", d);
		free(d);
		bb_vval_set_int(o, "count", (int64_t)r[i].n);
	}
	free(r);
	return arr;
}

static void root_paths(const struct bb_conv *c, uint32_t v, struct sbuf *prefix, struct kset *inf)
{
	size_t keep = prefix->n;
	if (prefix->n)
		sb_add(prefix, "\x1f");
	sb_add(prefix, bb_intern_str(c->names, c->verts[v].node));
	int leaf = 1;
	for (uint32_t ch = c->verts[v].first_child; ch != BB_NONE; ch = c->verts[ch].next_sibling) {
		if (c->verts[ch].dead)
			continue;
		leaf = 0;
		root_paths(c, ch, prefix, inf);
	}
	if (leaf && c->verts[v].parent != BB_NONE)
		ks_add(inf, prefix->s, c->verts[v].count);
	prefix->n = keep;
	prefix->s[keep] = '\0';
}

/* Ground truth from path= attributes: the pattern of each path instance into
 * tp (one count per instance), its consecutive edge pairs with their delays
 * into tt. */
static void true_patterns(const struct bb_conv *c, struct kset *tp, struct kset *tt)
{
	uint32_t np = bb_intern_count(c->paths);
	/* instances: messages grouped by path, in time order (msgs are sorted) */
	uint32_t *start = bb_xcalloc((size_t)np + 1, sizeof(*start));
	for (size_t m = 0; m < c->nmsgs; m++)
		if (c->msgs[m].path != BB_NONE)
			start[c->msgs[m].path + 1]++;
	for (uint32_t p = 0; p < np; p++)
		start[p + 1] += start[p];
	uint32_t *order = bb_xmalloc((start[np] ? start[np] : 1) * sizeof(*order));
	uint32_t *fill = bb_xmalloc(((size_t)np + 1) * sizeof(*fill));
	memcpy(fill, start, ((size_t)np + 1) * sizeof(*fill));
	for (size_t m = 0; m < c->nmsgs; m++)
		if (c->msgs[m].path != BB_NONE)
			order[fill[c->msgs[m].path]++] = (uint32_t)m;
	free(fill);

	struct sbuf key = {0}, tk = {0};
	for (uint32_t p = 0; p < np; p++) {
		key.n = 0;
		sb_add(&key, "");
		for (uint32_t a = start[p]; a < start[p + 1]; a++) {
			const struct conv_msg *m = &c->msgs[order[a]];
			if (a == start[p]) {
				sb_add(&key, bb_intern_str(c->names, m->sender));
			} else if (c->msgs[order[a - 1]].receiver != m->sender) {
				sb_add(&key, "\x1f|\x1f");
				sb_add(&key, bb_intern_str(c->names, m->sender));
			}
			sb_add(&key, "\x1f");
			sb_add(&key, bb_intern_str(c->names, m->receiver));
			if (a > start[p] && c->msgs[order[a - 1]].receiver == m->sender) {
				const struct conv_msg *pm = &c->msgs[order[a - 1]];
				triple_key(c, pm->sender, m->sender, m->receiver, &tk);
				uint32_t t = ks_add(tt, tk.s, 1);
				tt->delays[t] =
				    bb_xrealloc(tt->delays[t], (tt->ndel[t] + 1) * sizeof(int64_t));
				tt->delays[t][tt->ndel[t]++] = m->ts_ns - pm->ts_ns;
			}
		}
		if (start[p + 1] > start[p])
			ks_add(tp, key.s, 1);
	}
	free(key.s);
	free(tk.s);
	free(order);
	free(start);
}

/* The inferred side: root-to-leaf paths of the live vertices into ip, edge
 * triples with their most frequent delay into it. */
static void inferred_patterns(const struct bb_conv *c, struct kset *ip, struct kset *it)
{
	struct sbuf prefix = {0}, tk = {0};
	sb_add(&prefix, "");
	for (uint32_t v = 0; v < c->nverts; v++)
		if (c->verts[v].parent == BB_NONE && !c->verts[v].dead)
			root_paths(c, v, &prefix, ip);
	for (uint32_t v = 0; v < c->nverts; v++) {
		const struct conv_vert *y = &c->verts[v];
		if (y->dead || y->parent == BB_NONE || c->verts[y->parent].parent == BB_NONE)
			continue;
		const struct conv_vert *x = &c->verts[y->parent], *w = &c->verts[x->parent];
		triple_key(c, w->node, x->node, y->node, &tk);
		uint32_t t = ks_add(it, tk.s, y->count);
		if (y->ndelays && (it->ndel[t] == 0))
			it->inferred_delay[t] = y->delays[0].delay_ns;
		it->ndel[t] = 1;
	}
	free(prefix.s);
	free(tk.s);
}

/* Paths: true and false positives and negatives into acc's "paths". */
static void score_paths(struct bb_vval *acc, const struct kset *tp, const struct kset *ip,
                        uint64_t minc)
{
	uint32_t ntp = bb_intern_count(tp->in), nip = bb_intern_count(ip->in);
	unsigned char *tp_found = bb_xcalloc(ntp ? ntp : 1, 1),
	              *ip_ok = bb_xcalloc(nip ? nip : 1, 1);
	uint64_t p_tp = 0, p_fn = 0, t_freq = 0;
	for (uint32_t i = 0; i < nip; i++) {
		const char *s = bb_intern_str(ip->in, i);
		uint32_t t = bb_intern_find(tp->in, s, strlen(s));
		if (t != BB_NONE) {
			ip_ok[i] = 1;
			tp_found[t] = 1;
			p_tp++;
		}
	}
	for (uint32_t t = 0; t < ntp; t++)
		if (tp->count[t] >= minc) {
			t_freq++;
			p_fn += !tp_found[t];
		}
	struct bb_vval *po = bb_vval_set(acc, "paths", bb_vval_object());
	bb_vval_set_int(po, "true_patterns", ntp);
	bb_vval_set_int(po, "true_frequent", (int64_t)t_freq);
	bb_vval_set_int(po, "inferred", nip);
	bb_vval_set_int(po, "true_positives", (int64_t)p_tp);
	bb_vval_set_int(po, "false_positives", (int64_t)(nip - p_tp));
	bb_vval_set_int(po, "false_negatives", (int64_t)p_fn);
	bb_vval_set_num(po, "fp_rate", nip ? (double)(nip - p_tp) / nip : 0.0);
	bb_vval_set_num(po, "fn_rate", t_freq ? (double)p_fn / (double)t_freq : 0.0);
	/* Section 7.5.7: rare inferred paths are mostly false; the counts of
	 * false positives among paths with at least 10, 100, 1000 messages. */
	struct bb_vval *fpc = bb_vval_set(po, "false_positives_min_messages", bb_vval_object());
	static const uint64_t cut[] = {10, 100, 1000};
	for (size_t ci = 0; ci < 3; ci++) {
		uint64_t nfp = 0, ninf = 0;
		for (uint32_t i = 0; i < nip; i++)
			if (ip->count[i] >= cut[ci]) {
				ninf++;
				nfp += !ip_ok[i];
			}
		char cutname[32];
		snprintf(cutname, sizeof(cutname), "%" PRIu64, cut[ci]);
		struct bb_vval *o = bb_vval_set(fpc, cutname, bb_vval_object());
		bb_vval_set_int(o, "inferred", (int64_t)ninf);
		bb_vval_set_int(o, "false_positives", (int64_t)nfp);
	}
	bb_vval_set(po, "top_false_negatives", top_list(tp, tp_found, minc));
	bb_vval_set(po, "top_false_positives", top_list(ip, ip_ok, 1));
	free(tp_found);
	free(ip_ok);
}

/* Edge triples and their delays into acc's "edges" (sorts tt's delays). */
static void score_edges(const struct bb_conv *c, struct bb_vval *acc, struct kset *tt,
                        const struct kset *it, uint64_t minc)
{
	uint32_t ntt = bb_intern_count(tt->in), nit = bb_intern_count(it->in);
	unsigned char *tt_found = bb_xcalloc(ntt ? ntt : 1, 1);
	uint64_t e_tp = 0, e_fn = 0, e_freq = 0, d_ok = 0;
	int64_t max_err = 0;
	for (uint32_t i = 0; i < nit; i++) {
		const char *s = bb_intern_str(it->in, i);
		uint32_t t = bb_intern_find(tt->in, s, strlen(s));
		if (t == BB_NONE)
			continue;
		tt_found[t] = 1;
		e_tp++;
		qsort(tt->delays[t], tt->ndel[t], sizeof(int64_t), cmp_i64);
		int64_t med = tt->delays[t][tt->ndel[t] / 2];
		int64_t e = it->inferred_delay[i] - med;
		e = e < 0 ? -e : e;
		if (e > max_err)
			max_err = e;
		if (e <= c->p.quantum_ns + (med < 0 ? -med : med) / 20)
			d_ok++;
	}
	for (uint32_t t = 0; t < ntt; t++)
		if (tt->count[t] >= minc) {
			e_freq++;
			e_fn += !tt_found[t];
		}
	struct bb_vval *eo = bb_vval_set(acc, "edges", bb_vval_object());
	bb_vval_set_int(eo, "true_edges", ntt);
	bb_vval_set_int(eo, "true_frequent", (int64_t)e_freq);
	bb_vval_set_int(eo, "inferred", nit);
	bb_vval_set_int(eo, "true_positives", (int64_t)e_tp);
	bb_vval_set_int(eo, "false_positives", (int64_t)(nit - e_tp));
	bb_vval_set_int(eo, "false_negatives", (int64_t)e_fn);
	bb_vval_set_int(eo, "delays_within_tolerance", (int64_t)d_ok);
	bb_vval_set_int(eo, "max_delay_error_ns", max_err);
	free(tt_found);
}

struct bb_vval *conv_truth(const struct bb_conv *c)
{
	struct bb_vval *acc = bb_vval_object();
	if (!c->has_paths) {
		bb_vval_set(acc, "available", bb_vval_bool(0));
		return acc;
	}
	bb_vval_set(acc, "available", bb_vval_bool(1));
	struct kset tp = {.in = bb_intern_new()}, tt = {.in = bb_intern_new()};
	struct kset ip = {.in = bb_intern_new()}, it = {.in = bb_intern_new()};
	true_patterns(c, &tp, &tt);
	inferred_patterns(c, &ip, &it);
	uint64_t minc = c->p.min_count ? c->p.min_count : 1;
	score_paths(acc, &tp, &ip, minc);
	score_edges(c, acc, &tt, &it, minc);
	ks_free(&tp);
	ks_free(&tt);
	ks_free(&ip);
	ks_free(&it);
	return acc;
}

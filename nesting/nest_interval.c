/* nest_interval.c - --global: count intervals from the moves of the unsure children */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "nesting/nest_int.h"

/* A pattern's count is the number of instances the chosen parents make of
 * it; where a parent is unsure the count could be another. The refinement
 * leaves, for each unsure child, the changes of its parent it leaves open
 * (nest_refine.c, posterior: a move to another candidate, or a swap with a
 * child of that candidate, that its final model gives at least
 * NEST_POST_MODEL, or a move the times alone leave open). Each open change
 * turns the two instances it touches (the one the child leaves, the one it
 * joins) into other patterns, or the same. A pattern's interval runs from
 * its count less the instances some change takes out of it to its count
 * plus the instances some change makes of it, each instance counted once
 * either way: the counts the evidence cannot rule out one change at a time,
 * all changes taken together. What needs two changes, or a parent the model
 * is sure of and wrong about, is not in it: the intervals say what the
 * model cannot tell apart, not how wrong the model is (docs/nesting.md,
 * "Count intervals"; the coverage measured in docs/accuracy.md). */

void nest_post_add(struct nest_post *q, uint32_t child)
{
	if (q->n + 1 >= q->capn) {
		q->capn = q->capn ? 2 * q->capn : 1024;
		q->child = bb_xrealloc(q->child, q->capn * sizeof(*q->child));
		q->off = bb_xrealloc(q->off, (q->capn + 1) * sizeof(*q->off));
	}
	q->child[q->n] = child;
	q->off[q->n] = (uint32_t)q->nalt;
	q->off[++q->n] = (uint32_t)q->nalt;
}

void nest_post_alt(struct nest_post *q, uint32_t par, uint32_t swap)
{
	if (q->nalt == q->capalt) {
		q->capalt = q->capalt ? 2 * q->capalt : 4096;
		q->apar = bb_xrealloc(q->apar, q->capalt * sizeof(*q->apar));
		q->aswap = bb_xrealloc(q->aswap, q->capalt * sizeof(*q->aswap));
	}
	q->apar[q->nalt] = par;
	q->aswap[q->nalt++] = swap;
	q->off[q->n] = (uint32_t)q->nalt;
}

void nest_post_free(struct nest_post *q)
{
	free(q->child);
	free(q->off);
	free(q->apar);
	free(q->aswap);
	memset(q, 0, sizeof(*q));
}

/* The calls of the instances a change can touch, by local index in record
 * order: their parents and children (in call order), and the roots. */
struct forest {
	size_t m;
	uint32_t *rid;            /* local -> CALL record */
	uint32_t *loc;            /* CALL record -> local + 1, 0: not here */
	uint32_t *par, *head, *next; /* local indices, BB_NONE: none */
	uint32_t *root;           /* per local call: its root (base parents) */
	uint32_t *rpat;           /* per local root: its pattern, or BB_NONE */
	uint64_t *kn, *kl;        /* per local call: key_node of its callee; its key as a leaf */
};

static uint32_t base_root(const struct bb_nest *n, uint32_t rid)
{
	for (int d = 0; d < 4096 && n->solve.gpar[rid] != BB_NONE; d++)
		rid = n->solve.gpar[rid];
	return rid;
}

static int is_call(const struct bb_nest *n, uint32_t rid)
{
	return rid < n->recs.nrec && n->recs.rec[rid].op_from >> 30 == REC_CALL;
}

/* Marks the roots whose instances a change can touch: those of the unsure
 * children, of their other candidates and of the children they swap with. */
static uint8_t *mark_roots(const struct bb_nest *n)
{
	const struct nest_post *q = &n->solve.post;
	uint8_t *mark = bb_xcalloc(n->recs.nrec, 1);
	for (size_t i = 0; i < q->n; i++) {
		mark[base_root(n, q->child[i])] = 1;
		for (uint32_t k = q->off[i]; k < q->off[i + 1]; k++) {
			mark[base_root(n, q->apar[k])] = 1;
			if (q->aswap[k] != BB_NONE)
				mark[base_root(n, q->aswap[k])] = 1;
		}
	}
	return mark;
}

/* Inserts local child c into parent p's children, in record order. */
static void link_in(struct forest *f, uint32_t p, uint32_t c)
{
	uint32_t *pp = &f->head[p];
	while (*pp != BB_NONE && *pp < c)
		pp = &f->next[*pp];
	f->next[c] = *pp;
	*pp = c;
	f->par[c] = p;
}

static void link_out(struct forest *f, uint32_t c)
{
	uint32_t *pp = &f->head[f->par[c]];
	while (*pp != c)
		pp = &f->next[*pp];
	*pp = f->next[c];
	f->par[c] = BB_NONE;
}

/* Keys of shapes, the one scheme for instance trees and patterns: a tree's
 * key starts from its callee (key_node), takes each child's key in call
 * order (key_child) and is closed (key_end); an instance's key is that of
 * its root call under its caller (key_instance), the shape nest_add_instance
 * names a pattern by. */
static uint64_t key_node(uint32_t name)
{
	return nest_mix64(name + 1ULL);
}

static uint64_t key_child(uint64_t h, uint64_t child)
{
	return nest_mix64(h ^ child);
}

static uint64_t key_end(uint64_t h)
{
	return nest_mix64(h ^ 0x29);
}

static uint64_t key_instance(uint32_t from, uint64_t tree)
{
	return nest_mix64(((uint64_t)from << 1 | 1) ^ nest_mix64(tree));
}

static void forest_build(const struct bb_nest *n, struct forest *f)
{
	uint8_t *mark = mark_roots(n);
	f->loc = bb_xcalloc(n->recs.nrec, sizeof(*f->loc));
	f->m = 0;
	for (uint32_t i = 0; i < n->recs.nrec; i++)
		if (is_call(n, i) && mark[base_root(n, i)])
			f->loc[i] = (uint32_t)++f->m;
	free(mark);
	size_t m = f->m + 1;
	f->rid = bb_xmalloc(m * sizeof(*f->rid));
	f->par = bb_xmalloc(m * sizeof(*f->par));
	f->head = bb_xmalloc(m * sizeof(*f->head));
	f->next = bb_xmalloc(m * sizeof(*f->next));
	f->root = bb_xmalloc(m * sizeof(*f->root));
	f->rpat = bb_xmalloc(m * sizeof(*f->rpat));
	for (uint32_t i = 0; i < n->recs.nrec; i++)
		if (f->loc[i])
			f->rid[f->loc[i] - 1] = i;
	f->kn = bb_xmalloc(m * sizeof(*f->kn));
	f->kl = bb_xmalloc(m * sizeof(*f->kl));
	for (size_t x = 0; x < f->m; x++) {
		f->head[x] = f->next[x] = f->par[x] = BB_NONE;
		f->rpat[x] = BB_NONE;
		f->root[x] = f->loc[base_root(n, f->rid[x])] - 1;
		f->kn[x] = key_node(n->recs.rec[f->rid[x]].arg);
		f->kl[x] = key_end(f->kn[x]);
	}
	for (size_t x = f->m; x-- > 0;) {
		uint32_t p = n->solve.gpar[f->rid[x]];
		if (p != BB_NONE && f->loc[p])
			link_in(f, f->loc[p] - 1, (uint32_t)x);
	}
}

static void forest_free(struct forest *f)
{
	free(f->rid);
	free(f->loc);
	free(f->par);
	free(f->head);
	free(f->next);
	free(f->root);
	free(f->rpat);
	free(f->kn);
	free(f->kl);
}

/* The key of the tree under local call x; a leaf's without a call of its
 * own (most calls are leaves; table1-par-medium's intervals key 1.1 M
 * instances, about 6 calls each). */
static uint64_t tree_key(const struct forest *f, uint32_t x, int depth)
{
	uint64_t h = f->kn[x];
	if (depth > 256)
		return h;
	for (uint32_t c = f->head[x]; c != BB_NONE; c = f->next[c])
		h = key_child(h, f->head[c] == BB_NONE && depth < 256 ? f->kl[c]
		                                                       : tree_key(f, c, depth + 1));
	return key_end(h);
}

static uint64_t instance_key(const struct bb_nest *n, const struct forest *f, uint32_t r)
{
	return key_instance(n->recs.rec[f->rid[r]].op_from & REC_NODE_MAX, tree_key(f, r, 0));
}

/* The key of a pattern's shape under a. */
static uint64_t anode_key(const struct anode *a, int depth)
{
	uint64_t h = key_node(a->name);
	if (depth > 256)
		return h;
	for (uint32_t i = 0; i < a->nchildren; i++)
		h = key_child(h, anode_key(&a->children[i], depth + 1));
	return key_end(h);
}

/* Patterns by key: open addressing over 2^k slots, index + 1 (0: empty). */
struct pat_table {
	uint64_t *key;
	uint32_t *idx;
	size_t cap;
};

static void pat_table_build(const struct bb_nest *n, struct pat_table *t)
{
	t->cap = 16;
	while (t->cap < 2 * n->pats.npat + 2)
		t->cap *= 2;
	t->key = bb_xcalloc(t->cap, sizeof(*t->key));
	t->idx = bb_xcalloc(t->cap, sizeof(*t->idx));
	for (uint32_t i = 0; i < n->pats.npat; i++) {
		const struct anode *a = &n->pats.pat[i].root;
		if (a->nchildren != 1)
			continue;
		uint64_t k = key_instance(a->name, anode_key(&a->children[0], 0));
		size_t s = k & (t->cap - 1);
		while (t->idx[s] && t->key[s] != k)
			s = (s + 1) & (t->cap - 1);
		t->key[s] = k;
		t->idx[s] = i + 1;
	}
}

static uint32_t pat_find(const struct pat_table *t, uint64_t k)
{
	for (size_t s = k & (t->cap - 1); t->idx[s]; s = (s + 1) & (t->cap - 1))
		if (t->key[s] == k)
			return t->idx[s] - 1;
	return BB_NONE;
}

/* What the changes make: the instances they break (per root, once) and the
 * patterns they make of them (per root and pattern, once). */
struct reach {
	uint8_t *broken;  /* per local call (a root): counted in lo */
	uint64_t *made;   /* open addressing: root << 32 | pattern, + 1; 0 empty */
	size_t cap, n;
	uint64_t *lo, *hi; /* per pattern */
};

static void made_grow(struct reach *x)
{
	size_t nc = x->cap ? 2 * x->cap : 4096;
	uint64_t *t = bb_xcalloc(nc, sizeof(*t));
	for (size_t i = 0; i < x->cap; i++) {
		if (!x->made[i])
			continue;
		size_t q = nest_mix64(x->made[i]) & (nc - 1);
		while (t[q])
			q = (q + 1) & (nc - 1);
		t[q] = x->made[i];
	}
	free(x->made);
	x->made = t;
	x->cap = nc;
}

/* Instance r (a local root of pattern old) could be pattern now. */
static void could_be(struct reach *x, uint32_t r, uint32_t old,
                     uint32_t now)
{
	if (now == old)
		return;
	if (old != BB_NONE && !x->broken[r]) {
		x->broken[r] = 1;
		x->lo[old] -= x->lo[old] > 0;
	}
	if (now == BB_NONE)
		return;
	if (2 * (x->n + 1) > x->cap)
		made_grow(x);
	uint64_t k = ((uint64_t)r << 32 | now) + 1;
	size_t q = nest_mix64(k) & (x->cap - 1);
	for (; x->made[q]; q = (q + 1) & (x->cap - 1))
		if (x->made[q] == k)
			return;
	x->made[q] = k;
	x->n++;
	x->hi[now]++;
}

static int under(const struct forest *f, uint32_t x, uint32_t c)
{
	for (; x != BB_NONE; x = f->par[x])
		if (x == c)
			return 1;
	return 0;
}

/* Moves local child c under b and, unless y is BB_NONE, b's child y under
 * c's parent; notes what the two instances could be, and undoes it. */
static void try_change(const struct bb_nest *n, struct forest *f, const struct pat_table *t,
                       struct reach *x, uint32_t c, uint32_t b, uint32_t y)
{
	uint32_t a = f->par[c];
	if (a == BB_NONE || a == b || under(f, b, c) || (y != BB_NONE && (f->par[y] != b ||
	                                                                   under(f, a, y))))
		return; /* never under itself */
	uint32_t ri = f->root[c], rj = f->root[b];
	link_out(f, c);
	if (y != BB_NONE) {
		link_out(f, y);
		link_in(f, a, y);
	}
	link_in(f, b, c);
	could_be(x, ri, f->rpat[ri], pat_find(t, instance_key(n, f, ri)));
	if (rj != ri)
		could_be(x, rj, f->rpat[rj], pat_find(t, instance_key(n, f, rj)));
	link_out(f, c);
	if (y != BB_NONE) {
		link_out(f, y);
		link_in(f, b, y);
	}
	link_in(f, a, c);
}

/* After the last replay: each pattern's interval, from every open change (a
 * move or a swap) of an unsure child (nest_refine.c, posterior). A run whose
 * refinement left no unsure child gets intervals of its counts alone. */
void nest_intervals(struct bb_nest *n)
{
	const struct nest_post *q = &n->solve.post;
	if (!q->done || !n->solve.gpar || !n->pats.npat)
		return;
	struct forest f = {0};
	forest_build(n, &f);
	struct pat_table t;
	pat_table_build(n, &t);
	for (size_t y = 0; y < f.m; y++)
		if (f.par[y] == BB_NONE)
			f.rpat[y] = pat_find(&t, instance_key(n, &f, (uint32_t)y));
	size_t np = n->pats.npat;
	struct reach x = {0};
	x.broken = bb_xcalloc(f.m + 1, 1);
	x.lo = bb_xmalloc(np * sizeof(*x.lo));
	x.hi = bb_xmalloc(np * sizeof(*x.hi));
	for (size_t p = 0; p < np; p++)
		x.lo[p] = x.hi[p] = n->pats.pat[p].count;
	for (size_t i = 0; i < q->n; i++) {
		if (!f.loc[q->child[i]])
			continue;
		uint32_t c = f.loc[q->child[i]] - 1;
		for (uint32_t k = q->off[i]; k < q->off[i + 1]; k++) {
			if (!f.loc[q->apar[k]])
				continue;
			uint32_t y = BB_NONE;
			if (q->aswap[k] != BB_NONE) {
				if (!f.loc[q->aswap[k]])
					continue;
				y = f.loc[q->aswap[k]] - 1;
			}
			try_change(n, &f, &t, &x, c, f.loc[q->apar[k]] - 1, y);
		}
	}
	for (size_t p = 0; p < np; p++) {
		n->pats.pat[p].moved = 1;
		n->pats.pat[p].mlo = x.lo[p];
		n->pats.pat[p].mhi = x.hi[p];
	}
	free(x.broken);
	free(x.made);
	free(x.lo);
	free(x.hi);
	free(t.key);
	free(t.idx);
	forest_free(&f);
}

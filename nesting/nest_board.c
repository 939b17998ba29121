/* nest_board.c - the scoreboard's tables: delay histograms per (A, B, C), their
 * return-side twins and the call-pair counts per edge */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "nesting/nest_int.h"

static void tidx_grow(struct bb_nest *n)
{
	size_t cap = n->board.tcap ? 2 * n->board.tcap : 256;
	uint32_t *t = bb_xcalloc(cap, sizeof(*t));
	for (size_t i = 0; i < n->board.ntri; i++) {
		struct triple *x = &n->board.tri[i];
		size_t k = nest_triple_hash(x->a, x->b, x->c) & (cap - 1);
		while (t[k])
			k = (k + 1) & (cap - 1);
		t[k] = (uint32_t)i + 1;
	}
	free(n->board.tidx);
	n->board.tidx = t;
	n->board.tcap = cap;
}

/* A new histogram's values: the first half alone (nest_tri_at makes the
 * second, the negative delays', when one comes: table1-short's flow peaked
 * with 8 histograms of 30 KB, their second halves all 0). */
static void tri_init(const struct bb_nest *n, struct triple *t)
{
	t->h = bb_xcalloc(n->cfg.bins.n, sizeof(*t->h));
	t->norm = 1;
	t->seq = 0;
	t->neg = 0;
}

/* Where bin k of histogram t counts, its second half made if k is there. */
double *nest_tri_at(const struct bb_nest *n, struct triple *t, uint32_t k)
{
	uint32_t nb = n->cfg.bins.n;
	if (k >= nb && !t->neg) {
		t->h = bb_xrealloc(t->h, 2 * (size_t)nb * sizeof(*t->h));
		memset(t->h + nb, 0, nb * sizeof(*t->h));
		t->neg = 1;
	}
	return &t->h[k];
}

/* Histogram t's counts back to 0: its first half alone when nest_tri_drop
 * freed it, both when it holds both. */
void nest_tri_clear(const struct bb_nest *n, struct triple *t)
{
	if (t->h)
		memset(t->h, 0, nest_tri_halves(t) * (size_t)n->cfg.bins.n * sizeof(*t->h));
	else
		t->h = bb_xcalloc(n->cfg.bins.n, sizeof(*t->h));
}

/* Frees histogram t's values (a sequence histogram no round reads now);
 * nest_tri_clear makes them again. */
void nest_tri_drop(struct triple *t)
{
	free(t->h);
	t->h = NULL;
	t->neg = 0;
}

/* The histogram of nestings of B->C calls in A->B calls, created (nest_triple
 * looked it up first). */
struct triple *nest_triple_add(struct bb_nest *n, uint32_t a, uint32_t b, uint32_t c)
{
	if (!n->board.tcap)
		tidx_grow(n);
	size_t k = nest_triple_hash(a, b, c) & (n->board.tcap - 1);
	while (n->board.tidx[k])
		k = (k + 1) & (n->board.tcap - 1);
	if (n->board.ntri == n->board.captri) {
		n->board.captri = n->board.captri ? 2 * n->board.captri : 64;
		n->board.tri = bb_xrealloc(n->board.tri, n->board.captri * sizeof(*n->board.tri));
	}
	struct triple *x = &n->board.tri[n->board.ntri++];
	x->a = a;
	x->b = b;
	x->c = c;
	tri_init(n, x);
	n->board.tidx[k] = (uint32_t)n->board.ntri;
	n->st.triples = n->board.ntri;
	if (2 * n->board.ntri > n->board.tcap)
		tidx_grow(n);
	return x;
}

static void pc_grow(struct bb_nest *n)
{
	size_t cap = n->board.pccap ? 2 * n->board.pccap : 64;
	struct pairc *t = bb_xmalloc(cap * sizeof(*t));
	for (size_t i = 0; i < cap; i++)
		t[i].a = UINT32_MAX;
	for (size_t i = 0; i < n->board.pccap; i++) {
		if (n->board.pc[i].a == UINT32_MAX)
			continue;
		size_t k = nest_triple_hash(n->board.pc[i].a, n->board.pc[i].b, 0) & (cap - 1);
		while (t[k].a != UINT32_MAX)
			k = (k + 1) & (cap - 1);
		t[k] = n->board.pc[i];
	}
	free(n->board.pc);
	n->board.pc = t;
	n->board.pccap = cap;
}

static struct pairc *pc_find(struct bb_nest *n, uint32_t a, uint32_t b, int create)
{
	if (!n->board.pccap) {
		if (!create)
			return NULL;
		pc_grow(n);
	}
	size_t k = nest_triple_hash(a, b, 0) & (n->board.pccap - 1);
	for (; n->board.pc[k].a != UINT32_MAX; k = (k + 1) & (n->board.pccap - 1))
		if (n->board.pc[k].a == a && n->board.pc[k].b == b)
			return &n->board.pc[k];
	if (!create)
		return NULL;
	if (2 * (n->board.npc + 1) > n->board.pccap) {
		pc_grow(n);
		return pc_find(n, a, b, create);
	}
	n->board.npc++;
	n->board.pc[k].a = a;
	n->board.pc[k].b = b;
	n->board.pc[k].n = 0;
	n->board.pc[k].once = n->board.pc[k].twice = 0;
	nest_pairc_ct_clear(&n->board.pc[k]);
	for (int j = 0; j < NEST_CT_K; j++)
		n->board.pc[k].lr[j] = 1;
	n->board.pc[k].al_n = n->board.pc[k].al_has = 0;
	n->board.pc[k].al_root = 0;
	return &n->board.pc[k];
}

/* The counts of edge a->b, created (nest_pairc looked them up first). */
struct pairc *nest_pairc_add(struct bb_nest *n, uint32_t a, uint32_t b)
{
	return pc_find(n, a, b, 1);
}

/* ---- the return-side histograms (--return-score) ---------------------------- */

static void rsb_grow(struct rtab *x)
{
	size_t cap = x->icap ? 2 * x->icap : 256;
	uint32_t *t = bb_xcalloc(cap, sizeof(*t));
	for (size_t i = 0; i < x->n; i++) {
		size_t k = nest_triple_hash(x->t[i].a, x->t[i].b, x->t[i].c) & (cap - 1);
		while (t[k])
			k = (k + 1) & (cap - 1);
		t[k] = (uint32_t)i + 1;
	}
	free(x->idx);
	x->idx = t;
	x->icap = cap;
}

/* The return-side histogram of (a, b, c), created (nest_rsb looked it up
 * first): the same keys as the scoreboard (a = NEST_ANY with the per-edge one). */
struct triple *nest_rsb_add(struct bb_nest *n, uint32_t a, uint32_t b, uint32_t c)
{
	struct rtab *x = &n->board.rsb;
	if (!x->icap)
		rsb_grow(x);
	size_t k = nest_triple_hash(a, b, c) & (x->icap - 1);
	while (x->idx[k])
		k = (k + 1) & (x->icap - 1);
	if (x->n == x->cap) {
		x->cap = x->cap ? 2 * x->cap : 64;
		x->t = bb_xrealloc(x->t, x->cap * sizeof(*x->t));
	}
	struct triple *t = &x->t[x->n++];
	t->a = a;
	t->b = b;
	t->c = c;
	tri_init(n, t);
	x->idx[k] = (uint32_t)x->n;
	if (2 * x->n > x->icap)
		rsb_grow(x);
	return t;
}

/* Frees the scoreboard's tables, its bin weights included. */
void nest_board_free(struct nest_board *b)
{
	for (size_t i = 0; i < b->ntri; i++)
		free(b->tri[i].h);
	free(b->tri);
	free(b->tidx);
	for (size_t i = 0; i < b->rsb.n; i++)
		free(b->rsb.t[i].h);
	free(b->rsb.t);
	free(b->rsb.idx);
	free(b->binw);
	free(b->pc);
	memset(b, 0, sizeof(*b));
}

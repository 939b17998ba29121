/* nest_refine.c - --global: the callees a call makes together, in order */
/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nesting/nest_int.h"

/* The flow of nest_global.c scores each child on its own and bounds how many
 * children a call takes; it cannot see which callees a call makes together.
 * A web server's call makes catalog, or catalog then reviews, or cart, or
 * nothing (a static file), never cart and catalog; a cache that hits makes
 * no database call. Under bursts the times of overlapping calls barely tell
 * their children apart, and the flow then deals children into sequences no
 * call ever makes.
 *
 * This step takes the flow's assignment and improves the joint likelihood
 *
 *     sum over children of log score(child, parent)
 *   + sum over parents of log P(its children's callees in call order | kind)
 *   + sib times the pairs of siblings that share a request's identifier (sib)
 *
 * A parent's kind is the node it calls (split by its caller where the
 * callers differ, split_kinds). P is learnt from the assignment itself, as
 * hard EM: count each kind's callee sequences (a call of the kind that took
 * no child counts as the empty one), then move one child to another of its
 * candidates, or swap two children of two parents, or pass children of one
 * callee along a chain of three parents (best_rotation), or deal two
 * parents' children anew between them (best_redeal), while the sum grows;
 * count again and repeat (NEST_REFINE_ROUNDS). A sequence the assignment
 * never made gets a pseudo-count of NEST_REFINE_EPS: unlikely, never
 * impossible, so the times can still insist.
 *
 * Measured (docs/accuracy.md, "The callees a call makes together"): shop-r162
 * 13.4% of the instances wrong before, 3.8% after; social-r520 32.5% ->
 * 10.2%; figure 17's trace 0.7% either way. */

#define NEST_REFINE_ROUNDS 3 /* 1: 6.7% wrong on shop-r162, 3 and more: 5.1% */
#define NEST_REFINE_SWEEPS 8 /* per round; they stop when nothing moves */
#define NEST_REFINE_EPS 0.5
#define NEST_REFINE_KIDS 64  /* children of one parent a sequence looks at */
#define SIB_TOK 4            /* a child's tokens the siblings' terms look at */
/* The sweeps of one refinement hash at most this many sequences a child
 * (seq_key), then stop with what they have (stat global_refine_stopped). The
 * search's bounds take a kind's likeliest sequence for each parent it
 * changes; where the assignment is poor every parent's is rare and they cut
 * nothing: the rig's second app at 64 in flight with times alone (no
 * content) hashed 4,000-20,700 a child (3-17 s for 22,000 messages, and a
 * capture stopped at 90% of its span 95 s), every other kept rig capture,
 * Table 1 and the generated loads at most 800. On 15 kept captures of each
 * of those two levels, instances wrong with times alone without and with
 * the budget: 3,313 and 3,301 of 24,000 at burst load, 162 and 173 at
 * Poisson times (1,024: 3,348 and 156; docs/performance.md, "The
 * refinement's budget"). */
#define NEST_REFINE_BUDGET 2048

struct rparent {
	uint32_t kind;      /* index in kinds: k_ab, k_bq or k_b */
	uint32_t k_ab, k_b; /* its kinds by (caller, node) and by node alone */
	uint32_t k_bq;      /* by (node, its req= label), or k_b (no label, a rare one) */
	uint32_t nkids;
	uint32_t head;      /* first child (index in ch), or BB_NONE */
	float wmax;         /* at least its children's rkid.w (a bound: kept up on a
	                       child's arrival, not lowered when one leaves) */
	uint64_t seq;       /* hash of its children's callees in call order (0: none) */
	double lp;          /* log_p of its kind and seq, from the last count (count_seqs
	                       and do_move keep it: the search asks for it at every look) */
	uint64_t changed;   /* the tick of its last change */
}; /* 56 bytes */

struct rkind {
	uint32_t a, b;     /* a NEST_ANY: the kind of every call into b */
	uint32_t q;        /* NEST_ANY, or the req= label of the calls of the kind */
	int split;         /* a node's kind: its calls' sequences depend on the caller
	                      (SPLIT_CALLER) or on their label (SPLIT_LABEL) */
	uint64_t ncalls;   /* calls a->b (or into b) pass 1 counted */
	uint64_t nonempty; /* of them, with a child in the assignment */
	double lp_empty;   /* log_p of the empty sequence, from the last count */
	double lp_unseen;  /* log_p of a sequence not counted */
	double lp_max;     /* the largest log_p of the kind, from the last count */
	int flat;          /* the kind of the calls in flight when the capture began
	                      (nest_recs_early): their children in the trace are the
	                      tail of a sequence, which says nothing, every log_p 0 */
};

struct rcount {
	uint64_t key; /* hash of kind and seq; 0: empty slot */
	uint32_t kind;
	uint64_t seq;
	double n;
	double lp; /* log_p, from the last count */
};

/* What the search reads of a child as it walks a parent's children, in one
 * place: the next child of the same parent, and the flow's cost of its
 * entry in the assignment (g->ent[asg[ci]].w, kept by do_move), which
 * bounds most of the changes before the sequences are looked at. */
struct rkid {
	uint32_t next;
	float w;
};

struct refine {
	struct rparent *par;
	size_t npar;
	uint32_t *pidx; /* per CALL record: its parent index + 1, 0 none */
	struct rkid *kid; /* per child */
	uint64_t *seen; /* per child: the tick it was last looked at, with these counts */
	uint64_t *dirty; /* per child a bit: it may be stale (a superset, see sweep) */
	uint32_t *rlo, *rhi; /* per parent: the first and last child with an entry to it */
	uint8_t *once;  /* per child: its parent may have no other child into its callee
	                   (the flow's hard capacity, nest_once_hard) */
	uint64_t tick;  /* counts changes and looks */
	struct rkind *kind;
	size_t nkind, capkind;
	uint32_t *kidx; /* the kinds by (a, b, q): open addressing, index + 1, 0 empty */
	size_t kcap;
	struct rcount *cnt;
	size_t ccap, ncnt;
	uint64_t *dealt; /* REDEAL_MEMO pairs of parents dealt anew: key, tick */
	uint64_t *stok;  /* per child: its tokens on at most SIB_CALLS calls (SIB_TOK) */
	uint8_t *nstok;  /* ... how many */
	double sib;      /* log ratio of two siblings sharing one (sib_learn), or 0 */
	uint64_t round0; /* the tick the round's counts were made at */
	uint64_t keys;   /* the sequences hashed (seq_key) */
	uint64_t budget; /* ... at most, before the sweeps stop (NEST_REFINE_BUDGET) */
	int spent;       /* the sweeps stopped at the budget */
	int par_sorted;  /* the entries of every child with more than NEST_ENTRY_SCAN
	                    in strictly increasing parent record (candidates come in
	                    call order): entry_to bisects them */
	int counted;     /* the counts are the assignment's: no move since
	                    count_seqs(r, 0) (posterior need not count again) */
};

static uint64_t count_key(uint32_t kind, uint64_t seq)
{
	uint64_t k = nest_mix64(((uint64_t)kind << 1) ^ 0x5bd1e995ULL) ^ seq;
	return k ? k : 1;
}

static void count_grow(struct refine *r)
{
	size_t nc = r->ccap ? 2 * r->ccap : 1024;
	struct rcount *t = bb_xcalloc(nc, sizeof(*t));
	for (size_t i = 0; i < r->ccap; i++) {
		if (!r->cnt[i].key)
			continue;
		size_t q = r->cnt[i].key & (nc - 1);
		while (t[q].key)
			q = (q + 1) & (nc - 1);
		t[q] = r->cnt[i];
	}
	free(r->cnt);
	r->cnt = t;
	r->ccap = nc;
}

static struct rcount *count_find(struct refine *r, uint32_t kind, uint64_t seq, int create)
{
	if (create && 2 * (r->ncnt + 1) > r->ccap)
		count_grow(r);
	if (!r->ccap)
		return NULL;
	uint64_t key = count_key(kind, seq);
	size_t q = key & (r->ccap - 1);
	for (; r->cnt[q].key; q = (q + 1) & (r->ccap - 1)) {
		struct rcount *e = &r->cnt[q];
		if (e->key == key && e->kind == kind && e->seq == seq)
			return e;
	}
	if (!create)
		return NULL;
	r->cnt[q] = (struct rcount){key, kind, seq, 0, 0};
	r->ncnt++;
	return &r->cnt[q];
}

static uint64_t kind_key(uint32_t a, uint32_t b, uint32_t q)
{
	return nest_mix64(((uint64_t)a << 32 | b) ^ nest_mix64(q));
}

static void kidx_grow(struct refine *r)
{
	size_t nc = r->kcap ? 2 * r->kcap : 64;
	uint32_t *t = bb_xcalloc(nc, sizeof(*t));
	for (size_t i = 0; i < r->nkind; i++) {
		const struct rkind *k = &r->kind[i];
		size_t h = kind_key(k->a, k->b, k->q) & (nc - 1);
		while (t[h])
			h = (h + 1) & (nc - 1);
		t[h] = (uint32_t)i + 1;
	}
	free(r->kidx);
	r->kidx = t;
	r->kcap = nc;
}

/* The slot of kind (a, b, q) in kidx: its index + 1, or the empty slot. */
static size_t kind_slot(const struct refine *r, uint32_t a, uint32_t b, uint32_t q)
{
	size_t h = kind_key(a, b, q) & (r->kcap - 1);
	for (; r->kidx[h]; h = (h + 1) & (r->kcap - 1)) {
		const struct rkind *k = &r->kind[r->kidx[h] - 1];
		if (k->a == a && k->b == b && k->q == q)
			break;
	}
	return h;
}

/* The kind of the calls a->b (a NEST_ANY: into b) with label q (NEST_ANY:
 * any), made on first sight; a label kind's calls are counted by build. */
static uint32_t kind_of(struct bb_nest *n, struct refine *r, uint32_t a, uint32_t b, uint32_t q)
{
	if (2 * (r->nkind + 1) > r->kcap)
		kidx_grow(r);
	size_t h = kind_slot(r, a, b, q);
	if (r->kidx[h])
		return r->kidx[h] - 1;
	if (r->nkind == r->capkind) {
		r->capkind = r->capkind ? 2 * r->capkind : 16;
		r->kind = bb_xrealloc(r->kind, r->capkind * sizeof(*r->kind));
	}
	struct rkind *k = &r->kind[r->nkind];
	k->a = a;
	k->b = b;
	k->q = q;
	k->split = 0;
	k->flat = 0;
	if (q != NEST_ANY) {
		k->ncalls = 0;
	} else if (a != NEST_ANY) {
		struct pairc *e = nest_pairc(n, a, b, 0);
		k->ncalls = e ? e->n : 0;
	} else {
		k->ncalls = b < n->nodes.ninto ? n->nodes.into[b].ncalls : 0;
	}
	k->nonempty = 0;
	r->kidx[h] = (uint32_t)r->nkind + 1;
	return (uint32_t)r->nkind++;
}

/* kind_of through a small table of the last answers (build asks two or
 * three times per parent, and a trace has few kinds). */
#define KIND_MEMO 1024 /* direct-mapped: 64 missed 22% on table1-long (687 K kind_of) */
struct kind_memo {
	uint32_t a[KIND_MEMO], b[KIND_MEMO], q[KIND_MEMO], k[KIND_MEMO]; /* k: kind + 1, 0 empty */
};

static uint32_t kind_memo(struct bb_nest *n, struct refine *r, struct kind_memo *m, uint32_t a,
                          uint32_t b, uint32_t q)
{
	size_t h = (a * 0x9e3779b1u ^ b * 0x85ebca6bu ^ q * 0xc2b2ae35u) >> 22;
	if (m->k[h] && m->a[h] == a && m->b[h] == b && m->q[h] == q)
		return m->k[h] - 1;
	uint32_t k = kind_of(n, r, a, b, q);
	m->a[h] = a;
	m->b[h] = b;
	m->q[h] = q;
	m->k[h] = k + 1;
	return k;
}

/* How many calls of the kind made sequence seq in the last count. */
static double count_of(struct refine *r, uint32_t kind, uint64_t seq)
{
	const struct rkind *k = &r->kind[kind];
	if (!seq)
		return (double)(k->ncalls > k->nonempty ? k->ncalls - k->nonempty : 0);
	const struct rcount *e = count_find(r, kind, seq, 0);
	return e ? e->n : 0;
}

/* log P(seq | kind) from count c of the kind's calls making it. */
static double log_p_of(const struct rkind *k, double c)
{
	if (k->flat)
		return 0;
	double total = (double)(k->ncalls > k->nonempty ? k->ncalls : k->nonempty);
	return log((c + NEST_REFINE_EPS) / (total + NEST_REFINE_EPS));
}

/* log P(seq | kind) from the last count (count_seqs keeps them). */
static double log_p(struct refine *r, uint32_t kind, uint64_t seq)
{
	const struct rkind *k = &r->kind[kind];
	if (!seq)
		return k->lp_empty;
	const struct rcount *e = count_find(r, kind, seq, 0);
	return e ? e->lp : k->lp_unseen;
}

/* Counts each kind's sequences in the assignment; both: under every kind of
 * each parent (for split_kinds), else under the kind it uses. */
static void count_seqs(struct refine *r, int both)
{
	for (size_t i = 0; i < r->ccap; i++)
		r->cnt[i].n = 0;
	for (size_t i = 0; i < r->nkind; i++)
		r->kind[i].nonempty = 0;
	/* each parent's slot of its own kind and seq (!both), when the table
	 * did not grow meanwhile: log_p's look-up again, per parent, was 1.2%
	 * of table1-long's instructions */
	uint32_t *slot = both ? NULL : bb_xmalloc((r->npar ? r->npar : 1) * sizeof(*slot));
	size_t ccap0 = r->ccap;
	for (size_t p = 0; p < r->npar; p++) {
		const struct rparent *x = &r->par[p];
		if (!x->nkids)
			continue;
		uint32_t k1 = both ? x->k_ab : x->kind;
		r->kind[k1].nonempty++;
		struct rcount *e1 = count_find(r, k1, x->seq, 1);
		e1->n += 1;
		if (slot)
			slot[p] = (uint32_t)(e1 - r->cnt);
		if (both) {
			r->kind[x->k_b].nonempty++;
			count_find(r, x->k_b, x->seq, 1)->n += 1;
		}
		if (both && x->k_bq != x->k_b) {
			r->kind[x->k_bq].nonempty++;
			count_find(r, x->k_bq, x->seq, 1)->n += 1;
		}
	}
	/* the log probabilities, which stay until the next count */
	for (size_t i = 0; i < r->nkind; i++) {
		r->kind[i].lp_empty = log_p_of(&r->kind[i], count_of(r, (uint32_t)i, 0));
		r->kind[i].lp_unseen = log_p_of(&r->kind[i], 0);
		r->kind[i].lp_max = r->kind[i].lp_empty;
	}
	for (size_t i = 0; i < r->ccap; i++)
		if (r->cnt[i].key) {
			struct rkind *k = &r->kind[r->cnt[i].kind];
			r->cnt[i].lp = log_p_of(k, r->cnt[i].n);
			if (r->cnt[i].lp > k->lp_max)
				k->lp_max = r->cnt[i].lp;
		}
	for (size_t p = 0; p < r->npar; p++) {
		struct rparent *x = &r->par[p];
		x->lp = slot && r->ccap == ccap0 && x->nkids && x->seq ? r->cnt[slot[p]].lp
		                                                       : log_p(r, x->kind, x->seq);
	}
	free(slot);
	r->counted = !both;
}

/* The upper 0.001 quantile of chi-square with df degrees of freedom
 * (Wilson and Hilferty's approximation). */
static double chi2_crit(double df)
{
	double z = 3.09, v = 2.0 / (9.0 * df);
	double t = 1 - v + z * sqrt(v);
	return df * t * t * t;
}

enum { SPLIT_NONE, SPLIT_CALLER, SPLIT_LABEL };

/* A label kind counts once it has this many calls; a rarer label's calls
 * take their node's kind. */
#define LABEL_MIN 30

/* Whether A is one of the parts node kind B splits into by dim. */
static int part_of(const struct rkind *A, const struct rkind *B, int dim)
{
	if (A->b != B->b || !A->ncalls)
		return 0;
	if (dim == SPLIT_CALLER)
		return A->a != NEST_ANY && A->q == NEST_ANY;
	return A->a == NEST_ANY && A->q != NEST_ANY && A->ncalls >= LABEL_MIN;
}

/* The G statistic of node kind kb's parts by dim (its callers, or its
 * calls' labels) against the node, and its degrees of freedom. */
static double g_test(struct refine *r, size_t kb, int dim, double *df)
{
	const struct rkind *B = &r->kind[kb];
	double g = 0, nseqs = count_of(r, (uint32_t)kb, 0) > 0, nparts = 0, nb = (double)B->ncalls;
	for (size_t i = 0; i < r->ccap; i++)
		if (r->cnt[i].key && r->cnt[i].kind == kb && r->cnt[i].n > 0)
			nseqs++;
	for (size_t ka = 0; ka < r->nkind; ka++) { /* the parts, and their empty sequence */
		const struct rkind *A = &r->kind[ka];
		if (!part_of(A, B, dim))
			continue;
		nparts++;
		double c = count_of(r, (uint32_t)ka, 0), cb = count_of(r, (uint32_t)kb, 0);
		if (c > 0 && cb > 0)
			g += 2 * c * log(c * nb / ((double)A->ncalls * cb));
	}
	for (size_t i = 0; i < r->ccap; i++) { /* their other sequences */
		const struct rcount *e = &r->cnt[i];
		if (!e->key || e->n <= 0 || !part_of(&r->kind[e->kind], B, dim))
			continue;
		double c = e->n, cb = count_of(r, (uint32_t)kb, e->seq);
		if (cb > 0)
			g += 2 * c * log(c * nb / ((double)r->kind[e->kind].ncalls * cb));
	}
	*df = (nparts - 1) * (nseqs - 1);
	return g;
}

/* Do the caller of a call into b, or its label (an HTTP path, an SQL
 * statement's kind: bbcap's req=), change the sequences it makes? G-tests
 * of the (caller, node) kinds and of the (node, label) kinds against the
 * node's on the flow's assignment: a kind is split by label where its
 * labels differ (p < 0.001), else by caller where they do. Splitting where
 * the callers do not differ lets hard EM drift: at figure 17's parallelism
 * of 42 the times barely tell four clients' web-server calls apart, and each
 * (client, web server) kind's share of AP1 and AP2 ran away (0.7% of the
 * instances wrong became 17.9%). A label names what a call asks for, and so
 * what it calls: the rig's first app's login asks its auth service for a
 * database lookup, an item page never does. */
static void split_kinds(struct refine *r)
{
	count_seqs(r, 1);
	for (size_t kb = 0; kb < r->nkind; kb++) {
		struct rkind *B = &r->kind[kb];
		if (B->a != NEST_ANY || B->q != NEST_ANY || !B->ncalls)
			continue;
		double df, g = g_test(r, kb, SPLIT_LABEL, &df);
		if (df > 0 && g > chi2_crit(df)) {
			B->split = SPLIT_LABEL;
			continue;
		}
		g = g_test(r, kb, SPLIT_CALLER, &df);
		B->split = df > 0 && g > chi2_crit(df) ? SPLIT_CALLER : SPLIT_NONE;
	}
	for (size_t p = 0; p < r->npar; p++) {
		struct rparent *x = &r->par[p];
		int sp = r->kind[x->k_b].split;
		x->kind = sp == SPLIT_LABEL ? x->k_bq : sp == SPLIT_CALLER ? x->k_ab : x->k_b;
	}
}

static uint64_t seq_key_of(const struct nest_global *g, uint32_t *kid, size_t nk);

/* The hash of parent p's children's callees in call order (the records'
 * order), without child drop and with child add (BB_NONE: none). A list
 * holds its children latest first but for those moved in (build links them
 * in child order, link_kid at the head), so they are taken from the back of
 * the array: nearly in order, the sort then costs a pass, not a square. At
 * 64 requests in flight without content a parent can hold 33 children, and
 * the sort of the lists taken the other way round was 70% of the run (a rig
 * capture of 21,000 messages: 95 s). */
static uint64_t seq_key(const struct nest_global *g, struct refine *r,
                        const struct rparent *p, uint32_t drop, uint32_t add)
{
	r->keys++;
	uint32_t buf[NEST_REFINE_KIDS + 1];
	size_t top = NEST_REFINE_KIDS;
	for (uint32_t y = p->head; y != BB_NONE && top > 1; y = r->kid[y].next)
		if (y != drop)
			buf[--top] = y;
	size_t nk = NEST_REFINE_KIDS - top;
	if (add != BB_NONE) {
		buf[NEST_REFINE_KIDS] = add;
		nk++;
	}
	return seq_key_of(g, buf + top, nk);
}

/* The hash of children kid[0..nk) (indices in ch; reordered) in call order. */
static uint64_t seq_key_of(const struct nest_global *g, uint32_t *kid, size_t nk)
{
	for (size_t i = 1; i < nk; i++) { /* insertion sort by call order */
		uint32_t v = kid[i];
		size_t j = i;
		for (; j && g->ch[kid[j - 1]].ridx > g->ch[v].ridx; j--)
			kid[j] = kid[j - 1];
		kid[j] = v;
	}
	uint64_t h = 0;
	for (size_t i = 0; i < nk; i++)
		h = nest_mix64(h ^ ((uint64_t)g->ch[kid[i]].c + 1));
	return h;
}

static void unlink_kid(struct refine *r, struct rparent *p, uint32_t ci)
{
	uint32_t *pp = &p->head;
	while (*pp != ci)
		pp = &r->kid[*pp].next;
	*pp = r->kid[ci].next;
	p->nkids--;
}

static void link_kid(struct refine *r, struct rparent *p, uint32_t ci)
{
	r->kid[ci].next = p->head;
	p->head = ci;
	p->nkids++;
}

static struct rparent *parent_of(const struct nest_global *g, const struct refine *r, uint32_t e)
{
	return &r->par[r->pidx[g->ent[e].par] - 1];
}

/* Calls of one request repeat its identifiers: a DNS name asked twice (A
 * and AAAA, or a retry), an order id in two SQL queries, a cache key read
 * then written. Two children that share a token seen on at most SIB_CALLS
 * calls of the trace (one request's identifier, not a user's or an item's,
 * which repeat across requests) are likelier siblings than two children of
 * different calls: the log ratio sib, learnt each round from the assignment
 * as content's ratios are (a: how often two siblings with such tokens share
 * one; b: how often a child and a child of another of its candidates do),
 * joins the sum for each pair of siblings that share one. At most
 * SIB_LR_MAX, and 0 (nothing) with fewer than SIB_MIN pairs of either kind
 * or a <= b. Measured (docs/accuracy.md, "Siblings that share a request's
 * identifier"): the rig's first app, whose lookups ask a name holding the
 * request id twice, 384 -> 294 instances wrong of 25,600 on nine kept runs;
 * tokens on any number of calls took the second app, whose user and item ids
 * repeat, from 58 to 447 of 32,000. */
#define SIB_CALLS 8
#define SIB_OTHERS 4 /* b looks at the children of this many other candidates */
#define SIB_MIN 30.0
#define SIB_LR_MAX 1000.0

static int sib_share(const struct refine *r, uint32_t y, uint32_t z)
{
	for (uint32_t i = 0; i < r->nstok[y]; i++)
		for (uint32_t j = 0; j < r->nstok[z]; j++)
			if (r->stok[(size_t)y * SIB_TOK + i] == r->stok[(size_t)z * SIB_TOK + j])
				return 1;
	return 0;
}

static double sib_walk(const struct refine *r, const struct rparent *x, uint32_t y,
                       uint32_t skip)
{
	uint32_t k = 0;
	for (uint32_t z = x->head; z != BB_NONE; z = r->kid[z].next)
		k += z != y && z != skip && r->nstok[z] && sib_share(r, y, z);
	return r->sib * k;
}

/* sib times the children of x, less y and skip, that share a token with y.
 * The test inline: most children have no token to share (every child
 * without tokens in the trace), and the search asks at every candidate. */
static inline double sib(const struct refine *r, const struct rparent *x, uint32_t y,
                         uint32_t skip)
{
	if (r->sib == 0 || !r->nstok[y])
		return 0;
	return sib_walk(r, x, y, skip);
}

/* Whether parent q, less child out (or BB_NONE), has a child into callee c. */
static int has_callee(const struct nest_global *g, const struct refine *r,
                      const struct rparent *q, uint32_t c, uint32_t out)
{
	for (uint32_t y = q->head; y != BB_NONE; y = r->kid[y].next)
		if (y != out && g->ch[y].c == c)
			return 1;
	return 0;
}

/* Whether child ci may join parent q in place of q's child out (BB_NONE: a
 * move): the flow's hard "once" capacities hold in the refinement too. A
 * change that broke one gave the rig's front end two or five redis calls
 * and left others with none under bursts. */
static int fits(const struct nest_global *g, const struct refine *r, const struct rparent *q,
                uint32_t ci, uint32_t out)
{
	if (!r->once[ci] || (out != BB_NONE && g->ch[out].c == g->ch[ci].c))
		return 1;
	return !has_callee(g, r, q, g->ch[ci].c, out);
}

/* Parent p has changed: every child with an entry to it may be stale. */
static void mark_dirty(struct refine *r, size_t p)
{
	for (uint32_t ci = r->rlo[p]; ci <= r->rhi[p]; ci++) /* bits, a word at a time */
		if (!(ci & 63) && ci + 63 <= r->rhi[p]) {
			r->dirty[ci / 64] = ~UINT64_C(0);
			ci += 63;
		} else {
			r->dirty[ci / 64] |= UINT64_C(1) << (ci & 63);
		}
}

/* Child ci moves from its entry to entry e1, one of its candidates. */
static void do_move(struct nest_global *g, struct refine *r, uint32_t *asg, uint32_t ci,
                    uint32_t e1)
{
	struct rparent *p = parent_of(g, r, asg[ci]), *q = parent_of(g, r, e1);
	p->seq = seq_key(g, r, p, ci, BB_NONE);
	q->seq = seq_key(g, r, q, BB_NONE, ci);
	p->lp = log_p(r, p->kind, p->seq);
	q->lp = log_p(r, q->kind, q->seq);
	unlink_kid(r, p, ci);
	link_kid(r, q, ci);
	p->changed = q->changed = ++r->tick;
	if (r->dirty) {
		mark_dirty(r, (size_t)(p - r->par));
		mark_dirty(r, (size_t)(q - r->par));
	}
	asg[ci] = e1;
	r->counted = 0;
	r->kid[ci].w = g->ent[e1].w;
	if (r->kid[ci].w > q->wmax)
		q->wmax = r->kid[ci].w;
}

/* Has anything child ci's best change depends on changed since it was
 * last looked at? Its candidates' children (the counts stay within a round). */
static int stale(const struct nest_global *g, const struct refine *r, uint32_t ci)
{
	const struct nest_gchild *x = &g->ch[ci];
	if (r->seen[ci] < r->round0) /* not looked at with these counts */
		return 1;
	for (uint32_t j = 0; j < x->nc; j++) /* every entry's call is a parent (build) */
		if (parent_of(g, r, x->off + j)->changed > r->seen[ci])
			return 1;
	return 0;
}

/* Children with more candidates than this find a parent's entry by
 * bisection (r->par_sorted), the others by a scan: on the rig's second app
 * at bursts of 64 (44 candidates a child) the scans were 40% of bbnest's CPU.
 * A build may set another (-DNEST_ENTRY_SCAN=0x7fffffff scans every child:
 * bbnest_scan, tests/cli/bbnest_scan.sh). */
#ifndef NEST_ENTRY_SCAN
#define NEST_ENTRY_SCAN 8
#endif

/* The entry of child y whose parent is par, or BB_NONE. */
static uint32_t entry_to(const struct nest_global *g, const struct refine *r, uint32_t y,
                         uint32_t par)
{
	const struct nest_gchild *x = &g->ch[y];
	if (r->par_sorted && x->nc > NEST_ENTRY_SCAN) {
		/* one entry at most has par: the same answer as the scan */
		uint32_t lo = x->off, hi = x->off + x->nc;
		if (par < g->ent[lo].par || par > g->ent[hi - 1].par)
			return BB_NONE; /* not among its candidates' calls */
		while (lo < hi) { /* the first entry whose par is not less (one is not) */
			uint32_t mid = lo + (hi - lo) / 2;
			if (g->ent[mid].par < par)
				lo = mid + 1;
			else
				hi = mid;
		}
		return g->ent[lo].par == par && !isinf(g->ent[lo].w) ? lo : BB_NONE;
	}
	for (uint32_t j = 0; j < x->nc; j++)
		if (g->ent[x->off + j].par == par && !isinf(g->ent[x->off + j].w))
			return x->off + j;
	return BB_NONE;
}

/* The best change for child ci: a move to another candidate, or a swap with
 * a child of that candidate; *gain what it adds to the likelihood. */
#define BOUND_SLACK 1e-6

struct change {
	double gain;
	uint32_t e1;     /* ci's new entry, or BB_NONE: none */
	uint32_t y, ey1; /* the child swapped and its new entry, or BB_NONE */
	uint32_t z, ez1; /* a rotation's third child and its entry, or BB_NONE */
};

/* Where ci's parent p holds a sequence its kind makes at most this share of
 * the time, the search also passes children into ci's callee along three
 * parents: ci to its candidate q, q's child y to y's candidate s, and s's
 * child z to p (a rotation) or nothing (a chain: p keeps one child fewer, s
 * one more). Three calls whose children were dealt round (each holding the
 * next one's) make three sequences no call makes, and no move or swap of
 * two of them mends one without breaking another; nor does one move where
 * the call that lacks a child can take it only from a call that must then
 * give up its own. Measured on nine kept rig runs, 54 cells, and the
 * generated loads (docs/accuracy.md, "Rotations of three children"): for
 * rotations, thresholds 0.01, 0.05 and 0.2 mend about as many; every parent
 * (no threshold) costs 3-4 times the CPU at 64 in flight for no gain;
 * children of any callee about as many and 3.5 times the CPU. */
#define NEST_REFINE_RARE 0.05

/* Whether parent p holds a sequence its kind makes at most NEST_REFINE_RARE
 * of the time (best_rotation, best_redeal). */
static int holds_rare(const struct rparent *p)
{
	return p->lp < log(NEST_REFINE_RARE);
}

/* log_p of parent p's sequence without drop and with add (seq_key), kept
 * in *memo (NAN: not yet): best_rotation's loops ask for the same one again
 * and again, each a hash of the parent's children. */
static double lp_memo(const struct nest_global *g, struct refine *r, double *memo,
                      const struct rparent *p, uint32_t drop, uint32_t add)
{
	if (isnan(*memo))
		*memo = log_p(r, p->kind, seq_key(g, r, p, drop, add));
	return *memo;
}

static void best_rotation(struct nest_global *g, struct refine *r, const uint32_t *asg,
                          uint32_t ci, struct change *b)
{
	const struct nest_gchild *x = &g->ch[ci];
	uint32_t e0 = asg[ci], p0 = g->ent[e0].par;
	struct rparent *p = parent_of(g, r, e0);
	double lp_p = p->lp;
	double sp = sib(r, p, ci, BB_NONE);
	double lp_pc = NAN; /* p's sequence without ci, on first need */
	for (uint32_t j = 0; j < x->nc; j++) {
		uint32_t e1 = x->off + j;
		if (e1 == e0 || isinf(g->ent[e1].w))
			continue;
		struct rparent *q = parent_of(g, r, e1);
		/* the bounds below: a kind's sequence has at most its lp_max */
		double dq = g->ent[e0].w - g->ent[e1].w - lp_p + r->kind[p->kind].lp_max -
		            q->lp + r->kind[q->kind].lp_max;
		for (uint32_t y = q->head; y != BB_NONE; y = r->kid[y].next) {
			const struct nest_gchild *xy = &g->ch[y];
			if (xy->c != x->c)
				continue;
			/* the siblings' terms of ci and y; with s's and z's, at most U */
			double dsib = sib(r, q, ci, y) - sp - sib(r, q, y, BB_NONE);
			double lp_qy = NAN; /* q's sequence with ci for y, on first need */
			for (uint32_t k = 0; k < xy->nc; k++) {
				uint32_t ey1 = xy->off + k;
				struct rparent *s = parent_of(g, r, ey1);
				if (ey1 == asg[y] || s == p || s == q || isinf(g->ent[ey1].w))
					continue;
				double ds = dq + r->kid[y].w - g->ent[ey1].w - s->lp +
				            r->kind[s->kind].lp_max;
				double U = r->sib * (p->nkids + q->nkids + s->nkids);
				/* ci, y and z share a callee: only a chain's s, which takes y
				 * and gives none, can break a "once" capacity (fits) */
				if (ds + U > b->gain - BOUND_SLACK && fits(g, r, s, y, BB_NONE)) { /* a chain */
					double d = ds + dsib + sib(r, s, y, BB_NONE) - r->kind[p->kind].lp_max -
					           r->kind[q->kind].lp_max -
					           r->kind[s->kind].lp_max +
					           lp_memo(g, r, &lp_pc, p, ci, BB_NONE) +
					           lp_memo(g, r, &lp_qy, q, y, ci) +
					           log_p(r, s->kind, seq_key(g, r, s, BB_NONE, y));
					if (d > b->gain)
						*b = (struct change){d, e1, y, ey1, BB_NONE, BB_NONE};
				}
				for (uint32_t z = s->head; z != BB_NONE; z = r->kid[z].next) {
					if (g->ch[z].c != x->c || !(ds + U + r->kid[z].w > b->gain - BOUND_SLACK))
						continue;
					uint32_t ez1 = entry_to(g, r, z, p0);
					if (ez1 == BB_NONE)
						continue;
					double d = ds + dsib + sib(r, s, y, z) + sib(r, p, z, ci) -
					           sib(r, s, z, BB_NONE) + r->kid[z].w - g->ent[ez1].w -
					           r->kind[p->kind].lp_max - r->kind[q->kind].lp_max -
					           r->kind[s->kind].lp_max +
					           log_p(r, p->kind, seq_key(g, r, p, ci, z)) +
					           lp_memo(g, r, &lp_qy, q, y, ci) +
					           log_p(r, s->kind, seq_key(g, r, s, z, y));
					if (d > b->gain)
						*b = (struct change){d, e1, y, ey1, z, ez1};
				}
			}
		}
	}
}

static struct change best_change(struct nest_global *g, struct refine *r, const uint32_t *asg,
                                 uint32_t ci)
{
	struct change b = {1e-9, BB_NONE, BB_NONE, BB_NONE, BB_NONE, BB_NONE};
	const struct nest_gchild *x = &g->ch[ci];
	uint32_t e0 = asg[ci], p0 = g->ent[e0].par;
	struct rparent *p = parent_of(g, r, e0);
	double lp_p = p->lp;
	/* p's sequence without ci, looked up when a move first passes the
	 * bound with its kind's most likely sequence in its place (a sum is
	 * monotone in each term, so the test with it fails whenever that
	 * one does) */
	double lp_p1 = NAN, lp_pmax = r->kind[p->kind].lp_max;
	double sp = sib(r, p, ci, BB_NONE);
	for (uint32_t j = 0; j < x->nc; j++) {
		uint32_t e1 = x->off + j;
		if (e1 == e0 || isinf(g->ent[e1].w))
			continue;
		struct rparent *q = parent_of(g, r, e1);
		double sq = sib(r, q, ci, BB_NONE);
		double dt = g->ent[e0].w - g->ent[e1].w + sq - sp; /* the flow's costs, siblings */
		double lp_q = q->lp;
		/* a log probability is <= 0 and a cost >= 0: the gains below are
		 * at most these bounds, and a bound under the best gain (with a
		 * margin for rounding) skips the sequences' work */
		if (dt + lp_pmax - lp_p - lp_q > b.gain - BOUND_SLACK && isnan(lp_p1))
			lp_p1 = log_p(r, p->kind, seq_key(g, r, p, ci, BB_NONE));
		if (dt + lp_pmax - lp_p - lp_q > b.gain - BOUND_SLACK &&
		    dt + lp_p1 - lp_p - lp_q > b.gain - BOUND_SLACK && fits(g, r, q, ci, BB_NONE)) {
			double d = dt + lp_p1 - lp_p +
			           log_p(r, q->kind, seq_key(g, r, q, BB_NONE, ci)) - lp_q;
			if (d > b.gain)
				b = (struct change){d, e1, BB_NONE, BB_NONE, BB_NONE, BB_NONE};
		}
		double cap = dt - lp_p - lp_q + r->sib * p->nkids; /* sib(p, y, ci) at most */
		/* no child of q passes the bound below when the largest w does not
		 * (the best gain only grows) */
		if (!(cap + q->wmax > b.gain - BOUND_SLACK))
			continue;
		for (uint32_t y = q->head; y != BB_NONE; y = r->kid[y].next) {
			if (!(cap + r->kid[y].w > b.gain - BOUND_SLACK))
				continue;
			uint32_t ey1 = entry_to(g, r, y, p0);
			if (ey1 == BB_NONE || !fits(g, r, q, ci, y) || !fits(g, r, p, y, ci))
				continue;
			double ds = dt + r->kid[y].w - g->ent[ey1].w - sq + sib(r, q, ci, y) +
			            sib(r, p, y, ci) - sib(r, q, y, BB_NONE) +
			            log_p(r, p->kind, seq_key(g, r, p, ci, y)) - lp_p +
			            log_p(r, q->kind, seq_key(g, r, q, y, ci)) - lp_q;
			if (ds > b.gain)
				b = (struct change){ds, e1, y, ey1, BB_NONE, BB_NONE};
		}
	}
	if (holds_rare(p))
		best_rotation(g, r, asg, ci, &b);
	return b;
}

/* Where ci's parent p holds a rare sequence (NEST_REFINE_RARE), the search
 * also deals the children of p and of one of ci's candidates q anew between
 * the two: every child that could have either takes the one of the best
 * deal. Two requests that start together deal their children between them
 * when their first children return together: on the rig at 64 in flight an
 * item request held a lookup's two DNS calls and the lookup the item's pg,
 * which no move, swap or rotation of children into one callee mends. At most
 * REDEAL_FREE children are dealt (2^REDEAL_FREE deals), of at most
 * REDEAL_KIDS children of the two. Measured (docs/accuracy.md, "Two
 * requests' children dealt anew"): the first app's nine kept rig runs 559
 * -> 384 instances wrong of 25,600, three held-out runs 517 -> 424 of
 * 19,200; but the unit test's worker pool (pool_rotation), whose counts are
 * learnt from an assignment a third wrong, 724 -> 846 of 5,600: the deal
 * follows the counts further, right or wrong. With 6 children dealt the rig
 * gains half as much; taking only deals that leave neither sequence less
 * likely, the pool 749 but the rig 449. */
#define REDEAL_FREE 8
#define REDEAL_KIDS 24
#define REDEAL_MEMO 65536 /* pairs remembered: neither changed since, same deal */

struct redeal {
	double gain;
	uint32_t n;
	uint32_t kid[REDEAL_FREE]; /* the children that change parent */
	uint32_t ent[REDEAL_FREE]; /* their new entries */
};

struct deal_kid {
	uint32_t y;
	uint32_t e[2];  /* its entries to p and to q, or BB_NONE */
	int side;       /* 0: p, 1: q; a free child's current side */
	int free;       /* its bit in the deal + 1, or 0: it stays */
};

struct deal {
	const struct rparent *pq[2];
	double lp0[2];                     /* their sequences' log_p now */
	struct deal_kid d[REDEAL_KIDS];    /* the children of both, in call order */
	size_t n, nfree;
	double dw[REDEAL_FREE];            /* a free child's cost saved on its other side */
	unsigned cur;                      /* the current deal: bit set, the child is q's */
	uint8_t once[REDEAL_KIDS * REDEAL_KIDS][2]; /* pairs that may not share a side */
	size_t nonce;
	uint8_t shr[REDEAL_KIDS * REDEAL_KIDS][2];  /* pairs that share a token (sib) */
	size_t nshr;
	double sib0;                       /* the siblings' terms of the current deal */
};

static int deal_side(const struct deal_kid *k, unsigned mask)
{
	return k->free ? (int)((mask >> (k->free - 1)) & 1) : k->side;
}

/* The siblings' terms of deal mask (sib, above). */
static double deal_sib(const struct refine *r, const struct deal *D, unsigned mask)
{
	uint32_t k = 0;
	for (size_t i = 0; i < D->nshr; i++)
		k += deal_side(&D->d[D->shr[i][0]], mask) == deal_side(&D->d[D->shr[i][1]], mask);
	return r->sib * k;
}

/* The children of p and q with their entries, costs and "once" pairs; 0 when
 * they are too many or fewer than two could change sides. */
static int deal_make(const struct nest_global *g, const struct refine *r, const uint32_t par[2],
                     const uint32_t *asg, struct deal *D)
{
	D->n = D->nfree = D->nonce = D->nshr = 0;
	for (int s = 0; s < 2; s++)
		for (uint32_t y = D->pq[s]->head; y != BB_NONE; y = r->kid[y].next) {
			if (D->n == REDEAL_KIDS)
				return 0;
			struct deal_kid k = {y, {BB_NONE, BB_NONE}, s, 0};
			k.e[s] = asg[y];
			k.e[1 - s] = entry_to(g, r, y, par[1 - s]);
			if (k.e[1 - s] != BB_NONE) {
				if (D->nfree == REDEAL_FREE)
					return 0;
				k.free = (int)++D->nfree;
			}
			size_t j = D->n++;
			for (; j && g->ch[D->d[j - 1].y].ridx > g->ch[y].ridx; j--)
				D->d[j] = D->d[j - 1];
			D->d[j] = k;
		}
	D->cur = 0;
	for (size_t i = 0; i < D->n; i++) {
		const struct deal_kid *k = &D->d[i];
		if (k->free) {
			D->dw[k->free - 1] = g->ent[k->e[k->side]].w - g->ent[k->e[1 - k->side]].w;
			D->cur |= (unsigned)k->side << (k->free - 1);
		}
		for (size_t j = 0; j < i; j++) {
			if (!k->free && !D->d[j].free)
				continue;
			if (g->ch[D->d[j].y].c == g->ch[k->y].c && (r->once[k->y] || r->once[D->d[j].y])) {
				D->once[D->nonce][0] = (uint8_t)j;
				D->once[D->nonce++][1] = (uint8_t)i;
			}
			if (r->sib != 0 && r->nstok[k->y] && r->nstok[D->d[j].y] &&
			    sib_share(r, k->y, D->d[j].y)) {
				D->shr[D->nshr][0] = (uint8_t)j;
				D->shr[D->nshr++][1] = (uint8_t)i;
			}
		}
	}
	D->sib0 = deal_sib(r, D, D->cur);
	return D->nfree >= 2;
}

/* Deal mask's gain over the current deal, or -INFINITY where it cannot beat
 * best or a "once" capacity breaks. */
static double deal_gain(const struct nest_global *g, struct refine *r, const struct deal *D,
                        unsigned mask, double lp_bound, double best)
{
	double dw = 0;
	for (size_t k = 0; k < D->nfree; k++)
		if (((mask ^ D->cur) >> k) & 1)
			dw += D->dw[k];
	if (!(dw + lp_bound + r->sib * (double)D->nshr - D->sib0 > best))
		return -INFINITY;
	for (size_t i = 0; i < D->nonce; i++)
		if (deal_side(&D->d[D->once[i][0]], mask) == deal_side(&D->d[D->once[i][1]], mask))
			return -INFINITY;
	uint64_t h[2] = {0, 0};
	for (size_t i = 0; i < D->n; i++) {
		int s = deal_side(&D->d[i], mask);
		h[s] = nest_mix64(h[s] ^ ((uint64_t)g->ch[D->d[i].y].c + 1));
	}
	return dw + deal_sib(r, D, mask) - D->sib0 + log_p(r, D->pq[0]->kind, h[0]) - D->lp0[0] +
	       log_p(r, D->pq[1]->kind, h[1]) - D->lp0[1];
}

/* Whether parents pq were dealt anew with these counts since either last
 * changed (the same deal again); else remembers them as dealt now. */
static int dealt_before(struct refine *r, const struct rparent *pq[2])
{
	uint64_t a = (uint64_t)(pq[0] - r->par), b = (uint64_t)(pq[1] - r->par);
	uint64_t key = a < b ? a << 32 | b : b << 32 | a;
	if (!r->dealt) /* on first need: most rounds deal no pair anew */
		r->dealt = bb_xcalloc(2 * REDEAL_MEMO, sizeof(*r->dealt));
	uint64_t *m = &r->dealt[2 * (nest_mix64(key) & (REDEAL_MEMO - 1))];
	if (m[0] == key + 1 && m[1] > r->round0 && m[1] > pq[0]->changed && m[1] > pq[1]->changed)
		return 1;
	m[0] = key + 1;
	m[1] = ++r->tick;
	return 0;
}

static void best_redeal(struct nest_global *g, struct refine *r, const uint32_t *asg,
                        uint32_t ci, struct redeal *b)
{
	const struct nest_gchild *x = &g->ch[ci];
	uint32_t e0 = asg[ci];
	struct deal D = {.n = 0};
	D.pq[0] = parent_of(g, r, e0);
	D.lp0[0] = D.pq[0]->lp;
	uint32_t par[2] = {g->ent[e0].par, BB_NONE};
	for (uint32_t j = 0; j < x->nc; j++) {
		uint32_t e1 = x->off + j;
		if (e1 == e0 || isinf(g->ent[e1].w))
			continue;
		D.pq[1] = parent_of(g, r, e1);
		if (D.pq[0] == D.pq[1] || dealt_before(r, D.pq))
			continue;
		par[1] = g->ent[e1].par;
		if (!deal_make(g, r, par, asg, &D))
			continue;
		D.lp0[1] = D.pq[1]->lp;
		/* a bound: the sequences at their kinds' most likely */
		double lp_bound = r->kind[D.pq[0]->kind].lp_max - D.lp0[0] +
		                  r->kind[D.pq[1]->kind].lp_max - D.lp0[1];
		unsigned best = D.cur;
		for (unsigned m = 0; m < 1u << D.nfree; m++) {
			if (m == D.cur)
				continue;
			double v = deal_gain(g, r, &D, m, lp_bound, b->gain - BOUND_SLACK);
			if (v > b->gain) {
				b->gain = v;
				best = m;
			}
		}
		if (best == D.cur)
			continue;
		b->n = 0;
		for (size_t i = 0; i < D.n; i++) {
			int s = deal_side(&D.d[i], best);
			if (s != D.d[i].side) {
				b->kid[b->n] = D.d[i].y;
				b->ent[b->n++] = D.d[i].e[s];
			}
		}
	}
}

static void sib_learn(const struct nest_global *g, struct refine *r, const uint32_t *asg)
{
	double an = 0, ad = 0, bn = 0, bd = 0;
	r->sib = 0;
	if (!r->stok)
		return;
	for (uint32_t ci = 0; ci < g->nch; ci++) {
		if (!r->nstok[ci])
			continue;
		const struct rparent *p = parent_of(g, r, asg[ci]);
		for (uint32_t z = p->head; z != BB_NONE; z = r->kid[z].next)
			if (z != ci && r->nstok[z]) {
				ad++;
				an += sib_share(r, ci, z);
			}
		for (uint32_t j = 0, m = 0; j < g->ch[ci].nc && m < SIB_OTHERS; j++) {
			uint32_t e = g->ch[ci].off + j;
			const struct rparent *q = parent_of(g, r, e);
			if (q == p || isinf(g->ent[e].w))
				continue;
			m++;
			for (uint32_t z = q->head; z != BB_NONE; z = r->kid[z].next)
				if (r->nstok[z]) {
					bd++;
					bn += sib_share(r, ci, z);
				}
		}
	}
	double a = (an + 0.5) / (ad + 1), b = (bn + 0.5) / (bd + 1);
	if (ad >= SIB_MIN && bd >= SIB_MIN && a > b)
		r->sib = log(a / b < SIB_LR_MAX ? a / b : SIB_LR_MAX);
}

/* Child ci's turn in a sweep: its best change made when it is stale;
 * returns 1 if it made one. */
static int look(struct nest_global *g, struct refine *r, uint32_t *asg, uint32_t ci)
{
	uint32_t e0 = asg[ci];
	if (g->ch[ci].nc < 2 || isinf(g->ent[e0].w) || !stale(g, r, ci))
		return 0;
	struct change c = best_change(g, r, asg, ci);
	r->seen[ci] = ++r->tick;
	struct redeal rd = {c.gain, 0, {0}, {0}};
	if (holds_rare(parent_of(g, r, e0)))
		best_redeal(g, r, asg, ci, &rd);
	if (rd.n) {
		for (uint32_t i = 0; i < rd.n; i++)
			do_move(g, r, asg, rd.kid[i], rd.ent[i]);
		return 1;
	}
	if (c.e1 == BB_NONE)
		return 0;
	if (c.z != BB_NONE)
		do_move(g, r, asg, c.z, c.ez1);
	if (c.y != BB_NONE)
		do_move(g, r, asg, c.y, c.ey1);
	do_move(g, r, asg, ci, c.e1);
	return 1;
}

/* One sweep over the children; returns the number of changes. A child is
 * looked at when stale; only those with their dirty bit can be (do_move
 * marks every child with an entry to a parent it changes), so the sweep
 * walks the set bits in child order, taking the bits set ahead of it in the
 * same sweep and leaving those behind to the next, as a walk over every
 * child would: table1-long's sweeps asked stale() of every child, 0.55 G
 * of its 13.4 G instructions. Out of its budget (NEST_REFINE_BUDGET) it
 * stops where it is. */
static size_t sweep(struct nest_global *g, struct refine *r, uint32_t *asg)
{
	size_t changed = 0, nw = (g->nch + 63) / 64;
	for (size_t w = 0; w < nw; w++) {
		uint64_t ahead = ~UINT64_C(0), m;
		while ((m = r->dirty[w] & ahead)) {
			if (r->keys > r->budget) {
				r->spent = 1;
				return changed;
			}
			unsigned bit = (unsigned)__builtin_ctzll(m);
			r->dirty[w] &= ~(UINT64_C(1) << bit);
			ahead = bit == 63 ? 0 : ~UINT64_C(0) << (bit + 1);
			uint32_t ci = (uint32_t)(w * 64 + bit);
			changed += look(g, r, asg, ci);
		}
	}
	return changed;
}

/* The children's bits all set (new counts), and each parent's range of
 * children with an entry to it. */
static void dirty_init(const struct nest_global *g, struct refine *r)
{
	if (!r->rlo) {
		r->rlo = bb_xmalloc((r->npar ? r->npar : 1) * sizeof(*r->rlo));
		r->rhi = bb_xcalloc(r->npar ? r->npar : 1, sizeof(*r->rhi));
		r->dirty = bb_xmalloc(((g->nch + 63) / 64 + 1) * sizeof(*r->dirty));
		for (size_t p = 0; p < r->npar; p++)
			r->rlo[p] = UINT32_MAX;
		for (uint32_t ci = 0; ci < g->nch; ci++)
			for (uint32_t j = 0; j < g->ch[ci].nc; j++) {
				size_t p = r->pidx[g->ent[g->ch[ci].off + j].par] - 1;
				r->rlo[p] = ci < r->rlo[p] ? ci : r->rlo[p];
				r->rhi[p] = ci;
			}
	}
	size_t nw = (g->nch + 63) / 64;
	memset(r->dirty, 0xff, nw * sizeof(*r->dirty));
	if (g->nch & 63)
		r->dirty[nw - 1] = (UINT64_C(1) << (g->nch & 63)) - 1;
}

/* The calls of each label kind (every CALL record into its node with its
 * label, a candidate or not); a parent whose label has fewer than
 * LABEL_MIN takes its node's kind for it. */
static void count_labels(const struct bb_nest *n, struct refine *r)
{
	if (!n->recs.rreq || !r->kcap)
		return;
	for (size_t i = 0; i < n->recs.nrec; i++) {
		const struct mrec *m = &n->recs.rec[i];
		if (m->op_from >> 30 != REC_CALL || n->recs.rreq[i] == BB_NONE)
			continue;
		size_t h = kind_slot(r, NEST_ANY, m->arg, n->recs.rreq[i]);
		if (r->kidx[h])
			r->kind[r->kidx[h] - 1].ncalls++;
	}
	for (size_t p = 0; p < r->npar; p++)
		if (r->kind[r->par[p].k_bq].ncalls < LABEL_MIN)
			r->par[p].k_bq = r->par[p].k_b;
}

#define REFINE_AHEAD 16

/* The one flat kind (rkind.flat), made on first use: no node's. */
static uint32_t flat_kind(struct bb_nest *n, struct refine *r)
{
	uint32_t k = kind_of(n, r, NEST_ANY, UINT32_MAX - 1, NEST_ANY);
	r->kind[k].flat = 1;
	return k;
}

/* Every candidate's call a parent, with its kinds; the assignment's
 * children linked to theirs. */
static void build(struct bb_nest *n, struct refine *r, const uint32_t *asg)
{
	struct nest_global *g = &n->solve.glob;
	r->par_sorted = 1; /* of the children entry_to bisects */
	for (uint32_t ci = 0; ci < g->nch && r->par_sorted; ci++) {
		const struct nest_gchild *x = &g->ch[ci];
		for (uint32_t j = 1; x->nc > NEST_ENTRY_SCAN && j < x->nc; j++)
			if (g->ent[x->off + j].par <= g->ent[x->off + j - 1].par) {
				r->par_sorted = 0;
				break;
			}
	}
	r->pidx = bb_xcalloc(n->recs.nrec ? n->recs.nrec : 1, sizeof(*r->pidx));
	r->kid = bb_xmalloc((g->nch + 1) * sizeof(*r->kid));
	r->seen = bb_xcalloc(g->nch + 1, sizeof(*r->seen));
	r->once = bb_xmalloc(g->nch + 1);
	if (n->content.rtok) {
		r->stok = bb_xmalloc((g->nch + 1) * SIB_TOK * sizeof(*r->stok));
		r->nstok = bb_xmalloc(g->nch + 1);
		for (uint32_t ci = 0; ci < g->nch; ci++)
			r->nstok[ci] = (uint8_t)nest_content_ids(n, g->ch[ci].ridx, SIB_CALLS,
			                                         &r->stok[(size_t)ci * SIB_TOK], SIB_TOK);
	}
	struct nest_once_memo memo = {.v = {0}};
	for (uint32_t ci = 0; ci < g->nch; ci++) {
		uint32_t b = n->recs.rec[g->ch[ci].ridx].op_from & REC_NODE_MAX; /* its caller */
		r->once[ci] = nest_once_of(n, &memo, b, g->ch[ci].c) == 2;
	}
	size_t cappar = 1024;
	r->par = bb_xmalloc(cappar * sizeof(*r->par));
	struct kind_memo km = {.k = {0}};
	for (size_t e = 0; e < g->nent; e++) {
		uint32_t par = g->ent[e].par;
		if (e + REFINE_AHEAD < g->nent) { /* the parents come in no order of memory */
			__builtin_prefetch(&r->pidx[g->ent[e + REFINE_AHEAD].par]);
			__builtin_prefetch(&n->recs.rec[g->ent[e + REFINE_AHEAD].par]);
		}
		if (r->pidx[par])
			continue;
		if (r->npar == cappar) {
			cappar *= 2;
			r->par = bb_xrealloc(r->par, cappar * sizeof(*r->par));
		}
		struct rparent *x = &r->par[r->npar];
		uint32_t a = n->recs.rec[par].op_from & REC_NODE_MAX, b = n->recs.rec[par].arg;
		if (nest_rec_early(n, par)) {
			x->k_ab = x->k_b = x->k_bq = flat_kind(n, r);
		} else {
			x->k_ab = kind_memo(n, r, &km, a, b, NEST_ANY);
			x->k_b = kind_memo(n, r, &km, NEST_ANY, b, NEST_ANY);
			uint32_t q = n->recs.rreq ? n->recs.rreq[par] : BB_NONE;
			x->k_bq = q != BB_NONE ? kind_memo(n, r, &km, NEST_ANY, b, q) : x->k_b;
		}
		x->kind = x->k_b;
		x->nkids = 0;
		x->wmax = -INFINITY;
		x->seq = 0;
		x->head = BB_NONE;
		x->changed = 0;
		r->pidx[par] = (uint32_t)++r->npar;
	}
	/* the doubling's slack back (up to half of 56 bytes a parent) */
	r->par = bb_xrealloc(r->par, (r->npar ? r->npar : 1) * sizeof(*r->par));
	count_labels(n, r);
	for (uint32_t ci = 0; ci < g->nch; ci++) {
		struct rparent *p = parent_of(g, r, asg[ci]);
		link_kid(r, p, ci);
		r->kid[ci].w = g->ent[asg[ci]].w;
		if (r->kid[ci].w > p->wmax)
			p->wmax = r->kid[ci].w;
	}
	for (size_t p = 0; p < r->npar; p++)
		r->par[p].seq = seq_key(g, r, &r->par[p], BB_NONE, BB_NONE);
}

/* Which other parents child ci could have, for the count intervals
 * (nest_interval.c). Moving it alone to candidate e, or swapping it with a
 * child y of e whose candidates include ci's parent, changes the final
 * model's likelihood by gain (best_change's terms): each change has a
 * probability proportional to exp(gain), the chosen parent's gain 0. A lone
 * move usually leaves one call without a callee it always makes and gives
 * another two: the sequences make it unlikely, and the swaps are left
 * (figure 17's trace). The model can be sure and wrong (a worker pool's
 * queue at 64 requests in flight: docs/accuracy.md), so a move the times
 * alone leave open counts too: to a candidate with at least NEST_POST_TIMES
 * of the child's scores (the "likely parent" of the ambiguity flags,
 * nest_global_collect). A change is kept when the model gives it at least
 * NEST_POST_MODEL or it is such a move. Only the last --global round's
 * refinement does this. */
#define NEST_POST_MODEL 0.01
#define NEST_POST_TIMES (1 - NEST_AMB_SHARE)

struct palt {
	double gain;
	int times;          /* a move the times alone leave open */
	uint32_t par, swap; /* the new parent's CALL record; the child swapped's, or BB_NONE */
};

struct pbuf {
	struct palt *a;
	size_t n, cap;
	double *ex; /* per entry of the child: exp(-w), 0 for none (times_sum) */
	size_t capex;
	double rest; /* the changes left out: their exp(gain) summed, at most */
	double cut;  /* a gain under it is left out (post_changes) */
	double tcut; /* an entry further than it from the child's best is no
	                move the times leave open (post_changes) */
};

static void palt_push(struct pbuf *b, double gain, int times, uint32_t par, uint32_t swap)
{
	if (b->n == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 64;
		b->a = bb_xrealloc(b->a, b->cap * sizeof(*b->a));
	}
	b->a[b->n++] = (struct palt){gain, times, par, swap};
}

/* The sum of child ci's scores relative to its best (the entries' w are
 * the flow's costs: its best log score less theirs), which times_share
 * divides by: once per child, not once per candidate. Each entry's term
 * stays in b->ex for times_share (one exp() an entry, not two: 1.2 M
 * fewer on table1-par-medium). */
static double times_sum(const struct nest_global *g, uint32_t ci, struct pbuf *b)
{
	const struct nest_gchild *x = &g->ch[ci];
	if (x->nc > b->capex) {
		b->capex = x->nc;
		b->ex = bb_xrealloc(b->ex, b->capex * sizeof(*b->ex));
	}
	double sum = 0;
	for (uint32_t j = 0; j < x->nc; j++) {
		b->ex[j] = isinf(g->ent[x->off + j].w) ? 0 : exp(-(double)g->ent[x->off + j].w);
		sum += b->ex[j];
	}
	return sum;
}

/* The share of child ci's scores its entry j has; sum: times_sum's. */
static double times_share(const struct pbuf *b, uint32_t j, double sum)
{
	return b->ex[j] == 0 || sum <= 0 ? 0 : b->ex[j] / sum;
}

/* Whether an entry of child ci other than e0 may be a move the times leave
 * open: its share of the scores is at most exp(-(w - the least w)), so an
 * entry further than b->tcut from the least is none, and times_sum's exp()
 * for every entry is needed only when one is nearer (table1-par-medium:
 * 1.2 M fewer exp()). */
static int times_near(const struct nest_global *g, uint32_t ci, uint32_t e0,
                      const struct pbuf *b)
{
	const struct nest_gchild *x = &g->ch[ci];
	double wmin = INFINITY;
	for (uint32_t j = 0; j < x->nc; j++)
		if (!isinf(g->ent[x->off + j].w) && g->ent[x->off + j].w < wmin)
			wmin = g->ent[x->off + j].w;
	for (uint32_t j = 0; j < x->nc; j++) {
		double w = g->ent[x->off + j].w;
		if (x->off + j != e0 && !isinf(w) && w - wmin <= b->tcut)
			return 1;
	}
	return 0;
}

/* Child ci's changes: moves and swaps, with their gains, into b. With
 * prune, a change whose gain is sure to be under b->cut is left out, its
 * most in b->rest: its gain is at most the one with its parents' kinds'
 * most likely sequences in place of the new ones (the same sum, in the same
 * order, with larger terms), which skips the sequences' look-ups
 * (post_child decides whether the rest could matter). */
static void post_changes(struct nest_global *g, struct refine *r, const uint32_t *asg,
                         uint32_t ci, struct pbuf *b, int prune)
{
	const struct nest_gchild *x = &g->ch[ci];
	uint32_t e0 = asg[ci], p0 = g->ent[e0].par;
	struct rparent *p = parent_of(g, r, e0);
	double lp_p = p->lp, lp_pmax = r->kind[p->kind].lp_max;
	double lp_p1 = log_p(r, p->kind, seq_key(g, r, p, ci, BB_NONE));
	int near = times_near(g, ci, e0, b);
	double tsum = near ? times_sum(g, ci, b) : 0;
	b->n = 0;
	b->rest = 0;
	for (uint32_t j = 0; j < x->nc; j++) {
		uint32_t e1 = x->off + j;
		if (e1 == e0 || isinf(g->ent[e1].w))
			continue;
		struct rparent *q = parent_of(g, r, e1);
		double dt = g->ent[e0].w - g->ent[e1].w, lp_q = q->lp;
		double lp_qmax = r->kind[q->kind].lp_max;
		int t1 = near && times_share(b, j, tsum) >= NEST_POST_TIMES;
		if (fits(g, r, q, ci, BB_NONE)) {
			double most = dt + lp_p1 - lp_p + lp_qmax - lp_q;
			if (prune && !t1 && most < b->cut)
				b->rest += exp(most);
			else
				palt_push(b,
				          dt + lp_p1 - lp_p +
				              log_p(r, q->kind, seq_key(g, r, q, BB_NONE, ci)) - lp_q,
				          t1, g->ent[e1].par, BB_NONE);
		}
		for (uint32_t y = q->head; y != BB_NONE; y = r->kid[y].next) {
			uint32_t ey1 = entry_to(g, r, y, p0);
			if (ey1 == BB_NONE || !fits(g, r, q, ci, y) || !fits(g, r, p, y, ci))
				continue;
			double dw = dt + r->kid[y].w - g->ent[ey1].w;
			double most = dw + lp_pmax - lp_p + lp_qmax - lp_q;
			if (prune && most < b->cut) {
				b->rest += exp(most);
				continue;
			}
			palt_push(b,
			          dw + log_p(r, p->kind, seq_key(g, r, p, ci, y)) - lp_p +
			              log_p(r, q->kind, seq_key(g, r, q, y, ci)) - lp_q,
			          0, g->ent[e1].par, g->ch[y].ridx);
		}
	}
}

/* Each gain in b becomes its exp(); returns their sum with the chosen
 * parent's 1. */
static double post_weigh(struct pbuf *b)
{
	double sum = 1;
	for (size_t i = 0; i < b->n; i++) {
		b->a[i].gain = exp(b->a[i].gain < 700 ? b->a[i].gain : 700);
		sum += b->a[i].gain;
	}
	return sum;
}

/* Whether the changes post_changes left out could change which of the
 * others NEST_POST_MODEL keeps: with them the sum would be in [sum, sum +
 * b->rest] (the margin: the additions' order). */
#define POST_MARGIN 1e-9

static int post_open(const struct pbuf *b, double sum)
{
	if (b->rest <= 0)
		return 0;
	for (size_t i = 0; i < b->n; i++) {
		double e = b->a[i].gain;
		if (b->a[i].times || e >= NEST_POST_MODEL * (sum + b->rest) * (1 + POST_MARGIN) ||
		    e < NEST_POST_MODEL * sum * (1 - POST_MARGIN))
			continue; /* kept, or left, either way */
		return 1;
	}
	return 0;
}

/* A build may set -DNEST_POST_BOUND=0 to weigh every change: the output is
 * the same (test cli_bbnest_postbound), only slower. */
#ifndef NEST_POST_BOUND
#define NEST_POST_BOUND 1
#endif

static void post_child(struct bb_nest *n, struct refine *r, const uint32_t *asg, uint32_t ci,
                       struct pbuf *b)
{
	struct nest_global *g = &n->solve.glob;
	post_changes(g, r, asg, ci, b, NEST_POST_BOUND);
	double sum = post_weigh(b);
	if (post_open(b, sum)) { /* every change, as if none was left out */
		post_changes(g, r, asg, ci, b, 0);
		sum = post_weigh(b);
	}
	int any = 0;
	for (size_t i = 0; i < b->n; i++) {
		double pi = b->a[i].gain / sum;
		if (pi < NEST_POST_MODEL && !b->a[i].times)
			continue;
		if (!any++)
			nest_post_add(&n->solve.post, g->ch[ci].ridx);
		nest_post_alt(&n->solve.post, b->a[i].par, b->a[i].swap);
	}
}

static void posterior(struct bb_nest *n, struct refine *r, const uint32_t *asg)
{
	struct nest_global *g = &n->solve.glob;
	nest_post_free(&n->solve.post);
	if (!r->counted) /* table1-short: its sweeps and cycles move nothing */
		count_seqs(r, 0); /* the final assignment's */
	/* under log(NEST_POST_MODEL) a change has less than that share, whatever
	 * the others (the sum counts the chosen parent's 1) */
	struct pbuf b = {.cut = log(NEST_POST_MODEL) - POST_MARGIN,
	                 .tcut = -log(NEST_POST_TIMES) + POST_MARGIN};
	for (uint32_t ci = 0; ci < g->nch; ci++)
		if (g->ch[ci].nc >= 2 && !isinf(g->ent[asg[ci]].w))
			post_child(n, r, asg, ci, &b);
	free(b.a);
	free(b.ex);
	n->solve.post.done = 1;

}

/* ---- two-round cycles ------------------------------------------------------ */

/* Each round scores every child in the context of the round before's
 * parents (the sequence anchors, the overlap penalty), and some groups of
 * children go back and forth: under the context of parents A the round
 * chooses B, under B's it chooses A again (the gaps from siblings' returns
 * that B's parents give make A's children look like B's, and the other way
 * round). Then the last round's parity decides: on one kept rig run (the
 * first app, 8 in flight in bursts) two simultaneous requests' pg, redis
 * and pg calls flipped every round, and 6 rounds left 16 instances wrong
 * where 5 or 7 left none; of the children the fourth and fifth rounds moved,
 * 69-95% went back where they were two rounds before (rig runs, shop-r162,
 * social-r390).
 * A group (children moved together, linked by the parents they left and
 * joined) that a round sends back where it was two rounds before is
 * weighed in both contexts: the margin by which the round before preferred
 * it to the alternative, in the alternative's context, against the margin
 * by which this round prefers the alternative, in the group's own context
 * (the children's log scores plus their parents' log P(seq)); the larger
 * margin's choice stays. */
struct cyc_pair {
	uint32_t par;  /* a parent's index in r->par */
	uint32_t m;    /* a moved child (index in mc), the top bit set: it left par */
};
#define CYC_LEFT 0x80000000u

struct cyc_work {
	uint32_t *mc;    /* the moved children (index in ch) */
	uint32_t *oldp;  /* ... their parent in the round before (CALL record), or
	                    BB_NONE: no way back */
	uint32_t nm;
	uint32_t *up;    /* per moved child: union-find; the group is its root's */
	double *margin;  /* per root: the group's margin */
	uint32_t *gsize; /* per root: its children; the top bit: one has no way back */
	uint32_t *ghead, *gnext; /* per root / per moved child: the group's list */
	uint8_t *moved;  /* per child, a bit: in mc */
};

static uint32_t cyc_find(uint32_t *up, uint32_t x)
{
	while (up[x] != x)
		x = up[x] = up[up[x]];
	return x;
}

static int cmp_cyc_pair(const void *a, const void *b)
{
	const struct cyc_pair *x = a, *y = b;
	if (x->par != y->par)
		return x->par < y->par ? -1 : 1;
	return x->m < y->m ? -1 : x->m > y->m;
}

/* log P of parent p's sequence in the round before: its children now but
 * those that moved in, and those that left it (pairs l[0..nl) with
 * CYC_LEFT). */
static double cyc_lp_before(const struct nest_global *g, struct refine *r,
                            const struct cyc_work *w, const struct rparent *p,
                            const struct cyc_pair *l, size_t nl)
{
	uint32_t kid[NEST_REFINE_KIDS];
	size_t nk = 0;
	for (uint32_t y = p->head; y != BB_NONE && nk < NEST_REFINE_KIDS; y = r->kid[y].next)
		if (!(w->moved[y / 8] >> (y % 8) & 1))
			kid[nk++] = y;
	for (size_t i = 0; i < nl && nk < NEST_REFINE_KIDS; i++)
		if (l[i].m & CYC_LEFT)
			kid[nk++] = w->mc[l[i].m & ~CYC_LEFT];
	return log_p(r, p->kind, nk ? seq_key_of(g, kid, nk) : 0);
}

/* The parents' part of the groups' margins: the pairs sorted by parent,
 * each parent's log P now less in the round before, and its children
 * (leaving or joining) one group. */
static void cyc_parents(const struct nest_global *g, struct refine *r, struct cyc_work *w,
                        struct cyc_pair *pr, size_t np)
{
	qsort(pr, np, sizeof(*pr), cmp_cyc_pair);
	for (size_t i = 0, j; i < np; i = j) {
		uint32_t a = cyc_find(w->up, pr[i].m & ~CYC_LEFT);
		for (j = i + 1; j < np && pr[j].par == pr[i].par; j++) {
			uint32_t b = cyc_find(w->up, pr[j].m & ~CYC_LEFT);
			if (a != b) {
				w->up[b] = a;
				w->margin[a] += w->margin[b];
				w->gsize[a] += w->gsize[b] & ~CYC_LEFT;
				w->gsize[a] |= w->gsize[b] & CYC_LEFT;
			}
		}
		const struct rparent *p = &r->par[pr[i].par];
		w->margin[a] += p->lp - cyc_lp_before(g, r, w, p, &pr[i], j - i);
	}
}

/* The children whose parents differ from prev's, grouped (linked by the
 * parents they left and joined), each group's margin for its new parents
 * over its old ones in this round's scores: the children's log scores and
 * the parents' log P(seq). Sized by the moved children. */
static void cyc_groups(const struct nest_global *g, struct refine *r, const uint32_t *asg,
                       const uint32_t *prev, struct cyc_work *w)
{
	for (uint32_t ci = 0; ci < g->nch; ci++)
		w->nm += prev[g->ch[ci].ridx] != g->ent[asg[ci]].par;
	w->mc = bb_xmalloc((w->nm + 1) * sizeof(uint32_t));
	w->oldp = bb_xmalloc((w->nm + 1) * sizeof(uint32_t));
	w->up = bb_xmalloc((w->nm + 1) * sizeof(uint32_t));
	w->margin = bb_xcalloc(w->nm + 1, sizeof(double));
	w->gsize = bb_xmalloc((w->nm + 1) * sizeof(uint32_t));
	w->moved = bb_xcalloc(g->nch / 8 + 1, 1);
	struct cyc_pair *pr = bb_xmalloc((2 * (size_t)w->nm + 1) * sizeof(*pr));
	size_t np = 0;
	uint32_t m = 0;
	for (uint32_t ci = 0; ci < g->nch; ci++) {
		uint32_t op = prev[g->ch[ci].ridx], e = BB_NONE;
		if (op == g->ent[asg[ci]].par)
			continue;
		if (op != BB_NONE && r->pidx[op])
			e = entry_to(g, r, ci, op);
		w->mc[m] = ci;
		w->oldp[m] = e == BB_NONE ? BB_NONE : op;
		w->up[m] = m;
		w->gsize[m] = 1 | (e == BB_NONE ? CYC_LEFT : 0);
		w->margin[m] = e == BB_NONE ? 0 : g->ent[e].w - r->kid[ci].w;
		w->moved[ci / 8] |= (uint8_t)(1u << (ci % 8));
		pr[np++] = (struct cyc_pair){r->pidx[g->ent[asg[ci]].par] - 1, m};
		if (e != BB_NONE)
			pr[np++] = (struct cyc_pair){r->pidx[op] - 1, m | CYC_LEFT};
		m++;
	}
	cyc_parents(g, r, w, pr, np);
	free(pr);
	w->ghead = bb_xmalloc((w->nm + 1) * sizeof(uint32_t));
	w->gnext = bb_xmalloc((w->nm + 1) * sizeof(uint32_t));
	for (m = 0; m < w->nm; m++)
		w->ghead[m] = BB_NONE;
	for (m = 0; m < w->nm; m++) {
		uint32_t root = cyc_find(w->up, m);
		w->gnext[m] = w->ghead[root];
		w->ghead[root] = m;
	}
}

static void cyc_free(struct cyc_work *w)
{
	free(w->mc);
	free(w->oldp);
	free(w->up);
	free(w->margin);
	free(w->gsize);
	free(w->ghead);
	free(w->gnext);
	free(w->moved);
}

static int cmp_cyc(const void *a, const void *b)
{
	const struct nest_cyc *x = a, *y = b;
	return x->ridx < y->ridx ? -1 : x->ridx > y->ridx;
}

static const struct nest_cyc *cyc_find_ridx(const struct nest_solve *sv, uint32_t ridx)
{
	const struct nest_cyc key = {.ridx = ridx};
	return sv->ncyc ? bsearch(&key, sv->cyc, sv->ncyc, sizeof(key), cmp_cyc) : NULL;
}

/* The round before's group that group root (this round's, each of whose
 * children has a way back) sends back to where it was two rounds ago,
 * whole: its entry, or NULL. */
static const struct nest_cyc *cyc_back(const struct nest_global *g, const struct nest_solve *sv,
                                       const uint32_t *asg, const struct cyc_work *w,
                                       uint32_t root)
{
	const struct nest_cyc *first = NULL;
	for (uint32_t m = w->ghead[root]; m != BB_NONE; m = w->gnext[m]) {
		uint32_t ci = w->mc[m];
		const struct nest_cyc *c = cyc_find_ridx(sv, g->ch[ci].ridx);
		if (!c || c->alt != g->ent[asg[ci]].par || (first && c->group != first->group))
			return NULL;
		first = first ? first : c;
	}
	return first && first->size == w->gsize[root] ? first : NULL;
}

/* Two-round cycles (above): the groups this round moved back where they
 * were two rounds ago go back to the round before's parents when that
 * round's margin was the larger; what this round moved (or kept back) is
 * remembered for the next. Returns the children kept back. */
static size_t cycles(struct bb_nest *n, struct refine *r, uint32_t *asg)
{
	struct nest_global *g = &n->solve.glob;
	struct nest_solve *sv = &n->solve;
	const uint32_t *prev = sv->gpar ? sv->gpar : sv->gprev;
	struct cyc_work w = {0};
	size_t back = 0, nc = 0;
	/* from the second round with a context on: the first one's moves are the
	 * context's first corrections (table1-par-medium: 22,378 of 288,756
	 * children), and its groups, held through the next flow at 20 bytes a
	 * child, took that row's heap over the paper's (54.3 MiB) */
	if (sv->round < 2 || !prev) {
		sv->ncyc = 0;
		return 0;
	}
	cyc_groups(g, r, asg, prev, &w);
	struct nest_cyc *out = bb_xmalloc((w.nm + 1) * sizeof(*out));
	for (uint32_t k = 0; k < w.nm; k++) {
		if (w.ghead[k] == BB_NONE || (w.gsize[k] & CYC_LEFT))
			continue; /* not a root, or a group with no way back */
		const struct nest_cyc *c = cyc_back(g, sv, asg, &w, k);
		int keep = c && c->margin > w.margin[k];
		for (uint32_t m = w.ghead[k]; m != BB_NONE; m = w.gnext[m]) {
			uint32_t ci = w.mc[m], np = g->ent[asg[ci]].par;
			out[nc++] = (struct nest_cyc){g->ch[ci].ridx, keep ? np : w.oldp[m], k, w.gsize[k],
			                              keep ? c->margin : (float)w.margin[k]};
		}
		if (keep)
			for (uint32_t m = w.ghead[k]; m != BB_NONE; m = w.gnext[m], back++)
				do_move(g, r, asg, w.mc[m], entry_to(g, r, w.mc[m], w.oldp[m]));
	}
	nest_heap_sample(n); /* the groups' tables */
	qsort(out, nc, sizeof(*out), cmp_cyc);
	free(sv->cyc);
	sv->cyc = out;
	sv->ncyc = nc;
	cyc_free(&w);
	return back;
}

/* The last round's cycling groups stay open in the count intervals: each
 * child's other parent is a change the two contexts could not settle
 * (nest_interval.c counts it as a move, one child at a time). */
static void cycles_open(struct bb_nest *n)
{
	struct nest_solve *sv = &n->solve;
	for (size_t i = 0; i < sv->ncyc; i++) {
		nest_post_add(&sv->post, sv->cyc[i].ridx);
		nest_post_alt(&sv->post, sv->cyc[i].alt, BB_NONE);
	}
}

/* A child in a parent's sequence, this round's (w 0) or the one before's (w 1). */
struct skid {
	uint32_t par, w, ridx, ci;
};

static int cmp_skid(const void *a, const void *b)
{
	const struct skid *x = a, *y = b;
	if (x->par != y->par)
		return x->par < y->par ? -1 : 1;
	if (x->w != y->w)
		return x->w < y->w ? -1 : 1;
	return (x->ridx > y->ridx) - (x->ridx < y->ridx);
}

/* How many parents' callee sequences this round (asg) changed from the
 * round before's (prev, per CALL record), of the parents of the children
 * that moved: each such parent's sequence in both (seq_key_of, as the
 * refinement hashes them). None changed: every call's subtree, and so
 * every pattern, is the same; only which of two calls alike took which
 * child moved. */
static size_t reshaped(const struct nest_global *g, const uint32_t *asg, const uint32_t *prev,
                       size_t nrec)
{
	uint8_t *mark = bb_xcalloc(nrec / 8 + 1, 1); /* the moved children's parents */
	for (size_t ci = 0; ci < g->nch; ci++) {
		uint32_t pq[2] = {g->ent[asg[ci]].par, prev[g->ch[ci].ridx]};
		for (int w = 0; w < 2 && pq[0] != pq[1]; w++)
			if (pq[w] != BB_NONE)
				mark[pq[w] >> 3] |= (uint8_t)(1u << (pq[w] & 7));
	}
	size_t nk = 0, capk = 64;
	struct skid *k = bb_xmalloc(capk * sizeof(*k));
	for (size_t ci = 0; ci < g->nch; ci++) {
		uint32_t c = g->ch[ci].ridx, pq[2] = {g->ent[asg[ci]].par, prev[c]};
		for (uint32_t w = 0; w < 2; w++) {
			if (pq[w] == BB_NONE || !(mark[pq[w] >> 3] >> (pq[w] & 7) & 1))
				continue;
			if (nk == capk)
				k = bb_xrealloc(k, (capk *= 2) * sizeof(*k));
			k[nk++] = (struct skid){pq[w], w, c, (uint32_t)ci};
		}
	}
	free(mark);
	qsort(k, nk, sizeof(*k), cmp_skid);
	uint32_t *kid = bb_xmalloc((nk + 1) * sizeof(*kid));
	for (size_t i = 0; i < nk; i++)
		kid[i] = k[i].ci;
	size_t r = 0;
	for (size_t i = 0; i < nk;) { /* one parent: its new children, then its old */
		size_t j = i, e;
		while (j < nk && k[j].par == k[i].par && !k[j].w)
			j++;
		for (e = j; e < nk && k[e].par == k[i].par; e++)
			;
		r += seq_key_of(g, kid + i, j - i) != seq_key_of(g, kid + j, e - j);
		i = e;
	}
	free(kid);
	free(k);
	return r;
}

/* Whether a first round whose refinement made `refined` changes is the
 * last (settled, below; nest_refine skips its confirming sweep then). */
static int first_settles(const struct bb_nest *n, uint64_t refined)
{
	return !n->solve.round && (double)refined <= NEST_SETTLED * (double)n->solve.glob.nch;
}

/* Whether this round's parents (asg) are the round before's (in
 * n->solve.gpar, or the context when it holds them) but for at most
 * NEST_SETTLED of the children moved, or of them in parents whose callee
 * sequences changed (reshaped): then this round is the last
 * (n->solve.settled).
 * The first round has no round before: it is the last when its refinement
 * made at most NEST_SETTLED changes a child (refined: moves, swaps and
 * rotations), the flow's times alone having given the calls the callee
 * sequences their kinds make. The
 * later rounds score with a round's parents as context (overlaps, anchors,
 * queue order, content) to mend what the times alone get wrong, and there
 * they moved many children without reshaping a pattern (table1-par-medium's
 * second: 22,378 children, 146 parents reshaped, 80 -> 92 instances wrong).
 * Measured (docs/performance.md, "A first round the refinement leaves
 * alone"): Table 1's traces, multitier and figure 17's refine 0 to 0.07%
 * of their children in the first round, the generated loads 1.1-35% and
 * every kept rig capture 0.5-19%, which run as before; on the 30 maketrace
 * traces 70,806 -> 70,810 instances wrong, figure 17's m42 seeds 1-4 and p
 * 712 -> 702, their top-N misses at 2% at most 1 as before. */
static int settled(struct bb_nest *n, const uint32_t *asg, uint64_t refined)
{
	const struct nest_global *g = &n->solve.glob;
	const uint32_t *prev = n->solve.gpar ? n->solve.gpar : n->solve.gprev;
	if (!n->solve.round)
		return n->solve.settled = first_settles(n, refined);
	if (!prev && !n->gaps.soff)
		return 0;
	size_t moved = 0;
	for (size_t ci = 0; ci < g->nch; ci++) {
		uint32_t p = g->ent[asg[ci]].par, c = g->ch[ci].ridx;
		moved += prev ? prev[c] != p : !nest_seq_had_child(n, p, c);
	}
	double most = NEST_SETTLED * (double)g->nch;
	n->solve.settled = (double)moved <= most ||
	                   (prev && (double)reshaped(g, asg, prev, n->recs.nrec) <= most);
	return n->solve.settled;
}

/* Improves asg (per child of n->solve.glob, its entry; the entries' w the flow's
 * costs) by the sequences of callees each kind of call makes; returns the
 * changes made. */
uint64_t nest_refine(struct bb_nest *n, uint32_t *asg)
{
	struct nest_global *g = &n->solve.glob;
	struct refine r = {0};
	build(n, &r, asg);
	split_kinds(&r);
	r.budget = r.keys + (uint64_t)NEST_REFINE_BUDGET * g->nch;
	uint64_t changed = 0;
	for (int round = 0; round < NEST_REFINE_ROUNDS && !r.spent; round++) {
		count_seqs(&r, 0);
		sib_learn(g, &r, asg);
		r.round0 = ++r.tick; /* new counts: every seen[] before it */
		dirty_init(g, &r);
		if (!round)
			nest_heap_sample(n); /* with the sweeps' bits and ranges */
		size_t c = 0;
		for (int s = 0; s < NEST_REFINE_SWEEPS && !r.spent; s++) {
			size_t cs = sweep(g, &r, asg);
			c += cs;
			if (!cs)
				break;
		}
		changed += c;
		if (!c)
			break; /* the same counts again */
		/* a first round whose changes settle the run (settled): the count
		 * again and a sweep of every child would only confirm it, at a third
		 * of the refinement's CPU (table1-par-medium: 29 changes of 288,756
		 * children, then none; long's output, of Table 1's and figure 17's
		 * traces, the only one it changes, with the same instances wrong) */
		if (first_settles(n, changed))
			break;
	}
	n->st.global_refine_stopped += (uint64_t)r.spent;
	free(r.seen); /* the sweeps' alone */
	free(r.dirty);
	free(r.rlo);
	free(r.rhi);
	r.dirty = NULL; /* cycles' moves mark nothing */
	free(r.dealt);
	n->st.global_cycled += cycles(n, &r, asg);
	if (n->solve.last_round || settled(n, asg, changed)) {
		posterior(n, &r, asg);
		cycles_open(n);
	}
	nest_heap_sample(n); /* the refinement's tables, and the intervals' changes */
	free(r.stok);
	free(r.nstok);
	free(r.once);
	free(r.pidx);
	free(r.kid);
	free(r.par);
	free(r.kind);
	free(r.kidx);
	free(r.cnt);
	return changed;
}

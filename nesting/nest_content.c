/* nest_content.c - evidence beyond timing: shared content tokens (tok=) and propagated context (ctx=) */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "nesting/nest_int.h"

/* bbcap writes on a call the salted hashes of identifiers it saw in it
 * (tok=, a user id, a cache key's parts, an SQL literal) and the hash of a
 * propagated request identity (ctx=, a W3C trace id or an X-Request-ID):
 * docs/trace-format.md. Timing alone leaves a child's parent ambiguous when
 * many calls are open at its node; these say which of them it belongs to.
 *
 * ctx= is taken as exact: when a child carries one and some candidates carry
 * the same, only those stay candidates (a system that propagates a request's
 * identity gives every call of the request the same one). A child whose
 * candidates carry other identities, or none, keeps them all: a system that
 * makes a new identity per hop proves nothing.
 *
 * tok= is evidence, never a requirement. A token on more than a tenth of
 * the calls (a table name, "session") tells no request from another and is
 * left out; so is one that every candidate of a child shares. Each
 * candidate falls in a class: it has tokens and shares k of the remaining
 * ones with the child (CLS_SHARE + k, k up to NEST_CT_K - 1, which stands
 * for that many or more), or there is nothing to compare (CLS_NONE). How
 * much a class is worth is learnt per edge (B, C) by a replay after pass 1
 * (which counted the tokens), as a likelihood ratio: q_k, how often a child
 * shares k tokens with its true parent, over r_k, how often it shares k
 * with a call into B that cannot be its parent (the last call into B that
 * returned before the child did). q comes from children with one candidate
 * and, at load, from the others: a child with O candidates with tokens
 * expects q_k + r_k (O - 1) of them to share k. Real requests repeat
 * identifiers across tiers, and a user id alone is shared by many requests
 * at load where the user, the item and the search term together are not:
 * one class for "shares one or more" took the rig's second app at 64
 * requests in flight to 54% of its search calls under the wrong request
 * (docs/accuracy.md). An edge whose tokens say nothing (sharing no likelier
 * under the parent, or too few samples) scores 1 for every class, so traces
 * without tokens nest as before. */

#define CT_MIN 30.0    /* samples an edge needs before its tokens count */
#define CLS_NONE 0     /* a candidate's class: nothing to compare */
#define CLS_CTX 1      /* ... the same ctx= */
#define CLS_SHARE 2    /* ... CLS_SHARE + k: k tokens shared (k < NEST_CT_K) */
#define LR_MAX 1000.0  /* the most a shared token multiplies a score by */
#define COMMON 0.1     /* share of the calls with tokens a common token is on */
#define COMMON_MIN 20  /* ... and at least this many */

static uint64_t tok_hash(uint64_t t)
{
	t ^= t >> 33;
	t *= 0xff51afd7ed558ccdULL;
	return t ^ (t >> 29);
}

static void tf_grow(struct tokfreq *f)
{
	size_t cap = f->cap ? 2 * f->cap : 1024;
	uint64_t *tok = bb_xmalloc(cap * sizeof(*tok));
	uint32_t *count = bb_xcalloc(cap, sizeof(*count));
	for (size_t i = 0; i < f->cap; i++) {
		if (!f->count[i])
			continue;
		size_t k = tok_hash(f->tok[i]) & (cap - 1);
		while (count[k])
			k = (k + 1) & (cap - 1);
		tok[k] = f->tok[i];
		count[k] = f->count[i];
	}
	free(f->tok);
	free(f->count);
	f->tok = tok;
	f->count = count;
	f->cap = cap;
}

static void tf_add(struct tokfreq *f, uint64_t t)
{
	if (2 * (f->n + 1) > f->cap)
		tf_grow(f);
	size_t k = tok_hash(t) & (f->cap - 1);
	while (f->count[k] && f->tok[k] != t)
		k = (k + 1) & (f->cap - 1);
	if (!f->count[k]) {
		f->tok[k] = t;
		f->n++;
	}
	if (f->count[k] < UINT32_MAX)
		f->count[k]++;
}

/* The calls token t is on. */
static uint32_t tok_calls(const struct bb_nest *n, uint64_t t)
{
	const struct tokfreq *f = &n->content.tf;
	if (!f->cap)
		return 0;
	size_t k = tok_hash(t) & (f->cap - 1);
	while (f->count[k] && f->tok[k] != t)
		k = (k + 1) & (f->cap - 1);
	return f->count[k];
}

/* Whether token t is on too many calls to tell requests apart. */
static int common(const struct bb_nest *n, uint64_t t)
{
	uint32_t c = tok_calls(n, t);
	return c >= COMMON_MIN && (double)c > COMMON * (double)n->content.tf.calls;
}

/* Parses up to 16 hex digits; returns 0 when s is not that. */
static int hex64(const char *s, size_t len, uint64_t *out)
{
	if (len == 0 || len > 16)
		return 0;
	uint64_t v = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned c = (unsigned char)s[i], d;
		if (c - '0' < 10u)
			d = c - '0';
		else if ((c | 0x20) - 'a' < 6u)
			d = (c | 0x20) - 'a' + 10;
		else
			return 0;
		v = v << 4 | d;
	}
	*out = v;
	return 1;
}

static void pool_put(struct bb_nest *n, uint64_t v)
{
	if (n->content.ntpool == n->content.captpool) {
		n->content.captpool = n->content.captpool ? 2 * n->content.captpool : 4096;
		n->content.tpool =
		    bb_xrealloc(n->content.tpool, n->content.captpool * sizeof(*n->content.tpool));
	}
	n->content.tpool[n->content.ntpool++] = v;
}

/* Frees the content evidence (over the memory budget, or at the end). */
void nest_content_free(struct bb_nest *n)
{
	free(n->content.rtok);
	free(n->content.tpool);
	free(n->content.tf.tok);
	free(n->content.tf.count);
	memset(&n->content.tf, 0, sizeof(n->content.tf));
	n->content.rtok = NULL;
	n->content.tpool = NULL;
	n->content.ntpool = n->content.captpool = 0;
}

/* Pass 1: keeps the tok= and ctx= of the CALL record ridx (pool entry:
 * header ntok | has_ctx << 8, then the ctx, then the tokens). Bad values are
 * counted and left out. */
void nest_content_record(struct bb_nest *n, const struct bb_rec *rec, uint32_t ridx)
{
	if (!n->cfg.p.content || ridx == BB_NONE || !n->phase.recording)
		return;
	size_t tl = 0, cl = 0;
	const char *t = bb_rec_attr(rec, "tok", &tl), *x = bb_rec_attr(rec, "ctx", &cl);
	if (!t && !x)
		return;
	uint64_t tok[NEST_TOK_MAX], ctx = 0;
	uint32_t ntok = 0, hasctx = 0;
	if (x) {
		if (hex64(x, cl, &ctx))
			hasctx = 1;
		else
			n->st.bad_content++;
	}
	for (size_t i = 0; t && i < tl;) {
		size_t j = i;
		while (j < tl && t[j] != ',')
			j++;
		uint64_t v;
		if (!hex64(t + i, j - i, &v))
			n->st.bad_content++;
		else if (ntok < NEST_TOK_MAX)
			tok[ntok++] = v;
		i = j + 1;
	}
	if (!ntok && !hasctx)
		return;
	size_t need = (n->content.ntpool + 2 + ntok) * sizeof(*n->content.tpool) +
	              n->recs.caprec * sizeof(*n->content.rtok) +
	              n->recs.caprec * sizeof(*n->recs.rec) + n->content.tf.cap * 12;
	if (need > n->cfg.p.memory_bytes) {
		n->content.full = 1;
		nest_content_free(n);
		return;
	}
	if (n->content.full)
		return;
	if (!n->content.rtok) {
		n->content.rtok = bb_xmalloc(n->recs.caprec * sizeof(*n->content.rtok));
		for (size_t i = 0; i < n->recs.caprec; i++)
			n->content.rtok[i] = BB_NONE;
	}
	n->content.rtok[ridx] = (uint32_t)n->content.ntpool;
	pool_put(n, ntok | hasctx << 8);
	if (hasctx)
		pool_put(n, ctx);
	for (uint32_t i = 0; i < ntok; i++) {
		pool_put(n, tok[i]);
		tf_add(&n->content.tf, tok[i]);
	}
	n->content.tf.calls += ntok > 0;
	n->st.content_calls++;
}

/* The tokens of CALL record ridx (BB_NONE: none): their count (0 when none),
 * *ctx and *hasctx. */
static const uint64_t *rec_tokens(const struct bb_nest *n, uint32_t ridx, uint32_t *ntok,
                                  uint64_t *ctx, int *hasctx)
{
	*ntok = 0;
	*hasctx = 0;
	if (!n->content.rtok || ridx == BB_NONE || ridx >= n->recs.nrec ||
	    n->content.rtok[ridx] == BB_NONE)
		return NULL;
	const uint64_t *e = &n->content.tpool[n->content.rtok[ridx]];
	*ntok = (uint32_t)(e[0] & 0xff);
	*hasctx = (int)(e[0] >> 8 & 1);
	*ctx = *hasctx ? e[1] : 0;
	return e + 1 + *hasctx;
}

/* The tokens of call c (rec_tokens). */
static const uint64_t *tokens(const struct bb_nest *n, const struct call *c, uint32_t *ntok,
                              uint64_t *ctx, int *hasctx)
{
	return rec_tokens(n, c->ridx, ntok, ctx, hasctx);
}

/* The tokens of CALL record ridx that are on at most max_calls calls, up to
 * max of them in out: how many (a request's own identifiers, for the
 * refinement's siblings, nest_refine.c). */
uint32_t nest_content_ids(const struct bb_nest *n, uint32_t ridx, uint32_t max_calls,
                          uint64_t *out, uint32_t max)
{
	uint32_t nt, k = 0;
	uint64_t ctx;
	int hasctx;
	const uint64_t *t = rec_tokens(n, ridx, &nt, &ctx, &hasctx);
	for (uint32_t i = 0; i < nt && k < max; i++)
		if (tok_calls(n, t[i]) <= max_calls)
			out[k++] = t[i];
	return k;
}

static int has_tok(const uint64_t *t, uint32_t nt, uint64_t v)
{
	for (uint32_t i = 0; i < nt; i++)
		if (t[i] == v)
			return 1;
	return 0;
}

/* The number of tokens of p among t[0..nt), up to NEST_CT_K - 1. */
static uint32_t shared(const uint64_t *p, uint32_t np, const uint64_t *t, uint32_t nt)
{
	uint32_t k = 0;
	for (uint32_t j = 0; j < nt && k < NEST_CT_K - 1; j++)
		k += has_tok(p, np, t[j]);
	return k;
}

/* Keeps the candidates of child c whose ctx= is the child's (CLS_CTX), in
 * call order: returns how many, 0 when none. */
static size_t keep_ctx(struct bb_nest *n, uint64_t ctx, struct call **cand, size_t nc)
{
	uint32_t pt;
	uint64_t pctx;
	int phc;
	size_t k = 0;
	for (size_t i = 0; i < nc; i++) {
		tokens(n, cand[i], &pt, &pctx, &phc);
		if (phc && pctx == ctx) {
			struct call *s = cand[k];
			cand[k] = cand[i];
			cand[i] = s;
			n->calls.ccls[k++] = CLS_CTX;
		}
	}
	/* the kept ones back in call order (the earliest wins ties) */
	for (size_t i = 1; i < k; i++)
		for (size_t j = i; j > 0 && cand[j]->seq < cand[j - 1]->seq; j--) {
			struct call *s = cand[j];
			cand[j] = cand[j - 1];
			cand[j - 1] = s;
		}
	return k;
}

/* Sets n->calls.ccls[i] for each candidate of child c (the classes above).
 * With ctx matches only those stay: returns the new count, the kept
 * candidates first in n->calls.cand. Marks c->cexact then. */
size_t nest_content_classes(struct bb_nest *n, struct call *c, struct call **cand, size_t nc)
{
	c->cexact = 0;
	if (n->calls.capccls < nc) {
		n->calls.capccls = n->calls.capcand > nc ? n->calls.capcand : nc;
		n->calls.ccls = bb_xrealloc(n->calls.ccls, n->calls.capccls);
	}
	if (nc) /* ccls is still NULL when the first child has no candidate */
		memset(n->calls.ccls, CLS_NONE, nc);
	if (!n->content.rtok || !nc || !(n->phase.pass == 1 || n->phase.replay))
		return nc;
	uint32_t nt, pt;
	uint64_t ctx, pctx;
	int hc, phc;
	const uint64_t *t = tokens(n, c, &nt, &ctx, &hc);
	if (!t)
		return nc;
	if (hc) {
		size_t k = keep_ctx(n, ctx, cand, nc);
		if (k) {
			c->cexact = 1;
			n->st.content_exact += n->phase.pass == 1;
			return k;
		}
	}
	if (!nt || n->phase.pass == 1)
		return nc; /* tokens count from the content stage on (common() needs pass 1) */
	/* a token every candidate shares says nothing about which one; a call
	 * in flight when the capture began (nest_recs_early) has tokens no one
	 * saw, which count neither way */
	size_t known = 0;
	for (size_t i = 0; i < nc; i++)
		known += !nest_rec_early(n, cand[i]->ridx);
	uint64_t disc[NEST_TOK_MAX];
	uint32_t nd = 0;
	for (uint32_t j = 0; j < nt; j++) {
		if (common(n, t[j]))
			continue;
		size_t m = 0;
		for (size_t i = 0; i < nc; i++) {
			const uint64_t *p = tokens(n, cand[i], &pt, &pctx, &phc);
			m += p && has_tok(p, pt, t[j]);
		}
		if (known <= 1 || m < known)
			disc[nd++] = t[j];
	}
	for (size_t i = 0; i < nc; i++) {
		const uint64_t *p = tokens(n, cand[i], &pt, &pctx, &phc);
		if (p && pt)
			n->calls.ccls[i] = (uint8_t)(CLS_SHARE + shared(p, pt, disc, nd));
		else if (nd && nest_rec_early(n, cand[i]->ridx))
			n->calls.ccls[i] = CLS_SHARE; /* unseen: no gain from the child's tokens */
	}
	return nc;
}

/* The content stage: what child c, whose classes are set, says about its edge's tokens. */
void nest_content_learn(struct bb_nest *n, struct call *c, size_t nc)
{
	uint32_t nt, lt;
	uint64_t ctx, lctx;
	int hc, lhc;
	const uint64_t *t = tokens(n, c, &nt, &ctx, &hc);
	if (!t || !nt || c->cexact)
		return;
	struct pairc *e = nest_pairc(n, c->from, c->to, 1);
	uint32_t last = c->from < n->nodes.ninto ? n->nodes.into[c->from].clast : 0;
	if (last) {
		struct call tmp;
		tmp.ridx = last - 1;
		const uint64_t *l = tokens(n, &tmp, &lt, &lctx, &lhc);
		if (l && lt) {
			uint64_t disc[NEST_TOK_MAX];
			uint32_t nd = 0;
			for (uint32_t j = 0; j < nt; j++)
				if (!common(n, t[j]))
					disc[nd++] = t[j];
			e->ct_rand++;
			e->ct_rand_k[shared(l, lt, disc, nd)]++;
		}
	}
	if (nc == 1) {
		if (n->calls.ccls[0] >= CLS_SHARE) {
			e->ct_sure++;
			e->ct_sure_k[n->calls.ccls[0] - CLS_SHARE]++;
		}
		return;
	}
	uint32_t o = 0;
	for (size_t i = 0; i < nc; i++)
		o += n->calls.ccls[i] >= CLS_SHARE;
	if (!o)
		return;
	e->ct_amb++;
	e->ct_amb_other += o - 1;
	for (size_t i = 0; i < nc; i++)
		if (n->calls.ccls[i] >= CLS_SHARE)
			e->ct_amb_k[n->calls.ccls[i] - CLS_SHARE]++;
}

/* The content stage: call c into its node has returned (a non-candidate for later
 * children there). */
void nest_content_closed(struct bb_nest *n, const struct call *c)
{
	if (n->content.rtok && c->ridx != BB_NONE && c->to < n->nodes.ninto &&
	    n->content.rtok[c->ridx] != BB_NONE)
		n->nodes.into[c->to].clast = c->ridx + 1;
}

/* Edge e's ratios lr[k] = q_k / r_k (above), or all 1 when its tokens say
 * nothing; returns whether they say something. */
static int edge_ratios(struct pairc *e)
{
	for (int k = 0; k < NEST_CT_K; k++)
		e->lr[k] = 1;
	if (e->ct_rand < CT_MIN || e->ct_sure + e->ct_amb < CT_MIN)
		return 0;
	double q[NEST_CT_K], r[NEST_CT_K], qsum = 0, qshare = 0, rshare = 0;
	for (int k = 0; k < NEST_CT_K; k++) {
		r[k] = ((double)e->ct_rand_k[k] + 0.5) / ((double)e->ct_rand + 0.5 * NEST_CT_K);
		double qa = 0;
		if (e->ct_amb) {
			qa = ((double)e->ct_amb_k[k] - r[k] * (double)e->ct_amb_other) /
			     (double)e->ct_amb;
			qa = qa < 0 ? 0 : qa > 1 ? 1 : qa;
		}
		q[k] = ((double)e->ct_sure_k[k] + qa * (double)e->ct_amb) /
		       (double)(e->ct_sure + e->ct_amb);
		qsum += q[k];
	}
	for (int k = 0; k < NEST_CT_K; k++) {
		q[k] = qsum > 0 ? q[k] / qsum : 0;
		if (k) {
			qshare += q[k];
			rshare += r[k];
		}
	}
	if (qshare <= rshare)
		return 0; /* sharing is no likelier under the parent */
	for (int k = 0; k < NEST_CT_K; k++) {
		double lr = q[k] / r[k];
		lr = lr > LR_MAX ? LR_MAX : lr < 1 / LR_MAX ? 1 / LR_MAX : lr;
		/* sharing more is never less likely under the parent (the samples of
		 * the rarer classes are few) */
		e->lr[k] = k > 1 && lr < e->lr[k - 1] ? e->lr[k - 1] : lr;
	}
	return 1;
}

/* After the content stage (a replay of the kept messages that learns what
 * each edge's tokens are worth, nest_content_learn): the ratios. */
void nest_content_finish(struct bb_nest *n)
{
	for (size_t i = 0; i < n->nodes.ninto; i++)
		n->nodes.into[i].clast = 0;
	for (size_t i = 0; i < n->board.pccap; i++) {
		struct pairc *e = &n->board.pc[i];
		if (e->a != UINT32_MAX && edge_ratios(e))
			n->st.content_edges++;
	}
}

/* --global, before a round after the first: each edge's ratios learnt
 * again from the round before's parents (n->solve.gpar): q_k from the
 * classes of the children's parents, r_k from those of their other
 * candidates. The content stage's q_k comes from the ambiguous children as
 * a difference of two large counts, which at many requests in flight is
 * within its own noise and was clipped at 0 (a ratio of 1/LR_MAX) on the
 * wrong class as often as on the right one: the rig's second app, 64 in
 * flight, scored pg calls sharing one token with their parent 1/LR_MAX on a
 * capture begun a fifth into the run, 47.9 on the whole one
 * (docs/accuracy.md, "Requests in flight when the capture began"). The
 * assignment's parents are right for all but a few children, which gives
 * q_k directly. */
void nest_content_relearn(struct bb_nest *n)
{
	const struct nest_global *g = &n->solve.glob;
	const uint32_t *par = n->solve.gpar;
	if (!n->content.rtok || !g->cls || !par)
		return;
	for (size_t i = 0; i < n->board.pccap; i++)
		nest_pairc_ct_clear(&n->board.pc[i]);
	for (size_t ci = 0; ci < g->nch; ci++) {
		const struct nest_gchild *x = &g->ch[ci];
		uint32_t p = par[x->ridx];
		if (p == BB_NONE || (g->cex && g->cex[ci]))
			continue;
		struct pairc *e = nest_pairc(n, n->recs.rec[x->ridx].op_from & REC_NODE_MAX, x->c, 0);
		if (!e)
			continue;
		for (uint32_t j = 0; j < x->nc; j++) {
			uint8_t k = g->cls[x->off + j];
			if (k < CLS_SHARE)
				continue;
			if (g->ent[x->off + j].par == p) {
				e->ct_sure++;
				e->ct_sure_k[k - CLS_SHARE]++;
			} else {
				e->ct_rand++;
				e->ct_rand_k[k - CLS_SHARE]++;
			}
		}
	}
	for (size_t i = 0; i < n->board.pccap; i++)
		if (n->board.pc[i].a != UINT32_MAX)
			edge_ratios(&n->board.pc[i]);
}

/* The factor candidate i (of n->calls.cand) gets as child c's parent. */
double nest_content_factor(struct bb_nest *n, const struct call *c, size_t i)
{
	if (!n->content.rtok || n->phase.pass != 2)
		return 1;
	uint8_t k = n->calls.ccls[i];
	if (k < CLS_SHARE)
		return 1;
	struct pairc *e = nest_pairc(n, c->from, c->to, 0);
	return e ? e->lr[k - CLS_SHARE] : 1;
}

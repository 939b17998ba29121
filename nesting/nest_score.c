/* nest_score.c - ScoreNestings and FindNestedPairs: the scoreboard, smoothing, penalties */
/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nesting/nest_int.h"

/* Pass 1, --reassign, call c has returned with these candidate parents. A
 * child whose only candidate is par is surely par's; a second sure child
 * into the same callee shows that a call into par's node can have two
 * children into it (twice). When a call returns that was never a candidate
 * of a child with other candidates, all its children were sure: each callee
 * it called once counts as seen once (once). See conflict. */
void nest_sure_child(struct bb_nest *n, struct call *c, struct call **cand, size_t nc)
{
	if (nc == 1) {
		struct call *par = cand[0];
		uint32_t k = 0, m = par->nsure < 4 ? par->nsure : 4;
		while (k < m && par->sure_to[k] != c->to)
			k++;
		if (k < m)
			nest_pairc(n, c->from, c->to, 1)->twice++;
		else if (par->nsure < 4)
			par->sure_to[par->nsure] = c->to;
		/* two sure children of one call: did they overlap? */
		struct node_list *pl = par->to < n->nodes.ninto ? &n->nodes.into[par->to] : NULL;
		for (uint32_t i = 0; pl && i < m; i++) {
			pl->pobs++;
			pl->povl += par->sure_call[i] < c->ret_ts && c->call_ts < par->sure_ret[i];
		}
		if (par->nsure < 4) {
			par->sure_call[par->nsure] = c->call_ts;
			par->sure_ret[par->nsure] = c->ret_ts;
		}
		par->nsure++;
	} else {
		for (size_t i = 0; i < nc; i++)
			cand[i]->ambiguous = 1;
	}
	if (c->ambiguous || c->nsure > 4 || c->nsure == 0)
		return;
	struct node_list *l = &n->nodes.into[c->to];
	if (!l->nobs++ || c->nsure < l->smin)
		l->smin = c->nsure;
	if (c->nsure > l->smax)
		l->smax = c->nsure;
	for (uint32_t i = 0; i < c->nsure; i++) {
		uint32_t same = 0;
		for (uint32_t j = 0; j < c->nsure; j++)
			same += c->sure_to[j] == c->sure_to[i];
		if (same == 1)
			nest_pairc(n, c->to, c->sure_to[i], 1)->once++;
	}
}

/* After pass 1: each histogram (A, B, C) is scaled by 1 / (A->B call pairs).
 * A histogram holds about N(A->B) x P(C | A->B) x f(delay), plus the wrong
 * candidates' share, which also grows with N(A->B); a candidate is one A->B
 * call, so its chance of being the parent is P(C | A->B) x f(delay), the
 * histogram over N(A->B). Unscaled, a parent edge that is a little more
 * common (client1 -> WS2 against client4 -> WS2) wins every close call, and
 * at high parallelism that rich-get-richer drift moves whole percents of
 * the instances from rarer true patterns to commoner ones, which reorders
 * near-tied patterns (figure 17). Only with --scoreboard caller; the
 * per-edge scoreboard has one histogram for all candidates of a child. */
void nest_triple_norms(struct bb_nest *n)
{
	for (size_t i = 0; i < n->board.ntri; i++) {
		struct triple *t = &n->board.tri[i];
		struct pairc *c =
		    n->cfg.p.scoreboard == BB_NEST_SB_CALLER ? nest_pairc(n, t->a, t->b, 0) : NULL;
		t->norm = c && c->n ? 1.0 / (double)c->n : 1.0;
	}
}

/* The per-edge histogram's first key for parent par: NEST_ANY, or with host
 * aliases, when par is a call into a service on child's caller rather than
 * into the caller itself, that service (with the top bit): the delays from
 * nginx's calls and from the app's, both on one host, are not one
 * distribution. */
static uint32_t pool_key(const struct bb_nest *n, const struct call *par, const struct call *child)
{
	return n->cfg.alias && par->to != child->from ? par->to | UINT32_C(1) << 31 : NEST_ANY;
}

/* Each candidate parent gets 1/|candidates| at the delay between its call and
 * the child's (figure 4, lines 13-16), in the histogram of (its caller, B, C),
 * or with the per-edge scoreboard in the one histogram of (B, C). */
void nest_score_child(struct bb_nest *n, struct call *child, struct call **cand, size_t nc)
{
	double w = 1.0 / (double)nc;
	struct triple *pool = NULL;
	if (n->cfg.p.scoreboard == BB_NEST_SB_EDGE)
		pool = nest_triple(n, NEST_ANY, child->from, child->to, 1);
	for (size_t i = 0; i < nc; i++) {
		uint32_t a = pool_key(n, cand[i], child);
		struct triple *t = !pool                ? nest_triple(n, cand[i]->from, child->from, child->to, 1)
		                   : a == NEST_ANY ? pool
		                                   : nest_triple(n, a, child->from, child->to, 1);
		*nest_tri_at(n, t, nest_sb_bin(n, nest_sub(child->call_ts, cand[i]->call_ts))) += w;
	}
}

/* Convolves every histogram with a Gaussian of sigma bins (cut at 4 sigma,
 * weights summing to 1), which widens peaks that clock skew has smeared. */
void nest_smooth(struct bb_nest *n)
{
	double sigma = n->cfg.p.smooth_sigma;
	if (sigma <= 0 || n->board.ntri == 0)
		return;
	int r = (int)ceil(4 * sigma);
	double *k = bb_xmalloc((size_t)(2 * r + 1) * sizeof(*k)), sum = 0;
	for (int i = -r; i <= r; i++)
		sum += k[i + r] = exp(-0.5 * (double)i * i / (sigma * sigma));
	for (int i = 0; i <= 2 * r; i++)
		k[i] /= sum;
	int nb = (int)n->cfg.bins.n;
	double *out = bb_xmalloc((size_t)nb * sizeof(*out));
	for (size_t t = 0; t < 2 * n->board.ntri; t++) {
		if (!n->board.tri[t / 2].h || t % 2 >= nest_tri_halves(&n->board.tri[t / 2]))
			continue; /* a sequence histogram no one reads (nest_seq.c), or a
			             second half not made (all 0) */
		double *h = n->board.tri[t / 2].h + (t % 2) * (size_t)nb; /* each half alone */
		for (int j = 0; j < nb; j++) {
			double v = 0;
			int lo = j - r < 0 ? 0 : j - r, hi = j + r >= nb ? nb - 1 : j + r;
			for (int i = lo; i <= hi; i++)
				v += h[i] * k[j - i + r];
			out[j] = v;
		}
		memcpy(h, out, (size_t)nb * sizeof(*h));
	}
	free(out);
	free(k);
}

/* The paper multiplies by c^-e, which is undefined for c = 0. Here c counts
 * the candidate child too: the factor is (c + 1)^-e for c children already
 * there, so a parent with none (c = 0) is not penalised (factor 1) and one
 * with one such child already gets 2^-e. Counting only the children already
 * there (c^-e, with 0 meaning 1) leaves a second child unpenalised and, on
 * the multi-tier trace, triples the false instances (docs/nesting.md). */
static double penalty(uint32_t c, double e)
{
	return c == 0 || e == 0 ? 1.0 : pow((double)c + 1, -e);
}

/* penalty() from a table for the small counts that are all one meets. */
static double penalty_of(const struct bb_nest *n, int which, uint32_t c, double e)
{
	return c < NEST_PEN_TAB ? n->board.pen[which][c] : penalty(c, e);
}

void nest_penalty_tables(struct bb_nest *n)
{
	const double e[3] = {n->cfg.p.penalty_x, n->cfg.p.penalty_y, n->cfg.p.penalty_z};
	for (int w = 0; w < 3; w++)
		for (uint32_t c = 0; c < NEST_PEN_TAB; c++)
			n->board.pen[w][c] = penalty(c, e[w]);
}

/* Per-bin factor turning the scoreboard's mass per bin into a density (mass
 * per unit of delay), relative to the first log bin. With log bins a bin at
 * delay d is d*(base-1) wide, so mass per bin favours long delays: the
 * spread-out mass of wrong parents at long delays can outweigh the true
 * peak. --score mass keeps the paper's raw bin values. */
void nest_bin_weights(struct bb_nest *n)
{
	n->board.binw = bb_xmalloc(2 * (size_t)n->cfg.bins.n * sizeof(*n->board.binw));
	int64_t lo1, hi1;
	nest_bin_range(&n->cfg.bins, 1, &lo1, &hi1);
	double w1 = (double)(hi1 - lo1);
	for (uint32_t k = 0; k < n->cfg.bins.n; k++) {
		int64_t lo, hi;
		nest_bin_range(&n->cfg.bins, k, &lo, &hi);
		double w = k == 0 ? (double)n->cfg.bins.min_ns
		           : k == n->cfg.bins.n - 1
		               ? (double)n->cfg.bins.max_ns * (n->cfg.bins.base - 1)
		               : (double)(hi - lo);
		n->board.binw[k] = n->board.binw[n->cfg.bins.n + k] =
		    n->cfg.p.score_density ? w1 / (w > 0 ? w : 1) : 1.0;
	}
}

static double return_factor(struct bb_nest *n, const struct call *par, const struct call *child,
                            struct nest_edge_look *x);

/* t's score (histogram times bin weight) at the delay off + D of a call in
 * flight when the capture began (nest_pairs.c, nest_recs_early), D its whole
 * time, unknown but at least seen (from the capture's start to its return):
 * the mean over the times the calls into its node took (nest_durations)
 * from seen on, each as likely as it was. A request whose calls come early
 * in its time (the rig's second app makes them in its first 6 ms and
 * returns 300 ms after) is then rarely given a call made after the capture
 * began. Without the times, at D = seen. */
static double cut_score(struct bb_nest *n, const struct triple *t, uint32_t node, int64_t seen,
                        int64_t off)
{
	const float *h = node < n->nodes.ninto ? n->nodes.into[node].dur : NULL;
	if (!h) {
		uint32_t b = nest_sb_bin(n, nest_sub(off, -seen));
		return nest_tri_get(n, t, b) * n->board.binw[b];
	}
	double sum = 0, wsum = 0;
	for (uint32_t k = nest_bin(&n->cfg.bins, seen); k < n->cfg.bins.n; k++) {
		if (h[k] == 0)
			continue;
		int64_t lo, hi;
		nest_bin_range(&n->cfg.bins, k, &lo, &hi);
		int64_t d = k == n->cfg.bins.n - 1 ? lo : lo + (hi - lo) / 2;
		d = d > seen ? d : seen;
		uint32_t b = nest_sb_bin(n, nest_sub(off, -d));
		sum += h[k] * nest_tri_get(n, t, b) * n->board.binw[b];
		wsum += h[k];
	}
	return wsum > 0 ? sum / wsum : 0;
}

void nest_edge_look(struct bb_nest *n, const struct call *child, struct nest_edge_look *x)
{
	x->pool = n->cfg.p.scoreboard == BB_NEST_SB_EDGE
	              ? nest_triple(n, NEST_ANY, child->from, child->to, 0)
	              : NULL;
	x->rpool = NULL;
	x->rlooked = 0;
	x->seq = n->gaps.ready && nest_seq_edge(n, child);
}

/* The score of par as child's parent: raw score from the scoreboard (times
 * the return-side factor when there are return-side histograms), scaled by
 * the overlapping-, same- and generic-child penalties over the children
 * already given to par, leaving out `skip` (a child about to move). x:
 * child's edge looked up (nest_edge_look). */
static double parent_score(struct bb_nest *n, struct call *par, const struct call *child,
                           const struct call *skip, struct nest_edge_look *x)
{
	const struct bb_nest_params *p = &n->cfg.p;
	uint32_t a = pool_key(n, par, child);
	struct triple *t = p->scoreboard != BB_NEST_SB_EDGE
	                       ? nest_triple(n, par->from, child->from, child->to, 0)
	                   : a == NEST_ANY ? x->pool
	                                   : nest_triple(n, a, child->from, child->to, 0);
	double s;
	if (nest_rec_early(n, par->ridx)) {
		/* in flight when the capture began: called before its first
		 * message, at a time cut_score weighs */
		int64_t end = par->end_ts == BB_NO_TIME ? par->call_ts : par->end_ts;
		s = t ? cut_score(n, t, par->to, nest_sub(end, par->call_ts),
		                  nest_sub(child->call_ts, end)) * t->norm
		      : 0;
	} else if (x->seq) {
		s = nest_seq_score(n, par, child);
	} else {
		uint32_t bk = nest_sb_bin(n, nest_sub(child->call_ts, par->call_ts));
		s = t ? nest_tri_get(n, t, bk) * n->board.binw[bk] * t->norm : 0;
	}
	if (s > 0 && n->board.rsb.n)
		s *= return_factor(n, par, child, x);
	int seq_node = !(par->to < n->nodes.ninto && n->nodes.into[par->to].parallel);
	if (s > 0 && n->phase.gstage && n->gaps.soff && seq_node)
		s *= penalty_of(n, 0, nest_seq_overlaps(n, par, child), p->penalty_x);
	if (s > 0 && par->nchildren) {
		uint32_t overlap = 0, same = 0, k = 0;
		for (struct call *ch = par->child; ch; ch = ch->sibling) {
			if (ch == skip)
				continue;
			k++;
			overlap += ch->call_ts < child->ret_ts && child->call_ts < ch->ret_ts;
			same += ch->to == child->to;
		}
		s *= (seq_node ? penalty_of(n, 0, overlap, p->penalty_x) : 1) *
		     penalty_of(n, 1, same, p->penalty_y) *
		     penalty_of(n, 2, k, p->penalty_z);
	}
	return s;
}

/* The score of par as child's parent before penalties (par has no children
 * yet: --global collects before any are given). */
double nest_base_score(struct bb_nest *n, struct call *par, const struct call *child,
                       struct nest_edge_look *x)
{
	return parent_score(n, par, child, NULL, x);
}

/* --reassign: whether a call into b has at most one child into c, as far
 * as pass 1's counts tell: there are no more b->c call pairs than call
 * pairs into b (a thousandth more is allowed for unmatched calls), and no
 * call into b was seen with two sure children into c (nest_sure_child).
 * The counts alone cannot tell "once each call" from "twice every other
 * call". The calls into b seen with all their children sure (nobs) tell
 * them apart once there are enough of them: under "once", a share
 * N(b->c) / N(into b) of them has one child into c, so when at least
 * NEST_ONCE_EXPECT of them should have and none did, "once" is refuted.
 * Fewer than that prove nothing either way and the counts decide: a
 * rule that gave up on "once" whenever one sure call lacked a c child
 * let a call into redis take two redis children on a real capture where 2
 * of 2,744 calls were sure (issue 14). Where no child has a single
 * candidate (high parallelism) the counts decide alone and "twice every
 * other call" is taken for "once" (docs/nesting.md measures what that
 * costs).
 * Two different callees are never taken to exclude each other, for the same
 * reason ("one of the two" or "each half the time"), and on the multi-tier
 * traces that pair constraint made instances worse (docs/nesting.md). */
static int conflict(struct bb_nest *n, uint32_t b, uint32_t x, uint32_t y)
{
	if (x != y)
		return 0;
	uint64_t into = b < n->nodes.ninto ? n->nodes.into[b].ncalls : 0;
	struct pairc *e = nest_pairc(n, b, x, 0);
	if (!into || !e || e->n > into + into / 1000 || e->twice != 0)
		return 0;
	double expect = (double)n->nodes.into[b].nobs * (double)e->n / (double)into;
	return e->once > 0 || expect < NEST_ONCE_EXPECT;
}

/* After pass 1: a node whose calls' sure children (the only candidate
 * parent was that call), taken two by two, often overlapped in time
 * (NEST_PAR_SHARE of at least NEST_PAR_MIN pairs) makes calls in parallel, and the overlap penalty, which assumes one call
 * at a time, is not applied to its calls (the rig's app servers call redis
 * and PostgreSQL at once; --penalty 0,.. turned it off for every node). */
void nest_parallel_nodes(struct bb_nest *n)
{
	for (size_t i = 0; i < n->nodes.ninto; i++) {
		struct node_list *l = &n->nodes.into[i];
		l->parallel = n->cfg.p.learn_parallel && l->pobs >= NEST_PAR_MIN &&
		              (double)l->povl >= NEST_PAR_SHARE * (double)l->pobs;
		n->st.parallel_nodes += l->parallel != 0;
	}
}

int nest_once(struct bb_nest *n, uint32_t b, uint32_t c)
{
	return conflict(n, b, c, c);
}

int nest_once_hard(struct bb_nest *n, uint32_t b, uint32_t c)
{
	if (!nest_once(n, b, c))
		return 0;
	struct pairc *e = nest_pairc(n, b, c, 0);
	uint64_t into = b < n->nodes.ninto ? n->nodes.into[b].ncalls : 0;
	return e && into && 2 * e->n >= into;
}

int nest_once_of(struct bb_nest *n, struct nest_once_memo *m, uint32_t b, uint32_t c)
{
	size_t k = (((uint32_t)b << 16 ^ c) * UINT32_C(2654435761)) >> 22 & (NEST_ONCE_MEMO - 1);
	if (m->v[k] && m->b[k] == b && m->c[k] == c)
		return m->v[k] - 1;
	int r = nest_once(n, b, c) ? 1 + nest_once_hard(n, b, c) : 0;
	m->b[k] = b;
	m->c[k] = c;
	m->v[k] = (uint8_t)(r + 1);
	return r;
}

/* The child of par (leaving out skip) that child conflicts with: the only
 * one, NULL when none; *many set when more than one. */
static struct call *conflicting(struct bb_nest *n, const struct call *par,
                                const struct call *skip, const struct call *child, int *many)
{
	struct call *hit = NULL;
	*many = 0;
	for (struct call *ch = par->child; ch; ch = ch->sibling) {
		if (ch == skip || !conflict(n, child->from, ch->to, child->to))
			continue;
		if (hit) {
			*many = 1;
			return hit;
		}
		hit = ch;
	}
	return hit;
}

/* Whether c is a or hangs under it (a node that calls itself offers calls
 * under a child as candidates; moving the child there would make a cycle). */
static int under(const struct call *c, const struct call *a)
{
	for (; c; c = c->parent)
		if (c == a)
			return 1;
	return 0;
}

/* --reassign, for a candidate par that already has a child (out) that child
 * conflicts with: the best candidate (*to) to move it to, one that began
 * before it, was open at its return and has no child it conflicts with.
 * Returns score(out, to) / score(out, par), 0 when no move. */
static double make_room(struct bb_nest *n, struct call *par, struct call *out,
                        struct call **cand, size_t nc, struct call **to)
{
	int64_t skew = n->cfg.p.skew_window_ns;
	struct nest_edge_look x;
	nest_edge_look(n, out, &x);
	double here = parent_score(n, par, out, out, &x), best = 0;
	if (here <= 0)
		return 0;
	for (size_t i = 0; i < nc; i++) {
		struct call *q = cand[i];
		int many;
		if (q == par || q->call_ts > out->call_ts + skew ||
		    (!q->open && q->ret_ts + skew < out->ret_ts) ||
		    conflicting(n, q, NULL, out, &many) || under(q, out))
			continue;
		double r = parent_score(n, q, out, NULL, &x) / here;
		if (r > best) {
			best = r;
			*to = q;
		}
	}
	return best;
}

static void detach(struct call *par, struct call *child)
{
	struct call **pp = &par->child;
	while (*pp != child)
		pp = &(*pp)->sibling;
	*pp = child->sibling;
	child->sibling = NULL;
	child->parent = NULL;
	par->nchildren--;
}

/* FindNestedPairs for one child: each candidate's parent_score; the highest
 * wins, ties go to the earliest. With --reassign, a candidate that already
 * has a child the new one conflicts with (a second child into a callee that
 * pass 1 saw at most once per call) scores its own score times the best
 * make_room ratio (a millionth of it when no move is possible, so a child
 * still finds a parent when all are taken), and winning it moves that child
 * out: a one-step augmenting path in the assignment of children to parents,
 * within the calls open at the child's return (memory stays bounded). */
struct call *nest_choose_parent(struct bb_nest *n, struct call *child, struct call **cand,
                                size_t nc)
{
	struct call *best = NULL, *bout = NULL, *bto = NULL;
	double best_score = -1, sum = 0;
	struct nest_edge_look x;
	nest_edge_look(n, child, &x);
	if (n->calls.capcscore < nc) {
		n->calls.capcscore = n->calls.capcand > nc ? n->calls.capcand : nc;
		n->calls.cscore =
		    bb_xrealloc(n->calls.cscore, n->calls.capcscore * sizeof(*n->calls.cscore));
	}
	for (size_t i = 0; i < nc; i++) {
		struct call *par = cand[i], *out = NULL, *to = NULL;
		double s = parent_score(n, par, child, NULL, &x) * nest_content_factor(n, child, i);
		n->calls.cscore[i] = s;
		int many = 0;
		if (s > 0 && n->cfg.p.reassign && (out = conflicting(n, par, NULL, child, &many))) {
			double r = many ? 0 : make_room(n, par, out, cand, nc, &to);
			s *= r > 0 ? r : 1e-6;
			if (r <= 0)
				out = to = NULL;
		}
		if (s > 0)
			sum += s;
		if (s > best_score) {
			best_score = s;
			best = par;
			bout = out;
			bto = to;
		}
	}
	if (nc > 1 && !child->cexact && !(best_score > 0 && best_score >= NEST_AMB_SHARE * sum)) {
		child->pamb = 1;
		n->st.ambiguous++;
		/* the others that could be its parent may lack a child of theirs */
		for (size_t i = 0; i < nc; i++)
			if (cand[i] != best && n->calls.cscore[i] >= (1 - NEST_AMB_SHARE) * sum)
				cand[i]->palt = 1;
	}
	if (bout) {
		detach(best, bout);
		nest_attach(bto, bout);
		for (struct call *c = bto; c && c->max_ret < bout->max_ret; c = c->parent)
			c->max_ret = bout->max_ret;
		n->st.reassigned++;
	}
	return best;
}

double bb_nest_score(const struct bb_nest *n, const char *a, const char *b, const char *c,
                     int64_t delta_ns)
{
	uint32_t ia = bb_intern_find(n->nodes.names, a, strlen(a));
	uint32_t ib = bb_intern_find(n->nodes.names, b, strlen(b));
	uint32_t ic = bb_intern_find(n->nodes.names, c, strlen(c));
	if (ia == BB_NONE || ib == BB_NONE || ic == BB_NONE)
		return 0;
	if (n->cfg.p.scoreboard == BB_NEST_SB_EDGE)
		ia = NEST_ANY;
	struct triple *t = nest_triple((struct bb_nest *)(uintptr_t)n, ia, ib, ic, 0);
	return t ? nest_tri_get(n, t, nest_sb_bin(n, delta_ns)) : 0;
}

/* ---- the return-side score (--return-score) ------------------------------------ */

/* The return side of figure 4's lines 13-16: each candidate parent gets
 * 1/|candidates| at the delay from the child's return to the candidate's own
 * return, which the replay knows (pass 1 matched every return). A caller
 * returns soon after its last child does, so for a last child that delay is
 * short and sharp where the call-side delay is long and blurred. */
void nest_score_return(struct bb_nest *n, struct call *child, struct call **cand, size_t nc)
{
	double w = 1.0 / (double)nc;
	int pooled = n->cfg.p.scoreboard == BB_NEST_SB_EDGE;
	struct triple *pool = pooled ? nest_rsb(n, NEST_ANY, child->from, child->to, 1) : NULL;
	for (size_t i = 0; i < nc; i++) {
		if (cand[i]->end_ts == BB_NO_TIME)
			continue;
		uint32_t a = pool_key(n, cand[i], child);
		struct triple *t = !pooled ? nest_rsb(n, cand[i]->from, child->from, child->to, 1)
		                   : a == NEST_ANY ? pool
		                                   : nest_rsb(n, a, child->from, child->to, 1);
		*nest_tri_at(n, t, nest_sb_bin(n, nest_sub(cand[i]->end_ts, child->ret_ts))) += w;
	}
}

/* The return-side factor of par as child's parent. */
static double return_factor(struct bb_nest *n, const struct call *par, const struct call *child,
                            struct nest_edge_look *x)
{
	int edge = n->cfg.p.scoreboard == BB_NEST_SB_EDGE;
	uint32_t a = edge ? pool_key(n, par, child) : par->from;
	if (edge && a == NEST_ANY && !x->rlooked) { /* once per child, when asked */
		x->rpool = nest_rsb(n, a, child->from, child->to, 0);
		x->rlooked = 1;
	}
	struct triple *t = edge && a == NEST_ANY ? x->rpool : nest_rsb(n, a, child->from, child->to, 0);
	if (!t)
		return 0;
	if (par->end_ts == BB_NO_TIME) {
		/* in flight when the trace ended (nest_pairs.c, in_flight): it
		 * returns later than the end, whatever delay that is */
		double m = 0;
		uint32_t b0 = nest_sb_bin(n, nest_sub(n->recs.tend, child->ret_ts));
		for (uint32_t k = b0; k < n->cfg.bins.n; k++)
			m += nest_tri_get(n, t, k) * n->board.binw[k];
		return m;
	}
	uint32_t bk = nest_sb_bin(n, nest_sub(par->end_ts, child->ret_ts));
	return nest_tri_get(n, t, bk) * n->board.binw[bk];
}

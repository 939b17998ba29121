/* nest_queue.c - --global: a node starts the calls into it in the order they came */
/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nesting/nest_int.h"

/* A server whose requests wait for a worker (a thread pool behind an accept
 * or epoll queue, a process pool) starts them in the order they came. Under
 * bursts the wait is long (the rig's second app at 64 in flight: the front
 * end's handlers make their first call 0.35 ms after their request came at
 * the median, 48 ms at the 90th percentile), so the delay from the call
 * hardly tells a first call's parent among the tens of requests waiting;
 * the order tells it (the same front end: 94% of its requests started
 * after every request that came before them, 98% at Poisson load).
 *
 * The model. A "start" call is one of an edge whose calls are mostly (at
 * least half) the first child of their parent in the last round's
 * assignment (nest_queue_starts): the call a handler begins its work with.
 * When start call c is made, the candidates of c that have started (made
 * another start call before c, in the last round's assignment) number S.
 * Served in order, those are the S oldest, and c's parent is the next one:
 * candidate i (0 the oldest) has the queue offset d = S - i, 0 for the
 * parent. S counts starts, whoever they were given to, so a last round that
 * gave two waiting requests each other's first calls leaves it as it is;
 * which candidate looks started would not (a first version that took
 * the candidates that had started out, and counted the others' order
 * against each, left the rig's k2b burst-64 at 3.2% of the instances wrong,
 * 35% without content, where this gives 0.7% and 28%).
 *
 * Per node (the parents' callee), the offsets of the last round's parents
 * (q) and of all the candidates (r) of start calls, in NEST_Q_K classes
 * (-NEST_Q_R..NEST_Q_R, the ends "or more"), give each candidate of a start
 * call the factor q(d) / r(d) (half a count added to each class; scaled so
 * the likeliest class is 1). A node takes it only where it makes the last
 * round's parents likelier among their candidates than the times alone
 * (queue_select): one whose requests start in no order, or whose delay
 * from the call already tells the order, keeps the times alone. q and the
 * choice are made once, from the first round's assignment, and kept. */

/* ek: low 7 bits the queue offset plus NEST_Q_MID (NEST_Q_NONE, nest_int.h:
 * the child is not a start call), bit 7 set on the candidate the last round
 * chose */
#define NEST_Q_PREV 0x80
#define NEST_Q_MID 60 /* offset 0 */
#define NEST_Q_R 4   /* q's classes: offsets -R..R, the ends 'or more' */
#define NEST_Q_K (2 * NEST_Q_R + 1)
#define NEST_Q_MIN 20 /* start calls a node needs before its q is used */

static uint32_t qclass(uint32_t code)
{
	int d = (int)code - NEST_Q_MID;
	return (uint32_t)((d < -NEST_Q_R ? -NEST_Q_R : d > NEST_Q_R ? NEST_Q_R : d) + NEST_Q_R);
}

/* Is a call of CALL record x a start: its edge's calls were the first child
 * of their parent in at least half the cases, in the last round's assignment
 * (nest_queue_starts)? */
static int start_call(struct bb_nest *n, uint32_t x)
{
	const struct mrec *m = &n->recs.rec[x];
	const struct pairc *e = nest_pairc(n, m->op_from & REC_NODE_MAX, m->arg, 0);
	return e && e->q_all && 2 * e->q_first >= e->q_all;
}

/* Before a round after the first: per edge, how often its calls were their
 * parent's first child in the last round's assignment (soff, skid). */
void nest_queue_starts(struct bb_nest *n)
{
	if (!n->gaps.soff || !nest_has_scall(n))
		return;
	for (size_t i = 0; i < n->board.pccap; i++)
		n->board.pc[i].q_first = n->board.pc[i].q_all = 0;
	for (size_t p = n->recs.nearly; p < n->recs.nrec; p++) {
		uint32_t first = BB_NONE;
		for (uint32_t i = n->gaps.soff[p]; i < n->gaps.soff[p + 1]; i++) {
			uint32_t x = n->gaps.skid[i];
			if (first == BB_NONE || nest_scall(n, x) < nest_scall(n, first))
				first = x;
			const struct mrec *m = &n->recs.rec[x];
			struct pairc *e = nest_pairc(n, m->op_from & REC_NODE_MAX, m->arg, 0);
			if (e)
				e->q_all++;
		}
		if (first != BB_NONE) {
			const struct mrec *m = &n->recs.rec[first];
			struct pairc *e = nest_pairc(n, m->op_from & REC_NODE_MAX, m->arg, 0);
			if (e)
				e->q_first++;
		}
	}
}

/* Whether call record q had, in the last round's assignment, a child other
 * than self that starts (start_call) called before t; *has_self set when
 * self is one of its. */
static int started(struct bb_nest *n, uint32_t q, uint32_t self, int64_t t, int *has_self)
{
	int s = 0;
	for (uint32_t i = n->gaps.soff[q]; i < n->gaps.soff[q + 1]; i++) {
		uint32_t x = n->gaps.skid[i];
		if (x == self)
			*has_self = 1;
		else if (!s && nest_scall(n, x) < t) /* the time only until one starts */
			s = start_call(n, x);
	}
	return s;
}

/* The replay collecting round r's candidates (r > 0): the queue offset of
 * each candidate of child c (in call order) into out: the candidates (of its
 * node) that started before c less those that came before it, plus
 * NEST_Q_MID; NEST_Q_NONE for all when c is not a start call. NEST_Q_PREV
 * marks the last round's parent of a start call. */
void nest_queue_ranks(struct bb_nest *n, const struct call *c, struct call **cand, size_t nc,
                      uint8_t *out)
{
	int one_node = 1;
	if (!start_call(n, c->ridx)) {
		memset(out, NEST_Q_NONE, nc); /* no offset, and no one reads the mark */
		return;
	}
	for (size_t i = 0; i < nc; i++) {
		int self = 0;
		out[i] = (uint8_t)started(n, cand[i]->ridx, c->ridx, c->call_ts, &self);
		out[i] |= self ? NEST_Q_PREV : 0;
		one_node &= cand[i]->to == cand[0]->to;
	}
	int64_t total = 0;
	for (size_t i = 0; i < nc; i++)
		total += out[i] & 1;
	for (size_t i = 0; i < nc; i++) {
		int64_t d = total - (int64_t)i;
		if (!one_node) {
			d = 0;
			for (size_t j = 0; j < nc; j++)
				if (cand[j]->to == cand[i]->to)
					d += (out[j] & 1) - (j < i);
		}
		d = d < -NEST_Q_MID ? -NEST_Q_MID : d > NEST_Q_MID ? NEST_Q_MID : d;
		uint8_t prev = out[i] & NEST_Q_PREV;
		out[i] = (uint8_t)(prev | (uint8_t)(d + NEST_Q_MID));
	}
}

/* Per node, from the entries' queue offsets: q, the classes of the last
 * round's parents of start children, and r, those of all the candidates of
 * start children; lf = log(q / r), less its maximum (so the likeliest class
 * costs nothing). A node with fewer than NEST_Q_MIN such parents gets 0. */
static void queue_factors(struct bb_nest *n, double *lf)
{
	struct nest_global *g = &n->solve.glob;
	size_t nn = n->nodes.ninto;
	double *r = bb_xcalloc(nn * NEST_Q_K, sizeof(*r));
	for (size_t e = 0; e < g->nent; e++) {
		uint32_t k = g->ek[e] & NEST_Q_NONE, b = n->recs.rec[g->ent[e].par].arg;
		if (k == NEST_Q_NONE || b >= nn)
			continue;
		r[b * NEST_Q_K + qclass(k)] += 1;
		if (g->ek[e] & NEST_Q_PREV)
			lf[b * NEST_Q_K + qclass(k)] += 1;
	}
	for (size_t b = 0; b < nn; b++) {
		double *q = &lf[b * NEST_Q_K], *rb = &r[b * NEST_Q_K], sq = 0, sr = 0;
		double lmax = -INFINITY;
		for (int k = 0; k < NEST_Q_K; k++) {
			sq += q[k];
			sr += rb[k];
		}
		for (int k = 0; k < NEST_Q_K; k++) {
			q[k] = sq < NEST_Q_MIN ? 0
			                       : log((q[k] + 0.5) / (sq + 0.5 * NEST_Q_K)) -
			                             log((rb[k] + 0.5) / (sr + 0.5 * NEST_Q_K));
			lmax = q[k] > lmax ? q[k] : lmax;
		}
		for (int k = 0; k < NEST_Q_K; k++)
			q[k] -= lmax;
	}
	free(r);
}

/* Per node: does the queue factor make the last round's parents of start
 * children likelier among their candidates (the sum of their log shares of
 * their child's scores), with it than without? A node whose calls start in
 * no order, or whose delays from the call already tell as much, keeps the
 * times alone. */
static void queue_select(struct bb_nest *n, double *lf)
{
	struct nest_global *g = &n->solve.glob;
	size_t nn = n->nodes.ninto;
	double *gain = bb_xcalloc(nn, sizeof(*gain));
	for (size_t ci = 0; ci < g->nch; ci++) {
		const struct nest_gchild *x = &g->ch[ci];
		uint32_t prev = BB_NONE, b = BB_NONE;
		double wmax = -INFINITY;
		for (uint32_t j = 0; j < x->nc; j++) {
			uint32_t e = x->off + j;
			if ((g->ek[e] & NEST_Q_NONE) == NEST_Q_NONE || isinf(g->ent[e].w))
				continue;
			if (g->ek[e] & NEST_Q_PREV)
				prev = e;
			wmax = g->ent[e].w > wmax ? g->ent[e].w : wmax;
		}
		if (prev == BB_NONE || x->nc < 2)
			continue;
		b = n->recs.rec[g->ent[prev].par].arg;
		if (b >= nn)
			continue;
		double z0 = 0, z1 = 0;
		for (uint32_t j = 0; j < x->nc; j++) {
			uint32_t e = x->off + j;
			if ((g->ek[e] & NEST_Q_NONE) == NEST_Q_NONE || isinf(g->ent[e].w))
				continue;
			uint32_t be = n->recs.rec[g->ent[e].par].arg;
			double f = be < nn ? lf[be * NEST_Q_K + qclass(g->ek[e] & NEST_Q_NONE)] : 0;
			z0 += exp(g->ent[e].w - wmax);
			z1 += exp(g->ent[e].w - wmax + f);
		}
		double fp = lf[b * NEST_Q_K + qclass(g->ek[prev] & NEST_Q_NONE)];
		gain[b] += fp - log(z1) + log(z0);
	}
	for (size_t b = 0; b < nn; b++) {
		if (!(gain[b] > 0))
			memset(&lf[b * NEST_Q_K], 0, NEST_Q_K * sizeof(*lf));
	}
	free(gain);
}

/* After a round's candidates are collected, before the solve: every
 * candidate of a start child takes its node's factor of its queue offset
 * on its log score (queue_factors, where queue_select keeps it). */
void nest_queue_weigh(struct bb_nest *n)
{
	struct nest_global *g = &n->solve.glob;
	if (!g->ek || g->full || !n->nodes.ninto)
		return;
	size_t nn = n->nodes.ninto;
	if (!n->gaps.qlog) {
		/* learnt once, from the first round's assignment (times alone):
		 * relearnt from assignments the factor itself made, q sharpens
		 * round after round beyond what the trace holds (shop-r235's
		 * catalog: 5.7% of the parents one place off by the sixth round,
		 * 13% in the truth) */
		n->gaps.qlog = bb_xcalloc(nn * NEST_Q_K, sizeof(*n->gaps.qlog));
		queue_factors(n, n->gaps.qlog);
		queue_select(n, n->gaps.qlog);
	}
	const double *lf = n->gaps.qlog;
	for (size_t e = 0; e < g->nent; e++) {
		uint32_t k = g->ek[e] & NEST_Q_NONE, b = n->recs.rec[g->ent[e].par].arg;
		if (k != NEST_Q_NONE && b < nn && !isinf(g->ent[e].w))
			g->ent[e].w += (float)lf[b * NEST_Q_K + qclass(k)];
	}
}

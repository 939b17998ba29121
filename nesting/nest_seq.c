/* nest_seq.c - --sequence: a child's delay from its parent's start or from its previous sibling's return */
/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nesting/nest_int.h"

/* A handler makes its calls one after another: its first child follows the
 * start of its work, each later one the return of the one before by a
 * short, steady gap (the handler's own work between calls). The paper's
 * scoreboard measures every child from its parent's call, so a later
 * child's delay also holds the time of every call before it, and under load
 * the wait for a worker before the handler starts: the delay is blurred
 * and a wrong parent that began a little later scores as well as the true
 * one. Here a candidate is measured from its anchor instead: the return of
 * its latest child that returned before this child's call (a "next"
 * child), or its own call when it has none (a "first" child).
 *
 * What those gaps look like is learnt by a replay after pass 1 (the
 * sequence stage): the parents the scoreboard chooses give each child its
 * anchor, and its gap goes into one of two histograms per edge (B, C):
 * first or next (keys with NEST_SEQ_FIRST or NEST_SEQ_NEXT on the callee).
 * Both hold one unit per child, so their values are comparable densities
 * of (kind, gap). The stage also keeps each child's parent and return time
 * so that --global, which scores candidates before any child is placed,
 * can measure from the anchors that assignment gave. */

/* An edge takes the sequence anchors only with at least this many next
 * children in the assignment (nest_seq_from_assignment). */
#define NEST_SEQ_MIN 20

/* The latest return, at or before t, of a child of par other than self;
 * BB_NO_TIME when there is none (par's children, in the tree). */
static int64_t anchor_tree(const struct call *par, const struct call *self, int64_t t)
{
	int64_t a = BB_NO_TIME;
	for (const struct call *ch = par->child; ch; ch = ch->sibling)
		if (ch != self && ch->ret_ts != BB_NO_TIME && ch->ret_ts <= t &&
		    (a == BB_NO_TIME || ch->ret_ts > a))
			a = ch->ret_ts;
	return a;
}

/* The return time of CALL record k: pass 1's with --return-score, else the
 * sequence stage's (the same for every call that returned). */
static int64_t ret_of(const struct bb_nest *n, uint32_t k)
{
	return n->gaps.sret ? n->gaps.sret[k] : n->recs.rret[k];
}

/* The same from the sequence stage's parents (--global). */
static int64_t anchor_stage(const struct bb_nest *n, const struct call *par,
                            const struct call *self, int64_t t)
{
	if (!n->gaps.soff || par->ridx == BB_NONE || par->ridx >= n->recs.nrec)
		return BB_NO_TIME;
	int64_t a = BB_NO_TIME;
	for (uint32_t i = n->gaps.soff[par->ridx]; i < n->gaps.soff[par->ridx + 1]; i++) {
		uint32_t k = n->gaps.skid[i];
		int64_t r = ret_of(n, k);
		if (k != self->ridx && r != BB_NO_TIME && r <= t && (a == BB_NO_TIME || r > a))
			a = r;
	}
	return a;
}

/* --global: how many of par's children in the sequence stage's choice
 * (child left out) overlap child in time: the overlap penalty's count, which
 * --global cannot see otherwise (it scores before any child is placed). */
uint32_t nest_seq_overlaps(const struct bb_nest *n, const struct call *par,
                           const struct call *child)
{
	if (!n->gaps.soff || par->ridx == BB_NONE || par->ridx >= n->recs.nrec)
		return 0;
	uint32_t k = 0;
	for (uint32_t i = n->gaps.soff[par->ridx]; i < n->gaps.soff[par->ridx + 1]; i++) {
		uint32_t x = n->gaps.skid[i];
		k += x != child->ridx && nest_scall(n, x) < child->ret_ts &&
		     child->call_ts < ret_of(n, x);
	}
	return k;
}

/* Child's anchor under par and which histogram measures from it. */
static int64_t anchor(const struct bb_nest *n, const struct call *par, const struct call *child,
                      uint32_t *kind)
{
	int64_t a = n->phase.gstage ? anchor_stage(n, par, child, child->call_ts)
	                            : anchor_tree(par, child, child->call_ts);
	*kind = a == BB_NO_TIME ? NEST_SEQ_FIRST : NEST_SEQ_NEXT;
	return a == BB_NO_TIME ? par->call_ts : a;
}

/* The sequence score of par as child's parent: the density of the child's
 * gap from its anchor. */
double nest_seq_score(struct bb_nest *n, const struct call *par, const struct call *child)
{
	uint32_t kind;
	int64_t a = anchor(n, par, child, &kind);
	struct triple *t = nest_triple(n, NEST_ANY, child->from, child->to | kind, 0);
	if (!t)
		return 0;
	uint32_t bk = nest_sb_bin(n, nest_sub(child->call_ts, a));
	return nest_tri_get(n, t, bk) * n->board.binw[bk];
}

/* The sequence stage: child c has just been given parent par (the tree
 * holds par's earlier children). */
void nest_seq_learn(struct bb_nest *n, struct call *par, struct call *c)
{
	uint32_t kind;
	int64_t a = anchor(n, par, c, &kind);
	struct triple *t = nest_triple(n, NEST_ANY, c->from, c->to | kind, 1);
	*nest_tri_at(n, t, nest_sb_bin(n, nest_sub(c->call_ts, a))) += 1;
	if (n->gaps.spar && c->ridx < n->recs.nrec)
		n->gaps.spar[c->ridx] = par->ridx;
}

/* The sequence stage: the scoreboard's choice for child c, for --global's
 * context, without learning the gaps (no --sequence). */
void nest_seq_context(struct bb_nest *n, struct call *par, struct call *c)
{
	if (n->cfg.p.sequence)
		nest_seq_learn(n, par, c);
	else if (n->gaps.spar && c->ridx < n->recs.nrec)
		n->gaps.spar[c->ridx] = par->ridx;
}

/* The sequence stage: call c has returned. */
void nest_seq_returned(struct bb_nest *n, const struct call *c)
{
	if (n->gaps.scall && c->ridx < n->recs.nrec) {
		if (n->gaps.sret)
			n->gaps.sret[c->ridx] = c->ret_ts;
		n->gaps.scall[c->ridx] = c->call_ts;
	}
}

/* Before the sequence stage, a replay that chooses parents by the scoreboard
 * and learns the gaps (nest_seq_context, nest_seq_returned): with --global,
 * per record its parent and times. */
void nest_seq_stage_begin(struct bb_nest *n)
{
	if (n->cfg.p.global) {
		n->gaps.spar =
		    bb_xmalloc((n->recs.nrec ? n->recs.nrec : 1) * sizeof(*n->gaps.spar));
		/* the return times are pass 1's (--return-score keeps them) */
		if (!n->recs.rret)
			n->gaps.sret = bb_xmalloc((n->recs.nrec ? n->recs.nrec : 1) *
			                          sizeof(*n->gaps.sret));
		n->gaps.scall =
		    bb_xmalloc((n->recs.nrec ? n->recs.nrec : 1) * sizeof(*n->gaps.scall));
		for (size_t i = 0; i < n->recs.nrec; i++) {
			n->gaps.spar[i] = BB_NONE;
			n->gaps.scall[i] = BB_NO_TIME;
			if (n->gaps.sret)
				n->gaps.sret[i] = BB_NO_TIME;
		}
	}
}

/* Instead of the sequence stage, with --global alone and the return times
 * in rret: each CALL record's call time, as the stage would note it for
 * every call that returns (the only ones that become children). When the
 * rounds score outside replays (rec: nest_global_rescore), the records hold
 * them (nest_scall), else a copy. */
void nest_seq_times(struct bb_nest *n, int rec)
{
	n->gaps.scall_rec = rec;
	if (rec)
		return;
	n->gaps.scall = bb_xmalloc((n->recs.nrec ? n->recs.nrec : 1) * sizeof(*n->gaps.scall));
	for (size_t i = 0; i < n->recs.nrec; i++)
		n->gaps.scall[i] =
		    n->recs.rec[i].op_from >> 30 == REC_CALL ? n->recs.rec[i].u.ts : BB_NO_TIME;
	n->gaps.scall_recs = 1;
}

/* --global's solve reads no call times (the flow and the refinement have
 * the candidates' costs): those nest_seq_times took from the records are
 * freed while it runs and taken again after, from the records, which hold
 * the same times between replays (8 bytes a record less at the flow's and
 * the refinement's peak: 6.2 MB on table1-par-medium). */
void nest_seq_times_drop(struct bb_nest *n)
{
	if (n->gaps.scall_recs) {
		free(n->gaps.scall);
		n->gaps.scall = NULL;
	}
}

void nest_seq_times_again(struct bb_nest *n)
{
	if (n->gaps.scall_recs && !n->gaps.scall)
		nest_seq_times(n, 0);
}

/* After the sequence stage's replay: the histograms are learnt, and with
 * --sequence --global each parent record's children are indexed. */
void nest_seq_stage_end(struct bb_nest *n)
{
	n->gaps.ready = n->cfg.p.sequence;
	/* --global's first round scores without context: the greedy choice's
	 * parents are too often wrong at high parallelism to lend it (figure 17's
	 * trace: 9,610 instances wrong with them, 180 without); the second round
	 * takes the first round's (nest_seq_from_global). The stage still gives
	 * each record its call and return times. */
	if (!n->gaps.spar || !n->cfg.p.sequence) {
		free(n->gaps.spar);
		n->gaps.spar = NULL;
		return;
	}
	/* children per parent record, in call order (CSR) */
	n->gaps.soff = bb_xcalloc(n->recs.nrec + 2, sizeof(*n->gaps.soff));
	for (size_t i = 0; i < n->recs.nrec; i++)
		if (n->gaps.spar[i] != BB_NONE)
			n->gaps.soff[n->gaps.spar[i] + 2]++;
	for (size_t i = 0; i < n->recs.nrec; i++)
		n->gaps.soff[i + 2] += n->gaps.soff[i + 1];
	n->gaps.skid = bb_xmalloc((n->gaps.soff[n->recs.nrec + 1] + 1) * sizeof(*n->gaps.skid));
	for (size_t i = 0; i < n->recs.nrec; i++)
		if (n->gaps.spar[i] != BB_NONE)
			n->gaps.skid[n->gaps.soff[n->gaps.spar[i] + 1]++] = (uint32_t)i;
	free(n->gaps.spar);
	n->gaps.spar = NULL;
}

/* The context's CSR (soff, skid) from per-record parents par. */
static void ctx_from(struct bb_nest *n, const uint32_t *par)
{
	if (!n->gaps.soff)
		n->gaps.soff = bb_xmalloc((n->recs.nrec + 2) * sizeof(*n->gaps.soff));
	memset(n->gaps.soff, 0, (n->recs.nrec + 2) * sizeof(*n->gaps.soff));
	for (size_t i = 0; i < n->recs.nrec; i++)
		if (par[i] != BB_NONE)
			n->gaps.soff[par[i] + 2]++;
	for (size_t i = 0; i < n->recs.nrec; i++)
		n->gaps.soff[i + 2] += n->gaps.soff[i + 1];
	free(n->gaps.skid);
	n->gaps.skid = bb_xmalloc((n->gaps.soff[n->recs.nrec + 1] + 1) * sizeof(*n->gaps.skid));
	for (size_t i = 0; i < n->recs.nrec; i++)
		if (par[i] != BB_NONE)
			n->gaps.skid[n->gaps.soff[par[i] + 1]++] = (uint32_t)i;
}

/* --global: the context of a next round is this round's parents; returns
 * 1 when they are now in soff and skid (nest_seq_parents gives them back). */
int nest_seq_from_global(struct bb_nest *n)
{
	if (!n->solve.gpar || !nest_has_scall(n))
		return 0;
	ctx_from(n, n->solve.gpar);
	return 1;
}

/* While a round's solve runs, which reads the context only to count the
 * children that moved (nest_refine.c, settled): the context's parents per
 * record (4 bytes a record) instead of its CSR (4 bytes a record and 4 a
 * child), put back by nest_seq_ctx_again. Returns new, or NULL (no
 * context): nest_seq_ctx_again takes ownership. */
uint32_t *nest_seq_ctx_hold(struct bb_nest *n)
{
	if (!n->gaps.soff)
		return NULL;
	uint32_t *prev = nest_seq_parents(n);
	free(n->gaps.soff);
	free(n->gaps.skid);
	n->gaps.soff = n->gaps.skid = NULL;
	return prev;
}

void nest_seq_ctx_again(struct bb_nest *n, uint32_t *prev)
{
	if (!prev)
		return;
	ctx_from(n, prev);
	free(prev);
}

/* Whether the parents nest_seq_from_global took had c (a CALL record) a
 * child of p's. */
int nest_seq_had_child(const struct bb_nest *n, uint32_t p, uint32_t c)
{
	if (p == BB_NONE || p >= n->recs.nrec)
		return 0;
	for (uint32_t i = n->gaps.soff[p]; i < n->gaps.soff[p + 1]; i++)
		if (n->gaps.skid[i] == c)
			return 1;
	return 0;
}

/* The parents nest_seq_from_global took, per CALL record (BB_NONE: none):
 * returns new, caller frees. */
uint32_t *nest_seq_parents(const struct bb_nest *n)
{
	uint32_t *par = bb_xmalloc((n->recs.nrec ? n->recs.nrec : 1) * sizeof(*par));
	for (size_t i = 0; i < n->recs.nrec; i++)
		par[i] = BB_NONE;
	for (size_t p = 0; p < n->recs.nrec; p++)
		for (uint32_t i = n->gaps.soff[p]; i < n->gaps.soff[p + 1]; i++)
			par[n->gaps.skid[i]] = (uint32_t)p;
	return par;
}

void nest_seq_free(struct bb_nest *n)
{
	free(n->gaps.spar);
	free(n->gaps.sret);
	free(n->gaps.scall);
	free(n->gaps.soff);
	free(n->gaps.skid);
	free(n->gaps.qlog);
	n->gaps.qlog = NULL;
	n->gaps.spar = n->gaps.soff = n->gaps.skid = NULL;
	n->gaps.sret = n->gaps.scall = NULL;
	n->gaps.scall_recs = 0;
	n->gaps.scall_rec = 0;
}

/* Is child's edge measured from its candidates' anchors (nest_seq_score)?
 * Every edge with --sequence; without, the edges nest_seq_from_assignment
 * chose. */
int nest_seq_edge(struct bb_nest *n, const struct call *child)
{
	if (n->cfg.p.sequence)
		return 1;
	const struct triple *t = nest_triple(n, NEST_ANY, child->from, child->to | NEST_SEQ_FIRST, 0);
	return t && t->seq;
}

/* Child record i's anchor under parent record par in the assignment indexed
 * by soff/skid (the latest return of a sibling at or before its call), or
 * BB_NO_TIME for a first child. */
static int64_t anchor_rec(const struct bb_nest *n, uint32_t par, uint32_t i)
{
	int64_t t = nest_scall(n, i), a = BB_NO_TIME;
	for (uint32_t k = n->gaps.soff[par]; k < n->gaps.soff[par + 1]; k++) {
		uint32_t x = n->gaps.skid[k];
		int64_t r = ret_of(n, x);
		if (x != i && r != BB_NO_TIME && r <= t && (a == BB_NO_TIME || r > a))
			a = r;
	}
	return a;
}

/* The log-likelihood of a histogram's own samples (nn of them), as
 * densities (the scoreboard's bin weights). */
static double self_loglik(const struct bb_nest *n, const struct triple *t, double nn)
{
	const double *h = t->h;
	double l = 0;
	for (uint32_t k = 0; k < nest_tri_halves(t) * n->cfg.bins.n; k++)
		if (h[k] > 0)
			l += h[k] * log(h[k] / nn * n->board.binw[k]);
	return l;
}

/* Does edge tf (a NEST_SEQ_FIRST histogram) take the sequence anchors? When
 * most of its children came after a sibling's return (the assignment's),
 * and their gaps from that return are likelier than their delays from the
 * parent's call, each under its own histogram. A handler that makes its
 * calls one after another with little work between them (the rig's front
 * end and search service: gaps of 0.05 ms, delays from the call of
 * milliseconds) gains; where the gaps tell no more than the delays, or the
 * first children dominate, the call's delay stays. */
static int seq_likelier(struct bb_nest *n, const struct triple *tf)
{
	uint32_t c = tf->c & ~NEST_SEQ_FIRST;
	const struct triple *tn = nest_triple(n, NEST_ANY, tf->b, c | NEST_SEQ_NEXT, 0);
	const struct triple *td =
	    nest_triple(n, NEST_ANY, tf->b, c | NEST_SEQ_FIRST | NEST_SEQ_NEXT, 0);
	if (!tn || !td)
		return 0;
	double nn = 0, nf = 0;
	for (uint32_t k = 0; k < 2 * n->cfg.bins.n; k++) {
		nn += nest_tri_get(n, tn, k);
		nf += nest_tri_get(n, tf, k);
	}
	if (nn < NEST_SEQ_MIN || nn < nf)
		return 0;
	return self_loglik(n, tn, nn) > self_loglik(n, td, nn);
}

/* The sequence histograms the round will not read, freed (the next round
 * counts them anew): the delays from the call that only seq_likelier
 * compares, and the gaps of an edge that keeps its delays from the call.
 * Not with --sequence, which scores every edge from its anchors. (Each is
 * bins.n doubles or more, 15 KB: table1-short's flow peaked with four.) */
static void seq_unused(struct bb_nest *n)
{
	if (n->cfg.p.sequence)
		return;
	for (size_t i = 0; i < n->board.ntri; i++) {
		struct triple *x = &n->board.tri[i];
		uint32_t bits = x->c & (NEST_SEQ_FIRST | NEST_SEQ_NEXT);
		if (!bits)
			continue;
		const struct triple *tf =
		    bits == NEST_SEQ_FIRST
		        ? x
		        : nest_triple(n, NEST_ANY, x->b, (x->c & ~bits) | NEST_SEQ_FIRST, 0);
		if (bits == (NEST_SEQ_FIRST | NEST_SEQ_NEXT) || !tf || !tf->seq)
			nest_tri_drop(x);
	}
}

/* --global without --sequence, before each round after the first: the
 * last round's assignment (n->solve.gpar) gives every child its anchor
 * (returns nest_seq_from_global's: the parents are in soff and skid); per edge (B, C)
 * the gaps from the anchors go into the first and next histograms, and the
 * next children's delays from their parent's call into a third one (both
 * NEST_SEQ bits) to compare; edges where the gaps are likelier
 * (seq_likelier) are scored from the anchors in the next round, the others
 * from the call as before. The last round's parents are also the next
 * round's context (nest_seq_from_global). Unlike --sequence, whose gaps
 * come from the greedy choice, these come from the assignment, which at
 * high load is far more often right. */
int nest_seq_from_assignment(struct bb_nest *n)
{
	if (!n->solve.gpar || !nest_has_scall(n) || (!n->gaps.sret && !n->recs.rret))
		return 0;
	int moved = nest_seq_from_global(n);
	uint64_t keep = n->st.triples; /* the stat counts the scoreboard's */
	for (size_t i = 0; i < n->board.ntri; i++)
		if (n->board.tri[i].c & (NEST_SEQ_FIRST | NEST_SEQ_NEXT))
			nest_tri_clear(n, &n->board.tri[i]); /* seq_unused may have freed it */
	for (uint32_t i = 0; i < n->recs.nrec; i++) {
		uint32_t par = n->solve.gpar[i];
		/* an early parent's (nest_recs_early) first child in the trace need
		 * not be its first, and its call time is the capture's start */
		if (par == BB_NONE || nest_rec_early(n, par) || nest_scall(n, i) == BB_NO_TIME)
			continue;
		const struct mrec *m = &n->recs.rec[i];
		uint32_t b = m->op_from & REC_NODE_MAX;
		int64_t t = nest_scall(n, i), a = anchor_rec(n, par, i);
		uint32_t kind = a == BB_NO_TIME ? NEST_SEQ_FIRST : NEST_SEQ_NEXT;
		/* the first histogram exists for every edge: it carries the choice */
		struct triple *x = nest_triple(n, NEST_ANY, b, m->arg | NEST_SEQ_FIRST, 1);
		if (kind == NEST_SEQ_NEXT)
			x = nest_triple(n, NEST_ANY, b, m->arg | kind, 1);
		*nest_tri_at(n, x, nest_sb_bin(n, nest_sub(t, a == BB_NO_TIME ? nest_scall(n, par) : a))) +=
		    1;
		if (kind == NEST_SEQ_NEXT)
			*nest_tri_at(n,
			             nest_triple(n, NEST_ANY, b, m->arg | NEST_SEQ_FIRST | NEST_SEQ_NEXT, 1),
			             nest_sb_bin(n, nest_sub(t, nest_scall(n, par)))) += 1;
	}
	for (size_t i = 0; i < n->board.ntri; i++) {
		struct triple *tf = &n->board.tri[i];
		if ((tf->c & (NEST_SEQ_FIRST | NEST_SEQ_NEXT)) == NEST_SEQ_FIRST)
			tf->seq = seq_likelier(n, tf);
	}
	seq_unused(n);
	nest_densities(n, NEST_DENS_SEQ);
	n->st.triples = keep;
	n->gaps.ready = 1;
	return moved;
}

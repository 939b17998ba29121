/* nest_seq.c - --sequence: a child's delay from its parent's start or from its previous sibling's return */
/* SPDX-License-Identifier: MIT */
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
		k += x != child->ridx && n->gaps.scall[x] < child->ret_ts &&
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
	return t->h[bk] * n->board.binw[bk];
}

/* The sequence stage: child c has just been given parent par (the tree
 * holds par's earlier children). */
void nest_seq_learn(struct bb_nest *n, struct call *par, struct call *c)
{
	uint32_t kind;
	int64_t a = anchor(n, par, c, &kind);
	struct triple *t = nest_triple(n, NEST_ANY, c->from, c->to | kind, 1);
	t->h[nest_sb_bin(n, nest_sub(c->call_ts, a))] += 1;
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
 * every call that returns (the only ones that become children). */
void nest_seq_times(struct bb_nest *n)
{
	n->gaps.scall = bb_xmalloc((n->recs.nrec ? n->recs.nrec : 1) * sizeof(*n->gaps.scall));
	for (size_t i = 0; i < n->recs.nrec; i++)
		n->gaps.scall[i] =
		    n->recs.rec[i].op_from >> 30 == REC_CALL ? n->recs.rec[i].u.ts : BB_NO_TIME;
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

/* --global: the context of a next round is this round's parents; returns
 * 1 when they are now in soff and skid (nest_seq_parents gives them back). */
int nest_seq_from_global(struct bb_nest *n)
{
	if (!n->solve.gpar || !n->gaps.scall)
		return 0;
	if (!n->gaps.soff)
		n->gaps.soff = bb_xmalloc((n->recs.nrec + 2) * sizeof(*n->gaps.soff));
	memset(n->gaps.soff, 0, (n->recs.nrec + 2) * sizeof(*n->gaps.soff));
	for (size_t i = 0; i < n->recs.nrec; i++)
		if (n->solve.gpar[i] != BB_NONE)
			n->gaps.soff[n->solve.gpar[i] + 2]++;
	for (size_t i = 0; i < n->recs.nrec; i++)
		n->gaps.soff[i + 2] += n->gaps.soff[i + 1];
	free(n->gaps.skid);
	n->gaps.skid = bb_xmalloc((n->gaps.soff[n->recs.nrec + 1] + 1) * sizeof(*n->gaps.skid));
	for (size_t i = 0; i < n->recs.nrec; i++)
		if (n->solve.gpar[i] != BB_NONE)
			n->gaps.skid[n->gaps.soff[n->solve.gpar[i] + 1]++] = (uint32_t)i;
	return 1;
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
	n->gaps.spar = n->gaps.soff = n->gaps.skid = NULL;
	n->gaps.sret = n->gaps.scall = NULL;
}

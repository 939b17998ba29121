/* nest_run.c - parameters, the two streaming passes, statistics and results */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nesting/nest_int.h"

void bb_nest_params_init(struct bb_nest_params *p)
{
	memset(p, 0, sizeof(*p));
	p->bin_min_ns = 1000;                       /* 1 us */
	p->bin_max_ns = INT64_C(7200) * BB_NS_PER_S; /* 2 h */
	p->bin_base = 1.05;
	p->penalty_x = 2;
	p->open_timeout_ns = INT64_C(3600) * BB_NS_PER_S;
	p->rank = BB_NEST_RANK_LATENCY;
	p->score_density = 1;
	p->density_mass = 3;
	p->scoreboard = BB_NEST_SB_AUTO;
	p->bins_in_output = 1;
	p->memory_bytes = BB_NEST_MEMORY_DEFAULT;
	p->content = 1;
	p->learn_parallel = 1;
	p->return_score = BB_NEST_AUTO;
	p->global = BB_NEST_AUTO;
	p->rounds = NEST_GLOBAL_ROUNDS;
}

int bb_nest_params_check(const struct bb_nest_params *p, struct bb_err *err)
{
	if (p->bin_min_ns <= 0 || p->bin_max_ns <= p->bin_min_ns) {
		bb_err_set(err, "bin range: need 0 < MIN < MAX");
		return BB_ERR_ARG;
	}
	if (!(p->bin_base > 1.0001) || p->bin_base > 10) {
		bb_err_set(err, "bin base must be in (1, 10]");
		return BB_ERR_ARG;
	}
	if (log((double)p->bin_max_ns / (double)p->bin_min_ns) / log(p->bin_base) > 100000) {
		bb_err_set(err, "bin range: more than 100000 bins");
		return BB_ERR_LIMIT;
	}
	if (!(p->smooth_sigma >= 0) || p->smooth_sigma > 1000) {
		bb_err_set(err, "smoothing sigma must be in [0, 1000] bins");
		return BB_ERR_ARG;
	}
	if (!(p->density_mass >= 0) || p->density_mass > 1e9) {
		bb_err_set(err, "density mass must be in [0, 1e9]");
		return BB_ERR_ARG;
	}
	if (!(p->penalty_x >= 0) || !(p->penalty_y >= 0) || !(p->penalty_z >= 0) ||
	    p->penalty_x > 100 || p->penalty_y > 100 || p->penalty_z > 100) {
		bb_err_set(err, "penalties must be in [0, 100]");
		return BB_ERR_ARG;
	}
	if (p->rounds < 1 || p->rounds > BB_NEST_ROUNDS_MAX) {
		bb_err_set(err, "rounds must be in [1, %d]", BB_NEST_ROUNDS_MAX);
		return BB_ERR_ARG;
	}
	if (p->scoreboard != BB_NEST_SB_AUTO && p->scoreboard != BB_NEST_SB_EDGE &&
	    p->scoreboard != BB_NEST_SB_CALLER && p->scoreboard != BB_NEST_SB_PAPER) {
		bb_err_set(err, "unknown scoreboard kind");
		return BB_ERR_ARG;
	}
	if (p->return_score < BB_NEST_AUTO || p->return_score > 1 || p->global < BB_NEST_AUTO ||
	    p->global > 1) {
		bb_err_set(err, "return_score and global are 0, 1 or automatic");
		return BB_ERR_ARG;
	}
	if (p->skew_window_ns < 0 || p->open_timeout_ns < 0) {
		bb_err_set(err, "skew window and timeout must not be negative");
		return BB_ERR_ARG;
	}
	return 0;
}

/* Fills a zeroed n from its params and mode. */
static void nest_init(struct bb_nest *n)
{
	if (n->cfg.p.scoreboard == BB_NEST_SB_AUTO)
		n->cfg.p.scoreboard =
		    n->cfg.p.skew_window_ns > 0 ? BB_NEST_SB_PAPER : BB_NEST_SB_EDGE;
	/* the timing-only bound sees times alone */
	if (n->cfg.p.bound)
		n->cfg.p.content = 0;
	/* The oracle matches parents by path id, so a wide window cannot pair the
	 * wrong calls; it only keeps clock skew from breaking the true trees. */
	if (n->cfg.mode == BB_NEST_ORACLE && n->cfg.p.skew_window_ns < BB_NEST_ORACLE_WINDOW_NS)
		n->cfg.p.skew_window_ns = BB_NEST_ORACLE_WINDOW_NS;
	nest_bins_init(&n->cfg.bins, n->cfg.p.bin_min_ns, n->cfg.p.bin_max_ns, n->cfg.p.bin_base);
	nest_bin_weights(n); /* the scoreboard's factors */
	nest_penalty_tables(n);
	nest_nodes_init(&n->nodes);
	nest_pats_init(&n->pats);
}

/* The parents --global chose, and its ambiguity marks. */
static void solve_drop_choices(struct nest_solve *sv)
{
	free(sv->gpar);
	free(sv->ramb);
	free(sv->cyc);
	sv->cyc = NULL;
	sv->ncyc = 0;
	nest_post_free(&sv->post);
	sv->gpar = NULL;
	sv->ramb = NULL;
}

/* The choices of all parents at once. */
static void solve_free(struct bb_nest *n)
{
	nest_global_free(n);
	nest_bound_free(n);
	solve_drop_choices(&n->solve);
	free(n->solve.acap);
	n->solve.acap = NULL;
	n->solve.nacap = 0;
}

/* Frees everything n holds, but not n: part by part. */
static void nest_clear(struct bb_nest *n)
{
	nest_export_free(&n->ex);
	nest_pats_free(&n->pats);
	nest_calls_free(&n->calls);
	nest_nodes_free(&n->nodes);
	nest_recs_free(&n->recs, 0);
	nest_content_free(n);
	nest_seq_free(n);
	solve_free(n);
	nest_board_free(&n->board);
	nest_bins_free(&n->cfg.bins);
}

struct bb_nest *bb_nest_new(const struct bb_nest_params *p, enum bb_nest_mode mode)
{
	struct bb_nest *n = bb_xcalloc(1, sizeof(*n));
	n->cfg.p = *p;
	n->cfg.mode = mode;
	nest_init(n);
	return n;
}

/* Back to the state of bb_nest_new, for a fresh pass 1; keeps the progress
 * callback, the instances wanted and the heap peak. */
static void nest_restart(struct bb_nest *n)
{
	struct bb_nest keep = *n;
	nest_clear(n);
	memset(n, 0, sizeof(*n));
	n->cfg.p = keep.cfg.p;
	n->cfg.mode = keep.cfg.mode;
	n->cfg.auto_rs = keep.cfg.auto_rs;
	n->cfg.auto_g = keep.cfg.auto_g;
	n->phase.progress = keep.phase.progress;
	n->phase.progress_ctx = keep.phase.progress_ctx;
	n->inst = keep.inst;
	nest_inst_restart(n->inst);
	n->phase.heap_peak = keep.phase.heap_peak;
	n->recs.rec_max = keep.recs.rec_max;
	n->recs.in_len = keep.recs.in_len;
	nest_init(n);
}

void bb_nest_free(struct bb_nest *n)
{
	if (!n)
		return;
	nest_clear(n);
	nest_inst_free(n->inst);
	free(n);
}

void bb_nest_set_progress(struct bb_nest *n, bb_nest_progress_fn fn, void *ctx)
{
	n->phase.progress = fn;
	n->phase.progress_ctx = ctx;
}

/* One pass over a new reader of the trace. */
static int one_pass(struct bb_nest *n, int pass, struct bb_tsrc *src,
                    const struct bb_reader_opts *ro, struct bb_err *err)
{
	struct bb_reader *r = bb_tsrc_reader(src, ro, err);
	if (!r)
		return BB_ERR_IO;
	n->phase.pass = pass;
	int rc = nest_pass(n, r, err);
	bb_reader_free(r);
	return rc;
}

/* Before pass 1: what the automatic options start from and the records'
 * budget. Pass 1 records the messages (16 bytes each) while they fit in the
 * memory budget, and pass 2 replays them; over the budget (or with the
 * budget 0) pass 2 reads the trace again. A file's size tells at the start
 * whether it can fit (a trace line is well over 32 bytes), so a long trace
 * streams from the first line and its memory stays flat. */
static void plan(struct bb_nest *n, int in_mem, size_t len, int bound)
{
	n->cfg.auto_rs = n->cfg.p.return_score == BB_NEST_AUTO;
	n->cfg.auto_g = n->cfg.p.global == BB_NEST_AUTO;
	if (n->cfg.auto_rs)
		n->cfg.p.return_score = n->cfg.mode == BB_NEST_INFER && !bound;
	if (n->cfg.auto_g)
		n->cfg.p.global = 0; /* decided after pass 1 */
	n->recs.rec_max =
	    n->cfg.p.memory_bytes /
	    (sizeof(struct mrec) + (n->cfg.mode == BB_NEST_ORACLE || bound ? sizeof(uint32_t) : 0) +
	     (bound ? sizeof(uint32_t) : 0) +
	     (n->cfg.mode == BB_NEST_INFER && (n->cfg.p.return_score || bound) ? sizeof(int64_t)
	                                                                       : 0));
	n->phase.recording = n->recs.rec_max > 0 && (!in_mem || len / 32 <= n->recs.rec_max);
	n->recs.in_len = in_mem ? len : 0;
	if (n->cfg.auto_rs && !n->phase.recording)
		n->cfg.p.return_score = 0;
}

/* Pass 1. A trace in memory is read with a small reorder window first: the
 * reader hands out the same records in the same order with any window that
 * it does not fail on, and a small one keeps its memory (about 2 MB for
 * 4096 pending lines) and cache footprint small. A trace out of order
 * further than the window fails with it where the disorder shows and is
 * read again with the full one. (A scan of the first 4096 lines' times
 * chose the window before: 0.9% of table1-short's instructions, and a
 * disorder among those lines costs the restart no more than the scan.) */
static int pass1(struct bb_nest *n, struct bb_tsrc *src, struct bb_reader_opts *o,
                 struct bb_err *err)
{
	size_t len = 0;
	int small = !o->lenient && !o->window && bb_tsrc_in_memory(src, &len);
	if (small)
		o->window = 16;
	int rc = one_pass(n, 1, src, o, err);
	if (rc < 0 && small) {
		/* out of order after all (or a bad line): again with the full window */
		nest_restart(n);
		n->phase.recording = n->recs.rec_max > 0 && len / 32 <= n->recs.rec_max;
		o->window = 0;
		rc = one_pass(n, 1, src, o, err);
	}
	if (rc >= 0 && n->cfg.mode == BB_NEST_INFER) {
		nest_triple_norms(n);
		nest_smooth(n);
		nest_densities(n, NEST_DENS_CALL);
		nest_parallel_nodes(n);
		nest_alias_roots(n);
	}
	return rc;
}

/* After pass 1: what the automatic choice takes, and why. */
static void decide_auto(struct bb_nest *n, int rc, int bound)
{
	if (rc >= 0 && n->phase.recording && n->cfg.auto_g && n->cfg.mode == BB_NEST_INFER &&
	    !bound) {
		uint64_t need = n->st.candidates * 16 + n->st.children * 24;
		n->cfg.p.global = need <= NEST_AUTO_GLOBAL_BYTES && need <= n->cfg.p.memory_bytes;
		n->cfg.auto_why =
		    n->cfg.p.global ? "messages in memory" : "too many candidates for --global";
	} else if (n->cfg.auto_g || n->cfg.auto_rs) {
		n->cfg.auto_why = rc >= 0 && !n->phase.recording ? "messages not in memory" : "";
	}
	if (n->cfg.auto_rs && !n->phase.recording)
		n->cfg.p.return_score = 0;
}

/* The last replay's counts size the candidates' arrays (a replay finds the
 * same children; a hint only, within the budget). */
static void glob_hints(struct bb_nest *n)
{
	size_t most = n->cfg.p.memory_bytes / 16;
	n->solve.glob.hintch = n->st.children < most ? n->st.children : most;
	n->solve.glob.hintent = n->st.candidates < most ? n->st.candidates : most;
}

/* A round's solve, without what it never reads: the records' call and
 * return times and the context's CSR (the round before's parents, which
 * the refinement compares with, are held per record) are freed while it
 * runs and made again after; the context only after the last round (moved:
 * the context holds the round before's parents; last: the last round). */
static void solve_lean(struct bb_nest *n, int moved, int last)
{
	int rret = n->recs.rret != NULL;
	nest_seq_times_drop(n);
	if (rret)
		nest_rret_drop(n);
	n->solve.gprev = moved ? nest_seq_ctx_hold(n) : NULL;
	nest_global_solve(n);
	if (n->solve.settled || last)
		nest_seq_ctx_again(n, n->solve.gprev); /* the last replay's */
	else
		free(n->solve.gprev); /* the next round makes its own */
	n->solve.gprev = NULL;
	if (rret)
		nest_rret_again(n);
	nest_seq_times_again(n);
}

/* --global: a replay collects every child's candidates, then all parents are
 * chosen at once. Each later round scores with the round before's parents as
 * context (overlaps, anchors) instead of the greedy ones: 0.3-1.6 points
 * fewer wrong on the generated loads (docs/accuracy.md); without --sequence,
 * it also measures a child from its candidate's previous child where the
 * round before's gaps say so (nest_seq_from_assignment). A round after one
 * whose changes were few decides only the children near them again
 * (nest_global.c, near_changes). */
static void global_rounds(struct bb_nest *n)
{
	n->solve.settled = 0;
	const int rounds = (int)n->cfg.p.rounds;
	for (int r = 0; r < rounds && !n->solve.settled; r++) {
		int moved = 0;
		if (r)
			nest_content_relearn(n); /* from the round before's parents */
		if (r && !n->cfg.p.sequence)
			moved = nest_seq_from_assignment(n);
		else if (r)
			moved = nest_seq_from_global(n);
		n->solve.last_round = r == rounds - 1;
		n->solve.round = r;
		if (r)
			nest_queue_starts(n);
		if (moved) {
			/* the context holds the parents: none kept twice */
			free(n->solve.gpar);
			n->solve.gpar = NULL;
		}
		n->phase.gstage = 1;
		if (n->solve.glob.keep && (r || n->solve.glob.have)) {
			/* a replay would find the same children and candidates */
			nest_global_rescore(n);
		} else {
			glob_hints(n);
			/* the return times stand for the replay's calls */
			n->solve.glob.keep = n->recs.rret != NULL;
			nest_replay(n);
		}
		n->phase.gstage = 0;
		n->st.global_rounds++;
		if (!n->solve.glob.full) {
			nest_queue_weigh(n);
			solve_lean(n, moved, r == rounds - 1);
			n->st.global_used = 1;
		} else if (moved) {
			n->solve.gpar = nest_seq_parents(n); /* the last round's stand */
		}
		nest_global_round_end(n);
	}
	nest_global_free(n);
	free(n->solve.gdirty);
	n->solve.gdirty = NULL;
	if (n->st.global_used)
		nest_caps_note(n);
}

/* Pass 2 from the records: the stages that learn from a replay, then the
 * replay that chooses the parents and makes the paths. */
static void replay_stages(struct bb_nest *n, int bound)
{
	n->phase.recording = 0;
	n->phase.pass = 2;
	if (n->cfg.mode == BB_NEST_INFER && n->content.rtok) {
		/* what each edge's tokens are worth */
		n->phase.cstage = 1;
		nest_replay(n);
		n->phase.cstage = 0;
		nest_content_finish(n);
	}
	if (n->recs.rret && n->cfg.p.return_score && !bound) {
		/* --return-score: a first replay builds the return-side histograms;
		 * with --global it also collects the children and their candidates,
		 * which the rounds score (nest_global_rescore) */
		struct nest_global *g = &n->solve.glob;
		g->keep = n->cfg.mode == BB_NEST_INFER && n->cfg.p.global;
		glob_hints(n);
		n->phase.rstage = 1;
		nest_replay(n);
		n->phase.rstage = 0;
		g->have = g->keep && !g->full;
		if (!g->have)
			nest_global_free(n); /* the rounds replay */
		nest_densities(n, NEST_DENS_RETURN);
		n->st.return_scored = 1;
	}
	if (n->cfg.mode == BB_NEST_INFER && n->cfg.p.global && !n->cfg.p.sequence && !bound &&
	    n->recs.rret) {
		/* --global alone: the sequence stage would choose parents only to
		 * drop them (nest_seq_stage_end) and note each call's times, which
		 * the records hold (the call's, and pass 1's return in rret) */
		nest_seq_times(n, n->solve.glob.have);
	} else if (n->cfg.mode == BB_NEST_INFER && (n->cfg.p.sequence || n->cfg.p.global) &&
	           !bound) {
		/* the sequence gaps (nest_seq.c); the stage's statistics are not the run's */
		nest_seq_stage_begin(n);
		struct bb_nest_stats keep = n->st;
		n->phase.sstage = 1;
		nest_replay(n);
		n->phase.sstage = 0;
		n->st = keep;
		nest_seq_stage_end(n);
	}
	if (bound) {
		/* --bound: a replay collects every child's candidates and true
		 * parent, then the bound chooses all parents at once */
		n->phase.gstage = 1;
		nest_replay(n);
		n->phase.gstage = 0;
		nest_bound_solve(n);
		nest_global_free(n);
	} else if (n->cfg.mode == BB_NEST_INFER && n->cfg.p.global) {
		global_rounds(n);
	}
	nest_replay(n);
	nest_intervals(n);
	nest_post_free(&n->solve.post);
}

/* After the run: what only the passes needed. */
static void drop_records(struct bb_nest *n)
{
	n->phase.recording = 0;
	nest_recs_free(&n->recs, 1); /* reqs stays: the patterns' labels */
	solve_drop_choices(&n->solve);
	nest_content_free(n);
	nest_seq_free(n);
}

static int run(struct bb_nest *n, struct bb_tsrc *src, const struct bb_reader_opts *ro,
               struct bb_err *err)
{
	if (n->phase.pass) {
		bb_err_set(err, "a nesting run reads one trace only");
		return BB_ERR_ARG;
	}
	size_t len;
	int in_mem = bb_tsrc_in_memory(src, &len);
	int bound = n->cfg.mode == BB_NEST_INFER && n->cfg.p.bound;
	plan(n, in_mem, len, bound);
	struct bb_reader_opts o = {0};
	if (ro)
		o = *ro;
	int rc = pass1(n, src, &o, err);
	decide_auto(n, rc, bound);
	if (rc >= 0 && n->phase.recording) {
		bb_tsrc_unmap(src); /* no pass reads it again */
		nest_recs_early(n);
		nest_recs_trim(n);
		nest_durations(n);
		replay_stages(n, bound);
	} else if (rc >= 0) {
		rc = one_pass(n, 2, src, &o, err);
	}
	drop_records(n);
	return rc;
}

int bb_nest_run_stream(struct bb_nest *n, FILE *fp, const char *name,
                       const struct bb_reader_opts *ro, struct bb_err *err)
{
	struct bb_tsrc *src = bb_tsrc_stream(fp, name, BB_TSRC_READ_MAX);
	int rc = run(n, src, ro, err);
	bb_tsrc_free(src);
	return rc;
}

int bb_nest_run_mem(struct bb_nest *n, const char *buf, size_t len, const char *name,
                    const struct bb_reader_opts *ro, struct bb_err *err)
{
	struct bb_tsrc *src = bb_tsrc_mem(buf, len, name);
	int rc = run(n, src, ro, err);
	bb_tsrc_free(src);
	return rc;
}

size_t bb_nest_assumed_caps(const struct bb_nest *n, const struct bb_nest_cap **caps)
{
	*caps = n->solve.acap;
	return n->solve.nacap;
}

void bb_nest_get_stats(const struct bb_nest *n, struct bb_nest_stats *st)
{
	*st = n->st;
	st->heap_peak = n->phase.heap_peak;
	st->mean_parallelism = st->children ? (double)st->candidates / (double)st->children : 0;
}

static struct bb_vval *params_vval(const struct bb_nest *n)
{
	const struct bb_nest_params *p = &n->cfg.p;
	struct bb_vval *o = bb_vval_object();
	bb_vval_set_str(o, "mode", n->cfg.mode == BB_NEST_ORACLE ? "oracle" : "inferred");
	bb_vval_set_int(o, "bin_min_ns", p->bin_min_ns);
	bb_vval_set_int(o, "bin_max_ns", p->bin_max_ns);
	bb_vval_set_num(o, "bin_base", p->bin_base);
	bb_vval_set_int(o, "bins", n->cfg.bins.n);
	bb_vval_set_num(o, "smooth_sigma", p->smooth_sigma);
	bb_vval_set_str(o, "score", p->score_density ? "density" : "mass");
	bb_vval_set_num(o, "density_mass", p->score_density ? p->density_mass : 0);
	static const char *const sb[] = {"auto", "edge", "caller", "paper"};
	bb_vval_set_str(o, "scoreboard", (unsigned)p->scoreboard < 4 ? sb[p->scoreboard] : "?");
	struct bb_vval *pen = bb_vval_set(o, "penalty", bb_vval_array());
	bb_vval_push(pen, bb_vval_num(p->penalty_x));
	bb_vval_push(pen, bb_vval_num(p->penalty_y));
	bb_vval_push(pen, bb_vval_num(p->penalty_z));
	bb_vval_set_int(o, "skew_window_ns", p->skew_window_ns);
	bb_vval_set_int(o, "open_timeout_ns", p->open_timeout_ns);
	bb_vval_set(o, "return_score", bb_vval_bool(p->return_score));
	if (n->cfg.mode == BB_NEST_INFER && (n->cfg.auto_rs || n->cfg.auto_g)) {
		/* what the automatic choice took, and why: only the options it
		 * chose (those the user gave are the user's) */
		struct bb_vval *a = bb_vval_set(o, "auto", bb_vval_object());
		if (n->cfg.auto_rs)
			bb_vval_set(a, "return_score", bb_vval_bool(p->return_score));
		if (n->cfg.auto_g)
			bb_vval_set(a, "global", bb_vval_bool(p->global));
		bb_vval_set_str(a, "why", n->cfg.auto_why ? n->cfg.auto_why : "");
	}
	if (p->reassign)
		bb_vval_set(o, "reassign", bb_vval_bool(1));
	if (p->global) {
		bb_vval_set(o, "global", bb_vval_bool(1));
		bb_vval_set_int(o, "rounds", (int64_t)p->rounds);
	}
	bb_vval_set(o, "content", bb_vval_bool(p->content));
	if (p->sequence)
		bb_vval_set(o, "sequence", bb_vval_bool(1));
	if (p->bound)
		bb_vval_set(o, "bound", bb_vval_bool(1));
	bb_vval_set_str(o, "rank", p->rank == BB_NEST_RANK_COUNT ? "count" : "latency");
	bb_vval_set_int(o, "top", (int64_t)p->top);
	bb_vval_set_int(o, "min_count", (int64_t)p->min_count);
	return o;
}

static struct bb_vval *stats_vval(const struct bb_nest *n)
{
	struct bb_nest_stats st;
	bb_nest_get_stats(n, &st);
	struct bb_vval *o = bb_vval_object();
	bb_vval_set_int(o, "messages", (int64_t)st.messages);
	int64_t dur = 0; /* saturated: a trace may span more than int64 nanoseconds */
	if (st.messages && __builtin_sub_overflow(st.last_ns, st.first_ns, &dur))
		dur = INT64_MAX;
	bb_vval_set_int(o, "duration_ns", dur);
	bb_vval_set_int(o, "calls", (int64_t)st.calls);
	bb_vval_set_int(o, "returns", (int64_t)st.returns);
	bb_vval_set_int(o, "call_pairs", (int64_t)st.call_pairs);
	bb_vval_set_int(o, "unmatched_calls", (int64_t)st.unmatched_calls);
	bb_vval_set_int(o, "unmatched_returns", (int64_t)st.unmatched_returns);
	bb_vval_set_int(o, "evicted_calls", (int64_t)st.evicted);
	bb_vval_set_int(o, "child_calls", (int64_t)st.children);
	bb_vval_set_num(o, "mean_parallelism", round(st.mean_parallelism * 1e6) / 1e6);
	bb_vval_set_int(o, "instances", (int64_t)st.roots);
	bb_vval_set_int(o, "orphaned_calls", (int64_t)st.orphans);
	bb_vval_set_int(o, "patterns", (int64_t)st.patterns);
	bb_vval_set_int(o, "patterns_shown", (int64_t)n->ex.norder);
	bb_vval_set_int(o, "triples", (int64_t)st.triples);
	bb_vval_set_int(o, "skipped_lines", (int64_t)st.skipped);
	if (n->cfg.p.return_score)
		bb_vval_set(o, "return_scored", bb_vval_bool(st.return_scored));
	if (n->cfg.p.reassign)
		bb_vval_set(o, "reassigned", bb_vval_int((int64_t)st.reassigned));
	if (n->cfg.p.global) {
		bb_vval_set(o, "global_used", bb_vval_bool(st.global_used));
		bb_vval_set_int(o, "global_searched", (int64_t)st.global_searched);
		bb_vval_set_int(o, "global_over", (int64_t)st.global_over);
		bb_vval_set_int(o, "global_refined", (int64_t)st.global_refined);
		bb_vval_set_int(o, "global_refine_stopped", (int64_t)st.global_refine_stopped);
		bb_vval_set_int(o, "global_rounds", (int64_t)st.global_rounds);
		bb_vval_set_int(o, "global_cycled", (int64_t)st.global_cycled);
		bb_vval_set_int(o, "global_near_rounds", (int64_t)st.global_near_rounds);
		bb_vval_set_int(o, "global_near_children", (int64_t)st.global_near_children);
		struct bb_vval *a = bb_vval_set(o, "assumed_capacities", bb_vval_array());
		for (size_t i = 0; i < n->solve.nacap; i++) {
			const struct bb_nest_cap *c = &n->solve.acap[i];
			struct bb_vval *e = bb_vval_push(a, bb_vval_object());
			bb_vval_set_str(e, "node", c->node);
			bb_vval_set_int(e, "children", (int64_t)c->children);
			bb_vval_set_int(e, "calls", (int64_t)c->calls);
			bb_vval_set_int(e, "calls_sure", (int64_t)c->calls_sure);
		}
	}
	if (n->cfg.mode == BB_NEST_ORACLE)
		bb_vval_set_int(o, "calls_without_path", (int64_t)st.no_path);
	if (n->cfg.mode == BB_NEST_INFER) {
		bb_vval_set_int(o, "parallel_nodes", (int64_t)st.parallel_nodes);
		bb_vval_set_int(o, "ambiguous_calls", (int64_t)st.ambiguous);
		bb_vval_set_int(o, "ambiguous_instances", (int64_t)st.ambiguous_instances);
	}
	if (n->cfg.p.content && n->cfg.mode == BB_NEST_INFER) {
		bb_vval_set_int(o, "content_calls", (int64_t)st.content_calls);
		bb_vval_set_int(o, "content_exact", (int64_t)st.content_exact);
		bb_vval_set_int(o, "content_edges", (int64_t)st.content_edges);
		if (st.bad_content)
			bb_vval_set_int(o, "bad_content", (int64_t)st.bad_content);
	}
	if (n->cfg.p.bound) {
		bb_vval_set(o, "bound_used", bb_vval_bool(st.bound_used));
		bb_vval_set_int(o, "bound_children", (int64_t)st.bound_children);
	}
	if (n->bound_set) {
		/* the timing-only bound of the same trace (bbnest --bound) */
		struct bb_vval *b = bb_vval_set(o, "bound", bb_vval_object());
		bb_vval_set_int(b, "instances_fn", (int64_t)n->bound_fn);
		bb_vval_set_int(b, "instances_true", (int64_t)n->bound_true);
		bb_vval_set_num(b, "wrong_share",
		                n->bound_true ? round(1e6 * (double)n->bound_fn /
		                                      (double)n->bound_true) / 1e6
		                              : 0);
	}
	return o;
}

void bb_nest_set_bound(struct bb_nest *n, const struct bb_nest_accuracy *bound)
{
	n->bound_set = 1;
	n->bound_fn = bound->instances_fn;
	n->bound_true = bound->instances_true;
}

const struct bb_vpatterns *bb_nest_patterns(struct bb_nest *n)
{
	nest_export(n);
	bb_vval_free(n->ex.params);
	bb_vval_free(n->ex.stats);
	n->ex.params = params_vval(n);
	n->ex.stats = stats_vval(n);
	n->ex.out.params = n->ex.params;
	n->ex.out.stats = n->ex.stats;
	n->ex.out.accuracy = NULL;
	return &n->ex.out;
}

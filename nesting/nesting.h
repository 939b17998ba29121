/* nesting.h - the nesting algorithm (paper section 5.1): call pairs, scoreboard, parents, path patterns */
/* SPDX-License-Identifier: MIT */
#ifndef BB_NESTING_H
#define BB_NESTING_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace/trace.h"
#include "viz/viz.h"

/* How patterns are ranked: by total latency (count x mean root latency, as
 * figure 11) or by instance count. */
enum bb_nest_rank { BB_NEST_RANK_LATENCY = 0, BB_NEST_RANK_COUNT = 1 };

/* What the scoreboard keeps a delay histogram per (docs/nesting.md):
 * EDGE: per (B, C), all callers A of B pooled;
 * CALLER: per (A, B, C), as the paper, each scaled by 1 / (A->B call pairs);
 * PAPER: per (A, B, C), unscaled;
 * AUTO, the default: EDGE, or PAPER with a skew window (the callers' clocks
 * disagree, so each caller's delays need their own histogram). */
enum bb_nest_scoreboard {
	BB_NEST_SB_AUTO = 0,
	BB_NEST_SB_EDGE = 1,
	BB_NEST_SB_CALLER = 2,
	BB_NEST_SB_PAPER = 3
};

/* How a child call gets its parent: inferred from the scoreboard (the nesting
 * algorithm), or read from the ground truth (`path=` attributes, the oracle). */
enum bb_nest_mode { BB_NEST_INFER = 0, BB_NEST_ORACLE = 1 };

/* return_score and global: chosen per trace (docs/nesting.md, "Defaults"):
 * both on when the messages fit in memory, --global while its candidates
 * fit NEST_AUTO_GLOBAL_BYTES; the JSON params say what was chosen. */
#define BB_NEST_AUTO (-1)

struct bb_nest_params {
	int64_t bin_min_ns;      /* scoreboard and latency bins: [min, max) in log bins */
	int64_t bin_max_ns;      /* below min and at or above max: one bin each */
	double bin_base;         /* ratio between bin edges, 1.05 */
	double smooth_sigma;     /* Gaussian smoothing of each histogram, in bins; 0 = off */
	double density_mass;     /* with density scores: each bin's density from the
	                            narrowest window of bins around it that holds this
	                            much mass (children), a nearest-neighbour estimate
	                            (default 3; 0: each bin alone; docs/nesting.md,
	                            "Densities") */
	double penalty_x;        /* overlapping-child penalty exponent */
	double penalty_y;        /* same-child penalty exponent */
	double penalty_z;        /* generic-child penalty exponent */
	int64_t skew_window_ns;  /* loosens the nesting comparisons (section 7.5.6) */
	int64_t open_timeout_ns; /* a call open longer than this is evicted, unmatched */
	enum bb_nest_rank rank;
	size_t top;              /* keep the first N patterns; 0 = all */
	uint64_t min_count;      /* drop patterns with fewer instances */
	int score_density;       /* score = scoreboard mass / bin width (default); 0: raw mass */
	enum bb_nest_scoreboard scoreboard; /* what a delay histogram is kept per */
	int bins_in_output;      /* export histogram bins (JSON) */
	int return_score;        /* also score by the delay from the child's return to
	                            the parent's (needs the messages in memory: see
	                            docs/nesting.md, "Return-side score") */
	int reassign;            /* a parent call takes at most as many children into one
	                            callee as pass 1's call counts support; a child whose
	                            best parent is full may move a child out of it (see
	                            docs/nesting.md, "Reassignment") */
	int global;              /* choose all parents at once: the assignment with the
	                            highest product of scores under the capacities the
	                            call counts support (needs the messages in memory: see
	                            docs/nesting.md, "Global assignment") */
	unsigned rounds;         /* --global: at most this many rounds, each from the
	                            round before's parents (default 10; a round that
	                            settles is the last: docs/nesting.md, "At
	                            real load") */
	int sequence;            /* score a child by its gap from its candidate parent's
	                            start or previous child's return (docs/nesting.md,
	                            "Sequences"; needs the messages in memory) */
	int learn_parallel;      /* no overlap penalty at nodes seen calling in parallel
	                            (default 1) */
	int content;             /* weigh tok= and ctx= attributes as evidence (default 1;
	                            docs/nesting.md, "Content and context") */
	int bound;               /* the timing-only bound instead of the inference:
	                            parents by the likelihood of their times under the
	                            delay distributions the truth (path=) shows, with
	                            the true child counts (docs/nesting.md, "The
	                            timing-only bound"; needs the messages in memory) */
	size_t memory_bytes;     /* keep the trace's messages in memory for pass 2 up to
	                            this (16 bytes a message); above it, or 0, pass 2
	                            reads the trace again */
};

/* The default memory budget for pass 2's records: 256 MiB, about 16 million
 * messages (a trace file over 512 MiB streams at once). */
#define BB_NEST_MEMORY_DEFAULT ((size_t)256 << 20)

/* --rounds at most (params rounds). */
#define BB_NEST_ROUNDS_MAX 100

/* The oracle's skew window is at least this (100 ms): see bb_nest_new. */
#define BB_NEST_ORACLE_WINDOW_NS INT64_C(100000000)

/* Fills p with the defaults: bins 1 us .. 2 h in steps of 1.05, no smoothing,
 * penalties 2,0,0, density scores over windows of 3 children's mass, scoreboard AUTO, no skew window, 1 h open-call timeout,
 * rank by latency. */
void bb_nest_params_init(struct bb_nest_params *p);

/* Checks p; returns 0 or BB_ERR_ARG with err naming the bad field. */
int bb_nest_params_check(const struct bb_nest_params *p, struct bb_err *err);

struct bb_nest_stats {
	uint64_t messages;          /* records read (CALL, RET and MSG) */
	int64_t first_ns, last_ns;  /* first and last timestamps */
	uint64_t calls, returns;    /* CALL and RET records */
	uint64_t call_pairs;        /* returns matched to a call */
	uint64_t unmatched_calls;   /* calls never returned (at the end or evicted) */
	uint64_t unmatched_returns; /* returns with no open call */
	uint64_t evicted;           /* of unmatched_calls: open longer than the timeout */
	uint64_t children;          /* call pairs with at least one candidate parent */
	uint64_t candidates;        /* sum of |candidates| over those */
	double mean_parallelism;    /* candidates / children (section 5.1.2) */
	uint64_t roots;             /* call pairs with no parent: path instances */
	uint64_t orphans;           /* call pairs lost under a parent that never returned */
	uint64_t triples;           /* scoreboard histograms, (A, B, C) */
	uint64_t patterns;          /* distinct patterns, before pruning */
	uint64_t no_path;           /* oracle: calls without a path= attribute */
	uint64_t skipped;           /* bad lines skipped (lenient) */
	size_t peak_open;           /* most calls held at once */
	size_t heap_peak;           /* most heap in use at the samples (end of each pass and
	                               every 65536 records), bytes; 0 where unknown (not
	                               glibc) */
	int replayed;               /* pass 2 ran from the messages kept in memory */
	int return_scored;          /* the return-side score was used */
	uint64_t reassigned;        /* --reassign: children moved to another parent */
	int global_used;            /* --global: the parents were chosen at once */
	uint64_t global_searched;   /* --global: nodes the last round's path searches touched
	                               (a child joining by the direct path: none) */
	uint64_t global_over;       /* --global: children over a capacity at the end */
	uint64_t global_refined;    /* --global: children the callee sets moved (nest_refine.c) */
	uint64_t global_refine_stopped; /* --global: rounds whose refinement stopped at its
	                                   budget (NEST_REFINE_BUDGET) */
	uint64_t global_rounds;     /* --global: the rounds solved (params rounds at most) */
	uint64_t global_cycled;     /* --global: children kept back from a two-round cycle */
	uint64_t global_near_rounds; /* --global: rounds that decided only the children near
	                                the round before's changes (the rest kept) */
	uint64_t global_near_children; /* ... the children those rounds decided */
	uint64_t ambiguous;         /* children whose chosen parent had under NEST_AMB_SHARE
	                               of their candidates' scores */
	uint64_t ambiguous_instances; /* instances with such a child */
	uint64_t content_calls;     /* calls with tok= or ctx= kept */
	uint64_t content_exact;     /* children whose parent ctx= decided (pass 1) */
	uint64_t content_edges;     /* edges whose tokens carry evidence */
	uint64_t bad_content;       /* tok= or ctx= values that are not hex, left out */
	uint64_t parallel_nodes;    /* nodes seen calling in parallel (no overlap penalty) */
	int bound_used;             /* --bound: the parents are the bound's */
	uint64_t bound_children;    /* --bound: children with a true parent among the
	                               candidates (the ones it assigns) */
};

struct bb_nest;

/* Returns new (free with bb_nest_free); copies p. In BB_NEST_ORACLE mode the
 * skew window is raised to BB_NEST_ORACLE_WINDOW_NS if smaller. */
struct bb_nest *bb_nest_new(const struct bb_nest_params *p, enum bb_nest_mode mode);
void bb_nest_free(struct bb_nest *n);

/* Runs the whole algorithm over a seekable stream (two passes: the scoreboard,
 * then parents and paths). A regular file read from its start is mapped into
 * memory and parsed in place. Pass 2 replays the messages pass 1 kept when
 * they fit p->memory_bytes; otherwise the stream is rewound and read again.
 * Borrows fp; name is used in messages. Returns 0 or a negative bb_status
 * with err set. */
int bb_nest_run_stream(struct bb_nest *n, FILE *fp, const char *name,
                       const struct bb_reader_opts *ro, struct bb_err *err);
/* Same over memory (tests). Borrows buf. */
int bb_nest_run_mem(struct bb_nest *n, const char *buf, size_t len, const char *name,
                    const struct bb_reader_opts *ro, struct bb_err *err);

/* Optional progress: called every 2^16 records with the pass (1 or 2)
 * and the records read so far in it. */
typedef void (*bb_nest_progress_fn)(void *ctx, int pass, uint64_t records);
void bb_nest_set_progress(struct bb_nest *n, bb_nest_progress_fn fn, void *ctx);

/* Optional: every path instance of pass 2 as it completes (borrowed, valid
 * during the call), in viz's model. A non-zero return stops the calls (the
 * sink keeps its own error). Memory stays bounded by the open calls. NULL
 * fn turns it off. */
typedef int (*bb_nest_instance_fn)(void *ctx, const struct bb_vinstance *in);
void bb_nest_set_instances(struct bb_nest *n, bb_nest_instance_fn fn, void *ctx);

void bb_nest_get_stats(const struct bb_nest *n, struct bb_nest_stats *st);

/* A capacity --global took from pass 1's counts alone: the calls into node
 * made exactly `children` children each on average, and too few of them
 * were seen with all their children sure to show it (calls_sure). The
 * counts fit "every call makes that many", which the assignment then
 * enforced; a mix of calls that averages a whole number by chance fits
 * them too (docs/nesting.md, "Capacities"). */
struct bb_nest_cap {
	const char *node; /* borrowed: valid until bb_nest_free */
	uint32_t children;
	uint64_t calls, calls_sure;
};

/* The capacities the last run assumed (*caps borrowed, valid until
 * bb_nest_free); returns how many. */
size_t bb_nest_assumed_caps(const struct bb_nest *n, const struct bb_nest_cap **caps);

/* The scoreboard value of (a, b, c, delta) after pass 1 (smoothing, densities), for
 * tests; node names. 0 when the triple is unknown. */
double bb_nest_score(const struct bb_nest *n, const char *a, const char *b, const char *c,
                     int64_t delta_ns);

/* The ranked, pruned patterns with params and stats, in viz's model. The
 * result is borrowed: valid until bb_nest_free. accuracy is left NULL. */
const struct bb_vpatterns *bb_nest_patterns(struct bb_nest *n);

/* A pattern's canonical text, "A(B(C D))": node names in call order (caller
 * frees). i indexes bb_nest_patterns' order. */
char *bb_nest_pattern_key(const struct bb_nest *n, size_t i);

/* ---- scoring against the ground truth (section 7.5.1) ------------------------ */

#define BB_NEST_TOPN 30

struct bb_nest_accuracy {
	uint64_t patterns_fp, patterns_fn, patterns_inferred, patterns_true;
	uint64_t instances_fp, instances_fn, instances_inferred, instances_true;
	uint64_t messages_fp, messages_fn, messages_inferred, messages_true;
	/* topn_fn[t][N-1]: true top-N patterns (by count) missing from the inferred
	 * top N, at tolerance 0%, 2% and 6% (t = 0, 1, 2). */
	uint64_t topn_fn[3][BB_NEST_TOPN];
};

/* Records the timing-only bound's figures (a run with params.bound compared
 * with the oracle) in n, whose stats then carry them as "bound". */
void bb_nest_set_bound(struct bb_nest *n, const struct bb_nest_accuracy *bound);

/* Compares every pattern (before pruning) of inferred against oracle, both run
 * over the same trace. Fills acc. */
void bb_nest_compare(const struct bb_nest *inferred, const struct bb_nest *oracle,
                     struct bb_nest_accuracy *acc);
/* acc as {"patterns": {"fp", "fn", ...}, "instances": ..., "messages": ...,
 * "topn_fn": {"0": [...], "2": [...], "6": [...]}}. Returns new. */
struct bb_vval *bb_nest_accuracy_vval(const struct bb_nest_accuracy *acc);

#endif

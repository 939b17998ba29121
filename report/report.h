/* report.h - results that combine algorithms and outputs: a baseline against a slow run (bbdiff), the HTML report */
/* SPDX-License-Identifier: MIT */
#ifndef BB_REPORT_H
#define BB_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "nesting/nesting.h"
#include "trace/trace.h"
#include "viz/viz.h"

/* ---- one run: a trace through the nesting algorithm, or bbnest's JSON ---------- */

struct bb_rep_run;

/* Optional per-instance callback while a trace is nested (bbreport's time
 * series); NULL for none. */
struct bb_rep_load_opts {
	const struct bb_nest_params *nest; /* NULL: bbnest's defaults */
	const struct bb_reader_opts *reader;
	bb_nest_instance_fn on_instance;
	void *ctx;
};

/* The nesting options bbdiff and bbreport take, spelt as bbnest's: getopt_long
 * entries with values BASE .. BASE+3, and their usage lines. */
#define BB_REP_NEST_LONGOPTS(base)                                                          \
	{"penalty", required_argument, NULL, (base)},                                          \
	{"smooth", required_argument, NULL, (base) + 1},                                       \
	{"skew-window", required_argument, NULL, (base) + 2},                                  \
	{"global", no_argument, NULL, (base) + 3},                                             \
	{"greedy", no_argument, NULL, (base) + 4},                                             \
	{"no-content", no_argument, NULL, (base) + 5},                                         \
	{"return-score", no_argument, NULL, (base) + 6}
#define BB_REP_NEST_NOPTS 7
#define BB_REP_NEST_USAGE                                                                   \
	"      --penalty X,Y,Z    nesting: child penalty exponents (default 2,0,0)\n"         \
	"      --smooth SIGMA     nesting: Gaussian smoothing of the scoreboard, in bins\n"   \
	"      --skew-window D    nesting: loosen comparisons by D\n"                         \
	"      --global           nesting: choose all parents at once\n"                      \
	"      --greedy           nesting: the paper's choice, one child at a time\n"          \
	"      --no-content       nesting: ignore tok= and ctx= (times alone)\n"              \
	"      --return-score     nesting: also score by the return-side delay\n"
/* Applies nesting option k (0 .. BB_REP_NEST_NOPTS-1, in the order above)
 * with its argument to np. Returns 0, or -1 with err saying what is wrong
 * with arg. */
int bb_rep_nest_option(int k, const char *arg, struct bb_nest_params *np, struct bb_err *err);

/* Loads path: a file starting with '{' is bbnest --json output (read back),
 * anything else a trace (nested here, histogram bins kept). Returns new (free
 * with bb_rep_run_free) or NULL with err set. */
struct bb_rep_run *bb_rep_load(const char *path, const struct bb_rep_load_opts *o,
                               struct bb_err *err);
void bb_rep_run_free(struct bb_rep_run *r);
/* The run's patterns (borrowed, valid until bb_rep_run_free). */
const struct bb_vpatterns *bb_rep_patterns(const struct bb_rep_run *r);
/* Whether it was a trace (1) or JSON (0). */
int bb_rep_is_trace(const struct bb_rep_run *r);
/* The capacities the nesting of a trace assumed (bb_nest_assumed_caps; none
 * for JSON); *caps borrowed, valid until bb_rep_run_free. */
size_t bb_rep_assumed_caps(const struct bb_rep_run *r, const struct bb_nest_cap **caps);

/* ---- the comparison (bbdiff) ------------------------------------------------------- */

struct bb_rep_diff_params {
	double alpha;        /* family-wise error rate, Holm's correction (0.01) */
	int64_t min_delta_ns; /* smallest change of a delay worth reporting (1 ms) */
	double min_z;        /* and at least this many standard errors (4) */
	double min_share;    /* smallest change of a pattern's share of instances (0.02) */
	uint64_t min_count;  /* patterns with fewer instances in either run are not
	                        compared (10) */
};

void bb_rep_diff_params_init(struct bb_rep_diff_params *p);

enum bb_rep_kind {
	BB_REP_EDGE = 0,     /* the delay before from calls to: from -> to */
	BB_REP_NODE = 1,     /* a node's own time, after its last child returned */
	BB_REP_PATTERN = 2,  /* a pattern's share of the instances */
};

struct bb_rep_dist {     /* a pooled delay distribution */
	uint64_t n;
	double mean_ns;
	int64_t p50, p90, p99;
};

struct bb_rep_change {
	enum bb_rep_kind kind;
	const char *from;    /* EDGE: caller; NODE: the node; PATTERN: NULL */
	const char *to;      /* EDGE: callee; otherwise NULL */
	double delta_ns;     /* EDGE, NODE: the change of the mean that is its own
	                        (not what its children or earlier siblings added) */
	double p;            /* Holm-corrected p value */
	struct bb_rep_dist base, slow; /* EDGE, NODE: the raw delays, patterns pooled */
	double share_base, share_slow; /* PATTERN */
	uint64_t count_base, count_slow; /* PATTERN: instances */
	size_t npatterns;
	const char *const *patterns;   /* ids (bb_viz_shape_id) */
	const char *const *shapes;     /* their texts */
};

struct bb_rep_diff;

/* Compares slow against base. Both borrowed (the result points into them:
 * keep them until bb_rep_diff_free). Returns new, or NULL with err set (a
 * run without histogram bins). */
struct bb_rep_diff *bb_rep_diff_new(const struct bb_vpatterns *base,
                                    const struct bb_vpatterns *slow,
                                    const struct bb_rep_diff_params *p, struct bb_err *err);
void bb_rep_diff_free(struct bb_rep_diff *d);
/* The flagged changes, largest |delta| first (patterns after edges and
 * nodes, largest share change first). Borrowed. */
size_t bb_rep_diff_changes(const struct bb_rep_diff *d, const struct bb_rep_change **out);
/* What was compared: tests run, patterns matched, only in base, only in slow. */
void bb_rep_diff_counts(const struct bb_rep_diff *d, size_t *tests, size_t *matched,
                        size_t *only_base, size_t *only_slow);

/* The one-line verdict, "app2 -> pg +50.1 ms (p < 1e-6), nothing else
 * changed" (returns new, caller frees). */
char *bb_rep_diff_verdict(const struct bb_rep_diff *d);
/* The verdict, then a table of the changes. */
int bb_rep_diff_text(FILE *out, const struct bb_rep_diff *d, struct bb_err *err);
/* {"verdict", "changes": [{"kind", "from", "to", "delta_ms", "p", "patterns",
 *  "base", "slow"}...], "compared": {...}} */
int bb_rep_diff_json(FILE *out, const struct bb_rep_diff *d, struct bb_err *err);
/* The service graph of both runs with the changed edges and nodes in red
 * (and the verdict as its title). */
int bb_rep_diff_dot(FILE *out, const struct bb_rep_diff *d, struct bb_err *err);
/* The same graph (no title) as SVG, rendered in-process; returns new, caller
 * frees, or NULL with err set. */
char *bb_rep_diff_svg(struct bb_vsvg *r, const struct bb_rep_diff *d, size_t *len,
                      struct bb_err *err);
/* The two runs compared (borrowed). */
void bb_rep_diff_runs(const struct bb_rep_diff *d, const struct bb_vpatterns **base,
                      const struct bb_vpatterns **slow);

/* ---- the HTML report (bbreport) ------------------------------------------------------ */

/* Requests per second and latency over time, from the instances. */
struct bb_rep_series;
struct bb_rep_series *bb_rep_series_new(void); /* free with bb_rep_series_free */
void bb_rep_series_free(struct bb_rep_series *s);
/* Adds one instance; a bb_nest_instance_fn with ctx the series. Returns 0. */
int bb_rep_series_add(void *ctx, const struct bb_vinstance *in);

/* Writes one self-contained HTML page (no network: SVG inline, style and
 * script inline) about run, read from trace: the capture's health (its
 * #capture line), the patterns (a sortable table, the first top as graphs
 * rendered by Graphviz in-process; 0 = all), the nodes (a sortable table
 * with latency histograms), the requests and latency over time (ts, may be
 * NULL), and, with diff (may be NULL), bbdiff's verdict against baseline.
 * All borrowed. Returns 0 or a negative bb_status with err set. */
int bb_rep_html(FILE *out, const char *trace, const struct bb_rep_run *run,
                const struct bb_rep_series *ts, const struct bb_rep_diff *diff,
                const char *baseline, size_t top, struct bb_err *err);

#endif

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
	p->bins_in_output = 1;
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
	if (!(p->penalty_x >= 0) || !(p->penalty_y >= 0) || !(p->penalty_z >= 0) ||
	    p->penalty_x > 100 || p->penalty_y > 100 || p->penalty_z > 100) {
		bb_err_set(err, "penalties must be in [0, 100]");
		return BB_ERR_ARG;
	}
	if (p->skew_window_ns < 0 || p->open_timeout_ns < 0) {
		bb_err_set(err, "skew window and timeout must not be negative");
		return BB_ERR_ARG;
	}
	return 0;
}

struct bb_nest *bb_nest_new(const struct bb_nest_params *p, enum bb_nest_mode mode)
{
	struct bb_nest *n = bb_xcalloc(1, sizeof(*n));
	n->p = *p;
	n->mode = mode;
	/* The oracle matches parents by path id, so a wide window cannot pair the
	 * wrong calls; it only keeps clock skew from breaking the true trees. */
	if (mode == BB_NEST_ORACLE && n->p.skew_window_ns < BB_NEST_ORACLE_WINDOW_NS)
		n->p.skew_window_ns = BB_NEST_ORACLE_WINDOW_NS;
	nest_bins_init(&n->bins, p->bin_min_ns, p->bin_max_ns, p->bin_base);
	nest_bin_weights(n);
	n->names = bb_intern_new();
	n->keys = bb_intern_new();
	return n;
}

void bb_nest_free(struct bb_nest *n)
{
	if (!n)
		return;
	nest_export_free(n);
	bb_vval_free(n->params);
	bb_vval_free(n->stats);
	nest_patterns_free(n);
	nest_reset_calls(n);
	for (size_t i = 0; i < n->ntri; i++)
		free(n->tri[i].h);
	free(n->tri);
	free(n->tidx);
	free(n->binw);
	free(n->htab);
	free(n->into);
	free(n->rmap);
	free(n->skip);
	free(n->cand);
	free(n->kbuf);
	bb_intern_free(n->names);
	bb_intern_free(n->keys);
	free(n);
}

void bb_nest_set_progress(struct bb_nest *n, bb_nest_progress_fn fn, void *ctx)
{
	n->progress = fn;
	n->progress_ctx = ctx;
}

/* One pass over a new reader; src is a FILE (fp) or memory (buf). */
static int one_pass(struct bb_nest *n, int pass, FILE *fp, const char *buf, size_t len,
                    const char *name, const struct bb_reader_opts *ro, struct bb_err *err)
{
	struct bb_reader *r = fp ? bb_reader_fopen(fp, name, ro, err)
	                         : bb_reader_mem(buf, len, name, ro, err);
	if (!r)
		return BB_ERR_IO;
	n->pass = pass;
	int rc = nest_pass(n, r, err);
	bb_reader_free(r);
	return rc;
}

static int run(struct bb_nest *n, FILE *fp, const char *buf, size_t len, const char *name,
               const struct bb_reader_opts *ro, struct bb_err *err)
{
	if (n->pass) {
		bb_err_set(err, "a nesting run reads one trace only");
		return BB_ERR_ARG;
	}
	int rc = one_pass(n, 1, fp, buf, len, name, ro, err);
	if (rc < 0)
		return rc;
	if (n->mode == BB_NEST_INFER)
		nest_smooth(n);
	if (fp && fseek(fp, 0, SEEK_SET) != 0) {
		bb_err_set(err, "%s: cannot rewind for the second pass: %s", name, strerror(errno));
		return BB_ERR_IO;
	}
	return one_pass(n, 2, fp, buf, len, name, ro, err);
}

int bb_nest_run_stream(struct bb_nest *n, FILE *fp, const char *name,
                       const struct bb_reader_opts *ro, struct bb_err *err)
{
	return run(n, fp, NULL, 0, name, ro, err);
}

int bb_nest_run_mem(struct bb_nest *n, const char *buf, size_t len, const char *name,
                    const struct bb_reader_opts *ro, struct bb_err *err)
{
	return run(n, NULL, buf, len, name, ro, err);
}

void bb_nest_get_stats(const struct bb_nest *n, struct bb_nest_stats *st)
{
	*st = n->st;
	st->mean_parallelism = st->children ? (double)st->candidates / (double)st->children : 0;
}

static struct bb_vval *params_vval(const struct bb_nest *n)
{
	const struct bb_nest_params *p = &n->p;
	struct bb_vval *o = bb_vval_object();
	bb_vval_set_str(o, "mode", n->mode == BB_NEST_ORACLE ? "oracle" : "inferred");
	bb_vval_set_int(o, "bin_min_ns", p->bin_min_ns);
	bb_vval_set_int(o, "bin_max_ns", p->bin_max_ns);
	bb_vval_set_num(o, "bin_base", p->bin_base);
	bb_vval_set_int(o, "bins", n->bins.n);
	bb_vval_set_num(o, "smooth_sigma", p->smooth_sigma);
	bb_vval_set_str(o, "score", p->score_density ? "density" : "mass");
	struct bb_vval *pen = bb_vval_set(o, "penalty", bb_vval_array());
	bb_vval_push(pen, bb_vval_num(p->penalty_x));
	bb_vval_push(pen, bb_vval_num(p->penalty_y));
	bb_vval_push(pen, bb_vval_num(p->penalty_z));
	bb_vval_set_int(o, "skew_window_ns", p->skew_window_ns);
	bb_vval_set_int(o, "open_timeout_ns", p->open_timeout_ns);
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
	bb_vval_set_int(o, "duration_ns", st.messages ? st.last_ns - st.first_ns : 0);
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
	bb_vval_set_int(o, "patterns_shown", (int64_t)n->norder);
	bb_vval_set_int(o, "triples", (int64_t)st.triples);
	bb_vval_set_int(o, "skipped_lines", (int64_t)st.skipped);
	if (n->mode == BB_NEST_ORACLE)
		bb_vval_set_int(o, "calls_without_path", (int64_t)st.no_path);
	return o;
}

const struct bb_vpatterns *bb_nest_patterns(struct bb_nest *n)
{
	nest_export(n);
	bb_vval_free(n->params);
	bb_vval_free(n->stats);
	n->params = params_vval(n);
	n->stats = stats_vval(n);
	n->out.params = n->params;
	n->out.stats = n->stats;
	n->out.accuracy = NULL;
	return &n->out;
}

/* fuzz_nest.c - libFuzzer target: the nesting algorithm and its writers on arbitrary traces */
/* SPDX-License-Identifier: MIT */
/*
 * The input is a trace file. It goes through bbnest's whole path, leniently
 * as `bbnest --lenient` reads: the inferred run from memory (pass 2 replays
 * the kept messages), the oracle run from a stdio stream with no memory budget
 * (pass 2 rewinds and reads again), the accuracy comparison of the two, the
 * pattern keys, and the dot, JSON and text writers to /dev/null. A few
 * parameters (smoothing, skew window, ranking, pruning, the return-side score,
 * a same-child penalty) follow the input's length so that every branch is
 * reached from the same corpus.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "nesting/nesting.h"
#include "viz/viz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *devnull(void)
{
	static FILE *f;
	if (!f && !(f = fopen("/dev/null", "w")))
		abort();
	return f;
}

static void write_all(const struct bb_vpatterns *p)
{
	struct bb_err err;
	bb_viz_patterns_dot(devnull(), p, &err);
	bb_viz_patterns_json(devnull(), p, &err);
	bb_viz_patterns_text(devnull(), p, &err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bb_nest_params p;
	bb_nest_params_init(&p);
	p.smooth_sigma = size % 3 == 0 ? 1.5 : 0;
	p.skew_window_ns = size % 5 == 0 ? INT64_C(1000000) : 0;
	p.rank = size % 2 ? BB_NEST_RANK_COUNT : BB_NEST_RANK_LATENCY;
	p.top = size % 7 == 0 ? 2 : 0;
	p.min_count = size % 11 == 0 ? 2 : 0;
	p.score_density = size % 13 != 0;
	p.bins_in_output = 1;
	p.open_timeout_ns = size % 4 == 0 ? BB_NS_PER_S : p.open_timeout_ns;
	p.penalty_y = size % 19 == 0 ? 1 : 0;
	p.reassign = size % 23 < 12;
	/* the default (AUTO: --return-score --global when in memory) for most
	 * inputs; then the explicit sets and the stages added since */
	if (size % 29 >= 14) {
		p.global = size % 29 < 22;
		p.return_score = size % 17 < 8;
	}
	p.sequence = size % 31 == 0;
	p.content = size % 37 != 0;
	p.learn_parallel = size % 41 != 0;
	p.density_mass = size % 43 == 0 ? 0 : p.density_mass;
	if (size % 47 == 0) { /* the timing-only bound, from path=, as bbnest --bound runs it */
		p.bound = 1;
		p.return_score = p.reassign = p.global = 0;
	}
	struct bb_err err;
	if (bb_nest_params_check(&p, &err) != 0)
		abort();
	struct bb_reader_opts ro = {1, 0, 0};

	struct bb_nest *inf = bb_nest_new(&p, BB_NEST_INFER);
	int rc_inf = bb_nest_run_mem(inf, (const char *)data, size, "<fuzz>", &ro, &err);

	p.memory_bytes = 0;
	struct bb_nest *orc = bb_nest_new(&p, BB_NEST_ORACLE);
	int rc_orc = -1;
	FILE *fp = size ? fmemopen((void *)(uintptr_t)data, size, "r") : NULL;
	if (fp) {
		rc_orc = bb_nest_run_stream(orc, fp, "<fuzz-stream>", &ro, &err);
		fclose(fp);
	}

	struct bb_nest_stats st;
	bb_nest_get_stats(inf, &st);
	if (rc_inf == 0) {
		const struct bb_vpatterns *pats = bb_nest_patterns(inf);
		for (size_t i = 0; i < pats->n; i++)
			free(bb_nest_pattern_key(inf, i));
		(void)bb_nest_score(inf, "a", "b", "c", 1000);
		write_all(pats);
	}
	if (rc_orc == 0) {
		struct bb_vpatterns out = *bb_nest_patterns(orc);
		struct bb_vval *acc = NULL;
		if (rc_inf == 0) {
			struct bb_nest_accuracy a;
			bb_nest_compare(inf, orc, &a);
			acc = bb_nest_accuracy_vval(&a);
			out.accuracy = acc;
		}
		write_all(&out);
		bb_vval_free(acc);
	}
	bb_nest_free(inf);
	bb_nest_free(orc);
	return 0;
}

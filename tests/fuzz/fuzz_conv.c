/* fuzz_conv.c - libFuzzer target: the convolution algorithm and its writers on arbitrary traces */
/* SPDX-License-Identifier: MIT */
/*
 * The input is a trace file. It goes through bbconv's path, leniently as
 * `bbconv --lenient` reads: every record into bb_conv_add (with its path=
 * attribute when scoring against the truth), bb_conv_run, and the dot, JSON
 * and text writers to /dev/null. The parameters are small and bounded so
 * that one input runs in milliseconds: a quantum of 1 or 10 ms, a maximum
 * delay of at most 0.5 s (at most 500 lags), a 64 KiB spectrum cache, at most
 * 6 edges on a path, at most 64 vertices and 4,000 messages. The method
 * (auto, fft, direct), derived paths, min count, spike thresholds, truth and
 * an explicit root follow the input's length so that every branch is reached
 * from the same corpus.
 *
 * Invariants (abort() when broken): the parameters are accepted; a message
 * is refused exactly when its timestamp is outside BB_CONV_TS_MIN..MAX (then,
 * as bbconv does, nothing runs); the run
 * succeeds unless an explicit root is unknown; the graph has at most
 * max_vertices vertices, fewer edges than vertices, every edge between two
 * existing vertices from a lower to a higher id (depth-first order), and as
 * many messages counted as were added.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "convolution/convolution.h"
#include "viz/viz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_MSGS 4000

static FILE *devnull(void)
{
	static FILE *f;
	if (!f && !(f = fopen("/dev/null", "w")))
		abort();
	return f;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const root_a[] = {"a"};
	struct bb_conv_params p;
	bb_conv_params_default(&p);
	p.quantum_ns = size % 2 ? INT64_C(1000000) : INT64_C(10000000);
	p.max_delay_ns = (int64_t)(size % 5) * INT64_C(100000000) + INT64_C(20000000);
	p.tolerance_ns = size % 3 == 0 ? -1 : INT64_C(200000);
	p.skew_ns = size % 4 == 0 ? -1 : 0;
	p.spike_n = size % 6 == 0 ? 2 : 4;
	p.spike_s = size % 6 == 0 ? 0 : 3;
	p.min_count = size % 4;
	p.max_depth = 1 + (unsigned)(size % 6);
	p.max_vertices = 64;
	p.keep_derived = size % 2 == 0;
	p.truth = size % 5 == 0;
	p.method = (enum bb_conv_method)(size % 3);
	p.cache_bytes = (size_t)64 << 10;
	if (size % 7 == 0) {
		p.roots = root_a;
		p.nroots = 1;
	}
	struct bb_err err;
	struct bb_conv *c = bb_conv_new(&p, &err);
	if (!c)
		abort();

	struct bb_reader_opts ro = {.lenient = 1};
	struct bb_reader *r = bb_reader_mem((const char *)data, size, "<fuzz>", &ro, &err);
	uint64_t added = 0;
	int refused = 0;
	if (r) {
		struct bb_rec rec;
		while (added < MAX_MSGS && bb_reader_next(r, &rec, &err) > 0) {
			const char *path = p.truth ? bb_rec_attr(&rec, "path", NULL) : NULL;
			int in_range = rec.ts_ns >= BB_CONV_TS_MIN && rec.ts_ns <= BB_CONV_TS_MAX;
			int arc = bb_conv_add(c, rec.ts_ns, rec.op, bb_reader_node(r, rec.sender),
			                      bb_reader_node(r, rec.receiver), rec.id_str, rec.id_len,
			                      path, &err);
			/* only a timestamp out of range is refused; bbconv stops there */
			if ((arc != 0) == in_range)
				abort();
			if (arc != 0) {
				refused = 1;
				break;
			}
			added++;
		}
		bb_reader_free(r);
	}
	if (refused) {
		bb_conv_free(c);
		return 0;
	}

	int rc = bb_conv_run(c, &err);
	if (rc != 0 && !p.nroots)
		abort();
	if (rc == 0) {
		const struct bb_vgraph *g = bb_conv_graph(c);
		struct bb_conv_stats st;
		bb_conv_get_stats(c, &st);
		if (st.messages != added || g->nvertices > p.max_vertices ||
		    (g->nvertices == 0 && g->nedges != 0) ||
		    (g->nvertices && g->nedges >= g->nvertices))
			abort();
		for (size_t i = 0; i < g->nedges; i++)
			if (g->edges[i].from >= g->edges[i].to || g->edges[i].to >= g->nvertices)
				abort();
		bb_viz_graph_dot(devnull(), g, &err);
		bb_viz_graph_json(devnull(), g, &err);
		bb_viz_graph_text(devnull(), g, &err);
	}
	bb_conv_free(c);
	return 0;
}

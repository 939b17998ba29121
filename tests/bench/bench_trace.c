/* bench_trace.c - trace reader, interning and writer throughput and memory per message */
/* SPDX-License-Identifier: MIT */
/*
 * bench_trace [TRACE]
 *
 * Without an argument, writes a 2,000,000-line trace with the writer into a
 * temporary directory (typical lines: 40 nodes, a unique id per line, one
 * path= attribute), then reads it back with ids interned, keeping a compact
 * record per message as an analysis would. A second file has the same
 * messages with up to 50 us of timestamp jitter, so that about half the
 * lines arrive out of order inside the reorder window. With TRACE, reads
 * only that file. Prints lines, seconds (wall, and CPU), lines/s, MB/s (from
 * wall time) and bytes of memory per kept message (records array + node
 * table + id table, capacity included, divided by the records kept).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "trace/trace.h"

#define NLINES 2000000
#define NNODES 40

struct krec {
	int64_t ts_ns;
	uint32_t sender, receiver, id;
	uint8_t op;
};

static double clock_s(clockid_t id)
{
	struct timespec t;

	clock_gettime(id, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double now(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* CPU time of this process: steadier than wall time on a shared machine. */
static double cpu(void)
{
	return clock_s(CLOCK_PROCESS_CPUTIME_ID);
}

/* xorshift64*, a fixed seed: the same trace every run. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * UINT64_C(2685821657736338717);
}

static int generate(const char *path, int jitter)
{
	struct bb_err err;
	struct bb_writer *w = bb_writer_open(path, &err);
	char nodes[NNODES][16], id[24], path_val[24];
	uint64_t seed = 42;
	int64_t ts = INT64_C(1047680084482205000);
	double t0 = now();

	if (!w) {
		fprintf(stderr, "bench_trace: error: %s\n", err.msg);
		return -1;
	}
	static const char *const tiers[] = {"WS", "AUTH", "APP", "DB", "CACHE"};
	for (int i = 0; i < NNODES; i++)
		snprintf(nodes[i], sizeof nodes[i], "%s%d", tiers[i % 5], i / 5 + 1);
	bb_writer_meta(w, "source bench_trace", &err);
	for (int i = 0; i < NLINES; i++) {
		uint64_t r = rnd(&seed);
		int a = (int)(r % NNODES), b = (int)((r >> 8) % NNODES);
		int64_t t = ts;
		struct bb_attr attr = {"path", path_val, 4, 0};
		if (jitter)
			t += (int64_t)((r >> 20) % 100000) - 50000;
		snprintf(id, sizeof id, "%d", 100000 + i);
		attr.val_len = (uint32_t)snprintf(path_val, sizeof path_val, "web.%d", i / 8);
		if (bb_writer_put(w, t, (i & 1) ? BB_RET : BB_CALL, nodes[a],
		                  nodes[b == a ? (b + 1) % NNODES : b], id, 0, &attr, 1, &err)) {
			fprintf(stderr, "bench_trace: error: %s\n", err.msg);
			bb_writer_close(w, NULL);
			return -1;
		}
		ts += 500 + (int64_t)(r >> 40) % 200;
	}
	if (bb_writer_close(w, &err)) {
		fprintf(stderr, "bench_trace: error: %s\n", err.msg);
		return -1;
	}
	double dt = now() - t0;
	printf("write  %-9s %d lines  %.3f s  %.0f lines/s\n", jitter ? "jittered" : "in-order",
	       NLINES, dt, NLINES / dt);
	return 0;
}

static int bench_read(const char *path, const char *label)
{
	struct bb_reader_opts opts = {.intern_ids = 1};
	struct bb_reader_stats st;
	struct bb_err err;
	struct bb_rec rec;
	struct krec *recs = NULL;
	size_t n = 0, cap = 0;
	double t0 = now(), c0 = cpu(), dt, dc;
	int k;
	struct bb_reader *r = bb_reader_open(path, &opts, &err);

	if (!r) {
		fprintf(stderr, "bench_trace: error: %s\n", err.msg);
		return -1;
	}
	while ((k = bb_reader_next(r, &rec, &err)) == 1) {
		if (n == cap) {
			cap = cap ? cap * 2 : 1024;
			recs = realloc(recs, cap * sizeof *recs);
			if (!recs)
				abort();
		}
		recs[n++] = (struct krec){rec.ts_ns, rec.sender, rec.receiver, rec.id,
		                          (uint8_t)rec.op};
	}
	dt = now() - t0;
	dc = cpu() - c0;
	if (k < 0) {
		fprintf(stderr, "bench_trace: error: %s\n", err.msg);
		bb_reader_free(r);
		free(recs);
		return -1;
	}
	bb_reader_stats(r, &st);
	size_t bytes = cap * sizeof *recs + bb_intern_bytes(bb_reader_nodes(r)) +
	               bb_intern_bytes(bb_reader_ids(r));
	printf("read   %-9s %llu lines  %.3f s (cpu %.3f s)  %.0f lines/s  %.1f MB/s"
	       "  %.1f bytes/message  (%u nodes, %u ids, %llu reordered)\n",
	       label, (unsigned long long)st.lines, dt, dc, (double)st.lines / dt,
	       (double)st.bytes / dt / 1e6, n ? (double)bytes / (double)n : 0.0,
	       bb_intern_count(bb_reader_nodes(r)), bb_intern_count(bb_reader_ids(r)),
	       (unsigned long long)st.reordered);
	bb_reader_free(r);
	free(recs);
	return 0;
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/bench_trace.XXXXXX", p1[64], p2[64];
	struct rusage ru;
	int rc = 0;

	if (argc > 2 || (argc == 2 && !strcmp(argv[1], "-h"))) {
		fprintf(stderr, "usage: bench_trace [TRACE]\n");
		return 2;
	}
	if (argc == 2) {
		rc = bench_read(argv[1], "file");
	} else {
		if (!mkdtemp(dir)) {
			perror("bench_trace: error: mkdtemp");
			return 1;
		}
		snprintf(p1, sizeof p1, "%s/inorder.tr", dir);
		snprintf(p2, sizeof p2, "%s/jitter.tr", dir);
		rc = generate(p1, 0) || generate(p2, 1) || bench_read(p1, "in-order") ||
		     bench_read(p2, "jittered");
		unlink(p1);
		unlink(p2);
		rmdir(dir);
	}
	if (!getrusage(RUSAGE_SELF, &ru))
		printf("peak RSS %.1f MB\n", (double)ru.ru_maxrss / 1024.0);
	return rc ? 1 : 0;
}

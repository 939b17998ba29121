/* fuzz_trace.c - libFuzzer target: the v1 trace reader, and writer round trips */
/* SPDX-License-Identifier: MIT */
/*
 * The input is a trace file. It is read twice, strict and lenient, with a
 * small reorder window (1 to 8 lines, from the input's length) so that
 * out-of-order lines beyond the window are reached; each time both from
 * memory and through stdio (fmemopen), which must agree. Every record read (and
 * every metadata line) goes through a writer into memory; that canonical
 * output must then read back strictly with the same number of records, and
 * writing it again must give the same bytes. Breaking either is a bug in the
 * reader or the writer: abort().
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct out {
	char *buf;
	size_t len;
	uint64_t records;
};

/* Reads r to the end (or its first error), writing everything to o. Returns
 * the reader's last status (0 at a clean end). */
static int copy_through(struct bb_reader *r, struct out *o, struct bb_err *rerr)
{
	struct bb_err err;
	FILE *mf = open_memstream(&o->buf, &o->len);
	if (!mf)
		abort();
	struct bb_writer *w = bb_writer_fopen(mf, "<mem>", &err);
	if (!w)
		abort();
	for (size_t i = 0; i < bb_reader_nmeta(r); i++)
		bb_writer_meta(w, bb_reader_meta(r, i), &err);
	struct bb_rec rec;
	int rc;
	o->records = 0;
	while ((rc = bb_reader_next(r, &rec, rerr)) == 1) {
		/* Touch what a consumer would. */
		(void)bb_reader_node(r, rec.sender);
		(void)bb_reader_node(r, rec.receiver);
		(void)bb_rec_attr(&rec, "req", NULL);
		int w_rc = bb_writer_put_rec(w, r, &rec, &err);
		if (w_rc == 0)
			o->records++;
		else if (w_rc != BB_ERR_LIMIT) /* a line the writer would make too long */
			abort();
	}
	if (bb_writer_close(w, &err) != 0)
		abort();
	fclose(mf);
	return rc;
}

static void one_pass(const uint8_t *data, size_t size, int lenient)
{
	struct bb_reader_opts ro = {lenient, !lenient, 1 + size % 8};
	struct bb_err err;
	struct bb_reader *r = bb_reader_mem((const char *)data, size, "<fuzz>", &ro, &err);
	if (!r) {
		/* A bad header fails either way. */
		FILE *fp = size ? fmemopen((void *)(uintptr_t)data, size, "r") : NULL;
		if (fp) {
			r = bb_reader_fopen(fp, "<fuzz>", &ro, &err);
			fclose(fp);
			if (r) {
				fprintf(stderr,
				        "fuzz_trace: error: stdio opened what memory did not\n");
				abort();
			}
		}
		return;
	}
	struct out a = {0}, b = {0}, c = {0};
	int rc_mem = copy_through(r, &a, &err);
	struct bb_reader_stats st_mem;
	bb_reader_stats(r, &st_mem);
	bb_reader_free(r);

	/* The stdio reader (buffered reads, line joins across them) gives the
	 * same records, the same outcome and the same counts as the memory one. */
	FILE *fp = size ? fmemopen((void *)(uintptr_t)data, size, "r") : NULL;
	if (fp) {
		r = bb_reader_fopen(fp, "<fuzz>", &ro, &err);
		if (!r) {
			fprintf(
			    stderr,
			    "fuzz_trace: error: the memory reader opened it, stdio did not: %s\n",
			    err.msg);
			abort();
		}
		int rc_fp = copy_through(r, &c, &err);
		struct bb_reader_stats st_fp;
		bb_reader_stats(r, &st_fp);
		bb_reader_free(r);
		fclose(fp);
		if (rc_fp != rc_mem || c.len != a.len || memcmp(c.buf, a.buf, a.len) != 0 ||
		    st_fp.records != st_mem.records || st_fp.skipped != st_mem.skipped ||
		    st_fp.lines != st_mem.lines) {
			fprintf(stderr,
			        "fuzz_trace: error: stdio and memory readers differ (rc %d/%d, "
			        "records %llu/%llu, skipped %llu/%llu)\n",
			        rc_fp, rc_mem, (unsigned long long)st_fp.records,
			        (unsigned long long)st_mem.records,
			        (unsigned long long)st_fp.skipped,
			        (unsigned long long)st_mem.skipped);
			abort();
		}
		free(c.buf);
	}

	/* The canonical form reads back strictly, record for record ... */
	struct bb_reader_opts strict = {0, 1, 0};
	r = bb_reader_mem(a.buf, a.len, "<rewritten>", &strict, &err);
	if (!r) {
		fprintf(stderr, "fuzz_trace: error: rewritten trace does not open: %s\n", err.msg);
		abort();
	}
	int rc = copy_through(r, &b, &err);
	bb_reader_free(r);
	if (rc != 0 || b.records != a.records) {
		fprintf(
		    stderr,
		    "fuzz_trace: error: rewritten trace reads back %llu of %llu records (%d: %s)\n",
		    (unsigned long long)b.records, (unsigned long long)a.records, rc,
		    rc ? err.msg : "");
		abort();
	}
	/* ... and is a fixed point of read-then-write. */
	if (a.len != b.len || memcmp(a.buf, b.buf, a.len) != 0) {
		fprintf(stderr, "fuzz_trace: error: rewriting the canonical form changed it\n");
		abort();
	}
	free(a.buf);
	free(b.buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	one_pass(data, size, 0);
	one_pass(data, size, 1);
	return 0;
}

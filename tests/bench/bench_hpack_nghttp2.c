/* bench_hpack_nghttp2.c - bb's HPACK decoding (dec_http2.c) against nghttp2's inflater */
/* SPDX-License-Identifier: MIT */
/*
 * bench_hpack_nghttp2 [BLOCKS]
 *
 * The measurement behind keeping dec_http2.c's own HPACK decoder (issue 18,
 * docs/decoders.md). nghttp2's deflater (the encoder of nghttp2, curl, h2load,
 * Envoy ...) encodes BLOCKS (default 100,000) gRPC request field blocks
 * (:method POST, :scheme, :path, :authority, content-type, user-agent, te,
 * grpc-timeout) and as many response blocks (:status 200, content-type), one
 * stream each. Then, per second of CPU time:
 *   - nghttp2's inflater on the field blocks alone, with the malloc calls it
 *     makes (one per field emitted, for its reference-counted buffers);
 *   - bb's whole http2 decoder on the same frames in 1448-byte segments
 *     (framing, HPACK, streams, the CALL and RET records).
 * And what each does with a connection picked up mid-stream: the last request
 * block, whose fields name dynamic-table entries made before the capture.
 */
#include <nghttp2/nghttp2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decoders/decoders.h"

#include "bench_h2.h"

static nghttp2_nv nv(const char *name, const char *value)
{
	nghttp2_nv v = {(uint8_t *)(uintptr_t)name, (uint8_t *)(uintptr_t)value, strlen(name),
		strlen(value), NGHTTP2_NV_FLAG_NONE};
	return v;
}

/* nghttp2's allocator, counting its malloc calls. */
static uint64_t nmalloc;
static void *count_malloc(size_t n, void *u)
{
	(void)u;
	nmalloc++;
	return malloc(n);
}
static void count_free(void *p, void *u)
{
	(void)u;
	free(p);
}
static void *count_calloc(size_t a, size_t b, void *u)
{
	(void)u;
	nmalloc++;
	return calloc(a, b);
}
static void *count_realloc(void *p, size_t n, void *u)
{
	(void)u;
	nmalloc++;
	return realloc(p, n);
}
static nghttp2_mem mem = {NULL, count_malloc, count_free, count_calloc, count_realloc};

/* One block through inflater in: fields emitted, or -1 on an error. */
static int inflate_block(nghttp2_hd_inflater *in, const uint8_t *p, size_t left)
{
	int fields = 0;
	for (;;) {
		nghttp2_nv f;
		int flags = 0;
		ssize_t r = nghttp2_hd_inflate_hd2(in, &f, &flags, p, left, 1);
		if (r < 0)
			return -1;
		p += r;
		left -= (size_t)r;
		if (flags & NGHTTP2_HD_INFLATE_EMIT)
			fields++;
		if (flags & NGHTTP2_HD_INFLATE_FINAL) {
			nghttp2_hd_inflate_end_headers(in);
			return fields;
		}
		if (r == 0 && left == 0)
			return fields;
	}
}

static uint64_t records;
static char last_req[128];
static void sink(void *arg, const struct bb_dec_msg *m)
{
	(void)arg;
	records++;
	snprintf(last_req, sizeof last_req, "%.*s", (int)m->req_len, m->req ? m->req : "");
}

/* bb's decoder on the two directions (client's bytes first), in segments. */
static void bb_run(void *state, const struct bb_dec_ctx *ctx, const struct buf *d[2])
{
	for (int dir = 0; dir < 2; dir++) {
		uint8_t *tmp = malloc(d[dir]->n + 1);
		size_t off = 0, have = 0;
		while (off < d[dir]->n) {
			size_t k = d[dir]->n - off < 1448 ? d[dir]->n - off : 1448;
			memcpy(tmp + have, d[dir]->b + off, k);
			have += k;
			off += k;
			size_t u = bb_dec_http2.decode(state, ctx, dir, off - have, tmp, have);
			memmove(tmp, tmp + u, have - u);
			have -= u;
		}
		free(tmp);
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	if (n < 1) {
		fprintf(stderr, "bench_hpack_nghttp2: error: BLOCKS must be at least 1\n");
		return 2;
	}
	nghttp2_nv req[] = {nv(":method", "POST"), nv(":scheme", "http"),
		nv(":path", "/bench.Service/Method"), nv(":authority", "10.0.0.2:50051"),
		nv("content-type", "application/grpc"), nv("user-agent", "grpc-go/1.60.1"),
		nv("te", "trailers"), nv("grpc-timeout", "99m")};
	nghttp2_nv rsp[] = {nv(":status", "200"), nv("content-type", "application/grpc")};
	nghttp2_hd_deflater *defl[2];
	nghttp2_hd_deflate_new(&defl[0], 4096);
	nghttp2_hd_deflate_new(&defl[1], 4096);
	struct buf dirs[2] = {{0}, {0}};
	size_t *at[2], *len[2];
	for (int d = 0; d < 2; d++) {
		at[d] = calloc((size_t)n, sizeof *at[d]);
		len[d] = calloc((size_t)n, sizeof *len[d]);
	}
	put(&dirs[0], "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 24);
	frame(&dirs[0], 4, 0, 0, "", 0);
	frame(&dirs[1], 4, 0, 0, "", 0);
	uint8_t blk[1024];
	for (long i = 0; i < n; i++) {
		for (int d = 0; d < 2; d++) {
			ssize_t k = nghttp2_hd_deflate_hd(defl[d], blk, sizeof blk, d ? rsp : req, d ? 2 : 8);
			if (k < 0)
				abort();
			frame(&dirs[d], 1, 0x5, (uint32_t)(1 + 2 * i), blk, (size_t)k);
			at[d][i] = dirs[d].n - (size_t)k;
			len[d][i] = (size_t)k;
		}
	}
	printf("%ld request and %ld response field blocks (nghttp2 %s): %zu + %zu bytes\n", n, n,
	       nghttp2_version(0)->version_str, dirs[0].n, dirs[1].n);

	double t0 = bench_cpu_s();
	uint64_t fields = 0;
	for (int d = 0; d < 2; d++) {
		nghttp2_hd_inflater *in;
		nghttp2_hd_inflate_new2(&in, &mem);
		for (long i = 0; i < n; i++) {
			int f = inflate_block(in, dirs[d].b + at[d][i], len[d][i]);
			if (f < 0)
				abort();
			fields += (uint64_t)f;
		}
		nghttp2_hd_inflate_del(in);
	}
	double t1 = bench_cpu_s();
	printf("nghttp2 inflater, field blocks alone:  %.3f CPU s, %.2f M blocks/s, %llu fields, "
	       "%.2f mallocs a field\n", t1 - t0, 2e-6 * (double)n / (t1 - t0),
	       (unsigned long long)fields, (double)nmalloc / (double)fields);

	struct bb_dec_stats st;
	memset(&st, 0, sizeof st);
	struct bb_dec_ctx ctx = {1, "10.0.0.1:40000", "10.0.0.2:50051", BB_TR_TCP, &st, bench_pos_time, sink,
		NULL, NULL};
	const struct buf *both[2] = {&dirs[0], &dirs[1]};
	void *state = calloc(1, bb_dec_http2.state_size);
	t0 = bench_cpu_s();
	bb_run(state, &ctx, both);
	bb_dec_http2.end(state, &ctx);
	t1 = bench_cpu_s();
	bb_dec_http2.free(state);
	free(state);
	printf("bb http2 decoder, whole (frames, HPACK, streams, records): %.3f CPU s, "
	       "%.2f M blocks/s, %llu records, %llu malformed\n", t1 - t0,
	       2e-6 * (double)n / (t1 - t0), (unsigned long long)records,
	       (unsigned long long)st.malformed);

	/* Picked up mid-stream: only the last stream's two frames are seen. */
	nghttp2_hd_inflater *fresh;
	nghttp2_hd_inflate_new(&fresh);
	int f = inflate_block(fresh, dirs[0].b + at[0][n - 1], len[0][n - 1]);
	printf("mid-stream, nghttp2: %s", f < 0 ? "error (the inflater is unusable from here)" : "ok");
	if (f >= 0)
		printf(", %d fields", f);
	nghttp2_hd_inflate_del(fresh);
	struct buf last[2] = {{0}, {0}};
	for (int d = 0; d < 2; d++)
		frame(&last[d], 1, 0x5, (uint32_t)(2 * n - 1), dirs[d].b + at[d][n - 1], len[d][n - 1]);
	const struct buf *lb[2] = {&last[0], &last[1]};
	state = calloc(1, bb_dec_http2.state_size);
	records = 0;
	memset(&st, 0, sizeof st);
	bb_dec_http2.gap(state, &ctx, BB_DIR_C2S, 0);
	bb_dec_http2.gap(state, &ctx, BB_DIR_S2C, 0);
	bb_run(state, &ctx, lb);
	bb_dec_http2.end(state, &ctx);
	bb_dec_http2.free(state);
	free(state);
	printf("; bb: %llu records (CALL and RET), the RET's req=%s\n", (unsigned long long)records,
	       last_req[0] ? last_req : "(none)");
	for (int d = 0; d < 2; d++) {
		free(dirs[d].b);
		free(last[d].b);
		free(at[d]);
		free(len[d]);
		nghttp2_hd_deflate_del(defl[d]);
	}
	return 0;
}

/* bench_dec_http2.c - decoding speed of the HTTP/2 / gRPC decoder alone on a large synthetic stream */
/* SPDX-License-Identifier: MIT */
/*
 * bench_dec_http2 [STREAMS]
 *
 * Builds one cleartext HTTP/2 connection carrying STREAMS (default 20000)
 * gRPC calls, 10 in flight at a time and answered in reverse order: per call,
 * a request HEADERS (POST, Huffman-coded :path as a literal every time,
 * content-type and user-agent from the dynamic table, te: trailers) and a
 * 100-byte DATA; a response HEADERS (:status 200, content-type), a 1024-byte
 * DATA and grpc-status trailers. Both directions are handed to the decoder
 * the way capture does (1448-byte segments, unconsumed bytes handed again),
 * 10 times over with fresh state. Prints bytes, seconds (wall and CPU), MB/s
 * and messages (CALL + RET) per second, from CPU time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decoders/decoders.h"
#include "tests/bench/bench_tok.h"

#include "bench_h2.h"

#define SEG 1448
#define INFLIGHT 10
#define ROUNDS 10

/* Huffman codes (RFC 7541 Appendix B) of the strings used. */
static const uint8_t h_path[] = {0x62, 0x32, 0xd4, 0x49, 0xd7, 0xdc, 0x5b, 0x3b, 0x98, 0x85,
	0x63, 0x41, 0x53, 0x39, 0xe4}; /* /bench.Service/Method */
static const uint8_t h_ctype[] = {0x1d, 0x75, 0xd0, 0x62, 0x0d, 0x26, 0x3d, 0x4c, 0x4d, 0x65,
	0x64}; /* application/grpc */
static const uint8_t h_ua[] = {0x9a, 0xca, 0xc8, 0xb4, 0xc7, 0x60, 0x2b, 0xb8, 0x05,
	0xc3}; /* grpc-go/1.60.1 */
static const uint8_t h_status[] = {0x9a, 0xca, 0xc8, 0xb2, 0x12, 0x34, 0xda,
	0x8f}; /* grpc-status */

static uint64_t msgs;

static void sink(void *arg, const struct bb_dec_msg *m)
{
	(void)arg;
	(void)m;
	msgs++;
}

static int64_t t_at(void *arg, int dir, uint64_t pos)
{
	(void)arg;
	return (int64_t)pos + dir;
}

static double clock_s(clockid_t id)
{
	struct timespec t;
	clock_gettime(id, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	long streams = argc > 1 ? atol(argv[1]) : 20000;
	if (streams < INFLIGHT || streams % INFLIGHT) {
		fprintf(stderr, "bench_dec_http2: error: STREAMS must be a multiple of %d\n", INFLIGHT);
		return 2;
	}
	struct buf c = {0}, s = {0};
	size_t nb = (size_t)streams / INFLIGHT;
	size_t *cend = calloc(nb, sizeof *cend), *send = calloc(nb, sizeof *send);
	put(&c, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 24);
	frame(&c, 4, 0, 0, "", 0);
	frame(&s, 4, 0, 0, "", 0);
	uint8_t body[1024];
	memset(body, 'x', sizeof body);
	body[0] = 0;
	for (size_t b = 0; b < nb; b++) {
		for (int k = 0; k < INFLIGHT; k++) {
			uint32_t sid = (uint32_t)(1 + 2 * (b * INFLIGHT + (size_t)k));
			struct buf h = {0};
			put(&h, "\x83\x86\x04\x8f", 4);
			put(&h, h_path, sizeof h_path);
			if (sid == 1) {
				put(&h, "\x5f\x8b", 2); /* content-type, indexed: 62 */
				put(&h, h_ctype, sizeof h_ctype);
				put(&h, "\x7a\x8a", 2); /* user-agent, indexed: 62, ctype 63 */
				put(&h, h_ua, sizeof h_ua);
			} else {
				put(&h, "\xbf\xbe", 2);
			}
			put(&h, "\x00\x02te\x08trailers", 13);
			frame(&c, 1, 4, sid, h.b, h.n);
			frame(&c, 0, 1, sid, body, 100);
			free(h.b);
		}
		cend[b] = c.n;
		for (int k = INFLIGHT - 1; k >= 0; k--) {
			uint32_t sid = (uint32_t)(1 + 2 * (b * INFLIGHT + (size_t)k));
			if (b == 0 && k == INFLIGHT - 1) {
				struct buf h = {0};
				put(&h, "\x88\x5f\x8b", 3);
				put(&h, h_ctype, sizeof h_ctype);
				frame(&s, 1, 4, sid, h.b, h.n);
				frame(&s, 0, 0, sid, body, sizeof body);
				free(h.b);
				h.n = 0;
				h.b = NULL;
				h.cap = 0;
				put(&h, "\x40\x88", 2); /* grpc-status: 0, indexed: 62, ctype 63 */
				put(&h, h_status, sizeof h_status);
				put(&h, "\x81\x07", 2);
				frame(&s, 1, 5, sid, h.b, h.n);
				free(h.b);
			} else {
				frame(&s, 1, 4, sid, "\x88\xbf", 2);
				frame(&s, 0, 0, sid, body, sizeof body);
				frame(&s, 1, 5, sid, "\xbe", 1);
			}
		}
		send[b] = s.n;
	}

	const struct bb_decoder *dec = &bb_dec_http2;
	struct bb_dec_stats st;
	memset(&st, 0, sizeof st);
	struct bb_dec_ctx ctx = {1, "10.0.0.1:40000", "10.0.0.2:50051", BB_TR_TCP, &st, t_at, sink, NULL,
	                         bench_tok_key()};
	double w0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	for (int round = 0; round < ROUNDS; round++) {
		void *state = calloc(1, dec->state_size);
		size_t used[2] = {0, 0}, have[2] = {0, 0};
		for (size_t b = 0; b < nb; b++) {
			for (int dir = 0; dir < 2; dir++) {
				struct buf *o = dir ? &s : &c;
				size_t stop = dir ? send[b] : cend[b];
				while (have[dir] < stop) {
					have[dir] = have[dir] + SEG < stop ? have[dir] + SEG : stop;
					used[dir] += dec->decode(state, &ctx, dir, used[dir], o->b + used[dir],
					                         have[dir] - used[dir]);
				}
			}
		}
		dec->end(state, &ctx);
		dec->free(state);
		free(state);
	}
	double w1 = clock_s(CLOCK_MONOTONIC), c1 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	double bytes = (double)(c.n + s.n) * ROUNDS;
	long want = 2 * streams * ROUNDS;
	printf("http2 decoder: %ld gRPC calls x %d rounds, %.1f MB (requests %.1f MB, responses "
	       "%.1f MB), 1448-byte segments\n",
	       streams, ROUNDS, bytes / 1e6, (double)c.n * ROUNDS / 1e6, (double)s.n * ROUNDS / 1e6);
	printf("  %.3f s wall, %.3f s CPU: %.0f MB/s, %.2f M messages/s (CPU)\n", w1 - w0, c1 - c0,
	       bytes / 1e6 / (c1 - c0), (double)msgs / 1e6 / (c1 - c0));
	printf("  messages %llu (want %ld), malformed %llu, unmatched %llu\n",
	       (unsigned long long)msgs, want, (unsigned long long)st.malformed,
	       (unsigned long long)st.unmatched_ret);
	free(c.b);
	free(s.b);
	free(cend);
	free(send);
	return msgs == (uint64_t)want && st.malformed == 0 ? 0 : 1;
}

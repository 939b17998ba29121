/* bench_dec_redis.c - decoding speed of the redis, memcache and thrift decoders alone */
/* SPDX-License-Identifier: MIT */
/*
 * Builds a large synthetic conversation per protocol in memory (requests one
 * way, replies the other, pipelined 32 deep), hands it to the decoder in
 * 1448-byte segments the way capture does (unconsumed bytes are handed again with the
 * next segment), and prints MB/s of payload and messages/s (CALL + RET) per
 * second of CPU time (the process's, so that other load on the machine does
 * not count).
 * Usage: bench_dec_redis [MB per stream, default 64]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decoders/decoders.h"
#include "tests/bench/bench_tok.h"

struct buf {
	uint8_t *p;
	size_t n, cap;
	size_t *mark;           /* end of each message */
	size_t nmark, markcap;
};

/* Ends the current message of b. */
static void mark(struct buf *b)
{
	if (b->nmark == b->markcap) {
		b->markcap = b->markcap ? b->markcap * 2 : 4096;
		b->mark = realloc(b->mark, b->markcap * sizeof *b->mark);
		if (!b->mark)
			abort();
	}
	b->mark[b->nmark++] = b->n;
}

static void put(struct buf *b, const void *p, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			abort();
	}
	memcpy(b->p + b->n, p, n);
	b->n += n;
}

static void putf(struct buf *b, const char *fmt, unsigned i)
{
	char tmp[256];
	int n = snprintf(tmp, sizeof tmp, fmt, i, i);
	put(b, tmp, (size_t)n);
}

static void put32(struct buf *b, uint32_t v)
{
	uint8_t x[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
	put(b, x, 4);
}

static const char val100[] = "0123456789012345678901234567890123456789012345678901234567890123456789"
                             "012345678901234567890123456789";

static void gen_redis(struct buf *q, struct buf *r, size_t mb)
{
	for (unsigned i = 0; q->n < mb << 20; i++) {
		if (i % 2) {
			putf(q, "*2\r\n$3\r\nGET\r\n$12\r\nkey:%08u\r\n", i);
			put(r, "$100\r\n", 6);
			put(r, val100, 100);
			put(r, "\r\n", 2);
		} else {
			putf(q, "*3\r\n$3\r\nSET\r\n$12\r\nkey:%08u\r\n$100\r\n", i);
			put(q, val100, 100);
			put(q, "\r\n", 2);
			put(r, "+OK\r\n", 5);
		}
		mark(q);
		mark(r);
	}
}

static void gen_mc_text(struct buf *q, struct buf *r, size_t mb)
{
	for (unsigned i = 0; q->n < mb << 20; i++) {
		if (i % 2) {
			putf(q, "get key:%08u\r\n", i);
			putf(r, "VALUE key:%08u 0 100\r\n", i);
			put(r, val100, 100);
			put(r, "\r\nEND\r\n", 7);
		} else {
			putf(q, "set key:%08u 0 0 100\r\n", i);
			put(q, val100, 100);
			put(q, "\r\n", 2);
			put(r, "STORED\r\n", 8);
		}
		mark(q);
		mark(r);
	}
}

static void mc_bin(struct buf *b, uint8_t magic, uint8_t op, size_t kl, size_t el, size_t vl,
                   uint32_t opaque)
{
	uint8_t h[24] = {magic, op, (uint8_t)(kl >> 8), (uint8_t)kl, (uint8_t)el, 0, 0, 0};
	uint32_t bl = (uint32_t)(kl + el + vl);
	h[8] = (uint8_t)(bl >> 24), h[9] = (uint8_t)(bl >> 16), h[10] = (uint8_t)(bl >> 8);
	h[11] = (uint8_t)bl;
	h[12] = (uint8_t)(opaque >> 24), h[13] = (uint8_t)(opaque >> 16);
	h[14] = (uint8_t)(opaque >> 8), h[15] = (uint8_t)opaque;
	put(b, h, 24);
	static const uint8_t z[256];
	put(b, z, el);
	put(b, "key:00000000", kl);
	put(b, val100, vl);
}

static void gen_mc_bin(struct buf *q, struct buf *r, size_t mb)
{
	for (uint32_t i = 0; q->n < mb << 20; i++) {
		if (i % 2) {
			mc_bin(q, 0x80, 0x00, 12, 0, 0, i);
			mc_bin(r, 0x81, 0x00, 0, 4, 100, i);
		} else {
			mc_bin(q, 0x80, 0x01, 12, 8, 100, i);
			mc_bin(r, 0x81, 0x01, 0, 0, 0, i);
		}
		mark(q);
		mark(r);
	}
}

/* Binary strict, framed: getUser(i32 id, string name) -> struct{string}. */
static void gen_thrift(struct buf *q, struct buf *r, size_t mb)
{
	for (uint32_t i = 0; q->n < mb << 20; i++) {
		put32(q, 4 + 4 + 7 + 4 + 7 + 7 + 100 + 1);
		put32(q, 0x80010001u);
		put32(q, 7);
		put(q, "getUser", 7);
		put32(q, i);
		put(q, "\x08\x00\x01", 3);
		put32(q, i);
		put(q, "\x0b\x00\x02\x00\x00\x00\x64", 7);
		put(q, val100, 100);
		put(q, "\x00", 1);
		put32(r, 4 + 4 + 7 + 4 + 10 + 100 + 2);
		put32(r, 0x80010002u);
		put32(r, 7);
		put(r, "getUser", 7);
		put32(r, i);
		put(r, "\x0c\x00\x00\x0b\x00\x01\x00\x00\x00\x64", 10);
		put(r, val100, 100);
		put(r, "\x00\x00", 2);
		mark(q);
		mark(r);
	}
}

/* Compact, unframed: each message walked to find its end. */
static void gen_thrift_compact(struct buf *q, struct buf *r, size_t mb)
{
	for (uint32_t i = 0; q->n < mb << 20; i++) {
		uint8_t seq[5];
		size_t ns = 0;
		uint32_t v = i;
		do {
			seq[ns++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
			v >>= 7;
		} while (v);
		put(q, "\x82\x21", 2);
		put(q, seq, ns);
		put(q, "\x07getUser\x15\x02\x18\x64", 12);
		put(q, val100, 100);
		put(q, "\x19\x35\x02\x04\x06\x00", 6);
		put(r, "\x82\x41", 2);
		put(r, seq, ns);
		put(r, "\x07getUser\x18\x64", 10);
		put(r, val100, 100);
		put(r, "\x00", 1);
		mark(q);
		mark(r);
	}
}

static uint64_t nmsg;

static void count(void *arg, const struct bb_dec_msg *m)
{
	(void)arg;
	(void)m;
	nmsg++;
}

static int64_t t_at(void *arg, int dir, uint64_t pos)
{
	(void)arg;
	return (int64_t)pos + dir;
}

/* CPU time of the process: the machine is shared, wall time would measure the
 * neighbours. */
static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Feeds one direction's stream in segments; returns bytes consumed in all. */
static void feed(const struct bb_decoder *dec, void *st, const struct bb_dec_ctx *ctx, int dir,
                 const struct buf *b, size_t *used, size_t upto)
{
	size_t n = upto - *used;
	size_t c = dec->decode(st, ctx, dir, *used, b->p + *used, n);
	*used += c;
}

static void bench(const char *label, const char *name,
                  void (*gen)(struct buf *, struct buf *, size_t), size_t mb)
{
	struct buf q = {0}, r = {0};
	gen(&q, &r, mb);
	int di = bb_dec_find(name);
	if (di < 0)
		abort();
	const struct bb_decoder *dec = bb_dec_at((size_t)di);
	struct bb_dec_stats stats;
	memset(&stats, 0, sizeof stats);
	struct bb_dec_ctx ctx = {1, "10.0.0.1:40000", "10.0.0.2:6379", BB_TR_TCP, &stats, t_at,
	                         count, NULL, bench_tok_key()};
	void *st = calloc(1, dec->state_size);
	nmsg = 0;
	const size_t seg = 1448;
	size_t uq = 0, ur = 0, oq = 0, orr = 0;
	double t0 = now();
	/* Pipelined 32 deep: 32 requests, then their 32 replies, each direction
	 * in 1448-byte segments. */
	for (size_t m = 0; m < q.nmark; m += 32) {
		size_t last = m + 31 < q.nmark ? m + 31 : q.nmark - 1;
		while (oq < q.mark[last]) {
			oq = oq + seg < q.mark[last] ? oq + seg : q.mark[last];
			feed(dec, st, &ctx, BB_DIR_C2S, &q, &uq, oq);
		}
		while (orr < r.mark[last]) {
			orr = orr + seg < r.mark[last] ? orr + seg : r.mark[last];
			feed(dec, st, &ctx, BB_DIR_S2C, &r, &ur, orr);
		}
	}
	if (dec->end)
		dec->end(st, &ctx);
	double dt = now() - t0;
	double mbytes = (double)(q.n + r.n) / 1e6;
	printf("%-22s %8.1f MB in %6.3f CPU s: %8.1f MB/s, %10.0f messages/s (%llu calls, %llu returns, "
	       "%llu malformed, %llu unmatched, %llu evicted)\n",
	       label, mbytes, dt, mbytes / dt, (double)nmsg / dt, (unsigned long long)stats.calls,
	       (unsigned long long)stats.rets, (unsigned long long)stats.malformed,
	       (unsigned long long)stats.unmatched_ret, (unsigned long long)stats.evicted);
	if (dec->free)
		dec->free(st);
	free(st);
	free(q.p);
	free(r.p);
	free(q.mark);
	free(r.mark);
}

int main(int argc, char **argv)
{
	size_t mb = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 64;
	if (mb == 0 || mb > 4096) {
		fprintf(stderr, "usage: bench_dec_redis [MB per stream, 1..4096]\n");
		return 2;
	}
	printf("decoders alone, %zu MB of requests per stream, 1448-byte segments\n", mb);
	bench("redis RESP2 GET/SET", "redis", gen_redis, mb);
	bench("memcache text get/set", "memcache", gen_mc_text, mb);
	bench("memcache binary", "memcache", gen_mc_bin, mb);
	bench("thrift binary framed", "thrift", gen_thrift, mb);
	bench("thrift compact", "thrift", gen_thrift_compact, mb);
	return 0;
}

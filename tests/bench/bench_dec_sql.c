/* bench_dec_sql.c - decoding speed of the pgsql, mysql and kafka decoders alone */
/* SPDX-License-Identifier: MIT */
/*
 * Each decoder is fed a long synthetic conversation, exchange by exchange
 * (the client's bytes, then the server's: as capture hands them over), in
 * the shapes real clients produce: pgbench-like simple and prepared cycles
 * with small result sets; mysql queries with a 10-row result set and
 * prepared executions; Kafka Produce with a 1 KB batch and Fetch with a 4 KB
 * response. The generic decoder on the same bytes is the floor. Prints MB/s
 * (both directions) and messages/s (CALL + RET) per decoder.
 *
 *   bench_dec_sql [EXCHANGES]   (default 200000 per decoder)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decoders/decoders.h"
#include "tests/bench/bench_dec.h"
#include "tests/bench/bench_tok.h"

struct buf {
	uint8_t *p;
	size_t n, cap;
};

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

static void u8(struct buf *b, unsigned v)
{
	uint8_t c = (uint8_t)v;
	put(b, &c, 1);
}

static void be16(struct buf *b, unsigned v)
{
	u8(b, v >> 8);
	u8(b, v);
}

static void be32(struct buf *b, uint32_t v)
{
	be16(b, v >> 16);
	be16(b, v & 0xffff);
}

static void str(struct buf *b, const char *s, int nul)
{
	put(b, s, strlen(s) + (nul ? 1 : 0));
}

static void fill(struct buf *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		u8(b, 'a' + i % 26);
}

/* ---- conversations: turns of (dir, bytes) ---------------------------------------- */

#define MAXT 8
struct conv {
	int n;
	int dir[MAXT];
	struct buf b[MAXT];
};

static struct buf *turn(struct conv *c, int dir)
{
	c->dir[c->n] = dir;
	return &c->b[c->n++];
}

static void pg_msg(struct buf *b, int type, const void *body, size_t n)
{
	u8(b, (unsigned)type);
	be32(b, (uint32_t)(4 + n));
	put(b, body, n);
}

static void pg_conv(struct conv *c)
{
	struct buf *q = turn(c, 0), *r;
	const char *sql = "SELECT abalance FROM pgbench_accounts WHERE aid = 12345";
	pg_msg(q, 'Q', sql, strlen(sql) + 1);
	r = turn(c, 1);
	pg_msg(r, 'T', "\0\x01" "abalance\0\0\0\0\0\0\0\0\0\x17\0\x04\xff\xff\xff\xff\0\0", 28);
	for (int i = 0; i < 10; i++) {
		struct buf row = {0};
		be16(&row, 1);
		be32(&row, 96);
		fill(&row, 96);
		pg_msg(r, 'D', row.p, row.n);
		free(row.p);
	}
	pg_msg(r, 'C', "SELECT 10", 10);
	pg_msg(r, 'Z', "I", 1);
	/* prepared: Bind P_1, Execute, Sync */
	q = turn(c, 0);
	struct buf bind = {0};
	put(&bind, "\0P_1\0", 5);
	be16(&bind, 0);
	be16(&bind, 1);
	be32(&bind, 4);
	str(&bind, "1234", 0);
	be16(&bind, 0);
	pg_msg(q, 'B', bind.p, bind.n);
	free(bind.p);
	pg_msg(q, 'E', "\0\0\0\0\0", 5);
	pg_msg(q, 'S', "", 0);
	r = turn(c, 1);
	pg_msg(r, '2', "", 0);
	pg_msg(r, 'C', "UPDATE 1", 9);
	pg_msg(r, 'Z', "T", 1);
}

static void my_pkt(struct buf *b, unsigned seq, const void *p, size_t n)
{
	u8(b, n & 0xff);
	u8(b, (n >> 8) & 0xff);
	u8(b, (unsigned)(n >> 16));
	u8(b, seq);
	put(b, p, n);
}

static void my_conv(struct conv *c)
{
	static const uint8_t coldef[] = "\x03" "def\x04" "bbdb\x03" "bbt\x03" "bbt\x01v\x01v\x0c\x21\0\x50\0\0\0\xfd\0\0\0\0\0";
	static const uint8_t eof[] = {0xfe, 0, 0, 0x22, 0};
	struct buf *q = turn(c, 0), *r;
	const char *sql = "\x03SELECT v FROM bbt WHERE id > 100 LIMIT 10";
	my_pkt(q, 0, sql, strlen(sql));
	r = turn(c, 1);
	unsigned seq = 1;
	my_pkt(r, seq++, "\x01", 1);
	my_pkt(r, seq++, coldef, sizeof coldef - 1);
	my_pkt(r, seq++, eof, sizeof eof);
	for (int i = 0; i < 10; i++) {
		struct buf row = {0};
		u8(&row, 96);
		fill(&row, 96);
		my_pkt(r, seq++, row.p, row.n);
		free(row.p);
	}
	my_pkt(r, seq++, eof, sizeof eof);
	/* a prepared execution (statement 1) answered with an OK */
	q = turn(c, 0);
	static const uint8_t exe[] = {0x17, 1, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0x03, 0, 42, 0, 0, 0};
	my_pkt(q, 0, exe, sizeof exe);
	r = turn(c, 1);
	static const uint8_t ok[] = {0, 1, 0, 0x22, 0, 0, 0};
	my_pkt(r, 1, ok, sizeof ok);
}

static void kf_conv(struct conv *c)
{
	struct buf *q = turn(c, 0), *r;
	struct buf m = {0};
	/* Produce v7, one topic, one partition, a 1 KB record batch */
	be16(&m, 0);
	be16(&m, 7);
	be32(&m, 1);
	be16(&m, 7);
	str(&m, "bbbench", 0);
	be16(&m, 0xffff);
	be16(&m, 1);
	be32(&m, 1500);
	be32(&m, 1);
	be16(&m, 6);
	str(&m, "orders", 0);
	be32(&m, 1);
	be32(&m, 0);
	be32(&m, 1024);
	fill(&m, 1024);
	be32(q, (uint32_t)m.n);
	put(q, m.p, m.n);
	m.n = 0;
	r = turn(c, 1);
	be32(&m, 1);
	fill(&m, 50);
	be32(r, (uint32_t)m.n);
	put(r, m.p, m.n);
	m.n = 0;
	/* Fetch v11 and a 4 KB response */
	q = turn(c, 0);
	be16(&m, 1);
	be16(&m, 11);
	be32(&m, 2);
	be16(&m, 7);
	str(&m, "bbbench", 0);
	be32(&m, 0xffffffff);
	be32(&m, 500);
	be32(&m, 1);
	be32(&m, 52428800);
	u8(&m, 0);
	be32(&m, 0);
	be32(&m, 0xffffffff);
	be32(&m, 1);
	be16(&m, 6);
	str(&m, "orders", 0);
	fill(&m, 40);
	be32(q, (uint32_t)m.n);
	put(q, m.p, m.n);
	m.n = 0;
	r = turn(c, 1);
	be32(&m, 2);
	fill(&m, 4096);
	be32(r, (uint32_t)m.n);
	put(r, m.p, m.n);
	free(m.p);
}

/* ---- the run ----------------------------------------------------------------------- */

static void run(const char *name, const char *as, const struct conv *c, long nx)
{
	struct bb_dec_stats st;
	memset(&st, 0, sizeof st);
	struct bb_dec_ctx ctx = {1, "10.0.0.1:40000", "10.0.0.2:5432", BB_TR_TCP, &st, bench_at,
	                         bench_count, NULL, bench_tok_key()};
	struct bench_feed *f = bench_feed_new(name, &ctx);
	bench_nmsg = 0;
	double t0 = bench_clock_s(CLOCK_MONOTONIC);
	for (long i = 0; i < nx; i++)
		for (int k = 0; k < c->n; k++)
			bench_feed(f, c->dir[k], c->b[k].p, c->b[k].n);
	double dt = bench_clock_s(CLOCK_MONOTONIC) - t0;
	uint64_t bytes = f->bytes;
	bench_feed_free(f);
	printf("%-8s on %-6s %10.0f MB/s %12.0f messages/s  (%llu messages, %llu bytes, %.3f s; "
	       "malformed %llu)\n",
	       name, as, (double)bytes / dt / 1e6, (double)bench_nmsg / dt,
	       (unsigned long long)bench_nmsg, (unsigned long long)bytes, dt,
	       (unsigned long long)st.malformed);
}

int main(int argc, char **argv)
{
	long nx = argc > 1 ? atol(argv[1]) : 200000;
	if (nx <= 0) {
		fprintf(stderr, "usage: bench_dec_sql [EXCHANGES]\n");
		return 2;
	}
	struct conv pg = {0}, my = {0}, kf = {0};
	pg_conv(&pg);
	my_conv(&my);
	kf_conv(&kf);
	run("pgsql", "pgsql", &pg, nx);
	run("generic", "pgsql", &pg, nx);
	run("mysql", "mysql", &my, nx);
	run("generic", "mysql", &my, nx);
	run("kafka", "kafka", &kf, nx);
	run("generic", "kafka", &kf, nx);
	for (int k = 0; k < MAXT; k++) {
		free(pg.b[k].p);
		free(my.b[k].p);
		free(kf.b[k].p);
	}
	return 0;
}

/* test_dec_sql.c - unit tests for the pgsql, mysql and kafka decoders and the SQL summariser */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "decoders/dec_sql_int.h"
#include "decoders/decoders.h"
#include "unit.h"

#define FAKE_SERVER "10.0.0.2:5432"
#include "dec_fake.h"

/* The flow ends (the decoder emits what is pending), then the fake goes. */
static void fake_finish(struct fake *f)
{
	if (f->dec->end)
		f->dec->end(f->state, &f->ctx);
	fake_free(f);
}

/* Bytes lost: the decoder is told, what it held is dropped. */
static void gap(struct fake *f, int dir, uint64_t lost)
{
	uint64_t gone = f->len[dir] + lost;
	f->pos[dir] += gone;
	f->len[dir] = 0;
	f->dec->gap(f->state, &f->ctx, dir, gone);
}

/* A conversation: turns of bytes from one side. */
struct turn {
	int dir;
	const uint8_t *p;
	size_t n;
};

/* Feeds every turn cut in two at k (whole when k is 0 or beyond it). */
static void play(struct fake *f, const struct turn *t, size_t nt, size_t k)
{
	for (size_t i = 0; i < nt; i++) {
		size_t a = k > 0 && k < t[i].n ? k : t[i].n;
		feed(f, t[i].dir, t[i].p, a);
		feed(f, t[i].dir, t[i].p + a, t[i].n - a);
	}
}

/* Plays the conversation whole, then cut at every offset of every turn, and
 * checks the records are the same each time. Returns the reference run
 * (caller frees). */
static struct fake *play_split(const struct bb_decoder *dec, const struct turn *t, size_t nt)
{
	struct fake *ref = fake_new(dec, BB_TR_TCP);
	play(ref, t, nt, 0);
	if (dec->end)
		dec->end(ref->state, &ref->ctx);
	size_t maxn = 0;
	for (size_t i = 0; i < nt; i++)
		if (t[i].n > maxn)
			maxn = t[i].n;
	for (size_t k = 1; k < maxn; k++) {
		struct fake *f = fake_new(dec, BB_TR_TCP);
		play(f, t, nt, k);
		if (dec->end)
			dec->end(f->state, &f->ctx);
		int same = f->n == ref->n && f->st.malformed == ref->st.malformed;
		for (int i = 0; same && i < f->n; i++) {
			const struct rec *a = &f->r[i], *b = &ref->r[i];
			same = a->op == b->op && a->ts == b->ts && a->end == b->end &&
			       a->len == b->len && !strcmp(a->id, b->id) && !strcmp(a->req, b->req);
		}
		if (!same) {
			UNIT_FAIL_("%s: split at %zu: %d records (want %d)", dec->name, k, f->n, ref->n);
			for (int i = 0; i < f->n && i < ref->n; i++)
				fprintf(stderr, "  %s %s %s | %s %s %s\n", f->r[i].op == BB_CALL ? "CALL" : "RET",
				        f->r[i].id, f->r[i].req, ref->r[i].op == BB_CALL ? "CALL" : "RET",
				        ref->r[i].id, ref->r[i].req);
			f->dec = dec;
			fake_finish(f);
			break;
		}
		fake_finish(f);
	}
	/* end() already ran: do not run it again at free */
	return ref;
}

static void ref_free(struct fake *f)
{
	if (f->dec->free)
		f->dec->free(f->state);
	free(f->state);
	free(f->buf[0]);
	free(f->buf[1]);
	free(f);
}

/* A byte builder for messages. */
struct bld {
	uint8_t b[8192];
	size_t n;
};

static void b_u8(struct bld *b, unsigned v)
{
	b->b[b->n++] = (uint8_t)v;
}

static void b_be16(struct bld *b, unsigned v)
{
	b_u8(b, v >> 8);
	b_u8(b, v);
}

static void b_be32(struct bld *b, uint32_t v)
{
	b_be16(b, v >> 16);
	b_be16(b, v & 0xffff);
}

static void b_str(struct bld *b, const char *s, int nul)
{
	size_t l = strlen(s) + (nul ? 1 : 0);
	memcpy(b->b + b->n, s, l);
	b->n += l;
}

/* Patches a big-endian 32-bit length at at: bytes from at to the end. */
static void b_patch_be32(struct bld *b, size_t at, size_t extra)
{
	uint32_t v = (uint32_t)(b->n - at + extra);
	b->b[at] = (uint8_t)(v >> 24);
	b->b[at + 1] = (uint8_t)(v >> 16);
	b->b[at + 2] = (uint8_t)(v >> 8);
	b->b[at + 3] = (uint8_t)v;
}

/* ---- the SQL summariser ----------------------------------------------------------- */

static void t_sql_summary(void)
{
	static const struct {
		const char *sql;
		int mysql;
		const char *want;
	} cases[] = {
		{"SELECT * FROM accounts WHERE id = 1", 0, "SELECT accounts"},
		{"  -- comment\n /* block /* nested */ */ select a, (select max(x) from t2) from public.orders o", 0,
		 "SELECT public.orders"},
		{"SELECT \"user\".id FROM \"user\" WHERE 1", 0, "SELECT user"},
		{"SELECT 1", 0, "SELECT"},
		{"select now()", 0, "SELECT"},
		{"INSERT INTO orders (a) VALUES ('x FROM y')", 0, "INSERT orders"},
		{"insert ignore into `db`.`t` values (1)", 1, "INSERT db.t"},
		{"REPLACE t2 VALUES (1)", 1, "REPLACE t2"},
		{"UPDATE ONLY pgbench_accounts SET abalance = 1", 0, "UPDATE pgbench_accounts"},
		{"DELETE FROM t WHERE x = 'it''s'", 0, "DELETE t"},
		{"CREATE TABLE IF NOT EXISTS t (i int)", 0, "CREATE TABLE t"},
		{"create unique index concurrently ix on t (a)", 0, "CREATE INDEX ix"},
		{"DROP TABLE foo", 1, "DROP TABLE foo"},
		{"WITH a AS (SELECT * FROM x), b (c) AS MATERIALIZED (SELECT 1) UPDATE y SET z = 1", 0,
		 "UPDATE y"},
		{"WITH RECURSIVE r AS (SELECT 1 UNION SELECT n FROM r) SELECT * FROM r", 0, "SELECT r"},
		{"# mysql comment\nSHOW TABLES", 1, "SHOW TABLES"},
		{"SET SESSION sql_mode = ''", 1, "SET sql_mode"},
		{"begin", 0, "BEGIN"},
		{"COPY pgbench_accounts FROM STDIN", 0, "COPY pgbench_accounts"},
		{"SELECT $$ FROM x $$, 'a' FROM $1", 0, "SELECT"},
		{"SELECT 'a\\' FROM b' FROM c", 1, "SELECT c"},
		{"(SELECT a FROM t1) UNION (SELECT a FROM t2)", 0, "SELECT t1"},
		{"TRUNCATE TABLE pgbench_history", 0, "TRUNCATE pgbench_history"},
		{"", 0, ""},
		{"   ", 0, ""},
		{"123", 0, ""},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char out[DEC_SQL_MAX + 1];
		size_t n = dec_sql_summary((const uint8_t *)cases[i].sql, strlen(cases[i].sql),
		                           cases[i].mysql, out, sizeof out);
		CHECK_INT(n, strlen(cases[i].want));
		CHECK_STR(out, cases[i].want);
	}
	/* Truncated text and a tiny buffer stay in bounds. */
	char small[8];
	const char *q = "SELECT * FROM a_very_long_table_name";
	CHECK_INT(dec_sql_summary((const uint8_t *)q, strlen(q), 0, small, sizeof small), 7);
	CHECK_STR(small, "SELECT ");
	CHECK_INT(dec_sql_summary((const uint8_t *)q, 10, 0, small, sizeof small), 6);
}

/* ---- pgsql ---------------------------------------------------------------------------- */

static size_t pg_msg(struct bld *b, int type, const char *body1, const char *body2)
{
	size_t at = b->n;
	b_u8(b, (unsigned)type);
	size_t lp = b->n;
	b_be32(b, 0);
	if (body1)
		b_str(b, body1, 1);
	if (body2)
		b_str(b, body2, 1);
	b_patch_be32(b, lp, 0);
	return b->n - at;
}

static void t_pgsql_split(void)
{
	struct bld c1 = {{0}, 0}, s1 = {{0}, 0}, c2 = {{0}, 0}, s2 = {{0}, 0}, c3 = {{0}, 0},
	           s3 = {{0}, 0}, c4 = {{0}, 0}, s4 = {{0}, 0}, c5 = {{0}, 0}, s5 = {{0}, 0},
	           c6 = {{0}, 0};
	/* SSLRequest, then the startup */
	b_be32(&c1, 8);
	b_be32(&c1, 80877103);
	b_u8(&s1, 'N');
	b_be32(&c2, 0);
	b_be32(&c2, 196608);
	b_str(&c2, "user", 1);
	b_str(&c2, "bench", 1);
	b_u8(&c2, 0);
	b_patch_be32(&c2, 0, 0);
	b_u8(&s2, 'R');
	b_be32(&s2, 8);
	b_be32(&s2, 0);
	pg_msg(&s2, 'S', "server_version", "15.5");
	b_u8(&s2, 'K');
	b_be32(&s2, 12);
	b_be32(&s2, 1234);
	b_be32(&s2, 5678);
	b_u8(&s2, 'Z');
	b_be32(&s2, 5);
	b_u8(&s2, 'I');
	/* a simple query with two statements, and a notice in the reply */
	pg_msg(&c3, 'Q', "/* app */ SELECT abalance FROM pgbench_accounts WHERE aid = 3; SELECT 2", NULL);
	pg_msg(&s3, 'T', NULL, NULL);
	pg_msg(&s3, 'D', NULL, NULL);
	pg_msg(&s3, 'N', "SNOTICE", NULL);
	pg_msg(&s3, 'C', "SELECT 1", NULL);
	pg_msg(&s3, 'C', "SELECT 1", NULL);
	b_u8(&s3, 'Z');
	b_be32(&s3, 5);
	b_u8(&s3, 'I');
	size_t s3_zend = s3.n - 1;
	pg_msg(&s3, 'A', NULL, NULL); /* a notification between cycles */
	/* extended: Parse named, Bind, Describe, Execute, Sync; then Bind of the
	 * named statement again, pipelined with its own Sync */
	pg_msg(&c4, 'P', "P0_1", "UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2");
	b_u8(&c4, 'B');
	b_be32(&c4, 4 + 1 + 5 + 2 + 2 + 2);
	b_u8(&c4, 0);
	b_str(&c4, "P0_1", 1);
	b_be16(&c4, 0);
	b_be16(&c4, 0);
	b_be16(&c4, 0);
	pg_msg(&c4, 'D', "P", NULL);
	b_u8(&c4, 'E');
	b_be32(&c4, 9);
	b_u8(&c4, 0);
	b_be32(&c4, 0);
	b_u8(&c4, 'S');
	b_be32(&c4, 4);
	b_u8(&c4, 'B');
	b_be32(&c4, 4 + 1 + 5 + 2 + 2 + 2);
	b_u8(&c4, 0);
	b_str(&c4, "P0_1", 1);
	b_be16(&c4, 0);
	b_be16(&c4, 0);
	b_be16(&c4, 0);
	b_u8(&c4, 'E');
	b_be32(&c4, 9);
	b_u8(&c4, 0);
	b_be32(&c4, 0);
	b_u8(&c4, 'S');
	b_be32(&c4, 4);
	for (int i = 0; i < 2; i++) {
		if (i == 0) {
			b_u8(&s4, '1');
			b_be32(&s4, 4);
		}
		b_u8(&s4, '2');
		b_be32(&s4, 4);
		pg_msg(&s4, 'C', "UPDATE 1", NULL);
		b_u8(&s4, 'Z');
		b_be32(&s4, 5);
		b_u8(&s4, 'T');
	}
	/* COPY FROM STDIN: data and done belong to the query's cycle */
	size_t c5q = pg_msg(&c5, 'Q', "copy pgbench_history from stdin", NULL);
	pg_msg(&s5, 'G', NULL, NULL);
	pg_msg(&c5, 'd', "1\t2\t3\n", NULL);
	b_u8(&c5, 'c');
	b_be32(&c5, 4);
	pg_msg(&s5, 'C', "COPY 1", NULL);
	b_u8(&s5, 'Z');
	b_be32(&s5, 5);
	b_u8(&s5, 'I');
	b_u8(&c6, 'X');
	b_be32(&c6, 4);
	const struct turn t[] = {
		{0, c1.b, c1.n}, {1, s1.b, s1.n}, {0, c2.b, c2.n}, {1, s2.b, s2.n}, {0, c3.b, c3.n},
		{1, s3.b, s3.n}, {0, c4.b, c4.n}, {1, s4.b, s4.n}, {0, c5.b, c5.n}, {1, s5.b, s5.n},
		{0, c6.b, c6.n},
	};
	struct fake *f = play_split(&bb_dec_pgsql, t, sizeof t / sizeof t[0]);
	CHECK_INT(count_op(f, BB_CALL), 5);
	CHECK_INT(count_op(f, BB_RET), 5);
	CHECK_INT(f->st.malformed, 0);
	CHECK_INT(f->st.unmatched_ret, 0);
	if (f->n == 10) {
		CHECK_STR(f->r[0].id, "c7.1");
		CHECK_STR(f->r[0].req, "STARTUP");
		CHECK_INT(f->r[0].ts, 8 * 10); /* after the SSLRequest */
		CHECK_STR(f->r[1].id, "c7.1");
		CHECK_INT(f->r[1].ts, 1 * 10 + 1); /* after the 'N' */
		CHECK_STR(f->r[2].req, "SELECT pgbench_accounts");
		CHECK_STR(f->r[3].req, "SELECT pgbench_accounts");
		CHECK_INT(f->r[3].end, (int64_t)(s1.n + s2.n + s3_zend) * 10 + 1);
		CHECK_STR(f->r[4].id, "c7.3");
		CHECK_STR(f->r[4].req, "UPDATE pgbench_tellers");
		CHECK_STR(f->r[5].id, "c7.4");
		CHECK_STR(f->r[5].req, "UPDATE pgbench_tellers");
		CHECK_STR(f->r[6].id, "c7.3");
		CHECK_STR(f->r[7].id, "c7.4");
		CHECK_STR(f->r[7].req, "UPDATE pgbench_tellers");
		CHECK_STR(f->r[8].req, "COPY pgbench_history");
		CHECK_STR(f->r[9].id, "c7.5");
		CHECK_INT(f->r[9].end, (int64_t)(s1.n + s2.n + s3.n + s4.n + s5.n - 1) * 10 + 1);
		/* the COPY call ends with its Query; the data is part of the cycle */
		CHECK_INT(f->r[8].end, (int64_t)(c1.n + c2.n + c3.n + c4.n + c5q - 1) * 10);
	} else {
		UNIT_FAIL_("%d records", f->n);
	}
	ref_free(f);
}

static void t_pgsql_tls_and_gap(void)
{
	/* SSLRequest answered 'S': the rest is TLS, nothing decoded. */
	struct fake *f = fake_new(&bb_dec_pgsql, BB_TR_TCP);
	struct bld c = {{0}, 0};
	b_be32(&c, 8);
	b_be32(&c, 80877103);
	feed(f, 0, c.b, c.n);
	feed(f, 1, "S", 1);
	feed(f, 0, "\x16\x03\x01\x00\x05hello", 10);
	feed(f, 1, "\x16\x03\x03\x00\x05hello", 10);
	CHECK_INT(f->n, 0);
	CHECK_INT(f->st.malformed, 0);
	fake_finish(f);

	/* A hole inside a DataRow is skipped by its length; a hole of unknown
	 * size makes the decoder hunt, and the next cycle pairs by time. */
	f = fake_new(&bb_dec_pgsql, BB_TR_TCP);
	struct bld q = {{0}, 0}, r = {{0}, 0};
	pg_msg(&q, 'Q', "SELECT * FROM big", NULL);
	feed(f, 0, q.b, q.n);
	b_u8(&r, 'D');
	b_be32(&r, 4 + 1000);
	feed(f, 1, r.b, r.n);
	feed(f, 1, "0123456789", 10);
	gap(f, 1, 500);
	r.n = 0;
	for (int i = 0; i < 490; i++)
		b_u8(&r, 'x');
	pg_msg(&r, 'C', "SELECT 1", NULL);
	b_u8(&r, 'Z');
	b_be32(&r, 5);
	b_u8(&r, 'I');
	feed(f, 1, r.b, r.n);
	CHECK_INT(count_op(f, BB_RET), 1);
	CHECK_INT(f->st.resync, 1);
	CHECK_STR(f->r[1].req, "SELECT big");
	CHECK_INT(f->r[1].len, 5 + 1000 + r.n - 490);
	/* now a hole of unknown size in the middle of a query */
	feed(f, 0, q.b, 7);
	gap(f, 0, 0);
	q.n = 0;
	pg_msg(&q, 'Q', "INSERT INTO t VALUES (1)", NULL);
	feed(f, 0, "garbage", 7);
	feed(f, 0, q.b, q.n);
	r.n = 0;
	pg_msg(&r, 'C', "INSERT 0 1", NULL);
	b_u8(&r, 'Z');
	b_be32(&r, 5);
	b_u8(&r, 'I');
	feed(f, 1, r.b, r.n);
	CHECK_INT(count_op(f, BB_CALL), 2);
	CHECK_INT(count_op(f, BB_RET), 2);
	CHECK_STR(f->r[3].req, "INSERT t");
	CHECK_STR(f->r[3].id, f->r[2].id);
	CHECK(f->st.skipped_bytes >= 7);
	fake_finish(f);
}

/* ---- mysql ---------------------------------------------------------------------------- */

/* Appends one packet: 3-byte length, seq, payload (n bytes). */
static void my_pkt(struct bld *b, unsigned seq, const void *p, size_t n)
{
	b_u8(b, n & 0xff);
	b_u8(b, (n >> 8) & 0xff);
	b_u8(b, (unsigned)(n >> 16));
	b_u8(b, seq);
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void my_query(struct bld *b, int cmd, const char *sql)
{
	uint8_t p[256];
	p[0] = (uint8_t)cmd;
	size_t l = strlen(sql);
	memcpy(p + 1, sql, l);
	my_pkt(b, 0, p, l + 1);
}

static void t_mysql_split(void)
{
	static const uint8_t greet[] = "\x0a" "10.11.6-MariaDB\0\x01\0\0\0abcdefgh\0\xff\xf7\x08\x02\0"
	                               "\xff\x81\x15\0\0\0\0\0\0\x1d\0\0\0ijklmnopqrst\0mysql_native_password";
	static const uint8_t ok[] = {0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00};
	static const uint8_t eof[] = {0xfe, 0x00, 0x00, 0x02, 0x00};
	static const uint8_t eof_ok[] = {0xfe, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00};
	static const uint8_t coldef[] = "\x03" "def\x04" "test\x01t\x01t\x01" "a\x01" "a\x0c\x3f\0\x0b\0\0\0\x03\0\0\0\0\0";
	static const uint8_t row[] = {0x01, '1'};
	static const uint8_t brow[] = {0x00, 0x00, 0x01, 0x00, 0x00, 0x00};
	uint8_t hs[64];
	memset(hs, 0, sizeof hs);
	hs[0] = 0x0d; /* caps: no CLIENT_SSL (0x0800) */
	hs[1] = 0xa2;
	hs[2] = 0x0b;
	hs[3] = 0x01;
	memcpy(hs + 32, "root\0", 5);
	struct bld s0 = {{0}, 0}, c1 = {{0}, 0}, s1 = {{0}, 0}, c2 = {{0}, 0}, s2 = {{0}, 0},
	           c3 = {{0}, 0}, s3 = {{0}, 0}, c4 = {{0}, 0}, s4 = {{0}, 0}, c5 = {{0}, 0},
	           s5 = {{0}, 0}, c6 = {{0}, 0}, c7 = {{0}, 0}, s7 = {{0}, 0}, c8 = {{0}, 0};
	my_pkt(&s0, 0, greet, sizeof greet - 1);
	my_pkt(&c1, 1, hs, 38);
	my_pkt(&s1, 2, ok, sizeof ok);
	/* a result set with EOF packets (no CLIENT_DEPRECATE_EOF) */
	my_query(&c2, 0x03, "SELECT a FROM t WHERE a > 0");
	my_pkt(&s2, 1, "\x01", 1);
	my_pkt(&s2, 2, coldef, sizeof coldef - 1);
	my_pkt(&s2, 3, eof, sizeof eof);
	my_pkt(&s2, 4, row, sizeof row);
	my_pkt(&s2, 5, row, sizeof row);
	my_pkt(&s2, 6, eof, sizeof eof);
	/* two result sets (a CALL), CLIENT_DEPRECATE_EOF style, then the final OK */
	my_query(&c3, 0x03, "CALL p()");
	for (unsigned i = 0, seq = 1; i < 2; i++) {
		my_pkt(&s3, seq++, "\x01", 1);
		my_pkt(&s3, seq++, coldef, sizeof coldef - 1);
		my_pkt(&s3, seq++, row, sizeof row);
		uint8_t e[7];
		memcpy(e, eof_ok, 7);
		e[3] = 0x0a; /* SERVER_MORE_RESULTS_EXISTS */
		my_pkt(&s3, seq++, e, 7);
		if (i == 1)
			my_pkt(&s3, seq++, ok, sizeof ok);
	}
	/* prepare: 1 param, 1 column, each list closed by an EOF */
	my_query(&c4, 0x16, "UPDATE t SET a = ? WHERE a = 1");
	static const uint8_t pok[] = {0x00, 0x05, 0x00, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00};
	my_pkt(&s4, 1, pok, sizeof pok);
	my_pkt(&s4, 2, coldef, sizeof coldef - 1);
	my_pkt(&s4, 3, eof, sizeof eof);
	my_pkt(&s4, 4, coldef, sizeof coldef - 1);
	my_pkt(&s4, 5, eof, sizeof eof);
	/* execute statement 5: a binary row set */
	static const uint8_t exe[] = {0x17, 0x05, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00};
	my_pkt(&c5, 0, exe, sizeof exe);
	my_pkt(&s5, 1, "\x01", 1);
	my_pkt(&s5, 2, coldef, sizeof coldef - 1);
	my_pkt(&s5, 3, eof, sizeof eof);
	my_pkt(&s5, 4, brow, sizeof brow);
	my_pkt(&s5, 5, eof, sizeof eof);
	/* close (no reply), ping, quit */
	static const uint8_t cls[] = {0x19, 0x05, 0x00, 0x00, 0x00};
	my_pkt(&c6, 0, cls, sizeof cls);
	my_pkt(&c7, 0, "\x0e", 1);
	my_pkt(&s7, 1, ok, sizeof ok);
	my_pkt(&c8, 0, "\x01", 1);
	const struct turn t[] = {
		{1, s0.b, s0.n}, {0, c1.b, c1.n}, {1, s1.b, s1.n}, {0, c2.b, c2.n}, {1, s2.b, s2.n},
		{0, c3.b, c3.n}, {1, s3.b, s3.n}, {0, c4.b, c4.n}, {1, s4.b, s4.n}, {0, c5.b, c5.n},
		{1, s5.b, s5.n}, {0, c6.b, c6.n}, {0, c7.b, c7.n}, {1, s7.b, s7.n}, {0, c8.b, c8.n},
	};
	struct fake *f = play_split(&bb_dec_mysql, t, sizeof t / sizeof t[0]);
	CHECK_INT(count_op(f, BB_CALL), 7);
	CHECK_INT(count_op(f, BB_RET), 5);
	CHECK_INT(f->st.malformed, 0);
	CHECK_INT(f->st.unmatched_ret, 0);
	static const char *const want[][3] = {
		{"C", "c7.1", "SELECT t"},
		{"R", "c7.1", "SELECT t"},
		{"C", "c7.2", "CALL p"},
		{"R", "c7.2", "CALL p"},
		{"C", "c7.3", "PREPARE UPDATE t"},
		{"R", "c7.3", "PREPARE UPDATE t"},
		{"C", "c7.4", "UPDATE t"},
		{"R", "c7.4", "UPDATE t"},
		{"C", "c7.5", "STMT_CLOSE UPDATE t"},
		{"C", "c7.6", "PING"},
		{"R", "c7.6", "PING"},
		{"C", "c7.7", "QUIT"},
	};
	CHECK_INT(f->n, 12);
	for (int i = 0; i < f->n && i < 12; i++) {
		CHECK_INT(f->r[i].op, want[i][0][0] == 'C' ? BB_CALL : BB_RET);
		CHECK_STR(f->r[i].id, want[i][1]);
		CHECK_STR(f->r[i].req, want[i][2]);
	}
	/* each reply ends with its last packet */
	if (f->n == 12) {
		int64_t base = (int64_t)(s0.n + s1.n);
		CHECK_INT(f->r[1].end, (base + (int64_t)s2.n - 1) * 10 + 1);
		CHECK_INT(f->r[3].ts, (base + (int64_t)s2.n) * 10 + 1);
		CHECK_INT(f->r[3].end, (base + (int64_t)(s2.n + s3.n) - 1) * 10 + 1);
	}
	ref_free(f);
}

/* A command longer than 16 MB comes in two packets (0xffffff + rest); a
 * result set whose sequence numbers wrap past 255 is one reply. */
static void t_mysql_big(void)
{
	struct fake *f = fake_new(&bb_dec_mysql, BB_TR_TCP);
	static uint8_t chunk[65536];
	uint8_t h[8] = {0xff, 0xff, 0xff, 0x00, 0x03, 'S', 'E', 'L'};
	memset(chunk, ' ', sizeof chunk);
	feed(f, 0, h, sizeof h);
	size_t left = 0xffffff - 4;
	while (left > 0) {
		size_t k = left < sizeof chunk ? left : sizeof chunk;
		feed(f, 0, chunk, k);
		left -= k;
	}
	CHECK_INT(f->n, 0);
	uint8_t tail[] = {0x03, 0x00, 0x00, 0x01, 'x', ' ', '1'};
	feed(f, 0, tail, sizeof tail);
	CHECK_INT(f->n, 1);
	CHECK_INT(f->r[0].len, 4 + 0xffffff + sizeof tail);
	CHECK(f->maxbuf < 1024); /* streamed, never buffered */
	/* 300 rows: seq wraps through 0 and 1 */
	struct bld b = {{0}, 0};
	unsigned seq = 1;
	my_pkt(&b, seq++, "\x01", 1);
	my_pkt(&b, seq++, "\x03" "def\0\0\0\0\0\x0c\x3f\0\x0b\0\0\0\x03\0\0\0\0\0", 22);
	feed(f, 1, b.b, b.n);
	for (int i = 0; i < 300; i++) {
		b.n = 0;
		my_pkt(&b, seq++ & 0xff, "\x01" "1", 2);
		feed(f, 1, b.b, b.n);
	}
	b.n = 0;
	my_pkt(&b, seq & 0xff, "\xfe\0\0\x02\0\0\0", 7);
	feed(f, 1, b.b, b.n);
	CHECK_INT(count_op(f, BB_RET), 1);
	CHECK_INT(f->st.unmatched_ret, 0);
	fake_finish(f);
}

static void t_mysql_gap(void)
{
	struct fake *f = fake_new(&bb_dec_mysql, BB_TR_TCP);
	struct bld b = {{0}, 0};
	my_query(&b, 0x03, "SELECT * FROM a");
	feed(f, 0, b.b, b.n);
	b.n = 0;
	my_pkt(&b, 1, "\x01", 1);
	feed(f, 1, b.b, b.n);
	gap(f, 1, 100); /* the rest of the reply is lost */
	CHECK_INT(count_op(f, BB_RET), 1);
	b.n = 0;
	my_query(&b, 0x03, "DELETE FROM b");
	feed(f, 0, b.b, b.n);
	b.n = 0;
	my_pkt(&b, 7, "\x01" "1", 2); /* tail of the lost reply */
	my_pkt(&b, 1, "\x00\x01\x00\x02\x00\x00\x00", 7);
	feed(f, 1, b.b, b.n);
	CHECK_INT(count_op(f, BB_RET), 2);
	CHECK_STR(f->r[3].req, "DELETE b");
	CHECK_STR(f->r[3].id, "c7.2");
	fake_finish(f);
}

/* ---- kafka ---------------------------------------------------------------------------- */

static void kf_req(struct bld *b, unsigned api, unsigned ver, uint32_t corr, const char *topic,
                   int acks0)
{
	size_t at = b->n;
	b_be32(b, 0);
	b_be16(b, api);
	b_be16(b, ver);
	b_be32(b, corr);
	b_be16(b, 7);
	b_str(b, "rdkafka", 0);
	if (api == 18 && ver >= 3) { /* ApiVersions v3: header tags, compact body */
		b_u8(b, 0);
		b_u8(b, 4);
		b_str(b, "lib", 0);
		b_u8(b, 2);
		b_str(b, "1", 0);
		b_u8(b, 0);
	} else if (api == 0) { /* Produce v7 */
		b_be16(b, 0xffff); /* transactional_id null */
		b_be16(b, acks0 ? 0 : 1);
		b_be32(b, 1500);
		b_be32(b, 1);
		b_be16(b, (unsigned)strlen(topic));
		b_str(b, topic, 0);
		b_be32(b, 1);
		b_be32(b, 0);
		b_be32(b, 200);
		for (int i = 0; i < 200; i++)
			b_u8(b, (unsigned)i);
	} else if (api == 3) { /* Metadata v1 */
		b_be32(b, 1);
		b_be16(b, (unsigned)strlen(topic));
		b_str(b, topic, 0);
	} else if (api == 1) { /* Fetch v11 */
		b_be32(b, 0xffffffff);
		b_be32(b, 500);
		b_be32(b, 1);
		b_be32(b, 52428800);
		b_u8(b, 0);
		b_be32(b, 0);
		b_be32(b, 0xffffffff);
		b_be32(b, 1);
		b_be16(b, (unsigned)strlen(topic));
		b_str(b, topic, 0);
	}
	{
		uint32_t v = (uint32_t)(b->n - at - 4);
		b->b[at] = (uint8_t)(v >> 24);
		b->b[at + 1] = (uint8_t)(v >> 16);
		b->b[at + 2] = (uint8_t)(v >> 8);
		b->b[at + 3] = (uint8_t)v;
	}
}

static void kf_resp(struct bld *b, uint32_t corr, size_t body)
{
	b_be32(b, (uint32_t)(4 + body));
	b_be32(b, corr);
	for (size_t i = 0; i < body; i++)
		b_u8(b, (unsigned)(i * 7));
}

static void t_kafka_split(void)
{
	struct bld c1 = {{0}, 0}, s1 = {{0}, 0}, c2 = {{0}, 0}, s2 = {{0}, 0}, c3 = {{0}, 0};
	kf_req(&c1, 18, 3, 1, NULL, 0);
	kf_resp(&s1, 1, 30);
	kf_req(&c2, 3, 1, 2, "orders", 0);
	kf_req(&c2, 0, 7, 3, "orders", 0);
	kf_req(&c2, 0, 7, 4, "clicks", 1); /* acks=0: no response */
	kf_req(&c2, 1, 11, 5, "payments", 0);
	/* answered out of order (another broker would): matched by id */
	kf_resp(&s2, 5, 300);
	kf_resp(&s2, 2, 60);
	kf_resp(&s2, 3, 20);
	kf_req(&c3, 12, 4, 6, NULL, 0);
	const struct turn t[] = {
		{0, c1.b, c1.n}, {1, s1.b, s1.n}, {0, c2.b, c2.n}, {1, s2.b, s2.n}, {0, c3.b, c3.n},
	};
	struct fake *f = play_split(&bb_dec_kafka, t, sizeof t / sizeof t[0]);
	static const char *const want[][3] = {
		{"C", "c7#1", "ApiVersions"},
		{"R", "c7#1", "ApiVersions"},
		{"C", "c7#2", "Metadata orders"},
		{"C", "c7#3", "Produce orders"},
		{"C", "c7#4", "Produce clicks"},
		{"C", "c7#5", "Fetch payments"},
		{"R", "c7#5", "Fetch payments"},
		{"R", "c7#2", "Metadata orders"},
		{"R", "c7#3", "Produce orders"},
		{"C", "c7#6", "Heartbeat"},
	};
	CHECK_INT(f->n, 10);
	for (int i = 0; i < f->n && i < 10; i++) {
		CHECK_INT(f->r[i].op, want[i][0][0] == 'C' ? BB_CALL : BB_RET);
		CHECK_STR(f->r[i].id, want[i][1]);
		CHECK_STR(f->r[i].req, want[i][2]);
	}
	CHECK_INT(f->st.malformed, 0);
	CHECK_INT(f->st.unmatched_ret, 0);
	ref_free(f);
}

static void t_kafka_gap(void)
{
	struct fake *f = fake_new(&bb_dec_kafka, BB_TR_TCP);
	struct bld c = {{0}, 0}, s = {{0}, 0};
	kf_req(&c, 0, 7, 10, "t", 0);
	kf_req(&c, 3, 1, 11, "t", 0);
	feed(f, 0, c.b, c.n);
	kf_resp(&s, 10, 5000);
	feed(f, 1, s.b, 600); /* its head (512 bytes) is read */
	gap(f, 1, 1000); /* inside the first response: skipped by its size */
	feed(f, 1, s.b + 1600, s.n - 1600);
	CHECK_INT(count_op(f, BB_RET), 1);
	/* a hole of unknown size: the decoder hunts for a pending id */
	s.n = 0;
	kf_resp(&s, 11, 16);
	gap(f, 1, 0);
	feed(f, 1, "\x00\x01junk", 6);
	feed(f, 1, s.b, s.n);
	CHECK_INT(count_op(f, BB_RET), 2);
	CHECK_STR(f->r[3].id, "c7#11");
	CHECK_STR(f->r[3].req, "Metadata t");
	fake_finish(f);
}

/* ---- captured bytes ------------------------------------------------------------------- */

/* Reads a seed of the fuzz corpus (its first two bytes are the harness's
 * transport and split choices); NULL when absent. Caller frees. */
static uint8_t *load_seed(const char *dec, const char *name, size_t *n)
{
	const char *src = getenv("BB_SRC");
	char path[4096];
	if (!src)
		return NULL;
	snprintf(path, sizeof path, "%s/tests/fuzz/corpus/dec_%s/%s", src, dec, name);
	FILE *fp = fopen(path, "rb");
	if (!fp)
		return NULL;
	uint8_t *b = malloc(1 << 16);
	size_t k = fread(b, 1, 1 << 16, fp);
	fclose(fp);
	if (k < 2) {
		free(b);
		return NULL;
	}
	memmove(b, b + 2, k - 2);
	*n = k - 2;
	return b;
}

/* Real client and server bytes of corpus captures (tshark's extraction of
 * each direction, the seeds of the fuzz corpus), cut at every offset: the
 * same records as uncut, and the counts the whole capture gives. */
static void t_captured_split(void)
{
	static const struct {
		const char *dec, *client, *server;
		int calls, rets;
		const char *first_req;
	} cases[] = {
		/* pgsql__zeek__psql-create-insert-select-delete-drop.pcap */
		{"pgsql", "client-startup-simple", "server-replies", 8, 8, "STARTUP"},
		/* mysql__zeek__mysql.pcap */
		{"mysql", "client-queries", "server-results", 17, 16, "SELECT"},
		/* kafka__ndpi__kafka.pcapng, all its connections end to end; the
		 * extraction kept one retransmitted request and one retransmitted
		 * response (frames 18 and 10), which the capture counts once:
		 * 15/15 here, 14/14 from the pcap */
		{"kafka", "client-requests", "server-responses", 15, 15, "ApiVersions"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		size_t nc = 0, ns = 0;
		uint8_t *c = load_seed(cases[i].dec, cases[i].client, &nc);
		uint8_t *sv = load_seed(cases[i].dec, cases[i].server, &ns);
		if (!c || !sv) {
			free(c);
			free(sv);
			SKIP("the fuzz corpus seeds were not found (BB_SRC)");
		}
		const struct turn t[] = {{0, c, nc}, {1, sv, ns}};
		const struct bb_decoder *dec = bb_dec_at((size_t)bb_dec_find(cases[i].dec));
		struct fake *f = play_split(dec, t, 2);
		CHECK_INT(count_op(f, BB_CALL), cases[i].calls);
		CHECK_INT(count_op(f, BB_RET), cases[i].rets);
		CHECK_INT(f->st.malformed, 0);
		if (f->n > 0)
			CHECK_STR(f->r[0].req, cases[i].first_req);
		ref_free(f);
		free(c);
		free(sv);
	}
}

static const struct unit_test tests[] = {
	{"sql_summary", t_sql_summary},
	{"pgsql_split", t_pgsql_split},
	{"pgsql_tls_and_gap", t_pgsql_tls_and_gap},
	{"mysql_split", t_mysql_split},
	{"mysql_big", t_mysql_big},
	{"mysql_gap", t_mysql_gap},
	{"kafka_split", t_kafka_split},
	{"kafka_gap", t_kafka_gap},
	{"captured_split", t_captured_split},
};

UNIT_MAIN(tests)

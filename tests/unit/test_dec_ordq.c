/* test_dec_ordq.c - the ordinal reply queue and the five decoders that pair replies by order */
/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/dec_ordq_int.h"
#include "decoders/decoders.h"
#include "unit.h"

#include "dec_fake.h"

/* ---- the queue alone ---- */

/* A queue with its decoder's counters, as a decoder's state holds it. */
struct qt {
	struct bb_dec_stats st;
	struct bb_dec_ctx ctx;
	struct dec_ordq q;
};

static struct qt *qt_new(void)
{
	struct qt *t = calloc(1, sizeof *t);
	t->ctx.conn = 1;
	t->ctx.stats = &t->st;
	return t;
}

/* 10,000 calls wait, then their replies come: each pairs with its own call. */
static void t_queue_deep(void)
{
	struct qt *t = qt_new();
	char req[16];
	for (uint32_t i = 1; i <= 10000; i++) {
		int n = snprintf(req, sizeof req, "r%u", i);
		CHECK_INT(dec_ordq_push(&t->q, &t->ctx, 12, i * 10, i, i & 0xff, req, (size_t)n), 1);
	}
	CHECK(t->st.queue_bytes > 0);
	int bad = 0;
	for (uint32_t i = 1; i <= 10000; i++) {
		const struct dec_ordq_ent *e;
		int n = snprintf(req, sizeof req, "r%u", i);
		if (dec_ordq_front(&t->q, &e) != DEC_ORDQ_CALL || e->ord != i || e->t0 != i * 10 ||
		    e->flags != (i & 0xff) || e->reqlen != n || memcmp(e->req, req, (size_t)n))
			bad++;
		dec_ordq_pop(&t->q);
	}
	CHECK_INT(bad, 0);
	const struct dec_ordq_ent *e;
	CHECK_INT(dec_ordq_front(&t->q, &e), DEC_ORDQ_EMPTY);
	CHECK_INT(t->st.queue_full, 0);
	dec_ordq_free(&t->q);
	CHECK_INT(t->st.queue_bytes, 0);
	free(t);
}

/* Past the per-connection bound calls are lost, counted, and keep their
 * place: their replies are reported lost, the others still pair right,
 * while replies and calls interleave. */
static void t_queue_bound(void)
{
	struct qt *t = qt_new();
	uint32_t sent = 0, answered = 0;
	uint64_t paired = 0, lost = 0, wrong = 0;
	/* ground truth: call k is stored or not */
	uint8_t *stored = calloc(3 * DEC_ORDQ_MAX, 1);
	for (int round = 0; round < 3; round++) {
		uint32_t burst = round == 0 ? DEC_ORDQ_MAX + 100 : DEC_ORDQ_MAX / 2 + 7;
		for (uint32_t i = 0; i < burst; i++) {
			sent++;
			stored[sent] = (uint8_t)dec_ordq_push(&t->q, &t->ctx, 4, sent, sent, 0, "x", 1);
		}
		uint32_t replies = round == 2 ? sent - answered : burst * 3 / 4;
		for (uint32_t i = 0; i < replies; i++) {
			const struct dec_ordq_ent *e;
			int w = dec_ordq_front(&t->q, &e);
			answered++;
			if (w == DEC_ORDQ_CALL && e->ord == answered && stored[answered])
				paired++;
			else if (w == DEC_ORDQ_LOST && !stored[answered])
				lost++;
			else
				wrong++;
			dec_ordq_pop(&t->q);
		}
	}
	CHECK_INT(wrong, 0);
	CHECK_INT(paired + lost, sent);
	CHECK_INT(lost, t->st.queue_full);
	CHECK(lost >= 100);
	const struct dec_ordq_ent *e;
	CHECK_INT(dec_ordq_front(&t->q, &e), DEC_ORDQ_EMPTY);
	free(stored);
	dec_ordq_free(&t->q);
	CHECK_INT(t->st.queue_bytes, 0);
	free(t);
}

/* The bytes of all queues of a decoder are bounded: a queue that would pass
 * the budget loses calls instead of growing. */
static void t_queue_budget(void)
{
	struct qt *t = qt_new();
	t->st.queue_bytes = DEC_ORDQ_BUDGET - 1000; /* other connections hold the rest */
	uint32_t ok = 0;
	for (uint32_t i = 1; i <= 1000; i++)
		ok += (uint32_t)dec_ordq_push(&t->q, &t->ctx, 20, i, i, 0, "GET", 3);
	CHECK(ok > 0 && ok < 100);
	CHECK_INT(t->st.queue_full, 1000 - ok);
	CHECK(t->st.queue_bytes <= DEC_ORDQ_BUDGET);
	dec_ordq_free(&t->q);
	CHECK_INT(t->st.queue_bytes, DEC_ORDQ_BUDGET - 1000);
	free(t);
}

/* After a hole: the reply answers the latest call sent before it; calls
 * lost to the bound before that one go with the older calls. */
static void t_queue_skip_to(void)
{
	struct qt *t = qt_new();
	for (uint32_t i = 1; i <= 5; i++)
		dec_ordq_push(&t->q, &t->ctx, 4, i * 100, i, 0, "", 0);
	dec_ordq_skip_to(&t->q, 350);
	const struct dec_ordq_ent *e;
	CHECK_INT(dec_ordq_front(&t->q, &e), DEC_ORDQ_CALL);
	CHECK_INT(e ? e->ord : 0, 3);
	dec_ordq_skip_to(&t->q, 50); /* before every waiting call: nothing moves */
	CHECK_INT(dec_ordq_front(&t->q, &e), DEC_ORDQ_CALL);
	CHECK_INT(e ? e->ord : 0, 3);
	dec_ordq_clear(&t->q);
	CHECK_INT(dec_ordq_front(&t->q, &e), DEC_ORDQ_EMPTY);
	dec_ordq_free(&t->q);
	free(t);
}

/* ---- the decoders, pipelined ---- */

/* Checks the records of a pipeline as they come: calls numbered 1..n with
 * their req, then each return with the id and req of its own call. */
struct pipe {
	int ncall, nret, bad;
	int max_wait;
	char (*req)[64];
	char first_bad[160];
};

static void pipe_emit(void *arg, const struct bb_dec_msg *m)
{
	struct pipe *p = arg;
	char id[32], want[32];
	snprintf(id, sizeof id, "%.*s", (int)m->id_len, m->id);
	int k = m->op == BB_CALL ? ++p->ncall : ++p->nret;
	snprintf(want, sizeof want, "c7.%d", k);
	size_t rl = m->req_len < 63 ? m->req_len : 63;
	int ok = strcmp(id, want) == 0;
	if (m->op == BB_CALL) {
		memcpy(p->req[k], m->req ? m->req : "", rl);
		p->req[k][rl] = 0;
	} else {
		ok = ok && k <= p->ncall && strlen(p->req[k]) == rl && memcmp(p->req[k], m->req, rl) == 0;
	}
	if (p->ncall - p->nret > p->max_wait)
		p->max_wait = p->ncall - p->nret;
	if (!ok && !p->bad++)
		snprintf(p->first_bad, sizeof p->first_bad, "%s %s req=%.*s (want %s req=%s)",
		         m->op == BB_CALL ? "CALL" : "RET", id, (int)rl, m->req ? m->req : "",
		         want, m->op == BB_RET && k <= p->ncall ? p->req[k] : "?");
}

/* One protocol: the i-th call (1-based) and its reply, in buf. */
typedef size_t (*msg_fn)(char *buf, size_t cap, int i);

static size_t http_call(char *b, size_t cap, int i)
{
	return (size_t)snprintf(b, cap, "GET /k%d HTTP/1.1\r\nHost: s\r\n\r\n", i);
}
static size_t http_reply(char *b, size_t cap, int i)
{
	(void)i;
	return (size_t)snprintf(b, cap, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
}
static size_t redis_call(char *b, size_t cap, int i)
{
	/* alternate commands so that a shifted pairing shows in req= */
	const char *c = i % 3 == 0 ? "GET" : i % 3 == 1 ? "INCR" : "TYPE";
	char key[16];
	int kl = snprintf(key, sizeof key, "k%d", i);
	return (size_t)snprintf(b, cap, "*2\r\n$%zu\r\n%s\r\n$%d\r\n%s\r\n", strlen(c), c, kl, key);
}
static size_t redis_reply(char *b, size_t cap, int i)
{
	(void)i;
	return (size_t)snprintf(b, cap, "$-1\r\n");
}
static size_t mc_call(char *b, size_t cap, int i)
{
	return (size_t)snprintf(b, cap, "%s k%d\r\n", i % 2 ? "get" : "gets", i);
}
static size_t mc_reply(char *b, size_t cap, int i)
{
	if (i % 5)
		return (size_t)snprintf(b, cap, "END\r\n");
	return (size_t)snprintf(b, cap, "VALUE k%d 0 1\r\nv\r\nEND\r\n", i);
}
static size_t pg_call(char *b, size_t cap, int i)
{
	char sql[64];
	int n = snprintf(sql, sizeof sql, "SELECT * FROM t%d", i);
	size_t len = 4 + (size_t)n + 1;
	if (cap < len + 1)
		return 0;
	b[0] = 'Q';
	b[1] = (char)(len >> 24);
	b[2] = (char)(len >> 16);
	b[3] = (char)(len >> 8);
	b[4] = (char)len;
	memcpy(b + 5, sql, (size_t)n + 1);
	return 1 + len;
}
static size_t pg_reply(char *b, size_t cap, int i)
{
	(void)i;
	static const char z[] = "C\0\0\0\x0dSELECT 1\0Z\0\0\0\x05I";
	if (cap < sizeof z - 1)
		return 0;
	memcpy(b, z, sizeof z - 1);
	return sizeof z - 1;
}
static size_t my_call(char *b, size_t cap, int i)
{
	int n = snprintf(b + 5, cap - 5, "SELECT * FROM t%d", i);
	size_t len = 1 + (size_t)n;
	b[0] = (char)len;
	b[1] = (char)(len >> 8);
	b[2] = 0;
	b[3] = 0;    /* seq 0: a command */
	b[4] = 0x03; /* COM_QUERY */
	return 4 + len;
}
static size_t my_reply(char *b, size_t cap, int i)
{
	(void)i;
	static const char ok[] = "\x07\0\0\x01\0\0\0\x02\0\0\0"; /* OK, seq 1 */
	if (cap < sizeof ok - 1)
		return 0;
	memcpy(b, ok, sizeof ok - 1);
	return sizeof ok - 1;
}

/* n calls written back to back, then n replies, each fed in pieces of
 * about 1,400 bytes (a segment); returns the checker's findings. */
static struct pipe run_pipe(const struct bb_decoder *dec, msg_fn call, msg_fn reply, int n,
                            struct bb_dec_stats *st)
{
	struct fake *f = fake_new(dec, BB_TR_TCP);
	struct pipe p;
	memset(&p, 0, sizeof p);
	p.req = calloc((size_t)n + 2, sizeof *p.req);
	f->ctx.emit = pipe_emit;
	f->ctx.arg = &p;
	size_t cap = (size_t)n * 96 + 256;
	char *buf = malloc(cap);
	for (int dir = 0; dir < 2; dir++) {
		size_t len = 0;
		for (int i = 1; i <= n; i++)
			len += (dir ? reply : call)(buf + len, cap - len, i);
		for (size_t off = 0; off < len; off += 1400)
			feed(f, dir, buf + off, len - off < 1400 ? len - off : 1400);
	}
	if (dec->end)
		dec->end(f->state, &f->ctx);
	dec->free(f->state); /* the queue is released (fake_free frees it again: a no-op) */
	*st = f->st;
	free(buf);
	free(p.req);
	p.req = NULL;
	fake_free(f);
	return p;
}

static void pipelines(const struct bb_decoder *dec, msg_fn call, msg_fn reply)
{
	static const int depth[] = {1, 16, 17, 100, 1025, 5000, 10000};
	for (size_t i = 0; i < sizeof depth / sizeof depth[0]; i++) {
		struct bb_dec_stats st;
		struct pipe p = run_pipe(dec, call, reply, depth[i], &st);
		if (p.bad || p.ncall != depth[i] || p.nret != depth[i] || st.unmatched_ret)
			UNIT_FAIL_("%s depth %d: %d calls, %d returns, %d wrong (first: %s), %llu unmatched",
			           dec->name, depth[i], p.ncall, p.nret, p.bad, p.first_bad,
			           (unsigned long long)st.unmatched_ret);
		CHECK_INT(p.max_wait, depth[i]);
		CHECK_INT(st.queue_full, 0);
		CHECK_INT(st.queue_bytes, 0);
	}
}

static void t_http_pipeline(void)
{
	pipelines(&bb_dec_http, http_call, http_reply);
}
static void t_redis_pipeline(void)
{
	pipelines(&bb_dec_redis, redis_call, redis_reply);
}
static void t_memcache_pipeline(void)
{
	pipelines(&bb_dec_memcache, mc_call, mc_reply);
}
static void t_pgsql_pipeline(void)
{
	pipelines(&bb_dec_pgsql, pg_call, pg_reply);
}
static void t_mysql_pipeline(void)
{
	pipelines(&bb_dec_mysql, my_call, my_reply);
}

/* Deeper than a connection's bound: the calls past it are counted and their
 * replies unmatched; no reply takes another call's id. */
static void t_redis_past_bound(void)
{
	struct fake *f = fake_new(&bb_dec_redis, BB_TR_TCP);
	struct pipe p;
	memset(&p, 0, sizeof p);
	int n = (int)DEC_ORDQ_MAX + 50;
	p.req = calloc((size_t)n + 2, sizeof *p.req);
	f->ctx.emit = pipe_emit;
	f->ctx.arg = &p;
	char b[64];
	for (int i = 1; i <= n; i++)
		feed(f, 0, b, redis_call(b, sizeof b, i));
	for (int i = 1; i <= n; i++)
		feed(f, 1, b, redis_reply(b, sizeof b, i));
	CHECK_INT(f->st.queue_full, 50);
	CHECK_INT(f->st.unmatched_ret, 50);
	/* the 50 unmatched are the last: every other return is its own call's */
	CHECK_INT(p.bad, 50);
	CHECK_HAS(p.first_bad, "RET c7.? ");
	CHECK_HAS(p.first_bad, "want c7.65537 ");
	free(p.req);
	fake_free(f);
}

/* A connection picked up mid-stream whose first request is a memcached miss:
 * the bare END is its reply (seen on real captures: it was dropped), whole,
 * or cut after "EN" with the next reply in the same segment as its "D". */
static void t_mc_midstream_miss(void)
{
	for (int cut = 0; cut < 2; cut++) {
		struct fake *f = fake_new(&bb_dec_memcache, BB_TR_TCP);
		bb_dec_memcache.gap(f->state, &f->ctx, BB_DIR_C2S, 0);
		bb_dec_memcache.gap(f->state, &f->ctx, BB_DIR_S2C, 0);
		feed(f, 0, "get user:1\r\nversion\r\n", 21);
		if (cut) {
			feed(f, 1, "EN", 2);
			feed(f, 1, "D\r\nVERSION 1.6.18\r\n", 19);
		} else {
			feed(f, 1, "END\r\n", 5);
			feed(f, 1, "VERSION 1.6.18\r\n", 16);
		}
		CHECK_INT(count_op(f, BB_CALL), 2);
		CHECK_INT(count_op(f, BB_RET), 2);
		CHECK_INT(f->st.unmatched_ret, 0);
		if (f->n == 4) {
			CHECK_STR(f->r[2].id, "c7.1");
			CHECK_STR(f->r[2].req, "get");
			CHECK_STR(f->r[3].id, "c7.2");
			CHECK_STR(f->r[3].req, "version");
		}
		fake_free(f);
	}
}

static const struct unit_test tests[] = {
	{"queue_deep", t_queue_deep},
	{"queue_bound", t_queue_bound},
	{"queue_budget", t_queue_budget},
	{"queue_skip_to", t_queue_skip_to},
	{"http_pipeline", t_http_pipeline},
	{"redis_pipeline", t_redis_pipeline},
	{"memcache_pipeline", t_memcache_pipeline},
	{"pgsql_pipeline", t_pgsql_pipeline},
	{"mysql_pipeline", t_mysql_pipeline},
	{"redis_past_bound", t_redis_past_bound},
	{"mc_midstream_miss", t_mc_midstream_miss},
};

UNIT_MAIN(tests)

/* test_dec_redis.c - unit tests of the redis, memcache and thrift decoders */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "decoders/decoders.h"
#include "unit.h"

#define FAKE_SERVER "10.0.0.2:6379"
#include "dec_fake.h"

static void end(struct fake *f)
{
	if (f->dec->end)
		f->dec->end(f->state, &f->ctx);
}

/* Request bytes then reply bytes, each cut at k (k = 0: whole). */
static struct fake *run(const struct bb_decoder *dec, const void *req, size_t nq,
                        const void *rep, size_t nr, size_t k)
{
	struct fake *f = fake_new(dec, BB_TR_TCP);
	size_t kq = k && k < nq ? k : nq, kr = k && k < nr ? k : nr;
	feed(f, BB_DIR_C2S, req, kq);
	feed(f, BB_DIR_C2S, (const char *)req + kq, nq - kq);
	feed(f, BB_DIR_S2C, rep, kr);
	feed(f, BB_DIR_S2C, (const char *)rep + kr, nr - kr);
	end(f);
	return f;
}

/* The streams cut at every byte boundary give the records of the whole. */
static void check_every_split(const struct bb_decoder *dec, const char *req, size_t nq,
                              const char *rep, size_t nr)
{
	struct fake *ref = run(dec, req, nq, rep, nr, 0);
	size_t most = nq > nr ? nq : nr;
	for (size_t k = 1; k < most; k++) {
		struct fake *f = run(dec, req, nq, rep, nr, k);
		int same = f->n == ref->n;
		for (int i = 0; same && i < f->n; i++)
			same = f->r[i].op == ref->r[i].op && f->r[i].ts == ref->r[i].ts &&
			       f->r[i].end == ref->r[i].end && f->r[i].len == ref->r[i].len &&
			       !strcmp(f->r[i].id, ref->r[i].id) && !strcmp(f->r[i].req, ref->r[i].req);
		if (!same)
			UNIT_FAIL_("%s: cut at %zu: %d records, whole: %d", dec->name, k, f->n, ref->n);
		CHECK_INT(f->st.malformed, ref->st.malformed);
		fake_free(f);
		if (!same)
			break;
	}
	fake_free(ref);
}

/* ---- redis ------------------------------------------------------------------ */

static const char r_req[] =
	"*2\r\n$3\r\nGET\r\n$3\r\nkey\r\n"
	"*3\r\n$4\r\nhset\r\n$1\r\nh\r\n$11\r\nhello world\r\n"
	"PING\r\n"
	"\r\n"
	"*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n"
	"*1\r\n$6\r\nLRANGE\r\n"
	"*2\r\n$4\r\nINCR\r\n$1\r\nx\r\n";
static const char r_rep[] =
	"$5\r\nvalue\r\n"
	":1\r\n"
	"+PONG\r\n"
	"%2\r\n+server\r\n+redis\r\n+proto\r\n:3\r\n"
	">3\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n_\r\n" /* a push: not a reply */
	"*3\r\n*2\r\n:1\r\n~1\r\n#t\r\n$-1\r\n,1.5\r\n"
	"|1\r\n+ttl\r\n:10\r\n:42\r\n"; /* an attribute, then the reply */

static void t_redis_split(void)
{
	struct fake *f = run(&bb_dec_redis, r_req, sizeof r_req - 1, r_rep, sizeof r_rep - 1, 0);
	CHECK_INT(count_op(f, BB_CALL), 6);
	CHECK_INT(count_op(f, BB_RET), 6);
	CHECK_INT(f->st.malformed, 0);
	CHECK_INT(f->st.unmatched_ret, 0);
	if (f->n == 12) {
		CHECK_STR(f->r[0].id, "c7.1");
		CHECK_STR(f->r[0].req, "GET");
		CHECK_STR(f->r[1].req, "HSET");
		CHECK_STR(f->r[2].req, "PING");
		CHECK_INT(f->r[2].len, 6);
		CHECK_STR(f->r[3].req, "HELLO");
		CHECK_STR(f->r[5].id, "c7.6");
		CHECK_STR(f->r[6].id, "c7.1");
		CHECK_STR(f->r[6].req, "GET");
		CHECK_INT(f->r[6].len, 11);
		CHECK_INT(f->r[6].end, 10 * 10 + 1);
		CHECK_STR(f->r[9].req, "HELLO");
		CHECK_STR(f->r[10].req, "LRANGE");
		CHECK_STR(f->r[11].id, "c7.6");
		CHECK_STR(f->r[11].req, "INCR");
		CHECK_INT(f->r[11].len, 20);
	}
	fake_free(f);
	check_every_split(&bb_dec_redis, r_req, sizeof r_req - 1, r_rep, sizeof r_rep - 1);
}

static void t_redis_pubsub(void)
{
	static const char req[] = "*3\r\n$9\r\nSUBSCRIBE\r\n$1\r\na\r\n$1\r\nb\r\n"
	                          "*1\r\n$4\r\nPING\r\n"
	                          "*1\r\n$5\r\nRESET\r\n"
	                          "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n";
	static const char rep[] = "*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n"
	                          "*3\r\n$9\r\nsubscribe\r\n$1\r\nb\r\n:2\r\n"
	                          "*3\r\n$7\r\nmessage\r\n$1\r\na\r\n$2\r\nhi\r\n"
	                          "*2\r\n$4\r\npong\r\n$0\r\n\r\n"
	                          "*3\r\n$7\r\nmessage\r\n$1\r\nb\r\n$2\r\nho\r\n"
	                          "+RESET\r\n"
	                          "*3\r\n$7\r\nmessage\r\n$1\r\na\r\n$2\r\nhi\r\n"; /* an array reply */
	struct fake *f = run(&bb_dec_redis, req, sizeof req - 1, rep, sizeof rep - 1, 0);
	CHECK_INT(count_op(f, BB_CALL), 4);
	CHECK_INT(count_op(f, BB_RET), 4);
	CHECK_INT(f->st.unmatched_ret, 0);
	if (f->n == 8) {
		CHECK_STR(f->r[4].req, "SUBSCRIBE");
		CHECK_STR(f->r[5].req, "PING");
		CHECK_STR(f->r[6].req, "RESET");
		CHECK_STR(f->r[7].req, "GET");
		CHECK_STR(f->r[7].id, "c7.4");
	}
	fake_free(f);
	check_every_split(&bb_dec_redis, req, sizeof req - 1, rep, sizeof rep - 1);
}

/* Arrays that begin with a pub/sub word but are replies: COMMAND DOCS (every
 * command, in the server's hash order, here "unsubscribe" first) and a list
 * of three that a client stored. Caught live: the whole COMMAND DOCS reply
 * was taken for an unsubscribe confirmation and every later reply paired
 * with the command before its own. */
static void t_redis_pubsub_words(void)
{
	static const char req[] = "*2\r\n$7\r\nCOMMAND\r\n$4\r\nDOCS\r\n"
	                          "*4\r\n$6\r\nLRANGE\r\n$1\r\nl\r\n$1\r\n0\r\n$2\r\n-1\r\n"
	                          "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n";
	static const char rep[] = "*4\r\n$11\r\nunsubscribe\r\n*2\r\n$7\r\nsummary\r\n$1\r\nx\r\n"
	                          "$3\r\nget\r\n*2\r\n$7\r\nsummary\r\n$1\r\ny\r\n"
	                          "*3\r\n$11\r\nunsubscribe\r\n$1\r\na\r\n:0\r\n"
	                          "+OK\r\n";
	struct fake *f = run(&bb_dec_redis, req, sizeof req - 1, rep, sizeof rep - 1, 0);
	CHECK_INT(count_op(f, BB_CALL), 3);
	CHECK_INT(count_op(f, BB_RET), 3);
	CHECK_INT(f->st.unmatched_ret, 0);
	if (f->n == 6) {
		CHECK_STR(f->r[3].req, "COMMAND");
		CHECK_INT(f->r[3].len, 79);
		CHECK_STR(f->r[4].req, "LRANGE");
		CHECK_STR(f->r[5].req, "SET");
		CHECK_INT(f->r[5].len, 5);
	}
	fake_free(f);
	check_every_split(&bb_dec_redis, req, sizeof req - 1, rep, sizeof rep - 1);
}

static void t_redis_client_reply(void)
{
	static const char req[] = "*3\r\n$6\r\nCLIENT\r\n$5\r\nREPLY\r\n$3\r\nOFF\r\n"
	                          "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"
	                          "*3\r\n$6\r\nCLIENT\r\n$5\r\nREPLY\r\n$2\r\nON\r\n"
	                          "*3\r\n$6\r\nCLIENT\r\n$5\r\nREPLY\r\n$4\r\nSKIP\r\n"
	                          "*2\r\n$3\r\nDEL\r\n$1\r\nk\r\n"
	                          "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n";
	static const char rep[] = "+OK\r\n$-1\r\n";
	struct fake *f = run(&bb_dec_redis, req, sizeof req - 1, rep, sizeof rep - 1, 0);
	CHECK_INT(count_op(f, BB_CALL), 6);
	CHECK_INT(count_op(f, BB_RET), 2);
	if (f->n == 8) {
		CHECK_STR(f->r[6].id, "c7.3");
		CHECK_STR(f->r[6].req, "CLIENT");
		CHECK_STR(f->r[7].id, "c7.6");
		CHECK_STR(f->r[7].req, "GET");
	}
	fake_free(f);
}

/* A hole inside a bulk string of known length is skipped; elsewhere the
 * decoder hunts for the next message, and garbage is counted. */
static void t_redis_gap(void)
{
	struct fake *f = fake_new(&bb_dec_redis, BB_TR_TCP);
	feed(f, 0, "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", 20);
	feed(f, 1, "$100\r\n0123456789", 16);
	bb_dec_redis.gap(f->state, &f->ctx, 1, 80);
	f->pos[1] += 80;
	feed(f, 1, "0123456789\r\n", 12);
	CHECK_INT(count_op(f, BB_RET), 1);
	CHECK_INT(f->n > 1 ? f->r[1].len : 0, 108);
	/* lost in the middle of a command: the next one is found */
	feed(f, 0, "*2\r\n$3\r\nGET\r\n$1", 15);
	bb_dec_redis.gap(f->state, &f->ctx, 0, 0);
	f->len[0] = 0;
	feed(f, 0, "xx\r\nyy\r\n*1\r\n$4\r\nPING\r\n", 22);
	feed(f, 1, "$3\r\nabc\r\n+PONG\r\n", 16);
	end(f);
	CHECK_INT(count_op(f, BB_CALL), 3);
	CHECK_INT(count_op(f, BB_RET), 3);
	int last_call = 0;
	for (int i = 0; i < f->n; i++)
		if (f->r[i].op == BB_CALL)
			last_call = i;
	CHECK_STR(f->r[last_call].req, "PING");
	CHECK_STR(f->r[1].req, "GET");
	CHECK_INT(f->st.resync, 2);
	feed(f, 1, "?garbage\r\n", 10);
	CHECK_INT(f->st.malformed, 1);
	CHECK(bb_dec_redis.probe((const uint8_t *)"*1\r\n$4\r\nPING\r\n", 14, BB_TR_TCP, 0));
	CHECK(!bb_dec_redis.probe((const uint8_t *)"GET / HTTP/1.1\r\n", 16, BB_TR_TCP, 0));
	fake_free(f);
}

/* 300 commands pipelined before the first reply (bulk loading): every reply
 * pairs with its command, with its name. */
static void t_redis_bulk(void)
{
	struct fake *f = fake_new(&bb_dec_redis, BB_TR_TCP);
	for (int i = 0; i < 300; i++)
		feed(f, 0, "*1\r\n$4\r\nPING\r\n", 14);
	for (int i = 0; i < 300; i++)
		feed(f, 1, "+PONG\r\n", 7);
	CHECK_INT(count_op(f, BB_CALL), 300);
	CHECK_INT(count_op(f, BB_RET), 300);
	CHECK_INT(f->st.unmatched_ret, 0);
	CHECK_INT(f->st.evicted, 0);
	if (f->n == 600) {
		CHECK_STR(f->r[300].id, "c7.1");
		CHECK_STR(f->r[300].req, "PING");
		CHECK_STR(f->r[363].req, "PING");
		CHECK_STR(f->r[364].id, "c7.65");
		CHECK_STR(f->r[364].req, "PING");
		CHECK_STR(f->r[599].id, "c7.300");
	}
	fake_free(f);
}

/* Nesting deeper than the decoder follows is malformed, not a crash. */
static void t_redis_deep(void)
{
	struct fake *f = fake_new(&bb_dec_redis, BB_TR_TCP);
	for (int i = 0; i < 100; i++)
		feed(f, 1, "*1\r\n", 4);
	CHECK(f->st.malformed >= 1);
	CHECK_INT(f->n, 0);
	fake_free(f);
}

/* ---- memcache ----------------------------------------------------------------- */

static const char m_req[] = "set k 0 0 5\r\nhello\r\n"
                            "get k j\r\n"
                            "set q 0 0 1 noreply\r\nx\r\n"
                            "stats\r\n"
                            "incr n 1\r\n"
                            "mg k v\r\n"
                            "quit\r\n";
static const char m_rep[] = "STORED\r\n"
                            "VALUE k 0 5\r\nhello\r\nVALUE j 0 3\r\nEND\r\nEND\r\n"
                            "STAT pid 1\r\nSTAT uptime 2\r\nEND\r\n"
                            "NOT_FOUND\r\n"
                            "VA 5 v\r\nhello\r\n";

static void t_mc_text_split(void)
{
	struct fake *f = run(&bb_dec_memcache, m_req, sizeof m_req - 1, m_rep, sizeof m_rep - 1, 0);
	CHECK_INT(count_op(f, BB_CALL), 7);
	CHECK_INT(count_op(f, BB_RET), 5);
	CHECK_INT(f->st.malformed, 0);
	if (f->n == 12) {
		CHECK_STR(f->r[0].req, "set");
		CHECK_STR(f->r[0].id, "c7.1");
		CHECK_INT(f->r[0].len, 20);
		CHECK_STR(f->r[2].req, "set");
		CHECK_STR(f->r[7].id, "c7.1");
		CHECK_STR(f->r[8].id, "c7.2"); /* the value "END\r\n" is data, not the end */
		CHECK_INT(f->r[8].len, 43);
		CHECK_STR(f->r[9].id, "c7.4"); /* c7.3 was noreply */
		CHECK_STR(f->r[9].req, "stats");
		CHECK_STR(f->r[11].id, "c7.6");
		CHECK_STR(f->r[11].req, "mg");
	}
	fake_free(f);
	check_every_split(&bb_dec_memcache, m_req, sizeof m_req - 1, m_rep, sizeof m_rep - 1);
}

/* 200 gets pipelined before the first reply: all paired, in order. */
static void t_mc_deep_pipeline(void)
{
	struct fake *f = fake_new(&bb_dec_memcache, BB_TR_TCP);
	for (int i = 0; i < 200; i++)
		feed(f, 0, "get k\r\n", 7);
	for (int i = 0; i < 200; i++)
		feed(f, 1, "END\r\n", 5);
	CHECK_INT(count_op(f, BB_CALL), 200);
	CHECK_INT(count_op(f, BB_RET), 200);
	CHECK_INT(f->st.unmatched_ret, 0);
	if (f->n == 400) {
		CHECK_STR(f->r[263].req, "get");
		CHECK_STR(f->r[264].id, "c7.65");
		CHECK_STR(f->r[399].id, "c7.200");
	}
	fake_free(f);
}

static size_t mc_bin(uint8_t *b, uint8_t magic, uint8_t op, const char *key, size_t extlen,
                     const char *val, uint32_t opaque)
{
	size_t kl = strlen(key), vl = strlen(val), bl = kl + extlen + vl;
	memset(b, 0, 24 + bl);
	b[0] = magic;
	b[1] = op;
	b[2] = (uint8_t)(kl >> 8);
	b[3] = (uint8_t)kl;
	b[4] = (uint8_t)extlen;
	b[8] = (uint8_t)(bl >> 24);
	b[9] = (uint8_t)(bl >> 16);
	b[10] = (uint8_t)(bl >> 8);
	b[11] = (uint8_t)bl;
	b[12] = (uint8_t)(opaque >> 24);
	b[13] = (uint8_t)(opaque >> 16);
	b[14] = (uint8_t)(opaque >> 8);
	b[15] = (uint8_t)opaque;
	memcpy(b + 24 + extlen, key, kl);
	memcpy(b + 24 + extlen + kl, val, vl);
	return 24 + bl;
}

static void t_mc_binary_split(void)
{
	static uint8_t q[1024], p[1024];
	size_t nq = 0, np = 0;
	nq += mc_bin(q + nq, 0x80, 0x01, "key", 8, "value", 1);  /* SET */
	nq += mc_bin(q + nq, 0x80, 0x0d, "a", 0, "", 2);         /* GETKQ: miss, silent */
	nq += mc_bin(q + nq, 0x80, 0x0d, "key", 0, "", 3);       /* GETKQ: hit */
	nq += mc_bin(q + nq, 0x80, 0x0a, "", 0, "", 4);          /* NOOP */
	nq += mc_bin(q + nq, 0x80, 0x10, "", 0, "", 5);          /* STAT */
	np += mc_bin(p + np, 0x81, 0x01, "", 0, "", 1);
	np += mc_bin(p + np, 0x81, 0x0d, "key", 4, "value", 3);
	np += mc_bin(p + np, 0x81, 0x0a, "", 0, "", 4);
	np += mc_bin(p + np, 0x81, 0x10, "pid", 0, "12", 5);
	np += mc_bin(p + np, 0x81, 0x10, "uptime", 0, "3", 5);
	np += mc_bin(p + np, 0x81, 0x10, "", 0, "", 5);
	struct fake *f = run(&bb_dec_memcache, q, nq, p, np, 0);
	CHECK_INT(count_op(f, BB_CALL), 5);
	CHECK_INT(count_op(f, BB_RET), 4);
	CHECK_INT(f->st.unmatched_ret, 0);
	CHECK_INT(f->st.malformed, 0);
	if (f->n == 9) {
		CHECK_STR(f->r[0].id, "c7.x1");
		CHECK_STR(f->r[0].req, "SET");
		CHECK_STR(f->r[1].req, "GETKQ");
		CHECK_STR(f->r[6].id, "c7.x3");
		CHECK_STR(f->r[8].req, "STAT"); /* one RET for the three responses */
		CHECK_INT(f->r[8].len, 24 * 3 + 5 + 7);
		CHECK_INT(f->r[8].end, (int64_t)(np - 1) * 10 + 1);
	}
	fake_free(f);
	check_every_split(&bb_dec_memcache, (const char *)q, nq, (const char *)p, np);
}

static void t_mc_udp(void)
{
	struct fake *f = fake_new(&bb_dec_memcache, BB_TR_UDP);
	feed(f, 0, "\x00\x05\x00\x00\x00\x01\x00\x00get k\r\n", 15);
	feed(f, 1, "\x00\x05\x00\x00\x00\x02\x00\x00VALUE k 0 3000\r\n", 24);
	feed(f, 1, "\x00\x05\x00\x01\x00\x02\x00\x00...END\r\n", 16);
	CHECK_INT(f->n, 2);
	CHECK_STR(f->r[0].id, "c7.u5");
	CHECK_STR(f->r[0].req, "get");
	CHECK_STR(f->r[1].id, "c7.u5");
	CHECK_STR(f->r[1].req, "get");
	CHECK_INT(f->st.unmatched_ret, 0);
	feed(f, 0, "\x00\x06", 2);
	CHECK_INT(f->st.malformed, 1);
	CHECK(bb_dec_memcache.probe((const uint8_t *)"get a b c\r\n", 11, BB_TR_TCP, 0));
	CHECK(!bb_dec_memcache.probe((const uint8_t *)"GET / HTTP/1.1\r\n", 16, BB_TR_TCP, 0));
	fake_free(f);
}

static void t_mc_gap(void)
{
	struct fake *f = fake_new(&bb_dec_memcache, BB_TR_TCP);
	feed(f, 0, "set k 0 0 100\r\n0123456789", 25);
	bb_dec_memcache.gap(f->state, &f->ctx, 0, 50);
	f->pos[0] += 50;
	feed(f, 0, "0123456789012345678901234567890123456789\r\nget k\r\n", 49);
	CHECK_INT(count_op(f, BB_CALL), 2);
	CHECK_INT(f->n > 0 ? f->r[0].len : 0, 117);
	bb_dec_memcache.gap(f->state, &f->ctx, 0, 0);
	f->len[0] = 0;
	feed(f, 0, "garbage\r\ndelete k\r\n", 19);
	CHECK_INT(count_op(f, BB_CALL), 3);
	CHECK_STR(f->r[f->n - 1].req, "delete");
	fake_free(f);
}

/* Picked up mid-stream (a pool opened before the capture), where every reply
 * is a bare status line ("END\r\n": cache misses; "VERSION ..."): the hunt
 * for a message start reads the line without its CR, so they are replies. */
static void t_mc_midstream_status(void)
{
	struct fake *f = fake_new(&bb_dec_memcache, BB_TR_TCP);
	bb_dec_memcache.gap(f->state, &f->ctx, 0, 0);
	bb_dec_memcache.gap(f->state, &f->ctx, 1, 0);
	for (int i = 0; i < 3; i++) {
		feed(f, 0, "get user:17\r\n", 13);
		feed(f, 1, "END\r\n", 5);
	}
	feed(f, 0, "version\r\n", 9);
	feed(f, 1, "VERSION 1.6.18\r\n", 16);
	CHECK_INT(count_op(f, BB_CALL), 4);
	CHECK_INT(count_op(f, BB_RET), 4);
	CHECK_INT(f->st.unmatched_ret, 0);
	fake_free(f);
}

/* ---- thrift -------------------------------------------------------------------- */

static size_t put32(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)(v >> 24);
	b[1] = (uint8_t)(v >> 16);
	b[2] = (uint8_t)(v >> 8);
	b[3] = (uint8_t)v;
	return 4;
}

/* A strict binary message with a struct holding a string, a list and a map. */
static size_t th_bin(uint8_t *b, int framed, unsigned mtype, const char *name, uint32_t seq)
{
	size_t n = framed ? 4 : 0, nl = strlen(name);
	n += put32(b + n, 0x80010000u | mtype);
	n += put32(b + n, (uint32_t)nl);
	memcpy(b + n, name, nl);
	n += nl;
	n += put32(b + n, seq);
	static const uint8_t body[] = {0x0b, 0x00, 0x01, 0, 0, 0, 3, 'b', 'o', 'b',
		0x0f, 0x00, 0x02, 0x08, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 2,
		0x0d, 0x00, 0x03, 0x0b, 0x02, 0, 0, 0, 1, 0, 0, 0, 1, 'k', 1,
		0x0c, 0x00, 0x04, 0x0a, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 9, 0x00,
		0x00};
	memcpy(b + n, body, sizeof body);
	n += sizeof body;
	if (framed)
		put32(b, (uint32_t)(n - 4));
	return n;
}

static void t_thrift_binary_split(void)
{
	static uint8_t q[1024], p[1024];
	for (int framed = 0; framed < 2; framed++) {
		size_t nq = 0, np = 0;
		nq += th_bin(q + nq, framed, 1, "getUser", 10);
		nq += th_bin(q + nq, framed, 4, "log", 11);        /* ONEWAY */
		nq += th_bin(q + nq, framed, 1, "putUser", 12);
		np += th_bin(p + np, framed, 3, "putUser", 12);   /* out of order, EXCEPTION */
		np += th_bin(p + np, framed, 2, "getUser", 10);
		struct fake *f = run(&bb_dec_thrift, q, nq, p, np, 0);
		CHECK_INT(count_op(f, BB_CALL), 3);
		CHECK_INT(count_op(f, BB_RET), 2);
		CHECK_INT(f->st.unmatched_ret, 0);
		CHECK_INT(f->st.malformed, 0);
		if (f->n == 5) {
			CHECK_STR(f->r[0].id, "c7.10");
			CHECK_STR(f->r[0].req, "getUser");
			CHECK_STR(f->r[1].req, "log");
			CHECK_STR(f->r[3].id, "c7.12");
			uint8_t one[256];
			CHECK_INT(f->r[0].len, th_bin(one, framed, 1, "getUser", 10));
		}
		fake_free(f);
		check_every_split(&bb_dec_thrift, (const char *)q, nq, (const char *)p, np);
	}
}

static void t_thrift_compact_split(void)
{
	/* 0x82, CALL|v1, seqid 5, "ping", struct {1: i32 1, 2: string "abc",
	 * 3: list<i32>[2, -2] (zigzag), 4: bool true, long-form id 300: i64,
	 * 301: empty map}, STOP */
	static const uint8_t call[] = {0x82, 0x21, 0x05, 0x04, 'p', 'i', 'n', 'g',
		0x15, 0x02, 0x18, 0x03, 'a', 'b', 'c', 0x19, 0x25, 0x04, 0x03, 0x11,
		0x06, 0xd8, 0x04, 0x02, 0x1b, 0x00, 0x00};
	static const uint8_t reply[] = {0x82, 0x41, 0x05, 0x04, 'p', 'i', 'n', 'g', 0x00};
	uint8_t q[64], p[64];
	size_t nq = 0, np = 0;
	nq += put32(q, sizeof call);
	memcpy(q + nq, call, sizeof call);
	nq += sizeof call;
	memcpy(q + nq, call, sizeof call); /* then the same unframed */
	q[nq + 2] = 0x06;
	nq += sizeof call;
	memcpy(p, reply, sizeof reply);
	np += sizeof reply;
	memcpy(p + np, reply, sizeof reply);
	p[np + 2] = 0x06;
	np += sizeof reply;
	struct fake *f = run(&bb_dec_thrift, q, nq, p, np, 0);
	CHECK_INT(count_op(f, BB_CALL), 2);
	CHECK_INT(count_op(f, BB_RET), 2);
	CHECK_INT(f->st.malformed, 0);
	if (f->n == 4) {
		CHECK_STR(f->r[0].id, "c7.5");
		CHECK_STR(f->r[1].id, "c7.6");
		CHECK_STR(f->r[3].req, "ping");
	}
	fake_free(f);
	check_every_split(&bb_dec_thrift, (const char *)q, nq, (const char *)p, np);
	CHECK(bb_dec_thrift.probe(q, nq, BB_TR_TCP, 0));
	CHECK(bb_dec_thrift.probe(call, sizeof call, BB_TR_TCP, 0));
	CHECK(!bb_dec_thrift.probe((const uint8_t *)"GET / HTTP/1.1\r\n", 16, BB_TR_TCP, 0));
}

static void t_thrift_gap(void)
{
	static uint8_t q[2048];
	size_t nq = th_bin(q, 1, 1, "a", 1);
	struct fake *f = fake_new(&bb_dec_thrift, BB_TR_TCP);
	feed(f, 0, q, 20);
	bb_dec_thrift.gap(f->state, &f->ctx, 0, 10);
	f->pos[0] += 10;
	feed(f, 0, q + 30, nq - 30);
	CHECK_INT(count_op(f, BB_CALL), 1);
	/* garbage, then a message again */
	feed(f, 0, "\x00\x00\x00\x05zzzzz", 9);
	size_t n2 = th_bin(q, 1, 1, "b", 2);
	feed(f, 0, q, n2);
	CHECK_INT(count_op(f, BB_CALL), 2);
	CHECK_STR(f->r[f->n - 1].req, "b");
	CHECK(f->st.malformed >= 1);
	fake_free(f);
}

static const struct unit_test tests[] = {
	{"redis_split", t_redis_split},
	{"redis_pubsub", t_redis_pubsub},
	{"redis_pubsub_words", t_redis_pubsub_words},
	{"redis_client_reply", t_redis_client_reply},
	{"redis_gap", t_redis_gap},
	{"redis_bulk", t_redis_bulk},
	{"redis_deep", t_redis_deep},
	{"mc_text_split", t_mc_text_split},
	{"mc_deep_pipeline", t_mc_deep_pipeline},
	{"mc_binary_split", t_mc_binary_split},
	{"mc_udp", t_mc_udp},
	{"mc_gap", t_mc_gap},
	{"mc_midstream_status", t_mc_midstream_status},
	{"thrift_binary_split", t_thrift_binary_split},
	{"thrift_compact_split", t_thrift_compact_split},
	{"thrift_gap", t_thrift_gap},
};

UNIT_MAIN(tests)

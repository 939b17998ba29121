/* test_dec_tok.c - unit tests for content tokens (tok=) and propagated context (ctx=) */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "decoders/dec_tok_int.h"
#include "decoders/decoders.h"
#include "unit.h"

#define FAKE_SERVER "10.0.0.2:80"
#include "dec_fake.h"

static struct bb_tok_key key;

static struct bb_dec_ctx tok_ctx(void)
{
	struct bb_dec_ctx c;
	memset(&c, 0, sizeof c);
	bb_tok_key_derive(&key, "test", 4);
	c.tok_key = &key;
	return c;
}

/* The hex hash of a normalised token under the test key. */
static const char *h(const char *tok)
{
	static char buf[8][17];
	static int k;
	char *o = buf[k++ % 8];
	struct bb_dec_toks t;
	memset(&t, 0, sizeof t);
	t.ctx = bb_tok_siphash(&key, tok, strlen(tok));
	t.ctx_prio = 1;
	bb_tok_format_ctx(&t, o, 17);
	return o;
}

/* "h1,h2,..." of the tokens given, in order. */
static const char *list(const char *const *toks)
{
	static char buf[BB_TOK_MAX * 17 + 1];
	size_t o = 0;
	buf[0] = '\0';
	for (size_t i = 0; toks[i]; i++)
		o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%s", i ? "," : "", h(toks[i]));
	return buf;
}

static const char *fmt(const struct bb_dec_toks *t)
{
	static char buf[BB_TOK_MAX * 17];
	bb_tok_format(t, buf, sizeof buf);
	return buf;
}

/* The tokens of the field s, formatted. */
static const char *field(const char *s, unsigned flags)
{
	struct bb_dec_ctx c = tok_ctx();
	struct bb_dec_toks t;
	dec_tok_reset(&t);
	dec_tok_field(&t, &c, (const uint8_t *)s, strlen(s), flags);
	return fmt(&t);
}

static int has(const char *toklist, const char *tok)
{
	return strstr(toklist, h(tok)) != NULL;
}

/* The reference vectors of SipHash-2-4 (Aumasson and Bernstein; the paper's
 * Appendix A for 15 bytes, the reference code's vectors.h for the rest): key
 * 00 01 .. 0f, message 00 01 .. (len-1). */
static void t_siphash_vectors(void)
{
	static const struct {
		size_t len;
		uint64_t want;
	} v[] = {
		{0, UINT64_C(0x726fdb47dd0e0e31)},  {1, UINT64_C(0x74f839c593dc67fd)},
		{2, UINT64_C(0x0d6c8009d9a94f5a)},  {3, UINT64_C(0x85676696d7fb7e2d)},
		{7, UINT64_C(0xab0200f58b01d137)},  {8, UINT64_C(0x93f5f5799a932462)},
		{9, UINT64_C(0x9e0082df0ba9e4b0)},  {15, UINT64_C(0xa129ca6149be45e5)},
	};
	struct bb_tok_key k = {UINT64_C(0x0706050403020100), UINT64_C(0x0f0e0d0c0b0a0908)};
	uint8_t msg[16];
	for (int i = 0; i < 16; i++)
		msg[i] = (uint8_t)i;
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		uint64_t got = bb_tok_siphash(&k, msg, v[i].len);
		if (got != v[i].want)
			UNIT_FAIL_("siphash of %zu bytes: %016" PRIx64 " != %016" PRIx64, v[i].len, got,
			           v[i].want);
	}
}

static void t_key_derive(void)
{
	struct bb_tok_key a, b, c;
	bb_tok_key_derive(&a, "salt", 4);
	bb_tok_key_derive(&b, "salt", 4);
	bb_tok_key_derive(&c, "salu", 4);
	CHECK(a.k0 == b.k0 && a.k1 == b.k1);
	CHECK(a.k0 != c.k0 && a.k1 != c.k1);
	CHECK(a.k0 != a.k1);
	/* the documented derivation */
	struct bb_tok_key z = {0, 0}, one = {1, 0};
	CHECK(a.k0 == bb_tok_siphash(&z, "salt", 4));
	CHECK(a.k1 == bb_tok_siphash(&one, "salt", 4));
	/* another salt, another hash of the same token */
	CHECK(bb_tok_siphash(&a, "42", 2) != bb_tok_siphash(&c, "42", 2));
}

/* A key gives itself and its parts; digits come first; case is folded. */
static void t_field_parts(void)
{
	static const char *const want[] = {"42", "session:42", "session", NULL};
	CHECK_STR(field(" Session:42\r\n", DEC_TOK_WHOLE), list(want));
	/* one run: no separate whole token */
	static const char *const one[] = {"db-7.example.com", NULL};
	CHECK_STR(field("db-7.Example.COM", DEC_TOK_WHOLE), list(one));
	/* without WHOLE only the runs */
	static const char *const runs[] = {"1234", "user", NULL};
	CHECK_STR(field("user:1234", 0), list(runs));
}

/* Short runs and keywords are not tokens. */
static void t_filters(void)
{
	static const char *const want[] = {"the", NULL};
	CHECK_STR(field("a 7 ab x1 SELECT from Where null the -5 .x. __ 3.", 0), list(want));
}

/* At most BB_TOK_MAX distinct tokens; those with digits push words out. */
static void t_bound(void)
{
	struct bb_dec_ctx c = tok_ctx();
	struct bb_dec_toks t;
	static const char *const want[] = {"11",    "22",      "alpha", "beta",
	                                   "gamma", "delta",   "epsilon", "zeta", NULL};
	CHECK_STR(field("alpha beta gamma delta alpha epsilon zeta theta iota kappa 11 22 11", 0),
	          list(want));
	dec_tok_reset(&t);
	char many[400];
	size_t o = 0;
	for (int i = 10; i < 60; i++)
		o += (size_t)snprintf(many + o, sizeof many - o, "%d ", i);
	dec_tok_field(&t, &c, (const uint8_t *)many, o, 0);
	static const char *const first8[] = {"10", "11", "12", "13", "14", "15", "16", "17", NULL};
	CHECK_STR(fmt(&t), list(first8));
	/* bounded work: a long field is looked at only up to DEC_TOK_SCAN bytes */
	dec_tok_reset(&t);
	static char big[3 * DEC_TOK_SCAN];
	memset(big, ' ', sizeof big);
	memcpy(big + sizeof big - 10, "late99", 6);
	dec_tok_field(&t, &c, (const uint8_t *)big, sizeof big, DEC_TOK_WHOLE);
	CHECK_INT(t.n, 0);
	CHECK(t.scan <= DEC_TOK_SCAN);
	/* tokens off: nothing */
	struct bb_dec_ctx off;
	memset(&off, 0, sizeof off);
	dec_tok_reset(&t);
	dec_tok_field(&t, &off, (const uint8_t *)"session:42", 10, DEC_TOK_WHOLE);
	CHECK_INT(t.n, 0);
}

/* A request target: path segments and query values, percent-decoded; the
 * URL's uid=42 and the redis key session:42 share a token. */
static void t_target(void)
{
	struct bb_dec_ctx c = tok_ctx();
	struct bb_dec_toks t, r;
	dec_tok_reset(&t);
	const char *u = "/Users/42/orders?uid=42&q=red+shoes%21&k=session%3a42;z=9#frag77";
	dec_tok_target(&t, &c, (const uint8_t *)u, strlen(u));
	const char *got = fmt(&t);
	CHECK(has(got, "42"));
	CHECK(has(got, "session:42"));
	CHECK(has(got, "users"));
	CHECK(has(got, "orders"));
	CHECK(has(got, "red"));
	CHECK(has(got, "shoes"));
	CHECK(has(got, "red shoes!"));
	CHECK(!has(got, "uid"));
	CHECK(!has(got, "frag77"));
	CHECK(!has(got, "9"));
	/* absolute form: scheme and host are not tokens */
	dec_tok_reset(&t);
	const char *a = "http://backend.local:8080/item/31337";
	dec_tok_target(&t, &c, (const uint8_t *)a, strlen(a));
	static const char *const want[] = {"31337", "item", NULL};
	CHECK_STR(fmt(&t), list(want));
	dec_tok_reset(&r);
	dec_tok_field(&r, &c, (const uint8_t *)"session:31337", 13, DEC_TOK_WHOLE);
	CHECK(t.h[0] == r.h[0]);
}

/* The ctx= of one header alone ("" when none). */
static const char *ctx_of(const char *name, const char *val)
{
	static char got[17];
	struct bb_dec_ctx c = tok_ctx();
	struct bb_dec_toks t;
	dec_tok_reset(&t);
	dec_tok_header(&t, &c, (const uint8_t *)name, strlen(name), (const uint8_t *)val, strlen(val), 1);
	bb_tok_format_ctx(&t, got, sizeof got);
	if (t.n)
		return "tokens"; /* a context header gives no tokens */
	return got;
}

/* Context headers: which value, normalised how, which wins. */
static void t_ctx_headers(void)
{
	struct bb_dec_ctx c = tok_ctx();
	struct bb_dec_toks t;
#define HDR(n, v) dec_tok_header(&t, &c, (const uint8_t *)(n), strlen(n), (const uint8_t *)(v), strlen(v), 1)
	char got[17];
	dec_tok_reset(&t);
	CHECK_INT(HDR("Traceparent", " 00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01"), 1);
	CHECK_STR(ctx_of("Traceparent", " 00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01"),
	          h("af7651916cd43dd8448eb211c80319c"));
	/* the 64-bit form of the same id in B3 hashes alike */
	const char *id64 = h("8448eb211c80319c");
	CHECK_STR(ctx_of("X-B3-TraceId", "00000000000000008448eb211c80319c"), id64);
	CHECK_STR(ctx_of("b3", "8448eb211c80319c-e457b5a2e4d86bd1-1"), id64);
	CHECK_STR(ctx_of("b3", "1"), ""); /* sampling state alone */
	CHECK_STR(ctx_of("uber-trace-id", "8448eb211c80319c%3Ae457b5a2e4d86bd1%3A0%3A1"), id64);
	CHECK_STR(ctx_of("Uber-Trace-Id", "abc:def:0:1"), h("abc"));
	CHECK_STR(ctx_of("traceparent", "00-00000000000000000000000000000000-b7ad6b7169203331-01"),
	          ""); /* all-zero: invalid */
	/* priority: traceparent over X-Request-ID whatever the order */
	dec_tok_reset(&t);
	HDR("X-Request-ID", "Req-77");
	bb_tok_format_ctx(&t, got, sizeof got);
	CHECK_STR(got, h("req-77"));
	HDR("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
	HDR("X-Correlation-ID", "corr-1");
	bb_tok_format_ctx(&t, got, sizeof got);
	CHECK_STR(got, h("4bf92f3577b34da6a3ce929d0e0e4736"));
	/* other headers: tokens unless standard */
	dec_tok_reset(&t);
	CHECK_INT(HDR("X-User", "user-4242"), 0);
	HDR("User-Agent", "curl/8.0.1 build 7777");
	HDR("Accept-Language", "en-US 9999");
	HDR("Content-Length", "123");
	HDR("Cookie", "sid=55555");
	HDR("X-Forwarded-For", "10.1.2.3");
	static const char *const want[] = {"user-4242", NULL};
	CHECK_STR(fmt(&t), list(want));
	dec_tok_reset(&t);
	HDR("X-User", "user-4242") ; /* want_tokens 0: context only */
	dec_tok_reset(&t);
	CHECK_INT(dec_tok_header(&t, &c, (const uint8_t *)"X-User", 6, (const uint8_t *)"9876", 4, 0), 0);
	CHECK_INT(t.n, 0);
#undef HDR
}

static void t_binary_values(void)
{
	struct bb_dec_ctx c = tok_ctx();
	struct bb_dec_toks t;
	dec_tok_reset(&t);
	dec_tok_int(&t, &c, -4619, 0);
	dec_tok_int(&t, &c, 7, 0);
	dec_tok_int(&t, &c, -1, 1);
	static const uint8_t u[16] = {0x55, 0x0e, 0x84, 0x00, 0xe2, 0x9b, 0x41, 0xd4,
	                              0xa7, 0x16, 0x44, 0x66, 0x55, 0x44, 0x00, 0x00};
	dec_tok_uuid(&t, &c, u);
	static const char *const want[] = {"4619", "18446744073709551615",
	                                   "550e8400-e29b-41d4-a716-446655440000", NULL};
	CHECK_STR(fmt(&t), list(want));
	dec_tok_name(&t, &c, (const uint8_t *)"API.Example.com.", 16);
	CHECK(has(fmt(&t), "api.example.com"));
}

/* ---- decoders --------------------------------------------------------------- */

static struct fake *tok_fake(const struct bb_decoder *dec, unsigned tr)
{
	struct fake *f = fake_new(dec, tr);
	bb_tok_key_derive(&key, "test", 4);
	f->ctx.tok_key = &key;
	return f;
}

static void t_http(void)
{
	struct fake *f = tok_fake(&bb_dec_http, BB_TR_TCP);
	const char *req = "GET /profile?uid=42 HTTP/1.1\r\nHost: front\r\nUser-Agent: curl/8\r\n"
	                  "X-Request-ID: abc-123\r\nX-Tenant: acme7\r\n\r\n";
	const char *resp = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Request-ID: abc-123\r\n\r\nok";
	feed(f, BB_DIR_C2S, req, strlen(req));
	feed(f, BB_DIR_S2C, resp, strlen(resp));
	CHECK_INT(f->n, 2);
	static const char *const want[] = {"acme7", "42", "profile", NULL}; /* header fields, then the target */
	CHECK_STR(f->r[0].tok, list(want));
	CHECK_STR(f->r[0].ctx, h("abc-123"));
	CHECK_STR(f->r[1].tok, "");
	CHECK_STR(f->r[1].ctx, h("abc-123")); /* the reply echoes it */
	fake_free(f);
	/* tokens off: no tok=, no ctx= */
	f = fake_new(&bb_dec_http, BB_TR_TCP);
	feed(f, BB_DIR_C2S, req, strlen(req));
	CHECK_INT(f->n, 1);
	CHECK_STR(f->r[0].tok, "");
	CHECK_STR(f->r[0].ctx, "");
	fake_free(f);
}

static void t_redis(void)
{
	struct fake *f = tok_fake(&bb_dec_redis, BB_TR_TCP);
	const char *cmd = "*3\r\n$3\r\nSET\r\n$10\r\nsession:42\r\n$5\r\nalice\r\n";
	/* byte by byte: arguments stream in pieces */
	for (size_t i = 0; i < strlen(cmd); i++)
		feed(f, BB_DIR_C2S, cmd + i, 1);
	const char *inl = "GET user:77\r\n";
	feed(f, BB_DIR_C2S, inl, strlen(inl));
	CHECK_INT(f->n, 2);
	static const char *const want[] = {"42", "session:42", "session", "alice", NULL};
	CHECK_STR(f->r[0].tok, list(want));
	static const char *const want2[] = {"77", "user:77", "user", NULL};
	CHECK_STR(f->r[1].tok, list(want2));
	fake_free(f);
}

static void t_memcache(void)
{
	struct fake *f = tok_fake(&bb_dec_memcache, BB_TR_TCP);
	const char *g = "get session:42 item-9000\r\n";
	feed(f, BB_DIR_C2S, g, strlen(g));
	const char *s = "set cart:42 0 0 5\r\nhello\r\n";
	feed(f, BB_DIR_C2S, s, strlen(s));
	CHECK_INT(f->n, 2);
	CHECK(has(f->r[0].tok, "session:42"));
	CHECK(has(f->r[0].tok, "item-9000"));
	CHECK(has(f->r[0].tok, "42"));
	CHECK(has(f->r[1].tok, "cart:42"));
	CHECK(!has(f->r[1].tok, "hello")); /* values are not keys */
	fake_free(f);
	/* binary GET with key "user:31" */
	f = tok_fake(&bb_dec_memcache, BB_TR_TCP);
	uint8_t b[24 + 7] = {0x80, 0x00, 0x00, 0x07, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 9};
	memcpy(b + 24, "user:31", 7);
	feed(f, BB_DIR_C2S, b, sizeof b);
	CHECK_INT(f->n, 1);
	static const char *const want[] = {"31", "user:31", "user", NULL};
	CHECK_STR(f->n ? f->r[0].tok : "", list(want));
	fake_free(f);
	/* UDP, text */
	f = tok_fake(&bb_dec_memcache, BB_TR_UDP);
	const char *u = "\x00\x01\x00\x00\x00\x01\x00\x00get sku-555\r\n";
	feed(f, BB_DIR_C2S, u, 8 + 13);
	CHECK_INT(f->n, 1);
	CHECK(f->n && has(f->r[0].tok, "sku-555"));
	fake_free(f);
}

/* v as k big-endian bytes at o. */
static void be(uint8_t *o, uint64_t v, int k)
{
	for (int i = k - 1; i >= 0; i--, v >>= 8)
		o[i] = (uint8_t)v;
}

/* PostgreSQL messages into b: type, be32 length, body. */
static size_t pg(uint8_t *b, int type, const void *body, size_t n)
{
	b[0] = (uint8_t)type;
	be(b + 1, n + 4, 4);
	memcpy(b + 5, body, n);
	return n + 5;
}

static void t_pgsql(void)
{
	struct fake *f = tok_fake(&bb_dec_pgsql, BB_TR_TCP);
	static const uint8_t startup[] = {0, 0, 0, 17, 0, 3, 0, 0, 'u', 's', 'e', 'r', 0, 'x', 0, 0, 0};
	feed(f, BB_DIR_C2S, startup, sizeof startup);
	uint8_t m[512];
	const char q[] = "SELECT * FROM sessions WHERE id = 'session:42' AND n > 1234 AND t = \"Col\"";
	size_t n = pg(m, 'Q', q, sizeof q);
	feed(f, BB_DIR_C2S, m, n);
	/* extended: Parse, Bind (one text, one binary int4, one NULL), Execute, Sync */
	const char p[] = "\0UPDATE t SET a = $1 WHERE b = $2 AND c = $3";
	n = pg(m, 'P', p, sizeof p);
	static const uint8_t bind[] = {0, 0,          /* portal, statement */
		0, 3, 0, 0, 0, 1, 0, 0,                   /* formats: text, binary, text */
		0, 3,                                     /* 3 parameters */
		0, 0, 0, 7, 'u', 's', 'e', 'r', ':', '8', '8',
		0, 0, 0, 4, 0, 0, 0x12, 0x34,             /* 4660 */
		0xff, 0xff, 0xff, 0xff,                   /* NULL */
		0, 0};                                    /* result formats */
	n += pg(m + n, 'B', bind, sizeof bind);
	static const uint8_t exec[] = {0, 0, 0, 0, 0};
	n += pg(m + n, 'E', exec, sizeof exec);
	n += pg(m + n, 'S', "", 0);
	feed(f, BB_DIR_C2S, m, n);
	CHECK_INT(f->n, 3);
	static const char *const want[] = {"42", "session:42", "1234", "session", NULL};
	CHECK_STR(f->r[1].tok, list(want));
	static const char *const want2[] = {"88", "user:88", "4660", "user", NULL};
	CHECK_STR(f->r[2].tok, list(want2));
	fake_free(f);
}

static size_t my(uint8_t *b, const void *payload, size_t n)
{
	b[0] = (uint8_t)n;
	b[1] = (uint8_t)(n >> 8);
	b[2] = (uint8_t)(n >> 16);
	b[3] = 0;
	memcpy(b + 4, payload, n);
	return n + 4;
}

static void t_mysql(void)
{
	struct fake *f = tok_fake(&bb_dec_mysql, BB_TR_TCP);
	uint8_t m[256];
	const char q[] = "\x03SELECT name FROM users WHERE id = 4242 AND tag = \"blue-7\"";
	feed(f, BB_DIR_C2S, m, my(m, q, sizeof q - 1));
	/* COM_STMT_EXECUTE of statement 1: a LONGLONG 42 and a VAR_STRING
	 * "session:42", types sent; then again with the types omitted */
	static const uint8_t ex[] = {0x17, 1, 0, 0, 0, 0, 1, 0, 0, 0,
		0x00, 1, 0x08, 0x00, 0xfd, 0x00,
		42, 0, 0, 0, 0, 0, 0, 0, 10, 's', 'e', 's', 's', 'i', 'o', 'n', ':', '4', '2'};
	feed(f, BB_DIR_C2S, m, my(m, ex, sizeof ex));
	static const uint8_t ex2[] = {0x17, 1, 0, 0, 0, 0, 1, 0, 0, 0,
		0x00, 0, 99, 0, 0, 0, 0, 0, 0, 0, 4, 'b', 'o', 'b', '9'};
	feed(f, BB_DIR_C2S, m, my(m, ex2, sizeof ex2));
	CHECK_INT(f->n, 3);
	static const char *const want[] = {"4242", "blue-7", NULL};
	CHECK_STR(f->r[0].tok, list(want));
	static const char *const want2[] = {"42", "session:42", "session", NULL};
	CHECK_STR(f->r[1].tok, list(want2));
	static const char *const want3[] = {"99", "bob9", NULL};
	CHECK_STR(f->r[2].tok, list(want3));
	fake_free(f);
}

static void t_dns(void)
{
	struct fake *f = tok_fake(&bb_dec_dns, BB_TR_UDP);
	static const uint8_t q[] = {0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0,
		5, 'A', 'p', 'i', '4', '2', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0,
		0, 1, 0, 1};
	feed(f, BB_DIR_C2S, q, sizeof q);
	CHECK_INT(f->n, 1);
	static const char *const want[] = {"api42.example.com", NULL};
	CHECK_STR(f->n ? f->r[0].tok : "", list(want));
	fake_free(f);
}

/* An HTTP/2 frame into b; returns its size. */
static size_t h2frame(uint8_t *b, int type, int flags, uint32_t sid, const void *p, size_t n)
{
	be(b, n, 3);
	b[3] = (uint8_t)type;
	b[4] = (uint8_t)flags;
	be(b + 5, sid, 4);
	memcpy(b + 9, p, n);
	return n + 9;
}

/* HPACK literals (new and indexed names, with and without indexing) and
 * references to dynamic entries carry their tokens and context. */
static void t_http2(void)
{
	struct fake *f = tok_fake(&bb_dec_http2, BB_TR_TCP);
	uint8_t m[512];
	size_t n = 0;
	memcpy(m, "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 24);
	n = 24;
	n += h2frame(m + n, 4, 0, 0, "", 0); /* SETTINGS */
	static const uint8_t b1[] = {0x82, 0x44, 14, '/', 'c', 'a', 'r', 't', '?', 'u', 'i', 'd', '=',
		'4', '2', '4', '2', 0x40, 6, 'x', '-', 'u', 's', 'e', 'r', 7, 'u', 's', 'e', 'r', '-', '7',
		'7', 0x00, 11, 't', 'r', 'a', 'c', 'e', 'p', 'a', 'r', 'e', 'n', 't', 55, '0', '0', '-',
		'4', 'b', 'f', '9', '2', 'f', '3', '5', '7', '7', 'b', '3', '4', 'd', 'a', '6', 'a', '3',
		'c', 'e', '9', '2', '9', 'd', '0', 'e', '0', 'e', '4', '7', '3', '6', '-', '0', '0', 'f',
		'0', '6', '7', 'a', 'a', '0', 'b', 'a', '9', '0', '2', 'b', '7', '-', '0', '1'};
	n += h2frame(m + n, 1, 0x5, 1, b1, sizeof b1);
	/* entry 62 is x-user: user-77, 63 is :path /cart?uid=4242 */
	static const uint8_t b2[] = {0x82, 0xbe, 0xbf, 0x0f, 0x2f, 7, 'u', 's', 'e', 'r', '-', '8', '8'};
	n += h2frame(m + n, 1, 0x5, 3, b2, sizeof b2);
	feed(f, BB_DIR_C2S, m, n);
	CHECK_INT(f->n, 2);
	static const char *const want[] = {"4242", "user-77", "cart", NULL};
	CHECK_STR(f->r[0].tok, list(want));
	CHECK_STR(f->r[0].ctx, h("4bf92f3577b34da6a3ce929d0e0e4736"));
	static const char *const want2[] = {"user-77", "4242", "user-88", "cart", NULL};
	CHECK_STR(f->n > 1 ? f->r[1].tok : "", list(want2));
	CHECK_STR(f->n > 1 ? f->r[1].ctx : "x", "");
	CHECK_STR(f->n > 1 ? f->r[1].req : "", "GET /cart?uid=4242");
	fake_free(f);
}

static const struct unit_test tests[] = {
	{"siphash_vectors", t_siphash_vectors},
	{"key_derive", t_key_derive},
	{"field_parts", t_field_parts},
	{"filters", t_filters},
	{"bound", t_bound},
	{"target", t_target},
	{"ctx_headers", t_ctx_headers},
	{"binary_values", t_binary_values},
	{"http", t_http},
	{"http2", t_http2},
	{"redis", t_redis},
	{"memcache", t_memcache},
	{"pgsql", t_pgsql},
	{"mysql", t_mysql},
	{"dns", t_dns},
};

UNIT_MAIN(tests)

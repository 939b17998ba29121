/* test_dec_http2.c - unit tests of the HTTP/2 and gRPC decoder (dec_http2.c) */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "decoders/decoders.h"
#include "unit.h"

#define FAKE_SERVER "10.0.0.2:80"
#include "dec_fake.h"

#include "test_dec_http2_data.h"

static const struct bb_decoder *dec = &bb_dec_http2;

/* A gap of `lost` bytes (0: unknown) after what was consumed. */
static void gap(struct fake *f, int dir, uint64_t lost)
{
	uint64_t gone = f->len[dir] + lost;
	dec->gap(f->state, &f->ctx, dir, lost ? gone : 0);
	f->pos[dir] += gone;
	f->len[dir] = 0;
}

static void end(struct fake *f)
{
	dec->end(f->state, &f->ctx);
}

/* The record of op with id, or NULL. */
static const struct rec *find(const struct fake *f, enum bb_op op, const char *id)
{
	for (int i = 0; i < f->n; i++)
		if (f->r[i].op == op && strcmp(f->r[i].id, id) == 0)
			return &f->r[i];
	return NULL;
}

/* Records equal in everything a trace line shows. */
static int same(const struct fake *a, const struct fake *b)
{
	if (a->n != b->n)
		return 0;
	for (int i = 0; i < a->n; i++) {
		const struct rec *x = &a->r[i], *y = &b->r[i];
		if (x->op != y->op || x->ts != y->ts || x->end != y->end || x->len != y->len ||
		    strcmp(x->id, y->id) || strcmp(x->req, y->req))
			return 0;
	}
	return 1;
}

/* ---- building frames ---------------------------------------------------------- */

#define PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

struct out {
	uint8_t b[8192];
	size_t n;
};

static void put(struct out *o, const void *p, size_t n)
{
	memcpy(o->b + o->n, p, n);
	o->n += n;
}

static void frame(struct out *o, int type, int flags, uint32_t sid, const void *p, size_t n)
{
	uint8_t h[9] = {(uint8_t)(n >> 16), (uint8_t)(n >> 8), (uint8_t)n, (uint8_t)type,
		(uint8_t)flags, (uint8_t)(sid >> 24), (uint8_t)(sid >> 16), (uint8_t)(sid >> 8),
		(uint8_t)sid};
	put(o, h, 9);
	put(o, p, n);
}

enum { DATA = 0, HEADERS = 1, PRIORITY = 2, RST = 3, SETTINGS = 4, PUSH = 5, PING = 6,
       GOAWAY = 7, WINUP = 8, CONT = 9 };
enum { ES = 1, EH = 4, PAD = 8, PRIO = 0x20 };

/* Feeds a whole stream in two pieces cut at k. */
static void feed_cut(struct fake *f, int dir, const uint8_t *p, size_t n, size_t k)
{
	feed(f, dir, p, k);
	feed(f, dir, p + k, n - k);
}

/* ---- real captures cut at every byte ------------------------------------------ */

static struct fake *run(const uint8_t *c, size_t cn, size_t ck, const uint8_t *s, size_t sn,
                        size_t sk)
{
	struct fake *f = fake_new(dec, BB_TR_TCP);
	feed_cut(f, 0, c, cn, ck);
	feed_cut(f, 1, s, sn, sk);
	end(f);
	return f;
}

static void t_sbi_split(void)
{
	struct fake *whole = run(sbi_c2s, sizeof sbi_c2s, 0, sbi_s2c, sizeof sbi_s2c, 0);
	CHECK_INT(whole->n, 2);
	CHECK_INT(whole->r[0].op, BB_CALL);
	CHECK_STR(whole->r[0].id, "c7.s3");
	CHECK_STR(whole->r[0].req, "POST /namf-comm/v1/subscriptions");
	CHECK_INT(whole->r[1].op, BB_RET);
	CHECK_STR(whole->r[1].id, "c7.s3");
	CHECK_INT(whole->st.malformed, 0);
	int bad = 0;
	for (size_t k = 1; k < sizeof sbi_c2s; k++) {
		struct fake *f = run(sbi_c2s, sizeof sbi_c2s, k, sbi_s2c, sizeof sbi_s2c, 0);
		bad += !same(f, whole);
		fake_free(f);
	}
	for (size_t k = 1; k < sizeof sbi_s2c; k++) {
		struct fake *f = run(sbi_c2s, sizeof sbi_c2s, 0, sbi_s2c, sizeof sbi_s2c, k);
		bad += !same(f, whole);
		fake_free(f);
	}
	CHECK_INT(bad, 0);
	fake_free(whole);
}

static void t_grpc_split(void)
{
	struct fake *w = run(grpc_c2s, sizeof grpc_c2s, 0, grpc_s2c, sizeof grpc_s2c, 0);
	/* tshark: requests on streams 1, 3, 5, all POST /inventory.Stock/Check;
	 * responses (:status) on 13, 11, 5 in that order. */
	CHECK_INT(count_op(w, BB_CALL), 3);
	CHECK_INT(count_op(w, BB_RET), 3);
	const char *calls[] = {"c7.s1", "c7.s3", "c7.s5"}, *rets[] = {"c7.s13", "c7.s11", "c7.s5"};
	for (int i = 0; i < 3 && w->n == 6; i++) {
		CHECK_STR(w->r[i].id, calls[i]);
		CHECK_STR(w->r[i].req, "POST /inventory.Stock/Check");
		CHECK_STR(w->r[3 + i].id, rets[i]);
	}
	CHECK_STR(w->r[5].req, "POST /inventory.Stock/Check");
	CHECK_INT(w->st.unmatched_ret, 2); /* 13 and 11 asked after the cut */
	CHECK_INT(w->st.malformed, 0);
	int bad = 0;
	for (size_t k = 1; k < sizeof grpc_c2s; k++) {
		struct fake *f = run(grpc_c2s, sizeof grpc_c2s, k, grpc_s2c, sizeof grpc_s2c, 0);
		bad += !same(f, w);
		fake_free(f);
	}
	for (size_t k = 1; k < sizeof grpc_s2c; k++) {
		struct fake *f = run(grpc_c2s, sizeof grpc_c2s, 0, grpc_s2c, sizeof grpc_s2c, k);
		bad += !same(f, w);
		fake_free(f);
	}
	CHECK_INT(bad, 0);
	fake_free(w);
}

/* ---- HPACK: RFC 7541 Appendix C.4 (requests with Huffman coding) ------------- */

static void t_rfc7541_c4(void)
{
	static const uint8_t c41[] = {0x82, 0x86, 0x84, 0x41, 0x8c, 0xf1, 0xe3, 0xc2, 0xe5, 0xf2,
		0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff};
	static const uint8_t c42[] = {0x82, 0x86, 0x84, 0xbe, 0x58, 0x86, 0xa8, 0xeb, 0x10, 0x64,
		0x9c, 0xbf};
	static const uint8_t c43[] = {0x82, 0x87, 0x85, 0xbf, 0x40, 0x88, 0x25, 0xa8, 0x49, 0xe9,
		0x5b, 0xa9, 0x7d, 0x7f, 0x89, 0x25, 0xa8, 0x49, 0xe9, 0x5b, 0xb8, 0xe8, 0xb4, 0xbf};
	/* Its own dynamic table on the server side: ":path /x" indexed, then reused. */
	static const uint8_t st200[] = {0x88};
	struct out c = {0}, s = {0};
	put(&c, PREFACE, 24);
	frame(&c, SETTINGS, 0, 0, "", 0);
	frame(&c, HEADERS, EH | ES, 1, c41, sizeof c41);
	frame(&c, HEADERS, EH | ES, 3, c42, sizeof c42);
	frame(&c, HEADERS, EH | ES, 5, c43, sizeof c43);
	frame(&s, SETTINGS, 0, 0, "", 0);
	frame(&s, HEADERS, EH | ES, 5, st200, 1); /* out of order */
	frame(&s, HEADERS, EH, 1, st200, 1);
	frame(&s, DATA, ES, 1, "hello", 5);
	frame(&s, HEADERS, EH, 3, st200, 1);
	frame(&s, DATA, 0, 3, "a", 1);
	frame(&s, DATA, ES, 3, "", 0);
	for (size_t k = 1; k < c.n; k++) {
		struct fake *f = run(c.b, c.n, k, s.b, s.n, k < s.n ? k : 1);
		CHECK_INT(f->n, 6);
		if (f->n == 6) {
			CHECK_STR(f->r[0].req, "GET /");
			CHECK_STR(f->r[1].req, "GET /");
			CHECK_STR(f->r[2].req, "GET /index.html");
			CHECK_STR(f->r[3].id, "c7.s5");
			CHECK_STR(f->r[3].req, "GET /index.html");
			CHECK_STR(f->r[4].id, "c7.s1");
			CHECK_INT(f->r[4].len, 10 + 14);
			CHECK_STR(f->r[5].id, "c7.s3");
			CHECK_INT(f->r[5].end, (int64_t)(s.n - 1) * 10 + 1);
		}
		CHECK_INT(f->st.malformed, 0);
		fake_free(f);
		if (unit_failed)
			break;
	}
}

/* ---- h2c upgrade --------------------------------------------------------------- */

static void t_upgrade(void)
{
	static const char req[] = "GET /up HTTP/1.1\r\nHost: h\r\nConnection: Upgrade, HTTP2-Settings\r\n"
	                          "Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n";
	static const char rep[] = "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\n"
	                          "Upgrade: h2c\r\n\r\n";
	static const uint8_t get_b[] = {0x82, 0x86, 0x44, 0x02, '/', 'b'}; /* GET /b, indexed */
	static const uint8_t get_b2[] = {0x82, 0x86, 0xbe};                /* GET /b again */
	struct out c = {0}, s = {0};
	put(&c, req, strlen(req));
	put(&c, PREFACE, 24);
	frame(&c, SETTINGS, 0, 0, "", 0);
	frame(&c, HEADERS, EH | ES, 3, get_b, sizeof get_b);
	frame(&c, HEADERS, EH | ES, 5, get_b2, sizeof get_b2);
	put(&s, rep, strlen(rep));
	frame(&s, SETTINGS, 0, 0, "", 0);
	frame(&s, HEADERS, EH, 1, "\x88", 1);
	frame(&s, DATA, ES, 1, "body", 4);
	frame(&s, HEADERS, EH | ES, 3, "\x89", 1);
	frame(&s, HEADERS, EH | ES, 5, "\x89", 1);
	for (size_t k = 1; k < c.n; k += 3) {
		struct fake *f = run(c.b, c.n, k, s.b, s.n, k < s.n ? k : 1);
		CHECK_INT(count_op(f, BB_CALL), 3);
		CHECK_INT(count_op(f, BB_RET), 4);
		const struct rec *call1 = find(f, BB_CALL, "c7.s1");
		CHECK(call1 && strcmp(call1->req, "GET /up") == 0);
		CHECK(find(f, BB_CALL, "c7.s5") && strcmp(find(f, BB_CALL, "c7.s5")->req, "GET /b") == 0);
		/* 101 is the interim RET of stream 1, then its HTTP/2 response */
		const struct rec *r101 = find(f, BB_RET, "c7.s1");
		CHECK(r101 && r101->len == strlen(rep));
		CHECK(r101 && r101 + 1 < f->r + f->n && r101[1].op == BB_RET &&
		      strcmp(r101[1].id, "c7.s1") == 0 && r101[1].len == 10 + 13);
		CHECK_INT(f->st.unmatched_ret, 0);
		fake_free(f);
		if (unit_failed)
			break;
	}
	/* dec_http leaves the upgrade to http2; a plain request stays HTTP/1. */
	CHECK(!bb_dec_http.probe((const uint8_t *)req, strlen(req), BB_TR_TCP, 0));
	CHECK(dec->probe((const uint8_t *)req, strlen(req), BB_TR_TCP, 0));
	CHECK(bb_dec_http.probe((const uint8_t *)"GET / HTTP/1.1\r\n\r\n", 18, BB_TR_TCP, 0));
	CHECK(!dec->probe((const uint8_t *)"GET / HTTP/1.1\r\n\r\n", 18, BB_TR_TCP, 0));
	CHECK(dec->probe((const uint8_t *)PREFACE, 24, BB_TR_TCP, 0));
	CHECK(!bb_dec_http.probe((const uint8_t *)PREFACE, 24, BB_TR_TCP, 0));
	int d = bb_dec_by_probe(NULL, BB_TR_TCP, (const uint8_t *)PREFACE, 24, 0);
	CHECK(d >= 0 && bb_dec_at((size_t)d) == dec);
}

/* ---- frames: padding, priority, CONTINUATION, 1xx, trailers, RST, push --------- */

static void t_frames(void)
{
	struct out c = {0}, s = {0};
	put(&c, PREFACE, 24);
	frame(&c, SETTINGS, 0, 0, "\x00\x01\x00\x00\x10\x00", 6);
	/* stream 1: padded, with priority: POST /grpc.S/M, content-type grpc */
	static const uint8_t h1[] = {3, 0x80, 0, 0, 0, 16, 0x83, 0x86, 0x44, 6, '/', 'g', '.', 'S', '/', 'M',
		0x5f, 16, 'a', 'p', 'p', 'l', 'i', 'c', 'a', 't', 'i', 'o', 'n', '/', 'g', 'r', 'p',
		'c', 0, 0, 0};
	frame(&c, HEADERS, EH | PAD | PRIO, 1, h1, sizeof h1);
	frame(&c, DATA, PAD | ES, 1, "\x02" "abcd\0\0", 7);
	/* stream 3: the block split over HEADERS + 2 CONTINUATION */
	static const uint8_t h3[] = {0x82, 0x86, 0x04, 5, '/', 'l', 'o', 'n', 'g'};
	frame(&c, HEADERS, ES, 3, h3, 3);
	frame(&c, CONT, 0, 3, h3 + 3, 3);
	frame(&c, CONT, EH, 3, h3 + 6, 3);
	frame(&c, PING, 0, 0, "12345678", 8);
	frame(&c, WINUP, 0, 0, "\0\0\1\0", 4);
	frame(&c, PRIORITY, 0, 3, "\0\0\0\1\5", 5);
	frame(&c, 0x42, 0, 0, "unknown", 7); /* unknown type: ignored */
	/* stream 5: cancelled by the client, no response */
	frame(&c, HEADERS, EH | ES, 5, "\x82\x84", 2);
	frame(&c, RST, 0, 5, "\0\0\0\x08", 4);
	/* stream 7: refused by the server */
	frame(&c, HEADERS, EH | ES, 7, "\x82\x84", 2);
	/* stream 9: 100-continue, then 200 */
	frame(&c, HEADERS, EH, 9, "\x83\x84", 2);
	frame(&c, DATA, ES, 9, "x", 1);

	frame(&s, SETTINGS, 0, 0, "", 0);
	frame(&s, HEADERS, EH, 9, "\x08\x03" "100", 5); /* :status 100, literal */
	frame(&s, RST, 0, 7, "\0\0\0\x07", 4);
	frame(&s, HEADERS, EH, 1, "\x88", 1);
	frame(&s, PUSH, EH, 1, "\0\0\0\x02\x82\x86\x04\x02/p", 10); /* promises stream 2 */
	frame(&s, DATA, 0, 1, "grpc-msg", 8);
	frame(&s, HEADERS, EH | ES, 1, "\x40\x0bgrpc-status\x01" "0", 15); /* trailers */
	frame(&s, HEADERS, EH, 3, "\x88", 1);
	frame(&s, DATA, ES, 3, "", 0);
	frame(&s, HEADERS, EH | ES, 2, "\x88", 1);
	frame(&s, HEADERS, EH, 9, "\x88", 1);
	frame(&s, GOAWAY, 0, 0, "\0\0\0\x09\0\0\0\0", 8);
	frame(&s, DATA, ES, 9, "ok", 2);
	for (size_t k = 1; k < c.n; k++) {
		struct fake *f = run(c.b, c.n, k, s.b, s.n, k < s.n ? k : 1);
		CHECK_INT(count_op(f, BB_CALL), 5);
		CHECK_INT(count_op(f, BB_RET), 6);
		const struct rec *r;
		CHECK((r = find(f, BB_CALL, "c7.s1")) && strcmp(r->req, "POST /g.S/M") == 0);
		CHECK((r = find(f, BB_CALL, "c7.s3")) && strcmp(r->req, "GET /long") == 0);
		CHECK(!find(f, BB_RET, "c7.s5"));
		CHECK((r = find(f, BB_RET, "c7.s7")) && r->len == 13);
		CHECK((r = find(f, BB_RET, "c7.s1")) && r->len == 10 + 17 + 24);
		CHECK((r = find(f, BB_RET, "c7.s2")) && strcmp(r->req, "GET /p") == 0);
		CHECK((r = find(f, BB_RET, "c7.s9")) && r->len == 14); /* the 100 */
		CHECK_INT(f->st.malformed, 0);
		CHECK_INT(f->st.unmatched_ret, 1); /* the pushed response */
		fake_free(f);
		if (unit_failed)
			break;
	}
}

/* ---- gaps, mid-connection start, many streams, garbage --------------------------- */

static void t_gap(void)
{
	struct fake *f = fake_new(dec, BB_TR_TCP);
	struct out c = {0}, s = {0};
	put(&c, PREFACE, 24);
	static const uint8_t h1[] = {0x82, 0x86, 0x44, 2, '/', 'a'}; /* :path /a into the table */
	frame(&c, HEADERS, EH | ES, 1, h1, sizeof h1);
	feed(f, 0, c.b, c.n);
	frame(&s, HEADERS, EH, 1, "\x88", 1);
	uint8_t big[3000] = {0};
	frame(&s, DATA, 0, 1, big, sizeof big);
	feed(f, 1, s.b, 9 + 1 + 9 + 100);
	gap(f, 1, 500); /* inside the DATA payload: skipped by its length */
	size_t rest = s.n - (9 + 1 + 9 + 100 + 500);
	feed(f, 1, s.b + s.n - rest, rest);
	s.n = 0;
	frame(&s, DATA, ES, 1, "z", 1);
	feed(f, 1, s.b, s.n);
	CHECK_INT(count_op(f, BB_RET), 1);
	CHECK_INT(f->st.resync, 1);
	/* An unknown gap in the requests: the table is forgotten, framing is found again. */
	c.n = 0;
	frame(&c, HEADERS, EH | ES, 3, "\x82\x86\xbe", 3); /* lost */
	feed(f, 0, c.b, 5);
	gap(f, 0, 0);
	c.n = 0;
	put(&c, "\x01\x02\x03", 3); /* the tail of a frame */
	frame(&c, HEADERS, EH | ES, 5, "\x82\x86\xbe", 3); /* GET, path from the lost table */
	frame(&c, HEADERS, EH | ES, 7, "\x82\x86\x44\x02/c\xbe", 7);
	feed(f, 0, c.b, c.n);
	s.n = 0;
	frame(&s, HEADERS, EH | ES, 5, "\x88", 1);
	frame(&s, HEADERS, EH | ES, 7, "\x88", 1);
	feed(f, 1, s.b, s.n);
	end(f);
	CHECK_INT(count_op(f, BB_CALL), 3);
	CHECK_INT(count_op(f, BB_RET), 3);
	const struct rec *r;
	CHECK((r = find(f, BB_RET, "c7.s5")) && strcmp(r->req, "GET ?") == 0);
	CHECK((r = find(f, BB_RET, "c7.s7")) && strcmp(r->req, "GET /c") == 0);
	CHECK_INT(f->st.resync, 2);
	CHECK_INT(f->st.malformed, 0);
	fake_free(f);
}

static void t_midstream(void)
{
	struct fake *f = fake_new(dec, BB_TR_TCP);
	struct out c = {0}, s = {0};
	frame(&c, HEADERS, EH | ES, 21, "\x83\xc0\x86", 3); /* POST, :path in a table never seen */
	CHECK(dec->probe(c.b, c.n, BB_TR_TCP, 0));
	CHECK(!dec->probe((const uint8_t *)"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11,
	                  BB_TR_TCP, 0));
	feed(f, 0, c.b, c.n);
	frame(&s, HEADERS, EH, 21, "\xc1", 1); /* :status from the unknown table */
	frame(&s, DATA, ES, 21, "x", 1);
	frame(&s, HEADERS, EH | ES, 19, "\x88", 1); /* asked before the capture */
	feed(f, 1, s.b, s.n);
	end(f);
	CHECK_INT(f->n, 3);
	CHECK_STR(f->r[0].req, "POST ?");
	CHECK_STR(f->r[1].id, "c7.s21");
	CHECK_STR(f->r[2].id, "c7.s19");
	CHECK_INT(f->st.unmatched_ret, 1);
	CHECK_INT(f->st.malformed, 0);
	fake_free(f);
}

static void t_many_streams(void)
{
	struct fake *f = fake_new(dec, BB_TR_TCP);
	struct out c = {0};
	put(&c, PREFACE, 24);
	feed(f, 0, c.b, c.n);
	for (uint32_t i = 0; i < 200; i++) {
		c.n = 0;
		frame(&c, HEADERS, EH | ES, 1 + 2 * i, "\x82\x84", 2);
		feed(f, 0, c.b, c.n);
	}
	for (uint32_t i = 0; i < 200; i++) {
		struct out s = {0};
		frame(&s, HEADERS, EH | ES, 1 + 2 * i, "\x88", 1);
		feed(f, 1, s.b, s.n);
	}
	end(f);
	CHECK_INT(count_op(f, BB_CALL), 200);
	/* The 72 oldest were dropped; the first orphan response took a slot
	 * too, pushing out one more request: 73 responses without their call. */
	CHECK_INT(f->st.evicted, 200 - 128 + 1);
	CHECK_INT(count_op(f, BB_RET), 200);
	CHECK_INT(f->st.unmatched_ret, 73);
	fake_free(f);
}

static void t_garbage(void)
{
	struct fake *f = fake_new(dec, BB_TR_TCP);
	struct out c = {0};
	put(&c, PREFACE, 24);
	frame(&c, HEADERS, EH | ES, 1, "\xbf", 1);                /* no such entry */
	frame(&c, HEADERS, EH | ES, 3, "\xff\xff\xff\xff\xff", 5); /* integer overflow */
	frame(&c, HEADERS, EH | ES, 5, "\x82\x04\x81\xff", 4);    /* Huffman EOS */
	frame(&c, HEADERS, EH | PAD, 9, "\x09\x82", 2);           /* pad too long */
	frame(&c, DATA, ES, 0, "x", 1);                           /* DATA on stream 0 */
	frame(&c, HEADERS, EH | ES, 11, "\x82\x84", 2);
	feed(f, 0, c.b, c.n);
	end(f);
	CHECK_INT(f->st.malformed, 5);
	CHECK_INT(count_op(f, BB_CALL), 4);
	CHECK_STR(f->r[3].req, "GET /");
	fake_free(f);
}

static const struct unit_test tests[] = {
	{"sbi_split", t_sbi_split},
	{"grpc_split", t_grpc_split},
	{"rfc7541_c4", t_rfc7541_c4},
	{"upgrade", t_upgrade},
	{"frames", t_frames},
	{"gap", t_gap},
	{"midstream", t_midstream},
	{"many_streams", t_many_streams},
	{"garbage", t_garbage},
};

UNIT_MAIN(tests)

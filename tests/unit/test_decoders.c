/* test_decoders.c - unit tests for the safe reader, the registry and each decoder */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "decoders/decoders.h"
#include "unit.h"

#include "dec_fake.h"

static void end(struct fake *f)
{
	if (f->dec->end)
		f->dec->end(f->state, &f->ctx);
}

/* ---- the reader ------------------------------------------------------------ */

static void t_rd_basic(void)
{
	const uint8_t b[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18};
	struct bb_rd r = bb_rd_make(b, sizeof b);
	CHECK_INT(bb_rd_u8(&r), 1);
	CHECK_INT(bb_rd_be16(&r), 0x0203);
	CHECK_INT(bb_rd_be32(&r), 0x04050607);
	CHECK_INT(bb_rd_le16(&r), 0x0908);
	CHECK_INT(bb_rd_le32(&r), 0x0d0c0b0a);
	CHECK_INT(bb_rd_left(&r), 5);
	CHECK(bb_rd_ok(&r));
	struct bb_rd r2 = bb_rd_make(b, 8);
	CHECK(bb_rd_be64(&r2) == UINT64_C(0x0102030405060708));
	CHECK_INT(bb_rd_left(&r2), 0);
}

static void t_rd_sticky(void)
{
	const uint8_t b[] = {0xaa, 0xbb, 0xcc};
	struct bb_rd r = bb_rd_make(b, sizeof b);
	CHECK_INT(bb_rd_be32(&r), 0); /* overrun */
	CHECK(!bb_rd_ok(&r));
	CHECK_INT(bb_rd_left(&r), 0);
	CHECK_INT(bb_rd_u8(&r), 0); /* sticky: even though nothing to read anyway */
	struct bb_rd r2 = bb_rd_make(b, sizeof b);
	bb_rd_skip(&r2, 4);
	CHECK(!bb_rd_ok(&r2));
	CHECK(bb_rd_bytes(&r2, 0) == NULL);
	struct bb_rd r3 = bb_rd_make(b, sizeof b);
	bb_rd_skip(&r3, (size_t)-1); /* no pointer overflow */
	CHECK(!bb_rd_ok(&r3));
	struct bb_rd r4 = bb_rd_make(b, sizeof b);
	CHECK_INT(bb_rd_be16(&r4), 0xaabb);
	CHECK_INT(bb_rd_be16(&r4), 0);
	CHECK_INT(bb_rd_u8(&r4), 0); /* the 0xcc byte is not readable after an error */
}

/* peek, skip_any and the varints: what the decoders read instead of *r.p. */
static void t_rd_peek_varint(void)
{
	const uint8_t b[] = {' ', '\t', ' ', 'x', 0xff};
	struct bb_rd r = bb_rd_make(b, sizeof b);
	CHECK_INT(bb_rd_peek(&r), ' ');
	CHECK_INT(bb_rd_skip_any(&r, " \t"), 3);
	CHECK_INT(bb_rd_peek(&r), 'x');
	CHECK_INT(bb_rd_peek_at(&r, 1), 0xff); /* a byte, not a sign */
	CHECK_INT(bb_rd_peek_at(&r, 2), -1);   /* past the end: -1, the reader not failed */
	CHECK(bb_rd_ok(&r));
	CHECK_INT(bb_rd_skip_any(&r, " "), 0);
	bb_rd_skip(&r, 2);
	CHECK_INT(bb_rd_peek(&r), -1);
	CHECK_INT(bb_rd_skip_any(&r, " "), 0);
	/* LEB128: 300 = ac 02; 2^63 in 10 bytes; 11 bytes fail; a cut one fails */
	const uint8_t v[] = {0xac, 0x02, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
	struct bb_rd rv = bb_rd_make(v, sizeof v);
	CHECK_INT(bb_rd_uvarint(&rv), 300);
	CHECK(bb_rd_uvarint(&rv) == UINT64_C(1) << 63);
	CHECK(bb_rd_ok(&rv) && bb_rd_left(&rv) == 0);
	const uint8_t big[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
	struct bb_rd rb = bb_rd_make(big, sizeof big);
	CHECK(bb_rd_uvarint(&rb) == 0 && !bb_rd_ok(&rb));
	struct bb_rd rc = bb_rd_make(v, 1);
	CHECK(bb_rd_uvarint(&rc) == 0 && !bb_rd_ok(&rc));
	/* 32 bits: 2^32 - 1 fits, 2^32 fails */
	const uint8_t m32[] = {0xff, 0xff, 0xff, 0xff, 0x0f, 0x80, 0x80, 0x80, 0x80, 0x10};
	struct bb_rd r32 = bb_rd_make(m32, sizeof m32);
	CHECK(bb_rd_uvarint32(&r32) == UINT32_MAX);
	CHECK(bb_rd_uvarint32(&r32) == 0 && !bb_rd_ok(&r32));
}

static void t_rd_sub(void)
{
	const uint8_t b[] = {0, 3, 'a', 'b', 'c', 9};
	struct bb_rd r = bb_rd_make(b, sizeof b);
	uint16_t n = bb_rd_be16(&r);
	struct bb_rd c = bb_rd_sub(&r, n);
	CHECK_INT(bb_rd_left(&c), 3);
	CHECK_INT(bb_rd_u8(&c), 'a');
	bb_rd_skip(&c, 3); /* past the child's end, not the parent's */
	CHECK(!bb_rd_ok(&c));
	CHECK(bb_rd_ok(&r));
	CHECK_INT(bb_rd_u8(&r), 9);
	struct bb_rd bad = bb_rd_sub(&r, 1);
	CHECK(!bb_rd_ok(&bad));
	CHECK(!bb_rd_ok(&r));
	struct bb_rd f = bb_rd_make("xxabcab", 7);
	CHECK_INT(bb_rd_find(&f, "ab", 2), 2);
	CHECK_INT(bb_rd_find(&f, "abx", 3), -1);
	CHECK_INT(bb_rd_find(&f, "b", 1), 3);
}

/* ---- registry --------------------------------------------------------------- */

static void t_registry(void)
{
	struct bb_dec_sel sel;
	struct bb_err err;
	memset(&sel, 0, sizeof sel);
	CHECK(bb_dec_count() >= 4);
	CHECK(bb_dec_find("dns") >= 0);
	CHECK_INT(bb_dec_find("nope"), -1);
	CHECK_INT(bb_dec_by_port(&sel, BB_TR_UDP, 40000, 53), bb_dec_find("dns"));
	CHECK_INT(bb_dec_by_port(&sel, BB_TR_UDP, 53, 40000), bb_dec_find("dns"));
	CHECK_INT(bb_dec_by_port(&sel, BB_TR_TCP, 40000, 2049), bb_dec_find("sunrpc"));
	CHECK_INT(bb_dec_by_port(&sel, BB_TR_TCP, 40000, 80), bb_dec_find("http"));
	CHECK_INT(bb_dec_by_port(&sel, BB_TR_UDP, 40000, 80), -1); /* http is TCP only */
	CHECK_INT(bb_dec_by_port(&sel, BB_TR_TCP, 40000, 40001), -1);
	CHECK_INT(bb_dec_sel_decode_as(&sel, "9999=http", &err), 0);
	CHECK_INT(bb_dec_by_port(&sel, BB_TR_TCP, 40000, 9999), bb_dec_find("http"));
	CHECK(bb_dec_is_server_port(&sel, BB_TR_TCP, 9999));
	CHECK_INT(bb_dec_sel_decode_as(&sel, "80=nope", &err), BB_ERR_ARG);
	CHECK_HAS(err.msg, "nope");
	CHECK_INT(bb_dec_sel_decode_as(&sel, "x=http", &err), BB_ERR_ARG);
	CHECK_INT(bb_dec_sel_decode_as(&sel, "70000=http", &err), BB_ERR_ARG);
	CHECK_INT(bb_dec_sel_disable(&sel, "http", &err), 0);
	CHECK_INT(bb_dec_by_port(&sel, BB_TR_TCP, 40000, 80), -1);
	CHECK_INT(bb_dec_by_probe(&sel, BB_TR_TCP, (const uint8_t *)"GET / HTTP/1.1\r\n", 16, 0),
	          bb_dec_find("generic"));
	memset(&sel, 0, sizeof sel);
	CHECK_INT(bb_dec_by_probe(&sel, BB_TR_TCP, (const uint8_t *)"GET / HTTP/1.1\r\n", 16, 0),
	          bb_dec_find("http"));
	CHECK_INT(bb_dec_sel_disable(&sel, "generic", &err), 0);
	CHECK_INT(bb_dec_by_probe(&sel, BB_TR_TCP, (const uint8_t *)"hello", 5, 0), -1);
	for (size_t i = 0; i < bb_dec_count(); i++) {
		const struct bb_decoder *d = bb_dec_at(i);
		CHECK(d->name && d->summary && d->decode && d->state_size > 0);
	}
}

/* --list-decoders: one line per registry entry, in order, each naming its
 * decoder, transports and ports; disabling the last decoder uses the last bit. */
static void t_registry_list(void)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	CHECK(f != NULL);
	if (!f)
		return;
	CHECK_INT(bb_dec_list(f), 0);
	fclose(f);
	size_t lines = 0;
	const char *line = text;
	for (const char *nl; (nl = strchr(line, '\n')); line = nl + 1, lines++) {
		if (lines >= bb_dec_count())
			break;
		const struct bb_decoder *d = bb_dec_at(lines);
		size_t nlen = strlen(d->name);
		CHECK(strncmp(line, d->name, nlen) == 0 && line[nlen] == ' ');
		const char *sum = strstr(line, d->summary);
		CHECK(sum && sum + strlen(d->summary) == nl);
	}
	CHECK_INT(lines, bb_dec_count());
	CHECK_HAS(text, "\nhttp     tcp     80,8080,");
	CHECK_HAS(text, "dns      tcp,udp 53,");
	CHECK_HAS(text, "\ngeneric  tcp,udp (any)  ");
	free(text);

	struct bb_dec_sel sel;
	struct bb_err err;
	memset(&sel, 0, sizeof sel);
	CHECK(bb_dec_count() <= BB_DEC_MAX);
	const char *last = bb_dec_at(bb_dec_count() - 1)->name;
	CHECK_INT(bb_dec_sel_disable(&sel, last, &err), 0);
	CHECK_INT(bb_dec_by_probe(&sel, BB_TR_TCP, (const uint8_t *)"hello", 5, 0), -1);
	CHECK_INT(bb_dec_by_port(&sel, BB_TR_UDP, 40000, 53), bb_dec_find("dns"));
}

/* ---- generic ---------------------------------------------------------------- */

static void t_generic_tcp(void)
{
	struct fake *f = fake_new(&bb_dec_generic, BB_TR_TCP);
	feed(f, 0, "req1", 4);
	feed(f, 0, "more", 4);
	feed(f, 1, "rep1", 4);
	feed(f, 0, "req2", 4);
	feed(f, 1, "rep2", 4);
	feed(f, 1, "rep2b", 5);
	end(f);
	CHECK_INT(f->n, 4);
	CHECK_INT(f->r[0].op, BB_CALL);
	CHECK_STR(f->r[0].id, "c7.1");
	CHECK_INT(f->r[0].len, 8);
	CHECK_INT(f->r[0].ts, 0);
	CHECK_INT(f->r[0].end, 70);
	CHECK_INT(f->r[1].op, BB_RET);
	CHECK_STR(f->r[1].id, "c7.1");
	CHECK_STR(f->r[3].id, "c7.2");
	CHECK_INT(f->r[3].len, 9);
	fake_free(f);
	/* a server banner is not a return */
	f = fake_new(&bb_dec_generic, BB_TR_TCP);
	feed(f, 1, "220 hi", 6);
	feed(f, 0, "HELO", 4);
	feed(f, 1, "250", 3);
	end(f);
	CHECK_INT(f->n, 2);
	CHECK_INT(f->st.unmatched_ret, 1);
	fake_free(f);
}

static void t_generic_udp(void)
{
	struct fake *f = fake_new(&bb_dec_generic, BB_TR_UDP);
	feed(f, 0, "q", 1);
	feed(f, 1, "a", 1);
	feed(f, 1, "x", 1);
	feed(f, 0, "q", 1);
	end(f);
	CHECK_INT(count_op(f, BB_CALL), 2);
	CHECK_INT(count_op(f, BB_RET), 1);
	CHECK_STR(f->r[1].id, "c7.1");
	CHECK_STR(f->r[2].id, "c7.2");
	fake_free(f);
}

/* ---- dns ---------------------------------------------------------------------- */

static const uint8_t dns_q[] = {0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0,
	7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0, 0, 1, 0, 1};
static const uint8_t dns_r[] = {0x12, 0x34, 0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 0,
	7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0, 0, 1, 0, 1,
	0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 1, 2, 3, 4};

static void t_dns_udp(void)
{
	struct fake *f = fake_new(&bb_dec_dns, BB_TR_UDP);
	feed(f, 0, dns_q, sizeof dns_q);
	feed(f, 1, dns_r, sizeof dns_r);
	feed(f, 1, dns_r, sizeof dns_r); /* duplicate answer: unmatched */
	feed(f, 0, dns_q, 5);           /* short: malformed, not emitted */
	CHECK_INT(f->n, 3);
	CHECK_INT(f->r[0].op, BB_CALL);
	CHECK_STR(f->r[0].id, "10.0.0.1:1234#4660");
	CHECK_STR(f->r[0].req, "example.com A");
	CHECK_INT(f->r[1].op, BB_RET);
	CHECK_STR(f->r[1].id, "10.0.0.1:1234#4660");
	CHECK_INT(f->st.unmatched_ret, 1);
	CHECK_INT(f->st.malformed, 1);
	/* a compression loop is malformed, not a hang */
	const uint8_t loop[] = {0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 12, 0, 1, 0, 1};
	feed(f, 0, loop, sizeof loop);
	CHECK_INT(f->st.malformed, 2);
	CHECK(bb_dec_dns.probe(dns_q, sizeof dns_q, BB_TR_UDP, 0));
	CHECK(!bb_dec_dns.probe(dns_r, sizeof dns_r, BB_TR_UDP, 0));
	CHECK(!bb_dec_dns.probe((const uint8_t *)"GET / HTTP/1.1\r\n\r\n", 18, BB_TR_UDP, 0));
	fake_free(f);
}

static void t_dns_tcp_split(void)
{
	uint8_t s[200];
	size_t n = 0;
	s[n++] = 0;
	s[n++] = sizeof dns_q;
	memcpy(s + n, dns_q, sizeof dns_q);
	n += sizeof dns_q;
	s[n++] = 0;
	s[n++] = sizeof dns_q;
	memcpy(s + n, dns_q, sizeof dns_q);
	s[n + 1] = 0x35; /* second query id 0x1235 */
	n += sizeof dns_q;
	for (size_t k = 0; k <= n; k++) {
		struct fake *f = fake_new(&bb_dec_dns, BB_TR_TCP);
		feed(f, 0, s, k);
		feed(f, 0, s + k, n - k);
		CHECK_INT(f->n, 2);
		if (f->n == 2) {
			CHECK_STR(f->r[1].id, "10.0.0.1:1234#4661");
			CHECK_INT(f->r[1].ts, (int64_t)(2 + sizeof dns_q) * 10);
			CHECK_INT(f->r[1].end, (int64_t)(n - 1) * 10);
		}
		CHECK_INT(f->len[0], 0);
		fake_free(f);
	}
}

static void t_dns_tcp_gap(void)
{
	struct fake *f = fake_new(&bb_dec_dns, BB_TR_TCP);
	uint8_t s[100];
	feed(f, 0, "\x00\x1d\x12", 3);
	bb_dec_dns.gap(f->state, &f->ctx, 0, 0);
	f->len[0] = 0; /* capture drops the unconsumed bytes */
	s[0] = 0xff;
	s[1] = 0;
	s[2] = sizeof dns_q;
	memcpy(s + 3, dns_q, sizeof dns_q);
	feed(f, 0, s, 3 + sizeof dns_q);
	CHECK_INT(f->n, 1);
	CHECK_STR(f->r[0].req, "example.com A");
	fake_free(f);
}

/* ---- sunrpc --------------------------------------------------------------------- */

static size_t rpc_call(uint8_t *b, uint32_t xid, uint32_t prog, uint32_t vers, uint32_t proc,
                       size_t extra)
{
	uint32_t w[] = {xid, 0, 2, prog, vers, proc, 0, 0, 0, 0};
	size_t n = 0;
	for (size_t i = 0; i < 10; i++) {
		b[n++] = (uint8_t)(w[i] >> 24);
		b[n++] = (uint8_t)(w[i] >> 16);
		b[n++] = (uint8_t)(w[i] >> 8);
		b[n++] = (uint8_t)w[i];
	}
	memset(b + n, 0xee, extra);
	return n + extra;
}

static size_t rpc_reply(uint8_t *b, uint32_t xid)
{
	uint32_t w[] = {xid, 1, 0, 0, 0, 0};
	size_t n = 0;
	for (size_t i = 0; i < 6; i++) {
		b[n++] = (uint8_t)(w[i] >> 24);
		b[n++] = (uint8_t)(w[i] >> 16);
		b[n++] = (uint8_t)(w[i] >> 8);
		b[n++] = (uint8_t)w[i];
	}
	return n;
}

static void put32(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)(v >> 24);
	b[1] = (uint8_t)(v >> 16);
	b[2] = (uint8_t)(v >> 8);
	b[3] = (uint8_t)v;
}

static void t_rpc_udp(void)
{
	uint8_t b[200];
	struct fake *f = fake_new(&bb_dec_sunrpc, BB_TR_UDP);
	feed(f, 0, b, rpc_call(b, 0xabc, 100003, 3, 3, 0));
	feed(f, 1, b, rpc_reply(b, 0xabc));
	feed(f, 1, b, rpc_reply(b, 0xabd));
	feed(f, 0, b, rpc_call(b, 5, 100000, 2, 3, 0));
	feed(f, 0, b, rpc_call(b, 6, 100005, 3, 1, 0));
	feed(f, 0, b, rpc_call(b, 7, 100232, 10, 1, 0));
	feed(f, 0, b, 10);
	CHECK_INT(f->n, 6);
	CHECK_STR(f->r[0].id, "00000abc");
	CHECK_STR(f->r[0].req, "NFSv3.LOOKUP");
	CHECK_STR(f->r[1].req, "NFSv3.LOOKUP");
	CHECK_INT(f->r[1].op, BB_RET);
	CHECK_STR(f->r[3].req, "PORTMAPv2.GETPORT");
	CHECK_STR(f->r[4].req, "MOUNTv3.MNT");
	CHECK_STR(f->r[5].req, "100232.v10.1");
	CHECK_INT(f->st.unmatched_ret, 1);
	CHECK_INT(f->st.malformed, 1);
	CHECK(bb_dec_sunrpc.probe(b, rpc_call(b, 7, 100005, 3, 1, 0), BB_TR_UDP, 0));
	CHECK(!bb_dec_sunrpc.probe((const uint8_t *)"GET / HTTP/1.1\r\n\r\nxxxxxxxxxxxx", 30,
	                           BB_TR_UDP, 0));
	fake_free(f);
}

static void t_rpc_nfs4_compound(void)
{
	uint8_t b[300];
	uint32_t w[] = {0x77, 0, 2, 100003, 4, 1,
		1, 20, 0, 0, 0, 0, 0,   /* AUTH_SYS credential, 20 bytes */
		0, 0,                   /* AUTH_NONE verifier */
		0, 1, 3,                /* tag "", minorversion 1, 3 ops */
		53, 0, 0, 0, 0, 1, 2, 3, 0, /* SEQUENCE: sessionid, seq, slot, hslot, cache */
		22, 8, 0xaaaa, 0xbbbb,  /* PUTFH, 8-byte handle */
		25, 0, 0, 0, 0, 0, 0, 0, 4096}; /* READ ... */
	size_t n = 0;
	for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
		put32(b + n, w[i]);
		n += 4;
	}
	struct fake *f = fake_new(&bb_dec_sunrpc, BB_TR_UDP);
	uint8_t rep[64];
	feed(f, 0, b, n);
	feed(f, 1, rep, rpc_reply(rep, 0x77));
	CHECK_INT(f->n, 2);
	CHECK_STR(f->r[0].req, "NFSv4.COMPOUND:READ");
	CHECK_STR(f->r[1].req, "NFSv4.COMPOUND:READ");
	/* cut short: the procedure name without the operation */
	feed(f, 0, b, 40);
	CHECK_INT(f->n, 3);
	CHECK_STR(f->r[2].req, "NFSv4.COMPOUND");
	fake_free(f);
}

static void t_rpc_tcp_split(void)
{
	/* one call in two fragments, then a one-fragment reply-like call */
	uint8_t msg[300], s[400];
	size_t m = rpc_call(msg, 0x11, 100003, 3, 7, 60); /* WRITE with 60 bytes of data */
	size_t n = 0;
	size_t f1 = 30;
	put32(s + n, (uint32_t)f1);
	n += 4;
	memcpy(s + n, msg, f1);
	n += f1;
	put32(s + n, 0x80000000u | (uint32_t)(m - f1));
	n += 4;
	memcpy(s + n, msg + f1, m - f1);
	n += m - f1;
	size_t start2 = n;
	size_t m2 = rpc_call(msg, 0x12, 100003, 3, 1, 0);
	put32(s + n, 0x80000000u | (uint32_t)m2);
	n += 4;
	memcpy(s + n, msg, m2);
	n += m2;
	for (size_t k = 0; k <= n; k++) {
		struct fake *f = fake_new(&bb_dec_sunrpc, BB_TR_TCP);
		feed(f, 0, s, k);
		feed(f, 0, s + k, n - k);
		CHECK_INT(f->n, 2);
		if (f->n == 2) {
			CHECK_STR(f->r[0].req, "NFSv3.WRITE");
			CHECK_INT(f->r[0].ts, 0);
			CHECK_INT(f->r[0].end, (int64_t)(start2 - 1) * 10);
			CHECK_INT(f->r[0].len, start2);
			CHECK_STR(f->r[1].id, "00000012");
			CHECK_INT(f->r[1].ts, (int64_t)start2 * 10);
		}
		fake_free(f);
	}
}

static void t_rpc_tcp_gap(void)
{
	uint8_t msg[100], s[200];
	struct fake *f = fake_new(&bb_dec_sunrpc, BB_TR_TCP);
	feed(f, 0, "\x80\x00\x01\x00garbage", 11);
	bb_dec_sunrpc.gap(f->state, &f->ctx, 0, 0);
	f->len[0] = 0;
	size_t m = rpc_call(msg, 0x99, 100000, 2, 3, 0);
	memcpy(s, "junkjunk", 8);
	put32(s + 8, 0x80000000u | (uint32_t)m);
	memcpy(s + 12, msg, m);
	feed(f, 0, s, 12 + m);
	CHECK_INT(f->n, 1);
	CHECK_STR(f->r[0].id, "00000099");
	CHECK_INT(f->st.resync, 1);
	fake_free(f);
}

/* ---- http --------------------------------------------------------------------------- */

static void feed_split(struct fake *f, int dir, const char *s, size_t k)
{
	size_t n = strlen(s);
	if (k > n)
		k = n;
	feed(f, dir, s, k);
	feed(f, dir, s + k, n - k);
}

static const char *const h_req =
	"GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
	"POST /b HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello"
	"HEAD /c HTTP/1.1\r\n\r\n"
	"PUT /d HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
static const char *const h_rep =
	"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nxyz"
	"HTTP/1.1 100 Continue\r\n\r\n"
	"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n10\r\n0123456789abcdef\r\n0\r\nX-T: 1\r\n\r\n"
	"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"
	"HTTP/1.1 204 No Content\r\n\r\n";

static void t_http_pipeline_split(void)
{
	size_t nq = strlen(h_req), nr = strlen(h_rep);
	for (size_t k = 0; k <= nq || k <= nr; k++) {
		struct fake *f = fake_new(&bb_dec_http, BB_TR_TCP);
		feed_split(f, 0, h_req, k);
		feed_split(f, 1, h_rep, k);
		end(f);
		CHECK_INT(count_op(f, BB_CALL), 4);
		CHECK_INT(count_op(f, BB_RET), 5);
		CHECK_INT(f->st.malformed, 0);
		if (f->n == 9) {
			CHECK_STR(f->r[0].id, "c7.1");
			CHECK_STR(f->r[0].req, "GET /a");
			CHECK_STR(f->r[3].req, "PUT /d");
			CHECK_INT(f->r[3].end, (int64_t)(nq - 1) * 10);
			CHECK_STR(f->r[4].id, "c7.1");
			CHECK_STR(f->r[5].id, "c7.2"); /* 100 Continue */
			CHECK_STR(f->r[6].id, "c7.2");
			CHECK_STR(f->r[6].req, "POST /b");
			CHECK_STR(f->r[7].id, "c7.3"); /* HEAD: no body despite Content-Length */
			CHECK_STR(f->r[8].id, "c7.4");
			CHECK_INT(f->r[8].end, (int64_t)(nr - 1) * 10 + 1);
		}
		fake_free(f);
	}
}

static void t_http_close(void)
{
	struct fake *f = fake_new(&bb_dec_http, BB_TR_TCP);
	feed(f, 0, "GET / HTTP/1.0\r\n\r\n", 18);
	feed(f, 1, "HTTP/1.0 200 OK\r\n\r\nbody...", 26);
	feed(f, 1, "more", 4);
	CHECK_INT(f->n, 1);
	end(f);
	CHECK_INT(f->n, 2);
	CHECK_INT(f->r[1].len, 30);
	CHECK_INT(f->r[1].end, 29 * 10 + 1);
	fake_free(f);
}

static void t_http_garbage_gap(void)
{
	struct fake *f = fake_new(&bb_dec_http, BB_TR_TCP);
	feed(f, 0, "\x16\x03\x01 binary\r\n\r\n", 14);
	CHECK_INT(f->st.malformed, 1);
	feed(f, 0, "GET /x HTTP/1.1\r\n\r\n", 19);
	feed(f, 0, "GET /y HTTP/1.1\r\nContent-Length: 1000\r\n\r\nabc", 44);
	bb_dec_http.gap(f->state, &f->ctx, 0, 0);
	f->len[0] = 0;
	feed(f, 0, "tail of body\r\nGET /z HTTP/1.1\r\n\r\n", 33);
	end(f);
	CHECK_INT(count_op(f, BB_CALL), 3);
	CHECK_STR(f->r[2].req, "GET /z");
	CHECK(bb_dec_http.probe((const uint8_t *)"GET / HTTP/1.1\r\n", 16, BB_TR_TCP, 0));
	CHECK(!bb_dec_http.probe((const uint8_t *)"GET /", 5, BB_TR_TCP, 0));
	CHECK(bb_dec_http.probe((const uint8_t *)"HTTP/1.1 200", 12, BB_TR_TCP, 1));
	fake_free(f);
}

/* A response lost in a hole: the next response pairs with the latest request. */
static void t_http_lost_response(void)
{
	struct fake *f = fake_new(&bb_dec_http, BB_TR_TCP);
	char junk[260];
	feed(f, 0, "GET /1 HTTP/1.1\r\n\r\n", 19);
	bb_dec_http.gap(f->state, &f->ctx, 1, 0);
	feed(f, 0, "GET /2 HTTP/1.1\r\n\r\n", 19);
	memset(junk, 'x', 200);
	memcpy(junk + 200, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 38);
	feed(f, 1, junk, 238);
	end(f);
	CHECK_INT(count_op(f, BB_RET), 1);
	CHECK_STR(f->r[2].id, "c7.2");
	CHECK_STR(f->r[2].req, "GET /2");
	fake_free(f);
}

/* Mutated valid messages through every decoder, in random pieces, with gaps:
 * no crash, no sanitizer report, consumption never beyond what was given. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void t_fuzz_mutations(void)
{
	static const char seeds[][120] = {
		"GET /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
		"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nxyz",
		"\x80\x00\x00\x28\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x02\x00\x01\x86\xa3"
		"\x00\x00\x00\x03\x00\x00\x00\x07\x00\x00\x00\x00\x00\x00\x00\x00",
		"\x00\x1d\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03com\x00\x00\x01\x00\x01",
	};
	uint8_t buf[512];
	uint64_t x = 88172645463325252u;
	for (int it = 0; it < 100000; it++) {
		const char *seed = seeds[it % 3];
		static const size_t lens[] = {101, 36, 31};
		size_t n = lens[it % 3];
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		buf[0] = (uint8_t)x;
		buf[1] = (uint8_t)(x >> 8);
		memcpy(buf + 2, seed, n);
		int flips = (int)((x >> 16) % 6);
		for (int k = 0; k < flips; k++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			buf[2 + (x % n)] = (uint8_t)(x >> 32);
		}
		LLVMFuzzerTestOneInput(buf, n + 2);
	}
	CHECK(1);
}

static const struct unit_test tests[] = {
	{"rd_basic", t_rd_basic},
	{"rd_sticky", t_rd_sticky},
	{"rd_sub", t_rd_sub},
	{"rd_peek_varint", t_rd_peek_varint},
	{"registry", t_registry},
	{"registry_list", t_registry_list},
	{"generic_tcp", t_generic_tcp},
	{"generic_udp", t_generic_udp},
	{"dns_udp", t_dns_udp},
	{"dns_tcp_split", t_dns_tcp_split},
	{"dns_tcp_gap", t_dns_tcp_gap},
	{"rpc_udp", t_rpc_udp},
	{"rpc_nfs4_compound", t_rpc_nfs4_compound},
	{"rpc_tcp_split", t_rpc_tcp_split},
	{"rpc_tcp_gap", t_rpc_tcp_gap},
	{"http_pipeline_split", t_http_pipeline_split},
	{"http_close", t_http_close},
	{"http_garbage_gap", t_http_garbage_gap},
	{"http_lost_response", t_http_lost_response},
	{"fuzz_mutations", t_fuzz_mutations},
};

UNIT_MAIN(tests)

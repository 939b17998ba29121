/* test_dec_ms.c - unit tests for the ldap, dcerpc and smb2 decoders */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "decoders/decoders.h"
#include "unit.h"

#define FAKE_SERVER "10.0.0.2:389"
#include "dec_fake.h"

static void end(struct fake *f)
{
	if (f->dec->end)
		f->dec->end(f->state, &f->ctx);
}

/* Records equal in all fields (the reference decode vs a split one). */
static int same_recs(const struct fake *a, const struct fake *b)
{
	if (a->n != b->n)
		return 0;
	for (int i = 0; i < a->n; i++) {
		const struct rec *x = &a->r[i], *y = &b->r[i];
		if (x->op != y->op || x->dir != y->dir || x->ts != y->ts || x->end != y->end ||
		    x->len != y->len || strcmp(x->id, y->id) || strcmp(x->req, y->req))
			return 0;
	}
	return 1;
}

/* Decodes the client bytes c and the server bytes s whole (reference), then
 * with each cut at every offset 1..n-1, and checks identical records. */
static struct fake *split_check(const struct bb_decoder *dec, const uint8_t *c, size_t cn,
                                const uint8_t *s, size_t sn)
{
	struct fake *ref = fake_new(dec, BB_TR_TCP);
	feed(ref, 0, c, cn);
	feed(ref, 1, s, sn);
	end(ref);
	size_t mx = cn > sn ? cn : sn;
	int bad = 0;
	for (size_t k = 1; k < mx; k++) {
		struct fake *f = fake_new(dec, BB_TR_TCP);
		size_t kc = k < cn ? k : cn, ks = k < sn ? k : sn;
		feed(f, 0, c, kc);
		feed(f, 0, c + kc, cn - kc);
		feed(f, 1, s, ks);
		feed(f, 1, s + ks, sn - ks);
		end(f);
		if (!same_recs(ref, f) && bad++ < 3)
			UNIT_FAIL_("%s: records differ when cut at %zu (%d vs %d)", dec->name, k,
			           f->n, ref->n);
		fake_free(f);
	}
	return ref;
}

/* ---- BER / LDAP message builders ------------------------------------------- */

struct buf {
	uint8_t b[4096];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put1(struct buf *b, unsigned v)
{
	b->b[b->n++] = (uint8_t)v;
}

/* tag, length (long form with 4 bytes when lf), value */
static void tlv(struct buf *b, unsigned tag, const void *v, size_t n, int lf)
{
	put1(b, tag);
	if (lf || n > 127) {
		put1(b, 0x84);
		put1(b, (unsigned)(n >> 24));
		put1(b, (unsigned)(n >> 16) & 0xff);
		put1(b, (unsigned)(n >> 8) & 0xff);
		put1(b, (unsigned)n & 0xff);
	} else {
		put1(b, (unsigned)n);
	}
	put(b, v, n);
}

/* LDAPMessage { messageID, [APPLICATION op] body } */
static void ldap_msg(struct buf *out, unsigned id, unsigned optag, const struct buf *body, int lf)
{
	struct buf in = {{0}, 0};
	uint8_t idb[2] = {(uint8_t)(id >> 8), (uint8_t)id};
	if (id < 128)
		tlv(&in, 0x02, idb + 1, 1, 0);
	else
		tlv(&in, 0x02, idb, 2, 0);
	tlv(&in, optag, body->b, body->n, lf);
	tlv(out, 0x30, in.b, in.n, lf);
}

static void ldap_result(struct buf *body)
{
	static const uint8_t rc[] = {0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00};
	body->n = 0;
	put(body, rc, sizeof rc);
}

/* client: simple bind 1, search 2 (base dc=example,dc=com), whoami 3, unbind 4;
 * server: bindResponse 1, 2 searchResEntry + searchResDone 2, extendedResp 3 */
static void ldap_session(struct buf *c, struct buf *s)
{
	struct buf body = {{0}, 0};
	static const uint8_t bind[] = {0x02, 0x01, 0x03, 0x04, 0x07, 'c', 'n', '=', 'r', 'o', 'o', 't',
	                               0x80, 0x03, 'p', 'w', 'd'};
	put(&body, bind, sizeof bind);
	ldap_msg(c, 1, 0x60, &body, 0);
	body.n = 0;
	static const char dn[] = "dc=example,dc=com";
	tlv(&body, 0x04, dn, strlen(dn), 0);
	static const uint8_t rest[] = {0x0a, 0x01, 0x02, 0x0a, 0x01, 0x00, 0x02, 0x01, 0x00,
	                               0x02, 0x01, 0x00, 0x01, 0x01, 0x00, 0x87, 0x0b, 'o', 'b', 'j', 'e',
	                               'c', 't', 'c', 'l', 'a', 's', 's', 0x30, 0x00};
	put(&body, rest, sizeof rest);
	ldap_msg(c, 2, 0x63, &body, 1); /* long-form lengths */
	body.n = 0;
	static const char who[] = "1.3.6.1.4.1.4203.1.11.3";
	tlv(&body, 0x80, who, strlen(who), 0);
	ldap_msg(c, 3, 0x77, &body, 0);
	body.n = 0;
	ldap_msg(c, 4, 0x42, &body, 0);

	ldap_result(&body);
	ldap_msg(s, 1, 0x61, &body, 0);
	for (int i = 0; i < 2; i++) {
		body.n = 0;
		static const char e[] = "cn=a,dc=example,dc=com";
		tlv(&body, 0x04, e, strlen(e), 0);
		static const uint8_t attrs[] = {0x30, 0x00};
		put(&body, attrs, sizeof attrs);
		ldap_msg(s, 2, 0x64, &body, i);
	}
	ldap_result(&body);
	ldap_msg(s, 2, 0x65, &body, 0);
	ldap_result(&body);
	ldap_msg(s, 3, 0x78, &body, 0);
}

static void t_ldap_split(void)
{
	struct buf c = {{0}, 0}, s = {{0}, 0};
	ldap_session(&c, &s);
	struct fake *f = split_check(&bb_dec_ldap, c.b, c.n, s.b, s.n);
	CHECK_INT(f->n, 7);
	if (f->n == 7) {
		CHECK_STR(f->r[0].id, "c7.1");
		CHECK_STR(f->r[0].req, "bindRequest");
		CHECK_INT(f->r[0].ts, 0);
		CHECK_STR(f->r[1].req, "searchRequest dc=example,dc=com");
		CHECK_STR(f->r[2].req, "extendedReq WhoAmI");
		CHECK_STR(f->r[3].req, "unbindRequest");
		CHECK_STR(f->r[3].id, "c7.4");
		CHECK_INT(f->r[3].end, (int64_t)(c.n - 1) * 10);
		CHECK_INT(f->r[4].op, BB_RET);
		CHECK_STR(f->r[4].req, "bindRequest");
		CHECK_STR(f->r[5].id, "c7.2"); /* the searchResDone, after two entries */
		CHECK_STR(f->r[5].req, "searchRequest");
		CHECK_STR(f->r[6].req, "extendedReq");
	}
	CHECK_INT(f->st.calls, 4);
	CHECK_INT(f->st.rets, 3);
	CHECK_INT(f->st.malformed, 0);
	CHECK_INT(f->st.unmatched_ret, 0);
	fake_free(f);
}

static void t_ldap_sasl(void)
{
	/* Integrity-only NTLMSSP wrapping (16-byte signature) around two
	 * messages in one buffer, then a sealed buffer: decoded, then opaque. */
	struct buf in = {{0}, 0}, body = {{0}, 0}, w = {{0}, 0};
	static const char dn[] = "dc=x";
	tlv(&body, 0x04, dn, 4, 0);
	ldap_msg(&in, 5, 0x63, &body, 0);
	body.n = 0;
	ldap_msg(&in, 6, 0x50, &body, 0); /* abandon (no reply) */
	size_t bl = 16 + in.n;
	uint8_t hdr[4] = {0, 0, (uint8_t)(bl >> 8), (uint8_t)bl};
	put(&w, hdr, 4);
	static const uint8_t sig[16] = {1, 0, 0, 0, 9, 9, 9, 9, 9, 9, 9, 9, 0, 0, 0, 1};
	put(&w, sig, 16);
	put(&w, in.b, in.n);
	static const uint8_t sealed[] = {0, 0, 0, 20, 0x60, 0x12, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
	                                 12, 13, 14, 15, 16, 17, 18};
	put(&w, sealed, sizeof sealed);
	struct buf s = {{0}, 0};
	struct fake *f = split_check(&bb_dec_ldap, w.b, w.n, s.b, 0);
	CHECK_INT(f->n, 2);
	if (f->n == 2) {
		CHECK_STR(f->r[0].id, "c7.5");
		CHECK_STR(f->r[0].req, "searchRequest dc=x");
		CHECK_STR(f->r[1].req, "abandonRequest");
	}
	CHECK_INT(f->st.opaque, 1);
	CHECK_INT(f->st.malformed, 0);
	fake_free(f);
}

static void t_ldap_gap(void)
{
	/* garbage, then a message: one malformed, resynchronised */
	struct buf c = {{0}, 0}, s = {{0}, 0};
	ldap_session(&c, &s);
	struct fake *f = fake_new(&bb_dec_ldap, BB_TR_TCP);
	static const uint8_t junk[] = {0x99, 0x30, 0x05, 0x02, 0x01, 0x01, 0xff, 0xfe, 0x17};
	feed(f, 0, junk, sizeof junk);
	feed(f, 0, c.b, c.n);
	CHECK_INT(f->n, 4);
	CHECK_INT(f->st.malformed, 1);
	/* a hole in the search request (bytes 34..44): the bind before it and
	 * the whoami and unbind after it are decoded */
	struct fake *g = fake_new(&bb_dec_ldap, BB_TR_TCP);
	feed(g, 0, c.b, 34);
	uint64_t lost = g->len[0] + 10;
	f->dec->gap(g->state, &g->ctx, 0, lost);
	g->pos[0] += lost;
	g->len[0] = 0;
	feed(g, 0, c.b + 44, c.n - 44);
	CHECK_INT(g->n, 3);
	if (g->n == 3) {
		CHECK_STR(g->r[0].req, "bindRequest");
		CHECK_STR(g->r[1].req, "extendedReq WhoAmI");
		CHECK_INT(g->r[1].ts, (int64_t)(24 + 64) * 10);
	}
	CHECK_INT(g->st.resync, 1);
	fake_free(g);
	fake_free(f);
}

static void t_ldap_udp(void)
{
	struct buf c = {{0}, 0}, s = {{0}, 0};
	ldap_session(&c, &s);
	struct fake *f = fake_new(&bb_dec_ldap, BB_TR_UDP);
	feed(f, 0, c.b, c.n); /* four messages in one datagram */
	CHECK_INT(f->n, 4);
	CHECK(bb_dec_ldap.probe(c.b, c.n, BB_TR_TCP, 0));
	CHECK(!bb_dec_ldap.probe(s.b, s.n, BB_TR_TCP, 1)); /* a response does not start a flow */
	fake_free(f);
}

/* ---- DCE-RPC ------------------------------------------------------------------ */

static void le16(struct buf *b, unsigned v)
{
	put1(b, v & 0xff);
	put1(b, (v >> 8) & 0xff);
}

static void le32(struct buf *b, uint32_t v)
{
	le16(b, v & 0xffff);
	le16(b, v >> 16);
}

static void be16(struct buf *b, unsigned v)
{
	put1(b, (v >> 8) & 0xff);
	put1(b, v & 0xff);
}

static void be32(struct buf *b, uint32_t v)
{
	be16(b, v >> 16);
	be16(b, v & 0xffff);
}

/* A CO PDU: header + body; big-endian drep when be. */
static void dce_pdu(struct buf *out, unsigned ptype, unsigned flags, uint32_t call_id,
                    const struct buf *body, int be)
{
	put1(out, 5);
	put1(out, 0);
	put1(out, ptype);
	put1(out, flags);
	put1(out, be ? 0x00 : 0x10);
	put1(out, 0);
	put1(out, 0);
	put1(out, 0);
	size_t fl = 16 + body->n;
	if (be) {
		be16(out, (unsigned)fl);
		be16(out, 0);
		be32(out, call_id);
	} else {
		le16(out, (unsigned)fl);
		le16(out, 0);
		le32(out, call_id);
	}
	put(out, body->b, body->n);
}

static void dce_session(struct buf *c, struct buf *s)
{
	struct buf b = {{0}, 0};
	/* bind: epm, context 0 */
	le16(&b, 5840);
	le16(&b, 5840);
	le32(&b, 0);
	put1(&b, 1);
	put1(&b, 0);
	le16(&b, 0);
	le16(&b, 0); /* p_cont_id */
	put1(&b, 1);
	put1(&b, 0);
	static const uint8_t epm[16] = {0x08, 0x83, 0xaf, 0xe1, 0x1f, 0x5d, 0xc9, 0x11,
	                                0x91, 0xa4, 0x08, 0x00, 0x2b, 0x14, 0xa0, 0xfa};
	put(&b, epm, 16);
	le32(&b, 3);
	static const uint8_t ndr[20] = {0x04, 0x5d, 0x88, 0x8a, 0xeb, 0x1c, 0xc9, 0x11, 0x9f, 0xe8,
	                                0x08, 0x00, 0x2b, 0x10, 0x48, 0x60, 2, 0, 0, 0};
	put(&b, ndr, 20);
	dce_pdu(c, 11, 3, 1, &b, 0);
	/* request opnum 3 in two fragments */
	b.n = 0;
	le32(&b, 100);
	le16(&b, 0);
	le16(&b, 3);
	for (int i = 0; i < 60; i++)
		put1(&b, i);
	dce_pdu(c, 0, 1, 2, &b, 0);
	b.n = 0;
	le32(&b, 40);
	le16(&b, 0);
	le16(&b, 3);
	for (int i = 0; i < 40; i++)
		put1(&b, i);
	dce_pdu(c, 0, 2, 2, &b, 0);
	/* request opnum 2, big-endian, call 3 */
	b.n = 0;
	be32(&b, 8);
	be16(&b, 0);
	be16(&b, 2);
	be32(&b, 0);
	dce_pdu(c, 0, 3, 3, &b, 1);

	b.n = 0;
	for (int i = 0; i < 40; i++)
		put1(&b, 0);
	dce_pdu(s, 12, 3, 1, &b, 0);
	b.n = 0;
	for (int i = 0; i < 24; i++)
		put1(&b, 0);
	dce_pdu(s, 2, 3, 2, &b, 0);
	b.n = 0;
	for (int i = 0; i < 16; i++)
		put1(&b, 0);
	dce_pdu(s, 3, 3, 3, &b, 1); /* fault */
}

static void t_dce_split(void)
{
	struct buf c = {{0}, 0}, s = {{0}, 0};
	dce_session(&c, &s);
	struct fake *f = split_check(&bb_dec_dcerpc, c.b, c.n, s.b, s.n);
	CHECK_INT(f->n, 6);
	if (f->n == 6) {
		CHECK_STR(f->r[0].req, "bind epm");
		CHECK_STR(f->r[0].id, "c7.1");
		CHECK_STR(f->r[1].req, "op3"); /* epm is bound only once the ack is seen */
		CHECK_STR(f->r[1].id, "c7.2");
		CHECK_INT(f->r[1].len, 16 + 8 + 60 + 16 + 8 + 40);
		CHECK_STR(f->r[2].req, "op2");
		CHECK_STR(f->r[2].id, "c7.3");
		CHECK_INT(f->r[3].op, BB_RET);
		CHECK_STR(f->r[3].req, "bind epm");
		CHECK_STR(f->r[4].req, "op3");
		CHECK_STR(f->r[5].id, "c7.3");
	}
	CHECK_INT(f->st.unmatched_ret, 0);
	CHECK_INT(f->st.malformed, 0);
	/* in time order (server after bind_ack), the context names the interface */
	struct fake *g = fake_new(&bb_dec_dcerpc, BB_TR_TCP);
	size_t bind_n = 16 + 12 + 4 + 20 + 20;
	feed(g, 0, c.b, bind_n);
	feed(g, 1, s.b, 16 + 40);
	feed(g, 0, c.b + bind_n, c.n - bind_n);
	CHECK_INT(g->n, 4);
	if (g->n == 4)
		CHECK_STR(g->r[2].req, "epm.op3");
	CHECK(bb_dec_dcerpc.probe(c.b, c.n, BB_TR_TCP, 0));
	fake_free(g);
	fake_free(f);
}

static void t_dce_udp(void)
{
	uint8_t req[80 + 4], rsp[80];
	memset(req, 0, sizeof req);
	req[0] = 4;
	req[4] = 0x10;
	req[56] = 1;             /* activity */
	req[64] = 9;             /* seqnum 9 (LE) */
	req[68] = 5;             /* opnum 5 */
	req[74] = 4;             /* body length */
	memcpy(rsp, req, 80);
	rsp[1] = 2;
	rsp[74] = 0;
	struct fake *f = fake_new(&bb_dec_dcerpc, BB_TR_UDP);
	feed(f, 0, req, sizeof req);
	feed(f, 1, rsp, sizeof rsp);
	CHECK_INT(f->n, 2);
	if (f->n == 2) {
		CHECK_STR(f->r[0].req, "op5");
		CHECK_STR(f->r[0].id, f->r[1].id);
		CHECK_STR(f->r[1].req, "op5");
	}
	CHECK(bb_dec_dcerpc.probe(req, sizeof req, BB_TR_UDP, 0));
	req[0] = 5;
	CHECK(!bb_dec_dcerpc.probe(req, sizeof req, BB_TR_UDP, 0));
	fake_free(f);
}

/* ---- SMB2 ----------------------------------------------------------------------- */

/* An SMB2 header: flags (1 response, 2 async), next command offset. */
static void smb_hdr(struct buf *b, unsigned cmd, uint32_t status, uint32_t flags, uint32_t next,
                    uint64_t mid)
{
	static const uint8_t magic[4] = {0xfe, 'S', 'M', 'B'};
	put(b, magic, 4);
	le16(b, 64);
	le16(b, 1);
	le32(b, status);
	le16(b, cmd);
	le16(b, 1);
	le32(b, flags);
	le32(b, next);
	le32(b, (uint32_t)mid);
	le32(b, (uint32_t)(mid >> 32));
	for (int i = 0; i < 32; i++)
		put1(b, 0);
}

static void nb(struct buf *out, const struct buf *m)
{
	put1(out, 0);
	put1(out, (unsigned)(m->n >> 16));
	be16(out, (unsigned)(m->n & 0xffff));
	put(out, m->b, m->n);
}

static void smb_session(struct buf *c, struct buf *s)
{
	struct buf m = {{0}, 0};
	/* SMB1 NEGOTIATE */
	static const uint8_t smb1[] = {0xff, 'S', 'M', 'B', 0x72, 0, 0, 0, 0, 0x18, 0x53, 0xc8};
	put(&m, smb1, sizeof smb1);
	for (int i = 0; i < 30; i++)
		put1(&m, 0);
	nb(c, &m);
	/* compound CREATE "a\b.txt" + CLOSE */
	m.n = 0;
	smb_hdr(&m, 5, 0, 0, 64 + 56 + 16, 2);
	le16(&m, 57);
	for (int i = 0; i < 42; i++)
		put1(&m, 0);
	le16(&m, 120);
	le16(&m, 14);
	le32(&m, 0);
	le32(&m, 0);
	static const uint8_t name[14] = {'a', 0, '\\', 0, 'b', 0, '.', 0, 't', 0, 'x', 0, 't', 0};
	put(&m, name, 14);
	put1(&m, 0);
	put1(&m, 0);
	smb_hdr(&m, 6, 0, 4, 0, 3);
	le16(&m, 24);
	for (int i = 0; i < 22; i++)
		put1(&m, 0);
	nb(c, &m);
	/* CHANGE_NOTIFY 4 */
	m.n = 0;
	smb_hdr(&m, 15, 0, 0, 0, 4);
	for (int i = 0; i < 32; i++)
		put1(&m, 0);
	nb(c, &m);

	/* server: SMB2 NEGOTIATE response 0; compound response; PENDING + final */
	m.n = 0;
	smb_hdr(&m, 0, 0, 1, 0, 0);
	for (int i = 0; i < 64; i++)
		put1(&m, 0);
	nb(s, &m);
	m.n = 0;
	smb_hdr(&m, 5, 0, 1, 64 + 88 + 8, 2);
	for (int i = 0; i < 88 + 8; i++)
		put1(&m, 0);
	smb_hdr(&m, 6, 0, 5, 0, 3);
	for (int i = 0; i < 60; i++)
		put1(&m, 0);
	nb(s, &m);
	m.n = 0;
	smb_hdr(&m, 15, 0x103, 3, 0, 4);
	for (int i = 0; i < 9; i++)
		put1(&m, 0);
	nb(s, &m);
	m.n = 0;
	smb_hdr(&m, 15, 0, 3, 0, 4);
	for (int i = 0; i < 9; i++)
		put1(&m, 0);
	nb(s, &m);
	/* an encrypted message */
	m.n = 0;
	static const uint8_t tr[4] = {0xfd, 'S', 'M', 'B'};
	put(&m, tr, 4);
	for (int i = 0; i < 60; i++)
		put1(&m, 0x5a);
	nb(s, &m);
}

static void t_smb_split(void)
{
	struct buf c = {{0}, 0}, s = {{0}, 0};
	smb_session(&c, &s);
	struct fake *f = split_check(&bb_dec_smb2, c.b, c.n, s.b, s.n);
	CHECK_INT(f->n, 9);
	if (f->n == 9) {
		CHECK_STR(f->r[0].req, "SMB1.NEGOTIATE");
		CHECK_STR(f->r[0].id, "c7.0");
		CHECK_STR(f->r[1].req, "CREATE a\\b.txt");
		CHECK_STR(f->r[1].id, "c7.2");
		CHECK_INT(f->r[1].ts, (int64_t)(4 + 42 + 4) * 10);
		CHECK_INT(f->r[1].len, 64 + 56 + 16);
		CHECK_STR(f->r[2].req, "CLOSE");
		CHECK_STR(f->r[2].id, "c7.3");
		CHECK_STR(f->r[3].req, "CHANGE_NOTIFY");
		CHECK_STR(f->r[4].req, "SMB1.NEGOTIATE"); /* the SMB2 response to it */
		CHECK_STR(f->r[5].req, "CREATE");
		CHECK_STR(f->r[6].id, "c7.3");
		CHECK_STR(f->r[7].id, "c7.4"); /* interim (STATUS_PENDING) */
		CHECK_STR(f->r[8].id, "c7.4"); /* final */
		CHECK_STR(f->r[8].req, "CHANGE_NOTIFY");
	}
	CHECK_INT(f->st.opaque, 1);
	CHECK_INT(f->st.unmatched_ret, 0);
	CHECK_INT(f->st.malformed, 0);
	fake_free(f);
}

static void t_smb_gap(void)
{
	struct buf c = {{0}, 0}, s = {{0}, 0};
	smb_session(&c, &s);
	/* mid-stream start inside garbage: hunting finds the next message */
	struct fake *f = fake_new(&bb_dec_smb2, BB_TR_TCP);
	f->dec->gap(f->state, &f->ctx, 0, 0);
	static const uint8_t junk[] = {1, 2, 3, 0, 0, 0, 9, 0xfe};
	feed(f, 0, junk, sizeof junk);
	feed(f, 0, c.b, c.n);
	CHECK_INT(f->n, 4);
	CHECK(f->st.skipped_bytes >= sizeof junk);
	CHECK(bb_dec_smb2.probe(c.b, c.n, BB_TR_TCP, 0));
	CHECK(!bb_dec_smb2.probe(junk, sizeof junk, BB_TR_TCP, 0));
	fake_free(f);
}

static const struct unit_test tests[] = {
	{"ldap_split", t_ldap_split},
	{"ldap_sasl", t_ldap_sasl},
	{"ldap_gap", t_ldap_gap},
	{"ldap_udp", t_ldap_udp},
	{"dce_split", t_dce_split},
	{"dce_udp", t_dce_udp},
	{"smb_split", t_smb_split},
	{"smb_gap", t_smb_gap},
};

UNIT_MAIN(tests)

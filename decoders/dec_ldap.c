/* dec_ldap.c - LDAPv3 over TCP and CLDAP over UDP: BER framing, messageID */
/* SPDX-License-Identifier: MIT */
/*
 * RFC 4511 section 4.1.1 (LDAPMessage) and 5.1 (BER, definite lengths only);
 * RFC 4422 section 3.7 (SASL security layer: 4-byte length + buffer).
 *
 *   LDAPMessage ::= 0x30 len
 *                     0x02 len messageID (0 .. 2^31-1)
 *                     [APPLICATION n] protocolOp      (0x60|n or 0x40|n)
 *                     [0] controls OPTIONAL
 *   len: 0xxxxxxx (short form) | 1nnnnnnn followed by n (1..4) length bytes
 *
 * id = "c<connection>.<messageID>". Requests (bind, unbind, search, modify,
 * add, del, modDN, compare, abandon, extended) are CALLs; req = the operation
 * ("searchRequest" + its base DN, "bindRequest" + the SASL mechanism,
 * "extendedReq" + the OID or its name). Unbind and abandon get no reply. The
 * RET of a request is its final response (bindResponse, searchResDone,
 * modifyResponse, ..., extendedResp); searchResEntry, searchResRef and
 * intermediateResponse are partial results and make no record (ORACLE.md:
 * the oracle marks them "partial").
 *
 * After a SASL bind that negotiated a security layer, every message is
 * wrapped: 4-byte big-endian length (first byte 0x00 for any buffer under
 * 16 MB, never an LDAPMessage's 0x30) + buffer. A buffer that holds a plain
 * LDAPMessage (integrity only: right at the start, or after NTLMSSP's 16-byte
 * signature 01 00 00 00 ...) whose length fills it exactly is decoded; any
 * other (sealed) buffer, and TLS records after StartTLS, are counted as
 * opaque and skipped whole. Only the first 1024 bytes of a message are
 * parsed; the rest streams past.
 */
#include <stddef.h>

#include "decoders/dec_int.h"

#define LDAP_MAX_MSG (64u << 20)
#define LDAP_HEAD 1024u
#define LDAP_REQ_MAX 96

struct ldap_dir {
	uint8_t hunting;
	uint8_t in_msg;         /* inside a message: left bytes to go */
	uint8_t have;           /* a message to emit at its end: fields below */
	uint8_t op;             /* protocolOp tag number */
	uint32_t left;
	uint32_t skip;          /* bytes to pass over: opaque, SASL wrapping */
	uint32_t sasl;          /* plain LDAP bytes left in the current SASL buffer */
	uint32_t trail;         /* bytes after them (a trailing checksum) */
	uint32_t msgid;
	int64_t t0;
	uint64_t len;
	uint8_t reqlen;
	char req[LDAP_REQ_MAX];
};

struct ldap_state {
	struct ldap_dir d[2];
	struct dec_match m;
};

static const char *const opnames[26] = {
	"bindRequest", "bindResponse", "unbindRequest", "searchRequest", "searchResEntry",
	"searchResDone", "modifyRequest", "modifyResponse", "addRequest", "addResponse",
	"delRequest", "delResponse", "modDNRequest", "modDNResponse", "compareRequest",
	"compareResponse", "abandonRequest", NULL, NULL, "searchResRef", NULL, NULL, NULL,
	"extendedReq", "extendedResp", "intermediateResponse"};

static int is_request(unsigned op)
{
	return op == 0 || op == 2 || op == 3 || op == 6 || op == 8 || op == 10 || op == 12 ||
	       op == 14 || op == 16 || op == 23;
}

static int is_final(unsigned op)
{
	return op == 1 || op == 5 || op == 7 || op == 9 || op == 11 || op == 13 || op == 15 ||
	       op == 24;
}

/* A BER length (definite form, at most 4 bytes): the value, or sets err. */
static uint32_t ber_len(struct bb_rd *r)
{
	uint8_t b = bb_rd_u8(r);
	if (b < 0x80)
		return b;
	unsigned n = b & 0x7f;
	if (n == 0 || n > 4) {
		bb_rd_fail(r);
		return 0;
	}
	uint32_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v = v << 8 | bb_rd_u8(r);
	return v;
}

/* One tag-length-value header: the tag, *len its length; the reader stays at
 * the value. Multi-byte tags are refused. */
static unsigned ber_tl(struct bb_rd *r, uint32_t *len)
{
	unsigned t = bb_rd_u8(r);
	if ((t & 0x1f) == 0x1f)
		bb_rd_fail(r);
	*len = ber_len(r);
	return t;
}

/* Total bytes of the LDAPMessage at p (tag 0x30, its length), 0 when more
 * bytes are needed to know, -1 when it is not one. */
static long msg_total(const uint8_t *p, size_t n)
{
	struct bb_rd r = bb_rd_make(p, n < 6 ? n : 6);
	if (n < 2)
		return 0;
	if (bb_rd_u8(&r) != 0x30)
		return -1;
	uint8_t b = bb_rd_u8(&r);
	if (b >= 0x80 && ((b & 0x7f) == 0 || (b & 0x7f) > 4))
		return -1;
	size_t hl = 2 + (b >= 0x80 ? (size_t)(b & 0x7f) : 0);
	if (n < hl)
		return 0;
	r = bb_rd_make(p + 1, n - 1);
	uint32_t len = ber_len(&r);
	if (!bb_rd_ok(&r) || len < 5 || len > LDAP_MAX_MSG - hl)
		return -1;
	return (long)(hl + len);
}

/* Appends at most cap-1-*n printable bytes of s to buf. */
static void put_text(char *buf, size_t cap, size_t *n, const uint8_t *s, size_t len)
{
	for (size_t i = 0; i < len && *n + 1 < cap; i++) {
		struct bb_rd c = bb_rd_make(s + i, 1);
		uint8_t ch = bb_rd_u8(&c);
		buf[(*n)++] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
	}
}

static void put_str(char *buf, size_t cap, size_t *n, const char *s)
{
	put_text(buf, cap, n, (const uint8_t *)s, strlen(s));
}

static const struct {
	const char *oid, *name;
} ext_names[] = {
	{"1.3.6.1.4.1.1466.20037", "StartTLS"},
	{"1.3.6.1.4.1.4203.1.11.3", "WhoAmI"},
	{"1.3.6.1.4.1.4203.1.11.1", "PasswdModify"},
	{"1.3.6.1.1.8", "Cancel"},
	{"1.3.6.1.4.1.1466.20036", "NoticeOfDisconnection"},
};

/* Parses the head of an LDAPMessage (the whole message or its first bytes)
 * into d: messageID, op, and req for a request. 0, or -1 when it is not a
 * plausible LDAPMessage. */
static int parse_msg(struct ldap_dir *d, struct bb_rd r)
{
	uint32_t len;
	if (ber_tl(&r, &len) != 0x30)
		return -1;
	if (ber_tl(&r, &len) != 0x02 || len < 1 || len > 4)
		return -1;
	uint32_t id = 0;
	for (uint32_t i = 0; i < len; i++)
		id = id << 8 | bb_rd_u8(&r);
	if (len == 4 && id > 0x7fffffffu)
		return -1;
	unsigned tag = ber_tl(&r, &len);
	unsigned op = tag & 0x1f;
	if (!bb_rd_ok(&r) || (tag & 0xc0) != 0x40 || op > 25 || !opnames[op])
		return -1;
	d->msgid = id;
	d->op = (uint8_t)op;
	size_t n = 0;
	if (is_request(op)) {
		put_str(d->req, sizeof d->req, &n, opnames[op]);
		/* The value, bounded by what is there (the head may be cut). */
		struct bb_rd v = bb_rd_make(r.p, len < bb_rd_left(&r) ? len : bb_rd_left(&r));
		uint32_t l2;
		if (op == 3) { /* SearchRequest: baseObject LDAPDN first */
			if (ber_tl(&v, &l2) == 0x04 && bb_rd_ok(&v)) {
				size_t take = l2 < bb_rd_left(&v) ? l2 : bb_rd_left(&v);
				if (take > 0) {
					put_str(d->req, sizeof d->req, &n, " ");
					put_text(d->req, sizeof d->req, &n, bb_rd_bytes(&v, take), take);
				}
			}
		} else if (op == 0) { /* BindRequest: version, name, authentication */
			ber_tl(&v, &l2);
			bb_rd_skip(&v, l2);
			ber_tl(&v, &l2);
			bb_rd_skip(&v, l2);
			if (ber_tl(&v, &l2) == 0xa3 && ber_tl(&v, &l2) == 0x04 && bb_rd_ok(&v)) {
				size_t take = l2 < bb_rd_left(&v) ? l2 : bb_rd_left(&v);
				put_str(d->req, sizeof d->req, &n, " SASL/");
				put_text(d->req, sizeof d->req, &n, bb_rd_bytes(&v, take), take);
			}
		} else if (op == 23) { /* ExtendedRequest: [0] requestName */
			if (ber_tl(&v, &l2) == 0x80 && bb_rd_ok(&v)) {
				size_t take = l2 < bb_rd_left(&v) ? l2 : bb_rd_left(&v);
				const uint8_t *oid = bb_rd_bytes(&v, take);
				const char *name = NULL;
				for (size_t i = 0; oid && i < sizeof ext_names / sizeof ext_names[0]; i++)
					if (strlen(ext_names[i].oid) == take &&
					    memcmp(ext_names[i].oid, oid, take) == 0)
						name = ext_names[i].name;
				put_str(d->req, sizeof d->req, &n, " ");
				if (name)
					put_str(d->req, sizeof d->req, &n, name);
				else if (oid)
					put_text(d->req, sizeof d->req, &n, oid, take);
			}
		}
	}
	d->reqlen = (uint8_t)n;
	d->have = 1;
	return 0;
}

/* The head of an LDAPMessage at p (n bytes there, at most lim of them
 * belong to it): its total length, with d filled; 0 when more bytes are
 * needed, -1 when it is not one or does not fit in lim. */
static long ldap_frame(struct ldap_dir *d, const uint8_t *p, size_t n, size_t lim)
{
	long t = msg_total(p, n < lim ? n : lim);
	if (t < 0 || (t == 0 && n >= lim))
		return -1;
	if (t == 0)
		return 0;
	if ((size_t)t > lim)
		return -1;
	size_t need = (size_t)t < LDAP_HEAD ? (size_t)t : LDAP_HEAD;
	if (n < need)
		return 0;
	if (parse_msg(d, bb_rd_make(p, need)) < 0)
		return -1;
	return t;
}

/* A SASL buffer at p (length:32 + buffer): where its plain LDAP bytes are.
 * Known integrity-only wrappings: none (the LDAPMessage right away), NTLMSSP
 * (16-byte signature 01 00 00 00 ... first, [MS-NLMP] 3.4.4) and Kerberos
 * (RFC 4121 4.2.6.2 Wrap token 05 04 without the Sealed flag: 16-byte
 * header, the EC checksum bytes rotated RRC to the front, or trailing).
 * Returns the buffer's total length and sets *pre (bytes before the plain
 * text, the 4-byte length included) and *trail (checksum bytes after it), or
 * *pre = 0 when the buffer is sealed (opaque); 0 when more bytes are needed,
 * -1 when it is not plausible. */
static long sasl_frame(const uint8_t *p, size_t n, uint32_t *pre, uint32_t *trail)
{
	if (n < 4)
		return 0;
	struct bb_rd r = bb_rd_make(p, n);
	uint32_t blen = bb_rd_be32(&r);
	if (blen < 16 || blen > LDAP_MAX_MSG)
		return -1;
	size_t total = 4 + (size_t)blen;
	size_t need = total < 128 ? total : 128;
	if (n < need)
		return 0;
	*pre = 0;
	*trail = 0;
	struct bb_rd h = bb_rd_make(p + 4, need - 4);
	uint8_t b0 = bb_rd_u8(&h), b1 = bb_rd_u8(&h), flags = bb_rd_u8(&h), fill = bb_rd_u8(&h);
	uint16_t ec = bb_rd_be16(&h), rrc = bb_rd_be16(&h);
	uint32_t a = 0, z = 0;
	if (b0 == 0x30) {
		a = 4;
	} else if (b0 == 1 && b1 == 0 && flags == 0 && fill == 0) {
		a = 4 + 16;
	} else if (b0 == 5 && b1 == 4 && !(flags & 0x02) && fill == 0xff && bb_rd_ok(&h) &&
	           ec <= 64 && (rrc == ec || rrc == 0)) {
		a = 4 + 16 + (rrc ? ec : 0);
		z = rrc ? 0 : ec;
	}
	if (a && (size_t)a + z < total && a < need) {
		/* the plain text must start with an LDAPMessage */
		struct bb_rd m = bb_rd_make(p + a, need - a);
		if (bb_rd_u8(&m) == 0x30) {
			*pre = a;
			*trail = z;
		}
	}
	return (long)total;
}

/* 1 when the SASL buffer at p starts like a wrapping sasl_frame knows. */
static int wrap_start(const uint8_t *p, size_t n)
{
	struct bb_rd r = bb_rd_make(p, n);
	bb_rd_skip(&r, 4);
	uint8_t b0 = bb_rd_u8(&r), b1 = bb_rd_u8(&r);
	return bb_rd_ok(&r) && (b0 == 0x30 || (b0 == 1 && b1 == 0) || (b0 == 5 && b1 == 4));
}

/* A TLS record (after StartTLS): its total length, 0 or -1 as above. */
static long tls_frame(const uint8_t *p, size_t n)
{
	if (n < 5)
		return 0;
	struct bb_rd r = bb_rd_make(p, n);
	uint8_t type = bb_rd_u8(&r), major = bb_rd_u8(&r);
	bb_rd_skip(&r, 1);
	uint16_t rl = bb_rd_be16(&r);
	if (type < 0x14 || type > 0x17 || major != 3 || rl == 0 || rl > 18432)
		return -1;
	return 5 + (long)rl;
}

static void emit_msg(struct ldap_state *s, const struct bb_dec_ctx *ctx, int dir,
                     struct ldap_dir *d, int64_t t1)
{
	d->have = 0;
	char id[40];
	int il = snprintf(id, sizeof id, "c%llu.%u", (unsigned long long)ctx->conn, d->msgid);
	if (is_request(d->op)) {
		if (d->op != 2 && d->op != 16) /* unbind and abandon get no reply */
			dec_match_put(&s->m, ctx, d->msgid, d->op, 0, 0);
		dec_emit(ctx, BB_CALL, dir, d->t0, t1, d->len, id, (size_t)il, d->req, d->reqlen);
	} else if (is_final(d->op)) {
		uint32_t op = 0, b, c;
		const char *req = NULL;
		if (dec_match_take(&s->m, d->msgid, &op, &b, &c) && op < 26)
			req = opnames[op];
		else
			DEC_COUNT(ctx, unmatched_ret);
		dec_emit(ctx, BB_RET, dir, d->t0, t1, d->len, id, (size_t)il, req,
		         req ? strlen(req) : 0);
	}
	/* searchResEntry, searchResRef, intermediateResponse: partial, no record */
}

static void ldap_udp(struct ldap_state *s, const struct bb_dec_ctx *ctx, int dir,
                     const uint8_t *p, size_t n)
{
	/* CLDAP (RFC 1798 / MS-ADTS 6.3.3): one or more LDAPMessages per datagram. */
	struct bb_rd r = bb_rd_make(p, n);
	struct ldap_dir *d = &s->d[dir];
	int64_t t = dec_time(ctx, dir, 0);
	int any = 0;
	while (bb_rd_left(&r) > 0) {
		long tot = msg_total(r.p, bb_rd_left(&r));
		if (tot <= 0 || (size_t)tot > bb_rd_left(&r))
			break;
		struct bb_rd m = bb_rd_sub(&r, (size_t)tot);
		memset(d, 0, sizeof *d);
		if (parse_msg(d, m) < 0)
			break;
		d->t0 = t;
		d->len = (uint64_t)tot;
		emit_msg(s, ctx, dir, d, t);
		any = 1;
	}
	if (!any || bb_rd_left(&r) > 0)
		DEC_COUNT(ctx, malformed);
}

/* Not inside a message: what starts at r. 1 when something was started or
 * skipped, 0 when more bytes are needed. */
static int start(struct ldap_dir *d, const struct bb_dec_ctx *ctx, int dir, uint64_t pos,
                 struct bb_rd *r, size_t off)
{
	size_t left = bb_rd_left(r);
	struct bb_rd pk = *r;
	uint8_t b0 = bb_rd_u8(&pk);
	long t = -1;
	if (d->sasl) {
		/* inside a SASL buffer's plain text: LDAPMessages only */
		t = ldap_frame(d, r->p, left, d->sasl);
		if (t == 0)
			return 0;
		if (t < 0) {
			DEC_COUNT(ctx, malformed);
			d->skip = d->sasl + d->trail;
			d->sasl = 0;
			d->trail = 0;
			return 1;
		}
	} else if (b0 == 0x30) {
		t = ldap_frame(d, r->p, left, LDAP_MAX_MSG);
		/* hunting: a start whose first 16 bytes are no LDAPMessage head
		 * is not one (never wait for more on garbage) */
		if (t == 0 && d->hunting && left >= 16 &&
		    parse_msg(d, bb_rd_make(r->p, left)) < 0)
			t = -1;
	} else if (b0 == 0x00) {
		uint32_t pre = 0, trail = 0;
		t = sasl_frame(r->p, left, &pre, &trail);
		/* hunting: a SASL length is trusted only with LDAP inside */
		if (t > 0 && d->hunting && !pre)
			t = -1;
		if (t == 0 && d->hunting && left >= 9 && !wrap_start(r->p, left))
			t = -1;
		if (t > 0) {
			d->hunting = 0;
			if (pre) {
				d->skip = pre;
				d->sasl = (uint32_t)t - pre - trail;
				d->trail = trail;
			} else {
				DEC_COUNT(ctx, opaque);
				d->skip = (uint32_t)t;
			}
			return 1;
		}
	} else {
		t = tls_frame(r->p, left);
		if (t > 0) {
			d->hunting = 0;
			DEC_COUNT(ctx, opaque);
			d->skip = (uint32_t)t;
			return 1;
		}
	}
	if (t == 0)
		return 0;
	if (t < 0) {
		d->have = 0;
		if (!d->hunting) {
			DEC_COUNT(ctx, malformed);
			d->hunting = 1;
		}
		bb_rd_skip(r, 1);
		DEC_COUNT(ctx, skipped_bytes);
		return 1;
	}
	d->hunting = 0;
	d->in_msg = 1;
	d->left = (uint32_t)t;
	d->len = (uint64_t)t;
	d->t0 = dec_time(ctx, dir, pos + off);
	return 1;
}

static size_t ldap_decode(void *st, const struct bb_dec_ctx *ctx, int dir, uint64_t pos,
                          const uint8_t *p, size_t n)
{
	struct ldap_state *s = st;
	if (dir < 0 || dir > 1)
		return n;
	if (ctx->transport == BB_TR_UDP) {
		ldap_udp(s, ctx, dir, p, n);
		return n;
	}
	struct ldap_dir *d = &s->d[dir];
	struct bb_rd r = bb_rd_make(p, n);
	for (;;) {
		size_t off = (size_t)(r.p - p);
		size_t left = bb_rd_left(&r);
		if (d->skip) {
			size_t take = d->skip < left ? d->skip : left;
			bb_rd_skip(&r, take);
			d->skip -= (uint32_t)take;
			if (d->skip)
				break;
			continue;
		}
		if (d->in_msg) {
			size_t take = d->left < left ? d->left : left;
			bb_rd_skip(&r, take);
			d->left -= (uint32_t)take;
			if (d->sasl)
				d->sasl -= (uint32_t)take;
			if (d->left > 0)
				break;
			d->in_msg = 0;
			if (d->have)
				emit_msg(s, ctx, dir, d, dec_time(ctx, dir, pos + off + take - 1));
			if (d->sasl == 0 && d->trail) {
				d->skip = d->trail;
				d->trail = 0;
			}
			continue;
		}
		if (left == 0 || !start(d, ctx, dir, pos, &r, off))
			break;
	}
	return (size_t)(r.p - p);
}

static void ldap_gap(void *st, const struct bb_dec_ctx *ctx, int dir, uint64_t lost)
{
	struct ldap_state *s = st;
	if (dir < 0 || dir > 1)
		return;
	struct ldap_dir *d = &s->d[dir];
	DEC_COUNT(ctx, resync);
	if (lost && d->skip && lost < d->skip) {
		d->skip -= (uint32_t)lost;
		return;
	}
	if (lost && !d->skip && d->in_msg && lost < d->left) {
		/* The hole is inside the current message: skip it and go on. */
		d->left -= (uint32_t)lost;
		if (d->sasl)
			d->sasl -= (uint32_t)lost;
		return;
	}
	/* A message whose head was seen did happen: report it, ending at the gap. */
	if (d->in_msg && d->have)
		emit_msg(s, ctx, dir, d, d->t0);
	memset(d, 0, sizeof *d);
	d->hunting = 1;
}

static int ldap_probe(const uint8_t *p, size_t n, unsigned transport, int dir)
{
	(void)transport;
	(void)dir;
	struct ldap_dir d;
	memset(&d, 0, sizeof d);
	if (msg_total(p, n) <= 0)
		return 0;
	if (parse_msg(&d, bb_rd_make(p, n < LDAP_HEAD ? n : LDAP_HEAD)) < 0)
		return 0;
	return is_request(d.op) && d.op != 16 && d.op != 2;
}

const struct bb_decoder bb_dec_ldap = {
	.name = "ldap",
	.summary = "LDAPv3 over TCP and CLDAP over UDP (RFC 4511); messageID, operation, search base",
	.transports = BB_TR_TCP | BB_TR_UDP,
	.ports = {389, 3268, 0},
	.probe = ldap_probe,
	.state_size = sizeof(struct ldap_state),
	.decode = ldap_decode,
	.gap = ldap_gap,
	.end = NULL,
	.free = NULL,
};

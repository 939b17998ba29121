/* dec_dns.c - DNS queries and responses over UDP and TCP */
/* SPDX-License-Identifier: MIT */
/*
 * RFC 1035 section 4.1 (message), 4.1.4 (compression), 4.2.2 (TCP length prefix).
 *
 *   [len:16 (TCP only)] id:16 flags:16 (QR = bit 15) qdcount:16 ancount:16
 *   nscount:16 arcount:16, then the question: name (labels, pointers) qtype:16 qclass:16
 *
 * QR 0 = CALL, 1 = RET; id = "<querier addr:port>#<dns id>"; req = "name TYPE".
 * A message whose 12-byte header is complete is emitted even if its question
 * is malformed (counted); only a short header is dropped.
 */
#include <stddef.h>

#include "decoders/dec_int.h"
#include "decoders/dec_tok_int.h"

struct dns_dir {
	int hunting;            /* after a gap: look for a plausible length prefix */
};

struct dns_state {
	struct dns_dir d[2];
	struct dec_match m;
};

static const char *type_name(unsigned t)
{
	switch (t) {
	case 1: return "A";
	case 2: return "NS";
	case 5: return "CNAME";
	case 6: return "SOA";
	case 10: return "NULL";
	case 12: return "PTR";
	case 13: return "HINFO";
	case 15: return "MX";
	case 16: return "TXT";
	case 28: return "AAAA";
	case 33: return "SRV";
	case 35: return "NAPTR";
	case 41: return "OPT";
	case 43: return "DS";
	case 46: return "RRSIG";
	case 48: return "DNSKEY";
	case 64: return "SVCB";
	case 65: return "HTTPS";
	case 252: return "AXFR";
	case 255: return "ANY";
	default: return NULL;
	}
}

/* Reads a domain name at r (which moves past it) inside message msg, following
 * at most 16 compression pointers. Writes it dotted into out (truncated to cap-1).
 * Returns the length written, or -1 when malformed. */
static int read_name(const struct bb_rd *msg, struct bb_rd *r, char *out, size_t cap)
{
	size_t o = 0;
	int jumps = 0;
	struct bb_rd cur = *r;
	struct bb_rd *at = r;
	for (;;) {
		uint8_t l = bb_rd_u8(at);
		if (!bb_rd_ok(at))
			return -1;
		if (l == 0)
			break;
		if ((l & 0xc0) == 0xc0) {
			uint8_t lo = bb_rd_u8(at);
			if (!bb_rd_ok(at) || ++jumps > 16)
				return -1;
			size_t off = (size_t)(l & 0x3f) << 8 | lo;
			cur = *msg;
			bb_rd_skip(&cur, off);
			if (!bb_rd_ok(&cur))
				return -1;
			at = &cur;
			continue;
		}
		if (l & 0xc0)
			return -1;
		const uint8_t *lab = bb_rd_bytes(at, l);
		if (!lab)
			return -1;
		if (o && o + 1 < cap)
			out[o++] = '.';
		size_t k = o + 1 < cap ? cap - 1 - o : 0;
		if (k > l)
			k = l;
		memcpy(out + o, lab, k);
		o += k;
	}
	if (o == 0 && cap > 1)
		out[o++] = '.';
	out[o < cap ? o : cap - 1] = '\0';
	return (int)o;
}

/* Decodes one DNS message (msg covers exactly it) sent in direction dir. */
static void dns_message(struct dns_state *s, const struct bb_dec_ctx *ctx, int dir,
                        struct bb_rd msg, int64_t t0, int64_t t1, uint64_t len)
{
	struct bb_rd r = msg;
	uint16_t id = bb_rd_be16(&r);
	uint16_t flags = bb_rd_be16(&r);
	uint16_t qd = bb_rd_be16(&r);
	bb_rd_skip(&r, 6);
	if (!bb_rd_ok(&r)) {
		DEC_COUNT(ctx, malformed);
		return;
	}
	int resp = flags >> 15;
	char req[300];
	int reqlen = 0;
	struct bb_dec_toks toks;
	dec_tok_reset(&toks);
	if (qd >= 1) {
		char name[256];
		int nl = read_name(&msg, &r, name, sizeof name);
		uint16_t qtype = bb_rd_be16(&r);
		if (nl < 0 || !bb_rd_ok(&r)) {
			DEC_COUNT(ctx, malformed);
		} else {
			if (!resp)
				dec_tok_name(&toks, ctx, (const uint8_t *)name, (size_t)nl);
			const char *tn = type_name(qtype);
			reqlen = tn ? snprintf(req, sizeof req, "%s %s", name, tn)
			            : snprintf(req, sizeof req, "%s TYPE%u", name, qtype);
			if (reqlen >= (int)sizeof req)
				reqlen = (int)sizeof req - 1;
		}
	}
	/* The querier is the sender of a query and the receiver of a response. */
	int querier_is_client = resp ? dir == BB_DIR_S2C : dir == BB_DIR_C2S;
	const char *querier = querier_is_client ? ctx->client : ctx->server;
	char ids[96];
	int il = snprintf(ids, sizeof ids, "%s#%u", querier ? querier : "-", id);
	if (il >= (int)sizeof ids)
		il = (int)sizeof ids - 1;
	uint64_t key = (uint64_t)querier_is_client << 16 | id;
	if (!resp) {
		dec_match_put(&s->m, ctx, key, 0, 0, 0);
	} else {
		uint32_t a, b, c;
		if (!dec_match_take(&s->m, key, &a, &b, &c))
			DEC_COUNT(ctx, unmatched_ret);
	}
	dec_emit_toks(ctx, resp ? BB_RET : BB_CALL, dir, t0, t1, len, ids, (size_t)il,
	              reqlen > 0 ? req : NULL, (size_t)reqlen, &toks);
}

/* A TCP length prefix followed by a plausible header (after a gap). */
static int plausible(const uint8_t *p, size_t n)
{
	struct bb_rd r = bb_rd_make(p, n);
	uint16_t len = bb_rd_be16(&r);
	bb_rd_skip(&r, 2);
	uint16_t flags = bb_rd_be16(&r);
	uint16_t qd = bb_rd_be16(&r);
	uint16_t an = bb_rd_be16(&r);
	return bb_rd_ok(&r) && len >= 17 && qd == 1 && ((flags >> 11) & 0xf) <= 5 && an < 256;
}

static size_t dns_decode(void *st, const struct bb_dec_ctx *ctx, int dir, uint64_t pos,
                         const uint8_t *p, size_t n)
{
	struct dns_state *s = st;
	if (dir < 0 || dir > 1)
		return n;
	if (ctx->transport == BB_TR_UDP) {
		int64_t t = dec_time(ctx, dir, 0);
		dns_message(s, ctx, dir, bb_rd_make(p, n), t, t, n);
		return n;
	}
	struct bb_rd r = bb_rd_make(p, n);
	while (bb_rd_left(&r) >= 2) {
		size_t off = (size_t)(r.p - p);
		if (s->d[dir].hunting) {
			if (bb_rd_left(&r) < 10)
				break;
			if (!plausible(r.p, bb_rd_left(&r))) {
				bb_rd_skip(&r, 1);
				DEC_COUNT(ctx, skipped_bytes);
				continue;
			}
			s->d[dir].hunting = 0;
		}
		struct bb_rd peek = r;
		uint16_t len = bb_rd_be16(&peek);
		if (bb_rd_left(&peek) < len)
			break; /* wait for the whole message */
		struct bb_rd msg = bb_rd_sub(&peek, len);
		int64_t t0 = dec_time(ctx, dir, pos + off);
		int64_t t1 = dec_time(ctx, dir, pos + off + 2 + len - 1);
		if (len < 12) {
			DEC_COUNT(ctx, malformed);
		} else {
			dns_message(s, ctx, dir, msg, t0, t1, (uint64_t)len + 2);
		}
		r = peek;
	}
	return (size_t)(r.p - p);
}

static void dns_gap(void *st, const struct bb_dec_ctx *ctx, int dir, uint64_t lost)
{
	(void)lost;
	struct dns_state *s = st;
	if (dir >= 0 && dir <= 1 && ctx->transport == BB_TR_TCP)
		s->d[dir].hunting = 1;
	DEC_COUNT(ctx, resync);
}

/* A query on any port: one question that parses, no answers, class IN/CH/HS/ANY. */
static int dns_probe(const uint8_t *p, size_t n, unsigned transport, int dir)
{
	(void)dir;
	struct bb_rd r = bb_rd_make(p, n);
	if (transport == BB_TR_TCP) {
		uint16_t len = bb_rd_be16(&r);
		if (!bb_rd_ok(&r) || len + 2u != n)
			return 0;
	}
	struct bb_rd msg = r;
	bb_rd_skip(&r, 2);
	uint16_t flags = bb_rd_be16(&r);
	uint16_t qd = bb_rd_be16(&r);
	uint16_t an = bb_rd_be16(&r);
	uint16_t ns = bb_rd_be16(&r);
	uint16_t ar = bb_rd_be16(&r);
	if (!bb_rd_ok(&r) || (flags & 0x8000) || ((flags >> 11) & 0xf) != 0 || qd != 1 || an ||
	    ns || ar > 1)
		return 0;
	char name[256];
	if (read_name(&msg, &r, name, sizeof name) < 0)
		return 0;
	uint16_t qtype = bb_rd_be16(&r);
	uint16_t qclass = bb_rd_be16(&r);
	return bb_rd_ok(&r) && qtype != 0 && (qclass == 1 || qclass == 3 || qclass == 4 || qclass == 255);
}

const struct bb_decoder bb_dec_dns = {
	.name = "dns",
	.summary = "DNS over UDP and TCP (RFC 1035); id = querier and DNS id; req = name and type",
	.transports = BB_TR_TCP | BB_TR_UDP,
	.ports = {53, 5353, 5355, 0},
	.probe = dns_probe,
	.state_size = sizeof(struct dns_state),
	.decode = dns_decode,
	.gap = dns_gap,
	.end = NULL,
	.free = NULL,
};

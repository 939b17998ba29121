/* cap_ip.c - IPv6: extension headers walked; for libnids, rewritten as IPv4 with addresses mapped into 240/4 */
/* SPDX-License-Identifier: MIT */
/*
 * An IPv6 packet is walked to its TCP or UDP payload (cap_ip6_l4), which the
 * own engine takes in place with its 16-byte addresses. RFC 8200 section 4:
 * extension headers hop-by-hop (0), routing (43), destination options (60),
 * AH (51, length in 4-byte units), fragment (44: reassembled by cap_frag.c,
 * then walked again), no next header (59).
 *
 * libnids knows only IPv4 (notes/libnids.md 4). For it an IPv6 TCP or UDP
 * packet is rewritten as an IPv4 packet with the same payload whose
 * addresses are 240.0.0.0/4 indices into a table of IPv6 addresses
 * (cap_ip6_to4); cap_nids.c maps them back before they reach the flows.
 *
 *   IPv6: vtf:32 plen:16 next:8 hlim:8 src:128 dst:128
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "capture/cap_int.h"

#define V6_MAX (1u << 24)

struct cap_v6map {
	uint8_t last[2][16];        /* the two addresses of the last packet */
	uint32_t last4[2];
	uint8_t (*addr)[16];
	size_t n, cap;
	uint32_t *hash;             /* index + 1, open addressing */
	size_t hsize;
};

struct cap_v6map *cap_v6map_new(void)
{
	struct cap_v6map *m = bb_xcalloc(1, sizeof *m);
	return m;
}

void cap_v6map_free(struct cap_v6map *m)
{
	if (!m)
		return;
	free(m->addr);
	free(m->hash);
	free(m);
}

static size_t hash16(const uint8_t *a)
{
	uint64_t h = 1469598103934665603u;
	for (int i = 0; i < 16; i++)
		h = (h ^ a[i]) * 1099511628211u;
	return (size_t)h;
}

static void rehash(struct cap_v6map *m)
{
	size_t ns = m->hsize ? m->hsize * 2 : 1024;
	uint32_t *h = bb_xcalloc(ns, sizeof *h);
	for (size_t i = 0; i < m->n; i++) {
		size_t j = hash16(m->addr[i]) & (ns - 1);
		while (h[j])
			j = (j + 1) & (ns - 1);
		h[j] = (uint32_t)i + 1;
	}
	free(m->hash);
	m->hash = h;
	m->hsize = ns;
}

/* The mapped IPv4 address (network order) of a, added if new; 0 if full. */
static uint32_t map_slow(struct cap_v6map *m, const uint8_t *a);

static uint32_t map(struct cap_v6map *m, const uint8_t *a)
{
	/* Consecutive packets mostly belong to one conversation. */
	for (int i = 0; i < 2; i++)
		if (m->last4[i] && memcmp(m->last[i], a, 16) == 0)
			return m->last4[i];
	uint32_t v = map_slow(m, a);
	memcpy(m->last[1], m->last[0], 16);
	m->last4[1] = m->last4[0];
	memcpy(m->last[0], a, 16);
	m->last4[0] = v;
	return v;
}

static uint32_t map_slow(struct cap_v6map *m, const uint8_t *a)
{
	if (m->hsize == 0 || (m->n + 1) * 2 > m->hsize)
		rehash(m);
	size_t j = hash16(a) & (m->hsize - 1);
	while (m->hash[j]) {
		uint32_t i = m->hash[j] - 1;
		if (memcmp(m->addr[i], a, 16) == 0)
			return htonl(0xf0000000u | (i + 1));
		j = (j + 1) & (m->hsize - 1);
	}
	if (m->n >= V6_MAX)
		return 0;
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 256;
		m->addr = bb_xrealloc(m->addr, m->cap * 16);
	}
	memcpy(m->addr[m->n], a, 16);
	m->hash[j] = (uint32_t)(++m->n);
	return htonl(0xf0000000u | (uint32_t)m->n);
}

const uint8_t *cap_v6map_lookup(const struct cap_v6map *m, uint32_t a)
{
	uint32_t h = ntohl(a);
	if (!m || (h & 0xf0000000u) != 0xf0000000u)
		return NULL;
	uint32_t i = h & 0x0fffffffu;
	if (i == 0 || i > m->n)
		return NULL;
	return m->addr[i - 1];
}

uint16_t cap_ip_csum(const uint8_t *h, size_t hl)
{
	struct bb_rd r = bb_rd_make(h, hl);
	uint32_t sum = 0;
	while (bb_rd_left(&r) >= 2)
		sum += bb_rd_be16(&r);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* Walks an IPv6 packet to its TCP or UDP payload: 1 with *l set; 0 for a
 * packet to skip (counted; *bad when malformed). depth 1 for a datagram
 * rebuilt from fragments (which may not hold another fragment header). */
static int ip6_parse(struct bb_cap *c, const uint8_t *p, size_t n, struct cap_l4 *l, int *bad,
                     int depth)
{
	struct bb_cap_stats *st = &c->st;
	struct bb_rd r = bb_rd_make(p, n);
	*bad = 0;
	bb_rd_skip(&r, 4);
	uint16_t plen = bb_rd_be16(&r);
	uint8_t next = bb_rd_u8(&r);
	uint8_t hlim = bb_rd_u8(&r);
	const uint8_t *src = bb_rd_bytes(&r, 16);
	const uint8_t *dst = bb_rd_bytes(&r, 16);
	if (!bb_rd_ok(&r)) {
		*bad = 1;
		return 0;
	}
	/* The payload length bounds the packet (Ethernet pads short frames). */
	if (plen < bb_rd_left(&r))
		r.end = r.p + plen;
	for (int hops = 0; hops < 16; hops++) {
		if (next == 0 || next == 43 || next == 60 || next == 51) {
			uint8_t nn = bb_rd_u8(&r);
			uint8_t hl = bb_rd_u8(&r);
			size_t len = next == 51 ? ((size_t)hl + 2) * 4 : ((size_t)hl + 1) * 8;
			bb_rd_skip(&r, len - 2);
			next = nn;
			if (!bb_rd_ok(&r)) {
				*bad = 1;
				return 0;
			}
			continue;
		}
		if (next == 44) {
			/* Fragment: next:8 reserved:8 offset:13 res:2 M:1 id:32 */
			uint8_t nn = bb_rd_u8(&r);
			bb_rd_skip(&r, 1);
			uint16_t om = bb_rd_be16(&r);
			uint32_t id = bb_rd_be32(&r);
			if (!bb_rd_ok(&r)) {
				*bad = 1;
				return 0;
			}
			size_t off = om & 0xfff8u;
			int more = om & 1;
			if (off == 0 && !more) { /* atomic fragment (RFC 6946): the packet itself */
				next = nn;
				continue;
			}
			if (depth > 0) { /* a fragment inside a rebuilt datagram */
				*bad = 1;
				return 0;
			}
			struct cap_frag_key k;
			memset(&k, 0, sizeof k);
			k.fam = 6;
			k.id = id;
			memcpy(k.src, src, 16);
			memcpy(k.dst, dst, 16);
			uint8_t *whole, first;
			size_t len = bb_rd_left(&r);
			if (!cap_frag_add(c->frags, &k, c->pkt_ns, off, more, nn,
			                  bb_rd_bytes(&r, len), len, &whole, &len, &first, st))
				return 0;
			/* One IPv6 packet again: the first header with the length and
			 * next header of the datagram, then its data. */
			uint8_t *h = whole + CAP_FRAG_HEADROOM - 40;
			memcpy(h, p, 8);
			h[4] = (uint8_t)(len >> 8);
			h[5] = (uint8_t)len;
			h[6] = first;
			memcpy(h + 8, src, 16);
			memcpy(h + 24, dst, 16);
			return ip6_parse(c, h, 40 + len, l, bad, 1);
		}
		break;
	}
	if (next != 6 && next != 17) {
		st->ip_other++;
		return 0;
	}
	l->n = bb_rd_left(&r);
	l->p = bb_rd_bytes(&r, l->n);
	l->src = src;
	l->dst = dst;
	l->proto = next;
	l->hlim = hlim;
	return 1;
}

int cap_ip6_l4(struct bb_cap *c, const uint8_t *p, size_t n, struct cap_l4 *l, int *bad)
{
	return ip6_parse(c, p, n, l, bad, 0);
}

size_t cap_ip6_to4(struct bb_cap *c, struct cap_v6map *m, const uint8_t *p, size_t n,
                   uint8_t *out, int *bad)
{
	struct cap_l4 l;
	if (!ip6_parse(c, p, n, &l, bad, 0))
		return 0;
	uint32_t s4 = map(m, l.src), d4 = map(m, l.dst);
	if (!s4 || !d4) { /* the table is full */
		c->st.ip_other++;
		return 0;
	}
	size_t pl = l.n;
	if (l.proto == 17 && pl + 20 > 65535) { /* a UDP datagram IPv4 cannot carry */
		*bad = 1;
		return 0;
	}
	out[0] = 0x45;
	out[1] = 0;
	/* A loopback IPv6 segment can exceed what IPv4 can say (65535): the
	 * caller splits those (cap_ip4_split); the length field is then set. */
	out[2] = (uint8_t)((pl + 20 > 65535 ? 65535 : pl + 20) >> 8);
	out[3] = (uint8_t)(pl + 20 > 65535 ? 65535 : pl + 20);
	out[4] = out[5] = 0;
	out[6] = 0x40; /* DF, no fragments */
	out[7] = 0;
	out[8] = l.hlim;
	out[9] = l.proto;
	out[10] = out[11] = 0;
	memcpy(out + 12, &s4, 4);
	memcpy(out + 16, &d4, 4);
	uint16_t cs = cap_ip_csum(out, 20);
	out[10] = (uint8_t)(cs >> 8);
	out[11] = (uint8_t)cs;
	memcpy(out + 20, l.p, pl);
	return pl + 20;
}

int cap_ip4_split(const uint8_t *p, size_t n, uint8_t *a, size_t *na, uint8_t *b, size_t *nb)
{
	struct bb_rd r = bb_rd_make(p, n);
	bb_rd_skip(&r, 9);
	uint8_t proto = bb_rd_u8(&r);
	bb_rd_skip(&r, 10);
	bb_rd_skip(&r, 4);
	uint32_t seq = bb_rd_be32(&r);
	bb_rd_skip(&r, 4);
	uint8_t off = bb_rd_u8(&r);
	size_t thl = (size_t)(off >> 4) * 4;
	if (!bb_rd_ok(&r) || proto != 6 || thl < 20 || 20 + thl >= n)
		return -1;
	size_t hl = 20 + thl, data = n - hl, half = data / 2;
	memcpy(a, p, hl);
	memcpy(a + hl, p + hl, half);
	memcpy(b, p, hl);
	memcpy(b + hl, p + hl + half, data - half);
	*na = hl + half;
	*nb = hl + data - half;
	a[20 + 13] &= (uint8_t)~0x09; /* FIN and PSH belong to the second half */
	uint32_t s2 = seq + (uint32_t)half;
	b[24] = (uint8_t)(s2 >> 24);
	b[25] = (uint8_t)(s2 >> 16);
	b[26] = (uint8_t)(s2 >> 8);
	b[27] = (uint8_t)s2;
	uint8_t *hs[2] = {a, b};
	size_t ls[2] = {*na, *nb};
	for (int i = 0; i < 2; i++) {
		hs[i][2] = (uint8_t)(ls[i] >> 8);
		hs[i][3] = (uint8_t)ls[i];
		hs[i][10] = hs[i][11] = 0;
		uint16_t cs = cap_ip_csum(hs[i], 20);
		hs[i][10] = (uint8_t)(cs >> 8);
		hs[i][11] = (uint8_t)cs;
	}
	return 0;
}

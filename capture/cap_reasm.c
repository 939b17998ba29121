/* cap_reasm.c - bbcap's own TCP reassembly (the default engine) and UDP, for IPv4 and IPv6 */
/* SPDX-License-Identifier: MIT */
/*
 * The same job as cap_nids.c (which keeps libnids available with
 * --reassembly=libnids), without libnids' per-segment copies and lookups:
 *  - IPv6 packets are taken in place, with their 16-byte addresses (IPv4
 *    ones mapped into IPv6, struct cap_addr);
 *  - streams in a hash table keyed by the unordered 4-tuple, so one lookup
 *    finds either direction; a least-recently-active list evicts the oldest
 *    when 3/4 of opts.max_streams are open (libnids' rule) and streams silent
 *    for CAP_REASM_IDLE_NS (counted as tcp_evicted either way);
 *  - a handshake seen opens the stream at the client's ACK of the SYN/ACK; a
 *    payload segment of an unknown connection picks it up mid-stream (the
 *    server is the port a decoder claims, else the lower port);
 *  - in-order payload goes straight from the packet to the decoder when no
 *    bytes are waiting (no copy); only what the decoder leaves is copied into
 *    the direction's buffer;
 *  - retransmissions and overlaps are trimmed to the bytes not yet delivered;
 *    a segment beyond the next expected byte is held (CAP_HOLD_MAX per
 *    direction) until the hole fills (tcp_reordered) or outlives
 *    opts.hole_ns of packet time or the queue is full: then the hole is a gap,
 *    counted and signalled to the decoder, and the held bytes follow;
 *  - memory: CAP_REASM_BUF_MAX per direction, CAP_REASM_MEM_MAX in all
 *    (buffers and held segments); beyond, bytes are given up as a gap
 *    (tcp_overflow) and holes are skipped at once;
 *  - FIN in both directions or RST closes the stream; checksums and windows
 *    are not checked (offload; a passive observer must not drop what the
 *    receiver may take).
 *
 *   IPv4: vhl:8 tos:8 len:16 id:16 frag:16 ttl:8 proto:8 sum:16 src:32 dst:32
 *   TCP:  sport:16 dport:16 seq:32 ack:32 off:4 res:4 flags:8 win:16 sum:16 urg:16
 *   UDP:  sport:16 dport:16 len:16 sum:16
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "capture/cap_int.h"

#define CAP_REASM_IDLE_NS (3600 * BB_NS_PER_S)
#define CAP_REASM_BUF_MAX (4u << 20)    /* bytes a decoder may leave in one direction */
#define CAP_REASM_MEM_MAX ((size_t)1 << 30) /* buffers and held bytes of all streams */

#define F_FIN 0x01
#define F_SYN 0x02
#define F_RST 0x04
#define F_ACK 0x10

enum { ST_SYN_SENT, ST_SYN_RCVD, ST_EST };

struct rheld {
	int64_t ts_ns;
	uint32_t seq;
	uint32_t len;
	int fin;
	uint8_t *data;
};

struct rhalf {
	uint32_t next;              /* sequence number of the next byte expected */
	int fin;                    /* FIN reached in order */
	uint8_t *buf;               /* bytes the decoder left: buf[off .. off+len) */
	size_t off, len, cap;
	struct rheld *q;            /* held segments (CAP_HOLD_MAX), allocated when needed */
	int nq;
	int64_t hole_ns;            /* time of the oldest held segment */
};

struct rstream {
	struct rstream *next;       /* hash chain */
	struct rstream *lru_prev, *lru_next;    /* most recently active first */
	struct rstream *hold_prev, *hold_next;  /* streams holding segments */
	int holding;
	struct cap_addr ca, sa;     /* client, server */
	uint16_t cp, sp;            /* host order */
	int state;
	int64_t last_ns;
	struct cap_conn *k;         /* once established */
	struct rhalf h[2];          /* by sender: BB_DIR_C2S, BB_DIR_S2C */
};

struct cap_reasm {
	size_t bytes;               /* direction buffers and held segments, all streams */
	struct rstream **hash;
	size_t hsize;
	size_t n, max;
	struct rstream *lru_head, *lru_tail;
	struct rstream *hold_head;
};

static inline struct cap_reasm *R(const struct bb_cap *c)
{
	return c->eng_state;
}

static int reasm_new(struct bb_cap *c, struct bb_err *err)
{
	(void)err;
	struct cap_reasm *r = bb_xcalloc(1, sizeof *r);
	unsigned ms = c->o.max_streams ? c->o.max_streams : BB_CAP_STREAMS;
	r->max = ms / 4 * 3 > 0 ? ms / 4 * 3 : 1;
	r->hsize = 1024;
	while (r->hsize < ms && r->hsize < (1u << 22))
		r->hsize *= 2;
	r->hash = bb_xcalloc(r->hsize, sizeof *r->hash);
	c->eng_state = r;
	return 0;
}

static size_t slot(const struct cap_reasm *r, const struct cap_addr *a, uint16_t ap,
                   const struct cap_addr *b, uint16_t bp)
{
	/* Symmetric in the two endpoints: one lookup serves both directions. */
	uint64_t x = ((uint64_t)cap_addr_fold(a) << 16 | ap) * 0x9e3779b97f4a7c15u;
	uint64_t y = ((uint64_t)cap_addr_fold(b) << 16 | bp) * 0x9e3779b97f4a7c15u;
	uint64_t h = (x ^ y) + (x & y) * 0xc2b2ae3d27d4eb4fu;
	h ^= h >> 31;
	return (size_t)(h * 0x165667b19e3779f9u >> 20) & (r->hsize - 1);
}

static void lru_unlink(struct cap_reasm *r, struct rstream *s)
{
	if (s->lru_prev)
		s->lru_prev->lru_next = s->lru_next;
	else
		r->lru_head = s->lru_next;
	if (s->lru_next)
		s->lru_next->lru_prev = s->lru_prev;
	else
		r->lru_tail = s->lru_prev;
	s->lru_prev = s->lru_next = NULL;
}

static void lru_front(struct cap_reasm *r, struct rstream *s)
{
	s->lru_next = r->lru_head;
	s->lru_prev = NULL;
	if (r->lru_head)
		r->lru_head->lru_prev = s;
	r->lru_head = s;
	if (!r->lru_tail)
		r->lru_tail = s;
}

static void hold_link(struct cap_reasm *r, struct rstream *s)
{
	if (s->holding)
		return;
	s->holding = 1;
	s->hold_prev = NULL;
	s->hold_next = r->hold_head;
	if (r->hold_head)
		r->hold_head->hold_prev = s;
	r->hold_head = s;
}

static void hold_unlink(struct cap_reasm *r, struct rstream *s)
{
	if (!s->holding || s->h[0].nq || s->h[1].nq)
		return;
	if (s->hold_prev)
		s->hold_prev->hold_next = s->hold_next;
	else
		r->hold_head = s->hold_next;
	if (s->hold_next)
		s->hold_next->hold_prev = s->hold_prev;
	s->hold_prev = s->hold_next = NULL;
	s->holding = 0;
}

static void skip_hole(struct bb_cap *c, struct rstream *s, int dir);

/* Removes s from every list and frees it; its conn is ended (decoder end). */
static void stream_free(struct bb_cap *c, struct rstream *s)
{
	struct cap_reasm *r = R(c);
	/* What was captured beyond a hole is delivered before the end. */
	for (int d = 0; d < 2 && s->k; d++)
		skip_hole(c, s, d);
	struct rstream **pp = &r->hash[slot(r, &s->ca, s->cp, &s->sa, s->sp)];
	while (*pp && *pp != s)
		pp = &(*pp)->next;
	if (*pp)
		*pp = s->next;
	lru_unlink(r, s);
	for (int d = 0; d < 2; d++) {
		struct rhalf *h = &s->h[d];
		for (int i = 0; i < h->nq; i++) {
			r->bytes -= h->q[i].len;
			free(h->q[i].data);
		}
		h->nq = 0;
	}
	hold_unlink(r, s);
	for (int d = 0; d < 2; d++) {
		r->bytes -= s->h[d].cap;
		free(s->h[d].q);
		free(s->h[d].buf);
	}
	if (s->k)
		cap_tcp_close(s->k);
	r->n--;
	free(s);
}

static struct rstream *stream_new(struct bb_cap *c, const struct cap_addr *ca, uint16_t cp,
                                  const struct cap_addr *sa, uint16_t sp)
{
	struct cap_reasm *r = R(c);
	while (r->n >= r->max && r->lru_tail) {
		c->st.tcp_evicted++;
		stream_free(c, r->lru_tail);
	}
	struct rstream *s = bb_xcalloc(1, sizeof *s);
	s->ca = *ca;
	s->cp = cp;
	s->sa = *sa;
	s->sp = sp;
	s->last_ns = c->now_ns;
	size_t h = slot(r, ca, cp, sa, sp);
	s->next = r->hash[h];
	r->hash[h] = s;
	lru_front(r, s);
	r->n++;
	return s;
}

/* The stream of a segment and the sender's direction, or NULL. */
static struct rstream *lookup(struct cap_reasm *r, const struct cap_addr *a, uint16_t ap,
                              const struct cap_addr *b, uint16_t bp, int *dir)
{
	for (struct rstream *s = r->hash[slot(r, a, ap, b, bp)]; s; s = s->next) {
		if (s->cp == ap && s->sp == bp && cap_addr_eq(&s->ca, a) && cap_addr_eq(&s->sa, b)) {
			*dir = BB_DIR_C2S;
			return s;
		}
		if (s->cp == bp && s->sp == ap && cap_addr_eq(&s->ca, b) && cap_addr_eq(&s->sa, a)) {
			*dir = BB_DIR_S2C;
			return s;
		}
	}
	return NULL;
}

static void establish(struct bb_cap *c, struct rstream *s, int midstream)
{
	s->state = ST_EST;
	s->k = cap_tcp_open(c, &s->ca, s->cp, &s->sa, s->sp, midstream);
}

/* Hands n new bytes of direction dir to the decoder. */
static void push(struct bb_cap *c, struct rstream *s, int dir, const uint8_t *p, size_t n)
{
	struct rhalf *h = &s->h[dir];
	struct cap_conn *k = s->k;
	size_t used;
	if (n == 0)
		return;
	if (h->len == 0) {
		/* The fast path: nothing waiting, the packet's bytes go as they are. */
		used = cap_tcp_data(k, dir, p, n, n);
		p += used;
		n -= used;
		if (n == 0)
			return;
		h->off = 0;
	} else {
		if (h->off + h->len + n > h->cap) {
			if (h->off) {
				memmove(h->buf, h->buf + h->off, h->len);
				h->off = 0;
			}
			if (h->len + n > h->cap) {
				size_t nc = h->cap ? h->cap : 4096;
				while (nc < h->len + n)
					nc *= 2;
				h->buf = bb_xrealloc(h->buf, nc);
				R(c)->bytes += nc - h->cap;
				h->cap = nc;
			}
		}
		memcpy(h->buf + h->off + h->len, p, n);
		h->len += n;
		used = cap_tcp_data(k, dir, h->buf + h->off, h->len, n);
		h->off += used;
		h->len -= used;
		if (h->len == 0) {
			h->off = 0;
			if (h->cap > 65536) { /* a long message is over: give its room back */
				R(c)->bytes -= h->cap;
				free(h->buf);
				h->buf = NULL;
				h->cap = 0;
			}
			return;
		}
		p = NULL;
		n = 0;
	}
	if (p) {
		/* Keep what the decoder left. */
		if (n > h->cap) {
			size_t nc = h->cap ? h->cap : 4096;
			while (nc < n)
				nc *= 2;
			free(h->buf);
			h->buf = bb_xmalloc(nc);
			R(c)->bytes += nc - h->cap;
			h->cap = nc;
		}
		memcpy(h->buf, p, n);
		h->off = 0;
		h->len = n;
	}
	if (h->len > CAP_REASM_BUF_MAX || R(c)->bytes > CAP_REASM_MEM_MAX) {
		/* A decoder that holds megabytes waits for something that will not
		 * come, or all streams together hold too much: give up on those
		 * bytes. */
		c->st.tcp_overflow++;
		cap_tcp_gap(k, dir, 0, 0);
		h->off = h->len = 0;
		R(c)->bytes -= h->cap;
		free(h->buf);
		h->buf = NULL;
		h->cap = 0;
	}
}

/* An in-order or old segment (seq <= next): trims what was delivered
 * already, hands on the rest, notes the FIN. */
static void take(struct bb_cap *c, struct rstream *s, int dir, uint32_t seq, const uint8_t *p,
                 size_t n, int fin)
{
	struct rhalf *h = &s->h[dir];
	uint32_t end = seq + (uint32_t)n; /* the sequence number of a FIN */
	uint32_t skip = h->next - seq;
	if (skip < n) {
		h->next = end;
		push(c, s, dir, p + skip, n - skip);
	}
	if (fin && !h->fin && h->next == end) {
		h->fin = 1;
		h->next++;
	}
}

static int cmp_held(const void *a, const void *b)
{
	const struct rheld *x = a, *y = b;
	int32_t d = (int32_t)(x->seq - y->seq);
	return d < 0 ? -1 : d > 0;
}

/* Tells the watermark the time of the oldest segment s holds: its bytes,
 * delivered later, keep that time. */
static void held_note(struct rstream *s)
{
	if (!s->k)
		return;
	int64_t t = INT64_MAX;
	for (int d = 0; d < 2; d++)
		for (int i = 0; i < s->h[d].nq; i++)
			if (s->h[d].q[i].ts_ns < t)
				t = s->h[d].q[i].ts_ns;
	if (t != s->k->held_ns) {
		s->k->held_ns = t;
		cap_wm_update(s->k);
	}
}

/* Delivers held segments the stream has reached, in order; returns how many. */
static int drain(struct bb_cap *c, struct rstream *s, int dir, int64_t floor_ns)
{
	struct rhalf *h = &s->h[dir];
	int done = 0;
	if (h->nq == 0)
		return 0;
	qsort(h->q, (size_t)h->nq, sizeof h->q[0], cmp_held);
	int64_t save = c->pkt_ns;
	int i = 0;
	for (; i < h->nq; i++) {
		struct rheld *q = &h->q[i];
		if ((int32_t)(q->seq - h->next) > 0)
			break;
		/* held bytes keep the times of their own packets, but none before
		 * the bytes before them: a sender writes a stream in order, and a
		 * later segment captured first (a 13 KB GSO segment on a bridge
		 * came 2 us after the 32 bytes that followed it) would give a
		 * pipelined reply an earlier time than the replies before it */
		if (q->ts_ns > floor_ns)
			floor_ns = q->ts_ns;
		c->pkt_ns = floor_ns;
		take(c, s, dir, q->seq, q->data, q->len, q->fin);
		done++;
	}
	c->pkt_ns = save;
	for (int j = 0; j < i; j++) {
		R(c)->bytes -= h->q[j].len;
		free(h->q[j].data);
	}
	memmove(h->q, h->q + i, (size_t)(h->nq - i) * sizeof h->q[0]);
	h->nq -= i;
	h->hole_ns = INT64_MAX;
	for (int j = 0; j < h->nq; j++)
		if (h->q[j].ts_ns < h->hole_ns)
			h->hole_ns = h->q[j].ts_ns;
	hold_unlink(R(c), s);
	held_note(s);
	return done;
}

/* Bytes up to seq will not come in dir: a gap, counted and signalled; the
 * bytes the decoder left are lost with it. */
static void gap_to(struct bb_cap *c, struct rstream *s, int dir, uint32_t seq)
{
	struct rhalf *h = &s->h[dir];
	int32_t lost = (int32_t)(seq - h->next);
	if (lost <= 0)
		return;
	c->st.tcp_gaps++;
	c->st.tcp_gap_bytes += (uint64_t)lost;
	cap_tcp_gap(s->k, dir, (uint64_t)lost, 0);
	h->off = h->len = 0;
	h->next = seq;
}

/* The hole before the held segments of dir will not fill: skip it. */
static void skip_hole(struct bb_cap *c, struct rstream *s, int dir)
{
	struct rhalf *h = &s->h[dir];
	if (h->nq == 0)
		return;
	qsort(h->q, (size_t)h->nq, sizeof h->q[0], cmp_held);
	while (h->nq) {
		gap_to(c, s, dir, h->q[0].seq);
		drain(c, s, dir, INT64_MIN); /* after a gap: their own times */
	}
}

static void hold(struct bb_cap *c, struct rstream *s, int dir, uint32_t seq, const uint8_t *p,
                 size_t n, int fin)
{
	struct rhalf *h = &s->h[dir];
	if (!h->q)
		h->q = bb_xmalloc(CAP_HOLD_MAX * sizeof *h->q);
	if (h->nq == 0)
		h->hole_ns = c->pkt_ns;
	struct rheld *q = &h->q[h->nq++];
	q->ts_ns = c->pkt_ns;
	q->seq = seq;
	q->len = (uint32_t)n;
	q->fin = fin;
	q->data = bb_xmalloc(n ? n : 1);
	memcpy(q->data, p, n);
	R(c)->bytes += n;
	hold_link(R(c), s);
	held_note(s);
}

/* A segment of an established stream. */
static void segment(struct bb_cap *c, struct rstream *s, int dir, uint32_t seq, const uint8_t *p,
                    size_t n, int fin)
{
	struct rhalf *h = &s->h[dir];
	if (h->fin || (n == 0 && !fin))
		return;
	if ((int32_t)(seq - h->next) > 0) {
		/* A hole: maybe reordering, maybe loss. Hold the segment a while. */
		if (h->nq == CAP_HOLD_MAX)
			skip_hole(c, s, dir);
		if (R(c)->bytes + n > CAP_REASM_MEM_MAX) {
			skip_hole(c, s, dir); /* no room to wait for the hole to fill */
			gap_to(c, s, dir, seq);
		} else if ((int32_t)(seq - h->next) > 0) {
			hold(c, s, dir, seq, p, n, fin);
			return;
		}
	}
	take(c, s, dir, seq, p, n, fin);
	if (h->nq && drain(c, s, dir, c->pkt_ns))
		c->st.tcp_reordered++;
}

/* Which side of an unknown connection is the server: a decoder's port,
 * else the lower port. Returns 1 when it is the destination. */
static int server_is_dst(const struct bb_cap *c, uint16_t sp, uint16_t dp)
{
	int d_srv = bb_dec_is_server_port(&c->o.sel, BB_TR_TCP, dp);
	int s_srv = bb_dec_is_server_port(&c->o.sel, BB_TR_TCP, sp);
	return d_srv != s_srv ? d_srv : dp <= sp;
}

static void pick_up(struct bb_cap *c, struct rstream **sp_, const struct cap_addr *sa,
                    uint16_t sport, const struct cap_addr *da, uint16_t dport, uint32_t seq,
                    uint32_t ack, int *dir)
{
	struct rstream *s = *sp_;
	if (s)
		stream_free(c, s);
	c->st.tcp_midstream++;
	if (server_is_dst(c, sport, dport)) {
		s = stream_new(c, sa, sport, da, dport);
		*dir = BB_DIR_C2S;
	} else {
		s = stream_new(c, da, dport, sa, sport);
		*dir = BB_DIR_S2C;
	}
	s->h[*dir].next = seq;
	s->h[!*dir].next = ack;
	establish(c, s, 1);
	*sp_ = s;
}

static void tcp(struct bb_cap *c, const struct cap_addr *sa, const struct cap_addr *da,
                const uint8_t *p, size_t n)
{
	struct bb_rd r = bb_rd_make(p, n);
	uint16_t sport = bb_rd_be16(&r);
	uint16_t dport = bb_rd_be16(&r);
	uint32_t seq = bb_rd_be32(&r);
	uint32_t ack = bb_rd_be32(&r);
	uint8_t off = bb_rd_u8(&r);
	uint8_t fl = bb_rd_u8(&r);
	size_t thl = (size_t)(off >> 4) * 4;
	if (!bb_rd_ok(&r) || thl < 20 || thl > n) {
		c->st.ip_bad++;
		return;
	}
	const uint8_t *data = p + thl; /* thl <= n checked above */
	size_t len = n - thl;
	struct cap_reasm *rs = R(c);
	int dir = BB_DIR_C2S;
	struct rstream *s = lookup(rs, sa, sport, da, dport, &dir);
	int data_seg = len > 0 && (fl & F_ACK) && !(fl & (F_SYN | F_RST));
	if (s) {
		s->last_ns = c->now_ns;
		if (rs->lru_head != s) {
			lru_unlink(rs, s);
			lru_front(rs, s);
		}
	}
	if (fl & F_RST) {
		if (s)
			stream_free(c, s);
		return;
	}
	if ((fl & (F_SYN | F_ACK)) == F_SYN) {
		if (s && s->state == ST_SYN_SENT && dir == BB_DIR_C2S &&
		    s->h[BB_DIR_C2S].next == seq + 1)
			return; /* the SYN again */
		if (s)
			stream_free(c, s); /* the tuple reused by a new connection */
		s = stream_new(c, sa, sport, da, dport);
		s->state = ST_SYN_SENT;
		s->h[BB_DIR_C2S].next = seq + 1;
		return;
	}
	if (!s) {
		if (data_seg)
			pick_up(c, &s, sa, sport, da, dport, seq, ack, &dir);
		else
			return;
	} else if (s->state != ST_EST) {
		if ((fl & F_SYN) && (fl & F_ACK)) {
			if (dir == BB_DIR_S2C && ack == s->h[BB_DIR_C2S].next) {
				s->h[BB_DIR_S2C].next = seq + 1;
				s->state = ST_SYN_RCVD;
			}
			return;
		}
		if (s->state == ST_SYN_RCVD && dir == BB_DIR_C2S && (fl & F_ACK) &&
		    ack == s->h[BB_DIR_S2C].next)
			establish(c, s, 0);
		else if (data_seg)
			pick_up(c, &s, sa, sport, da, dport, seq, ack, &dir);
		else
			return;
	} else if (fl & F_SYN) {
		return; /* a SYN/ACK again */
	}
	segment(c, s, dir, seq, data, len, fl & F_FIN);
	if (s->h[0].fin && s->h[1].fin)
		stream_free(c, s);
}

static void udp(struct bb_cap *c, const struct cap_addr *sa, const struct cap_addr *da,
                const uint8_t *p, size_t n)
{
	struct bb_rd r = bb_rd_make(p, n);
	uint16_t sport = bb_rd_be16(&r);
	uint16_t dport = bb_rd_be16(&r);
	uint16_t ulen = bb_rd_be16(&r);
	if (!bb_rd_ok(&r) || ulen < 8 || ulen > n) {
		c->st.ip_bad++;
		return;
	}
	cap_udp(c, sa, sport, da, dport, p + 8, (size_t)ulen - 8);
}

/* A TCP segment or UDP datagram (proto 6 or 17). */
static void l4(struct bb_cap *c, uint8_t proto, const struct cap_addr *sa,
               const struct cap_addr *da, const uint8_t *p, size_t n)
{
	if (proto == 6)
		tcp(c, sa, da, p, n);
	else if (proto == 17)
		udp(c, sa, da, p, n);
	else
		c->st.ip_other++;
}

static void reasm_ip4(struct bb_cap *c, const uint8_t *p, size_t n)
{
	struct bb_rd r = bb_rd_make(p, n);
	uint8_t vh = bb_rd_u8(&r);
	bb_rd_skip(&r, 1);
	uint16_t tot = bb_rd_be16(&r);
	bb_rd_skip(&r, 5);
	uint8_t proto = bb_rd_u8(&r);
	bb_rd_skip(&r, 2);
	const uint8_t *a = bb_rd_bytes(&r, 4), *b = bb_rd_bytes(&r, 4);
	size_t ihl = (size_t)(vh & 15) * 4;
	/* A packet cut by the snap length is not used (its bytes are not all
	 * there): TCP sees a hole, as with libnids. */
	if (!bb_rd_ok(&r) || (vh >> 4) != 4 || ihl < 20 || tot < ihl || tot > n) {
		c->st.ip_bad++;
		return;
	}
	struct cap_addr sa, da;
	cap_addr_from4(&sa, a);
	cap_addr_from4(&da, b);
	l4(c, proto, &sa, &da, p + ihl, tot - ihl);
}

/* IPv6 payloads are taken in place. */
static void reasm_ip6(struct bb_cap *c, const uint8_t *p, size_t n)
{
	struct cap_l4 l;
	int bad;
	if (cap_ip6_l4(c, p, n, &l, &bad)) {
		struct cap_addr sa, da;
		memcpy(sa.b, l.src, 16);
		memcpy(da.b, l.dst, 16);
		l4(c, l.proto, &sa, &da, l.p, l.n);
	} else if (bad) {
		c->st.ip_bad++;
	}
}

static void reasm_expire(struct bb_cap *c, int all)
{
	struct cap_reasm *r = R(c);
	if (!r)
		return;
	/* Holes that outlived the tolerance. Skipping one may close a stream
	 * (FIN in the held bytes): take the next one first. */
	struct rstream *s = r->hold_head;
	while (s) {
		struct rstream *nx = s->hold_next;
		int touched = 0;
		for (int d = 0; d < 2; d++) {
			if (s->h[d].nq && (all || c->now_ns - s->h[d].hole_ns > c->o.hole_ns)) {
				skip_hole(c, s, d);
				touched = 1;
			}
		}
		if (touched && s->h[0].fin && s->h[1].fin)
			stream_free(c, s);
		s = nx;
	}
	/* Streams silent for an hour. */
	while (r->lru_tail && c->now_ns - r->lru_tail->last_ns > CAP_REASM_IDLE_NS) {
		c->st.tcp_evicted++;
		stream_free(c, r->lru_tail);
	}
}

static void reasm_free(struct bb_cap *c)
{
	struct cap_reasm *r = R(c);
	if (!r)
		return;
	reasm_expire(c, 1);
	while (r->lru_head)
		stream_free(c, r->lru_head);
	assert(r->bytes == 0);
	free(r->hash);
	free(r);
	c->eng_state = NULL;
}

const struct cap_engine cap_engine_own = {
	.name = "bbcap",
	.new = reasm_new,
	.free = reasm_free,
	.ip4 = reasm_ip4,
	.ip6 = reasm_ip6,
	.expire = reasm_expire,
};

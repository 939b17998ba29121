/* cap_nids.c - the libnids adapter: TCP reassembly and UDP, with the fixes bbcap needs */
/* SPDX-License-Identifier: MIT */
/*
 * Every use of libnids' global API is in this file (notes/libnids.md):
 *  - bbcap parses the link layer and feeds raw IPv4 through a DLT_RAW dead
 *    handle and nids_pcap_handler (SLL2 and IPv6 reach libnids that way);
 *    IPv6 is rewritten as IPv4 with addresses mapped into 240/4 (cap_ip.c),
 *    mapped back to 16-byte addresses before they reach the flows;
 *  - checksums are never verified (offload leaves them partial);
 *  - a payload segment of a connection libnids does not know gets a
 *    synthetic handshake first (SYN, SYN/ACK with window scale 14, ACK), so
 *    connections open before the capture are followed;
 *  - a segment beyond the next expected byte is held (up to CAP_HOLD_MAX
 *    segments or opts.hole_ns); if the hole is not filled in time it is a gap:
 *    the libnids stream is freed, the decoder told, and the held segments fed
 *    again behind a new handshake;
 *  - the stream table is large; times come from bbcap, not libnids.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <nids.h>
#include <stdlib.h>
#include <string.h>

#include "capture/cap_int.h"

static struct bb_cap *cur;      /* libnids is global: one capture at a time */
static pcap_t *dead;
static uint8_t inj[64];
static struct cap_v6map *v6map; /* IPv6 addresses behind the 240/4 ones libnids sees */
static size_t nholding;         /* conns holding segments */

/* A segment held beyond a hole. */
struct held {
	int64_t ts_ns;
	uint32_t seq;
	int dir;
	size_t len;
	uint8_t *pkt;               /* IPv4 packet copy */
};

/* What the adapter keeps per conn (k->eng_conn, made at NIDS_JUST_EST). */
struct nconn {
	struct tcp_stream *s;       /* the libnids stream, or NULL */
	struct held held[CAP_HOLD_MAX];
	int nheld;
	int64_t hole_ns;            /* time of the first segment held */
};

static inline struct nconn *N(const struct cap_conn *k)
{
	return k->eng_conn;
}

/* The last segment tuple find_conn answered (as libnids sees it) and its
 * answer: consecutive segments mostly belong to one connection, and the
 * answer holds until a TCP conn is made or ends (then k is set NULL). */
static struct {
	uint32_t sa, da;
	uint16_t sp, dp;
	int from_client;
	struct cap_conn *k;
} last;

static int64_t ip_ts_ns;        /* time of the packet being fed */
static int picking_up;          /* the handshake being fed is synthetic */

static void nids_warn(int type, int err, struct ip *iph, void *data)
{
	(void)type;
	(void)err;
	(void)iph;
	(void)data;
	if (cur)
		cur->st.nids_warnings++;
}

static void no_mem(char *where)
{
	(void)where;
	abort();
}

/* The address behind one libnids saw (network order). */
static struct cap_addr unmap(uint32_t v4)
{
	struct cap_addr a;
	const uint8_t *b = (const uint8_t *)&v4;
	const uint8_t *v6 = b[0] >= 240 ? cap_v6map_lookup(v6map, v4) : NULL; /* 240/4 */
	if (v6)
		memcpy(a.b, v6, 16);
	else
		cap_addr_from4(&a, b);
	return a;
}

static int dir_of(struct tcp_stream *s, struct half_stream **hlf)
{
	if (s->server.count_new) {
		*hlf = &s->server;
		return BB_DIR_C2S;
	}
	*hlf = &s->client;
	return BB_DIR_S2C;
}

static void tcp_cb(struct tcp_stream *s, void **param)
{
	(void)param;
	struct bb_cap *c = cur;
	struct cap_conn *k = s->user;
	switch (s->nids_state) {
	case NIDS_JUST_EST:
		s->client.collect++;
		s->server.collect++;
		/* libnids drops data beyond the receiver's advertised window; a
		 * passive observer must not (a peer that never ACKs, lost ACKs). */
		s->client.wscale = s->server.wscale = 1u << 14;
		struct cap_addr sa = unmap(s->addr.saddr), da = unmap(s->addr.daddr);
		last.k = NULL; /* a new conn may answer find_conn otherwise */
		k = cap_tcp_open(c, &sa, s->addr.source, &da, s->addr.dest, picking_up);
		if (!k->eng_conn)
			k->eng_conn = bb_xcalloc(1, sizeof(struct nconn));
		N(k)->s = s;
		s->user = k;
		return;
	case NIDS_DATA: {
		if (!k)
			return;
		struct half_stream *h;
		int dir = dir_of(s, &h);
		size_t avail = (size_t)(h->count - h->offset);
		size_t used = cap_tcp_data(k, dir, (const uint8_t *)h->data, avail,
		                           (size_t)h->count_new);
		if (used < avail && avail > (4u << 20)) {
			/* A decoder that holds megabytes waits for something that will not
			 * come: give up on those bytes. */
			c->st.tcp_overflow++;
			cap_tcp_gap(k, dir, 0, 0);
			used = avail;
		}
		nids_discard(s, (int)used);
		return;
	}
	default: /* CLOSE, RESET, TIMED_OUT, EXITING */
		if (s->nids_state == NIDS_TIMED_OUT)
			c->st.tcp_evicted++;
		if (k) {
			N(k)->s = NULL;
			s->user = NULL;
			if (!k->recreating)
				cap_tcp_close(k);
		}
		return;
	}
}

static void udp_cb(struct tuple4 *a, char *buf, int len, struct ip *iph)
{
	(void)iph;
	if (len < 0)
		return;
	struct cap_addr sa = unmap(a->saddr), da = unmap(a->daddr);
	cap_udp(cur, &sa, a->source, &da, a->dest, (const uint8_t *)buf, (size_t)len);
}

static int nids_new(struct bb_cap *c, struct bb_err *err)
{
	static struct nids_chksum_ctl all = {0, 0, NIDS_DONT_CHKSUM, 0};
	if (cur) {
		bb_err_set(err, "libnids: only one capture at a time");
		return BB_ERR_ARG;
	}
	dead = pcap_open_dead(DLT_RAW, 65535);
	if (!dead) {
		bb_err_set(err, "libnids: pcap_open_dead failed");
		return BB_ERR_IO;
	}
	nids_params.pcap_desc = dead;
	nids_params.filename = NULL;
	nids_params.device = NULL;
	nids_params.n_tcp_streams = (int)(c->o.max_streams ? c->o.max_streams : BB_CAP_STREAMS);
	nids_params.n_hosts = 4096;
	nids_params.scan_num_hosts = 0;
	nids_params.syslog = (__typeof__(nids_params.syslog))(void *)nids_warn;
	nids_params.no_mem = no_mem;
	nids_params.pcap_filter = NULL;
	nids_params.promisc = 0;
	nids_params.tcp_workarounds = 1;
	nids_params.multiproc = 0;
	if (!nids_init()) {
		bb_err_set(err, "libnids: %s", nids_errbuf);
		pcap_close(dead);
		dead = NULL;
		return BB_ERR_IO;
	}
	nids_register_chksum_ctl(&all, 1);
	nids_register_tcp((void *)tcp_cb);
	nids_register_udp((void *)udp_cb);
	v6map = cap_v6map_new();
	nholding = 0;
	last.k = NULL;
	cur = c;
	return 0;
}

static void feed_raw(const uint8_t *p, size_t n)
{
	struct pcap_pkthdr h;
	int64_t t = ip_ts_ns;
	h.ts.tv_sec = (time_t)(t / BB_NS_PER_S);
	h.ts.tv_usec = (suseconds_t)(t % BB_NS_PER_S / 1000);
	h.caplen = h.len = (bpf_u_int32)n;
	nids_pcap_handler(NULL, &h, (u_char *)(uintptr_t)p);
}

static void put16(uint8_t *b, uint16_t v)
{
	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}

static void put32(uint8_t *b, uint32_t v)
{
	b[0] = (uint8_t)(v >> 24);
	b[1] = (uint8_t)(v >> 16);
	b[2] = (uint8_t)(v >> 8);
	b[3] = (uint8_t)v;
}

/* Feeds one synthetic segment (addresses network order, rest host order). */
static void inject(uint32_t sa, uint16_t sp, uint32_t da, uint16_t dp, uint32_t seq,
                   uint32_t ack, uint8_t flags)
{
	int opt = (flags & 0x02) != 0; /* window scale on SYNs */
	size_t tl = 20 + 20 + (opt ? 4u : 0u);
	memset(inj, 0, sizeof inj);
	inj[0] = 0x45;
	put16(inj + 2, (uint16_t)tl);
	inj[6] = 0x40;
	inj[8] = 64;
	inj[9] = 6;
	memcpy(inj + 12, &sa, 4);
	memcpy(inj + 16, &da, 4);
	put16(inj + 10, cap_ip_csum(inj, 20));
	uint8_t *t = inj + 20;
	put16(t, sp);
	put16(t + 2, dp);
	put32(t + 4, seq);
	put32(t + 8, ack);
	t[12] = (uint8_t)((opt ? 6 : 5) << 4);
	t[13] = flags;
	put16(t + 14, 65535);
	if (opt) {
		t[20] = 1;  /* NOP */
		t[21] = 3;  /* window scale */
		t[22] = 3;
		t[23] = 14;
	}
	feed_raw(inj, tl);
}

struct seg {
	uint32_t sa, da;
	uint16_t sp, dp;
	uint32_t seq, ack;
	uint8_t flags;
	size_t payload;
};

/* Parses the IPv4 and TCP headers of a whole (unfragmented) segment. */
static int parse_seg(const uint8_t *p, size_t n, struct seg *g)
{
	struct bb_rd r = bb_rd_make(p, n);
	uint8_t vh = bb_rd_u8(&r);
	bb_rd_skip(&r, 1);
	uint16_t tot = bb_rd_be16(&r);
	bb_rd_skip(&r, 2);
	uint16_t frag = bb_rd_be16(&r);
	bb_rd_skip(&r, 1);
	uint8_t proto = bb_rd_u8(&r);
	bb_rd_skip(&r, 2);
	const uint8_t *sa = bb_rd_bytes(&r, 4);
	const uint8_t *da = bb_rd_bytes(&r, 4);
	size_t ihl = (size_t)(vh & 15) * 4;
	if (!bb_rd_ok(&r) || (vh >> 4) != 4 || ihl < 20 || proto != 6 || (frag & 0x3fff) ||
	    tot > n || tot < ihl)
		return -1;
	memcpy(&g->sa, sa, 4);
	memcpy(&g->da, da, 4);
	struct bb_rd t = bb_rd_make(p, tot);
	bb_rd_skip(&t, ihl);
	g->sp = bb_rd_be16(&t);
	g->dp = bb_rd_be16(&t);
	g->seq = bb_rd_be32(&t);
	g->ack = bb_rd_be32(&t);
	uint8_t off = bb_rd_u8(&t);
	g->flags = bb_rd_u8(&t);
	size_t thl = (size_t)(off >> 4) * 4;
	if (!bb_rd_ok(&t) || thl < 20 || ihl + thl > tot)
		return -1;
	g->payload = tot - ihl - thl;
	return 0;
}

/* The conn of a segment, its tuple as sent (*from_client 1) or reversed
 * (0), or NULL. */
static struct cap_conn *find_conn(struct bb_cap *c, const struct seg *g, int *from_client)
{
	if (last.k && g->sa == last.sa && g->da == last.da && g->sp == last.sp &&
	    g->dp == last.dp) {
		*from_client = last.from_client;
		return last.k;
	}
	struct cap_addr sa = unmap(g->sa), da = unmap(g->da);
	struct cap_conn *k = cap_tcp_find(c, &sa, g->sp, &da, g->dp);
	*from_client = 1;
	if (!k) {
		k = cap_tcp_find(c, &da, g->dp, &sa, g->sp);
		*from_client = 0;
	}
	if (k) {
		last.sa = g->sa;
		last.da = g->da;
		last.sp = g->sp;
		last.dp = g->dp;
		last.from_client = *from_client;
		last.k = k;
	}
	return k;
}

/* The libnids stream of a segment, through bbcap's own table (cheaper than
 * two nids_find_tcp_stream calls): every stream libnids holds has a conn. */
static struct tcp_stream *find(struct bb_cap *c, const struct seg *g, int *from_client)
{
	struct cap_conn *k = find_conn(c, g, from_client);
	return k ? N(k)->s : NULL;
}

/* A synthetic handshake after which the client's next byte is cs and the
 * server's ss (addresses network order). */
static void handshake(uint32_t ca, uint16_t cp, uint32_t sa, uint16_t sp, uint32_t cs, uint32_t ss)
{
	inject(ca, cp, sa, sp, cs - 1, 0, 0x02);
	inject(sa, sp, ca, cp, ss - 1, cs, 0x12);
	inject(ca, cp, sa, sp, cs, ss, 0x10);
}

/* Synthetic handshake for a segment of an unknown connection. */
static void pick_up(struct bb_cap *c, const struct seg *g)
{
	/* Which side is the server: a decoder's port, else the lower port. */
	int srv_is_dst; /* a stream being re-created after a gap keeps its sides */
	if (!find_conn(c, g, &srv_is_dst)) {
		c->st.tcp_midstream++;
		int d_srv = bb_dec_is_server_port(&c->o.sel, BB_TR_TCP, g->dp);
		int s_srv = bb_dec_is_server_port(&c->o.sel, BB_TR_TCP, g->sp);
		srv_is_dst = d_srv != s_srv ? d_srv : g->dp <= g->sp;
	}
	uint32_t cs, ss; /* next sequence numbers of client and server */
	uint32_t ca, sa;
	uint16_t cp, sp;
	if (srv_is_dst) {
		ca = g->sa, cp = g->sp, sa = g->da, sp = g->dp;
		cs = g->seq, ss = g->ack;
	} else {
		ca = g->da, cp = g->dp, sa = g->sa, sp = g->sp;
		cs = g->ack, ss = g->seq;
	}
	picking_up = 1;
	handshake(ca, cp, sa, sp, cs, ss);
	picking_up = 0;
}

static void feed_tcp(struct bb_cap *c, const uint8_t *p, size_t n, int depth);
static void drop(struct cap_conn *k);

static void hold(struct cap_conn *k, const uint8_t *p, size_t n, const struct seg *g, int dir)
{
	struct nconn *nc = N(k);
	struct held *h = &nc->held[nc->nheld++];
	if (nc->nheld == 1) {
		nc->hole_ns = ip_ts_ns;
		nholding++;
	}
	h->ts_ns = ip_ts_ns;
	h->seq = g->seq;
	h->dir = dir;
	h->len = n;
	h->pkt = bb_xmalloc(n);
	memcpy(h->pkt, p, n);
	if (k->held_ns != nc->hole_ns) { /* the watermark waits for held bytes */
		k->held_ns = nc->hole_ns;
		cap_wm_update(k);
	}
}

static int cmp_held(const void *a, const void *b)
{
	const struct held *x = a, *y = b;
	int32_t d = (int32_t)(x->seq - y->seq);
	return d < 0 ? -1 : d > 0;
}

/* Feeds held segments again. With gap set (the hole will not fill), the
 * stream is dropped first and re-created resuming after the hole. */
static void release_held(struct bb_cap *c, struct cap_conn *k, int gap, int depth)
{
	struct nconn *nc = N(k);
	struct held tmp[CAP_HOLD_MAX];
	int n = nc->nheld;
	memcpy(tmp, nc->held, sizeof tmp);
	nc->nheld = 0;
	if (n == 0)
		return;
	nholding--;
	k->held_ns = INT64_MAX; /* fed below: the bytes' own times go to marks */
	cap_wm_update(k);
	qsort(tmp, (size_t)n, sizeof tmp[0], cmp_held);
	if (gap && nc->s) {
		struct tcp_stream *s = nc->s;
		struct tuple4 t = s->addr; /* the addresses libnids knows, for the handshake */
		int dir = tmp[0].dir;
		/* The next byte each side owes: what libnids delivered so far. */
		uint32_t next[2];
		next[BB_DIR_C2S] = s->client.first_data_seq + (uint32_t)s->server.count +
		                   (uint32_t)s->server.urg_count;
		next[BB_DIR_S2C] = s->server.first_data_seq + (uint32_t)s->client.count +
		                   (uint32_t)s->client.urg_count;
		int32_t lost = (int32_t)(tmp[0].seq - next[dir]);
		next[dir] = tmp[0].seq;
		c->st.tcp_gaps++;
		c->st.tcp_gap_bytes += lost > 0 ? (uint64_t)lost : 0;
		cap_tcp_gap(k, dir, lost > 0 ? (uint64_t)lost : 0, 1);
		drop(k);
		/* The same connection again, resuming after the hole. */
		int64_t save = ip_ts_ns;
		ip_ts_ns = tmp[0].ts_ns;
		handshake(t.saddr, t.source, t.daddr, t.dest, next[BB_DIR_C2S], next[BB_DIR_S2C]);
		ip_ts_ns = save;
		k->recreating = 0;
	}
	/* Held bytes keep the times of their own packets, but when the hole
	 * filled none before the bytes before them (cap_reasm.c, drain). */
	int64_t save = ip_ts_ns, save_pkt = c->pkt_ns, floor_ns = gap ? INT64_MIN : c->pkt_ns;
	for (int i = 0; i < n; i++) {
		if (tmp[i].ts_ns > floor_ns)
			floor_ns = tmp[i].ts_ns;
		ip_ts_ns = floor_ns;
		c->pkt_ns = floor_ns;
		feed_tcp(c, tmp[i].pkt, tmp[i].len, depth + 1);
		free(tmp[i].pkt);
	}
	ip_ts_ns = save;
	c->pkt_ns = save_pkt;
}

/* Drops the libnids stream of k (the data it holds is lost). */
static void drop(struct cap_conn *k)
{
	struct tcp_stream *s = N(k)->s;
	if (!s)
		return;
	k->recreating = 1;
	s->user = NULL;
	N(k)->s = NULL;
	nids_free_tcp_stream(s); /* fires no callback */
}

static void feed_tcp(struct bb_cap *c, const uint8_t *p, size_t n, int depth)
{
	struct seg g;
	if (parse_seg(p, n, &g) < 0) {
		feed_raw(p, n);
		return;
	}
	int from_client;
	struct tcp_stream *s = find(c, &g, &from_client);
	int data_seg = g.payload > 0 && (g.flags & 0x10) && !(g.flags & 0x06);
	if (!s) {
		if (data_seg) {
			pick_up(c, &g);
			s = find(c, &g, &from_client);
			if (s && s->user) {
				struct cap_conn *k = s->user;
				k->recreating = 0;
			}
		}
		feed_raw(p, n);
		return;
	}
	struct cap_conn *k = s->user;
	struct nconn *nc = k ? N(k) : NULL;
	if (!k || !data_seg || depth > 4) {
		feed_raw(p, n);
		return;
	}
	int dir = from_client ? BB_DIR_C2S : BB_DIR_S2C;
	struct half_stream *snd = from_client ? &s->client : &s->server;
	struct half_stream *rcv = from_client ? &s->server : &s->client;
	uint32_t exp = snd->first_data_seq + (uint32_t)rcv->count + (uint32_t)rcv->urg_count;
	int32_t ahead = (int32_t)(g.seq - exp);
	if (ahead > 0) {
		/* A hole: maybe reordering, maybe loss. Hold the segment a while. */
		if (nc->nheld < CAP_HOLD_MAX && (nc->nheld == 0 || nc->held[0].dir == dir)) {
			hold(k, p, n, &g, dir);
			return;
		}
		release_held(c, k, 1, depth);
		feed_tcp(c, p, n, depth + 1);
		return;
	}
	feed_raw(p, n);
	if (nc->nheld && nc->held[0].dir == dir) {
		/* The hole may be filled now: put what was held back in. */
		c->st.tcp_reordered++;
		release_held(c, k, 0, depth);
	}
}

static void nids_ip4(struct bb_cap *c, const uint8_t *p, size_t n)
{
	ip_ts_ns = c->pkt_ns;
	struct bb_rd r = bb_rd_make(p, n);
	bb_rd_skip(&r, 9);
	uint8_t proto = bb_rd_u8(&r);
	if (!bb_rd_ok(&r)) {
		c->st.ip_bad++;
		return;
	}
	if (proto == 6)
		feed_tcp(c, p, n, 0);
	else if (proto == 17)
		feed_raw(p, n); /* libnids reassembles IPv4 fragments, then udp_cb */
	else
		c->st.ip_other++;
}

static void expire_conn(struct bb_cap *c, struct cap_conn *k, int all)
{
	struct nconn *nc = N(k);
	if (nc->nheld && (all || c->now_ns - nc->hole_ns > c->o.hole_ns))
		release_held(c, k, nc->s != NULL, 0);
}

/* An IPv6 packet, rewritten as IPv4 with mapped addresses (a loopback
 * segment longer than IPv4 can say is split in two). */
static void nids_ip6(struct bb_cap *c, const uint8_t *p, size_t n)
{
	int bad;
	size_t n4 = cap_ip6_to4(c, v6map, p, n, c->scratch, &bad);
	size_t na, nb;
	uint8_t *a = c->scratch + 2 * 65536, *b = c->scratch + 3 * 65536;
	if (bad)
		c->st.ip_bad++;
	else if (n4 > 65535 && cap_ip4_split(c->scratch, n4, a, &na, b, &nb) == 0) {
		nids_ip4(c, a, na);
		nids_ip4(c, b, nb);
	} else if (n4 > 65535)
		c->st.ip_bad++;
	else if (n4)
		nids_ip4(c, c->scratch, n4);
}

/* The tuples of conns whose hole outlived the tolerance (all holding ones
 * when all). */
struct expiring {
	struct bb_cap *c;
	int all;
	struct { struct cap_addr sa, da; uint16_t sp, dp; } *todo;
	size_t n, cap;
};

static void note_expiring(struct cap_conn *k, void *arg)
{
	struct expiring *e = arg;
	struct nconn *nc = N(k);
	if (!nc || !nc->nheld || !(e->all || e->c->now_ns - nc->hole_ns > e->c->o.hole_ns))
		return;
	if (e->n == e->cap) {
		e->cap = e->cap ? e->cap * 2 : 64;
		e->todo = bb_xrealloc(e->todo, e->cap * sizeof *e->todo);
	}
	e->todo[e->n].sa = k->saddr;
	e->todo[e->n].da = k->daddr;
	e->todo[e->n].sp = k->sport;
	e->todo[e->n].dp = k->dport;
	e->n++;
}

static void nids_expire(struct bb_cap *c, int all)
{
	if (nholding == 0)
		return;
	/* Feeding may open, close or evict other streams: collect the tuples
	 * first, then look each up again. */
	struct expiring e = {c, all, NULL, 0, 0};
	cap_tcp_each(c, note_expiring, &e);
	for (size_t i = 0; i < e.n; i++) {
		struct cap_conn *k =
			cap_tcp_find(c, &e.todo[i].sa, e.todo[i].sp, &e.todo[i].da, e.todo[i].dp);
		if (k)
			expire_conn(c, k, all);
	}
	free(e.todo);
}

/* k ends: what it still holds is freed with it. */
static void nids_conn_end(struct cap_conn *k)
{
	struct nconn *nc = N(k);
	last.k = NULL;
	for (int i = 0; i < nc->nheld; i++)
		free(nc->held[i].pkt);
	if (nc->nheld)
		nholding--;
	if (nc->s)
		nc->s->user = NULL;
	free(nc);
	k->eng_conn = NULL;
}

/* Ends every stream (NIDS_EXITING) and libnids itself. */
static void nids_free(struct bb_cap *c)
{
	if (cur != c)
		return;
	nids_expire(c, 1);
	nids_exit();
	nids_unregister_tcp((void *)tcp_cb);
	nids_unregister_udp((void *)udp_cb);
	cur = NULL;
	if (dead)
		pcap_close(dead);
	dead = NULL;
	cap_v6map_free(v6map);
	v6map = NULL;
}

const struct cap_engine cap_engine_nids = {
	.name = "libnids",
	.new = nids_new,
	.free = nids_free,
	.ip4 = nids_ip4,
	.ip6 = nids_ip6,
	.expire = nids_expire,
	.conn_end = nids_conn_end,
};

#define STR_(x) #x
#define STR(x) STR_(x)

const char *cap_nids_version(void)
{
	return "libnids " STR(NIDS_MAJOR) "." STR(NIDS_MINOR);
}

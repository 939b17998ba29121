/* cap_int.h - capture internals shared by the cap_*.c files */
/* SPDX-License-Identifier: MIT */
#ifndef BB_CAP_INT_H
#define BB_CAP_INT_H

#include <pcap/pcap.h>
#include <signal.h>
#include <string.h>

#include "capture/capture.h"

/* ---- link layer (cap_link.c) ---- */
/* Finds the IP packet in a frame of link type dlt. Returns 4 or 6 with *ip and
 * *len set, 0 for a non-IP frame, -1 for a malformed one, -2 for an
 * unsupported link type. */
int cap_link(int dlt, const uint8_t *p, size_t n, const uint8_t **ip, size_t *len);

/* ---- addresses ---- */
/* An IP address as flows are keyed and named: IPv6, or IPv4 mapped into it
 * (::ffff:a.b.c.d, RFC 4291 section 2.5.5.2), which says the family. */
struct cap_addr {
	uint8_t b[16];
};
static inline void cap_addr_from4(struct cap_addr *a, const uint8_t *v4)
{
	memset(a->b, 0, 10);
	a->b[10] = a->b[11] = 0xff;
	memcpy(a->b + 12, v4, 4);
}
/* 4 or 6. */
static inline int cap_addr_family(const struct cap_addr *a)
{
	static const uint8_t pre[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
	return memcmp(a->b, pre, 12) == 0 ? 4 : 6;
}
static inline int cap_addr_eq(const struct cap_addr *a, const struct cap_addr *b)
{
	return memcmp(a->b, b->b, 16) == 0;
}
/* The address folded to 32 bits for hashing: for IPv4 the address itself
 * (as memcpy reads it), so hash tables keep the order they had on 32-bit
 * keys. */
static inline uint32_t cap_addr_fold(const struct cap_addr *a)
{
	static const uint8_t mapw[4] = {0, 0, 0xff, 0xff};
	uint32_t w[4], m;
	memcpy(w, a->b, 16);
	memcpy(&m, mapw, 4);
	return w[0] ^ w[1] ^ w[2] ^ w[3] ^ m;
}

/* ---- IPv6 (cap_ip.c) ---- */
struct bb_cap;
/* The transport payload of an IPv6 packet. */
struct cap_l4 {
	uint8_t proto, hlim;
	const uint8_t *src, *dst;   /* 16 bytes each, borrowed from the packet */
	const uint8_t *p;           /* borrowed: the packet or the rebuilt datagram */
	size_t n;
};
/* Walks an IPv6 packet (fragments reassembled first, at c->pkt_ns) to its TCP
 * or UDP payload: 1 with *l set, else 0 (counted in c->st; *bad when
 * malformed). */
int cap_ip6_l4(struct bb_cap *c, const uint8_t *p, size_t n, struct cap_l4 *l, int *bad);
/* IPv4 header checksum of h (hl bytes, checksum field included as is). */
uint16_t cap_ip_csum(const uint8_t *h, size_t hl);

/* For libnids, which knows only IPv4: IPv6 addresses mapped to 240.0.0.0/4
 * indices into a table (cap_ip.c). */
struct cap_v6map;
struct cap_v6map *cap_v6map_new(void);
void cap_v6map_free(struct cap_v6map *m);
/* The IPv6 address behind a mapped IPv4 address (network order), or NULL. */
const uint8_t *cap_v6map_lookup(const struct cap_v6map *m, uint32_t a);
/* Rewrites an IPv6 TCP/UDP packet as IPv4 with its addresses mapped through
 * m into out (at least 65536 + 20 bytes). Fragments are reassembled first
 * (c->frags, at c->pkt_ns). Returns the IPv4 length, or 0 for a packet to
 * skip (counted in c->st) with *bad set when it is malformed. */
size_t cap_ip6_to4(struct bb_cap *c, struct cap_v6map *m, const uint8_t *p, size_t n,
                   uint8_t *out, int *bad);
/* Splits an IPv4 TCP packet p of n > 65535 bytes (20-byte IP header, from
 * cap_ip6_to4) into two valid packets at a and b. Returns 0, or -1 if p is
 * not such a TCP packet. */
int cap_ip4_split(const uint8_t *p, size_t n, uint8_t *a, size_t *na, uint8_t *b, size_t *nb);

/* ---- fragments (cap_frag.c) ---- */
/* Zero it whole before filling: it is hashed and compared as bytes. */
struct cap_frag_key {
	uint8_t fam, proto;         /* 4 or 6; IPv4 protocol (0 for IPv6) */
	uint8_t pad[2];
	uint32_t id;
	uint8_t src[16], dst[16];
};
#define CAP_FRAG_HEADROOM 64    /* bytes free in front of a rebuilt datagram */
struct cap_frags;
struct cap_frags *cap_frags_new(void);
void cap_frags_free(struct cap_frags *t);
/* Adds one fragment: off bytes into the datagram, more = more fragments
 * follow, next = the protocol it names (IPv6), n bytes at p. Returns 1 when
 * the datagram is complete: *out (CAP_FRAG_HEADROOM free bytes, then *len
 * data bytes) is borrowed until the next call, *first_next is the protocol
 * of the first fragment. Returns 0 otherwise (pending or dropped, counted). */
int cap_frag_add(struct cap_frags *t, const struct cap_frag_key *k, int64_t now_ns, size_t off,
                 int more, uint8_t next, const uint8_t *p, size_t n, uint8_t **out, size_t *len,
                 uint8_t *first_next, struct bb_cap_stats *st);
/* Drops incomplete datagrams older than their timeout. */
void cap_frags_expire(struct cap_frags *t, int64_t now_ns, struct bb_cap_stats *st);

/* ---- flows (cap_flow.c) ---- */
/* A time the decoder was given (time_at) for the bytes at stream positions
 * lo .. hi of one direction: the first byte of a message it may still hold. */
struct cap_lease {
	uint64_t lo, hi;
	int64_t ts;
};
#define CAP_LEASES 8            /* per direction; beyond, neighbours merge */

struct cap_dirbuf {
	uint64_t next_pos;          /* stream position after the last byte delivered */
	uint64_t used_pos;          /* stream position after the last byte consumed */
	struct { uint64_t pos; int64_t ts; } *marks;
	size_t nmarks, capmarks, mark0;
	int marks_unordered;        /* a mark older than the one before it (reordering) */
	struct cap_lease lease[CAP_LEASES];
	int nlease;
	int64_t lease_min;          /* the oldest of them */
	uint64_t udp_pos;           /* UDP: stream position of the datagram being decoded */
};

#define CAP_HOLD_MAX 16         /* segments an engine holds beyond a hole */

struct cap_conn {
	struct cap_conn *next;      /* hash chain */
	struct cap_conn *act_prev, *act_next; /* TCP activity list, most recent first */
	int active;                 /* on the activity list */
	struct cap_addr saddr, daddr;   /* client, server */
	uint16_t sport, dport;      /* host order */
	unsigned transport;
	uint64_t serial;
	int dec;                    /* registry index; -1 undecided; -2 ignored */
	int port_dec;               /* by port, to confirm by probe at first data; -1 */
	void *state;
	int midstream;              /* picked up without its handshake */
	int64_t last_ns;
	struct cap_dirbuf d[2];
	int recreating;             /* gap: waiting for the engine to re-create the stream */
	void *eng_conn;             /* the engine's per-stream state, or NULL; freed
	                               by eng->conn_end when the flow ends */
	/* The watermark (cap_out.c): the oldest first-byte time of a message
	 * this flow may still emit, INT64_MAX when none; its slot in the heap
	 * of flows (SIZE_MAX: not in it). */
	int64_t open_ns;
	int64_t held_ns;            /* oldest segment the reassembly holds, INT64_MAX */
	int64_t floor_ns;           /* given up on older messages (past the window) */
	int pinned;                 /* open past the window, not silent: holds it */
	size_t wm_slot;
	char client[64], server[64];    /* "addr:port" for decoders */
	const char *cnode, *snode;      /* node names in records (interned, cap_intern) */
	struct bb_cap *cap;
	struct bb_dec_ctx ctx;
};

struct cap_src {
	pcap_t *p;
	char *name;
	int dlt;
	int live;
	struct pcap_pkthdr *h;      /* current packet (offline merge) */
	const u_char *data;
	int done;
	uint64_t nread;             /* records read from this file so far */
	/* A classic pcap file read in place (cap_pcap.c), else NULL: libpcap
	 * reads it. At a record bbcap is not sure of, libpcap takes over at
	 * file offset off (and says what is wrong, if anything). */
	const uint8_t *map;
	size_t maplen, off;
	size_t populated;           /* pages mapped ahead up to here */
	int swapped, nsec;
	struct pcap_pkthdr hdr;
};

struct bb_cap {
	struct bb_cap_opts o;
	struct bb_writer *w;
	struct bb_cap_stats st;
	struct bb_dec_stats *ds;    /* per registry index */
	struct cap_src *src;
	size_t nsrc;
	int live;
	volatile sig_atomic_t stop;
	int64_t now_ns;             /* packet clock: the latest packet time, never back */
	int64_t pkt_ns;             /* time of the packet whose bytes are being handled */
	int64_t first_ns;
	int64_t last_sweep_ns;      /* packet time of the last timers run */
	int64_t back_ns;            /* the most packet times went back (slack) */
	/* The parts, each with its own _new and _free. */
	struct cap_flows *flows;    /* TCP connections and UDP flows (cap_flow.c) */
	struct cap_out *out;        /* records waiting to be written (cap_out.c) */
	struct cap_names *names;    /* node names (cap_names.c) */
	uint8_t *scratch;           /* one packet: a TSO super-frame's header fixed; for
	                               libnids, IPv6 rewritten to IPv4 and split */
	struct cap_frags *frags;    /* IPv4 and IPv6 datagrams being reassembled */
	const struct cap_engine *eng;   /* TCP reassembly and UDP: cap_reasm.c or cap_nids.c */
	void *eng_state;            /* the engine's, made by eng->new, freed by eng->free */
	int finished;
};

/* ---- flow tables (cap_flow.c) ---- */
struct cap_flows;
struct cap_flows *cap_flows_new(void);
/* Ends every flow still open (decoder end, records out) and frees the
 * tables; again, nothing. */
void cap_flows_end(struct bb_cap *c);
/* Frees f (after cap_flows_end). */
void cap_flows_free(struct cap_flows *f);
/* Calls fn for every TCP conn, in table order; fn must not end conns. */
void cap_tcp_each(struct bb_cap *c, void (*fn)(struct cap_conn *k, void *arg), void *arg);
/* TCP: the engine reports a new stream (client tuple). Returns the conn. */
struct cap_conn *cap_tcp_open(struct bb_cap *c, const struct cap_addr *saddr, uint16_t sport,
                              const struct cap_addr *daddr, uint16_t dport, int midstream);
/* Looks up a conn by client tuple, or NULL. */
struct cap_conn *cap_tcp_find(struct bb_cap *c, const struct cap_addr *saddr, uint16_t sport,
                              const struct cap_addr *daddr, uint16_t dport);
/* New bytes in a direction: buf holds every unconsumed byte (n), the last
 * nnew of them new. Returns how many bytes the decoder consumed. */
size_t cap_tcp_data(struct cap_conn *k, int dir, const uint8_t *buf, size_t n, size_t nnew);
/* lost bytes will never come in dir, after those delivered: the bytes dir's
 * decoder left unconsumed are lost with them. With stream_dropped (libnids
 * drops its stream) the unconsumed bytes of the other direction are lost too. */
void cap_tcp_gap(struct cap_conn *k, int dir, uint64_t lost, int stream_dropped);
/* The stream ended: decoder end, free. */
void cap_tcp_close(struct cap_conn *k);
/* A UDP datagram (ports host order). */
void cap_udp(struct bb_cap *c, const struct cap_addr *saddr, uint16_t sport,
             const struct cap_addr *daddr, uint16_t dport, const uint8_t *p, size_t n);
/* Tells the decoders of TCP flows silent since before cutoff_ns (once per silence). */
void cap_tcp_idle(struct bb_cap *c, int64_t cutoff_ns);
/* Ends idle UDP flows (every few seconds of packet time) and all at the end. */
void cap_udp_sweep(struct bb_cap *c, int all);
/* ---- records out (cap_out.c) ---- */
struct cap_out;
struct cap_out *cap_out_new(void);
void cap_out_free(struct cap_out *o);
/* Takes a decoder's message on flow k into the reorder heap. */
void cap_out_put(struct cap_conn *k, const struct bb_dec_msg *m);

/* Writes the records no open message can precede, and those older than the
 * reorder window (all when flush_all). */
void cap_out_release(struct bb_cap *c, int flush_all);
/* The decoder of k was given the time ts of the byte at pos in dir. */
void cap_wm_lease(struct cap_conn *k, int dir, uint64_t pos, int64_t ts);
/* Something k's open time depends on changed: recompute it. */
void cap_wm_update(struct cap_conn *k);
/* k ends: out of the heap of flows. */
void cap_wm_remove(struct cap_conn *k);

/* ---- node names (cap_names.c) ---- */
struct cap_names;
/* Returns new, with the --names file at path (NULL: none) loaded, or NULL
 * with err set. */
struct cap_names *cap_names_new(const char *path, struct bb_err *err);
void cap_names_free(struct cap_names *n);
/* Node name of address a: a --names name or the address ("[v6]" with a
 * port), with ":port" when with_port. */
void cap_addr_name(const struct cap_names *n, const struct cap_addr *a, uint16_t port,
                   int with_port, char *buf, size_t cap);
/* The one copy of name s, kept until cap_names_free (records outlive flows). */
const char *cap_intern(struct cap_names *n, const char *s);

/* ---- TCP reassembly engines ---- */
/* What capture/ asks of a reassembly engine: IP packets in, cap_tcp_open,
 * cap_tcp_data, cap_tcp_gap, cap_tcp_close and cap_udp out (cap_flow.c).
 * c->eng is the engine of a capture, c->eng_state its state. */
struct cap_engine {
	const char *name;
	/* Makes c->eng_state: 0, or a negative bb_status with err set. */
	int (*new)(struct bb_cap *c, struct bb_err *err);
	/* Ends every stream (decoder end) and frees c->eng_state; does nothing
	 * the second time. */
	void (*free)(struct bb_cap *c);
	/* One whole (unfragmented) IPv4 packet at time c->pkt_ns. */
	void (*ip4)(struct bb_cap *c, const uint8_t *p, size_t n);
	/* One IPv6 packet at time c->pkt_ns, fragments not yet reassembled. */
	void (*ip6)(struct bb_cap *c, const uint8_t *p, size_t n);
	/* Skips holes that outlived opts.hole_ns (all of them when all), ends
	 * streams the engine times out. */
	void (*expire)(struct bb_cap *c, int all);
	/* The flow k ends: frees k->eng_conn (not NULL). Called after free too. */
	void (*conn_end)(struct cap_conn *k);
};
/* bbcap's own TCP reassembly (cap_reasm.c): the default. */
extern const struct cap_engine cap_engine_own;
/* libnids (cap_nids.c): the only file that uses libnids. */
extern const struct cap_engine cap_engine_nids;
const char *cap_nids_version(void);

#endif

/* cap_flow.c - flows: TCP connections and UDP flows, decoder binding, byte times */
/* SPDX-License-Identifier: MIT */
/*
 * A flow owns its decoder's zeroed state and, per direction, the times of
 * its bytes: a mark (stream position, packet time) per delivery, pruned as
 * the decoder consumes, so a message gets the time of its first and last byte
 * however the bytes were chunked. Records go to cap_out.c.
 */
#include <stdlib.h>
#include <string.h>

#include "capture/cap_int.h"

/* Hashes a 4-tuple of folded addresses (cap_addr_fold). */
static size_t hash4(uint32_t a, uint16_t ap, uint32_t b, uint16_t bp, size_t size)
{
	uint64_t h = ((uint64_t)a * 0x9e3779b97f4a7c15u) ^ ((uint64_t)b * 0xc2b2ae3d27d4eb4fu) ^
	             ((uint64_t)ap << 16 | bp) * 0x165667b19e3779f9u;
	h ^= h >> 29;
	return (size_t)h & (size - 1);
}

struct cap_flows {
	struct cap_conn **tcp_hash, **udp_hash;  /* allocated at the first flow */
	size_t hash_size;
	size_t nudp;
	struct cap_conn *act_head, *act_tail;   /* TCP, most recently active first */
	uint64_t serial;            /* of the last flow made */
};

struct cap_flows *cap_flows_new(void)
{
	return bb_xcalloc(1, sizeof(struct cap_flows));
}

void cap_flows_free(struct cap_flows *f)
{
	if (!f)
		return;
	free(f->tcp_hash);
	free(f->udp_hash);
	free(f);
}

static void ensure_hash(struct bb_cap *c)
{
	if (c->flows->tcp_hash)
		return;
	c->flows->hash_size = 1u << 16;
	c->flows->tcp_hash = bb_xcalloc(c->flows->hash_size, sizeof *c->flows->tcp_hash);
	c->flows->udp_hash = bb_xcalloc(c->flows->hash_size, sizeof *c->flows->udp_hash);
}

/* Every time handed to a decoder is noted (a lease): the first byte of a
 * message it emits later is one of them, so the oldest lease bounds what
 * the flow may still emit (cap_out.c). */
static int64_t time_at(void *arg, int dir, uint64_t pos)
{
	struct cap_conn *k = arg;
	if (dir < 0 || dir > 1)
		return k->cap->pkt_ns;
	struct cap_dirbuf *d = &k->d[dir];
	int64_t t;
	if (k->transport == BB_TR_UDP) {
		t = k->cap->pkt_ns;
		pos += d->udp_pos; /* datagrams laid end to end */
	} else {
		t = d->nmarks > d->mark0 ? d->marks[d->mark0].ts : k->cap->pkt_ns;
		for (size_t i = d->mark0; i < d->nmarks && d->marks[i].pos <= pos; i++)
			t = d->marks[i].ts;
	}
	cap_wm_lease(k, dir, pos, t);
	return t;
}

static void emit(void *arg, const struct bb_dec_msg *m)
{
	cap_out_put(arg, m);
}

/* Whether an address is the loopback: 127.0.0.0/8 or ::1. */
static int loopback(const struct cap_addr *a)
{
	static const uint8_t one6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
	if (cap_addr_family(a) == 4)
		return a->b[12] == 127;
	return memcmp(a->b, one6, 16) == 0;
}

/* Whether the server of a flow is named ip:port (see docs/trace-format.md,
 * "Node names"). By default (BB_CAP_PORTS_AUTO) where services are known
 * to share an address from the flow alone: on the loopback, and when a host
 * calls a service on its own address. The rule looks at one flow only, so
 * it names a service the same way from its first packet on. */
static int server_with_port(const struct bb_cap *c, const struct cap_addr *sa,
                            const struct cap_addr *da)
{
	switch (c->o.server_ports) {
	case BB_CAP_PORTS_ALWAYS:
		return 1;
	case BB_CAP_PORTS_NEVER:
		return 0;
	default:
		return cap_addr_eq(sa, da) || loopback(da);
	}
}

static struct cap_conn *conn_new(struct bb_cap *c, unsigned tr, const struct cap_addr *sa,
                                 uint16_t sp, const struct cap_addr *da, uint16_t dp)
{
	struct cap_conn *k = bb_xcalloc(1, sizeof *k);
	k->saddr = *sa;
	k->daddr = *da;
	k->sport = sp;
	k->dport = dp;
	k->transport = tr;
	k->serial = ++c->flows->serial;
	k->dec = -1;
	k->port_dec = -1;
	k->cap = c;
	k->last_ns = c->now_ns;
	k->open_ns = k->held_ns = INT64_MAX;
	k->floor_ns = INT64_MIN;
	k->wm_slot = SIZE_MAX;
	cap_addr_name(c->names, sa, sp, 1, k->client, sizeof k->client);
	cap_addr_name(c->names, da, dp, 1, k->server, sizeof k->server);
	/* Clients are named by ip; servers by ip or ip:port (server_with_port). */
	char nm[72];
	cap_addr_name(c->names, sa, sp, 0, nm, sizeof nm);
	k->cnode = cap_intern(c->names, nm);
	cap_addr_name(c->names, da, dp, server_with_port(c, sa, da), nm, sizeof nm);
	k->snode = cap_intern(c->names, nm);
	k->ctx.conn = k->serial;
	k->ctx.client = k->client;
	k->ctx.server = k->server;
	k->ctx.transport = tr;
	k->ctx.time_at = time_at;
	k->ctx.emit = emit;
	k->ctx.arg = k;
	k->ctx.tok_key = c->o.tokens ? &c->o.tok_key : NULL;
	return k;
}

/* -v: one line per malformed message, naming the flow and the time. */
static void log_malformed(struct cap_conn *k, uint64_t before, int dir)
{
	struct bb_cap *c = k->cap;
	if (!c->o.log || k->dec < 0 || c->ds[k->dec].malformed == before)
		return;
	char msg[256], t[BB_TIME_BUFSZ];
	bb_time_format(c->pkt_ns, t);
	snprintf(msg, sizeof msg, "%s: %llu malformed message(s) from %s to %s at %s",
	         bb_dec_at((size_t)k->dec)->name,
	         (unsigned long long)(c->ds[k->dec].malformed - before),
	         dir == BB_DIR_C2S ? k->client : k->server, dir == BB_DIR_C2S ? k->server : k->client,
	         t);
	c->o.log(c->o.log_arg, msg);
}

static void bind_decoder(struct cap_conn *k, int d)
{
	struct bb_cap *c = k->cap;
	k->dec = d;
	if (d < 0)
		return;
	const struct bb_decoder *dec = bb_dec_at((size_t)d);
	k->state = bb_xcalloc(1, dec->state_size);
	k->ctx.stats = &c->ds[d];
	c->ds[d].flows++;
	if (k->midstream && dec->gap) {
		/* Picked up mid-stream: the first bytes may be anywhere in a message,
		 * so the decoder starts by looking for a message start. */
		uint64_t resync = c->ds[d].resync;
		dec->gap(k->state, &k->ctx, BB_DIR_C2S, 0);
		dec->gap(k->state, &k->ctx, BB_DIR_S2C, 0);
		c->ds[d].resync = resync;
	}
}

static void conn_end(struct cap_conn *k)
{
	if (k->dec >= 0) {
		const struct bb_decoder *dec = bb_dec_at((size_t)k->dec);
		if (dec->end)
			dec->end(k->state, &k->ctx);
		cap_wm_remove(k);
		if (dec->free)
			dec->free(k->state);
	}
	free(k->state);
	k->state = NULL;
	for (int i = 0; i < 2; i++)
		free(k->d[i].marks);
	if (k->eng_conn)
		k->cap->eng->conn_end(k);
	free(k);
}

static void act_remove(struct bb_cap *c, struct cap_conn *k)
{
	if (!k->active)
		return;
	if (k->act_prev)
		k->act_prev->act_next = k->act_next;
	else
		c->flows->act_head = k->act_next;
	if (k->act_next)
		k->act_next->act_prev = k->act_prev;
	else
		c->flows->act_tail = k->act_prev;
	k->act_prev = k->act_next = NULL;
	k->active = 0;
}

static void act_touch(struct bb_cap *c, struct cap_conn *k)
{
	if (k->active && c->flows->act_head == k)
		return;
	act_remove(c, k);
	k->act_next = c->flows->act_head;
	if (c->flows->act_head)
		c->flows->act_head->act_prev = k;
	c->flows->act_head = k;
	if (!c->flows->act_tail)
		c->flows->act_tail = k;
	k->active = 1;
}

void cap_tcp_idle(struct bb_cap *c, int64_t cutoff_ns)
{
	/* The list is in order of activity; segments put back after a hole carry
	 * their own older times, so look a little past a flow that is not idle. */
	int busy = 0;
	struct cap_conn *k = c->flows->act_tail;
	while (k && busy < 64) {
		struct cap_conn *prev = k->act_prev;
		if (k->last_ns >= cutoff_ns) {
			busy++;
			k = prev;
			continue;
		}
		act_remove(c, k);
		if (k->dec >= 0) {
			const struct bb_decoder *dec = bb_dec_at((size_t)k->dec);
			if (dec->idle) {
				dec->idle(k->state, &k->ctx);
				cap_wm_update(k);
			}
		}
		k = prev;
	}
}

static void unlink_conn(struct cap_conn **head, struct cap_conn *k)
{
	for (struct cap_conn **pp = head; *pp; pp = &(*pp)->next) {
		if (*pp == k) {
			*pp = k->next;
			return;
		}
	}
}

static size_t tcp_slot(const struct bb_cap *c, const struct cap_addr *sa, uint16_t sp,
                       const struct cap_addr *da, uint16_t dp)
{
	return hash4(cap_addr_fold(sa), sp, cap_addr_fold(da), dp, c->flows->hash_size);
}

struct cap_conn *cap_tcp_find(struct bb_cap *c, const struct cap_addr *saddr, uint16_t sport,
                              const struct cap_addr *daddr, uint16_t dport)
{
	ensure_hash(c);
	struct cap_conn *k = c->flows->tcp_hash[tcp_slot(c, saddr, sport, daddr, dport)];
	for (; k; k = k->next)
		if (k->sport == sport && k->dport == dport && cap_addr_eq(&k->saddr, saddr) &&
		    cap_addr_eq(&k->daddr, daddr))
			return k;
	return NULL;
}

struct cap_conn *cap_tcp_open(struct bb_cap *c, const struct cap_addr *saddr, uint16_t sport,
                              const struct cap_addr *daddr, uint16_t dport, int midstream)
{
	struct cap_conn *k = cap_tcp_find(c, saddr, sport, daddr, dport);
	if (k && k->recreating) {
		k->recreating = 0;
		return k;
	}
	if (k) /* a connection we never saw end: same tuple, new connection */
		cap_tcp_close(k);
	k = conn_new(c, BB_TR_TCP, saddr, sport, daddr, dport);
	k->midstream = midstream;
	size_t h = tcp_slot(c, saddr, sport, daddr, dport);
	k->next = c->flows->tcp_hash[h];
	c->flows->tcp_hash[h] = k;
	c->st.tcp_streams++;
	int d = bb_dec_by_port(&c->o.sel, BB_TR_TCP, sport, dport);
	if (d >= 0 && bb_dec_at((size_t)d)->verify &&
	    bb_dec_forced(&c->o.sel, BB_TR_TCP, sport, dport) < 0)
		k->port_dec = d; /* confirmed or not by the first payload */
	else
		bind_decoder(k, d);
	return k;
}

void cap_tcp_close(struct cap_conn *k)
{
	struct bb_cap *c = k->cap;
	act_remove(c, k);
	unlink_conn(&c->flows->tcp_hash[tcp_slot(c, &k->saddr, k->sport, &k->daddr, k->dport)], k);
	conn_end(k);
}

static void add_mark(struct cap_dirbuf *d, uint64_t pos, int64_t ts)
{
	if (d->nmarks > d->mark0 && d->marks[d->nmarks - 1].ts == ts)
		return; /* same time: the earlier mark covers these bytes */
	if (d->nmarks > d->mark0 && d->marks[d->nmarks - 1].ts > ts)
		d->marks_unordered = 1;
	if (d->nmarks == d->capmarks) {
		if (d->mark0 > 0) {
			memmove(d->marks, d->marks + d->mark0, (d->nmarks - d->mark0) * sizeof *d->marks);
			d->nmarks -= d->mark0;
			d->mark0 = 0;
		}
		if (d->nmarks == d->capmarks) {
			d->capmarks = d->capmarks ? d->capmarks * 2 : 8;
			d->marks = bb_xrealloc(d->marks, d->capmarks * sizeof *d->marks);
		}
	}
	d->marks[d->nmarks].pos = pos;
	d->marks[d->nmarks].ts = ts;
	d->nmarks++;
}

static void prune_marks(struct cap_dirbuf *d, uint64_t pos)
{
	while (d->mark0 + 1 < d->nmarks && d->marks[d->mark0 + 1].pos <= pos)
		d->mark0++;
	if (d->mark0 == d->nmarks) {
		d->mark0 = d->nmarks = 0;
	}
}

size_t cap_tcp_data(struct cap_conn *k, int dir, const uint8_t *buf, size_t n, size_t nnew)
{
	struct bb_cap *c = k->cap;
	struct cap_dirbuf *d = &k->d[dir];
	k->last_ns = c->pkt_ns;
	act_touch(c, k);
	if (nnew > n)
		nnew = n;
	add_mark(d, d->next_pos, c->pkt_ns);
	d->next_pos += nnew;
	uint64_t pos0 = d->next_pos - n;
	if (k->dec == -1 && n > 0) {
		int pd = k->port_dec;
		if (pd >= 0 && bb_dec_at((size_t)pd)->probe(buf, n, BB_TR_TCP, dir))
			bind_decoder(k, pd);
		else
			bind_decoder(k, bb_dec_by_probe(&c->o.sel, BB_TR_TCP, buf, n, dir));
	}
	if (k->dec < 0) {
		k->dec = -2;
		prune_marks(d, d->next_pos);
		d->used_pos = d->next_pos;
		return n;
	}
	const struct bb_decoder *dec = bb_dec_at((size_t)k->dec);
	uint64_t bad = c->ds[k->dec].malformed;
	size_t used = dec->decode(k->state, &k->ctx, dir, pos0, buf, n);
	log_malformed(k, bad, dir);
	if (used > n)
		used = n;
	prune_marks(d, pos0 + used);
	d->used_pos = pos0 + used;
	cap_wm_update(k);
	return used;
}

void cap_tcp_gap(struct cap_conn *k, int dir, uint64_t lost, int stream_dropped)
{
	/* dir loses the bytes its decoder left unconsumed, and with
	 * stream_dropped (libnids drops its stream) the other direction too;
	 * positions jump past the hole. */
	const struct bb_decoder *dec = k->dec >= 0 ? bb_dec_at((size_t)k->dec) : NULL;
	for (int i = 0; i < 2; i++) {
		struct cap_dirbuf *d = &k->d[i];
		if (i != dir && !stream_dropped)
			continue;
		uint64_t gone = d->next_pos - d->used_pos + (i == dir ? lost : 0);
		d->next_pos += (i == dir ? lost : 0) + 1;
		d->used_pos = d->next_pos;
		d->mark0 = d->nmarks = 0;
		if (dec && dec->gap && (i == dir || gone))
			dec->gap(k->state, &k->ctx, i, gone);
	}
	cap_wm_update(k);
}

/* ---- UDP ---- */

#define CAP_UDP_MAX (1u << 18) /* UDP flows kept at once */

static void cap_udp_sweep_idle(struct bb_cap *c, int64_t cutoff_ns);

static struct cap_conn **udp_slot(struct bb_cap *c, const struct cap_addr *sa, uint16_t sp,
                                  const struct cap_addr *da, uint16_t dp)
{
	/* Unordered pair: hash the smaller endpoint first. */
	uint64_t e1 = (uint64_t)cap_addr_fold(sa) << 16 | sp;
	uint64_t e2 = (uint64_t)cap_addr_fold(da) << 16 | dp;
	if (e1 > e2) {
		uint64_t t = e1;
		e1 = e2;
		e2 = t;
	}
	return &c->flows->udp_hash[hash4((uint32_t)(e1 >> 16), (uint16_t)e1, (uint32_t)(e2 >> 16),
	                          (uint16_t)e2, c->flows->hash_size)];
}

void cap_udp(struct bb_cap *c, const struct cap_addr *sa, uint16_t sp,
             const struct cap_addr *da, uint16_t dp, const uint8_t *p, size_t n)
{
	ensure_hash(c);
	struct cap_conn **head = udp_slot(c, sa, sp, da, dp);
	struct cap_conn *k;
	int dir = BB_DIR_C2S;
	for (k = *head; k; k = k->next) {
		if (k->sport == sp && k->dport == dp && cap_addr_eq(&k->saddr, sa) &&
		    cap_addr_eq(&k->daddr, da)) {
			dir = BB_DIR_C2S;
			break;
		}
		if (k->sport == dp && k->dport == sp && cap_addr_eq(&k->saddr, da) &&
		    cap_addr_eq(&k->daddr, sa)) {
			dir = BB_DIR_S2C;
			break;
		}
	}
	if (!k && c->flows->nudp >= CAP_UDP_MAX) {
		/* Full: end the flows silent for a second (counted), then any. */
		size_t before = c->flows->nudp;
		cap_udp_sweep_idle(c, c->now_ns - BB_NS_PER_S);
		if (c->flows->nudp >= CAP_UDP_MAX)
			cap_udp_sweep_idle(c, INT64_MAX);
		c->st.udp_evicted += before - c->flows->nudp;
		head = udp_slot(c, sa, sp, da, dp);
	}
	if (!k) {
		/* The client sends first, unless it is the one on a server port. */
		int s_srv = bb_dec_is_server_port(&c->o.sel, BB_TR_UDP, sp);
		int d_srv = bb_dec_is_server_port(&c->o.sel, BB_TR_UDP, dp);
		if (s_srv && !d_srv) {
			k = conn_new(c, BB_TR_UDP, da, dp, sa, sp);
			dir = BB_DIR_S2C;
		} else {
			k = conn_new(c, BB_TR_UDP, sa, sp, da, dp);
		}
		k->next = *head;
		*head = k;
		c->flows->nudp++;
		c->st.udp_flows++;
		int d = bb_dec_by_port(&c->o.sel, BB_TR_UDP, k->sport, k->dport);
		if (d < 0)
			d = bb_dec_by_probe(&c->o.sel, BB_TR_UDP, p, n, dir);
		bind_decoder(k, d);
		if (k->dec < 0)
			k->dec = -2;
	}
	k->last_ns = c->now_ns;
	if (k->dec >= 0) {
		uint64_t bad = c->ds[k->dec].malformed;
		bb_dec_at((size_t)k->dec)->decode(k->state, &k->ctx, dir, 0, p, n);
		log_malformed(k, bad, dir);
		k->d[dir].udp_pos += n;
		cap_wm_update(k);
	}
}

/* Ends the UDP flows last active before cutoff_ns. */
static void cap_udp_sweep_idle(struct bb_cap *c, int64_t cutoff_ns)
{
	if (!c->flows->udp_hash || c->flows->nudp == 0)
		return;
	for (size_t i = 0; i < c->flows->hash_size; i++) {
		struct cap_conn **pp = &c->flows->udp_hash[i];
		while (*pp) {
			struct cap_conn *k = *pp;
			if (k->last_ns < cutoff_ns) {
				*pp = k->next;
				c->flows->nudp--;
				conn_end(k);
			} else {
				pp = &k->next;
			}
		}
	}
}

void cap_udp_sweep(struct bb_cap *c, int all)
{
	cap_udp_sweep_idle(c, all ? INT64_MAX : c->now_ns - 60 * BB_NS_PER_S);
}

void cap_tcp_each(struct bb_cap *c, void (*fn)(struct cap_conn *k, void *arg), void *arg)
{
	if (!c->flows->tcp_hash)
		return;
	for (size_t i = 0; i < c->flows->hash_size; i++)
		for (struct cap_conn *k = c->flows->tcp_hash[i]; k; k = k->next)
			fn(k, arg);
}

void cap_flows_end(struct bb_cap *c)
{
	if (!c->flows || !c->flows->tcp_hash)
		return; /* no flow ever, or ended already */
	cap_udp_sweep(c, 1);
	for (size_t i = 0; i < c->flows->hash_size; i++) {
		while (c->flows->tcp_hash[i]) {
			struct cap_conn *k = c->flows->tcp_hash[i];
			c->flows->tcp_hash[i] = k->next;
			act_remove(c, k);
			conn_end(k);
		}
	}
	free(c->flows->tcp_hash);
	free(c->flows->udp_hash);
	c->flows->tcp_hash = c->flows->udp_hash = NULL;
}

/* cap_out.c - records out: a time-ordered holding heap, the watermark, the writer */
/* SPDX-License-Identifier: MIT */
/*
 * Decoders report a message when it ends, but its trace time is its first
 * byte, so records from different flows arrive out of order. They wait in a
 * binary heap keyed by (time, arrival) until no message still open anywhere
 * can start before them: the watermark.
 *
 * A flow's open time is the oldest of: the times handed to its decoder
 * (time_at) for messages not emitted yet (leases), its bytes delivered but
 * not consumed, and the segments its reassembly holds. A lease ends with the
 * message that took it: when the decoder emits a message of len bytes whose
 * first byte had a lease at position p and whose last lease (the most recent
 * of its direction) is at p + len - 1 with the end time, the leases in
 * p .. p + len - 1 are its own (the message's bytes are contiguous); else
 * only the lease of its first byte goes (the rest wait for the window).
 * Flows are kept in a second heap, least open time first. The watermark is
 * the least open time, at most the packet clock less the most the packet
 * times ever went back, and at most the watermark of CAP_WM_LAG packets ago
 * (a packet whose time goes back finds its records' successors unwritten).
 *
 * opts.reorder_ns bounds the wait. A flow open since before the window is
 * expired: what it opened before then no longer counts. If it is not silent
 * (a slow message going on), it then holds the watermark at the window, as
 * the fixed hold does, until it emits a message; a silent one (a message
 * that will not end, or a lease its message did not end) is let go at once.
 * A record older than one already written is written anyway, counted late.
 * Memory stays bounded by the window, as with the fixed hold.
 * With opts.fixed_hold every record waits the whole window (the old way).
 */
#include <stdlib.h>
#include <string.h>

#include "capture/cap_int.h"

/* Packet times may go back a little (several queues, merged sources): the
 * watermark stays this far behind the packet clock, and as far as the
 * clock ever went back. */
#define CAP_WM_SLACK_NS (1000 * INT64_C(1000))

/* A record waiting to be written. */
struct cap_rec {
	int64_t ts_ns, end_ns;
	uint64_t seq;
	uint64_t len;
	enum bb_op op;
	const char *proto;
	const char *sender, *receiver;  /* interned */
	char id[96];
	char req[128];
	uint16_t id_len, req_len;
	uint8_t has_toks;               /* toks holds tok= or ctx= */
	struct bb_dec_toks toks;
};

#define CAP_WM_LAG 64

struct cap_out {
	/* records waiting to be written in time order: a binary heap of small
	 * keys over a pool of records */
	struct cap_key { int64_t ts_ns; uint64_t seq; uint32_t idx; } *heap;
	size_t nheap, capheap;
	struct cap_rec *pool;
	uint32_t *freelist;
	size_t npool, nfree;
	uint64_t recseq;
	int64_t last_written_ns;
	/* flows that may still emit, least open_ns first */
	struct cap_conn **wm;
	size_t nwm, capwm;
	int64_t wm_lag[CAP_WM_LAG]; /* the last watermarks, one a packet */
	int wm_lag_i;
	uint64_t wm_expired;        /* flows given up on past the window */
	uint64_t wm_fallback;       /* emits not matched to their bytes (leases kept) */
	int64_t end_sec;            /* the seconds of the last end= written, */
	char end_str[BB_TIME_BUFSZ];/* as text with the dot: reused while equal */
	size_t end_len;
};

struct cap_out *cap_out_new(void)
{
	struct cap_out *o = bb_xcalloc(1, sizeof *o);
	o->last_written_ns = INT64_MIN;
	for (int i = 0; i < CAP_WM_LAG; i++)
		o->wm_lag[i] = INT64_MIN;
	return o;
}

void cap_out_free(struct cap_out *o)
{
	if (!o)
		return;
	free(o->heap);
	free(o->wm);
	free(o->pool);
	free(o->freelist);
	free(o);
}

static int before(const struct cap_key *a, const struct cap_key *b)
{
	return a->ts_ns < b->ts_ns || (a->ts_ns == b->ts_ns && a->seq < b->seq);
}

static void heap_push(struct bb_cap *c, const struct cap_key *r)
{
	if (c->out->nheap == c->out->capheap) {
		c->out->capheap = c->out->capheap ? c->out->capheap * 2 : 1024;
		c->out->heap = bb_xrealloc(c->out->heap, c->out->capheap * sizeof *c->out->heap);
	}
	size_t i = c->out->nheap++;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!before(r, &c->out->heap[p]))
			break;
		c->out->heap[i] = c->out->heap[p];
		i = p;
	}
	c->out->heap[i] = *r;
}

/* Removes the least key. Bottom-up: the hole at the root goes down to a leaf
 * along the lesser children (one comparison a level), then the last key
 * rises from there; it rarely rises far, since keys come nearly in order and
 * the last one is among the latest. */
static void heap_pop(struct bb_cap *c)
{
	struct cap_key last = c->out->heap[--c->out->nheap];
	size_t i = 0, n = c->out->nheap;
	if (!n)
		return;
	for (;;) {
		size_t l = 2 * i + 1;
		if (l >= n)
			break;
		size_t m = l + 1 < n && before(&c->out->heap[l + 1], &c->out->heap[l]) ? l + 1 : l;
		c->out->heap[i] = c->out->heap[m];
		i = m;
	}
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!before(&last, &c->out->heap[p]))
			break;
		c->out->heap[i] = c->out->heap[p];
		i = p;
	}
	c->out->heap[i] = last;
}

static struct cap_rec *rec_alloc(struct bb_cap *c, uint32_t *idx)
{
	if (c->out->nfree == 0) {
		size_t old = c->out->npool, grow = old ? old : 256;
		c->out->pool = bb_xrealloc(c->out->pool, (old + grow) * sizeof *c->out->pool);
		c->out->freelist = bb_xrealloc(c->out->freelist, (old + grow) * sizeof *c->out->freelist);
		for (size_t i = 0; i < grow; i++)
			c->out->freelist[c->out->nfree++] = (uint32_t)(old + grow - 1 - i);
		c->out->npool = old + grow;
	}
	*idx = c->out->freelist[--c->out->nfree];
	return &c->out->pool[*idx];
}

/* bb_time_format, with the seconds kept from the last call: records come
 * in time order, so most share them. */
static size_t end_format(struct bb_cap *c, int64_t ns, char *buf)
{
	if (ns < 0)
		return bb_time_format(ns, buf);
	int64_t sec = ns / BB_NS_PER_S;
	uint32_t frac = (uint32_t)(ns % BB_NS_PER_S);
	if (sec != c->out->end_sec || c->out->end_len == 0) {
		size_t n = bb_time_format(ns, c->out->end_str);
		c->out->end_len = n - 9; /* through the dot */
		c->out->end_sec = sec;
	}
	static const char pairs[201] =
		"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
		"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
		"8081828384858687888990919293949596979899";
	memcpy(buf, c->out->end_str, c->out->end_len);
	char *p = buf + c->out->end_len;
	p[8] = (char)('0' + frac % 10);
	frac /= 10;
	for (int i = 6; i >= 0; i -= 2) { /* two digits per division */
		memcpy(p + i, pairs + 2 * (frac % 100), 2);
		frac /= 100;
	}
	p[9] = '\0';
	return c->out->end_len + 9;
}

/* tok= and ctx= of r into at (up to two), their text in tok and ctx. */
static size_t tok_attrs(const struct cap_rec *r, struct bb_attr *at, char *tok, char *ctx)
{
	size_t na = 0;
	if (!r->has_toks)
		return 0;
	size_t tl = bb_tok_format(&r->toks, tok, BB_TOK_MAX * 17);
	if (tl) {
		at[na].key = "tok";
		at[na].key_len = 3;
		at[na].val = tok;
		at[na].val_len = (uint32_t)tl;
		na++;
	}
	if (bb_tok_format_ctx(&r->toks, ctx, 17)) {
		at[na].key = "ctx";
		at[na].key_len = 3;
		at[na].val = ctx;
		at[na].val_len = 16;
		na++;
	}
	return na;
}

static void write_rec(struct bb_cap *c, const struct cap_rec *r)
{
	struct bb_attr at[6];
	char end[BB_TIME_BUFSZ], len[24], tok[BB_TOK_MAX * 17], ctx[17];
	size_t na = 0;
	at[na].key = "proto";
	at[na].key_len = 5;
	at[na].val = r->proto;
	at[na].val_len = (uint32_t)strlen(r->proto);
	na++;
	if (r->req_len) {
		at[na].key = "req";
		at[na].key_len = 3;
		at[na].val = r->req;
		at[na].val_len = r->req_len;
		na++;
	}
	at[na].key = "end";
	at[na].key_len = 3;
	at[na].val = end;
	at[na].val_len = (uint32_t)end_format(c, r->end_ns, end);
	na++;
	at[na].key = "len";
	at[na].key_len = 3;
	/* Digits by hand: this runs once per record. */
	char *e = len + sizeof len, *q = e;
	uint64_t v = r->len;
	do {
		*--q = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	at[na].val = q;
	at[na].val_len = (uint32_t)(e - q);
	na++;
	na += tok_attrs(r, at + na, tok, ctx);
	if (r->ts_ns < c->out->last_written_ns)
		c->st.late++;
	else
		c->out->last_written_ns = r->ts_ns;
	c->st.messages++;
	/* A write error sticks in the writer; bb_cap_finish reports it. */
	bb_writer_put(c->w, r->ts_ns, r->op, r->sender, r->receiver, r->id, r->id_len, at, na, NULL);
}

/* ---- the watermark: a heap of flows by open time ---- */

static void wm_set(struct bb_cap *c, size_t i, struct cap_conn *k)
{
	c->out->wm[i] = k;
	k->wm_slot = i;
}

static void wm_up(struct bb_cap *c, size_t i)
{
	struct cap_conn *k = c->out->wm[i];
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (c->out->wm[p]->open_ns <= k->open_ns)
			break;
		wm_set(c, i, c->out->wm[p]);
		i = p;
	}
	wm_set(c, i, k);
}

static void wm_down(struct bb_cap *c, size_t i)
{
	struct cap_conn *k = c->out->wm[i];
	for (;;) {
		size_t l = 2 * i + 1, m;
		if (l >= c->out->nwm)
			break;
		m = l + 1 < c->out->nwm && c->out->wm[l + 1]->open_ns < c->out->wm[l]->open_ns ? l + 1 : l;
		if (c->out->wm[m]->open_ns >= k->open_ns)
			break;
		wm_set(c, i, c->out->wm[m]);
		i = m;
	}
	wm_set(c, i, k);
}

void cap_wm_remove(struct cap_conn *k)
{
	struct bb_cap *c = k->cap;
	size_t i = k->wm_slot;
	if (i == SIZE_MAX)
		return;
	k->wm_slot = SIZE_MAX;
	struct cap_conn *last = c->out->wm[--c->out->nwm];
	if (last == k)
		return;
	wm_set(c, i, last);
	wm_up(c, i);
	wm_down(c, last->wm_slot);
}

/* Recomputes the oldest lease of d after some went. */
static void lease_min(struct cap_dirbuf *d)
{
	d->lease_min = INT64_MAX;
	for (int i = 0; i < d->nlease; i++)
		if (d->lease[i].ts < d->lease_min)
			d->lease_min = d->lease[i].ts;
}

/* The oldest time at least floor in direction d of k, or INT64_MAX. */
static int64_t dir_open(const struct cap_dirbuf *d, int64_t floor)
{
	int64_t t = d->nlease ? d->lease_min : INT64_MAX;
	if (t < floor) { /* rare: a time older than the flow was given up on */
		t = INT64_MAX;
		for (int i = 0; i < d->nlease; i++)
			if (d->lease[i].ts < t && d->lease[i].ts >= floor)
				t = d->lease[i].ts;
	}
	if (d->used_pos < d->next_pos && d->nmarks > d->mark0) {
		/* Bytes not consumed yet: a message may start at any of them. */
		size_t end = d->marks_unordered ? d->nmarks : d->mark0 + 1;
		for (size_t i = d->mark0; i < end; i++)
			if (d->marks[i].ts < t && d->marks[i].ts >= floor)
				t = d->marks[i].ts;
	}
	return t;
}

void cap_wm_update(struct cap_conn *k)
{
	struct bb_cap *c = k->cap;
	if (c->o.fixed_hold)
		return;
	int64_t t = dir_open(&k->d[0], k->floor_ns), u = dir_open(&k->d[1], k->floor_ns);
	if (u < t)
		t = u;
	if (k->held_ns < t && k->held_ns >= k->floor_ns)
		t = k->held_ns;
	if (k->pinned)
		t = INT64_MIN; /* holds the watermark at the window */
	int64_t old = k->open_ns;
	k->open_ns = t;
	if (t == INT64_MAX) {
		cap_wm_remove(k);
	} else if (k->wm_slot == SIZE_MAX) {
		if (c->out->nwm == c->out->capwm) {
			c->out->capwm = c->out->capwm ? 2 * c->out->capwm : 256;
			c->out->wm = bb_xrealloc(c->out->wm, c->out->capwm * sizeof *c->out->wm);
		}
		wm_set(c, c->out->nwm++, k);
		wm_up(c, k->wm_slot);
	} else if (t < old) {
		wm_up(c, k->wm_slot);
	} else if (t > old) {
		wm_down(c, k->wm_slot);
	}
}

void cap_wm_lease(struct cap_conn *k, int dir, uint64_t pos, int64_t ts)
{
	if (k->cap->o.fixed_hold)
		return;
	struct cap_dirbuf *d = &k->d[dir];
	struct cap_lease *l = d->lease;
	if (d->nlease && l[d->nlease - 1].ts == ts && l[d->nlease - 1].lo <= pos &&
	    pos <= l[d->nlease - 1].hi)
		return; /* asked again */
	if (d->nlease == CAP_LEASES) {
		/* Full (a long message asked for many times): the two before the
		 * latest merge, which keeps the oldest ones (the starts of the
		 * oldest messages) and the latest apart. A merged lease ends only
		 * with a message that covers it whole. */
		struct cap_lease *a = &l[CAP_LEASES - 3], *b = &l[CAP_LEASES - 2];
		a->lo = a->lo < b->lo ? a->lo : b->lo;
		a->hi = a->hi > b->hi ? a->hi : b->hi;
		a->ts = a->ts < b->ts ? a->ts : b->ts;
		*b = l[CAP_LEASES - 1];
		d->nlease--;
	}
	if (d->nlease == 0 || ts < d->lease_min)
		d->lease_min = ts;
	l[d->nlease].lo = l[d->nlease].hi = pos;
	l[d->nlease].ts = ts;
	d->nlease++;
}

/* The message m of k was emitted: the leases that were its own end. */
static void lease_end(struct cap_conn *k, const struct bb_dec_msg *m)
{
	if (m->dir < 0 || m->dir > 1)
		return;
	struct cap_dirbuf *d = &k->d[m->dir];
	struct cap_lease *l = d->lease;
	int n = d->nlease, first = -1;
	if (n == 0)
		return;
	const struct cap_lease *last = &l[n - 1];
	for (int i = 0; i < n; i++) {
		if (l[i].ts != m->ts_ns || l[i].lo != l[i].hi)
			continue;
		if (first < 0)
			first = i;
		if (m->len > 0 && last->ts == m->end_ns && last->hi == l[i].lo + m->len - 1) {
			/* Contiguous: every lease inside the message is its own. */
			uint64_t lo = l[i].lo, hi = last->hi;
			int j = 0;
			for (int e = 0; e < n; e++)
				if (!(l[e].lo >= lo && l[e].hi <= hi))
					l[j++] = l[e];
			d->nlease = j;
			lease_min(d);
			return;
		}
	}
	k->cap->out->wm_fallback++;
	if (first >= 0) {
		memmove(l + first, l + first + 1, (size_t)(n - first - 1) * sizeof *l);
		d->nlease--;
		lease_min(d);
	}
}

void cap_out_put(struct cap_conn *k, const struct bb_dec_msg *m)
{
	struct bb_cap *c = k->cap;
	uint32_t idx;
	struct cap_rec *rp = rec_alloc(c, &idx);
	int from_client = m->dir == BB_DIR_C2S;
	const char *cn = k->cnode, *sn = k->snode;
	rp->ts_ns = m->ts_ns;
	rp->end_ns = m->end_ns < m->ts_ns ? m->ts_ns : m->end_ns;
	rp->seq = c->out->recseq++;
	rp->len = m->len;
	rp->op = m->op;
	rp->proto = k->dec >= 0 ? bb_dec_at((size_t)k->dec)->name : "-";
	rp->sender = from_client ? cn : sn;
	rp->receiver = from_client ? sn : cn;
	size_t il = m->id_len < sizeof rp->id ? m->id_len : sizeof rp->id - 1;
	memcpy(rp->id, m->id, il);
	rp->id_len = (uint16_t)il;
	size_t rl = m->req && m->req_len < sizeof rp->req ? m->req_len : m->req ? sizeof rp->req - 1 : 0;
	if (rl)
		memcpy(rp->req, m->req, rl);
	rp->req_len = (uint16_t)rl;
	rp->has_toks = m->toks != NULL;
	if (m->toks)
		rp->toks = *m->toks;
	struct cap_key key = {rp->ts_ns, rp->seq, idx};
	heap_push(c, &key);
	if (!c->o.fixed_hold) {
		lease_end(k, m);
		if (k->pinned) {
			k->pinned = 0; /* the slow message, most likely */
			cap_wm_update(k);
		}
	}
}

/* k has been open since before cutoff (the window): what it opened before
 * then no longer counts. While it is not silent (a slow message going on),
 * it holds the watermark at the window, as the fixed hold did, until it
 * emits a message; a silent one (a message that will not end, or a lease
 * its message did not end) is given up on at once. */
static void wm_expire(struct cap_conn *k, int64_t cutoff)
{
	struct bb_cap *c = k->cap;
	c->out->wm_expired++;
	k->floor_ns = cutoff;
	k->pinned = c->now_ns - k->last_ns < c->o.reorder_ns / 2;
	for (int i = 0; i < 2; i++) {
		struct cap_dirbuf *d = &k->d[i];
		int j = 0;
		for (int e = 0; e < d->nlease; e++)
			if (d->lease[e].ts >= cutoff)
				d->lease[j++] = d->lease[e];
		d->nlease = j;
		lease_min(d);
	}
	cap_wm_update(k);
}

void cap_out_release(struct bb_cap *c, int flush_all)
{
	int64_t cutoff = c->now_ns - c->o.reorder_ns, upto = cutoff;
	if (!c->o.fixed_hold) {
		while (c->out->nwm > 0 && c->out->wm[0]->open_ns < cutoff) {
			struct cap_conn *k = c->out->wm[0];
			if (!k->pinned) {
				wm_expire(k, cutoff);
			} else if (c->now_ns - k->last_ns >= c->o.reorder_ns / 2) {
				k->pinned = 0; /* gone silent */
				cap_wm_update(k);
			} else {
				break;
			}
		}
		upto = c->now_ns - c->back_ns - CAP_WM_SLACK_NS;
		if (c->out->nwm > 0 && c->out->wm[0]->open_ns < upto)
			upto = c->out->wm[0]->open_ns;
		/* The watermark of CAP_WM_LAG calls ago, if lower: a packet whose
		 * time goes back (within that many) finds its records unwritten. */
		int64_t lag = c->out->wm_lag[c->out->wm_lag_i];
		c->out->wm_lag[c->out->wm_lag_i] = upto;
		c->out->wm_lag_i = (c->out->wm_lag_i + 1) % CAP_WM_LAG;
		if (lag < upto)
			upto = lag;
		if (upto < cutoff)
			upto = cutoff;
	}
	while (c->out->nheap > 0 && (flush_all || c->out->heap[0].ts_ns <= upto)) {
		uint32_t idx = c->out->heap[0].idx;
		write_rec(c, &c->out->pool[idx]);
		c->out->freelist[c->out->nfree++] = idx;
		heap_pop(c);
	}
}

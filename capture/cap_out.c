/* cap_out.c - records out: node names, a time-ordered holding heap, the writer */
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
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "capture/cap_int.h"

/* Packet times may go back a little (several queues, merged sources): the
 * watermark stays this far behind the packet clock, and as far as the
 * clock ever went back. */
#define CAP_WM_SLACK_NS (1000 * INT64_C(1000))

static const char *lookup_name(const struct bb_cap *c, int fam, const uint8_t *addr)
{
	size_t len = fam == 4 ? 4 : 16;
	for (size_t i = 0; i < c->nnames; i++)
		if (c->names[i].fam == fam && memcmp(c->names[i].addr, addr, len) == 0)
			return c->names[i].name;
	return NULL;
}

void cap_addr_name(const struct bb_cap *c, const struct cap_addr *a, uint16_t port,
                   int with_port, char *buf, size_t cap)
{
	char ip[INET6_ADDRSTRLEN + 2];
	int v4 = cap_addr_family(a) == 4;
	const char *nm = v4 ? lookup_name(c, 4, a->b + 12) : lookup_name(c, 6, a->b);
	if (nm) {
		snprintf(ip, sizeof ip, "%s", nm);
	} else if (!v4) {
		char t[INET6_ADDRSTRLEN];
		inet_ntop(AF_INET6, a->b, t, sizeof t);
		/* "[addr]:port" keeps the port separable from the address. */
		snprintf(ip, sizeof ip, with_port ? "[%s]" : "%s", t);
	} else {
		inet_ntop(AF_INET, a->b + 12, ip, sizeof ip);
	}
	if (with_port)
		snprintf(buf, cap, "%s:%u", ip, port);
	else
		snprintf(buf, cap, "%s", ip);
}

static int before(const struct cap_key *a, const struct cap_key *b)
{
	return a->ts_ns < b->ts_ns || (a->ts_ns == b->ts_ns && a->seq < b->seq);
}

static void heap_push(struct bb_cap *c, const struct cap_key *r)
{
	if (c->nheap == c->capheap) {
		c->capheap = c->capheap ? c->capheap * 2 : 1024;
		c->heap = bb_xrealloc(c->heap, c->capheap * sizeof *c->heap);
	}
	size_t i = c->nheap++;
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!before(r, &c->heap[p]))
			break;
		c->heap[i] = c->heap[p];
		i = p;
	}
	c->heap[i] = *r;
}

/* Removes the least key. Bottom-up: the hole at the root goes down to a leaf
 * along the lesser children (one comparison a level), then the last key
 * rises from there; it rarely rises far, since keys come nearly in order and
 * the last one is among the latest. */
static void heap_pop(struct bb_cap *c)
{
	struct cap_key last = c->heap[--c->nheap];
	size_t i = 0, n = c->nheap;
	if (!n)
		return;
	for (;;) {
		size_t l = 2 * i + 1;
		if (l >= n)
			break;
		size_t m = l + 1 < n && before(&c->heap[l + 1], &c->heap[l]) ? l + 1 : l;
		c->heap[i] = c->heap[m];
		i = m;
	}
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!before(&last, &c->heap[p]))
			break;
		c->heap[i] = c->heap[p];
		i = p;
	}
	c->heap[i] = last;
}

static struct cap_rec *rec_alloc(struct bb_cap *c, uint32_t *idx)
{
	if (c->nfree == 0) {
		size_t old = c->npool, grow = old ? old : 256;
		c->pool = bb_xrealloc(c->pool, (old + grow) * sizeof *c->pool);
		c->freelist = bb_xrealloc(c->freelist, (old + grow) * sizeof *c->freelist);
		for (size_t i = 0; i < grow; i++)
			c->freelist[c->nfree++] = (uint32_t)(old + grow - 1 - i);
		c->npool = old + grow;
	}
	*idx = c->freelist[--c->nfree];
	return &c->pool[*idx];
}

/* bb_time_format, with the seconds kept from the last call: records come
 * in time order, so most share them. */
static size_t end_format(struct bb_cap *c, int64_t ns, char *buf)
{
	if (ns < 0)
		return bb_time_format(ns, buf);
	int64_t sec = ns / BB_NS_PER_S;
	uint32_t frac = (uint32_t)(ns % BB_NS_PER_S);
	if (sec != c->end_sec || c->end_len == 0) {
		size_t n = bb_time_format(ns, c->end_str);
		c->end_len = n - 9; /* through the dot */
		c->end_sec = sec;
	}
	static const char pairs[201] =
		"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
		"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
		"8081828384858687888990919293949596979899";
	memcpy(buf, c->end_str, c->end_len);
	char *p = buf + c->end_len;
	p[8] = (char)('0' + frac % 10);
	frac /= 10;
	for (int i = 6; i >= 0; i -= 2) { /* two digits per division */
		memcpy(p + i, pairs + 2 * (frac % 100), 2);
		frac /= 100;
	}
	p[9] = '\0';
	return c->end_len + 9;
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
	if (r->ts_ns < c->last_written_ns)
		c->st.late++;
	else
		c->last_written_ns = r->ts_ns;
	c->st.messages++;
	/* A write error sticks in the writer; bb_cap_finish reports it. */
	bb_writer_put(c->w, r->ts_ns, r->op, r->sender, r->receiver, r->id, r->id_len, at, na, NULL);
}

/* ---- the watermark: a heap of flows by open time ---- */

static void wm_set(struct bb_cap *c, size_t i, struct cap_conn *k)
{
	c->wm[i] = k;
	k->wm_slot = i;
}

static void wm_up(struct bb_cap *c, size_t i)
{
	struct cap_conn *k = c->wm[i];
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (c->wm[p]->open_ns <= k->open_ns)
			break;
		wm_set(c, i, c->wm[p]);
		i = p;
	}
	wm_set(c, i, k);
}

static void wm_down(struct bb_cap *c, size_t i)
{
	struct cap_conn *k = c->wm[i];
	for (;;) {
		size_t l = 2 * i + 1, m;
		if (l >= c->nwm)
			break;
		m = l + 1 < c->nwm && c->wm[l + 1]->open_ns < c->wm[l]->open_ns ? l + 1 : l;
		if (c->wm[m]->open_ns >= k->open_ns)
			break;
		wm_set(c, i, c->wm[m]);
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
	struct cap_conn *last = c->wm[--c->nwm];
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
		if (c->nwm == c->capwm) {
			c->capwm = c->capwm ? 2 * c->capwm : 256;
			c->wm = bb_xrealloc(c->wm, c->capwm * sizeof *c->wm);
		}
		wm_set(c, c->nwm++, k);
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
	k->cap->wm_fallback++;
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
	rp->seq = c->recseq++;
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
	c->wm_expired++;
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
		while (c->nwm > 0 && c->wm[0]->open_ns < cutoff) {
			struct cap_conn *k = c->wm[0];
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
		if (c->nwm > 0 && c->wm[0]->open_ns < upto)
			upto = c->wm[0]->open_ns;
		/* The watermark of CAP_WM_LAG calls ago, if lower: a packet whose
		 * time goes back (within that many) finds its records unwritten. */
		int64_t lag = c->wm_lag[c->wm_lag_i];
		c->wm_lag[c->wm_lag_i] = upto;
		c->wm_lag_i = (c->wm_lag_i + 1) % CAP_WM_LAG;
		if (lag < upto)
			upto = lag;
		if (upto < cutoff)
			upto = cutoff;
	}
	while (c->nheap > 0 && (flush_all || c->heap[0].ts_ns <= upto)) {
		uint32_t idx = c->heap[0].idx;
		write_rec(c, &c->pool[idx]);
		c->freelist[c->nfree++] = idx;
		heap_pop(c);
	}
}

static size_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603u;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211u;
	return (size_t)h;
}

const char *cap_intern(struct bb_cap *c, const char *s)
{
	if ((c->ninterned + 1) * 2 > c->intern_size) {
		size_t ns = c->intern_size ? c->intern_size * 2 : 256;
		char **t = bb_xcalloc(ns, sizeof *t);
		for (size_t i = 0; i < c->intern_size; i++) {
			if (!c->interned[i])
				continue;
			size_t j = str_hash(c->interned[i]) & (ns - 1);
			while (t[j])
				j = (j + 1) & (ns - 1);
			t[j] = c->interned[i];
		}
		free(c->interned);
		c->interned = t;
		c->intern_size = ns;
	}
	size_t j = str_hash(s) & (c->intern_size - 1);
	while (c->interned[j]) {
		if (strcmp(c->interned[j], s) == 0)
			return c->interned[j];
		j = (j + 1) & (c->intern_size - 1);
	}
	c->interned[j] = bb_xstrndup(s, strlen(s));
	c->ninterned++;
	return c->interned[j];
}

void cap_intern_free(struct bb_cap *c)
{
	for (size_t i = 0; i < c->intern_size; i++)
		free(c->interned[i]);
	free(c->interned);
	c->interned = NULL;
	c->intern_size = c->ninterned = 0;
}

int cap_names_load(struct bb_cap *c, const char *path, struct bb_err *err)
{
	FILE *f = fopen(path, "r");
	char line[1024];
	unsigned ln = 0;
	if (!f) {
		bb_err_set(err, "%s: %s", path, strerror(errno));
		return BB_ERR_IO;
	}
	while (fgets(line, sizeof line, f)) {
		ln++;
		char *h = strchr(line, '#');
		if (h)
			*h = '\0';
		char *save = NULL;
		char *addr = strtok_r(line, " \t\r\n", &save);
		char *name = addr ? strtok_r(NULL, " \t\r\n", &save) : NULL;
		if (!addr)
			continue;
		struct cap_name nm;
		memset(&nm, 0, sizeof nm);
		if (inet_pton(AF_INET, addr, nm.addr) == 1)
			nm.fam = 4;
		else if (inet_pton(AF_INET6, addr, nm.addr) == 1)
			nm.fam = 6;
		if (!nm.fam || !name) {
			bb_err_set(err, "%s:%u: expected \"ADDRESS NAME\"", path, ln);
			fclose(f);
			return BB_ERR_PARSE;
		}
		nm.name = bb_xstrndup(name, strlen(name));
		c->names = bb_xrealloc(c->names, (c->nnames + 1) * sizeof *c->names);
		c->names[c->nnames++] = nm;
	}
	fclose(f);
	return 0;
}

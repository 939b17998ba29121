/* cap_frag.c - IPv4 and IPv6 fragment reassembly, bounded, overlaps rejected */
/* SPDX-License-Identifier: MIT */
/*
 * One table for both families. A datagram is keyed by (family, source,
 * destination, identification, and for IPv4 the protocol): RFC 791 section
 * 3.2, RFC 8200 section 4.5. Its fragments are copied into one buffer that
 * keeps CAP_FRAG_HEADROOM bytes in front, so the caller can put an IP header
 * there and hand on one contiguous packet.
 *
 * Rules (RFC 8200 4.5 and RFC 5722 for IPv6, the same applied to IPv4):
 *  - a fragment that overlaps another of the same datagram, other than an
 *    exact duplicate, discards the whole datagram, and every fragment of it
 *    that comes later until the entry times out (RFC 5722 section 4);
 *  - an exact duplicate (same offset, same length) is dropped alone: a
 *    passive capture sees them (retransmission, "-i any" seeing a packet on
 *    several interfaces);
 *  - a fragment other than the last whose length is not a multiple of 8,
 *    a last fragment that disagrees with an earlier one about the end, or
 *    data beyond 65,535 bytes discards the datagram;
 *  - at most CAP_FRAG_MAX datagrams are pending (the oldest is dropped when
 *    full) with CAP_FRAG_PIECES fragments each; an incomplete datagram is
 *    dropped after CAP_FRAG_V4_NS (IPv4, as Linux' ipfrag_time) or
 *    CAP_FRAG_V6_NS (IPv6, RFC 8200: 60 s) of packet time.
 */
#include <stdlib.h>
#include <string.h>

#include "capture/cap_int.h"

#define CAP_FRAG_MAX 1024
#define CAP_FRAG_PIECES 128
#define CAP_FRAG_LIMIT 65535u
#define CAP_FRAG_V4_NS (30 * BB_NS_PER_S)
#define CAP_FRAG_V6_NS (60 * BB_NS_PER_S)

struct frag_ent {
	struct cap_frag_key key;
	int used;
	int dead;                   /* overlap seen: drop every fragment until timeout */
	int64_t first_ns;
	size_t total;               /* datagram length once the last fragment is seen; 0 before */
	size_t have;                /* bytes received (no overlaps, so a plain sum) */
	size_t npieces;
	struct { uint32_t off, len; } pieces[CAP_FRAG_PIECES];
	uint8_t hdr_next;           /* protocol of the offset-0 fragment (IPv6) */
	uint8_t *buf;               /* CAP_FRAG_HEADROOM + data */
	size_t cap;
	uint16_t chain;             /* index + 1 of the next entry in its bucket, or 0 */
};

struct cap_frags {
	struct frag_ent *ent;       /* CAP_FRAG_MAX, allocated at the first fragment */
	uint16_t *head;             /* per bucket: index + 1 of its first entry, or 0 */
	size_t nused, cursor;
	uint8_t *out;               /* the last datagram completed (returned to the caller) */
};

struct cap_frags *cap_frags_new(void)
{
	return bb_xcalloc(1, sizeof(struct cap_frags));
}

static size_t key_slot(const struct cap_frag_key *k)
{
	uint64_t h = 1469598103934665603u;
	const uint8_t *b = (const uint8_t *)k;
	for (size_t i = 0; i < sizeof *k; i++)
		h = (h ^ b[i]) * 1099511628211u;
	return (size_t)(h % CAP_FRAG_MAX);
}

static void ent_clear(struct cap_frags *t, struct frag_ent *e)
{
	if (!e->used)
		return;
	uint16_t me = (uint16_t)(e - t->ent + 1);
	uint16_t *pp = &t->head[key_slot(&e->key)];
	while (*pp && *pp != me)
		pp = &t->ent[*pp - 1].chain;
	if (*pp)
		*pp = e->chain;
	free(e->buf);
	memset(e, 0, sizeof *e);
	t->nused--;
}

void cap_frags_free(struct cap_frags *t)
{
	if (!t)
		return;
	for (size_t i = 0; t->ent && i < CAP_FRAG_MAX; i++)
		ent_clear(t, &t->ent[i]);
	free(t->ent);
	free(t->head);
	free(t->out);
	free(t);
}

static int64_t timeout_of(const struct frag_ent *e)
{
	return e->key.fam == 6 ? CAP_FRAG_V6_NS : CAP_FRAG_V4_NS;
}

void cap_frags_expire(struct cap_frags *t, int64_t now_ns, struct bb_cap_stats *st)
{
	if (t->nused == 0)
		return;
	for (size_t i = 0; i < CAP_FRAG_MAX; i++) {
		struct frag_ent *e = &t->ent[i];
		if (e->used && now_ns - e->first_ns > timeout_of(e)) {
			if (!e->dead)
				st->frag_timeout++;
			ent_clear(t, e);
		}
	}
}

/* The entry of key k, or a new one (the oldest pending datagram is dropped,
 * counted, when the table is full). */
static struct frag_ent *lookup(struct cap_frags *t, const struct cap_frag_key *k, int64_t now_ns,
                               struct bb_cap_stats *st)
{
	if (!t->ent) {
		t->ent = bb_xcalloc(CAP_FRAG_MAX, sizeof *t->ent);
		t->head = bb_xcalloc(CAP_FRAG_MAX, sizeof *t->head);
	}
	size_t b = key_slot(k);
	for (uint16_t i = t->head[b]; i; i = t->ent[i - 1].chain)
		if (memcmp(&t->ent[i - 1].key, k, sizeof *k) == 0)
			return &t->ent[i - 1];
	struct frag_ent *e = NULL;
	if (t->nused == CAP_FRAG_MAX) {
		e = &t->ent[0];
		for (size_t i = 1; i < CAP_FRAG_MAX; i++)
			if (t->ent[i].first_ns < e->first_ns)
				e = &t->ent[i];
		st->frag_dropped++;
		ent_clear(t, e);
	} else {
		while (t->ent[t->cursor].used)
			t->cursor = (t->cursor + 1) % CAP_FRAG_MAX;
		e = &t->ent[t->cursor];
	}
	e->used = 1;
	e->key = *k;
	e->first_ns = now_ns;
	e->chain = t->head[b];
	t->head[b] = (uint16_t)(e - t->ent + 1);
	t->nused++;
	return e;
}

static void discard(struct frag_ent *e)
{
	free(e->buf);
	e->buf = NULL;
	e->cap = 0;
	e->dead = 1;
}

int cap_frag_add(struct cap_frags *t, const struct cap_frag_key *k, int64_t now_ns, size_t off,
                 int more, uint8_t next, const uint8_t *p, size_t n, uint8_t **out, size_t *len,
                 uint8_t *first_next, struct bb_cap_stats *st)
{
	st->frags++;
	struct frag_ent *e = lookup(t, k, now_ns, st);
	if (e->dead) {
		st->frag_dropped++;
		return 0;
	}
	/* Malformed: a middle fragment not a multiple of 8, data past 64 KB,
	 * an end that moves. */
	int bad = (more && n % 8 != 0) || n > CAP_FRAG_LIMIT || off > CAP_FRAG_LIMIT - n ||
	          (e->total && (off + n > e->total || (!more && off + n != e->total))) ||
	          n == 0;
	for (size_t i = 0; !bad && i < e->npieces; i++) {
		size_t po = e->pieces[i].off, pl = e->pieces[i].len;
		if (po == off && pl == n) {
			st->frag_dup++;
			return 0;
		}
		if (off < po + pl && po < off + n) {
			st->frag_overlap++;
			bad = 1;
		}
		if (!more && po + pl > off + n)
			bad = 1; /* data past the end */
	}
	if (bad || e->npieces == CAP_FRAG_PIECES) {
		st->frag_dropped++;
		discard(e);
		return 0;
	}
	size_t need = CAP_FRAG_HEADROOM + off + n;
	if (need > e->cap) {
		size_t nc = e->cap ? e->cap : 2048;
		while (nc < need)
			nc *= 2;
		e->buf = bb_xrealloc(e->buf, nc);
		e->cap = nc;
	}
	memcpy(e->buf + CAP_FRAG_HEADROOM + off, p, n);
	e->pieces[e->npieces].off = (uint32_t)off;
	e->pieces[e->npieces].len = (uint32_t)n;
	e->npieces++;
	e->have += n;
	if (off == 0)
		e->hdr_next = next;
	if (!more)
		e->total = off + n;
	if (!e->total || e->have != e->total)
		return 0;
	/* Complete: hand the buffer over (kept until the next completion). */
	free(t->out);
	t->out = e->buf;
	*out = e->buf;
	*len = e->total;
	*first_next = e->hdr_next;
	e->buf = NULL;
	ent_clear(t, e);
	st->frag_reassembled++;
	return 1;
}

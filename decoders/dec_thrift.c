/* dec_thrift.c - Apache Thrift binary and compact protocols, framed and unframed */
/* SPDX-License-Identifier: MIT */
/*
 * Apache Thrift doc/specs/thrift-binary-protocol.md, thrift-compact-protocol.md
 * and thrift-rpc.md (message types, framed transport).
 *
 *   framed:         length:32 then one message of that many bytes
 *   binary strict:  0x80 0x01 0x00 mtype:8  name-length:32 name  seqid:32  struct
 *   binary old:     name-length:32 name  mtype:8  seqid:32  struct
 *   compact:        0x82  mtype:3|version:5 (1)  seqid:varint  name-length:varint
 *                   name  struct
 *   mtype:          1 CALL, 2 REPLY, 3 EXCEPTION, 4 ONEWAY
 *
 * id = "c<connection>.<seqid>"; req = the method name. CALL and ONEWAY are
 * calls (a ONEWAY gets no reply), REPLY and EXCEPTION returns. A framed
 * message is skipped as it arrives once its header is read; an unframed one
 * is walked field by field to find its end (types of both protocols; nesting
 * up to 64), and waits whole in the stream up to 1 MB. There is no standard
 * port: the probe recognises a first message of either protocol, framed or
 * not, and --decode-as names others. Over UDP each datagram is one message.
 */
#include <stddef.h>

#include "decoders/dec_int.h"

#define TH_NAME 64
#define TH_FRAME_MAX (64u << 20)
#define TH_UNFRAMED_MAX (1u << 20)
#define TH_DEPTH 64

enum { PR_STRICT = 1, PR_OLD, PR_COMPACT };

struct th_dir {
	uint8_t hunting;
	uint8_t in_frame;       /* skipping the rest of a frame */
	uint8_t mtype;
	uint32_t seqid;
	uint64_t left;
	int64_t t0, t1;
	uint64_t len;
	uint8_t nlen;
	char name[TH_NAME];
};

struct th_state {
	struct th_dir d[2];
	struct dec_match m;
};

struct th_hdr {
	int proto;
	uint8_t mtype;
	uint32_t seqid;
	const uint8_t *name;
	size_t nlen;
};

/* Reads a message header. 0: done; 1: more bytes needed; -1: not Thrift. */
static int read_header(struct bb_rd *r, struct th_hdr *h)
{
	struct bb_rd pk = *r;
	uint8_t b0 = bb_rd_u8(&pk);
	if (!bb_rd_ok(&pk))
		return 1;
	if (b0 == 0x82) {
		bb_rd_skip(r, 1);
		uint8_t vt = bb_rd_u8(r);
		h->proto = PR_COMPACT;
		h->mtype = (uint8_t)(vt >> 5);
		h->seqid = bb_rd_uvarint32(r);
		uint32_t nl = bb_rd_uvarint32(r);
		if (!bb_rd_ok(r))
			return 1;
		if ((vt & 0x1f) != 1 || nl > 1024)
			return -1;
		h->nlen = nl;
		h->name = bb_rd_bytes(r, nl);
	} else if (b0 == 0x80) {
		uint32_t v = bb_rd_be32(r);
		uint32_t nl = bb_rd_be32(r);
		if (!bb_rd_ok(r))
			return 1;
		if ((v & 0xffffff00u) != 0x80010000u || nl > 1024)
			return -1;
		h->proto = PR_STRICT;
		h->mtype = (uint8_t)(v & 0xff);
		h->nlen = nl;
		h->name = bb_rd_bytes(r, nl);
		h->seqid = bb_rd_be32(r);
	} else {
		uint32_t nl = bb_rd_be32(r);
		if (!bb_rd_ok(r))
			return 1;
		if (nl == 0 || nl > 255)
			return -1;
		h->proto = PR_OLD;
		h->nlen = nl;
		h->name = bb_rd_bytes(r, nl);
		h->mtype = bb_rd_u8(r);
		h->seqid = bb_rd_be32(r);
	}
	if (!bb_rd_ok(r))
		return 1;
	if (h->mtype < 1 || h->mtype > 4)
		return -1;
	struct bb_rd nr = bb_rd_make(h->name, h->nlen);
	while (bb_rd_left(&nr)) {
		uint8_t c = bb_rd_u8(&nr);
		if (c < 0x20 || c > 0x7e)
			return -1;
	}
	return 0;
}

/* ---- skipping a struct to find an unframed message's end ---- */

struct walk {
	struct bb_rd r;
	int bad;                /* not a valid encoding (as opposed to short) */
};

static void bin_skip(struct walk *w, uint8_t type, int depth);

static void bin_struct(struct walk *w, int depth)
{
	if (depth > TH_DEPTH) {
		w->bad = 1;
		return;
	}
	while (bb_rd_ok(&w->r) && !w->bad) {
		uint8_t t = bb_rd_u8(&w->r);
		if (t == 0)
			return;
		bb_rd_skip(&w->r, 2);
		bin_skip(w, t, depth + 1);
	}
}

static void bin_skip(struct walk *w, uint8_t type, int depth)
{
	uint32_t n;
	if (depth > TH_DEPTH) {
		w->bad = 1;
		return;
	}
	switch (type) {
	case 2: case 3: bb_rd_skip(&w->r, 1); break;
	case 6: bb_rd_skip(&w->r, 2); break;
	case 8: bb_rd_skip(&w->r, 4); break;
	case 4: case 10: bb_rd_skip(&w->r, 8); break;
	case 16: bb_rd_skip(&w->r, 16); break;
	case 11:
		n = bb_rd_be32(&w->r);
		if (n > 0x7fffffffu)
			w->bad = 1;
		else
			bb_rd_skip(&w->r, n);
		break;
	case 12: bin_struct(w, depth); break;
	case 13: {
		uint8_t kt = bb_rd_u8(&w->r), vt = bb_rd_u8(&w->r);
		n = bb_rd_be32(&w->r);
		if (n > 0x7fffffffu) {
			w->bad = 1;
			break;
		}
		for (uint32_t i = 0; i < n && bb_rd_ok(&w->r) && !w->bad; i++) {
			bin_skip(w, kt, depth + 1);
			bin_skip(w, vt, depth + 1);
		}
		break;
	}
	case 14:
	case 15: {
		uint8_t et = bb_rd_u8(&w->r);
		n = bb_rd_be32(&w->r);
		if (n > 0x7fffffffu) {
			w->bad = 1;
			break;
		}
		for (uint32_t i = 0; i < n && bb_rd_ok(&w->r) && !w->bad; i++)
			bin_skip(w, et, depth + 1);
		break;
	}
	default:
		w->bad = 1;
	}
}

static void cp_skip(struct walk *w, uint8_t type, int depth, int in_list);

static void cp_struct(struct walk *w, int depth)
{
	if (depth > TH_DEPTH) {
		w->bad = 1;
		return;
	}
	while (bb_rd_ok(&w->r) && !w->bad) {
		uint8_t b = bb_rd_u8(&w->r);
		if (b == 0)
			return;
		if ((b >> 4) == 0)
			bb_rd_uvarint(&w->r); /* a long-form field id */
		cp_skip(w, b & 0x0f, depth + 1, 0);
	}
}

static void cp_skip(struct walk *w, uint8_t type, int depth, int in_list)
{
	uint32_t n;
	if (depth > TH_DEPTH) {
		w->bad = 1;
		return;
	}
	switch (type) {
	case 1: case 2:
		if (in_list)
			bb_rd_skip(&w->r, 1); /* a field's boolean is in its type */
		break;
	case 3: bb_rd_skip(&w->r, 1); break;
	case 4: case 5: case 6: bb_rd_uvarint(&w->r); break;
	case 7: bb_rd_skip(&w->r, 8); break;
	case 13: bb_rd_skip(&w->r, 16); break;
	case 8:
		n = bb_rd_uvarint32(&w->r);
		bb_rd_skip(&w->r, n);
		break;
	case 12: cp_struct(w, depth); break;
	case 9:
	case 10: {
		uint8_t h = bb_rd_u8(&w->r);
		n = h >> 4;
		if (n == 15)
			n = bb_rd_uvarint32(&w->r);
		for (uint32_t i = 0; i < n && bb_rd_ok(&w->r) && !w->bad; i++)
			cp_skip(w, h & 0x0f, depth + 1, 1);
		break;
	}
	case 11: {
		n = bb_rd_uvarint32(&w->r);
		if (n == 0)
			break;
		uint8_t kv = bb_rd_u8(&w->r);
		for (uint32_t i = 0; i < n && bb_rd_ok(&w->r) && !w->bad; i++) {
			cp_skip(w, kv >> 4, depth + 1, 1);
			cp_skip(w, kv & 0x0f, depth + 1, 1);
		}
		break;
	}
	default:
		w->bad = 1;
	}
}

/* ---- messages ---- */

static void message(struct th_state *s, const struct bb_dec_ctx *ctx, int dir,
                    struct th_dir *d)
{
	char id[48];
	int il = snprintf(id, sizeof id, "c%llu.%u", (unsigned long long)ctx->conn, d->seqid);
	if (il >= (int)sizeof id)
		il = (int)sizeof id - 1;
	int call = d->mtype == 1 || d->mtype == 4;
	if (call) {
		if (d->mtype == 1)
			dec_match_put(&s->m, ctx, d->seqid, 0, 0, 0);
	} else {
		uint32_t a, b, c;
		if (!dec_match_take(&s->m, d->seqid, &a, &b, &c))
			DEC_COUNT(ctx, unmatched_ret);
	}
	dec_emit(ctx, call ? BB_CALL : BB_RET, dir, d->t0, d->t1, d->len, id, (size_t)il,
	         d->nlen ? d->name : NULL, d->nlen);
}

static void keep_header(struct th_dir *d, const struct th_hdr *h)
{
	d->mtype = h->mtype;
	d->seqid = h->seqid;
	d->nlen = (uint8_t)(h->nlen < TH_NAME ? h->nlen : TH_NAME);
	if (d->nlen)
		memcpy(d->name, h->name, d->nlen);
}

/* 1 when the bytes at p start a strict or compact header (a frame's content
 * or an unframed message), for the probe and for resynchronising. */
static int plausible(const uint8_t *p, size_t n, int old_too)
{
	struct bb_rd r = bb_rd_make(p, n);
	struct th_hdr h;
	struct bb_rd pk = r;
	uint8_t b0 = bb_rd_u8(&pk);
	if (!old_too && b0 != 0x80 && b0 != 0x82)
		return 0;
	return read_header(&r, &h) == 0 && (h.proto != PR_OLD || h.nlen >= 2);
}

/* Framing of a message starting at p: 1 framed, 0 unframed, -1 unknown,
 * 2 more bytes needed. */
static int framing(const uint8_t *p, size_t n)
{
	struct bb_rd r = bb_rd_make(p, n);
	struct bb_rd pk = r;
	uint8_t b0 = bb_rd_u8(&pk);
	if (!bb_rd_ok(&pk))
		return 2;
	if (b0 == 0x80 || b0 == 0x82)
		return 0;
	uint32_t flen = bb_rd_be32(&r);
	if (!bb_rd_ok(&r))
		return 2;
	if (flen >= 9 && flen <= TH_FRAME_MAX) {
		struct th_hdr h;
		struct bb_rd in = r;
		int rc = read_header(&in, &h);
		if (rc == 1 && bb_rd_left(&r) < 64)
			return 2;
		if (rc == 0)
			return 1;
	}
	return 0; /* perhaps the old binary form */
}

/* One message per datagram (Jaeger agents send compact over UDP). */
static void th_datagram(struct th_state *s, const struct bb_dec_ctx *ctx, int dir,
                        const uint8_t *p, size_t n)
{
	struct th_dir *d = &s->d[dir];
	struct bb_rd r = bb_rd_make(p, n);
	struct th_hdr h;
	if (framing(p, n) == 1)
		bb_rd_skip(&r, 4);
	if (read_header(&r, &h) != 0) {
		DEC_COUNT(ctx, malformed);
		return;
	}
	keep_header(d, &h);
	d->t0 = d->t1 = dec_time(ctx, dir, 0);
	d->len = n;
	message(s, ctx, dir, d);
}

static size_t th_decode(void *st, const struct bb_dec_ctx *ctx, int dir, uint64_t pos,
                        const uint8_t *p, size_t n)
{
	struct th_state *s = st;
	if (dir < 0 || dir > 1)
		return n;
	if (ctx->transport == BB_TR_UDP) {
		th_datagram(s, ctx, dir, p, n);
		return n;
	}
	struct th_dir *d = &s->d[dir];
	struct bb_rd r = bb_rd_make(p, n);
	while (bb_rd_left(&r) > 0) {
		size_t off = (size_t)(r.p - p);
		size_t left = bb_rd_left(&r);
		if (d->hunting) {
			size_t i = 0;
			int found = 0;
			for (; i + 16 <= left; i++) {
				struct bb_rd at = r, fr = r;
				bb_rd_skip(&at, i);
				bb_rd_skip(&fr, i + 4);
				if (plausible(at.p, bb_rd_left(&at), 0) ||
				    (bb_rd_ok(&fr) && plausible(fr.p, bb_rd_left(&fr), 0))) {
					found = 1;
					break;
				}
			}
			if (ctx->stats)
				ctx->stats->skipped_bytes += i;
			bb_rd_skip(&r, i);
			if (!found)
				break;
			d->hunting = 0;
			continue;
		}
		if (d->in_frame) {
			size_t take = d->left < left ? (size_t)d->left : left;
			bb_rd_skip(&r, take);
			d->left -= take;
			d->len += take;
			if (take)
				d->t1 = dec_time(ctx, dir, pos + off + take - 1);
			if (d->left == 0) {
				d->in_frame = 0;
				message(s, ctx, dir, d);
			}
			continue;
		}
		int fr = framing(r.p, left);
		if (fr == 2)
			break;
		struct th_hdr h;
		if (fr == 1) {
			struct bb_rd fm = r;
			uint32_t flen = bb_rd_be32(&fm);
			struct bb_rd in = bb_rd_make(fm.p, bb_rd_left(&fm) < flen ? bb_rd_left(&fm) : flen);
			int rc = read_header(&in, &h);
			if (rc == 1 && bb_rd_left(&fm) < flen)
				break; /* the header is not all here yet */
			if (rc != 0) {
				DEC_COUNT(ctx, malformed);
				d->hunting = 1;
				bb_rd_skip(&r, 1);
				continue;
			}
			keep_header(d, &h);
			d->t0 = dec_time(ctx, dir, pos + off);
			d->t1 = d->t0;
			d->len = 0;
			d->left = (uint64_t)flen + 4;
			d->in_frame = 1;
			continue;
		}
		/* Unframed: the whole message must be here to find its end. */
		struct walk w;
		w.r = r;
		w.bad = 0;
		int rc = read_header(&w.r, &h);
		if (rc == 0) {
			if (h.proto == PR_COMPACT)
				cp_struct(&w, 0);
			else
				bin_struct(&w, 0);
		}
		if (rc < 0 || w.bad) {
			DEC_COUNT(ctx, malformed);
			d->hunting = 1;
			bb_rd_skip(&r, 1);
			continue;
		}
		if (rc == 1 || !bb_rd_ok(&w.r)) {
			if (left < TH_UNFRAMED_MAX)
				break;
			DEC_COUNT(ctx, malformed); /* too long to hold: lose its end */
			d->hunting = 1;
			bb_rd_skip(&r, 1);
			continue;
		}
		size_t ml = (size_t)(w.r.p - r.p);
		keep_header(d, &h);
		d->t0 = dec_time(ctx, dir, pos + off);
		d->t1 = dec_time(ctx, dir, pos + off + ml - 1);
		d->len = ml;
		bb_rd_skip(&r, ml);
		message(s, ctx, dir, d);
	}
	return (size_t)(r.p - p);
}

static void th_gap(void *st, const struct bb_dec_ctx *ctx, int dir, uint64_t lost)
{
	struct th_state *s = st;
	if (dir < 0 || dir > 1)
		return;
	struct th_dir *d = &s->d[dir];
	DEC_COUNT(ctx, resync);
	if (d->in_frame && lost && lost < d->left) {
		/* The hole is inside a frame of known length. */
		d->left -= lost;
		d->len += lost;
		return;
	}
	if (d->in_frame) {
		/* Its header was seen: the message happened. */
		d->in_frame = 0;
		message(s, ctx, dir, d);
	}
	d->hunting = 1;
}

static void th_end(void *st, const struct bb_dec_ctx *ctx)
{
	struct th_state *s = st;
	for (int dir = 0; dir < 2; dir++) {
		struct th_dir *d = &s->d[dir];
		if (d->in_frame) {
			/* Cut short by the end of the capture: its header was seen. */
			d->in_frame = 0;
			message(s, ctx, dir, d);
		}
	}
}

static int th_probe(const uint8_t *p, size_t n, unsigned transport, int dir)
{
	(void)dir;
	(void)transport;
	if (plausible(p, n, 0))
		return 1;
	struct bb_rd r = bb_rd_make(p, n);
	uint32_t flen = bb_rd_be32(&r);
	return bb_rd_ok(&r) && flen >= 9 && flen <= TH_FRAME_MAX &&
	       plausible(r.p, bb_rd_left(&r), 0);
}

const struct bb_decoder bb_dec_thrift = {
	.name = "thrift",
	.summary = "Apache Thrift binary/compact, framed or not (no standard port); id = seqid",
	.transports = BB_TR_TCP | BB_TR_UDP,
	.ports = {0},
	.probe = th_probe,
	.verify = 0,
	.state_size = sizeof(struct th_state),
	.decode = th_decode,
	.gap = th_gap,
	.end = th_end,
	.free = NULL,
};

/* decoders.h - safe byte reader, decoder descriptor and registry */
/* SPDX-License-Identifier: MIT */
#ifndef BB_DECODERS_H
#define BB_DECODERS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "trace/trace.h"

/* ---- the bounds-checked reader (STYLE.md "Reading bytes from the wire") ----
 *
 * Every packet and stream access goes through this cursor. The bounds test is
 * n <= (size_t)(end - p); an overrun sets err, moves p to end and returns 0;
 * errors are sticky, so a parse can read a whole header and check bb_rd_ok once. */
struct bb_rd {
	const uint8_t *p, *end;
	unsigned err;
};

static inline struct bb_rd bb_rd_make(const void *buf, size_t len)
{
	struct bb_rd r;
	r.p = (const uint8_t *)buf;
	r.end = r.p + len;
	r.err = 0;
	return r;
}

static inline size_t bb_rd_left(const struct bb_rd *r)
{
	return (size_t)(r->end - r->p);
}

static inline int bb_rd_ok(const struct bb_rd *r)
{
	return r->err == 0;
}

/* Marks the reader failed: p moves to end, later reads return 0. */
static inline void bb_rd_fail(struct bb_rd *r)
{
	r->err = 1;
	r->p = r->end;
}

/* 1 when n bytes are available, else fails the reader and returns 0. */
static inline int bb_rd_need(struct bb_rd *r, size_t n)
{
	if (r->err || !(n <= (size_t)(r->end - r->p))) {
		bb_rd_fail(r);
		return 0;
	}
	return 1;
}

static inline uint8_t bb_rd_u8(struct bb_rd *r)
{
	if (!bb_rd_need(r, 1))
		return 0;
	return *r->p++;
}

static inline uint16_t bb_rd_be16(struct bb_rd *r)
{
	if (!bb_rd_need(r, 2))
		return 0;
	uint16_t v = (uint16_t)((unsigned)r->p[0] << 8 | r->p[1]);
	r->p += 2;
	return v;
}

static inline uint32_t bb_rd_be32(struct bb_rd *r)
{
	if (!bb_rd_need(r, 4))
		return 0;
	uint32_t v = (uint32_t)r->p[0] << 24 | (uint32_t)r->p[1] << 16 |
	             (uint32_t)r->p[2] << 8 | r->p[3];
	r->p += 4;
	return v;
}

static inline uint64_t bb_rd_be64(struct bb_rd *r)
{
	uint64_t hi = bb_rd_be32(r);
	uint64_t lo = bb_rd_be32(r);
	return r->err ? 0 : hi << 32 | lo;
}

static inline uint16_t bb_rd_le16(struct bb_rd *r)
{
	if (!bb_rd_need(r, 2))
		return 0;
	uint16_t v = (uint16_t)(r->p[0] | (unsigned)r->p[1] << 8);
	r->p += 2;
	return v;
}

static inline uint32_t bb_rd_le32(struct bb_rd *r)
{
	if (!bb_rd_need(r, 4))
		return 0;
	uint32_t v = (uint32_t)r->p[0] | (uint32_t)r->p[1] << 8 |
	             (uint32_t)r->p[2] << 16 | (uint32_t)r->p[3] << 24;
	r->p += 4;
	return v;
}

static inline void bb_rd_skip(struct bb_rd *r, size_t n)
{
	if (bb_rd_need(r, n))
		r->p += n;
}

/* Skips n bytes or, when fewer are left, all of them (the reader is not
 * failed); returns how many were skipped: the part of a payload or body that
 * streams past in this call. */
static inline size_t bb_rd_skip_upto(struct bb_rd *r, uint64_t n)
{
	size_t left = bb_rd_left(r);
	size_t take = n < left ? (size_t)n : left;
	bb_rd_skip(r, take);
	return take;
}

/* The byte k places after the next one (k = 0: the next), 0..255, without
 * moving; -1 when there is none (the reader is not failed). */
static inline int bb_rd_peek_at(const struct bb_rd *r, size_t k)
{
	if (r->err || !(k < (size_t)(r->end - r->p)))
		return -1;
	return r->p[k];
}

/* The next byte, 0..255, without moving; -1 when none is left. */
static inline int bb_rd_peek(const struct bb_rd *r)
{
	return bb_rd_peek_at(r, 0);
}

/* Skips the bytes found in set (a C string: ASCII, no NUL); returns how many. */
static inline size_t bb_rd_skip_any(struct bb_rd *r, const char *set)
{
	size_t n = 0;
	int c;
	while ((c = bb_rd_peek(r)) > 0 && strchr(set, c)) {
		r->p++;
		n++;
	}
	return n;
}

/* An unsigned LEB128 varint (Protocol Buffers, Kafka's compact forms, Thrift
 * compact): 7 bits a byte, least significant first, at most 10 bytes. */
static inline uint64_t bb_rd_uvarint(struct bb_rd *r)
{
	uint64_t v = 0;
	for (int shift = 0; shift < 70; shift += 7) {
		uint8_t b = bb_rd_u8(r);
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return r->err ? 0 : v;
	}
	bb_rd_fail(r);
	return 0;
}

/* The same, failing the reader when the value does not fit 32 bits. */
static inline uint32_t bb_rd_uvarint32(struct bb_rd *r)
{
	uint64_t v = bb_rd_uvarint(r);
	if (v > UINT32_MAX) {
		bb_rd_fail(r);
		return 0;
	}
	return (uint32_t)v;
}

/* Borrows n bytes (returns a pointer into the input, or NULL on overrun). */
static inline const uint8_t *bb_rd_bytes(struct bb_rd *r, size_t n)
{
	if (!bb_rd_need(r, n))
		return NULL;
	const uint8_t *b = r->p;
	r->p += n;
	return b;
}

/* A child reader over the next n bytes, which the parent skips. On overrun
 * both the parent and the child are failed. */
static inline struct bb_rd bb_rd_sub(struct bb_rd *r, size_t n)
{
	struct bb_rd c;
	const uint8_t *b = bb_rd_bytes(r, n);
	if (!b) {
		c.p = c.end = r->end;
		c.err = 1;
		return c;
	}
	c.p = b;
	c.end = b + n;
	c.err = 0;
	return c;
}

/* Offset of the first occurrence of needle (nlen >= 1) in the unread bytes,
 * or -1. Does not move the reader. */
long bb_rd_find(const struct bb_rd *r, const void *needle, size_t nlen);

/* Offset of the first byte c in the unread bytes, or -1 (one memchr: the
 * line scans of text protocols). Does not move the reader. */
static inline long bb_rd_findc(const struct bb_rd *r, uint8_t c)
{
	if (r->err || r->p == r->end)
		return -1;
	const uint8_t *hit = memchr(r->p, c, bb_rd_left(r));
	return hit ? (long)(hit - r->p) : -1;
}

/* ---- decoders ---------------------------------------------------------------- */

enum { BB_TR_TCP = 1u, BB_TR_UDP = 2u };

/* Direction of bytes on a flow: from the client (the side that initiated the
 * connection, or sent the first datagram) or from the server. */
enum { BB_DIR_C2S = 0, BB_DIR_S2C = 1 };

/* Counters kept per decoder for a run (summed over flows). */
struct bb_dec_stats {
	uint64_t flows;         /* flows this decoder was given */
	uint64_t calls;         /* CALL records emitted */
	uint64_t rets;          /* RET records emitted */
	uint64_t malformed;     /* messages that failed to parse */
	uint64_t unmatched_ret; /* returns with no call seen */
	uint64_t evicted;       /* calls pushed out of a full match table */
	uint64_t dup_call;      /* a call id already pending */
	uint64_t resync;        /* gaps after which the decoder resynchronised */
	uint64_t skipped_bytes; /* bytes skipped while resynchronising */
	uint64_t opaque;        /* encrypted messages counted, not parsed (SASL, SMB3, TLS) */
	uint64_t queue_full;    /* calls not paired: their connection's reply queue was full */
	uint64_t queue_bytes;   /* not a counter: bytes the reply queues hold now (bounded) */
};

/* ---- content tokens and propagated context (dec_tok.c) -------------------------
 *
 * A decoder may attach to a message a small set of keyed hashes of the
 * identifiers it carries (tok=) and of the request identity a system
 * propagates in traceparent, b3, uber-trace-id, X-Request-ID or
 * X-Correlation-ID (ctx=); docs/trace-format.md "Content tokens" is the
 * contract. The hash is SipHash-2-4 under a 128-bit key derived from a salt,
 * so the raw values never reach the trace. */
#define BB_TOK_MAX 8
#define BB_TOK_SALT_MAX 256

struct bb_tok_key {
	uint64_t k0, k1;
};

/* The tokens of one message: h[0..nspec) hold digits, h[nspec..n) are words. */
struct bb_dec_toks {
	uint64_t h[BB_TOK_MAX];
	uint64_t ctx;           /* valid when ctx_prio > 0 */
	uint8_t n, nspec;
	uint8_t ctx_prio;       /* 0: none; 1 traceparent ... 5 x-correlation-id */
	uint8_t hashes;         /* candidates hashed so far (bounded) */
	uint16_t scan;          /* bytes scanned so far (bounded) */
};

/* SipHash-2-4 (Aumasson and Bernstein, 2012) of the n bytes at p. */
uint64_t bb_tok_siphash(const struct bb_tok_key *k, const void *p, size_t n);
/* The key for a salt of n bytes: k0 = SipHash-2-4 of the salt under the key
 * 0 (16 zero bytes), k1 = SipHash-2-4 of the salt under the key 1 (byte 0x01
 * then 15 zero bytes). */
void bb_tok_key_derive(struct bb_tok_key *k, const void *salt, size_t n);
/* Writes the tok= value ("h1,h2,..."; 16 lower-case hex digits each) into
 * buf (at least BB_TOK_MAX * 17 bytes); returns its length (0: no tokens). */
size_t bb_tok_format(const struct bb_dec_toks *t, char *buf, size_t cap);
/* Writes the ctx= value (16 hex digits) into buf (at least 17 bytes);
 * returns 16, or 0 when the message carries no context. */
size_t bb_tok_format_ctx(const struct bb_dec_toks *t, char *buf, size_t cap);

/* One message as a decoder reports it. Strings are borrowed for the call. */
struct bb_dec_msg {
	enum bb_op op;
	int dir;                /* BB_DIR_C2S: the client sends it */
	int64_t ts_ns;          /* time of the first byte */
	int64_t end_ns;         /* time of the last byte */
	uint64_t len;           /* bytes in the message */
	const char *id;         /* call identifier text */
	size_t id_len;
	const char *req;        /* what was asked (raw; capture encodes it), or NULL */
	size_t req_len;
	const struct bb_dec_toks *toks; /* content tokens and context, or NULL */
};

/* What capture tells a decoder about the flow it is decoding. */
struct bb_dec_ctx {
	uint64_t conn;          /* flow serial number, unique in the run */
	const char *client;     /* "addr:port" of the client side */
	const char *server;     /* "addr:port" of the server side */
	unsigned transport;     /* BB_TR_TCP or BB_TR_UDP */
	struct bb_dec_stats *stats;
	/* Time of the byte at stream position pos in direction dir (TCP), or
	 * of the datagram (UDP). Only for bytes handed to the current call. */
	int64_t (*time_at)(void *arg, int dir, uint64_t pos);
	/* Takes a record out of the decoder. */
	void (*emit)(void *arg, const struct bb_dec_msg *m);
	void *arg;
	/* The key of tok= and ctx= hashes (borrowed), or NULL: none emitted. */
	const struct bb_tok_key *tok_key;
};

/* A decoder. `decode` is given, for TCP, every unconsumed byte of one direction
 * of the stream (p[0] is at stream position pos) and returns how many bytes it
 * consumed; what it leaves is handed again with more bytes appended. For UDP it
 * gets one whole datagram (its return value is ignored). `gap(dir, lost)` says
 * that `lost` bytes (0: unknown) following those it consumed will never come
 * (its unconsumed bytes included): a decoder that knows how far its current
 * message goes may skip them, otherwise it resynchronises. `end`
 * says that the flow is over (emit what is pending). The state is zeroed,
 * state_size bytes, owned by capture; `free` (optional) releases what the
 * state points to. Decoders allocate nothing per packet. */
struct bb_decoder {
	const char *name;
	const char *summary;
	unsigned transports;    /* BB_TR_* mask */
	uint16_t ports[8];      /* default server ports, 0-terminated */
	/* Optional: 1 when the first payload p (from dir) looks like this protocol. */
	int (*probe)(const uint8_t *p, size_t n, unsigned transport, int dir);
	/* 1: on a default port the first payload must pass the probe too (a
	 * popular port carries other protocols: 8000, 8080 ...). */
	int verify;
	size_t state_size;
	size_t (*decode)(void *st, const struct bb_dec_ctx *ctx, int dir, uint64_t pos,
	                 const uint8_t *p, size_t n);
	void (*gap)(void *st, const struct bb_dec_ctx *ctx, int dir, uint64_t lost);
	void (*end)(void *st, const struct bb_dec_ctx *ctx);
	/* Optional: the flow has been silent a while (half the reorder window):
	 * emit what waits only for the next bytes (a turn), so that its record is
	 * written in time order. */
	void (*idle)(void *st, const struct bb_dec_ctx *ctx);
	void (*free)(void *st);
};

extern const struct bb_decoder bb_dec_generic;
extern const struct bb_decoder bb_dec_dns;
extern const struct bb_decoder bb_dec_sunrpc;
extern const struct bb_decoder bb_dec_http;
extern const struct bb_decoder bb_dec_ldap;
extern const struct bb_decoder bb_dec_dcerpc;
extern const struct bb_decoder bb_dec_smb2;
extern const struct bb_decoder bb_dec_http2;
extern const struct bb_decoder bb_dec_redis;
extern const struct bb_decoder bb_dec_memcache;
extern const struct bb_decoder bb_dec_thrift;
extern const struct bb_decoder bb_dec_pgsql;
extern const struct bb_decoder bb_dec_mysql;
extern const struct bb_decoder bb_dec_kafka;

/* ---- the registry --------------------------------------------------------------- */

/* Number of decoders and the i-th (borrowed, static table). */
size_t bb_dec_count(void);
const struct bb_decoder *bb_dec_at(size_t i);
/* Index of the decoder named name, or -1. */
int bb_dec_find(const char *name);
/* Writes the --list-decoders table to out, one line per decoder in registry
 * order: name, transports, default ports ("(any)" when none), summary.
 * Returns 0, or BB_ERR_IO when out has its error flag set. */
int bb_dec_list(FILE *out);

/* Most decoders the registry may hold: bb_dec_sel keeps one bit per decoder
 * (registry.c asserts the table fits). */
#define BB_DEC_MAX 32

/* Choices for one run: --decode-as and --no-decoder. */
#define BB_DEC_MAX_MAP 64
struct bb_dec_sel {
	uint32_t disabled;           /* bit i: the decoder of registry index i is off */
	size_t nmap;
	struct {
		uint16_t port;
		unsigned char dec;   /* registry index */
	} map[BB_DEC_MAX_MAP];
};

/* Parses "PORT=NAME" into sel. Returns 0, or BB_ERR_ARG with err set. */
int bb_dec_sel_decode_as(struct bb_dec_sel *sel, const char *spec, struct bb_err *err);
/* Disables decoder NAME. Returns 0, or BB_ERR_ARG with err set. */
int bb_dec_sel_disable(struct bb_dec_sel *sel, const char *name, struct bb_err *err);

/* Decoder index for a flow by ports: --decode-as on either port first, then
 * the default ports of the enabled decoders (server port first). -1 if none. */
int bb_dec_by_port(const struct bb_dec_sel *sel, unsigned transport, uint16_t sport,
                   uint16_t dport);
/* Decoder index set by --decode-as for either port, or -1. */
int bb_dec_forced(const struct bb_dec_sel *sel, unsigned transport, uint16_t sport,
                  uint16_t dport);
/* Decoder index by probing a first payload; the generic decoder when none
 * matches and it is enabled; -1 otherwise. */
int bb_dec_by_probe(const struct bb_dec_sel *sel, unsigned transport, const uint8_t *p,
                    size_t n, int dir);
/* 1 when port is a server port of some enabled decoder (or --decode-as). */
int bb_dec_is_server_port(const struct bb_dec_sel *sel, unsigned transport, uint16_t port);

#endif

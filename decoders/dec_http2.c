/* dec_http2.c - HTTP/2 in cleartext (prior knowledge, h2c upgrade) and gRPC over it, with HPACK */
/* SPDX-License-Identifier: MIT */
/*
 * RFC 9113 (HTTP/2): 3.4 (the client preface), 4.1 (frame format), 6 (frame
 * types), 8.3 (pseudo-headers); RFC 7540 3.2 (h2c upgrade from HTTP/1.1);
 * RFC 7541 (HPACK): 2.3 (static and dynamic tables), 4 (table size and
 * eviction), 5.1 (integers), 5.2 (strings, Appendix B Huffman code), 6
 * (header field representations). gRPC over HTTP/2: grpc/doc/PROTOCOL-HTTP2.md.
 *
 *   preface (client, once): "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
 *   frame:  +-----------------------------------------------+
 *           |                 Length (24)                   |
 *           +---------------+---------------+---------------+
 *           |   Type (8)    |   Flags (8)   |
 *           +-+-------------+---------------+-------------------------------+
 *           |R|                 Stream Identifier (31)                      |
 *           +=+=============================================================+
 *           |                   Frame Payload (Length)                      |
 *   HEADERS payload: [Pad Length (8)] [E|Stream Dependency (31), Weight (8)]
 *                    Field Block Fragment [Padding]          (PADDED 0x8, PRIORITY 0x20)
 *   PUSH_PROMISE:    [Pad Length (8)] R|Promised Stream ID (31) Fragment [Padding]
 *   CONTINUATION:    Fragment; END_HEADERS (0x4) ends the field block
 *   DATA / HEADERS:  END_STREAM (0x1) ends the sender's half of the stream
 *   RST_STREAM:      Error Code (32)
 *
 * A CALL is a request: the client's HEADERS that open a stream, emitted when
 * the field block is complete. Its RET is emitted when the server's half of
 * the stream ends (END_STREAM on HEADERS or DATA, a RST_STREAM after the
 * response began, a RST_STREAM from the server, or the end of the flow after
 * the response began); trailers (gRPC grpc-status) belong to the response.
 * A 1xx response is an extra (interim) RET, as in dec_http.c. A stream the
 * client cancels (RST_STREAM) before any response gets no RET. The id is
 * "c<connection>.s<stream id>"; req = ":method :path" (gRPC: "POST
 * /package.Service/Method"), "?" for what HPACK cannot resolve.
 *
 * h2c upgrade: the connection starts as HTTP/1.1 with "Upgrade: h2c"; that
 * request is stream 1 (its CALL), "101 Switching Protocols" its interim RET;
 * the HTTP/2 response on stream 1 is its final RET. dec_http.c leaves such a
 * connection to this decoder (its probe declines "Upgrade: h2c" requests).
 *
 * HPACK state is one dynamic table per direction. A capture that starts
 * mid-connection, or a gap, leaves its older entries unknown: they are
 * forgotten and references to them resolve to "?" while new insertions are
 * tracked exactly (they are the newest entries, so their indices are right).
 */
#include <stddef.h>
#include <stdlib.h>

#include "decoders/dec_int.h"
#include "decoders/dec_tok_int.h"

#define H2_PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define H2_PREFACE_LEN 24
#define H2_STREAMS 128          /* streams followed at once per connection */
#define H2_DYN_N 128            /* dynamic table entries kept per direction */
#define H2_VAL_MAX 80           /* bytes kept of :method, :path, :status values */
#define H2_REQ_MAX 96
#define H2_BLOCK_MAX (256u * 1024) /* largest field block decoded */
#define H2_H1_MAX (64u * 1024)  /* largest HTTP/1.1 head of an h2c upgrade */
#define H2_TOKVAL_MAX 256       /* bytes of a request field value looked at for tokens */
#define H2_TOKNAME_MAX 32       /* longest field name kept for tokens */
#define H2_HUNT_MAX_LEN 16384u  /* frame length believed while resynchronising */

enum { FT_DATA = 0, FT_HEADERS, FT_PRIORITY, FT_RST, FT_SETTINGS, FT_PUSH, FT_PING, FT_GOAWAY,
       FT_WINUP, FT_CONT };
enum { FL_END_STREAM = 0x1, FL_END_HEADERS = 0x4, FL_PADDED = 0x8, FL_PRIORITY = 0x20 };
enum { PH_START = 0, PH_H1, PH_H1_BODY, PH_FRAMES, PH_HUNT, PH_OPAQUE };
enum { K_OTHER = 0, K_UNKNOWN, K_METHOD, K_PATH, K_STATUS };

/* A dynamic table entry: its RFC 7541 4.1 size, what it names and, for the
 * fields we report, a prefix of the value. */
struct h2_ent {
	uint32_t size;
	uint32_t nsize;             /* the name's length (the size of a reuse) */
	uint8_t kind;
	uint8_t vlen;
	char v[H2_VAL_MAX];
	/* Requests, with tokens on: the name, and the entry's first tokens and
	 * context, for the fields that refer to it later. */
	uint8_t nmlen, tn, tspec, tcprio;
	char nm[H2_TOKNAME_MAX];
	uint64_t th[2], tctx;
};

struct h2_table {
	struct h2_ent e[H2_DYN_N];  /* ring; e[(head + H2_DYN_N - 1 - i) % N] is the i-th newest */
	uint32_t head, n;
	uint64_t size, max;
	uint8_t partial;            /* entries older than ours exist but are unknown */
};

struct h2_stream {
	uint32_t sid;
	uint8_t used;
	uint8_t called;             /* the CALL was emitted */
	uint8_t resp;               /* the final response's HEADERS were seen */
	uint8_t pushed;             /* promised by the server (PUSH_PROMISE) */
	uint8_t reqlen;
	uint32_t age;
	int64_t t0, t1;             /* first and last byte of the response so far */
	uint64_t len;               /* response bytes so far */
	char req[H2_REQ_MAX];
};

/* What lives only once a connection turns out to speak HTTP/2. */
struct h2_big {
	struct h2_table tab[2];
	struct h2_stream st[H2_STREAMS];
	uint8_t *blk;               /* a field block split over CONTINUATION frames */
	size_t blkcap;
};

struct h2_dir {
	uint8_t phase;
	uint8_t in_frame;           /* skipping the rest of a frame payload */
	uint8_t fr_type, fr_flags;
	uint32_t fr_sid;
	uint64_t fr_left;           /* payload bytes of the current frame still to come */
	uint64_t h1_left;           /* HTTP/1.1 body bytes of the upgrade request to skip */
};

struct h2_state {
	struct h2_dir d[2];
	struct h2_big *b;
	uint32_t age;
	uint8_t upgraded;           /* stream 1 is the HTTP/1.1 upgrade request */
};

/* What one field block said. */
struct h2_fields {
	int method_known, path_known;
	int status;                 /* -1: absent or unknown */
	int unknown;                /* a field referred to a forgotten entry */
	uint8_t mlen, plen;
	char method[H2_VAL_MAX];
	char path[H2_VAL_MAX];
	struct bb_dec_toks toks;    /* of a request's fields, with tokens on */
};

/* ---- HPACK ------------------------------------------------------------------ */

/* RFC 7541 Appendix B as a canonical code: per length, first code, count, offset into sym */
static const uint32_t huff_first[31] = {0x0, 0x0, 0x0, 0x0, 0x0, 0x0, 0x14, 0x5c, 0xf8, 0x0, 0x3f8, 0x7fa, 0xffa, 0x1ff8, 0x3ffc, 0x7ffc, 0x0, 0x0, 0x0, 0x7fff0, 0xfffe6, 0x1fffdc, 0x3fffd2, 0x7fffd8, 0xffffea, 0x1ffffec, 0x3ffffe0, 0x7ffffde, 0xfffffe2, 0x0, 0x3ffffffc};
static const uint16_t huff_count[31] = {0, 0, 0, 0, 0, 10, 26, 32, 6, 0, 5, 3, 2, 6, 2, 3, 0, 0, 0, 3, 8, 13, 26, 29, 12, 4, 15, 19, 29, 0, 4};
static const uint16_t huff_off[31] = {0, 0, 0, 0, 0, 0, 10, 36, 68, 0, 74, 79, 82, 84, 90, 92, 0, 0, 0, 95, 98, 106, 119, 145, 174, 186, 190, 205, 224, 0, 253};
static const uint16_t huff_sym[257] = {
	48, 49, 50, 97, 99, 101, 105, 111, 115, 116, 32, 37, 45, 46, 47, 51,
	52, 53, 54, 55, 56, 57, 61, 65, 95, 98, 100, 102, 103, 104, 108, 109,
	110, 112, 114, 117, 58, 66, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76,
	77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 89, 106, 107, 113, 118,
	119, 120, 121, 122, 38, 42, 44, 59, 88, 90, 33, 34, 40, 41, 63, 39,
	43, 124, 35, 62, 0, 36, 64, 91, 93, 126, 94, 125, 60, 96, 123, 92,
	195, 208, 128, 130, 131, 162, 184, 194, 224, 226, 153, 161, 167, 172, 176, 177,
	179, 209, 216, 217, 227, 229, 230, 129, 132, 133, 134, 136, 146, 154, 156, 160,
	163, 164, 169, 170, 173, 178, 181, 185, 186, 187, 189, 190, 196, 198, 228, 232,
	233, 1, 135, 137, 138, 139, 140, 141, 143, 147, 149, 150, 151, 152, 155, 157,
	158, 165, 166, 168, 174, 175, 180, 182, 183, 188, 191, 197, 231, 239, 9, 142,
	144, 145, 148, 159, 171, 206, 215, 225, 236, 237, 199, 207, 234, 235, 192, 193,
	200, 201, 202, 205, 210, 213, 218, 219, 238, 240, 242, 243, 255, 203, 204, 211,
	212, 214, 221, 222, 223, 241, 244, 245, 246, 247, 248, 250, 251, 252, 253, 254,
	2, 3, 4, 5, 6, 7, 8, 11, 12, 14, 15, 16, 17, 18, 19, 20,
	21, 23, 24, 25, 26, 27, 28, 29, 30, 31, 127, 220, 249, 10, 13, 22,
	256,
};

/* Decodes the Huffman string in r into out (at most cap bytes kept) and sets
 * *total to the decoded length. Returns the length kept, or -1 when the
 * string is invalid (EOS inside, padding over 7 bits or not all ones). */
static int huff_decode(struct bb_rd r, char *out, size_t cap, uint64_t *total)
{
	uint32_t code = 0;
	unsigned len = 0;
	uint64_t n = 0;
	while (bb_rd_left(&r)) {
		uint8_t byte = bb_rd_u8(&r);
		for (int bit = 7; bit >= 0; bit--) {
			code = code << 1 | (uint32_t)(byte >> bit & 1);
			len++;
			if (len > 30)
				return -1;
			if (len < 5 || !huff_count[len] || code < huff_first[len] ||
			    code - huff_first[len] >= huff_count[len])
				continue;
			unsigned sym = huff_sym[huff_off[len] + (code - huff_first[len])];
			if (sym == 256)
				return -1;
			if (n < cap)
				out[n] = (char)sym;
			n++;
			code = 0;
			len = 0;
		}
	}
	/* Padding: the most significant bits of EOS (all ones), under 8 bits. */
	if (len > 7 || code != (1u << len) - 1)
		return -1;
	*total = n;
	return (int)(n < cap ? n : cap);
}

/* RFC 7541 5.1: an integer with an N-bit prefix whose first byte is given.
 * Returns -1 on overrun or a value of 2^28 or more. */
static int64_t hp_int(struct bb_rd *r, uint8_t first, unsigned nbits)
{
	uint32_t mask = (1u << nbits) - 1;
	uint64_t v = first & mask;
	if (v < mask)
		return (int64_t)v;
	for (unsigned shift = 0; shift <= 28; shift += 7) {
		uint8_t b = bb_rd_u8(r);
		if (!bb_rd_ok(r))
			return -1;
		v += (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v < (UINT64_C(1) << 28) ? (int64_t)v : -1;
	}
	return -1;
}

/* RFC 7541 5.2: reads a string literal; its text (cap bytes at most) goes to
 * out, its decoded length to *total. Returns the length kept, or -1. */
static int hp_str(struct bb_rd *r, char *out, size_t cap, uint64_t *total)
{
	uint8_t first = bb_rd_u8(r);
	int64_t len = hp_int(r, first, 7);
	if (!bb_rd_ok(r) || len < 0)
		return -1;
	struct bb_rd raw = bb_rd_sub(r, (size_t)len);
	if (!bb_rd_ok(r))
		return -1;
	if (first & 0x80)
		return huff_decode(raw, out, cap, total);
	size_t n = (size_t)len < cap ? (size_t)len : cap;
	const uint8_t *b = bb_rd_bytes(&raw, n);
	if (n)
		memcpy(out, b, n);
	*total = (uint64_t)len;
	return (int)n;
}

static int kind_of_name(const char *s, size_t n)
{
	if (n == 7 && memcmp(s, ":method", 7) == 0)
		return K_METHOD;
	if (n == 5 && memcmp(s, ":path", 5) == 0)
		return K_PATH;
	if (n == 7 && memcmp(s, ":status", 7) == 0)
		return K_STATUS;
	return K_OTHER;
}

/* RFC 7541 Appendix A: the static table (name, value). */
static const char *const st_name[62] = {NULL, ":authority", ":method", ":method", ":path",
	":path", ":scheme", ":scheme", ":status", ":status", ":status", ":status", ":status",
	":status", ":status", "accept-charset", "accept-encoding", "accept-language",
	"accept-ranges", "accept", "access-control-allow-origin", "age", "allow", "authorization",
	"cache-control", "content-disposition", "content-encoding", "content-language",
	"content-length", "content-location", "content-range", "content-type", "cookie", "date",
	"etag", "expect", "expires", "from", "host", "if-match", "if-modified-since",
	"if-none-match", "if-range", "if-unmodified-since", "last-modified", "link", "location",
	"max-forwards", "proxy-authenticate", "proxy-authorization", "range", "referer", "refresh",
	"retry-after", "server", "set-cookie", "strict-transport-security", "transfer-encoding",
	"user-agent", "vary", "via", "www-authenticate"};
static const char *const st_val[15] = {NULL, NULL, "GET", "POST", "/", "/index.html", "http",
	"https", "200", "204", "206", "304", "400", "404", "500"};

static void tab_evict(struct h2_table *t, uint64_t room)
{
	while (t->n && t->size + room > t->max) {
		struct h2_ent *old = &t->e[(t->head + H2_DYN_N - t->n) % H2_DYN_N];
		t->size -= old->size;
		t->n--;
	}
}

/* Forgets every entry: older ones are unknown from now on. */
static void tab_forget(struct h2_table *t)
{
	t->n = 0;
	t->size = 0;
	t->partial = 1;
}

static void tab_add(struct h2_table *t, uint64_t size, uint32_t nsize, int kind, const char *v,
                    size_t vlen)
{
	if (size > t->max) { /* RFC 7541 4.4: an entry larger than the table empties it */
		t->n = 0;
		t->size = 0;
		return;
	}
	tab_evict(t, size);
	if (t->n == H2_DYN_N) {
		/* More entries than we keep: the oldest becomes unknown. */
		t->size -= t->e[(t->head + H2_DYN_N - t->n) % H2_DYN_N].size;
		t->n--;
		t->partial = 1;
	}
	struct h2_ent *e = &t->e[t->head];
	e->size = (uint32_t)size;
	e->nsize = nsize;
	e->kind = (uint8_t)kind;
	if (vlen > H2_VAL_MAX)
		vlen = H2_VAL_MAX;
	e->vlen = (uint8_t)vlen;
	if (vlen)
		memcpy(e->v, v, vlen);
	t->head = (t->head + 1) % H2_DYN_N;
	t->n++;
	t->size += size;
}

/* Looks up index idx (static, then dynamic): its kind (K_UNKNOWN for a
 * forgotten dynamic entry, -1 for one that cannot exist), value and name size. */
static int tab_get(const struct h2_table *t, uint64_t idx, const char **val, size_t *vlen,
                   uint32_t *nsize)
{
	*val = NULL;
	*vlen = 0;
	*nsize = 0;
	if (idx == 0)
		return -1;
	if (idx <= 61) {
		const char *nm = st_name[idx];
		*nsize = (uint32_t)strlen(nm);
		if (idx < 15 && st_val[idx]) {
			*val = st_val[idx];
			*vlen = strlen(*val);
		}
		return kind_of_name(nm, *nsize);
	}
	uint64_t di = idx - 62;
	if (di >= t->n)
		return t->partial ? K_UNKNOWN : -1;
	const struct h2_ent *e = &t->e[(t->head + H2_DYN_N - 1 - di) % H2_DYN_N];
	*val = e->v;
	*vlen = e->vlen;
	*nsize = e->nsize;
	return e->kind;
}

static void field_set(struct h2_fields *f, int kind, const char *v, size_t vlen)
{
	if (vlen > H2_VAL_MAX)
		vlen = H2_VAL_MAX;
	if (kind == K_UNKNOWN) {
		f->unknown = 1;
	} else if (kind == K_METHOD) {
		f->method_known = 1;
		memcpy(f->method, v, vlen);
		f->mlen = (uint8_t)vlen;
	} else if (kind == K_PATH) {
		f->path_known = 1;
		memcpy(f->path, v, vlen);
		f->plen = (uint8_t)vlen;
	} else if (kind == K_STATUS) {
		int s = 0;
		for (size_t i = 0; i < vlen; i++)
			s = v[i] >= '0' && v[i] <= '9' && s < 1000 ? s * 10 + (v[i] - '0') : 1000;
		f->status = vlen == 3 && s < 1000 ? s : -1;
	}
}

/* Tokens: the name of index idx, static or a dynamic entry kept with its
 * name; its length (0: unknown). */
static size_t tok_name_of(const struct h2_table *t, uint64_t idx, const char **nm)
{
	if (idx >= 1 && idx <= 61) {
		*nm = st_name[idx];
		return strlen(*nm);
	}
	if (idx < 62 || idx - 62 >= t->n)
		return 0;
	const struct h2_ent *e = &t->e[(t->head + H2_DYN_N - 1 - (idx - 62)) % H2_DYN_N];
	*nm = e->nm;
	return e->nmlen;
}

/* Tokens of a request field that refers to dynamic entry idx (> 61). */
static void tok_indexed(const struct h2_table *t, uint64_t idx, struct h2_fields *f)
{
	if (idx < 62 || idx - 62 >= t->n)
		return;
	const struct h2_ent *e = &t->e[(t->head + H2_DYN_N - 1 - (idx - 62)) % H2_DYN_N];
	struct bb_dec_toks et;
	dec_tok_reset(&et);
	et.n = e->tn;
	et.nspec = e->tspec;
	memcpy(et.h, e->th, sizeof e->th);
	et.ctx = e->tctx;
	et.ctx_prio = e->tcprio;
	dec_tok_merge(&f->toks, &et);
}

/* Tokens of a literal request field (name nm); with incr, its first two
 * tokens and its context are kept with the entry just added to t. */
static void tok_literal(struct h2_table *t, const struct bb_dec_ctx *ctx, struct h2_fields *f,
                        const char *nm, size_t nml, const char *v, size_t vl, int incr)
{
	struct bb_dec_toks ft;
	dec_tok_start(&ft, &f->toks);
	if (nml == 5 && memcmp(nm, ":path", 5) == 0)
		dec_tok_target(&ft, ctx, (const uint8_t *)v, vl);
	else if (nml)
		dec_tok_header(&ft, ctx, (const uint8_t *)nm, nml, (const uint8_t *)v, vl, 1);
	dec_tok_merge(&f->toks, &ft);
	if (!incr || !t->n)
		return;
	struct h2_ent *e = &t->e[(t->head + H2_DYN_N - 1) % H2_DYN_N];
	e->nmlen = (uint8_t)(nml <= H2_TOKNAME_MAX ? nml : 0);
	memcpy(e->nm, nm, e->nmlen);
	e->tn = ft.n < 2 ? ft.n : 2;
	e->tspec = ft.nspec < e->tn ? ft.nspec : e->tn;
	memcpy(e->th, ft.h, sizeof e->th);
	e->tctx = ft.ctx;
	e->tcprio = ft.ctx_prio;
}

/* Decodes one complete field block with table t. Returns 0, or -1 when it is
 * malformed (the table is then forgotten: what the rest would have added is lost).
 * With tctx (a request, tokens on), f->toks gets the fields' tokens and context. */
static int hpack_block(struct h2_table *t, struct bb_rd r, struct h2_fields *f,
                       const struct bb_dec_ctx *tctx)
{
	memset(f, 0, sizeof *f);
	f->status = -1;
	int first = 1;
	while (bb_rd_left(&r)) {
		uint8_t b = bb_rd_u8(&r);
		const char *v;
		size_t vl;
		uint32_t nsize;
		if (b & 0x80) { /* 6.1 indexed field */
			int64_t idx = hp_int(&r, b, 7);
			int k = idx < 0 ? -1 : tab_get(t, (uint64_t)idx, &v, &vl, &nsize);
			if (k < 0)
				goto bad;
			field_set(f, k, v, vl);
			if (tctx)
				tok_indexed(t, (uint64_t)idx, f);
		} else if ((b & 0xe0) == 0x20) { /* 6.3 dynamic table size update */
			int64_t sz = hp_int(&r, b, 5);
			if (sz < 0 || !first)
				goto bad;
			t->max = (uint64_t)sz;
			tab_evict(t, 0);
			continue; /* only at the start of a block, maybe twice */
		} else { /* 6.2 literal: with (01), without (0000) or never (0001) indexing */
			int incr = (b & 0xc0) == 0x40;
			int64_t idx = hp_int(&r, b, incr ? 6 : 4);
			if (idx < 0)
				goto bad;
			int kind;
			char name[H2_TOKNAME_MAX];
			const char *tnm = name;
			size_t tnl = 0;
			if (idx == 0) {
				uint64_t ntotal = 0;
				int nl = hp_str(&r, name, sizeof name, &ntotal);
				if (nl < 0)
					goto bad;
				kind = ntotal <= sizeof name ? kind_of_name(name, (size_t)nl) : K_OTHER;
				tnl = ntotal <= sizeof name ? (size_t)nl : 0;
				nsize = ntotal > UINT32_MAX ? UINT32_MAX : (uint32_t)ntotal;
			} else {
				kind = tab_get(t, (uint64_t)idx, &v, &vl, &nsize);
				if (kind < 0)
					goto bad;
				if (tctx)
					tnl = tok_name_of(t, (uint64_t)idx, &tnm);
			}
			if (!incr && (kind == K_OTHER || kind == K_UNKNOWN) && !(tctx && tnl)) {
				/* A value nobody will refer to again: not decoded. */
				uint8_t sb = bb_rd_u8(&r);
				int64_t sl = hp_int(&r, sb, 7);
				if (sl < 0)
					goto bad;
				bb_rd_skip(&r, (size_t)sl);
				if (!bb_rd_ok(&r))
					goto bad;
				field_set(f, kind, NULL, 0);
				first = 0;
				continue;
			}
			char val[H2_TOKVAL_MAX];
			uint64_t vtotal = 0;
			int vlen = hp_str(&r, val, tctx ? sizeof val : H2_VAL_MAX, &vtotal);
			if (vlen < 0)
				goto bad;
			field_set(f, kind, val, (size_t)vlen);
			if (incr)
				tab_add(t, (uint64_t)nsize + vtotal + 32, nsize, kind, val, (size_t)vlen);
			if (tctx)
				tok_literal(t, tctx, f, tnm, tnl, val, (size_t)vlen, incr);
		}
		first = 0;
	}
	if (bb_rd_ok(&r))
		return 0;
bad:
	tab_forget(t);
	return -1;
}

/* ---- streams ---------------------------------------------------------------- */

static struct h2_big *big(struct h2_state *s)
{
	if (!s->b) {
		s->b = bb_xcalloc(1, sizeof *s->b);
		for (int i = 0; i < 2; i++)
			s->b->tab[i].max = 4096; /* SETTINGS_HEADER_TABLE_SIZE's initial value */
	}
	return s->b;
}

static struct h2_stream *stream_find(struct h2_state *s, uint32_t sid)
{
	struct h2_big *b = big(s);
	for (int i = 0; i < H2_STREAMS; i++)
		if (b->st[i].used && b->st[i].sid == sid)
			return &b->st[i];
	return NULL;
}

/* A new stream slot; when all are taken the oldest is dropped and counted. */
static struct h2_stream *stream_new(struct h2_state *s, const struct bb_dec_ctx *ctx, uint32_t sid)
{
	struct h2_big *b = big(s);
	struct h2_stream *slot = NULL;
	for (int i = 0; i < H2_STREAMS && !slot; i++)
		if (!b->st[i].used)
			slot = &b->st[i];
	if (!slot) {
		slot = &b->st[0];
		for (int i = 1; i < H2_STREAMS; i++)
			if (b->st[i].age < slot->age)
				slot = &b->st[i];
		DEC_COUNT(ctx, evicted);
	}
	memset(slot, 0, sizeof *slot);
	slot->used = 1;
	slot->sid = sid;
	slot->age = ++s->age;
	return slot;
}

static int id_of(char *buf, size_t cap, const struct bb_dec_ctx *ctx, uint32_t sid)
{
	int n = snprintf(buf, cap, "c%llu.s%u", (unsigned long long)ctx->conn, sid);
	return n < (int)cap ? n : (int)cap - 1;
}

static void put_req(struct h2_stream *st, const struct h2_fields *f)
{
	size_t ml = f->method_known ? f->mlen : 1, pl = f->path_known ? f->plen : 1;
	const char *m = f->method_known ? f->method : "?", *p = f->path_known ? f->path : "?";
	if (f->method_known && !f->path_known && !f->unknown) {
		/* CONNECT has no :path */
		pl = 0;
	}
	if (ml > H2_REQ_MAX)
		ml = H2_REQ_MAX;
	memcpy(st->req, m, ml);
	size_t n = ml;
	if (pl && n + 1 < H2_REQ_MAX) {
		st->req[n++] = ' ';
		if (pl > H2_REQ_MAX - n)
			pl = H2_REQ_MAX - n;
		memcpy(st->req + n, p, pl);
		n += pl;
	}
	st->reqlen = (uint8_t)n;
}

static void emit_call(const struct bb_dec_ctx *ctx, const struct h2_stream *st, int64_t t0,
                      int64_t t1, uint64_t len, const struct bb_dec_toks *toks)
{
	char id[48];
	int il = id_of(id, sizeof id, ctx, st->sid);
	dec_emit_toks(ctx, BB_CALL, BB_DIR_C2S, t0, t1, len, id, (size_t)il, st->req, st->reqlen,
	              toks);
}

static void emit_ret(const struct bb_dec_ctx *ctx, const struct h2_stream *st, int64_t t0,
                     int64_t t1, uint64_t len)
{
	char id[48];
	int il = id_of(id, sizeof id, ctx, st->sid);
	if (!st->called)
		DEC_COUNT(ctx, unmatched_ret);
	dec_emit(ctx, BB_RET, BB_DIR_S2C, t0, t1, len, id, (size_t)il, st->reqlen ? st->req : NULL,
	         st->reqlen);
}

/* The server's half of the stream ended: its RET, and the slot is free. */
static void stream_done(const struct bb_dec_ctx *ctx, struct h2_stream *st)
{
	emit_ret(ctx, st, st->t0, st->t1, st->len);
	st->used = 0;
}

/* A complete field block of frame type `type` (HEADERS or PUSH_PROMISE) from dir
 * on stream sid, span bytes on the wire from t0 to t1. */
static void on_fields(struct h2_state *s, const struct bb_dec_ctx *ctx, int dir, int type,
                      uint32_t sid, uint32_t promised, int end_stream, const struct h2_fields *f,
                      int64_t t0, int64_t t1, uint64_t span)
{
	if (type == FT_PUSH) {
		if (dir != BB_DIR_S2C || !promised)
			return;
		struct h2_stream *st = stream_find(s, promised);
		if (!st)
			st = stream_new(s, ctx, promised);
		st->pushed = 1;
		put_req(st, f);
		return;
	}
	struct h2_stream *st = stream_find(s, sid);
	if (dir == BB_DIR_C2S) {
		if (st)
			return; /* trailers of the request, or a repeated HEADERS */
		st = stream_new(s, ctx, sid);
		put_req(st, f);
		st->called = 1;
		emit_call(ctx, st, t0, t1, span, &f->toks);
		return;
	}
	if (!st) /* mid-connection: the request went by before the capture */
		st = stream_new(s, ctx, sid);
	if (!st->resp && f->status >= 100 && f->status < 200) {
		emit_ret(ctx, st, t0, t1, span); /* interim: the stream goes on */
		return;
	}
	if (!st->resp) {
		st->resp = 1;
		st->t0 = t0;
		st->len = 0;
	}
	st->t1 = t1;
	st->len += span;
	if (end_stream)
		stream_done(ctx, st);
}

static void on_data(struct h2_state *s, const struct bb_dec_ctx *ctx, int dir, uint32_t sid,
                    int end_stream, int64_t t1, uint64_t span)
{
	if (dir != BB_DIR_S2C)
		return;
	struct h2_stream *st = stream_find(s, sid);
	if (!st || !st->resp)
		return;
	st->t1 = t1;
	st->len += span;
	if (end_stream)
		stream_done(ctx, st);
}

static void on_rst(struct h2_state *s, const struct bb_dec_ctx *ctx, int dir, uint32_t sid,
                   int64_t t0, int64_t t1, uint64_t span)
{
	struct h2_stream *st = stream_find(s, sid);
	if (!st)
		return;
	if (st->resp) { /* the response began: it ends here */
		st->t1 = t1;
		st->len += dir == BB_DIR_S2C ? span : 0;
		stream_done(ctx, st);
	} else if (dir == BB_DIR_S2C) { /* the server refused the stream: its answer */
		st->t0 = t0;
		st->t1 = t1;
		st->len = span;
		stream_done(ctx, st);
	} else { /* cancelled by the client before any response: no RET */
		st->used = 0;
	}
}

/* ---- frames ----------------------------------------------------------------- */

struct fhdr {
	uint32_t len;
	uint8_t type, flags;
	uint32_t sid;
	int reserved;
};

static struct fhdr read_fhdr(struct bb_rd *r)
{
	struct fhdr h;
	uint32_t hi = bb_rd_be16(r);
	h.len = hi << 8 | bb_rd_u8(r);
	h.type = bb_rd_u8(r);
	h.flags = bb_rd_u8(r);
	uint32_t sid = bb_rd_be32(r);
	h.reserved = (int)(sid >> 31);
	h.sid = sid & 0x7fffffffu;
	return h;
}

/* 1 when h looks like a frame header a peer would send (RFC 9113 6: the
 * stream 0 rules, the fixed lengths, the flags each type defines). */
static int plausible(const struct fhdr *h)
{
	static const uint8_t flags_ok[10] = {0x09, 0x2d, 0x00, 0x00, 0x01, 0x0c, 0x01, 0x00, 0x00,
		0x04};
	if (h->reserved || h->type > FT_CONT || h->len > H2_HUNT_MAX_LEN ||
	    (h->flags & ~flags_ok[h->type]))
		return 0;
	switch (h->type) {
	case FT_SETTINGS:
		return h->sid == 0 && h->len % 6 == 0 && !(h->flags && h->len);
	case FT_PING:
		return h->sid == 0 && h->len == 8;
	case FT_GOAWAY:
		return h->sid == 0 && h->len >= 8;
	case FT_WINUP:
		return h->len == 4;
	case FT_RST:
		return h->sid != 0 && h->len == 4;
	case FT_PRIORITY:
		return h->sid != 0 && h->len == 5;
	default:
		return h->sid != 0;
	}
}

/* Bytes of a frame header chain at the start of r that a resynchronisation can
 * trust: the frame is plausible and complete, and is followed by another
 * plausible header or by the end of the bytes. 0: not a frame start; -1: wait. */
static int chain_ok(struct bb_rd r)
{
	if (bb_rd_left(&r) < 9)
		return -1;
	struct fhdr h = read_fhdr(&r);
	if (!plausible(&h))
		return 0;
	if (bb_rd_left(&r) < h.len)
		return -1;
	bb_rd_skip(&r, h.len);
	if (bb_rd_left(&r) == 0)
		return 1;
	if (bb_rd_left(&r) < 9)
		return -1;
	struct fhdr h2 = read_fhdr(&r);
	return plausible(&h2) ? 1 : 0;
}

/* The field block fragment of a HEADERS or PUSH_PROMISE payload (without pad,
 * priority or promised id). Returns -1 when the padding does not fit. */
static int fragment(struct bb_rd pay, const struct fhdr *h, struct bb_rd *frag, uint32_t *promised)
{
	size_t pad = 0;
	*promised = 0;
	if (h->flags & FL_PADDED)
		pad = bb_rd_u8(&pay);
	if (h->type == FT_HEADERS && (h->flags & FL_PRIORITY))
		bb_rd_skip(&pay, 5);
	if (h->type == FT_PUSH)
		*promised = bb_rd_be32(&pay) & 0x7fffffffu;
	if (!bb_rd_ok(&pay) || pad > bb_rd_left(&pay))
		return -1;
	*frag = bb_rd_sub(&pay, bb_rd_left(&pay) - pad);
	return 0;
}

/* Handles a HEADERS or PUSH_PROMISE frame at r (its header already checked)
 * with its CONTINUATION frames. Returns the bytes used, 0 to wait for more, or
 * -1 when the sequence is malformed (the caller skips the first frame). */
static long header_frames(struct h2_state *s, const struct bb_dec_ctx *ctx, int dir, uint64_t pos,
                          struct bb_rd r, const struct fhdr *h)
{
	/* Find the end of the block: frames up to END_HEADERS, all present. */
	struct bb_rd scan = r;
	size_t total = 0, nfrag = 0;
	uint8_t flags = h->flags;
	for (;;) {
		if (bb_rd_left(&scan) < 9)
			return 0;
		struct fhdr c = read_fhdr(&scan);
		if (nfrag > 0 && (c.type != FT_CONT || c.sid != h->sid))
			return -1;
		if (c.len > H2_BLOCK_MAX || total + 9 + c.len > H2_BLOCK_MAX + 9 * 64)
			return -1;
		if (bb_rd_left(&scan) < c.len)
			return 0;
		bb_rd_skip(&scan, c.len);
		total += 9 + (size_t)c.len;
		nfrag++;
		if (nfrag > 1)
			flags |= c.flags;
		if (c.flags & FL_END_HEADERS)
			break;
	}
	struct h2_big *b = big(s);
	struct bb_rd first = r;
	bb_rd_skip(&first, 9);
	struct bb_rd pay = bb_rd_sub(&first, h->len), frag;
	uint32_t promised;
	if (fragment(pay, h, &frag, &promised) < 0)
		return -1;
	struct bb_rd block = frag;
	if (nfrag > 1) {
		/* Gather the fragments into one buffer (grown once per flow). */
		size_t need = total;
		if (b->blkcap < need) {
			b->blk = bb_xrealloc(b->blk, need);
			b->blkcap = need;
		}
		size_t n = bb_rd_left(&frag);
		memcpy(b->blk, bb_rd_bytes(&frag, n), n);
		for (size_t i = 1; i < nfrag; i++) {
			struct fhdr c = read_fhdr(&first);
			size_t cl = c.len;
			const uint8_t *cb = bb_rd_bytes(&first, cl);
			if (cl)
				memcpy(b->blk + n, cb, cl);
			n += cl;
		}
		block = bb_rd_make(b->blk, n);
	}
	struct h2_fields f;
	if (hpack_block(&b->tab[dir], block, &f,
	                dir == BB_DIR_C2S && h->type == FT_HEADERS && dec_tok_on(ctx) ? ctx : NULL) < 0) {
		DEC_COUNT(ctx, malformed);
		f.method_known = f.path_known = 0;
		f.status = -1;
	}
	int64_t t0 = dec_time(ctx, dir, pos), t1 = dec_time(ctx, dir, pos + total - 1);
	on_fields(s, ctx, dir, h->type, h->sid, promised, (flags & FL_END_STREAM) != 0, &f, t0, t1,
	          total);
	return (long)total;
}

/* 1 when p starts with an HTTP/1.x request line. */
static int h1_request(const uint8_t *p, size_t n)
{
	static const char *const methods[] = {"GET ", "POST ", "PUT ", "HEAD ", "DELETE ",
		"OPTIONS ", "PATCH "};
	for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
		size_t l = strlen(methods[i]);
		if (n >= l && memcmp(p, methods[i], l) == 0) {
			struct bb_rd r = bb_rd_make(p, n < 4096 ? n : 4096);
			long nl = bb_rd_find(&r, "\n", 1);
			struct bb_rd line = bb_rd_make(p, nl < 0 ? bb_rd_left(&r) : (size_t)nl);
			return bb_rd_find(&line, " HTTP/1.", 8) > 0;
		}
	}
	return 0;
}

/* 1 when p could still become an HTTP/1.x request line: the start of a
 * method and no line end yet. */
static int h1_maybe(const uint8_t *p, size_t n)
{
	static const char *const starts[] = {"GET ", "POST ", "PUT ", "HEAD ", "DELETE ",
		"OPTIONS ", "PATCH "};
	struct bb_rd r = bb_rd_make(p, n);
	if (n >= 1024 || bb_rd_find(&r, "\n", 1) >= 0)
		return 0;
	for (size_t i = 0; i < sizeof starts / sizeof starts[0]; i++) {
		size_t l = strlen(starts[i]);
		if (memcmp(p, starts[i], n < l ? n : l) == 0)
			return 1;
	}
	return 0;
}

/* 1 when a head at p (n bytes) has an Upgrade header naming h2c. */
static int has_h2c_upgrade(const uint8_t *p, size_t n)
{
	struct bb_rd r = bb_rd_make(p, n < H2_H1_MAX ? n : H2_H1_MAX);
	while (bb_rd_left(&r)) {
		long nl = bb_rd_find(&r, "\n", 1);
		struct bb_rd line = bb_rd_sub(&r, nl < 0 ? bb_rd_left(&r) : (size_t)nl + 1);
		if (bb_rd_left(&line) <= 2)
			break; /* the empty line ends the head */
		if (bb_rd_left(&line) < 8)
			continue;
		char nm[8];
		memcpy(nm, bb_rd_bytes(&line, 8), 8);
		for (int i = 0; i < 8; i++)
			nm[i] = (char)(nm[i] >= 'A' && nm[i] <= 'Z' ? nm[i] + 32 : nm[i]);
		if (memcmp(nm, "upgrade:", 8) == 0 && bb_rd_find(&line, "h2c", 3) >= 0)
			return 1;
	}
	return 0;
}

/* Length of an HTTP/1.x head ending in an empty line, or 0 when incomplete. */
static size_t h1_head_len(const uint8_t *p, size_t n)
{
	struct bb_rd r = bb_rd_make(p, n);
	long e = bb_rd_find(&r, "\r\n\r\n", 4);
	return e < 0 ? 0 : (size_t)e + 4;
}

/* The Content-Length of a head, or 0. */
static uint64_t h1_content_length(const uint8_t *p, size_t hl)
{
	struct bb_rd r = bb_rd_make(p, hl);
	while (bb_rd_left(&r)) {
		long nl = bb_rd_find(&r, "\n", 1);
		struct bb_rd line = bb_rd_sub(&r, nl < 0 ? bb_rd_left(&r) : (size_t)nl + 1);
		if (bb_rd_left(&line) < 15)
			continue;
		char nm[15];
		memcpy(nm, bb_rd_bytes(&line, 15), 15);
		for (int i = 0; i < 15; i++)
			nm[i] = (char)(nm[i] >= 'A' && nm[i] <= 'Z' ? nm[i] + 32 : nm[i]);
		if (memcmp(nm, "content-length:", 15) != 0)
			continue;
		uint64_t v = 0;
		bb_rd_skip_any(&line, " ");
		while (bb_rd_peek(&line) >= '0' && bb_rd_peek(&line) <= '9' && v < (UINT64_C(1) << 48))
			v = v * 10 + (uint64_t)(bb_rd_u8(&line) - '0');
		return v;
	}
	return 0;
}

/* The HTTP/1.1 head of an h2c upgrade: the request (stream 1) or the answer. */
static int h1_head(struct h2_state *s, const struct bb_dec_ctx *ctx, int dir, uint64_t pos,
                   const uint8_t *p, size_t hl)
{
	int64_t t0 = dec_time(ctx, dir, pos), t1 = dec_time(ctx, dir, pos + hl - 1);
	struct bb_rd r = bb_rd_make(p, hl);
	long nl = bb_rd_find(&r, "\n", 1);
	struct bb_rd line = bb_rd_make(p, nl < 0 ? hl : (size_t)nl);
	if (dir == BB_DIR_C2S) {
		struct h2_stream *st = stream_find(s, 1);
		if (!st)
			st = stream_new(s, ctx, 1);
		long sp1 = bb_rd_find(&line, " ", 1);
		struct bb_rd rest = line;
		bb_rd_skip(&rest, (size_t)sp1 + 1);
		long sp2 = bb_rd_find(&rest, " ", 1);
		size_t rl = sp1 < 0 || sp2 < 0 ? 0 : (size_t)sp1 + 1 + (size_t)sp2;
		if (rl > H2_REQ_MAX)
			rl = H2_REQ_MAX;
		memcpy(st->req, p, rl);
		st->reqlen = (uint8_t)rl;
		st->called = 1;
		s->upgraded = 1;
		emit_call(ctx, st, t0, t1, hl, NULL);
		return 0;
	}
	/* "HTTP/1.1 101 ...": the interim answer; anything else: no HTTP/2. */
	struct h2_stream *st = stream_find(s, 1);
	bb_rd_skip(&line, 9); /* "HTTP/1.1 " */
	const uint8_t *code = bb_rd_bytes(&line, 3);
	int is101 = code && memcmp(code, "101", 3) == 0;
	if (!st)
		st = stream_new(s, ctx, 1);
	if (is101) {
		emit_ret(ctx, st, t0, t1, hl);
		return 0;
	}
	st->t0 = t0;
	st->t1 = t1;
	st->len = hl;
	stream_done(ctx, st);
	return -1;
}

/* ---- the byte loop ------------------------------------------------------------
 *
 * h2_decode runs one step of the direction's phase at a time; each step
 * consumes what it can from r and says whether to go on or to wait for more
 * bytes (h2_decode then returns what was consumed). */
enum { STEP_GO = 0, STEP_WAIT };

/* PH_START: the client preface, an HTTP/1.1 head (h2c upgrade), the server's
 * SETTINGS, or else a connection picked up mid-stream. */
static int step_start(struct h2_state *s, struct h2_dir *d, int dir, struct bb_rd *r)
{
	size_t left = bb_rd_left(r);
	if (dir == BB_DIR_C2S) {
		size_t k = left < H2_PREFACE_LEN ? left : H2_PREFACE_LEN;
		if (memcmp(r->p, H2_PREFACE, k) == 0) {
			if (k < H2_PREFACE_LEN)
				return STEP_WAIT; /* wait for the rest */
			bb_rd_skip(r, H2_PREFACE_LEN);
			big(s);
			d->phase = PH_FRAMES;
			return STEP_GO;
		}
		if (!s->upgraded && h1_request(r->p, left)) {
			d->phase = PH_H1;
			return STEP_GO;
		}
		if (!s->upgraded && h1_maybe(r->p, left))
			return STEP_WAIT; /* a request line still coming */
	} else if (left >= 5 && memcmp(r->p, "HTTP/", 5) == 0) {
		d->phase = PH_H1;
		return STEP_GO;
	} else if (left < 9) {
		return STEP_WAIT;
	} else {
		struct bb_rd q = *r;
		struct fhdr h = read_fhdr(&q);
		if (h.type == FT_SETTINGS && h.sid == 0 && !(h.flags & 1)) {
			/* The server's preface: the connection's start. */
			big(s);
			d->phase = PH_FRAMES;
			return STEP_GO;
		}
	}
	/* Mid-connection: older HPACK entries are unknown. */
	tab_forget(&big(s)->tab[dir]);
	d->phase = PH_HUNT;
	return STEP_GO;
}

/* PH_H1: the HTTP/1.1 head of an h2c upgrade, at stream position at. */
static int step_h1(struct h2_state *s, const struct bb_dec_ctx *ctx, struct h2_dir *d, int dir,
                   uint64_t at, struct bb_rd *r)
{
	size_t left = bb_rd_left(r);
	size_t hl = h1_head_len(r->p, left);
	if (hl == 0) {
		if (left > H2_H1_MAX) {
			DEC_COUNT(ctx, malformed);
			d->phase = PH_OPAQUE;
			return STEP_GO;
		}
		return STEP_WAIT;
	}
	if (h1_head(s, ctx, dir, at, r->p, hl) < 0) {
		s->d[0].phase = s->d[1].phase = PH_OPAQUE;
		bb_rd_skip(r, hl);
		return STEP_GO;
	}
	d->h1_left = dir == BB_DIR_C2S ? h1_content_length(r->p, hl) : 0;
	bb_rd_skip(r, hl);
	d->phase = dir == BB_DIR_C2S ? PH_H1_BODY : PH_FRAMES;
	return STEP_GO;
}

/* PH_H1_BODY: the body of the upgrade request, skipped. */
static int step_h1_body(struct h2_dir *d, struct bb_rd *r)
{
	d->h1_left -= bb_rd_skip_upto(r, d->h1_left);
	if (d->h1_left == 0)
		d->phase = PH_START; /* the preface follows */
	return STEP_GO;
}

/* dec_hunt's test: a trustworthy chain of frame headers starts at p; -1
 * (wait for more bytes to decide) while chain_ok cannot tell and fewer than
 * two of the longest frames believed are there. */
static int chain_start(const uint8_t *p, size_t n, const void *arg)
{
	(void)arg;
	int c = chain_ok(bb_rd_make(p, n));
	if (c < 0 && n < 2 * (H2_HUNT_MAX_LEN + 9))
		return -1;
	return c > 0;
}

/* PH_HUNT: skips to the first offset where a trustworthy chain of frame
 * headers starts (chain_ok); waits when none can be decided yet. */
static int step_hunt(const struct bb_dec_ctx *ctx, struct h2_dir *d, struct bb_rd *r)
{
	if (!dec_hunt(r, ctx, 9, chain_start, NULL))
		return STEP_WAIT;
	d->phase = PH_FRAMES;
	d->in_frame = 0;
	return STEP_GO;
}

/* PH_FRAMES inside a frame: the rest of a DATA frame or of a frame we do not
 * read, skipped; the end of a DATA payload may end its stream. */
static int step_payload(struct h2_state *s, const struct bb_dec_ctx *ctx, struct h2_dir *d,
                        int dir, uint64_t at, struct bb_rd *r)
{
	size_t take = bb_rd_skip_upto(r, d->fr_left);
	d->fr_left -= take;
	if (d->fr_left == 0) {
		d->in_frame = 0;
		if (d->fr_type == FT_DATA)
			on_data(s, ctx, dir, d->fr_sid, d->fr_flags & FL_END_STREAM,
			        dec_time(ctx, dir, at + take - 1), 0);
	}
	return STEP_GO;
}

/* PH_FRAMES at a frame header (stream position at): HEADERS or PUSH_PROMISE
 * with their CONTINUATION frames, and RST_STREAM, are read whole; of DATA only
 * the header is read: its payload, like that of any other frame (and of a
 * malformed one), is skipped by step_payload. */
static int step_frame(struct h2_state *s, const struct bb_dec_ctx *ctx, struct h2_dir *d, int dir,
                      uint64_t at, struct bb_rd *r)
{
	size_t left = bb_rd_left(r);
	if (left < 9)
		return STEP_WAIT;
	struct bb_rd q = *r;
	struct fhdr h = read_fhdr(&q);
	int64_t t0 = dec_time(ctx, dir, at);
	switch (h.type) {
	case FT_HEADERS:
	case FT_PUSH: {
		if (h.sid == 0) {
			DEC_COUNT(ctx, malformed);
			break; /* skipped below */
		}
		long used = header_frames(s, ctx, dir, at, *r, &h);
		if (used == 0)
			return STEP_WAIT;
		if (used > 0) {
			bb_rd_skip(r, (size_t)used);
			return STEP_GO;
		}
		DEC_COUNT(ctx, malformed);
		tab_forget(&big(s)->tab[dir]);
		break;
	}
	case FT_RST:
		if (h.len != 4 || !h.sid) {
			DEC_COUNT(ctx, malformed);
			break; /* skipped by its length */
		}
		if (left < 13)
			return STEP_WAIT;
		on_rst(s, ctx, dir, h.sid, t0, dec_time(ctx, dir, at + 12), 13);
		bb_rd_skip(r, 13);
		return STEP_GO;
	case FT_DATA:
		if (h.sid == 0) {
			DEC_COUNT(ctx, malformed);
			break;
		}
		/* The header counts in the response's length; the end comes
		 * with the payload's last byte. */
		on_data(s, ctx, dir, h.sid, 0, dec_time(ctx, dir, at + 8), 9 + (uint64_t)h.len);
		break;
	case FT_CONT: /* without its HEADERS: after a gap; nothing to decode */
	default:
		break;
	}
	/* Skip the frame's payload (possibly over several calls). */
	bb_rd_skip(r, 9);
	d->in_frame = 1;
	d->fr_type = h.type;
	d->fr_flags = h.flags;
	d->fr_sid = h.sid;
	d->fr_left = h.len;
	if (h.len == 0) {
		d->in_frame = 0;
		if (h.type == FT_DATA && h.sid)
			on_data(s, ctx, dir, h.sid, h.flags & FL_END_STREAM, dec_time(ctx, dir, at + 8),
			        0);
	}
	return STEP_GO;
}

static size_t h2_decode(void *stp, const struct bb_dec_ctx *ctx, int dir, uint64_t pos,
                        const uint8_t *p, size_t n)
{
	struct h2_state *s = stp;
	if (dir < 0 || dir > 1)
		return n;
	struct h2_dir *d = &s->d[dir];
	struct bb_rd r = bb_rd_make(p, n);
	int step = STEP_GO;
	while (step == STEP_GO && bb_rd_left(&r) > 0) {
		uint64_t at = pos + (uint64_t)(r.p - p);
		switch (d->phase) {
		case PH_START:
			step = step_start(s, d, dir, &r);
			break;
		case PH_H1:
			step = step_h1(s, ctx, d, dir, at, &r);
			break;
		case PH_H1_BODY:
			step = step_h1_body(d, &r);
			break;
		case PH_HUNT:
			step = step_hunt(ctx, d, &r);
			break;
		case PH_FRAMES:
			step = d->in_frame ? step_payload(s, ctx, d, dir, at, &r)
			                   : step_frame(s, ctx, d, dir, at, &r);
			break;
		default: /* PH_OPAQUE */
			bb_rd_skip(&r, bb_rd_left(&r));
			break;
		}
	}
	return (size_t)(r.p - p);
}

static void h2_gap(void *stp, const struct bb_dec_ctx *ctx, int dir, uint64_t lost)
{
	struct h2_state *s = stp;
	if (dir < 0 || dir > 1)
		return;
	struct h2_dir *d = &s->d[dir];
	if (d->phase == PH_OPAQUE)
		return;
	DEC_COUNT(ctx, resync);
	if (d->phase == PH_FRAMES && d->in_frame && lost && lost < d->fr_left) {
		/* The hole is inside a payload we skip anyway: go on. */
		d->fr_left -= lost;
		return;
	}
	/* Frames were lost: HPACK insertions with them. */
	if (d->phase != PH_START)
		tab_forget(&big(s)->tab[dir]);
	d->phase = d->phase == PH_START ? PH_START : PH_HUNT;
	d->in_frame = 0;
	d->h1_left = 0;
}

static void h2_end(void *stp, const struct bb_dec_ctx *ctx)
{
	struct h2_state *s = stp;
	if (!s->b)
		return;
	/* Responses that began are reported, cut short by the end of the flow. */
	for (int i = 0; i < H2_STREAMS; i++) {
		struct h2_stream *st = &s->b->st[i];
		if (st->used && st->resp)
			stream_done(ctx, st);
		st->used = 0;
	}
}

static void h2_free(void *stp)
{
	struct h2_state *s = stp;
	if (s->b)
		free(s->b->blk);
	free(s->b);
	s->b = NULL;
}

static int h2_probe(const uint8_t *p, size_t n, unsigned transport, int dir)
{
	if (transport != BB_TR_TCP)
		return 0;
	if (dir == BB_DIR_C2S && n >= 16 && memcmp(p, H2_PREFACE, n < 24 ? n : 24) == 0)
		return 1;
	if (dir == BB_DIR_C2S && h1_request(p, n) && has_h2c_upgrade(p, n))
		return 1;
	/* Mid-connection: a run of plausible frames that fills the payload exactly. */
	struct bb_rd r = bb_rd_make(p, n);
	int frames = 0;
	while (bb_rd_left(&r) >= 9) {
		struct fhdr h = read_fhdr(&r);
		if (!plausible(&h) || bb_rd_left(&r) < h.len)
			return 0;
		bb_rd_skip(&r, h.len);
		frames++;
	}
	return frames > 0 && bb_rd_left(&r) == 0;
}

const struct bb_decoder bb_dec_http2 = {
	.name = "http2",
	.summary = "HTTP/2 cleartext and gRPC (RFC 9113, HPACK RFC 7541): id = connection + stream",
	.transports = BB_TR_TCP,
	.ports = {50051, 0},
	.probe = h2_probe,
	.verify = 1,
	.state_size = sizeof(struct h2_state),
	.decode = h2_decode,
	.gap = h2_gap,
	.end = h2_end,
	.free = h2_free,
};

/* dec_tok.c - content tokens and propagated context: normalising, SipHash-2-4, the bounded set */
/* SPDX-License-Identifier: MIT */
/*
 * Real requests share identifiers across tiers: a URL's uid=42, a redis key
 * session:42, a memcached key, an SQL literal or bind parameter, a DNS name.
 * A decoder hands the fields that may hold such identifiers to the functions
 * here, which cut them into tokens, normalise them (ASCII lower case), hash
 * them with SipHash-2-4 under a key derived from the run's salt, and keep at
 * most BB_TOK_MAX distinct ones per message, those holding digits first
 * (user ids, order numbers, dates) and plain words after them. The trace
 * gets the hashes only (tok=), never the values.
 *
 * Propagated context (ctx=) is the hash of the request identity a system
 * already carries: the trace id of W3C traceparent, of B3 (X-B3-TraceId or
 * the single b3 header), of Jaeger's uber-trace-id, or the value of
 * X-Request-ID or X-Correlation-ID. Hex trace ids are lower-cased and lose
 * their leading zeros, so the 64-bit and the 128-bit form of one id (B3
 * allows both, traceparent pads to 128 bits) hash alike.
 *
 * SipHash: J.-P. Aumasson and D. J. Bernstein, "SipHash: a fast short-input
 * PRF", INDOCRYPT 2012 (https://131002.net/siphash/siphash.pdf), section 2:
 * c = 2 compression rounds per 8-byte word, d = 4 finalisation rounds, the
 * key and message words little-endian.
 *
 * Work is bounded per message (DEC_TOK_SCAN bytes looked at, DEC_TOK_HASHES
 * candidates hashed) and nothing is allocated: the set lives in the decoder's
 * per-flow state or on the stack.
 */
#include <stddef.h>
#include <string.h>

#include "decoders/dec_int.h"
#include "decoders/dec_tok_int.h"

/* ---- SipHash-2-4 ------------------------------------------------------------ */

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                                   \
	do {                                                                                           \
		v0 += v1;                                                                                  \
		v1 = ROTL(v1, 13);                                                                         \
		v1 ^= v0;                                                                                  \
		v0 = ROTL(v0, 32);                                                                         \
		v2 += v3;                                                                                  \
		v3 = ROTL(v3, 16);                                                                         \
		v3 ^= v2;                                                                                  \
		v0 += v3;                                                                                  \
		v3 = ROTL(v3, 21);                                                                         \
		v3 ^= v0;                                                                                  \
		v2 += v1;                                                                                  \
		v1 = ROTL(v1, 17);                                                                         \
		v1 ^= v2;                                                                                  \
		v2 = ROTL(v2, 32);                                                                         \
	} while (0)

uint64_t bb_tok_siphash(const struct bb_tok_key *k, const void *p, size_t n)
{
	struct bb_rd r = bb_rd_make(p, n);
	uint64_t v0 = UINT64_C(0x736f6d6570736575) ^ k->k0;
	uint64_t v1 = UINT64_C(0x646f72616e646f6d) ^ k->k1;
	uint64_t v2 = UINT64_C(0x6c7967656e657261) ^ k->k0;
	uint64_t v3 = UINT64_C(0x7465646279746573) ^ k->k1;
	while (bb_rd_left(&r) >= 8) {
		uint64_t lo = bb_rd_le32(&r);
		uint64_t m = lo | (uint64_t)bb_rd_le32(&r) << 32;
		v3 ^= m;
		SIPROUND;
		SIPROUND;
		v0 ^= m;
	}
	/* The last word: the remaining bytes, the length mod 256 on top. */
	uint64_t b = (uint64_t)n << 56;
	for (unsigned i = 0; bb_rd_left(&r); i++)
		b |= (uint64_t)bb_rd_u8(&r) << (8 * i);
	v3 ^= b;
	SIPROUND;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

void bb_tok_key_derive(struct bb_tok_key *k, const void *salt, size_t n)
{
	static const struct bb_tok_key k0 = {0, 0}, k1 = {1, 0};
	k->k0 = bb_tok_siphash(&k0, salt, n);
	k->k1 = bb_tok_siphash(&k1, salt, n);
}

static char *hex16(char *o, uint64_t v)
{
	static const char hx[] = "0123456789abcdef";
	for (int i = 15; i >= 0; i--) {
		o[i] = hx[v & 15];
		v >>= 4;
	}
	return o + 16;
}

size_t bb_tok_format(const struct bb_dec_toks *t, char *buf, size_t cap)
{
	size_t need = t->n ? (size_t)t->n * 17 : 1;
	if (cap < need) {
		if (cap)
			buf[0] = '\0';
		return 0;
	}
	char *o = buf;
	for (unsigned i = 0; i < t->n; i++) {
		if (i)
			*o++ = ',';
		o = hex16(o, t->h[i]);
	}
	*o = '\0';
	return (size_t)(o - buf);
}

size_t bb_tok_format_ctx(const struct bb_dec_toks *t, char *buf, size_t cap)
{
	if (!t->ctx_prio || cap < 17) {
		if (cap)
			buf[0] = '\0';
		return 0;
	}
	hex16(buf, t->ctx)[0] = '\0';
	return 16;
}

/* ---- the bounded set --------------------------------------------------------- */

static int full(const struct bb_dec_toks *t)
{
	return t->hashes >= DEC_TOK_HASHES || t->nspec >= BB_TOK_MAX || t->scan >= DEC_TOK_SCAN;
}

/* Adds hash h; spec: the token holds a digit (kept before the words). */
static void put(struct bb_dec_toks *t, uint64_t h, int spec)
{
	for (unsigned i = 0; i < t->n; i++)
		if (t->h[i] == h)
			return;
	if (!spec) {
		if (t->n < BB_TOK_MAX)
			t->h[t->n++] = h;
		return;
	}
	if (t->nspec >= BB_TOK_MAX)
		return;
	if (t->n >= BB_TOK_MAX)
		t->n--; /* the last word makes room */
	memmove(&t->h[t->nspec + 1], &t->h[t->nspec], (size_t)(t->n - t->nspec) * sizeof t->h[0]);
	t->h[t->nspec++] = h;
	t->n++;
}

static void add(struct bb_dec_toks *t, const struct bb_dec_ctx *ctx, const char *s, size_t n,
                int spec)
{
	t->hashes++;
	put(t, bb_tok_siphash(ctx->tok_key, s, n), spec);
}

/* Words that say what is done, not to what: SQL and HTTP keywords and the
 * commonest URL and protocol words. Lower case, by length. */
static const char *const kw3[] = {"and", "not", "set", "get", "put", "asc", "end", "all",
                                  "com", "org", "net", "www", "api", "utf", NULL};
static const char *const kw4[] = {"from", "null", "into", "true", "join", "left", "like",
                                  "desc", "case", "when", "then", "else", "post", "head",
                                  "http", "html", "json", "with", "only", "over", NULL};
static const char *const kw5[] = {"where", "false", "order", "group", "limit", "inner",
                                  "outer", "right", "union", "begin", "patch", "https",
                                  "count", "table", "index", "value", "using", NULL};
static const char *const kw6[] = {"select", "insert", "update", "delete", "values", "having",
                                  "offset", "commit", "exists", "create", "return", NULL};
static const char *const kw7[] = {"between", "options", "connect", "default", "charset", NULL};
static const char *const kw8[] = {"rollback", "distinct", NULL};
static const char *const kw9[] = {"returning", NULL};

static int keyword(const char *s, size_t n)
{
	const char *const *l;
	switch (n) {
	case 3: l = kw3; break;
	case 4: l = kw4; break;
	case 5: l = kw5; break;
	case 6: l = kw6; break;
	case 7: l = kw7; break;
	case 8: l = kw8; break;
	case 9: l = kw9; break;
	default: return 0;
	}
	for (; *l; l++)
		if (memcmp(*l, s, n) == 0 && (*l)[n] == '\0')
			return 1;
	return 0;
}

static int is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static int is_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int is_run(int c)
{
	return is_digit(c) || is_alpha(c) || c == '_';
}

static char lower(int c)
{
	return (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
}

static int blank(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static int peek(const struct bb_rd *r, size_t k)
{
	return k < bb_rd_left(r) ? r->p[k] : -1;
}

/* One run (already lower-cased, n bytes): kept when long enough and not a
 * keyword. Numbers need 2 digits, words 3 letters, mixtures 3 bytes. */
static void candidate(struct bb_dec_toks *t, const struct bb_dec_ctx *ctx, const char *s, size_t n,
                      unsigned digits, unsigned letters)
{
	if (letters == 0 && digits < 2)
		return;
	if (digits == 0 && (letters < 3 || keyword(s, n)))
		return;
	if (n < 3 && letters)
		return;
	add(t, ctx, s, n, digits > 0);
}

/* The runs of the bytes in r (consumed), each a candidate. Returns how many
 * runs there were and whether the first covered everything (*whole_run). */
static unsigned runs(struct bb_dec_toks *t, const struct bb_dec_ctx *ctx, struct bb_rd r,
                     int *whole_run)
{
	char buf[DEC_TOK_RUN_MAX];
	unsigned nruns = 0;
	size_t total = bb_rd_left(&r);
	*whole_run = 0;
	while (bb_rd_left(&r) && !full(t)) {
		int c = bb_rd_u8(&r);
		if (!is_run(c))
			continue;
		size_t n = 0, len = 1;
		unsigned digits = 0, letters = 0;
		for (;;) {
			if (n < sizeof buf)
				buf[n++] = lower(c);
			digits += (unsigned)is_digit(c);
			letters += (unsigned)is_alpha(c);
			int d = peek(&r, 0);
			if (is_run(d) || ((d == '-' || d == '.') && is_run(peek(&r, 1)))) {
				c = bb_rd_u8(&r);
				len++;
				continue;
			}
			break;
		}
		nruns++;
		if (nruns == 1 && len == total)
			*whole_run = 1;
		candidate(t, ctx, buf, n, digits, letters);
	}
	return nruns;
}

/* A field already in memory of ours (or borrowed), n <= DEC_TOK_FIELD_MAX
 * when whole is set. */
static void field_bytes(struct bb_dec_toks *t, const struct bb_dec_ctx *ctx, const uint8_t *p,
                        size_t n, int whole)
{
	/* The scan budget counts what is looked at, blanks included. */
	size_t room = DEC_TOK_SCAN - t->scan;
	if (n > room) {
		n = room;
		whole = 0;
	}
	t->scan = (uint16_t)(t->scan + n);
	struct bb_rd r = bb_rd_make(p, n);
	while (bb_rd_left(&r) && blank(peek(&r, 0)))
		bb_rd_skip(&r, 1);
	while (bb_rd_left(&r) && blank(r.end[-1]))
		r.end--;
	size_t left = bb_rd_left(&r);
	int whole_run;
	runs(t, ctx, r, &whole_run);
	if (!whole || whole_run || left < 3 || left > DEC_TOK_FIELD_MAX || t->hashes >= DEC_TOK_HASHES)
		return;
	char buf[DEC_TOK_FIELD_MAX];
	unsigned digits = 0, alnum = 0;
	for (size_t i = 0; i < left; i++) {
		int c = bb_rd_u8(&r);
		buf[i] = lower(c);
		digits += (unsigned)is_digit(c);
		alnum += (unsigned)(is_digit(c) || is_alpha(c));
	}
	if (alnum >= 2)
		add(t, ctx, buf, left, digits > 0);
}

void dec_tok_field(struct bb_dec_toks *t, const struct bb_dec_ctx *ctx, const uint8_t *p,
                   size_t n, unsigned flags)
{
	if (!dec_tok_on(ctx) || full(t) || !n)
		return;
	if (!(flags & DEC_TOK_PCT)) {
		field_bytes(t, ctx, p, n, (flags & DEC_TOK_WHOLE) != 0);
		return;
	}
	/* Percent-decoded into a buffer of ours; a longer field is cut there
	 * (and then has no whole token). */
	uint8_t buf[2 * DEC_TOK_FIELD_MAX];
	size_t o = 0;
	struct bb_rd r = bb_rd_make(p, n);
	while (bb_rd_left(&r) && o < sizeof buf) {
		int c = bb_rd_u8(&r);
		if (c == '+') {
			c = ' ';
		} else if (c == '%') {
			int h = peek(&r, 0), l = peek(&r, 1);
			int hv = is_digit(h) ? h - '0' : (lower(h) >= 'a' && lower(h) <= 'f') ? lower(h) - 'a' + 10 : -1;
			int lv = is_digit(l) ? l - '0' : (lower(l) >= 'a' && lower(l) <= 'f') ? lower(l) - 'a' + 10 : -1;
			if (hv >= 0 && lv >= 0) {
				c = hv * 16 + lv;
				bb_rd_skip(&r, 2);
			}
		}
		buf[o++] = (uint8_t)c;
	}
	field_bytes(t, ctx, buf, o, (flags & DEC_TOK_WHOLE) && !bb_rd_left(&r));
}

void dec_tok_target(struct bb_dec_toks *t, const struct bb_dec_ctx *ctx, const uint8_t *p,
                    size_t n)
{
	if (!dec_tok_on(ctx) || full(t) || n < 3)
		return; /* "/", "*", "/a": nothing long enough */
	struct bb_rd r = bb_rd_make(p, n);
	/* Absolute form (to a proxy): the scheme and the authority are not tokens. */
	long sch = bb_rd_find(&r, "://", 3);
	if (sch > 0 && sch < 8) {
		bb_rd_skip(&r, (size_t)sch + 3);
		long sl = bb_rd_findc(&r, '/');
		bb_rd_skip(&r, sl < 0 ? bb_rd_left(&r) : (size_t)sl);
	}
	long hash = bb_rd_findc(&r, '#');
	if (hash >= 0)
		r.end = r.p + hash;
	long q = bb_rd_findc(&r, '?');
	struct bb_rd path = r;
	if (q >= 0)
		path.end = path.p + q;
	while (bb_rd_left(&path) && !full(t)) {
		long sl = bb_rd_findc(&path, '/');
		size_t sn = sl < 0 ? bb_rd_left(&path) : (size_t)sl;
		const uint8_t *seg = bb_rd_bytes(&path, sn);
		if (sn)
			dec_tok_field(t, ctx, seg, sn, DEC_TOK_WHOLE | DEC_TOK_PCT);
		bb_rd_skip(&path, bb_rd_left(&path) ? 1 : 0);
	}
	if (q < 0)
		return;
	bb_rd_skip(&r, (size_t)q + 1);
	while (bb_rd_left(&r) && !full(t)) {
		long amp = bb_rd_findc(&r, '&');
		long semi = bb_rd_findc(&r, ';');
		if (amp < 0 || (semi >= 0 && semi < amp))
			amp = semi;
		size_t pn = amp < 0 ? bb_rd_left(&r) : (size_t)amp;
		struct bb_rd part = bb_rd_sub(&r, pn);
		bb_rd_skip(&r, bb_rd_left(&r) ? 1 : 0);
		long eq = bb_rd_findc(&part, '=');
		if (eq >= 0)
			bb_rd_skip(&part, (size_t)eq + 1);
		if (bb_rd_left(&part))
			dec_tok_field(t, ctx, part.p, bb_rd_left(&part), DEC_TOK_WHOLE | DEC_TOK_PCT);
	}
}

void dec_tok_merge(struct bb_dec_toks *t, const struct bb_dec_toks *s)
{
	for (unsigned i = 0; i < s->n && t->nspec < BB_TOK_MAX; i++)
		put(t, s->h[i], i < s->nspec);
	if (s->ctx_prio && (!t->ctx_prio || s->ctx_prio < t->ctx_prio)) {
		t->ctx = s->ctx;
		t->ctx_prio = s->ctx_prio;
	}
	if (s->hashes > t->hashes)
		t->hashes = s->hashes;
	if (s->scan > t->scan)
		t->scan = s->scan;
}

/* ---- headers ------------------------------------------------------------------ */

enum { CTX_TRACEPARENT = 1, CTX_B3, CTX_UBER, CTX_REQUEST_ID, CTX_CORRELATION_ID };

/* Header names by first letter (lower case; a trailing '*' makes a prefix):
 * the context headers with their priority, and the standard request headers
 * (and HTTP/2 pseudo-headers other than :path) whose values are about the
 * client, the connection or the cache, not the request's subject (0: no
 * tokens). */
struct hname {
	const char *s;
	size_t len;             /* of s, its '*' included */
	int ctx;
};
#define H(s, ctx) {s, sizeof s - 1, ctx}

static const struct hname *header_names(int c0)
{
	static const struct hname a[] = {H("accept*", 0), H("access-control-*", 0), H("age", 0),
		H("authorization", 0), {NULL, 0, 0}};
	static const struct hname b[] = {H("b3", CTX_B3), H("baggage", 0), {NULL, 0, 0}};
	static const struct hname c[] = {H("connection", 0), H("cookie", 0), H("cache-control", 0),
		H("content-*", 0), {NULL, 0, 0}};
	static const struct hname d[] = {H("date", 0), H("dnt", 0), {NULL, 0, 0}};
	static const struct hname e[] = {H("expires", 0), H("expect", 0), H("etag", 0), {NULL, 0, 0}};
	static const struct hname f[] = {H("forwarded", 0), {NULL, 0, 0}};
	static const struct hname g[] = {H("grpc-*", 0), {NULL, 0, 0}};
	static const struct hname h[] = {H("host", 0), {NULL, 0, 0}};
	static const struct hname i[] = {H("if-*", 0), {NULL, 0, 0}};
	static const struct hname k[] = {H("keep-alive", 0), {NULL, 0, 0}};
	static const struct hname l[] = {H("last-modified", 0), H("location", 0), {NULL, 0, 0}};
	static const struct hname m[] = {H("max-forwards", 0), {NULL, 0, 0}};
	static const struct hname o[] = {H("origin", 0), H("ot-*", 0), {NULL, 0, 0}};
	static const struct hname p[] = {H("pragma", 0), H("priority", 0), H("purpose", 0),
		H("proxy-*", 0), {NULL, 0, 0}};
	static const struct hname r[] = {H("referer", 0), H("range", 0), {NULL, 0, 0}};
	static const struct hname s[] = {H("server", 0), H("save-data", 0), H("set-cookie", 0),
		H("sec-*", 0), {NULL, 0, 0}};
	static const struct hname t[] = {H("traceparent", CTX_TRACEPARENT), H("te", 0), H("trailer", 0),
		H("transfer-encoding", 0), H("tracestate", 0), H("tk", 0), {NULL, 0, 0}};
	static const struct hname u[] = {H("user-agent", 0), H("uber-trace-id", CTX_UBER),
		H("upgrade", 0), H("upgrade-insecure-requests", 0), H("uberctx-*", 0), {NULL, 0, 0}};
	static const struct hname v[] = {H("via", 0), H("vary", 0), {NULL, 0, 0}};
	static const struct hname x[] = {H("x-request-id", CTX_REQUEST_ID),
		H("x-correlation-id", CTX_CORRELATION_ID), H("x-b3-traceid", CTX_B3),
		H("x-real-ip", 0), H("x-requested-with", 0), H("x-forwarded-*", 0), H("x-b3-*", 0),
		{NULL, 0, 0}};
	static const struct hname colon[] = {H(":method", 0), H(":scheme", 0), H(":authority", 0),
		H(":protocol", 0), H(":status", 0), {NULL, 0, 0}};
	switch (c0) {
	case 'a': return a;
	case 'b': return b;
	case 'c': return c;
	case 'd': return d;
	case 'e': return e;
	case 'f': return f;
	case 'g': return g;
	case 'h': return h;
	case 'i': return i;
	case 'k': return k;
	case 'l': return l;
	case 'm': return m;
	case 'o': return o;
	case 'p': return p;
	case 'r': return r;
	case 's': return s;
	case 't': return t;
	case 'u': return u;
	case 'v': return v;
	case 'x': return x;
	case ':': return colon;
	default: return NULL;
	}
}

/* 1 when the len bytes at q equal the lower-case pattern pat ignoring case.
 * Bytes are compared with bit 5 set, 8 at a time: letters fold, and the other
 * characters of header names ('-', ':', digits) already have it; a byte
 * that only matches through the fold (a control byte) is no valid name. */
static int ieq(const uint8_t *q, const char *pat, size_t len)
{
	while (len >= 8) {
		uint64_t a, b;
		memcpy(&a, q, 8);
		memcpy(&b, pat, 8);
		if ((a | UINT64_C(0x2020202020202020)) != b)
			return 0;
		q += 8;
		pat += 8;
		len -= 8;
	}
	while (len) {
		if ((uint8_t)(*q | 0x20) != (uint8_t)*pat)
			return 0;
		q++;
		pat++;
		len--;
	}
	return 1;
}

#undef H

/* What the header name at r (any case) is: a context header (its CTX_*
 * priority), a standard one (0) or another (-1: its value has tokens). */
static int header_kind(struct bb_rd r)
{
	size_t n = bb_rd_left(&r);
	const struct hname *l = n ? header_names(lower(peek(&r, 0))) : NULL;
	const uint8_t *q = bb_rd_bytes(&r, n); /* all n bytes: ieq reads at most n */
	for (; l && l->s; l++) {
		size_t pl = l->len;
		int prefix = l->s[pl - 1] == '*';
		if (prefix ? n >= pl - 1 && ieq(q, l->s, pl - 1) : n == pl && ieq(q, l->s, pl))
			return l->ctx;
	}
	return -1;
}

/* A hex trace id (1 to 32 hex digits) in r: lower-cased without leading
 * zeros into out; returns its length, 0 when it is not one (or all zeros). */
static size_t hex_id(struct bb_rd r, char *out)
{
	size_t n = bb_rd_left(&r), o = 0;
	if (n == 0 || n > 32)
		return 0;
	while (bb_rd_left(&r)) {
		int c = lower(bb_rd_u8(&r));
		if (!is_digit(c) && !(c >= 'a' && c <= 'f'))
			return 0;
		if (c == '0' && o == 0)
			continue;
		out[o++] = (char)c;
	}
	return o;
}

static void set_ctx(struct bb_dec_toks *t, const struct bb_dec_ctx *ctx, int prio, const char *s,
                    size_t n)
{
	if (!n || (t->ctx_prio && t->ctx_prio <= prio))
		return;
	t->ctx = bb_tok_siphash(ctx->tok_key, s, n);
	t->ctx_prio = (uint8_t)prio;
}

/* The bytes of r up to the first c (or all). */
static struct bb_rd upto(struct bb_rd r, uint8_t c)
{
	long at = bb_rd_findc(&r, c);
	if (at >= 0)
		r.end = r.p + at;
	return r;
}

int dec_tok_header(struct bb_dec_toks *t, const struct bb_dec_ctx *ctx, const uint8_t *name,
                   size_t nlen, const uint8_t *val, size_t vlen, int want_tokens)
{
	if (!dec_tok_on(ctx))
		return 0;
	int prio = header_kind(bb_rd_make(name, nlen));
	if (prio == 0 || (prio < 0 && !want_tokens))
		return 0;
	if (prio < 0)
		prio = 0;
	char id[DEC_TOK_FIELD_MAX];
	size_t il = 0;
	struct bb_rd v = bb_rd_make(val, vlen);
	/* Context and token values go without their surrounding blanks. */
	while (bb_rd_left(&v) && blank(peek(&v, 0)))
		bb_rd_skip(&v, 1);
	while (bb_rd_left(&v) && blank(v.end[-1]))
		v.end--;
	if (prio == CTX_TRACEPARENT) {
		/* version "-" trace-id "-" parent-id "-" flags (W3C Trace Context 3.2) */
		if (bb_rd_findc(&v, '-') == 2) {
			bb_rd_skip(&v, 3);
			il = hex_id(upto(v, '-'), id);
		}
	} else if (prio == CTX_B3 && nlen > 2) {
		il = hex_id(v, id); /* X-B3-TraceId */
	} else if (prio == CTX_B3) {
		/* trace-id "-" span-id ["-" sampled ["-" parent]], or a sampling
		 * state alone ("0", "1", "d"), which names no trace. */
		struct bb_rd tid = upto(v, '-');
		if (bb_rd_left(&tid) == 16 || bb_rd_left(&tid) == 32)
			il = hex_id(tid, id);
	} else if (prio == CTX_UBER) {
		/* trace-id ":" span-id ":" parent ":" flags, ':' maybe as %3A */
		struct bb_rd tid = upto(v, ':');
		long pct = bb_rd_findc(&tid, '%');
		if (pct >= 0)
			tid.end = tid.p + pct;
		il = hex_id(tid, id);
	} else if (prio) {
		/* X-Request-ID, X-Correlation-ID: the value itself */
		size_t n = bb_rd_left(&v);
		if (n <= sizeof id) {
			memcpy(id, bb_rd_bytes(&v, n), n);
			for (size_t i = 0; i < n; i++)
				id[i] = lower(id[i]);
			il = n;
		}
	}
	if (prio) {
		set_ctx(t, ctx, prio, id, il);
		return 1;
	}
	if (bb_rd_left(&v))
		dec_tok_field(t, ctx, v.p, bb_rd_left(&v), DEC_TOK_WHOLE);
	return 0;
}

/* ---- other shapes -------------------------------------------------------------- */

void dec_tok_name(struct bb_dec_toks *t, const struct bb_dec_ctx *ctx, const uint8_t *p,
                  size_t n)
{
	if (!dec_tok_on(ctx) || full(t))
		return;
	char buf[256];
	struct bb_rd r = bb_rd_make(p, n);
	if (n && r.end[-1] == '.')
		r.end--;
	size_t len = bb_rd_left(&r);
	if (len < 3 || len > sizeof buf)
		return;
	unsigned digits = 0;
	for (size_t i = 0; i < len; i++) {
		int c = bb_rd_u8(&r);
		buf[i] = lower(c);
		digits += (unsigned)is_digit(c);
	}
	t->scan = (uint16_t)(t->scan + len);
	add(t, ctx, buf, len, digits > 0);
}

void dec_tok_int(struct bb_dec_toks *t, const struct bb_dec_ctx *ctx, int64_t v, int is_unsigned)
{
	if (!dec_tok_on(ctx) || full(t))
		return;
	char buf[24];
	char *e = buf + sizeof buf, *q = e;
	uint64_t u = is_unsigned || v >= 0 ? (uint64_t)v : 0 - (uint64_t)v;
	do {
		*--q = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	/* The sign is not part of a run: "-42" gives "42", as in text. */
	if (e - q >= 2)
		add(t, ctx, q, (size_t)(e - q), 1);
	else
		t->hashes++;
}

void dec_tok_uuid(struct bb_dec_toks *t, const struct bb_dec_ctx *ctx, const uint8_t *p)
{
	if (!dec_tok_on(ctx) || full(t))
		return;
	static const char hx[] = "0123456789abcdef";
	char buf[36];
	struct bb_rd r = bb_rd_make(p, 16);
	size_t o = 0;
	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			buf[o++] = '-';
		uint8_t c = bb_rd_u8(&r);
		buf[o++] = hx[c >> 4];
		buf[o++] = hx[c & 15];
	}
	/* As text, the UUID is one run: same hash as in a URL or an SQL string. */
	dec_tok_field(t, ctx, (const uint8_t *)buf, o, 0);
}

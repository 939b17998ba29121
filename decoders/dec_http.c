/* dec_http.c - HTTP/1.0 and 1.1 requests and responses, with pipelining */
/* SPDX-License-Identifier: MIT */
/*
 * RFC 9112 (HTTP/1.1 message syntax): section 6.3 (message body length),
 * 7.1 (chunked transfer coding); RFC 9110 15.2 (1xx) and 9.3.2 (HEAD).
 *
 *   request:  METHOD SP target SP HTTP/1.x CRLF *(field CRLF) CRLF [body]
 *   response: HTTP/1.x SP status SP reason CRLF *(field CRLF) CRLF [body]
 *   body:     Content-Length bytes | chunked (hex-size CRLF data CRLF)* 0 CRLF
 *             trailers CRLF | none (HEAD, 1xx, 204, 304) | until close
 *
 * HTTP/1.x answers in order, so the id is "c<connection>.<ordinal>" of the
 * request; a 1xx interim response is an extra RET with its request's id.
 * req = "METHOD target". A message is emitted when its body ends.
 */
#include <stddef.h>
#include <stdlib.h>

#include "decoders/dec_int.h"
#include "decoders/dec_tok_int.h"
#include "decoders/dec_ordq_int.h"

#define HTTP_MAX_HEAD (64u * 1024)
#define HTTP_REQ_MAX 80
/* A string literal and its length, as two arguments. */
#define LIT(s) s, sizeof s - 1

enum { PH_HEAD = 0, PH_BODY_LEN, PH_CHUNK_SIZE, PH_CHUNK_DATA, PH_CHUNK_CRLF, PH_TRAILER,
       PH_BODY_CLOSE, PH_OPAQUE };

struct http_dir {
	uint8_t phase;
	uint8_t hunting;
	uint8_t pending;        /* a message is in progress (head parsed) */
	uint8_t op;
	uint32_t ord;           /* request ordinal of the message in progress */
	uint64_t left;          /* body or chunk bytes left */
	int64_t t0, t1;
	uint64_t len;
	uint8_t reqlen;
	char req[HTTP_REQ_MAX];
	struct bb_dec_toks toks; /* of the message in progress */
};

struct http_state {
	struct http_dir d[2];
	uint32_t nreq;          /* requests seen */
	uint8_t resynced;       /* responses were lost: re-pair by time */
	struct dec_ordq q;      /* requests awaiting a final response */
};

/* Flags of a waiting request. */
enum { Q_HEAD = 1, Q_CONNECT = 2 };

/* The methods, each with the space that ends it, and its length. */
static const struct {
	char s[12];
	uint8_t len;
} methods[] = {{"GET ", 4}, {"POST ", 5}, {"PUT ", 4}, {"HEAD ", 5}, {"DELETE ", 7},
	{"OPTIONS ", 8}, {"PATCH ", 6}, {"CONNECT ", 8}, {"TRACE ", 6}, {"PROPFIND ", 9},
	{"PROPPATCH ", 10}, {"MKCOL ", 6}, {"COPY ", 5}, {"MOVE ", 5}, {"LOCK ", 5},
	{"UNLOCK ", 7}, {"REPORT ", 7}, {"SEARCH ", 7}, {"SUBSCRIBE ", 10}, {"NOTIFY ", 7}};

static int is_method(const uint8_t *p, size_t n)
{
	struct bb_rd r = bb_rd_make(p, n);
	uint8_t c = bb_rd_u8(&r);
	/* Every method starts with a capital letter from A to U: hunting
	 * through a body calls this at each byte, and most bytes stop here. */
	if (c < 'A' || c > 'U')
		return 0;
	for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
		size_t l = methods[i].len;
		if ((uint8_t)methods[i].s[0] == c && n >= l && memcmp(p, methods[i].s, l) == 0)
			return 1;
	}
	return 0;
}

static int is_status(const uint8_t *p, size_t n)
{
	return n >= 7 && memcmp(p, "HTTP/1.", 7) == 0;
}

/* A method, a target and " HTTP/1." on one line. */
static int request_line(const uint8_t *p, size_t n)
{
	if (!is_method(p, n))
		return 0;
	struct bb_rd r = bb_rd_make(p, n < 4096 ? n : 4096);
	long nl = bb_rd_findc(&r, '\n');
	struct bb_rd line = bb_rd_make(p, nl < 0 ? bb_rd_left(&r) : (size_t)nl);
	return bb_rd_find(&line, " HTTP/1.", 8) > 0;
}

static uint8_t lower(uint8_t c)
{
	return c >= 'A' && c <= 'Z' ? (uint8_t)(c + 32) : c;
}

/* 1 when the n bytes at a equal lit[0..l), ignoring ASCII case (lit is lower case). */
static int lower_eq(const uint8_t *a, size_t n, const char *lit, size_t l)
{
	if (n != l)
		return 0;
	struct bb_rd r = bb_rd_make(a, n);
	for (size_t i = 0; i < l; i++) {
		if (lower(bb_rd_u8(&r)) != (uint8_t)lit[i])
			return 0;
	}
	return 1;
}

/* 1 when tok[0..l) occurs (any case) in the n bytes at v. */
static int has_token(const uint8_t *v, size_t n, const char *tok, size_t l)
{
	struct bb_rd r = bb_rd_make(v, n);
	while (bb_rd_left(&r) >= l) {
		if (lower((uint8_t)bb_rd_peek(&r)) == (uint8_t)tok[0] && lower_eq(r.p, l, tok, l))
			return 1;
		bb_rd_skip(&r, 1);
	}
	return 0;
}

/* n without the trailing bytes of p[0..n) that are CR, LF or (with sp) space. */
static size_t trim(const uint8_t *p, size_t n, int sp)
{
	while (n > 0) {
		struct bb_rd r = bb_rd_make(p, n);
		bb_rd_skip(&r, n - 1);
		uint8_t c = bb_rd_u8(&r);
		if (c != '\r' && c != '\n' && !(sp && c == ' '))
			break;
		n--;
	}
	return n;
}

struct head_info {
	size_t line1;           /* length of the first line, through its LF */
	int bad;                /* a Content-Length without digits */
	int chunked;
	int has_len;
	uint64_t clen;
	/* Set by the caller (kept by scan_head), tokens on: the header fields'
	 * content tokens and context go to toks. */
	struct bb_dec_toks *toks;
	const struct bb_dec_ctx *ctx;
	int dir;
};

/* 1 when byte k of the n bytes at p is c. */
static int byte_is(const uint8_t *p, size_t n, size_t k, uint8_t c)
{
	struct bb_rd r = bb_rd_make(p, n);
	bb_rd_skip(&r, k);
	return bb_rd_peek(&r) == c;
}

/* Reads one header field (a line without its line end, ll > 0) into hi. Only
 * the two fields that frame the body matter (Connection: close needs nothing:
 * a body without a length runs to the close anyway); they are told by their
 * first letter and where the colon is before the name is compared. */
static void field(const uint8_t *lp, size_t ll, struct head_info *hi)
{
	uint8_t c0 = lower(*lp);
	size_t nlen;
	if (c0 == 'c' && byte_is(lp, ll, 14, ':'))
		nlen = 14;
	else if (c0 == 't' && byte_is(lp, ll, 17, ':'))
		nlen = 17;
	else
		return;
	/* An earlier colon would end the name there: the names compared hold none. */
	struct bb_rd lr = bb_rd_make(lp, ll);
	const uint8_t *name = bb_rd_bytes(&lr, nlen + 1);
	bb_rd_skip_any(&lr, " \t");
	size_t vlen = bb_rd_left(&lr);
	const uint8_t *v = lr.p;
	if (lower_eq(name, nlen, LIT("content-length"))) {
		uint64_t x = 0;
		size_t i = 0;
		struct bb_rd num = bb_rd_make(v, vlen);
		while (bb_rd_peek(&num) >= '0' && bb_rd_peek(&num) <= '9' && x < (UINT64_C(1) << 56)) {
			x = x * 10 + (uint64_t)(bb_rd_u8(&num) - '0');
			i++;
		}
		if (i == 0) {
			hi->bad = 1;
			return;
		}
		hi->has_len = 1;
		hi->clen = x;
	} else if (lower_eq(name, nlen, LIT("transfer-encoding"))) {
		if (has_token(v, vlen, LIT("chunked")))
			hi->chunked = 1;
	}
}

/* The content tokens and context of one header field (a line without its
 * line end, ll > 0): a request's non-standard fields and context headers, a
 * response's context headers (t, x, b, u: traceparent, X-..., b3,
 * uber-trace-id). */
static void field_tokens(const uint8_t *lp, size_t ll, struct head_info *hi)
{
	uint8_t c0 = lower(*lp);
	if (hi->dir == BB_DIR_S2C && c0 != 't' && c0 != 'x' && c0 != 'b' && c0 != 'u')
		return;
	struct bb_rd lr = bb_rd_make(lp, ll);
	long colon = bb_rd_findc(&lr, ':');
	if (colon <= 0)
		return;
	const uint8_t *name = bb_rd_bytes(&lr, (size_t)colon);
	bb_rd_skip(&lr, 1);
	dec_tok_header(hi->toks, hi->ctx, name, (size_t)colon, lr.p, bb_rd_left(&lr),
	               hi->dir == BB_DIR_C2S);
}

/* One pass over a head: returns its length (up to and including the empty
 * line that ends it), or 0 if it is not complete in the n bytes; fills hi
 * from its header fields (the lines after the first, up to the first line
 * that holds nothing but line-end bytes; none after a bad Content-Length). */
static size_t scan_head(const uint8_t *p, size_t n, struct head_info *hi)
{
	struct bb_rd r = bb_rd_make(p, n);
	int fields = 1;
	struct bb_dec_toks *toks = hi->toks;
	const struct bb_dec_ctx *tctx = hi->ctx;
	int dir = hi->dir;
	memset(hi, 0, sizeof *hi);
	hi->toks = toks;
	hi->ctx = tctx;
	hi->dir = dir;
	if (toks)
		dec_tok_reset(toks);
	long nl = bb_rd_findc(&r, '\n');
	if (nl < 0)
		return 0;
	bb_rd_skip(&r, (size_t)nl + 1);
	hi->line1 = (size_t)nl + 1;
	for (;;) {
		nl = bb_rd_findc(&r, '\n');
		if (nl < 0)
			return 0;
		const uint8_t *lp = r.p;
		bb_rd_skip(&r, (size_t)nl + 1);
		if (nl == 0 || (nl == 1 && *lp == '\r'))
			return (size_t)(r.p - p);
		if (!fields)
			continue;
		size_t ll = trim(lp, (size_t)nl, 0);
		if (ll == 0) {
			fields = 0; /* "\r\r\n": the fields end, the head goes on */
			continue;
		}
		field(lp, ll, hi);
		if (hi->toks)
			field_tokens(lp, ll, hi);
		if (hi->bad)
			fields = 0;
	}
}

/* "c<connection>.<ordinal>" ("c<connection>.?" for ordinal 0) into buf (at
 * least 32 bytes), digits by hand: this runs once per message. */
static int id_of(char *buf, const struct bb_dec_ctx *ctx, uint32_t ord)
{
	char tmp[24];
	char *o = buf;
	int n = 0;
	uint64_t c = ctx->conn;
	*o++ = 'c';
	do {
		tmp[n++] = (char)('0' + c % 10);
		c /= 10;
	} while (c);
	while (n)
		*o++ = tmp[--n];
	*o++ = '.';
	if (!ord) {
		*o++ = '?';
		return (int)(o - buf);
	}
	do {
		tmp[n++] = (char)('0' + ord % 10);
		ord /= 10;
	} while (ord);
	while (n)
		*o++ = tmp[--n];
	return (int)(o - buf);
}

static void finish(struct http_state *s, const struct bb_dec_ctx *ctx, int dir)
{
	struct http_dir *d = &s->d[dir];
	char id[48];
	if (!d->pending)
		return;
	int il = id_of(id, ctx, d->ord);
	dec_emit_toks(ctx, (enum bb_op)d->op, dir, d->t0, d->t1, d->len, id, (size_t)il,
	              d->reqlen ? d->req : NULL, d->reqlen, &d->toks);
	d->pending = 0;
	(void)s;
}

/* Parses a request head at p, scanned into hi: queues the request and sets
 * the body phase. Returns -1 when it is not a request head (or has a bad
 * Content-Length), 1 when the message ends with its head, else 0. */
static int request_head(struct http_state *s, const struct bb_dec_ctx *ctx, struct http_dir *d,
                        const uint8_t *p, const struct head_info *hi, int64_t t0)
{
	size_t nl = hi->line1 - 1;
	if (!is_method(p, nl))
		return -1;
	struct bb_rd line = bb_rd_make(p, nl + 1);
	long sp1 = bb_rd_findc(&line, ' ');
	struct bb_rd rest = line;
	bb_rd_skip(&rest, (size_t)sp1 + 1);
	long sp2 = bb_rd_findc(&rest, ' ');
	if (sp2 < 0)
		sp2 = (long)bb_rd_left(&rest);
	size_t rl = (size_t)sp1 + 1 + (size_t)sp2;
	rl = trim(p, rl, 1);
	if (rl > HTTP_REQ_MAX)
		rl = HTTP_REQ_MAX;
	if (hi->bad)
		return -1;
	s->nreq++;
	d->op = BB_CALL;
	d->ord = s->nreq;
	memcpy(d->req, p, rl);
	d->reqlen = (uint8_t)rl;
	d->pending = 1;
	unsigned flags = (memcmp(p, "HEAD ", 5) == 0 ? Q_HEAD : 0) |
	                 (rl >= 8 && memcmp(p, "CONNECT ", 8) == 0 ? Q_CONNECT : 0);
	dec_ordq_push(&s->q, ctx, HTTP_REQ_MAX, t0, s->nreq, flags, d->req, rl);
	if (hi->chunked) {
		d->phase = PH_CHUNK_SIZE;
	} else if (hi->has_len && hi->clen > 0) {
		d->phase = PH_BODY_LEN;
		d->left = hi->clen;
	} else {
		d->phase = PH_HEAD; /* no body: done at the head */
		return 1;
	}
	return 0;
}

/* Content tokens of a request's target (first line at p, line1 bytes), after
 * those of its header fields (scan_head). */
static void target_tokens(struct http_dir *d, const struct bb_dec_ctx *ctx, const uint8_t *p,
                          size_t line1)
{
	if (!dec_tok_on(ctx))
		return;
	/* METHOD SP target SP version */
	struct bb_rd line = bb_rd_make(p, line1);
	long sp1 = bb_rd_findc(&line, ' ');
	bb_rd_skip(&line, sp1 < 0 ? bb_rd_left(&line) : (size_t)sp1 + 1);
	long sp2 = bb_rd_findc(&line, ' ');
	if (sp2 > 0)
		dec_tok_target(&d->toks, ctx, line.p, (size_t)sp2);
}

/* Parses a response head at p, scanned into hi: pairs it with the request it
 * answers and sets the body phase. Returns -1 when it is not a status line
 * (or has a bad Content-Length), 1 when the message ends with its head, else
 * 0. */
static int response_head(struct http_state *s, const struct bb_dec_ctx *ctx, struct http_dir *d,
                         const uint8_t *p, const struct head_info *hi, int64_t t0)
{
	size_t nl = hi->line1 - 1;
	if (!is_status(p, nl))
		return -1;
	struct bb_rd line = bb_rd_make(p, nl + 1);
	bb_rd_skip(&line, 8);
	bb_rd_skip_any(&line, " ");
	unsigned code = 0;
	for (int i = 0; i < 3; i++) {
		uint8_t c = bb_rd_u8(&line);
		if (c < '0' || c > '9')
			return -1;
		code = code * 10 + (unsigned)(c - '0');
	}
	if (hi->bad)
		return -1;
	d->op = BB_RET;
	d->pending = 1;
	int head = 0, connect = 0;
	if (s->resynced) {
		/* Responses were lost with a hole: this one answers the latest
		 * request sent before it, not the oldest pending (no pipelining
		 * assumed across a hole). */
		dec_ordq_skip_to(&s->q, t0);
		s->resynced = 0;
	}
	const struct dec_ordq_ent *e;
	int w = dec_ordq_front(&s->q, &e);
	if (w == DEC_ORDQ_CALL) {
		d->ord = e->ord;
		head = (e->flags & Q_HEAD) != 0;
		connect = (e->flags & Q_CONNECT) != 0;
		memcpy(d->req, e->req, e->reqlen);
		d->reqlen = (uint8_t)e->reqlen;
	} else {
		/* None waits, or its request found the queue full. */
		d->ord = 0;
		d->reqlen = 0;
		DEC_COUNT(ctx, unmatched_ret);
	}
	if (w != DEC_ORDQ_EMPTY && (code >= 200 || code == 101))
		dec_ordq_pop(&s->q);
	if (code == 101 || (connect && code >= 200 && code < 300)) {
		/* The connection now carries another protocol. */
		s->d[BB_DIR_C2S].phase = PH_OPAQUE;
		d->phase = PH_OPAQUE;
		return 1;
	}
	if (head || code < 200 || code == 204 || code == 304) {
		d->phase = PH_HEAD;
		return 1;
	}
	if (hi->chunked) {
		d->phase = PH_CHUNK_SIZE;
	} else if (hi->has_len) {
		if (hi->clen == 0) {
			d->phase = PH_HEAD;
			return 1;
		}
		d->phase = PH_BODY_LEN;
		d->left = hi->clen;
	} else {
		d->phase = PH_BODY_CLOSE;
	}
	return 0;
}

/* ---- the byte loop ------------------------------------------------------------
 *
 * http_decode runs one step of the direction's phase at a time; each step
 * consumes what it can from r and says whether to go on or to wait for more
 * bytes (http_decode then returns what was consumed). */
enum { STEP_GO = 0, STEP_WAIT };

/* The message in progress lost its framing: it is reported as far as it
 * went, and the direction hunts for the next message start. */
static void lost_framing(struct http_state *s, const struct bb_dec_ctx *ctx, struct http_dir *d,
                         int dir)
{
	DEC_COUNT(ctx, malformed);
	finish(s, ctx, dir);
	d->phase = PH_HEAD;
	d->hunting = 1;
}

/* dec_hunt's test: a status line from the server (*dir), else a request line. */
static int msg_start(const uint8_t *p, size_t n, const void *dir)
{
	return *(const int *)dir == BB_DIR_S2C ? is_status(p, n) : request_line(p, n);
}

/* Hunting: skips to the first request line (or status line, from the
 * server) among the bytes; waits when there is none yet. */
static int step_hunt(const struct bb_dec_ctx *ctx, struct http_dir *d, int dir, struct bb_rd *r)
{
	if (!dec_hunt(r, ctx, 16, msg_start, &dir))
		return STEP_WAIT;
	d->hunting = 0;
	return STEP_GO;
}

/* PH_HEAD: a whole request or response head (stream position at), which
 * sets the body phase; a message without a body is emitted here. */
static int step_head(struct http_state *s, const struct bb_dec_ctx *ctx, struct http_dir *d,
                     int dir, uint64_t at, struct bb_rd *r)
{
	size_t left = bb_rd_left(r);
	struct head_info hi;
	hi.toks = dec_tok_on(ctx) ? &d->toks : NULL;
	hi.ctx = ctx;
	hi.dir = dir;
	size_t hl = scan_head(r->p, left, &hi);
	if (hl == 0) {
		if (left > HTTP_MAX_HEAD) {
			DEC_COUNT(ctx, malformed);
			d->hunting = 1;
			bb_rd_skip(r, 1);
			return STEP_GO;
		}
		return STEP_WAIT;
	}
	int64_t t0 = dec_time(ctx, dir, at);
	int done = dir == BB_DIR_C2S ? request_head(s, ctx, d, r->p, &hi, t0)
	                             : response_head(s, ctx, d, r->p, &hi, t0);
	if (done < 0) {
		DEC_COUNT(ctx, malformed);
		d->pending = 0;
		d->phase = PH_HEAD;
		d->hunting = 1;
		bb_rd_skip(r, 1);
		return STEP_GO;
	}
	if (dir == BB_DIR_C2S)
		target_tokens(d, ctx, r->p, hi.line1);
	bb_rd_skip(r, hl);
	d->t0 = t0;
	d->t1 = dec_time(ctx, dir, at + hl - 1);
	d->len = hl;
	if (done)
		finish(s, ctx, dir);
	return STEP_GO;
}

/* PH_BODY_LEN, PH_CHUNK_DATA: body bytes of a known count. */
static int step_counted(struct http_state *s, const struct bb_dec_ctx *ctx, struct http_dir *d,
                        int dir, uint64_t at, struct bb_rd *r)
{
	size_t take = bb_rd_skip_upto(r, d->left);
	d->left -= take;
	d->len += take;
	d->t1 = dec_time(ctx, dir, at + take - 1);
	if (d->left == 0) {
		if (d->phase == PH_BODY_LEN) {
			d->phase = PH_HEAD;
			finish(s, ctx, dir);
		} else {
			d->phase = PH_CHUNK_CRLF;
		}
	}
	return STEP_GO;
}

/* The chunk-size line (RFC 9112 7.1: hex digits, then extensions we ignore):
 * the next phase, the data's length, or the end of the chunks. */
static void chunk_size(struct http_state *s, const struct bb_dec_ctx *ctx, struct http_dir *d,
                       int dir, struct bb_rd line)
{
	uint64_t sz = 0;
	int digits = 0;
	while (bb_rd_left(&line)) {
		uint8_t c = bb_rd_u8(&line);
		int v = c >= '0' && c <= '9' ? c - '0'
		      : c >= 'a' && c <= 'f' ? c - 'a' + 10
		      : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (v < 0 || sz >= (UINT64_C(1) << 56))
			break;
		sz = sz * 16 + (uint64_t)v;
		digits++;
	}
	if (!digits) {
		lost_framing(s, ctx, d, dir);
	} else if (sz == 0) {
		d->phase = PH_TRAILER;
	} else {
		d->phase = PH_CHUNK_DATA;
		d->left = sz;
	}
}

/* PH_CHUNK_SIZE, PH_CHUNK_CRLF, PH_TRAILER: one line of the chunked framing. */
static int step_chunk_line(struct http_state *s, const struct bb_dec_ctx *ctx,
                           struct http_dir *d, int dir, uint64_t at, struct bb_rd *r)
{
	long nl = bb_rd_findc(r, '\n');
	if (nl < 0) {
		if (bb_rd_left(r) > 4096) {
			lost_framing(s, ctx, d, dir);
			return STEP_GO;
		}
		return STEP_WAIT;
	}
	struct bb_rd line = bb_rd_sub(r, (size_t)nl + 1);
	d->len += (size_t)nl + 1;
	d->t1 = dec_time(ctx, dir, at + (size_t)nl);
	if (d->phase == PH_CHUNK_CRLF) {
		d->phase = PH_CHUNK_SIZE;
		if (nl > 1) /* not an empty line: lost framing */
			lost_framing(s, ctx, d, dir);
	} else if (d->phase == PH_TRAILER) {
		if (nl <= 1) {
			d->phase = PH_HEAD;
			finish(s, ctx, dir);
		}
	} else {
		chunk_size(s, ctx, d, dir, line);
	}
	return STEP_GO;
}

static size_t http_decode(void *st, const struct bb_dec_ctx *ctx, int dir, uint64_t pos,
                          const uint8_t *p, size_t n)
{
	struct http_state *s = st;
	if (dir < 0 || dir > 1)
		return n;
	struct http_dir *d = &s->d[dir];
	struct bb_rd r = bb_rd_make(p, n);
	int step = STEP_GO;
	while (step == STEP_GO && bb_rd_left(&r) > 0) {
		uint64_t at = pos + (uint64_t)(r.p - p);
		size_t left = bb_rd_left(&r);
		if (d->phase == PH_OPAQUE) {
			bb_rd_skip(&r, left);
			break;
		}
		if (d->hunting) {
			step = step_hunt(ctx, d, dir, &r);
			continue;
		}
		switch (d->phase) {
		case PH_HEAD:
			step = step_head(s, ctx, d, dir, at, &r);
			break;
		case PH_BODY_LEN:
		case PH_CHUNK_DATA:
			step = step_counted(s, ctx, d, dir, at, &r);
			break;
		case PH_CHUNK_SIZE:
		case PH_CHUNK_CRLF:
		case PH_TRAILER:
			step = step_chunk_line(s, ctx, d, dir, at, &r);
			break;
		case PH_BODY_CLOSE: /* the body runs to the end of the connection */
			bb_rd_skip(&r, left);
			d->len += left;
			d->t1 = dec_time(ctx, dir, at + left - 1);
			break;
		default:
			bb_rd_skip(&r, left);
			break;
		}
	}
	return (size_t)(r.p - p);
}

static void http_gap(void *st, const struct bb_dec_ctx *ctx, int dir, uint64_t lost)
{
	struct http_state *s = st;
	if (dir < 0 || dir > 1)
		return;
	struct http_dir *d = &s->d[dir];
	if (d->phase == PH_OPAQUE)
		return;
	DEC_COUNT(ctx, resync);
	if (lost && (d->phase == PH_BODY_LEN || d->phase == PH_CHUNK_DATA) && lost < d->left) {
		/* The hole is inside a body of known length: skip it and go on. */
		d->left -= lost;
		d->len += lost;
		return;
	}
	if (lost && d->phase == PH_BODY_CLOSE) {
		d->len += lost;
		return;
	}
	/* A message whose head was seen happened: report it, ending before the gap. */
	finish(s, ctx, dir);
	d->phase = PH_HEAD;
	d->hunting = 1;
	if (dir == BB_DIR_C2S) {
		/* Requests may be lost: replies can no longer be paired by order. */
		dec_ordq_clear(&s->q);
	} else {
		s->resynced = 1;
	}
}

static void http_end(void *st, const struct bb_dec_ctx *ctx)
{
	struct http_state *s = st;
	/* A body delimited by the close ends here; others were cut short. */
	for (int dir = 0; dir < 2; dir++)
		finish(s, ctx, dir);
}

static void http_free(void *st)
{
	struct http_state *s = st;
	dec_ordq_free(&s->q);
}

/* 1 when the head at p asks for "Upgrade: h2c": dec_http2.c takes that
 * connection (its stream 1 is this request). */
static int h2c_upgrade(const uint8_t *p, size_t n)
{
	struct bb_rd r = bb_rd_make(p, n < HTTP_MAX_HEAD ? n : HTTP_MAX_HEAD);
	while (bb_rd_left(&r) > 0) {
		long nl = bb_rd_find(&r, "\n", 1);
		struct bb_rd line = bb_rd_sub(&r, nl < 0 ? bb_rd_left(&r) : (size_t)nl + 1);
		size_t ll = bb_rd_left(&line);
		if (ll <= 2)
			break;
		const uint8_t *lp = bb_rd_bytes(&line, ll);
		if (ll > 8 && lower_eq(lp, 8, "upgrade:", 8) && has_token(lp + 8, ll - 8, "h2c", 3))
			return 1;
	}
	return 0;
}

static int http_probe(const uint8_t *p, size_t n, unsigned transport, int dir)
{
	if (transport != BB_TR_TCP)
		return 0;
	if (dir == BB_DIR_C2S)
		return request_line(p, n) && !h2c_upgrade(p, n);
	return is_status(p, n);
}

const struct bb_decoder bb_dec_http = {
	.name = "http",
	.summary = "HTTP/1.0 and 1.1 (RFC 9112): pipelining, chunked, 1xx; id = connection + ordinal",
	.transports = BB_TR_TCP,
	.ports = {80, 8080, 8000, 8008, 8888, 3128, 0},
	.probe = http_probe,
	.verify = 1,
	.state_size = sizeof(struct http_state),
	.decode = http_decode,
	.gap = http_gap,
	.end = http_end,
	.free = http_free,
};

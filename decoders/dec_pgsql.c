/* dec_pgsql.c - PostgreSQL frontend/backend protocol 3.0: query cycles as calls and returns */
/* SPDX-License-Identifier: MIT */
/*
 * PostgreSQL documentation, chapter 55 "Frontend/Backend Protocol" (55.2
 * message flow, 55.7 message formats).
 *
 *   untyped (client, first):  length:32 code:32 [params]
 *       code 196608 (3.0) StartupMessage, 80877103 SSLRequest,
 *       80877104 GSSENCRequest, 80877102 CancelRequest
 *   the server's one-byte answer to SSL/GSSENC: 'S' / 'G' (encryption
 *       follows: the rest of the connection is opaque) or 'N'
 *   typed (both ways):        type:8 length:32 (counts itself) body
 *
 * A call is a query cycle of the client: the StartupMessage, a simple Query
 * ('Q'), a FunctionCall ('F') or the extended-protocol messages up to a Sync
 * ('P' Parse, 'B' Bind, 'D' Describe, 'E' Execute, 'C' Close, 'H' Flush, 'S'
 * Sync). Every cycle ends with exactly one ReadyForQuery ('Z') from the
 * server: that is the return (as tshark counts, ORACLE.md). Authentication,
 * password and COPY data messages belong to the cycle in progress. Async
 * messages (NoticeResponse 'N', ParameterStatus 'S', NotificationResponse
 * 'A') between cycles are not replies.
 *
 * id = "c<connection>.<cycle ordinal>"; req = "STARTUP", or the verb and
 * first table of the SQL (dec_sqltext.c): of the Query, of the cycle's Parse,
 * or of the statement a Bind names (named statements are remembered, 16 per
 * connection). Only the first 512 bytes of a message are parsed; the rest
 * is skipped as it streams, so COPY data and big rows are never buffered.
 */
#include <stddef.h>

#include "decoders/dec_int.h"
#include "decoders/dec_ordq_int.h"
#include "decoders/dec_sql_int.h"
#include "decoders/dec_tok_int.h"

#define PG_HEAD 512             /* bytes of a message parsed at most */
#define PG_MAX_MSG (1u << 30)   /* PostgreSQL's own limit on a message */
#define PG_MAX_STARTUP 10000    /* the server's limit on a startup packet */
#define PG_STMTS 16
#define PG_REQ (DEC_SQL_MAX + 1)

#define PG_V3 196608u
#define PG_CANCEL 80877102u
#define PG_SSL 80877103u
#define PG_GSS 80877104u

struct pg_dir {
	uint8_t hunting;        /* after a gap or garbage: look for a message start */
	uint8_t in_msg;         /* skipping the rest of a message */
	uint8_t type;           /* of that message (0: untyped startup) */
	uint8_t unit;           /* a call or reply is in progress */
	uint32_t left;          /* bytes of the message still to come */
	int64_t t0;             /* first byte of the call or reply in progress */
	uint64_t len;
};

struct pg_state {
	struct pg_dir d[2];
	uint8_t typed;          /* the client has sent typed messages (or a startup) */
	uint8_t enc_wait;       /* the server owes the answer to SSL/GSSENC */
	uint8_t opaque;         /* TLS or GSS encryption: nothing to decode */
	uint8_t resynced;       /* bytes were lost: pair the next reply by time */
	uint8_t reqlen, unnamed_len;
	uint32_t ncall;
	uint32_t stmt_next;
	char req[PG_REQ];       /* of the call in progress */
	char unnamed[PG_REQ];   /* the unnamed prepared statement's */
	struct bb_dec_toks toks; /* of the call in progress */
	struct dec_ordq q;      /* calls awaiting their ReadyForQuery */
	struct {
		uint64_t key;   /* FNV-1a of the statement name, 0 unused */
		uint8_t len;
		char req[PG_REQ];
	} stmt[PG_STMTS];
};

static int client_type(int c)
{
	return c == 'Q' || c == 'P' || c == 'B' || c == 'D' || c == 'E' || c == 'C' || c == 'H' ||
	       c == 'S' || c == 'F' || c == 'p' || c == 'd' || c == 'c' || c == 'f' || c == 'X';
}

static int server_type(int c)
{
	return c == 'R' || c == 'K' || c == 'S' || c == 'Z' || c == 'T' || c == 'D' || c == 'C' ||
	       c == 'E' || c == 'N' || c == 'A' || c == '1' || c == '2' || c == '3' || c == 'I' ||
	       c == 'n' || c == 's' || c == 't' || c == 'G' || c == 'H' || c == 'W' || c == 'd' ||
	       c == 'c' || c == 'V' || c == 'v';
}

/* Messages that open a query cycle of the client. */
static int cycle_type(int c)
{
	return c == 'Q' || c == 'P' || c == 'B' || c == 'D' || c == 'E' || c == 'C' || c == 'H' ||
	       c == 'S' || c == 'F';
}

/* A plausible typed message header for dir at r (a length check per type). */
static int plausible(struct bb_rd r, int dir)
{
	int c = bb_rd_u8(&r);
	uint32_t len = bb_rd_be32(&r);
	if (!bb_rd_ok(&r) || len < 4 || len > PG_MAX_MSG)
		return 0;
	if (dir == BB_DIR_C2S) {
		if (!client_type(c))
			return 0;
		if (c == 'S' || c == 'H' || c == 'X' || c == 'c')
			return len == 4;
		return c == 'd' || c == 'p' || len >= 5;
	}
	if (!server_type(c))
		return 0;
	if (c == 'Z')
		return len == 5;
	if (c == '1' || c == '2' || c == '3' || c == 'I' || c == 'n' || c == 'c')
		return len == 4;
	if (c == 'K')
		return len >= 12;
	return 1;
}

/* An untyped startup-phase message at r: its code, or 0. */
static uint32_t untyped(struct bb_rd r, uint32_t *lenp)
{
	uint32_t len = bb_rd_be32(&r);
	uint32_t code = bb_rd_be32(&r);
	if (!bb_rd_ok(&r) || len < 8 || len > PG_MAX_STARTUP)
		return 0;
	if ((code == PG_SSL || code == PG_GSS) && len != 8)
		return 0;
	if (code == PG_CANCEL && len != 16)
		return 0;
	if (code != PG_V3 && code != PG_SSL && code != PG_GSS && code != PG_CANCEL)
		return 0;
	*lenp = len;
	return code;
}

static uint64_t fnv(const uint8_t *p, size_t n)
{
	uint64_t h = 1469598103934665603u;
	struct bb_rd r = bb_rd_make(p, n);
	while (bb_rd_left(&r))
		h = (h ^ bb_rd_u8(&r)) * 1099511628211u;
	return h | 1; /* never 0 (unused) */
}

/* A NUL-terminated string at r: its bytes (borrowed) and length; fails r
 * when there is no NUL. */
static const uint8_t *cstr(struct bb_rd *r, size_t *n)
{
	long z = bb_rd_find(r, "", 1);
	if (z < 0) {
		/* cut by PG_HEAD: take what is there */
		*n = bb_rd_left(r);
		return bb_rd_bytes(r, *n);
	}
	*n = (size_t)z;
	const uint8_t *s = bb_rd_bytes(r, *n);
	bb_rd_skip(r, 1);
	return s;
}

static void set_req(char *dst, uint8_t *dlen, const char *src, size_t n)
{
	if (n > PG_REQ - 1)
		n = PG_REQ - 1;
	memcpy(dst, src, n);
	dst[n] = 0;
	*dlen = (uint8_t)n;
}

/* Reads the head of a Query, Parse or Bind (body at r) into the call's req. */
static void client_head(struct pg_state *s, int type, struct bb_rd r)
{
	char sum[PG_REQ];
	size_t n, sl;
	const uint8_t *p;
	if (type == 'Q') {
		p = cstr(&r, &n);
		sl = dec_sql_summary(p, n, 0, sum, sizeof sum);
		set_req(s->req, &s->reqlen, sum, sl);
	} else if (type == 'P') {
		const uint8_t *name = cstr(&r, &n);
		size_t nl = n;
		p = cstr(&r, &n);
		sl = dec_sql_summary(p, n, 0, sum, sizeof sum);
		set_req(s->req, &s->reqlen, sum, sl);
		if (nl == 0) {
			set_req(s->unnamed, &s->unnamed_len, sum, sl);
		} else {
			uint64_t key = fnv(name, nl);
			unsigned slot = s->stmt_next++ % PG_STMTS;
			for (unsigned i = 0; i < PG_STMTS; i++)
				if (s->stmt[i].key == key)
					slot = i;
			s->stmt[slot].key = key;
			set_req(s->stmt[slot].req, &s->stmt[slot].len, sum, sl);
		}
	} else if (type == 'B' && s->reqlen == 0) {
		cstr(&r, &n); /* portal */
		const uint8_t *name = cstr(&r, &n);
		if (!bb_rd_ok(&r))
			return;
		if (n == 0) {
			set_req(s->req, &s->reqlen, s->unnamed, s->unnamed_len);
			return;
		}
		uint64_t key = fnv(name, n);
		for (unsigned i = 0; i < PG_STMTS; i++) {
			if (s->stmt[i].key == key) {
				set_req(s->req, &s->reqlen, s->stmt[i].req, s->stmt[i].len);
				return;
			}
		}
		/* prepared before the capture: its name tells executions apart */
		char buf[PG_REQ];
		int l = snprintf(buf, sizeof buf, "EXECUTE %.*s", (int)(n < 48 ? n : 48), (const char *)name);
		set_req(s->req, &s->reqlen, buf, l < (int)sizeof buf ? (size_t)l : sizeof buf - 1);
	}
}

/* Content tokens of a Query or Parse (its SQL's literals) or a Bind (its
 * parameters: text ones as fields, binary integers of 2, 4 or 8 bytes as
 * their decimal text, 16-byte binary ones as UUIDs), body at r. */
static void client_tokens(struct pg_state *s, const struct bb_dec_ctx *ctx, int type,
                          struct bb_rd r)
{
	size_t n;
	const uint8_t *p;
	if (!dec_tok_on(ctx))
		return;
	if (type == 'Q') {
		p = cstr(&r, &n);
		dec_sql_tokens(p, n, 0, &s->toks, ctx);
	} else if (type == 'P') {
		cstr(&r, &n); /* statement name */
		p = cstr(&r, &n);
		dec_sql_tokens(p, n, 0, &s->toks, ctx);
	} else if (type == 'B') {
		cstr(&r, &n); /* portal */
		cstr(&r, &n); /* statement */
		uint16_t nfmt = bb_rd_be16(&r);
		struct bb_rd fmts = bb_rd_sub(&r, 2u * nfmt);
		uint16_t one = nfmt == 1 ? bb_rd_be16(&fmts) : 0;
		uint16_t np = bb_rd_be16(&r);
		for (unsigned i = 0; i < np && bb_rd_ok(&r); i++) {
			uint16_t fmt = nfmt == 1 ? one : nfmt > 1 ? bb_rd_be16(&fmts) : 0;
			uint32_t len = bb_rd_be32(&r);
			if (len == UINT32_C(0xffffffff))
				continue; /* NULL */
			if (!bb_rd_ok(&r) || len > bb_rd_left(&r))
				return;
			struct bb_rd v = bb_rd_sub(&r, len);
			if (fmt == 0)
				dec_tok_field(&s->toks, ctx, v.p, len, DEC_TOK_WHOLE);
			else if (len == 2)
				dec_tok_int(&s->toks, ctx, (int16_t)bb_rd_be16(&v), 0);
			else if (len == 4)
				dec_tok_int(&s->toks, ctx, (int32_t)bb_rd_be32(&v), 0);
			else if (len == 8)
				dec_tok_int(&s->toks, ctx, (int64_t)bb_rd_be64(&v), 0);
			else if (len == 16)
				dec_tok_uuid(&s->toks, ctx, v.p);
		}
	}
}

static int id_of(char *buf, size_t cap, const struct bb_dec_ctx *ctx, uint32_t ord)
{
	int n = ord ? snprintf(buf, cap, "c%llu.%u", (unsigned long long)ctx->conn, ord)
	            : snprintf(buf, cap, "c%llu.?", (unsigned long long)ctx->conn);
	return n < (int)cap ? n : (int)cap - 1;
}

static void emit_call(struct pg_state *s, const struct bb_dec_ctx *ctx, int64_t t1)
{
	struct pg_dir *d = &s->d[BB_DIR_C2S];
	char id[48];
	s->ncall++;
	int il = id_of(id, sizeof id, ctx, s->ncall);
	dec_emit_toks(ctx, BB_CALL, BB_DIR_C2S, d->t0, t1, d->len, id, (size_t)il,
	              s->reqlen ? s->req : NULL, s->reqlen, &s->toks);
	dec_ordq_push(&s->q, ctx, PG_REQ - 1, d->t0, s->ncall, 0, s->req, s->reqlen);
	d->unit = 0;
	s->reqlen = 0;
}

static void emit_ret(struct pg_state *s, const struct bb_dec_ctx *ctx, int64_t t1)
{
	struct pg_dir *d = &s->d[BB_DIR_S2C];
	char id[48];
	uint32_t ord = 0;
	const char *req = NULL;
	size_t rl = 0;
	if (s->resynced) {
		/* Bytes were lost: this reply answers the latest call sent before
		 * it; older ones lost their replies in the hole. */
		dec_ordq_skip_to(&s->q, d->t0);
	}
	const struct dec_ordq_ent *e;
	int w = dec_ordq_front(&s->q, &e);
	if (w == DEC_ORDQ_CALL && (!s->resynced || e->t0 <= d->t0)) {
		ord = e->ord;
		req = e->req;
		rl = e->reqlen;
		s->resynced = 0;
	} else {
		if (w == DEC_ORDQ_LOST && !s->resynced)
			dec_ordq_pop(&s->q); /* its call found the queue full */
		DEC_COUNT(ctx, unmatched_ret);
	}
	int il = id_of(id, sizeof id, ctx, ord);
	dec_emit(ctx, BB_RET, BB_DIR_S2C, d->t0, t1, d->len, id, (size_t)il, rl ? req : NULL, rl);
	if (ord)
		dec_ordq_pop(&s->q);
	d->unit = 0;
}

/* The message of type `type` has ended, its last byte at stream position
 * last (its time is looked up only for a message that ends a call or reply). */
static void msg_done(struct pg_state *s, const struct bb_dec_ctx *ctx, int dir, int type,
                     uint64_t last)
{
	struct pg_dir *d = &s->d[dir];
	if (dir == BB_DIR_C2S) {
		if (d->unit && (type == 0 || type == 'Q' || type == 'S' || type == 'F'))
			emit_call(s, ctx, dec_time(ctx, dir, last));
		else if (type == 'X')
			d->unit = 0;
	} else if (type == 'Z' && d->unit) {
		emit_ret(s, ctx, dec_time(ctx, dir, last));
	}
}

/* ---- the byte loop ------------------------------------------------------------
 *
 * pg_decode runs the steps below in order until one consumes bytes (STEP_GO:
 * go round again) or needs more (STEP_WAIT: pg_decode returns what was
 * consumed); STEP_NEXT passes on to the next step. */
enum { STEP_GO = 0, STEP_WAIT, STEP_NEXT };

/* The rest of a message whose head was read: skipped as it streams. */
static int step_rest(struct pg_state *s, const struct bb_dec_ctx *ctx, struct pg_dir *d, int dir,
                     uint64_t at, struct bb_rd *r)
{
	size_t take = bb_rd_skip_upto(r, d->left);
	d->left -= (uint32_t)take;
	d->len += take;
	if (d->left == 0) {
		d->in_msg = 0;
		msg_done(s, ctx, dir, d->type, at + take - 1);
	}
	return STEP_GO;
}

/* dec_hunt's test: a plausible typed message header from *dir. */
static int msg_start(const uint8_t *p, size_t n, const void *dir)
{
	return plausible(bb_rd_make(p, n), *(const int *)dir);
}

/* Hunting: skips to the first plausible typed message header for dir;
 * waits when there is none yet. */
static int step_hunt(const struct bb_dec_ctx *ctx, struct pg_dir *d, int dir, struct bb_rd *r)
{
	if (!dec_hunt(r, ctx, 5, msg_start, &dir))
		return STEP_WAIT;
	d->hunting = 0;
	return STEP_GO;
}

/* The server's one-byte answer to SSLRequest or GSSENCRequest (an old
 * server may answer with an ErrorResponse instead: STEP_NEXT reads it). */
static int step_enc_answer(struct pg_state *s, struct bb_rd *r)
{
	struct bb_rd peek = *r;
	int c = bb_rd_u8(&peek);
	s->enc_wait = 0;
	if (c == 'S' || c == 'G') {
		s->opaque = 1;
		return STEP_GO;
	}
	if (c == 'N') {
		bb_rd_skip(r, 1);
		return STEP_GO;
	}
	return STEP_NEXT;
}

/* The client before its first typed message: TLS, an untyped startup-phase
 * message (StartupMessage opens the first call), or typed messages of a
 * connection picked up mid-stream (STEP_NEXT). */
static int step_untyped(struct pg_state *s, const struct bb_dec_ctx *ctx, struct pg_dir *d,
                        int dir, uint64_t at, struct bb_rd *r)
{
	size_t left = bb_rd_left(r);
	struct bb_rd peek = *r;
	if (left >= 2 && bb_rd_u8(&peek) == 0x16 && bb_rd_u8(&peek) == 0x03) {
		s->opaque = 1; /* TLS without a visible SSLRequest */
		return STEP_GO;
	}
	if (left < 8)
		return STEP_WAIT;
	uint32_t ulen = 0, code = untyped(*r, &ulen);
	if (!code) {
		s->typed = 1; /* mid-stream: typed messages from here */
		return STEP_NEXT;
	}
	if (left < ulen)
		return STEP_WAIT;
	int64_t t0 = dec_time(ctx, dir, at);
	bb_rd_skip(r, ulen);
	if (code == PG_SSL || code == PG_GSS) {
		s->enc_wait = 1;
	} else if (code == PG_V3) {
		s->typed = 1;
		d->unit = 1;
		d->t0 = t0;
		d->len = ulen;
		set_req(s->req, &s->reqlen, "STARTUP", 7);
		msg_done(s, ctx, dir, 0, at + ulen - 1);
	}
	return STEP_GO;
}

/* A typed message header (type, length) at stream position at: it may open
 * a call or reply; the head of a client's Query, Parse or Bind (up to
 * PG_HEAD bytes) is read whole for req and tokens; the rest streams through
 * step_rest. */
static int step_typed(struct pg_state *s, const struct bb_dec_ctx *ctx, struct pg_dir *d, int dir,
                      uint64_t at, struct bb_rd *r)
{
	size_t left = bb_rd_left(r);
	if (left < 5)
		return STEP_WAIT;
	if (!plausible(*r, dir)) {
		DEC_COUNT(ctx, malformed);
		d->hunting = 1;
		d->unit = 0;
		return STEP_GO;
	}
	struct bb_rd h = *r;
	int type = bb_rd_u8(&h);
	uint32_t mlen = bb_rd_be32(&h);
	size_t need = 5;
	if (dir == BB_DIR_C2S && (type == 'Q' || type == 'P' || type == 'B'))
		need = mlen - 4 < PG_HEAD ? 1 + (size_t)mlen : 5 + PG_HEAD;
	if (left < need)
		return STEP_WAIT;
	if (!d->unit) {
		int opens = dir == BB_DIR_C2S ? cycle_type(type)
		                              : type != 'N' && type != 'S' && type != 'A';
		if (opens) {
			d->unit = 1;
			d->t0 = dec_time(ctx, dir, at);
			d->len = 0;
			if (dir == BB_DIR_C2S) {
				s->reqlen = 0;
				dec_tok_reset(&s->toks);
			}
		}
	}
	if (dir == BB_DIR_C2S) {
		client_head(s, type, bb_rd_make(h.p, need - 5));
		client_tokens(s, ctx, type, bb_rd_make(h.p, need - 5));
	}
	bb_rd_skip(r, 5);
	d->len += 5;
	d->type = (uint8_t)type;
	d->left = mlen - 4;
	d->in_msg = 1;
	if (d->left == 0) {
		d->in_msg = 0;
		msg_done(s, ctx, dir, type, at + 4);
	}
	return STEP_GO;
}

static size_t pg_decode(void *st, const struct bb_dec_ctx *ctx, int dir, uint64_t pos,
                        const uint8_t *p, size_t n)
{
	struct pg_state *s = st;
	if (dir < 0 || dir > 1)
		return n;
	struct pg_dir *d = &s->d[dir];
	struct bb_rd r = bb_rd_make(p, n);
	int step = STEP_GO;
	while (step != STEP_WAIT && bb_rd_left(&r) > 0) {
		uint64_t at = pos + (uint64_t)(r.p - p);
		if (s->opaque) {
			bb_rd_skip(&r, bb_rd_left(&r));
			break;
		}
		if (d->in_msg)
			step = step_rest(s, ctx, d, dir, at, &r);
		else if (d->hunting)
			step = step_hunt(ctx, d, dir, &r);
		else {
			step = STEP_NEXT;
			if (dir == BB_DIR_S2C && s->enc_wait)
				step = step_enc_answer(s, &r);
			if (step == STEP_NEXT && dir == BB_DIR_C2S && !s->typed)
				step = step_untyped(s, ctx, d, dir, at, &r);
			if (step == STEP_NEXT)
				step = step_typed(s, ctx, d, dir, at, &r);
		}
	}
	return (size_t)(r.p - p);
}

static void pg_gap(void *st, const struct bb_dec_ctx *ctx, int dir, uint64_t lost)
{
	struct pg_state *s = st;
	if (dir < 0 || dir > 1 || s->opaque)
		return;
	struct pg_dir *d = &s->d[dir];
	DEC_COUNT(ctx, resync);
	if (lost && d->in_msg && lost < d->left) {
		/* The hole is inside the current message: skip it and go on. */
		d->left -= (uint32_t)lost;
		d->len += lost;
		return;
	}
	/* The cycle in progress lost its end; replies pair by time from now on. */
	d->in_msg = 0;
	d->unit = 0;
	d->hunting = 1;
	s->typed = 1;
	s->enc_wait = 0;
	if (dir == BB_DIR_C2S)
		dec_ordq_clear(&s->q);
	s->resynced = 1;
}

static void pg_free(void *st)
{
	struct pg_state *s = st;
	dec_ordq_free(&s->q);
}

static int pg_probe(const uint8_t *p, size_t n, unsigned transport, int dir)
{
	uint32_t len;
	if (transport != BB_TR_TCP || dir != BB_DIR_C2S)
		return 0;
	uint32_t code = untyped(bb_rd_make(p, n), &len);
	return code == PG_V3 || code == PG_SSL || code == PG_GSS;
}

const struct bb_decoder bb_dec_pgsql = {
	.name = "pgsql",
	.summary = "PostgreSQL protocol 3.0: startup, simple and extended query, COPY; id = connection + cycle",
	.transports = BB_TR_TCP,
	.ports = {5432, 0},
	.probe = pg_probe,
	.state_size = sizeof(struct pg_state),
	.decode = pg_decode,
	.gap = pg_gap,
	.end = NULL,
	.free = pg_free,
};

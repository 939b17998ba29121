/* dec_redis.c - Redis RESP2 and RESP3 commands and replies, with pipelining */
/* SPDX-License-Identifier: MIT */
/*
 * Redis serialization protocol, https://redis.io/docs/latest/develop/reference/protocol-spec/
 * (RESP2, and RESP3 as in github.com/antirez/RESP3/blob/master/spec.md).
 *
 *   command:  *<argc> CRLF ($<len> CRLF <bytes> CRLF){argc}   | inline: words CRLF
 *   value:    +simple  -error  :integer  $<len> bulk  *<n> array       (RESP2)
 *             _null  #bool  ,double  (bignum  !<len> bulk error
 *             =<len> verbatim  %<n> map (2n values)  ~<n> set
 *             |<n> attribute (2n values, then the value it describes)
 *             ><n> push (out of band, never a reply)                   (RESP3)
 *
 * Replies come in the order of the commands, so the id is
 * "c<connection>.<ordinal>" of the command; req = the command name, upper
 * case. Not replies: RESP3 pushes ('>'), and on a subscribed connection the
 * RESP2 arrays "message", "pmessage" and "smessage"; a (P|S)(UN)SUBSCRIBE of n
 * channels is answered by its first confirmation, the other n-1 are swallowed.
 * CLIENT REPLY OFF/SKIP/ON and MONITOR's stream are followed. Bulk strings are
 * skipped as they arrive (never buffered); lines are at most 64 KB. The
 * streamed forms of RESP3 ($? and *?) are not handled (counted malformed).
 */
#include <stddef.h>

#include "decoders/dec_int.h"
#include "decoders/dec_tok_int.h"
#include "decoders/dec_ordq_int.h"

#define RD_LINE_MAX (64u * 1024)
#define RD_DEPTH 32
#define RD_NAME 20
#define RD_ARGS 3
#define RD_BULK_MAX (UINT64_C(1) << 32)

enum { BULK_NONE = 0, BULK_DATA, BULK_CRLF };

/* Subscribe-family commands: their confirmations are not ordinary replies. */
enum { SUB_NONE = 0, SUB_SUBSCRIBE, SUB_PSUBSCRIBE, SUB_SSUBSCRIBE, SUB_UNSUBSCRIBE,
       SUB_PUNSUBSCRIBE, SUB_SUNSUBSCRIBE, SUB_MESSAGE };

struct rd_dir {
	uint8_t hunting;        /* 1: from a gap (its end may start a message), 2: going on */
	uint8_t in_msg;         /* a top-level value has started */
	uint8_t top;            /* its type byte (after any attribute) */
	uint8_t bulk;           /* BULK_*: inside a bulk string */
	uint8_t depth;          /* open aggregates */
	uint8_t cap;            /* capturing argument cap-1 (0: none) */
	uint8_t attr[RD_DEPTH + 1];
	uint32_t rem[RD_DEPTH + 1]; /* values left in the aggregate at each depth */
	uint32_t idx1;          /* values done in the top-level aggregate */
	uint32_t argc;
	uint64_t bulk_left;
	int64_t last_int;       /* last integer of the top-level aggregate */
	int64_t t0, t1;
	uint64_t len;
	uint8_t nlen[RD_ARGS];
	char arg[RD_ARGS][RD_NAME];
	/* Content tokens of a command: its arguments after the name, each cut
	 * to DEC_TOK_FIELD_MAX bytes while it streams by. */
	uint8_t tlen;
	uint8_t targ[DEC_TOK_FIELD_MAX];
	struct bb_dec_toks toks;
};

/* A waiting command's flags: its SUB_* kind, and these bits. */
enum { Q_SUB = 0x0f, Q_MONITOR = 0x10, Q_RESET = 0x20 };

struct rd_state {
	struct rd_dir d[2];
	uint32_t nreq;
	uint8_t resynced;       /* a gap: pair the next reply by time */
	uint8_t reply_off;      /* CLIENT REPLY OFF in force */
	uint8_t reply_skip;     /* CLIENT REPLY SKIP: the next command has no reply */
	uint8_t subscribed;     /* RESP2 pub/sub mode */
	uint8_t pubsub;         /* a subscribe-family command was sent on this connection */
	uint8_t monitor;        /* MONITOR stream in progress */
	struct dec_ordq q;      /* commands awaiting a reply */
};

/* 1 when the n bytes at a equal lit ignoring ASCII case (lit upper case). */
static int upper_eq(const char *a, size_t n, const char *lit)
{
	size_t l = strlen(lit);
	if (n != l)
		return 0;
	for (size_t i = 0; i < l; i++) {
		char c = a[i];
		if (c >= 'a' && c <= 'z')
			c = (char)(c - 32);
		if (c != lit[i])
			return 0;
	}
	return 1;
}

static int sub_kind(const char *a, size_t n)
{
	static const char *const names[] = {"SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE", "UNSUBSCRIBE",
		"PUNSUBSCRIBE", "SUNSUBSCRIBE"};
	for (int i = 0; i < 6; i++)
		if (upper_eq(a, n, names[i]))
			return SUB_SUBSCRIBE + i;
	if (upper_eq(a, n, "MESSAGE") || upper_eq(a, n, "PMESSAGE") || upper_eq(a, n, "SMESSAGE"))
		return SUB_MESSAGE;
	return SUB_NONE;
}

/* Appends up to the room left of argument i from the bytes at p. */
static void capture(struct rd_dir *d, unsigned i, const uint8_t *p, size_t n)
{
	if (i >= RD_ARGS)
		return;
	size_t room = RD_NAME - 1 - d->nlen[i];
	size_t k = n < room ? n : room;
	struct bb_rd r = bb_rd_make(p, k);
	const uint8_t *b = bb_rd_bytes(&r, k);
	if (b && k)
		memcpy(d->arg[i] + d->nlen[i], b, k);
	d->nlen[i] = (uint8_t)(d->nlen[i] + k);
}

static int id_of(char *buf, size_t cap, const struct bb_dec_ctx *ctx, uint32_t ord)
{
	int n = ord ? snprintf(buf, cap, "c%llu.%u", (unsigned long long)ctx->conn, ord)
	            : snprintf(buf, cap, "c%llu.?", (unsigned long long)ctx->conn);
	return n < (int)cap ? n : (int)cap - 1;
}

static void upcase(char *dst, const char *src, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = src[i];
		dst[i] = c >= 'a' && c <= 'z' ? (char)(c - 32) : c;
	}
}

/* A command is complete: emit it and queue it unless no reply will come. */
static void command_done(struct rd_state *s, const struct bb_dec_ctx *ctx, struct rd_dir *d)
{
	char id[48], name[RD_NAME];
	size_t nl = d->nlen[0];
	if (nl == 0 && d->argc == 0)
		return; /* "*0": nothing asked, nothing answered */
	upcase(name, d->arg[0], nl);
	s->nreq++;
	int il = id_of(id, sizeof id, ctx, s->nreq);
	dec_emit_toks(ctx, BB_CALL, BB_DIR_C2S, d->t0, d->t1, d->len, id, (size_t)il,
	              nl ? name : NULL, nl, &d->toks);
	int noreply = 0;
	if (upper_eq(name, nl, "CLIENT") && upper_eq(d->arg[1], d->nlen[1], "REPLY")) {
		if (upper_eq(d->arg[2], d->nlen[2], "OFF")) {
			s->reply_off = 1;
			noreply = 1;
		} else if (upper_eq(d->arg[2], d->nlen[2], "SKIP")) {
			if (!s->reply_off)
				s->reply_skip = 1;
			noreply = 1;
		} else if (upper_eq(d->arg[2], d->nlen[2], "ON")) {
			s->reply_off = 0;
			s->reply_skip = 0;
		}
	} else if (s->reply_off) {
		noreply = 1;
	} else if (s->reply_skip) {
		s->reply_skip = 0;
		noreply = 1;
	}
	if (noreply)
		return;
	int sub = sub_kind(name, nl);
	if (sub == SUB_MESSAGE)
		sub = SUB_NONE;
	if (sub >= SUB_SUBSCRIBE && sub <= SUB_SSUBSCRIBE)
		s->subscribed = 1;
	if (sub != SUB_NONE)
		s->pubsub = 1;
	unsigned flags = (unsigned)sub | (upper_eq(name, nl, "MONITOR") ? Q_MONITOR : 0) |
	                 (upper_eq(name, nl, "RESET") ? Q_RESET : 0);
	dec_ordq_push(&s->q, ctx, RD_NAME, d->t0, s->nreq, flags, name, nl);
}

/* A reply is complete: pair it with the oldest command waiting. */
static void reply_done(struct rd_state *s, const struct bb_dec_ctx *ctx, struct rd_dir *d)
{
	char id[48];
	int sub = SUB_NONE;
	int aggregate = d->top == '*' || d->top == '>';
	/* A pub/sub message or confirmation has 3 values (pmessage 4), and in
	 * RESP2 comes only on a connection that asked for pub/sub. Any other
	 * array that starts with such a word is a reply: COMMAND DOCS lists
	 * every command, in the server's hash order, so about one start in 80
	 * it begins with "unsubscribe" (seen live: the reply was dropped and
	 * every later reply paired with the command before its own). */
	if (aggregate && (d->idx1 == 3 || d->idx1 == 4) && (d->top == '>' || s->pubsub))
		sub = sub_kind(d->arg[0], d->nlen[0]);
	if (sub == SUB_MESSAGE && (d->top == '>' || s->subscribed))
		return; /* a published message */
	if (d->top == '>' && sub == SUB_NONE)
		return; /* another RESP3 push (invalidate, ...) */
	if (d->top == '+' && s->monitor && d->nlen[0] && d->arg[0][0] >= '0' &&
	    d->arg[0][0] <= '9')
		return; /* a MONITOR line */
	if (sub >= SUB_SUBSCRIBE && sub <= SUB_SUNSUBSCRIBE) {
		if (sub >= SUB_UNSUBSCRIBE && d->last_int == 0)
			s->subscribed = 0;
		/* The first confirmation answers the command; the others (one
		 * per channel) answer nothing. */
		const struct dec_ordq_ent *f;
		int first = dec_ordq_front(&s->q, &f) == DEC_ORDQ_CALL &&
		            (f->flags & Q_SUB) == (unsigned)sub;
		if (!first &&
		    (d->top == '>' || s->subscribed || sub >= SUB_UNSUBSCRIBE))
			return;
	}
	const struct dec_ordq_ent *c;
	if (s->resynced) {
		/* Replies were lost in a hole: this one answers the latest command
		 * sent before it (no pipelining assumed across a hole); one that
		 * began before the oldest command waiting answers a lost one. */
		dec_ordq_skip_to(&s->q, d->t0);
		int w = dec_ordq_front(&s->q, &c);
		if (w == DEC_ORDQ_EMPTY || (w == DEC_ORDQ_CALL && c->t0 <= d->t0))
			s->resynced = 0;
		else
			goto unmatched;
	}
	int w = dec_ordq_front(&s->q, &c);
	if (w != DEC_ORDQ_CALL) {
		/* First in line a command the queue had no room for (its reply,
		 * this one, is unmatched), or none (pop does nothing then). */
		dec_ordq_pop(&s->q);
unmatched:
		/* No command waits (capture started mid-connection, or it was lost). */
		DEC_COUNT(ctx, unmatched_ret);
		int il = id_of(id, sizeof id, ctx, 0);
		dec_emit(ctx, BB_RET, BB_DIR_S2C, d->t0, d->t1, d->len, id, (size_t)il, NULL, 0);
		return;
	}
	if ((c->flags & Q_MONITOR) && d->top == '+')
		s->monitor = 1;
	if (c->flags & Q_RESET)
		s->subscribed = s->monitor = 0;
	int il = id_of(id, sizeof id, ctx, c->ord);
	dec_emit(ctx, BB_RET, BB_DIR_S2C, d->t0, d->t1, d->len, id, (size_t)il,
	         c->reqlen ? c->req : NULL, c->reqlen);
	dec_ordq_pop(&s->q);
}

static void message_done(struct rd_state *s, const struct bb_dec_ctx *ctx, int dir)
{
	struct rd_dir *d = &s->d[dir];
	if (dir == BB_DIR_C2S)
		command_done(s, ctx, d);
	else
		reply_done(s, ctx, d);
	d->in_msg = 0;
}

/* A value ended at the current depth: close the aggregates it completes. */
static void value_done(struct rd_state *s, const struct bb_dec_ctx *ctx, int dir)
{
	struct rd_dir *d = &s->d[dir];
	for (;;) {
		if (d->depth == 0) {
			message_done(s, ctx, dir);
			return;
		}
		if (d->depth == 1)
			d->idx1++;
		if (--d->rem[d->depth] > 0)
			return;
		int attr = d->attr[d->depth];
		d->depth--;
		if (attr)
			return; /* an attribute is not a value of its parent */
	}
}

/* Parses the decimal integer of a type line (after the type byte). */
static int line_int(const uint8_t *p, size_t n, int64_t *out)
{
	struct bb_rd r = bb_rd_make(p, n);
	int neg = 0, digits = 0;
	int64_t v = 0;
	if (bb_rd_peek(&r) == '-') {
		neg = 1;
		bb_rd_skip(&r, 1);
	}
	while (bb_rd_left(&r)) {
		uint8_t c = bb_rd_u8(&r);
		if (c < '0' || c > '9' || digits >= 18)
			return -1;
		v = v * 10 + (c - '0');
		digits++;
	}
	if (!digits)
		return -1;
	*out = neg ? -v : v;
	return 0;
}

/* The last of the n >= 1 bytes at p. */
static uint8_t last_byte(const uint8_t *p, size_t n)
{
	struct bb_rd r = bb_rd_make(p, n);
	bb_rd_skip(&r, n - 1);
	return bb_rd_u8(&r);
}

static int is_type(uint8_t c)
{
	return c && strchr("+-:$*_#,(!=%~>|", c) != NULL;
}

/* Handles one type line (without its line end) at depth; -1: malformed. */
static int type_line(struct rd_state *s, const struct bb_dec_ctx *ctx, int dir,
                     const uint8_t *p, size_t n)
{
	struct rd_dir *d = &s->d[dir];
	struct bb_rd r = bb_rd_make(p, n);
	uint8_t t = bb_rd_u8(&r);
	const uint8_t *rest = r.p;
	size_t rn = bb_rd_left(&r);
	int64_t v = 0;
	unsigned argi = d->depth == 1 && d->idx1 < RD_ARGS ? d->idx1 + 1 : 0;
	if (d->depth == 0 && t != '|')
		d->top = t;
	switch (t) {
	case '+':
	case '-':
		if (d->depth == 0 && n > 1)
			capture(d, 0, rest, rn);
		else if (argi)
			capture(d, argi - 1, rest, rn);
		value_done(s, ctx, dir);
		return 0;
	case ':':
		if (line_int(rest, rn, &v) < 0)
			return -1;
		if (d->depth == 1)
			d->last_int = v;
		value_done(s, ctx, dir);
		return 0;
	case '_':
	case '#':
	case ',':
	case '(':
		value_done(s, ctx, dir);
		return 0;
	case '$':
	case '!':
	case '=':
		if (line_int(rest, rn, &v) < 0 || v < -1 || v > (int64_t)RD_BULK_MAX)
			return -1;
		if (v == -1) {
			value_done(s, ctx, dir);
			return 0;
		}
		d->bulk = BULK_DATA;
		d->bulk_left = (uint64_t)v;
		d->cap = (uint8_t)argi;
		return 0;
	case '*':
	case '%':
	case '~':
	case '>':
	case '|': {
		if (line_int(rest, rn, &v) < 0 || v < -1 || v > (1 << 30))
			return -1;
		if (v == -1) {
			value_done(s, ctx, dir);
			return 0;
		}
		uint32_t count = (uint32_t)v * (t == '%' || t == '|' ? 2u : 1u);
		if (d->depth == 0) {
			d->idx1 = 0;
			if (t != '|')
				d->argc = (uint32_t)v;
		}
		if (count == 0) {
			if (t != '|')
				value_done(s, ctx, dir);
			return 0;
		}
		if (d->depth >= RD_DEPTH)
			return -1;
		d->depth++;
		d->rem[d->depth] = count;
		d->attr[d->depth] = t == '|';
		return 0;
	}
	default:
		return -1;
	}
}

/* Keeps the first bytes of a command's argument (a bulk string at depth 1
 * after the name) for its tokens. */
static void tok_collect(struct rd_dir *d, const struct bb_dec_ctx *ctx, int dir,
                        const uint8_t *p, size_t n)
{
	if (dir != BB_DIR_C2S || d->depth != 1 || d->idx1 < 1 || !dec_tok_on(ctx))
		return;
	size_t room = sizeof d->targ - d->tlen, k = n < room ? n : room;
	struct bb_rd r = bb_rd_make(p, k);
	const uint8_t *b = bb_rd_bytes(&r, k);
	if (b && k)
		memcpy(d->targ + d->tlen, b, k);
	d->tlen = (uint8_t)(d->tlen + k);
}

/* The argument kept by tok_collect is complete: its tokens. */
static void tok_arg_done(struct rd_dir *d, const struct bb_dec_ctx *ctx)
{
	if (d->tlen)
		dec_tok_field(&d->toks, ctx, d->targ, d->tlen, DEC_TOK_WHOLE);
	d->tlen = 0;
}

/* The tokens of an inline command's words after the first. */
static void inline_tokens(struct rd_dir *d, const struct bb_dec_ctx *ctx, const uint8_t *p,
                          size_t n)
{
	dec_tok_reset(&d->toks);
	if (!dec_tok_on(ctx))
		return;
	struct bb_rd r = bb_rd_make(p, n);
	for (unsigned argc = 0; bb_rd_left(&r); argc++) {
		long sp = bb_rd_findc(&r, ' ');
		size_t wl = sp < 0 ? bb_rd_left(&r) : (size_t)sp;
		const uint8_t *w = bb_rd_bytes(&r, wl);
		bb_rd_skip(&r, bb_rd_left(&r) ? 1 : 0);
		if (argc && wl)
			dec_tok_field(&d->toks, ctx, w, wl, DEC_TOK_WHOLE);
	}
}

/* An inline command line: its first words are the arguments. */
static void inline_line(struct rd_state *s, const struct bb_dec_ctx *ctx, const uint8_t *p,
                        size_t n)
{
	struct rd_dir *d = &s->d[BB_DIR_C2S];
	struct bb_rd r = bb_rd_make(p, n);
	unsigned argc = 0;
	for (;;) {
		bb_rd_skip_any(&r, " \t");
		if (!bb_rd_left(&r))
			break;
		const uint8_t *w = r.p;
		size_t wl = 0;
		for (int c; (c = bb_rd_peek(&r)) >= 0 && c != ' ' && c != '\t';) {
			bb_rd_skip(&r, 1);
			wl++;
		}
		if (argc < RD_ARGS)
			capture(d, argc, w, wl);
		argc++;
	}
	d->argc = argc;
	d->top = 'i';
	inline_tokens(d, ctx, p, n);
	if (argc)
		command_done(s, ctx, d);
}

/* Resynchronising: offset of a plausible message start in p (at 0 when bol,
 * else after a line end), or -1. Commands start "*<digit>", replies with a
 * type byte. */
static long hunt(const uint8_t *p, size_t n, int dir, int bol)
{
	struct bb_rd r = bb_rd_make(p, n);
	for (;;) {
		if (!bol) {
			long nl = bb_rd_find(&r, "\n", 1);
			if (nl < 0)
				return -1;
			bb_rd_skip(&r, (size_t)nl + 1);
		}
		bol = 0;
		struct bb_rd pk = r;
		uint8_t c = bb_rd_u8(&pk);
		uint8_t c2 = bb_rd_u8(&pk);
		if (!bb_rd_ok(&pk))
			return -1;
		if (dir == BB_DIR_C2S ? c == '*' && c2 >= '1' && c2 <= '9'
		                      : is_type(c) && c2 != '\r' && c2 != '\n')
			return (long)(r.p - p);
	}
}

static void start_hunting(struct rd_dir *d)
{
	d->hunting = 1;
	d->in_msg = 0;
	d->depth = 0;
	d->bulk = BULK_NONE;
}

static size_t redis_decode(void *st, const struct bb_dec_ctx *ctx, int dir, uint64_t pos,
                           const uint8_t *p, size_t n)
{
	struct rd_state *s = st;
	if (dir < 0 || dir > 1)
		return n;
	struct rd_dir *d = &s->d[dir];
	struct bb_rd r = bb_rd_make(p, n);
	while (bb_rd_left(&r) > 0) {
		size_t off = (size_t)(r.p - p);
		size_t left = bb_rd_left(&r);
		if (d->hunting) {
			long at = hunt(r.p, left, dir, d->hunting == 1);
			d->hunting = 2; /* what is kept for later is not a line start */
			size_t skip = at < 0 ? (left > 2 ? left - 2 : 0) : (size_t)at;
			if (ctx->stats)
				ctx->stats->skipped_bytes += skip;
			bb_rd_skip(&r, skip);
			if (at < 0)
				break;
			d->hunting = 0;
			continue;
		}
		if (d->bulk == BULK_DATA) {
			size_t take = d->bulk_left < left ? (size_t)d->bulk_left : left;
			if (d->cap)
				capture(d, d->cap - 1u, r.p, take);
			tok_collect(d, ctx, dir, r.p, take);
			bb_rd_skip(&r, take);
			d->bulk_left -= take;
			d->len += take;
			if (d->bulk_left == 0)
				d->bulk = BULK_CRLF;
			continue;
		}
		if (d->bulk == BULK_CRLF) {
			if (left < 2)
				break;
			uint8_t c1 = bb_rd_u8(&r), c2 = bb_rd_u8(&r);
			if (c1 != '\r' || c2 != '\n') {
				DEC_COUNT(ctx, malformed);
				start_hunting(d);
				continue;
			}
			d->len += 2;
			d->t1 = dec_time(ctx, dir, pos + off + 1);
			d->bulk = BULK_NONE;
			d->cap = 0;
			tok_arg_done(d, ctx);
			value_done(s, ctx, dir);
			continue;
		}
		long nl = bb_rd_find(&r, "\n", 1);
		if (nl < 0 || (size_t)nl >= RD_LINE_MAX) {
			if (left < RD_LINE_MAX)
				break;
			DEC_COUNT(ctx, malformed);
			start_hunting(d);
			continue;
		}
		size_t ll = (size_t)nl;
		struct bb_rd line = bb_rd_sub(&r, ll + 1);
		const uint8_t *lp = bb_rd_bytes(&line, ll);
		if (ll > 0 && last_byte(lp, ll) == '\r')
			ll--;
		if (!d->in_msg) {
			if (ll == 0)
				continue; /* an empty line: no command (the server skips it) */
			d->in_msg = 1;
			d->t0 = dec_time(ctx, dir, pos + off);
			d->len = 0;
			d->argc = 0;
			d->depth = 0;
			d->last_int = -1;
			memset(d->nlen, 0, sizeof d->nlen);
			dec_tok_reset(&d->toks);
			d->tlen = 0;
		}
		d->len += (size_t)nl + 1;
		d->t1 = dec_time(ctx, dir, pos + off + (size_t)nl);
		if (dir == BB_DIR_C2S && d->depth == 0 && (ll == 0 || last_byte(lp, 1) != '*')) {
			inline_line(s, ctx, lp, ll);
			d->in_msg = 0;
			continue;
		}
		if (ll == 0 || type_line(s, ctx, dir, lp, ll) < 0) {
			DEC_COUNT(ctx, malformed);
			start_hunting(d);
			/* Look for the next message after this line. */
			continue;
		}
	}
	return (size_t)(r.p - p);
}

static void redis_gap(void *st, const struct bb_dec_ctx *ctx, int dir, uint64_t lost)
{
	struct rd_state *s = st;
	if (dir < 0 || dir > 1)
		return;
	struct rd_dir *d = &s->d[dir];
	DEC_COUNT(ctx, resync);
	if (lost && d->bulk == BULK_DATA && lost < d->bulk_left) {
		/* The hole is inside a bulk string of known length. */
		d->bulk_left -= lost;
		d->len += lost;
		d->cap = 0;
		return;
	}
	if (dir == BB_DIR_C2S)
		dec_ordq_clear(&s->q); /* commands were lost: their replies cannot be told */
	s->resynced = 1;
	/* A message begun before the hole happened: report what was seen of it. */
	if (d->in_msg && (dir == BB_DIR_S2C || d->nlen[0] > 0))
		message_done(s, ctx, dir);
	start_hunting(d);
}

static void redis_end(void *st, const struct bb_dec_ctx *ctx)
{
	struct rd_state *s = st;
	for (int dir = 0; dir < 2; dir++) {
		struct rd_dir *d = &s->d[dir];
		/* Cut short by the end of the capture: report what was seen. */
		if (d->in_msg && !d->hunting && (dir == BB_DIR_S2C || d->nlen[0] > 0)) {
			DEC_COUNT(ctx, malformed);
			message_done(s, ctx, dir);
		}
	}
}

static void redis_free(void *st)
{
	struct rd_state *s = st;
	dec_ordq_free(&s->q);
}

/* A client's first bytes: "*<n>\r\n$". */
static int redis_probe(const uint8_t *p, size_t n, unsigned transport, int dir)
{
	if (transport != BB_TR_TCP || dir != BB_DIR_C2S)
		return 0;
	struct bb_rd r = bb_rd_make(p, n < 16 ? n : 16);
	if (bb_rd_u8(&r) != '*')
		return 0;
	int digits = 0;
	while (bb_rd_peek(&r) >= '0' && bb_rd_peek(&r) <= '9') {
		bb_rd_skip(&r, 1);
		digits++;
	}
	uint8_t c1 = bb_rd_u8(&r), c2 = bb_rd_u8(&r), c3 = bb_rd_u8(&r);
	return bb_rd_ok(&r) && digits > 0 && c1 == '\r' && c2 == '\n' && c3 == '$';
}

const struct bb_decoder bb_dec_redis = {
	.name = "redis",
	.summary = "Redis RESP2/RESP3: pipelining, inline commands, pub/sub; id = connection + ordinal",
	.transports = BB_TR_TCP,
	.ports = {6379, 0},
	.probe = redis_probe,
	.verify = 0,
	.state_size = sizeof(struct rd_state),
	.decode = redis_decode,
	.gap = redis_gap,
	.end = redis_end,
	.free = redis_free,
};

/* dec_memcache.c - memcached text and binary protocols over TCP and UDP */
/* SPDX-License-Identifier: MIT */
/*
 * memcached doc/protocol.txt (text and meta commands) and doc/protocol-binary.xml
 * (the binary protocol, also github.com/memcached/memcached/wiki/BinaryProtocolRevamped).
 *
 *   text command: cmd key... CRLF, storage commands (set add replace append
 *                 prepend cas, meta ms) followed by <bytes> CRLF of data;
 *                 a last token "noreply" (meta: flag q) asks for no reply
 *   text reply:   data lines (VALUE k f n [cas] CRLF <n bytes> CRLF, STAT ...,
 *                 ITEM ..., key=...) ended by one status line (END, STORED,
 *                 ERROR, a number ...); meta "VA n flags" CRLF <n bytes> CRLF
 *   binary:       magic:8 (0x80 request, 0x81 response) opcode:8 keylen:16
 *                 extlen:8 datatype:8 vbucket|status:16 bodylen:32 opaque:32
 *                 cas:64, then extras, key, value (bodylen bytes)
 *   UDP:          request id:16 sequence:16 datagrams:16 reserved:16, then
 *                 one text or binary message
 *
 * Ids: binary, the opaque ("c<connection>.x<opaque hex>"); UDP, the request
 * id ("c<connection>.u<id>"); text over TCP, the ordinal of the command on
 * its connection ("c<connection>.<n>"), replies coming in order. req = the
 * command (text, as sent: get, set ...) or the opcode name (binary: GET, SETQ
 * ...). Quiet binary commands (GETQ, SETQ, ...) get a reply only on a miss
 * or error: a later reply passes over them. A STAT request is answered by
 * many responses ending with an empty key: one RET, from the first to the
 * last. Data blocks and binary bodies are skipped as they arrive.
 */
#include <stddef.h>

#include "decoders/dec_int.h"
#include "decoders/dec_tok_int.h"
#include "decoders/dec_ordq_int.h"

#define MC_LINE_MAX (64u * 1024)
#define MC_Q 64          /* binary requests waiting */
#define MC_NAME 16
#define MC_TOK 8
#define MC_BODY_MAX (UINT32_C(1) << 30)

enum { PH_MSG = 0, PH_DATA, PH_BODY };

struct mc_dir {
	uint8_t hunting;        /* 1: from a gap (its end may start a message), 2: going on */
	uint8_t phase;
	uint8_t in_msg;         /* a message has started */
	uint8_t binary;         /* the message in progress is binary */
	uint8_t done_after;     /* text: the message ends with the data block */
	uint8_t opcode;
	uint8_t quiet;
	uint8_t noreply;
	uint8_t stat_more;      /* binary STAT: a non-final response */
	uint32_t opaque;
	uint64_t left;          /* data or body bytes left */
	int64_t t0, t1;
	uint64_t len;
	uint8_t nlen;
	char name[MC_NAME];
	struct bb_dec_toks toks; /* the request's keys */
};

struct mc_state {
	struct mc_dir d[2];
	uint32_t nreq;
	uint8_t resynced;
	uint8_t stat_open;      /* binary STAT responses in progress */
	int64_t stat_t0;
	uint64_t stat_len;
	struct dec_ordq q;      /* text commands awaiting a reply */
	uint16_t bh, bn;        /* binary requests awaiting a reply */
	struct {
		uint32_t opaque;
		uint8_t opcode;
		uint8_t quiet;
	} b[MC_Q];
	struct dec_match udp;   /* UDP request ids */
};

static const char *const opnames[] = {"GET", "SET", "ADD", "REPLACE", "DELETE", "INCREMENT",
	"DECREMENT", "QUIT", "FLUSH", "GETQ", "NOOP", "VERSION", "GETK", "GETKQ", "APPEND",
	"PREPEND", "STAT", "SETQ", "ADDQ", "REPLACEQ", "DELETEQ", "INCREMENTQ", "DECREMENTQ",
	"QUITQ", "FLUSHQ", "APPENDQ", "PREPENDQ", "VERBOSITY", "TOUCH", "GAT", "GATQ", "0x1f",
	"SASL_LIST_MECHS", "SASL_AUTH", "SASL_STEP", "GATK", "GATKQ"};

/* Quiet opcodes: no reply on success (GETQ and friends: none on a miss). */
static int quiet_op(unsigned op)
{
	return op == 0x09 || op == 0x0d || (op >= 0x11 && op <= 0x1a) || op == 0x1e ||
	       op == 0x24;
}

static int op_name(char *buf, size_t cap, unsigned op)
{
	int n = op < sizeof opnames / sizeof opnames[0] ? snprintf(buf, cap, "%s", opnames[op])
	                                                : snprintf(buf, cap, "0x%02x", op);
	return n < (int)cap ? n : (int)cap - 1;
}

/* Tokens of a text line (borrowed from it). */
struct toks {
	unsigned n;
	const uint8_t *p[MC_TOK];
	size_t l[MC_TOK];
	const uint8_t *last;    /* the last token, even past MC_TOK */
	size_t last_l;
};

static void tokenize(const uint8_t *p, size_t n, struct toks *t)
{
	struct bb_rd r = bb_rd_make(p, n);
	memset(t, 0, sizeof *t);
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
		if (t->n < MC_TOK) {
			t->p[t->n] = w;
			t->l[t->n] = wl;
		}
		t->n++;
		t->last = w;
		t->last_l = wl;
	}
}

/* 1 when the last of the n >= 1 bytes at p is a carriage return. */
static int last_is_cr(const uint8_t *p, size_t n)
{
	struct bb_rd r = bb_rd_make(p, n);
	bb_rd_skip(&r, n - 1);
	return bb_rd_u8(&r) == '\r';
}

static int tok_is(const uint8_t *p, size_t l, const char *lit)
{
	return p && l == strlen(lit) && memcmp(p, lit, l) == 0;
}

static int tok_num(const uint8_t *p, size_t l, uint64_t *v)
{
	struct bb_rd r = bb_rd_make(p, l);
	uint64_t x = 0;
	if (!p || l == 0 || l > 18)
		return -1;
	while (bb_rd_left(&r)) {
		uint8_t c = bb_rd_u8(&r);
		if (c < '0' || c > '9')
			return -1;
		x = x * 10 + (uint64_t)(c - '0');
	}
	*v = x;
	return 0;
}

/* 1 when the meta command's flags (tokens from 2) include q. */
static int meta_quiet(const struct toks *t)
{
	for (unsigned i = 2; i < t->n && i < MC_TOK; i++)
		if (tok_is(t->p[i], t->l[i], "q"))
			return 1;
	return 0;
}

static const char *const text_cmds[] = {"get", "gets", "gat", "gats", "set", "add", "replace",
	"append", "prepend", "cas", "delete", "incr", "decr", "touch", "stats", "flush_all",
	"version", "verbosity", "quit", "mg", "ms", "md", "ma", "mn", "me", "lru_crawler",
	"slabs", "watch", "lru", "shutdown", "cache_memlimit", "misbehave", "debugtime"};

static int known_cmd(const uint8_t *p, size_t l)
{
	for (size_t i = 0; i < sizeof text_cmds / sizeof text_cmds[0]; i++)
		if (tok_is(p, l, text_cmds[i]))
			return 1;
	return 0;
}

static const char *const text_replies[] = {"VALUE", "END", "STORED", "NOT_STORED", "EXISTS",
	"NOT_FOUND", "DELETED", "TOUCHED", "OK", "ERROR", "CLIENT_ERROR", "SERVER_ERROR",
	"VERSION", "STAT", "ITEM", "RESET", "HD", "VA", "EN", "NF", "NS", "EX", "MN", "ME"};

static int known_reply(const uint8_t *p, size_t l)
{
	for (size_t i = 0; i < sizeof text_replies / sizeof text_replies[0]; i++)
		if (tok_is(p, l, text_replies[i]))
			return 1;
	struct bb_rd r = bb_rd_make(p, l);
	uint8_t c = bb_rd_u8(&r);
	return c >= '0' && c <= '9'; /* incr/decr */
}

/* Content tokens of a text command's keys into t: get, gets and the
 * commands of one key (set ... delete, touch, the meta commands) from their
 * first argument on, gat and gats after the expiry time. */
static void text_tokens(struct bb_dec_toks *tk, const struct bb_dec_ctx *ctx, const struct toks *t)
{
	static const char *const one_key[] = {"set", "add", "replace", "append", "prepend", "cas",
		"incr", "decr", "delete", "touch", "mg", "ms", "md", "ma"};
	dec_tok_reset(tk);
	if (!dec_tok_on(ctx) || t->n < 2)
		return;
	const uint8_t *c = t->p[0];
	size_t cl = t->l[0];
	unsigned first = 1, end = 0;
	if (tok_is(c, cl, "get") || tok_is(c, cl, "gets")) {
		end = t->n;
	} else if (tok_is(c, cl, "gat") || tok_is(c, cl, "gats")) {
		first = 2;
		end = t->n;
	} else {
		for (size_t i = 0; i < sizeof one_key / sizeof one_key[0]; i++)
			if (tok_is(c, cl, one_key[i]))
				end = 2;
	}
	for (unsigned i = first; i < end && i < MC_TOK; i++)
		dec_tok_field(tk, ctx, t->p[i], t->l[i], DEC_TOK_WHOLE);
}

/* Content tokens of a binary request's key; h is at its 24-byte header,
 * the key is read only when it is all there. */
static void bin_tokens(struct bb_dec_toks *tk, const struct bb_dec_ctx *ctx, struct bb_rd h)
{
	dec_tok_reset(tk);
	if (!dec_tok_on(ctx))
		return;
	bb_rd_skip(&h, 2);
	uint16_t keylen = bb_rd_be16(&h);
	uint8_t extlen = bb_rd_u8(&h);
	bb_rd_skip(&h, 19u + extlen);
	const uint8_t *key = keylen && bb_rd_left(&h) >= keylen ? bb_rd_bytes(&h, keylen) : NULL;
	if (key)
		dec_tok_field(tk, ctx, key, keylen, DEC_TOK_WHOLE);
}

/* Content tokens of a UDP request (text or binary) at r. */
static void udp_tokens(struct bb_dec_toks *tk, const struct bb_dec_ctx *ctx, struct bb_rd r)
{
	uint8_t first = bb_rd_left(&r) ? *r.p : 0;
	if (first == 0x80) {
		bin_tokens(tk, ctx, r);
		return;
	}
	struct toks t;
	long e = bb_rd_find(&r, "\n", 1);
	tokenize(r.p, e < 0 ? bb_rd_left(&r) : (size_t)e, &t);
	text_tokens(tk, ctx, &t);
}

/* A text command line: sets the data block to expect. -1: malformed. */
static int text_command(struct mc_dir *d, const struct toks *t)
{
	uint64_t bytes = 0;
	const uint8_t *c = t->p[0];
	size_t cl = t->l[0];
	d->done_after = 0;
	d->noreply = tok_is(t->last, t->last_l, "noreply");
	if (tok_is(c, cl, "set") || tok_is(c, cl, "add") || tok_is(c, cl, "replace") ||
	    tok_is(c, cl, "append") || tok_is(c, cl, "prepend") || tok_is(c, cl, "cas")) {
		if (t->n < 5 || tok_num(t->p[4], t->l[4], &bytes) < 0)
			return -1;
		d->done_after = 1;
	} else if (tok_is(c, cl, "ms")) {
		if (t->n < 3 || tok_num(t->p[2], t->l[2], &bytes) < 0)
			return -1;
		d->done_after = 1;
		d->noreply = meta_quiet(t);
	} else if (tok_is(c, cl, "mg") || tok_is(c, cl, "md") || tok_is(c, cl, "ma")) {
		d->noreply = meta_quiet(t);
	} else if (tok_is(c, cl, "quit")) {
		d->noreply = 1;
	} else if (tok_is(c, cl, "get") || tok_is(c, cl, "gets") || tok_is(c, cl, "gat") ||
	           tok_is(c, cl, "gats") || tok_is(c, cl, "stats") || tok_is(c, cl, "version")) {
		d->noreply = 0;
	}
	if (bytes > MC_BODY_MAX)
		return -1;
	d->left = d->done_after ? bytes + 2 : 0;
	return 0;
}

static int text_id(char *buf, size_t cap, const struct bb_dec_ctx *ctx, uint32_t ord)
{
	int n = ord ? snprintf(buf, cap, "c%llu.%u", (unsigned long long)ctx->conn, ord)
	            : snprintf(buf, cap, "c%llu.?", (unsigned long long)ctx->conn);
	return n < (int)cap ? n : (int)cap - 1;
}

static int bin_id(char *buf, size_t cap, const struct bb_dec_ctx *ctx, uint32_t opaque)
{
	int n = snprintf(buf, cap, "c%llu.x%x", (unsigned long long)ctx->conn, opaque);
	return n < (int)cap ? n : (int)cap - 1;
}

static void text_call_done(struct mc_state *s, const struct bb_dec_ctx *ctx, struct mc_dir *d)
{
	char id[48];
	s->nreq++;
	int il = text_id(id, sizeof id, ctx, s->nreq);
	dec_emit_toks(ctx, BB_CALL, BB_DIR_C2S, d->t0, d->t1, d->len, id, (size_t)il, d->name,
	              d->nlen, &d->toks);
	if (d->noreply)
		return;
	dec_ordq_push(&s->q, ctx, MC_NAME, d->t0, s->nreq, 0, d->name, d->nlen);
}

static void text_reply_done(struct mc_state *s, const struct bb_dec_ctx *ctx, struct mc_dir *d)
{
	char id[48];
	const struct dec_ordq_ent *c;
	if (s->resynced) {
		/* Replies were lost in a hole: this one answers the latest command
		 * sent before it. */
		dec_ordq_skip_to(&s->q, d->t0);
		int w = dec_ordq_front(&s->q, &c);
		if (w == DEC_ORDQ_EMPTY || (w == DEC_ORDQ_CALL && c->t0 <= d->t0))
			s->resynced = 0;
		else
			goto unmatched;
	}
	if (dec_ordq_front(&s->q, &c) != DEC_ORDQ_CALL) {
		/* First in line a command the queue had no room for (its reply,
		 * this one, is unmatched), or none (pop does nothing then). */
		dec_ordq_pop(&s->q);
unmatched:
		DEC_COUNT(ctx, unmatched_ret);
		int il = text_id(id, sizeof id, ctx, 0);
		dec_emit(ctx, BB_RET, BB_DIR_S2C, d->t0, d->t1, d->len, id, (size_t)il, NULL, 0);
		return;
	}
	int il = text_id(id, sizeof id, ctx, c->ord);
	dec_emit(ctx, BB_RET, BB_DIR_S2C, d->t0, d->t1, d->len, id, (size_t)il, c->req, c->reqlen);
	dec_ordq_pop(&s->q);
}

/* A binary request is complete. */
static void bin_call_done(struct mc_state *s, const struct bb_dec_ctx *ctx, struct mc_dir *d)
{
	char id[48], name[MC_NAME];
	int il = bin_id(id, sizeof id, ctx, d->opaque);
	int nl = op_name(name, sizeof name, d->opcode);
	dec_emit_toks(ctx, BB_CALL, BB_DIR_C2S, d->t0, d->t1, d->len, id, (size_t)il, name,
	              (size_t)nl, &d->toks);
	if (d->opcode == 0x17)
		return; /* QUITQ */
	if (s->bn >= MC_Q) {
		if (!s->b[s->bh].quiet)
			DEC_COUNT(ctx, evicted);
		s->bh = (uint16_t)((s->bh + 1) % MC_Q);
		s->bn--;
	}
	unsigned slot = (unsigned)(s->bh + s->bn) % MC_Q;
	s->bn++;
	s->b[slot].opaque = d->opaque;
	s->b[slot].opcode = d->opcode;
	s->b[slot].quiet = (uint8_t)quiet_op(d->opcode);
}

/* A binary response is complete: the request with its opaque, passing over
 * the quiet ones before it (they succeeded silently). */
static void bin_reply_done(struct mc_state *s, const struct bb_dec_ctx *ctx, struct mc_dir *d)
{
	char id[48], name[MC_NAME];
	if (d->opcode == 0x10 && d->stat_more) {
		/* One STAT of many: the reply goes on. */
		if (!s->stat_open) {
			s->stat_open = 1;
			s->stat_t0 = d->t0;
			s->stat_len = 0;
		}
		s->stat_len += d->len;
		return;
	}
	int64_t t0 = d->t0;
	uint64_t len = d->len;
	if (d->opcode == 0x10 && s->stat_open) {
		t0 = s->stat_t0;
		len += s->stat_len;
		s->stat_open = 0;
	}
	int found = -1;
	for (unsigned i = 0; i < s->bn; i++) {
		unsigned k = (s->bh + i) % MC_Q;
		if (s->b[k].opaque == d->opaque && s->b[k].opcode == d->opcode) {
			found = (int)i;
			break;
		}
	}
	if (found >= 0) {
		/* Drop the quiet ones before it; keep any other still waiting. */
		unsigned w = 0;
		for (unsigned i = 0; i < s->bn; i++) {
			unsigned k = (s->bh + i) % MC_Q;
			if ((int)i == found || ((int)i < found && s->b[k].quiet))
				continue;
			s->b[(s->bh + w) % MC_Q] = s->b[k];
			w++;
		}
		s->bn = (uint16_t)w;
	} else {
		DEC_COUNT(ctx, unmatched_ret);
	}
	int il = bin_id(id, sizeof id, ctx, d->opaque);
	int nl = op_name(name, sizeof name, d->opcode);
	dec_emit(ctx, BB_RET, BB_DIR_S2C, t0, d->t1, len, id, (size_t)il, name, (size_t)nl);
}

/* Reads a binary header at r (24 bytes available). -1: not plausible. */
static int bin_header(struct mc_dir *d, int dir, struct bb_rd *r)
{
	uint8_t magic = bb_rd_u8(r);
	uint8_t op = bb_rd_u8(r);
	uint16_t keylen = bb_rd_be16(r);
	uint8_t extlen = bb_rd_u8(r);
	uint8_t dtype = bb_rd_u8(r);
	bb_rd_skip(r, 2);
	uint32_t bodylen = bb_rd_be32(r);
	uint32_t opaque = bb_rd_be32(r);
	bb_rd_skip(r, 8);
	if (!bb_rd_ok(r) || magic != (dir == BB_DIR_C2S ? 0x80 : 0x81) || dtype != 0 ||
	    (uint64_t)keylen + extlen > bodylen || bodylen > MC_BODY_MAX)
		return -1;
	d->opcode = op;
	d->opaque = opaque;
	d->left = bodylen;
	d->stat_more = op == 0x10 && keylen > 0;
	return 0;
}

static void message_done(struct mc_state *s, const struct bb_dec_ctx *ctx, int dir)
{
	struct mc_dir *d = &s->d[dir];
	d->in_msg = 0;
	d->phase = PH_MSG;
	if (d->binary)
		(dir == BB_DIR_C2S ? bin_call_done : bin_reply_done)(s, ctx, d);
	else
		(dir == BB_DIR_C2S ? text_call_done : text_reply_done)(s, ctx, d);
}

/* Offset of a plausible message start (at a line start for text), or -1. */
static long hunt(const uint8_t *p, size_t n, int dir, int bol)
{
	struct bb_rd r = bb_rd_make(p, n);
	uint8_t magic = dir == BB_DIR_C2S ? 0x80 : 0x81;
	while (bb_rd_left(&r) > 0) {
		struct bb_rd h = r;
		struct mc_dir tmp;
		if (bb_rd_left(&r) >= 24 && bb_rd_peek(&r) == magic && bin_header(&tmp, dir, &h) == 0)
			return (long)(r.p - p);
		if (bol) {
			struct bb_rd lr = r;
			long nl = bb_rd_find(&lr, "\n", 1);
			/* The line without its CR ("END\r" is no reply word, so a bare
			 * "END\r\n", a miss, was skipped); a second CR goes too. */
			if (nl > 0 && last_is_cr(r.p, (size_t)nl))
				nl--;
			if (nl > 0) {
				struct toks t;
				tokenize(r.p, (size_t)nl - (size_t)last_is_cr(r.p, (size_t)nl), &t);
				if (t.n && (dir == BB_DIR_C2S ? known_cmd(t.p[0], t.l[0])
				                              : known_reply(t.p[0], t.l[0])))
					return (long)(r.p - p);
			}
		}
		bol = bb_rd_peek(&r) == '\n';
		bb_rd_skip(&r, 1);
	}
	return -1;
}

/* One text line of a message (without its line end). -1: malformed. */
static int text_line(struct mc_state *s, const struct bb_dec_ctx *ctx, int dir,
                     const uint8_t *p, size_t n)
{
	struct mc_dir *d = &s->d[dir];
	struct toks t;
	tokenize(p, n, &t);
	if (dir == BB_DIR_C2S) {
		if (t.n == 0)
			return -1;
		if (text_command(d, &t) < 0)
			return -1;
		text_tokens(&d->toks, ctx, &t);
		d->nlen = (uint8_t)(t.l[0] < MC_NAME ? t.l[0] : MC_NAME);
		memcpy(d->name, t.p[0], d->nlen);
		if (d->done_after)
			d->phase = PH_DATA;
		else
			message_done(s, ctx, dir);
		return 0;
	}
	uint64_t bytes = 0;
	if (t.n >= 4 && tok_is(t.p[0], t.l[0], "VALUE")) {
		if (tok_num(t.p[3], t.l[3], &bytes) < 0 || bytes > MC_BODY_MAX)
			return -1;
		d->done_after = 0;
		d->left = bytes + 2;
		d->phase = PH_DATA;
	} else if (t.n >= 2 && tok_is(t.p[0], t.l[0], "VA")) {
		if (tok_num(t.p[1], t.l[1], &bytes) < 0 || bytes > MC_BODY_MAX)
			return -1;
		d->done_after = 1;
		d->left = bytes + 2;
		d->phase = PH_DATA;
	} else if (t.n && (tok_is(t.p[0], t.l[0], "STAT") || tok_is(t.p[0], t.l[0], "ITEM") ||
	                   tok_is(t.p[0], t.l[0], "PREFIX") ||
	                   (t.l[0] > 4 && memcmp(t.p[0], "key=", 4) == 0))) {
		/* a data line: the reply goes on */
	} else {
		message_done(s, ctx, dir); /* END, a status, an error, a number */
	}
	return 0;
}

static void start_hunting(struct mc_dir *d)
{
	d->hunting = 1;
	d->in_msg = 0;
	d->phase = PH_MSG;
}

static void udp_datagram(struct mc_state *s, const struct bb_dec_ctx *ctx, int dir,
                         const uint8_t *p, size_t n)
{
	struct bb_rd r = bb_rd_make(p, n);
	uint16_t reqid = bb_rd_be16(&r);
	uint16_t seq = bb_rd_be16(&r);
	bb_rd_skip(&r, 4);
	if (!bb_rd_ok(&r) || !bb_rd_left(&r)) {
		DEC_COUNT(ctx, malformed);
		return;
	}
	int64_t t = dec_time(ctx, dir, 0);
	char id[48], name[MC_NAME];
	int nl = 0;
	struct mc_dir tmp;
	memset(&tmp, 0, sizeof tmp);
	int first = bb_rd_peek(&r);
	if (first == 0x80 || first == 0x81) {
		struct bb_rd h = r;
		if (bin_header(&tmp, dir, &h) < 0) {
			DEC_COUNT(ctx, malformed);
			return;
		}
		nl = op_name(name, sizeof name, tmp.opcode);
	} else if (dir == BB_DIR_C2S) {
		long e = bb_rd_find(&r, "\n", 1);
		struct toks tk;
		tokenize(r.p, e < 0 ? bb_rd_left(&r) : (size_t)e, &tk);
		if (tk.n == 0) {
			DEC_COUNT(ctx, malformed);
			return;
		}
		nl = (int)(tk.l[0] < MC_NAME ? tk.l[0] : MC_NAME);
		memcpy(name, tk.p[0], (size_t)nl);
		if (tk.l[0] && last_is_cr(tk.p[0], tk.l[0]))
			nl--;
	}
	int il = snprintf(id, sizeof id, "c%llu.u%u", (unsigned long long)ctx->conn, reqid);
	if (dir == BB_DIR_C2S) {
		/* The reply gets the command's name back from its code: 1 + the
		 * index of a known text command, 0x100 + a binary opcode. */
		uint32_t code = 0;
		if (first == 0x80)
			code = 0x100u + tmp.opcode;
		for (size_t i = 0; !code && nl && i < sizeof text_cmds / sizeof text_cmds[0]; i++)
			if (tok_is((const uint8_t *)name, (size_t)nl, text_cmds[i]))
				code = 1 + (uint32_t)i;
		dec_match_put(&s->udp, ctx, reqid, code, 0, 0);
		struct bb_dec_toks tk;
		udp_tokens(&tk, ctx, r);
		dec_emit_toks(ctx, BB_CALL, dir, t, t, n, id, (size_t)il, nl ? name : NULL, (size_t)nl,
		              &tk);
		return;
	}
	if (seq != 0)
		return; /* a later datagram of a reply already reported */
	uint32_t code = 0, b, c;
	if (!dec_match_take(&s->udp, reqid, &code, &b, &c))
		DEC_COUNT(ctx, unmatched_ret);
	if (code >= 0x100)
		nl = op_name(name, sizeof name, code - 0x100);
	else if (code >= 1 && code <= sizeof text_cmds / sizeof text_cmds[0])
		nl = snprintf(name, sizeof name, "%s", text_cmds[code - 1]);
	dec_emit(ctx, BB_RET, dir, t, t, n, id, (size_t)il, nl ? name : NULL, (size_t)nl);
}

static size_t mc_decode(void *st, const struct bb_dec_ctx *ctx, int dir, uint64_t pos,
                        const uint8_t *p, size_t n)
{
	struct mc_state *s = st;
	if (dir < 0 || dir > 1)
		return n;
	if (ctx->transport == BB_TR_UDP) {
		udp_datagram(s, ctx, dir, p, n);
		return n;
	}
	struct mc_dir *d = &s->d[dir];
	struct bb_rd r = bb_rd_make(p, n);
	while (bb_rd_left(&r) > 0) {
		size_t off = (size_t)(r.p - p);
		size_t left = bb_rd_left(&r);
		if (d->hunting) {
			long at = hunt(r.p, left, dir, d->hunting == 1);
			size_t skip = at < 0 ? (left > 24 ? left - 24 : 0) : (size_t)at;
			/* What is kept for later is a line start only when nothing
			 * was skipped from one (a first reply "EN" waits for "D\r\n"). */
			if (skip > 0)
				d->hunting = 2;
			if (ctx->stats)
				ctx->stats->skipped_bytes += skip;
			bb_rd_skip(&r, skip);
			if (at < 0)
				break;
			d->hunting = 0;
			continue;
		}
		if (d->phase == PH_DATA || d->phase == PH_BODY) {
			size_t take = d->left < left ? (size_t)d->left : left;
			bb_rd_skip(&r, take);
			d->left -= take;
			d->len += take;
			if (take)
				d->t1 = dec_time(ctx, dir, pos + off + take - 1);
			if (d->left > 0)
				continue;
			if (d->phase == PH_BODY || d->done_after)
				message_done(s, ctx, dir);
			else
				d->phase = PH_MSG; /* the next line of a text reply */
			continue;
		}
		if (!d->in_msg) {
			struct bb_rd pk = r;
			uint8_t first = bb_rd_u8(&pk);
			d->binary = first == 0x80 || first == 0x81;
		}
		if (!d->in_msg && d->binary) {
			if (left < 24)
				break;
			d->t0 = dec_time(ctx, dir, pos + off);
			struct bb_rd h = r;
			if (bin_header(d, dir, &h) < 0) {
				DEC_COUNT(ctx, malformed);
				start_hunting(d);
				bb_rd_skip(&r, 1);
				continue;
			}
			d->in_msg = 1;
			if (dir == BB_DIR_C2S)
				bin_tokens(&d->toks, ctx, r);
			bb_rd_skip(&r, 24);
			d->len = 24;
			d->t1 = dec_time(ctx, dir, pos + off + 23);
			d->phase = PH_BODY;
			if (d->left == 0)
				message_done(s, ctx, dir);
			continue;
		}
		long nl = bb_rd_find(&r, "\n", 1);
		if (nl < 0 || (size_t)nl >= MC_LINE_MAX) {
			if (left < MC_LINE_MAX)
				break;
			DEC_COUNT(ctx, malformed);
			start_hunting(d);
			continue;
		}
		size_t ll = (size_t)nl;
		struct bb_rd line = bb_rd_sub(&r, ll + 1);
		const uint8_t *lp = bb_rd_bytes(&line, ll);
		if (ll > 0 && last_is_cr(lp, ll))
			ll--;
		if (!d->in_msg) {
			if (ll == 0)
				continue; /* an empty line between messages */
			d->in_msg = 1;
			d->t0 = dec_time(ctx, dir, pos + off);
			d->len = 0;
		}
		d->len += (size_t)nl + 1;
		d->t1 = dec_time(ctx, dir, pos + off + (size_t)nl);
		if (text_line(s, ctx, dir, lp, ll) < 0) {
			DEC_COUNT(ctx, malformed);
			start_hunting(d);
		}
	}
	return (size_t)(r.p - p);
}

static void mc_gap(void *st, const struct bb_dec_ctx *ctx, int dir, uint64_t lost)
{
	struct mc_state *s = st;
	if (dir < 0 || dir > 1 || ctx->transport == BB_TR_UDP)
		return;
	struct mc_dir *d = &s->d[dir];
	DEC_COUNT(ctx, resync);
	if (lost && (d->phase == PH_DATA || d->phase == PH_BODY) && lost < d->left) {
		/* The hole is inside a data block or body of known length. */
		d->left -= lost;
		d->len += lost;
		return;
	}
	if (dir == BB_DIR_C2S)
		dec_ordq_clear(&s->q); /* text commands were lost: replies cannot be paired by order */
	s->resynced = 1;
	/* A message whose head was seen happened: report it, ending before the gap. */
	if (d->in_msg && (d->binary || d->phase == PH_DATA || dir == BB_DIR_S2C))
		message_done(s, ctx, dir);
	start_hunting(d);
}

static void mc_end(void *st, const struct bb_dec_ctx *ctx)
{
	struct mc_state *s = st;
	if (ctx->transport == BB_TR_UDP)
		return;
	for (int dir = 0; dir < 2; dir++) {
		struct mc_dir *d = &s->d[dir];
		/* Cut short by the end of the capture: report what was seen. */
		if (d->in_msg && !d->hunting &&
		    (d->binary || d->phase == PH_DATA || dir == BB_DIR_S2C)) {
			DEC_COUNT(ctx, malformed);
			message_done(s, ctx, dir);
		}
	}
}

static void mc_free(void *st)
{
	struct mc_state *s = st;
	dec_ordq_free(&s->q);
}

static int mc_probe(const uint8_t *p, size_t n, unsigned transport, int dir)
{
	struct bb_rd r = bb_rd_make(p, n);
	if (transport == BB_TR_UDP) {
		bb_rd_skip(&r, 8);
		if (!bb_rd_ok(&r))
			return 0;
	}
	if (dir != BB_DIR_C2S || !bb_rd_left(&r))
		return 0;
	if (bb_rd_peek(&r) == 0x80) {
		/* Storage requests carry 8 bytes of extras (flags, expiry): this
		 * tells them from a strict Thrift CALL (80 01 00 01 ...). */
		struct mc_dir tmp;
		struct bb_rd e = r;
		bb_rd_skip(&e, 4);
		uint8_t ext = bb_rd_u8(&e);
		if (bb_rd_left(&r) < 24 || bin_header(&tmp, dir, &r) < 0 || tmp.opcode > 0x24)
			return 0;
		int storage = (tmp.opcode >= 0x01 && tmp.opcode <= 0x03) || (tmp.opcode >= 0x11 && tmp.opcode <= 0x13);
		return !storage || ext == 8;
	}
	struct bb_rd head = bb_rd_make(r.p, bb_rd_left(&r) < 512 ? bb_rd_left(&r) : 512);
	long nl = bb_rd_find(&head, "\r\n", 2);
	if (nl <= 0)
		return 0;
	struct toks t;
	tokenize(r.p, (size_t)nl, &t);
	if (!t.n || !known_cmd(t.p[0], t.l[0]))
		return 0;
	struct mc_dir tmp;
	memset(&tmp, 0, sizeof tmp);
	return text_command(&tmp, &t) == 0;
}

const struct bb_decoder bb_dec_memcache = {
	.name = "memcache",
	.summary = "memcached text and binary, TCP and UDP; id = opaque, UDP request id or ordinal",
	.transports = BB_TR_TCP | BB_TR_UDP,
	.ports = {11211, 0},
	.probe = mc_probe,
	.verify = 0,
	.state_size = sizeof(struct mc_state),
	.decode = mc_decode,
	.gap = mc_gap,
	.end = mc_end,
	.free = mc_free,
};

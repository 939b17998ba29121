/* dec_mysql.c - MySQL and MariaDB client/server protocol: commands as calls, replies as returns */
/* SPDX-License-Identifier: MIT */
/*
 * MySQL Client/Server Protocol (dev.mysql.com/doc/dev/mysql-server/latest,
 * "page_protocol_basic_packets", "page_protocol_command_phase") and MariaDB's
 * "Clients & Connectors / Client/Server Protocol".
 *
 *   packet:   length:24 (little-endian) seq:8 payload; a payload of
 *             0xffffff bytes continues in the next packet (> 16 MB)
 *   command:  client packet with seq 0: cmd:8 args
 *             (0x03 COM_QUERY sql, 0x16 COM_STMT_PREPARE sql,
 *              0x17 COM_STMT_EXECUTE stmt_id:32le ..., 0x19 COM_STMT_CLOSE
 *              and 0x18 COM_STMT_SEND_LONG_DATA and 0x01 COM_QUIT: no reply)
 *   reply:    server packets from seq 1 on:
 *             OK 0x00 | ERR 0xff | LOCAL INFILE 0xfb (file data, then OK)
 *             | result set: column-count (lenenc), column definitions,
 *               [EOF 0xfe], rows, EOF 0xfe or OK 0xfe (CLIENT_DEPRECATE_EOF),
 *               another result set when SERVER_MORE_RESULTS_EXISTS (0x0008)
 *             | COM_STMT_PREPARE_OK 0x00 stmt_id:32le ncols:16le nparams:16le 0 warnings:16le,
 *               then nparams and ncols definitions, each list with an EOF
 *               unless CLIENT_DEPRECATE_EOF
 *   handshake: server greeting (seq 0, protocol 10), client response (seq 1;
 *             32 bytes with CLIENT_SSL: TLS follows), auth switch and more
 *             data packets: not calls.
 *
 * Whether CLIENT_DEPRECATE_EOF is on need not be known: an EOF is a 0xfe
 * packet shorter than 9 bytes, a row never starts with 0xfe unless it is
 * 16 MB long, and the optional EOF after definitions is recognised by its
 * shape. A server packet with seq 1 always starts a reply (tshark's rule,
 * ORACLE.md), unless it follows a packet with seq 0 (the counter wrapped in
 * a long result set): it also resynchronises a reply whose shape was not
 * understood.
 *
 * id = "c<connection>.<command ordinal>"; req = the verb and first table of
 * the SQL (dec_sqltext.c) for COM_QUERY, "PREPARE " and that for
 * COM_STMT_PREPARE, the prepared statement's for COM_STMT_EXECUTE (statement
 * ids are remembered, 32 per connection), else the command name (PING,
 * INIT_DB ...). Only the first 512 bytes of a packet are parsed; the rest is
 * skipped as it streams. The compressed protocol is not decoded.
 */
#include <stddef.h>

#include "decoders/dec_int.h"
#include "decoders/dec_ordq_int.h"
#include "decoders/dec_sql_int.h"
#include "decoders/dec_tok_int.h"

#define MY_HEAD 512
#define MY_STMTS 32
#define MY_REQ (DEC_SQL_MAX + 1)
#define MY_MAXPKT 0xffffffu
#define MY_TOK_PARAMS 16        /* parameters of a COM_STMT_EXECUTE read for tokens */
#define MY_TOK_STMTS 8          /* statements whose parameter types are kept */

enum { COM_QUIT = 0x01, COM_INIT_DB = 0x02, COM_QUERY = 0x03, COM_FIELD_LIST = 0x04,
       COM_STATISTICS = 0x09, COM_CHANGE_USER = 0x11, COM_BINLOG_DUMP = 0x12,
       COM_STMT_PREPARE = 0x16, COM_STMT_EXECUTE = 0x17, COM_STMT_SEND_LONG_DATA = 0x18,
       COM_STMT_CLOSE = 0x19, COM_STMT_FETCH = 0x1c };

/* Reply states. */
enum { R_IDLE = 0, R_FIRST, R_COLS, R_EOF1, R_ROWS, R_DEFS, R_INFILE, R_AUTH };

static const char *const cmd_names[] = {"SLEEP", "QUIT", "INIT_DB", "QUERY", "FIELD_LIST",
	"CREATE_DB", "DROP_DB", "REFRESH", "SHUTDOWN", "STATISTICS", "PROCESS_INFO", "CONNECT",
	"PROCESS_KILL", "DEBUG", "PING", "TIME", "DELAYED_INSERT", "CHANGE_USER", "BINLOG_DUMP",
	"TABLE_DUMP", "CONNECT_OUT", "REGISTER_SLAVE", "STMT_PREPARE", "STMT_EXECUTE",
	"STMT_SEND_LONG_DATA", "STMT_CLOSE", "STMT_RESET", "SET_OPTION", "STMT_FETCH", "DAEMON",
	"BINLOG_DUMP_GTID", "RESET_CONNECTION"};

struct my_dir {
	uint8_t hunting;        /* after a gap: look for a packet start */
	uint8_t in_pkt;         /* skipping the rest of a packet */
	uint8_t cont;           /* the packet in progress continues (0xffffff) */
	uint8_t seq;            /* of the last packet started */
	uint8_t have_seq;
	uint32_t left;          /* bytes of the packet still to come */
	int64_t t0;             /* first byte of the call or reply in progress */
	uint64_t len;
};

struct my_state {
	struct my_dir d[2];
	uint8_t opaque;         /* TLS: nothing more to decode */
	uint8_t resynced;       /* bytes were lost: pair the next reply by time */
	/* the call in progress (a command split over packets) */
	uint8_t ccmd, creqlen, cpending;
	char creq[MY_REQ];
	/* the reply in progress */
	uint8_t rstate, rcmd, rreqlen;
	uint8_t rdone;          /* the reply ends with the packet in progress */
	uint32_t rord;
	uint32_t rcount, rcount2;  /* definitions (params, columns) still to come */
	char rreq[MY_REQ];
	uint32_t ncall;
	uint32_t stmt_next;
	struct dec_ordq q;      /* commands awaiting a reply; flags: the command */
	struct {
		uint32_t id;
		uint8_t used, len;
		char req[MY_REQ];
	} stmt[MY_STMTS];
	/* Content tokens of the call in progress, and the parameter types a
	 * COM_STMT_EXECUTE sent last for a statement (later ones may omit them). */
	struct bb_dec_toks toks;
	uint32_t tok_next;
	struct {
		uint32_t id;
		uint8_t n;
		uint8_t types[2 * MY_TOK_PARAMS];
	} ptypes[MY_TOK_STMTS];
};

static int id_of(char *buf, size_t cap, const struct bb_dec_ctx *ctx, uint32_t ord)
{
	int n = ord ? snprintf(buf, cap, "c%llu.%u", (unsigned long long)ctx->conn, ord)
	            : snprintf(buf, cap, "c%llu.?", (unsigned long long)ctx->conn);
	return n < (int)cap ? n : (int)cap - 1;
}

static void set_req(char *dst, uint8_t *dlen, const char *src, size_t n)
{
	if (n > MY_REQ - 1)
		n = MY_REQ - 1;
	memcpy(dst, src, n);
	dst[n] = 0;
	*dlen = (uint8_t)n;
}

/* A length-encoded integer (0xfb, NULL, reads as 0). */
static uint64_t lenenc(struct bb_rd *r)
{
	uint8_t c = bb_rd_u8(r);
	if (c < 0xfb)
		return c;
	if (c == 0xfc)
		return bb_rd_le16(r);
	if (c == 0xfd) {
		uint32_t lo = bb_rd_le16(r);
		return lo | (uint32_t)bb_rd_u8(r) << 16;
	}
	if (c == 0xfe) {
		uint64_t lo = bb_rd_le32(r);
		return lo | (uint64_t)bb_rd_le32(r) << 32;
	}
	return 0;
}

static int known_verb(const char *sum)
{
	static const char *const verbs[] = {"SELECT", "INSERT", "UPDATE", "DELETE", "REPLACE",
		"CREATE", "DROP", "ALTER", "SET", "SHOW", "CALL", "WITH", "BEGIN", "COMMIT",
		"ROLLBACK", "START", "USE", "DESCRIBE", "EXPLAIN", "TRUNCATE", "LOCK", "UNLOCK", NULL};
	for (size_t i = 0; verbs[i]; i++) {
		size_t l = strlen(verbs[i]);
		if (strncmp(sum, verbs[i], l) == 0 && (sum[l] == ' ' || sum[l] == 0))
			return 1;
	}
	return 0;
}

/* Sets the call's req from the head of a command packet (cmd byte read). */
static void command_req(struct my_state *s, int cmd, struct bb_rd r)
{
	char sum[MY_REQ];
	size_t n = bb_rd_left(&r);
	const uint8_t *p = bb_rd_bytes(&r, n);
	size_t sl;
	struct bb_rd first = bb_rd_make(p, n);
	int c0 = n > 0 ? bb_rd_u8(&first) : 0x20;
	switch (cmd) {
	case COM_QUERY:
		if ((c0 < 0x20 && !(c0 >= 0x09 && c0 <= 0x0d)) || c0 >= 0xfb) {
			/* CLIENT_QUERY_ATTRIBUTES (MySQL 8.0.23): parameter_count and
			 * parameter_set_count (lenenc) come first, then, when there
			 * are parameters, their types, names and values. */
			struct bb_rd a = bb_rd_make(p, n);
			uint64_t np = lenenc(&a);
			lenenc(&a);
			if (np > 0) {
				/* values of any type precede the text: take the first
				 * place where a statement verb begins */
				while (bb_rd_left(&a) > 0) {
					sl = dec_sql_summary(a.p, bb_rd_left(&a), 1, sum, sizeof sum);
					if (sl >= 3 && known_verb(sum))
						break;
					bb_rd_skip(&a, 1);
				}
			}
			if (bb_rd_ok(&a)) {
				n = bb_rd_left(&a);
				p = a.p;
			}
		}
		sl = dec_sql_summary(p, n, 1, sum, sizeof sum);
		set_req(s->creq, &s->creqlen, sum, sl ? sl : 5);
		if (!sl)
			set_req(s->creq, &s->creqlen, "QUERY", 5);
		break;
	case COM_STMT_PREPARE:
		memcpy(sum, "PREPARE ", 8);
		sl = dec_sql_summary(p, n, 1, sum + 8, sizeof sum - 8);
		set_req(s->creq, &s->creqlen, sum, 8 + sl);
		break;
	case COM_STMT_EXECUTE:
	case COM_STMT_FETCH:
	case COM_STMT_CLOSE:
	case 0x1a: /* COM_STMT_RESET */
	case COM_STMT_SEND_LONG_DATA: {
		struct bb_rd a = bb_rd_make(p, n);
		uint32_t id = bb_rd_le32(&a);
		for (unsigned i = 0; bb_rd_ok(&a) && i < MY_STMTS; i++) {
			if (s->stmt[i].used && s->stmt[i].id == id) {
				if (cmd == COM_STMT_EXECUTE || cmd == COM_STMT_FETCH) {
					set_req(s->creq, &s->creqlen, s->stmt[i].req, s->stmt[i].len);
				} else {
					int l = snprintf(sum, sizeof sum, "%s %s", cmd_names[cmd],
					                 s->stmt[i].req);
					set_req(s->creq, &s->creqlen, sum,
					        l < (int)sizeof sum ? (size_t)l : sizeof sum - 1);
				}
				if (cmd == COM_STMT_CLOSE)
					s->stmt[i].used = 0;
				return;
			}
		}
		int l = snprintf(sum, sizeof sum, "%s", cmd_names[cmd]);
		set_req(s->creq, &s->creqlen, sum, (size_t)l);
		break;
	}
	default:
		if ((size_t)cmd < sizeof cmd_names / sizeof cmd_names[0])
			set_req(s->creq, &s->creqlen, cmd_names[cmd], strlen(cmd_names[cmd]));
		else
			set_req(s->creq, &s->creqlen, "UNKNOWN", 7);
		break;
	}
}

/* One binary-protocol value of type (type:8 flags:8, 0x80 in flags:
 * unsigned) at r; with tk, its tokens (integers as decimal text, strings
 * and decimals as fields; floats and times none). Fails r when it overruns. */
static void exec_value(struct bb_rd *r, const uint8_t *type, struct bb_dec_toks *tk,
                       const struct bb_dec_ctx *ctx)
{
	struct bb_rd tr = bb_rd_make(type, 2);
	uint8_t t = bb_rd_u8(&tr);
	int uns = (bb_rd_u8(&tr) & 0x80) != 0;
	int64_t v;
	int is_int = 1;
	switch (t) {
	case 1: v = uns ? (int64_t)bb_rd_u8(r) : (int8_t)bb_rd_u8(r); break;
	case 2:
	case 13: v = uns ? (int64_t)bb_rd_le16(r) : (int16_t)bb_rd_le16(r); break;
	case 3:
	case 9: v = uns ? (int64_t)bb_rd_le32(r) : (int32_t)bb_rd_le32(r); break;
	case 8: {
		uint64_t lo = bb_rd_le32(r);
		v = (int64_t)(lo | (uint64_t)bb_rd_le32(r) << 32);
		break;
	}
	case 4: bb_rd_skip(r, 4); is_int = 0; v = 0; break;
	case 5: bb_rd_skip(r, 8); is_int = 0; v = 0; break;
	case 6: return; /* NULL type: no value */
	case 7:
	case 10:
	case 11:
	case 12: bb_rd_skip(r, bb_rd_u8(r)); return;
	default: {
		uint64_t l = lenenc(r);
		if (l > bb_rd_left(r)) {
			bb_rd_fail(r);
			return;
		}
		const uint8_t *b = bb_rd_bytes(r, (size_t)l);
		if (tk && b)
			dec_tok_field(tk, ctx, b, (size_t)l, DEC_TOK_WHOLE);
		return;
	}
	}
	if (tk && is_int && bb_rd_ok(r))
		dec_tok_int(tk, ctx, v, uns);
}

/* The n parameters after the stmt_id, flags and iteration count of a
 * COM_STMT_EXECUTE (at r): null bitmap, new-params-bound flag, types when it
 * is 1 (else `known`, the last ones sent), values. 1 when they take exactly
 * the rest of the packet; with tk, their tokens, and *types the types used. */
static int exec_params(struct bb_rd r, unsigned n, const uint8_t *known, const uint8_t **types,
                       struct bb_dec_toks *tk, const struct bb_dec_ctx *ctx)
{
	const uint8_t *nulls = bb_rd_bytes(&r, (n + 7) / 8);
	uint8_t bound = bb_rd_u8(&r);
	const uint8_t *ty = bound == 1 ? bb_rd_bytes(&r, 2u * n) : bound == 0 ? known : NULL;
	if (!nulls || !ty || !bb_rd_ok(&r))
		return 0;
	struct bb_rd nb = bb_rd_make(nulls, (n + 7) / 8), tyr = bb_rd_make(ty, 2u * n);
	uint8_t bits = 0;
	for (unsigned i = 0; i < n; i++) {
		if (i % 8 == 0)
			bits = bb_rd_u8(&nb);
		const uint8_t *t = bb_rd_bytes(&tyr, 2);
		if (!(bits >> (i % 8) & 1))
			exec_value(&r, t, tk, ctx);
	}
	*types = ty;
	return bb_rd_ok(&r) && bb_rd_left(&r) == 0;
}

/* Content tokens of a command (cmd byte read, the rest of the packet at r,
 * complete when whole): the literals of COM_QUERY and COM_STMT_PREPARE,
 * the parameters of COM_STMT_EXECUTE (their count is the one that makes
 * the packet add up, with the types sent, or those sent last for the
 * statement). */
static void command_tokens(struct my_state *s, const struct bb_dec_ctx *ctx, int cmd,
                           struct bb_rd r, int whole)
{
	dec_tok_reset(&s->toks);
	if (!dec_tok_on(ctx))
		return;
	if (cmd == COM_QUERY || cmd == COM_STMT_PREPARE) {
		dec_sql_tokens(r.p, bb_rd_left(&r), 1, &s->toks, ctx);
		return;
	}
	if (cmd != COM_STMT_EXECUTE || !whole)
		return;
	uint32_t id = bb_rd_le32(&r);
	bb_rd_skip(&r, 5); /* flags, iteration count */
	if (!bb_rd_ok(&r) || !bb_rd_left(&r))
		return;
	int slot = -1;
	for (int i = 0; i < MY_TOK_STMTS; i++)
		if (s->ptypes[i].n && s->ptypes[i].id == id)
			slot = i;
	for (unsigned n = 1; n <= MY_TOK_PARAMS; n++) {
		const uint8_t *known = slot >= 0 && s->ptypes[slot].n == n ? s->ptypes[slot].types : NULL;
		const uint8_t *ty;
		if (!exec_params(r, n, known, &ty, NULL, ctx))
			continue;
		exec_params(r, n, known, &ty, &s->toks, ctx);
		if (ty != known) {
			if (slot < 0)
				slot = (int)(s->tok_next++ % MY_TOK_STMTS);
			s->ptypes[slot].id = id;
			s->ptypes[slot].n = (uint8_t)n;
			memcpy(s->ptypes[slot].types, ty, 2u * n);
		}
		return;
	}
}

static void emit_call(struct my_state *s, const struct bb_dec_ctx *ctx, int64_t t1)
{
	struct my_dir *d = &s->d[BB_DIR_C2S];
	char id[48];
	s->ncall++;
	int il = id_of(id, sizeof id, ctx, s->ncall);
	dec_emit_toks(ctx, BB_CALL, BB_DIR_C2S, d->t0, t1, d->len, id, (size_t)il,
	              s->creqlen ? s->creq : NULL, s->creqlen, &s->toks);
	s->cpending = 0;
	int cmd = s->ccmd;
	if (cmd == COM_QUIT || cmd == COM_STMT_CLOSE || cmd == COM_STMT_SEND_LONG_DATA)
		return; /* no reply */
	dec_ordq_push(&s->q, ctx, MY_REQ - 1, d->t0, s->ncall, (unsigned)cmd, s->creq, s->creqlen);
}

/* A server packet with seq 1 starts the reply to the oldest pending call. */
static void reply_start(struct my_state *s, const struct bb_dec_ctx *ctx, int64_t t0)
{
	struct my_dir *d = &s->d[BB_DIR_S2C];
	d->t0 = t0;
	d->len = 0;
	s->rstate = R_FIRST;
	if (s->resynced)
		dec_ordq_skip_to(&s->q, t0);
	const struct dec_ordq_ent *e;
	int w = dec_ordq_front(&s->q, &e);
	if (w == DEC_ORDQ_CALL && (!s->resynced || e->t0 <= t0)) {
		s->rord = e->ord;
		s->rcmd = (uint8_t)e->flags;
		set_req(s->rreq, &s->rreqlen, e->req, e->reqlen);
		dec_ordq_pop(&s->q);
		s->resynced = 0;
	} else {
		if (w == DEC_ORDQ_LOST && !s->resynced)
			dec_ordq_pop(&s->q); /* its command found the queue full */
		DEC_COUNT(ctx, unmatched_ret);
		s->rord = 0;
		s->rcmd = COM_QUERY;
		s->rreqlen = 0;
	}
}

static void reply_end(struct my_state *s, const struct bb_dec_ctx *ctx, int64_t t1)
{
	struct my_dir *d = &s->d[BB_DIR_S2C];
	char id[48];
	if (s->rstate == R_IDLE)
		return;
	int il = id_of(id, sizeof id, ctx, s->rord);
	dec_emit(ctx, BB_RET, BB_DIR_S2C, d->t0, t1, d->len, id, (size_t)il,
	         s->rreqlen ? s->rreq : NULL, s->rreqlen);
	s->rstate = R_IDLE;
	s->rdone = 0;
}

/* SERVER_MORE_RESULTS_EXISTS in an OK (0x00/0xfe) or EOF packet (at r, after
 * its first byte). */
static int more_results(struct bb_rd r, int is_eof)
{
	if (is_eof) {
		bb_rd_skip(&r, 2); /* warnings */
	} else {
		lenenc(&r);    /* affected rows */
		lenenc(&r);    /* last insert id */
	}
	uint16_t status = bb_rd_le16(&r);
	return bb_rd_ok(&r) && (status & 0x0008);
}

/* One server packet of the reply in progress: pkt holds its first bytes,
 * plen its length. Returns 1 when the reply is complete. */
static int reply_packet(struct my_state *s, struct bb_rd pkt, uint32_t plen)
{
	struct bb_rd h = pkt;
	int c = bb_rd_u8(&h);
	switch (s->rstate) {
	case R_FIRST:
		if (s->rcmd == COM_STMT_PREPARE && c == 0x00 && plen >= 12) {
			uint32_t id = bb_rd_le32(&h);
			uint16_t ncols = bb_rd_le16(&h);
			uint16_t nparams = bb_rd_le16(&h);
			const char *req = s->rreq;
			size_t rl = s->rreqlen;
			if (rl >= 8 && memcmp(req, "PREPARE ", 8) == 0) {
				req += 8;
				rl -= 8;
			}
			unsigned slot = s->stmt_next++ % MY_STMTS;
			for (unsigned i = 0; i < MY_STMTS; i++)
				if (s->stmt[i].used && s->stmt[i].id == id)
					slot = i;
			s->stmt[slot].used = 1;
			s->stmt[slot].id = id;
			set_req(s->stmt[slot].req, &s->stmt[slot].len, req, rl);
			s->rcount = nparams;
			s->rcount2 = ncols;
			s->rstate = R_DEFS;
			return nparams == 0 && ncols == 0;
		}
		if (c == 0x00 || c == 0xfe)
			return !more_results(h, 0);
		if (c == 0xff)
			return 1;
		if (c == 0xfb && s->rcmd == COM_QUERY) {
			s->rstate = R_INFILE;
			return 0;
		}
		if (s->rcmd == COM_QUERY || s->rcmd == COM_STMT_EXECUTE) {
			struct bb_rd a = pkt; /* the count starts at the first byte */
			uint64_t n = lenenc(&a);
			if (n == 0)
				return 1;
			s->rcount = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
			s->rstate = R_COLS;
			return 0;
		}
		if (s->rcmd == COM_FIELD_LIST || s->rcmd == COM_STMT_FETCH) {
			s->rstate = R_ROWS;
			return 0;
		}
		if (s->rcmd == COM_CHANGE_USER && (c == 0xfe || c == 0x01)) {
			s->rstate = R_AUTH;
			return 0;
		}
		return 1;
	case R_COLS:
		if (c == 0xff)
			return 1;
		if (--s->rcount == 0)
			s->rstate = R_EOF1;
		return 0;
	case R_EOF1:
		s->rstate = R_ROWS;
		if (c == 0xfe && plen < 9)
			return 0;
		/* CLIENT_DEPRECATE_EOF: this is the first row (or the end) */
		return reply_packet(s, pkt, plen);
	case R_ROWS:
		if (c == 0xff)
			return 1;
		if (c == 0xfe && plen < MY_MAXPKT) {
			/* an EOF is 5 bytes; an OK with the 0xfe header at least 7 */
			if (more_results(h, plen <= 5)) {
				s->rstate = R_FIRST;
				return 0;
			}
			return 1;
		}
		return 0;
	case R_DEFS:
		if (c == 0xfe && plen < 9)
			return 0; /* the EOF closing a list */
		if (s->rcount > 0)
			s->rcount--;
		else if (s->rcount2 > 0)
			s->rcount2--;
		return s->rcount == 0 && s->rcount2 == 0;
	case R_INFILE:
		return 1;
	case R_AUTH:
		return c == 0x00 || c == 0xff;
	default:
		return 1;
	}
}

/* A plausible packet header at r for hunting: a command (client), or a
 * reply's first packet (server), that ends at the end of the bytes or is
 * followed by the next packet of the same exchange. */
static int plausible(struct bb_rd r, int dir)
{
	uint32_t len = bb_rd_le16(&r);
	len |= (uint32_t)bb_rd_u8(&r) << 16;
	uint8_t seq = bb_rd_u8(&r);
	int c = bb_rd_u8(&r);
	if (!bb_rd_ok(&r) || len == 0 || len > (1u << 20))
		return 0;
	if (dir == BB_DIR_C2S) {
		if (seq != 0 || c < 1 || c > 0x1f)
			return 0;
		return bb_rd_left(&r) == len - 1;
	}
	if (seq != 1)
		return 0;
	if (bb_rd_left(&r) == len - 1)
		return 1;
	struct bb_rd n = r;
	bb_rd_skip(&n, len - 1);
	uint32_t len2 = bb_rd_le16(&n);
	len2 |= (uint32_t)bb_rd_u8(&n) << 16;
	uint8_t seq2 = bb_rd_u8(&n);
	return bb_rd_ok(&n) && seq2 == 2 && len2 > 0 && len2 < (1u << 24);
}

/* A packet has ended, its last byte at stream position last: the call or
 * reply it completes is emitted (times are looked up only then). */
static void packet_done(struct my_state *s, const struct bb_dec_ctx *ctx, int dir, uint64_t last)
{
	if (dir == BB_DIR_C2S) {
		if (s->cpending && !s->d[dir].cont)
			emit_call(s, ctx, dec_time(ctx, dir, last));
	} else if (s->rdone) {
		reply_end(s, ctx, dec_time(ctx, dir, last));
	}
}

static size_t my_decode(void *st, const struct bb_dec_ctx *ctx, int dir, uint64_t pos,
                        const uint8_t *p, size_t n)
{
	struct my_state *s = st;
	if (dir < 0 || dir > 1)
		return n;
	struct my_dir *d = &s->d[dir];
	struct bb_rd r = bb_rd_make(p, n);
	while (bb_rd_left(&r) > 0) {
		size_t off = (size_t)(r.p - p);
		size_t left = bb_rd_left(&r);
		if (s->opaque) {
			bb_rd_skip(&r, left);
			break;
		}
		if (d->in_pkt) {
			size_t take = d->left < left ? d->left : left;
			bb_rd_skip(&r, take);
			d->left -= (uint32_t)take;
			d->len += take;
			if (d->left == 0) {
				d->in_pkt = 0;
				packet_done(s, ctx, dir, pos + off + take - 1);
			}
			continue;
		}
		if (d->hunting) {
			size_t i = 0;
			int found = 0;
			for (; i + 5 <= left; i++) {
				if (plausible(bb_rd_make(r.p + i, left - i), dir)) {
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
			d->have_seq = 0;
			continue;
		}
		if (left < 4)
			return off;
		struct bb_rd h = r;
		uint32_t plen = bb_rd_le16(&h);
		plen |= (uint32_t)bb_rd_u8(&h) << 16;
		uint8_t seq = bb_rd_u8(&h);
		size_t head = plen < MY_HEAD ? plen : MY_HEAD;
		if (dir == BB_DIR_S2C && head > 64)
			head = 64;
		if (left < 4 + head)
			return off;
		struct bb_rd body = bb_rd_make(h.p, head);
		int c = head ? bb_rd_u8(&body) : -1;
		uint64_t at = pos + off; /* its first byte (time looked up when needed) */
		int was_cont = d->cont;
		uint8_t prev_seq = d->seq;
		int had_seq = d->have_seq;
		d->cont = plen == MY_MAXPKT;
		d->seq = seq;
		d->have_seq = 1;
		int done = 0;
		if (dir == BB_DIR_C2S) {
			if (was_cont) {
				/* continuation of a long command: part of the call */
			} else if (seq == 0 && c >= 0) {
				if (s->cpending)
					DEC_COUNT(ctx, malformed);
				s->cpending = 1;
				s->ccmd = (uint8_t)c;
				s->creqlen = 0;
				d->t0 = dec_time(ctx, dir, at);
				d->len = 0;
				command_req(s, c, body);
				command_tokens(s, ctx, c, body, plen <= MY_HEAD);
			} else if (seq == 1 && plen == 32) {
				/* an SSL request (handshake response cut at the caps) */
				struct bb_rd caps = bb_rd_make(h.p, head);
				if (bb_rd_le32(&caps) & 0x0800)
					s->opaque = 1;
			}
		} else if (!was_cont) {
			int wrapped = had_seq && prev_seq == 0 && seq == 1;
			if (seq == 1 && !wrapped && s->rstate != R_IDLE) {
				/* a new reply while the last is open: its shape was
				 * not understood; it ends where this one starts */
				reply_end(s, ctx, dec_time(ctx, dir, at));
			}
			const struct dec_ordq_ent *e;
			if (seq == 1 && s->rstate == R_IDLE &&
			    (!wrapped || dec_ordq_front(&s->q, &e) != DEC_ORDQ_EMPTY))
				reply_start(s, ctx, dec_time(ctx, dir, at));
			if (s->rstate != R_IDLE && c >= 0)
				done = reply_packet(s, bb_rd_make(h.p, head), plen);
			else if (s->rstate != R_IDLE)
				done = 1;
		}
		bb_rd_skip(&r, 4);
		d->len += 4;
		d->left = plen;
		d->in_pkt = 1;
		if (dir == BB_DIR_S2C)
			s->rdone = (uint8_t)done; /* the reply ends with this packet's last byte */
		if (plen == 0) {
			d->in_pkt = 0;
			packet_done(s, ctx, dir, pos + off + 3);
		}
	}
	return (size_t)(r.p - p);
}

static void my_gap(void *st, const struct bb_dec_ctx *ctx, int dir, uint64_t lost)
{
	struct my_state *s = st;
	if (dir < 0 || dir > 1 || s->opaque)
		return;
	struct my_dir *d = &s->d[dir];
	DEC_COUNT(ctx, resync);
	if (lost && d->in_pkt && lost < d->left) {
		d->left -= (uint32_t)lost;
		d->len += lost;
		return;
	}
	d->in_pkt = 0;
	d->cont = 0;
	d->hunting = 1;
	if (dir == BB_DIR_C2S) {
		s->cpending = 0;
		dec_ordq_clear(&s->q);
	} else if (s->rstate != R_IDLE) {
		/* the reply happened; it ends before the hole */
		reply_end(s, ctx, d->t0);
	}
	s->resynced = 1;
}

static void my_end(void *st, const struct bb_dec_ctx *ctx)
{
	struct my_state *s = st;
	if (s->rstate != R_IDLE)
		reply_end(s, ctx, s->d[BB_DIR_S2C].t0);
}

static void my_free(void *st)
{
	struct my_state *s = st;
	dec_ordq_free(&s->q);
}

/* The server greeting: seq 0, protocol 10, a NUL-terminated version. */
static int my_probe(const uint8_t *p, size_t n, unsigned transport, int dir)
{
	struct bb_rd r = bb_rd_make(p, n);
	if (transport != BB_TR_TCP || dir != BB_DIR_S2C)
		return 0;
	uint32_t len = bb_rd_le16(&r);
	len |= (uint32_t)bb_rd_u8(&r) << 16;
	uint8_t seq = bb_rd_u8(&r);
	uint8_t proto = bb_rd_u8(&r);
	if (!bb_rd_ok(&r) || seq != 0 || proto != 10 || len < 40 || len > 1024)
		return 0;
	long z = bb_rd_find(&r, "", 1);
	return z > 0 && z < 64;
}

const struct bb_decoder bb_dec_mysql = {
	.name = "mysql",
	.summary = "MySQL/MariaDB protocol: commands, result sets, prepared statements; id = connection + command",
	.transports = BB_TR_TCP,
	.ports = {3306, 0},
	.probe = my_probe,
	.state_size = sizeof(struct my_state),
	.decode = my_decode,
	.gap = my_gap,
	.end = my_end,
	.free = my_free,
};

/* dec_sunrpc.c - ONC-RPC (Sun RPC) calls and replies over UDP and TCP */
/* SPDX-License-Identifier: MIT */
/*
 * RFC 5531 section 9 (message) and 11 (record marking on TCP).
 *
 *   TCP record marking: [last:1 length:31] fragment bytes ... until last = 1
 *   message:  xid:32 mtype:32 (0 CALL, 1 REPLY)
 *   CALL:     rpcvers:32 (= 2) prog:32 vers:32 proc:32 cred verf args...
 *   REPLY:    reply_stat:32 (0 accepted, 1 denied) ...
 *
 * id = xid (hex); req = program, version and procedure, named for portmap /
 * rpcbind (100000), NFS v2/v3/v4 (100003; a v4 COMPOUND with its main
 * operation, RFC 7530 section 16) and MOUNT (100005). Only the first 512 bytes
 * of a record are parsed; the rest of its fragments are skipped as they
 * arrive, so a large WRITE is never buffered whole.
 */
#include <stddef.h>

#include "decoders/dec_int.h"

#define RPC_MAX_FRAG (64u << 20)

struct rpc_dir {
	uint32_t frag_left;     /* bytes left in the current fragment */
	uint8_t in_frag;        /* inside a fragment (frag_left may be 0 at its end) */
	uint8_t last;           /* current fragment is the record's last */
	uint8_t in_rec;         /* a record has started */
	uint8_t hunting;        /* after a gap or garbage: look for a record mark */
	uint8_t have;           /* header parsed: op and ids below are valid */
	uint8_t op;
	uint32_t xid, prog, vers, proc;
	uint32_t nfs4op;        /* NFSv4 COMPOUND: its main operation, else 0 */
	int64_t t0;
	uint64_t len;
};

struct rpc_state {
	struct rpc_dir d[2];
	struct dec_match m;
};

static const char *const pmap2[] = {"NULL", "SET", "UNSET", "GETPORT", "DUMP", "CALLIT"};
static const char *const rpcb3[] = {"NULL", "SET", "UNSET", "GETADDR", "DUMP", "CALLIT",
	"GETTIME", "UADDR2TADDR", "TADDR2UADDR", "GETVERSADDR", "INDIRECT", "GETADDRLIST",
	"GETSTAT"};
static const char *const nfs2[] = {"NULL", "GETATTR", "SETATTR", "ROOT", "LOOKUP", "READLINK",
	"READ", "WRITECACHE", "WRITE", "CREATE", "REMOVE", "RENAME", "LINK", "SYMLINK", "MKDIR",
	"RMDIR", "READDIR", "STATFS"};
static const char *const nfs3[] = {"NULL", "GETATTR", "SETATTR", "LOOKUP", "ACCESS", "READLINK",
	"READ", "WRITE", "CREATE", "MKDIR", "SYMLINK", "MKNOD", "REMOVE", "RMDIR", "RENAME", "LINK",
	"READDIR", "READDIRPLUS", "FSSTAT", "FSINFO", "PATHCONF", "COMMIT"};
static const char *const nfs4[] = {"NULL", "COMPOUND"};
/* NFSv4 operations (RFC 7530 and 5661 section 16/18), from opcode 3. */
static const char *const nfs4ops[] = {"ACCESS", "CLOSE", "COMMIT", "CREATE", "DELEGPURGE",
	"DELEGRETURN", "GETATTR", "GETFH", "LINK", "LOCK", "LOCKT", "LOCKU", "LOOKUP", "LOOKUPP",
	"NVERIFY", "OPEN", "OPENATTR", "OPEN_CONFIRM", "OPEN_DOWNGRADE", "PUTFH", "PUTPUBFH",
	"PUTROOTFH", "READ", "READDIR", "READLINK", "REMOVE", "RENAME", "RENEW", "RESTOREFH",
	"SAVEFH", "SECINFO", "SETATTR", "SETCLIENTID", "SETCLIENTID_CONFIRM", "VERIFY", "WRITE",
	"RELEASE_LOCKOWNER", "BACKCHANNEL_CTL", "BIND_CONN_TO_SESSION", "EXCHANGE_ID",
	"CREATE_SESSION", "DESTROY_SESSION", "FREE_STATEID", "GET_DIR_DELEGATION", "GETDEVICEINFO",
	"GETDEVICELIST", "LAYOUTCOMMIT", "LAYOUTGET", "LAYOUTRETURN", "SECINFO_NO_NAME", "SEQUENCE",
	"SET_SSV", "TEST_STATEID", "WANT_DELEGATION", "DESTROY_CLIENTID", "RECLAIM_COMPLETE"};

static const char *const mnt[] = {"NULL", "MNT", "DUMP", "UMNT", "UMNTALL", "EXPORT"};


/* Writes "PROGvVERS.PROC" names into buf (with ":OP" for an NFSv4 COMPOUND
 * whose main operation is known); returns the length. */
static int rpc_req(char *buf, size_t cap, uint32_t prog, uint32_t vers, uint32_t proc,
                   uint32_t op)
{
	const char *pn = NULL;
	const char *const *procs = NULL;
	size_t np = 0;
	switch (prog) {
	case 100000:
		pn = vers >= 3 ? "RPCBIND" : "PORTMAP";
		if (vers >= 3) {
			procs = rpcb3;
			np = sizeof rpcb3 / sizeof rpcb3[0];
		} else {
			procs = pmap2;
			np = sizeof pmap2 / sizeof pmap2[0];
		}
		break;
	case 100003:
		pn = "NFS";
		if (vers == 2) {
			procs = nfs2;
			np = sizeof nfs2 / sizeof nfs2[0];
		} else if (vers == 3) {
			procs = nfs3;
			np = sizeof nfs3 / sizeof nfs3[0];
		} else if (vers == 4) {
			procs = nfs4;
			np = sizeof nfs4 / sizeof nfs4[0];
		}
		break;
	case 100005:
		pn = "MOUNT";
		procs = mnt;
		np = sizeof mnt / sizeof mnt[0];
		break;
	default:
		break;
	}
	int n;
	size_t nops = sizeof nfs4ops / sizeof nfs4ops[0];
	if (prog == 100003 && vers == 4 && proc == 1 && op >= 3 && op - 3 < nops)
		n = snprintf(buf, cap, "NFSv4.COMPOUND:%s", nfs4ops[op - 3]);
	else if (pn && procs && proc < np)
		n = snprintf(buf, cap, "%sv%u.%s", pn, vers, procs[proc]);
	else if (pn)
		n = snprintf(buf, cap, "%sv%u.%u", pn, vers, proc);
	else
		n = snprintf(buf, cap, "%u.v%u.%u", prog, vers, proc);
	return n < (int)cap ? n : (int)cap - 1;
}

/* The main operation of an NFSv4 COMPOUND call whose reader r is at the
 * credential: the last one that is not bookkeeping (SEQUENCE, PUTFH, GETATTR
 * ...), else the last one read; 0 when none could be read (the head is cut).
 *   cred, verf: flavor:32 opaque<400>; tag: opaque<>; minorversion:32;
 *   argarray<>: argop:32 args (only the first op's args are not skipped,
 *   so only ops up to the first with arguments of unknown size are seen) */
static uint32_t compound_op(struct bb_rd r)
{
	for (int i = 0; i < 2; i++) { /* credential and verifier */
		bb_rd_skip(&r, 4);
		uint32_t len = bb_rd_be32(&r);
		bb_rd_skip(&r, (size_t)(len + 3) & ~(size_t)3);
	}
	uint32_t tag = bb_rd_be32(&r);
	bb_rd_skip(&r, (size_t)(tag + 3) & ~(size_t)3);
	bb_rd_skip(&r, 4);
	uint32_t nops = bb_rd_be32(&r);
	uint32_t main_op = 0, last = 0;
	for (uint32_t i = 0; i < nops && i < 16 && bb_rd_ok(&r); i++) {
		uint32_t op = bb_rd_be32(&r);
		if (!bb_rd_ok(&r))
			break;
		last = op;
		if (op != 53 && op != 22 && op != 24 && op != 23 && op != 9 && op != 10 &&
		    op != 32 && op != 31)
			main_op = op;
		/* Skip the arguments of the operations whose size is fixed or
		 * self-described; stop at any other. */
		if (op == 22) { /* PUTFH: nfs_fh4 */
			uint32_t fl = bb_rd_be32(&r);
			bb_rd_skip(&r, (size_t)(fl + 3) & ~(size_t)3);
		} else if (op == 53) { /* SEQUENCE: sessionid 16, 4 x uint32, bool */
			bb_rd_skip(&r, 16 + 4 * 4);
		} else if (op == 9) { /* GETATTR: bitmap4 */
			uint32_t bl = bb_rd_be32(&r);
			bb_rd_skip(&r, (size_t)bl * 4);
		} else if (op != 24 && op != 23 && op != 10 && op != 32 && op != 31) {
			break; /* arguments of unknown size: stop here */
		}
	}
	return main_op ? main_op : last;
}

/* Parses the start of a message (xid onwards) into d. 0 when plausible. */
static int parse_head(struct rpc_dir *d, struct bb_rd r)
{
	d->xid = bb_rd_be32(&r);
	uint32_t mtype = bb_rd_be32(&r);
	if (mtype == 0) {
		uint32_t rpcvers = bb_rd_be32(&r);
		d->prog = bb_rd_be32(&r);
		d->vers = bb_rd_be32(&r);
		d->proc = bb_rd_be32(&r);
		if (!bb_rd_ok(&r) || rpcvers != 2)
			return -1;
		d->op = BB_CALL;
		d->nfs4op = d->prog == 100003 && d->vers == 4 && d->proc == 1 ? compound_op(r) : 0;
	} else if (mtype == 1) {
		uint32_t stat = bb_rd_be32(&r);
		if (!bb_rd_ok(&r) || stat > 1)
			return -1;
		d->op = BB_RET;
	} else {
		return -1;
	}
	d->have = 1;
	return 0;
}

static void emit_msg(struct rpc_state *s, const struct bb_dec_ctx *ctx, int dir, struct rpc_dir *d,
                     int64_t t1)
{
	char id[16], req[96];
	int il = snprintf(id, sizeof id, "%08x", d->xid);
	int rl = 0;
	if (d->op == BB_CALL) {
		dec_match_put(&s->m, ctx, d->xid, d->prog, d->vers, (d->proc & 0xffff) | d->nfs4op << 16);
		rl = rpc_req(req, sizeof req, d->prog, d->vers, d->proc, d->nfs4op);
	} else {
		uint32_t prog, vers, proc;
		if (dec_match_take(&s->m, d->xid, &prog, &vers, &proc))
			rl = rpc_req(req, sizeof req, prog, vers, proc & 0xffff, proc >> 16);
		else
			DEC_COUNT(ctx, unmatched_ret);
	}
	dec_emit(ctx, (enum bb_op)d->op, dir, d->t0, t1, d->len, id, (size_t)il,
	         rl > 0 ? req : NULL, (size_t)rl);
	d->have = 0;
}

/* A record mark followed by a plausible message header. */
static int plausible(const uint8_t *p, size_t n)
{
	struct bb_rd r = bb_rd_make(p, n);
	uint32_t mark = bb_rd_be32(&r);
	uint32_t flen = mark & 0x7fffffffu;
	struct rpc_dir d;
	memset(&d, 0, sizeof d);
	if (!bb_rd_ok(&r) || flen < 12 || flen > RPC_MAX_FRAG)
		return 0;
	return parse_head(&d, r) == 0;
}

static size_t rpc_decode(void *st, const struct bb_dec_ctx *ctx, int dir, uint64_t pos,
                         const uint8_t *p, size_t n)
{
	struct rpc_state *s = st;
	if (dir < 0 || dir > 1)
		return n;
	struct rpc_dir *d = &s->d[dir];
	if (ctx->transport == BB_TR_UDP) {
		memset(d, 0, sizeof *d);
		if (parse_head(d, bb_rd_make(p, n)) < 0) {
			DEC_COUNT(ctx, malformed);
			return n;
		}
		d->t0 = dec_time(ctx, dir, 0);
		d->len = n;
		emit_msg(s, ctx, dir, d, d->t0);
		return n;
	}
	struct bb_rd r = bb_rd_make(p, n);
	for (;;) {
		size_t off = (size_t)(r.p - p);
		size_t left = bb_rd_left(&r);
		if (d->hunting) {
			if (left < 4 + 16)
				break;
			if (!plausible(r.p, left)) {
				bb_rd_skip(&r, 1);
				DEC_COUNT(ctx, skipped_bytes);
				continue;
			}
			d->hunting = 0;
		}
		if (!d->in_frag) {
			if (left < 4)
				break;
			struct bb_rd peek = r;
			uint32_t mark = bb_rd_be32(&peek);
			uint32_t flen = mark & 0x7fffffffu;
			if (flen > RPC_MAX_FRAG) {
				DEC_COUNT(ctx, malformed);
				d->hunting = 1;
				d->in_rec = 0;
				continue;
			}
			if (!d->in_rec) {
				/* Record start: the header must be in this fragment. */
				/* (512: enough for an NFSv4 COMPOUND's first operations) */
				size_t need = flen < 512 ? flen : 512;
				if (bb_rd_left(&peek) < need)
					break;
				struct bb_rd head = peek;
				if (parse_head(d, bb_rd_sub(&head, need)) < 0) {
					DEC_COUNT(ctx, malformed);
					d->hunting = 1;
					bb_rd_skip(&r, 1);
					continue;
				}
				d->in_rec = 1;
				d->t0 = dec_time(ctx, dir, pos + off);
				d->len = 0;
			}
			r = peek;
			d->len += 4;
			d->in_frag = 1;
			d->frag_left = flen;
			d->last = (uint8_t)(mark >> 31);
		}
		size_t take = d->frag_left < bb_rd_left(&r) ? d->frag_left : bb_rd_left(&r);
		bb_rd_skip(&r, take);
		d->frag_left -= (uint32_t)take;
		d->len += take;
		if (d->frag_left > 0)
			break; /* need more bytes */
		d->in_frag = 0;
		if (d->last) {
			size_t endoff = (size_t)(r.p - p);
			int64_t t1 = dec_time(ctx, dir, pos + (endoff ? endoff - 1 : 0));
			if (d->have)
				emit_msg(s, ctx, dir, d, t1);
			d->in_rec = 0;
		}
	}
	return (size_t)(r.p - p);
}

static void rpc_gap(void *st, const struct bb_dec_ctx *ctx, int dir, uint64_t lost)
{
	struct rpc_state *s = st;
	if (dir < 0 || dir > 1)
		return;
	struct rpc_dir *d = &s->d[dir];
	if (lost && d->in_frag && lost < d->frag_left) {
		/* The hole is inside the current fragment: skip it and go on. */
		d->frag_left -= (uint32_t)lost;
		d->len += lost;
		DEC_COUNT(ctx, resync);
		return;
	}
	/* A message whose head was seen did happen: report it, ending at the gap. */
	if (d->in_rec && d->have)
		emit_msg(s, ctx, dir, d, d->t0);
	memset(d, 0, sizeof *d);
	d->hunting = ctx->transport == BB_TR_TCP;
	DEC_COUNT(ctx, resync);
}

static void rpc_end(void *st, const struct bb_dec_ctx *ctx)
{
	(void)st;
	(void)ctx;
}

static int rpc_probe(const uint8_t *p, size_t n, unsigned transport, int dir)
{
	struct rpc_dir d;
	memset(&d, 0, sizeof d);
	(void)dir;
	struct bb_rd r = bb_rd_make(p, n);
	if (transport == BB_TR_TCP) {
		uint32_t mark = bb_rd_be32(&r);
		if (!bb_rd_ok(&r) || (mark & 0x7fffffffu) < 24 || (mark & 0x7fffffffu) > RPC_MAX_FRAG)
			return 0;
	}
	if (parse_head(&d, r) < 0 || d.op != BB_CALL)
		return 0;
	/* Known program ranges (RFC 5531's program number assignment):
	 * Sun-assigned 100000-199999, user-defined 0x20000000-0x3fffffff and
	 * transient 0x40000000-0x5fffffff. */
	return d.vers <= 16 && d.proc < 1024 &&
	       ((d.prog >= 100000 && d.prog < 200000) || (d.prog >= 0x20000000u && d.prog < 0x60000000u));
}

const struct bb_decoder bb_dec_sunrpc = {
	.name = "sunrpc",
	.summary = "ONC-RPC over UDP and TCP record marking (RFC 5531); NFS, MOUNT, portmap names",
	.transports = BB_TR_TCP | BB_TR_UDP,
	.ports = {111, 2049, 0},
	.probe = rpc_probe,
	.state_size = sizeof(struct rpc_state),
	.decode = rpc_decode,
	.gap = rpc_gap,
	.end = rpc_end,
	.free = NULL,
};

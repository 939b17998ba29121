/* dec_smb2.c - SMB2/SMB3 over TCP (direct, port 445): MessageId, compounds, async */
/* SPDX-License-Identifier: MIT */
/*
 * [MS-SMB2] 2.1 (transport: 4-byte header, 0x00 + 24-bit length), 2.2.1
 * (SMB2 header, little-endian), 2.2.13 (CREATE request), 2.2.41 (transform
 * header); [MS-SMB] 2.2.4.5.1 (SMB1 NEGOTIATE that may open a connection).
 *
 *   transport: 0x00 length:24 | message ...
 *   header:    0xFE 'S' 'M' 'B' StructureSize:16 (64) CreditCharge:16
 *              Status:32 Command:16 Credits:16 Flags:32 NextCommand:32
 *              MessageId:64 (Reserved:32 TreeId:32 | AsyncId:64)
 *              SessionId:64 Signature:128
 *   Flags:     0x1 SERVER_TO_REDIR (response), 0x2 ASYNC_COMMAND, 0x4 RELATED
 *
 * id = "c<connection>.<MessageId>". Every header of a compound chain
 * (NextCommand) is its own CALL or RET. An async command gets an interim
 * response (Status STATUS_PENDING, 0x103, with an AsyncId) and later its final
 * one: both are RETs with the request's id (as 1xx in HTTP, and as tshark
 * counts them, ORACLE.md); the interim one keeps the call pending. CANCEL
 * reuses the MessageId of what it cancels and gets no reply: its id is
 * "c<connection>.<MessageId>.cancel". An SMB1 NEGOTIATE (0xFF 'SMB' 0x72)
 * opening the connection is a CALL "SMB1.NEGOTIATE" with id ".0": the SMB2
 * NEGOTIATE response with MessageId 0 answers it. Transform (0xFD 'SMB',
 * encrypted SMB3) and compressed (0xFC 'SMB') messages are counted as
 * opaque and skipped. req = the command name, for CREATE with its file name.
 * Credits are ignored. Only the first 320 bytes of each header's command are
 * read; READ and WRITE data stream past.
 */
#include <stddef.h>

#include "decoders/dec_int.h"

#define SMB_HEAD 320u
#define SMB_REQ_MAX 96
#define SMB_NONE 0xffffffffu
#define SMB_PENDING 0x00000103u

struct smb_dir {
	uint8_t hunting;
	uint8_t in_nb;          /* inside a transport message */
	uint8_t have;           /* a header parsed, emitted when its part ends */
	uint8_t op;
	uint8_t cancel;
	uint8_t interim;
	uint16_t cmd;
	uint32_t nb_left;       /* bytes left in the transport message */
	uint32_t nb_pos;        /* bytes of it consumed */
	uint32_t next_hdr;      /* offset of the next SMB2 header in it, or SMB_NONE */
	uint32_t start;         /* offset of the pending header */
	uint64_t msgid;
	int64_t t0;
	uint8_t reqlen;
	char req[SMB_REQ_MAX];
};

struct smb_state {
	struct smb_dir d[2];
	struct dec_match m;
};

static const char *const cmds[] = {"NEGOTIATE", "SESSION_SETUP", "LOGOFF", "TREE_CONNECT",
	"TREE_DISCONNECT", "CREATE", "CLOSE", "FLUSH", "READ", "WRITE", "LOCK", "IOCTL", "CANCEL",
	"ECHO", "QUERY_DIRECTORY", "CHANGE_NOTIFY", "QUERY_INFO", "SET_INFO", "OPLOCK_BREAK",
	"SERVER_TO_CLIENT_NOTIFICATION"};
#define NCMD (sizeof cmds / sizeof cmds[0])

static size_t cmd_name(char *buf, size_t cap, unsigned cmd)
{
	int n = cmd < NCMD ? snprintf(buf, cap, "%s", cmds[cmd]) : snprintf(buf, cap, "CMD%u", cmd);
	return n < (int)cap ? (size_t)n : cap - 1;
}

/* The file name of a CREATE request whose header starts h (UTF-16LE,
 * non-ASCII as '?'), appended to d->req. */
static void create_name(struct smb_dir *d, size_t n, struct bb_rd h)
{
	struct bb_rd b = h;
	bb_rd_skip(&b, 64 + 44);
	uint16_t noff = bb_rd_le16(&b);
	uint16_t nlen = bb_rd_le16(&b);
	if (!bb_rd_ok(&b) || nlen == 0 || noff < 64)
		return;
	struct bb_rd nm = h;
	bb_rd_skip(&nm, noff);
	if (!bb_rd_ok(&nm))
		return;
	if (n + 1 < sizeof d->req)
		d->req[n++] = ' ';
	for (unsigned i = 0; i + 1 < nlen && n + 1 < sizeof d->req; i += 2) {
		uint16_t c = bb_rd_le16(&nm);
		if (!bb_rd_ok(&nm))
			break;
		d->req[n++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	d->reqlen = (uint8_t)n;
}

/* Parses the SMB2 header at h (the bytes of its part of the message, at most
 * SMB_HEAD) into d. 0, or -1 when it is not one. *next: NextCommand. */
static int parse_hdr(struct smb_dir *d, struct bb_rd h, uint32_t *next)
{
	struct bb_rd r = h;
	uint32_t proto = bb_rd_le32(&r);
	uint16_t size = bb_rd_le16(&r);
	bb_rd_skip(&r, 2);
	uint32_t status = bb_rd_le32(&r);
	uint16_t cmd = bb_rd_le16(&r);
	bb_rd_skip(&r, 2);
	uint32_t flags = bb_rd_le32(&r);
	*next = bb_rd_le32(&r);
	uint64_t mid = bb_rd_le32(&r);
	mid |= (uint64_t)bb_rd_le32(&r) << 32;
	if (!bb_rd_ok(&r) || proto != 0x424d53feu || size != 64)
		return -1;
	d->cmd = cmd;
	d->msgid = mid;
	d->op = flags & 1 ? BB_RET : BB_CALL;
	d->interim = (flags & 1) && status == SMB_PENDING;
	d->cancel = !(flags & 1) && cmd == 12;
	size_t n = cmd_name(d->req, sizeof d->req, cmd);
	d->reqlen = (uint8_t)n;
	if (cmd == 5 && d->op == BB_CALL)
		create_name(d, n, h);
	d->have = 1;
	return 0;
}

static void emit_msg(struct smb_state *s, const struct bb_dec_ctx *ctx, int dir, struct smb_dir *d,
                     int64_t t1, uint64_t len)
{
	d->have = 0;
	char id[48];
	int il = snprintf(id, sizeof id, "c%llu.%llu%s", (unsigned long long)ctx->conn,
	                  (unsigned long long)d->msgid, d->cancel ? ".cancel" : "");
	if (d->op == BB_CALL) {
		if (!d->cancel)
			dec_match_put(&s->m, ctx, d->msgid, d->cmd, 0, 0);
		dec_emit(ctx, BB_CALL, dir, d->t0, t1, len, id, (size_t)il, d->req, d->reqlen);
		return;
	}
	uint32_t cmd, b, c;
	char req[SMB_REQ_MAX];
	size_t rl = 0;
	if (dec_match_take(&s->m, d->msgid, &cmd, &b, &c)) {
		if (b == 1)
			rl = (size_t)snprintf(req, sizeof req, "SMB1.NEGOTIATE");
		else
			rl = cmd_name(req, sizeof req, cmd);
		if (d->interim) /* the final response is still to come */
			dec_match_put(&s->m, ctx, d->msgid, cmd, b, c);
	} else {
		DEC_COUNT(ctx, unmatched_ret);
	}
	dec_emit(ctx, BB_RET, dir, d->t0, t1, len, id, (size_t)il, rl ? req : NULL, rl);
}

/* What a transport message holds, from its first 8 bytes: */
enum { NB_SMB2 = 1, NB_OPAQUE, NB_SMB1, NB_SMB1_NEG, NB_OTHER };

/* The transport header at p: its total length and *kind; 0 when more bytes
 * are needed, -1 when it is not plausible. */
static long nb_frame(const uint8_t *p, size_t n, int *kind)
{
	if (n < 4)
		return 0;
	struct bb_rd r = bb_rd_make(p, n);
	uint8_t type = bb_rd_u8(&r);
	uint32_t len = (uint32_t)bb_rd_u8(&r) << 16;
	len |= bb_rd_be16(&r);
	if (type == 0x85 && len == 0) { /* keepalive */
		*kind = NB_OTHER;
		return 4;
	}
	if (type >= 0x81 && type <= 0x84 && len <= 256) { /* NetBIOS session setup */
		*kind = NB_OTHER;
		return 4 + (long)len;
	}
	if (type != 0x00 || len < 4)
		return -1;
	if (n < 9)
		return 0;
	uint32_t proto = bb_rd_le32(&r);
	uint8_t c1 = bb_rd_u8(&r);
	if (proto == 0x424d53feu && len >= 64)
		*kind = NB_SMB2;
	else if (proto == 0x424d53fdu || proto == 0x424d53fcu)
		*kind = NB_OPAQUE;
	else if (proto == 0x424d53ffu)
		*kind = c1 == 0x72 ? NB_SMB1_NEG : NB_SMB1;
	else
		return -1;
	return 4 + (long)len;
}

static size_t smb_decode(void *st, const struct bb_dec_ctx *ctx, int dir, uint64_t pos,
                         const uint8_t *p, size_t n)
{
	struct smb_state *s = st;
	if (dir < 0 || dir > 1)
		return n;
	struct smb_dir *d = &s->d[dir];
	struct bb_rd r = bb_rd_make(p, n);
	for (;;) {
		size_t off = (size_t)(r.p - p);
		size_t left = bb_rd_left(&r);
		if (d->in_nb) {
			if (d->next_hdr == d->nb_pos) {
				size_t need = d->nb_left < SMB_HEAD ? d->nb_left : SMB_HEAD;
				if (left < need)
					break;
				if (d->have)
					emit_msg(s, ctx, dir, d, dec_time(ctx, dir, pos + off - 1),
					         d->nb_pos - d->start);
				uint32_t next = 0;
				struct bb_rd h = bb_rd_make(r.p, need);
				d->next_hdr = SMB_NONE;
				if (parse_hdr(d, h, &next) < 0) {
					DEC_COUNT(ctx, malformed);
				} else {
					d->start = d->nb_pos;
					d->t0 = dec_time(ctx, dir, pos + off);
					if (next) {
						if (next >= 64 && (next & 7) == 0 && next < d->nb_left)
							d->next_hdr = d->nb_pos + next;
						else
							DEC_COUNT(ctx, malformed);
					}
				}
			}
			size_t lim = d->next_hdr != SMB_NONE ? d->next_hdr - d->nb_pos : d->nb_left;
			size_t take = lim < left ? lim : left;
			bb_rd_skip(&r, take);
			d->nb_pos += (uint32_t)take;
			d->nb_left -= (uint32_t)take;
			if (d->nb_left == 0) {
				d->in_nb = 0;
				if (d->have)
					emit_msg(s, ctx, dir, d,
					         dec_time(ctx, dir, pos + off + (take ? take - 1 : 0)),
					         d->nb_pos - d->start);
				continue;
			}
			if (take < lim || take == 0)
				break;
			continue;
		}
		if (left == 0)
			break;
		int kind = 0;
		long t = nb_frame(r.p, left, &kind);
		if (t == 0)
			break;
		/* hunting: only a message that names its protocol, or the
		 * NetBIOS session setup at the very start */
		if (t > 0 && d->hunting && kind != NB_SMB2 && kind != NB_OPAQUE &&
		    kind != NB_SMB1_NEG && !(kind == NB_OTHER && pos + off == 0))
			t = -1;
		if (t < 0) {
			if (!d->hunting) {
				DEC_COUNT(ctx, malformed);
				d->hunting = 1;
			}
			bb_rd_skip(&r, 1);
			DEC_COUNT(ctx, skipped_bytes);
			continue;
		}
		d->hunting = 0;
		d->have = 0;
		d->in_nb = 1;
		d->nb_left = (uint32_t)t;
		d->nb_pos = 0;
		d->next_hdr = SMB_NONE;
		if (kind == NB_SMB2) {
			d->next_hdr = 4;
		} else if (kind == NB_OPAQUE) {
			DEC_COUNT(ctx, opaque);
		} else if (kind == NB_SMB1_NEG && dir == BB_DIR_C2S) {
			/* The request is answered by an SMB2 NEGOTIATE response, MessageId 0. */
			char id[40];
			int il = snprintf(id, sizeof id, "c%llu.0", (unsigned long long)ctx->conn);
			int64_t t0 = dec_time(ctx, dir, pos + off);
			dec_match_put(&s->m, ctx, 0, 0, 1, 0);
			dec_emit(ctx, BB_CALL, dir, t0, t0, (uint64_t)t, id, (size_t)il,
			         "SMB1.NEGOTIATE", 14);
		}
	}
	return (size_t)(r.p - p);
}

static void smb_gap(void *st, const struct bb_dec_ctx *ctx, int dir, uint64_t lost)
{
	struct smb_state *s = st;
	if (dir < 0 || dir > 1)
		return;
	struct smb_dir *d = &s->d[dir];
	DEC_COUNT(ctx, resync);
	uint32_t lim = d->next_hdr != SMB_NONE ? d->next_hdr - d->nb_pos : d->nb_left;
	if (lost && d->in_nb && lost < lim) {
		/* The hole is inside the current part of the message: skip it. */
		d->nb_left -= (uint32_t)lost;
		d->nb_pos += (uint32_t)lost;
		return;
	}
	if (d->in_nb && d->have)
		emit_msg(s, ctx, dir, d, d->t0, d->nb_pos - d->start);
	memset(d, 0, sizeof *d);
	d->hunting = 1;
}

static int smb_probe(const uint8_t *p, size_t n, unsigned transport, int dir)
{
	(void)dir;
	int kind = 0;
	if (transport != BB_TR_TCP || nb_frame(p, n, &kind) <= 0)
		return 0;
	return kind == NB_SMB2 || kind == NB_SMB1_NEG;
}

const struct bb_decoder bb_dec_smb2 = {
	.name = "smb2",
	.summary = "SMB2/SMB3 over TCP ([MS-SMB2]); MessageId, compounds, async, CREATE names",
	.transports = BB_TR_TCP,
	.ports = {445, 139, 0},
	.probe = smb_probe,
	.state_size = sizeof(struct smb_state),
	.decode = smb_decode,
	.gap = smb_gap,
	.end = NULL,
	.free = NULL,
};

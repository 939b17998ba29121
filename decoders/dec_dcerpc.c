/* dec_dcerpc.c - DCE-RPC / MS-RPC over TCP (ncacn_ip_tcp) and UDP (ncadg_ip_udp) */
/* SPDX-License-Identifier: MIT */
/*
 * C706 (DCE 1.1: Remote Procedure Call) chapter 12.6 (connection-oriented
 * PDUs); [MS-RPCE] 2.2.2.
 *
 *   common header (16 bytes):
 *     rpc_vers:8 (5) rpc_vers_minor:8 (0|1) PTYPE:8 pfc_flags:8
 *     packed_drep:32 (byte 0 high nibble: 1 little-endian, 0 big-endian)
 *     frag_length:16 auth_length:16 call_id:32   (in drep byte order)
 *   request (0):   alloc_hint:32 p_cont_id:16 opnum:16 [object:128 if PFC_OBJECT_UUID]
 *   bind (11), alter_context (14):
 *                  max_xmit:16 max_recv:16 assoc_group:32 n_context:8 pad:24
 *                  { p_cont_id:16 n_transfer:8 pad:8 abstract_syntax:uuid+ver ... }
 *   pfc_flags:     0x01 FIRST_FRAG, 0x02 LAST_FRAG, 0x80 OBJECT_UUID
 *
 * id = "c<connection>.<call_id>". CALLs: request, bind, alter_context;
 * RETs: response, fault, bind_ack, bind_nak, alter_context_resp (ORACLE.md).
 * A fragmented PDU is one message from the first byte of its first fragment
 * to the last byte of its last (the fragment bodies stream past, never
 * buffered). Other PDUs (auth3, shutdown, co_cancel, orphaned) make no record.
 * req = "<interface>.op<opnum>" for a request, the interface named when its
 * presentation context was bound on this connection with a well-known UUID
 * ("op<opnum>" alone otherwise); "bind <interface>" / "alter_context ...".
 *
 * Over UDP (C706 12.5, connectionless): an 80-byte header with the interface
 * UUID, the activity's seqnum (the id) and the opnum in every PDU; request
 * is a CALL, response and fault RETs, one record per message (fragment 0);
 * ping, working, ack and the other control PDUs make no record.
 */
#include <stddef.h>

#include "decoders/dec_int.h"

#define RPC_CTX_N 16
#define RPC_REQ_MAX 64

enum { PT_REQUEST = 0, PT_RESPONSE = 2, PT_FAULT = 3, PT_BIND = 11, PT_BIND_ACK = 12,
       PT_BIND_NAK = 13, PT_ALTER = 14, PT_ALTER_RESP = 15 };

struct dce_dir {
	uint8_t hunting;
	uint8_t in_frag;        /* inside a fragment: left bytes to go */
	uint8_t have;           /* a message in progress (its first fragment seen) */
	uint8_t ptype;
	uint32_t left;
	uint32_t call_id;
	uint16_t opnum;
	uint16_t iface;         /* index in ifaces + 1, 0 unknown */
	uint8_t last;           /* the current fragment is the message's last */
	int64_t t0;
	uint64_t len;
};

struct dce_state {
	struct dce_dir d[2];
	struct dec_match m;
	struct {
		uint16_t ctx_id;
		uint16_t iface;     /* index + 1 */
	} ctx[RPC_CTX_N];
	uint32_t nctx;
	/* the bind in progress: its first context id */
	uint16_t bind_ctx;
};

/* Well-known interfaces ([MS-RPCE] and the protocol documents that define them). */
static const struct {
	uint32_t a;
	uint16_t b, c;
	uint8_t d[8];
	const char *name;
} ifaces[] = {
	{0xe1af8308, 0x5d1f, 0x11c9, {0x91, 0xa4, 0x08, 0x00, 0x2b, 0x14, 0xa0, 0xfa}, "epm"},
	{0x4b324fc8, 0x1670, 0x01d3, {0x12, 0x78, 0x5a, 0x47, 0xbf, 0x6e, 0xe1, 0x88}, "srvsvc"},
	{0x12345778, 0x1234, 0xabcd, {0xef, 0x00, 0x01, 0x23, 0x45, 0x67, 0x89, 0xac}, "samr"},
	{0x12345778, 0x1234, 0xabcd, {0xef, 0x00, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab}, "lsarpc"},
	{0x12345678, 0x1234, 0xabcd, {0xef, 0x00, 0x01, 0x23, 0x45, 0x67, 0xcf, 0xfb}, "netlogon"},
	{0x12345678, 0x1234, 0xabcd, {0xef, 0x00, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab}, "spoolss"},
	{0x338cd001, 0x2244, 0x31f1, {0xaa, 0xaa, 0x90, 0x00, 0x38, 0x00, 0x10, 0x03}, "winreg"},
	{0x367abb81, 0x9844, 0x35f1, {0xad, 0x32, 0x98, 0xf0, 0x38, 0x00, 0x10, 0x03}, "svcctl"},
	{0x6bffd098, 0xa112, 0x3610, {0x98, 0x33, 0x46, 0xc3, 0xf8, 0x7e, 0x34, 0x5a}, "wkssvc"},
	{0xe3514235, 0x4b06, 0x11d1, {0xab, 0x04, 0x00, 0xc0, 0x4f, 0xc2, 0xdc, 0xd2}, "drsuapi"},
	{0x3919286a, 0xb10c, 0x11d0, {0x9b, 0xa8, 0x00, 0xc0, 0x4f, 0xd9, 0x2e, 0xf5}, "dssetup"},
	{0x1ff70682, 0x0a51, 0x30e8, {0x07, 0x6d, 0x74, 0x0b, 0xe8, 0xce, 0xe9, 0x8b}, "atsvc"},
	{0x86d35949, 0x83c9, 0x4044, {0xb4, 0x24, 0xdb, 0x36, 0x32, 0x31, 0xfd, 0x0c}, "taskschd"},
	{0xa4f1db00, 0xca47, 0x1067, {0xb3, 0x1f, 0x00, 0xdd, 0x01, 0x06, 0x62, 0xda}, "emsmdb"},
	{0x5261574a, 0x4572, 0x206e, {0xb2, 0x68, 0x6b, 0x19, 0x92, 0x13, 0xb4, 0xe4}, "asyncemsmdb"},
	{0xf5cc5a18, 0x4264, 0x101a, {0x8c, 0x59, 0x08, 0x00, 0x2b, 0x2f, 0x84, 0x26}, "nspi"},
	{0x1544f5e0, 0x613c, 0x11d1, {0x93, 0xdf, 0x00, 0xc0, 0x4f, 0xd7, 0xbd, 0x09}, "rfr"},
	{0x000001a0, 0x0000, 0x0000, {0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x46}, "ISystemActivator"},
	{0x4d9f4ab8, 0x7d1c, 0x11cf, {0x86, 0x1e, 0x00, 0x20, 0xaf, 0x6e, 0x7c, 0x57}, "IRemoteActivation"},
	{0x99fcfec4, 0x5260, 0x101b, {0xbb, 0xcb, 0x00, 0xaa, 0x00, 0x21, 0x34, 0x7a}, "IOXIDResolver"},
	{0xafa8bd80, 0x7d8a, 0x11c9, {0xbe, 0xf4, 0x08, 0x00, 0x2b, 0x10, 0x29, 0x89}, "mgmt"},
	{0x12b81e99, 0xf207, 0x4a4c, {0x85, 0xd3, 0x77, 0xb4, 0x2f, 0x76, 0xfd, 0x14}, "ISeclogon"},
	{0x3d267954, 0xeeb7, 0x11d1, {0xb9, 0x4e, 0x00, 0xc0, 0x4f, 0xa3, 0x08, 0x0d}, "tsrv"},
};
#define NIFACE (sizeof ifaces / sizeof ifaces[0])

static uint16_t rd16(struct bb_rd *r, int le)
{
	return le ? bb_rd_le16(r) : bb_rd_be16(r);
}

static uint32_t rd32(struct bb_rd *r, int le)
{
	return le ? bb_rd_le32(r) : bb_rd_be32(r);
}

/* The interface (index + 1, 0 unknown) of the UUID at r, in drep order. */
static uint16_t iface_at(struct bb_rd *r, int le)
{
	uint32_t a = rd32(r, le);
	uint16_t b = rd16(r, le);
	uint16_t c = rd16(r, le);
	const uint8_t *d = bb_rd_bytes(r, 8);
	if (!d)
		return 0;
	for (size_t i = 0; i < NIFACE; i++)
		if (ifaces[i].a == a && ifaces[i].b == b && ifaces[i].c == c &&
		    memcmp(ifaces[i].d, d, 8) == 0)
			return (uint16_t)(i + 1);
	return 0;
}

static int is_call(unsigned t)
{
	return t == PT_REQUEST || t == PT_BIND || t == PT_ALTER;
}

static int is_ret(unsigned t)
{
	return t == PT_RESPONSE || t == PT_FAULT || t == PT_BIND_ACK || t == PT_BIND_NAK ||
	       t == PT_ALTER_RESP;
}

/* The common header at p: fills the out fields, returns frag_length, 0 when
 * fewer than 16 bytes, -1 when it is not a plausible CO PDU header. */
static long pdu_hdr(const uint8_t *p, size_t n, unsigned *ptype, unsigned *flags, int *le,
                    uint32_t *call_id)
{
	if (n < 16)
		return 0;
	struct bb_rd r = bb_rd_make(p, 16);
	uint8_t v = bb_rd_u8(&r), vm = bb_rd_u8(&r);
	*ptype = bb_rd_u8(&r);
	*flags = bb_rd_u8(&r);
	uint8_t d0 = bb_rd_u8(&r), d1 = bb_rd_u8(&r);
	bb_rd_skip(&r, 2);
	*le = (d0 & 0xf0) == 0x10;
	uint16_t flen = rd16(&r, *le);
	uint16_t alen = rd16(&r, *le);
	*call_id = rd32(&r, *le);
	if (v != 5 || vm > 1 || *ptype > 19 || (d0 & 0xe0) != 0 || (d0 & 0x0f) > 1 || d1 > 3 ||
	    flen < 16 || alen > flen - 16)
		return -1;
	return flen;
}

static size_t req_name(char *buf, size_t cap, unsigned ptype, unsigned opnum, unsigned iface)
{
	const char *in = iface && iface <= NIFACE ? ifaces[iface - 1].name : NULL;
	int n;
	if (ptype == PT_REQUEST)
		n = in ? snprintf(buf, cap, "%s.op%u", in, opnum) : snprintf(buf, cap, "op%u", opnum);
	else
		n = snprintf(buf, cap, "%s%s%s", ptype == PT_BIND ? "bind" : "alter_context",
		             in ? " " : "", in ? in : "");
	return n < (int)cap ? (size_t)n : cap - 1;
}

static uint16_t ctx_iface(const struct dce_state *s, uint16_t ctx_id)
{
	for (uint32_t i = 0; i < s->nctx && i < RPC_CTX_N; i++)
		if (s->ctx[i].ctx_id == ctx_id)
			return s->ctx[i].iface;
	return 0;
}

static void ctx_set(struct dce_state *s, uint16_t ctx_id, uint16_t iface)
{
	for (uint32_t i = 0; i < s->nctx && i < RPC_CTX_N; i++)
		if (s->ctx[i].ctx_id == ctx_id) {
			s->ctx[i].iface = iface;
			return;
		}
	uint32_t i = s->nctx < RPC_CTX_N ? s->nctx++ : ctx_id % RPC_CTX_N;
	s->ctx[i].ctx_id = ctx_id;
	s->ctx[i].iface = iface;
}

/* act: the activity UUID of a connectionless PDU (the id names it instead
 * of the connection: a reply may come on another flow), or NULL. */
static void emit_msg(struct dce_state *s, const struct bb_dec_ctx *ctx, int dir, struct dce_dir *d,
                     int64_t t1, const uint64_t *act)
{
	d->have = 0;
	char id[64], req[RPC_REQ_MAX];
	size_t rl = 0;
	int il;
	if (act) {
		il = snprintf(id, sizeof id, "a%016llx%016llx.%u", (unsigned long long)act[0],
		              (unsigned long long)act[1], d->call_id);
	} else {
		il = snprintf(id, sizeof id, "c%llu.%u", (unsigned long long)ctx->conn, d->call_id);
	}
	if (is_call(d->ptype)) {
		dec_match_put(&s->m, ctx, d->call_id, d->ptype, d->opnum, d->iface);
		rl = req_name(req, sizeof req, d->ptype, d->opnum, d->iface);
		dec_emit(ctx, BB_CALL, dir, d->t0, t1, d->len, id, (size_t)il, req, rl);
		return;
	}
	uint32_t pt, op, in;
	if (dec_match_take(&s->m, d->call_id, &pt, &op, &in)) {
		rl = req_name(req, sizeof req, pt, op, in);
		if ((pt == PT_BIND || pt == PT_ALTER) &&
		    (d->ptype == PT_BIND_ACK || d->ptype == PT_ALTER_RESP))
			ctx_set(s, s->bind_ctx, (uint16_t)in);
	} else {
		DEC_COUNT(ctx, unmatched_ret);
	}
	dec_emit(ctx, BB_RET, dir, d->t0, t1, d->len, id, (size_t)il, rl ? req : NULL, rl);
}

/* Starts a fragment at p (its 16-byte header and the head of its body
 * are there). */
static void frag_start(struct dce_state *s, const struct bb_dec_ctx *ctx, int dir,
                       struct dce_dir *d, const uint8_t *p, size_t n, unsigned ptype,
                       unsigned flags, int le, uint32_t call_id, int64_t t)
{
	if (!(flags & 0x01)) { /* a later fragment of the message in progress */
		if (!d->have || d->call_id != call_id)
			d->have = 0; /* its first fragment was lost: nothing to report */
		return;
	}
	if (d->have) /* the last fragment of the previous one never came */
		emit_msg(s, ctx, dir, d, d->t0, NULL);
	if (!is_call(ptype) && !is_ret(ptype))
		return;
	d->have = 1;
	d->ptype = (uint8_t)ptype;
	d->call_id = call_id;
	d->opnum = 0;
	d->iface = 0;
	d->t0 = t;
	d->len = 0;
	struct bb_rd r = bb_rd_make(p, n);
	bb_rd_skip(&r, 16);
	if (ptype == PT_REQUEST) {
		bb_rd_skip(&r, 4);
		uint16_t cid = rd16(&r, le);
		d->opnum = rd16(&r, le);
		d->iface = bb_rd_ok(&r) ? ctx_iface(s, cid) : 0;
	} else if (ptype == PT_BIND || ptype == PT_ALTER) {
		bb_rd_skip(&r, 8);
		uint8_t nctx = bb_rd_u8(&r);
		bb_rd_skip(&r, 3);
		uint16_t cid = rd16(&r, le);
		bb_rd_skip(&r, 2);
		uint16_t in = iface_at(&r, le);
		if (nctx && bb_rd_ok(&r)) {
			d->iface = in;
			s->bind_ctx = cid;
		}
	}
}

/* A connectionless PDU header (C706 12.5.1, 80 bytes): 0, or -1 when it is
 * not one. Fills the pointed fields; *first: fragment number 0. */
static int cl_hdr(const uint8_t *p, size_t n, unsigned *ptype, uint32_t *seq, uint16_t *opnum,
                  uint16_t *iface, int *first, uint64_t act[2])
{
	struct bb_rd r = bb_rd_make(p, n);
	uint8_t v = bb_rd_u8(&r);
	*ptype = bb_rd_u8(&r);
	bb_rd_skip(&r, 2);
	uint8_t d0 = bb_rd_u8(&r), d1 = bb_rd_u8(&r);
	bb_rd_skip(&r, 2 + 16);
	int le = (d0 & 0xf0) == 0x10;
	*iface = iface_at(&r, le);
	/* the activity UUID in canonical order (its first fields follow drep) */
	act[0] = (uint64_t)rd32(&r, le) << 32;
	act[0] |= (uint64_t)rd16(&r, le) << 16;
	act[0] |= rd16(&r, le);
	act[1] = bb_rd_be64(&r);
	bb_rd_skip(&r, 4 + 4);
	*seq = rd32(&r, le);
	*opnum = rd16(&r, le);
	bb_rd_skip(&r, 4);
	uint16_t blen = rd16(&r, le);
	uint16_t frag = rd16(&r, le);
	bb_rd_skip(&r, 2);
	if (!bb_rd_ok(&r) || v != 4 || *ptype > 10 || (d0 & 0xe0) != 0 || (d0 & 0x0f) > 1 ||
	    d1 > 3 || blen > bb_rd_left(&r))
		return -1;
	*first = frag == 0;
	return 0;
}

/* One datagram: a connectionless request (CALL), response or fault (RET);
 * the activity's sequence number is the id. Later fragments of a message
 * make no record. */
static void dce_udp(struct dce_state *s, const struct bb_dec_ctx *ctx, int dir,
                    const uint8_t *p, size_t n)
{
	unsigned ptype;
	uint32_t seq;
	uint16_t opnum, iface;
	int first;
	uint64_t act[2];
	if (cl_hdr(p, n, &ptype, &seq, &opnum, &iface, &first, act) < 0) {
		DEC_COUNT(ctx, malformed);
		return;
	}
	if (!first || (ptype != PT_REQUEST && ptype != PT_RESPONSE && ptype != PT_FAULT))
		return;
	struct dce_dir *d = &s->d[dir];
	memset(d, 0, sizeof *d);
	d->have = 1;
	d->ptype = (uint8_t)ptype;
	d->call_id = seq;
	d->opnum = opnum;
	d->iface = iface;
	d->t0 = dec_time(ctx, dir, 0);
	d->len = n;
	emit_msg(s, ctx, dir, d, d->t0, act);
}

static size_t dce_decode(void *st, const struct bb_dec_ctx *ctx, int dir, uint64_t pos,
                         const uint8_t *p, size_t n)
{
	struct dce_state *s = st;
	if (dir < 0 || dir > 1)
		return n;
	if (ctx->transport == BB_TR_UDP) {
		dce_udp(s, ctx, dir, p, n);
		return n;
	}
	struct dce_dir *d = &s->d[dir];
	struct bb_rd r = bb_rd_make(p, n);
	for (;;) {
		size_t off = (size_t)(r.p - p);
		size_t left = bb_rd_left(&r);
		if (d->in_frag) {
			size_t take = d->left < left ? d->left : left;
			bb_rd_skip(&r, take);
			d->left -= (uint32_t)take;
			d->len += take;
			if (d->left > 0)
				break;
			d->in_frag = 0;
			if (d->have && d->last)
				emit_msg(s, ctx, dir, d, dec_time(ctx, dir, pos + off + take - 1), NULL);
			continue;
		}
		unsigned ptype = 0, flags = 0;
		int le = 1;
		uint32_t call_id = 0;
		long flen = pdu_hdr(r.p, left, &ptype, &flags, &le, &call_id);
		if (flen == 0)
			break;
		/* bind and alter_context: their first context is in the first 48 bytes */
		size_t need = (size_t)flen < 48 ? (size_t)flen : 48;
		if (flen > 0 && left < need)
			break;
		if (flen < 0) {
			if (!d->hunting) {
				DEC_COUNT(ctx, malformed);
				d->hunting = 1;
			}
			bb_rd_skip(&r, 1);
			DEC_COUNT(ctx, skipped_bytes);
			continue;
		}
		d->hunting = 0;
		frag_start(s, ctx, dir, d, r.p, need, ptype, flags, le, call_id,
		           dec_time(ctx, dir, pos + off));
		d->in_frag = 1;
		d->left = (uint32_t)flen;
		d->last = (flags & 0x02) != 0;
	}
	return (size_t)(r.p - p);
}

static void dce_gap(void *st, const struct bb_dec_ctx *ctx, int dir, uint64_t lost)
{
	struct dce_state *s = st;
	if (dir < 0 || dir > 1)
		return;
	struct dce_dir *d = &s->d[dir];
	DEC_COUNT(ctx, resync);
	if (lost && d->in_frag && lost < d->left) {
		/* The hole is inside the current fragment: skip it and go on. */
		d->left -= (uint32_t)lost;
		d->len += lost;
		return;
	}
	if (d->have)
		emit_msg(s, ctx, dir, d, d->t0, NULL);
	memset(d, 0, sizeof *d);
	d->hunting = 1;
}

static void dce_end(void *st, const struct bb_dec_ctx *ctx)
{
	struct dce_state *s = st;
	/* A fragmented message whose last fragment never came did happen. */
	for (int dir = 0; dir < 2; dir++)
		if (s->d[dir].have)
			emit_msg(s, ctx, dir, &s->d[dir], s->d[dir].t0, NULL);
}

static int dce_probe(const uint8_t *p, size_t n, unsigned transport, int dir)
{
	(void)dir;
	unsigned ptype = 0, flags = 0;
	int le = 1;
	uint32_t call_id = 0;
	if (transport == BB_TR_UDP) {
		uint16_t opnum, iface;
		int first;
		uint64_t act[2];
		/* a response may come from another port than the request went to */
		return cl_hdr(p, n, &ptype, &call_id, &opnum, &iface, &first, act) == 0 &&
		       (ptype == PT_REQUEST || ptype == PT_RESPONSE || ptype == PT_FAULT);
	}
	long flen = pdu_hdr(p, n, &ptype, &flags, &le, &call_id);
	return flen > 0 && (flags & 0x01) &&
	       (ptype == PT_BIND || ptype == PT_ALTER || ptype == PT_REQUEST ||
	        ptype == PT_BIND_ACK || ptype == PT_RESPONSE);
}

const struct bb_decoder bb_dec_dcerpc = {
	.name = "dcerpc",
	.summary = "DCE-RPC / MS-RPC connection-oriented over TCP (C706 ch. 12); call_id, opnum, interface",
	.transports = BB_TR_TCP | BB_TR_UDP,
	.ports = {135, 0},
	.probe = dce_probe,
	.state_size = sizeof(struct dce_state),
	.decode = dce_decode,
	.gap = dce_gap,
	.end = dce_end,
	.free = NULL,
};

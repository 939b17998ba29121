/* dec_generic.c - request/response by turn-taking, for any protocol */
/* SPDX-License-Identifier: MIT */
/*
 * No protocol knowledge. TCP: the client's bytes after the server has spoken
 * (or from the start) are its n-th request, CALL n; the server's bytes after
 * that are its n-th reply, RET n; id = "c<connection>.<n>". Server bytes with
 * no request outstanding (a banner) are counted as unmatched, not emitted.
 * UDP: a datagram from the client is a call; the next datagram from the
 * address it was sent to is its return. A turn also ends when the flow falls
 * silent (idle): more bytes in the same direction after that start a new turn.
 */
#include <stddef.h>

#include "decoders/dec_int.h"

struct gen_state {
	int cur;                /* 1 + direction of the turn in progress, 0 none */
	int outstanding;        /* a call waits for its return */
	int64_t t0, t1;         /* first and last byte of the turn */
	uint64_t len;
	uint32_t ncall;
};

static void finish(struct gen_state *s, const struct bb_dec_ctx *ctx)
{
	char id[48];
	int n;
	if (s->cur == 0)
		return;
	if (s->cur == 1 + BB_DIR_C2S) {
		s->ncall++;
		n = snprintf(id, sizeof id, "c%llu.%u", (unsigned long long)ctx->conn, s->ncall);
		dec_emit(ctx, BB_CALL, BB_DIR_C2S, s->t0, s->t1, s->len, id, (size_t)n, NULL, 0);
		s->outstanding = 1;
	} else if (s->outstanding) {
		n = snprintf(id, sizeof id, "c%llu.%u", (unsigned long long)ctx->conn, s->ncall);
		dec_emit(ctx, BB_RET, BB_DIR_S2C, s->t0, s->t1, s->len, id, (size_t)n, NULL, 0);
		s->outstanding = 0;
	} else {
		DEC_COUNT(ctx, unmatched_ret);
	}
	s->cur = 0;
}

static size_t gen_decode(void *st, const struct bb_dec_ctx *ctx, int dir, uint64_t pos,
                         const uint8_t *p, size_t n)
{
	struct gen_state *s = st;
	(void)p;
	if (n == 0)
		return 0;
	if (ctx->transport == BB_TR_UDP) {
		s->cur = 1 + dir;
		s->t0 = s->t1 = dec_time(ctx, dir, 0);
		s->len = n;
		finish(s, ctx);
		s->len = 0;
		s->t0 = 0;
		return n;
	}
	if (s->cur != 1 + dir) {
		finish(s, ctx);
		s->cur = 1 + dir;
		s->t0 = dec_time(ctx, dir, pos);
		s->len = 0;
	}
	s->t1 = dec_time(ctx, dir, pos + n - 1);
	s->len += n;
	return n;
}

static void gen_gap(void *st, const struct bb_dec_ctx *ctx, int dir, uint64_t lost)
{
	struct gen_state *s = st;
	(void)dir;
	if (s->cur)
		s->len += lost;
	/* Turns need no framing: the turn in progress simply continues. */
	DEC_COUNT(ctx, resync);
}

static void gen_end(void *st, const struct bb_dec_ctx *ctx)
{
	struct gen_state *s = st;
	if (s->len)
		finish(s, ctx);
	s->cur = 0;
}

const struct bb_decoder bb_dec_generic = {
	.name = "generic",
	.summary = "any request/response protocol, by turn-taking (TCP) or reply address (UDP)",
	.transports = BB_TR_TCP | BB_TR_UDP,
	.ports = {0},
	.probe = NULL,
	.state_size = sizeof(struct gen_state),
	.decode = gen_decode,
	.gap = gen_gap,
	.end = gen_end,
	.idle = gen_end,
	.free = NULL,
};

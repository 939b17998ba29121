/* dec_ordq.c - the ordinal reply queue shared by the decoders that pair replies by order */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "decoders/dec_int.h"
#include "decoders/dec_ordq_int.h"

static struct dec_ordq_ent *at(const struct dec_ordq *q, uint32_t i)
{
	return (struct dec_ordq_ent *)(void *)(q->ring +
	                                       (size_t)((q->head + i) & (q->cap - 1)) * q->esz);
}

/* Doubles the ring (or makes the first one): 0 when a bound forbids it. */
static int grow(struct dec_ordq *q, const struct bb_dec_ctx *ctx, size_t req_max)
{
	if (!q->ring) {
		size_t esz = offsetof(struct dec_ordq_ent, req) + req_max;
		q->esz = (uint32_t)((esz + 7) & ~(size_t)7);
		q->req_max = (uint16_t)req_max;
		q->acct = ctx->stats ? &ctx->stats->queue_bytes : NULL;
	}
	uint32_t ncap = q->cap ? q->cap * 2 : DEC_ORDQ_FIRST;
	if (ncap > DEC_ORDQ_MAX)
		return 0;
	uint64_t more = (uint64_t)(ncap - q->cap) * q->esz;
	if (q->acct && *q->acct + more > DEC_ORDQ_BUDGET)
		return 0;
	unsigned char *ring = bb_xmalloc((size_t)ncap * q->esz);
	if (q->n) {
		/* Unwrap: the oldest entry goes first. */
		uint32_t first = q->cap - q->head < q->n ? q->cap - q->head : q->n;
		memcpy(ring, q->ring + (size_t)q->head * q->esz, (size_t)first * q->esz);
		memcpy(ring + (size_t)first * q->esz, q->ring, (size_t)(q->n - first) * q->esz);
	}
	free(q->ring);
	q->ring = ring;
	q->head = 0;
	q->cap = ncap;
	if (q->acct)
		*q->acct += more;
	return 1;
}

int dec_ordq_push(struct dec_ordq *q, const struct bb_dec_ctx *ctx, size_t req_max, int64_t t0,
                  uint32_t ord, unsigned flags, const char *req, size_t reqlen)
{
	if (q->n == q->cap && !grow(q, ctx, req_max)) {
		/* At the bound: the call keeps its place in the order as a number. */
		q->lost++;
		DEC_COUNT(ctx, queue_full);
		return 0;
	}
	struct dec_ordq_ent *e = at(q, q->n);
	q->n++;
	e->t0 = t0;
	e->ord = ord;
	e->lost = q->lost;
	q->lost = 0;
	e->flags = (uint16_t)flags;
	if (reqlen > q->req_max)
		reqlen = q->req_max;
	e->reqlen = (uint16_t)reqlen;
	if (reqlen)
		memcpy(e->req, req, reqlen);
	return 1;
}

int dec_ordq_front(const struct dec_ordq *q, const struct dec_ordq_ent **e)
{
	*e = NULL;
	if (q->n == 0)
		return q->lost ? DEC_ORDQ_LOST : DEC_ORDQ_EMPTY;
	const struct dec_ordq_ent *f = at(q, 0);
	if (f->lost)
		return DEC_ORDQ_LOST;
	*e = f;
	return DEC_ORDQ_CALL;
}

void dec_ordq_pop(struct dec_ordq *q)
{
	if (q->n == 0) {
		if (q->lost)
			q->lost--;
		return;
	}
	struct dec_ordq_ent *f = at(q, 0);
	if (f->lost) {
		f->lost--;
		return;
	}
	q->head = (q->head + 1) & (q->cap - 1);
	q->n--;
}

void dec_ordq_skip_to(struct dec_ordq *q, int64_t t0)
{
	while (q->n > 1 && at(q, 1)->t0 <= t0) {
		q->head = (q->head + 1) & (q->cap - 1);
		q->n--;
	}
	/* Calls lost before one sent at or before t0 were sent before it too. */
	if (q->n && at(q, 0)->t0 <= t0)
		at(q, 0)->lost = 0;
}

void dec_ordq_clear(struct dec_ordq *q)
{
	q->head = q->n = q->lost = 0;
}

void dec_ordq_free(struct dec_ordq *q)
{
	if (q->acct)
		*q->acct -= (uint64_t)q->cap * q->esz;
	free(q->ring);
	memset(q, 0, sizeof *q);
}

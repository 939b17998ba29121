/* dec_int.h - helpers shared by the decoders: emitting, call/return match tables */
/* SPDX-License-Identifier: MIT */
#ifndef BB_DEC_INT_H
#define BB_DEC_INT_H

#include <stdio.h>
#include <string.h>

#include "decoders/decoders.h"

/* Reports one message with its content tokens (toks borrowed, may be NULL)
 * through the context and counts it. */
static inline void dec_emit_toks(const struct bb_dec_ctx *ctx, enum bb_op op, int dir,
                                 int64_t ts_ns, int64_t end_ns, uint64_t len, const char *id,
                                 size_t id_len, const char *req, size_t req_len,
                                 const struct bb_dec_toks *toks)
{
	struct bb_dec_msg m;
	m.op = op;
	m.dir = dir;
	m.ts_ns = ts_ns;
	m.end_ns = end_ns;
	m.len = len;
	m.id = id;
	m.id_len = id_len;
	m.req = req;
	m.req_len = req_len;
	m.toks = toks && (toks->n || toks->ctx_prio) ? toks : NULL;
	if (ctx->stats) {
		if (op == BB_CALL)
			ctx->stats->calls++;
		else if (op == BB_RET)
			ctx->stats->rets++;
	}
	if (ctx->emit)
		ctx->emit(ctx->arg, &m);
}

/* Reports one message (no tokens) through the context and counts it. */
static inline void dec_emit(const struct bb_dec_ctx *ctx, enum bb_op op, int dir, int64_t ts_ns,
                            int64_t end_ns, uint64_t len, const char *id, size_t id_len,
                            const char *req, size_t req_len)
{
	dec_emit_toks(ctx, op, dir, ts_ns, end_ns, len, id, id_len, req, req_len, NULL);
}

static inline int64_t dec_time(const struct bb_dec_ctx *ctx, int dir, uint64_t pos)
{
	return ctx->time_at ? ctx->time_at(ctx->arg, dir, pos) : 0;
}

static inline void dec_count(const struct bb_dec_ctx *ctx, size_t field_off)
{
	if (ctx->stats)
		(*(uint64_t *)((char *)ctx->stats + field_off))++;
}
#define DEC_COUNT(ctx, field) dec_count((ctx), offsetof(struct bb_dec_stats, field))

/* Hunting for a message start (after a gap or garbage): moves r to the first
 * of its unread bytes, among those with at least min bytes from there on, at
 * which start(p, n, arg) says 1; start may also say -1 (cannot tell before
 * more bytes come: stop there). The bytes passed over are counted
 * (skipped_bytes). Returns 1 when a start was found, else 0 (wait). */
static inline int dec_hunt(struct bb_rd *r, const struct bb_dec_ctx *ctx, size_t min,
                           int (*start)(const uint8_t *p, size_t n, const void *arg),
                           const void *arg)
{
	size_t left = bb_rd_left(r), i = 0;
	int found = 0;
	for (; i + min <= left; i++) {
		int k = start(r->p + i, left - i, arg);
		if (k) {
			found = k > 0;
			break;
		}
	}
	if (ctx->stats)
		ctx->stats->skipped_bytes += i;
	bb_rd_skip(r, i);
	return found;
}

/* A fixed-capacity table of pending calls, keyed by a 64-bit key, with three
 * small values each. A key already pending is overwritten and counted
 * (dup_call). Full: slots are evicted in turn (round robin, not always the
 * oldest call) and counted (evicted). */
#define DEC_MATCH_N 64
struct dec_match {
	struct {
		uint64_t key;
		uint32_t a, b, c;
		uint32_t used;
	} e[DEC_MATCH_N];
	uint32_t next;
};

static inline void dec_match_put(struct dec_match *m, const struct bb_dec_ctx *ctx, uint64_t key,
                                 uint32_t a, uint32_t b, uint32_t c)
{
	int slot = -1;
	for (int i = 0; i < DEC_MATCH_N; i++) {
		if (m->e[i].used && m->e[i].key == key) {
			DEC_COUNT(ctx, dup_call);
			slot = i;
			break;
		}
		if (!m->e[i].used && slot < 0)
			slot = i;
	}
	if (slot < 0) {
		slot = (int)(m->next++ % DEC_MATCH_N);
		DEC_COUNT(ctx, evicted);
	}
	m->e[slot].key = key;
	m->e[slot].a = a;
	m->e[slot].b = b;
	m->e[slot].c = c;
	m->e[slot].used = 1;
}

/* 1 and the values when key is pending (the entry is removed), else 0. */
static inline int dec_match_take(struct dec_match *m, uint64_t key, uint32_t *a, uint32_t *b,
                                 uint32_t *c)
{
	for (int i = 0; i < DEC_MATCH_N; i++) {
		if (m->e[i].used && m->e[i].key == key) {
			*a = m->e[i].a;
			*b = m->e[i].b;
			*c = m->e[i].c;
			m->e[i].used = 0;
			return 1;
		}
	}
	return 0;
}

#endif

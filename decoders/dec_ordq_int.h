/* dec_ordq_int.h - the ordinal reply queue: calls waiting for replies that come in order */
/* SPDX-License-Identifier: MIT */
#ifndef BB_DEC_ORDQ_INT_H
#define BB_DEC_ORDQ_INT_H

#include <stddef.h>
#include <stdint.h>

#include "decoders/decoders.h"

/*
 * HTTP/1.x, Redis, memcached text, PostgreSQL and MySQL answer the calls of a
 * connection in the order they were sent, so a reply pairs with the oldest
 * call still waiting. A client may write thousands of calls before it reads
 * a reply (redis-cli --pipe, PostgreSQL pipeline mode, HTTP load
 * generators), so the queue grows: a ring per connection, allocated at the
 * first call and doubled as needed (amortised: no allocation per packet once
 * a connection's depth is reached), freed when the flow ends.
 *
 * Bounds: DEC_ORDQ_MAX calls per connection, and DEC_ORDQ_BUDGET bytes held
 * by all the queues of one decoder (bb_dec_stats.queue_bytes), so hostile
 * input cannot grow memory without limit. A call that finds the queue at its
 * bound is not stored but counted (bb_dec_stats.queue_full) and remembered as
 * a number of lost calls at its place in the order: its reply is reported
 * unmatched, and the replies after it still pair with their own calls.
 */
#define DEC_ORDQ_MAX (1u << 16)               /* waiting calls per connection */
#define DEC_ORDQ_BUDGET (UINT64_C(32) << 20)  /* bytes for all queues of a decoder */
#define DEC_ORDQ_FIRST 8u                      /* entries of a queue's first ring */

/* One waiting call. req holds reqlen bytes (at most the queue's req_max). */
struct dec_ordq_ent {
	int64_t t0;             /* time of the call's first byte */
	uint32_t ord;           /* its ordinal on the connection */
	uint32_t lost;          /* calls just before it that found the queue full */
	uint16_t flags;         /* the decoder's own bits */
	uint16_t reqlen;
	char req[];
};

/* Lives zeroed in a decoder's per-flow state; dec_ordq_free at the flow's end. */
struct dec_ordq {
	unsigned char *ring;    /* cap entries of esz bytes; NULL before the first call */
	uint64_t *acct;         /* the decoder's queue_bytes, charged for ring */
	uint32_t esz, cap;      /* cap: a power of two */
	uint32_t head, n;       /* oldest entry, entries stored */
	uint32_t lost;          /* calls lost after the newest entry */
	uint16_t req_max;
};

/* What waits first. */
enum { DEC_ORDQ_EMPTY = 0, DEC_ORDQ_CALL, DEC_ORDQ_LOST };

/* Appends a call (req: reqlen bytes, borrowed, cut at req_max; req_max is
 * the decoder's constant). Returns 1 when stored; 0 when the queue is at its
 * bound: the call is counted in queue_full and its reply will be reported
 * unmatched. */
int dec_ordq_push(struct dec_ordq *q, const struct bb_dec_ctx *ctx, size_t req_max, int64_t t0,
                  uint32_t ord, unsigned flags, const char *req, size_t reqlen);

/* What the next reply answers: DEC_ORDQ_CALL with *e set (borrowed until the
 * next push or pop), DEC_ORDQ_LOST (a call the queue had no room for) or
 * DEC_ORDQ_EMPTY. */
int dec_ordq_front(const struct dec_ordq *q, const struct dec_ordq_ent **e);

/* Removes what dec_ordq_front reports (nothing when empty). */
void dec_ordq_pop(struct dec_ordq *q);

/* After a hole in the replies: the next reply, which began at t0, answers the
 * latest call sent at or before t0 (no pipelining is assumed across a hole),
 * so the calls before that one are dropped; they lost their replies. */
void dec_ordq_skip_to(struct dec_ordq *q, int64_t t0);

/* Forgets every waiting call (calls were lost: replies can no longer be paired
 * by order); keeps the ring. */
void dec_ordq_clear(struct dec_ordq *q);

/* Releases the ring and uncharges it; q is zeroed. */
void dec_ordq_free(struct dec_ordq *q);

#endif

/* dec_tok_int.h - content tokens and propagated context, for the decoders' tok= and ctx= */
/* SPDX-License-Identifier: MIT */
#ifndef BB_DEC_TOK_INT_H
#define BB_DEC_TOK_INT_H

#include <stddef.h>
#include <stdint.h>

#include "decoders/decoders.h"

/* Work per message is bounded: at most DEC_TOK_SCAN bytes are looked at and
 * at most DEC_TOK_HASHES candidates hashed; what comes later is ignored. */
#define DEC_TOK_SCAN 4096u
#define DEC_TOK_HASHES 32u
/* Longest token hashed (longer runs are cut), longest whole field. */
#define DEC_TOK_RUN_MAX 64u
#define DEC_TOK_FIELD_MAX 128u

/* dec_tok_field flags. */
#define DEC_TOK_WHOLE 1u        /* also the whole field (trimmed), when it is not one run */
#define DEC_TOK_PCT 2u          /* percent-decode first ("%2F"), '+' is a space */

/* Empties t for a new message. */
static inline void dec_tok_reset(struct bb_dec_toks *t)
{
	memset(t, 0, sizeof *t);
}

/* Empties t for one part of the message whose set is m (see dec_tok_merge). */
static inline void dec_tok_start(struct bb_dec_toks *t, const struct bb_dec_toks *m)
{
	memset(t, 0, sizeof *t);
	t->hashes = m->hashes;
	t->scan = m->scan;
}

/* 1 when the run wants tokens (bbcap without --no-tokens). */
static inline int dec_tok_on(const struct bb_dec_ctx *ctx)
{
	return ctx->tok_key != NULL;
}

/* The tokens of one field (a redis argument, a memcached key, a query value,
 * an SQL string literal, a header value ...): its runs of ASCII letters,
 * digits and '_' (with '-' and '.' inside a run), each lower-cased, and with
 * DEC_TOK_WHOLE the whole field lower-cased ("session:42" gives
 * "session:42", "session" and "42"). Too short runs and keywords are
 * skipped. The n bytes at p are borrowed. */
void dec_tok_field(struct bb_dec_toks *t, const struct bb_dec_ctx *ctx, const uint8_t *p,
                   size_t n, unsigned flags);
/* An HTTP request target ("/a/b?k=v&k2=v2"): each path segment and each
 * query value as a field, percent-decoded; query keys are not tokens. */
void dec_tok_target(struct bb_dec_toks *t, const struct bb_dec_ctx *ctx, const uint8_t *p,
                    size_t n);
/* One request header (name and value, borrowed). A context header
 * (traceparent, b3, x-b3-traceid, uber-trace-id, x-request-id,
 * x-correlation-id; any case) sets t's context and returns 1. Otherwise, when
 * want_tokens is set and the header is not a standard one (Host, User-Agent,
 * Accept*, Content-*, Cookie, Authorization ...), its value is a field.
 * Returns 0 then. */
int dec_tok_header(struct bb_dec_toks *t, const struct bb_dec_ctx *ctx, const uint8_t *name,
                   size_t nlen, const uint8_t *val, size_t vlen, int want_tokens);
/* A DNS name ("www.example.com", trailing dot optional): one token, the
 * whole name lower-cased without its trailing dot. */
void dec_tok_name(struct bb_dec_toks *t, const struct bb_dec_ctx *ctx, const uint8_t *p,
                  size_t n);
/* Adds the tokens and context of s to t (the better context wins). The work
 * counters become the larger of both: a set s that started from t's
 * counters (dec_tok_start) keeps the bounds of the message. */
void dec_tok_merge(struct bb_dec_toks *t, const struct bb_dec_toks *s);
/* A binary integer parameter (SQL bind), as its decimal text. */
void dec_tok_int(struct bb_dec_toks *t, const struct bb_dec_ctx *ctx, int64_t v, int is_unsigned);
/* A 16-byte binary UUID parameter, as its canonical text
 * ("550e8400-e29b-41d4-a716-446655440000"). */
void dec_tok_uuid(struct bb_dec_toks *t, const struct bb_dec_ctx *ctx, const uint8_t *p);

#endif

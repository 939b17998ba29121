/* dec_fake.h - a fake capture for decoder unit tests: collects records, times are positions */
/* SPDX-License-Identifier: MIT */
/*
 * Included by each test_dec*.c (one translation unit each). A test file may
 * define FAKE_SERVER ("addr:port" the context names as the server) before
 * including it. Stream buffers grow as needed; FAKE_NREC records are kept.
 */
#ifndef BB_TEST_DEC_FAKE_H
#define BB_TEST_DEC_FAKE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/decoders.h"
#include "unit.h"

#ifndef FAKE_SERVER
#define FAKE_SERVER "10.0.0.2:53"
#endif
#define FAKE_NREC 1024

struct rec {
	enum bb_op op;
	int dir;
	int64_t ts, end;
	uint64_t len;
	char id[96];
	char req[128];
	char tok[BB_TOK_MAX * 17]; /* tok= and ctx= as bbcap writes them, "" when none */
	char ctx[17];
};

struct fake {
	struct rec r[FAKE_NREC];
	int n;
	struct bb_dec_stats st;
	struct bb_dec_ctx ctx;
	const struct bb_decoder *dec;
	void *state;
	uint8_t *buf[2];        /* unconsumed bytes per direction */
	size_t len[2], cap[2];
	uint64_t pos[2];
	size_t maxbuf;          /* most bytes the decoder ever left unconsumed */
};

static int64_t fake_time(void *arg, int dir, uint64_t pos)
{
	(void)arg;
	return (int64_t)pos * 10 + dir;
}

static void fake_emit(void *arg, const struct bb_dec_msg *m)
{
	struct fake *f = arg;
	if (f->n >= FAKE_NREC)
		return;
	struct rec *r = &f->r[f->n++];
	r->op = m->op;
	r->dir = m->dir;
	r->ts = m->ts_ns;
	r->end = m->end_ns;
	r->len = m->len;
	snprintf(r->id, sizeof r->id, "%.*s", (int)m->id_len, m->id);
	snprintf(r->req, sizeof r->req, "%.*s", (int)m->req_len, m->req ? m->req : "");
	r->tok[0] = r->ctx[0] = '\0';
	if (m->toks) {
		bb_tok_format(m->toks, r->tok, sizeof r->tok);
		bb_tok_format_ctx(m->toks, r->ctx, sizeof r->ctx);
	}
}

static inline struct fake *fake_new(const struct bb_decoder *dec, unsigned tr)
{
	struct fake *f = calloc(1, sizeof *f);
	f->dec = dec;
	f->state = calloc(1, dec->state_size);
	f->ctx.conn = 7;
	f->ctx.client = "10.0.0.1:1234";
	f->ctx.server = FAKE_SERVER;
	f->ctx.transport = tr;
	f->ctx.stats = &f->st;
	f->ctx.time_at = fake_time;
	f->ctx.emit = fake_emit;
	f->ctx.arg = f;
	return f;
}

static inline void fake_free(struct fake *f)
{
	if (f->dec->free)
		f->dec->free(f->state);
	free(f->state);
	free(f->buf[0]);
	free(f->buf[1]);
	free(f);
}

/* Appends bytes to a direction's stream and lets the decoder consume (UDP:
 * the bytes are one datagram). */
static inline void feed(struct fake *f, int dir, const void *p, size_t n)
{
	if (f->ctx.transport == BB_TR_UDP) {
		f->dec->decode(f->state, &f->ctx, dir, 0, p, n);
		return;
	}
	if (f->len[dir] + n > f->cap[dir]) {
		f->cap[dir] = (f->len[dir] + n) * 2;
		f->buf[dir] = realloc(f->buf[dir], f->cap[dir]);
	}
	if (n)
		memcpy(f->buf[dir] + f->len[dir], p, n);
	f->len[dir] += n;
	size_t c = f->dec->decode(f->state, &f->ctx, dir, f->pos[dir], f->buf[dir], f->len[dir]);
	if (c > f->len[dir]) {
		UNIT_FAIL_("decoder consumed %zu of %zu", c, f->len[dir]);
		c = f->len[dir];
	}
	if (c < f->len[dir])
		memmove(f->buf[dir], f->buf[dir] + c, f->len[dir] - c);
	f->len[dir] -= c;
	f->pos[dir] += c;
	if (f->len[dir] > f->maxbuf)
		f->maxbuf = f->len[dir];
}

static inline int count_op(const struct fake *f, enum bb_op op)
{
	int k = 0;
	for (int i = 0; i < f->n; i++)
		k += f->r[i].op == op;
	return k;
}

#endif

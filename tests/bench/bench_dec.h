/* bench_dec.h - what the decoder benchmarks share: a counting sink, clocks, a stream fed as capture does */
/* SPDX-License-Identifier: MIT */
#ifndef BB_BENCH_DEC_H
#define BB_BENCH_DEC_H

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decoders/decoders.h"

/* Records the decoder emitted (CALL + RET). */
static uint64_t bench_nmsg;

static inline void bench_count(void *arg, const struct bb_dec_msg *m)
{
	(void)arg;
	(void)m;
	bench_nmsg++;
}

/* Stream position to time: 2 ns a byte, the direction in the last bit. */
static inline int64_t bench_at(void *arg, int dir, uint64_t pos)
{
	(void)arg;
	return (int64_t)pos * 2 + dir;
}

/* Seconds of clock id (CLOCK_MONOTONIC for wall time, CLOCK_PROCESS_CPUTIME_ID
 * for CPU time: on a shared machine the wall measures the neighbours too). */
static inline double bench_clock_s(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Both directions of one connection handed to a decoder as capture does:
 * what the decoder leaves unconsumed comes back with the next bytes. */
struct bench_feed {
	const struct bb_decoder *dec;
	void *st;
	const struct bb_dec_ctx *ctx;
	uint64_t pos[2];        /* stream position of the first unconsumed byte */
	uint64_t bytes;         /* bytes fed, both directions */
	size_t plen[2];
	uint8_t pend[2][1 << 16];
};

/* A feed for the decoder named name (aborts when there is none), its state
 * new and zeroed, the records going through ctx (borrowed). Free with
 * bench_feed_free. */
static inline struct bench_feed *bench_feed_new(const char *name, const struct bb_dec_ctx *ctx)
{
	int d = bb_dec_find(name);
	struct bench_feed *f = calloc(1, sizeof *f);
	if (d < 0 || !f)
		abort();
	f->dec = bb_dec_at((size_t)d);
	f->ctx = ctx;
	f->st = calloc(1, f->dec->state_size);
	if (!f->st)
		abort();
	return f;
}

/* Ends the flow (the decoder emits what is pending) and frees f. */
static inline void bench_feed_free(struct bench_feed *f)
{
	if (f->dec->end)
		f->dec->end(f->st, f->ctx);
	if (f->dec->free)
		f->dec->free(f->st);
	free(f->st);
	free(f);
}

/* Hands the n bytes at p (from dir) to the decoder after what it left;
 * aborts when more than 64 KB would wait (not a benchmark's shape). */
static inline void bench_feed(struct bench_feed *f, int dir, const uint8_t *p, size_t n)
{
	size_t used;
	if (f->plen[dir]) {
		if (f->plen[dir] + n > sizeof f->pend[dir])
			abort();
		memcpy(f->pend[dir] + f->plen[dir], p, n);
		used = f->dec->decode(f->st, f->ctx, dir, f->pos[dir], f->pend[dir], f->plen[dir] + n);
		f->plen[dir] += n;
		memmove(f->pend[dir], f->pend[dir] + used, f->plen[dir] - used);
		f->plen[dir] -= used;
	} else {
		used = f->dec->decode(f->st, f->ctx, dir, f->pos[dir], p, n);
		if (used < n) {
			memcpy(f->pend[dir], p + used, n - used);
			f->plen[dir] = n - used;
		}
	}
	f->pos[dir] += used;
	f->bytes += n;
}

#endif

/* bench_h2.h - building HTTP/2 byte streams in memory, for the http2 benchmarks */
/* SPDX-License-Identifier: MIT */
#ifndef BB_BENCH_H2_H
#define BB_BENCH_H2_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A growing byte buffer. */
struct buf {
	uint8_t *b;
	size_t n, cap;
};

static inline void put(struct buf *o, const void *p, size_t n)
{
	if (o->n + n > o->cap) {
		o->cap = (o->n + n) * 2;
		o->b = realloc(o->b, o->cap);
		if (!o->b)
			abort();
	}
	memcpy(o->b + o->n, p, n);
	o->n += n;
}

/* Appends an HTTP/2 frame (RFC 9113 4.1) of type, flags and stream sid. */
static inline void frame(struct buf *o, int type, int flags, uint32_t sid, const void *p, size_t n)
{
	uint8_t h[9] = {(uint8_t)(n >> 16), (uint8_t)(n >> 8), (uint8_t)n, (uint8_t)type,
		(uint8_t)flags, (uint8_t)(sid >> 24), (uint8_t)(sid >> 16), (uint8_t)(sid >> 8),
		(uint8_t)sid};
	put(o, h, 9);
	put(o, p, n);
}

/* A byte's time: its stream position (the decoders only compare times). */
static inline int64_t bench_pos_time(void *arg, int dir, uint64_t pos)
{
	(void)arg;
	(void)dir;
	return (int64_t)pos;
}

/* Seconds of CPU time of the process. */
static inline double bench_cpu_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

#endif

/* trace_int.h - helpers shared by the trace library's own files */
/* SPDX-License-Identifier: MIT */
#ifndef BB_TRACE_INT_H
#define BB_TRACE_INT_H

#include <stddef.h>
#include <stdint.h>

/* Why a timestamp did not parse (BB_TP_OK when it did). */
enum bb_tp {
	BB_TP_OK = 0,
	BB_TP_EMPTY,      /* "" */
	BB_TP_NOT_NUMBER, /* "abc", "+5" */
	BB_TP_SIGN,       /* "-" */
	BB_TP_NO_DIGITS,  /* "." */
	BB_TP_NO_INT,     /* ".5" */
	BB_TP_NO_FRAC,    /* "1." */
	BB_TP_DECIMALS,   /* "1.1234567890" */
	BB_TP_EXPONENT,   /* "1e9" */
	BB_TP_JUNK,       /* "17x", "1.2.3" */
	BB_TP_RANGE,      /* does not fit int64_t nanoseconds */
};

/* bb_time_parse with the reason for a failure: returns an enum bb_tp. */
int bb_time_parse_why(const char *s, size_t len, int64_t *ns_out);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#include <string.h>
/* The value of 8 decimal digits at s, or -1 when one of them is not a digit:
 * all eight at once (first digit in the lowest byte), by pairs, quads, then
 * the two halves. */
static inline int64_t bb_time_digits8(const char *s)
{
	const uint64_t ones = UINT64_C(0x0101010101010101);
	uint64_t x;
	memcpy(&x, s, 8);
	/* each byte in '0'..'9': its high nibble is 3, and adding 6 keeps it 3 */
	if ((x & (ones * 0xf0)) != ones * 0x30 || ((x + ones * 6) & (ones * 0xf0)) != ones * 0x30)
		return -1;
	x -= ones * '0';
	x = (x * 10 + (x >> 8)) & UINT64_C(0x00ff00ff00ff00ff);
	x = (x * 100 + (x >> 16)) & UINT64_C(0x0000ffff0000ffff);
	x = (x * 10000 + (x >> 32)) & UINT64_C(0xffffffff);
	return (int64_t)x;
}

/* The 9 decimals at p as nanoseconds, or -1 when one is not a digit. */
static inline int64_t bb_time_decimals9(const char *p)
{
	int64_t f8 = bb_time_digits8(p);
	unsigned last = (unsigned char)p[8] - '0';
	return f8 < 0 || last > 9 ? -1 : f8 * 10 + last;
}

/* bb_time_parse_why for the common form alone (1 to 10 digits, '.', 9
 * digits, at most INT64_MAX ns): 1 with *ns_out set, 0 for any other. */
int bb_time_parse_common(const char *s, size_t len, int64_t *ns_out);
#endif

/* Short English reason for an enum bb_tp value ("more than 9 decimals"). */
const char *bb_time_why(int why);
/* The 9 decimals of frac (below 10^9) at p, no NUL: the fraction of a
 * formatted time, for a writer that keeps the seconds of the last one. */
void bb_time_frac9(uint32_t frac, char *p);

/* The transparent huge page the trace library asks for (x86-64's 2 MiB):
 * big arrays and a trace file read into memory are aligned to it. */
#define HUGE_PAGE ((size_t)2 << 20)

/* A hint to start loading *p; nothing on compilers without the builtin. */
#if defined(__GNUC__)
#define BB_PREFETCH(p) __builtin_prefetch(p)
#else
#define BB_PREFETCH(p) ((void)(p))
struct bb_reader;
/* Makes a reader of a mapped file (bb_reader_mem on the map) give back the
 * pages well behind the line it reads (madvise DONTNEED: they come back from
 * the file should anything look back). Only for a read-only file map. */
void bb_reader_release_behind(struct bb_reader *r);

#endif

struct bb_intern;
/* Interning in two steps, to hide the table's cache miss: hash and prefetch
 * now, add a few records later. */
uint32_t bb_intern_hash(const char *s, size_t len);
void bb_intern_prefetch(const struct bb_intern *in, uint32_t h);
uint32_t bb_intern_add_hashed(struct bb_intern *in, const char *s, size_t len, uint32_t h);

struct bb_reader;
/* Makes a reader of a mapped file (bb_reader_mem on the map) give back the
 * pages well behind the line it reads (madvise DONTNEED: they come back from
 * the file should anything look back). Only for a read-only file map. */
void bb_reader_release_behind(struct bb_reader *r);

#endif

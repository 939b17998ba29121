/* trace_intern.c - strings to dense small integers: open addressing over a string arena */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "trace/trace.h"
#include "trace/trace_int.h"

/* Each slot holds a uint32 string index (BB_NONE when empty) beside 32 bits
 * of the string's hash, which both pick the home slot and turn away almost
 * every mismatch without touching the string (one cache miss per lookup, not
 * three), and let the table grow without rehashing strings. Linear probing,
 * at most half full. Strings live back to back in arena blocks as
 * [uint32 length][bytes][NUL]; str[i] points at the bytes of string i. Blocks
 * never move once allocated, so a string's address is stable for the table's
 * life (bb_intern_str promises that). Per string that costs 2 to 4 slots
 * (16..32 bytes), one pointer (8 bytes) and 5 bytes plus the string itself. */
struct slot {
	uint32_t idx;
	uint32_t hash;
};

struct bb_intern {
	struct slot *slots;
	size_t mask;       /* number of slots - 1 (at most UINT32_MAX) */
	uint32_t count;
	uint32_t str_cap;
	char **str;        /* count used */
	char *blk;         /* current block: used up to blk_len of blk_cap */
	size_t blk_len;
	size_t blk_cap;
	char **blocks;     /* every block, for freeing */
	size_t nblocks;
	size_t blocks_cap;
	size_t bytes;      /* heap bytes of all blocks */
};

#define BLOCK_MIN 4096
#define BLOCK_MAX (4u << 20)
#define INIT_SLOTS 64

static inline uint64_t load64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof v);
	return v;
}

/* A multiply-xorshift hash, 8 bytes a step (in the spirit of wyhash), with
 * the murmur3 finaliser so that every bit depends on every input bit. */
static uint64_t hash_bytes(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	uint64_t h = UINT64_C(0x9E3779B97F4A7C15) ^ ((uint64_t)n * UINT64_C(0xFF51AFD7ED558CCD));
	uint64_t t = 0;

	while (n >= 8) {
		h ^= load64(p);
		h *= UINT64_C(0x9FB21C651E98DF25);
		h ^= h >> 32;
		p += 8;
		n -= 8;
	}
	if (n) {
		memcpy(&t, p, n);
		h ^= t;
		h *= UINT64_C(0x9FB21C651E98DF25);
		h ^= h >> 32;
	}
	h ^= h >> 33;
	h *= UINT64_C(0xFF51AFD7ED558CCD);
	h ^= h >> 33;
	h *= UINT64_C(0xC4CEB9FE1A85EC53);
	h ^= h >> 33;
	return h;
}

/* Returns new, caller frees with bb_intern_free. */
struct bb_intern *bb_intern_new(void)
{
	struct bb_intern *in = bb_xcalloc(1, sizeof *in);

	in->mask = INIT_SLOTS - 1;
	in->slots = bb_xmalloc(INIT_SLOTS * sizeof *in->slots);
	memset(in->slots, 0xff, INIT_SLOTS * sizeof *in->slots);
	return in;
}

/* Frees the table and every string in it; NULL does nothing. */
void bb_intern_free(struct bb_intern *in)
{
	if (!in)
		return;
	for (size_t b = 0; b < in->nblocks; b++)
		free(in->blocks[b]);
	free(in->blocks);
	free(in->slots);
	free(in->str);
	free(in);
}

static inline uint32_t len_at(const char *p)
{
	uint32_t n;

	memcpy(&n, p - sizeof n, sizeof n);
	return n;
}

static inline int same(const struct bb_intern *in, uint32_t i, const char *s, size_t len)
{
	const char *p = in->str[i];

	return len_at(p) == len && !memcmp(p, s, len);
}

/* Slot holding s, or the empty slot where it would go. */
static inline size_t probe(const struct bb_intern *in, const char *s, size_t len, uint32_t h)
{
	size_t i = h & in->mask;

	for (;;) {
		const struct slot *sl = &in->slots[i];
		if (sl->idx == BB_NONE || (sl->hash == h && same(in, sl->idx, s, len)))
			return i;
		i = (i + 1) & in->mask;
	}
}

/* A slot array of n slots. Big ones are aligned to and backed by 2 MiB pages
 * where the system allows it: a lookup is a random access into an array far
 * bigger than what the TLB maps with 4 KiB pages, and the page walks cost as
 * much as the cache misses. */
static struct slot *new_slots(size_t n)
{
	size_t bytes = n * sizeof(struct slot);
	void *p = NULL;

#if defined(MADV_HUGEPAGE)
	if (bytes >= HUGE_PAGE) {
		if (posix_memalign(&p, HUGE_PAGE, bytes))
			p = bb_xmalloc(bytes);
		else
			madvise(p, bytes, MADV_HUGEPAGE);
	}
#endif
	if (!p)
		p = bb_xmalloc(bytes);
	memset(p, 0xff, bytes);
	return p;
}

static void grow_slots(struct bb_intern *in)
{
	size_t n = (in->mask + 1) * 2;
	struct slot *old = in->slots;
	size_t oldn = in->mask + 1;

	in->slots = new_slots(n);
	in->mask = n - 1;
	for (size_t j = 0; j < oldn; j++) {
		size_t i;
		if (old[j].idx == BB_NONE)
			continue;
		i = old[j].hash & in->mask;
		while (in->slots[i].idx != BB_NONE)
			i = (i + 1) & in->mask;
		in->slots[i] = old[j];
	}
	free(old);
}

/* Room for need bytes in the current block, starting a new one if needed:
 * blocks double from BLOCK_MIN to BLOCK_MAX; a longer string gets its own. */
static char *room(struct bb_intern *in, size_t need)
{
	char *p;

	if (in->blk_cap - in->blk_len < need) {
		size_t cap = in->blk_cap ? in->blk_cap * 2 : BLOCK_MIN;
		if (cap > BLOCK_MAX)
			cap = BLOCK_MAX;
		if (cap < need)
			cap = need;
		if (in->nblocks == in->blocks_cap) {
			in->blocks_cap = in->blocks_cap ? in->blocks_cap * 2 : 8;
			in->blocks = bb_xrealloc(in->blocks, in->blocks_cap * sizeof *in->blocks);
		}
		in->blk = bb_xmalloc(cap);
		in->blocks[in->nblocks++] = in->blk;
		in->bytes += cap;
		in->blk_cap = cap;
		in->blk_len = 0;
	}
	p = in->blk + in->blk_len;
	in->blk_len += need;
	return p;
}

/* The 32 bits of hash the table keys s[0..len) by (for bb_intern_add_hashed). */
uint32_t bb_intern_hash(const char *s, size_t len)
{
	return (uint32_t)(hash_bytes(s, len) >> 32);
}

/* Starts loading the home slot of hash h, so that a bb_intern_add_hashed a
 * little later does not wait for memory: with millions of ids the table is
 * far bigger than the caches and that one miss is most of an insert. */
void bb_intern_prefetch(const struct bb_intern *in, uint32_t h)
{
	BB_PREFETCH(&in->slots[h & in->mask]);
}

/* Index of s[0..len) (any bytes, NUL included), added if new. Indices are
 * dense, in order of first sight. Copies s; does not keep it. Returns BB_NONE
 * only if the table is full (2^31 strings) or len >= 4 GiB. */
uint32_t bb_intern_add(struct bb_intern *in, const char *s, size_t len)
{
	return bb_intern_add_hashed(in, s, len, bb_intern_hash(s, len));
}

/* bb_intern_add with h = bb_intern_hash(s, len) computed earlier. */
uint32_t bb_intern_add_hashed(struct bb_intern *in, const char *s, size_t len, uint32_t h)
{
	size_t i = probe(in, s, len, h);
	uint32_t k = in->slots[i].idx, n32 = (uint32_t)len;
	char *p;

	if (k != BB_NONE)
		return k;
	if (in->count >= UINT32_MAX - 1 || in->count >= in->mask || len >= UINT32_MAX - 8)
		return BB_NONE;
	k = in->count;
	if (k == in->str_cap) {
		size_t cap = in->str_cap ? (size_t)in->str_cap * 2 : 32;
		if (cap > (size_t)UINT32_MAX)
			cap = UINT32_MAX;
		in->str = bb_xrealloc(in->str, cap * sizeof *in->str);
		in->str_cap = (uint32_t)cap;
	}
	p = room(in, sizeof n32 + len + 1);
	memcpy(p, &n32, sizeof n32);
	p += sizeof n32;
	memcpy(p, s, len);
	p[len] = '\0';
	in->str[k] = p;
	in->count++;
	in->slots[i].idx = k;
	in->slots[i].hash = h;
	if ((size_t)in->count * 2 > in->mask + 1 && in->mask < UINT32_MAX)
		grow_slots(in);
	return k;
}

/* Index of s[0..len), or BB_NONE when absent. */
uint32_t bb_intern_find(const struct bb_intern *in, const char *s, size_t len)
{
	return in->slots[probe(in, s, len, (uint32_t)(hash_bytes(s, len) >> 32))].idx;
}

/* Borrowed NUL-terminated string of index i, valid (and at the same address)
 * until the table is freed. NULL when i is out of range. */
const char *bb_intern_str(const struct bb_intern *in, uint32_t i)
{
	if (i >= in->count)
		return NULL;
	return in->str[i];
}

/* Length of string i (0 when i is out of range). */
size_t bb_intern_len(const struct bb_intern *in, uint32_t i)
{
	if (i >= in->count)
		return 0;
	return len_at(in->str[i]);
}

/* Number of strings in the table. */
uint32_t bb_intern_count(const struct bb_intern *in)
{
	return in->count;
}

/* Heap bytes held, capacity included (what was asked of the allocator). */
size_t bb_intern_bytes(const struct bb_intern *in)
{
	return sizeof *in + (in->mask + 1) * sizeof *in->slots +
	       (size_t)in->str_cap * sizeof *in->str + in->blocks_cap * sizeof *in->blocks +
	       in->bytes;
}

/* trace_read.c - streaming v1 trace reader with a bounded reorder window */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "trace/trace.h"
#include "trace/trace_int.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#define SSE2 1
#endif

/*
 * Input comes in READ_BLOCK reads into one buffer that also holds the longest
 * line (BB_LINE_MAX), so memory stays constant however long the trace is.
 * Each record line is parsed once, straight into a pending slot that owns a
 * copy of its id and attributes (node names are interned at once). Pending
 * records wait in a sorted FIFO (records that arrive in order: O(1) each) or,
 * when they arrive out of order, in a binary min-heap; both are keyed by
 * (timestamp, input sequence) so ties keep input order. Once more than
 * `window` records are pending, the least one is handed out.
 *
 * With unique ids the id table outgrows the caches and interning an id costs
 * a memory round trip; so a record's id slot is prefetched when it is parsed
 * and the id interned ID_LAG records later (or before the record is handed
 * out, whichever comes first), in input order, so indices still follow first
 * sight.
 */

#define READ_BLOCK (1u << 20)
#define BUF_CAP ((size_t)BB_LINE_MAX + 1 + READ_BLOCK)
#define META_MAX 65536      /* metadata lines kept; more are counted */
#define QUOTE_MAX 40        /* bytes of offending text quoted in messages */
#define QUOTE_SZ (QUOTE_MAX + 16)
#define LINE_LONG 2         /* fetch_line: a line longer than BB_LINE_MAX */
#define REL_KEEP ((size_t)4 << 20) /* bytes of a mapped trace kept behind the reader */
#define ID_LAG 16           /* ids are interned this many records after parsing */
#define ID_DEFERRED (UINT32_MAX - 1) /* pend.id until then; never an index */
#define NCACHE_BITS 6
#define NCACHE (1u << NCACHE_BITS) /* node-name cache entries */

struct aoff {
	uint32_t key_off, key_len, val_off, val_len;
};

/* One pending record; buf holds "id\0key\0val\0key\0val\0...". */
struct pend {
	int64_t ts_ns;
	int64_t end_ns;
	uint64_t line;
	uint64_t seq;
	uint32_t sender, receiver, id;
	uint32_t id_hash;
	enum bb_op op;
	uint32_t id_off, id_len;
	uint32_t nattrs, acap;
	struct aoff *av;
	char *buf;
	size_t cap;
};

struct hent {
	int64_t ts_ns;
	uint64_t seq;
	uint32_t slot;
};

struct bb_reader {
	char *name;
	struct bb_reader_opts opts;
	size_t window;

	/* input: exactly one of fd (ours), fp (borrowed), mem (borrowed) */
	int fd;
	FILE *fp;
	int own_fp;            /* fp is ours to fclose */
	const char *mem;
	size_t mem_len;
	size_t rel_page;       /* mem is a file map: give back pages behind pos (page size) */
	size_t rel_done;       /* mem's pages before this are given back */
	char *buf;
	size_t pos, end, scan; /* unread data is buf[pos..end); scan: LF-free bytes seen */
	int eof;               /* no more input to read into buf */
	int skipping;          /* lenient: discarding the rest of an overlong line */
	const char *line;      /* the line fetch_line returned */
	size_t line_len;
	int held;              /* fetch_line result kept back by the header scan */
	int at_end;            /* every line has been read */
	uint64_t lineno;

	struct bb_intern *nodes, *ids;
	char **meta;
	size_t nmeta, meta_cap;
	uint64_t meta_dropped;

	/* pending records */
	struct pend **slots;
	uint32_t nslots, slots_cap;
	uint32_t *freel;
	uint32_t nfree;
	uint32_t *ring;        /* FIFO of slots, sorted by (ts, seq) */
	size_t ring_cap, ring_head, ring_n; /* ring_cap: 0 or a power of two */
	int64_t ring_back_ts;
	struct hent *heap;
	size_t heap_n, heap_cap;
	uint32_t out;          /* slot handed out last, BB_NONE if none */
	struct bb_attr *out_attrs;
	size_t out_attrs_cap;
	uint64_t seq;
	int64_t last_ts;       /* timestamp handed out last */
	int have_last;
	int64_t max_ts;        /* greatest timestamp read so far */
	int have_max;

	uint32_t lag[ID_LAG];  /* slots whose id is still to intern, oldest first */
	uint32_t lag_head, lag_n;

	const char *safe_end;  /* bytes up to here may be loaded (line and after) */
	struct ncache {        /* recent node names of up to 16 bytes: index */
		uint64_t w0, w1;
		uint32_t len, idx;
	} ncache[NCACHE];

	struct {               /* the seconds of the last timestamp in the common form */
		uint64_t w0, w1, m0, m1; /* its integer digits, as words, and their masks */
		size_t len;      /* its length, 0 for none */
		uint64_t sec;
	} ts;

	char *sbuf, *rbuf;     /* decoded sender and receiver when they hold '%' */
	size_t sbuf_cap, rbuf_cap;

	struct bb_reader_stats st;
	int failed;            /* sticky status after an error */
	char failmsg[sizeof(((struct bb_err *)0)->msg)];
};

/* ---- small helpers ------------------------------------------------------------ */

static inline int is_ws(char c)
{
	return c == ' ' || c == '\t';
}

static int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* "text" for a message: control bytes, '"' and '\' escaped, at most about
 * QUOTE_MAX bytes of it, "..." when cut, never splitting a UTF-8 sequence. */
static const char *quote(char out[QUOTE_SZ], const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0, i = 0;

	out[o++] = '"';
	while (i < n) {
		unsigned char c = (unsigned char)s[i];
		size_t in = 1, w = 1; /* bytes of input, bytes of output */
		if (c < 0x20 || c == 0x7f)
			w = 4;
		else if (c == '"' || c == '\\')
			w = 2;
		else if (c >= 0xc0) /* a UTF-8 lead byte: keep its sequence whole */
			while (i + in < n && in < 4 && ((unsigned char)s[i + in] & 0xc0) == 0x80)
				w = ++in;
		if (o - 1 + w > QUOTE_MAX)
			break;
		if (c < 0x20 || c == 0x7f) {
			out[o++] = '\\';
			out[o++] = 'x';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		} else if (c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = (char)c;
		} else {
			memcpy(out + o, s + i, in);
			o += in;
		}
		i += in;
	}
	out[o++] = '"';
	if (i < n) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
	return out;
}

/* "NAME:LINE: " + message into err. Returns BB_ERR_PARSE. */
static int line_err(const struct bb_reader *r, struct bb_err *err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int line_err(const struct bb_reader *r, struct bb_err *err, const char *fmt, ...)
{
	char what[sizeof err->msg];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	bb_err_set(err, "%s:%llu: %s", r->name, (unsigned long long)r->lineno, what);
	return BB_ERR_PARSE;
}

/* Percent-decodes s[0..n) into out (room for n bytes). Returns the decoded
 * length, or -1 with *bad at the offending '%'. */
static long pct_decode(const char *s, size_t n, char *out, size_t *bad)
{
	size_t o = 0, i = 0;
	const char *pc;

	while ((pc = memchr(s + i, '%', n - i)) != NULL) {
		size_t k = (size_t)(pc - s);
		int hi, lo;
		memcpy(out + o, s + i, k - i);
		o += k - i;
		if (n - k < 3) {
			*bad = k;
			return -1;
		}
		hi = hexval((unsigned char)s[k + 1]);
		lo = hexval((unsigned char)s[k + 2]);
		if (hi < 0 || lo < 0) {
			*bad = k;
			return -1;
		}
		out[o++] = (char)(hi << 4 | lo);
		i = k + 3;
	}
	memcpy(out + o, s + i, n - i);
	return (long)(o + n - i);
}

/* Why the escape at s[bad] is wrong, for a message. */
static const char *pct_why(char q[QUOTE_SZ + 64], const char *s, size_t n, size_t bad)
{
	size_t k = n - bad < 3 ? n - bad : 3;

	quote(q, s + bad, k);
	if (k < 3)
		strcat(q, " at the end: '%' must be followed by two hex digits");
	else
		strcat(q, ": '%' must be followed by two hex digits");
	return q;
}

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : 8;

	while (c < need)
		c *= 2;
	*cap = c;
	return bb_xrealloc(p, c * size);
}

/* ---- input -------------------------------------------------------------------- */

static int too_long(const char *s, size_t n)
{
	return n > BB_LINE_MAX && !(n == BB_LINE_MAX + 1 && s[n - 1] == '\r');
}

static long read_some(struct bb_reader *r, char *dst, size_t n)
{
	if (r->fp) {
		size_t k = fread(dst, 1, n, r->fp);
		if (k == 0 && ferror(r->fp))
			return -1;
		return (long)k;
	}
	for (;;) {
		ssize_t k = read(r->fd, dst, n);
		if (k < 0 && errno == EINTR)
			continue;
		return (long)k;
	}
}

/* Gives back the pages of a mapped trace more than REL_KEEP behind the
 * line being read: a long trace then does not stay resident. Every line is
 * copied into a pending slot as it is parsed and never looked at again;
 * should anything look back, the pages come back from the file. */
static void release_behind(struct bb_reader *r)
{
#ifdef MADV_DONTNEED
	size_t end = (r->pos - REL_KEEP) / r->rel_page * r->rel_page;
	if (end > r->rel_done &&
	    madvise((void *)(uintptr_t)(r->mem + r->rel_done), end - r->rel_done,
	            MADV_DONTNEED) != 0) {
		r->rel_page = 0; /* not here: stop trying */
		return;
	}
	r->rel_done = end;
#else
	r->rel_page = 0;
#endif
}

void bb_reader_release_behind(struct bb_reader *r)
{
	long page = sysconf(_SC_PAGESIZE);
	r->rel_page = page > 0 ? (size_t)page : 0;
	r->rel_done = 0;
}

/* The first LF of the avail bytes at s, or NULL: the usual record line's
 * within its first 64 bytes, looked at 16 at a time without a call (a
 * memchr call a line was 1% of table1-short's instructions). */
static inline const char *find_lf(const char *s, size_t avail)
{
#ifdef SSE2
	if (avail >= 64) {
		const __m128i lf = _mm_set1_epi8('\n');
		for (size_t o = 0; o < 64; o += 16) {
			__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(s + o));
			unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, lf));
			if (m)
				return s + o + __builtin_ctz(m);
		}
		return memchr(s + 64, '\n', avail - 64);
	}
#endif
	return memchr(s, '\n', avail);
}

/* Next line into r->line/line_len (without its LF). Returns 1, 0 at the end
 * of input, LINE_LONG for a line over BB_LINE_MAX (consumed when lenient), or
 * BB_ERR_IO with err set. */
static int fetch_line(struct bb_reader *r, struct bb_err *err)
{
	if (r->mem) {
		const char *s = r->mem + r->pos, *nl;
		size_t avail = r->mem_len - r->pos, n;
		if (avail == 0)
			return 0;
		nl = find_lf(s, avail);
		n = nl ? (size_t)(nl - s) : avail;
		r->pos += nl ? n + 1 : n;
		if (r->rel_page && r->pos - r->rel_done >= 3 * REL_KEEP)
			release_behind(r);
		r->line = s;
		r->line_len = n;
		r->safe_end = r->mem + r->mem_len;
		return too_long(s, n) ? LINE_LONG : 1;
	}
	for (;;) {
		char *s = r->buf + r->pos, *nl;
		size_t avail = r->end - r->pos;
		long k;

		nl = avail > r->scan ? memchr(s + r->scan, '\n', avail - r->scan) : NULL;
		if (nl) {
			size_t n = (size_t)(nl - s);
			r->pos += n + 1;
			r->scan = 0;
			if (r->skipping) {
				r->skipping = 0;
				return LINE_LONG;
			}
			r->line = s;
			r->line_len = n;
			r->safe_end = r->buf + r->end;
			return too_long(s, n) ? LINE_LONG : 1;
		}
		r->scan = avail;
		if (r->eof) {
			r->pos = r->end;
			r->scan = 0;
			if (r->skipping) {
				r->skipping = 0;
				return LINE_LONG;
			}
			if (avail == 0)
				return 0;
			r->line = s;
			r->line_len = avail;
			r->safe_end = r->buf + r->end;
			return too_long(s, avail) ? LINE_LONG : 1;
		}
		if (avail > (size_t)BB_LINE_MAX + 1) {
			if (!r->opts.lenient)
				return LINE_LONG;
			r->skipping = 1; /* drop what we have, keep looking for the LF */
			r->pos = r->end = r->scan = 0;
		} else if (r->pos) {
			memmove(r->buf, s, avail);
			r->pos = 0;
			r->end = avail;
		}
		k = read_some(r, r->buf + r->end, BUF_CAP - r->end);
		if (k < 0) {
			bb_err_set(err, "%s: read error: %s", r->name, strerror(errno));
			return BB_ERR_IO;
		}
		if (k == 0)
			r->eof = 1;
		r->end += (size_t)k;
		r->st.bytes += (uint64_t)k;
	}
}

/* ---- pending records ------------------------------------------------------------ */

static uint32_t get_slot(struct bb_reader *r)
{
	struct pend *pd;

	if (r->nfree)
		return r->freel[--r->nfree];
	if (r->nslots == r->slots_cap) {
		size_t cap = r->slots_cap;
		r->slots = grow(r->slots, &cap, (size_t)r->nslots + 1, sizeof *r->slots);
		r->freel = bb_xrealloc(r->freel, cap * sizeof *r->freel);
		r->slots_cap = (uint32_t)cap;
	}
	pd = bb_xcalloc(1, sizeof *pd);
	r->slots[r->nslots] = pd;
	return r->nslots++;
}

static inline void put_slot(struct bb_reader *r, uint32_t s)
{
	r->freel[r->nfree++] = s;
}

static inline int hless(const struct hent *a, const struct hent *b)
{
	return a->ts_ns < b->ts_ns || (a->ts_ns == b->ts_ns && a->seq < b->seq);
}

static void heap_push(struct bb_reader *r, const struct pend *pd, uint32_t slot)
{
	struct hent e = {pd->ts_ns, pd->seq, slot};
	size_t i;

	if (r->heap_n == r->heap_cap)
		r->heap = grow(r->heap, &r->heap_cap, r->heap_n + 1, sizeof *r->heap);
	i = r->heap_n++;
	while (i > 0) {
		size_t parent = (i - 1) / 2;
		if (!hless(&e, &r->heap[parent]))
			break;
		r->heap[i] = r->heap[parent];
		i = parent;
	}
	r->heap[i] = e;
}

static uint32_t heap_pop(struct bb_reader *r)
{
	uint32_t top = r->heap[0].slot;
	struct hent e = r->heap[--r->heap_n];
	size_t i = 0, n = r->heap_n;

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && hless(&r->heap[c + 1], &r->heap[c]))
			c++;
		if (!hless(&r->heap[c], &e))
			break;
		r->heap[i] = r->heap[c];
		i = c;
	}
	if (n)
		r->heap[i] = e;
	return top;
}

static void ring_push(struct bb_reader *r, uint32_t slot, int64_t ts)
{
	if (r->ring_n == r->ring_cap) {
		size_t cap = r->ring_cap ? r->ring_cap * 2 : 64;
		uint32_t *nr = bb_xmalloc(cap * sizeof *nr);
		for (size_t i = 0; i < r->ring_n; i++)
			nr[i] = r->ring[(r->ring_head + i) % r->ring_cap];
		free(r->ring);
		r->ring = nr;
		r->ring_cap = cap;
		r->ring_head = 0;
	}
	r->ring[(r->ring_head + r->ring_n) & (r->ring_cap - 1)] = slot; /* a power of two */
	r->ring_n++;
	r->ring_back_ts = ts;
}

static void pend_push(struct bb_reader *r, uint32_t slot)
{
	struct pend *pd = r->slots[slot];

	if (r->ring_n == 0 || pd->ts_ns >= r->ring_back_ts)
		ring_push(r, slot, pd->ts_ns);
	else
		heap_push(r, pd, slot);
}

/* Removes the least pending record: the FIFO's front or the heap's top. */
static uint32_t pend_pop(struct bb_reader *r)
{
	uint32_t s;

	if (r->ring_n) {
		s = r->ring[r->ring_head];
		if (r->heap_n) {
			const struct pend *pd = r->slots[s];
			struct hent f = {pd->ts_ns, pd->seq, s};
			if (hless(&r->heap[0], &f))
				return heap_pop(r);
		}
		r->ring_head = r->ring_head + 1 == r->ring_cap ? 0 : r->ring_head + 1;
		r->ring_n--;
		return s;
	}
	return heap_pop(r);
}

/* ---- parsing --------------------------------------------------------------------- */

/* Next field (white space separated) of the text from *pp to end: 1 with f, n set, 0 if none. */
static inline int next_field(const char **pp, const char *end, const char **f, size_t *n)
{
	const char *p = *pp;

	while (p < end && is_ws(*p))
		p++;
	if (p == end)
		return 0;
	*f = p;
	while (p < end && !is_ws(*p))
		p++;
	*n = (size_t)(p - *f);
	*pp = p;
	return 1;
}

#define F_PCT 1u /* the field holds a '%' */
#define F_NUL 2u /* the field holds a NUL byte */

/* A record field, with what one pass over it learnt. */
struct fld {
	const char *p;
	size_t n;
	const char *eq; /* first '=', or NULL */
	unsigned fl;
};

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && defined(__GNUC__)
#define SWAR 1
#define ONES UINT64_C(0x0101010101010101)
#define HIGHS UINT64_C(0x8080808080808080)

/* The bytes of x (8 bytes of a field, first byte lowest) that scan_field must
 * look at: white space and other bytes up to ' ', '%' and '='. Only the lowest
 * marked byte is exact (the borrow of the subtractions can mark bytes above
 * it), which is all scan_field uses. */
static inline uint64_t special8(uint64_t x)
{
	uint64_t pct = x ^ (ONES * '%'), eq = x ^ (ONES * '=');
	uint64_t m = (x - ONES * 0x21) & ~x;            /* bytes below 0x21 */
	m |= (pct - ONES) & ~pct;                       /* bytes equal to '%' */
	m |= (eq - ONES) & ~eq;                         /* bytes equal to '=' */
	return m & HIGHS;
}
#endif

#ifdef SSE2
/* The bits of the 16 bytes at p that scan_field must look at (bit i: byte
 * i): bytes up to ' ' (white space, NUL, other control bytes), '%' and
 * '='. Exact for every byte, unlike special8. */
static inline unsigned special16(const char *p)
{
	const __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
	__m128i m = _mm_cmpeq_epi8(_mm_min_epu8(x, _mm_set1_epi8(' ')), x);
	m = _mm_or_si128(m, _mm_cmpeq_epi8(x, _mm_set1_epi8('%')));
	m = _mm_or_si128(m, _mm_cmpeq_epi8(x, _mm_set1_epi8('=')));
	return (unsigned)_mm_movemask_epi8(m);
}
#endif

/* next_field that also notes '%', NUL and the first '=': one pass over the
 * bytes instead of a memchr for each question. Sixteen bytes a step (eight
 * without SSE2) where the line has them: a field's plain bytes are skipped
 * a block at a time and only the marked ones looked at. lim (>= end): bytes
 * up to lim may be loaded, those from end on are not looked at. */
static inline int scan_field(const char **pp, const char *end, const char *lim,
                             struct fld *f)
{
	const char *p = *pp, *eq = NULL;
	unsigned fl = 0;

	while (p < end && is_ws(*p))
		p++;
	if (p == end)
		return 0;
	f->p = p;
	while (p < end) {
#ifdef SSE2
		if (lim - p >= 16) {
			unsigned m = special16(p);
			if (end - p < 16)
				m |= 1u << (end - p); /* stop at end */
			if (!m) {
				p += 16;
				continue;
			}
			p += __builtin_ctz(m);
			if (p >= end)
				break;
		}
#elif defined(SWAR)
		(void)lim;
		if (end - p >= 8) {
			uint64_t x;
			memcpy(&x, p, 8);
			uint64_t m = special8(x);
			if (!m) {
				p += 8;
				continue;
			}
			p += __builtin_ctzll(m) / 8;
		}
#else
		(void)lim;
#endif
		unsigned char c = (unsigned char)*p;
		if (c > '=' || (c > ' ' && c != '%' && c != '=')) {
			p++;
			continue;
		}
		if (c == ' ' || c == '\t')
			break;
		if (c == '%')
			fl |= F_PCT;
		else if (c == '=')
			eq = eq ? eq : p;
		else if (c == '\0')
			fl |= F_NUL;
		p++;
	}
	f->n = (size_t)(p - f->p);
	f->eq = eq;
	f->fl = fl;
	*pp = p;
	return 1;
}

/* pct_decode of s[0..n), a part of field f: a plain copy when f has no '%'. */
static inline long decode(const struct fld *f, const char *s, size_t n, char *out, size_t *bad)
{
	if (!(f->fl & F_PCT)) {
		memcpy(out, s, n);
		return (long)n;
	}
	return pct_decode(s, n, out, bad);
}

/* A node name, percent-decoded into *scratch when it holds a '%'. */
static int node_field_slow(struct bb_reader *r, const char *what, const struct fld *fd,
                      char **scratch, size_t *cap, const char **out, size_t *out_n,
                      struct bb_err *err)
{
	char q[QUOTE_SZ], q2[QUOTE_SZ + 64];
	const char *f = fd->p;
	size_t n = fd->n;

	if (fd->fl & F_NUL)
		return line_err(r, err, "bad %s %s (contains a NUL byte)", what, quote(q, f, n));
	if (!(fd->fl & F_PCT)) {
		*out = f;
		*out_n = n;
		return 0;
	}
	if (*cap < n) {
		free(*scratch);
		*cap = n;
		*scratch = bb_xmalloc(n);
	}
	size_t bad = 0;
	long k = pct_decode(f, n, *scratch, &bad);
	if (k < 0)
		return line_err(r, err, "bad percent-encoding in %s %s (%s)", what, quote(q, f, n),
		                pct_why(q2, f, n, bad));
	if (memchr(*scratch, '\0', (size_t)k))
		return line_err(r, err, "bad %s %s (encodes a NUL byte)", what, quote(q, f, n));
	*out = *scratch;
	*out_n = (size_t)k;
	return 0;
}

/* node_field with the common case (neither '%' nor NUL: the name as it
 * stands in the line) inline. */
static inline int node_field(struct bb_reader *r, const char *what, const struct fld *fd,
                             char **scratch, size_t *cap, const char **out, size_t *out_n,
                             struct bb_err *err)
{
	if (!(fd->fl & (F_NUL | F_PCT))) {
		*out = fd->p;
		*out_n = fd->n;
		return 0;
	}
	return node_field_slow(r, what, fd, scratch, cap, out, out_n, err);
}

#ifdef SWAR
/* The first n (at most 16) bytes of 16 kept: a window of keep_bytes. */
static const unsigned char keep_bytes[32] = {
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
};

/* node_intern's miss: the name interned, and cached in c. Out of line, so
 * that the hit, on most lines, saves no registers. */
static __attribute__((noinline)) uint32_t node_miss(struct bb_reader *r, struct ncache *c,
                                                    const char *s, size_t n, uint64_t w0,
                                                    uint64_t w1)
{
	uint32_t idx = bb_intern_add(r->nodes, s, n);
	c->w0 = w0;
	c->w1 = w1;
	c->len = (uint32_t)n;
	c->idx = idx;
	return idx;
}
#endif

/* bb_intern_add of a node name, through a small cache of recent names: a
 * trace has few nodes, each on most lines, and a name of up to 16 bytes is
 * compared as two words instead of hashed and looked up. in_line: s lies in
 * the line just fetched (not percent-decoded into scratch memory), so the
 * cache can load 16 bytes from it when they lie below r->safe_end. */
static inline uint32_t node_intern(struct bb_reader *r, const char *s, size_t n, int in_line)
{
#ifdef SWAR
	if (n <= 16 && in_line && r->safe_end - s >= 16) {
		uint64_t w0, w1, m0, m1;
		memcpy(&w0, s, 8);
		memcpy(&w1, s + 8, 8);
		memcpy(&m0, keep_bytes + 16 - n, 8); /* the name's bytes alone */
		memcpy(&m1, keep_bytes + 24 - n, 8);
		w0 &= m0;
		w1 &= m1;
		/* the top bits of a product depend on every bit of the word */
		uint64_t h = (w0 ^ n) * UINT64_C(0x9E3779B97F4A7C15) + w1 * UINT64_C(0xC2B2AE3D27D4EB4F);
		struct ncache *c = &r->ncache[h >> (64 - NCACHE_BITS)];
		if (c->len == n && c->w0 == w0 && c->w1 == w1)
			return c->idx;
		return node_miss(r, c, s, n, w0, w1);
	}
#endif
	return bb_intern_add(r->nodes, s, n);
}

/* The usual ops as they are written (CALL, RET, MSG): 1 with *op set, else
 * 0 (parse_op's table then takes the others and other cases). */
static inline int op_usual(const char *f, size_t n, enum bb_op *op)
{
	if (n == 4 && !memcmp(f, "CALL", 4))
		*op = BB_CALL;
	else if (n == 3 && !memcmp(f, "RET", 3))
		*op = BB_RET;
	else if (n == 3 && !memcmp(f, "MSG", 3))
		*op = BB_MSG;
	else
		return 0;
	return 1;
}

static int parse_op(struct bb_reader *r, const char *f, size_t n, enum bb_op *op,
                    struct bb_err *err)
{
	static const struct {
		const char *name;
		enum bb_op op;
	} ops[] = {
		{"CALL", BB_CALL}, {"RET", BB_RET}, {"MSG", BB_MSG},
		{"CALL_SENT", BB_CALL}, {"RET_SENT", BB_RET},
	};
	char q[QUOTE_SZ];
	int upper_match = 0;

	if (op_usual(f, n, op)) /* without the table */
		return 0;
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
		size_t k = strlen(ops[i].name);
		if (k != n)
			continue;
		if (!memcmp(f, ops[i].name, n)) {
			*op = ops[i].op;
			return 0;
		}
		upper_match = 1;
		for (size_t j = 0; j < n; j++) {
			char c = f[j];
			if (c >= 'a' && c <= 'z')
				c = (char)(c - 'a' + 'A');
			if (c != ops[i].name[j])
				upper_match = 0;
		}
		if (upper_match)
			break;
	}
	if (upper_match)
		return line_err(r, err, "bad op %s (ops are upper case: CALL, RET or MSG)",
		                quote(q, f, n));
	return line_err(r, err, "bad op %s (expected CALL, RET or MSG)", quote(q, f, n));
}

/* The end of a good record line: its nodes interned, its id's slot
 * prefetched (interned ID_LAG records later). */
static inline void record_done(struct bb_reader *r, struct pend *pd, const char *snd,
                               size_t snd_n, int snd_in, const char *rcv, size_t rcv_n,
                               int rcv_in)
{
	if (pd->acap > 1024 && pd->nattrs < pd->acap / 4) {
		pd->acap = pd->nattrs < 8 ? 8 : pd->nattrs;
		pd->av = bb_xrealloc(pd->av, pd->acap * sizeof *pd->av);
	}
	pd->sender = node_intern(r, snd, snd_n, snd_in);
	pd->receiver = node_intern(r, rcv, rcv_n, rcv_in);
	pd->id = BB_NONE;
	if (r->opts.intern_ids && !(pd->id_len == 1 && pd->buf[0] == '-')) {
		pd->id = ID_DEFERRED;
		pd->id_hash = bb_intern_hash(pd->buf, pd->id_len);
		bb_intern_prefetch(r->ids, pd->id_hash);
	}
}

/* Room in pd->buf for a record line of len bytes: decoding only shrinks,
 * and each field gains one NUL where its '=' or separator was, so the
 * line's length plus a little always fits; the id, first, is followed by
 * BB_REC_ID_PAD bytes or more (trace.h). */
static inline void pend_room(struct pend *pd, size_t len)
{
	size_t need = len + 16;
	if (pd->cap < need || (pd->cap > 65536 && need < pd->cap / 4)) {
		free(pd->buf);
		pd->cap = need < 256 ? 256 : need;
		pd->buf = bb_xmalloc(pd->cap);
	}
}

static inline struct aoff *attr_add(struct pend *pd)
{
	if (pd->nattrs == pd->acap) {
		size_t cap = pd->acap;
		pd->av = grow(pd->av, &cap, (size_t)pd->acap + 1, sizeof *pd->av);
		pd->acap = (uint32_t)cap;
	}
	return &pd->av[pd->nattrs++];
}

#ifdef SSE2
/* The 16 bytes at p as bits (bit i: byte i): white space (*ws), '%' or NUL
 * (*pn), '='  (*eq). */
static inline void marks16(const char *p, unsigned *ws, unsigned *pn, unsigned *eq)
{
	const __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
	__m128i w = _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8(' ')),
	                         _mm_cmpeq_epi8(x, _mm_set1_epi8('\t')));
	__m128i q = _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('%')),
	                         _mm_cmpeq_epi8(x, _mm_setzero_si128()));
	*ws = (unsigned)_mm_movemask_epi8(w);
	*pn = (unsigned)_mm_movemask_epi8(q);
	*eq = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8('=')));
}

/* bb_time_parse_why of the timestamp at s (len bytes, 16 of them loadable)
 * for parse_fast: one in the common form (1 to 10 digits, '.', 9 digits)
 * with the integer digits of the last one takes its seconds from it (a
 * trace has many lines a second), by the same arithmetic; any other goes
 * to bb_time_parse_why. */
static inline int ts_parse(struct bb_reader *r, const char *s, size_t len, int64_t *ns)
{
	size_t nint = len - 10;
	uint64_t w0, w1;
	memcpy(&w0, s, 8);
	memcpy(&w1, s + 8, 8);
	if (len == r->ts.len && s[nint] == '.' && (w0 & r->ts.m0) == r->ts.w0 &&
	    (w1 & r->ts.m1) == r->ts.w1) {
		int64_t frac = bb_time_decimals9(s + len - 9);
		if (frac >= 0 && r->ts.sec * (uint64_t)BB_NS_PER_S <= (uint64_t)(INT64_MAX - frac)) {
			*ns = (int64_t)(r->ts.sec * (uint64_t)BB_NS_PER_S) + frac;
			return BB_TP_OK;
		}
	}
	if (!bb_time_parse_common(s, len, ns))
		return bb_time_parse_why(s, len, ns);
	/* the common form: *ns is its seconds and 9 decimals */
	r->ts.m0 = nint >= 8 ? ~UINT64_C(0) : ~UINT64_C(0) >> (64 - 8 * nint);
	r->ts.m1 = nint > 8 ? ~UINT64_C(0) >> (64 - 8 * (nint - 8)) : 0;
	r->ts.w0 = w0 & r->ts.m0;
	r->ts.w1 = w1 & r->ts.m1;
	r->ts.len = len;
	r->ts.sec = (uint64_t)*ns / (uint64_t)BB_NS_PER_S;
	return BB_TP_OK;
}

/* memcpy of a field of parse_fast's line into pd->buf: 16 bytes at once
 * when it is no longer and they can be loaded (pd->buf holds the line's
 * length plus 16, and at least 256 bytes). */
static inline void field_copy(struct bb_reader *r, char *dst, const char *src, size_t n)
{
	if (n <= 16 && r->safe_end - src >= 16)
		_mm_storeu_si128((__m128i *)(void *)dst,
		                 _mm_loadu_si128((const __m128i *)(const void *)src));
	else
		memcpy(dst, src, n);
}

/* The next field of a line's masks: [*st, *en) from the lowest bits of
 * starts and lasts (its first and last byte), which lose them. */
static inline int next_mask_field(uint64_t *starts, uint64_t *lasts, unsigned *st, unsigned *en)
{
	if (!*starts)
		return 0;
	*st = (unsigned)__builtin_ctzll(*starts);
	*en = (unsigned)__builtin_ctzll(*lasts) + 1;
	*starts &= *starts - 1;
	*lasts &= *lasts - 1;
	return 1;
}

/* parse_record for the usual line, whose bytes it looks at 16 at a time
 * all at once: at most 64 bytes, neither '%' nor NUL, an op of CALL, RET
 * or MSG, and after the id attributes alone, each with a key, none of them
 * end=. Returns 1 with pd filled as parse_record fills it, 0 for any other
 * line, which parse_record then takes from its start (nothing has been
 * interned, and pd holds nothing it will not set again). */
static int parse_fast(struct bb_reader *r, const char *s, size_t n, struct pend *pd)
{
	if (n > 64 || r->safe_end - s < 64)
		return 0;
	uint64_t ws = 0, pn = 0, eq = 0;
	for (unsigned b = 0; b < 4; b++) {
		unsigned w, q, e;
		marks16(s + 16 * b, &w, &q, &e);
		ws |= (uint64_t)w << (16 * b);
		pn |= (uint64_t)q << (16 * b);
		eq |= (uint64_t)e << (16 * b);
	}
	const uint64_t in = n == 64 ? ~UINT64_C(0) : (UINT64_C(1) << n) - 1;
	const uint64_t fb = ~ws & in; /* the bytes of fields */
	if ((pn & in) || (ws & 1))
		return 0;
	uint64_t starts = fb & ~(fb << 1), lasts = fb & ~(fb >> 1);
	unsigned st[5], en[5];
	for (int i = 0; i < 5; i++)
		if (!next_mask_field(&starts, &lasts, &st[i], &en[i]))
			return 0;
	if (ts_parse(r, s, en[0], &pd->ts_ns))
		return 0;
	if (!op_usual(s + st[1], en[1] - st[1], &pd->op))
		return 0;
	pend_room(pd, n);
	size_t o = en[4] - st[4];
	field_copy(r, pd->buf, s + st[4], o);
	pd->id_off = 0;
	pd->id_len = (uint32_t)o;
	pd->buf[o++] = '\0';
	pd->nattrs = 0;
	pd->end_ns = BB_NO_TIME;
	unsigned a0, a1;
	while (next_mask_field(&starts, &lasts, &a0, &a1)) {
		/* its first '=' */
		uint64_t e = eq & (a1 == 64 ? ~UINT64_C(0) : (UINT64_C(1) << a1) - 1) &
		             ~((UINT64_C(1) << a0) - 1);
		if (!e)
			return 0;
		size_t kl = (size_t)__builtin_ctzll(e) - a0, vl = a1 - a0 - kl - 1;
		if (kl == 0 || (kl == 3 && !memcmp(s + a0, "end", 3)))
			return 0;
		struct aoff *a = attr_add(pd);
		a->key_off = (uint32_t)o;
		a->key_len = (uint32_t)kl;
		field_copy(r, pd->buf + o, s + a0, kl);
		o += kl;
		pd->buf[o++] = '\0';
		a->val_off = (uint32_t)o;
		a->val_len = (uint32_t)vl;
		field_copy(r, pd->buf + o, s + a0 + kl + 1, vl);
		o += vl;
		pd->buf[o++] = '\0';
	}
	record_done(r, pd, s + st[2], en[2] - st[2], 1, s + st[3], en[3] - st[3], 1);
	return 1;
}
#endif

/* Parses record line [p, end) (no line end, not blank, not '#') into pd.
 * Returns 0, or BB_ERR_PARSE with err set. Nothing is interned unless the
 * whole line is good. */
static int parse_record(struct bb_reader *r, const char *p, const char *end, struct pend *pd,
                        struct bb_err *err)
{
	const char *snd, *rcv;
	struct fld f;
	size_t snd_n, rcv_n, need = (size_t)(end - p) + 16, o = 0, bad = 0;
	char q[QUOTE_SZ], q2[QUOTE_SZ + 64];
	int why, have_end = 0, snd_in, rcv_in;
	long k;

	if (is_ws(*p))
		return line_err(r, err, "empty timestamp (the line starts with white space)");
	scan_field(&p, end, r->safe_end, &f);
	why = bb_time_parse_why(f.p, f.n, &pd->ts_ns);
	if (why)
		return line_err(r, err, "bad timestamp %s (%s)", quote(q, f.p, f.n), bb_time_why(why));
	if (!scan_field(&p, end, r->safe_end, &f))
		return line_err(r, err, "missing op");
	if (parse_op(r, f.p, f.n, &pd->op, err))
		return BB_ERR_PARSE;
	if (!scan_field(&p, end, r->safe_end, &f))
		return line_err(r, err, "missing sender");
	if (node_field(r, "sender", &f, &r->sbuf, &r->sbuf_cap, &snd, &snd_n, err))
		return BB_ERR_PARSE;
	snd_in = !(f.fl & F_PCT);
	if (!scan_field(&p, end, r->safe_end, &f))
		return line_err(r, err, "missing receiver");
	if (node_field(r, "receiver", &f, &r->rbuf, &r->rbuf_cap, &rcv, &rcv_n, err))
		return BB_ERR_PARSE;
	rcv_in = !(f.fl & F_PCT);
	if (!scan_field(&p, end, r->safe_end, &f))
		return line_err(r, err, "missing id (\"-\" when there is none)");

	pend_room(pd, need - 16);
	k = decode(&f, f.p, f.n, pd->buf, &bad);
	if (k < 0)
		return line_err(r, err, "bad percent-encoding in id %s (%s)", quote(q, f.p, f.n),
		                pct_why(q2, f.p, f.n, bad));
	pd->id_off = 0;
	pd->id_len = (uint32_t)k;
	pd->buf[k] = '\0';
	o = (size_t)k + 1;

	pd->nattrs = 0;
	pd->end_ns = BB_NO_TIME;
	while (scan_field(&p, end, r->safe_end, &f)) {
		struct aoff *a;
		size_t kl;

		if (!f.eq)
			return line_err(r, err, "bad attribute %s (no '=')", quote(q, f.p, f.n));
		kl = (size_t)(f.eq - f.p);
		if (kl == 0)
			return line_err(r, err, "bad attribute %s (empty key)", quote(q, f.p, f.n));
		a = attr_add(pd);
		a->key_off = (uint32_t)o;
		a->key_len = (uint32_t)kl;
		memcpy(pd->buf + o, f.p, kl);
		o += kl;
		pd->buf[o++] = '\0';
		k = decode(&f, f.eq + 1, f.n - kl - 1, pd->buf + o, &bad);
		if (k < 0)
			return line_err(r, err, "bad percent-encoding in attribute %s (%s)",
			                quote(q, f.p, kl), pct_why(q2, f.eq + 1, f.n - kl - 1, bad));
		a->val_off = (uint32_t)o;
		a->val_len = (uint32_t)k;
		o += (size_t)k;
		pd->buf[o++] = '\0';
		if (kl == 3 && !memcmp(f.p, "end", 3) && !have_end) {
			const char *v = pd->buf + a->val_off;
			have_end = 1;
			why = bb_time_parse_why(v, (size_t)k, &pd->end_ns);
			if (why)
				return line_err(r, err, "bad end= time %s (%s)", quote(q, v, (size_t)k),
				                bb_time_why(why));
			if (pd->end_ns < pd->ts_ns) {
				char t[BB_TIME_BUFSZ];
				bb_time_format(pd->ts_ns, t);
				return line_err(r, err, "bad end= time %s (before the timestamp %s)",
				                quote(q, v, (size_t)k), t);
			}
		}
	}
	record_done(r, pd, snd, snd_n, snd_in, rcv, rcv_n, rcv_in);
	return 0;
}

/* Interns the id of the oldest record in the lag queue. */
static void lag_pop(struct bb_reader *r)
{
	struct pend *pd = r->slots[r->lag[r->lag_head]];

	pd->id = bb_intern_add_hashed(r->ids, pd->buf + pd->id_off, pd->id_len, pd->id_hash);
	r->lag_head = (r->lag_head + 1) % ID_LAG;
	r->lag_n--;
}

static void lag_push(struct bb_reader *r, uint32_t slot)
{
	if (r->lag_n == ID_LAG)
		lag_pop(r);
	r->lag[(r->lag_head + r->lag_n) % ID_LAG] = slot;
	r->lag_n++;
}

/* "#..." line: the version line, or metadata to keep. Returns 0 or an error. */
static int meta_line(struct bb_reader *r, const char *s, size_t n, struct bb_err *err)
{
	char q[QUOTE_SZ];

	if (n >= 8 && !memcmp(s, "#bbtrace", 8) && (n == 8 || is_ws(s[8]))) {
		const char *p = s + 8, *end = s + n, *f;
		size_t fn;
		if (!next_field(&p, end, &f, &fn))
			return line_err(r, err, "bad version line %s (no version number)",
			                quote(q, s, n));
		if (fn != 1 || f[0] != '1')
			return line_err(r, err,
			                "unsupported trace version %s (this reader reads version 1)",
			                quote(q, f, fn));
		return 0;
	}
	if (r->nmeta == META_MAX) {
		r->meta_dropped++;
		return 0;
	}
	if (r->nmeta == r->meta_cap)
		r->meta = grow(r->meta, &r->meta_cap, r->nmeta + 1, sizeof *r->meta);
	r->meta[r->nmeta++] = bb_xstrndup(s + 1, n - 1);
	return 0;
}

static int is_blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!is_ws(s[i]))
			return 0;
	return 1;
}

/* Sticky failure: remember the message, repeat it on every later call. */
static int fail(struct bb_reader *r, struct bb_err *err, const struct bb_err *e, int status)
{
	r->failed = status;
	memcpy(r->failmsg, e->msg, sizeof r->failmsg);
	bb_err_set(err, "%s", r->failmsg);
	return status;
}

/* A bad line: an error, or (lenient) counted and skipped. */
static int bad_line(struct bb_reader *r, struct bb_err *err, const struct bb_err *e)
{
	if (!r->opts.lenient)
		return fail(r, err, e, BB_ERR_PARSE);
	r->st.skipped++;
	if (!r->st.first_bad_line)
		r->st.first_bad_line = r->lineno;
	return 0;
}

/* Consumes one line (already fetched with result k) into the reader: meta,
 * blank, or a record pushed into the pending set. Returns 0 or an error. */
static int take_line(struct bb_reader *r, int k, struct bb_err *err)
{
	struct bb_err e;
	const char *s = r->line;
	size_t n = r->line_len;
	uint32_t slot;
	struct pend *pd;

	r->lineno++;
	r->st.lines++;
	if (k == LINE_LONG) {
		line_err(r, &e, "line too long (more than %u bytes)", BB_LINE_MAX);
		return bad_line(r, err, &e);
	}
	if (n && s[n - 1] == '\r')
		n--;
	if (n == 0)
		return 0;
	if (s[0] == '#') {
		if (meta_line(r, s, n, &e))
			return fail(r, err, &e, BB_ERR_PARSE);
		return 0;
	}
	if (is_ws(s[0]) && is_blank(s, n))
		return 0;
	slot = get_slot(r);
	pd = r->slots[slot];
#ifdef SSE2
	if (!parse_fast(r, s, n, pd) && parse_record(r, s, s + n, pd, &e)) {
#else
	if (parse_record(r, s, s + n, pd, &e)) {
#endif
		put_slot(r, slot);
		return bad_line(r, err, &e);
	}
	if (r->have_last && pd->ts_ns < r->last_ts) {
		char t[BB_TIME_BUFSZ], t2[BB_TIME_BUFSZ];
		bb_time_format(pd->ts_ns, t);
		bb_time_format(r->last_ts, t2);
		line_err(r, &e, "timestamp %s is earlier than %s already read (reorder window %zu lines)",
		         t, t2, r->window);
		put_slot(r, slot);
		return bad_line(r, err, &e);
	}
	if (r->have_max && pd->ts_ns < r->max_ts) {
		r->st.reordered++;
	} else {
		r->max_ts = pd->ts_ns;
		r->have_max = 1;
	}
	pd->line = r->lineno;
	pd->seq = r->seq++;
	if (pd->id == ID_DEFERRED)
		lag_push(r, slot);
	pend_push(r, slot);
	return 0;
}

/* ---- public ----------------------------------------------------------------------- */

/* Reads the leading '#' and blank lines so that metadata is there right after
 * open; keeps the first other line back for bb_reader_next. */
static int read_header(struct bb_reader *r, struct bb_err *err)
{
	for (;;) {
		int k = fetch_line(r, err);
		if (k < 0)
			return k;
		if (k == 0) {
			r->at_end = 1;
			return 0;
		}
		if (k == 1 && (r->line_len == 0 || r->line[0] == '#' ||
		               is_blank(r->line, r->line_len))) {
			if ((k = take_line(r, k, err)) < 0)
				return k;
			continue;
		}
		r->held = k;
		return 0;
	}
}

static struct bb_reader *new_reader(const char *name, const struct bb_reader_opts *opts)
{
	struct bb_reader *r = bb_xcalloc(1, sizeof *r);

	r->name = bb_xstrndup(name, strlen(name));
	if (opts)
		r->opts = *opts;
	r->window = r->opts.window ? r->opts.window : BB_READER_WINDOW;
	r->fd = -1;
	for (size_t i = 0; i < NCACHE; i++)
		r->ncache[i].len = UINT32_MAX;
	r->nodes = bb_intern_new();
	r->ids = bb_intern_new();
	r->out = BB_NONE;
	return r;
}

/* Fails on input that is plainly not a trace (a pcap, a compressed file),
 * with what to do about it, rather than on its first line's bytes. The
 * first read is kept in the buffer for fetch_line. */
static int sniff(struct bb_reader *r, struct bb_err *err)
{
	const char *p = r->mem;
	size_t n = r->mem_len;
	if (!r->mem) {
		long k = read_some(r, r->buf, BUF_CAP);
		if (k < 0) {
			bb_err_set(err, "%s: read error: %s", r->name, strerror(errno));
			return BB_ERR_IO;
		}
		if (k == 0)
			r->eof = 1;
		r->end = (size_t)k;
		r->st.bytes += (uint64_t)k;
		p = r->buf;
		n = (size_t)k;
	}
	enum bb_fmt f = bb_fmt_sniff(p, n);
	if (f == BB_FMT_TEXT)
		return 0;
	bb_fmt_explain(f, r->name, err);
	return BB_ERR_PARSE;
}

static struct bb_reader *start(struct bb_reader *r, struct bb_err *err)
{
	if (!r->mem)
		r->buf = bb_xmalloc(BUF_CAP);
	if (sniff(r, err) < 0 || read_header(r, err) < 0) {
		bb_reader_free(r);
		return NULL;
	}
	return r;
}

/* Opens path ("-" is standard input, read through fd 0 so that a pipe
 * delivers lines as they come). Returns new or NULL with err set. */
struct bb_reader *bb_reader_open(const char *path, const struct bb_reader_opts *opts,
                                 struct bb_err *err)
{
	struct bb_reader *r;
	int fd;

	if (!strcmp(path, "-")) {
		r = new_reader("<stdin>", opts);
		r->fd = STDIN_FILENO;
		return start(r, err);
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		bb_err_set(err, "%s: cannot open: %s", path, strerror(errno));
		return NULL;
	}
	r = new_reader(path, opts);
	r->fd = fd;
	return start(r, err);
}

/* Borrows fp (never closed here); name is copied. Returns new or NULL. */
struct bb_reader *bb_reader_fopen(FILE *fp, const char *name,
                                  const struct bb_reader_opts *opts, struct bb_err *err)
{
	struct bb_reader *r = new_reader(name ? name : "<stream>", opts);

	r->fp = fp;
	return start(r, err);
}

/* Takes fp over (fclose'd by bb_reader_free, also when this fails). */
struct bb_reader *bb_reader_fopen_own(FILE *fp, const char *name,
                                      const struct bb_reader_opts *opts, struct bb_err *err)
{
	struct bb_reader *r = new_reader(name ? name : "<stream>", opts);

	r->fp = fp;
	r->own_fp = 1;
	return start(r, err);
}

/* Borrows buf for the reader's life; name is copied. Returns new or NULL. */
struct bb_reader *bb_reader_mem(const char *buf, size_t len, const char *name,
                                const struct bb_reader_opts *opts, struct bb_err *err)
{
	struct bb_reader *r = new_reader(name ? name : "<memory>", opts);

	r->mem = buf ? buf : "";
	r->mem_len = buf ? len : 0;
	r->st.bytes = r->mem_len;
	return start(r, err);
}

/* Frees the reader, its tables and metadata; closes what it opened. NULL is fine. */
void bb_reader_free(struct bb_reader *r)
{
	if (!r)
		return;
	if (r->fd > STDIN_FILENO)
		close(r->fd);
	if (r->own_fp && r->fp)
		fclose(r->fp);
	for (uint32_t i = 0; i < r->nslots; i++) {
		free(r->slots[i]->buf);
		free(r->slots[i]->av);
		free(r->slots[i]);
	}
	for (size_t i = 0; i < r->nmeta; i++)
		free(r->meta[i]);
	free(r->meta);
	free(r->slots);
	free(r->freel);
	free(r->ring);
	free(r->heap);
	free(r->out_attrs);
	free(r->sbuf);
	free(r->rbuf);
	free(r->buf);
	bb_intern_free(r->nodes);
	bb_intern_free(r->ids);
	free(r->name);
	free(r);
}

/* Starts loading the records that may be handed out next (the FIFO's front
 * and the heap's top): with a big window they have left the cache since they
 * were parsed, and the next call will want them. Only the structs: reaching
 * their strings would wait for the structs. */
static void prefetch_next(const struct bb_reader *r)
{
	if (r->ring_n)
		BB_PREFETCH(r->slots[r->ring[r->ring_head]]);
	if (r->heap_n)
		BB_PREFETCH(r->slots[r->heap[0].slot]);
}

static int hand_out(struct bb_reader *r, struct bb_rec *rec)
{
	uint32_t s = pend_pop(r);
	const struct pend *pd = r->slots[s];

	while (pd->id == ID_DEFERRED)
		lag_pop(r);
	r->out = s;
	r->last_ts = pd->ts_ns;
	r->have_last = 1;
	if (pd->nattrs > r->out_attrs_cap)
		r->out_attrs = grow(r->out_attrs, &r->out_attrs_cap, pd->nattrs, sizeof *r->out_attrs);
	for (uint32_t i = 0; i < pd->nattrs; i++) {
		const struct aoff *a = &pd->av[i];
		r->out_attrs[i].key = pd->buf + a->key_off;
		r->out_attrs[i].key_len = a->key_len;
		r->out_attrs[i].val = pd->buf + a->val_off;
		r->out_attrs[i].val_len = a->val_len;
	}
	rec->ts_ns = pd->ts_ns;
	rec->end_ns = pd->end_ns;
	rec->line = pd->line;
	rec->op = pd->op;
	rec->sender = pd->sender;
	rec->receiver = pd->receiver;
	rec->id = pd->id;
	rec->id_str = pd->buf + pd->id_off;
	rec->id_len = pd->id_len;
	rec->nattrs = pd->nattrs;
	rec->attrs = r->out_attrs;
	r->st.records++;
	prefetch_next(r);
	return 1;
}

/* Next record in (timestamp, input order). Returns 1, 0 at the end, or a
 * negative bb_status with err set. Strings in *rec are borrowed until the
 * next call. After an error the reader is finished: later calls return the
 * same error again. */
int bb_reader_next(struct bb_reader *r, struct bb_rec *rec, struct bb_err *err)
{
	if (r->failed) {
		bb_err_set(err, "%s", r->failmsg);
		return r->failed;
	}
	if (r->out != BB_NONE) {
		put_slot(r, r->out);
		r->out = BB_NONE;
	}
	for (;;) {
		size_t npend = r->ring_n + r->heap_n;
		struct bb_err e;
		int k;

		if (npend > r->window || (r->at_end && npend))
			return hand_out(r, rec);
		if (r->at_end)
			return 0;
		if (r->held) {
			k = r->held;
			r->held = 0;
		} else {
			k = fetch_line(r, &e);
		}
		if (k == 0) {
			r->at_end = 1;
			continue;
		}
		if (k < 0)
			return fail(r, err, &e, k);
		if ((k = take_line(r, k, err)) < 0)
			return k;
	}
}

/* Borrowed; owned by the reader. */
struct bb_intern *bb_reader_nodes(const struct bb_reader *r)
{
	return r->nodes;
}

/* Borrowed; empty unless opts.intern_ids. */
struct bb_intern *bb_reader_ids(const struct bb_reader *r)
{
	return r->ids;
}

/* Borrowed name of node i, NULL if i is not a node index. */
const char *bb_reader_node(const struct bb_reader *r, uint32_t i)
{
	return bb_intern_str(r->nodes, i);
}

/* Metadata lines read so far (all of the header once the reader is open). */
size_t bb_reader_nmeta(const struct bb_reader *r)
{
	return r->nmeta;
}

/* Borrowed text of metadata line i (without '#'), NULL if out of range. */
const char *bb_reader_meta(const struct bb_reader *r, size_t i)
{
	return i < r->nmeta ? r->meta[i] : NULL;
}

/* Fills *st with the counts so far. */
void bb_reader_stats(const struct bb_reader *r, struct bb_reader_stats *st)
{
	*st = r->st;
	st->meta_dropped = r->meta_dropped;
}

uint64_t bb_reader_offset(const struct bb_reader *r)
{
	if (r->mem)
		return r->pos;
	return r->st.bytes - (uint64_t)(r->end - r->pos);
}

/* Borrowed. */
const char *bb_reader_name(const struct bb_reader *r)
{
	return r->name;
}

/* First attribute named key, NULL if none. */
const char *bb_rec_attr(const struct bb_rec *rec, const char *key, size_t *len_out)
{
	size_t kl = SIZE_MAX; /* strlen(key), once a first byte matches */

	for (uint32_t i = 0; i < rec->nattrs; i++) {
		const struct bb_attr *a = &rec->attrs[i];
		if (a->key_len ? a->key[0] != key[0] : key[0] != '\0')
			continue; /* the first bytes differ (an empty key's is key's NUL) */
		if (kl == SIZE_MAX)
			kl = strlen(key);
		if (a->key_len == kl && !memcmp(a->key, key, kl)) {
			if (len_out)
				*len_out = a->val_len;
			return a->val;
		}
	}
	return NULL;
}

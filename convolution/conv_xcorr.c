/* conv_xcorr.c - cross-correlation over a bounded lag window: direct pairs or blockwise FFT */
/* SPDX-License-Identifier: MIT */
#include <assert.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fftw3.h>

#include "convolution/conv_int.h"

/* Both methods compute C(d) = sum_t s1(t) s2(t + d) for d in [lag_lo, lag_hi]
 * only: causal delays are bounded, so nothing outside that window is needed.
 *
 * Direct: for each non-empty quantum of s1, the non-empty quanta of s2 within
 * [q + lag_lo, q + lag_hi] (two pointers). Work: the number of such pairs.
 *
 * FFT (overlap-save): time is cut into blocks of B quanta. Block b of s1,
 * zero-padded to N = B + L - 1 points (L = lag_hi - lag_lo + 1), is
 * correlated circularly with the N points of s2 starting at b B + lag_lo;
 * no product wraps around, so lags 0..L-1 of the circular result are exact.
 * The products conj(S1_b) S2_b are summed in the frequency domain over the
 * blocks and transformed back once. Only blocks where both signals have
 * messages are transformed. s2's segment spectra depend only on (signal,
 * block), so they are cached: a node's outgoing signal is transformed once
 * per run, however many paths pass through it, as long as the cache holds.
 * Memory: the cache bound plus a few arrays of N points. */

/* One multiply-add of the direct loop is the unit; a transform of N points
 * costs about FFT_UNIT * N log2 N of them (measured with FFTW_ESTIMATE). */
#define FFT_UNIT 0.2

void conv_xcorr_direct(const struct conv_sig *s1, const struct conv_sig *s2, int64_t lag_lo,
                       int64_t lag_hi, double *out)
{
	size_t L = (size_t)(lag_hi - lag_lo + 1), lo = 0;
	memset(out, 0, L * sizeof(*out));
	for (size_t i = 0; i < s1->n; i++) {
		int64_t q = s1->q[i], first = q + lag_lo, last = q + lag_hi;
		double w = s1->w[i];
		while (lo < s2->n && s2->q[lo] < first)
			lo++;
		for (size_t j = lo; j < s2->n && s2->q[j] <= last; j++)
			out[s2->q[j] - first] += w * s2->w[j];
	}
}

uint64_t conv_xcorr_pairs(const struct conv_sig *s1, const struct conv_sig *s2, int64_t lag_lo,
                          int64_t lag_hi)
{
	size_t lo = 0, hi = 0;
	uint64_t pairs = 0;
	for (size_t i = 0; i < s1->n; i++) {
		int64_t q = s1->q[i];
		while (lo < s2->n && s2->q[lo] < q + lag_lo)
			lo++;
		if (hi < lo)
			hi = lo;
		while (hi < s2->n && s2->q[hi] <= q + lag_hi)
			hi++;
		pairs += hi - lo;
	}
	return pairs;
}

/* ---- the spectrum cache: a hash table over an LRU list ------------------------ */

struct centry {
	uint64_t key;
	int64_t block;
	fftw_complex *spec;         /* N/2 + 1 points; NULL: the segment is empty */
	struct centry *hnext;       /* hash chain */
	struct centry *prev, *next; /* LRU list, most recent first */
};

struct conv_fft {
	int64_t lag_lo, lag_hi;
	size_t L, N, B, nc; /* lags, transform length, block length, N/2 + 1 */
	fftw_plan r2c, c2r;
	double *rbuf;
	fftw_complex *cbuf, *acc, *tmp;

	struct centry **tab;
	size_t nbuckets, nentries, cache_bytes, cache_max, peak_bytes;
	struct centry *head, *tail;
	uint64_t ffts, hits, misses;
};

static size_t bucket(const struct conv_fft *f, uint64_t key, int64_t block)
{
	uint64_t h =
	    key * UINT64_C(0x9e3779b97f4a7c15) ^ (uint64_t)block * UINT64_C(0xc2b2ae3d27d4eb4f);
	h ^= h >> 29;
	return (size_t)(h & (f->nbuckets - 1));
}

static size_t entry_bytes(const struct conv_fft *f, const struct centry *e)
{
	return sizeof(*e) + (e->spec ? f->nc * sizeof(fftw_complex) : 0);
}

static struct centry *cache_find(const struct conv_fft *f, uint64_t key, int64_t block)
{
	for (struct centry *e = f->tab[bucket(f, key, block)]; e; e = e->hnext)
		if (e->key == key && e->block == block)
			return e;
	return NULL;
}

static void lru_unlink(struct conv_fft *f, struct centry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		f->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		f->tail = e->prev;
	e->prev = e->next = NULL;
}

static void lru_front(struct conv_fft *f, struct centry *e)
{
	e->prev = NULL;
	e->next = f->head;
	if (f->head)
		f->head->prev = e;
	f->head = e;
	if (!f->tail)
		f->tail = e;
}

static void cache_evict(struct conv_fft *f)
{
	struct centry *e = f->tail;
	lru_unlink(f, e);
	struct centry **pp = &f->tab[bucket(f, e->key, e->block)];
	while (*pp != e)
		pp = &(*pp)->hnext;
	*pp = e->hnext;
	f->cache_bytes -= entry_bytes(f, e);
	f->nentries--;
	fftw_free(e->spec);
	free(e);
}

static void cache_grow(struct conv_fft *f)
{
	size_t nb = f->nbuckets * 2;
	struct centry **tab = bb_xcalloc(nb, sizeof(*tab));
	for (size_t i = 0; i < f->nbuckets; i++) {
		for (struct centry *e = f->tab[i], *next; e; e = next) {
			next = e->hnext;
			f->nbuckets = nb; /* bucket() reads it */
			size_t b = bucket(f, e->key, e->block);
			f->nbuckets = nb / 2;
			e->hnext = tab[b];
			tab[b] = e;
		}
	}
	free(f->tab);
	f->tab = tab;
	f->nbuckets = nb;
}

/* fftw_malloc (aligned for FFTW's SIMD code; freed with fftw_free) of n
 * elements of size bytes that never returns NULL: as bb_xmalloc does, an
 * allocation failure says how much and aborts. */
static void *xfftw_malloc(size_t n, size_t size)
{
	void *p = size && n > SIZE_MAX / size ? NULL : fftw_malloc(n * size);
	if (!p) {
		fprintf(stderr, "bb: out of memory allocating %zu x %zu bytes (FFTW)\n", n, size);
		abort();
	}
	return p;
}

struct conv_fft *conv_fft_new(int64_t lag_lo, int64_t lag_hi, size_t cache_bytes)
{
	assert(lag_lo <= 0 && lag_hi >= 0);
	struct conv_fft *f = bb_xcalloc(1, sizeof(*f));
	f->lag_lo = lag_lo;
	f->lag_hi = lag_hi;
	f->L = (size_t)(lag_hi - lag_lo + 1);
	/* N >= 4L keeps at least 3/4 of each transform useful. */
	f->N = 1024;
	while (f->N < 4 * f->L)
		f->N *= 2;
	f->B = f->N - f->L + 1;
	f->nc = f->N / 2 + 1;
	f->rbuf = xfftw_malloc(f->N, sizeof(double));
	f->cbuf = xfftw_malloc(f->nc, sizeof(fftw_complex));
	f->acc = xfftw_malloc(f->nc, sizeof(fftw_complex));
	f->tmp = xfftw_malloc(f->nc, sizeof(fftw_complex));
	/* Plans are made once, for the one size, and reused with the new-array
	 * execute functions; ESTIMATE never times trial runs (see
	 * notes/platform.md: MEASURE costs seconds to minutes). */
	f->r2c = fftw_plan_dft_r2c_1d((int)f->N, f->rbuf, f->cbuf, FFTW_ESTIMATE);
	f->c2r = fftw_plan_dft_c2r_1d((int)f->N, f->acc, f->rbuf, FFTW_ESTIMATE);
	f->cache_max = cache_bytes;
	f->nbuckets = 256;
	f->tab = bb_xcalloc(f->nbuckets, sizeof(*f->tab));
	return f;
}

void conv_fft_free(struct conv_fft *f)
{
	if (!f)
		return;
	while (f->tail)
		cache_evict(f);
	free(f->tab);
	fftw_destroy_plan(f->r2c);
	fftw_destroy_plan(f->c2r);
	fftw_free(f->rbuf);
	fftw_free(f->cbuf);
	fftw_free(f->acc);
	fftw_free(f->tmp);
	free(f);
}

size_t conv_fft_size(const struct conv_fft *f)
{
	return f->N;
}

void conv_fft_stats(const struct conv_fft *f, struct conv_fft_stats *st)
{
	st->ffts = f->ffts;
	st->hits = f->hits;
	st->misses = f->misses;
	st->cache_bytes = f->cache_bytes;
	st->peak_cache_bytes = f->peak_bytes;
}

static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;
	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* First index of s with q >= v. */
static size_t lower_bound(const struct conv_sig *s, int64_t v)
{
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->q[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The spectrum of s2's segment for block b into out; 0 if the segment is empty. */
static int segment_spectrum(struct conv_fft *f, const struct conv_sig *s2, int64_t b,
                            fftw_complex *out)
{
	int64_t start = b * (int64_t)f->B + f->lag_lo, end = start + (int64_t)f->N;
	size_t i = lower_bound(s2, start);
	if (i >= s2->n || s2->q[i] >= end)
		return 0;
	memset(f->rbuf, 0, f->N * sizeof(double));
	for (; i < s2->n && s2->q[i] < end; i++)
		f->rbuf[s2->q[i] - start] = s2->w[i];
	fftw_execute_dft_r2c(f->r2c, f->rbuf, out);
	f->ffts++;
	return 1;
}

/* s2's segment spectrum for block b, from the cache or computed (and cached
 * when the bound allows). NULL when the segment is empty. */
static const fftw_complex *segment(struct conv_fft *f, const struct conv_sig *s2, uint64_t key,
                                   int64_t b)
{
	struct centry *e = cache_find(f, key, b);
	if (e) {
		f->hits++;
		lru_unlink(f, e);
		lru_front(f, e);
		return e->spec;
	}
	f->misses++;
	if (!segment_spectrum(f, s2, b, f->tmp)) {
		if (f->cache_max == 0)
			return NULL;
		e = bb_xcalloc(1, sizeof(*e));
	} else {
		if (f->cache_max < f->nc * sizeof(fftw_complex) + sizeof(*e))
			return f->tmp;
		e = bb_xcalloc(1, sizeof(*e));
		e->spec = xfftw_malloc(f->nc, sizeof(fftw_complex));
		memcpy(e->spec, f->tmp, f->nc * sizeof(fftw_complex));
	}
	e->key = key;
	e->block = b;
	size_t need = entry_bytes(f, e);
	while (f->tail && f->cache_bytes + need > f->cache_max)
		cache_evict(f);
	size_t h = bucket(f, key, b);
	e->hnext = f->tab[h];
	f->tab[h] = e;
	lru_front(f, e);
	f->cache_bytes += need;
	if (f->cache_bytes > f->peak_bytes)
		f->peak_bytes = f->cache_bytes;
	if (++f->nentries > 2 * f->nbuckets)
		cache_grow(f);
	return e->spec;
}

void conv_xcorr_fft(struct conv_fft *f, const struct conv_sig *s1, const struct conv_sig *s2,
                    uint64_t key, double *out)
{
	size_t blocks = 0;
	int64_t B = (int64_t)f->B;
	memset(f->acc, 0, f->nc * sizeof(fftw_complex));
	for (size_t i = 0; i < s1->n;) {
		int64_t b = floor_div(s1->q[i], B), end = (b + 1) * B;
		size_t j = i;
		while (j < s1->n && s1->q[j] < end)
			j++;
		const fftw_complex *z = segment(f, s2, key, b);
		if (z) {
			memset(f->rbuf, 0, f->N * sizeof(double));
			for (size_t k = i; k < j; k++)
				f->rbuf[s1->q[k] - b * B] = s1->w[k];
			fftw_execute_dft_r2c(f->r2c, f->rbuf, f->cbuf);
			f->ffts++;
			/* z may be f->tmp (uncached); cbuf is distinct from both. */
			for (size_t k = 0; k < f->nc; k++) {
				double ar = f->cbuf[k][0], ai = f->cbuf[k][1];
				double zr = z[k][0], zi = z[k][1];
				/* conj(a) * z */
				f->acc[k][0] += ar * zr + ai * zi;
				f->acc[k][1] += ar * zi - ai * zr;
			}
			blocks++;
		}
		i = j;
	}
	if (!blocks) {
		memset(out, 0, f->L * sizeof(*out));
		return;
	}
	fftw_execute_dft_c2r(f->c2r, f->acc, f->rbuf);
	f->ffts++;
	double scale = 1.0 / (double)f->N;
	for (size_t k = 0; k < f->L; k++)
		out[k] = f->rbuf[k] * scale;
}

double conv_fft_cost(const struct conv_fft *f, const struct conv_sig *s1, uint64_t key)
{
	double one = FFT_UNIT * (double)f->N * log2((double)f->N) + 2.0 * (double)f->N;
	double cost = one;
	int64_t B = (int64_t)f->B;
	for (size_t i = 0; i < s1->n;) {
		int64_t b = floor_div(s1->q[i], B), end = (b + 1) * B;
		while (i < s1->n && s1->q[i] < end)
			i++;
		cost += one;
		if (!cache_find(f, key, b))
			cost += one;
	}
	return cost;
}

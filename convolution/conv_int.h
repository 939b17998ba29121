/* conv_int.h - private types and helpers of the convolution module */
/* SPDX-License-Identifier: MIT */
#ifndef BB_CONV_INT_H
#define BB_CONV_INT_H

#include <stddef.h>
#include <stdint.h>

#include "convolution/convolution.h"

/* ---- signals (conv_signal.c) ------------------------------------------------ */

/* A sparse discretised signal: the non-empty quanta q[0..n) in increasing
 * order and their values w[i] = sqrt(messages in quantum q[i]) (section 5.2.1). */
struct conv_sig {
	int64_t *q;
	double *w;
	size_t n, cap;
};

void conv_sig_clear(struct conv_sig *s);
void conv_sig_free(struct conv_sig *s);
/* Builds s from message quanta qs[0..n) in non-decreasing order. */
void conv_sig_from_quanta(struct conv_sig *s, const int64_t *qs, size_t n);
/* Appends (q, w); q must exceed the last one. */
void conv_sig_push(struct conv_sig *s, int64_t q, double w);

/* ---- cross-correlation (conv_xcorr.c) ----------------------------------------- */

/* C(d) = sum_t s1(t) s2(t + d) for the lags d in [lag_lo, lag_hi]: out[d - lag_lo]. */

/* Directly over pairs of non-empty quanta, with two pointers: time
 * O(|s1| + |s2| + pairs within the window). out has lag_hi - lag_lo + 1 slots. */
void conv_xcorr_direct(const struct conv_sig *s1, const struct conv_sig *s2, int64_t lag_lo,
                       int64_t lag_hi, double *out);
/* Pairs of non-empty quanta within the lag window: the direct method's work. */
uint64_t conv_xcorr_pairs(const struct conv_sig *s1, const struct conv_sig *s2, int64_t lag_lo,
                          int64_t lag_hi);

/* The blockwise FFT engine: one transform length N, one pair of FFTW plans
 * (FFTW_ESTIMATE), and a bounded LRU cache of the spectra of s2's segments,
 * keyed by (signal key, block). */
struct conv_fft;

/* Returns new for lags [lag_lo, lag_hi] (lag_lo <= 0 <= lag_hi), caching at
 * most cache_bytes of spectra. */
struct conv_fft *conv_fft_new(int64_t lag_lo, int64_t lag_hi, size_t cache_bytes);
void conv_fft_free(struct conv_fft *f);
size_t conv_fft_size(const struct conv_fft *f);
/* Correlation by blocks of s1: only the blocks where s1 has messages are
 * transformed; s2's segment spectra are cached under key (e.g. the node id;
 * the same key must always mean the same s2). out as for conv_xcorr_direct. */
void conv_xcorr_fft(struct conv_fft *f, const struct conv_sig *s1, const struct conv_sig *s2,
                    uint64_t key, double *out);
/* Estimated cost of conv_xcorr_fft, in the same units as pairs (about one
 * multiply-add each), counting cached segments as free. */
double conv_fft_cost(const struct conv_fft *f, const struct conv_sig *s1, uint64_t key);

struct conv_fft_stats {
	uint64_t ffts, hits, misses;
	size_t cache_bytes, peak_cache_bytes;
};
void conv_fft_stats(const struct conv_fft *f, struct conv_fft_stats *st);

/* ---- spikes (conv_spike.c) ------------------------------------------------------ */

/* Spikes of c[from..n) with the statistics of c[0..n): local maxima at least
 * n_sd standard deviations above the mean, groups separated by a point under
 * s_sd standard deviations, the largest point of each group. Writes up to max
 * indices to pos in increasing order and returns how many were found (may
 * exceed max). */
size_t conv_spikes(const double *c, size_t n, size_t from, double n_sd, double s_sd, size_t *pos,
                   size_t max);

/* c minus its sliding median over 2k + 1 lags: the local baseline of a
 * correlation (load that drifts over seconds) taken away, so that a spike is
 * judged against its neighbourhood, not against the trend. */
void conv_detrend(const double *c, size_t n, size_t k, double *out);

/* ---- the whole state (conv_core.c, conv_path.c, conv_truth.c) ------------------- */

struct conv_msg {
	int64_t ts_ns;
	uint32_t sender, receiver;
	uint32_t path;   /* ground-truth path instance, BB_NONE if none */
	uint32_t key;    /* (caller, callee, id) of a CALL or RET with an id, else BB_NONE */
	uint8_t op;      /* enum bb_op */
};

struct conv_node {
	uint32_t *out; /* messages sent, indices into msgs, in time order */
	size_t nout, capout;
	struct conv_sig sig; /* all messages sent, as a signal */
	uint64_t received;
	uint64_t called;   /* CALL and MSG messages received */
	uint64_t calls;    /* CALL and MSG messages sent */
	uint64_t paired;   /* CALLs into the node answered by a RET with the same id */
	int64_t hold_max;  /* the longest of those calls (CALL to RET), ns */
};

/* An output vertex and the edge that leads to it from its parent. */
struct conv_vert {
	uint32_t node;
	uint32_t parent;          /* vertex index, BB_NONE for a root */
	uint64_t count;           /* messages on the edge from the parent */
	struct bb_vdelay *delays; /* in declining frequency */
	size_t ndelays;
	uint32_t first_child, next_sibling; /* BB_NONE terminated */
	int dead;                           /* suppressed (derived) */
};

struct bb_conv {
	struct bb_conv_params p;
	struct bb_intern *names, *paths, *keys;
	struct conv_msg *msgs;
	size_t nmsgs, capmsgs;
	struct conv_node *nodes;
	size_t nnodes;
	int64_t t0_ns;
	int ran, has_paths;

	struct conv_fft *fft;
	int64_t lag_lo, lag_hi; /* lags computed, in quanta */
	int64_t follow_hi;      /* largest lag followed: the maximum delay */
	double *corr;           /* lag_hi - lag_lo + 1 */
	double *resid;          /* corr minus its local baseline */
	size_t *spk;
	size_t maxspk;

	struct conv_vert *verts;
	size_t nverts, capverts;

	uint32_t *roots; /* the root nodes searched from, in search order */
	size_t nroots;
	const char *root_rule; /* how they were chosen (params.root_rule) */

	/* the result as viz/ sees it */
	struct bb_vvertex *vv;
	struct bb_vedge *ve;
	struct bb_vgraph graph;
	struct bb_vval *params, *stats, *accuracy;
	struct bb_conv_stats st;
};

/* conv_path.c: the recursive search of figure 6; fills c->verts. */
int conv_search(struct bb_conv *c, struct bb_err *err);
/* conv_truth.c: scores c->verts against path= attributes; returns new value. */
struct bb_vval *conv_truth(const struct bb_conv *c);

/* Quantum index of a time. */
static inline int64_t conv_quantum(const struct bb_conv *c, int64_t ts_ns)
{
	return (ts_ns - c->t0_ns) / c->p.quantum_ns;
}

#endif

/* convolution.h - the convolution algorithm: per-edge signals, FFT cross-correlation, path graph */
/* SPDX-License-Identifier: MIT */
#ifndef BB_CONVOLUTION_H
#define BB_CONVOLUTION_H

#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"
#include "viz/viz.h"

/* Paper section 5.2. Messages (CALL, RET and MSG alike: only time, sender and
 * receiver count) are added one by one; bb_conv_run then searches the causal
 * paths from the root nodes and fills a delay graph (viz/ draws it).
 * FFTW plans and buffers stay inside; nothing FFTW crosses this header. */

enum bb_conv_method {
	BB_CONV_AUTO = 0,   /* per edge, whichever of the two costs less */
	BB_CONV_FFT = 1,    /* blockwise overlap-save FFT */
	BB_CONV_DIRECT = 2, /* directly over pairs of non-empty quanta */
};

struct bb_conv_params {
	int64_t quantum_ns;   /* mu: the time quantum (-q), > 0 */
	int64_t tolerance_ns; /* v: delay tolerance when matching messages to a spike;
	                           <0 means half a quantum */
	int64_t max_delay_ns; /* largest causal delay looked for (--max-delay) */
	int64_t skew_ns;      /* w: lags down to -w are computed (skew allowance);
	                           <0 means two quanta */
	double spike_n;       /* a spike is a local maximum N std devs above the mean */
	double spike_s;       /* spikes are separated by a point under S std devs */
	uint64_t min_count;   /* edges and delays with fewer messages are noise */
	unsigned max_depth;   /* edges on a path from a root, at most */
	size_t max_vertices;  /* vertices in the output graph, at most */
	int keep_derived;     /* keep derived return paths (section 5.3.1) */
	int no_hold_bound;    /* do not bound a node's delays by its longest call */
	int truth;            /* score against path= ground truth */
	enum bb_conv_method method;
	size_t cache_bytes;       /* bound on cached block spectra */
	size_t nroots;            /* root node names; 0: chosen from the call graph
	                           (see docs/convolution.md, "Root nodes") */
	const char *const *roots; /* borrowed until bb_conv_run returns */
};

/* Fills p with the defaults (mu 10 ms, v half a quantum, max delay 60 s,
 * w two quanta, N 4, S 3, min count 10, depth 32, 100000 vertices, 64 MiB cache). */
void bb_conv_params_default(struct bb_conv_params *p);

struct bb_conv;

/* Bounds on the parameters' durations and on timestamps: within them no
 * sum of a timestamp, a lag and a tolerance overflows, and no difference of
 * two timestamps either. */
#define BB_CONV_DURATION_MAX ((int64_t)1 << 50)
#define BB_CONV_TS_MAX (((int64_t)1 << 62) - 1)
#define BB_CONV_TS_MIN (-((int64_t)1 << 62))

/* Returns new (free with bb_conv_free), or NULL with err set when the
 * parameters are invalid (durations over BB_CONV_DURATION_MAX, lag windows
 * over 2^22 quanta included). Copies p (but not the roots' strings). */
struct bb_conv *bb_conv_new(const struct bb_conv_params *p, struct bb_err *err);
void bb_conv_free(struct bb_conv *c);

/* Adds one message. sender and receiver are borrowed (copied when new);
 * path (ground-truth path instance, may be NULL) likewise. id (id_len bytes,
 * NULL or "-" for none) pairs a CALL with its RET: the longest call into a
 * node bounds the delays followed at it. The op and id decide the default
 * roots and those bounds; the correlation itself treats all messages alike.
 * Messages may come in any order. Returns 0 or BB_ERR_LIMIT (more than
 * 2^32-2 messages, or ts_ns outside BB_CONV_TS_MIN..BB_CONV_TS_MAX), with err set. */
int bb_conv_add(struct bb_conv *c, int64_t ts_ns, enum bb_op op, const char *sender,
                const char *receiver, const char *id, size_t id_len, const char *path,
                struct bb_err *err);

/* Runs the path search. Returns 0, or BB_ERR_ARG (an unknown --root) with err set.
 * Call once. */
int bb_conv_run(struct bb_conv *c, struct bb_err *err);

/* The result (borrowed from c, valid until bb_conv_free): vertices in
 * depth-first order, ids 0..n-1; params, stats and, with truth, accuracy. */
const struct bb_vgraph *bb_conv_graph(const struct bb_conv *c);

struct bb_conv_stats {
	uint64_t messages, nodes, edges_in_trace;
	int64_t duration_quanta;
	uint64_t xcorr_fft, xcorr_direct; /* correlations computed each way */
	uint64_t ffts;                    /* forward and inverse transforms */
	uint64_t cache_hits, cache_misses;
	size_t fft_size; /* N, the transform length */
	size_t peak_cache_bytes;
	uint64_t derived_suppressed, cycles_suppressed, negative_suppressed, noise_suppressed;
	uint64_t hold_suppressed; /* spikes later than the node's longest call */
	uint64_t paired_calls;    /* CALLs answered by a RET with the same id */
	uint64_t truncated; /* searches cut by max_depth or max_vertices */
};
void bb_conv_get_stats(const struct bb_conv *c, struct bb_conv_stats *st);

/* The FFTW version string, for --version (borrowed, static). */
const char *bb_conv_fftw_version(void);

#endif

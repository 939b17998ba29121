/* mt_int.h - maketrace internals: the compiled config shared by the reader and the generator */
/* SPDX-License-Identifier: MIT */
#ifndef BB_MT_INT_H
#define BB_MT_INT_H

#include "maketrace/maketrace.h"

/* A delay: a mixture of Gaussians, each truncated at 0, or one log-normal or
 * exponential distribution. n == 0 means no delay. */
enum mt_dist { MT_GAUSS = 0, MT_LOGNORMAL, MT_EXP };
struct mt_comp {
	double cum;              /* cumulative weight, normalised: the last one is 1 */
	double mean_ns, sd_ns;   /* of the delay itself, whatever the distribution */
	double mu, sigma;        /* MT_LOGNORMAL: parameters of log(delay in ns) */
	enum mt_dist dist;
};
struct mt_delay {
	uint32_t n;
	struct mt_comp *c;
};

enum mt_kind { MT_CALL, MT_MSG, MT_WAIT, MT_PAR, MT_CHOOSE, MT_REPEAT };

struct mt_step;
struct mt_seq {
	uint32_t n;
	struct mt_step *s;
};

/* One step of a tracelet. Steps run in series; each carries a thread's time and
 * current node: a call leaves the node as it was, a message moves it to the
 * receiver, a parallel block joins at its latest branch and keeps the node,
 * a choice continues from wherever the chosen alternative left it. */
struct mt_step {
	enum mt_kind kind;
	uint32_t from;           /* MT_MSG: sender, BB_NONE for the current node */
	uint32_t to;             /* MT_CALL, MT_MSG: receiver */
	struct mt_delay delay;   /* CALL, MSG, WAIT: before the message (or the wait) */
	struct mt_delay ret;     /* CALL: before the return, after the callee's last message */
	struct mt_seq body;      /* CALL: what the callee does; REPEAT: what is repeated */
	uint32_t rmin, rmax;     /* REPEAT: the count, uniform in [rmin, rmax] */
	int rpar;                /* REPEAT: the copies run in parallel (else in series) */
	uint32_t nalt;
	struct mt_seq *alt;      /* PAR: branches; CHOOSE: alternatives */
	double *cum;             /* CHOOSE: cumulative weights, normalised */
};

struct mt_tracelet {
	char *name;
	size_t name_len;
	uint32_t instances;      /* parallel instance slots */
	int64_t think_min_ns, think_max_ns;
	struct mt_delay think;   /* n > 0: think time drawn from this instead */
	double rate;             /* > 0: open-loop arrivals, a Poisson process (per second) */
	uint32_t burst_min, burst_max; /* instances started at once per arrival (1, 1) */
	uint32_t nroots;         /* origin nodes, slot i runs at roots[i % nroots]; may be 0 */
	uint32_t *roots;
	struct mt_seq body;
};

struct bb_mt_config {
	char *name;              /* file name, for messages and #source */
	struct bb_intern *nodes;
	uint32_t ntl;
	struct mt_tracelet *tl;
	uint64_t seed;
	int64_t start_ns;
	int64_t duration_ns;     /* 0: no duration limit */
	uint64_t messages;       /* 0: no message limit */
	int no_ids;
	double capture_rate;     /* 0: no sniffer model */
	uint32_t queue;
	double probability;
	struct bb_mt_skew *skew; /* nodes named in the config's "skew" */
	uint32_t *workers;       /* per node: worker pool size, 0 for none (NULL: no pools) */
	int ordered;             /* rate, burst or workers: instances are generated in
	                            order of their start (see mt_gen.c) */
};

#define MT_DEFAULT_START_NS (INT64_C(1000000000) * BB_NS_PER_S)
#define MT_MAX_SECONDS 4e9       /* bound on start, duration, offsets (int64 ns headroom) */
#define MT_MAX_DELAY_SECONDS 1e7 /* bound on a delay's mean and sd, and on think times */
/* Instance slots all live at once (each holds its pending instance): bound
 * them in all, not only per tracelet, so no small config exhausts memory. */
#define MT_MAX_INSTANCES 100000u
#define MT_MAX_REPEAT 10000      /* bound on a repeat step's count */
#define MT_MAX_BURST 10000       /* bound on the instances of one arrival */
#define MT_MAX_WORKERS 1000000   /* bound on a node's worker pool */

#endif

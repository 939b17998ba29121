/* maketrace.h - tracelet trace generator, sniffer-loss and clock-skew models, trace merging */
/* SPDX-License-Identifier: MIT */
#ifndef BB_MAKETRACE_H
#define BB_MAKETRACE_H

#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

/* ---- deterministic pseudo-random numbers ---------------------------------------
 * xoshiro256** (Blackman and Vigna), seeded through splitmix64. The same seed gives
 * the same numbers on every run; nothing here touches rand() or global state. */

struct bb_mt_rng {
	uint64_t s[4];
};

/* One splitmix64 step: advances *state and returns the next output. */
uint64_t bb_mt_splitmix64(uint64_t *state);
/* Seeds r from seed (any value, 0 included). */
void bb_mt_rng_seed(struct bb_mt_rng *r, uint64_t seed);
/* Seeds r for the independent stream `stream` of a run seeded with seed. */
void bb_mt_rng_seed_stream(struct bb_mt_rng *r, uint64_t seed, uint64_t stream);
uint64_t bb_mt_rng_next(struct bb_mt_rng *r);
/* Uniform double in [0, 1), 53 random bits. */
double bb_mt_rng_unit(struct bb_mt_rng *r);
/* Standard normal deviate (Box-Muller; no cached state). */
double bb_mt_rng_gauss(struct bb_mt_rng *r);
/* Gaussian with mean and standard deviation sd (both >= 0), truncated at 0:
 * negative draws are drawn again, so the result is never negative. sd 0 gives
 * mean without consuming random numbers. */
double bb_mt_rng_gauss_pos(struct bb_mt_rng *r, double mean, double sd);

/* ---- sniffer loss model (paper section 7.5.5) --------------------------------------
 * A sniffer that captures at most capture_rate messages per second and buffers up
 * to queue messages: its queue drains continuously at capture_rate, each arriving
 * message adds one, and a message that would make the queue exceed queue is dropped.
 * A burst above the capture rate therefore drops, a slower stream never does.
 * Independently, each message surviving the sniffer is dropped with probability
 * probability (plain random loss). */

struct bb_mt_loss {
	double capture_rate;    /* messages per second; 0 turns the sniffer model off */
	uint32_t queue;         /* queue length in messages (BB_MT_QUEUE by default) */
	double probability;     /* random loss probability, 0 for none */
	/* state */
	double backlog;         /* messages waiting in the queue */
	int64_t last_ns;        /* time of the previous arrival */
	int started;
	struct bb_mt_rng rng;
	uint64_t dropped_queue; /* drops because the queue was full */
	uint64_t dropped_random;
};
#define BB_MT_QUEUE 64

/* Sets up l; seed drives the random loss. */
void bb_mt_loss_init(struct bb_mt_loss *l, double capture_rate, uint32_t queue,
                     double probability, uint64_t seed);
/* Whether the model is on at all. */
int bb_mt_loss_active(const struct bb_mt_loss *l);
/* Offers a message seen at ts_ns (non-decreasing from call to call). Returns 1
 * when it is dropped, 0 when it is captured. */
int bb_mt_loss_drop(struct bb_mt_loss *l, int64_t ts_ns);

/* ---- per-node clock skew -------------------------------------------------------------
 * The sender's clock stamps a message: a node with offset o and drift d (parts per
 * million) writes ts + o + d * 1e-6 * (ts - t0) for a message it sends at true time
 * ts, t0 being the start of the trace. Messages a node receives are not touched. */

struct bb_mt_skew;

/* Returns new, caller frees with bb_mt_skew_free. */
struct bb_mt_skew *bb_mt_skew_new(void);
void bb_mt_skew_free(struct bb_mt_skew *sk);
/* Adds offset_ns to node's offset and drift_ppm to its drift (a node starts at 0, 0).
 * Returns 0, or BB_ERR_ARG when the drift leaves [-BB_MT_MAX_DRIFT, BB_MT_MAX_DRIFT]. */
#define BB_MT_MAX_DRIFT 100000.0
int bb_mt_skew_add(struct bb_mt_skew *sk, const char *node, size_t len, int64_t offset_ns,
                   double drift_ppm, struct bb_err *err);
/* Replaces node's offset (set_offset) or drift (set_drift) and marks it given. */
int bb_mt_skew_set(struct bb_mt_skew *sk, const char *node, size_t len, int set_offset,
                   int64_t offset_ns, int set_drift, double drift_ppm, struct bb_err *err);
/* Parses a command-line "NODE=VALUE" (split at the last '='). drift 0: VALUE is
 * seconds, parsed exactly, and is added to the offset; drift 1: VALUE is ppm and is
 * added to the drift. Returns 0 or BB_ERR_ARG with err set. */
int bb_mt_skew_parse_arg(struct bb_mt_skew *sk, const char *arg, int drift, struct bb_err *err);
/* Reads a table of "NODE OFFSET_SECONDS" lines ('#' starts a comment, blank lines
 * are ignored) and adds sign * OFFSET to each node's offset. A bad line is an error
 * "PATH:LINE: what". Returns 0, BB_ERR_IO or BB_ERR_PARSE. */
int bb_mt_skew_load_table(struct bb_mt_skew *sk, const char *path, int sign,
                          struct bb_err *err);
/* Number of nodes in the table, and entry i (borrowed name; flags say whether an
 * offset and a drift were given). */
size_t bb_mt_skew_count(const struct bb_mt_skew *sk);
const char *bb_mt_skew_entry(const struct bb_mt_skew *sk, size_t i, int64_t *offset_ns,
                             double *drift_ppm, int *has_offset, int *has_drift);
/* Index of node in the table, or BB_NONE. */
uint32_t bb_mt_skew_find(const struct bb_mt_skew *sk, const char *node, size_t len);
/* Whether any node has a non-zero offset or drift. */
int bb_mt_skew_active(const struct bb_mt_skew *sk);
/* The shift in nanoseconds for a message sent at ts_ns by a node with this offset
 * and drift, t0_ns being the drift's reference time. */
int64_t bb_mt_skew_shift(int64_t offset_ns, double drift_ppm, int64_t t0_ns, int64_t ts_ns);
/* ts_ns + d_ns, saturated at the ends of int64_t (never BB_NO_TIME). */
int64_t bb_mt_time_add(int64_t ts_ns, int64_t d_ns);

/* ---- configuration ---------------------------------------------------------------------
 * A JSON file (docs/maketrace.md): nodes, tracelets (call trees and message sequences
 * with Gaussian delays, weighted alternatives, parallel branches), think times,
 * parallel instances, duration or message count, seed, loss and skew. */

struct bb_mt_config;

/* Reads and checks a config file into *out (new; free with bb_mt_config_free).
 * Returns 0, BB_ERR_IO (cannot read it) or BB_ERR_PARSE with err set to
 * "PATH:LINE:COL: what" (for a value that is wrong, the position of the value and
 * its JSON path, e.g. "tracelets[2].steps[0].delay: expected ..."). */
int bb_mt_config_load(const char *path, struct bb_mt_config **out, struct bb_err *err);
/* The same from memory; name is used in messages. Borrows text for the call only. */
int bb_mt_config_parse(const char *text, size_t len, const char *name,
                       struct bb_mt_config **out, struct bb_err *err);
void bb_mt_config_free(struct bb_mt_config *cfg);
/* Borrowed facts about a config. */
uint64_t bb_mt_config_seed(const struct bb_mt_config *cfg);
uint32_t bb_mt_config_nnodes(const struct bb_mt_config *cfg);
const char *bb_mt_config_node(const struct bb_mt_config *cfg, uint32_t i);
/* Version of the JSON library in use ("2.14"), for --version. */
const char *bb_mt_json_version(void);
uint32_t bb_mt_config_ntracelets(const struct bb_mt_config *cfg);
const char *bb_mt_config_tracelet(const struct bb_mt_config *cfg, uint32_t i);

/* ---- generator ----------------------------------------------------------------------------- */

/* Overrides of the config, all off when zeroed. */
struct bb_mt_opts {
	const char *source;     /* text for "#source maketrace SOURCE" (the config's name if NULL) */
	int set_seed;
	uint64_t seed;
	int set_duration;       /* duration_ns 0 removes the config's duration limit */
	int64_t duration_ns;
	int set_messages;       /* messages 0 removes the config's message limit */
	uint64_t messages;
	int no_ids;             /* write "-" instead of call ids */
	int set_capture_rate;   /* capture_rate 0 turns the sniffer model off */
	double capture_rate;
	int set_queue;
	uint32_t queue;
	int set_probability;
	double probability;
	const struct bb_mt_skew *skew; /* per-node settings replacing the config's; may be NULL */
	int stats;              /* compute edges and per-node parallelism for the summary */
	/* called every 65536 generated messages; may be NULL */
	void (*progress)(void *ctx, uint64_t generated);
	void *progress_ctx;
};

struct bb_mt_summary {
	uint64_t generated;      /* messages generated (before loss) */
	uint64_t written;        /* messages written */
	uint64_t dropped_queue;  /* sniffer model drops */
	uint64_t dropped_random; /* random loss drops */
	int loss;                /* a loss model was on */
	int skew;                /* a skew model was on */
	int64_t first_ns, last_ns; /* first and last timestamp written, BB_NO_TIME if none */
	uint32_t nodes;          /* distinct nodes in the written messages (stats only) */
	uint64_t edges;          /* distinct sender->receiver pairs written (stats only) */
	uint64_t child_calls;    /* generated calls with at least one candidate parent */
	double parallelism;      /* mean candidate parents over those calls (stats only) */
	double open_calls;       /* mean open calls: per internal node (one that receives
	                            calls and makes calls), the time average of the calls
	                            into it that are open, i.e. the sum of their durations
	                            over the generated span; averaged over those nodes
	                            (stats only) */
	uint32_t internal_nodes; /* how many nodes that average is over */
	uint64_t pool_calls;     /* calls into nodes with a worker pool */
	uint64_t pool_waited;    /* of them, calls that waited for a worker */
	double pool_lag_mean_ns; /* their mean wait */
	int64_t pool_lag_max_ns; /* the longest wait */
	uint32_t ntracelets;
	const char *const *tracelet_names; /* borrowed from the generator */
	const uint64_t *instances;         /* path instances started per tracelet */
	uint64_t seed;           /* seed in effect */
};

struct bb_mt_gen;

/* Prepares a run of cfg (borrowed for the generator's lifetime) with overrides o
 * (may be NULL; copied). Returns new or NULL with err set (an override naming an
 * unknown node, no limit on the trace's length). */
struct bb_mt_gen *bb_mt_gen_new(const struct bb_mt_config *cfg, const struct bb_mt_opts *o,
                                struct bb_err *err);
void bb_mt_gen_free(struct bb_mt_gen *g);
/* Writes the metadata lines and the whole trace to w (borrowed; not closed).
 * Returns 0 or a negative bb_status with err set. Call once. */
int bb_mt_gen_run(struct bb_mt_gen *g, struct bb_writer *w, struct bb_err *err);
/* What the run did; pointers in s borrow from g. */
void bb_mt_gen_summary(const struct bb_mt_gen *g, struct bb_mt_summary *s);

/* ---- merging and re-timing traces (bbskew) ------------------------------------------------- */

struct bb_mt_merge_stats {
	uint64_t records;     /* records read */
	uint64_t written;     /* records written */
	uint64_t duplicates;  /* exact duplicates dropped */
};

/* Reads the n readers (borrowed) in a k-way merge by timestamp, shifts each record
 * by its sender's offset and drift in skew (may be NULL; t0 is the first timestamp
 * read), re-sorts within the bound the skew allows and writes the result to w
 * (borrowed). With n >= 2, a record identical to one already written (same
 * timestamp, op, sender, receiver, id and attributes) is dropped and counted.
 * Metadata lines of the inputs are kept, in input order; source, if not NULL, is
 * written as one more metadata line after them. Returns 0 or a negative bb_status
 * with err set. */
int bb_mt_merge(struct bb_reader *const *in, size_t n, const struct bb_mt_skew *skew,
                const char *source, struct bb_writer *w, struct bb_mt_merge_stats *st,
                struct bb_err *err);

#endif

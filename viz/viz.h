/* viz.h - what bb draws: path patterns and delay graphs, as dot, JSON and text */
/* SPDX-License-Identifier: MIT */
#ifndef BB_VIZ_H
#define BB_VIZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace/trace.h"

/* viz/ owns a small model of what it draws. The algorithms fill it; viz never
 * includes an algorithm's header. Graphviz (cgraph) and jansson stay behind
 * this header: no json_t or Agraph_t crosses it. */

/* ---- values: params, stats and accuracy as a small JSON-like tree ----------- */

/* An object or array of named numbers and strings, for the "params", "stats"
 * and "accuracy" parts of the output. Built by the algorithms, written by viz. */
struct bb_vval;

/* Returns new (caller frees with bb_vval_free, unless it is handed to a
 * container, which then takes ownership). */
struct bb_vval *bb_vval_object(void);
struct bb_vval *bb_vval_array(void);
struct bb_vval *bb_vval_int(int64_t v);
struct bb_vval *bb_vval_num(double v);
struct bb_vval *bb_vval_str(const char *s);
struct bb_vval *bb_vval_bool(int v);
void bb_vval_free(struct bb_vval *v);
/* Sets obj[key] = child; takes ownership of child. Returns child (borrowed). */
struct bb_vval *bb_vval_set(struct bb_vval *obj, const char *key, struct bb_vval *child);
/* Shorthands for bb_vval_set with a new int, number or string. */
void bb_vval_set_int(struct bb_vval *obj, const char *key, int64_t v);
void bb_vval_set_num(struct bb_vval *obj, const char *key, double v);
void bb_vval_set_str(struct bb_vval *obj, const char *key, const char *s);
/* Appends child to arr; takes ownership of child. Returns child (borrowed). */
struct bb_vval *bb_vval_push(struct bb_vval *arr, struct bb_vval *child);
/* Writes v as compact JSON with sorted keys (tests, debugging). */
int bb_vval_write(FILE *out, const struct bb_vval *v, struct bb_err *err);

/* Versions of the Graphviz and jansson libraries in use, for --version
 * (static strings). */
const char *bb_viz_graphviz_version(void);
const char *bb_viz_jansson_version(void);

/* ---- units ----------------------------------------------------------------------- */

#define BB_DUR_BUFSZ 32
/* Formats a duration for people: "850 ns", "12.3 µs", "4.56 ms", "1.23 s",
 * "2.0 min"; three significant digits; negative values keep their sign. */
size_t bb_viz_fmt_ns(int64_t ns, char *buf);
/* Same, in plain ASCII ("us" for µs), for dot labels and terminals that want it. */
size_t bb_viz_fmt_ns_ascii(int64_t ns, char *buf);
/* Copies s into a new string with control bytes and non-printable bytes
 * written as \xNN, for text output (caller frees). */
char *bb_viz_escape_text(const char *s);

/* ---- path patterns (bbnest) ---------------------------------------------------------- */

struct bb_vbin {
	int64_t lo_ns, hi_ns;   /* [lo, hi) */
	uint64_t count;
};

/* A distribution of durations in nanoseconds. bins are optional (nbins 0). */
struct bb_vstat {
	uint64_t n;
	double mean;
	int64_t p50, p90, p99, max;
	size_t nbins;
	const struct bb_vbin *bins;
};

/* A node of a path pattern tree. The root is the initiating node (the client);
 * its children are the nodes it called, in call order. The root's latency and
 * call_delay are those of the whole path (its first call) and may be n = 0. */
struct bb_vnode {
	const char *name;
	const char *req;            /* the request label (a trace's req=) the calls
	                               into this node share, or NULL */
	struct bb_vstat latency;    /* time inside the node and its children */
	struct bb_vstat call_delay; /* from the parent's call arriving to this call */
	size_t nchildren;
	const struct bb_vnode *children;
};

struct bb_vpattern {
	unsigned rank;              /* 1 = first */
	uint64_t count;             /* instances */
	int64_t total_latency_ns;   /* count x mean root latency */
	struct bb_vnode root;
};

/* All the patterns of one run, in rank order, and what the run says about
 * itself. params, stats and accuracy may be NULL; borrowed. */
struct bb_vpatterns {
	size_t n;
	const struct bb_vpattern *v;
	const struct bb_vval *params;
	const struct bb_vval *stats;
	const struct bb_vval *accuracy;
};

/* Version of the JSON documents bbnest and bbconv write ("format_version"):
 * raised when a key changes meaning or goes away, not when one is added. */
#define BB_VIZ_FORMAT_VERSION 1

/* A stable id of a pattern's shape: 16 hex digits of a 64-bit FNV-1a hash of
 * its tree (node names, request labels, who calls whom, in call order), not
 * of its counts, times or rank; the same shape has the same id in every run
 * and every output. buf holds at least 17 bytes. Returns buf. */
char *bb_viz_pattern_id(const struct bb_vpattern *p, char *buf);

/* One digraph, one cluster per pattern (figure 8's format): cluster label
 * "#rank: count, total latency", node label "name\nmean latency", edge label
 * mean call delay. Node names are quoted and escaped by cgraph. */
int bb_viz_patterns_dot(FILE *out, const struct bb_vpatterns *p, struct bb_err *err);
/* {"patterns": [...], "stats": {...}, "params": {...}, "accuracy": {...}} */
int bb_viz_patterns_json(FILE *out, const struct bb_vpatterns *p, struct bb_err *err);
/* An indented table for a terminal. */
int bb_viz_patterns_text(FILE *out, const struct bb_vpatterns *p, struct bb_err *err);

/* ---- delay graphs (bbconv) -------------------------------------------------------------- */

struct bb_vdelay {
	int64_t delay_ns;
	uint64_t count;
};

struct bb_vvertex {
	uint32_t id;
	const char *node;
};

struct bb_vedge {
	uint32_t from, to;          /* vertex ids */
	uint64_t count;             /* messages */
	size_t ndelays;
	const struct bb_vdelay *delays; /* in declining frequency */
};

struct bb_vgraph {
	size_t nvertices, nedges;
	const struct bb_vvertex *vertices;
	const struct bb_vedge *edges;
	const struct bb_vval *params;
	const struct bb_vval *stats;
	const struct bb_vval *accuracy;
};

/* Figure 9's format: edges labelled with their delays in declining frequency
 * and their message count. */
int bb_viz_graph_dot(FILE *out, const struct bb_vgraph *g, struct bb_err *err);
/* {"vertices": [{"id", "node"}], "edges": [{"from", "to", "count",
 *  "delays": [{"delay_ns", "count"}]}], "params", "stats", "accuracy"} */
int bb_viz_graph_json(FILE *out, const struct bb_vgraph *g, struct bb_err *err);
int bb_viz_graph_text(FILE *out, const struct bb_vgraph *g, struct bb_err *err);

#endif

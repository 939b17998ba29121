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
 * container, which then takes ownership). bb_vval_num keeps NaN and the
 * infinities as null (JSON has no such numbers); bb_vval_str replaces the
 * bytes of invalid UTF-8 by '?'. */
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
/* Writes v as compact JSON with sorted keys and a newline (bbconv's text
 * output writes its accuracy so; tests). */
int bb_vval_write(FILE *out, const struct bb_vval *v, struct bb_err *err);

/* Versions of the Graphviz and jansson libraries in use, for --version
 * (static strings). */
const char *bb_viz_graphviz_version(void);
const char *bb_viz_jansson_version(void);

/* ---- units ----------------------------------------------------------------------- */

#define BB_DUR_BUFSZ 32
/* Formats a duration for people: "850 ns", "12.3 µs", "4.56 ms", "1.23 s",
 * "2.00 min"; three significant digits; negative values keep their sign. */
size_t bb_viz_fmt_ns(int64_t ns, char *buf);
/* Same, in plain ASCII ("us" for µs), for dot labels and terminals that want it. */
size_t bb_viz_fmt_ns_ascii(int64_t ns, char *buf);
/* Copies s into a new string for text output: control bytes (below 0x20, and
 * 0x7f) written as \xNN, backslashes doubled, other bytes (UTF-8 included)
 * kept. Returns new, caller frees. */
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
	uint64_t count_lo, count_hi; /* what the count could be where parents were
	                               unsure (the algorithm says how; count_lo =
	                               count_hi = count when nothing was) */
	uint64_t exact;             /* instances whose every parent propagated context
	                               (ctx=) decided */
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
 * its text ("client(nginx(app1(auth pg)))": node names, who calls whom, in
 * call order), not of its counts, times or rank; the same shape has the same
 * id in every run and every output (JSON, dot, text, --instances, bbdiff,
 * bbreport). buf holds BB_PATTERN_ID_BUFSZ bytes. Returns buf. */
#define BB_PATTERN_ID_BUFSZ 17
char *bb_viz_pattern_id(const struct bb_vpattern *p, char *buf);
/* The same id from the pattern's text. */
void bb_viz_shape_id(const char *shape, char *buf);

/* One digraph, one cluster per pattern (figure 8's format): cluster label
 * "#rank: count paths, total latency" then "id ID [req REQ]", node label
 * "name\nmean latency", edge label mean call delay. Nodes are named
 * "p<rank>n<seq>", so no name becomes dot syntax: names go in labels, which
 * cgraph quotes, with backslashes doubled and control bytes and invalid
 * UTF-8 written as \xNN. */
int bb_viz_patterns_dot(FILE *out, const struct bb_vpatterns *p, struct bb_err *err);
/* {"format_version": 1, "patterns": [...], "stats": {...}, "params": {...},
 *  "accuracy": {...}} (null for a part that is NULL) */
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
/* {"format_version": 1, "vertices": [{"id", "node"}], "edges": [{"from", "to",
 *  "count", "delays": [{"delay_ns", "count"}]}], "params", "stats", "accuracy"} */
int bb_viz_graph_json(FILE *out, const struct bb_vgraph *g, struct bb_err *err);
/* "N vertices, M edges", then a line per vertex in the order given, indented
 * one level deeper than the vertex its incoming edge comes from (the last such
 * edge; depths are set in edge order), with that edge's count and delays; then
 * the accuracy, if any. */
int bb_viz_graph_text(FILE *out, const struct bb_vgraph *g, struct bb_err *err);

/* ---- path instances (bbnest --instances, --otlp) -------------------------------------- */

/* One call of an inferred request. parent indexes the instance's calls (-1:
 * the root). ambiguous: its parent was chosen among candidates about as
 * likely as the chosen one (nesting decides what that means). proto and req
 * may be NULL. */
struct bb_vcall {
	const char *caller, *callee;
	int64_t start_ns, end_ns;
	int64_t delay_ns;           /* from the parent call's start; 0 for the root */
	const char *proto, *req;
	int32_t parent;
	int ambiguous;
};

/* One inferred request: its calls in preorder (calls[0] the root, every call
 * after its parent, children in call order). */
struct bb_vinstance {
	uint64_t seq;               /* 0, 1, 2 ... in the order instances complete */
	const char *pattern;        /* the pattern's id (bb_viz_shape_id) */
	const char *shape;          /* the pattern's text, "client(nginx(app1(pg)))" */
	int64_t start_ns, latency_ns;
	size_t ncalls;
	const struct bb_vcall *calls;
};


/* Where instances go: one JSON object a line (jsonl), an OTLP/JSON
 * ExportTraceServiceRequest file (otlp), batches POSTed to an OTLP/HTTP
 * collector (endpoint, a URL; "/v1/traces" is added when it has no path).
 * Any of the three may be NULL; "-" is standard output. Returns new (finish
 * and free with bb_viz_inst_out_close) or NULL with err set. */
struct bb_vinst_out;
struct bb_vinst_out *bb_viz_inst_out_new(const char *jsonl, const char *otlp,
                                         const char *endpoint, struct bb_err *err);
/* Writes one instance (borrowed) everywhere o sends them. Returns 0 or a
 * negative bb_status; after an error o writes nothing more. */
int bb_viz_inst_out_write(struct bb_vinst_out *o, const struct bb_vinstance *in,
                          struct bb_err *err);
/* Completes the documents, sends what is left, closes the files and frees o
 * (NULL does nothing). Returns 0 or the first error of the whole output. */
int bb_viz_inst_out_close(struct bb_vinst_out *o, struct bb_err *err);

/* ---- reading results back (bbdiff, bbreport) -------------------------------------------- */

/* bbnest's JSON output read back into the model. */
struct bb_vpatterns_doc;
/* Returns new (free with bb_viz_patterns_doc_free) or NULL with err naming
 * the file (and line for bad JSON). */
struct bb_vpatterns_doc *bb_viz_patterns_read(const char *path, struct bb_err *err);
/* The patterns, params and stats read; borrowed, valid until the doc is freed. */
const struct bb_vpatterns *bb_viz_patterns_doc(const struct bb_vpatterns_doc *d);
void bb_viz_patterns_doc_free(struct bb_vpatterns_doc *d);
/* obj[key] as an integer, 0 when obj is NULL or has none. */
int64_t bb_vval_get_int(const struct bb_vval *obj, const char *key);
/* A pattern's text: node names, children in parentheses separated by spaces,
 * "client(nginx(app1(auth pg)))". Returns new, caller frees. */
char *bb_viz_pattern_shape(const struct bb_vpattern *p);

/* ---- a service graph with marks (bbdiff) and SVG in-process (bbreport) ------------------ */

struct bb_vsvc_node {
	const char *name;
	const char *label;          /* second line, or NULL */
	int changed;                /* drawn in red */
};
struct bb_vsvc_edge {
	const char *from, *to;      /* node names */
	const char *label;          /* or NULL */
	int changed;
};
struct bb_vsvc {
	size_t nnodes, nedges;
	const struct bb_vsvc_node *nodes;
	const struct bb_vsvc_edge *edges;
	const char *title;          /* or NULL */
};
/* As dot, left to right, changed nodes and edges red and thick. */
int bb_viz_svc_dot(FILE *out, const struct bb_vsvc *s, struct bb_err *err);
/* A Graphviz context for SVG, one a process: graphviz 2.43's pango plugin
 * keeps a font name from its first context, freed with it (a second context
 * then reads freed memory). New; free with bb_viz_svg_free. */
struct bb_vsvg;
struct bb_vsvg *bb_viz_svg_new(void);
void bb_viz_svg_free(struct bb_vsvg *r);
/* Laid out and rendered as SVG through Graphviz's gvc library in this
 * process. Return new (caller frees) with *len its length, or NULL with err. */
char *bb_viz_svc_svg(struct bb_vsvg *r, const struct bb_vsvc *s, size_t *len,
                     struct bb_err *err);
char *bb_viz_pattern_svg(struct bb_vsvg *r, const struct bb_vpattern *p, size_t *len,
                         struct bb_err *err);

#endif

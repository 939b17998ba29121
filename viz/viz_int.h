/* viz_int.h - private helpers shared by the viz writers */
/* SPDX-License-Identifier: MIT */
#ifndef BB_VIZ_INT_H
#define BB_VIZ_INT_H

#include <graphviz/cgraph.h>
#include <jansson.h>

#include "viz/viz.h"

/* cgraph 2.x takes char * for strings it only reads. */
#define S(x) ((char *)(uintptr_t)(x))

/* A symbol to take from a shared library: its name, and the address of the
 * function or data pointer to fill. */
struct bb_viz_sym {
	const char *name;
	void *slot;
};

/* Loads shared library soname (once: nothing when *lib is already set) and
 * fills every syms[i].slot. Returns 0, or -1 with err set ("cannot load ...
 * (install pkg): why", or the symbol it lacks) and *lib left NULL. The
 * library stays loaded until exit. */
int bb_viz_dl_load(void **lib, const char *soname, const char *pkg, const struct bb_viz_sym *syms,
                   size_t n, struct bb_err *err);

/* The cgraph functions and data the writers use, under cgraph's names,
 * loaded at the first graph (viz_dl.c): only dot output needs the library. */
struct bb_viz_cg {
	__typeof__(agopen) *agopen;
	__typeof__(agclose) *agclose;
	__typeof__(agnode) *agnode;
	__typeof__(agedge) *agedge;
	__typeof__(agsubg) *agsubg;
	__typeof__(agattr) *agattr;
	__typeof__(agsafeset) *agsafeset;
	__typeof__(agstrdup) *agstrdup;
	__typeof__(agstrfree) *agstrfree;
	__typeof__(agwrite) *agwrite;
	Agdesc_t *Agdirected;
	Agiddisc_t *AgIdDisc;
	Agiodisc_t *AgIoDisc;
	Agmemdisc_t *AgMemDisc;
};

/* cgraph, loaded at the first call. Returns the table (borrowed, for the
 * process's life), or NULL with err set when the library cannot be loaded. */
const struct bb_viz_cg *bb_viz_cgraph(struct bb_err *err);

/* A struct bb_vval is a jansson value seen through an opaque type. */
static inline json_t *vval_json(const struct bb_vval *v)
{
	return (json_t *)(uintptr_t)v;
}

/* A new reference to v's JSON, or JSON null for NULL (caller decrefs). */
json_t *bb_viz_vval_ref(const struct bb_vval *v);

/* A bb_vstat as {"n", "mean", "p50", "p90", "p99", "max"[, "bins"]} (new ref). */
json_t *bb_viz_stat_json(const struct bb_vstat *s);

/* Dumps root to out as compact JSON with sorted keys and a newline; steals root. */
int bb_viz_dump_json(FILE *out, json_t *root, struct bb_err *err);

/* A name as literal text inside a dot label: backslashes doubled (dot reads
 * escapes in labels), control bytes and invalid UTF-8 written as \xNN.
 * Returns new, caller frees. */
char *bb_viz_dot_label(const char *s);

/* Sets attribute key of a graph, node or edge to val (cgraph is loaded: a
 * graph exists). */
void bb_viz_dot_set(void *obj, const char *key, const char *val);

/* A pattern node and its subtree into sub (figure 8's labels); node ids
 * "p<rank>n<seq>". Returns the node. */
Agnode_t *bb_viz_dot_node(Agraph_t *sub, const struct bb_vnode *v, unsigned rank, unsigned *seq);
/* A new digraph with the pattern drawings' fonts and default labels, or NULL
 * (err set). Caller closes it (agclose). */
Agraph_t *bb_viz_pattern_graph(const char *name, struct bb_err *err);

#endif

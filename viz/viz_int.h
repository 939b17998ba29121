/* viz_int.h - private helpers shared by the viz writers */
/* SPDX-License-Identifier: MIT */
#ifndef BB_VIZ_INT_H
#define BB_VIZ_INT_H

#include <graphviz/cgraph.h>
#include <jansson.h>

#include "viz/viz.h"

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

/* A pattern node and its subtree into sub (figure 8's labels); node ids
 * "p<rank>n<seq>". Returns the node. */
Agnode_t *bb_viz_dot_node(Agraph_t *sub, const struct bb_vnode *v, unsigned rank, unsigned *seq);

#endif

/* viz_graph.c - delay graphs (bbconv) as dot through cgraph, JSON through jansson, and text */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <graphviz/cgraph.h>

#include "viz/viz_int.h"

/* Figure 9: every vertex is a dot node named by its internal id ("v12"), so no
 * node name ever becomes dot syntax; the name goes in the label, where cgraph
 * quotes it. Backslashes are doubled because dot reads escapes such as \N and
 * \n inside labels. Each edge is labelled with its delays in declining
 * frequency and its message count. */

/* Appends s to the growing string *b (length *n, capacity *cap). */
static void cat(char **b, size_t *n, size_t *cap, const char *s)
{
	size_t len = strlen(s);
	if (*n + len + 1 > *cap) {
		*cap = (*n + len + 1) * 2;
		*b = bb_xrealloc(*b, *cap);
	}
	memcpy(*b + *n, s, len + 1);
	*n += len;
}

static char *edge_label(const struct bb_vedge *e)
{
	size_t n = 0, cap = 0;
	char *b = NULL, dur[BB_DUR_BUFSZ], num[32];
	cat(&b, &n, &cap, "");
	for (size_t i = 0; i < e->ndelays; i++) {
		bb_viz_fmt_ns_ascii(e->delays[i].delay_ns, dur);
		if (i)
			cat(&b, &n, &cap, ", ");
		cat(&b, &n, &cap, dur);
	}
	if (e->ndelays)
		cat(&b, &n, &cap, "\\n"); /* the two characters: dot's line break */
	snprintf(num, sizeof(num), "%" PRIu64 " msgs", e->count);
	cat(&b, &n, &cap, num);
	return b;
}

int bb_viz_graph_dot(FILE *out, const struct bb_vgraph *g, struct bb_err *err)
{
	char gname[] = "bbconv", k_label[] = "label", k_shape[] = "shape", empty[] = "",
	     ellipse[] = "ellipse", k_font[] = "fontname", helv[] = "Helvetica";
	const struct bb_viz_cg *cg = bb_viz_cgraph(err);
	if (!cg)
		return BB_ERR_IO;
	Agraph_t *G = cg->agopen(gname, *cg->Agdirected, NULL);
	if (!G) {
		bb_err_set(err, "cannot create a graph");
		return BB_ERR_IO;
	}
	cg->agattr(G, AGNODE, k_shape, ellipse);
	cg->agattr(G, AGNODE, k_font, helv);
	cg->agattr(G, AGEDGE, k_font, helv);
	Agnode_t **nodes = bb_xcalloc(g->nvertices ? g->nvertices : 1, sizeof(*nodes));
	char id[32];
	for (size_t i = 0; i < g->nvertices; i++) {
		snprintf(id, sizeof(id), "v%" PRIu32, g->vertices[i].id);
		nodes[i] = cg->agnode(G, id, 1);
		char *label = bb_viz_dot_label(g->vertices[i].node);
		cg->agsafeset(nodes[i], k_label, label, empty);
		free(label);
	}
	int rc = 0;
	for (size_t i = 0; i < g->nedges; i++) {
		const struct bb_vedge *e = &g->edges[i];
		Agnode_t *from = NULL, *to = NULL;
		for (size_t k = 0; k < g->nvertices && (!from || !to); k++) {
			if (g->vertices[k].id == e->from)
				from = nodes[k];
			if (g->vertices[k].id == e->to)
				to = nodes[k];
		}
		if (!from || !to) {
			bb_err_set(err, "edge %zu names a missing vertex", i);
			rc = BB_ERR_ARG;
			break;
		}
		Agedge_t *ae = cg->agedge(G, from, to, NULL, 1);
		char *label = edge_label(e);
		cg->agsafeset(ae, k_label, label, empty);
		free(label);
	}
	free(nodes);
	if (rc == 0) {
		errno = 0;
		if (cg->agwrite(G, out) != 0 || fflush(out) != 0 || ferror(out)) {
			bb_err_set(err, "write error: %s", strerror(errno ? errno : EIO));
			rc = BB_ERR_IO;
		}
	}
	cg->agclose(G);
	return rc;
}

int bb_viz_graph_json(FILE *out, const struct bb_vgraph *g, struct bb_err *err)
{
	json_t *root = json_object(), *vs = json_array(), *es = json_array();
	for (size_t i = 0; i < g->nvertices; i++) {
		json_t *v = json_object();
		json_object_set_new(v, "id", json_integer(g->vertices[i].id));
		json_t *name = json_string(g->vertices[i].node);
		if (!name) {
			/* not UTF-8: let bb_vval_str replace the bad bytes */
			struct bb_vval *s = bb_vval_str(g->vertices[i].node);
			name = bb_viz_vval_ref(s);
			bb_vval_free(s);
		}
		json_object_set_new(v, "node", name);
		json_array_append_new(vs, v);
	}
	for (size_t i = 0; i < g->nedges; i++) {
		const struct bb_vedge *e = &g->edges[i];
		json_t *o = json_object(), *ds = json_array();
		json_object_set_new(o, "from", json_integer(e->from));
		json_object_set_new(o, "to", json_integer(e->to));
		json_object_set_new(o, "count", json_integer((json_int_t)e->count));
		for (size_t k = 0; k < e->ndelays; k++)
			json_array_append_new(ds,
			                      json_pack("{s:I, s:I}", "delay_ns",
			                                (json_int_t)e->delays[k].delay_ns, "count",
			                                (json_int_t)e->delays[k].count));
		json_object_set_new(o, "delays", ds);
		json_array_append_new(es, o);
	}
	json_object_set_new(root, "format_version", json_integer(BB_VIZ_FORMAT_VERSION));
	json_object_set_new(root, "vertices", vs);
	json_object_set_new(root, "edges", es);
	json_object_set_new(root, "params", bb_viz_vval_ref(g->params));
	json_object_set_new(root, "stats", bb_viz_vval_ref(g->stats));
	json_object_set_new(root, "accuracy", bb_viz_vval_ref(g->accuracy));
	return bb_viz_dump_json(out, root, err);
}

/* The vertices in the order given, each indented one level deeper than the
 * vertex its incoming edge comes from. Depths are set in edge order: right
 * when edges come parents first (preorder, as bbconv lists them). */
int bb_viz_graph_text(FILE *out, const struct bb_vgraph *g, struct bb_err *err)
{
	size_t n = g->nvertices;
	unsigned *depth = bb_xcalloc(n ? n : 1, sizeof(*depth));
	const struct bb_vedge **in = bb_xcalloc(n ? n : 1, sizeof(*in));
	for (size_t i = 0; i < g->nedges; i++) {
		const struct bb_vedge *e = &g->edges[i];
		size_t f = n, t = n;
		for (size_t k = 0; k < n; k++) {
			if (g->vertices[k].id == e->from)
				f = k;
			if (g->vertices[k].id == e->to)
				t = k;
		}
		if (f < n && t < n) {
			in[t] = e;
			depth[t] = depth[f] + 1;
		}
	}
	fprintf(out, "%zu vertices, %zu edges\n", g->nvertices, g->nedges);
	for (size_t i = 0; i < n; i++) {
		char *name = bb_viz_escape_text(g->vertices[i].node);
		fprintf(out, "%*s%s", (int)(2 * depth[i]), "", name);
		free(name);
		if (in[i]) {
			fprintf(out, "  [%" PRIu64 " msgs", in[i]->count);
			for (size_t k = 0; k < in[i]->ndelays; k++) {
				char dur[BB_DUR_BUFSZ];
				bb_viz_fmt_ns(in[i]->delays[k].delay_ns, dur);
				fprintf(out, "%s%s (%" PRIu64 ")", k ? ", " : "; delays ", dur,
				        in[i]->delays[k].count);
			}
			fputc(']', out);
		}
		fputc('\n', out);
	}
	free(depth);
	free(in);
	int rc = 0;
	if (g->accuracy) {
		fputs("accuracy: ", out);
		rc = bb_vval_write(out, g->accuracy, err);
	}
	if (rc == 0 && (fflush(out) != 0 || ferror(out))) {
		bb_err_set(err, "write error: %s", strerror(errno ? errno : EIO));
		rc = BB_ERR_IO;
	}
	return rc;
}

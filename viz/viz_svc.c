/* viz_svc.c - a service graph with marked nodes and edges (bbdiff), and SVG rendered in-process (bbreport) */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>
#include <stdlib.h>
#include <string.h>

#include "viz/viz_int.h"

static Agnode_t *svc_node(Agraph_t *g, const char *name)
{
	return bb_viz_cgraph(NULL)->agnode(g, S(name), 1);
}

static void label(void *obj, const char *name, const char *extra)
{
	char *n = bb_viz_dot_label(name);
	if (extra && *extra) {
		char *e = bb_viz_dot_label(extra);
		size_t len = strlen(n) + strlen(e) + 4;
		char *l = bb_xmalloc(len);
		snprintf(l, len, "%s\\n%s", n, e);
		bb_viz_dot_set(obj, "label", l);
		free(l);
		free(e);
	} else {
		bb_viz_dot_set(obj, "label", n);
	}
	free(n);
}

/* The service graph, or NULL with err set. */
static Agraph_t *svc_graph(const struct bb_vsvc *s, struct bb_err *err)
{
	const struct bb_viz_cg *cg = bb_viz_cgraph(err);
	if (!cg)
		return NULL;
	Agraph_t *g = cg->agopen(S("services"), *cg->Agdirected, NULL);
	if (!g) {
		bb_err_set(err, "cannot create a graph");
		return NULL;
	}
	bb_viz_dot_set(g, "fontname", "Helvetica");
	bb_viz_dot_set(g, "rankdir", "LR");
	if (s->title)
		bb_viz_dot_set(g, "label", s->title);
	cg->agattr(g, AGNODE, S("fontname"), S("Helvetica"));
	cg->agattr(g, AGEDGE, S("fontname"), S("Helvetica"));
	for (size_t i = 0; i < s->nnodes; i++) {
		Agnode_t *n = svc_node(g, s->nodes[i].name);
		label(n, s->nodes[i].name, s->nodes[i].label);
		if (s->nodes[i].changed) {
			bb_viz_dot_set(n, "color", "red");
			bb_viz_dot_set(n, "fontcolor", "red");
			bb_viz_dot_set(n, "penwidth", "3");
		}
	}
	for (size_t i = 0; i < s->nedges; i++) {
		const struct bb_vsvc_edge *e = &s->edges[i];
		Agedge_t *ed = cg->agedge(g, svc_node(g, e->from), svc_node(g, e->to), NULL, 1);
		if (e->label && *e->label)
			bb_viz_dot_set(ed, "label", e->label);
		if (e->changed) {
			bb_viz_dot_set(ed, "color", "red");
			bb_viz_dot_set(ed, "fontcolor", "red");
			bb_viz_dot_set(ed, "penwidth", "3");
		}
	}
	return g;
}

int bb_viz_svc_dot(FILE *out, const struct bb_vsvc *s, struct bb_err *err)
{
	Agraph_t *g = svc_graph(s, err);
	if (!g)
		return BB_ERR_IO;
	const struct bb_viz_cg *cg = bb_viz_cgraph(NULL);
	errno = 0;
	int rc = cg->agwrite(g, out);
	cg->agclose(g);
	if (rc != 0 || fflush(out) != 0 || ferror(out)) {
		bb_err_set(err, "write error: %s", strerror(errno ? errno : EIO));
		return BB_ERR_IO;
	}
	return 0;
}

struct bb_vsvg {
	GVC_t *gvc;
};

struct bb_vsvg *bb_viz_svg_new(void)
{
	struct bb_vsvg *r = bb_xcalloc(1, sizeof(*r));
	r->gvc = gvContext();
	return r;
}

void bb_viz_svg_free(struct bb_vsvg *r)
{
	if (!r)
		return;
	if (r->gvc)
		gvFreeContext(r->gvc);
	free(r);
}

/* Lays g out with dot and renders SVG into a new string, in this process
 * (gvc's plugins come with libgvc: no dot command runs). */
static char *render_svg(struct bb_vsvg *r, Agraph_t *g, size_t *len, struct bb_err *err)
{
	GVC_t *gvc = r->gvc;
	char *data = NULL, *out = NULL;
	unsigned int n = 0;
	if (!gvc || gvLayout(gvc, g, "dot") != 0) {
		bb_err_set(err, "graphviz: cannot lay out the graph");
	} else {
		if (gvRenderData(gvc, g, "svg", &data, &n) != 0 || !data)
			bb_err_set(err, "graphviz: cannot render SVG");
		else {
			out = bb_xmalloc((size_t)n + 1);
			memcpy(out, data, n);
			out[n] = '\0';
			*len = n;
		}
		gvFreeRenderData(data);
		gvFreeLayout(gvc, g);
	}
	return out;
}

char *bb_viz_svc_svg(struct bb_vsvg *r, const struct bb_vsvc *s, size_t *len, struct bb_err *err)
{
	Agraph_t *g = svc_graph(s, err);
	if (!g)
		return NULL;
	char *svg = render_svg(r, g, len, err);
	bb_viz_cgraph(NULL)->agclose(g);
	return svg;
}

char *bb_viz_pattern_svg(struct bb_vsvg *r, const struct bb_vpattern *p, size_t *len,
                          struct bb_err *err)
{
	Agraph_t *g = bb_viz_pattern_graph("pattern", err);
	if (!g)
		return NULL;
	unsigned seq = 0;
	bb_viz_dot_node(g, &p->root, p->rank, &seq);
	char *svg = render_svg(r, g, len, err);
	bb_viz_cgraph(NULL)->agclose(g);
	return svg;
}

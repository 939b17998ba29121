/* rep_diffout.c - bbdiff's result as a verdict, a text table, JSON and a marked service graph */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

/* "+50.1 ms" */
static void fmt_delta(double ns, char *buf)
{
	char d[BB_DUR_BUFSZ];
	bb_viz_fmt_ns(llround(ns), d);
	snprintf(buf, BB_DUR_BUFSZ + 1, "%s%s", ns >= 0 ? "+" : "", d);
}

static void fmt_p(double p, char *buf, size_t len)
{
	if (p < 1e-6)
		snprintf(buf, len, "p < 1e-6");
	else
		snprintf(buf, len, "p = %.2g", p);
}

/* One change as a phrase: "app2 -> pg +50.1 ms (p < 1e-6)". Returns new. */
static char *phrase(const struct bb_rep_change *c)
{
	char d[BB_DUR_BUFSZ + 1], p[32], buf[512];
	fmt_p(c->p, p, sizeof(p));
	switch (c->kind) {
	case BB_REP_EDGE:
		fmt_delta(c->delta_ns, d);
		snprintf(buf, sizeof(buf), "%s -> %s %s (%s)", c->from, c->to, d, p);
		break;
	case BB_REP_NODE:
		fmt_delta(c->delta_ns, d);
		snprintf(buf, sizeof(buf), "%s own time %s (%s)", c->from, d, p);
		break;
	default:
		if (!c->count_base)
			snprintf(buf, sizeof(buf), "new pattern %s, %.0f%% of paths (%s)", c->shapes[0],
			         100 * c->share_slow, p);
		else if (!c->count_slow)
			snprintf(buf, sizeof(buf), "pattern %s vanished, was %.0f%% of paths (%s)",
			         c->shapes[0], 100 * c->share_base, p);
		else
			snprintf(buf, sizeof(buf), "pattern %s %.0f%% -> %.0f%% of paths (%s)",
			         c->shapes[0], 100 * c->share_base, 100 * c->share_slow, p);
	}
	return bb_viz_escape_text(buf);
}

#define VERDICT_MAX 3

char *bb_rep_diff_verdict(const struct bb_rep_diff *d)
{
	const struct bb_rep_change *c;
	size_t n = bb_rep_diff_changes(d, &c);
	if (!n)
		return bb_xstrndup("nothing changed", 15);
	size_t cap = 256, len = 0;
	char *out = bb_xmalloc(cap);
	out[0] = '\0';
	for (size_t i = 0; i < n && i < VERDICT_MAX; i++) {
		char *ph = phrase(&c[i]);
		size_t need = len + strlen(ph) + 64;
		if (need > cap) {
			cap = 2 * need;
			out = bb_xrealloc(out, cap);
		}
		len += (size_t)snprintf(out + len, cap - len, "%s%s", i ? "; " : "", ph);
		free(ph);
	}
	if (n == 1)
		snprintf(out + len, cap - len, ", nothing else changed");
	else if (n > VERDICT_MAX)
		snprintf(out + len, cap - len, "; and %zu more", n - VERDICT_MAX);
	return out;
}

static void dist_text(FILE *out, const struct bb_rep_dist *b, const struct bb_rep_dist *s)
{
	char x[BB_DUR_BUFSZ], y[BB_DUR_BUFSZ];
	const char *name[4] = {"mean", "p50", "p90", "p99"};
	int64_t vb[4] = {llround(b->mean_ns), b->p50, b->p90, b->p99};
	int64_t vs[4] = {llround(s->mean_ns), s->p50, s->p90, s->p99};
	fputs("     ", out);
	for (int i = 0; i < 4; i++) {
		bb_viz_fmt_ns(vb[i], x);
		bb_viz_fmt_ns(vs[i], y);
		fprintf(out, "%s %s -> %s%s", name[i], x, y, i < 3 ? ", " : "");
	}
	fprintf(out, " (n %llu -> %llu)\n", (unsigned long long)b->n, (unsigned long long)s->n);
}

int bb_rep_diff_text(FILE *out, const struct bb_rep_diff *d, struct bb_err *err)
{
	char *v = bb_rep_diff_verdict(d);
	fprintf(out, "%s\n", v);
	free(v);
	const struct bb_rep_change *c;
	size_t n = bb_rep_diff_changes(d, &c);
	size_t tests, matched, ob, os;
	bb_rep_diff_counts(d, &tests, &matched, &ob, &os);
	if (n)
		fputs("\nchanges, largest first:\n", out);
	for (size_t i = 0; i < n; i++) {
		char *ph = phrase(&c[i]);
		fprintf(out, "%2zu. %s\n", i + 1, ph);
		free(ph);
		if (c[i].kind != BB_REP_PATTERN) {
			dist_text(out, &c[i].base, &c[i].slow);
			for (size_t k = 0; k < c[i].npatterns; k++) {
				char *s = bb_viz_escape_text(c[i].shapes[k]);
				fprintf(out, "     in %s %s\n", c[i].patterns[k], s);
				free(s);
			}
		}
	}
	fprintf(out, "\ncompared: %zu patterns in both runs (%zu only in the baseline, %zu only in "
	             "the slow run), %zu delays tested\n", matched, ob, os, tests);
	if (fflush(out) != 0 || ferror(out)) {
		bb_err_set(err, "write error: %s", strerror(errno ? errno : EIO));
		return BB_ERR_IO;
	}
	return 0;
}

static struct bb_vval *dist_vval(const struct bb_rep_dist *x)
{
	struct bb_vval *o = bb_vval_object();
	bb_vval_set_int(o, "n", (int64_t)x->n);
	bb_vval_set_num(o, "mean_ms", round(x->mean_ns / 1e3) / 1e3);
	bb_vval_set_num(o, "p50_ms", (double)x->p50 / 1e6);
	bb_vval_set_num(o, "p90_ms", (double)x->p90 / 1e6);
	bb_vval_set_num(o, "p99_ms", (double)x->p99 / 1e6);
	return o;
}

static struct bb_vval *diff_vval(const struct bb_rep_diff *d)
{
	static const char *const kind[] = {"edge", "node", "pattern"};
	struct bb_vval *root = bb_vval_object();
	char *v = bb_rep_diff_verdict(d);
	bb_vval_set_str(root, "verdict", v);
	free(v);
	struct bb_vval *arr = bb_vval_set(root, "changes", bb_vval_array());
	const struct bb_rep_change *c;
	size_t n = bb_rep_diff_changes(d, &c);
	for (size_t i = 0; i < n; i++) {
		struct bb_vval *o = bb_vval_push(arr, bb_vval_object());
		bb_vval_set_int(o, "rank", (int64_t)i + 1);
		bb_vval_set_str(o, "kind", kind[c[i].kind]);
		if (c[i].from)
			bb_vval_set_str(o, "from", c[i].from);
		if (c[i].to)
			bb_vval_set_str(o, "to", c[i].to);
		bb_vval_set_num(o, "p", c[i].p);
		if (c[i].kind != BB_REP_PATTERN) {
			bb_vval_set_num(o, "delta_ms", round(c[i].delta_ns / 1e3) / 1e3);
			bb_vval_set(o, "base", dist_vval(&c[i].base));
			bb_vval_set(o, "slow", dist_vval(&c[i].slow));
		} else {
			bb_vval_set_int(o, "count_base", (int64_t)c[i].count_base);
			bb_vval_set_int(o, "count_slow", (int64_t)c[i].count_slow);
			bb_vval_set_num(o, "share_base", round(c[i].share_base * 1e4) / 1e4);
			bb_vval_set_num(o, "share_slow", round(c[i].share_slow * 1e4) / 1e4);
		}
		struct bb_vval *pa = bb_vval_set(o, "patterns", bb_vval_array());
		struct bb_vval *sh = bb_vval_set(o, "shapes", bb_vval_array());
		for (size_t k = 0; k < c[i].npatterns; k++) {
			bb_vval_push(pa, bb_vval_str(c[i].patterns[k]));
			bb_vval_push(sh, bb_vval_str(c[i].shapes[k]));
		}
	}
	size_t tests, matched, ob, os;
	bb_rep_diff_counts(d, &tests, &matched, &ob, &os);
	struct bb_vval *cmp = bb_vval_set(root, "compared", bb_vval_object());
	bb_vval_set_int(cmp, "delays_tested", (int64_t)tests);
	bb_vval_set_int(cmp, "patterns_matched", (int64_t)matched);
	bb_vval_set_int(cmp, "patterns_only_base", (int64_t)ob);
	bb_vval_set_int(cmp, "patterns_only_slow", (int64_t)os);
	return root;
}

int bb_rep_diff_json(FILE *out, const struct bb_rep_diff *d, struct bb_err *err)
{
	struct bb_vval *v = diff_vval(d);
	int rc = bb_vval_write(out, v, err);
	bb_vval_free(v);
	return rc;
}

/* ---- the service graph --------------------------------------------------------- */

struct svc {
	struct bb_vsvc_node *n;
	struct bb_vsvc_edge *e;
	size_t nn, ne, capn, cape;
	char **labels;
	size_t nlabels, caplabels;
};

static const char *keep(struct svc *s, char *str)
{
	if (s->nlabels == s->caplabels) {
		s->caplabels = s->caplabels ? 2 * s->caplabels : 32;
		s->labels = bb_xrealloc(s->labels, s->caplabels * sizeof(*s->labels));
	}
	return s->labels[s->nlabels++] = str;
}

static struct bb_vsvc_node *svc_node(struct svc *s, const char *name)
{
	for (size_t i = 0; i < s->nn; i++)
		if (strcmp(s->n[i].name, name) == 0)
			return &s->n[i];
	if (s->nn == s->capn) {
		s->capn = s->capn ? 2 * s->capn : 32;
		s->n = bb_xrealloc(s->n, s->capn * sizeof(*s->n));
	}
	s->n[s->nn] = (struct bb_vsvc_node){name, NULL, 0};
	return &s->n[s->nn++];
}

static struct bb_vsvc_edge *svc_edge(struct svc *s, const char *from, const char *to)
{
	for (size_t i = 0; i < s->ne; i++)
		if (strcmp(s->e[i].from, from) == 0 && strcmp(s->e[i].to, to) == 0)
			return &s->e[i];
	if (s->ne == s->cape) {
		s->cape = s->cape ? 2 * s->cape : 32;
		s->e = bb_xrealloc(s->e, s->cape * sizeof(*s->e));
	}
	svc_node(s, from);
	svc_node(s, to);
	s->e[s->ne] = (struct bb_vsvc_edge){from, to, NULL, 0};
	return &s->e[s->ne++];
}

static void svc_walk(struct svc *s, const struct bb_vnode *v)
{
	svc_node(s, v->name);
	for (size_t i = 0; i < v->nchildren; i++) {
		svc_edge(s, v->name, v->children[i].name);
		svc_walk(s, &v->children[i]);
	}
}

/* The services of both runs, the changes marked; free with svc_free. */
static void svc_build(struct svc *s, const struct bb_rep_diff *d, const struct bb_vpatterns *b,
                      const struct bb_vpatterns *sl)
{
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < sl->n; i++)
		svc_walk(s, &sl->v[i].root);
	for (size_t i = 0; i < b->n; i++)
		svc_walk(s, &b->v[i].root);
	const struct bb_rep_change *c;
	size_t n = bb_rep_diff_changes(d, &c);
	for (size_t i = 0; i < n; i++) {
		if (c[i].kind == BB_REP_PATTERN)
			continue;
		char dl[BB_DUR_BUFSZ + 1];
		fmt_delta(c[i].delta_ns, dl);
		if (c[i].kind == BB_REP_EDGE) {
			struct bb_vsvc_edge *e = svc_edge(s, c[i].from, c[i].to);
			e->changed = 1;
			e->label = keep(s, bb_xstrndup(dl, strlen(dl)));
		} else {
			struct bb_vsvc_node *v = svc_node(s, c[i].from);
			v->changed = 1;
			v->label = keep(s, bb_xstrndup(dl, strlen(dl)));
		}
	}
}

static void svc_free(struct svc *s)
{
	for (size_t i = 0; i < s->nlabels; i++)
		free(s->labels[i]);
	free(s->labels);
	free(s->n);
	free(s->e);
}

/* The graph of d in viz's model; s holds its storage (svc_free). */
static void with_graph(const struct bb_rep_diff *d, struct bb_vsvc *g, struct svc *s)
{
	const struct bb_vpatterns *b, *sl;
	bb_rep_diff_runs(d, &b, &sl);
	svc_build(s, d, b, sl);
	g->nnodes = s->nn;
	g->nedges = s->ne;
	g->nodes = s->n;
	g->edges = s->e;
	g->title = NULL;
}

int bb_rep_diff_dot(FILE *out, const struct bb_rep_diff *d, struct bb_err *err)
{
	struct bb_vsvc g;
	struct svc s;
	with_graph(d, &g, &s);
	char *v = bb_rep_diff_verdict(d);
	g.title = v;
	int rc = bb_viz_svc_dot(out, &g, err);
	free(v);
	svc_free(&s);
	return rc;
}

char *bb_rep_diff_svg(struct bb_vsvg *r, const struct bb_rep_diff *d, size_t *len,
                      struct bb_err *err)
{
	struct bb_vsvc g;
	struct svc s;
	with_graph(d, &g, &s);
	char *svg = bb_viz_svc_svg(r, &g, len, err);
	svc_free(&s);
	return svg;
}

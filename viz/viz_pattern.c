/* viz_pattern.c - path patterns (bbnest) as dot (figure 8), JSON and a text table */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <graphviz/cgraph.h>
#include <graphviz/graphviz_version.h>
#include <stdlib.h>
#include <string.h>

#include "viz/viz_int.h"

const char *bb_viz_graphviz_version(void)
{
	return PACKAGE_VERSION;
}

const char *bb_viz_jansson_version(void)
{
	return jansson_version_str();
}

/* ---- dot ------------------------------------------------------------------- */

/* cgraph 2.x takes char * for strings it only reads. */
#define S(x) ((char *)(uintptr_t)(x))

/* A mean in ns, rounded, as int64_t: saturated, since the latencies of a
 * trace with timestamps 2^63 ns apart average beyond int64_t's range. */
static int64_t mean_ns(double m)
{
	if (!(m < 9223372036854775807.0))
		return m != m ? 0 : INT64_MAX;
	if (m < -9223372036854775807.0)
		return INT64_MIN;
	double r = m + 0.5;
	return r < 9223372036854775807.0 ? (int64_t)r : INT64_MAX;
}

static void set(void *obj, const char *key, const char *val)
{
	agsafeset(obj, S(key), S(val), S(""));
}

Agnode_t *bb_viz_dot_node(Agraph_t *sub, const struct bb_vnode *v, unsigned rank, unsigned *seq)
{
	char id[48], dur[BB_DUR_BUFSZ];
	snprintf(id, sizeof(id), "p%un%u", rank, (*seq)++);
	Agnode_t *nd = agnode(sub, id, 1);
	char *name = bb_viz_dot_label(v->name);
	size_t len = strlen(name) + BB_DUR_BUFSZ + 4;
	char *label = bb_xmalloc(len);
	if (v->latency.n) {
		bb_viz_fmt_ns_ascii(mean_ns(v->latency.mean), dur);
		snprintf(label, len, "%s\\n%s", name, dur);
	} else {
		snprintf(label, len, "%s", name);
	}
	set(nd, "label", label);
	free(label);
	free(name);
	for (size_t i = 0; i < v->nchildren; i++) {
		const struct bb_vnode *c = &v->children[i];
		Agnode_t *cn = bb_viz_dot_node(sub, c, rank, seq);
		Agedge_t *e = agedge(sub, nd, cn, NULL, 1);
		if (c->call_delay.n) {
			bb_viz_fmt_ns_ascii(mean_ns(c->call_delay.mean), dur);
			set(e, "label", dur);
		}
	}
	return nd;
}

/* " (80-130, 12 exact)": the count interval when it is not the count alone,
 * and the instances context decided, if any; "" when neither. */
static void interval_text(const struct bb_vpattern *pt, char *buf, size_t len)
{
	int k = 0;
	buf[0] = '\0';
	if (pt->count_lo != pt->count || pt->count_hi != pt->count)
		k = snprintf(buf, len, " (%llu-%llu", (unsigned long long)pt->count_lo,
		             (unsigned long long)pt->count_hi);
	if (pt->exact)
		k += snprintf(buf + k, len - (size_t)k, "%s%llu exact", k ? ", " : " (",
		              (unsigned long long)pt->exact);
	if (k)
		snprintf(buf + k, len - (size_t)k, ")");
}

int bb_viz_patterns_dot(FILE *out, const struct bb_vpatterns *p, struct bb_err *err)
{
	Agraph_t *g = agopen(S("patterns"), Agdirected, NULL);
	if (!g) {
		bb_err_set(err, "cannot create a graph");
		return BB_ERR_IO;
	}
	set(g, "fontname", "Helvetica");
	agattr(g, AGNODE, S("fontname"), S("Helvetica"));
	agattr(g, AGEDGE, S("fontname"), S("Helvetica"));
	agattr(g, AGNODE, S("label"), S("\\N"));
	agattr(g, AGEDGE, S("label"), S(""));
	for (size_t i = 0; i < p->n; i++) {
		const struct bb_vpattern *pt = &p->v[i];
		char name[32], total[BB_DUR_BUFSZ], label[160], iv[96];
		snprintf(name, sizeof(name), "cluster_%u", pt->rank);
		Agraph_t *sub = agsubg(g, name, 1);
		bb_viz_fmt_ns_ascii(pt->total_latency_ns, total);
		interval_text(pt, iv, sizeof(iv));
		snprintf(label, sizeof(label), "#%u: %llu path%s%s, %s total", pt->rank,
		         (unsigned long long)pt->count, pt->count == 1 ? "" : "s", iv, total);
		set(sub, "label", label);
		unsigned seq = 0;
		bb_viz_dot_node(sub, &pt->root, pt->rank, &seq);
	}
	errno = 0;
	int rc = agwrite(g, out);
	agclose(g);
	if (rc != 0 || fflush(out) != 0 || ferror(out)) {
		bb_err_set(err, "write error: %s", strerror(errno ? errno : EIO));
		return BB_ERR_IO;
	}
	return 0;
}

/* ---- JSON ------------------------------------------------------------------ */

static json_t *node_json(const struct bb_vnode *v)
{
	struct bb_vval *name = bb_vval_str(v->name);
	json_t *o = json_object();
	json_object_set_new(o, "name", vval_json(name));
	json_object_set_new(o, "latency_ns", bb_viz_stat_json(&v->latency));
	json_object_set_new(o, "call_delay_ns", bb_viz_stat_json(&v->call_delay));
	json_t *ch = json_array();
	for (size_t i = 0; i < v->nchildren; i++)
		json_array_append_new(ch, node_json(&v->children[i]));
	json_object_set_new(o, "children", ch);
	return o;
}

int bb_viz_patterns_json(FILE *out, const struct bb_vpatterns *p, struct bb_err *err)
{
	json_t *root = json_object(), *arr = json_array();
	for (size_t i = 0; i < p->n; i++) {
		const struct bb_vpattern *pt = &p->v[i];
		json_t *o = json_pack("{s:I, s:I, s:I}", "rank", (json_int_t)pt->rank, "count",
		                      (json_int_t)pt->count, "total_latency_ns",
		                      (json_int_t)pt->total_latency_ns);
		json_object_set_new(o, "count_interval",
		                    json_pack("[I, I]", (json_int_t)pt->count_lo,
		                              (json_int_t)pt->count_hi));
		json_object_set_new(o, "exact", json_integer((json_int_t)pt->exact));
		json_object_set_new(o, "root", node_json(&pt->root));
		json_array_append_new(arr, o);
	}
	json_object_set_new(root, "patterns", arr);
	json_object_set_new(root, "params", bb_viz_vval_ref(p->params));
	json_object_set_new(root, "stats", bb_viz_vval_ref(p->stats));
	json_object_set_new(root, "accuracy", bb_viz_vval_ref(p->accuracy));
	return bb_viz_dump_json(out, root, err);
}

/* ---- text ------------------------------------------------------------------- */

#define NAME_W 30

static void text_node(FILE *out, const struct bb_vnode *v, int depth)
{
	char *name = bb_viz_escape_text(v->name);
	char m[BB_DUR_BUFSZ], p50[BB_DUR_BUFSZ], p90[BB_DUR_BUFSZ], p99[BB_DUR_BUFSZ],
		mx[BB_DUR_BUFSZ], d[BB_DUR_BUFSZ];
	const struct bb_vstat *l = &v->latency;
	bb_viz_fmt_ns(mean_ns(l->mean), m);
	bb_viz_fmt_ns(l->p50, p50);
	bb_viz_fmt_ns(l->p90, p90);
	bb_viz_fmt_ns(l->p99, p99);
	bb_viz_fmt_ns(l->max, mx);
	if (v->call_delay.n)
		bb_viz_fmt_ns(mean_ns(v->call_delay.mean), d);
	else
		strcpy(d, "-");
	int ind = 2 * depth;
	int w = NAME_W - ind > 1 ? NAME_W - ind : 1;
	/* µs is two bytes and one column: pad by hand so columns line up */
	fprintf(out, "  %*s%-*s", ind, "", w, name);
	const char *cols[6] = {d, m, p50, p90, p99, mx};
	for (int i = 0; i < 6; i++) {
		int extra = strstr(cols[i], "\xc2\xb5") ? 1 : 0;
		fprintf(out, " %*s", 10 + extra, cols[i]);
	}
	fputc('\n', out);
	free(name);
	for (size_t i = 0; i < v->nchildren; i++)
		text_node(out, &v->children[i], depth + 1);
}

static json_int_t jint(json_t *o, const char *k1, const char *k2)
{
	json_t *a = json_object_get(o, k1);
	return json_integer_value(k2 ? json_object_get(a, k2) : a);
}

static void text_accuracy(FILE *out, json_t *acc)
{
	static const char *what[3] = {"patterns", "instances", "messages"};
	fprintf(out, "\naccuracy against the ground truth (section 7.5.1)\n");
	fprintf(out, "  %-10s %10s %10s %10s %10s\n", "", "inferred", "true", "fp", "fn");
	for (int i = 0; i < 3; i++) {
		json_t *o = json_object_get(acc, what[i]);
		fprintf(out, "  %-10s %10lld %10lld %10lld %10lld\n", what[i],
		        (long long)jint(o, "inferred", NULL), (long long)jint(o, "true", NULL),
		        (long long)jint(o, "fp", NULL), (long long)jint(o, "fn", NULL));
	}
	json_t *b = json_object_get(acc, "bound");
	if (b) {
		json_t *bi = json_object_get(b, "instances");
		long long fn = jint(bi, "fn", NULL), tr = jint(bi, "true", NULL);
		fprintf(out, "  timing-only bound: %lld of %lld instances wrong (%.2f%%)\n", fn, tr,
		        tr ? 100.0 * (double)fn / (double)tr : 0.0);
	}
	json_t *t = json_object_get(acc, "topn_fn");
	json_t *a0 = json_object_get(t, "0"), *a2 = json_object_get(t, "2"),
	       *a6 = json_object_get(t, "6");
	fprintf(out, "\n  top-N false negatives at tolerance\n  %4s %6s %6s %6s\n", "N", "0%",
	        "2%", "6%");
	for (size_t n = 0; n < json_array_size(a0); n++)
		fprintf(out, "  %4zu %6lld %6lld %6lld\n", n + 1,
		        (long long)json_integer_value(json_array_get(a0, n)),
		        (long long)json_integer_value(json_array_get(a2, n)),
		        (long long)json_integer_value(json_array_get(a6, n)));
}

int bb_viz_patterns_text(FILE *out, const struct bb_vpatterns *p, struct bb_err *err)
{
	fprintf(out, "  %-*s %10s %10s %10s %10s %10s %10s\n", NAME_W, "node", "delay",
	        "latency", "p50", "p90", "p99", "max");
	for (size_t i = 0; i < p->n; i++) {
		const struct bb_vpattern *pt = &p->v[i];
		char total[BB_DUR_BUFSZ], iv[96];
		bb_viz_fmt_ns(pt->total_latency_ns, total);
		interval_text(pt, iv, sizeof(iv));
		fprintf(out, "#%u  %llu path%s%s, %s total\n", pt->rank, (unsigned long long)pt->count,
		        pt->count == 1 ? "" : "s", iv, total);
		text_node(out, &pt->root, 0);
	}
	if (p->stats) {
		json_t *s = vval_json(p->stats);
		fprintf(out,
		        "\n%lld messages, %lld call pairs, %lld unmatched calls, %lld unmatched "
		        "returns, mean parallelism %.2f, %lld patterns (%zu shown)\n",
		        (long long)jint(s, "messages", NULL), (long long)jint(s, "call_pairs", NULL),
		        (long long)jint(s, "unmatched_calls", NULL),
		        (long long)jint(s, "unmatched_returns", NULL),
		        json_number_value(json_object_get(s, "mean_parallelism")),
		        (long long)jint(s, "patterns", NULL), p->n);
	}
	if (p->accuracy)
		text_accuracy(out, vval_json(p->accuracy));
	if (fflush(out) != 0 || ferror(out)) {
		bb_err_set(err, "write error: %s", strerror(errno ? errno : EIO));
		return BB_ERR_IO;
	}
	return 0;
}

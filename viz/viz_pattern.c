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

/* ---- pattern ids ------------------------------------------------------------ */

static uint64_t fnv(uint64_t h, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * UINT64_C(1099511628211);
	return h;
}

/* The hash of the pattern's text, "client(nginx(app1(auth pg)))" (names in
 * call order, children in parentheses, separated by spaces), as bbnest
 * --instances writes it (shape) and bb_viz_shape_id hashes it. */
static uint64_t shape_hash(uint64_t h, const struct bb_vnode *v)
{
	h = fnv(h, v->name, strlen(v->name));
	if (!v->nchildren)
		return h;
	h = fnv(h, "(", 1);
	for (size_t i = 0; i < v->nchildren; i++) {
		if (i)
			h = fnv(h, " ", 1);
		h = shape_hash(h, &v->children[i]);
	}
	return fnv(h, ")", 1);
}

char *bb_viz_pattern_id(const struct bb_vpattern *p, char *buf)
{
	uint64_t h = shape_hash(UINT64_C(14695981039346656037), &p->root);
	snprintf(buf, BB_PATTERN_ID_BUFSZ, "%016llx", (unsigned long long)h);
	return buf;
}

void bb_viz_shape_id(const char *shape, char *buf)
{
	uint64_t h = fnv(UINT64_C(14695981039346656037), shape, strlen(shape));
	snprintf(buf, BB_PATTERN_ID_BUFSZ, "%016llx", (unsigned long long)h);
}

/* ---- dot ------------------------------------------------------------------- */

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

void bb_viz_dot_set(void *obj, const char *key, const char *val)
{
	bb_viz_cgraph(NULL)->agsafeset(obj, S(key), S(val), S(""));
}

Agnode_t *bb_viz_dot_node(Agraph_t *sub, const struct bb_vnode *v, unsigned rank, unsigned *seq)
{
	const struct bb_viz_cg *cg = bb_viz_cgraph(NULL); /* loaded: sub exists */
	char id[48], dur[BB_DUR_BUFSZ];
	snprintf(id, sizeof(id), "p%un%u", rank, (*seq)++);
	Agnode_t *nd = cg->agnode(sub, id, 1);
	char *name = bb_viz_dot_label(v->name);
	size_t len = strlen(name) + BB_DUR_BUFSZ + 4;
	char *label = bb_xmalloc(len);
	if (v->latency.n) {
		bb_viz_fmt_ns_ascii(mean_ns(v->latency.mean), dur);
		snprintf(label, len, "%s\\n%s", name, dur);
	} else {
		snprintf(label, len, "%s", name);
	}
	bb_viz_dot_set(nd, "label", label);
	free(label);
	free(name);
	for (size_t i = 0; i < v->nchildren; i++) {
		const struct bb_vnode *c = &v->children[i];
		Agnode_t *cn = bb_viz_dot_node(sub, c, rank, seq);
		Agedge_t *e = cg->agedge(sub, nd, cn, NULL, 1);
		if (c->call_delay.n) {
			bb_viz_fmt_ns_ascii(mean_ns(c->call_delay.mean), dur);
			bb_viz_dot_set(e, "label", dur);
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

/* cgraph keeps a graph's subgraphs ordered by their IDs, and its default
 * ID discipline makes a named object's ID of the address of its interned
 * name: the clusters came out in an order the heap's layout made (a change
 * in bbnest's allocations moved cluster_1 last). Here the graph and its
 * named subgraphs take even IDs in the order they are made (cgraph's
 * default makes anonymous IDs odd); nodes, edges and anonymous subgraphs
 * keep the default's. */
struct made_ids {
	const struct bb_viz_cg *cg;
	Agraph_t *g;
	void *dflt; /* the default discipline's state */
	char **name; /* name[i] has ID 2 * (i + 1); interned, as agwrite wants */
	size_t n, cap;
};

static void *ids_open(Agraph_t *g, Agdisc_t *d)
{
	struct made_ids *s = bb_xcalloc(1, sizeof(*s));
	s->cg = bb_viz_cgraph(NULL); /* loaded: agopen calls this */
	s->g = g;
	s->dflt = s->cg->AgIdDisc->open(g, d);
	return s;
}

static int ids_mine(int objtype, IDTYPE id)
{
	return objtype == AGRAPH && id % 2 == 0;
}

static long ids_map(void *state, int objtype, char *str, IDTYPE *id, int createflag)
{
	struct made_ids *s = state;
	if (objtype != AGRAPH || !str)
		return s->cg->AgIdDisc->map(s->dflt, objtype, str, id, createflag);
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->name[i], str) == 0) {
			*id = 2 * (IDTYPE)(i + 1);
			return 1;
		}
	if (!createflag)
		return 0;
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 16;
		s->name = bb_xrealloc(s->name, s->cap * sizeof(*s->name));
	}
	s->name[s->n++] = s->cg->agstrdup(s->g, str);
	*id = 2 * (IDTYPE)s->n;
	return 1;
}

static long ids_alloc(void *state, int objtype, IDTYPE id)
{
	struct made_ids *s = state;
	return s->cg->AgIdDisc->alloc(s->dflt, objtype, id);
}

static void ids_free(void *state, int objtype, IDTYPE id)
{
	struct made_ids *s = state;
	if (!ids_mine(objtype, id)) /* the names go at close */
		s->cg->AgIdDisc->free(s->dflt, objtype, id);
}

static char *ids_print(void *state, int objtype, IDTYPE id)
{
	struct made_ids *s = state;
	if (ids_mine(objtype, id))
		return id / 2 - 1 < s->n ? s->name[id / 2 - 1] : NULL;
	return s->cg->AgIdDisc->print(s->dflt, objtype, id);
}

static void ids_close(void *state)
{
	struct made_ids *s = state;
	for (size_t i = 0; i < s->n; i++)
		s->cg->agstrfree(s->g, s->name[i]);
	free(s->name);
	if (s->cg->AgIdDisc->close)
		s->cg->AgIdDisc->close(s->dflt);
	free(s);
}

static void ids_register(void *state, int objtype, void *obj)
{
	struct made_ids *s = state;
	if (s->cg->AgIdDisc->idregister)
		s->cg->AgIdDisc->idregister(s->dflt, objtype, obj);
}

static Agiddisc_t made_id_disc = {ids_open, ids_map,   ids_alloc,   ids_free,
                                  ids_print, ids_close, ids_register};
static Agdisc_t made_disc = {NULL, &made_id_disc, NULL}; /* cgraph's mem and io */

Agraph_t *bb_viz_pattern_graph(const char *name, struct bb_err *err)
{
	const struct bb_viz_cg *cg = bb_viz_cgraph(err);
	if (!cg)
		return NULL;
	made_disc.mem = cg->AgMemDisc;
	made_disc.io = cg->AgIoDisc;
	Agraph_t *g = cg->agopen(S(name), *cg->Agdirected, &made_disc);
	if (!g) {
		bb_err_set(err, "cannot create a graph");
		return NULL;
	}
	bb_viz_dot_set(g, "fontname", "Helvetica");
	cg->agattr(g, AGNODE, S("fontname"), S("Helvetica"));
	cg->agattr(g, AGEDGE, S("fontname"), S("Helvetica"));
	cg->agattr(g, AGNODE, S("label"), S("\\N"));
	cg->agattr(g, AGEDGE, S("label"), S(""));
	return g;
}

int bb_viz_patterns_dot(FILE *out, const struct bb_vpatterns *p, struct bb_err *err)
{
	Agraph_t *g = bb_viz_pattern_graph("patterns", err);
	if (!g)
		return BB_ERR_IO;
	const struct bb_viz_cg *cg = bb_viz_cgraph(NULL);
	for (size_t i = 0; i < p->n; i++) {
		const struct bb_vpattern *pt = &p->v[i];
		char name[32], total[BB_DUR_BUFSZ], id[17], iv[96];
		snprintf(name, sizeof(name), "cluster_%u", pt->rank);
		Agraph_t *sub = cg->agsubg(g, name, 1);
		bb_viz_fmt_ns_ascii(pt->total_latency_ns, total);
		interval_text(pt, iv, sizeof(iv));
		/* id (and req) on a second line: "#1: 24 paths, 5.69 s total\nid ... req ..." */
		char *req = pt->root.req ? bb_viz_dot_label(pt->root.req) : NULL;
		size_t len = 256 + (req ? strlen(req) : 0);
		char *label = bb_xmalloc(len);
		snprintf(label, len, "#%u: %llu path%s%s, %s total\\nid %s%s%s", pt->rank,
		         (unsigned long long)pt->count, pt->count == 1 ? "" : "s", iv, total,
		         bb_viz_pattern_id(pt, id), req ? " req " : "", req ? req : "");
		bb_viz_dot_set(sub, "label", label);
		free(label);
		free(req);
		unsigned seq = 0;
		bb_viz_dot_node(sub, &pt->root, pt->rank, &seq);
	}
	errno = 0;
	int rc = cg->agwrite(g, out);
	cg->agclose(g);
	if (rc != 0 || fflush(out) != 0 || ferror(out)) {
		bb_err_set(err, "write error: %s", strerror(errno ? errno : EIO));
		return BB_ERR_IO;
	}
	return 0;
}

/* ---- JSON ------------------------------------------------------------------ */

/* A JSON string of s (bad UTF-8 bytes replaced, as for names). */
static json_t *str_json(const char *s)
{
	struct bb_vval *v = bb_vval_str(s);
	json_t *j = vval_json(v);
	return j;
}

static json_t *node_json(const struct bb_vnode *v)
{
	struct bb_vval *name = bb_vval_str(v->name);
	json_t *o = json_object();
	json_object_set_new(o, "name", vval_json(name));
	if (v->req)
		json_object_set_new(o, "req", str_json(v->req));
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
		char id[17];
		json_object_set_new(o, "id", json_string(bb_viz_pattern_id(pt, id)));
		json_object_set_new(o, "req", pt->root.req ? str_json(pt->root.req) : json_null());
		json_object_set_new(o, "root", node_json(&pt->root));
		json_array_append_new(arr, o);
	}
	json_object_set_new(root, "format_version", json_integer(BB_VIZ_FORMAT_VERSION));
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
		char total[BB_DUR_BUFSZ], id[17], iv[96];
		bb_viz_fmt_ns(pt->total_latency_ns, total);
		interval_text(pt, iv, sizeof(iv));
		fprintf(out, "#%u  %llu path%s%s, %s total  id %s", pt->rank,
		        (unsigned long long)pt->count, pt->count == 1 ? "" : "s", iv, total,
		        bb_viz_pattern_id(pt, id));
		if (pt->root.req) {
			char *req = bb_viz_escape_text(pt->root.req);
			fprintf(out, "  req %s", req);
			free(req);
		}
		fputc('\n', out);
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

/* test_viz.c - unit tests for viz/: patterns and delay graphs as dot, JSON and text */
/* SPDX-License-Identifier: MIT */
/*
 * Small models are built through viz.h, written to memory, and read back:
 * the JSON with jansson, the dot with cgraph (so it must be valid dot), the
 * text line by line. Node names carry what breaks naive writers: a double
 * quote, a newline, a backslash, a dot keyword, bytes that are not UTF-8.
 */
#include <graphviz/cgraph.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viz/viz.h"
#include "viz/viz_int.h"
#include "unit.h"

/* ---- capture of an output ------------------------------------------------------ */

struct mem {
	char *text;
	size_t len;
	FILE *f;
};

static FILE *mem_open(struct mem *m)
{
	m->text = NULL;
	m->len = 0;
	m->f = open_memstream(&m->text, &m->len);
	return m->f;
}

/* Closes the stream; m->text holds what was written (caller frees). */
static const char *mem_close(struct mem *m)
{
	fclose(m->f);
	return m->text;
}

static int count_of(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* ---- the models ----------------------------------------------------------------- */

#define QUOTE_NAME "app\"1"        /* a double quote */
#define NL_NAME "redis\nmaster"    /* a newline */
#define BS_NAME "pg\\main"         /* a backslash */
#define KW_NAME "node"             /* a dot keyword */

static const struct bb_vbin bins[2] = {{1000000, 2000000, 20}, {2000000, 4000000, 4}};

/* Pattern 1: client -> app"1 -> (redis\nmaster, pg\main); pattern 2:
 * client -> node. Latencies in ns; the root's are the whole path's. */
static void model(struct bb_vnode n1[4], struct bb_vnode n2[2], struct bb_vpattern pt[2])
{
	memset(n1, 0, 4 * sizeof *n1);
	memset(n2, 0, 2 * sizeof *n2);
	memset(pt, 0, 2 * sizeof *pt);
	/* n1[0] the root, n1[1] the app, n1[2] and n1[3] the app's children */
	n1[2].name = NL_NAME;
	n1[2].req = "GET";
	n1[2].latency = (struct bb_vstat){8, 150000.0, 140000, 190000, 200000, 210000, 0, NULL};
	n1[2].call_delay = (struct bb_vstat){8, 50000.0, 50000, 60000, 70000, 80000, 0, NULL};
	n1[3].name = BS_NAME;
	n1[3].latency = (struct bb_vstat){8, 2500000.0, 2400000, 2900000, 3000000, 3100000, 0, NULL};
	n1[3].call_delay = (struct bb_vstat){8, 400000.0, 400000, 450000, 460000, 470000, 0, NULL};
	n1[1].name = QUOTE_NAME;
	n1[1].req = "GET /cart";
	n1[1].latency = (struct bb_vstat){24, 1500000.0, 1400000, 2000000, 3000000, 3500000, 2,
	                                  bins};
	n1[1].call_delay = (struct bb_vstat){24, 20000.0, 20000, 21000, 22000, 23000, 0, NULL};
	n1[1].nchildren = 2;
	n1[1].children = &n1[2];
	n1[0].name = "client";
	n1[0].req = "GET /cart";
	n1[0].latency = n1[1].latency;
	n1[0].nchildren = 1;
	n1[0].children = &n1[1];
	pt[0].rank = 1;
	pt[0].count = 24;
	pt[0].count_lo = 20;
	pt[0].count_hi = 30;
	pt[0].exact = 12;
	pt[0].total_latency_ns = 36000000;
	pt[0].root = n1[0];

	n2[1].name = KW_NAME;
	n2[1].latency = (struct bb_vstat){3, 850.0, 800, 900, 900, 900, 0, NULL};
	n2[1].call_delay = (struct bb_vstat){3, 100.0, 100, 100, 100, 100, 0, NULL};
	n2[0].name = "client";
	n2[0].latency = n2[1].latency;
	n2[0].nchildren = 1;
	n2[0].children = &n2[1];
	pt[1].rank = 2;
	pt[1].count = 3;
	pt[1].count_lo = pt[1].count_hi = 3;
	pt[1].total_latency_ns = 2550;
	pt[1].root = n2[0];
}

/* ---- patterns: JSON ------------------------------------------------------------- */

static json_t *child(json_t *node, size_t i)
{
	return json_array_get(json_object_get(node, "children"), i);
}

static const char *jstr(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static long long jint(json_t *o, const char *k)
{
	return (long long)json_integer_value(json_object_get(o, k));
}

static void check_stat(json_t *o, const struct bb_vstat *want)
{
	CHECK_INT(jint(o, "n"), want->n);
	CHECK(fabs(json_number_value(json_object_get(o, "mean")) - want->mean) < 1e-6);
	CHECK_INT(jint(o, "p50"), want->p50);
	CHECK_INT(jint(o, "p90"), want->p90);
	CHECK_INT(jint(o, "p99"), want->p99);
	CHECK_INT(jint(o, "max"), want->max);
	json_t *b = json_object_get(o, "bins");
	CHECK_INT(json_array_size(b), want->nbins);
	for (size_t i = 0; i < want->nbins && i < json_array_size(b); i++) {
		json_t *bin = json_array_get(b, i);
		CHECK_INT(json_integer_value(json_array_get(bin, 0)), want->bins[i].lo_ns);
		CHECK_INT(json_integer_value(json_array_get(bin, 1)), want->bins[i].hi_ns);
		CHECK_INT(json_integer_value(json_array_get(bin, 2)), want->bins[i].count);
	}
}

static void t_patterns_json(void)
{
	struct bb_vnode n1[4], n2[2];
	struct bb_vpattern pt[2];
	model(n1, n2, pt);
	struct bb_vval *params = bb_vval_object();
	bb_vval_set_int(params, "window_ns", 5000000);
	bb_vval_set_str(params, "odd", "a\"b\\c\nd");
	struct bb_vval *stats = bb_vval_object();
	bb_vval_set_int(stats, "messages", 1234);
	bb_vval_set_num(stats, "mean_parallelism", 1.5);
	struct bb_vpatterns ps = {2, pt, params, stats, NULL};
	struct mem m;
	struct bb_err err = {{0}};
	CHECK(mem_open(&m) != NULL);
	CHECK_INT(bb_viz_patterns_json(m.f, &ps, &err), 0);
	const char *text = mem_close(&m);
	CHECK_INT(count_of(text, "\n"), 1); /* one line */
	json_error_t je;
	json_t *doc = json_loads(text, 0, &je);
	CHECK(doc != NULL);
	if (!doc) {
		fprintf(stderr, "JSON error %s at %d: %s\n", je.text, je.position, text);
		goto out;
	}
	CHECK_INT(jint(doc, "format_version"), BB_VIZ_FORMAT_VERSION);
	CHECK(json_is_null(json_object_get(doc, "accuracy")));
	CHECK_INT(jint(json_object_get(doc, "params"), "window_ns"), 5000000);
	CHECK_STR(jstr(json_object_get(doc, "params"), "odd"), "a\"b\\c\nd");
	CHECK_INT(jint(json_object_get(doc, "stats"), "messages"), 1234);
	json_t *arr = json_object_get(doc, "patterns");
	CHECK_INT(json_array_size(arr), 2);
	json_t *p1 = json_array_get(arr, 0), *p2 = json_array_get(arr, 1);
	CHECK_INT(jint(p1, "rank"), 1);
	CHECK_INT(jint(p1, "count"), 24);
	CHECK_INT(jint(p1, "exact"), 12);
	CHECK_INT(jint(p1, "total_latency_ns"), 36000000);
	json_t *iv = json_object_get(p1, "count_interval");
	CHECK_INT(json_integer_value(json_array_get(iv, 0)), 20);
	CHECK_INT(json_integer_value(json_array_get(iv, 1)), 30);
	char id[BB_PATTERN_ID_BUFSZ];
	CHECK_STR(jstr(p1, "id"), bb_viz_pattern_id(&pt[0], id));
	CHECK_STR(jstr(p1, "req"), "GET /cart");
	CHECK(json_is_null(json_object_get(p2, "req")));
	CHECK_INT(jint(p2, "rank"), 2);
	CHECK_STR(jstr(p2, "id"), bb_viz_pattern_id(&pt[1], id));

	/* the tree: names exactly as given, the stats of each node */
	json_t *root = json_object_get(p1, "root");
	CHECK_STR(jstr(root, "name"), "client");
	CHECK_INT(json_array_size(json_object_get(root, "children")), 1);
	json_t *app = child(root, 0);
	CHECK_STR(jstr(app, "name"), QUOTE_NAME);
	CHECK_STR(jstr(app, "req"), "GET /cart");
	check_stat(json_object_get(app, "latency_ns"), &n1[1].latency);
	check_stat(json_object_get(app, "call_delay_ns"), &n1[1].call_delay);
	CHECK_INT(json_array_size(json_object_get(app, "children")), 2);
	json_t *redis = child(app, 0), *pg = child(app, 1);
	CHECK_STR(jstr(redis, "name"), NL_NAME);
	CHECK_STR(jstr(redis, "req"), "GET");
	check_stat(json_object_get(redis, "latency_ns"), &n1[2].latency);
	CHECK_STR(jstr(pg, "name"), BS_NAME);
	CHECK(json_object_get(pg, "req") == NULL); /* no req: no key */
	check_stat(json_object_get(pg, "latency_ns"), &n1[3].latency);
	check_stat(json_object_get(pg, "call_delay_ns"), &n1[3].call_delay);
	CHECK_INT(json_array_size(json_object_get(pg, "children")), 0);
	CHECK_STR(jstr(child(json_object_get(p2, "root"), 0), "name"), KW_NAME);
	json_decref(doc);
out:
	free(m.text);
	bb_vval_free(params);
	bb_vval_free(stats);
}

/* ---- patterns: dot -------------------------------------------------------------- */

/* The node of g whose label starts with the name `name` followed by "\n" (the
 * two characters) or the end; NULL if none. */
static Agnode_t *node_labelled(Agraph_t *g, const char *label_start)
{
	for (Agnode_t *n = agfstnode(g); n; n = agnxtnode(g, n)) {
		const char *l = agget(n, S("label"));
		size_t k = strlen(label_start);
		if (l && strncmp(l, label_start, k) == 0 && (l[k] == '\0' || l[k] == '\\'))
			return n;
	}
	return NULL;
}

static void t_patterns_dot(void)
{
	struct bb_vnode n1[4], n2[2];
	struct bb_vpattern pt[2];
	model(n1, n2, pt);
	struct bb_vpatterns ps = {2, pt, NULL, NULL, NULL};
	struct mem m;
	struct bb_err err = {{0}};
	CHECK(mem_open(&m) != NULL);
	CHECK_INT(bb_viz_patterns_dot(m.f, &ps, &err), 0);
	const char *text = mem_close(&m);
	Agraph_t *g = agmemread(text);
	CHECK(g != NULL);
	if (!g) {
		fprintf(stderr, "not valid dot:\n%s\n", text);
		free(m.text);
		return;
	}
	CHECK_INT(agnnodes(g), 6);
	CHECK_INT(agnedges(g), 4);
	/* one cluster per pattern, labelled with rank, count, interval, total, id */
	char id[BB_PATTERN_ID_BUFSZ], want[256];
	Agraph_t *c1 = agsubg(g, S("cluster_1"), 0), *c2 = agsubg(g, S("cluster_2"), 0);
	CHECK(c1 && c2);
	if (c1) {
		snprintf(want, sizeof want,
		         "#1: 24 paths (20-30, 12 exact), 36.0 ms total\\nid %s req GET /cart",
		         bb_viz_pattern_id(&pt[0], id));
		CHECK_STR(agget(c1, S("label")), want);
		CHECK_INT(agnnodes(c1), 4);
	}
	if (c2) {
		snprintf(want, sizeof want, "#2: 3 paths, 2.55 us total\\nid %s",
		         bb_viz_pattern_id(&pt[1], id));
		CHECK_STR(agget(c2, S("label")), want);
	}
	/* labels: the name (backslash doubled, control bytes as \xNN, both
	 * escaped again for dot), then the mean latency in ASCII units */
	Agnode_t *app = node_labelled(g, QUOTE_NAME);
	CHECK(app != NULL);
	if (app)
		CHECK_STR(agget(app, S("label")), "app\"1\\n1.50 ms");
	Agnode_t *redis = node_labelled(g, "redis\\\\x0amaster");
	CHECK(redis != NULL);
	if (redis)
		CHECK_STR(agget(redis, S("label")), "redis\\\\x0amaster\\n150 us");
	Agnode_t *pg = node_labelled(g, "pg\\\\main");
	CHECK(pg != NULL);
	Agnode_t *kw = node_labelled(g, KW_NAME);
	CHECK(kw != NULL);
	if (kw)
		CHECK_STR(agget(kw, S("label")), "node\\n850 ns");
	/* edges: parent to child, labelled with the mean call delay */
	if (app && redis && pg) {
		Agedge_t *e = agedge(g, app, redis, NULL, 0);
		CHECK(e != NULL);
		if (e)
			CHECK_STR(agget(e, S("label")), "50.0 us");
		e = agedge(g, app, pg, NULL, 0);
		CHECK(e != NULL);
		if (e)
			CHECK_STR(agget(e, S("label")), "400 us");
		CHECK(agedge(g, redis, pg, NULL, 0) == NULL);
	}
	/* the names never become node ids */
	CHECK(agnode(g, S("p1n0"), 0) != NULL);
	CHECK(agnode(g, S("p2n1"), 0) != NULL);
	CHECK(agnode(g, S(KW_NAME), 0) == NULL);
	agclose(g);
	free(m.text);
}

/* ---- patterns: text ------------------------------------------------------------- */

static void t_patterns_text(void)
{
	struct bb_vnode n1[4], n2[2];
	struct bb_vpattern pt[2];
	model(n1, n2, pt);
	struct bb_vval *stats = bb_vval_object();
	bb_vval_set_int(stats, "messages", 1234);
	bb_vval_set_int(stats, "call_pairs", 600);
	bb_vval_set_int(stats, "patterns", 2);
	bb_vval_set_num(stats, "mean_parallelism", 1.5);
	struct bb_vpatterns ps = {2, pt, NULL, stats, NULL};
	struct mem m;
	struct bb_err err = {{0}};
	CHECK(mem_open(&m) != NULL);
	CHECK_INT(bb_viz_patterns_text(m.f, &ps, &err), 0);
	const char *text = mem_close(&m);
	char id[BB_PATTERN_ID_BUFSZ], want[256];
	CHECK(strncmp(text, "  node ", 7) == 0);
	snprintf(want, sizeof want, "\n#1  24 paths (20-30, 12 exact), 36.0 ms total  id %s  req GET /cart\n",
	         bb_viz_pattern_id(&pt[0], id));
	CHECK_HAS(text, want);
	snprintf(want, sizeof want, "\n#2  3 paths, 2.55 \xc2\xb5s total  id %s\n",
	         bb_viz_pattern_id(&pt[1], id));
	CHECK_HAS(text, want);
	/* one line per node, indented by depth; newline escaped, backslash doubled */
	CHECK_HAS(text, "\n  client                         ");
	CHECK_HAS(text, "\n    app\"1                        ");
	CHECK_HAS(text, "\n      redis\\x0amaster             ");
	CHECK_HAS(text, "\n      pg\\\\main                    ");
	/* columns of 10 (µs is two bytes, one column): delay, mean latency,
	 * p50, p90, p99, max */
	CHECK_HAS(text, "  node                                delay    latency        p50        p90"
	                "        p99        max\n");
	CHECK_HAS(text, "\n      redis\\x0amaster               50.0 \xc2\xb5s     150 \xc2\xb5s"
	                "     140 \xc2\xb5s     190 \xc2\xb5s     200 \xc2\xb5s     210 \xc2\xb5s\n");
	CHECK_HAS(text, "\n  client                                  -    1.50 ms    1.40 ms    2.00 ms"
	                "    3.00 ms    3.50 ms\n");
	CHECK_HAS(text, "\n    node                             100 ns     850 ns     800 ns     900 ns"
	                "     900 ns     900 ns\n");
	CHECK_HAS(text, "\n1234 messages, 600 call pairs, 0 unmatched calls, 0 unmatched returns, "
	                "mean parallelism 1.50, 2 patterns (2 shown)\n");
	/* the header, each pattern's line and nodes, a blank line, the stats */
	CHECK_INT(count_of(text, "\n"), 1 + (1 + 4) + (1 + 2) + 1 + 1);
	free(m.text);
	bb_vval_free(stats);
}

/* The clusters come in the order they were made, whatever the addresses of
 * their interned names: cgraph orders subgraphs by ID, and its default ID
 * discipline takes a named one's from its name's address. The names are
 * interned here last first, so by address they would come out reversed. */
static void t_cluster_order(void)
{
	enum { N = 40 };
	struct bb_err err = {{0}};
	Agraph_t *g = bb_viz_pattern_graph("patterns", &err);
	CHECK(g != NULL);
	if (!g)
		return;
	char name[N][32], *held[N];
	for (int i = N - 1; i >= 0; i--) {
		snprintf(name[i], sizeof name[i], "cluster_%d", i + 1);
		held[i] = agstrdup(g, name[i]);
	}
	for (int i = 0; i < N; i++)
		CHECK(agsubg(g, name[i], 1) != NULL);
	int i = 0;
	for (Agraph_t *sub = agfstsubg(g); sub; sub = agnxtsubg(sub), i++)
		CHECK_STR(agnameof(sub), i < N ? name[i] : "(none)");
	CHECK_INT(i, N);
	CHECK(agsubg(g, name[N - 1], 0) != NULL); /* found by name again */
	CHECK(agsubg(g, S("cluster_0"), 0) == NULL);
	for (int k = 0; k < N; k++)
		agstrfree(g, held[k]);
	agclose(g);
}

/* ---- delay graphs --------------------------------------------------------------- */

static const struct bb_vdelay d01[2] = {{1000000, 90}, {2500000, 10}};
static const struct bb_vdelay d12[1] = {{40000, 100}};
static const struct bb_vvertex verts[3] = {{10, "web"}, {11, QUOTE_NAME}, {12, NL_NAME}};
static const struct bb_vedge edges[2] = {{10, 11, 100, 2, d01}, {11, 12, 100, 1, d12}};

static void t_graph_json(void)
{
	struct bb_vgraph g = {3, 2, verts, edges, NULL, NULL, NULL};
	struct mem m;
	struct bb_err err = {{0}};
	CHECK(mem_open(&m) != NULL);
	CHECK_INT(bb_viz_graph_json(m.f, &g, &err), 0);
	const char *text = mem_close(&m);
	json_error_t je;
	json_t *doc = json_loads(text, 0, &je);
	CHECK(doc != NULL);
	if (!doc) {
		free(m.text);
		return;
	}
	CHECK_INT(jint(doc, "format_version"), BB_VIZ_FORMAT_VERSION);
	json_t *vs = json_object_get(doc, "vertices"), *es = json_object_get(doc, "edges");
	CHECK_INT(json_array_size(vs), 3);
	CHECK_INT(json_array_size(es), 2);
	for (size_t i = 0; i < 3; i++) {
		CHECK_INT(jint(json_array_get(vs, i), "id"), verts[i].id);
		CHECK_STR(jstr(json_array_get(vs, i), "node"), verts[i].node);
	}
	json_t *e0 = json_array_get(es, 0);
	CHECK_INT(jint(e0, "from"), 10);
	CHECK_INT(jint(e0, "to"), 11);
	CHECK_INT(jint(e0, "count"), 100);
	json_t *ds = json_object_get(e0, "delays");
	CHECK_INT(json_array_size(ds), 2);
	CHECK_INT(jint(json_array_get(ds, 0), "delay_ns"), 1000000);
	CHECK_INT(jint(json_array_get(ds, 0), "count"), 90);
	CHECK_INT(jint(json_array_get(ds, 1), "delay_ns"), 2500000);
	CHECK_INT(jint(json_array_get(json_object_get(json_array_get(es, 1), "delays"), 0),
	               "delay_ns"), 40000);
	json_decref(doc);
	free(m.text);
}

static void t_graph_dot(void)
{
	struct bb_vgraph g = {3, 2, verts, edges, NULL, NULL, NULL};
	struct mem m;
	struct bb_err err = {{0}};
	CHECK(mem_open(&m) != NULL);
	CHECK_INT(bb_viz_graph_dot(m.f, &g, &err), 0);
	const char *text = mem_close(&m);
	Agraph_t *dg = agmemread(text);
	CHECK(dg != NULL);
	if (!dg) {
		free(m.text);
		return;
	}
	CHECK_INT(agnnodes(dg), 3);
	CHECK_INT(agnedges(dg), 2);
	Agnode_t *v10 = agnode(dg, S("v10"), 0), *v11 = agnode(dg, S("v11"), 0),
	         *v12 = agnode(dg, S("v12"), 0);
	CHECK(v10 && v11 && v12);
	if (v10 && v11 && v12) {
		CHECK_STR(agget(v10, S("label")), "web");
		CHECK_STR(agget(v11, S("label")), QUOTE_NAME);
		CHECK_STR(agget(v12, S("label")), "redis\\\\x0amaster");
		Agedge_t *e = agedge(dg, v10, v11, NULL, 0);
		CHECK(e != NULL);
		if (e)
			CHECK_STR(agget(e, S("label")), "1.00 ms, 2.50 ms\\n100 msgs");
		e = agedge(dg, v11, v12, NULL, 0);
		CHECK(e != NULL);
		if (e)
			CHECK_STR(agget(e, S("label")), "40.0 us\\n100 msgs");
	}
	agclose(dg);
	free(m.text);

	/* an edge naming a vertex that is not there */
	static const struct bb_vedge bad[1] = {{10, 99, 1, 0, NULL}};
	struct bb_vgraph gb = {3, 1, verts, bad, NULL, NULL, NULL};
	CHECK(mem_open(&m) != NULL);
	CHECK_INT(bb_viz_graph_dot(m.f, &gb, &err), BB_ERR_ARG);
	CHECK_HAS(err.msg, "missing vertex");
	mem_close(&m);
	free(m.text);
}

static void t_graph_text(void)
{
	struct bb_vval *acc = bb_vval_object();
	bb_vval_set_int(acc, "fp", 1);
	struct bb_vgraph g = {3, 2, verts, edges, NULL, NULL, acc};
	struct mem m;
	struct bb_err err = {{0}};
	CHECK(mem_open(&m) != NULL);
	CHECK_INT(bb_viz_graph_text(m.f, &g, &err), 0);
	const char *text = mem_close(&m);
	CHECK_STR(text, "3 vertices, 2 edges\n"
	                "web\n"
	                "  app\"1  [100 msgs; delays 1.00 ms (90), 2.50 ms (10)]\n"
	                "    redis\\x0amaster  [100 msgs; delays 40.0 \xc2\xb5s (100)]\n"
	                "accuracy: {\"fp\":1}\n");
	free(m.text);
	bb_vval_free(acc);
}

/* ---- values and units ----------------------------------------------------------- */

static void t_values(void)
{
	struct bb_vval *o = bb_vval_object();
	bb_vval_set_num(o, "nan", NAN);
	bb_vval_set_num(o, "inf", INFINITY);
	bb_vval_set_num(o, "half", 0.5);
	bb_vval_set_str(o, "bad", "a\xff" "b");
	struct bb_vval *a = bb_vval_set(o, "list", bb_vval_array());
	bb_vval_push(a, bb_vval_int(-3));
	bb_vval_push(a, bb_vval_bool(1));
	struct mem m;
	struct bb_err err = {{0}};
	CHECK(mem_open(&m) != NULL);
	CHECK_INT(bb_vval_write(m.f, o, &err), 0);
	CHECK_STR(mem_close(&m),
	          "{\"bad\":\"a?b\",\"half\":0.5,\"inf\":null,\"list\":[-3,true],\"nan\":null}\n");
	CHECK_INT(bb_vval_get_int(o, "nan"), 0);
	free(m.text);
	bb_vval_free(o);

	/* a NaN mean (no samples) is null in the JSON, not a missing stat */
	struct bb_vnode leaf = {"x", NULL, {0, NAN, 0, 0, 0, 0, 0, NULL},
	                        {0, NAN, 0, 0, 0, 0, 0, NULL}, 0, NULL};
	struct bb_vpattern p = {1, 1, 1, 1, 0, 0, leaf};
	struct bb_vpatterns ps = {1, &p, NULL, NULL, NULL};
	CHECK(mem_open(&m) != NULL);
	CHECK_INT(bb_viz_patterns_json(m.f, &ps, &err), 0);
	CHECK_HAS(mem_close(&m), "\"latency_ns\":{\"max\":0,\"mean\":null,\"n\":0,");
	free(m.text);
}

static void t_units(void)
{
	static const struct {
		int64_t ns;
		const char *want;
	} t[] = {
		{0, "0 ns"},          {850, "850 ns"},         {1000, "1.00 us"},
		{12345, "12.3 us"},   {999600, "1.00 ms"},     {4560000, "4.56 ms"},
		{1230000000, "1.23 s"}, {120000000000, "2.00 min"}, {-1500, "-1.50 us"},
	};
	char buf[BB_DUR_BUFSZ];
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		bb_viz_fmt_ns_ascii(t[i].ns, buf);
		CHECK_STR(buf, t[i].want);
	}
	bb_viz_fmt_ns(12345, buf);
	CHECK_STR(buf, "12.3 \xc2\xb5s");
	char *e = bb_viz_escape_text("a\"b\\c\nd\x7f\xc3\xa9");
	CHECK_STR(e, "a\"b\\\\c\\x0ad\\x7f\xc3\xa9");
	free(e);
}

/* The loader of libraries needed only by some outputs: a missing library and
 * a missing symbol are errors that name them, and leave nothing loaded; a
 * good load fills every slot, and the cgraph table is the library's own
 * (the one this test links, for reading dot back). */
static void t_dl_load(void)
{
	void *lib = NULL, *fn = NULL;
	struct bb_err err = {{0}};
	struct bb_viz_sym none[] = {{"strlen", &fn}};
	CHECK_INT(bb_viz_dl_load(&lib, "libbb-no-such-library.so.0", "bb-nothing", none, 1, &err),
	          -1);
	CHECK(lib == NULL);
	CHECK_HAS(err.msg, "cannot load libbb-no-such-library.so.0 (install bb-nothing): ");
	struct bb_viz_sym lacks[] = {{"strlen", &fn}, {"bb_no_such_symbol", &fn}};
	CHECK_INT(bb_viz_dl_load(&lib, "libc.so.6", "libc6", lacks, 2, &err), -1);
	CHECK(lib == NULL);
	CHECK_STR(err.msg, "libc.so.6 lacks bb_no_such_symbol, which bb needs");
	CHECK_INT(bb_viz_dl_load(&lib, "libc.so.6", "libc6", none, 1, &err), 0);
	CHECK(lib != NULL);
	size_t (*len)(const char *);
	memcpy(&len, &fn, sizeof(len));
	CHECK_INT((long)len("four"), 4);

	const struct bb_viz_cg *cg = bb_viz_cgraph(&err);
	CHECK(cg != NULL);
	CHECK(cg && cg->agopen == agopen);
	CHECK(cg && cg->agwrite == agwrite);
	/* the data as the library defines it (this program may hold a copy) */
	CHECK(cg && cg->AgIdDisc->map == AgIdDisc.map);
	CHECK(cg && memcmp(cg->Agdirected, &Agdirected, sizeof(Agdirected)) == 0);
	CHECK(bb_viz_cgraph(NULL) == cg);
}

static const struct unit_test tests[] = {
	{"patterns_json", t_patterns_json},
	{"patterns_dot", t_patterns_dot},
	{"cluster_order", t_cluster_order},
	{"patterns_text", t_patterns_text},
	{"graph_json", t_graph_json},
	{"graph_dot", t_graph_dot},
	{"graph_text", t_graph_text},
	{"values", t_values},
	{"units", t_units},
	{"dl_load", t_dl_load},
};

UNIT_MAIN(tests)

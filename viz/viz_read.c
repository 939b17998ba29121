/* viz_read.c - path patterns read back from bbnest's JSON into viz's model (bbdiff, bbreport) */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "viz/viz_int.h"

/* Everything read is allocated in one list, freed at once. */
struct bb_vpatterns_doc {
	struct bb_vpatterns p;
	void **allocs;
	size_t nallocs, capallocs;
	json_t *root; /* keeps params and stats alive */
};

static void *dalloc(struct bb_vpatterns_doc *d, size_t size)
{
	if (d->nallocs == d->capallocs) {
		d->capallocs = d->capallocs ? 2 * d->capallocs : 64;
		d->allocs = bb_xrealloc(d->allocs, d->capallocs * sizeof(*d->allocs));
	}
	void *p = bb_xcalloc(1, size ? size : 1);
	d->allocs[d->nallocs++] = p;
	return p;
}

static int64_t jint(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_integer(v) ? (int64_t)json_integer_value(v) : 0;
}

static int read_stat(struct bb_vpatterns_doc *d, struct bb_vstat *s, json_t *o)
{
	if (!json_is_object(o))
		return -1;
	s->n = (uint64_t)jint(o, "n");
	s->mean = json_number_value(json_object_get(o, "mean"));
	s->p50 = jint(o, "p50");
	s->p90 = jint(o, "p90");
	s->p99 = jint(o, "p99");
	s->max = jint(o, "max");
	json_t *bins = json_object_get(o, "bins");
	if (json_is_array(bins) && json_array_size(bins)) {
		size_t n = json_array_size(bins);
		struct bb_vbin *b = dalloc(d, n * sizeof(*b));
		for (size_t i = 0; i < n; i++) {
			json_t *x = json_array_get(bins, i);
			if (!json_is_array(x) || json_array_size(x) != 3)
				return -1;
			b[i].lo_ns = (int64_t)json_integer_value(json_array_get(x, 0));
			b[i].hi_ns = (int64_t)json_integer_value(json_array_get(x, 1));
			b[i].count = (uint64_t)json_integer_value(json_array_get(x, 2));
		}
		s->nbins = n;
		s->bins = b;
	}
	return 0;
}

static int read_node(struct bb_vpatterns_doc *d, struct bb_vnode *v, json_t *o, int depth)
{
	json_t *name = json_object_get(o, "name");
	if (depth > 1000 || !json_is_string(name) ||
	    read_stat(d, &v->latency, json_object_get(o, "latency_ns")) != 0 ||
	    read_stat(d, &v->call_delay, json_object_get(o, "call_delay_ns")) != 0)
		return -1;
	v->name = json_string_value(name);
	json_t *ch = json_object_get(o, "children");
	size_t n = json_is_array(ch) ? json_array_size(ch) : 0;
	struct bb_vnode *c = dalloc(d, n * sizeof(*c));
	for (size_t i = 0; i < n; i++)
		if (read_node(d, &c[i], json_array_get(ch, i), depth + 1) != 0)
			return -1;
	v->nchildren = n;
	v->children = n ? c : NULL;
	return 0;
}

struct bb_vpatterns_doc *bb_viz_patterns_read(const char *path, struct bb_err *err)
{
	json_error_t je;
	json_t *root = json_load_file(path, 0, &je);
	if (!root) {
		bb_err_set(err, "%s:%d: %s", path, je.line, je.text);
		return NULL;
	}
	json_t *arr = json_object_get(root, "patterns");
	if (!json_is_array(arr)) {
		bb_err_set(err, "%s: not bbnest JSON output (no \"patterns\" array)", path);
		json_decref(root);
		return NULL;
	}
	struct bb_vpatterns_doc *d = bb_xcalloc(1, sizeof(*d));
	d->root = root;
	size_t n = json_array_size(arr);
	struct bb_vpattern *v = dalloc(d, n * sizeof(*v));
	for (size_t i = 0; i < n; i++) {
		json_t *o = json_array_get(arr, i);
		v[i].rank = (unsigned)jint(o, "rank");
		v[i].count = (uint64_t)jint(o, "count");
		v[i].total_latency_ns = jint(o, "total_latency_ns");
		if (read_node(d, &v[i].root, json_object_get(o, "root"), 0) != 0) {
			bb_err_set(err, "%s: pattern %zu: a node without name, latency_ns or call_delay_ns",
			           path, i + 1);
			bb_viz_patterns_doc_free(d);
			return NULL;
		}
	}
	d->p.n = n;
	d->p.v = v;
	json_t *st = json_object_get(root, "stats"), *pa = json_object_get(root, "params");
	d->p.stats = json_is_object(st) ? (const struct bb_vval *)st : NULL;
	d->p.params = json_is_object(pa) ? (const struct bb_vval *)pa : NULL;
	return d;
}

const struct bb_vpatterns *bb_viz_patterns_doc(const struct bb_vpatterns_doc *d)
{
	return &d->p;
}

void bb_viz_patterns_doc_free(struct bb_vpatterns_doc *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nallocs; i++)
		free(d->allocs[i]);
	free(d->allocs);
	json_decref(d->root);
	free(d);
}

int64_t bb_vval_get_int(const struct bb_vval *obj, const char *key)
{
	return obj ? jint(vval_json(obj), key) : 0;
}

/* ---- text of a pattern -------------------------------------------------------- */

static void shape_put(char **buf, size_t *len, size_t *cap, const char *s)
{
	size_t n = strlen(s);
	if (*len + n + 1 > *cap) {
		*cap = 2 * (*len + n + 1);
		*buf = bb_xrealloc(*buf, *cap);
	}
	memcpy(*buf + *len, s, n + 1);
	*len += n;
}

static void shape_of(const struct bb_vnode *v, char **buf, size_t *len, size_t *cap)
{
	shape_put(buf, len, cap, v->name);
	if (!v->nchildren)
		return;
	shape_put(buf, len, cap, "(");
	for (size_t i = 0; i < v->nchildren; i++) {
		if (i)
			shape_put(buf, len, cap, " ");
		shape_of(&v->children[i], buf, len, cap);
	}
	shape_put(buf, len, cap, ")");
}

char *bb_viz_pattern_shape(const struct bb_vpattern *p)
{
	size_t len = 0, cap = 64;
	char *buf = bb_xmalloc(cap);
	buf[0] = '\0';
	shape_of(&p->root, &buf, &len, &cap);
	return buf;
}

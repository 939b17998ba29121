/* viz_value.c - params, stats and accuracy values: a thin opaque layer over jansson */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "viz/viz_int.h"

/* jansson's constructors below fail only when memory runs out (numbers
 * that JSON cannot hold and bad UTF-8 are handled before), which bb does not
 * recover from: abort, as bb_xmalloc does. */
static struct bb_vval *wrap(json_t *j)
{
	if (!j) {
		fprintf(stderr, "bb: out of memory building a JSON value\n");
		abort();
	}
	return (struct bb_vval *)j;
}

/* A JSON number, or null for NaN and infinities (JSON has no such numbers
 * and jansson refuses them). New reference. */
static json_t *real_json(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

struct bb_vval *bb_vval_object(void) { return wrap(json_object()); }
struct bb_vval *bb_vval_array(void) { return wrap(json_array()); }
struct bb_vval *bb_vval_int(int64_t v) { return wrap(json_integer((json_int_t)v)); }
struct bb_vval *bb_vval_num(double v) { return wrap(real_json(v)); }
struct bb_vval *bb_vval_bool(int v) { return wrap(json_boolean(v)); }

/* Strings from packets may not be valid UTF-8: jansson refuses those, so
 * invalid input is stored with its bad bytes replaced by '?'. */
struct bb_vval *bb_vval_str(const char *s)
{
	json_t *j = json_string(s ? s : "");
	if (!j) {
		char *copy = bb_xstrndup(s, strlen(s));
		for (char *p = copy; *p; p++)
			if ((unsigned char)*p >= 0x80)
				*p = '?';
		j = json_string(copy);
		free(copy);
	}
	return wrap(j);
}

void bb_vval_free(struct bb_vval *v)
{
	if (v)
		json_decref(vval_json(v));
}

/* The set and append below fail only for a caller's error (obj not an
 * object, arr not an array, a key that is not UTF-8) or when memory runs out. */
struct bb_vval *bb_vval_set(struct bb_vval *obj, const char *key, struct bb_vval *child)
{
	if (json_object_set_new(vval_json(obj), key, vval_json(child)) != 0) {
		fprintf(stderr, "bb: cannot set JSON key \"%s\"\n", key);
		abort();
	}
	return child;
}

void bb_vval_set_int(struct bb_vval *obj, const char *key, int64_t v)
{
	bb_vval_set(obj, key, bb_vval_int(v));
}

void bb_vval_set_num(struct bb_vval *obj, const char *key, double v)
{
	bb_vval_set(obj, key, bb_vval_num(v));
}

void bb_vval_set_str(struct bb_vval *obj, const char *key, const char *s)
{
	bb_vval_set(obj, key, bb_vval_str(s));
}

struct bb_vval *bb_vval_push(struct bb_vval *arr, struct bb_vval *child)
{
	if (json_array_append_new(vval_json(arr), vval_json(child)) != 0) {
		fprintf(stderr, "bb: cannot append to a JSON array\n");
		abort();
	}
	return child;
}

json_t *bb_viz_vval_ref(const struct bb_vval *v)
{
	return v ? json_incref(vval_json(v)) : json_null();
}

int bb_viz_dump_json(FILE *out, json_t *root, struct bb_err *err)
{
	int rc = json_dumpf(root, out, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(10));
	json_decref(root);
	if (rc != 0 || fputc('\n', out) == EOF || ferror(out)) {
		bb_err_set(err, "write error: %s", strerror(errno ? errno : EIO));
		return BB_ERR_IO;
	}
	return 0;
}

int bb_vval_write(FILE *out, const struct bb_vval *v, struct bb_err *err)
{
	return bb_viz_dump_json(out, bb_viz_vval_ref(v), err);
}

json_t *bb_viz_stat_json(const struct bb_vstat *s)
{
	json_t *o = json_pack("{s:I, s:o, s:I, s:I, s:I, s:I}", "n", (json_int_t)s->n, "mean",
	                      real_json(s->mean), "p50", (json_int_t)s->p50, "p90", (json_int_t)s->p90,
	                      "p99", (json_int_t)s->p99, "max", (json_int_t)s->max);
	if (s->nbins) {
		json_t *bins = json_array();
		for (size_t i = 0; i < s->nbins; i++)
			json_array_append_new(bins, json_pack("[I, I, I]", (json_int_t)s->bins[i].lo_ns,
			                                      (json_int_t)s->bins[i].hi_ns,
			                                      (json_int_t)s->bins[i].count));
		json_object_set_new(o, "bins", bins);
	}
	return o;
}

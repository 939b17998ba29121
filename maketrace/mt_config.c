/* mt_config.c - the maketrace JSON config: read with jansson, check, compile to tracelets */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "maketrace/mt_int.h"

/* The language is described in docs/maketrace.md. Syntax errors come with
 * jansson's line and column. jansson keeps no positions for values, so for a
 * value that parses but is wrong the reader keeps the JSON path of what it is
 * looking at (tracelets[2].steps[0].delay) and, on error only, scans the text
 * once more along that path to find the value's line and column. */

#define MAX_DEPTH 512           /* nesting of the path; jansson allows 2048 */
#define MAX_FILE (64u << 20)    /* largest config read */

struct pcomp {
	const char *key;        /* NULL: an array index */
	size_t index;
};

struct defaults {
	const struct mt_delay *delay, *ret;
};

struct ctx {
	const char *name;
	const char *text;
	size_t len;
	struct bb_err *err;
	struct bb_mt_config *cfg;
	struct pcomp path[MAX_DEPTH];
	int depth;
	int tl_msgs;            /* the tracelet being read sends a message */
	int tl_time;            /* ... and has a delay that advances time */
};

/* ---- where a value is: a second, minimal scan of the (valid) JSON text ---- */

struct jscan {
	const char *p, *end, *line_start;
	unsigned long line;
};

static void js_ws(struct jscan *s)
{
	while (s->p < s->end) {
		char c = *s->p;
		if (c == '\n') {
			s->line++;
			s->line_start = s->p + 1;
		} else if (c != ' ' && c != '\t' && c != '\r') {
			return;
		}
		s->p++;
	}
}

/* Skips a string at s->p (on the opening quote). */
static void js_skip_string(struct jscan *s)
{
	s->p++;
	while (s->p < s->end && *s->p != '"') {
		if (*s->p == '\\' && s->end - s->p > 1)
			s->p++;
		s->p++;
	}
	if (s->p < s->end)
		s->p++;
}

static void js_skip_value(struct jscan *s)
{
	js_ws(s);
	if (s->p >= s->end)
		return;
	char c = *s->p;
	if (c == '"') {
		js_skip_string(s);
	} else if (c == '{' || c == '[') {
		int depth = 0;
		while (s->p < s->end) {
			c = *s->p;
			if (c == '"') {
				js_skip_string(s);
				continue;
			}
			if (c == '\n') {
				s->line++;
				s->line_start = s->p + 1;
			}
			if (c == '{' || c == '[')
				depth++;
			if (c == '}' || c == ']') {
				if (--depth == 0) {
					s->p++;
					return;
				}
			}
			s->p++;
		}
	} else {
		while (s->p < s->end && !strchr(",]} \t\r\n", *s->p))
			s->p++;
	}
}

/* Whether the string at s->p equals key (escapes other than \" \\ \/ compare
 * unequal, which only costs a position); moves past the string. */
static int js_key_eq(struct jscan *s, const char *key)
{
	const char *k = key;
	int eq = 1;
	s->p++;
	while (s->p < s->end && *s->p != '"') {
		char c = *s->p++;
		if (c == '\\' && s->p < s->end) {
			c = *s->p++;
			if (c != '"' && c != '\\' && c != '/')
				eq = 0;
		}
		if (*k != c)
			eq = 0;
		else if (*k)
			k++;
	}
	if (s->p < s->end)
		s->p++;
	return eq && !*k;
}

/* Finds the line and column (in characters, as jansson counts) of the value at
 * path. Returns 0, or -1 when the text does not have it. */
static int js_find(const char *text, size_t len, const struct pcomp *path, int depth,
                   unsigned long *line, unsigned long *col)
{
	struct jscan s = {text, text + len, text, 1};
	for (int d = 0; d < depth; d++) {
		js_ws(&s);
		if (s.p >= s.end)
			return -1;
		if (path[d].key) {
			if (*s.p != '{')
				return -1;
			s.p++;
			for (;;) {
				js_ws(&s);
				if (s.p >= s.end || *s.p != '"')
					return -1;
				int eq = js_key_eq(&s, path[d].key);
				js_ws(&s);
				if (s.p >= s.end || *s.p != ':')
					return -1;
				s.p++;
				if (eq)
					break;
				js_skip_value(&s);
				js_ws(&s);
				if (s.p >= s.end || *s.p != ',')
					return -1;
				s.p++;
			}
		} else {
			if (*s.p != '[')
				return -1;
			s.p++;
			for (size_t i = 0; i < path[d].index; i++) {
				js_skip_value(&s);
				js_ws(&s);
				if (s.p >= s.end || *s.p != ',')
					return -1;
				s.p++;
			}
		}
	}
	js_ws(&s);
	unsigned long c = 1;
	for (const char *q = s.line_start; q < s.p; q++)
		if (((unsigned char)*q & 0xc0) != 0x80)
			c++;
	*line = s.line;
	*col = c;
	return 0;
}

/* ---- the path and errors ---- */

static void push_key(struct ctx *c, const char *key)
{
	if (c->depth < MAX_DEPTH)
		c->path[c->depth] = (struct pcomp){key, 0};
	c->depth++;
}

static void push_idx(struct ctx *c, size_t i)
{
	if (c->depth < MAX_DEPTH)
		c->path[c->depth] = (struct pcomp){NULL, i};
	c->depth++;
}

static void pop(struct ctx *c)
{
	c->depth--;
}

/* Sets the error "NAME:LINE:COL: PATH: what" for the value at the current path.
 * Returns -1 so callers can `return fail(...)`. */
__attribute__((format(printf, 2, 3))) static int fail(struct ctx *c, const char *fmt, ...)
{
	char what[160], path[512];
	size_t n = 0;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);

	int depth = c->depth < MAX_DEPTH ? c->depth : MAX_DEPTH;
	path[0] = 0;
	for (int d = 0; d < depth && n < sizeof(path); d++) {
		int k;
		if (c->path[d].key)
			k = snprintf(path + n, sizeof(path) - n, "%s%s", d ? "." : "", c->path[d].key);
		else
			k = snprintf(path + n, sizeof(path) - n, "[%zu]", c->path[d].index);
		if (k < 0)
			break;
		n += (size_t)k;
	}
	unsigned long line, col;
	int found = js_find(c->text, c->len, c->path, depth, &line, &col) == 0;
	if (found && depth)
		bb_err_set(c->err, "%s:%lu:%lu: %s: %s", c->name, line, col, path, what);
	else if (found)
		bb_err_set(c->err, "%s:%lu:%lu: %s", c->name, line, col, what);
	else
		bb_err_set(c->err, "%s: %s: %s", c->name, depth ? path : "(top)", what);
	return -1;
}

/* Checks that every key of obj is in allowed (NULL-terminated) or "comment". */
static int check_keys(struct ctx *c, json_t *obj, const char *const *allowed)
{
	const char *key;
	json_t *v;
	json_object_foreach(obj, key, v) {
		int ok = !strcmp(key, "comment");
		for (const char *const *a = allowed; !ok && *a; a++)
			ok = !strcmp(key, *a);
		if (!ok) {
			push_key(c, key);
			int rc = fail(c, "unknown key \"%s\"", key);
			pop(c);
			return rc;
		}
	}
	return 0;
}

/* ---- values ---- */

/* Reads the number at key of obj (which must exist) into *out; checks lo <= v <= hi. */
static int number_in(struct ctx *c, json_t *v, double lo, double hi, double *out)
{
	if (!json_is_number(v))
		return fail(c, "expected a number");
	double x = json_number_value(v);
	if (!isfinite(x) || x < lo || x > hi) {
		if (lo == 0 && x < 0)
			return fail(c, "must not be negative");
		return fail(c, "out of range (%g to %g)", lo, hi);
	}
	*out = x;
	return 0;
}

static int integer_in(struct ctx *c, json_t *v, long long lo, long long hi, long long *out)
{
	if (!json_is_integer(v))
		return fail(c, "expected an integer");
	long long x = json_integer_value(v);
	if (x < lo || x > hi) {
		if (lo == 0 && x < 0)
			return fail(c, "must not be negative");
		return fail(c, "out of range (%lld to %lld)", lo, hi);
	}
	*out = x;
	return 0;
}

/* [min, max] of integers in [lo, hi] (the value at the current path), min <= max;
 * form names the expected value in the message. */
static int integer_range(struct ctx *c, json_t *v, long long lo, long long hi, const char *form,
                         long long *a, long long *b)
{
	if (!json_is_array(v) || json_array_size(v) != 2)
		return fail(c, "expected %s", form);
	push_idx(c, 0);
	int rc = integer_in(c, json_array_get(v, 0), lo, hi, a);
	pop(c);
	if (rc)
		return rc;
	push_idx(c, 1);
	rc = integer_in(c, json_array_get(v, 1), lo, hi, b);
	if (!rc && *b < *a)
		rc = fail(c, "max %lld is below min %lld", *b, *a);
	pop(c);
	return rc;
}

/* obj[key] read by fn-like code: these helpers push the key around the check. */
static int key_number(struct ctx *c, json_t *obj, const char *key, double lo, double hi,
                      double *out)
{
	json_t *v = json_object_get(obj, key);
	if (!v)
		return 0;
	push_key(c, key);
	int rc = number_in(c, v, lo, hi, out);
	pop(c);
	return rc;
}

static int key_integer(struct ctx *c, json_t *obj, const char *key, long long lo, long long hi,
                       long long *out)
{
	json_t *v = json_object_get(obj, key);
	if (!v)
		return 0;
	push_key(c, key);
	int rc = integer_in(c, v, lo, hi, out);
	pop(c);
	return rc;
}

static int valid_name(const char *s, size_t len, int strict)
{
	if (!len)
		return 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch <= ' ' || ch == 0x7f)
			return 0;
		if (strict && !(ch == '_' || ch == '-' || (ch >= '0' && ch <= '9') ||
		                (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')))
			return 0;
	}
	return 1;
}

/* A node reference: a string naming a node in "nodes". */
static int node_ref(struct ctx *c, json_t *v, uint32_t *out)
{
	if (!json_is_string(v))
		return fail(c, "expected a node name (a string)");
	uint32_t i = bb_intern_find(c->cfg->nodes, json_string_value(v), json_string_length(v));
	if (i == BB_NONE)
		return fail(c, "unknown node \"%s\" (not in \"nodes\")", json_string_value(v));
	*out = i;
	return 0;
}

static void delay_free(struct mt_delay *d)
{
	free(d->c);
	d->c = NULL;
	d->n = 0;
}

static void delay_copy(struct mt_delay *dst, const struct mt_delay *src)
{
	dst->n = src->n;
	dst->c = NULL;
	if (src->n) {
		dst->c = bb_xmalloc(src->n * sizeof(*src->c));
		memcpy(dst->c, src->c, src->n * sizeof(*src->c));
	}
}

#define DELAY_FORM                                                                       \
	"expected [mean, sd], [[weight, mean, sd], ...], {\"lognormal\": [mean, sd]} or "  \
	"{\"exp\": mean} in seconds"

/* {"lognormal": [mean, sd]} or {"exp": mean}: one component whose delay has
 * that mean (and standard deviation). */
static int parse_dist(struct ctx *c, json_t *v, struct mt_delay *d)
{
	double mean = 0, sd = 0;
	int logn = json_object_get(v, "lognormal") != NULL;
	if (json_object_size(v) != 1 || (!logn && !json_object_get(v, "exp")))
		return fail(c, DELAY_FORM);
	push_key(c, logn ? "lognormal" : "exp");
	json_t *a = json_object_get(v, logn ? "lognormal" : "exp");
	int rc = 0;
	if (logn) {
		if (!json_is_array(a) || json_array_size(a) != 2) {
			rc = fail(c, "expected [mean, sd] in seconds");
		} else {
			push_idx(c, 0);
			rc = number_in(c, json_array_get(a, 0), 0, MT_MAX_DELAY_SECONDS, &mean);
			if (!rc && !(mean > 0))
				rc = fail(c, "a log-normal delay needs a mean above 0");
			pop(c);
			if (!rc) {
				push_idx(c, 1);
				rc = number_in(c, json_array_get(a, 1), 0, MT_MAX_DELAY_SECONDS, &sd);
				pop(c);
			}
		}
	} else {
		rc = number_in(c, a, 0, MT_MAX_DELAY_SECONDS, &mean);
	}
	pop(c);
	if (rc)
		return rc;
	struct mt_comp *comp = bb_xcalloc(1, sizeof(*comp));
	comp->cum = 1.0;
	comp->mean_ns = mean * 1e9;
	comp->sd_ns = logn ? sd * 1e9 : mean * 1e9;
	comp->dist = logn ? MT_LOGNORMAL : MT_EXP;
	if (logn) {
		/* the mean and sd of the delay give those of its logarithm */
		comp->sigma = sqrt(log1p((sd / mean) * (sd / mean)));
		comp->mu = log(comp->mean_ns) - comp->sigma * comp->sigma / 2;
	}
	if (mean > 0)
		c->tl_time = 1;
	d->n = 1;
	d->c = comp;
	return 0;
}

/* [mean, sd], [[weight, mean, sd], ...], {"lognormal": [mean, sd]} or {"exp": mean}. */
static int parse_delay(struct ctx *c, json_t *v, struct mt_delay *d)
{
	if (json_is_object(v))
		return parse_dist(c, v, d);
	if (!json_is_array(v) || json_array_size(v) == 0)
		return fail(c, DELAY_FORM);
	int mixture = json_is_array(json_array_get(v, 0));
	size_t n = mixture ? json_array_size(v) : 1;
	if (!mixture && json_array_size(v) != 2)
		return fail(c, DELAY_FORM);
	struct mt_comp *comp = bb_xcalloc(n, sizeof(*comp));
	double total = 0;
	for (size_t i = 0; i < n; i++) {
		json_t *e = mixture ? json_array_get(v, i) : v;
		double w = 1, mean = 0, sd = 0;
		if (mixture)
			push_idx(c, i);
		if (!json_is_array(e) || json_array_size(e) != (mixture ? 3u : 2u)) {
			fail(c, mixture ? "expected [weight, mean, sd]" : DELAY_FORM);
			goto bad_pop;
		}
		size_t k = 0;
		if (mixture) {
			push_idx(c, k);
			if (number_in(c, json_array_get(e, k), 0, 1e12, &w) != 0)
				goto bad_pop2;
			pop(c);
			k++;
		}
		push_idx(c, k);
		if (number_in(c, json_array_get(e, k), 0, MT_MAX_DELAY_SECONDS, &mean) != 0)
			goto bad_pop2;
		pop(c);
		push_idx(c, k + 1);
		if (number_in(c, json_array_get(e, k + 1), 0, MT_MAX_DELAY_SECONDS, &sd) != 0)
			goto bad_pop2;
		pop(c);
		if (mixture)
			pop(c);
		total += w;
		comp[i].cum = total;
		comp[i].mean_ns = mean * 1e9;
		comp[i].sd_ns = sd * 1e9;
		if (w > 0 && (mean > 0 || sd > 0))
			c->tl_time = 1;
	}
	if (!(total > 0)) {
		free(comp);
		return fail(c, "weights sum to 0");
	}
	for (size_t i = 0; i < n; i++)
		comp[i].cum /= total;
	comp[n - 1].cum = 1.0;
	d->n = (uint32_t)n;
	d->c = comp;
	return 0;
bad_pop2:
	pop(c);
bad_pop:
	if (mixture)
		pop(c);
	free(comp);
	return -1;
}

/* obj[key] as a delay, else the default, else an error. */
static int delay_or_default(struct ctx *c, json_t *obj, const char *key,
                            const struct mt_delay *def, struct mt_delay *d)
{
	json_t *v = json_object_get(obj, key);
	if (!v) {
		if (!def)
			return fail(c, "missing \"%s\" (and no default for it)", key);
		delay_copy(d, def);
		for (uint32_t i = 0; i < def->n; i++)
			if (def->c[i].mean_ns > 0 || def->c[i].sd_ns > 0)
				c->tl_time = 1;
		return 0;
	}
	push_key(c, key);
	int rc = parse_delay(c, v, d);
	pop(c);
	return rc;
}

/* ---- steps ---- */

static void seq_free(struct mt_seq *s);

static void step_free(struct mt_step *st)
{
	delay_free(&st->delay);
	delay_free(&st->ret);
	seq_free(&st->body);
	for (uint32_t i = 0; i < st->nalt; i++)
		seq_free(&st->alt[i]);
	free(st->alt);
	free(st->cum);
}

static void seq_free(struct mt_seq *s)
{
	for (uint32_t i = 0; i < s->n; i++)
		step_free(&s->s[i]);
	free(s->s);
	s->s = NULL;
	s->n = 0;
}

static int parse_seq(struct ctx *c, json_t *arr, struct mt_seq *seq, const struct defaults *df,
                     int *known);
static int parse_step(struct ctx *c, json_t *obj, struct mt_step *st, const struct defaults *df,
                      int *known, int in_choice);

static const char *const step_kinds[] = {"call", "msg", "wait", "parallel", "choose", "repeat",
                                         NULL};

/* A parallel branch or a choice alternative: one step object, or an array of
 * steps run in series. */
static int parse_branch(struct ctx *c, json_t *v, struct mt_seq *seq, const struct defaults *df,
                        int *known, int in_choice)
{
	if (json_is_array(v))
		return parse_seq(c, v, seq, df, known);
	if (!json_is_object(v))
		return fail(c, "expected a step (an object) or an array of steps");
	seq->s = bb_xcalloc(1, sizeof(*seq->s));
	seq->n = 1;
	return parse_step(c, v, &seq->s[0], df, known, in_choice);
}

/* {"call": NODE, "delay", "return", "steps"}: a call from the current node. */
static int parse_call(struct ctx *c, json_t *obj, json_t *v, struct mt_step *st,
                      const struct defaults *df, const int *known, const char *w)
{
	const char *const allowed[] = {"call", "delay", "return", "steps", w, NULL};
	if (check_keys(c, obj, allowed) != 0)
		return -1;
	st->kind = MT_CALL;
	push_key(c, "call");
	int rc;
	if (!*known)
		rc = fail(c, "a call needs a caller: give the tracelet a \"node\"");
	else
		rc = node_ref(c, v, &st->to);
	pop(c);
	if (rc)
		return rc;
	c->tl_msgs = 1;
	if (delay_or_default(c, obj, "delay", df->delay, &st->delay) != 0 ||
	    delay_or_default(c, obj, "return", df->ret, &st->ret) != 0)
		return -1;
	json_t *body = json_object_get(obj, "steps");
	if (body) {
		int callee_known = 1;
		push_key(c, "steps");
		rc = parse_seq(c, body, &st->body, df, &callee_known);
		pop(c);
	}
	return rc;
}

/* The value of "msg": "TO" (from the current node) or ["FROM", "TO"]. */
static int msg_ends(struct ctx *c, json_t *v, struct mt_step *st, int known)
{
	int rc;
	if (!json_is_array(v)) {
		if (!known)
			return fail(c, "no current node to send from: use [\"FROM\", \"TO\"] or "
			               "give the tracelet a \"node\"");
		return node_ref(c, v, &st->to);
	}
	if (json_array_size(v) != 2)
		return fail(c, "expected \"TO\" or [\"FROM\", \"TO\"]");
	push_idx(c, 0);
	rc = node_ref(c, json_array_get(v, 0), &st->from);
	pop(c);
	if (rc)
		return rc;
	push_idx(c, 1);
	rc = node_ref(c, json_array_get(v, 1), &st->to);
	if (!rc && st->to == st->from)
		rc = fail(c, "node \"%s\" sends to itself", bb_intern_str(c->cfg->nodes, st->to));
	pop(c);
	return rc;
}

/* {"msg": ..., "delay"}: a one-way message. */
static int parse_msg(struct ctx *c, json_t *obj, json_t *v, struct mt_step *st,
                     const struct defaults *df, int *known, const char *w)
{
	const char *const allowed[] = {"msg", "delay", w, NULL};
	if (check_keys(c, obj, allowed) != 0)
		return -1;
	st->kind = MT_MSG;
	st->from = BB_NONE;
	push_key(c, "msg");
	int rc = msg_ends(c, v, st, *known);
	pop(c);
	if (rc)
		return rc;
	*known = 1;
	c->tl_msgs = 1;
	return delay_or_default(c, obj, "delay", df->delay, &st->delay);
}

/* {"wait": DELAY}. */
static int parse_wait(struct ctx *c, json_t *obj, json_t *v, struct mt_step *st, const char *w)
{
	const char *const allowed[] = {"wait", w, NULL};
	if (check_keys(c, obj, allowed) != 0)
		return -1;
	st->kind = MT_WAIT;
	push_key(c, "wait");
	int rc = parse_delay(c, v, &st->delay);
	pop(c);
	return rc;
}

/* {"repeat": [min, max], "steps", "concurrent"}. */
static int parse_repeat(struct ctx *c, json_t *obj, json_t *v, struct mt_step *st,
                        const struct defaults *df, int *known, const char *w)
{
	const char *const allowed[] = {"repeat", "steps", "concurrent", w, NULL};
	if (check_keys(c, obj, allowed) != 0)
		return -1;
	st->kind = MT_REPEAT;
	long long lo = 0, hi = 0;
	push_key(c, "repeat");
	int rc = integer_range(c, v, 0, MT_MAX_REPEAT,
	                       "[min, max]: how many times, at least and at most", &lo, &hi);
	pop(c);
	if (rc)
		return rc;
	st->rmin = (uint32_t)lo;
	st->rmax = (uint32_t)hi;
	json_t *par = json_object_get(obj, "concurrent");
	if (par) {
		push_key(c, "concurrent");
		rc = json_is_boolean(par) ? 0 : fail(c, "expected true or false");
		pop(c);
		if (rc)
			return rc;
		st->rpar = json_is_true(par);
	}
	json_t *body = json_object_get(obj, "steps");
	if (!body)
		return fail(c, "missing \"steps\": what to repeat");
	int k = *known;
	push_key(c, "steps");
	rc = parse_seq(c, body, &st->body, df, &k);
	pop(c);
	if (!st->rpar && st->rmin > 0)
		*known = k;
	return rc;
}

/* Alternative or branch i of a "choose" or "parallel" step: its steps into
 * st->alt[i], its weight added to *total (a choice's cumulative weights in
 * st->cum); *k is whether the current node is known after it. */
static int parse_alt(struct ctx *c, json_t *e, struct mt_step *st, size_t i, int choose,
                     const struct defaults *df, int *k, double *total)
{
	int rc;
	if (choose && json_is_object(e) && json_object_get(e, "steps") &&
	    !json_object_get(e, "call") && !json_object_get(e, "repeat")) {
		/* {"weight": w, "steps": [...]}: an alternative that is a series */
		const char *const alt_keys[] = {"weight", "steps", NULL};
		rc = check_keys(c, e, alt_keys);
		if (!rc) {
			push_key(c, "steps");
			rc = parse_seq(c, json_object_get(e, "steps"), &st->alt[i], df, k);
			pop(c);
		}
	} else {
		rc = parse_branch(c, e, &st->alt[i], df, k, choose);
	}
	double wt = 1;
	if (!rc && choose && json_is_object(e))
		rc = key_number(c, e, "weight", 0, 1e12, &wt);
	*total += wt;
	if (choose)
		st->cum[i] = *total;
	return rc;
}

/* {"parallel": [branch, ...]} or {"choose": [alternative, ...]}. */
static int parse_alts(struct ctx *c, json_t *obj, json_t *v, const char *kind, struct mt_step *st,
                      const struct defaults *df, int *known, const char *w)
{
	int choose = !strcmp(kind, "choose");
	const char *const allowed[] = {kind, w, NULL};
	if (check_keys(c, obj, allowed) != 0)
		return -1;
	st->kind = choose ? MT_CHOOSE : MT_PAR;
	push_key(c, kind);
	int rc;
	if (!json_is_array(v) || json_array_size(v) == 0) {
		rc = fail(c, choose ? "expected an array of alternatives"
		                    : "expected an array of branches");
		pop(c);
		return rc;
	}
	size_t n = json_array_size(v);
	st->alt = bb_xcalloc(n, sizeof(*st->alt));
	st->nalt = (uint32_t)n;
	if (choose)
		st->cum = bb_xcalloc(n, sizeof(*st->cum));
	int all_known = 1;
	double total = 0;
	rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		int k = *known;
		push_idx(c, i);
		rc = parse_alt(c, json_array_get(v, i), st, i, choose, df, &k, &total);
		all_known &= k;
		pop(c);
	}
	if (!rc && choose && !(total > 0))
		rc = fail(c, "weights sum to 0");
	pop(c);
	if (rc)
		return rc;
	if (choose) {
		for (size_t i = 0; i < n; i++)
			st->cum[i] /= total;
		st->cum[n - 1] = 1.0;
		*known = all_known;
	}
	return 0;
}

static int parse_step(struct ctx *c, json_t *obj, struct mt_step *st, const struct defaults *df,
                      int *known, int in_choice)
{
	if (!json_is_object(obj))
		return fail(c, "expected a step: an object with \"call\", \"msg\", \"wait\", "
		               "\"parallel\", \"choose\" or \"repeat\"");
	const char *kind = NULL;
	for (const char *const *k = step_kinds; *k; k++) {
		if (!json_object_get(obj, *k))
			continue;
		if (kind)
			return fail(c,
			            "a step has one of \"call\", \"msg\", \"wait\", \"parallel\", "
			            "\"choose\", \"repeat\"; this one has \"%s\" and \"%s\"",
			            kind, *k);
		kind = *k;
	}
	if (!kind)
		return fail(c, "expected a step: an object with \"call\", \"msg\", \"wait\", "
		               "\"parallel\", \"choose\" or \"repeat\"");
	json_t *v = json_object_get(obj, kind);
	const char *w = in_choice ? "weight" : NULL; /* a choice's alternative has a weight */
	if (!strcmp(kind, "call"))
		return parse_call(c, obj, v, st, df, known, w);
	if (!strcmp(kind, "msg"))
		return parse_msg(c, obj, v, st, df, known, w);
	if (!strcmp(kind, "wait"))
		return parse_wait(c, obj, v, st, w);
	if (!strcmp(kind, "repeat"))
		return parse_repeat(c, obj, v, st, df, known, w);
	return parse_alts(c, obj, v, kind, st, df, known, w);
}

static int parse_seq(struct ctx *c, json_t *arr, struct mt_seq *seq, const struct defaults *df,
                     int *known)
{
	if (!json_is_array(arr))
		return fail(c, "expected an array of steps");
	size_t n = json_array_size(arr);
	if (!n)
		return 0;
	seq->s = bb_xcalloc(n, sizeof(*seq->s));
	seq->n = (uint32_t)n;
	for (size_t i = 0; i < n; i++) {
		push_idx(c, i);
		int rc = parse_step(c, json_array_get(arr, i), &seq->s[i], df, known, 0);
		pop(c);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- defaults, tracelets, the top level ---- */

struct dstore {
	struct mt_delay delay, ret;
	int has_delay, has_ret;
};

static int parse_defaults(struct ctx *c, json_t *obj, struct dstore *ds, struct defaults *df)
{
	json_t *v = json_object_get(obj, "defaults");
	if (!v)
		return 0;
	push_key(c, "defaults");
	static const char *const allowed[] = {"delay", "return", NULL};
	int rc = 0;
	if (!json_is_object(v))
		rc = fail(c, "expected an object with \"delay\" and/or \"return\"");
	else
		rc = check_keys(c, v, allowed);
	if (!rc && json_object_get(v, "delay")) {
		push_key(c, "delay");
		rc = parse_delay(c, json_object_get(v, "delay"), &ds->delay);
		pop(c);
		if (!rc)
			df->delay = &ds->delay;
	}
	if (!rc && json_object_get(v, "return")) {
		push_key(c, "return");
		rc = parse_delay(c, json_object_get(v, "return"), &ds->ret);
		pop(c);
		if (!rc)
			df->ret = &ds->ret;
	}
	pop(c);
	return rc;
}

/* The tracelet's "name": letters, digits, '_' and '-', not taken before. */
static int tracelet_name(struct ctx *c, json_t *obj, struct mt_tracelet *tl)
{
	json_t *v = json_object_get(obj, "name");
	if (!v)
		return fail(c, "missing \"name\"");
	push_key(c, "name");
	int rc = 0;
	if (!json_is_string(v) || !valid_name(json_string_value(v), json_string_length(v), 1))
		rc = fail(c, "expected a name of letters, digits, '_' and '-'");
	for (uint32_t i = 0; i < c->cfg->ntl && !rc; i++)
		if (c->cfg->tl[i].name && !strcmp(c->cfg->tl[i].name, json_string_value(v)))
			rc = fail(c, "tracelet \"%s\" named twice", json_string_value(v));
	pop(c);
	if (rc)
		return rc;
	tl->name = bb_xstrndup(json_string_value(v), json_string_length(v));
	tl->name_len = json_string_length(v);
	return 0;
}

/* "think": [min, max] in seconds (uniform), or a distribution. */
static int tracelet_think(struct ctx *c, json_t *v, struct mt_tracelet *tl)
{
	push_key(c, "think");
	int rc = 0;
	if (json_is_object(v)) {
		rc = parse_dist(c, v, &tl->think);
		pop(c);
		return rc;
	}
	double lo = 0, hi = 0;
	if (!json_is_array(v) || json_array_size(v) != 2) {
		rc = fail(c, "expected [min, max] in seconds, {\"exp\": mean} or "
		             "{\"lognormal\": [mean, sd]}");
	} else {
		push_idx(c, 0);
		rc = number_in(c, json_array_get(v, 0), 0, MT_MAX_DELAY_SECONDS, &lo);
		pop(c);
		if (!rc) {
			push_idx(c, 1);
			rc = number_in(c, json_array_get(v, 1), 0, MT_MAX_DELAY_SECONDS, &hi);
			if (!rc && hi < lo)
				rc = fail(c, "max %g is below min %g", hi, lo);
			pop(c);
		}
	}
	pop(c);
	if (rc)
		return rc;
	tl->think_min_ns = llround(lo * 1e9);
	tl->think_max_ns = llround(hi * 1e9);
	if (hi > 0)
		c->tl_time = 1;
	return 0;
}

/* "rate" (instances started per second, above 0) and "burst" ([min, max]
 * started at once); either makes the config's instances ordered. */
static int tracelet_rate(struct ctx *c, json_t *obj, struct mt_tracelet *tl)
{
	double rate = 0;
	if (key_number(c, obj, "rate", 0, 1e9, &rate) != 0)
		return -1;
	if (json_object_get(obj, "rate") && !(rate > 0)) {
		push_key(c, "rate");
		fail(c, "must be more than 0");
		pop(c);
		return -1;
	}
	tl->rate = rate;
	if (rate > 0)
		c->tl_time = 1;
	tl->burst_min = tl->burst_max = 1;
	json_t *v = json_object_get(obj, "burst");
	if (v) {
		long long lo = 1, hi = 1;
		push_key(c, "burst");
		int rc = integer_range(c, v, 1, MT_MAX_BURST, "[min, max]: instances started at once",
		                       &lo, &hi);
		pop(c);
		if (rc)
			return rc;
		tl->burst_min = (uint32_t)lo;
		tl->burst_max = (uint32_t)hi;
	}
	if (tl->rate > 0 || tl->burst_max > 1)
		c->cfg->ordered = 1;
	return 0;
}

/* "node": the node, or the nodes, an instance starts at. */
static int tracelet_roots(struct ctx *c, json_t *v, struct mt_tracelet *tl)
{
	push_key(c, "node");
	int rc = 0;
	if (json_is_array(v)) {
		size_t n = json_array_size(v);
		if (!n)
			rc = fail(c, "expected a node name or a non-empty array of them");
		tl->roots = bb_xcalloc(n ? n : 1, sizeof(*tl->roots));
		for (size_t i = 0; i < n && !rc; i++) {
			push_idx(c, i);
			rc = node_ref(c, json_array_get(v, i), &tl->roots[i]);
			pop(c);
		}
		tl->nroots = (uint32_t)n;
	} else {
		tl->roots = bb_xcalloc(1, sizeof(*tl->roots));
		rc = node_ref(c, v, &tl->roots[0]);
		tl->nroots = 1;
	}
	pop(c);
	return rc;
}

/* The tracelet's "steps", with its own "defaults" over the top level's. */
static int tracelet_steps(struct ctx *c, json_t *obj, struct mt_tracelet *tl,
                          const struct defaults *top)
{
	struct dstore ds = {0};
	struct defaults df = *top;
	int rc = parse_defaults(c, obj, &ds, &df);
	if (!rc) {
		json_t *v = json_object_get(obj, "steps");
		if (!v) {
			rc = fail(c, "missing \"steps\"");
		} else {
			int known = tl->nroots > 0;
			push_key(c, "steps");
			rc = parse_seq(c, v, &tl->body, &df, &known);
			pop(c);
		}
	}
	delay_free(&ds.delay);
	delay_free(&ds.ret);
	return rc;
}

static int parse_tracelet(struct ctx *c, json_t *obj, struct mt_tracelet *tl,
                          const struct defaults *top)
{
	static const char *const allowed[] = {"name",  "instances", "think", "node", "defaults",
	                                      "steps", "rate",      "burst", NULL};
	if (!json_is_object(obj))
		return fail(c, "expected a tracelet (an object)");
	if (check_keys(c, obj, allowed) != 0 || tracelet_name(c, obj, tl) != 0)
		return -1;
	long long inst = 1;
	if (key_integer(c, obj, "instances", 1, MT_MAX_INSTANCES, &inst) != 0)
		return -1;
	tl->instances = (uint32_t)inst;
	json_t *v = json_object_get(obj, "think");
	if (v && tracelet_think(c, v, tl) != 0)
		return -1;
	if (tracelet_rate(c, obj, tl) != 0)
		return -1;
	if ((v = json_object_get(obj, "node")) && tracelet_roots(c, v, tl) != 0)
		return -1;
	if (tracelet_steps(c, obj, tl, top) != 0)
		return -1;
	if (!c->tl_msgs)
		return fail(c, "tracelet \"%s\" sends no messages", tl->name);
	if (!c->tl_time)
		return fail(c, "tracelet \"%s\" has no think time and no delay: its time would "
		               "never advance", tl->name);
	return 0;
}

static int parse_nodes(struct ctx *c, json_t *root)
{
	json_t *v = json_object_get(root, "nodes");
	if (!v)
		return fail(c, "missing \"nodes\"");
	push_key(c, "nodes");
	if (!json_is_array(v) || !json_array_size(v)) {
		fail(c, "expected a non-empty array of node names");
		pop(c);
		return -1;
	}
	for (size_t i = 0; i < json_array_size(v); i++) {
		json_t *e = json_array_get(v, i);
		push_idx(c, i);
		if (!json_is_string(e) || !valid_name(json_string_value(e), json_string_length(e), 0)) {
			fail(c, "expected a node name (a string without white space)");
			pop(c);
			pop(c);
			return -1;
		}
		uint32_t before = bb_intern_count(c->cfg->nodes);
		if (bb_intern_add(c->cfg->nodes, json_string_value(e), json_string_length(e)) < before) {
			fail(c, "node \"%s\" listed twice", json_string_value(e));
			pop(c);
			pop(c);
			return -1;
		}
		pop(c);
	}
	pop(c);
	return 0;
}

static int parse_loss(struct ctx *c, json_t *root)
{
	json_t *v = json_object_get(root, "loss");
	struct bb_mt_config *cfg = c->cfg;
	cfg->queue = BB_MT_QUEUE;
	if (!v)
		return 0;
	static const char *const allowed[] = {"capture_rate", "queue", "probability", NULL};
	push_key(c, "loss");
	int rc = 0;
	long long q = BB_MT_QUEUE;
	if (!json_is_object(v))
		rc = fail(c, "expected an object with \"capture_rate\", \"queue\", \"probability\"");
	else if (!(rc = check_keys(c, v, allowed)) &&
	         !(rc = key_number(c, v, "capture_rate", 0, 1e12, &cfg->capture_rate)) &&
	         !(rc = key_integer(c, v, "queue", 1, 1000000000, &q)))
		rc = key_number(c, v, "probability", 0, 1, &cfg->probability);
	cfg->queue = (uint32_t)q;
	pop(c);
	return rc;
}

static int parse_skew(struct ctx *c, json_t *root)
{
	json_t *v = json_object_get(root, "skew");
	if (!v)
		return 0;
	push_key(c, "skew");
	if (!json_is_object(v)) {
		fail(c, "expected an object: {\"NODE\": OFFSET_SECONDS or {\"offset\": S, "
		        "\"drift\": PPM}}");
		pop(c);
		return -1;
	}
	const char *key;
	json_t *e;
	int rc = 0;
	json_object_foreach(v, key, e) {
		double off = 0, drift = 0;
		int has_off = 1, has_drift = 0;
		push_key(c, key);
		if (bb_intern_find(c->cfg->nodes, key, strlen(key)) == BB_NONE) {
			rc = fail(c, "unknown node \"%s\" (not in \"nodes\")", key);
		} else if (json_is_object(e)) {
			static const char *const allowed[] = {"offset", "drift", NULL};
			has_off = json_object_get(e, "offset") != NULL;
			has_drift = json_object_get(e, "drift") != NULL;
			if (!(rc = check_keys(c, e, allowed)) &&
			    !(rc = key_number(c, e, "offset", -MT_MAX_SECONDS, MT_MAX_SECONDS, &off)))
				rc = key_number(c, e, "drift", -BB_MT_MAX_DRIFT, BB_MT_MAX_DRIFT, &drift);
		} else if (json_is_number(e)) {
			rc = number_in(c, e, -MT_MAX_SECONDS, MT_MAX_SECONDS, &off);
		} else {
			rc = fail(c, "expected an offset in seconds or {\"offset\": S, \"drift\": PPM}");
		}
		if (!rc)
			rc = bb_mt_skew_set(c->cfg->skew, key, strlen(key), has_off, llround(off * 1e9),
			                    has_drift, drift, c->err);
		pop(c);
		if (rc)
			break;
	}
	pop(c);
	return rc;
}

/* "workers": {"NODE": K}: NODE handles at most K calls at once. */
static int parse_workers(struct ctx *c, json_t *root)
{
	json_t *v = json_object_get(root, "workers");
	if (!v)
		return 0;
	push_key(c, "workers");
	if (!json_is_object(v)) {
		fail(c, "expected an object: {\"NODE\": WORKERS}");
		pop(c);
		return -1;
	}
	c->cfg->workers = bb_xcalloc(bb_intern_count(c->cfg->nodes), sizeof(*c->cfg->workers));
	const char *key;
	json_t *e;
	int rc = 0;
	json_object_foreach(v, key, e) {
		long long k = 0;
		push_key(c, key);
		uint32_t i = bb_intern_find(c->cfg->nodes, key, strlen(key));
		if (i == BB_NONE)
			rc = fail(c, "unknown node \"%s\" (not in \"nodes\")", key);
		else
			rc = integer_in(c, e, 1, MT_MAX_WORKERS, &k);
		pop(c);
		if (rc)
			break;
		c->cfg->workers[i] = (uint32_t)k;
		c->cfg->ordered = 1;
	}
	pop(c);
	return rc;
}

static int parse_root(struct ctx *c, json_t *root)
{
	static const char *const allowed[] = {"seed",     "start",  "duration", "messages",
	                                      "ids",      "nodes",  "defaults", "tracelets",
	                                      "loss",     "skew",   "workers",  NULL};
	struct bb_mt_config *cfg = c->cfg;
	if (!json_is_object(root))
		return fail(c, "expected a JSON object at the top");
	if (check_keys(c, root, allowed) != 0)
		return -1;

	long long seed = 1;
	if (key_integer(c, root, "seed", 0, INT64_MAX, &seed) != 0)
		return -1;
	cfg->seed = (uint64_t)seed;
	double start = (double)(MT_DEFAULT_START_NS / BB_NS_PER_S), dur = 0;
	if (key_number(c, root, "start", 0, MT_MAX_SECONDS, &start) != 0 ||
	    key_number(c, root, "duration", 0, MT_MAX_SECONDS, &dur) != 0)
		return -1;
	cfg->start_ns = llround(start * 1e9);
	cfg->duration_ns = llround(dur * 1e9);
	if (json_object_get(root, "duration") && cfg->duration_ns <= 0) {
		push_key(c, "duration");
		fail(c, "must be more than 0");
		pop(c);
		return -1;
	}
	long long msgs = 0;
	if (key_integer(c, root, "messages", 1, INT64_MAX, &msgs) != 0)
		return -1;
	cfg->messages = (uint64_t)msgs;
	if (!cfg->duration_ns && !cfg->messages)
		return fail(c, "missing \"duration\" or \"messages\": the trace needs an end");
	json_t *v = json_object_get(root, "ids");
	if (v) {
		push_key(c, "ids");
		int bad = !json_is_string(v) || (strcmp(json_string_value(v), "counter") &&
		                                 strcmp(json_string_value(v), "none"));
		if (bad)
			fail(c, "expected \"counter\" or \"none\"");
		else
			cfg->no_ids = !strcmp(json_string_value(v), "none");
		pop(c);
		if (bad)
			return -1;
	}
	if (parse_nodes(c, root) != 0 || parse_loss(c, root) != 0 || parse_skew(c, root) != 0 ||
	    parse_workers(c, root) != 0)
		return -1;

	struct dstore ds = {0};
	struct defaults df = {NULL, NULL};
	int rc = parse_defaults(c, root, &ds, &df);
	if (!rc) {
		v = json_object_get(root, "tracelets");
		if (!v)
			rc = fail(c, "missing \"tracelets\"");
	}
	if (!rc) {
		push_key(c, "tracelets");
		if (!json_is_array(v) || !json_array_size(v)) {
			rc = fail(c, "expected a non-empty array of tracelets");
		} else {
			size_t n = json_array_size(v);
			uint64_t total = 0;
			cfg->tl = bb_xcalloc(n, sizeof(*cfg->tl));
			for (size_t i = 0; i < n && !rc; i++) {
				push_idx(c, i);
				c->tl_msgs = c->tl_time = 0;
				cfg->ntl = (uint32_t)(i + 1);
				rc = parse_tracelet(c, json_array_get(v, i), &cfg->tl[i], &df);
				total += rc ? 0 : cfg->tl[i].instances;
				if (!rc && total > MT_MAX_INSTANCES)
					rc = fail(c, "more than %u instances in all tracelets",
					          MT_MAX_INSTANCES);
				pop(c);
			}
		}
		pop(c);
	}
	delay_free(&ds.delay);
	delay_free(&ds.ret);
	return rc;
}

int bb_mt_config_parse(const char *text, size_t len, const char *name,
                       struct bb_mt_config **out, struct bb_err *err)
{
	json_error_t jerr;
	*out = NULL;
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		bb_err_set(err, "%s:%d:%d: %s", name, jerr.line, jerr.column, jerr.text);
		return BB_ERR_PARSE;
	}
	struct bb_mt_config *cfg = bb_xcalloc(1, sizeof(*cfg));
	cfg->name = bb_xstrndup(name, strlen(name));
	cfg->nodes = bb_intern_new();
	cfg->skew = bb_mt_skew_new();
	cfg->start_ns = MT_DEFAULT_START_NS;
	struct ctx *c = bb_xcalloc(1, sizeof(*c));
	c->name = name;
	c->text = text;
	c->len = len;
	c->err = err;
	c->cfg = cfg;
	int rc = parse_root(c, root);
	free(c);
	json_decref(root);
	if (rc) {
		bb_mt_config_free(cfg);
		return BB_ERR_PARSE;
	}
	*out = cfg;
	return 0;
}

int bb_mt_config_load(const char *path, struct bb_mt_config **out, struct bb_err *err)
{
	*out = NULL;
	FILE *fp = fopen(path, "rb");
	if (!fp) {
		bb_err_set(err, "%s: %s", path, strerror(errno));
		return BB_ERR_IO;
	}
	size_t cap = 4096, len = 0;
	char *buf = bb_xmalloc(cap);
	for (;;) {
		if (len == cap) {
			if (cap >= MAX_FILE) {
				bb_err_set(err, "%s: larger than %u bytes", path, MAX_FILE);
				free(buf);
				fclose(fp);
				return BB_ERR_LIMIT;
			}
			cap *= 2;
			buf = bb_xrealloc(buf, cap);
		}
		size_t got = fread(buf + len, 1, cap - len, fp);
		len += got;
		if (got == 0)
			break;
	}
	if (ferror(fp)) {
		bb_err_set(err, "%s: %s", path, strerror(errno));
		free(buf);
		fclose(fp);
		return BB_ERR_IO;
	}
	fclose(fp);
	int rc = bb_mt_config_parse(buf, len, path, out, err);
	free(buf);
	return rc;
}

const char *bb_mt_json_version(void)
{
	return jansson_version_str();
}

void bb_mt_config_free(struct bb_mt_config *cfg)
{
	if (!cfg)
		return;
	for (uint32_t i = 0; i < cfg->ntl; i++) {
		free(cfg->tl[i].name);
		free(cfg->tl[i].roots);
		delay_free(&cfg->tl[i].think);
		seq_free(&cfg->tl[i].body);
	}
	free(cfg->tl);
	bb_intern_free(cfg->nodes);
	bb_mt_skew_free(cfg->skew);
	free(cfg->workers);
	free(cfg->name);
	free(cfg);
}

uint64_t bb_mt_config_seed(const struct bb_mt_config *cfg)
{
	return cfg->seed;
}

uint32_t bb_mt_config_nnodes(const struct bb_mt_config *cfg)
{
	return bb_intern_count(cfg->nodes);
}

const char *bb_mt_config_node(const struct bb_mt_config *cfg, uint32_t i)
{
	return bb_intern_str(cfg->nodes, i);
}

uint32_t bb_mt_config_ntracelets(const struct bb_mt_config *cfg)
{
	return cfg->ntl;
}

const char *bb_mt_config_tracelet(const struct bb_mt_config *cfg, uint32_t i)
{
	return cfg->tl[i].name;
}

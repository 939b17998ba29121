/* mt_skew.c - per-node clock skew: offsets and drifts by node name, arguments, offset tables */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "maketrace/maketrace.h"

/* Paper section 7.5.6: "skewer" adds per-node clock skew to an existing trace
 * and, given offsets measured by other means (NTP), removes it. A message is
 * stamped by its sender's clock, so the shift is the sender's. */

struct skew_ent {
	int64_t offset_ns;
	double drift_ppm;
	int has_offset, has_drift;
};

struct bb_mt_skew {
	struct bb_intern *names;
	struct skew_ent *e;
	size_t n, cap;
};

struct bb_mt_skew *bb_mt_skew_new(void)
{
	struct bb_mt_skew *sk = bb_xcalloc(1, sizeof(*sk));
	sk->names = bb_intern_new();
	return sk;
}

void bb_mt_skew_free(struct bb_mt_skew *sk)
{
	if (!sk)
		return;
	bb_intern_free(sk->names);
	free(sk->e);
	free(sk);
}

static struct skew_ent *entry(struct bb_mt_skew *sk, const char *node, size_t len)
{
	uint32_t i = bb_intern_add(sk->names, node, len);
	while (i >= sk->n) {
		if (sk->n == sk->cap) {
			sk->cap = sk->cap ? 2 * sk->cap : 8;
			sk->e = bb_xrealloc(sk->e, sk->cap * sizeof(*sk->e));
		}
		memset(&sk->e[sk->n++], 0, sizeof(*sk->e));
	}
	return &sk->e[i];
}

static int drift_ok(double ppm)
{
	return isfinite(ppm) && fabs(ppm) <= BB_MT_MAX_DRIFT;
}

static int add(struct bb_mt_skew *sk, const char *node, size_t len, int64_t offset_ns,
               double drift_ppm, int mark_offset, int mark_drift, struct bb_err *err)
{
	struct skew_ent *e = entry(sk, node, len);
	if (!drift_ok(e->drift_ppm + drift_ppm)) {
		bb_err_set(err, "drift of %.*s out of range (at most %g ppm either way)", (int)len,
		           node, BB_MT_MAX_DRIFT);
		return BB_ERR_ARG;
	}
	e->offset_ns = bb_mt_time_add(e->offset_ns, offset_ns);
	e->drift_ppm += drift_ppm;
	e->has_offset |= mark_offset;
	e->has_drift |= mark_drift;
	return 0;
}

int bb_mt_skew_add(struct bb_mt_skew *sk, const char *node, size_t len, int64_t offset_ns,
                   double drift_ppm, struct bb_err *err)
{
	return add(sk, node, len, offset_ns, drift_ppm, offset_ns != 0, drift_ppm != 0, err);
}

int bb_mt_skew_set(struct bb_mt_skew *sk, const char *node, size_t len, int set_offset,
                   int64_t offset_ns, int set_drift, double drift_ppm, struct bb_err *err)
{
	if (set_drift && !drift_ok(drift_ppm)) {
		bb_err_set(err, "drift of %.*s out of range (at most %g ppm either way)", (int)len,
		           node, BB_MT_MAX_DRIFT);
		return BB_ERR_ARG;
	}
	struct skew_ent *e = entry(sk, node, len);
	if (set_offset) {
		e->offset_ns = offset_ns;
		e->has_offset = 1;
	}
	if (set_drift) {
		e->drift_ppm = drift_ppm;
		e->has_drift = 1;
	}
	return 0;
}

int bb_mt_skew_parse_arg(struct bb_mt_skew *sk, const char *arg, int drift, struct bb_err *err)
{
	const char *eq = strrchr(arg, '=');
	const char *what = drift ? "NODE=PPM" : "NODE=SECONDS";
	if (!eq || eq == arg || !eq[1]) {
		bb_err_set(err, "expected %s, got \"%s\"", what, arg);
		return BB_ERR_ARG;
	}
	size_t len = (size_t)(eq - arg);
	const char *val = eq + 1;
	if (drift) {
		char *end;
		errno = 0;
		double ppm = strtod(val, &end);
		if (*end || errno || !isfinite(ppm)) {
			bb_err_set(err, "bad drift \"%s\" in \"%s\" (expected %s)", val, arg, what);
			return BB_ERR_ARG;
		}
		return add(sk, arg, len, 0, ppm, 0, 1, err);
	}
	int64_t ns;
	if (bb_time_parse(val, strlen(val), &ns) != 0) {
		bb_err_set(err, "bad offset \"%s\" in \"%s\" (expected %s, at most 9 decimals)", val,
		           arg, what);
		return BB_ERR_ARG;
	}
	return add(sk, arg, len, ns, 0, 1, 0, err);
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}

/* Splits line into at most 3 white-space separated fields, stopping at a '#'
 * that starts a field (a comment). Returns the number of fields found. */
static int fields(char *line, char **f, size_t *flen)
{
	int n = 0;
	char *p = line;
	for (;;) {
		while (*p && is_space(*p))
			p++;
		if (!*p || *p == '#')
			return n;
		if (n == 3)
			return 4;
		f[n] = p;
		while (*p && !is_space(*p))
			p++;
		flen[n] = (size_t)(p - f[n]);
		n++;
	}
}

int bb_mt_skew_load_table(struct bb_mt_skew *sk, const char *path, int sign,
                          struct bb_err *err)
{
	FILE *fp = fopen(path, "r");
	if (!fp) {
		bb_err_set(err, "%s: %s", path, strerror(errno));
		return BB_ERR_IO;
	}
	char *line = NULL;
	size_t cap = 0;
	uint64_t lineno = 0;
	int rc = 0;
	struct bb_intern *seen = bb_intern_new();
	uint64_t *seen_line = NULL;

	while (getline(&line, &cap, fp) >= 0) {
		char *f[3];
		size_t flen[3];
		int64_t ns;
		lineno++;
		int n = fields(line, f, flen);
		if (n == 0)
			continue;
		if (n != 2) {
			bb_err_set(err, "%s:%llu: expected NODE OFFSET_SECONDS", path,
			           (unsigned long long)lineno);
			rc = BB_ERR_PARSE;
			break;
		}
		if (bb_time_parse(f[1], flen[1], &ns) != 0) {
			bb_err_set(err, "%s:%llu: bad offset \"%.*s\" (seconds, at most 9 decimals)",
			           path, (unsigned long long)lineno, (int)flen[1], f[1]);
			rc = BB_ERR_PARSE;
			break;
		}
		uint32_t before = bb_intern_count(seen);
		uint32_t i = bb_intern_add(seen, f[0], flen[0]);
		if (i < before) {
			bb_err_set(err, "%s:%llu: node \"%.*s\" listed twice (first at line %llu)",
			           path, (unsigned long long)lineno, (int)flen[0], f[0],
			           (unsigned long long)seen_line[i]);
			rc = BB_ERR_PARSE;
			break;
		}
		seen_line = bb_xrealloc(seen_line, (i + 1) * sizeof(*seen_line));
		seen_line[i] = lineno;
		if ((rc = add(sk, f[0], flen[0], sign < 0 ? -ns : ns, 0, 1, 0, err)) != 0)
			break;
	}
	if (!rc && ferror(fp)) {
		bb_err_set(err, "%s: %s", path, strerror(errno));
		rc = BB_ERR_IO;
	}
	free(line);
	free(seen_line);
	bb_intern_free(seen);
	fclose(fp);
	return rc;
}

size_t bb_mt_skew_count(const struct bb_mt_skew *sk)
{
	return sk ? sk->n : 0;
}

const char *bb_mt_skew_entry(const struct bb_mt_skew *sk, size_t i, int64_t *offset_ns,
                             double *drift_ppm, int *has_offset, int *has_drift)
{
	const struct skew_ent *e = &sk->e[i];
	if (offset_ns)
		*offset_ns = e->offset_ns;
	if (drift_ppm)
		*drift_ppm = e->drift_ppm;
	if (has_offset)
		*has_offset = e->has_offset;
	if (has_drift)
		*has_drift = e->has_drift;
	return bb_intern_str(sk->names, (uint32_t)i);
}

uint32_t bb_mt_skew_find(const struct bb_mt_skew *sk, const char *node, size_t len)
{
	return sk ? bb_intern_find(sk->names, node, len) : BB_NONE;
}

int bb_mt_skew_active(const struct bb_mt_skew *sk)
{
	for (size_t i = 0; sk && i < sk->n; i++)
		if (sk->e[i].offset_ns || sk->e[i].drift_ppm != 0)
			return 1;
	return 0;
}

int64_t bb_mt_skew_shift(int64_t offset_ns, double drift_ppm, int64_t t0_ns, int64_t ts_ns)
{
	if (drift_ppm == 0)
		return offset_ns;
	double d = drift_ppm * 1e-6 * ((double)ts_ns - (double)t0_ns);
	int64_t d_ns;
	if (fabs(d) < 9e18)
		d_ns = (int64_t)llround(d);
	else
		d_ns = d < 0 ? -INT64_MAX : INT64_MAX;
	return bb_mt_time_add(offset_ns, d_ns);
}

int64_t bb_mt_time_add(int64_t ts_ns, int64_t d_ns)
{
	int64_t r;
	if (__builtin_add_overflow(ts_ns, d_ns, &r))
		return d_ns < 0 ? INT64_MIN + 1 : INT64_MAX;
	return r;
}

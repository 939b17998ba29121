/* rep_load.c - one run for the reports: a trace nested here, or bbnest's JSON read back */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

int bb_rep_nest_option(int k, const char *arg, struct bb_nest_params *np, struct bb_err *err)
{
	char *end;
	switch (k) {
	case 0:
		if (sscanf(arg, "%lf,%lf,%lf", &np->penalty_x, &np->penalty_y, &np->penalty_z) != 3) {
			bb_err_set(err, "--penalty: expected X,Y,Z, not '%s'", arg);
			return -1;
		}
		return 0;
	case 1:
		errno = 0;
		np->smooth_sigma = strtod(arg, &end);
		if (errno || end == arg || *end) {
			bb_err_set(err, "--smooth: bad number '%s'", arg);
			return -1;
		}
		return 0;
	case 2:
		if (bb_duration_parse(arg, &np->skew_window_ns) != 0) {
			bb_err_set(err, "--skew-window: bad duration '%s'", arg);
			return -1;
		}
		return 0;
	case 3:
		np->global = 1;
		return 0;
	case 4:
		np->return_score = np->global = 0;
		return 0;
	case 5:
		np->content = 0;
		return 0;
	default:
		np->return_score = 1;
		return 0;
	}
}

struct bb_rep_run {
	struct bb_nest *nest;           /* a trace */
	struct bb_vpatterns_doc *doc;   /* JSON */
	const struct bb_vpatterns *p;
};

struct bb_rep_run *bb_rep_load(const char *path, const struct bb_rep_load_opts *o,
                               struct bb_err *err)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		bb_err_set(err, "%s: %s", path, strerror(errno));
		return NULL;
	}
	int c;
	while ((c = getc(f)) == ' ' || c == '\t' || c == '\n' || c == '\r')
		;
	struct bb_rep_run *r = bb_xcalloc(1, sizeof(*r));
	if (c == '{') {
		fclose(f);
		r->doc = bb_viz_patterns_read(path, err);
		if (!r->doc) {
			free(r);
			return NULL;
		}
		r->p = bb_viz_patterns_doc(r->doc);
		return r;
	}
	if (fseek(f, 0, SEEK_SET) != 0) {
		bb_err_set(err, "%s: cannot rewind: %s", path, strerror(errno));
		fclose(f);
		free(r);
		return NULL;
	}
	struct bb_nest_params np;
	if (o && o->nest)
		np = *o->nest;
	else
		bb_nest_params_init(&np);
	np.bins_in_output = 1; /* the comparison tests the distributions */
	np.top = 0;
	np.min_count = 0;
	r->nest = bb_nest_new(&np, BB_NEST_INFER);
	if (o && o->on_instance)
		bb_nest_set_instances(r->nest, o->on_instance, o->ctx);
	int rc = bb_nest_run_stream(r->nest, f, path, o ? o->reader : NULL, err);
	fclose(f);
	if (rc < 0) {
		bb_rep_run_free(r);
		return NULL;
	}
	r->p = bb_nest_patterns(r->nest);
	return r;
}

void bb_rep_run_free(struct bb_rep_run *r)
{
	if (!r)
		return;
	bb_nest_free(r->nest);
	bb_viz_patterns_doc_free(r->doc);
	free(r);
}

const struct bb_vpatterns *bb_rep_patterns(const struct bb_rep_run *r)
{
	return r->p;
}

size_t bb_rep_assumed_caps(const struct bb_rep_run *r, const struct bb_nest_cap **caps)
{
	*caps = NULL;
	return r->nest ? bb_nest_assumed_caps(r->nest, caps) : 0;
}

int bb_rep_is_trace(const struct bb_rep_run *r)
{
	return r->nest != NULL;
}

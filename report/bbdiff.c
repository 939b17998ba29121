/* bbdiff.c - bbdiff: what got slower between a baseline run and a slow one, and where */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

#define PROG "bbdiff"

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: bbdiff [options] BASE SLOW\n"
	        "Compares two runs (traces, or bbnest --json output with histogram bins) and\n"
	        "says which edges and nodes got slower or faster, and which paths appeared or\n"
	        "vanished, with a significance test; the verdict comes first.\n"
	        "  bbdiff normal.tr slow.tr\n"
	        "\n"
	        "output:\n"
	        "  -o, --output FILE      write to FILE instead of standard output\n"
	        "  -j, --json             JSON: {\"verdict\", \"changes\": [...], \"compared\"}\n"
	        "      --dot              the service graph with the changes in red\n"
	        "test:\n"
	        "      --alpha A          family-wise error rate, Holm-corrected (default 0.01)\n"
	        "      --min-delta D      smallest change worth reporting (default 1ms)\n"
	        "      --min-z Z          and at least Z standard errors (default 4)\n"
	        "      --min-share S      smallest change of a path's share (default 0.02)\n"
	        "      --min-count N      compare patterns seen N times in both (default 10)\n"
	        "for traces (as bbnest):\n" BB_REP_NEST_USAGE
	        "  -h, --help             this help\n"
	        "      --version          version\n"
	        "Exit status: 0 when nothing changed, 3 when something did, 1 on failure, 2 on\n"
	        "a usage error.\n");
}

static int parse_num(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0))
		return -1;
	*out = v;
	return 0;
}

enum {
	OPT_DOT = 256,
	OPT_ALPHA,
	OPT_MIN_DELTA,
	OPT_MIN_Z,
	OPT_MIN_SHARE,
	OPT_MIN_COUNT,
	OPT_VERSION,
	OPT_NEST, /* BB_REP_NEST_NOPTS values from here */
};

static const struct option longopts[] = {
	{"output", required_argument, NULL, 'o'},
	{"json", no_argument, NULL, 'j'},
	{"dot", no_argument, NULL, OPT_DOT},
	{"alpha", required_argument, NULL, OPT_ALPHA},
	{"min-delta", required_argument, NULL, OPT_MIN_DELTA},
	{"min-z", required_argument, NULL, OPT_MIN_Z},
	{"min-share", required_argument, NULL, OPT_MIN_SHARE},
	{"min-count", required_argument, NULL, OPT_MIN_COUNT},
	BB_REP_NEST_LONGOPTS(OPT_NEST),
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, OPT_VERSION},
	{NULL, 0, NULL, 0},
};

/* What the command line asks for. */
struct cli {
	struct bb_rep_diff_params dp;
	struct bb_nest_params np;
	const char *outpath;
	int format; /* 't' text, 'j' JSON, 'd' dot */
	const char *base, *slow;
};

/* A test or nesting option: 0, or 2 after a usage error. */
static int test_option(struct cli *o, int c, const char *arg)
{
	double v;
	switch (c) {
	case OPT_ALPHA:
		if (parse_num(arg, &v) != 0 || v <= 0 || v >= 1)
			return bb_usage_error(
			    PROG, "--alpha: expected a number in (0, 1), not '%s'", arg);
		o->dp.alpha = v;
		break;
	case OPT_MIN_DELTA:
		if (bb_duration_parse(arg, &o->dp.min_delta_ns) != 0 || o->dp.min_delta_ns < 0)
			return bb_usage_error(PROG, "--min-delta: bad duration '%s'", arg);
		break;
	case OPT_MIN_Z:
		if (parse_num(arg, &v) != 0)
			return bb_usage_error(PROG, "--min-z: bad number '%s'", arg);
		o->dp.min_z = v;
		break;
	case OPT_MIN_SHARE:
		if (parse_num(arg, &v) != 0 || v > 1)
			return bb_usage_error(
			    PROG, "--min-share: expected a number in [0, 1], not '%s'", arg);
		o->dp.min_share = v;
		break;
	case OPT_MIN_COUNT:
		if (parse_num(arg, &v) != 0 || v != (double)(uint64_t)v)
			return bb_usage_error(PROG, "--min-count: bad count '%s'", arg);
		o->dp.min_count = (uint64_t)v;
		break;
	default: {
		struct bb_err e = {{0}};
		if (c >= OPT_NEST && c < OPT_NEST + BB_REP_NEST_NOPTS &&
		    bb_rep_nest_option(c - OPT_NEST, arg, &o->np, &e) != 0)
			return bb_usage_error(PROG, "%s", e.msg);
	}
	}
	return 0;
}

/* Parses argv into o: -1 to go on, else the exit status (help, version, a
 * usage error). */
static int parse_args(int argc, char **argv, struct cli *o)
{
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:jh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->outpath = optarg;
			break;
		case 'j':
			o->format = 'j';
			break;
		case OPT_DOT:
			o->format = 'd';
			break;
		case 'h':
			usage(stdout);
			return 0;
		case OPT_VERSION:
			printf("bbdiff (bb) %s\nGraphviz %s\njansson %s\n", BB_VERSION,
			       bb_viz_graphviz_version(), bb_viz_jansson_version());
			return 0;
		case ':':
		case '?':
			return bb_usage_getopt(PROG, c, optopt, argv[optind - 1]);
		default:
			if (test_option(o, c, optarg) != 0)
				return 2;
		}
	}
	if (argc - optind != 2)
		return bb_usage_error(PROG, "expected two runs: BASE SLOW");
	struct bb_err err = {{0}};
	if (bb_nest_params_check(&o->np, &err) != 0)
		return bb_usage_error(PROG, "%s", err.msg);
	o->base = argv[optind];
	o->slow = argv[optind + 1];
	return -1;
}

/* Writes the comparison in the format asked for: 0, or 1 after an error. */
static int write_diff(const struct bb_rep_diff *d, const struct cli *o)
{
	struct bb_err err = {{0}};
	FILE *fo = stdout;
	if (o->outpath && strcmp(o->outpath, "-") != 0 && !(fo = fopen(o->outpath, "w"))) {
		fprintf(stderr, PROG ": error: %s: %s\n", o->outpath, strerror(errno));
		return 1;
	}
	int rc = o->format == 'j'   ? bb_rep_diff_json(fo, d, &err)
	         : o->format == 'd' ? bb_rep_diff_dot(fo, d, &err)
	                            : bb_rep_diff_text(fo, d, &err);
	if (fo != stdout && fclose(fo) != 0 && rc == 0) {
		bb_err_set(&err, "%s", strerror(errno));
		rc = BB_ERR_IO;
	}
	if (rc < 0) {
		fprintf(stderr, PROG ": error: %s: %s\n", o->outpath ? o->outpath : "<stdout>",
		        err.msg);
		return 1;
	}
	return 0;
}

/* Loads both runs, compares and writes: the exit status (3: something changed). */
static int run(const struct cli *o)
{
	struct bb_err err = {{0}};
	struct bb_rep_load_opts lo = {&o->np, NULL, NULL, NULL};
	struct bb_rep_run *base = bb_rep_load(o->base, &lo, &err), *slow = NULL;
	if (base)
		slow = bb_rep_load(o->slow, &lo, &err);
	struct bb_rep_diff *d = NULL;
	if (slow)
		d = bb_rep_diff_new(bb_rep_patterns(base), bb_rep_patterns(slow), &o->dp, &err);
	int status = 1;
	const struct bb_rep_change *ch;
	if (!d)
		fprintf(stderr, PROG ": error: %s\n", err.msg);
	else if (write_diff(d, o) == 0)
		status = bb_rep_diff_changes(d, &ch) ? 3 : 0;
	bb_rep_diff_free(d);
	bb_rep_run_free(base);
	bb_rep_run_free(slow);
	return status;
}

int main(int argc, char **argv)
{
	struct cli o = {.format = 't'};
	bb_rep_diff_params_init(&o.dp);
	bb_nest_params_init(&o.np);
	int status = parse_args(argc, argv, &o);
	if (status < 0)
		status = run(&o);
	return status;
}

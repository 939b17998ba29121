/* bbreport.c - bbreport: one self-contained HTML page about a trace, against a baseline if given */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

#define PROG "bbreport"

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: bbreport -o FILE [options] TRACE\n"
	        "Writes one HTML page about TRACE that opens offline: the capture's health,\n"
	        "the path patterns (sortable table and graphs), the nodes with latency\n"
	        "histograms, requests and latency over time and, with --baseline, what got\n"
	        "slower (bbdiff's verdict).\n"
	        "  bbreport -o report.html --baseline normal.tr slow.tr\n"
	        "\n"
	        "  -o, --output FILE      the page to write (required)\n"
	        "  -b, --baseline RUN     compare with RUN (a trace or bbnest --json output)\n"
	        "      --top N            patterns in the table and as graphs (default 30; 0 all)\n"
	        BB_REP_NEST_USAGE
	        "  -h, --help             this help\n"
	        "      --version          version\n");
}

enum { OPT_TOP = 256, OPT_VERSION, OPT_NEST /* BB_REP_NEST_NOPTS values from here */ };

static const struct option longopts[] = {
	{"output", required_argument, NULL, 'o'},
	{"baseline", required_argument, NULL, 'b'},
	{"top", required_argument, NULL, OPT_TOP},
	BB_REP_NEST_LONGOPTS(OPT_NEST),
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, OPT_VERSION},
	{NULL, 0, NULL, 0},
};

/* What the command line asks for. */
struct cli {
	struct bb_nest_params np;
	const char *outpath, *baseline, *trace;
	unsigned long top;
};

/* Parses argv into o: -1 to go on, else the exit status (help, version, a
 * usage error). */
static int parse_args(int argc, char **argv, struct cli *o)
{
	struct bb_err err = {{0}};
	int c;
	char *end;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:b:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			o->outpath = optarg;
			break;
		case 'b':
			o->baseline = optarg;
			break;
		case OPT_TOP:
			errno = 0;
			o->top = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || *optarg == '-')
				return bb_usage_error(PROG, "--top: bad count '%s'", optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		case OPT_VERSION:
			printf("bbreport (bb) %s\nGraphviz %s\njansson %s\n", BB_VERSION,
			       bb_viz_graphviz_version(), bb_viz_jansson_version());
			return 0;
		case ':':
		case '?':
			return bb_usage_getopt(PROG, c, optopt, argv[optind - 1]);
		default:
			if (c >= OPT_NEST && c < OPT_NEST + BB_REP_NEST_NOPTS &&
			    bb_rep_nest_option(c - OPT_NEST, optarg, &o->np, &err) != 0)
				return bb_usage_error(PROG, "%s", err.msg);
		}
	}
	if (!o->outpath)
		return bb_usage_error(PROG, "-o FILE is required");
	if (argc - optind != 1)
		return bb_usage_error(PROG, "expected one trace");
	if (bb_nest_params_check(&o->np, &err) != 0)
		return bb_usage_error(PROG, "%s", err.msg);
	o->trace = argv[optind];
	return -1;
}

/* Writes the page: 0, or 1 after an error. */
static int write_page(const struct cli *o, const struct bb_rep_run *run,
                      const struct bb_rep_series *ts, const struct bb_rep_diff *d)
{
	struct bb_err err = {{0}};
	FILE *fo = strcmp(o->outpath, "-") == 0 ? stdout : fopen(o->outpath, "w");
	if (!fo) {
		fprintf(stderr, PROG ": error: %s: %s\n", o->outpath, strerror(errno));
		return 1;
	}
	int64_t mark = bb_out_mark(fo);
	int rc = bb_rep_html(fo, o->trace, run, ts, d, o->baseline, (size_t)o->top, &err);
	if (rc < 0)
		bb_out_cut(fo, mark);
	if (fo != stdout && fclose(fo) != 0 && rc == 0) {
		bb_err_set(&err, "%s", strerror(errno));
		rc = BB_ERR_IO;
	}
	if (rc < 0) {
		fprintf(stderr, PROG ": error: %s: %s\n", o->outpath, err.msg);
		return 1;
	}
	return 0;
}

/* Loads the baseline into *base (caller frees) and compares run with it:
 * returns new, or NULL with err set. */
static struct bb_rep_diff *compare(const struct cli *o, const struct bb_rep_run *run,
                                   struct bb_rep_run **base, struct bb_err *err)
{
	struct bb_rep_load_opts lb = {&o->np, NULL, NULL, NULL};
	struct bb_rep_diff_params dp;
	bb_rep_diff_params_init(&dp);
	*base = bb_rep_load(o->baseline, &lb, err);
	if (!*base)
		return NULL;
	return bb_rep_diff_new(bb_rep_patterns(*base), bb_rep_patterns(run), &dp, err);
}

/* Loads the trace (and the baseline, compared), writes the page: the exit status. */
static int report(const struct cli *o)
{
	struct bb_err err = {{0}};
	struct bb_rep_series *ts = bb_rep_series_new();
	struct bb_rep_load_opts lo = {&o->np, NULL, bb_rep_series_add, ts};
	struct bb_rep_run *run = bb_rep_load(o->trace, &lo, &err), *base = NULL;
	struct bb_rep_diff *d = NULL;
	int status = 1;
	if (!run)
		fprintf(stderr, PROG ": error: %s\n", err.msg);
	else if (!bb_rep_is_trace(run))
		fprintf(stderr,
		        PROG ": error: %s: bbreport needs a trace (it reads the capture's "
		             "health and the requests over time from it)\n",
		        o->trace);
	else if (o->baseline && !(d = compare(o, run, &base, &err)))
		fprintf(stderr, PROG ": error: %s\n", err.msg);
	else
		status = write_page(o, run, ts, d);
	bb_rep_diff_free(d);
	bb_rep_run_free(base);
	bb_rep_run_free(run);
	bb_rep_series_free(ts);
	return status;
}

int main(int argc, char **argv)
{
	struct cli o = {.top = 30};
	bb_nest_params_init(&o.np);
	int status = parse_args(argc, argv, &o);
	if (status < 0)
		status = report(&o);
	return status;
}

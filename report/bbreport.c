/* bbreport.c - bbreport: one self-contained HTML page about a trace, against a baseline if given */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

static const char *prog = "bbreport";

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
	        "      --penalty X,Y,Z    nesting: child penalty exponents (default 2,0,0)\n"
	        "      --smooth SIGMA     nesting: Gaussian smoothing of the scoreboard\n"
	        "      --skew-window D    nesting: loosen comparisons by D\n"
	        "      --global           nesting: choose all parents at once\n"
	        "  -h, --help             this help\n"
	        "      --version          version\n");
}

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", prog);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'bbreport --help' for more information.\n");
	return 2;
}

enum { OPT_TOP = 256, OPT_PENALTY, OPT_SMOOTH, OPT_SKEW, OPT_GLOBAL, OPT_VERSION };

static const struct option longopts[] = {
	{"output", required_argument, NULL, 'o'},
	{"baseline", required_argument, NULL, 'b'},
	{"top", required_argument, NULL, OPT_TOP},
	{"penalty", required_argument, NULL, OPT_PENALTY},
	{"smooth", required_argument, NULL, OPT_SMOOTH},
	{"skew-window", required_argument, NULL, OPT_SKEW},
	{"global", no_argument, NULL, OPT_GLOBAL},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, OPT_VERSION},
	{NULL, 0, NULL, 0},
};

int main(int argc, char **argv)
{
	struct bb_nest_params np;
	bb_nest_params_init(&np);
	const char *outpath = NULL, *baseline = NULL;
	unsigned long top = 30;
	int c;
	char *end;
	while ((c = getopt_long(argc, argv, "o:b:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			outpath = optarg;
			break;
		case 'b':
			baseline = optarg;
			break;
		case OPT_TOP:
			errno = 0;
			top = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || *optarg == '-')
				return usage_error("--top: bad count '%s'", optarg);
			break;
		case OPT_PENALTY:
			if (sscanf(optarg, "%lf,%lf,%lf", &np.penalty_x, &np.penalty_y, &np.penalty_z) != 3)
				return usage_error("--penalty: expected X,Y,Z, not '%s'", optarg);
			break;
		case OPT_SMOOTH:
			np.smooth_sigma = strtod(optarg, &end);
			if (end == optarg || *end)
				return usage_error("--smooth: bad number '%s'", optarg);
			break;
		case OPT_SKEW:
			if (bb_duration_parse(optarg, &np.skew_window_ns) != 0)
				return usage_error("--skew-window: bad duration '%s'", optarg);
			break;
		case OPT_GLOBAL:
			np.global = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case OPT_VERSION:
			printf("bbreport (bb) %s\nGraphviz %s\njansson %s\n", BB_VERSION,
			       bb_viz_graphviz_version(), bb_viz_jansson_version());
			return 0;
		default:
			fprintf(stderr, "Try 'bbreport --help' for more information.\n");
			return 2;
		}
	}
	if (!outpath)
		return usage_error("%s", "-o FILE is required");
	if (argc - optind != 1)
		return usage_error("%s", "expected one trace");
	struct bb_err err = {{0}};
	if (bb_nest_params_check(&np, &err) != 0)
		return usage_error("%s", err.msg);
	const char *trace = argv[optind];
	struct bb_rep_series *ts = bb_rep_series_new();
	struct bb_rep_load_opts lo = {&np, NULL, bb_rep_series_add, ts};
	struct bb_rep_load_opts lb = {&np, NULL, NULL, NULL};
	struct bb_rep_run *run = bb_rep_load(trace, &lo, &err), *base = NULL;
	struct bb_rep_diff *d = NULL;
	int status = 1;
	if (!run) {
		fprintf(stderr, "%s: error: %s\n", prog, err.msg);
		goto done;
	}
	if (!bb_rep_is_trace(run)) {
		fprintf(stderr, "%s: error: %s: bbreport needs a trace (it reads the capture's "
		                "health and the requests over time from it)\n", prog, trace);
		goto done;
	}
	if (baseline) {
		struct bb_rep_diff_params dp;
		bb_rep_diff_params_init(&dp);
		if (!(base = bb_rep_load(baseline, &lb, &err)) ||
		    !(d = bb_rep_diff_new(bb_rep_patterns(base), bb_rep_patterns(run), &dp, &err))) {
			fprintf(stderr, "%s: error: %s\n", prog, err.msg);
			goto done;
		}
	}
	FILE *fo = strcmp(outpath, "-") == 0 ? stdout : fopen(outpath, "w");
	if (!fo) {
		fprintf(stderr, "%s: error: %s: %s\n", prog, outpath, strerror(errno));
		goto done;
	}
	int64_t mark = bb_out_mark(fo);
	int rc = bb_rep_html(fo, trace, run, ts, d, baseline, (size_t)top, &err);
	if (rc < 0)
		bb_out_cut(fo, mark);
	if (fo != stdout && fclose(fo) != 0 && rc == 0) {
		bb_err_set(&err, "%s", strerror(errno));
		rc = BB_ERR_IO;
	}
	if (rc < 0) {
		fprintf(stderr, "%s: error: %s: %s\n", prog, outpath, err.msg);
		goto done;
	}
	status = 0;
done:
	bb_rep_diff_free(d);
	bb_rep_run_free(base);
	bb_rep_run_free(run);
	bb_rep_series_free(ts);
	return status;
}

/* bbdiff.c - bbdiff: what got slower between a baseline run and a slow one, and where */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

static const char *prog = "bbdiff";

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
	        "nesting, for traces (as bbnest):\n"
	        "      --penalty X,Y,Z    child penalty exponents (default 2,0,0)\n"
	        "      --smooth SIGMA     Gaussian smoothing of the scoreboard, in bins\n"
	        "      --skew-window D    loosen nesting comparisons by D\n"
	        "      --global           choose all parents at once\n"
	        "  -h, --help             this help\n"
	        "      --version          version\n"
	        "Exit status: 0 when nothing changed, 3 when something did, 1 on failure, 2 on\n"
	        "a usage error.\n");
}

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "%s: ", prog);
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'bbdiff --help' for more information.\n");
	return 2;
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
	OPT_PENALTY,
	OPT_SMOOTH,
	OPT_SKEW,
	OPT_GLOBAL,
	OPT_VERSION,
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
	struct bb_rep_diff_params dp;
	bb_rep_diff_params_init(&dp);
	struct bb_nest_params np;
	bb_nest_params_init(&np);
	const char *outpath = NULL;
	int format = 't', c;
	double v;
	while ((c = getopt_long(argc, argv, "o:jh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			outpath = optarg;
			break;
		case 'j':
			format = 'j';
			break;
		case OPT_DOT:
			format = 'd';
			break;
		case OPT_ALPHA:
			if (parse_num(optarg, &v) != 0 || v <= 0 || v >= 1)
				return usage_error("--alpha: expected a number in (0, 1), not '%s'", optarg);
			dp.alpha = v;
			break;
		case OPT_MIN_DELTA:
			if (bb_duration_parse(optarg, &dp.min_delta_ns) != 0 || dp.min_delta_ns < 0)
				return usage_error("--min-delta: bad duration '%s'", optarg);
			break;
		case OPT_MIN_Z:
			if (parse_num(optarg, &v) != 0)
				return usage_error("--min-z: bad number '%s'", optarg);
			dp.min_z = v;
			break;
		case OPT_MIN_SHARE:
			if (parse_num(optarg, &v) != 0 || v > 1)
				return usage_error("--min-share: expected a number in [0, 1], not '%s'",
				                   optarg);
			dp.min_share = v;
			break;
		case OPT_MIN_COUNT:
			if (parse_num(optarg, &v) != 0 || v != (double)(uint64_t)v)
				return usage_error("--min-count: bad count '%s'", optarg);
			dp.min_count = (uint64_t)v;
			break;
		case OPT_PENALTY:
			if (sscanf(optarg, "%lf,%lf,%lf", &np.penalty_x, &np.penalty_y, &np.penalty_z) != 3)
				return usage_error("--penalty: expected X,Y,Z, not '%s'", optarg);
			break;
		case OPT_SMOOTH:
			if (parse_num(optarg, &v) != 0)
				return usage_error("--smooth: bad number '%s'", optarg);
			np.smooth_sigma = v;
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
			printf("bbdiff (bb) %s\nGraphviz %s\njansson %s\n", BB_VERSION,
			       bb_viz_graphviz_version(), bb_viz_jansson_version());
			return 0;
		default:
			fprintf(stderr, "Try 'bbdiff --help' for more information.\n");
			return 2;
		}
	}
	if (argc - optind != 2)
		return usage_error("%s", "expected two runs: BASE SLOW");
	struct bb_err err = {{0}};
	if (bb_nest_params_check(&np, &err) != 0)
		return usage_error("%s", err.msg);
	struct bb_rep_load_opts lo = {&np, NULL, NULL, NULL};
	struct bb_rep_run *base = bb_rep_load(argv[optind], &lo, &err), *slow = NULL;
	if (base)
		slow = bb_rep_load(argv[optind + 1], &lo, &err);
	struct bb_rep_diff *d = NULL;
	int status = 1;
	if (!base || !slow) {
		fprintf(stderr, "%s: error: %s\n", prog, err.msg);
		goto done;
	}
	d = bb_rep_diff_new(bb_rep_patterns(base), bb_rep_patterns(slow), &dp, &err);
	if (!d) {
		fprintf(stderr, "%s: error: %s\n", prog, err.msg);
		goto done;
	}
	FILE *fo = stdout;
	if (outpath && strcmp(outpath, "-") != 0 && !(fo = fopen(outpath, "w"))) {
		fprintf(stderr, "%s: error: %s: %s\n", prog, outpath, strerror(errno));
		goto done;
	}
	int rc = format == 'j'   ? bb_rep_diff_json(fo, d, &err)
	         : format == 'd' ? bb_rep_diff_dot(fo, d, &err)
	                         : bb_rep_diff_text(fo, d, &err);
	if (fo != stdout && fclose(fo) != 0 && rc == 0) {
		bb_err_set(&err, "%s", strerror(errno));
		rc = BB_ERR_IO;
	}
	if (rc < 0) {
		fprintf(stderr, "%s: error: %s: %s\n", prog, outpath ? outpath : "<stdout>", err.msg);
		goto done;
	}
	const struct bb_rep_change *ch;
	status = bb_rep_diff_changes(d, &ch) ? 3 : 0;
done:
	bb_rep_diff_free(d);
	bb_rep_run_free(base);
	bb_rep_run_free(slow);
	return status;
}

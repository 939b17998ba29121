/* bbnest.c - bbnest: causal path patterns of an RPC trace by the nesting algorithm */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nesting/nesting.h"
#include "traceio/traceio.h"

static const char *prog = "bbnest";

static void usage(FILE *out)
{
	fprintf(out,
	        "usage: bbnest [options] [TRACE]\n"
	        "Infers the causal path patterns of an RPC trace (TRACE, or standard input)\n"
	        "with the nesting algorithm and writes them as dot (default), JSON or text.\n"
	        "  bbnest trace.tr | dot -Tsvg > paths.svg\n"
	        "\n"
	        "output:\n"
	        "  -o, --output FILE         write to FILE instead of standard output\n"
	        "  -j, --json                JSON: patterns with distributions, params, stats\n"
	        "  -t, --text                an indented table for a terminal\n"
	        "      --dot                 Graphviz dot, one cluster per pattern (default)\n"
	        "      --no-bins             leave histogram bins out of the JSON\n"
	        "      --instances FILE      every path instance, one JSON object a line\n"
	        "      --otlp FILE           the instances as OpenTelemetry OTLP/JSON spans\n"
	        "      --otlp-endpoint URL   POST them to an OTLP/HTTP collector (/v1/traces)\n"
	        "  -R, --rank WHAT           rank by 'latency' (count x mean, default) or 'count'\n"
	        "  -k, --top N               keep the first N patterns (default all)\n"
	        "  -m, --min-count C         drop patterns seen fewer than C times\n"
	        "algorithm:\n"
	        "  -p, --penalty X,Y,Z       overlapping-, same- and generic-child penalty\n"
	        "                            exponents (default 2,0,0)\n"
	        "  -g, --smooth SIGMA        Gaussian smoothing of the scoreboard, in bins\n"
	        "      --score KIND          compare 'density' (mass per unit delay, default)\n"
	        "                            or the paper's raw bin 'mass'\n"
	        "      --density-mass M      a bin's density from the narrowest window of\n"
	        "                            bins around it holding M children's mass\n"
	        "                            (default 3; 0: each bin alone)\n"
	        "      --scoreboard KIND     delay histograms per 'edge' B->C, per 'caller'\n"
	        "                            A->B->C scaled by A->B's calls, or per A->B->C as in\n"
	        "                            the 'paper'; 'auto' (default): edge, or paper with\n"
	        "                            a skew window\n"
	        "      --return-score        also score each candidate by the delay from the\n"
	        "                            child's return to its own (needs the messages in\n"
	        "                            memory: see --memory)\n"
	        "      --reassign            a parent call takes at most as many children into\n"
	        "                            one callee as the call counts support; a child\n"
	        "                            may move another out of its best parent\n"
	        "      --global              choose all parents at once: the best assignment\n"
	        "                            under the child counts the call counts support\n"
	        "                            (needs the messages in memory: see --memory)\n"
	        "      --rounds N            --global: at most N rounds, each from the last\n"
	        "                            one's parents (default 10; fewer cost less CPU\n"
	        "                            and get more wrong at load)\n"
	        "      --sequence            measure a child from its candidate parent's latest\n"
	        "                            returned child, or its start when none (needs the\n"
	        "                            messages in memory)\n"
	        "      --greedy              the paper's choice: each child its best parent\n"
	        "                            alone, by the call-side delay (the default takes\n"
	        "                            --return-score --global when the messages fit in\n"
	        "                            memory)\n"
	        "      --no-content          ignore tok= and ctx= (shared identifiers and\n"
	        "                            propagated context): times alone decide\n"
	        "  -W, --skew-window SECONDS loosen nesting comparisons by this much (0.03, 30ms)\n"
	        "  -b, --bin-range MIN,MAX   histogram range (default 1us,2h)\n"
	        "      --bin-base B          ratio between bin edges (default 1.05)\n"
	        "      --timeout SECONDS     evict calls open longer than this (default 1h)\n"
	        "      --memory MB           keep up to MB of messages (16 bytes each, 24 with\n"
	        "                            --return-score) in memory for the second pass\n"
	        "                            instead of reading the trace again (default 256;\n"
	        "                            0: always read it twice)\n"
	        "ground truth (traces with path= attributes):\n"
	        "      --oracle              print the true patterns instead of inferred ones\n"
	        "      --truth               also score the inferred patterns against the truth\n"
	        "      --bound               with --truth: also the timing-only bound, the wrong\n"
	        "                            share of an assignment by the true delay\n"
	        "                            distributions and child counts (a reference)\n"
	        "input and messages:\n"
	        "      --lenient             skip bad lines (counted) instead of failing\n"
	        "  -q, --quiet               no progress or warnings on standard error\n"
	        "      --stats               print memory and CPU figures on standard error\n"
	        "  -h, --help                this help\n"
	        "  -V, --version             version, with the Graphviz and jansson in use\n"
	        "Standard input is copied to a temporary file: the algorithm reads its input twice\n"
	        "(or once, when its messages fit the --memory budget).\n");
}

static int parse_count(const char *s, uint64_t *out)
{
	char *end;
	if (!*s || *s == '-')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

static int parse_num(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end)
		return -1;
	*out = v;
	return 0;
}

static int parse_penalty(const char *s, struct bb_nest_params *p)
{
	double v[3];
	char buf[128];
	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	char *save = NULL, *tok = strtok_r(buf, ",", &save);
	int k = 0;
	for (; tok && k < 3; tok = strtok_r(NULL, ",", &save))
		if (parse_num(tok, &v[k++]) != 0)
			return -1;
	if (k != 3 || tok)
		return -1;
	p->penalty_x = v[0];
	p->penalty_y = v[1];
	p->penalty_z = v[2];
	return 0;
}

static int parse_range(const char *s, struct bb_nest_params *p)
{
	const char *comma = strchr(s, ',');
	char lo[64];
	if (!comma || (size_t)(comma - s) >= sizeof(lo))
		return -1;
	memcpy(lo, s, (size_t)(comma - s));
	lo[comma - s] = '\0';
	return bb_duration_parse(lo, &p->bin_min_ns) || bb_duration_parse(comma + 1, &p->bin_max_ns)
	               ? -1
	               : 0;
}

/* Progress on a terminal: each pass of a run over about `total` messages. */
struct prog {
	struct bb_progress *p;
	uint64_t total;
	int pass;
};

static void progress(void *ctx, int pass, uint64_t records)
{
	struct prog *g = ctx;
	if (pass != g->pass) {
		char phase[32];
		snprintf(phase, sizeof phase, "pass %d of 2", pass);
		bb_progress_phase(g->p, phase, g->total);
		g->pass = pass;
	}
	bb_progress_update(g->p, records, " messages");
}

/* --instances, --otlp: each instance as it completes */
struct inst_sink {
	struct bb_vinst_out *out;
	struct bb_err err;
	int rc;
};

static int on_instance(void *ctx, const struct bb_vinstance *in)
{
	struct inst_sink *s = ctx;
	s->rc = bb_viz_inst_out_write(s->out, in, &s->err);
	return s->rc;
}

/* The algorithm reads its input twice: standard input and pipes are copied to
 * a temporary file first. Returns the stream to read, or NULL. */
static FILE *open_input(const char *path, int *spooled)
{
	struct bb_err err = {{0}};
	/* a .gz or .zst trace is decompressed as it is read (and rewound) */
	FILE *in = bb_tio_open_read(path, NULL, &err);
	*spooled = 0;
	if (!in) {
		fprintf(stderr, "%s: error: %s\n", prog, err.msg);
		return NULL;
	}
	if (in != stdin && fseek(in, 0, SEEK_SET) == 0)
		return in;
	FILE *tmp = tmpfile();
	if (!tmp) {
		fprintf(stderr, "%s: error: cannot create a temporary file: %s\n", prog,
		        strerror(errno));
		if (in != stdin)
			fclose(in);
		return NULL;
	}
	char buf[1 << 16];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, tmp) != n) {
			fprintf(stderr, "%s: error: temporary file: %s\n", prog, strerror(errno));
			fclose(tmp);
			if (in != stdin)
				fclose(in);
			return NULL;
		}
	int bad = ferror(in);
	if (in != stdin)
		fclose(in);
	if (bad || fflush(tmp) != 0 || fseek(tmp, 0, SEEK_SET) != 0) {
		fprintf(stderr, "%s: error: %s: read error\n", prog, path);
		fclose(tmp);
		return NULL;
	}
	*spooled = 1;
	return tmp;
}

/* --stats: how each run went and what it cost, for benchmarks. The heap
 * figure is the paper's "data space allocated"; max RSS also counts code,
 * libraries and the mapped trace pages. */
static void print_stats(const struct bb_nest *inf, const struct bb_nest *orc)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	fflush(stdout);
	const struct bb_nest *runs[2] = {inf, orc};
	size_t heap = 0;
	for (int i = 0; i < 2; i++) {
		if (!runs[i])
			continue;
		struct bb_nest_stats st;
		bb_nest_get_stats(runs[i], &st);
		if (st.heap_peak > heap)
			heap = st.heap_peak;
		fprintf(stderr, "%s: stats: %s: pass 2 %s, peak open calls %zu\n", prog,
		        i ? "oracle" : "inferred",
		        st.replayed ? "replayed from memory" : "read the trace again", st.peak_open);
	}
	fprintf(stderr,
	        "%s: stats: heap_peak_bytes %zu max_rss_kb %ld cpu_user_s %.6f cpu_sys_s %.6f\n",
	        prog, heap, ru.ru_maxrss, (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
	        (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
}

enum {
	OPT_DOT = 256,
	OPT_NO_BINS,
	OPT_BIN_BASE,
	OPT_SCORE,
	OPT_DENSITY_MASS,
	OPT_SCOREBOARD,
	OPT_TIMEOUT,
	OPT_ORACLE,
	OPT_TRUTH,
	OPT_BOUND,
	OPT_LENIENT,
	OPT_MEMORY,
	OPT_RETURN_SCORE,
	OPT_REASSIGN,
	OPT_GLOBAL,
	OPT_ROUNDS,
	OPT_NO_CONTENT,
	OPT_GREEDY,
	OPT_SEQUENCE,
	OPT_STATS,
	OPT_VERSION,
	OPT_INSTANCES,
	OPT_OTLP,
	OPT_OTLP_ENDPOINT,
};

static const struct option longopts[] = {
	{"output", required_argument, NULL, 'o'},
	{"json", no_argument, NULL, 'j'},
	{"text", no_argument, NULL, 't'},
	{"dot", no_argument, NULL, OPT_DOT},
	{"no-bins", no_argument, NULL, OPT_NO_BINS},
	{"rank", required_argument, NULL, 'R'},
	{"top", required_argument, NULL, 'k'},
	{"min-count", required_argument, NULL, 'm'},
	{"penalty", required_argument, NULL, 'p'},
	{"smooth", required_argument, NULL, 'g'},
	{"skew-window", required_argument, NULL, 'W'},
	{"bin-range", required_argument, NULL, 'b'},
	{"bin-base", required_argument, NULL, OPT_BIN_BASE},
	{"score", required_argument, NULL, OPT_SCORE},
	{"density-mass", required_argument, NULL, OPT_DENSITY_MASS},
	{"scoreboard", required_argument, NULL, OPT_SCOREBOARD},
	{"timeout", required_argument, NULL, OPT_TIMEOUT},
	{"oracle", no_argument, NULL, OPT_ORACLE},
	{"truth", no_argument, NULL, OPT_TRUTH},
	{"bound", no_argument, NULL, OPT_BOUND},
	{"lenient", no_argument, NULL, OPT_LENIENT},
	{"memory", required_argument, NULL, OPT_MEMORY},
	{"return-score", no_argument, NULL, OPT_RETURN_SCORE},
	{"reassign", no_argument, NULL, OPT_REASSIGN},
	{"global", no_argument, NULL, OPT_GLOBAL},
	{"rounds", required_argument, NULL, OPT_ROUNDS},
	{"no-content", no_argument, NULL, OPT_NO_CONTENT},
	{"greedy", no_argument, NULL, OPT_GREEDY},
	{"sequence", no_argument, NULL, OPT_SEQUENCE},
	{"stats", no_argument, NULL, OPT_STATS},
	{"quiet", no_argument, NULL, 'q'},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{"instances", required_argument, NULL, OPT_INSTANCES},
	{"otlp", required_argument, NULL, OPT_OTLP},
	{"otlp-endpoint", required_argument, NULL, OPT_OTLP_ENDPOINT},
	{NULL, 0, NULL, 0},
};

/* An option that needs the trace in memory was not used. */
static void warn_unused(const char *name, const char *opt, const char *what)
{
	fprintf(stderr, "%s: warning: %s: %s not used: the %s do not fit the --memory budget\n",
	        prog, name, opt, what);
}

/* Runs one nesting object over in; prints the error and returns the exit
 * status on failure, 0 on success. */
static int run_one(struct bb_nest *n, FILE *in, const char *name,
                   const struct bb_reader_opts *ro, int show_progress)
{
	struct bb_err err = {{0}};
	struct prog g = {NULL, 0, 0};
	if (show_progress) {
		g.p = bb_progress_new(stderr, prog);
		g.total = bb_progress_estimate_lines(in);
		bb_nest_set_progress(n, progress, &g);
	}
	if (fseek(in, 0, SEEK_SET) != 0) {
		fprintf(stderr, "%s: error: %s: cannot rewind: %s\n", prog, name, strerror(errno));
		return 1;
	}
	int rc = bb_nest_run_stream(n, in, name, ro, &err);
	bb_nest_set_progress(n, NULL, NULL);
	bb_progress_free(g.p);
	if (rc < 0) {
		fprintf(stderr, "%s: error: %s\n", prog, err.msg);
		return rc == BB_ERR_PARSE ? 2 : 1;
	}
	return 0;
}

/* What the command line asks for. */
struct opts {
	struct bb_nest_params p;
	struct bb_reader_opts ro;
	const char *outpath;
	int format; /* 'd'ot, 'j'son, 't'ext */
	int oracle, truth, bound, quiet, stats;
	const char *inst_path[3]; /* --instances, --otlp, --otlp-endpoint */
	const char *path, *name;  /* the trace ("-": standard input) and its name */
};

/* One of the words in words (NULL-terminated): its index, or -1. */
static int word_of(const char *s, const char *const *words)
{
	for (int i = 0; words[i]; i++)
		if (strcmp(s, words[i]) == 0)
			return i;
	return -1;
}

/* An option of the algorithm that takes a value (arg); returns 0, or the
 * usage error's exit status. */
static int algorithm_option(int c, const char *arg, struct bb_nest_params *p)
{
	static const char *const scores[] = {"mass", "density", NULL};
	static const char *const boards[] = {"auto", "edge", "caller", "paper", NULL};
	static const enum bb_nest_scoreboard board_kinds[] = {BB_NEST_SB_AUTO, BB_NEST_SB_EDGE,
	                                                      BB_NEST_SB_CALLER, BB_NEST_SB_PAPER};
	double d;
	uint64_t u;
	int w;
	switch (c) {
	case 'p':
		if (parse_penalty(arg, p) != 0)
			return bb_usage_error(prog, "--penalty: expected X,Y,Z, not '%s'", arg);
		return 0;
	case 'g':
		if (parse_num(arg, &d) != 0)
			return bb_usage_error(prog, "--smooth: bad number '%s'", arg);
		p->smooth_sigma = d;
		return 0;
	case 'W':
		if (bb_duration_parse(arg, &p->skew_window_ns) != 0)
			return bb_usage_error(prog, "--skew-window: bad duration '%s'", arg);
		return 0;
	case 'b':
		if (parse_range(arg, p) != 0)
			return bb_usage_error(
			    prog, "--bin-range: expected MIN,MAX durations, not '%s'", arg);
		return 0;
	case OPT_BIN_BASE:
		if (parse_num(arg, &d) != 0)
			return bb_usage_error(prog, "--bin-base: bad number '%s'", arg);
		p->bin_base = d;
		return 0;
	case OPT_DENSITY_MASS:
		if (parse_num(arg, &d) != 0)
			return bb_usage_error(prog, "--density-mass: bad number '%s'", arg);
		p->density_mass = d;
		return 0;
	case OPT_SCORE:
		if ((w = word_of(arg, scores)) < 0)
			return bb_usage_error(
			    prog, "--score: expected 'density' or 'mass', not '%s'", arg);
		p->score_density = w;
		return 0;
	case OPT_SCOREBOARD:
		if ((w = word_of(arg, boards)) < 0)
			return bb_usage_error(prog,
			                      "--scoreboard: expected 'auto', 'edge', 'caller' or "
			                      "'paper', not '%s'",
			                      arg);
		p->scoreboard = board_kinds[w];
		return 0;
	case OPT_TIMEOUT:
		if (bb_duration_parse(arg, &p->open_timeout_ns) != 0)
			return bb_usage_error(prog, "--timeout: bad duration '%s'", arg);
		return 0;
	case OPT_ROUNDS:
		if (parse_count(arg, &u) != 0 || u < 1 || u > BB_NEST_ROUNDS_MAX)
			return bb_usage_error(prog, "--rounds: expected 1 to %d, not '%s'",
			                      BB_NEST_ROUNDS_MAX, arg);
		p->rounds = (unsigned)u;
		return 0;
	case OPT_MEMORY:
		if (parse_count(arg, &u) != 0 || u > ((uint64_t)SIZE_MAX >> 20))
			return bb_usage_error(prog, "--memory: bad size in MB '%s'", arg);
		p->memory_bytes = (size_t)u << 20;
		return 0;
	}
	return bb_usage_error(prog, "unknown option (%d)", c);
}

/* An option of the output that takes a value (arg); returns 0, or the usage
 * error's exit status. */
static int output_option(int c, const char *arg, struct opts *o)
{
	static const char *const ranks[] = {"latency", "count", NULL};
	static const enum bb_nest_rank rank_kinds[] = {BB_NEST_RANK_LATENCY, BB_NEST_RANK_COUNT};
	uint64_t u;
	int w;
	switch (c) {
	case 'o':
		o->outpath = arg;
		return 0;
	case 'R':
		if ((w = word_of(arg, ranks)) < 0)
			return bb_usage_error(
			    prog, "--rank: expected 'latency' or 'count', not '%s'", arg);
		o->p.rank = rank_kinds[w];
		return 0;
	case 'k':
		if (parse_count(arg, &u) != 0)
			return bb_usage_error(prog, "--top: bad count '%s'", arg);
		o->p.top = (size_t)u;
		return 0;
	case 'm':
		if (parse_count(arg, &u) != 0)
			return bb_usage_error(prog, "--min-count: bad count '%s'", arg);
		o->p.min_count = u;
		return 0;
	case OPT_INSTANCES:
		o->inst_path[0] = arg;
		return 0;
	case OPT_OTLP:
		o->inst_path[1] = arg;
		return 0;
	case OPT_OTLP_ENDPOINT:
		o->inst_path[2] = arg;
		return 0;
	}
	return algorithm_option(c, arg, &o->p);
}

/* An option without a value; returns 1 when c is not one. */
static int flag_option(int c, struct opts *o)
{
	switch (c) {
	case 'j':
	case 't':
		o->format = c;
		break;
	case OPT_DOT:
		o->format = 'd';
		break;
	case OPT_NO_BINS:
		o->p.bins_in_output = 0;
		break;
	case OPT_ORACLE:
		o->oracle = 1;
		break;
	case OPT_TRUTH:
		o->truth = 1;
		break;
	case OPT_BOUND:
		o->bound = 1;
		break;
	case OPT_LENIENT:
		o->ro.lenient = 1;
		break;
	case OPT_RETURN_SCORE:
		o->p.return_score = 1;
		break;
	case OPT_REASSIGN:
		o->p.reassign = 1;
		break;
	case OPT_GLOBAL:
		o->p.global = 1;
		break;
	case OPT_NO_CONTENT:
		o->p.content = 0;
		break;
	case OPT_GREEDY:
		o->p.return_score = o->p.global = 0;
		break;
	case OPT_SEQUENCE:
		o->p.sequence = 1;
		break;
	case OPT_STATS:
		o->stats = 1;
		break;
	case 'q':
		o->quiet = 1;
		break;
	default:
		return 1;
	}
	return 0;
}

static void version(void)
{
	printf("bbnest (bb) %s\nGraphviz %s\njansson %s\n", BB_VERSION, bb_viz_graphviz_version(),
	       bb_viz_jansson_version());
	char z[128];
	bb_tio_lib_versions(z, sizeof z);
	printf("%s\n", z);
}

/* Parses the command line into o; returns -1 to go on, or the exit status
 * (0 after --help and --version, 2 after a usage error). */
static int parse_args(int argc, char **argv, struct opts *o)
{
	int c;
	bb_nest_params_init(&o->p);
	o->format = 'd';
	while ((c = getopt_long(argc, argv, "o:jtR:k:m:p:g:W:b:qhV", longopts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return 0;
		}
		if (c == 'V') {
			version();
			return 0;
		}
		if (c == '?' || c == ':') {
			/* getopt has named the option */
			fprintf(stderr, "Try '%s --help' for more information.\n", prog);
			return 2;
		}
		int rc = flag_option(c, o) == 0 ? 0 : output_option(c, optarg, o);
		if (rc)
			return rc;
	}
	if (argc - optind > 1)
		return bb_usage_error(prog, "one trace at most, got '%s' too", argv[optind + 1]);
	if (o->bound && !o->truth)
		return bb_usage_error(prog, "--bound needs --truth (it learns from the path= "
		                            "attributes)");
	struct bb_err err = {{0}};
	if (bb_nest_params_check(&o->p, &err) != 0)
		return bb_usage_error(prog, "%s", err.msg);
	o->path = optind < argc ? argv[optind] : "-";
	o->name = strcmp(o->path, "-") == 0 ? "<stdin>" : o->path;
	return -1;
}

/* The runs of one command: the inferred patterns, the true ones, the bound. */
struct runs {
	struct bb_nest *inf, *orc, *bnd;
	struct bb_nest_accuracy ab; /* the bound's accuracy, when bound_used */
	int bound_used;
};

/* --bound: the timing-only bound, its own run, parents from the truth's
 * delay distributions and child counts. Returns the exit status. */
static int run_bound(const struct opts *o, struct runs *r, FILE *in, int show)
{
	struct bb_nest_params bp = o->p;
	bp.bound = 1;
	bp.return_score = bp.reassign = bp.global = 0;
	r->bnd = bb_nest_new(&bp, BB_NEST_INFER);
	int status = run_one(r->bnd, in, o->name, &o->ro, show);
	struct bb_nest_stats sb;
	bb_nest_get_stats(r->bnd, &sb);
	r->bound_used = !status && sb.bound_used;
	if (r->bound_used) {
		bb_nest_compare(r->bnd, r->orc, &r->ab);
		bb_nest_set_bound(o->oracle ? r->orc : r->inf, &r->ab);
	} else if (!status && !o->quiet && sb.children && !sb.replayed) {
		warn_unused(o->name, "--bound", "messages or candidates");
	} else if (!status && !o->quiet && sb.children) {
		fprintf(stderr,
		        "%s: warning: %s: --bound not used: no call has its true parent "
		        "(path=) among its candidates\n",
		        prog, o->name);
	}
	return status;
}

/* The runs o asks for, over in; instances go to sink. Returns the exit status. */
static int run_all(const struct opts *o, struct runs *r, FILE *in, struct inst_sink *sink)
{
	int show = !o->quiet && isatty(STDERR_FILENO);
	int status = 0;
	if (!o->oracle || o->truth) {
		r->inf = bb_nest_new(&o->p, BB_NEST_INFER);
		if (sink->out && !o->oracle)
			bb_nest_set_instances(r->inf, on_instance, sink);
		status = run_one(r->inf, in, o->name, &o->ro, show);
	}
	if (!status && (o->oracle || o->truth)) {
		r->orc = bb_nest_new(&o->p, BB_NEST_ORACLE);
		if (sink->out && o->oracle)
			bb_nest_set_instances(r->orc, on_instance, sink);
		status = run_one(r->orc, in, o->name, &o->ro, show);
		struct bb_nest_stats st;
		bb_nest_get_stats(r->orc, &st);
		if (!status && !o->quiet && st.calls && st.no_path == st.calls)
			fprintf(stderr,
			        "%s: warning: %s has no path= attributes: every call is its "
			        "own true path\n",
			        prog, o->name);
	}
	if (!status && o->bound)
		status = run_bound(o, r, in, show);
	return status;
}

/* Closes the instance output; returns the exit status it makes. */
static int close_sink(struct inst_sink *sink, int status)
{
	if (!sink->out)
		return status;
	int rc = sink->rc < 0 ? sink->rc : bb_viz_inst_out_close(sink->out, &sink->err);
	if (sink->rc < 0)
		bb_viz_inst_out_close(sink->out, NULL);
	sink->out = NULL;
	if (rc < 0 && !status) {
		fprintf(stderr, "%s: error: %s\n", prog, sink->err.msg);
		status = 1;
	}
	return status;
}

/* Warnings about the shown run: skipped lines, options the budget refused. */
static void warn_run(const struct opts *o, const struct runs *r, const struct bb_nest *shown)
{
	struct bb_nest_stats st;
	bb_nest_get_stats(shown, &st);
	if (st.skipped && !o->quiet)
		fprintf(stderr, "%s: warning: %s: skipped %llu bad lines\n", prog, o->name,
		        (unsigned long long)st.skipped);
	if (r->inf && !o->quiet) {
		struct bb_nest_stats si;
		bb_nest_get_stats(r->inf, &si);
		if (o->p.return_score == 1 && !si.return_scored && si.children)
			warn_unused(o->name, "--return-score", "messages");
		if (o->p.global == 1 && !si.global_used && si.children)
			warn_unused(o->name, "--global", "messages or candidates");
		if (si.global_refine_stopped)
			fprintf(stderr,
			        "%s: note: %s: the refinement of the callee sequences stopped at its "
			        "budget in %llu of %llu rounds (parents hardly told apart: see the "
			        "count intervals)\n",
			        prog, o->name, (unsigned long long)si.global_refine_stopped,
			        (unsigned long long)si.global_rounds);
		const struct bb_nest_cap *c;
		size_t nc = bb_nest_assumed_caps(r->inf, &c);
		for (size_t i = 0; i < nc; i++)
			fprintf(stderr,
			        "%s: note: %s: assumed that every call into %s makes %u call%s (its "
			        "%llu calls made %llu, %llu of them seen with all their calls sure)\n",
			        prog, o->name, c[i].node, c[i].children, c[i].children == 1 ? "" : "s",
			        (unsigned long long)c[i].calls,
			        (unsigned long long)c[i].calls * c[i].children,
			        (unsigned long long)c[i].calls_sure);
	}
}

/* Writes the patterns (with the accuracy, for --truth) in o's format to its
 * output. Returns the exit status. */
static int write_patterns(const struct opts *o, const struct runs *r)
{
	struct bb_err err = {{0}};
	struct bb_nest *shown = o->oracle ? r->orc : r->inf;
	struct bb_vpatterns out = *bb_nest_patterns(shown);
	struct bb_vval *acc = NULL;
	if (o->truth) {
		struct bb_nest_accuracy a;
		bb_nest_compare(r->inf, r->orc, &a);
		acc = bb_nest_accuracy_vval(&a);
		if (r->bound_used)
			bb_vval_set(acc, "bound", bb_nest_accuracy_vval(&r->ab));
		out.accuracy = acc;
	}
	warn_run(o, r, shown);
	FILE *fo = stdout;
	if (o->outpath && strcmp(o->outpath, "-") != 0 && !(fo = fopen(o->outpath, "w"))) {
		fprintf(stderr, "%s: error: %s: %s\n", prog, o->outpath, strerror(errno));
		bb_vval_free(acc);
		return 1;
	}
	int64_t mark = bb_out_mark(fo);
	int rc = o->format == 'j'   ? bb_viz_patterns_json(fo, &out, &err)
	         : o->format == 't' ? bb_viz_patterns_text(fo, &out, &err)
	                            : bb_viz_patterns_dot(fo, &out, &err);
	if (rc < 0)
		bb_out_cut(fo, mark); /* a full disk leaves no torn document */
	if (fo != stdout && fclose(fo) != 0 && rc == 0) {
		bb_err_set(&err, "%s", strerror(errno));
		rc = BB_ERR_IO;
	}
	bb_vval_free(acc);
	if (rc < 0) {
		fprintf(stderr, "%s: error: %s: %s\n", prog, o->outpath ? o->outpath : "<stdout>",
		        err.msg);
		return 1;
	}
	return 0;
}

/* The run allocates and frees the same large arrays again and again (the
 * replays' stages, --global's rounds): freed memory stays in the heap and
 * serves the next one without page faults, where glibc would unmap it and
 * map it anew. Table 1's normal trace: 9,100 page faults become 6,700 and
 * CPU falls by a fifth. No block is mapped on its own (M_MMAP_MAX 0): those
 * over 32 MiB (the records, the candidates and the flow network of a
 * 2,000,000-message trace) were mapped and zeroed again each round
 * (table1-long: 2.0-2.1 s user -> 1.64-1.68 s). The heap in use (--stats)
 * is the same. */
static void heap_policy(void)
{
#if defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
#ifdef M_MMAP_MAX
	mallopt(M_MMAP_MAX, 0);
#endif
#endif
}

/* A trace whose messages the run keeps in memory (its file within the
 * --memory budget) makes a heap of two to three times the file's size
 * (the records, the replays' calls, --global's candidates and network).
 * That much is taken from the system at once and handed back to malloc,
 * asked to be backed by transparent huge pages: the heap then grows into
 * it with one page fault per 2 MiB instead of one per 4 KiB, and fewer TLB
 * misses. Table 1's normal trace: 5,400 page faults become 300-600, user +
 * system CPU 0.21 -> 0.15 s; par-low 0.60 -> 0.39 s.
 * It stays below M_TRIM_THRESHOLD, so free() keeps it; only what the run
 * touches is resident.
 * Only whole huge pages can be: the heap began wherever the break was, and
 * the part of the reserve before the first huge page's start (up to 2 MiB,
 * as the address space was laid out) went by 4 KiB faults, most of the heap
 * of a small trace (table1-short: 180 to 530 page faults from run to run).
 * So before the first malloc the break moves on to a huge page's start
 * (heap_align: malloc begins its heap there, and counts nothing below it as
 * in use), the reserve ends on one, and the first huge page, which already
 * holds what was allocated before the reserve (so its faults would take
 * 4 KiB pages), is collapsed into a huge page at once (MADV_COLLAPSE, Linux
 * 6.1; elsewhere a hint that fails). table1-short: 135-137 page faults
 * every run. */
#define HEAP_RESERVE_MAX ((size_t)224 << 20)
#define HUGE_PAGE ((uintptr_t)2 << 20)
#if defined(__linux__) && !defined(MADV_COLLAPSE)
#define MADV_COLLAPSE 25
#endif

static uintptr_t heap_start; /* the heap's first huge page, or 0: unknown */

static void heap_align(void)
{
#if defined(MADV_HUGEPAGE) && defined(__GLIBC__) && \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
	if (mallinfo2().arena != 0)
		return; /* a heap already: what lies below the break is in use */
	void *brk0 = sbrk(0);
	if (brk0 == (void *)-1)
		return;
	uintptr_t c = (uintptr_t)brk0, up = (c + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	if (up == c || sbrk((intptr_t)(up - c)) != (void *)-1)
		heap_start = up;
#endif
}

static void heap_reserve(FILE *in, size_t budget)
{
#if defined(MADV_HUGEPAGE) && defined(M_TRIM_THRESHOLD)
	struct stat sb;
	int fd = fileno(in);
	if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size <= 0 ||
	    (uint64_t)sb.st_size > budget)
		return;
	const uintptr_t huge = HUGE_PAGE;
	size_t want = (size_t)sb.st_size * 3;
	want = want < HEAP_RESERVE_MAX ? want : HEAP_RESERVE_MAX;
	want += huge; /* so that it ends on a huge page's end */
	char *p = malloc(want);
	if (!p)
		return;
	uintptr_t a = ((uintptr_t)p + huge - 1) & ~(huge - 1);
	if (heap_start && (uintptr_t)p >= heap_start && (uintptr_t)p < (uintptr_t)sbrk(0))
		a = (uintptr_t)p & ~(huge - 1); /* in the heap: its first huge page too */
	uintptr_t b = ((uintptr_t)p + want) & ~(huge - 1);
	if (b > a) {
		(void)madvise((void *)a, b - a, MADV_HUGEPAGE);
#ifdef MADV_COLLAPSE
		if (a < (uintptr_t)p)
			(void)madvise((void *)a, huge, MADV_COLLAPSE);
#endif
	}
	free(p);
#else
	(void)in;
	(void)budget;
#endif
}

int main(int argc, char **argv)
{
	heap_align();
	heap_policy();
	struct opts o = {0};
	int status = parse_args(argc, argv, &o);
	if (status >= 0)
		return status;
	int spooled;
	FILE *in = open_input(o.path, &spooled);
	if (!in)
		return 1;
	heap_reserve(in, o.p.memory_bytes);
	struct inst_sink sink = {NULL, {{0}}, 0};
	struct bb_err err = {{0}};
	if ((o.inst_path[0] || o.inst_path[1] || o.inst_path[2]) &&
	    !(sink.out =
	          bb_viz_inst_out_new(o.inst_path[0], o.inst_path[1], o.inst_path[2], &err))) {
		fprintf(stderr, "%s: error: %s\n", prog, err.msg);
		if (in != stdin)
			fclose(in);
		return 1;
	}
	struct runs r = {0};
	status = run_all(&o, &r, in, &sink);
	if (in != stdin)
		fclose(in);
	status = close_sink(&sink, status);
	if (!status)
		status = write_patterns(&o, &r);
	if (o.stats && !status)
		print_stats(r.inf, r.orc);
	bb_nest_free(r.inf);
	bb_nest_free(r.orc);
	bb_nest_free(r.bnd);
	(void)spooled;
	return status;
}

/* maketrace.c - maketrace: write a synthetic tracelet trace with ground-truth path ids */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "maketrace/maketrace.h"
#include "traceio/traceio.h"

#define PROG "maketrace"

static const char usage_text[] =
	"usage: maketrace [options] CONFIG\n"
	"Write a synthetic trace from the tracelets in the JSON file CONFIG\n"
	"(docs/maketrace.md). The same config and seed give the same bytes.\n"
	"\n"
	"  -o, --output FILE       write the trace to FILE (default: standard output)\n"
	"  -S, --seed N            use seed N instead of the config's\n"
	"  -N, --messages N        stop after N generated messages (0: no limit)\n"
	"  -d, --duration D        start no instance after D (seconds, or 10ms, 5m...; 0: no limit)\n"
	"      --no-ids            write \"-\" instead of call ids\n"
	"      --capture-rate R    sniffer loss model: capture R messages/s (0: off)\n"
	"      --queue N           sniffer queue length in messages (default 64)\n"
	"      --drop P            drop each message with probability P\n"
	"      --skew NODE=S       NODE's clock is S seconds ahead (repeatable)\n"
	"      --drift NODE=PPM    NODE's clock drifts PPM parts per million (repeatable)\n"
	"  -I, --summary           print messages, nodes, edges, instances, parallelism and\n"
	"                          drops to standard error when done\n"
	"  -q, --quiet             no progress report\n"
	"  -h, --help              show this help\n"
	"  -V, --version           show the version\n";

enum {
	OPT_NO_IDS = 256,
	OPT_RATE,
	OPT_QUEUE,
	OPT_DROP,
	OPT_SKEW,
	OPT_DRIFT,
};

static const struct option long_opts[] = {
	{"output", required_argument, NULL, 'o'},
	{"seed", required_argument, NULL, 'S'},
	{"messages", required_argument, NULL, 'N'},
	{"duration", required_argument, NULL, 'd'},
	{"no-ids", no_argument, NULL, OPT_NO_IDS},
	{"capture-rate", required_argument, NULL, OPT_RATE},
	{"queue", required_argument, NULL, OPT_QUEUE},
	{"drop", required_argument, NULL, OPT_DROP},
	{"skew", required_argument, NULL, OPT_SKEW},
	{"drift", required_argument, NULL, OPT_DRIFT},
	{"summary", no_argument, NULL, 'I'},
	{"quiet", no_argument, NULL, 'q'},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	if (!*s || *s == '-')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (*end || errno)
		return -1;
	*out = v;
	return 0;
}

static int parse_double(const char *s, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (!*s || *end || errno || !isfinite(v) || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static void progress(void *ctx, uint64_t generated)
{
	bb_progress_update(ctx, generated, " messages");
}

static void print_summary(const struct bb_mt_summary *s)
{
	char a[BB_TIME_BUFSZ], b[BB_TIME_BUFSZ];
	fprintf(stderr, "maketrace: seed %" PRIu64 "\n", s->seed);
	fprintf(stderr, "maketrace: %" PRIu64 " messages, %" PRIu32 " nodes, %" PRIu64 " edges\n",
	        s->written, s->nodes, s->edges);
	if (s->written) {
		bb_time_format(s->first_ns, a);
		bb_time_format(s->last_ns - s->first_ns, b);
		fprintf(stderr, "maketrace: from %s for %s s\n", a, b);
	}
	for (uint32_t i = 0; i < s->ntracelets; i++)
		fprintf(stderr, "maketrace: tracelet %s: %" PRIu64 " path instances\n",
		        s->tracelet_names[i], s->instances[i]);
	if (s->child_calls)
		fprintf(stderr, "maketrace: mean per-node parallelism %.3f over %" PRIu64
		        " nested calls\n", s->parallelism, s->child_calls);
	else
		fprintf(stderr, "maketrace: no nested calls (mean per-node parallelism 0)\n");
	if (s->internal_nodes)
		fprintf(stderr, "maketrace: mean open calls %.3f per internal node (%" PRIu32
		        " nodes)\n", s->open_calls, s->internal_nodes);
	if (s->pool_calls)
		fprintf(stderr, "maketrace: worker pools: %" PRIu64 " of %" PRIu64 " calls waited, "
		        "mean wait %.3f ms, longest %.3f ms\n", s->pool_waited, s->pool_calls,
		        s->pool_lag_mean_ns / 1e6, (double)s->pool_lag_max_ns / 1e6);
	if (s->loss)
		fprintf(stderr, "maketrace: dropped %" PRIu64 " of %" PRIu64 " messages (%.3f%%): "
		        "%" PRIu64 " by the sniffer queue, %" PRIu64 " at random\n",
		        s->dropped_queue + s->dropped_random, s->generated,
		        s->generated ? 100.0 * (double)(s->dropped_queue + s->dropped_random) /
		                               (double)s->generated : 0.0,
		        s->dropped_queue, s->dropped_random);
}

/* What the command line asks for. */
struct cli {
	struct bb_mt_opts o;
	struct bb_mt_skew *skew; /* --skew and --drift */
	const char *output, *path;
	int summary, quiet;
};

/* An option that sets a generator option: 0, or 2 after a usage error. */
static int gen_option(struct cli *cl, int c, const char *arg)
{
	struct bb_mt_opts *o = &cl->o;
	struct bb_err err = {{0}};
	uint64_t q;
	switch (c) {
	case 'S':
		if (parse_u64(arg, &o->seed) != 0)
			return bb_usage_error(PROG, "--seed: bad number \"%s\"", arg);
		o->set_seed = 1;
		break;
	case 'N':
		if (parse_u64(arg, &o->messages) != 0)
			return bb_usage_error(PROG, "--messages: bad number \"%s\"", arg);
		o->set_messages = 1;
		break;
	case 'd':
		if (bb_duration_parse(arg, &o->duration_ns) != 0 || o->duration_ns < 0)
			return bb_usage_error(PROG, "--duration: bad duration \"%s\"", arg);
		o->set_duration = 1;
		break;
	case OPT_NO_IDS:
		o->no_ids = 1;
		break;
	case OPT_RATE:
		if (parse_double(arg, 0, 1e12, &o->capture_rate) != 0)
			return bb_usage_error(PROG, "--capture-rate: bad rate \"%s\"", arg);
		o->set_capture_rate = 1;
		break;
	case OPT_QUEUE:
		if (parse_u64(arg, &q) != 0 || q < 1 || q > 1000000000)
			return bb_usage_error(PROG, "--queue: bad length \"%s\"", arg);
		o->queue = (uint32_t)q;
		o->set_queue = 1;
		break;
	case OPT_DROP:
		if (parse_double(arg, 0, 1, &o->probability) != 0)
			return bb_usage_error(PROG, "--drop: bad probability \"%s\"", arg);
		o->set_probability = 1;
		break;
	case OPT_SKEW:
	case OPT_DRIFT:
		if (bb_mt_skew_parse_arg(cl->skew, arg, c == OPT_DRIFT, &err) != 0)
			return bb_usage_error(PROG, "%s: %s", c == OPT_DRIFT ? "--drift" : "--skew",
			                      err.msg);
		break;
	}
	return 0;
}

/* Parses argv into cl: -1 to go on, else the exit status (help, version, a
 * usage error). */
static int parse_args(int argc, char **argv, struct cli *cl)
{
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:S:N:d:IqhV", long_opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			cl->output = optarg;
			break;
		case 'I':
			cl->summary = 1;
			break;
		case 'q':
			cl->quiet = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case 'V': {
			char z[128];
			bb_tio_lib_versions(z, sizeof z);
			printf("maketrace (bb) %s, jansson %s, %s\n", BB_VERSION, bb_mt_json_version(), z);
			return 0;
		}
		case ':':
		case '?':
			return bb_usage_getopt(PROG, c, optopt, argv[optind - 1]);
		default:
			if (gen_option(cl, c, optarg) != 0)
				return 2;
		}
	}
	if (optind + 1 != argc)
		return bb_usage_error(PROG, "%s",
		                      optind == argc ? "no CONFIG given" : "one CONFIG only");
	cl->path = argv[optind];
	return -1;
}

/* Runs g into the trace at output: 0, or 1 with err set. */
static int generate(struct bb_mt_gen *g, const char *output, struct bb_progress *prog,
                    struct bb_err *err)
{
	struct bb_writer *w = bb_tio_writer_open(output, err);
	if (!w)
		return 1;
	int rc = bb_mt_gen_run(g, w, err);
	bb_progress_end(prog);
	if (rc) {
		bb_writer_close(w, NULL);
		return 1;
	}
	return bb_writer_close(w, err) != 0;
}

/* Loads the config, generates the trace and writes it: the exit status. */
static int run(struct cli *cl)
{
	struct bb_err err = {{0}};
	struct bb_mt_config *cfg = NULL;
	struct bb_mt_gen *g = NULL;
	struct bb_progress *prog = NULL;
	int status = 0;
	int rc = bb_mt_config_load(cl->path, &cfg, &err);
	if (rc) {
		fprintf(stderr, PROG ": error: %s\n", err.msg);
		return rc == BB_ERR_PARSE ? 2 : 1;
	}
	cl->o.source = cl->path;
	cl->o.skew = cl->skew;
	cl->o.stats = cl->summary;
	if (!cl->quiet && isatty(STDERR_FILENO)) {
		prog = bb_progress_new(stderr, PROG);
		bb_progress_phase(prog, "generating", cl->o.set_messages ? cl->o.messages : 0);
		cl->o.progress = progress;
		cl->o.progress_ctx = prog;
	}
	g = bb_mt_gen_new(cfg, &cl->o, &err);
	status = g ? generate(g, cl->output, prog, &err) : 2;
	if (status)
		fprintf(stderr, PROG ": error: %s\n", err.msg);
	if (!status && cl->summary) {
		struct bb_mt_summary s;
		bb_mt_gen_summary(g, &s);
		print_summary(&s);
	}
	bb_progress_free(prog);
	bb_mt_gen_free(g);
	bb_mt_config_free(cfg);
	return status;
}

int main(int argc, char **argv)
{
	struct cli cl = {.output = "-"};
	cl.skew = bb_mt_skew_new();
	int status = parse_args(argc, argv, &cl);
	if (status < 0)
		status = run(&cl);
	bb_mt_skew_free(cl.skew);
	return status;
}

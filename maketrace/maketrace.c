/* maketrace.c - maketrace: write a synthetic tracelet trace with ground-truth path ids */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "maketrace/maketrace.h"
#include "traceio/traceio.h"

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

/* A usage error: one line, and exit status 2. */
__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "maketrace: error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (try maketrace --help)\n");
	return 2;
}

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

struct progress {
	struct timespec last;
	int shown;
};

static void progress(void *ctx, uint64_t generated)
{
	struct progress *p = ctx;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	double dt = (double)(now.tv_sec - p->last.tv_sec) + (now.tv_nsec - p->last.tv_nsec) * 1e-9;
	if (p->shown && dt < 0.25)
		return;
	p->last = now;
	p->shown = 1;
	fprintf(stderr, "\rmaketrace: %" PRIu64 " messages", generated);
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

int main(int argc, char **argv)
{
	struct bb_mt_opts o = {0};
	const char *output = "-";
	int summary = 0, quiet = 0, c;
	struct bb_err err = {{0}};
	struct bb_mt_skew *skew = bb_mt_skew_new();
	struct bb_mt_config *cfg = NULL;
	struct bb_mt_gen *g = NULL;
	struct bb_writer *w = NULL;
	int status = 0, rc;
/* A usage error: one line, exit status 2. */
#define USAGE(...)                                                                     \
	do {                                                                           \
		status = usage_error(__VA_ARGS__);                                     \
		goto out;                                                              \
	} while (0)

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:S:N:d:IqhV", long_opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case 'S':
			if (parse_u64(optarg, &o.seed) != 0)
				USAGE("--seed: bad number \"%s\"", optarg);
			o.set_seed = 1;
			break;
		case 'N':
			if (parse_u64(optarg, &o.messages) != 0)
				USAGE("--messages: bad number \"%s\"", optarg);
			o.set_messages = 1;
			break;
		case 'd':
			if (bb_duration_parse(optarg, &o.duration_ns) != 0 || o.duration_ns < 0)
				USAGE("--duration: bad duration \"%s\"", optarg);
			o.set_duration = 1;
			break;
		case OPT_NO_IDS:
			o.no_ids = 1;
			break;
		case OPT_RATE:
			if (parse_double(optarg, 0, 1e12, &o.capture_rate) != 0)
				USAGE("--capture-rate: bad rate \"%s\"", optarg);
			o.set_capture_rate = 1;
			break;
		case OPT_QUEUE: {
			uint64_t q;
			if (parse_u64(optarg, &q) != 0 || q < 1 || q > 1000000000)
				USAGE("--queue: bad length \"%s\"", optarg);
			o.queue = (uint32_t)q;
			o.set_queue = 1;
			break;
		}
		case OPT_DROP:
			if (parse_double(optarg, 0, 1, &o.probability) != 0)
				USAGE("--drop: bad probability \"%s\"", optarg);
			o.set_probability = 1;
			break;
		case OPT_SKEW:
		case OPT_DRIFT:
			if (bb_mt_skew_parse_arg(skew, optarg, c == OPT_DRIFT, &err) != 0)
				USAGE("%s: %s", c == OPT_DRIFT ? "--drift" : "--skew", err.msg);
			break;
		case 'I':
			summary = 1;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			goto out;
		case 'V':
			printf("maketrace (bb) %s, jansson %s\n", BB_VERSION, bb_mt_json_version());
			goto out;
		case ':':
			if (optopt && optopt < 256)
				USAGE("-%c needs a value", optopt);
			USAGE("%s needs a value", argv[optind - 1]);
		default:
			if (optopt && optopt < 256)
				USAGE("unknown option -%c", optopt);
			USAGE("unknown option \"%s\"", argv[optind - 1]);
		}
	}
	if (optind + 1 != argc)
		USAGE("%s", optind == argc ? "no CONFIG given" : "one CONFIG only");

	const char *path = argv[optind];
	rc = bb_mt_config_load(path, &cfg, &err);
	if (rc) {
		fprintf(stderr, "maketrace: error: %s\n", err.msg);
		status = rc == BB_ERR_PARSE ? 2 : 1;
		goto out;
	}
	struct progress prog = {{0, 0}, 0};
	o.source = path;
	o.skew = skew;
	o.stats = summary;
	if (!quiet && isatty(STDERR_FILENO)) {
		o.progress = progress;
		o.progress_ctx = &prog;
	}
	g = bb_mt_gen_new(cfg, &o, &err);
	if (!g) {
		fprintf(stderr, "maketrace: error: %s\n", err.msg);
		status = 2;
		goto out;
	}
	w = bb_tio_writer_open(output, &err);
	if (!w) {
		fprintf(stderr, "maketrace: error: %s\n", err.msg);
		status = 1;
		goto out;
	}
	rc = bb_mt_gen_run(g, w, &err);
	if (prog.shown)
		fprintf(stderr, "\r%40s\r", "");
	if (rc) {
		fprintf(stderr, "maketrace: error: %s\n", err.msg);
		bb_writer_close(w, NULL);
		status = 1;
		goto out;
	}
	if (bb_writer_close(w, &err) != 0) {
		fprintf(stderr, "maketrace: error: %s\n", err.msg);
		status = 1;
		goto out;
	}
	if (summary) {
		struct bb_mt_summary s;
		bb_mt_gen_summary(g, &s);
		print_summary(&s);
	}
out:
	bb_mt_gen_free(g);
	bb_mt_config_free(cfg);
	bb_mt_skew_free(skew);
	return status;
#undef USAGE
}

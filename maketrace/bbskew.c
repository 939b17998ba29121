/* bbskew.c - bbskew: add or remove per-node clock skew; merge traces from several capture points */
/* SPDX-License-Identifier: MIT */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "maketrace/maketrace.h"
#include "traceio/traceio.h"

#define PROG "bbskew"

static const char usage_text[] =
	"usage: bbskew [options] TRACE...\n"
	"Shift the timestamps of messages by their sender's clock offset and drift,\n"
	"and merge several traces in time order, dropping exact duplicates.\n"
	"TRACE '-' is standard input. With one TRACE and no option the trace is\n"
	"copied unchanged.\n"
	"\n"
	"  -o, --output FILE     write to FILE (default: standard output)\n"
	"      --skew NODE=S     add S seconds to messages NODE sends (repeatable)\n"
	"      --drift NODE=PPM  add PPM parts per million of the time since the first\n"
	"                        message to messages NODE sends (repeatable)\n"
	"      --deskew TABLE    subtract known offsets: TABLE has lines \"NODE SECONDS\"\n"
	"      --lenient         skip bad trace lines, count them and report them\n"
	"  -q, --quiet           no report of duplicates\n"
	"  -h, --help            show this help\n"
	"  -V, --version         show the version\n";

enum { OPT_SKEW = 256, OPT_DRIFT, OPT_DESKEW, OPT_LENIENT };

static const struct option long_opts[] = {
	{"output", required_argument, NULL, 'o'},
	{"skew", required_argument, NULL, OPT_SKEW},
	{"drift", required_argument, NULL, OPT_DRIFT},
	{"deskew", required_argument, NULL, OPT_DESKEW},
	{"lenient", no_argument, NULL, OPT_LENIENT},
	{"quiet", no_argument, NULL, 'q'},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};

/* "source bbskew ARGS...": the command line, on one line. */
static char *source_line(int argc, char **argv)
{
	size_t len = strlen("source bbskew") + 1;
	for (int i = 1; i < argc; i++)
		len += strlen(argv[i]) + 1;
	char *s = bb_xmalloc(len), *p = s;
	p += sprintf(p, "source bbskew");
	for (int i = 1; i < argc; i++) {
		*p++ = ' ';
		for (const char *a = argv[i]; *a; a++)
			*p++ = (unsigned char)*a < ' ' ? '?' : *a;
	}
	*p = 0;
	return s;
}

/* What the command line asks for. */
struct cli {
	const char *output;
	struct bb_reader_opts ropts;
	struct bb_mt_skew *skew; /* --skew, --drift, --deskew */
	int quiet, transform;
	char **paths; /* the traces, in argv */
	size_t n;
};

/* Parses argv into cl: -1 to go on, else the exit status (help, version, a
 * usage error, an offset table that cannot be read). */
static int parse_args(int argc, char **argv, struct cli *cl)
{
	struct bb_err err = {{0}};
	int c, rc;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:qhV", long_opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			cl->output = optarg;
			break;
		case OPT_SKEW:
		case OPT_DRIFT:
			if (bb_mt_skew_parse_arg(cl->skew, optarg, c == OPT_DRIFT, &err) != 0)
				return bb_usage_error(
				    PROG, "%s: %s", c == OPT_DRIFT ? "--drift" : "--skew", err.msg);
			cl->transform = 1;
			break;
		case OPT_DESKEW:
			if ((rc = bb_mt_skew_load_table(cl->skew, optarg, -1, &err)) != 0) {
				fprintf(stderr, PROG ": error: %s\n", err.msg);
				return rc == BB_ERR_IO ? 1 : 2;
			}
			cl->transform = 1;
			break;
		case OPT_LENIENT:
			cl->ropts.lenient = 1;
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
			printf("bbskew (bb) %s, %s\n", BB_VERSION, z);
			return 0;
		}
		default:
			return bb_usage_getopt(PROG, c, optopt, argv[optind - 1]);
		}
	}
	cl->paths = argv + optind;
	cl->n = (size_t)(argc - optind);
	if (!cl->n)
		return bb_usage_error(PROG, "no TRACE given");
	int stdin_uses = 0;
	for (size_t i = 0; i < cl->n; i++)
		stdin_uses += !strcmp(cl->paths[i], "-");
	if (stdin_uses > 1)
		return bb_usage_error(PROG, "standard input ('-') named more than once");
	return -1;
}

/* Shifts and merges the open traces in into the trace at cl->output: the
 * exit status. */
static int merge(const struct cli *cl, struct bb_reader **in, const char *source)
{
	struct bb_err err = {{0}};
	struct bb_writer *w = bb_tio_writer_open(cl->output, &err);
	if (!w) {
		fprintf(stderr, PROG ": error: %s\n", err.msg);
		return 1;
	}
	struct bb_mt_merge_stats st;
	int rc = bb_mt_merge(in, cl->n, cl->skew, source, w, &st, &err);
	if (rc) {
		fprintf(stderr, PROG ": error: %s\n", err.msg);
		bb_writer_close(w, NULL);
		return rc == BB_ERR_PARSE ? 2 : 1;
	}
	if (bb_writer_close(w, &err) != 0) {
		fprintf(stderr, PROG ": error: %s\n", err.msg);
		return 1;
	}
	for (size_t i = 0; i < cl->n; i++) {
		struct bb_reader_stats rs;
		bb_reader_stats(in[i], &rs);
		if (rs.skipped)
			fprintf(stderr,
			        PROG ": %s: skipped %" PRIu64 " bad lines (first at line %" PRIu64
			             ")\n",
			        bb_reader_name(in[i]), rs.skipped, rs.first_bad_line);
	}
	if (cl->n > 1 && !cl->quiet)
		fprintf(stderr,
		        PROG ": merged %zu traces: %" PRIu64 " records, %" PRIu64
		             " exact duplicates dropped\n",
		        cl->n, st.written, st.duplicates);
	return 0;
}

/* Opens the traces and merges them: the exit status. */
static int run(const struct cli *cl, int argc, char **argv)
{
	struct bb_err err = {{0}};
	struct bb_reader **in = bb_xcalloc(cl->n, sizeof(*in));
	char *source = NULL;
	int status = 0;
	for (size_t i = 0; i < cl->n && !status; i++) {
		in[i] = bb_tio_reader_open(cl->paths[i], &cl->ropts, &err);
		if (!in[i]) {
			fprintf(stderr, PROG ": error: %s\n", err.msg);
			status = 1;
		}
	}
	/* Nothing asked, nothing added: one input, no option, a verbatim copy. */
	if (!status && (cl->transform || cl->n > 1))
		source = source_line(argc, argv);
	if (!status)
		status = merge(cl, in, source);
	for (size_t i = 0; i < cl->n; i++)
		bb_reader_free(in[i]);
	free(in);
	free(source);
	return status;
}

int main(int argc, char **argv)
{
	struct cli cl = {.output = "-"};
	cl.skew = bb_mt_skew_new();
	int status = parse_args(argc, argv, &cl);
	if (status < 0)
		status = run(&cl, argc, argv);
	bb_mt_skew_free(cl.skew);
	return status;
}

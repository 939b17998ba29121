/* bbskew.c - bbskew: add or remove per-node clock skew; merge traces from several capture points */
/* SPDX-License-Identifier: MIT */
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "maketrace/maketrace.h"
#include "traceio/traceio.h"

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

__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "bbskew: error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (try bbskew --help)\n");
	return 2;
}

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

int main(int argc, char **argv)
{
	const char *output = "-";
	struct bb_reader_opts ropts = {0};
	struct bb_err err = {{0}};
	struct bb_mt_skew *skew = bb_mt_skew_new();
	int quiet = 0, transform = 0, c, status = 0;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:qhV", long_opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case OPT_SKEW:
		case OPT_DRIFT:
			if (bb_mt_skew_parse_arg(skew, optarg, c == OPT_DRIFT, &err) != 0) {
				bb_mt_skew_free(skew);
				return usage_error("%s: %s", c == OPT_DRIFT ? "--drift" : "--skew",
				                   err.msg);
			}
			transform = 1;
			break;
		case OPT_DESKEW: {
			int rc = bb_mt_skew_load_table(skew, optarg, -1, &err);
			if (rc) {
				fprintf(stderr, "bbskew: error: %s\n", err.msg);
				bb_mt_skew_free(skew);
				return rc == BB_ERR_IO ? 1 : 2;
			}
			transform = 1;
			break;
		}
		case OPT_LENIENT:
			ropts.lenient = 1;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			bb_mt_skew_free(skew);
			return 0;
		case 'V':
			printf("bbskew (bb) %s\n", BB_VERSION);
			bb_mt_skew_free(skew);
			return 0;
		case ':':
			bb_mt_skew_free(skew);
			if (optopt && optopt < 256)
				return usage_error("-%c needs a value", optopt);
			return usage_error("%s needs a value", argv[optind - 1]);
		default:
			bb_mt_skew_free(skew);
			if (optopt && optopt < 256)
				return usage_error("unknown option -%c", optopt);
			return usage_error("unknown option \"%s\"", argv[optind - 1]);
		}
	}
	size_t n = (size_t)(argc - optind);
	if (!n) {
		bb_mt_skew_free(skew);
		return usage_error("no TRACE given");
	}
	int stdin_uses = 0;
	for (int i = optind; i < argc; i++)
		stdin_uses += !strcmp(argv[i], "-");
	if (stdin_uses > 1) {
		bb_mt_skew_free(skew);
		return usage_error("standard input ('-') named more than once");
	}

	struct bb_reader **in = bb_xcalloc(n, sizeof(*in));
	struct bb_writer *w = NULL;
	char *source = NULL;
	for (size_t i = 0; i < n; i++) {
		in[i] = bb_tio_reader_open(argv[optind + (int)i], &ropts, &err);
		if (!in[i]) {
			fprintf(stderr, "bbskew: error: %s\n", err.msg);
			status = 1;
			goto out;
		}
	}
	w = bb_tio_writer_open(output, &err);
	if (!w) {
		fprintf(stderr, "bbskew: error: %s\n", err.msg);
		status = 1;
		goto out;
	}
	/* Nothing asked, nothing added: one input, no option, a verbatim copy. */
	if (transform || n > 1)
		source = source_line(argc, argv);
	struct bb_mt_merge_stats st;
	int rc = bb_mt_merge(in, n, skew, source, w, &st, &err);
	if (rc) {
		fprintf(stderr, "bbskew: error: %s\n", err.msg);
		bb_writer_close(w, NULL);
		w = NULL;
		status = rc == BB_ERR_PARSE ? 2 : 1;
		goto out;
	}
	rc = bb_writer_close(w, &err);
	w = NULL;
	if (rc) {
		fprintf(stderr, "bbskew: error: %s\n", err.msg);
		status = 1;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct bb_reader_stats rs;
		bb_reader_stats(in[i], &rs);
		if (rs.skipped)
			fprintf(stderr, "bbskew: %s: skipped %" PRIu64 " bad lines (first at line %" PRIu64
			        ")\n", bb_reader_name(in[i]), rs.skipped, rs.first_bad_line);
	}
	if (n > 1 && !quiet)
		fprintf(stderr, "bbskew: merged %zu traces: %" PRIu64 " records, %" PRIu64
		        " exact duplicates dropped\n", n, st.written, st.duplicates);
out:
	for (size_t i = 0; i < n; i++)
		bb_reader_free(in[i]);
	free(in);
	free(source);
	bb_mt_skew_free(skew);
	return status;
}

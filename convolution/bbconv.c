/* bbconv.c - bbconv: causal paths and delays by the convolution algorithm */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "convolution/convolution.h"
#include "trace/trace.h"
#include "traceio/traceio.h"
#include "viz/viz.h"

#define PROG "bbconv"

static const char usage_text[] =
    "usage: bbconv [options] [TRACE]\n"
    "Infer causal paths and per-edge delays from a message trace (CALL, RET or MSG)\n"
    "by cross-correlating per-edge signals (the convolution algorithm). TRACE is a\n"
    "bb trace file, '-' or nothing for standard input.\n"
    "\n"
    "  -Q, --quantum SECONDS   time quantum mu (default 0.01); units ns us ms s m h allowed\n"
    "      --tolerance SECONDS delay tolerance v when matching messages (default: half a quantum)\n"
    "      --max-delay SECONDS largest causal delay looked for (default 60)\n"
    "      --skew SECONDS      negative lags computed, a clock-skew allowance (default: 2 quanta)\n"
    "      --spike N,S         spike: N std devs above the mean, groups split under S (default "
    "4,3)\n"
    "      --root NODE         start paths at NODE (repeatable; default: the sources of\n"
    "                          the call graph of edges with at least --min-count calls)\n"
    "      --min-count N       drop edges and delays with fewer than N messages (default 10)\n"
    "      --max-depth N       at most N edges on a path (default 32)\n"
    "      --max-vertices N    at most N vertices in the graph (default 100000)\n"
    "      --keep-derived      keep derived return paths (A->B->A beside A->B->C->B->A)\n"
    "      --no-hold-bound     follow delays longer than the node's longest call (CALL to\n"
    "                          its RET): for nodes that act after they have returned\n"
    "      --method M          auto, fft or direct correlation (default auto: per edge, the "
    "cheaper)\n"
    "      --cache-mb N        memory for cached block spectra, MiB (default 64)\n"
    "      --truth             score against path= ground truth (false positives/negatives)\n"
    "      --lenient           skip bad trace lines, count them and say so\n"
    "      --dot               Graphviz dot output (default)\n"
    "  -j, --json              JSON output\n"
    "  -t, --text              indented text output\n"
    "  -o, --output FILE       write the result to FILE\n"
    "      --stats             print run counters (correlations, transforms, cache) to stderr\n"
    "  -q, --quiet             no progress messages (shown on a terminal for big traces)\n"
    "  -h, --help              this help\n"
    "  -V, --version           version, with the FFTW version in use\n"
    "\n"
    "Example: bbconv -Q 0.01 trace.tr | dot -Tsvg > paths.svg\n";

enum {
	OPT_TOL = 256,
	OPT_MAXDELAY,
	OPT_SKEW,
	OPT_SPIKE,
	OPT_ROOT,
	OPT_MINCOUNT,
	OPT_MAXDEPTH,
	OPT_MAXVERT,
	OPT_KEEP,
	OPT_NOHOLD,
	OPT_METHOD,
	OPT_CACHE,
	OPT_TRUTH,
	OPT_LENIENT,
	OPT_DOT,
	OPT_JSON,
	OPT_TEXT,
	OPT_STATS,
	OPT_QUIET,
	OPT_VERSION
};

static const struct option long_opts[] = {
    {"quantum", required_argument, NULL, 'Q'},
    {"tolerance", required_argument, NULL, OPT_TOL},
    {"max-delay", required_argument, NULL, OPT_MAXDELAY},
    {"skew", required_argument, NULL, OPT_SKEW},
    {"spike", required_argument, NULL, OPT_SPIKE},
    {"root", required_argument, NULL, OPT_ROOT},
    {"min-count", required_argument, NULL, OPT_MINCOUNT},
    {"max-depth", required_argument, NULL, OPT_MAXDEPTH},
    {"max-vertices", required_argument, NULL, OPT_MAXVERT},
    {"keep-derived", no_argument, NULL, OPT_KEEP},
    {"no-hold-bound", no_argument, NULL, OPT_NOHOLD},
    {"method", required_argument, NULL, OPT_METHOD},
    {"cache-mb", required_argument, NULL, OPT_CACHE},
    {"truth", no_argument, NULL, OPT_TRUTH},
    {"lenient", no_argument, NULL, OPT_LENIENT},
    {"dot", no_argument, NULL, OPT_DOT},
    {"json", no_argument, NULL, 'j'},
    {"text", no_argument, NULL, 't'},
    {"output", required_argument, NULL, 'o'},
    {"stats", no_argument, NULL, OPT_STATS},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

/* About how many messages the trace at path holds, for the ETA (0: unknown). */
static uint64_t progress_total(const char *path)
{
	if (!path || strcmp(path, "-") == 0)
		return 0;
	FILE *f = fopen(path, "rb");
	uint64_t n = bb_progress_estimate_lines(f);
	if (f)
		fclose(f);
	return n;
}

static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	errno = 0;
	if (!*s || *s == '-')
		return -1;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_spike(const char *s, double *n, double *sd)
{
	char *end;
	errno = 0;
	*n = strtod(s, &end);
	if (errno || end == s || *end != ',')
		return -1;
	const char *t = end + 1;
	*sd = strtod(t, &end);
	if (errno || end == t || *end)
		return -1;
	return 0;
}

/* What the command line asks for. */
struct cli {
	struct bb_conv_params p;
	const char **roots; /* the --root values (into argv); main frees the array */
	size_t nroots;
	int format; /* 0 dot, 1 json, 2 text */
	int lenient, stats, quiet;
	const char *outpath, *path;
};

/* An option that sets a search parameter: 0, or 2 after a usage error. */
static int param_option(struct cli *o, int opt, const char *arg)
{
	struct bb_conv_params *p = &o->p;
	uint64_t u;
	switch (opt) {
	case 'Q':
		if (bb_duration_parse(arg, &p->quantum_ns) != 0 || p->quantum_ns <= 0)
			return bb_usage_error(PROG, "bad quantum \"%s\": want seconds > 0", arg);
		break;
	case OPT_TOL:
		if (bb_duration_parse(arg, &p->tolerance_ns) != 0 || p->tolerance_ns < 0)
			return bb_usage_error(PROG, "bad tolerance \"%s\"", arg);
		break;
	case OPT_MAXDELAY:
		if (bb_duration_parse(arg, &p->max_delay_ns) != 0 || p->max_delay_ns < 0)
			return bb_usage_error(PROG, "bad maximum delay \"%s\"", arg);
		break;
	case OPT_SKEW:
		if (bb_duration_parse(arg, &p->skew_ns) != 0 || p->skew_ns < 0)
			return bb_usage_error(PROG, "bad skew allowance \"%s\"", arg);
		break;
	case OPT_SPIKE:
		if (parse_spike(arg, &p->spike_n, &p->spike_s) != 0 || !(p->spike_n > p->spike_s) ||
		    p->spike_s < 0)
			return bb_usage_error(PROG, "bad --spike \"%s\": want N,S with N > S >= 0",
			                      arg);
		break;
	case OPT_ROOT:
		o->roots = bb_xrealloc(o->roots, (o->nroots + 1) * sizeof(*o->roots));
		o->roots[o->nroots++] = arg;
		break;
	case OPT_MINCOUNT:
		if (parse_u64(arg, UINT64_MAX, &p->min_count) != 0)
			return bb_usage_error(PROG, "bad --min-count \"%s\"", arg);
		break;
	case OPT_MAXDEPTH:
		if (parse_u64(arg, 10000, &u) != 0 || u == 0)
			return bb_usage_error(PROG, "bad --max-depth \"%s\": want 1..10000", arg);
		p->max_depth = (unsigned)u;
		break;
	case OPT_MAXVERT:
		if (parse_u64(arg, UINT32_MAX - 2, &u) != 0 || u == 0)
			return bb_usage_error(PROG, "bad --max-vertices \"%s\"", arg);
		p->max_vertices = (size_t)u;
		break;
	case OPT_KEEP:
		p->keep_derived = 1;
		break;
	case OPT_NOHOLD:
		p->no_hold_bound = 1;
		break;
	case OPT_METHOD:
		if (!strcmp(arg, "auto"))
			p->method = BB_CONV_AUTO;
		else if (!strcmp(arg, "fft"))
			p->method = BB_CONV_FFT;
		else if (!strcmp(arg, "direct"))
			p->method = BB_CONV_DIRECT;
		else
			return bb_usage_error(PROG, "bad --method \"%s\": want auto, fft or direct",
			                      arg);
		break;
	case OPT_CACHE:
		if (parse_u64(arg, (uint64_t)SIZE_MAX >> 21, &u) != 0)
			return bb_usage_error(PROG, "bad --cache-mb \"%s\"", arg);
		p->cache_bytes = (size_t)u << 20;
		break;
	case OPT_TRUTH:
		p->truth = 1;
		break;
	}
	return 0;
}

/* Parses argv into o: -1 to go on, else the exit status (help, version, a
 * usage error). */
static int parse_args(int argc, char **argv, struct cli *o)
{
	int opt;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":Q:o:jtqhV", long_opts, NULL)) != -1) {
		switch (opt) {
		case OPT_LENIENT:
			o->lenient = 1;
			break;
		case OPT_DOT:
			o->format = 0;
			break;
		case 'j':
			o->format = 1;
			break;
		case 't':
			o->format = 2;
			break;
		case 'o':
			o->outpath = optarg;
			break;
		case OPT_STATS:
			o->stats = 1;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		case 'V': {
			char z[128];
			printf("bbconv (bb) %s\nFFTW %s\n", BB_VERSION, bb_conv_fftw_version());
			bb_tio_lib_versions(z, sizeof z);
			printf("%s\n", z);
			return 0;
		}
		case ':':
		case '?':
			return bb_usage_getopt(PROG, opt, optopt, argv[optind - 1]);
		default:
			if (param_option(o, opt, optarg) != 0)
				return 2;
		}
	}
	int64_t old_q;
	if (o->quiet && optind < argc && bb_duration_parse(argv[optind], &old_q) == 0 &&
	    access(argv[optind], F_OK) != 0) {
		/* "bbconv -q 0.01 t.tr", written before -q became --quiet */
		fprintf(stderr, PROG ": note: -q is --quiet since bb 0.2; the quantum is -Q %s\n",
		        argv[optind]);
		return bb_usage_error(PROG, "\"%s\" is not a trace file", argv[optind]);
	}
	if (argc - optind > 1)
		return bb_usage_error(PROG, "too many arguments (one trace at most): \"%s\"",
		                      argv[optind + 1]);
	o->path = optind < argc ? argv[optind] : "-";
	o->p.roots = o->roots;
	o->p.nroots = o->nroots;
	return -1;
}

/* Adds every message of the trace at path to conv, with progress on a
 * terminal; *nrec counts them. Returns 0, or the exit status after an error. */
static int read_trace(struct bb_conv *conv, const struct cli *o, struct bb_progress *progress,
                      uint64_t *nrec)
{
	struct bb_err err = {{0}};
	struct bb_reader_opts ro = {.lenient = o->lenient};
	struct bb_reader *r = bb_tio_reader_open(o->path, &ro, &err);
	if (!r) {
		fprintf(stderr, PROG ": error: %s\n", err.msg);
		return 1;
	}
	struct bb_rec rec;
	int rc;
	bb_progress_phase(progress, "reading", progress ? progress_total(o->path) : 0);
	while ((rc = bb_reader_next(r, &rec, &err)) > 0) {
		if ((++*nrec & 0xffff) == 0)
			bb_progress_update(progress, *nrec, " messages");
		const char *pathattr = o->p.truth ? bb_rec_attr(&rec, "path", NULL) : NULL;
		if (bb_conv_add(conv, rec.ts_ns, rec.op, bb_reader_node(r, rec.sender),
		                bb_reader_node(r, rec.receiver), rec.id_str, rec.id_len, pathattr,
		                &err) != 0) {
			/* name the line, as the reader's own errors do */
			struct bb_err e2;
			bb_err_set(&e2, "%s:%" PRIu64 ": %s", bb_reader_name(r), rec.line, err.msg);
			err = e2;
			rc = BB_ERR_LIMIT;
			break;
		}
	}
	bb_progress_end(progress);
	int status = 0;
	if (rc < 0) {
		fprintf(stderr, PROG ": error: %s\n", err.msg);
		status = rc == BB_ERR_IO ? 1 : 2;
	}
	struct bb_reader_stats rs;
	bb_reader_stats(r, &rs);
	if (!status && rs.skipped)
		fprintf(stderr,
		        PROG ": skipped %" PRIu64 " bad lines (the first at line %" PRIu64 ")\n",
		        rs.skipped, rs.first_bad_line);
	bb_reader_free(r);
	return status;
}

/* A cut graph is partial output: say so, like skipped lines. */
static void warn_partial(const struct bb_conv *conv, const struct cli *o)
{
	struct bb_conv_stats cst;
	bb_conv_get_stats(conv, &cst);
	if (cst.cut_vertices)
		fprintf(stderr, PROG ": warning: graph cut at %zu vertices (--max-vertices)\n",
		        o->p.max_vertices);
	else if (cst.truncated && !o->quiet)
		fprintf(stderr, PROG ": warning: %llu paths cut at depth %u (--max-depth)\n",
		        (unsigned long long)cst.truncated, (unsigned)o->p.max_depth);
}

/* Writes the graph in the format asked for: 0, or 1 after an error. */
static int write_graph(const struct bb_conv *conv, const struct cli *o)
{
	struct bb_err err = {{0}};
	FILE *out = stdout;
	if (o->outpath && !(out = fopen(o->outpath, "w"))) {
		fprintf(stderr, PROG ": error: %s: %s\n", o->outpath, strerror(errno));
		return 1;
	}
	const struct bb_vgraph *g = bb_conv_graph(conv);
	int64_t mark = bb_out_mark(out);
	int wrc = o->format == 1   ? bb_viz_graph_json(out, g, &err)
	          : o->format == 2 ? bb_viz_graph_text(out, g, &err)
	                           : bb_viz_graph_dot(out, g, &err);
	if (wrc != 0)
		bb_out_cut(out, mark); /* a full disk leaves no torn document */
	if (o->outpath && fclose(out) != 0 && wrc == 0) {
		bb_err_set(&err, "write error: %s", strerror(errno));
		wrc = BB_ERR_IO;
	}
	if (wrc != 0) {
		/* name the output, as the other commands do */
		fprintf(stderr, PROG ": error: %s: %s\n", o->outpath ? o->outpath : "<stdout>",
		        err.msg);
		return 1;
	}
	return 0;
}

static void print_stats(const struct bb_conv *conv)
{
	struct bb_conv_stats st;
	bb_conv_get_stats(conv, &st);
	fprintf(stderr,
	        PROG ": %" PRIu64 " messages, %" PRIu64 " nodes, %" PRId64 " quanta; "
	             "correlations: %" PRIu64 " fft, %" PRIu64 " direct; %" PRIu64
	             " transforms of %zu points; cache %" PRIu64 " hits, %" PRIu64
	             " misses, peak %zu bytes; suppressed: %" PRIu64 " derived, %" PRIu64
	             " cycles, %" PRIu64 " negative, %" PRIu64 " noise; %" PRIu64 " truncated\n",
	        st.messages, st.nodes, st.duration_quanta, st.xcorr_fft, st.xcorr_direct, st.ffts,
	        st.fft_size, st.cache_hits, st.cache_misses, st.peak_cache_bytes,
	        st.derived_suppressed, st.cycles_suppressed, st.negative_suppressed,
	        st.noise_suppressed, st.truncated);
}

/* Reads the trace, searches and writes: the exit status. */
static int run(const struct cli *o)
{
	struct bb_err err = {{0}};
	struct bb_conv *conv = bb_conv_new(&o->p, &err);
	if (!conv)
		return bb_usage_error(PROG, "%s", err.msg);
	struct bb_progress *progress =
	    !o->quiet && isatty(STDERR_FILENO) ? bb_progress_new(stderr, PROG) : NULL;
	uint64_t nrec = 0;
	int status = read_trace(conv, o, progress, &nrec);
	if (nrec >= 0x10000)
		bb_progress_text(progress, "searching paths");
	if (!status && bb_conv_run(conv, &err) != 0) {
		fprintf(stderr, PROG ": error: %s\n", err.msg);
		status = 2;
	}
	bb_progress_free(progress);
	if (!status)
		warn_partial(conv, o);
	if (!status)
		status = write_graph(conv, o);
	if (!status && o->stats)
		print_stats(conv);
	bb_conv_free(conv);
	return status;
}

int main(int argc, char **argv)
{
	struct cli o = {.format = 0};
	bb_conv_params_default(&o.p);
	int status = parse_args(argc, argv, &o);
	if (status < 0)
		status = run(&o);
	free(o.roots);
	return status;
}

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

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, PROG ": ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'bbconv --help' for more information.\n");
	return 2;
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

int main(int argc, char **argv)
{
	struct bb_conv_params p;
	bb_conv_params_default(&p);
	const char **roots = NULL;
	size_t nroots = 0;
	int format = 0, lenient = 0, stats = 0, quiet = 0; /* format: 0 dot, 1 json, 2 text */
	const char *outpath = NULL;
	int opt;
	uint64_t u;
	while ((opt = getopt_long(argc, argv, "Q:o:jtqhV", long_opts, NULL)) != -1) {
		switch (opt) {
		case 'Q':
			if (bb_duration_parse(optarg, &p.quantum_ns) != 0 || p.quantum_ns <= 0)
				return usage_error("bad quantum \"%s\": want seconds > 0", optarg);
			break;
		case OPT_TOL:
			if (bb_duration_parse(optarg, &p.tolerance_ns) != 0 || p.tolerance_ns < 0)
				return usage_error("bad tolerance \"%s\"", optarg);
			break;
		case OPT_MAXDELAY:
			if (bb_duration_parse(optarg, &p.max_delay_ns) != 0 || p.max_delay_ns < 0)
				return usage_error("bad maximum delay \"%s\"", optarg);
			break;
		case OPT_SKEW:
			if (bb_duration_parse(optarg, &p.skew_ns) != 0 || p.skew_ns < 0)
				return usage_error("bad skew allowance \"%s\"", optarg);
			break;
		case OPT_SPIKE:
			if (parse_spike(optarg, &p.spike_n, &p.spike_s) != 0 ||
			    !(p.spike_n > p.spike_s) || p.spike_s < 0)
				return usage_error("bad --spike \"%s\": want N,S with N > S >= 0",
				                   optarg);
			break;
		case OPT_ROOT:
			roots = realloc(roots, (nroots + 1) * sizeof(*roots));
			if (!roots) {
				fprintf(stderr, PROG ": error: out of memory\n");
				return 1;
			}
			roots[nroots++] = optarg;
			break;
		case OPT_MINCOUNT:
			if (parse_u64(optarg, UINT64_MAX, &p.min_count) != 0)
				return usage_error("bad --min-count \"%s\"", optarg);
			break;
		case OPT_MAXDEPTH:
			if (parse_u64(optarg, 10000, &u) != 0 || u == 0)
				return usage_error("bad --max-depth \"%s\": want 1..10000", optarg);
			p.max_depth = (unsigned)u;
			break;
		case OPT_MAXVERT:
			if (parse_u64(optarg, UINT32_MAX - 2, &u) != 0 || u == 0)
				return usage_error("bad --max-vertices \"%s\"", optarg);
			p.max_vertices = (size_t)u;
			break;
		case OPT_KEEP:
			p.keep_derived = 1;
			break;
		case OPT_NOHOLD:
			p.no_hold_bound = 1;
			break;
		case OPT_METHOD:
			if (!strcmp(optarg, "auto"))
				p.method = BB_CONV_AUTO;
			else if (!strcmp(optarg, "fft"))
				p.method = BB_CONV_FFT;
			else if (!strcmp(optarg, "direct"))
				p.method = BB_CONV_DIRECT;
			else
				return usage_error("bad --method \"%s\": want auto, fft or direct",
				                   optarg);
			break;
		case OPT_CACHE:
			if (parse_u64(optarg, (uint64_t)SIZE_MAX >> 21, &u) != 0)
				return usage_error("bad --cache-mb \"%s\"", optarg);
			p.cache_bytes = (size_t)u << 20;
			break;
		case OPT_TRUTH:
			p.truth = 1;
			break;
		case OPT_LENIENT:
			lenient = 1;
			break;
		case OPT_DOT:
			format = 0;
			break;
		case 'j':
			format = 1;
			break;
		case 't':
			format = 2;
			break;
		case 'o':
			outpath = optarg;
			break;
		case OPT_STATS:
			stats = 1;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			fputs(usage_text, stdout);
			free(roots);
			return 0;
		case 'V':
			printf("bbconv (bb) %s\nFFTW %s\n", BB_VERSION, bb_conv_fftw_version());
			free(roots);
			return 0;
		default:
			free(roots);
			fprintf(stderr, "Try 'bbconv --help' for more information.\n");
			return 2;
		}
	}
	int64_t old_q;
	if (quiet && optind < argc && bb_duration_parse(argv[optind], &old_q) == 0 &&
	    access(argv[optind], F_OK) != 0) {
		/* "bbconv -q 0.01 t.tr", written before -q became --quiet */
		free(roots);
		fprintf(stderr, PROG ": note: -q is --quiet since bb 0.2; the quantum is -Q %s\n",
		        argv[optind]);
		return usage_error("\"%s\" is not a trace file", argv[optind]);
	}
	if (argc - optind > 1) {
		free(roots);
		return usage_error("too many arguments (one trace at most): \"%s\"",
		                   argv[optind + 1]);
	}
	const char *path = optind < argc ? argv[optind] : "-";
	p.roots = roots;
	p.nroots = nroots;

	struct bb_err err = {{0}};
	struct bb_conv *conv = bb_conv_new(&p, &err);
	if (!conv) {
		free(roots);
		return usage_error("%s", err.msg);
	}
	struct bb_reader_opts ro = {.lenient = lenient};
	struct bb_reader *r = bb_tio_reader_open(path, &ro, &err);
	if (!r) {
		fprintf(stderr, PROG ": error: %s\n", err.msg);
		bb_conv_free(conv);
		free(roots);
		return 1;
	}
	struct bb_rec rec;
	int rc, progress = !quiet && isatty(STDERR_FILENO);
	uint64_t nrec = 0;
	while ((rc = bb_reader_next(r, &rec, &err)) > 0) {
		if (progress && (++nrec & 0xfffff) == 0)
			fprintf(stderr, "\r" PROG ": %" PRIu64 " messages read", nrec);
		const char *pathattr = p.truth ? bb_rec_attr(&rec, "path", NULL) : NULL;
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
	int status = 0;
	if (rc < 0) {
		fprintf(stderr, PROG ": error: %s\n", err.msg);
		status = rc == BB_ERR_IO ? 1 : 2;
	}
	if (progress && nrec >= 0x100000)
		fprintf(stderr, "\r" PROG ": %" PRIu64 " messages read, searching paths\n", nrec);
	struct bb_reader_stats rs;
	bb_reader_stats(r, &rs);
	if (!status && rs.skipped)
		fprintf(stderr,
		        PROG ": skipped %" PRIu64 " bad lines (the first at line %" PRIu64 ")\n",
		        rs.skipped, rs.first_bad_line);
	bb_reader_free(r);

	if (!status && bb_conv_run(conv, &err) != 0) {
		fprintf(stderr, PROG ": error: %s\n", err.msg);
		status = 2;
	}
	if (!status) {
		/* a cut graph is partial output: say so, like skipped lines */
		struct bb_conv_stats cst;
		bb_conv_get_stats(conv, &cst);
		if (cst.truncated)
			fprintf(stderr,
			        PROG ": warning: graph cut at %zu vertices (--max-vertices)\n",
			        p.max_vertices);
	}
	if (!status) {
		FILE *out = stdout;
		if (outpath && !(out = fopen(outpath, "w"))) {
			fprintf(stderr, PROG ": error: %s: %s\n", outpath, strerror(errno));
			status = 1;
		} else {
			const struct bb_vgraph *g = bb_conv_graph(conv);
			int64_t mark = bb_out_mark(out);
			int wrc = format == 1   ? bb_viz_graph_json(out, g, &err)
			          : format == 2 ? bb_viz_graph_text(out, g, &err)
			                        : bb_viz_graph_dot(out, g, &err);
			if (wrc != 0)
				bb_out_cut(out, mark); /* a full disk leaves no torn document */
			if (outpath && fclose(out) != 0 && wrc == 0) {
				bb_err_set(&err, "write error: %s", strerror(errno));
				wrc = BB_ERR_IO;
			}
			if (wrc != 0) {
				/* name the output, as the other commands do */
				fprintf(stderr, PROG ": error: %s: %s\n",
				        outpath ? outpath : "<stdout>", err.msg);
				status = 1;
			}
		}
	}
	if (!status && stats) {
		struct bb_conv_stats st;
		bb_conv_get_stats(conv, &st);
		fprintf(stderr,
		        PROG ": %" PRIu64 " messages, %" PRIu64 " nodes, %" PRId64 " quanta; "
		             "correlations: %" PRIu64 " fft, %" PRIu64 " direct; %" PRIu64
		             " transforms of %zu points; cache %" PRIu64 " hits, %" PRIu64
		             " misses, peak %zu bytes; suppressed: %" PRIu64 " derived, %" PRIu64
		             " cycles, %" PRIu64 " negative, %" PRIu64 " noise; %" PRIu64
		             " truncated\n",
		        st.messages, st.nodes, st.duration_quanta, st.xcorr_fft, st.xcorr_direct,
		        st.ffts, st.fft_size, st.cache_hits, st.cache_misses, st.peak_cache_bytes,
		        st.derived_suppressed, st.cycles_suppressed, st.negative_suppressed,
		        st.noise_suppressed, st.truncated);
	}
	bb_conv_free(conv);
	free(roots);
	return status;
}

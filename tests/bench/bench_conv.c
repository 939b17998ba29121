/* bench_conv.c - convolution benchmark: CPU time and peak memory beside the paper's Table 1 */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "convolution/convolution.h"
#include "trace/trace.h"

/* Each row runs in a child process, so that its peak memory (ru_maxrss) and
 * CPU time (user + system, from wait4) are its own. The Table 1 rows read
 * traces that maketrace generates from the shipped configs (generation is not
 * timed); the last rows build a trace of 10^8 quanta in memory.
 *
 * usage: bench_conv [BUILD_BIN_DIR]   (default: the directory of this program)
 * Environment: BB_SRC (source tree; default the one compiled in), BB_TMP
 * (scratch directory; default /tmp). */

#ifndef BB_SOURCE_DIR
#define BB_SOURCE_DIR "."
#endif

struct result {
	double run_cpu_s; /* inside bb_conv_run only */
	uint64_t messages, vertices, edges, fft, direct, ffts;
	int64_t quanta;
	size_t peak_cache;
	int ok;
};

static double cpu_now(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static int run_conv(struct bb_conv *c, struct result *r)
{
	struct bb_err err;
	double t0 = cpu_now();
	if (bb_conv_run(c, &err) != 0) {
		fprintf(stderr, "bench_conv: %s\n", err.msg);
		return -1;
	}
	r->run_cpu_s = cpu_now() - t0;
	const struct bb_vgraph *g = bb_conv_graph(c);
	struct bb_conv_stats st;
	bb_conv_get_stats(c, &st);
	r->messages = st.messages;
	r->quanta = st.duration_quanta;
	r->vertices = g->nvertices;
	r->edges = g->nedges;
	r->fft = st.xcorr_fft;
	r->direct = st.xcorr_direct;
	r->ffts = st.ffts;
	r->peak_cache = st.peak_cache_bytes;
	r->ok = 1;
	return 0;
}

static int child_trace(const char *path, int64_t mu_ns, struct result *r)
{
	struct bb_conv_params p;
	bb_conv_params_default(&p);
	p.quantum_ns = mu_ns;
	struct bb_err err;
	struct bb_conv *c = bb_conv_new(&p, &err);
	struct bb_reader *rd = bb_reader_open(path, NULL, &err);
	if (!c || !rd) {
		fprintf(stderr, "bench_conv: %s\n", err.msg);
		return -1;
	}
	struct bb_rec rec;
	int rc;
	while ((rc = bb_reader_next(rd, &rec, &err)) > 0)
		bb_conv_add(c, rec.ts_ns, rec.op, bb_reader_node(rd, rec.sender),
		            bb_reader_node(rd, rec.receiver), rec.id_str, rec.id_len, NULL, &err);
	if (rc < 0) {
		fprintf(stderr, "bench_conv: %s\n", err.msg);
		return -1;
	}
	bb_reader_free(rd);
	rc = run_conv(c, r);
	bb_conv_free(c);
	return rc;
}

/* 10^8 quanta of 10 ms (about 11.6 days): requests client -> A -> B -> C
 * (MSG) every 10 s on average, with 50 ms and 120 ms delays, plus an
 * unrelated pair of talkers. */
static int child_synthetic(int64_t quanta, enum bb_conv_method m, struct result *r)
{
	struct bb_conv_params p;
	bb_conv_params_default(&p);
	p.quantum_ns = 10 * 1000 * 1000;
	p.method = m;
	struct bb_err err;
	struct bb_conv *c = bb_conv_new(&p, &err);
	uint64_t s = 42;
	int64_t end = quanta * p.quantum_ns, t = 0;
	while (t < end - 10 * BB_NS_PER_S) {
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		t += (int64_t)((s >> 33) % 20000) * 1000 * 1000; /* 0..20 s */
		int64_t j = (int64_t)((s >> 20) % 4000000);      /* 0..4 ms jitter */
		bb_conv_add(c, t, BB_MSG, "client", "A", NULL, 0, NULL, &err);
		bb_conv_add(c, t + 50000000 + j, BB_MSG, "A", "B", NULL, 0, NULL, &err);
		bb_conv_add(c, t + 170000000 + j, BB_MSG, "B", "C", NULL, 0, NULL, &err);
		bb_conv_add(c, (int64_t)((s >> 11) % (uint64_t)end), BB_MSG, "x", "y", NULL, 0, NULL, &err);
	}
	int rc = run_conv(c, r);
	bb_conv_free(c);
	return rc;
}

struct row {
	const char *label, *config; /* config NULL: synthetic */
	const char *fallback;       /* config to use when the first is missing */
	double mu_s;
	double paper_cpu_s, paper_mb; /* < 0: none */
	int64_t quanta;
	enum bb_conv_method method;
};

static void run_row(const struct row *w, const char *bin, const char *src, const char *tmp)
{
	char trace[4096] = "";
	const char *w_config = w->config;
	if (w->config) {
		char cfg[2048], cmd[8192];
		snprintf(cfg, sizeof(cfg), "%s/maketrace/configs/%s", src, w->config);
		struct stat sb;
		if (stat(cfg, &sb) != 0 && w->fallback) {
			snprintf(cfg, sizeof(cfg), "%s/maketrace/configs/%s", src, w->fallback);
			w_config = w->fallback;
		}
		if (stat(cfg, &sb) != 0) {
			printf("%-34s %7.2f  %10s  (no config %s)\n", w->label, w->mu_s, "-",
			       w_config);
			return;
		}
		snprintf(trace, sizeof(trace), "%s/bench_conv_%s.tr", tmp, w_config);
		snprintf(cmd, sizeof(cmd), "'%s/maketrace' '%s' > '%s'", bin, cfg, trace);
		if (system(cmd) != 0) {
			printf("%-34s %7.2f  (maketrace failed)\n", w->label, w->mu_s);
			return;
		}
	}
	int fd[2];
	if (pipe(fd) != 0)
		return;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		close(fd[0]);
		struct result r = {0};
		int64_t mu_ns = (int64_t)(w->mu_s * 1e9 + 0.5);
		int rc = w->config ? child_trace(trace, mu_ns, &r)
		                   : child_synthetic(w->quanta, w->method, &r);
		if (write(fd[1], &r, sizeof(r)) != (ssize_t)sizeof(r))
			_exit(1);
		_exit(rc ? 1 : 0);
	}
	close(fd[1]);
	struct result r = {0};
	ssize_t n = read(fd[0], &r, sizeof(r));
	close(fd[0]);
	int status;
	struct rusage ru;
	wait4(pid, &status, 0, &ru);
	if (n != (ssize_t)sizeof(r) || !r.ok) {
		printf("%-34s %7.2f  (failed)\n", w->label, w->mu_s);
		return;
	}
	double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	             (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	double mb = (double)ru.ru_maxrss / 1024.0;
	char paper[64] = "-", speed[32] = "-";
	if (w->paper_cpu_s > 0) {
		snprintf(paper, sizeof(paper), "%.0f s, %.1f MB", w->paper_cpu_s, w->paper_mb);
		snprintf(speed, sizeof(speed), "%.0fx", w->paper_cpu_s / (cpu > 1e-6 ? cpu : 1e-6));
	}
	printf("%-34s %7.2f %9" PRIu64 " %11" PRId64 " %8.3f %8.3f %8.1f %6" PRIu64 "/%-6" PRIu64
	       " %5" PRIu64 "  %-18s %s\n",
	       w->label, w->mu_s, r.messages, r.quanta, cpu, r.run_cpu_s, mb, r.fft, r.direct,
	       r.edges, paper, speed);
	if (w->config)
		unlink(trace);
}

int main(int argc, char **argv)
{
	char bin[4096];
	if (argc > 1) {
		snprintf(bin, sizeof(bin), "%s", argv[1]);
	} else {
		snprintf(bin, sizeof(bin), "%s", argv[0]);
		char *slash = strrchr(bin, '/');
		if (slash)
			*slash = '\0';
		else
			snprintf(bin, sizeof(bin), ".");
	}
	const char *src = getenv("BB_SRC") ? getenv("BB_SRC") : BB_SOURCE_DIR;
	const char *tmp = getenv("BB_TMP") ? getenv("BB_TMP") : "/tmp";
	const struct row rows[] = {
	    {"Multi-tier \"normal\"", "table1-normal.json", NULL, 0.01, 6684, 0.2, 0, 0},
	    {"Multi-tier \"added-delay\"", "table1-delay.json", "multitier-delay.json", 0.01, 6709,
	     0.2, 0, 0},
	    {"Email headers", "email.json", NULL, 5, 2106, 131, 0, 0},
	    {"Email headers", "email.json", NULL, 30, 338, 36, 0, 0},
	    {"Synthetic 1e8 quanta (auto)", NULL, NULL, 0.01, -1, -1, 100000000, BB_CONV_AUTO},
	    {"Synthetic 1e8 quanta (fft)", NULL, NULL, 0.01, -1, -1, 100000000, BB_CONV_FFT},
	};
	printf("bbconv (FFTW %s, FFTW_ESTIMATE, default parameters); CPU = user+system of the "
	       "whole child (read + run), run = bb_conv_run only; MB = peak RSS\n",
	       bb_conv_fftw_version());
	printf("%-34s %7s %9s %11s %8s %8s %8s %13s %5s  %-18s %s\n", "trace", "mu (s)", "messages",
	       "quanta", "CPU (s)", "run (s)", "MB", "xcorr fft/dir", "edges", "paper (Table 1)",
	       "speed-up");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		run_row(&rows[i], bin, src, tmp);
	return 0;
}

/* bench_nesting.c - bbnest benchmark: length, duration, parallelism, MB and CPU beside Table 1 */
/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* For each maketrace/configs/table1-*.json: maketrace writes the trace (not
 * timed), then bbnest runs on it in a child process, BENCH_NEST_RUNS times
 * or more (run_row; the machine is shared: the least CPU is the steadiest
 * figure, the median is printed beside it). A row shows the trace's length,
 * duration and mean per-node parallelism (from bbnest's JSON), bbnest's
 * peak heap in use (its --stats line: glibc mallinfo2, sampled at the end
 * of each pass and every 65536 records; the paper's MBytes is "data space
 * allocated (not counting stack or code)"), its peak RSS (code, libraries
 * and mapped trace pages included) and its CPU time (user + system, from
 * wait4); then the paper's Table 1 figures for that trace, the ratios, and
 * PASS or MISS against the targets of issue 3: at least 20 times less CPU
 * than the paper and no more memory than its MBytes (heap). Figures only:
 * nothing here is a test.
 *
 * usage: bench_nesting [BUILD_BIN_DIR]   (default: the directory of this program)
 * Environment: BB_SRC (source tree; default the one compiled in), BB_TMP
 * (scratch directory; default /tmp), BENCH_NEST_RUNS (runs per row, at
 * least; default 3), BENCH_NEST_SPAN (seconds of CPU a row's runs take at
 * least, with more runs if needed; default 5), BENCH_NEST_BIG=N (also run
 * N messages of multitier.json through a pipe: the 20,000,000-message row,
 * which streams two passes). */

/* Table 1 of the paper, nesting columns. */
static const struct paper_row {
	const char *config;
	double msgs, dur_s, par, mb, cpu_s;
} paper[] = {
	{"table1-short.json", 20164, 50, 1.793, 1.5, 0.23},
	{"table1-normal.json", 202520, 500, 1.641, 13.8, 2.27},
	{"table1-long.json", 2026658, 5000, 1.612, 136.8, 23.97},
	{"table1-par-low.json", 769638, 5000, 1.146, 54.0, 7.54},
	{"table1-par-medium.json", 770344, 500, 5.116, 54.2, 11.15},
	{"table1-par-high.json", 775254, 50, 45.057, 132.1, 233.61},
};

#define CPU_TARGET 20.0 /* times less CPU than the paper */

#ifndef BB_SOURCE_DIR
#define BB_SOURCE_DIR "."
#endif

/* The number after "key": in text, or -1. Good enough for our own JSON. */
static double json_num(const char *text, const char *key)
{
	char pat[64];
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	const char *p = strstr(text, pat);
	if (!p)
		return -1;
	p += strlen(pat);
	while (*p == ' ')
		p++;
	return strtod(p, NULL);
}

static char *slurp_fd(int fd)
{
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	for (;;) {
		if (len + 1 >= cap)
			buf = realloc(buf, cap *= 2);
		ssize_t n = read(fd, buf + len, cap - len - 1);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	return buf;
}

/* User + system seconds of a child, from wait4. */
static double ru_cpu(const struct rusage *ru)
{
	return (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec / 1e6 +
	       (double)ru->ru_stime.tv_sec + (double)ru->ru_stime.tv_usec / 1e6;
}

struct run {
	double cpu, rss_mb, heap_mb, msgs, dur, par;
	int replayed;
};

/* Runs bbnest once on trace (or on the output of shell command `gen` when
 * trace is NULL); fills r. Returns 0, or -1 when bbnest failed. */
static int run_once(const char *bin, const char *trace, const char *gen, struct run *r)
{
	int fd[2];
	if (pipe(fd) != 0)
		return -1;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fd[1], 1); /* the JSON, then the --stats lines (stdout is flushed first) */
		dup2(fd[1], 2);
		close(fd[0]);
		close(fd[1]);
		char nest[4096];
		snprintf(nest, sizeof(nest), "%s/bbnest", bin);
		if (trace) {
			execl(nest, "bbnest", "-q", "--stats", "--json", "--no-bins", "--top", "1", trace,
			      (char *)NULL);
		} else {
			char cmd[4 * 4096];
			snprintf(cmd, sizeof(cmd), "%s | '%s' -q --stats --json --no-bins --top 1", gen,
			         nest);
			execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		}
		_exit(127);
	}
	close(fd[1]);
	char *out = slurp_fd(fd[0]);
	close(fd[0]);
	int status;
	struct rusage ru;
	if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		free(out);
		return -1;
	}
	r->cpu = ru_cpu(&ru);
	r->rss_mb = (double)ru.ru_maxrss / 1024.0;
	r->msgs = json_num(out, "messages");
	r->dur = json_num(out, "duration_ns") / 1e9;
	r->par = json_num(out, "mean_parallelism");
	const char *h = strstr(out, "heap_peak_bytes ");
	r->heap_mb = h ? strtod(h + strlen("heap_peak_bytes "), NULL) / 1048576.0 : -1;
	r->replayed = strstr(out, "replayed from memory") != NULL;
	free(out);
	return r->msgs > 0 ? 0 : -1;
}

/* The least CPU of `runs` runs of `bbnest --version`: the process's exec,
 * dynamic loading and exit alone, which every row's CPU includes (on a
 * slow virtual machine a few milliseconds: a third of the short row's
 * target). -1 when it fails. */
static double start_cpu(const char *bin, int runs)
{
	double best = -1;
	char nest[4096 + 16];
	snprintf(nest, sizeof(nest), "%s/bbnest", bin);
	for (int i = 0; i < runs; i++) {
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			int fd = open("/dev/null", O_WRONLY);
			if (fd >= 0) {
				dup2(fd, 1);
				dup2(fd, 2);
			}
			execl(nest, "bbnest", "--version", (char *)NULL);
			_exit(127);
		}
		int status;
		struct rusage ru;
		if (pid < 0 || wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			return -1;
		double cpu = ru_cpu(&ru);
		if (best < 0 || cpu < best)
			best = cpu;
	}
	return best;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

#define MAX_RUNS 200

/* Runs bbnest `runs` times, then again while the row's runs took less than
 * span seconds of CPU in all (at most MAX_RUNS): a row of 12 ms is run
 * until the least of its runs is the machine's more than a neighbour's (on
 * the shared 2-core VM one binary on table1-short, two series of 100 runs a
 * minute apart: median 11.5 then 16.1 ms, least 10.3 then 11.1 ms). Prints
 * one row: the run with the least CPU, and the median CPU of all. */
static void run_row(const char *label, const char *bin, const char *trace, const char *gen,
                    const struct paper_row *pr, int runs, double span)
{
	struct run best = {0}, r;
	double cpus[MAX_RUNS], sum = 0;
	int ok = 0, n = 0;
	for (int i = 0; i < MAX_RUNS && (i < runs || (ok && sum < span)); i++) {
		if (run_once(bin, trace, gen, &r) != 0)
			continue;
		if (!ok || r.cpu < best.cpu)
			best = r;
		ok = 1;
		cpus[n++] = r.cpu;
		sum += r.cpu;
	}
	if (!ok) {
		printf("%-24s (bbnest failed)\n", label);
		return;
	}
	/* four decimals and the ratio to a tenth: the short row sits at its
	 * target (0.0115 s), where 0.011 and 20x said neither way */
	qsort(cpus, (size_t)n, sizeof(*cpus), cmp_dbl);
	printf("%-24s %9.0f %6.0f %7.3f %7.1f %6.1f %7.4f %7.4f %4d", label, best.msgs, best.dur,
	       best.par, best.heap_mb, best.rss_mb, best.cpu, cpus[n / 2], n);
	if (pr) {
		double cpu = best.cpu > 1e-4 ? best.cpu : 1e-4;
		int cpu_ok = pr->cpu_s / cpu >= CPU_TARGET, mb_ok = best.heap_mb <= pr->mb;
		printf(" | %9.0f %7.3f %6.1f %7.2f | %6.1fx %5.1fx | %-4s %-4s", pr->msgs, pr->par,
		       pr->mb, pr->cpu_s, pr->cpu_s / cpu, pr->mb / best.heap_mb,
		       cpu_ok ? "PASS" : "MISS", mb_ok ? "PASS" : "MISS");
	}
	printf("%s\n", best.replayed ? "" : "  (streamed: read twice)");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
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
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/maketrace/configs", src);

	char *names[256];
	size_t nn = 0;
	DIR *d = opendir(dir);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d)) && nn < 256) {
			size_t l = strlen(e->d_name);
			if (strncmp(e->d_name, "table1-", 7) == 0 && l > 5 &&
			    strcmp(e->d_name + l - 5, ".json") == 0)
				names[nn++] = strdup(e->d_name);
		}
		closedir(d);
	}
	qsort(names, nn, sizeof(*names), cmp_str);

	int runs = getenv("BENCH_NEST_RUNS") ? atoi(getenv("BENCH_NEST_RUNS")) : 3;
	if (runs < 1)
		runs = 1;
	double span = getenv("BENCH_NEST_SPAN") ? atof(getenv("BENCH_NEST_SPAN")) : 5.0;
	printf("bbnest, default parameters, beside the paper's Table 1 (nesting columns); least "
	       "CPU of %d runs or more, until a row's runs took %.1f s of CPU (at most %d)\n", runs,
	       span, MAX_RUNS);
	double la[3];
	if (getloadavg(la, 3) == 3)
		printf("load average at start: %.2f %.2f %.2f (2-core figures vary with it)\n", la[0],
		       la[1], la[2]);
	printf("heap MB = peak heap in use (mallinfo2); RSS MB = peak resident set; CPU = user + "
	       "system s; targets: >= %.0fx less CPU, heap <= paper MB\n", CPU_TARGET);
	double start = start_cpu(bin, 5 * runs);
	if (start >= 0)
		printf("bbnest --version (exec, dynamic loading, exit; in every row's CPU): least CPU "
		       "%.4f s of %d runs\n", start, 5 * runs);
	printf("%-24s %9s %6s %7s %7s %6s %7s %7s %4s | %9s %7s %6s %7s | %7s %6s | %-4s %-4s\n",
	       "config", "messages", "dur s", "parall.", "heap MB", "RSS MB", "CPU s", "median",
	       "runs", "paper msg", "parall.", "MB", "CPU s", "CPU", "MB", "CPU", "MB");
	if (nn == 0)
		printf("(no table1-*.json in %s)\n", dir);
	for (size_t i = 0; i < nn; i++) {
		char cfg[8192], trace[8192], cmd[3 * 8192], label[64];
		snprintf(cfg, sizeof(cfg), "%s/%s", dir, names[i]);
		snprintf(trace, sizeof(trace), "%s/bench_nesting_%s.tr", tmp, names[i]);
		snprintf(cmd, sizeof(cmd), "'%s/maketrace' -q '%s' > '%s'", bin, cfg, trace);
		snprintf(label, sizeof(label), "%.*s", (int)(strlen(names[i]) - 5), names[i]);
		const struct paper_row *pr = NULL;
		for (size_t k = 0; k < sizeof(paper) / sizeof(paper[0]); k++)
			if (strcmp(paper[k].config, names[i]) == 0)
				pr = &paper[k];
		if (system(cmd) != 0)
			printf("%-24s (maketrace failed)\n", label);
		else
			run_row(label, bin, trace, NULL, pr, runs, span);
		unlink(trace);
		free(names[i]);
	}
	if (getloadavg(la, 3) == 3)
		printf("load average at end: %.2f %.2f %.2f\n", la[0], la[1], la[2]);
	const char *big = getenv("BENCH_NEST_BIG");
	if (big && atol(big) > 0) {
		char gen[3 * 4096], label[64];
		snprintf(gen, sizeof(gen), "'%s/maketrace' -q -d 0 -N %ld '%s/multitier.json'", bin,
		         atol(big), dir);
		snprintf(label, sizeof(label), "multitier %ld, pipe", atol(big));
		run_row(label, bin, NULL, gen, NULL, 1, 0);
	}
	return 0;
}

/* bench_nesting.c - bbnest benchmark: length, duration, parallelism, MB and CPU beside Table 1 */
/* SPDX-License-Identifier: MIT */
#include <dirent.h>
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

/* For each maketrace/configs/table1-*.json: maketrace writes the trace (not
 * timed), then bbnest runs on it in a child process whose peak RSS
 * (ru_maxrss) and CPU time (user + system, from wait4) are reported with the
 * trace's length, duration and mean per-node parallelism from bbnest's JSON.
 * The paper's Table 1 figures for a row come from the config's "paper" member
 * ({"cpu_s": ..., "mb": ...}) when the config has one.
 *
 * usage: bench_nesting [BUILD_BIN_DIR]   (default: the directory of this program)
 * Environment: BB_SRC (source tree; default the one compiled in), BB_TMP
 * (scratch directory; default /tmp), BENCH_NEST_BIG=N (also run N messages of
 * multitier.json through a pipe, streaming: the 20,000,000-message row). */

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

static char *slurp_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *t = slurp_fd(fileno(f));
	fclose(f);
	return t;
}

/* Runs bbnest on trace (or on the output of shell command `gen` when trace
 * is NULL) and prints one row. */
static void run_row(const char *label, const char *bin, const char *trace, const char *gen,
                    const char *cfgtext)
{
	int fd[2];
	if (pipe(fd) != 0)
		return;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		char nest[4096];
		snprintf(nest, sizeof(nest), "%s/bbnest", bin);
		if (trace) {
			execl(nest, "bbnest", "-q", "--json", "--no-bins", "--top", "1", trace,
			      (char *)NULL);
		} else {
			char cmd[4 * 4096];
			snprintf(cmd, sizeof(cmd), "%s | '%s' -q --json --no-bins --top 1", gen, nest);
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
		printf("%-28s (bbnest failed)\n", label);
		free(out);
		return;
	}
	double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	             (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	double mb = (double)ru.ru_maxrss / 1024.0;
	double msgs = json_num(out, "messages"), dur = json_num(out, "duration_ns") / 1e9;
	double par = json_num(out, "mean_parallelism");
	if (msgs <= 0) {
		printf("%-28s (no messages)\n", label);
		free(out);
		return;
	}
	char paper[64] = "-", ratio[48] = "-";
	const char *pp = cfgtext ? strstr(cfgtext, "\"paper\"") : NULL;
	if (pp) {
		double pcpu = json_num(pp, "cpu_s"), pmb = json_num(pp, "mb");
		if (pcpu > 0) {
			snprintf(paper, sizeof(paper), "%.2f s, %.1f MB", pcpu, pmb);
			snprintf(ratio, sizeof(ratio), "%.0fx CPU, %.1fx MB", pcpu / (cpu > 1e-3 ? cpu : 1e-3),
			         pmb / (mb > 0 ? mb : 1));
		}
	}
	printf("%-28s %10.0f %9.0f %8.2f %8.1f %8.2f  %-20s %s\n", label, msgs, dur, par, mb, cpu,
	       paper, ratio);
	free(out);
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

	printf("bbnest (default parameters, two passes over a file); CPU = user+system of the "
	       "bbnest process; MB = its peak RSS\n");
	printf("%-28s %10s %9s %8s %8s %8s  %-20s %s\n", "trace (config)", "messages", "dur (s)",
	       "parall.", "MB", "CPU (s)", "paper (Table 1)", "paper / ours");
	if (nn == 0)
		printf("(no table1-*.json in %s)\n", dir);
	for (size_t i = 0; i < nn; i++) {
		char cfg[8192], trace[8192], cmd[3 * 8192];
		snprintf(cfg, sizeof(cfg), "%s/%s", dir, names[i]);
		snprintf(trace, sizeof(trace), "%s/bench_nesting_%s.tr", tmp, names[i]);
		snprintf(cmd, sizeof(cmd), "'%s/maketrace' -q '%s' > '%s'", bin, cfg, trace);
		if (system(cmd) != 0) {
			printf("%-28s (maketrace failed)\n", names[i]);
		} else {
			char *text = slurp_file(cfg);
			run_row(names[i], bin, trace, NULL, text);
			free(text);
		}
		unlink(trace);
		free(names[i]);
	}
	const char *big = getenv("BENCH_NEST_BIG");
	if (big && atol(big) > 0) {
		char gen[3 * 4096], label[64];
		snprintf(gen, sizeof(gen), "'%s/maketrace' -q -d 0 -n %ld '%s/multitier.json'", bin,
		         atol(big), dir);
		snprintf(label, sizeof(label), "multitier, %ld msgs, pipe", atol(big));
		run_row(label, bin, NULL, gen, NULL);
	}
	return 0;
}

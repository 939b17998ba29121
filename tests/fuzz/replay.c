/* replay.c - runs a fuzz target's LLVMFuzzerTestOneInput over files, without libFuzzer */
/* SPDX-License-Identifier: MIT */
/*
 * Usage: replay_TARGET [--need DIR] PATH...  Each PATH is a file, a directory
 * (its regular files, in name order, not recursive) or a glob(3) pattern
 * expanded when the test runs. Every input is run once; a crash or a
 * sanitizer report fails the test, and a file that cannot be read or a
 * pattern that matches nothing is an error (exit 2). Prints how many inputs
 * ran. --need DIR: when DIR is absent (inputs outside the repository, such as
 * ../shared), say so and exit 77, which ctest reports as a skip. Linked with
 * one fuzz_TARGET.c in every build, so ctest replays each corpus and each
 * regression input.
 */
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "replay: error: %s: %s\n", path, strerror(errno));
		return -1;
	}
	size_t cap = 4096, len = 0;
	uint8_t *buf = malloc(cap);
	size_t n;
	while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			uint8_t *nb = realloc(buf, cap *= 2);
			if (!nb)
				free(buf);
			buf = nb;
		}
	}
	int bad = ferror(f) || !buf;
	fclose(f);
	if (bad) {
		fprintf(stderr, "replay: error: %s: cannot read\n", path);
		free(buf);
		return -1;
	}
	/* An exact-size copy, so that ASan sees a read past the input's end. */
	uint8_t *exact = malloc(len ? len : 1);
	if (!exact) {
		free(buf);
		return -1;
	}
	memcpy(exact, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir, unsigned long *count)
{
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "replay: error: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			char **nn = realloc(names, cap * sizeof *names);
			if (!nn)
				abort();
			names = nn;
		}
		size_t l = strlen(dir) + strlen(e->d_name) + 2;
		names[n] = malloc(l);
		if (!names[n])
			abort();
		snprintf(names[n], l, "%s/%s", dir, e->d_name);
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof *names, by_name);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		struct stat sb;
		if (stat(names[i], &sb) == 0 && S_ISREG(sb.st_mode)) {
			if (run_file(names[i]) != 0)
				rc = -1;
			else
				(*count)++;
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

static int run_path(const char *path, unsigned long *count)
{
	struct stat sb;
	if (stat(path, &sb) != 0) {
		fprintf(stderr, "replay: error: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (S_ISDIR(sb.st_mode))
		return run_dir(path, count);
	if (run_file(path) != 0)
		return -1;
	(*count)++;
	return 0;
}

/* A pattern, expanded now: the files it names may change after configuring. */
static int run_glob(const char *pattern, unsigned long *count)
{
	glob_t g;
	int grc = glob(pattern, 0, NULL, &g);
	if (grc != 0) {
		fprintf(stderr, "replay: error: %s: %s\n", pattern,
		        grc == GLOB_NOMATCH ? "no file matches" : "cannot expand");
		if (grc != GLOB_NOSPACE)
			globfree(&g);
		return -1;
	}
	int rc = 0;
	for (size_t i = 0; i < g.gl_pathc; i++)
		if (run_path(g.gl_pathv[i], count) != 0)
			rc = -1;
	globfree(&g);
	return rc;
}

int main(int argc, char **argv)
{
	unsigned long count = 0;
	int rc = 0, first = 1;
	if (argc > 2 && !strcmp(argv[1], "--need")) {
		struct stat sb;
		if (stat(argv[2], &sb) != 0 || !S_ISDIR(sb.st_mode)) {
			printf("%s: skipped: %s is absent (inputs outside the repository)\n", argv[0],
			       argv[2]);
			return 77;
		}
		first = 3;
	}
	if (argc <= first) {
		fprintf(stderr, "usage: %s [--need DIR] FILE-DIR-OR-PATTERN...\n", argv[0]);
		return 2;
	}
	for (int i = first; i < argc; i++) {
		if (strpbrk(argv[i], "*?[")) {
			if (run_glob(argv[i], &count) != 0)
				rc = -1;
			continue;
		}
		if (run_path(argv[i], &count) != 0)
			rc = -1;
	}
	printf("%s: %lu inputs replayed\n", argv[0], count);
	return rc ? 2 : 0;
}

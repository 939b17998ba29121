/* replay.c - runs a fuzz target's LLVMFuzzerTestOneInput over files, without libFuzzer */
/* SPDX-License-Identifier: MIT */
/*
 * Usage: replay_TARGET PATH...  Each PATH is a file or a directory (its regular
 * files, in name order, not recursive). Every input is run once; a crash or a
 * sanitizer report fails the test, and a file that cannot be read is an error
 * (exit 2). Prints how many inputs ran. Linked with one fuzz_TARGET.c in every
 * build, so ctest replays each corpus and each regression input.
 */
#include <dirent.h>
#include <errno.h>
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

int main(int argc, char **argv)
{
	unsigned long count = 0;
	int rc = 0;
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE-OR-DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		struct stat sb;
		if (stat(argv[i], &sb) != 0) {
			fprintf(stderr, "replay: error: %s: %s\n", argv[i], strerror(errno));
			rc = -1;
		} else if (S_ISDIR(sb.st_mode)) {
			if (run_dir(argv[i], &count) != 0)
				rc = -1;
		} else if (run_file(argv[i]) == 0) {
			count++;
		} else {
			rc = -1;
		}
	}
	printf("%s: %lu inputs replayed\n", argv[0], count);
	return rc ? 2 : 0;
}

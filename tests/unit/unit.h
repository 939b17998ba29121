/* unit.h - a tiny unit-test harness: a table of named tests, checks that print both sides */
/* SPDX-License-Identifier: MIT */
#ifndef BB_UNIT_H
#define BB_UNIT_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct unit_test {
	const char *name;
	void (*fn)(void);
};

extern int unit_failed;  /* checks failed in the current test */
extern int unit_skipped; /* set by SKIP */

#define UNIT_FAIL_(...)                                                        \
	do {                                                                   \
		fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                \
		fprintf(stderr, __VA_ARGS__);                                  \
		fputc('\n', stderr);                                           \
		unit_failed++;                                                 \
	} while (0)

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond))                                                   \
			UNIT_FAIL_("check failed: %s", #cond);                 \
	} while (0)

#define CHECK_INT(a, b)                                                        \
	do {                                                                   \
		long long a_ = (long long)(a), b_ = (long long)(b);            \
		if (a_ != b_)                                                  \
			UNIT_FAIL_("%s == %s: %lld != %lld", #a, #b, a_, b_);  \
	} while (0)

#define CHECK_STR(a, b)                                                        \
	do {                                                                   \
		const char *a_ = (a), *b_ = (b);                               \
		if (!a_ || !b_ || strcmp(a_, b_) != 0)                         \
			UNIT_FAIL_("%s == %s: \"%s\" != \"%s\"", #a, #b,       \
			           a_ ? a_ : "(null)", b_ ? b_ : "(null)");    \
	} while (0)

/* Substring check, for error messages. */
#define CHECK_HAS(hay, needle)                                                 \
	do {                                                                   \
		const char *h_ = (hay), *n_ = (needle);                        \
		if (!h_ || !strstr(h_, n_))                                    \
			UNIT_FAIL_("\"%s\" does not contain \"%s\"",           \
			           h_ ? h_ : "(null)", n_);                    \
	} while (0)

#define SKIP(reason)                                                           \
	do {                                                                   \
		fprintf(stderr, "skipped: %s\n", reason);                      \
		unit_skipped = 1;                                              \
		return;                                                        \
	} while (0)

/* main() for a test binary: runs every test in the table, or those named on
 * the command line; exit 0 when all pass, 77 when everything skipped. */
#define UNIT_MAIN(table)                                                       \
	int unit_failed, unit_skipped;                                         \
	int main(int argc, char **argv)                                        \
	{                                                                      \
		size_t n = sizeof(table) / sizeof(table[0]);                   \
		int bad = 0, ran = 0, skipped = 0;                             \
		for (size_t i = 0; i < n; i++) {                               \
			int want = argc < 2;                                   \
			for (int a = 1; a < argc; a++)                         \
				if (!strcmp(argv[a], table[i].name))           \
					want = 1;                              \
			if (!want)                                             \
				continue;                                      \
			unit_failed = unit_skipped = 0;                        \
			table[i].fn();                                         \
			ran++;                                                 \
			skipped += unit_skipped;                               \
			if (unit_failed) {                                     \
				bad++;                                         \
				fprintf(stderr, "FAIL %s\n", table[i].name);   \
			} else {                                               \
				printf("%s %s\n", unit_skipped ? "skip" : "ok", \
				       table[i].name);                         \
			}                                                      \
		}                                                              \
		printf("%d passed, %d failed, %d skipped\n", ran - bad - skipped, \
		       bad, skipped);                                          \
		if (bad)                                                       \
			return 1;                                              \
		return ran && skipped == ran ? 77 : 0;                         \
	}

#endif

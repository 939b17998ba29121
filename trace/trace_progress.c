/* trace_progress.c - progress on a terminal: phase, count, rate and ETA on one rewritten line */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "trace/trace.h"

struct bb_progress {
	FILE *out;
	char prog[32];
	char phase[64];
	uint64_t total;          /* expected count of the phase, 0 unknown */
	double t0, last;         /* the phase's start, the last line written */
	int shown;               /* a line is on the terminal */
};

/* Lines are rewritten at most this often (seconds). */
#define PROGRESS_PERIOD 0.25

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct bb_progress *bb_progress_new(FILE *out, const char *prog)
{
	struct bb_progress *p = bb_xcalloc(1, sizeof(*p));
	p->out = out;
	snprintf(p->prog, sizeof(p->prog), "%s", prog);
	p->t0 = now_s();
	return p;
}

void bb_progress_free(struct bb_progress *p)
{
	if (!p)
		return;
	bb_progress_end(p);
	free(p);
}

void bb_progress_phase(struct bb_progress *p, const char *phase, uint64_t total)
{
	if (!p)
		return;
	snprintf(p->phase, sizeof(p->phase), "%s", phase);
	p->total = total;
	p->t0 = now_s();
	p->last = 0;
}

/* 1234567 as "1,234,567". */
static void grouped(uint64_t v, char *buf, size_t len)
{
	char t[32];
	int n = snprintf(t, sizeof(t), "%llu", (unsigned long long)v), k = 0;
	size_t j = 0;
	for (int i = 0; i < n && j + 2 < len; i++) {
		buf[j++] = t[i];
		k = n - i - 1;
		if (k && k % 3 == 0)
			buf[j++] = ',';
	}
	buf[j] = '\0';
}

static void rate_text(double r, char *buf, size_t len)
{
	if (r >= 1e6)
		snprintf(buf, len, "%.2f M/s", r / 1e6);
	else if (r >= 1e3)
		snprintf(buf, len, "%.1f k/s", r / 1e3);
	else
		snprintf(buf, len, "%.0f /s", r);
}

static void eta_text(double s, char *buf, size_t len)
{
	if (s >= 3600)
		snprintf(buf, len, "%d:%02d:%02d", (int)(s / 3600), (int)(s / 60) % 60, (int)s % 60);
	else
		snprintf(buf, len, "%d:%02d", (int)(s / 60), (int)s % 60);
}

/* Whether a line is due now (the first always is); sets *t to now. */
static int due(struct bb_progress *p, double *t)
{
	if (!p || !p->out)
		return 0;
	*t = now_s();
	if (p->shown && *t - p->last < PROGRESS_PERIOD)
		return 0;
	p->last = *t;
	return 1;
}

void bb_progress_update(struct bb_progress *p, uint64_t done, const char *unit)
{
	double t;
	if (!due(p, &t))
		return;
	char d[32], tot[400] = "", r[32] = "", eta[48] = "";
	grouped(done, d, sizeof(d));
	double el = t - p->t0, rate = el > 0.05 ? (double)done / el : 0;
	if (p->total) {
		char g[32];
		grouped(p->total, g, sizeof(g));
		double pct = 100.0 * (double)done / (double)p->total;
		snprintf(tot, sizeof(tot), " of ~%s (%.0f%%)", g, pct > 100 ? 100 : pct);
	}
	if (rate > 0) {
		char rt[24];
		rate_text(rate, rt, sizeof(rt));
		snprintf(r, sizeof(r), ", %s", rt);
		if (p->total > done) {
			char e[24];
			eta_text((double)(p->total - done) / rate, e, sizeof(e));
			snprintf(eta, sizeof(eta), ", ETA %s", e);
		}
	}
	/* \033[K clears what a longer earlier line left */
	fprintf(p->out, "\r%s: %s%s%s%s%s%s%s\033[K", p->prog, p->phase, *p->phase ? ": " : "", d,
	        unit, tot, r, eta);
	fflush(p->out);
	p->shown = 1;
}

void bb_progress_text(struct bb_progress *p, const char *text)
{
	double t;
	if (!due(p, &t))
		return;
	fprintf(p->out, "\r%s: %s\033[K", p->prog, text);
	fflush(p->out);
	p->shown = 1;
}

void bb_progress_end(struct bb_progress *p)
{
	if (!p || !p->out || !p->shown)
		return;
	fputs("\r\033[K", p->out);
	fflush(p->out);
	p->shown = 0;
}

uint64_t bb_progress_estimate_lines(FILE *f)
{
	struct stat sb;
	if (!f || fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size <= 0)
		return 0;
	char buf[1 << 16];
	ssize_t n = pread(fileno(f), buf, sizeof(buf), 0);
	if (n <= 0)
		return 0;
	uint64_t lines = 0;
	for (ssize_t i = 0; i < n; i++)
		lines += buf[i] == '\n';
	if (!lines)
		return 1;
	return (uint64_t)((double)sb.st_size * (double)lines / (double)n);
}

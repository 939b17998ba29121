/* test_convolution.c - unit tests of the convolution algorithm and the delay-graph writers */
/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convolution/conv_int.h"
#include "convolution/convolution.h"
#include "unit.h"
#include "viz/viz.h"

/* A small deterministic generator (xorshift64*), so failures repeat. */
static uint64_t rng_state = 88172645463325252ULL;
static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* A random sparse signal over [0, span): about n non-empty quanta with 1..4 messages. */
static void random_sig(struct conv_sig *s, int64_t span, size_t n)
{
	int64_t *qs = malloc(4 * n * sizeof(*qs));
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t q = (int64_t)(rnd() % (uint64_t)span);
		int m = 1 + (int)(rnd() % 4);
		for (int j = 0; j < m; j++)
			qs[k++] = q;
	}
	qsort(qs, k, sizeof(*qs), cmp_i64);
	conv_sig_from_quanta(s, qs, k);
	free(qs);
}

/* The O(n^2) definition on dense arrays. */
static void reference(const struct conv_sig *s1, const struct conv_sig *s2, int64_t span,
                      int64_t lo, int64_t hi, double *out)
{
	double *a = calloc((size_t)span, sizeof(double)), *b = calloc((size_t)span, sizeof(double));
	for (size_t i = 0; i < s1->n; i++)
		a[s1->q[i]] = s1->w[i];
	for (size_t i = 0; i < s2->n; i++)
		b[s2->q[i]] = s2->w[i];
	for (int64_t d = lo; d <= hi; d++) {
		double sum = 0;
		for (int64_t t = 0; t < span; t++)
			if (t + d >= 0 && t + d < span)
				sum += a[t] * b[t + d];
		out[d - lo] = sum;
	}
	free(a);
	free(b);
}

static double rel_err(const double *x, const double *y, size_t n)
{
	double top = 0, err = 0;
	for (size_t i = 0; i < n; i++) {
		top = fmax(top, fabs(y[i]));
		err = fmax(err, fabs(x[i] - y[i]));
	}
	return top > 0 ? err / top : err;
}

static void xcorr_case(int use_fft, size_t cache_bytes)
{
	const int64_t spans[] = {500, 5000, 60000};
	const int64_t his[] = {0, 37, 400};
	for (size_t si = 0; si < 3; si++) {
		for (size_t hi_i = 0; hi_i < 3; hi_i++) {
			int64_t span = spans[si], lo = -2, hi = his[hi_i];
			size_t L = (size_t)(hi - lo + 1);
			struct conv_sig s1 = {0}, s2 = {0};
			random_sig(&s1, span, (size_t)span / 50 + 3);
			random_sig(&s2, span, (size_t)span / 20 + 5);
			double *want = malloc(L * sizeof(double)),
			       *got = malloc(L * sizeof(double));
			reference(&s1, &s2, span, lo, hi, want);
			struct conv_fft *f = NULL;
			if (use_fft) {
				f = conv_fft_new(lo, hi, cache_bytes);
				conv_xcorr_fft(f, &s1, &s2, 7, got);
				double e1 = rel_err(got, want, L);
				if (!(e1 < 1e-9))
					UNIT_FAIL_("fft span %lld hi %lld: relative error %g",
					           (long long)span, (long long)hi, e1);
				/* again: now from the cache where it holds */
				conv_xcorr_fft(f, &s1, &s2, 7, got);
				conv_fft_free(f);
			} else {
				conv_xcorr_direct(&s1, &s2, lo, hi, got);
			}
			double e = rel_err(got, want, L);
			if (!(e < 1e-9))
				UNIT_FAIL_("%s span %lld hi %lld: relative error %g",
				           use_fft ? "fft" : "direct", (long long)span,
				           (long long)hi, e);
			/* pairs counts exactly the direct method's work */
			uint64_t pairs = conv_xcorr_pairs(&s1, &s2, lo, hi), brute = 0;
			for (size_t i = 0; i < s1.n; i++)
				for (size_t j = 0; j < s2.n; j++)
					brute += s2.q[j] - s1.q[i] >= lo && s2.q[j] - s1.q[i] <= hi;
			CHECK_INT(pairs, brute);
			free(want);
			free(got);
			conv_sig_free(&s1);
			conv_sig_free(&s2);
		}
	}
}

static void test_xcorr_direct(void)
{
	xcorr_case(0, 0);
}

static void test_xcorr_fft(void)
{
	xcorr_case(1, (size_t)64 << 20);
}

static void test_xcorr_fft_nocache(void)
{
	xcorr_case(1, 0);
}

static void test_xcorr_fft_tiny_cache(void)
{
	/* room for about one spectrum: eviction on every block */
	xcorr_case(1, 20000);
}

static void test_fft_cache_reuse(void)
{
	struct conv_sig s1 = {0}, s2 = {0};
	random_sig(&s1, 100000, 800);
	random_sig(&s2, 100000, 3000);
	struct conv_fft *f = conv_fft_new(-2, 100, (size_t)64 << 20);
	double out[103];
	conv_xcorr_fft(f, &s1, &s2, 1, out);
	struct conv_fft_stats a, b;
	conv_fft_stats(f, &a);
	conv_xcorr_fft(f, &s1, &s2, 1, out);
	conv_fft_stats(f, &b);
	CHECK(a.misses > 0);
	CHECK_INT(b.misses, a.misses); /* s2 transformed once per run */
	CHECK_INT(b.hits - a.hits, a.misses);
	CHECK(conv_fft_cost(f, &s1, 1) < conv_fft_cost(f, &s1, 2));
	conv_fft_free(f);
	conv_sig_free(&s1);
	conv_sig_free(&s2);
}

static void test_signal_sqrt(void)
{
	const int64_t qs[] = {0, 0, 0, 0, 3, 7, 7};
	struct conv_sig s = {0};
	conv_sig_from_quanta(&s, qs, 7);
	CHECK_INT(s.n, 3);
	CHECK(fabs(s.w[0] - 2.0) < 1e-12);
	CHECK(fabs(s.w[1] - 1.0) < 1e-12);
	CHECK(fabs(s.w[2] - sqrt(2.0)) < 1e-12);
	CHECK_INT(s.q[2], 7);
	conv_sig_free(&s);
}

static void test_spikes_synthetic(void)
{
	double c[200];
	size_t pos[16];
	for (int i = 0; i < 200; i++)
		c[i] = 1.0 + 0.1 * (double)(rnd() % 10) / 10.0;
	/* flat noise: nothing */
	CHECK_INT(conv_spikes(c, 200, 0, 4, 3, pos, 16), 0);
	/* one clear spike */
	c[50] = 20;
	CHECK_INT(conv_spikes(c, 200, 0, 4, 3, pos, 16), 1);
	CHECK_INT(pos[0], 50);
	/* two maxima with no dip under S between them: one group, whose
	 * largest point is the spike of the first round (the paper's rule) */
	c[51] = 15;
	c[52] = 22;
	size_t n1 = conv_spikes(c, 200, 0, 4, 3, pos, 16);
	CHECK(n1 >= 1 && n1 <= 16 && pos[n1 - 1] == 52); /* increasing order */
	/* later rounds cut groups at the spikes found: the points beside it
	 * may pass as well (the path search's claiming drops such flanks) */
	CHECK_INT(n1, 3);
	/* a separate group further on */
	c[120] = 18;
	CHECK_INT(conv_spikes(c, 200, 0, 4, 3, pos, 16), 4);
	CHECK_INT(pos[3], 120);
	/* a group straddling the start of the search (lag 0) is cut there: the
	 * anti-causal maximum before it does not swallow the causal one after */
	c[50] = c[51] = c[52] = c[120] = 1.0;
	c[9] = 20;
	c[10] = 3;
	c[11] = 18;
	n1 = conv_spikes(c, 200, 0, 4, 3, pos, 16);
	CHECK_INT(pos[0], 9);
	n1 = conv_spikes(c, 200, 10, 4, 3, pos, 16);
	CHECK_INT(n1, 1);
	CHECK_INT(pos[0], 11);
	/* secondary spike beside a primary one, as figure 16 at mu = 5 s:
	 * 0 s strong, 10 s and 15 s weaker on the next lags */
	for (int i = 0; i < 200; i++)
		c[i] = 0.1 * (double)(rnd() % 10) / 10.0;
	c[100] = 100;
	c[102] = 12;
	c[103] = 6;
	c[101] = 2;
	n1 = conv_spikes(c, 200, 0, 4, 3, pos, 16);
	CHECK_INT(n1, 4);
	CHECK_INT(pos[0], 100);
	CHECK_INT(pos[2], 102);
	CHECK_INT(pos[3], 103);
	/* constant: no deviation, no spike */
	for (int i = 0; i < 200; i++)
		c[i] = 3;
	CHECK_INT(conv_spikes(c, 200, 0, 4, 3, pos, 16), 0);
	CHECK_INT(conv_spikes(c, 0, 0, 4, 3, pos, 16), 0);
}

/* Figure 7: s2 holds copies of s1 shifted by two delays, plus noise; the
 * correlation has two spikes, at those shifts. */
static void test_figure7(void)
{
	int64_t q1[400], q2[1200];
	size_t n1 = 0, n2 = 0;
	int64_t t = 0;
	for (int i = 0; i < 400; i++) {
		t += 20 + (int64_t)(rnd() % 40);
		q1[n1++] = t;
	}
	for (size_t i = 0; i < n1; i++) {
		q2[n2++] = q1[i] + (i % 3 == 0 ? 9 : 4);   /* two thirds at 4, one third at 9 */
		q2[n2++] = (int64_t)(rnd() % (uint64_t)t); /* noise */
	}
	qsort(q2, n2, sizeof(*q2), cmp_i64);
	struct conv_sig s1 = {0}, s2 = {0};
	conv_sig_from_quanta(&s1, q1, n1);
	conv_sig_from_quanta(&s2, q2, n2);
	double c[53];
	conv_xcorr_direct(&s1, &s2, -2, 50, c);
	size_t pos[8];
	size_t n = conv_spikes(c, 53, 0, 4, 3, pos, 8);
	CHECK_INT(n, 2);
	CHECK_INT((int64_t)pos[0] - 2, 4);
	CHECK_INT((int64_t)pos[1] - 2, 9);
	CHECK(c[4 + 2] > c[9 + 2]);
	conv_sig_free(&s1);
	conv_sig_free(&s2);
}

#define MS INT64_C(1000000)

/* A->B (CALL), B->C after 5 ms, C->B after 20 ms, B->A after 3 ms; n requests. */
static struct bb_conv *rpc_chain(const struct bb_conv_params *p, int n, int with_paths)
{
	struct bb_err err;
	struct bb_conv *c = bb_conv_new(p, &err);
	int64_t t = 1000 * BB_NS_PER_S;
	char path[32];
	for (int i = 0; i < n; i++) {
		t += 100 * MS + (int64_t)(rnd() % 300) * MS;
		snprintf(path, sizeof(path), "p%d", i);
		const char *pp = with_paths ? path : NULL;
		bb_conv_add(c, t, BB_CALL, "A", "B", NULL, 0, pp, &err);
		bb_conv_add(c, t + 5 * MS, BB_CALL, "B", "C", NULL, 0, pp, &err);
		bb_conv_add(c, t + 25 * MS, BB_RET, "C", "B", NULL, 0, pp, &err);
		bb_conv_add(c, t + 28 * MS, BB_RET, "B", "A", NULL, 0, pp, &err);
	}
	return c;
}

/* How many edges lead from a vertex of node `from` to one of node `to`; the
 * most frequent delay of the last one in *delay. */
static int find_edge(const struct bb_vgraph *g, const char *from, const char *to, int64_t *delay)
{
	int found = 0;
	for (size_t i = 0; i < g->nedges; i++) {
		const struct bb_vedge *e = &g->edges[i];
		if (!strcmp(g->vertices[e->from].node, from) &&
		    !strcmp(g->vertices[e->to].node, to)) {
			if (delay && e->ndelays)
				*delay = e->delays[0].delay_ns;
			found++;
		}
	}
	return found;
}

static void test_path_rpc(void)
{
	struct bb_conv_params p;
	bb_conv_params_default(&p);
	p.quantum_ns = 1 * MS;
	struct bb_conv *c = rpc_chain(&p, 300, 0);
	struct bb_err err;
	CHECK_INT(bb_conv_run(c, &err), 0);
	const struct bb_vgraph *g = bb_conv_graph(c);
	/* A -> B -> C -> B -> A, and nothing else (A->B->A is derived) */
	CHECK_INT(g->nvertices, 5);
	CHECK_INT(g->nedges, 4);
	for (size_t i = 0; i < g->nvertices; i++)
		CHECK_INT(g->vertices[i].id, i);
	const char *want[] = {"A", "B", "C", "B", "A"};
	for (size_t i = 0; i < 5 && i < g->nvertices; i++)
		CHECK_STR(g->vertices[i].node, want[i]);
	int64_t d = -1;
	CHECK_INT(find_edge(g, "B", "C", &d), 1);
	CHECK_INT(d, 5 * MS);
	CHECK_INT(find_edge(g, "C", "B", &d), 1);
	CHECK_INT(d, 20 * MS);
	CHECK_INT(find_edge(g, "B", "A", &d), 1);
	CHECK_INT(d, 3 * MS);
	CHECK_INT(g->edges[0].count, 300);
	struct bb_conv_stats st;
	bb_conv_get_stats(c, &st);
	CHECK_INT(st.derived_suppressed, 1);
	bb_conv_free(c);

	/* --keep-derived shows A -> B -> A too, with the summed delay */
	p.keep_derived = 1;
	c = rpc_chain(&p, 300, 0);
	CHECK_INT(bb_conv_run(c, &err), 0);
	g = bb_conv_graph(c);
	CHECK_INT(g->nvertices, 6);
	CHECK_INT(find_edge(g, "B", "A", NULL), 2);
	bb_conv_free(c);
}

static int graphs_equal(const struct bb_vgraph *a, const struct bb_vgraph *b)
{
	if (a->nvertices != b->nvertices || a->nedges != b->nedges)
		return 0;
	for (size_t i = 0; i < a->nvertices; i++)
		if (strcmp(a->vertices[i].node, b->vertices[i].node))
			return 0;
	for (size_t i = 0; i < a->nedges; i++) {
		const struct bb_vedge *x = &a->edges[i], *y = &b->edges[i];
		if (x->from != y->from || x->to != y->to || x->count != y->count ||
		    x->ndelays != y->ndelays)
			return 0;
		for (size_t k = 0; k < x->ndelays; k++)
			if (x->delays[k].delay_ns != y->delays[k].delay_ns ||
			    x->delays[k].count != y->delays[k].count)
				return 0;
	}
	return 1;
}

static void test_fft_equals_direct(void)
{
	struct bb_conv_params p;
	bb_conv_params_default(&p);
	p.quantum_ns = 1 * MS;
	p.max_delay_ns = 2 * BB_NS_PER_S;
	struct bb_conv *g[3];
	struct bb_err err;
	for (int m = 0; m < 3; m++) {
		rng_state = 12345;
		p.method = m == 0 ? BB_CONV_DIRECT : m == 1 ? BB_CONV_FFT : BB_CONV_AUTO;
		g[m] = rpc_chain(&p, 200, 0);
		CHECK_INT(bb_conv_run(g[m], &err), 0);
	}
	struct bb_conv_stats s0, s1;
	bb_conv_get_stats(g[0], &s0);
	bb_conv_get_stats(g[1], &s1);
	CHECK(s0.xcorr_direct > 0 && s0.xcorr_fft == 0);
	CHECK(s1.xcorr_fft > 0 && s1.xcorr_direct == 0);
	CHECK(graphs_equal(bb_conv_graph(g[0]), bb_conv_graph(g[1])));
	CHECK(graphs_equal(bb_conv_graph(g[0]), bb_conv_graph(g[2])));
	CHECK(bb_conv_graph(g[0])->nedges == 4);
	for (int m = 0; m < 3; m++)
		bb_conv_free(g[m]);
}

static void test_free_form_chain(void)
{
	/* MSG only: X -> Y then Y -> Z 2 s later; Z never replies. Plus unrelated noise. */
	struct bb_conv_params p;
	bb_conv_params_default(&p);
	p.quantum_ns = 100 * MS;
	struct bb_err err;
	struct bb_conv *c = bb_conv_new(&p, &err);
	int64_t t = 0;
	for (int i = 0; i < 200; i++) {
		t += 5 * BB_NS_PER_S + (int64_t)(rnd() % 10000) * MS;
		bb_conv_add(c, t, BB_MSG, "X", "Y", NULL, 0, NULL, &err);
		bb_conv_add(c, t + 2 * BB_NS_PER_S + 10 * MS, BB_MSG, "Y", "Z", NULL, 0, NULL, &err);
		bb_conv_add(c, (int64_t)(rnd() % 2000) * BB_NS_PER_S, BB_MSG, "N1", "N2", NULL, 0, NULL,
		            &err);
	}
	CHECK_INT(bb_conv_run(c, &err), 0);
	const struct bb_vgraph *g = bb_conv_graph(c);
	int64_t d = -1;
	CHECK_INT(find_edge(g, "Y", "Z", &d), 1);
	CHECK_INT(d, 2000 * MS);
	/* N1 is a root too, with its one edge and no further spikes */
	CHECK_INT(find_edge(g, "N1", "N2", NULL), 1);
	CHECK_INT(g->nvertices, 5);
	bb_conv_free(c);
}

static void test_min_count_and_roots(void)
{
	struct bb_conv_params p;
	bb_conv_params_default(&p);
	p.quantum_ns = 1 * MS;
	p.min_count = 1000; /* more than the trace has */
	struct bb_conv *c = rpc_chain(&p, 100, 0);
	struct bb_err err;
	CHECK_INT(bb_conv_run(c, &err), 0);
	CHECK_INT(bb_conv_graph(c)->nedges, 0);
	CHECK_INT(bb_conv_graph(c)->nvertices, 1); /* the root alone */
	bb_conv_free(c);

	const char *roots[] = {"B"};
	bb_conv_params_default(&p);
	p.quantum_ns = 1 * MS;
	p.roots = roots;
	p.nroots = 1;
	c = rpc_chain(&p, 100, 0);
	CHECK_INT(bb_conv_run(c, &err), 0);
	CHECK_STR(bb_conv_graph(c)->vertices[0].node, "B");
	bb_conv_free(c);

	const char *bad[] = {"nosuch"};
	p.roots = bad;
	c = rpc_chain(&p, 10, 0);
	CHECK_INT(bb_conv_run(c, &err), BB_ERR_ARG);
	CHECK_HAS(err.msg, "nosuch");
	bb_conv_free(c);
}

static void test_params(void)
{
	struct bb_conv_params p;
	struct bb_err err;
	bb_conv_params_default(&p);
	p.quantum_ns = 0;
	CHECK(bb_conv_new(&p, &err) == NULL);
	CHECK_HAS(err.msg, "quantum");
	bb_conv_params_default(&p);
	p.spike_n = 2;
	p.spike_s = 3;
	CHECK(bb_conv_new(&p, &err) == NULL);
	bb_conv_params_default(&p);
	p.quantum_ns = 1;
	CHECK(bb_conv_new(&p, &err) == NULL); /* 60 s / 1 ns: window too large */
	CHECK_HAS(err.msg, "2^22");
	bb_conv_free(NULL);
	/* an empty trace runs and yields an empty graph */
	bb_conv_params_default(&p);
	struct bb_conv *c = bb_conv_new(&p, &err);
	CHECK_INT(bb_conv_run(c, &err), 0);
	CHECK_INT(bb_conv_graph(c)->nvertices, 0);
	bb_conv_free(c);
}

static char *slurp(FILE *f)
{
	long n = ftell(f);
	rewind(f);
	char *s = calloc(1, (size_t)n + 1);
	if (fread(s, 1, (size_t)n, f) != (size_t)n)
		s[0] = '\0';
	return s;
}

static void test_truth(void)
{
	struct bb_conv_params p;
	bb_conv_params_default(&p);
	p.quantum_ns = 1 * MS;
	p.truth = 1;
	struct bb_conv *c = rpc_chain(&p, 200, 1);
	struct bb_err err;
	CHECK_INT(bb_conv_run(c, &err), 0);
	FILE *f = tmpfile();
	CHECK_INT(bb_vval_write(f, bb_conv_graph(c)->accuracy, &err), 0);
	char *s = slurp(f);
	CHECK_HAS(s, "\"available\":true");
	CHECK_HAS(s, "\"paths\":{\"false_negatives\":0,\"false_positives\":0,");
	CHECK_HAS(s, "\"fn_rate\":0.0,\"fp_rate\":0.0,\"inferred\":1,");
	CHECK_HAS(s, "\"delays_within_tolerance\":3");
	free(s);
	fclose(f);
	bb_conv_free(c);
}

static void test_dot_escaping(void)
{
	struct bb_vvertex v[2] = {{0, "a\"b\\N"}, {1, "x -> y; }"}};
	struct bb_vdelay d[2] = {{200 * MS, 7}, {10 * MS, 3}};
	struct bb_vedge e = {0, 1, 10, 2, d};
	struct bb_vgraph g = {2, 1, v, &e, NULL, NULL, NULL};
	struct bb_err err;
	FILE *f = tmpfile();
	CHECK_INT(bb_viz_graph_dot(f, &g, &err), 0);
	char *s = slurp(f);
	CHECK_HAS(s, "v0");
	CHECK_HAS(s, "label=\"a\\\"b\\\\N\"");
	CHECK_HAS(s, "\"x -> y; }\"");
	CHECK_HAS(s, "200 ms, 10.0 ms\\n10 msgs");
	free(s);
	fclose(f);
	f = tmpfile();
	CHECK_INT(bb_viz_graph_json(f, &g, &err), 0);
	s = slurp(f);
	CHECK_HAS(s, "\"edges\":[{\"count\":10,\"delays\":[{\"count\":7,\"delay_ns\":200000000},"
	             "{\"count\":3,\"delay_ns\":10000000}],\"from\":0,\"to\":1}]");
	CHECK_HAS(s, "{\"id\":1,\"node\":\"x -> y; }\"}");
	free(s);
	fclose(f);
	f = tmpfile();
	CHECK_INT(bb_viz_graph_text(f, &g, &err), 0);
	s = slurp(f);
	CHECK_HAS(s, "  x -> y; }  [10 msgs; delays 200 ms (7), 10.0 ms (3)]");
	free(s);
	fclose(f);
}

/* 10^8 quanta of 10 ms with a few hundred messages: forced through the FFT
 * path with a 1 MiB cache, only blocks holding messages are transformed, so
 * this finishes quickly and never allocates a signal of the whole duration. */
static void test_long_duration(void)
{
	struct bb_conv_params p;
	bb_conv_params_default(&p);
	p.quantum_ns = 10 * MS;
	p.method = BB_CONV_FFT;
	p.cache_bytes = (size_t)1 << 20;
	struct bb_err err;
	struct bb_conv *c = bb_conv_new(&p, &err);
	int64_t end = INT64_C(100000000) * p.quantum_ns, step = end / 150;
	for (int64_t t = 0; t < end - step; t += step) {
		bb_conv_add(c, t, BB_MSG, "src", "mid", NULL, 0, NULL, &err);
		bb_conv_add(c, t + 300 * MS, BB_MSG, "mid", "dst", NULL, 0, NULL, &err);
	}
	CHECK_INT(bb_conv_run(c, &err), 0);
	struct bb_conv_stats st;
	bb_conv_get_stats(c, &st);
	CHECK(st.duration_quanta > INT64_C(99000000));
	CHECK(st.xcorr_fft == 1);
	CHECK(st.peak_cache_bytes <= ((size_t)1 << 20));
	int64_t d = -1;
	CHECK_INT(find_edge(bb_conv_graph(c), "mid", "dst", &d), 1);
	CHECK_INT(d, 300 * MS);
	bb_conv_free(c);
}

/* A path that returns to its root ends there: the root's next request is not
 * a continuation, even when it follows at a steady delay. */
static void test_root_ends_path(void)
{
	struct bb_conv_params p;
	bb_conv_params_default(&p);
	p.quantum_ns = 1 * MS;
	struct bb_err err;
	struct bb_conv *c = bb_conv_new(&p, &err);
	int64_t t = 0;
	for (int i = 0; i < 200; i++) {
		t += 500 * MS + (int64_t)(rnd() % 300) * MS;
		bb_conv_add(c, t, BB_CALL, "cl", "srv", NULL, 0, NULL, &err);
		bb_conv_add(c, t + 20 * MS, BB_RET, "srv", "cl", NULL, 0, NULL, &err);
		bb_conv_add(c, t + 120 * MS, BB_MSG, "cl", "log", NULL, 0, NULL,
		            &err); /* caused by the reply */
	}
	CHECK_INT(bb_conv_run(c, &err), 0);
	const struct bb_vgraph *g = bb_conv_graph(c);
	CHECK_INT(find_edge(g, "srv", "cl", NULL), 1);
	CHECK_INT(find_edge(g, "cl", "log", NULL), 1); /* only as the root's own edge */
	CHECK_INT(g->nedges, 3);
	bb_conv_free(c);
}

static const struct unit_test tests[] = {
    {"long_duration", test_long_duration},
    {"root_ends_path", test_root_ends_path},
    {"signal_sqrt", test_signal_sqrt},
    {"xcorr_direct", test_xcorr_direct},
    {"xcorr_fft", test_xcorr_fft},
    {"xcorr_fft_nocache", test_xcorr_fft_nocache},
    {"xcorr_fft_tiny_cache", test_xcorr_fft_tiny_cache},
    {"fft_cache_reuse", test_fft_cache_reuse},
    {"spikes_synthetic", test_spikes_synthetic},
    {"figure7", test_figure7},
    {"path_rpc", test_path_rpc},
    {"fft_equals_direct", test_fft_equals_direct},
    {"free_form_chain", test_free_form_chain},
    {"min_count_and_roots", test_min_count_and_roots},
    {"params", test_params},
    {"truth", test_truth},
    {"dot_escaping", test_dot_escaping},
};

UNIT_MAIN(tests)

/* test_nesting.c - unit tests of the nesting algorithm on hand-made traces */
/* SPDX-License-Identifier: MIT */
#include <math.h>

#include "nesting/nest_int.h"
#include "unit.h"

#define MS INT64_C(1000000)

/* Runs the algorithm over trace text; returns the run (caller frees) and fills
 * the patterns in rank order. */
static struct bb_nest *run(const char *text, const struct bb_nest_params *pp,
                           enum bb_nest_mode mode, const struct bb_vpatterns **out)
{
	struct bb_nest_params p;
	if (pp)
		p = *pp;
	else
		bb_nest_params_init(&p);
	struct bb_nest *n = bb_nest_new(&p, mode);
	struct bb_err err = {{0}};
	int rc = bb_nest_run_mem(n, text, strlen(text), "t.tr", NULL, &err);
	if (rc != 0)
		UNIT_FAIL_("run failed: %d %s", rc, err.msg);
	if (out)
		*out = bb_nest_patterns(n);
	return n;
}

/* The canonical text of pattern i, checked against want. */
static void check_key(struct bb_nest *n, size_t i, const char *want)
{
	char *k = bb_nest_pattern_key(n, i);
	CHECK_STR(k, want);
	free(k);
}

static void test_bins(void)
{
	struct nest_bins b;
	nest_bins_init(&b, 1000, INT64_C(7200) * BB_NS_PER_S, 1.05);
	CHECK(b.n > 460 && b.n < 470);
	CHECK_INT(nest_bin(&b, -5), 0);
	CHECK_INT(nest_bin(&b, 999), 0);
	CHECK_INT(nest_bin(&b, 1000), 1);
	CHECK_INT(nest_bin(&b, 1049), 1);
	CHECK_INT(nest_bin(&b, 1050), 2);
	CHECK_INT(nest_bin(&b, INT64_C(7200) * BB_NS_PER_S), b.n - 1);
	/* every bin holds what its range says */
	uint32_t last = 0;
	for (int64_t d = 1000; d < INT64_C(7200) * BB_NS_PER_S; d = d * 21 / 20 + 7) {
		uint32_t k = nest_bin(&b, d);
		int64_t lo, hi;
		nest_bin_range(&b, k, &lo, &hi);
		if (d < lo || d >= hi)
			UNIT_FAIL_("%lld not in bin %u [%lld, %lld)", (long long)d, k, (long long)lo,
			           (long long)hi);
		CHECK(k >= last);
		last = k;
	}
}

static void test_hist_quantiles(void)
{
	struct nest_bins b;
	nest_bins_init(&b, 1000, INT64_C(7200) * BB_NS_PER_S, 1.05);
	struct nest_hist h = {0};
	for (int i = 1; i <= 100; i++)
		nest_hist_add(&h, &b, i * MS);
	CHECK_INT(h.n, 100);
	CHECK_INT(h.max, 100 * MS);
	int64_t p50 = nest_hist_quantile(&h, &b, 0.5), p90 = nest_hist_quantile(&h, &b, 0.9);
	CHECK(llabs(p50 - 50 * MS) <= 3 * MS);
	CHECK(llabs(p90 - 90 * MS) <= 5 * MS);
	CHECK(nest_hist_quantile(&h, &b, 1.0) <= 100 * MS);
	nest_hist_free(&h);
	nest_hist_add(&h, &b, 42);
	CHECK_INT(nest_hist_quantile(&h, &b, 0.99), 42); /* clamped to what was seen */
	nest_hist_free(&h);
}

/* Figure 3: A calls B, B calls C then D before returning. */
static const char fig3[] = "#bbtrace 1\n"
                           "1	CALL	A	B	1\n"
                           "3	CALL	B	C	2\n"
                           "5	RET	C	B	2\n"
                           "7	CALL	B	D	3\n"
                           "9	RET	D	B	3\n"
                           "11	RET	B	A	1\n";

static void test_figure3(void)
{
	const struct bb_vpatterns *p;
	struct bb_nest *n = run(fig3, NULL, BB_NEST_INFER, &p);
	CHECK_INT(p->n, 1);
	check_key(n, 0, "A(B(C D))");
	const struct bb_vnode *a = &p->v[0].root, *b = &a->children[0];
	CHECK_STR(a->name, "A");
	CHECK_INT(a->nchildren, 1);
	CHECK_INT(p->v[0].count, 1);
	CHECK_INT(p->v[0].total_latency_ns, 10 * BB_NS_PER_S);
	CHECK_INT(b->latency.max, 10 * BB_NS_PER_S);
	CHECK_INT(b->call_delay.n, 0);
	CHECK_STR(b->children[0].name, "C");
	CHECK_INT(b->children[0].call_delay.max, 2 * BB_NS_PER_S);
	CHECK_INT(b->children[0].latency.max, 2 * BB_NS_PER_S);
	CHECK_STR(b->children[1].name, "D");
	CHECK_INT(b->children[1].call_delay.max, 6 * BB_NS_PER_S);
	struct bb_nest_stats st;
	bb_nest_get_stats(n, &st);
	CHECK_INT(st.messages, 6);
	CHECK_INT(st.call_pairs, 3);
	CHECK_INT(st.children, 2);
	CHECK(st.mean_parallelism == 1.0);
	CHECK_INT(st.roots, 1);
	CHECK(bb_nest_score(n, "A", "B", "C", 2 * BB_NS_PER_S) == 1.0);
	CHECK(bb_nest_score(n, "A", "B", "D", 6 * BB_NS_PER_S) == 1.0);
	bb_nest_free(n);
}

/* Figure 5: two B->C calls nested in two A->B calls. The medium delay (30 ms)
 * occurs twice, the short and long ones once: each child goes to the parent
 * 30 ms before it, not swapped (which would give 20 and 40 ms). */
static const char fig5[] = "#bbtrace 1\n"
                           "0.000	CALL	A	B	1\n"
                           "0.010	CALL	A	B	2\n"
                           "0.030	CALL	B	C	-\n"
                           "0.040	CALL	B	C	-\n"
                           "0.045	RET	C	B	-\n"
                           "0.050	RET	C	B	-\n"
                           "0.060	RET	B	A	1\n"
                           "0.070	RET	B	A	2\n";

static void test_figure5(void)
{
	const struct bb_vpatterns *p;
	struct bb_nest *n = run(fig5, NULL, BB_NEST_INFER, &p);
	CHECK(fabs(bb_nest_score(n, "A", "B", "C", 30 * MS) - 1.0) < 1e-9);
	CHECK(fabs(bb_nest_score(n, "A", "B", "C", 20 * MS) - 0.5) < 1e-9);
	CHECK(fabs(bb_nest_score(n, "A", "B", "C", 40 * MS) - 0.5) < 1e-9);
	CHECK_INT(p->n, 1);
	check_key(n, 0, "A(B(C))");
	CHECK_INT(p->v[0].count, 2);
	const struct bb_vnode *c = &p->v[0].root.children[0].children[0];
	CHECK_INT(c->call_delay.n, 2);
	CHECK_INT(c->call_delay.max, 30 * MS);
	CHECK_INT(c->call_delay.p50, 30 * MS);
	struct bb_nest_stats st;
	bb_nest_get_stats(n, &st);
	CHECK(st.mean_parallelism == 2.0);
	bb_nest_free(n);
}

/* Ids that repeat or are missing: each return takes the earliest unmatched
 * call between the two nodes; strays are counted, not fatal. */
static void test_call_pairs(void)
{
	const char *t = "#bbtrace 1\n"
	                "1	CALL	A	B	-\n"
	                "2	CALL	A	B	-\n"
	                "3	RET	B	A	-\n"
	                "4	RET	B	A	-\n"
	                "5	RET	B	A	-\n"   /* no call left */
	                "6	CALL	A	B	x\n"
	                "7	CALL	A	B	x\n"
	                "8	RET	B	A	x\n"
	                "9	RET	B	A	y\n"   /* wrong id */
	                "10	CALL	A	C	z\n"   /* never returns */
	                "11	MSG	A	C	-\n";
	const struct bb_vpatterns *p;
	struct bb_nest *n = run(t, NULL, BB_NEST_INFER, &p);
	struct bb_nest_stats st;
	bb_nest_get_stats(n, &st);
	CHECK_INT(st.messages, 11);
	CHECK_INT(st.calls, 5);
	CHECK_INT(st.returns, 5);
	CHECK_INT(st.call_pairs, 3);
	CHECK_INT(st.unmatched_returns, 2);
	CHECK_INT(st.unmatched_calls, 2);
	CHECK_INT(st.evicted, 0);
	CHECK_INT(p->n, 1);
	CHECK_INT(p->v[0].count, 3);
	/* earliest-unmatched: 1-3 and 2-4 (2 s each), then 6-8 */
	CHECK_INT(p->v[0].root.latency.max, 2 * BB_NS_PER_S);
	CHECK_INT(p->v[0].total_latency_ns, 6 * BB_NS_PER_S);
	bb_nest_free(n);
}

static void test_eviction(void)
{
	const char *t = "#bbtrace 1\n"
	                "0	CALL	A	B	1\n"
	                "5	CALL	A	B	2\n"
	                "6	RET	B	A	2\n"
	                "100	CALL	A	B	3\n"
	                "101	RET	B	A	1\n" /* too late: its call was evicted */
	                "102	RET	B	A	3\n";
	struct bb_nest_params p;
	bb_nest_params_init(&p);
	p.open_timeout_ns = 50 * BB_NS_PER_S;
	struct bb_nest *n = run(t, &p, BB_NEST_INFER, NULL);
	struct bb_nest_stats st;
	bb_nest_get_stats(n, &st);
	CHECK_INT(st.evicted, 1);
	CHECK_INT(st.unmatched_calls, 1);
	CHECK_INT(st.unmatched_returns, 1);
	CHECK_INT(st.call_pairs, 2);
	CHECK_INT(st.roots, 2);
	bb_nest_free(n);
}

/* X->B never returns (its return was lost). Pass 1 notes it, so pass 2 does
 * not offer it as a parent, although as the earliest it would win the tie and
 * take the child down with it. */
static void test_lost_return(void)
{
	const char *t = "#bbtrace 1\n"
	                "0	CALL	X	B	1\n"
	                "0	CALL	Y	B	1\n"
	                "10	CALL	B	C	a\n"
	                "20	RET	C	B	a\n"
	                "100	RET	B	Y	1\n";
	const struct bb_vpatterns *v;
	struct bb_nest *n = run(t, NULL, BB_NEST_INFER, &v);
	CHECK_INT(v->n, 1);
	check_key(n, 0, "Y(B(C))");
	struct bb_nest_stats st;
	bb_nest_get_stats(n, &st);
	CHECK_INT(st.unmatched_calls, 1);
	CHECK_INT(st.orphans, 0);
	CHECK(st.mean_parallelism == 1.0);
	bb_nest_free(n);
}

/* X->B and Y->B both begin at 0; B->C children are equally likely under
 * either. Ties go to the earliest parent (X). With z = 1 the second child
 * meets X's factor (1 + 1)^-1 and goes to Y; the third is a tie again (one
 * child each) and goes to X. A parent with no children is never penalised. */
static const char tie[] = "#bbtrace 1\n"
                          "0	CALL	X	B	1	path=p1\n"
                          "0	CALL	Y	B	1	path=p2\n"
                          "10	CALL	B	C	a	path=p2\n"
                          "20	RET	C	B	a\n"
                          "30	CALL	B	C	b	path=p2\n"
                          "40	RET	C	B	b\n"
                          "50	CALL	B	C	c	path=p2\n"
                          "60	RET	C	B	c\n"
                          "100	RET	B	X	1\n"
                          "100	RET	B	Y	1\n";

static void test_ties_and_penalties(void)
{
	struct bb_nest_params p;
	bb_nest_params_init(&p);
	const struct bb_vpatterns *v;
	struct bb_nest *n = run(tie, &p, BB_NEST_INFER, &v);
	CHECK_INT(v->n, 2);
	check_key(n, 0, "X(B(C C C))");
	check_key(n, 1, "Y(B)");
	bb_nest_free(n);

	p.penalty_z = 1;
	n = run(tie, &p, BB_NEST_INFER, &v);
	check_key(n, 0, "X(B(C C))");
	check_key(n, 1, "Y(B(C))");
	bb_nest_free(n);

	p.penalty_z = 0;
	p.penalty_y = 1;
	n = run(tie, &p, BB_NEST_INFER, &v);
	check_key(n, 0, "X(B(C C))");
	check_key(n, 1, "Y(B(C))");
	bb_nest_free(n);

	/* children that do not overlap are not touched by the overlap penalty */
	p.penalty_y = 0;
	p.penalty_x = 10;
	n = run(tie, &p, BB_NEST_INFER, &v);
	check_key(n, 0, "X(B(C C C))");
	bb_nest_free(n);
}

/* Three overlapping B->C children under two equal parents: x = 2 sends the
 * second to Y (X's factor is 2^-2), the third ties and goes to X. */
static void test_overlap_penalty(void)
{
	const char *t = "#bbtrace 1\n"
	                "0	CALL	X	B	1\n"
	                "0	CALL	Y	B	1\n"
	                "10	CALL	B	C	a\n"
	                "10	CALL	B	C	b\n"
	                "10	CALL	B	C	c\n"
	                "20	RET	C	B	a\n"
	                "20	RET	C	B	b\n"
	                "20	RET	C	B	c\n"
	                "100	RET	B	X	1\n"
	                "100	RET	B	Y	1\n";
	const struct bb_vpatterns *v;
	struct bb_nest *n = run(t, NULL, BB_NEST_INFER, &v);
	check_key(n, 0, "X(B(C C))");
	check_key(n, 1, "Y(B(C))");
	bb_nest_free(n);
	struct bb_nest_params p;
	bb_nest_params_init(&p);
	p.penalty_x = 0;
	n = run(t, &p, BB_NEST_INFER, &v);
	check_key(n, 0, "X(B(C C C))");
	bb_nest_free(n);
}

static void test_oracle(void)
{
	const struct bb_vpatterns *v;
	struct bb_nest *n = run(tie, NULL, BB_NEST_ORACLE, &v);
	CHECK_INT(v->n, 2);
	/* equal total latency and count: ranked by node order, X first */
	check_key(n, 0, "X(B)");
	check_key(n, 1, "Y(B(C C C))");
	bb_nest_free(n);
}

/* Inferred X(B(C C C)) + Y(B) against the truth Y(B(C C C)) + X(B). */
static void test_truth(void)
{
	struct bb_nest *inf = run(tie, NULL, BB_NEST_INFER, NULL);
	struct bb_nest *orc = run(tie, NULL, BB_NEST_ORACLE, NULL);
	struct bb_nest_accuracy a;
	bb_nest_compare(inf, orc, &a);
	CHECK_INT(a.patterns_fp, 2);
	CHECK_INT(a.patterns_fn, 2);
	CHECK_INT(a.instances_fp, 2);
	CHECK_INT(a.instances_fn, 2);
	CHECK_INT(a.messages_true, 5);
	CHECK_INT(a.messages_fp, 5);
	CHECK_INT(a.messages_fn, 5);
	CHECK_INT(a.topn_fn[0][0], 1);
	CHECK_INT(a.topn_fn[1][0], 1);
	CHECK_INT(a.topn_fn[0][1], 2);
	CHECK_INT(a.topn_fn[2][29], 2);
	struct bb_vval *j = bb_nest_accuracy_vval(&a);
	CHECK(j != NULL);
	bb_vval_free(j);
	/* a run scored against itself is perfect */
	bb_nest_compare(orc, orc, &a);
	CHECK_INT(a.patterns_fp + a.patterns_fn + a.instances_fp + a.instances_fn, 0);
	CHECK_INT(a.topn_fn[0][29], 0);
	bb_nest_free(inf);
	bb_nest_free(orc);
}

/* The paper's example in 7.5.1 through the pattern counts: truth A-B-C-D
 * twice; found A-B-C-D, A-B and C-D once each. */
static void test_truth_paper_example(void)
{
	const char *truth = "#bbtrace 1\n"
	                    "1	CALL	A	B	1\n2	CALL	B	C	1\n3	CALL	C	D	1\n"
	                    "4	RET	D	C	1\n5	RET	C	B	1\n6	RET	B	A	1\n"
	                    "11	CALL	A	B	2\n12	CALL	B	C	2\n13	CALL	C	D	2\n"
	                    "14	RET	D	C	2\n15	RET	C	B	2\n16	RET	B	A	2\n";
	const char *found = "#bbtrace 1\n"
	                    "1	CALL	A	B	1\n2	CALL	B	C	1\n3	CALL	C	D	1\n"
	                    "4	RET	D	C	1\n5	RET	C	B	1\n6	RET	B	A	1\n"
	                    "11	CALL	A	B	2\n12	RET	B	A	2\n"
	                    "13	CALL	C	D	2\n14	RET	D	C	2\n";
	struct bb_nest *orc = run(truth, NULL, BB_NEST_INFER, NULL);
	struct bb_nest *inf = run(found, NULL, BB_NEST_INFER, NULL);
	struct bb_nest_accuracy a;
	bb_nest_compare(inf, orc, &a);
	CHECK_INT(a.patterns_fp, 2);
	CHECK_INT(a.patterns_fn, 0);
	CHECK_INT(a.instances_fp, 2);
	CHECK_INT(a.instances_fn, 1);
	CHECK_INT(a.messages_true, 6);
	CHECK_INT(a.messages_fn, 3);
	bb_nest_free(inf);
	bb_nest_free(orc);
}

/* B's clock runs 5 ms slow: the child call B->C seems to leave before its
 * parent's call arrives. A 10 ms skew window restores the nesting. */
static void test_skew_window(void)
{
	const char *t = "#bbtrace 1\n"
	                "0.995	CALL	B	C	1\n"
	                "1.000	CALL	A	B	1\n"
	                "1.020	RET	C	B	1\n"
	                "1.100	RET	B	A	1\n";
	const struct bb_vpatterns *v;
	struct bb_nest *n = run(t, NULL, BB_NEST_INFER, &v);
	CHECK_INT(v->n, 2);
	bb_nest_free(n);
	struct bb_nest_params p;
	bb_nest_params_init(&p);
	p.skew_window_ns = 10 * MS;
	n = run(t, &p, BB_NEST_INFER, &v);
	CHECK_INT(v->n, 1);
	check_key(n, 0, "A(B(C))");
	bb_nest_free(n);
	/* returns skewed the other way: the parent seems to return first */
	const char *t2 = "#bbtrace 1\n"
	                 "1.000	CALL	A	B	1\n"
	                 "1.010	CALL	B	C	1\n"
	                 "1.095	RET	B	A	1\n"
	                 "1.100	RET	C	B	1\n"
	                 "2	MSG	A	B	-\n";
	n = run(t2, &p, BB_NEST_INFER, &v);
	CHECK_INT(v->n, 1);
	check_key(n, 0, "A(B(C))");
	bb_nest_free(n);
}

static void test_smoothing(void)
{
	struct bb_nest_params p;
	bb_nest_params_init(&p);
	p.smooth_sigma = 2;
	struct bb_nest *n = run(fig5, &p, BB_NEST_INFER, NULL);
	double peak = bb_nest_score(n, "A", "B", "C", 30 * MS);
	double side = bb_nest_score(n, "A", "B", "C", 30 * MS * 105 / 100 + 1);
	CHECK(peak < 1.0 && peak > 0.1);
	CHECK(side > 0 && side < peak);
	bb_nest_free(n);
}

/* Memory follows open calls, not trace length: 20,000 sequential requests
 * never hold more than a handful of calls. */
static void test_streaming_memory(void)
{
	size_t cap = 20000 * 200, len = 0;
	char *t = bb_xmalloc(cap);
	len += (size_t)snprintf(t, cap, "#bbtrace 1\n");
	for (int i = 0; i < 20000; i++) {
		int64_t base = (int64_t)i * 10;
		len += (size_t)snprintf(t + len, cap - len,
		                        "%lld.001	CALL	client	web	%d\n"
		                        "%lld.002	CALL	web	db	%d\n"
		                        "%lld.004	RET	db	web	%d\n"
		                        "%lld.006	RET	web	client	%d\n",
		                        (long long)base, i, (long long)base, i, (long long)base, i,
		                        (long long)base, i);
	}
	const struct bb_vpatterns *v;
	struct bb_nest *n = run(t, NULL, BB_NEST_INFER, &v);
	struct bb_nest_stats st;
	bb_nest_get_stats(n, &st);
	CHECK_INT(st.call_pairs, 40000);
	CHECK(st.peak_open <= 4);
	CHECK_INT(v->n, 1);
	CHECK_INT(v->v[0].count, 20000);
	check_key(n, 0, "client(web(db))");
	bb_nest_free(n);
	free(t);
}

static void test_rank_and_prune(void)
{
	/* A(B) three times, short; A(C) once, long */
	const char *t = "#bbtrace 1\n"
	                "1	CALL	A	B	1\n1.1	RET	B	A	1\n"
	                "2	CALL	A	B	2\n2.1	RET	B	A	2\n"
	                "3	CALL	A	B	3\n3.1	RET	B	A	3\n"
	                "4	CALL	A	C	1\n9	RET	C	A	1\n";
	struct bb_nest_params p;
	bb_nest_params_init(&p);
	const struct bb_vpatterns *v;
	struct bb_nest *n = run(t, &p, BB_NEST_INFER, &v);
	check_key(n, 0, "A(C)");
	bb_nest_free(n);
	p.rank = BB_NEST_RANK_COUNT;
	n = run(t, &p, BB_NEST_INFER, &v);
	check_key(n, 0, "A(B)");
	CHECK_INT(v->n, 2);
	bb_nest_free(n);
	p.min_count = 2;
	n = run(t, &p, BB_NEST_INFER, &v);
	CHECK_INT(v->n, 1);
	bb_nest_free(n);
	p.min_count = 0;
	p.top = 1;
	n = run(t, &p, BB_NEST_INFER, &v);
	CHECK_INT(v->n, 1);
	bb_nest_free(n);
}

static void test_parse_error(void)
{
	const char *t = "#bbtrace 1\n1	CALL	A	B	1\n17x	RET	B	A	1\n";
	struct bb_nest_params p;
	bb_nest_params_init(&p);
	struct bb_nest *n = bb_nest_new(&p, BB_NEST_INFER);
	struct bb_err err = {{0}};
	int rc = bb_nest_run_mem(n, t, strlen(t), "t.tr", NULL, &err);
	CHECK_INT(rc, BB_ERR_PARSE);
	CHECK_HAS(err.msg, "t.tr:3");
	bb_nest_free(n);
}

static void test_params_check(void)
{
	struct bb_nest_params p;
	bb_nest_params_init(&p);
	struct bb_err err = {{0}};
	CHECK_INT(bb_nest_params_check(&p, &err), 0);
	p.bin_max_ns = p.bin_min_ns;
	CHECK(bb_nest_params_check(&p, &err) < 0);
	bb_nest_params_init(&p);
	p.penalty_x = -1;
	CHECK(bb_nest_params_check(&p, &err) < 0);
}

static const struct unit_test tests[] = {
	{"bins", test_bins},
	{"hist_quantiles", test_hist_quantiles},
	{"figure3", test_figure3},
	{"figure5", test_figure5},
	{"call_pairs", test_call_pairs},
	{"eviction", test_eviction},
	{"lost_return", test_lost_return},
	{"ties_and_penalties", test_ties_and_penalties},
	{"overlap_penalty", test_overlap_penalty},
	{"oracle", test_oracle},
	{"truth", test_truth},
	{"truth_paper_example", test_truth_paper_example},
	{"skew_window", test_skew_window},
	{"smoothing", test_smoothing},
	{"streaming_memory", test_streaming_memory},
	{"rank_and_prune", test_rank_and_prune},
	{"parse_error", test_parse_error},
	{"params_check", test_params_check},
};

UNIT_MAIN(tests)

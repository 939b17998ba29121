/* test_nesting.c - unit tests of the nesting algorithm on hand-made traces */
/* SPDX-License-Identifier: MIT */
#include <math.h>

#include "nesting/nest_int.h"
#include "unit.h"

#define MS INT64_C(1000000)

/* The paper's greedy choice, the default before the automatic one (most
 * tests here are about it): bbnest --greedy. */
static void greedy_params(struct bb_nest_params *p)
{
	bb_nest_params_init(p);
	p->return_score = p->global = 0;
}

/* The greedy choice with the scoreboard's raw masses per bin, as the paper
 * counts them (no nearest-neighbour densities, which spread a few children's
 * mass over the bins around it). */
static void raw_params(struct bb_nest_params *p)
{
	greedy_params(p);
	p->density_mass = 0;
}

/* Runs the algorithm over trace text; returns the run (caller frees) and fills
 * the patterns in rank order. */
static struct bb_nest *run(const char *text, const struct bb_nest_params *pp,
                           enum bb_nest_mode mode, const struct bb_vpatterns **out)
{
	struct bb_nest_params p;
	if (pp)
		p = *pp;
	else
		greedy_params(&p);
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
	nest_bins_free(&b);
}

/* The fast bin lookup (octave cells and edges) agrees with the log() formula
 * everywhere, including every edge and its neighbours, for several ranges. */
static void test_bins_fast(void)
{
	static const struct {
		int64_t min, max;
		double base;
	} cases[] = {
		{1000, INT64_C(7200) * BB_NS_PER_S, 1.05},
		{1, 10 * BB_NS_PER_S, 1.3},
		{1, 1000000, 1.01},
		{1000, INT64_C(1000000000000), 1.01},
		{100000, INT64_C(1000000000), 1.0002},
		{37, INT64_C(123456789), 1.7},
		{1000, 2000, 1.5},
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct nest_bins b;
		nest_bins_init(&b, cases[c].min, cases[c].max, cases[c].base);
		uint64_t bad = 0;
		for (uint32_t k = 0; k < b.n; k++) {
			int64_t lo, hi;
			nest_bin_range(&b, k, &lo, &hi);
			for (int64_t e = -2; e <= 2; e++) {
				int64_t ds[2] = {lo + e, hi == INT64_MAX ? lo + 7 : hi + e};
				for (int i = 0; i < 2; i++)
					if (nest_bin(&b, ds[i]) != nest_bin_slow(&b, ds[i]) && bad++ < 5)
						UNIT_FAIL_("case %zu: d %lld: fast %u, log %u", c,
						           (long long)ds[i], nest_bin(&b, ds[i]),
						           nest_bin_slow(&b, ds[i]));
			}
		}
		for (int64_t d = 1; d < cases[c].max * 2; d = d + 1 + d / 997)
			if (nest_bin(&b, d) != nest_bin_slow(&b, d) && bad++ < 5)
				UNIT_FAIL_("case %zu: d %lld: fast %u, log %u", c, (long long)d,
				           nest_bin(&b, d), nest_bin_slow(&b, d));
		CHECK_INT(bad, 0);
		nest_bins_free(&b);
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
	nest_bins_free(&b);
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
	struct bb_nest_params pr;
	raw_params(&pr);
	struct bb_nest *n = run(fig5, &pr, BB_NEST_INFER, &p);
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
	greedy_params(&p);
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

/* The capture ends while X->B is in flight (open for less time than the
 * longest call into B took): pass 2 offers it as a parent, and its child
 * B->C goes down with it (orphaned) instead of into Y's path, where the
 * delays say it is not (X's call 1 before it, Y's 11; B->C came 1 after
 * its parent's call both times it was sure). */
static void test_in_flight_at_end(void)
{
	const char *t = "#bbtrace 1\n"
	                "0	CALL	Y	B	1\n"
	                "1	CALL	B	C	a\n"
	                "2	RET	C	B	a\n"
	                "100	RET	B	Y	1\n"
	                "200	CALL	Z	B	2\n"
	                "201	CALL	B	C	b\n"
	                "202	RET	C	B	b\n"
	                "300	RET	B	Z	2\n"
	                "400	CALL	Y	B	3\n"
	                "410	CALL	X	B	4\n"
	                "411	CALL	B	C	c\n"
	                "412	RET	C	B	c\n"
	                "480	RET	B	Y	3\n"
	                "490	MSG	Q	R	-\n";
	const struct bb_vpatterns *v;
	struct bb_nest *n = run(t, NULL, BB_NEST_INFER, &v);
	struct bb_nest_stats st;
	bb_nest_get_stats(n, &st);
	CHECK_INT(st.unmatched_calls, 1);
	CHECK_INT(st.orphans, 1);
	CHECK_INT(st.roots, 3);
	int alone = 0;
	for (size_t i = 0; i < v->n; i++) {
		char *k = bb_nest_pattern_key(n, i);
		alone += strcmp(k, "Y(B)") == 0;
		free(k);
	}
	CHECK_INT(alone, 1);
	bb_nest_free(n);
}

/* The capture begins while Y's call into B is in flight: its return is
 * unmatched, and B's call to C at 1 (Y's request's) has no open call into B
 * but that one. The return came sooner after the capture's first message
 * than the longest call into B took (100): Y's call becomes an early call,
 * made at the capture's start, which takes the child, and it and the child
 * make no instance (1 orphaned). A return at 800, long after the start, is
 * a lost call message's: it makes no call. */
static void test_in_flight_at_start(void)
{
	const char *t = "#bbtrace 1\n"
	                "0	MSG	Q	R	-\n"
	                "1	CALL	B	C	a\n"
	                "2	RET	C	B	a\n"
	                "5	RET	B	Y	1\n"
	                "200	CALL	Z	B	2\n"
	                "201	CALL	B	C	b\n"
	                "202	RET	C	B	b\n"
	                "300	RET	B	Z	2\n"
	                "400	CALL	Z	B	3\n"
	                "401	CALL	B	C	c\n"
	                "402	RET	C	B	c\n"
	                "480	RET	B	Z	3\n"
	                "800	RET	B	Y	9\n";
	const struct bb_vpatterns *v;
	struct bb_nest *n = run(t, NULL, BB_NEST_INFER, &v);
	struct bb_nest_stats st;
	bb_nest_get_stats(n, &st);
	CHECK_INT(st.unmatched_returns, 2);
	CHECK_INT(st.orphans, 1);
	CHECK_INT(v->n, 1);
	check_key(n, 0, "Z(B(C))");
	CHECK_INT(v->v[0].count, 2);
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
	greedy_params(&p);
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
	greedy_params(&p);
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

/* The oracle's parent among the calls of the child's path instance: a
 * client's request that calls B twice in turn, each B call calling C, and a
 * B that calls B, whose inner call calls C. Each C goes to the B call whose
 * times nest it (the first call of the path took the second's child, inside
 * the 100 ms window), and the inner of two nested calls takes it (the
 * bound's truth is the same, nest_path_better). */
static void test_oracle_path(void)
{
	const char *t = "#bbtrace 1\n"
	                "1.000\tCALL\tclient\tA\ta1\tpath=p1\n"
	                "1.001\tCALL\tA\tB\tb1\tpath=p1\n"
	                "1.002\tCALL\tB\tC\tc1\tpath=p1\n"
	                "1.003\tRET\tC\tB\tc1\tpath=p1\n"
	                "1.004\tRET\tB\tA\tb1\tpath=p1\n"
	                "1.005\tCALL\tA\tB\tb2\tpath=p1\n"
	                "1.006\tCALL\tB\tC\tc2\tpath=p1\n"
	                "1.007\tRET\tC\tB\tc2\tpath=p1\n"
	                "1.008\tRET\tB\tA\tb2\tpath=p1\n"
	                "1.009\tRET\tA\tclient\ta1\tpath=p1\n"
	                "2.000\tCALL\tclient\tB\tb3\tpath=p2\n"
	                "2.001\tCALL\tB\tB\tb4\tpath=p2\n"
	                "2.002\tCALL\tB\tC\tc3\tpath=p2\n"
	                "2.003\tRET\tC\tB\tc3\tpath=p2\n"
	                "2.004\tRET\tB\tB\tb4\tpath=p2\n"
	                "2.005\tRET\tB\tclient\tb3\tpath=p2\n";
	const struct bb_vpatterns *v;
	struct bb_nest *n = run(t, NULL, BB_NEST_ORACLE, &v);
	CHECK_INT(v->n, 2);
	for (size_t i = 0; i < v->n; i++) {
		char *k = bb_nest_pattern_key(n, i);
		if (strcmp(k, "client(A(B(C) B(C)))") && strcmp(k, "client(B(B(C)))"))
			UNIT_FAIL_("oracle pattern %s", k);
		free(k);
	}
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
	greedy_params(&p);
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
	raw_params(&p);
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

struct gen_line {
	int64_t ts_us;
	int k;
	char text[160];
};

static int cmp_gen_line(const void *a, const void *b)
{
	const struct gen_line *x = a, *y = b;
	if (x->ts_us != y->ts_us)
		return x->ts_us < y->ts_us ? -1 : 1;
	return x->k < y->k ? -1 : x->k > y->k;
}

/* The trace text of lines l[0..nl) in their order, after the header; frees
 * l. Returns new text, its length in *len_out (may be NULL). */
static char *gen_text(struct gen_line *l, size_t nl, size_t *len_out)
{
	size_t cap = nl * (sizeof(l->text) + 24) + 64, len = 0;
	char *text = bb_xmalloc(cap);
	len += (size_t)snprintf(text, cap, "#bbtrace 1\n");
	for (size_t i = 0; i < nl; i++)
		len += (size_t)snprintf(text + len, cap - len, "%lld.%06lld\t%s\n",
		                        (long long)(l[i].ts_us / 1000000),
		                        (long long)(l[i].ts_us % 1000000), l[i].text);
	free(l);
	if (len_out)
		*len_out = len;
	return text;
}

/* A three-tier trace with overlapping instances, calls never returned,
 * returns never called, MSG lines, path= attributes, and, past the first
 * 4096 lines, two lines 50 apart swapped (in order for the reader's default
 * window, not for a small one). */
static char *gen_trace(size_t *len_out)
{
	size_t nl = 0, cap = 6000 * 7;
	struct gen_line *l = bb_xmalloc(cap * sizeof(*l));
	uint32_t rng = 12345;
#define ADD(T, ...)                                                                        \
	do {                                                                               \
		l[nl].ts_us = (T);                                                         \
		l[nl].k = (int)nl;                                                         \
		snprintf(l[nl].text, sizeof(l[nl].text), __VA_ARGS__);                     \
		nl++;                                                                      \
	} while (0)
	for (int i = 0; i < 6000; i++) {
		rng = rng * 1103515245u + 12345u;
		int64_t b = 1000000 + (int64_t)i * 300 + (rng >> 16) % 200;
		int64_t d1 = 50 + (rng >> 8) % 100, d2 = 300 + (rng >> 4) % 200;
		const char *web = i % 3 ? "web1" : "web2";
		ADD(b, "CALL\tclient%d\t%s\t%d\tpath=p%d", i % 4, web, i, i);
		ADD(b + d1, "CALL\t%s\tdb\t%d\tpath=p%d", web, i, i);
		if (i % 97 != 5)
			ADD(b + d1 + 150, "RET\tdb\t%s\t%d\tpath=p%d", web, i, i);
		if (i % 2)
			ADD(b + d2, "CALL\t%s\tauth\t%d\tpath=p%d", web, i, i);
		if (i % 2)
			ADD(b + d2 + 90, "RET\tauth\t%s\t%d\tpath=p%d", web, i, i);
		ADD(b + d2 + 200, "RET\t%s\tclient%d\t%d\tpath=p%d", web, i % 4, i, i);
		if (i % 89 == 3)
			ADD(b + 7, i % 2 ? "MSG\tdb\tweb1\t-" : "RET\tdb\tweb2\tx%d", i);
	}
#undef ADD
	qsort(l, nl, sizeof(*l), cmp_gen_line);
	struct gen_line t = l[12000];
	l[12000] = l[12050];
	l[12050] = t;
	return gen_text(l, nl, len_out);
}

/* Pass 2 replayed from memory, pass 2 read again (budget 0) and a budget
 * that runs out in the middle of pass 1 give the same result, with the
 * small-window first try failing on the swapped lines and read again. */
static void test_replay_and_stream(void)
{
	size_t len;
	char *text = gen_trace(&len);
	for (int mode = 0; mode < 2; mode++) {
		struct bb_nest_stats st[3];
		char *keys[3];
		size_t budgets[3] = {BB_NEST_MEMORY_DEFAULT, 0, 16 * 30000};
		for (int b = 0; b < 3; b++) {
			struct bb_nest_params p;
			greedy_params(&p);
			p.memory_bytes = budgets[b];
			struct bb_nest *n = bb_nest_new(&p, mode ? BB_NEST_ORACLE : BB_NEST_INFER);
			struct bb_err err = {{0}};
			int rc = bb_nest_run_mem(n, text, len, "gen.tr", NULL, &err);
			if (rc != 0)
				UNIT_FAIL_("run failed: %d %s", rc, err.msg);
			const struct bb_vpatterns *v = bb_nest_patterns(n);
			bb_nest_get_stats(n, &st[b]);
			size_t kl = 0, kc = 64;
			keys[b] = bb_xmalloc(kc);
			keys[b][0] = '\0';
			for (size_t i = 0; i < v->n; i++) {
				char *k = bb_nest_pattern_key(n, i);
				char line[256];
				int m = snprintf(line, sizeof(line), "%s %llu %lld;", k,
				                 (unsigned long long)v->v[i].count,
				                 (long long)v->v[i].total_latency_ns);
				if (kl + (size_t)m + 1 > kc)
					keys[b] = bb_xrealloc(keys[b], kc = 2 * (kl + (size_t)m + 1));
				memcpy(keys[b] + kl, line, (size_t)m + 1);
				kl += (size_t)m;
				free(k);
			}
			bb_nest_free(n);
		}
		CHECK_INT(st[0].replayed, 1);
		CHECK_INT(st[1].replayed, 0);
		CHECK_INT(st[2].replayed, 0);
		CHECK(st[0].unmatched_calls > 50);
		CHECK(st[0].unmatched_returns > 20);
		CHECK(st[0].children > 1000);
		for (int b = 1; b < 3; b++) {
			CHECK_STR(keys[b], keys[0]);
			CHECK_INT(st[b].call_pairs, st[0].call_pairs);
			CHECK_INT(st[b].unmatched_calls, st[0].unmatched_calls);
			CHECK_INT(st[b].unmatched_returns, st[0].unmatched_returns);
			CHECK_INT(st[b].children, st[0].children);
			CHECK_INT(st[b].candidates, st[0].candidates);
			CHECK_INT(st[b].roots, st[0].roots);
			CHECK_INT(st[b].orphans, st[0].orphans);
			CHECK_INT(st[b].no_path, st[0].no_path);
			CHECK_INT(st[b].messages, st[0].messages);
		}
		for (int b = 0; b < 3; b++)
			free(keys[b]);
	}
	free(text);

	/* short lines: the file-size estimate lets recording start, and it
	 * stops when the budget runs out */
	size_t cap = 4000 * 100;
	len = 0;
	text = bb_xmalloc(cap);
	len += (size_t)snprintf(text, cap, "#bbtrace 1\n");
	for (int i = 0; i < 4000; i++)
		len += (size_t)snprintf(text + len, cap - len,
		                        "%d.1\tCALL\ta\tb\t%d\n%d.2\tCALL\tb\tc\t%d\n"
		                        "%d.3\tRET\tc\tb\t%d\n%d.4\tRET\tb\ta\t%d\n",
		                        i, i, i, i, i, i, i, i);
	struct bb_nest_stats st[2];
	for (int b = 0; b < 2; b++) {
		struct bb_nest_params p;
		greedy_params(&p);
		p.memory_bytes = b ? sizeof(struct mrec) * (len / 32 + 100) : BB_NEST_MEMORY_DEFAULT;
		CHECK(!b || p.memory_bytes / sizeof(struct mrec) < 16000);
		const struct bb_vpatterns *v;
		struct bb_nest *n = run(text, &p, BB_NEST_INFER, &v);
		bb_nest_get_stats(n, &st[b]);
		CHECK_INT(v->n, 1);
		CHECK_INT(v->v[0].count, 4000);
		check_key(n, 0, "a(b(c))");
		bb_nest_free(n);
	}
	CHECK_INT(st[0].replayed, 1);
	CHECK_INT(st[1].replayed, 0);
	CHECK_INT(st[1].call_pairs, st[0].call_pairs);
	free(text);
}

/* --return-score: instances of client -> B -> C that overlap, where the delay
 * from B's call to its call to C is anything from 10 to 200 ms (the call side
 * cannot tell the parents apart) but B always returns 3 ms after C does. With
 * the return-side score all but a few children find their parent; without it
 * many do not;
 * and when pass 2 must read the trace again (budget 0) the score is not used. */
/* n_inst overlapping instances of client -> B -> C, one every 20 ms: B calls
 * C 10-200 ms after its own call (evenly spread, so the call-side score
 * hardly tells candidates apart), C takes 5 ms, and B returns ret_us after
 * C's return (after_c) or after its own call. Returns new trace text. */
/* Content on the calls of client_b_c_trace: none, tokens (each instance's
 * user, one of 40, so that concurrent instances share one now and then, on
 * both of its calls, plus a word every call carries), or a propagated
 * context (the instance's own ctx= on both calls). */
enum gen_content { GEN_NONE, GEN_TOK, GEN_CTX };

static char *client_b_c_trace_c(uint32_t seed, size_t n_inst, int after_c, int64_t ret_us,
                                enum gen_content content);

static char *client_b_c_trace(uint32_t seed, size_t n_inst, int after_c, int64_t ret_us)
{
	return client_b_c_trace_c(seed, n_inst, after_c, ret_us, GEN_NONE);
}

static char *client_b_c_trace_c(uint32_t seed, size_t n_inst, int after_c, int64_t ret_us,
                                enum gen_content content)
{
	size_t nl = 0;
	struct gen_line *l = bb_xmalloc(4 * n_inst * sizeof(*l));
	uint32_t rng = seed;
	for (size_t i = 0; i < n_inst; i++) {
		rng = rng * 1103515245u + 12345u;
		int64_t b = 1000000 + (int64_t)i * 20000 + (rng >> 16) % 10000; /* us */
		int64_t d1 = 10000 + (rng >> 4) % 190000;
		const int64_t t[4] = {b, b + d1, b + d1 + 5000,
		                      after_c ? b + d1 + 5000 + ret_us : b + ret_us};
		const char *const f[4] = {"CALL\tclient\tB\t%zu\tpath=p%zu", "CALL\tB\tC\t%zu\tpath=p%zu",
		                          "RET\tC\tB\t%zu\tpath=p%zu", "RET\tB\tclient\t%zu\tpath=p%zu"};
		for (int k = 0; k < 4; k++) {
			l[nl].ts_us = t[k];
			l[nl].k = (int)nl;
			int w = snprintf(l[nl].text, sizeof(l[nl].text), f[k], i, i);
			if (content == GEN_TOK && k < 2)
				snprintf(l[nl].text + w, sizeof(l[nl].text) - (size_t)w,
				         "\ttok=%016llx,00000000000000aa",
				         (unsigned long long)(0x1000 + (rng >> 8) % 40));
			else if (content == GEN_CTX && k < 2)
				snprintf(l[nl].text + w, sizeof(l[nl].text) - (size_t)w, "\tctx=%zx",
				         0x5000 + i);
			nl++;
		}
	}
	qsort(l, nl, sizeof(*l), cmp_gen_line);
	return gen_text(l, nl, NULL);
}

static void test_return_score(void)
{
	size_t n_inst = 800;
	char *text = client_b_c_trace(99, n_inst, 1, 3000);
	struct bb_nest *orc = run(text, NULL, BB_NEST_ORACLE, NULL);
	uint64_t fp[3];
	int scored[3];
	for (int m = 0; m < 3; m++) {
		struct bb_nest_params p;
		greedy_params(&p);
		p.return_score = m > 0;
		if (m == 2)
			p.memory_bytes = 0;
		struct bb_nest *inf = run(text, &p, BB_NEST_INFER, NULL);
		struct bb_nest_accuracy a;
		struct bb_nest_stats st;
		bb_nest_compare(inf, orc, &a);
		bb_nest_get_stats(inf, &st);
		CHECK_INT(a.instances_true, n_inst);
		CHECK(st.mean_parallelism > 4);
		fp[m] = a.instances_fp;
		scored[m] = st.return_scored;
		bb_nest_free(inf);
	}
	CHECK_INT(scored[0], 0);
	CHECK_INT(scored[1], 1);
	CHECK_INT(scored[2], 0);
	/* a few of 800 children have a wrong candidate whose return falls in the
	 * same 5% bin, 3 ms after theirs */
	if (!(fp[1] <= n_inst / 100 && fp[0] > n_inst / 4))
		UNIT_FAIL_("false instances: %llu with the return score, %llu without",
		           (unsigned long long)fp[1], (unsigned long long)fp[0]);
	CHECK_INT(fp[2], fp[0]);
	bb_nest_free(orc);
	free(text);
}

/* One inferred run of trace text against the oracle orc: its false
 * instances, the instances whose B call got two or more C children, and its
 * statistics. */
struct assign_run {
	uint64_t fp, two;
	struct bb_nest_stats st;
};

static struct assign_run assign_run(const char *text, struct bb_nest *orc,
                                    const struct bb_nest_params *p, size_t n_inst)
{
	struct assign_run r = {0};
	const struct bb_vpatterns *v;
	struct bb_nest *inf = run(text, p, BB_NEST_INFER, &v);
	struct bb_nest_accuracy a;
	bb_nest_compare(inf, orc, &a);
	bb_nest_get_stats(inf, &r.st);
	CHECK_INT(a.instances_true, n_inst);
	CHECK(r.st.mean_parallelism > 4);
	r.fp = a.instances_fp;
	for (size_t i = 0; i < v->n; i++) {
		char *k = bb_nest_pattern_key(inf, i);
		if (strstr(k, "C C"))
			r.two += v->v[i].count;
		free(k);
	}
	bb_nest_free(inf);
	return r;
}

/* --reassign: overlapping instances of client -> B -> C where the delay from
 * B's call to its call to C is anything from 10 to 200 ms, so the call-side
 * score hardly tells the candidates apart and the greedy choice gives some
 * B calls two or more C children and others none. Every B call makes one C
 * call, so with --reassign a B call with a C child is full and a second C
 * child moves the first out: fewer false instances. */
static void test_reassign(void)
{
	size_t n_inst = 800;
	char *text = client_b_c_trace(7, n_inst, 0, 250000);
	struct bb_nest *orc = run(text, NULL, BB_NEST_ORACLE, NULL);
	uint64_t fp[2], moved[2], two[2];
	for (int m = 0; m < 2; m++) {
		struct bb_nest_params p;
		greedy_params(&p);
		p.reassign = m;
		struct assign_run r = assign_run(text, orc, &p, n_inst);
		fp[m] = r.fp;
		two[m] = r.two;
		moved[m] = r.st.reassigned;
	}
	CHECK_INT(moved[0], 0);
	CHECK(moved[1] > 0);
	/* measured: 215 of 800 without, 24 with (a child whose every candidate
	 * is full, with no move possible, still takes the best of them) */
	CHECK(two[0] > n_inst / 5);
	CHECK(two[1] < n_inst / 20);
	if (!(2 * fp[1] < fp[0]))
		UNIT_FAIL_("false instances: %llu with --reassign, %llu without",
		           (unsigned long long)fp[1], (unsigned long long)fp[0]);
	bb_nest_free(orc);
	free(text);
}

/* --global on a hand-made trace: two overlapping calls into W, x at 0 and y
 * at 10 ms, each calling A once (the counts say so: two W -> A pairs, two
 * calls into W). The A calls begin at 11 and 13 ms. Alone, each prefers y
 * (delays 1 and 3 ms against 11 and 13: the density score is about 1/delay),
 * so the greedy choice gives y both; with one A child per W call the best
 * assignment is A@11 -> y, A@13 -> x (1/1 x 1/13 beats 1/11 x 1/3). */
static const char two_w[] = "#bbtrace 1\n"
                            "0.000\tCALL\tclient\tW\tx\n"
                            "0.010\tCALL\tclient\tW\ty\n"
                            "0.011\tCALL\tW\tA\t1\n"
                            "0.012\tRET\tA\tW\t1\n"
                            "0.013\tCALL\tW\tA\t2\n"
                            "0.014\tRET\tA\tW\t2\n"
                            "0.020\tRET\tW\tclient\tx\n"
                            "0.021\tRET\tW\tclient\ty\n";

static void test_global(void)
{
	struct bb_nest_params p;
	const struct bb_vpatterns *v;
	struct bb_nest_stats st;
	greedy_params(&p);
	p.rank = BB_NEST_RANK_COUNT;
	struct bb_nest *n = run(two_w, &p, BB_NEST_INFER, &v);
	CHECK_INT(v->n, 2);
	char *k0 = bb_nest_pattern_key(n, 0), *k1 = bb_nest_pattern_key(n, 1);
	CHECK((strcmp(k0, "client(W(A A))") == 0 && strcmp(k1, "client(W)") == 0) ||
	      (strcmp(k1, "client(W(A A))") == 0 && strcmp(k0, "client(W)") == 0));
	free(k0);
	free(k1);
	bb_nest_free(n);
	p.global = 1;
	n = run(two_w, &p, BB_NEST_INFER, &v);
	bb_nest_get_stats(n, &st);
	CHECK_INT(st.global_used, 1);
	CHECK_INT(st.global_over, 0);
	CHECK_INT(v->n, 1);
	check_key(n, 0, "client(W(A))");
	CHECK_INT(v->v[0].count, 2);
	bb_nest_free(n);

	/* 800 overlapping client -> B -> C instances (test_reassign's): every B
	 * call gets exactly one C child, and fewer instances are wrong than with
	 * the greedy choice or --reassign; without the messages in memory the
	 * option is not used and the result is the greedy one */
	size_t n_inst = 800;
	char *text = client_b_c_trace(7, n_inst, 0, 250000);
	struct bb_nest *orc = run(text, NULL, BB_NEST_ORACLE, NULL);
	uint64_t fp[4], two[4];
	for (int m = 0; m < 4; m++) {
		greedy_params(&p);
		p.reassign = m == 1;
		p.global = m >= 2;
		if (m == 3)
			p.memory_bytes = 0;
		struct assign_run r = assign_run(text, orc, &p, n_inst);
		CHECK_INT(r.st.global_used, m == 2);
		fp[m] = r.fp;
		two[m] = r.two;
	}
	/* measured: 0 false instances with --global, 48 with --reassign, 484
	 * greedy */
	CHECK_INT(two[2], 0);
	CHECK_INT(fp[3], fp[0]);
	if (!(fp[2] < fp[1] && fp[1] < fp[0]))
		UNIT_FAIL_("false instances: %llu with --global, %llu with --reassign, %llu greedy",
		           (unsigned long long)fp[2], (unsigned long long)fp[1],
		           (unsigned long long)fp[0]);
	bb_nest_free(orc);
	free(text);
}

/* The conflict rule (issue 14): 200 overlapping pairs of client -> W calls,
 * each W call with one W -> A child (two_w's shape: alone, both children
 * prefer the later W call), and two quiet W calls whose children (into D
 * and E) are all sure and include none into A. Two sure calls are too few
 * to refute "at most one A child per W call" (under it about 2 of them
 * would have had one), so --global keeps the constraint and no W call
 * takes two A children. The old rule dropped it as soon as one sure call
 * lacked an A child. */
static void test_conflict_rule(void)
{
	size_t cap = 1 << 16, len = 0;
	char *t = bb_xmalloc(cap);
	len += (size_t)snprintf(t + len, cap - len, "#bbtrace 1\n");
	for (int i = 0; i < 200; i++) {
		double b = i;
		len += (size_t)snprintf(t + len, cap - len,
		                        "%.3f\tCALL\tclient\tW\tx%d\n%.3f\tCALL\tclient\tW\ty%d\n"
		                        "%.3f\tCALL\tW\tA\ta%d\n%.3f\tRET\tA\tW\ta%d\n"
		                        "%.3f\tCALL\tW\tA\tb%d\n%.3f\tRET\tA\tW\tb%d\n"
		                        "%.3f\tRET\tW\tclient\tx%d\n%.3f\tRET\tW\tclient\ty%d\n",
		                        b, i, b + 0.010, i, b + 0.011, i, b + 0.012, i, b + 0.013, i,
		                        b + 0.014, i, b + 0.020, i, b + 0.021, i);
	}
	for (int i = 0; i < 2; i++) {
		double b = 300 + i;
		len += (size_t)snprintf(t + len, cap - len,
		                        "%.3f\tCALL\tclient\tW\tq%d\n"
		                        "%.3f\tCALL\tW\tD\td%d\n%.3f\tRET\tD\tW\td%d\n"
		                        "%.3f\tCALL\tW\tE\te%d\n%.3f\tRET\tE\tW\te%d\n"
		                        "%.3f\tRET\tW\tclient\tq%d\n",
		                        b, i, b + 0.001, i, b + 0.002, i, b + 0.003, i, b + 0.004, i,
		                        b + 0.005, i);
	}
	CHECK(len < cap - 1);
	struct bb_nest_params p;
	greedy_params(&p);
	p.global = 1;
	p.rank = BB_NEST_RANK_COUNT;
	const struct bb_vpatterns *v;
	struct bb_nest *n = run(t, &p, BB_NEST_INFER, &v);
	struct bb_nest_stats st;
	bb_nest_get_stats(n, &st);
	CHECK_INT(st.global_used, 1);
	CHECK_INT(st.global_over, 0);
	int two = 0;
	for (size_t i = 0; i < v->n; i++) {
		char *k = bb_nest_pattern_key(n, i);
		two |= strstr(k, "W(A A)") != NULL;
		free(k);
	}
	CHECK(!two);
	check_key(n, 0, "client(W(A))");
	CHECK_INT(v->v[0].count, 400);
	bb_nest_free(n);
	free(t);
}

/* The whole-number capacity (nest_total_cap): 200 overlapping pairs of
 * client -> W calls, one of each pair making 2 children (into A, B), the
 * other 4 (A, B, C, D), no W call with all its children sure (each child
 * has both calls of its pair as candidates), and a pair of 4-child calls:
 * 1,208 children in 402 calls, 3.005 a call. Nothing but that average says
 * every call makes 3, and it is not exact: 3 is a soft bound (a hard 3 on
 * the rig's first app, whose kinds make 2, 3 and 4 children, 2.998 a call,
 * left 24 of 800 instances wrong on i1a1 poisson-8 and none soft:
 * docs/accuracy.md). Without the last pair the average is exactly 3, as
 * when every call makes 3: hard. With 20 more W calls, apart, each making 3
 * children, all sure: hard (the 2- and 4-child calls never seen sure). */
static void test_whole_capacity(void)
{
	static const struct {
		double at;
		const char *what, *from, *to;
		char call;
	} ln[] = {{0, "CALL", "client", "W", 'x'},   {0.0005, "CALL", "client", "W", 'y'},
	          {0.001, "CALL", "W", "A", 'y'},    {0.0015, "CALL", "W", "A", 'x'},
	          {0.002, "RET", "A", "W", 'y'},     {0.0025, "RET", "A", "W", 'x'},
	          {0.003, "CALL", "W", "B", 'y'},    {0.0035, "CALL", "W", "B", 'x'},
	          {0.004, "RET", "B", "W", 'y'},     {0.0045, "RET", "B", "W", 'x'},
	          {0.005, "CALL", "W", "C", 'y'},    {0.006, "RET", "C", "W", 'y'},
	          {0.007, "CALL", "W", "D", 'y'},    {0.008, "RET", "D", "W", 'y'},
	          {0.009, "RET", "W", "client", 'x'}, {0.010, "RET", "W", "client", 'y'}};
	for (int v = 0; v < 3; v++) { /* inexact; exact; inexact with sure calls */
		size_t cap = 1 << 18, len = 0;
		char *t = bb_xmalloc(cap);
		len += (size_t)snprintf(t + len, cap - len, "#bbtrace 1\n");
		for (int i = 0; i < 200 + (v != 1); i++)
			for (size_t j = 0; j < sizeof(ln) / sizeof(ln[0]); j++) {
				/* the last pair of the inexact traces: two 4-child calls */
				if (i == 200 && ln[j].call == 'x')
					continue;
				int call = !strcmp(ln[j].what, "CALL");
				const char *id = call ? ln[j].to : strcmp(ln[j].to, "W") ? "W" : ln[j].from;
				for (int z = 0; z < 1 + (i == 200); z++)
					len += (size_t)snprintf(t + len, cap - len,
					                        "%.5f\t%s\t%s\t%s\t%c%s%d\n",
					                        i + ln[j].at + 1e-5 * z, ln[j].what, ln[j].from,
					                        ln[j].to, z ? 'z' : ln[j].call, id, i);
			}
		for (int i = 0; v == 2 && i < 20; i++)
			len += (size_t)snprintf(
			    t + len, cap - len,
			    "%d.1\tCALL\tclient\tW\ts%d\n%d.2\tCALL\tW\tA\tsa%d\n%d.3\tRET\tA\tW\tsa%d\n"
			    "%d.4\tCALL\tW\tB\tsb%d\n%d.5\tRET\tB\tW\tsb%d\n"
			    "%d.6\tCALL\tW\tB\tsc%d\n%d.7\tRET\tB\tW\tsc%d\n%d.8\tRET\tW\tclient\ts%d\n",
			    300 + i, i, 300 + i, i, 300 + i, i, 300 + i, i, 300 + i, i, 300 + i, i,
			    300 + i, i, 300 + i, i);
		CHECK(len < cap - 1);
		struct bb_nest_params p;
		bb_nest_params_init(&p); /* the defaults: --return-score --global */
		struct bb_nest *n = run(t, &p, BB_NEST_INFER, NULL);
		uint32_t w = bb_intern_find(n->nodes.names, "W", 1);
		int hard = -1;
		CHECK_INT(nest_total_cap(n, w, &hard), 3);
		CHECK_INT(hard, v != 0);
		bb_nest_free(n);
		free(t);
	}
}

/* Content evidence (issue 14) on test_reassign's 800 overlapping client ->
 * B -> C instances: with a propagated context every parent is exact; with
 * user tokens (40 users, so concurrent requests of one user share theirs)
 * fewer instances are wrong than by times alone, and --no-content gives
 * the timing-only result. The count intervals hold the true counts. */
static void test_content(void)
{
	size_t n_inst = 800;
	uint64_t fp[3];
	for (int m = 0; m < 3; m++) {
		char *text = client_b_c_trace_c(7, n_inst, 0, 250000, m == 2 ? GEN_CTX : GEN_TOK);
		struct bb_nest *orc = run(text, NULL, BB_NEST_ORACLE, NULL);
		struct bb_nest_params p;
		greedy_params(&p);
		p.content = m != 0;
		p.rank = BB_NEST_RANK_COUNT;
		const struct bb_vpatterns *v;
		struct bb_nest *inf = run(text, &p, BB_NEST_INFER, &v);
		struct bb_nest_accuracy a;
		struct bb_nest_stats st;
		bb_nest_compare(inf, orc, &a);
		bb_nest_get_stats(inf, &st);
		CHECK_INT(a.instances_true, n_inst);
		fp[m] = a.instances_fp;
		/* the true pattern client(B(C)) has n_inst instances */
		check_key(inf, 0, "client(B(C))");
		/* by times alone at parallelism 12 some wrong choices look sure
		 * (docs/nesting.md, "Count intervals"): the interval holds the
		 * true count only with content */
		if (m > 0)
			CHECK(v->v[0].count_lo <= n_inst && n_inst <= v->v[0].count_hi);
		CHECK(v->v[0].count_lo <= v->v[0].count && v->v[0].count <= v->v[0].count_hi);
		if (m == 0) {
			CHECK_INT(st.content_calls, 0);
			CHECK(st.ambiguous_instances > n_inst / 4);
		}
		if (m == 1)
			CHECK(st.content_edges >= 1);
		if (m == 2) {
			CHECK_INT(st.content_exact, n_inst);
			CHECK_INT(v->v[0].exact, n_inst);
			CHECK_INT(v->v[0].count_lo, n_inst);
			CHECK_INT(st.ambiguous, 0);
		}
		bb_nest_free(inf);
		bb_nest_free(orc);
		free(text);
	}
	CHECK_INT(fp[2], 0);
	if (!(2 * fp[1] < fp[0]))
		UNIT_FAIL_("false instances: %llu with tokens, %llu by times alone",
		           (unsigned long long)fp[1], (unsigned long long)fp[0]);
}

/* n_inst overlapping instances of client -> B, B calls 0-10 ms apart, each
 * labelled "GET /p" (it calls C, then D) or "GET /q" (D, then C): the first
 * child 1-20 ms after B's call, each child 1-5 ms, the next 1-20 ms after
 * the first returns, B's return 1-10 ms after the last. About eight B calls
 * are open at once; the two kinds make the same children, in opposite
 * orders. labels 0: no req= at all. */
static char *labelled_trace(uint32_t seed, size_t n_inst, int labels)
{
	size_t nl = 0;
	struct gen_line *l = bb_xmalloc(6 * n_inst * sizeof(*l));
	uint32_t rng = seed;
	int64_t t = 1000000; /* us */
#define R() ((rng = rng * 1103515245u + 12345u) >> 8)
	for (size_t i = 0; i < n_inst; i++) {
		t += R() % 10000;
		int q = (int)(R() & 1);
		int64_t ts[6], x = t + 1000 + R() % 19000;
		ts[0] = t;
		for (int k = 0; k < 2; k++) {
			ts[2 + 2 * k] = x;
			x += 1000 + R() % 4000;
			ts[3 + 2 * k] = x;
			x += 1000 + R() % 19000;
		}
		ts[1] = ts[5] + 1000 + R() % 9000;
		const char *first = q ? "D" : "C", *second = q ? "C" : "D";
		for (int k = 0; k < 6; k++, nl++) {
			l[nl].ts_us = ts[k];
			l[nl].k = (int)nl;
			const char *c = k < 4 ? first : second;
			int w;
			if (k < 2)
				w = snprintf(l[nl].text, sizeof(l[nl].text), k ? "RET\tB\tclient\t%zu\tpath=p%zu"
				                                                 : "CALL\tclient\tB\t%zu\tpath=p%zu",
				             3 * i, i);
			else
				w = snprintf(l[nl].text, sizeof(l[nl].text),
				             k % 2 ? "RET\t%s\tB\t%zu\tpath=p%zu" : "CALL\tB\t%s\t%zu\tpath=p%zu", c,
				             3 * i + (k < 4 ? 1 : 2), i);
			if (k < 2 && labels)
				snprintf(l[nl].text + w, sizeof(l[nl].text) - (size_t)w, "\treq=GET%%20/%s?i=%zu",
				         q ? "q" : "p", i);
		}
	}
#undef R
	qsort(l, nl, sizeof(*l), cmp_gen_line);
	return gen_text(l, nl, NULL);
}

/* The refinement's kinds by label (nest_refine.c, split_kinds): a B call's
 * req= label says in which order it calls C and D, so a C child that came
 * second is not dealt to a "GET /p" call; without labels one kind holds both
 * orders and the times alone decide. Four traces, so that no one decides. */
static void test_label_kinds(void)
{
	size_t n_inst = 800;
	uint64_t fp[2] = {0, 0};
	for (uint32_t seed = 1; seed <= 4; seed++)
		for (int m = 0; m < 2; m++) {
			char *text = labelled_trace(seed, n_inst, m);
			struct bb_nest *orc = run(text, NULL, BB_NEST_ORACLE, NULL);
			struct bb_nest_params p;
			bb_nest_params_init(&p); /* the default: --global and the refinement */
			struct assign_run r = assign_run(text, orc, &p, n_inst);
			CHECK(r.st.global_used);
			fp[m] += r.fp;
			bb_nest_free(orc);
			free(text);
		}
	/* measured: 7 false instances of 3,200 with labels (seeds 1-4: 0, 1, 3,
	 * 3), 66 without (4, 20, 19, 23). The trace before this one (a "GET /q"
	 * call made no children) no longer showed it: the queue order told its
	 * calls apart without labels (2 with, 1 without). */
	if (!(fp[1] <= 12 && 3 * fp[1] < fp[0]))
		UNIT_FAIL_("false instances: %llu with labels, %llu without",
		           (unsigned long long)fp[1], (unsigned long long)fp[0]);
}

/* A server B with a pool of `workers` workers that serves its requests in
 * the order they came (nest_queue.c): n_inst requests from client in bursts
 * of 4 (20 us apart, the bursts 5-45 ms apart), each waiting for the
 * earliest free worker, which makes C 50-150 us after it starts, D 50 us
 * after C returns (each 1-3 ms) and returns 5-30 ms after D: under the
 * bursts a request waits up to tens of ms, so neither its delay from the
 * call nor the return tells the first call's parent. */
static char *queue_trace(uint32_t seed, size_t n_inst, int workers)
{
	size_t nl = 0;
	struct gen_line *l = bb_xmalloc(6 * n_inst * sizeof(*l));
	int64_t freew[8] = {0}, t = 1000000;
	uint32_t rng = seed;
#define R() (rng = rng * 1103515245u + 12345u)
	for (size_t i = 0; i < n_inst;) {
		t += 5000 + (R() >> 16) % 40000;
		for (int k = 0; k < 4 && i < n_inst; k++, i++) {
			int64_t a = t + k * 20;
			int w = 0;
			for (int j = 1; j < workers; j++)
				w = freew[j] < freew[w] ? j : w;
			int64_t st = (a > freew[w] ? a : freew[w]) + 50 + (R() >> 20) % 100;
			int64_t cr = st + 1000 + (R() >> 16) % 2000, d = cr + 50;
			int64_t dr = d + 1000 + (R() >> 16) % 2000;
			int64_t ret = dr + 5000 + (R() >> 16) % 25000;
			freew[w] = ret;
			const int64_t ts[6] = {a, ret, st, cr, d, dr};
			const char *const f[6] = {"CALL\tclient\tB\t%zu\tpath=p%zu",
			                          "RET\tB\tclient\t%zu\tpath=p%zu",
			                          "CALL\tB\tC\t%zu\tpath=p%zu",
			                          "RET\tC\tB\t%zu\tpath=p%zu",
			                          "CALL\tB\tD\t%zu\tpath=p%zu",
			                          "RET\tD\tB\t%zu\tpath=p%zu"};
			for (int q = 0; q < 6; q++) {
				l[nl].ts_us = ts[q];
				l[nl].k = (int)nl;
				snprintf(l[nl].text, sizeof(l[nl].text), f[q], i, i);
				nl++;
			}
		}
	}
#undef R
	qsort(l, nl, sizeof(*l), cmp_gen_line);
	return gen_text(l, nl, NULL);
}

/* The order a node starts its calls in (nest_queue.c): the default puts
 * few of the requests of a worker pool under bursts wrong. */
static void test_worker_queue(void)
{
	size_t n_inst = 800;
	char *text = queue_trace(7, n_inst, 4);
	struct bb_nest *orc = run(text, NULL, BB_NEST_ORACLE, NULL);
	struct bb_nest_params p;
	bb_nest_params_init(&p);
	struct assign_run r = assign_run(text, orc, &p, n_inst);
	CHECK(r.st.mean_parallelism > 8);
	CHECK(r.st.global_used);
	/* measured: 0 false instances; 32 without the queue order (93f5bd2) */
	if (!(r.fp <= 4))
		UNIT_FAIL_("false instances: %llu", (unsigned long long)r.fp);
	bb_nest_free(orc);
	free(text);
}

/* A front end F with a pool of 16 workers serving its requests in the order
 * they came, in bursts of 3-5 requests 20 us apart (the bursts 0-10 ms
 * apart): an item request calls R, M, P in turn, a home request R, S, M, P,
 * a cart request R, P (its req= label says which), each child 20-100 us
 * after the previous one returns and, one time in three, up to 20 ms later
 * (work between the calls). A request waits for a worker, so the times
 * barely tell which of 16 requests in service made an M call. */
static char *pool_trace(uint32_t seed, size_t n_inst)
{
	static const char *const kind[3] = {"item", "home", "cart"};
	static const char *const kids[3] = {"RMP", "RSMP", "RP"};
	size_t nl = 0, conn = 0;
	struct gen_line *l = bb_xmalloc(10 * n_inst * sizeof(*l));
	int64_t freew[16] = {0}, t = 1000000;
	uint32_t rng = seed;
#define R() ((rng = rng * 1103515245u + 12345u) >> 8)
	for (size_t i = 0; i < n_inst;) {
		t += R() % 10000;
		for (int b = 3 + (int)(R() % 3); b > 0 && i < n_inst; b--, i++) {
			int64_t a = t + (5 - b) * 20, x;
			int w = 0, q = (int)(R() % 3);
			for (int j = 1; j < 16; j++)
				w = freew[j] < freew[w] ? j : w;
			x = (a > freew[w] ? a : freew[w]) + 50 + R() % 100;
			size_t c0 = ++conn;
			for (const char *k = kids[q]; *k; k++) {
				int64_t d = *k == 'S' ? 2000 + R() % 3000 : 200 + R() % 1300;
				++conn;
				for (int r = 0; r < 2; r++, nl++) {
					l[nl].ts_us = x + r * d;
					l[nl].k = (int)nl;
					snprintf(l[nl].text, sizeof(l[nl].text),
					         r ? "RET\t%c\tF\t%zu\tpath=p%zu" : "CALL\tF\t%c\t%zu\tpath=p%zu", *k,
					         conn, i);
				}
				x += d + 20 + R() % 80;
				if (R() % 3 == 0)
					x += R() % 20000;
			}
			freew[w] = x + 100 + R() % 400;
			for (int r = 0; r < 2; r++, nl++) {
				l[nl].ts_us = r ? freew[w] : a;
				l[nl].k = (int)nl;
				snprintf(l[nl].text, sizeof(l[nl].text),
				         r ? "RET\tF\tclient\t%zu\tpath=p%zu\treq=GET%%20/%s"
				           : "CALL\tclient\tF\t%zu\tpath=p%zu\treq=GET%%20/%s",
				         c0, i, kind[q]);
			}
		}
	}
#undef R
	qsort(l, nl, sizeof(*l), cmp_gen_line);
	return gen_text(l, nl, NULL);
}

/* The false instances of the defaults over seven traces of gen (seeds 1-7,
 * n_inst each), so that no one trace decides; each trace's mean parallelism
 * at least min_par. */
static uint64_t seven_traces(char *(*gen)(uint32_t, size_t), size_t n_inst, double min_par)
{
	uint64_t fp = 0;
	for (uint32_t seed = 1; seed <= 7; seed++) {
		char *text = gen(seed, n_inst);
		struct bb_nest *orc = run(text, NULL, BB_NEST_ORACLE, NULL);
		struct bb_nest_params p;
		bb_nest_params_init(&p);
		struct assign_run r = assign_run(text, orc, &p, n_inst);
		CHECK(r.st.global_used);
		CHECK(r.st.mean_parallelism > min_par);
		fp += r.fp;
		bb_nest_free(orc);
		free(text);
	}
	return fp;
}

/* The refinement's rotations and chains (nest_refine.c, best_rotation):
 * requests whose M calls were dealt round hold sequences no request makes. */
static void test_pool_rotation(void)
{
	uint64_t fp = seven_traces(pool_trace, 800, 11);
	/* measured: 684 false instances of 5,600 with the nearest-neighbour
	 * densities (nest_dens.c); with raw bins 846 (seeds 1-7: 43, 240, 317, 66,
	 * 35, 81, 64), and 724 before two parents' children were dealt anew
	 * (best_redeal: 50, 182, 241, 59, 45, 71, 76), which follows the counts
	 * learnt from an assignment a third wrong further here and gains on the
	 * rig; 876 with rotations but no chains (50, 231, 335, 65, 55, 70, 70);
	 * 915 with neither (70, 254, 314, 73, 67, 67, 70) */
	if (!(fp <= 750))
		UNIT_FAIL_("false instances: %llu", (unsigned long long)fp);
}

/* Requests that start together, as the rig's first app under bursts: F
 * serves every request on its own thread, calls A (an auth service) first,
 * then per kind (its req= label) item M, P; lookup D, N, M; cart R, P, each
 * child 5-40 us after the previous one returns, then renders the page for
 * 100-300 ms before it answers. Bursts of 2-4 requests 0-30 us apart, 0-16 ms
 * between bursts: the A calls of a burst return together and the children
 * after them interleave, while dozens of requests still render. The A calls
 * carry their request's token (the rig's ?id=); the rest carry none. (Two D
 * calls in a third of the requests would be taken for "at most one" here,
 * where no child is ever sure: nest_score.c, conflict.) With ids, a lookup
 * (one request in ten) calls D twice instead, both calls carrying a token of
 * the request's own that no other call has (the rig's DNS name holding the
 * request id), and A takes 400-500 us, so that the A calls of a burst return
 * together (the rig's auth service). */
static char *burst_trace(uint32_t seed, size_t n_inst, int ids)
{
	static const char *const kind[3] = {"item", "lookup", "cart"};
	const char *const kids[3] = {"AMP", ids ? "ADDM" : "ADNM", "ARP"};
	size_t nl = 0, conn = 0;
	struct gen_line *l = bb_xmalloc(12 * n_inst * sizeof(*l));
	int64_t t = 1000000;
	uint32_t rng = seed;
#define R() ((rng = rng * 1103515245u + 12345u) >> 8)
	for (size_t i = 0; i < n_inst;) {
		t += R() % 16000;
		for (int b = 2 + (int)(R() % 3); b > 0 && i < n_inst; b--, i++) {
			int64_t a = t + R() % 30, x = a + 10 + R() % 50;
			int q = ids ? (R() % 10 == 0 ? 1 : (int)(R() % 2) * 2) : (int)(R() % 3);
			size_t c0 = ++conn;
			for (const char *k = kids[q]; *k; k++) {
				int64_t d = *k == 'A' ? (ids ? 400 + R() % 100 : 300 + R() % 600)
				            : *k == 'P' ? 300 + R() % 1200
				                        : 30 + R() % 370;
				++conn;
				for (int r = 0; r < 2; r++, nl++) {
					l[nl].ts_us = x + r * d;
					l[nl].k = (int)nl;
					size_t tok = 0x9e3779b97f4a7c15u * (i + 1) ^ (*k == 'D' ? 0xd : 0);
					snprintf(l[nl].text, sizeof(l[nl].text),
					         r ? "RET\t%c\tF\t%zu\tpath=p%zu"
					           : *k == 'A' || (*k == 'D' && ids)
					                 ? "CALL\tF\t%c\t%zu\tpath=p%zu\ttok=%016zx"
					                 : "CALL\tF\t%c\t%zu\tpath=p%zu",
					         *k, conn, i, tok);
				}
				x += d + 5 + R() % 35;
			}
			x += 100000 + R() % 200000;
			for (int r = 0; r < 2; r++, nl++) {
				l[nl].ts_us = r ? x : a;
				l[nl].k = (int)nl;
				snprintf(l[nl].text, sizeof(l[nl].text),
				         r ? "RET\tF\tclient\t%zu\tpath=p%zu\treq=GET%%20/%s"
				           : "CALL\tclient\tF\t%zu\tpath=p%zu\treq=GET%%20/%s\ttok=%016zx",
				         c0, i, kind[q], 0x9e3779b97f4a7c15u * (i + 1));
			}
		}
	}
#undef R
	qsort(l, nl, sizeof(*l), cmp_gen_line);
	return gen_text(l, nl, NULL);
}

static char *pair_trace(uint32_t seed, size_t n_inst)
{
	return burst_trace(seed, n_inst, 0);
}

static char *ids_trace(uint32_t seed, size_t n_inst)
{
	return burst_trace(seed, n_inst, 1);
}

/* Two requests' children dealt anew between them (nest_refine.c,
 * best_redeal), on requests that start together. */
static void test_pair_deal(void)
{
	uint64_t fp = seven_traces(pair_trace, 800, 20);
	/* measured: 6 false instances of 5,600 with the nearest-neighbour
	 * densities (nest_dens.c); with raw bins 27 (seeds 1-7: 0, 4, 4, 8, 5, 6,
	 * 0), and 116 without the deals (4, 23, 23, 8, 32, 16, 10) */
	if (!(fp <= 20))
		UNIT_FAIL_("false instances: %llu", (unsigned long long)fp);
}

/* Siblings that share a request's own identifier (nest_refine.c, sib):
 * the two D calls of a lookup carry one, and the refinement keeps them
 * together. */
static void test_sibling_ids(void)
{
	uint64_t fp = seven_traces(ids_trace, 800, 20);
	/* measured: 9 false instances of 5,600 with the nearest-neighbour
	 * densities (nest_dens.c); with raw bins 31 (seeds 1-7: 4, 5, 6, 14, 0, 2,
	 * 0), and 48 without the siblings' terms (13, 11, 9, 2, 6, 5, 2) */
	if (!(fp <= 20))
		UNIT_FAIL_("false instances: %llu", (unsigned long long)fp);
}

/* The automatic default (issue 14): with the messages in memory bbnest
 * takes --return-score --global and says so in its params (two_w: the
 * assignment gives each W call its A child); without them, the greedy
 * choice. */
static void test_auto_default(void)
{
	struct bb_nest_params p;
	bb_nest_params_init(&p);
	CHECK_INT(p.return_score, BB_NEST_AUTO);
	CHECK_INT(p.global, BB_NEST_AUTO);
	p.rank = BB_NEST_RANK_COUNT;
	const struct bb_vpatterns *v;
	struct bb_nest_stats st;
	struct bb_nest *n = run(two_w, &p, BB_NEST_INFER, &v);
	bb_nest_get_stats(n, &st);
	CHECK_INT(st.global_used, 1);
	CHECK_INT(st.return_scored, 1);
	check_key(n, 0, "client(W(A))");
	CHECK_INT(v->v[0].count, 2);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	bb_vval_write(f, v->params, NULL);
	fclose(f);
	CHECK_HAS(buf, "\"auto\":{\"global\":true,\"return_score\":true,\"why\":\"messages in memory\"}");
	free(buf);
	bb_nest_free(n);
	p.memory_bytes = 0;
	n = run(two_w, &p, BB_NEST_INFER, &v);
	bb_nest_get_stats(n, &st);
	CHECK_INT(st.global_used, 0);
	CHECK_INT(st.return_scored, 0);
	CHECK_INT(v->n, 2);
	bb_nest_free(n);
}

/* A node whose calls are seen making two calls at once (pairs of sure
 * children that overlap) gets no overlap penalty; one that calls one at a
 * time keeps it. 40 quiet requests each: P calls C and D at once, S calls C
 * then D. */
static void test_parallel_nodes(void)
{
	size_t cap = 1 << 16, len = 0;
	char *t = bb_xmalloc(cap);
	len += (size_t)snprintf(t + len, cap - len, "#bbtrace 1\n");
	for (int i = 0; i < 40; i++) {
		double b = i;
		len += (size_t)snprintf(t + len, cap - len,
		                        "%.3f\tCALL\tclient\tP\tp%d\n%.3f\tCALL\tP\tC\tc%d\n"
		                        "%.3f\tCALL\tP\tD\td%d\n%.3f\tRET\tC\tP\tc%d\n"
		                        "%.3f\tRET\tD\tP\td%d\n%.3f\tRET\tP\tclient\tp%d\n",
		                        b, i, b + 0.001, i, b + 0.0012, i, b + 0.005, i, b + 0.006, i,
		                        b + 0.007, i);
		b += 0.5;
		len += (size_t)snprintf(t + len, cap - len,
		                        "%.3f\tCALL\tclient\tS\ts%d\n%.3f\tCALL\tS\tC\tx%d\n"
		                        "%.3f\tRET\tC\tS\tx%d\n%.3f\tCALL\tS\tD\ty%d\n"
		                        "%.3f\tRET\tD\tS\ty%d\n%.3f\tRET\tS\tclient\ts%d\n",
		                        b, i, b + 0.001, i, b + 0.002, i, b + 0.003, i, b + 0.004, i,
		                        b + 0.005, i);
	}
	CHECK(len < cap - 1);
	struct bb_nest_params p;
	greedy_params(&p);
	struct bb_nest *n = run(t, &p, BB_NEST_INFER, NULL);
	struct bb_nest_stats st;
	bb_nest_get_stats(n, &st);
	CHECK_INT(st.parallel_nodes, 1);
	bb_nest_free(n);
	p.learn_parallel = 0;
	n = run(t, &p, BB_NEST_INFER, NULL);
	bb_nest_get_stats(n, &st);
	CHECK_INT(st.parallel_nodes, 0);
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
	greedy_params(&p);
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
	greedy_params(&p);
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
	greedy_params(&p);
	struct bb_err err = {{0}};
	CHECK_INT(bb_nest_params_check(&p, &err), 0);
	p.bin_max_ns = p.bin_min_ns;
	CHECK(bb_nest_params_check(&p, &err) < 0);
	greedy_params(&p);
	p.penalty_x = -1;
	CHECK(bb_nest_params_check(&p, &err) < 0);
	greedy_params(&p);
	CHECK_INT(p.scoreboard, BB_NEST_SB_AUTO);
	p.scoreboard = (enum bb_nest_scoreboard)7;
	CHECK(bb_nest_params_check(&p, &err) < 0);
	/* --global's rounds: 1 .. BB_NEST_ROUNDS_MAX, 10 by default */
	greedy_params(&p);
	CHECK_INT(p.rounds, 10);
	p.rounds = 0;
	CHECK(bb_nest_params_check(&p, &err) < 0);
	p.rounds = BB_NEST_ROUNDS_MAX + 1;
	CHECK(bb_nest_params_check(&p, &err) < 0);
	p.rounds = BB_NEST_ROUNDS_MAX;
	CHECK_INT(bb_nest_params_check(&p, &err), 0);
}

/* One B->C child, two candidate parents from different callers (A1 30 ms
 * before it, A2 20 ms before): the per-edge scoreboard (the default without
 * a skew window) keeps one histogram for B->C whatever the caller, the
 * paper's one per caller. */
static const char two_callers[] = "#bbtrace 1\n"
                                  "0.000	CALL	A1	B	1\n"
                                  "0.010	CALL	A2	B	2\n"
                                  "0.030	CALL	B	C	3\n"
                                  "0.035	RET	C	B	3\n"
                                  "0.060	RET	B	A1	1\n"
                                  "0.070	RET	B	A2	2\n";

static void test_scoreboard_kinds(void)
{
	struct bb_nest_params p;
	raw_params(&p);
	struct bb_nest *n = run(two_callers, &p, BB_NEST_INFER, NULL);
	CHECK(fabs(bb_nest_score(n, "A1", "B", "C", 30 * MS) - 0.5) < 1e-9);
	CHECK(fabs(bb_nest_score(n, "A2", "B", "C", 30 * MS) - 0.5) < 1e-9);
	CHECK(fabs(bb_nest_score(n, "A1", "B", "C", 20 * MS) - 0.5) < 1e-9);
	struct bb_nest_stats st;
	bb_nest_get_stats(n, &st);
	CHECK_INT(st.triples, 1);
	bb_nest_free(n);
	/* with a skew window, auto keeps one histogram per caller */
	p.skew_window_ns = MS;
	n = run(two_callers, &p, BB_NEST_INFER, NULL);
	bb_nest_get_stats(n, &st);
	CHECK_INT(st.triples, 2);
	bb_nest_free(n);
	p.skew_window_ns = 0;
	for (int k = 0; k < 2; k++) {
		p.scoreboard = k ? BB_NEST_SB_PAPER : BB_NEST_SB_CALLER;
		n = run(two_callers, &p, BB_NEST_INFER, NULL);
		CHECK(fabs(bb_nest_score(n, "A1", "B", "C", 30 * MS) - 0.5) < 1e-9);
		CHECK(bb_nest_score(n, "A1", "B", "C", 20 * MS) == 0);
		CHECK(fabs(bb_nest_score(n, "A2", "B", "C", 20 * MS) - 0.5) < 1e-9);
		bb_nest_get_stats(n, &st);
		CHECK_INT(st.triples, 2);
		bb_nest_free(n);
	}
}

/* Ten B->C children 30 ms after their only candidate, and one with two
 * candidates, 30 ms and 2 us before it (half a child's mass each). */
static void densities_trace(char *buf, size_t cap)
{
	size_t k = (size_t)snprintf(buf, cap, "#bbtrace 1\n");
	for (int i = 0; i < 10; i++)
		k += (size_t)snprintf(buf + k, cap - k,
		                      "%d.000	CALL	A	B	%d\n%d.030	CALL	B	C	-\n"
		                      "%d.031	RET	C	B	-\n%d.040	RET	B	A	%d\n",
		                      i, i, i, i, i, i);
	snprintf(buf + k, cap - k,
	         "20.000000	CALL	A	B	20\n20.029998	CALL	A	B	21\n"
	         "20.030000	CALL	B	C	-\n20.031000	RET	C	B	-\n"
	         "20.040000	RET	B	A	20\n20.041000	RET	B	A	21\n");
}

/* A density is mass / bin width, and the log bins are 0.1 us wide at 2 us
 * and 1.5 ms at 30 ms: with raw bins the wrong candidate's half a child at
 * 2 us is 700 times denser than the true peak of ten and a half children
 * at 30 ms. With the nearest-neighbour densities (--density-mass 3) the
 * stray bin's window reaches the peak and its density falls far below the
 * peak's, which holds its mass alone and keeps it; a delay with no mass
 * within a factor of 10 either way stays impossible (NEST_DENS_REACH). */
static void test_densities(void)
{
	char t[4096];
	densities_trace(t, sizeof t);
	const double w2us = 2e3 * 0.05, w30ms = 30 * MS * 0.05; /* bin widths, ns */
	for (int raw = 0; raw < 2; raw++) {
		struct bb_nest_params p;
		greedy_params(&p);
		if (raw)
			p.density_mass = 0;
		struct bb_nest *n = run(t, &p, BB_NEST_INFER, NULL);
		double peak = bb_nest_score(n, "A", "B", "C", 30 * MS);
		double stray = bb_nest_score(n, "A", "B", "C", 2000);
		CHECK(fabs(peak - 10.5) < 1e-9);
		CHECK(stray > 0);
		if (raw)
			CHECK(stray / w2us > 100 * (peak / w30ms));
		else
			CHECK(stray / w2us < peak / w30ms / 10);
		/* the support: an empty bin within a factor of 10 of mass takes a
		 * density from its window (10 ms, 3 times under the peak), one
		 * further from all mass keeps its zero (100 us: 50 times over the
		 * stray bin, 300 times under the peak; 1 s) */
		double near = bb_nest_score(n, "A", "B", "C", 10 * MS);
		CHECK(raw ? near == 0 : near > 0);
		CHECK(bb_nest_score(n, "A", "B", "C", 100000) == 0);
		CHECK(bb_nest_score(n, "A", "B", "C", 1000 * MS) == 0);
		bb_nest_free(n);
	}
	struct bb_nest_params p;
	greedy_params(&p);
	struct bb_err err = {{0}};
	p.density_mass = -1;
	CHECK(bb_nest_params_check(&p, &err) < 0);
}

/* A histogram holds its first half (delays >= 0) alone until a negative
 * delay counts: its second half then comes, zeroed, and the first keeps
 * its counts; before, the second half reads as 0. */
static void test_histogram_halves(void)
{
	char t[4096];
	densities_trace(t, sizeof t);
	struct bb_nest_params p;
	greedy_params(&p);
	struct bb_nest *n = run(t, &p, BB_NEST_INFER, NULL);
	uint32_t nb = n->cfg.bins.n;
	struct triple *x = nest_triple_add(n, 900001, 900002, 900003);
	CHECK_INT(x->neg, 0);
	CHECK_INT(nest_tri_halves(x), 1);
	*nest_tri_at(n, x, 3) += 1.5;
	CHECK(nest_tri_get(n, x, nb + 3) == 0);
	CHECK_INT(x->neg, 0);
	uint32_t k = nest_sb_bin(n, -2000);
	CHECK(k >= nb && k < 2 * nb);
	*nest_tri_at(n, x, k) += 2;
	CHECK_INT(x->neg, 1);
	CHECK_INT(nest_tri_halves(x), 2);
	CHECK(nest_tri_get(n, x, k) == 2);
	CHECK(nest_tri_get(n, x, 3) == 1.5);
	double sum = 0;
	for (uint32_t i = 0; i < 2 * nb; i++)
		sum += nest_tri_get(n, x, i);
	CHECK(sum == 3.5);
	/* a learnt histogram with no negative delay reads 0 there */
	CHECK(bb_nest_score(n, "A", "B", "C", 30 * MS) > 0);
	CHECK(bb_nest_score(n, "A", "B", "C", -30 * MS) == 0);
	bb_nest_free(n);
}

static const struct unit_test tests[] = {
	{"bins", test_bins},
	{"bins_fast", test_bins_fast},
	{"replay_and_stream", test_replay_and_stream},
	{"hist_quantiles", test_hist_quantiles},
	{"figure3", test_figure3},
	{"figure5", test_figure5},
	{"call_pairs", test_call_pairs},
	{"eviction", test_eviction},
	{"lost_return", test_lost_return},
	{"in_flight_at_end", test_in_flight_at_end},
	{"in_flight_at_start", test_in_flight_at_start},
	{"ties_and_penalties", test_ties_and_penalties},
	{"overlap_penalty", test_overlap_penalty},
	{"oracle", test_oracle},
	{"oracle_path", test_oracle_path},
	{"truth", test_truth},
	{"truth_paper_example", test_truth_paper_example},
	{"skew_window", test_skew_window},
	{"smoothing", test_smoothing},
	{"densities", test_densities},
	{"histogram_halves", test_histogram_halves},
	{"streaming_memory", test_streaming_memory},
	{"rank_and_prune", test_rank_and_prune},
	{"parse_error", test_parse_error},
	{"params_check", test_params_check},
	{"scoreboard_kinds", test_scoreboard_kinds},
	{"return_score", test_return_score},
	{"reassign", test_reassign},
	{"global", test_global},
	{"conflict_rule", test_conflict_rule},
	{"whole_capacity", test_whole_capacity},
	{"content", test_content},
	{"label_kinds", test_label_kinds},
	{"worker_queue", test_worker_queue},
	{"pool_rotation", test_pool_rotation},
	{"pair_deal", test_pair_deal},
	{"sibling_ids", test_sibling_ids},
	{"auto_default", test_auto_default},
	{"parallel_nodes", test_parallel_nodes},
};

UNIT_MAIN(tests)

/* test_maketrace.c - unit tests: PRNG, config errors, generator, loss and skew models, merging */
/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "maketrace/maketrace.h"
#include "unit.h"

/* ---- helpers ---- */

/* Parses text as a config; returns the error message (static buffer) or NULL. */
static const char *config_error(const char *text)
{
	static struct bb_err err;
	struct bb_mt_config *cfg = NULL;
	memset(&err, 0, sizeof(err));
	int rc = bb_mt_config_parse(text, strlen(text), "t.json", &cfg, &err);
	bb_mt_config_free(cfg);
	if (rc == 0)
		return NULL;
	CHECK_INT(rc, BB_ERR_PARSE);
	return err.msg;
}

static struct bb_mt_config *config_ok(const char *text)
{
	struct bb_err err = {{0}};
	struct bb_mt_config *cfg = NULL;
	if (bb_mt_config_parse(text, strlen(text), "t.json", &cfg, &err) != 0)
		UNIT_FAIL_("config rejected: %s", err.msg);
	return cfg;
}

/* Copies of the summary's borrowed arrays, which die with the generator. */
static uint64_t sum_instances[8];
static const char *sum_names[8];

/* Runs the generator into memory; returns the trace (caller frees). The
 * summary's arrays point to sum_instances and sum_names. */
static char *generate(const struct bb_mt_config *cfg, const struct bb_mt_opts *o,
                      struct bb_mt_summary *sum, size_t *len)
{
	struct bb_err err = {{0}};
	char *buf = NULL;
	size_t n = 0;
	FILE *fp = open_memstream(&buf, &n);
	struct bb_writer *w = bb_writer_fopen(fp, "mem", &err);
	struct bb_mt_gen *g = bb_mt_gen_new(cfg, o, &err);
	CHECK(g != NULL);
	if (g) {
		int rc = bb_mt_gen_run(g, w, &err);
		if (rc)
			UNIT_FAIL_("generator failed: %s", err.msg);
		if (sum) {
			bb_mt_gen_summary(g, sum);
			for (uint32_t i = 0; i < sum->ntracelets && i < 8; i++) {
				sum_instances[i] = sum->instances[i];
				sum_names[i] = sum->tracelet_names[i];
			}
			sum->instances = sum_instances;
			sum->tracelet_names = sum_names;
		}
	}
	CHECK_INT(bb_writer_close(w, &err), 0);
	fclose(fp);
	bb_mt_gen_free(g);
	if (len)
		*len = n;
	return buf;
}

static const char small_cfg[] =
	"{\"seed\": 5, \"duration\": 20,\n"
	" \"nodes\": [\"C\", \"W1\", \"W2\", \"DB\"],\n"
	" \"defaults\": {\"delay\": [0.02, 0.005], \"return\": [0.005, 0.001]},\n"
	" \"tracelets\": [\n"
	"  {\"name\": \"req\", \"instances\": 3, \"think\": [0.1, 0.3], \"node\": \"C\",\n"
	"   \"steps\": [{\"choose\": [\n"
	"      {\"weight\": 2, \"call\": \"W1\", \"steps\": [{\"call\": \"DB\"}]},\n"
	"      {\"weight\": 1, \"call\": \"W2\", \"steps\": [\n"
	"         {\"parallel\": [{\"call\": \"DB\"}, {\"call\": \"DB\"}]}]}]}]},\n"
	"  {\"name\": \"note\", \"instances\": 1, \"think\": [1, 2],\n"
	"   \"steps\": [{\"msg\": [\"W1\", \"W2\"]}, {\"msg\": \"DB\", \"delay\": [0.5, 0.1]}]}\n"
	" ]}\n";

/* ---- PRNG ---- */

static void test_rng_splitmix_reference(void)
{
	/* splitmix64 from state 0: the published reference outputs */
	uint64_t st = 0;
	CHECK(bb_mt_splitmix64(&st) == UINT64_C(0xe220a8397b1dcdaf));
	CHECK(bb_mt_splitmix64(&st) == UINT64_C(0x6e789e6aa1b965f4));
	CHECK(bb_mt_splitmix64(&st) == UINT64_C(0x06c45d188009454f));
	CHECK(bb_mt_splitmix64(&st) == UINT64_C(0xf88bb8a8724c81ec));
}

static void test_rng_determinism(void)
{
	struct bb_mt_rng a, b, c, d;
	bb_mt_rng_seed(&a, 42);
	bb_mt_rng_seed(&b, 42);
	bb_mt_rng_seed(&c, 43);
	bb_mt_rng_seed_stream(&d, 42, 1);
	int same_c = 0, same_d = 0;
	for (int i = 0; i < 1000; i++) {
		uint64_t x = bb_mt_rng_next(&a), y = bb_mt_rng_next(&b);
		if (x != y) {
			UNIT_FAIL_("draw %d: %llx != %llx", i, (unsigned long long)x,
			           (unsigned long long)y);
			break;
		}
		same_c += x == bb_mt_rng_next(&c);
		same_d += x == bb_mt_rng_next(&d);
	}
	CHECK_INT(same_c, 0);
	CHECK_INT(same_d, 0);
	/* seed 0 is a valid seed: the state is not all zero */
	bb_mt_rng_seed(&a, 0);
	CHECK(bb_mt_rng_next(&a) != 0 || bb_mt_rng_next(&a) != 0);
}

static void test_rng_distributions(void)
{
	struct bb_mt_rng r;
	bb_mt_rng_seed(&r, 7);
	double sum = 0, sq = 0, pos = 0, lo = 1, hi = 0;
	int neg = 0;
	const int n = 200000;
	for (int i = 0; i < n; i++) {
		double u = bb_mt_rng_unit(&r);
		lo = u < lo ? u : lo;
		hi = u > hi ? u : hi;
		double z = bb_mt_rng_gauss(&r);
		sum += z;
		sq += z * z;
		double p = bb_mt_rng_gauss_pos(&r, 0, 1);
		neg += p < 0;
		pos += p;
	}
	CHECK(lo >= 0 && hi < 1);
	CHECK(fabs(sum / n) < 0.01);
	CHECK(fabs(sq / n - 1) < 0.02);
	CHECK_INT(neg, 0);
	/* a standard normal truncated at 0 has mean sqrt(2/pi) = 0.7979 */
	CHECK(fabs(pos / n - 0.7979) < 0.01);
	CHECK(bb_mt_rng_gauss_pos(&r, 0.25, 0) == 0.25);
}

/* ---- config errors ---- */

static void test_config_syntax_error(void)
{
	const char *e = config_error("{\"nodes\": [\"a\",\n  \"b\"\n  \"c\"]}");
	CHECK_HAS(e, "t.json:3:");
	e = config_error("");
	CHECK_HAS(e, "t.json:1:");
	e = config_error("{\"nodes\": [\"a\"], \"nodes\": [\"b\"]}");
	CHECK_HAS(e, "t.json:1:");
	CHECK_HAS(e, "duplicate");
}

static void test_config_wrong_types(void)
{
	const char *e = config_error("{\"nodes\": [\"a\", \"b\"],\n \"duration\": \"10\",\n"
	                             " \"tracelets\": []}");
	CHECK_STR(e, "t.json:2:14: duration: expected a number");
	e = config_error("{\"nodes\": [\"a\", \"b\"], \"duration\": 1, \"tracelets\": [\n"
	                 " {\"name\": \"x\", \"node\": \"a\", \"steps\": [\n"
	                 "   {\"call\": \"b\", \"delay\": [0.1], \"return\": [0, 0]}]}]}");
	CHECK_HAS(e, "t.json:3:27: tracelets[0].steps[0].delay: expected [mean, sd]");
	e = config_error("{\"nodes\": [\"a\", \"b\"], \"duration\": 1, \"tracelets\": [\n"
	                 " {\"name\": \"x\", \"node\": \"a\", \"instances\": 2.5, \"steps\": []}]}");
	CHECK_STR(e, "t.json:2:42: tracelets[0].instances: expected an integer");
	e = config_error("{\"nodes\": \"a\", \"duration\": 1, \"tracelets\": []}");
	CHECK_HAS(e, "nodes: expected a non-empty array");
	e = config_error("[1, 2]");
	CHECK_HAS(e, "expected a JSON object at the top");
	e = config_error("{\"nodes\": [\"a\", \"b\"], \"duration\": 1, \"tracelets\": [\n"
	                 " {\"name\": \"x\", \"node\": \"a\", \"steps\": [{\"go\": \"b\"}]}]}");
	CHECK_HAS(e, "tracelets[0].steps[0]: expected a step");
	e = config_error("{\"nodes\": [\"a\", \"b\"], \"duration\": 1, \"tracelets\": [\n"
	                 " {\"name\": \"x\", \"node\": \"a\", \"steps\": [{\"call\": \"b\",\n"
	                 "  \"delay\": [1, 0], \"return\": [1, 0], \"dealy\": 3}]}]}");
	CHECK_STR(e, "t.json:3:47: tracelets[0].steps[0].dealy: unknown key \"dealy\"");
}

static void test_config_unknown_node(void)
{
	const char *e = config_error("{\"nodes\": [\"a\", \"b\"], \"duration\": 1, \"tracelets\": [\n"
	                             " {\"name\": \"x\", \"node\": \"a\", \"steps\": [\n"
	                             "   {\"call\": \"c\", \"delay\": [1, 0], \"return\": [0, 0]}]}]}");
	CHECK_STR(e, "t.json:3:13: tracelets[0].steps[0].call: unknown node \"c\" (not in "
	             "\"nodes\")");
	e = config_error("{\"nodes\": [\"a\", \"b\"], \"duration\": 1, \"skew\": {\"z\": 0.1},\n"
	                 " \"tracelets\": []}");
	CHECK_HAS(e, "skew.z: unknown node \"z\"");
	e = config_error("{\"nodes\": [\"a\", \"a\"], \"duration\": 1, \"tracelets\": []}");
	CHECK_HAS(e, "nodes[1]: node \"a\" listed twice");
	e = config_error("{\"nodes\": [\"a\", \"b\"], \"duration\": 1, \"tracelets\": [\n"
	                 " {\"name\": \"x\", \"steps\": [\n"
	                 "   {\"call\": \"b\", \"delay\": [1, 0], \"return\": [0, 0]}]}]}");
	CHECK_HAS(e, "a call needs a caller");
	e = config_error("{\"nodes\": [\"a\", \"b\"], \"duration\": 1, \"tracelets\": [\n"
	                 " {\"name\": \"x\", \"node\": \"a\", \"steps\": [\n"
	                 "   {\"msg\": [\"b\", \"b\"], \"delay\": [1, 0]}]}]}");
	CHECK_HAS(e, "sends to itself");
}

static void test_config_weights(void)
{
	const char *e = config_error(
		"{\"nodes\": [\"a\", \"b\"], \"duration\": 1, \"tracelets\": [\n"
		" {\"name\": \"x\", \"node\": \"a\", \"steps\": [{\"choose\": [\n"
		"   {\"weight\": -1, \"msg\": \"b\", \"delay\": [1, 0]}]}]}]}");
	CHECK_STR(e, "t.json:3:15: tracelets[0].steps[0].choose[0].weight: must not be negative");
	e = config_error("{\"nodes\": [\"a\", \"b\"], \"duration\": 1, \"tracelets\": [\n"
	                 " {\"name\": \"x\", \"node\": \"a\", \"steps\": [{\"choose\": [\n"
	                 "   {\"weight\": 0, \"msg\": \"b\", \"delay\": [1, 0]}]}]}]}");
	CHECK_HAS(e, "tracelets[0].steps[0].choose: weights sum to 0");
	e = config_error("{\"nodes\": [\"a\", \"b\"], \"duration\": 1, \"tracelets\": [\n"
	                 " {\"name\": \"x\", \"node\": \"a\", \"steps\": [{\"choose\": [\n"
	                 "   {\"weight\": \"1\", \"msg\": \"b\", \"delay\": [1, 0]}]}]}]}");
	CHECK_HAS(e, "choose[0].weight: expected a number");
	e = config_error("{\"nodes\": [\"a\", \"b\"], \"duration\": 1, \"tracelets\": [\n"
	                 " {\"name\": \"x\", \"node\": \"a\", \"steps\": [{\"msg\": \"b\",\n"
	                 "   \"delay\": [[1, 0.1, 0], [0, 2, 0]], \"weight\": 1}]}]}");
	CHECK_HAS(e, "steps[0].weight: unknown key");
	e = config_error("{\"nodes\": [\"a\", \"b\"], \"duration\": 1, \"tracelets\": [\n"
	                 " {\"name\": \"x\", \"node\": \"a\", \"steps\": [{\"msg\": \"b\",\n"
	                 "   \"delay\": [[0, 0.1, 0], [0, 2, 0]]}]}]}");
	CHECK_HAS(e, "steps[0].delay: weights sum to 0");
}

static void test_config_negative_values(void)
{
	const char *e = config_error(
		"{\"nodes\": [\"a\", \"b\"], \"duration\": 1, \"tracelets\": [\n"
		" {\"name\": \"x\", \"node\": \"a\", \"steps\": [\n"
		"   {\"call\": \"b\", \"delay\": [0.1, -0.5], \"return\": [0, 0]}]}]}");
	CHECK_STR(e, "t.json:3:33: tracelets[0].steps[0].delay[1]: must not be negative");
	e = config_error("{\"nodes\": [\"a\", \"b\"], \"duration\": -5, \"tracelets\": []}");
	CHECK_HAS(e, "duration: must not be negative");
	e = config_error("{\"nodes\": [\"a\", \"b\"], \"duration\": 1, \"tracelets\": [\n"
	                 " {\"name\": \"x\", \"node\": \"a\", \"think\": [-1, 2], \"steps\": []}]}");
	CHECK_HAS(e, "tracelets[0].think[0]: must not be negative");
	e = config_error("{\"nodes\": [\"a\", \"b\"], \"duration\": 1, \"tracelets\": [\n"
	                 " {\"name\": \"x\", \"node\": \"a\", \"think\": [3, 2], \"steps\": []}]}");
	CHECK_HAS(e, "tracelets[0].think[1]: max 2 is below min 3");
	e = config_error("{\"nodes\": [\"a\", \"b\"], \"duration\": 1, \"tracelets\": [\n"
	                 " {\"name\": \"x\", \"node\": \"a\", \"instances\": 0, \"steps\": []}]}");
	CHECK_HAS(e, "tracelets[0].instances: out of range");
	/* Instance slots are live at once: bounded in all tracelets together, so
	 * no small config can take gigabytes before writing a line. */
	e = config_error("{\"nodes\": [\"a\", \"b\"], \"messages\": 10, \"tracelets\": [\n"
	                 " {\"name\": \"x\", \"node\": \"a\", \"instances\": 10000000, \"steps\": []}]}");
	CHECK_HAS(e, "tracelets[0].instances: out of range");
	e = config_error("{\"nodes\": [\"a\", \"b\"], \"messages\": 10, \"tracelets\": [\n"
	                 " {\"name\": \"x\", \"node\": \"a\", \"instances\": 60000, \"steps\": [{\"call\": \"b\", \"delay\": [0.01, 0], \"return\": [0.01, 0]}]},\n"
	                 " {\"name\": \"y\", \"node\": \"a\", \"instances\": 60000, \"steps\": [{\"call\": \"b\", \"delay\": [0.01, 0], \"return\": [0.01, 0]}]}]}");
	CHECK_HAS(e, "tracelets[1]: more than 100000 instances in all tracelets");
	e = config_error("{\"nodes\": [\"a\", \"b\"], \"duration\": 1, \"loss\": {\"probability\": 2},\n"
	                 " \"tracelets\": []}");
	CHECK_HAS(e, "loss.probability: out of range");
}

static void test_config_semantics(void)
{
	const char *e = config_error("{\"nodes\": [\"a\", \"b\"], \"tracelets\": []}");
	CHECK_HAS(e, "missing \"duration\" or \"messages\"");
	e = config_error("{\"nodes\": [\"a\", \"b\"], \"duration\": 1, \"tracelets\": [\n"
	                 " {\"name\": \"x\", \"node\": \"a\", \"steps\": [\n"
	                 "   {\"call\": \"b\", \"delay\": [0, 0], \"return\": [0, 0]}]}]}");
	CHECK_HAS(e, "its time would never advance");
	e = config_error("{\"nodes\": [\"a\", \"b\"], \"duration\": 1, \"tracelets\": [\n"
	                 " {\"name\": \"x\", \"node\": \"a\", \"think\": [1, 1], \"steps\": []}]}");
	CHECK_HAS(e, "sends no messages");
	e = config_error("{\"nodes\": [\"a\", \"b\"], \"duration\": 1, \"tracelets\": [\n"
	                 " {\"name\": \"x\", \"node\": \"a\", \"steps\": [{\"call\": \"b\"}]}]}");
	CHECK_HAS(e, "tracelets[0].steps[0]: missing \"delay\" (and no default for it)");
	e = config_error("{\"nodes\": [\"a\", \"b\"], \"duration\": 1, \"tracelets\": [\n"
	                 " {\"name\": \"x.y\", \"node\": \"a\", \"steps\": []}]}");
	CHECK_HAS(e, "tracelets[0].name: expected a name");
	CHECK(config_error(small_cfg) == NULL);
	struct bb_mt_config *cfg = config_ok(small_cfg);
	if (!cfg)
		return;
	CHECK_INT(bb_mt_config_seed(cfg), 5);
	CHECK_INT(bb_mt_config_nnodes(cfg), 4);
	CHECK_INT(bb_mt_config_ntracelets(cfg), 2);
	CHECK_STR(bb_mt_config_tracelet(cfg, 1), "note");
	bb_mt_config_free(cfg);
}

/* ---- loss model ---- */

static void test_loss_burst_drops(void)
{
	struct bb_mt_loss l;
	bb_mt_loss_init(&l, 100, 64, 0, 1);
	int dropped = 0;
	/* 1000 messages within 1 ms: far above 100/s */
	for (int i = 0; i < 1000; i++)
		dropped += bb_mt_loss_drop(&l, 1000 * (int64_t)i);
	CHECK_INT(dropped, 1000 - 64);
	CHECK_INT(l.dropped_queue, 1000 - 64);
	CHECK_INT(l.dropped_random, 0);
	/* one second later the queue has drained: captured again */
	CHECK_INT(bb_mt_loss_drop(&l, 2 * BB_NS_PER_S), 0);
}

static void test_loss_slow_stream(void)
{
	struct bb_mt_loss l;
	bb_mt_loss_init(&l, 100, 64, 0, 1);
	int dropped = 0;
	/* 50/s for 1000 s: below the capture rate, never drops */
	for (int i = 0; i < 50000; i++)
		dropped += bb_mt_loss_drop(&l, (int64_t)i * (BB_NS_PER_S / 50));
	CHECK_INT(dropped, 0);
	/* 200/s: the queue fills after 64 / (200 - 100) s, then half is lost */
	bb_mt_loss_init(&l, 100, 64, 0, 1);
	dropped = 0;
	for (int i = 0; i < 20000; i++)
		dropped += bb_mt_loss_drop(&l, (int64_t)i * (BB_NS_PER_S / 200));
	CHECK(dropped > 9800 && dropped < 10000);
	CHECK(!bb_mt_loss_active(&(struct bb_mt_loss){0}));
}

static void test_loss_random(void)
{
	struct bb_mt_loss a, b;
	bb_mt_loss_init(&a, 0, 0, 0.1, 9);
	bb_mt_loss_init(&b, 0, 0, 0.1, 9);
	int da = 0, same = 1;
	for (int i = 0; i < 100000; i++) {
		int x = bb_mt_loss_drop(&a, i), y = bb_mt_loss_drop(&b, i);
		da += x;
		same &= x == y;
	}
	CHECK(same);
	CHECK(da > 9500 && da < 10500);
	CHECK_INT(a.dropped_random, (uint64_t)da);
}

/* ---- skew model ---- */

static void test_skew_shift(void)
{
	CHECK_INT(bb_mt_skew_shift(30000000, 0, 0, 123), 30000000);
	/* 100 ppm over 1000 s is 0.1 s */
	CHECK_INT(bb_mt_skew_shift(0, 100, 5 * BB_NS_PER_S, 1005 * BB_NS_PER_S), 100000000);
	CHECK_INT(bb_mt_skew_shift(-5, -100, 0, 1000 * BB_NS_PER_S), -100000005);
	/* times saturate instead of wrapping */
	CHECK(bb_mt_time_add(INT64_MAX - 1, 5) == INT64_MAX);
	CHECK(bb_mt_time_add(INT64_MIN + 3, -5) == INT64_MIN + 1);
	CHECK_INT(bb_mt_time_add(7, -9), -2);

	struct bb_err err = {{0}};
	struct bb_mt_skew *sk = bb_mt_skew_new();
	CHECK(!bb_mt_skew_active(sk));
	CHECK_INT(bb_mt_skew_parse_arg(sk, "WS2=0.030", 0, &err), 0);
	CHECK_INT(bb_mt_skew_parse_arg(sk, "WS2=-0.010", 0, &err), 0);
	CHECK_INT(bb_mt_skew_parse_arg(sk, "a=b=1.5", 1, &err), 0);
	CHECK(bb_mt_skew_parse_arg(sk, "WS2", 0, &err) == BB_ERR_ARG);
	CHECK_HAS(err.msg, "expected NODE=SECONDS");
	CHECK(bb_mt_skew_parse_arg(sk, "WS2=0.1234567891", 0, &err) == BB_ERR_ARG);
	CHECK(bb_mt_skew_parse_arg(sk, "WS2=fast", 1, &err) == BB_ERR_ARG);
	CHECK(bb_mt_skew_parse_arg(sk, "WS2=1e9", 1, &err) == BB_ERR_ARG);
	CHECK_INT(bb_mt_skew_count(sk), 2);
	int64_t off;
	double drift;
	int ho, hd;
	uint32_t i = bb_mt_skew_find(sk, "WS2", 3);
	CHECK(i != BB_NONE);
	if (i != BB_NONE) {
		CHECK_STR(bb_mt_skew_entry(sk, i, &off, &drift, &ho, &hd), "WS2");
		CHECK_INT(off, 20000000);
		CHECK(drift == 0 && ho && !hd);
	}
	i = bb_mt_skew_find(sk, "a=b", 3);
	CHECK(i != BB_NONE);
	if (i != BB_NONE) {
		bb_mt_skew_entry(sk, i, &off, &drift, &ho, &hd);
		CHECK(drift == 1.5 && hd && !ho);
	}
	CHECK(bb_mt_skew_active(sk));
	bb_mt_skew_free(sk);
	bb_mt_skew_free(NULL);
}

static void test_skew_table(void)
{
	char path[] = "/tmp/bb_mt_tableXXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	FILE *fp = fdopen(fd, "w");
	fputs("# offsets from NTP\n\nWS1 0.5   # fast\n  WS2\t-0.000000001\n", fp);
	fclose(fp);
	struct bb_err err = {{0}};
	struct bb_mt_skew *sk = bb_mt_skew_new();
	CHECK_INT(bb_mt_skew_load_table(sk, path, -1, &err), 0);
	int64_t off = 0;
	bb_mt_skew_entry(sk, bb_mt_skew_find(sk, "WS1", 3), &off, NULL, NULL, NULL);
	CHECK_INT(off, -500000000);
	bb_mt_skew_entry(sk, bb_mt_skew_find(sk, "WS2", 3), &off, NULL, NULL, NULL);
	CHECK_INT(off, 1);
	bb_mt_skew_free(sk);

	static const char *const bad[][2] = {
		{"WS1 0.5\nWS2 0.1 extra\n", ":2: expected NODE OFFSET_SECONDS"},
		{"\n\nWS1 half\n", ":3: bad offset \"half\""},
		{"WS1\n", ":1: expected NODE OFFSET_SECONDS"},
		{"WS1 1\nWS1 2\n", ":2: node \"WS1\" listed twice (first at line 1)"},
	};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		fp = fopen(path, "w");
		fputs(bad[k][0], fp);
		fclose(fp);
		sk = bb_mt_skew_new();
		CHECK_INT(bb_mt_skew_load_table(sk, path, -1, &err), BB_ERR_PARSE);
		CHECK_HAS(err.msg, path);
		CHECK_HAS(err.msg, bad[k][1]);
		bb_mt_skew_free(sk);
	}
	remove(path);
	sk = bb_mt_skew_new();
	CHECK_INT(bb_mt_skew_load_table(sk, "/nonexistent/t", -1, &err), BB_ERR_IO);
	bb_mt_skew_free(sk);
}

/* ---- generator ---- */

static void test_gen_deterministic(void)
{
	struct bb_mt_config *cfg = config_ok(small_cfg);
	if (!cfg)
		return;
	size_t la, lb, lc;
	struct bb_mt_summary s;
	char *a = generate(cfg, NULL, &s, &la);
	char *b = generate(cfg, NULL, NULL, &lb);
	struct bb_mt_opts o = {.set_seed = 1, .seed = 6};
	char *c = generate(cfg, &o, NULL, &lc);
	CHECK(la == lb && !memcmp(a, b, la));
	CHECK(la != lc || memcmp(a, c, la));
	CHECK_HAS(a, "#source maketrace t.json\n#maketrace seed=5 ");
	CHECK_HAS(c, "#maketrace seed=6 ");
	CHECK(s.written > 100);
	CHECK_INT(s.written, s.generated);
	CHECK_INT(s.ntracelets, 2);
	CHECK(s.instances[0] > 0 && s.instances[1] > 0);
	free(a);
	free(b);
	free(c);
	bb_mt_config_free(cfg);
}

/* Reads a trace from memory: every record must carry path=, be in time order,
 * and CALLs and RETs must pair up. Returns the number of records. */
static uint64_t check_trace(const char *buf, size_t len, uint64_t *instances)
{
	struct bb_err err = {{0}};
	struct bb_reader *r = bb_reader_mem(buf, len, "mem", NULL, &err);
	struct bb_rec rec;
	uint64_t n = 0, calls = 0, rets = 0;
	int64_t last = INT64_MIN;
	int rc;
	char seen[4096] = {0};
	*instances = 0;
	CHECK(r != NULL);
	if (!r)
		return 0;
	while ((rc = bb_reader_next(r, &rec, &err)) == 1) {
		size_t plen;
		const char *p = bb_rec_attr(&rec, "path", &plen);
		if (!p) {
			UNIT_FAIL_("line %llu has no path=", (unsigned long long)rec.line);
			break;
		}
		CHECK(rec.ts_ns >= last);
		last = rec.ts_ns;
		calls += rec.op == BB_CALL;
		rets += rec.op == BB_RET;
		/* count distinct "req.N" values with N < 4096 */
		if (plen > 4 && !memcmp(p, "req.", 4)) {
			long k = strtol(p + 4, NULL, 10);
			if (k > 0 && k < 4096 && !seen[k]) {
				seen[k] = 1;
				(*instances)++;
			}
		}
		n++;
	}
	CHECK_INT(rc, 0);
	CHECK_INT(calls, rets);
	bb_reader_free(r);
	return n;
}

static void test_gen_paths_and_limits(void)
{
	struct bb_mt_config *cfg = config_ok(small_cfg);
	if (!cfg)
		return;
	size_t len;
	struct bb_mt_summary s;
	struct bb_mt_opts o = {.stats = 1};
	char *a = generate(cfg, &o, &s, &len);
	uint64_t inst;
	CHECK_INT(check_trace(a, len, &inst), s.written);
	CHECK_INT(inst, s.instances[0]);
	CHECK_INT(s.nodes, 4);
	CHECK_INT(s.edges, 9); /* C<->W1, C<->W2, W1<->DB, W2<->DB (8), W1->W2 (W2->DB again) */
	CHECK(s.parallelism >= 1 && s.child_calls > 0);
	CHECK(s.first_ns >= INT64_C(1000000000) * BB_NS_PER_S);
	free(a);

	/* an exact message limit, and the same prefix as the longer run */
	struct bb_mt_opts lim = {.set_messages = 1, .messages = 37};
	char *b = generate(cfg, &lim, &s, &len);
	CHECK_INT(s.generated, 37);
	CHECK_INT(s.written, 37);
	struct bb_mt_opts nolim = {.set_messages = 1, .messages = 1000};
	size_t len2;
	char *c = generate(cfg, &nolim, NULL, &len2);
	/* skip the #maketrace line, which names the limit */
	const char *pb = strstr(b, "\n1"), *pc = strstr(c, "\n1");
	CHECK(pb && pc && !strncmp(pb, pc, strlen(pb)));
	free(b);
	free(c);

	/* "-" ids */
	struct bb_mt_opts noid = {.no_ids = 1, .set_messages = 1, .messages = 50};
	char *d = generate(cfg, &noid, NULL, &len);
	CHECK(strstr(d, "\tCALL\tC\tW1\t-\tpath=req.") || strstr(d, "\tCALL\tC\tW2\t-\tpath=req."));
	CHECK(!strstr(d, "\tCALL\tC\tW1\t1\t"));
	free(d);
	bb_mt_config_free(cfg);
}

struct idts {
	uint64_t key;
	int64_t ts;
	char sender[8];
};

static size_t collect(const char *buf, size_t len, struct idts *out, size_t max)
{
	struct bb_err err = {{0}};
	struct bb_reader *r = bb_reader_mem(buf, len, "mem", NULL, &err);
	struct bb_rec rec;
	size_t n = 0;
	while (r && bb_reader_next(r, &rec, &err) == 1 && n < max) {
		if (rec.op == BB_MSG)
			continue;
		out[n].key = strtoull(rec.id_str, NULL, 10) * 2 + (rec.op == BB_RET);
		out[n].ts = rec.ts_ns;
		snprintf(out[n].sender, sizeof(out[n].sender), "%s", bb_reader_node(r, rec.sender));
		n++;
	}
	bb_reader_free(r);
	return n;
}

static int by_key(const void *a, const void *b)
{
	const struct idts *x = a, *y = b;
	return x->key < y->key ? -1 : x->key > y->key;
}

static void test_gen_skew_shifts(void)
{
	struct bb_mt_config *cfg = config_ok(small_cfg);
	if (!cfg)
		return;
	struct bb_err err = {{0}};
	struct bb_mt_skew *sk = bb_mt_skew_new();
	CHECK_INT(bb_mt_skew_parse_arg(sk, "W1=0.030", 0, &err), 0);
	CHECK_INT(bb_mt_skew_parse_arg(sk, "DB=-0.004", 0, &err), 0);
	struct bb_mt_opts plain = {0}, skewed = {.skew = sk};
	size_t la, lb;
	struct bb_mt_summary s;
	char *a = generate(cfg, &plain, NULL, &la);
	char *b = generate(cfg, &skewed, &s, &lb);
	CHECK(s.skew);
	CHECK_HAS(b, " skew=W1:0.030000000,DB:-0.004000000");
	uint64_t inst;
	check_trace(b, lb, &inst); /* still in time order, paired, with paths */
	enum { MAX = 20000 };
	struct idts *x = calloc(MAX, sizeof(*x)), *y = calloc(MAX, sizeof(*y));
	size_t nx = collect(a, la, x, MAX), ny = collect(b, lb, y, MAX);
	CHECK_INT(nx, ny);
	qsort(x, nx, sizeof(*x), by_key);
	qsort(y, ny, sizeof(*y), by_key);
	int bad = 0;
	for (size_t i = 0; i < nx && i < ny; i++) {
		int64_t want = !strcmp(x[i].sender, "W1") ? 30000000
		             : !strcmp(x[i].sender, "DB") ? -4000000 : 0;
		if (x[i].key != y[i].key || y[i].ts - x[i].ts != want)
			bad++;
	}
	CHECK_INT(bad, 0);
	free(x);
	free(y);
	free(a);
	free(b);

	/* an override naming a node the config lacks */
	CHECK_INT(bb_mt_skew_parse_arg(sk, "nosuch=1", 0, &err), 0);
	CHECK(bb_mt_gen_new(cfg, &skewed, &err) == NULL);
	CHECK_HAS(err.msg, "unknown node \"nosuch\"");
	bb_mt_skew_free(sk);
	bb_mt_config_free(cfg);
}

static void test_gen_loss(void)
{
	struct bb_mt_config *cfg = config_ok(small_cfg);
	if (!cfg)
		return;
	struct bb_mt_opts o = {.set_capture_rate = 1, .capture_rate = 5, .set_queue = 1, .queue = 4};
	struct bb_mt_summary s;
	size_t len;
	char *a = generate(cfg, &o, &s, &len);
	CHECK(s.loss);
	CHECK(s.dropped_queue > 0);
	CHECK_INT(s.written + s.dropped_queue + s.dropped_random, s.generated);
	CHECK_HAS(a, " capture_rate=5 queue=4");
	free(a);
	struct bb_mt_opts fast = {.set_capture_rate = 1, .capture_rate = 1e6};
	a = generate(cfg, &fast, &s, &len);
	CHECK_INT(s.dropped_queue, 0);
	free(a);
	bb_mt_config_free(cfg);
}

/* ---- merging ---- */

static char *merge(const char *const *texts, size_t n, const struct bb_mt_skew *sk,
                   const char *source, struct bb_mt_merge_stats *st, int *rc)
{
	struct bb_err err = {{0}};
	struct bb_reader *r[4];
	char *buf = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&buf, &len);
	struct bb_writer *w = bb_writer_fopen(fp, "mem", &err);
	for (size_t i = 0; i < n; i++)
		r[i] = bb_reader_mem(texts[i], strlen(texts[i]), i ? "b.tr" : "a.tr", NULL, &err);
	*rc = bb_mt_merge(r, n, sk, source, w, st, &err);
	bb_writer_close(w, &err);
	fclose(fp);
	for (size_t i = 0; i < n; i++)
		bb_reader_free(r[i]);
	return buf;
}

static void test_merge_dedupe(void)
{
	const char *a = "#bbtrace 1\n#source one\n"
	                "1.000000000\tCALL\tA\tB\t1\n"
	                "3.000000000\tRET\tB\tA\t1\tx=1\n"
	                "5.000000000\tMSG\tA\tC\t-\n";
	const char *b = "#bbtrace 1\n#source two\n"
	                "2.000000000\tCALL\tA\tD\t9\n"
	                "3.000000000\tRET\tB\tA\t1\tx=1\n"
	                "3.000000000\tRET\tB\tA\t1\tx=2\n"
	                "4.000000000\tRET\tD\tA\t9\n";
	const char *in[2] = {a, b};
	struct bb_mt_merge_stats st;
	int rc;
	char *out = merge(in, 2, NULL, "source bbskew a.tr b.tr", &st, &rc);
	CHECK_INT(rc, 0);
	CHECK_STR(out, "#bbtrace 1\n#source one\n#source two\n#source bbskew a.tr b.tr\n"
	               "1.000000000\tCALL\tA\tB\t1\n"
	               "2.000000000\tCALL\tA\tD\t9\n"
	               "3.000000000\tRET\tB\tA\t1\tx=1\n"
	               "3.000000000\tRET\tB\tA\t1\tx=2\n"
	               "4.000000000\tRET\tD\tA\t9\n"
	               "5.000000000\tMSG\tA\tC\t-\n");
	CHECK_INT(st.records, 7);
	CHECK_INT(st.written, 6);
	CHECK_INT(st.duplicates, 1);
	free(out);
}

static void test_merge_skew_roundtrip(void)
{
	const char *a = "#bbtrace 1\n"
	                "10.000000000\tCALL\tA\tB\t1\n"
	                "10.010000000\tCALL\tB\tC\t2\n"
	                "10.020000000\tRET\tC\tB\t2\tend=10.025000000\n"
	                "10.030000000\tRET\tB\tA\t1\n";
	struct bb_err err = {{0}};
	struct bb_mt_skew *fwd = bb_mt_skew_new(), *back = bb_mt_skew_new();
	CHECK_INT(bb_mt_skew_parse_arg(fwd, "C=0.5", 0, &err), 0);
	CHECK_INT(bb_mt_skew_parse_arg(back, "C=-0.5", 0, &err), 0);
	struct bb_mt_merge_stats st;
	int rc;
	char *s1 = merge(&a, 1, fwd, NULL, &st, &rc);
	CHECK_INT(rc, 0);
	/* C's return now comes last, with its end= shifted too */
	CHECK_STR(s1, "#bbtrace 1\n"
	              "10.000000000\tCALL\tA\tB\t1\n"
	              "10.010000000\tCALL\tB\tC\t2\n"
	              "10.030000000\tRET\tB\tA\t1\n"
	              "10.520000000\tRET\tC\tB\t2\tend=10.525000000\n");
	const char *in2 = s1;
	char *s2 = merge(&in2, 1, back, NULL, &st, &rc);
	CHECK_INT(rc, 0);
	CHECK_STR(s2, a);
	/* no transformation: a verbatim copy */
	char *s3 = merge(&a, 1, NULL, NULL, &st, &rc);
	CHECK_STR(s3, a);
	free(s1);
	free(s2);
	free(s3);
	bb_mt_skew_free(fwd);
	bb_mt_skew_free(back);
}

static const struct unit_test tests[] = {
	{"rng_splitmix_reference", test_rng_splitmix_reference},
	{"rng_determinism", test_rng_determinism},
	{"rng_distributions", test_rng_distributions},
	{"config_syntax_error", test_config_syntax_error},
	{"config_wrong_types", test_config_wrong_types},
	{"config_unknown_node", test_config_unknown_node},
	{"config_weights", test_config_weights},
	{"config_negative_values", test_config_negative_values},
	{"config_semantics", test_config_semantics},
	{"loss_burst_drops", test_loss_burst_drops},
	{"loss_slow_stream", test_loss_slow_stream},
	{"loss_random", test_loss_random},
	{"skew_shift", test_skew_shift},
	{"skew_table", test_skew_table},
	{"gen_deterministic", test_gen_deterministic},
	{"gen_paths_and_limits", test_gen_paths_and_limits},
	{"gen_skew_shifts", test_gen_skew_shifts},
	{"gen_loss", test_gen_loss},
	{"merge_dedupe", test_merge_dedupe},
	{"merge_skew_roundtrip", test_merge_skew_roundtrip},
};

UNIT_MAIN(tests)

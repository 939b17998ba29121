/* nest_truth.c - scoring inferred patterns against the oracle's (paper section 7.5.1) */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "nesting/nest_int.h"

/* What follows counts, for patterns, path instances and messages, how far
 * the inferred multiset of patterns is from the true one:
 *   patterns:  fp = inferred patterns that are not true ones, fn = the reverse;
 *   instances: per pattern, fp = max(0, inferred - true), fn = max(0, true - inferred);
 *   messages:  the same weighted by the pattern's number of call pairs.
 * With the paper's example (truth A-B-C-D twice; found A-B-C-D, A-B, C-D
 * once each) that gives patterns fp 2 fn 0, instances fp 2 fn 1. */

struct pk {
	char *key;
	uint64_t count;
	uint64_t size;   /* call pairs per instance */
	size_t rank;     /* position by count in its own run */
	uint64_t other;  /* count in the other run */
	size_t orank;    /* rank in the other run, SIZE_MAX if absent */
};

static uint64_t calls_in(const struct anode *a)
{
	uint64_t k = a->nchildren;
	for (uint32_t i = 0; i < a->nchildren; i++)
		k += calls_in(&a->children[i]);
	return k;
}

static int by_key(const void *x, const void *y)
{
	return strcmp(((const struct pk *)x)->key, ((const struct pk *)y)->key);
}

static int by_count(const void *x, const void *y)
{
	const struct pk *a = x, *b = y;
	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return strcmp(a->key, b->key);
}

static struct pk *collect(const struct bb_nest *n)
{
	struct pk *v = bb_xcalloc(n->pats.npat ? n->pats.npat : 1, sizeof(*v));
	for (size_t i = 0; i < n->pats.npat; i++) {
		v[i].key = nest_pattern_text(n, &n->pats.pat[i]);
		v[i].count = n->pats.pat[i].count;
		v[i].size = calls_in(&n->pats.pat[i].root);
	}
	qsort(v, n->pats.npat, sizeof(*v), by_count);
	for (size_t i = 0; i < n->pats.npat; i++)
		v[i].rank = i;
	qsort(v, n->pats.npat, sizeof(*v), by_key);
	return v;
}

/* Joins a with b (both sorted by key): fills a[i].other and orank. */
static void join(struct pk *a, size_t na, const struct pk *b, size_t nb)
{
	size_t j = 0;
	for (size_t i = 0; i < na; i++) {
		while (j < nb && strcmp(b[j].key, a[i].key) < 0)
			j++;
		if (j < nb && strcmp(b[j].key, a[i].key) == 0) {
			a[i].other = b[j].count;
			a[i].orank = b[j].rank;
		} else {
			a[i].other = 0;
			a[i].orank = SIZE_MAX;
		}
	}
}

void bb_nest_compare(const struct bb_nest *inferred, const struct bb_nest *oracle,
                     struct bb_nest_accuracy *acc)
{
	memset(acc, 0, sizeof(*acc));
	size_t ni = inferred->pats.npat, nt = oracle->pats.npat;
	struct pk *inf = collect(inferred), *tru = collect(oracle);
	join(inf, ni, tru, nt);
	join(tru, nt, inf, ni);

	acc->patterns_inferred = ni;
	acc->patterns_true = nt;
	for (size_t i = 0; i < ni; i++) {
		acc->patterns_fp += inf[i].other == 0;
		acc->instances_inferred += inf[i].count;
		acc->messages_inferred += inf[i].count * inf[i].size;
		if (inf[i].count > inf[i].other) {
			acc->instances_fp += inf[i].count - inf[i].other;
			acc->messages_fp += (inf[i].count - inf[i].other) * inf[i].size;
		}
	}
	for (size_t i = 0; i < nt; i++) {
		acc->patterns_fn += tru[i].other == 0;
		acc->instances_true += tru[i].count;
		acc->messages_true += tru[i].count * tru[i].size;
		if (tru[i].count > tru[i].other) {
			acc->instances_fn += tru[i].count - tru[i].other;
			acc->messages_fn += (tru[i].count - tru[i].other) * tru[i].size;
		}
	}

	/* Top N: the true top N patterns by count that are not in the inferred
	 * top N. At tolerance t, a miss is forgiven when its inferred count is
	 * within t of the N-th inferred pattern's count (a near tie); 0% forgives
	 * nothing. */
	static const double tol[3] = {0, 0.02, 0.06};
	uint64_t *icount = bb_xcalloc(ni ? ni : 1, sizeof(*icount));
	for (size_t i = 0; i < ni; i++)
		icount[inf[i].rank] = inf[i].count;
	for (size_t nn = 1; nn <= BB_NEST_TOPN; nn++) {
		uint64_t cn = ni >= nn ? icount[nn - 1] : 0;
		for (size_t i = 0; i < nt; i++) {
			if (tru[i].rank >= nn || tru[i].orank < nn)
				continue;
			for (int t = 0; t < 3; t++) {
				int forgiven = t > 0 && tru[i].other > 0 &&
				               (double)tru[i].other >= (1 - tol[t]) * (double)cn;
				acc->topn_fn[t][nn - 1] += !forgiven;
			}
		}
	}
	free(icount);
	for (size_t i = 0; i < ni; i++)
		free(inf[i].key);
	for (size_t i = 0; i < nt; i++)
		free(tru[i].key);
	free(inf);
	free(tru);
}

static struct bb_vval *fpfn(uint64_t fp, uint64_t fn, uint64_t inferred, uint64_t truth)
{
	struct bb_vval *o = bb_vval_object();
	bb_vval_set_int(o, "fp", (int64_t)fp);
	bb_vval_set_int(o, "fn", (int64_t)fn);
	bb_vval_set_int(o, "inferred", (int64_t)inferred);
	bb_vval_set_int(o, "true", (int64_t)truth);
	return o;
}

struct bb_vval *bb_nest_accuracy_vval(const struct bb_nest_accuracy *a)
{
	struct bb_vval *o = bb_vval_object();
	bb_vval_set(o, "patterns",
	            fpfn(a->patterns_fp, a->patterns_fn, a->patterns_inferred, a->patterns_true));
	bb_vval_set(o, "instances", fpfn(a->instances_fp, a->instances_fn, a->instances_inferred,
	                                 a->instances_true));
	bb_vval_set(o, "messages",
	            fpfn(a->messages_fp, a->messages_fn, a->messages_inferred, a->messages_true));
	struct bb_vval *t = bb_vval_set(o, "topn_fn", bb_vval_object());
	static const char *names[3] = {"0", "2", "6"};
	for (int i = 0; i < 3; i++) {
		struct bb_vval *arr = bb_vval_set(t, names[i], bb_vval_array());
		for (int k = 0; k < BB_NEST_TOPN; k++)
			bb_vval_push(arr, bb_vval_int((int64_t)a->topn_fn[i][k]));
	}
	return o;
}

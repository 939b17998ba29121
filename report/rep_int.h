/* rep_int.h - private pieces shared by the report modules */
/* SPDX-License-Identifier: MIT */
#ifndef BB_REP_INT_H
#define BB_REP_INT_H

#include "report/report.h"

/* A pooled distribution: bins merged by lo_ns (bins of the same run
 * parameters), count and sum for the mean. Zero it to start; free b. */
struct rep_pool {
	uint64_t n;
	double sum;
	struct bb_vbin *b;
	size_t nb, cap;
};

double rep_bin_mid(const struct bb_vbin *b);
/* Adds s's samples (its bins) to p. */
void rep_pool_add(struct rep_pool *p, const struct bb_vstat *s);
/* The q-quantile: the middle of the bin that holds it; 0 when empty. */
int64_t rep_pool_quantile(const struct rep_pool *p, double q);
void rep_pool_dist(const struct rep_pool *p, struct bb_rep_dist *d);

#endif

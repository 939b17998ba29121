/* nest_heap.c - the heap in use, sampled: the paper's "data space allocated" */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "nesting/nest_int.h"

/* Samples the heap in use (glibc's mallinfo2: arena bytes in use plus
 * mmapped blocks), keeping the largest: the paper's "data space allocated".
 * It is process-wide, so it counts the reader and output too. Called at the
 * end of each pass, every 65,536 records, and where --global's flow and
 * refinement hold the most (nest_global.c, nest_refine.c). */
void nest_heap_sample(struct bb_nest *n)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
	struct mallinfo2 mi = mallinfo2();
	size_t used = mi.uordblks + mi.hblkhd;
	if (used > n->phase.heap_peak)
		n->phase.heap_peak = used;
#else
	(void)n;
#endif
}

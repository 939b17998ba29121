/* mt_loss.c - the bursty sniffer-loss model (peak capture rate, finite queue) and random loss */
/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "maketrace/maketrace.h"

/* Paper section 7.5.5: "The program models a sniffer with a peak capture rate
 * and a finite queue, and discards packets that would overflow this queue."
 * The queue is modelled as a fluid: it drains continuously at the capture rate
 * and every arrival adds one message. This makes the drops bursty the way real
 * capture loss is: a stream below the capture rate never drops however long it
 * runs, a burst drops once it has filled the queue, and the queue recovers
 * between bursts. */

#define LOSS_STREAM UINT64_C(0x6c6f7373) /* "loss": the random-loss PRNG stream */

void bb_mt_loss_init(struct bb_mt_loss *l, double capture_rate, uint32_t queue,
                     double probability, uint64_t seed)
{
	memset(l, 0, sizeof(*l));
	l->capture_rate = capture_rate > 0 ? capture_rate : 0;
	l->queue = queue ? queue : BB_MT_QUEUE;
	l->probability = probability > 0 ? probability : 0;
	bb_mt_rng_seed_stream(&l->rng, seed, LOSS_STREAM);
}

int bb_mt_loss_active(const struct bb_mt_loss *l)
{
	return l->capture_rate > 0 || l->probability > 0;
}

int bb_mt_loss_drop(struct bb_mt_loss *l, int64_t ts_ns)
{
	if (l->capture_rate > 0) {
		if (l->started && ts_ns > l->last_ns) {
			l->backlog -= (double)(ts_ns - l->last_ns) * 1e-9 * l->capture_rate;
			if (l->backlog < 0)
				l->backlog = 0;
		}
		if (!l->started || ts_ns > l->last_ns)
			l->last_ns = ts_ns;
		l->started = 1;
		if (l->backlog + 1.0 > (double)l->queue) {
			l->dropped_queue++;
			return 1;
		}
		l->backlog += 1.0;
	}
	if (l->probability > 0 && bb_mt_rng_unit(&l->rng) < l->probability) {
		l->dropped_random++;
		return 1;
	}
	return 0;
}

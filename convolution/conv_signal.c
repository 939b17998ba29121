/* conv_signal.c - discretised indicator signals: square root of messages per quantum */
/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>

#include "convolution/conv_int.h"

/* Section 5.2.1: s(t) = sqrt(number of messages in [t mu, (t+1) mu)). The
 * square root compensates for the x^2 term that a quantum holding x messages
 * contributes to the correlation. Signals are kept sparse (only non-empty
 * quanta) so that no array ever spans the whole trace duration. */

void conv_sig_clear(struct conv_sig *s)
{
	s->n = 0;
}

void conv_sig_free(struct conv_sig *s)
{
	if (!s)
		return;
	free(s->q);
	free(s->w);
	s->q = NULL;
	s->w = NULL;
	s->n = s->cap = 0;
}

void conv_sig_push(struct conv_sig *s, int64_t q, double w)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 4; /* most nodes send few messages */
		s->q = bb_xrealloc(s->q, s->cap * sizeof(*s->q));
		s->w = bb_xrealloc(s->w, s->cap * sizeof(*s->w));
	}
	s->q[s->n] = q;
	s->w[s->n] = w;
	s->n++;
}

void conv_sig_from_quanta(struct conv_sig *s, const int64_t *qs, size_t n)
{
	conv_sig_clear(s);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && qs[j] == qs[i])
			j++;
		conv_sig_push(s, qs[i], sqrt((double)(j - i)));
		i = j;
	}
}

/* dec_rd.c - the out-of-line parts of the bounds-checked reader */
/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "decoders/decoders.h"

long bb_rd_find(const struct bb_rd *r, const void *needle, size_t nlen)
{
	size_t n = bb_rd_left(r);
	if (r->err || nlen == 0 || nlen > n)
		return -1;
	const uint8_t *first = needle;
	const uint8_t *s = r->p;
	size_t last = n - nlen;
	for (size_t i = 0; i <= last;) {
		const uint8_t *hit = memchr(s + i, first[0], last - i + 1);
		if (!hit)
			return -1;
		i = (size_t)(hit - s);
		if (memcmp(hit, needle, nlen) == 0)
			return (long)i;
		i++;
	}
	return -1;
}

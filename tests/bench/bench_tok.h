/* bench_tok.h - content tokens on or off in the decoder benchmarks */
/* SPDX-License-Identifier: MIT */
#ifndef BB_BENCH_TOK_H
#define BB_BENCH_TOK_H

#include <stdlib.h>
#include <string.h>

#include "decoders/decoders.h"

/* Content tokens (tok=, ctx=) as bbcap computes them when the environment
 * sets BB_BENCH_TOKENS (its value is the salt), else none: the cost of
 * tokens is the difference of two runs. */
static inline const struct bb_tok_key *bench_tok_key(void)
{
	static struct bb_tok_key key;
	const char *salt = getenv("BB_BENCH_TOKENS");
	if (!salt)
		return NULL;
	bb_tok_key_derive(&key, salt, strlen(salt));
	return &key;
}

#endif

/* mt_rng.c - deterministic pseudo-random numbers: splitmix64 seeding, xoshiro256** */
/* SPDX-License-Identifier: MIT */
#include <math.h>

#include "maketrace/maketrace.h"

/* Reference: Blackman and Vigna, "Scrambled linear pseudorandom number
 * generators" (2018), and Steele et al.'s splitmix64 (2014). Both are simple,
 * fast and fully specified, so a trace can be regenerated bit for bit. */

uint64_t bb_mt_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

void bb_mt_rng_seed(struct bb_mt_rng *r, uint64_t seed)
{
	uint64_t st = seed;
	for (int i = 0; i < 4; i++)
		r->s[i] = bb_mt_splitmix64(&st);
}

void bb_mt_rng_seed_stream(struct bb_mt_rng *r, uint64_t seed, uint64_t stream)
{
	/* Hash the stream number so neighbouring streams start far apart. */
	uint64_t k = stream;
	bb_mt_rng_seed(r, seed ^ bb_mt_splitmix64(&k));
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t bb_mt_rng_next(struct bb_mt_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double bb_mt_rng_unit(struct bb_mt_rng *r)
{
	return (double)(bb_mt_rng_next(r) >> 11) * 0x1.0p-53;
}

double bb_mt_rng_gauss(struct bb_mt_rng *r)
{
	/* 1 - unit is in (0, 1], so the log is finite. */
	double u1 = 1.0 - bb_mt_rng_unit(r);
	double u2 = bb_mt_rng_unit(r);
	return sqrt(-2.0 * log(u1)) * cos(6.283185307179586476925 * u2);
}

double bb_mt_rng_gauss_pos(struct bb_mt_rng *r, double mean, double sd)
{
	if (!(sd > 0))
		return mean > 0 ? mean : 0;
	/* With mean >= 0 at least half the draws are accepted; the bound only
	 * guards against a caller passing a very negative mean. */
	for (int i = 0; i < 1000; i++) {
		double x = mean + sd * bb_mt_rng_gauss(r);
		if (x >= 0)
			return x;
	}
	return 0;
}

/* trace_time.c - exact decimal seconds to int64_t nanoseconds and back, durations */
/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "trace/trace.h"
#include "trace/trace_int.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__

/* The common form, written by bb_time_format and every capture: 1 to 10
 * digits, '.', exactly 9 digits, and no more than INT64_MAX ns. Returns 1
 * with *ns_out set, 0 for anything else (the full scanner then decides). */
static inline int parse_common(const char *s, size_t len, int64_t *ns_out)
{
	if (len < 11 || len > 20 || s[len - 10] != '.')
		return 0;
	int64_t f9 = bb_time_decimals9(s + len - 9);
	if (f9 < 0)
		return 0;
	size_t nint = len - 10;
	uint64_t sec = 0;
	size_t i = 0;
	if (nint >= 8) {
		int64_t i8 = bb_time_digits8(s);
		if (i8 < 0)
			return 0;
		sec = (uint64_t)i8;
		i = 8;
	}
	for (; i < nint; i++) {
		unsigned d = (unsigned char)s[i] - '0';
		if (d > 9)
			return 0;
		sec = sec * 10 + d;
	}
	uint64_t frac = (uint64_t)f9;
	if (sec > (uint64_t)(INT64_MAX / BB_NS_PER_S) ||
	    sec * (uint64_t)BB_NS_PER_S > (uint64_t)INT64_MAX - frac)
		return 0;
	*ns_out = (int64_t)(sec * (uint64_t)BB_NS_PER_S + frac);
	return 1;
}

int bb_time_parse_common(const char *s, size_t len, int64_t *ns_out)
{
	return parse_common(s, len, ns_out);
}
#endif

/* Scans "[-]DIGITS[.DIGITS]" exactly: never through a double, so that
 * 1000000000.123456789 is 1000000000123456789 ns and not a rounding of it. */
int bb_time_parse_why(const char *s, size_t len, int64_t *ns_out)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (parse_common(s, len, ns_out))
		return BB_TP_OK;
#endif
	const uint64_t max_s = (uint64_t)(INT64_MAX / BB_NS_PER_S);
	size_t i = 0, nint, nfrac = 0;
	uint64_t sec = 0, frac = 0;
	int neg = 0, dot = 0, range = 0;

	if (len == 0)
		return BB_TP_EMPTY;
	if (s[0] == '-') {
		neg = 1;
		i = 1;
		if (len == 1)
			return BB_TP_SIGN;
	}
	nint = i;
	while (i < len && s[i] >= '0' && s[i] <= '9') {
		if (sec > max_s)
			range = 1; /* keep scanning: a bad form wins over range */
		else
			sec = sec * 10 + (uint64_t)(s[i] - '0');
		i++;
	}
	nint = i - nint;
	if (i < len && s[i] == '.') {
		dot = 1;
		i++;
		while (i < len && s[i] >= '0' && s[i] <= '9') {
			if (nfrac < 9)
				frac = frac * 10 + (uint64_t)(s[i] - '0');
			nfrac++;
			i++;
		}
	}
	if (i < len) {
		if (nint == 0 && nfrac == 0)
			return BB_TP_NOT_NUMBER;
		if (s[i] == 'e' || s[i] == 'E')
			return BB_TP_EXPONENT;
		return BB_TP_JUNK;
	}
	if (nint == 0 && nfrac == 0)
		return BB_TP_NO_DIGITS;
	if (nint == 0)
		return BB_TP_NO_INT;
	if (dot && nfrac == 0)
		return BB_TP_NO_FRAC;
	if (nfrac > 9)
		return BB_TP_DECIMALS;
	for (; nfrac < 9; nfrac++)
		frac *= 10;
	/* |ns| <= INT64_MAX, so INT64_MIN (BB_NO_TIME) is never a parsed time. */
	if (range || sec > max_s || sec * (uint64_t)BB_NS_PER_S > (uint64_t)INT64_MAX - frac)
		return BB_TP_RANGE;
	sec = sec * (uint64_t)BB_NS_PER_S + frac;
	*ns_out = neg ? -(int64_t)sec : (int64_t)sec;
	return BB_TP_OK;
}

/* Static strings; the caller borrows them. */
const char *bb_time_why(int why)
{
	switch (why) {
	case BB_TP_OK: return "ok";
	case BB_TP_EMPTY: return "empty";
	case BB_TP_NOT_NUMBER: return "not a number";
	case BB_TP_SIGN: return "no digits after the '-'";
	case BB_TP_NO_DIGITS: return "no digits";
	case BB_TP_NO_INT: return "no digits before the '.'";
	case BB_TP_NO_FRAC: return "no digits after the '.'";
	case BB_TP_DECIMALS: return "more than 9 decimals";
	case BB_TP_EXPONENT: return "exponents are not allowed";
	case BB_TP_JUNK: return "junk after the number";
	case BB_TP_RANGE: return "out of range";
	}
	return "bad form";
}

/* Returns 0 with *ns_out set, or -1 (bad form, more than 9 decimals, overflow). */
int bb_time_parse(const char *s, size_t len, int64_t *ns_out)
{
	return bb_time_parse_why(s, len, ns_out) == BB_TP_OK ? 0 : -1;
}

/* "[-]S.NNNNNNNNN", always 9 decimals, so that timestamps sort as text within
 * a second and re-read exactly. buf holds BB_TIME_BUFSZ; returns the length. */
/* Two digits per division: formatting runs once per record written. */
static const char pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

void bb_time_frac9(uint32_t frac, char *p)
{
	p[8] = (char)('0' + frac % 10);
	frac /= 10;
	for (int i = 6; i >= 0; i -= 2) {
		memcpy(p + i, pairs + 2 * (frac % 100), 2);
		frac /= 100;
	}
}

size_t bb_time_format(int64_t ns, char *buf)
{
	char tmp[24];
	char *p = buf, *t = tmp + sizeof tmp;
	uint64_t m, sec;

	if (ns < 0) {
		*p++ = '-';
		m = (uint64_t)0 - (uint64_t)ns; /* also right for INT64_MIN */
	} else {
		m = (uint64_t)ns;
	}
	sec = m / (uint64_t)BB_NS_PER_S;
	while (sec >= 100) {
		t -= 2;
		memcpy(t, pairs + 2 * (sec % 100), 2);
		sec /= 100;
	}
	if (sec >= 10) {
		t -= 2;
		memcpy(t, pairs + 2 * sec, 2);
	} else {
		*--t = (char)('0' + sec);
	}
	memcpy(p, t, (size_t)(tmp + sizeof tmp - t));
	p += tmp + sizeof tmp - t;
	*p++ = '.';
	bb_time_frac9((uint32_t)(m % (uint64_t)BB_NS_PER_S), p);
	p += 9;
	*p = '\0';
	return (size_t)(p - buf);
}

/* Parses "[-]DIGITS[.DIGITS][UNIT]" with UNIT one of ns, us, ms, s (the
 * default), m, h. Exact: the value must be a whole number of nanoseconds
 * ("0.5ns" is an error) and fit in int64_t. Returns 0, or -1 on a bad form. */
int bb_duration_parse(const char *s, int64_t *ns_out)
{
	static const struct {
		const char *name;
		uint64_t ns;
	} units[] = {
		{"", 1000000000u}, {"s", 1000000000u}, {"ns", 1}, {"us", 1000}, {"ms", 1000000},
		{"m", UINT64_C(60000000000)}, {"h", UINT64_C(3600000000000)},
	};
	size_t i = 0, nint = 0, nfrac = 0;
	uint64_t ip = 0, frac = 0, unit = 0, v;
	int neg = 0;

	if (!s)
		return -1;
	if (s[0] == '-') {
		neg = 1;
		i = 1;
	}
	for (; s[i] >= '0' && s[i] <= '9'; i++, nint++) {
		if (ip > (UINT64_MAX - 9) / 10)
			return -1;
		ip = ip * 10 + (uint64_t)(s[i] - '0');
	}
	if (s[i] == '.') {
		for (i++; s[i] >= '0' && s[i] <= '9'; i++, nfrac++) {
			if (nfrac >= 9)
				return -1;
			frac = frac * 10 + (uint64_t)(s[i] - '0');
		}
		if (nfrac == 0)
			return -1;
	}
	if (nint == 0)
		return -1;
	for (size_t k = nfrac; k < 9; k++)
		frac *= 10; /* now frac is billionths of a unit */
	for (size_t u = 0; u < sizeof units / sizeof units[0]; u++)
		if (!strcmp(s + i, units[u].name))
			unit = units[u].ns;
	if (!unit)
		return -1;
	if (ip > (uint64_t)INT64_MAX / unit)
		return -1;
	v = ip * unit;
	if (unit >= (uint64_t)BB_NS_PER_S) {
		frac *= unit / (uint64_t)BB_NS_PER_S; /* < 1e9 * 3600, no overflow */
	} else {
		frac *= unit; /* < 1e9 * 1e6 */
		if (frac % (uint64_t)BB_NS_PER_S)
			return -1; /* a fraction of a nanosecond */
		frac /= (uint64_t)BB_NS_PER_S;
	}
	if (v > (uint64_t)INT64_MAX - frac)
		return -1;
	v += frac;
	*ns_out = neg ? -(int64_t)v : (int64_t)v;
	return 0;
}

/* viz_fmt.c - durations and strings formatted for people */
/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>

#include "viz/viz_int.h"

/* Three significant digits in the largest unit that keeps the value >= 1. */
static size_t fmt_ns(int64_t ns, char *buf, const char *micro)
{
	static const struct {
		double scale;
		const char *unit;
	} units[] = {{60e9, "min"}, {1e9, "s"}, {1e6, "ms"}, {1e3, NULL}, {1, "ns"}};
	double v = (double)ns, a = v < 0 ? -v : v;
	size_t i = 0;
	/* 999.6 us prints as "1.00 ms", not "1000 us": compare after rounding. */
	while (i + 1 < sizeof(units) / sizeof(units[0]) && a < units[i].scale * 0.9995)
		i++;
	const char *unit = units[i].unit ? units[i].unit : micro;
	double x = v / units[i].scale, ax = a / units[i].scale;
	/* Three significant digits after rounding: 9.996 is "10.0", not "10.00". */
	int prec = units[i].scale == 1 ? 0 : ax >= 99.95 ? 0 : ax >= 9.995 ? 1 : 2;
	int n = snprintf(buf, BB_DUR_BUFSZ, "%.*f %s", prec, x, unit);
	return n < 0 ? 0 : (size_t)n;
}

size_t bb_viz_fmt_ns(int64_t ns, char *buf)
{
	return fmt_ns(ns, buf, "\xc2\xb5s");
}

size_t bb_viz_fmt_ns_ascii(int64_t ns, char *buf)
{
	return fmt_ns(ns, buf, "us");
}

char *bb_viz_escape_text(const char *s)
{
	size_t n = strlen(s);
	char *out = bb_xmalloc(4 * n + 1), *o = out;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p < 0x20 || *p == 0x7f || *p == '\\') {
			if (*p == '\\') {
				*o++ = '\\';
				*o++ = '\\';
			} else {
				o += snprintf(o, 5, "\\x%02x", *p);
			}
		} else {
			*o++ = (char)*p;
		}
	}
	*o = '\0';
	return out;
}

/* Length of the valid UTF-8 sequence at s, or 0. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n;
	if (s[0] < 0x80)
		return 1;
	else if ((s[0] & 0xe0) == 0xc0 && s[0] >= 0xc2)
		n = 2;
	else if ((s[0] & 0xf0) == 0xe0)
		n = 3;
	else if ((s[0] & 0xf8) == 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* A node name as literal text inside a dot label: cgraph quotes the string,
 * but dot still reads escapes (\n, \N, \G ...) in labels, so backslashes are
 * doubled; control bytes and invalid UTF-8 (which would make dot fail) are
 * written as \xNN. Caller frees. */
char *bb_viz_dot_label(const char *s)
{
	size_t n = strlen(s);
	char *out = bb_xmalloc(5 * n + 1), *o = out;
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		size_t k = utf8_len(p);
		if (*p == '\\') {
			*o++ = '\\';
			*o++ = '\\';
			p++;
		} else if (k == 0 || *p < 0x20 || *p == 0x7f) {
			o += snprintf(o, 6, "\\\\x%02x", *p);
			p++;
		} else {
			memcpy(o, p, k);
			o += k;
			p += k;
		}
	}
	*o = '\0';
	return out;
}

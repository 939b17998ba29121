/* test_trace.c - unit tests for trace/: time parsing, interning, reader, writer */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "trace/trace.h"
#include "unit.h"

/* ---- helpers -------------------------------------------------------------------- */

/* Reads text (len bytes) and writes what it read back out canonically.
 * Returns the reader's final status (0 at a clean end); *out gets the
 * writer's output (caller frees), *st the stats. */
static int roundtrip(const char *text, size_t len, const struct bb_reader_opts *opts,
                     char **out, struct bb_reader_stats *st, struct bb_err *err)
{
	struct bb_reader *r;
	struct bb_writer *w;
	struct bb_rec rec;
	char *buf = NULL;
	size_t blen = 0;
	FILE *mf = open_memstream(&buf, &blen);
	int k;

	err->msg[0] = '\0';
	r = bb_reader_mem(text, len, "t.tr", opts, err);
	if (!r) {
		fclose(mf);
		free(buf);
		*out = NULL;
		return BB_ERR_PARSE;
	}
	w = bb_writer_fopen(mf, "mem", NULL);
	for (size_t i = 0; i < bb_reader_nmeta(r); i++)
		bb_writer_meta(w, bb_reader_meta(r, i), NULL);
	while ((k = bb_reader_next(r, &rec, err)) == 1)
		bb_writer_put_rec(w, r, &rec, NULL);
	bb_writer_close(w, NULL);
	fclose(mf);
	if (st)
		bb_reader_stats(r, st);
	bb_reader_free(r);
	*out = buf;
	return k;
}

/* The error message reading text gives (strict), "" if none. */
static const char *err_of(const char *text, struct bb_err *err)
{
	char *out = NULL;
	int k = roundtrip(text, strlen(text), NULL, &out, NULL, err);

	free(out);
	if (k == 0)
		strcpy(err->msg, "");
	return err->msg;
}

/* The records of text (strict), canonical, without the version line. */
static char *records_of(const char *text, const struct bb_reader_opts *opts)
{
	struct bb_err err;
	char *out = NULL;
	int k = roundtrip(text, strlen(text), opts, &out, NULL, &err);

	if (k != 0) {
		fprintf(stderr, "unexpected error: %s\n", err.msg);
		unit_failed++;
	}
	if (out && !strncmp(out, "#bbtrace 1\n", 11))
		memmove(out, out + 11, strlen(out + 11) + 1);
	return out;
}

static char *tmp_path(const char *name)
{
	const char *d = getenv("TMPDIR");
	char *p = malloc(4096);

	snprintf(p, 4096, "%s/test_trace.%ld.%s", d && *d ? d : "/tmp", (long)getpid(), name);
	return p;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0, k;

	if (!f)
		return NULL;
	do {
		if (cap - n < 65536) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap + 1);
		}
		k = fread(buf + n, 1, cap - n, f);
		n += k;
	} while (k);
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* ---- times ---------------------------------------------------------------------- */

static void test_time_parse_exact(void)
{
	int64_t ns = 0;
	char buf[BB_TIME_BUFSZ];

	CHECK_INT(bb_time_parse("1000000000.123456789", 20, &ns), 0);
	CHECK_INT(ns, INT64_C(1000000000123456789));
	CHECK_INT(bb_time_parse("1047680084.482205", 17, &ns), 0);
	CHECK_INT(ns, INT64_C(1047680084482205000));
	CHECK_INT(bb_time_parse("0", 1, &ns), 0);
	CHECK_INT(ns, 0);
	CHECK_INT(bb_time_parse("-1.5", 4, &ns), 0);
	CHECK_INT(ns, -1500000000);
	CHECK_INT(bb_time_parse("9223372036.854775807", 20, &ns), 0);
	CHECK_INT(ns, INT64_MAX);
	CHECK_INT(bb_time_parse("-9223372036.854775807", 21, &ns), 0);
	CHECK_INT(ns, -INT64_MAX);
	/* length is honoured: no NUL needed */
	CHECK_INT(bb_time_parse("12.5xyz", 4, &ns), 0);
	CHECK_INT(ns, 12500000000);

	bb_time_format(INT64_C(1000000000123456789), buf);
	CHECK_STR(buf, "1000000000.123456789");
	CHECK_INT(bb_time_format(INT64_C(1047680084482205000), buf), 20);
	CHECK_STR(buf, "1047680084.482205000");
	bb_time_format(0, buf);
	CHECK_STR(buf, "0.000000000");
	bb_time_format(-1500000000, buf);
	CHECK_STR(buf, "-1.500000000");
	bb_time_format(-1, buf);
	CHECK_STR(buf, "-0.000000001");
	bb_time_format(INT64_MIN, buf);
	CHECK_STR(buf, "-9223372036.854775808");
	bb_time_format(INT64_MAX, buf);
	CHECK_STR(buf, "9223372036.854775807");
	/* every format re-parses to itself */
	for (int64_t v = -3000000001; v < 3000000001; v += 999999937) {
		int64_t back = 0;
		size_t n = bb_time_format(v, buf);
		CHECK_INT(bb_time_parse(buf, n, &back), 0);
		CHECK_INT(back, v);
	}
}

/* A plain reference for bb_time_parse: "[-]D+[.D{1,9}]" within int64 ns. */
static int ref_time(const char *s, size_t n, int64_t *out)
{
	size_t i = 0;
	int neg = 0;
	unsigned __int128 v = 0;
	if (i < n && s[i] == '-')
		neg = 1, i++;
	size_t d0 = i;
	while (i < n && s[i] >= '0' && s[i] <= '9') {
		v = v * 10 + (unsigned)(s[i] - '0');
		if (v > (unsigned __int128)1 << 80)
			v = (unsigned __int128)1 << 80; /* saturate: out of range anyway */
		i++;
	}
	if (i == d0)
		return -1;
	v *= 1000000000u;
	if (i < n && s[i] == '.') {
		size_t f0 = ++i;
		uint64_t f = 0;
		while (i < n && s[i] >= '0' && s[i] <= '9')
			f = f * 10 + (uint64_t)(s[i++] - '0');
		if (i == f0 || i - f0 > 9)
			return -1;
		for (size_t k = i - f0; k < 9; k++)
			f *= 10;
		v += f;
	}
	if (i != n || v > (unsigned __int128)INT64_MAX)
		return -1;
	*out = neg ? -(int64_t)v : (int64_t)v;
	return 0;
}

/* The parser has a word-at-a-time path for the common "D{1,10}.D{9}" form:
 * it must agree with the reference on that form, near it (a non-digit in
 * every position, one digit more or less, a sign) and at the int64 limit. */
static void test_time_parse_fast(void)
{
	char buf[40];
	unsigned seed = 1;
	static const char odd[] = {'/', ':', '.', ' ', 'a', '-', '\0', (char)0xb0, '0' + 10};
	for (int t = 0; t < 200000; t++) {
		seed = seed * 1103515245u + 12345u;
		size_t nint = 1 + (seed >> 8) % 12, nfrac = 7 + (seed >> 12) % 4, n = 0;
		seed = seed * 1103515245u + 12345u;
		if ((seed >> 9) % 7 == 0)
			buf[n++] = '-';
		for (size_t i = 0; i < nint; i++) {
			seed = seed * 1103515245u + 12345u;
			buf[n++] = (char)('0' + (seed >> 16) % 10);
		}
		if (t % 3 == 0 && nint == 10) /* near the limit: 9223372036.85477580x */
			memcpy(buf + n - 10, "9223372036", 10);
		buf[n++] = '.';
		for (size_t i = 0; i < nfrac; i++) {
			seed = seed * 1103515245u + 12345u;
			buf[n++] = (char)('0' + (seed >> 16) % 10);
		}
		seed = seed * 1103515245u + 12345u;
		if ((seed >> 10) % 4 == 0) /* one odd byte somewhere */
			buf[(seed >> 14) % n] = odd[(seed >> 20) % sizeof odd];
		int64_t a = 42, b = 42;
		int ra = bb_time_parse(buf, n, &a), rb = ref_time(buf, n, &b);
		if (ra != rb || a != b) {
			UNIT_FAIL_("\"%.*s\": %d %lld, reference %d %lld", (int)n, buf, ra, (long long)a, rb,
			           (long long)b);
			return;
		}
	}
	int64_t ns;
	CHECK_INT(bb_time_parse("9223372036.854775807", 20, &ns), 0);
	CHECK_INT(ns, INT64_MAX);
	CHECK_INT(bb_time_parse("9223372036.854775808", 20, &ns), -1);
	CHECK_INT(bb_time_parse("9999999999.999999999", 20, &ns), -1);
	CHECK_INT(bb_time_parse("0000000001.000000001", 20, &ns), 0);
	CHECK_INT(ns, 1000000001);
	CHECK_INT(bb_time_parse("1.000000000", 11, &ns), 0);
	CHECK_INT(ns, 1000000000);
}

static void test_time_parse_bad(void)
{
	static const char *const bad[] = {
		"", "abc", "17x", "1.1234567890", "9223372036.854775808", "99999999999999999999",
		"99999999999999999999999999999", ".", "1.", "-", ".5", "+5", "1e9", "1.2.3", "--1",
		"-9223372036.854775808", " 1", "1 ", "0x10", "1,5",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int64_t ns = 42;
		if (bb_time_parse(bad[i], strlen(bad[i]), &ns) != -1)
			UNIT_FAIL_("bb_time_parse(\"%s\") accepted", bad[i]);
		CHECK_INT(ns, 42);
	}
}

static void test_duration_parse(void)
{
	static const struct {
		const char *s;
		int64_t ns;
	} good[] = {
		{"0.01", 10000000}, {"10ms", 10000000}, {"2h", INT64_C(7200000000000)},
		{"1.5m", INT64_C(90000000000)}, {"3", INT64_C(3000000000)}, {"3s", INT64_C(3000000000)},
		{"250us", 250000}, {"1.5us", 1500}, {"7ns", 7}, {"0", 0}, {"-2ms", -2000000},
		{"0.000000001", 1}, {"1.25h", INT64_C(4500000000000)},
	};
	static const char *const bad[] = {
		"", "ms", "1x", "1.5ns", "0.0000000001", "1.", ".5", "1 ms", "1e3", "-", "10S",
		"99999999999999999999", "9999999999h",
	};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		int64_t ns = 0;
		if (bb_duration_parse(good[i].s, &ns) != 0 || ns != good[i].ns)
			UNIT_FAIL_("bb_duration_parse(\"%s\"): %lld, want %lld", good[i].s,
			           (long long)ns, (long long)good[i].ns);
	}
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int64_t ns = 0;
		if (bb_duration_parse(bad[i], &ns) == 0)
			UNIT_FAIL_("bb_duration_parse(\"%s\") accepted: %lld", bad[i], (long long)ns);
	}
}

/* ---- interning ---------------------------------------------------------------------- */

static void test_intern(void)
{
	struct bb_intern *in = bb_intern_new();
	const char *first;
	char buf[32];

	CHECK_INT(bb_intern_count(in), 0);
	CHECK_INT(bb_intern_add(in, "alpha", 5), 0);
	CHECK_INT(bb_intern_add(in, "beta", 4), 1);
	CHECK_INT(bb_intern_add(in, "alpha", 5), 0);
	CHECK_INT(bb_intern_add(in, "alp", 3), 2);
	CHECK_INT(bb_intern_add(in, "", 0), 3);
	CHECK_INT(bb_intern_add(in, "a\0b", 3), 4);
	CHECK_INT(bb_intern_add(in, "a\0c", 3), 5);
	CHECK_INT(bb_intern_find(in, "a\0b", 3), 4);
	CHECK_INT(bb_intern_len(in, 4), 3);
	CHECK(!memcmp(bb_intern_str(in, 4), "a\0b", 4));
	CHECK_INT(bb_intern_find(in, "gamma", 5), BB_NONE);
	CHECK_INT(bb_intern_find(in, "", 0), 3);
	CHECK_STR(bb_intern_str(in, 1), "beta");
	CHECK_INT(bb_intern_len(in, 1), 4);
	CHECK(bb_intern_str(in, 99) == NULL);
	first = bb_intern_str(in, 0);
	/* grow well past every initial size; strings must not move */
	for (int i = 0; i < 200000; i++) {
		int n = snprintf(buf, sizeof buf, "id%d", i);
		uint32_t k = bb_intern_add(in, buf, (size_t)n);
		if (k != (uint32_t)(6 + i)) {
			UNIT_FAIL_("add %s gave %u", buf, k);
			break;
		}
	}
	CHECK_INT(bb_intern_count(in), 200006);
	CHECK(bb_intern_str(in, 0) == first);
	CHECK_STR(first, "alpha");
	for (int i = 0; i < 200000; i += 997) {
		int n = snprintf(buf, sizeof buf, "id%d", i);
		CHECK_INT(bb_intern_find(in, buf, (size_t)n), 6 + i);
		CHECK_STR(bb_intern_str(in, (uint32_t)(6 + i)), buf);
	}
	CHECK(bb_intern_bytes(in) > 200000 * 8);
	CHECK(bb_intern_bytes(in) < 200000 * 64);
	/* a long string gets its own block */
	{
		size_t n = 5u << 20;
		char *big = malloc(n);
		memset(big, 'x', n);
		uint32_t k = bb_intern_add(in, big, n);
		CHECK_INT(bb_intern_len(in, k), n);
		CHECK_INT(bb_intern_add(in, big, n), k);
		CHECK_INT(bb_intern_add(in, "after", 5), k + 1);
		free(big);
	}
	bb_intern_free(in);
	bb_intern_free(NULL);
}

/* ---- what a file is ------------------------------------------------------------------ */

static void test_fmt_sniff(void)
{
	CHECK_INT(bb_fmt_sniff("\xd4\xc3\xb2\xa1\x02\x00", 6), BB_FMT_PCAP);
	CHECK_INT(bb_fmt_sniff("\xa1\xb2\x3c\x4d", 4), BB_FMT_PCAP);
	CHECK_INT(bb_fmt_sniff("\x0a\x0d\x0d\x0a\x1c", 5), BB_FMT_PCAPNG);
	CHECK_INT(bb_fmt_sniff("\x1f\x8b\x08", 3), BB_FMT_GZIP);
	CHECK_INT(bb_fmt_sniff("\x28\xb5\x2f\xfd", 4), BB_FMT_ZSTD);
	CHECK_INT(bb_fmt_sniff("#bbtrace 1\n", 11), BB_FMT_TEXT);
	CHECK_INT(bb_fmt_sniff("\xd4\xc3", 2), BB_FMT_TEXT); /* too short to tell */
	CHECK_INT(bb_fmt_sniff("", 0), BB_FMT_TEXT);
	CHECK_INT(bb_fmt_of_name("t.tr.gz"), BB_FMT_GZIP);
	CHECK_INT(bb_fmt_of_name("t.tr.zst"), BB_FMT_ZSTD);
	CHECK_INT(bb_fmt_of_name("t.tr"), BB_FMT_TEXT);
	CHECK_INT(bb_fmt_of_name(".gz"), BB_FMT_TEXT);
}

/* A pcap where a trace is expected: named, with what to do, not line 1's bytes. */
static void test_read_pcap_named(void)
{
	static const char pcap[] = "\xd4\xc3\xb2\xa1\x02\x00\x04\x00\n\x00";
	struct bb_err err = {{0}};
	struct bb_reader *r = bb_reader_mem(pcap, sizeof pcap - 1, "delay.pcap", NULL, &err);
	CHECK(r == NULL);
	bb_reader_free(r);
	CHECK_STR(err.msg, "delay.pcap is a packet capture (pcap), not a trace: run bbcap -r "
	                   "delay.pcap -w TRACE first, then give it TRACE");
	FILE *fp = fmemopen((void *)(uintptr_t)"\x1f\x8b\x08\x00", 4, "r");
	CHECK(fp != NULL);
	if (!fp)
		return;
	r = bb_reader_fopen_own(fp, "<stdin>", NULL, &err); /* closes fp, failing too */
	CHECK(r == NULL);
	CHECK_HAS(err.msg, "<stdin> is gzip-compressed: decompress it in the pipe");
}

/* ---- reader: good input ------------------------------------------------------------ */

static void test_read_basic(void)
{
	const char *text = "#bbtrace 1\n"
	                   "#source bbcap -i eth1 (libpcap 1.10.3)\n"
	                   "#capture packets=1203331 dropped_kernel=0\n"
	                   "1047680084.482205\tCALL\tnodeA\tnodeB\tid37\n"
	                   "1047680084.483575\tRET\tnodeB\tnodeA\tid37\tproto=http\treq=GET%20/login"
	                   "\tend=1047680084.4836\tcolour=blue\n"
	                   "1047680084.5  CALL_SENT \t nodeA   nodeC -  \n"
	                   "1047680084.6\tRET_SENT\tnodeC\tnodeA\t-\n"
	                   "1047680084.7\tMSG\tnodeC\tnodeD\tx\n";
	struct bb_reader_opts opts = {.intern_ids = 1};
	struct bb_err err;
	struct bb_rec rec;
	struct bb_reader_stats st;
	struct bb_reader *r = bb_reader_mem(text, strlen(text), "t.tr", &opts, &err);
	size_t len = 0;
	const char *v;

	CHECK(r != NULL);
	if (!r)
		return;
	/* metadata is there right after open */
	CHECK_INT(bb_reader_nmeta(r), 2);
	CHECK_STR(bb_reader_meta(r, 0), "source bbcap -i eth1 (libpcap 1.10.3)");
	CHECK_STR(bb_reader_meta(r, 1), "capture packets=1203331 dropped_kernel=0");
	CHECK(bb_reader_meta(r, 2) == NULL);
	CHECK_STR(bb_reader_name(r), "t.tr");

	CHECK_INT(bb_reader_next(r, &rec, &err), 1);
	CHECK_INT(rec.ts_ns, INT64_C(1047680084482205000));
	CHECK_INT(rec.op, BB_CALL);
	CHECK_STR(bb_reader_node(r, rec.sender), "nodeA");
	CHECK_STR(bb_reader_node(r, rec.receiver), "nodeB");
	CHECK_STR(rec.id_str, "id37");
	CHECK_INT(rec.id_len, 4);
	CHECK_INT(rec.id, 0);
	CHECK_INT(rec.nattrs, 0);
	CHECK_INT(rec.end_ns, BB_NO_TIME);
	CHECK_INT(rec.line, 4);

	CHECK_INT(bb_reader_next(r, &rec, &err), 1);
	CHECK_INT(rec.op, BB_RET);
	CHECK_INT(rec.id, 0);
	CHECK_INT(rec.sender, 1);
	CHECK_INT(rec.receiver, 0);
	CHECK_INT(rec.nattrs, 4);
	CHECK_INT(rec.end_ns, INT64_C(1047680084483600000));
	v = bb_rec_attr(&rec, "req", &len);
	CHECK_STR(v, "GET /login");
	CHECK_INT(len, 10);
	CHECK_STR(bb_rec_attr(&rec, "proto", NULL), "http");
	CHECK_STR(bb_rec_attr(&rec, "colour", NULL), "blue"); /* unknown: kept */
	CHECK(bb_rec_attr(&rec, "path", NULL) == NULL);
	CHECK_STR(rec.attrs[0].key, "proto");
	CHECK_INT(rec.attrs[0].key_len, 5);
	CHECK_STR(rec.attrs[2].key, "end");

	CHECK_INT(bb_reader_next(r, &rec, &err), 1);
	CHECK_INT(rec.op, BB_CALL); /* CALL_SENT */
	CHECK_STR(bb_reader_node(r, rec.receiver), "nodeC");
	CHECK_INT(rec.id, BB_NONE);
	CHECK_STR(rec.id_str, "-");
	CHECK_INT(rec.nattrs, 0);

	CHECK_INT(bb_reader_next(r, &rec, &err), 1);
	CHECK_INT(rec.op, BB_RET); /* RET_SENT */
	CHECK_INT(rec.id, BB_NONE);

	CHECK_INT(bb_reader_next(r, &rec, &err), 1);
	CHECK_INT(rec.op, BB_MSG);
	CHECK_INT(rec.id, 1);
	CHECK_INT(rec.line, 8);

	CHECK_INT(bb_reader_next(r, &rec, &err), 0);
	CHECK_INT(bb_reader_next(r, &rec, &err), 0);
	bb_reader_stats(r, &st);
	CHECK_INT(st.lines, 8);
	CHECK_INT(st.records, 5);
	CHECK_INT(st.skipped, 0);
	CHECK_INT(st.reordered, 0);
	CHECK_INT(st.bytes, strlen(text));
	CHECK_INT(bb_intern_count(bb_reader_nodes(r)), 4);
	CHECK_INT(bb_intern_count(bb_reader_ids(r)), 2);
	bb_reader_free(r);
	bb_reader_free(NULL);
}

static void test_read_ids_not_interned(void)
{
	const char *text = "1 CALL a b x\n2 RET b a x\n";
	struct bb_err err;
	struct bb_rec rec;
	struct bb_reader *r = bb_reader_mem(text, strlen(text), "t.tr", NULL, &err);

	CHECK_INT(bb_reader_next(r, &rec, &err), 1);
	CHECK_INT(rec.id, BB_NONE);
	CHECK_STR(rec.id_str, "x");
	CHECK(bb_reader_offset(r) >= strlen("1 CALL a b x\n"));
	CHECK_INT(bb_reader_next(r, &rec, &err), 1);
	CHECK_INT(bb_reader_next(r, &rec, &err), 0);
	CHECK_INT(bb_reader_offset(r), strlen(text));
	CHECK_INT(bb_intern_count(bb_reader_ids(r)), 0);
	bb_reader_free(r);
}

static void test_read_line_ends(void)
{
	char *out;

	/* CRLF, no trailing newline, blank lines, spaces at the end */
	out = records_of("#bbtrace 1\r\n#x y\r\n1 CALL a b c\r\n\r\n   \n2 RET b a c\r\n", NULL);
	CHECK_STR(out, "#x y\n1.000000000\tCALL\ta\tb\tc\n2.000000000\tRET\tb\ta\tc\n");
	free(out);
	out = records_of("1 CALL a b c\n2 RET b a c", NULL);
	CHECK_STR(out, "1.000000000\tCALL\ta\tb\tc\n2.000000000\tRET\tb\ta\tc\n");
	free(out);
	out = records_of("1 CALL a b c\r", NULL);
	CHECK_STR(out, "1.000000000\tCALL\ta\tb\tc\n");
	free(out);
	out = records_of("1 CALL a b c k=v  \t \n", NULL);
	CHECK_STR(out, "1.000000000\tCALL\ta\tb\tc\tk=v\n");
	free(out);
}

static void test_read_empty(void)
{
	struct bb_err err;
	struct bb_rec rec;
	struct bb_reader_stats st;
	struct bb_reader *r = bb_reader_mem("", 0, "e.tr", NULL, &err);

	CHECK(r != NULL);
	CHECK_INT(bb_reader_next(r, &rec, &err), 0);
	bb_reader_stats(r, &st);
	CHECK_INT(st.lines, 0);
	CHECK_INT(st.records, 0);
	bb_reader_free(r);

	r = bb_reader_mem(NULL, 0, NULL, NULL, &err);
	CHECK(r != NULL);
	CHECK_INT(bb_reader_next(r, &rec, &err), 0);
	bb_reader_free(r);

	/* only a header */
	r = bb_reader_mem("#bbtrace 1\n", 11, "h.tr", NULL, &err);
	CHECK_INT(bb_reader_next(r, &rec, &err), 0);
	CHECK_INT(bb_reader_nmeta(r), 0);
	bb_reader_free(r);

	/* an empty file on disk */
	char *p = tmp_path("empty");
	FILE *f = fopen(p, "w");
	fclose(f);
	r = bb_reader_open(p, NULL, &err);
	CHECK(r != NULL);
	if (r) {
		CHECK_INT(bb_reader_next(r, &rec, &err), 0);
		bb_reader_free(r);
	}
	unlink(p);
	free(p);
}

static void test_read_version(void)
{
	struct bb_err err;
	struct bb_reader *r;

	/* absent is fine */
	r = bb_reader_mem("1 CALL a b c\n", 13, "t.tr", NULL, &err);
	CHECK(r != NULL);
	bb_reader_free(r);
	/* another version is an error, at open when it is in the header */
	r = bb_reader_mem("#bbtrace 2\n1 CALL a b c\n", 24, "t.tr", NULL, &err);
	CHECK(r == NULL);
	CHECK_STR(err.msg, "t.tr:1: unsupported trace version \"2\" (this reader reads version 1)");
	/* even when lenient */
	struct bb_reader_opts len = {.lenient = 1};
	r = bb_reader_mem("#bbtrace 1.0\n", 13, "t.tr", &len, &err);
	CHECK(r == NULL);
	CHECK_STR(err.msg, "t.tr:1: unsupported trace version \"1.0\" (this reader reads version 1)");
	r = bb_reader_mem("#bbtrace\n", 9, "t.tr", NULL, &err);
	CHECK(r == NULL);
	CHECK_STR(err.msg, "t.tr:1: bad version line \"#bbtrace\" (no version number)");
	/* later in the file (two traces concatenated) */
	CHECK_STR(err_of("#bbtrace 1\n1 CALL a b c\n#bbtrace 3\n", &err),
	          "t.tr:3: unsupported trace version \"3\" (this reader reads version 1)");
	CHECK_STR(err_of("#bbtrace 1\n1 CALL a b c\n#bbtrace 1\n2 RET b a c\n", &err), "");
	/* "#bbtraces" is just metadata */
	r = bb_reader_mem("#bbtraces 9\n", 12, "t.tr", NULL, &err);
	CHECK(r != NULL);
	CHECK_INT(bb_reader_nmeta(r), 1);
	CHECK_STR(bb_reader_meta(r, 0), "bbtraces 9");
	bb_reader_free(r);
}

static void test_read_meta_between(void)
{
	const char *text = "#a\n1 CALL a b c\n#b b\n2 RET b a c\n#\n";
	struct bb_err err;
	struct bb_rec rec;
	struct bb_reader *r = bb_reader_mem(text, strlen(text), "t.tr", NULL, &err);

	CHECK_INT(bb_reader_nmeta(r), 1);
	while (bb_reader_next(r, &rec, &err) == 1)
		;
	CHECK_INT(bb_reader_nmeta(r), 3);
	CHECK_STR(bb_reader_meta(r, 1), "b b");
	CHECK_STR(bb_reader_meta(r, 2), "");
	bb_reader_free(r);
}

static void test_read_percent_names(void)
{
	const char *text = "1 CALL web%20server db%09x a%25b k%3D=v%3d%0A\n";
	struct bb_err err;
	struct bb_rec rec;
	struct bb_reader *r = bb_reader_mem(text, strlen(text), "t.tr", NULL, &err);

	CHECK_INT(bb_reader_next(r, &rec, &err), 1);
	CHECK_STR(bb_reader_node(r, rec.sender), "web server");
	CHECK_STR(bb_reader_node(r, rec.receiver), "db\tx");
	CHECK_STR(rec.id_str, "a%b");
	CHECK_STR(rec.attrs[0].key, "k%3D"); /* keys are not decoded */
	CHECK_STR(rec.attrs[0].val, "v=\n");
	bb_reader_free(r);
}

static void test_read_long_fields(void)
{
	size_t idn = 10 * 1024, nn = 100 * 1024;
	char *id = malloc(idn + 1), *name = malloc(nn + 1), *text = malloc(2 * nn + 4 * idn + 200);
	struct bb_err err;
	struct bb_rec rec;
	struct bb_reader *r;

	memset(id, 'i', idn);
	id[idn] = '\0';
	memset(name, 'n', nn);
	name[nn] = '\0';
	sprintf(text, "1 CALL %s %s %s req=%s\n2 RET %s %s %s\n", name, "b", id, id, "b", name, id);
	r = bb_reader_mem(text, strlen(text), "t.tr", &(struct bb_reader_opts){.intern_ids = 1},
	                  &err);
	CHECK_INT(bb_reader_next(r, &rec, &err), 1);
	CHECK_INT(rec.id_len, idn);
	CHECK_STR(rec.id_str, id);
	CHECK_STR(bb_reader_node(r, rec.sender), name);
	CHECK_INT(bb_intern_len(bb_reader_nodes(r), rec.sender), nn);
	CHECK_INT(rec.attrs[0].val_len, idn);
	CHECK_INT(bb_reader_next(r, &rec, &err), 1);
	CHECK_INT(rec.id, 0);
	CHECK_STR(bb_reader_node(r, rec.receiver), name);
	CHECK_INT(bb_reader_next(r, &rec, &err), 0);
	bb_reader_free(r);
	free(id);
	free(name);
	free(text);
}

/* The reader keeps recent node names of up to 16 bytes in a small cache
 * compared word by word: names that share prefixes, differ only in their last
 * byte, sit at every length around 8 and 16, are percent-encoded (decoded into
 * scratch memory) or end the buffer must each come back as themselves, and a
 * name always gets the same index however it was spelt. */
static void test_read_node_cache(void)
{
	static const char *const names[] = {
		"a", "ab", "abc", "abcdefg", "abcdefgh", "abcdefghi", "abcdefgh1",
		"abcdefghijklmno", "abcdefghijklmnop", "abcdefghijklmnoq", "abcdefghijklmnopq",
		"client1", "client2", "client3", "client10", "WS1", "WS2", "AUTH", "AP1", "AP2",
		"DB", "10.0.0.1", "10.0.0.2", "10.0.0.12:5432", "zzzzzzzzzzzzzzzz", "zzzzzzzzzzzzzzz",
	};
	const size_t nn = sizeof names / sizeof names[0];
	size_t cap = 1 << 16, len = 0;
	char *text = malloc(cap);
	size_t *want_s = malloc(4001 * sizeof *want_s), *want_r = malloc(4001 * sizeof *want_r);
	unsigned seed = 7;
	int lines = 0;

	for (int i = 0; i < 4000 && len + 200 < cap; i++) {
		seed = seed * 1103515245u + 12345u;
		size_t a = (seed >> 8) % nn, b = (seed >> 20) % nn;
		want_s[i] = a;
		want_r[i] = b;
		/* every fifth line spells the sender with its first byte percent-encoded */
		if (i % 5 == 0)
			len += (size_t)sprintf(text + len, "%d CALL %%%02X%s %s x%d\n", i,
			                       (unsigned char)names[a][0], names[a] + 1, names[b], i);
		else
			len += (size_t)sprintf(text + len, "%d CALL %s %s x%d\n", i, names[a], names[b], i);
		lines++;
	}
	/* the last line ends the buffer with short fields and no line end */
	want_s[lines] = 0;
	want_r[lines] = 1;
	len += (size_t)sprintf(text + len, "%d CALL a ab z", lines);
	lines++;

	struct bb_err err;
	struct bb_rec rec;
	struct bb_reader *r = bb_reader_mem(text, len, "t.tr", NULL, &err);
	uint32_t idx[sizeof names / sizeof names[0]];
	for (size_t i = 0; i < nn; i++)
		idx[i] = BB_NONE;
	for (int i = 0; i < lines; i++) {
		if (bb_reader_next(r, &rec, &err) != 1) {
			UNIT_FAIL_("line %d: %s", i + 1, err.msg);
			break;
		}
		CHECK_STR(bb_reader_node(r, rec.sender), names[want_s[i]]);
		CHECK_STR(bb_reader_node(r, rec.receiver), names[want_r[i]]);
		if (idx[want_s[i]] == BB_NONE)
			idx[want_s[i]] = rec.sender;
		CHECK_INT(rec.sender, idx[want_s[i]]);
		if (idx[want_r[i]] == BB_NONE)
			idx[want_r[i]] = rec.receiver;
		CHECK_INT(rec.receiver, idx[want_r[i]]);
	}
	CHECK_INT(bb_reader_next(r, &rec, &err), 0);
	CHECK_INT(bb_intern_count(bb_reader_nodes(r)), nn);
	bb_reader_free(r);
	free(text);
	free(want_s);
	free(want_r);
}

/* ---- reader: bad input ---------------------------------------------------------------- */

static void test_bad_timestamp(void)
{
	static const struct {
		const char *line, *msg;
	} cases[] = {
		{"\tCALL a b c", "t.tr:2: empty timestamp (the line starts with white space)"},
		{"abc CALL a b c", "t.tr:2: bad timestamp \"abc\" (not a number)"},
		{"17x CALL a b c", "t.tr:2: bad timestamp \"17x\" (junk after the number)"},
		{"1.1234567890 CALL a b c", "t.tr:2: bad timestamp \"1.1234567890\" (more than 9 decimals)"},
		{"99999999999 CALL a b c", "t.tr:2: bad timestamp \"99999999999\" (out of range)"},
		{"9223372036.854775808 CALL a b c",
		 "t.tr:2: bad timestamp \"9223372036.854775808\" (out of range)"},
		{". CALL a b c", "t.tr:2: bad timestamp \".\" (no digits)"},
		{"1. CALL a b c", "t.tr:2: bad timestamp \"1.\" (no digits after the '.')"},
		{".5 CALL a b c", "t.tr:2: bad timestamp \".5\" (no digits before the '.')"},
		{"- CALL a b c", "t.tr:2: bad timestamp \"-\" (no digits after the '-')"},
		{"1e9 CALL a b c", "t.tr:2: bad timestamp \"1e9\" (exponents are not allowed)"},
		{"1.2.3 CALL a b c", "t.tr:2: bad timestamp \"1.2.3\" (junk after the number)"},
		{"CALL 1 a b c", "t.tr:2: bad timestamp \"CALL\" (not a number)"},
	};
	struct bb_err err;
	char text[256];

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		snprintf(text, sizeof text, "0 MSG a b -\n%s\n", cases[i].line);
		CHECK_STR(err_of(text, &err), cases[i].msg);
	}
}

static void test_bad_fields(void)
{
	static const struct {
		const char *line, *msg;
	} cases[] = {
		{"1", "t.tr:1: missing op"},
		{"1 CALLL a b c", "t.tr:1: bad op \"CALLL\" (expected CALL, RET or MSG)"},
		{"1 call a b c", "t.tr:1: bad op \"call\" (ops are upper case: CALL, RET or MSG)"},
		{"1 Ret_Sent a b c", "t.tr:1: bad op \"Ret_Sent\" (ops are upper case: CALL, RET or MSG)"},
		{"1 REPLY a b c", "t.tr:1: bad op \"REPLY\" (expected CALL, RET or MSG)"},
		{"1 CALL", "t.tr:1: missing sender"},
		{"1 CALL a", "t.tr:1: missing receiver"},
		{"1 CALL a b", "t.tr:1: missing id (\"-\" when there is none)"},
		{"1 CALL a b \t ", "t.tr:1: missing id (\"-\" when there is none)"},
		{"1 CALL a%zz b c", "t.tr:1: bad percent-encoding in sender \"a%zz\" (\"%zz\": '%' must be "
		                    "followed by two hex digits)"},
		{"1 CALL a b% c", "t.tr:1: bad percent-encoding in receiver \"b%\" (\"%\" at the end: '%' "
		                  "must be followed by two hex digits)"},
		{"1 CALL a%00 b c", "t.tr:1: bad sender \"a%00\" (encodes a NUL byte)"},
		{"1 CALL a b c%4", "t.tr:1: bad percent-encoding in id \"c%4\" (\"%4\" at the end: '%' "
		                   "must be followed by two hex digits)"},
		{"1 CALL a b c foo", "t.tr:1: bad attribute \"foo\" (no '=')"},
		{"1 CALL a b c =x", "t.tr:1: bad attribute \"=x\" (empty key)"},
		{"1 CALL a b c req=%G1", "t.tr:1: bad percent-encoding in attribute \"req\" (\"%G1\": '%' "
		                         "must be followed by two hex digits)"},
		{"1 CALL a b c req=ab%", "t.tr:1: bad percent-encoding in attribute \"req\" (\"%\" at the "
		                         "end: '%' must be followed by two hex digits)"},
		{"1 CALL a b c end=x", "t.tr:1: bad end= time \"x\" (not a number)"},
		{"1 CALL a b c end=", "t.tr:1: bad end= time \"\" (empty)"},
		{"1 CALL a b c end=1.0000000001", "t.tr:1: bad end= time \"1.0000000001\" (more than 9 "
		                                  "decimals)"},
		{"2 CALL a b c end=1.5", "t.tr:1: bad end= time \"1.5\" (before the timestamp "
		                         "2.000000000)"},
		{"1 CALL a b c end=%zz", "t.tr:1: bad percent-encoding in attribute \"end\" (\"%zz\": '%' "
		                         "must be followed by two hex digits)"},
	};
	struct bb_err err;

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		CHECK_STR(err_of(cases[i].line, &err), cases[i].msg);
	/* a raw NUL in a node name */
	{
		const char text[] = "1 CALL a\0b c d\n";
		char *out;
		CHECK_INT(roundtrip(text, sizeof text - 1, NULL, &out, NULL, &err), BB_ERR_PARSE);
		CHECK_STR(err.msg, "t.tr:1: bad sender \"a\\x00b\" (contains a NUL byte)");
		free(out);
	}
	/* good end= forms */
	CHECK_STR(err_of("1 CALL a b c end=1\n2 CALL a b c end=2.5 end=junk\n", &err), "");
}

static void test_bad_quoting(void)
{
	struct bb_err err;

	/* control bytes escaped, quotes and backslashes too */
	CHECK_STR(err_of("1\x01\x7f\"\\ CALL a b c", &err),
	          "t.tr:1: bad timestamp \"1\\x01\\x7f\\\"\\\\\" (junk after the number)");
	/* long text is cut at about 40 bytes with "..." */
	CHECK_STR(err_of("1 CALL a b c aaaaaaaaaabbbbbbbbbbccccccccccddddddddddeeeeeeeeee", &err),
	          "t.tr:1: bad attribute \"aaaaaaaaaabbbbbbbbbbccccccccccdddddddddd\"... (no '=')");
	/* never a broken UTF-8 sequence */
	CHECK_STR(err_of("1 CALL a b c aaaaaaaaaabbbbbbbbbbccccccccccddddddddd\xc3\xa9xx", &err),
	          "t.tr:1: bad attribute \"aaaaaaaaaabbbbbbbbbbccccccccccddddddddd\"... (no '=')");
	/* a long file name still gives a terminated message */
	{
		char name[400];
		struct bb_reader *r;
		struct bb_rec rec;
		memset(name, 'f', sizeof name - 1);
		name[sizeof name - 1] = '\0';
		r = bb_reader_mem("x", 1, name, NULL, &err);
		CHECK_INT(bb_reader_next(r, &rec, &err), BB_ERR_PARSE);
		CHECK_INT(strlen(err.msg), sizeof err.msg - 1);
		bb_reader_free(r);
	}
}

static void test_errors_sticky(void)
{
	const char *text = "1 CALL a b c\nbad\n3 CALL a b c\n";
	struct bb_err err;
	struct bb_rec rec;
	struct bb_reader *r = bb_reader_mem(text, strlen(text), "t.tr", NULL, &err);

	CHECK_INT(bb_reader_next(r, &rec, &err), BB_ERR_PARSE);
	CHECK_STR(err.msg, "t.tr:2: bad timestamp \"bad\" (not a number)");
	strcpy(err.msg, "");
	CHECK_INT(bb_reader_next(r, &rec, &err), BB_ERR_PARSE);
	CHECK_STR(err.msg, "t.tr:2: bad timestamp \"bad\" (not a number)");
	CHECK_INT(bb_reader_next(r, &rec, NULL), BB_ERR_PARSE);
	bb_reader_free(r);
}

static void test_lenient(void)
{
	const char *text = "#bbtrace 1\n"
	                   "1 CALL a b c\n"
	                   "2 CALLL a b c\n"
	                   "3 RET b a c\n"
	                   "x\n"
	                   "4 MSG a b - foo\n"
	                   "5 MSG a b - req=%\n"
	                   "6 MSG a b -\n";
	struct bb_reader_opts opts = {.lenient = 1};
	struct bb_reader_stats st;
	struct bb_err err;
	char *out;

	CHECK_INT(roundtrip(text, strlen(text), &opts, &out, &st, &err), 0);
	CHECK_STR(out, "#bbtrace 1\n1.000000000\tCALL\ta\tb\tc\n3.000000000\tRET\tb\ta\tc\n"
	               "6.000000000\tMSG\ta\tb\t-\n");
	CHECK_INT(st.skipped, 4);
	CHECK_INT(st.first_bad_line, 3);
	CHECK_INT(st.records, 3);
	CHECK_INT(st.lines, 8);
	free(out);
	/* nothing skipped: first_bad_line 0 */
	CHECK_INT(roundtrip("1 CALL a b c\n", 13, &opts, &out, &st, &err), 0);
	CHECK_INT(st.skipped, 0);
	CHECK_INT(st.first_bad_line, 0);
	free(out);
}

static void test_line_too_long(void)
{
	size_t n = BB_LINE_MAX + 10;
	char *text = malloc(n + 64);

	memset(text, 0, n + 64);
	struct bb_reader_opts len = {.lenient = 1};
	struct bb_reader_stats st;
	struct bb_err err;
	char *out;
	size_t k;

	/* line 2 too long, in memory */
	k = (size_t)sprintf(text, "1 CALL a b c\n2 CALL a b c req=");
	memset(text + k, 'x', n + 13 - k);
	k = n + 13;
	k += (size_t)sprintf(text + k, "\n3 RET b a c\n");
	CHECK_INT(roundtrip(text, k, NULL, &out, NULL, &err), BB_ERR_PARSE);
	CHECK_STR(err.msg, "t.tr:2: line too long (more than 1048576 bytes)");
	free(out);
	CHECK_INT(roundtrip(text, k, &len, &out, &st, &err), 0);
	CHECK_STR(out, "#bbtrace 1\n1.000000000\tCALL\ta\tb\tc\n3.000000000\tRET\tb\ta\tc\n");
	CHECK_INT(st.skipped, 1);
	CHECK_INT(st.first_bad_line, 2);
	free(out);

	/* the same through a file, where the line spans buffer refills */
	char *p = tmp_path("long");
	FILE *f = fopen(p, "wb");
	fwrite(text, 1, k, f);
	fclose(f);
	for (int lenient = 0; lenient < 2; lenient++) {
		struct bb_reader *r = bb_reader_open(p, lenient ? &len : NULL, &err);
		struct bb_rec rec;
		int got = 0, rc;
		while ((rc = bb_reader_next(r, &rec, &err)) == 1)
			got++;
		if (lenient) {
			CHECK_INT(rc, 0);
			CHECK_INT(got, 2);
			bb_reader_stats(r, &st);
			CHECK_INT(st.skipped, 1);
			CHECK_INT(st.lines, 3);
		} else {
			CHECK_INT(rc, BB_ERR_PARSE);
			CHECK_HAS(err.msg, ":2: line too long (more than 1048576 bytes)");
		}
		bb_reader_free(r);
	}
	/* exactly BB_LINE_MAX bytes is fine, also with CRLF; an overlong last line without LF */
	k = (size_t)sprintf(text, "1 CALL a b c req=");
	memset(text + k, 'y', BB_LINE_MAX - k);
	k = BB_LINE_MAX;
	memcpy(text + k, "\r\n", 2);
	f = fopen(p, "wb");
	fwrite(text, 1, k + 2, f);
	fwrite(text, 1, k, f);
	fwrite("zz", 1, 2, f);
	fclose(f);
	{
		struct bb_reader *r = bb_reader_open(p, &len, &err);
		struct bb_rec rec;
		CHECK_INT(bb_reader_next(r, &rec, &err), 1);
		CHECK_INT(rec.attrs[0].val_len, BB_LINE_MAX - 17);
		CHECK_INT(bb_reader_next(r, &rec, &err), 0);
		bb_reader_stats(r, &st);
		CHECK_INT(st.skipped, 1);
		CHECK_INT(st.first_bad_line, 2);
		bb_reader_free(r);
	}
	unlink(p);
	free(p);
	free(text);
}

/* ---- ordering ------------------------------------------------------------------------ */

static void test_reorder_within_window(void)
{
	const char *text = "1 CALL a b 1\n"
	                   "3 CALL a b 3\n"
	                   "2 CALL a b 2\n"
	                   "5 CALL a b 5\n"
	                   "4 CALL a b 4\n"
	                   "4 CALL a b 4b\n"
	                   "0.5 CALL a b 0\n"; /* 6 lines back: inside a window of 6 */
	struct bb_reader_opts opts = {.window = 6};
	struct bb_reader_stats st;
	struct bb_err err;
	char *out;

	CHECK_INT(roundtrip(text, strlen(text), &opts, &out, &st, &err), 0);
	CHECK_STR(out, "#bbtrace 1\n"
	               "0.500000000\tCALL\ta\tb\t0\n"
	               "1.000000000\tCALL\ta\tb\t1\n"
	               "2.000000000\tCALL\ta\tb\t2\n"
	               "3.000000000\tCALL\ta\tb\t3\n"
	               "4.000000000\tCALL\ta\tb\t4\n"
	               "4.000000000\tCALL\ta\tb\t4b\n"
	               "5.000000000\tCALL\ta\tb\t5\n");
	CHECK_INT(st.reordered, 4); /* 2, 4, 4b (after 5) and 0.5 */
	free(out);
}

static void test_reorder_beyond_window(void)
{
	const char *text = "1 CALL a b 1\n"
	                   "2 CALL a b 2\n"
	                   "3 CALL a b 3\n"
	                   "4 CALL a b 4\n"
	                   "5 CALL a b 5\n"
	                   "1.5 CALL a b late\n"
	                   "6 CALL a b 6\n";
	struct bb_reader_opts opts = {.window = 3};
	struct bb_reader_stats st;
	struct bb_err err;
	char *out;

	CHECK_INT(roundtrip(text, strlen(text), &opts, &out, &st, &err), BB_ERR_PARSE);
	CHECK_STR(err.msg, "t.tr:6: timestamp 1.500000000 is earlier than 2.000000000 already read "
	                   "(reorder window 3 lines)");
	free(out);
	opts.lenient = 1;
	CHECK_INT(roundtrip(text, strlen(text), &opts, &out, &st, &err), 0);
	CHECK_STR(out, "#bbtrace 1\n1.000000000\tCALL\ta\tb\t1\n2.000000000\tCALL\ta\tb\t2\n"
	               "3.000000000\tCALL\ta\tb\t3\n4.000000000\tCALL\ta\tb\t4\n"
	               "5.000000000\tCALL\ta\tb\t5\n6.000000000\tCALL\ta\tb\t6\n");
	CHECK_INT(st.skipped, 1);
	CHECK_INT(st.first_bad_line, 6);
	CHECK_INT(st.reordered, 0);
	free(out);
	/* the default window is BB_READER_WINDOW */
	CHECK_STR(err_of("2 MSG a b -\n3 MSG a b -\n1 MSG a b -\n", &err), "");
}

/* Random jitter smaller than the window: every record out, sorted, stable. */
static void test_reorder_random(void)
{
	enum { N = 20000, W = 64 };
	struct bb_reader_opts opts = {.window = W, .intern_ids = 1};
	char *text = malloc((size_t)N * 40), *p = text;
	int64_t *ts = malloc(N * sizeof *ts);
	int *seen = calloc(N, sizeof *seen);
	uint64_t s = 12345;
	struct bb_err err;
	struct bb_rec rec;
	struct bb_reader *r;
	int64_t last = INT64_MIN;
	uint64_t last_line = 0;
	int n = 0, rc;

	for (int i = 0; i < N; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		/* base rises 10 per line; jitter up to 300 back: at most ~30 lines */
		ts[i] = 1000 + (int64_t)i * 10 - (int64_t)(s % 300) / 10 * 10;
		p += sprintf(p, "0.%09lld MSG a b %d\n", (long long)ts[i], i);
	}
	r = bb_reader_mem(text, (size_t)(p - text), "r.tr", &opts, &err);
	while ((rc = bb_reader_next(r, &rec, &err)) == 1) {
		int i = atoi(rec.id_str);
		CHECK(rec.ts_ns >= last);
		if (rec.ts_ns == last)
			CHECK(rec.line > last_line); /* ties keep input order */
		CHECK_INT(rec.ts_ns, ts[i]);
		CHECK_INT(rec.line, (uint64_t)i + 1);
		CHECK_INT(rec.id, (uint32_t)i); /* ids interned in input order */
		seen[i]++;
		last = rec.ts_ns;
		last_line = rec.line;
		n++;
		if (unit_failed > 10)
			break;
	}
	CHECK_INT(rc, 0);
	CHECK_INT(n, N);
	for (int i = 0; i < N; i++)
		if (seen[i] != 1) {
			UNIT_FAIL_("record %d seen %d times", i, seen[i]);
			break;
		}
	bb_reader_free(r);
	free(text);
	free(ts);
	free(seen);
}

/* A record handed out right after it was read still has its id interned,
 * and ids keep input order. */
static void test_reorder_ids_small_window(void)
{
	const char *text = "2 MSG a b x\n1 MSG a b y\n3 MSG a b z\n0.5 MSG a b w\n";
	struct bb_reader_opts opts = {.window = 1, .intern_ids = 1};
	struct bb_err err;
	struct bb_rec rec;
	struct bb_reader *r = bb_reader_mem(text, strlen(text), "t.tr", &opts, &err);

	CHECK_INT(bb_reader_next(r, &rec, &err), 1);
	CHECK_STR(rec.id_str, "y");
	CHECK_INT(rec.id, 1);
	CHECK_INT(bb_reader_next(r, &rec, &err), 1);
	CHECK_STR(rec.id_str, "x");
	CHECK_INT(rec.id, 0);
	CHECK_INT(bb_reader_next(r, &rec, &err), BB_ERR_PARSE);
	CHECK_STR(err.msg, "t.tr:4: timestamp 0.500000000 is earlier than 2.000000000 already read "
	                   "(reorder window 1 lines)");
	bb_reader_free(r);
}

/* Random bytes: never a crash, every line either a record or counted. */
static void test_garbage(void)
{
	enum { N = 200000 };
	static const char alphabet[] = "0123456789.-% \t\n\r=#CALRETMSG_x\x00\x7f\xc3\xa9%%zz";
	char *text = malloc(N);
	uint64_t s = 99;
	struct bb_reader_stats st;
	struct bb_err err;
	char *out;

	for (int i = 0; i < N; i++) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		text[i] = alphabet[s % (sizeof alphabet - 1)];
	}
	for (int lenient = 0; lenient < 2; lenient++) {
		struct bb_reader_opts opts = {.lenient = lenient, .intern_ids = 1, .window = 7};
		int rc = roundtrip(text, N, &opts, &out, &st, &err);
		if (lenient) {
			/* version lines such as "#bbtrace 9" may stop even a lenient read */
			if (rc != 0)
				CHECK_HAS(err.msg, "version");
			CHECK(st.records + st.skipped <= st.lines);
		} else {
			CHECK(rc == 0 || rc == BB_ERR_PARSE);
		}
		free(out);
	}
	free(text);
}

/* ---- files, streams ----------------------------------------------------------------- */

/* Records read by a reader of src: 1 when each has id "id<i>" and line i+1
 * (after `skip` header lines), counting them into *n. */
static int tsrc_read_all(struct bb_tsrc *src, int skip, int *n)
{
	struct bb_err err;
	struct bb_rec rec;
	struct bb_reader *r = bb_tsrc_reader(src, NULL, &err);
	char want[64];
	int rc, ok = 1;
	*n = 0;
	if (!r) {
		UNIT_FAIL_("no reader: %s", err.msg);
		return 0;
	}
	while ((rc = bb_reader_next(r, &rec, &err)) == 1) {
		snprintf(want, sizeof want, "id%d", *n);
		if (ok && (strcmp(rec.id_str, want) || rec.line != (uint64_t)(*n + 1 + skip))) {
			UNIT_FAIL_("record %d: id %s line %llu", *n, rec.id_str,
			           (unsigned long long)rec.line);
			ok = 0;
		}
		(*n)++;
	}
	CHECK_INT(rc, 0);
	bb_reader_free(r);
	return ok;
}

static void test_tsrc(void)
{
	/* ~17 MB, mapped (read_max 0), then read into memory: the reader of the
	 * map gives back pages behind it (past 12 MiB); both ways every record
	 * reads right, twice, and again from the stream once given back */
	char *p = tmp_path("tsrc");
	FILE *f = fopen(p, "w");
	int n = 300000, got;
	fprintf(f, "#bbtrace 1\n");
	for (int i = 0; i < n; i++)
		fprintf(f, "%d.%09d\tCALL\tnode%d\tnode%d\tid%d\tpad=%040d\n", 1000 + i / 7, i % 7,
		        i % 13, i % 11, i, i);
	fclose(f);
	for (int way = 0; way < 2; way++) {
		FILE *fp = fopen(p, "r");
		struct bb_tsrc *src = bb_tsrc_stream(fp, "t.tr", way ? BB_TSRC_READ_MAX : 0);
		size_t len;
		CHECK_INT(bb_tsrc_in_memory(src, &len), 1);
		CHECK(len > (size_t)16 << 20);
		for (int pass = 0; pass < 2; pass++) {
			CHECK(tsrc_read_all(src, 1, &got));
			CHECK_INT(got, n);
		}
		bb_tsrc_unmap(src);
		CHECK_INT(bb_tsrc_in_memory(src, &len), 0);
		CHECK(tsrc_read_all(src, 1, &got));
		CHECK_INT(got, n);
		bb_tsrc_free(src);
		fclose(fp);
	}
	/* a file that ends without its LF, at any of the first 64 lengths past
	 * 512 KiB: read into memory or not, the last record reads */
	f = fopen(p, "w");
	fprintf(f, "#bbtrace 1\n");
	int lines = 0;
	while (ftell(f) < (512 << 10)) {
		fprintf(f, "%d.5\tCALL\ta\tb\tid%d\n", 1000 + lines, lines);
		lines++;
	}
	fclose(f);
	for (int extra = 0; extra < 64; extra++) {
		f = fopen(p, "w");
		fprintf(f, "#bbtrace 1\n");
		for (int i = 0; i < lines; i++)
			fprintf(f, "%d.5\tCALL\ta\tb\tid%d\n", 1000 + i, i);
		fprintf(f, "%d.5\tRET\tb\ta\tid%d\tpad=%0*d", 1000 + lines, lines, extra + 1, 0);
		long want = ftell(f);
		fclose(f);
		FILE *fp = fopen(p, "r");
		struct bb_tsrc *src = bb_tsrc_stream(fp, "t.tr", BB_TSRC_READ_MAX);
		size_t len;
		CHECK_INT(bb_tsrc_in_memory(src, &len), 1);
		CHECK_INT((long)len, want);
		CHECK(tsrc_read_all(src, 1, &got));
		CHECK_INT(got, lines + 1);
		bb_tsrc_free(src);
		fclose(fp);
	}
	unlink(p);
	free(p);

	/* a stream that cannot be mapped is read as one, rewound for the second pass */
	static const char text[] = "#bbtrace 1\n1.5\tCALL\ta\tb\tid0\n2.5\tRET\tb\ta\tid1\n";
	FILE *fp = fmemopen((void *)(uintptr_t)text, sizeof text - 1, "r");
	struct bb_tsrc *src = bb_tsrc_stream(fp, "m.tr", BB_TSRC_READ_MAX);
	size_t len;
	CHECK_INT(bb_tsrc_in_memory(src, &len), 0);
	for (int pass = 0; pass < 2; pass++) {
		CHECK(tsrc_read_all(src, 1, &got));
		CHECK_INT(got, 2);
	}
	bb_tsrc_free(src);
	fclose(fp);
}

static void test_read_file_blocks(void)
{
	/* ~3 MiB so that lines straddle the 1 MiB reads, through both the path
	 * and the stdio-stream readers */
	char *p = tmp_path("blocks");
	FILE *f = fopen(p, "w");
	int n = 60000;
	struct bb_err err;
	struct bb_rec rec;

	for (int i = 0; i < n; i++)
		fprintf(f, "%d.%09d\tCALL\tnode%d\tnode%d\tid%d\tpath=p%d\n", 1000 + i / 7, i % 7,
		        i % 13, i % 11, i, i * 31);
	fclose(f);
	for (int mode = 0; mode < 2; mode++) {
		FILE *fp = mode ? fopen(p, "r") : NULL;
		struct bb_reader *r = mode ? bb_reader_fopen(fp, "s.tr", NULL, &err)
		                           : bb_reader_open(p, NULL, &err);
		int i = 0, rc;
		char want[64];
		while ((rc = bb_reader_next(r, &rec, &err)) == 1) {
			snprintf(want, sizeof want, "id%d", i);
			if (strcmp(rec.id_str, want) || rec.line != (uint64_t)i + 1) {
				UNIT_FAIL_("mode %d record %d: id %s line %llu", mode, i, rec.id_str,
				           (unsigned long long)rec.line);
				break;
			}
			i++;
		}
		CHECK_INT(rc, 0);
		CHECK_INT(i, n);
		struct stat sb;
		CHECK(stat(p, &sb) == 0 && bb_reader_offset(r) == (uint64_t)sb.st_size);
		bb_reader_free(r);
		if (fp)
			fclose(fp);
	}
	unlink(p);
	free(p);
	/* a missing file */
	CHECK(bb_reader_open("/nonexistent/x.tr", NULL, &err) == NULL);
	CHECK_STR(err.msg, "/nonexistent/x.tr: cannot open: No such file or directory");
	/* a directory: a read error */
	{
		struct bb_reader *r = bb_reader_open("/", NULL, &err);
		CHECK(r == NULL);
		CHECK_STR(err.msg, "/: read error: Is a directory");
	}
}

/* ---- writer --------------------------------------------------------------------------- */

static void test_write_canonical(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mf = open_memstream(&buf, &len);
	struct bb_err err;
	struct bb_writer *w = bb_writer_fopen(mf, "m", &err);
	struct bb_attr attrs[] = {
		{"proto", "http", 5, 4},
		{"req", "GET /a b%\t\x7f\xc3\xa9=", 3, 14},
		{"path", "p7", 0, 0},      /* lengths 0: strlen */
		{"empty", NULL, 5, 0},
	};

	CHECK_INT(bb_writer_meta(w, "source unit test", &err), 0);
	CHECK_INT(bb_writer_put(w, INT64_C(1047680084482205000), BB_CALL, "nodeA", "nodeB", "id37",
	                        4, NULL, 0, &err), 0);
	CHECK_INT(bb_writer_put(w, INT64_C(1047680084483575000), BB_RET, "node B", "x\ny", "a b", 0,
	                        attrs, 4, &err), 0);
	CHECK_INT(bb_writer_put(w, 5, BB_MSG, "a", "b", NULL, 0, NULL, 0, &err), 0);
	CHECK_INT(bb_writer_put(w, -5, BB_MSG, "a", "b", "", 0, NULL, 0, &err), 0);
	CHECK_INT(bb_writer_put(w, 6 * BB_NS_PER_S, BB_MSG, "-", "b", "-", 1, NULL, 0, &err), 0);
	CHECK_INT(bb_writer_put(w, 7 * BB_NS_PER_S, BB_CALL, "a", "b", "x\0y", 3, NULL, 0, &err), 0);
	CHECK_INT(bb_writer_flush(w, &err), 0);
	CHECK_INT(bb_writer_close(w, &err), 0);
	fclose(mf);
	CHECK_STR(buf, "#bbtrace 1\n"
	               "#source unit test\n"
	               "1047680084.482205000\tCALL\tnodeA\tnodeB\tid37\n"
	               "1047680084.483575000\tRET\tnode%20B\tx%0Ay\ta%20b\tproto=http\t"
	               "req=GET%20/a%20b%25%09%7F\xc3\xa9=\tpath=p7\tempty=\n"
	               "0.000000005\tMSG\ta\tb\t-\n"
	               "-0.000000005\tMSG\ta\tb\t-\n"
	               "6.000000000\tMSG\t-\tb\t-\n"
	               "7.000000000\tCALL\ta\tb\tx%00y\n");
	free(buf);
	CHECK_INT(bb_writer_close(NULL, &err), 0);

	char *e = bb_pct_encode("a b%\x01\xff", 6);
	CHECK_STR(e, "a%20b%25%01\xff");
	free(e);
}

/* The writer keeps the seconds of the last time it formatted: times in the
 * same second, the next second, backwards, across zero and at the limits
 * each come out as bb_time_format writes them. */
static void test_write_time_seconds_kept(void)
{
	static const int64_t ts[] = {
		INT64_C(1047680084482205000), INT64_C(1047680084482205001), INT64_C(1047680084999999999),
		INT64_C(1047680085000000000), INT64_C(1047680084000000000), INT64_C(1047680084000000007),
		INT64_C(47680084000000007), 0, 999999999, 1000000000, -1, -999999999, -1000000000,
		-1000000001, 5, INT64_MAX, INT64_MAX - 1, INT64_MIN + 1, 123456789, INT64_C(99999999999),
		INT64_C(100000000000),
	};
	size_t n = sizeof ts / sizeof ts[0];
	char *buf = NULL;
	size_t len = 0;
	FILE *mf = open_memstream(&buf, &len);
	struct bb_err err;
	struct bb_writer *w = bb_writer_fopen(mf, "m", &err);
	for (size_t i = 0; i < n; i++)
		CHECK_INT(bb_writer_put(w, ts[i], BB_MSG, "a", "b", NULL, 0, NULL, 0, &err), 0);
	CHECK_INT(bb_writer_close(w, &err), 0);
	fclose(mf);
	char want[2048] = "#bbtrace 1\n";
	for (size_t i = 0; i < n; i++) {
		char t[BB_TIME_BUFSZ];
		bb_time_format(ts[i], t);
		snprintf(want + strlen(want), sizeof want - strlen(want), "%s\tMSG\ta\tb\t-\n", t);
	}
	CHECK_STR(buf, want);
	free(buf);
}

/* The writer encodes eight bytes at a time when none needs it: every byte
 * value at every position of fields of 1 to 19 bytes, beside a second byte
 * (a borrow from one byte must not hide or fake another), against the rule
 * one byte at a time. */
static void test_pct_encode_positions(void)
{
	static const unsigned char other[] = {'a', 0x21, 0x24, 0x26, 0x7e, 0x80, 0xff, 0x20, '%', 0x7f, 0};
	char in[20], want[64];
	for (size_t n = 1; n < sizeof in; n++) {
		for (size_t pos = 0; pos < n; pos++) {
			for (unsigned c = 0; c < 256; c++) {
				for (size_t k = 0; k < sizeof other; k++) {
					memset(in, 'x', n);
					in[(pos + 3) % n] = (char)other[k];
					in[pos] = (char)c;
					char *o = want;
					for (size_t i = 0; i < n; i++) {
						unsigned char b = (unsigned char)in[i];
						if (b <= 0x20 || b == '%' || b == 0x7f)
							o += sprintf(o, "%%%02X", b);
						else
							*o++ = (char)b;
					}
					*o = '\0';
					char *got = bb_pct_encode(in, n);
					if (strcmp(got, want) != 0) {
						CHECK_STR(got, want);
						free(got);
						return;
					}
					free(got);
				}
			}
		}
	}
}

static void test_write_bad_args(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mf = open_memstream(&buf, &len);
	struct bb_err err;
	struct bb_writer *w = bb_writer_fopen(mf, "m", &err);
	char *huge = malloc(BB_LINE_MAX);

	CHECK_INT(bb_writer_put(w, 1, BB_CALL, "", "b", "c", 1, NULL, 0, &err), BB_ERR_ARG);
	CHECK_STR(err.msg, "m: empty sender name");
	CHECK_INT(bb_writer_put(w, 1, BB_CALL, "a", NULL, "c", 1, NULL, 0, &err), BB_ERR_ARG);
	CHECK_STR(err.msg, "m: empty receiver name");
	CHECK_INT(bb_writer_put(w, 1, (enum bb_op)7, "a", "b", "c", 1, NULL, 0, &err), BB_ERR_ARG);
	CHECK_INT(bb_writer_put(w, BB_NO_TIME, BB_CALL, "a", "b", "c", 1, NULL, 0, &err), BB_ERR_ARG);
	CHECK_INT(bb_writer_meta(w, "two\nlines", &err), BB_ERR_ARG);
	CHECK_INT(bb_writer_meta(w, "bbtrace 2", &err), BB_ERR_ARG);
	/* a line the reader would refuse is refused */
	memset(huge, ' ', BB_LINE_MAX / 2);
	huge[BB_LINE_MAX / 2] = '\0';
	CHECK_INT(bb_writer_put(w, 1, BB_CALL, "a", "b", huge, 0, NULL, 0, &err), BB_ERR_LIMIT);
	CHECK_HAS(err.msg, "m: record too long (");
	/* nothing bad was written, and the writer still works */
	CHECK_INT(bb_writer_put(w, BB_NS_PER_S, BB_CALL, "a", "b", "c", 1, NULL, 0, &err), 0);
	CHECK_INT(bb_writer_close(w, &err), 0);
	fclose(mf);
	CHECK_STR(buf, "#bbtrace 1\n1.000000000\tCALL\ta\tb\tc\n");
	free(buf);
	free(huge);

	CHECK(bb_writer_open("/nonexistent/dir/x.tr", &err) == NULL);
	CHECK_STR(err.msg, "/nonexistent/dir/x.tr: cannot open for writing: No such file or directory");
}

static void test_write_dev_full(void)
{
	struct bb_err err;
	struct bb_writer *w;

	if (access("/dev/full", W_OK))
		SKIP("no /dev/full");
	/* by path: the error comes at close */
	w = bb_writer_open("/dev/full", &err);
	CHECK(w != NULL);
	if (!w)
		return;
	CHECK_INT(bb_writer_put(w, 1, BB_CALL, "a", "b", "c", 1, NULL, 0, &err), 0);
	CHECK_INT(bb_writer_close(w, &err), BB_ERR_IO);
	CHECK_STR(err.msg, "/dev/full: write error: No space left on device");

	/* by path: flush reports it, and it sticks */
	w = bb_writer_open("/dev/full", &err);
	CHECK_INT(bb_writer_flush(w, &err), BB_ERR_IO);
	CHECK_STR(err.msg, "/dev/full: write error: No space left on device");
	strcpy(err.msg, "");
	CHECK_INT(bb_writer_put(w, 1, BB_CALL, "a", "b", "c", 1, NULL, 0, &err), BB_ERR_IO);
	CHECK_STR(err.msg, "/dev/full: write error: No space left on device");
	CHECK_INT(bb_writer_close(w, &err), BB_ERR_IO);

	/* by path: enough lines to fill the buffer make put fail */
	w = bb_writer_open("/dev/full", &err);
	int rc = 0, i;
	for (i = 0; i < 1000000 && rc == 0; i++)
		rc = bb_writer_put(w, i, BB_CALL, "nodeA", "nodeB", "id", 2, NULL, 0, &err);
	CHECK_INT(rc, BB_ERR_IO);
	CHECK(i < 1000000);
	CHECK_STR(err.msg, "/dev/full: write error: No space left on device");
	bb_writer_close(w, NULL);

	/* through a stdio stream */
	FILE *f = fopen("/dev/full", "w");
	w = bb_writer_fopen(f, "full.tr", &err);
	CHECK_INT(bb_writer_put(w, 1, BB_CALL, "a", "b", "c", 1, NULL, 0, &err), 0);
	CHECK_INT(bb_writer_close(w, &err), BB_ERR_IO);
	CHECK_STR(err.msg, "full.tr: write error: No space left on device");
	fclose(f);
}

/* ---- round trips ----------------------------------------------------------------------- */

static void test_roundtrip_identical(void)
{
	const char *canon = "#bbtrace 1\n"
	                    "#source maketrace paper.json\n"
	                    "#capture packets=10 dropped_kernel=0 dropped_iface=0 tcp_gaps=0\n"
	                    "#x-unknown kept\n"
	                    "1047680084.482205000\tCALL\tWS1\tAUTH\t123456\tpath=web.789\n"
	                    "1047680084.482205000\tMSG\tWS1\tAUTH\t-\n"
	                    "1047680084.483575000\tRET\tAUTH\tWS1\t123456\tproto=http\t"
	                    "req=GET%20/login%0A\tend=1047680084.483600000\tlen=123\tpath=web.789\n"
	                    "1047680085.000000001\tCALL\tnode%20with%20space\t%25pct\tid%09tab\t"
	                    "k=%00%7F\xe2\x82\xac\n";
	char *once = NULL, *twice = NULL, *path = tmp_path("rt.tr");
	struct bb_reader_stats st;
	struct bb_err err;
	struct bb_reader *r;
	struct bb_writer *w;
	struct bb_rec rec;
	size_t n = 0;

	CHECK_INT(roundtrip(canon, strlen(canon), NULL, &once, &st, &err), 0);
	CHECK_STR(once, canon);
	CHECK_INT(roundtrip(once, strlen(once), NULL, &twice, &st, &err), 0);
	CHECK_STR(twice, canon);
	free(once);
	free(twice);

	/* and through files on disk, ids interned */
	r = bb_reader_mem(canon, strlen(canon), "c.tr", &(struct bb_reader_opts){.intern_ids = 1},
	                  &err);
	w = bb_writer_open(path, &err);
	for (size_t i = 0; i < bb_reader_nmeta(r); i++)
		CHECK_INT(bb_writer_meta(w, bb_reader_meta(r, i), &err), 0);
	while (bb_reader_next(r, &rec, &err) == 1)
		CHECK_INT(bb_writer_put_rec(w, r, &rec, &err), 0);
	CHECK_INT(bb_writer_close(w, &err), 0);
	bb_reader_free(r);
	once = slurp(path, &n);
	CHECK_STR(once, canon);
	CHECK_INT(n, strlen(canon));
	free(once);
	unlink(path);
	free(path);
}

static void test_roundtrip_all_bytes(void)
{
	char val[256], name[256], *buf = NULL, *out = NULL;
	size_t len = 0;
	FILE *mf = open_memstream(&buf, &len);
	struct bb_err err;
	struct bb_writer *w = bb_writer_fopen(mf, "m", &err);
	struct bb_attr a = {"v", val, 1, 256};
	struct bb_reader *r;
	struct bb_rec rec;

	for (int i = 0; i < 256; i++)
		val[i] = (char)i;
	for (int i = 0; i < 255; i++)
		name[i] = (char)(i + 1); /* a C string: every byte but NUL */
	name[255] = '\0';
	CHECK_INT(bb_writer_put(w, 1, BB_MSG, name, "b", val, 256, &a, 1, &err), 0);
	CHECK_INT(bb_writer_close(w, &err), 0);
	fclose(mf);
	/* the line holds no raw control byte, space or DEL */
	for (size_t i = 11; i + 1 < len; i++) {
		unsigned char c = (unsigned char)buf[i];
		if ((c < 0x20 && c != '\t') || c == ' ' || c == 0x7f) {
			UNIT_FAIL_("raw byte 0x%02x at %zu", c, i);
			break;
		}
	}
	CHECK_HAS(buf, "%00%01%02");
	CHECK_HAS(buf, "%1F%20!\"#$%25&");
	CHECK_HAS(buf, "}~%7F\x80\x81");
	r = bb_reader_mem(buf, len, "m", NULL, &err);
	CHECK_INT(bb_reader_next(r, &rec, &err), 1);
	CHECK_INT(rec.attrs[0].val_len, 256);
	CHECK(!memcmp(rec.attrs[0].val, val, 256));
	CHECK_INT(rec.attrs[0].val[256], 0);
	CHECK_INT(rec.id_len, 256);
	CHECK(!memcmp(rec.id_str, val, 256));
	CHECK_STR(bb_reader_node(r, rec.sender), name);
	CHECK_INT(bb_reader_next(r, &rec, &err), 0);
	bb_reader_free(r);
	/* and read -> write gives the same bytes */
	CHECK_INT(roundtrip(buf, len, NULL, &out, NULL, &err), 0);
	CHECK_STR(out, buf);
	free(out);
	free(buf);
}

/* Progress lines: the first at once, with the count and the share of the
 * total; a later one (after more than the rewrite period) with the rate and
 * the ETA; the end clears the line. The wait only lets the period pass:
 * nothing depends on how fast this machine is. */
static void test_progress_eta(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mf = open_memstream(&buf, &len);
	CHECK(mf != NULL);
	if (!mf)
		return;
	struct bb_progress *p = bb_progress_new(mf, "prog");
	bb_progress_phase(p, "reading", 4000);
	bb_progress_update(p, 0, " messages");
	bb_progress_update(p, 10, " messages"); /* within the period: not written */
	struct timespec nap = {0, 300 * 1000 * 1000};
	while (nanosleep(&nap, &nap) != 0 && errno == EINTR)
		;
	bb_progress_update(p, 1000, " messages");
	bb_progress_free(p);
	fclose(mf);
	CHECK_HAS(buf, "\rprog: reading: 0 messages of ~4,000 (0%)\033[K\r");
	CHECK(strstr(buf, "10 messages") == NULL);
	CHECK_HAS(buf, "\rprog: reading: 1,000 messages of ~4,000 (25%), ");
	CHECK_HAS(buf, "/s, ETA 0:");
	CHECK(len >= 4 && !memcmp(buf + len - 4, "\r\033[K", 4));
	free(buf);
}

static const struct unit_test tests[] = {
	{"time_parse_exact", test_time_parse_exact},
	{"time_parse_bad", test_time_parse_bad},
	{"time_parse_fast", test_time_parse_fast},
	{"duration_parse", test_duration_parse},
	{"intern", test_intern},
	{"read_basic", test_read_basic},
	{"read_ids_not_interned", test_read_ids_not_interned},
	{"read_line_ends", test_read_line_ends},
	{"read_node_cache", test_read_node_cache},
	{"read_empty", test_read_empty},
	{"read_version", test_read_version},
	{"read_meta_between", test_read_meta_between},
	{"read_percent_names", test_read_percent_names},
	{"read_long_fields", test_read_long_fields},
	{"bad_timestamp", test_bad_timestamp},
	{"bad_fields", test_bad_fields},
	{"bad_quoting", test_bad_quoting},
	{"errors_sticky", test_errors_sticky},
	{"lenient", test_lenient},
	{"line_too_long", test_line_too_long},
	{"reorder_within_window", test_reorder_within_window},
	{"reorder_beyond_window", test_reorder_beyond_window},
	{"reorder_random", test_reorder_random},
	{"reorder_ids_small_window", test_reorder_ids_small_window},
	{"garbage", test_garbage},
	{"read_file_blocks", test_read_file_blocks},
	{"tsrc", test_tsrc},
	{"write_canonical", test_write_canonical},
	{"write_time_seconds_kept", test_write_time_seconds_kept},
	{"pct_encode_positions", test_pct_encode_positions},
	{"write_bad_args", test_write_bad_args},
	{"write_dev_full", test_write_dev_full},
	{"roundtrip_identical", test_roundtrip_identical},
	{"roundtrip_all_bytes", test_roundtrip_all_bytes},
	{"fmt_sniff", test_fmt_sniff},
	{"read_pcap_named", test_read_pcap_named},
	{"progress_eta", test_progress_eta},
};

UNIT_MAIN(tests)

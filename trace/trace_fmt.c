/* trace_fmt.c - what a file is by its first bytes: a trace, compressed, or a packet capture */
/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "trace/trace.h"

/* The magic numbers: gzip RFC 1952 section 2.3.1 (1f 8b), zstd RFC 8878
 * section 3.1.1 (28 b5 2f fd, little-endian 0xFD2FB528), classic pcap in
 * either byte order with micro- or nanosecond times (a1b2c3d4, a1b23c4d),
 * pcapng's Section Header Block type (0a 0d 0d 0a, the same in both byte
 * orders). A trace starts with text, never with these bytes. */
enum bb_fmt bb_fmt_sniff(const void *buf, size_t n)
{
	const unsigned char *p = buf;
	static const unsigned char pcap[4][4] = {
		{0xa1, 0xb2, 0xc3, 0xd4}, {0xd4, 0xc3, 0xb2, 0xa1},
		{0xa1, 0xb2, 0x3c, 0x4d}, {0x4d, 0x3c, 0xb2, 0xa1},
	};
	if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b)
		return BB_FMT_GZIP;
	if (n < 4)
		return BB_FMT_TEXT;
	if (!memcmp(p, "\x28\xb5\x2f\xfd", 4))
		return BB_FMT_ZSTD;
	if (!memcmp(p, "\x0a\x0d\x0d\x0a", 4))
		return BB_FMT_PCAPNG;
	for (int i = 0; i < 4; i++)
		if (!memcmp(p, pcap[i], 4))
			return BB_FMT_PCAP;
	return BB_FMT_TEXT;
}

/* "trace", "gzip", "zstd", "pcap", "pcapng". Static string. */
const char *bb_fmt_name(enum bb_fmt f)
{
	switch (f) {
	case BB_FMT_TEXT: return "trace";
	case BB_FMT_GZIP: return "gzip";
	case BB_FMT_ZSTD: return "zstd";
	case BB_FMT_PCAP: return "pcap";
	case BB_FMT_PCAPNG: return "pcapng";
	}
	return "?";
}

/* The compression a trace written to path gets: by its suffix. */
enum bb_fmt bb_fmt_of_name(const char *path)
{
	size_t n = strlen(path);
	if (n > 3 && !strcmp(path + n - 3, ".gz"))
		return BB_FMT_GZIP;
	if (n > 4 && !strcmp(path + n - 4, ".zst"))
		return BB_FMT_ZSTD;
	return BB_FMT_TEXT;
}

/* What to tell the user who gave a file of format f where a trace was
 * expected. name is the input's name ("<stdin>" for standard input). */
void bb_fmt_explain(enum bb_fmt f, const char *name, struct bb_err *err)
{
	int in = !strcmp(name, "<stdin>");
	if (f == BB_FMT_PCAP || f == BB_FMT_PCAPNG) {
		if (in)
			bb_err_set(err, "%s is a packet capture (%s), not a trace: put "
			                "\"bbcap -r - -w -\" before this command in the pipe",
			           name, bb_fmt_name(f));
		else
			bb_err_set(err, "%s is a packet capture (%s), not a trace: run "
			                "bbcap -r %s -w TRACE first, then give it TRACE",
			           name, bb_fmt_name(f), name);
	} else if (f == BB_FMT_GZIP || f == BB_FMT_ZSTD) {
		bb_err_set(err, "%s is %s-compressed: %s", name, bb_fmt_name(f),
		           in ? "decompress it in the pipe (zcat, zstdcat) or give the file name"
		              : "this reader takes it uncompressed (bbnest, bbconv and bbskew "
		                "read .gz and .zst files by name)");
	}
}

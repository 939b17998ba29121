/* trace.h - the bb trace record, v1 reader and writer, interning, time parsing */
/* SPDX-License-Identifier: MIT */
#ifndef BB_TRACE_H
#define BB_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- status, errors, allocation ------------------------------------------ */

enum bb_status {
	BB_OK = 0,
	BB_ERR_IO = -1,     /* read or write failed; msg names the file and errno */
	BB_ERR_PARSE = -2,  /* bad input; msg is "FILE:LINE: what is wrong with which field" */
	BB_ERR_ARG = -3,    /* bad argument from the caller (option value, table file) */
	BB_ERR_LIMIT = -4,  /* a documented limit was exceeded */
};

/* Caller-owned error detail. Functions that take a `struct bb_err *` may be
 * passed NULL; on failure they fill msg (always NUL-terminated). */
struct bb_err {
	char msg[256];
};

/* printf into err->msg if err is not NULL. */
void bb_err_set(struct bb_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* malloc/calloc/realloc that abort with the size on failure; never return NULL. */
void *bb_xmalloc(size_t n);
void *bb_xcalloc(size_t n, size_t size);
void *bb_xrealloc(void *p, size_t n);
char *bb_xstrndup(const char *s, size_t n);

/* A command-line usage error, the one format of every bb command: prints
 * "PROG: error: MESSAGE" and "Try 'PROG --help' for more information." to
 * stderr and returns 2 (the exit status of a usage error). Only mains call it. */
int bb_usage_error(const char *prog, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The usage error for a bad option, from what getopt_long returned (run with
 * opterr = 0 and ':' first in the option string): c ':' (a value missing) or
 * '?' (an unknown option), opt getopt's optopt, arg argv[optind - 1]. Names
 * the option as given ("--output needs a value", "unknown option -x") and
 * returns 2 through bb_usage_error. */
int bb_usage_getopt(const char *prog, int c, int opt, const char *arg);

/* ---- times ------------------------------------------------------------- */

#define BB_NS_PER_S INT64_C(1000000000)
#define BB_NO_TIME INT64_MIN

/* Parse "SECONDS[.FRACTION]" (optional leading '-', at most 9 decimals, no
 * exponent) exactly into nanoseconds. Returns 0, or -1 on a bad form or overflow. */
int bb_time_parse(const char *s, size_t len, int64_t *ns_out);

/* Write ns as seconds with exactly 9 decimals ("1047680084.482205000") into
 * buf (at least BB_TIME_BUFSZ bytes). Returns the length. */
#define BB_TIME_BUFSZ 32
size_t bb_time_format(int64_t ns, char *buf);

/* Parse a duration for a command-line option: seconds with optional decimals and
 * an optional unit suffix ns, us, ms, s, m, h ("0.01", "10ms", "2h"). */
int bb_duration_parse(const char *s, int64_t *ns_out);

/* ---- interning: strings to dense small integers ------------------------------ */

#define BB_NONE UINT32_MAX

struct bb_intern;

/* Returns new, caller frees with bb_intern_free. */
struct bb_intern *bb_intern_new(void);
void bb_intern_free(struct bb_intern *in);
/* Index of s[0..len), added if new; indices are 0, 1, 2 ... in order of first sight. */
uint32_t bb_intern_add(struct bb_intern *in, const char *s, size_t len);
/* Index of s[0..len), or BB_NONE when absent. */
uint32_t bb_intern_find(const struct bb_intern *in, const char *s, size_t len);
/* Borrows: the NUL-terminated string of index i, valid until the table is freed. */
const char *bb_intern_str(const struct bb_intern *in, uint32_t i);
size_t bb_intern_len(const struct bb_intern *in, uint32_t i);
uint32_t bb_intern_count(const struct bb_intern *in);
/* Bytes of heap the table holds (for benchmarks and memory accounting). */
size_t bb_intern_bytes(const struct bb_intern *in);

/* ---- the record ---------------------------------------------------------------- */

enum bb_op { BB_CALL = 0, BB_RET = 1, BB_MSG = 2 };

/* Name of an op ("CALL", "RET", "MSG"). */
const char *bb_op_name(enum bb_op op);

/* One attribute; val is percent-decoded and NUL-terminated (it may contain NUL
 * bytes if the input encoded them: use val_len). */
struct bb_attr {
	const char *key;
	const char *val;
	uint32_t key_len;
	uint32_t val_len;
};

/* Bytes that may be read past the end of a record's id (bb_rec.id_str): a
 * word-wide load of its last bytes stays in memory the reader owns. */
#define BB_REC_ID_PAD 8

/* One trace line as the reader hands it out. Strings are borrowed: valid until
 * the next call to bb_reader_next on the same reader. */
struct bb_rec {
	int64_t ts_ns;          /* time of the message's first byte */
	int64_t end_ns;         /* end= attribute, or BB_NO_TIME */
	uint64_t line;          /* line number in the input, 1-based */
	enum bb_op op;
	uint32_t sender;        /* node index in the reader's node table */
	uint32_t receiver;
	uint32_t id;            /* index in the reader's id table, BB_NONE for "-"
	                           or when id interning is off */
	const char *id_str;     /* the id text, "-" when none; BB_REC_ID_PAD bytes
	                           after its id_len may be read (they are not the id) */
	uint32_t id_len;
	uint32_t nattrs;
	const struct bb_attr *attrs; /* in input order, nattrs of them */
};

/* The value of attribute key, or NULL; *len_out gets its length if not NULL. */
const char *bb_rec_attr(const struct bb_rec *rec, const char *key, size_t *len_out);

/* ---- reader -------------------------------------------------------------------- */

struct bb_reader_opts {
	int lenient;            /* skip and count bad lines instead of failing */
	int intern_ids;         /* fill rec.id through the reader's id table */
	size_t window;          /* reorder window in lines; 0 means BB_READER_WINDOW */
};
#define BB_READER_WINDOW 4096
#define BB_LINE_MAX (1u << 20) /* longest line accepted, bytes */

struct bb_reader;

/* Opens path ("-" is standard input, named "<stdin>") for streaming. Returns new
 * (free with bb_reader_free) or NULL with err set. opts may be NULL for defaults.
 * All three constructors read the leading '#' lines at once, so bb_reader_meta
 * has the header before the first record (and a bad version line fails here). */
struct bb_reader *bb_reader_open(const char *path, const struct bb_reader_opts *opts,
                                 struct bb_err *err);
/* Reads from an open stdio stream, named `name` in messages; borrows fp. */
struct bb_reader *bb_reader_fopen(FILE *fp, const char *name,
                                  const struct bb_reader_opts *opts, struct bb_err *err);
/* The same, taking fp over: bb_reader_free fcloses it (a decompressing
 * stream, see traceio/traceio.h); so does a failed open. */
struct bb_reader *bb_reader_fopen_own(FILE *fp, const char *name,
                                      const struct bb_reader_opts *opts, struct bb_err *err);
/* Reads from memory; borrows buf for the reader's lifetime. */
struct bb_reader *bb_reader_mem(const char *buf, size_t len, const char *name,
                                const struct bb_reader_opts *opts, struct bb_err *err);
void bb_reader_free(struct bb_reader *r);

/* Next record in timestamp order. Returns 1 with *rec filled, 0 at the end,
 * or a negative bb_status with err set ("FILE:LINE: ..."). Lines out of order
 * by more than the window are an error (skipped and counted when lenient).
 * After an error the reader is finished: later calls return it again. */
int bb_reader_next(struct bb_reader *r, struct bb_rec *rec, struct bb_err *err);

/* The reader's node and id tables (borrowed; owned by the reader). */
struct bb_intern *bb_reader_nodes(const struct bb_reader *r);
struct bb_intern *bb_reader_ids(const struct bb_reader *r);
/* Name of node index i. */
const char *bb_reader_node(const struct bb_reader *r, uint32_t i);

/* Metadata lines ('#' lines other than "#bbtrace"), in input order, without the
 * leading '#' and line end. Borrowed. */
size_t bb_reader_nmeta(const struct bb_reader *r);
const char *bb_reader_meta(const struct bb_reader *r, size_t i);

struct bb_reader_stats {
	uint64_t lines;         /* lines read, all kinds */
	uint64_t records;       /* records handed out */
	uint64_t skipped;       /* bad lines skipped (lenient) */
	uint64_t reordered;     /* records that arrived out of order within the window */
	uint64_t bytes;         /* bytes read */
	uint64_t first_bad_line;/* line of the first skipped line, 0 if none */
	uint64_t meta_dropped;  /* metadata lines read but not kept (over 65536) */
};
void bb_reader_stats(const struct bb_reader *r, struct bb_reader_stats *st);
/* Bytes of the input the reader has taken lines from so far (of a mapped or
 * in-memory input, its offset). */
uint64_t bb_reader_offset(const struct bb_reader *r);
/* The input's name, as used in messages. */
const char *bb_reader_name(const struct bb_reader *r);

/* ---- a trace read in several passes (trace_src.c) ---------------------------- */

/* A trace that a program reads more than once (bbnest's two passes). A regular
 * file read from its start is held in memory and read in place, without an
 * input buffer: one of 512 KiB to read_max bytes is read into anonymous
 * memory in transparent huge pages where the system has them; any other is
 * mapped read-only, and each reader on the map gives back the pages well
 * behind what it has read, so a long trace does not stay resident. Another
 * stream is read as a stream and rewound for each later pass; a buffer is
 * read in place. */
struct bb_tsrc;
/* The read_max programs pass: bigger files are mapped. */
#define BB_TSRC_READ_MAX ((size_t)64 << 20)
/* Borrows fp (never closed here) and name; returns new (bb_tsrc_free).
 * read_max 0 maps every regular file. */
struct bb_tsrc *bb_tsrc_stream(FILE *fp, const char *name, size_t read_max);
/* Borrows buf and name for the source's life; returns new (bb_tsrc_free). */
struct bb_tsrc *bb_tsrc_mem(const char *buf, size_t len, const char *name);
/* Unmaps what the source mapped or read; NULL is fine. */
void bb_tsrc_free(struct bb_tsrc *s);
/* Whether the trace is in memory (read, mapped or a buffer), and its length then. */
int bb_tsrc_in_memory(const struct bb_tsrc *s, size_t *len);
/* A new reader of the whole trace (bb_reader_free it before the next one): the
 * first from the stream's position, later ones from its start. NULL with err
 * set when the stream cannot be rewound or the reader fails. */
struct bb_reader *bb_tsrc_reader(struct bb_tsrc *s, const struct bb_reader_opts *opts,
                                 struct bb_err *err);
/* Gives back the memory the file was read into or mapped to early, when no
 * later pass will read the trace. */
void bb_tsrc_unmap(struct bb_tsrc *s);

/* ---- writer -------------------------------------------------------------------- */

/* Canonical v1 output: "#bbtrace 1", metadata lines, then one line per record:
 * TS(9 decimals) TAB OP TAB SENDER TAB RECEIVER TAB ID [TAB KEY=VALUE ...] LF,
 * values percent-encoded (see docs/trace-format.md). */
struct bb_writer;

/* Writes to path ("-" is standard output, written with write(2) after stdio's
 * pending output). When a write to a regular file fails part way (a full
 * disk), the file is cut back to its last complete line. Returns new or NULL
 * with err set. */
struct bb_writer *bb_writer_open(const char *path, struct bb_err *err);
/* Writes to fd, which it takes over (closed by bb_writer_close), like a file
 * opened by path; name is used in messages (bbcap writes a temporary file
 * under the name of the file it will become). Returns new. */
struct bb_writer *bb_writer_fdopen(int fd, const char *name, struct bb_err *err);
/* Writes to an open stream; borrows fp (not closed by bb_writer_close). */
struct bb_writer *bb_writer_fopen(FILE *fp, const char *name, struct bb_err *err);
/* The same, taking fp over: bb_writer_close fcloses it and reports an error
 * of fclose (a compressing stream writes its end there). */
struct bb_writer *bb_writer_fopen_own(FILE *fp, const char *name, struct bb_err *err);
/* Writes a '#' metadata line (text without the '#'). Call before records or between. */
int bb_writer_meta(struct bb_writer *w, const char *text, struct bb_err *err);
/* Writes one message. id NULL or "" means "-". attrs may be NULL when nattrs is 0.
 * id_len, key_len or val_len 0 with a non-empty string means strlen of it.
 * BB_ERR_ARG for an empty node name, a bad op or BB_NO_TIME; BB_ERR_LIMIT for a
 * line over BB_LINE_MAX (nothing is written); BB_ERR_IO "FILE: write error: ..."
 * when the buffer flush fails (the error sticks: later calls return it). */
int bb_writer_put(struct bb_writer *w, int64_t ts_ns, enum bb_op op, const char *sender,
                  const char *receiver, const char *id, size_t id_len,
                  const struct bb_attr *attrs, size_t nattrs, struct bb_err *err);
/* Writes a record read by r (names resolved through r's node table). */
int bb_writer_put_rec(struct bb_writer *w, const struct bb_reader *r, const struct bb_rec *rec,
                      struct bb_err *err);
/* Flushes buffered lines to the file (whole lines only). */
int bb_writer_flush(struct bb_writer *w, struct bb_err *err);
/* Flushes, closes (if opened by path) and frees; reports a late write error
 * (full disk). w NULL does nothing and returns 0. */
int bb_writer_close(struct bb_writer *w, struct bb_err *err);

/* Percent-encode s[0..len) into a new string for a trace field (caller frees). */
char *bb_pct_encode(const char *s, size_t len);

/* ---- what a file is -------------------------------------------------------------- */

enum bb_fmt { BB_FMT_TEXT = 0, BB_FMT_GZIP, BB_FMT_ZSTD, BB_FMT_PCAP, BB_FMT_PCAPNG };

/* The format of a file by its first n bytes (magic numbers); BB_FMT_TEXT for
 * anything else, and when n is too short to tell. */
enum bb_fmt bb_fmt_sniff(const void *buf, size_t n);
/* "trace", "gzip", "zstd", "pcap", "pcapng". Static string. */
const char *bb_fmt_name(enum bb_fmt f);
/* The compression a trace written to path gets by its suffix: BB_FMT_GZIP for
 * ".gz", BB_FMT_ZSTD for ".zst", else BB_FMT_TEXT. */
enum bb_fmt bb_fmt_of_name(const char *path);
/* Sets err to what to do with input `name` of format f where a plain trace
 * was expected ("x.pcap is a packet capture (pcap), not a trace: run bbcap
 * -r x.pcap -w TRACE first ..."). Does nothing for BB_FMT_TEXT. */
void bb_fmt_explain(enum bb_fmt f, const char *name, struct bb_err *err);

/* ---- other outputs (dot, JSON, text through stdio) ----------------------------- */

/* Where output to fp starts: its offset in a regular file (the end when
 * opened for appending), -1 for anything else. Call before writing. */
int64_t bb_out_mark(FILE *fp);
/* After a write error on fp (a full disk): drops the bytes stdio still holds
 * and cuts a regular file back to mark, so that no torn document is left
 * behind; what was in the file before mark stays. mark -1 does nothing. */
void bb_out_cut(FILE *fp, int64_t mark);

/* ---- progress on a terminal ------------------------------------------------------ */

/* One status line on out (the caller decides: a terminal, not -q; NULL
 * shows nothing), rewritten at most 4 times a second: "prog: phase: N unit
 * of ~TOTAL (P%), RATE, ETA M:SS". New; free with bb_progress_free (which
 * ends the line). All functions accept NULL. */
struct bb_progress;
struct bb_progress *bb_progress_new(FILE *out, const char *prog);
void bb_progress_free(struct bb_progress *p);
/* Starts a phase ("pass 1 of 2") expecting about total units (0: unknown);
 * the rate counts from here. */
void bb_progress_phase(struct bb_progress *p, const char *phase, uint64_t total);
/* done units of the phase so far ("messages"). */
void bb_progress_update(struct bb_progress *p, uint64_t done, const char *unit);
/* A free-form status line instead ("12 packets, 3 calls"). */
void bb_progress_text(struct bb_progress *p, const char *text);
/* Clears the line, if one is shown. */
void bb_progress_end(struct bb_progress *p);
/* About how many lines the regular file f holds, from its size and its first
 * 64 KiB; 0 when unknown (a pipe). Reads with pread: f's position stays. */
uint64_t bb_progress_estimate_lines(FILE *f);

#endif

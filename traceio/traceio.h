/* traceio.h - trace files on disk: gzip and zstd through zlib and libzstd, input recognition */
/* SPDX-License-Identifier: MIT */
#ifndef BB_TRACEIO_H
#define BB_TRACEIO_H

#include <stdio.h>

#include "trace/trace.h"

/*
 * trace/ is libc only; this layer is what may link zlib and libzstd. A
 * compressed file is a stdio stream (fopencookie) that the trace reader and
 * writer use like any other, so they know nothing of compression. Reading
 * goes by the file's magic number, writing by the name's suffix (".gz",
 * ".zst"). See docs/trace-format.md, "Compressed traces".
 */

/* Opens path for reading. A plain file is fopen'd as it is; a gzip or zstd
 * file is decompressed as it is read (several concatenated members or frames
 * are one stream). "-" is standard input, returned as stdin (not sniffed
 * here: the trace reader names what it finds). A stream supports rewinding
 * to its start (fseek 0, SEEK_SET) and ftell, not other seeks. *fmt (may be
 * NULL) gets the file's format; a packet capture is returned too, for bbcap.
 * Returns a stream the caller fcloses (except stdin), or NULL with err set. */
FILE *bb_tio_open_read(const char *path, enum bb_fmt *fmt, struct bb_err *err);

/* A compressing stream on fd (taken over: closed by fclose) in format f
 * (BB_FMT_GZIP or BB_FMT_ZSTD). Each write the stream gets (a whole buffer
 * of trace lines) is compressed and flushed to fd at once, so what a killed
 * writer leaves decompresses up to its last flush. fclose writes the end of
 * the stream and reports its errors. Returns new, or NULL with err set. */
FILE *bb_tio_fdopen_write(int fd, enum bb_fmt f, const char *name, struct bb_err *err);

/* A trace reader on path: a plain file or "-" through bb_reader_open (a pipe
 * delivers lines as they come), a gzip or zstd file decompressed; a packet
 * capture or a compressed standard input is an error saying what to do.
 * Returns new (free with bb_reader_free) or NULL with err set. */
struct bb_reader *bb_tio_reader_open(const char *path, const struct bb_reader_opts *opts,
                                     struct bb_err *err);

/* A trace writer on path: plain through bb_writer_open, or compressed by the
 * suffix (".gz", ".zst"). "-" is standard output, never compressed. Returns
 * new (finish with bb_writer_close) or NULL with err set. */
struct bb_writer *bb_tio_writer_open(const char *path, struct bb_err *err);

/* "zlib 1.2.13, zstd 1.5.4" into buf; returns its length. */
size_t bb_tio_lib_versions(char *buf, size_t cap);

#endif

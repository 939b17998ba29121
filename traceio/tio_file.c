/* tio_file.c - trace files on disk: gzip and zstd streams through zlib and libzstd */
/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE /* fopencookie */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "traceio/traceio.h"

/*
 * One cookie stream per compressed file. gzip goes through zlib's gz*
 * functions (which read concatenated members and check each CRC); zstd
 * through ZSTD_decompressStream and ZSTD_compressStream2, frame after
 * frame. Corrupt or truncated input fails the read with EBADMSG ("Bad
 * message"), so the reader says "FILE: read error: Bad message" after the
 * lines it could take.
 */

#define TIO_BUF (1u << 17)

struct tio {
	enum bb_fmt fmt;
	int fd;
	int64_t pos;            /* uncompressed bytes read or written */
	gzFile gz;
	ZSTD_DCtx *zd;
	ZSTD_CCtx *zc;
	unsigned char *buf;     /* zstd: compressed input, or output */
	size_t len, off;        /* zstd input: bytes held, bytes used */
	int eof;                /* zstd input: the file has ended */
	int frame_open;         /* zstd input: inside a frame */
};

static void tio_free(struct tio *t)
{
	ZSTD_freeDCtx(t->zd);
	ZSTD_freeCCtx(t->zc);
	free(t->buf);
	free(t);
}

/* gz* errors: Z_ERRNO leaves errno; anything else is bad data. */
static int gz_errno(gzFile gz)
{
	int zerr = Z_OK;
	gzerror(gz, &zerr);
	return zerr == Z_ERRNO && errno ? errno : EBADMSG;
}

static ssize_t rd_gz(void *cookie, char *buf, size_t size)
{
	struct tio *t = cookie;
	unsigned n = size > (1u << 30) ? 1u << 30 : (unsigned)size;
	int k = gzread(t->gz, buf, n);
	int zerr = Z_OK;
	if (k == 0)
		gzerror(t->gz, &zerr); /* Z_BUF_ERROR: the file ends inside a member */
	if (k < 0 || (zerr != Z_OK && zerr != Z_STREAM_END)) {
		errno = gz_errno(t->gz);
		return -1;
	}
	t->pos += k;
	return k;
}

static int refill(struct tio *t)
{
	for (;;) {
		ssize_t k = read(t->fd, t->buf, TIO_BUF);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		t->len = (size_t)k;
		t->off = 0;
		t->eof = k == 0;
		return 0;
	}
}

static ssize_t rd_zstd(void *cookie, char *buf, size_t size)
{
	struct tio *t = cookie;
	ZSTD_outBuffer out = {buf, size, 0};
	for (;;) {
		if (t->off == t->len && !t->eof && refill(t) < 0)
			return -1;
		ZSTD_inBuffer in = {t->buf, t->len, t->off};
		size_t r = ZSTD_decompressStream(t->zd, &out, &in);
		int moved = in.pos > t->off || out.pos;
		t->off = in.pos;
		if (ZSTD_isError(r)) {
			errno = EBADMSG;
			return -1;
		}
		/* 0: a frame has ended; otherwise a frame is under way once it
		 * took input (with none, r is the size of a next header) */
		if (r == 0)
			t->frame_open = 0;
		else if (moved)
			t->frame_open = 1;
		if (out.pos)
			break;
		if (t->off == t->len && t->eof) {
			if (t->frame_open) { /* truncated */
				errno = EBADMSG;
				return -1;
			}
			break;
		}
	}
	t->pos += (int64_t)out.pos;
	return (ssize_t)out.pos;
}

/* ftell (0, SEEK_CUR) and rewinding to the start (0, SEEK_SET) only. */
static int seek_rd(void *cookie, off64_t *off, int whence)
{
	struct tio *t = cookie;
	if (whence == SEEK_CUR && *off == 0) {
		*off = t->pos;
		return 0;
	}
	if (whence != SEEK_SET || *off != 0) {
		errno = EINVAL;
		return -1;
	}
	if (t->gz) {
		if (gzrewind(t->gz) < 0) {
			errno = gz_errno(t->gz);
			return -1;
		}
	} else {
		if (lseek(t->fd, 0, SEEK_SET) < 0)
			return -1;
		ZSTD_DCtx_reset(t->zd, ZSTD_reset_session_only);
		t->len = t->off = 0;
		t->eof = t->frame_open = 0;
	}
	t->pos = 0;
	return 0;
}

static int seek_wr(void *cookie, off64_t *off, int whence)
{
	struct tio *t = cookie;
	if (whence == SEEK_CUR && *off == 0) {
		*off = t->pos;
		return 0;
	}
	errno = EINVAL;
	return -1;
}

static int write_all(int fd, const unsigned char *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			if (k == 0)
				errno = EIO;
			return -1;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static ssize_t wr_gz(void *cookie, const char *buf, size_t size)
{
	struct tio *t = cookie;
	size_t done = 0;
	while (done < size) {
		unsigned n = size - done > (1u << 30) ? 1u << 30 : (unsigned)(size - done);
		int k = gzwrite(t->gz, buf + done, n);
		if (k <= 0) {
			errno = gz_errno(t->gz);
			return -1;
		}
		done += (size_t)k;
	}
	/* A sync flush per buffer: what is on disk always decompresses. */
	if (gzflush(t->gz, Z_SYNC_FLUSH) != Z_OK) {
		errno = gz_errno(t->gz);
		return -1;
	}
	t->pos += (int64_t)size;
	return (ssize_t)size;
}

/* Compresses in (all of it) with directive d, writing every output block. */
static int zstd_push(struct tio *t, ZSTD_inBuffer *in, ZSTD_EndDirective d)
{
	for (;;) {
		ZSTD_outBuffer out = {t->buf, TIO_BUF, 0};
		size_t left = ZSTD_compressStream2(t->zc, &out, in, d);
		if (ZSTD_isError(left)) {
			errno = EINVAL;
			return -1;
		}
		if (write_all(t->fd, t->buf, out.pos) < 0)
			return -1;
		if (left == 0 && in->pos == in->size)
			return 0;
	}
}

static ssize_t wr_zstd(void *cookie, const char *buf, size_t size)
{
	struct tio *t = cookie;
	ZSTD_inBuffer in = {buf, size, 0};
	if (zstd_push(t, &in, ZSTD_e_flush) < 0)
		return -1;
	t->pos += (int64_t)size;
	return (ssize_t)size;
}

static int close_gz(void *cookie)
{
	struct tio *t = cookie;
	int rc = gzclose(t->gz); /* closes fd */
	tio_free(t);
	if (rc != Z_OK) {
		errno = rc == Z_ERRNO && errno ? errno : EIO;
		return -1;
	}
	return 0;
}

static int close_zstd(void *cookie)
{
	struct tio *t = cookie;
	int rc = 0, e = 0;
	if (t->zc) {
		ZSTD_inBuffer in = {NULL, 0, 0};
		if (zstd_push(t, &in, ZSTD_e_end) < 0) {
			rc = -1;
			e = errno;
		}
	}
	if (close(t->fd) < 0 && !rc) {
		rc = -1;
		e = errno;
	}
	tio_free(t);
	errno = e;
	return rc;
}

/* A cookie stream for fd in format f; "r" or "w". Takes fd over (closed on
 * failure too). */
static FILE *tio_open(int fd, enum bb_fmt f, int wr, const char *name, struct bb_err *err)
{
	struct tio *t = calloc(1, sizeof *t);
	if (!t)
		abort();
	t->fmt = f;
	t->fd = fd;
	cookie_io_functions_t io = {0};
	if (f == BB_FMT_GZIP) {
		t->gz = gzdopen(fd, wr ? "wb6" : "rb");
		if (!t->gz) {
			bb_err_set(err, "%s: cannot start gzip: out of memory", name);
			close(fd);
			tio_free(t);
			return NULL;
		}
		gzbuffer(t->gz, TIO_BUF);
		io.read = wr ? NULL : rd_gz;
		io.write = wr ? wr_gz : NULL;
		io.close = close_gz;
	} else {
		t->buf = malloc(TIO_BUF);
		if (!t->buf)
			abort();
		if (wr)
			t->zc = ZSTD_createCCtx();
		else
			t->zd = ZSTD_createDCtx();
		if (!t->zc && !t->zd) {
			bb_err_set(err, "%s: cannot start zstd: out of memory", name);
			close(fd);
			tio_free(t);
			return NULL;
		}
		io.read = wr ? NULL : rd_zstd;
		io.write = wr ? wr_zstd : NULL;
		io.close = close_zstd;
	}
	io.seek = wr ? seek_wr : seek_rd;
	FILE *fp = fopencookie(t, wr ? "w" : "r", io);
	if (!fp) {
		bb_err_set(err, "%s: %s", name, strerror(errno));
		io.close(t);
		return NULL;
	}
	return fp;
}

FILE *bb_tio_open_read(const char *path, enum bb_fmt *fmt, struct bb_err *err)
{
	enum bb_fmt f = BB_FMT_TEXT;
	if (fmt)
		*fmt = f;
	if (!strcmp(path, "-"))
		return stdin;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		bb_err_set(err, "%s: cannot open: %s", path, strerror(errno));
		return NULL;
	}
	unsigned char magic[4];
	ssize_t k = pread(fd, magic, sizeof magic, 0);
	if (k > 0)
		f = bb_fmt_sniff(magic, (size_t)k);
	if (fmt)
		*fmt = f;
	if (f == BB_FMT_GZIP || f == BB_FMT_ZSTD)
		return tio_open(fd, f, 0, path, err);
	FILE *fp = fdopen(fd, "rb");
	if (!fp) {
		bb_err_set(err, "%s: cannot open: %s", path, strerror(errno));
		close(fd);
	}
	return fp;
}

FILE *bb_tio_fdopen_write(int fd, enum bb_fmt f, const char *name, struct bb_err *err)
{
	if (f != BB_FMT_GZIP && f != BB_FMT_ZSTD) {
		bb_err_set(err, "%s: not a compressed format", name);
		close(fd);
		return NULL;
	}
	return tio_open(fd, f, 1, name, err);
}

struct bb_reader *bb_tio_reader_open(const char *path, const struct bb_reader_opts *opts,
                                     struct bb_err *err)
{
	if (!strcmp(path, "-"))
		return bb_reader_open(path, opts, err);
	enum bb_fmt f;
	FILE *fp = bb_tio_open_read(path, &f, err);
	if (!fp)
		return NULL;
	if (f != BB_FMT_GZIP && f != BB_FMT_ZSTD) {
		/* plain (or a capture, which the reader names): read by fd */
		fclose(fp);
		return bb_reader_open(path, opts, err);
	}
	return bb_reader_fopen_own(fp, path, opts, err);
}

struct bb_writer *bb_tio_writer_open(const char *path, struct bb_err *err)
{
	enum bb_fmt f = strcmp(path, "-") ? bb_fmt_of_name(path) : BB_FMT_TEXT;
	if (f == BB_FMT_TEXT)
		return bb_writer_open(path, err);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0) {
		bb_err_set(err, "%s: cannot open for writing: %s", path, strerror(errno));
		return NULL;
	}
	FILE *fp = bb_tio_fdopen_write(fd, f, path, err);
	return fp ? bb_writer_fopen_own(fp, path, err) : NULL;
}

size_t bb_tio_lib_versions(char *buf, size_t cap)
{
	int n = snprintf(buf, cap, "zlib %s, zstd %s", zlibVersion(), ZSTD_versionString());
	return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap ? cap - 1 : 0;
}

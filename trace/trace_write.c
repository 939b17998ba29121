/* trace_write.c - canonical v1 trace writer, buffered, with percent-encoding */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/trace.h"
#include "trace/trace_int.h"

/*
 * Lines are formatted straight into one large buffer and written only as
 * whole lines (the buffer is flushed before a line that would not fit), so a
 * reader of a half-written trace never sees a torn line. A file opened by
 * path, and standard output, are written with write(2) directly; a borrowed
 * stream through fwrite and fflush. When a write to a regular file fails
 * part way (the disk fills), the file is cut back to the last complete line
 * written, so it still reads back. The first error sticks: every later call
 * returns it again and close reports it.
 */

#define WBUF_CAP (1u << 20)

struct bb_writer {
	char *name;
	FILE *fp;   /* borrowed stream, or NULL */
	int fd;     /* our file or standard output, or -1 */
	int own_fd; /* fd is ours to close */
	int own_fp; /* fp is ours to fclose */
	char *buf;
	size_t len, cap;
	int failed;
	char failmsg[sizeof(((struct bb_err *)0)->msg)];
	/* The seconds of the last record's time, formatted through the dot in
	 * ts_str (ts_len 0: none yet), reused while they do not change. */
	int64_t ts_sec;
	size_t ts_len;
	char ts_str[BB_TIME_BUFSZ];
};

/* "CALL", "RET", "MSG"; "?" for a value that is not an op. Static string. */
const char *bb_op_name(enum bb_op op)
{
	switch (op) {
	case BB_CALL: return "CALL";
	case BB_RET: return "RET";
	case BB_MSG: return "MSG";
	}
	return "?";
}

/* The bytes a trace field must not hold raw: the separators (space, tab and
 * every other byte up to 0x20), DEL, and '%' itself. UTF-8 passes through. */
static inline int must_encode(unsigned char c)
{
	return c <= 0x20 || c == '%' || c == 0x7f;
}

/* Nonzero when one of the eight bytes of v must be encoded: a byte below
 * 0x21, '%' or DEL. Exact for the word as a whole (a borrow can mark a byte
 * only above one that really matches). */
static inline uint64_t must_encode8(uint64_t v)
{
	const uint64_t ones = UINT64_C(0x0101010101010101), high = ones * 0x80;
	uint64_t pct = v ^ (ones * '%'), del = v ^ (ones * 0x7f);

	return ((v - ones * 0x21) & ~v & high) | ((pct - ones) & ~pct & high) |
	       ((del - ones) & ~del & high);
}

static inline char *encode(char *o, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i = 0;

	/* Whole words are copied when none of their bytes needs encoding, which
	 * is most of every field; the caller reserved 3 * n bytes at o. Fields
	 * of 4 to 7 bytes are tested as two overlapping 4-byte words. */
	if (n >= 4 && n < 8) {
		uint32_t a, b;
		memcpy(&a, s, 4);
		memcpy(&b, s + n - 4, 4);
		if (!must_encode8((uint64_t)a << 32 | b)) {
			memcpy(o, &a, 4);
			memcpy(o + n - 4, &b, 4);
			return o + n;
		}
	}
	while (i < n) {
		size_t end = n;
		if (n - i >= 8) {
			uint64_t v;
			memcpy(&v, s + i, 8);
			if (!must_encode8(v)) {
				memcpy(o, &v, 8);
				o += 8;
				i += 8;
				continue;
			}
			end = i + 8;
		} else if (n >= 8) {
			/* The last word, overlapping bytes already written: if it
			 * is clean, they were copied as they are. */
			uint64_t v;
			memcpy(&v, s + n - 8, 8);
			if (!must_encode8(v)) {
				memcpy(o - (8 - (n - i)), &v, 8);
				return o + (n - i);
			}
		}
		for (; i < end; i++) {
			unsigned char c = (unsigned char)s[i];
			if (must_encode(c)) {
				o[0] = '%';
				o[1] = hex[c >> 4];
				o[2] = hex[c & 15];
				o += 3;
			} else {
				*o++ = (char)c;
			}
		}
	}
	return o;
}

/* Percent-encodes s[0..len) as the writer does a field. Returns new, caller frees. */
char *bb_pct_encode(const char *s, size_t len)
{
	char *out = bb_xmalloc(3 * len + 1);

	*encode(out, s, len) = '\0';
	return out;
}

/* bb_time_format, with the seconds kept from the last record: records come
 * nearly in time order, so most share them and only the 9 decimals change. */
static size_t put_time(struct bb_writer *w, int64_t ns, char *p)
{
	int64_t sec = ns / BB_NS_PER_S;
	size_t n;

	if (ns < 0)
		return bb_time_format(ns, p);
	if (w->ts_len && sec == w->ts_sec) {
		memcpy(p, w->ts_str, w->ts_len);
		bb_time_frac9((uint32_t)(ns % BB_NS_PER_S), p + w->ts_len);
		return w->ts_len + 9;
	}
	n = bb_time_format(ns, p);
	w->ts_len = n - 9;
	w->ts_sec = sec;
	memcpy(w->ts_str, p, w->ts_len);
	return n;
}

static int wfail(struct bb_writer *w, struct bb_err *err, int e)
{
	w->failed = BB_ERR_IO;
	snprintf(w->failmsg, sizeof w->failmsg, "%s: write error: %s", w->name, strerror(e));
	bb_err_set(err, "%s", w->failmsg);
	return BB_ERR_IO;
}

static int raw_write(struct bb_writer *w, const char *p, size_t n, struct bb_err *err)
{
	if (w->fp) {
		errno = 0;
		if (fwrite(p, 1, n, w->fp) != n)
			return wfail(w, err, errno ? errno : EIO);
		return 0;
	}
	/* Where this buffer of whole lines starts, in a regular file: -1 otherwise. */
	struct stat sb;
	off_t start = -1;
	int append = 0;
	if (fstat(w->fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
		int fl = fcntl(w->fd, F_GETFL);
		append = fl >= 0 && (fl & O_APPEND);
		start = append ? sb.st_size : lseek(w->fd, 0, SEEK_CUR);
	}
	const char *p0 = p;
	while (n) {
		ssize_t k = write(w->fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			int e = k < 0 ? errno : EIO;
			/* Cut the torn last line off: the file keeps every complete line
			 * that fitted, the buffer starting with a whole line. */
			if (start >= 0) {
				size_t keep = (size_t)(p - p0);
				while (keep && p0[keep - 1] != '\n')
					keep--;
				off_t cut = start + (off_t)keep;
				if (ftruncate(w->fd, cut) == 0 && !append)
					(void)lseek(w->fd, cut, SEEK_SET);
			}
			return wfail(w, err, e);
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

static int flush_buf(struct bb_writer *w, struct bb_err *err)
{
	int rc = 0;

	if (w->len)
		rc = raw_write(w, w->buf, w->len, err);
	w->len = 0;
	return rc;
}

static int check(struct bb_writer *w, struct bb_err *err)
{
	if (w->failed)
		bb_err_set(err, "%s", w->failmsg);
	return w->failed;
}

/* Room for need more bytes in the buffer, flushing whole lines first. */
static int reserve(struct bb_writer *w, size_t need, struct bb_err *err)
{
	if (w->len + need <= w->cap)
		return 0;
	if (flush_buf(w, err))
		return BB_ERR_IO;
	if (need > w->cap) {
		w->cap = need;
		w->buf = bb_xrealloc(w->buf, w->cap);
	}
	return 0;
}

static struct bb_writer *new_writer(const char *name, FILE *fp, int fd, int own_fd)
{
	struct bb_writer *w = bb_xcalloc(1, sizeof *w);

	w->name = bb_xstrndup(name, strlen(name));
	w->fp = fp;
	w->fd = fd;
	w->own_fd = own_fd;
	w->cap = WBUF_CAP;
	w->buf = bb_xmalloc(w->cap);
	memcpy(w->buf, "#bbtrace 1\n", 11);
	w->len = 11;
	return w;
}

/* Creates or truncates path ("-" is standard output, named "<stdout>").
 * Returns new (finish with bb_writer_close) or NULL with err set. */
struct bb_writer *bb_writer_open(const char *path, struct bb_err *err)
{
	int fd;

	if (!strcmp(path, "-")) {
		/* write(2) on descriptor 1, after whatever stdio holds for it */
		fflush(stdout);
		return new_writer("<stdout>", NULL, STDOUT_FILENO, 0);
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0) {
		bb_err_set(err, "%s: cannot open for writing: %s", path, strerror(errno));
		return NULL;
	}
	return new_writer(path, NULL, fd, 1);
}

/* Takes fd over (closed by bb_writer_close); name is copied. */
struct bb_writer *bb_writer_fdopen(int fd, const char *name, struct bb_err *err)
{
	(void)err;
	return new_writer(name ? name : "<fd>", NULL, fd, 1);
}

/* Borrows fp (flushed, never closed, by bb_writer_close); name is copied. */
struct bb_writer *bb_writer_fopen(FILE *fp, const char *name, struct bb_err *err)
{
	(void)err;
	return new_writer(name ? name : "<stream>", fp, -1, 0);
}

/* Takes fp over: fclose'd by bb_writer_close; name is copied. */
struct bb_writer *bb_writer_fopen_own(FILE *fp, const char *name, struct bb_err *err)
{
	struct bb_writer *w = bb_writer_fopen(fp, name, err);
	w->own_fp = 1;
	return w;
}

/* Writes "#text\n". text must not hold a line break, nor be a "bbtrace"
 * version line (the writer writes that one itself): BB_ERR_ARG. */
int bb_writer_meta(struct bb_writer *w, const char *text, struct bb_err *err)
{
	size_t n = strlen(text);

	if (check(w, err))
		return w->failed;
	if (memchr(text, '\n', n) || memchr(text, '\r', n)) {
		bb_err_set(err, "%s: metadata text contains a line break", w->name);
		return BB_ERR_ARG;
	}
	if (n >= 7 && !memcmp(text, "bbtrace", 7) && (n == 7 || text[7] == ' ' || text[7] == '\t')) {
		bb_err_set(err, "%s: metadata \"bbtrace\" is the version line, written by the writer",
		           w->name);
		return BB_ERR_ARG;
	}
	if (reserve(w, n + 2, err))
		return BB_ERR_IO;
	w->buf[w->len++] = '#';
	memcpy(w->buf + w->len, text, n);
	w->len += n;
	w->buf[w->len++] = '\n';
	return 0;
}

/* Writes one line. sender and receiver are C strings, non-empty; id[0..id_len)
 * (id_len 0 means strlen(id)); id NULL, "" or "-" writes "-" (none). For each
 * attribute a key_len or val_len of 0 means strlen of key or val (val NULL is
 * ""). Node names, id and values are percent-encoded; keys are written as
 * given, so they must be non-empty and hold no '=', white space or control
 * bytes. A line that would be longer than BB_LINE_MAX is BB_ERR_LIMIT (the
 * output always re-reads); an empty name, a bad op or BB_NO_TIME is
 * BB_ERR_ARG. Write errors return BB_ERR_IO "FILE: write error: ...". */
int bb_writer_put(struct bb_writer *w, int64_t ts_ns, enum bb_op op, const char *sender,
                  const char *receiver, const char *id, size_t id_len,
                  const struct bb_attr *attrs, size_t nattrs, struct bb_err *err)
{
	size_t sl, rl, need;
	char *p, *start;

	if (check(w, err))
		return w->failed;
	if (op != BB_CALL && op != BB_RET && op != BB_MSG) {
		bb_err_set(err, "%s: bad op %d", w->name, (int)op);
		return BB_ERR_ARG;
	}
	if (ts_ns == BB_NO_TIME) {
		bb_err_set(err, "%s: record without a timestamp", w->name);
		return BB_ERR_ARG;
	}
	if (!sender || !*sender || !receiver || !*receiver) {
		bb_err_set(err, "%s: empty %s name", w->name, !sender || !*sender ? "sender" : "receiver");
		return BB_ERR_ARG;
	}
	if (id && !id_len)
		id_len = strlen(id);
	if (!id || !id_len || (id_len == 1 && id[0] == '-')) {
		id = "-";
		id_len = 1;
	}
	sl = strlen(sender);
	rl = strlen(receiver);
	need = BB_TIME_BUFSZ + 16 + 3 * (sl + rl + id_len);
	for (size_t i = 0; i < nattrs; i++) {
		size_t kl = attrs[i].key_len ? attrs[i].key_len : strlen(attrs[i].key);
		size_t vl = attrs[i].val_len || !attrs[i].val ? attrs[i].val_len : strlen(attrs[i].val);
		need += kl + 2 + 3 * vl;
	}
	if (reserve(w, need, err))
		return BB_ERR_IO;
	start = p = w->buf + w->len;
	p += put_time(w, ts_ns, p);
	*p++ = '\t';
	memcpy(p, bb_op_name(op), op == BB_CALL ? 4 : 3);
	p += op == BB_CALL ? 4 : 3;
	*p++ = '\t';
	p = encode(p, sender, sl);
	*p++ = '\t';
	p = encode(p, receiver, rl);
	*p++ = '\t';
	p = encode(p, id, id_len);
	for (size_t i = 0; i < nattrs; i++) {
		const struct bb_attr *a = &attrs[i];
		size_t kl = a->key_len ? a->key_len : strlen(a->key);
		size_t vl = a->val_len || !a->val ? a->val_len : strlen(a->val);
		*p++ = '\t';
		memcpy(p, a->key, kl);
		p += kl;
		*p++ = '=';
		if (vl)
			p = encode(p, a->val, vl);
	}
	if ((size_t)(p - start) > BB_LINE_MAX) {
		bb_err_set(err, "%s: record too long (%zu bytes, the limit is %u)", w->name,
		           (size_t)(p - start), BB_LINE_MAX);
		return BB_ERR_LIMIT;
	}
	*p++ = '\n';
	w->len += (size_t)(p - start);
	return 0;
}

/* bb_writer_put of a record read by r, names resolved through r's tables. */
int bb_writer_put_rec(struct bb_writer *w, const struct bb_reader *r, const struct bb_rec *rec,
                      struct bb_err *err)
{
	return bb_writer_put(w, rec->ts_ns, rec->op, bb_reader_node(r, rec->sender),
	                     bb_reader_node(r, rec->receiver), rec->id_str, rec->id_len,
	                     rec->attrs, rec->nattrs, err);
}

/* Writes every buffered line out (and fflushes a borrowed stream). */
int bb_writer_flush(struct bb_writer *w, struct bb_err *err)
{
	if (check(w, err))
		return w->failed;
	if (flush_buf(w, err))
		return BB_ERR_IO;
	if (w->fp && fflush(w->fp))
		return wfail(w, err, errno);
	return 0;
}

/* Flushes, closes a file it opened, frees. Returns 0, or the first write
 * error (also one only close(2) reports). w NULL returns 0. */
int bb_writer_close(struct bb_writer *w, struct bb_err *err)
{
	int rc;

	if (!w)
		return 0;
	rc = bb_writer_flush(w, err);
	if (w->fd >= 0 && w->own_fd) {
		if (close(w->fd) && !rc)
			rc = wfail(w, err, errno);
	}
	if (w->fp && w->own_fp) {
		errno = 0;
		if (fclose(w->fp) && !rc)
			rc = wfail(w, err, errno ? errno : EIO);
	}
	free(w->buf);
	free(w->name);
	free(w);
	return rc;
}

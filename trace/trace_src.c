/* trace_src.c - a trace read in several passes: mapped file, stream or buffer */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "trace/trace.h"
#include "trace/trace_int.h"

struct bb_tsrc {
	const char *name;
	FILE *fp;          /* the stream, or NULL */
	const char *buf;   /* the map or the caller's buffer, or NULL */
	size_t len;
	void *map;         /* ours to munmap, or NULL */
	size_t map_len;
	unsigned readers;  /* readers made so far */
};

/* A read-only map of fp's regular file when fp is at its start: readers then
 * parse it in place, without a 2 MiB input buffer. */
static void map_file(struct bb_tsrc *s)
{
	struct stat sb;
	FILE *fp = s->fp;
	if (!fp || ftell(fp) != 0 || fstat(fileno(fp), &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    sb.st_size <= 0 || (uint64_t)sb.st_size > SIZE_MAX / 2)
		return;
	void *p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fileno(fp), 0);
	if (p == MAP_FAILED)
		return;
#ifdef MADV_SEQUENTIAL
	madvise(p, (size_t)sb.st_size, MADV_SEQUENTIAL);
#endif
	s->map = p;
	s->map_len = (size_t)sb.st_size;
	s->buf = p;
	s->len = s->map_len;
}

struct bb_tsrc *bb_tsrc_stream(FILE *fp, const char *name)
{
	struct bb_tsrc *s = bb_xcalloc(1, sizeof(*s));
	s->name = name ? name : "<stream>";
	s->fp = fp;
	map_file(s);
	return s;
}

struct bb_tsrc *bb_tsrc_mem(const char *buf, size_t len, const char *name)
{
	struct bb_tsrc *s = bb_xcalloc(1, sizeof(*s));
	s->name = name ? name : "<memory>";
	s->buf = buf ? buf : "";
	s->len = buf ? len : 0;
	return s;
}

void bb_tsrc_unmap(struct bb_tsrc *s)
{
	if (!s->map)
		return;
	munmap(s->map, s->map_len);
	s->map = NULL;
	s->buf = NULL;
	s->len = 0;
}

void bb_tsrc_free(struct bb_tsrc *s)
{
	if (!s)
		return;
	bb_tsrc_unmap(s);
	free(s);
}

int bb_tsrc_in_memory(const struct bb_tsrc *s, size_t *len)
{
	*len = s->buf ? s->len : 0;
	return s->buf != NULL;
}

struct bb_reader *bb_tsrc_reader(struct bb_tsrc *s, const struct bb_reader_opts *opts,
                                 struct bb_err *err)
{
	struct bb_reader *r;
	if (s->buf) {
		r = bb_reader_mem(s->buf, s->len, s->name, opts, err);
		if (r && s->map)
			bb_reader_release_behind(r);
	} else {
		if (s->readers && fseek(s->fp, 0, SEEK_SET) != 0) {
			bb_err_set(err, "%s: cannot rewind for the second pass: %s", s->name,
			           strerror(errno));
			return NULL;
		}
		r = bb_reader_fopen(s->fp, s->name, opts, err);
	}
	s->readers++;
	return r;
}

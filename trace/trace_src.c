/* trace_src.c - a trace read in several passes: file read or mapped, stream or buffer */
/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/trace.h"
#include "trace/trace_int.h"

struct bb_tsrc {
	const char *name;
	FILE *fp;          /* the stream, or NULL */
	const char *buf;   /* the map or the caller's buffer, or NULL */
	size_t len;
	void *map;         /* ours to munmap, or NULL */
	size_t map_len;
	int anon;          /* map holds the file's bytes read, not the file */
	unsigned readers;  /* readers made so far */
};

/* Whether the kernel backs anonymous memory with transparent huge pages
 * when asked (madvise or always), from sysfs: without them the read below
 * would take a page fault per 4 KiB, where the file's map takes one per 16
 * (the kernel's fault-around). */
static int huge_pages_usable(void)
{
	int fd = open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char line[128];
	ssize_t k = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (k <= 0)
		return 0;
	line[k] = '\0';
	return strstr(line, "[always]") != NULL || strstr(line, "[madvise]") != NULL;
}

/* A file of READ_MIN to read_max bytes is read into anonymous memory in
 * huge pages, instead of mapped: each 4 KiB page a map puts in the page
 * tables costs, and on a virtual machine that is most of what reading the
 * file costs (table1-short, 1.16 MB: 283 pages mapped by 19 faults took
 * 0.43 ms on the project's machine; read into one fresh huge page, 0.15 ms).
 * Below READ_MIN the huge page's zeroing would cost more than the map;
 * above read_max (BB_TSRC_READ_MAX in bbnest) the file stays mapped, so
 * that readers hand back the pages behind them (bb_reader_release_behind)
 * and a big trace never sits in memory twice. Neither is malloc's heap.
 * Returns 0, or -1 with nothing changed. */
#define READ_MIN ((size_t)512 << 10)

static int read_file(struct bb_tsrc *s, int fd, size_t n, size_t read_max)
{
	if (n < READ_MIN || n > read_max || !huge_pages_usable())
		return -1;
	size_t len = (n + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1), room = len + HUGE_PAGE;
	char *m = mmap(NULL, room, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	/* [p, p + len) on huge-page boundaries; the rest of the room goes back */
	char *p = (char *)(((uintptr_t)m + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1));
	if (p > m)
		munmap(m, (size_t)(p - m));
	if (p + len < m + room)
		munmap(p + len, (size_t)(m + room - (p + len)));
#ifdef MADV_HUGEPAGE
	(void)madvise(p, len, MADV_HUGEPAGE);
#endif
	size_t got = 0;
	while (got < n) {
		ssize_t k = pread(fd, p + got, n - got, (off_t)got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			munmap(p, len);
			return -1;
		}
		if (k == 0)
			break; /* shorter than fstat said: what is there */
		got += (size_t)k;
	}
	s->map = p;
	s->map_len = len;
	s->anon = 1;
	s->buf = p;
	s->len = got;
	return 0;
}

/* fp's regular file, when fp is at its start, read (read_file) or mapped
 * read-only: readers then parse it in place, without a 2 MiB input buffer. */
static void map_file(struct bb_tsrc *s, size_t read_max)
{
	struct stat sb;
	FILE *fp = s->fp;
	if (!fp || ftell(fp) != 0 || fstat(fileno(fp), &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    sb.st_size <= 0 || (uint64_t)sb.st_size > SIZE_MAX / 2)
		return;
	if (read_file(s, fileno(fp), (size_t)sb.st_size, read_max) == 0)
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

struct bb_tsrc *bb_tsrc_stream(FILE *fp, const char *name, size_t read_max)
{
	struct bb_tsrc *s = bb_xcalloc(1, sizeof(*s));
	s->name = name ? name : "<stream>";
	s->fp = fp;
	map_file(s, read_max);
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
	s->anon = 0;
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
		if (r && s->map && !s->anon)
			bb_reader_release_behind(r); /* the file's pages: read again if touched */
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

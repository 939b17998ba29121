/* trace_out.c - cutting a stdio output back after a write error (full disk) */
/* SPDX-License-Identifier: MIT */
#include <fcntl.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <sys/stat.h>
#include <unistd.h>

#include "trace/trace.h"

/*
 * The trace writer keeps a trace whole by itself (trace_write.c). The other
 * outputs (dot, JSON, text) are documents written through stdio: one cut
 * anywhere is useless, so after a write error they are cut back to where the
 * command started writing, and the caller reports the error.
 */

int64_t bb_out_mark(FILE *fp)
{
	struct stat sb;
	int fd = fileno(fp);
	fflush(fp); /* what was written before is not ours to cut */
	if (fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
		return -1;
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0 && (fl & O_APPEND))
		return (int64_t)sb.st_size;
	off_t at = lseek(fd, 0, SEEK_CUR);
	return at < 0 ? -1 : (int64_t)at;
}

void bb_out_cut(FILE *fp, int64_t mark)
{
	if (mark < 0)
		return;
	/* what stdio holds would otherwise be written later, past the cut */
	__fpurge(fp);
	clearerr(fp);
	int fd = fileno(fp);
	if (fd < 0 || ftruncate(fd, (off_t)mark) != 0)
		return;
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0 && !(fl & O_APPEND))
		(void)lseek(fd, (off_t)mark, SEEK_SET);
}

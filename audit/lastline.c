/* lastline.c - the last line of an audit file, read backwards from its end a block at a time:
 * what a chained writer links a new line to (writer.c), and what a rotation's anchor names
 * (anchor.c). Portable: part of the cross builds' core. */
#include "audit/chain_internal.h"

#include <errno.h>
#include <unistd.h>

int audit_read_last_line(int fd, off_t size, struct wd_buf *out)
{
	char block[4096];
	off_t end = size, start;
	ssize_t r;

	wd_buf_reset(out);
	if (fd < 0)
		return -EBADF;
	if (size == 0)
		return 0;
	if (pread(fd, block, 1, size - 1) != 1)
		return -EIO;
	if (block[0] == '\n')
		end = size - 1;
	/* look back for the newline before the line, a block at a time */
	for (start = end; start > 0;) {
		off_t from = start > (off_t)sizeof(block) ? start - (off_t)sizeof(block) : 0;
		size_t want = (size_t)(start - from);
		char *nl = NULL;

		if (end - from > (off_t)AUDIT_LINE_MAX)
			return -E2BIG;
		r = pread(fd, block, want, from);
		if (r != (ssize_t)want)
			return r < 0 ? -errno : -EIO;
		for (size_t i = want; i > 0 && !nl; i--) /* memrchr() is not on macOS */
			if (block[i - 1] == '\n')
				nl = block + i - 1;
		if (nl) {
			start = from + (nl - block) + 1;
			break;
		}
		start = from;
	}
	if (wd_buf_append(out, NULL, 0) < 0)
		return -ENOMEM;
	for (off_t at = start; at < end;) {
		size_t want =
		    (size_t)(end - at) < sizeof(block) ? (size_t)(end - at) : sizeof(block);

		r = pread(fd, block, want, at);
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		if (wd_buf_append(out, block, (size_t)r) < 0)
			return -ENOMEM;
		at += r;
	}
	return 0;
}

/* err.c - struct wd_err: error values that carry a message and a position; errno names. */
#include "common/common.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

const char *wd_errno_name(int e)
{
#ifdef __GLIBC__
	return strerrorname_np(e);
#else
	/* the names the control protocol and the logs say; others have none here */
	static const struct {
		int e;
		const char *name;
	} names[] = {
	    {EPERM, "EPERM"},
	    {ENOENT, "ENOENT"},
	    {ESRCH, "ESRCH"},
	    {EINTR, "EINTR"},
	    {EIO, "EIO"},
	    {E2BIG, "E2BIG"},
	    {EBADF, "EBADF"},
	    {EAGAIN, "EAGAIN"},
	    {ENOMEM, "ENOMEM"},
	    {EACCES, "EACCES"},
	    {EFAULT, "EFAULT"},
	    {EBUSY, "EBUSY"},
	    {EEXIST, "EEXIST"},
	    {ENODEV, "ENODEV"},
	    {ENOTDIR, "ENOTDIR"},
	    {EISDIR, "EISDIR"},
	    {EINVAL, "EINVAL"},
	    {ENFILE, "ENFILE"},
	    {EMFILE, "EMFILE"},
	    {ENOSPC, "ENOSPC"},
	    {EPIPE, "EPIPE"},
	    {ERANGE, "ERANGE"},
	    {ENAMETOOLONG, "ENAMETOOLONG"},
	    {ENOSYS, "ENOSYS"},
	    {ENOTSUP, "ENOTSUP"},
	    {EPROTO, "EPROTO"},
	    {EBADMSG, "EBADMSG"},
#ifdef EUSERS /* not in Windows' errno.h */
	    {EUSERS, "EUSERS"},
#endif
	    {ECONNREFUSED, "ECONNREFUSED"},
	    {ECONNRESET, "ECONNRESET"},
	    {ETIMEDOUT, "ETIMEDOUT"},
	    {EADDRINUSE, "EADDRINUSE"},
	    {EOVERFLOW, "EOVERFLOW"},
	    {ENOTCONN, "ENOTCONN"},
	    {EALREADY, "EALREADY"},
	    {EINPROGRESS, "EINPROGRESS"},
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].e == e)
			return names[i].name;
	return NULL;
#endif
}

void wd_err_clear(struct wd_err *e)
{
	if (!e)
		return;
	memset(e, 0, sizeof(*e));
}

int wd_err_set(struct wd_err *e, int code, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return code;
	e->code = code;
	e->file[0] = '\0';
	e->line = 0;
	e->col = 0;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return code;
}

int wd_err_setpos(struct wd_err *e, int code, const char *file, int line, int col, const char *fmt,
		  ...)
{
	va_list ap;

	if (!e)
		return code;
	e->code = code;
	snprintf(e->file, sizeof(e->file), "%s", file ? file : "");
	e->line = line;
	e->col = col;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return code;
}

void wd_err_prefix(struct wd_err *e, const char *fmt, ...)
{
	char pre[256];
	size_t plen, mlen;
	va_list ap;
	int n;

	if (!e)
		return;
	va_start(ap, fmt);
	n = vsnprintf(pre, sizeof(pre), fmt, ap);
	va_end(ap);
	if (n <= 0)
		return;
	plen = strlen(pre);
	mlen = strnlen(e->msg, sizeof(e->msg) - 1);
	if (plen + mlen >= sizeof(e->msg))
		mlen = sizeof(e->msg) - 1 - plen; /* the tail of the old message is cut */
	memmove(e->msg + plen, e->msg, mlen);
	memcpy(e->msg, pre, plen);
	e->msg[plen + mlen] = '\0';
}

unsigned wd_levenshtein(const char *a, const char *b)
{
	unsigned row[65], i, j, la = (unsigned)strlen(a), lb = (unsigned)strlen(b);

	if (la > 64 || lb > 64)
		return 255;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		unsigned diag = row[0], tmp;

		row[0] = i;
		for (j = 1; j <= lb; j++) {
			unsigned cost = a[i - 1] == b[j - 1] ? 0 : 1;
			unsigned best = diag + cost;

			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			tmp = row[j];
			row[j] = best;
			diag = tmp;
		}
	}
	return row[lb] > 255 ? 255 : row[lb];
}

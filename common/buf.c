/* buf.c - struct wd_buf: a growable, NUL-terminated byte buffer. */
#include "common/common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int wd_buf_reserve(struct wd_buf *b, size_t extra)
{
	size_t need, cap;
	char *p;

	if (extra > SIZE_MAX - b->len - 1)
		return -ENOMEM;
	need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	p = realloc(b->data, cap);
	if (!p)
		return -ENOMEM;
	b->data = p;
	b->cap = cap;
	return 0;
}

int wd_buf_append(struct wd_buf *b, const void *p, size_t n)
{
	int ret = wd_buf_reserve(b, n);

	if (ret < 0)
		return ret;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int wd_buf_puts(struct wd_buf *b, const char *s)
{
	return wd_buf_append(b, s, strlen(s));
}

int wd_buf_vprintf(struct wd_buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n, ret;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return -EINVAL;
	ret = wd_buf_reserve(b, (size_t)n);
	if (ret < 0)
		return ret;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int wd_buf_printf(struct wd_buf *b, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = wd_buf_vprintf(b, fmt, ap);
	va_end(ap);
	return ret;
}

void wd_buf_reset(struct wd_buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}

void wd_buf_free(struct wd_buf *b)
{
	if (!b)
		return;
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

const char *wd_buf_cstr(const struct wd_buf *b)
{
	return b->data ? b->data : "";
}

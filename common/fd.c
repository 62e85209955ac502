/* fd.c - file and descriptor helpers: whole-file reads, full writes, mkdir -p. */
#include "common/common.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int wd_read_file(const char *path, size_t max, char **ret_data, size_t *ret_len)
{
	struct wd_buf b = WD_BUF_INIT;
	int fd, ret = 0;
	struct stat st;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		ret = -errno;
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		ret = -EISDIR;
		goto out;
	}
	for (;;) {
		ssize_t n;

		ret = wd_buf_reserve(&b, 4096);
		if (ret < 0)
			goto out;
		n = read(fd, b.data + b.len, b.cap - b.len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			goto out;
		}
		if (n == 0)
			break;
		b.len += (size_t)n;
		if (b.len > max) {
			ret = -EFBIG;
			goto out;
		}
	}
	ret = wd_buf_reserve(&b, 0);
	if (ret < 0)
		goto out;
	b.data[b.len] = '\0';
	*ret_data = b.data;
	*ret_len = b.len;
	b.data = NULL;
out:
	wd_buf_free(&b);
	close(fd);
	return ret;
}

int wd_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

void wd_closep(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

int wd_mkdir_p(const char *path, mode_t mode)
{
	char tmp[PATH_MAX];
	struct stat st;
	size_t len = strlen(path);

	if (len == 0 || len >= sizeof(tmp))
		return -ENAMETOOLONG;
	memcpy(tmp, path, len + 1);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, mode) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, mode) < 0) {
		if (errno != EEXIST)
			return -errno;
		if (stat(tmp, &st) < 0)
			return -errno;
		if (!S_ISDIR(st.st_mode))
			return -ENOTDIR;
	}
	return 0;
}

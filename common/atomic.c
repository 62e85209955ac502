/* atomic.c - replacing a file whole: the new content goes to a hidden file beside the final
 * name, made 0600 with O_EXCL|O_NOFOLLOW, and is renamed onto the name only once it is written
 * (and synced, when asked). A reader sees the old file or the new one, never a half; a failure
 * leaves the old one and no temporary file behind. Every state record, pool entry, policy copy
 * and approval of the launcher is written this way. */
#include "common/common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* the folder is held only to name files in it: O_PATH on Linux; elsewhere (macOS) a plain
 * read-only open, which also needs read permission on the folder */
#ifdef O_PATH
#define DIR_ONLY O_PATH
#else
#define DIR_ONLY O_RDONLY
#endif

/* @path's folder part into @a->dir (or "." ) and its last part into @a->name */
static int split(struct wd_atomic *a, const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;

	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return -EINVAL;
	if (strlen(base) >= sizeof(a->name) - 32)
		return -ENAMETOOLONG;
	snprintf(a->name, sizeof(a->name), "%s", base);
	if (!slash)
		return snprintf(a->dir, sizeof(a->dir), ".") < 0 ? -EINVAL : 0;
	if ((size_t)(slash - path) >= sizeof(a->dir))
		return -ENAMETOOLONG;
	snprintf(a->dir, sizeof(a->dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	return 0;
}

#ifdef _WIN32
/* Windows has no *at() calls: the folder is named, not held (a->dfd 0 says "in use"), only
 * paths relative to the working folder (AT_FDCWD) are taken, and the rename replaces the name
 * with MoveFileEx(). The temporary file is made with O_EXCL: a link planted under its name
 * fails the open (CREATE_NEW), never followed. */
static int in_dir(const struct wd_atomic *a, const char *name, char *out, size_t size)
{
	return snprintf(out, size, "%s/%s", a->dir, name) >= (int)size ? -ENAMETOOLONG : 0;
}

int wd_atomic_open(struct wd_atomic *a, int dfd, const char *path, unsigned flags)
{
	char tmp[sizeof(a->dir) + sizeof(a->tmp)];
	int ret;

	memset(a, 0, sizeof(*a));
	a->fd = -1;
	a->dfd = -1;
	a->flags = flags;
	if (dfd != AT_FDCWD)
		return -ENOSYS;
	ret = split(a, path);
	if (ret)
		return ret;
	snprintf(a->tmp, sizeof(a->tmp), ".%s.%ld.tmp", a->name, (long)getpid());
	ret = in_dir(a, a->tmp, tmp, sizeof(tmp));
	if (ret)
		return ret;
	(void)unlink(tmp);
	a->fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (a->fd < 0)
		return -errno;
	a->dfd = 0;
	return 0;
}

int wd_atomic_commit(struct wd_atomic *a)
{
	char tmp[sizeof(a->dir) + sizeof(a->tmp)], dst[sizeof(a->dir) + sizeof(a->name)];
	int ret = 0;

	if (a->fd < 0 || a->dfd < 0)
		return -EBADF;
	if ((a->flags & WD_ATOMIC_SYNC) && fsync(a->fd) < 0)
		ret = -errno;
	if (close(a->fd) < 0 && !ret)
		ret = -errno;
	a->fd = -1;
	a->dfd = -1;
	if (in_dir(a, a->tmp, tmp, sizeof(tmp)) || in_dir(a, a->name, dst, sizeof(dst)))
		return -ENAMETOOLONG;
	if (!ret && !MoveFileExA(tmp, dst, MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH))
		ret = -EIO;
	if (ret)
		(void)unlink(tmp);
	return ret;
}

void wd_atomic_abort(struct wd_atomic *a)
{
	char tmp[sizeof(a->dir) + sizeof(a->tmp)];

	if (a->fd >= 0)
		close(a->fd);
	a->fd = -1;
	if (a->dfd >= 0 && !in_dir(a, a->tmp, tmp, sizeof(tmp)))
		(void)unlink(tmp);
	a->dfd = -1;
}
#else
int wd_atomic_open(struct wd_atomic *a, int dfd, const char *path, unsigned flags)
{
	int ret;

	memset(a, 0, sizeof(*a));
	a->fd = -1;
	a->dfd = -1;
	a->flags = flags;
	ret = split(a, path);
	if (ret)
		return ret;
	/* the folder once, so that the temporary file and the rename meet in the same one */
	a->dfd = openat(dfd, a->dir, DIR_ONLY | O_DIRECTORY | O_CLOEXEC);
	if (a->dfd < 0)
		return -errno;
	snprintf(a->tmp, sizeof(a->tmp), ".%s.%ld.tmp", a->name, (long)getpid());
	/* a leftover of a crashed writer of the same pid keeps its mode under O_TRUNC: afresh */
	(void)unlinkat(a->dfd, a->tmp, 0);
	a->fd = openat(a->dfd, a->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (a->fd < 0) {
		ret = -errno;
		close(a->dfd);
		a->dfd = -1;
		return ret;
	}
	return 0;
}

int wd_atomic_commit(struct wd_atomic *a)
{
	int ret = 0;

	if (a->fd < 0 || a->dfd < 0)
		return -EBADF;
	if ((a->flags & WD_ATOMIC_SYNC) && fsync(a->fd) < 0)
		ret = -errno;
	if (close(a->fd) < 0 && !ret)
		ret = -errno;
	a->fd = -1;
	if (!ret && renameat(a->dfd, a->tmp, a->dfd, a->name) < 0)
		ret = -errno;
	if (ret)
		(void)unlinkat(a->dfd, a->tmp, 0);
	close(a->dfd);
	a->dfd = -1;
	return ret;
}

void wd_atomic_abort(struct wd_atomic *a)
{
	if (a->fd >= 0)
		close(a->fd);
	a->fd = -1;
	if (a->dfd >= 0) {
		(void)unlinkat(a->dfd, a->tmp, 0);
		close(a->dfd);
	}
	a->dfd = -1;
}
#endif

int wd_write_file_atomic(int dfd, const char *path, const void *data, size_t len, unsigned flags)
{
	struct wd_atomic a;
	int ret = wd_atomic_open(&a, dfd, path, flags);

	if (ret)
		return ret;
	ret = wd_write_all(a.fd, data, len);
	if (ret) {
		wd_atomic_abort(&a);
		return ret;
	}
	return wd_atomic_commit(&a);
}

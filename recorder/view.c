/* view.c - a caller's path as the sandbox names it, and opened inside the sandbox's root:
 * the folder a relative path starts from (checked to be that very folder inside the sandbox),
 * the path joined and folded and taken apart (struct recorder_epath), and the walk with
 * openat2 RESOLVE_IN_ROOT from the caller's root that reaches what the caller's own walk
 * would, or says it cannot tell (RECORDER_SKIP). emul.c, connect.c and open.c carry calls out
 * on what this file opens. */
#include "recorder/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ------------------------------------------------------------ opening inside the sandbox */

int recorder_openat2(int dirfd, const char *path, uint64_t flags, uint64_t mode, uint64_t resolve)
{
	struct open_how how = {
	    .flags = flags | O_CLOEXEC,
	    .mode = mode,
	    .resolve = resolve | RESOLVE_NO_MAGICLINKS,
	};
	const char *rel = path + strspn(path, "/");

	return (int)syscall(SYS_openat2, dirfd, *rel ? rel : ".", &how, sizeof(how));
}

/* @abs inside @root, O_PATH. */
static int openat2_in(int root, const char *abs, int oflags, uint64_t resolve)
{
	return recorder_openat2(root, abs, (uint64_t)(O_PATH | oflags), 0,
				RESOLVE_IN_ROOT | resolve);
}

/*
 * Open @abs (absolute) inside @root as an O_PATH descriptor, with @oflags (O_DIRECTORY,
 * O_NOFOLLOW). Return: 0 and *@ret_fd, a negative errno the caller's own call would have met
 * on that walk, or RECORDER_SKIP: cannot tell (a link on the way that did not resolve, or
 * that led into a procfs, whose /proc/self is the launcher's).
 */
static int open_in(int root, const char *abs, int oflags, int *ret_fd)
{
	struct statfs sf;
	int fd;

	/* no link on the way: the walk is the caller's own, its error too */
	fd = openat2_in(root, abs, oflags, RESOLVE_NO_SYMLINKS);
	if (fd >= 0) {
		*ret_fd = fd;
		return 0;
	}
	switch (errno) {
	case ENOENT:
	case ENOTDIR:
	case EACCES:
	case ENAMETOOLONG:
		return -errno;
	case ELOOP:
		break;
	default:
		return RECORDER_SKIP;
	}
	/* links: a target in the sandbox's /proc (/etc/mtab) resolves by who asks, and an
	 * error (ELOOP from a magic link or a real loop, ENOENT from /proc/self) cannot be told
	 * from the caller's */
	fd = openat2_in(root, abs, oflags, 0);
	if (fd < 0)
		return RECORDER_SKIP;
	if (fstatfs(fd, &sf) < 0 || sf.f_type == PROC_SUPER_MAGIC) {
		close(fd);
		return RECORDER_SKIP;
	}
	*ret_fd = fd;
	return 0;
}

/* The folder part of absolute @abs into @out ("/" for "/x"). */
static void dir_of(const char *abs, char *out, size_t size)
{
	const char *slash = strrchr(abs, '/');
	size_t n = slash ? (size_t)(slash - abs) : 0;

	if (!n)
		n = 1;
	if (n >= size)
		n = size - 1;
	memcpy(out, abs, n);
	out[n] = '\0';
}

int recorder_open_path(const struct recorder_emul_ctx *c, const struct recorder_epath *ep,
		       bool parent, int *ret_fd)
{
	char dir[PATH_MAX], unf[PATH_MAX * 2 + 2];
	int oflags = parent || ep->must_dir ? O_DIRECTORY : 0;
	int fd = -1, fd2 = -1, r, r2;
	struct stat a, b;
	size_t n;

	if (parent) {
		dir_of(ep->abs, dir, sizeof(dir));
		r = open_in(c->root, dir, oflags, &fd);
	} else {
		r = open_in(c->root, ep->abs, oflags, &fd);
	}
	if (r == RECORDER_SKIP || !ep->dotdot) {
		if (!r)
			*ret_fd = fd;
		return r;
	}
	/* the caller's own path: its base, then its bytes, nothing folded */
	if (snprintf(unf, sizeof(unf), "%s/%s", ep->base, ep->raw) >= (int)sizeof(unf))
		goto skip;
	n = strlen(unf);
	while (n > 1 && unf[n - 1] == '/')
		unf[--n] = '\0';
	if (parent) {
		char *slash = strrchr(unf, '/');

		if (slash == unf)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	if (strlen(unf) >= PATH_MAX)
		goto skip;
	r2 = open_in(c->root, unf, oflags, &fd2);
	if (r2 == RECORDER_SKIP)
		goto skip;
	if (r || r2) {
		/* both failed alike: that error; one failed: they differ */
		if (fd2 >= 0)
			close(fd2);
		if (fd >= 0)
			close(fd);
		return r && r == r2 ? r : RECORDER_SKIP;
	}
	if (fstat(fd, &a) < 0 || fstat(fd2, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino)
		goto skip;
	close(fd2);
	*ret_fd = fd;
	return 0;
skip:
	if (fd2 >= 0)
		close(fd2);
	if (fd >= 0)
		close(fd);
	return RECORDER_SKIP;
}

/* ------------------------------------------------------------ resolving a path */

/*
 * The folder a relative path of @c->pid starts from, as the sandbox names it, into @base: its
 * current folder (AT_FDCWD) or its descriptor @dirfd. The name must reach that very folder
 * inside the sandbox (a folder deleted, renamed away from its name or mounted over would be
 * another one). Return: 0, -EBADF, -ENAMETOOLONG.
 */
static int read_base(const struct recorder_emul_ctx *c, int dirfd, char *base)
{
	static const char deleted[] = " (deleted)";
	struct stat want, got;
	char p[64];
	size_t len;
	int fd = -1;

	if (dirfd == AT_FDCWD) {
		if (!c->cwd || snprintf(base, PATH_MAX, "%s", c->cwd) >= PATH_MAX)
			return c->cwd ? -ENAMETOOLONG : -EBADF;
		snprintf(p, sizeof(p), "/proc/%d/cwd", (int)c->pid);
	} else {
		ssize_t n;

		if (dirfd < 0)
			return -EBADF;
		snprintf(p, sizeof(p), "/proc/%d/fd/%d", (int)c->pid, dirfd);
		n = readlink(p, base, PATH_MAX);
		if (n < 0)
			return -EBADF;
		if (n >= PATH_MAX)
			return -ENAMETOOLONG;
		base[n] = '\0';
	}
	/* "socket:[..]", "pipe:[..]", "anon_inode:[..]" are no folder; a deleted one has none */
	len = strlen(base);
	if (base[0] != '/' ||
	    (len >= sizeof(deleted) - 1 && !strcmp(base + len - (sizeof(deleted) - 1), deleted)))
		return -EBADF;
	if (stat(p, &want) < 0 || !S_ISDIR(want.st_mode))
		return -EBADF;
	if (open_in(c->root, base, O_DIRECTORY, &fd))
		return -EBADF;
	if (fstat(fd, &got) < 0 || got.st_dev != want.st_dev || got.st_ino != want.st_ino) {
		close(fd);
		return -EBADF;
	}
	close(fd);
	return 0;
}

static int resolve(const struct recorder_emul_ctx *c, int dirfd, const char *path, char *base,
		   char out[PATH_MAX])
{
	int ret;

	base[0] = '\0';
	if (!path[0])
		return -ENOENT;
	if (path[0] != '/') {
		ret = read_base(c, dirfd, base);
		if (ret)
			return ret;
	}
	ret = recorder_join(base[0] ? base : "/", path, out, PATH_MAX);
	return ret == -EINVAL ? -EBADF : ret;
}

int recorder_resolve(const struct recorder_emul_ctx *c, int dirfd, const char *path,
		     char out[PATH_MAX])
{
	char base[PATH_MAX];

	return resolve(c, dirfd, path, base, out);
}

int recorder_prep_str(const struct recorder_emul_ctx *c, int dirfd, struct recorder_epath *ep,
		      char *abs)
{
	const char *s, *last = NULL;
	size_t n, lastlen = 0;
	int r;

	ep->abs = abs;
	ep->name = NULL;
	ep->must_dir = ep->dotdot = false;
	abs[0] = '\0';
	r = resolve(c, dirfd, ep->raw, ep->base, abs);
	if (r == -ENOENT)
		return r;
	if (r)
		return RECORDER_SKIP;
	if (recorder_sandbox_own(abs))
		return RECORDER_SKIP;
	/* the components of the caller's bytes: a ".." anywhere, what is last, a slash after */
	for (s = ep->raw; *s;) {
		const char *comp;

		while (*s == '/')
			s++;
		if (!*s)
			break;
		comp = s;
		while (*s && *s != '/')
			s++;
		n = (size_t)(s - comp);
		if (n == 2 && comp[0] == '.' && comp[1] == '.')
			ep->dotdot = true;
		last = comp;
		lastlen = n;
	}
	n = strlen(ep->raw);
	if (ep->raw[n - 1] == '/')
		ep->must_dir = true;
	if (!last || (lastlen == 1 && last[0] == '.') ||
	    (lastlen == 2 && last[0] == '.' && last[1] == '.')) {
		ep->must_dir = true;
		return 0; /* "/", "x/." or "x/..": the folder itself */
	}
	if (!strcmp(abs, "/"))
		return RECORDER_SKIP; /* cannot be: a name that folds to the root */
	ep->name = strrchr(abs, '/') + 1;
	return 0;
}

int recorder_prep(const struct recorder_emul_ctx *c, int dirfd, uint64_t addr,
		  struct recorder_epath *ep, char *abs)
{
	int r = recorder_read_string(c->pid, addr, ep->raw, sizeof(ep->raw));

	ep->abs = abs;
	abs[0] = '\0';
	if (r < 0)
		return RECORDER_SKIP; /* unreadable: the kernel answers it itself */
	return recorder_prep_str(c, dirfd, ep, abs);
}

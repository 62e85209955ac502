/* run_files_emul.c - the trace recorder carries out a path call itself, on its own copy of the
 * path, inside the caller's view of the files (run_files_emul.h has why).
 *
 * Theory of operation. One call, in stages:
 *
 *   check     the call's flags and numbers as the kernel checks them before it looks at a
 *             path; anything the kernel would refuse, or that we would do differently
 *             (RENAME_WHITEOUT, linkat AT_EMPTY_PATH, a negative length), is not handled
 *   read      each path once (recorder_read_string()) into our buffer: the caller's other threads
 *             may change its memory from now on, it no longer matters
 *   resolve   a relative path against the caller's current folder or its dirfd (checked to
 *             be the very folder that name reaches inside the sandbox), folded lexically;
 *             the sandbox's own /proc and /dev are not handled
 *   open      the parent folder (calls that do not follow the last component) or the whole
 *             path (calls that do) with openat2 RESOLVE_IN_ROOT from the caller's root, first
 *             with no symbolic link allowed: an error then is the error the caller would have
 *             had; with links on the way, only a success counts, and not one in a procfs
 *             (/proc/self names the launcher there, not the caller). A ".." in the path must
 *             reach the same file as the lexical fold does (a link before it would not)
 *   act       the *at call on the last component from the parent (no following, so no link
 *             is resolved against the launcher's root), or the call on the opened file
 *             (AT_EMPTY_PATH, /proc/self/fd/N); a result buffer is written into the caller
 *   record    what it did, on the path we used: out->op/path, out->op2/path2
 *
 * Identity: the recorder is a process with the sandbox user's whole identity (real, effective,
 * saved and file system ids, groups, no capability: run_files.c) and the caller's umask;
 * access checks use those ids (AT_EACCESS).
 */
#include "recorder/emul.h"
#include "common/common.h"
#include "recorder/recorder.h"
#include "trace/file.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <poll.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

/* Not handled: the recorder answers CONTINUE and records nothing. */
#define SKIP 1

/* What a call does with its path(s). */
enum emul_kind {
	K_STAT,	    /* stat, lstat, newfstatat: a struct stat into the caller */
	K_STATX,    /* statx: a struct statx */
	K_ACCESS,   /* access, faccessat, faccessat2 */
	K_READLINK, /* readlink, readlinkat: the bytes */
	K_MKDIR,    /* mkdir, mkdirat */
	K_UNLINK,   /* unlink, unlinkat, rmdir */
	K_RENAME,   /* rename, renameat, renameat2 */
	K_LINK,	    /* link, linkat */
	K_SYMLINK,  /* symlink, symlinkat */
	K_TRUNCATE, /* truncate */
	K_CHMOD,    /* chmod, fchmodat */
	K_CONNECT,  /* connect to a unix socket by path */
};

/**
 * struct emul_call - where one system call keeps its arguments (an index in args[], -1: none)
 * @nr:		x86_64 number
 * @kind:	enum emul_kind
 * @dirfd:	the first path's folder (-1: AT_FDCWD)
 * @path:	the first path (for symlink: the new link)
 * @dirfd2:	the second path's folder (rename, link)
 * @path2:	the second path (rename, link: the new name; symlink: the target string)
 * @flags:	the flags
 * @arg:	the buffer (stat, statx, readlink), mode (access, mkdir, chmod), length (truncate)
 * @arg2:	readlink's size, statx's mask
 * @fixed:	flags the call implies (lstat: AT_SYMLINK_NOFOLLOW, rmdir: AT_REMOVEDIR)
 */
struct emul_call {
	int nr;
	enum emul_kind kind;
	int8_t dirfd, path, dirfd2, path2, flags, arg, arg2;
	unsigned fixed;
};

#define CALL(n, k, d, p, d2, p2, f, a, a2, fx)                                                     \
	{                                                                                          \
		.nr = (n), .kind = (k), .dirfd = (d), .path = (p), .dirfd2 = (d2), .path2 = (p2),  \
		.flags = (f), .arg = (a), .arg2 = (a2), .fixed = (fx)                              \
	}

static const struct emul_call emul_calls[] = {
    CALL(4, K_STAT, -1, 0, -1, -1, -1, 1, -1, 0),		    /* stat */
    CALL(6, K_STAT, -1, 0, -1, -1, -1, 1, -1, AT_SYMLINK_NOFOLLOW), /* lstat */
    CALL(262, K_STAT, 0, 1, -1, -1, 3, 2, -1, 0),		    /* newfstatat */
    CALL(332, K_STATX, 0, 1, -1, -1, 2, 4, 3, 0),		    /* statx */
    CALL(21, K_ACCESS, -1, 0, -1, -1, -1, 1, -1, 0),		    /* access */
    CALL(269, K_ACCESS, 0, 1, -1, -1, -1, 2, -1, 0),		    /* faccessat */
    CALL(439, K_ACCESS, 0, 1, -1, -1, 3, 2, -1, 0),		    /* faccessat2 */
    CALL(89, K_READLINK, -1, 0, -1, -1, -1, 1, 2, 0),		    /* readlink */
    CALL(267, K_READLINK, 0, 1, -1, -1, -1, 2, 3, 0),		    /* readlinkat */
    CALL(83, K_MKDIR, -1, 0, -1, -1, -1, 1, -1, 0),		    /* mkdir */
    CALL(258, K_MKDIR, 0, 1, -1, -1, -1, 2, -1, 0),		    /* mkdirat */
    CALL(87, K_UNLINK, -1, 0, -1, -1, -1, -1, -1, 0),		    /* unlink */
    CALL(263, K_UNLINK, 0, 1, -1, -1, 2, -1, -1, 0),		    /* unlinkat */
    CALL(84, K_UNLINK, -1, 0, -1, -1, -1, -1, -1, AT_REMOVEDIR),    /* rmdir */
    CALL(82, K_RENAME, -1, 0, -1, 1, -1, -1, -1, 0),		    /* rename */
    CALL(264, K_RENAME, 0, 1, 2, 3, -1, -1, -1, 0),		    /* renameat */
    CALL(316, K_RENAME, 0, 1, 2, 3, 4, -1, -1, 0),		    /* renameat2 */
    CALL(86, K_LINK, -1, 0, -1, 1, -1, -1, -1, 0),		    /* link */
    CALL(265, K_LINK, 0, 1, 2, 3, 4, -1, -1, 0),		    /* linkat */
    CALL(88, K_SYMLINK, -1, 1, -1, 0, -1, -1, -1, 0),		    /* symlink */
    CALL(266, K_SYMLINK, 1, 2, -1, 0, -1, -1, -1, 0),		    /* symlinkat */
    CALL(76, K_TRUNCATE, -1, 0, -1, -1, -1, 1, -1, 0),		    /* truncate */
    CALL(90, K_CHMOD, -1, 0, -1, -1, -1, 1, -1, 0),		    /* chmod */
    CALL(268, K_CHMOD, 0, 1, -1, -1, -1, 2, -1, 0),		    /* fchmodat */
    CALL(42, K_CONNECT, -1, -1, -1, -1, -1, -1, -1, 0),		    /* connect */
};

/**
 * struct epath - one path of a call, read and resolved
 * @raw:	the caller's bytes, once
 * @base:	the folder a relative @raw starts from ("" for an absolute one)
 * @abs:	absolute, folded (the caller's out->path or out->path2)
 * @name:	the last component, in @abs; NULL when the call is about @abs as a whole ("/",
 *		or a last component "." or "..")
 * @must_dir:	a trailing slash, or "." or ".." last: the kernel wants a folder there
 * @dotdot:	a ".." component: the lexical fold must reach what the kernel's walk reaches
 */
struct epath {
	char raw[PATH_MAX];
	char base[PATH_MAX];
	char *abs;
	const char *name;
	bool must_dir;
	bool dotdot;
};

/* ------------------------------------------------------------ reading the caller */

int recorder_read_string(pid_t pid, uint64_t addr, char *buf, size_t size)
{
	const uint64_t page = 4096;
	size_t got = 0;

	if (!addr)
		return -EFAULT;
	/* page by page: a string that ends just before an unmapped page is still read whole,
	 * and nothing past its NUL is asked for beyond the page it ends in */
	while (got < size) {
		uint64_t at = addr + got;
		size_t n = (size_t)(page - at % page);
		struct iovec l, r;
		ssize_t k;
		char *nul;

		if (at < addr)
			return -EFAULT; /* wrapped around */
		if (n > size - got)
			n = size - got;
		l.iov_base = buf + got;
		l.iov_len = n;
		/* NOLINTNEXTLINE(performance-no-int-to-ptr): an address in the caller's memory */
		r.iov_base = (void *)(uintptr_t)at;
		r.iov_len = n;
		k = process_vm_readv(pid, &l, 1, &r, 1, 0);
		if (k < 0)
			return -errno;
		if (k == 0)
			return -EFAULT;
		nul = memchr(buf + got, '\0', (size_t)k);
		if (nul)
			return (int)(nul - buf);
		got += (size_t)k;
	}
	return -ENAMETOOLONG;
}

/* Write @n bytes at @p to @addr in @pid: 0, or -EFAULT (the kernel's answer for a bad
 * buffer). */
static int write_to(pid_t pid, uint64_t addr, const void *p, size_t n)
{
	/* NOLINTNEXTLINE(performance-no-int-to-ptr): an address in the caller's memory */
	struct iovec l = {(void *)p, n}, r = {(void *)(uintptr_t)addr, n};

	if (!n)
		return 0;
	return process_vm_writev(pid, &l, 1, &r, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
}

/* ------------------------------------------------------------ opening inside the sandbox */

static int openat2_in(int root, const char *abs, int oflags, uint64_t resolve)
{
	struct open_how how = {
	    .flags = (uint64_t)(O_PATH | O_CLOEXEC | oflags),
	    .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | resolve,
	};
	const char *rel = abs + strspn(abs, "/");

	return (int)syscall(SYS_openat2, root, *rel ? rel : ".", &how, sizeof(how));
}

/*
 * Open @abs (absolute) inside @root as an O_PATH descriptor, with @oflags (O_DIRECTORY,
 * O_NOFOLLOW). Return: 0 and *@ret_fd, a negative errno the caller's own call would have met
 * on that walk, or SKIP: cannot tell (a link on the way that did not resolve, or that led into
 * a procfs, whose /proc/self is the launcher's).
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
		return SKIP;
	}
	/* links: a target in the sandbox's /proc (/etc/mtab) resolves by who asks, and an
	 * error (ELOOP from a magic link or a real loop, ENOENT from /proc/self) cannot be told
	 * from the caller's */
	fd = openat2_in(root, abs, oflags, 0);
	if (fd < 0)
		return SKIP;
	if (fstatfs(fd, &sf) < 0 || sf.f_type == PROC_SUPER_MAGIC) {
		close(fd);
		return SKIP;
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

/*
 * Open what @ep names inside the caller's root: its parent folder (@parent) or the whole
 * path, following a link at its end (O_DIRECTORY when the kernel wants a folder). With a ".."
 * in the path, the caller's own walk (the path unfolded) must reach the same file, or fail
 * alike. Return: 0 and *@ret_fd, a negative errno for the caller, or SKIP.
 */
static int open_path(const struct recorder_emul_ctx *c, const struct epath *ep, bool parent,
		     int *ret_fd)
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
	if (r == SKIP || !ep->dotdot) {
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
	if (r2 == SKIP)
		goto skip;
	if (r || r2) {
		/* both failed alike: that error; one failed: they differ */
		if (fd2 >= 0)
			close(fd2);
		if (fd >= 0)
			close(fd);
		return r && r == r2 ? r : SKIP;
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
	return SKIP;
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

/*
 * @ep->raw (already read) resolved into @abs and taken apart. Return: 0, -ENOENT for an
 * empty path (the kernel's answer), or SKIP.
 */
static int prep_str(const struct recorder_emul_ctx *c, int dirfd, struct epath *ep, char *abs)
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
		return SKIP;
	if (recorder_sandbox_own(abs))
		return SKIP;
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
		return SKIP; /* cannot be: a name that folds to the root */
	ep->name = strrchr(abs, '/') + 1;
	return 0;
}

/* Read the path at @addr and prepare it (prep_str()). */
static int prep(const struct recorder_emul_ctx *c, int dirfd, uint64_t addr, struct epath *ep,
		char *abs)
{
	int r = recorder_read_string(c->pid, addr, ep->raw, sizeof(ep->raw));

	ep->abs = abs;
	abs[0] = '\0';
	if (r < 0)
		return SKIP; /* unreadable: the kernel answers it itself */
	return prep_str(c, dirfd, ep, abs);
}

static int dirfd_arg(const struct emul_call *k, int which, const uint64_t args[6])
{
	int i = which == 1 ? k->dirfd : k->dirfd2;

	return i < 0 ? AT_FDCWD : (int)args[i];
}

/* ------------------------------------------------------------ the calls */

/* @out answered with @ret; a look (stat, access, readlink) records what it found. */
static int answer_look(struct recorder_emul_out *out, long ret)
{
	out->ret = ret;
	out->op = ret >= 0 ? TRACE_STAT : ret == -ENOENT ? TRACE_MISSING : -1;
	return 1;
}

/* @out answered with @ret; on success @op recorded for the first path. */
static int answer(struct recorder_emul_out *out, long ret, int op)
{
	out->ret = ret;
	out->op = ret >= 0 ? op : -1;
	return 1;
}

/* Open the target of a look: the whole path (following its last link) or its parent (a call
 * that does not follow, about a name). Return as open_path(). */
static int open_look(const struct recorder_emul_ctx *c, const struct epath *ep, bool nofollow,
		     int *fd, bool *by_name)
{
	*by_name = nofollow && ep->name && !ep->must_dir;
	return open_path(c, ep, *by_name, fd);
}

static int do_stat(const struct recorder_emul_ctx *c, const struct emul_call *k,
		   const uint64_t args[6], struct recorder_emul_out *out)
{
	unsigned flags = (k->flags >= 0 ? (unsigned)args[k->flags] : 0) | k->fixed;
	struct epath ep;
	struct stat st;
	bool by_name;
	int r, fd = -1;

	if (flags & ~(unsigned)(AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_EMPTY_PATH))
		return 0;
	r = prep(c, dirfd_arg(k, 1, args), args[k->path], &ep, out->path);
	if (r == -ENOENT && (flags & AT_EMPTY_PATH))
		return 0; /* fstat() by a descriptor: no path */
	if (r)
		return r == SKIP ? 0 : answer(out, r, -1);
	r = open_look(c, &ep, flags & AT_SYMLINK_NOFOLLOW, &fd, &by_name);
	if (r == SKIP)
		return 0;
	if (!r) {
		if (by_name)
			r = fstatat(fd, ep.name, &st,
				    AT_SYMLINK_NOFOLLOW | (flags & AT_NO_AUTOMOUNT))
				? -errno
				: 0;
		else
			r = fstatat(fd, "", &st, AT_EMPTY_PATH) ? -errno : 0;
		close(fd);
	}
	if (!r && write_to(c->pid, args[k->arg], &st, sizeof(st)))
		return answer(out, -EFAULT, -1);
	return answer_look(out, r);
}

static int do_statx(const struct recorder_emul_ctx *c, const struct emul_call *k,
		    const uint64_t args[6], struct recorder_emul_out *out)
{
	unsigned flags = (unsigned)args[k->flags], mask = (unsigned)args[k->arg2];
	struct statx stx;
	struct epath ep;
	bool by_name;
	int r, fd = -1;

	if (flags &
	    ~(unsigned)(AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_EMPTY_PATH | AT_STATX_SYNC_TYPE))
		return 0;
	if ((flags & AT_STATX_SYNC_TYPE) == AT_STATX_SYNC_TYPE || (mask & STATX__RESERVED))
		return 0;
	r = prep(c, dirfd_arg(k, 1, args), args[k->path], &ep, out->path);
	if (r == -ENOENT && (flags & AT_EMPTY_PATH))
		return 0;
	if (r)
		return r == SKIP ? 0 : answer(out, r, -1);
	r = open_look(c, &ep, flags & AT_SYMLINK_NOFOLLOW, &fd, &by_name);
	if (r == SKIP)
		return 0;
	if (!r) {
		memset(&stx, 0, sizeof(stx));
		if (by_name)
			r = statx(fd, ep.name,
				  (int)(AT_SYMLINK_NOFOLLOW |
					(flags & (AT_NO_AUTOMOUNT | AT_STATX_SYNC_TYPE))),
				  mask, &stx)
				? -errno
				: 0;
		else
			r = statx(fd, "", (int)(AT_EMPTY_PATH | (flags & AT_STATX_SYNC_TYPE)), mask,
				  &stx)
				? -errno
				: 0;
		close(fd);
	}
	if (!r && write_to(c->pid, args[k->arg], &stx, sizeof(stx)))
		return answer(out, -EFAULT, -1);
	return answer_look(out, r);
}

static int do_access(const struct recorder_emul_ctx *c, const struct emul_call *k,
		     const uint64_t args[6], struct recorder_emul_out *out)
{
	unsigned flags = k->flags >= 0 ? (unsigned)args[k->flags] : 0;
	unsigned mode = (unsigned)args[k->arg];
	struct epath ep;
	bool by_name;
	int r, fd = -1;

	if (flags & ~(unsigned)(AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return 0;
	if (mode & ~(unsigned)S_IRWXO)
		return 0;
	r = prep(c, dirfd_arg(k, 1, args), args[k->path], &ep, out->path);
	if (r == -ENOENT && (flags & AT_EMPTY_PATH))
		return 0;
	if (r)
		return r == SKIP ? 0 : answer(out, r, -1);
	r = open_look(c, &ep, flags & AT_SYMLINK_NOFOLLOW, &fd, &by_name);
	if (r == SKIP)
		return 0;
	if (!r) {
		/* the recorder's effective ids (the sandbox user's: AT_EACCESS, as the kernel
		 * checks) */
		if (by_name)
			r = syscall(SYS_faccessat2, fd, ep.name, mode,
				    AT_SYMLINK_NOFOLLOW | AT_EACCESS)
				? -errno
				: 0;
		else
			r = syscall(SYS_faccessat2, fd, "", mode, AT_EMPTY_PATH | AT_EACCESS)
				? -errno
				: 0;
		close(fd);
	}
	return answer_look(out, r);
}

static int do_readlink(const struct recorder_emul_ctx *c, const struct emul_call *k,
		       const uint64_t args[6], struct recorder_emul_out *out)
{
	int size = (int)args[k->arg2];
	char target[PATH_MAX];
	struct epath ep;
	ssize_t n;
	int r, fd = -1;

	if (size <= 0)
		return 0;
	r = prep(c, dirfd_arg(k, 1, args), args[k->path], &ep, out->path);
	if (r)
		return r == SKIP ? 0 : answer(out, r, -1);
	if (!ep.name || ep.must_dir)
		return 0;
	r = open_path(c, &ep, true, &fd);
	if (r == SKIP)
		return 0;
	if (r)
		return answer_look(out, r);
	n = readlinkat(fd, ep.name, target, sizeof(target));
	close(fd);
	if (n < 0)
		return answer_look(out, -errno);
	if ((size_t)n >= sizeof(target) && size > n)
		return 0; /* longer than we read: the kernel would give more */
	if (n > size)
		n = size;
	if (write_to(c->pid, args[k->arg], target, (size_t)n))
		return answer(out, -EFAULT, -1);
	return answer_look(out, n);
}

static int do_mkdir(const struct recorder_emul_ctx *c, const struct emul_call *k,
		    const uint64_t args[6], struct recorder_emul_out *out)
{
	struct epath ep;
	mode_t old;
	int r, fd = -1;

	r = prep(c, dirfd_arg(k, 1, args), args[k->path], &ep, out->path);
	if (r)
		return r == SKIP ? 0 : answer(out, r, -1);
	if (!ep.name)
		return 0; /* mkdir("x/."): EEXIST or ENOENT by cases we leave to the kernel */
	r = open_path(c, &ep, true, &fd);
	if (r)
		return r == SKIP ? 0 : answer(out, r, -1);
	old = umask(c->umask);
	r = mkdirat(fd, ep.name, (mode_t)args[k->arg]) ? -errno : 0;
	umask(old);
	close(fd);
	return answer(out, r, TRACE_CREATE);
}

static int do_unlink(const struct recorder_emul_ctx *c, const struct emul_call *k,
		     const uint64_t args[6], struct recorder_emul_out *out)
{
	unsigned flags = (k->flags >= 0 ? (unsigned)args[k->flags] : 0) | k->fixed;
	struct epath ep;
	int r, fd = -1;

	if (flags & ~(unsigned)AT_REMOVEDIR)
		return 0;
	r = prep(c, dirfd_arg(k, 1, args), args[k->path], &ep, out->path);
	if (r)
		return r == SKIP ? 0 : answer(out, r, -1);
	/* rmdir("x/") removes x; unlink("x/") and "x/." are the kernel's to answer */
	if (!ep.name || (ep.must_dir && !(flags & AT_REMOVEDIR)))
		return 0;
	r = open_path(c, &ep, true, &fd);
	if (r)
		return r == SKIP ? 0 : answer(out, r, -1);
	r = unlinkat(fd, ep.name, (int)flags) ? -errno : 0;
	close(fd);
	return answer(out, r, TRACE_REMOVE);
}

static int do_rename(const struct recorder_emul_ctx *c, const struct emul_call *k,
		     const uint64_t args[6], struct recorder_emul_out *out)
{
	unsigned flags = k->flags >= 0 ? (unsigned)args[k->flags] : 0;
	struct epath *from = NULL, *to = NULL;
	int r, fd = -1, fd2 = -1, ret = 0;

	if (flags & ~(unsigned)(RENAME_NOREPLACE | RENAME_EXCHANGE))
		return 0; /* RENAME_WHITEOUT needs a privilege the recorder may have and the
			     caller not */
	if ((flags & RENAME_NOREPLACE) && (flags & RENAME_EXCHANGE))
		return 0;
	from = malloc(sizeof(*from));
	to = malloc(sizeof(*to));
	if (!from || !to) {
		ret = -ENOMEM;
		goto out;
	}
	/* both read before either is looked up, as the kernel does */
	if (recorder_read_string(c->pid, args[k->path], from->raw, sizeof(from->raw)) < 0 ||
	    recorder_read_string(c->pid, args[k->path2], to->raw, sizeof(to->raw)) < 0)
		goto out;
	r = prep_str(c, dirfd_arg(k, 1, args), from, out->path);
	if (r == SKIP)
		goto out;
	if (!r)
		r = prep_str(c, dirfd_arg(k, 2, args), to, out->path2);
	if (r == SKIP)
		goto out;
	if (r) {
		ret = answer(out, r, -1);
		goto out;
	}
	if (!from->name || !to->name || from->must_dir || to->must_dir)
		goto out;
	r = open_path(c, from, true, &fd);
	if (!r)
		r = open_path(c, to, true, &fd2);
	if (r == SKIP)
		goto out;
	if (!r)
		r = renameat2(fd, from->name, fd2, to->name, flags) ? -errno : 0;
	ret = answer(out, r, TRACE_RENAME);
	out->op2 = r ? -1 : TRACE_RENAME;
out:
	if (fd >= 0)
		close(fd);
	if (fd2 >= 0)
		close(fd2);
	free(from);
	free(to);
	return ret;
}

static int do_link(const struct recorder_emul_ctx *c, const struct emul_call *k,
		   const uint64_t args[6], struct recorder_emul_out *out)
{
	unsigned flags = k->flags >= 0 ? (unsigned)args[k->flags] : 0;
	struct epath *from = NULL, *to = NULL;
	int r, fd = -1, fd2 = -1, ret = 0;
	bool follow = flags & AT_SYMLINK_FOLLOW;

	if (flags & ~(unsigned)AT_SYMLINK_FOLLOW)
		return 0; /* AT_EMPTY_PATH: a descriptor, and a privilege the caller may lack */
	from = malloc(sizeof(*from));
	to = malloc(sizeof(*to));
	if (!from || !to) {
		ret = -ENOMEM;
		goto out;
	}
	if (recorder_read_string(c->pid, args[k->path], from->raw, sizeof(from->raw)) < 0 ||
	    recorder_read_string(c->pid, args[k->path2], to->raw, sizeof(to->raw)) < 0)
		goto out;
	/* the existing file is path2 (looked at), the new name path (created) */
	r = prep_str(c, dirfd_arg(k, 1, args), from, out->path2);
	if (r == SKIP)
		goto out;
	if (!r)
		r = prep_str(c, dirfd_arg(k, 2, args), to, out->path);
	if (r == SKIP)
		goto out;
	if (r) {
		ret = answer(out, r, -1);
		goto out;
	}
	if (!to->name || to->must_dir || (!follow && (!from->name || from->must_dir)))
		goto out;
	/* the kernel looks the existing file up whole before the new name's folder */
	if (follow) {
		r = open_path(c, from, false, &fd);
	} else {
		struct stat st;

		r = open_path(c, from, true, &fd);
		if (!r && fstatat(fd, from->name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			r = -errno;
	}
	if (!r)
		r = open_path(c, to, true, &fd2);
	if (r == SKIP)
		goto out;
	if (!r && follow) {
		char p[64];

		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		r = linkat(AT_FDCWD, p, fd2, to->name, AT_SYMLINK_FOLLOW) ? -errno : 0;
	} else if (!r) {
		mode_t old = umask(c->umask);

		r = linkat(fd, from->name, fd2, to->name, 0) ? -errno : 0;
		umask(old);
	}
	ret = answer(out, r, TRACE_CREATE);
	out->op2 = r ? -1 : TRACE_STAT;
out:
	if (fd >= 0)
		close(fd);
	if (fd2 >= 0)
		close(fd2);
	free(from);
	free(to);
	return ret;
}

static int do_symlink(const struct recorder_emul_ctx *c, const struct emul_call *k,
		      const uint64_t args[6], struct recorder_emul_out *out)
{
	char target[PATH_MAX];
	struct epath ep;
	mode_t old;
	int r, fd = -1;

	/* the target is the link's content, not a path looked at: not recorded */
	r = recorder_read_string(c->pid, args[k->path2], target, sizeof(target));
	if (r < 0)
		return 0;
	if (!r)
		return answer(out, -ENOENT, -1);
	r = prep(c, dirfd_arg(k, 1, args), args[k->path], &ep, out->path);
	if (r)
		return r == SKIP ? 0 : answer(out, r, -1);
	if (!ep.name || ep.must_dir)
		return 0;
	r = open_path(c, &ep, true, &fd);
	if (r)
		return r == SKIP ? 0 : answer(out, r, -1);
	old = umask(c->umask);
	r = symlinkat(target, fd, ep.name) ? -errno : 0;
	umask(old);
	close(fd);
	return answer(out, r, TRACE_CREATE);
}

static int do_truncate(const struct recorder_emul_ctx *c, const struct emul_call *k,
		       const uint64_t args[6], struct recorder_emul_out *out)
{
	int64_t len = (int64_t)args[k->arg];
	struct rlimit lim;
	struct epath ep;
	char p[64];
	int r, fd = -1;

	if (len < 0)
		return 0;
	/* past the caller's file size limit the kernel signals the caller (SIGXFSZ): its own */
	if (prlimit(c->pid, RLIMIT_FSIZE, NULL, &lim) < 0 ||
	    (lim.rlim_cur != RLIM_INFINITY && (uint64_t)len > lim.rlim_cur))
		return 0;
	r = prep(c, dirfd_arg(k, 1, args), args[k->path], &ep, out->path);
	if (r)
		return r == SKIP ? 0 : answer(out, r, -1);
	r = open_path(c, &ep, false, &fd);
	if (r)
		return r == SKIP ? 0 : answer(out, r, -1);
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	r = truncate(p, (off_t)len) ? -errno : 0;
	close(fd);
	return answer(out, r, TRACE_WRITE);
}

static int do_chmod(const struct recorder_emul_ctx *c, const struct emul_call *k,
		    const uint64_t args[6], struct recorder_emul_out *out)
{
	struct epath ep;
	char p[64];
	int r, fd = -1;

	r = prep(c, dirfd_arg(k, 1, args), args[k->path], &ep, out->path);
	if (r)
		return r == SKIP ? 0 : answer(out, r, -1);
	r = open_path(c, &ep, false, &fd);
	if (r)
		return r == SKIP ? 0 : answer(out, r, -1);
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	r = fchmodat(AT_FDCWD, p, (mode_t)args[k->arg], 0) ? -errno : 0;
	close(fd);
	return answer(out, r, TRACE_WRITE);
}

/* ------------------------------------------------------------ connect */

/* How long the recorder waits for a blocking connect that did not complete at once (a TCP
 * handshake; through the gateway it completes at once). Every other watched call of the
 * program waits behind it; past it the caller gets ETIMEDOUT. */
#define CONNECT_WAIT_MS 10000
#define CONNECT_RETRY_MS 10

/* pidfd_open()'s flag for a thread's own pidfd (Linux 6.9; O_EXCL) */
#define RF_PIDFD_THREAD O_EXCL

/* The second (effective) number of line @key ("\nUid:") of a /proc/PID/status text. */
static int status_id(const char *status, const char *key, unsigned long *ret)
{
	const char *s = strstr(status, key);
	char *end;

	if (!s)
		return -EIO;
	s += strlen(key);
	(void)strtoul(s, &end, 10); /* the real one */
	if (end == s)
		return -EIO;
	s = end;
	errno = 0;
	*ret = strtoul(s, &end, 10);
	return end == s || errno ? -EIO : 0;
}

/* The caller's effective uid and gid as the launcher sees them (/proc/PID/status). */
static int read_ids(pid_t pid, uid_t *uid, gid_t *gid)
{
	char p[48], buf[4096];
	unsigned long e;
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/status", (int)pid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	if (status_id(buf, "\nUid:", &e))
		return -EIO;
	*uid = (uid_t)e;
	if (status_id(buf, "\nGid:", &e))
		return -EIO;
	*gid = (gid_t)e;
	return 0;
}

/**
 * struct as_caller - the thread's identity while it connects for the caller
 * @switched:	the effective ids were changed (root mode) and must be put back
 * @fsuid:	the file system ids to put back then (setresuid resets them)
 * @fsgid:	the same for the group
 */
struct as_caller {
	bool switched;
	uid_t fsuid;
	gid_t fsgid;
};

/*
 * Take the caller's effective uid and gid for a connect: the server reads them
 * (SO_PEERCRED), and the kernel checks capabilities and the socket file's permission with
 * them. The recorder is a process of its own holding the program's whole identity in every
 * mode (run_files.c, docs/files.md "Identity"), so the caller is the recorder already; the
 * switch below is for a recorder that is root, which none is now (it fails closed: the
 * recorder has no capability to switch with). Return: 0, or -EACCES (the caller is someone
 * the recorder cannot be).
 */
static int become_caller(pid_t pid, struct as_caller *a)
{
	uid_t uid = (uid_t)-1;
	gid_t gid = (gid_t)-1;

	a->switched = false;
	if (read_ids(pid, &uid, &gid))
		return -EACCES;
	if (uid == geteuid() && gid == getegid())
		return 0;
	if (geteuid() != 0)
		return -EACCES;
	a->fsuid = (uid_t)syscall(SYS_setfsuid, (uid_t)-1);
	a->fsgid = (gid_t)syscall(SYS_setfsgid, (gid_t)-1);
	if (syscall(SYS_setresgid, (gid_t)-1, gid, (gid_t)-1) < 0)
		return -EACCES;
	a->switched = true;
	if (syscall(SYS_setresuid, (uid_t)-1, uid, (uid_t)-1) < 0)
		return -EACCES;
	return 0;
}

/* Root again, with the file system ids the thread had. Return: 0, or -EPERM (the thread is
 * left as the caller: what it does next fails, never wider). */
static int become_recorder(const struct as_caller *a)
{
	if (!a->switched)
		return 0;
	if (syscall(SYS_setresuid, (uid_t)-1, (uid_t)0, (uid_t)-1) < 0 ||
	    syscall(SYS_setresgid, (gid_t)-1, (gid_t)0, (gid_t)-1) < 0)
		return -EPERM;
	(void)syscall(SYS_setfsgid, a->fsgid);
	(void)syscall(SYS_setfsuid, a->fsuid);
	return 0;
}

/*
 * connect(2) of @sfd (the caller's socket, taken with pidfd_getfd: the same open file) to
 * @addr, here, as the caller would have it: without waiting longer than CONNECT_WAIT_MS when
 * the caller's socket blocks (the recorder never hangs the sandbox behind one connect).
 * Return: 0, or the negative errno for the caller.
 */
static long connect_here(int sfd, const void *addr, socklen_t len)
{
	struct pollfd pfd = {.fd = sfd, .events = POLLOUT};
	int fl = fcntl(sfd, F_GETFL), err = 0, waited = 0;
	socklen_t el = sizeof(err);
	long r;

	if (fl < 0)
		return -EBADF;
	if (fl & O_NONBLOCK)
		return connect(sfd, addr, len) ? -errno : 0;
	if (fcntl(sfd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	for (;;) {
		r = connect(sfd, addr, len) ? -errno : 0;
		/* a unix socket whose listener's backlog is full: the caller would wait */
		if (r != -EAGAIN || waited >= CONNECT_WAIT_MS)
			break;
		poll(NULL, 0, CONNECT_RETRY_MS);
		waited += CONNECT_RETRY_MS;
	}
	(void)fcntl(sfd, F_SETFL, fl);
	if (r == -EAGAIN)
		return -ETIMEDOUT;
	if (r != -EINPROGRESS)
		return r;
	/* a handshake under way: the caller would wait for it */
	r = poll(&pfd, 1, CONNECT_WAIT_MS);
	if (r <= 0)
		return -ETIMEDOUT;
	if (getsockopt(sfd, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
		return -errno;
	return err ? -err : 0;
}

/* A pidfd of the calling thread (its descriptor table: a thread that unshared its own has
 * another), PIDFD_THREAD (Linux 6.9); before that, of its thread group's leader (the
 * declaration in run_files_emul.h). */
int recorder_caller_pidfd(pid_t tid)
{
	char p[48], buf[2048], *s;
	long tgid;
	ssize_t n;
	int fd;

	fd = (int)syscall(SYS_pidfd_open, tid, RF_PIDFD_THREAD);
	if (fd >= 0 || errno != EINVAL)
		return fd;
	fd = (int)syscall(SYS_pidfd_open, tid, 0);
	if (fd >= 0 || errno != EINVAL)
		return fd;
	/* not a leader, on a kernel without PIDFD_THREAD */
	snprintf(p, sizeof(p), "/proc/%d/status", (int)tid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	s = strstr(buf, "\nTgid:");
	if (!s)
		return -1;
	tgid = strtol(s + 6, NULL, 10);
	return tgid > 0 ? (int)syscall(SYS_pidfd_open, (pid_t)tgid, 0) : -1;
}

/* connect_here() as the caller. */
static long connect_as_caller(pid_t pid, int sfd, const void *addr, socklen_t len)
{
	struct as_caller a;
	long r = become_caller(pid, &a);

	if (!r)
		r = connect_here(sfd, addr, len);
	if (become_recorder(&a))
		return -EACCES;
	return r;
}

/*
 * Whether the learning sandbox lets a program reach the socket file @fd (O_PATH, opened in
 * the caller's view): one the person named (the same file as a named path reaches now in
 * the caller's view, with no symbolic link on the way: a link the program made in its
 * writable folder does not turn a named path into another socket), or one in the sandbox's
 * own /tmp (a tmpfs of its own that no host service can have a socket in; never the host's
 * /tmp, on another device).
 */
static bool socket_allowed(const struct recorder_emul_ctx *c, int fd)
{
	struct stat st, nst, host;
	bool ok = false;
	int nfd;

	if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode))
		return false;
	for (size_t i = 0; !ok && i < c->nsockets; i++) {
		nfd = openat2_in(c->root, c->sockets[i], 0, RESOLVE_NO_SYMLINKS);
		if (nfd < 0)
			continue;
		ok = !fstat(nfd, &nst) && nst.st_dev == st.st_dev && nst.st_ino == st.st_ino;
		close(nfd);
	}
	if (ok)
		return true;
	/* the sandbox's own /tmp: not the host's (the launcher's), which holds other programs'
	 * sockets (an X server's) */
	nfd = openat2_in(c->root, "/tmp", O_DIRECTORY, RESOLVE_NO_SYMLINKS);
	if (nfd < 0)
		return false;
	ok = !fstat(nfd, &nst) && nst.st_dev == st.st_dev && !stat("/tmp", &host) &&
	     host.st_dev != nst.st_dev;
	close(nfd);
	return ok;
}

/* A unix socket by path: refused (and recorded so) unless socket_allowed(), else connected
 * here to the file opened in the caller's view. 1 (handled) always. */
static int connect_path(const struct recorder_emul_ctx *c, int sfd, const struct sockaddr_un *sun,
			size_t len, struct recorder_emul_out *out)
{
	struct sockaddr_un to = {.sun_family = AF_UNIX};
	size_t plen = len - offsetof(struct sockaddr_un, sun_path);
	struct epath ep;
	struct statfs sf;
	struct stat st;
	bool exact = true;
	int fd = -1, r;

	memcpy(ep.raw, sun->sun_path, plen);
	ep.raw[plen] = '\0';
	r = prep_str(c, AT_FDCWD, &ep, out->path);
	if (r == -ENOENT)
		return answer(out, r, -1);
	if (r || !ep.name || ep.must_dir)
		goto refuse; /* a path the recorder cannot follow exactly */
	r = open_path(c, &ep, false, &fd);
	if (r == SKIP) {
		/* links on the way the fold may not follow (/var/run/nscd/socket): what they
		 * reach is judged all the same, but recorded as nothing when it is let through
		 * (its name is not sure); a miss is answered as the kernel would */
		exact = false;
		fd = openat2_in(c->root, ep.abs, 0, 0);
		if (fd < 0)
			return answer(out, errno == ENOENT || errno == ENOTDIR ? -errno : -EACCES,
				      -1);
		if (fstatfs(fd, &sf) < 0 || sf.f_type == PROC_SUPER_MAGIC) {
			close(fd);
			goto refuse;
		}
		r = 0;
	}
	if (r)
		return answer(out, r, -1); /* ENOENT, EACCES, ...: the caller's own error */
	if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode)) {
		close(fd);
		return answer(out, -ECONNREFUSED, -1); /* the kernel's answer for a file */
	}
	if (!socket_allowed(c, fd)) {
		close(fd);
		goto refuse;
	}
	snprintf(to.sun_path, sizeof(to.sun_path), "/proc/self/fd/%d", fd);
	r = (int)connect_as_caller(c->pid, sfd, &to, sizeof(to));
	close(fd);
	return answer(out, r, exact ? TRACE_CONNECT : -1);
refuse:
	out->ret = -EACCES;
	out->op = out->path[0] == '/' ? TRACE_CONNECT : -1;
	out->refused = true;
	return 1;
}

/*
 * connect(2), every one (the trace filter watches them all): the recorder carries it out on
 * the caller's own socket (pidfd_getfd) with the address read once, so the kernel never reads
 * the address or looks the descriptor up again (CONTINUE would: a second thread could swap
 * either in between). A unix socket by path goes through connect_path(); everything else (an
 * inet socket, an abstract or unnamed unix address, which name only the sandbox's own
 * network namespace) is connected as given.
 */
static int do_connect(const struct recorder_emul_ctx *c, const struct emul_call *k,
		      const uint64_t args[6], struct recorder_emul_out *out)
{
	int sockfd = (int)args[0], pidfd = -1, sfd = -1, domain = 0, ret;
	long len = (long)(int)args[2];
	struct sockaddr_storage ss;
	socklen_t dl = sizeof(domain);

	(void)k;
	/* move_addr_to_kernel()'s checks, then the bytes, once */
	if (len < 0 || len > (long)sizeof(ss))
		return answer(out, -EINVAL, -1);
	if (len) {
		/* NOLINTNEXTLINE(performance-no-int-to-ptr): an address in the caller's memory */
		struct iovec l = {&ss, (size_t)len}, rr = {(void *)(uintptr_t)args[1], (size_t)len};

		if (process_vm_readv(c->pid, &l, 1, &rr, 1, 0) != (ssize_t)len)
			return answer(out, -EFAULT, -1);
	}
	/* the caller's pidfd (its thread's), opened before its call was checked to be still
	 * waiting (run_files.c, ctx_open()): a pid reused since cannot hand over another
	 * process's socket; the context owns it */
	pidfd = c->pidfd;
	if (pidfd < 0) {
		ret = answer(out, -EACCES, -1);
		goto out;
	}
	sfd = (int)syscall(SYS_pidfd_getfd, pidfd, sockfd, 0);
	if (sfd < 0) {
		ret = answer(out, errno == EBADF ? -EBADF : -EACCES, -1);
		goto out;
	}
	if (getsockopt(sfd, SOL_SOCKET, SO_DOMAIN, &domain, &dl) < 0) {
		ret = answer(out, errno == ENOTSOCK ? -ENOTSOCK : -EACCES, -1);
		goto out;
	}
	if (domain == AF_UNIX && len > (long)offsetof(struct sockaddr_un, sun_path) &&
	    len <= (long)sizeof(struct sockaddr_un) && ss.ss_family == AF_UNIX &&
	    ((struct sockaddr_un *)&ss)->sun_path[0])
		ret = connect_path(c, sfd, (struct sockaddr_un *)&ss, (size_t)len, out);
	else
		ret = answer(out, connect_as_caller(c->pid, sfd, &ss, (socklen_t)len), -1);
out:
	if (sfd >= 0)
		close(sfd);
	return ret;
}

int recorder_emulate(const struct recorder_emul_ctx *c, int nr, const uint64_t args[6],
		     struct recorder_emul_out *out)
{
	const struct emul_call *k = NULL;

	out->ret = 0;
	out->op = out->op2 = -1;
	out->path[0] = out->path2[0] = '\0';
	out->refused = false;
	for (size_t i = 0; i < WD_ARRAY_SIZE(emul_calls); i++)
		if (emul_calls[i].nr == nr)
			k = &emul_calls[i];
	if (!k)
		return 0;
	switch (k->kind) {
	case K_STAT:
		return do_stat(c, k, args, out);
	case K_STATX:
		return do_statx(c, k, args, out);
	case K_ACCESS:
		return do_access(c, k, args, out);
	case K_READLINK:
		return do_readlink(c, k, args, out);
	case K_MKDIR:
		return do_mkdir(c, k, args, out);
	case K_UNLINK:
		return do_unlink(c, k, args, out);
	case K_RENAME:
		return do_rename(c, k, args, out);
	case K_LINK:
		return do_link(c, k, args, out);
	case K_SYMLINK:
		return do_symlink(c, k, args, out);
	case K_TRUNCATE:
		return do_truncate(c, k, args, out);
	case K_CHMOD:
		return do_chmod(c, k, args, out);
	case K_CONNECT:
		return do_connect(c, k, args, out);
	}
	return 0;
}

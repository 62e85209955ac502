/* emul.c - trace mode: the recorder carries a path call out itself, on its own copy of the
 * path, inside the caller's view of the files (emul.h has why). A table of the calls (where
 * each keeps its arguments), then one function per kind; connect is connect.c's, the opens
 * open.c's, the walk inside the sandbox view.c's.
 *
 * Theory of operation. One call, in stages:
 *
 *   check     the call's flags and numbers as the kernel checks them before it looks at a
 *             path; anything the kernel would refuse, or that we would do differently
 *             (RENAME_WHITEOUT, linkat AT_EMPTY_PATH, a negative length), is not handled
 *   read      each path once (recorder_read_string()) into our buffer: the caller's other
 *             threads may change its memory from now on, it no longer matters
 *   resolve   a relative path against the caller's current folder or its dirfd (checked to
 *             be the very folder that name reaches inside the sandbox), folded lexically;
 *             the sandbox's own /proc and /dev are not handled (view.c)
 *   open      the parent folder (calls that do not follow the last component) or the whole
 *             path (calls that do) with openat2 RESOLVE_IN_ROOT from the caller's root, first
 *             with no symbolic link allowed: an error then is the error the caller would have
 *             had; with links on the way, only a success counts, and not one in a procfs
 *             (/proc/self names the recorder there, not the caller). A ".." in the path must
 *             reach the same file as the lexical fold does (a link before it would not)
 *   act       the *at call on the last component from the parent (no following, so no link
 *             is resolved against the recorder's root), or the call on the opened file
 *             (AT_EMPTY_PATH, /proc/self/fd/N); a result buffer is written into the caller
 *   record    what it did, on the path we used: out->op/path, out->op2/path2
 *
 * Identity: the recorder is a process with the sandbox user's whole identity (real, effective,
 * saved and file system ids, groups, no capability: process.c) and the caller's umask;
 * access checks use those ids (AT_EACCESS).
 */
#include "recorder/internal.h"
#include "trace/file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

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

static int dirfd_arg(const struct emul_call *k, int which, const uint64_t args[6])
{
	int i = which == 1 ? k->dirfd : k->dirfd2;

	return i < 0 ? AT_FDCWD : (int)args[i];
}

/* ------------------------------------------------------------ the calls */

/* Open the target of a look: the whole path (following its last link) or its parent (a call
 * that does not follow, about a name). Return as recorder_open_path(). */
static int open_look(const struct recorder_emul_ctx *c, const struct recorder_epath *ep,
		     bool nofollow, int *fd, bool *by_name)
{
	*by_name = nofollow && ep->name && !ep->must_dir;
	return recorder_open_path(c, ep, *by_name, fd);
}

static int do_stat(const struct recorder_emul_ctx *c, const struct emul_call *k,
		   const uint64_t args[6], struct recorder_emul_out *out)
{
	unsigned flags = (k->flags >= 0 ? (unsigned)args[k->flags] : 0) | k->fixed;
	struct recorder_epath ep;
	struct stat st;
	bool by_name;
	int r, fd = -1;

	if (flags & ~(unsigned)(AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_EMPTY_PATH))
		return 0;
	r = recorder_prep(c, dirfd_arg(k, 1, args), args[k->path], &ep, out->path);
	if (r == -ENOENT && (flags & AT_EMPTY_PATH))
		return 0; /* fstat() by a descriptor: no path */
	if (r)
		return r == RECORDER_SKIP ? 0 : emul_answer(out, r, -1);
	r = open_look(c, &ep, flags & AT_SYMLINK_NOFOLLOW, &fd, &by_name);
	if (r == RECORDER_SKIP)
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
	if (!r && recorder_write_caller(c->pid, args[k->arg], &st, sizeof(st)))
		return emul_answer(out, -EFAULT, -1);
	return emul_answer_look(out, r);
}

static int do_statx(const struct recorder_emul_ctx *c, const struct emul_call *k,
		    const uint64_t args[6], struct recorder_emul_out *out)
{
	unsigned flags = (unsigned)args[k->flags], mask = (unsigned)args[k->arg2];
	struct statx stx;
	struct recorder_epath ep;
	bool by_name;
	int r, fd = -1;

	if (flags &
	    ~(unsigned)(AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_EMPTY_PATH | AT_STATX_SYNC_TYPE))
		return 0;
	if ((flags & AT_STATX_SYNC_TYPE) == AT_STATX_SYNC_TYPE || (mask & STATX__RESERVED))
		return 0;
	r = recorder_prep(c, dirfd_arg(k, 1, args), args[k->path], &ep, out->path);
	if (r == -ENOENT && (flags & AT_EMPTY_PATH))
		return 0;
	if (r)
		return r == RECORDER_SKIP ? 0 : emul_answer(out, r, -1);
	r = open_look(c, &ep, flags & AT_SYMLINK_NOFOLLOW, &fd, &by_name);
	if (r == RECORDER_SKIP)
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
	if (!r && recorder_write_caller(c->pid, args[k->arg], &stx, sizeof(stx)))
		return emul_answer(out, -EFAULT, -1);
	return emul_answer_look(out, r);
}

static int do_access(const struct recorder_emul_ctx *c, const struct emul_call *k,
		     const uint64_t args[6], struct recorder_emul_out *out)
{
	unsigned flags = k->flags >= 0 ? (unsigned)args[k->flags] : 0;
	unsigned mode = (unsigned)args[k->arg];
	struct recorder_epath ep;
	bool by_name;
	int r, fd = -1;

	if (flags & ~(unsigned)(AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
		return 0;
	if (mode & ~(unsigned)S_IRWXO)
		return 0;
	r = recorder_prep(c, dirfd_arg(k, 1, args), args[k->path], &ep, out->path);
	if (r == -ENOENT && (flags & AT_EMPTY_PATH))
		return 0;
	if (r)
		return r == RECORDER_SKIP ? 0 : emul_answer(out, r, -1);
	r = open_look(c, &ep, flags & AT_SYMLINK_NOFOLLOW, &fd, &by_name);
	if (r == RECORDER_SKIP)
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
	return emul_answer_look(out, r);
}

static int do_readlink(const struct recorder_emul_ctx *c, const struct emul_call *k,
		       const uint64_t args[6], struct recorder_emul_out *out)
{
	int size = (int)args[k->arg2];
	char target[PATH_MAX];
	struct recorder_epath ep;
	ssize_t n;
	int r, fd = -1;

	if (size <= 0)
		return 0;
	r = recorder_prep(c, dirfd_arg(k, 1, args), args[k->path], &ep, out->path);
	if (r)
		return r == RECORDER_SKIP ? 0 : emul_answer(out, r, -1);
	if (!ep.name || ep.must_dir)
		return 0;
	r = recorder_open_path(c, &ep, true, &fd);
	if (r == RECORDER_SKIP)
		return 0;
	if (r)
		return emul_answer_look(out, r);
	n = readlinkat(fd, ep.name, target, sizeof(target));
	close(fd);
	if (n < 0)
		return emul_answer_look(out, -errno);
	if ((size_t)n >= sizeof(target) && size > n)
		return 0; /* longer than we read: the kernel would give more */
	if (n > size)
		n = size;
	if (recorder_write_caller(c->pid, args[k->arg], target, (size_t)n))
		return emul_answer(out, -EFAULT, -1);
	return emul_answer_look(out, n);
}

static int do_mkdir(const struct recorder_emul_ctx *c, const struct emul_call *k,
		    const uint64_t args[6], struct recorder_emul_out *out)
{
	struct recorder_epath ep;
	mode_t old;
	int r, fd = -1;

	r = recorder_prep(c, dirfd_arg(k, 1, args), args[k->path], &ep, out->path);
	if (r)
		return r == RECORDER_SKIP ? 0 : emul_answer(out, r, -1);
	if (!ep.name)
		return 0; /* mkdir("x/."): EEXIST or ENOENT by cases we leave to the kernel */
	r = recorder_open_path(c, &ep, true, &fd);
	if (r)
		return r == RECORDER_SKIP ? 0 : emul_answer(out, r, -1);
	old = umask(c->umask);
	r = mkdirat(fd, ep.name, (mode_t)args[k->arg]) ? -errno : 0;
	umask(old);
	close(fd);
	return emul_answer(out, r, TRACE_CREATE);
}

static int do_unlink(const struct recorder_emul_ctx *c, const struct emul_call *k,
		     const uint64_t args[6], struct recorder_emul_out *out)
{
	unsigned flags = (k->flags >= 0 ? (unsigned)args[k->flags] : 0) | k->fixed;
	struct recorder_epath ep;
	int r, fd = -1;

	if (flags & ~(unsigned)AT_REMOVEDIR)
		return 0;
	r = recorder_prep(c, dirfd_arg(k, 1, args), args[k->path], &ep, out->path);
	if (r)
		return r == RECORDER_SKIP ? 0 : emul_answer(out, r, -1);
	/* rmdir("x/") removes x; unlink("x/") and "x/." are the kernel's to answer */
	if (!ep.name || (ep.must_dir && !(flags & AT_REMOVEDIR)))
		return 0;
	r = recorder_open_path(c, &ep, true, &fd);
	if (r)
		return r == RECORDER_SKIP ? 0 : emul_answer(out, r, -1);
	r = unlinkat(fd, ep.name, (int)flags) ? -errno : 0;
	close(fd);
	return emul_answer(out, r, TRACE_REMOVE);
}

/*
 * The two paths of a rename or a link (@k->path, @k->path2 relative to the call's first and
 * second folder arguments): both read from the caller before either is looked up, as the
 * kernel does, then prepared, the first recorded in @rec_from, the second in @rec_to.
 * @ret_from, @ret_to are the caller's to free either way. Return: 0 to go on; else 1 with
 * *@ret what the caller returns (0: let the call through, or the answer made).
 */
static int two_paths(const struct recorder_emul_ctx *c, const struct emul_call *k,
		     const uint64_t args[6], struct recorder_emul_out *out,
		     struct recorder_epath **ret_from, struct recorder_epath **ret_to,
		     char *rec_from, char *rec_to, int *ret)
{
	struct recorder_epath *from, *to;
	int r;

	*ret = 0;
	from = *ret_from = malloc(sizeof(*from));
	to = *ret_to = malloc(sizeof(*to));
	if (!from || !to) {
		*ret = -ENOMEM;
		return 1;
	}
	if (recorder_read_string(c->pid, args[k->path], from->raw, sizeof(from->raw)) < 0 ||
	    recorder_read_string(c->pid, args[k->path2], to->raw, sizeof(to->raw)) < 0)
		return 1;
	r = recorder_prep_str(c, dirfd_arg(k, 1, args), from, rec_from);
	if (!r)
		r = recorder_prep_str(c, dirfd_arg(k, 2, args), to, rec_to);
	if (r == RECORDER_SKIP)
		return 1;
	if (r) {
		*ret = emul_answer(out, r, -1);
		return 1;
	}
	return 0;
}

/* what two_paths() and the lookups after it hold, released (-1, NULL: nothing) */
static void two_paths_free(struct recorder_epath *from, struct recorder_epath *to, int fd, int fd2)
{
	if (fd >= 0)
		close(fd);
	if (fd2 >= 0)
		close(fd2);
	free(from);
	free(to);
}

static int do_rename(const struct recorder_emul_ctx *c, const struct emul_call *k,
		     const uint64_t args[6], struct recorder_emul_out *out)
{
	unsigned flags = k->flags >= 0 ? (unsigned)args[k->flags] : 0;
	struct recorder_epath *from = NULL, *to = NULL;
	int r, fd = -1, fd2 = -1, ret = 0;

	if (flags & ~(unsigned)(RENAME_NOREPLACE | RENAME_EXCHANGE))
		return 0; /* RENAME_WHITEOUT needs a privilege the recorder may have and the
			     caller not */
	if ((flags & RENAME_NOREPLACE) && (flags & RENAME_EXCHANGE))
		return 0;
	if (two_paths(c, k, args, out, &from, &to, out->path, out->path2, &ret))
		goto out;
	if (!from->name || !to->name || from->must_dir || to->must_dir)
		goto out;
	r = recorder_open_path(c, from, true, &fd);
	if (!r)
		r = recorder_open_path(c, to, true, &fd2);
	if (r == RECORDER_SKIP)
		goto out;
	if (!r)
		r = renameat2(fd, from->name, fd2, to->name, flags) ? -errno : 0;
	ret = emul_answer(out, r, TRACE_RENAME);
	out->op2 = r ? -1 : TRACE_RENAME;
out:
	two_paths_free(from, to, fd, fd2);
	return ret;
}

static int do_link(const struct recorder_emul_ctx *c, const struct emul_call *k,
		   const uint64_t args[6], struct recorder_emul_out *out)
{
	unsigned flags = k->flags >= 0 ? (unsigned)args[k->flags] : 0;
	struct recorder_epath *from = NULL, *to = NULL;
	int r, fd = -1, fd2 = -1, ret = 0;
	bool follow = flags & AT_SYMLINK_FOLLOW;

	if (flags & ~(unsigned)AT_SYMLINK_FOLLOW)
		return 0; /* AT_EMPTY_PATH: a descriptor, and a privilege the caller may lack */
	/* the existing file is path2 (looked at), the new name path (created) */
	if (two_paths(c, k, args, out, &from, &to, out->path2, out->path, &ret))
		goto out;
	if (!to->name || to->must_dir || (!follow && (!from->name || from->must_dir)))
		goto out;
	/* the kernel looks the existing file up whole before the new name's folder */
	if (follow) {
		r = recorder_open_path(c, from, false, &fd);
	} else {
		struct stat st;

		r = recorder_open_path(c, from, true, &fd);
		if (!r && fstatat(fd, from->name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			r = -errno;
	}
	if (!r)
		r = recorder_open_path(c, to, true, &fd2);
	if (r == RECORDER_SKIP)
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
	ret = emul_answer(out, r, TRACE_CREATE);
	out->op2 = r ? -1 : TRACE_STAT;
out:
	two_paths_free(from, to, fd, fd2);
	return ret;
}

static int do_symlink(const struct recorder_emul_ctx *c, const struct emul_call *k,
		      const uint64_t args[6], struct recorder_emul_out *out)
{
	char target[PATH_MAX];
	struct recorder_epath ep;
	mode_t old;
	int r, fd = -1;

	/* the target is the link's content, not a path looked at: not recorded */
	r = recorder_read_string(c->pid, args[k->path2], target, sizeof(target));
	if (r < 0)
		return 0;
	if (!r)
		return emul_answer(out, -ENOENT, -1);
	r = recorder_prep(c, dirfd_arg(k, 1, args), args[k->path], &ep, out->path);
	if (r)
		return r == RECORDER_SKIP ? 0 : emul_answer(out, r, -1);
	if (!ep.name || ep.must_dir)
		return 0;
	r = recorder_open_path(c, &ep, true, &fd);
	if (r)
		return r == RECORDER_SKIP ? 0 : emul_answer(out, r, -1);
	old = umask(c->umask);
	r = symlinkat(target, fd, ep.name) ? -errno : 0;
	umask(old);
	close(fd);
	return emul_answer(out, r, TRACE_CREATE);
}

static int do_truncate(const struct recorder_emul_ctx *c, const struct emul_call *k,
		       const uint64_t args[6], struct recorder_emul_out *out)
{
	int64_t len = (int64_t)args[k->arg];
	struct rlimit lim;
	struct recorder_epath ep;
	char p[64];
	int r, fd = -1;

	if (len < 0)
		return 0;
	/* past the caller's file size limit the kernel signals the caller (SIGXFSZ): its own */
	if (prlimit(c->pid, RLIMIT_FSIZE, NULL, &lim) < 0 ||
	    (lim.rlim_cur != RLIM_INFINITY && (uint64_t)len > lim.rlim_cur))
		return 0;
	r = recorder_prep(c, dirfd_arg(k, 1, args), args[k->path], &ep, out->path);
	if (r)
		return r == RECORDER_SKIP ? 0 : emul_answer(out, r, -1);
	r = recorder_open_path(c, &ep, false, &fd);
	if (r)
		return r == RECORDER_SKIP ? 0 : emul_answer(out, r, -1);
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	r = truncate(p, (off_t)len) ? -errno : 0;
	close(fd);
	return emul_answer(out, r, TRACE_WRITE);
}

static int do_chmod(const struct recorder_emul_ctx *c, const struct emul_call *k,
		    const uint64_t args[6], struct recorder_emul_out *out)
{
	struct recorder_epath ep;
	char p[64];
	int r, fd = -1;

	r = recorder_prep(c, dirfd_arg(k, 1, args), args[k->path], &ep, out->path);
	if (r)
		return r == RECORDER_SKIP ? 0 : emul_answer(out, r, -1);
	r = recorder_open_path(c, &ep, false, &fd);
	if (r)
		return r == RECORDER_SKIP ? 0 : emul_answer(out, r, -1);
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	r = fchmodat(AT_FDCWD, p, (mode_t)args[k->arg], 0) ? -errno : 0;
	close(fd);
	return emul_answer(out, r, TRACE_WRITE);
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
		return recorder_emul_connect(c, args, out);
	}
	return 0;
}

/* open.c - trace mode's opens (open, openat, openat2, creat): the recorder opens the file
 * itself on its own copy of the path, inside the caller's view, with the caller's umask and
 * the recorder's identity (the user's), and hands the descriptor in
 * (SECCOMP_IOCTL_NOTIF_ADDFD); what it records is what the open did. An open it cannot carry
 * out exactly as the kernel would is left to the kernel (CONTINUE) and recorded as nothing. */
#include "recorder/internal.h"
#include "trace/file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* The bits open() and openat() keep (the kernel drops the rest); __O_TMPFILE less
 * O_DIRECTORY is its own bit. */
#define OPEN_VALID                                                                                 \
	(O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND | O_NONBLOCK | O_SYNC |      \
	 O_DSYNC | FASYNC | O_DIRECT | O_LARGEFILE | O_DIRECTORY | O_NOFOLLOW | O_NOATIME |        \
	 O_CLOEXEC | O_PATH | __O_TMPFILE)
#define OPEN_PATH_FLAGS (O_DIRECTORY | O_NOFOLLOW | O_PATH | O_CLOEXEC)
#define OPEN_TMPFILE_BIT (__O_TMPFILE & ~O_DIRECTORY)

/* The errors a walk without symbolic links gives exactly as the caller's own would. */
static bool exact_errno(int e)
{
	switch (e) {
	case ENOENT:
	case ENOTDIR:
	case EACCES:
	case EPERM:
	case ENAMETOOLONG:
	case EEXIST:
	case EISDIR:
	case EROFS:
	case ETXTBSY:
		return true;
	default:
		return false;
	}
}

static bool on_procfs(int fd)
{
	struct statfs sf;

	return fstatfs(fd, &sf) < 0 || sf.f_type == PROC_SUPER_MAGIC;
}

/*
 * Open @upath (absolute, as the caller's walk goes: not folded) inside @root with @flags,
 * @mode and the caller's @cres. A walk with no symbolic link is the caller's own, its error
 * too. With links on the way: the folder (links allowed, not in a procfs, whose /proc/self is
 * the recorder's) then the last name without links; a link at the end: only a success
 * counts. Return: 0 and *@ret_fd, a negative errno for the caller, or RECORDER_SKIP.
 */
static int open_exact(int root, const char *upath, uint64_t flags, uint64_t mode, uint64_t cres,
		      int *ret_fd)
{
	uint64_t in = RESOLVE_IN_ROOT | cres;
	char dir[PATH_MAX];
	const char *last;
	int fd, dfd, e;

	fd = recorder_openat2(root, upath, flags, mode, in | RESOLVE_NO_SYMLINKS);
	if (fd >= 0)
		goto done;
	e = errno;
	if (e != ELOOP)
		return exact_errno(e) ? -e : RECORDER_SKIP;
	if (cres & RESOLVE_NO_SYMLINKS)
		return -ELOOP;
	last = strrchr(upath, '/');
	if (!last || !last[1] || !strcmp(last + 1, ".") || !strcmp(last + 1, "..") ||
	    (size_t)(last - upath) >= sizeof(dir))
		return RECORDER_SKIP;
	memcpy(dir, upath, (size_t)(last - upath));
	dir[last - upath] = '\0';
	dfd = recorder_openat2(root, dir[0] ? dir : "/", O_PATH | O_DIRECTORY, 0, in);
	if (dfd < 0)
		return RECORDER_SKIP;
	if (on_procfs(dfd)) {
		close(dfd);
		return RECORDER_SKIP;
	}
	fd = recorder_openat2(dfd, last + 1, flags, mode,
			      RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | cres);
	e = errno;
	close(dfd);
	if (fd >= 0)
		goto done;
	if (e != ELOOP)
		return exact_errno(e) ? -e : RECORDER_SKIP;
	if (flags & O_NOFOLLOW)
		return -ELOOP; /* a link at the end, not to be followed */
	fd = recorder_openat2(root, upath, flags, mode, in);
	if (fd < 0)
		return RECORDER_SKIP;
done:
	if (on_procfs(fd)) {
		close(fd);
		return RECORDER_SKIP;
	}
	*ret_fd = fd;
	return 0;
}

/* O_CREAT without O_EXCL: an existing file is opened (write), else made (create), told
 * apart by O_EXCL; a name that keeps changing between the two is skipped. */
static int open_creat(int root, const char *upath, uint64_t flags, uint64_t mode, uint64_t cres,
		      int *ret_fd, bool *created)
{
	for (int tries = 0; tries < 3; tries++) {
		int r = open_exact(root, upath, flags & ~(uint64_t)O_CREAT, 0, cres, ret_fd);

		if (r != -ENOENT)
			return r;
		r = open_exact(root, upath, flags | O_EXCL, mode, cres, ret_fd);
		if (r != -EEXIST) {
			*created = !r;
			return r;
		}
	}
	return RECORDER_SKIP;
}

/* A ".." component in @raw (the folded name may then not be what the walk reached). */
static bool has_dotdot(const char *raw)
{
	for (const char *s = raw; (s = strstr(s, "..")); s += 2)
		if ((s == raw || s[-1] == '/') && (s[2] == '\0' || s[2] == '/'))
			return true;
	return false;
}

/* Does @folded reach the object @fd is (".." in the caller's path)? */
static bool same_object(int root, const char *folded, uint64_t flags, int fd)
{
	struct stat a, b;
	int f = recorder_openat2(root, folded, O_PATH | (flags & O_NOFOLLOW), 0, RESOLVE_IN_ROOT);
	bool same;

	if (f < 0)
		return false;
	same = !fstat(f, &a) && !fstat(fd, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
	close(f);
	return same;
}

/* An open's arguments, as the kernel takes them (build_open_how()). Return: false for what is
 * not carried out (O_TMPFILE: an unnamed file; FASYNC; O_ACCMODE 3; openat2 with another
 * struct size or resolve flags beyond NO_SYMLINKS/NO_MAGICLINKS). */
static bool open_args(const struct seccomp_notif *req, int *dirfd, uint64_t *paddr, uint64_t *flags,
		      uint64_t *mode, uint64_t *cres)
{
	const __u64 *a = req->data.args;

	*dirfd = AT_FDCWD;
	*cres = 0;
	switch (req->data.nr) {
	case 2: /* open */
		*paddr = a[0], *flags = (unsigned)a[1], *mode = (unsigned)a[2];
		break;
	case 85: /* creat */
		*paddr = a[0], *flags = O_CREAT | O_WRONLY | O_TRUNC, *mode = (unsigned)a[1];
		break;
	case 257: /* openat */
		*dirfd = (int)a[0], *paddr = a[1], *flags = (unsigned)a[2], *mode = (unsigned)a[3];
		break;
	case 437: { /* openat2: read once; the kernel's own copy no longer matters */
		struct open_how how;
		struct iovec l = {&how, sizeof(how)};
		/* NOLINTNEXTLINE(performance-no-int-to-ptr): an address in the caller's memory */
		struct iovec r = {(void *)(uintptr_t)a[2], sizeof(how)};

		if (a[3] != sizeof(how) ||
		    process_vm_readv((pid_t)req->pid, &l, 1, &r, 1, 0) != (ssize_t)sizeof(how))
			return false;
		if (how.resolve & ~(uint64_t)(RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS))
			return false;
		*dirfd = (int)a[0], *paddr = a[1], *flags = how.flags, *mode = how.mode;
		*cres = how.resolve & RESOLVE_NO_SYMLINKS;
		return !(*flags & (OPEN_TMPFILE_BIT | FASYNC)) && (*flags & O_ACCMODE) != O_ACCMODE;
	}
	default:
		return false;
	}
	*flags &= OPEN_VALID;
	if (!(*flags & (O_CREAT | OPEN_TMPFILE_BIT)))
		*mode = 0;
	*mode &= 07777;
	if (*flags & O_PATH)
		*flags &= OPEN_PATH_FLAGS;
	return !(*flags & (OPEN_TMPFILE_BIT | FASYNC)) && (*flags & O_ACCMODE) != O_ACCMODE;
}

/* What an open that succeeded did. */
static int open_op(uint64_t flags, bool created)
{
	if (flags & O_PATH)
		return TRACE_STAT;
	if (created)
		return TRACE_CREATE;
	if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC))
		return TRACE_WRITE;
	return TRACE_READ; /* a file read, a folder listed */
}

int recorder_trace_open(struct recorder *rf, const struct seccomp_notif *req,
			struct seccomp_notif_resp *resp)
{
	char raw[PATH_MAX], folded[PATH_MAX], upath[PATH_MAX * 2 + 2];
	uint64_t paddr, flags, mode, cres;
	pid_t pid = (pid_t)req->pid;
	struct recorder_call x;
	bool created = false, name_ok, nonblock;
	int dirfd, fd = -1, r, op;
	mode_t old = 0;

	if (!open_args(req, &dirfd, &paddr, &flags, &mode, &cres))
		return 0;
	r = recorder_read_string(pid, paddr, raw, sizeof(raw));
	if (r == -EPERM || r == -EACCES)
		rf->unreadable++;
	if (r <= 0)
		return 0; /* unreadable or empty: the kernel answers it */
	if (recorder_call_open(pid, flags & O_CREAT, false, &x))
		return 0;
	r = recorder_resolve(&x.c, dirfd, raw, folded);
	if (!r && recorder_sandbox_own(folded))
		r = RECORDER_SKIP;
	if (!r) {
		/* the walk the caller's kernel would make: the base, then its bytes unfolded */
		char base[PATH_MAX];

		if (raw[0] == '/')
			r = snprintf(upath, sizeof(upath), "%s", raw) >= (int)sizeof(upath);
		else
			r = recorder_resolve(&x.c, dirfd, ".", base) ||
			    snprintf(upath, sizeof(upath), "%s/%s", base, raw) >=
				(int)sizeof(upath);
		if (!r && strlen(upath) >= PATH_MAX)
			r = RECORDER_SKIP;
	}
	/* still in that call: what we carry out is its */
	if (r || ioctl(rf->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) < 0) {
		recorder_call_close(&x);
		return 0;
	}
	if (flags & O_CREAT)
		old = umask(x.c.umask);
	/* FIFOs and devices are the kernel's: our open must not block or take a terminal */
	nonblock = flags & O_NONBLOCK;
	if (!(flags & O_PATH))
		flags |= O_NONBLOCK | O_NOCTTY;
	if ((flags & O_CREAT) && !(flags & O_EXCL))
		r = open_creat(x.c.root, upath, flags, mode, cres, &fd, &created);
	else {
		r = open_exact(x.c.root, upath, flags, mode, cres, &fd);
		created = !r && (flags & O_CREAT);
	}
	if (flags & O_CREAT)
		umask(old);
	if (!r && !(flags & O_PATH)) {
		struct stat st;

		if (fstat(fd, &st) < 0 || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
			r = RECORDER_SKIP; /* opened again by the kernel: nothing happened to it */
	}
	if (r == RECORDER_SKIP) {
		if (fd >= 0)
			close(fd);
		recorder_call_close(&x);
		return 0;
	}
	name_ok = !has_dotdot(raw) || (!r && same_object(x.c.root, folded, flags, fd));
	op = r ? (r == -ENOENT ? TRACE_MISSING : -1) : open_op(flags, created);
	/* before the answer: the caller still waits, its name is readable */
	if (name_ok)
		recorder_trace_note(rf, op, folded, false, pid);
	if (!r) {
		struct seccomp_notif_addfd add = {
		    .id = req->id,
		    .flags = SECCOMP_ADDFD_FLAG_SEND,
		    .srcfd = (__u32)fd,
		    .newfd = 0,
		    .newfd_flags = (__u32)(flags & O_CLOEXEC),
		};

		if (!nonblock)
			(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
		r = ioctl(rf->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add) < 0 ? -errno : 0;
		close(fd);
		/* the caller got the descriptor and its answer; else tell it why (EMFILE) */
		if (r && r != -ENOENT) {
			resp->flags = 0;
			resp->error = r;
			(void)ioctl(rf->listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
		}
	} else {
		resp->flags = 0;
		resp->error = r;
		(void)ioctl(rf->listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
	}
	recorder_call_close(&x);
	return 1;
}

/* judge.c - audit.files denied and all: one notification read while its caller waits, the
 * call let go on unchanged (CONTINUE), and the path judged: granted (the sandbox shows it),
 * denied (the host has it and the sandbox does not, or only as a mask) or missing. In denied
 * mode a name in a folder the sandbox shows as the host's own, or in the runtime base, is
 * granted without a look (recorder.h has the stages). */
#include "recorder/internal.h"
#include "sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <unistd.h>

/* The folder a relative path of @pid starts from: its current folder (@dirfd AT_FDCWD) or the
 * one its descriptor @dirfd names, as the sandbox names it. */
static int read_base(pid_t pid, int dirfd, char *out, size_t size)
{
	char p[64];
	ssize_t len;

	if (dirfd == AT_FDCWD)
		snprintf(p, sizeof(p), "/proc/%d/cwd", pid);
	else
		snprintf(p, sizeof(p), "/proc/%d/fd/%d", pid, dirfd);
	len = readlink(p, out, size - 1);
	if (len < 0)
		return -errno;
	if ((size_t)len >= size - 1)
		return -ENAMETOOLONG;
	out[len] = '\0';
	return 0;
}

/* Does the sandbox show @path, and how: 1 as itself, 2 as a mask (/dev/null over a file),
 * 0 not at all, -errno when it cannot tell. */
static int sandbox_shows(int root_fd, const char *path, bool follow, struct stat *ret_st)
{
	int fd = recorder_openat2(root_fd, path, (uint64_t)(O_PATH | (follow ? 0 : O_NOFOLLOW)), 0,
				  RESOLVE_IN_ROOT);

	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	if (fstat(fd, ret_st) < 0) {
		close(fd);
		return -errno;
	}
	close(fd);
	if (S_ISCHR(ret_st->st_mode) && major(ret_st->st_rdev) == 1 && minor(ret_st->st_rdev) == 3)
		return 2;
	return 1;
}

/* Is @dir (absolute, folded) in the sandbox the host's own folder? Remembered. */
static bool dir_is_hosts(struct recorder *rf, const char *dir)
{
	size_t mask = RECORDER_DIR_CACHE_MAX * 2 - 1, i;
	struct stat in = {0}, host;
	bool same;

	for (i = wd_hash_str(dir) & mask; rf->dir_path[i]; i = (i + 1) & mask)
		if (!strcmp(rf->dir_path[i], dir))
			return rf->dir_same[i] == 1;
	same = sandbox_shows(rf->root_fd, dir, false, &in) == 1 && S_ISDIR(in.st_mode) &&
	       !fstatat(AT_FDCWD, dir, &host, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT) &&
	       in.st_dev == host.st_dev && in.st_ino == host.st_ino;
	if (rf->ndir < RECORDER_DIR_CACHE_MAX) {
		rf->dir_path[i] = strdup(dir);
		if (rf->dir_path[i]) {
			rf->dir_same[i] = same ? 1 : 2;
			rf->ndir++;
		}
	}
	return same;
}

/* A name in a folder the sandbox shows as the host's resolves alike on both sides, unless a
 * mask covers it or it is a symbolic link the call follows (its target may lie outside the
 * grants): no attempt past the grants is possible there. */
static bool resolves_alike(struct recorder *rf, const char *path, bool follow)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;
	struct stat st;

	if (!slash || !slash[1] || n >= sizeof(dir))
		return false;
	for (size_t i = 0; i < rf->nmask; i++)
		if (!strcmp(rf->mask[i], path))
			return false;
	memcpy(dir, path, n);
	dir[n] = '\0';
	if (!dir_is_hosts(rf, n ? dir : "/"))
		return false;
	/* the same folder: a missing name is missing on the host too, a present one shown */
	return !follow || fstatat(AT_FDCWD, path, &st, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT) < 0 ||
	       !S_ISLNK(st.st_mode);
}

/* GRANTED, DENIED or MISSING for an absolute, folded @path (@follow: the call follows a
 * symbolic link at its end). */
static enum recorder_verdict judge(struct recorder *rf, const char *path, bool follow)
{
	struct stat in = {0}, host;
	int shown;

	if (recorder_sandbox_own(path))
		return RECORDER_IGNORED;
	/* denied mode asks one question: could this name be one the grants hide? Not in the
	 * runtime base, which is Warden's and whole (a link there into a hidden /etc file, as
	 * Debian's sitecustomize.py is, is the base's edge, not the policy's) */
	if (rf->mode == POLICY_FILES_DENIED &&
	    (recorder_in_base(path) || resolves_alike(rf, path, follow)))
		return RECORDER_GRANTED;
	shown = sandbox_shows(rf->root_fd, path, follow, &in);
	if (shown < 0)
		return RECORDER_IGNORED;
	if (shown == 1)
		return RECORDER_GRANTED;
	/* not inside (or only its mask): on the host, as the program's user sees it? A path the
	 * user may not even look up (EACCES: under /root) is one the grants keep from it: an
	 * attempt is never hidden for lack of a view */
	if (fstatat(AT_FDCWD, path, &host, (follow ? 0 : AT_SYMLINK_NOFOLLOW) | AT_NO_AUTOMOUNT) <
	    0) {
		if (shown == 2)
			return RECORDER_GRANTED;
		return errno == ENOENT || errno == ENOTDIR || errno == ENAMETOOLONG ||
			       errno == ELOOP
			   ? RECORDER_MISSING
			   : RECORDER_DENIED;
	}
	if (shown == 2 && S_ISCHR(host.st_mode) && host.st_rdev == in.st_rdev)
		return RECORDER_GRANTED; /* /dev/null itself */
	return RECORDER_DENIED;
}

/* What one notification is about, read while its caller waits. */
struct access {
	int op;
	bool follow; /* the call follows a symbolic link at the end of the path */
	char path[PATH_MAX];
	bool ok;
};

static void read_access(struct recorder *rf, const struct seccomp_notif *req, struct access *a)
{
	const struct sandbox_watch *w = sandbox_watch_find(req->data.nr);
	char rel[PATH_MAX], base[PATH_MAX];
	pid_t pid = (pid_t)req->pid;
	int dirfd = AT_FDCWD, e;

	a->ok = false;
	a->path[0] = '\0';
	if (!w)
		return;
	e = recorder_read_string(pid, req->data.args[w->path_arg], rel, sizeof(rel));
	/* the kernel refused the read (ptrace restrictions): said at the end of the run */
	if (e == -EPERM || e == -EACCES)
		rf->unreadable++;
	if (e < 0)
		return;
	a->op = w->op;
	{
		uint64_t args[6];

		for (size_t i = 0; i < 6; i++)
			args[i] = req->data.args[i];
		a->follow = sandbox_watch_follows(w, args);
	}
	if (w->flags_arg >= 0 && (w->op == SANDBOX_OP_OPEN || w->op == SANDBOX_OP_CREATE) &&
	    req->data.nr != 85)
		a->op = sandbox_open_op(req->data.args[w->flags_arg]);
	if (req->data.nr == 437) { /* openat2: the flags are in struct open_how */
		struct open_how how;
		struct iovec l = {&how, sizeof(how)};
		/* NOLINTNEXTLINE(performance-no-int-to-ptr): an address in the caller's memory */
		struct iovec r = {(void *)(uintptr_t)req->data.args[2], sizeof(how)};

		if (process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)sizeof(how)) {
			a->op = sandbox_open_op(how.flags);
			a->follow = !(how.flags & O_NOFOLLOW);
		}
	}
	if (rel[0] != '/') {
		if (w->dirfd_arg >= 0)
			dirfd = (int)req->data.args[w->dirfd_arg];
		if (read_base(pid, dirfd, base, sizeof(base)))
			return;
	} else {
		base[0] = '\0';
	}
	if (recorder_join(base, rel, a->path, sizeof(a->path)))
		return;
	a->ok = true;
}

void recorder_handle_files(struct recorder *rf, const struct seccomp_notif *req,
			   struct seccomp_notif_resp *resp)
{
	enum recorder_verdict v;
	struct access a;
	char comm[16];
	bool program, keep;

	rf->seen++;
	program = recorder_is_program(rf, (pid_t)req->pid);
	if (program && rf->root_fd < 0) {
		char p[48];

		snprintf(p, sizeof(p), "/proc/%u/root", req->pid);
		rf->root_fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
		/* opened, then checked: the pid was still the caller's (not a reused one) */
		if (rf->root_fd >= 0 &&
		    ioctl(rf->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) < 0)
			wd_closep(&rf->root_fd);
	}
	a.ok = false;
	if (program && rf->root_fd >= 0)
		read_access(rf, req, &a);
	/* judged while the caller waits: the files are as its call will find them */
	v = a.ok ? judge(rf, a.path, a.follow) : RECORDER_IGNORED;
	keep = v == RECORDER_DENIED || (v == RECORDER_GRANTED && rf->mode == POLICY_FILES_ALL);
	/* still in that call: what was read was its arguments (a hint: see above) */
	if (keep && ioctl(rf->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) < 0)
		keep = false;
	if (keep)
		recorder_caller_comm((pid_t)req->pid, comm, sizeof(comm));
	resp->id = req->id;
	resp->val = 0;
	resp->error = 0;
	resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	/* ENOENT: the caller was interrupted or died meanwhile; nothing to answer */
	(void)ioctl(rf->listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
	if (keep)
		(void)recorder_record(rf, a.op, a.path, v, (pid_t)req->pid, comm);
}

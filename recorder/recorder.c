/* run_files.c - the file-access recorder of a run: a process of its own, holding the program's
 * identity, that answers the sandbox's seccomp notifications, lets every call go on unchanged,
 * and counts which host paths the program tried to reach without a grant (run_files.h has the
 * stages); in trace mode it carries the calls out itself and records what it did. */
#include "recorder/recorder.h"
#include "recorder/emul.h"
#include "trace/file.h"
#include "sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <limits.h>
#include <grp.h>
#include <linux/capability.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Linux 6.6: wake the waiting caller on this CPU when the answer is sent, and the recorder when
 * a call arrives (the uapi headers here are older) */
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP 1UL
#endif

/* The signal recorder_stop() interrupts the recorder's blocking receive with. */
#define RECORDER_WAKE SIGUSR2

/* The recorder's process's exit statuses: it could not become the user (or start), it could
 * not send its results. */
#define RECORDER_EXIT_SETUP 125
#define RECORDER_EXIT_SEND 126

/* Folders whose sandbox view is (or is not) the host's, remembered per run. */
#define DIR_CACHE_MAX 4096

/* Trace mode: processes whose exec is read from /proc/PID/exe at their next call. */
#define EXEC_PENDING_MAX 64

/* The hash table's size: a power of two, at least twice the entries it may hold. */
#define TABLE_SLOTS(max) ((max)*2)

struct recorder {
	enum policy_audit_files mode;
	size_t max;
	/* entries in first-seen order; slots index them (+1, 0 = empty) */
	struct recorder_entry *ent;
	size_t nent;
	uint32_t *slot;
	size_t nslot;
	uint64_t dropped;
	uint64_t seen;
	size_t bytes; /* of the kept paths */
	uint64_t unreadable;
	/* the supervision */
	int listener; /* the launcher's until recorder_start(), then the recorder's alone */
	pid_t outer;
	pid_t reaper;
	int root_fd; /* the sandbox's root, from the first process of the program */
	/* folder path -> 1: the sandbox shows the host's folder itself (same device and inode),
	 * so a name in it resolves alike on both sides; 2: it does not (absent, a mask, the
	 * sandbox's own); slots of DIR_CACHE_MAX * 2 */
	char **dir_path;
	uint8_t *dir_same;
	size_t ndir;
	/* the policy's masks (a file under /dev/null sits in a folder that is the host's) */
	char **mask;
	size_t nmask;
	/* the recorder's process (recorder_start()) and its results' pipe; lost: what it sent
	 * was malformed, or it died before its end */
	pid_t pid;
	int res_fd;
	bool running;
	bool lost;
	/* root mode: the identity the recorder's process takes (recorder_set_user()) */
	bool as_user;
	uid_t uid;
	gid_t gid;
	gid_t groups[RECORDER_MAX_GROUPS];
	int ngroups;
	/* trace mode: the unix sockets the person named (recorder_allow_sockets()) */
	char **sockets;
	size_t nsockets;
	/* trace mode: pids (and their thread group leaders) that called execve/execveat */
	pid_t exec_pending[EXEC_PENDING_MAX];
	size_t nexec;
	struct recorder_emul_out emul_out; /* 8 KiB: not on the stack */
};

int recorder_new(enum policy_audit_files mode, char *const *mask, size_t nmask,
		 struct recorder **ret)
{
	struct recorder *rf;

	if (mode != POLICY_FILES_DENIED && mode != POLICY_FILES_ALL && mode != POLICY_FILES_TRACE)
		return -EINVAL;
	rf = calloc(1, sizeof(*rf));
	if (!rf)
		return -ENOMEM;
	rf->listener = rf->root_fd = rf->res_fd = -1;
	rf->mode = mode;
	rf->max = mode == POLICY_FILES_DENIED ? RECORDER_MAX_DENIED : RECORDER_MAX_ALL;
	rf->nslot = TABLE_SLOTS(rf->max);
	rf->slot = calloc(rf->nslot, sizeof(*rf->slot));
	rf->dir_path = calloc(DIR_CACHE_MAX * 2, sizeof(*rf->dir_path));
	rf->dir_same = calloc(DIR_CACHE_MAX * 2, sizeof(*rf->dir_same));
	rf->mask = calloc(nmask + 1, sizeof(*rf->mask));
	if (!rf->slot || !rf->dir_path || !rf->dir_same || !rf->mask) {
		recorder_free(rf);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nmask; i++) {
		rf->mask[i] = strdup(mask[i]);
		if (!rf->mask[i]) {
			recorder_free(rf);
			return -ENOMEM;
		}
		rf->nmask++;
	}
	*ret = rf;
	return 0;
}

int recorder_set_user(struct recorder *rf, uid_t uid, gid_t gid, const gid_t *groups, int ngroups)
{
	if (ngroups < 0 || ngroups > RECORDER_MAX_GROUPS)
		return -EINVAL;
	rf->as_user = true;
	rf->uid = uid;
	rf->gid = gid;
	if (ngroups)
		memcpy(rf->groups, groups, (size_t)ngroups * sizeof(*groups));
	rf->ngroups = ngroups;
	return 0;
}

int recorder_allow_sockets(struct recorder *rf, char *const *paths, size_t n)
{
	char **v = calloc(n + 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		v[i] = strdup(paths[i]);
		if (!v[i]) {
			while (i--)
				free(v[i]);
			free(v);
			return -ENOMEM;
		}
	}
	for (size_t i = 0; i < rf->nsockets; i++)
		free(rf->sockets[i]);
	free(rf->sockets);
	rf->sockets = v;
	rf->nsockets = n;
	return 0;
}

/* ------------------------------------------------------------ the table (pure) */

static uint64_t key_hash(int op, const char *path)
{
	return wd_hash_str(path) ^ ((uint64_t)(unsigned)op * 0x9e3779b97f4a7c15ull);
}

/* The verdicts a mode keeps: denied DENIED; all GRANTED and DENIED; trace GRANTED, MISSING and
 * DENIED (what the recorder did, a path it looked for that was not there, a unix socket it
 * refused). */
static bool keeps(enum policy_audit_files mode, enum recorder_verdict v)
{
	switch (mode) {
	case POLICY_FILES_DENIED:
		return v == RECORDER_DENIED;
	case POLICY_FILES_ALL:
		return v == RECORDER_GRANTED || v == RECORDER_DENIED;
	case POLICY_FILES_TRACE:
		return v == RECORDER_GRANTED || v == RECORDER_MISSING || v == RECORDER_DENIED;
	case POLICY_FILES_UNSET:
	case POLICY_FILES_OFF:
		break;
	}
	return false;
}

int recorder_record(struct recorder *rf, int op, const char *path, enum recorder_verdict verdict,
		    pid_t pid, const char *comm)
{
	struct recorder_entry *e;
	size_t i, mask = rf->nslot - 1;

	if (!keeps(rf->mode, verdict))
		return 0;
	for (i = key_hash(op, path) & mask; rf->slot[i]; i = (i + 1) & mask) {
		e = &rf->ent[rf->slot[i] - 1];
		if (e->op == op && !strcmp(e->path, path)) {
			e->count++;
			return 0;
		}
	}
	/* bounded in entries and in bytes: a program naming 65,536 long paths on purpose does
	 * not make the launcher hold 256 MiB */
	if (rf->nent >= rf->max || rf->bytes + strlen(path) + 1 > RECORDER_MAX_BYTES) {
		rf->dropped++;
		return 0;
	}
	if (!rf->ent) {
		rf->ent = calloc(rf->max, sizeof(*rf->ent));
		if (!rf->ent)
			return -ENOMEM;
	}
	e = &rf->ent[rf->nent];
	e->path = strdup(path);
	if (!e->path)
		return -ENOMEM;
	rf->bytes += strlen(path) + 1;
	e->op = op;
	e->verdict = verdict;
	e->count = 1;
	e->pid = pid;
	snprintf(e->comm, sizeof(e->comm), "%s", comm ? comm : "");
	rf->slot[i] = (uint32_t)++rf->nent;
	return 1;
}

size_t recorder_count(const struct recorder *rf)
{
	return rf ? rf->nent : 0;
}

const struct recorder_entry *recorder_get(const struct recorder *rf, size_t i)
{
	return i < rf->nent ? &rf->ent[i] : NULL;
}

uint64_t recorder_dropped(const struct recorder *rf, uint64_t *ret_seen)
{
	if (ret_seen)
		*ret_seen = rf->seen;
	return rf->dropped;
}

uint64_t recorder_unreadable(const struct recorder *rf)
{
	return rf->unreadable;
}

int recorder_join(const char *base, const char *rel, char *out, size_t size)
{
	char buf[PATH_MAX * 2];
	size_t n = 0;
	const char *s;
	int len;

	if (!rel[0])
		return -EINVAL;
	if (rel[0] == '/')
		len = snprintf(buf, sizeof(buf), "%s", rel);
	else if (base[0] == '/')
		len = snprintf(buf, sizeof(buf), "%s/%s", base, rel);
	else
		return -EINVAL;
	if (len < 0 || (size_t)len >= sizeof(buf))
		return -ENAMETOOLONG;
	/* fold component by component into @out: "", "." dropped, ".." pops one */
	if (size < 2)
		return -ENAMETOOLONG;
	out[0] = '\0';
	for (s = buf; *s;) {
		const char *c;
		size_t clen;

		while (*s == '/')
			s++;
		c = s;
		while (*s && *s != '/')
			s++;
		clen = (size_t)(s - c);
		if (!clen || (clen == 1 && c[0] == '.'))
			continue;
		if (clen == 2 && c[0] == '.' && c[1] == '.') {
			while (n && out[n - 1] != '/')
				n--;
			if (n)
				n--;
			out[n] = '\0';
			continue;
		}
		if (n + 1 + clen + 1 > size)
			return -ENAMETOOLONG;
		out[n++] = '/';
		memcpy(out + n, c, clen);
		n += clen;
		out[n] = '\0';
	}
	if (!n) {
		out[0] = '/';
		out[1] = '\0';
	}
	return 0;
}

bool recorder_sandbox_own(const char *path)
{
	static const char *const own[] = {"/proc/", "/dev/"};
	size_t len = strlen(path);

	for (size_t i = 0; i < WD_ARRAY_SIZE(own); i++) {
		size_t n = strlen(own[i]);

		/* the folder itself, or anything in it */
		if (!strncmp(path, own[i], n) || (len == n - 1 && !strncmp(path, own[i], n - 1)))
			return true;
	}
	return false;
}

bool recorder_in_base(const char *path)
{
	for (size_t i = 0; sandbox_base_dirs[i]; i++) {
		size_t n = strlen(sandbox_base_dirs[i]);

		if (!strncmp(path, sandbox_base_dirs[i], n) && (path[n] == '\0' || path[n] == '/'))
			return true;
	}
	return false;
}

/* ------------------------------------------------------------ the supervisor */

/* A NUL-terminated string at @addr in @pid's memory, at most @size - 1 bytes. */
static int read_string(pid_t pid, uint64_t addr, char *buf, size_t size)
{
	/* NOLINTNEXTLINE(performance-no-int-to-ptr): an address in the caller's memory */
	struct iovec local = {buf, size - 1}, remote = {(void *)(uintptr_t)addr, size - 1};
	ssize_t n;

	if (!addr)
		return -EFAULT;
	/* one page at a time would be exact; a read that crosses into an unmapped page
	 * returns what came before it */
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n <= 0)
		return n < 0 ? -errno : -EFAULT;
	buf[n] = '\0';
	if (!memchr(buf, '\0', (size_t)n))
		return (size_t)n == size - 1 ? -ENAMETOOLONG : -EFAULT;
	return 0;
}

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

/* The process's name (best effort: "" when it is gone). */
static void read_comm(pid_t pid, char *out, size_t size)
{
	char p[48];
	ssize_t n;
	int fd;

	out[0] = '\0';
	snprintf(p, sizeof(p), "/proc/%d/comm", pid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, out, size - 1);
	close(fd);
	if (n <= 0)
		n = 0;
	out[n] = '\0';
	out[strcspn(out, "\n")] = '\0';
}

/* The innermost pid of @pid is 1: the sandbox's pid 1 (bubblewrap's setup, then its reaper). */
static bool is_ns_init(pid_t pid)
{
	char p[48], buf[2048], *s, *last;
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/status", pid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	s = strstr(buf, "\nNSpid:");
	if (!s)
		return false;
	s += 7;
	s[strcspn(s, "\n")] = '\0';
	last = strrchr(s, '\t');
	last = last ? last + 1 : s;
	/* only an inner namespace's 1: the outer one (one field) is the host's init */
	return strchr(s + strspn(s, "\t "), '\t') && !strcmp(last, "1");
}

/* Does the sandbox show @path, and how: 1 as itself, 2 as a mask (/dev/null over a file),
 * 0 not at all, -errno when it cannot tell. */
static int sandbox_shows(int root_fd, const char *path, bool follow, struct stat *ret_st)
{
	struct open_how how = {
	    .flags = O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW),
	    .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int fd = (int)syscall(SYS_openat2, root_fd, path[1] ? path + 1 : ".", &how, sizeof(how));

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
	size_t mask = DIR_CACHE_MAX * 2 - 1, i;
	struct stat in, host;
	bool same;

	for (i = wd_hash_str(dir) & mask; rf->dir_path[i]; i = (i + 1) & mask)
		if (!strcmp(rf->dir_path[i], dir))
			return rf->dir_same[i] == 1;
	same = sandbox_shows(rf->root_fd, dir, false, &in) == 1 && S_ISDIR(in.st_mode) &&
	       !fstatat(AT_FDCWD, dir, &host, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT) &&
	       in.st_dev == host.st_dev && in.st_ino == host.st_ino;
	if (rf->ndir < DIR_CACHE_MAX) {
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
	e = read_string(pid, req->data.args[w->path_arg], rel, sizeof(rel));
	/* the kernel refused the read (ptrace restrictions): said at the end of the run */
	if (e == -EPERM || e == -EACCES)
		rf->unreadable++;
	if (e)
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

static void handle(struct recorder *rf, const struct seccomp_notif *req,
		   struct seccomp_notif_resp *resp)
{
	enum recorder_verdict v;
	struct access a;
	char comm[16];
	bool program, keep;

	rf->seen++;
	program = (pid_t)req->pid != rf->outer && (pid_t)req->pid != rf->reaper;
	if (program && !rf->reaper && is_ns_init((pid_t)req->pid)) {
		rf->reaper = (pid_t)req->pid;
		program = false;
	}
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
		read_comm((pid_t)req->pid, comm, sizeof(comm));
	resp->id = req->id;
	resp->val = 0;
	resp->error = 0;
	resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	/* ENOENT: the caller was interrupted or died meanwhile; nothing to answer */
	(void)ioctl(rf->listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
	if (keep)
		(void)recorder_record(rf, a.op, a.path, v, (pid_t)req->pid, comm);
}

/* ------------------------------------------------------------ trace mode */

/* What open_exact() cannot carry out exactly as the kernel would: answer CONTINUE. */
#define RF_SKIP 1

/* The bits open() and openat() keep (the kernel drops the rest); __O_TMPFILE less
 * O_DIRECTORY is its own bit. */
#define OPEN_VALID                                                                                 \
	(O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND | O_NONBLOCK | O_SYNC |      \
	 O_DSYNC | FASYNC | O_DIRECT | O_LARGEFILE | O_DIRECTORY | O_NOFOLLOW | O_NOATIME |        \
	 O_CLOEXEC | O_PATH | __O_TMPFILE)
#define OPEN_PATH_FLAGS (O_DIRECTORY | O_NOFOLLOW | O_PATH | O_CLOEXEC)
#define OPEN_TMPFILE_BIT (__O_TMPFILE & ~O_DIRECTORY)

/* The sandbox's pid 1 and bubblewrap's own process are not the program (found once). */
static bool is_program(struct recorder *rf, pid_t pid)
{
	if (pid == rf->outer || pid == rf->reaper)
		return false;
	if (!rf->reaper && is_ns_init(pid)) {
		rf->reaper = pid;
		return false;
	}
	return true;
}

/* A number field ("Umask:", "Tgid:") of /proc/PID/status, in @base. */
static int status_field(pid_t pid, const char *key, int base, unsigned long *ret)
{
	char p[48], buf[2048], *s, *end;
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/status", pid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	s = strstr(buf, key);
	if (!s || (s != buf && s[-1] != '\n'))
		return -ENOENT;
	s += strlen(key);
	errno = 0;
	*ret = strtoul(s, &end, base);
	return end == s || errno ? -EIO : 0;
}

/* Who calls and where its paths start: the caller's root (O_PATH, closed by ctx_close()),
 * its current folder, its umask when the call creates (@umask), a pidfd of it when the call
 * needs one (@pidfd: connect takes the caller's socket). Opened BEFORE the caller's
 * SECCOMP_IOCTL_NOTIF_ID_VALID check: a pid reused by then is caught by that check, while
 * anything opened by pid after it could be another process's. */
struct call_ctx {
	struct recorder_emul_ctx c;
	char cwd[PATH_MAX];
};

static int ctx_open(pid_t pid, bool umask_needed, bool pidfd, struct call_ctx *x)
{
	char p[48];
	ssize_t n;

	memset(&x->c, 0, sizeof(x->c));
	x->c.pid = pid;
	x->c.pidfd = -1;
	x->c.umask = 022;
	if (pidfd) {
		x->c.pidfd = recorder_caller_pidfd(pid);
		if (x->c.pidfd < 0)
			return -errno;
	}
	snprintf(p, sizeof(p), "/proc/%d/root", pid);
	x->c.root = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (x->c.root < 0) {
		int e = -errno;

		wd_closep(&x->c.pidfd);
		return e;
	}
	snprintf(p, sizeof(p), "/proc/%d/cwd", pid);
	n = readlink(p, x->cwd, sizeof(x->cwd) - 1);
	if (n > 0 && n < (ssize_t)sizeof(x->cwd) - 1 && x->cwd[0] == '/') {
		x->cwd[n] = '\0';
		x->c.cwd = x->cwd;
	}
	if (umask_needed) {
		unsigned long m = 0;

		if (status_field(pid, "Umask:", 8, &m) || m > 0777) {
			wd_closep(&x->c.root);
			wd_closep(&x->c.pidfd);
			return -EIO;
		}
		x->c.umask = (mode_t)m;
	}
	return 0;
}

static void ctx_close(struct call_ctx *x)
{
	wd_closep(&x->c.root);
	wd_closep(&x->c.pidfd);
}

/* Remember that @pid (and its thread group: after an exec by another thread the process
 * continues as its leader) called exec; a full table forgets the oldest (unrecorded). */
static void exec_pending_add(struct recorder *rf, pid_t pid)
{
	unsigned long tgid = 0;
	pid_t add[2] = {pid, 0};

	if (!status_field(pid, "Tgid:", 10, &tgid) && (pid_t)tgid != pid)
		add[1] = (pid_t)tgid;
	for (size_t k = 0; k < 2 && add[k]; k++) {
		bool have = false;

		for (size_t i = 0; i < rf->nexec && !have; i++)
			have = rf->exec_pending[i] == add[k];
		if (have)
			continue;
		if (rf->nexec == EXEC_PENDING_MAX) {
			memmove(rf->exec_pending, rf->exec_pending + 1,
				(EXEC_PENDING_MAX - 1) * sizeof(*rf->exec_pending));
			rf->nexec--;
		}
		rf->exec_pending[rf->nexec++] = add[k];
	}
}

static bool exec_pending_take(struct recorder *rf, pid_t pid)
{
	for (size_t i = 0; i < rf->nexec; i++)
		if (rf->exec_pending[i] == pid) {
			rf->exec_pending[i] = rf->exec_pending[--rf->nexec];
			return true;
		}
	return false;
}

/* Count (@op, @path) in its entry if it has one. */
static bool count_existing(struct recorder *rf, int op, const char *path)
{
	size_t mask = rf->nslot - 1;

	for (size_t i = key_hash(op, path) & mask; rf->slot[i]; i = (i + 1) & mask) {
		struct recorder_entry *e = &rf->ent[rf->slot[i] - 1];

		if (e->op == op && !strcmp(e->path, path)) {
			e->count++;
			return true;
		}
	}
	return false;
}

/* One trace entry: enum trace_op @op (-1: none) on @path, done (or @refused: a unix socket's
 * connect the recorder refused: its own entry, RECORDER_REFUSED_CONNECT), the process's name
 * read only for a new entry. */
static void trace_record(struct recorder *rf, int op, const char *path, bool refused, pid_t pid)
{
	enum recorder_verdict v = refused		? RECORDER_DENIED
				  : op == TRACE_MISSING ? RECORDER_MISSING
							: RECORDER_GRANTED;
	char comm[16];

	if (op < 0 || op >= TRACE_OP_N || path[0] != '/' || recorder_sandbox_own(path))
		return;
	if (refused)
		op = RECORDER_REFUSED_CONNECT;
	if (count_existing(rf, op, path))
		return;
	read_comm(pid, comm, sizeof(comm));
	(void)recorder_record(rf, op, path, v, pid, comm);
}

/* exec, from the kernel's truth: the binary the process runs now (never the path bytes). */
static void record_exe(struct recorder *rf, pid_t pid)
{
	static const char deleted[] = " (deleted)";
	char p[48], exe[PATH_MAX];
	ssize_t n;

	snprintf(p, sizeof(p), "/proc/%d/exe", pid);
	n = readlink(p, exe, sizeof(exe) - 1);
	if (n <= 0 || n >= (ssize_t)sizeof(exe) - 1)
		return;
	exe[n] = '\0';
	if ((size_t)n >= sizeof(deleted) - 1 && !strcmp(exe + n - (sizeof(deleted) - 1), deleted))
		return;
	trace_record(rf, TRACE_EXEC, exe, false, pid);
}

static int openat2_in(int dirfd, const char *path, uint64_t flags, uint64_t mode, uint64_t resolve)
{
	struct open_how how = {
	    .flags = flags | O_CLOEXEC,
	    .mode = mode,
	    .resolve = resolve | RESOLVE_NO_MAGICLINKS,
	};
	const char *rel = path + strspn(path, "/");

	return (int)syscall(SYS_openat2, dirfd, *rel ? rel : ".", &how, sizeof(how));
}

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
 * counts. Return: 0 and *@ret_fd, a negative errno for the caller, or RF_SKIP.
 */
static int open_exact(int root, const char *upath, uint64_t flags, uint64_t mode, uint64_t cres,
		      int *ret_fd)
{
	uint64_t in = RESOLVE_IN_ROOT | cres;
	char dir[PATH_MAX];
	const char *last;
	int fd, dfd, e;

	fd = openat2_in(root, upath, flags, mode, in | RESOLVE_NO_SYMLINKS);
	if (fd >= 0)
		goto done;
	e = errno;
	if (e != ELOOP)
		return exact_errno(e) ? -e : RF_SKIP;
	if (cres & RESOLVE_NO_SYMLINKS)
		return -ELOOP;
	last = strrchr(upath, '/');
	if (!last || !last[1] || !strcmp(last + 1, ".") || !strcmp(last + 1, "..") ||
	    (size_t)(last - upath) >= sizeof(dir))
		return RF_SKIP;
	memcpy(dir, upath, (size_t)(last - upath));
	dir[last - upath] = '\0';
	dfd = openat2_in(root, dir[0] ? dir : "/", O_PATH | O_DIRECTORY, 0, in);
	if (dfd < 0)
		return RF_SKIP;
	if (on_procfs(dfd)) {
		close(dfd);
		return RF_SKIP;
	}
	fd = openat2_in(dfd, last + 1, flags, mode, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | cres);
	e = errno;
	close(dfd);
	if (fd >= 0)
		goto done;
	if (e != ELOOP)
		return exact_errno(e) ? -e : RF_SKIP;
	if (flags & O_NOFOLLOW)
		return -ELOOP; /* a link at the end, not to be followed */
	fd = openat2_in(root, upath, flags, mode, in);
	if (fd < 0)
		return RF_SKIP;
done:
	if (on_procfs(fd)) {
		close(fd);
		return RF_SKIP;
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
	return RF_SKIP;
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
	int f = openat2_in(root, folded, O_PATH | (flags & O_NOFOLLOW), 0, RESOLVE_IN_ROOT);
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

/*
 * An open carried out by the recorder on its own copy of the path, inside the caller's view,
 * with its umask and the recorder's identity (the user's); the descriptor handed in
 * (SECCOMP_ADDFD_FLAG_SEND answers the call with it). Return: 1 answered (or to be answered
 * with @resp's error), 0 answer CONTINUE (nothing recorded).
 */
static int trace_open(struct recorder *rf, const struct seccomp_notif *req,
		      struct seccomp_notif_resp *resp)
{
	char raw[PATH_MAX], folded[PATH_MAX], upath[PATH_MAX * 2 + 2];
	uint64_t paddr, flags, mode, cres;
	pid_t pid = (pid_t)req->pid;
	struct call_ctx x;
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
	if (ctx_open(pid, flags & O_CREAT, false, &x))
		return 0;
	r = recorder_resolve(&x.c, dirfd, raw, folded);
	if (!r && recorder_sandbox_own(folded))
		r = RF_SKIP;
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
			r = RF_SKIP;
	}
	/* still in that call: what we carry out is its */
	if (r || ioctl(rf->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) < 0) {
		ctx_close(&x);
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
			r = RF_SKIP; /* opened again by the kernel: nothing happened to it */
	}
	if (r == RF_SKIP) {
		if (fd >= 0)
			close(fd);
		ctx_close(&x);
		return 0;
	}
	name_ok = !has_dotdot(raw) || (!r && same_object(x.c.root, folded, flags, fd));
	op = r ? (r == -ENOENT ? TRACE_MISSING : -1) : open_op(flags, created);
	/* before the answer: the caller still waits, its name is readable */
	if (name_ok)
		trace_record(rf, op, folded, false, pid);
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
	ctx_close(&x);
	return 1;
}

/* Any other call of the trace table: recorder_emulate() carries it out (run_files_emul.c). Return:
 * 1 answered in @resp (not sent yet), 0 answer CONTINUE. */
static int trace_emulate(struct recorder *rf, const struct seccomp_notif *req,
			 struct seccomp_notif_resp *resp)
{
	struct recorder_emul_out *out = &rf->emul_out;
	/* mkdir, mkdirat: the caller's umask applies */
	bool creates = req->data.nr == 83 || req->data.nr == 258;
	struct call_ctx x;
	uint64_t args[6];
	int r;

	/* connect: its socket is taken from the caller by pidfd */
	if (ctx_open((pid_t)req->pid, creates, req->data.nr == 42, &x))
		return 0;
	if (ioctl(rf->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) < 0) {
		ctx_close(&x);
		return 0;
	}
	for (size_t i = 0; i < 6; i++)
		args[i] = req->data.args[i];
	x.c.sockets = rf->sockets;
	x.c.nsockets = rf->nsockets;
	r = recorder_emulate(&x.c, req->data.nr, args, out);
	ctx_close(&x);
	if (r < 0)
		rf->unreadable++; /* the recorder's own failure: missing from the trace */
	if (r != 1)
		return 0;
	resp->flags = 0;
	if (out->ret < 0)
		resp->error = (__s32)out->ret;
	else
		resp->val = out->ret;
	if (out->op >= 0)
		trace_record(rf, out->op, out->path, out->refused, (pid_t)req->pid);
	if (out->op2 >= 0)
		trace_record(rf, out->op2, out->path2, false, (pid_t)req->pid);
	return 1;
}

/* One notification in trace mode: the recorder carries the call out (opens, recorder_emulate()),
 * or lets the kernel run it (exec, the rest) and records only what the kernel shows. */
static void handle_trace(struct recorder *rf, const struct seccomp_notif *req,
			 struct seccomp_notif_resp *resp)
{
	pid_t pid = (pid_t)req->pid;

	rf->seen++;
	resp->id = req->id;
	resp->val = 0;
	resp->error = 0;
	resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	if (!is_program(rf, pid))
		goto send;
	/* its exec went through (or failed): the binary it runs now is the kernel's truth */
	if (rf->nexec && exec_pending_take(rf, pid))
		record_exe(rf, pid);
	switch (req->data.nr) {
	case 59:  /* execve */
	case 322: /* execveat */
		exec_pending_add(rf, pid);
		goto send;
	case 2:	  /* open */
	case 85:  /* creat */
	case 257: /* openat */
	case 437: /* openat2 */
		if (trace_open(rf, req, resp))
			return; /* answered */
		goto send;
	default:
		if (trace_emulate(rf, req, resp))
			goto send;
		resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		resp->val = 0;
		resp->error = 0;
		/* a connect the recorder could not take on (its own failure): refused, never
		 * the kernel's, which would read the address anew (a host service's socket) */
		if (req->data.nr == 42) {
			resp->flags = 0;
			resp->error = -EACCES;
		}
		goto send;
	}
send:
	/* ENOENT: the caller was interrupted or died meanwhile; nothing to answer */
	(void)ioctl(rf->listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
}

/* ------------------------------------------------------------ the recorder's process */

/* Set by RECORDER_WAKE's handler in the recorder's process: leave the loop. */
static volatile sig_atomic_t rf_stop;

/* RECORDER_WAKE's handler: its arrival also interrupts the blocking receive (EINTR). */
static void on_wake(int sig)
{
	(void)sig;
	rf_stop = 1;
}

/*
 * The recorder's results, from its process to the launcher over a pipe: one struct rf_wire per
 * entry (RF_WIRE_ENTRY, @len bytes of path after it), then one RF_WIRE_END with the counters
 * and how many entries came. Anything else, or an end that does not add up, is malformed: the
 * launcher keeps nothing of it (recorder_lost()).
 */
enum { RF_WIRE_ENTRY = 0x52460001, RF_WIRE_END = 0x52460002 };

struct rf_wire {
	uint32_t kind;
	uint32_t len;
	int32_t op;
	int32_t verdict;
	int32_t pid;	/* 4 bytes of padding follow: memset() before each use */
	uint64_t count; /* ENTRY: the entry's count; END: the entries sent */
	uint64_t seen, dropped, unreadable; /* END */
	char comm[16];
};

static int wire_write(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* In the recorder's process: every entry, then the end. */
static int wire_send(const struct recorder *rf, int fd)
{
	struct rf_wire w;

	for (size_t i = 0; i < rf->nent; i++) {
		const struct recorder_entry *e = &rf->ent[i];

		memset(&w, 0, sizeof(w));
		w.kind = RF_WIRE_ENTRY;
		w.len = (uint32_t)strlen(e->path);
		w.op = e->op;
		w.verdict = (int32_t)e->verdict;
		w.pid = e->pid;
		w.count = e->count;
		memcpy(w.comm, e->comm, sizeof(w.comm));
		if (wire_write(fd, &w, sizeof(w)) || wire_write(fd, e->path, w.len))
			return -EIO;
	}
	memset(&w, 0, sizeof(w));
	w.kind = RF_WIRE_END;
	w.count = rf->nent;
	w.seen = rf->seen;
	w.dropped = rf->dropped;
	w.unreadable = rf->unreadable;
	return wire_write(fd, &w, sizeof(w));
}

/* Exactly @len bytes, or 0 at a clean end of file before the first byte. Return: 1, 0, or
 * -EPROTO (an end inside a message, a read error). */
static int wire_read(int fd, void *buf, size_t len)
{
	char *p = buf;
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, p + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -EPROTO;
		if (n == 0)
			return got ? -EPROTO : 0;
		got += (size_t)n;
	}
	return 1;
}

/* In the launcher: the recorder's results into @rf, checked. Return: 0, or -EPROTO (malformed,
 * or no end: the recorder died). */
static int wire_recv(struct recorder *rf, int fd)
{
	char path[PATH_MAX];
	struct rf_wire w;
	uint64_t n = 0;
	int r;

	for (;;) {
		r = wire_read(fd, &w, sizeof(w));
		if (r <= 0)
			return -EPROTO; /* no end */
		if (w.kind == RF_WIRE_END)
			break;
		if (w.kind != RF_WIRE_ENTRY || !w.len || w.len >= sizeof(path) || !w.count ||
		    w.op < 0 || w.op > 255 || w.verdict < RECORDER_GRANTED ||
		    w.verdict > RECORDER_MISSING ||
		    !keeps(rf->mode, (enum recorder_verdict)w.verdict))
			return -EPROTO;
		if (wire_read(fd, path, w.len) != 1)
			return -EPROTO;
		path[w.len] = '\0';
		w.comm[sizeof(w.comm) - 1] = '\0';
		if (path[0] != '/' || strlen(path) != w.len)
			return -EPROTO;
		/* a new entry each time: the recorder sends none twice, and no more than a run
		 * keeps */
		r = recorder_record(rf, w.op, path, (enum recorder_verdict)w.verdict, w.pid,
				    w.comm);
		if (r != 1)
			return r < 0 ? r : -EPROTO;
		rf->ent[rf->nent - 1].count = w.count;
		n++;
	}
	if (w.count != n || w.dropped > w.seen || w.unreadable > w.seen || n > w.seen)
		return -EPROTO;
	/* nothing after the end */
	if (wire_read(fd, &w, 1) != 0)
		return -EPROTO;
	rf->seen = w.seen;
	rf->dropped = w.dropped;
	rf->unreadable = w.unreadable;
	return 0;
}

/* Every capability set emptied, the bounding set too, and none to be had again. */
static int drop_caps(void)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2] = {{0, 0, 0}, {0, 0, 0}};

	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -errno;
	if (syscall(SYS_capset, &h, d) < 0)
		return -errno;
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ? -errno : 0;
}

/*
 * The recorder's process becomes the program's user, whole: in root mode the program's real,
 * effective, saved and file system uid and gid and its supplementary groups (the kernel's and
 * file systems' checks of any of them then see the user: a FUSE mount without allow_other,
 * a capability, a real uid); in every mode no capability, no_new_privs, not dumpable (a
 * process of the same user may not ptrace it: it holds the listener), no descriptor but
 * @keep (0, 1 and 2 are /dev/null). Return: 0 or a negative errno.
 */
static int become_user(const struct recorder *rf, const int *keep, size_t nkeep)
{
	int e = wd_close_all_except(keep, nkeep), nul;

	if (e)
		return e;
	/* not even the launcher's stdio (a root-owned file, a terminal): /dev/null */
	nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (nul < 0)
		return -errno;
	for (int fd = 0; fd <= 2; fd++)
		if (dup2(nul, fd) < 0) {
			e = -errno;
			close(nul);
			return e;
		}
	if (nul > 2)
		close(nul);
	if (chdir("/") < 0)
		return -errno;
	/* while root may: an empty bounding set (EINVAL past the last one the kernel has) */
	for (int c = 0; rf->as_user && c <= 63; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
			return -errno;
	if (rf->as_user &&
	    (setgroups((size_t)rf->ngroups, rf->groups) < 0 ||
	     setresgid(rf->gid, rf->gid, rf->gid) < 0 || setresuid(rf->uid, rf->uid, rf->uid) < 0))
		return -errno;
	if (rf->as_user) {
		/* ask back: a partial change must not pass */
		uid_t ru, eu, su;
		gid_t rg, eg, sg;

		if (getresuid(&ru, &eu, &su) < 0 || getresgid(&rg, &eg, &sg) < 0 || ru != rf->uid ||
		    eu != rf->uid || su != rf->uid || rg != rf->gid || eg != rf->gid ||
		    sg != rf->gid || (uid_t)syscall(SYS_setfsuid, (uid_t)-1) != rf->uid ||
		    (gid_t)syscall(SYS_setfsgid, (gid_t)-1) != rf->gid)
			return -EPERM;
	}
	e = drop_caps();
	if (e)
		return e;
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return -errno;
	return 0;
}

/* The recorder's process: the identity, then one blocking receive per notification until
 * recorder_stop()'s signal, then the results to the launcher. Never returns. */
static _Noreturn void recorder_main(struct recorder *rf, pid_t parent, int wfd)
{
	struct seccomp_notif_sizes sz = {0};
	struct seccomp_notif *req = NULL;
	struct seccomp_notif_resp *resp = NULL;
	int keep[2] = {rf->listener, wfd};
	struct sigaction sa;
	sigset_t mask;
	size_t reqsz;

	/* the launcher's signals are its own: only the wake-up comes through */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_wake; /* no SA_RESTART */
	sigemptyset(&sa.sa_mask);
	sigfillset(&mask);
	sigdelset(&mask, RECORDER_WAKE);
	if (sigaction(RECORDER_WAKE, &sa, NULL) < 0 || sigprocmask(SIG_SETMASK, &mask, NULL) < 0)
		_exit(RECORDER_EXIT_SETUP);
	/* above 2, which become /dev/null */
	for (size_t i = 0; i < WD_ARRAY_SIZE(keep); i++)
		if (keep[i] <= 2 && (keep[i] = fcntl(keep[i], F_DUPFD_CLOEXEC, 3)) < 0)
			_exit(RECORDER_EXIT_SETUP);
	rf->listener = keep[0];
	wfd = keep[1];
	/* fail closed: a recorder that cannot be the user answers nothing (the listener
	 * closes, the program's watched calls get ENOSYS) */
	if (become_user(rf, keep, WD_ARRAY_SIZE(keep)))
		_exit(RECORDER_EXIT_SETUP);
	/* after the uid change, which clears it: the recorder dies with the launcher */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
		_exit(RECORDER_EXIT_SETUP);
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sz) < 0)
		_exit(RECORDER_EXIT_SETUP);
	/* a caller waits for each answer: hand the CPU over directly (EINVAL before 6.6) */
	(void)ioctl(rf->listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS,
		    (__u64)SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
	reqsz = sz.seccomp_notif > sizeof(*req) ? sz.seccomp_notif : sizeof(*req);
	req = calloc(1, reqsz);
	resp = calloc(1, sz.seccomp_notif_resp > sizeof(*resp) ? sz.seccomp_notif_resp
							       : sizeof(*resp));
	if (!req || !resp)
		_exit(RECORDER_EXIT_SETUP);
	/* one blocking call per notification; recorder_stop() interrupts it with a signal */
	while (!rf_stop) {
		memset(req, 0, reqsz);
		if (ioctl(rf->listener, SECCOMP_IOCTL_NOTIF_RECV, req) < 0) {
			if (errno == EINTR || errno == ENOENT)
				continue;
			break;
		}
		if (rf->mode == POLICY_FILES_TRACE)
			handle_trace(rf, req, resp);
		else
			handle(rf, req, resp);
	}
	/* the kernel answers ENOSYS to whatever waits or comes later: fail closed */
	wd_closep(&rf->listener);
	sigfillset(&mask);
	sigprocmask(SIG_SETMASK, &mask, NULL);
	_exit(wire_send(rf, wfd) ? RECORDER_EXIT_SEND : 0);
}

int recorder_start(struct recorder *rf, int listener, pid_t outer)
{
	int p[2];
	pid_t self = getpid(), pid;

	rf->listener = listener;
	rf->outer = outer;
	if (pipe2(p, O_CLOEXEC) < 0) {
		int e = -errno;

		wd_closep(&rf->listener);
		return e;
	}
	pid = fork();
	if (pid < 0) {
		int e = -errno;

		close(p[0]);
		close(p[1]);
		wd_closep(&rf->listener);
		return e;
	}
	if (pid == 0) {
		close(p[0]);
		recorder_main(rf, self, p[1]);
	}
	close(p[1]);
	/* the listener is the recorder's alone: when it ends, the kernel answers ENOSYS */
	wd_closep(&rf->listener);
	rf->res_fd = p[0];
	rf->pid = pid;
	rf->running = true;
	return 0;
}

void recorder_stop(struct recorder *rf)
{
	int st;

	if (!rf)
		return;
	if (rf->running) {
		struct pollfd pfd = {rf->res_fd, POLLIN, 0};

		/* a signal sent just before the recorder blocks would be lost: again until it
		 * answers (its results, or its end) */
		for (;;) {
			if (kill(rf->pid, RECORDER_WAKE) < 0 && errno == ESRCH)
				break;
			if (poll(&pfd, 1, 2) > 0)
				break;
		}
		if (wire_recv(rf, rf->res_fd)) {
			/* malformed, or it died: nothing it said counts */
			(void)kill(rf->pid, SIGKILL);
			for (size_t i = 0; i < rf->nent; i++)
				free(rf->ent[i].path);
			memset(rf->slot, 0, rf->nslot * sizeof(*rf->slot));
			rf->nent = 0;
			rf->bytes = 0;
			rf->lost = true;
		}
		while (waitpid(rf->pid, &st, 0) < 0 && errno == EINTR)
			;
		rf->running = false;
		rf->pid = 0;
	}
	wd_closep(&rf->res_fd);
	wd_closep(&rf->listener);
	wd_closep(&rf->root_fd);
}

bool recorder_lost(const struct recorder *rf)
{
	return rf && rf->lost;
}

void recorder_free(struct recorder *rf)
{
	if (!rf)
		return;
	recorder_stop(rf);
	for (size_t i = 0; i < rf->nent; i++)
		free(rf->ent[i].path);
	for (size_t i = 0; rf->dir_path && i < DIR_CACHE_MAX * 2; i++)
		free(rf->dir_path[i]);
	for (size_t i = 0; i < rf->nmask; i++)
		free(rf->mask[i]);
	free(rf->mask);
	for (size_t i = 0; i < rf->nsockets; i++)
		free(rf->sockets[i]);
	free(rf->sockets);
	free(rf->dir_path);
	free(rf->dir_same);
	free(rf->ent);
	free(rf->slot);
	free(rf);
}

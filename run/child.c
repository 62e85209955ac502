/* run_child.c - the parked child of a Linux sandbox backend: forked early, it enters the run's
 * network namespace and cgroups and becomes the program's user while the parent goes on, then
 * execs what the backend prepared on the parent's word (run_child.h has the stages); and how a
 * failed stage is said (run_child_explain(), run_child_grant_denied()). */
#include "run/child.h"
#include "run/run.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/keyctl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <linux/seccomp.h>
#include <unistd.h>

int run_child_memfd(const char *name, const void *data, size_t len)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (wd_write_all(fd, data ? data : "", len) || lseek(fd, 0, SEEK_SET) < 0) {
		close(fd);
		return -EIO;
	}
	return fd;
}

/* Every capability set emptied (the ones setns() into the run's user namespace gave). */
static int drop_caps(void)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2] = {{0, 0, 0}, {0, 0, 0}};

	return (int)syscall(SYS_capset, &h, d);
}

static _Noreturn void child_fail(int errfd, int stage, int index, int err)
{
	struct run_child_report rep = {err ? err : EIO, stage, index};

	if (write(errfd, &rep, sizeof(rep)) < 0)
		_exit(RUN_EXIT_WARDEN);
	_exit(RUN_EXIT_WARDEN);
}

/* One socket of @p->premask covered: opened without following a link and checked to be a
 * socket still, then /dev/null bound over that very file (through its descriptor: a link put
 * in its place meanwhile is never followed). Return: 0 (covered, or no longer a socket: gone
 * or replaced, skipped), or a positive errno. */
static int premask_one(const char *path)
{
	char fdp[32];
	struct stat st;
	int fd, err = 0;

	fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR || errno == ELOOP ? 0 : errno;
	if (fstat(fd, &st) < 0)
		err = errno;
	else if (S_ISSOCK(st.st_mode)) {
		snprintf(fdp, sizeof(fdp), "/proc/self/fd/%d", fd);
		if (mount("/dev/null", fdp, NULL, MS_BIND, NULL) < 0)
			err = errno;
	}
	close(fd);
	return err;
}

/* The learning sandbox's socket masks (struct run_child_plan .premask), in a mount namespace
 * of the child's own, private from here down: bwrap's view of the host (a recursive bind of
 * `/`) carries them. Fails closed: a socket still there and not covered stops the run. */
static void premask(const struct run_child_plan *p, int errfd)
{
	int e;

	if (!p->npremask)
		return;
	if (unshare(CLONE_NEWNS) < 0)
		child_fail(errfd, RUN_CHILD_MASK, -1, errno);
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		child_fail(errfd, RUN_CHILD_MASK, -1, errno);
	for (size_t i = 0; i < p->npremask; i++) {
		e = premask_one(p->premask[i]);
		if (e)
			child_fail(errfd, RUN_CHILD_MASK, (int)i, e);
	}
}

/* Runs in the child after fork and never returns: the stages of run_child.h. */
/* One byte with one descriptor attached (SCM_RIGHTS). */
static int send_fd(int sock, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {"l", 1};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *cm;

	memset(&u, 0, sizeof(u));
	mh.msg_control = u.buf;
	mh.msg_controllen = sizeof(u.buf);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &mh, MSG_NOSIGNAL) == 1 ? 0 : -errno;
}

/* The file-access filter with a listener, which goes to the parent and is closed here. */
static int load_notify(const struct run_child_plan *p, int sock)
{
	struct sock_fprog fp = {(unsigned short)p->notify_len, (struct sock_filter *)p->notify};
	int lfd, ret = 0;

	/* the child is an ordinary user by now: a filter needs no_new_privs (bwrap sets it
	 * too, for its own filter) */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	lfd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
			   &fp);
	if (lfd < 0)
		return -errno;
	ret = send_fd(sock, lfd);
	close(lfd);
	return ret;
}

static _Noreturn void child_main(const struct run_child_plan *p, int errfd, int gofd, int nsock)
{
	struct run_child_exec x = {0};
	struct run_child_report rep = {0, RUN_CHILD_BACKEND, -1};
	int *keep, nkeep = 0, e;
	sigset_t none;
	char go;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	/* rootless: the network namespace belongs to the run's user namespace; entering that
	 * gives every capability there, which the child needs for nothing after setns() */
	if (p->userns_fd >= 0 && setns(p->userns_fd, CLONE_NEWUSER) < 0)
		child_fail(errfd, RUN_CHILD_NETNS, 1, errno);
	if (setns(p->netns_fd, CLONE_NEWNET) < 0)
		child_fail(errfd, RUN_CHILD_NETNS, 0, errno);
	/* while it holds the capabilities it needs (root, or the run's user namespace's) */
	premask(p, errfd);
	if (p->userns_fd >= 0 && drop_caps() < 0)
		child_fail(errfd, RUN_CHILD_USER, 0, errno);
	e = limits_join(p->limits);
	if (e)
		child_fail(errfd, RUN_CHILD_CGROUP, 0, -e);
	if (p->userns_fd < 0 &&
	    (setgroups((size_t)p->ngroups, p->groups) < 0 ||
	     setresgid(p->gid, p->gid, p->gid) < 0 || setresuid(p->uid, p->uid, p->uid) < 0))
		child_fail(errfd, RUN_CHILD_USER, 0, errno);
	/* a session keyring of the run's own: the caller's keys stay the caller's */
	if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0 && errno != ENOSYS)
		child_fail(errfd, RUN_CHILD_KEYRING, 0, errno);
	/* after the uid change, which clears it: the sandbox dies with us */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		child_fail(errfd, RUN_CHILD_USER, 0, errno);
	if (getppid() == 1)
		_exit(RUN_EXIT_WARDEN);
	if (p->prepare_exec(p->arg, &x, &rep))
		child_fail(errfd, rep.stage, rep.index, rep.err);
	keep = calloc(x.nkeep + 3, sizeof(*keep));
	if (!keep)
		child_fail(errfd, RUN_CHILD_FDS, 0, ENOMEM);
	/* the binary inherits these; the error and go pipes are CLOEXEC and go at exec */
	for (size_t i = 0; i < x.nkeep; i++) {
		if (x.keep[i] < 0)
			continue;
		if (fcntl(x.keep[i], F_SETFD, 0) < 0)
			child_fail(errfd, RUN_CHILD_FDS, 0, errno);
		keep[nkeep++] = x.keep[i];
	}
	keep[nkeep++] = errfd;
	keep[nkeep++] = gofd;
	if (nsock >= 0)
		keep[nkeep++] = nsock;
	e = wd_close_all_except(keep, (size_t)nkeep);
	if (e)
		child_fail(errfd, RUN_CHILD_FDS, 0, -e);
	if (p->fsize) {
		struct rlimit rl;

		rl.rlim_cur = rl.rlim_max = (rlim_t)p->fsize;
		if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
			child_fail(errfd, RUN_CHILD_LIMIT, 0, errno);
	}
	if (p->nproc) {
		struct rlimit rl;

		rl.rlim_cur = rl.rlim_max = (rlim_t)p->nproc;
		if (setrlimit(RLIMIT_NPROC, &rl) < 0)
			child_fail(errfd, RUN_CHILD_LIMIT, 1, errno);
	}
	/* last: from here on every path call waits for the parent's recorder */
	if (nsock >= 0) {
		e = load_notify(p, nsock);
		if (e)
			child_fail(errfd, RUN_CHILD_FILES, 0, -e);
		close(nsock);
	}
	/* wait for the parent's checks; EOF means "do not run" */
	while ((e = (int)read(gofd, &go, 1)) < 0 && errno == EINTR)
		;
	if (e != 1)
		_exit(RUN_EXIT_WARDEN);
	if (p->wrap) {
		/* the wrapper runs the backend's command line: WRAP... ARGV... */
		size_t nw = 0, na = 0;
		char **v;

		while (p->wrap[nw])
			nw++;
		while (x.argv[na])
			na++;
		v = calloc(nw + na + 1, sizeof(*v));
		if (!v)
			child_fail(errfd, RUN_CHILD_EXEC, 0, ENOMEM);
		memcpy(v, p->wrap, nw * sizeof(*v));
		memcpy(v + nw, x.argv, na * sizeof(*v));
		execve(p->wrap_bin, v, p->wrap_env);
		child_fail(errfd, RUN_CHILD_EXEC, 0, errno);
	}
	execve(x.argv[0], x.argv, x.envp);
	child_fail(errfd, RUN_CHILD_EXEC, 0, errno);
}

int run_child_fork(struct run_child *c, const struct run_child_plan *p, struct sandbox_err *e)
{
	int errp[2] = {-1, -1}, go[2] = {-1, -1}, ns[2] = {-1, -1}, ret;

	*c = RUN_CHILD_INIT;
	if (pipe2(errp, O_CLOEXEC) < 0 || pipe2(go, O_CLOEXEC) < 0 ||
	    (p->notify && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ns) < 0)) {
		ret = -errno;
		e->step = "exec";
		e->fix = NULL;
		snprintf(e->msg, sizeof(e->msg), "pipe: %s", strerror(-ret));
		goto out;
	}
	c->pid = fork();
	if (c->pid < 0) {
		ret = -errno;
		c->pid = 0;
		e->step = "exec";
		e->fix = NULL;
		snprintf(e->msg, sizeof(e->msg), "fork: %s", strerror(-ret));
		goto out;
	}
	if (c->pid == 0) {
		close(errp[0]);
		close(go[1]);
		if (ns[0] >= 0)
			close(ns[0]);
		child_main(p, errp[1], go[0], ns[1]);
	}
	c->err_fd = errp[0];
	c->go_fd = go[1];
	c->notify_fd = ns[0];
	errp[0] = go[1] = ns[0] = -1;
	ret = 0;
out:
	wd_closep(&errp[0]);
	wd_closep(&errp[1]);
	wd_closep(&go[0]);
	wd_closep(&go[1]);
	wd_closep(&ns[0]);
	wd_closep(&ns[1]);
	return ret;
}

int run_child_listener(struct run_child *c, int *ret_fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	char b;
	struct iovec iov = {&b, 1};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cmsghdr *cm;
	int fd = -1;
	ssize_t n;

	if (c->notify_fd < 0)
		return -EBADF;
	mh.msg_control = u.buf;
	mh.msg_controllen = sizeof(u.buf);
	do
		n = recvmsg(c->notify_fd, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		n = -errno;
	wd_closep(&c->notify_fd);
	cm = n == 1 ? CMSG_FIRSTHDR(&mh) : NULL;
	if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
	    cm->cmsg_len == CMSG_LEN(sizeof(int)) && !(mh.msg_flags & MSG_CTRUNC))
		memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	if (fd < 0)
		return n < 0 ? (int)n : -ECHILD;
	*ret_fd = fd;
	return 0;
}

int run_child_go(struct run_child *c, struct run_child_report *ret)
{
	struct run_child_report rep;
	ssize_t n;

	/* a child that failed already has exited: its report waits in the pipe either way */
	(void)!wd_write_all(c->go_fd, "g", 1);
	wd_closep(&c->go_fd);
	do
		n = read(c->err_fd, &rep, sizeof(rep));
	while (n < 0 && errno == EINTR);
	wd_closep(&c->err_fd);
	if (n == 0)
		return 0;
	if (n != sizeof(rep))
		rep = (struct run_child_report){n < 0 ? errno : EPROTO, RUN_CHILD_EXEC, -1};
	waitpid(c->pid, &(int){0}, 0);
	c->pid = 0;
	*ret = rep;
	return -ECHILD;
}

void run_child_cancel(struct run_child *c)
{
	int st;

	wd_closep(&c->go_fd);
	wd_closep(&c->err_fd);
	wd_closep(&c->notify_fd);
	if (c->pid > 0)
		waitpid(c->pid, &st, 0);
	c->pid = 0;
}

/* One generic stage's message (%s is the errno's text; %u and the second %s in RUN_CHILD_USER
 * are the uid and the user's name, in RUN_CHILD_FDS the backend, in RUN_CHILD_EXEC the
 * binary). */
static const struct {
	const char *step;
	const char *fix;
} child_steps[] = {
    [RUN_CHILD_NETNS] = {"exec", "check `warden doctor`"},
    [RUN_CHILD_CGROUP] = {"exec", "check `warden doctor`"},
    [RUN_CHILD_USER] = {"exec", NULL},
    [RUN_CHILD_KEYRING] = {"exec", NULL},
    [RUN_CHILD_FDS] = {"exec", NULL},
    [RUN_CHILD_LIMIT] = {"limits", NULL},
    [RUN_CHILD_EXEC] = {"exec", "check `warden doctor`"},
    [RUN_CHILD_FILES] = {"sandbox",
			 "set `audit.files: off` in the policy, or check `warden doctor`"},
    [RUN_CHILD_MASK] = {"sandbox", "check `warden doctor`"},
};

bool run_child_explain(const struct run_child_report *rep, const char *what, const char *binary,
		       uid_t uid, const char *user, struct sandbox_err *e)
{
	const char *err = strerror(rep->err), *who = user ? user : "the sandbox user";
	char *m = e->msg;
	size_t n = sizeof(e->msg);

	if (rep->stage >= RUN_CHILD_BACKEND)
		return false;
	e->step = "exec";
	e->fix = NULL;
	if (rep->stage >= 0 && (size_t)rep->stage < WD_ARRAY_SIZE(child_steps)) {
		e->step = child_steps[rep->stage].step;
		e->fix = child_steps[rep->stage].fix;
	}
	switch ((enum run_child_stage)rep->stage) {
	case RUN_CHILD_NETNS:
		snprintf(m, n, "entering the run's %snamespace: %s", rep->index == 1 ? "user " : "",
			 err);
		break;
	case RUN_CHILD_CGROUP:
		snprintf(m, n, "joining the run's cgroups: %s", err);
		break;
	case RUN_CHILD_USER:
		snprintf(m, n, "becoming uid %u (%s): %s", (unsigned)uid, who, err);
		break;
	case RUN_CHILD_KEYRING:
		snprintf(m, n, "joining a session keyring of the run's own: %s", err);
		break;
	case RUN_CHILD_FDS:
		snprintf(m, n, "preparing %s's arguments and descriptors: %s", what, err);
		break;
	case RUN_CHILD_LIMIT:
		snprintf(m, n, "setting the %s limit: %s",
			 rep->index == 1 ? "process count (RLIMIT_NPROC)" : "file size", err);
		break;
	case RUN_CHILD_EXEC:
		snprintf(m, n, "starting %s: %s", binary, err);
		break;
	case RUN_CHILD_FILES:
		snprintf(m, n, "loading the file-access recorder's seccomp filter: %s", err);
		break;
	case RUN_CHILD_MASK:
		if (rep->index < 0)
			snprintf(m, n, "a mount namespace to cover the host's unix sockets in: %s",
				 err);
		else
			snprintf(m, n,
				 "covering the host's unix socket number %d (of /run) in the "
				 "sandbox's view: %s",
				 rep->index + 1, err);
		break;
	case RUN_CHILD_BACKEND:
	default:
		snprintf(m, n, "the child failed: %s", err);
		break;
	}
	return true;
}

void run_child_grant_denied(const struct sandbox_spec *sp, const char *path, bool rw, int err,
			    struct sandbox_err *e)
{
	const char *su = getenv("SUDO_UID"), *can = rw ? "writable" : "readable";
	unsigned long long sudo_uid = 0;
	char whom[96];

	e->step = "filesystem";
	if (sp->rootless) {
		snprintf(whom, sizeof(whom), "you (uid %u)", (unsigned)sp->uid);
		e->fix =
		    rw ? "make it writable by you (chmod, or an ACL: see docs/run.md), or drop "
			 "the grant"
		       : "make it readable by you (chmod, or an ACL: see docs/run.md), or drop "
			 "the grant";
	} else {
		snprintf(whom, sizeof(whom), "uid %u (%s)", (unsigned)sp->uid,
			 sp->user ? sp->user : "the sandbox user");
		if (su && !wd_parse_uint(su, UINT32_MAX - 1, &sudo_uid) && sudo_uid == sp->uid)
			e->fix = "make it so for that user (chown, chmod, or an ACL: see "
				 "docs/run.md)";
		else
			e->fix = "make it so for that user (chown, chmod, or an ACL: see "
				 "docs/run.md), or run warden through sudo so the program runs as "
				 "you";
	}
	snprintf(e->msg, sizeof(e->msg), "%s %s is not %s by %s, whom the program runs as: %s",
		 rw ? "write grant" : "read grant", path, can, whom, strerror(err));
}

/* run_sandbox.c - the sandbox stages of `warden run`: the seccomp filter's allowances, the
 * write grants made, and bubblewrap: the child that enters the run's namespace and cgroups,
 * becomes the program's user and execs bwrap on the parent's word; bwrap's --info-fd; the
 * signals for the sandbox. */
#include "launcher/cli.h"
#include "launcher/run_internal.h"
#include "sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <linux/keyctl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define BWRAP_DEFAULT "/usr/bin/bwrap"

extern char **environ;

/* sandbox.allow words of the policy -> the sandbox module's bits */
static const struct {
	unsigned policy_bit, sandbox_bit;
} allow_map[] = {
    {POLICY_SANDBOX_USERNS, SANDBOX_ALLOW_USERNS},
};

unsigned run_sandbox_allow(const struct wd_policy *p)
{
	unsigned bits = 0;

	for (size_t i = 0; i < WD_ARRAY_SIZE(allow_map); i++)
		if (p->sandbox_allow & allow_map[i].policy_bit)
			bits |= allow_map[i].sandbox_bit;
	return bits;
}

/*
 * WARDEN_UNSAFE_NO_SECCOMP=1 leaves the filter out, for the benchmark's "without" column only:
 * no policy can ask for it, it is said on stderr even with -q, and run.start records it.
 */
bool run_sandbox_unsafe(void)
{
	const char *v = getenv("WARDEN_UNSAFE_NO_SECCOMP");

	return v && !strcmp(v, "1");
}

/* `warden run --print-seccomp`: the filter as text; Return: 0 or 125 */
int run_sandbox_print_seccomp(struct run *r)
{
	struct wd_buf b = WD_BUF_INIT;
	struct wd_err err;
	unsigned allow = run_sandbox_allow(r->pol);
	size_t insns = 0;
	int fd = -1, ret;

	wd_err_clear(&err);
	ret = sandbox_seccomp_fd(allow, &fd, &insns, &err);
	if (ret)
		return run_fail(r, "sandbox", "check `warden doctor`", "%s", err.msg);
	close(fd);
	ret = sandbox_describe(allow, &b);
	if (!ret)
		ret =
		    wd_buf_printf(&b, "# policy: %s; BPF: %zu instructions (libseccomp), x86_64\n",
				  r->policy_abs, insns);
	if (ret) {
		wd_buf_free(&b);
		return run_fail(r, "sandbox", NULL, "out of memory");
	}
	fputs(wd_buf_cstr(&b), stdout);
	wd_buf_free(&b);
	return fflush(stdout) ? RUN_EXIT_WARDEN : WD_EXIT_OK;
}

static int memfd_text(const char *name, const struct wd_buf *b)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (wd_write_all(fd, b->data ? b->data : "", b->len) || lseek(fd, 0, SEEK_SET) < 0) {
		close(fd);
		return -EIO;
	}
	return fd;
}

/* Where the child failed, for the parent's message (struct child_report.stage). */
enum child_stage {
	CHILD_NETNS,
	CHILD_CGROUP,
	CHILD_USER,
	CHILD_KEYRING,
	CHILD_GRANT,	    /* opening grant @index without following links */
	CHILD_GRANT_ACCESS, /* grant @index is not readable/writable by the program's user */
	CHILD_ARGS,
	CHILD_FDS,
	CHILD_LIMIT,
	CHILD_EXEC,
};

/* What the child writes on its error pipe when it cannot exec bubblewrap. */
struct child_report {
	int err;
	int stage;
	int index;
};

/* What the child becomes bubblewrap with (prepared by the parent before the fork). */
struct child_plan {
	struct bwrap_spec spec;
	struct bwrap_grant *grants;
	size_t ngrants;
	int errfd;
	int gofd;
};

static _Noreturn void child_fail(int errfd, int stage, int index, int err)
{
	struct child_report rep = {err ? err : EIO, stage, index};

	if (write(errfd, &rep, sizeof(rep)) < 0)
		_exit(RUN_EXIT_WARDEN);
	_exit(RUN_EXIT_WARDEN);
}

/* Open grant @i as the program's user, without following links (the validator's real path
 * has none, so a link planted since is refused), and check that user may use it. */
static int child_open_grant(const struct bwrap_grant *g, int *ret_fd, int *ret_stage)
{
	struct stat st;
	int fd = wd_open_nofollow(g->path, O_PATH), mode;

	*ret_stage = CHILD_GRANT;
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return -errno;
	}
	mode = R_OK | (S_ISDIR(st.st_mode) ? X_OK : 0) | (g->rw ? W_OK : 0);
	if (faccessat(fd, "", mode, AT_EMPTY_PATH | AT_EACCESS) < 0) {
		int e = errno;

		close(fd);
		*ret_stage = CHILD_GRANT_ACCESS;
		return -e;
	}
	*ret_fd = fd;
	return 0;
}

/*
 * Runs in the child after fork and never returns. In named stages: the run's netns and
 * cgroups; the program's user (never root) and a fresh session keyring of its own; the
 * grants opened as that user without following links; bwrap's options written to a memfd
 * (--args), so no --setenv value is in a command line; every descriptor but those bwrap
 * needs closed (whatever the caller of `warden run` left open stays out); the disk limit;
 * then, on the parent's word, bwrap with an empty environment. A failure is reported on the
 * error pipe as a struct child_report.
 */
static _Noreturn void child_exec(struct run *r, struct child_plan *c)
{
	struct bwrap_argv av = {0};
	struct wd_buf text = WD_BUF_INIT;
	char **exec_argv, num[16];
	char *const no_env[] = {NULL};
	int *gfd, *keep, nkeep = 0, argsfd, e;
	size_t nexec = 0;
	sigset_t none;
	char go;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (setns(r->net.netns_fd, CLONE_NEWNET) < 0)
		child_fail(c->errfd, CHILD_NETNS, 0, errno);
	e = limits_join(&r->lim);
	if (e)
		child_fail(c->errfd, CHILD_CGROUP, 0, -e);
	if (setgroups((size_t)r->ngroups, r->groups) < 0 || setresgid(r->gid, r->gid, r->gid) < 0 ||
	    setresuid(r->uid, r->uid, r->uid) < 0)
		child_fail(c->errfd, CHILD_USER, 0, errno);
	/* a session keyring of the run's own: the caller's keys stay the caller's */
	if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0 && errno != ENOSYS)
		child_fail(c->errfd, CHILD_KEYRING, 0, errno);
	/* after the uid change, which clears it: bwrap dies with us */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		child_fail(c->errfd, CHILD_USER, 0, errno);
	if (getppid() == 1)
		_exit(RUN_EXIT_WARDEN);
	gfd = calloc(c->ngrants + 1, sizeof(*gfd));
	keep = calloc(c->ngrants + BWRAP_NDATA + 8, sizeof(*keep));
	if (!gfd || !keep)
		child_fail(c->errfd, CHILD_ARGS, 0, ENOMEM);
	for (size_t i = 0; i < c->ngrants; i++) {
		int stage;

		e = child_open_grant(&c->grants[i], &gfd[i], &stage);
		if (e)
			child_fail(c->errfd, stage, (int)i, -e);
		keep[nkeep++] = gfd[i];
	}
	c->spec.grants = c->grants;
	c->spec.ngrants = c->ngrants;
	c->spec.grant_fd = gfd;
	e = bwrap_build(r->bwrap, &c->spec, &av);
	if (!e)
		e = bwrap_args_text(&av, &text);
	argsfd = e ? e : memfd_text("bwrap-args", &text);
	if (argsfd < 0)
		child_fail(c->errfd, CHILD_ARGS, 0, -argsfd);
	if (getenv("WARDEN_DEBUG_BWRAP")) {
		for (size_t i = 0; i < av.n; i++)
			fprintf(stderr, "%s%s", i ? " " : "", av.v[i]);
		fputc('\n', stderr);
	}
	keep[nkeep++] = argsfd;
	keep[nkeep++] = c->spec.info_fd;
	keep[nkeep++] = c->spec.seccomp_fd;
	for (int i = 0; i < BWRAP_NDATA; i++)
		keep[nkeep++] = c->spec.data_fd[i];
	/* bwrap inherits these; the error and go pipes are CLOEXEC and go at exec */
	for (int i = 0; i < nkeep; i++)
		if (keep[i] >= 0 && fcntl(keep[i], F_SETFD, 0) < 0)
			child_fail(c->errfd, CHILD_FDS, 0, errno);
	keep[nkeep++] = c->errfd;
	keep[nkeep++] = c->gofd;
	e = wd_close_all_except(keep, (size_t)nkeep);
	if (e)
		child_fail(c->errfd, CHILD_FDS, 0, -e);
	if (r->pol->limits.disk_mb) {
		struct rlimit rl;

		rl.rlim_cur = rl.rlim_max = (rlim_t)(r->pol->limits.disk_mb << 20);
		if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
			child_fail(c->errfd, CHILD_LIMIT, 0, errno);
	}
	/* bwrap --args FD -- COMMAND...: the options come from the memfd */
	exec_argv = calloc(av.n + 4, sizeof(*exec_argv));
	if (!exec_argv)
		child_fail(c->errfd, CHILD_ARGS, 0, ENOMEM);
	snprintf(num, sizeof(num), "%d", argsfd);
	exec_argv[nexec++] = av.v[0];
	exec_argv[nexec++] = "--args";
	exec_argv[nexec++] = num;
	for (size_t i = av.opts_end; i < av.n; i++)
		exec_argv[nexec++] = av.v[i];
	exec_argv[nexec] = NULL;
	/* wait for the parent's checks; EOF means "do not run" */
	while ((e = (int)read(c->gofd, &go, 1)) < 0 && errno == EINTR)
		;
	if (e != 1)
		_exit(RUN_EXIT_WARDEN);
	/* bwrap's own process (pid 1 of the sandbox) keeps no variable of the caller's */
	execve(exec_argv[0], exec_argv, no_env);
	child_fail(c->errfd, CHILD_EXEC, 0, errno);
}

/* Children of @pid (all its threads'), up to @max. */
static size_t children_of(pid_t pid, pid_t *out, size_t max)
{
	char p[96], buf[4096];
	size_t n = 0;
	ssize_t len;
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/task/%d/children", pid, pid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return 0;
	buf[len] = '\0';
	for (char *s = buf, *e; *s && n < max; s = e) {
		long c = strtol(s, &e, 10);

		if (e == s)
			break;
		out[n++] = (pid_t)c;
	}
	return n;
}

/* @sig to every descendant of @pid (not @pid itself), depth first. */
static void signal_tree(pid_t pid, int sig, int depth)
{
	pid_t kids[256];
	size_t n = children_of(pid, kids, WD_ARRAY_SIZE(kids));

	if (depth > 32)
		return;
	for (size_t i = 0; i < n; i++) {
		kill(kids[i], sig);
		signal_tree(kids[i], sig, depth + 1);
	}
}

/* The program: the first child of bwrap's pid-1 reaper inside the pid namespace. */
static pid_t program_pid(const struct run *r)
{
	pid_t kids[4];

	if (r->ns_init > 0 && children_of(r->ns_init, kids, 4) > 0)
		return kids[0];
	return 0;
}

/* bwrap's --info-fd: a JSON object with "child-pid", written in pieces, then closed.
 * Return: true when the fd is done with (EOF or error). */
static bool read_info(struct run *r, int fd)
{
	ssize_t n = read(fd, r->info + r->info_len, sizeof(r->info) - 1 - r->info_len);
	json_t *j;

	if (n < 0 && errno == EINTR)
		return false;
	if (n > 0) {
		r->info_len += (size_t)n;
		r->info[r->info_len] = '\0';
	}
	j = json_loads(r->info, JSON_DISABLE_EOF_CHECK, NULL);
	if (j && json_is_integer(json_object_get(j, "child-pid")))
		r->ns_init = (pid_t)json_integer_value(json_object_get(j, "child-pid"));
	json_decref(j);
	return n <= 0 || r->ns_init > 0 || r->info_len + 1 >= sizeof(r->info);
}

/* The folder the program starts in: the current one when a grant makes it visible. */
static const char *inner_cwd(const struct run *r, char *buf, size_t size)
{
	if (!getcwd(buf, size))
		return "/";
	for (size_t i = 0; i < r->pol->nread; i++)
		if (r->pol->read[i].real && run_path_within(buf, r->pol->read[i].real))
			return buf;
	for (size_t i = 0; i < r->pol->nwrite; i++)
		if (r->pol->write[i].real && run_path_within(buf, r->pol->write[i].real))
			return buf;
	return "/";
}

/*
 * Write grants that do not exist yet are created, owned by the program's user. The folder is
 * made inside its parent opened without following links, and never through a link: a link
 * planted where the grant should be (after the validator looked) fails the run.
 */
int run_sandbox_grants(struct run *r)
{
	for (size_t i = 0; i < r->pol->nwrite; i++) {
		const struct policy_grant *g = &r->pol->write[i];
		char parent[PATH_MAX], *name;
		struct stat st;
		int pfd;

		if (!g->missing || !g->real)
			continue;
		snprintf(parent, sizeof(parent), "%s", g->real);
		name = strrchr(parent, '/');
		if (!name || !name[1])
			return run_fail(r, "filesystem", NULL, "write grant %s: no parent folder",
					g->real);
		*name++ = '\0';
		pfd = wd_open_nofollow(parent[0] ? parent : "/", O_PATH | O_DIRECTORY);
		if (pfd < 0)
			return run_fail(
			    r, "filesystem", "write the grant's real path in the policy",
			    "creating write grant %s: its parent %s: %s", g->real,
			    parent[0] ? parent : "/",
			    pfd == -ELOOP ? "a symbolic link is in the way" : strerror(-pfd));
		if (mkdirat(pfd, name, 0755) < 0 && errno != EEXIST) {
			int e = errno;

			close(pfd);
			return run_fail(r, "filesystem", "create the folder's parent",
					"creating write grant %s: %s", g->real, strerror(e));
		}
		if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
		    fchownat(pfd, name, r->uid, r->gid, AT_SYMLINK_NOFOLLOW) < 0) {
			int e = S_ISLNK(st.st_mode) ? ELOOP : errno ? errno : ENOTDIR;

			close(pfd);
			return run_fail(r, "filesystem",
					"write the grant's real path in the policy",
					"creating write grant %s: %s", g->real,
					e == ELOOP ? "a symbolic link is in the way" : strerror(e));
		}
		close(pfd);
	}
	return 0;
}

/*
 * Fork the child that becomes bubblewrap, early: it enters the netns and the cgroups (a
 * cgroup v1 attach waits for an RCU grace period, ~10 ms) while the parent starts and checks
 * the gateway, then waits on the "go" pipe. Closing that pipe instead makes it exit.
 */
int run_sandbox_prepare(struct run *r)
{
	static const char *const names[BWRAP_NDATA] = {"resolv.conf", "hosts", "passwd", "group",
						       "boot_id"};
	struct child_plan c = {0};
	struct bwrap_spec *s = &c.spec;
	int info[2] = {-1, -1}, errp[2] = {-1, -1}, go[2] = {-1, -1};
	char cwd[PATH_MAX];
	struct wd_err err;
	int ret = 0;

	s->policy = r->pol;
	s->argv = r->argv;
	s->environ = environ;
	s->host4 = r->host4;
	s->host6 = r->host6;
	s->proxy_port = r->gwc.port_proxy;
	s->new_session = !isatty(STDIN_FILENO);
	s->cwd = inner_cwd(r, cwd, sizeof(cwd));
	/* /etc in one mount when nothing of the policy lies under it; else file by file */
	if (run_etc_usable(r->pol) && !run_etc_base(RUN_ETC_DIR))
		s->etc_base = RUN_ETC_DIR;
	for (int i = 0; i < BWRAP_NDATA; i++)
		s->data_fd[i] = -1;
	s->seccomp_fd = -1;
	ret = run_empty_file(RUN_EMPTY_FILE);
	if (ret) {
		ret =
		    run_fail(r, "exec", "remove what is at " RUN_EMPTY_FILE " and run again",
			     "preparing %s (bound over the /proc files a sandbox does not see): %s",
			     RUN_EMPTY_FILE, strerror(-ret));
		goto out;
	}
	s->empty_file = RUN_EMPTY_FILE;
	ret = bwrap_grants(r->pol, &r->grants, &r->ngrants);
	if (ret) {
		ret = run_fail(r, "exec", NULL, "listing the grants: %s", strerror(-ret));
		goto out;
	}
	c.grants = r->grants;
	c.ngrants = r->ngrants;
	/* the seccomp filter: without it nothing runs (fail closed) */
	wd_err_clear(&err);
	if (!r->no_seccomp) {
		ret = sandbox_seccomp_fd(run_sandbox_allow(r->pol), &s->seccomp_fd, NULL, &err);
		if (ret) {
			ret = run_fail(r, "sandbox", "check `warden doctor`", "%s", err.msg);
			goto out;
		}
	}
	if (pipe2(info, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0 || pipe2(go, O_CLOEXEC) < 0) {
		ret = run_fail(r, "exec", NULL, "pipe: %s", strerror(errno));
		goto out;
	}
	s->info_fd = info[1];
	for (int i = 0; i < BWRAP_NDATA; i++) {
		struct wd_buf b = WD_BUF_INIT;

		ret = bwrap_file_text(i, s, r->uid, r->gid, &b);
		s->data_fd[i] = ret ? ret : memfd_text(names[i], &b);
		wd_buf_free(&b);
		if (s->data_fd[i] < 0) {
			ret = run_fail(r, "exec", NULL, "generating %s: %s", names[i],
				       strerror(-s->data_fd[i]));
			goto out;
		}
	}
	r->child = fork();
	if (r->child < 0) {
		r->child = 0;
		ret = run_fail(r, "exec", NULL, "fork: %s", strerror(errno));
		goto out;
	}
	if (r->child == 0) {
		close(errp[0]);
		close(info[0]);
		close(go[1]);
		c.errfd = errp[1];
		c.gofd = go[0];
		child_exec(r, &c);
	}
	r->info_fd = info[0];
	r->err_fd = errp[0];
	r->go_fd = go[1];
	info[0] = errp[0] = go[1] = -1;
out:
	for (int i = 0; i < BWRAP_NDATA; i++)
		if (s->data_fd[i] >= 0)
			close(s->data_fd[i]);
	wd_closep(&s->seccomp_fd);
	wd_closep(&info[0]);
	wd_closep(&info[1]);
	wd_closep(&errp[0]);
	wd_closep(&errp[1]);
	wd_closep(&go[0]);
	wd_closep(&go[1]);
	return ret;
}

/* The failure the child reported, as `warden run` says it. Return: 125. */
static int child_failed(struct run *r, const struct child_report *rep)
{
	const struct bwrap_grant *g =
	    rep->index >= 0 && (size_t)rep->index < r->ngrants ? &r->grants[rep->index] : NULL;
	const char *who = r->user ? r->user : "the sandbox user";

	switch ((enum child_stage)rep->stage) {
	case CHILD_NETNS:
		return run_fail(r, "exec", "check `warden doctor`",
				"entering the run's namespace: %s", strerror(rep->err));
	case CHILD_CGROUP:
		return run_fail(r, "exec", "check `warden doctor`", "joining the run's cgroups: %s",
				strerror(rep->err));
	case CHILD_USER:
		return run_fail(r, "exec", NULL, "becoming uid %u (%s): %s", (unsigned)r->uid, who,
				strerror(rep->err));
	case CHILD_KEYRING:
		return run_fail(r, "exec", NULL, "joining a session keyring of the run's own: %s",
				strerror(rep->err));
	case CHILD_GRANT:
		if (g && rep->err == ELOOP)
			return run_fail(r, "filesystem", "check what replaced it, then run again",
					"grant %s: a symbolic link appeared on its path after the "
					"policy was checked; a grant is never bound through a link",
					g->path);
		return run_fail(r, "filesystem", NULL, "opening grant %s as uid %u (%s): %s",
				g ? g->path : "?", (unsigned)r->uid, who, strerror(rep->err));
	case CHILD_GRANT_ACCESS:
		return run_fail(
		    r, "filesystem",
		    "make it so for that user (chown, chmod, or an ACL: see docs/run.md), "
		    "or run warden through sudo so the program runs as you",
		    "%s %s is not %s by uid %u (%s), whom the program runs as: %s",
		    g && g->rw ? "write grant" : "read grant", g ? g->path : "?",
		    g && g->rw ? "writable" : "readable", (unsigned)r->uid, who,
		    strerror(rep->err));
	case CHILD_ARGS:
	case CHILD_FDS:
		return run_fail(r, "exec", NULL, "preparing bwrap's arguments and descriptors: %s",
				strerror(rep->err));
	case CHILD_LIMIT:
		return run_fail(r, "limits", NULL, "setting the file size limit: %s",
				strerror(rep->err));
	case CHILD_EXEC:
		return run_fail(r, "exec", "check `warden doctor`", "starting %s: %s", r->bwrap,
				strerror(rep->err));
	}
	return run_fail(r, "exec", NULL, "the child failed: %s", strerror(rep->err));
}

/* Let the prepared child exec bubblewrap and learn whether it could (its error pipe closes
 * at exec, or carries what went wrong before). Return: 0 or 125. */
int run_sandbox_spawn(struct run *r)
{
	struct child_report rep;
	ssize_t n;

	r->t0 = wd_mono_ns();
	/* a child that failed already has exited: its report waits in the pipe either way */
	(void)!wd_write_all(r->go_fd, "g", 1);
	wd_closep(&r->go_fd);
	do
		n = read(r->err_fd, &rep, sizeof(rep));
	while (n < 0 && errno == EINTR);
	wd_closep(&r->err_fd);
	if (n == 0)
		return 0;
	if (n != sizeof(rep))
		rep = (struct child_report){n < 0 ? errno : EPROTO, CHILD_EXEC, -1};
	waitpid(r->child, &(int){0}, 0);
	r->child = 0;
	return child_failed(r, &rep);
}

/* A prepared child that will not run: it exits when its "go" pipe closes. */
void run_sandbox_cancel(struct run *r)
{
	int st;

	wd_closep(&r->go_fd);
	wd_closep(&r->err_fd);
	wd_closep(&r->info_fd);
	if (r->child > 0)
		waitpid(r->child, &st, 0);
	r->child = 0;
}

int run_sandbox_probe(struct run *r)
{
	struct stat st;

	r->bwrap = getenv("WARDEN_BWRAP");
	if (!r->bwrap || !*r->bwrap)
		r->bwrap = BWRAP_DEFAULT;
	if (stat(r->bwrap, &st) < 0 || !S_ISREG(st.st_mode) || access(r->bwrap, X_OK))
		return run_fail(r, "prerequisites", "apt-get install bubblewrap",
				"bubblewrap not found at %s", r->bwrap);
	return 0;
}

void run_sandbox_describe(struct run *r, char *out, size_t size)
{
	char allow[64], filter[96];
	unsigned bits = run_sandbox_allow(r->pol);

	sandbox_allow_text(bits, allow, sizeof(allow));
	if (r->no_seccomp)
		snprintf(filter, sizeof(filter), "off(WARDEN_UNSAFE_NO_SECCOMP)");
	else if (bits)
		snprintf(filter, sizeof(filter), "on(allow=%s)", allow);
	else
		snprintf(filter, sizeof(filter), "on");
	snprintf(out, size, "bwrap(user,pid,ipc,uts,cgroup,mount),seccomp=%s,userns=%s", filter,
		 (bits & SANDBOX_ALLOW_USERNS) ? "allowed" : "refused");
}

void run_sandbox_release(struct run *r)
{
	wd_closep(&r->info_fd);
	free(r->grants);
	r->grants = NULL;
	r->ngrants = 0;
}

pid_t run_sandbox_pid(const struct run *r)
{
	return r->child;
}

int run_sandbox_event_fd(const struct run *r)
{
	return r->info_fd;
}

bool run_sandbox_event(struct run *r)
{
	return read_info(r, r->info_fd);
}

void run_sandbox_signal(struct run *r, enum sandbox_target to, int sig)
{
	pid_t prog;

	switch (to) {
	case SANDBOX_PROGRAM:
		prog = program_pid(r);
		kill(prog > 0 ? prog : r->child, sig);
		break;
	case SANDBOX_TREE:
		signal_tree(r->ns_init, sig, 0);
		break;
	case SANDBOX_INSIDE:
		if (r->ns_init > 0)
			kill(r->ns_init, sig);
		break;
	}
}

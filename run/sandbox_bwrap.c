/* run_sandbox_bwrap.c - the bubblewrap sandbox backend (run_sandbox.h): the program runs under
 * `bwrap` with its own user, pid, ipc, uts, cgroup and mount namespaces in the run's network
 * namespace, sees the read-only runtime base and the policy's grants, and gets the seccomp
 * filter of sandbox/.
 *
 * Theory of operation:
 *   probe     $WARDEN_BWRAP (default /usr/bin/bwrap) is an executable file
 *   prepare   in the parent: /run/warden/empty (bound over the /proc files a sandbox does not
 *             see), /etc in one mount when nothing of the policy lies under it (run_etc.c),
 *             the grants in mount order, the seccomp filter (fail closed), bwrap's info pipe,
 *             the generated /etc files as memfds; then the parked child (run_child.c). Its
 *             hook, as the program's user, opens each grant without following links (the
 *             validator's real path has none, so a link planted since is refused) and checks
 *             that user may use it, builds bwrap's options (bwrap.c) into a memfd for
 *             `bwrap --args FD -- COMMAND...`, so no --setenv value is in any command line,
 *             and execs bwrap with an empty environment
 *   spawn     "go"; a failure of a child stage comes back over the error pipe
 *   event     bwrap's --info-fd: a JSON object with "child-pid", the sandbox's pid-1 reaper;
 *             "the program" is the reaper's first child
 *   program   that first child, as a pidfd and its /proc folder (bwrap_program())
 *   signal    the program, every descendant of the reaper (not the reaper: bwrap must stay to
 *             report the status), or the reaper (the kernel ends the pid namespace with it)
 */
#include "run/bwrap.h"
#include "run/run.h"
#include "run/child.h"
#include "run/sandbox.h"
#include "sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define BWRAP_DEFAULT "/usr/bin/bwrap"

/* The generated files' names, in the order of bwrap_spec.data_fd (memfds; --print-bwrap's
 * files). */
static const char *const data_names[BWRAP_NDATA] = {"resolv.conf", "hosts", "passwd", "group",
						    "boot_id"};

/* The child's own stages (struct run_child_report.stage). */
enum {
	BWRAP_CHILD_GRANT = RUN_CHILD_BACKEND, /* opening grant @index without following links */
	BWRAP_CHILD_GRANT_ACCESS, /* grant @index is not readable/writable by the program's user */
	BWRAP_CHILD_ARGS,	  /* bwrap's arguments */
};

/**
 * struct bwrap_sandbox - the backend's state (struct sandbox.priv)
 * @bin:	the bwrap binary
 * @grants:	the grants in mount order (bwrap_grants())
 * @ngrants:	how many
 * @spec:	what the child builds bwrap's command line from
 * @child:	the parked child, then bwrap
 * @info:	bwrap's --info-fd output so far
 * @info_len:	its length
 * @ns_init:	the sandbox's pid-1 reaper, once known (0 before)
 */
struct bwrap_sandbox {
	const char *bin;
	struct bwrap_grant *grants;
	size_t ngrants;
	struct bwrap_spec spec;
	struct run_child child;
	char info[512];
	size_t info_len;
	pid_t ns_init;
	struct sock_filter *notify;
	size_t notify_len;
};

static int say(struct sandbox_err *e, int code, const char *step, const char *fix, const char *fmt,
	       ...) WD_PRINTF(5, 6);
static int say(struct sandbox_err *e, int code, const char *step, const char *fix, const char *fmt,
	       ...)
{
	va_list ap;

	e->step = step;
	e->fix = fix;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return code;
}

/* A spec that holds no descriptor. */
static void no_data(struct bwrap_spec *s)
{
	for (int i = 0; i < BWRAP_NDATA; i++)
		s->data_fd[i] = -1;
	s->seccomp_fd = -1;
	s->info_fd = -1;
}

static int bwrap_probe(struct sandbox *sb, struct sandbox_err *e)
{
	struct bwrap_sandbox *b = sb->priv;
	const char *bin = getenv("WARDEN_BWRAP");
	struct stat st;

	if (!b) {
		b = calloc(1, sizeof(*b));
		if (!b)
			return say(e, -ENOMEM, "prerequisites", NULL, "out of memory");
		b->child = RUN_CHILD_INIT;
		no_data(&b->spec);
		sb->priv = b;
	}
	b->bin = bin && *bin ? bin : BWRAP_DEFAULT;
	if (stat(b->bin, &st) < 0 || !S_ISREG(st.st_mode) || access(b->bin, X_OK))
		return say(e, -ENOENT, "prerequisites", "apt-get install bubblewrap",
			   "bubblewrap not found at %s", b->bin);
	return 0;
}

static void bwrap_describe(const struct sandbox_spec *s, char *out, size_t size)
{
	char allow[64], filter[96];

	sandbox_allow_text(s->allow, allow, sizeof(allow));
	if (!s->seccomp)
		snprintf(filter, sizeof(filter), "off(WARDEN_UNSAFE_NO_SECCOMP)");
	else if (s->allow)
		snprintf(filter, sizeof(filter), "on(allow=%s)", allow);
	else
		snprintf(filter, sizeof(filter), "on");
	snprintf(out, size, "bwrap(user,pid,ipc,uts,cgroup,mount),seccomp=%s,userns=%s", filter,
		 (s->allow & SANDBOX_ALLOW_USERNS) ? "allowed" : "refused");
}

/* Open grant @g as the program's user without following links, and check that user may use
 * it. Return: 0, or a negative errno with *@ret_stage saying which check failed. */
static int open_grant(const struct bwrap_grant *g, int *ret_fd, int *ret_stage)
{
	struct stat st;
	int fd = wd_open_nofollow(g->path, O_PATH), mode;

	*ret_stage = BWRAP_CHILD_GRANT;
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
		*ret_stage = BWRAP_CHILD_GRANT_ACCESS;
		return -e;
	}
	*ret_fd = fd;
	return 0;
}

/* run_child_plan.prepare_exec, in the child as the program's user: the grants opened, bwrap's
 * options in a memfd, `bwrap --args FD -- COMMAND...` with an empty environment. */
static int prepare_exec(void *arg, struct run_child_exec *x, struct run_child_report *rep)
{
	static char *const no_env[] = {NULL};
	struct bwrap_sandbox *b = arg;
	struct bwrap_spec *s = &b->spec;
	struct bwrap_argv av = {0};
	struct wd_buf text = WD_BUF_INIT;
	char **argv, *num;
	int *gfd, *keep, argsfd, e;
	size_t nkeep = 0, n = 0;

	*rep = (struct run_child_report){ENOMEM, BWRAP_CHILD_ARGS, 0};
	gfd = calloc(b->ngrants + 1, sizeof(*gfd));
	keep = calloc(b->ngrants + BWRAP_NDATA + 3, sizeof(*keep));
	if (!gfd || !keep) {
		free(gfd);
		free(keep);
		return -ENOMEM;
	}
	for (size_t i = 0; i < b->ngrants; i++) {
		int stage;

		e = open_grant(&b->grants[i], &gfd[i], &stage);
		if (e) {
			/* the child _exits on an error: the memory and fds go with it */
			/* NOLINTNEXTLINE(clang-analyzer-unix.Malloc) */
			*rep = (struct run_child_report){-e, stage, (int)i};
			return e;
		}
		keep[nkeep++] = gfd[i];
	}
	s->grants = b->grants;
	s->ngrants = b->ngrants;
	s->grant_fd = gfd;
	e = bwrap_build(b->bin, s, &av);
	if (!e)
		e = bwrap_args_text(&av, &text);
	argsfd = e ? e : run_child_memfd("bwrap-args", text.data, text.len);
	if (argsfd < 0) {
		rep->err = -argsfd;
		return argsfd;
	}
	if (getenv("WARDEN_DEBUG_BWRAP")) {
		for (size_t i = 0; i < av.n; i++)
			fprintf(stderr, "%s%s", i ? " " : "", av.v[i]);
		fputc('\n', stderr);
	}
	keep[nkeep++] = argsfd;
	keep[nkeep++] = s->info_fd;
	keep[nkeep++] = s->seccomp_fd;
	for (int i = 0; i < BWRAP_NDATA; i++)
		keep[nkeep++] = s->data_fd[i];
	/* bwrap --args FD -- COMMAND...: the options come from the memfd */
	argv = calloc(av.n + 4, sizeof(*argv));
	if (!argv || asprintf(&num, "%d", argsfd) < 0)
		return -ENOMEM;
	argv[n++] = av.v[0];
	argv[n++] = "--args";
	argv[n++] = num;
	for (size_t i = av.opts_end; i < av.n; i++)
		argv[n++] = av.v[i];
	argv[n] = NULL;
	x->argv = argv;
	/* bwrap's own process (pid 1 of the sandbox) keeps no variable of the caller's */
	x->envp = no_env;
	x->keep = keep;
	x->nkeep = nkeep;
	return 0;
}

static void close_data(struct bwrap_spec *s)
{
	for (int i = 0; i < BWRAP_NDATA; i++)
		wd_closep(&s->data_fd[i]);
	wd_closep(&s->seccomp_fd);
	wd_closep(&s->info_fd);
}

/* What the sandbox is made of, from the run's spec (no descriptor yet); the masked /proc files'
 * empty file made sure of. Return: 0, or a negative errno with @e filled. */
static int fill_spec(struct bwrap_spec *s, const struct sandbox_spec *sp, struct sandbox_err *e)
{
	int ret;

	memset(s, 0, sizeof(*s));
	no_data(s);
	s->policy = sp->policy;
	s->argv = sp->argv;
	s->environ = sp->environ;
	s->host4 = sp->host4;
	s->host6 = sp->host6;
	s->proxy_port = sp->proxy_port;
	s->new_session = !sp->tty;
	s->cwd = sp->cwd;
	s->learn = sp->learn;
	/* /etc in one mount when nothing of the policy lies under it; else file by file (the
	 * learning sandbox shows the host's) */
	if (!sp->learn && run_etc_usable(sp->policy) && !run_etc_base(RUN_ETC_DIR))
		s->etc_base = RUN_ETC_DIR;
	s->empty_file = sp->rootless ? sp->empty_file : RUN_EMPTY_FILE;
	ret = run_empty_file_owned(s->empty_file, sp->rootless ? getuid() : 0);
	if (ret)
		return say(e, ret, "exec", "remove what is at that path and run again",
			   "preparing %s (bound over the /proc files a sandbox does not see): %s",
			   s->empty_file, strerror(-ret));
	return 0;
}

/*
 * Fork the child that becomes bubblewrap, early: it enters the netns and the cgroups (a
 * cgroup v1 attach waits for an RCU grace period, ~10 ms) while the parent starts and checks
 * the gateway, then waits on the "go" pipe. Closing that pipe instead makes it exit.
 */
static int bwrap_prepare(struct sandbox *sb, const struct sandbox_spec *sp, struct sandbox_err *e)
{
	struct bwrap_sandbox *b = sb->priv;
	struct bwrap_spec *s = &b->spec;
	struct run_child_plan plan = {0};
	int info[2] = {-1, -1};
	struct wd_err err;
	int ret;

	sb->spec = sp;
	wd_closep(&sb->event_fd);
	close_data(s);
	ret = fill_spec(s, sp, e);
	if (ret)
		goto out;
	free(b->grants);
	b->grants = NULL;
	ret = bwrap_grants(sp->policy, &b->grants, &b->ngrants);
	if (ret) {
		say(e, ret, "exec", NULL, "listing the grants: %s", strerror(-ret));
		goto out;
	}
	/* the seccomp filter: without it nothing runs (fail closed) */
	wd_err_clear(&err);
	if (sp->seccomp) {
		ret = sandbox_seccomp_fd(sp->allow, &s->seccomp_fd, NULL, &err);
		if (ret) {
			say(e, ret, "sandbox", "check `warden doctor`", "%s", err.msg);
			goto out;
		}
	}
	if (pipe2(info, O_CLOEXEC) < 0) {
		ret = say(e, -errno, "exec", NULL, "pipe: %s", strerror(errno));
		goto out;
	}
	s->info_fd = info[1];
	for (int i = 0; i < BWRAP_NDATA; i++) {
		struct wd_buf t = WD_BUF_INIT;

		ret = bwrap_file_text(i, s, sp->uid, sp->gid, &t);
		s->data_fd[i] = ret ? ret : run_child_memfd(data_names[i], t.data, t.len);
		wd_buf_free(&t);
		if (s->data_fd[i] < 0) {
			ret = say(e, s->data_fd[i], "exec", NULL, "generating %s: %s",
				  data_names[i], strerror(-s->data_fd[i]));
			s->data_fd[i] = -1;
			goto out;
		}
	}
	plan.netns_fd = sp->netns_fd;
	plan.userns_fd = sp->rootless ? sp->userns_fd : -1;
	plan.nproc = sp->rootless ? sp->nproc : 0;
	plan.limits = sp->limits;
	plan.uid = sp->uid;
	plan.gid = sp->gid;
	plan.groups = sp->groups;
	plan.ngroups = sp->ngroups;
	plan.fsize = sp->policy->limits.disk_mb << 20;
	plan.wrap = sp->wrap;
	plan.wrap_bin = sp->wrap_bin;
	plan.wrap_env = sp->wrap_env;
	plan.prepare_exec = prepare_exec;
	plan.arg = b;
	plan.premask = sp->premask;
	plan.npremask = sp->npremask;
	/* the file-access recorder's filter: loaded by the child, last before bwrap */
	if (sp->files_start && !b->notify) {
		/* warden trace's recorder carries the path calls out itself: the wider table */
		if (policy_audit_files(sp->policy) == POLICY_FILES_TRACE)
			ret = sandbox_notify_bpf_trace(&b->notify, &b->notify_len, &err);
		else
			ret = sandbox_notify_bpf(&b->notify, &b->notify_len, &err);
		if (ret) {
			say(e, ret, "sandbox", "set `audit.files: off` in the policy", "%s",
			    err.msg);
			goto out;
		}
	}
	plan.notify = sp->files_start ? b->notify : NULL;
	plan.notify_len = b->notify_len;
	ret = run_child_fork(&b->child, &plan, e);
	if (ret)
		goto out;
	sb->pid = b->child.pid;
	sb->event_fd = info[0];
	info[0] = -1;
	b->info_len = 0;
	b->ns_init = 0;
out:
	/* the child has its copies; the parent keeps only the info pipe's read end */
	close_data(s);
	wd_closep(&info[0]);
	return ret;
}

/* The failure of one of the child's own stages, as `warden run` says it. */
static void explain(const struct bwrap_sandbox *b, const struct sandbox_spec *sp,
		    const struct run_child_report *rep, struct sandbox_err *e)
{
	const struct bwrap_grant *g =
	    rep->index >= 0 && (size_t)rep->index < b->ngrants ? &b->grants[rep->index] : NULL;
	const char *who = sp->user ? sp->user : "the sandbox user";
	unsigned uid = (unsigned)sp->uid;

	if (run_child_explain(rep, "bwrap", b->bin, sp->uid, sp->user, e))
		return;
	switch (rep->stage) {
	case BWRAP_CHILD_GRANT:
		if (g && rep->err == ELOOP)
			say(e, 0, "filesystem", "check what replaced it, then run again",
			    "grant %s: a symbolic link appeared on its path after the policy was "
			    "checked; a grant is never bound through a link",
			    g->path);
		else
			say(e, 0, "filesystem", NULL, "opening grant %s as uid %u (%s): %s",
			    g ? g->path : "?", uid, who, strerror(rep->err));
		break;
	case BWRAP_CHILD_GRANT_ACCESS:
		run_child_grant_denied(sp, g ? g->path : "?", g && g->rw, rep->err, e);
		break;
	case BWRAP_CHILD_ARGS:
		say(e, 0, "exec", NULL, "preparing bwrap's arguments and descriptors: %s",
		    strerror(rep->err));
		break;
	default:
		say(e, 0, "exec", NULL, "the child failed: %s", strerror(rep->err));
		break;
	}
}

/* Let the prepared child exec bubblewrap and learn whether it could (its error pipe closes
 * at exec, or carries what went wrong before). */
static int bwrap_spawn(struct sandbox *sb, struct sandbox_err *e)
{
	struct bwrap_sandbox *b = sb->priv;
	struct run_child_report rep;
	int lfd = -1, ret;

	if (b->child.notify_fd >= 0) {
		/* the recorder runs before the program may: its first exec waits for it */
		ret = run_child_listener(&b->child, &lfd);
		if (!ret) {
			ret = sb->spec->files_start(sb->spec->files_arg, lfd, b->child.pid);
			if (ret) {
				run_child_cancel(&b->child);
				sb->pid = 0;
				wd_closep(&sb->event_fd);
				return say(e, ret, "sandbox", NULL,
					   "starting the file-access recorder: %s", strerror(-ret));
			}
		} else if (ret != -ECHILD) {
			run_child_cancel(&b->child);
			sb->pid = 0;
			wd_closep(&sb->event_fd);
			return say(e, ret, "sandbox", NULL,
				   "receiving the file-access recorder's descriptor: %s",
				   strerror(-ret));
		}
		/* -ECHILD: the child failed a stage; run_child_go() has its report */
	}
	if (!run_child_go(&b->child, &rep)) {
		if (b->child.notify_fd < 0 && sb->spec->files_start && lfd < 0) {
			/* exec'd without a recorder although one was asked for: fail closed */
			kill(b->child.pid, SIGKILL);
			waitpid(b->child.pid, &(int){0}, 0);
			b->child.pid = sb->pid = 0;
			wd_closep(&sb->event_fd);
			return say(e, -EPROTO, "sandbox", NULL,
				   "the file-access recorder's descriptor never came");
		}
		return 0;
	}
	sb->pid = 0;
	wd_closep(&sb->event_fd);
	explain(b, sb->spec, &rep, e);
	return -ECHILD;
}

/* A prepared child that will not run: it exits when its "go" pipe closes. */
static void bwrap_cancel(struct sandbox *sb)
{
	struct bwrap_sandbox *b = sb->priv;

	wd_closep(&sb->event_fd);
	if (b)
		run_child_cancel(&b->child);
	sb->pid = 0;
}

bool sandbox_bwrap_info_pid(const char *text, pid_t *ret_pid)
{
	json_t *j = json_loads(text, JSON_DISABLE_EOF_CHECK, NULL);
	bool ok = j && json_is_integer(json_object_get(j, "child-pid")) &&
		  json_integer_value(json_object_get(j, "child-pid")) > 0;

	if (ok)
		*ret_pid = (pid_t)json_integer_value(json_object_get(j, "child-pid"));
	json_decref(j);
	return ok;
}

/* bwrap's --info-fd: a JSON object with "child-pid", written in pieces, then closed.
 * Return: true when the fd is done with (EOF or error, the pid known, the buffer full). */
static bool bwrap_event(struct sandbox *sb)
{
	struct bwrap_sandbox *b = sb->priv;
	ssize_t n = read(sb->event_fd, b->info + b->info_len, sizeof(b->info) - 1 - b->info_len);

	if (n < 0 && errno == EINTR)
		return false;
	if (n > 0) {
		b->info_len += (size_t)n;
		b->info[b->info_len] = '\0';
	}
	sandbox_bwrap_info_pid(b->info, &b->ns_init);
	return n <= 0 || b->ns_init > 0 || b->info_len + 1 >= sizeof(b->info);
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
/* NOLINTNEXTLINE(misc-no-recursion): at most 32 deep, the frame is 1 KiB */
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

static void bwrap_signal(struct sandbox *sb, enum sandbox_target to, int sig)
{
	struct bwrap_sandbox *b = sb->priv;
	pid_t kids[4];

	if (!b)
		return;
	switch (to) {
	case SANDBOX_PROGRAM:
		/* the program: the first child of bwrap's pid-1 reaper inside the pid namespace */
		if (b->ns_init > 0 && children_of(b->ns_init, kids, 4) > 0)
			kill(kids[0], sig);
		else if (sb->pid > 0)
			kill(sb->pid, sig);
		break;
	case SANDBOX_TREE:
		if (b->ns_init > 0)
			signal_tree(b->ns_init, sig, 0);
		break;
	case SANDBOX_INSIDE:
		if (b->ns_init > 0)
			kill(b->ns_init, sig);
		break;
	}
}

/* The PPid: line of the status file in the /proc folder @procfd, or -1. */
static pid_t parent_of(int procfd)
{
	char v[32];
	unsigned long ppid;

	if (wd_proc_status_field_at(procfd, "PPid", v, sizeof(v)) ||
	    wd_proc_status_num_parse(v, 10, &ppid) || ppid > INT_MAX)
		return -1;
	return (pid_t)ppid;
}

/* The program: the first child of bwrap's pid-1 reaper (it forks nothing before it), a pidfd
 * and its /proc folder. The folder is opened after the pidfd and checked against it: the pid
 * still names the pidfd's process (a signal 0 reaches it; a zombie's pid is not reused), and
 * that process is the reaper's child. */
static int bwrap_program(struct sandbox *sb, int *ret_pidfd, int *ret_procfd)
{
	struct bwrap_sandbox *b = sb->priv;
	int pidfd = -1, procfd = -1;
	pid_t kids[4];
	char p[48];

	if (!b || b->ns_init <= 0 || children_of(b->ns_init, kids, 4) == 0)
		return -EAGAIN;
	pidfd = (int)syscall(SYS_pidfd_open, kids[0], 0);
	if (pidfd < 0)
		return errno == ENOSYS ? -ENOSYS : -EAGAIN;
	snprintf(p, sizeof(p), "/proc/%d", (int)kids[0]);
	procfd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (procfd < 0 || syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0 ||
	    parent_of(procfd) != b->ns_init) {
		wd_closep(&procfd);
		close(pidfd);
		return -EAGAIN;
	}
	*ret_pidfd = pidfd;
	*ret_procfd = procfd;
	return 0;
}

static void bwrap_release(struct sandbox *sb)
{
	struct bwrap_sandbox *b = sb->priv;

	wd_closep(&sb->event_fd);
	if (!b)
		return;
	close_data(&b->spec);
	wd_closep(&b->child.go_fd);
	wd_closep(&b->child.err_fd);
	wd_closep(&b->child.notify_fd);
	free(b->notify);
	free(b->grants);
	free(b);
	sb->priv = NULL;
}

/* @len bytes of @data into a new file @dir/@name (0600; the shell that runs the printed line
 * opens it). Return: 0, or a negative errno. */
static int dump_file(const char *dir, const char *name, const void *data, size_t len, char *path,
		     size_t size)
{
	int fd, ret;

	if (snprintf(path, size, "%s/%s", dir, name) >= (int)size)
		return -ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	ret = wd_write_all(fd, data ? data : "", len);
	if (close(fd) < 0 && !ret)
		ret = -errno;
	return ret;
}

/* The whole content of @fd, from offset 0, appended to @out. Return: 0 or a negative errno. */
static int fd_content(int fd, struct wd_buf *out)
{
	char buf[4096];
	off_t off = 0;
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		if (wd_buf_append(out, buf, (size_t)n))
			return -ENOMEM;
		off += n;
	}
	return n < 0 ? -errno : 0;
}

/* " N<WORD" (or N>) for the printed line's redirections. Return: 0 or -ENOMEM. */
static int redirect(struct wd_buf *r, int fd, const char *op, const char *path)
{
	if (wd_buf_printf(r, " %d%s", fd, op))
		return -ENOMEM;
	return bwrap_shell_word(path, r);
}

/*
 * `warden run --print-bwrap`: bwrap's command line as prepare_exec() builds it, the --args
 * memfd's options written out in place. The descriptors it names are the shell's
 * redirections at the end of the line: the generated files and the seccomp filter from files
 * in @dir, each grant opened by its real path (the launcher's child opens it without
 * following links; a shell cannot), the info pipe to /dev/null. The environment is emptied
 * (`env -i`) as for bwrap itself, and the ids are set (`setpriv`) when the program's user is
 * not the caller.
 */
static int bwrap_print(struct sandbox *sb, const struct sandbox_spec *sp, const char *dir,
		       struct wd_buf *out, struct sandbox_err *e)
{
	struct bwrap_sandbox *b = sb->priv;
	struct wd_buf redir = WD_BUF_INIT, t = WD_BUF_INIT;
	struct bwrap_grant *grants = NULL;
	struct bwrap_argv av = {0};
	struct bwrap_spec s;
	char path[PATH_MAX];
	struct wd_err err;
	size_t ngrants = 0;
	int *gfd = NULL, next = 3, ret, fd = -1;

	ret = fill_spec(&s, sp, e);
	if (ret)
		return ret;
	ret = bwrap_grants(sp->policy, &grants, &ngrants);
	if (ret)
		return say(e, ret, "exec", NULL, "listing the grants: %s", strerror(-ret));
	if (sp->seccomp) {
		wd_err_clear(&err);
		ret = sandbox_seccomp_fd(sp->allow, &fd, NULL, &err);
		if (ret) {
			say(e, ret, "sandbox", "check `warden doctor`", "%s", err.msg);
			goto out;
		}
		ret = fd_content(fd, &t);
		if (!ret)
			ret = dump_file(dir, "seccomp.bpf", t.data, t.len, path, sizeof(path));
		if (ret)
			goto failed;
		s.seccomp_fd = next++;
		ret = redirect(&redir, s.seccomp_fd, "<", path);
		if (ret)
			goto failed;
	}
	s.info_fd = next++;
	ret = redirect(&redir, s.info_fd, ">", "/dev/null");
	for (int i = 0; !ret && i < BWRAP_NDATA; i++) {
		t.len = 0;
		ret = bwrap_file_text(i, &s, sp->uid, sp->gid, &t);
		if (!ret)
			ret = dump_file(dir, data_names[i], t.data, t.len, path, sizeof(path));
		if (!ret) {
			s.data_fd[i] = next++;
			ret = redirect(&redir, s.data_fd[i], "<", path);
		}
	}
	if (ret)
		goto failed;
	gfd = calloc(ngrants + 1, sizeof(*gfd));
	if (!gfd) {
		ret = -ENOMEM;
		goto failed;
	}
	for (size_t i = 0; !ret && i < ngrants; i++) {
		gfd[i] = next++;
		ret = redirect(&redir, gfd[i], "<", grants[i].path);
	}
	s.grants = grants;
	s.ngrants = ngrants;
	s.grant_fd = gfd;
	if (!ret)
		ret = bwrap_build(b->bin, &s, &av);
	if (!ret && (uid_t)sp->uid != geteuid()) {
		ret = wd_buf_printf(out, "setpriv --reuid=%u --regid=%u ", (unsigned)sp->uid,
				    (unsigned)sp->gid);
		for (int i = 0; !ret && i < sp->ngroups; i++)
			ret = wd_buf_printf(out, "%s%u",
					    i ? "," : "--groups=", (unsigned)sp->groups[i]);
		if (!ret)
			ret = wd_buf_puts(out, sp->ngroups ? " " : "--clear-groups ");
	}
	if (!ret)
		ret = wd_buf_puts(out, "env -i");
	for (size_t i = 0; !ret && i < av.n; i++)
		ret = wd_buf_puts(out, " ") ? -ENOMEM : bwrap_shell_word(av.v[i], out);
	if (!ret)
		ret = wd_buf_append(out, redir.data, redir.len) ? -ENOMEM : 0;
failed:
	if (ret)
		say(e, ret, "exec", NULL, "printing bwrap's command line into %s: %s", dir,
		    strerror(-ret));
out:
	wd_closep(&fd);
	bwrap_argv_free(&av);
	wd_buf_free(&redir);
	wd_buf_free(&t);
	free(gfd);
	free(grants);
	return ret;
}

const struct sandbox_backend sandbox_backend_bwrap = {
    .name = "bwrap",
    .probe = bwrap_probe,
    .describe = bwrap_describe,
    .network = NULL,
    .prepare = bwrap_prepare,
    .spawn = bwrap_spawn,
    .cancel = bwrap_cancel,
    .event = bwrap_event,
    .program = bwrap_program,
    .signal = bwrap_signal,
    .release = bwrap_release,
    .print = bwrap_print,
};

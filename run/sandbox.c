/* run_sandbox.c - the sandbox stages of `warden run`, whatever the backend: the policy's
 * seccomp allowances, --print-seccomp, the write grants made (an empty file or a folder, removed
 * again when the run fails before its program starts), and the calls into the sandbox
 * backend (run_sandbox.h) with what the run knows (struct sandbox_spec), its failures said as
 * every stage says them. Which backend a run uses is backend.c's choice (run_sandbox_select()). */
#include "run/internal.h"
#include "run/learn.h"
#include "sandbox/sandbox.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
	unsigned allow = run_sandbox_allow(r->input.pol);
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
				  r->input.policy_abs, insns);
	if (ret) {
		wd_buf_free(&b);
		return run_fail(r, "sandbox", NULL, "out of memory");
	}
	fputs(wd_buf_cstr(&b), stdout);
	wd_buf_free(&b);
	return fflush(stdout) ? RUN_EXIT_WARDEN : 0;
}

static const struct sandbox_spec *spec_of(struct run *r);

/*
 * `warden run --print-bwrap`: the sandbox's command line for this policy and command, as a
 * shell line on stdout, the files its descriptors would carry in a new folder (said on
 * stderr). The addresses are those of the run pools' slot 0 (a rootless run's; a root-mode
 * run gets the slot it leases). Return: 0 or 125 (said).
 */
int run_sandbox_print_bwrap(struct run *r)
{
	struct wd_buf line = WD_BUF_INIT;
	struct sandbox_err e = {0};
	struct netns_addrs a;
	struct fw_config fc;
	const char *tmp = getenv("TMPDIR");
	char dir[PATH_MAX];
	bool kept;
	int ret;

	if (run_rootless_fw_config(&r->input.gwc, &fc, &a))
		return run_fail(r, "network", "correct pools.runs_v4 / runs_v6",
				"bad run pool %s or %s", r->input.gwc.pool_v4,
				r->input.gwc.pool_v6);
	inet_ntop(AF_INET, &a.host4, r->network.host4, sizeof(r->network.host4));
	inet_ntop(AF_INET6, &a.host6, r->network.host6, sizeof(r->network.host6));
	if (!tmp || tmp[0] != '/')
		tmp = "/tmp";
	if (snprintf(dir, sizeof(dir), "%s/warden-bwrap.XXXXXX", tmp) >= (int)sizeof(dir) ||
	    !mkdtemp(dir))
		return run_fail(r, "exec", "set TMPDIR to a folder you may write",
				"a folder for the descriptors' files under %s: %s", tmp,
				strerror(errno ? errno : ENAMETOOLONG));
	ret = r->sandbox.sb.be->print(&r->sandbox.sb, spec_of(r), dir, &line, &e);
	if (ret) {
		wd_buf_free(&line);
		rmdir(dir); /* (only when the backend wrote nothing there) */
		return run_fail(r, e.step ? e.step : "exec", e.fix, "%s", e.msg);
	}
	printf("%s\n", wd_buf_cstr(&line));
	wd_buf_free(&line);
	/* a folder the backend wrote nothing into is not left behind (the docker backend's
	 * line names no descriptor) */
	kept = rmdir(dir) < 0;
	if (!r->o.quiet && kept)
		wd_say(stderr,
		       "warden run: the descriptors' files are in %s (remove it when done); the "
		       "line runs in the caller's network namespace, not the run's, and without "
		       "the run's limits",
		       dir);
	return fflush(stdout) ? RUN_EXIT_WARDEN : 0;
}

/* The folder the program starts in: the current one when a grant makes it visible. */
static const char *inner_cwd(const struct run *r, char *buf, size_t size)
{
	if (!getcwd(buf, size))
		return "/";
	/* the learning sandbox shows the whole host */
	if (r->trace)
		return buf;
	for (size_t i = 0; i < r->input.pol->nread; i++)
		if (r->input.pol->read[i].real && run_path_within(buf, r->input.pol->read[i].real))
			return buf;
	for (size_t i = 0; i < r->input.pol->nwrite; i++)
		if (r->input.pol->write[i].real &&
		    run_path_within(buf, r->input.pol->write[i].real))
			return buf;
	return "/";
}

/* why making @path failed, for the message: a link in the way, or errno @e */
static const char *made_why(int e)
{
	return e == ELOOP ? "a symbolic link is in the way" : strerror(e);
}

/*
 * Make the missing write grant @g inside its parent @pfd (opened without following links) as
 * @name: an empty regular file (O_EXCL, O_NOFOLLOW, mode 0666 less the umask) or a folder (0755
 * less the umask), owned by the program's user; @m is filled when this call made it.
 * Return: 0, or 125 (said).
 */
static int make_grant(struct run *r, const struct policy_grant *g, int pfd, const char *name,
		      struct run_made *m)
{
	const char *kind = g->make_file ? "file" : "folder";
	struct stat st;
	int fd = -1, e;

	if (g->make_file) {
		fd = openat(pfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd < 0 && errno != EEXIST)
			goto fail;
	} else if (mkdirat(pfd, name, 0755) == 0) {
		fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			goto fail;
	} else if (errno != EEXIST) {
		goto fail;
	}
	if (fd < 0) {
		/* there already (made since the policy was checked): used when it is what the grant
		 * wants, and not a link; not ours to remove */
		if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			goto fail;
		errno = S_ISLNK(st.st_mode)			? ELOOP
			: g->make_file && !S_ISREG(st.st_mode)	? EISDIR
			: !g->make_file && !S_ISDIR(st.st_mode) ? ENOTDIR
								: 0;
		if (errno ||
		    fchownat(pfd, name, r->input.uid, r->input.gid, AT_SYMLINK_NOFOLLOW) < 0)
			goto fail;
		return 0;
	}
	if (fstat(fd, &st) < 0 || fchown(fd, r->input.uid, r->input.gid) < 0)
		goto fail;
	*m = (struct run_made){g->real, !g->make_file, st.st_dev, st.st_ino};
	close(fd);
	return 0;
fail:
	e = errno ? errno : EIO;
	if (fd >= 0)
		close(fd);
	return run_fail(r, "filesystem", "create the grant's parent folder, or write its real path",
			"creating write grant %s (an empty %s): %s", g->real, kind, made_why(e));
}

/*
 * Write grants that do not exist yet are created, owned by the program's user: an empty file
 * or a folder (policy_grant_make_file()). Each is made inside its parent opened without
 * following links, and never through a link: a link planted where the grant should be (after
 * the validator looked) fails the run. What is made is remembered for
 * run_sandbox_grants_undo().
 */
int run_sandbox_grants(struct run *r)
{
	const struct wd_policy *p = r->input.pol;

	/* once: a container's network stage makes them before its own stage (mode_docker.c) */
	if (r->sandbox.granted)
		return 0;
	r->sandbox.granted = true;
	if (p->nwrite && !r->sandbox.made) {
		r->sandbox.made = calloc(p->nwrite, sizeof(*r->sandbox.made));
		if (!r->sandbox.made)
			return run_fail(r, "filesystem", NULL, "out of memory");
	}
	for (size_t i = 0; i < p->nwrite; i++) {
		const struct policy_grant *g = &p->write[i];
		struct run_made m = {0};
		char parent[PATH_MAX], *name;
		int pfd, ret;

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
			return run_fail(r, "filesystem",
					"write the grant's real path in the policy",
					"creating write grant %s: its parent %s: %s", g->real,
					parent[0] ? parent : "/", made_why(-pfd));
		ret = make_grant(r, g, pfd, name, &m);
		close(pfd);
		if (ret)
			return ret;
		if (m.path)
			r->sandbox.made[r->sandbox.nmade++] = m;
	}
	return 0;
}

void run_sandbox_grants_undo(struct run *r)
{
	while (r->sandbox.nmade) {
		const struct run_made *m = &r->sandbox.made[--r->sandbox.nmade];
		char parent[PATH_MAX], *name;
		struct stat st;
		int pfd;

		snprintf(parent, sizeof(parent), "%s", m->path);
		name = strrchr(parent, '/');
		if (!name)
			continue;
		*name++ = '\0';
		pfd = wd_open_nofollow(parent[0] ? parent : "/", O_PATH | O_DIRECTORY);
		if (pfd < 0)
			continue;
		/* only the very file or folder made, still empty (a folder: rmdir says) */
		if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == m->dev &&
		    st.st_ino == m->ino && (m->dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode)) &&
		    (m->dir || st.st_size == 0) &&
		    unlinkat(pfd, name, m->dir ? AT_REMOVEDIR : 0) < 0)
			wd_say(stderr,
			       "warden run: could not remove the write grant %s made for "
			       "this run: %s",
			       m->path, strerror(errno));
		close(pfd);
	}
	free(r->sandbox.made);
	r->sandbox.made = NULL;
}

/* daemon mode with the daemon's cgroup v2 folder: the user may not move the child there itself
 * (the common-ancestor rule), the daemon does (cgroup_join) */
static bool daemon_joins(const struct run *r)
{
	return r->mode->by_daemon && r->limits.lim.kind == LIMITS_CGROUP2 &&
	       r->limits.lim.dir[0][0];
}

/* what the child joins itself then: nothing */
static const struct limits no_limits;

/* sandbox_spec.files_start: the recorder's thread takes the listener */
static int files_start(void *arg, int listener, pid_t outer)
{
	struct run *r = arg;
	int ret = 0;

	/* root mode: what trace mode carries out is done as the program's user */
	if (!r->mode->own_userns)
		ret = recorder_set_user(r->sandbox.files, r->input.uid, r->input.gid,
					r->input.groups, r->input.ngroups);
	if (ret) {
		close(listener);
		return ret;
	}
	return recorder_start(r->sandbox.files, listener, outer);
}

/* What the sandbox is to be, from what the run knows by now. */
static const struct sandbox_spec *spec_of(struct run *r)
{
	struct sandbox_spec *s = &r->sandbox.spec;

	s->policy = r->input.pol;
	s->argv = r->input.argv;
	s->environ = environ;
	s->cwd = inner_cwd(r, r->sandbox.cwd, sizeof(r->sandbox.cwd));
	s->tty = isatty(STDIN_FILENO);
	s->host4 = r->network.host4;
	s->host6 = r->network.host6;
	s->proxy_port = r->input.gwc.port_proxy;
	s->uid = r->input.uid;
	s->gid = r->input.gid;
	s->groups = r->input.groups;
	s->ngroups = r->input.ngroups;
	s->user = r->input.user;
	s->netns_fd = r->network.net.netns_fd;
	/* daemon mode on cgroup v2: the daemon moves the child in (run_sandbox_spawn()) */
	s->limits = daemon_joins(r) ? &no_limits : &r->limits.lim;
	s->allow = run_sandbox_allow(r->input.pol);
	s->seccomp = !r->input.no_seccomp;
	/* daemon mode: the same user and network namespaces, the daemon plumbed the network */
	s->rootless = r->mode->own_userns;
	s->userns_fd = s->rootless ? r->network.rl.userns_fd : -1;
	s->nproc = s->rootless ? run_nproc_backstop(r->input.pol->limits.pids,
						    r->limits.scope ||
							r->limits.lim.kind == LIMITS_CGROUP2 ||
							r->limits.lim.kind == LIMITS_CGROUP1)
			       : 0;
	s->empty_file = s->rootless ? r->empty_file : NULL;
	/* rootless with a systemd user scope: it holds the limits and runs the sandbox */
	s->wrap = s->rootless && r->limits.scope ? r->limits.scope_argv : NULL;
	s->wrap_bin = RUN_SYSTEMD_RUN;
	s->wrap_env = r->limits.scope_env;
	s->files_start = r->sandbox.files ? files_start : NULL;
	s->files_arg = r;
	s->learn = r->trace != NULL;
	s->premask = r->trace ? r->trace->sock_masks : NULL;
	s->npremask = r->trace ? r->trace->nsock_masks : 0;
	s->run_id = r->id;
	s->state_dir = r->state_dir;
	return s;
}

/* A backend's failure, said like every stage's. Return: 125. */
static int failed(struct run *r, const struct sandbox_err *e)
{
	return run_fail(r, e->step ? e->step : "exec", e->fix, "%s", e->msg);
}

void run_sandbox_init(struct run *r)
{
	/* the native backend until run_sandbox_select() chooses */
	r->sandbox.backend = run_backend_native();
	r->sandbox.sb = SANDBOX_INIT(run_backend_ops(r->sandbox.backend));
}

/* `warden trace` with backend @b (not linux). Return: 125 (said). */
static int trace_refuses(struct run *r, unsigned b)
{
	return run_fail(r, "prerequisites",
			"drop sandbox.backend (and sandbox.fallback) from the policy for the trace",
			"warden trace needs the linux backend (bubblewrap), not %s: the "
			"file-access recorder it learns from exists only there",
			policy_backend_name(b));
}

int run_sandbox_select(struct run *r)
{
	struct run_backend_probe probes[POLICY_BACKEND_N] = {0};
	struct sandbox sbs[POLICY_BACKEND_N];
	struct run_backend_ask a = {
	    .flag = r->o.backend ? policy_backend_lookup(r->o.backend) : POLICY_BACKEND_AUTO,
	    .key = r->input.pol->sandbox_backend,
	    .fallback = r->input.pol->sandbox_fallback,
	    .native = run_backend_native(),
	};
	unsigned need, chosen = 0;
	const char *fix = NULL;
	char why[3072];
	bool refused;
	int ret;

	if (r->o.backend && !a.flag)
		return run_fail(r, "prerequisites", NULL,
				"--backend %s: not a sandbox backend; expected one of: %s",
				r->o.backend, policy_backend_list());
	/* a trace: a backend the policy forces is refused before any probe */
	if (r->trace && a.key && a.key != POLICY_BACKEND_LINUX)
		return trace_refuses(r, a.key);
	need = run_backend_needed(&a);
	/* each probed into a sandbox of its own: the chosen one goes on from its probe (no
	 * second probe: docker's asks the engine) */
	for (unsigned b = 0; b < POLICY_BACKEND_N; b++) {
		sbs[b] = SANDBOX_INIT(NULL);
		if (b && (need & (1u << b)))
			run_backend_probe_keep(b, &probes[b], &sbs[b]);
	}
	ret = run_backend_choose(&a, probes, &chosen, why, sizeof(why), &fix);
	/* (and a fallback) */
	refused = !ret && r->trace && chosen != POLICY_BACKEND_LINUX;
	for (unsigned b = 0; b < POLICY_BACKEND_N; b++)
		if (sbs[b].be && (ret || refused || b != chosen))
			sbs[b].be->release(&sbs[b]);
	if (refused)
		return trace_refuses(r, chosen);
	if (ret)
		return run_fail(r, "prerequisites", fix, "%s", why);
	r->sandbox.backend = chosen;
	r->sandbox.sb = sbs[chosen];
	return 0;
}

void run_sandbox_describe(struct run *r, char *out, size_t size)
{
	char be[160];

	/* the backend's name, then its own words */
	r->sandbox.sb.be->describe(spec_of(r), be, sizeof(be));
	snprintf(out, size, "backend=%s,%s", policy_backend_name(r->sandbox.backend), be);
}

int run_sandbox_prepare(struct run *r)
{
	struct sandbox_err e = {0};

	enum policy_audit_files files = policy_audit_files(r->input.pol);

	if (r->limits.scope && run_rootless_scope_prepare(r))
		return run_fail(r, "limits", NULL,
				"the systemd scope's command line: out of memory");
	if (files != POLICY_FILES_OFF && !r->sandbox.files &&
	    recorder_new(files, r->input.pol->mask, r->input.pol->nmask, &r->sandbox.files))
		return run_fail(r, "sandbox", NULL, "the file-access recorder: out of memory");
	/* warden trace --allow-socket: the unix sockets the program may reach */
	if (r->trace && r->sandbox.files && r->trace->nsockets &&
	    recorder_allow_sockets(r->sandbox.files, r->trace->sockets, r->trace->nsockets))
		return run_fail(r, "sandbox", NULL, "the file-access recorder: out of memory");

	return r->sandbox.sb.be->prepare(&r->sandbox.sb, spec_of(r), &e) ? failed(r, &e) : 0;
}

bool run_sandbox_brings_network(const struct run *r)
{
	return r->sandbox.sb.be->network != NULL;
}

int run_sandbox_network(struct run *r, struct sandbox_net *n)
{
	struct sandbox_err e = {0};

	return r->sandbox.sb.be->network(&r->sandbox.sb, spec_of(r), n, &e) ? failed(r, &e) : 0;
}

int run_sandbox_spawn(struct run *r)
{
	struct sandbox_err e = {0};

	if (daemon_joins(r) && run_daemon_join(r, r->sandbox.sb.pid))
		return RUN_EXIT_WARDEN;
	/* the run's duration counts from here */
	r->audit.t0 = wd_mono_ns();
	return r->sandbox.sb.be->spawn(&r->sandbox.sb, &e) ? failed(r, &e) : 0;
}

void run_sandbox_cancel(struct run *r)
{
	r->sandbox.sb.be->cancel(&r->sandbox.sb);
}

void run_sandbox_release(struct run *r)
{
	/* the grants made are the program's now (or were removed) */
	free(r->sandbox.made);
	r->sandbox.made = NULL;
	r->sandbox.nmade = 0;
	r->sandbox.sb.be->release(&r->sandbox.sb);
	/* the recorder ends with the sandbox (its entries stay for run_audit_files()) */
	recorder_stop(r->sandbox.files);
}

pid_t run_sandbox_pid(const struct run *r)
{
	return r->sandbox.sb.pid;
}

int run_sandbox_event_fd(const struct run *r)
{
	return r->sandbox.sb.event_fd;
}

bool run_sandbox_event(struct run *r)
{
	return r->sandbox.sb.be->event(&r->sandbox.sb);
}

int run_sandbox_program(struct run *r, int *ret_pidfd, int *ret_procfd)
{
	return r->sandbox.sb.be->program
		   ? r->sandbox.sb.be->program(&r->sandbox.sb, ret_pidfd, ret_procfd)
		   : -ENOSYS;
}

void run_sandbox_signal(struct run *r, enum sandbox_target to, int sig)
{
	r->sandbox.sb.be->signal(&r->sandbox.sb, to, sig);
}

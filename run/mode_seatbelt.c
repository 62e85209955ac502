/* mode_seatbelt.c - `warden run` on macOS: the Seatbelt backend (docs/run.md, "Backends:
 * Seatbelt (macOS)"; docs/platforms.md).
 *
 * Theory of operation. There is no network namespace and no nftables on macOS: the program's
 * one network path is a proxy-mode gateway on loopback, started for this run as warden's
 * child (proxyrun.c), and the Seatbelt profile lets the program reach nothing else. In order:
 *   1. the options that mean nothing here are refused; the policy is loaded and validated as
 *      on Linux (file:line:col diagnostics; nothing starts when it is invalid);
 *   2. the command found (126, 127 before anything starts);
 *   3. the run's private folder and its loopback listener (the proxy port);
 *   4. the profile rendered from the grants, masks, credential stores, the run's tmp folder
 *      and the proxy port, checked by sandbox_sbpl_check() (run_platform_sbpl()); a profile
 *      that breaks an invariant fails the run here, before anything starts;
 *   5. run.start in the user's audit log, chained, with the policy's hash (proxyaudit.c);
 *   6. the gateway started and the run registered with the policy's text;
 *   7. the program: its own process group, the policy's rlimits, the environment of
 *      run_proxy_env(), `sandbox-exec -f PROFILE -- COMMAND ARGS...`, stdio inherited;
 *   8. the wait (the watchdog, signals passed on), the counters, run.exit, everything undone.
 * A failure at 3-7 is a 125 with the step named, said in run.exit. SIGINT/SIGTERM to warden
 * before step 7 ends the run there; after it they go to the program's group.
 *
 * On Linux this file is built too, for the lab: the test-only `warden-seatbelt` (launcher/
 * built with WARDEN_PROXY_RUN) runs it with a `sandbox-exec` stand-in named by
 * $WARDEN_SANDBOX_EXEC, which checks the profile and runs the command unconfined
 * (tests/integration/run_seatbelt.sh). macOS's own is always /usr/bin/sandbox-exec. */
#include "run/run.h"
#include "audit/audit.h"
#include "policy/policy.h"
#include "run/proxyaudit.h"
#include "run/proxyrun.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __APPLE__
#include <mach-o/dyld.h>

/* macOS's unistd.h does not declare it */
extern char **environ;
#endif

/* the one backend of this path, and the program that applies it */
#define SBX_BACKEND "seatbelt"
#define SBX_EXEC "/usr/bin/sandbox-exec"

/**
 * struct sbx_run - one macOS run
 * @o:		the options
 * @pol:	the validated policy
 * @text:	its YAML as read (registered with the gateway)
 * @len:	its length
 * @policy_abs:	its real path, or "(none)"
 * @home:	the caller's home folder (the credential stores' `~`), or NULL
 * @argv:	the command, argv[0] the path found
 * @exe:	that path
 * @px:		the proxy run: folder, listener, gateway
 * @profile:	the profile's file, in the run's folder
 * @log:	the audit log, once run.start is written
 * @t0:		when the run began (wd_mono_ns())
 * @fail:	run.exit's reason when warden failed
 * @exited:	run.exit is written
 */
struct sbx_run {
	const struct run_opts *o;
	struct wd_policy *pol;
	char *text;
	size_t len;
	char policy_abs[PATH_MAX];
	const char *home;
	char **argv;
	char exe[PATH_MAX];
	struct run_proxy px;
	char profile[PATH_MAX];
	struct run_proxy_audit au;
	uint64_t t0;
	char fail[1024];
	bool exited;
};

/* a step that failed: said on stderr and kept for run.exit; Return: RUN_EXIT_WARDEN */
static int fail(struct sbx_run *r, const char *step, const char *fix, const char *fmt, ...)
    WD_PRINTF(4, 5);
static int fail(struct sbx_run *r, const char *step, const char *fix, const char *fmt, ...)
{
	char cause[900];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cause, sizeof(cause), fmt, ap);
	va_end(ap);
	wd_say(stderr, "warden run: %s: %s", step, cause);
	if (fix)
		wd_say(stderr, "  fix: %s", fix);
	snprintf(r->fail, sizeof(r->fail), "%s: %s", step, cause);
	return RUN_EXIT_WARDEN;
}

static void note(const struct sbx_run *r, const char *fmt, ...) WD_PRINTF(2, 3);
static void note(const struct sbx_run *r, const char *fmt, ...)
{
	struct wd_buf b = WD_BUF_INIT;
	va_list ap;

	if (r->o->quiet)
		return;
	va_start(ap, fmt);
	wd_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	wd_say(stderr, "warden run: %s", wd_buf_cstr(&b));
	wd_buf_free(&b);
}

/* 1. what this path does not do (yet): refused by name, never ignored */
static int refuse_options(const struct run_opts *o)
{
	const char *what = o->mode	      ? "--mode"
			   : o->gateway	      ? "--gateway"
			   : o->sandbox_user  ? "--sandbox-user"
			   : o->print_seccomp ? "--print-seccomp"
			   : o->print_bwrap   ? "--print-bwrap"
			   : o->print_policy  ? "--print-policy"
			   : o->nflags	      ? "--allow, --ask, --read and --write"
			   : o->shadow	      ? "--shadow"
			   : o->started_by    ? "--started-by"
					      : NULL;

	if (what) {
		wd_say(stderr,
		       "warden run: %s: not available on macOS (the Seatbelt backend takes -p, "
		       "--config, --audit-log, --timeout, --backend seatbelt, -q)",
		       what);
		return RUN_EXIT_USAGE;
	}
	if (o->backend && policy_backend_lookup(o->backend) != POLICY_BACKEND_SEATBELT) {
		wd_say(stderr,
		       "warden run: backend: --backend %s cannot run on macOS: its backend is "
		       "seatbelt; nothing was started",
		       o->backend);
		return RUN_EXIT_WARDEN;
	}
	return 0;
}

static void print_diags(struct policy_diags *d)
{
	for (size_t i = 0; i < d->n; i++) {
		struct wd_buf b = WD_BUF_INIT;

		policy_diag_format(d, i, &b);
		wd_say(stderr, "%s", wd_buf_cstr(&b));
		wd_buf_free(&b);
	}
}

/* the caller's home: $HOME when absolute, else the password database's */
static const char *home_of(void)
{
	const char *h = getenv("HOME");
	struct passwd *pw;

	if (h && h[0] == '/')
		return h;
	pw = getpwuid(getuid());
	return pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
}

/* 1. the policy, validated as on Linux (run/policy.c) */
static int load_policy(struct sbx_run *r, const char *audit_path)
{
	static const char empty[] = "version: 1\n";
	struct policy_ctx ctx = {.home = r->home};
	struct policy_diags d;
	struct run_protect pr;
	int ret;

	run_protect_init(&pr, audit_path, NULL);
	ctx.protect = pr.v;
	ctx.nprotect = pr.n;
	policy_diags_init(&d);
	if (r->o->policy) {
		ret = policy_load(r->o->policy, &ctx, &r->pol, &d);
		if (ret) {
			print_diags(&d);
			policy_diags_free(&d);
			return fail(r, "policy", "correct the policy (warden policy check FILE)",
				    "%s is not valid (%s)", r->o->policy, strerror(-ret));
		}
		ret = wd_read_file(r->o->policy, POLICY_MAX_BYTES, &r->text, &r->len);
		if (ret) {
			policy_diags_free(&d);
			return fail(r, "policy", NULL, "%s: %s", r->o->policy, strerror(-ret));
		}
		if (!realpath(r->o->policy, r->policy_abs))
			snprintf(r->policy_abs, sizeof(r->policy_abs), "%s", r->o->policy);
	} else {
		ret = policy_parse(empty, sizeof(empty) - 1, "(empty policy)", &r->pol, &d);
		ret = ret ? ret : policy_validate(r->pol, &ctx, &d);
		r->text = strdup(empty);
		r->len = sizeof(empty) - 1;
		snprintf(r->policy_abs, sizeof(r->policy_abs), "(none)");
		if (ret || !r->text) {
			policy_diags_free(&d);
			return fail(r, "policy", NULL, "the empty policy: %s",
				    strerror(ret ? -ret : ENOMEM));
		}
	}
	if (d.n && !r->o->quiet)
		print_diags(&d);
	policy_diags_free(&d);
	if (r->pol->sandbox_backend != POLICY_BACKEND_AUTO &&
	    r->pol->sandbox_backend != POLICY_BACKEND_SEATBELT && !r->o->backend)
		return fail(r, "backend", "remove sandbox.backend, or pass --backend seatbelt",
			    "the policy asks for sandbox.backend %s, which cannot run on macOS",
			    policy_backend_name(r->pol->sandbox_backend));
	if (run_proxy_limits_refused(&r->pol->limits))
		return fail(r, "limits", "remove that limit, or run it on Linux",
			    "%s; nothing was started", run_proxy_limits_refused(&r->pol->limits));
	ret = policy_command_expand(r->pol, r->home);
	if (ret)
		return fail(r, "policy", NULL, "`command`: %s",
			    ret == -EINVAL ? "starts with `~` and the home folder is unknown"
					   : strerror(-ret));
	return 0;
}

/* 2. the command: 127 not found, 126 not executable, before anything starts */
static int find_command(struct sbx_run *r, int argc, char **argv)
{
	size_t n = argc > 0 ? (size_t)argc : r->pol->ncommand;
	int ret;

	if (!n || (argc <= 0 && !r->pol->command)) {
		fprintf(stderr, "warden run: no command: give one after `--` or set `command` in "
				"the policy\n");
		if (r->o->usage)
			r->o->usage(stderr);
		return RUN_EXIT_USAGE;
	}
	r->argv = calloc(n + 1, sizeof(*r->argv));
	if (!r->argv)
		return fail(r, "policy", NULL, "out of memory");
	for (size_t i = 0; i < n; i++)
		r->argv[i] = argc > 0 ? argv[i] : r->pol->command[i];
	ret = run_proxy_find(r->argv[0], getenv("PATH"), r->exe, sizeof(r->exe));
	if (ret == -EACCES) {
		wd_say(stderr, "warden run: %s: not an executable file", r->argv[0]);
		return RUN_EXIT_NOEXEC;
	}
	if (ret) {
		wd_say(stderr, "warden run: %s: command not found", r->argv[0]);
		return RUN_EXIT_NOTFOUND;
	}
	r->argv[0] = r->exe;
	return 0;
}

/* 4. the profile, checked, into the run's folder (0600, a new file) */
static int write_profile(struct sbx_run *r)
{
	struct wd_buf b = WD_BUF_INIT;
	struct wd_err err;
	int ret, fd;

	wd_err_clear(&err);
	ret = run_platform_sbpl(r->pol, r->home, r->px.port, r->px.tmp, &b, &err);
	if (ret) {
		wd_buf_free(&b);
		return fail(
		    r, "profile", "report it: a profile Warden renders must keep its invariants",
		    "the Seatbelt profile was refused: %s", err.msg[0] ? err.msg : strerror(-ret));
	}
	if (snprintf(r->profile, sizeof(r->profile), "%s/profile.sb", r->px.dir) >=
	    (int)sizeof(r->profile)) {
		wd_buf_free(&b);
		return fail(r, "profile", NULL, "%s: the path is too long", r->px.dir);
	}
	fd = open(r->profile, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	ret = fd < 0 ? -errno : wd_write_all(fd, b.data, b.len);
	if (fd >= 0 && close(fd) < 0 && !ret)
		ret = -errno;
	wd_buf_free(&b);
	if (ret)
		return fail(r, "profile", NULL, "%s: %s", r->profile, strerror(-ret));
	return 0;
}

/* what every event of the run carries: run, policy, pid, uid, user */
static void fill_common(struct sbx_run *r, struct audit_event *ev)
{
	static char user[256];
	struct passwd *pw = getpwuid(getuid());

	ev->run = r->px.id;
	ev->policy = r->policy_abs;
	ev->has |= AUDIT_HAS_PID | AUDIT_HAS_UID;
	ev->pid = getpid();
	ev->uid = getuid();
	if (pw && strlen(pw->pw_name) < sizeof(user)) {
		strcpy(user, pw->pw_name);
		ev->user = user;
	}
}

/* 5. run.start, before anything runs */
static int audit_start(struct sbx_run *r, const char *path, unsigned timeout_s)
{
	struct audit_event ev = {0};
	char iso[512], lim[200];
	struct wd_err err;
	const char *fix;
	int ret;

	wd_err_clear(&err);
	ret = run_proxy_audit_open(&r->au, path, run_audit_key_path(), r->text, r->len, &err, &fix);
	if (ret) {
		run_proxy_audit_close(&r->au);
		return fail(r, "audit", fix, "%s", err.msg[0] ? err.msg : strerror(-ret));
	}
	run_proxy_describe_limits(&r->pol->limits, timeout_s, lim, sizeof(lim));
	snprintf(iso, sizeof(iso),
		 "network: proxy mode only, gateway on 127.0.0.1:%u (HTTP proxy, SOCKS5); "
		 "sandbox: %s (sandbox-exec -f, profile checked); uid %u; %s",
		 r->px.port, SBX_BACKEND, (unsigned)getuid(), lim);
	ev.type = AUDIT_TYPE_RUN;
	ev.action = "run.start";
	ev.resource = r->exe;
	ev.allowed = true;
	ev.reason = "gateway: embedded, proxy mode";
	ev.isolation = iso;
	ev.command = (const char *const *)r->argv;
	for (ev.command_len = 0; r->argv[ev.command_len]; ev.command_len++)
		;
	fill_common(r, &ev);
	ret = run_proxy_audit_start(&r->au, &ev, &err);
	if (ret) {
		run_proxy_audit_close(&r->au);
		return fail(r, "audit", "free space or fix permissions of the audit log",
			    "run.start could not be written to %s: %s", path,
			    err.msg[0] ? err.msg : strerror(-ret));
	}
	return 0;
}

/* 8. run.exit: the status, the duration, the gateway's counters */
static void audit_exit(struct sbx_run *r, int status, int sig, const struct run_proxy_counts *c)
{
	struct audit_event ev = {0};
	struct wd_err err;

	if (!r->au.log || r->exited)
		return;
	r->exited = true;
	ev.type = AUDIT_TYPE_RUN;
	ev.action = "run.exit";
	ev.resource = r->exe;
	ev.allowed = status != RUN_EXIT_WARDEN || !r->fail[0];
	ev.reason = r->fail[0] ? r->fail : NULL;
	ev.has = AUDIT_HAS_EXIT | AUDIT_HAS_DURATION;
	ev.exit = status;
	ev.duration_ms = (int64_t)((wd_mono_ns() - r->t0) / 1000000);
	if (sig) {
		ev.has |= AUDIT_HAS_SIGNAL;
		ev.signal = sig;
	}
	if (c && c->denied >= 0) {
		ev.has |= AUDIT_HAS_DENIALS;
		ev.denials = c->denied;
	}
	if (c && c->up >= 0) {
		ev.has |= AUDIT_HAS_BYTES_UP | AUDIT_HAS_BYTES_DOWN;
		ev.bytes_up = c->up;
		ev.bytes_down = c->down;
	}
	fill_common(r, &ev);
	wd_err_clear(&err);
	if (run_proxy_audit_exit(&r->au, &ev, r->px.id, &err))
		wd_say(stderr, "warden run: audit: run.exit: %s",
		       err.msg[0] ? err.msg : "not written durably");
}

/* the folder warden's own program is in, into @out ("" when unknown) */
static void self_dir(char *out, size_t size)
{
	char self[PATH_MAX], real[PATH_MAX], *slash;
	ssize_t n = -1;

	out[0] = '\0';
#ifdef __APPLE__
	uint32_t len = sizeof(self);

	if (_NSGetExecutablePath(self, &len) == 0)
		n = (ssize_t)strlen(self);
#else
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0)
		self[n] = '\0';
#endif
	if (n <= 0 || !realpath(self, real))
		return;
	slash = strrchr(real, '/');
	if (slash) {
		*slash = '\0';
		snprintf(out, size, "%s", real);
	}
}

/* warden-gateway: $WARDEN_GATEWAY_BIN, else beside warden, else in PATH */
static int find_gateway(char *out, size_t size)
{
	const char *env = getenv("WARDEN_GATEWAY_BIN");
	char dir[PATH_MAX], cand[PATH_MAX + 32];

	if (env && *env)
		return run_proxy_find(env, NULL, out, size);
	self_dir(dir, sizeof(dir));
	if (dir[0]) {
		snprintf(cand, sizeof(cand), "%s/warden-gateway", dir);
		if (!run_proxy_find(cand, NULL, out, size))
			return 0;
	}
	return run_proxy_find("warden-gateway", getenv("PATH"), out, size);
}

/* the program that applies the profile: macOS's own; the lab's stand-in in the Linux test
 * build only, where nothing can be sandboxed by it (said in the test and the docs) */
static const char *sandbox_exec(void)
{
#ifdef __APPLE__
	return SBX_EXEC;
#else
	const char *s = getenv("WARDEN_SANDBOX_EXEC");

	return s && s[0] == '/' ? s : NULL;
#endif
}

/* 7. the program's child: its group, its limits, sandbox-exec; never returns */
static void program_child(struct sbx_run *r, const char *sbx, char **envp)
{
	size_t n = 0;
	char **av, why[256];

	setpgid(0, 0);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	signal(SIGTTOU, SIG_DFL);
	if (run_proxy_rlimits(&r->pol->limits, why, sizeof(why))) {
		wd_say(stderr, "warden run: limits: %s", why);
		_exit(RUN_EXIT_WARDEN);
	}
	/* nothing of warden's but stdio reaches the program (the audit log is CLOEXEC too) */
	wd_close_all_except(NULL, 0);
	while (r->argv[n])
		n++;
	av = calloc(n + 5, sizeof(*av));
	if (!av)
		_exit(RUN_EXIT_WARDEN);
	av[0] = (char *)sbx;
	av[1] = "-f";
	av[2] = r->profile;
	av[3] = "--";
	for (size_t i = 0; i < n; i++)
		av[4 + i] = r->argv[i];
	execve(sbx, av, envp);
	wd_say(stderr, "warden run: sandbox-exec %s: %s", sbx, strerror(errno));
	_exit(errno == ENOENT ? RUN_EXIT_NOTFOUND : RUN_EXIT_NOEXEC);
}

/* 7-8. start the program, hand it the terminal, wait; Return: its status */
static int run_program(struct sbx_run *r, const char *sbx, unsigned timeout_s, int *ret_sig)
{
	char **envp = NULL;
	bool tty = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
	struct run_proxy_waited w;
	pid_t pid;
	int status;

	if (run_proxy_env(r->pol, environ, &r->px, &envp))
		return fail(r, "sandbox", NULL, "the environment: out of memory");
	if (run_proxy_stop_asked()) {
		run_proxy_strv_free(envp);
		return fail(r, "sandbox", NULL, "stopped by signal %d before the program started",
			    run_proxy_stop_asked());
	}
	pid = fork();
	if (pid < 0) {
		run_proxy_strv_free(envp);
		return fail(r, "sandbox", NULL, "fork: %s", strerror(errno));
	}
	if (pid == 0)
		program_child(r, sbx, envp);
	run_proxy_strv_free(envp);
	setpgid(pid, pid);
	if (tty) {
		/* the program's group is the terminal's foreground while it runs */
		signal(SIGTTOU, SIG_IGN);
		tcsetpgrp(STDIN_FILENO, pid);
	}
	status = run_proxy_wait(pid, timeout_s, (uint64_t)r->pol->limits.memory_mb << 10, &w);
	*ret_sig = w.signal;
	if (tty) {
		tcsetpgrp(STDIN_FILENO, getpgrp());
		signal(SIGTTOU, SIG_DFL);
	}
	if (w.mem_hit) {
		char why[160];

		snprintf(
		    why, sizeof(why),
		    "memory limit of %llu MiB reached (the process group's, sampled): %llu MiB, "
		    "SIGKILL",
		    (unsigned long long)r->pol->limits.memory_mb,
		    (unsigned long long)(w.mem_peak_kb >> 10));
		wd_say(stderr, "warden run: %s", why);
		if (r->au.log) {
			struct audit_event ev = {0};
			struct wd_err err;

			ev.type = AUDIT_TYPE_LIMIT;
			ev.action = "limit.memory";
			ev.resource = r->exe;
			ev.reason = why;
			ev.has = AUDIT_HAS_LIMIT | AUDIT_HAS_USAGE;
			ev.limit = (int64_t)(r->pol->limits.memory_mb << 20);
			ev.usage = (int64_t)w.mem_peak_kb * 1024;
			fill_common(r, &ev);
			wd_err_clear(&err);
			audit_log_write(r->au.log, &ev, 0, &err);
		}
	}
	if (w.timed_out) {
		wd_say(stderr, "warden run: timeout of %u s: SIGTERM, then SIGKILL after %d ms",
		       timeout_s, RUN_KILL_GRACE_MS);
		if (r->au.log) {
			struct audit_event ev = {0};
			char why[128];

			snprintf(why, sizeof(why),
				 "timeout of %u s: SIGTERM, then SIGKILL after %d ms", timeout_s,
				 RUN_KILL_GRACE_MS);
			ev.type = AUDIT_TYPE_LIMIT;
			ev.action = "limit.time";
			ev.resource = r->exe;
			ev.reason = why;
			ev.has = AUDIT_HAS_LIMIT | AUDIT_HAS_USAGE;
			ev.limit = (int64_t)timeout_s * 1000;
			ev.usage = (int64_t)((wd_mono_ns() - r->t0) / 1000000);
			struct wd_err err;

			fill_common(r, &ev);
			wd_err_clear(&err);
			audit_log_write(r->au.log, &ev, 0, &err);
		}
	}
	return status;
}

/* 3-8 once the policy and the command are known; Return: the exit status */
static int run_stages(struct sbx_run *r, const char *audit_path)
{
	unsigned timeout_s = r->o->timeout_s ? r->o->timeout_s : r->pol->limits.timeout_s;
	struct run_proxy_counts c = {-1, -1, -1};
	const char *sbx = sandbox_exec(), *name;
	char gw[PATH_MAX], id[13];
	struct wd_err err;
	int ret, status, sig = 0;

	if (!sbx)
		return fail(r, "sandbox", "run it on macOS (the lab's test build names a stand-in)",
			    "no sandbox-exec on this system: the Seatbelt backend is macOS's; "
			    "nothing was started");
	if (find_gateway(gw, sizeof(gw)))
		return fail(
		    r, "gateway",
		    "install warden-gateway next to warden, or point WARDEN_GATEWAY_BIN at it",
		    "no warden-gateway next to warden nor in PATH");
	if (r->o->run_id)
		snprintf(id, sizeof(id), "%s", r->o->run_id);
	else if (run_proxy_id(id))
		return fail(r, "run", NULL, "no random run id: %s", strerror(errno));
	wd_err_clear(&err);
	ret = run_proxy_begin(&r->px, id, &err);
	if (ret)
		return fail(r, "network", NULL, "%s", err.msg);
	ret = write_profile(r);
	if (ret)
		return ret;
	ret = audit_start(r, audit_path, timeout_s);
	if (ret)
		return ret;
	note(r, "run %s: gateway on 127.0.0.1:%u (proxy mode), sandbox %s", id, r->px.port,
	     SBX_BACKEND);
	wd_err_clear(&err);
	ret = run_proxy_gateway(&r->px, gw, r->o->config, audit_path, &err);
	if (ret)
		return fail(r, "gateway", r->o->config ? "correct the gateway config" : NULL, "%s",
			    err.msg);
	name = strrchr(r->policy_abs, '/');
	wd_err_clear(&err);
	ret = run_proxy_register(&r->px, name ? name + 1 : r->policy_abs, r->text, r->len, &err);
	if (ret)
		return fail(r, "gateway", NULL, "%s", err.msg);
	status = run_program(r, sbx, timeout_s, &sig);
	run_proxy_counts(&r->px, &c);
	audit_exit(r, status, sig, &c);
	return status;
}

int run_seatbelt_main(const struct run_opts *o, int argc, char **argv)
{
	struct sbx_run r = {.o = o, .t0 = wd_mono_ns()};
	const char *audit_path;
	int status;

	r.px.listen_fd = -1;
	status = refuse_options(o);
	if (status)
		return status;
	if (run_proxy_signals())
		return fail(&r, "run", NULL, "signal handlers: %s", strerror(errno));
	r.home = home_of();
	audit_path = run_audit_path(o->audit);
	if (!audit_path)
		return fail(&r, "audit", "set WARDEN_AUDIT_LOG or pass --audit-log PATH",
			    "no audit log path (no home folder)");
	status = load_policy(&r, audit_path);
	if (!status)
		status = find_command(&r, argc, argv);
	if (!status)
		status = run_stages(&r, audit_path);
	/* a failure after run.start still gets its run.exit */
	audit_exit(&r, status, 0, NULL);
	run_proxy_end(&r.px);
	run_proxy_audit_close(&r.au);
	policy_free(r.pol);
	free(r.text);
	free(r.argv);
	return status;
}

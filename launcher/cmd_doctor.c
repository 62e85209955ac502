/* cmd_doctor.c - `warden doctor`: checks every prerequisite of `warden run` for real (a
 * throwaway namespace, a real bubblewrap start) and prints a fix for each failure. */
#include "launcher/cli.h"
#include "run/internal.h"
#include "audit/audit.h"
#include "nft/nft.h"
#include "sandbox/sandbox.h"

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <limits.h>
#include <pwd.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

enum verdict { DOC_OK, DOC_WARN, DOC_FAIL };

struct finding {
	enum verdict v;
	char what[512];
	char fix[512];
};

typedef void (*check_fn)(struct finding *f);

static void set(struct finding *f, enum verdict v, const char *fix, const char *fmt, ...)
    WD_PRINTF(4, 5);
static void set(struct finding *f, enum verdict v, const char *fix, const char *fmt, ...)
{
	va_list ap;

	f->v = v;
	va_start(ap, fmt);
	vsnprintf(f->what, sizeof(f->what), fmt, ap);
	va_end(ap);
	snprintf(f->fix, sizeof(f->fix), "%s", fix ? fix : "");
}

static long read_long(const char *path, long dflt)
{
	char *d = NULL;
	size_t n;
	long v = dflt;

	if (!wd_read_file(path, 64, &d, &n))
		v = strtol(d, NULL, 10);
	free(d);
	return v;
}

static void check_root(struct finding *f)
{
	if (geteuid() == 0)
		set(f, DOC_OK, NULL, "running as root (the run's network needs CAP_NET_ADMIN)");
	else
		set(f, DOC_FAIL, "run `sudo warden doctor` and `sudo warden run ...`",
		    "not root: `warden run` needs CAP_NET_ADMIN and CAP_SYS_ADMIN");
}

/* Run @argv in a child (stdout/stderr to /dev/null); optionally as @uid. Return: exit status. */
static int run_quiet(char *const *argv, uid_t uid, gid_t gid)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		if (uid &&
		    (setgroups(0, NULL) || setresgid(gid, gid, gid) || setresuid(uid, uid, uid)))
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* `BIN check-worker`: the worker image warden-gateway @bin would exec, found and checked by the
 * gateway itself; Return: 0 with its path in @out, or non-zero with the gateway's reason there */
static int worker_of(const char *bin, char *out, size_t size)
{
	char *const argv[] = {(char *)bin, "check-worker", NULL};
	int p[2], st = -1;
	ssize_t n, got = 0;
	pid_t pid;

	snprintf(out, size, "could not run %s check-worker", bin);
	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		dup2(null, 0);
		dup2(p[1], 1);
		dup2(p[1], 2);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	while (pid > 0 && (size_t)got < size - 1 &&
	       (n = read(p[0], out + got, size - 1 - (size_t)got)) > 0)
		got += n;
	close(p[0]);
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	if (got > 0) {
		out[got] = '\0';
		out[strcspn(out, "\n")] = '\0';
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* the daemon on @sock runs its worker from an image that is still installed? (its `stats` names
 * it, " (deleted)" appended by the kernel once the file was removed or replaced; a restart
 * execs that path again). Return: true, or false with @why (and *@gone: nothing is at the path
 * any more, a restart would fail) */
static bool daemon_worker_ok(const char *sock, char *why, size_t size, bool *gone)
{
	static const char del[] = " (deleted)";
	char *text = NULL, path[PATH_MAX];
	json_t *ans;
	const char *w;
	struct stat st;
	size_t n;
	bool ok = true;

	*gone = false;
	if (run_gw_request(sock, "{\"op\":\"stats\"}", 1000, &text))
		return true; /* said by the other checks */
	ans = json_loads(text, 0, NULL);
	free(text);
	w = json_string_value(json_object_get(ans, "worker"));
	n = w ? strlen(w) : 0;
	if (!w || n >= sizeof(path)) {
		snprintf(
		    why, size,
		    "the daemon on %s does not name its worker image (an older warden-gateway)",
		    sock);
		ok = false;
	} else {
		bool deleted = n > sizeof(del) - 1 && !strcmp(w + n - (sizeof(del) - 1), del);

		snprintf(path, sizeof(path), "%.*s", (int)(deleted ? n - (sizeof(del) - 1) : n), w);
		*gone = stat(path, &st) || !S_ISREG(st.st_mode) || !(st.st_mode & S_IXUSR);
		if (*gone)
			snprintf(why, size,
				 "the daemon on %s runs its worker from %s, which is no longer "
				 "installed: a restart of the daemon would fail",
				 sock, w);
		else if (deleted)
			snprintf(
			    why, size,
			    "the daemon on %s runs an older worker than the one installed at %s "
			    "(replaced since it started)",
			    sock, path);
		ok = !*gone && !deleted;
	}
	json_decref(ans);
	return ok;
}

static const char *bwrap_path(void)
{
	const char *b = getenv("WARDEN_BWRAP");

	return b && *b ? b : "/usr/bin/bwrap";
}

/* What a probe asks of bubblewrap beyond the smallest sandbox. */
enum {
	PROBE_ALL_NS = 1,   /* ipc, uts and net namespaces too */
	PROBE_PROC_DEV = 2, /* /proc and /dev mounted, /bin linked */
	PROBE_SECCOMP = 4,  /* --disable-userns and the filter on the fd given */
};

/**
 * struct probe - the bwrap command line of one doctor probe
 * @argv:	bwrap, user and pid namespaces, no capabilities, /usr read-only with the merged-/usr
 *		links, what the flags add, then /usr/bin/true
 * @fd:		the seccomp filter's descriptor as text (PROBE_SECCOMP)
 */
struct probe {
	char *argv[40];
	char fd[16];
};

static char **probe_argv(struct probe *p, unsigned flags, int seccomp_fd)
{
	size_t n = 0;

#define ARG(x) (p->argv[n++] = (char *)(x))
	ARG(bwrap_path());
	ARG("--unshare-user");
	ARG("--unshare-pid");
	if (flags & PROBE_ALL_NS) {
		ARG("--unshare-ipc");
		ARG("--unshare-uts");
		ARG("--unshare-net");
	}
	ARG("--die-with-parent");
	ARG("--cap-drop");
	ARG("ALL");
	if (flags & PROBE_SECCOMP) {
		snprintf(p->fd, sizeof(p->fd), "%d", seccomp_fd);
		ARG("--disable-userns");
		ARG("--assert-userns-disabled");
		ARG("--seccomp");
		ARG(p->fd);
	}
	ARG("--ro-bind");
	ARG("/usr");
	ARG("/usr");
	if (flags & PROBE_PROC_DEV) {
		ARG("--symlink");
		ARG("usr/bin");
		ARG("/bin");
	}
	ARG("--symlink");
	ARG("usr/lib");
	ARG("/lib");
	ARG("--symlink");
	ARG("usr/lib64");
	ARG("/lib64");
	if (flags & PROBE_PROC_DEV) {
		ARG("--proc");
		ARG("/proc");
		ARG("--dev");
		ARG("/dev");
	}
	ARG("/usr/bin/true");
	ARG(NULL);
#undef ARG
	return p->argv;
}

/* the fix of a bwrap probe that failed: the userns check (printed before this one) first,
 * else the probe by hand, @argv as one line (@who: as whom doctor ran it, or "") */
static void probe_fix(char *out, size_t size, char **argv, const char *who)
{
	struct wd_buf b = WD_BUF_INIT;

	for (size_t i = 0; argv[i]; i++)
		wd_buf_printf(&b, "%s%s", i ? " " : "", argv[i]);
	snprintf(out, size,
		 "if the userns check above failed, fix that first; else run the probe by "
		 "hand%s to see bubblewrap's message: %s",
		 who, wd_buf_cstr(&b));
	wd_buf_free(&b);
}

static void check_bwrap(struct finding *f)
{
	struct probe pr;
	char **argv = probe_argv(&pr, PROBE_ALL_NS | PROBE_PROC_DEV, -1);
	const char *su = getenv("SUDO_UID"), *sg = getenv("SUDO_GID");
	char who[128] = "", name[64];
	unsigned long long id_u = 0, id_g = 0;
	uid_t uid = 0;
	gid_t gid = 0;
	int st;

	if (access(argv[0], X_OK)) {
		set(f, DOC_FAIL, "apt-get install bubblewrap (or set WARDEN_BWRAP)",
		    "bubblewrap not found at %s", argv[0]);
		return;
	}
	if (geteuid() == 0 && su && sg && !wd_parse_uint(su, UINT32_MAX - 1, &id_u) && id_u > 0 &&
	    !wd_parse_uint(sg, UINT32_MAX - 1, &id_g)) {
		uid = (uid_t)id_u;
		gid = (gid_t)id_g;
		snprintf(who, sizeof(who), " as the invoking user (uid %u)", (unsigned)uid);
	} else if (geteuid() == 0) {
		/* root's runs run the program (and bwrap) as the sandbox user */
		if (run_sandbox_user(NULL, &uid, &gid, name, sizeof(name))) {
			set(f, DOC_FAIL, "set WARDEN_SANDBOX_USER to an existing unprivileged user",
			    "the sandbox user `%s` does not exist or is root", name);
			return;
		}
		snprintf(who, sizeof(who), " as the sandbox user %s (uid %u)", name, (unsigned)uid);
	}
	st = run_quiet(argv, uid, gid);
	if (st == 0) {
		set(f, DOC_OK, NULL,
		    "bubblewrap %s starts a sandbox (user, pid, ipc, uts, net "
		    "namespaces)%s",
		    argv[0], who);
	} else {
		char fix[sizeof(f->fix)];

		probe_fix(fix, sizeof(fix), argv, who);
		set(f, DOC_FAIL, fix, "bubblewrap could not start a sandbox (exit %d)", st);
	}
}

/* In a child: load @prog, then a refused call must fail with EPERM and an allowed one work. */
static int seccomp_selftest(const struct sock_filter *prog, size_t len)
{
	struct sock_fprog fp = {.len = (unsigned short)len, .filter = (struct sock_filter *)prog};
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fp))
			_exit(1);
		/* keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0) */
		if (syscall(SYS_keyctl, 0L, -3L, 0L) != -1 || errno != EPERM)
			_exit(2);
		_exit(syscall(SYS_getppid) > 0 ? 0 : 3);
	}
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Whether this kernel has the i386 entry (int $0x80), a fact for the seccomp line: asked in a
 * child without a filter, where a kernel without the entry (ia32_emulation=0, some FRED
 * machines) kills the child with SIGSEGV. The filter refuses that ABI either way. */
static const char *i386_entry(void)
{
#if defined(__x86_64__)
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return "";
	if (pid == 0) {
		long ret;

		signal(SIGSEGV, SIG_DFL);
		__asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory"); /* getpid */
		_exit(ret > 0 ? 0 : 1);
	}
	if (waitpid(pid, &st, 0) != pid)
		return "";
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV)
		return "; this kernel has no i386 entry (int $0x80 faults)";
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return "; the kernel's i386 entry (int $0x80) is refused by it";
#endif
	return "";
}

/* The filter builds, the kernel loads it and it refuses; bwrap takes it with --disable-userns. */
static void check_seccomp(struct finding *f)
{
	struct probe pr;
	char **argv = probe_argv(&pr, 0, -1);
	struct sock_filter *prog = NULL;
	struct wd_err err;
	size_t len = 0;
	int st, fd = -1;

	wd_err_clear(&err);
	if (sandbox_seccomp_bpf(0, &prog, &len, &err)) {
		set(f, DOC_FAIL, "apt-get install libseccomp2 (2.5 or later)",
		    "the seccomp filter cannot be built: %s", err.msg);
		return;
	}
	st = seccomp_selftest(prog, len);
	free(prog);
	if (st) {
		set(f, DOC_FAIL, "use a kernel with CONFIG_SECCOMP_FILTER",
		    "the kernel does not enforce the seccomp filter (self-test exit %d)", st);
		return;
	}
	/* without root (or bwrap: its own check says so) the filter alone is checked */
	if (geteuid() != 0 || access(argv[0], X_OK)) {
		set(f, DOC_OK, NULL,
		    "the seccomp filter builds (%zu BPF instructions) and refuses what it should%s",
		    len, i386_entry());
		return;
	}
	if (sandbox_seccomp_fd(0, &fd, &len, &err)) {
		set(f, DOC_FAIL, NULL, "the seccomp filter cannot be exported: %s", err.msg);
		return;
	}
	argv = probe_argv(&pr, PROBE_SECCOMP, fd);
	/* run_quiet() execs bwrap in a child, which must see the fd */
	fcntl(fd, F_SETFD, 0);
	st = run_quiet(argv, 0, 0);
	close(fd);
	if (st == 0)
		set(f, DOC_OK, NULL,
		    "the seccomp filter builds (%zu BPF instructions), refuses what it should, and "
		    "bubblewrap applies it with --disable-userns%s",
		    len, i386_entry());
	else
		set(f, DOC_FAIL, "bubblewrap 0.8 or later (--seccomp, --disable-userns)",
		    "bubblewrap refused the seccomp filter or --disable-userns (exit %d)", st);
}

/* As a user, AppArmor's restriction stops rootless runs (warden's own namespaces and bwrap's):
 * the fix names this binary. */
static void apparmor_rootless(struct finding *f)
{
	char self[128], fix[sizeof(f->fix)];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	self[n > 0 ? n : 0] = '\0';
	/* no backslash: wd_say() would double it, and the command would no longer paste */
	snprintf(fix, sizeof(fix),
		 "once: { echo 'abi <abi/4.0>,'; echo 'include <tunables/global>'; echo 'profile "
		 "warden %.127s flags=(unconfined) {'; echo '  userns,'; echo '}'; } | sudo tee "
		 "/etc/apparmor.d/warden; sudo apparmor_parser -r /etc/apparmor.d/warden (bwrap: "
		 "Ubuntu's bwrap-userns-restrict profile)",
		 n > 0 ? self : "/usr/bin/warden");
	set(f, DOC_FAIL, fix,
	    "AppArmor restricts unprivileged user namespaces "
	    "(kernel.apparmor_restrict_unprivileged_userns = 1): a rootless run needs a profile "
	    "that allows them for warden and bwrap");
}

/* The fix for the sysctl @key that must be @value: set now (through sudo unless doctor runs as
 * root) and kept after a reboot by a file of /etc/sysctl.d named for it, whose one line is
 * given exactly; @pre comes first (another way, or ""). No backslash in it: wd_say() would
 * double it, and the command would no longer paste. */
static void sysctl_fix(char *out, size_t size, const char *pre, const char *key, const char *value)
{
	const char *sudo = geteuid() ? "sudo " : "";

	snprintf(out, size,
		 "%s%ssysctl -w %s=%s; to keep it after a reboot, /etc/sysctl.d/60-warden-%s.conf "
		 "holding the one line `%s = %s`: echo '%s = %s' | %stee "
		 "/etc/sysctl.d/60-warden-%s.conf",
		 pre, sudo, key, value, key, key, value, key, value, sudo, key);
}

static void check_userns(struct finding *f)
{
	long max = read_long("/proc/sys/user/max_user_namespaces", -1);
	long deb = read_long("/proc/sys/kernel/unprivileged_userns_clone", 1);
	long aa = read_long("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", 0);
	char fix[sizeof(f->fix)];

	if (max == 0) {
		sysctl_fix(fix, sizeof(fix), "", "user.max_user_namespaces", "15000");
		set(f, DOC_FAIL, fix,
		    "user namespaces are disabled (user.max_user_namespaces = 0)");
	} else if (deb == 0) {
		sysctl_fix(fix, sizeof(fix), "", "kernel.unprivileged_userns_clone", "1");
		set(f, DOC_FAIL, fix,
		    "unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone "
		    "= 0)");
	} else if (aa == 1 && geteuid() != 0) {
		apparmor_rootless(f);
	} else if (aa == 1) {
		sysctl_fix(fix, sizeof(fix),
			   "allow bwrap in AppArmor (an `userns,` profile for /usr/bin/bwrap), or ",
			   "kernel.apparmor_restrict_unprivileged_userns", "0");
		set(f, DOC_WARN, fix,
		    "AppArmor restricts unprivileged user namespaces (Ubuntu 24.04+): bwrap run by "
		    "a user needs a profile");
	} else {
		set(f, DOC_OK, NULL, "user namespaces are available (max %ld)", max);
	}
}

/* In a throwaway network namespace: unshare, install the ruleset, done (dies with it). */
static void check_netns_nft(struct finding *f)
{
	pid_t pid;
	int st;

	if (access("/proc/sys/net/ipv6", F_OK)) {
		set(f, DOC_FAIL, "boot with IPv6 enabled (no ipv6.disable=1)",
		    "IPv6 is disabled: the run's network hardening needs it");
		return;
	}
	pid = fork();
	if (pid < 0) {
		set(f, DOC_FAIL, NULL, "fork: %s", strerror(errno));
		return;
	}
	if (pid == 0) {
		struct fw_config c;

		if (unshare(CLONE_NEWNET) < 0)
			_exit(1);
		fw_config_defaults(&c);
		_exit(fw_install(&c, NULL) ? 2 : 0);
	}
	waitpid(pid, &st, 0);
	st = WIFEXITED(st) ? WEXITSTATUS(st) : 3;
	if (st == 0)
		set(f, DOC_OK, NULL,
		    "network namespaces work and the nftables ruleset installs "
		    "(checked in a throwaway namespace)");
	else if (st == 1)
		set(f, DOC_FAIL, "run as root; in a container, grant CAP_SYS_ADMIN",
		    "cannot create a network namespace");
	else
		set(f, DOC_FAIL,
		    "modprobe nf_tables nft_redirect nft_nat; apt-get install nftables",
		    "the nftables ruleset cannot be installed (nf_tables, redirect and NAT support "
		    "needed)");
}

static void check_cgroups(struct finding *f)
{
	enum limits_kind k = limits_probe();

	if (k == LIMITS_CGROUP2 || k == LIMITS_CGROUP1)
		set(f, DOC_OK, NULL, "limits use %s (memory, pids, cpu)", limits_kind_name(k));
	else
		set(f, DOC_WARN,
		    "mount cgroup2 at /sys/fs/cgroup (or the v1 memory, pids, cpu "
		    "hierarchies) and run as root",
		    "no usable cgroup: memory is enforced by sampling (PSS) only, pids and "
		    "cpu are not limited");
}

static void check_audit(struct finding *f)
{
	const char *path = run_audit_path(NULL);
	struct audit_log *log = NULL;
	struct wd_err err;

	if (!path) {
		set(f, DOC_FAIL, "set WARDEN_AUDIT_LOG", "no audit log path (no home folder)");
		return;
	}
	wd_err_clear(&err);
	if (audit_log_open(path, &log, &err)) {
		set(f, DOC_FAIL, "fix the path's owner and mode, or set WARDEN_AUDIT_LOG",
		    "audit log %s: %s", path, err.msg);
		return;
	}
	audit_log_close(log);
	set(f, DOC_OK, NULL, "audit log %s is writable", path);
}

/* the fix for a gateway installation without its worker image */
#define WORKER_FIX                                                                                 \
	"install warden-gateway-worker where warden-gateway looks for it (the message says "       \
	"where: reinstall the warden package, or `cmake --install`), then restart the daemon"

static void check_gateway(struct finding *f)
{
	char bin[PATH_MAX], *ans = NULL, why[PATH_MAX + 300];
	bool gone;

	if (!run_gw_request(RUN_DAEMON_SOCKET, "{\"op\":\"stats\"}", 1000, &ans)) {
		free(ans);
		if (!daemon_worker_ok(RUN_DAEMON_SOCKET, why, sizeof(why), &gone))
			set(f, DOC_WARN, gone ? WORKER_FIX : "restart the daemon", "%s", why);
		else
			set(f, DOC_OK, NULL, "a warden-gateway daemon answers on %s",
			    RUN_DAEMON_SOCKET);
		return;
	}
	if (run_gw_find_binary(bin, sizeof(bin))) {
		const char *fix = run_gw_find_problem(why, sizeof(why));

		set(f, DOC_FAIL, fix, "no gateway daemon on %s, and for an embedded one: %s",
		    RUN_DAEMON_SOCKET, why);
		return;
	}
	if (worker_of(bin, why, sizeof(why))) {
		set(f, DOC_FAIL, WORKER_FIX, "the gateway %s cannot start its data plane: %s", bin,
		    why);
		return;
	}
	if (!getpwnam("nobody")) {
		set(f, DOC_FAIL, "create the user `nobody` (or set `user:` in the gateway config)",
		    "the gateway's data plane user `nobody` does not exist");
		return;
	}
	set(f, DOC_OK, NULL, "no daemon on %s: runs start an embedded gateway (%s, its worker %s)",
	    RUN_DAEMON_SOCKET, bin, why);
}

/* A user's mode, as `warden run` picks it (the daemon when it answers and plumbs runs, else
 * rootless): the same test as the gateway check's at the end, so the two lines agree. */
static void check_mode_user(struct finding *f)
{
	char why[PATH_MAX + 300];

	if (run_daemon_answers(RUN_DAEMON_SOCKET, why, sizeof(why)))
		set(f, DOC_OK, NULL,
		    "uid %u, not root: runs use daemon mode (a user and network namespace of your "
		    "own, plumbed by the warden-gateway daemon on %s; `--mode rootless` runs "
		    "without it, `--mode root` needs root)",
		    (unsigned)getuid(), RUN_DAEMON_SOCKET);
	else
		set(f, DOC_OK, NULL,
		    "uid %u, not root: runs are rootless (a user and network namespace of your "
		    "own, no daemon; `--mode root` needs root)",
		    (unsigned)getuid());
}

/* A rootless run's network for real (run_rootless_make(): the namespaces, lo, routes, the run's
 * nft table with its NAT chain, audited clean), then bwrap nesting its user namespace there. */
static void check_rootless_net(struct finding *f)
{
	struct probe pr;
	char **argv = probe_argv(&pr, 0, -1);
	struct run_rootless_plan p = {.uid = getuid(), .gid = getgid()};
	struct run_rootless rl;
	struct wd_gwconf g;
	struct wd_err err;
	pid_t pid;
	int st = -1;

	conf_defaults(&g);
	if (run_rootless_fw_config(&g, &p.fc, &p.addr)) {
		set(f, DOC_FAIL, NULL, "the default run pools are invalid");
		return;
	}
	wd_err_clear(&err);
	if (run_rootless_make(&rl, &p, &err)) {
		set(f, DOC_FAIL, "see the message, and the userns check above", "%s", err.msg);
		return;
	}
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, 1);
		dup2(null, 2);
		if (setns(rl.userns_fd, CLONE_NEWUSER) || setns(rl.netns_fd, CLONE_NEWNET))
			_exit(125);
		execv(argv[0], argv);
		_exit(127);
	}
	if (pid > 0 && waitpid(pid, &st, 0) == pid)
		st = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	run_rootless_close(&rl);
	if (st)
		set(f, DOC_FAIL, "see the userns and bwrap checks above",
		    "bubblewrap could not nest its user namespace in a rootless run's (exit %d)",
		    st);
	else
		set(f, DOC_OK, NULL,
		    "a user and network namespace of your own: lo, routes, the run's nft table "
		    "(its NAT chain: nf_nat is there) audited clean, and bubblewrap nests its user "
		    "namespace in it");
}

/* A daemon-mode run's cgroup, by gateway/cgroup.c's test (v2 root, v1 hierarchies, none) */
static const char *daemon_cgroup(void)
{
	static const char *const v1[] = {"/sys/fs/cgroup/memory", "/sys/fs/cgroup/pids",
					 "/sys/fs/cgroup/cpu"};
	struct statfs sf;

	if (!access("/sys/fs/cgroup/cgroup.controllers", F_OK))
		return "the daemon makes each run a cgroup2 cgroup below /sys/fs/cgroup/warden";
	for (size_t i = 0; i < WD_ARRAY_SIZE(v1); i++)
		if (statfs(v1[i], &sf) || sf.f_type != CGROUP_SUPER_MAGIC)
			return "no cgroup hierarchy here: memory by sampling (PSS)";
	return "the daemon makes each run cgroup1 cgroups (memory, pids, cpu hierarchies)";
}

static void check_limits_user(struct finding *f)
{
	char why[PATH_MAX + 300];

	if (run_daemon_answers(RUN_DAEMON_SOCKET, why, sizeof(why)))
		set(f, DOC_OK, NULL,
		    "daemon-mode limits (the daemon on %s answers you): %s; memory sampling, "
		    "RLIMIT_NPROC and the wall-clock timeout as well",
		    RUN_DAEMON_SOCKET, daemon_cgroup());
	else if (run_rootless_scope_usable(getenv("XDG_RUNTIME_DIR"), RUN_SYSTEMD_RUN,
					   "/sys/fs/cgroup"))
		set(f, DOC_OK, NULL,
		    "rootless limits: your user manager's systemd scope (cgroup v2: MemoryMax, "
		    "TasksMax, CPUQuota); memory sampling, RLIMIT_NPROC, the timeout as well");
	else
		set(f, DOC_OK, NULL,
		    "rootless limits: memory by sampling (PSS), pids by RLIMIT_NPROC, the "
		    "wall-clock timeout (no user manager of yours answers on $XDG_RUNTIME_DIR/"
		    "systemd/private with cgroup v2: with one, runs get a systemd user scope)");
}

/* A user's gateway: the host's daemon when it answers and plumbs runs (daemon mode), else an
 * embedded one (rootless); a daemon's socket the user may not use is said, with the fix. */
static void check_gateway_user(struct finding *f)
{
	char bin[PATH_MAX], why[PATH_MAX + 300];
	struct stat st;
	bool gone;

	if (run_daemon_answers(RUN_DAEMON_SOCKET, why, sizeof(why))) {
		if (!daemon_worker_ok(RUN_DAEMON_SOCKET, why, sizeof(why), &gone))
			set(f, DOC_WARN,
			    gone ? "ask the operator to " WORKER_FIX
				 : "ask the operator to restart the daemon",
			    "%s", why);
		else
			set(f, DOC_OK, NULL,
			    "the warden-gateway daemon on %s plumbs your runs (daemon mode)",
			    RUN_DAEMON_SOCKET);
		return;
	}
	if (!stat(RUN_DAEMON_SOCKET, &st) && S_ISSOCK(st.st_mode) &&
	    access(RUN_DAEMON_SOCKET, R_OK | W_OK)) {
		set(f, DOC_WARN,
		    "ask the operator to add you to the socket's group (usermod -a -G GROUP USER), "
		    "then log in again",
		    "a gateway daemon's socket %s is there, but you may not use it: your runs are "
		    "rootless, not the host's daemon mode",
		    RUN_DAEMON_SOCKET);
		return;
	}
	if (run_gw_find_binary(bin, sizeof(bin)))
		set(f, DOC_FAIL, run_gw_find_problem(why, sizeof(why)),
		    "a rootless run's embedded gateway: %s", why);
	else if (worker_of(bin, why, sizeof(why)))
		set(f, DOC_FAIL, WORKER_FIX, "the gateway %s cannot start its data plane: %s", bin,
		    why);
	else
		set(f, DOC_OK, NULL,
		    "rootless runs start an embedded gateway as you (%s, its worker %s)", bin, why);
}

/* A user's doctor: the rootless prerequisites. */
static const struct {
	const char *name;
	check_fn fn;
} user_checks[] = {
    {"mode", check_mode_user},	{"userns", check_userns},	 {"bwrap", check_bwrap},
    {"seccomp", check_seccomp}, {"network", check_rootless_net}, {"limits", check_limits_user},
    {"audit", check_audit},	{"gateway", check_gateway_user},
};

static const struct {
	const char *name;
	check_fn fn;
} checks[] = {
    {"root", check_root},	{"userns", check_userns},     {"bwrap", check_bwrap},
    {"seccomp", check_seccomp}, {"network", check_netns_nft}, {"cgroups", check_cgroups},
    {"audit", check_audit},	{"gateway", check_gateway},
};

int cmd_doctor(int argc, char **argv)
{
	static const char *const tag[] = {"ok  ", "warn", "FAIL"};
	bool root = geteuid() == 0;
	int fails = 0;

	if (cli_wants_help(argc, argv)) {
		printf("usage: warden doctor\n\n"
		       "Check every prerequisite of `warden run` (root, user namespaces and\n"
		       "AppArmor's restriction, bubblewrap, the seccomp filter, network\n"
		       "namespaces and nftables, cgroups, the audit log, the gateway) and print\n"
		       "a fix for each failure. Run by a user, it checks what rootless runs need\n"
		       "(user namespaces, nftables and nf_nat in one, bwrap nested in it).\n"
		       "Then one line per sandbox backend (linux, docker, seatbelt, windows):\n"
		       "whether it can run here, and why not.\n"
		       "exit status: 0 all good (warnings allowed), 1 something fails\n");
		return WD_EXIT_OK;
	}
	for (size_t i = 0; i < (root ? WD_ARRAY_SIZE(checks) : WD_ARRAY_SIZE(user_checks)); i++) {
		struct finding f = {0};
		const char *name = root ? checks[i].name : user_checks[i].name;

		(root ? checks[i].fn : user_checks[i].fn)(&f);
		wd_say(stdout, "%s %-8s %s", tag[f.v], name, f.what);
		if (f.v != DOC_OK && f.fix[0])
			wd_say(stdout, "              fix: %s", f.fix);
		if (f.v == DOC_FAIL)
			fails++;
	}
	/* the sandbox backends: which can run here (informational: the checks above are the
	 * native one's; a backend that cannot run is chosen only by name, and then fails) */
	for (size_t i = 0;; i++) {
		char line[1536];
		bool ok;

		if (run_backend_doctor(i, line, sizeof(line), &ok))
			break;
		wd_say(stdout, "%s backend  %s", ok ? "ok  " : "no  ", line);
	}
	wd_say(stdout, "%d problem%s found", fails, fails == 1 ? "" : "s");
	return fails ? WD_EXIT_FOUND : WD_EXIT_OK;
}

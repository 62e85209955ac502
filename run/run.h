/* run.h - run/'s header for the verbs and the unit tests: the options and run_main(), and the
 * pieces every verb shares (the paths, what no grant may expose, small pure helpers, limits).
 * The gateway client is gw.h, the state record state.h, the network pool pool.h. The stages' own
 * header is internal.h; a trace's hooks are in learn.h; the bubblewrap backend's pieces are in
 * bwrap.h.
 *
 * docs/run.md is the theory of operation of a run.
 */
#ifndef WARDEN_LAUNCHER_RUN_H
#define WARDEN_LAUNCHER_RUN_H

#include "common/common.h"
#include "conf/conf.h"
#include "policy/policy.h"
#include "run/flags.h"
#include "run/limits.h"

#include <limits.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Exit statuses of `warden run` besides the program's own (warden(1)). */
enum {
	RUN_EXIT_USAGE = 2, /* a usage error (the verbs' WD_EXIT_USAGE) */
	RUN_EXIT_TIMEOUT = 124,
	RUN_EXIT_WARDEN = 125,
	RUN_EXIT_NOEXEC = 126,
	RUN_EXIT_NOTFOUND = 127,
};

/* SIGTERM first, SIGKILL this much later (timeout, teardown, `warden kill`). */
#define RUN_KILL_GRACE_MS 750

/* `warden kill` sends the launcher SIGTERM with this value (sigqueue(3)): the launcher then
 * ends the run as a timeout does and audits who (the kernel's sender uid and pid). A plain
 * SIGTERM is still forwarded to the program. */
#define RUN_KILL_SIGVAL 0x77646b6c /* "wdkl" */

/* Where runs record themselves (one folder per run, see run_state.c). */
#define RUN_STATE_DIR "/run/warden/runs"
/* Whom root's runs (not under sudo) run as, unless --sandbox-user says otherwise; the uid
 * when the passwd file has no such user. */
#define RUN_SANDBOX_USER "nobody"
#define RUN_SANDBOX_UID 65534

/* The shared gateway daemon's control socket. */
#define RUN_DAEMON_SOCKET "/run/warden/gateway.sock"

/* ------------------------------------------------------------ the run (run.c) */

/**
 * struct run_opts - the options of `warden run` (warden(1))
 * @policy:		-p FILE, or NULL (the empty policy)
 * @gateway:		--gateway SOCKET, or NULL
 * @config:		--config GATEWAY.yaml, or NULL (the defaults)
 * @audit:		--audit-log PATH, or NULL
 * @sandbox_user:	--sandbox-user, or NULL
 * @timeout_s:		--timeout, 0 when not given
 * @mode:		--mode: "root", "rootless", "daemon", or NULL (root as root; as a user the
 *			daemon when one answers, else rootless)
 * @quiet:		-q
 * @print_seccomp:	--print-seccomp
 * @print_bwrap:	--print-bwrap (the chosen backend's command line)
 * @backend:		--backend NAME (policy_backend_lookup()'s words), or NULL: the policy's
 *			sandbox.backend, else auto-selection (run/backend.c)
 * @run_id:		--run-id ID (hidden: `warden mcp` names its runs), or NULL (a random id)
 * @started_by:		--started-by mcp (hidden): recorded in the run's state and run.start
 * @flags:		--allow, --read, --write in command-line order (run/flags.h), or NULL
 * @nflags:		how many: with none the policy is -p FILE's alone
 * @print_policy:	--print-policy: print the effective policy (file + flags) as YAML, run
 *nothing
 * @shadow:		--shadow: the gateway lets through what the policy denies on the network
 *			and records it as "would_deny" (the ceiling, the SSRF guard still deny;
 *			files stay enforced); never from a policy file
 * @usage:		the verb's usage text, said when there is no command; or NULL
 */
struct run_opts {
	const char *policy;
	const char *gateway;
	const char *config;
	const char *audit;
	const char *sandbox_user;
	unsigned timeout_s;
	const char *mode;
	bool quiet;
	bool print_seccomp;
	bool print_bwrap;
	const char *backend;
	const char *run_id;
	const char *started_by;
	const struct run_flag *flags;
	size_t nflags;
	bool print_policy;
	bool shadow;
	void (*usage)(FILE *f);
};

/* The longest --timeout: a week. */
#define RUN_TIMEOUT_MAX_S 604800

/** run_opts_mode_ok() - whether @arg names a mode for --mode: root, rootless or daemon. */
bool run_opts_mode_ok(const char *arg);

/**
 * run_opts_timeout() - a --timeout argument: 1 to RUN_TIMEOUT_MAX_S seconds
 * @arg:	the argument
 * @ret:	on success, the seconds
 * Return: 0, or -EINVAL.
 */
int run_opts_timeout(const char *arg, unsigned *ret);

struct run_learn;
struct run_trace;

/**
 * run_main() - one run: the stages up to a started program, the wait, the end (run.c)
 * @o:		the options (copied)
 * @argc:	number of words of the command after `--` (0: the policy's `command`)
 * @argv:	the words
 * @learner:	NULL for `warden run`; a trace's learn hooks (learn.h)
 * @trace:	NULL, or the trace the hooks fill
 *
 * Return: the exit status (warden(1)).
 */
int run_main(const struct run_opts *o, int argc, char **argv, const struct run_learn *learner,
	     struct run_trace *trace);

/**
 * run_seatbelt_main() - one run on macOS (mode_seatbelt.c): the policy, run.start, the
 * proxy-mode gateway as warden's child, the checked Seatbelt profile, the program under
 * `sandbox-exec -f PROFILE`, its rlimits and wall-time watchdog, run.exit, all undone
 * @o:		the options (those that mean nothing here are refused)
 * @argc:	number of words of the command after `--` (0: the policy's `command`)
 * @argv:	the words
 *
 * Return: the exit status (warden(1)).
 */
int run_seatbelt_main(const struct run_opts *o, int argc, char **argv);

/**
 * run_appcontainer_main() - one run on Windows (mode_appcontainer.c, Windows builds only): the
 * policy, run.start, the proxy-mode gateway as a child process, the AppContainer backend
 * (sandbox/appcontainer.c) with the plan of the policy, the exit code, run.exit, all undone
 * @o:		the options (those that mean nothing here are refused)
 * @argc:	number of words of the command after `--` (0: the policy's `command`)
 * @argv:	the words
 *
 * Return: the exit status (warden(1)).
 */
int run_appcontainer_main(const struct run_opts *o, int argc, char **argv);

/* ------------------------------------------------------------ pure helpers (run_util.c) */

/**
 * run_resolve_command() - find @cmd the way execvp() would, before the sandbox starts
 * @cmd:	the command (absolute, relative with a '/', or a bare name)
 * @path:	the search path for bare names ($PATH); NULL: "/usr/local/bin:/usr/bin:/bin"
 * @out:	on success, the absolute path
 * @outlen:	size of @out
 *
 * Return: 0; -ENOENT when nothing is found; -EACCES when what is found is not an executable
 * regular file; -ENAMETOOLONG.
 */
int run_resolve_command(const char *cmd, const char *path, char *out, size_t outlen);

/**
 * run_sandbox_user() - whom a run started by root directly (not under sudo) runs the program as
 * @want:	a name or uid (--sandbox-user), or NULL: $WARDEN_SANDBOX_USER, else
 *		RUN_SANDBOX_USER (uid/gid RUN_SANDBOX_UID when the passwd file lacks it)
 * @ret_uid:	its uid
 * @ret_gid:	its primary gid (the uid again for a bare number)
 * @name:	the name asked for (for messages)
 * @size:	size of @name
 *
 * Return: 0; -ENOENT when no such user exists; -EPERM when it is root (uid or gid 0).
 */
int run_sandbox_user(const char *want, uid_t *ret_uid, gid_t *ret_gid, char *name, size_t size);

/**
 * run_exit_status() - the status `warden run` exits with for a wait() status
 * @wstatus:	status from waitpid()
 * @timed_out:	the timeout fired
 * @ret_signal:	set to the signal number that ended the program, or 0
 *
 * Return: 124 after a timeout, the exit status, or 128+N for signal N.
 */
int run_exit_status(int wstatus, bool timed_out, int *ret_signal);

/**
 * run_sha256_hex() - "sha256:<64 hex>" of @len bytes at @data
 * @data:	the bytes
 * @len:	number of bytes
 * @out:	at least 72 bytes; "" on failure
 *
 * Return: 0, or -EIO (libcrypto could not compute it).
 */
int run_sha256_hex(const void *data, size_t len, char out[72]);

/**
 * run_path_within() - true when @path is @dir or lies below it (both absolute, canonical)
 */
bool run_path_within(const char *path, const char *dir);

/* limits: run/limits.h (included above) */

/* ------------------------------------------------------------ paths (paths.c) */

/**
 * run_audit_path() - the audit log path of a run, and the verbs' default
 * @override:	a --audit-log argument, or NULL
 *
 * Order: @override, $WARDEN_AUDIT_LOG, ${XDG_STATE_HOME:-~/.local/state}/warden/audit.jsonl.
 * Return: a static buffer, or NULL when no home folder can be found.
 */
const char *run_audit_path(const char *override);

/**
 * run_audit_key_path() - where the person's audit signing key is (docs/audit.md, "The signed
 * run record"): $WARDEN_AUDIT_KEY, else ${XDG_STATE_HOME:-~/.local/state}/warden/audit-key.pem
 * Return: a static buffer, or NULL when no home folder can be found.
 */
const char *run_audit_key_path(void);

struct audit_key;

/**
 * run_audit_key_open() - the person's signing key for run records, from @path (made on first
 * use), that can sign. Fails closed: a run whose record cannot be signed does not start.
 * @path:	run_audit_key_path()'s, or NULL when there is no place for it
 * @ret_key:	the key (audit_key_free())
 * @err:	what failed
 * @fix:	what the person can do about it
 * Return: 0, or a negative errno.
 */
int run_audit_key_open(const char *path, struct audit_key **ret_key, struct wd_err *err,
		       const char **fix);

/**
 * run_audit_max_bytes() - the size cap of the audit log a launcher writes (run, mcp)
 * @ret_max:	$WARDEN_AUDIT_MAX_BYTES (a number of bytes; 0: never rotate), else
 *		AUDIT_DEFAULT_MAX_BYTES (64 MiB); set on success
 *
 * Return: 0, or -EINVAL when the variable is set but not a whole number of bytes.
 */
int run_audit_max_bytes(uint64_t *ret_max);

/* What no policy grant may expose: the audit logs and the run state. */
#define RUN_PROTECT_MAX 6

/**
 * struct run_protect - what a run's grants must keep away from
 * @v:		entries for struct policy_ctx (point into @path and @what)
 * @n:		number of entries
 * @path:	their paths, absolute
 * @what:	their descriptions
 */
struct run_protect {
	struct policy_protect v[RUN_PROTECT_MAX];
	size_t n;
	char path[RUN_PROTECT_MAX][PATH_MAX];
	char what[RUN_PROTECT_MAX][PATH_MAX + 32];
};

/**
 * run_protect_init() - what is protected for one run or one `policy check`
 * @pr:		filled in
 * @audit_path:	the audit log the run writes (run_audit_path()), or NULL
 * @gw_audit:	the gateway's own audit log from its config, "" or NULL when none
 *
 * Relative paths are made absolute against the current folder. /run/warden (run state,
 * the shared /etc copies, the pool) and /var/log/warden (a daemon's default log folder)
 * are always protected, and as a user the caller's own run state (run_rootless_dir_path()).
 */
void run_protect_init(struct run_protect *pr, const char *audit_path, const char *gw_audit);

/**
 * run_policy_self_check() - the checks `warden run` makes, on a policy a verb generated
 * @text:	the policy's YAML
 * @name:	the file name its diagnostics carry
 * @who:	the verb saying them ("warden init")
 * @all:	print warnings too (errors are always printed, as "the policy made fails its check")
 *
 * Return: 0 (it passes), or a negative errno (-EINVAL: it has errors)
 */
int run_policy_self_check(const struct wd_buf *text, const char *name, const char *who, bool all);

/**
 * run_rootless_dir() - the caller's own folder for Warden's run state (rootless mode):
 * $XDG_RUNTIME_DIR/warden when that is the caller's private folder, else /tmp/warden-UID;
 * made 0700 when missing, with its `runs` folder; refused when it is a link, not the caller's,
 * or writable by others
 * @out:	the folder
 * @size:	size of @out
 * @err:	what is wrong with it, and the fix
 *
 * Return: 0, or a negative errno.
 */
int run_rootless_dir(char *out, size_t size, struct wd_err *err);

/**
 * run_platform_render() - what the backend of another OS would enforce for validated policy
 * @p: the macOS Seatbelt profile (@os "macos") or the Windows AppContainer plan ("windows"),
 * checked against its invariants (run/platform.c; neither backend runs here yet)
 * @home:	the home folder the credential stores' `~` names (macos), or NULL
 * @port:	the gateway's proxy port on loopback, the one network destination
 * @out:	buffer the profile or the plan is appended to
 * @err:	what was refused, or the invariant broken
 * Return: 0, -EINVAL (said in @err), -ENOMEM.
 */
int run_platform_render(const struct wd_policy *p, const char *os, const char *home, uint16_t port,
			struct wd_buf *out, struct wd_err *err);

/**
 * run_platform_sbpl() - the Seatbelt profile of one macOS run (mode_seatbelt.c): as
 * run_platform_render()'s "macos", with the run's own temporary folder written like a write
 * grant; checked against its invariants (sandbox_sbpl_check()) before it is given out
 * @p, @home, @port, @out, @err: as run_platform_render()
 * @tmpdir:	the run's temporary folder (the program's TMPDIR), or NULL
 * Return: 0, -EINVAL (said in @err), -ENOMEM.
 */
int run_platform_sbpl(const struct wd_policy *p, const char *home, uint16_t port,
		      const char *tmpdir, struct wd_buf *out, struct wd_err *err);

/**
 * run_docker_gc() - `warden gc`: the Docker backend's containers whose launcher is gone
 * (labels warden.run and warden.launcher) removed, on the engine the docker CLI reaches
 * ($WARDEN_DOCKER, DOCKER_HOST); nothing when there is no CLI or no engine it may use
 * @ret_n:	how many were removed
 * Return: 0.
 */
int run_docker_gc(unsigned *ret_n);

/**
 * run_crashed_check() - what every `warden` verb does first (launcher/main.c): the missing
 * run.exit of the caller's runs whose launcher died (root: every run in RUN_STATE_DIR; a
 * user: their own folder, when it exists), written once (crashed.c); silent
 * Return: 0, or the first negative errno.
 */
int run_crashed_check(void);

/**
 * run_rootless_dir_path() - the path run_rootless_dir() uses, nothing made or checked beyond
 * whether $XDG_RUNTIME_DIR qualifies (what no grant may expose, run_protect_init())
 * Return: 0, or -ENAMETOOLONG.
 */
int run_rootless_dir_path(char *out, size_t size);

/* ------------------------------------------------------------ rootless (run_rootless.c) */

struct fw_config;
struct netns_addrs;

/**
 * run_rootless_fw_config() - the nft config of a rootless run's own table, and its addresses
 * @g:		the gateway config
 * @fc:		filled in: conf_fw_config() of @g in FW_MODE_RUN, with the gateway's addresses
 * @ret_addrs:	the run's addresses, or NULL: slot 0 of @g's pools (the namespace is the run's
 *		own, so every rootless run uses the same ones): the gateway at the host end, the
 *		program at the sandbox end, both on lo
 *
 * Return: 0, or -EINVAL (bad pools).
 */
int run_rootless_fw_config(const struct wd_gwconf *g, struct fw_config *fc,
			   struct netns_addrs *ret_addrs);

/**
 * run_rootless_scope_argv() - the command line that holds a rootless run's limits in a cgroup v2
 * scope of the user's systemd (`systemd-run --user --scope`), for machines whose systemd
 * delegates the user's subtree (pure; used when run_rootless_scope_usable(), else rootless runs
 * take the fallback, docs/run.md "Rootless mode")
 * @id:		the run id (the unit is warden-<id>.scope)
 * @lim:	the policy's limits: memory (MemoryMax, no swap), pids (TasksMax), cpu
 *		(CPUQuota); unset ones are left out. Always RUN_SCOPE_OOM_PROPERTY.
 * @cmd:	the command the scope runs, NULL-terminated
 *
 * Return: a NULL-terminated vector (run_strv_free()), or NULL when out of memory.
 */
char **run_rootless_scope_argv(const char *id, const struct policy_limits *lim, char *const *cmd);

/* RLIMIT_NPROC above `pids` when a cgroup counts the run (RUN_NPROC_SLACK more) */
#define RUN_NPROC_SLACK 16

/**
 * run_nproc_backstop() - a run's RLIMIT_NPROC in its user namespace (pure)
 * @pids:	the policy's `pids` (0: none)
 * @cgroup:	a pids cgroup counts the run too (a rootless run's systemd scope, a daemon
 *		run's cgroup): the rlimit is then only a backstop RUN_NPROC_SLACK above it, so that
 *		the cgroup's refusal, which pids.events counts and run.exit reports as limit.pids,
 *		comes first (at the same number the rlimit refused first in the Debian 12 VM: a
 *		pids bomb ended with no event, docs/vm.md)
 * Return: the limit, 0 for none.
 */
uint64_t run_nproc_backstop(uint64_t pids, bool cgroup);

/* systemd-run, whose --user --scope holds a rootless run's limits where it can */
#define RUN_SYSTEMD_RUN "/usr/bin/systemd-run"
/* the scope's property that leaves an OOM kill to the kernel alone: under systemd 252's default
 * (OOMPolicy=stop) the manager stopped the whole scope with SIGTERM after the kernel killed
 * one of its processes at MemoryMax (docs/vm.md "What the runs found") */
#define RUN_SCOPE_OOM_PROPERTY "OOMPolicy=continue"

/**
 * run_rootless_scope_usable() - whether a rootless run's limits can be held by a systemd user
 * scope here: a user manager of the caller's answers (its private socket
 * @runtime_dir/systemd/private is a socket of the caller's: what `systemctl --user` and
 * `systemd-run --user` connect to), @systemd_run is an executable file, and @cgroup_root is a
 * cgroup v2 hierarchy (it has cgroup.controllers), where a scope's MemoryMax and TasksMax hold
 * @runtime_dir:	$XDG_RUNTIME_DIR, or NULL (then: no)
 * @systemd_run:	RUN_SYSTEMD_RUN
 * @cgroup_root:	/sys/fs/cgroup
 */
bool run_rootless_scope_usable(const char *runtime_dir, const char *systemd_run,
			       const char *cgroup_root);

/** run_strv_free() - free a vector run_rootless_scope_argv() returned; NULL is fine. */
void run_strv_free(char **v);

#endif /* WARDEN_LAUNCHER_RUN_H */

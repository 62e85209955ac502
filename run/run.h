/* run.h - run/'s header for the verbs and the unit tests: the options and run_main(), and the
 * pieces other verbs share (limits, the gateway client, the run state folder, the network
 * pool, the paths, small pure helpers). The stages' own header is internal.h; a trace's hooks
 * are in learn.h; the bubblewrap backend's pieces are in bwrap.h.
 *
 * docs/run.md is the theory of operation of a run.
 */
#ifndef WARDEN_LAUNCHER_RUN_H
#define WARDEN_LAUNCHER_RUN_H

#include "common/common.h"
#include "conf/conf.h"
#include "policy/policy.h"
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
 * @print_bwrap:	--print-bwrap
 * @run_id:		--run-id ID (hidden: `warden mcp` names its runs), or NULL (a random id)
 * @started_by:		--started-by mcp (hidden): recorded in the run's state and run.start
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
	const char *run_id;
	const char *started_by;
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
 * @out:	at least 72 bytes
 */
void run_sha256_hex(const void *data, size_t len, char out[72]);

/**
 * run_path_within() - true when @path is @dir or lies below it (both absolute, canonical)
 */
bool run_path_within(const char *path, const char *dir);

/* limits: run/limits.h (included above) */

/* ------------------------------------------------------------ the gateway (run_gw.c) */

/**
 * struct run_gw - the gateway a run uses
 * @socket:	control socket path
 * @embedded:	started by this launcher for this run
 * @pid:	the embedded gateway's pid (0 otherwise)
 * @log_path:	the embedded gateway's output
 */
struct run_gw {
	char socket[108];
	bool embedded;
	pid_t pid;
	char log_path[512];
};

/**
 * run_gw_request() - one control request, one answer line
 * @socket:	control socket path
 * @req:	the request (one JSON object, no newline)
 * @timeout_ms:	longest wait for connect + answer
 * @ret_answer:	on success, the answer line (malloc'd, NUL-terminated)
 *
 * Return: 0; -ECONNREFUSED / -ENOENT when nobody listens; -ETIMEDOUT; another negative errno.
 */
int run_gw_request(const char *socket, const char *req, int timeout_ms, char **ret_answer);

struct json_t;

/**
 * run_gw_call() - one JSON request, its answer checked: `"ok": true`
 * @socket:	control socket path
 * @req:	the request (a JSON object)
 * @timeout_ms:	longest wait for connect + answer
 * @ret_ans:	on success, the parsed answer (json_decref()); may be NULL
 * @why:	on failure, why (the socket and the cause, or the gateway's "error")
 * @wsize:	size of @why
 *
 * Return: 0; the errno of run_gw_request(); -EBADMSG the answer is not JSON; -EPERM the gateway
 * refused (@why has its reason); -ENOMEM.
 */
int run_gw_call(const char *socket, struct json_t *req, int timeout_ms, struct json_t **ret_ans,
		char *why, size_t wsize);

/**
 * run_gw_call_op() - run_gw_call() of `{"op": @op}`
 * Return: as run_gw_call().
 */
int run_gw_call_op(const char *socket, const char *op, int timeout_ms, struct json_t **ret_ans);

/**
 * run_gw_find_binary() - path of warden-gateway: $WARDEN_GATEWAY_BIN, next to this program,
 * ../gateway/ or ../sbin/ from it, else $PATH
 * Return: 0, or -ENOENT.
 */
int run_gw_find_binary(char *out, size_t outlen);

/**
 * run_gw_start() - start an embedded gateway for one run and wait until it answers
 * @gw:		filled in (socket, pid, log)
 * @dir:	the run's state folder (config, socket and log go there)
 * @conf:	the gateway configuration to start it with (listen addresses set by the caller)
 * @audit_path:	the audit log it writes to
 * @err:	what failed
 *
 * Return: 0, or a negative errno (the child is stopped again).
 */
int run_gw_start(struct run_gw *gw, const char *dir, const struct wd_gwconf *conf,
		 const char *audit_path, struct wd_err *err);

/**
 * run_gw_spawn() - the first half of run_gw_start(): write the config and start the child,
 * without waiting for it to answer (so the caller can do other setup meanwhile)
 * @gw, @dir, @conf, @audit_path, @err: as run_gw_start()
 * @listen:	listening sockets the child adopts (`--listen-fds`, at descriptors 3..) instead
 *		of binding its own, or NULL
 * @nlisten:	how many (at most 9)
 *
 * Return: 0, or a negative errno (nothing was started).
 */
int run_gw_spawn(struct run_gw *gw, const char *dir, const struct wd_gwconf *conf,
		 const char *audit_path, const int *listen, int nlisten, struct wd_err *err);

/**
 * run_gw_wait() - the second half: wait (5 s at most) until the spawned gateway answers
 * Return: 0, or a negative errno (-ECHILD it exited, with its last output line in @err;
 * -ETIMEDOUT it was stopped again).
 */
int run_gw_wait(struct run_gw *gw, struct wd_err *err);

/** run_gw_stop() - SIGTERM the embedded gateway and reap it (SIGKILL after 2 s). */
void run_gw_stop(struct run_gw *gw);

/* ------------------------------------------------------------ run state (run_state.c) */

/**
 * struct run_record - what /run/warden/runs/<id>/state says about a run
 * @id:		run id
 * @pid:	launcher pid
 * @start:	launcher start time (field 22 of /proc/<pid>/stat)
 * @ifname:	host-side veth ("" before the network exists)
 * @sbx4:	sandbox IPv4 ("" when none)
 * @sbx6:	sandbox IPv6 ("" when none)
 * @host4:	the run's own gateway IPv4, the veth's host side ("" when none, or an older
 *		record)
 * @host6:	the same for IPv6
 * @table:	nft table name
 * @if_prefix:	nft interface prefix
 * @gw_socket:	control socket the run is registered with ("" when not registered)
 * @gw_pid:	embedded gateway pid (0 when none)
 * @gw_start:	its start time
 * @cg:		cgroup folders ("" when none)
 * @mode:	"root", "rootless" or "daemon"
 * @uid:	the person whose run it is (the audit events' uid)
 * @created:	when the run started (seconds since the epoch)
 * @ending:	1 once the program ended and the teardown child owns the record
 * @policy:	the policy file's absolute path ("" for the empty policy)
 * @policy_name: the name the gateway knows the policy by
 * @audit:	the run's audit log
 * @started_by:	"" for `warden run`; "mcp" for a run `warden mcp` started (additions to its
 *		allowlist need a person's approval)
 * @command:	the command line as a JSON array of strings (cut to fit, then "...")
 */
struct run_record {
	char id[32];
	pid_t pid;
	unsigned long long start;
	char ifname[16];
	char sbx4[INET_ADDRSTRLEN];
	char sbx6[INET6_ADDRSTRLEN];
	char host4[INET_ADDRSTRLEN];
	char host6[INET6_ADDRSTRLEN];
	char table[32];
	char if_prefix[8];
	char gw_socket[108];
	pid_t gw_pid;
	unsigned long long gw_start;
	char cg[LIMITS_V1_COUNT][512];
	char mode[12];
	uid_t uid;
	unsigned long long created;
	unsigned long long ending;
	char policy[PATH_MAX];
	char policy_name[256];
	char audit[PATH_MAX];
	char started_by[16];
	char command[1024];
};

/* The run's policy text as its gateway has it now, beside its state record (0600): what
 * `warden allowlist` composes a live change from. */
#define RUN_POLICY_FILE "policy.yaml"

/**
 * run_proc_start() - start time of @pid (field 22 of /proc/<pid>/stat)
 * Return: the start time, or 0 when the process does not exist (or is a zombie).
 */
unsigned long long run_proc_start(pid_t pid);

/**
 * run_record_format() - @r as "key=value" lines
 * Return: 0, or -ENOMEM.
 */
int run_record_format(const struct run_record *r, struct wd_buf *out);

/**
 * run_record_parse() - the inverse of run_record_format()
 * Return: 0, or -EINVAL (unknown key, bad number, missing id or pid).
 */
int run_record_parse(const char *text, struct run_record *r);

/**
 * run_record_save() - write @r atomically to @dir/<id>/state (creating the folder 0700)
 * Return: 0, or a negative errno.
 */
int run_record_save(const char *dir, const struct run_record *r);

/**
 * run_gc() - tear down the leftovers of runs whose launcher is gone
 * @dir:		the state folder (RUN_STATE_DIR)
 * @ret_reclaimed:	number of runs cleaned up; may be NULL
 * @err:		the first failure
 *
 * For each dead run: stops its embedded gateway, kills and removes its cgroups, unregisters it
 * from a daemon, deletes its nft elements, removes its folder. Then netns_gc() reclaims the
 * namespaces and address slots of dead launchers.
 *
 * Return: 0, or the first negative errno (the other runs are still cleaned up).
 */
int run_gc(const char *dir, unsigned *ret_reclaimed, struct wd_err *err);

/* ------------------------------------------------------------ the network pool (pool.c) */

struct netns_pool_config;
struct netns_run;
struct fw_config;

/* Where ready-made run networks wait (one file per network, see run_pool.c). */
#define RUN_POOL_DIR "/run/warden/pool"
/* Ready networks kept by default ($WARDEN_POOL overrides; 0 disables), and at most. */
#define RUN_POOL_DEFAULT 2
#define RUN_POOL_MAX 16
/* Seconds a ready network waits to be leased before its holder ends it ($WARDEN_POOL_IDLE
 * overrides, 1..RUN_POOL_IDLE_MAX), and how often a holder looks whether its veth and its host
 * namespace are still there. */
#define RUN_POOL_IDLE_DEFAULT 600
#define RUN_POOL_IDLE_MAX 86400
#define RUN_POOL_CHECK_S 2
/* argv[0] and comm of a holder: `warden-pool <netns>` (main() dispatches on it). */
#define RUN_POOL_HOLDER_NAME "warden-pool"

/**
 * run_pool_size() - how many ready networks to keep: $WARDEN_POOL (0..RUN_POOL_MAX), else
 * RUN_POOL_DEFAULT (also when the variable is not a number in range)
 */
unsigned run_pool_size(void);

/** run_pool_idle_s() - $WARDEN_POOL_IDLE (1..RUN_POOL_IDLE_MAX), else RUN_POOL_IDLE_DEFAULT */
unsigned run_pool_idle_s(void);

/**
 * run_pool_holder() - main() of a holder, `warden-pool <netns>` (exec'd by the maker of a
 * pooled network with the namespace on fd 3 and the adoption pipe on fd 4): waits to be
 * adopted, then sleeps until killed (a lease), idle for run_pool_idle_s(), or its veth or
 * host namespace is gone; in those three cases it removes its entry and nft elements first
 * @argc:	2
 * @argv:	RUN_POOL_HOLDER_NAME, the network's name (its host-side interface)
 *
 * Return: RUN_EXIT_USAGE when not started that way; otherwise it does not return.
 */
int run_pool_holder(int argc, char **argv);

/**
 * run_pool_netns_in_use() - whether the network namespace with inode @ino still has a reason
 * to exist: it is pid 1's, it is bind-mounted under /run/netns (or /var/run/netns), or a
 * process that is not a pool holder lives in it (an unknown inode, 0, counts as in use)
 */
bool run_pool_netns_in_use(unsigned long long ino);

/**
 * run_pool_lease() - take a ready network of this configuration out of the pool
 * @dir:	the pool folder (RUN_POOL_DIR)
 * @nc:		the run's network configuration (must bind-mount namespaces)
 * @fc:		the run's nft configuration (the network's elements are in its table)
 * @record:	called (under the pool's lock) once the network is the caller's and healthy,
 *		before it leaves the pool: the caller records it in its run state; a non-zero
 *		return gives up the lease (the network is torn down) and is returned
 * @arg:	passed to @record
 * @out:	on success, the live network (its slot's owner is the caller)
 * @err:	why a leased network was refused; may be NULL
 *
 * Return: 0; -ENOENT when no ready network of this configuration is pooled (or the pool is
 * locked by someone else: the launch path never waits); -EAGAIN when the ones met were
 * unhealthy (torn down; @err says why; build a fresh one); the error of @record.
 */
int run_pool_lease(const char *dir, const struct netns_pool_config *nc, const struct fw_config *fc,
		   int (*record)(void *arg, const struct netns_run *net), void *arg,
		   struct netns_run *out, struct wd_err *err);

/**
 * run_pool_fill() - make ready networks until the pool holds @want of this configuration
 * (counting those being made by live makers); the table must be installed
 * @dir:	the pool folder
 * @nc:		network configuration
 * @fc:		nft configuration
 * @want:	target size
 * @ret_made:	number made; may be NULL
 * @err:	what failed; may be NULL
 *
 * Return: 0, or a negative errno (what was made stays; a half-made one is undone).
 */
int run_pool_fill(const char *dir, const struct netns_pool_config *nc, const struct fw_config *fc,
		  unsigned want, unsigned *ret_made, struct wd_err *err);

/**
 * run_pool_gc() - reclaim pooled networks: half-made ones whose maker is gone, ready ones of
 * another configuration, whose holder is gone or that fail the health check (interface up
 * with carrier), those of another host namespace that is gone (run_pool_netns_in_use()), and
 * with @drain all of this host namespace's
 * (nft elements, namespace, veth, slot, entry)
 * @dir:		the pool folder
 * @nc:			the configuration whose healthy ready networks are kept
 * @fc:			its nft configuration
 * @drain:		reclaim every entry
 * @ret_reclaimed:	number reclaimed; may be NULL
 * @err:		the first failure; may be NULL
 *
 * Return: 0, or the first negative errno (the other entries are still handled).
 */
int run_pool_gc(const char *dir, const struct netns_pool_config *nc, const struct fw_config *fc,
		bool drain, unsigned *ret_reclaimed, struct wd_err *err);

/* ------------------------------------------------------------ paths (paths.c) */

/**
 * run_audit_path() - the audit log path of a run, and the verbs' default
 * @override:	a --audit-log argument, or NULL
 *
 * Order: @override, $WARDEN_AUDIT_LOG, ${XDG_STATE_HOME:-~/.local/state}/warden/audit.jsonl.
 * Return: a static buffer, or NULL when no home folder can be found.
 */
const char *run_audit_path(const char *override);

/* What no policy grant may expose: the audit logs and the run state. */
#define RUN_PROTECT_MAX 5

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
 * run_rootless_dir_path() - the path run_rootless_dir() uses, nothing made or checked beyond
 * whether $XDG_RUNTIME_DIR qualifies (what no grant may expose, run_protect_init())
 * Return: 0, or -ENAMETOOLONG.
 */
int run_rootless_dir_path(char *out, size_t size);

/* ------------------------------------------------------------ rootless (run_rootless.c) */

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
 *		(CPUQuota); unset ones are left out
 * @cmd:	the command the scope runs, NULL-terminated
 *
 * Return: a NULL-terminated vector (run_strv_free()), or NULL when out of memory.
 */
char **run_rootless_scope_argv(const char *id, const struct policy_limits *lim, char *const *cmd);

/* systemd-run, whose --user --scope holds a rootless run's limits where it can */
#define RUN_SYSTEMD_RUN "/usr/bin/systemd-run"

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

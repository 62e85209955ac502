/* proxyrun.h - internal to run/: the portable part of a run whose only network path is a
 * proxy-mode gateway on loopback (macOS's Seatbelt backend today, a Windows backend later):
 * the run's private folder, its loopback listener, the gateway started as warden's child with
 * the listener handed in, the run registered with its policy, the program's environment, its
 * rlimits, the wait with a wall-time watchdog, signals forwarded, everything undone. No Linux
 * header: it builds for macOS (tests/cross) and on Linux, where the lab runs it through the
 * test-only `warden-seatbelt` (tests/integration/run_seatbelt.sh). docs/platforms.md. */
#ifndef WD_RUN_PROXYRUN_H
#define WD_RUN_PROXYRUN_H

#include "common/common.h"
#include "policy/policy.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/**
 * struct run_proxy - what a proxy run holds, each field undone by run_proxy_end()
 * @dir:	the run's private folder (0700, made by mkdtemp), "" when none
 * @tmp:	its "tmp" folder: the program's TMPDIR and HOME (written like a write grant)
 * @ctl:	the gateway's control socket, in @dir
 * @conf:	the gateway's configuration, in @dir
 * @log:	the gateway's stderr, in @dir (its tail is said when it does not start)
 * @listen_fd:	the listener on 127.0.0.1 (handed to the gateway at descriptor 3), or -1
 * @port:	its port, the proxy port
 * @gw_pid:	the gateway, warden's child, or 0
 * @registered:	the run is registered with it
 * @id:		the run id
 */
struct run_proxy {
	char dir[PATH_MAX];
	char tmp[PATH_MAX];
	char ctl[PATH_MAX];
	char conf[PATH_MAX];
	char log[PATH_MAX];
	int listen_fd;
	uint16_t port;
	pid_t gw_pid;
	bool registered;
	char id[32];
};

/**
 * struct run_proxy_counts - a run's counters as its gateway lists them; -1: unknown
 * @denied:	connections refused
 * @up:		bytes sent upstream
 * @down:	bytes received
 */
struct run_proxy_counts {
	int64_t denied;
	int64_t up;
	int64_t down;
};

/**
 * run_proxy_signals() - catch SIGINT, SIGTERM, SIGHUP and SIGCHLD into a self-pipe, so that
 * every stage can see a stop asked for and the wait can take them in its poll
 * Return: 0, or a negative errno.
 */
int run_proxy_signals(void);

/**
 * run_proxy_stop_asked() - the first of SIGINT, SIGTERM, SIGHUP that reached warden, or 0
 */
int run_proxy_stop_asked(void);

/**
 * run_proxy_id() - a fresh run id: 12 lower-case hex digits from getentropy()
 * @out:	room for 13 bytes
 * Return: 0, or a negative errno.
 */
int run_proxy_id(char out[13]);

/**
 * run_proxy_begin() - the run's private folder (in $TMPDIR, else /tmp) and its loopback
 * listener on 127.0.0.1, a port the kernel picks
 * @px:		zeroed by this call, then filled in
 * @id:		the run id
 * @err:	what failed
 * Return: 0, or a negative errno (what was made is undone by run_proxy_end()).
 */
int run_proxy_begin(struct run_proxy *px, const char *id, struct wd_err *err);

/**
 * run_proxy_gateway() - the proxy-mode gateway for this run, started as warden's child: its
 * configuration is @config's (or the defaults) with `mode: proxy`, the control socket in the
 * run's folder and @audit_path as its audit log; the listener handed in at descriptor 3
 * (`--listen-fds 1`); ready when its control socket answers
 * @px:		from run_proxy_begin()
 * @gw_bin:	the warden-gateway program (proxy mode only: gateway/main_proxy.c)
 * @config:	a warden-gateway configuration file (resolvers, limits), or NULL
 * @audit_path:	the audit log the run's events go to
 * @err:	what failed (the configuration's diagnostics, the gateway's last words)
 * Return: 0, or a negative errno.
 */
int run_proxy_gateway(struct run_proxy *px, const char *gw_bin, const char *config,
		      const char *audit_path, struct wd_err *err);

/**
 * run_proxy_register() - register the run with its gateway: its id, the peer address it
 * connects from (127.0.0.1) and the policy's text, which the gateway parses and decides by
 * @px:		a started gateway
 * @policy_name: the policy's file name, for the gateway's messages
 * @text:	the policy's YAML
 * @len:	its length
 * @err:	what the gateway answered
 * Return: 0, or a negative errno.
 */
int run_proxy_register(struct run_proxy *px, const char *policy_name, const char *text, size_t len,
		       struct wd_err *err);

/**
 * run_proxy_counts() - the run's counters from its gateway (`list`)
 * @px:		the run
 * @ret:	filled in; each -1 when the gateway does not answer for the run
 */
void run_proxy_counts(struct run_proxy *px, struct run_proxy_counts *ret);

/**
 * run_proxy_end() - undo what the run holds: unregister, SIGTERM to the gateway (SIGKILL
 * after the grace), reap it, remove the run's folder and everything in it. Safe on a
 * zeroed or half-made @px and called twice.
 * @px:		the run
 */
void run_proxy_end(struct run_proxy *px);

/**
 * run_proxy_env() - the program's environment: nothing of warden's but PATH (unless the
 * policy names it), HOME and TMPDIR the run's tmp folder, the policy's env.allow values from
 * @environ and its env.set, the proxy variables (HTTP_PROXY, HTTPS_PROXY and their lower
 * case to http://127.0.0.1:PORT; ALL_PROXY, all_proxy to socks5h://127.0.0.1:PORT; NO_PROXY,
 * no_proxy empty; NODE_USE_ENV_PROXY=1), which the policy cannot override
 * @p:		the policy
 * @environ_in:	warden's environment
 * @px:		the run (port, tmp folder)
 * @ret_env:	a NULL-terminated array, freed with run_proxy_strv_free()
 * Return: 0, or -ENOMEM.
 */
int run_proxy_env(const struct wd_policy *p, char *const *environ_in, const struct run_proxy *px,
		  char ***ret_env);

/**
 * run_proxy_env_set() - NAME=VALUE in an environment of run_proxy_env(), replacing NAME's
 * earlier value
 * @env:	the array (reallocated)
 * @name:	the name
 * @value:	its value
 * Return: 0, or -ENOMEM.
 */
int run_proxy_env_set(char ***env, const char *name, const char *value);

/**
 * run_proxy_log_tail() - the last line of the gateway's log @path (its stderr), for a gateway
 * that did not start (proxyenv.c: portable)
 * @path:	the log
 * @out:	the line, "" when there is none
 * @size:	its size
 */
void run_proxy_log_tail(const char *path, char *out, size_t size);

/**
 * run_proxy_conf() - the gateway's configuration for one proxy run: @config's (or the
 * defaults) with `mode: proxy`, the one listener on 127.0.0.1:@port, the control socket @ctl
 * and the run's audit log (proxyenv.c: portable)
 * @config:	a warden-gateway configuration file, or NULL
 * @port:	the proxy port
 * @ctl:	the control socket's path
 * @audit_path:	the audit log
 * @yaml:	the configuration, appended
 * @err:	the configuration's diagnostics, or what failed
 * Return: 0, or a negative errno.
 */
int run_proxy_conf(const char *config, uint16_t port, const char *ctl, const char *audit_path,
		   struct wd_buf *yaml, struct wd_err *err);

/** run_proxy_strv_free() - free a NULL-terminated array of strings and its strings */
void run_proxy_strv_free(char **v);

/**
 * run_proxy_limits_refused() - a limit of the policy that a proxy run cannot enforce, said
 * with why (limits.cpu: a share of CPU needs a cgroup); the run is then refused, never run
 * without it
 * @l:		the policy's limits
 * Return: NULL when every limit it sets can be enforced.
 */
const char *run_proxy_limits_refused(const struct policy_limits *l);

/**
 * run_proxy_rlimits() - the policy's limits that map to setrlimit(2), set in the calling
 * process (the program's, before exec): limits.disk_mb as RLIMIT_FSIZE (the largest file),
 * limits.pids as RLIMIT_NPROC (counted per user, not per run: said in warden-policy(5))
 * @l:		the policy's limits
 * @why:	the limit that could not be set, said
 * @size:	its room
 * Return: 0, or a negative errno.
 */
int run_proxy_rlimits(const struct policy_limits *l, char *why, size_t size);

/**
 * run_proxy_describe_limits() - what run_proxy_rlimits() and the watchdog enforce, in words
 * for run.start's isolation
 * @l:		the policy's limits
 * @timeout_s:	the wall-time limit in force (0: none)
 * @out:	the text
 * @size:	its room
 */
void run_proxy_describe_limits(const struct policy_limits *l, unsigned timeout_s, char *out,
			       size_t size);

/* how often the wait samples the program group's memory when limits.memory_mb is set */
#define RUN_PROXY_MEM_SAMPLE_MS 100

/**
 * struct run_proxy_waited - how the program of run_proxy_wait() ended
 * @timed_out:	the watchdog ended it (wall time)
 * @mem_hit:	its group's memory went past the limit: it was killed (SIGKILL)
 * @mem_peak_kb: the most the group's memory was seen at, in KiB (0: not sampled)
 * @signal:	the signal it died of, or 0
 */
struct run_proxy_waited {
	bool timed_out;
	bool mem_hit;
	uint64_t mem_peak_kb;
	int signal;
};

/**
 * run_proxy_wait() - wait for @pid, the leader of its own process group: a stop signal that
 * reaches warden is passed to the group; at the wall-time limit the group gets SIGTERM, then
 * SIGKILL after RUN_KILL_GRACE_MS; with @mem_kb its memory (run_proxy_group_mem_kb()) is
 * sampled every RUN_PROXY_MEM_SAMPLE_MS, and past @mem_kb the group is killed (SIGKILL), as a
 * cgroup's OOM killer does on Linux: a burst between two samples is seen at the next one
 * @pid:	the program (its process group's id too)
 * @timeout_s:	the wall-time limit, 0 for none
 * @mem_kb:	the memory limit in KiB, 0 for none
 * @ret:	how it ended
 * Return: its exit status as warden(1) says (128+N for signal N, 124 for a timeout).
 */
int run_proxy_wait(pid_t pid, unsigned timeout_s, uint64_t mem_kb, struct run_proxy_waited *ret);

/**
 * run_proxy_group_mem_kb() - the memory every process of process group @pgid uses, summed
 * (proxymem.c: macOS's physical footprints; Linux's VmRSS, for the lab's build)
 * @pgid:	the group
 * @ret_kb:	the sum in KiB
 * Return: 0, or a negative errno (-ENOSYS where there is no way to read it).
 */
int run_proxy_group_mem_kb(pid_t pgid, uint64_t *ret_kb);

/**
 * run_proxy_find() - @name found as execvp() would (a name with a `/` as it is, else in
 * @path's folders; an empty entry is skipped), to say 127 or 126 before anything starts
 * @name:	the command
 * @path:	a PATH value, or NULL ("/usr/bin:/bin")
 * @out:	the path found
 * @size:	its room
 * Return: 0, -ENOENT (not found), -EACCES (not executable), -ENAMETOOLONG.
 */
int run_proxy_find(const char *name, const char *path, char *out, size_t size);

#endif /* WD_RUN_PROXYRUN_H */

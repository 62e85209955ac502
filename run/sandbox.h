/* run_sandbox.h - internal to launcher/: the sandbox step of a run behind one interface, so
 * that another way to confine the program (macOS Seatbelt, a container engine, Windows
 * AppContainer) is a new backend, not an edit of the stages.
 *
 * Theory of operation. The driver (run.c, through sandbox.c) drives one backend
 * through its verbs, in this order:
 *
 *   probe     prerequisites: the backend's tool is there; nothing is made
 *   network   only a backend whose sandbox brings its own network namespace that the launcher
 *             cannot enter (a container): in the network stage, the sandbox made and parked,
 *             the run's network built inside it, the gateway's sockets handed back (struct
 *             sandbox_net); the run's mode is then the container's (mode_docker.c)
 *   describe  run.start's `isolation`: what confines the program, in a few words (may come
 *             before prepare; reads only the spec's policy, allowances and seccomp flag)
 *   prepare   everything that can fail before the program may start (generated files,
 *             descriptors, the filter), and the process that will become the sandbox,
 *             parked: it may do its own slow setup (entering the run's network namespace,
 *             joining its cgroups, becoming the program's user) while the gateway starts
 *   spawn     the parked process goes on and becomes the sandbox; whether it could is
 *             known when spawn returns
 *   cancel    instead of spawn, when a later stage failed: the parked process goes away
 *   event     during the wait, when sb->event_fd is readable (the backend learns about its
 *             sandbox, e.g. the pid of its init)
 *   program   during the wait: the program's own process once it exists, as a pidfd and a
 *             /proc folder descriptor (both opened while it was the program), so that the run
 *             ends when the program does even if the sandbox's init cannot reap it
 *   signal    during the wait: forwarded signals, the timeout, the kill (enum
 *             sandbox_target); sb->pid, the process whose wait status is the run's, is the
 *             orchestrator's to wait for and to kill
 *   release   free what the backend holds; after the wait, or instead of it
 *   print     instead of all the above (`warden run --print-bwrap`): the command line the
 *             backend would run, as a shell line, with what its descriptors would carry
 *             written into files of a folder the caller gives
 *
 * A verb that fails fills a struct sandbox_err (the step a person reads, a fix, the cause):
 * the backend never prints; the orchestrator says it and records it for run.exit.
 *
 * The first backend is bubblewrap (run_sandbox_bwrap.c, with bwrap.c's command line); the
 * stages of its parked child that any Linux backend needs are run_child.c's. Which backend a
 * run uses is backend.c's choice, from its registry (name, OS, these operations).
 */
#ifndef WARDEN_LAUNCHER_RUN_SANDBOX_H
#define WARDEN_LAUNCHER_RUN_SANDBOX_H

#include "netns/netns.h"
#include "nft/nft.h"
#include "policy/policy.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct limits;

/* Which processes of a sandbox a signal is for. */
enum sandbox_target {
	SANDBOX_PROGRAM, /* the program (forwarded signals); the sandbox's process before it is
			    known */
	SANDBOX_TREE,	 /* every process inside but the sandbox's init (the timeout's SIGTERM) */
	SANDBOX_INSIDE,	 /* the sandbox's init: the kernel ends everything inside with it */
};

/**
 * struct sandbox_err - why a verb failed, as `warden run` says it
 * @step:	the step (docs/run.md's names: "prerequisites", "exec", "sandbox", "filesystem",
 *		"limits")
 * @fix:	one line of what to do, or NULL
 * @msg:	the cause
 */
struct sandbox_err {
	const char *step;
	const char *fix;
	char msg[1024];
};

/**
 * struct sandbox_spec - what the sandbox is to be, whatever makes it (every pointer must stay
 * valid until release)
 * @policy:	the validated policy: grants, masks, env, limits.disk_mb, sandbox.allow
 * @argv:	the command: argv[0] is the resolved absolute path; NULL-terminated
 * @environ:	the launcher's environment (env.allow names are copied from it)
 * @cwd:	the folder the program starts in
 * @tty:	stdin is a terminal (job control stays the caller's)
 * @host4:	the run's gateway address, IPv4, as text ("" when none): DNS, proxies
 * @host6:	the same for IPv6
 * @proxy_port:	the gateway's explicit proxy port
 * @uid:	whom the program runs as (never 0)
 * @gid:	its group
 * @groups:	its supplementary groups
 * @ngroups:	how many
 * @user:	its name for messages, or NULL
 * @netns_fd:	the run's network namespace
 * @limits:	the run's cgroups, to be joined
 * @allow:	sandbox/'s SANDBOX_ALLOW_* bits of the policy's sandbox.allow
 * @seccomp:	the seccomp filter applies (false only with WARDEN_UNSAFE_NO_SECCOMP)
 * @rootless:	a rootless run: @userns_fd, @nproc and @empty_file apply (a zeroed spec is
 *		root mode's)
 * @userns_fd:	rootless: the run's user namespace, entered before @netns_fd (the program is
 *		the caller, no user change)
 * @nproc:	rootless: RLIMIT_NPROC of the run's processes (counted in the run's user
 *		namespace), 0 for none
 * @empty_file:	the empty file bound over the /proc files a sandbox does not see (NULL:
 *		RUN_EMPTY_FILE, root's)
 * @wrap:	see struct run_child_plan
 * @wrap_bin:	see struct run_child_plan
 * @wrap_env:	see struct run_child_plan
 * @files_start: NULL, or the file-access recorder (audit.files): the backend loads its filter
 *		in the sandbox's first process and hands the listener to this, with that
 *		process's pid, before the program may start; non-zero stops the run
 * @files_arg:	passed to @files_start
 * @learn:	`warden trace`'s learning sandbox: the host visible read-only (struct bwrap_spec
 *		.learn), the policy's write grants (the current folder) writable over it
 * @premask:	see struct run_child_plan (the learning sandbox's socket masks), or NULL
 * @npremask:	how many
 * @run_id:	the run's id (names what the backend makes for the run)
 * @state_dir:	the run's state folder (the backend's files may go below it)
 */
struct sandbox_spec {
	const struct wd_policy *policy;
	char *const *argv;
	char *const *environ;
	const char *cwd;
	bool tty;
	const char *host4;
	const char *host6;
	uint16_t proxy_port;
	uid_t uid;
	gid_t gid;
	const gid_t *groups;
	int ngroups;
	const char *user;
	int netns_fd;
	const struct limits *limits;
	unsigned allow;
	bool seccomp;
	bool rootless;
	int userns_fd;
	uint64_t nproc;
	const char *empty_file;
	char *const *wrap;
	const char *wrap_bin;
	char *const *wrap_env;
	int (*files_start)(void *arg, int listener, pid_t outer);
	void *files_arg;
	bool learn;
	char *const *premask;
	size_t npremask;
	const char *run_id;
	const char *state_dir;
};

/**
 * struct sandbox_net - a run's network built inside the sandbox (the verb network)
 * @fc:		in: the run's own table (FW_MODE_RUN)
 * @addr:	in: the run's addresses
 * @listen:	out: the gateway's listening sockets (nft/inside.c's order)
 * @nflog:	out: the NFLOG socket of the table's group
 * @probe:	out: the liveness probe's UDP socket, bound to the program's IPv4 address
 * @udp:	out: the UDP relay's listeners and conntrack socket (nft/inside.c's order), when
 *		@fc.port_udp is not 0; else -1
 */
struct sandbox_net {
	struct fw_config fc;
	struct netns_addrs addr;
	int listen[FW_RUN_NLISTEN];
	int nflog;
	int probe;
	int udp[FW_RUN_NUDP];
};

/**
 * struct sandbox - one run's sandbox
 * @be:		its backend
 * @spec:	what it is (set by prepare)
 * @pid:	the process whose wait status is the run's: parked after prepare, the sandbox
 *		after spawn; 0 when there is none
 * @event_fd:	a descriptor the wait polls for the backend, or -1
 * @priv:	the backend's own state
 */
struct sandbox {
	const struct sandbox_backend *be;
	const struct sandbox_spec *spec;
	pid_t pid;
	int event_fd;
	void *priv;
};

/* A sandbox that @backend will make; nothing is held yet. */
#define SANDBOX_INIT(backend) ((struct sandbox){.be = (backend), .pid = 0, .event_fd = -1})

/**
 * struct sandbox_backend - one way to make a sandbox (the theory of operation above)
 * @name:	a word for messages ("bwrap")
 * @probe:	its tool is there. Return: 0, or a negative errno with @e filled
 * @describe:	its part of run.start's `isolation` for @s, in @out (@size bytes)
 * @network:	NULL, or the run's network built inside the sandbox, which it makes and
 *		parks (sb->pid). Return: 0 with @n's descriptors filled, or a negative errno
 *		with @e filled (what it made stays for release)
 * @prepare:	everything before the program may start; the process parked (sb->pid).
 *		Return: 0, or a negative errno with @e filled (nothing is left behind)
 * @spawn:	let the parked process become the sandbox. Return: 0 when it did; a negative
 *		errno with @e filled when it could not (its process is reaped, sb->pid is 0)
 * @cancel:	the parked process goes away (reaped); harmless when there is none
 * @event:	sb->event_fd is readable. Return: true when it need not be polled any more
 * @program:	the program's process, once there: a pidfd in *@ret_pidfd and its /proc
 *		folder (O_DIRECTORY) in *@ret_procfd, the folder checked to be the pidfd's
 *		process and the program. Return: 0, -EAGAIN (not there yet: ask again later), or
 *		another negative errno (it cannot be known: do not ask again)
 * @signal:	send @sig to @to of the sandbox (nothing when that part is not known)
 * @release:	free sb->priv and close what it holds; harmless twice
 * @print:	the command line prepare and spawn would run for @s, as one shell line in
 *		@out, its descriptors' contents written into files in folder @dir. Return: 0,
 *		or a negative errno with @e filled
 */
struct sandbox_backend {
	const char *name;
	int (*probe)(struct sandbox *sb, struct sandbox_err *e);
	void (*describe)(const struct sandbox_spec *s, char *out, size_t size);
	int (*network)(struct sandbox *sb, const struct sandbox_spec *s, struct sandbox_net *n,
		       struct sandbox_err *e);
	int (*prepare)(struct sandbox *sb, const struct sandbox_spec *s, struct sandbox_err *e);
	int (*spawn)(struct sandbox *sb, struct sandbox_err *e);
	void (*cancel)(struct sandbox *sb);
	bool (*event)(struct sandbox *sb);
	int (*program)(struct sandbox *sb, int *ret_pidfd, int *ret_procfd);
	void (*signal)(struct sandbox *sb, enum sandbox_target to, int sig);
	void (*release)(struct sandbox *sb);
	int (*print)(struct sandbox *sb, const struct sandbox_spec *s, const char *dir,
		     struct wd_buf *out, struct sandbox_err *e);
};

/* bubblewrap (run_sandbox_bwrap.c): $WARDEN_BWRAP, default /usr/bin/bwrap. */
extern const struct sandbox_backend sandbox_backend_bwrap;

/* Docker (sandbox_docker.c): $WARDEN_DOCKER, default `docker` on PATH. */
extern const struct sandbox_backend sandbox_backend_docker;

/**
 * sandbox_bwrap_info_pid() - the "child-pid" of bwrap's --info-fd JSON (pure)
 * @text:	what was read so far, NUL-terminated (bwrap writes it in pieces)
 * @ret_pid:	on success, the pid of the sandbox's init (in the caller's pid namespace)
 *
 * Return: true when @text holds the pid.
 */
bool sandbox_bwrap_info_pid(const char *text, pid_t *ret_pid);

#endif /* WARDEN_LAUNCHER_RUN_SANDBOX_H */

/* run_child.h - internal to launcher/: the parked child of a Linux sandbox backend, the process
 * that becomes the sandbox (bubblewrap today).
 *
 * Theory of operation. run_child_fork() forks early, so that the child's slow stages overlap
 * the parent's (the gateway's start and checks). The child, in named stages:
 *
 *   netns     enters the run's network namespace (rootless: its user namespace first, and
 *             then drops the capabilities it holds there)
 *   cgroup    joins the run's cgroups
 *   user      becomes the program's user (never root): groups, gid, uid
 *   keyring   joins a session keyring of its own (the caller's keys stay the caller's)
 *   (user)    PR_SET_PDEATHSIG=SIGKILL after the uid change, which clears it
 *   backend   the backend's hook opens what the binary needs as that user and says what to
 *             exec with which descriptors (its own stages, RUN_CHILD_BACKEND and up)
 *   fds       every descriptor but those closed (whatever the caller of `warden run` left
 *             open stays out); the kept ones lose FD_CLOEXEC
 *   limit     RLIMIT_FSIZE (limits.disk_mb)
 *   files     with a recorder (audit.files): no_new_privs, the file-access filter loaded with
 *             a listener (sandbox_notify_bpf()), the listener sent to the parent and closed:
 *             no process of the sandbox ever holds it (run_files.h)
 *   exec      on the parent's word ("go" pipe; EOF means "do not run") the binary
 *
 * A stage that fails writes a struct run_child_report on a CLOEXEC pipe and exits; a
 * successful exec closes that pipe, so EOF tells the parent it worked.
 */
#ifndef WARDEN_LAUNCHER_RUN_CHILD_H
#define WARDEN_LAUNCHER_RUN_CHILD_H

#include "run/sandbox.h"

#include <linux/filter.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Where the child failed (struct run_child_report.stage). */
enum run_child_stage {
	RUN_CHILD_NETNS,
	RUN_CHILD_CGROUP,
	RUN_CHILD_USER,
	RUN_CHILD_KEYRING,
	RUN_CHILD_FDS,
	RUN_CHILD_LIMIT,
	RUN_CHILD_EXEC,
	RUN_CHILD_FILES,
	RUN_CHILD_MASK,
	RUN_CHILD_BACKEND = 16, /* the backend's hook's own stages start here */
};

/**
 * struct run_child_report - what the child writes on its error pipe when it cannot exec
 * @err:	positive errno
 * @stage:	enum run_child_stage, or a backend's own stage
 * @index:	which item of the stage (a grant), or -1
 */
struct run_child_report {
	int err;
	int stage;
	int index;
};

/**
 * struct run_child_exec - what the child execs, filled in by the backend's hook
 * @argv:	argv[0] is the binary's absolute path; NULL-terminated
 * @envp:	its environment
 * @keep:	descriptors it inherits (-1 entries are skipped)
 * @nkeep:	how many
 */
struct run_child_exec {
	char **argv;
	char *const *envp;
	const int *keep;
	size_t nkeep;
};

/**
 * struct run_child_plan - what the child does before the backend's hook
 * @netns_fd:	the run's network namespace
 * @userns_fd:	rootless: the run's user namespace, entered first; then the child keeps the
 *		caller's ids (@uid etc. are not applied) and drops the capabilities it holds
 *		there; -1 in root mode
 * @nproc:	RLIMIT_NPROC, 0 for none (rootless: the run's user namespace counts)
 * @limits:	the run's cgroups
 * @uid:	the program's user (never 0)
 * @gid:	its group
 * @groups:	its supplementary groups
 * @ngroups:	how many
 * @fsize:	RLIMIT_FSIZE in bytes, 0 for none
 * @wrap:	NULL, or a command line that runs the backend's (a systemd user scope: its
 *		options up to "--" and what it runs ahead of the backend's argv); NULL-terminated
 * @wrap_bin:	the binary @wrap execs (an absolute path)
 * @wrap_env:	@wrap's environment (the backend's own is then @wrap's to give)
 * @prepare_exec: in the child, as the program's user: fill @x, or fill @rep (stage
 *		RUN_CHILD_BACKEND and up, positive errno) and return non-zero. It may allocate
 *		(the child execs or exits)
 * @arg:	passed to @prepare_exec
 * @notify:	NULL, or the file-access recorder's filter (loaded last, before the exec; its
 *		listener comes back through run_child_listener())
 * @notify_len:	its number of instructions
 * @premask:	paths of unix sockets (absolute, no symbolic link) the child covers with
 *		/dev/null in a mount namespace of its own, while it still may, before anything
 *		else; the backend's view of the host then shows them covered. One that is no
 *		longer a socket there (removed, replaced) is skipped: what the run was to be
 *		kept from is gone. NULL for none
 * @npremask:	how many
 */
struct run_child_plan {
	int netns_fd;
	int userns_fd;
	uint64_t nproc;
	const struct limits *limits;
	uid_t uid;
	gid_t gid;
	const gid_t *groups;
	int ngroups;
	uint64_t fsize;
	char *const *wrap;
	const char *wrap_bin;
	char *const *wrap_env;
	int (*prepare_exec)(void *arg, struct run_child_exec *x, struct run_child_report *rep);
	void *arg;
	const struct sock_filter *notify;
	size_t notify_len;
	char *const *premask;
	size_t npremask;
};

/**
 * struct run_child - the parent's handle on a parked child
 * @pid:	the child, 0 when none
 * @err_fd:	the read end of its error pipe, or -1
 * @go_fd:	the write end of its "go" pipe, or -1
 * @notify_fd:	the parent's end of the socket the recorder's listener comes over, or -1
 */
struct run_child {
	pid_t pid;
	int err_fd;
	int go_fd;
	int notify_fd;
};

#define RUN_CHILD_INIT ((struct run_child){.pid = 0, .err_fd = -1, .go_fd = -1, .notify_fd = -1})

/**
 * run_child_fork() - fork the parked child of @p
 * @c:		filled in
 * @p:		what it does (must stay valid until the fork: the child has its own copy)
 * @e:		"exec" step: the pipe or fork that failed
 *
 * Return: 0, or a negative errno (nothing was started).
 */
int run_child_fork(struct run_child *c, const struct run_child_plan *p, struct sandbox_err *e);

/**
 * run_child_go() - let the child exec and learn whether it could
 * @c:		the child; on failure it is reaped and @c->pid is 0
 * @ret:	on failure, what the child reported
 *
 * Return: 0 when it exec'd; -ECHILD when it did not (@ret says where and why).
 */
int run_child_go(struct run_child *c, struct run_child_report *ret);

/**
 * run_child_listener() - the file-access recorder's listener, which the parked child sends
 * once it has loaded the filter (before "go": it waits for that word afterwards)
 * @c:		the child, forked with a &run_child_plan.notify
 * @ret_fd:	on success the descriptor (CLOEXEC), the caller's to supervise
 *
 * Return: 0; -ECHILD when the child ended without sending one (it failed a stage: its report
 * is for run_child_go()); -EBADF without a recorder; another negative errno.
 */
int run_child_listener(struct run_child *c, int *ret_fd);

/** run_child_cancel() - the child will not run: close its pipes (it exits) and reap it. */
void run_child_cancel(struct run_child *c);

/**
 * run_child_grant_denied() - a backend's error (pure but for $SUDO_UID) for a grant whose file the
 * program may not use, with the fix for whom it runs as: a user's run (@sp->rootless: rootless,
 * daemon mode) and root's through sudo run it as the person who started warden, so sudo would
 * change nothing; root's direct run has it as the sandbox user, and sudo would make it the person
 * @sp:		the run's spec (uid, user, rootless)
 * @path:	the grant
 * @rw:		a write grant (else a read grant)
 * @err:	the errno of the access check
 * @e:		set: step "filesystem", the message, the fix (a static string)
 */
void run_child_grant_denied(const struct sandbox_spec *sp, const char *path, bool rw, int err,
			    struct sandbox_err *e);

/**
 * run_child_explain() - the report of a generic stage as `warden run` says it (pure)
 * @rep:	the report
 * @what:	the backend's name ("bwrap")
 * @binary:	the binary the child was to exec
 * @uid:	the program's user
 * @user:	its name, or NULL
 * @e:		filled in
 *
 * Return: false when the stage is the backend's (RUN_CHILD_BACKEND and up): it explains it.
 */
bool run_child_explain(const struct run_child_report *rep, const char *what, const char *binary,
		       uid_t uid, const char *user, struct sandbox_err *e);

/**
 * run_child_memfd() - a memfd holding @len bytes of @data, at offset 0
 * @name:	the memfd's name (/proc/PID/fd shows it)
 * @data:	the bytes, or NULL when @len is 0
 * @len:	how many
 *
 * Return: the descriptor (CLOEXEC), or a negative errno.
 */
int run_child_memfd(const char *name, const void *data, size_t len);

#endif /* WARDEN_LAUNCHER_RUN_CHILD_H */

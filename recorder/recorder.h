/* recorder.h - the recorder/ module (libwd_recorder, what run/ calls): the file-access
 * recorder of a run, the supervisor of the sandbox's seccomp notification descriptor
 * (docs/files.md).
 *
 * Theory of operation. The sandbox's child loads sandbox/'s notify filter with a listener
 * just before it execs bubblewrap and hands the listener to the launcher (run_child.c); from
 * then on every watched path call of every process of the run stops until the recorder
 * answers. recorder_start() forks the recorder, a process of its own that holds the program's
 * identity and nothing of root's:
 *
 *   become    in root mode the program's user, whole: real, effective, saved and file system
 *             uid and gid, its supplementary groups (not only the file system ids: FUSE
 *             without allow_other, capabilities and security modules look at the others); in
 *             every mode no capability (bounding set, ambient, capset), no_new_privs, not
 *             dumpable (another process of that user must not ptrace it), every descriptor
 *             closed but the listener and its results' pipe, PR_SET_PDEATHSIG. What it reads
 *             of the program (/proc/PID/root, cwd, fd, memory) it may read as that user: the
 *             sandbox's user namespace is the user's own (bwrap made it as the user)
 *   receive   SECCOMP_IOCTL_NOTIF_RECV: pid, call, arguments
 *   skip      bubblewrap's own process and the sandbox's pid 1 (its setup, then the reaper):
 *             not the program
 *   read      the path from the caller's memory (process_vm_readv), the caller's current or
 *             descriptor folder for a relative one (/proc/PID/cwd, /proc/PID/fd/N); then
 *             SECCOMP_IOCTL_NOTIF_ID_VALID: the caller is still in that call, so what was read
 *             was its (its other threads may change the memory: a HINT, never a grant)
 *   answer    SECCOMP_USER_NOTIF_FLAG_CONTINUE: the kernel runs the call as it would have,
 *             under every other filter; the recorder never answers for the kernel
 *   judge     after the answer. In denied mode first: is the path's folder in the sandbox the
 *             host's own folder (same device and inode, remembered per folder) and the path
 *             no mask? Then the name resolves alike on both sides and nothing can be out of
 *             reach: done, no system call. Else the path inside the sandbox (openat2
 *             RESOLVE_IN_ROOT from the sandbox's root) and on the host; there on the host but
 *             not inside (or only as a mask) is a denied attempt
 *   count     one entry per (operation, path) with a count, bounded
 *   report    recorder_stop() wakes it with a signal; it closes the listener and sends its
 *             entries and counts to the launcher over a pipe (fixed-size records, each
 *             checked; anything malformed, or a recorder that died first, and the launcher
 *             keeps nothing: recorder_lost()); the events are written when the run ends
 *             (run_audit_files()), one per entry
 *
 * Trace mode (POLICY_FILES_TRACE, warden trace; docs/files.md "Trace mode") does not answer
 * CONTINUE and read: the trace filter's calls are carried out by the recorder on its own copy
 * of the path, inside the caller's view (opens here, handed in with SECCOMP_IOCTL_NOTIF_ADDFD;
 * the rest by recorder_emulate(), emul.h), exec is read from /proc/PID/exe afterwards,
 * and what is recorded is what was done (enum trace_op), so a program cannot forge its trace.
 *
 * If the recorder stops (the launcher dies), the kernel answers every waiting and later
 * watched call with ENOSYS: the program fails closed, it never hangs, and the launcher's death
 * kills the sandbox anyway (PR_SET_PDEATHSIG).
 */
#ifndef WARDEN_RECORDER_H
#define WARDEN_RECORDER_H

#include "trace/file.h"
#include "policy/policy.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Entries a run keeps: past it, accesses are only counted (recorder_dropped()); trace mode
 * keeps as many as all */
#define RECORDER_MAX_DENIED 4096
#define RECORDER_MAX_ALL 65536
/* ... and bytes of their paths */
#define RECORDER_MAX_BYTES (8u << 20)
/* The supplementary groups recorder_set_user() keeps. */
#define RECORDER_MAX_GROUPS 64

/**
 * enum recorder_verdict - what one access was, by what the sandbox and the host show
 * @RECORDER_GRANTED:	the sandbox shows the path (a grant, the runtime base, its own /tmp)
 * @RECORDER_DENIED:	the host has it and the sandbox does not, or shows only a mask
 * @RECORDER_MISSING:	neither has it (a program probing for a file that is nowhere)
 * @RECORDER_IGNORED:	not a host path (the sandbox's own /proc and /dev, an empty path, a
 *			descriptor that is no folder), or unreadable
 */
enum recorder_verdict {
	RECORDER_GRANTED,
	RECORDER_DENIED,
	RECORDER_MISSING,
	RECORDER_IGNORED,
};

/**
 * struct recorder_entry - one (operation, path) of a run
 * @path:	the absolute path, as the program named it (after joining a relative one); in
 *		trace mode the path the recorder itself used
 * @op:		enum sandbox_op; in trace mode enum trace_op (launcher/trace_file.h), or
 *		RECORDER_REFUSED_CONNECT for a unix socket's connect the recorder refused
 * @verdict:	RECORDER_GRANTED or RECORDER_DENIED; in trace mode RECORDER_GRANTED,
 *		RECORDER_MISSING for TRACE_MISSING, RECORDER_DENIED for a refused connect
 * @count:	how many times
 * @pid:	the first process that made it (the launcher's pid namespace)
 * @comm:	that process's name
 */
struct recorder_entry {
	char *path;
	int op;
	enum recorder_verdict verdict;
	uint64_t count;
	pid_t pid;
	char comm[16];
};

/* Trace mode: the op of a refused connect's entry (its own entry, never counted with a
 * connect that was done). */
#define RECORDER_REFUSED_CONNECT (TRACE_OP_N + TRACE_CONNECT)

struct recorder;

/**
 * recorder_new() - an empty recorder (nothing runs yet)
 * @mode:	POLICY_FILES_DENIED, POLICY_FILES_ALL or POLICY_FILES_TRACE (warden trace: the
 *		recorder carries the calls out itself, entries are enum trace_op)
 * @mask:	the policy's masks (struct wd_policy.mask: absolute real paths), copied
 * @nmask:	how many
 * @ret:	on success, the recorder (recorder_free())
 *
 * Return: 0, -EINVAL for another @mode, or -ENOMEM.
 */
int recorder_new(enum policy_audit_files mode, char *const *mask, size_t nmask,
		 struct recorder **ret);

/**
 * recorder_start() - supervise @listener in a process of its own (the theory above): forked
 * from the caller, it takes the identity recorder_set_user() gave (none given: the caller's
 * uid, without capabilities)
 * @rf:		the recorder
 * @listener:	the seccomp notification descriptor; the recorder's process owns it from now
 *		on, the caller's copy is closed (also on failure)
 * @outer:	bubblewrap's process (its calls and its pid 1's are not the program's)
 *
 * Return: 0, or a negative errno (the process could not start: the caller must not let the
 * program run). A recorder that cannot take its identity exits at once: its listener closes
 * and the program's watched calls fail with ENOSYS.
 */
int recorder_start(struct recorder *rf, int listener, pid_t outer);

/**
 * recorder_set_user() - root mode: the recorder's process becomes the program's user when it
 * starts (all of its uids and gids, its groups): trace mode carries calls out, so what it
 * creates is the user's and it may do only what the user may; the host lookups of denied and
 * all are the user's view. Rootless and daemon mode: not called (the launcher is the user).
 * @rf:		the recorder (not started)
 * @uid:	the program's user
 * @gid:	its group
 * @groups:	its supplementary groups, copied (at most 64)
 * @ngroups:	how many
 *
 * Return: 0, or -EINVAL (too many groups).
 */
int recorder_set_user(struct recorder *rf, uid_t uid, gid_t gid, const gid_t *groups, int ngroups);

/**
 * recorder_allow_sockets() - trace mode: the unix sockets the person named (`warden trace
 * --allow-socket`), which the program may connect to; every other unix socket by path but
 * the sandbox's own /tmp's is refused and recorded so (docs/files.md)
 * @rf:		the recorder, not started
 * @paths:	absolute paths without symbolic links, copied
 * @n:		how many
 *
 * Return: 0, -ENOMEM.
 */
int recorder_allow_sockets(struct recorder *rf, char *const *paths, size_t n);

/**
 * recorder_stop() - end the supervision (the program has ended): wake the recorder's process,
 * take its results (checked), reap it
 * @rf:		the recorder; may be NULL. The entries stay for recorder_get().
 */
void recorder_stop(struct recorder *rf);

/** recorder_free() - stop and free @rf (may be NULL). */
void recorder_free(struct recorder *rf);

/**
 * recorder_record() - count one access (the recorder's, and the unit tests')
 * @rf:		the recorder
 * @op:		enum sandbox_op
 * @path:	absolute path
 * @verdict:	what it was; only those the mode records are kept (denied: DENIED; all: GRANTED
 *		and DENIED; trace: GRANTED and MISSING)
 * @pid:	the process
 * @comm:	its name, or NULL
 *
 * Return: 1 for a new entry, 0 when counted in an entry or dropped (the table is full), or
 * -ENOMEM.
 */
int recorder_record(struct recorder *rf, int op, const char *path, enum recorder_verdict verdict,
		    pid_t pid, const char *comm);

/**
 * recorder_count() - how many entries @rf holds
 * @rf:		the recorder; may be NULL (0)
 */
size_t recorder_count(const struct recorder *rf);

/**
 * recorder_get() - entry @i, in the order they were first seen
 * @rf:		the recorder (stopped)
 * @i:		below recorder_count()
 */
const struct recorder_entry *recorder_get(const struct recorder *rf, size_t i);

/**
 * recorder_dropped() - accesses not kept because the table was full, and how many were seen
 * @rf:		the recorder
 * @ret_seen:	every notification received; may be NULL
 *
 * Return: the number dropped.
 */
uint64_t recorder_dropped(const struct recorder *rf, uint64_t *ret_seen);

/**
 * recorder_lost() - the recorder's process died, or sent its results malformed: the run's
 * entries and counts are not known (none are kept), and run_audit_files() says so
 * @rf:		the recorder (stopped); may be NULL (false)
 */
bool recorder_lost(const struct recorder *rf);

/**
 * recorder_unreadable() - calls whose path the kernel did not let the recorder read (EPERM:
 * kernel.yama.ptrace_scope 2 or 3, or a program that made itself undumpable): their attempts
 * are missing from the events, and run_audit_files() says how many
 * @rf:		the recorder
 */
uint64_t recorder_unreadable(const struct recorder *rf);

/**
 * recorder_join() - @rel made absolute against @base, "." and ".." and doubled slashes
 * folded lexically (pure)
 * @base:	an absolute folder (used when @rel is relative)
 * @rel:	the path the program gave
 * @out:	the result
 * @size:	its size
 *
 * Return: 0, -EINVAL when @base is not absolute and @rel is relative or @rel is empty,
 * -ENAMETOOLONG.
 */
int recorder_join(const char *base, const char *rel, char *out, size_t size);

/**
 * recorder_sandbox_own() - @path lies in a filesystem the sandbox makes for itself and the
 * host's files are not behind it (/proc, /dev) (pure)
 * @path:	absolute, folded
 */
bool recorder_sandbox_own(const char *path);

/**
 * recorder_in_base() - @path lies in a folder of the sandbox's runtime base (sandbox_base_dirs:
 * /usr, /bin, /lib..., /etc/ssl...): denied mode records nothing there, since the base is
 * Warden's and not the policy's to grant (pure)
 * @path:	absolute, folded
 */
bool recorder_in_base(const char *path);

#endif /* WARDEN_RECORDER_H */

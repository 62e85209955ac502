/* internal.h - internal to recorder/: the recorder's state (struct recorder) and what its files
 * call of each other. Each file uses only those listed before it, never one after it (no
 * circle: `nm -A libwd_recorder.a` shows each file's undefined recorder_ names):
 *
 *   path.c      pure: a path joined and folded, the sandbox's own file systems, the base
 *   caller.c    what the recorder reads of a calling process (memory, name, pidfd, context)
 *   view.c      a caller's path as the sandbox names it, opened inside the sandbox's root
 *   table.c     the entries of a run, counted and bounded
 *   connect.c   trace mode's connect
 *   emul.c      trace mode's other path calls (the table of calls)
 *   open.c      trace mode's opens
 *   judge.c     audit.files denied and all: one notification judged
 *   trace.c     trace mode: one notification carried out
 *   wire.c      the pipe of records to the launcher
 *   process.c   the recorder's process: identity, the notify loop, the results sent
 *   recorder.c  the launcher's API (recorder.h)
 */
#ifndef WARDEN_RECORDER_INTERNAL_H
#define WARDEN_RECORDER_INTERNAL_H

#include "recorder/recorder.h"
#include "recorder/emul.h"
#include "common/common.h"
#include "trace/file.h"

#include <errno.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The recorder's process's name (PR_SET_NAME, at most 15 bytes): ps and
 * tests/integration/recorder_caps.sh find it by it. */
#define RECORDER_COMM "warden-recorder"

/* The signal recorder_stop() interrupts the recorder's blocking receive with. */
#define RECORDER_WAKE SIGUSR2

/* The recorder's process's exit statuses: it could not become the user (or start), it could
 * not send its results. */
#define RECORDER_EXIT_SETUP 125
#define RECORDER_EXIT_SEND 126

/* Folders whose sandbox view is (or is not) the host's, remembered per run. */
#define RECORDER_DIR_CACHE_MAX 4096

/* Trace mode: processes whose exec is read from /proc/PID/exe at their next call. */
#define RECORDER_EXEC_PENDING_MAX 64

/* What trace mode cannot carry out exactly as the kernel would: answer CONTINUE, record
 * nothing (a value no negative errno and no success takes). */
#define RECORDER_SKIP 1

struct recorder {
	enum policy_audit_files mode;
	size_t max;
	/* entries in first-seen order; slots index them (+1, 0 = empty) */
	struct recorder_entry *ent;
	size_t nent;
	uint32_t *slot;
	size_t nslot;
	uint64_t dropped;
	uint64_t seen;
	size_t bytes; /* of the kept paths */
	uint64_t unreadable;
	/* the supervision */
	int listener; /* the launcher's until recorder_start(), then the recorder's alone */
	pid_t outer;
	pid_t reaper;
	int root_fd; /* the sandbox's root, from the first process of the program */
	/* folder path -> 1: the sandbox shows the host's folder itself (same device and inode),
	 * so a name in it resolves alike on both sides; 2: it does not (absent, a mask, the
	 * sandbox's own); slots of RECORDER_DIR_CACHE_MAX * 2 */
	char **dir_path;
	uint8_t *dir_same;
	size_t ndir;
	/* the policy's masks (a file under /dev/null sits in a folder that is the host's) */
	char **mask;
	size_t nmask;
	/* the recorder's process (recorder_start()) and its results' pipe; lost: what it sent
	 * was malformed, or it died before its end */
	pid_t pid;
	int res_fd;
	bool running;
	bool lost;
	/* root mode: the identity the recorder's process takes (recorder_set_user()) */
	bool as_user;
	uid_t uid;
	gid_t gid;
	gid_t groups[RECORDER_MAX_GROUPS];
	int ngroups;
	/* trace mode: the unix sockets the person named (recorder_allow_sockets()) */
	char **sockets;
	size_t nsockets;
	/* trace mode: pids (and their thread group leaders) that called execve/execveat */
	pid_t exec_pending[RECORDER_EXEC_PENDING_MAX];
	size_t nexec;
	struct recorder_emul_out emul_out; /* 8 KiB: not on the stack */
};

/**
 * struct recorder_call - who calls and where its paths start, for one trace-mode call
 * @c:		the context recorder_emulate() takes (root, cwd, umask, pidfd)
 * @cwd:	the storage of @c.cwd
 */
struct recorder_call {
	struct recorder_emul_ctx c;
	char cwd[PATH_MAX];
};

/**
 * struct recorder_epath - one path of a call, read and resolved
 * @raw:	the caller's bytes, once
 * @base:	the folder a relative @raw starts from ("" for an absolute one)
 * @abs:	absolute, folded (the caller's out->path or out->path2)
 * @name:	the last component, in @abs; NULL when the call is about @abs as a whole ("/",
 *		or a last component "." or "..")
 * @must_dir:	a trailing slash, or "." or ".." last: the kernel wants a folder there
 * @dotdot:	a ".." component: the lexical fold must reach what the kernel's walk reaches
 */
struct recorder_epath {
	char raw[PATH_MAX];
	char base[PATH_MAX];
	char *abs;
	const char *name;
	bool must_dir;
	bool dotdot;
};

/* ------------------------------------------------------------ caller.c */

/**
 * recorder_write_caller() - write @n bytes at @p to @addr in @pid (a result buffer)
 * @pid:	the caller
 * @addr:	its buffer
 * @p:		the bytes
 * @n:		how many
 *
 * Return: 0, or -EFAULT (the kernel's answer for a bad buffer).
 */
int recorder_write_caller(pid_t pid, uint64_t addr, const void *p, size_t n);

/**
 * recorder_caller_comm() - the process's name (best effort: "" when it is gone)
 * @pid:	the process
 * @out:	its name
 * @size:	@out's size (16)
 */
void recorder_caller_comm(pid_t pid, char *out, size_t size);

/**
 * recorder_is_program() - @pid is the program's: not bubblewrap's own process, not the
 * sandbox's pid 1 (found once, by its innermost pid, and remembered in @rf)
 * @rf:		the recorder
 * @pid:	the caller
 */
bool recorder_is_program(struct recorder *rf, pid_t pid);

/**
 * recorder_call_open() - the context of one call of @pid: its root (O_PATH), its current
 * folder, its umask when the call creates, a pidfd of it when the call needs one (connect
 * takes the caller's socket). Opened BEFORE the caller's SECCOMP_IOCTL_NOTIF_ID_VALID check:
 * a pid reused by then is caught by that check, while anything opened by pid after it could
 * be another process's.
 * @pid:	the caller
 * @umask_needed: read its umask (/proc/PID/status)
 * @pidfd:	open a pidfd of it
 * @x:		filled in; recorder_call_close() it
 *
 * Return: 0, or a negative errno (nothing left open).
 */
int recorder_call_open(pid_t pid, bool umask_needed, bool pidfd, struct recorder_call *x);

/** recorder_call_close() - close what recorder_call_open() opened. */
void recorder_call_close(struct recorder_call *x);

/* ------------------------------------------------------------ view.c */

/**
 * recorder_openat2() - openat2(2) of @path below @dirfd, without magic links, O_CLOEXEC
 * @dirfd:	the folder (a caller's root with RESOLVE_IN_ROOT)
 * @path:	its leading slashes dropped ("/" is @dirfd itself)
 * @flags:	open flags
 * @mode:	the mode of a file made
 * @resolve:	RESOLVE_* flags
 *
 * Return: the descriptor, or -1 with errno set.
 */
int recorder_openat2(int dirfd, const char *path, uint64_t flags, uint64_t mode, uint64_t resolve);

/**
 * recorder_open_path() - open what @ep names inside the caller's root: its parent folder
 * (@parent) or the whole path, following a link at its end (O_DIRECTORY when the kernel wants
 * a folder). With a ".." in the path, the caller's own walk (the path unfolded) must reach
 * the same file, or fail alike.
 * @c:		the caller
 * @ep:		the path (recorder_prep())
 * @parent:	open its folder
 * @ret_fd:	on success, an O_PATH descriptor
 *
 * Return: 0, a negative errno for the caller, or RECORDER_SKIP.
 */
int recorder_open_path(const struct recorder_emul_ctx *c, const struct recorder_epath *ep,
		       bool parent, int *ret_fd);

/**
 * recorder_prep_str() - @ep->raw (already read) resolved into @abs and taken apart
 * @c:		the caller
 * @dirfd:	its folder for a relative path (AT_FDCWD or its descriptor)
 * @ep:		the path
 * @abs:	PATH_MAX bytes for the absolute, folded path
 *
 * Return: 0, -ENOENT for an empty path (the kernel's answer), or RECORDER_SKIP.
 */
int recorder_prep_str(const struct recorder_emul_ctx *c, int dirfd, struct recorder_epath *ep,
		      char *abs);

/**
 * recorder_prep() - read the path at @addr of the caller and recorder_prep_str() it
 * @c:		the caller
 * @dirfd:	its folder for a relative path
 * @addr:	the path's address in the caller
 * @ep:		the path
 * @abs:	PATH_MAX bytes
 *
 * Return: as recorder_prep_str(); RECORDER_SKIP for an unreadable path.
 */
int recorder_prep(const struct recorder_emul_ctx *c, int dirfd, uint64_t addr,
		  struct recorder_epath *ep, char *abs);

/* ------------------------------------------------------------ table.c */

/**
 * recorder_keeps() - the verdicts @mode keeps: denied DENIED; all GRANTED and DENIED; trace
 * GRANTED, MISSING and DENIED (what the recorder did, a path it looked for that was not
 * there, a unix socket it refused)
 * @mode:	the recorder's mode
 * @v:		a verdict
 */
bool recorder_keeps(enum policy_audit_files mode, enum recorder_verdict v);

/**
 * recorder_trace_note() - one trace entry: enum trace_op @op (-1: none) on @path, done (or
 * @refused: a unix socket's connect the recorder refused: its own entry,
 * RECORDER_REFUSED_CONNECT); the process's name read only for a new entry
 * @rf:		the recorder
 * @op:		enum trace_op, or -1
 * @path:	absolute (the sandbox's own /proc and /dev are not recorded)
 * @refused:	a refused connect
 * @pid:	the caller
 */
void recorder_trace_note(struct recorder *rf, int op, const char *path, bool refused, pid_t pid);

/** recorder_forget() - drop every entry (a recorder whose results are lost). */
void recorder_forget(struct recorder *rf);

/* ------------------------------------------------------------ connect.c, emul.c */

/**
 * recorder_emul_connect() - connect(2) of the caller carried out (connect.c)
 * @c:		the caller (its pidfd opened)
 * @args:	the call's arguments
 * @out:	what was done
 *
 * Return: 1 (always handled: the kernel never runs a connect of the program again).
 */
int recorder_emul_connect(const struct recorder_emul_ctx *c, const uint64_t args[6],
			  struct recorder_emul_out *out);

/* @out answered with @ret; on success @op recorded for the first path. */
static inline int emul_answer(struct recorder_emul_out *out, long ret, int op)
{
	out->ret = ret;
	out->op = ret >= 0 ? op : -1;
	return 1;
}

/* @out answered with @ret; a look (stat, access, readlink) records what it found. */
static inline int emul_answer_look(struct recorder_emul_out *out, long ret)
{
	out->ret = ret;
	out->op = ret >= 0 ? TRACE_STAT : ret == -ENOENT ? TRACE_MISSING : -1;
	return 1;
}

/* ------------------------------------------------------------ open.c, judge.c, trace.c */

/**
 * recorder_trace_open() - trace mode: an open carried out by the recorder on its own copy of
 * the path, inside the caller's view, with its umask and the recorder's identity (the
 * user's); the descriptor handed in (SECCOMP_ADDFD_FLAG_SEND answers the call with it)
 * @rf:		the recorder
 * @req:	the notification
 * @resp:	the answer, sent here when the call was carried out
 *
 * Return: 1 answered, 0 answer CONTINUE (nothing recorded).
 */
int recorder_trace_open(struct recorder *rf, const struct seccomp_notif *req,
			struct seccomp_notif_resp *resp);

/**
 * recorder_handle_files() - audit.files denied or all: one notification read, answered
 * CONTINUE and judged (judge.c)
 * @rf:		the recorder
 * @req:	the notification
 * @resp:	the answer's storage
 */
void recorder_handle_files(struct recorder *rf, const struct seccomp_notif *req,
			   struct seccomp_notif_resp *resp);

/**
 * recorder_handle_trace() - trace mode: one notification carried out or let through, and
 * recorded (trace.c)
 * @rf:		the recorder
 * @req:	the notification
 * @resp:	the answer's storage
 */
void recorder_handle_trace(struct recorder *rf, const struct seccomp_notif *req,
			   struct seccomp_notif_resp *resp);

/* ------------------------------------------------------------ wire.c, process.c */

/**
 * recorder_wire_send() - in the recorder's process: every entry, then the end, to @fd
 * @rf:		the recorder
 * @fd:		the pipe's write end
 *
 * Return: 0, or -EIO.
 */
int recorder_wire_send(const struct recorder *rf, int fd);

/**
 * recorder_wire_recv() - in the launcher: the recorder's results from @fd into @rf, checked
 * @rf:		the recorder (no entries yet)
 * @fd:		the pipe's read end
 *
 * Return: 0, -EPROTO (malformed, or no end: the recorder died), or -ENOMEM.
 */
int recorder_wire_recv(struct recorder *rf, int fd);

/**
 * recorder_process_main() - the recorder's process, in the child recorder_start() forked: its
 * name, the identity (the program's user whole, no capability, not dumpable), then one
 * blocking receive per notification until recorder_stop()'s signal, then the results to the
 * launcher over @wfd. Never returns.
 * @rf:		the recorder (the child's copy)
 * @parent:	the launcher's pid (the recorder dies with it)
 * @wfd:	the results' pipe
 */
_Noreturn void recorder_process_main(struct recorder *rf, pid_t parent, int wfd);

#endif /* WARDEN_RECORDER_INTERNAL_H */

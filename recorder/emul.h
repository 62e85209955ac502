/* emul.h - recorder/: the trace recorder carries out a path call itself.
 *
 * Why. `warden trace` turns what it records into grants (warden init), so what it records must
 * be what the program reached, not what the program's memory said at one instant: another
 * thread of the program can change a path between the recorder's read and the kernel's own copy
 * (docs/files.md, "Trust"). In trace mode the recorder therefore does not answer CONTINUE: it
 * reads the path once into its own buffer, carries the call out itself on that copy, inside the
 * sandbox's view (openat2 RESOLVE_IN_ROOT from the caller's root, /proc/PID/root), and answers
 * the caller with the result (a value, an errno, or for opens a descriptor handed in with
 * SECCOMP_IOCTL_NOTIF_ADDFD). What it records is the path it used and what the call did.
 *
 * Opens (open, openat, openat2, creat) are open.c's own (they need the listener for
 * ADDFD). Everything else on a path is recorder_emulate()'s: stat, lstat, newfstatat, statx,
 * access, faccessat, faccessat2, readlink, readlinkat, mkdir, mkdirat, unlink, unlinkat, rmdir,
 * rename, renameat, renameat2, link, linkat, symlink, symlinkat, truncate, chmod, fchmodat,
 * connect (every one: a unix socket by path only when the person named it or it is the
 * sandbox's own, docs/files.md "Unix sockets in a trace").
 *
 * Failing closed. A call recorder_emulate() cannot carry out exactly as the kernel would for the
 * caller (a path in the sandbox's own /proc or /dev, a magic link on the way, an argument it
 * cannot read, a call it does not know) is not handled: the recorder answers CONTINUE and
 * records nothing, so the policy made from the trace lacks it and the later run is denied,
 * never granted more.
 *
 * The recorder's thread has its own file system context (unshare(CLONE_FS)) and the sandbox
 * user's file system ids (setfsuid/setfsgid), set once when it starts; recorder_emulate() sets the
 * caller's umask in it before a call that creates.
 */
#ifndef WARDEN_RECORDER_EMUL_H
#define WARDEN_RECORDER_EMUL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/**
 * struct recorder_emul_ctx - who is calling and where its paths start
 * @pid:	the caller (the launcher's pid namespace: seccomp_notif.pid)
 * @root:	O_PATH|O_DIRECTORY descriptor of the caller's root (/proc/PID/root), held by the
 *		recorder for this call
 * @cwd:	the caller's current folder as the sandbox names it (readlink /proc/PID/cwd),
 *		absolute
 * @umask:	the caller's umask (/proc/PID/status)
 * @pidfd:	a pidfd of the calling thread (recorder_caller_pidfd()), opened before its
 *		notification was checked valid (connect; -1 for the other calls)
 * @sockets:	the unix sockets the person named (`warden trace --allow-socket`), absolute
 *		paths without symbolic links, as the sandbox names them
 * @nsockets:	how many
 */
struct recorder_emul_ctx {
	pid_t pid;
	int pidfd;
	int root;
	const char *cwd;
	mode_t umask;
	char *const *sockets;
	size_t nsockets;
};

/**
 * struct recorder_emul_out - what recorder_emulate() did
 * @ret:	the answer for the caller: >= 0 the call's value, or -errno
 * @op:		enum trace_op recorded for @path, or -1: nothing recorded
 * @path:	absolute, folded: the path the recorder itself used (as the sandbox names it)
 * @op2:	enum trace_op for @path2 (rename, link, symlink: the second path), or -1
 * @path2:	the second path
 * @refused:	@op (TRACE_CONNECT) was refused, not done: a unix socket the person did not
 *		name (the learning sandbox reaches no host service)
 */
struct recorder_emul_out {
	long ret;
	int op;
	char path[PATH_MAX];
	int op2;
	char path2[PATH_MAX];
	bool refused;
};

/**
 * recorder_emulate() - carry out system call @nr of @c->pid on its arguments, inside its view
 * @c:		the caller
 * @nr:		the x86_64 system call number (seccomp_data.nr)
 * @args:	its six arguments (seccomp_data.args)
 * @out:	filled in when handled
 *
 * Return: 1 handled (answer the caller with @out->ret and record @out's paths), 0 not handled
 * (answer CONTINUE, record nothing), or a negative errno (the recorder's own failure, e.g.
 * -ENOMEM: answer CONTINUE, record nothing, count it). connect is always handled (1): the
 * kernel never runs a connect of the program again, where it would read the address anew.
 */
int recorder_emulate(const struct recorder_emul_ctx *c, int nr, const uint64_t args[6],
		     struct recorder_emul_out *out);

/**
 * recorder_read_string() - copy the NUL-terminated string at @addr of process @pid into @buf
 * @pid:	the process
 * @addr:	its address in that process
 * @buf:	where to
 * @size:	its size (PATH_MAX for a path)
 *
 * Return: its length, -EFAULT (unreadable), -ENAMETOOLONG (no NUL within @size), or the
 * negative errno of process_vm_readv (EPERM: not allowed to read that process).
 */
int recorder_read_string(pid_t pid, uint64_t addr, char *buf, size_t size);

/**
 * recorder_resolve() - the absolute, folded path a (dirfd, path) pair of @c->pid names
 * @c:		the caller
 * @dirfd:	AT_FDCWD or one of its descriptors (named by readlink /proc/PID/fd/N)
 * @path:	the path it gave (relative or absolute)
 * @out:	the result, PATH_MAX bytes
 *
 * Return: 0, -ENOENT for an empty @path, -EBADF for a @dirfd that names no folder the sandbox
 * has a path for (a socket, a pipe, an anonymous inode), -ENAMETOOLONG.
 */
int recorder_resolve(const struct recorder_emul_ctx *c, int dirfd, const char *path,
		     char out[PATH_MAX]);

/**
 * recorder_caller_pidfd() - a pidfd of the thread @tid (PIDFD_THREAD, Linux 6.9), else of its
 * thread group's leader: the descriptor table a connect's socket is taken from
 * @tid:	the calling thread, as the notification names it
 *
 * Return: the pidfd (O_CLOEXEC), or -1 with errno set.
 */
int recorder_caller_pidfd(pid_t tid);

#endif /* WARDEN_RECORDER_EMUL_H */

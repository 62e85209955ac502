/* sandbox.h - the sandbox module: the seccomp filter every process of a run gets (a table of
 * refused system calls, built into a BPF program with libseccomp and handed to bubblewrap's
 * `--seccomp FD`), its readable text, and a small BPF interpreter that runs the program the
 * way the kernel does (to check it without loading it); and the same table as the seccomp
 * profile (JSON) of the Docker backend.
 *
 * The filter is a deny list: everything is allowed except the calls in sandbox_rules[], which
 * return the errno of their row without reaching the kernel; a call of another ABI (i386
 * through `int $0x80`, x32 numbers on x86_64) is refused with EPERM whatever it is.
 * docs/seccomp.md explains every row and the choices around it.
 */
#ifndef WARDEN_SANDBOX_H
#define WARDEN_SANDBOX_H

#include "common/common.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/**
 * enum sandbox_allow - what a policy may loosen on purpose (sandbox.allow, warden-policy(5))
 * @SANDBOX_ALLOW_USERNS: nested namespaces: clone/unshare with namespace flags, setns, mount,
 *			  umount2, pivot_root and the new mount API are not refused, and bwrap
 *			  gets no --disable-userns (for programs that bring their own sandbox)
 */
enum sandbox_allow {
	SANDBOX_ALLOW_USERNS = 1u << 0,
};

/* Every bit of enum sandbox_allow. */
#define SANDBOX_ALLOW_ALL (SANDBOX_ALLOW_USERNS)

/**
 * enum sandbox_cond_kind - when a rule refuses its system call
 * @SANDBOX_ALWAYS:	every call
 * @SANDBOX_LOW32_EQ:	the low 32 bits of the argument equal @value (an ioctl request: the
 *			kernel reads 32 bits, so the upper ones must not change the verdict)
 * @SANDBOX_ANY_BIT:	the argument has any bit of @value set (one libseccomp rule per bit)
 * @SANDBOX_NOT_IN:	the argument (all 64 bits) is none of @set, whose values are below 64
 *			(one rule per value in between, one for everything above)
 * @SANDBOX_PERSONA:	the argument is neither a combination of the bits in @value nor the
 *			query 0xffffffff (personality(2))
 */
enum sandbox_cond_kind {
	SANDBOX_ALWAYS,
	SANDBOX_LOW32_EQ,
	SANDBOX_ANY_BIT,
	SANDBOX_NOT_IN,
	SANDBOX_PERSONA,
};

/**
 * struct sandbox_cond - the argument condition of a rule
 * @kind:	which test
 * @arg:	argument index (0..5)
 * @arg_name:	the argument's name in the system call's man page, for the text
 * @value:	LOW32_EQ: the value; ANY_BIT: the bits; PERSONA: the allowed bits
 * @set:	NOT_IN: the allowed values, ascending, each below 64
 * @nset:	NOT_IN: number of @set
 * @names:	symbolic names of @value or @set, for the text ("TIOCSTI", "AF_UNIX, ...")
 */
struct sandbox_cond {
	enum sandbox_cond_kind kind;
	unsigned arg;
	const char *arg_name;
	uint64_t value;
	const uint64_t *set;
	size_t nset;
	const char *names;
};

/**
 * struct sandbox_rule - one refused system call (a row of the table)
 * @syscall:	its name, as libseccomp knows it
 * @nr_x86_64:	its x86_64 number, used when this libseccomp does not know the name (0: none;
 *		a name nobody knows then fails the build: the filter is never built short)
 * @cond:	when it is refused
 * @err:	the errno it returns instead (EPERM, ENOSYS, EAFNOSUPPORT)
 * @loosened_by: the enum sandbox_allow bits that drop the row (0: none can)
 * @why:	why it is refused, one sentence
 */
struct sandbox_rule {
	const char *syscall;
	int nr_x86_64;
	struct sandbox_cond cond;
	int err;
	unsigned loosened_by;
	const char *why;
};

/* The table (rules.c), in the order docs/seccomp.md explains it. */
extern const struct sandbox_rule sandbox_rules[];
extern const size_t sandbox_nrules;

/**
 * sandbox_allow_name() - the policy's word for one enum sandbox_allow bit
 * @bit:	a single bit
 *
 * Return: "userns", or NULL for anything else.
 */
const char *sandbox_allow_name(unsigned bit);

/**
 * sandbox_allow_text() - the set bits of @allow as "userns,..." ("none" when 0)
 * @allow:	enum sandbox_allow bits
 * @out:	buffer
 * @size:	its size
 */
void sandbox_allow_text(unsigned allow, char *out, size_t size);

/**
 * sandbox_seccomp_fd() - build the filter for @allow and export it into a memfd
 * @allow:	enum sandbox_allow bits (rules they loosen are left out)
 * @ret_fd:	on success a memfd (O_CLOEXEC, offset 0) holding the BPF program, as bwrap's
 *		`--seccomp FD` reads it; the caller closes it
 * @ret_insns:	on success the number of BPF instructions; may be NULL
 * @err:	what failed (the rule, libseccomp's error)
 *
 * Return: 0, -EINVAL for unknown @allow bits or a rule this libseccomp cannot express, -ENOMEM,
 * or another negative errno from libseccomp or memfd_create().
 */
int sandbox_seccomp_fd(unsigned allow, int *ret_fd, size_t *ret_insns, struct wd_err *err);

/**
 * sandbox_seccomp_bpf() - the same program in memory
 * @allow:	as for sandbox_seccomp_fd()
 * @ret_prog:	on success the instructions (free() them)
 * @ret_len:	on success their number
 * @err:	what failed
 *
 * Return: 0, or a negative errno as for sandbox_seccomp_fd().
 */
int sandbox_seccomp_bpf(unsigned allow, struct sock_filter **ret_prog, size_t *ret_len,
			struct wd_err *err);

/**
 * sandbox_bpf_run() - run a seccomp BPF program on one call, as the kernel would
 * @prog:	the instructions
 * @len:	their number (at most BPF_MAXINSNS)
 * @d:		the call: number, arch, arguments
 * @ret_action:	on success the value the program returned (SECCOMP_RET_ALLOW,
 *		SECCOMP_RET_ERRNO | errno, ...)
 * @ret_steps:	on success the number of instructions executed; may be NULL
 *
 * Pure. Only the instructions the kernel's seccomp checker accepts are run.
 *
 * Return: 0, or -EINVAL for a malformed program (an unknown instruction, a jump or a load out
 * of bounds, no return reached).
 */
int sandbox_bpf_run(const struct sock_filter *prog, size_t len, const struct seccomp_data *d,
		    uint32_t *ret_action, size_t *ret_steps);

/**
 * sandbox_rule_text() - the condition of @r as a person reads it ("always",
 * "request & 0xffffffff == 0x5412 (TIOCSTI)")
 * @r:		the rule
 * @out:	buffer to append to
 *
 * Return: 0, or -ENOMEM.
 */
int sandbox_rule_text(const struct sandbox_rule *r, struct wd_buf *out);

/**
 * sandbox_describe() - the filter for @allow as a table (syscall, condition, returns, why),
 * followed by the rules @allow left out, the foreign ABIs and bwrap's second layer
 * @allow:	enum sandbox_allow bits
 * @out:	buffer to append to
 *
 * Pure (the number of BPF instructions is not part of it).
 *
 * Return: 0, or -ENOMEM.
 */
int sandbox_describe(unsigned allow, struct wd_buf *out);

/* ------------------------------------------------------------ the Docker backend's profile */

/**
 * sandbox_seccomp_docker_render() - @rules as a Docker seccomp profile (seccomp_docker.c)
 * @rules:	a table in sandbox_rules[]'s form
 * @nrules:	its number of rows
 * @allow:	enum sandbox_allow bits (rows they loosen are left out)
 * @out:	buffer the JSON text is appended to (one object, then a newline)
 * @err:	what failed (the row)
 *
 * The profile allows by default and refuses each row's call with its errno, one `syscalls[]`
 * entry per comparison of the row's condition (the libseccomp rules of the bwrap filter);
 * `archMap` lists x86_64 and aarch64 without subarchitectures (other ABIs: runc's bad-arch
 * action). In moby 20.10's format; docs/seccomp.md, "The Docker backend's profile".
 *
 * Return: 0, -EINVAL for unknown @allow bits, a row it cannot express or no row left,
 * -ERANGE for a value above 2^63, -ENOMEM.
 */
int sandbox_seccomp_docker_render(const struct sandbox_rule *rules, size_t nrules, unsigned allow,
				  struct wd_buf *out, struct wd_err *err);

/**
 * sandbox_seccomp_docker_json() - sandbox_rules[] as a Docker seccomp profile, for
 * `docker run --security-opt seccomp=FILE`
 * @allow:	enum sandbox_allow bits
 * @out:	buffer the JSON text is appended to
 * @err:	what failed
 *
 * Return: as sandbox_seccomp_docker_render().
 */
int sandbox_seccomp_docker_json(unsigned allow, struct wd_buf *out, struct wd_err *err);

/* ------------------------------------------------------------ the file-access recorder */

/**
 * enum sandbox_op - what a watched call does to its path (the `op` of a `file` event)
 * @SANDBOX_OP_OPEN:	an open whose flags are not known yet (openat2: they are in memory)
 * @SANDBOX_OP_READ:	an open for reading
 * @SANDBOX_OP_WRITE:	an open for writing (or truncating)
 * @SANDBOX_OP_CREATE:	an open with O_CREAT, creat()
 * @SANDBOX_OP_EXEC:	execve, execveat
 * @SANDBOX_OP_STAT:	stat, lstat, newfstatat, statx with a path
 * @SANDBOX_OP_ACCESS:	access, faccessat, faccessat2
 * @SANDBOX_OP_READLINK: readlink, readlinkat
 * @SANDBOX_OP_REMOVE:	unlink, unlinkat, rmdir (the trace filter's)
 * @SANDBOX_OP_RENAME:	rename, renameat, renameat2 (the trace filter's)
 * @SANDBOX_OP_CONNECT:	connect (the trace filter's; a unix socket by path)
 *
 * The trace filter's mkdir, link, symlink are SANDBOX_OP_CREATE, truncate and chmod
 * SANDBOX_OP_WRITE.
 */
enum sandbox_op {
	SANDBOX_OP_OPEN,
	SANDBOX_OP_READ,
	SANDBOX_OP_WRITE,
	SANDBOX_OP_CREATE,
	SANDBOX_OP_EXEC,
	SANDBOX_OP_STAT,
	SANDBOX_OP_ACCESS,
	SANDBOX_OP_READLINK,
	SANDBOX_OP_REMOVE,
	SANDBOX_OP_RENAME,
	SANDBOX_OP_CONNECT,
};

/**
 * struct sandbox_watch - one system call the recorder is told about (a row of its table)
 * @syscall:	its name, as libseccomp knows it
 * @nr_x86_64:	its x86_64 number (used when libseccomp does not know the name, and to find
 *		the row of a notification)
 * @path_arg:	the argument that points to the path
 * @dirfd_arg:	the argument holding the directory descriptor a relative path starts from, or
 *		-1 (the current directory)
 * @flags_arg:	the argument with open(2) flags (open, openat) or the AT_ flags (newfstatat,
 *		statx), or -1
 * @op:		what it does
 * @skip_empty_path: calls with AT_EMPTY_PATH in @flags_arg are not watched (fstat through
 *		newfstatat/statx on a descriptor)
 */
struct sandbox_watch {
	const char *syscall;
	int nr_x86_64;
	int path_arg;
	int dirfd_arg;
	int flags_arg;
	enum sandbox_op op;
	bool skip_empty_path;
};

/* The recorder's table (notify.c). */
extern const struct sandbox_watch sandbox_watched[];
extern const size_t sandbox_nwatched;
/* What the trace filter watches besides (notify.c): mkdir, mkdirat, unlink, unlinkat, rmdir,
 * rename, renameat, renameat2, link, linkat, symlink, symlinkat, truncate, chmod, fchmodat,
 * connect (@path_arg of connect is its struct sockaddr, of symlink/symlinkat the new link). */
extern const struct sandbox_watch sandbox_watched_trace[];
extern const size_t sandbox_nwatched_trace;

/**
 * sandbox_watch_find() - the row of a system call number
 * @nr:	x86_64 number (struct seccomp_notif's data.nr)
 *
 * Return: the row, or NULL when the call is not watched.
 */
const struct sandbox_watch *sandbox_watch_find(int nr);

/**
 * sandbox_watch_find_trace() - the row of a system call number in the trace filter's tables
 * (sandbox_watched, then sandbox_watched_trace)
 * @nr:	x86_64 number
 *
 * Return: the row, or NULL when the trace filter does not watch the call.
 */
const struct sandbox_watch *sandbox_watch_find_trace(int nr);

/**
 * sandbox_watch_follows() - does the call follow a symbolic link at the end of its path (pure)
 * @w:		its row
 * @args:	its six arguments (struct seccomp_data.args)
 *
 * Return: false for lstat, readlink and the calls whose flags say O_NOFOLLOW or
 * AT_SYMLINK_NOFOLLOW (openat2's are in memory: the caller reads them), else true.
 */
bool sandbox_watch_follows(const struct sandbox_watch *w, const uint64_t *args);

/**
 * sandbox_notify_bpf() - the recorder's filter: every watched call returns
 * SECCOMP_RET_USER_NOTIF, everything else (other ABIs too) SECCOMP_RET_ALLOW
 * @ret_prog:	on success the instructions (free() them); loaded with
 *		SECCOMP_FILTER_FLAG_NEW_LISTENER it gives the supervisor's descriptor
 * @ret_len:	on success their number
 * @err:	what failed
 *
 * It only adds a stop: stacked with the refusing filter, the kernel's strictest verdict wins,
 * so nothing that filter refuses gets through.
 *
 * Return: 0, or a negative errno from libseccomp or memfd_create(), -ENOMEM, -EIO.
 */
int sandbox_notify_bpf(struct sock_filter **ret_prog, size_t *ret_len, struct wd_err *err);

/**
 * sandbox_notify_bpf_trace() - warden trace's filter: sandbox_notify_bpf()'s calls (the same
 * AT_EMPTY_PATH forms left out) and those of sandbox_watched_trace return
 * SECCOMP_RET_USER_NOTIF, everything else SECCOMP_RET_ALLOW
 * @ret_prog:	on success the instructions (free() them)
 * @ret_len:	on success their number
 * @err:	what failed
 *
 * Return: as sandbox_notify_bpf().
 */
int sandbox_notify_bpf_trace(struct sock_filter **ret_prog, size_t *ret_len, struct wd_err *err);

/**
 * sandbox_op_name() - the word of @op in a `file` event ("read", "exec", ...)
 * @op:	the operation
 *
 * Return: a static string ("?" out of range).
 */
const char *sandbox_op_name(enum sandbox_op op);

/**
 * sandbox_open_op() - what an open with @flags does (pure)
 * @flags:	open(2) flags
 *
 * Return: SANDBOX_OP_CREATE with O_CREAT, SANDBOX_OP_WRITE for write access or O_TRUNC, else
 * SANDBOX_OP_READ.
 */
enum sandbox_op sandbox_open_op(uint64_t flags);

/* ------------------------------------------------------------ the runtime base (base.c) */

/* The host folders every sandbox sees read-only, whatever its policy (NULL-terminated): the
 * runtime base is Warden's, not the policy's to grant (docs/files.md). run/bwrap.c binds
 * them, the recorder (recorder/) records nothing there in denied mode, warden init leaves them
 * out of a policy. */
extern const char *const sandbox_base_dirs[];

#endif /* WARDEN_SANDBOX_H */

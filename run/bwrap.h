/* bwrap.h - internal to launcher/: the pieces of the bubblewrap sandbox backend
 * (run_sandbox_bwrap.c): the command line (bwrap.c, pure), the generated /etc files, and /etc
 * in one read-only mount (run_etc.c).
 */
#ifndef WARDEN_LAUNCHER_BWRAP_H
#define WARDEN_LAUNCHER_BWRAP_H

#include "common/common.h"
#include "policy/policy.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ------------------------------------------------------------ bubblewrap (bwrap.c) */

/* Generated files bound into the sandbox: resolv.conf, hosts, passwd, group, boot_id. */
#define BWRAP_NDATA 5

/**
 * struct bwrap_grant - one filesystem grant in mount order (see bwrap_grants())
 * @path:	the real path (points into the policy)
 * @rw:		a write grant
 */
struct bwrap_grant {
	const char *path;
	bool rw;
};

/**
 * bwrap_grants() - the policy's grants in the order they are mounted (shortest path first,
 * so a nested grant covers its parent's; a total order)
 * @p:		the validated policy
 * @ret:	on success, the list (free()); never NULL
 * @ret_n:	its length
 *
 * Return: 0, or -ENOMEM.
 */
int bwrap_grants(const struct wd_policy *p, struct bwrap_grant **ret, size_t *ret_n);

/**
 * struct bwrap_spec - what the sandbox is made of
 * @policy:	the validated policy (grants, masks, env)
 * @argv:	the command: argv[0] is the resolved absolute path; NULL-terminated
 * @environ:	the launcher's environment (env.allow names are copied from it)
 * @host4:	the run's host-side IPv4 address as text ("" when none): resolv.conf, proxies
 * @host6:	the run's host-side IPv6 address as text ("" when none)
 * @proxy_port:	the gateway's explicit proxy port
 * @new_session: add --new-session (stdin is not a terminal)
 * @info_fd:	fd bwrap writes its child pid to (-1: none)
 * @data_fd:	fds of the generated files: [0] resolv.conf, [1] hosts, [2] passwd, [3] group,
 *		[4] /proc/sys/kernel/random/boot_id (-1: not generated)
 * @grants:	bwrap_grants() of @policy, or NULL (then computed here)
 * @ngrants:	length of @grants
 * @grant_fd:	NULL: grants are bound by path; else an O_PATH descriptor for each of @grants
 *		(opened without following links), bound with --bind-fd / --ro-bind-fd
 * @cwd:	working folder inside the sandbox
 * @empty_file:	an empty read-only regular file (RUN_EMPTY_FILE) bound over the masked
 *		/proc files; NULL: those files are not masked
 * @etc_base:	NULL, or a folder to mount read-only as /etc instead of binding each of
 *		bwrap_base_etc (run_etc_base() makes it); only when no grant or mask lies
 *		under /etc (bwrap cannot make mount points in a read-only folder)
 * @seccomp_fd:	fd of the seccomp BPF program (sandbox_seccomp_fd()) for `--seccomp`, or -1
 *		(none: only WARDEN_UNSAFE_NO_SECCOMP, for measurements). Independently,
 *		--disable-userns --assert-userns-disabled are added unless the policy's
 *		sandbox.allow has `userns`.
 * @learn:	`warden trace`'s learning sandbox instead of the runtime base: the host's `/`
 *		read-only (its /tmp too), with the sandbox's own /dev, /proc, a scratch
 *		BWRAP_LEARN_SCRATCH (TMPDIR, and HOME unless the policy sets it) and an empty
 *		read-only /sys,
 *		the policy's write grants (the current folder) bound writable over it, the
 *		generated /etc files, and the masks last (bwrap_learn_own lists the host folders
 *		of /run that are covered with an empty tmpfs too); @etc_base is not used
 */
struct bwrap_spec {
	const struct wd_policy *policy;
	char *const *argv;
	char *const *environ;
	const char *host4;
	const char *host6;
	uint16_t proxy_port;
	bool new_session;
	int info_fd;
	int data_fd[BWRAP_NDATA];
	const struct bwrap_grant *grants;
	size_t ngrants;
	const int *grant_fd;
	const char *cwd;
	const char *empty_file;
	const char *etc_base;
	int seccomp_fd;
	bool learn;
};

/* The name the proxy variables give the gateway; the run's /etc/hosts maps it to the run's
 * own gateway addresses, v4 and v6. */
#define BWRAP_PROXY_NAME "warden-proxy"

/**
 * struct bwrap_argv - a growable NULL-terminated argv whose strings it owns
 * @v:	the strings, v[n] == NULL
 * @n:	number of strings
 * @cap: allocated entries
 * @opts_end: index of the "--" that ends bwrap's options (0: not built yet)
 */
struct bwrap_argv {
	char **v;
	size_t n;
	size_t cap;
	size_t opts_end;
};

/**
 * bwrap_build() - the bubblewrap command line for @s (pure: reads only the paths' types)
 * @bwrap:	the bwrap binary (argv[0])
 * @s:		the sandbox
 * @out:	zeroed on entry; filled with the argv (free with bwrap_argv_free())
 *
 * Return: 0, or -ENOMEM.
 */
int bwrap_build(const char *bwrap, const struct bwrap_spec *s, struct bwrap_argv *out);

/** bwrap_argv_free() - release @a and zero it; @a may be NULL. */
void bwrap_argv_free(struct bwrap_argv *a);

/**
 * bwrap_args_text() - bwrap's options of @a (v[1] up to the "--"), each NUL-terminated, for
 * `bwrap --args FD -- COMMAND...`: the options stay out of every /proc/PID/cmdline
 * @a:		a built argv
 * @out:	buffer to append to
 *
 * Return: 0, -EINVAL when @a was not built by bwrap_build(), or -ENOMEM.
 */
int bwrap_args_text(const struct bwrap_argv *a, struct wd_buf *out);

/**
 * bwrap_shell_word() - @s as one word of a POSIX shell command line: as it is when it holds
 * only characters no shell treats specially, else in single quotes (a quote inside as '\'')
 * @s:		the word
 * @out:	buffer to append to
 *
 * Return: 0, or -ENOMEM.
 */
int bwrap_shell_word(const char *s, struct wd_buf *out);

/**
 * bwrap_file_text() - the text of a generated file
 * @which:	0 resolv.conf, 1 hosts, 2 passwd, 3 group, 4 boot_id (random)
 * @s:		the sandbox (addresses)
 * @uid:	uid the program runs as (passwd, group)
 * @gid:	its gid
 * @out:	buffer to append to
 *
 * Return: 0, -EINVAL for an unknown @which, -EIO (no randomness), or -ENOMEM.
 */
int bwrap_file_text(int which, const struct bwrap_spec *s, uid_t uid, gid_t gid,
		    struct wd_buf *out);

/* The runtime base every sandbox sees read-only: the folders are sandbox_base_dirs
 * (sandbox/base.c), these the single /etc files. */
extern const char *const bwrap_base_etc[];
/* The host folders a learning sandbox (bwrap_spec.learn) covers with an empty tmpfs: the
 * sockets of the user's and the system's service managers and buses live there, through which
 * a program could have something started outside the sandbox. */
extern const char *const bwrap_learn_own[];
/* A learning sandbox's scratch folder: the host's /tmp is shown read-only there (a program or
 * its current folder under /tmp is traced), so the program's own writable tmpfs, the /tmp of
 * every run, sits here, with TMPDIR (and HOME, unless the policy sets them) pointing to it.
 * It lies in the sandbox's own /dev: nothing there is ever recorded or granted. */
#define BWRAP_LEARN_SCRATCH "/dev/shm"

/* ------------------------------------------------------------ /etc in one mount (run_etc.c) */

/* The folder of copies of bwrap_base_etc that sandboxes see as /etc. */
#define RUN_ETC_DIR "/run/warden/etc"

/**
 * run_etc_base() - bring @dir up to date: a copy of each existing bwrap_base_etc file (same
 * content, mode 0644, the host file's size and mtime, so a changed host file is seen and
 * copied again; a file gone from the host is removed), and empty mount points for the /etc
 * folders of sandbox_base_dirs and the generated files. Stale copies are replaced atomically
 * (rename) under a lock, so concurrent runs see either version, never a torn one.
 * @dir:	the folder (RUN_ETC_DIR); created 0755; must be root's, not a symlink; its
 *		parent, root's and not writable by others, is made searchable by all (bwrap
 *		binds the folder as the invoking user under sudo)
 *
 * Return: 0, or a negative errno (the caller then binds the host's files one by one).
 */
int run_etc_base(const char *dir);

/* An empty read-only file bound over the /proc files that sandboxes do not see. */
#define RUN_EMPTY_FILE "/run/warden/empty"

/**
 * run_empty_file() - make sure @path exists as an empty regular file of root's that nobody
 * may write (0444), in a folder the sandbox user can search
 * @path:	the file (RUN_EMPTY_FILE)
 *
 * Return: 0, or a negative errno (-EPERM: something else is there).
 */
int run_empty_file(const char *path);

/**
 * run_empty_file_owned() - run_empty_file() for a file of @owner's (a rootless run's, in the
 * caller's own folder: owned by the caller, mode 0444, empty)
 * Return: 0, or a negative errno (-EPERM: what is there is not such a file).
 */
int run_empty_file_owned(const char *path, uid_t owner);

/**
 * run_etc_usable() - whether /etc may be one read-only mount for @p: no grant or mask at or
 * under /etc
 */
bool run_etc_usable(const struct wd_policy *p);

#endif /* WARDEN_LAUNCHER_BWRAP_H */

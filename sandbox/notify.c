/* notify.c - the file-access recorder's seccomp filter: the path system calls a run makes go
 * to a supervisor (SECCOMP_RET_USER_NOTIF), which records them and lets each one continue
 * unchanged. It is stacked under the refusing filter of seccomp.c, never in its place: the
 * kernel runs every filter of a process and takes the strictest verdict, so a call that
 * filter refuses stays refused (ERRNO outranks USER_NOTIF) and nothing is loosened.
 * docs/files.md explains the choice. */
#include "sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* clang-format off */
const struct sandbox_watch sandbox_watched[] = {
	/* name          nr   path dirfd flags op                         */
	{"open",           2, 0, -1,  1, SANDBOX_OP_OPEN,     false},
	{"creat",         85, 0, -1, -1, SANDBOX_OP_CREATE,   false},
	{"openat",       257, 1,  0,  2, SANDBOX_OP_OPEN,     false},
	{"openat2",      437, 1,  0, -1, SANDBOX_OP_OPEN,     false},
	{"execve",        59, 0, -1, -1, SANDBOX_OP_EXEC,     false},
	{"execveat",     322, 1,  0, -1, SANDBOX_OP_EXEC,     false},
	{"stat",           4, 0, -1, -1, SANDBOX_OP_STAT,     false},
	{"lstat",          6, 0, -1, -1, SANDBOX_OP_STAT,     false},
	{"newfstatat",   262, 1,  0,  3, SANDBOX_OP_STAT,     true},
	{"statx",        332, 1,  0,  2, SANDBOX_OP_STAT,     true},
	{"access",        21, 0, -1, -1, SANDBOX_OP_ACCESS,   false},
	{"faccessat",    269, 1,  0, -1, SANDBOX_OP_ACCESS,   false},
	{"faccessat2",   439, 1,  0, -1, SANDBOX_OP_ACCESS,   false},
	{"readlink",      89, 0, -1, -1, SANDBOX_OP_READLINK, false},
	{"readlinkat",   267, 1,  0, -1, SANDBOX_OP_READLINK, false},
};
/* clang-format on */
const size_t sandbox_nwatched = WD_ARRAY_SIZE(sandbox_watched);

/* warden trace's filter watches these too: the recorder carries them out itself (connect: every
 * one; the recorder handles a unix socket by path and answers the rest CONTINUE) */
/* clang-format off */
const struct sandbox_watch sandbox_watched_trace[] = {
	/* name          nr   path dirfd flags op                         */
	{"mkdir",         83, 0, -1, -1, SANDBOX_OP_CREATE,   false},
	{"mkdirat",      258, 1,  0, -1, SANDBOX_OP_CREATE,   false},
	{"unlink",        87, 0, -1, -1, SANDBOX_OP_REMOVE,   false},
	{"unlinkat",     263, 1,  0,  2, SANDBOX_OP_REMOVE,   false},
	{"rmdir",         84, 0, -1, -1, SANDBOX_OP_REMOVE,   false},
	{"rename",        82, 0, -1, -1, SANDBOX_OP_RENAME,   false},
	{"renameat",     264, 1,  0, -1, SANDBOX_OP_RENAME,   false},
	{"renameat2",    316, 1,  0,  4, SANDBOX_OP_RENAME,   false},
	{"link",          86, 0, -1, -1, SANDBOX_OP_CREATE,   false},
	{"linkat",       265, 1,  0,  4, SANDBOX_OP_CREATE,   false},
	{"symlink",       88, 1, -1, -1, SANDBOX_OP_CREATE,   false},
	{"symlinkat",    266, 2,  1, -1, SANDBOX_OP_CREATE,   false},
	{"truncate",      76, 0, -1, -1, SANDBOX_OP_WRITE,    false},
	{"chmod",         90, 0, -1, -1, SANDBOX_OP_WRITE,    false},
	{"fchmodat",     268, 1,  0, -1, SANDBOX_OP_WRITE,    false},
	{"connect",       42, 1, -1, -1, SANDBOX_OP_CONNECT,  false},
};
/* clang-format on */
const size_t sandbox_nwatched_trace = WD_ARRAY_SIZE(sandbox_watched_trace);

const struct sandbox_watch *sandbox_watch_find(int nr)
{
	for (size_t i = 0; i < sandbox_nwatched; i++)
		if (sandbox_watched[i].nr_x86_64 == nr)
			return &sandbox_watched[i];
	return NULL;
}

const struct sandbox_watch *sandbox_watch_find_trace(int nr)
{
	const struct sandbox_watch *w = sandbox_watch_find(nr);

	for (size_t i = 0; !w && i < sandbox_nwatched_trace; i++)
		if (sandbox_watched_trace[i].nr_x86_64 == nr)
			w = &sandbox_watched_trace[i];
	return w;
}

static int resolve(const struct sandbox_watch *w)
{
	int nr = seccomp_syscall_resolve_name(w->syscall);

	return nr == __NR_SCMP_ERROR ? w->nr_x86_64 : nr;
}

/* Each watched call becomes one NOTIFY rule; the fstat-like forms (AT_EMPTY_PATH with a
 * descriptor, which glibc 2.33+ uses for every fstat()) are left out: they name no path. */
static int add_watch(scmp_filter_ctx ctx, const struct sandbox_watch *w, struct wd_err *err)
{
	int nr = resolve(w), ret;

	if (w->skip_empty_path)
		ret = seccomp_rule_add(
		    ctx, SCMP_ACT_NOTIFY, nr, 1,
		    SCMP_CMP((unsigned)w->flags_arg, SCMP_CMP_MASKED_EQ, AT_EMPTY_PATH, 0));
	else
		ret = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, nr, 0);
	if (ret)
		return wd_err_set(err, ret, "seccomp notify: %s: %s", w->syscall, strerror(-ret));
	return 0;
}

/* The filter of @ntab tables of watched calls, exported as BPF. */
static int notify_bpf(const struct sandbox_watch *const *tab, const size_t *ntab, size_t n,
		      struct sock_filter **ret_prog, size_t *ret_len, struct wd_err *err)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	struct sock_filter *prog = NULL;
	struct stat st;
	int fd = -1, ret;

	if (!ctx)
		return wd_err_set(err, -ENOMEM, "seccomp notify: seccomp_init failed");
	/* another ABI: the refusing filter answers EPERM; KILL here would outrank it */
	ret = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ALLOW);
	if (!ret)
		ret = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (ret) {
		wd_err_set(err, ret, "seccomp notify: attributes: %s", strerror(-ret));
		goto out;
	}
	for (size_t t = 0; t < n && !ret; t++)
		for (size_t i = 0; i < ntab[t] && !ret; i++)
			ret = add_watch(ctx, &tab[t][i], err);
	if (ret)
		goto out;
	fd = memfd_create("warden-notify", MFD_CLOEXEC);
	if (fd < 0) {
		ret = wd_err_set(err, -errno, "seccomp notify: memfd_create: %s", strerror(errno));
		goto out;
	}
	ret = seccomp_export_bpf(ctx, fd);
	if (ret) {
		wd_err_set(err, ret, "seccomp notify: seccomp_export_bpf: %s", strerror(-ret));
		goto out;
	}
	if (fstat(fd, &st) < 0 || st.st_size <= 0 || st.st_size % sizeof(*prog) ||
	    st.st_size > (off_t)(BPF_MAXINSNS * sizeof(*prog))) {
		ret = wd_err_set(err, -EIO, "seccomp notify: the exported program is unusable");
		goto out;
	}
	prog = malloc((size_t)st.st_size);
	if (!prog) {
		ret = wd_err_set(err, -ENOMEM, "seccomp notify: out of memory");
		goto out;
	}
	if (pread(fd, prog, (size_t)st.st_size, 0) != st.st_size) {
		ret = wd_err_set(err, -EIO, "seccomp notify: reading the exported program");
		free(prog);
		prog = NULL;
		goto out;
	}
	*ret_prog = prog;
	*ret_len = (size_t)st.st_size / sizeof(*prog);
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	seccomp_release(ctx);
	return ret;
}

int sandbox_notify_bpf(struct sock_filter **ret_prog, size_t *ret_len, struct wd_err *err)
{
	const struct sandbox_watch *const tab[] = {sandbox_watched};
	const size_t ntab[] = {sandbox_nwatched};

	return notify_bpf(tab, ntab, 1, ret_prog, ret_len, err);
}

int sandbox_notify_bpf_trace(struct sock_filter **ret_prog, size_t *ret_len, struct wd_err *err)
{
	const struct sandbox_watch *const tab[] = {sandbox_watched, sandbox_watched_trace};
	const size_t ntab[] = {sandbox_nwatched, sandbox_nwatched_trace};

	return notify_bpf(tab, ntab, 2, ret_prog, ret_len, err);
}

bool sandbox_watch_follows(const struct sandbox_watch *w, const uint64_t *args)
{
	switch (w->op) {
	case SANDBOX_OP_READLINK:
		return false;
	case SANDBOX_OP_STAT:
		/* lstat; newfstatat and statx with AT_SYMLINK_NOFOLLOW */
		if (w->nr_x86_64 == 6)
			return false;
		return w->flags_arg < 0 || !(args[w->flags_arg] & AT_SYMLINK_NOFOLLOW);
	case SANDBOX_OP_OPEN:
	case SANDBOX_OP_READ:
	case SANDBOX_OP_WRITE:
	case SANDBOX_OP_CREATE:
		return w->flags_arg < 0 || !(args[w->flags_arg] & O_NOFOLLOW);
	case SANDBOX_OP_EXEC:
		/* execveat's flags are its fifth argument */
		return w->nr_x86_64 != 322 || !(args[4] & AT_SYMLINK_NOFOLLOW);
	case SANDBOX_OP_ACCESS:
		/* faccessat2's flags are its fourth */
		return w->nr_x86_64 != 439 || !(args[3] & AT_SYMLINK_NOFOLLOW);
	case SANDBOX_OP_REMOVE:
	case SANDBOX_OP_RENAME:
	case SANDBOX_OP_CONNECT:
		return false;
	}
	return true;
}

static const char *const op_names[] = {
    [SANDBOX_OP_OPEN] = "open",	    [SANDBOX_OP_READ] = "read",
    [SANDBOX_OP_WRITE] = "write",   [SANDBOX_OP_CREATE] = "create",
    [SANDBOX_OP_EXEC] = "exec",	    [SANDBOX_OP_STAT] = "stat",
    [SANDBOX_OP_ACCESS] = "access", [SANDBOX_OP_READLINK] = "readlink",
    [SANDBOX_OP_REMOVE] = "remove", [SANDBOX_OP_RENAME] = "rename",
    [SANDBOX_OP_CONNECT] = "connect",
};

const char *sandbox_op_name(enum sandbox_op op)
{
	if ((unsigned)op >= WD_ARRAY_SIZE(op_names) || !op_names[op])
		return "?";
	return op_names[op];
}

enum sandbox_op sandbox_open_op(uint64_t flags)
{
	if (flags & O_CREAT)
		return SANDBOX_OP_CREATE;
	if ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC))
		return SANDBOX_OP_WRITE;
	return SANDBOX_OP_READ;
}

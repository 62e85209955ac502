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

const struct sandbox_watch *sandbox_watch_find(int nr)
{
	for (size_t i = 0; i < sandbox_nwatched; i++)
		if (sandbox_watched[i].nr_x86_64 == nr)
			return &sandbox_watched[i];
	return NULL;
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

int sandbox_notify_bpf(struct sock_filter **ret_prog, size_t *ret_len, struct wd_err *err)
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
	for (size_t i = 0; i < sandbox_nwatched && !ret; i++)
		ret = add_watch(ctx, &sandbox_watched[i], err);
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
	}
	return true;
}

static const char *const op_names[] = {
    [SANDBOX_OP_OPEN] = "open",	    [SANDBOX_OP_READ] = "read",
    [SANDBOX_OP_WRITE] = "write",   [SANDBOX_OP_CREATE] = "create",
    [SANDBOX_OP_EXEC] = "exec",	    [SANDBOX_OP_STAT] = "stat",
    [SANDBOX_OP_ACCESS] = "access", [SANDBOX_OP_READLINK] = "readlink",
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

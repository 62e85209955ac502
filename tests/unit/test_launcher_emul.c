/* test_launcher_emul.c - the trace recorder's own path calls (launcher/recorder_emul.c): a
 * forked child that waits holds the arguments in its memory, recorder_emulate() carries each call
 * out for it inside /proc/CHILD/root, and the answer, the bytes written into the child and the file
 * tree afterwards are the kernel's own for the same call made here on the same tree; what is
 * recorded is the path used. What cannot be carried out exactly (the sandbox's own /proc, a
 * magic link or a loop on the way, a ".." after a link, an abstract socket) is not handled. */
#include "recorder/recorder.h"
#include "recorder/emul.h"
#include "trace/file.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <grp.h>
#include <unistd.h>

#include <cmocka.h>

/* The child's copies of these (same addresses after fork) carry the arguments. */
static char g_path[2][PATH_MAX];
static char g_buf[PATH_MAX];
static struct sockaddr_un g_sun;

static char tree[PATH_MAX]; /* the tmp tree, real path; the child's current folder */
static char oldcwd[PATH_MAX];
static struct recorder_emul_out out;

struct kid {
	pid_t pid;
	int wake;   /* closed: the child ends */
	int root;   /* /proc/PID/root */
	int dirfd;  /* the child's (and our) descriptor of tree/sub */
	int pipefd; /* the child's pipe end: a descriptor that is no folder */
	int sock;   /* a unix socket the child holds (and we, the same one) */
	int tcp;    /* a TCP socket the child holds */
};

static struct kid kid;

static void put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static int setup(void **state)
{
	char t[] = "/tmp/wd-emul-XXXXXX", p[PATH_MAX + 16];
	int pp[2];

	(void)state;
	if (!mkdtemp(t) || !realpath(t, tree) || !getcwd(oldcwd, sizeof(oldcwd)) || chdir(tree) < 0)
		return -1;
	put("f", "hello");
	if (mkdir("sub", 0755) || mkdir("sub/deep", 0755) || symlink("f", "lnk") ||
	    symlink("loop", "loop") || symlink("sub/deep", "dlnk") ||
	    symlink("/proc/self/cwd", "magic") || symlink("/proc/self/mounts", "mtab"))
		return -1;
	put("sub/g", "world");
	put("sub/deep/f", "deep");
	snprintf(p, sizeof(p), "%s/sub/g", tree);
	if (symlink(p, "abs"))
		return -1;
	kid.dirfd = open("sub", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	kid.sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	kid.tcp = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (kid.dirfd < 0 || kid.sock < 0 || kid.tcp < 0 || pipe2(pp, O_CLOEXEC) < 0)
		return -1;
	memset(g_buf, 'X', sizeof(g_buf));
	kid.pid = fork();
	if (kid.pid < 0)
		return -1;
	if (!kid.pid) {
		char c;

		close(pp[1]);
		(void)!read(pp[0], &c, 1);
		_exit(0);
	}
	kid.pipefd = pp[0]; /* the same number in the child */
	kid.wake = pp[1];
	snprintf(p, sizeof(p), "/proc/%d/root", (int)kid.pid);
	kid.root = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return kid.root < 0 ? -1 : 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int teardown(void **state)
{
	(void)state;
	close(kid.wake);
	waitpid(kid.pid, NULL, 0);
	close(kid.pipefd);
	close(kid.root);
	close(kid.dirfd);
	close(kid.sock);
	close(kid.tcp);
	if (chdir(oldcwd) < 0)
		return -1;
	return nftw(tree, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Write @s (with its NUL) at @addr of the child. */
static void kid_put(void *addr, const void *s, size_t n)
{
	struct iovec l = {(void *)s, n}, r = {addr, n};

	assert_int_equal(process_vm_writev(kid.pid, &l, 1, &r, 1, 0), (ssize_t)n);
}

static void kid_path(int i, const char *s)
{
	kid_put(g_path[i], s, strlen(s) + 1);
}

static void kid_get(void *addr, void *dst, size_t n)
{
	struct iovec l = {dst, n}, r = {addr, n};

	assert_int_equal(process_vm_readv(kid.pid, &l, 1, &r, 1, 0), (ssize_t)n);
}

/* The child's result buffer filled with X again. */
static void kid_clear(void)
{
	static char x[sizeof(g_buf)];

	memset(x, 'X', sizeof(x));
	kid_put(g_buf, x, sizeof(x));
}

/* the sockets named (warden trace --allow-socket) for emul() */
static char *g_named[2];
static size_t g_nnamed;

static int emul(int nr, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4)
{
	/* the recorder opens the caller's pidfd before it checks the call (run_files.c) */
	struct recorder_emul_ctx c = {.pid = kid.pid,
				      .pidfd = -1,
				      .root = kid.root,
				      .cwd = tree,
				      .umask = 022,
				      .sockets = g_named,
				      .nsockets = g_nnamed};
	uint64_t args[6] = {a0, a1, a2, a3, a4, 0};
	int r;

	c.pidfd = recorder_caller_pidfd(kid.pid);
	assert_true(c.pidfd >= 0);
	r = recorder_emulate(&c, nr, args, &out);
	close(c.pidfd);
	return r;
}

#define P0 ((uint64_t)(uintptr_t)g_path[0])
#define P1 ((uint64_t)(uintptr_t)g_path[1])
#define BUF ((uint64_t)(uintptr_t)g_buf)
#define FDCWD ((uint64_t)(int64_t)AT_FDCWD)

static void assert_recorded(int op, const char *rel)
{
	char want[PATH_MAX * 2];

	assert_int_equal(out.op, op);
	if (rel[0] == '/')
		snprintf(want, sizeof(want), "%s", rel);
	else
		snprintf(want, sizeof(want), "%s/%s", tree, rel);
	assert_string_equal(out.path, want);
}

static void assert_recorded2(int op, const char *rel)
{
	char want[PATH_MAX * 2];

	assert_int_equal(out.op2, op);
	snprintf(want, sizeof(want), "%s/%s", tree, rel);
	assert_string_equal(out.path2, want);
}

/* ------------------------------------------------------------ reading */

static void test_read_string(void **state)
{
	long pg = sysconf(_SC_PAGESIZE);
	char buf[PATH_MAX], *m;
	pid_t me = getpid();

	(void)state;
	strcpy(g_buf, "/a/b");
	assert_int_equal(recorder_read_string(me, (uint64_t)(uintptr_t)g_buf, buf, sizeof(buf)), 4);
	assert_string_equal(buf, "/a/b");
	assert_int_equal(recorder_read_string(me, 0, buf, sizeof(buf)), -EFAULT);
	/* a string that ends at the end of a page, the next one unmapped: read whole */
	// cppcheck-suppress invalidFunctionArg ; -1 is the descriptor MAP_ANONYMOUS wants
	m = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(m != MAP_FAILED);
	assert_int_equal(munmap(m + pg, (size_t)pg), 0);
	memcpy(m + pg - 4, "abc", 4);
	assert_int_equal(
	    recorder_read_string(me, (uint64_t)(uintptr_t)(m + pg - 4), buf, sizeof(buf)), 3);
	assert_string_equal(buf, "abc");
	/* no NUL before the unmapped page: unreadable */
	memset(m + pg - 4, 'a', 4);
	assert_int_equal(
	    recorder_read_string(me, (uint64_t)(uintptr_t)(m + pg - 4), buf, sizeof(buf)), -EFAULT);
	assert_int_equal(recorder_read_string(me, (uint64_t)(uintptr_t)(m + pg), buf, sizeof(buf)),
			 -EFAULT);
	/* no NUL within the size: too long (the kernel's PATH_MAX rule) */
	memset(m, 'a', (size_t)pg);
	assert_int_equal(recorder_read_string(me, (uint64_t)(uintptr_t)m, buf, 16), -ENAMETOOLONG);
	m[15] = '\0';
	assert_int_equal(recorder_read_string(me, (uint64_t)(uintptr_t)m, buf, 16), 15);
	munmap(m, (size_t)pg);
	memset(g_buf, 'X', sizeof(g_buf));
}

static void test_resolve(void **state)
{
	struct recorder_emul_ctx c = {
	    .pid = kid.pid, .pidfd = -1, .root = kid.root, .cwd = tree, .umask = 022};
	char got[PATH_MAX], want[PATH_MAX * 2];

	(void)state;
	assert_int_equal(recorder_resolve(&c, AT_FDCWD, "sub/./deep/../g", got), 0);
	snprintf(want, sizeof(want), "%s/sub/g", tree);
	assert_string_equal(got, want);
	assert_int_equal(recorder_resolve(&c, kid.dirfd, "deep//f", got), 0);
	snprintf(want, sizeof(want), "%s/sub/deep/f", tree);
	assert_string_equal(got, want);
	assert_int_equal(recorder_resolve(&c, kid.dirfd, "/etc/../x", got), 0);
	assert_string_equal(got, "/x");
	assert_int_equal(recorder_resolve(&c, AT_FDCWD, "", got), -ENOENT);
	/* descriptors that are no folder with a path */
	assert_int_equal(recorder_resolve(&c, kid.pipefd, "x", got), -EBADF);
	assert_int_equal(recorder_resolve(&c, kid.sock, "x", got), -EBADF);
	assert_int_equal(recorder_resolve(&c, 999, "x", got), -EBADF);
	assert_int_equal(recorder_resolve(&c, -5, "x", got), -EBADF);
	/* the child's current folder must be the folder its name reaches */
	c.cwd = "/";
	assert_int_equal(recorder_resolve(&c, AT_FDCWD, "x", got), -EBADF);
	assert_int_equal(recorder_resolve(&c, AT_FDCWD, "/x", got), 0);
	c.cwd = "relative";
	assert_int_equal(recorder_resolve(&c, AT_FDCWD, "x", got), -EBADF);
}

static void test_resolve_deleted_dirfd(void **state)
{
	struct recorder_emul_ctx c = {
	    .pid = kid.pid, .pidfd = -1, .root = kid.root, .cwd = tree, .umask = 022};
	char got[PATH_MAX];
	struct stat st;

	(void)state;
	/* the child's descriptor of sub, then sub gone: a name for it no longer exists */
	assert_int_equal(rename("sub", "sub2"), 0);
	assert_int_equal(recorder_resolve(&c, kid.dirfd, "g", got), 0); /* renamed: its new name */
	assert_int_equal(stat(got, &st), 0);
	assert_int_equal(rename("sub2", "sub"), 0);
	assert_int_equal(unlink("sub/g"), 0);
	assert_int_equal(unlink("sub/deep/f"), 0);
	assert_int_equal(rmdir("sub/deep"), 0);
	assert_int_equal(rmdir("sub"), 0);
	assert_int_equal(recorder_resolve(&c, kid.dirfd, "g", got), -EBADF);
	/* the caller's own call would fail too (ENOENT), but not ours to say */
	kid_path(0, "g");
	assert_int_equal(emul(SYS_newfstatat, (uint64_t)kid.dirfd, P0, BUF, 0, 0), 0);
}

/* ------------------------------------------------------------ looking */

/* stat of @path in the child (emulated) and here: the same answer, the same bytes. */
static void same_stat(int nr, const char *path, int flags)
{
	struct stat mine, theirs = {0};
	int want;

	kid_clear();
	kid_path(0, path);
	if (nr == SYS_stat)
		want = stat(path, &mine) ? -errno : 0;
	else if (nr == SYS_lstat)
		want = lstat(path, &mine) ? -errno : 0;
	else
		want = fstatat(AT_FDCWD, path, &mine, flags) ? -errno : 0;
	if (nr == SYS_newfstatat)
		assert_int_equal(emul(nr, FDCWD, P0, BUF, (uint64_t)flags, 0), 1);
	else
		assert_int_equal(emul(nr, P0, BUF, 0, 0, 0), 1);
	assert_int_equal(out.ret, want);
	if (!want) {
		kid_get(g_buf, &theirs, sizeof(theirs));
		assert_memory_equal(&mine, &theirs, sizeof(mine));
	}
}

static void test_stat_like_the_kernel(void **state)
{
	(void)state;
	same_stat(SYS_stat, "f", 0);
	assert_recorded(TRACE_STAT, "f");
	same_stat(SYS_stat, "lnk", 0); /* the target's */
	assert_recorded(TRACE_STAT, "lnk");
	same_stat(SYS_lstat, "lnk", 0); /* the link's */
	assert_recorded(TRACE_STAT, "lnk");
	same_stat(SYS_stat, "abs", 0); /* an absolute link: resolved in the child's root */
	same_stat(SYS_newfstatat, "dlnk", AT_SYMLINK_NOFOLLOW);
	same_stat(SYS_newfstatat, "dlnk/", AT_SYMLINK_NOFOLLOW); /* the slash follows */
	assert_recorded(TRACE_STAT, "dlnk");
	same_stat(SYS_stat, "sub/deep/..", 0);
	assert_recorded(TRACE_STAT, "sub");
	same_stat(SYS_stat, ".", 0);
	same_stat(SYS_stat, "/", 0);
	assert_recorded(TRACE_STAT, "/");
	same_stat(SYS_lstat, tree, 0);
	same_stat(SYS_stat, "f/", 0); /* ENOTDIR */
	assert_int_equal(out.ret, -ENOTDIR);
	assert_int_equal(out.op, -1);
	same_stat(SYS_stat, "f/.", 0);
	assert_int_equal(out.ret, -ENOTDIR);
	same_stat(SYS_stat, "nope", 0);
	assert_int_equal(out.ret, -ENOENT);
	assert_recorded(TRACE_MISSING, "nope");
	same_stat(SYS_stat, "nodir/nope", 0);
	assert_recorded(TRACE_MISSING, "nodir/nope");
	/* the empty path: ENOENT as the kernel says, nothing recorded */
	same_stat(SYS_stat, "", 0);
	assert_int_equal(out.ret, -ENOENT);
	assert_int_equal(out.op, -1);
	/* with AT_EMPTY_PATH it is fstat() of the descriptor: not ours */
	kid_path(0, "");
	assert_int_equal(emul(SYS_newfstatat, (uint64_t)kid.dirfd, P0, BUF, AT_EMPTY_PATH, 0), 0);
	assert_int_equal(out.op, -1);
	/* flags the kernel refuses: its to answer */
	kid_path(0, "f");
	assert_int_equal(emul(SYS_newfstatat, FDCWD, P0, BUF, 0x40000, 0), 0);
}

static void test_stat_dirfd(void **state)
{
	struct stat mine, theirs = {0};

	(void)state;
	kid_clear();
	kid_path(0, "deep/f");
	assert_int_equal(emul(SYS_newfstatat, (uint64_t)kid.dirfd, P0, BUF, 0, 0), 1);
	assert_int_equal(out.ret, 0);
	assert_recorded(TRACE_STAT, "sub/deep/f");
	assert_int_equal(fstatat(kid.dirfd, "deep/f", &mine, 0), 0);
	kid_get(g_buf, &theirs, sizeof(theirs));
	assert_memory_equal(&mine, &theirs, sizeof(mine));
	/* a pipe as the folder: the kernel's ENOTDIR, not ours to say */
	assert_int_equal(emul(SYS_newfstatat, (uint64_t)kid.pipefd, P0, BUF, 0, 0), 0);
	/* an absolute path ignores the descriptor */
	kid_path(0, tree);
	assert_int_equal(emul(SYS_newfstatat, (uint64_t)kid.pipefd, P0, BUF, 0, 0), 1);
	assert_int_equal(out.ret, 0);
}

static void test_stat_buffer_fault(void **state)
{
	(void)state;
	kid_path(0, "f");
	assert_int_equal(emul(SYS_stat, P0, 8, 0, 0, 0), 1);
	assert_int_equal(out.ret, -EFAULT);
	assert_int_equal(out.op, -1);
	/* a path the child cannot have: not handled (the kernel says EFAULT itself) */
	assert_int_equal(emul(SYS_stat, 8, BUF, 0, 0, 0), 0);
}

static void test_statx(void **state)
{
	struct statx mine, theirs = {0};

	(void)state;
	kid_clear();
	kid_path(0, "lnk");
	assert_int_equal(emul(SYS_statx, FDCWD, P0, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, BUF),
			 1);
	assert_int_equal(out.ret, 0);
	assert_recorded(TRACE_STAT, "lnk");
	memset(&mine, 0, sizeof(mine));
	assert_int_equal(statx(AT_FDCWD, "lnk", AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &mine), 0);
	kid_get(g_buf, &theirs, sizeof(theirs));
	assert_memory_equal(&mine, &theirs, sizeof(mine));
	assert_true(S_ISLNK(theirs.stx_mode));
	kid_path(0, "deep/f");
	assert_int_equal(emul(SYS_statx, (uint64_t)kid.dirfd, P0, 0, STATX_ALL, BUF), 1);
	assert_int_equal(out.ret, 0);
	memset(&mine, 0, sizeof(mine));
	assert_int_equal(statx(kid.dirfd, "deep/f", 0, STATX_ALL, &mine), 0);
	kid_get(g_buf, &theirs, sizeof(theirs));
	assert_memory_equal(&mine, &theirs, sizeof(mine));
	assert_int_equal(theirs.stx_size, 4);
	/* fstat() by statx: no path */
	kid_path(0, "");
	assert_int_equal(emul(SYS_statx, (uint64_t)kid.dirfd, P0, AT_EMPTY_PATH, STATX_ALL, BUF),
			 0);
	kid_path(0, "nope");
	assert_int_equal(emul(SYS_statx, FDCWD, P0, 0, STATX_ALL, BUF), 1);
	assert_int_equal(out.ret, -ENOENT);
	assert_recorded(TRACE_MISSING, "nope");
}

static void test_access(void **state)
{
	(void)state;
	kid_path(0, "f");
	assert_int_equal(emul(SYS_access, P0, R_OK | W_OK, 0, 0, 0), 1);
	assert_int_equal(out.ret, access("f", R_OK | W_OK) ? -errno : 0);
	assert_recorded(TRACE_STAT, "f");
	assert_int_equal(emul(SYS_access, P0, X_OK, 0, 0, 0), 1);
	assert_int_equal(out.ret, -EACCES); /* no x bit for anybody, root included */
	assert_int_equal(out.op, -1);
	kid_path(0, "deep/f");
	assert_int_equal(emul(SYS_faccessat, (uint64_t)kid.dirfd, P0, F_OK, 0, 0), 1);
	assert_int_equal(out.ret, 0);
	assert_recorded(TRACE_STAT, "sub/deep/f");
	kid_path(0, "nope");
	assert_int_equal(emul(SYS_faccessat2, FDCWD, P0, F_OK, AT_EACCESS, 0), 1);
	assert_int_equal(out.ret, -ENOENT);
	assert_recorded(TRACE_MISSING, "nope");
	kid_path(0, "loop"); /* the link itself, not followed */
	assert_int_equal(emul(SYS_faccessat2, FDCWD, P0, F_OK, AT_SYMLINK_NOFOLLOW, 0), 1);
	assert_int_equal(out.ret, 0);
	/* a mode the kernel refuses */
	assert_int_equal(emul(SYS_access, P0, 8, 0, 0, 0), 0);
}

static void test_readlink(void **state)
{
	char theirs[64] = {0}, want[PATH_MAX];
	ssize_t n;

	(void)state;
	kid_clear();
	kid_path(0, "abs");
	n = readlink("abs", want, sizeof(want));
	assert_true(n > 3);
	assert_int_equal(emul(SYS_readlink, P0, BUF, sizeof(g_buf), 0, 0), 1);
	assert_int_equal(out.ret, n);
	assert_recorded(TRACE_STAT, "abs");
	kid_get(g_buf, theirs, (size_t)n + 1);
	assert_memory_equal(theirs, want, (size_t)n);
	assert_int_equal(theirs[n], 'X'); /* no NUL added, as the kernel */
	/* truncated to the size, the rest of the buffer left alone */
	kid_clear();
	assert_int_equal(emul(SYS_readlinkat, FDCWD, P0, BUF, 3, 0), 1);
	assert_int_equal(out.ret, 3);
	kid_get(g_buf, theirs, 4);
	assert_memory_equal(theirs, want, 3);
	assert_int_equal(theirs[3], 'X');
	/* not a link: EINVAL, nothing recorded; a missing one is missing */
	kid_path(0, "f");
	assert_int_equal(emul(SYS_readlink, P0, BUF, 64, 0, 0), 1);
	assert_int_equal(out.ret, -EINVAL);
	assert_int_equal(out.op, -1);
	kid_path(0, "nope");
	assert_int_equal(emul(SYS_readlink, P0, BUF, 64, 0, 0), 1);
	assert_int_equal(out.ret, -ENOENT);
	assert_recorded(TRACE_MISSING, "nope");
	/* a loop is a link like another for readlink */
	kid_path(0, "loop");
	assert_int_equal(emul(SYS_readlink, P0, BUF, 64, 0, 0), 1);
	assert_int_equal(out.ret, 4);
	/* a size the kernel refuses */
	assert_int_equal(emul(SYS_readlink, P0, BUF, 0, 0, 0), 0);
}

/* ------------------------------------------------------------ not handled */

static void test_not_handled(void **state)
{
	static const char *const paths[] = {
	    "/proc/self/status", /* the sandbox's own /proc */
	    "/proc",
	    "/dev/null",
	    "magic/f", /* a magic link on the way (/proc/self/cwd) */
	    "mtab",    /* a link into /proc, whose self is who asks */
	    "loop",    /* a loop on the way: ELOOP, the kernel's */
	    "loop/x",
	    "dlnk/../f", /* ".." after a link: not what the lexical fold says */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		kid_path(0, paths[i]);
		assert_int_equal(emul(SYS_stat, P0, BUF, 0, 0, 0), 0);
		assert_int_equal(out.op, -1);
	}
	/* the controls: the same with a plain folder where the link was, and a link not
	 * followed, are handled */
	kid_path(0, "sub/deep/../g");
	assert_int_equal(emul(SYS_stat, P0, BUF, 0, 0, 0), 1);
	assert_int_equal(out.ret, 0);
	assert_recorded(TRACE_STAT, "sub/g");
	kid_path(0, "mtab");
	assert_int_equal(emul(SYS_lstat, P0, BUF, 0, 0, 0), 1);
	assert_int_equal(out.ret, 0);
	/* "dlnk/../f" reaches sub/f, which is not there; the fold says f */
	kid_path(0, "dlnk/../g");
	assert_int_equal(emul(SYS_stat, P0, BUF, 0, 0, 0), 0);
	/* calls it does not know */
	assert_int_equal(emul(SYS_getpid, 0, 0, 0, 0, 0), 0);
	assert_int_equal(emul(SYS_openat, FDCWD, P0, 0, 0, 0), 0);
}

/* ------------------------------------------------------------ changing */

static void test_mkdir_rmdir(void **state)
{
	struct stat st;

	(void)state;
	kid_path(0, "new");
	assert_int_equal(emul(SYS_mkdir, P0, 0777, 0, 0, 0), 1);
	assert_int_equal(out.ret, 0);
	assert_recorded(TRACE_CREATE, "new");
	assert_int_equal(stat("new", &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0755); /* the child's umask 022 */
	/* again: EEXIST as mkdir here says, nothing recorded */
	assert_int_equal(emul(SYS_mkdir, P0, 0777, 0, 0, 0), 1);
	assert_int_equal(out.ret, -EEXIST);
	assert_int_equal(mkdir("new", 0777), -1);
	assert_int_equal(errno, EEXIST);
	assert_int_equal(out.op, -1);
	kid_path(0, "x");
	assert_int_equal(emul(SYS_mkdirat, (uint64_t)kid.dirfd, P0, 0700, 0, 0), 1);
	assert_int_equal(out.ret, 0);
	assert_recorded(TRACE_CREATE, "sub/x");
	assert_int_equal(stat("sub/x", &st), 0);
	assert_int_equal(st.st_mode & 07777, 0700);
	kid_path(0, "nodir/x");
	assert_int_equal(emul(SYS_mkdir, P0, 0777, 0, 0, 0), 1);
	assert_int_equal(out.ret, -ENOENT);
	assert_int_equal(out.op, -1);
	/* rmdir with a trailing slash removes the folder, as the kernel does */
	kid_path(0, "new/");
	assert_int_equal(emul(SYS_rmdir, P0, 0, 0, 0, 0), 1);
	assert_int_equal(out.ret, 0);
	assert_recorded(TRACE_REMOVE, "new");
	assert_int_equal(stat("new", &st), -1);
	kid_path(0, "sub");
	assert_int_equal(emul(SYS_rmdir, P0, 0, 0, 0, 0), 1);
	assert_int_equal(out.ret, -ENOTEMPTY);
	kid_path(0, "x");
	assert_int_equal(emul(SYS_unlinkat, (uint64_t)kid.dirfd, P0, AT_REMOVEDIR, 0, 0), 1);
	assert_int_equal(out.ret, 0);
	assert_recorded(TRACE_REMOVE, "sub/x");
	/* "." last: the kernel's own (EINVAL) */
	kid_path(0, "sub/.");
	assert_int_equal(emul(SYS_rmdir, P0, 0, 0, 0, 0), 0);
}

static void test_unlink(void **state)
{
	struct stat st;

	(void)state;
	kid_path(0, "lnk");
	assert_int_equal(emul(SYS_unlink, P0, 0, 0, 0, 0), 1);
	assert_int_equal(out.ret, 0);
	assert_recorded(TRACE_REMOVE, "lnk");
	assert_int_equal(lstat("lnk", &st), -1);
	assert_int_equal(stat("f", &st), 0); /* the link went, not its target */
	kid_path(0, "sub");
	assert_int_equal(emul(SYS_unlink, P0, 0, 0, 0, 0), 1);
	assert_int_equal(out.ret, unlink("sub") ? -errno : 0); /* EISDIR */
	assert_int_equal(out.op, -1);
	kid_path(0, "f/");
	assert_int_equal(emul(SYS_unlink, P0, 0, 0, 0, 0), 0);
	kid_path(0, "f");
	assert_int_equal(emul(SYS_unlinkat, FDCWD, P0, 0x1000, 0, 0), 0); /* bad flags */
}

static void test_rename(void **state)
{
	struct stat st;

	(void)state;
	/* RENAME_NOREPLACE onto a file that is there: EEXIST, both left */
	kid_path(0, "f");
	kid_path(1, "sub/g");
	assert_int_equal(emul(SYS_renameat2, FDCWD, P0, FDCWD, P1, RENAME_NOREPLACE), 1);
	assert_int_equal(out.ret, -EEXIST);
	assert_int_equal(out.op, -1);
	assert_int_equal(out.op2, -1);
	assert_int_equal(stat("f", &st), 0);
	/* onto a new name in another folder, by a descriptor */
	kid_path(1, "h");
	assert_int_equal(emul(SYS_renameat2, FDCWD, P0, (uint64_t)kid.dirfd, P1, RENAME_NOREPLACE),
			 1);
	assert_int_equal(out.ret, 0);
	assert_recorded(TRACE_RENAME, "f");
	assert_recorded2(TRACE_RENAME, "sub/h");
	assert_int_equal(stat("f", &st), -1);
	assert_int_equal(stat("sub/h", &st), 0);
	assert_int_equal(st.st_size, 5);
	/* plain rename replaces */
	kid_path(0, "sub/h");
	kid_path(1, "sub/g");
	assert_int_equal(emul(SYS_rename, P0, P1, 0, 0, 0), 1);
	assert_int_equal(out.ret, 0);
	assert_int_equal(stat("sub/g", &st), 0);
	assert_int_equal(st.st_size, 5);
	/* RENAME_EXCHANGE */
	kid_path(0, "sub/g");
	kid_path(1, "sub/deep/f");
	assert_int_equal(emul(SYS_renameat2, FDCWD, P0, FDCWD, P1, RENAME_EXCHANGE), 1);
	assert_int_equal(out.ret, 0);
	assert_int_equal(stat("sub/g", &st), 0);
	assert_int_equal(st.st_size, 4);
	/* flags the kernel refuses or that need a privilege: its own */
	assert_int_equal(
	    emul(SYS_renameat2, FDCWD, P0, FDCWD, P1, RENAME_NOREPLACE | RENAME_EXCHANGE), 0);
	assert_int_equal(emul(SYS_renameat2, FDCWD, P0, FDCWD, P1, RENAME_WHITEOUT), 0);
	kid_path(0, "nope");
	assert_int_equal(emul(SYS_renameat, FDCWD, P0, FDCWD, P1, 0), 1);
	assert_int_equal(out.ret, -ENOENT);
	assert_int_equal(out.op, -1);
}

static void test_link_symlink(void **state)
{
	char buf[64];
	struct stat a, b;
	ssize_t n;

	(void)state;
	kid_path(0, "f");
	kid_path(1, "sub/hard");
	assert_int_equal(emul(SYS_link, P0, P1, 0, 0, 0), 1);
	assert_int_equal(out.ret, 0);
	assert_recorded(TRACE_CREATE, "sub/hard");
	assert_recorded2(TRACE_STAT, "f");
	assert_int_equal(stat("f", &a), 0);
	assert_int_equal(stat("sub/hard", &b), 0);
	assert_int_equal(a.st_ino, b.st_ino);
	/* linkat of a link: the link itself, or with AT_SYMLINK_FOLLOW its target */
	kid_path(0, "lnk");
	kid_path(1, "l2");
	assert_int_equal(emul(SYS_linkat, FDCWD, P0, FDCWD, P1, 0), 1);
	assert_int_equal(out.ret, 0);
	assert_int_equal(lstat("l2", &b), 0);
	assert_true(S_ISLNK(b.st_mode));
	kid_path(1, "l3");
	assert_int_equal(emul(SYS_linkat, FDCWD, P0, FDCWD, P1, AT_SYMLINK_FOLLOW), 1);
	assert_int_equal(out.ret, 0);
	assert_int_equal(lstat("l3", &b), 0);
	assert_int_equal(a.st_ino, b.st_ino);
	/* onto a name that is there */
	assert_int_equal(emul(SYS_link, P0, P1, 0, 0, 0), 1);
	assert_int_equal(out.ret, -EEXIST);
	assert_int_equal(out.op, -1);
	assert_int_equal(out.op2, -1);
	/* the source missing */
	kid_path(0, "nope");
	kid_path(1, "l4");
	assert_int_equal(emul(SYS_link, P0, P1, 0, 0, 0), 1);
	assert_int_equal(out.ret, -ENOENT);
	/* AT_EMPTY_PATH: by a descriptor, not ours */
	assert_int_equal(emul(SYS_linkat, FDCWD, P0, FDCWD, P1, AT_EMPTY_PATH), 0);
	/* symlink: created with the target as given, the target not recorded */
	kid_path(0, "../f");
	kid_path(1, "s");
	assert_int_equal(emul(SYS_symlinkat, P0, (uint64_t)kid.dirfd, P1, 0, 0), 1);
	assert_int_equal(out.ret, 0);
	assert_recorded(TRACE_CREATE, "sub/s");
	assert_int_equal(out.op2, -1);
	n = readlink("sub/s", buf, sizeof(buf));
	assert_int_equal(n, 4);
	assert_memory_equal(buf, "../f", 4);
	kid_path(1, "sub/s");
	assert_int_equal(emul(SYS_symlink, P0, P1, 0, 0, 0), 1);
	assert_int_equal(out.ret, -EEXIST);
	kid_path(0, "");
	assert_int_equal(emul(SYS_symlink, P0, P1, 0, 0, 0), 1);
	assert_int_equal(out.ret, -ENOENT); /* as symlink("", x) here */
	assert_int_equal(symlink("", "sub/t"), -1);
	assert_int_equal(errno, ENOENT);
}

static void test_truncate_chmod(void **state)
{
	struct stat st;

	(void)state;
	kid_path(0, "lnk"); /* followed: the target changes */
	assert_int_equal(emul(SYS_truncate, P0, 2, 0, 0, 0), 1);
	assert_int_equal(out.ret, 0);
	assert_recorded(TRACE_WRITE, "lnk");
	assert_int_equal(stat("f", &st), 0);
	assert_int_equal(st.st_size, 2);
	kid_path(0, "sub");
	assert_int_equal(emul(SYS_truncate, P0, 0, 0, 0, 0), 1);
	assert_int_equal(out.ret, truncate("sub", 0) ? -errno : 0); /* EISDIR */
	assert_int_equal(out.op, -1);
	kid_path(0, "f");
	assert_int_equal(emul(SYS_truncate, P0, (uint64_t)-1, 0, 0, 0), 0);
	assert_int_equal(emul(SYS_chmod, P0, 0600, 0, 0, 0), 1);
	assert_int_equal(out.ret, 0);
	assert_recorded(TRACE_WRITE, "f");
	assert_int_equal(stat("f", &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	kid_path(0, "deep/f");
	assert_int_equal(emul(SYS_fchmodat, (uint64_t)kid.dirfd, P0, 0640, 0, 0), 1);
	assert_int_equal(out.ret, 0);
	assert_recorded(TRACE_WRITE, "sub/deep/f");
	assert_int_equal(stat("sub/deep/f", &st), 0);
	assert_int_equal(st.st_mode & 07777, 0640);
	kid_path(0, "nope");
	assert_int_equal(emul(SYS_chmod, P0, 0600, 0, 0, 0), 1);
	assert_int_equal(out.ret, -ENOENT);
	assert_int_equal(out.op, -1);
}

/* ------------------------------------------------------------ connect */

/* connect(@fd, @sun of @len) of the child, carried out */
static void kid_connect(int fd, const struct sockaddr_un *sun, size_t len)
{
	kid_put(&g_sun, sun, sizeof(*sun));
	assert_int_equal(emul(SYS_connect, (uint64_t)fd, (uint64_t)(uintptr_t)&g_sun, len, 0, 0),
			 1);
}

static void test_connect_unix(void **state)
{
	struct sockaddr_un peer = {0}, sun = {.sun_family = AF_UNIX};
	socklen_t plen = sizeof(peer);
	char named[PATH_MAX + 8], linked[PATH_MAX + 8];
	size_t len = offsetof(struct sockaddr_un, sun_path) + 5;
	int srv, conn;

	(void)state;
	srv = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(srv >= 0);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "sock");
	assert_int_equal(bind(srv, (struct sockaddr *)&sun, sizeof(sun)), 0);
	assert_int_equal(listen(srv, 4), 0);
	assert_int_equal(symlink("sock", "slnk"), 0);
	snprintf(named, sizeof(named), "%s/sock", tree);
	snprintf(linked, sizeof(linked), "%s/slnk", tree);

	/* not named: refused (EACCES), recorded as refused, the socket left unconnected */
	g_nnamed = 0;
	kid_connect(kid.sock, &sun, len);
	assert_int_equal(out.ret, -EACCES);
	assert_true(out.refused);
	assert_recorded(TRACE_CONNECT, "sock");
	assert_int_equal(getpeername(kid.sock, (struct sockaddr *)&peer, &plen), -1);
	assert_int_equal(errno, ENOTCONN);
	/* a named path that is a symbolic link names nothing (the program could have made it) */
	g_named[0] = linked;
	g_nnamed = 1;
	kid_connect(kid.sock, &sun, len);
	assert_int_equal(out.ret, -EACCES);
	assert_true(out.refused);

	/* named: the child's socket (the same one as ours) connected by its relative path */
	g_named[0] = named;
	kid_connect(kid.sock, &sun, len);
	assert_int_equal(out.ret, 0);
	assert_false(out.refused);
	assert_recorded(TRACE_CONNECT, "sock");
	conn = accept4(srv, NULL, NULL, SOCK_CLOEXEC);
	assert_true(conn >= 0);
	plen = sizeof(peer);
	assert_int_equal(getpeername(kid.sock, (struct sockaddr *)&peer, &plen), 0);
	assert_string_equal(peer.sun_path, "sock");		    /* the name the server bound */
	assert_int_equal(fcntl(kid.sock, F_GETFL) & O_NONBLOCK, 0); /* left as it was */
	/* again: EISCONN, as connect here says */
	kid_connect(kid.sock, &sun, sizeof(sun));
	assert_int_equal(out.ret, -EISCONN);
	assert_int_equal(out.op, -1);
	close(conn);
	/* through a link to the named socket: the same file, let through (EISCONN here) */
	snprintf(sun.sun_path, sizeof(sun.sun_path), "slnk");
	kid_connect(kid.sock, &sun, sizeof(sun));
	assert_int_equal(out.ret, -EISCONN);
	assert_false(out.refused);
	/* a path with nothing there: the kernel's ENOENT */
	snprintf(sun.sun_path, sizeof(sun.sun_path), "nosock");
	kid_connect(kid.sock, &sun, sizeof(sun));
	assert_int_equal(out.ret, -ENOENT);
	assert_int_equal(out.op, -1);
	/* a file that is no socket: ECONNREFUSED, as the kernel says */
	snprintf(sun.sun_path, sizeof(sun.sun_path), "f");
	kid_connect(kid.sock, &sun, sizeof(sun));
	assert_int_equal(out.ret, -ECONNREFUSED);
	g_nnamed = 0;
	unlink("slnk");
	close(srv);
}

/* Everything else is carried out too, never left to the kernel (CONTINUE would read the
 * address and look the descriptor up again): the kernel's own answers. */
static void test_connect_other(void **state)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sin);
	int srv, conn;

	(void)state;
	/* an abstract name (the socket's own network namespace): nobody listens there */
	memcpy(sun.sun_path + 1, "wd-emul-none", 12);
	kid_connect(kid.sock, &sun, offsetof(struct sockaddr_un, sun_path) + 13);
	assert_int_equal(out.ret, -ECONNREFUSED);
	assert_int_equal(out.op, -1);
	/* another family on a unix socket, a descriptor that is no socket, one not there */
	sun.sun_family = AF_INET;
	kid_connect(kid.sock, &sun, sizeof(sun));
	assert_int_equal(out.ret, -EINVAL);
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "sock");
	kid_connect(kid.pipefd, &sun, sizeof(sun));
	assert_int_equal(out.ret, -ENOTSOCK);
	kid_connect(999, &sun, sizeof(sun));
	assert_int_equal(out.ret, -EBADF);
	/* a size the kernel refuses */
	kid_put(&g_sun, &sun, sizeof(sun));
	assert_int_equal(
	    emul(SYS_connect, (uint64_t)kid.sock, (uint64_t)(uintptr_t)&g_sun, 4096, 0, 0), 1);
	assert_int_equal(out.ret, -EINVAL);
	/* TCP on loopback, from the child's blocking socket: connected here, left blocking */
	srv = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(srv >= 0);
	assert_int_equal(bind(srv, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(listen(srv, 4), 0);
	assert_int_equal(getsockname(srv, (struct sockaddr *)&sin, &sl), 0);
	kid_put(&g_sun, &sin, sizeof(sin));
	assert_int_equal(
	    emul(SYS_connect, (uint64_t)kid.tcp, (uint64_t)(uintptr_t)&g_sun, sizeof(sin), 0, 0),
	    1);
	assert_int_equal(out.ret, 0);
	assert_int_equal(out.op, -1);
	assert_int_equal(fcntl(kid.tcp, F_GETFL) & O_NONBLOCK, 0);
	conn = accept4(srv, NULL, NULL, SOCK_CLOEXEC);
	assert_true(conn >= 0);
	close(conn);
	close(srv);
}

/* A caller whose ids are not the recorder's: its connect is refused (EACCES), never made
 * with the recorder's identity (the server would read the recorder's ids, SO_PEERCRED) nor
 * by switching to the caller's (a recorder is never root: it has nothing to switch with).
 * The control: the same connect of a caller with the recorder's ids is made. As root only
 * (a test that is not root cannot make a child of other ids). */
static void test_connect_other_ids(void **state)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct recorder_emul_ctx c = {.pidfd = -1, .cwd = "/", .umask = 022};
	struct sockaddr_in peer;
	socklen_t sl = sizeof(sin), pl = sizeof(peer);
	uint64_t args[6] = {0};
	int srv, conn, sock, ready[2], wake[2];
	char p[64], ch;
	pid_t pid;

	(void)state;
	if (geteuid() != 0)
		skip();
	srv = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(srv >= 0);
	assert_int_equal(bind(srv, (struct sockaddr *)&sin, sizeof(sin)), 0);
	assert_int_equal(listen(srv, 4), 0);
	assert_int_equal(getsockname(srv, (struct sockaddr *)&sin, &sl), 0);

	/* the control: the caller with the recorder's ids (the kid) is connected */
	kid_put(&g_sun, &sin, sizeof(sin));
	assert_int_equal(
	    emul(SYS_connect, (uint64_t)kid.tcp, (uint64_t)(uintptr_t)&g_sun, sizeof(sin), 0, 0),
	    1);
	assert_int_equal(out.ret, 0);
	conn = accept4(srv, NULL, NULL, SOCK_CLOEXEC);
	assert_true(conn >= 0);
	close(conn);

	/* a caller of other ids (nobody's), holding a socket of its own */
	sock = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(sock >= 0);
	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	assert_int_equal(pipe2(wake, O_CLOEXEC), 0);
	memcpy(&g_sun, &sin, sizeof(sin));
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		close(kid.wake);
		close(ready[0]);
		close(wake[1]);
		if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
		    setresuid(65534, 65534, 65534) < 0)
			_exit(1);
		(void)!write(ready[1], "r", 1);
		(void)!read(wake[0], &ch, 1);
		_exit(0);
	}
	close(ready[1]);
	close(wake[0]);
	/* a child that could not take the ids is a test error, not a pass */
	assert_int_equal(read(ready[0], &ch, 1), 1);
	snprintf(p, sizeof(p), "/proc/%d/root", (int)pid);
	c.pid = pid;
	c.root = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(c.root >= 0);
	c.pidfd = recorder_caller_pidfd(pid);
	assert_true(c.pidfd >= 0);
	args[0] = (uint64_t)sock;
	args[1] = (uint64_t)(uintptr_t)&g_sun;
	args[2] = sizeof(sin);
	assert_int_equal(recorder_emulate(&c, SYS_connect, args, &out), 1);
	assert_int_equal(out.ret, -EACCES);
	assert_int_equal(out.op, -1);
	/* the socket (ours too: the same one) was left unconnected */
	assert_int_equal(getpeername(sock, (struct sockaddr *)&peer, &pl), -1);
	assert_int_equal(errno, ENOTCONN);
	close(c.pidfd);
	close(c.root);
	close(wake[1]);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	close(ready[0]);
	close(sock);
	close(srv);
}

/* ------------------------------------------------------------ another root */

/* A child in a root of its own (a user namespace's chroot into tree/root), as a sandbox's
 * program is: absolute links and ".." resolve in it, never in the launcher's. */
static void test_own_root(void **state)
{
	char p[PATH_MAX + 32], c;
	struct stat mine, theirs = {0};
	struct recorder_emul_ctx ctx = {.pidfd = -1, .cwd = "/", .umask = 022};
	uint64_t args[6] = {0};
	int ready[2], wake[2];
	pid_t pid;

	(void)state;
	assert_int_equal(mkdir("root", 0755), 0);
	assert_int_equal(mkdir("root/inside", 0755), 0);
	put("root/inside/x", "inner");
	assert_int_equal(symlink("/inside/x", "root/abs2"), 0);
	assert_int_equal(symlink("/inside", "root/dlink"), 0);
	/* the launcher's root has no /inside: a call resolved there would fail */
	assert_int_equal(stat("/inside", &mine), -1);
	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	assert_int_equal(pipe2(wake, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		/* only the parent may hold what ends the other child and this one */
		close(kid.wake);
		close(ready[0]);
		close(wake[1]);
		if (unshare(CLONE_NEWUSER) < 0 || chroot("root") < 0 || chdir("/") < 0)
			_exit(1);
		(void)!write(ready[1], "r", 1);
		(void)!read(wake[0], &c, 1);
		_exit(0);
	}
	close(ready[1]);
	close(wake[0]);
	/* a child that could not make its root is a test error, not a pass */
	assert_int_equal(read(ready[0], &c, 1), 1);
	snprintf(p, sizeof(p), "/proc/%d/root", (int)pid);
	ctx.pid = pid;
	ctx.root = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	assert_true(ctx.root >= 0);

	assert_int_equal(stat("root/inside/x", &mine), 0);
	static const char *const names[] = {"/abs2", "abs2", "/../../../abs2", "dlink/x",
					    "/dlink/../dlink/x"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct iovec l = {(void *)names[i], strlen(names[i]) + 1},
			     r = {g_path[0], l.iov_len};

		assert_int_equal(process_vm_writev(pid, &l, 1, &r, 1, 0), (ssize_t)l.iov_len);
		args[0] = P0;
		args[1] = BUF;
		assert_int_equal(recorder_emulate(&ctx, SYS_stat, args, &out), 1);
		assert_int_equal(out.ret, 0);
		assert_int_equal(out.op, TRACE_STAT);
		l.iov_base = &theirs;
		l.iov_len = sizeof(theirs);
		r.iov_base = g_buf;
		r.iov_len = sizeof(theirs);
		assert_int_equal(process_vm_readv(pid, &l, 1, &r, 1, 0), (ssize_t)sizeof(theirs));
		assert_memory_equal(&mine, &theirs, sizeof(mine));
	}
	assert_string_equal(out.path, "/dlink/x"); /* as the child names it */
	/* a folder made through an absolute link: inside the child's root */
	{
		struct iovec l = {"/dlink/new", 11}, r = {g_path[0], 11};

		assert_int_equal(process_vm_writev(pid, &l, 1, &r, 1, 0), 11);
	}
	args[0] = P0;
	args[1] = 0755;
	assert_int_equal(recorder_emulate(&ctx, SYS_mkdir, args, &out), 1);
	assert_int_equal(out.ret, 0);
	assert_string_equal(out.path, "/dlink/new");
	assert_int_equal(stat("root/inside/new", &mine), 0);
	assert_true(S_ISDIR(mine.st_mode));
	close(wake[1]);
	waitpid(pid, NULL, 0);
	close(ready[0]);
	close(ctx.root);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
	    T(test_read_string),
	    T(test_resolve),
	    T(test_resolve_deleted_dirfd),
	    T(test_stat_like_the_kernel),
	    T(test_stat_dirfd),
	    T(test_stat_buffer_fault),
	    T(test_statx),
	    T(test_access),
	    T(test_readlink),
	    T(test_not_handled),
	    T(test_mkdir_rmdir),
	    T(test_unlink),
	    T(test_rename),
	    T(test_link_symlink),
	    T(test_truncate_chmod),
	    T(test_connect_unix),
	    T(test_connect_other),
	    T(test_connect_other_ids),
	    T(test_own_root),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

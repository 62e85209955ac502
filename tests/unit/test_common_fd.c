/* test_common_fd.c - the descriptor helpers a run's child relies on: closing every inherited
 * descriptor but a chosen few, opening a path without following any link, and writing a value
 * into an existing file (a cgroup's). */
#include "common/common.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static bool is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

/* In a child (the helper is for children): three inherited descriptors, two kept, one high
 * one above the kept ones closed too. */
static void test_close_all_except(void **state)
{
	pid_t pid;
	int st;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int a = open("/dev/null", O_RDONLY), b = open("/dev/null", O_RDONLY);
		int c = open("/dev/null", O_RDONLY), high = dup2(a, 200);
		int keep[] = {b, -1, 1, 150};

		if (a < 0 || b < 0 || c < 0 || high != 200)
			_exit(10);
		if (wd_close_all_except(keep, 4))
			_exit(11);
		if (is_open(a) || is_open(c) || is_open(200))
			_exit(12); /* something not kept survived */
		if (!is_open(b) || !is_open(0) || !is_open(1) || !is_open(2))
			_exit(13); /* something kept (or stdio) was closed */
		if (wd_close_all_except(NULL, 0) || is_open(b))
			_exit(14);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* A link anywhere on the path is refused; the same path without one opens. */
static void test_open_nofollow(void **state)
{
	char dir[] = "/tmp/wd-test-fd-XXXXXX", real[PATH_MAX + 16], link[PATH_MAX + 16];
	char via[PATH_MAX + 32];
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(real, sizeof(real), "%s/real", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	snprintf(via, sizeof(via), "%s/link/.", dir);
	assert_int_equal(mkdir(real, 0755), 0);
	assert_int_equal(symlink(real, link), 0);
	fd = wd_open_nofollow(real, O_PATH | O_DIRECTORY);
	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	assert_int_equal(wd_open_nofollow(link, O_PATH), -ELOOP);
	assert_int_equal(wd_open_nofollow(via, O_PATH), -ELOOP);
	assert_int_equal(wd_open_nofollow("/proc/self/root/tmp", O_PATH), -ELOOP);
	unlink(link);
	rmdir(real);
	rmdir(dir);
}

/* wd_write_at(): the value into an existing file, never one it would create */
static void test_write_at(void **state)
{
	char dir[] = "/tmp/wd-write-at-XXXXXX", path[PATH_MAX], *text = NULL, longname[PATH_MAX];
	size_t len = 0;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/pids.max", dir);
	f = fopen(path, "we"); /* the file is there before, as a cgroup's are */
	assert_non_null(f);
	fclose(f);
	assert_int_equal(wd_write_at(dir, "pids.max", "200"), 0);
	assert_int_equal(wd_read_file(path, 64, &text, &len), 0);
	assert_string_equal(text, "200");
	free(text);
	assert_int_equal(wd_write_at(dir, "memory.max", "1"), -ENOENT); /* not created */
	snprintf(path, sizeof(path), "%s/memory.max", dir);
	assert_int_equal(access(path, F_OK), -1);
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(wd_write_at(dir, longname, "1"), -ENAMETOOLONG);
	snprintf(path, sizeof(path), "%s/pids.max", dir);
	unlink(path);
	rmdir(dir);
}

/* wd_send_fds(): the bytes and the descriptors, in order, in one message */
static void test_send_fds(void **state)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 3)];
		struct cmsghdr align;
	} cbuf;
	char got[8] = "";
	struct iovec iov = {.iov_base = got, .iov_len = sizeof(got)};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = cbuf.buf,
			    .msg_controllen = sizeof(cbuf.buf)};
	int sp[2], fds[2], in[2] = {-1, -1};
	struct cmsghdr *cm;
	struct stat a, b;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
	fds[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	fds[1] = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	assert_true(fds[0] >= 0 && fds[1] >= 0);
	assert_int_equal(wd_send_fds(sp[0], "hello", 5, fds, 2, 0), 5);
	assert_int_equal(recvmsg(sp[1], &mh, MSG_CMSG_CLOEXEC), 5);
	assert_memory_equal(got, "hello", 5);
	cm = CMSG_FIRSTHDR(&mh);
	assert_non_null(cm);
	assert_int_equal(cm->cmsg_type, SCM_RIGHTS);
	assert_int_equal(cm->cmsg_len, CMSG_LEN(sizeof(int) * 2));
	memcpy(in, CMSG_DATA(cm), sizeof(in));
	for (int i = 0; i < 2; i++) {
		assert_int_equal(fstat(fds[i], &a), 0);
		assert_int_equal(fstat(in[i], &b), 0);
		assert_true(a.st_dev == b.st_dev && a.st_ino == b.st_ino); /* the same, in order */
		close(in[i]);
	}
	assert_int_equal(wd_send_fds(sp[0], "x", 1, fds, 0, 0), -EINVAL);
	assert_int_equal(wd_send_fds(sp[0], "x", 1, fds, WD_SEND_FDS_MAX + 1, 0), -EINVAL);
	close(sp[1]);
	assert_int_equal(wd_send_fds(sp[0], "x", 1, fds, 1, 0), -EPIPE); /* no SIGPIPE */
	close(sp[0]);
	close(fds[0]);
	close(fds[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_close_all_except),
	    cmocka_unit_test(test_open_nofollow),
	    cmocka_unit_test(test_write_at),
	    cmocka_unit_test(test_send_fds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

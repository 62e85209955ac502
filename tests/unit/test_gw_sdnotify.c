/* test_gw_sdnotify.c - the readiness datagram (gateway/sdnotify.c): $NOTIFY_SOCKET as a path
 * and as an abstract name, the variable removed from the environment, bad values refused. */
#include "gateway/sdnotify.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

/* a datagram socket bound at @name ("/path" or "@abstract"), as a service manager has */
static int listener(const char *name)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t n = strlen(name);
	socklen_t len;
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	memcpy(sa.sun_path, name, n);
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (name[0] == '/'));
	if (name[0] == '@')
		sa.sun_path[0] = '\0';
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, len), 0);
	return fd;
}

static void expect_datagram(int fd, const char *want)
{
	char buf[256];
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);

	assert_true(n >= 0);
	buf[n] = '\0';
	assert_string_equal(buf, want);
}

static void test_path(void **state)
{
	char dir[] = "/tmp/wd-notify-XXXXXX", path[128], got[GW_NOTIFY_MAX];
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/notify", dir);
	fd = listener(path);
	setenv("NOTIFY_SOCKET", path, 1);
	assert_int_equal(gw_notify_take(got, sizeof(got)), 1);
	assert_string_equal(got, path);
	assert_null(getenv("NOTIFY_SOCKET")); /* a child inherits nothing */
	assert_int_equal(gw_notify_send(got, "READY=1\nSTATUS=serving"), 0);
	expect_datagram(fd, "READY=1\nSTATUS=serving");
	close(fd);
	unlink(path);
	rmdir(dir);
}

static void test_abstract(void **state)
{
	char name[64], got[GW_NOTIFY_MAX];
	int fd;

	(void)state;
	snprintf(name, sizeof(name), "@wd-notify-test-%d", (int)getpid());
	fd = listener(name);
	setenv("NOTIFY_SOCKET", name, 1);
	assert_int_equal(gw_notify_take(got, sizeof(got)), 1);
	assert_int_equal(gw_notify_send(got, "READY=1"), 0);
	expect_datagram(fd, "READY=1");
	close(fd);
}

static void test_unset_and_bad(void **state)
{
	char got[GW_NOTIFY_MAX], longname[200];

	(void)state;
	unsetenv("NOTIFY_SOCKET");
	assert_int_equal(gw_notify_take(got, sizeof(got)), 0);
	assert_string_equal(got, "");
	assert_int_equal(gw_notify_send(got, "READY=1"), 0); /* nobody to tell: fine */

	setenv("NOTIFY_SOCKET", "relative/path", 1);
	assert_int_equal(gw_notify_take(got, sizeof(got)), -EAFNOSUPPORT);
	assert_string_equal(got, "");
	assert_null(getenv("NOTIFY_SOCKET"));
	setenv("NOTIFY_SOCKET", "vsock:2:1234", 1);
	assert_int_equal(gw_notify_take(got, sizeof(got)), -EAFNOSUPPORT);
	setenv("NOTIFY_SOCKET", "@", 1);
	assert_int_equal(gw_notify_take(got, sizeof(got)), -EAFNOSUPPORT);
	memset(longname, 'a', sizeof(longname) - 1);
	longname[0] = '/';
	longname[sizeof(longname) - 1] = '\0';
	setenv("NOTIFY_SOCKET", longname, 1);
	assert_int_equal(gw_notify_take(got, sizeof(got)), -ENAMETOOLONG);
	/* a socket nobody listens on: the send says so */
	assert_int_equal(gw_notify_send("/nonexistent/wd-notify", "READY=1"), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_path),
	    cmocka_unit_test(test_abstract),
	    cmocka_unit_test(test_unset_and_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

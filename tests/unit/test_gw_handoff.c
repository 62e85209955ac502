/* test_gw_handoff.c - unit tests for the exec hand-off from warden-gateway to its worker
 * (gateway/handoff.c): the configuration through a sealed memfd (round trip, refusal of
 * anything else), the choice of the worker executable (refused when unsafe), and the exec
 * with exactly descriptors 3 and 4 inherited. */
#include "conf/conf.h"
#include "gateway/handoff.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static void render(const struct wd_gwconf *c, struct wd_buf *b)
{
	assert_int_equal(conf_render_yaml(c, b), 0);
}

/* every field survives: the worker's rendering of what it read equals the parent's */
static void test_conf_roundtrip(void **state)
{
	struct wd_gwconf a, b;
	struct wd_buf ya = WD_BUF_INIT, yb = WD_BUF_INIT;
	struct wd_err err;
	int fd = -1, seals;

	(void)state;
	conf_defaults(&a);
	snprintf(a.control_path, sizeof(a.control_path), "/tmp/some dir/gw.sock");
	snprintf(a.audit_path, sizeof(a.audit_path), "/var/log/warden/a \"quoted\" log.jsonl");
	snprintf(a.audit_key, sizeof(a.audit_key), "/var/lib/warden/gw key.pem");
	snprintf(a.user, sizeof(a.user), "warden-gw");
	snprintf(a.resolvers[0], sizeof(a.resolvers[0]), "192.0.2.53");
	snprintf(a.resolvers[1], sizeof(a.resolvers[1]), "[2001:db8::53]:5353");
	a.nresolvers = 2;
	a.listen_v6[0] = '\0';
	a.port_dns = 25053;
	a.max_conns_per_run = 7;
	assert_int_equal(gw_handoff_conf_fd(&a, &fd, &err), 0);
	seals = fcntl(fd, F_GET_SEALS);
	assert_true(seals >= 0 && (seals & F_SEAL_WRITE) && (seals & F_SEAL_GROW) &&
		    (seals & F_SEAL_SHRINK) && (seals & F_SEAL_SEAL));
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_true(write(fd, "x", 1) < 0); /* sealed: the worker reads what the parent wrote */
	assert_int_equal(gw_handoff_conf_read(fd, &b, &err), 0);
	render(&a, &ya);
	render(&b, &yb);
	assert_string_equal(wd_buf_cstr(&ya), wd_buf_cstr(&yb));
	assert_string_equal(b.control_path, a.control_path);
	assert_string_equal(b.audit_path, a.audit_path);
	assert_string_equal(b.audit_key, a.audit_key);
	assert_int_equal(b.nresolvers, 2);
	assert_string_equal(b.listen_v6, "");
	/* read twice: pread, the offset does not matter */
	assert_int_equal(gw_handoff_conf_read(fd, &b, &err), 0);
	close(fd);
	wd_buf_free(&ya);
	wd_buf_free(&yb);
}

/* parse @yaml: 0 or -EINVAL; the first diagnostic's text into @why */
static int parse(const char *yaml, struct wd_gwconf *c, char *why, size_t size)
{
	struct policy_diags d;
	int r;

	policy_diags_init(&d);
	r = conf_parse(yaml, strlen(yaml), "gw.yaml", c, &d);
	snprintf(why, size, "%s", d.n ? d.v[0].msg : "");
	policy_diags_free(&d);
	return r;
}

/* mode: proxy listens on loopback (by default, and only there) and survives the handoff's
 * rendering; the default mode is written as transparent */
static void test_conf_proxy_mode(void **state)
{
	struct wd_gwconf a, b;
	struct wd_buf ya = WD_BUF_INIT, yb = WD_BUF_INIT;
	char why[512];

	(void)state;
	assert_int_equal(parse("version: 1\n", &a, why, sizeof(why)), 0);
	assert_int_equal(a.mode, WD_GW_TRANSPARENT);
	render(&a, &ya);
	assert_non_null(strstr(wd_buf_cstr(&ya), "\nmode: transparent\n"));
	wd_buf_free(&ya);

	assert_int_equal(parse("version: 1\nmode: proxy\n", &a, why, sizeof(why)), 0);
	assert_int_equal(a.mode, WD_GW_PROXY);
	assert_string_equal(a.listen_v4, "127.0.0.1");
	assert_string_equal(a.listen_v6, "::1");
	render(&a, &ya);
	assert_int_equal(parse(wd_buf_cstr(&ya), &b, why, sizeof(why)), 0);
	render(&b, &yb);
	assert_string_equal(wd_buf_cstr(&ya), wd_buf_cstr(&yb));
	assert_int_equal(b.mode, WD_GW_PROXY);
	wd_buf_free(&ya);
	wd_buf_free(&yb);

	/* one family off, another loopback address: kept */
	assert_int_equal(parse("version: 1\nmode: proxy\nlisten: {v4: 127.0.0.2, v6: \"\"}\n", &a,
			       why, sizeof(why)),
			 0);
	assert_string_equal(a.listen_v4, "127.0.0.2");
	assert_string_equal(a.listen_v6, "");
	/* the same listen keys in transparent mode: any address is fine (the control) */
	assert_int_equal(
	    parse("version: 1\nlisten: {v4: 0.0.0.0, v6: \"::\"}\n", &a, why, sizeof(why)), 0);
	assert_int_equal(
	    parse("version: 1\nmode: proxy\nlisten: {v4: 0.0.0.0}\n", &a, why, sizeof(why)),
	    -EINVAL);
	assert_non_null(strstr(why, "listen.v4: `0.0.0.0` is not a loopback address"));
	assert_int_equal(
	    parse("version: 1\nmode: proxy\nlisten: {v6: \"::\"}\n", &a, why, sizeof(why)),
	    -EINVAL);
	assert_non_null(strstr(why, "listen.v6: `::` is not ::1"));
	assert_int_equal(parse("version: 1\nmode: Proxy\n", &a, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "expected `transparent` or `proxy`"));
}

/* anything but the parent's sealed memfd is refused: an unsealed memfd, a file, a pipe,
 * a sealed memfd holding a bad config */
static void test_conf_refused(void **state)
{
	static const char yaml[] = "version: 1\nports: {dns: 53}\n";
	struct wd_gwconf c;
	struct wd_err err;
	char tmpl[] = "/tmp/wd-handoff-XXXXXX";
	int fd, p[2];

	(void)state;
	fd = memfd_create("x", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, yaml, sizeof(yaml) - 1), (ssize_t)sizeof(yaml) - 1);
	assert_int_equal(gw_handoff_conf_read(fd, &c, &err), -EBADF);
	assert_non_null(strstr(err.msg, "sealed"));
	assert_int_equal(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK), 0);
	assert_int_equal(gw_handoff_conf_read(fd, &c, &err), 0); /* the positive control */
	close(fd);

	fd = mkstemp(tmpl);
	assert_true(fd >= 0);
	unlink(tmpl);
	assert_int_equal(write(fd, yaml, sizeof(yaml) - 1), (ssize_t)sizeof(yaml) - 1);
	assert_int_equal(gw_handoff_conf_read(fd, &c, &err), -EBADF);
	close(fd);

	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_int_equal(gw_handoff_conf_read(p[0], &c, &err), -EBADF);
	close(p[0]);
	close(p[1]);

	fd = memfd_create("x", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "version: 1\nno_such_key: 1\n", 26), 26);
	assert_int_equal(fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK), 0);
	assert_int_equal(gw_handoff_conf_read(fd, &c, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "no_such_key"));
	close(fd);
}

/* an explicit worker path: a safe executable is opened; an unsafe or missing one is refused */
static void test_find_worker(void **state)
{
	char dir[] = "/tmp/wd-handoff-XXXXXX", f[64], got[256];
	struct wd_err err;
	int fd = -1, w;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(f, sizeof(f), "%s/worker", dir);
	w = open(f, O_WRONLY | O_CREAT | O_CLOEXEC, 0755);
	assert_true(w >= 0);
	close(w);
	assert_int_equal(chmod(f, 0755), 0);
	assert_int_equal(gw_handoff_find_worker(f, &fd, got, sizeof(got), &err), 0);
	assert_string_equal(got, f);
	assert_true(fd >= 0 && (fcntl(fd, F_GETFD) & FD_CLOEXEC));
	assert_true((fcntl(fd, F_GETFL) & O_PATH) == O_PATH);
	close(fd);

	assert_int_equal(chmod(f, 0775), 0);
	assert_int_equal(gw_handoff_find_worker(f, &fd, got, sizeof(got), &err), -EPERM);
	assert_non_null(strstr(err.msg, "writable by group or others"));
	assert_int_equal(chmod(f, 0757), 0);
	assert_int_equal(gw_handoff_find_worker(f, &fd, got, sizeof(got), &err), -EPERM);
	assert_int_equal(chmod(f, 0644), 0);
	assert_int_equal(gw_handoff_find_worker(f, &fd, got, sizeof(got), &err), -EACCES);
	assert_int_equal(gw_handoff_find_worker(dir, &fd, got, sizeof(got), &err), -EACCES);
	unlink(f);
	assert_int_equal(gw_handoff_find_worker(f, &fd, got, sizeof(got), &err), -ENOENT);
	assert_non_null(strstr(err.msg, "--worker"));
	rmdir(dir);
}

/* the exec: the two descriptors arrive as 3 and 4 (also when they were 4 and 3 before),
 * nothing else above 2 is inherited, not even a descriptor without FD_CLOEXEC */
static void test_exec_fds(void **state)
{
	static const char script[] = "[ \"$(readlink /proc/self/fd/3)\" = \"$0\" ] || exit 11;"
				     "[ \"$(readlink /proc/self/fd/4)\" = \"$1\" ] || exit 12;"
				     "for n in 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do"
				     "  [ -e /proc/self/fd/$n ] && exit $((20 + n)); done; exit 0";
	struct wd_err err;
	char got[256];
	int p[2], q[2], leak, exe, status;
	pid_t pid;

	(void)state;
	assert_int_equal(gw_handoff_find_worker("/bin/sh", &exe, got, sizeof(got), &err), 0);
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_int_equal(pipe2(q, O_CLOEXEC), 0);
	leak = dup(p[0]); /* no FD_CLOEXEC: must not reach the worker all the same */
	assert_true(leak >= 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* pass q[1] as 3 and p[1] as 4: when they are 4 and 3 already, they swap */
		int pass[2] = {q[1], p[1]};
		char a3[64], a4[64];
		struct stat s3, s4;
		char *argv[] = {"sh", "-c", (char *)script, a3, a4, NULL};

		fstat(q[1], &s3);
		fstat(p[1], &s4);
		snprintf(a3, sizeof(a3), "pipe:[%lu]", (unsigned long)s3.st_ino);
		snprintf(a4, sizeof(a4), "pipe:[%lu]", (unsigned long)s4.st_ino);
		gw_handoff_exec(exe, pass, 2, argv);
		_exit(99);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(gw_handoff_exec(-1, p, 1, NULL), -EINVAL);
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
	close(leak);
	close(exe);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_conf_roundtrip),  cmocka_unit_test(test_conf_refused),
	    cmocka_unit_test(test_conf_proxy_mode), cmocka_unit_test(test_find_worker),
	    cmocka_unit_test(test_exec_fds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

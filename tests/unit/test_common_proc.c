/* test_common_proc.c - the /proc/<pid>/stat reader of common/proc.c: the pure parser on
 * made-up lines (names with spaces and parentheses, cut lines, bad numbers) and the reader
 * on this process, a zombie child and a pid that cannot exist; wd_parse_uint() on ids; the
 * /proc/<pid>/status reader: the pure parsers on made-up texts (a missing line, a name that
 * only begins like the key, a malformed value) and the readers on /proc/self, a child of
 * other ids and a pid that cannot exist. */
#include "common/common.h"

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

/* a stat line of @comm whose field 22 is @start (the other fields are small numbers) */
static int make_line(char *out, size_t size, const char *comm, char state, const char *start)
{
	int n = snprintf(out, size, "4242 (%s) %c", comm, state);

	for (int field = 4; field <= 52; field++)
		n += snprintf(out + n, size - (size_t)n, " %s", field == 22 ? start : "7");
	n += snprintf(out + n, size - (size_t)n, "\n");
	return n;
}

static void test_parse(void **state)
{
	static const char *const comms[] = {"sh", "a b", "x) S 1 2 (y", ")", "((", ""};
	char line[1024];
	unsigned long long start;
	char st;
	int n;

	(void)state;
	for (size_t i = 0; i < WD_ARRAY_SIZE(comms); i++) {
		start = 0;
		st = '?';
		n = make_line(line, sizeof(line), comms[i], 'S', "123456789");
		assert_int_equal(wd_proc_stat_parse(line, (size_t)n, &start, &st), 0);
		assert_true(start == 123456789ULL);
		assert_int_equal(st, 'S');
	}
	n = make_line(line, sizeof(line), "z", 'Z', "18446744073709551615");
	assert_int_equal(wd_proc_stat_parse(line, (size_t)n, &start, NULL), 0);
	assert_true(start == 18446744073709551615ULL);
	/* the last field, without the newline */
	n = snprintf(line, sizeof(line), "1 (a) R");
	for (int field = 4; field <= 22; field++)
		n += snprintf(line + n, sizeof(line) - (size_t)n, " %d", field);
	assert_int_equal(wd_proc_stat_parse(line, (size_t)n, &start, &st), 0);
	assert_true(start == 22);
}

static void test_parse_bad(void **state)
{
	char line[1024];
	unsigned long long start = 77;
	char st = '?';
	int n;

	(void)state;
	assert_int_equal(wd_proc_stat_parse("", 0, &start, &st), -EIO);
	assert_int_equal(wd_proc_stat_parse("4242 sh S 1", 11, &start, &st), -EIO);
	assert_int_equal(wd_proc_stat_parse("4242 (sh)", 9, &start, &st), -EIO);
	assert_int_equal(wd_proc_stat_parse("4242 (sh)S 1", 12, &start, &st), -EIO);
	n = make_line(line, sizeof(line), "sh", 'S', "-1");
	assert_int_equal(wd_proc_stat_parse(line, (size_t)n, &start, &st), -EIO);
	n = make_line(line, sizeof(line), "sh", 'S', "12x");
	assert_int_equal(wd_proc_stat_parse(line, (size_t)n, &start, &st), -EIO);
	n = make_line(line, sizeof(line), "sh", 'S', "18446744073709551616");
	assert_int_equal(wd_proc_stat_parse(line, (size_t)n, &start, &st), -EIO);
	/* cut before field 22, and cut right at its start */
	(void)make_line(line, sizeof(line), "sh", 'S', "99");
	assert_int_equal(wd_proc_stat_parse(line, 40, &start, &st), -EIO);
	assert_int_equal(
	    wd_proc_stat_parse(line, (size_t)(strstr(line, " 99 ") - line + 1), &start, &st), -EIO);
	/* nothing written on failure */
	assert_true(start == 77);
	assert_int_equal(st, '?');
}

static void test_read(void **state)
{
	unsigned long long self = 0, bypid = 0, child = 0;
	char st = '?';
	pid_t pid;

	(void)state;
	assert_int_equal(wd_proc_stat(0, &self, &st), 0);
	assert_true(self > 0);
	assert_int_equal(st, 'R');
	assert_int_equal(wd_proc_stat(getpid(), &bypid, NULL), 0);
	assert_true(bypid == self);
	assert_int_equal(wd_proc_stat(2147483600, &bypid, NULL), -ENOENT);
	assert_int_equal(wd_proc_stat(-1, &bypid, NULL), -EINVAL);

	/* a child that exited and was not reaped yet: a zombie with its own start time */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	for (int i = 0; i < 500; i++) {
		struct timespec ms = {0, 10000000};

		assert_int_equal(wd_proc_stat(pid, &child, &st), 0);
		if (st == 'Z')
			break;
		nanosleep(&ms, NULL);
	}
	assert_int_equal(st, 'Z');
	assert_true(child >= self);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	assert_int_equal(wd_proc_stat(pid, &child, &st), -ENOENT);
}

/* wd_parse_uint(): the whole text is the number, or it is refused (atoi would take each) */
static void test_parse_uint(void **state)
{
	static const char *const bad[] = {"", "-1", "+1", " 1", "1 ", "12x", "0x10", "01", "1e3"};
	unsigned long long v = 7;

	(void)state;
	assert_int_equal(wd_parse_uint("0", UINT32_MAX, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(wd_parse_uint("1000", UINT32_MAX, &v), 0);
	assert_int_equal(v, 1000);
	assert_int_equal(wd_parse_uint("4294967295", UINT32_MAX, &v), 0);
	assert_int_equal(v, UINT32_MAX);
	assert_int_equal(wd_parse_uint("18446744073709551615", ULLONG_MAX, &v), 0);
	assert_true(v == ULLONG_MAX);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(wd_parse_uint(bad[i], UINT32_MAX, &v), -EINVAL);
	assert_int_equal(wd_parse_uint(NULL, UINT32_MAX, &v), -EINVAL);
	/* atoi("4294968296") is 1000 on this ABI: a uid that wraps must not become another */
	v = 7;
	assert_int_equal(wd_parse_uint("4294968296", UINT32_MAX, &v), -ERANGE);
	assert_int_equal(wd_parse_uint("4294967296", UINT32_MAX, &v), -ERANGE);
	assert_int_equal(wd_parse_uint("18446744073709551616", ULLONG_MAX, &v), -ERANGE);
	assert_int_equal(wd_parse_uint("6", 5, &v), -ERANGE);
	assert_int_equal(v, 7);
}

/* ------------------------------------------------------------ /proc/<pid>/status */

static const char status_text[] = "Name:\tcat\n"
				  "Umask:\t0022\n"
				  "State:\tR (running)\n"
				  "Tgid:\t4242\n"
				  "PPid:\t1\n"
				  "Uid:\t1000\t1001\t1002\t1003\n"
				  "Gid:\t100\t100\t100\t100\n"
				  "NSpid:\t4242\t7\n"
				  "CapEff:\t0000000000000000\n";

static void test_status_parse(void **state)
{
	unsigned long ids[4] = {0}, v = 0;
	char out[64];

	(void)state;
	assert_int_equal(wd_proc_status_parse(status_text, "Name", out, sizeof(out)), 0);
	assert_string_equal(out, "cat");
	assert_int_equal(wd_proc_status_parse(status_text, "State", out, sizeof(out)), 0);
	assert_string_equal(out, "R (running)");
	assert_int_equal(wd_proc_status_parse(status_text, "NSpid", out, sizeof(out)), 0);
	assert_string_equal(out, "4242\t7");
	assert_int_equal(wd_proc_status_parse(status_text, "CapEff", out, sizeof(out)), 0);
	assert_int_equal(wd_proc_status_num_parse(out, 16, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(wd_proc_status_parse(status_text, "Umask", out, sizeof(out)), 0);
	assert_int_equal(wd_proc_status_num_parse(out, 8, &v), 0);
	assert_int_equal(v, 022);
	assert_int_equal(wd_proc_status_parse(status_text, "Uid", out, sizeof(out)), 0);
	assert_int_equal(wd_proc_status_ids_parse(out, ids), 0);
	assert_int_equal(ids[0], 1000);
	assert_int_equal(ids[1], 1001);
	assert_int_equal(ids[2], 1002);
	assert_int_equal(ids[3], 1003);
	/* a whole name at the start of a line only */
	assert_int_equal(wd_proc_status_parse(status_text, "Ui", out, sizeof(out)), -ENOENT);
	assert_int_equal(wd_proc_status_parse(status_text, "pid", out, sizeof(out)), -ENOENT);
	assert_int_equal(wd_proc_status_parse(status_text, "Groups", out, sizeof(out)), -ENOENT);
	assert_int_equal(wd_proc_status_parse("", "Uid", out, sizeof(out)), -ENOENT);
	/* a value longer than the buffer is refused, not cut */
	assert_int_equal(wd_proc_status_parse(status_text, "Uid", out, 8), -ERANGE);
}

static void test_status_malformed(void **state)
{
	static const char *const bad_ids[] = {
	    "1000\t1000\t1000",		    /* three */
	    "1000\t1000\t1000\t1000\t7",    /* five */
	    "1000\t1000\t-1\t1000",	    /* a sign */
	    "1000\t1000\tx\t1000",	    /* no number */
	    "1000\t\t1000\t1000",	    /* an empty one */
	    "1000\t1000\t1000\t4294967296", /* past a uid */
	    "1000 1000 1000 1000",	    /* not the kernel's separator */
	    "",
	};
	static const char *const bad_num[] = {"", "-1", "+1", " 1", "12x", "1 2"};
	unsigned long ids[4] = {7, 7, 7, 7}, v = 7;
	char out[64];

	(void)state;
	for (size_t i = 0; i < sizeof(bad_ids) / sizeof(bad_ids[0]); i++)
		assert_int_equal(wd_proc_status_ids_parse(bad_ids[i], ids), -EIO);
	assert_int_equal(ids[0], 7); /* nothing written on failure */
	for (size_t i = 0; i < sizeof(bad_num) / sizeof(bad_num[0]); i++)
		assert_int_equal(wd_proc_status_num_parse(bad_num[i], 10, &v), -EIO);
	assert_int_equal(wd_proc_status_num_parse("0089", 8, &v), -EIO); /* not octal */
	assert_int_equal(v, 7);
	/* the name without its colon */
	assert_int_equal(wd_proc_status_parse("Name:\tx\nUid 1000\n", "Uid", out, sizeof(out)),
			 -EIO);
	assert_int_equal(wd_proc_status_parse("Uid", "Uid", out, sizeof(out)), -EIO);
}

/* The pid the kernel never hands out (pids are below pid_max). */
static pid_t no_such_pid(void)
{
	char buf[32] = {0};
	int fd = open("/proc/sys/kernel/pid_max", O_RDONLY | O_CLOEXEC);
	long max;

	assert_true(fd >= 0);
	assert_true(read(fd, buf, sizeof(buf) - 1) > 0);
	close(fd);
	max = strtol(buf, NULL, 10);
	assert_true(max > 1);
	return (pid_t)max;
}

static void test_status_read(void **state)
{
	unsigned long ids[4], v;
	char out[64];
	int procfd;

	(void)state;
	/* this process, by 0, by its pid and by its /proc folder */
	assert_int_equal(wd_proc_status_ids(0, "Uid", ids), 0);
	assert_int_equal(ids[0], getuid());
	assert_int_equal(ids[1], geteuid());
	assert_int_equal(wd_proc_status_ids(getpid(), "Gid", ids), 0);
	assert_int_equal(ids[0], getgid());
	assert_int_equal(ids[1], getegid());
	assert_int_equal(wd_proc_status_num(getpid(), "Tgid", 10, &v), 0);
	assert_int_equal(v, getpid());
	assert_int_equal(wd_proc_status_num(0, "PPid", 10, &v), 0);
	assert_int_equal(v, getppid());
	{
		mode_t m = umask(027);

		assert_int_equal(wd_proc_status_num(0, "Umask", 8, &v), 0);
		assert_int_equal(v, 027);
		umask(m);
	}
	procfd = open("/proc/self", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(procfd >= 0);
	assert_int_equal(wd_proc_status_field_at(procfd, "PPid", out, sizeof(out)), 0);
	assert_int_equal(wd_proc_status_num_parse(out, 10, &v), 0);
	assert_int_equal(v, getppid());
	assert_int_equal(wd_proc_status_field_at(procfd, "NoSuchField", out, sizeof(out)), -ENOENT);
	close(procfd);
	/* a pid that cannot exist, a negative one */
	assert_int_equal(wd_proc_status_field(no_such_pid(), "Uid", out, sizeof(out)), -ENOENT);
	assert_int_equal(wd_proc_status_ids(no_such_pid(), "Uid", ids), -ENOENT);
	assert_int_equal(wd_proc_status_num(-1, "PPid", 10, &v), -EINVAL);
	/* a field that is not a number, read as one */
	assert_int_equal(wd_proc_status_num(0, "State", 10, &v), -EIO);
	assert_int_equal(wd_proc_status_ids(0, "Tgid", ids), -EIO);
}

/* As root: a child of other ids shows them, all four (the reader reads whose it says). */
static void test_status_other_ids(void **state)
{
	unsigned long uid[4], gid[4];
	int go[2], ready[2];
	pid_t pid;
	char c;

	(void)state;
	if (geteuid() != 0)
		skip();
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	assert_int_equal(pipe2(ready, O_CLOEXEC), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		close(go[1]);
		close(ready[0]);
		if (setresgid(65534, 65533, 65532) < 0 || setresuid(65531, 65530, 65529) < 0)
			_exit(1);
		(void)!write(ready[1], "r", 1);
		(void)!read(go[0], &c, 1);
		_exit(0);
	}
	close(go[0]);
	close(ready[1]);
	assert_int_equal(read(ready[0], &c, 1), 1);
	assert_int_equal(wd_proc_status_ids(pid, "Uid", uid), 0);
	assert_int_equal(wd_proc_status_ids(pid, "Gid", gid), 0);
	close(go[1]);
	close(ready[0]);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	/* setresuid sets the fs id to the effective one */
	assert_int_equal(uid[0], 65531);
	assert_int_equal(uid[1], 65530);
	assert_int_equal(uid[2], 65529);
	assert_int_equal(uid[3], 65530);
	assert_int_equal(gid[0], 65534);
	assert_int_equal(gid[1], 65533);
	assert_int_equal(gid[2], 65532);
	assert_int_equal(gid[3], 65533);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse),	 cmocka_unit_test(test_parse_bad),
	    cmocka_unit_test(test_read),	 cmocka_unit_test(test_parse_uint),
	    cmocka_unit_test(test_status_parse), cmocka_unit_test(test_status_malformed),
	    cmocka_unit_test(test_status_read),	 cmocka_unit_test(test_status_other_ids),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

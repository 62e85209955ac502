/* test_common_proc.c - the /proc/<pid>/stat reader of common/proc.c: the pure parser on
 * made-up lines (names with spaces and parentheses, cut lines, bad numbers) and the reader
 * on this process, a zombie child and a pid that cannot exist; wd_parse_uint() on ids. */
#include "common/common.h"

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse),
	    cmocka_unit_test(test_parse_bad),
	    cmocka_unit_test(test_read),
	    cmocka_unit_test(test_parse_uint),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

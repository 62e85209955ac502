/* test_common_path.c - wd_path_fold() (common/path.c), the one lexical path folder: its edge
 * cases (.., //, a leading .., a trailing /, empty, relative, too long, in place). */
#include "common/common.h"

#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

static void assert_fold(const char *in, const char *want)
{
	char out[PATH_MAX], same[PATH_MAX];

	memset(out, 'x', sizeof(out));
	assert_int_equal(wd_path_fold(in, out, sizeof(out)), 0);
	assert_string_equal(out, want);
	/* in place gives the same */
	snprintf(same, sizeof(same), "%s", in);
	assert_int_equal(wd_path_fold(same, same, sizeof(same)), 0);
	assert_string_equal(same, want);
}

static void test_fold(void **state)
{
	(void)state;
	assert_fold("/", "/");
	assert_fold("//", "/");
	assert_fold("///a//b///", "/a/b");
	assert_fold("/a/", "/a");
	assert_fold("/a/./b/../c", "/a/c");
	assert_fold("/a/b/..", "/a");
	assert_fold("/a/b/../..", "/");
	assert_fold("/..", "/");
	assert_fold("/../../a", "/a");
	assert_fold("/./.", "/");
	assert_fold("/a/.../b", "/a/.../b");
	assert_fold("/a/..b/.c/b..", "/a/..b/.c/b..");
	assert_fold("/home/u/x/../../v/./w/", "/home/v/w");
}

static void test_refused(void **state)
{
	char out[16] = "untouched";

	(void)state;
	assert_int_equal(wd_path_fold(NULL, out, sizeof(out)), -EINVAL);
	assert_int_equal(wd_path_fold("", out, sizeof(out)), -EINVAL);
	assert_int_equal(wd_path_fold("a/b", out, sizeof(out)), -EINVAL);
	assert_int_equal(wd_path_fold("./a", out, sizeof(out)), -EINVAL);
	assert_string_equal(out, "untouched");
	/* the room is for the input, whatever the fold would make of it */
	assert_int_equal(wd_path_fold("/aaaaaaaaaaaaaaa", out, sizeof(out)), -ENAMETOOLONG);
	assert_int_equal(wd_path_fold("/a/b/c/d/e/f/../..", out, sizeof(out)), -ENAMETOOLONG);
	assert_string_equal(out, "untouched");
	assert_int_equal(wd_path_fold("/aaaaaaaaaaaaaa", out, sizeof(out)), 0);
	assert_string_equal(out, "/aaaaaaaaaaaaaa");
}

/* what this system calls absolute (the gateway configuration's paths): built and run on Linux
 * and, in tests/cross/run-windows, on Windows */
static void test_absolute(void **state)
{
	(void)state;
	assert_false(wd_path_absolute(""));
	assert_false(wd_path_absolute("a/b"));
	assert_false(wd_path_absolute("./a"));
	assert_false(wd_path_absolute("C:x"));
	assert_false(wd_path_absolute("C:"));
#ifdef _WIN32
	assert_true(wd_path_absolute("C:\\Users\\a\\audit.jsonl"));
	assert_true(wd_path_absolute("z:/tmp/a"));
	assert_true(wd_path_absolute("\\\\server\\share\\a"));
	assert_true(wd_path_absolute("\\\\?\\C:\\a"));
	/* rooted on the current drive: not absolute */
	assert_false(wd_path_absolute("\\a"));
	assert_false(wd_path_absolute("/a"));
	assert_false(wd_path_absolute("1:\\a"));
#else
	assert_true(wd_path_absolute("/"));
	assert_true(wd_path_absolute("/run/warden/gateway.sock"));
	assert_false(wd_path_absolute("C:\\Users\\a"));
	assert_false(wd_path_absolute("\\\\server\\share"));
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fold),
	    cmocka_unit_test(test_absolute),
	    cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_common_atomic.c - replacing a file whole (common/atomic.c): the new content appears
 * only at commit, a failure or an abort leaves the old file and no temporary file, and the
 * file is made 0600 without following a link planted at the temporary name. */
#include "common/common.h"

#include <dirent.h>
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
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/wd-atomic-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* the number of entries in the folder, "." and ".." aside */
static int entries(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void read_back(const char *path, const char *want)
{
	char *data = NULL;
	size_t len = 0;

	assert_int_equal(wd_read_file(path, 4096, &data, &len), 0);
	assert_int_equal(len, strlen(want));
	assert_memory_equal(data, want, len);
	free(data);
}

static void test_write_and_replace(void **state)
{
	char p[PATH_MAX];
	struct stat st;

	(void)state;
	snprintf(p, sizeof(p), "%s/state", dir);
	assert_int_equal(wd_write_file_atomic(AT_FDCWD, p, "one\n", 4, 0), 0);
	read_back(p, "one\n");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(wd_write_file_atomic(AT_FDCWD, p, "two, longer\n", 12, WD_ATOMIC_SYNC), 0);
	read_back(p, "two, longer\n");
	assert_int_equal(entries(), 1);
}

static void test_relative_to_dfd(void **state)
{
	char p[PATH_MAX];
	int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);

	(void)state;
	assert_true(dfd >= 0);
	assert_int_equal(wd_write_file_atomic(dfd, "rel.json", "{}\n", 3, 0), 0);
	close(dfd);
	snprintf(p, sizeof(p), "%s/rel.json", dir);
	read_back(p, "{}\n");
}

static void test_nothing_before_commit_abort_leaves_old(void **state)
{
	char p[PATH_MAX];
	struct wd_atomic a;

	(void)state;
	snprintf(p, sizeof(p), "%s/policy.yaml", dir);
	assert_int_equal(wd_write_file_atomic(AT_FDCWD, p, "old\n", 4, 0), 0);
	assert_int_equal(wd_atomic_open(&a, AT_FDCWD, p, 0), 0);
	assert_int_equal(wd_write_all(a.fd, "new\n", 4), 0);
	read_back(p, "old\n"); /* not yet */
	assert_int_equal(entries(), 2);
	wd_atomic_abort(&a);
	read_back(p, "old\n");
	assert_int_equal(entries(), 1);
	assert_int_equal(wd_atomic_open(&a, AT_FDCWD, p, 0), 0);
	assert_int_equal(wd_write_all(a.fd, "new\n", 4), 0);
	assert_int_equal(wd_atomic_commit(&a), 0);
	read_back(p, "new\n");
	assert_int_equal(entries(), 1);
}

/* a link planted at the temporary name is not followed: its target stays untouched */
static void test_planted_link_not_followed(void **state)
{
	char p[PATH_MAX], tmp[PATH_MAX], victim[PATH_MAX];

	(void)state;
	snprintf(p, sizeof(p), "%s/live", dir);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(tmp, sizeof(tmp), "%s/.live.%ld.tmp", dir, (long)getpid());
	assert_int_equal(wd_write_file_atomic(AT_FDCWD, victim, "victim\n", 7, 0), 0);
	assert_int_equal(symlink(victim, tmp), 0);
	assert_int_equal(wd_write_file_atomic(AT_FDCWD, p, "live\n", 5, 0), 0);
	read_back(victim, "victim\n");
	read_back(p, "live\n");
	assert_int_equal(entries(), 2);
}

/* a failure: the folder is missing, the name is a folder, the name is empty */
static void test_failures_leave_nothing(void **state)
{
	char p[PATH_MAX];

	(void)state;
	snprintf(p, sizeof(p), "%s/missing/state", dir);
	assert_int_equal(wd_write_file_atomic(AT_FDCWD, p, "x", 1, 0), -ENOENT);
	snprintf(p, sizeof(p), "%s/sub", dir);
	assert_int_equal(mkdir(p, 0700), 0);
	assert_int_equal(wd_write_file_atomic(AT_FDCWD, p, "x", 1, 0), -EISDIR);
	assert_int_equal(entries(), 1);
	snprintf(p, sizeof(p), "%s/", dir);
	assert_int_equal(wd_write_file_atomic(AT_FDCWD, p, "x", 1, 0), -EINVAL);
	assert_int_equal(wd_write_file_atomic(AT_FDCWD, "..", "x", 1, 0), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_write_and_replace, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_relative_to_dfd, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_nothing_before_commit_abort_leaves_old, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_planted_link_not_followed, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_failures_leave_nothing, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

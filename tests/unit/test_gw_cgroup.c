/* test_gw_cgroup.c - unit tests for a daemon-mode run's cgroup plan (gateway/cgroup.c): the
 * limit files of cgroup v2 and v1, and what is delegated to the run's user; the v2 folders and
 * the daemon's cgroup_join (a process moved in for its user) below a fake cgroup root in a
 * temporary folder: this machine has cgroup v1 only, so the v2 path never runs on a real
 * hierarchy here. Making real cgroups needs root and is run_daemon.sh's (v1). */
#include "gateway/cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static void test_v2(void **state)
{
	struct policy_limits lim = {.memory_mb = 256, .pids = 100, .cpu_milli = 1500};
	struct gw_cgroup_file f[GW_CGROUP_FILES];
	size_t n;

	(void)state;
	n = gw_cgroup_limit_files(GW_CGROUP_V2, 0, &lim, f);
	assert_int_equal(n, 4);
	assert_string_equal(f[0].name, "memory.max");
	assert_string_equal(f[0].value, "268435456");
	assert_string_equal(f[1].name, "memory.swap.max");
	assert_string_equal(f[1].value, "0");
	assert_string_equal(f[2].name, "pids.max");
	assert_string_equal(f[2].value, "100");
	assert_string_equal(f[3].name, "cpu.max");
	assert_string_equal(f[3].value, "150000 100000");
	/* no limits: nothing written (the cgroup still tracks the run's processes) */
	memset(&lim, 0, sizeof(lim));
	assert_int_equal(gw_cgroup_limit_files(GW_CGROUP_V2, 0, &lim, f), 0);
	/* v2 has one folder */
	lim.pids = 5;
	assert_int_equal(gw_cgroup_limit_files(GW_CGROUP_V2, 1, &lim, f), 0);
}

static void test_v1(void **state)
{
	struct policy_limits lim = {.memory_mb = 64, .pids = 32, .cpu_milli = 500};
	struct gw_cgroup_file f[GW_CGROUP_FILES];

	(void)state;
	assert_int_equal(gw_cgroup_limit_files(GW_CGROUP_V1, 0, &lim, f), 1);
	assert_string_equal(f[0].name, "memory.limit_in_bytes");
	assert_string_equal(f[0].value, "67108864");
	assert_int_equal(gw_cgroup_limit_files(GW_CGROUP_V1, 1, &lim, f), 1);
	assert_string_equal(f[0].name, "pids.max");
	assert_string_equal(f[0].value, "32");
	assert_int_equal(gw_cgroup_limit_files(GW_CGROUP_V1, 2, &lim, f), 2);
	assert_string_equal(f[0].name, "cpu.cfs_period_us");
	assert_string_equal(f[0].value, "100000");
	assert_string_equal(f[1].name, "cpu.cfs_quota_us");
	assert_string_equal(f[1].value, "50000");
	assert_int_equal(gw_cgroup_limit_files(GW_CGROUP_NONE, 0, &lim, f), 0);
}

static void test_delegated(void **state)
{
	size_t n;
	const char *const *v;

	(void)state;
	v = gw_cgroup_delegated(GW_CGROUP_V2, &n);
	assert_int_equal(n, 3);
	assert_string_equal(v[0], "cgroup.procs");
	assert_string_equal(v[1], "cgroup.threads");
	assert_string_equal(v[2], "cgroup.subtree_control");
	v = gw_cgroup_delegated(GW_CGROUP_V1, &n);
	assert_int_equal(n, 2);
	assert_string_equal(v[0], "cgroup.procs");
	assert_string_equal(v[1], "tasks");
	/* the limit files themselves are never the user's */
	for (size_t i = 0; i < n; i++)
		assert_null(strstr(v[i], "max"));
	gw_cgroup_delegated(GW_CGROUP_NONE, &n);
	assert_int_equal(n, 0);
}

/* an empty file at @dir/@name, as the kernel makes a cgroup's */
static void touch(const char *dir, const char *name)
{
	char p[PATH_MAX];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "we");
	assert_non_null(f);
	fclose(f);
}

/* a child that waits; with @own_netns in a user and network namespace of its own first.
 * Return: its pid, once it is there */
static pid_t child(bool own_netns)
{
	int p[2];
	char c;
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(p[0]);
		if (own_netns && unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0)
			_exit(1);
		if (write(p[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* cgroup v2 below a fake root: <root>/warden/<id> delegated, then the daemon moves in only a
 * process of the run's user in the run's namespace */
static void test_v2_join(void **state)
{
	char root[] = "/tmp/wd-cgroot-XXXXXX", p[PATH_MAX], why[300], *text = NULL;
	struct policy_limits none = {0};
	struct gw_cgroup cg, empty;
	uid_t uid = getuid() ? getuid() : 4242, other = uid + 1;
	gid_t gid = getuid() ? getgid() : 4242;
	struct stat st;
	size_t len = 0;
	pid_t run, host;
	int netns;

	(void)state;
	assert_non_null(mkdtemp(root));
	touch(root, "cgroup.controllers");
	/* the run's folder, delegated (no limits: the kernel's limit files are not there) */
	assert_int_equal(gw_cgroup_create_in(&cg, root, "run1", &none, uid, gid, why, sizeof(why)),
			 0);
	assert_int_equal(cg.kind, GW_CGROUP_V2);
	snprintf(p, sizeof(p), "%s/warden/run1", root);
	assert_string_equal(cg.dir[0], p);
	assert_string_equal(cg.dir[1], "");
	assert_int_equal(stat(cg.dir[0], &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_uid, uid);
	/* a second run of that id: refused, the first one's folder kept */
	assert_int_equal(
	    gw_cgroup_create_in(&empty, root, "run1", &none, uid, gid, why, sizeof(why)), -EEXIST);
	assert_int_equal(stat(cg.dir[0], &st), 0);
	/* what the kernel makes in a new cgroup */
	touch(cg.dir[0], "cgroup.procs");

	run = child(true);   /* the launcher's child, in the run's namespace */
	host = child(false); /* a process of the same user outside it */
	snprintf(p, sizeof(p), "/proc/%d/ns/net", (int)run);
	netns = open(p, O_RDONLY | O_CLOEXEC);
	assert_true(netns >= 0);
	/* getuid()'s processes are not another user's */
	assert_int_equal(gw_cgroup_join(&cg, run, other, netns, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "is not uid"));
	if (getuid() == 0) {
		/* as root: the run's user is 4242, these processes are root's */
		assert_int_equal(gw_cgroup_join(&cg, run, uid, netns, why, sizeof(why)), -EPERM);
		uid = 0;
	}
	assert_int_equal(gw_cgroup_join(&cg, host, uid, netns, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "not in the run's network namespace"));
	assert_int_equal(gw_cgroup_join(&cg, 1, uid, netns, why, sizeof(why)), -EINVAL);
	assert_int_equal(gw_cgroup_join(&cg, 0, uid, netns, why, sizeof(why)), -EINVAL);
	memset(&empty, 0, sizeof(empty));
	assert_int_equal(gw_cgroup_join(&empty, run, uid, netns, why, sizeof(why)), -ENOENT);
	/* nothing was written by a refusal */
	snprintf(p, sizeof(p), "%s/cgroup.procs", cg.dir[0]);
	assert_int_equal(wd_read_file(p, 64, &text, &len), 0);
	assert_int_equal(len, 0);
	free(text);
	/* control: the run's own process, its user's, in its namespace */
	assert_int_equal(gw_cgroup_join(&cg, run, uid, netns, why, sizeof(why)), 0);
	assert_int_equal(wd_read_file(p, 64, &text, &len), 0);
	assert_int_equal(atoi(text), (int)run);
	free(text);
	/* a process that is gone */
	reap(host);
	assert_true(gw_cgroup_join(&cg, host, uid, netns, why, sizeof(why)) < 0);

	close(netns);
	reap(run);
	unlink(p);
	rmdir(cg.dir[0]);
	snprintf(p, sizeof(p), "%s/warden", root);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/cgroup.controllers", root);
	unlink(p);
	assert_int_equal(rmdir(root), 0);
}

/* the service runs with UMask=0027: the folders it makes are 0755 all the same (the run's user,
 * outside the service's group, reads its cgroup's events and limits through them), also a
 * <root>/warden an older gateway left 0750 */
static void test_v2_umask(void **state)
{
	char root[] = "/tmp/wd-cgroot-XXXXXX", p[PATH_MAX], why[300];
	struct policy_limits none = {0};
	struct gw_cgroup cg;
	struct stat st;
	mode_t old = umask(027);

	(void)state;
	assert_non_null(mkdtemp(root));
	touch(root, "cgroup.controllers");
	/* control: under this umask a plain mkdir makes 0750 */
	snprintf(p, sizeof(p), "%s/warden", root);
	assert_int_equal(mkdir(p, 0755), 0);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0750);
	assert_int_equal(
	    gw_cgroup_create_in(&cg, root, "run1", &none, getuid(), getgid(), why, sizeof(why)), 0);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_int_equal(stat(cg.dir[0], &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_int_equal(rmdir(cg.dir[0]), 0);
	/* a fresh <root>/warden too */
	assert_int_equal(rmdir(p), 0);
	assert_int_equal(
	    gw_cgroup_create_in(&cg, root, "run2", &none, getuid(), getgid(), why, sizeof(why)), 0);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	assert_int_equal(stat(cg.dir[0], &st), 0);
	assert_int_equal(st.st_mode & 07777, 0755);
	umask(old);
	assert_int_equal(rmdir(cg.dir[0]), 0);
	assert_int_equal(rmdir(p), 0);
	snprintf(p, sizeof(p), "%s/cgroup.controllers", root);
	unlink(p);
	assert_int_equal(rmdir(root), 0);
}

/* a root with neither v2 nor the v1 mounts: no cgroup, not an error (the launcher samples) */
static void test_no_hierarchy(void **state)
{
	char root[] = "/tmp/wd-cgroot-XXXXXX", why[300];
	struct policy_limits lim = {.pids = 10};
	struct gw_cgroup cg;

	(void)state;
	assert_non_null(mkdtemp(root));
	assert_int_equal(
	    gw_cgroup_create_in(&cg, root, "run1", &lim, getuid(), getgid(), why, sizeof(why)), 0);
	assert_int_equal(cg.kind, GW_CGROUP_NONE);
	assert_string_equal(cg.dir[0], "");
	assert_int_equal(rmdir(root), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_v2),		 cmocka_unit_test(test_v1),
	    cmocka_unit_test(test_delegated),	 cmocka_unit_test(test_v2_join),
	    cmocka_unit_test(test_no_hierarchy), cmocka_unit_test(test_v2_umask),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

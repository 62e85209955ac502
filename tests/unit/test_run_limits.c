/* test_run_limits.c - unit tests for the watch of a run's cgroup v2 limit events
 * (run/limits_watch.c): the keyed events files read (memory.events' oom_kill, pids.events'
 * max), a process's cgroup v2 folder from its /proc/PID/cgroup (and only once it is in the
 * systemd scope asked for), the watch over files of a fake cgroup folder (counts read at open
 * and after a change, never smaller), and the rootless scope's command line (every property and
 * the OOM policy: the vector was one slot short for them), and RLIMIT_NPROC as a backstop
 * above a cgroup's pids.max. This machine has cgroup v1 and no
 * systemd: the real files and the kernel's notification are tests/vm's (docs/vm.md). */
#include "run/run.h"

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
#include <unistd.h>

#include <cmocka.h>

static void test_events_value(void **state)
{
	static const char mem[] = "low 0\nhigh 0\nmax 52\noom 1\noom_kill 3\noom_group_kill 0\n";

	(void)state;
	assert_int_equal(limits_events_value(mem, "oom_kill"), 3);
	assert_int_equal(limits_events_value(mem, "max"), 52);
	assert_int_equal(limits_events_value(mem, "oom"), 1);
	assert_int_equal(limits_events_value(mem, "oom_group_kill"), 0);
	/* a key is a whole word: "oom" is not "oom_kill"'s prefix match, "kill" is nothing */
	assert_int_equal(limits_events_value(mem, "kill"), 0);
	assert_int_equal(limits_events_value(mem, "oom_kil"), 0);
	assert_int_equal(limits_events_value("max 7", "max"), 7);
	assert_int_equal(limits_events_value("", "max"), 0);
	assert_int_equal(limits_events_value("max\n", "max"), 0);
}

static void test_cgroup2_path(void **state)
{
	static const char scope[] = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/"
				    "warden-ab12.scope\n";
	char out[PATH_MAX];

	(void)state;
	assert_int_equal(limits_cgroup2_path(scope, "warden-ab12.scope", out, sizeof(out)), 0);
	assert_string_equal(out, "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/"
				 "app.slice/warden-ab12.scope");
	/* not in that unit (yet): systemd-run has not moved itself */
	assert_int_equal(limits_cgroup2_path("0::/system.slice/x.service\n", "warden-ab12.scope",
					     out, sizeof(out)),
			 -ENOENT);
	/* a unit whose name merely ends the same */
	assert_int_equal(limits_cgroup2_path("0::/app.slice/xwarden-ab12.scope\n",
					     "warden-ab12.scope", out, sizeof(out)),
			 -ENOENT);
	assert_int_equal(
	    limits_cgroup2_path("0::/warden-ab12.scope\n", "warden-ab12.scope", out, sizeof(out)),
	    0);
	assert_string_equal(out, "/sys/fs/cgroup/warden-ab12.scope");
	/* no unit asked: any v2 line; v1 lines are skipped */
	assert_int_equal(
	    limits_cgroup2_path("4:memory:/a\n0::/warden/run1\n", NULL, out, sizeof(out)), 0);
	assert_string_equal(out, "/sys/fs/cgroup/warden/run1");
	assert_int_equal(limits_cgroup2_path("4:memory:/a\n", NULL, out, sizeof(out)), -ENOENT);
	assert_int_equal(limits_cgroup2_path(scope, NULL, out, 20), -ENAMETOOLONG);
}

static void put(const char *dir, const char *name, const char *text)
{
	char p[PATH_MAX];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "we");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_watch(void **state)
{
	char dir[] = "/tmp/wd-cgwatch-XXXXXX", p[PATH_MAX];
	struct limits_watch w;

	(void)state;
	assert_non_null(mkdtemp(dir));
	limits_watch_init(&w);
	assert_int_equal(w.mem_fd, -1);
	/* no events file: an error, nothing open */
	assert_true(limits_watch_open(&w, dir) < 0);
	assert_int_equal(w.mem_fd, -1);
	assert_int_equal(w.pids_fd, -1);
	put(dir, "memory.events", "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n");
	put(dir, "pids.events", "max 0\n");
	assert_int_equal(limits_watch_open(&w, dir), 0);
	assert_true(w.mem_fd >= 0 && w.pids_fd >= 0);
	assert_string_equal(w.dir, dir);
	assert_int_equal(w.oom_kills, 0);
	assert_int_equal(w.pids_refused, 0);
	/* the kernel rewrites the counters in place: a read from the start sees them */
	put(dir, "memory.events", "low 0\nhigh 0\nmax 9\noom 1\noom_kill 1\n");
	put(dir, "pids.events", "max 4\n");
	limits_watch_read(&w);
	assert_int_equal(w.oom_kills, 1);
	assert_int_equal(w.pids_refused, 4);
	/* the cgroup went (its files read nothing): the counts stay */
	put(dir, "memory.events", "");
	put(dir, "pids.events", "max 0\n");
	limits_watch_read(&w);
	assert_int_equal(w.oom_kills, 1);
	assert_int_equal(w.pids_refused, 4);
	limits_watch_close(&w);
	assert_int_equal(w.mem_fd, -1);
	assert_int_equal(w.oom_kills, 1);
	/* only pids.events (no memory controller): still a watch */
	snprintf(p, sizeof(p), "%s/memory.events", dir);
	unlink(p);
	limits_watch_init(&w);
	assert_int_equal(limits_watch_open(&w, dir), 0);
	assert_int_equal(w.mem_fd, -1);
	assert_true(w.pids_fd >= 0);
	limits_watch_close(&w);
	snprintf(p, sizeof(p), "%s/pids.events", dir);
	unlink(p);
	assert_int_equal(rmdir(dir), 0);
}

/* this process is in no "warden-*.scope": the scope watch waits (control: its own cgroup v2
 * line, where the host has one, is read) */
static void test_watch_scope(void **state)
{
	struct limits_watch w;

	(void)state;
	limits_watch_init(&w);
	assert_int_equal(limits_watch_scope(&w, getpid(), "warden-nosuchrun.scope"), -ENOENT);
	assert_int_equal(w.mem_fd, -1);
	assert_int_equal(limits_watch_scope(&w, 0x7ffffff0, "warden-x.scope"), -ENOENT);
}

/* the scope's command line with every limit: all of it there, in order, the OOM policy
 * included (the vector had one slot too few once that was added) */
static void test_scope_argv_full(void **state)
{
	static const char *const want[] = {"systemd-run", "--user",
					   "--scope",	  "--quiet",
					   "--collect",	  "--unit=warden-r1",
					   "-p",	  RUN_SCOPE_OOM_PROPERTY,
					   "-p",	  "MemoryMax=67108864",
					   "-p",	  "MemorySwapMax=0",
					   "-p",	  "TasksMax=32",
					   "-p",	  "CPUQuota=50%",
					   "--",	  "/usr/bin/env",
					   "-i",	  NULL};
	char *cmd[] = {"/usr/bin/env", "-i", NULL};
	struct policy_limits lim = {.memory_mb = 64, .pids = 32, .cpu_milli = 500};
	char **v = run_rootless_scope_argv("r1", &lim, cmd);
	size_t i;

	(void)state;
	assert_non_null(v);
	for (i = 0; want[i]; i++) {
		assert_non_null(v[i]);
		assert_string_equal(v[i], want[i]);
	}
	assert_null(v[i]);
	run_strv_free(v);
}

/* RLIMIT_NPROC: `pids` itself without a cgroup (the fallback's only count), a backstop above it
 * where a cgroup counts (its refusal is the one reported), none without `pids` */
static void test_nproc_backstop(void **state)
{
	(void)state;
	assert_int_equal(run_nproc_backstop(32, false), 32);
	assert_int_equal(run_nproc_backstop(32, true), 32 + RUN_NPROC_SLACK);
	assert_int_equal(run_nproc_backstop(0, true), 0);
	assert_int_equal(run_nproc_backstop(0, false), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_events_value),    cmocka_unit_test(test_cgroup2_path),
	    cmocka_unit_test(test_watch),	    cmocka_unit_test(test_watch_scope),
	    cmocka_unit_test(test_scope_argv_full), cmocka_unit_test(test_nproc_backstop),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

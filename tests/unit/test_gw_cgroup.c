/* test_gw_cgroup.c - unit tests for a daemon-mode run's cgroup plan (gateway/cgroup.c): the
 * limit files of cgroup v2 and v1, and what is delegated to the run's user. Making and removing
 * cgroups needs root and is run_daemon.sh's (v1 on this machine). */
#include "gateway/cgroup.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_v2),
	    cmocka_unit_test(test_v1),
	    cmocka_unit_test(test_delegated),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

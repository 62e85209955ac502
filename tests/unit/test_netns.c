/* test_netns.c - unit tests for netns/'s pure parts (prefixes, slot carving,
 * names, libnl errno mapping, slot records) and the slot allocator on a temp dir. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netlink/errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "netns/netns.h"
#include "netns/netns_internal.h"

static void assert_v4(struct in_addr a, const char *want)
{
	char s[INET_ADDRSTRLEN];

	inet_ntop(AF_INET, &a, s, sizeof(s));
	assert_string_equal(s, want);
}

static void assert_v6(const struct in6_addr *a, const char *want)
{
	char s[INET6_ADDRSTRLEN];

	inet_ntop(AF_INET6, a, s, sizeof(s));
	assert_string_equal(s, want);
}

static void test_parse_prefix_ok(void **state)
{
	struct netns_prefix p;
	char buf[64];

	(void)state;
	assert_int_equal(netns_parse_prefix("10.213.0.0/16", &p), 0);
	assert_int_equal(p.family, AF_INET);
	assert_int_equal(p.len, 16);
	assert_v4(p.v4, "10.213.0.0");
	assert_int_equal(netns_parse_prefix("fd77:7764:6e00::/48", &p), 0);
	assert_int_equal(p.family, AF_INET6);
	assert_int_equal(p.len, 48);
	assert_v6(&p.v6, "fd77:7764:6e00::");
	assert_int_equal(netns_format_prefix(&p, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "fd77:7764:6e00::/48");
	assert_int_equal(netns_format_prefix(&p, buf, 8), -ENOSPC);
	assert_int_equal(netns_parse_prefix("0.0.0.0/0", &p), 0);
	assert_int_equal(netns_parse_prefix("10.1.2.3/32", &p), 0);
	assert_int_equal(netns_parse_prefix("::/0", &p), 0);
	assert_int_equal(netns_parse_prefix("fd00::1/128", &p), 0);
}

static void test_parse_prefix_bad(void **state)
{
	static const char *const bad[] = {
	    "",
	    "10.213.0.0",
	    "10.213.0.0/",
	    "10.213.0.0/33",
	    "10.213.0.1/16",
	    "10.213.0.0/016",
	    "10.213.0.0/+16",
	    "10.213.0.0/16 ",
	    "10.213.0/16",
	    "fd77::/129",
	    "fd77::1/64",
	    "fd77::/-1",
	    "zz::/64",
	    "/16",
	    "10.213.0.0/1600",
	    "10.213.0.0//16",
	};
	struct netns_prefix p;

	(void)state;
	for (size_t i = 0; i < WD_ARRAY_SIZE(bad); i++) {
		if (netns_parse_prefix(bad[i], &p) != -EINVAL)
			fail_msg("accepted \"%s\"", bad[i]);
	}
	assert_int_equal(netns_parse_prefix(NULL, &p), -EINVAL);
}

static void test_pool_check(void **state)
{
	struct netns_pool_config c;
	uint32_t n = 0;

	(void)state;
	netns_pool_config_defaults(&c);
	assert_int_equal(netns_pool_check(&c, &n, NULL), 0);
	assert_int_equal(n, 16384); /* 10.213.0.0/16 in /30s */
	c.run4_len = 31;
	assert_int_equal(netns_pool_check(&c, &n, NULL), 0);
	assert_int_equal(n, 32768);
	c.run4_len = 29;
	assert_int_equal(netns_pool_check(&c, &n, NULL), -EINVAL);
	c.run4_len = 30;
	c.run6_len = 127; /* /48 in /127s: more than the cap */
	assert_int_equal(netns_pool_check(&c, &n, NULL), 0);
	assert_int_equal(n, 16384);
	assert_int_equal(netns_parse_prefix("10.0.0.0/8", &c.pool4), 0);
	assert_int_equal(netns_pool_check(&c, &n, NULL), 0);
	assert_int_equal(n, NETNS_MAX_SLOTS);
	c.run6_len = 64;
	assert_int_equal(netns_pool_check(&c, &n, NULL), 0);
	assert_int_equal(n, 65536); /* now the v6 /48 in /64s is the smaller */
	c.run6_len = 100;
	assert_int_equal(netns_pool_check(&c, &n, NULL), -EINVAL);
	c.run6_len = 64;
	assert_int_equal(netns_parse_prefix("fd77::/80", &c.pool6), 0);
	assert_int_equal(netns_pool_check(&c, &n, NULL), -EINVAL); /* pool smaller than a run */
	netns_pool_config_defaults(&c);
	c.pool4 = c.pool6; /* wrong family */
	assert_int_equal(netns_pool_check(&c, &n, NULL), -EINVAL);
	netns_pool_config_defaults(&c);
	snprintf(c.ifname_prefix, sizeof(c.ifname_prefix), "WD-");
	assert_int_equal(netns_pool_check(&c, &n, NULL), -EINVAL);
	c.ifname_prefix[0] = '\0';
	assert_int_equal(netns_pool_check(&c, &n, NULL), -EINVAL);
	netns_pool_config_defaults(&c);
	c.state_dir = "relative/dir";
	assert_int_equal(netns_pool_check(&c, &n, NULL), -EINVAL);
}

static void test_slot_addrs(void **state)
{
	struct netns_pool_config c;
	struct netns_addrs a;

	(void)state;
	netns_pool_config_defaults(&c);
	assert_int_equal(netns_slot_addrs(&c, 0, &a), 0);
	assert_v4(a.host4, "10.213.0.1");
	assert_v4(a.sbx4, "10.213.0.2");
	assert_int_equal(a.len4, 30);
	assert_v6(&a.host6, "fd77:7764:6e00::1");
	assert_v6(&a.sbx6, "fd77:7764:6e00::2");
	assert_int_equal(a.len6, 64);
	assert_int_equal(netns_slot_addrs(&c, 1, &a), 0);
	assert_v4(a.host4, "10.213.0.5");
	assert_v4(a.sbx4, "10.213.0.6");
	assert_v6(&a.host6, "fd77:7764:6e00:1::1");
	assert_v6(&a.sbx6, "fd77:7764:6e00:1::2");
	assert_int_equal(netns_slot_addrs(&c, 16383, &a), 0);
	assert_v4(a.host4, "10.213.255.253");
	assert_v4(a.sbx4, "10.213.255.254");
	assert_v6(&a.host6, "fd77:7764:6e00:3fff::1");
	assert_int_equal(netns_slot_addrs(&c, 16384, &a), -ERANGE);

	c.run4_len = 31;
	c.run6_len = 127;
	assert_int_equal(netns_slot_addrs(&c, 3, &a), 0);
	assert_v4(a.host4, "10.213.0.6");
	assert_v4(a.sbx4, "10.213.0.7");
	assert_int_equal(a.len4, 31);
	assert_v6(&a.host6, "fd77:7764:6e00::6");
	assert_v6(&a.sbx6, "fd77:7764:6e00::7");
	assert_int_equal(a.len6, 127);

	/* a slot number spread over three bytes, shifted by one bit */
	assert_int_equal(netns_parse_prefix("10.0.0.0/8", &c.pool4), 0);
	assert_int_equal(netns_parse_prefix("fd00::/104", &c.pool6), 0);
	assert_int_equal(netns_slot_addrs(&c, 0xabcde, &a), 0);
	assert_v6(&a.host6, "fd00::15:79bc");
	assert_v6(&a.sbx6, "fd00::15:79bd");
	assert_v4(a.host4, "10.21.121.188");
	c.run6_len = 64;
	assert_int_equal(netns_slot_addrs(&c, 0, &a), -EINVAL); /* /104 pool, /64 runs */
	/* /64 runs from a /32: the slot lands in the second and third groups */
	assert_int_equal(netns_parse_prefix("fd77:7764::/32", &c.pool6), 0);
	assert_int_equal(netns_slot_addrs(&c, 0x12345, &a), 0);
	assert_v6(&a.host6, "fd77:7764:1:2345::1");
}

static void test_names(void **state)
{
	static const uint8_t rnd[6] = {0x3f, 0x9a, 0x1c, 0x2b, 0x7e, 0x01};
	char id[NETNS_ID_MAX], ifname[IFNAMSIZ];

	(void)state;
	assert_int_equal(netns_format_names("wd-", rnd, sizeof(rnd), id, ifname), 0);
	assert_string_equal(id, "3f9a1c2b7e01");
	assert_string_equal(ifname, "wd-3f9a1c2b7e01");
	assert_int_equal(strlen(ifname), 15);
	assert_int_equal(netns_format_names("warden-", rnd, sizeof(rnd), id, ifname), 0);
	assert_string_equal(id, "3f9a1c2b");
	assert_string_equal(ifname, "warden-3f9a1c2b");
	assert_int_equal(netns_format_names("w", rnd, 4, id, ifname), 0);
	assert_string_equal(id, "3f9a1c2b");
	assert_int_equal(netns_format_names("wd-", rnd, 3, id, ifname), -EINVAL);
	assert_int_equal(netns_format_names("", rnd, 6, id, ifname), -EINVAL);
	assert_int_equal(netns_format_names("wardens-", rnd, 6, id, ifname), -EINVAL);
	assert_int_equal(netns_format_names("wd/", rnd, 6, id, ifname), -EINVAL);
	assert_int_equal(netns_format_names("Wd-", rnd, 6, id, ifname), -EINVAL);
}

static void test_errno_map(void **state)
{
	(void)state;
	assert_int_equal(netns_errno_from_nl(0), 0);
	assert_int_equal(netns_errno_from_nl(42), 0);
	assert_int_equal(netns_errno_from_nl(-NLE_EXIST), -EEXIST);
	assert_int_equal(netns_errno_from_nl(-NLE_NOMEM), -ENOMEM);
	assert_int_equal(netns_errno_from_nl(-NLE_PERM), -EPERM);
	assert_int_equal(netns_errno_from_nl(-NLE_NODEV), -ENODEV);
	assert_int_equal(netns_errno_from_nl(-NLE_OBJ_NOTFOUND), -ENOENT);
	assert_int_equal(netns_errno_from_nl(-NLE_NOADDR), -EADDRNOTAVAIL);
	assert_int_equal(netns_errno_from_nl(-NLE_BUSY), -EBUSY);
	assert_int_equal(netns_errno_from_nl(-NLE_FAILURE), -EIO);
	assert_int_equal(netns_errno_from_nl(-(NLE_MAX + 1)), -EIO);
	assert_int_equal(netns_errno_from_nl(-100000), -EIO);
	for (int i = 1; i <= NLE_MAX; i++)
		assert_true(netns_errno_from_nl(-i) < 0);
}

static void test_slot_rec(void **state)
{
	struct netns_slot_rec r = {.pid = 4242, .start = 123456789ULL, .mounted = true}, back;
	char line[256];
	int n;

	(void)state;
	snprintf(r.id, sizeof(r.id), "3f9a1c2b7e01");
	snprintf(r.ifname, sizeof(r.ifname), "wd-3f9a1c2b7e01");
	snprintf(r.name, sizeof(r.name), "wd-3f9a1c2b7e01");
	n = netns_slot_rec_format(&r, line, sizeof(line));
	assert_true(n > 0);
	assert_string_equal(line, "pid=4242 start=123456789 id=3f9a1c2b7e01 ifname=wd-3f9a1c2b7e01 "
				  "netns=wd-3f9a1c2b7e01 mounted=1\n");
	assert_int_equal(netns_slot_rec_parse(line, &back), 0);
	assert_int_equal(back.pid, 4242);
	assert_true(back.start == 123456789ULL);
	assert_string_equal(back.id, r.id);
	assert_string_equal(back.ifname, r.ifname);
	assert_true(back.mounted);
	assert_int_equal(netns_slot_rec_format(&r, line, 20), -ENOSPC);
	assert_int_equal(netns_slot_rec_parse("", &back), -EINVAL);
	assert_int_equal(netns_slot_rec_parse("pid=4242 start=1 id=3f9a", &back), -EINVAL);
	assert_int_equal(
	    netns_slot_rec_parse("pid=0 start=1 id=ab ifname=wd-ab netns=wd-ab mounted=0\n", &back),
	    -EINVAL);
	assert_int_equal(
	    netns_slot_rec_parse("pid=1 start=1 id=xy ifname=wd-ab netns=wd-ab mounted=0\n", &back),
	    -EINVAL);
	assert_int_equal(
	    netns_slot_rec_parse("pid=1 start=1 id=ab ifname=wd/ab netns=wd-ab mounted=0\n", &back),
	    -EINVAL);
	assert_int_equal(
	    netns_slot_rec_parse("pid=1 start=1 id=ab ifname=wd-ab netns=wd-ab mounted=2\n", &back),
	    -EINVAL);
	assert_int_equal(
	    netns_slot_rec_parse("pid=1 start=1 id=ab ifname=wd-ab netns=wd-ab mounted=0 junk\n",
				 &back),
	    -EINVAL);
}

/* A pool of 4 slots (/28 in /30s) in a fresh temp dir. */
struct alloc_fixture {
	char dir[64];
	struct netns_pool_config cfg;
};

static int alloc_setup(void **state)
{
	struct alloc_fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/wd-test-netns-XXXXXX");
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	netns_pool_config_defaults(&f->cfg);
	f->cfg.state_dir = f->dir;
	f->cfg.bind_mount = false;
	if (netns_parse_prefix("10.213.0.0/28", &f->cfg.pool4) < 0)
		return -1;
	*state = f;
	return 0;
}

static int alloc_teardown(void **state)
{
	struct alloc_fixture *f = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd) != 0)
		return -1;
	free(f);
	return 0;
}

static void make_rec(struct netns_slot_rec *r, pid_t pid, const char *id)
{
	memset(r, 0, sizeof(*r));
	r->pid = pid;
	assert_int_equal(wd_proc_stat(pid == getpid() ? 0 : pid, &r->start, NULL), 0);
	snprintf(r->id, sizeof(r->id), "%s", id);
	snprintf(r->ifname, sizeof(r->ifname), "wdt-%s", id);
	snprintf(r->name, sizeof(r->name), "wdt-%s", id);
}

static void test_alloc_round_robin(void **state)
{
	struct alloc_fixture *f = *state;
	struct netns_slot_rec r;
	uint32_t slot;
	unsigned used;

	make_rec(&r, getpid(), "a0");
	for (uint32_t i = 0; i < 4; i++) {
		assert_int_equal(netns_slot_alloc(&f->cfg, &r, &slot, NULL), 0);
		assert_int_equal(slot, i);
	}
	assert_int_equal(netns_slot_count(&f->cfg, &used), 0);
	assert_int_equal(used, 4);
	assert_int_equal(netns_slot_alloc(&f->cfg, &r, &slot, NULL), -ENOSPC);
	/* freed slot 1 is found again once the cursor wraps */
	assert_int_equal(netns_slot_release(&f->cfg, 1, "a0", getpid()), 1);
	assert_int_equal(netns_slot_alloc(&f->cfg, &r, &slot, NULL), 0);
	assert_int_equal(slot, 1);
	/* round-robin: after freeing 0 and 2, the next one handed out is 2 (after 1) */
	assert_int_equal(netns_slot_release(&f->cfg, 0, "a0", 0), 1);
	assert_int_equal(netns_slot_release(&f->cfg, 2, "a0", 0), 1);
	assert_int_equal(netns_slot_alloc(&f->cfg, &r, &slot, NULL), 0);
	assert_int_equal(slot, 2);
	/* release checks the owner: wrong id or pid leaves the slot alone */
	assert_int_equal(netns_slot_release(&f->cfg, 3, "b1", 0), 0);
	assert_int_equal(netns_slot_release(&f->cfg, 3, "a0", getpid() + 1), 0);
	assert_int_equal(netns_slot_count(&f->cfg, &used), 0);
	assert_int_equal(used, 3);
	/* releasing a free slot is harmless */
	assert_int_equal(netns_slot_release(&f->cfg, 0, "a0", 0), 0);
}

static pid_t dead_pid(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	return pid;
}

static void test_alloc_reclaims_dead_owner(void **state)
{
	struct alloc_fixture *f = *state;
	struct netns_slot_rec mine, dead;
	struct netns_stale *stale = NULL;
	char path[128];
	uint32_t slot;
	size_t n = 0;
	FILE *fp;

	make_rec(&mine, getpid(), "a1");
	/* the dead owner's record: pid gone, interface never existed */
	memset(&dead, 0, sizeof(dead));
	dead.pid = dead_pid();
	dead.start = 1;
	snprintf(dead.id, sizeof(dead.id), "dead");
	snprintf(dead.ifname, sizeof(dead.ifname), "wdt-nonexist0");
	snprintf(dead.name, sizeof(dead.name), "wdt-nonexist0");
	assert_false(netns_owner_alive(&dead));
	assert_true(netns_owner_alive(&mine));
	for (uint32_t i = 0; i < 4; i++)
		assert_int_equal(netns_slot_alloc(&f->cfg, i == 2 ? &dead : &mine, &slot, NULL), 0);
	/* a record whose pid was reused (start time differs) is not alive either */
	mine.start++;
	assert_false(netns_owner_alive(&mine));
	mine.start--;
	assert_int_equal(netns_slot_list_stale(&f->cfg, &stale, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(stale[0].slot, 2);
	assert_string_equal(stale[0].rec.id, "dead");
	free(stale);
	/* full but slot 2 is reclaimable: the allocator takes it over */
	assert_int_equal(netns_slot_alloc(&f->cfg, &mine, &slot, NULL), 0);
	assert_int_equal(slot, 2);
	/* a torn record (crash mid-write) is free too */
	snprintf(path, sizeof(path), "%s/1", f->dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("pid=12", fp);
	fclose(fp);
	assert_int_equal(netns_slot_alloc(&f->cfg, &mine, &slot, NULL), 0);
	assert_int_equal(slot, 1);
	assert_int_equal(netns_slot_alloc(&f->cfg, &mine, &slot, NULL), -ENOSPC);
}

static void test_alloc_interface_keeps_slot(void **state)
{
	struct alloc_fixture *f = *state;
	struct netns_slot_rec r;
	uint32_t slot;
	unsigned used = 0;

	/* owner dead but its interface ("lo" stands in) still exists: not free */
	memset(&r, 0, sizeof(r));
	r.pid = dead_pid();
	r.start = 1;
	snprintf(r.id, sizeof(r.id), "0123");
	snprintf(r.ifname, sizeof(r.ifname), "lo");
	snprintf(r.name, sizeof(r.name), "wdt-0123");
	for (int i = 0; i < 4; i++)
		assert_int_equal(netns_slot_alloc(&f->cfg, &r, &slot, NULL), 0);
	assert_int_equal(netns_slot_alloc(&f->cfg, &r, &slot, NULL), -ENOSPC);
	/* the allocator judges each record by its own interface */
	snprintf(r.ifname, sizeof(r.ifname), "wdt-nonexist1");
	assert_int_equal(netns_slot_alloc(&f->cfg, &r, &slot, NULL), -ENOSPC);
	assert_int_equal(netns_slot_count(&f->cfg, &used), 0);
	assert_int_equal(used, 4);
}

static void test_gc_frees_dead(void **state)
{
	struct alloc_fixture *f = *state;
	struct netns_slot_rec mine, dead;
	struct wd_err err;
	unsigned used = 0, reclaimed = 0;
	uint32_t slot;

	make_rec(&mine, getpid(), "a2");
	memset(&dead, 0, sizeof(dead));
	dead.pid = dead_pid();
	dead.start = 1;
	snprintf(dead.id, sizeof(dead.id), "d2");
	snprintf(dead.ifname, sizeof(dead.ifname), "wdt-nonexist2");
	snprintf(dead.name, sizeof(dead.name), "wdt-nonexist2");
	assert_int_equal(netns_slot_alloc(&f->cfg, &mine, &slot, NULL), 0);
	assert_int_equal(netns_slot_alloc(&f->cfg, &dead, &slot, NULL), 0);
	assert_int_equal(netns_slot_alloc(&f->cfg, &dead, &slot, NULL), 0);
	wd_err_clear(&err);
	assert_int_equal(netns_gc(&f->cfg, &reclaimed, &err), 0);
	assert_int_equal(reclaimed, 2);
	assert_int_equal(netns_slot_count(&f->cfg, &used), 0);
	assert_int_equal(used, 1);
	assert_int_equal(netns_gc(&f->cfg, &reclaimed, &err), 0);
	assert_int_equal(reclaimed, 0);
}

static void test_slot_count_missing_dir(void **state)
{
	struct netns_pool_config c;
	unsigned used = 99;

	(void)state;
	netns_pool_config_defaults(&c);
	c.state_dir = "/nonexistent/wd-test-netns";
	assert_int_equal(netns_slot_count(&c, &used), 0);
	assert_int_equal(used, 0);
}

static void test_create_rejects_bad_config(void **state)
{
	struct netns_pool_config c;
	struct netns_run run;
	struct wd_err err;

	(void)state;
	netns_pool_config_defaults(&c);
	c.run4_len = 29;
	wd_err_clear(&err);
	memset(&run, 0x5a, sizeof(run));
	assert_int_equal(netns_run_create(&c, &run, &err), -EINVAL);
	assert_int_equal(err.code, -EINVAL);
	assert_non_null(strstr(err.msg, "must be /30 or /31"));
	assert_int_equal(run.netns_fd, -1);
	assert_false(run.live);
	/* destroying a run that never was, or NULL, is harmless */
	assert_int_equal(netns_run_destroy(&c, &run, &err), 0);
	assert_int_equal(netns_run_destroy(&c, NULL, &err), 0);
	assert_string_equal(netns_stage_name(NETNS_STAGE_VETH), "veth");
	assert_string_equal(netns_stage_name(NETNS_STAGE_COUNT), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_prefix_ok),
	    cmocka_unit_test(test_parse_prefix_bad),
	    cmocka_unit_test(test_pool_check),
	    cmocka_unit_test(test_slot_addrs),
	    cmocka_unit_test(test_names),
	    cmocka_unit_test(test_errno_map),
	    cmocka_unit_test(test_slot_rec),
	    cmocka_unit_test_setup_teardown(test_alloc_round_robin, alloc_setup, alloc_teardown),
	    cmocka_unit_test_setup_teardown(test_alloc_reclaims_dead_owner, alloc_setup,
					    alloc_teardown),
	    cmocka_unit_test_setup_teardown(test_alloc_interface_keeps_slot, alloc_setup,
					    alloc_teardown),
	    cmocka_unit_test_setup_teardown(test_gc_frees_dead, alloc_setup, alloc_teardown),
	    cmocka_unit_test(test_slot_count_missing_dir),
	    cmocka_unit_test(test_create_rejects_bad_config),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

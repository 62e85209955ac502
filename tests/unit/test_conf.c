/* test_conf.c - unit tests of conf/'s translations (conf/host.h): the nft table's
 * configuration from a gateway configuration, every field that shapes the table, from the
 * defaults and from a file; the run networks' configuration; conf_load() without a file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "conf/host.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The defaults of both sides agree: the default gateway config gives the default table. */
/* two prefixes alike, member by member (the union's padding is not compared) */
static bool same_prefix(const struct netns_prefix *a, const struct netns_prefix *b)
{
	if (a->family != b->family || a->len != b->len)
		return false;
	return a->family == AF_INET ? a->v4.s_addr == b->v4.s_addr
				    : !memcmp(&a->v6, &b->v6, sizeof(a->v6));
}

static void test_defaults(void **state)
{
	struct wd_gwconf g;
	struct fw_config c, want;

	(void)state;
	conf_defaults(&g);
	assert_int_equal(g.port_udp, 15054);
	assert_int_equal(g.udp_idle_timeout_s, 60);
	memset(&c, 0x5a, sizeof(c)); /* every byte is written */
	conf_fw_config(&g, &c);
	fw_config_defaults(&want);
	assert_memory_equal(&c, &want, sizeof(c));
	assert_int_equal(fw_config_check(&c, NULL), 0);
}

/* Each field of the gateway config that shapes the table lands in its place. */
static void test_fields(void **state)
{
	static const char y[] =
	    "version: 1\n"
	    "ports: {transparent: 16001, dns: 16053, proxy: 16080, udp: 16054}\n"
	    "nft:\n"
	    "  table: wdtest\n"
	    "  interface_prefix: \"wt-\"\n"
	    "  nflog_group: 7100\n"
	    "  conntrack_per_run: 512\n"
	    "  conntrack_new_per_s: 50\n"
	    "pools: {runs_v4: \"10.99.0.0/16\"}\n"
	    "limits: {udp_idle_timeout_s: 30}\n";
	struct policy_diags d;
	struct wd_gwconf g;
	struct fw_config c;

	(void)state;
	policy_diags_init(&d);
	assert_int_equal(conf_parse(y, sizeof(y) - 1, "gw.yaml", &g, &d), 0);
	policy_diags_free(&d);
	conf_fw_config(&g, &c);
	assert_string_equal(c.table, "wdtest");
	assert_string_equal(c.if_prefix, "wt-");
	assert_int_equal(c.port_transparent, 16001);
	assert_int_equal(c.port_dns, 16053);
	assert_int_equal(c.port_proxy, 16080);
	assert_int_equal(g.port_udp, 16054);
	assert_int_equal(g.udp_idle_timeout_s, 30);
	assert_int_equal(c.nflog_group, 7100);
	assert_int_equal(c.conns_per_run, 512);
	assert_int_equal(c.new_per_s, 50);
	assert_int_equal(fw_config_check(&c, NULL), 0);
}

/* conf_load(NULL) is the defaults; conf_pool_config() takes the pools and the prefix */
static void test_pool_config(void **state)
{
	struct wd_gwconf g, def;
	struct netns_pool_config nc, want;
	struct policy_diags d;

	(void)state;
	policy_diags_init(&d);
	memset(&g, 0x5a, sizeof(g));
	assert_int_equal(conf_load(NULL, &g, &d), 0);
	assert_int_equal(d.n, 0);
	conf_defaults(&def);
	assert_memory_equal(&g, &def, sizeof(g));
	netns_pool_config_defaults(&want);
	assert_int_equal(conf_pool_config(&g, &nc), 0);
	assert_true(same_prefix(&nc.pool4, &want.pool4));
	assert_true(same_prefix(&nc.pool6, &want.pool6));
	assert_string_equal(nc.ifname_prefix, "wd-");
	snprintf(g.if_prefix, sizeof(g.if_prefix), "x-");
	snprintf(g.pool_v4, sizeof(g.pool_v4), "10.9.0.0/16");
	assert_int_equal(conf_pool_config(&g, &nc), 0);
	assert_string_equal(nc.ifname_prefix, "x-");
	assert_false(same_prefix(&nc.pool4, &want.pool4));
	snprintf(g.pool_v6, sizeof(g.pool_v6), "not a prefix");
	assert_int_equal(conf_pool_config(&g, &nc), -EINVAL);
	policy_diags_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_fields),
	    cmocka_unit_test(test_pool_config),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

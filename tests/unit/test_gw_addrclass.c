/* test_gw_addrclass.c - unit tests for the SSRF address classifier (gateway/addrclass.c). */
#include "common/common.h"
#include "gateway/addr.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

static const struct {
	const char *addr;
	enum gw_addr_class want;
} cases[] = {
    {"203.0.113.10", GW_ADDR_PUBLIC}, /* the lab's internet: documentation range */
    {"198.51.100.1", GW_ADDR_PUBLIC},
    {"192.0.2.1", GW_ADDR_PUBLIC},
    {"2001:db8:0:1::10", GW_ADDR_PUBLIC},
    {"198.18.0.1", GW_ADDR_PUBLIC}, /* benchmarking range: not refused either */
    {"2606:4700::1111", GW_ADDR_PUBLIC},
    {"0.0.0.0", GW_ADDR_UNSPECIFIED},
    {"0.1.2.3", GW_ADDR_UNSPECIFIED},
    {"::", GW_ADDR_UNSPECIFIED},
    {"127.0.0.1", GW_ADDR_LOOPBACK},
    {"127.255.1.1", GW_ADDR_LOOPBACK},
    {"::1", GW_ADDR_LOOPBACK},
    {"10.1.2.3", GW_ADDR_PRIVATE},
    {"172.16.0.1", GW_ADDR_PRIVATE},
    {"172.31.255.255", GW_ADDR_PRIVATE},
    {"172.32.0.1", GW_ADDR_PUBLIC},
    {"192.168.7.7", GW_ADDR_PRIVATE},
    {"100.64.1.1", GW_ADDR_CGNAT},
    {"100.127.255.255", GW_ADDR_CGNAT},
    {"100.128.0.1", GW_ADDR_PUBLIC},
    {"169.254.169.254", GW_ADDR_LINK_LOCAL},
    {"fe80::1", GW_ADDR_LINK_LOCAL},
    {"224.0.0.1", GW_ADDR_MULTICAST},
    {"ff02::1", GW_ADDR_MULTICAST},
    {"255.255.255.255", GW_ADDR_RESERVED},
    {"240.0.0.1", GW_ADDR_RESERVED},
    {"::ffff:127.0.0.1", GW_ADDR_EMBEDDED_V4},
    {"::ffff:203.0.113.10", GW_ADDR_EMBEDDED_V4},
    {"::127.0.0.1", GW_ADDR_EMBEDDED_V4},
    {"64:ff9b::a9fe:a9fe", GW_ADDR_EMBEDDED_V4},
    {"2002:7f00:1::1", GW_ADDR_EMBEDDED_V4},
    {"2001:0:4136:e378::1", GW_ADDR_EMBEDDED_V4},
    {"fd00:ec2::254", GW_ADDR_ULA},
    {"fc00::1", GW_ADDR_ULA},
    {"fd77:7764:5300::1", GW_ADDR_ULA},
    {"fec0::1", GW_ADDR_PRIVATE},
};

static void test_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gw_addr a;

		assert_int_equal(gw_addr_parse(cases[i].addr, &a), 0);
		if (gw_addr_classify(&a) != cases[i].want)
			fail_msg("%s: got %s, want %s", cases[i].addr,
				 gw_addr_class_name(gw_addr_classify(&a)),
				 gw_addr_class_name(cases[i].want));
	}
}

static void test_prefix(void **state)
{
	struct gw_addr net, a;
	unsigned p;

	(void)state;
	assert_int_equal(gw_cidr_parse("10.213.0.0/16", &net, &p), 0);
	assert_int_equal(p, 16);
	gw_addr_parse("10.213.9.9", &a);
	assert_true(gw_prefix_contains(&net, p, &a));
	gw_addr_parse("10.214.0.1", &a);
	assert_false(gw_prefix_contains(&net, p, &a));
	gw_addr_parse("::1", &a);
	assert_false(gw_prefix_contains(&net, p, &a));
	assert_int_equal(gw_cidr_parse("fd77::/129", &net, &p), -EINVAL);
	assert_int_equal(gw_cidr_parse("10.0.0.0", &net, &p), -EINVAL);
	assert_int_equal(gw_cidr_parse("10.0.0.0/", &net, &p), -EINVAL);
	assert_int_equal(gw_cidr_parse("fd77:7764::/33", &net, &p), 0);
	gw_addr_parse("fd77:7764:7fff::1", &a);
	assert_true(gw_prefix_contains(&net, p, &a));
	gw_addr_parse("fd77:7764:8000::1", &a);
	assert_false(gw_prefix_contains(&net, p, &a));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table),
	    cmocka_unit_test(test_prefix),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_common_net.c - the one address-range parser of common/net.c (what policies, the
 * gateway and netns/ accept), its formatter and the prefix arithmetic. */
#include "common/common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

static void assert_range(const char *text, unsigned flags, int family, const char *net,
			 unsigned prefix)
{
	struct wd_cidr c;
	uint8_t want[16] = {0};
	char back[64];

	if (wd_cidr_parse(text, flags, &c) != WD_CIDR_OK)
		fail_msg("refused \"%s\"", text);
	assert_int_equal(c.family, family);
	assert_int_equal(c.prefix, prefix);
	assert_int_equal(inet_pton(family, net, want), 1);
	assert_memory_equal(c.addr, want, 16);
	assert_int_equal(wd_cidr_format(c.family, c.addr, c.prefix, back, sizeof(back)), 0);
	/* canonical text formats back to itself */
	if (strchr(text, '/'))
		assert_string_equal(back, text);
}

static void test_parse_ok(void **state)
{
	(void)state;
	assert_range("10.213.0.0/16", 0, AF_INET, "10.213.0.0", 16);
	assert_range("0.0.0.0/0", 0, AF_INET, "0.0.0.0", 0);
	assert_range("10.1.2.3/32", 0, AF_INET, "10.1.2.3", 32);
	assert_range("fd77:7764:6e00::/48", 0, AF_INET6, "fd77:7764:6e00::", 48);
	assert_range("::/0", 0, AF_INET6, "::", 0);
	assert_range("fd00::1/128", 0, AF_INET6, "fd00::1", 128);
	assert_range("fd77:7764::/33", 0, AF_INET6, "fd77:7764::", 33);
	assert_range("::ffff:10.0.0.0/104", 0, AF_INET6, "::ffff:10.0.0.0", 104);
	/* a bare address, where asked for, is a range of one */
	assert_range("192.0.2.7", WD_CIDR_BARE, AF_INET, "192.0.2.7", 32);
	assert_range("2001:db8::7", WD_CIDR_BARE, AF_INET6, "2001:db8::7", 128);
}

static void test_parse_malformed(void **state)
{
	static const char *const bad[] = {
	    "",
	    "10.213.0.0",
	    "10.213.0.0/",
	    "10.213.0.0/33",
	    "10.213.0.0/016",
	    "10.213.0.0/+16",
	    "10.213.0.0/ 16",
	    "10.213.0.0/16 ",
	    " 10.213.0.0/16",
	    "10.213.0/16",
	    "10.213.0.0.0/16",
	    "fd77::/129",
	    "fd77::/-1",
	    "zz::/64",
	    "/16",
	    "10.213.0.0/1600",
	    "10.213.0.0//16",
	    "10.213.0.0/16/16",
	    "10.213.0.0/0x10",
	    "[fd77::]/64",
	    "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128",
	    "example.com/24",
	};
	struct wd_cidr c = {.prefix = 99};

	(void)state;
	for (size_t i = 0; i < WD_ARRAY_SIZE(bad); i++)
		if (wd_cidr_parse(bad[i], 0, &c) != WD_CIDR_MALFORMED)
			fail_msg("accepted \"%s\"", bad[i]);
	/* a bare address only with the flag; nothing is written on a refusal */
	assert_int_equal(wd_cidr_parse("10.0.0.1", 0, &c), WD_CIDR_MALFORMED);
	assert_int_equal(wd_cidr_parse("", WD_CIDR_BARE, &c), WD_CIDR_MALFORMED);
	assert_int_equal(wd_cidr_parse("10.0.0.1/", WD_CIDR_BARE, &c), WD_CIDR_MALFORMED);
	assert_int_equal(c.prefix, 99);
}

static void test_parse_host_bits(void **state)
{
	struct wd_cidr c;
	char text[64];

	(void)state;
	assert_int_equal(wd_cidr_parse("10.213.0.1/16", 0, &c), WD_CIDR_HOST_BITS);
	/* the range the text likely meant */
	assert_int_equal(wd_cidr_format(c.family, c.addr, c.prefix, text, sizeof(text)), 0);
	assert_string_equal(text, "10.213.0.0/16");
	assert_int_equal(wd_cidr_parse("fd77::1/64", 0, &c), WD_CIDR_HOST_BITS);
	assert_int_equal(wd_cidr_format(c.family, c.addr, c.prefix, text, sizeof(text)), 0);
	assert_string_equal(text, "fd77::/64");
	assert_int_equal(wd_cidr_parse("10.21.0.0/15", 0, &c), WD_CIDR_HOST_BITS);
	assert_int_equal(wd_cidr_parse("10.20.0.0/15", 0, &c), WD_CIDR_OK);
}

static void test_format(void **state)
{
	uint8_t a[16] = {10, 213};
	char out[32];

	(void)state;
	assert_int_equal(wd_cidr_format(AF_INET, a, 16, out, sizeof(out)), 0);
	assert_string_equal(out, "10.213.0.0/16");
	assert_int_equal(wd_cidr_format(AF_INET, a, 16, out, 8), -ENOSPC);
	assert_string_equal(out, "");
	assert_int_equal(wd_cidr_format(AF_UNIX, a, 16, out, sizeof(out)), -EINVAL);
	assert_string_equal(out, "");
}

static void test_prefix_arithmetic(void **state)
{
	uint8_t net[16] = {10, 213}, a[16] = {10, 213, 9, 9}, b[16] = {10, 214, 0, 1};
	uint8_t m[16] = {0xfd, 0x77, 0x77, 0x64, 0x7f, 0xff, [15] = 1};

	(void)state;
	assert_true(wd_prefix_contains(AF_INET, net, 16, a));
	assert_false(wd_prefix_contains(AF_INET, net, 16, b));
	assert_true(wd_prefix_contains(AF_INET, net, 14, b)); /* 10.212.0.0/14 */
	assert_true(wd_prefix_contains(AF_INET, net, 0, b));
	assert_false(wd_prefix_contains(AF_INET, net, 33, a));
	assert_false(wd_prefix_contains(AF_UNIX, net, 8, a));
	wd_prefix_mask(AF_INET6, m, 33);
	assert_int_equal(m[4], 0);
	assert_int_equal(m[15], 0);
	assert_int_equal(m[3], 0x64);
	m[4] = 0xff;
	wd_prefix_mask(AF_INET6, m, 36);
	assert_int_equal(m[4], 0xf0);
	assert_true(wd_prefix_is_network(AF_INET, net, 16));
	assert_false(wd_prefix_is_network(AF_INET, a, 16));
	assert_true(wd_prefix_is_network(AF_INET, a, 32));
	assert_true(wd_prefix_is_network(AF_INET6, m, 36));
	assert_false(wd_prefix_is_network(AF_INET6, m, 35));
	assert_int_equal(wd_addr_len(AF_INET), 4);
	assert_int_equal(wd_addr_len(AF_INET6), 16);
	assert_int_equal(wd_addr_len(AF_UNIX), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_ok),	      cmocka_unit_test(test_parse_malformed),
	    cmocka_unit_test(test_parse_host_bits),   cmocka_unit_test(test_format),
	    cmocka_unit_test(test_prefix_arithmetic),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_common_name.c - wd_name_fold() (common/name.c), the one host-name syntax: the strict
 * form a policy writes and the wire form (WD_NAME_WIRE) the gateway's parsers read. */
#include "common/common.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static enum wd_name_check fold(const char *in, unsigned flags, char *out, size_t *last)
{
	return wd_name_fold(in, strlen(in), flags, out, WD_NAME_MAX + 1, last);
}

static void test_valid(void **state)
{
	char out[WD_NAME_MAX + 1];
	size_t last = 99;

	(void)state;
	assert_int_equal(fold("Api.GitHub.com.", 0, out, &last), WD_NAME_OK);
	assert_string_equal(out, "api.github.com");
	assert_int_equal(last, 11);
	assert_int_equal(fold("localhost", 0, out, &last), WD_NAME_OK);
	assert_int_equal(last, 0);
	assert_int_equal(fold("a.123", 0, out, &last), WD_NAME_OK); /* the caller judges */
	assert_string_equal(out + last, "123");
	/* not NUL-terminated input: only @len bytes are read */
	assert_int_equal(wd_name_fold("example.comXYZ", 11, 0, out, sizeof(out), NULL), WD_NAME_OK);
	assert_string_equal(out, "example.com");
}

static void test_refused(void **state)
{
	char out[WD_NAME_MAX + 1], big[300];

	(void)state;
	assert_int_equal(fold("", 0, out, NULL), WD_NAME_EMPTY);
	assert_int_equal(fold(".", 0, out, NULL), WD_NAME_EMPTY);
	assert_int_equal(fold("a..b", 0, out, NULL), WD_NAME_LABEL_EMPTY);
	assert_int_equal(fold(".a", 0, out, NULL), WD_NAME_LABEL_EMPTY);
	assert_int_equal(fold("a..", WD_NAME_WIRE, out, NULL), WD_NAME_LABEL_EMPTY);
	assert_string_equal(out, "");
	assert_int_equal(fold("a_b.com", 0, out, NULL), WD_NAME_BAD_CHAR);
	assert_int_equal(fold("a b.com", WD_NAME_WIRE, out, NULL), WD_NAME_BAD_CHAR);
	assert_int_equal(fold("-a.com", 0, out, NULL), WD_NAME_HYPHEN_EDGE);
	assert_int_equal(fold("a-.com", 0, out, NULL), WD_NAME_HYPHEN_EDGE);
	memset(big, 'a', 64);
	strcpy(big + 64, ".com");
	assert_int_equal(fold(big, 0, out, NULL), WD_NAME_LABEL_TOO_LONG);
	for (int i = 0; i < 254; i++)
		big[i] = i % 2 ? '.' : 'a';
	big[253] = 'a';
	big[254] = '\0';
	assert_int_equal(fold(big, 0, out, NULL), WD_NAME_TOO_LONG);
	big[253] = '\0'; /* 253: the longest */
	assert_int_equal(fold(big, 0, out, NULL), WD_NAME_OK);
	/* room: @outlen bounds too */
	assert_int_equal(wd_name_fold("abc.de", 6, 0, out, 6, NULL), WD_NAME_TOO_LONG);
	assert_string_equal(wd_name_check_text(WD_NAME_BAD_CHAR),
			    "labels may hold only letters, digits and hyphens");
}

static void test_wire(void **state)
{
	char out[WD_NAME_MAX + 1];

	(void)state;
	assert_int_equal(fold("_dmarc.Example.com", WD_NAME_WIRE, out, NULL), WD_NAME_OK);
	assert_string_equal(out, "_dmarc.example.com");
	assert_int_equal(fold("-a-.com", WD_NAME_WIRE, out, NULL), WD_NAME_OK);
	assert_int_equal(fold("_dmarc.example.com", 0, out, NULL), WD_NAME_BAD_CHAR);
}

static void test_ip_literal(void **state)
{
	(void)state;
	assert_true(wd_name_is_ip_literal("10.0.0.1"));
	assert_true(wd_name_is_ip_literal("::1"));
	assert_true(wd_name_is_ip_literal("[2001:db8::1]"));
	assert_false(wd_name_is_ip_literal("[10.0.0.1]"));
	assert_false(wd_name_is_ip_literal("example.com"));
	assert_false(wd_name_is_ip_literal("[]"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_valid),
	    cmocka_unit_test(test_refused),
	    cmocka_unit_test(test_wire),
	    cmocka_unit_test(test_ip_literal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

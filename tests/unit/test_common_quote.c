/* test_common_quote.c - wd_yaml_quote() (common/quote.c): one double-quoted literal that a
 * YAML reader and a JSON reader both give back as the original text. */
#include "common/common.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static void assert_quote(const char *in, const char *want)
{
	struct wd_buf b = WD_BUF_INIT;

	assert_int_equal(wd_yaml_quote(&b, in), 0);
	assert_string_equal(wd_buf_cstr(&b), want);
	wd_buf_free(&b);
}

static void test_quote(void **state)
{
	(void)state;
	assert_quote("", "\"\"");
	assert_quote("plain text", "\"plain text\"");
	assert_quote("a\"b\\c", "\"a\\\"b\\\\c\"");
	assert_quote("l1\nl2\r\t", "\"l1\\nl2\\r\\t\"");
	assert_quote("\x01\x1b[2J\x7f", "\"\\u0001\\u001b[2J\\u007f\"");
	assert_quote("caf\xc3\xa9: # - [x]", "\"caf\xc3\xa9: # - [x]\"");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_quote),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

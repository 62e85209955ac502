/* must_fail.c - the negative control of tests/cross/run-windows: a cmocka program with one
 * test that passes and one that fails. The script runs it under wine like the real tests and
 * wants its reading of the output to say "failed"; a reader that passed it would pass anything. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

static void test_passes(void **state)
{
	(void)state;
	assert_int_equal(1, 1);
}

static void test_fails(void **state)
{
	(void)state;
	assert_int_equal(1, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_passes),
	    cmocka_unit_test(test_fails),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

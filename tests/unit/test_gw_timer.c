/* test_gw_timer.c - unit tests for the gateway's timer heap (gateway/timer.c). */
#include "gateway/ev.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

static void test_order(void **state)
{
	struct gw_timer_heap h = {0};
	struct gw_timer t[100];
	uint64_t last = 0;
	size_t n = 0, want = 0;

	(void)state;
	srand(7);
	for (int i = 0; i < 100; i++) {
		gw_timer_init(&t[i], 0, &t[i]);
		assert_int_equal(gw_timer_arm(&h, &t[i], (uint64_t)(rand() % 1000) + 1), 0);
	}
	/* cancel every third, re-arm every fifth later */
	for (int i = 0; i < 100; i += 3)
		gw_timer_cancel(&h, &t[i]);
	for (int i = 1; i < 100; i += 5)
		assert_int_equal(gw_timer_arm(&h, &t[i], 2000 + (uint64_t)i), 0);
	for (int i = 0; i < 100; i++)
		want += t[i].pos != GW_TIMER_IDLE;
	assert_int_equal(gw_timer_next(&h) <= 2000 ? 1 : 0, 1);
	for (struct gw_timer *x; (x = gw_timer_expired(&h, UINT64_MAX)); n++) {
		assert_true(x->when >= last);
		assert_int_equal(x->pos, GW_TIMER_IDLE);
		last = x->when;
	}
	assert_int_equal(n, want);
	assert_int_equal(want, 100 - 34 + 7);
	assert_int_equal(gw_timer_next(&h), UINT64_MAX);
	gw_timer_heap_free(&h);
}

static void test_due_only(void **state)
{
	struct gw_timer_heap h = {0};
	struct gw_timer a, b;

	(void)state;
	gw_timer_init(&a, 1, NULL);
	gw_timer_init(&b, 2, NULL);
	gw_timer_arm(&h, &a, 50);
	gw_timer_arm(&h, &b, 10);
	assert_null(gw_timer_expired(&h, 9));
	assert_ptr_equal(gw_timer_expired(&h, 10), &b);
	assert_null(gw_timer_expired(&h, 49));
	gw_timer_cancel(&h, &b); /* idle: harmless */
	gw_timer_arm(&h, &a, 5); /* earlier re-arm moves it up */
	assert_int_equal(gw_timer_next(&h), 5);
	assert_ptr_equal(gw_timer_expired(&h, 5), &a);
	gw_timer_heap_free(&h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_order),
	    cmocka_unit_test(test_due_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

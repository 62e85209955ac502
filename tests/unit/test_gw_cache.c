/* test_gw_cache.c - unit tests for the gateway's name cache (gateway/cache.c). */
#include "gateway/gw.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#define S 1000000000ull

static void test_ttl_clamped(void **state)
{
	struct gw_cache c;
	struct gw_addr a[2];
	const struct gw_cache_entry *e;

	(void)state;
	gw_addr_parse("203.0.113.10", &a[0]);
	gw_addr_parse("2001:db8::10", &a[1]);
	assert_int_equal(gw_cache_init(&c, 16, 5, 300), 0);
	/* TTL 1 is raised to the floor (5 s) */
	assert_int_equal(gw_cache_put(&c, "a.test", 0, a, 2, 1, 100 * S), 0);
	e = gw_cache_get(&c, "a.test", 104 * S);
	assert_non_null(e);
	assert_int_equal(e->n, 2);
	assert_true(gw_addr_eq(&e->addrs[1], &a[1]));
	assert_null(gw_cache_get(&c, "a.test", 105 * S));
	/* TTL 1 day is cut to the ceiling (300 s) */
	assert_int_equal(gw_cache_put(&c, "b.test", 0, a, 1, 86400, 0), 0);
	assert_non_null(gw_cache_get(&c, "b.test", 299 * S));
	assert_null(gw_cache_get(&c, "b.test", 300 * S));
	/* negative answers: the floor */
	assert_int_equal(gw_cache_put(&c, "nx.test", 3, NULL, 0, 3600, 0), 0);
	e = gw_cache_get(&c, "nx.test", 4 * S);
	assert_non_null(e);
	assert_int_equal(e->rcode, 3);
	assert_null(gw_cache_get(&c, "nx.test", 5 * S));
	assert_null(gw_cache_get(&c, "unknown.test", 0));
	gw_cache_free(&c);
	assert_int_equal(gw_cache_init(&c, 16, 10, 5), -EINVAL);
}

static void test_replace_and_full(void **state)
{
	struct gw_cache c;
	struct gw_addr a, b;
	char name[32];

	(void)state;
	gw_addr_parse("203.0.113.10", &a);
	gw_addr_parse("203.0.113.11", &b);
	assert_int_equal(gw_cache_init(&c, 4, 1, 60), 0);
	assert_int_equal(gw_cache_put(&c, "x.test", 0, &a, 1, 60, 0), 0);
	assert_int_equal(gw_cache_put(&c, "x.test", 0, &b, 1, 60, 0), 0);
	assert_true(gw_addr_eq(&gw_cache_get(&c, "x.test", 0)->addrs[0], &b));
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "n%d.test", i);
		assert_int_equal(gw_cache_put(&c, name, 0, &a, 1, 10, 0), 0);
	}
	/* full of fresh entries: not cached */
	assert_int_equal(gw_cache_put(&c, "late.test", 0, &a, 1, 60, 0), -ENOSPC);
	/* once the short ones are stale, they make room */
	assert_int_equal(gw_cache_put(&c, "late.test", 0, &a, 1, 60, 11 * S), 0);
	assert_non_null(gw_cache_get(&c, "late.test", 11 * S));
	assert_non_null(gw_cache_get(&c, "x.test", 11 * S));
	gw_cache_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ttl_clamped),
	    cmocka_unit_test(test_replace_and_full),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

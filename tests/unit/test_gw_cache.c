/* test_gw_cache.c - unit tests for the gateway's name cache (gateway/cache.c): TTL clamps,
 * replacement, a full cache, and a flood of FNV-colliding names. */
#include "flood.h"
#include "gateway/gw.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

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

/*
 * 1,000 names a sandbox could ask for that all fell in one chain of the former FNV-1a
 * cache (1,024 buckets for a cache of 1,024): there a lookup compared ~500 names. Under
 * the keyed hash, looking each up costs a few probes; a sweep of the stale ones keeps the
 * rest found.
 */
static void test_fnv_flood(void **state)
{
	enum { N = 1000, BUCKETS = 1024 };
	char(*names)[32] = calloc(N, sizeof(*names));
	struct gw_cache c;
	struct gw_addr a;
	uint64_t before;

	(void)state;
	assert_non_null(names);
	gw_addr_parse("203.0.113.10", &a);
	flood_names(names, N, 0, BUCKETS - 1);
	assert_int_equal(gw_cache_init(&c, BUCKETS, 1, 60), 0);
	/* the even ones live 10 s, the odd ones 60 s */
	for (size_t i = 0; i < N; i++)
		assert_int_equal(gw_cache_put(&c, names[i], 0, &a, 1, i % 2 ? 60 : 10, 0), 0);
	before = c.t.probes;
	for (size_t i = 0; i < N; i++)
		assert_non_null(gw_cache_get(&c, names[i], S));
	/* linear probing at load <= 1/2 expects ~1.5 probes per hit; allow 4 */
	assert_true(c.t.probes - before <= 4 * (uint64_t)N);
	/* full: a new name at 11 s sweeps the 500 stale ones out, the rest stay */
	for (size_t i = N; i < BUCKETS; i++) {
		char extra[32];

		snprintf(extra, sizeof(extra), "extra%zu.test", i);
		assert_int_equal(gw_cache_put(&c, extra, 0, &a, 1, 60, 0), 0);
	}
	assert_int_equal(gw_cache_put(&c, "late.test", 0, &a, 1, 60, 11 * S), 0);
	assert_int_equal(c.t.n, BUCKETS - N / 2 + 1);
	before = c.t.probes;
	for (size_t i = 0; i < N; i++)
		assert_true((gw_cache_get(&c, names[i], 11 * S) != NULL) == (i % 2 == 1));
	assert_true(c.t.probes - before <= 4 * (uint64_t)N);
	gw_cache_free(&c);
	free(names);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ttl_clamped),
	    cmocka_unit_test(test_replace_and_full),
	    cmocka_unit_test(test_fnv_flood),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

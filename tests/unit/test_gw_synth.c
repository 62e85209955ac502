/* test_gw_synth.c - unit tests for the synthetic address pool (gateway/synth.c), with a
 * flood of FNV-colliding names. */
#include "flood.h"
#include "gateway/gw.h"

#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static void test_stable_and_reverse(void **state)
{
	struct gw_synth s;
	struct gw_addr a, b, a6;
	char txt[64];

	(void)state;
	assert_int_equal(gw_synth_init(&s, "100.96.0.0/12", "fd77:7764:5300::/48", 1000, 1), 0);
	assert_int_equal(gw_synth_get(&s, AF_INET, "allowed.test", &a), 1);
	assert_int_equal(gw_synth_get(&s, AF_INET, "allowed.test", &b), 0);
	assert_true(gw_addr_eq(&a, &b));
	assert_true(gw_synth_in_pool(&s, &a));
	assert_string_equal(gw_synth_name(&s, &a), "allowed.test");
	assert_int_equal(gw_synth_get(&s, AF_INET6, "allowed.test", &a6), 1);
	assert_int_equal(a6.family, AF_INET6);
	assert_string_equal(gw_synth_name(&s, &a6), "allowed.test");
	gw_addr_str(&a6, txt, sizeof(txt));
	assert_int_equal(strncmp(txt, "fd77:7764:5300:", 15), 0);
	gw_addr_parse("100.96.0.0", &b);
	assert_null(gw_synth_name(&s, &b));
	assert_int_equal(gw_synth_get(&s, AF_UNIX, "x", &b), -EINVAL);
	gw_synth_free(&s);
}

static void test_random_not_sequential(void **state)
{
	struct gw_synth s;
	struct gw_addr a[20];
	int sequential = 0;

	(void)state;
	assert_int_equal(gw_synth_init(&s, "100.96.0.0/12", "fd77:7764:5300::/48", 1000, 42), 0);
	for (int i = 0; i < 20; i++) {
		char name[32];

		snprintf(name, sizeof(name), "n%d.test", i);
		assert_int_equal(gw_synth_get(&s, AF_INET, name, &a[i]), 1);
		for (int j = 0; j < i; j++)
			assert_false(gw_addr_eq(&a[i], &a[j]));
		if (i && a[i].a[3] == (uint8_t)(a[i - 1].a[3] + 1))
			sequential++;
	}
	assert_true(sequential < 5);
	gw_synth_free(&s);
}

static void test_exhaustion_never_reuses(void **state)
{
	struct gw_synth s;
	struct gw_addr seen[6], a;
	char name[32];

	(void)state;
	/* a /29: 8 addresses minus network and broadcast = 6 */
	assert_int_equal(gw_synth_init(&s, "100.96.0.8/29", "fd77:7764:5300::/48", 1000, 3), 0);
	for (int i = 0; i < 6; i++) {
		snprintf(name, sizeof(name), "h%d.test", i);
		assert_int_equal(gw_synth_get(&s, AF_INET, name, &seen[i]), 1);
		assert_int_not_equal(seen[i].a[3], 8);
		assert_int_not_equal(seen[i].a[3], 15);
		for (int j = 0; j < i; j++)
			assert_false(gw_addr_eq(&seen[i], &seen[j]));
	}
	assert_int_equal(gw_synth_get(&s, AF_INET, "one-more.test", &a), -ENOSPC);
	/* the bound ones still answer */
	assert_int_equal(gw_synth_get(&s, AF_INET, "h2.test", &a), 0);
	assert_true(gw_addr_eq(&a, &seen[2]));
	gw_synth_free(&s);
}

static void test_limit(void **state)
{
	struct gw_synth s;
	struct gw_addr a;

	(void)state;
	assert_int_equal(gw_synth_init(&s, "100.96.0.0/12", "fd77:7764:5300::/48", 2, 3), 0);
	assert_int_equal(gw_synth_get(&s, AF_INET, "a.test", &a), 1);
	assert_int_equal(gw_synth_get(&s, AF_INET, "b.test", &a), 1);
	assert_int_equal(gw_synth_get(&s, AF_INET, "c.test", &a), -ENOSPC);
	assert_int_equal(gw_synth_get(&s, AF_INET6, "c.test", &a), 1);
	gw_synth_free(&s);
	assert_int_equal(gw_synth_init(&s, "100.96.0.0/31", "fd77:7764:5300::/48", 2, 3), -EINVAL);
	assert_int_equal(gw_synth_init(&s, "nonsense", "fd77:7764:5300::/48", 2, 3), -EINVAL);
}

static void test_many(void **state)
{
	struct gw_synth s;

	(void)state;
	assert_int_equal(gw_synth_init(&s, "100.96.0.0/20", "fd77:7764:5300::/48", 100000, 9), 0);
	for (int i = 0; i < 4094; i++) {
		char name[32];
		struct gw_addr a;

		snprintf(name, sizeof(name), "n%d.test", i);
		assert_int_equal(gw_synth_get(&s, AF_INET, name, &a), 1);
		assert_string_equal(gw_synth_name(&s, &a), name);
	}
	{
		struct gw_addr a;

		assert_int_equal(gw_synth_get(&s, AF_INET, "full.test", &a), -ENOSPC);
	}
	gw_synth_free(&s);
}

/*
 * 1,000 names a sandbox could ask addresses for that all fell in one home slot of the
 * former FNV-1a name index (2,048 slots for 1,000 entries): there each lookup walked the
 * whole cluster. Under the keyed hash, asking for each again and looking each address up
 * costs a few probes per lookup.
 */
static void test_fnv_flood(void **state)
{
	enum { N = 1000, SLOTS = 2048 };
	char(*names)[32] = calloc(N, sizeof(*names));
	struct gw_addr *addrs = calloc(N, sizeof(*addrs));
	struct gw_synth s;
	uint64_t before;

	(void)state;
	assert_non_null(names);
	assert_non_null(addrs);
	/* the former index seeded FNV-1a with the family */
	flood_names(names, N, AF_INET, SLOTS - 1);
	assert_int_equal(gw_synth_init(&s, "100.96.0.0/12", "fd77:7764:5300::/48", 65536, 5), 0);
	for (size_t i = 0; i < N; i++)
		assert_int_equal(gw_synth_get(&s, AF_INET, names[i], &addrs[i]), 1);
	before = s.by_name.probes;
	for (size_t i = 0; i < N; i++) {
		struct gw_addr again;

		assert_int_equal(gw_synth_get(&s, AF_INET, names[i], &again), 0);
		assert_true(gw_addr_eq(&again, &addrs[i]));
	}
	/* linear probing at load <= 1/2 expects ~1.5 probes per hit; allow 4 */
	assert_true(s.by_name.probes - before <= 4 * (uint64_t)N);
	before = s.by_addr.probes;
	for (size_t i = 0; i < N; i++)
		assert_string_equal(gw_synth_name(&s, &addrs[i]), names[i]);
	assert_true(s.by_addr.probes - before <= 4 * (uint64_t)N);
	gw_synth_free(&s);
	free(names);
	free(addrs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stable_and_reverse),
	    cmocka_unit_test(test_random_not_sequential),
	    cmocka_unit_test(test_exhaustion_never_reuses),
	    cmocka_unit_test(test_limit),
	    cmocka_unit_test(test_many),
	    cmocka_unit_test(test_fnv_flood),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

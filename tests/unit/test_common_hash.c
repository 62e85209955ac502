/* test_common_hash.c - the keyed hash and the hash table of common/hash.c: SipHash-2-4
 * reference vectors, the table against a simple model under random operations, several
 * items under one key, zeroed tables, sweeps, and a flood of names chosen to collide under
 * FNV-1a (as a sandbox could choose them against an unkeyed table) costing few probes per
 * lookup. */
#include "flood.h"
#include "common/common.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* key 00 01 .. 0f, message 00 01 .. (n-1): the SipHash paper's vectors (n = 0, 15) and
 * others of the reference implementation's table */
static void test_siphash_vectors(void **state)
{
	static const struct {
		size_t n;
		uint64_t want;
	} v[] = {
	    {0, 0x726fdb47dd0e0e31ULL},	 {1, 0x74f839c593dc67fdULL}, {7, 0xab0200f58b01d137ULL},
	    {8, 0x93f5f5799a932462ULL},	 {9, 0x9e0082df0ba9e4b0ULL}, {15, 0xa129ca6149be45e5ULL},
	    {63, 0x958a324ceb064572ULL},
	};
	uint8_t key[16], msg[64];

	(void)state;
	for (int i = 0; i < 16; i++)
		key[i] = (uint8_t)i;
	for (int i = 0; i < 64; i++)
		msg[i] = (uint8_t)i;
	for (size_t i = 0; i < WD_ARRAY_SIZE(v); i++)
		assert_true(wd_siphash24(key, msg, v[i].n) == v[i].want);
}

/* the process key is random: the same bytes hash the same within a process, and not like
 * the all-zero key */
static void test_keyed(void **state)
{
	static const uint8_t zero[16];

	(void)state;
	assert_true(wd_hash_str("example.test") == wd_hash("example.test", 12));
	assert_true(wd_hash_str("example.test") != wd_siphash24(zero, "example.test", 12));
	assert_true(wd_hash_str("a") != wd_hash_str("b"));
}

struct item {
	char key[24];
	int val;
};

static bool eq_key(const void *item, const void *key)
{
	return !strcmp(((const struct item *)item)->key, key);
}

/* random inserts and removals (removal shifts entries back) against a plain array */
static void test_table_model(void **state)
{
	enum { N = 3000 };
	struct item *items = calloc(N, sizeof(*items));
	bool *in = calloc(N, sizeof(*in));
	struct wd_htable t;
	size_t live = 0;

	(void)state;
	assert_non_null(items);
	assert_non_null(in);
	assert_int_equal(wd_htable_init(&t, 4), 0);
	srand(7);
	for (int i = 0; i < N; i++) {
		snprintf(items[i].key, sizeof(items[i].key), "k%d", i);
		items[i].val = i;
	}
	for (int step = 0; step < 40000; step++) {
		int i = rand() % N;
		uint64_t h = wd_hash_str(items[i].key);

		if (in[i] && rand() % 2) {
			assert_int_equal(wd_htable_remove(&t, h, &items[i]), 0);
			in[i] = false;
			live--;
		} else if (!in[i]) {
			assert_int_equal(wd_htable_insert(&t, h, &items[i]), 0);
			in[i] = true;
			live++;
		}
		if (step % 997 == 0) {
			for (int k = 0; k < N; k++) {
				struct item *f = wd_htable_find(&t, wd_hash_str(items[k].key),
								eq_key, items[k].key);

				assert_true(in[k] ? f == &items[k] : f == NULL);
			}
			assert_int_equal(t.n, live);
		}
	}
	{
		size_t cursor = 0, seen = 0;

		while (wd_htable_each(&t, &cursor))
			seen++;
		assert_int_equal(seen, live);
	}
	assert_int_equal(wd_htable_remove(&t, 1, &items[0]) == -ENOENT || in[0], true);
	assert_int_equal(wd_htable_insert(&t, 1, NULL), -EINVAL);
	wd_htable_free(&t);
	wd_htable_free(&t); /* harmless twice */
	free(items);
	free(in);
}

/* several items under one key: the cursor walks all of them, each once */
static void test_table_duplicates(void **state)
{
	struct item a = {"dup", 1}, b = {"dup", 2}, c = {"other", 3};
	struct wd_htable t;
	size_t cursor = 0;
	int sum = 0, n = 0;
	struct item *it;
	uint64_t h = wd_hash_str("dup");

	(void)state;
	assert_int_equal(wd_htable_init(&t, 0), 0);
	assert_int_equal(wd_htable_insert(&t, h, &a), 0);
	assert_int_equal(wd_htable_insert(&t, wd_hash_str("other"), &c), 0);
	assert_int_equal(wd_htable_insert(&t, h, &b), 0);
	while ((it = wd_htable_next(&t, &cursor, h, eq_key, "dup"))) {
		sum += it->val;
		n++;
	}
	assert_int_equal(n, 2);
	assert_int_equal(sum, 3);
	assert_int_equal(wd_htable_remove(&t, h, &a), 0);
	assert_ptr_equal(wd_htable_find(&t, h, eq_key, "dup"), &b);
	wd_htable_free(&t);
}

/* a zeroed table is an empty one: lookups find nothing, the first insert allocates */
static void test_table_zeroed(void **state)
{
	struct wd_htable t = {0};
	struct item a = {"a", 1};
	size_t cursor = 0;

	(void)state;
	assert_null(wd_htable_find(&t, 1, eq_key, "a"));
	assert_null(wd_htable_next(&t, &cursor, 1, eq_key, "a"));
	cursor = 0;
	assert_null(wd_htable_each(&t, &cursor));
	assert_int_equal(wd_htable_remove(&t, 1, &a), -ENOENT);
	assert_int_equal(wd_htable_sweep(&t, NULL, NULL), 0);
	assert_int_equal(wd_htable_insert(&t, 1, &a), 0);
	assert_ptr_equal(wd_htable_find(&t, 1, eq_key, "a"), &a);
	wd_htable_free(&t);
	assert_null(wd_htable_find(&t, 1, eq_key, "a")); /* freed: zeroed again */
}

struct sweep_ctx {
	int asked[64];
	int drop_mod;
};

static bool drop_some(void *item, void *ctx)
{
	struct item *it = item;
	struct sweep_ctx *c = ctx;

	c->asked[it->val]++;
	return it->val % c->drop_mod == 0;
}

/* round % 3: all at the last four slots of 64 (runs wrap), a mix, or spread */
static uint64_t sweep_hash(int round, const struct item *it)
{
	if (round % 3 == 0)
		return 60 + (uint64_t)(it->val % 4);
	if (round % 3 == 1)
		return (uint64_t)(it->val * 7 + round) % 64;
	return wd_hash_str(it->key);
}

/*
 * a sweep asks about each item exactly once and removes what it drops, also when runs of
 * entries wrap around the end of the array (hashes chosen to start at the last slots, so
 * removal shifts entries from the front of the array to its back)
 */
static void test_table_sweep(void **state)
{
	struct item items[64];

	(void)state;
	for (int i = 0; i < 64; i++) {
		// cppcheck-suppress legacyUninitvar ; snprintf writes the key, it reads none
		snprintf(items[i].key, sizeof(items[i].key), "s%d", i);
		items[i].val = i;
	}
	for (int round = 0; round < 300; round++) {
		struct sweep_ctx c = {.drop_mod = 1 + round % 5};
		struct wd_htable t;
		int n = 1 + round % 31, kept = 0;
		size_t removed;

		assert_int_equal(wd_htable_init(&t, 32), 0); /* 64 slots, never grows here */
		for (int i = 0; i < n; i++)
			assert_int_equal(
			    wd_htable_insert(&t, sweep_hash(round, &items[i]), &items[i]), 0);
		removed = wd_htable_sweep(&t, drop_some, &c);
		for (int i = 0; i < n; i++) {
			size_t cursor = 0;
			struct item *it;
			bool found = false;

			assert_int_equal(c.asked[i], 1);
			while ((it = wd_htable_each(&t, &cursor)))
				found |= it == &items[i];
			assert_true(found == (i % c.drop_mod != 0));
			kept += found;
		}
		assert_int_equal(removed, (size_t)(n - kept));
		assert_int_equal(t.n, (size_t)kept);
		/* what is left is still found through its hash */
		for (int i = 0; i < n; i++)
			if (i % c.drop_mod)
				assert_ptr_equal(wd_htable_find(&t, sweep_hash(round, &items[i]),
								eq_key, items[i].key),
						 &items[i]);
		wd_htable_free(&t);
	}
}

/*
 * 1,000 names a sandbox could ask for that all fall in one bucket of a 1024-bucket table
 * keyed by FNV-1a (found by search, as an attacker would): there every lookup walks the
 * whole chain, ~500 probes on average. Under the keyed hash they spread: the total probe
 * count of looking each up once stays within a small constant per name.
 */
static void test_fnv_flood(void **state)
{
	enum { N = 1000, BUCKETS = 1024 };
	char(*names)[32] = calloc(N, sizeof(*names));
	struct item *items = calloc(N, sizeof(*items));
	struct wd_htable t;
	uint32_t target = 0;
	uint64_t before;

	(void)state;
	assert_non_null(names);
	assert_non_null(items);
	target = flood_names(names, N, 0, BUCKETS - 1);
	/* they do collide under FNV-1a (the premise of the test) */
	for (size_t i = 0; i < N; i++)
		assert_int_equal(flood_fnv1a(0, names[i]) & (BUCKETS - 1), target);
	assert_int_equal(wd_htable_init(&t, BUCKETS / 2), 0);
	for (size_t i = 0; i < N; i++) {
		snprintf(items[i].key, sizeof(items[i].key), "%.23s", names[i]);
		assert_int_equal(wd_htable_insert(&t, wd_hash_str(items[i].key), &items[i]), 0);
	}
	before = t.probes;
	for (size_t i = 0; i < N; i++)
		assert_ptr_equal(
		    wd_htable_find(&t, wd_hash_str(items[i].key), eq_key, items[i].key), &items[i]);
	/* linear probing at load <= 1/2 expects ~1.5 probes per hit; allow 4 */
	assert_true(t.probes - before <= 4 * (uint64_t)N);
	wd_htable_free(&t);
	free(names);
	free(items);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_siphash_vectors), cmocka_unit_test(test_keyed),
	    cmocka_unit_test(test_table_model),	    cmocka_unit_test(test_table_duplicates),
	    cmocka_unit_test(test_table_zeroed),    cmocka_unit_test(test_table_sweep),
	    cmocka_unit_test(test_fnv_flood),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_gw_run.c - unit tests for the gateway's run table (gateway/run.c): registration,
 * attribution by ingress address pair, unregistration, and a flood of sandbox addresses
 * that collided under the former FNV-1a index staying cheap in probes. No sockets: a
 * zeroed struct gw with a config, pools and a random generator is all the table needs. */
#include "gateway/gw_internal.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const char policy[] = "version: 1\nnetwork:\n  allow:\n    - allowed.test\n";

/* a gateway with the default config, its runs pool widened to @runs_v4 (the table checks
 * only that addresses lie in it) */
static struct gw *table_new(const char *runs_v4)
{
	struct gw *g = calloc(1, sizeof(*g));
	const char *pools[4];

	assert_non_null(g);
	policy_gwconf_defaults(&g->conf);
	snprintf(g->conf.pool_v4, sizeof(g->conf.pool_v4), "%s", runs_v4);
	pools[0] = g->conf.pool_v4;
	pools[1] = g->conf.pool_v6;
	pools[2] = g->conf.synth_v4;
	pools[3] = g->conf.synth_v6;
	gw_limits_from_conf(&g->conf, &g->lim);
	gw_rng_seed(&g->rng, 1);
	for (int i = 0; i < 4; i++)
		assert_int_equal(gw_cidr_parse(pools[i], &g->own_net[i], &g->own_prefix[i]), 0);
	return g;
}

static void table_free(struct gw *g)
{
	while (g->runs)
		gw_run_unregister(g, g->runs);
	wd_htable_free(&g->run_index[0]);
	wd_htable_free(&g->run_index[1]);
	free(g);
}

static struct gw_ctl_req req_for(const char *id, const char *host4, const char *sandbox4)
{
	struct gw_ctl_req q = {
	    .op = GW_CTL_REGISTER, .policy = policy, .policy_len = strlen(policy)};

	snprintf(q.id, sizeof(q.id), "%s", id);
	snprintf(q.ifname, sizeof(q.ifname), "wd-%.12s", id);
	assert_int_equal(gw_addr_parse(host4, &q.host4), 0);
	assert_int_equal(gw_addr_parse(sandbox4, &q.sandbox4), 0);
	return q;
}

static void test_register_find_unregister(void **state)
{
	struct gw *g = table_new("10.213.0.0/16");
	struct gw_ctl_req a = req_for("a", "10.213.0.1", "10.213.0.2");
	struct gw_ctl_req b = req_for("b", "10.213.0.5", "10.213.0.6");
	struct gw_ctl_req dup = req_for("c", "10.213.0.9", "10.213.0.6");
	struct gw_ctl_req out = req_for("d", "10.214.0.1", "10.214.0.2");
	struct gw_addr local, peer;
	struct gw_run *r;
	char why[256];

	(void)state;
	assert_int_equal(gw_run_register(g, &a, 1000, why, sizeof(why)), 0);
	assert_int_equal(gw_run_register(g, &b, 1000, why, sizeof(why)), 0);
	assert_int_equal(gw_run_register(g, &a, 1000, why, sizeof(why)), -EEXIST);
	assert_int_equal(gw_run_register(g, &dup, 1000, why, sizeof(why)), -EEXIST);
	assert_int_equal(gw_run_register(g, &out, 1000, why, sizeof(why)), -EINVAL);
	assert_int_equal(g->nruns, 2);

	/* attribution: the sandbox address, and the pair with the run's own host address */
	r = gw_run_find_sandbox(g, &b.sandbox4);
	assert_non_null(r);
	assert_string_equal(r->id, "b");
	gw_addr_parse("10.213.0.5", &local);
	gw_addr_parse("10.213.0.6", &peer);
	assert_ptr_equal(gw_run_find_ingress(g, &local, &peer), r);
	gw_addr_parse("10.213.0.1", &local); /* a's host address: not b's pair */
	assert_null(gw_run_find_ingress(g, &local, &peer));
	gw_addr_parse("10.213.0.3", &peer);
	assert_null(gw_run_find_sandbox(g, &peer));
	assert_ptr_equal(gw_run_find_id(g, "a"), gw_run_find_sandbox(g, &a.sandbox4));

	/* gone from the index with its registration; the other stays */
	gw_run_unregister(g, r);
	assert_null(gw_run_find_sandbox(g, &b.sandbox4));
	assert_non_null(gw_run_find_sandbox(g, &a.sandbox4));
	assert_int_equal(g->nruns, 1);
	table_free(g);
}

/* the former index's bucket: FNV-1a over the address bytes, 1,024 buckets */
static unsigned fnv_bucket(const struct gw_addr *a)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < gw_addr_len(a->family); i++)
		h = (h ^ a->a[i]) * 16777619u;
	return h & 1023;
}

/*
 * 1,000 runs whose sandbox addresses all fell in one chain of the former index: there
 * attributing a connection walked ~500 runs. Under the keyed hash, finding each run by its
 * sandbox address costs a few probes.
 */
static void test_fnv_flood(void **state)
{
	enum { N = 1000 };
	struct gw *g = table_new("10.0.0.0/8");
	struct gw_addr *sb = calloc(N, sizeof(*sb));
	unsigned target = 0;
	uint64_t before;
	char why[256];
	size_t n = 0;

	(void)state;
	assert_non_null(sb);
	/* sandbox addresses in 10.0.0.0/9 that share a bucket; host addresses above it */
	for (uint32_t i = 2; n < N && i < (1u << 23); i++) {
		struct gw_addr a = {.family = AF_INET,
				    .a = {10, (uint8_t)(i >> 16), (uint8_t)(i >> 8), (uint8_t)i}};

		if (n == 0)
			target = fnv_bucket(&a);
		if (fnv_bucket(&a) == target)
			sb[n++] = a;
	}
	assert_int_equal(n, N);
	for (size_t i = 0; i < N; i++) {
		char id[16], host[16], sandbox[INET6_ADDRSTRLEN];
		struct gw_ctl_req q;

		snprintf(id, sizeof(id), "f%zu", i);
		snprintf(host, sizeof(host), "10.200.%zu.%zu", i / 256, i % 256);
		q = req_for(id, host, gw_addr_str(&sb[i], sandbox, sizeof(sandbox)));
		assert_int_equal(gw_run_register(g, &q, 1000, why, sizeof(why)), 0);
	}
	before = g->run_index[0].probes;
	for (size_t i = 0; i < N; i++) {
		char id[16];

		snprintf(id, sizeof(id), "f%zu", i);
		assert_string_equal(gw_run_find_sandbox(g, &sb[i])->id, id);
	}
	/* linear probing at load <= 1/2 expects ~1.5 probes per hit; allow 4 */
	assert_true(g->run_index[0].probes - before <= 4 * (uint64_t)N);
	table_free(g);
	free(sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_register_find_unregister),
	    cmocka_unit_test(test_fnv_flood),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

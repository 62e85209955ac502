/* test_gw_run.c - unit tests for the gateway's run table (gateway/run.c): registration
 * and its refusals, attribution by ingress address pair, lookup by id and by sandbox
 * address, unregistration while references remain, policy replacement, the
 * connection limits of a run and of the worker, the end-of-run hook, and a flood of
 * sandbox addresses that collided under the former FNV-1a index staying cheap in
 * probes; the ceiling's per-uid DNS query cap; a run's audit stream (daemon mode) getting
 * the log's own lines. No sockets, no root: the table needs the loop's services (an epoll
 * instance), an audit front without a log, a config and its limits. */
#include "conf/conf.h"
#include "gateway/auditrl.h"
#include "gateway/ev.h"
#include "gateway/run.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

static const char policy[] = "version: 1\nnetwork:\n  allow:\n    - allowed.test\n";

/* a run table with the default config, its runs pool widened to @runs_v4 (the table
 * checks only that addresses lie in it) */
struct table {
	struct wd_gwconf conf;
	struct gw_limits lim;
	struct gw_ev ev;
	struct gw_audit audit;
	struct gw_runs t;
	unsigned ended; /* runs the end hook saw */
};

static void on_end(void *ctx, struct gw_run *r)
{
	struct table *tb = ctx;

	assert_false(r->dead); /* told before it leaves */
	tb->ended++;
}

static struct table *table_new(const char *runs_v4)
{
	struct table *tb = calloc(1, sizeof(*tb));
	struct wd_err err;

	assert_non_null(tb);
	conf_defaults(&tb->conf);
	snprintf(tb->conf.pool_v4, sizeof(tb->conf.pool_v4), "%s", runs_v4);
	gw_limits_from_conf(&tb->conf, &tb->lim);
	assert_int_equal(gw_ev_init(&tb->ev, NULL, &err), 0);
	gw_audit_init(&tb->audit, &tb->ev, tb->lim.audit_bytes);
	assert_int_equal(gw_runs_init(&tb->t, &tb->ev, &tb->audit, &tb->conf, &tb->lim, &err), 0);
	tb->t.on_end = on_end;
	tb->t.on_end_ctx = tb;
	return tb;
}

static void table_free(struct table *tb)
{
	gw_runs_free(&tb->t);
	gw_audit_free(&tb->audit);
	gw_ev_free(&tb->ev);
	conf_free(&tb->conf);
	free(tb);
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
	struct table *tb = table_new("10.213.0.0/16");
	struct gw_runs *g = &tb->t;
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
	assert_int_equal(g->n, 2);

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
	assert_int_equal(g->n, 1);
	assert_int_equal(tb->ended, 1);
	table_free(tb);
}

/* every refusal of a register request, and what it leaves behind: nothing */
static void test_register_refusals(void **state)
{
	static const char bad_policy[] = "version: 1\nnetwork:\n  allow:\n    - \"*.com\"\n";
	struct table *tb = table_new("10.213.0.0/16");
	struct gw_ctl_req a = req_for("a", "10.213.0.1", "10.213.0.2");
	struct gw_ctl_req q;
	char why[1200];

	(void)state;
	assert_int_equal(gw_run_register(&tb->t, &a, 1000, why, sizeof(why)), 0);
	/* the same id */
	q = req_for("a", "10.213.0.5", "10.213.0.6");
	assert_int_equal(gw_run_register(&tb->t, &q, 1000, why, sizeof(why)), -EEXIST);
	assert_string_equal(why, "run a is already registered");
	/* the same interface, host address or sandbox address */
	q = req_for("b", "10.213.0.5", "10.213.0.6");
	snprintf(q.ifname, sizeof(q.ifname), "%s", a.ifname);
	assert_int_equal(gw_run_register(&tb->t, &q, 1000, why, sizeof(why)), -EEXIST);
	assert_string_equal(why, "interface or addresses already belong to run a");
	q = req_for("b", "10.213.0.1", "10.213.0.6");
	assert_int_equal(gw_run_register(&tb->t, &q, 1000, why, sizeof(why)), -EEXIST);
	q = req_for("b", "10.213.0.5", "10.213.0.2");
	assert_int_equal(gw_run_register(&tb->t, &q, 1000, why, sizeof(why)), -EEXIST);
	/* outside the runs pool: the host side, or the sandbox side only */
	q = req_for("b", "10.214.0.5", "10.214.0.6");
	assert_int_equal(gw_run_register(&tb->t, &q, 1000, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "addresses must lie in pools.runs_v4 (10.213.0.0/16)"));
	q = req_for("b", "10.213.0.5", "192.0.2.6");
	assert_int_equal(gw_run_register(&tb->t, &q, 1000, why, sizeof(why)), -EINVAL);
	/* a policy that does not validate: its first diagnostic */
	q = req_for("b", "10.213.0.5", "10.213.0.6");
	q.policy = bad_policy;
	q.policy_len = strlen(bad_policy);
	assert_int_equal(gw_run_register(&tb->t, &q, 1000, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "invalid policy: "));
	assert_non_null(strstr(why, "top-level domain"));
	/* none of them is in the table; the control is */
	assert_int_equal(tb->t.n, 1);
	assert_null(gw_run_find_id(&tb->t, "b"));
	assert_null(gw_run_find_sandbox(&tb->t, &q.sandbox4));
	q.policy = a.policy;
	q.policy_len = a.policy_len;
	assert_int_equal(gw_run_register(&tb->t, &q, 1000, why, sizeof(why)), 0);
	assert_int_equal(tb->t.n, 2);
	table_free(tb);
}

/* IPv6 attribution: the pair must match in its own family */
static void test_v6(void **state)
{
	struct table *tb = table_new("10.213.0.0/16");
	struct gw_ctl_req q = req_for("v", "10.213.0.9", "10.213.0.10");
	struct gw_addr local, peer;
	char why[256];
	struct gw_run *r;

	(void)state;
	assert_int_equal(gw_addr_parse("fd77:7764:6e00::9", &q.host6), 0);
	assert_int_equal(gw_addr_parse("fd77:7764:6e00::a", &q.sandbox6), 0);
	assert_int_equal(gw_run_register(&tb->t, &q, 1000, why, sizeof(why)), 0);
	r = gw_run_find_id(&tb->t, "v");
	assert_non_null(r);
	gw_addr_parse("fd77:7764:6e00::9", &local);
	gw_addr_parse("fd77:7764:6e00::a", &peer);
	assert_ptr_equal(gw_run_find_ingress(&tb->t, &local, &peer), r);
	/* a v4 local address with a v6 peer is no pair */
	assert_null(gw_run_find_ingress(&tb->t, &q.host4, &peer));
	/* the host side of the link is no sandbox */
	assert_null(gw_run_find_sandbox(&tb->t, &local));
	/* a v6 pair outside runs_v6 is refused */
	q = req_for("w", "10.213.0.11", "10.213.0.12");
	assert_int_equal(gw_addr_parse("fd00::1", &q.host6), 0);
	assert_int_equal(gw_addr_parse("fd00::2", &q.sandbox6), 0);
	assert_int_equal(gw_run_register(&tb->t, &q, 1000, why, sizeof(why)), -EINVAL);
	table_free(tb);
}

/* an unregistered run leaves the table at once but lives until its last
 * connection lets go (ASan sees the memory used and freed) */
static void test_refs(void **state)
{
	struct table *tb = table_new("10.213.0.0/16");
	struct gw_ctl_req a = req_for("a", "10.213.0.1", "10.213.0.2");
	struct gw_run *r;
	char why[256];

	(void)state;
	assert_int_equal(gw_run_register(&tb->t, &a, 1000, why, sizeof(why)), 0);
	r = gw_run_find_id(&tb->t, "a");
	gw_runs_conn_open(&tb->t, r);
	gw_runs_conn_open(&tb->t, r);
	assert_int_equal(r->conns, 2);
	assert_int_equal(tb->t.nconns, 2);
	gw_run_unregister(&tb->t, r);
	assert_true(r->dead);
	assert_int_equal(tb->ended, 1);
	assert_null(gw_run_find_id(&tb->t, "a"));
	assert_null(gw_run_find_sandbox(&tb->t, &a.sandbox4));
	assert_int_equal(tb->t.n, 0);
	gw_run_unregister(&tb->t, r); /* twice: nothing happens */
	assert_int_equal(tb->ended, 1);
	/* its id and addresses may be registered again while it lingers */
	assert_int_equal(gw_run_register(&tb->t, &a, 1000, why, sizeof(why)), 0);
	gw_runs_conn_close(&tb->t, r);
	assert_int_equal(r->conns, 1); /* still there: one connection left */
	gw_runs_conn_close(&tb->t, r); /* freed here */
	assert_int_equal(tb->t.nconns, 0);
	table_free(tb);
}

/* the connection limits: per run, for the worker, and the descriptor room */
static void test_limits(void **state)
{
	struct table *tb = table_new("10.213.0.0/16");
	struct gw_ctl_req a = req_for("a", "10.213.0.1", "10.213.0.2");
	struct gw_ctl_req b = req_for("b", "10.213.0.5", "10.213.0.6");
	struct gw_run *ra, *rb;
	char why[256];

	(void)state;
	tb->lim.conns_per_run = 2;
	tb->lim.conns_total = 3;
	tb->t.fd_conns = 4;
	assert_int_equal(gw_run_register(&tb->t, &a, 1000, why, sizeof(why)), 0);
	assert_int_equal(gw_run_register(&tb->t, &b, 1000, why, sizeof(why)), 0);
	ra = gw_run_find_id(&tb->t, "a");
	rb = gw_run_find_id(&tb->t, "b");
	assert_int_equal(gw_runs_conn_limit(&tb->t, ra), GW_LIMIT_NONE);
	gw_runs_conn_open(&tb->t, ra);
	gw_runs_conn_open(&tb->t, ra);
	assert_int_equal(gw_runs_conn_limit(&tb->t, ra), GW_LIMIT_RUN);
	assert_string_equal(gw_runs_conn_refusal(&tb->t, ra, " (DNS over TCP)", why, sizeof(why)),
			    "run connection limit reached (DNS over TCP)");
	assert_int_equal(gw_runs_conn_limit(&tb->t, rb), GW_LIMIT_NONE); /* the control */
	assert_null(gw_runs_conn_refusal(&tb->t, rb, "", why, sizeof(why)));
	gw_runs_conn_open(&tb->t, rb);
	assert_int_equal(gw_runs_conn_limit(&tb->t, rb), GW_LIMIT_GATEWAY);
	assert_string_equal(gw_runs_conn_refusal(&tb->t, rb, "", why, sizeof(why)),
			    "gateway connection limit reached");
	assert_true(gw_runs_room(&tb->t));
	tb->t.fd_conns = 3;
	assert_false(gw_runs_room(&tb->t));
	gw_runs_conn_close(&tb->t, ra);
	assert_true(gw_runs_room(&tb->t));
	assert_int_equal(gw_runs_conn_limit(&tb->t, ra), GW_LIMIT_NONE);
	assert_int_equal(gw_runs_conn_limit(&tb->t, rb), GW_LIMIT_NONE);
	gw_runs_conn_close(&tb->t, ra);
	gw_runs_conn_close(&tb->t, rb);
	table_free(tb);
}

/* replace: a new policy and name, or the old one kept with the reason */
static void test_replace(void **state)
{
	static const char next[] = "version: 1\nnetwork:\n  allow:\n    - other.test\n";
	struct table *tb = table_new("10.213.0.0/16");
	struct gw_ctl_req a = req_for("a", "10.213.0.1", "10.213.0.2");
	struct gw_ctl_req q = {
	    .op = GW_CTL_REPLACE, .policy = next, .policy_len = sizeof(next) - 1};
	struct wd_policy *before;
	struct gw_run *r;
	char why[1200];

	(void)state;
	snprintf(a.policy_name, sizeof(a.policy_name), "first.yaml");
	assert_int_equal(gw_run_register(&tb->t, &a, 1000, why, sizeof(why)), 0);
	r = gw_run_find_id(&tb->t, "a");
	assert_string_equal(r->policy_name, "first.yaml");
	assert_string_equal(r->acct.policy, "first.yaml"); /* what its events name */
	assert_true(policy_allows(r->policy, "allowed.test", 443));
	snprintf(q.policy_name, sizeof(q.policy_name), "second.yaml");
	assert_int_equal(gw_run_set_policy(r, &q, why, sizeof(why)), 0);
	assert_string_equal(r->acct.policy, "second.yaml");
	assert_false(policy_allows(r->policy, "allowed.test", 443));
	assert_true(policy_allows(r->policy, "other.test", 443));
	before = r->policy;
	q.policy = "version: 2\n";
	q.policy_len = strlen(q.policy);
	assert_int_equal(gw_run_set_policy(r, &q, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "invalid policy: "));
	assert_ptr_equal(r->policy, before);
	assert_string_equal(r->policy_name, "second.yaml");
	table_free(tb);
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
/* under a ceiling: the run's policy is the effective one (register and replace), a
 * denial cites the ceiling, the per-user caps on runs and connections count per uid
 * (another uid's runs are not touched by them) */
static void test_ceiling(void **state)
{
	static const char gw[] = "version: 1\n"
				 "ceiling:\n"
				 "  allow: [allowed.test, also.test]\n"	    /* 3 */
				 "  limits: { runs: 2, connections: 2 }\n"; /* 4 */
	static const char wide[] = "version: 1\nnetwork:\n  allow: [allowed.test, wide.test]\n";
	struct table *tb = table_new("10.213.0.0/16");
	struct gw_ctl_req a = req_for("a", "10.213.0.1", "10.213.0.2");
	struct gw_ctl_req b = req_for("b", "10.213.0.5", "10.213.0.6");
	struct gw_ctl_req c = req_for("c", "10.213.0.9", "10.213.0.10");
	struct gw_ctl_req d = req_for("d", "10.213.0.13", "10.213.0.14");
	struct policy_diags dg;
	struct policy_why w;
	struct gw_run *ra, *rd;
	char why[1200];

	(void)state;
	policy_diags_init(&dg);
	assert_int_equal(conf_parse(gw, strlen(gw), "/etc/warden/gateway.yaml", &tb->conf, &dg), 0);
	policy_diags_free(&dg);
	snprintf(tb->conf.pool_v4, sizeof(tb->conf.pool_v4), "10.213.0.0/16");
	a.policy = wide;
	a.policy_len = strlen(wide);
	assert_int_equal(gw_run_register(&tb->t, &a, 70001, why, sizeof(why)), 0);
	ra = gw_run_find_id(&tb->t, "a");
	assert_true(ra->policy->bounded);
	assert_true(policy_allows(ra->policy, "allowed.test", 443));
	assert_false(policy_allows(ra->policy, "wide.test", 443));
	assert_true(policy_ceiling_why(ra->policy, "wide.test", 443, &w));
	assert_string_equal(w.from, "/etc/warden/gateway.yaml:3");
	/* a replace cannot widen past it */
	assert_int_equal(gw_run_set_policy(ra, &a, why, sizeof(why)), 0);
	assert_false(policy_allows(ra->policy, "wide.test", 443));
	/* runs: 2 per uid; the third is refused with the ceiling's position */
	assert_int_equal(gw_run_register(&tb->t, &b, 70001, why, sizeof(why)), 0);
	assert_int_equal(gw_run_register(&tb->t, &c, 70001, why, sizeof(why)), -EUSERS);
	assert_string_equal(why, "uid 70001 has 2 runs registered; the host's ceiling "
				 "/etc/warden/gateway.yaml:4 allows 2 at once");
	assert_null(gw_run_find_id(&tb->t, "c"));
	/* another uid has its own count */
	assert_int_equal(gw_run_register(&tb->t, &d, 70002, why, sizeof(why)), 0);
	rd = gw_run_find_id(&tb->t, "d");
	/* connections: 2 for all of one uid's runs */
	assert_int_equal(gw_runs_conn_limit(&tb->t, ra), GW_LIMIT_NONE);
	gw_runs_conn_open(&tb->t, ra);
	gw_runs_conn_open(&tb->t, gw_run_find_id(&tb->t, "b"));
	assert_int_equal(gw_runs_conn_limit(&tb->t, ra), GW_LIMIT_USER);
	assert_string_equal(gw_runs_conn_refusal(&tb->t, ra, "", why, sizeof(why)),
			    "user connection limit reached: uid 70001 has 2 connections, the "
			    "host's ceiling /etc/warden/gateway.yaml:4 allows 2");
	assert_int_equal(gw_runs_conn_limit(&tb->t, rd), GW_LIMIT_NONE);
	gw_runs_conn_close(&tb->t, ra);
	assert_int_equal(gw_runs_conn_limit(&tb->t, ra), GW_LIMIT_NONE);
	gw_runs_conn_close(&tb->t, gw_run_find_id(&tb->t, "b"));
	/* an unregistered run frees its place */
	gw_run_unregister(&tb->t, gw_run_find_id(&tb->t, "b"));
	assert_int_equal(gw_run_register(&tb->t, &c, 70001, why, sizeof(why)), 0);
	table_free(tb);
}

/* the ceiling's dns_queries_per_s: one token bucket per uid, shared by its runs, refilled by
 * the loop's clock; another uid has its own; no ceiling: no cap */
static void test_dns_cap(void **state)
{
	static const char gw[] = "version: 1\n"
				 "ceiling:\n"
				 "  allow: any\n"
				 "  limits: { dns_queries_per_s: 3 }\n";
	struct table *tb = table_new("10.213.0.0/16"), *open_tb;
	struct gw_ctl_req a = req_for("a", "10.213.0.1", "10.213.0.2");
	struct gw_ctl_req b = req_for("b", "10.213.0.5", "10.213.0.6");
	struct gw_ctl_req c = req_for("c", "10.213.0.9", "10.213.0.10");
	struct policy_diags dg;
	struct gw_run *ra, *rb, *rc;
	char why[1200];
	int asked = 0;

	(void)state;
	policy_diags_init(&dg);
	assert_int_equal(conf_parse(gw, strlen(gw), "/etc/warden/gateway.yaml", &tb->conf, &dg), 0);
	policy_diags_free(&dg);
	snprintf(tb->conf.pool_v4, sizeof(tb->conf.pool_v4), "10.213.0.0/16");
	assert_int_equal(gw_run_register(&tb->t, &a, 70001, why, sizeof(why)), 0);
	assert_int_equal(gw_run_register(&tb->t, &b, 70001, why, sizeof(why)), 0);
	assert_int_equal(gw_run_register(&tb->t, &c, 70002, why, sizeof(why)), 0);
	ra = gw_run_find_id(&tb->t, "a");
	rb = gw_run_find_id(&tb->t, "b");
	rc = gw_run_find_id(&tb->t, "c");
	assert_int_equal(ra->policy->caps[POLICY_CAP_DNS_QUERIES_PER_S], 3);
	tb->ev.now = 5000000000ull;
	/* uid 70001: 3 at once, for both its runs together */
	asked += gw_runs_dns_take(&tb->t, ra);
	asked += gw_runs_dns_take(&tb->t, rb);
	asked += gw_runs_dns_take(&tb->t, ra);
	assert_int_equal(asked, 3);
	assert_false(gw_runs_dns_take(&tb->t, rb));
	assert_false(gw_runs_dns_take(&tb->t, ra));
	assert_int_equal(rb->dns_limited, 1);
	assert_int_equal(ra->dns_limited, 1);
	assert_int_equal(ra->user->dns_limited, 2);
	assert_int_equal(tb->ev.stats.dns_limited, 2);
	/* another uid is not touched by it */
	assert_true(gw_runs_dns_take(&tb->t, rc));
	/* a third of a second later: one more token */
	tb->ev.now += 334000000ull;
	assert_true(gw_runs_dns_take(&tb->t, rb));
	assert_false(gw_runs_dns_take(&tb->t, ra));
	table_free(tb);
	/* no ceiling: never refused */
	open_tb = table_new("10.213.0.0/16");
	assert_int_equal(gw_run_register(&open_tb->t, &a, 70001, why, sizeof(why)), 0);
	ra = gw_run_find_id(&open_tb->t, "a");
	for (int i = 0; i < 5000; i++)
		assert_true(gw_runs_dns_take(&open_tb->t, ra));
	assert_int_equal(ra->dns_limited, 0);
	table_free(open_tb);
}

/* a run's stream (daemon mode) gets every line written for it, exactly as the log has it,
 * deferred ones too; summaries and events of no run never reach it */
struct captured {
	struct wd_buf b;
	unsigned n;
};

static void capture(void *ctx, const char *line, size_t len)
{
	struct captured *c = ctx;

	assert_int_equal(wd_buf_append(&c->b, line, len), 0);
	c->n++;
}

static void test_audit_stream(void **state)
{
	char dir[] = "/tmp/test_gw_run.XXXXXX", path[64], file[8192];
	struct audit_log *log = NULL;
	struct gw_ev ev;
	struct gw_audit a;
	struct captured cap = {WD_BUF_INIT, 0};
	struct gw_audit_acct acct = {.id = "r1", .policy = "", .uid = 1500, .mode = "daemon"};
	struct audit_event allowed = {.type = AUDIT_TYPE_DNS,
				      .action = "dns.query",
				      .resource = "allowed.test",
				      .allowed = true,
				      .reason = "ok"};
	struct audit_event denied = {.type = AUDIT_TYPE_NET,
				     .action = "net.connect",
				     .resource = "evil.test",
				     .reason = "no rule"};
	struct audit_event other = {.type = AUDIT_TYPE_NET,
				    .action = "net.connect",
				    .resource = "noone.test",
				    .reason = "no run"};
	struct wd_err err;
	ssize_t n;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/audit.jsonl", dir);
	assert_int_equal(audit_log_open(path, &log, &err), 0);
	assert_int_equal(gw_ev_init(&ev, log, &err), 0);
	gw_audit_init(&a, &ev, 1 << 20);
	acct.stream = capture;
	acct.stream_ctx = &cap;
	gw_audit(&a, &acct, &allowed);
	gw_audit_denial(&a, &acct, &denied);
	gw_audit(&a, NULL, &other);
	gw_audit_flush(&ev);
	assert_int_equal(cap.n, 2);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	n = read(fd, file, sizeof(file) - 1);
	close(fd);
	assert_true(n > 0);
	file[n] = '\0';
	/* the run's two lines are the log's first two, byte for byte; the third is no run's */
	assert_true((size_t)n > cap.b.len);
	assert_memory_equal(file, cap.b.data, cap.b.len);
	assert_non_null(strstr(file + cap.b.len, "noone.test"));
	assert_null(strstr(cap.b.data, "noone.test"));
	assert_non_null(strstr(cap.b.data, "\"uid\":1500"));
	gw_audit_free(&a);
	gw_ev_free(&ev);
	audit_log_close(log);
	wd_buf_free(&cap.b);
	unlink(path);
	rmdir(dir);
}

static void test_fnv_flood(void **state)
{
	enum { N = 1000 };
	struct table *tb = table_new("10.0.0.0/8");
	struct gw_runs *g = &tb->t;
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
	before = g->index[0].probes;
	for (size_t i = 0; i < N; i++) {
		char id[16];

		snprintf(id, sizeof(id), "f%zu", i);
		assert_string_equal(gw_run_find_sandbox(g, &sb[i])->id, id);
	}
	/* linear probing at load <= 1/2 expects ~1.5 probes per hit; allow 4 */
	assert_true(g->index[0].probes - before <= 4 * (uint64_t)N);
	table_free(tb);
	free(sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_register_find_unregister),
	    cmocka_unit_test(test_register_refusals),
	    cmocka_unit_test(test_v6),
	    cmocka_unit_test(test_refs),
	    cmocka_unit_test(test_limits),
	    cmocka_unit_test(test_replace),
	    cmocka_unit_test(test_ceiling),
	    cmocka_unit_test(test_fnv_flood),
	    cmocka_unit_test(test_dns_cap),
	    cmocka_unit_test(test_audit_stream),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_gw_dnsbudget.c - unit tests for the DNS exfiltration budget: its arithmetic
 * (gateway/dnsbudget.c: costs, distinct names, repeats free, the window rolling over, parents
 * apart, the remembered names' cap) and the decision step over it (dnsdecide.c:
 * gw_dns_decide_budget(): wildcard rules only, exact names never, the policy's
 * limits.dns_label_kib_per_min, its default and 0 = off, the reason text). */
#include "gateway/decide.h"
#include "gateway/dnsbudget.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define SEC 1000000000ULL

/* charge @name (its wire key: the name itself) under @parent */
static enum gw_dnsb_result charge(struct gw_dnsbudget *b, const char *parent, const char *name,
				  uint64_t limit, uint64_t now)
{
	return gw_dnsb_charge(b, parent, name, (const uint8_t *)name, strlen(name), limit, now,
			      NULL);
}

static void test_cost(void **state)
{
	(void)state;
	assert_int_equal(gw_dnsb_cost("a.example.test", "example.test"), 1);
	assert_int_equal(gw_dnsb_cost("ab.cd.example.test", "example.test"), 5);
	/* never below 1, even for a name that is not below its parent */
	assert_int_equal(gw_dnsb_cost("example.test", "example.test"), 1);
}

/* distinct names are charged their bytes; a repeat is free; past the budget a new name is
 * refused (the first refusal of the window said apart) while a name seen before still passes */
static void test_distinct_and_repeats(void **state)
{
	struct gw_dnsbudget b = {0};
	uint64_t used;

	(void)state;
	/* budget 10 bytes: "aaaa" (4) + "bbbb" (4) fit, "cccc" (4) does not */
	assert_int_equal(charge(&b, "x.test", "aaaa.x.test", 10, 5 * SEC), GW_DNSB_CHARGED);
	assert_int_equal(gw_dnsb_charge(&b, "x.test", "bbbb.x.test", (const uint8_t *)"bbbb.x.test",
					11, 10, 5 * SEC, &used),
			 GW_DNSB_CHARGED);
	assert_int_equal(used, 8);
	assert_int_equal(charge(&b, "x.test", "aaaa.x.test", 10, 6 * SEC), GW_DNSB_SEEN);
	assert_int_equal(charge(&b, "x.test", "cccc.x.test", 10, 6 * SEC), GW_DNSB_OVER);
	assert_int_equal(charge(&b, "x.test", "dddd.x.test", 10, 7 * SEC), GW_DNSB_OVER_AGAIN);
	/* a refused name is not remembered: refused again, not free */
	assert_int_equal(charge(&b, "x.test", "cccc.x.test", 10, 7 * SEC), GW_DNSB_OVER_AGAIN);
	/* the control beside it: the names answered before the budget ran out still pass */
	assert_int_equal(charge(&b, "x.test", "bbbb.x.test", 10, 8 * SEC), GW_DNSB_SEEN);
	/* a short new name that still fits the window is charged */
	assert_int_equal(charge(&b, "x.test", "e.x.test", 10, 8 * SEC), GW_DNSB_CHARGED);
	gw_dnsb_free(&b);
	gw_dnsb_free(NULL);
}

/* the key is the wire form as sent: the same name in other letter cases is a new name */
static void test_case_is_new(void **state)
{
	struct gw_dnsbudget b = {0};

	(void)state;
	assert_int_equal(
	    gw_dnsb_charge(&b, "x.test", "abc.x.test", (const uint8_t *)"abc", 3, 100, SEC, NULL),
	    GW_DNSB_CHARGED);
	assert_int_equal(
	    gw_dnsb_charge(&b, "x.test", "abc.x.test", (const uint8_t *)"abc", 3, 100, SEC, NULL),
	    GW_DNSB_SEEN);
	assert_int_equal(
	    gw_dnsb_charge(&b, "x.test", "abc.x.test", (const uint8_t *)"aBc", 3, 100, SEC, NULL),
	    GW_DNSB_CHARGED);
	gw_dnsb_free(&b);
}

/* a window lasts one minute from its first charge; then it starts empty (and says its first
 * refusal again) */
static void test_window_rolls_over(void **state)
{
	struct gw_dnsbudget b = {0};
	uint64_t t0 = 1000 * SEC;

	(void)state;
	assert_int_equal(charge(&b, "x.test", "aaaa.x.test", 4, t0), GW_DNSB_CHARGED);
	assert_int_equal(charge(&b, "x.test", "bbbb.x.test", 4, t0 + 59 * SEC), GW_DNSB_OVER);
	assert_int_equal(charge(&b, "x.test", "bbbb.x.test", 4, t0 + 59 * SEC), GW_DNSB_OVER_AGAIN);
	assert_int_equal(charge(&b, "x.test", "bbbb.x.test", 4, t0 + GW_DNSB_WINDOW_NS),
			 GW_DNSB_CHARGED);
	assert_int_equal(charge(&b, "x.test", "cccc.x.test", 4, t0 + GW_DNSB_WINDOW_NS + SEC),
			 GW_DNSB_OVER);
	/* what was charged in either window stays free */
	assert_int_equal(charge(&b, "x.test", "aaaa.x.test", 4, t0 + GW_DNSB_WINDOW_NS + SEC),
			 GW_DNSB_SEEN);
	gw_dnsb_free(&b);
}

/* each parent has its own window */
static void test_per_parent(void **state)
{
	struct gw_dnsbudget b = {0};

	(void)state;
	assert_int_equal(charge(&b, "x.test", "aaaa.x.test", 4, SEC), GW_DNSB_CHARGED);
	assert_int_equal(charge(&b, "x.test", "bbbb.x.test", 4, SEC), GW_DNSB_OVER);
	assert_int_equal(charge(&b, "y.test", "bbbb.y.test", 4, SEC), GW_DNSB_CHARGED);
	assert_int_equal(charge(&b, "y.test", "cccc.y.test", 4, SEC), GW_DNSB_OVER);
	assert_int_equal(b.nparents, 2);
	gw_dnsb_free(&b);
}

/* limit 0: off, nothing is charged or remembered */
static void test_off(void **state)
{
	struct gw_dnsbudget b = {0};

	(void)state;
	for (int i = 0; i < 100; i++) {
		char n[32];

		snprintf(n, sizeof(n), "%d.x.test", i);
		assert_int_equal(charge(&b, "x.test", n, 0, SEC), GW_DNSB_SEEN);
	}
	assert_int_equal(b.nseen, 0);
	gw_dnsb_free(&b);
}

/* past GW_DNSB_NAMES_MAX a new name is charged but not remembered: it costs again */
static void test_names_cap(void **state)
{
	struct gw_dnsbudget b = {0};
	char n[32];

	(void)state;
	for (int i = 0; i < GW_DNSB_NAMES_MAX; i++) {
		snprintf(n, sizeof(n), "%d.x.test", i);
		assert_int_equal(charge(&b, "x.test", n, UINT32_MAX, SEC), GW_DNSB_CHARGED);
	}
	assert_int_equal(b.nseen, GW_DNSB_NAMES_MAX);
	assert_int_equal(charge(&b, "x.test", "0.x.test", UINT32_MAX, SEC), GW_DNSB_SEEN);
	assert_int_equal(charge(&b, "x.test", "new.x.test", UINT32_MAX, SEC), GW_DNSB_CHARGED);
	assert_int_equal(charge(&b, "x.test", "new.x.test", UINT32_MAX, SEC), GW_DNSB_CHARGED);
	gw_dnsb_free(&b);
}

/* ---------------------------------------------------------------- the decision step */

static struct wd_policy *load(const char *yaml)
{
	struct policy_diags d;
	struct wd_policy *p = NULL;

	policy_diags_init(&d);
	assert_int_equal(policy_parse(yaml, strlen(yaml), "p.yaml", &p, &d), 0);
	policy_diags_free(&d);
	return p;
}

static const char budget_yaml[] = "version: 1\n"
				  "network:\n"
				  "  allow:\n"
				  "    - \"*.exfil.test\"\n"
				  "    - fixed.exfil.test\n"
				  "    - \"*.other.test\"\n"
				  "    - plain.test\n"
				  "limits:\n"
				  "  dns_label_kib_per_min: 1\n";

/* @name asked as an A query */
static void query(struct dns_query *q, const char *name)
{
	size_t o = 0;

	memset(q, 0, sizeof(*q));
	q->header_ok = q->question_ok = true;
	q->qtype = DNS_TYPE_A;
	q->qclass = DNS_CLASS_IN;
	snprintf(q->qname, sizeof(q->qname), "%s", name);
	for (const char *l = name; *l;) {
		size_t n = strcspn(l, ".");

		q->qname_wire[o++] = (uint8_t)n;
		memcpy(q->qname_wire + o, l, n);
		o += n;
		l += n + (l[n] == '.');
	}
	q->qname_wire[o++] = 0;
	q->qname_wire_len = o;
}

/* decide @name at @now: the verdict's reason */
static enum gw_dns_reason decide(struct wd_policy *p, struct gw_dnsbudget *b, const char *name,
				 uint64_t now, struct gw_dns_verdict *v)
{
	struct dns_query q;
	struct gw_dns_facts f = {
	    .parsed = DNS_OK, .q = &q, .policy = p, .upstream = true, .budget = b, .now = now};

	query(&q, name);
	gw_dns_decide(&f, v);
	gw_dns_decide_budget(&f, v);
	return v->reason;
}

/* a name 60 bytes below its parent */
static void label(char *out, size_t size, int i, const char *parent)
{
	snprintf(out, size, "%060d.%s", i, parent);
}

static void test_decide_budget(void **state)
{
	struct wd_policy *p = load(budget_yaml);
	struct gw_dnsbudget b = {0};
	struct gw_dns_verdict v;
	struct dns_query q;
	char n[128], buf[600];
	int i;

	(void)state;
	assert_int_equal(gw_dns_budget_bytes(p), 1024);
	/* the control first: a name asked while the budget holds */
	assert_int_equal(decide(p, &b, "early.exfil.test", SEC, &v), GW_DR_SYNTHETIC);
	for (i = 0; i < 100; i++) {
		label(n, sizeof(n), i, "exfil.test");
		if (decide(p, &b, n, SEC, &v) != GW_DR_SYNTHETIC)
			break;
	}
	assert_int_equal(i, 16); /* 5 + 16 * 60 = 965 fit in 1024; one more does not */
	assert_int_equal(v.reason, GW_DR_DNS_BUDGET);
	assert_int_equal(v.action, GW_DNS_RCODE);
	assert_int_equal(v.rcode, DNS_RCODE_REFUSED);
	assert_false(v.allowed);
	assert_true(v.ede);
	assert_true(v.first);
	assert_int_equal(v.rule, 0); /* the rule is named */
	query(&q, n);
	assert_string_equal(gw_dns_reason_text(&v, &q, "p.yaml", NULL, buf, sizeof(buf)),
			    "DNS exfiltration budget spent: at most 1 KiB of new names a minute "
			    "below exfil.test (limits.dns_label_kib_per_min); names asked before "
			    "still answer");
	label(n, sizeof(n), 99, "exfil.test");
	assert_int_equal(decide(p, &b, n, SEC, &v), GW_DR_DNS_BUDGET);
	assert_false(v.first);
	/* names asked before still answer */
	assert_int_equal(decide(p, &b, "early.exfil.test", 2 * SEC, &v), GW_DR_SYNTHETIC);
	label(n, sizeof(n), 3, "exfil.test");
	assert_int_equal(decide(p, &b, n, 2 * SEC, &v), GW_DR_SYNTHETIC);
	/* an exact rule's name under the same parent is never budgeted */
	assert_int_equal(decide(p, &b, "fixed.exfil.test", 2 * SEC, &v), GW_DR_SYNTHETIC);
	assert_int_equal(decide(p, &b, "plain.test", 2 * SEC, &v), GW_DR_SYNTHETIC);
	/* another parent has its own budget */
	assert_int_equal(decide(p, &b, "fresh.other.test", 2 * SEC, &v), GW_DR_SYNTHETIC);
	/* a name no rule allows is the policy's denial, not the budget's */
	assert_int_equal(decide(p, &b, "nope.test", 2 * SEC, &v), GW_DR_NOT_ALLOWED);
	/* a minute on, the window starts again */
	label(n, sizeof(n), 50, "exfil.test");
	assert_int_equal(decide(p, &b, n, SEC + GW_DNSB_WINDOW_NS, &v), GW_DR_SYNTHETIC);
	/* without the run's state (learn mode) nothing is charged */
	label(n, sizeof(n), 51, "exfil.test");
	assert_int_equal(decide(p, NULL, n, SEC, &v), GW_DR_SYNTHETIC);
	gw_dnsb_free(&b);
	policy_free(p);
}

/* the policy's knob: unset is the default, 0 is off, and it renders back */
static void test_policy_limit(void **state)
{
	struct wd_policy *p = load("version: 1\nnetwork:\n  allow: [\"*.exfil.test\"]\n");
	struct wd_policy *off = load("version: 1\nnetwork:\n  allow: [\"*.exfil.test\"]\n"
				     "limits: { dns_label_kib_per_min: 0 }\n");
	struct gw_dnsbudget b = {0};
	struct gw_dns_verdict v;
	struct wd_buf out = WD_BUF_INIT;
	char n[128];

	(void)state;
	assert_int_equal(gw_dns_budget_bytes(p), GW_DNSB_DEFAULT_KIB * 1024);
	assert_int_equal(gw_dns_budget_bytes(off), 0);
	assert_int_equal(gw_dns_budget_bytes(NULL), 0);
	for (int i = 0; i < 200; i++) { /* 200 * 61 bytes: well past the default */
		label(n, sizeof(n), i, "exfil.test");
		assert_int_equal(decide(off, &b, n, SEC, &v), GW_DR_SYNTHETIC);
	}
	assert_int_equal(b.nseen, 0);
	assert_int_equal(policy_render_yaml(off, &out), 0);
	assert_non_null(strstr(out.data, "  dns_label_kib_per_min: 0\n"));
	wd_buf_free(&out);
	assert_int_equal(policy_render_yaml(p, &out), 0);
	assert_null(strstr(out.data, "dns_label_kib_per_min"));
	wd_buf_free(&out);
	gw_dnsb_free(&b);
	policy_free(p);
	policy_free(off);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cost),	 cmocka_unit_test(test_distinct_and_repeats),
	    cmocka_unit_test(test_case_is_new),	 cmocka_unit_test(test_window_rolls_over),
	    cmocka_unit_test(test_per_parent),	 cmocka_unit_test(test_off),
	    cmocka_unit_test(test_names_cap),	 cmocka_unit_test(test_decide_budget),
	    cmocka_unit_test(test_policy_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

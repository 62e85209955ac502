/* test_gw_udpdecide.c - unit tests for the UDP relay's decision (gateway/udpdecide.c): a flow
 * to a synthetic address bound to a name a `proto: udp` rule allows (and beside it the same
 * name on another port, a name only a TCP rule allows, an address bound to no name), the
 * ceiling's refusals, and a QUIC Initial's server name against the bound name. Every case
 * checks the verdict, the rule and the exact audit text. */
#include "conf/conf.h"
#include "gateway/udpdecide.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

static const char policy_yaml[] = "version: 1\n"
				  "network:\n"
				  "  allow:\n"
				  "    - { host: stun.allowed.test, proto: udp, ports: [3478] }\n"
				  "    - { host: \"*.quic.test\", proto: udp, ports: [443] }\n"
				  "    - web.allowed.test\n";

static struct wd_policy *parse(void)
{
	struct policy_diags d;
	struct wd_policy *p = NULL;

	policy_diags_init(&d);
	assert_int_equal(policy_parse(policy_yaml, strlen(policy_yaml), "p.yaml", &p, &d), 0);
	policy_diags_free(&d);
	return p;
}

static void decide(const struct wd_policy *p, const char *bound, uint16_t port, bool quic,
		   const char *sni, bool allow, enum gw_udp_reason r, int rule, const char *text)
{
	struct gw_addr dst;
	struct gw_udp_facts f = {
	    .policy = p, .dst = &dst, .port = port, .bound = bound, .quic = quic, .sni = sni};
	struct gw_udp_verdict v;
	char buf[600];

	assert_int_equal(gw_addr_parse("100.96.0.7", &dst), 0);
	gw_udp_decide(&f, &v);
	assert_int_equal(v.allow, allow);
	assert_int_equal(v.reason, r);
	assert_int_equal(v.rule, rule);
	assert_string_equal(gw_udp_reason_text(&v, "p.yaml", buf, sizeof(buf)), text);
}

static void test_names_and_ports(void **state)
{
	struct wd_policy *p = parse();

	(void)state;
	decide(p, "stun.allowed.test", 3478, false, NULL, true, GW_UR_ALLOWED, 0, "allowed");
	decide(p, "STUN.allowed.test.", 3478, false, NULL, true, GW_UR_ALLOWED, 0, "allowed");
	decide(p, "stun.allowed.test", 3479, false, NULL, false, GW_UR_NO_RULE, -1,
	       "udp to stun.allowed.test:3479 is not allowed by policy p.yaml (no `proto: udp` "
	       "rule matches)");
	/* a TCP rule never allows a datagram */
	decide(p, "web.allowed.test", 443, false, NULL, false, GW_UR_NO_RULE, -1,
	       "udp to web.allowed.test:443 is not allowed by policy p.yaml (no `proto: udp` "
	       "rule matches)");
	decide(p, "denied.test", 3478, false, NULL, false, GW_UR_NO_RULE, -1,
	       "udp to denied.test:3478 is not allowed by policy p.yaml (no `proto: udp` rule "
	       "matches)");
	decide(p, NULL, 3478, false, NULL, false, GW_UR_NO_NAME, -1,
	       "udp to 100.96.0.7:3478: the address names no host the run resolved (udp is "
	       "allowed by name only)");
	decide(NULL, "stun.allowed.test", 3478, false, NULL, false, GW_UR_NO_NAME, -1,
	       "udp to 100.96.0.7:3478: the address names no host the run resolved (udp is "
	       "allowed by name only)");
	assert_string_equal(gw_udp_reason_name(GW_UR_NO_RULE), "no_rule");
	assert_string_equal(gw_udp_reason_name(GW_UR_SNI_MISMATCH), "sni_mismatch");
	policy_free(p);
}

static void test_quic(void **state)
{
	struct wd_policy *p = parse();

	(void)state;
	decide(p, "a.quic.test", 443, true, "a.quic.test", true, GW_UR_ALLOWED, 1, "allowed");
	decide(p, "a.quic.test", 443, true, "A.Quic.Test", true, GW_UR_ALLOWED, 1, "allowed");
	decide(p, "a.quic.test", 443, true, "b.quic.test", false, GW_UR_SNI_MISMATCH, 1,
	       "QUIC Initial names b.quic.test but the flow is bound to a.quic.test (domain "
	       "fronting)");
	decide(p, "a.quic.test", 443, true, "", false, GW_UR_SNI_ABSENT, 1,
	       "QUIC Initial to a.quic.test:443 has no server name to check against the bound "
	       "name");
	/* the name's rule decides first: a denied name is NO_RULE whatever the SNI says */
	decide(p, "web.allowed.test", 443, true, "web.allowed.test", false, GW_UR_NO_RULE, -1,
	       "udp to web.allowed.test:443 is not allowed by policy p.yaml (no `proto: udp` "
	       "rule matches)");
	policy_free(p);
}

static void test_ceiling(void **state)
{
	static const char gw[] = "version: 1\n"
				 "ceiling:\n"
				 "  allow:\n"
				 "    - { host: stun.allowed.test, proto: udp, ports: [3478] }\n"
				 "    - \"*.quic.test:443\"\n"
				 "  deny: [\"bad.quic.test\"]\n";
	const struct policy_who who = {.uid = 1000, .name = "alice"};
	struct wd_policy *p = parse(), *e = NULL;
	struct policy_diags d;
	struct wd_gwconf c;

	(void)state;
	policy_diags_init(&d);
	assert_int_equal(conf_parse(gw, strlen(gw), "/etc/warden/gateway.yaml", &c, &d), 0);
	assert_int_equal(policy_ceiling_apply(c.ceiling, &who, p, &e), 0);
	decide(e, "stun.allowed.test", 3478, false, NULL, true, GW_UR_ALLOWED, 0, "allowed");
	/* the ceiling's rule for *.quic.test is TCP: the policy's udp rule is dropped */
	decide(e, "a.quic.test", 443, true, "a.quic.test", false, GW_UR_CEILING, -1,
	       "udp to a.quic.test:443 is not allowed by the host's ceiling "
	       "/etc/warden/gateway.yaml:3");
	decide(e, "bad.quic.test", 443, false, NULL, false, GW_UR_CEILING, -1,
	       "udp to bad.quic.test:443 is denied by the host's ceiling "
	       "/etc/warden/gateway.yaml:6 (`bad.quic.test`)");
	policy_free(e);
	policy_free(p);
	conf_free(&c);
	policy_diags_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_names_and_ports),
	    cmocka_unit_test(test_quic),
	    cmocka_unit_test(test_ceiling),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_gw_shadow.c - unit tests for a shadow run's decisions (`warden run --shadow`, issue 31
 * item 6; gateway/decide.c, dnsdecide.c): a denial the run's own policy makes is let through
 * with the denial kept for the "would_deny" event, each beside the same facts decided as a
 * normal run (the control); what stays denied in shadow mode: the SSRF guard, the host's
 * ceiling, malformed bytes, domain fronting, the proxy port's refusals. */
#include "conf/conf.h"
#include "gateway/decide.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const char policy_yaml[] = "version: 1\n"
				  "network:\n"
				  "  allow:\n"
				  "    - allowed.test:443\n"
				  "    - { cidr: \"10.20.0.0/16\", ports: [8080] }\n";

static struct wd_policy *P;
static struct gw_addr LOCAL[2];
static struct gw_ssrf_env ENV;

static struct gw_addr addr(const char *s)
{
	struct gw_addr a;

	assert_int_equal(gw_addr_parse(s, &a), 0);
	return a;
}

static int setup(void **state)
{
	static const char *const pools[4] = {"10.213.0.0/16", "fd77:7764:6e00::/48",
					     "100.96.0.0/12", "fd77:7764:5300::/48"};
	struct policy_diags d;

	(void)state;
	policy_diags_init(&d);
	assert_int_equal(policy_parse(policy_yaml, strlen(policy_yaml), "p.yaml", &P, &d), 0);
	policy_diags_free(&d);
	for (int i = 0; i < 4; i++)
		assert_int_equal(gw_cidr_parse(pools[i], &ENV.own_net[i], &ENV.own_prefix[i]), 0);
	LOCAL[0] = addr("203.0.113.1");
	LOCAL[1] = addr("2001:db8:0:1::1");
	ENV.local = LOCAL;
	ENV.nlocal = 2;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	policy_free(P);
	return 0;
}

static struct gw_first first_tls(const char *sni)
{
	struct gw_first f = {.proto = "tls", .tls = true, .tls_version = 0x0303};

	snprintf(f.sni, sizeof(f.sni), "%s", sni ? sni : "");
	return f;
}

/* ------------------------------------------------------------ TCP */

/* a name the policy does not allow: denied (the control), let through in shadow mode with the
 * policy's denial kept; a name it allows is no would-deny */
static void test_tcp_names(void **state)
{
	struct gw_addr syn = addr("100.96.0.7"), lit = addr("203.0.113.10");
	struct gw_first f = first_tls("other.test");
	struct gw_tcp_facts facts = {.policy = P, .dst = &syn, .port = 443, .bound = "other.test"};
	struct gw_tcp_verdict v, would;
	char buf[600];

	(void)state;
	/* bound to a synthetic address, before the client spoke */
	gw_tcp_decide(&facts, &v);
	assert_int_equal(v.action, GW_TCP_DENY);
	assert_int_equal(v.reason, GW_TR_NO_RULE);
	assert_true(gw_tcp_decide_shadow(&facts, &ENV, &v, &would));
	assert_int_equal(v.action, GW_TCP_ALLOW_NAME);
	assert_string_equal(v.name, "other.test");
	assert_int_equal(would.action, GW_TCP_DENY);
	assert_int_equal(would.reason, GW_TR_NO_RULE);
	assert_string_equal(gw_tcp_reason_text(&would, "p.yaml", buf, sizeof(buf)),
			    "other.test:443 is not allowed by policy p.yaml (no network.allow rule "
			    "matches)");
	/* the policy's own name: allowed as in any run, nothing would be denied */
	facts.bound = "allowed.test";
	assert_false(gw_tcp_decide_shadow(&facts, &ENV, &v, &would));
	assert_int_equal(v.action, GW_TCP_ALLOW_NAME);
	assert_int_equal(v.rule, 0);
	/* ... but on a port it does not allow: a would-deny */
	facts.port = 80;
	assert_true(gw_tcp_decide_shadow(&facts, &ENV, &v, &would));
	assert_int_equal(would.reason, GW_TR_NO_RULE);
	/* an unbound address named by its SNI */
	facts = (struct gw_tcp_facts){.policy = P, .dst = &lit, .port = 443, .first = &f};
	gw_tcp_decide(&facts, &v);
	assert_int_equal(v.action, GW_TCP_DENY);
	assert_true(gw_tcp_decide_shadow(&facts, &ENV, &v, &would));
	assert_int_equal(v.action, GW_TCP_ALLOW_NAME);
	assert_string_equal(v.name, "other.test");
	/* no name: the address by its class (public: let through, NO_NAME would have denied) */
	f = (struct gw_first){.proto = "tcp"};
	gw_tcp_decide(&facts, &v);
	assert_int_equal(v.reason, GW_TR_NO_NAME);
	assert_true(gw_tcp_decide_shadow(&facts, &ENV, &v, &would));
	assert_int_equal(v.action, GW_TCP_ALLOW_ADDR);
	assert_ptr_equal(v.dst, &lit);
	assert_int_equal(would.reason, GW_TR_NO_NAME);
}

/* the SSRF guard, malformed bytes and fronting stay denied in shadow mode */
static void test_tcp_kept(void **state)
{
	struct gw_addr loop = addr("127.0.0.1"), own = addr("203.0.113.1"),
		       priv = addr("10.20.1.1"), syn = addr("100.96.0.7");
	struct gw_first f = {.proto = "tcp"};
	struct gw_tcp_facts facts = {.policy = P, .dst = &loop, .port = 80, .first = &f};
	struct gw_tcp_verdict v, would;
	char buf[600];

	(void)state;
	/* a loopback literal without a name */
	assert_false(gw_tcp_decide_shadow(&facts, &ENV, &v, &would));
	assert_int_equal(v.action, GW_TCP_DENY);
	assert_int_equal(v.reason, GW_TR_SHADOW_CLASS);
	assert_string_equal(gw_tcp_reason_text(&v, "p.yaml", buf, sizeof(buf)),
			    "127.0.0.1:80 is refused in shadow mode as in any run (SSRF guard: "
			    "loopback address)");
	/* the host's own address */
	facts.dst = &own;
	assert_false(gw_tcp_decide_shadow(&facts, &ENV, &v, &would));
	assert_int_equal(v.reason, GW_TR_SHADOW_CLASS);
	/* a private address the policy's cidr rule allows: allowed as in any run (control) */
	facts.dst = &priv;
	facts.port = 8080;
	assert_false(gw_tcp_decide_shadow(&facts, &ENV, &v, &would));
	assert_int_equal(v.action, GW_TCP_ALLOW_ADDR);
	/* ... on another port: the policy denies it and the guard keeps it denied */
	facts.port = 22;
	assert_false(gw_tcp_decide_shadow(&facts, &ENV, &v, &would));
	assert_int_equal(v.action, GW_TCP_DENY);
	assert_int_equal(v.reason, GW_TR_SHADOW_CLASS);
	/* malformed bytes */
	f.why = "broken";
	assert_false(gw_tcp_decide_shadow(&facts, &ENV, &v, &would));
	assert_int_equal(v.reason, GW_TR_MALFORMED);
	/* domain fronting on a bound connection */
	f = first_tls("evil.test");
	facts = (struct gw_tcp_facts){
	    .policy = P, .dst = &syn, .port = 443, .bound = "allowed.test", .first = &f};
	assert_false(gw_tcp_decide_shadow(&facts, &ENV, &v, &would));
	assert_int_equal(v.reason, GW_TR_FRONTING_SNI);
	/* what is no host name keeps the policy's denial */
	f = first_tls("bad name.test");
	facts = (struct gw_tcp_facts){.policy = P, .dst = &own, .port = 443, .first = &f};
	assert_false(gw_tcp_decide_shadow(&facts, &ENV, &v, &would));
	assert_int_equal(v.action, GW_TCP_DENY);
	assert_int_equal(v.reason, GW_TR_NO_RULE);
	assert_true(gw_shadow_lifts(GW_TR_NO_RULE));
	assert_true(gw_shadow_lifts(GW_TR_NO_NAME));
	assert_false(gw_shadow_lifts(GW_TR_CEILING));
	assert_false(gw_shadow_lifts(GW_TR_MALFORMED));
	assert_false(gw_shadow_lifts(GW_TR_FRONTING_REQUEST));
	assert_false(gw_shadow_lifts(GW_TR_PROXY_HTTPS));
}

/* the proxy port: CONNECT, absolute-form and SOCKS5 by name let through; a loopback literal
 * and the forms the proxy cannot take stay denied */
static void test_proxy(void **state)
{
	static const struct {
		const char *bytes;
		enum gw_tcp_action shadow;
		bool lifted;
	} cases[] = {
	    {"CONNECT other.test:8443 HTTP/1.1\r\nHost: other.test:8443\r\n\r\n", GW_TCP_ALLOW_NAME,
	     true},
	    {"GET http://other.test:8080/x HTTP/1.1\r\nHost: other.test:8080\r\n\r\n",
	     GW_TCP_ALLOW_NAME, true},
	    {"CONNECT 203.0.113.10:443 HTTP/1.1\r\nHost: 203.0.113.10:443\r\n\r\n",
	     GW_TCP_ALLOW_ADDR, true},
	    {"CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n",
	     GW_TCP_ALLOW_NAME, false},
	    {"CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n", GW_TCP_DENY, false},
	    {"GET https://other.test/ HTTP/1.1\r\nHost: other.test\r\n\r\n", GW_TCP_DENY, false},
	    {"GET / HTTP/1.1\r\nHost: other.test\r\n\r\n", GW_TCP_DENY, false},
	};
	struct socks5_request sreq = {.host_kind = PROTO_HOST_NAME, .port = 443};
	struct gw_proxy_verdict pv;
	struct gw_tcp_verdict would;

	(void)state;
	for (size_t i = 0; i < WD_ARRAY_SIZE(cases); i++) {
		struct http_request req;
		enum http_result r = http_request_parse((const uint8_t *)cases[i].bytes,
							strlen(cases[i].bytes), &req);
		char buf[600];
		bool lifted = gw_proxy_decide_shadow(P, NULL, &ENV, r, &req, &pv, &would);

		if (pv.v.action != cases[i].shadow || lifted != cases[i].lifted)
			fail_msg("%s: %d (lifted %d) `%s`", cases[i].bytes, pv.v.action, lifted,
				 gw_tcp_reason_text(&pv.v, "p.yaml", buf, sizeof(buf)));
		if (lifted)
			assert_int_equal(would.action, GW_TCP_DENY);
		if (strstr(cases[i].bytes, "127.0.0.1"))
			assert_int_equal(pv.v.reason, GW_TR_SHADOW_CLASS);
		/* the control: a normal run denies each one lifted */
		gw_proxy_decide(P, NULL, r, &req, &pv);
		if (lifted && pv.v.action != GW_TCP_DENY)
			fail_msg("control: %s: %d", cases[i].bytes, pv.v.action);
	}
	snprintf(sreq.host, sizeof(sreq.host), "other.test");
	gw_socks_decide(P, NULL, NULL, &sreq, &pv);
	assert_int_equal(pv.v.action, GW_TCP_DENY);
	assert_true(gw_socks_decide_shadow(P, NULL, &ENV, &sreq, &pv, &would));
	assert_int_equal(pv.v.action, GW_TCP_ALLOW_NAME);
	assert_int_equal(would.reason, GW_TR_NO_RULE);
}

/* ------------------------------------------------------------ DNS */

/* @f decided in shadow mode for a query of @type for @name (its other facts as they are) */
static bool shadow_query(const struct gw_dns_facts *f, struct dns_query *q, uint16_t type,
			 const char *name, struct gw_dns_verdict *v, struct gw_dns_verdict *would)
{
	q->qtype = type;
	snprintf(q->qname, sizeof(q->qname), "%s", name);
	return gw_dns_decide_shadow(f, v, would);
}

static void test_dns(void **state)
{
	struct dns_query q = {
	    .header_ok = true, .question_ok = true, .qtype = DNS_TYPE_A, .qclass = DNS_CLASS_IN};
	struct gw_dns_facts f = {.parsed = DNS_OK, .q = &q, .policy = P, .upstream = true};
	struct gw_dns_verdict v, would;
	struct gw_addr peer = addr("10.213.0.2");
	char buf[600];

	(void)state;
	snprintf(q.qname, sizeof(q.qname), "other.test");
	gw_dns_decide(&f, &v);
	assert_int_equal(v.rcode, DNS_RCODE_NXDOMAIN); /* the control */
	assert_true(gw_dns_decide_shadow(&f, &v, &would));
	assert_int_equal(v.action, GW_DNS_SYNTHETIC);
	assert_true(v.allowed);
	assert_false(v.learn);
	assert_int_equal(v.rule, -1);
	assert_false(would.allowed);
	assert_string_equal(gw_dns_reason_text(&would, &q, "p.yaml", &peer, buf, sizeof(buf)),
			    "other.test is not allowed by policy p.yaml");
	assert_true(shadow_query(&f, &q, DNS_TYPE_TXT, "other.test", &v, &would));
	assert_int_equal(v.action, GW_DNS_FORWARD);
	/* an allowed name: no would-deny */
	assert_false(shadow_query(&f, &q, DNS_TYPE_A, "allowed.test", &v, &would));
	assert_int_equal(v.action, GW_DNS_SYNTHETIC);
	assert_int_equal(v.rule, 0);
	/* refused types stay refused */
	assert_false(shadow_query(&f, &q, DNS_TYPE_AXFR, "other.test", &v, &would));
	assert_int_equal(v.reason, GW_DR_TYPE_REFUSED);
	/* ANY of a name the policy does not allow: not answered, as for an allowed one */
	assert_false(shadow_query(&f, &q, DNS_TYPE_ANY, "other.test", &v, &would));
	assert_int_equal(v.reason, GW_DR_NOT_ANSWERED);
	/* what is no host name keeps the policy's denial */
	assert_false(shadow_query(&f, &q, DNS_TYPE_A, "bad name.test", &v, &would));
	assert_int_equal(v.reason, GW_DR_NOT_ALLOWED);
}

/* ------------------------------------------------------------ the host's ceiling */

/* under a ceiling, shadow mode lets through only what the ceiling allows */
static void test_ceiling(void **state)
{
	static const char gw[] = "version: 1\n"
				 "ceiling:\n"
				 "  allow:\n"
				 "    - \"*.ok.test:443\"\n"
				 "    - allowed.test:443\n"
				 "  deny: [\"bad.ok.test\"]\n";
	const struct policy_who who = {.uid = 1000, .name = "u"};
	struct wd_gwconf c;
	struct policy_diags d;
	struct wd_policy *e = NULL;
	struct gw_addr syn = addr("100.96.0.7");
	struct gw_tcp_facts facts = {.dst = &syn, .port = 443};
	struct gw_tcp_verdict v, would;
	struct dns_query q = {
	    .header_ok = true, .question_ok = true, .qtype = DNS_TYPE_A, .qclass = DNS_CLASS_IN};
	struct gw_dns_facts df = {.parsed = DNS_OK, .q = &q, .upstream = true};
	struct gw_dns_verdict dv, dwould;
	char buf[600];

	(void)state;
	policy_diags_init(&d);
	assert_int_equal(conf_parse(gw, strlen(gw), "/etc/warden/gateway.yaml", &c, &d), 0);
	policy_diags_free(&d);
	assert_int_equal(policy_ceiling_apply(c.ceiling, &who, P, &e), 0);
	facts.policy = e;
	df.policy = e;
	/* inside the ceiling, outside the policy: let through */
	facts.bound = "a.ok.test";
	assert_true(gw_tcp_decide_shadow(&facts, &ENV, &v, &would));
	assert_int_equal(v.action, GW_TCP_ALLOW_NAME);
	/* the ceiling's denied name and a name it has no rule for: denied, citing the ceiling */
	facts.bound = "bad.ok.test";
	assert_false(gw_tcp_decide_shadow(&facts, &ENV, &v, &would));
	assert_int_equal(v.reason, GW_TR_CEILING);
	facts.bound = "other.test";
	assert_false(gw_tcp_decide_shadow(&facts, &ENV, &v, &would));
	assert_int_equal(v.action, GW_TCP_DENY);
	assert_int_equal(v.reason, GW_TR_CEILING);
	assert_non_null(
	    strstr(gw_tcp_reason_text(&v, "p.yaml", buf, sizeof(buf)), "/etc/warden/gateway.yaml"));
	/* DNS the same */
	snprintf(q.qname, sizeof(q.qname), "a.ok.test");
	assert_true(gw_dns_decide_shadow(&df, &dv, &dwould));
	assert_int_equal(dv.action, GW_DNS_SYNTHETIC);
	snprintf(q.qname, sizeof(q.qname), "other.test");
	assert_false(gw_dns_decide_shadow(&df, &dv, &dwould));
	assert_int_equal(dv.reason, GW_DR_CEILING);
	assert_int_equal(dv.rcode, DNS_RCODE_NXDOMAIN);
	policy_free(e);
	conf_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tcp_names), cmocka_unit_test(test_tcp_kept),
	    cmocka_unit_test(test_proxy),     cmocka_unit_test(test_dns),
	    cmocka_unit_test(test_ceiling),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

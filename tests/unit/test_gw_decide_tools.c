/* test_gw_decide_tools.c - unit tests for a tool's own network rules (mcp.tools.NAME.network,
 * issue 31 item 1) in the gateway's pure decisions (gateway/decide.c, dnsdecide.c): a name
 * allowed for tool A is allowed with a call of A in flight, denied with only B's in flight and
 * with none (each denial saying which tool allows it and what was in flight), network.allow
 * counts at every moment, and the host's ceiling bounds a tool's rules as it bounds
 * network.allow. Also the policy side: parsing (a tool named `allow`), errors at their
 * position, and the YAML rendering parsed again. */
#include "conf/conf.h"
#include "gateway/decide.h"

#include <errno.h>
#include <jansson.h>
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
				  "  allow: [always.test]\n"
				  "mcp:\n"
				  "  tools:\n"
				  "    deny: [nope]\n"
				  "    fetch_a:\n" /* 7 */
				  "      network: [a.test, \"*.both.test:443\"]\n"
				  "    fetch_c:\n"
				  "      network: [\"*.both.test:443\"]\n"
				  "    allow:\n" /* a tool named `allow` */
				  "      network: [{ host: x.test, ports: [8080] }]\n";

static struct wd_policy *P;

static int setup(void **state)
{
	struct policy_diags d;

	(void)state;
	policy_diags_init(&d);
	assert_int_equal(policy_parse(policy_yaml, strlen(policy_yaml), "p.yaml", &P, &d), 0);
	policy_diags_free(&d);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	policy_free(P);
	return 0;
}

/* calls in flight of the tools @names (NULL-terminated), as toolcalls.c keeps them */
static void in_flight(struct gw_toolcalls *m, const char *const *names)
{
	memset(m, 0, sizeof(*m));
	for (unsigned i = 0; names[i]; i++) {
		snprintf(m->tool[i].name, sizeof(m->tool[i].name), "%s", names[i]);
		m->inflight[i] = i;
		m->ntools = m->ninflight = i + 1;
	}
}

/* the verdict on a connection to the synthetic address of @name:@port under @p with @calls */
static void tcp(const struct wd_policy *p, const struct gw_toolcalls *calls, const char *name,
		uint16_t port, struct gw_tcp_verdict *v)
{
	struct gw_addr dst;
	struct gw_tcp_facts f = {.policy = p, .dst = &dst, .port = port, .bound = name};

	assert_int_equal(gw_addr_parse("100.96.0.7", &dst), 0);
	f.calls = calls;
	gw_tcp_decide(&f, v);
}

/* the verdict on an A query for @name */
static void dns(const struct wd_policy *p, const struct gw_toolcalls *calls, const char *name,
		struct gw_dns_verdict *v)
{
	struct dns_query q = {
	    .header_ok = true, .question_ok = true, .qtype = DNS_TYPE_A, .qclass = DNS_CLASS_IN};
	struct gw_dns_facts f = {.parsed = DNS_OK, .q = &q, .policy = p, .upstream = true};
	char buf[600];

	snprintf(q.qname, sizeof(q.qname), "%s", name);
	f.calls = calls;
	gw_dns_decide(&f, v);
	/* every reason has its text (TOOL_ONLY reads the calls, which live past this call) */
	assert_non_null(gw_dns_reason_text(v, &q, "p.yaml", NULL, buf, sizeof(buf)));
}

static void test_parse(void **state)
{
	(void)state;
	assert_int_equal(P->ntool_net, 3);
	assert_string_equal(P->tool_net[0].tool, "fetch_a");
	assert_int_equal(P->tool_net[0].line, 7);
	assert_int_equal(P->tool_net[0].net->nrules, 2);
	assert_string_equal(P->tool_net[0].net->rules[1].text, "*.both.test:443");
	assert_string_equal(P->tool_net[2].tool, "allow");
	assert_false(P->has_tools_allow); /* `allow:` with a mapping is a tool */
	assert_int_equal(P->ntools_deny, 1);
	assert_int_equal(policy_tool_net_find(P, "fetch_c"), 1);
	assert_int_equal(policy_tool_net_find(P, "fetch"), -ENOENT);
	/* the tool's rules are not network.allow's */
	assert_int_equal(P->nrules, 1);
	assert_false(policy_allows(P, "a.test", 443));
}

/* the YAML rendering parses to the same tools and rules */
static void test_render(void **state)
{
	struct wd_buf b = WD_BUF_INIT;
	struct policy_diags d;
	struct wd_policy *q = NULL;

	(void)state;
	assert_int_equal(policy_render_yaml(P, &b), 0);
	policy_diags_init(&d);
	assert_int_equal(policy_parse(b.data, b.len, "r.yaml", &q, &d), 0);
	policy_diags_free(&d);
	assert_int_equal(q->ntool_net, 3);
	for (size_t i = 0; i < 3; i++) {
		assert_string_equal(q->tool_net[i].tool, P->tool_net[i].tool);
		assert_int_equal(q->tool_net[i].net->nrules, P->tool_net[i].net->nrules);
		for (size_t k = 0; k < q->tool_net[i].net->nrules; k++)
			assert_string_equal(q->tool_net[i].net->rules[k].text,
					    P->tool_net[i].net->rules[k].text);
	}
	assert_true(strstr(b.data, "    \"allow\":\n      network:\n") != NULL);
	policy_free(q);
	wd_buf_free(&b);
}

/* @yaml's first error is @line:@col and has @what */
static void want_error(const char *yaml, int line, int col, const char *what)
{
	struct policy_diags d;
	struct wd_policy *p = NULL;

	policy_diags_init(&d);
	assert_int_equal(policy_parse(yaml, strlen(yaml), "e.yaml", &p, &d), -EINVAL);
	policy_diags_sort(&d);
	assert_true(d.n > 0);
	assert_int_equal(d.v[0].line, line);
	assert_int_equal(d.v[0].col, col);
	if (!strstr(d.v[0].msg, what))
		fail_msg("`%s` has no `%s`", d.v[0].msg, what);
	policy_diags_free(&d);
}

static void test_parse_errors(void **state)
{
	(void)state;
	want_error("version: 1\nmcp:\n  tools:\n    fetch: [a.test]\n", 4, 5,
		   "a tool with rules of its own is a mapping");
	want_error("version: 1\nmcp:\n  tools:\n    \"f*\":\n      network: [a.test]\n", 4, 5,
		   "has a `*`");
	want_error("version: 1\nmcp:\n  tools:\n    f:\n      net: [a.test]\n", 5, 7,
		   "unknown key `net`");
	want_error("version: 1\nmcp:\n  tools:\n    f:\n      network: [\"http://a.test\"]\n", 5,
		   17, "mcp.tools.f.network");
	want_error("version: 1\nmcp:\n  tools:\n    f: {network: []}\n    f: {network: []}\n", 5, 5,
		   "given twice");
	want_error("version: 1\nmcp:\n  tools:\n    deny: [a]\n    deny: [b]\n", 5, 5,
		   "given twice");
}

/* a name allowed for fetch_a: allowed with fetch_a in flight, denied with fetch_b or none */
static void test_tcp(void **state)
{
	static const char *const a[] = {"fetch_a", NULL}, *const b[] = {"fetch_b", NULL};
	static const char *const ab[] = {"fetch_b", "fetch_a", NULL}, *const none[] = {NULL};
	struct gw_toolcalls m;
	struct gw_tcp_verdict v;
	char buf[600], rb[600];

	(void)state;
	in_flight(&m, a);
	tcp(P, &m, "a.test", 443, &v);
	assert_int_equal(v.action, GW_TCP_ALLOW_NAME);
	assert_int_equal(v.tool, 0);
	assert_int_equal(v.rule, 0);
	assert_string_equal(gw_tools_rule_text(P, v.tool, v.rule, v.tools, rb, sizeof(rb)),
			    "mcp.tools.fetch_a.network: a.test:80,443");
	/* its ports only */
	tcp(P, &m, "a.test", 22, &v);
	assert_int_equal(v.action, GW_TCP_DENY);
	assert_int_equal(v.reason, GW_TR_NO_RULE);

	in_flight(&m, b);
	tcp(P, &m, "a.test", 443, &v);
	assert_int_equal(v.action, GW_TCP_DENY);
	assert_int_equal(v.reason, GW_TR_TOOL_ONLY);
	assert_string_equal(
	    gw_tcp_reason_text(&v, "p.yaml", buf, sizeof(buf)),
	    "a.test:443 is not allowed by policy p.yaml now: allowed only during "
	    "calls of tool fetch_a (mcp.tools.fetch_a.network); in flight: fetch_b");

	in_flight(&m, none);
	tcp(P, &m, "a.test", 443, &v);
	assert_int_equal(v.reason, GW_TR_TOOL_ONLY);
	assert_string_equal(gw_tcp_reason_text(&v, "p.yaml", buf, sizeof(buf)),
			    "a.test:443 is not allowed by policy p.yaml now: allowed only during "
			    "calls of tool fetch_a (mcp.tools.fetch_a.network); no tool call was "
			    "in flight");
	tcp(P, NULL, "a.test", 443, &v);
	assert_int_equal(v.reason, GW_TR_TOOL_ONLY);

	/* the positive control through the same probe: network.allow at every moment */
	tcp(P, NULL, "always.test", 443, &v);
	assert_int_equal(v.action, GW_TCP_ALLOW_NAME);
	assert_int_equal(v.tool, -1);
	assert_string_equal(gw_tools_rule_text(P, v.tool, v.rule, v.tools, rb, sizeof(rb)),
			    "always.test:80,443");
	in_flight(&m, b);
	tcp(P, &m, "always.test", 443, &v);
	assert_int_equal(v.action, GW_TCP_ALLOW_NAME);
	/* a name no rule allows is NO_RULE, with or without calls */
	tcp(P, &m, "other.test", 443, &v);
	assert_int_equal(v.reason, GW_TR_NO_RULE);

	/* two tools in flight whose rules allow it: both named */
	in_flight(&m, ab);
	tcp(P, &m, "a.test", 80, &v);
	assert_int_equal(v.action, GW_TCP_ALLOW_NAME);
	static const char *const ac[] = {"fetch_c", "fetch_a", NULL};
	in_flight(&m, ac);
	tcp(P, &m, "x.both.test", 443, &v);
	assert_int_equal(v.action, GW_TCP_ALLOW_NAME);
	assert_int_equal(v.tools, 3);
	assert_string_equal(gw_tools_rule_text(P, v.tool, v.rule, v.tools, rb, sizeof(rb)),
			    "mcp.tools.fetch_a.network: *.both.test:443 (also fetch_c)");
	/* two tools would allow it */
	in_flight(&m, b);
	tcp(P, &m, "x.both.test", 443, &v);
	assert_int_equal(v.reason, GW_TR_TOOL_ONLY);
	assert_non_null(strstr(gw_tcp_reason_text(&v, "p.yaml", buf, sizeof(buf)),
			       "calls of tool fetch_a (mcp.tools.fetch_a.network), fetch_c "
			       "(mcp.tools.fetch_c.network)"));

	/* a replace decides an open connection again with the calls in flight then */
	{
		struct gw_addr dst;

		assert_int_equal(gw_addr_parse("203.0.113.11", &dst), 0);
		in_flight(&m, a);
		gw_tcp_recheck(P, &m, "a.test", &dst, 443, &v);
		assert_int_equal(v.action, GW_TCP_ALLOW_NAME);
		in_flight(&m, none);
		gw_tcp_recheck(P, &m, "a.test", &dst, 443, &v);
		assert_int_equal(v.reason, GW_TR_TOOL_ONLY);
		gw_tcp_recheck(P, &m, "always.test", &dst, 443, &v);
		assert_int_equal(v.action, GW_TCP_ALLOW_NAME);
	}

	/* the first bytes' name (an unbound connection) is decided the same way */
	{
		struct gw_addr dst;
		struct gw_first f = {.proto = "tls", .tls = true};
		struct gw_tcp_facts fa = {.policy = P, .dst = &dst, .port = 443, .first = &f};

		assert_int_equal(gw_addr_parse("198.51.100.9", &dst), 0);
		snprintf(f.sni, sizeof(f.sni), "a.test");
		in_flight(&m, a);
		fa.calls = &m;
		gw_tcp_decide(&fa, &v);
		assert_int_equal(v.action, GW_TCP_ALLOW_NAME);
		in_flight(&m, b);
		gw_tcp_decide(&fa, &v);
		assert_int_equal(v.reason, GW_TR_TOOL_ONLY);
	}
}

/* the proxy port (CONNECT, absolute-form, SOCKS5): the same rules as a transparent connection */
static void test_proxy(void **state)
{
	static const char *const a[] = {"fetch_a", NULL}, *const b[] = {"fetch_b", NULL};
	static const char connect[] = "CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\n\r\n";
	static const char get[] = "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n";
	struct gw_toolcalls m;
	struct http_request req;
	struct gw_proxy_verdict pv;
	struct socks5_request sq = {.cmd = 1, .host_kind = PROTO_HOST_NAME, .port = 443};
	enum http_result r;
	char buf[600];

	(void)state;
	snprintf(sq.host, sizeof(sq.host), "a.test");
	for (int k = 0; k < 2; k++) {
		const char *head = k ? get : connect;

		r = http_request_parse((const uint8_t *)head, strlen(head), &req);
		assert_int_equal(r, HTTP_OK);
		in_flight(&m, a);
		gw_proxy_decide(P, &m, r, &req, &pv);
		assert_int_equal(pv.v.action, GW_TCP_ALLOW_NAME);
		assert_int_equal(pv.v.tool, 0);
		in_flight(&m, b);
		gw_proxy_decide(P, &m, r, &req, &pv);
		assert_int_equal(pv.v.action, GW_TCP_DENY);
		assert_int_equal(pv.v.reason, GW_TR_TOOL_ONLY);
		assert_non_null(strstr(gw_tcp_reason_text(&pv.v, "p.yaml", buf, sizeof(buf)),
				       "in flight: fetch_b"));
		gw_proxy_decide(P, NULL, r, &req, &pv);
		assert_int_equal(pv.v.reason, GW_TR_TOOL_ONLY);
	}
	in_flight(&m, a);
	gw_socks_decide(P, &m, NULL, &sq, &pv);
	assert_int_equal(pv.v.action, GW_TCP_ALLOW_NAME);
	in_flight(&m, b);
	gw_socks_decide(P, &m, NULL, &sq, &pv);
	assert_int_equal(pv.v.reason, GW_TR_TOOL_ONLY);
	/* the control through the same probe: network.allow's name, no call in flight */
	snprintf(sq.host, sizeof(sq.host), "always.test");
	gw_socks_decide(P, NULL, NULL, &sq, &pv);
	assert_int_equal(pv.v.action, GW_TCP_ALLOW_NAME);
	assert_int_equal(pv.v.tool, -1);
}

static void test_dns(void **state)
{
	static const char *const a[] = {"fetch_a", NULL}, *const b[] = {"fetch_b", NULL};
	static const char *const none[] = {NULL};
	struct gw_toolcalls m;
	struct gw_dns_verdict v;
	struct dns_query q = {.qtype = DNS_TYPE_A, .qclass = DNS_CLASS_IN};
	char buf[600], rb[600];

	(void)state;
	snprintf(q.qname, sizeof(q.qname), "a.test");
	in_flight(&m, a);
	dns(P, &m, "a.test", &v);
	assert_int_equal(v.action, GW_DNS_SYNTHETIC);
	assert_true(v.allowed);
	assert_string_equal(gw_tools_rule_text(P, v.tool, v.rule, v.tools, rb, sizeof(rb)),
			    "mcp.tools.fetch_a.network: a.test:80,443");
	in_flight(&m, b);
	dns(P, &m, "a.test", &v);
	assert_int_equal(v.action, GW_DNS_RCODE);
	assert_int_equal(v.rcode, DNS_RCODE_NXDOMAIN);
	assert_int_equal(v.reason, GW_DR_TOOL_ONLY);
	assert_false(v.allowed);
	assert_string_equal(gw_dns_reason_text(&v, &q, "p.yaml", NULL, buf, sizeof(buf)),
			    "a.test is not allowed by policy p.yaml now: allowed only during calls "
			    "of tool fetch_a (mcp.tools.fetch_a.network); in flight: fetch_b");
	in_flight(&m, none);
	dns(P, &m, "a.test", &v);
	assert_int_equal(v.reason, GW_DR_TOOL_ONLY);
	dns(P, NULL, "a.test", &v);
	assert_int_equal(v.reason, GW_DR_TOOL_ONLY);
	/* the control, network.allow, in and out of calls */
	dns(P, NULL, "always.test", &v);
	assert_int_equal(v.action, GW_DNS_SYNTHETIC);
	assert_int_equal(v.tool, -1);
	in_flight(&m, b);
	dns(P, &m, "always.test", &v);
	assert_int_equal(v.action, GW_DNS_SYNTHETIC);
	dns(P, &m, "other.test", &v);
	assert_int_equal(v.reason, GW_DR_NOT_ALLOWED);
	/* a tool's rule on another port answers the name (as network.allow's does) */
	static const char *const t[] = {"allow", NULL};
	in_flight(&m, t);
	dns(P, &m, "x.test", &v);
	assert_int_equal(v.action, GW_DNS_SYNTHETIC);
}

/* the host's ceiling bounds a tool's rules exactly as network.allow's: a name it refuses stays
 * refused with the tool in flight, and the denial says it is the ceiling */
static void test_ceiling(void **state)
{
	static const char gw[] = "version: 1\n"
				 "ceiling:\n"
				 "  allow:\n"
				 "    - \"*.both.test:443\"\n"
				 "    - \"always.test:443\"\n"
				 "    - \"x.test:443\"\n"
				 "  deny: [\"a.test\"]\n";
	static const char *const a[] = {"fetch_a", NULL};
	const struct policy_who who = {.uid = 1000, .name = "u"};
	struct wd_gwconf c;
	struct policy_diags d;
	struct wd_policy *e = NULL;
	struct gw_toolcalls m;
	struct gw_tcp_verdict v;
	struct gw_dns_verdict dv;
	char buf[600];

	(void)state;
	policy_diags_init(&d);
	assert_int_equal(conf_parse(gw, strlen(gw), "/etc/warden/gateway.yaml", &c, &d), 0);
	policy_diags_free(&d);
	assert_int_equal(policy_ceiling_apply(c.ceiling, &who, P, &e), 0);
	assert_int_equal(e->ntool_net, 3);
	assert_true(e->tool_net[0].net->bounded);
	/* warden policy check --ceiling shows each tool's rules within the ceiling */
	{
		struct wd_buf b = WD_BUF_INIT;

		assert_int_equal(policy_render_effective(e, &b), 0);
		if (!strstr(b.data, "mcp:\n  tools:\n    \"fetch_a\":\n      network:\n        - "
				    "\"*.both.test:443\"  # within the ceiling's rule at "
				    "/etc/warden/gateway.yaml:4\n") ||
		    !strstr(b.data, "    \"allow\":\n      network: []\n"))
			fail_msg("%s", b.data);
		wd_buf_free(&b);
	}
	in_flight(&m, a);
	/* the ceiling denies a.test: refused during fetch_a's call, and said so */
	tcp(e, &m, "a.test", 443, &v);
	assert_int_equal(v.action, GW_TCP_DENY);
	assert_int_equal(v.reason, GW_TR_CEILING);
	assert_non_null(strstr(gw_tcp_reason_text(&v, "p.yaml", buf, sizeof(buf)),
			       "denied by the host's ceiling"));
	dns(e, &m, "a.test", &dv);
	assert_int_equal(dv.reason, GW_DR_CEILING);
	/* the control: the tool's other rule, within the ceiling, on its port */
	tcp(e, &m, "x.both.test", 443, &v);
	assert_int_equal(v.action, GW_TCP_ALLOW_NAME);
	assert_int_equal(v.tool, 0);
	/* ... and network.allow's name on the ceiling's port only */
	tcp(e, &m, "always.test", 443, &v);
	assert_int_equal(v.action, GW_TCP_ALLOW_NAME);
	tcp(e, &m, "always.test", 80, &v);
	assert_int_equal(v.action, GW_TCP_DENY);
	assert_int_equal(v.reason, GW_TR_CEILING);
	/* the tool `allow`'s x.test:8080: the ceiling has no port 8080 */
	static const char *const t[] = {"allow", NULL};
	in_flight(&m, t);
	tcp(e, &m, "x.test", 8080, &v);
	assert_int_equal(v.action, GW_TCP_DENY);
	assert_int_equal(v.reason, GW_TR_CEILING);
	policy_free(e);
	conf_free(&c);
}

/* a shadow run lets a tool-only denial through (the run's own policy), as it does a name no rule
 * allows; beside it, the same decision in a normal run denies */
static void test_shadow_lifts_tool_only(void **state)
{
	static const char *const b[] = {"fetch_b", NULL};
	struct gw_toolcalls calls;
	struct gw_tcp_verdict v, would;
	struct gw_dns_verdict dv, dwould;
	struct gw_ssrf_env env;
	struct gw_addr dst;
	struct gw_tcp_facts f = {.policy = P, .dst = &dst, .port = 443, .bound = "a.test"};
	struct dns_query q = {
	    .header_ok = true, .question_ok = true, .qtype = DNS_TYPE_A, .qclass = DNS_CLASS_IN};
	struct gw_dns_facts df = {.parsed = DNS_OK, .q = &q, .policy = P, .upstream = true};

	(void)state;
	memset(&env, 0, sizeof(env));
	in_flight(&calls, b);
	assert_int_equal(gw_addr_parse("100.96.0.7", &dst), 0);
	f.calls = &calls;
	gw_tcp_decide(&f, &v);
	assert_int_equal(v.action, GW_TCP_DENY);
	assert_int_equal(v.reason, GW_TR_TOOL_ONLY);
	assert_true(gw_shadow_lifts(GW_TR_TOOL_ONLY));
	assert_true(gw_tcp_decide_shadow(&f, &env, &v, &would));
	assert_int_equal(v.action, GW_TCP_ALLOW_NAME);
	assert_int_equal(would.reason, GW_TR_TOOL_ONLY);
	snprintf(q.qname, sizeof(q.qname), "a.test");
	df.calls = &calls;
	gw_dns_decide(&df, &dv);
	assert_false(dv.allowed);
	assert_int_equal(dv.reason, GW_DR_TOOL_ONLY);
	assert_true(gw_dns_decide_shadow(&df, &dv, &dwould));
	assert_true(dv.allowed);
	assert_int_equal(dwould.reason, GW_DR_TOOL_ONLY);
}

/* the gateway's table of tools seen holds 64 names: a call of a tool past it must not count as a
 * call of the tool in its last slot (that tool's network rules would open to any later tool) */
static void test_table_full_no_alias(void **state)
{
	struct gw_toolcalls m;
	struct gw_tcp_verdict v;
	json_t *calls;
	char name[32];

	(void)state;
	memset(&m, 0, sizeof(m));
	/* 63 other tools, then fetch_a: the 64th, in the last slot */
	for (int i = 0; i < 64; i++) {
		if (i < 63)
			snprintf(name, sizeof(name), "tool%d", i);
		else
			snprintf(name, sizeof(name), "fetch_a");
		calls =
		    json_pack("[{s:s, s:i, s:s}]", "tool", name, "call_id", i, "args_sha256",
			      "0000000000000000000000000000000000000000000000000000000000000000");
		assert_int_equal(gw_toolcalls_set(&m, calls), 0);
		json_decref(calls);
	}
	/* the control: fetch_a in flight opens a.test */
	tcp(P, &m, "a.test", 443, &v);
	assert_int_equal(v.action, GW_TCP_ALLOW_NAME);
	/* a 65th tool in flight alone: a.test is not its */
	calls =
	    json_pack("[{s:s, s:i, s:s}]", "tool", "harmless_echo", "call_id", 99, "args_sha256",
		      "0000000000000000000000000000000000000000000000000000000000000000");
	assert_int_equal(gw_toolcalls_set(&m, calls), 0);
	json_decref(calls);
	tcp(P, &m, "a.test", 443, &v);
	assert_int_equal(v.action, GW_TCP_DENY);
	assert_int_equal(v.reason, GW_TR_TOOL_ONLY);
	gw_toolcalls_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse),
	    cmocka_unit_test(test_render),
	    cmocka_unit_test(test_parse_errors),
	    cmocka_unit_test(test_tcp),
	    cmocka_unit_test(test_proxy),
	    cmocka_unit_test(test_dns),
	    cmocka_unit_test(test_ceiling),
	    cmocka_unit_test(test_shadow_lifts_tool_only),
	    cmocka_unit_test(test_table_full_no_alias),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

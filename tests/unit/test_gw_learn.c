/* test_gw_learn.c - unit tests for the gateway's learn mode (`warden trace`): the decisions of
 * a learn-mode run (gateway/decide.c: any name on any port, the SSRF classes refused even where
 * a cidr rule names them, address literals by their class, the host's ceiling exactly as for a
 * normal run, fronting and malformed bytes still denied) each beside the same facts without
 * learn mode, and the learned table (gateway/learn.c: dedup, counts, refusals, names resolved
 * and never connected to, the bound of GW_LEARN_MAX entries). */
#include "conf/conf.h"
#include "gateway/decide.h"
#include "gateway/learn.h"

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

/* a policy that allows one name and one private range: what learn mode must not widen into */
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
	/* the lab's host-side address is this host's own */
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

static struct gw_first first_http(const char *host)
{
	struct gw_first f = {.proto = "http", .http = true};

	snprintf(f.host, sizeof(f.host), "%s", host ? host : "");
	return f;
}

/* ------------------------------------------------------------ TCP */

/* @facts decided once the client said @f */
static void decide_first(struct gw_tcp_facts *facts, struct gw_first f, struct gw_tcp_verdict *v)
{
	facts->first = &f;
	gw_tcp_decide(facts, v);
	facts->first = NULL;
}

/* a name not in the policy: allowed on any port in learn mode, denied without (the control) */
static void test_tcp_names(void **state)
{
	struct gw_addr syn = addr("100.96.0.7"), lit = addr("203.0.113.10");
	struct gw_first f;
	struct gw_tcp_facts facts = {.policy = P, .dst = &syn, .port = 7, .bound = "other.test"};
	struct gw_tcp_verdict v;
	char buf[600];

	(void)state;
	/* the control: a normal run is denied the bound name */
	gw_tcp_decide(&facts, &v);
	assert_int_equal(v.action, GW_TCP_DENY);
	assert_int_equal(v.reason, GW_TR_NO_RULE);
	/* learn mode: allowed by name, no rule of the policy */
	facts.learn = &ENV;
	gw_tcp_decide(&facts, &v);
	assert_int_equal(v.action, GW_TCP_ALLOW_NAME);
	assert_int_equal(v.reason, GW_TR_LEARN);
	assert_int_equal(v.rule, -1);
	assert_string_equal(v.name, "other.test");
	assert_int_equal(v.port, 7);
	assert_string_equal(gw_tcp_reason_text(&v, "p.yaml", buf, sizeof(buf)),
			    "allowed: learn mode");
	/* its first bytes must still agree with the bound name (fronting) */
	decide_first(&facts, first_tls("allowed.test"), &v);
	assert_int_equal(v.action, GW_TCP_DENY);
	assert_int_equal(v.reason, GW_TR_FRONTING_SNI);
	decide_first(&facts, first_tls("other.test"), &v);
	assert_int_equal(v.action, GW_TCP_ALLOW_BYTES);
	/* malformed bytes are denied as in any run */
	f = first_tls(NULL);
	f.why = "malformed TLS ClientHello";
	decide_first(&facts, f, &v);
	assert_int_equal(v.action, GW_TCP_DENY);
	assert_int_equal(v.reason, GW_TR_MALFORMED);

	/* an address the gateway's DNS did not give: its first bytes may name it */
	facts.dst = &lit;
	facts.port = 443;
	facts.bound = NULL;
	gw_tcp_decide(&facts, &v);
	assert_int_equal(v.action, GW_TCP_NEED_BYTES);
	decide_first(&facts, first_tls("sni.example"), &v);
	assert_int_equal(v.action, GW_TCP_ALLOW_NAME);
	assert_string_equal(v.name, "sni.example");
	decide_first(&facts, first_http("host.example"), &v);
	assert_int_equal(v.action, GW_TCP_ALLOW_NAME);
	assert_string_equal(v.name, "host.example");
	/* the control: without learn mode the same SNI is denied */
	facts.learn = NULL;
	decide_first(&facts, first_tls("sni.example"), &v);
	assert_int_equal(v.action, GW_TCP_DENY);
	assert_int_equal(v.reason, GW_TR_NO_RULE);
	/* a name learn mode takes must be a host name */
	facts.learn = &ENV;
	decide_first(&facts, first_http("bad name!"), &v);
	assert_int_equal(v.action, GW_TCP_DENY);
}

/* an address literal without a name: allowed when public, refused for every SSRF class, also
 * where a cidr rule of the policy names it (it does in a normal run: the control) */
static void test_tcp_literals(void **state)
{
	static const struct {
		const char *addr;
		uint16_t port;
		bool allowed;
		const char *text; /* the reason's text (NULL: allowed) */
	} cases[] = {
	    {"203.0.113.10", 80, true, NULL},
	    {"2001:db8:0:1::10", 22, true, NULL},
	    {"127.0.0.1", 80, false,
	     "127.0.0.1:80 is refused in learn mode as in any run (SSRF guard: loopback "
	     "address)"},
	    {"169.254.169.254", 80, false, NULL},
	    {"10.1.2.3", 80, false, NULL},
	    {"192.168.7.7", 80, false, NULL},
	    {"100.64.1.1", 80, false, NULL},
	    {"fd00:1:2::3", 80, false, NULL},
	    {"::1", 80, false, NULL},
	    {"10.20.1.1", 8080, false, NULL}, /* the policy's cidr rule does not lift it */
	    {"203.0.113.1", 80, false, NULL}, /* the host's own address */
	    {"10.213.0.1", 80, false, NULL},  /* the gateway's runs pool */
	    {"100.96.0.9", 80, false, NULL},  /* its synthetic pool, with no name bound */
	};
	struct gw_first f = {.proto = "tcp"};
	struct gw_tcp_verdict v;
	char buf[600];

	(void)state;
	for (size_t i = 0; i < WD_ARRAY_SIZE(cases); i++) {
		struct gw_addr a = addr(cases[i].addr);
		struct gw_tcp_facts facts = {
		    .policy = P, .dst = &a, .port = cases[i].port, .first = &f, .learn = &ENV};
		const char *text;

		gw_tcp_decide(&facts, &v);
		text = gw_tcp_reason_text(&v, "p.yaml", buf, sizeof(buf));
		if ((v.action == GW_TCP_ALLOW_ADDR) != cases[i].allowed)
			fail_msg("%s:%u: action %d `%s`", cases[i].addr, cases[i].port, v.action,
				 text);
		if (cases[i].allowed) {
			assert_int_equal(v.reason, GW_TR_LEARN);
			assert_ptr_equal(v.dst, &a);
			continue;
		}
		assert_int_equal(v.reason, GW_TR_LEARN_CLASS);
		assert_non_null(strstr(text, "refused in learn mode"));
		if (cases[i].text)
			assert_string_equal(text, cases[i].text);
	}
	/* the control: a normal run's cidr rule allows 10.20.1.1:8080 */
	{
		struct gw_addr a = addr("10.20.1.1");
		struct gw_tcp_facts facts = {.policy = P, .dst = &a, .port = 8080};

		gw_tcp_decide(&facts, &v);
		assert_int_equal(v.action, GW_TCP_ALLOW_ADDR);
		assert_int_equal(v.reason, GW_TR_ALLOWED);
	}
}

/* the SSRF guard of resolved names in learn mode: conn.c passes no policy, so no cidr rule
 * lifts it; the same address is public where the policy's rule names it (normal runs) */
static void test_upstream_without_policy(void **state)
{
	struct gw_addr a = addr("10.20.1.1"), pub = addr("203.0.113.10"), out[2];
	struct gw_addr both[2] = {a, pub};
	char why[200];

	(void)state;
	assert_int_equal(gw_upstream_class(&ENV, P, &a, 8080), GW_ADDR_PUBLIC);
	assert_int_equal(gw_upstream_class(&ENV, NULL, &a, 8080), GW_ADDR_PRIVATE);
	assert_int_equal(gw_upstream_pick(&ENV, NULL, both, 2, 8080, out, why, sizeof(why)), 1);
	assert_true(gw_addr_eq(&out[0], &pub));
	assert_string_equal(why, "10.20.1.1 is a private address");
}

/* the proxy port in learn mode: CONNECT and absolute-form by any name; literals by class */
static void test_proxy(void **state)
{
	static const struct {
		const char *bytes;
		enum gw_tcp_action learn, normal;
	} cases[] = {
	    {"CONNECT other.test:8443 HTTP/1.1\r\nHost: other.test:8443\r\n\r\n", GW_TCP_ALLOW_NAME,
	     GW_TCP_DENY},
	    {"GET http://other.test:8080/x HTTP/1.1\r\nHost: other.test:8080\r\n\r\n",
	     GW_TCP_ALLOW_NAME, GW_TCP_DENY},
	    {"CONNECT 203.0.113.10:443 HTTP/1.1\r\nHost: 203.0.113.10:443\r\n\r\n",
	     GW_TCP_ALLOW_ADDR, GW_TCP_DENY},
	    {"CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: 127.0.0.1:22\r\n\r\n", GW_TCP_DENY,
	     GW_TCP_DENY},
	    {"CONNECT 10.20.1.1:8080 HTTP/1.1\r\nHost: 10.20.1.1:8080\r\n\r\n", GW_TCP_DENY,
	     GW_TCP_ALLOW_ADDR},
	    {"GET https://other.test/ HTTP/1.1\r\nHost: other.test\r\n\r\n", GW_TCP_DENY,
	     GW_TCP_DENY},
	    {"GET / HTTP/1.1\r\nHost: other.test\r\n\r\n", GW_TCP_DENY, GW_TCP_DENY},
	};

	(void)state;
	for (size_t i = 0; i < WD_ARRAY_SIZE(cases); i++) {
		struct http_request req;
		enum http_result r = http_request_parse((const uint8_t *)cases[i].bytes,
							strlen(cases[i].bytes), &req);
		struct gw_proxy_verdict pv;
		char buf[600];

		gw_proxy_decide_learn(P, &ENV, r, &req, &pv);
		if (pv.v.action != cases[i].learn)
			fail_msg("learn: %s: %d `%s`", cases[i].bytes, pv.v.action,
				 gw_tcp_reason_text(&pv.v, "p.yaml", buf, sizeof(buf)));
		if (pv.v.action == GW_TCP_ALLOW_ADDR)
			assert_ptr_equal(pv.v.dst, &pv.literal);
		if (strstr(cases[i].bytes, "127.0.0.1"))
			assert_int_equal(pv.v.reason, GW_TR_LEARN_CLASS);
		gw_proxy_decide(P, NULL, r, &req, &pv);
		if (pv.v.action != cases[i].normal)
			fail_msg("normal: %s: %d", cases[i].bytes, pv.v.action);
	}
}

/* ------------------------------------------------------------ DNS */

/* @f decided for a query of @type (its other facts as they are) */
static void decide_type(const struct gw_dns_facts *f, struct dns_query *q, uint16_t type,
			struct gw_dns_verdict *v)
{
	q->qtype = type;
	gw_dns_decide(f, v);
}

static void test_dns(void **state)
{
	struct dns_query q = {
	    .header_ok = true, .question_ok = true, .qtype = DNS_TYPE_A, .qclass = DNS_CLASS_IN};
	struct gw_dns_facts f = {.parsed = DNS_OK, .q = &q, .policy = P, .upstream = true};
	struct gw_dns_verdict v;
	struct gw_addr peer = addr("10.213.0.2");
	char buf[600];

	(void)state;
	snprintf(q.qname, sizeof(q.qname), "other.test");
	/* the control: NXDOMAIN for a normal run */
	gw_dns_decide(&f, &v);
	assert_int_equal(v.action, GW_DNS_RCODE);
	assert_int_equal(v.rcode, DNS_RCODE_NXDOMAIN);
	f.learn = true;
	gw_dns_decide(&f, &v);
	assert_int_equal(v.action, GW_DNS_SYNTHETIC);
	assert_int_equal(v.rule, -1);
	assert_true(v.learn);
	assert_string_equal(gw_dns_reason_text(&v, &q, "p.yaml", &peer, buf, sizeof(buf)),
			    "synthetic address (learn mode)");
	decide_type(&f, &q, DNS_TYPE_TXT, &v);
	assert_int_equal(v.action, GW_DNS_FORWARD);
	/* refused types and HTTPS stay as they are */
	decide_type(&f, &q, DNS_TYPE_AXFR, &v);
	assert_int_equal(v.rcode, DNS_RCODE_REFUSED);
	decide_type(&f, &q, DNS_TYPE_HTTPS, &v);
	assert_int_equal(v.action, GW_DNS_EMPTY);
	/* no host name: NXDOMAIN */
	snprintf(q.qname, sizeof(q.qname), "a b.test");
	decide_type(&f, &q, DNS_TYPE_A, &v);
	assert_int_equal(v.rcode, DNS_RCODE_NXDOMAIN);
}

/* ------------------------------------------------------------ the host's ceiling */

/* under a ceiling learn mode allows what the ceiling allows, and no more: its denied names, its
 * allow list's names and ports, its cidr rules for literals (the SSRF guard still first) */
static void test_ceiling(void **state)
{
	static const char gw[] = "version: 1\n"
				 "ceiling:\n"
				 "  allow:\n"
				 "    - \"*.ok.test:443\"\n"			   /* 4 */
				 "    - { cidr: 203.0.113.0/24, ports: [8080] }\n" /* 5 */
				 "    - { cidr: 10.20.0.0/16, ports: [8080] }\n"   /* 6 */
				 "  deny: [\"bad.ok.test\"]\n";			   /* 7 */
	const struct policy_who who = {.uid = 1000, .name = "u"};
	struct wd_gwconf c;
	struct policy_diags d;
	struct wd_policy *e = NULL;
	struct gw_addr dst = addr("100.96.0.7"), lit = addr("203.0.113.10");
	struct gw_addr priv = addr("10.20.1.1");
	struct gw_first f = {.proto = "tcp"};
	struct gw_tcp_facts facts = {.dst = &dst, .port = 443, .learn = &ENV};
	struct gw_tcp_verdict v;
	struct dns_query q = {
	    .header_ok = true, .question_ok = true, .qtype = DNS_TYPE_A, .qclass = DNS_CLASS_IN};
	struct gw_dns_facts df = {.parsed = DNS_OK, .q = &q, .upstream = true, .learn = true};
	struct gw_dns_verdict dv;
	char buf[600];

	(void)state;
	policy_diags_init(&d);
	assert_int_equal(conf_parse(gw, strlen(gw), "/etc/warden/gateway.yaml", &c, &d), 0);
	policy_diags_free(&d);
	assert_int_equal(policy_ceiling_apply(c.ceiling, &who, P, &e), 0);
	facts.policy = e;
	df.policy = e;
	/* allowed by the ceiling (not by the policy, which allows allowed.test only) */
	facts.bound = "a.ok.test";
	gw_tcp_decide(&facts, &v);
	assert_int_equal(v.action, GW_TCP_ALLOW_NAME);
	/* the ceiling's port */
	facts.port = 80;
	gw_tcp_decide(&facts, &v);
	assert_int_equal(v.action, GW_TCP_DENY);
	assert_int_equal(v.reason, GW_TR_CEILING);
	assert_non_null(strstr(gw_tcp_reason_text(&v, "p.yaml", buf, sizeof(buf)),
			       "/etc/warden/gateway.yaml:4"));
	/* a denied name */
	facts.port = 443;
	facts.bound = "bad.ok.test";
	gw_tcp_decide(&facts, &v);
	assert_int_equal(v.reason, GW_TR_CEILING);
	assert_true(v.ceiling.denied);
	assert_non_null(strstr(gw_tcp_reason_text(&v, "p.yaml", buf, sizeof(buf)), "denied"));
	/* a name the ceiling has no rule for, even the policy's own allowed.test:443 (the
	 * effective policy dropped it; learn mode does not bring it back) */
	facts.bound = "allowed.test";
	gw_tcp_decide(&facts, &v);
	assert_int_equal(v.action, GW_TCP_DENY);
	assert_int_equal(v.reason, GW_TR_CEILING);
	facts.bound = "other.test";
	gw_tcp_decide(&facts, &v);
	assert_int_equal(v.reason, GW_TR_CEILING);
	/* literals: the ceiling's cidr rule and port; the SSRF class first even where the
	 * ceiling names the range */
	facts.bound = NULL;
	facts.first = &f;
	facts.dst = &lit;
	facts.port = 8080;
	gw_tcp_decide(&facts, &v);
	assert_int_equal(v.action, GW_TCP_ALLOW_ADDR);
	facts.port = 80;
	gw_tcp_decide(&facts, &v);
	assert_int_equal(v.action, GW_TCP_DENY);
	assert_int_equal(v.reason, GW_TR_CEILING);
	facts.dst = &priv;
	facts.port = 8080;
	gw_tcp_decide(&facts, &v);
	assert_int_equal(v.action, GW_TCP_DENY);
	assert_int_equal(v.reason, GW_TR_LEARN_CLASS);
	/* DNS: the ceiling's names only */
	snprintf(q.qname, sizeof(q.qname), "a.ok.test");
	gw_dns_decide(&df, &dv);
	assert_int_equal(dv.action, GW_DNS_SYNTHETIC);
	snprintf(q.qname, sizeof(q.qname), "bad.ok.test");
	gw_dns_decide(&df, &dv);
	assert_int_equal(dv.rcode, DNS_RCODE_NXDOMAIN);
	assert_int_equal(dv.reason, GW_DR_CEILING);
	snprintf(q.qname, sizeof(q.qname), "other.test");
	gw_dns_decide(&df, &dv);
	assert_int_equal(dv.reason, GW_DR_CEILING);
	policy_free(e);
	conf_free(&c);

	/* `allow: any` bounds no name; its denials still apply */
	{
		static const char any[] = "version: 1\n"
					  "ceiling:\n"
					  "  allow: any\n"
					  "  deny: [\"bad.test\"]\n";

		policy_diags_init(&d);
		assert_int_equal(conf_parse(any, strlen(any), "/etc/warden/gateway.yaml", &c, &d),
				 0);
		policy_diags_free(&d);
		assert_int_equal(policy_ceiling_apply(c.ceiling, &who, P, &e), 0);
		assert_true(gw_learn_allows(e, "other.test", 22, NULL));
		assert_false(gw_learn_allows(e, "bad.test", 443, NULL));
		assert_true(gw_learn_allows_addr(e, &lit, 80, NULL));
		policy_free(e);
		conf_free(&c);
	}
}

/* ------------------------------------------------------------ the table */

static json_t *entry(json_t *a, const char *host, int port, const char *proto)
{
	size_t i;
	json_t *o;

	json_array_foreach(a, i, o)
	{
		if (!strcmp(json_string_value(json_object_get(o, "host")), host) &&
		    json_integer_value(json_object_get(o, "port")) == port &&
		    !strcmp(json_string_value(json_object_get(o, "proto")), proto))
			return o;
	}
	return NULL;
}

static void test_table(void **state)
{
	struct gw_learn l = {0};
	json_t *a, *o;

	(void)state;
	/* dedup: case and a trailing dot do not make another entry; port and proto do */
	assert_int_equal(gw_learn_note(&l, "Allowed.Test.", 443, GW_LEARN_TLS, NULL), 0);
	assert_int_equal(gw_learn_note(&l, "allowed.test", 443, GW_LEARN_TLS, NULL), 0);
	assert_int_equal(gw_learn_note(&l, "allowed.test", 443, GW_LEARN_TLS, NULL), 0);
	assert_int_equal(gw_learn_note(&l, "allowed.test", 80, GW_LEARN_HTTP, NULL), 0);
	assert_int_equal(gw_learn_note(&l, "allowed.test", 443, GW_LEARN_HTTP, NULL), 0);
	/* resolved, and connected to: not reported as dns */
	assert_int_equal(gw_learn_note(&l, "allowed.test", 0, GW_LEARN_DNS, NULL), 0);
	/* resolved only (twice): dns, port 0 (a port given is ignored) */
	assert_int_equal(gw_learn_note(&l, "only.test", 0, GW_LEARN_DNS, NULL), 0);
	assert_int_equal(gw_learn_note(&l, "only.test", 53, GW_LEARN_DNS, NULL), 0);
	/* refused every time: the reason; refused once and allowed once: no reason */
	assert_int_equal(gw_learn_note(&l, "loopback.test", 80, GW_LEARN_HTTP, "r1"), 0);
	assert_int_equal(gw_learn_note(&l, "loopback.test", 80, GW_LEARN_HTTP, "r2"), 0);
	assert_int_equal(gw_learn_note(&l, "loopback.test", 0, GW_LEARN_DNS, NULL), 0);
	assert_int_equal(gw_learn_note(&l, "flip.test", 7, GW_LEARN_RAW, "refused"), 0);
	assert_int_equal(gw_learn_note(&l, "flip.test", 7, GW_LEARN_RAW, NULL), 0);
	/* an address literal is its own host */
	assert_int_equal(gw_learn_note(&l, "203.0.113.10", 7, GW_LEARN_RAW, NULL), 0);
	/* no host, one too long, a bad proto */
	assert_int_equal(gw_learn_note(&l, "", 7, GW_LEARN_RAW, NULL), -EINVAL);
	assert_int_equal(gw_learn_note(&l, NULL, 7, GW_LEARN_RAW, NULL), -EINVAL);
	{
		char big[GW_LEARN_HOST_MAX + 2];

		memset(big, 'a', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		assert_int_equal(gw_learn_note(&l, big, 7, GW_LEARN_RAW, NULL), -EINVAL);
	}
	assert_int_equal(gw_learn_note(&l, "x.test", 7, GW_LEARN_N, NULL), -EINVAL);
	assert_int_equal(l.n, 9);

	a = gw_learn_json(&l);
	assert_non_null(a);
	assert_int_equal(json_array_size(a), 7);
	/* in the order first seen */
	assert_string_equal(json_string_value(json_object_get(json_array_get(a, 0), "host")),
			    "allowed.test");
	o = entry(a, "allowed.test", 443, "tls");
	assert_non_null(o);
	assert_int_equal(json_integer_value(json_object_get(o, "count")), 3);
	assert_null(json_object_get(o, "refused"));
	assert_non_null(entry(a, "allowed.test", 80, "http"));
	assert_non_null(entry(a, "allowed.test", 443, "http"));
	assert_null(entry(a, "allowed.test", 0, "dns"));
	o = entry(a, "only.test", 0, "dns");
	assert_non_null(o);
	assert_int_equal(json_integer_value(json_object_get(o, "count")), 2);
	o = entry(a, "loopback.test", 80, "http");
	assert_non_null(o);
	assert_int_equal(json_integer_value(json_object_get(o, "count")), 2);
	assert_string_equal(json_string_value(json_object_get(o, "refused")), "r2");
	assert_null(entry(a, "loopback.test", 0, "dns"));
	o = entry(a, "flip.test", 7, "raw");
	assert_int_equal(json_integer_value(json_object_get(o, "count")), 2);
	assert_null(json_object_get(o, "refused"));
	assert_non_null(entry(a, "203.0.113.10", 7, "raw"));
	json_decref(a);
	gw_learn_free(&l);
	assert_int_equal(l.n, 0);
}

/* the bound: GW_LEARN_MAX entries, then new ones are counted, known ones still counted */
static void test_table_bound(void **state)
{
	struct gw_learn l = {0};
	char name[64];
	json_t *a;

	(void)state;
	for (unsigned i = 0; i < GW_LEARN_MAX; i++) {
		snprintf(name, sizeof(name), "n%u.test", i);
		assert_int_equal(gw_learn_note(&l, name, 443, GW_LEARN_TLS, NULL), 0);
	}
	assert_int_equal(l.dropped, 0);
	assert_int_equal(gw_learn_note(&l, "one-more.test", 443, GW_LEARN_TLS, NULL), -E2BIG);
	assert_int_equal(gw_learn_note(&l, "n0.test", 80, GW_LEARN_HTTP, NULL), -E2BIG);
	assert_int_equal(l.dropped, 2);
	/* an entry the table has goes on counting */
	assert_int_equal(gw_learn_note(&l, "n0.test", 443, GW_LEARN_TLS, NULL), 0);
	assert_int_equal(l.n, GW_LEARN_MAX);
	a = gw_learn_json(&l);
	assert_int_equal(json_array_size(a), GW_LEARN_MAX);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(a, 0), "count")), 2);
	json_decref(a);
	gw_learn_free(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tcp_names),
	    cmocka_unit_test(test_tcp_literals),
	    cmocka_unit_test(test_upstream_without_policy),
	    cmocka_unit_test(test_proxy),
	    cmocka_unit_test(test_dns),
	    cmocka_unit_test(test_ceiling),
	    cmocka_unit_test(test_table),
	    cmocka_unit_test(test_table_bound),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

/* test_gw_decide.c - unit tests for the gateway's decisions (gateway/decide.c,
 * sniff.c, dnsdecide.c): the
 * whole policy matrix without sockets or root. The client's first bytes (real curl,
 * openssl and Chromium captures, crafted hellos and heads), a connection bound to a
 * synthetic address or not, SNI and Host fronting, cidr rules, the proxy port's
 * request forms, later requests on a keep-alive connection, the SSRF classes of
 * resolved addresses, wildcard apexes, ports, and the DNS front's answers (refused
 * types included). Every case checks the verdict, the rule and the exact audit text. */
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

#include "proto_captures.h"

/* rule indexes of the test policy */
enum { R_ALLOWED, R_CDN, R_DB, R_DOC_NET, R_PRIVATE_NET, R_V6_NET };

static const char policy_yaml[] = "version: 1\n"
				  "network:\n"
				  "  allow:\n"
				  "    - allowed.test\n"
				  "    - \"*.cdn.test:443\"\n"
				  "    - \"db.internal.test:5432\"\n"
				  "    - { cidr: \"198.51.100.0/24\", ports: [8080] }\n"
				  "    - { cidr: \"10.20.0.0/16\", ports: [8080] }\n"
				  "    - { cidr: \"fd00:1::/64\", ports: [443] }\n";

static struct wd_policy *P;
static struct tls_hello TH; /* large: not on the stack */

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

static struct gw_addr addr(const char *s)
{
	struct gw_addr a;

	assert_int_equal(gw_addr_parse(s, &a), 0);
	return a;
}

/* ------------------------------------------------------------ first bytes */

/* a one-record ClientHello with an optional server name and an optional ECH extension */
static size_t hello(uint8_t *out, const char *sni, bool ech)
{
	uint8_t ext[300];
	size_t e = 0, n = 0, m;

	if (sni) {
		size_t l = strlen(sni);

		ext[e++] = 0, ext[e++] = 0; /* server_name */
		ext[e++] = 0, ext[e++] = (uint8_t)(l + 5);
		ext[e++] = 0, ext[e++] = (uint8_t)(l + 3);
		ext[e++] = 0; /* host_name */
		ext[e++] = 0, ext[e++] = (uint8_t)l;
		memcpy(ext + e, sni, l);
		e += l;
	}
	if (ech) {
		static const uint8_t x[] = {0xfe, 0x0d, 0, 3, 0, 1, 2};

		memcpy(ext + e, x, sizeof(x));
		e += sizeof(x);
	}
	out[n++] = 22, out[n++] = 3, out[n++] = 1, n += 2; /* record, length below */
	out[n++] = 1, out[n++] = 0, n += 2;		   /* ClientHello, length below */
	out[n++] = 3, out[n++] = 3;
	memset(out + n, 0x5a, 32), n += 32; /* random */
	out[n++] = 0;			    /* session id */
	out[n++] = 0, out[n++] = 2, out[n++] = 0x13, out[n++] = 0x01;
	out[n++] = 1, out[n++] = 0; /* compression */
	out[n++] = (uint8_t)(e >> 8), out[n++] = (uint8_t)e;
	memcpy(out + n, ext, e), n += e;
	m = n - 5;
	out[3] = (uint8_t)(m >> 8), out[4] = (uint8_t)m;
	out[7] = (uint8_t)((m - 4) >> 8), out[8] = (uint8_t)(m - 4);
	return n;
}

static enum gw_sniff sniff_str(const char *s, bool full, struct gw_first *f)
{
	return gw_sniff((const uint8_t *)s, strlen(s), full, &TH, f);
}

static void test_sniff_captures(void **state)
{
	static const char *const tls[] = {"tls13-curl.bin", "tls12-openssl.bin",
					  "tls13-chromium-ech.bin"};
	struct gw_first f;
	size_t len;
	uint8_t *b;

	(void)state;
	for (size_t i = 0; i < WD_ARRAY_SIZE(tls); i++) {
		b = capture(tls[i], &len);
		assert_int_equal(gw_sniff(b, len, false, &TH, &f), GW_SNIFF_DONE);
		assert_string_equal(f.proto, "tls");
		assert_true(f.tls);
		assert_false(f.http);
		assert_string_equal(f.sni, "allowed.test");
		assert_int_equal(f.ech, i == 2); /* Chromium's GREASE ECH: the outer SNI decides */
		assert_string_equal(gw_first_named(&f), "allowed.test");
		/* every prefix is "more", or malformed once no more bytes come */
		assert_int_equal(gw_sniff(b, len / 2, false, &TH, &f), GW_SNIFF_MORE);
		assert_int_equal(gw_sniff(b, len / 2, true, &TH, &f), GW_SNIFF_MALFORMED);
		assert_string_equal(f.why, "incomplete TLS ClientHello");
		free(b);
	}
	b = capture("http11-curl.bin", &len);
	assert_int_equal(gw_sniff(b, len, false, &TH, &f), GW_SNIFF_DONE);
	assert_string_equal(f.proto, "http");
	assert_true(f.http);
	assert_string_equal(f.host, "allowed.test");
	assert_string_equal(gw_first_named(&f), "allowed.test");
	free(b);
	b = capture("tls13-openssl-nosni.bin", &len);
	assert_int_equal(gw_sniff(b, len, false, &TH, &f), GW_SNIFF_DONE);
	assert_true(f.tls);
	assert_null(gw_first_named(&f));
	free(b);
}

static void test_sniff_crafted(void **state)
{
	static uint8_t b[512];
	struct gw_first f;
	size_t n;

	(void)state;
	/* ECH with an outer name decides on it; without one it is refused */
	n = hello(b, "public.ech.test", true);
	assert_int_equal(gw_sniff(b, n, false, &TH, &f), GW_SNIFF_DONE);
	assert_true(f.ech);
	assert_string_equal(f.sni, "public.ech.test");
	n = hello(b, NULL, true);
	assert_int_equal(gw_sniff(b, n, false, &TH, &f), GW_SNIFF_MALFORMED);
	assert_string_equal(f.why, "TLS Encrypted Client Hello without an outer server name");
	n = hello(b, NULL, false);
	assert_int_equal(gw_sniff(b, n, false, &TH, &f), GW_SNIFF_DONE);
	assert_null(gw_first_named(&f));

	/* nothing said: raw TCP without a name */
	assert_int_equal(gw_sniff(NULL, 0, true, &TH, &f), GW_SNIFF_DONE);
	assert_string_equal(f.proto, "tcp");
	assert_null(gw_first_named(&f));
	/* a server-first protocol's client line is raw TCP */
	assert_int_equal(sniff_str("SSH-2.0-OpenSSH_9.2\r\n", false, &f), GW_SNIFF_DONE);
	assert_string_equal(f.proto, "tcp");
	assert_false(f.http || f.tls);

	/* empty lines before a request are skipped: the request after them decides */
	assert_int_equal(sniff_str("\r\n\r\nGET / HTTP/1.1\r\nHost: evil.test\r\n\r\n", false, &f),
			 GW_SNIFF_DONE);
	assert_string_equal(f.host, "evil.test");
	assert_int_equal(sniff_str("\r\n", false, &f), GW_SNIFF_MORE);
	assert_int_equal(sniff_str("\r\n", true, &f), GW_SNIFF_DONE);
	assert_true(f.http);
	/* bare LF before a request line, and a head a lenient server would take */
	assert_int_equal(sniff_str("\nGET / HTTP/1.1\r\nHost: evil.test\r\n\r\n", false, &f),
			 GW_SNIFF_MALFORMED);
	assert_string_equal(f.why, "bare CR or LF before a request line");
	assert_int_equal(sniff_str("GET  /  HTTP/1.1\nHost: evil.test\n\n", false, &f),
			 GW_SNIFF_MALFORMED);
	assert_true(f.http);
	/* a valid start of a head that never completes is HTTP gone wrong, not raw TCP */
	assert_int_equal(sniff_str("GET / HTTP/1.1\r\nHost: allowed.te", false, &f), GW_SNIFF_MORE);
	assert_int_equal(sniff_str("GET / HTTP/1.1\r\nHost: allowed.te", true, &f),
			 GW_SNIFF_MALFORMED);
	assert_string_equal(f.why, "incomplete HTTP request head");
	/* a Host that is an address literal names no host */
	assert_int_equal(sniff_str("GET / HTTP/1.1\r\nHost: 198.51.100.7:8080\r\n\r\n", false, &f),
			 GW_SNIFF_DONE);
	assert_null(gw_first_named(&f));
	/* no Host at all (HTTP/1.0) */
	assert_int_equal(sniff_str("GET / HTTP/1.0\r\n\r\n", false, &f), GW_SNIFF_DONE);
	assert_true(f.http);
	assert_null(gw_first_named(&f));
}

/* ------------------------------------------------------------ TCP verdicts */

struct tcp_case {
	const char *what;
	const char *dst;
	uint16_t port;
	const char *bound; /* the synthetic address's name, or NULL */
	const char *bytes; /* the client's first bytes; NULL: it has not spoken */
	const char *sni;   /* instead of bytes: a sniffed ClientHello's name */
	bool ech;
	enum gw_tcp_action want;
	enum gw_tcp_reason reason;
	int rule;
	const char *text;
};

static const struct tcp_case tcp_cases[] = {
    /* at accept: a synthetic address is decided by its name and port */
    {"bound, allowed", "100.96.0.5", 443, "allowed.test", NULL, NULL, false, GW_TCP_ALLOW_NAME,
     GW_TR_ALLOWED, R_ALLOWED, "allowed"},
    {"bound, port 80 of a bare name", "100.96.0.5", 80, "allowed.test", NULL, NULL, false,
     GW_TCP_ALLOW_NAME, GW_TR_ALLOWED, R_ALLOWED, "allowed"},
    {"bound, other port", "100.96.0.5", 22, "allowed.test", NULL, NULL, false, GW_TCP_DENY,
     GW_TR_NO_RULE, -1,
     "allowed.test:22 is not allowed by policy p.yaml (no network.allow rule matches)"},
    {"bound, wildcard", "100.96.0.6", 443, "x.cdn.test", NULL, NULL, false, GW_TCP_ALLOW_NAME,
     GW_TR_ALLOWED, R_CDN, "allowed"},
    {"bound, wildcard two labels deep", "100.96.0.6", 443, "a.b.cdn.test", NULL, NULL, false,
     GW_TCP_ALLOW_NAME, GW_TR_ALLOWED, R_CDN, "allowed"},
    {"bound, wildcard apex", "100.96.0.7", 443, "cdn.test", NULL, NULL, false, GW_TCP_DENY,
     GW_TR_NO_RULE, -1,
     "cdn.test:443 is not allowed by policy p.yaml (no network.allow rule matches)"},
    {"bound, wildcard on another port", "100.96.0.6", 80, "x.cdn.test", NULL, NULL, false,
     GW_TCP_DENY, GW_TR_NO_RULE, -1,
     "x.cdn.test:80 is not allowed by policy p.yaml (no network.allow rule matches)"},
    {"bound, a suffix that only looks alike", "100.96.0.8", 443, "evilcdn.test", NULL, NULL, false,
     GW_TCP_DENY, GW_TR_NO_RULE, -1,
     "evilcdn.test:443 is not allowed by policy p.yaml (no network.allow rule matches)"},
    {"bound, one port", "100.96.0.9", 5432, "db.internal.test", NULL, NULL, false,
     GW_TCP_ALLOW_NAME, GW_TR_ALLOWED, R_DB, "allowed"},
    {"bound, not its port", "100.96.0.9", 443, "db.internal.test", NULL, NULL, false, GW_TCP_DENY,
     GW_TR_NO_RULE, -1,
     "db.internal.test:443 is not allowed by policy p.yaml (no network.allow rule matches)"},
    /* at accept: any other address by the cidr rules, else its first bytes */
    {"unbound, cidr", "198.51.100.7", 8080, NULL, NULL, NULL, false, GW_TCP_ALLOW_ADDR,
     GW_TR_ALLOWED, R_DOC_NET, "allowed"},
    {"unbound, cidr on another port", "198.51.100.7", 80, NULL, NULL, NULL, false,
     GW_TCP_NEED_BYTES, GW_TR_ALLOWED, -1, "allowed"},
    {"unbound, a private range a rule names", "10.20.3.4", 8080, NULL, NULL, NULL, false,
     GW_TCP_ALLOW_ADDR, GW_TR_ALLOWED, R_PRIVATE_NET, "allowed"},
    {"unbound, v6 cidr", "fd00:1::5", 443, NULL, NULL, NULL, false, GW_TCP_ALLOW_ADDR,
     GW_TR_ALLOWED, R_V6_NET, "allowed"},
    {"unbound, no rule", "203.0.113.9", 443, NULL, NULL, NULL, false, GW_TCP_NEED_BYTES,
     GW_TR_ALLOWED, -1, "allowed"},

    /* bound, first bytes: they may not name another host */
    {"bound, its SNI", "100.96.0.5", 443, "allowed.test", NULL, "allowed.test", false,
     GW_TCP_ALLOW_BYTES, GW_TR_ALLOWED, -1, "allowed"},
    {"bound, its SNI in other case with a dot", "100.96.0.5", 443, "allowed.test", NULL,
     "ALLOWED.test.", false, GW_TCP_ALLOW_BYTES, GW_TR_ALLOWED, -1, "allowed"},
    {"bound, SNI fronting", "100.96.0.5", 443, "allowed.test", NULL, "evil.test", false,
     GW_TCP_DENY, GW_TR_FRONTING_SNI, -1,
     "TLS SNI names evil.test but the connection is bound to allowed.test (domain fronting)"},
    {"bound, SNI of an allowed other name is fronting all the same", "100.96.0.5", 443,
     "allowed.test", NULL, "x.cdn.test", false, GW_TCP_DENY, GW_TR_FRONTING_SNI, -1,
     "TLS SNI names x.cdn.test but the connection is bound to allowed.test (domain "
     "fronting)"},
    {"bound, ECH outer SNI fronting", "100.96.0.5", 443, "allowed.test", NULL, "public.ech.test",
     true, GW_TCP_DENY, GW_TR_FRONTING_SNI, -1,
     "TLS SNI names public.ech.test but the connection is bound to allowed.test (domain "
     "fronting)"},
    {"bound, its Host", "100.96.0.5", 80, "allowed.test",
     "GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n", NULL, false, GW_TCP_ALLOW_BYTES, GW_TR_ALLOWED,
     -1, "allowed"},
    {"bound, Host fronting", "100.96.0.5", 80, "allowed.test",
     "GET / HTTP/1.1\r\nHost: evil.test\r\n\r\n", NULL, false, GW_TCP_DENY, GW_TR_FRONTING_HOST, -1,
     "HTTP Host names evil.test but the connection is bound to allowed.test (domain "
     "fronting)"},
    {"bound, Host fronting after empty lines", "100.96.0.5", 80, "allowed.test",
     "\r\n\r\nGET / HTTP/1.1\r\nHost: evil.test\r\n\r\n", NULL, false, GW_TCP_DENY,
     GW_TR_FRONTING_HOST, -1,
     "HTTP Host names evil.test but the connection is bound to allowed.test (domain "
     "fronting)"},
    {"bound, absolute-form target fronting", "100.96.0.5", 80, "allowed.test",
     "GET http://evil.test/ HTTP/1.1\r\nHost: evil.test\r\n\r\n", NULL, false, GW_TCP_DENY,
     GW_TR_FRONTING_HOST, -1,
     "HTTP Host names evil.test but the connection is bound to allowed.test (domain "
     "fronting)"},
    {"bound, absolute-form target and Host disagree", "100.96.0.5", 80, "allowed.test",
     "GET http://evil.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n", NULL, false, GW_TCP_DENY,
     GW_TR_MALFORMED, -1, "Host does not agree with the target"},
    {"bound, Host literal names no host", "100.96.0.5", 80, "allowed.test",
     "GET / HTTP/1.1\r\nHost: 203.0.113.5\r\n\r\n", NULL, false, GW_TCP_ALLOW_BYTES, GW_TR_ALLOWED,
     -1, "allowed"},
    {"bound, raw bytes", "100.96.0.9", 5432, "db.internal.test", "\x00\x00\x00\x08", NULL, false,
     GW_TCP_ALLOW_BYTES, GW_TR_ALLOWED, -1, "allowed"},
    {"bound, malformed head", "100.96.0.5", 80, "allowed.test",
     "\nGET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n", NULL, false, GW_TCP_DENY, GW_TR_MALFORMED,
     -1, "bare CR or LF before a request line"},

    /* unbound, first bytes: the name they give decides */
    {"unbound, allowed SNI", "203.0.113.9", 443, NULL, NULL, "allowed.test", false,
     GW_TCP_ALLOW_NAME, GW_TR_ALLOWED, R_ALLOWED, "allowed"},
    {"unbound, ECH outer SNI allowed", "203.0.113.9", 443, NULL, NULL, "allowed.test", true,
     GW_TCP_ALLOW_NAME, GW_TR_ALLOWED, R_ALLOWED, "allowed"},
    {"unbound, ECH outer SNI not allowed", "203.0.113.9", 443, NULL, NULL, "public.ech.test", true,
     GW_TCP_DENY, GW_TR_NO_RULE, -1,
     "public.ech.test:443 is not allowed by policy p.yaml (no network.allow rule matches)"},
    {"unbound, SNI not allowed", "203.0.113.9", 443, NULL, NULL, "evil.test", false, GW_TCP_DENY,
     GW_TR_NO_RULE, -1,
     "evil.test:443 is not allowed by policy p.yaml (no network.allow rule matches)"},
    {"unbound, SNI wildcard apex", "203.0.113.9", 443, NULL, NULL, "cdn.test", false, GW_TCP_DENY,
     GW_TR_NO_RULE, -1,
     "cdn.test:443 is not allowed by policy p.yaml (no network.allow rule matches)"},
    {"unbound, allowed Host", "203.0.113.9", 80, NULL,
     "GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n", NULL, false, GW_TCP_ALLOW_NAME, GW_TR_ALLOWED,
     R_ALLOWED, "allowed"},
    {"unbound, Host on a port its rule lacks", "203.0.113.9", 80, NULL,
     "GET / HTTP/1.1\r\nHost: x.cdn.test\r\n\r\n", NULL, false, GW_TCP_DENY, GW_TR_NO_RULE, -1,
     "x.cdn.test:80 is not allowed by policy p.yaml (no network.allow rule matches)"},
    {"unbound, no name, no cidr rule", "203.0.113.9", 443, NULL, "\x01\x02\x03", NULL, false,
     GW_TCP_DENY, GW_TR_NO_NAME, -1,
     "no host name (TLS SNI or HTTP Host) and no cidr rule allows 203.0.113.9:443"},
    {"unbound, literal Host, cidr allows the address", "198.51.100.7", 8080, NULL,
     "GET / HTTP/1.1\r\nHost: 198.51.100.7:8080\r\n\r\n", NULL, false, GW_TCP_ALLOW_ADDR,
     GW_TR_ALLOWED, R_DOC_NET, "allowed"},
    {"unbound, literal Host, no cidr rule", "203.0.113.9", 80, NULL,
     "GET / HTTP/1.1\r\nHost: 203.0.113.9\r\n\r\n", NULL, false, GW_TCP_DENY, GW_TR_NO_NAME, -1,
     "no host name (TLS SNI or HTTP Host) and no cidr rule allows 203.0.113.9:80"},
    {"unbound v6, no name", "2001:db8::9", 443, NULL, "\x01", NULL, false, GW_TCP_DENY,
     GW_TR_NO_NAME, -1,
     "no host name (TLS SNI or HTTP Host) and no cidr rule allows 2001:db8::9:443"},
    {"unbound, incomplete head", "203.0.113.9", 80, NULL, "GET / HTTP/1.1\r\nHost: allo", NULL,
     false, GW_TCP_DENY, GW_TR_MALFORMED, -1, "incomplete HTTP request head"},
};

static void test_tcp_matrix(void **state)
{
	(void)state;
	for (size_t i = 0; i < WD_ARRAY_SIZE(tcp_cases); i++) {
		const struct tcp_case *c = &tcp_cases[i];
		struct gw_addr dst = addr(c->dst);
		struct gw_first f;
		struct gw_tcp_facts facts = {
		    .policy = P, .dst = &dst, .port = c->port, .bound = c->bound};
		struct gw_tcp_verdict v;
		char buf[600];
		const char *text;

		if (c->bytes) {
			/* every byte counts, NUL included: the strings end where they end */
			size_t n = strlen(c->bytes) ? strlen(c->bytes) : 1;

			assert_int_not_equal(gw_sniff((const uint8_t *)c->bytes, n, true, &TH, &f),
					     GW_SNIFF_MORE);
			facts.first = &f;
		} else if (c->sni) {
			static uint8_t b[512];
			size_t n = hello(b, c->sni, c->ech);

			assert_int_equal(gw_sniff(b, n, false, &TH, &f), GW_SNIFF_DONE);
			assert_int_equal(f.ech, c->ech);
			facts.first = &f;
		}
		gw_tcp_decide(&facts, &v);
		text = gw_tcp_reason_text(&v, "p.yaml", buf, sizeof(buf));
		if (v.action != c->want || v.reason != c->reason || v.rule != c->rule ||
		    strcmp(text, c->text))
			fail_msg("%s: got action %d reason %d rule %d `%s`, want %d %d %d `%s`",
				 c->what, v.action, v.reason, v.rule, text, c->want, c->reason,
				 c->rule, c->text);
		if (v.action == GW_TCP_ALLOW_NAME)
			assert_string_equal(v.name, c->bound ? c->bound : gw_first_named(&f));
		if (v.action == GW_TCP_ALLOW_ADDR)
			assert_true(gw_addr_eq(v.dst, &dst));
	}
}

/* a connection bound to a name: SNI decides over Host (a TLS client's Host is inside the
 * encrypted stream), and a Host that differs from the SNI cannot lift a fronting denial */
static void test_sni_over_host(void **state)
{
	struct gw_addr dst = addr("100.96.0.5");
	struct gw_first f = {
	    .proto = "tls", .tls = true, .sni = "allowed.test", .host = "evil.test"};
	struct gw_tcp_facts facts = {
	    .policy = P, .dst = &dst, .port = 443, .bound = "allowed.test", .first = &f};
	struct gw_tcp_verdict v;

	(void)state;
	gw_tcp_decide(&facts, &v);
	assert_int_equal(v.action, GW_TCP_ALLOW_BYTES);
	snprintf(f.sni, sizeof(f.sni), "evil.test");
	snprintf(f.host, sizeof(f.host), "allowed.test");
	gw_tcp_decide(&facts, &v);
	assert_int_equal(v.action, GW_TCP_DENY);
	assert_int_equal(v.reason, GW_TR_FRONTING_SNI);
	/* unbound: the SNI's name is the one decided */
	facts.bound = NULL;
	gw_tcp_decide(&facts, &v);
	assert_int_equal(v.action, GW_TCP_DENY);
	assert_string_equal(v.name, "evil.test");
}

/* ------------------------------------------------------------ the proxy port */

struct proxy_case {
	const char *what;
	const char *bytes;
	bool final;
	enum gw_tcp_action want;
	enum gw_tcp_reason reason;
	const char *proto;
	uint16_t port;
	int rule;
	const char *text;
};

static const struct proxy_case proxy_cases[] = {
    {"CONNECT allowed", "CONNECT allowed.test:443 HTTP/1.1\r\nHost: allowed.test:443\r\n\r\n",
     false, GW_TCP_ALLOW_NAME, GW_TR_ALLOWED, "connect", 443, R_ALLOWED, "allowed"},
    {"CONNECT wildcard", "CONNECT a.cdn.test:443 HTTP/1.1\r\nHost: a.cdn.test:443\r\n\r\n", false,
     GW_TCP_ALLOW_NAME, GW_TR_ALLOWED, "connect", 443, R_CDN, "allowed"},
    {"CONNECT wildcard apex", "CONNECT cdn.test:443 HTTP/1.1\r\nHost: cdn.test:443\r\n\r\n", false,
     GW_TCP_DENY, GW_TR_NO_RULE, "connect", 443, -1,
     "cdn.test:443 is not allowed by policy p.yaml (no network.allow rule matches)"},
    {"CONNECT other port", "CONNECT allowed.test:22 HTTP/1.1\r\nHost: allowed.test:22\r\n\r\n",
     false, GW_TCP_DENY, GW_TR_NO_RULE, "connect", 22, -1,
     "allowed.test:22 is not allowed by policy p.yaml (no network.allow rule matches)"},
    {"CONNECT not allowed", "CONNECT evil.test:443 HTTP/1.1\r\nHost: evil.test:443\r\n\r\n", false,
     GW_TCP_DENY, GW_TR_NO_RULE, "connect", 443, -1,
     "evil.test:443 is not allowed by policy p.yaml (no network.allow rule matches)"},
    {"CONNECT literal, cidr",
     "CONNECT 198.51.100.7:8080 HTTP/1.1\r\nHost: 198.51.100.7:8080\r\n\r\n", false,
     GW_TCP_ALLOW_ADDR, GW_TR_ALLOWED, "connect", 8080, R_DOC_NET, "allowed"},
    {"CONNECT literal, no cidr",
     "CONNECT 203.0.113.9:443 HTTP/1.1\r\nHost: 203.0.113.9:443\r\n\r\n", false, GW_TCP_DENY,
     GW_TR_NO_RULE, "connect", 443, -1,
     "203.0.113.9:443 is not allowed by policy p.yaml (no network.allow rule matches)"},
    {"CONNECT v6 literal, cidr",
     "CONNECT [fd00:1::5]:443 HTTP/1.1\r\nHost: [fd00:1::5]:443\r\n\r\n", false, GW_TCP_ALLOW_ADDR,
     GW_TR_ALLOWED, "connect", 443, R_V6_NET, "allowed"},
    {"absolute-form", "GET http://allowed.test/x HTTP/1.1\r\nHost: allowed.test\r\n\r\n", false,
     GW_TCP_ALLOW_NAME, GW_TR_ALLOWED, "proxy-http", 80, R_ALLOWED, "allowed"},
    {"absolute-form, port",
     "GET http://db.internal.test:5432/ HTTP/1.1\r\nHost: db.internal.test:5432\r\n\r\n", false,
     GW_TCP_ALLOW_NAME, GW_TR_ALLOWED, "proxy-http", 5432, R_DB, "allowed"},
    {"absolute-form, not allowed", "GET http://evil.test/ HTTP/1.1\r\nHost: evil.test\r\n\r\n",
     false, GW_TCP_DENY, GW_TR_NO_RULE, "proxy-http", 80, -1,
     "evil.test:80 is not allowed by policy p.yaml (no network.allow rule matches)"},
    {"absolute-form https", "GET https://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
     false, GW_TCP_DENY, GW_TR_PROXY_HTTPS, "proxy-http", 0, -1,
     "https:// targets must use CONNECT"},
    {"absolute-form chunked",
     "POST http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\nTransfer-Encoding: "
     "chunked\r\n\r\n",
     false, GW_TCP_DENY, GW_TR_PROXY_CHUNKED, "proxy-http", 0, -1,
     "chunked request bodies are not relayed by the proxy"},
    {"origin-form", "GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n", false, GW_TCP_DENY,
     GW_TR_PROXY_FORM, "proxy", 0, -1, "the proxy port takes CONNECT or absolute-form requests"},
    {"no request", "\x16\x03\x01\x00\x05hello", true, GW_TCP_DENY, GW_TR_PROXY_NOT_REQUEST, "proxy",
     0, -1, NULL},
    {"incomplete head at the end", "CONNECT allowed.test:443 HTTP/1.1\r\nHost: al", true,
     GW_TCP_DENY, GW_TR_PROXY_NOT_REQUEST, "proxy", 0, -1,
     "not a proxy request (incomplete request head)"},
};

static void test_proxy_matrix(void **state)
{
	(void)state;
	for (size_t i = 0; i < WD_ARRAY_SIZE(proxy_cases); i++) {
		const struct proxy_case *c = &proxy_cases[i];
		struct http_request req;
		enum http_result r =
		    http_request_parse((const uint8_t *)c->bytes, strlen(c->bytes), &req);
		struct gw_proxy_verdict pv;
		char buf[600];
		const char *text;

		if (r == HTTP_NEED_MORE)
			assert_true(c->final);
		gw_proxy_decide(P, NULL, r, &req, &pv);
		text = gw_tcp_reason_text(&pv.v, "p.yaml", buf, sizeof(buf));
		if (pv.v.action != c->want || pv.v.reason != c->reason ||
		    strcmp(pv.proto, c->proto) || pv.v.port != c->port || pv.v.rule != c->rule ||
		    (c->text && strcmp(text, c->text)))
			fail_msg("%s: got %d %d %s port %u rule %d `%s`", c->what, pv.v.action,
				 pv.v.reason, pv.proto, pv.v.port, pv.v.rule, text);
		if (!c->text)
			assert_non_null(strstr(text, "not a proxy request ("));
		assert_int_equal(pv.connect, !strcmp(c->proto, "connect"));
		if (pv.v.action == GW_TCP_ALLOW_ADDR)
			assert_ptr_equal(pv.v.dst, &pv.literal);
		if (pv.v.action == GW_TCP_ALLOW_NAME)
			assert_string_equal(pv.v.name, req.host);
	}
}

/* absolute-form: exactly one request goes upstream, its head and its Content-Length body */
static void test_proxy_budget(void **state)
{
	static const char one[] = "POST http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n"
				  "Content-Length: 5\r\n\r\nhello";
	struct http_request req;
	struct gw_proxy_verdict pv;
	size_t len;
	uint8_t *b;

	(void)state;
	assert_int_equal(http_request_parse((const uint8_t *)one, strlen(one), &req), HTTP_OK);
	gw_proxy_decide(P, NULL, HTTP_OK, &req, &pv);
	assert_int_equal(pv.v.action, GW_TCP_ALLOW_NAME);
	assert_int_equal(pv.budget, (int64_t)(strlen(one) - 5) + 5);
	/* curl's absolute-form request (the real capture) */
	b = capture("http-proxy-abs.bin", &len);
	assert_int_equal(http_request_parse(b, len, &req), HTTP_OK);
	gw_proxy_decide(P, NULL, HTTP_OK, &req, &pv);
	assert_int_equal(pv.v.action, GW_TCP_ALLOW_NAME);
	assert_int_equal(pv.budget, (int64_t)req.head_len);
	free(b);
	/* a tunnel has no budget */
	b = capture("http-connect.bin", &len);
	assert_int_equal(http_request_parse(b, len, &req), HTTP_OK);
	gw_proxy_decide(P, NULL, HTTP_OK, &req, &pv);
	assert_true(pv.connect);
	assert_int_equal(pv.budget, -1);
	free(b);
}

/* every later request on a keep-alive connection names the connection's host */
static void test_later_requests(void **state)
{
	static const struct {
		const char *head;
		bool ok;
	} reqs[] = {
	    {"GET /2 HTTP/1.1\r\nHost: allowed.test\r\n\r\n", true},
	    {"GET /2 HTTP/1.1\r\nHost: ALLOWED.TEST.\r\n\r\n", true},
	    {"GET /2 HTTP/1.0\r\n\r\n", true},
	    {"GET /2 HTTP/1.1\r\nHost: 203.0.113.5\r\n\r\n", true},
	    {"GET /2 HTTP/1.1\r\nHost: evil.test\r\n\r\n", false},
	    {"GET http://evil.test/ HTTP/1.1\r\nHost: evil.test\r\n\r\n", false},
	};
	char buf[600];

	(void)state;
	for (size_t i = 0; i < WD_ARRAY_SIZE(reqs); i++) {
		struct http_request req;
		struct gw_tcp_verdict v;
		enum http_result r =
		    http_request_parse((const uint8_t *)reqs[i].head, strlen(reqs[i].head), &req);

		assert_true(r == HTTP_OK || r == HTTP_ABSENT); /* ABSENT: no Host */
		gw_tcp_decide_request("allowed.test", &req, 3, &v);
		if ((v.action == GW_TCP_ALLOW_BYTES) != reqs[i].ok)
			fail_msg("`%s`: got %d", reqs[i].head, v.action);
		if (!reqs[i].ok)
			assert_string_equal(
			    gw_tcp_reason_text(&v, "p.yaml", buf, sizeof(buf)),
			    "HTTP Host names evil.test but the connection is bound to allowed.test "
			    "(domain fronting, request 3 on this connection)");
	}
}

/* ------------------------------------------------------------ upstream addresses */

static struct gw_ssrf_env env_new(struct gw_addr *local)
{
	struct gw_ssrf_env env = {.local = local, .nlocal = 2};
	static const char *const pools[4] = {"10.213.0.0/16", "fd77:7764:6e00::/48",
					     "100.96.0.0/12", "fd77:7764:6e01::/48"};

	for (int i = 0; i < 4; i++)
		assert_int_equal(gw_cidr_parse(pools[i], &env.own_net[i], &env.own_prefix[i]), 0);
	local[0] = addr("203.0.113.1");
	local[1] = addr("2001:db8::1");
	return env;
}

static void test_ssrf_classes(void **state)
{
	static const struct {
		const char *a;
		uint16_t port;
		enum gw_addr_class want;
	} cases[] = {
	    {"203.0.113.10", 443, GW_ADDR_PUBLIC},
	    {"2001:db8::5", 443, GW_ADDR_PUBLIC},
	    {"127.0.0.1", 443, GW_ADDR_LOOPBACK},
	    {"127.255.0.9", 443, GW_ADDR_LOOPBACK},
	    {"::1", 443, GW_ADDR_LOOPBACK},
	    {"169.254.169.254", 80, GW_ADDR_LINK_LOCAL}, /* the cloud metadata address */
	    {"fe80::1", 443, GW_ADDR_LINK_LOCAL},
	    {"10.1.2.3", 443, GW_ADDR_PRIVATE},
	    {"172.16.0.1", 443, GW_ADDR_PRIVATE},
	    {"192.168.1.1", 443, GW_ADDR_PRIVATE},
	    {"100.64.0.1", 443, GW_ADDR_CGNAT},
	    {"0.0.0.0", 443, GW_ADDR_UNSPECIFIED},
	    {"::", 443, GW_ADDR_UNSPECIFIED},
	    {"224.0.0.1", 443, GW_ADDR_MULTICAST},
	    {"ff02::1", 443, GW_ADDR_MULTICAST},
	    {"255.255.255.255", 443, GW_ADDR_RESERVED},
	    {"fc00::1", 443, GW_ADDR_ULA},
	    {"fd12:3456::1", 443, GW_ADDR_ULA},
	    {"::ffff:127.0.0.1", 443, GW_ADDR_EMBEDDED_V4}, /* v4-mapped */
	    {"::ffff:203.0.113.10", 443, GW_ADDR_EMBEDDED_V4},
	    {"64:ff9b::a9fe:a9fe", 443, GW_ADDR_EMBEDDED_V4}, /* NAT64 of the metadata address */
	    {"2002:a9fe:a9fe::1", 443, GW_ADDR_EMBEDDED_V4},  /* 6to4 */
	    {"10.213.0.1", 443, GW_ADDR_PRIVATE},	      /* the runs pool is private first */
	    {"fd77:7764:6e00::1", 443, GW_ADDR_ULA},
	    {"203.0.113.1", 443, GW_ADDR_GATEWAY}, /* the host's own address */
	    {"2001:db8::1", 443, GW_ADDR_GATEWAY},
	    /* a cidr rule that names the address and port lifts the refusal */
	    {"10.20.0.5", 8080, GW_ADDR_PUBLIC},
	    {"10.20.0.5", 443, GW_ADDR_PRIVATE},
	    {"fd00:1::7", 443, GW_ADDR_PUBLIC},
	    {"fd00:1::7", 80, GW_ADDR_ULA},
	};
	struct gw_addr local[2];
	struct gw_ssrf_env env = env_new(local);

	(void)state;
	for (size_t i = 0; i < WD_ARRAY_SIZE(cases); i++) {
		struct gw_addr a = addr(cases[i].a);
		enum gw_addr_class c = gw_upstream_class(&env, P, &a, cases[i].port);

		if (c != cases[i].want)
			fail_msg("%s:%u: got %s want %s", cases[i].a, cases[i].port,
				 gw_addr_class_name(c), gw_addr_class_name(cases[i].want));
	}
	/* a public-looking address inside the gateway's own pools (its classifier says
	 * PUBLIC for documentation ranges: a pool there is the gateway's all the same) */
	assert_int_equal(gw_cidr_parse("203.0.113.128/25", &env.own_net[2], &env.own_prefix[2]), 0);
	{
		struct gw_addr a = addr("203.0.113.200");

		assert_int_equal(gw_upstream_class(&env, P, &a, 443), GW_ADDR_GATEWAY);
		assert_int_equal(gw_upstream_class(&env, NULL, &a, 443), GW_ADDR_GATEWAY);
	}
}

static void test_upstream_pick(void **state)
{
	struct gw_addr local[2];
	struct gw_ssrf_env env = env_new(local);
	struct gw_addr in[5] = {addr("10.0.0.1"), addr("203.0.113.10"), addr("::1"),
				addr("2001:db8::5"), addr("169.254.169.254")};
	struct gw_addr out[5];
	char why[400];
	size_t n;

	(void)state;
	n = gw_upstream_pick(&env, P, in, 5, 443, out, why, sizeof(why));
	assert_int_equal(n, 2);
	assert_true(gw_addr_eq(&out[0], &in[3])); /* IPv6 first */
	assert_true(gw_addr_eq(&out[1], &in[1]));
	assert_string_equal(why, "::1 is a loopback address; 10.0.0.1 is a private address; "
				 "169.254.169.254 is a link-local address");
	/* all refused */
	n = gw_upstream_pick(&env, P, in, 1, 443, out, why, sizeof(why));
	assert_int_equal(n, 0);
	assert_string_equal(why, "10.0.0.1 is a private address");
	/* a cidr rule lets its own range through on its port */
	in[0] = addr("10.20.9.9");
	n = gw_upstream_pick(&env, P, in, 1, 8080, out, why, sizeof(why));
	assert_int_equal(n, 1);
	assert_string_equal(why, "");
	/* one of the gateway host's own addresses: named without an article */
	in[0] = addr("203.0.113.1");
	n = gw_upstream_pick(&env, P, in, 1, 443, out, why, sizeof(why));
	assert_int_equal(n, 0);
	assert_string_equal(why, "203.0.113.1 is the gateway's own address");
}

/* ------------------------------------------------------------ DNS verdicts */

struct dns_case {
	const char *what;
	const char *qname;
	uint16_t qtype;
	uint16_t qclass;
	bool run;
	bool upstream;
	enum gw_dns_action want;
	enum gw_dns_reason reason;
	bool allowed;
	uint16_t rcode;
	uint16_t ede; /* 0xffff: none */
	int rule;
	const char *text;
};

#define NO_EDE 0xffff

static const struct dns_case dns_cases[] = {
    {"A allowed", "allowed.test", DNS_TYPE_A, DNS_CLASS_IN, true, true, GW_DNS_SYNTHETIC,
     GW_DR_SYNTHETIC, true, DNS_RCODE_NOERROR, NO_EDE, R_ALLOWED, "synthetic address"},
    {"AAAA allowed", "allowed.test", DNS_TYPE_AAAA, DNS_CLASS_IN, true, true, GW_DNS_SYNTHETIC,
     GW_DR_SYNTHETIC, true, DNS_RCODE_NOERROR, NO_EDE, R_ALLOWED, "synthetic address"},
    {"A of a name allowed on one port only", "db.internal.test", DNS_TYPE_A, DNS_CLASS_IN, true,
     true, GW_DNS_SYNTHETIC, GW_DR_SYNTHETIC, true, DNS_RCODE_NOERROR, NO_EDE, R_DB,
     "synthetic address"},
    {"A wildcard", "x.cdn.test", DNS_TYPE_A, DNS_CLASS_IN, true, true, GW_DNS_SYNTHETIC,
     GW_DR_SYNTHETIC, true, DNS_RCODE_NOERROR, NO_EDE, R_CDN, "synthetic address"},
    {"A wildcard apex", "cdn.test", DNS_TYPE_A, DNS_CLASS_IN, true, true, GW_DNS_RCODE,
     GW_DR_NOT_ALLOWED, false, DNS_RCODE_NXDOMAIN, DNS_EDE_BLOCKED, -1,
     "cdn.test is not allowed by policy p.yaml"},
    {"A not allowed", "evil.test", DNS_TYPE_A, DNS_CLASS_IN, true, true, GW_DNS_RCODE,
     GW_DR_NOT_ALLOWED, false, DNS_RCODE_NXDOMAIN, DNS_EDE_BLOCKED, -1,
     "evil.test is not allowed by policy p.yaml"},
    {"TXT not allowed: never forwarded", "evil.test", DNS_TYPE_TXT, DNS_CLASS_IN, true, true,
     GW_DNS_RCODE, GW_DR_NOT_ALLOWED, false, DNS_RCODE_NXDOMAIN, DNS_EDE_BLOCKED, -1,
     "evil.test is not allowed by policy p.yaml"},
    {"TXT allowed", "allowed.test", DNS_TYPE_TXT, DNS_CLASS_IN, true, true, GW_DNS_FORWARD,
     GW_DR_FORWARDED, true, DNS_RCODE_NOERROR, NO_EDE, R_ALLOWED,
     "forwarded upstream (addresses replaced)"},
    {"MX allowed, no upstream", "allowed.test", DNS_TYPE_MX, DNS_CLASS_IN, true, false,
     GW_DNS_RCODE, GW_DR_NOT_ANSWERED, false, DNS_RCODE_NOTIMP, NO_EDE, R_ALLOWED,
     "ANY queries are not answered"},
    {"ANY", "allowed.test", DNS_TYPE_ANY, DNS_CLASS_IN, true, true, GW_DNS_RCODE,
     GW_DR_NOT_ANSWERED, false, DNS_RCODE_NOTIMP, NO_EDE, R_ALLOWED,
     "ANY queries are not answered"},
    {"SRV of an allowed name's service", "_https._tcp.allowed.test", DNS_TYPE_SRV, DNS_CLASS_IN,
     true, true, GW_DNS_FORWARD, GW_DR_FORWARDED, true, DNS_RCODE_NOERROR, NO_EDE, R_ALLOWED,
     "forwarded upstream (addresses replaced)"},
    {"SRV of another name's service", "_https._tcp.evil.test", DNS_TYPE_SRV, DNS_CLASS_IN, true,
     true, GW_DNS_RCODE, GW_DR_NOT_ALLOWED, false, DNS_RCODE_NXDOMAIN, DNS_EDE_BLOCKED, -1,
     "_https._tcp.evil.test is not allowed by policy p.yaml"},
    {"underscore labels outside SRV decide nothing", "_https._tcp.allowed.test", DNS_TYPE_TXT,
     DNS_CLASS_IN, true, true, GW_DNS_RCODE, GW_DR_NOT_ALLOWED, false, DNS_RCODE_NXDOMAIN,
     DNS_EDE_BLOCKED, -1, "_https._tcp.allowed.test is not allowed by policy p.yaml"},
    {"HTTPS of any name", "evil.test", DNS_TYPE_HTTPS, DNS_CLASS_IN, true, true, GW_DNS_EMPTY,
     GW_DR_EMPTY_TYPE, true, DNS_RCODE_NOERROR, NO_EDE, -1,
     "HTTPS/SVCB records are answered empty (no ECH, no hints)"},
    {"SVCB", "allowed.test", DNS_TYPE_SVCB, DNS_CLASS_IN, true, true, GW_DNS_EMPTY,
     GW_DR_EMPTY_TYPE, true, DNS_RCODE_NOERROR, NO_EDE, -1,
     "HTTPS/SVCB records are answered empty (no ECH, no hints)"},
    {"the liveness check", GW_LIVENESS_NAME, DNS_TYPE_HTTPS, DNS_CLASS_IN, true, true,
     GW_DNS_LIVENESS, GW_DR_LIVENESS, true, DNS_RCODE_NOERROR, NO_EDE, -1, NULL},
    {"the liveness name as A", GW_LIVENESS_NAME, DNS_TYPE_A, DNS_CLASS_IN, true, true, GW_DNS_RCODE,
     GW_DR_NOT_ALLOWED, false, DNS_RCODE_NXDOMAIN, DNS_EDE_BLOCKED, -1,
     "warden-liveness.check.invalid is not allowed by policy p.yaml"},
    {"no run", "allowed.test", DNS_TYPE_A, DNS_CLASS_IN, false, true, GW_DNS_RCODE, GW_DR_NO_RUN,
     false, DNS_RCODE_REFUSED, NO_EDE, -1, "no run owns this ingress address pair (10.213.0.2)"},
    {"class CH", "allowed.test", DNS_TYPE_A, 3, true, true, GW_DNS_RCODE, GW_DR_CLASS, false,
     DNS_RCODE_REFUSED, NO_EDE, -1, "only class IN is answered"},
    {"AXFR of an allowed name", "allowed.test", DNS_TYPE_AXFR, DNS_CLASS_IN, true, true,
     GW_DNS_RCODE, GW_DR_TYPE_REFUSED, false, DNS_RCODE_REFUSED, DNS_EDE_NOT_SUPPORTED, -1,
     "AXFR queries are refused: zone transfers are refused"},
    {"IXFR", "allowed.test", DNS_TYPE_IXFR, DNS_CLASS_IN, true, true, GW_DNS_RCODE,
     GW_DR_TYPE_REFUSED, false, DNS_RCODE_REFUSED, DNS_EDE_NOT_SUPPORTED, -1,
     "IXFR queries are refused: zone transfers are refused"},
    {"NULL", "allowed.test", DNS_TYPE_NULL, DNS_CLASS_IN, true, true, GW_DNS_RCODE,
     GW_DR_TYPE_REFUSED, false, DNS_RCODE_REFUSED, DNS_EDE_NOT_SUPPORTED, -1,
     "NULL queries are refused: NULL records (arbitrary data) are never forwarded"},
    {"OPT as a question", "allowed.test", DNS_TYPE_OPT, DNS_CLASS_IN, true, true, GW_DNS_RCODE,
     GW_DR_TYPE_REFUSED, false, DNS_RCODE_REFUSED, DNS_EDE_NOT_SUPPORTED, -1,
     "OPT queries are refused: OPT is a pseudo-record, not a question type"},
    {"MAILA", "allowed.test", DNS_TYPE_MAILA, DNS_CLASS_IN, true, true, GW_DNS_RCODE,
     GW_DR_TYPE_REFUSED, false, DNS_RCODE_REFUSED, DNS_EDE_NOT_SUPPORTED, -1,
     "MAILA queries are refused: MAILA is an obsolete meta-query"},
    {"TSIG", "allowed.test", DNS_TYPE_TSIG, DNS_CLASS_IN, true, true, GW_DNS_RCODE,
     GW_DR_TYPE_REFUSED, false, DNS_RCODE_REFUSED, DNS_EDE_NOT_SUPPORTED, -1,
     "TSIG queries are refused: TSIG is a meta-type, not data"},
    {"MD", "allowed.test", 3, DNS_CLASS_IN, true, true, GW_DNS_RCODE, GW_DR_TYPE_REFUSED, false,
     DNS_RCODE_REFUSED, DNS_EDE_NOT_SUPPORTED, -1,
     "MD queries are refused: MD is obsolete (use MX)"},
    {"type 0", "allowed.test", 0, DNS_CLASS_IN, true, true, GW_DNS_RCODE, GW_DR_TYPE_REFUSED, false,
     DNS_RCODE_REFUSED, DNS_EDE_NOT_SUPPORTED, -1, "TYPE0 queries are refused: type 0 is reserved"},
    {"a meta-type without a name", "allowed.test", 200, DNS_CLASS_IN, true, true, GW_DNS_RCODE,
     GW_DR_TYPE_REFUSED, false, DNS_RCODE_REFUSED, DNS_EDE_NOT_SUPPORTED, -1,
     "TYPE200 queries are refused: meta-types (128-255) are not data"},
    {"an unknown data type of an allowed name", "allowed.test", 300, DNS_CLASS_IN, true, true,
     GW_DNS_FORWARD, GW_DR_FORWARDED, true, DNS_RCODE_NOERROR, NO_EDE, R_ALLOWED,
     "forwarded upstream (addresses replaced)"},
};

static void test_dns_matrix(void **state)
{
	struct gw_addr peer = addr("10.213.0.2");

	(void)state;
	for (size_t i = 0; i < WD_ARRAY_SIZE(dns_cases); i++) {
		const struct dns_case *c = &dns_cases[i];
		struct dns_query q = {
		    .header_ok = true, .question_ok = true, .qtype = c->qtype, .qclass = c->qclass};
		struct gw_dns_facts f = {.parsed = DNS_OK,
					 .q = &q,
					 .policy = c->run ? P : NULL,
					 .upstream = c->upstream};
		struct gw_dns_verdict v;
		char buf[600];
		const char *text;

		snprintf(q.qname, sizeof(q.qname), "%s", c->qname);
		gw_dns_decide(&f, &v);
		text = gw_dns_reason_text(&v, &q, "p.yaml", &peer, buf, sizeof(buf));
		if (v.action != c->want || v.reason != c->reason || v.allowed != c->allowed ||
		    v.rcode != c->rcode || v.ede != (c->ede != NO_EDE) ||
		    (v.ede && v.ede_code != c->ede) || v.rule != c->rule ||
		    (c->text && strcmp(text, c->text)))
			fail_msg("%s: got action %d reason %d allowed %d rcode %u ede %d/%u rule "
				 "%d `%s`",
				 c->what, v.action, v.reason, v.allowed, v.rcode, v.ede, v.ede_code,
				 v.rule, text);
	}
}

/* the test policy under a ceiling: what only the ceiling refuses says so, with where
 * (TCP by SNI and by address, the proxy port, DNS); what the policy refuses itself keeps
 * its own reason */
static void test_ceiling(void **state)
{
	static const char gw[] = "version: 1\n"
				 "ceiling:\n"
				 "  allow:\n"
				 "    - allowed.test:443\n"			 /* 4 */
				 "    - { cidr: 10.20.0.0/24, ports: [8080] }\n" /* 5 */
				 "  deny: [\"*.cdn.test\"]\n";			 /* 6 */
	const struct policy_who who = {.uid = 1000, .name = "u"};
	struct wd_gwconf c;
	struct policy_diags d;
	struct wd_policy *e = NULL;
	struct gw_addr dst = addr("203.0.113.9"), net = addr("10.20.9.9");
	struct gw_first f;
	struct gw_tcp_facts facts = {.dst = &dst, .port = 80, .first = &f};
	struct gw_tcp_verdict v;
	struct dns_query q = {
	    .header_ok = true, .question_ok = true, .qtype = DNS_TYPE_A, .qclass = DNS_CLASS_IN};
	struct gw_dns_facts df = {.parsed = DNS_OK, .q = &q, .upstream = true};
	struct gw_dns_verdict dv;
	struct gw_addr peer = addr("10.213.0.2");
	static uint8_t b[512];
	char buf[600];
	size_t n;

	(void)state;
	policy_diags_init(&d);
	assert_int_equal(conf_parse(gw, strlen(gw), "/etc/warden/gateway.yaml", &c, &d), 0);
	assert_int_equal(policy_ceiling_apply(c.ceiling, &who, P, &e), 0);
	facts.policy = e;
	df.policy = e;
	/* a port the policy allows, the ceiling not */
	n = hello(b, "allowed.test", false);
	assert_int_equal(gw_sniff(b, n, false, &TH, &f), GW_SNIFF_DONE);
	gw_tcp_decide(&facts, &v);
	assert_int_equal(v.reason, GW_TR_CEILING);
	assert_string_equal(gw_tcp_reason_text(&v, "p.yaml", buf, sizeof(buf)),
			    "allowed.test:80 is not allowed by the host's ceiling "
			    "/etc/warden/gateway.yaml:4 (its rule `allowed.test:443` is for other "
			    "ports)");
	facts.port = 443;
	gw_tcp_decide(&facts, &v);
	assert_int_equal(v.action, GW_TCP_ALLOW_NAME);
	/* a denied name */
	n = hello(b, "x.cdn.test", false);
	assert_int_equal(gw_sniff(b, n, false, &TH, &f), GW_SNIFF_DONE);
	gw_tcp_decide(&facts, &v);
	assert_string_equal(gw_tcp_reason_text(&v, "p.yaml", buf, sizeof(buf)),
			    "x.cdn.test:443 is denied by the host's ceiling "
			    "/etc/warden/gateway.yaml:6 (`*.cdn.test`)");
	/* a name the policy itself refuses: its own reason */
	n = hello(b, "evil.test", false);
	assert_int_equal(gw_sniff(b, n, false, &TH, &f), GW_SNIFF_DONE);
	gw_tcp_decide(&facts, &v);
	assert_int_equal(v.reason, GW_TR_NO_RULE);
	/* an address range: 10.20.0.0/16 narrowed to 10.20.0.0/24 */
	facts.first = NULL;
	facts.dst = &net;
	facts.port = 8080;
	assert_int_equal(gw_sniff((const uint8_t *)"\x01", 1, true, &TH, &f), GW_SNIFF_DONE);
	facts.first = &f;
	gw_tcp_decide(&facts, &v);
	assert_string_equal(gw_tcp_reason_text(&v, "p.yaml", buf, sizeof(buf)),
			    "10.20.9.9:8080 is not allowed by the host's ceiling "
			    "/etc/warden/gateway.yaml:3");
	/* DNS */
	snprintf(q.qname, sizeof(q.qname), "db.internal.test");
	gw_dns_decide(&df, &dv);
	assert_int_equal(dv.reason, GW_DR_CEILING);
	assert_int_equal(dv.rcode, DNS_RCODE_NXDOMAIN);
	assert_string_equal(gw_dns_reason_text(&dv, &q, "p.yaml", &peer, buf, sizeof(buf)),
			    "db.internal.test is not allowed by the host's ceiling "
			    "/etc/warden/gateway.yaml:3");
	snprintf(q.qname, sizeof(q.qname), "allowed.test");
	gw_dns_decide(&df, &dv);
	assert_int_equal(dv.action, GW_DNS_SYNTHETIC);
	snprintf(q.qname, sizeof(q.qname), "evil.test");
	gw_dns_decide(&df, &dv);
	assert_int_equal(dv.reason, GW_DR_NOT_ALLOWED);
	policy_free(e);
	conf_free(&c);
	policy_diags_free(&d);
}

/* network.ask: only A/AAAA of a name no rule allows and network.ask names; held when a person
 * can answer, denied at once when no one can or over TCP; never an allowed name, never the
 * host's ceiling's denial, never learn mode */
/* one query of @type for @name under @f's policy: gw_dns_decide(), then gw_ask_decide() */
static enum gw_ask_action ask_of(struct gw_dns_facts *f, uint16_t type, const char *name,
				 bool asker, bool tcp, int *rule, struct gw_dns_verdict *v)
{
	struct dns_query *q = (struct dns_query *)f->q;

	*q = (struct dns_query){
	    .header_ok = true, .question_ok = true, .qclass = DNS_CLASS_IN, .qtype = type};
	snprintf(q->qname, sizeof(q->qname), "%s", name);
	gw_dns_decide(f, v);
	return gw_ask_decide(f, v, asker, tcp, rule);
}

static void test_ask_decide(void **state)
{
	static const char yaml[] = "version: 1\nnetwork:\n  allow: [ok.test]\n"
				   "  ask: [\"*.ask.test\", \"one.test\"]\n";
	struct policy_diags d;
	struct wd_policy *p = NULL;
	struct dns_query q;
	struct gw_dns_facts f = {.parsed = DNS_OK, .q = &q, .upstream = true};
	struct gw_dns_verdict v;
	int rule = -1;

	(void)state;
	policy_diags_init(&d);
	assert_int_equal(policy_parse(yaml, strlen(yaml), "a.yaml", &p, &d), 0);
	policy_diags_free(&d);
	f.policy = p;
	assert_int_equal(ask_of(&f, DNS_TYPE_A, "x.ask.test", true, false, &rule, &v), GW_ASK_HOLD);
	assert_int_equal(v.reason, GW_DR_NOT_ALLOWED);
	assert_string_equal(p->ask->rules[rule].text, "*.ask.test:80,443");
	assert_int_equal(ask_of(&f, DNS_TYPE_A, "x.ask.test", false, false, &rule, &v),
			 GW_ASK_NOBODY);
	assert_int_equal(ask_of(&f, DNS_TYPE_A, "x.ask.test", true, true, &rule, &v), GW_ASK_TCP);
	assert_int_equal(ask_of(&f, DNS_TYPE_AAAA, "one.test", true, false, &rule, &v),
			 GW_ASK_HOLD);
	/* the positive control's probe, on names that are not asks */
	assert_int_equal(ask_of(&f, DNS_TYPE_A, "other.test", true, false, &rule, &v), GW_ASK_NONE);
	assert_int_equal(v.reason, GW_DR_NOT_ALLOWED);
	assert_int_equal(ask_of(&f, DNS_TYPE_A, "ok.test", true, false, &rule, &v), GW_ASK_NONE);
	assert_int_equal(v.action, GW_DNS_SYNTHETIC);
	/* other types of an ask name are not held */
	assert_int_equal(ask_of(&f, DNS_TYPE_TXT, "x.ask.test", true, false, &rule, &v),
			 GW_ASK_NONE);
	/* learn mode decides by the ceiling alone */
	f.learn = true;
	assert_int_equal(ask_of(&f, DNS_TYPE_A, "x.ask.test", true, false, &rule, &v), GW_ASK_NONE);
	policy_free(p);
}

/* a malformed query: answered with the parser's hint when its header allows, else silence */
static void test_dns_malformed(void **state)
{
	size_t len;
	uint8_t *b = capture("dns-query-noedns.bin", &len);
	struct dns_query q;
	struct gw_dns_facts f = {.q = &q, .policy = P, .upstream = true};
	struct gw_dns_verdict v;
	struct gw_addr peer = addr("10.213.0.2");
	char buf[600];

	(void)state;
	f.parsed = dns_query_parse(b, len, &q);
	assert_int_equal(f.parsed, DNS_OK); /* the control: the whole query parses */
	b[2] |= 0x80;			    /* QR: a response, never answered */
	f.parsed = dns_query_parse(b, len, &q);
	assert_int_equal(f.parsed, DNS_MALFORMED);
	gw_dns_decide(&f, &v);
	assert_int_equal(v.action, GW_DNS_SILENT);
	assert_false(v.allowed);
	b[2] &= 0x7f;
	f.parsed = dns_query_parse(b, len - 1, &q); /* truncated question */
	assert_int_equal(f.parsed, DNS_MALFORMED);
	assert_true(q.header_ok);
	gw_dns_decide(&f, &v);
	assert_int_equal(v.action, GW_DNS_RCODE);
	assert_int_equal(v.rcode, q.rcode_hint);
	assert_false(v.ede);
	assert_int_equal(v.reason, GW_DR_MALFORMED);
	assert_non_null(
	    strstr(gw_dns_reason_text(&v, &q, "p.yaml", &peer, buf, sizeof(buf)), "malformed: "));
	/* with no run it is still malformed first */
	f.policy = NULL;
	gw_dns_decide(&f, &v);
	assert_int_equal(v.reason, GW_DR_MALFORMED);
	free(b);
}

static void test_name_allowed(void **state)
{
	(void)state;
	assert_int_equal(gw_name_allowed(P, "allowed.test"), R_ALLOWED);
	assert_int_equal(gw_name_allowed(P, "Allowed.Test."), R_ALLOWED);
	assert_int_equal(gw_name_allowed(P, "deep.x.cdn.test"), R_CDN);
	assert_int_equal(gw_name_allowed(P, "db.internal.test"), R_DB);
	assert_int_equal(gw_name_allowed(P, "cdn.test"), -ENOENT);
	assert_int_equal(gw_name_allowed(P, "internal.test"), -ENOENT);
	assert_int_equal(gw_name_allowed(NULL, "allowed.test"), -ENOENT);
}

/* a connection let through, decided again after a replace (gw_tcp_recheck()) */
static void test_recheck(void **state)
{
	static const char narrower[] = "version: 1\nnetwork:\n  allow:\n    - allowed.test\n";
	struct gw_addr doc = addr("198.51.100.7"), other = addr("203.0.113.9");
	struct gw_tcp_verdict v;
	struct policy_diags d;
	struct wd_policy *n = NULL;
	char buf[600];

	(void)state;
	/* by the name it was allowed for */
	gw_tcp_recheck(P, NULL, "allowed.test", &other, 443, &v);
	assert_int_equal(v.action, GW_TCP_ALLOW_NAME);
	assert_int_equal(v.rule, R_ALLOWED);
	gw_tcp_recheck(P, NULL, "x.cdn.test", &other, 443, &v);
	assert_int_equal(v.action, GW_TCP_ALLOW_NAME);
	gw_tcp_recheck(P, NULL, "x.cdn.test", &other, 80, &v); /* another port */
	assert_int_equal(v.action, GW_TCP_DENY);
	assert_int_equal(v.reason, GW_TR_NO_RULE);
	/* no name: its address, by the cidr rules; an address literal as a name: the same */
	gw_tcp_recheck(P, NULL, NULL, &doc, 8080, &v);
	assert_int_equal(v.action, GW_TCP_ALLOW_ADDR);
	assert_int_equal(v.rule, R_DOC_NET);
	gw_tcp_recheck(P, NULL, "198.51.100.7", &doc, 8080, &v);
	assert_int_equal(v.action, GW_TCP_ALLOW_ADDR);
	gw_tcp_recheck(P, NULL, NULL, &other, 8080, &v);
	assert_int_equal(v.action, GW_TCP_DENY);
	assert_int_equal(v.reason, GW_TR_NO_NAME);
	/* the policy without the rules: what they allowed is denied, with the usual text */
	policy_diags_init(&d);
	assert_int_equal(policy_parse(narrower, strlen(narrower), "n.yaml", &n, &d), 0);
	policy_diags_free(&d);
	gw_tcp_recheck(n, NULL, "allowed.test", &other, 80, &v);
	assert_int_equal(v.action, GW_TCP_ALLOW_NAME);
	gw_tcp_recheck(n, NULL, "db.internal.test", &other, 5432, &v);
	assert_int_equal(v.action, GW_TCP_DENY);
	assert_int_equal(v.reason, GW_TR_NO_RULE);
	assert_string_equal(v.name, "db.internal.test");
	assert_non_null(
	    strstr(gw_tcp_reason_text(&v, "n.yaml", buf, sizeof(buf)), "db.internal.test"));
	gw_tcp_recheck(n, NULL, NULL, &doc, 8080, &v);
	assert_int_equal(v.action, GW_TCP_DENY);
	policy_free(n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sniff_captures), cmocka_unit_test(test_sniff_crafted),
	    cmocka_unit_test(test_tcp_matrix),	   cmocka_unit_test(test_sni_over_host),
	    cmocka_unit_test(test_proxy_matrix),   cmocka_unit_test(test_proxy_budget),
	    cmocka_unit_test(test_later_requests), cmocka_unit_test(test_ssrf_classes),
	    cmocka_unit_test(test_upstream_pick),  cmocka_unit_test(test_dns_matrix),
	    cmocka_unit_test(test_ask_decide),	   cmocka_unit_test(test_dns_malformed),
	    cmocka_unit_test(test_ceiling),	   cmocka_unit_test(test_name_allowed),
	    cmocka_unit_test(test_recheck),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

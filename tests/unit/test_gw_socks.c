/* test_gw_socks.c - unit tests for the proxy port's SOCKS5: the greeting and request parsers
 * and the reply composer (gateway/proto/socks.c: every prefix of a valid message needs more,
 * each rule broken once), and gw_socks_decide() (decide.c) against gw_proxy_decide() on the
 * CONNECT to the same target: the same verdict, rule, port and audit text for names, IPv4 and
 * IPv6 literals, a dotted quad given as a name, in a normal run and in learn mode. */
#include "common/common.h"
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
#include <arpa/inet.h>

#include <cmocka.h>

static const char policy_yaml[] = "version: 1\n"
				  "network:\n"
				  "  allow:\n"
				  "    - allowed.test\n"
				  "    - \"*.cdn.test:443\"\n"
				  "    - { cidr: \"198.51.100.0/24\", ports: [8080] }\n"
				  "    - { cidr: \"fd00:1::/64\", ports: [443] }\n";

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

/* ------------------------------------------------------------ greeting */

struct greet_case {
	const char *what;
	const char *bytes;
	size_t len;
	enum socks5_result want;
};

static const struct greet_case greet_cases[] = {
    {"curl's greeting", "\x05\x02\x00\x01", 4, SOCKS5_OK},
    {"no auth only", "\x05\x01\x00", 3, SOCKS5_OK},
    {"username/password only", "\x05\x01\x02", 3, SOCKS5_REFUSED},
    {"GSSAPI and username/password", "\x05\x02\x01\x02", 4, SOCKS5_REFUSED},
    {"version 4", "\x04\x01\x00", 3, SOCKS5_MALFORMED},
    {"no methods", "\x05\x00", 2, SOCKS5_MALFORMED},
    {"empty", "", 0, SOCKS5_NEED_MORE},
    {"methods missing", "\x05\x03\x00\x01", 4, SOCKS5_NEED_MORE},
};

static void test_greeting(void **state)
{
	(void)state;
	for (size_t i = 0; i < WD_ARRAY_SIZE(greet_cases); i++) {
		const struct greet_case *c = &greet_cases[i];
		struct socks5_greeting g;
		enum socks5_result r = socks5_greeting_parse((const uint8_t *)c->bytes, c->len, &g);

		if (r != c->want)
			fail_msg("%s: got %d", c->what, r);
		if (r == SOCKS5_OK) {
			assert_int_equal(g.len, c->len);
			/* every prefix needs more */
			for (size_t n = 0; n < c->len; n++)
				assert_int_equal(
				    socks5_greeting_parse((const uint8_t *)c->bytes, n, &g),
				    SOCKS5_NEED_MORE);
		}
		if (r == SOCKS5_REFUSED)
			assert_int_equal(g.rep, SOCKS5_NO_METHOD);
		if (r == SOCKS5_REFUSED || r == SOCKS5_MALFORMED)
			assert_non_null(g.why);
	}
}

/* ------------------------------------------------------------ request */

/* a request: VER 5, @cmd, RSV @rsv, ATYP @atyp, the address bytes, @port; Return: its length */
static size_t request(uint8_t *out, uint8_t cmd, uint8_t rsv, uint8_t atyp, const void *a,
		      size_t alen, uint16_t port)
{
	size_t n = 0;

	out[n++] = 5;
	out[n++] = cmd;
	out[n++] = rsv;
	out[n++] = atyp;
	if (atyp == 3)
		out[n++] = (uint8_t)alen;
	memcpy(out + n, a, alen);
	n += alen;
	out[n++] = (uint8_t)(port >> 8);
	out[n++] = (uint8_t)port;
	return n;
}

static void test_request(void **state)
{
	static const uint8_t v4[4] = {198, 51, 100, 7};
	static const uint8_t v6[16] = {0xfd, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 5};
	uint8_t b[300], big[300];
	struct socks5_request q;
	size_t n;

	(void)state;
	/* a name, folded to lower case, then the tunnel's first bytes */
	n = request(b, 1, 0, 3, "Allowed.TEST.", 13, 443);
	memcpy(b + n, "\x16\x03\x01", 3);
	assert_int_equal(socks5_request_parse(b, n + 3, &q), SOCKS5_OK);
	assert_string_equal(q.host, "allowed.test");
	assert_int_equal(q.host_kind, PROTO_HOST_NAME);
	assert_int_equal(q.port, 443);
	assert_int_equal(q.len, n);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(socks5_request_parse(b, i, &q), SOCKS5_NEED_MORE);
	/* literals */
	n = request(b, 1, 0, 1, v4, 4, 8080);
	assert_int_equal(socks5_request_parse(b, n, &q), SOCKS5_OK);
	assert_string_equal(q.host, "198.51.100.7");
	assert_int_equal(q.host_kind, PROTO_HOST_IPV4);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(socks5_request_parse(b, i, &q), SOCKS5_NEED_MORE);
	n = request(b, 1, 0, 4, v6, 16, 443);
	assert_int_equal(socks5_request_parse(b, n, &q), SOCKS5_OK);
	assert_string_equal(q.host, "fd00:1::5");
	assert_int_equal(q.host_kind, PROTO_HOST_IPV6);
	n = request(b, 1, 0, 3, "198.51.100.7", 12, 8080);
	assert_int_equal(socks5_request_parse(b, n, &q), SOCKS5_OK);
	assert_int_equal(q.host_kind, PROTO_HOST_IPV4);
	/* BIND, UDP ASSOCIATE, an unknown command: refused, whatever follows */
	(void)request(b, 2, 0, 1, v4, 4, 80);
	assert_int_equal(socks5_request_parse(b, 4, &q), SOCKS5_REFUSED); /* the head is enough */
	assert_int_equal(q.rep, SOCKS5_REP_CMD_UNSUPPORTED);
	assert_string_equal(q.why, "SOCKS5 BIND is not supported");
	n = request(b, 3, 0, 1, v4, 4, 0);
	assert_int_equal(socks5_request_parse(b, n, &q), SOCKS5_REFUSED);
	assert_int_equal(q.rep, SOCKS5_REP_CMD_UNSUPPORTED);
	assert_string_equal(q.why, "SOCKS5 UDP ASSOCIATE is not supported");
	n = request(b, 9, 0, 1, v4, 4, 80);
	assert_int_equal(socks5_request_parse(b, n, &q), SOCKS5_REFUSED);
	/* an unknown address type */
	n = request(b, 1, 0, 2, v4, 4, 80);
	assert_int_equal(socks5_request_parse(b, n, &q), SOCKS5_REFUSED);
	assert_int_equal(q.rep, SOCKS5_REP_ATYP_UNSUPPORTED);
	/* malformed: version, reserved byte, empty or bad name, numeric name, port 0 */
	n = request(b, 1, 0, 1, v4, 4, 80);
	b[0] = 4;
	assert_int_equal(socks5_request_parse(b, n, &q), SOCKS5_MALFORMED);
	n = request(b, 1, 1, 1, v4, 4, 80);
	assert_int_equal(socks5_request_parse(b, n, &q), SOCKS5_MALFORMED);
	n = request(b, 1, 0, 3, "", 0, 80);
	assert_int_equal(socks5_request_parse(b, n, &q), SOCKS5_MALFORMED);
	n = request(b, 1, 0, 3, "a/b.test", 8, 80);
	assert_int_equal(socks5_request_parse(b, n, &q), SOCKS5_MALFORMED);
	n = request(b, 1, 0, 3, "0x7f000001", 10, 80);
	assert_int_equal(socks5_request_parse(b, n, &q), SOCKS5_MALFORMED);
	n = request(b, 1, 0, 3, "fd00::1", 7, 80);
	assert_int_equal(socks5_request_parse(b, n, &q), SOCKS5_MALFORMED);
	n = request(b, 1, 0, 1, v4, 4, 0);
	assert_int_equal(socks5_request_parse(b, n, &q), SOCKS5_MALFORMED);
	assert_non_null(q.why);
	/* the longest name field (255 bytes) is more than a host name may be */
	memset(big, 'a', sizeof(big));
	n = request(b, 1, 0, 3, big, 255, 80);
	assert_int_equal(n, SOCKS5_REQUEST_MAX);
	assert_int_equal(socks5_request_parse(b, n, &q), SOCKS5_MALFORMED);
}

static void test_reply(void **state)
{
	static const uint8_t want[SOCKS5_REPLY_LEN] = {5, 2, 0, 1, 0, 0, 0, 0, 0, 0};
	uint8_t out[SOCKS5_REPLY_LEN];

	(void)state;
	assert_int_equal(socks5_reply_compose(out, sizeof(out), SOCKS5_REP_NOT_ALLOWED),
			 SOCKS5_REPLY_LEN);
	assert_memory_equal(out, want, sizeof(want));
	assert_int_equal(socks5_reply_compose(out, SOCKS5_REPLY_LEN - 1, 0), -ENOSPC);
}

/* ------------------------------------------------------------ decisions */

struct target {
	uint8_t atyp;
	const char *addr; /* name, or the literal's text */
	uint16_t port;
};

static const struct target targets[] = {
    {3, "allowed.test", 443}, {3, "allowed.test", 80},	  {3, "a.cdn.test", 443},
    {3, "cdn.test", 443},     {3, "a.cdn.test", 22},	  {3, "evil.test", 443},
    {3, "metadata.test", 80}, {1, "198.51.100.7", 8080},  {1, "198.51.100.7", 443},
    {1, "203.0.113.9", 443},  {1, "169.254.169.254", 80}, {4, "fd00:1::5", 443},
    {4, "fd00:1::5", 80},     {3, "198.51.100.7", 8080},  {3, "203.0.113.9", 80},
};

/* @t as a SOCKS5 request parsed, and as the CONNECT head naming the same target */
static void both(const struct target *t, struct socks5_request *q, char *head, size_t size)
{
	uint8_t a[16], b[300];
	size_t n;
	int fam = t->atyp == 4 ? AF_INET6 : AF_INET;

	if (t->atyp == 3)
		n = request(b, 1, 0, 3, t->addr, strlen(t->addr), t->port);
	else {
		assert_int_equal(inet_pton(fam, t->addr, a), 1);
		n = request(b, 1, 0, t->atyp, a, t->atyp == 4 ? 16 : 4, t->port);
	}
	assert_int_equal(socks5_request_parse(b, n, q), SOCKS5_OK);
	if (t->atyp == 4)
		snprintf(head, size, "CONNECT [%s]:%u HTTP/1.1\r\nHost: [%s]:%u\r\n\r\n", t->addr,
			 t->port, t->addr, t->port);
	else
		snprintf(head, size, "CONNECT %s:%u HTTP/1.1\r\nHost: %s:%u\r\n\r\n", t->addr,
			 t->port, t->addr, t->port);
}

static void same_as_connect(const struct gw_ssrf_env *env)
{
	for (size_t i = 0; i < WD_ARRAY_SIZE(targets); i++) {
		struct socks5_request q;
		struct http_request req;
		struct gw_proxy_verdict s, c;
		char head[300], ts[600], tc[600];
		const char *tsp, *tcp;
		enum http_result r;

		both(&targets[i], &q, head, sizeof(head));
		r = http_request_parse((const uint8_t *)head, strlen(head), &req);
		assert_int_equal(r, HTTP_OK);
		gw_socks_decide(P, NULL, env, &q, &s);
		if (env)
			gw_proxy_decide_learn(P, env, r, &req, &c);
		else
			gw_proxy_decide(P, NULL, r, &req, &c);
		/* the text is the function's answer: @buf, or a constant ("allowed") */
		tsp = gw_tcp_reason_text(&s.v, "p.yaml", ts, sizeof(ts));
		tcp = gw_tcp_reason_text(&c.v, "p.yaml", tc, sizeof(tc));
		if (s.v.action != c.v.action || s.v.reason != c.v.reason || s.v.rule != c.v.rule ||
		    s.v.port != c.v.port || strcmp(tsp, tcp))
			fail_msg("%s:%u: socks %d %d rule %d `%s`, connect %d %d rule %d `%s`",
				 targets[i].addr, targets[i].port, s.v.action, s.v.reason, s.v.rule,
				 tsp, c.v.action, c.v.reason, c.v.rule, tcp);
		assert_string_equal(s.proto, "socks5");
		assert_true(s.connect);
		assert_int_equal(s.budget, -1);
		if (s.v.action == GW_TCP_ALLOW_ADDR) {
			assert_ptr_equal(s.v.dst, &s.literal);
			assert_memory_equal(&s.literal, &c.literal, sizeof(s.literal));
		}
	}
}

static void test_decide_as_connect(void **state)
{
	struct gw_ssrf_env env;

	(void)state;
	same_as_connect(NULL);
	memset(&env, 0, sizeof(env));
	same_as_connect(&env); /* learn mode: literals by their class */
}

/* the verdicts themselves, for the cases the lab drives */
static void test_decide(void **state)
{
	struct socks5_request q;
	struct gw_proxy_verdict pv;
	char head[300], text[600];

	(void)state;
	both(&targets[0], &q, head, sizeof(head));
	gw_socks_decide(P, NULL, NULL, &q, &pv);
	assert_int_equal(pv.v.action, GW_TCP_ALLOW_NAME);
	assert_string_equal(pv.v.name, "allowed.test");
	both(&targets[5], &q, head, sizeof(head));
	gw_socks_decide(P, NULL, NULL, &q, &pv);
	assert_int_equal(pv.v.action, GW_TCP_DENY);
	assert_string_equal(gw_tcp_reason_text(&pv.v, "p.yaml", text, sizeof(text)),
			    "evil.test:443 is not allowed by policy p.yaml (no network.allow rule "
			    "matches)");
	both(&targets[7], &q, head, sizeof(head));
	gw_socks_decide(P, NULL, NULL, &q, &pv);
	assert_int_equal(pv.v.action, GW_TCP_ALLOW_ADDR);
	both(&targets[9], &q, head, sizeof(head));
	gw_socks_decide(P, NULL, NULL, &q, &pv);
	assert_int_equal(pv.v.action, GW_TCP_DENY);
	assert_int_equal(pv.v.reason, GW_TR_NO_RULE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_greeting), cmocka_unit_test(test_request),
	    cmocka_unit_test(test_reply),    cmocka_unit_test(test_decide_as_connect),
	    cmocka_unit_test(test_decide),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

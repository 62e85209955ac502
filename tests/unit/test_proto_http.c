/* test_proto_http.c - unit tests for the HTTP/1.x request head parser and the 403
 * composer (gateway/proto/http.c): real curl captures (origin-form, HTTP/1.0,
 * proxy absolute-form, CONNECT), every prefix, and a table of heads that
 * break each rule. */
#include "common/common.h"
#include "gateway/proto/proto.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proto_captures.h"

struct cap {
	const char *file;
	enum http_result want;
	const char *method;
	const char *host;
	enum proto_host_kind kind;
	uint16_t port;
	enum http_form form;
	unsigned minor;
};

static const struct cap caps[] = {
    {"http11-curl.bin", HTTP_OK, "GET", "allowed.test", PROTO_HOST_NAME, 47311, HTTP_FORM_ORIGIN,
     1},
    {"http10-curl.bin", HTTP_ABSENT, "GET", "", PROTO_HOST_NONE, 0, HTTP_FORM_ORIGIN, 0},
    {"http-proxy-abs.bin", HTTP_OK, "GET", "allowed.test", PROTO_HOST_NAME, 0, HTTP_FORM_ABSOLUTE,
     1},
    {"http-connect.bin", HTTP_OK, "CONNECT", "allowed.test", PROTO_HOST_NAME, 443,
     HTTP_FORM_AUTHORITY, 1},
};

static void test_captures(void **state)
{
	struct http_request r;

	(void)state;
	for (size_t i = 0; i < WD_ARRAY_SIZE(caps); i++) {
		size_t len;
		uint8_t *b = capture(caps[i].file, &len);

		assert_int_equal(http_request_parse(b, len, &r), caps[i].want);
		assert_int_equal(r.method.off, 0);
		assert_int_equal(r.method.len, strlen(caps[i].method));
		assert_memory_equal(b, caps[i].method, r.method.len);
		assert_string_equal(r.host, caps[i].host);
		assert_int_equal(r.host_kind, caps[i].kind);
		assert_int_equal(r.port, caps[i].port);
		assert_int_equal(r.form, caps[i].form);
		assert_int_equal(r.minor, caps[i].minor);
		assert_int_equal(r.head_len, len);
		assert_int_equal(r.content_length, -1);
		free(b);
	}
}

static void test_every_prefix(void **state)
{
	struct http_request r;

	(void)state;
	for (size_t i = 0; i < WD_ARRAY_SIZE(caps); i++) {
		size_t len;
		uint8_t *b = capture(caps[i].file, &len);

		for (size_t k = 0; k < len; k++) {
			uint8_t *copy = malloc(k ? k : 1);

			memcpy(copy, b, k);
			if (http_request_parse(copy, k, &r) != HTTP_NEED_MORE)
				fail_msg("%s: prefix %zu: %s", caps[i].file, k, r.why);
			free(copy);
		}
		free(b);
	}
}

/* the body (or the next request) after the head is not part of it */
static void test_head_len(void **state)
{
	static const char req[] =
	    "POST /x HTTP/1.1\r\nHost: a.test\r\nContent-Length: 5\r\n\r\nhello";
	struct http_request r;

	(void)state;
	assert_int_equal(http_request_parse((const uint8_t *)req, sizeof(req) - 1, &r), HTTP_OK);
	assert_int_equal(r.head_len, sizeof(req) - 1 - 5);
	assert_int_equal(r.content_length, 5);
	assert_int_equal(r.target.off, 5);
	assert_int_equal(r.target.len, 2);
}

struct hcase {
	const char *head;
	enum http_result want;
	const char *host;
	uint16_t port;
};

static const struct hcase cases[] = {
    /* good */
    {"GET / HTTP/1.1\r\nHost: Example.COM\r\n\r\n", HTTP_OK, "example.com", 0},
    {"GET / HTTP/1.1\r\nhOsT:example.com:8080 \r\n\r\n", HTTP_OK, "example.com", 8080},
    {"GET / HTTP/1.1\r\nHost: example.com.\r\n\r\n", HTTP_OK, "example.com", 0},
    {"GET / HTTP/1.1\r\nHost: 10.1.2.3:80\r\n\r\n", HTTP_OK, "10.1.2.3", 80},
    {"GET / HTTP/1.1\r\nHost: [::1]:443\r\n\r\n", HTTP_OK, "::1", 443},
    {"GET / HTTP/1.1\r\nHost: [2001:DB8:0::1]\r\n\r\n", HTTP_OK, "2001:db8::1", 0},
    {"GET / HTTP/1.0\r\nHost: a.test\r\n\r\n", HTTP_OK, "a.test", 0},
    {"GET / HTTP/1.0\r\n\r\n", HTTP_ABSENT, "", 0},
    {"GET / HTTP/1.1\r\nHost:\r\n\r\n", HTTP_ABSENT, "", 0},
    {"OPTIONS * HTTP/1.1\r\nHost: a.test\r\n\r\n", HTTP_OK, "a.test", 0},
    {"CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\n\r\n", HTTP_OK, "a.test", 443},
    {"CONNECT a.test:443 HTTP/1.1\r\nHost: a.test\r\n\r\n", HTTP_OK, "a.test", 443},
    {"CONNECT A.Test:8443 HTTP/1.0\r\n\r\n", HTTP_OK, "a.test", 8443},
    {"CONNECT [::1]:443 HTTP/1.1\r\nHost: [::1]:443\r\n\r\n", HTTP_OK, "::1", 443},
    {"CONNECT 192.0.2.1:22 HTTP/1.0\r\n\r\n", HTTP_OK, "192.0.2.1", 22},
    {"GET http://a.test/x HTTP/1.1\r\nHost: a.test:80\r\n\r\n", HTTP_OK, "a.test", 0},
    {"GET HTTPS://A.test:443?q HTTP/1.1\r\nHost: a.test\r\n\r\n", HTTP_OK, "a.test", 443},
    {"GET http://a.test:8080 HTTP/1.1\r\nHost: a.test:8080\r\n\r\n", HTTP_OK, "a.test", 8080},
    {"GET http://a.test/ HTTP/1.0\r\n\r\n", HTTP_OK, "a.test", 0},
    {"GET / HTTP/1.1\r\nHost: a.test\r\nX-Obs: caf\xc3\xa9\r\n\r\n", HTTP_OK, "a.test", 0},
    {"GET / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", HTTP_OK,
     "a.test", 0},
    {"GET / HTTP/1.1\r\nHost: a.test\r\nX-Empty:\r\n\r\n", HTTP_OK, "a.test", 0},
    /* request line */
    {"\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET  / HTTP/1.1\r\nHost: a\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET / HTTP/1.1 \r\nHost: a\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET /\tx HTTP/1.1\r\nHost: a\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET / HTTP/2.0\r\nHost: a\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET / HTTP/1.2\r\nHost: a\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET / http/1.1\r\nHost: a\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET /\r\nHost: a\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"G(T / HTTP/1.1\r\nHost: a\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET * HTTP/1.1\r\nHost: a\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET a.test HTTP/1.1\r\nHost: a.test\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET ftp://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET http:///x HTTP/1.1\r\nHost: a.test\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET http://u:p@a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFG / HTTP/1.1\r\n\r\n", HTTP_MALFORMED, "", 0},
    /* line ends */
    {"GET / HTTP/1.1\nHost: a\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET / HTTP/1.1\r\nHost: a\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET / HTTP/1.1\r\nHost: a\r\n\n", HTTP_MALFORMED, "", 0},
    {"GET / HTTP/1.1\r\nHost: a\rX: y\r\n\r\n", HTTP_MALFORMED, "", 0},
    /* header fields */
    {"GET / HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET / HTTP/1.1\r\n\tHost: a\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET / HTTP/1.1\r\nHost : a\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET / HTTP/1.1\r\nHo(st: a\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET / HTTP/1.1\r\n: a\r\nHost: a\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET / HTTP/1.1\r\nHost a\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET / HTTP/1.1\r\nHost: a\r\nX: a\x01b\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET / HTTP/1.1\r\nHost: a\r\nX: a\x7f\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET / HTTP/1.1\r\nX: y\r\n\r\n", HTTP_MALFORMED, "", 0},
    /* Host values */
    {"GET / HTTP/1.1\r\nHost: a b\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET / HTTP/1.1\r\nHost: a.test:0\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET / HTTP/1.1\r\nHost: a.test:65536\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET / HTTP/1.1\r\nHost: a.test:080\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET / HTTP/1.1\r\nHost: a.test:\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET / HTTP/1.1\r\nHost: a.test:80:80\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET / HTTP/1.1\r\nHost: :80\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET / HTTP/1.1\r\nHost: u@a.test\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET / HTTP/1.1\r\nHost: 1.2.3\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET / HTTP/1.1\r\nHost: 010.0.0.1\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET / HTTP/1.1\r\nHost: 0x7f000001\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET / HTTP/1.1\r\nHost: [::1\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET / HTTP/1.1\r\nHost: [::1]x\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET / HTTP/1.1\r\nHost: [fe80::1%25eth0]\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET / HTTP/1.1\r\nHost: []\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET / HTTP/1.1\r\nHost: ::1\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET / HTTP/1.1\r\nHost: caf\xc3\xa9.test\r\n\r\n", HTTP_MALFORMED, "", 0},
    /* CONNECT */
    {"CONNECT a.test HTTP/1.1\r\nHost: a.test\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"CONNECT a.test:0 HTTP/1.1\r\nHost: a.test\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"CONNECT a.test:99999 HTTP/1.1\r\nHost: a.test\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"CONNECT a.test:443 HTTP/1.1\r\nHost: b.test:443\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:444\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"CONNECT a.test:443 HTTP/1.1\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"CONNECT /x HTTP/1.1\r\nHost: a.test\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"CONNECT http://a.test:443 HTTP/1.1\r\nHost: a.test\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"CONNECT [::1] HTTP/1.1\r\nHost: a.test\r\n\r\n", HTTP_MALFORMED, "", 0},
    /* absolute-form must agree with Host */
    {"GET http://a.test/ HTTP/1.1\r\nHost: b.test\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET http://a.test/ HTTP/1.1\r\nHost: a.test:8080\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET https://a.test/ HTTP/1.1\r\nHost: a.test:80\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET http://a.test/ HTTP/1.1\r\nHost:\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"GET http://a.test/ HTTP/1.1\r\n\r\n", HTTP_MALFORMED, "", 0},
    /* framing headers */
    {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n", HTTP_MALFORMED,
     "", 0},
    {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1,1\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", HTTP_MALFORMED, "", 0},
    {"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
     HTTP_MALFORMED, "", 0},
    {"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", HTTP_MALFORMED, "",
     0},
    {"POST / HTTP/1.0\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", HTTP_MALFORMED, "", 0},
    /* not HTTP at all: refused before the end of the head */
    {"\x16\x03\x01\x02", HTTP_MALFORMED, "", 0},
    {"SSH-2.0-OpenSSH_9.2\r\n", HTTP_MALFORMED, "", 0},
    /* incomplete but valid so far */
    {"GET / HTTP/1.1\r\nHost: a.test\r\n", HTTP_NEED_MORE, "", 0},
    {"GET / HTTP/1.1\r\nHost: a.test\r\n\r", HTTP_NEED_MORE, "", 0},
    {"GET / HT", HTTP_NEED_MORE, "", 0},
    {"GET", HTTP_NEED_MORE, "", 0},
    {"", HTTP_NEED_MORE, "", 0},
};

static void test_table(void **state)
{
	struct http_request r;

	(void)state;
	for (size_t i = 0; i < WD_ARRAY_SIZE(cases); i++) {
		const char *h = cases[i].head;
		size_t n = strlen(h);
		enum http_result got;

		got = http_request_parse((const uint8_t *)h, n, &r);
		if (got != cases[i].want)
			fail_msg("case %zu \"%s\": got %d want %d (%s)", i, h, got, cases[i].want,
				 r.why ? r.why : "");
		if (got == HTTP_MALFORMED)
			assert_non_null(r.why);
		if (got == HTTP_OK || got == HTTP_ABSENT) {
			assert_string_equal(r.host, cases[i].host);
			assert_int_equal(r.port, cases[i].port);
			assert_int_equal(r.head_len, n);
		}
	}
}

/* NUL bytes anywhere are refused at once */
static void test_nul(void **state)
{
	static const uint8_t nul_host[] = "GET / HTTP/1.1\r\nHost: a\0b\r\n\r\n";
	static const uint8_t nul_method[] = "G\0T / HTTP/1.1\r\n";
	static const uint8_t tls[] = {0x16, 0x03, 0x01, 0x02, 0x00, 0x01};
	struct http_request r;

	(void)state;
	assert_int_equal(http_request_parse(nul_host, sizeof(nul_host) - 1, &r), HTTP_MALFORMED);
	assert_int_equal(http_request_parse(nul_host, 26, &r), HTTP_MALFORMED);
	assert_int_equal(http_request_parse(nul_method, sizeof(nul_method) - 1, &r),
			 HTTP_MALFORMED);
	assert_int_equal(http_request_parse(tls, sizeof(tls), &r), HTTP_MALFORMED);
	assert_int_equal(http_request_parse(tls, 1, &r), HTTP_MALFORMED);
}

static void test_limits(void **state)
{
	static uint8_t big[HTTP_HEAD_MAX + 100];
	static const char start[] = "GET / HTTP/1.1\r\nHost: a.test\r\nX-Pad: ";
	struct http_request r;
	size_t n;

	(void)state;
	/* a head of exactly HTTP_HEAD_MAX bytes is fine */
	memcpy(big, start, sizeof(start) - 1);
	n = HTTP_HEAD_MAX - 4;
	memset(big + sizeof(start) - 1, 'p', n - (sizeof(start) - 1));
	memcpy(big + n, "\r\n\r\n", 4);
	assert_int_equal(http_request_parse(big, HTTP_HEAD_MAX, &r), HTTP_OK);
	assert_int_equal(r.head_len, HTTP_HEAD_MAX);
	/* one more byte of padding is not */
	memset(big + sizeof(start) - 1, 'p', n + 1 - (sizeof(start) - 1));
	memcpy(big + n + 1, "\r\n\r\n", 4);
	assert_int_equal(http_request_parse(big, HTTP_HEAD_MAX + 1, &r), HTTP_MALFORMED);
	assert_int_equal(http_request_parse(big, HTTP_HEAD_MAX + 5, &r), HTTP_MALFORMED);
	/* while below the limit it is still NEED_MORE */
	assert_int_equal(http_request_parse(big, HTTP_HEAD_MAX - 1, &r), HTTP_NEED_MORE);
}

static void test_403(void **state)
{
	char out[512];
	int n;
	const char *body;

	(void)state;
	n = http_403_compose(out, sizeof(out), "host evil.test is not in policy p1", "ev-42");
	assert_true(n > 0);
	out[n] = '\0';
	assert_true(!strncmp(out, "HTTP/1.1 403 Forbidden\r\n", 24));
	assert_non_null(strstr(out, "\r\nConnection: close\r\n"));
	assert_non_null(strstr(out, "\r\nX-Warden-Denial: ev-42\r\n"));
	body = strstr(out, "\r\n\r\n") + 4;
	assert_string_equal(body,
			    "warden: denied: host evil.test is not in policy p1 (id ev-42)\n");
	{
		char cl[64];

		snprintf(cl, sizeof(cl), "\r\nContent-Length: %zu\r\n", strlen(body));
		assert_non_null(strstr(out, cl));
	}
	/* header injection through the reason is impossible */
	n = http_403_compose(out, sizeof(out), "a\r\nSet-Cookie: x", "id1");
	assert_true(n > 0);
	out[n] = '\0';
	assert_null(strstr(out, "\r\nSet-Cookie"));
	assert_non_null(strstr(out, "a??Set-Cookie: x"));
	/* bad ids, too long, too small a buffer */
	assert_int_equal(http_403_compose(out, sizeof(out), "r", "a\r\nb"), -EINVAL);
	assert_int_equal(http_403_compose(out, sizeof(out), "r", ""), -EINVAL);
	assert_int_equal(http_403_compose(out, sizeof(out), NULL, "x"), -EINVAL);
	{
		char longr[600];

		memset(longr, 'r', sizeof(longr) - 1);
		longr[sizeof(longr) - 1] = '\0';
		assert_int_equal(http_403_compose(out, sizeof(out), longr, "x"), -EINVAL);
	}
	for (size_t sz = 0; sz < 150; sz++)
		assert_int_equal(http_403_compose(out, sz, "no", "x"), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_captures), cmocka_unit_test(test_every_prefix),
	    cmocka_unit_test(test_head_len), cmocka_unit_test(test_table),
	    cmocka_unit_test(test_nul),	     cmocka_unit_test(test_limits),
	    cmocka_unit_test(test_403),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_proto_httpstream.c - unit tests for the HTTP/1.x request stream framer
 * (gateway/proto/httpstream.c): keep-alive and pipelined requests, Content-Length
 * and chunked bodies whose bytes read like requests, leading CRLFs, what cannot
 * be framed, Upgrade/CONNECT waiting for the server, and the same outcome for
 * every way the bytes can be split into reads. */
#include "common/common.h"
#include "gateway/proto/proto.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/*
 * frame() - feed @in to a fresh stream in reads of @step bytes (0: all at once)
 * and write what was framed into @log: "host;" per request ("-;" for a head
 * without a name), then "END" (everything consumed, nothing pending), "MORE"
 * (bytes left that need more), "HOLD" or "BAD(<why>)". The buffer handed to the
 * framer holds exactly the unconsumed bytes received so far (exact-size copy:
 * ASan sees any overread).
 */
static void frame(const char *in, size_t len, size_t step, struct http_stream *s, char *log,
		  size_t size)
{
	size_t got = step ? 0 : len, used = 0, at = 0;

	memset(s, 0, sizeof(*s));
	log[0] = '\0';
	for (;;) {
		size_t n = got - used;
		uint8_t *copy = malloc(n ? n : 1);
		struct http_step st;
		enum http_stream_result r;

		memcpy(copy, in + used, n);
		r = http_stream_next(s, copy, n, &st);
		free(copy);
		switch (r) {
		case HTTP_STREAM_REQUEST:
			assert_true(st.len > 0 && st.len <= n);
			at += (size_t)snprintf(log + at, size - at, "%s;",
					       st.req.host[0] ? st.req.host : "-");
			used += st.len;
			continue;
		case HTTP_STREAM_PASS:
			assert_true(st.len > 0 && st.len <= n);
			used += st.len;
			continue;
		case HTTP_STREAM_NEED_MORE:
			if (got < len) {
				got = got + step > len ? len : got + step;
				continue;
			}
			snprintf(log + at, size - at, used == len ? "END" : "MORE");
			return;
		case HTTP_STREAM_HOLD:
			snprintf(log + at, size - at, "HOLD");
			return;
		case HTTP_STREAM_MALFORMED:
			assert_non_null(st.why);
			snprintf(log + at, size - at, "BAD(%s)", st.why);
			return;
		}
		fail_msg("unknown result %d", r);
	}
}

struct stream_case {
	const char *name;
	const char *in;
	const char *want;
};

#define GET(host) "GET / HTTP/1.1\r\nHost: " host "\r\n\r\n"
#define REQ_IN_BODY "GET /x HTTP/1.1\r\nHost: other.test\r\n\r\n" /* 37 bytes */

static const struct stream_case cases[] = {
    {"one request", GET("allowed.test"), "allowed.test;END"},
    {"keep-alive / pipelined", GET("allowed.test") GET("other.test"),
     "allowed.test;other.test;END"},
    {"three", GET("a.test") GET("b.test") GET("c.test"), "a.test;b.test;c.test;END"},
    {"HTTP/1.0 without Host", "GET / HTTP/1.0\r\n\r\n" GET("b.test"), "-;b.test;END"},
    {"a head cut short", GET("a.test") "GET / HTTP/1.1\r\nHo", "a.test;MORE"},
    {"leading CRLF", "\r\n" GET("a.test"), "a.test;END"},
    {"CRLFs between requests", GET("a.test") "\r\n\r\n\r\n" GET("b.test"), "a.test;b.test;END"},
    {"a lone CR waits", GET("a.test") "\r", "a.test;MORE"},
    {"bare LF before a head", "\n" GET("a.test"), "BAD(bare CR or LF before a request line)"},
    {"bare CR before a head", "\rX" GET("a.test"), "BAD(bare CR or LF before a request line)"},
    {"Content-Length body that reads like a request",
     "POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 37\r\n\r\n" REQ_IN_BODY GET("b.test"),
     "a.test;b.test;END"},
    {"Content-Length: 0",
     "POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 0\r\n\r\n" GET("b.test"),
     "a.test;b.test;END"},
    {"a body cut short", "POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 50\r\n\r\nabc",
     "a.test;END"},
    {"chunked, extensions and trailer",
     "POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n"
     "25;name=value;x\r\n" REQ_IN_BODY "\r\n"
     "0003 \t;q=\"quoted\"\r\nabc\r\n"
     "0\r\nX-Trailer: GET / HTTP/1.1\r\nHost: other.test\r\n\r\n" GET("b.test"),
     "a.test;b.test;END"},
    {"chunked, upper-case hex",
     "POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n"
     "A\r\n0123456789\r\n0\r\n\r\n" GET("b.test"),
     "a.test;b.test;END"},
    {"chunk size not hex",
     "POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
     "a.test;BAD(chunk size is not hexadecimal)"},
    {"chunk size empty",
     "POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n;x\r\n",
     "a.test;BAD(chunk size is not hexadecimal)"},
    {"chunk size too long",
     "POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n"
     "1000000000000000\r\n",
     "a.test;BAD(chunk size longer than 15 hex digits)"},
    {"junk after the size",
     "POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n"
     "1 x\r\n",
     "a.test;BAD(junk after the chunk size)"},
    {"negative size", "POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n",
     "a.test;BAD(chunk size is not hexadecimal)"},
    {"bare LF after the size",
     "POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n"
     "3\nabc\r\n0\r\n\r\n",
     "a.test;BAD(chunk-size line not ended by CRLF)"},
    {"control byte in an extension",
     "POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n"
     "3;a\x01\r\nabc\r\n",
     "a.test;BAD(control character in a chunk extension)"},
    {"chunk data not followed by CRLF",
     "POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n"
     "3\r\nabcd\r\n",
     "a.test;BAD(chunk data not followed by CRLF)"},
    {"trailer not a field line",
     "POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n"
     "0\r\nnot a field\r\n\r\n",
     "a.test;BAD(trailer line is not a field line)"},
    {"bare LF in the trailer",
     "POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n"
     "0\r\nX: y\n\r\n",
     "a.test;BAD(bare LF in the trailer section)"},
    {"Transfer-Encoding that cannot be framed",
     "POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: gzip\r\n\r\n",
     "BAD(Transfer-Encoding not ending in chunked (or in HTTP/1.0))"},
    {"a second head that is malformed",
     GET("a.test") "GET / HTTP/1.1\r\nHost: b.test\r\nHost: c.test\r\n\r\n",
     "a.test;BAD(duplicate Host)"},
    {"CONNECT with a body",
     "CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\nContent-Length: 3\r\n\r\nabc",
     "BAD(CONNECT request with a body)"},
    {"Upgrade on the first request waits",
     "GET / HTTP/1.1\r\nHost: a.test\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n" GET(
	 "b.test"),
     "a.test;HOLD"},
    {"Upgrade with a body waits after it",
     "POST / HTTP/1.1\r\nHost: a.test\r\nUpgrade: x\r\nContent-Length: 37\r\n\r\n" REQ_IN_BODY GET(
	 "b.test"),
     "a.test;HOLD"},
    {"CONNECT first waits", "CONNECT a.test:80 HTTP/1.1\r\nHost: a.test:80\r\n\r\n" GET("b.test"),
     "a.test;HOLD"},
    {"Upgrade on a later request does not wait",
     GET("a.test") "GET / HTTP/1.1\r\nHost: a.test\r\nUpgrade: websocket\r\n\r\n" GET("b.test"),
     "a.test;a.test;b.test;END"},
    {"binary", "\x16\x03\x01\x02\x00", "BAD(not an HTTP request (no method))"},
};

/* the same log whether the bytes come at once or in reads of any size */
static void test_cases_every_split(void **state)
{
	char whole[512], split[512];
	struct http_stream s;

	(void)state;
	for (size_t i = 0; i < WD_ARRAY_SIZE(cases); i++) {
		size_t len = strlen(cases[i].in);

		frame(cases[i].in, len, 0, &s, whole, sizeof(whole));
		if (strcmp(whole, cases[i].want))
			fail_msg("%s: got '%s', wanted '%s'", cases[i].name, whole, cases[i].want);
		for (size_t step = 1; step <= len; step++) {
			frame(cases[i].in, len, step, &s, split, sizeof(split));
			if (strcmp(split, whole))
				fail_msg("%s, reads of %zu: got '%s', wanted '%s'", cases[i].name,
					 step, split, whole);
		}
	}
}

/* a body moved straight from socket to socket (http_stream_body) */
static void test_body_skip(void **state)
{
	static const char head[] = "POST / HTTP/1.1\r\nHost: a.test\r\nContent-Length: 100\r\n\r\n";
	static const char ch[] =
	    "POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n";
	struct http_stream s = {0};
	struct http_step st;

	(void)state;
	assert_int_equal(http_stream_next(&s, (const uint8_t *)head, sizeof(head) - 1, &st),
			 HTTP_STREAM_REQUEST);
	assert_int_equal(st.len, sizeof(head) - 1);
	assert_int_equal(s.state, HTTP_STREAM_BODY);
	assert_int_equal(s.left, 100);
	http_stream_body(&s, 60);
	assert_int_equal(s.left, 40);
	http_stream_body(&s, 1000); /* capped */
	assert_int_equal(s.state, HTTP_STREAM_HEAD);
	assert_int_equal(s.requests, 1);

	memset(&s, 0, sizeof(s));
	assert_int_equal(http_stream_next(&s, (const uint8_t *)ch, sizeof(ch) - 1, &st),
			 HTTP_STREAM_REQUEST);
	assert_int_equal(http_stream_next(&s, (const uint8_t *)"10000\r\n", 7, &st),
			 HTTP_STREAM_PASS);
	assert_int_equal(st.len, 7);
	assert_int_equal(s.state, HTTP_STREAM_CHUNK_DATA);
	assert_int_equal(s.left, 0x10000);
	http_stream_body(&s, 0x10000);
	assert_int_equal(s.state, HTTP_STREAM_CHUNK_END);
	/* outside a body it does nothing */
	memset(&s, 0, sizeof(s));
	http_stream_body(&s, 5);
	assert_int_equal(s.state, HTTP_STREAM_HEAD);
}

static void test_answered(void **state)
{
	static const char up[] = "GET / HTTP/1.1\r\nHost: a.test\r\nUpgrade: websocket\r\n\r\n";
	static const char co[] = "CONNECT a.test:80 HTTP/1.1\r\nHost: a.test:80\r\n\r\n";
	struct http_stream s = {0};
	struct http_step st;

	(void)state;
	assert_false(http_stream_answered(&s, 101)); /* not waiting */
	assert_int_equal(http_stream_next(&s, (const uint8_t *)up, sizeof(up) - 1, &st),
			 HTTP_STREAM_REQUEST);
	assert_true(st.req.upgrade);
	assert_int_equal(http_stream_next(&s, (const uint8_t *)"x", 1, &st), HTTP_STREAM_HOLD);
	assert_true(http_stream_answered(&s, 101));

	memset(&s, 0, sizeof(s));
	http_stream_next(&s, (const uint8_t *)up, sizeof(up) - 1, &st);
	assert_false(http_stream_answered(&s, 200)); /* declined: HTTP goes on */
	assert_int_equal(s.state, HTTP_STREAM_HEAD);
	assert_int_equal(http_stream_next(&s, (const uint8_t *)up, sizeof(up) - 1, &st),
			 HTTP_STREAM_REQUEST);
	assert_int_equal(s.state, HTTP_STREAM_HEAD); /* the second request does not wait */

	memset(&s, 0, sizeof(s));
	http_stream_next(&s, (const uint8_t *)co, sizeof(co) - 1, &st);
	assert_int_equal(s.state, HTTP_STREAM_WAIT);
	assert_false(http_stream_answered(&s, 101)); /* a CONNECT opens on 2xx only */
	assert_int_equal(s.state, HTTP_STREAM_HEAD);
	memset(&s, 0, sizeof(s));
	http_stream_next(&s, (const uint8_t *)co, sizeof(co) - 1, &st);
	assert_true(http_stream_answered(&s, 200));
	memset(&s, 0, sizeof(s));
	http_stream_next(&s, (const uint8_t *)co, sizeof(co) - 1, &st);
	assert_false(http_stream_answered(&s, 407));
	assert_int_equal(s.state, HTTP_STREAM_HEAD);
}

static void test_response_status(void **state)
{
	static const struct {
		const char *in;
		enum http_result want;
		unsigned status;
	} t[] = {
	    {"HTTP/1.1 101 Switching Protocols\r\n", HTTP_OK, 101},
	    {"HTTP/1.0 200 OK\r\n", HTTP_OK, 200},
	    {"HTTP/1.1 204\r\n", HTTP_OK, 204},
	    {"HTTP/1.1 10", HTTP_NEED_MORE, 0},
	    {"HTTP/1.1 101", HTTP_NEED_MORE, 0},
	    {"HTT", HTTP_NEED_MORE, 0},
	    {"", HTTP_NEED_MORE, 0},
	    {"HTTP/2 200 ", HTTP_MALFORMED, 0},
	    {"http/1.1 101 ", HTTP_MALFORMED, 0},
	    {"HTTP/1.1 1x1 ", HTTP_MALFORMED, 0},
	    {"HTTP/1.1 099 ", HTTP_MALFORMED, 0},
	    {"HTTP/1.1 1011", HTTP_MALFORMED, 0},
	    {"SSH-2.0-x\r\n", HTTP_MALFORMED, 0},
	};

	(void)state;
	for (size_t i = 0; i < WD_ARRAY_SIZE(t); i++) {
		unsigned st = 0;
		size_t n = strlen(t[i].in);
		uint8_t *copy = malloc(n ? n : 1);

		memcpy(copy, t[i].in, n);
		if (http_response_status(copy, n, &st) != t[i].want)
			fail_msg("'%s': wrong outcome", t[i].in);
		if (t[i].want == HTTP_OK)
			assert_int_equal(st, t[i].status);
		free(copy);
	}
}

/* limits: a chunk-size line and a trailer section are bounded */
static void test_limits(void **state)
{
	static const char ch[] =
	    "POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\n\r\n";
	char *line = malloc(HTTP_CHUNK_LINE_MAX + 8), *tr = malloc(HTTP_HEAD_MAX + 64);
	struct http_stream s = {0};
	struct http_step st;

	(void)state;
	assert_int_equal(http_stream_next(&s, (const uint8_t *)ch, sizeof(ch) - 1, &st),
			 HTTP_STREAM_REQUEST);
	memset(line, 'a', HTTP_CHUNK_LINE_MAX + 8);
	memcpy(line, "1;", 2);
	assert_int_equal(http_stream_next(&s, (const uint8_t *)line, HTTP_CHUNK_LINE_MAX - 1, &st),
			 HTTP_STREAM_NEED_MORE);
	assert_int_equal(http_stream_next(&s, (const uint8_t *)line, HTTP_CHUNK_LINE_MAX + 8, &st),
			 HTTP_STREAM_MALFORMED);
	memset(&s, 0, sizeof(s));
	http_stream_next(&s, (const uint8_t *)ch, sizeof(ch) - 1, &st);
	assert_int_equal(http_stream_next(&s, (const uint8_t *)"0\r\n", 3, &st), HTTP_STREAM_PASS);
	/* trailer lines of 100 bytes until the section is over 16 KiB */
	memset(tr, 'a', 98);
	tr[0] = 'X';
	tr[1] = ':';
	tr[98] = '\r';
	tr[99] = '\n';
	{
		enum http_stream_result r = HTTP_STREAM_PASS;
		int n = 0;

		while (r == HTTP_STREAM_PASS && n < 1000) {
			r = http_stream_next(&s, (const uint8_t *)tr, 100, &st);
			n++;
		}
		assert_int_equal(r, HTTP_STREAM_MALFORMED);
		assert_true(n > 150 && n < 170);
	}
	free(line);
	free(tr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cases_every_split),
	    cmocka_unit_test(test_body_skip),
	    cmocka_unit_test(test_answered),
	    cmocka_unit_test(test_response_status),
	    cmocka_unit_test(test_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

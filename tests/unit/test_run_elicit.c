/* test_run_elicit.c - network.ask through the MCP client (run/elicit.c): the elicitation
 * capability recognised in an initialize request (and not elsewhere), the elicitation/create
 * request built (its id, a plain-text message with the run's text escaped, a boolean schema),
 * the notification that withdraws it, and the client's answer read: accept with allow true
 * approves; decline, cancel, allow false, an error deny; another id, another run's, a request or a
 * server's message are not ours. The parts `warden mcp` shares: the capability from a
 * capabilities object, the question's params with another field, the verdict of an answer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "run/elicit.h"

#include <errno.h>
#include <jansson.h>
#include <string.h>

static int cap(const char *s)
{
	return run_elicit_capable(s, strlen(s));
}

static void test_capable(void **state)
{
	(void)state;
	assert_int_equal(cap("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
			     "{\"capabilities\":{\"elicitation\":{}}}}"),
			 1);
	assert_int_equal(cap("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
			     "{\"capabilities\":{\"elicitation\":{\"form\":{},\"url\":{}}}}}"),
			 1);
	/* url mode only: no form to ask a yes/no with */
	assert_int_equal(cap("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
			     "{\"capabilities\":{\"elicitation\":{\"url\":{}}}}}"),
			 0);
	assert_int_equal(cap("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
			     "{\"capabilities\":{\"sampling\":{}}}}"),
			 0);
	assert_int_equal(cap("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
			     "{\"capabilities\":{\"elicitation\":true}}}"),
			 0);
	/* a notification, another method, a tool's argument naming it: not an initialize */
	assert_int_equal(cap("{\"jsonrpc\":\"2.0\",\"method\":\"initialize\",\"params\":"
			     "{\"capabilities\":{\"elicitation\":{}}}}"),
			 -ENOENT);
	assert_int_equal(cap("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":"
			     "{\"name\":\"initialize\",\"arguments\":{\"elicitation\":{}}}}"),
			 -ENOENT);
	assert_int_equal(cap("\"initialize\" not json"), -ENOENT);
	/* a duplicate key could read as two messages: not trusted */
	assert_int_equal(cap("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"method\":"
			     "\"initialize\",\"params\":{\"capabilities\":{\"elicitation\":{}}}}"),
			 -ENOENT);
}

static void test_request(void **state)
{
	struct wd_buf b = WD_BUF_INIT;
	json_error_t err;
	json_t *j, *p, *allow;

	(void)state;
	assert_int_equal(wd_buf_puts(&b, "before\n"), 0);
	assert_int_equal(run_elicit_request(&b, "r-abc", 7, "sh\x1b[2J", "other.test", "80, 443"),
			 0);
	assert_true(!strncmp(b.data, "before\n{", 8));
	assert_int_equal(b.data[b.len - 1], '\n');
	assert_null(memchr(b.data + 7, '\n', b.len - 8)); /* one line */
	j = json_loadb(b.data + 7, b.len - 8, 0, &err);
	assert_non_null(j);
	assert_string_equal(json_string_value(json_object_get(j, "jsonrpc")), "2.0");
	assert_string_equal(json_string_value(json_object_get(j, "id")), "warden-ask-r-abc-7");
	assert_string_equal(json_string_value(json_object_get(j, "method")), "elicitation/create");
	p = json_object_get(j, "params");
	assert_non_null(strstr(json_string_value(json_object_get(p, "message")),
			       "sh\\x1b[2J wants to reach other.test (ports 80, 443)"));
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(p, "requestedSchema"), "type")),
	    "object");
	allow = json_object_get(
	    json_object_get(json_object_get(p, "requestedSchema"), "properties"), "allow");
	assert_string_equal(json_string_value(json_object_get(allow, "type")), "boolean");
	assert_string_equal(
	    json_string_value(json_array_get(
		json_object_get(json_object_get(p, "requestedSchema"), "required"), 0)),
	    "allow");
	json_decref(j);
	wd_buf_free(&b);
}

static void test_cancel(void **state)
{
	struct wd_buf b = WD_BUF_INIT;
	json_error_t err;
	json_t *j, *p;

	(void)state;
	assert_int_equal(run_elicit_cancel(&b, "r-abc", 7, "answered elsewhere"), 0);
	assert_int_equal(b.data[b.len - 1], '\n');
	j = json_loadb(b.data, b.len - 1, 0, &err);
	assert_non_null(j);
	assert_null(json_object_get(j, "id")); /* a notification */
	assert_string_equal(json_string_value(json_object_get(j, "method")),
			    "notifications/cancelled");
	p = json_object_get(j, "params");
	assert_string_equal(json_string_value(json_object_get(p, "requestId")),
			    "warden-ask-r-abc-7");
	assert_string_equal(json_string_value(json_object_get(p, "reason")), "answered elsewhere");
	json_decref(j);
	wd_buf_free(&b);
}

/* @s's verdict, or -1 when it is not ours */
static int ans(const char *s, unsigned *seq)
{
	enum run_elicit_verdict v;

	if (run_elicit_answer(s, strlen(s), "r-abc", seq, &v) != 1)
		return -1;
	return (int)v;
}

static void test_answer(void **state)
{
	unsigned seq = 0;

	(void)state;
	assert_int_equal(ans("{\"jsonrpc\":\"2.0\",\"id\":\"warden-ask-r-abc-7\",\"result\":"
			     "{\"action\":\"accept\",\"content\":{\"allow\":true}}}",
			     &seq),
			 RUN_ELICIT_ALLOW);
	assert_int_equal(seq, 7);
	assert_int_equal(ans("{\"jsonrpc\":\"2.0\",\"id\":\"warden-ask-r-abc-8\",\"result\":"
			     "{\"action\":\"accept\",\"content\":{\"allow\":false}}}",
			     &seq),
			 RUN_ELICIT_DENY);
	assert_int_equal(seq, 8);
	assert_int_equal(ans("{\"jsonrpc\":\"2.0\",\"id\":\"warden-ask-r-abc-9\",\"result\":"
			     "{\"action\":\"accept\",\"content\":{\"allow\":\"true\"}}}",
			     &seq),
			 RUN_ELICIT_DENY);
	assert_int_equal(ans("{\"jsonrpc\":\"2.0\",\"id\":\"warden-ask-r-abc-1\",\"result\":"
			     "{\"action\":\"decline\"}}",
			     &seq),
			 RUN_ELICIT_DENY);
	assert_int_equal(ans("{\"jsonrpc\":\"2.0\",\"id\":\"warden-ask-r-abc-1\",\"result\":"
			     "{\"action\":\"cancel\",\"content\":{\"allow\":true}}}",
			     &seq),
			 RUN_ELICIT_DENY);
	assert_int_equal(ans("{\"jsonrpc\":\"2.0\",\"id\":\"warden-ask-r-abc-2\",\"error\":"
			     "{\"code\":-32601,\"message\":\"no\"}}",
			     &seq),
			 RUN_ELICIT_DENY);
	assert_int_equal(seq, 2);
	/* not ours: another run's, a number, a bad number, a request, no result, no jsonrpc */
	assert_int_equal(ans("{\"jsonrpc\":\"2.0\",\"id\":\"warden-ask-r-abd-2\",\"result\":"
			     "{\"action\":\"accept\",\"content\":{\"allow\":true}}}",
			     &seq),
			 -1);
	assert_int_equal(
	    ans("{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"x\":\"warden-ask-\"}}", &seq), -1);
	assert_int_equal(ans("{\"jsonrpc\":\"2.0\",\"id\":\"warden-ask-r-abc-7x\",\"result\":"
			     "{\"action\":\"accept\",\"content\":{\"allow\":true}}}",
			     &seq),
			 -1);
	assert_int_equal(
	    ans("{\"jsonrpc\":\"2.0\",\"id\":\"warden-ask-r-abc-\",\"result\":{}}", &seq), -1);
	assert_int_equal(ans("{\"jsonrpc\":\"2.0\",\"id\":\"warden-ask-r-abc-7\",\"method\":"
			     "\"tools/call\",\"result\":{}}",
			     &seq),
			 -1);
	assert_int_equal(ans("{\"jsonrpc\":\"2.0\",\"id\":\"warden-ask-r-abc-7\"}", &seq), -1);
	assert_int_equal(ans("{\"id\":\"warden-ask-r-abc-7\",\"result\":{}}", &seq), -1);
	assert_int_equal(
	    ans("[{\"jsonrpc\":\"2.0\",\"id\":\"warden-ask-r-abc-7\",\"result\":{}}]", &seq), -1);
	assert_int_equal(ans("warden-ask- not json", &seq), -1);
}

static void test_shared(void **state)
{
	json_t *p, *f, *caps, *res, *err;

	(void)state;
	caps = json_pack("{s:{}}", "elicitation");
	assert_true(run_elicit_caps(caps));
	json_decref(caps);
	caps = json_pack("{s:{s:{}}}", "elicitation", "form");
	assert_true(run_elicit_caps(caps));
	json_decref(caps);
	caps = json_pack("{s:{s:{}}}", "elicitation", "url");
	assert_false(run_elicit_caps(caps));
	json_decref(caps);
	caps = json_pack("{s:{s:{}}}", "elicitation", "other");
	assert_false(run_elicit_caps(caps));
	json_decref(caps);
	assert_false(run_elicit_caps(NULL));

	/* set_egress_allowlist's question: its message and its field, network.ask's shape */
	p = run_elicit_params("add a.test?", "approve", "Allow all", "true allows a.test");
	assert_non_null(p);
	assert_string_equal(json_string_value(json_object_get(p, "message")), "add a.test?");
	f = json_object_get(json_object_get(json_object_get(p, "requestedSchema"), "properties"),
			    "approve");
	assert_string_equal(json_string_value(json_object_get(f, "type")), "boolean");
	assert_true(json_is_false(json_object_get(f, "default")));
	assert_string_equal(
	    json_string_value(json_array_get(
		json_object_get(json_object_get(p, "requestedSchema"), "required"), 0)),
	    "approve");
	json_decref(p);

	/* positive control beside each denial: the same answer with the field true allows */
	res = json_pack("{s:s, s:{s:b}}", "action", "accept", "content", "approve", 1);
	assert_int_equal(run_elicit_verdict_of(res, NULL, "approve"), RUN_ELICIT_ALLOW);
	assert_int_equal(run_elicit_verdict_of(res, NULL, "allow"), RUN_ELICIT_DENY);
	err = json_pack("{s:i, s:s}", "code", -32603, "message", "x");
	assert_int_equal(run_elicit_verdict_of(res, err, "approve"), RUN_ELICIT_DENY);
	json_decref(err);
	json_decref(res);
	res = json_pack("{s:s, s:{s:b}}", "action", "decline", "content", "approve", 1);
	assert_int_equal(run_elicit_verdict_of(res, NULL, "approve"), RUN_ELICIT_DENY);
	json_decref(res);
	res = json_pack("{s:s, s:{s:s}}", "action", "accept", "content", "approve", "true");
	assert_int_equal(run_elicit_verdict_of(res, NULL, "approve"), RUN_ELICIT_DENY);
	json_decref(res);
	assert_int_equal(run_elicit_verdict_of(NULL, NULL, "approve"), RUN_ELICIT_DENY);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_capable), cmocka_unit_test(test_request),
	    cmocka_unit_test(test_cancel),  cmocka_unit_test(test_answer),
	    cmocka_unit_test(test_shared),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

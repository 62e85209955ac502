/* test_launcher_mcp.c - unit tests for the MCP tool-call tracker of `warden run`'s stdio relay
 * (launcher/toolcalls.c): tools/call in flight until its response (result or error) or the
 * client's notifications/cancelled; ids compared as JSON (7 and "7" apart); batches; lines in
 * pieces and many lines in one piece (the feed stops after a line that changed the calls);
 * requests and responses that change nothing; the server's own requests; blank lines; what
 * turns attribution off (not JSON, not an object or batch, a line over the cap, too many calls
 * in flight) without an error; the arguments' hash independent of key order; run.exit's
 * counts per tool; the tools of tools/list answers collected for a trace (only answers to the
 * client's tools/list, by id; the last listing of a name wins). */
#include "run/toolcalls.h"

#include <jansson.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* feed all of @s in direction @d; return how many times the calls changed */
static int feed(struct run_toolcalls *t, enum mcp_dir d, const char *s)
{
	size_t len = strlen(s), used = 0;
	int changes = 0;
	bool ch;

	while (used < len) {
		size_t n = run_toolcalls_feed(t, d, s + used, len - used, &ch);

		assert_true(n >= 1 && n <= len - used);
		used += n;
		changes += ch;
	}
	return changes;
}

static void test_call_and_response(void **state)
{
	struct run_toolcalls t;
	json_t *calls;

	(void)state;
	run_toolcalls_init(&t);
	assert_int_equal(feed(&t, MCP_C2S,
			      "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\","
			      "\"params\":{}}\n"),
			 0);
	assert_int_equal(feed(&t, MCP_S2C, "{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}\n"), 0);
	assert_int_equal(feed(&t, MCP_C2S,
			      "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
			      "\"params\":{\"name\":\"fetch_url\",\"arguments\":"
			      "{\"url\":\"http://a.test/\"}}}\n"),
			 1);
	assert_int_equal(t.ncalls, 1);
	assert_string_equal(t.calls[0].tool, "fetch_url");
	assert_string_equal(t.calls[0].key, "7");
	calls = run_toolcalls_calls_json(&t);
	assert_int_equal(json_array_size(calls), 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(calls, 0), "call_id")),
			 7);
	assert_int_equal(
	    strlen(json_string_value(json_object_get(json_array_get(calls, 0), "args_sha256"))),
	    64);
	json_decref(calls);
	/* the string "7" is another id: nothing ends */
	assert_int_equal(feed(&t, MCP_S2C, "{\"jsonrpc\":\"2.0\",\"id\":\"7\",\"result\":{}}\n"),
			 0);
	assert_int_equal(t.ncalls, 1);
	/* the client's own response to a server request with id 7 ends nothing either */
	assert_int_equal(feed(&t, MCP_C2S, "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n"), 0);
	/* a server request that happens to use id 7 ends nothing */
	assert_int_equal(feed(&t, MCP_S2C, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}\n"),
			 0);
	assert_int_equal(t.ncalls, 1);
	/* the error response ends it */
	assert_int_equal(feed(&t, MCP_S2C,
			      "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-1,"
			      "\"message\":\"x\"}}\n"),
			 1);
	assert_int_equal(t.ncalls, 0);
	assert_false(t.off);
	assert_int_equal(t.total, 1);
	run_toolcalls_free(&t);
}

static void test_cancel_batch_and_ids(void **state)
{
	struct run_toolcalls t;

	(void)state;
	run_toolcalls_init(&t);
	/* a batch of two calls is one line: one change */
	assert_int_equal(feed(&t, MCP_C2S,
			      "[{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"tools/call\","
			      "\"params\":{\"name\":\"x\"}},{\"jsonrpc\":\"2.0\",\"id\":2,"
			      "\"method\":\"tools/call\",\"params\":{\"name\":\"y\"}}]\n"),
			 1);
	assert_int_equal(t.ncalls, 2);
	assert_string_equal(t.calls[0].key, "\"a\"");
	assert_string_equal(t.calls[1].tool, "y");
	/* the client cancels "a" */
	assert_int_equal(feed(&t, MCP_C2S,
			      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
			      "\"params\":{\"requestId\":\"a\",\"reason\":\"x\"}}\n"),
			 1);
	assert_int_equal(t.ncalls, 1);
	assert_string_equal(t.calls[0].tool, "y");
	/* a cancel of an unknown id, a call without id (a notification): no change */
	assert_int_equal(feed(&t, MCP_C2S,
			      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
			      "\"params\":{\"requestId\":99}}\n"
			      "{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":{}}\n"),
			 0);
	/* a batch of responses */
	assert_int_equal(feed(&t, MCP_S2C, "[{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}]\n"), 1);
	assert_int_equal(t.ncalls, 0);
	/* the same id again while in flight: the newer one replaces it */
	feed(&t, MCP_C2S, "{\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"p\"}}\n");
	feed(&t, MCP_C2S, "{\"id\":5,\"method\":\"tools/call\",\"params\":{\"name\":\"q\"}}\n");
	assert_int_equal(t.ncalls, 1);
	assert_string_equal(t.calls[0].tool, "q");
	assert_false(t.off);
	run_toolcalls_free(&t);
}

/* a line in pieces changes the calls at its newline; two lines in one piece are consumed one
 * at a time, so the caller can tell the gateway between them */
static void test_pieces(void **state)
{
	static const char two[] =
	    "{\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"a\"}}\n"
	    "{\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"b\"}}\n";
	struct run_toolcalls t;
	size_t half = 20, n;
	bool ch;

	(void)state;
	run_toolcalls_init(&t);
	n = run_toolcalls_feed(&t, MCP_C2S, two, half, &ch);
	assert_int_equal(n, half);
	assert_false(ch);
	n = run_toolcalls_feed(&t, MCP_C2S, two + half, sizeof(two) - 1 - half, &ch);
	assert_true(ch);
	assert_int_equal(half + n, strchr(two, '\n') - two + 1);
	assert_int_equal(t.ncalls, 1);
	n = run_toolcalls_feed(&t, MCP_C2S, strchr(two, '\n') + 1, strlen(strchr(two, '\n') + 1),
			       &ch);
	assert_true(ch);
	assert_int_equal(n, strlen(strchr(two, '\n') + 1));
	assert_int_equal(t.ncalls, 2);
	/* byte by byte */
	for (const char *p = "{\"id\":1,\"result\":{}}\n"; *p; p++) {
		run_toolcalls_feed(&t, MCP_S2C, p, 1, &ch);
		assert_int_equal(ch, *p == '\n');
	}
	assert_int_equal(t.ncalls, 1);
	/* blank lines and CRLF are fine */
	assert_int_equal(feed(&t, MCP_S2C, "\n \r\n{\"id\":2,\"result\":{}}\r\n"), 1);
	assert_int_equal(t.ncalls, 0);
	assert_false(t.off);
	run_toolcalls_free(&t);
}

static void test_off(void **state)
{
	struct run_toolcalls t;
	char *big;
	size_t n;
	bool ch;

	(void)state;
	/* not JSON: off, the calls in flight end (a change), the reason kept */
	run_toolcalls_init(&t);
	feed(&t, MCP_C2S, "{\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"a\"}}\n");
	assert_int_equal(feed(&t, MCP_S2C, "hello\n"), 1);
	assert_true(t.off);
	assert_int_equal(t.ncalls, 0);
	assert_non_null(strstr(t.why, "line 1 from the server is not JSON"));
	/* once off, bytes are consumed whole and nothing changes */
	assert_int_equal(
	    run_toolcalls_feed(&t, MCP_C2S, "{\"id\":2,\"method\":\"tools/call\"}\n", 33, &ch), 33);
	assert_false(ch);
	assert_int_equal(t.ncalls, 0);
	run_toolcalls_free(&t);
	/* JSON that is no message */
	run_toolcalls_init(&t);
	assert_int_equal(feed(&t, MCP_C2S, "42\n"), 0);
	assert_true(t.off);
	assert_non_null(strstr(t.why, "neither an object nor a batch"));
	run_toolcalls_free(&t);
	/* a plain program (its first line is text) did not look like MCP: the relay says
	 * nothing of attribution; one that spoke JSON-RPC first did (issue 27) */
	run_toolcalls_init(&t);
	assert_int_equal(feed(&t, MCP_S2C, "total 0\n"), 0);
	assert_true(t.off);
	assert_false(t.looked_mcp);
	run_toolcalls_free(&t);
	run_toolcalls_init(&t);
	feed(&t, MCP_C2S, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\"}\n");
	feed(&t, MCP_S2C, "not json\n");
	assert_true(t.off);
	assert_true(t.looked_mcp);
	run_toolcalls_free(&t);
	run_toolcalls_init(&t);
	feed(&t, MCP_C2S, "[{\"jsonrpc\":\"2.0\",\"method\":\"n\"}]\n");
	assert_true(t.looked_mcp);
	assert_false(t.off);
	run_toolcalls_free(&t);
	/* a line over the cap, fed in pieces */
	run_toolcalls_init(&t);
	big = malloc(1 << 20);
	assert_non_null(big);
	memset(big, ' ', 1 << 20);
	for (n = 0; !t.off && n < 8; n++)
		run_toolcalls_feed(&t, MCP_C2S, big, 1 << 20, &ch);
	assert_true(t.off);
	assert_int_equal(n, 5);
	assert_non_null(strstr(t.why, "longer than 4 MiB"));
	free(big);
	run_toolcalls_free(&t);
	/* too many calls in flight */
	run_toolcalls_init(&t);
	for (int i = 0; i <= RUN_TOOLCALLS_CALLS; i++) {
		char line[128];

		snprintf(line, sizeof(line),
			 "{\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"t\"}}\n", i);
		feed(&t, MCP_C2S, line);
	}
	assert_true(t.off);
	assert_int_equal(t.ncalls, 0);
	assert_non_null(strstr(t.why, "more than 64"));
	run_toolcalls_free(&t);
}

static void test_hash_and_exit(void **state)
{
	struct run_toolcalls t;
	json_t *ex, *den;

	(void)state;
	run_toolcalls_init(&t);
	feed(&t, MCP_C2S,
	     "{\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"a\","
	     "\"arguments\":{\"x\":1,\"y\":[2,3]}}}\n");
	feed(&t, MCP_C2S,
	     "{\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"a\","
	     "\"arguments\":{\"y\":[2,3],\"x\":1}}}\n");
	feed(&t, MCP_C2S,
	     "{\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"a\","
	     "\"arguments\":{\"y\":[3,2],\"x\":1}}}\n");
	feed(&t, MCP_C2S, "{\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"b\"}}\n");
	assert_int_equal(t.ncalls, 4);
	/* the same arguments in another key order hash the same; other arguments do not */
	assert_string_equal(t.calls[0].args_sha256, t.calls[1].args_sha256);
	assert_string_not_equal(t.calls[0].args_sha256, t.calls[2].args_sha256);
	den = json_pack("{s:i}", "a", 2);
	ex = run_toolcalls_exit_json(&t, den);
	assert_int_equal(json_integer_value(json_object_get(ex, "calls_total")), 4);
	assert_int_equal(json_integer_value(json_object_get(
			     json_object_get(json_object_get(ex, "tools"), "a"), "calls")),
			 3);
	assert_int_equal(json_integer_value(json_object_get(
			     json_object_get(json_object_get(ex, "tools"), "a"), "denials")),
			 2);
	assert_int_equal(json_integer_value(json_object_get(
			     json_object_get(json_object_get(ex, "tools"), "b"), "denials")),
			 0);
	assert_null(json_object_get(ex, "attribution"));
	json_decref(ex);
	json_decref(den);
	run_toolcalls_stop(&t, "because");
	ex = run_toolcalls_exit_json(&t, NULL);
	assert_string_equal(json_string_value(json_object_get(ex, "attribution")), "off: because");
	json_decref(ex);
	run_toolcalls_free(&t);
}

/* `warden trace` collects the tools the server lists in answers to the client's tools/list */
static void test_listed(void **state)
{
	struct run_toolcalls t;
	json_t *def;

	(void)state;
	run_toolcalls_init(&t);
	t.listed = json_object();
	/* an answer to nothing asked, and a tools/list answer before the client asked: ignored */
	feed(&t, MCP_S2C,
	     "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"tools\":[{\"name\":\"sneak\"}]}}\n");
	assert_int_equal(json_object_size(t.listed), 0);
	feed(&t, MCP_C2S, "{\"jsonrpc\":\"2.0\",\"id\":\"5\",\"method\":\"tools/list\"}\n");
	/* id 5 is not id "5" */
	feed(&t, MCP_S2C,
	     "{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"tools\":[{\"name\":\"sneak\"}]}}\n");
	assert_int_equal(json_object_size(t.listed), 0);
	feed(&t, MCP_S2C,
	     "{\"jsonrpc\":\"2.0\",\"id\":\"5\",\"result\":{\"tools\":[{\"name\":\"echo\","
	     "\"description\":\"d1\",\"title\":\"not pinned\",\"inputSchema\":{\"type\":"
	     "\"object\"}},{\"description\":\"no name\"},{\"name\":\"add\"}],"
	     "\"nextCursor\":\"c\"}}\n");
	assert_int_equal(json_object_size(t.listed), 2);
	def = json_object_get(t.listed, "echo");
	assert_string_equal(json_string_value(json_object_get(def, "description")), "d1");
	assert_null(json_object_get(def, "title"));
	/* answered once: the same id again lists nothing */
	feed(&t, MCP_S2C,
	     "{\"jsonrpc\":\"2.0\",\"id\":\"5\",\"result\":{\"tools\":[{\"name\":\"x\"}]}}\n");
	assert_int_equal(json_object_size(t.listed), 2);
	/* a later listing (in a batch) changes a definition: the last one is kept */
	feed(&t, MCP_C2S, "[{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/list\"}]\n");
	feed(&t, MCP_S2C,
	     "[{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{\"tools\":[{\"name\":\"echo\","
	     "\"description\":\"d2\"}]}}]\n");
	def = json_object_get(t.listed, "echo");
	assert_string_equal(json_string_value(json_object_get(def, "description")), "d2");
	assert_int_equal(json_object_size(t.listed), 2);
	/* a description that is no string, or a definition over 64 KiB: left out (a trace could
	 * not read it back; a run then hides the tool as not pinned) */
	{
		char *big = malloc(70000 + 200);

		assert_non_null(big);
		strcpy(big,
		       "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"tools\":[{\"name\":"
		       "\"nulldesc\",\"description\":null},{\"name\":\"huge\",\"description\":\"");
		size_t at = strlen(big);

		memset(big + at, 'x', 70000);
		strcpy(big + at + 70000, "\"}]}}\n");
		feed(&t, MCP_C2S, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\"}\n");
		feed(&t, MCP_S2C, big);
		free(big);
	}
	assert_null(json_object_get(t.listed, "nulldesc"));
	assert_null(json_object_get(t.listed, "huge"));
	assert_int_equal(json_object_size(t.listed), 2);
	run_toolcalls_free(&t);
	json_decref(t.listed);
	/* not asked to collect: nothing is */
	run_toolcalls_init(&t);
	feed(&t, MCP_C2S, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}\n");
	feed(&t, MCP_S2C,
	     "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[{\"name\":\"x\"}]}}\n");
	assert_null(t.listed);
	assert_int_equal(t.nlist, 0);
	run_toolcalls_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_call_and_response),
	    cmocka_unit_test(test_cancel_batch_and_ids),
	    cmocka_unit_test(test_pieces),
	    cmocka_unit_test(test_off),
	    cmocka_unit_test(test_hash_and_exit),
	    cmocka_unit_test(test_listed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

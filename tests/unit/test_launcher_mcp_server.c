/* test_launcher_mcp_server.c - `warden mcp`'s protocol layer (launcher/mcp_proto.c) driven line by
 * line with recording callbacks: initialize and the revisions, ping, tools/list and the
 * schemas made from the argument tables, tools/call hand-off and bad arguments, each JSON-RPC
 * error code, notifications never answered, cancellations and answers handed on; and the
 * approval store (launcher/approval.c): modes, ids, decisions, links refused. */
#include "run/approval.h"
#include "mcp/proto.h"

#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

struct rec {
	json_t *sent[16];
	size_t nsent;
	const struct mcp_tool *called;
	json_t *call_id;
	json_t *call_args;
	json_t *call_progress;
	json_t *cancelled;
	json_t *answered;
};

static int rec_send(void *ctx, json_t *msg)
{
	struct rec *r = ctx;

	assert_true(r->nsent < 16);
	r->sent[r->nsent++] = json_incref(msg);
	return 0;
}

static void rec_call(void *ctx, const struct mcp_tool *tool, json_t *id, json_t *args,
		     json_t *progress)
{
	struct rec *r = ctx;

	r->called = tool;
	r->call_id = json_incref(id);
	r->call_args = json_incref(args);
	r->call_progress = json_incref(progress);
}

static void rec_cancelled(void *ctx, json_t *id, const char *reason)
{
	struct rec *r = ctx;

	(void)reason;
	r->cancelled = json_incref(id);
}

static void rec_answer(void *ctx, json_t *id, const json_t *result, const json_t *error)
{
	struct rec *r = ctx;

	(void)result;
	(void)error;
	r->answered = json_incref(id);
}

static void rec_clear(struct rec *r)
{
	for (size_t i = 0; i < r->nsent; i++)
		json_decref(r->sent[i]);
	json_decref(r->call_id);
	json_decref(r->call_args);
	json_decref(r->call_progress);
	json_decref(r->cancelled);
	json_decref(r->answered);
	memset(r, 0, sizeof(*r));
}

static const struct mcp_arg echo_args[] = {
    {"text", MCP_ARG_STRING, true, 8, 0, 0, "what to echo"},
    {"times", MCP_ARG_INT, false, 3, 1, 0, NULL},
    {"loud", MCP_ARG_BOOL, false, 0, 0, 0, NULL},
    {"words", MCP_ARG_STRING_OR_STRINGS, false, 2, 0, 4, NULL},
};
static const struct mcp_tool tools[] = {
    {"echo", "Echo", "echoes", echo_args, 4, "{\"type\":\"object\"}"},
    {"none", "None", "takes nothing", NULL, 0, NULL},
};

static struct rec R;
static struct mcp_session S;

static void session(bool init)
{
	struct mcp_ops ops = {&R, rec_send, rec_call, rec_cancelled, rec_answer};

	rec_clear(&R);
	mcp_session_init(&S, &ops, tools, 2, "warden", "9");
	if (init) {
		const char *l =
		    "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
		    "{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{}}}";

		assert_int_equal(mcp_handle_line(&S, l, strlen(l)), 0);
		rec_clear(&R);
	}
}

static void feed(const char *line)
{
	assert_int_equal(mcp_handle_line(&S, line, strlen(line)), 0);
}

/* the only message sent is an error with @code and id @id (JSON text) */
static void want_error(int code, const char *id)
{
	json_t *want = json_loads(id, JSON_DECODE_ANY, NULL);

	assert_int_equal(R.nsent, 1);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(R.sent[0], "error"), "code")), code);
	assert_true(json_equal(json_object_get(R.sent[0], "id"), want));
	assert_string_equal(json_string_value(json_object_get(R.sent[0], "jsonrpc")), "2.0");
	json_decref(want);
}

static void test_initialize(void **state)
{
	json_t *res;

	(void)state;
	session(false);
	feed("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion"
	     "\":\"2025-03-26\",\"capabilities\":{\"elicitation\":{}},\"clientInfo\":{}}}");
	assert_int_equal(R.nsent, 1);
	res = json_object_get(R.sent[0], "result");
	assert_string_equal(json_string_value(json_object_get(res, "protocolVersion")),
			    "2025-03-26");
	assert_non_null(json_object_get(json_object_get(res, "capabilities"), "tools"));
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(res, "serverInfo"), "name")),
	    "warden");
	assert_true(S.initialized);
	assert_true(S.elicitation);
	/* the newest for one it does not know; no elicitation without the capability */
	session(false);
	feed("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion"
	     "\":\"2099-01-01\",\"capabilities\":{}}}");
	res = json_object_get(R.sent[0], "result");
	assert_string_equal(json_string_value(json_object_get(res, "protocolVersion")),
			    mcp_versions[0]);
	assert_string_equal(mcp_versions[0], "2025-11-25");
	assert_string_equal(mcp_versions[1], "2025-06-18");
	assert_false(S.elicitation);
	/* url-only elicitation is not form mode */
	session(false);
	feed("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion"
	     "\":\"2025-11-25\",\"capabilities\":{\"elicitation\":{\"url\":{}}}}}");
	assert_false(S.elicitation);
	/* recognised as network.ask does (run_elicit_caps()): an object naming neither form
	 * nor nothing is not form mode */
	session(false);
	feed("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion"
	     "\":\"2025-11-25\",\"capabilities\":{\"elicitation\":{\"other\":{}}}}}");
	assert_false(S.elicitation);
	session(false);
	feed("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion"
	     "\":\"2025-11-25\",\"capabilities\":{\"elicitation\":{\"form\":{},\"url\":{}}}}}");
	assert_true(S.elicitation);
	session(false);
	feed("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}");
	want_error(MCP_ERR_PARAMS, "1");
	assert_false(S.initialized);
	rec_clear(&R);
}

static void test_error_codes(void **state)
{
	static const struct {
		const char *line;
		int code;
		const char *id;
	} cases[] = {
	    {"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"", MCP_ERR_PARSE, "null"},
	    {"not json", MCP_ERR_PARSE, "null"},
	    {"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]", MCP_ERR_INVALID_REQUEST,
	     "null"},
	    {"42", MCP_ERR_INVALID_REQUEST, "null"},
	    {"{\"id\":2,\"method\":\"ping\"}", MCP_ERR_INVALID_REQUEST, "2"},
	    {"{\"jsonrpc\":\"1.0\",\"id\":3,\"method\":\"ping\"}", MCP_ERR_INVALID_REQUEST, "3"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}", MCP_ERR_INVALID_REQUEST,
	     "null"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", MCP_ERR_INVALID_REQUEST,
	     "null"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":7}", MCP_ERR_INVALID_REQUEST, "4"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":5}", MCP_ERR_INVALID_REQUEST, "5"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\",\"params\":1}",
	     MCP_ERR_INVALID_REQUEST, "6"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\",\"params\":[]}", MCP_ERR_PARAMS,
	     "7"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"resources/list\"}", MCP_ERR_METHOD,
	     "\"x\""},
	    {"{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\"}", MCP_ERR_PARAMS, "8"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/"
	     "call\",\"params\":{\"name\":\"nope\"}}",
	     MCP_ERR_PARAMS, "9"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"tools/"
	     "call\",\"params\":{\"name\":\"echo\","
	     "\"arguments\":\"text\"}}",
	     MCP_ERR_PARAMS, "10"},
	    {"{\"jsonrpc\":\"2.0\",\"id\":11,\"id\":12,\"method\":\"ping\"}", MCP_ERR_PARSE,
	     "null"},
	    /* jansson refuses NUL in strings: no argument ever holds one */
	    {"{\"jsonrpc\":\"2.0\",\"id\":13,\"method\":\"ping\",\"params\":{\"a\":\"\\u0000\"}}",
	     MCP_ERR_PARSE, "null"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		session(true);
		feed(cases[i].line);
		want_error(cases[i].code, cases[i].id);
		assert_null(R.called);
	}
	/* before initialize: only initialize and ping */
	session(false);
	feed("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
	want_error(MCP_ERR_INVALID_REQUEST, "1");
	session(false);
	feed("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
	assert_int_equal(R.nsent, 1);
	assert_int_equal(json_object_size(json_object_get(R.sent[0], "result")), 0);
	rec_clear(&R);
}

static void test_notifications(void **state)
{
	(void)state;
	session(true);
	feed("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
	feed("{\"jsonrpc\":\"2.0\",\"method\":\"no/such\",\"params\":{}}");
	feed("{\"jsonrpc\":\"1.0\",\"method\":\"notifications/initialized\"}");
	feed("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":7}");
	feed("   ");
	feed("");
	assert_int_equal(R.nsent, 0);
	assert_null(R.cancelled);
	feed(
	    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":"
	    "\"r1\",\"reason\":\"user\"}}");
	assert_int_equal(R.nsent, 0);
	assert_string_equal(json_string_value(R.cancelled), "r1");
	/* an answer to our request goes to ops->answer, unanswered */
	feed("{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"action\":\"accept\"}}");
	assert_int_equal(R.nsent, 0);
	assert_int_equal(json_integer_value(R.answered), 5);
	/* with both result and error it is no answer */
	feed("{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{},\"error\":{}}");
	want_error(MCP_ERR_INVALID_REQUEST, "6");
	rec_clear(&R);
}

static void test_tools_list(void **state)
{
	json_t *list, *echo, *props, *words;

	(void)state;
	session(true);
	feed("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
	assert_int_equal(R.nsent, 1);
	list = json_object_get(json_object_get(R.sent[0], "result"), "tools");
	assert_int_equal(json_array_size(list), 2);
	echo = json_array_get(list, 0);
	assert_string_equal(json_string_value(json_object_get(echo, "name")), "echo");
	assert_non_null(json_object_get(echo, "outputSchema"));
	assert_null(json_object_get(json_array_get(list, 1), "outputSchema"));
	props = json_object_get(json_object_get(echo, "inputSchema"), "properties");
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(props, "text"), "type")), "string");
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(props, "text"), "maxLength")), 8);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(props, "times"), "maximum")), 3);
	words = json_object_get(props, "words");
	assert_int_equal(json_array_size(json_object_get(words, "anyOf")), 2);
	assert_true(json_is_false(
	    json_object_get(json_object_get(echo, "inputSchema"), "additionalProperties")));
	assert_string_equal(
	    json_string_value(json_array_get(
		json_object_get(json_object_get(echo, "inputSchema"), "required"), 0)),
	    "text");
	rec_clear(&R);
}

static void test_tools_call(void **state)
{
	static const struct {
		const char *args;
		const char *why;
	} bad[] = {
	    {"{}", "`text` is required"},
	    {"{\"text\":5}", "`text`: expected a string"},
	    {"{\"text\":\"123456789\"}", "longer than 8 bytes"},
	    {"{\"text\":\"a\",\"evil\":1}", "unknown argument `evil`"},
	    {"{\"text\":\"a\",\"times\":4}", "out of range"},
	    {"{\"text\":\"a\",\"times\":\"2\"}", "expected an integer"},
	    {"{\"text\":\"a\",\"loud\":1}", "expected true or false"},
	    {"{\"text\":\"a\",\"words\":[]}", "an empty list"},
	    {"{\"text\":\"a\",\"words\":[\"a\",\"b\",\"c\"]}", "at most 2 items"},
	    {"{\"text\":\"a\",\"words\":[\"abcde\"]}", "longer than 4 bytes"},
	    {"{\"text\":\"a\",\"words\":[1]}", "expected a string"},
	};
	char line[512];
	json_t *res;

	(void)state;
	session(true);
	feed("{\"jsonrpc\":\"2.0\",\"id\":\"c1\",\"method\":\"tools/call\",\"params\":{\"name\":"
	     "\"echo\",\"arguments\":{\"text\":\"hi\",\"words\":\"one\"},\"_meta\":{"
	     "\"progressToken\":7}}}");
	assert_int_equal(R.nsent, 0);
	assert_ptr_equal(R.called, &tools[0]);
	assert_string_equal(json_string_value(R.call_id), "c1");
	assert_int_equal(json_integer_value(R.call_progress), 7);
	/* the tool answers later */
	assert_int_equal(mcp_reply(&S, R.call_id, mcp_tool_result(json_pack("{s:i}", "n", 1))), 0);
	res = json_object_get(R.sent[0], "result");
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(res, "structuredContent"), "n")), 1);
	assert_string_equal(json_string_value(json_object_get(
				json_array_get(json_object_get(res, "content"), 0), "text")),
			    "{\"n\":1}");
	assert_true(json_is_false(json_object_get(res, "isError")));
	/* no arguments at all for a tool that takes none */
	session(true);
	feed("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/"
	     "call\",\"params\":{\"name\":\"none\"}}");
	assert_ptr_equal(R.called, &tools[1]);
	assert_int_equal(json_object_size(R.call_args), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *text;

		session(true);
		snprintf(
		    line, sizeof(line),
		    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":"
		    "\"echo\",\"arguments\":%s}}",
		    bad[i].args);
		feed(line);
		assert_null(R.called);
		assert_int_equal(R.nsent, 1);
		res = json_object_get(R.sent[0], "result");
		assert_true(json_is_true(json_object_get(res, "isError")));
		text = json_string_value(
		    json_object_get(json_array_get(json_object_get(res, "content"), 0), "text"));
		if (!strstr(text, bad[i].why))
			fail_msg("%s: got '%s', wanted '%s'", bad[i].args, text, bad[i].why);
	}
	rec_clear(&R);
}

static void test_requests_out(void **state)
{
	long long a, b;

	(void)state;
	session(true);
	assert_int_equal(mcp_request(&S, "elicitation/create", json_object(), &a), 0);
	assert_int_equal(mcp_request(&S, "elicitation/create", json_object(), &b), 0);
	assert_true(b > a);
	assert_int_equal(json_integer_value(json_object_get(R.sent[1], "id")), b);
	assert_int_equal(mcp_notify(&S, "notifications/progress", NULL), 0);
	assert_null(json_object_get(R.sent[2], "id"));
	assert_null(json_object_get(R.sent[2], "params"));
	rec_clear(&R);
}

/* ------------------------------------------------------------ the approval store */

static char dir[256];

static int count(const struct run_approval_req *req, void *arg)
{
	(void)req;
	(*(int *)arg)++;
	return 0;
}

static void test_approval_store(void **state)
{
	struct run_approval_req a = {0}, b = {0}, c = {0}, got;
	char path[512], link[600];
	struct wd_err err;
	struct stat st;
	int fd = -1, fd2 = -1, n = 0;

	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/wd-test-approval-%d", (int)getpid());
	snprintf(path, sizeof(path), "%s/state/approvals", dir);
	wd_err_clear(&err);
	assert_int_equal(run_approval_open(path, &fd, &err), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	snprintf(a.name, sizeof(a.name), "example.test");
	a.server_pid = getpid();
	assert_int_equal(run_approval_create(fd, &a), 0);
	assert_true(run_approval_id_valid(a.id));
	snprintf(b.name, sizeof(b.name), "*.example.test");
	snprintf(c.name, sizeof(c.name), "elicited.example.test");
	assert_int_equal(run_approval_create(fd, &b), 0);
	assert_string_not_equal(a.id, b.id);
	snprintf(link, sizeof(link), "%s/%s.json", path, a.id);
	assert_int_equal(stat(link, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(run_approval_list(fd, count, &n), 0);
	assert_int_equal(n, 2);
	assert_int_equal(run_approval_read(fd, a.id, &got), 0);
	assert_int_equal(got.state, RUN_APPROVAL_PENDING);
	assert_string_equal(got.name, "example.test");
	/* decided once */
	assert_int_equal(run_approval_decide(fd, a.id, true, "test"), 0);
	assert_int_equal(run_approval_read(fd, a.id, &got), 0);
	assert_int_equal(got.state, RUN_APPROVAL_APPROVED);
	assert_string_equal(got.decided_by, "test");
	assert_int_equal(run_approval_decide(fd, a.id, false, "test"), -EALREADY);
	assert_int_equal(run_approval_decide(fd, b.id, false, "test"), 0);
	assert_int_equal(run_approval_read(fd, b.id, &got), 0);
	assert_int_equal(got.state, RUN_APPROVAL_DENIED);
	/* the client's user's answer (both network.ask and set_egress_allowlist): recorded by
	 * the one "by"; one decided before keeps its decision and who made it */
	assert_int_equal(run_approval_elicited(fd, a.id, false, &got), -EALREADY);
	assert_int_equal(got.state, RUN_APPROVAL_APPROVED);
	assert_string_equal(got.decided_by, "test");
	assert_int_equal(run_approval_create(fd, &c), 0);
	assert_int_equal(run_approval_elicited(fd, c.id, true, &got), 0);
	assert_int_equal(got.state, RUN_APPROVAL_APPROVED);
	assert_string_equal(got.decided_by, RUN_APPROVAL_BY_ELICIT);
	assert_string_equal(got.decided_by, "MCP client (elicitation)");
	assert_int_equal(run_approval_elicited(fd, c.id, false, &got), -EALREADY);
	assert_int_equal(got.state, RUN_APPROVAL_APPROVED);
	assert_int_equal(run_approval_remove(fd, c.id), 0);
	assert_int_equal(run_approval_elicited(fd, c.id, false, &got), -ENOENT);
	/* ids of the wrong shape, unknown ids */
	assert_false(run_approval_id_valid("../../etc/passwd"));
	assert_false(run_approval_id_valid("abc"));
	assert_int_equal(run_approval_read(fd, "../x", &got), -EINVAL);
	assert_int_equal(run_approval_decide(fd, "0123456789abcdef0123456789abcdef", true, "t"),
			 -ENOENT);
	assert_int_equal(run_approval_remove(fd, a.id), 0);
	assert_int_equal(run_approval_remove(fd, b.id), 0);
	/* a request file that is a link is not followed */
	snprintf(path, sizeof(path), "%s/state/approvals/0123456789abcdef0123456789abcdef.json",
		 dir);
	assert_int_equal(symlink("/etc/hostname", path), 0);
	assert_int_equal(run_approval_read(fd, "0123456789abcdef0123456789abcdef", &got), -ELOOP);
	unlink(path);
	close(fd);
	/* a store others may enter, and one that is a link, are refused */
	snprintf(path, sizeof(path), "%s/state/approvals", dir);
	assert_int_equal(chmod(path, 0755), 0);
	assert_int_equal(run_approval_open(path, &fd2, &err), -EPERM);
	assert_non_null(strstr(err.msg, "0700"));
	rmdir(path);
	snprintf(link, sizeof(link), "%s/elsewhere", dir);
	assert_int_equal(mkdir(link, 0700), 0);
	assert_int_equal(symlink(link, path), 0);
	assert_true(run_approval_open(path, &fd2, &err) < 0);
	assert_non_null(strstr(err.msg, "link"));
	unlink(path);
	rmdir(link);
	snprintf(path, sizeof(path), "%s/state", dir);
	rmdir(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_initialize),	   cmocka_unit_test(test_error_codes),
	    cmocka_unit_test(test_notifications),  cmocka_unit_test(test_tools_list),
	    cmocka_unit_test(test_tools_call),	   cmocka_unit_test(test_requests_out),
	    cmocka_unit_test(test_approval_store),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_launcher_mcp_tools.c - `warden mcp`'s tools (launcher/mcp_tools.c) driven through the real
 * protocol layer, with a real approval store, audit log and derived policy in a temporary
 * folder: what a person is shown for set_egress_allowlist is exactly what an acceptance adds
 * (the attack of issue 25: eleven long names and a wildcard last), the bounds of one request,
 * and list_audit_log's scope (this session's runs only, unless the policy widens it) and cap.
 * A run is started with /bin/true in place of `warden run` (the run's events are written by
 * the test, as `warden run` would write them).
 *
 * On the code before the fix (df12979) test_attack_wildcard_last failed with "acceptance added
 * `cdn-assets-0010....test:80,443`, `*.wild.test:80,443`, which the question did not show; the
 * question shown ended: "...rstuvwxyzabcdefghijklmnopqrs.te"" (cut in the middle of the
 * eleventh name, no question mark), and test_log_scope with "another run's event was
 * returned: another project's run". */
#include "launcher/cli.h"
#include "mcp/internal.h"
#include "run/run.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

static struct mcp_server M;
static char tmp[64];
static json_t *sent[64];
static size_t nsent;
static long long next_call = 100;

static int rec_send(void *ctx, json_t *msg)
{
	(void)ctx;
	assert_true(nsent < WD_ARRAY_SIZE(sent));
	sent[nsent++] = json_incref(msg);
	return 0;
}

static void sent_clear(void)
{
	for (size_t i = 0; i < nsent; i++)
		json_decref(sent[i]);
	nsent = 0;
}

static void feed(const char *line)
{
	assert_int_equal(mcp_handle_line(&M.s, line, strlen(line)), 0);
}

static void feed_json(json_t *msg)
{
	char *text = json_dumps(msg, JSON_COMPACT);

	assert_non_null(text);
	feed(text);
	free(text);
	json_decref(msg);
}

/* the answer (result or error) to our call @id, or NULL */
static json_t *reply_to(long long id)
{
	for (size_t i = 0; i < nsent; i++)
		if (!json_object_get(sent[i], "method") &&
		    json_integer_value(json_object_get(sent[i], "id")) == id)
			return sent[i];
	return NULL;
}

/* the server's request @method to the client, or NULL */
static json_t *request_of(const char *method)
{
	for (size_t i = 0; i < nsent; i++) {
		const char *m = json_string_value(json_object_get(sent[i], "method"));

		if (m && !strcmp(m, method) && json_object_get(sent[i], "id"))
			return sent[i];
	}
	return NULL;
}

/* tools/call @tool with @args (stolen); returns the call's id */
static long long call(const char *tool, json_t *args)
{
	long long id = next_call++;

	feed_json(json_pack("{s:s, s:I, s:s, s:{s:s, s:o}}", "jsonrpc", "2.0", "id", (json_int_t)id,
			    "method", "tools/call", "params", "name", tool, "arguments", args));
	return id;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void server_up(const char *policy_text)
{
	struct mcp_ops ops = {.ctx = &M,
			      .send = rec_send,
			      .call = mcp_tool_call,
			      .cancelled = mcp_tool_cancelled,
			      .answer = mcp_tool_answer};
	struct policy_protect prot[RUN_PROTECT_MAX + 2];
	struct policy_ctx ctx = {0};
	struct policy_diags d;
	struct wd_err err;
	char why[1024];

	memset(&M, 0, sizeof(M));
	M.approval_fd = -1;
	for (size_t i = 0; i < MCP_MAX_RUNS; i++)
		M.runs[i].pidfd = -1;
	snprintf(tmp, sizeof(tmp), "/tmp/wd-mcptools-XXXXXX");
	assert_non_null(mkdtemp(tmp));
	/* a run is /bin/true: it takes `run -q --audit-log ...` and exits 0 */
	snprintf(M.self, sizeof(M.self), "/bin/true");
	assert_int_equal(access(M.self, X_OK), 0);
	snprintf(M.audit_path, sizeof(M.audit_path), "%s/audit.jsonl", tmp);
	snprintf(M.approval_dir, sizeof(M.approval_dir), "%s/approvals", tmp);
	snprintf(M.state_dir, sizeof(M.state_dir), "%s/state", tmp);
	assert_int_equal(mkdir(M.state_dir, 0700), 0);
	wd_err_clear(&err);
	assert_int_equal(run_approval_open(M.approval_dir, &M.approval_fd, &err), 0);
	policy_diags_init(&d);
	assert_int_equal(policy_parse(policy_text, strlen(policy_text), "test.yaml", &M.base, &d),
			 0);
	mcp_protect(&M, prot, &ctx.nprotect, WD_ARRAY_SIZE(prot));
	ctx.protect = prot;
	assert_int_equal(policy_validate(M.base, &ctx, &d), 0);
	policy_diags_free(&d);
	assert_int_equal(audit_log_open(M.audit_path, &M.log, &err), 0);
	assert_int_equal(mcp_derive(&M, why, sizeof(why)), 0);
	assert_int_equal(clock_gettime(CLOCK_REALTIME, &M.started), 0);
	mcp_session_init(&M.s, &ops, mcp_tools, mcp_ntools, "warden", "test");
	feed("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
	     "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"elicitation\":{}},"
	     "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
	assert_true(M.s.elicitation);
	sent_clear();
}

static void server_down(void)
{
	mcp_shutdown(&M);
	for (size_t i = 0; i < M.nadded; i++)
		policy_free(M.added[i]);
	for (size_t i = 0; i < M.nremoved; i++)
		policy_free(M.removed[i]);
	free(M.added);
	free(M.removed);
	policy_free(M.base);
	audit_log_close(M.log);
	if (M.approval_fd >= 0)
		close(M.approval_fd);
	sent_clear();
	assert_int_equal(nftw(tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

static int count_req(const struct run_approval_req *req, void *arg)
{
	(void)req;
	(*(size_t *)arg)++;
	return 0;
}

/* how many requests the store holds */
static size_t store_count(void)
{
	size_t n = 0;

	assert_int_equal(run_approval_list(M.approval_fd, count_req, &n), 0);
	return n;
}

/* the client's user answers elicitation @req: accept with approve true */
static void accept_question(const json_t *req)
{
	feed_json(json_pack("{s:s, s:O, s:{s:s, s:{s:b}}}", "jsonrpc", "2.0", "id",
			    json_object_get(req, "id"), "result", "action", "accept", "content",
			    "approve", 1));
}

/* a name of @len bytes that looks harmless: "cdn-assets-0001.example-mirror-....test" */
static void long_name(char *out, size_t len, int k)
{
	int n = snprintf(out, len + 1, "cdn-assets-%04d.", k);

	for (; (size_t)n + 5 < len; n++)
		out[n] = (char)('a' + n % 26);
	/* labels of at most 63 bytes: a dot every 60 */
	for (int i = 60; i < n; i += 60)
		out[i] = '.';
	snprintf(out + n, len + 1 - (size_t)n, ".test");
}

/* The attack (issue 25, item 3): eleven long harmless-looking names and, last, *.wild.test. The
 * person must be shown every entry that an acceptance adds; here the request is over the
 * bounds of one question, so it is refused whole: nothing shown, nothing stored, nothing
 * added. */
static void test_attack_wildcard_last(void **state)
{
	char names[11][181];
	json_t *add = json_array(), *q, *r, *added, *e;
	const char *shown = NULL;
	char missing[4096] = "";
	long long id;
	size_t i;

	(void)state;
	server_up("version: 1\n");
	for (int k = 0; k < 11; k++) {
		long_name(names[k], 180, k);
		json_array_append_new(add, json_string(names[k]));
	}
	json_array_append_new(add, json_string("*.wild.test"));
	id = call("set_egress_allowlist", json_pack("{s:o}", "add", add));
	q = request_of("elicitation/create");
	if (q) {
		shown = json_string_value(json_object_get(json_object_get(q, "params"), "message"));
		accept_question(q);
	}
	/* the property: every name that acceptance added was in the question shown */
	r = reply_to(id);
	assert_non_null(r);
	added = json_object_get(json_object_get(json_object_get(r, "result"), "structuredContent"),
				"added");
	assert_int_equal(json_array_size(added), M.nadded);
	json_array_foreach(added, i, e)
	{
		const char *name = json_string_value(json_object_get(e, "name"));

		if (!shown || !strstr(shown, name))
			snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing),
				 "%s`%s`", missing[0] ? ", " : "",
				 json_string_value(json_object_get(e, "rule")));
	}
	if (missing[0])
		fail_msg("acceptance added %s, which the question did not show; the question "
			 "shown ended: \"...%s\"",
			 missing,
			 shown && strlen(shown) > 120 ? shown + strlen(shown) - 120 : shown);
	/* the remedy: over the bounds of one question, refused whole with the reason */
	assert_null(q);
	assert_int_equal(M.nadded, 0);
	assert_int_equal(store_count(), 0);
	assert_true(json_is_true(json_object_get(json_object_get(r, "result"), "isError")));
	assert_non_null(
	    strstr(json_string_value(json_object_get(
		       json_array_get(json_object_get(json_object_get(r, "result"), "content"), 0),
		       "text")),
		   "at most"));
	server_down();
}

/* the entries listed in a question (docs/mcp.md: "  N. [WILDCARD |IP RANGE |IP ADDRESS ]ENTRY")
 * into @out; their marks checked against the entry; marked ones first */
static size_t parse_question(const char *text, char out[][256], size_t max)
{
	bool plain_seen = false;
	size_t n = 0;

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *e, *end;
		int num, used = 0;
		bool wild = false, ip = false;

		if (sscanf(l, "  %d. %n", &num, &used) != 1 || !used)
			continue;
		assert_int_equal(num, (int)n + 1);
		e = l + used;
		if (!strncmp(e, "WILDCARD ", 9)) {
			wild = true;
			e += 9;
		} else if (!strncmp(e, "IP RANGE ", 9)) {
			ip = true;
			e += 9;
		} else if (!strncmp(e, "IP ADDRESS ", 11)) {
			ip = true;
			e += 11;
		}
		end = e + strcspn(e, " \n");
		assert_true(n < max && (size_t)(end - e) < 256);
		memcpy(out[n], e, (size_t)(end - e));
		out[n][end - e] = '\0';
		/* a wildcard or an address range is never shown unmarked, nor after a plain name */
		assert_int_equal(wild, out[n][0] == '*');
		assert_int_equal(ip, strchr("0123456789[", out[n][0]) != NULL ||
					 strchr(out[n], '/') != NULL);
		if (wild || ip)
			assert_false(plain_seen);
		else
			plain_seen = true;
		n++;
	}
	return n;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* Within the bounds: the question lists every entry, wildcards and ranges first and marked,
 * and the entries parsed back from it are exactly the rules an acceptance added (and the
 * tool's answer lists the same). */
static void test_question_is_the_added_set(void **state)
{
	static const char *const ask[] = {"b.test", "api.example.test:443", "*.wild.test",
					  "c.test", "*.cdn.test:443",	    "D.Test"};
	char shown_list[16][256], added_list[16][256];
	json_t *add = json_array(), *q, *r, *answered;
	const char *shown;
	size_t n;
	long long id;

	(void)state;
	server_up("version: 1\n");
	for (size_t i = 0; i < WD_ARRAY_SIZE(ask); i++)
		json_array_append_new(add, json_string(ask[i]));
	id = call("set_egress_allowlist", json_pack("{s:o}", "add", add));
	q = request_of("elicitation/create");
	if (!q)
		fail_msg("no question; the answer: %s", json_dumps(reply_to(id), JSON_COMPACT));
	assert_null(reply_to(id)); /* answered with the decision */
	shown = json_string_value(json_object_get(json_object_get(q, "params"), "message"));
	assert_non_null(shown);
	/* the count is said, so a cut display shows it is cut */
	assert_non_null(strstr(shown, "6 network entries"));
	n = parse_question(shown, shown_list, 16);
	assert_int_equal(n, WD_ARRAY_SIZE(ask));
	assert_int_equal(store_count(), n);
	accept_question(q);
	r = reply_to(id);
	assert_non_null(r);
	assert_false(json_is_true(json_object_get(json_object_get(r, "result"), "isError")));
	/* the set added == the set shown */
	assert_int_equal(M.nadded, n);
	for (size_t i = 0; i < M.nadded; i++)
		snprintf(added_list[i], sizeof(added_list[i]), "%s", M.added[i]->rules[0].text);
	qsort(shown_list, n, sizeof(shown_list[0]), cmp_str);
	qsort(added_list, n, sizeof(added_list[0]), cmp_str);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(shown_list[i], added_list[i]);
	/* and the tool's answer says the same rules */
	answered = json_object_get(
	    json_object_get(json_object_get(r, "result"), "structuredContent"), "added");
	assert_int_equal(json_array_size(answered), n);
	for (size_t i = 0; i < n; i++) {
		const char *rule =
		    json_string_value(json_object_get(json_array_get(answered, i), "rule"));

		assert_non_null(bsearch(rule, shown_list, n, sizeof(shown_list[0]), cmp_str));
	}
	assert_int_equal(store_count(), 0);
	server_down();
}

/* the id of the store's request for @arg's name ("NAME\0" then room for the id) */
static int find_req(const struct run_approval_req *req, void *arg)
{
	char *name = arg;

	if (!strcmp(req->name, name))
		snprintf(name + strlen(name) + 1, 40, "%s", req->id);
	return 0;
}

/* One path with network.ask (run_approval_elicited()): the client's acceptance decides each
 * request by "MCP client (elicitation)", but a request a terminal refused first keeps that
 * refusal (the first answer wins). Control in the same call: the other name is added. */
static void test_first_answer_wins(void **state)
{
	char want[64] = "a.test";
	json_t *q, *r, *sc;
	long long id;

	(void)state;
	server_up("version: 1\n");
	id = call("set_egress_allowlist", json_pack("{s:[s, s]}", "add", "a.test", "b.test"));
	q = request_of("elicitation/create");
	assert_non_null(q);
	assert_int_equal(store_count(), 2);
	assert_int_equal(run_approval_list(M.approval_fd, find_req, want), 0);
	assert_true(run_approval_id_valid(want + strlen(want) + 1));
	assert_int_equal(
	    run_approval_decide(M.approval_fd, want + strlen(want) + 1, false, "a terminal (test)"),
	    0);
	accept_question(q);
	r = reply_to(id);
	assert_non_null(r);
	sc = json_object_get(json_object_get(r, "result"), "structuredContent");
	assert_int_equal(json_array_size(json_object_get(sc, "added")), 1);
	assert_string_equal(json_string_value(json_object_get(
				json_array_get(json_object_get(sc, "added"), 0), "name")),
			    "b.test");
	assert_int_equal(json_array_size(json_object_get(sc, "refused")), 1);
	assert_string_equal(json_string_value(json_object_get(
				json_array_get(json_object_get(sc, "refused"), 0), "name")),
			    "a.test");
	assert_non_null(strstr(json_string_value(json_object_get(sc, "message")), "not every"));
	assert_int_equal(M.nadded, 1);
	assert_string_equal(M.added[0]->rules[0].text, "b.test:80,443");
	assert_int_equal(store_count(), 0);
	server_down();
}

/* Over the bounds (too many names, too many bytes in all): a tool error saying the bound;
 * nothing stored, nothing asked, nothing added, and a removal in the same call not applied.
 * Control: the same kind of request within the bounds is asked and, accepted, added. */
static void test_bounds(void **state)
{
	char big[3][201];
	json_t *add, *q, *r, *res;
	const char *text;
	long long id;

	(void)state;
	server_up("version: 1\nnetwork:\n  allow:\n    - keep.test\n");
	/* nine short names: too many */
	add = json_array();
	for (int k = 0; k < 9; k++) {
		char name[32];

		snprintf(name, sizeof(name), "n%d.test", k);
		json_array_append_new(add, json_string(name));
	}
	id = call("set_egress_allowlist", json_pack("{s:o}", "add", add));
	res = json_object_get(reply_to(id), "result");
	assert_true(json_is_true(json_object_get(res, "isError")));
	text = json_string_value(
	    json_object_get(json_array_get(json_object_get(res, "content"), 0), "text"));
	assert_non_null(strstr(text, "at most 8"));
	assert_null(request_of("elicitation/create"));
	sent_clear();
	/* three names of 200 bytes: 600 bytes in all, over 512; with a removal that must not
	 * apply */
	add = json_array();
	for (int k = 0; k < 3; k++) {
		long_name(big[k], 200, k);
		json_array_append_new(add, json_string(big[k]));
	}
	id = call("set_egress_allowlist",
		  json_pack("{s:o, s:[s]}", "add", add, "remove", "keep.test"));
	res = json_object_get(reply_to(id), "result");
	assert_true(json_is_true(json_object_get(res, "isError")));
	text = json_string_value(
	    json_object_get(json_array_get(json_object_get(res, "content"), 0), "text"));
	assert_non_null(strstr(text, "512 bytes"));
	assert_null(request_of("elicitation/create"));
	assert_int_equal(M.nremoved, 0);
	assert_int_equal(M.nadded, 0);
	assert_int_equal(store_count(), 0);
	sent_clear();
	/* control: eight names, two of them long, 512 bytes or less in all: asked, added */
	add = json_array();
	long_name(big[0], 200, 0);
	long_name(big[1], 200, 1);
	json_array_append_new(add, json_string(big[0]));
	json_array_append_new(add, json_string(big[1]));
	for (int k = 0; k < 6; k++) {
		char name[32];

		snprintf(name, sizeof(name), "n%d.test", k);
		json_array_append_new(add, json_string(name));
	}
	id = call("set_egress_allowlist", json_pack("{s:o}", "add", add));
	q = request_of("elicitation/create");
	assert_non_null(q);
	assert_non_null(strstr(
	    json_string_value(json_object_get(json_object_get(q, "params"), "message")), big[1]));
	accept_question(q);
	r = reply_to(id);
	assert_non_null(r);
	assert_false(json_is_true(json_object_get(json_object_get(r, "result"), "isError")));
	assert_int_equal(M.nadded, 8);
	server_down();
}

/* ------------------------------------------------------------ list_audit_log */

static void write_event_at(time_t when, const char *run, const char *type, const char *action,
			   long long pid, const char *reason)
{
	struct audit_event ev = {0};
	struct wd_err err;

	ev.ts.tv_sec = when;
	ev.run = run;
	ev.type = !strcmp(type, "run")	 ? AUDIT_TYPE_RUN
		  : !strcmp(type, "net") ? AUDIT_TYPE_NET
					 : AUDIT_TYPE_OTHER;
	ev.type_name = type;
	ev.action = action;
	ev.resource = "r";
	ev.allowed = strcmp(action, "deny") != 0;
	ev.reason = reason;
	ev.has = AUDIT_HAS_PID | AUDIT_HAS_UID;
	ev.pid = pid;
	ev.uid = getuid();
	assert_int_equal(audit_log_write(M.log, &ev, 0, &err), 0);
}

static void write_event(const char *run, const char *type, const char *action, long long pid,
			const char *reason)
{
	write_event_at(0, run, type, action, pid, reason);
}

/* a run of this session (run_sandboxed, /bin/true for `warden run`): its id */
static const char *session_run(char *id, size_t size)
{
	long long cid = call("run_sandboxed", json_pack("{s:[s]}", "command", "true"));
	json_t *r = NULL;

	for (int i = 0; i < 500 && !(r = reply_to(cid)); i++) {
		for (size_t k = 0; k < MCP_MAX_RUNS; k++)
			if (M.runs[k].used)
				mcp_run_check(&M, &M.runs[k]);
		nanosleep(&(struct timespec){0, 10000000}, NULL);
	}
	assert_non_null(r);
	snprintf(id, size, "%s",
		 json_string_value(json_object_get(
		     json_object_get(json_object_get(r, "result"), "structuredContent"), "run")));
	assert_int_equal(strlen(id), 12);
	sent_clear();
	return id;
}

static json_t *log_events(json_t *args, json_t **ret_result)
{
	long long id = call("list_audit_log", args);
	json_t *res = json_object_get(reply_to(id), "result");

	assert_non_null(res);
	*ret_result = res;
	return json_object_get(json_object_get(res, "structuredContent"), "events");
}

/* Another run's events (another session, another project) are not the agent's to read: only
 * this session's runs and this server's own events come back; naming another run is refused.
 */
static void test_log_scope(void **state)
{
	char mine[16], ids[3][16];
	json_t *ev, *res, *e;
	bool start = false, deny = false, own = false;
	size_t i;

	(void)state;
	server_up("version: 1\n");
	/* three runs of this session (their ids kept in order, looked up by bisection) */
	for (int k = 0; k < 3; k++)
		session_run(ids[k], sizeof(ids[k]));
	snprintf(mine, sizeof(mine), "%s", ids[1]);
	for (int k = 0; k < 3; k++) {
		json_t *args = json_pack("{s:s}", "run", ids[k]);

		log_events(args, &res);
		assert_false(json_is_true(json_object_get(res, "isError")));
	}
	write_event("0123456789ab", "run", "run.start", 4242, "another project's run");
	write_event("0123456789ab", "net", "deny", 4242, "another project's secret.test");
	write_event("", "mcp", "mcp.allowlist.request", 1, "another server's request");
	/* a server of long ago that had this pid */
	write_event_at(M.started.tv_sec - 3600, "", "mcp", "mcp.allowlist.request", getpid(),
		       "an earlier server's request");
	write_event(mine, "run", "run.start", 4343, "this session's run");
	write_event(mine, "net", "deny", 4343, "this session's denial");
	mcp_audit(&M, "mcp.start", "", "x.test", true, "this server's own event");
	ev = log_events(json_object(), &res);
	assert_false(json_is_true(json_object_get(res, "isError")));
	json_array_foreach(ev, i, e)
	{
		const char *run = json_string_value(json_object_get(e, "run"));
		const char *type = json_string_value(json_object_get(e, "type"));
		const char *reason = json_string_value(json_object_get(e, "reason"));

		if (run && !strcmp(run, "0123456789ab"))
			fail_msg("another run's event was returned: %s", reason);
		if (json_integer_value(json_object_get(e, "pid")) == 1 ||
		    !strcmp(reason, "an earlier server's request"))
			fail_msg("another server's event was returned: %s", reason);
		assert_true((run && !strcmp(run, mine)) ||
			    (!strcmp(type, "mcp") &&
			     json_integer_value(json_object_get(e, "pid")) == getpid()));
		start |= reason && !strcmp(reason, "this session's run");
		deny |= reason && !strcmp(reason, "this session's denial");
		own |= reason && !strcmp(reason, "this server's own event");
	}
	assert_true(start && deny && own);
	/* denied_only: this session's denial, not the other's */
	ev = log_events(json_pack("{s:b}", "denied_only", 1), &res);
	assert_int_equal(json_array_size(ev), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(ev, 0), "reason")),
			    "this session's denial");
	/* another run named: refused, with the way to widen it */
	log_events(json_pack("{s:s}", "run", "0123456789ab"), &res);
	assert_true(json_is_true(json_object_get(res, "isError")));
	assert_non_null(strstr(json_string_value(json_object_get(
				   json_array_get(json_object_get(res, "content"), 0), "text")),
			       "mcp.audit_log"));
	/* control: this session's run named */
	ev = log_events(json_pack("{s:s}", "run", mine), &res);
	assert_int_equal(json_array_size(ev), 2);
	server_down();
}

/* `mcp.audit_log: all` in the policy widens it to the whole log */
static void test_log_scope_all(void **state)
{
	char mine[16];
	json_t *ev, *res, *e;
	bool other = false, own = false;
	size_t i;

	(void)state;
	server_up("version: 1\nmcp:\n  audit_log: all\n");
	session_run(mine, sizeof(mine));
	write_event("0123456789ab", "net", "deny", 4242, "another project's secret.test");
	write_event(mine, "net", "deny", 4343, "this session's denial");
	ev = log_events(json_object(), &res);
	json_array_foreach(ev, i, e)
	{
		const char *reason = json_string_value(json_object_get(e, "reason"));

		other |= reason && !strcmp(reason, "another project's secret.test");
		own |= reason && !strcmp(reason, "this session's denial");
	}
	assert_true(other && own);
	ev = log_events(json_pack("{s:s}", "run", "0123456789ab"), &res);
	assert_int_equal(json_array_size(ev), 1);
	server_down();
}

/* the answer holds at most MCP_LOG_CAP bytes of events: the newest, and says how many were
 * left out */
static void test_log_cap(void **state)
{
	static char reason[8001];
	char mine[16], *text;
	json_t *ev, *res;
	size_t total = 0, i;
	json_t *e;

	(void)state;
	server_up("version: 1\n");
	session_run(mine, sizeof(mine));
	memset(reason, 'x', sizeof(reason) - 1);
	for (int k = 0; k < 300; k++) {
		snprintf(reason, 16, "%05d", k);
		reason[5] = 'x';
		write_event(mine, "net", "deny", 4343, reason);
	}
	ev = log_events(json_pack("{s:i}", "tail", 10000), &res);
	json_array_foreach(ev, i, e)
	{
		text = json_dumps(e, JSON_COMPACT);
		total += strlen(text);
		free(text);
	}
	assert_true(total <= (1u << 20));
	assert_true(json_array_size(ev) > 100);
	assert_true(json_integer_value(json_object_get(json_object_get(res, "structuredContent"),
						       "cut_events")) > 0);
	/* the newest kept */
	assert_non_null(strstr(json_string_value(json_object_get(
				   json_array_get(ev, json_array_size(ev) - 1), "reason")),
			       "00299"));
	server_down();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_attack_wildcard_last),
	    cmocka_unit_test(test_question_is_the_added_set),
	    cmocka_unit_test(test_bounds),
	    cmocka_unit_test(test_first_answer_wins),
	    cmocka_unit_test(test_log_scope),
	    cmocka_unit_test(test_log_scope_all),
	    cmocka_unit_test(test_log_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

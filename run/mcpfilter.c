/* mcpfilter.c - the MCP tool filter of `warden run`'s stdio relay (mcpfilter.h). Pure: no I/O.
 *
 * Theory of operation. The relay hands over whole lines (MCP's stdio transport is
 * newline-delimited JSON-RPC). A line is parsed with jansson, duplicate keys refused: a parser
 * that kept the first of two `name` keys would decide about another tool than the server
 * calls (JavaScript's JSON.parse keeps the last). From the client, a `tools/call` whose tool
 * the policy denies is taken out (a batch keeps its other messages, written again) and
 * answered with a JSON-RPC error carrying the denial id; the id of a `tools/list` request is
 * remembered. From the server, the answer to a remembered tools/list loses the tools the
 * policy denies (and anything that is not a tool with a name). Ids are compared as compact
 * JSON text; a tools/list id must be a string or an integer JavaScript represents exactly, so
 * the server's echo of it is the same text (a 1.0 would come back as 1 and its answer would
 * pass unfiltered: such a request is refused). Lines that need no change pass as they came. */
#include "run/mcpfilter.h"
#include "run/mcppin.h"
#include "policy/policy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* JavaScript's Number.MAX_SAFE_INTEGER: a larger integer id would not come back as sent */
#define SAFE_INT ((json_int_t)9007199254740991LL)

static void say(struct run_mcpfilter *f, const struct run_mcpfilter_note *n)
{
	if (f->note)
		f->note(f->ctx, n);
}

static void drop(struct run_mcpfilter *f, enum mcp_dir d, const char *why)
{
	struct run_mcpfilter_note n = {.act = RUN_MCPF_DROPPED, .dir = d};

	f->dropped++;
	snprintf(n.reason, sizeof(n.reason),
		 "line %llu from the %s dropped, not relayed: %s; mcp.tools rules are in force and "
		 "only lines the filter can read go on",
		 (unsigned long long)f->lineno[d], d == MCP_C2S ? "client" : "server", why);
	say(f, &n);
}

void run_mcpfilter_drop_long(struct run_mcpfilter *f, enum mcp_dir d)
{
	char why[80];

	f->lineno[d]++;
	snprintf(why, sizeof(why), "it is longer than %u MiB", RUN_TOOLCALLS_LINE_MAX >> 20);
	drop(f, d, why);
}

static char *id_key(const json_t *id)
{
	return json_dumps(id, JSON_COMPACT | JSON_ENCODE_ANY);
}

/* an id whose echo by a JavaScript server is the same JSON text */
static bool id_exact(const json_t *id)
{
	return json_is_string(id) || (json_is_integer(id) && json_integer_value(id) <= SAFE_INT &&
				      json_integer_value(id) >= -SAFE_INT);
}

/* the error answer to request @id: @code, @msg, and the denial's details */
static json_t *error_answer(const json_t *id, int code, const char *msg, const char *tool,
			    const char *rule, const char *denial_id)
{
	json_t *data = json_pack("{s:{s:s, s:s, s:s}}", "warden", "denial_id", denial_id, "tool",
				 tool, "rule", rule);

	return json_pack("{s:s, s:O, s:{s:i, s:s, s:o}}", "jsonrpc", "2.0", "id", id, "error",
			 "code", code, "message", msg, "data", data ? data : json_object());
}

/* a request the filter answers itself: noted, and its answer added to @answers (none for a
 * notification, which has no id) */
static int refuse(struct run_mcpfilter *f, const json_t *m, const char *tool, const char *rule,
		  const char *why, json_t *answers)
{
	struct run_mcpfilter_note n = {.act = RUN_MCPF_REFUSED, .dir = MCP_C2S};
	json_t *id = json_object_get(m, "id"), *a;
	char msg[700];

	f->refused++;
	run_toolcalls_cut(n.tool, tool, sizeof(n.tool) - 1);
	run_toolcalls_cut(n.rule, rule, sizeof(n.rule) - 1);
	if (f->new_id)
		f->new_id(f->ctx, n.denial_id, sizeof(n.denial_id));
	snprintf(n.reason, sizeof(n.reason), "%s; the server never saw the request (%s)", why,
		 rule);
	say(f, &n);
	if (!id)
		return 0;
	snprintf(msg, sizeof(msg), "%s: refused by warden's policy (%s); denial %s", why, rule,
		 n.denial_id);
	a = error_answer(id, RUN_MCPFILTER_CODE, msg, n.tool, n.rule, n.denial_id);
	return a && !json_array_append_new(answers, a) ? 0 : -ENOMEM;
}

/* the pins allow a call of @tool (allow/deny said yes already); else @rule and false */
static bool pinned(struct run_mcpfilter *f, const char *tool, char *rule, size_t size)
{
	const char *why;

	if (!f->pins)
		return true;
	why = json_string_value(json_object_get(f->unpinned, tool));
	if (why) {
		snprintf(rule, size, "mcp.pin: %s: %s", f->pin_file, why);
		return false;
	}
	if (json_object_get(f->pins, tool))
		return true;
	snprintf(rule, size, "mcp.pin: %s: not pinned", f->pin_file);
	return false;
}

/* one message from the client; *@keep: it goes on to the server */
static int client_msg(struct run_mcpfilter *f, const json_t *m, json_t *answers, bool *keep)
{
	const char *method = json_string_value(json_object_get(m, "method"));
	const json_t *id = json_object_get(m, "id");
	char rule[700], why[400];

	*keep = true;
	if (!json_is_object(m) || !method)
		return 0;
	if (!strcmp(method, "tools/call")) {
		const char *tool =
		    json_string_value(json_object_get(json_object_get(m, "params"), "name"));

		if (policy_mcp_tool_allowed(f->policy, tool, rule, sizeof(rule)) &&
		    pinned(f, tool, rule, sizeof(rule)))
			return 0;
		*keep = false;
		if (tool && *tool)
			snprintf(why, sizeof(why), "tools/call of tool `%.200s`", tool);
		else
			snprintf(why, sizeof(why), "tools/call without a tool name");
		return refuse(f, m, tool ? tool : "", rule, why, answers);
	}
	if (!strcmp(method, "tools/list") && id) {
		char *key;

		*keep = false;
		if (!id_exact(id))
			return refuse(f, m, "",
				      "mcp.tools: a tools/list id must be a string or an "
				      "integer of at most 2^53 while tool rules are in force",
				      "tools/list", answers);
		if (f->nlists == RUN_MCPFILTER_LISTS)
			return refuse(f, m, "",
				      "mcp.tools: more than 64 tools/list requests "
				      "unanswered",
				      "tools/list", answers);
		key = id_key(id);
		if (!key)
			return -ENOMEM;
		f->lists[f->nlists++] = key;
		*keep = true;
	}
	return 0;
}

/* the remembered tools/list request @id: forgotten; true when it was one */
static bool take_list(struct run_mcpfilter *f, const json_t *id)
{
	char *key = id_key(id);
	bool found = false;

	for (unsigned i = 0; key && i < f->nlists && !found; i++) {
		if (strcmp(f->lists[i], key))
			continue;
		free(f->lists[i]);
		memmove(&f->lists[i], &f->lists[i + 1], (f->nlists - i - 1) * sizeof(f->lists[0]));
		f->nlists--;
		found = true;
	}
	free(key);
	return found;
}

/* a listed tool @t against the pins: true when it is pinned as it is; else it is
 * remembered as unpinned for the run, with @rule */
static bool pin_ok(struct run_mcpfilter *f, const json_t *t, const char *name, char *rule,
		   size_t size)
{
	char what[200], why[300];
	enum run_mcppin_verdict v;

	if (!f->pins)
		return true;
	v = run_mcppin_compare(f->pins, t, what, sizeof(what));
	if (v == RUN_MCPPIN_SAME && !json_object_get(f->unpinned, name))
		return true;
	if (v == RUN_MCPPIN_NEW)
		snprintf(why, sizeof(why), "new, not pinned");
	else if (v == RUN_MCPPIN_CHANGED)
		snprintf(why, sizeof(why), "changed since it was pinned (%s)", what);
	else
		snprintf(why, sizeof(why), "%s",
			 json_string_value(json_object_get(f->unpinned, name)));
	if (!f->unpinned)
		f->unpinned = json_object();
	if (f->unpinned && !json_object_get(f->unpinned, name))
		json_object_set_new(f->unpinned, name, json_string(why));
	snprintf(rule, size, "mcp.pin: %s: %s%s%s", f->pin_file, why,
		 f->accept_hint ? "; a person accepts it with " : "",
		 f->accept_hint ? f->accept_hint : "");
	return false;
}

/* one message from the server; *@changed: its tools were filtered */
static void server_msg(struct run_mcpfilter *f, json_t *m, bool *changed)
{
	json_t *id = json_object_get(m, "id"), *tools, *t;
	char rule[700];
	size_t i = 0;

	if (!json_is_object(m) || json_object_get(m, "method") || !id || !take_list(f, id))
		return;
	tools = json_object_get(json_object_get(m, "result"), "tools");
	if (!json_is_array(tools))
		return; /* an error, or no tools: nothing to hide */
	while (i < json_array_size(tools)) {
		const char *name;
		struct run_mcpfilter_note n = {.act = RUN_MCPF_HIDDEN, .dir = MCP_S2C};

		t = json_array_get(tools, i);
		name = json_string_value(json_object_get(t, "name"));
		if (name && policy_mcp_tool_allowed(f->policy, name, rule, sizeof(rule)) &&
		    pin_ok(f, t, name, rule, sizeof(rule))) {
			i++;
			continue;
		}
		if (!name)
			snprintf(rule, sizeof(rule), "mcp.tools: a tool without a name");
		run_toolcalls_cut(n.tool, name ? name : "", sizeof(n.tool) - 1);
		run_toolcalls_cut(n.rule, rule, sizeof(n.rule) - 1);
		snprintf(n.reason, sizeof(n.reason),
			 "tool `%.200s` hidden from the server's tools/list answer (%s)", n.tool,
			 n.rule);
		f->hidden++;
		say(f, &n);
		json_array_remove(tools, i);
		*changed = true;
	}
}

static int put_json(struct wd_buf *out, const json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT);
	int ret;

	if (!s)
		return -ENOMEM;
	ret = wd_buf_puts(out, s) || wd_buf_puts(out, "\n") ? -ENOMEM : 0;
	free(s);
	return ret;
}

static int put_line(struct wd_buf *out, const char *s, size_t n)
{
	return wd_buf_append(out, s, n) || wd_buf_puts(out, "\n") ? -ENOMEM : 0;
}

/* a client line: its kept messages to @fwd, its answers to @reply */
static int client_line(struct run_mcpfilter *f, json_t *j, const char *s, size_t n,
		       struct wd_buf *fwd, struct wd_buf *reply)
{
	json_t *answers = json_array(), *kept = json_array(), *m;
	bool keep, all = true;
	int ret = answers && kept ? 0 : -ENOMEM;
	size_t i;

	if (json_is_object(j)) {
		ret = ret ? ret : client_msg(f, j, answers, &keep);
		if (!ret && keep)
			ret = put_line(fwd, s, n);
		if (!ret && json_array_size(answers))
			ret = put_json(reply, json_array_get(answers, 0));
		goto out;
	}
	for (i = 0; i < json_array_size(j) && !ret; i++) {
		m = json_array_get(j, i);
		ret = client_msg(f, m, answers, &keep);
		if (!ret && keep)
			ret = json_array_append(kept, m) ? -ENOMEM : 0;
		all &= keep;
	}
	if (!ret && (all || !json_array_size(j)))
		ret = put_line(fwd, s, n); /* nothing taken out: as it came */
	else if (!ret && json_array_size(kept))
		ret = put_json(fwd, kept);
	if (!ret && json_array_size(answers))
		ret = put_json(reply, answers);
out:
	json_decref(answers);
	json_decref(kept);
	return ret;
}

int run_mcpfilter_line(struct run_mcpfilter *f, enum mcp_dir d, const char *s, size_t n,
		       struct wd_buf *fwd, struct wd_buf *reply)
{
	json_error_t err;
	json_t *j, *m;
	bool changed = false;
	size_t i, blank = 0;
	int ret;

	f->lineno[d]++;
	while (blank < n && (s[blank] == ' ' || s[blank] == '\t' || s[blank] == '\r'))
		blank++;
	/* no rules (the relay reads lines whole for mcp.explain_denials alone): as it came */
	if (blank == n || !policy_mcp_tools_on(f->policy))
		return put_line(fwd, s, n);
	j = json_loadb(s, n, JSON_REJECT_DUPLICATES, &err);
	if (!j) {
		char why[300];

		snprintf(why, sizeof(why), "not JSON-RPC (%s)", err.text);
		drop(f, d, why);
		return 0;
	}
	if (d == MCP_C2S) {
		ret = client_line(f, j, s, n, fwd, reply);
	} else {
		if (json_is_object(j))
			server_msg(f, j, &changed);
		for (i = 0; json_is_array(j) && i < json_array_size(j); i++) {
			m = json_array_get(j, i);
			server_msg(f, m, &changed);
		}
		ret = changed ? put_json(fwd, j) : put_line(fwd, s, n);
	}
	json_decref(j);
	return ret;
}

void run_mcpfilter_free(struct run_mcpfilter *f)
{
	for (unsigned i = 0; i < f->nlists; i++)
		free(f->lists[i]);
	f->nlists = 0;
	json_decref(f->unpinned);
	f->unpinned = NULL;
}

/* @s is an IPv4 or IPv6 address, not a name */
static bool is_addr(const char *s)
{
	unsigned char buf[16];

	return inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1;
}

/* @x and @y deny the same thing for the same reason (their ids may differ) */
static bool same_kind(const json_t *x, const json_t *y)
{
	static const char *const keys[] = {"resource", "port", "reason"};

	for (size_t i = 0; i < WD_ARRAY_SIZE(keys); i++)
		if (!json_equal(json_object_get(x, keys[i]), json_object_get(y, keys[i])))
			return false;
	return true;
}

/* the sentence for one call's denials (@d: the gateway's entry) into @out: each kind (resource,
 * port, reason) once, with its denial ids, or how many times when it has none */
static int explain_text(const json_t *d, const char *policy, const char *run, struct wd_buf *out)
{
	const json_t *den = json_object_get(d, "denials"), *x, *y;
	json_int_t more = json_integer_value(json_object_get(d, "more"));
	const char *name = NULL;
	size_t i, k, said = 0;
	int ret = wd_buf_puts(out, "warden denied ");

	json_array_foreach(den, i, x)
	{
		const char *res = json_string_value(json_object_get(x, "resource"));
		const char *why = json_string_value(json_object_get(x, "reason"));
		json_int_t port = json_integer_value(json_object_get(x, "port"));
		unsigned times = 0, ids = 0;
		bool before = false;

		json_array_foreach(den, k, y) before |= k < i && same_kind(x, y);
		if (before)
			continue; /* said with the first of its kind */
		res = res && *res ? res : "?";
		if (!name && !is_addr(res) && strcmp(res, "?"))
			name = res;
		ret |= wd_buf_puts(out, said++ ? "; " : "");
		if (port)
			ret |= wd_buf_printf(out, "%s:%lld (", res, (long long)port);
		else
			ret |= wd_buf_printf(out, "the DNS lookup of %s (", res);
		json_array_foreach(den, k, y)
		{
			const char *id = json_string_value(json_object_get(y, "denial_id"));

			if (k < i || !same_kind(x, y))
				continue;
			times++;
			if (id && *id)
				ret |= wd_buf_printf(out, "%s%s", ids++ ? ", " : "denial ", id);
		}
		if (why && *why)
			ret |= wd_buf_printf(out, "%s%s", ids ? ": " : "", why);
		ret |= times > 1 && !ids ? wd_buf_printf(out, ", %u times)", times)
					 : wd_buf_puts(out, ")");
	}
	if (more)
		ret |= wd_buf_printf(out, "; and %lld more", (long long)more);
	ret |= wd_buf_printf(out,
			     " during this call. It is not allowed by the policy %s: this is "
			     "policy, not a network failure, and trying again will not help.",
			     policy);
	if (name)
		ret |= wd_buf_printf(out,
				     " A person can allow a name for this run with `warden "
				     "allowlist %s add %s` (or in the policy's network.allow).",
				     run, name);
	else
		ret |= wd_buf_puts(out, " An address without a name is allowed only by a cidr "
					"rule in the policy's network.allow.");
	return ret ? -ENOMEM : 0;
}

/* one response of the server's line: the text item added when its call had denials */
static int explain_msg(json_t *m, json_t *ended, const char *policy, const char *run, bool *changed)
{
	json_t *id = json_object_get(m, "id"), *content, *d;
	struct wd_buf text = WD_BUF_INIT;
	size_t i;
	int ret;

	content = json_object_get(json_object_get(m, "result"), "content");
	if (!json_is_object(m) || json_object_get(m, "method") || !id || !json_is_array(content))
		return 0; /* a request, an error (the server's own), no content: nothing added */
	json_array_foreach(ended, i, d)
	{
		if (!json_equal(json_object_get(d, "call_id"), id))
			continue;
		ret = explain_text(d, policy, run, &text);
		if (!ret &&
		    json_array_append_new(content, json_pack("{s:s, s:s}", "type", "text", "text",
							     text.data ? text.data : "")))
			ret = -ENOMEM;
		wd_buf_free(&text);
		if (ret)
			return ret;
		json_array_remove(ended, i);
		*changed = true;
		return 0;
	}
	return 0;
}

int run_mcpfilter_explain(const char *s, size_t n, json_t *ended, const char *policy,
			  const char *run, struct wd_buf *out)
{
	json_t *j = json_loadb(s, n, JSON_REJECT_DUPLICATES, NULL);
	bool changed = false;
	int ret = 0;

	if (!j)
		return 0; /* the filter's business: what is not JSON is not explained */
	if (json_is_object(j))
		ret = explain_msg(j, ended, policy, run, &changed);
	for (size_t i = 0; !ret && json_is_array(j) && i < json_array_size(j); i++)
		ret = explain_msg(json_array_get(j, i), ended, policy, run, &changed);
	if (!ret && changed)
		ret = put_json(out, j);
	json_decref(j);
	return ret ? ret : changed;
}

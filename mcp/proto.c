/* mcp_proto.c - `warden mcp`'s protocol layer: JSON-RPC 2.0 frames in, answers and hand-offs
 * out (pure: no I/O; mcp_proto.h has the contract).
 *
 * A line is one of: a request (method + id) answered here (initialize, ping, tools/list) or
 * handed to ops->call (tools/call); a notification (method, no id), never answered; an answer
 * to one of our requests (id + result or error), handed to ops->answer; or malformed, answered
 * with its JSON-RPC error code: -32700 not JSON, -32600 not a request (no object, batches,
 * "jsonrpc" not "2.0", a bad id, both or neither of result and error, a line over
 * MCP_LINE_MAX, a request before initialize), -32601 an unknown method, -32602 bad params
 * (initialize without a protocolVersion, tools/call without a name or of an unknown tool).
 */
#include "mcp/proto.h"
#include "run/elicit.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *const mcp_versions[] = {"2025-11-25", "2025-06-18", "2025-03-26"};
const size_t mcp_nversions = sizeof(mcp_versions) / sizeof(mcp_versions[0]);

void mcp_session_init(struct mcp_session *s, const struct mcp_ops *ops,
		      const struct mcp_tool *tools, size_t ntools, const char *name,
		      const char *version)
{
	memset(s, 0, sizeof(*s));
	s->ops = *ops;
	s->tools = tools;
	s->ntools = ntools;
	s->name = name;
	s->version = version;
	s->next_id = 1;
}

static int send_steal(struct mcp_session *s, json_t *msg)
{
	int ret;

	if (!msg)
		return -ENOMEM;
	ret = s->ops.send(s->ops.ctx, msg);
	json_decref(msg);
	return ret;
}

int mcp_reply(struct mcp_session *s, json_t *id, json_t *result)
{
	if (!result)
		return mcp_reply_error(s, id, MCP_ERR_INTERNAL, "out of memory");
	return send_steal(
	    s, json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result", result));
}

int mcp_reply_error(struct mcp_session *s, json_t *id, int code, const char *msg)
{
	return send_steal(s,
			  json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id",
				    id ? id : json_null(), "error", "code", code, "message", msg));
}

int mcp_notify(struct mcp_session *s, const char *method, json_t *params)
{
	json_t *m = json_pack("{s:s, s:s}", "jsonrpc", "2.0", "method", method);

	if (m && params && json_object_set_new(m, "params", params)) {
		json_decref(m);
		return -ENOMEM;
	}
	if (!m)
		json_decref(params);
	return send_steal(s, m);
}

int mcp_request(struct mcp_session *s, const char *method, json_t *params, long long *ret_id)
{
	long long id = s->next_id++;
	json_t *m = json_pack("{s:s, s:I, s:s, s:o}", "jsonrpc", "2.0", "id", (json_int_t)id,
			      "method", method, "params", params);

	*ret_id = id;
	return send_steal(s, m);
}

json_t *mcp_tool_error(const char *fmt, ...)
{
	char text[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	return json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text", text,
			 "isError", 1);
}

json_t *mcp_tool_result(json_t *structured)
{
	char *text;
	json_t *r;

	if (!structured)
		return NULL;
	text = json_dumps(structured, JSON_COMPACT);
	if (!text) {
		json_decref(structured);
		return NULL;
	}
	r = json_pack("{s:[{s:s, s:s}], s:o, s:b}", "content", "type", "text", "text", text,
		      "structuredContent", structured, "isError", 0);
	free(text);
	return r;
}

/* ------------------------------------------------------------ arguments */

static const struct mcp_arg *find_arg(const struct mcp_tool *t, const char *name)
{
	for (size_t i = 0; i < t->nargs; i++)
		if (!strcmp(t->args[i].name, name))
			return &t->args[i];
	return NULL;
}

static int check_strings(const struct mcp_arg *a, const json_t *v, char *why, size_t wsize)
{
	size_t i;
	json_t *item;

	if (a->max && json_array_size(v) > (size_t)a->max) {
		snprintf(why, wsize, "`%s`: at most %lld items", a->name, a->max);
		return -EINVAL;
	}
	if (a->type == MCP_ARG_STRING_OR_STRINGS && !json_array_size(v)) {
		snprintf(why, wsize, "`%s`: an empty list", a->name);
		return -EINVAL;
	}
	json_array_foreach(v, i, item)
	{
		if (!json_is_string(item)) {
			snprintf(why, wsize, "`%s`[%zu]: expected a string", a->name, i);
			return -EINVAL;
		}
		if (a->max_len && json_string_length(item) > a->max_len) {
			snprintf(why, wsize, "`%s`[%zu]: longer than %zu bytes", a->name, i,
				 a->max_len);
			return -EINVAL;
		}
		if (strlen(json_string_value(item)) != json_string_length(item)) {
			snprintf(why, wsize, "`%s`[%zu]: holds a NUL character", a->name, i);
			return -EINVAL;
		}
	}
	return 0;
}

static int check_one(const struct mcp_arg *a, const json_t *v, char *why, size_t wsize)
{
	switch (a->type) {
	case MCP_ARG_STRING:
		if (!json_is_string(v))
			break;
		if (a->max && json_string_length(v) > (size_t)a->max) {
			snprintf(why, wsize, "`%s`: longer than %lld bytes", a->name, a->max);
			return -EINVAL;
		}
		return 0;
	case MCP_ARG_INT:
		if (!json_is_integer(v))
			break;
		if (json_integer_value(v) < a->min || json_integer_value(v) > a->max) {
			snprintf(why, wsize, "`%s`: out of range; expected %lld to %lld", a->name,
				 a->min, a->max);
			return -EINVAL;
		}
		return 0;
	case MCP_ARG_BOOL:
		if (!json_is_boolean(v))
			break;
		return 0;
	case MCP_ARG_STRINGS:
		if (!json_is_array(v))
			break;
		return check_strings(a, v, why, wsize);
	case MCP_ARG_STRING_OR_STRINGS:
		if (json_is_string(v)) {
			if (a->max_len && json_string_length(v) > a->max_len) {
				snprintf(why, wsize, "`%s`: longer than %zu bytes", a->name,
					 a->max_len);
				return -EINVAL;
			}
			return 0;
		}
		if (!json_is_array(v))
			break;
		return check_strings(a, v, why, wsize);
	}
	{
		static const char *const want[] = {
		    [MCP_ARG_STRING] = "a string",
		    [MCP_ARG_INT] = "an integer",
		    [MCP_ARG_BOOL] = "true or false",
		    [MCP_ARG_STRINGS] = "a list of strings",
		    [MCP_ARG_STRING_OR_STRINGS] = "a string or a list of strings",
		};
		snprintf(why, wsize, "`%s`: expected %s", a->name, want[a->type]);
	}
	return -EINVAL;
}

int mcp_args_check(const struct mcp_tool *tool, const json_t *args, char *why, size_t wsize)
{
	const char *key;
	json_t *v;

	if (!json_is_object(args)) {
		snprintf(why, wsize, "the arguments are not an object");
		return -EINVAL;
	}
	json_object_foreach((json_t *)args, key, v)
	{
		const struct mcp_arg *a = find_arg(tool, key);

		if (!a) {
			snprintf(why, wsize, "unknown argument `%.100s` (%s takes %s%s)", key,
				 tool->name, tool->nargs ? "" : "none",
				 tool->nargs ? "the ones its inputSchema lists" : "");
			return -EINVAL;
		}
		if (check_one(a, v, why, wsize))
			return -EINVAL;
	}
	for (size_t i = 0; i < tool->nargs; i++)
		if (tool->args[i].required && !json_object_get(args, tool->args[i].name)) {
			snprintf(why, wsize, "`%s` is required", tool->args[i].name);
			return -EINVAL;
		}
	return 0;
}

static json_t *arg_schema(const struct mcp_arg *a)
{
	json_t *str = json_pack("{s:s}", "type", "string");
	json_t *arr, *s = NULL;

	switch (a->type) {
	case MCP_ARG_STRING:
		s = str;
		str = NULL;
		if (s && a->max)
			json_object_set_new(s, "maxLength", json_integer(a->max));
		break;
	case MCP_ARG_INT:
		s = json_pack("{s:s, s:I, s:I}", "type", "integer", "minimum", (json_int_t)a->min,
			      "maximum", (json_int_t)a->max);
		break;
	case MCP_ARG_BOOL:
		s = json_pack("{s:s}", "type", "boolean");
		break;
	case MCP_ARG_STRINGS:
	case MCP_ARG_STRING_OR_STRINGS:
		if (str && a->max_len)
			json_object_set_new(str, "maxLength", json_integer((json_int_t)a->max_len));
		arr = json_pack("{s:s, s:O}", "type", "array", "items", str);
		if (arr && a->max)
			json_object_set_new(arr, "maxItems", json_integer(a->max));
		if (arr && a->type == MCP_ARG_STRING_OR_STRINGS) {
			json_object_set_new(arr, "minItems", json_integer(1));
			s = json_pack("{s:[O, o]}", "anyOf", str, arr);
		} else {
			s = arr;
		}
		break;
	}
	json_decref(str);
	if (s && a->desc)
		json_object_set_new(s, "description", json_string(a->desc));
	return s;
}

json_t *mcp_tool_schema(const struct mcp_tool *t)
{
	json_t *props = json_object(), *req = json_array(), *out, *in;

	for (size_t i = 0; props && req && i < t->nargs; i++) {
		json_object_set_new(props, t->args[i].name, arg_schema(&t->args[i]));
		if (t->args[i].required)
			json_array_append_new(req, json_string(t->args[i].name));
	}
	in = json_pack("{s:s, s:o, s:o, s:b}", "type", "object", "properties", props, "required",
		       req, "additionalProperties", 0);
	out = json_pack("{s:s, s:s, s:s, s:o}", "name", t->name, "title", t->title, "description",
			t->desc, "inputSchema", in);
	if (out && t->output_schema) {
		json_t *os = json_loads(t->output_schema, 0, NULL);

		if (!os) {
			json_decref(out);
			return NULL;
		}
		json_object_set_new(out, "outputSchema", os);
	}
	return out;
}

/* ------------------------------------------------------------ methods */

static const char *pick_version(const char *asked)
{
	for (size_t i = 0; i < mcp_nversions; i++)
		if (!strcmp(asked, mcp_versions[i]))
			return mcp_versions[i];
	return mcp_versions[0];
}

static int m_initialize(struct mcp_session *s, json_t *id, json_t *params)
{
	json_t *v = params ? json_object_get(params, "protocolVersion") : NULL;
	json_t *caps = params ? json_object_get(params, "capabilities") : NULL;

	if (!json_is_string(v))
		return mcp_reply_error(s, id, MCP_ERR_PARAMS,
				       "initialize: params.protocolVersion must be a string");
	if (caps && !json_is_object(caps))
		return mcp_reply_error(s, id, MCP_ERR_PARAMS,
				       "initialize: params.capabilities must be an object");
	s->proto = pick_version(json_string_value(v));
	/* form mode, recognised as `warden run`'s network.ask does (run/elicit.h) */
	s->elicitation = run_elicit_caps(caps);
	s->initialized = true;
	return mcp_reply(
	    s, id,
	    json_pack("{s:s, s:{s:{s:b}}, s:{s:s, s:s}, s:s}", "protocolVersion", s->proto,
		      "capabilities", "tools", "listChanged", 0, "serverInfo", "name", s->name,
		      "version", s->version, "instructions",
		      "Runs commands in a Warden sandbox: network by host name only as "
		      "the policy allows, files only as it grants. Adding a name to the "
		      "allowlist waits for a person's approval."));
}

static int m_ping(struct mcp_session *s, json_t *id, json_t *params)
{
	(void)params;
	return mcp_reply(s, id, json_object());
}

static int m_tools_list(struct mcp_session *s, json_t *id, json_t *params)
{
	json_t *list = json_array();

	(void)params;
	for (size_t i = 0; list && i < s->ntools; i++) {
		json_t *t = mcp_tool_schema(&s->tools[i]);

		if (!t) {
			json_decref(list);
			return mcp_reply_error(s, id, MCP_ERR_INTERNAL, "a tool's schema");
		}
		json_array_append_new(list, t);
	}
	return mcp_reply(s, id, json_pack("{s:o}", "tools", list));
}

static int m_tools_call(struct mcp_session *s, json_t *id, json_t *params)
{
	json_t *name = params ? json_object_get(params, "name") : NULL;
	json_t *args = params ? json_object_get(params, "arguments") : NULL;
	json_t *meta = params ? json_object_get(params, "_meta") : NULL;
	json_t *progress = json_is_object(meta) ? json_object_get(meta, "progressToken") : NULL;
	const struct mcp_tool *t = NULL;
	json_t *empty = NULL;
	char why[512];
	int ret;

	if (!json_is_string(name))
		return mcp_reply_error(s, id, MCP_ERR_PARAMS,
				       "tools/call: params.name must be a string");
	for (size_t i = 0; i < s->ntools; i++)
		if (!strcmp(s->tools[i].name, json_string_value(name)))
			t = &s->tools[i];
	if (!t) {
		snprintf(why, sizeof(why), "tools/call: unknown tool `%.100s`",
			 json_string_value(name));
		return mcp_reply_error(s, id, MCP_ERR_PARAMS, why);
	}
	if (args && !json_is_object(args))
		return mcp_reply_error(s, id, MCP_ERR_PARAMS,
				       "tools/call: params.arguments must be an object");
	if (!args)
		args = empty = json_object();
	if (progress && !json_is_string(progress) && !json_is_integer(progress))
		progress = NULL;
	/* bad arguments are the tool's error (isError), so the model reads why */
	if (mcp_args_check(t, args, why, sizeof(why))) {
		json_decref(empty);
		return mcp_reply(s, id, mcp_tool_error("%s: bad arguments: %s", t->name, why));
	}
	s->ops.call(s->ops.ctx, t, id, args, progress);
	ret = 0;
	json_decref(empty);
	return ret;
}

static const struct {
	const char *method;
	bool before_init; /* may come before initialize */
	int (*fn)(struct mcp_session *s, json_t *id, json_t *params);
} methods[] = {
    {"initialize", true, m_initialize},
    {"ping", true, m_ping},
    {"tools/list", false, m_tools_list},
    {"tools/call", false, m_tools_call},
};

static void on_notification(struct mcp_session *s, const char *method, json_t *params)
{
	json_t *rid, *reason;

	if (strcmp(method, "notifications/cancelled") || !json_is_object(params))
		return; /* notifications/initialized and the rest: nothing to do */
	rid = json_object_get(params, "requestId");
	reason = json_object_get(params, "reason");
	if (json_is_string(rid) || json_is_integer(rid))
		s->ops.cancelled(s->ops.ctx, rid,
				 json_is_string(reason) ? json_string_value(reason) : NULL);
}

static bool good_id(const json_t *id)
{
	return json_is_string(id) || json_is_integer(id);
}

int mcp_handle_line(struct mcp_session *s, const char *line, size_t len)
{
	json_t *m, *id, *method, *params, *result, *error, *ver;
	json_error_t jerr;
	size_t i;
	int ret = 0;

	while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
		len--;
	for (i = 0; i < len && (line[i] == ' ' || line[i] == '\t'); i++)
		;
	if (i == len)
		return 0;
	if (len > MCP_LINE_MAX)
		return mcp_reply_error(s, NULL, MCP_ERR_INVALID_REQUEST,
				       "the message is longer than 4 MiB");
	m = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (!m) {
		char msg[300];

		snprintf(msg, sizeof(msg), "parse error: %s (column %d)", jerr.text, jerr.column);
		return mcp_reply_error(s, NULL, MCP_ERR_PARSE, msg);
	}
	if (!json_is_object(m)) {
		ret = mcp_reply_error(s, NULL, MCP_ERR_INVALID_REQUEST,
				      json_is_array(m) ? "batches are not accepted: one message a "
							 "line"
						       : "a message is a JSON object");
		goto out;
	}
	id = json_object_get(m, "id");
	method = json_object_get(m, "method");
	params = json_object_get(m, "params");
	result = json_object_get(m, "result");
	error = json_object_get(m, "error");
	ver = json_object_get(m, "jsonrpc");
	if (!json_is_string(ver) || strcmp(json_string_value(ver), "2.0")) {
		/* a notification gets no answer, even a malformed one */
		if (!id && method)
			goto out;
		ret = mcp_reply_error(s, good_id(id) ? id : NULL, MCP_ERR_INVALID_REQUEST,
				      "`jsonrpc` must be \"2.0\"");
		goto out;
	}
	if (!method) {
		/* an answer to one of our requests */
		if (good_id(id) && (!result != !error)) {
			s->ops.answer(s->ops.ctx, id, result, error);
			goto out;
		}
		ret = mcp_reply_error(s, good_id(id) ? id : NULL, MCP_ERR_INVALID_REQUEST,
				      "a message needs a `method` (or is an answer: `id` and one "
				      "of `result`, `error`)");
		goto out;
	}
	if (!json_is_string(method)) {
		if (id)
			ret = mcp_reply_error(s, good_id(id) ? id : NULL, MCP_ERR_INVALID_REQUEST,
					      "`method` must be a string");
		goto out;
	}
	if (params && !json_is_object(params) && !json_is_array(params)) {
		if (id)
			ret = mcp_reply_error(s, good_id(id) ? id : NULL, MCP_ERR_INVALID_REQUEST,
					      "`params` must be an object");
		goto out;
	}
	if (!id) {
		on_notification(s, json_string_value(method), params);
		goto out;
	}
	if (!good_id(id)) {
		ret = mcp_reply_error(s, NULL, MCP_ERR_INVALID_REQUEST,
				      "`id` must be a string or an integer");
		goto out;
	}
	if (params && !json_is_object(params)) {
		ret = mcp_reply_error(s, id, MCP_ERR_PARAMS, "`params` must be an object");
		goto out;
	}
	for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
		if (strcmp(methods[i].method, json_string_value(method)))
			continue;
		if (!s->initialized && !methods[i].before_init)
			ret = mcp_reply_error(s, id, MCP_ERR_INVALID_REQUEST,
					      "the session is not initialized: send `initialize` "
					      "first");
		else
			ret = methods[i].fn(s, id, params);
		goto out;
	}
	{
		char msg[200];

		snprintf(msg, sizeof(msg), "method not found: %.100s", json_string_value(method));
		ret = mcp_reply_error(s, id, MCP_ERR_METHOD, msg);
	}
out:
	json_decref(m);
	return ret;
}

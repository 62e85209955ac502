/* toolcalls.c - which MCP tool calls are in flight, from the newline-delimited JSON-RPC that
 * `warden run`'s stdio relay (run_stdio.c) passes through (toolcalls.h). Pure: no I/O.
 *
 * Theory of operation. Each direction has its own line buffer. A line is complete at its '\n';
 * it is parsed with jansson (a blank line is skipped). A JSON object is one message, a JSON
 * array a batch of them. Client to server: `tools/call` with an id starts a call (replacing one
 * with the same id), `notifications/cancelled` ends the call its params.requestId names. Server
 * to client: a response (no method, an id, result or error) ends the call of that id. Ids are
 * compared as compact JSON text, so 7 and "7" stay apart, as JSON-RPC says. Anything else is
 * relayed without a look. What is not JSON-RPC turns attribution off for the run: its calls
 * end, and the reason is kept for the one event the relay writes, when an earlier line was
 * JSON-RPC (looked_mcp): a program that never spoke it gets no event. */
#include "run/toolcalls.h"
#include "run/mcppin.h"
#include "run/run.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void run_toolcalls_init(struct run_toolcalls *t)
{
	memset(t, 0, sizeof(*t));
	for (int d = 0; d < 2; d++)
		t->line[d] = (struct wd_buf)WD_BUF_INIT;
}

static void call_free(struct mcp_call *c)
{
	free(c->key);
	free(c->id_json);
	memset(c, 0, sizeof(*c));
}

void run_toolcalls_free(struct run_toolcalls *t)
{
	for (unsigned i = 0; i < t->ncalls; i++)
		call_free(&t->calls[i]);
	t->ncalls = 0;
	for (unsigned i = 0; i < t->nlist; i++)
		free(t->list_keys[i]);
	t->nlist = 0;
	for (int d = 0; d < 2; d++)
		wd_buf_free(&t->line[d]);
}

void run_toolcalls_stop(struct run_toolcalls *t, const char *why)
{
	if (!t->off)
		snprintf(t->why, sizeof(t->why), "%s", why);
	t->off = true;
	for (unsigned i = 0; i < t->ncalls; i++)
		call_free(&t->calls[i]);
	t->ncalls = 0;
	for (unsigned i = 0; i < t->nlist; i++)
		free(t->list_keys[i]);
	t->nlist = 0;
	for (int d = 0; d < 2; d++)
		wd_buf_free(&t->line[d]);
}

void run_toolcalls_cut(char *out, const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n > max) {
		n = max;
		while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(out, s, n);
	out[n] = '\0';
}

static int find(const struct run_toolcalls *t, const char *key)
{
	for (unsigned i = 0; i < t->ncalls; i++)
		if (!strcmp(t->calls[i].key, key))
			return (int)i;
	return -1;
}

static bool end_call(struct run_toolcalls *t, const json_t *id)
{
	char *key = json_dumps(id, JSON_COMPACT | JSON_ENCODE_ANY);
	int i = key ? find(t, key) : -1;

	free(key);
	if (i < 0)
		return false;
	call_free(&t->calls[i]);
	memmove(&t->calls[i], &t->calls[i + 1],
		(t->ncalls - (unsigned)i - 1) * sizeof(t->calls[0]));
	t->ncalls--;
	memset(&t->calls[t->ncalls], 0, sizeof(t->calls[0]));
	return true;
}

static void count_tool(struct run_toolcalls *t, const char *name)
{
	unsigned i;

	t->total++;
	for (i = 0; i < t->ntools; i++)
		if (!strcmp(t->tools[i].name, name))
			break;
	if (i == t->ntools) {
		if (t->ntools == RUN_TOOLCALLS_TOOLS - 1 && strcmp(name, RUN_TOOLCALLS_OTHER))
			name = RUN_TOOLCALLS_OTHER; /* the last slot counts all the others */
		for (i = 0; i < t->ntools; i++)
			if (!strcmp(t->tools[i].name, name))
				break;
		if (i == t->ntools)
			run_toolcalls_cut(t->tools[t->ntools++].name, name, RUN_TOOLCALLS_NAME_MAX);
	}
	t->tools[i].calls++;
}

/* a tools/call with @id: in flight until its response */
static bool start_call(struct run_toolcalls *t, const json_t *id, const json_t *params)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *args = json_object_get(params, "arguments");
	char *key, *canon, hex[72];
	struct mcp_call *c;

	key = json_dumps(id, JSON_COMPACT | JSON_ENCODE_ANY);
	if (!key)
		return false;
	if (find(t, key) >= 0)
		end_call(t, id); /* an id used again: the newer request is the one in flight */
	if (t->ncalls == RUN_TOOLCALLS_CALLS) {
		free(key);
		run_toolcalls_stop(t, "more than 64 MCP tool calls in flight at once");
		return true;
	}
	canon =
	    json_dumps(args ? args : json_null(), JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	c = &t->calls[t->ncalls];
	c->key = key;
	c->id_json = malloc(RUN_TOOLCALLS_NAME_MAX + 1);
	if (!canon || !c->id_json) {
		free(canon);
		call_free(c);
		run_toolcalls_stop(t, "out of memory");
		return true;
	}
	run_toolcalls_cut(c->id_json, key, RUN_TOOLCALLS_NAME_MAX);
	run_toolcalls_cut(c->tool, name ? name : "", RUN_TOOLCALLS_NAME_MAX);
	if (run_sha256_hex(canon, strlen(canon), hex)) {
		free(canon);
		call_free(c);
		run_toolcalls_stop(t, "the arguments' SHA-256: libcrypto failed");
		return true;
	}
	memcpy(c->args_sha256, hex + 7, 65);
	free(canon);
	t->ncalls++;
	count_tool(t, c->tool);
	return true;
}

/* @tool's pinned fields have the types a trace holds (trace/file.h): a string description, object
 * inputSchema and annotations, each when present; another tool is not recorded (the trace would
 * not read back) */
static bool def_typed(const json_t *tool)
{
	const json_t *d = json_object_get(tool, "description");
	const json_t *i = json_object_get(tool, "inputSchema");
	const json_t *a = json_object_get(tool, "annotations");

	return (!d || json_is_string(d)) && (!i || json_is_object(i)) && (!a || json_is_object(a));
}

/* a tools/list request with @id: its answer's tools are collected (the oldest of too many
 * unanswered requests is forgotten) */
static void list_asked(struct run_toolcalls *t, const json_t *id)
{
	char *key = json_dumps(id, JSON_COMPACT | JSON_ENCODE_ANY);

	if (!key)
		return;
	if (t->nlist == RUN_TOOLCALLS_LISTS) {
		free(t->list_keys[0]);
		memmove(t->list_keys, t->list_keys + 1, (t->nlist - 1) * sizeof(*t->list_keys));
		t->nlist--;
	}
	t->list_keys[t->nlist++] = key;
}

/* a response with @id: when it answers a tools/list, its tools go into @t->listed */
static void list_answered(struct run_toolcalls *t, const json_t *id, const json_t *result)
{
	char *key = json_dumps(id, JSON_COMPACT | JSON_ENCODE_ANY);
	json_t *tool;
	unsigned i = 0;
	size_t k;

	while (key && i < t->nlist && strcmp(t->list_keys[i], key))
		i++;
	free(key);
	if (!key || i == t->nlist)
		return;
	free(t->list_keys[i]);
	memmove(t->list_keys + i, t->list_keys + i + 1, (t->nlist - i - 1) * sizeof(*t->list_keys));
	t->nlist--;
	json_array_foreach(json_object_get(result, "tools"), k, tool)
	{
		const char *name = json_string_value(json_object_get(tool, "name"));
		json_t *def;
		size_t size;

		if (!name || !name[0] || strlen(name) > RUN_TOOLCALLS_NAME_MAX ||
		    !def_typed(tool) ||
		    (!json_object_get(t->listed, name) &&
		     json_object_size(t->listed) >= RUN_TOOLCALLS_LISTED_MAX))
			continue;
		def = run_mcppin_def(tool);
		size = def ? json_dumpb(def, NULL, 0, JSON_COMPACT) : 0;
		/* a definition too large to pin, or past the trace's room for them, is left out: a
		 * run under the policy then hides it as not pinned (fail closed) */
		if (!def || size > RUN_TOOLCALLS_DEF_MAX ||
		    t->listed_bytes + size > RUN_TOOLCALLS_LISTED_BYTES) {
			json_decref(def);
			continue;
		}
		t->listed_bytes += size;
		json_object_set_new(t->listed, name, def);
	}
}

/* one message; true when the calls in flight changed */
static bool message(struct run_toolcalls *t, enum mcp_dir d, const json_t *m)
{
	const char *method = json_string_value(json_object_get(m, "method"));
	json_t *id = json_object_get(m, "id");
	json_t *params = json_object_get(m, "params");
	bool id_ok = json_is_string(id) || json_is_integer(id);

	if (t->listed && d == MCP_C2S && method && !strcmp(method, "tools/list") && id_ok)
		list_asked(t, id);
	if (t->listed && d == MCP_S2C && !method && id_ok &&
	    json_is_object(json_object_get(m, "result")))
		list_answered(t, id, json_object_get(m, "result"));
	if (d == MCP_C2S && method && !strcmp(method, "tools/call") && id_ok)
		return start_call(t, id, params);
	if (d == MCP_C2S && method && !strcmp(method, "notifications/cancelled")) {
		json_t *rid = json_object_get(params, "requestId");

		return (json_is_string(rid) || json_is_integer(rid)) && end_call(t, rid);
	}
	if (d == MCP_S2C && !method && id_ok &&
	    (json_object_get(m, "result") || json_object_get(m, "error")))
		return end_call(t, id);
	return false;
}

static bool blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

/* a JSON-RPC message ({"jsonrpc": "2.0", ...}) or a batch that starts with one: the program
 * speaks MCP, so attribution going off later is news (a plain program's output is not) */
static bool looks_rpc(const json_t *j)
{
	if (json_is_array(j))
		j = json_array_get(j, 0);
	return json_is_object(j) && json_is_string(json_object_get(j, "jsonrpc"));
}

/* a complete line; true when the calls in flight changed */
static bool line_done(struct run_toolcalls *t, enum mcp_dir d, const char *s, size_t n)
{
	const char *who = d == MCP_C2S ? "the client" : "the server";
	char why[256];
	json_t *j, *m;
	bool changed = false;
	size_t i;

	t->lineno[d]++;
	if (blank(s, n))
		return false;
	j = json_loadb(s, n, JSON_DECODE_ANY, NULL);
	if (!j || !(json_is_object(j) || json_is_array(j))) {
		snprintf(why, sizeof(why), "line %llu from %s is not %s",
			 (unsigned long long)t->lineno[d], who,
			 j ? "a JSON-RPC message (neither an object nor a batch)" : "JSON");
		json_decref(j);
		changed = t->ncalls > 0;
		run_toolcalls_stop(t, why);
		return changed;
	}
	t->looked_mcp |= looks_rpc(j);
	if (json_is_object(j))
		changed = message(t, d, j);
	else
		json_array_foreach(j, i, m)
		{
			if (json_is_object(m) && !t->off)
				changed |= message(t, d, m);
		}
	json_decref(j);
	return changed;
}

size_t run_toolcalls_feed(struct run_toolcalls *t, enum mcp_dir d, const char *buf, size_t len,
			  bool *changed)
{
	struct wd_buf *lb = &t->line[d];
	const char *nl;
	size_t take, used = 0;

	*changed = false;
	while (used < len && !t->off) {
		nl = memchr(buf + used, '\n', len - used);
		take = nl ? (size_t)(nl - (buf + used)) : len - used;
		if (lb->len + take > RUN_TOOLCALLS_LINE_MAX) {
			char why[128];

			snprintf(why, sizeof(why), "a line from %s is longer than %u MiB",
				 d == MCP_C2S ? "the client" : "the server",
				 RUN_TOOLCALLS_LINE_MAX >> 20);
			*changed = t->ncalls > 0;
			run_toolcalls_stop(t, why);
			return nl ? used + take + 1 : len;
		}
		if (wd_buf_append(lb, buf + used, take)) {
			*changed = t->ncalls > 0;
			run_toolcalls_stop(t, "out of memory");
			return len;
		}
		used += take;
		if (!nl)
			break;
		used++; /* the newline */
		*changed = line_done(t, d, lb->data ? lb->data : "", lb->len);
		if (!t->off)
			lb->len = 0;
		if (*changed)
			return used;
	}
	return len;
}

json_t *run_toolcalls_calls_json(const struct run_toolcalls *t)
{
	json_t *a = json_array();

	for (unsigned i = 0; a && i < t->ncalls; i++) {
		const struct mcp_call *c = &t->calls[i];
		json_t *id = json_loads(c->key, JSON_DECODE_ANY, NULL);

		if (!id || strlen(c->key) > RUN_TOOLCALLS_NAME_MAX) {
			json_decref(id);
			id = json_string(c->id_json);
		}
		if (json_array_append_new(a,
					  json_pack("{s:s, s:o, s:s}", "tool", c->tool, "call_id",
						    id, "args_sha256", c->args_sha256))) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

json_t *run_toolcalls_exit_json(const struct run_toolcalls *t, const json_t *denials)
{
	json_t *tools = json_object(), *j;

	for (unsigned i = 0; tools && i < t->ntools; i++) {
		json_int_t den = json_integer_value(json_object_get(denials, t->tools[i].name));

		json_object_set_new(tools, t->tools[i].name,
				    json_pack("{s:I, s:I}", "calls", (json_int_t)t->tools[i].calls,
					      "denials", den));
	}
	j = json_pack("{s:I, s:o}", "calls_total", (json_int_t)t->total, "tools", tools);
	if (j && t->off) {
		char off[300];

		snprintf(off, sizeof(off), "off: %s", t->why);
		json_object_set_new(j, "attribution", json_string(off));
	}
	return j;
}

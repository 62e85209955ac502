/* fuzz_mcp_proto.c - libFuzzer harness: arbitrary bytes, cut into lines, through the JSON-RPC
 * layer of `warden mcp` (mcp/proto.c) with a tool of each argument type; a tool call is
 * answered at once, with a result or an error, and sometimes asks the client a question, so
 * the answers to our own requests are matched too (no I/O: what is sent is dumped and freed). */
#include "mcp/proto.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct mcp_arg run_args[] = {
    {"command", MCP_ARG_STRING_OR_STRINGS, true, 64, 0, 4096, "the command"},
    {"cwd", MCP_ARG_STRING, false, 4096, 0, 0, "a folder"},
    {"timeout_s", MCP_ARG_INT, false, 86400, 1, 0, "seconds"},
};
static const struct mcp_arg list_args[] = {
    {"names", MCP_ARG_STRINGS, false, 8, 0, 253, "names"},
    {"denials_only", MCP_ARG_BOOL, false, 0, 0, 0, "only denials"},
};
static const struct mcp_tool tools[] = {
    {"run", "Run", "runs", run_args, 3, "{\"type\":\"object\"}"},
    {"list", "List", "lists", list_args, 2, NULL},
    {"none", "None", "nothing", NULL, 0, NULL},
};

static struct mcp_session session;

static int send_fn(void *ctx, json_t *msg)
{
	char *text = json_dumps(msg, JSON_COMPACT);

	(void)ctx;
	free(text);
	return 0;
}

static void call_fn(void *ctx, const struct mcp_tool *tool, json_t *id, json_t *args,
		    json_t *progress)
{
	long long req;

	(void)ctx;
	(void)args;
	if (progress)
		mcp_notify(&session, "notifications/progress",
			   json_pack("{s:O, s:i}", "progressToken", progress, "progress", 1));
	if (!strcmp(tool->name, "run"))
		mcp_reply(&session, id, mcp_tool_result(json_pack("{s:i}", "exit", 0)));
	else if (!strcmp(tool->name, "list"))
		mcp_reply(&session, id, mcp_tool_error("no %s", "list"));
	else
		mcp_request(&session, "elicitation/create", json_pack("{s:s}", "message", "?"),
			    &req);
}

static void cancelled_fn(void *ctx, json_t *id, const char *reason)
{
	(void)ctx;
	(void)id;
	(void)reason;
}

static void answer_fn(void *ctx, json_t *id, const json_t *result, const json_t *error)
{
	(void)ctx;
	(void)id;
	if (!result == !error)
		abort(); /* the contract: one of them */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct mcp_ops ops = {
	    .send = send_fn, .call = call_fn, .cancelled = cancelled_fn, .answer = answer_fn};
	const char *p = (const char *)data, *end = p + size;

	mcp_session_init(&session, &ops, tools, sizeof(tools) / sizeof(tools[0]), "warden", "fuzz");
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		mcp_handle_line(&session, p, n);
		p += n + (nl ? 1 : 0);
	}
	return 0;
}

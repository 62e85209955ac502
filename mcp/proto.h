/* mcp_proto.h - internal to launcher/: the MCP server's protocol layer for `warden mcp`.
 *
 * JSON-RPC 2.0, one message a line (the MCP stdio transport), parsed with jansson. This layer
 * is pure: it gets lines, keeps the session's state (initialized, the negotiated revision, the
 * client's capabilities), answers the protocol's own methods (initialize, ping, tools/list) and
 * every malformed frame, and hands tool calls, cancellations and the client's answers to our
 * own requests to the callbacks in struct mcp_ops. It never does I/O itself: what it sends goes
 * through ops->send. tests/unit/test_launcher_mcp.c drives it.
 */
#ifndef WARDEN_LAUNCHER_MCP_PROTO_H
#define WARDEN_LAUNCHER_MCP_PROTO_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* JSON-RPC 2.0 error codes */
enum {
	MCP_ERR_PARSE = -32700,
	MCP_ERR_INVALID_REQUEST = -32600,
	MCP_ERR_METHOD = -32601,
	MCP_ERR_PARAMS = -32602,
	MCP_ERR_INTERNAL = -32603,
};

/* Longest line accepted from the client, newline excluded; a longer one is -32600. */
#define MCP_LINE_MAX (4u << 20)

/* The protocol revisions spoken, newest first; an unknown one requested gets the newest. */
extern const char *const mcp_versions[];
extern const size_t mcp_nversions;

/* argument types of a tool's input (enum mcp_arg_type) */
enum mcp_arg_type {
	MCP_ARG_STRING,
	MCP_ARG_INT,
	MCP_ARG_BOOL,
	MCP_ARG_STRINGS,	   /* an array of strings */
	MCP_ARG_STRING_OR_STRINGS, /* a string or an array of strings */
};

/**
 * struct mcp_arg - one property of a tool's input
 * @name:	property name
 * @type:	what it must be
 * @required:	it must be present
 * @max:	strings: the longest (bytes); arrays: most items (and each item @max_len);
 *		integers: the largest value
 * @min:	integers: the smallest value
 * @max_len:	arrays: the longest item (bytes)
 * @desc:	its description in the JSON Schema
 */
struct mcp_arg {
	const char *name;
	enum mcp_arg_type type;
	bool required;
	long long max;
	long long min;
	size_t max_len;
	const char *desc;
};

/**
 * struct mcp_tool - one tool of the server
 * @name:	its name
 * @title:	a short title
 * @desc:	what it does, for the model
 * @args:	its input's properties (no others are accepted)
 * @nargs:	how many
 * @output_schema: its outputSchema as JSON text, or NULL
 */
struct mcp_tool {
	const char *name;
	const char *title;
	const char *desc;
	const struct mcp_arg *args;
	size_t nargs;
	const char *output_schema;
};

/**
 * struct mcp_ops - what the protocol layer hands on
 * @ctx:	passed to each callback
 * @send:	write one message (a line is made of it); 0 or a negative errno
 * @call:	a tools/call of a known tool whose arguments passed mcp_args_check(): answer it
 *		now or later with mcp_reply(); @id and @args are borrowed (json_incref to keep),
 *		@progress is the request's progressToken or NULL
 * @cancelled:	notifications/cancelled for request @id (borrowed), with the client's @reason
 *		(may be NULL)
 * @answer:	the client answered our request @id: @result or @error (one is NULL)
 */
struct mcp_ops {
	void *ctx;
	int (*send)(void *ctx, json_t *msg);
	void (*call)(void *ctx, const struct mcp_tool *tool, json_t *id, json_t *args,
		     json_t *progress);
	void (*cancelled)(void *ctx, json_t *id, const char *reason);
	void (*answer)(void *ctx, json_t *id, const json_t *result, const json_t *error);
};

/**
 * struct mcp_session - one client's session
 * @ops:	the callbacks
 * @tools:	the server's tools
 * @ntools:	how many
 * @name:	serverInfo.name
 * @version:	serverInfo.version
 * @initialized: initialize was answered
 * @proto:	the negotiated revision (one of mcp_versions), NULL before initialize
 * @elicitation: the client declared the elicitation capability (form mode)
 * @next_id:	the number of our next request to the client
 */
struct mcp_session {
	struct mcp_ops ops;
	const struct mcp_tool *tools;
	size_t ntools;
	const char *name;
	const char *version;
	bool initialized;
	const char *proto;
	bool elicitation;
	long long next_id;
};

/**
 * mcp_session_init() - a session before initialize
 * @s:		filled in
 * @ops:	the callbacks (copied)
 * @tools:	the tools (kept: must outlive @s)
 * @ntools:	how many
 * @name:	serverInfo.name (kept)
 * @version:	serverInfo.version (kept)
 */
void mcp_session_init(struct mcp_session *s, const struct mcp_ops *ops,
		      const struct mcp_tool *tools, size_t ntools, const char *name,
		      const char *version);

/**
 * mcp_handle_line() - handle one line from the client
 * @s:		the session
 * @line:	its bytes, without the newline (need not be NUL-terminated)
 * @len:	how many
 *
 * Requests are answered (or handed to ops->call); notifications are never answered, a
 * malformed one is dropped; a malformed frame gets its JSON-RPC error with the id when one
 * could be read, else null. A blank line is ignored.
 * Return: 0, or the negative errno of ops->send.
 */
int mcp_handle_line(struct mcp_session *s, const char *line, size_t len);

/**
 * mcp_reply() - answer request @id with @result
 * @s:		the session
 * @id:		the request's id (borrowed)
 * @result:	the result (stolen)
 * Return: 0, or the negative errno of ops->send.
 */
int mcp_reply(struct mcp_session *s, json_t *id, json_t *result);

/**
 * mcp_reply_error() - answer request @id (borrowed; NULL: null) with a JSON-RPC error
 * Return: 0, or the negative errno of ops->send.
 */
int mcp_reply_error(struct mcp_session *s, json_t *id, int code, const char *msg);

/**
 * mcp_notify() - send the notification @method with @params (stolen; may be NULL)
 * Return: 0, or the negative errno of ops->send.
 */
int mcp_notify(struct mcp_session *s, const char *method, json_t *params);

/**
 * mcp_request() - send our request @method with @params (stolen) to the client
 * @ret_id:	set to the request's id (a number) so its answer (ops->answer) can be matched
 * Return: 0, or the negative errno of ops->send.
 */
int mcp_request(struct mcp_session *s, const char *method, json_t *params, long long *ret_id);

/**
 * mcp_tool_error() - a tools/call result that reports a tool error (isError: true)
 * @fmt:	the reason, for the model and the person
 * Return: the new result, or NULL without memory.
 */
json_t *mcp_tool_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * mcp_tool_result() - a tools/call result with @structured (stolen) as structuredContent and
 * its JSON text as the one text content item (for clients without structured content)
 * Return: the new result, or NULL without memory.
 */
json_t *mcp_tool_result(json_t *structured);

/**
 * mcp_args_check() - check a tool's arguments against its input properties
 * @tool:	the tool
 * @args:	the arguments (an object)
 * @why:	the reason when they do not fit: the property and what was wrong
 * @wsize:	its size
 * Unknown properties, wrong types, missing required ones, strings or arrays over their
 * bounds, integers out of range all fail.
 * Return: 0, or -EINVAL with @why set.
 */
int mcp_args_check(const struct mcp_tool *tool, const json_t *args, char *why, size_t wsize);

/**
 * mcp_tool_schema() - the tool's tools/list entry: name, title, description, inputSchema
 * (made from its properties), outputSchema (parsed from its text)
 * Return: the new object, or NULL (no memory, or a bad output schema text).
 */
json_t *mcp_tool_schema(const struct mcp_tool *tool);

#endif

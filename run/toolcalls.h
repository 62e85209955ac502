/* toolcalls.h - the MCP tool-call tracker of `warden run`'s stdio relay (toolcalls.c, pure):
 * the bytes relayed in each direction are cut into lines, each line parsed as newline-delimited
 * JSON-RPC (jansson), and the client's `tools/call` requests are kept "in flight" until the
 * server's response with the same id (result or error) passes the other way, or the client's
 * `notifications/cancelled` names it. Anything that is not JSON-RPC (a line that is not JSON, a
 * line over RUN_TOOLCALLS_LINE_MAX, more than RUN_TOOLCALLS_CALLS calls in flight) turns
 * attribution off for the rest of the run, with the reason, and is never an error: the relay relays
 * on. The tracker only reads the bytes; it never changes them. */
#ifndef WARDEN_RUN_TOOLCALLS_H
#define WARDEN_RUN_TOOLCALLS_H

#include "common/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest line the tracker parses (relaying goes on past it, attribution goes off). */
#define RUN_TOOLCALLS_LINE_MAX (4u << 20)
/* Most calls in flight at once (more: attribution off). */
#define RUN_TOOLCALLS_CALLS 64
/* Most tools counted by name for run.exit (more: counted under RUN_TOOLCALLS_OTHER). */
#define RUN_TOOLCALLS_TOOLS 64
/* Longest tool name and call id reported (longer ones are cut at a UTF-8 boundary). */
#define RUN_TOOLCALLS_NAME_MAX 200
#define RUN_TOOLCALLS_OTHER "(other tools)"
/* tools/list requests whose answers the tracker watches for at once (older ones are forgotten),
 * and most tools it collects (a trace's: TRACE_TOOLS_MAX) */
#define RUN_TOOLCALLS_LISTS 8
#define RUN_TOOLCALLS_LISTED_MAX 1024
/* Largest tool definition collected (compact JSON), and all of them together (a trace stays far
 * below its 64 MiB) */
#define RUN_TOOLCALLS_DEF_MAX (64u << 10)
#define RUN_TOOLCALLS_LISTED_BYTES (8u << 20)

struct json_t;

/* Which way the bytes go. */
enum mcp_dir {
	MCP_C2S, /* the client (warden's stdin) to the server (the program's stdin) */
	MCP_S2C, /* the server's stdout to the client */
};

/**
 * struct mcp_call - one tools/call in flight
 * @key:	its id as compact JSON text (7 and "7" are different ids), for matching
 * @id_json:	the id as reported: the JSON text of the id, cut to RUN_TOOLCALLS_NAME_MAX
 * @tool:	params.name ("" when absent), cut to RUN_TOOLCALLS_NAME_MAX bytes
 * @args_sha256: hex SHA-256 of params.arguments dumped compact with sorted keys ("null"
 *		when absent)
 */
struct mcp_call {
	char *key;
	char *id_json;
	char tool[RUN_TOOLCALLS_NAME_MAX + 1];
	char args_sha256[65];
};

/**
 * struct mcp_tool_count - calls of one tool during the run
 * @name:	the tool's name
 * @calls:	tools/call requests for it
 */
struct mcp_tool_count {
	char name[RUN_TOOLCALLS_NAME_MAX + 1];
	uint64_t calls;
};

/**
 * struct run_toolcalls - the tracker's state (zero it, or run_toolcalls_init())
 * @off:	attribution is off for the rest of the run (@why says why)
 * @why:	the reason, for the one event that says so
 * @line:	the line being read in each direction (enum mcp_dir)
 * @lineno:	lines completed in each direction
 * @calls:	in flight, oldest first; @ncalls of them
 * @ncalls:	see @calls
 * @tools:	calls counted by tool name, @ntools of them
 * @ntools:	see @tools
 * @total:	tools/call requests seen
 * @listed:	NULL, or collect here the tools of the server's answers to the client's
 *		tools/list (name -> canonical definition, run_mcppin_def(); a name listed again
 *		keeps its last definition; at most RUN_TOOLCALLS_LISTED_MAX names): set and owned by
 *		the caller (`warden trace` records them for `warden init`'s pin file)
 * @list_keys:	the ids (compact JSON) of tools/list requests not answered yet, @nlist of them
 * @nlist:	see @list_keys
 * @listed_bytes: the compact JSON bytes of the definitions in @listed (a name listed again
 *		counts again: a bound, not a measure)
 */
struct run_toolcalls {
	bool off;
	bool looked_mcp; /* a line was a JSON-RPC message: "attribution off" is worth saying */
	char why[256];
	struct wd_buf line[2];
	uint64_t lineno[2];
	struct mcp_call calls[RUN_TOOLCALLS_CALLS];
	unsigned ncalls;
	struct mcp_tool_count tools[RUN_TOOLCALLS_TOOLS];
	unsigned ntools;
	uint64_t total;
	struct json_t *listed;
	char *list_keys[RUN_TOOLCALLS_LISTS];
	unsigned nlist;
	size_t listed_bytes;
};

/** run_toolcalls_init() - an empty tracker, attribution on. */
void run_toolcalls_init(struct run_toolcalls *t);

/** run_toolcalls_free() - release what @t holds (the calls in flight, the line buffers). */
void run_toolcalls_free(struct run_toolcalls *t);

/**
 * run_toolcalls_feed() - bytes relayed in direction @d
 * @t:		the tracker
 * @d:		which way
 * @buf:	the bytes
 * @len:	how many (> 0)
 * @changed:	set when the calls in flight changed at the end of the last byte consumed
 *		(a call started or ended, or attribution went off: all calls ended)
 *
 * Consumes bytes up to and including the first newline whose line changed the calls in flight,
 * else all @len: the caller tells the gateway before it relays the newline of a line that
 * changed them, and feeds the rest again.
 *
 * Return: how many bytes of @buf were consumed (1..@len).
 */
size_t run_toolcalls_feed(struct run_toolcalls *t, enum mcp_dir d, const char *buf, size_t len,
			  bool *changed);

/**
 * run_toolcalls_cut() - @s copied into @out cut to at most @max bytes at a UTF-8 boundary
 * (jansson's strings are valid UTF-8); @out has room for @max + 1
 */
void run_toolcalls_cut(char *out, const char *s, size_t max);

/**
 * run_toolcalls_stop() - turn attribution off (the relay could not tell the gateway, ...): every
 * call ends; a tracker already off keeps its first reason
 * @t:		the tracker
 * @why:	the reason
 */
void run_toolcalls_stop(struct run_toolcalls *t, const char *why);

struct json_t;

/**
 * run_toolcalls_calls_json() - the calls in flight as the gateway's `mcp` op takes them: an array
 * of {"tool", "call_id", "args_sha256"}, oldest first (call_id is the id's JSON value)
 * Return: a new reference, or NULL (out of memory).
 */
struct json_t *run_toolcalls_calls_json(const struct run_toolcalls *t);

/**
 * run_toolcalls_exit_json() - run.exit's `mcp`: {"calls_total": N, "tools": {NAME: {"calls": N,
 * "denials": N}}} with the denials the gateway counted per tool (@denials: an object NAME ->
 * integer, or NULL: none known), and "attribution": "off: WHY" when it went off
 * Return: a new reference, or NULL (out of memory).
 */
struct json_t *run_toolcalls_exit_json(const struct run_toolcalls *t, const struct json_t *denials);

#endif /* WARDEN_RUN_TOOLCALLS_H */

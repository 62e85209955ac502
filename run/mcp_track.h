/* mcp_track.h - the MCP tool-call tracker of `warden run`'s stdio relay (mcp_track.c, pure):
 * the bytes relayed in each direction are cut into lines, each line parsed as newline-delimited
 * JSON-RPC (jansson), and the client's `tools/call` requests are kept "in flight" until the
 * server's response with the same id (result or error) passes the other way, or the client's
 * `notifications/cancelled` names it. Anything that is not JSON-RPC (a line that is not JSON, a
 * line over MCP_TRACK_LINE_MAX, more than MCP_TRACK_CALLS calls in flight) turns attribution
 * off for the rest of the run, with the reason, and is never an error: the relay relays on.
 * The tracker only reads the bytes; it never changes them. */
#ifndef WARDEN_LAUNCHER_MCP_TRACK_H
#define WARDEN_LAUNCHER_MCP_TRACK_H

#include "common/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest line the tracker parses (relaying goes on past it, attribution goes off). */
#define MCP_TRACK_LINE_MAX (4u << 20)
/* Most calls in flight at once (more: attribution off). */
#define MCP_TRACK_CALLS 64
/* Most tools counted by name for run.exit (more: counted under MCP_TRACK_OTHER). */
#define MCP_TRACK_TOOLS 64
/* Longest tool name and call id reported (longer ones are cut at a UTF-8 boundary). */
#define MCP_TRACK_NAME_MAX 200
#define MCP_TRACK_OTHER "(other tools)"

/* Which way the bytes go. */
enum mcp_dir {
	MCP_C2S, /* the client (warden's stdin) to the server (the program's stdin) */
	MCP_S2C, /* the server's stdout to the client */
};

/**
 * struct mcp_call - one tools/call in flight
 * @key:	its id as compact JSON text (7 and "7" are different ids), for matching
 * @id_json:	the id as reported: the JSON text of the id, cut to MCP_TRACK_NAME_MAX
 * @tool:	params.name ("" when absent), cut to MCP_TRACK_NAME_MAX bytes
 * @args_sha256: hex SHA-256 of params.arguments dumped compact with sorted keys ("null"
 *		when absent)
 */
struct mcp_call {
	char *key;
	char *id_json;
	char tool[MCP_TRACK_NAME_MAX + 1];
	char args_sha256[65];
};

/**
 * struct mcp_tool_count - calls of one tool during the run
 * @name:	the tool's name
 * @calls:	tools/call requests for it
 */
struct mcp_tool_count {
	char name[MCP_TRACK_NAME_MAX + 1];
	uint64_t calls;
};

/**
 * struct mcp_track - the tracker's state (zero it, or mcp_track_init())
 * @off:	attribution is off for the rest of the run (@why says why)
 * @why:	the reason, for the one event that says so
 * @line:	the line being read in each direction (enum mcp_dir)
 * @lineno:	lines completed in each direction
 * @calls:	in flight, oldest first; @ncalls of them
 * @ncalls:	see @calls
 * @tools:	calls counted by tool name, @ntools of them
 * @ntools:	see @tools
 * @total:	tools/call requests seen
 */
struct mcp_track {
	bool off;
	char why[256];
	struct wd_buf line[2];
	uint64_t lineno[2];
	struct mcp_call calls[MCP_TRACK_CALLS];
	unsigned ncalls;
	struct mcp_tool_count tools[MCP_TRACK_TOOLS];
	unsigned ntools;
	uint64_t total;
};

/** mcp_track_init() - an empty tracker, attribution on. */
void mcp_track_init(struct mcp_track *t);

/** mcp_track_free() - release what @t holds (the calls in flight, the line buffers). */
void mcp_track_free(struct mcp_track *t);

/**
 * mcp_track_feed() - bytes relayed in direction @d
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
size_t mcp_track_feed(struct mcp_track *t, enum mcp_dir d, const char *buf, size_t len,
		      bool *changed);

/**
 * mcp_track_stop() - turn attribution off (the relay could not tell the gateway, ...): every
 * call ends; a tracker already off keeps its first reason
 * @t:		the tracker
 * @why:	the reason
 */
void mcp_track_stop(struct mcp_track *t, const char *why);

struct json_t;

/**
 * mcp_track_calls_json() - the calls in flight as the gateway's `mcp` op takes them: an array
 * of {"tool", "call_id", "args_sha256"}, oldest first (call_id is the id's JSON value)
 * Return: a new reference, or NULL (out of memory).
 */
struct json_t *mcp_track_calls_json(const struct mcp_track *t);

/**
 * mcp_track_exit_json() - run.exit's `mcp`: {"calls_total": N, "tools": {NAME: {"calls": N,
 * "denials": N}}} with the denials the gateway counted per tool (@denials: an object NAME ->
 * integer, or NULL: none known), and "attribution": "off: WHY" when it went off
 * Return: a new reference, or NULL (out of memory).
 */
struct json_t *mcp_track_exit_json(const struct mcp_track *t, const struct json_t *denials);

#endif /* WARDEN_LAUNCHER_MCP_TRACK_H */

/* toolcalls.h - a run's MCP tool calls in flight, as its launcher's stdio relay tells them with the
 * control op `mcp` (internal header; toolcalls.c, pure): the annotation every network and DNS event
 * of the run carries while they are in flight (`mcp`, docs/audit.md), and the denials counted
 * per tool during calls (the op's answer, for run.exit). */
#ifndef WARDEN_GATEWAY_MCP_H
#define WARDEN_GATEWAY_MCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Most calls a request may name; most tools counted by name per run. */
#define GW_TOOLCALLS_CALLS 64
#define GW_TOOLCALLS_TOOLS 64
/* Longest tool name and call id (as text) a request may carry. */
#define GW_TOOLCALLS_NAME_MAX 200
/* The slot of a tool in flight that the full table has no room for: it matches no tool's
 * network rules, and its denials are counted under GW_TOOLCALLS_OTHER_NAME. */
#define GW_TOOLCALLS_OTHER GW_TOOLCALLS_TOOLS
#define GW_TOOLCALLS_OTHER_NAME "(other tools)"
/* Most denials kept per call for its explanation (more are counted). */
#define GW_TOOLCALLS_CALL_DENIALS 8

struct json_t;

/**
 * struct gw_toolcalls - one run's calls in flight and its denials per tool
 * @json:	the events' `mcp` object as compact JSON text ({"tool", "call_id" of the newest
 *		call, "in_flight", "calls": [{"tool", "call_id", "args_sha256"}, ...] oldest
 *		first}); NULL when no call is in flight
 * @inflight:	the distinct tools in flight (indexes into @tool, or GW_TOOLCALLS_OTHER for the
 *		tools past the table), @ninflight of them
 * @ninflight:	see @inflight
 * @tool:	tools seen in flight with their denials, @ntools of them
 * @ntools:	see @tool
 * @other_denials: denials during calls of tools past the table
 * @call:	each call in flight, in the set's order: its id (the JSON value) and the denials
 *		during it ({"resource", "port", "denial_id", "reason"}, at most
 *		GW_TOOLCALLS_CALL_DENIALS; @more counts the rest)
 * @ncalls:	see @call
 * @ended:	the calls the last gw_toolcalls_set() ended that had denials: [{"call_id",
 *		"denials", "more"}], for the relay's explanation (NULL: none)
 */
struct gw_toolcalls {
	char *json;
	unsigned inflight[GW_TOOLCALLS_CALLS];
	unsigned ninflight;
	struct {
		char name[GW_TOOLCALLS_NAME_MAX + 1];
		uint64_t denials;
	} tool[GW_TOOLCALLS_TOOLS];
	unsigned ntools;
	uint64_t other_denials;
	struct {
		struct json_t *id;
		struct json_t *denials;
		uint64_t more;
	} call[GW_TOOLCALLS_CALLS];
	unsigned ncalls;
	struct json_t *ended;
};

/**
 * gw_toolcalls_calls_check() - whether @calls is what the `mcp` op takes (pure): an array of at
 * most GW_TOOLCALLS_CALLS objects with exactly "tool" (a string of at most GW_TOOLCALLS_NAME_MAX
 * bytes), "call_id" (a string of at most GW_TOOLCALLS_NAME_MAX bytes, or an integer) and
 * "args_sha256" (64 lowercase hex digits)
 * @calls:	the value
 * @why:	on error, the reason
 * @size:	its size
 *
 * Return: 0, or -EINVAL.
 */
int gw_toolcalls_calls_check(const struct json_t *calls, char *why, size_t size);

/**
 * gw_toolcalls_set() - the calls in flight are now @calls (checked by gw_toolcalls_calls_check())
 * Return: 0, or -ENOMEM (then no call is in flight).
 */
int gw_toolcalls_set(struct gw_toolcalls *m, const struct json_t *calls);

/**
 * gw_toolcalls_denial() - a denial of the run: one more for each distinct tool in flight, and
 * kept with each call in flight for its explanation
 * @m:		the run's calls
 * @resource:	what was denied (a name, an address; may be NULL)
 * @port:	its port (0: none, a DNS query)
 * @denial_id:	the event's denial id (may be NULL)
 * @reason:	the event's reason (may be NULL)
 */
void gw_toolcalls_denial(struct gw_toolcalls *m, const char *resource, unsigned port,
			 const char *denial_id, const char *reason);

/**
 * gw_toolcalls_denials_json() - the denials per tool during calls: {NAME: N, ...}
 * Return: a new reference, or NULL (out of memory).
 */
struct json_t *gw_toolcalls_denials_json(const struct gw_toolcalls *m);

/** gw_toolcalls_free() - release what @m holds. */
void gw_toolcalls_free(struct gw_toolcalls *m);

#endif /* WARDEN_GATEWAY_MCP_H */

/* mcpfilter.h - the MCP tool filter of `warden run`'s stdio relay (mcpfilter.c, pure): with
 * mcp.tools rules in the policy, every line between the client and the wrapped server is
 * looked at whole before it goes on. A tools/call of a denied tool never reaches the server:
 * the filter answers it with a JSON-RPC error naming the denial; a tools/list answer loses its
 * denied tools. What the filter cannot read while rules are in force (a line that is not JSON,
 * has a duplicate key, is too long) is dropped, not relayed: fail closed. Lines it has no
 * business with pass byte for byte. */
#ifndef WARDEN_RUN_MCPFILTER_H
#define WARDEN_RUN_MCPFILTER_H

#include "common/common.h"
#include "run/toolcalls.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_t;
struct wd_policy;

/* Most tools/list requests awaiting their answer (more are refused, never forgotten). */
#define RUN_MCPFILTER_LISTS 64
/* The JSON-RPC error code of a refused call: MCP's "unknown tool" (the tool is hidden too). */
#define RUN_MCPFILTER_CODE (-32602)

/* What the filter did, one note per act, for the audit log. */
enum run_mcpfilter_act {
	RUN_MCPF_REFUSED, /* a tools/call answered by the filter, never relayed */
	RUN_MCPF_HIDDEN,  /* a tool removed from a tools/list answer */
	RUN_MCPF_DROPPED, /* a line neither relayed nor answered (unreadable) */
};

/**
 * struct run_mcpfilter_note - one act of the filter
 * @act:	what it did
 * @dir:	the direction of the line
 * @tool:	the tool's name ("" when there is none), cut to RUN_TOOLCALLS_NAME_MAX bytes
 * @rule:	the policy rule that decided ("" for a dropped line)
 * @reason:	a sentence for a person
 * @denial_id:	the denial's id (a refused call: also in the answer to the client)
 */
struct run_mcpfilter_note {
	enum run_mcpfilter_act act;
	enum mcp_dir dir;
	char tool[RUN_TOOLCALLS_NAME_MAX + 1];
	char rule[700];
	char reason[1200];
	char denial_id[16];
};

/**
 * struct run_mcpfilter - the filter's state (zero it, then set the first four)
 * @policy:	the rules (policy_mcp_tool_allowed())
 * @note:	called for every act (may be NULL)
 * @new_id:	writes a fresh denial id ("dn-" and 12 hex digits) into its @out (at least 16
 *		bytes)
 * @ctx:	given to @note and @new_id
 * @pins:	the pin file's `tools` (mcppin.h), or NULL: no pins; a listed tool that is new or
 *		changed is hidden, and a call of a tool not pinned or seen changed is refused
 * @pin_file:	the pin file's name as the policy writes it, for the rule's text
 * @accept_hint: how a person accepts the server's tools now, for the reason's text (may be
 *		NULL)
 * @unpinned:	names of tools seen new or changed in this run (an object name -> why)
 * @lists:	ids (compact JSON) of the client's tools/list requests not answered yet
 * @nlists:	how many
 * @refused:	calls refused
 * @hidden:	tools hidden from tools/list answers
 * @dropped:	lines dropped
 */
struct run_mcpfilter {
	const struct wd_policy *policy;
	void (*note)(void *ctx, const struct run_mcpfilter_note *n);
	void (*new_id)(void *ctx, char *out, size_t size);
	void *ctx;
	const struct json_t *pins;
	const char *pin_file;
	const char *accept_hint;
	struct json_t *unpinned;
	char *lists[RUN_MCPFILTER_LISTS];
	unsigned nlists;
	uint64_t lineno[2];
	uint64_t refused, hidden, dropped;
};

/**
 * run_mcpfilter_line() - one complete line from direction @d, without its newline
 * @f:		the filter
 * @d:		which way it goes
 * @s:		the line
 * @n:		its length (at most RUN_TOOLCALLS_LINE_MAX; the caller drops longer ones with
 *		run_mcpfilter_drop_long())
 * @fwd:	what goes on in direction @d is appended here, each line with its newline:
 *		the line unchanged, the line rewritten, or nothing
 * @reply:	what goes back the other way is appended here (a refused call's error), each
 *		line with its newline; only ever for a line from the client
 *
 * Return: 0, or -ENOMEM (nothing appended; the caller drops the line and says so).
 */
int run_mcpfilter_line(struct run_mcpfilter *f, enum mcp_dir d, const char *s, size_t n,
		       struct wd_buf *fwd, struct wd_buf *reply);

/**
 * run_mcpfilter_drop_long() - a line of direction @d longer than RUN_TOOLCALLS_LINE_MAX was
 * dropped (the filter reads no longer lines): counted and noted
 */
void run_mcpfilter_drop_long(struct run_mcpfilter *f, enum mcp_dir d);

/**
 * run_mcpfilter_explain() - mcp.explain_denials: the server's line @s (@n bytes, no newline),
 * which ended calls, with one text item added to the result content of each response whose
 * call had denials (pure)
 * @ended:	the gateway's calls that ended with denials ([{"call_id", "denials": [{"resource",
 *		"port", "denial_id", "reason"}], "more"}]); an entry used is removed
 * @policy:	the policy's name, for the sentence
 * @run:	the run's id, for the `warden allowlist` command in it
 * @out:	the line rewritten, with its newline, when something was added
 *
 * A JSON-RPC error (the server's own) gets nothing, nor a result without a content list.
 * Return: 1 (@out holds the line), 0 (nothing added), or -ENOMEM.
 */
int run_mcpfilter_explain(const char *s, size_t n, struct json_t *ended, const char *policy,
			  const char *run, struct wd_buf *out);

/** run_mcpfilter_free() - release what @f holds (the ids awaiting answers). */
void run_mcpfilter_free(struct run_mcpfilter *f);

#endif /* WARDEN_RUN_MCPFILTER_H */

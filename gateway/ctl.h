/* ctl.h - the control protocol's requests (internal header; ctl.c, pure): one
 * JSON object per line, parsed strictly into struct gw_ctl_req, and the line
 * framing of a control connection's input. The server is ctlsrv.c. */
#ifndef WARDEN_GATEWAY_CTL_H
#define WARDEN_GATEWAY_CTL_H

#include "gateway/addr.h"
#include "policy/policy.h"

#include <stddef.h>

struct json_t;

/* Largest control request line (a policy is at most POLICY_MAX_BYTES). */
#define GW_CTL_MAX (POLICY_MAX_BYTES + 65536)
/* Longest run id. */
#define GW_RUN_ID_MAX 64

enum gw_ctl_op {
	GW_CTL_REGISTER = 0,
	GW_CTL_UNREGISTER,
	GW_CTL_REPLACE, /* replace a run's policy (allowlist) */
	GW_CTL_LIST,
	GW_CTL_STATS,
	GW_CTL_MCP,	    /* a run's MCP tool calls in flight (its launcher's stdio relay) */
	GW_CTL_CGROUP_JOIN, /* daemon mode: the daemon moves the launcher's child into the run's
			     * cgroup (cgroup v2's common-ancestor rule) */
	GW_CTL_LEARNED,	    /* what a learn-mode run reached (gateway/learn.h) */
	GW_CTL_ASKS,	    /* a run's pending asks (network.ask: names held for a person) */
	GW_CTL_ANSWER,	    /* a person's answer to one of them */
	GW_CTL_N,
};

/**
 * struct gw_ctl_req - one parsed control request
 * @op:		what is asked
 * @id:		run id (register, unregister, replace)
 * @ifname:	host-side interface (register)
 * @host4:	host-side IPv4 of the run's link (register; family 0 if none)
 * @sandbox4:	the sandbox's IPv4
 * @host6:	host-side IPv6
 * @sandbox6:	the sandbox's IPv6
 * @policy:	policy YAML (register, replace); points into @priv
 * @policy_len:	its length
 * @policy_name: name for messages and audit events (optional)
 * @netns:	register: the run's network namespace is the descriptor sent with the
 *		request ("netns": "fd"); the gateway plumbs it and assigns @ifname and the
 *		addresses (then absent from the request)
 * @calls:	mcp: the calls in flight (a JSON array, gw_toolcalls_calls_check()); a reference
 *		owned by the request
 * @stream:	register with netns: "stream": "events" -- the run's audit events are sent
 *		on this connection as event lines (docs/gateway.md, "Control protocol")
 * @pid:	cgroup_join: the process to move ("pid": a decimal string, 2..INT_MAX)
 * @learn:	register: "learn": true -- the run is in learn mode for its life (any name on
 *		any port within the host's ceiling, the SSRF classes refused, what it reached
 *		recorded for the `learned` op)
 * @shadow:	register: "shadow": true -- the run is a shadow run for its life (`warden run
 *		--shadow`): a denial of its own policy is let through and audited as
 *		"would_deny"; the host's ceiling, the SSRF guard and malformed bytes still deny;
 *		not with @learn
 * @asker:	register: "asker": true -- the run's launcher can ask a person (a terminal):
 *		network.ask names are held for an answer; without it they are denied at once
 * @ask:	answer: which ask ("ask": a decimal string, 1..UINT_MAX)
 * @allow:	answer: "verdict": "allow" (else "deny")
 * @by:		answer: who answered, for the audit log ("by": printable, at most 63 bytes)
 * @priv:	storage owned by the request (gw_ctl_req_clear())
 */
struct gw_ctl_req {
	enum gw_ctl_op op;
	char id[GW_RUN_ID_MAX + 1];
	char ifname[16];
	struct gw_addr host4, sandbox4, host6, sandbox6;
	const char *policy;
	size_t policy_len;
	char policy_name[256];
	bool netns;
	struct json_t *calls;
	bool stream;
	pid_t pid;
	bool learn;
	bool shadow;
	bool asker;
	unsigned ask;
	bool allow;
	char by[64];
	void *priv;
};

/**
 * gw_ctl_parse() - parse one request line strictly
 * @buf:	the line, without its newline
 * @len:	its length (at most GW_CTL_MAX)
 * @req:	the request (clear it with gw_ctl_req_clear() after a 0 return)
 * @why:	on error, a reason for the client
 * @why_size:	size of @why
 *
 * A request is one JSON object: "op" and exactly the keys that op takes,
 * each of the right type and form; duplicate keys, unknown keys, missing
 * keys, bad addresses and over-long values are refused.
 *
 * Return: 0, -EINVAL (malformed: the caller closes the connection), -E2BIG,
 * -ENOMEM.
 */
int gw_ctl_parse(const char *buf, size_t len, struct gw_ctl_req *req, char *why, size_t why_size);

/** gw_ctl_req_clear() - release what @req owns. */
void gw_ctl_req_clear(struct gw_ctl_req *req);

/** gw_ctl_op_name() - "register", ... */
const char *gw_ctl_op_name(enum gw_ctl_op op);

#endif /* WARDEN_GATEWAY_CTL_H */

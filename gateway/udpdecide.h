/* udpdecide.h - the UDP relay's decision as a pure function (internal header; udpdecide.c): a
 * redirected flow's facts in (the synthetic address it was sent to, the name the DNS front bound
 * there, the port, and for QUIC the Initial's server name), a verdict with a reason code out,
 * and the audit text of every reason. No I/O, no clock, no gateway state. */
#ifndef WARDEN_GATEWAY_UDPDECIDE_H
#define WARDEN_GATEWAY_UDPDECIDE_H

#include "gateway/addr.h"
#include "policy/policy.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum gw_udp_reason {
	GW_UR_ALLOWED = 0,
	GW_UR_NO_NAME,	    /* @dst is bound to no name (not synthetic, or expired): no name rule
			       can allow it, and udp to addresses is not supported */
	GW_UR_NO_RULE,	    /* @name:@port matches no `proto: udp` rule */
	GW_UR_CEILING,	    /* the policy's udp rule allows @name:@port, the host's ceiling does
			       not: @ceiling says where */
	GW_UR_SNI_MISMATCH, /* a QUIC Initial's server name @sni is not the bound @name */
	GW_UR_SNI_ABSENT,   /* a QUIC Initial without a server name (or an unreadable one) */
};

/**
 * struct gw_udp_facts - what the relay knows about a new flow
 * @policy:	the run's (effective) policy
 * @dst:	the destination the client sent to (conntrack's original tuple)
 * @port:	its port
 * @bound:	the name the DNS front bound to @dst, or NULL
 * @quic:	the flow's first datagram is a QUIC Initial and its ClientHello was read
 *		(@sni then says what it named)
 * @sni:	with @quic: the ClientHello's server name, "" or NULL when it has none
 */
struct gw_udp_facts {
	const struct wd_policy *policy;
	const struct gw_addr *dst;
	uint16_t port;
	const char *bound;
	bool quic;
	const char *sni;
};

/**
 * struct gw_udp_verdict - a decision and what it rests on (pointers into the facts and policy)
 * @allow:	relay the flow to @name (the gateway resolves it)
 * @reason:	why (gw_udp_reason_text() gives the audit text)
 * @rule:	the allowing rule (index in the policy's rules), or -1
 * @name:	the bound name, or NULL (NO_NAME)
 * @dst:	the destination
 * @port:	its port
 * @sni:	SNI_MISMATCH: the name the Initial gave
 * @ceiling:	CEILING: where the ceiling refuses it
 */
struct gw_udp_verdict {
	bool allow;
	enum gw_udp_reason reason;
	int rule;
	const char *name;
	const struct gw_addr *dst;
	uint16_t port;
	const char *sni;
	struct policy_why ceiling;
};

/**
 * gw_udp_decide() - the verdict on a new UDP flow (pure)
 * @f:		the facts
 * @v:		the verdict (always written)
 *
 * A flow to an address bound to no name is denied (NO_NAME). The bound name is allowed on
 * @f->port by the first `proto: udp` rule that matches it (policy_match_proto()); a TCP rule
 * never allows a datagram. A denial only the host's ceiling makes is CEILING instead of
 * NO_RULE. With @f->quic the Initial's server name must equal the bound name (SNI_MISMATCH:
 * the name the sandbox resolved is not the one its TLS names; SNI_ABSENT: none to check).
 */
void gw_udp_decide(const struct gw_udp_facts *f, struct gw_udp_verdict *v);

/**
 * gw_udp_reason_text() - the audit text of @v's reason
 * @v:		a verdict
 * @policy_name: the policy's file name, for the text
 * @buf:	room for the text (a literal may be returned instead)
 * @size:	its size
 * Return: the text.
 */
const char *gw_udp_reason_text(const struct gw_udp_verdict *v, const char *policy_name, char *buf,
			       size_t size);

/**
 * gw_udp_reason_name() - the reason's short name for the audit event's `reason` field
 * ("no_name", "no_rule", "ceiling", "sni_mismatch", "sni_absent"; "allowed")
 * @r:		a reason
 * Return: a literal.
 */
const char *gw_udp_reason_name(enum gw_udp_reason r);

#endif /* WARDEN_GATEWAY_UDPDECIDE_H */

/* udpdecide.c - the UDP relay's decision, pure: a redirected flow's facts in (udpdecide.h), a
 * verdict and a reason code out, and the audit text of each reason. A flow is allowed by a name
 * only: the name the DNS front bound to the synthetic address the program sent to, on a port a
 * `proto: udp` rule of the run's policy (bounded by the host's ceiling) lists. A QUIC flow's
 * Initial must name that same host in its ClientHello, as a TLS connection's SNI must. */
#include "gateway/udpdecide.h"
#include "gateway/proto/proto.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

static void verdict(struct gw_udp_verdict *v, bool allow, enum gw_udp_reason r)
{
	v->allow = allow;
	v->reason = r;
}

void gw_udp_decide(const struct gw_udp_facts *f, struct gw_udp_verdict *v)
{
	memset(v, 0, sizeof(*v));
	v->rule = -1;
	v->dst = f->dst;
	v->port = f->port;
	v->name = f->bound;
	if (!f->bound || !f->bound[0] || !f->policy) {
		v->name = NULL;
		verdict(v, false, GW_UR_NO_NAME);
		return;
	}
	v->rule = policy_match_proto(f->policy, f->bound, f->port, POLICY_PROTO_UDP);
	if (v->rule < 0) {
		v->rule = -1;
		verdict(v, false,
			policy_ceiling_why_proto(f->policy, f->bound, f->port, POLICY_PROTO_UDP,
						 &v->ceiling)
			    ? GW_UR_CEILING
			    : GW_UR_NO_RULE);
		return;
	}
	if (f->quic && (!f->sni || !f->sni[0])) {
		verdict(v, false, GW_UR_SNI_ABSENT);
		return;
	}
	if (f->quic && !dns_name_equal(f->sni, f->bound)) {
		v->sni = f->sni;
		verdict(v, false, GW_UR_SNI_MISMATCH);
		return;
	}
	verdict(v, true, GW_UR_ALLOWED);
}

const char *gw_udp_reason_text(const struct gw_udp_verdict *v, const char *policy_name, char *buf,
			       size_t size)
{
	char at[INET6_ADDRSTRLEN] = "?";
	char why[500];

	switch (v->reason) {
	case GW_UR_ALLOWED:
		return "allowed";
	case GW_UR_NO_NAME:
		if (v->dst)
			gw_addr_str(v->dst, at, sizeof(at));
		snprintf(buf, size,
			 "udp to %s:%u: the address names no host the run resolved (udp is "
			 "allowed by name only)",
			 at, v->port);
		return buf;
	case GW_UR_NO_RULE:
		snprintf(buf, size,
			 "udp to %s:%u is not allowed by policy %s (no `proto: udp` rule "
			 "matches)",
			 v->name, v->port, policy_name);
		return buf;
	case GW_UR_CEILING:
		policy_ceiling_reason(&v->ceiling, why, sizeof(why));
		snprintf(buf, size, "udp to %s:%u is %s", v->name, v->port, why);
		return buf;
	case GW_UR_SNI_MISMATCH:
		snprintf(buf, size,
			 "QUIC Initial names %s but the flow is bound to %s (domain fronting)",
			 v->sni, v->name);
		return buf;
	case GW_UR_SNI_ABSENT:
		snprintf(buf, size,
			 "QUIC Initial to %s:%u has no server name to check against the bound "
			 "name",
			 v->name, v->port);
		return buf;
	}
	return "denied";
}

const char *gw_udp_reason_name(enum gw_udp_reason r)
{
	static const char *const names[] = {
	    [GW_UR_ALLOWED] = "allowed",	   [GW_UR_NO_NAME] = "no_name",
	    [GW_UR_NO_RULE] = "no_rule",	   [GW_UR_CEILING] = "ceiling",
	    [GW_UR_SNI_MISMATCH] = "sni_mismatch", [GW_UR_SNI_ABSENT] = "sni_absent",
	};

	return (size_t)r < sizeof(names) / sizeof(names[0]) && names[r] ? names[r] : "denied";
}

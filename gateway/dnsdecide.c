/* dnsdecide.c - the DNS front's decision, pure: a query's facts in (its name, type, the run's
 * policy, learn mode), a verdict and a reason code out (decide.h), and the audit text of each
 * reason. The query types table says which types are never forwarded and why; a name no rule
 * allows gets NXDOMAIN and never goes upstream. Learn mode's name rule is decide.c's
 * (gw_learn_allows(), gw_learn_name_ok()). The DNS exfiltration budget (gw_dns_decide_budget())
 * is a second step over the verdict, its arithmetic dnsbudget.c's over the run's state. */
#include "gateway/decide.h"
#include "common/common.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

int gw_name_allowed(const struct wd_policy *p, const char *name)
{
	for (size_t i = 0; p && i < p->nrules; i++) {
		int m;

		if (p->rules[i].kind == POLICY_RULE_CIDR)
			continue;
		m = policy_match_proto(p, name, p->rules[i].ports[0], p->rules[i].proto);
		if (m >= 0)
			return m;
	}
	return -ENOENT;
}

/*
 * Query types by name, and those that are never forwarded for any name: zone
 * transfers, meta-types (RFC 6895 §3.1: 128-255 are QTYPEs and meta-TYPEs, not
 * data), the OPT pseudo-record (never a question), and the obsolete or
 * experimental types that carry arbitrary data and that no client asks for.
 * They get REFUSED (with an EDE "Not Supported" where the query has EDNS).
 * ANY is answered NOTIMP instead (RFC 8482 lets a server decline it; "not
 * implemented" tells a stub to ask for the types it wants). The common types
 * come first: the table is searched once per query.
 */
static const struct qtype_info {
	uint16_t type;
	const char *name;
	const char *refused; /* why it is never forwarded, or NULL */
} qtypes[] = {
    {DNS_TYPE_A, "A", NULL},
    {DNS_TYPE_AAAA, "AAAA", NULL},
    {DNS_TYPE_HTTPS, "HTTPS", NULL},
    {DNS_TYPE_SVCB, "SVCB", NULL},
    {DNS_TYPE_CNAME, "CNAME", NULL},
    {DNS_TYPE_TXT, "TXT", NULL},
    {DNS_TYPE_MX, "MX", NULL},
    {DNS_TYPE_SRV, "SRV", NULL},
    {DNS_TYPE_NS, "NS", NULL},
    {DNS_TYPE_SOA, "SOA", NULL},
    {DNS_TYPE_PTR, "PTR", NULL},
    {DNS_TYPE_CAA, "CAA", NULL},
    {DNS_TYPE_ANY, "ANY", NULL},
    {DNS_TYPE_AXFR, "AXFR", "zone transfers are refused"},
    {DNS_TYPE_IXFR, "IXFR", "zone transfers are refused"},
    {DNS_TYPE_NULL, "NULL", "NULL records (arbitrary data) are never forwarded"},
    {DNS_TYPE_OPT, "OPT", "OPT is a pseudo-record, not a question type"},
    {DNS_TYPE_MAILB, "MAILB", "MAILB is an obsolete meta-query"},
    {DNS_TYPE_MAILA, "MAILA", "MAILA is an obsolete meta-query"},
    {DNS_TYPE_TKEY, "TKEY", "TKEY is a meta-type, not data"},
    {DNS_TYPE_TSIG, "TSIG", "TSIG is a meta-type, not data"},
    {3, "MD", "MD is obsolete (use MX)"},
    {4, "MF", "MF is obsolete (use MX)"},
    {7, "MB", "MB is an experimental mail type no client asks for"},
    {8, "MG", "MG is an experimental mail type no client asks for"},
    {9, "MR", "MR is an experimental mail type no client asks for"},
    {0, "TYPE0", "type 0 is reserved"},
};

static const struct qtype_info *qtype_find(uint16_t t)
{
	for (size_t i = 0; i < WD_ARRAY_SIZE(qtypes); i++)
		if (qtypes[i].type == t)
			return &qtypes[i];
	return NULL;
}

const char *gw_dns_qtype_name(uint16_t t, char *buf, size_t size)
{
	const struct qtype_info *qi = qtype_find(t);

	if (qi)
		return qi->name;
	snprintf(buf, size, "TYPE%u", t);
	return buf;
}

const char *gw_dns_qtype_refused(uint16_t t)
{
	const struct qtype_info *qi = qtype_find(t);

	if (qi)
		return qi->refused;
	if (t >= 128 && t <= 255)
		return "meta-types (128-255) are not data";
	return NULL;
}

/*
 * The name a query is decided by: the question's name, except that an SRV
 * query for a service name "_service._proto.NAME" (RFC 2782) is decided by
 * NAME -- host names in a policy have no underscore labels, and a service of
 * an allowed name is that name's to tell.
 */
static const char *decided_name(const struct dns_query *q)
{
	const char *n = q->qname, *d1, *d2;

	if (q->qtype != DNS_TYPE_SRV || n[0] != '_' || !(d1 = strchr(n, '.')) || d1[1] != '_' ||
	    !(d2 = strchr(d1 + 1, '.')) || !d2[1])
		return n;
	return d2 + 1;
}

static void dns_verdict(struct gw_dns_verdict *v, enum gw_dns_action action,
			enum gw_dns_reason reason, bool allowed, uint16_t rcode)
{
	v->action = action;
	v->reason = reason;
	v->allowed = allowed;
	v->rcode = rcode;
}

/* @name, which no network.allow rule allows, by the rules of the tools in flight: true with
 * @v's rule and tools set, else false with @v a denial (NOT_ALLOWED, CEILING, TOOL_ONLY) */
static bool by_tools(const struct gw_dns_facts *f, const char *name, struct gw_dns_verdict *v)
{
	struct gw_tool_hit h;
	enum gw_dns_reason r = GW_DR_NOT_ALLOWED;

	v->rule = -1;
	if (gw_tools_match(f->policy, f->calls, name, 0, &h)) {
		v->tool = h.tool;
		v->rule = h.rule;
		v->tools = h.allow;
		return true;
	}
	if (policy_ceiling_why(f->policy, name, 0, &v->ceiling)) {
		r = GW_DR_CEILING;
	} else if (h.ceiling) {
		v->ceiling = h.why;
		r = GW_DR_CEILING;
	} else if (h.would) {
		v->tools = h.would;
		v->policy = f->policy;
		v->calls = f->calls;
		r = GW_DR_TOOL_ONLY;
	}
	dns_verdict(v, GW_DNS_RCODE, r, false, DNS_RCODE_NXDOMAIN);
	return false;
}

void gw_dns_decide(const struct gw_dns_facts *f, struct gw_dns_verdict *v)
{
	const struct dns_query *q = f->q;

	memset(v, 0, sizeof(*v));
	v->rule = -1;
	v->tool = -1;
	if (f->parsed != DNS_OK) {
		/* answered only when the header allows an answer (never a message with QR set) */
		dns_verdict(v, q->header_ok ? GW_DNS_RCODE : GW_DNS_SILENT, GW_DR_MALFORMED, false,
			    q->rcode_hint);
		return;
	}
	if (!f->policy) {
		dns_verdict(v, GW_DNS_RCODE, GW_DR_NO_RUN, false, DNS_RCODE_REFUSED);
		return;
	}
	if (q->qclass != DNS_CLASS_IN) {
		dns_verdict(v, GW_DNS_RCODE, GW_DR_CLASS, false, DNS_RCODE_REFUSED);
		return;
	}
	v->detail = gw_dns_qtype_refused(q->qtype);
	if (v->detail) {
		dns_verdict(v, GW_DNS_RCODE, GW_DR_TYPE_REFUSED, false, DNS_RCODE_REFUSED);
		v->ede = true;
		v->ede_code = DNS_EDE_NOT_SUPPORTED;
		return;
	}
	if (q->qtype == DNS_TYPE_HTTPS || q->qtype == DNS_TYPE_SVCB) {
		if (q->qtype == DNS_TYPE_HTTPS && !strcmp(q->qname, GW_LIVENESS_NAME))
			dns_verdict(v, GW_DNS_LIVENESS, GW_DR_LIVENESS, true, DNS_RCODE_NOERROR);
		else
			dns_verdict(v, GW_DNS_EMPTY, GW_DR_EMPTY_TYPE, true, DNS_RCODE_NOERROR);
		return;
	}
	if (f->learn) {
		/* any name, within the host's ceiling; allowed by no rule of the policy */
		v->learn = true;
		if (!gw_learn_allows(f->policy, decided_name(q), 0, &v->ceiling)) {
			dns_verdict(v, GW_DNS_RCODE,
				    gw_learn_name_ok(decided_name(q)) ? GW_DR_CEILING
								      : GW_DR_NOT_ALLOWED,
				    false, DNS_RCODE_NXDOMAIN);
			v->ede = true;
			v->ede_code = DNS_EDE_BLOCKED;
			return;
		}
	} else if ((v->rule = gw_name_allowed(f->policy, decided_name(q))) < 0 &&
		   !by_tools(f, decided_name(q), v)) {
		v->ede = true;
		v->ede_code = DNS_EDE_BLOCKED;
		return;
	}
	if (q->qtype == DNS_TYPE_A || q->qtype == DNS_TYPE_AAAA) {
		dns_verdict(v, GW_DNS_SYNTHETIC, GW_DR_SYNTHETIC, true, DNS_RCODE_NOERROR);
		return;
	}
	if (q->qtype == DNS_TYPE_ANY || !f->upstream) {
		/* a denial all the same (counted in the run's denials) */
		dns_verdict(v, GW_DNS_RCODE, GW_DR_NOT_ANSWERED, false, DNS_RCODE_NOTIMP);
		return;
	}
	dns_verdict(v, GW_DNS_FORWARD, GW_DR_FORWARDED, true, DNS_RCODE_NOERROR);
}

uint64_t gw_dns_budget_bytes(const struct wd_policy *p)
{
	if (!p)
		return 0;
	if (!p->limits.dns_label_set)
		return (uint64_t)GW_DNSB_DEFAULT_KIB * 1024;
	return (uint64_t)p->limits.dns_label_kib_per_min * 1024;
}

/* the rules @v's rule is one of: the policy's, or its tool's (mcp.tools.NAME.network) */
static const struct wd_policy *rule_set(const struct wd_policy *p, const struct gw_dns_verdict *v)
{
	if (v->tool < 0)
		return p;
	if ((size_t)v->tool >= p->ntool_net)
		return NULL;
	return p->tool_net[v->tool].net;
}

void gw_dns_decide_budget(const struct gw_dns_facts *f, struct gw_dns_verdict *v)
{
	const struct wd_policy *rs;
	const struct policy_rule *r;
	const char *name;
	uint64_t limit;

	if (!f->budget || !f->policy || v->learn || v->rule < 0 ||
	    (v->action != GW_DNS_SYNTHETIC && v->action != GW_DNS_FORWARD))
		return;
	rs = rule_set(f->policy, v);
	if (!rs || (size_t)v->rule >= rs->nrules)
		return;
	r = &rs->rules[v->rule];
	if (r->kind != POLICY_RULE_WILDCARD || !(limit = gw_dns_budget_bytes(f->policy)))
		return;
	/* a name an exact rule names too is no channel, whichever rule came first */
	name = decided_name(f->q);
	for (size_t i = 0; i < rs->nrules; i++)
		if (rs->rules[i].kind == POLICY_RULE_HOST && !strcmp(rs->rules[i].host, name))
			return;
	switch (gw_dnsb_charge(f->budget, r->host, f->q->qname, f->q->qname_wire,
			       f->q->qname_wire_len, limit, f->now, NULL)) {
	case GW_DNSB_SEEN:
	case GW_DNSB_CHARGED:
		return;
	case GW_DNSB_OVER:
		v->first = true;
		break;
	case GW_DNSB_OVER_AGAIN:
		v->first = false;
		break;
	}
	dns_verdict(v, GW_DNS_RCODE, GW_DR_DNS_BUDGET, false, DNS_RCODE_REFUSED);
	v->ede = true;
	v->ede_code = DNS_EDE_OTHER;
	v->parent = r->host;
	v->limit = limit;
}

bool gw_dns_decide_shadow(const struct gw_dns_facts *f, struct gw_dns_verdict *v,
			  struct gw_dns_verdict *would)
{
	struct gw_dns_facts lf = *f;

	gw_dns_decide(f, v);
	if (v->allowed || (v->reason != GW_DR_NOT_ALLOWED && v->reason != GW_DR_TOOL_ONLY))
		return false;
	*would = *v;
	lf.learn = true;
	gw_dns_decide(&lf, v);
	if (!v->allowed) {
		/* the host's ceiling, or ANY as for an allowed name, say so; what is no host name
		 * keeps the policy's denial */
		if (v->reason != GW_DR_CEILING && v->reason != GW_DR_NOT_ANSWERED)
			*v = *would;
		return false;
	}
	v->learn = false; /* allowed by no rule, and not in learn mode: the event says would_deny */
	return true;
}

enum gw_ask_action gw_ask_decide(const struct gw_dns_facts *f, const struct gw_dns_verdict *v,
				 bool asker, bool tcp, int *ret_rule)
{
	const struct dns_query *q = f->q;
	int m;

	if (f->parsed != DNS_OK || !f->policy || f->learn ||
	    (v->reason != GW_DR_NOT_ALLOWED && v->reason != GW_DR_TOOL_ONLY) ||
	    (q->qtype != DNS_TYPE_A && q->qtype != DNS_TYPE_AAAA))
		return GW_ASK_NONE;
	m = policy_ask_match(f->policy, q->qname, 0);
	if (m < 0)
		return GW_ASK_NONE;
	*ret_rule = m;
	if (!asker)
		return GW_ASK_NOBODY;
	return tcp ? GW_ASK_TCP : GW_ASK_HOLD;
}

const char *gw_dns_reason_text(const struct gw_dns_verdict *v, const struct dns_query *q,
			       const char *policy_name, const struct gw_addr *peer, char *buf,
			       size_t size)
{
	char t[INET6_ADDRSTRLEN];

	switch (v->reason) {
	case GW_DR_MALFORMED:
		snprintf(buf, size, "malformed: %s", q->why ? q->why : "not a DNS query");
		return buf;
	case GW_DR_NO_RUN:
		snprintf(buf, size, "no run owns this ingress address pair (%s)",
			 gw_addr_str(peer, t, sizeof(t)));
		return buf;
	case GW_DR_CLASS:
		return "only class IN is answered";
	case GW_DR_TYPE_REFUSED:
		snprintf(buf, size, "%s queries are refused: %s",
			 gw_dns_qtype_name(q->qtype, t, sizeof(t)), v->detail);
		return buf;
	case GW_DR_EMPTY_TYPE:
		return "HTTPS/SVCB records are answered empty (no ECH, no hints)";
	case GW_DR_LIVENESS:
		return "the run's network answers: the liveness check (an HTTPS query for a "
		       ".invalid name that warden run sends before the program starts) reached "
		       "the gateway; answered empty, never asked upstream";
	case GW_DR_NOT_ALLOWED:
		snprintf(buf, size, "%s is not allowed by policy %s", q->qname, policy_name);
		return buf;
	case GW_DR_TOOL_ONLY: {
		char why[400];

		snprintf(buf, size, "%s is not allowed by policy %s now: %s", q->qname, policy_name,
			 gw_tools_only_text(v->policy, v->tools, v->calls, why, sizeof(why)));
		return buf;
	}
	case GW_DR_CEILING: {
		char why[500];

		snprintf(buf, size, "%s is %s", q->qname,
			 policy_ceiling_reason(&v->ceiling, why, sizeof(why)));
		return buf;
	}
	case GW_DR_SYNTHETIC:
		return v->learn ? "synthetic address (learn mode)" : "synthetic address";
	case GW_DR_NOT_ANSWERED:
		return "ANY queries are not answered";
	case GW_DR_FORWARDED:
		return v->learn ? "forwarded upstream (addresses replaced; learn mode)"
				: "forwarded upstream (addresses replaced)";
	case GW_DR_DNS_BUDGET:
		/* short: an EDE text holds 256 bytes, and the denial id goes after it; the event's
		 * resource names the name */
		snprintf(
		    buf, size,
		    "DNS exfiltration budget spent: at most %llu KiB of new names a minute below "
		    "%s (limits.dns_label_kib_per_min); names asked before still answer",
		    (unsigned long long)(v->limit / 1024), v->parent ? v->parent : "?");
		return buf;
	}
	return "denied";
}

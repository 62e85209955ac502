/* decide.c - the gateway's decisions, pure: bytes and facts in, a verdict and
 * a reason code out (decide.h). This file: the TCP verdicts (at accept, after the first bytes,
 * per HTTP request, the proxy port), learn mode's rules, the upstream addresses' classes and
 * every TCP reason's audit text; sniff.c reads the first bytes, dnsdecide.c decides DNS
 * queries. The TCP path asks at accept and when the
 * client's first bytes came (conn.c), for each later HTTP request (relayconn.c)
 * and for each address a name resolved to (conn.c); the DNS front once per
 * query (dnsanswer.c). Nothing here
 * reads a socket, the clock or the gateway's state; every denial's audit text
 * is made here from its reason code, so the words are the same wherever the
 * decision is taken.
 *
 * The rules, in one place:
 *   - a synthetic address carries the name the DNS front bound to it: the
 *     connection is decided by that name and port; the client's first bytes
 *     may then not name another host (an SNI or Host that differs is domain
 *     fronting);
 *   - any other address is decided by the name its first bytes give (TLS SNI,
 *     with Encrypted Client Hello the outer one; HTTP Host), else by a cidr
 *     rule for the address itself, else denied;
 *   - the proxy port takes CONNECT host:port and absolute-form http://
 *     requests, and SOCKS5 CONNECT requests, decided by the target's name and port (an
 *     address literal by the cidr rules);
 *   - a resolved address in a special-purpose range, the gateway's own pools
 *     or the host's own addresses is refused unless a cidr rule names it;
 *   - a DNS query for a name no rule allows gets NXDOMAIN and never goes
 *     upstream; refused types get REFUSED for every name;
 *   - learn mode (a run registered with "learn": true, for `warden trace`) replaces
 *     the run's rules by "any name on any port" within the host's ceiling; an address
 *     literal is decided by its class alone (no cidr rule lifts the SSRF guard), and
 *     fronting and malformed bytes are denied as in any run. */
#include "gateway/decide.h"
#include "common/common.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------ learn mode */

/* a name learn mode may allow: labels of letters, digits, '-' and '_' (1..63 bytes each), at most
 * PROTO_NAME_MAX in all; anything else (and an address literal) is no name */
bool gw_learn_name_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0, label = 0;
	struct gw_addr a;

	if (!n || n > PROTO_NAME_MAX || !gw_addr_parse(s, &a))
		return false;
	for (size_t i = 0; i <= n; i++) {
		char c = s[i];

		if (c == '.' || !c) {
			if (!label || label > 63)
				return false;
			label = 0;
			continue;
		}
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_'))
			return false;
		label++;
	}
	return true;
}

bool gw_learn_allows(const struct wd_policy *p, const char *name, uint16_t port,
		     struct policy_why *why)
{
	struct policy_why w;
	int m;

	if (!gw_learn_name_ok(name))
		return false;
	if (!p || !p->bounded)
		return true;
	memset(&w, 0, sizeof(w));
	/* the ceiling exactly as it bounds a normal run: its denied names first, then the allow
	 * list in force for the user (none: `allow: any`) */
	if (p->denied && (m = policy_match(p->denied, name, 0)) >= 0) {
		w.denied = true;
		w.from = p->denied->rules[m].from;
		w.rule = p->denied->rules[m].text;
	} else if (!p->ceiling_allow || (port ? policy_match(p->ceiling_allow, name, port)
					      : policy_match_name(p->ceiling_allow, name)) >= 0) {
		return true;
	} else if ((m = policy_match_name(p->ceiling_allow, name)) >= 0) {
		w.from = p->ceiling_allow->rules[m].from;
		w.rule = p->ceiling_allow->rules[m].text;
	} else {
		w.from = p->ceiling_from;
	}
	if (why)
		*why = w;
	return false;
}

bool gw_learn_allows_addr(const struct wd_policy *p, const struct gw_addr *a, uint16_t port,
			  struct policy_why *why)
{
	if (!p || !p->bounded || !p->ceiling_allow ||
	    policy_match_addr(p->ceiling_allow, a->family, a->a, port) >= 0)
		return true;
	if (why) {
		memset(why, 0, sizeof(*why));
		why->from = p->ceiling_from;
	}
	return false;
}

/* ------------------------------------------------------------ tools' own rules */

/* a call of @tool is in flight in @calls */
static bool in_flight(const struct gw_toolcalls *calls, const char *tool)
{
	for (unsigned i = 0; calls && i < calls->ninflight && i < GW_TOOLCALLS_CALLS; i++) {
		unsigned k = calls->inflight[i];

		if (k < calls->ntools && k < GW_TOOLCALLS_TOOLS &&
		    !strcmp(calls->tool[k].name, tool))
			return true;
	}
	return false;
}

bool gw_tools_match(const struct wd_policy *p, const struct gw_toolcalls *calls, const char *name,
		    uint16_t port, struct gw_tool_hit *h)
{
	memset(h, 0, sizeof(*h));
	h->tool = h->rule = -1;
	for (size_t i = 0; p && name && i < p->ntool_net && i < POLICY_TOOL_NET_MAX; i++) {
		const struct policy_tool_net *t = &p->tool_net[i];
		bool live = in_flight(calls, t->tool);
		int m = port ? policy_match(t->net, name, port) : policy_match_name(t->net, name);

		if (m < 0) {
			/* a rule of a tool in flight that only the ceiling refuses */
			if (live && !h->ceiling && policy_ceiling_why(t->net, name, port, &h->why))
				h->ceiling = true;
			continue;
		}
		if (live) {
			if (!h->allow) {
				h->tool = (int)i;
				h->rule = m;
			}
			h->allow |= 1ull << i;
		} else {
			if (!h->allow && !h->would) {
				h->tool = (int)i;
				h->rule = m;
			}
			h->would |= 1ull << i;
		}
	}
	return h->allow != 0;
}

const char *gw_tools_rule_text(const struct wd_policy *p, int tool, int rule, uint64_t tools,
			       char *buf, size_t size)
{
	const struct wd_policy *net;
	size_t n;

	if (rule < 0 || !p)
		return NULL;
	if (tool < 0)
		return (size_t)rule < p->nrules ? p->rules[rule].text : NULL;
	if ((size_t)tool >= p->ntool_net || !(net = p->tool_net[tool].net) ||
	    (size_t)rule >= net->nrules)
		return NULL;
	snprintf(buf, size, "mcp.tools.%s.network: %s", p->tool_net[tool].tool,
		 net->rules[rule].text);
	tools &= ~(1ull << tool);
	for (size_t i = 0, k = 0; tools && i < p->ntool_net && i < 64; i++) {
		if (!(tools & (1ull << i)))
			continue;
		n = strlen(buf);
		snprintf(buf + n, size - n, "%s%s", k++ ? ", " : " (also ", p->tool_net[i].tool);
		tools &= ~(1ull << i);
		if (!tools) {
			n = strlen(buf);
			snprintf(buf + n, size - n, ")");
		}
	}
	return buf;
}

const char *gw_tools_only_text(const struct wd_policy *p, uint64_t would,
			       const struct gw_toolcalls *calls, char *buf, size_t size)
{
	size_t n, k = 0;

	snprintf(buf, size, "allowed only during calls of tool");
	for (size_t i = 0; p && i < p->ntool_net && i < 64; i++) {
		if (!(would & (1ull << i)))
			continue;
		n = strlen(buf);
		snprintf(buf + n, size - n, "%s %s (mcp.tools.%s.network)", k++ ? "," : "",
			 p->tool_net[i].tool, p->tool_net[i].tool);
	}
	n = strlen(buf);
	if (!calls || !calls->ninflight) {
		snprintf(buf + n, size - n, "; no tool call was in flight");
		return buf;
	}
	snprintf(buf + n, size - n, "; in flight:");
	for (unsigned i = 0; i < calls->ninflight && i < GW_TOOLCALLS_CALLS; i++) {
		unsigned t = calls->inflight[i];
		bool named = t < calls->ntools && t < GW_TOOLCALLS_TOOLS;

		n = strlen(buf);
		snprintf(buf + n, size - n, "%s %s", i ? "," : "",
			 named ? calls->tool[t].name : GW_TOOLCALLS_OTHER_NAME);
	}
	return buf;
}

/* ------------------------------------------------------------ TCP */

static void verdict(struct gw_tcp_verdict *v, enum gw_tcp_action action, enum gw_tcp_reason reason)
{
	v->action = action;
	v->reason = reason;
}

/* @name:@port by its rule, network.allow's, else one of a tool in @calls (mcp.tools.NAME.network):
 * ALLOW_NAME, or DENY NO_RULE (CEILING, TOOL_ONLY) */
static void by_name(const struct wd_policy *p, const struct gw_toolcalls *calls, const char *name,
		    uint16_t port, struct gw_tcp_verdict *v)
{
	struct gw_tool_hit h;

	v->name = name;
	v->port = port;
	v->policy = p;
	v->tool = -1;
	v->rule = policy_match(p, name, port);
	if (v->rule >= 0) {
		verdict(v, GW_TCP_ALLOW_NAME, GW_TR_ALLOWED);
		return;
	}
	v->rule = -1;
	if (gw_tools_match(p, calls, name, port, &h)) {
		v->tool = h.tool;
		v->rule = h.rule;
		v->tools = h.allow;
		verdict(v, GW_TCP_ALLOW_NAME, GW_TR_ALLOWED);
		return;
	}
	if (policy_ceiling_why(p, name, port, &v->ceiling)) {
		verdict(v, GW_TCP_DENY, GW_TR_CEILING);
	} else if (h.ceiling) {
		v->ceiling = h.why;
		verdict(v, GW_TCP_DENY, GW_TR_CEILING);
	} else if (h.would) {
		v->tools = h.would;
		v->calls = calls;
		verdict(v, GW_TCP_DENY, GW_TR_TOOL_ONLY);
	} else {
		verdict(v, GW_TCP_DENY, GW_TR_NO_RULE);
	}
}

/* @dst:@port by the cidr rules: ALLOW_ADDR, or @otherwise */
static void by_addr(const struct wd_policy *p, const struct gw_addr *dst, uint16_t port,
		    enum gw_tcp_action otherwise, struct gw_tcp_verdict *v)
{
	v->dst = dst;
	v->port = port;
	v->rule = policy_match_addr(p, dst->family, dst->a, port);
	if (v->rule >= 0) {
		verdict(v, GW_TCP_ALLOW_ADDR, GW_TR_ALLOWED);
		return;
	}
	v->rule = -1;
	if (otherwise == GW_TCP_DENY)
		verdict(v, GW_TCP_DENY,
			policy_ceiling_why_addr(p, dst->family, dst->a, port, &v->ceiling)
			    ? GW_TR_CEILING
			    : GW_TR_NO_NAME);
	else
		verdict(v, otherwise, GW_TR_ALLOWED);
}

/* learn mode: @name:@port within the ceiling: ALLOW_NAME (LEARN), else DENY CEILING (NO_RULE for
 * what is no host name) */
static void learn_by_name(const struct wd_policy *p, const char *name, uint16_t port,
			  struct gw_tcp_verdict *v)
{
	v->name = name;
	v->port = port;
	v->rule = -1;
	if (gw_learn_allows(p, name, port, &v->ceiling))
		verdict(v, GW_TCP_ALLOW_NAME, GW_TR_LEARN);
	else
		verdict(v, GW_TCP_DENY, gw_learn_name_ok(name) ? GW_TR_CEILING : GW_TR_NO_RULE);
}

/* learn mode: the address @dst:@port by its class and the ceiling's cidr rules: ALLOW_ADDR
 * (LEARN), else DENY LEARN_CLASS or CEILING */
static void learn_by_addr(const struct wd_policy *p, const struct gw_ssrf_env *env,
			  const struct gw_addr *dst, uint16_t port, struct gw_tcp_verdict *v)
{
	enum gw_addr_class c = gw_upstream_class(env, NULL, dst, port);

	v->dst = dst;
	v->port = port;
	v->rule = -1;
	if (c != GW_ADDR_PUBLIC) {
		v->cls = (int)c;
		verdict(v, GW_TCP_DENY, GW_TR_LEARN_CLASS);
	} else if (!gw_learn_allows_addr(p, dst, port, &v->ceiling)) {
		verdict(v, GW_TCP_DENY, GW_TR_CEILING);
	} else {
		verdict(v, GW_TCP_ALLOW_ADDR, GW_TR_LEARN);
	}
}

static void tcp_decide_learn(const struct gw_tcp_facts *f, struct gw_tcp_verdict *v)
{
	const char *n;

	if (!f->first) {
		if (f->bound)
			learn_by_name(f->policy, f->bound, f->port, v);
		else
			verdict(v, GW_TCP_NEED_BYTES, GW_TR_LEARN); /* the bytes may name it */
		return;
	}
	n = gw_first_named(f->first);
	if (n)
		learn_by_name(f->policy, n, f->port, v);
	else
		learn_by_addr(f->policy, f->learn, f->dst, f->port, v);
}

void gw_tcp_decide(const struct gw_tcp_facts *f, struct gw_tcp_verdict *v)
{
	const char *n;

	memset(v, 0, sizeof(*v));
	v->rule = -1;
	v->tool = -1;
	v->port = f->port;
	if (f->learn && !f->first) {
		tcp_decide_learn(f, v);
		return;
	}
	if (!f->first) {
		if (f->bound)
			by_name(f->policy, f->calls, f->bound, f->port, v);
		else
			by_addr(f->policy, f->dst, f->port, GW_TCP_NEED_BYTES, v);
		return;
	}
	if (f->first->why) {
		v->why = f->first->why;
		verdict(v, GW_TCP_DENY, GW_TR_MALFORMED);
		return;
	}
	n = gw_first_named(f->first);
	if (f->learn && !f->bound) {
		tcp_decide_learn(f, v);
		return;
	}
	if (f->bound) {
		if (n && !dns_name_equal(n, f->bound)) {
			v->name = n;
			v->bound = f->bound;
			verdict(v, GW_TCP_DENY,
				f->first->sni[0] ? GW_TR_FRONTING_SNI : GW_TR_FRONTING_HOST);
			return;
		}
		verdict(v, GW_TCP_ALLOW_BYTES, GW_TR_ALLOWED);
		return;
	}
	if (n)
		by_name(f->policy, f->calls, n, f->port, v);
	else
		by_addr(f->policy, f->dst, f->port, GW_TCP_DENY, v);
}

void gw_tcp_recheck(const struct wd_policy *policy, const struct gw_toolcalls *calls,
		    const char *name, const struct gw_addr *dst, uint16_t port,
		    struct gw_tcp_verdict *v)
{
	struct gw_addr lit;

	memset(v, 0, sizeof(*v));
	v->rule = -1;
	v->tool = -1;
	v->port = port;
	if (name && gw_addr_parse(name, &lit))
		by_name(policy, calls, name, port, v);
	else
		by_addr(policy, dst, port, GW_TCP_DENY, v); /* a literal: where it connected */
}

void gw_tcp_decide_request(const char *bound, const struct http_request *req, unsigned request,
			   struct gw_tcp_verdict *v)
{
	memset(v, 0, sizeof(*v));
	v->rule = -1;
	v->tool = -1;
	if (!req->host[0] || req->host_kind != PROTO_HOST_NAME ||
	    dns_name_equal(req->host, bound)) {
		verdict(v, GW_TCP_ALLOW_BYTES, GW_TR_ALLOWED);
		return;
	}
	v->name = req->host;
	v->bound = bound;
	v->request = request;
	verdict(v, GW_TCP_DENY, GW_TR_FRONTING_REQUEST);
}

/* a proxy target @host:@port (a name, or an address literal in text) decided into @out->v, the
 * literal parsed into @out->literal; @learn: NULL, or learn mode with the SSRF guard's
 * environment. The same for a CONNECT, an absolute-form request and a SOCKS5 request. */
static void target_decide(const struct wd_policy *policy, const struct gw_toolcalls *calls,
			  const struct gw_ssrf_env *learn, const char *host,
			  enum proto_host_kind kind, uint16_t port, struct gw_proxy_verdict *out)
{
	struct gw_tcp_verdict *v = &out->v;

	if (learn) {
		if (kind == PROTO_HOST_NAME) {
			learn_by_name(policy, host, port, v);
			return;
		}
		if (gw_addr_parse(host, &out->literal)) {
			verdict(v, GW_TCP_DENY, GW_TR_PROXY_LITERAL);
			return;
		}
		learn_by_addr(policy, learn, &out->literal, port, v);
		return;
	}
	by_name(policy, calls, host, port, v); /* a literal is matched against the cidr rules */
	if (v->action == GW_TCP_DENY || kind == PROTO_HOST_NAME)
		return;
	if (gw_addr_parse(host, &out->literal)) {
		verdict(v, GW_TCP_DENY, GW_TR_PROXY_LITERAL);
		return;
	}
	v->dst = &out->literal;
	verdict(v, GW_TCP_ALLOW_ADDR, GW_TR_ALLOWED);
}

/* the proxy's verdict; @learn: NULL, or learn mode with the SSRF guard's environment */
static void proxy_decide(const struct wd_policy *policy, const struct gw_toolcalls *calls,
			 const struct gw_ssrf_env *learn, enum http_result r,
			 const struct http_request *req, struct gw_proxy_verdict *out)
{
	struct gw_tcp_verdict *v = &out->v;
	uint16_t port;

	memset(out, 0, sizeof(*out));
	v->rule = -1;
	v->tool = -1;
	out->proto = "proxy";
	out->budget = -1;
	if (r != HTTP_OK) {
		v->why = r == HTTP_MALFORMED && req->why ? req->why
			 : r == HTTP_NEED_MORE		 ? "incomplete request head"
							 : "no host";
		verdict(v, GW_TCP_DENY, GW_TR_PROXY_NOT_REQUEST);
		return;
	}
	if (req->is_connect) {
		out->proto = "connect";
		out->connect = true;
		port = req->port;
	} else if (req->form == HTTP_FORM_ABSOLUTE) {
		out->proto = "proxy-http";
		port = req->port ? req->port : (req->https ? 443 : 80);
		if (req->https) {
			verdict(v, GW_TCP_DENY, GW_TR_PROXY_HTTPS);
			return;
		}
		if (req->chunked) {
			verdict(v, GW_TCP_DENY, GW_TR_PROXY_CHUNKED);
			return;
		}
		/* exactly one request (head and Content-Length body) goes upstream */
		out->budget =
		    (int64_t)req->head_len + (req->content_length > 0 ? req->content_length : 0);
	} else {
		verdict(v, GW_TCP_DENY, GW_TR_PROXY_FORM);
		return;
	}
	target_decide(policy, calls, learn, req->host, req->host_kind, port, out);
}

void gw_proxy_decide(const struct wd_policy *policy, const struct gw_toolcalls *calls,
		     enum http_result r, const struct http_request *req,
		     struct gw_proxy_verdict *out)
{
	proxy_decide(policy, calls, NULL, r, req, out);
}

void gw_proxy_decide_learn(const struct wd_policy *policy, const struct gw_ssrf_env *env,
			   enum http_result r, const struct http_request *req,
			   struct gw_proxy_verdict *out)
{
	proxy_decide(policy, NULL, env, r, req, out);
}

void gw_socks_decide(const struct wd_policy *policy, const struct gw_toolcalls *calls,
		     const struct gw_ssrf_env *learn, const struct socks5_request *req,
		     struct gw_proxy_verdict *out)
{
	memset(out, 0, sizeof(*out));
	out->v.rule = -1;
	out->v.tool = -1;
	out->proto = "socks5";
	out->connect = true;
	out->budget = -1;
	target_decide(policy, calls, learn, req->host, req->host_kind, req->port, out);
}

/* ------------------------------------------------------------ shadow mode */

bool gw_shadow_lifts(enum gw_tcp_reason reason)
{
	return reason == GW_TR_NO_RULE || reason == GW_TR_NO_NAME || reason == GW_TR_TOOL_ONLY;
}

/* a shadow run's second verdict @v (learn mode's rules) after the policy's denial @would: lifted
 * when it allows; refused by the SSRF guard: SHADOW_CLASS; what is no host name: @would again */
static bool shadow_second(struct gw_tcp_verdict *v, const struct gw_tcp_verdict *would)
{
	if (v->action != GW_TCP_DENY)
		return true;
	if (v->reason == GW_TR_LEARN_CLASS)
		v->reason = GW_TR_SHADOW_CLASS;
	else if (v->reason != GW_TR_CEILING)
		*v = *would;
	return false;
}

bool gw_tcp_decide_shadow(const struct gw_tcp_facts *f, const struct gw_ssrf_env *env,
			  struct gw_tcp_verdict *v, struct gw_tcp_verdict *would)
{
	struct gw_tcp_facts lf = *f;

	gw_tcp_decide(f, v);
	if (v->action != GW_TCP_DENY || !gw_shadow_lifts(v->reason))
		return false;
	*would = *v;
	lf.learn = env;
	gw_tcp_decide(&lf, v);
	return shadow_second(v, would);
}

bool gw_proxy_decide_shadow(const struct wd_policy *policy, const struct gw_toolcalls *calls,
			    const struct gw_ssrf_env *env, enum http_result r,
			    const struct http_request *req, struct gw_proxy_verdict *out,
			    struct gw_tcp_verdict *would)
{
	proxy_decide(policy, calls, NULL, r, req, out);
	if (out->v.action != GW_TCP_DENY || !gw_shadow_lifts(out->v.reason))
		return false;
	*would = out->v;
	proxy_decide(policy, NULL, env, r, req, out);
	return shadow_second(&out->v, would);
}

bool gw_socks_decide_shadow(const struct wd_policy *policy, const struct gw_toolcalls *calls,
			    const struct gw_ssrf_env *env, const struct socks5_request *req,
			    struct gw_proxy_verdict *out, struct gw_tcp_verdict *would)
{
	gw_socks_decide(policy, calls, NULL, req, out);
	if (out->v.action != GW_TCP_DENY || !gw_shadow_lifts(out->v.reason))
		return false;
	*would = out->v;
	gw_socks_decide(policy, NULL, env, req, out);
	return shadow_second(&out->v, would);
}

const char *gw_tcp_reason_text(const struct gw_tcp_verdict *v, const char *policy_name, char *buf,
			       size_t size)
{
	char at[INET6_ADDRSTRLEN];

	switch (v->reason) {
	case GW_TR_ALLOWED:
		return "allowed";
	case GW_TR_NO_RULE:
		snprintf(buf, size,
			 "%s:%u is not allowed by policy %s (no network.allow rule matches)",
			 v->name, v->port, policy_name);
		return buf;
	case GW_TR_TOOL_ONLY: {
		char why[400];

		snprintf(buf, size, "%s:%u is not allowed by policy %s now: %s", v->name, v->port,
			 policy_name,
			 gw_tools_only_text(v->policy, v->tools, v->calls, why, sizeof(why)));
		return buf;
	}
	case GW_TR_CEILING: {
		char why[500];

		policy_ceiling_reason(&v->ceiling, why, sizeof(why));
		if (v->name)
			snprintf(buf, size, "%s:%u is %s", v->name, v->port, why);
		else
			snprintf(buf, size, "%s:%u is %s", gw_addr_str(v->dst, at, sizeof(at)),
				 v->port, why);
		return buf;
	}
	case GW_TR_FRONTING_SNI:
	case GW_TR_FRONTING_HOST:
		snprintf(
		    buf, size, "%s names %s but the connection is bound to %s (domain fronting)",
		    v->reason == GW_TR_FRONTING_SNI ? "TLS SNI" : "HTTP Host", v->name, v->bound);
		return buf;
	case GW_TR_FRONTING_REQUEST:
		snprintf(buf, size,
			 "HTTP Host names %s but the connection is bound to %s (domain fronting, "
			 "request %u on this connection)",
			 v->name, v->bound, v->request);
		return buf;
	case GW_TR_MALFORMED:
		return v->why;
	case GW_TR_NO_NAME:
		snprintf(buf, size,
			 "no host name (TLS SNI or HTTP Host) and no cidr rule allows %s:%u",
			 gw_addr_str(v->dst, at, sizeof(at)), v->port);
		return buf;
	case GW_TR_PROXY_NOT_REQUEST:
		snprintf(buf, size, "not a proxy request (%s)", v->why);
		return buf;
	case GW_TR_PROXY_HTTPS:
		return "https:// targets must use CONNECT";
	case GW_TR_PROXY_CHUNKED:
		return "chunked request bodies are not relayed by the proxy";
	case GW_TR_PROXY_FORM:
		return "the proxy port takes CONNECT or absolute-form requests";
	case GW_TR_PROXY_LITERAL:
		return "bad address literal";
	case GW_TR_LEARN:
		return "allowed: learn mode";
	case GW_TR_LEARN_CLASS:
	case GW_TR_SHADOW_CLASS:
		snprintf(buf, size,
			 "%s:%u is refused in %s mode as in any run (SSRF guard: %s address)",
			 gw_addr_str(v->dst, at, sizeof(at)), v->port,
			 v->reason == GW_TR_LEARN_CLASS ? "learn" : "shadow",
			 gw_addr_class_name((enum gw_addr_class)v->cls));
		return buf;
	}
	return "denied";
}

/* ------------------------------------------------------------ upstream addresses */

enum gw_addr_class gw_upstream_class(const struct gw_ssrf_env *env, const struct wd_policy *policy,
				     const struct gw_addr *a, uint16_t port)
{
	enum gw_addr_class c = gw_addr_classify(a);

	if (c == GW_ADDR_PUBLIC) {
		for (int i = 0; i < 4; i++)
			if (gw_prefix_contains(&env->own_net[i], env->own_prefix[i], a))
				c = GW_ADDR_GATEWAY;
	}
	if (c == GW_ADDR_PUBLIC) {
		for (size_t i = 0; i < env->nlocal; i++)
			if (gw_addr_eq(&env->local[i], a))
				c = GW_ADDR_GATEWAY;
	}
	if (c == GW_ADDR_PUBLIC)
		return c;
	if (policy && policy_match_addr(policy, a->family, a->a, port) >= 0)
		return GW_ADDR_PUBLIC; /* a cidr rule names it */
	return c;
}

size_t gw_upstream_pick(const struct gw_ssrf_env *env, const struct wd_policy *policy,
			const struct gw_addr *addrs, size_t n, uint16_t port, struct gw_addr *out,
			char *why, size_t why_size)
{
	size_t k = 0, wlen = 0;

	if (why_size)
		why[0] = '\0';
	/* IPv6 first, then IPv4; refused ranges are skipped */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n; i++) {
			const struct gw_addr *a = &addrs[i];
			enum gw_addr_class c;

			if ((pass == 0) != (a->family == AF_INET6))
				continue;
			c = gw_upstream_class(env, policy, a, port);
			if (c != GW_ADDR_PUBLIC) {
				/* name every refused address, as far as they fit */
				char txt[INET6_ADDRSTRLEN], one[128];
				int m;

				/* "the gateway's own" takes no article */
				snprintf(one, sizeof(one), "%s is %s%s address",
					 gw_addr_str(a, txt, sizeof(txt)),
					 c == GW_ADDR_GATEWAY ? "" : "a ", gw_addr_class_name(c));
				m = snprintf(why + wlen, why_size - wlen, "%s%s", wlen ? "; " : "",
					     one);
				if (m > 0 && (size_t)m < why_size - wlen)
					wlen += (size_t)m;
				continue;
			}
			out[k++] = *a;
		}
	return k;
}

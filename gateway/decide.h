/* decide.h - the gateway's decisions as pure functions (internal header): what a
 * client's first bytes say, the verdict on a TCP connection, a proxy request, a
 * later HTTP request, an upstream address (SSRF guard) and a DNS query, each with a
 * reason code, and the audit text of every reason (decide.c: TCP, learn mode, upstream
 * addresses; sniff.c: the first bytes; dnsdecide.c: DNS queries). No I/O, no clock, no globals,
 * no gateway state: the callers (conn.c, relayconn.c, dnsanswer.c) gather the
 * facts and act on the verdict; tests/unit/test_gw_decide.c walks the matrix. */
#ifndef WARDEN_GATEWAY_DECIDE_H
#define WARDEN_GATEWAY_DECIDE_H

#include "gateway/addr.h"
#include "gateway/dnsbudget.h"
#include "gateway/proto/proto.h"
#include "gateway/toolcalls.h"
#include "policy/policy.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The name warden run's liveness check asks (launcher's dns_probe()): a
 * reserved .invalid name, asked for its HTTPS record, answered by the DNS front. */
#define GW_LIVENESS_NAME "warden-liveness.check.invalid"

/* ------------------------------------------------------------ first bytes */

enum gw_sniff {
	GW_SNIFF_MORE,	    /* the bytes so far decide nothing: read more */
	GW_SNIFF_DONE,	    /* decided: @first says what the client speaks and names */
	GW_SNIFF_MALFORMED, /* the client's protocol is broken: denied with @first->why */
};

/**
 * struct gw_first - what a client's first bytes said
 * @proto:	"tls", "http" or "tcp" (plain bytes, or none)
 * @tls:	the client speaks TLS (a denial is a TLS alert)
 * @http:	the client speaks HTTP/1.x (a denial is a 403)
 * @ech:	the ClientHello has an encrypted_client_hello extension
 * @tls_version: the ClientHello's legacy version (for the alert)
 * @sni:	the ClientHello's server name (with ECH: the outer one); "" when none
 * @host:	the HTTP request's Host (or absolute-form target host); "" when none
 * @why:	on GW_SNIFF_MALFORMED, what is wrong (a literal); else NULL
 */
struct gw_first {
	const char *proto;
	bool tls;
	bool http;
	bool ech;
	uint16_t tls_version;
	char sni[PROTO_NAME_MAX + 1];
	char host[PROTO_NAME_MAX + 1];
	const char *why;
};

/**
 * gw_sniff() - read a transparent connection's first bytes
 * @buf:	every byte the client sent so far
 * @len:	bytes in @buf (0: the client said nothing)
 * @full:	no more bytes will come (the client's end, the peek timeout, or
 *		the peek buffer full): an incomplete hello or head is malformed
 * @th:		scratch for the TLS parser (large; the caller keeps one)
 * @out:	the result (always written)
 *
 * TLS is tried first, then HTTP/1.x; anything else is raw TCP. Empty lines
 * before an HTTP request are skipped (RFC 9112 §2.2), so the request after
 * them is the one decided; bare CR or LF before something that looks like a
 * request, a head that does not parse but looks like one to a lenient server,
 * a valid start of a head that never completes, an ECH hello without an outer
 * server name: all malformed.
 *
 * Return: GW_SNIFF_MORE, GW_SNIFF_DONE or GW_SNIFF_MALFORMED.
 */
enum gw_sniff gw_sniff(const uint8_t *buf, size_t len, bool full, struct tls_hello *th,
		       struct gw_first *out);

/**
 * gw_first_named() - the name @f named: its SNI, else its Host unless that is an
 * address literal (a literal names no host)
 * Return: the name (inside @f), or NULL.
 */
const char *gw_first_named(const struct gw_first *f);

/* ------------------------------------------------------------ tools' own rules */

/**
 * struct gw_tool_hit - what the tools' own rules (mcp.tools.NAME.network) say about a name
 * @allow:	a bit (1 << index in the policy's tool_net) for each tool in flight whose rules
 *		allow it
 * @would:	a bit for each tool not in flight whose rules allow it
 * @tool:	the first tool of @allow (else of @would), or -1
 * @rule:	its allowing rule (index in its rules), or -1
 * @ceiling:	a tool in flight has a rule for it that the host's ceiling refuses: @why says
 *		where
 * @why:	see @ceiling
 */
struct gw_tool_hit {
	uint64_t allow;
	uint64_t would;
	int tool;
	int rule;
	bool ceiling;
	struct policy_why why;
};

/**
 * gw_tools_match() - which tools' own rules allow @name:@port, in and out of flight (pure)
 * @policy:	the run's (effective) policy; its tool_net are each bounded by the ceiling
 * @calls:	the run's calls in flight (NULL: none)
 * @name:	a host name (or an address literal: the cidr rules)
 * @port:	the port; 0: on some port (a DNS question)
 * @h:		the answer (always written)
 *
 * Return: true when a tool in flight allows it (@h->allow is not 0).
 */
bool gw_tools_match(const struct wd_policy *policy, const struct gw_toolcalls *calls,
		    const char *name, uint16_t port, struct gw_tool_hit *h);

/**
 * gw_tools_rule_text() - the text of a rule that allowed something: network.allow's own text
 * (@tool -1), else "mcp.tools.NAME.network: RULE" and, when more tools in flight allow it,
 * " (also OTHER, ...)"
 * @policy:	the policy the verdict was made from
 * @tool:	the verdict's tool (-1: network.allow)
 * @rule:	the verdict's rule (-1: none: NULL is returned)
 * @tools:	the verdict's bits of the tools in flight that allow it
 * @buf:	room for the text
 * @size:	its size
 * Return: the text (@buf or the rule's own text), or NULL.
 */
const char *gw_tools_rule_text(const struct wd_policy *policy, int tool, int rule, uint64_t tools,
			       char *buf, size_t size);

/**
 * gw_tools_only_text() - why a name that only tools' own rules allow is denied: "allowed only
 * during calls of tool A (mcp.tools.A.network), and B; in flight: C" / "no tool call was in
 * flight"
 * @policy:	the policy
 * @would:	the tools whose rules allow it (struct gw_tool_hit @would)
 * @calls:	the calls in flight (NULL: none)
 * @buf:	room for the text
 * @size:	its size
 * Return: @buf.
 */
const char *gw_tools_only_text(const struct wd_policy *policy, uint64_t would,
			       const struct gw_toolcalls *calls, char *buf, size_t size);

/* ------------------------------------------------------------ TCP verdicts */

enum gw_tcp_action {
	GW_TCP_DENY = 0,    /* deny (@reason says why) */
	GW_TCP_NEED_BYTES,  /* no name known and no cidr rule: wait for the client's first bytes */
	GW_TCP_ALLOW_NAME,  /* resolve @name; connect to what passes the SSRF guard */
	GW_TCP_ALLOW_ADDR,  /* connect to @dst itself (a cidr rule or a literal target) */
	GW_TCP_ALLOW_BYTES, /* a bound connection's first bytes agree with its name: relay */
};

enum gw_tcp_reason {
	GW_TR_ALLOWED = 0,
	GW_TR_NO_RULE,		 /* @name:@port matches no network.allow rule */
	GW_TR_CEILING,		 /* the policy allows @name:@port (or @dst), the host's ceiling
				    does not: @ceiling says where */
	GW_TR_FRONTING_SNI,	 /* the SNI @name is not the bound name @bound */
	GW_TR_FRONTING_HOST,	 /* the Host @name is not the bound name @bound */
	GW_TR_FRONTING_REQUEST,	 /* request @request's Host @name is not @bound */
	GW_TR_MALFORMED,	 /* the first bytes are broken: @why */
	GW_TR_NO_NAME,		 /* no name and no cidr rule allows @dst:@port */
	GW_TR_PROXY_NOT_REQUEST, /* the proxy port got no request: @why */
	GW_TR_PROXY_HTTPS,	 /* an https:// absolute-form target */
	GW_TR_PROXY_CHUNKED,	 /* an absolute-form request with a chunked body */
	GW_TR_PROXY_FORM,	 /* origin-form (or asterisk-form) on the proxy port */
	GW_TR_PROXY_LITERAL,	 /* a target address literal that does not parse */
	GW_TR_LEARN,		 /* learn mode: any name on any port, an address by its class */
	GW_TR_LEARN_CLASS,	 /* learn mode: the address literal @dst is of class @cls */
	GW_TR_SHADOW_CLASS,	 /* shadow mode: the address literal @dst is of class @cls */
	GW_TR_TOOL_ONLY,	 /* @name:@port is allowed only by the rules of tools @tools, none
				    of which has a call in flight (@calls) */
};

struct gw_ssrf_env;

/**
 * struct gw_tcp_facts - what the gateway knows about a TCP connection
 * @policy:	the run's policy
 * @dst:	the destination the client dialled (SO_ORIGINAL_DST)
 * @port:	its port
 * @bound:	the name the DNS front bound to @dst (a synthetic address), or a
 *		CONNECT tunnel's target after the 200; NULL when none
 * @first:	what the client's first bytes said (gw_sniff() DONE or MALFORMED);
 *		NULL while the client has not spoken
 * @learn:	NULL, or the run is in learn mode and this is the SSRF guard's environment:
 *		the policy's rules are replaced by any name on any port within the host's
 *		ceiling (gw_learn_allows()), and an address literal is decided by its class
 *		(gw_upstream_class() without the policy: no cidr rule lifts a refusal)
 * @calls:	the run's MCP tool calls in flight (NULL: none): a name network.allow does not
 *		allow is allowed by the rules of a tool in flight (mcp.tools.NAME.network)
 */
struct gw_tcp_facts {
	const struct wd_policy *policy;
	const struct gw_addr *dst;
	uint16_t port;
	const char *bound;
	const struct gw_first *first;
	const struct gw_ssrf_env *learn;
	const struct gw_toolcalls *calls;
};

/**
 * struct gw_tcp_verdict - a decision and what it rests on
 * @action:	what to do
 * @reason:	why (gw_tcp_reason_text() gives the audit text)
 * @rule:	the allowing rule (index in the policy's rules), or -1
 * @name:	ALLOW_NAME: the name to resolve; NO_RULE: the name refused;
 *		fronting: the name the client's bytes named
 * @bound:	fronting: the name the connection is bound to
 * @dst:	ALLOW_ADDR: where to connect; NO_NAME: the destination
 * @port:	the port decided on (0 where a proxy request got no port yet)
 * @request:	FRONTING_REQUEST: the request's number on the connection
 * @why:	MALFORMED, PROXY_NOT_REQUEST: the parser's words
 * @ceiling:	CEILING: where the ceiling refuses it (pointers into the policy)
 * @cls:	LEARN_CLASS: the class of @dst (gw_addr_class_name())
 * @tool:	the allowing rule is tool_net[@tool]'s of the policy (@rule indexes its rules);
 *		-1: network.allow's (gw_tools_rule_text() gives the text)
 * @tools:	allowed by tools' rules: the tools in flight whose rules allow it; TOOL_ONLY:
 *		the tools whose rules would (bits as struct gw_tool_hit's)
 * @policy:	the policy (TOOL_ONLY names the tools)
 * @calls:	TOOL_ONLY: the calls in flight (NULL: none)
 *
 * The pointers point into the facts (or the request, or the policy) the verdict
 * was made from.
 */
struct gw_tcp_verdict {
	enum gw_tcp_action action;
	enum gw_tcp_reason reason;
	int rule;
	const char *name;
	const char *bound;
	const struct gw_addr *dst;
	uint16_t port;
	unsigned request;
	const char *why;
	struct policy_why ceiling;
	int cls;
	int tool;
	uint64_t tools;
	const struct wd_policy *policy;
	const struct gw_toolcalls *calls;
};

/**
 * gw_tcp_decide() - the verdict on a connection from @f
 * @f:		the facts
 * @v:		the verdict (always written)
 *
 * Before the client spoke (@f->first NULL): a bound name is decided by its
 * rule for @f->port (ALLOW_NAME, or DENY NO_RULE); an unbound address by the
 * cidr rules (ALLOW_ADDR), else NEED_BYTES. A denial that only the host's
 * ceiling makes (the run's own rules allow it: policy_ceiling_why()) is DENY
 * CEILING instead of NO_RULE or NO_NAME.
 *
 * Once it spoke: malformed bytes are denied. On a bound connection (whose
 * rule allowed it before) the bytes must not name another host: an SNI or
 * Host that differs from @f->bound is domain fronting (DENY), anything else
 * ALLOW_BYTES. On an unbound one the name the bytes give is decided by its
 * rule (ALLOW_NAME or DENY NO_RULE); without a name a cidr rule may still
 * allow the address (ALLOW_ADDR), else DENY NO_NAME.
 *
 * A name no network.allow rule allows is allowed by the rules of a tool with a call in flight
 * (@f->calls; ALLOW_NAME with @v->tool set); one that only tools not in flight allow is DENY
 * TOOL_ONLY. Decided at accept (a synthetic address) or on the first bytes: a connection so
 * allowed outlives the call.
 *
 * In learn mode (@f->learn) a name (bound, SNI, Host) is allowed on any port within the
 * host's ceiling (ALLOW_NAME, reason LEARN; else DENY CEILING); an unbound address waits for
 * the client's first bytes (NEED_BYTES) so that a name in them is what is recorded; without
 * a name the address itself is allowed when gw_upstream_class() finds it public and the
 * ceiling allows it (ALLOW_ADDR, reason LEARN), else DENY LEARN_CLASS (or CEILING). Malformed
 * bytes and domain fronting are denied as in any run.
 */
void gw_tcp_decide(const struct gw_tcp_facts *f, struct gw_tcp_verdict *v);

/**
 * gw_tcp_recheck() - whether a connection the gateway let through is still allowed by
 * @policy (a run's new one, after `replace`): by the name it was decided on (@name; an address
 * literal counts as its address), else by the address it goes to (@dst, a cidr rule)
 * @policy:	the policy now
 * @calls:	the run's MCP tool calls in flight now (NULL: none): a connection a tool's rule
 *		let through stays only while a tool whose rules allow it has a call in flight
 * @name:	the name the connection was allowed for, or NULL
 * @dst:	the destination address
 * @port:	its port
 * @v:		the verdict: ALLOW_NAME or ALLOW_ADDR when still allowed, else DENY with
 *		the reason (NO_RULE, NO_NAME, CEILING) as at the first decision
 */
void gw_tcp_recheck(const struct wd_policy *policy, const struct gw_toolcalls *calls,
		    const char *name, const struct gw_addr *dst, uint16_t port,
		    struct gw_tcp_verdict *v);

/**
 * gw_tcp_decide_request() - a later request head on an HTTP connection bound to @bound
 * @bound:	the connection's name
 * @req:	the request head (HTTP_OK)
 * @request:	its number on the connection (for the reason)
 * @v:		ALLOW_BYTES, or DENY FRONTING_REQUEST (always written)
 *
 * A Host that names another host is fronting; no Host or an address literal
 * names none, as on the first request.
 */
void gw_tcp_decide_request(const char *bound, const struct http_request *req, unsigned request,
			   struct gw_tcp_verdict *v);

/**
 * struct gw_proxy_verdict - the verdict on a request to the proxy port
 * @v:		the verdict (ALLOW_NAME, ALLOW_ADDR with @v.dst = &@literal, or DENY)
 * @proto:	"proxy" (no request understood), "connect", "proxy-http" or "socks5"
 * @connect:	a CONNECT tunnel
 * @budget:	absolute-form: the bytes of the one request relayed (head and
 *		Content-Length body); -1 otherwise
 * @literal:	the target's address when it is a literal
 */
struct gw_proxy_verdict {
	struct gw_tcp_verdict v;
	const char *proto;
	bool connect;
	int64_t budget;
	struct gw_addr literal;
};

/**
 * gw_proxy_decide() - the verdict on what a client sent the proxy port
 * @policy:	the run's policy
 * @calls:	the run's MCP tool calls in flight (NULL: none), as struct gw_tcp_facts's
 * @r:		http_request_parse()'s result on the client's bytes (never
 *		HTTP_NEED_MORE unless no more bytes will come)
 * @req:	the parsed request
 * @out:	the verdict (always written)
 *
 * CONNECT host:port and absolute-form http:// requests are decided by the
 * target's name (or literal) and port; https:// absolute-form, chunked
 * bodies, origin-form and anything that is no request are denied.
 */
void gw_proxy_decide(const struct wd_policy *policy, const struct gw_toolcalls *calls,
		     enum http_result r, const struct http_request *req,
		     struct gw_proxy_verdict *out);

/**
 * gw_proxy_decide_learn() - gw_proxy_decide() for a run in learn mode
 * @policy:	the run's policy (only its ceiling counts)
 * @env:	the SSRF guard's environment (a literal target is decided by its class)
 * @r:		as for gw_proxy_decide()
 * @req:	as for gw_proxy_decide()
 * @out:	as for gw_proxy_decide()
 *
 * The same forms are refused; a target name is allowed on any port within the host's
 * ceiling (gw_learn_allows()), a literal when it is public (gw_upstream_class() without the
 * policy) and the ceiling allows it.
 */
void gw_proxy_decide_learn(const struct wd_policy *policy, const struct gw_ssrf_env *env,
			   enum http_result r, const struct http_request *req,
			   struct gw_proxy_verdict *out);

/**
 * gw_socks_decide() - the verdict on a SOCKS5 CONNECT request to the proxy port
 * @policy:	the run's policy
 * @calls:	the run's MCP tool calls in flight (NULL: none), as struct gw_tcp_facts's
 * @learn:	NULL, or the run is in learn mode and this is the SSRF guard's environment
 *		(as gw_proxy_decide_learn())
 * @req:	socks5_request_parse()'s SOCKS5_OK result
 * @out:	the verdict (always written): proto "socks5", @out->connect set
 *
 * Decided exactly as a CONNECT to the same target: a name (ATYP domain name) by its rule
 * for the port, an address literal (ATYP IPv4/IPv6, or a dotted quad given as a name) by
 * the cidr rules (ALLOW_ADDR with @out->v.dst = &@out->literal).
 */
void gw_socks_decide(const struct wd_policy *policy, const struct gw_toolcalls *calls,
		     const struct gw_ssrf_env *learn, const struct socks5_request *req,
		     struct gw_proxy_verdict *out);

/* ------------------------------------------------------------ shadow mode */

/*
 * A shadow run (`warden run --shadow`, registered with "shadow": true) is decided as any run;
 * a denial that the run's own policy makes (gw_shadow_lifts()) is then decided again by learn
 * mode's rules (any name on any port within the host's ceiling; an address by its class: the
 * SSRF guard) and, when those allow it, let through: the caller audits it as "would_deny"
 * with the first verdict's reason and a denial id. What learn mode refuses stays refused (the
 * host's ceiling: DENY CEILING; an address of a refused class: DENY SHADOW_CLASS; what is no
 * host name: the first verdict). Malformed bytes, domain fronting and what the proxy port
 * cannot take are never lifted.
 */

/**
 * gw_shadow_lifts() - whether a shadow run may let a denial for @reason through: only the run's
 * own policy's (NO_RULE, NO_NAME, TOOL_ONLY); never the host's ceiling, malformed bytes,
 * fronting or the proxy port's refusals
 */
bool gw_shadow_lifts(enum gw_tcp_reason reason);

/**
 * gw_tcp_decide_shadow() - gw_tcp_decide() for a shadow run
 * @f:		the facts (@f->learn NULL)
 * @env:	the SSRF guard's environment (learn mode's rules decide a lifted denial)
 * @v:		the verdict (always written): the lifted one when lifted
 * @would:	when lifted, the policy's denial (its reason's text is the event's)
 *
 * Return: true when the policy denied it and learn mode's rules let it through.
 */
bool gw_tcp_decide_shadow(const struct gw_tcp_facts *f, const struct gw_ssrf_env *env,
			  struct gw_tcp_verdict *v, struct gw_tcp_verdict *would);

/**
 * gw_proxy_decide_shadow() - gw_proxy_decide() for a shadow run (gw_tcp_decide_shadow()'s rules)
 * @policy:	the run's policy
 * @calls:	the run's calls in flight (its tools' rules), or NULL
 * @env:	the SSRF guard's environment
 * @r:		as for gw_proxy_decide()
 * @req:	as for gw_proxy_decide()
 * @out:	as for gw_proxy_decide()
 * @would:	when lifted, the policy's denial
 *
 * Return: true when lifted.
 */
bool gw_proxy_decide_shadow(const struct wd_policy *policy, const struct gw_toolcalls *calls,
			    const struct gw_ssrf_env *env, enum http_result r,
			    const struct http_request *req, struct gw_proxy_verdict *out,
			    struct gw_tcp_verdict *would);

/**
 * gw_socks_decide_shadow() - gw_socks_decide() for a shadow run (gw_tcp_decide_shadow()'s rules)
 * @policy:	the run's policy
 * @calls:	the run's calls in flight (its tools' rules), or NULL
 * @env:	the SSRF guard's environment
 * @req:	as for gw_socks_decide()
 * @out:	as for gw_socks_decide()
 * @would:	when lifted, the policy's denial
 *
 * Return: true when lifted.
 */
bool gw_socks_decide_shadow(const struct wd_policy *policy, const struct gw_toolcalls *calls,
			    const struct gw_ssrf_env *env, const struct socks5_request *req,
			    struct gw_proxy_verdict *out, struct gw_tcp_verdict *would);

/**
 * gw_learn_name_ok() - @s is a name learn mode may allow: labels of letters, digits, '-' and '_'
 * (1..63 bytes each), at most PROTO_NAME_MAX in all; anything else (and an address literal) is
 * no name
 */
bool gw_learn_name_ok(const char *s);

/**
 * gw_learn_allows() - learn mode's rule for @name:@port: any name on any port, within the
 * host's ceiling as a normal run's rules are (its denied names, its allow list in force)
 * @policy:	the run's effective policy (its own rules do not count; NULL: allowed)
 * @name:	a host name
 * @port:	the port; 0: on some port (a DNS question)
 * @why:	on refusal, where the ceiling says so (pointers into @policy); may be NULL
 *
 * Return: true when allowed.
 */
bool gw_learn_allows(const struct wd_policy *policy, const char *name, uint16_t port,
		     struct policy_why *why);

/**
 * gw_learn_allows_addr() - gw_learn_allows() for an address (the ceiling's cidr rules; the
 * SSRF guard is the caller's)
 * Return: true when allowed.
 */
bool gw_learn_allows_addr(const struct wd_policy *policy, const struct gw_addr *a, uint16_t port,
			  struct policy_why *why);

/**
 * gw_tcp_reason_text() - the audit text of @v's reason
 * @v:		a verdict
 * @policy_name: the run's policy name (NO_RULE names it)
 * @buf:	room for a formatted reason
 * @size:	its size (600 holds every reason)
 * Return: the text (@buf, or a literal).
 */
const char *gw_tcp_reason_text(const struct gw_tcp_verdict *v, const char *policy_name, char *buf,
			       size_t size);

/* ------------------------------------------------------------ upstream addresses */

/**
 * struct gw_ssrf_env - what the SSRF guard refuses besides the special ranges
 * @own_net:	the gateway's own pools (runs v4/v6, synthetic v4/v6)
 * @own_prefix:	their prefix lengths (entries with family 0 are skipped)
 * @local:	the host's own addresses
 * @nlocal:	how many
 */
struct gw_ssrf_env {
	struct gw_addr own_net[4];
	unsigned own_prefix[4];
	const struct gw_addr *local;
	size_t nlocal;
};

/**
 * gw_upstream_class() - why @a may not be connected to, for a connection to port @port
 * @env:	the gateway's pools and the host's addresses
 * @policy:	the run's policy (a cidr rule naming @a:@port lifts the refusal); may be NULL
 * @a:		an address a name resolved to
 * @port:	the destination port
 *
 * Special-purpose ranges (gw_addr_classify(): loopback, private, link-local
 * and the metadata address, CGNAT, multicast, reserved, ULA, IPv4 embedded in
 * IPv6, ...), the gateway's own pools and the host's own addresses are refused
 * unless a cidr rule of @policy names @a:@port.
 *
 * Return: GW_ADDR_PUBLIC (may be connected to), or the class that refuses it.
 */
enum gw_addr_class gw_upstream_class(const struct gw_ssrf_env *env, const struct wd_policy *policy,
				     const struct gw_addr *a, uint16_t port);

/**
 * gw_upstream_pick() - the addresses of a name a connection may try, in order
 * @env:	as for gw_upstream_class()
 * @policy:	the run's policy
 * @addrs:	what the name resolved to
 * @n:		how many
 * @port:	the destination port
 * @out:	room for @n addresses: the ones to try, IPv6 first, then IPv4
 * @why:	every refused address and why ("10.0.0.1 is a private address; ..."),
 *		as many as fit
 * @why_size:	size of @why
 *
 * Return: how many addresses are in @out (0: every one was refused).
 */
size_t gw_upstream_pick(const struct gw_ssrf_env *env, const struct wd_policy *policy,
			const struct gw_addr *addrs, size_t n, uint16_t port, struct gw_addr *out,
			char *why, size_t why_size);

/* ------------------------------------------------------------ DNS verdicts */

/**
 * gw_name_allowed() - a rule that allows @name on some port
 * @policy:	the policy (NULL: none)
 * @name:	a host name
 * Return: the rule's index, or -ENOENT.
 */
int gw_name_allowed(const struct wd_policy *policy, const char *name);

enum gw_dns_action {
	GW_DNS_SILENT,	  /* no answer (the message allows none: shorter than a header, QR set) */
	GW_DNS_RCODE,	  /* answer @rcode, with an Extended DNS Error @ede_code when @ede */
	GW_DNS_SYNTHETIC, /* A/AAAA: the run's synthetic address for the name */
	GW_DNS_EMPTY,	  /* NOERROR, authoritative, no records (HTTPS/SVCB) */
	GW_DNS_LIVENESS,  /* warden run's liveness check: answered empty, audited as run.liveness */
	GW_DNS_FORWARD,	  /* ask upstream; relay the answer with its addresses replaced */
};

enum gw_dns_reason {
	GW_DR_MALFORMED = 0, /* the query does not parse: the parser's words */
	GW_DR_NO_RUN,	     /* no run owns the query's ingress address pair */
	GW_DR_CLASS,	     /* a class other than IN */
	GW_DR_TYPE_REFUSED,  /* a type never forwarded (zone transfers, meta-types, ...) */
	GW_DR_EMPTY_TYPE,    /* HTTPS/SVCB: answered empty */
	GW_DR_LIVENESS,	     /* the liveness check */
	GW_DR_NOT_ALLOWED,   /* the name is allowed by no rule */
	GW_DR_CEILING,	     /* the policy allows the name, the host's ceiling does not */
	GW_DR_SYNTHETIC,     /* a synthetic address */
	GW_DR_NOT_ANSWERED,  /* ANY (or no upstream to forward to) */
	GW_DR_FORWARDED,     /* forwarded upstream */
	GW_DR_TOOL_ONLY,     /* only the rules of tools @tools allow the name; none in flight */
	GW_DR_DNS_BUDGET,    /* a new name past its wildcard parent's DNS exfiltration budget */
};

/**
 * struct gw_dns_facts - what the DNS front knows about a query
 * @parsed:	dns_query_parse()'s result
 * @q:		the parsed query
 * @policy:	the policy of the run that owns the query's ingress; NULL: no run
 * @upstream:	a resolver is there to forward to
 * @learn:	the run is in learn mode: any name is answered within the host's ceiling
 *		(gw_learn_allows() on any port)
 * @calls:	the run's MCP tool calls in flight (NULL: none): the rules of a tool in flight
 *		(mcp.tools.NAME.network) allow names too
 * @budget:	the run's DNS exfiltration budget (gw_dns_decide_budget()); NULL: none
 * @now:	the loop's time (monotonic ns), for @budget's windows
 */
struct gw_dns_facts {
	enum dns_result parsed;
	const struct dns_query *q;
	const struct wd_policy *policy;
	bool upstream;
	bool learn;
	const struct gw_toolcalls *calls;
	struct gw_dnsbudget *budget;
	uint64_t now;
};

/**
 * struct gw_dns_verdict - how to answer a query and why
 * @action:	what to answer
 * @reason:	why (gw_dns_reason_text())
 * @allowed:	the audit event's decision
 * @rcode:	GW_DNS_RCODE: the rcode
 * @ede:	GW_DNS_RCODE: add an Extended DNS Error with @ede_code and the reason text
 * @ede_code:	its code
 * @rule:	the allowing rule (NOT_ANSWERED, SYNTHETIC, FORWARDED), or -1
 * @detail:	TYPE_REFUSED: why that type is never forwarded
 * @ceiling:	CEILING: where the ceiling refuses the name
 * @learn:	decided in learn mode (SYNTHETIC and FORWARDED say so; @rule is -1)
 * @tool:	as struct gw_tcp_verdict's
 * @tools:	as struct gw_tcp_verdict's
 * @policy:	TOOL_ONLY: the policy (its tools are named)
 * @calls:	TOOL_ONLY: the calls in flight (NULL: none)
 * @parent:	DNS_BUDGET: the wildcard parent whose budget is spent (the policy's string)
 * @limit:	DNS_BUDGET: the budget, bytes a window
 * @first:	DNS_BUDGET: the window's first refusal for @parent (audited in full; the
 *		rest are counted into a summary)
 */
struct gw_dns_verdict {
	enum gw_dns_action action;
	enum gw_dns_reason reason;
	bool allowed;
	uint16_t rcode;
	bool ede;
	uint16_t ede_code;
	int rule;
	const char *detail;
	struct policy_why ceiling;
	bool learn;
	int tool;
	uint64_t tools;
	const struct wd_policy *policy;
	const struct gw_toolcalls *calls;
	const char *parent;
	uint64_t limit;
	bool first;
};

/**
 * gw_dns_decide() - the verdict on one query
 * @f:		the facts
 * @v:		the verdict (always written)
 *
 * In order: a malformed query is answered with the parser's rcode hint when
 * its header allows an answer; no run: REFUSED; a class other than IN:
 * REFUSED; a refused type (gw_dns_qtype_refused()): REFUSED + EDE 21;
 * HTTPS/SVCB: empty (the liveness name: LIVENESS); a name no rule allows (an
 * SRV service name "_svc._proto.NAME" is decided by NAME): NXDOMAIN + EDE 15
 * (CEILING when only the host's ceiling refuses it; TOOL_ONLY when only the rules of tools
 * without a call in flight allow it: a tool in flight's rules allow it as network.allow's do);
 * A/AAAA: SYNTHETIC; ANY, or nothing to forward to: NOTIMP; the rest FORWARD.
 * In learn mode (@f->learn) every name passes the name check unless the host's ceiling
 * refuses it (gw_learn_allows() with port 0).
 */
void gw_dns_decide(const struct gw_dns_facts *f, struct gw_dns_verdict *v);

/* what becomes of a query gw_dns_decide() denied, when the policy has network.ask */
enum gw_ask_action {
	GW_ASK_NONE,   /* not an ask: the verdict stands */
	GW_ASK_HOLD,   /* held while a person is asked (the run's launcher answers) */
	GW_ASK_NOBODY, /* an ask name, but no one can answer (the launcher said so): denied now */
	GW_ASK_TCP,    /* an ask name over DNS-over-TCP: only UDP queries are held; denied now */
};

/**
 * gw_ask_decide() - whether a denied query is asked about (network.ask), pure
 * @f:		the query's facts (gw_dns_decide()'s)
 * @v:		its verdict
 * @asker:	the run's launcher can ask a person (it said so when it registered)
 * @tcp:	the query came over TCP
 * @ret_rule:	the ask rule that matched (its index, or POLICY_ASK_ANY), for HOLD and NOBODY
 *
 * Only an A or AAAA query of a name no rule allows (GW_DR_NOT_ALLOWED: never the host's
 * ceiling's denial, never learn mode) whose name network.ask matches (policy_ask_match()).
 * Return: what to do.
 */
enum gw_ask_action gw_ask_decide(const struct gw_dns_facts *f, const struct gw_dns_verdict *v,
				 bool asker, bool tcp, int *ret_rule);

/**
 * gw_dns_budget_bytes() - the DNS exfiltration budget of a run under @p, in bytes a window:
 * limits.dns_label_kib_per_min KiB, GW_DNSB_DEFAULT_KIB when the policy does not set it, 0
 * (off) when it sets 0 or there is no policy
 */
uint64_t gw_dns_budget_bytes(const struct wd_policy *p);

/**
 * gw_dns_decide_budget() - the DNS exfiltration budget over gw_dns_decide()'s verdict
 * @f:		the facts @v was decided from (@f->budget, @f->now: the run's state, the clock)
 * @v:		the verdict, turned into a DNS_BUDGET denial when the budget refuses the name
 *
 * Only a name answered (SYNTHETIC or FORWARD) by a wildcard rule of the policy or of a tool in
 * flight is charged to that rule's parent (gw_dnsb_charge()): not a name an exact rule of the
 * same rules allows (nothing to leak in a fixed name), not in learn mode (no rule), not
 * without @f->budget. Past the budget the verdict is REFUSED with an EDE "Other" naming the
 * budget; names charged before stay free.
 */
void gw_dns_decide_budget(const struct gw_dns_facts *f, struct gw_dns_verdict *v);

/**
 * gw_dns_decide_shadow() - gw_dns_decide() for a shadow run: a name the run's policy does not
 * allow (NOT_ALLOWED) is decided again by learn mode's rule (any name within the host's
 * ceiling) and answered when that allows it; the host's ceiling still refuses (CEILING)
 * @f:		the facts (@f->learn false)
 * @v:		the verdict (always written): the lifted one when lifted
 * @would:	when lifted, the policy's denial (its reason's text is the event's)
 *
 * Return: true when the policy denied the name and learn mode's rule let it through.
 */
bool gw_dns_decide_shadow(const struct gw_dns_facts *f, struct gw_dns_verdict *v,
			  struct gw_dns_verdict *would);

/**
 * gw_dns_reason_text() - the audit text of @v's reason
 * @v:		a verdict
 * @q:		its query
 * @policy_name: the run's policy name (NOT_ALLOWED names it)
 * @peer:	the query's source (NO_RUN names it)
 * @buf:	room for a formatted reason
 * @size:	its size (600 holds every reason)
 * Return: the text (@buf, or a literal).
 */
const char *gw_dns_reason_text(const struct gw_dns_verdict *v, const struct dns_query *q,
			       const char *policy_name, const struct gw_addr *peer, char *buf,
			       size_t size);

/**
 * gw_dns_qtype_name() - "A", "HTTPS", ..., or "TYPE<n>" written into @buf (16 bytes)
 */
const char *gw_dns_qtype_name(uint16_t type, char *buf, size_t size);

/**
 * gw_dns_qtype_refused() - why queries of @type are never forwarded, or NULL
 */
const char *gw_dns_qtype_refused(uint16_t type);

#endif /* WARDEN_GATEWAY_DECIDE_H */

/* decide.c - the gateway's decisions, pure: bytes and facts in, a verdict and
 * a reason code out (decide.h). The TCP path asks at accept and when the
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
 *     requests, decided by the target's name and port;
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

/* ------------------------------------------------------------ first bytes */

enum sniffed {
	SNIFFED_MORE,	   /* read more */
	SNIFFED_DONE,	   /* decided */
	SNIFFED_MALFORMED, /* broken: deny with @why */
	SNIFFED_NOT_MINE,  /* not this protocol: ask the next sniffer */
};

/* leading CR and LF bytes; *@clean: they are whole CRLF pairs (RFC 9112 §2.2) */
static size_t eol_prefix(const uint8_t *b, size_t n, bool *clean)
{
	size_t i = 0;

	while (i < n && (b[i] == '\r' || b[i] == '\n'))
		i++;
	*clean = true;
	for (size_t k = 0; k < i; k += 2)
		if (k + 1 >= i || b[k] != '\r' || b[k + 1] != '\n')
			*clean = false;
	return i;
}

/* a byte of an HTTP token (RFC 9110 §5.6.2 tchar) */
static bool token_char(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

/*
 * A first line that a lenient server would take for a request: a token of up
 * to 32 bytes, spaces, and "HTTP/" (any case) on the same line. Lenient
 * servers accept what the strict parser refuses (bare LF line ends, several
 * spaces, methods with '-'), so anything that looks like this is HTTP that
 * failed to parse -- denied -- and never raw TCP relayed unchecked.
 */
static bool looks_http(const uint8_t *b, size_t n)
{
	size_t i = 0;

	while (i < n && i <= 32 && token_char(b[i]))
		i++;
	if (i == 0 || i > 32 || i >= n || (b[i] != ' ' && b[i] != '\t'))
		return false;
	for (; i + 5 <= n && b[i] != '\n'; i++)
		if (!strncasecmp((const char *)b + i, "HTTP/", 5))
			return true;
	return false;
}

/* TLS: a ClientHello names the host in its SNI */
static enum sniffed sniff_tls(const uint8_t *buf, size_t len, bool full, struct tls_hello *th,
			      struct gw_first *out)
{
	enum tls_result t = tls_client_hello_parse(buf, len, th);

	if (!th->is_tls)
		return SNIFFED_NOT_MINE;
	out->tls = true;
	out->tls_version = th->legacy_version ? th->legacy_version : 0x0303;
	out->ech = th->has_ech;
	switch (t) {
	case TLS_NEED_MORE:
		if (!full)
			return SNIFFED_MORE;
		out->why = "incomplete TLS ClientHello";
		return SNIFFED_MALFORMED;
	case TLS_OK:
		/* With Encrypted Client Hello the outer SNI is the name the server
		 * sees first and the one decided on: the DNS front gives no ECH
		 * configuration, so a browser's extension is GREASE and its outer
		 * SNI the real name; with a configuration from elsewhere it is the
		 * client-facing server's public name, and that name must be allowed
		 * (docs/gateway.md, "Encrypted Client Hello"). */
		snprintf(out->sni, sizeof(out->sni), "%s", th->sni);
		return SNIFFED_DONE;
	case TLS_ABSENT:
		if (th->has_ech) {
			out->why = "TLS Encrypted Client Hello without an outer server name";
			return SNIFFED_MALFORMED;
		}
		return SNIFFED_DONE;
	case TLS_MALFORMED:
		out->why = th->why ? th->why : "malformed TLS ClientHello";
		return SNIFFED_MALFORMED;
	}
	return SNIFFED_MALFORMED;
}

/*
 * HTTP/1.x: a request head names the host in Host (or an absolute target).
 * Empty lines before it are skipped (RFC 9112 §2.2; servers skip them too),
 * so the request after them is the one checked. A valid prefix of a head
 * that never completes is HTTP that failed, not raw TCP: a server would read
 * whatever comes later as the rest of that request.
 */
static enum sniffed sniff_http(const uint8_t *buf, size_t len, bool full, struct tls_hello *th,
			       struct gw_first *out)
{
	struct http_request req;
	bool clean;
	size_t skip = eol_prefix(buf, len, &clean);
	const uint8_t *b = buf + skip;
	size_t n = len - skip;

	(void)th;
	if (!clean) {
		/* CR and LF bytes that are not CRLF pairs: a lenient server
		 * skips them too, so a request after them is HTTP gone wrong */
		if (n == 0 && !full)
			return SNIFFED_MORE;
		if (n && !looks_http(b, n))
			return SNIFFED_NOT_MINE;
		out->http = true;
		out->why = "bare CR or LF before a request line";
		return SNIFFED_MALFORMED;
	}
	if (n == 0) {
		if (!full)
			return SNIFFED_MORE;
		out->http = true; /* only empty lines: what follows is checked as HTTP */
		return SNIFFED_DONE;
	}
	switch (http_request_parse(b, n, &req)) {
	case HTTP_NEED_MORE:
		if (!full)
			return SNIFFED_MORE;
		out->http = true;
		out->why = "incomplete HTTP request head";
		return SNIFFED_MALFORMED;
	case HTTP_OK:
		out->http = true;
		snprintf(out->host, sizeof(out->host), "%s", req.host);
		return SNIFFED_DONE;
	case HTTP_ABSENT:
		out->http = true;
		return SNIFFED_DONE;
	case HTTP_MALFORMED:
		if (!skip && !looks_http(b, n))
			return SNIFFED_NOT_MINE;
		out->http = true;
		out->why = req.why ? req.why : "malformed HTTP request";
		return SNIFFED_MALFORMED;
	}
	return SNIFFED_NOT_MINE;
}

/* the protocols that name a host in the client's first bytes, in the order tried */
static const struct {
	const char *proto;
	enum sniffed (*fn)(const uint8_t *buf, size_t len, bool full, struct tls_hello *th,
			   struct gw_first *out);
} sniffers[] = {
    {"tls", sniff_tls},
    {"http", sniff_http},
};

enum gw_sniff gw_sniff(const uint8_t *buf, size_t len, bool full, struct tls_hello *th,
		       struct gw_first *out)
{
	memset(out, 0, sizeof(*out));
	out->proto = "tcp";
	if (!len)
		return GW_SNIFF_DONE;
	for (size_t i = 0; i < WD_ARRAY_SIZE(sniffers); i++) {
		enum sniffed s = sniffers[i].fn(buf, len, full, th, out);

		if (s == SNIFFED_NOT_MINE)
			continue;
		out->proto = sniffers[i].proto;
		return s == SNIFFED_MORE   ? GW_SNIFF_MORE
		       : s == SNIFFED_DONE ? GW_SNIFF_DONE
					   : GW_SNIFF_MALFORMED;
	}
	return GW_SNIFF_DONE; /* plain bytes: raw TCP */
}

const char *gw_first_named(const struct gw_first *f)
{
	struct gw_addr a;

	if (f->sni[0])
		return f->sni;
	if (f->host[0] && gw_addr_parse(f->host, &a))
		return f->host;
	return NULL;
}

/* ------------------------------------------------------------ learn mode */

/* a name learn mode may allow: labels of letters, digits, '-' and '_' (1..63 bytes each), at most
 * PROTO_NAME_MAX in all; anything else (and an address literal) is no name */
static bool learn_name_ok(const char *s)
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

	if (!learn_name_ok(name))
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
	} else if (!p->ceiling_allow) {
		return true;
	} else if ((port ? policy_match(p->ceiling_allow, name, port)
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

/* ------------------------------------------------------------ TCP */

static void verdict(struct gw_tcp_verdict *v, enum gw_tcp_action action, enum gw_tcp_reason reason)
{
	v->action = action;
	v->reason = reason;
}

/* @name:@port by its rule: ALLOW_NAME, or DENY NO_RULE */
static void by_name(const struct wd_policy *p, const char *name, uint16_t port,
		    struct gw_tcp_verdict *v)
{
	v->name = name;
	v->port = port;
	v->rule = policy_match(p, name, port);
	if (v->rule < 0) {
		v->rule = -1;
		verdict(v, GW_TCP_DENY,
			policy_ceiling_why(p, name, port, &v->ceiling) ? GW_TR_CEILING
								       : GW_TR_NO_RULE);
	} else {
		verdict(v, GW_TCP_ALLOW_NAME, GW_TR_ALLOWED);
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
		verdict(v, GW_TCP_DENY, learn_name_ok(name) ? GW_TR_CEILING : GW_TR_NO_RULE);
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
	v->port = f->port;
	if (f->learn && !f->first) {
		tcp_decide_learn(f, v);
		return;
	}
	if (!f->first) {
		if (f->bound)
			by_name(f->policy, f->bound, f->port, v);
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
		by_name(f->policy, n, f->port, v);
	else
		by_addr(f->policy, f->dst, f->port, GW_TCP_DENY, v);
}

void gw_tcp_recheck(const struct wd_policy *policy, const char *name, const struct gw_addr *dst,
		    uint16_t port, struct gw_tcp_verdict *v)
{
	struct gw_addr lit;

	memset(v, 0, sizeof(*v));
	v->rule = -1;
	v->port = port;
	if (name && gw_addr_parse(name, &lit))
		by_name(policy, name, port, v);
	else
		by_addr(policy, dst, port, GW_TCP_DENY, v); /* a literal: where it connected */
}

void gw_tcp_decide_request(const char *bound, const struct http_request *req, unsigned request,
			   struct gw_tcp_verdict *v)
{
	memset(v, 0, sizeof(*v));
	v->rule = -1;
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

/* the proxy's verdict; @learn: NULL, or learn mode with the SSRF guard's environment */
static void proxy_decide(const struct wd_policy *policy, const struct gw_ssrf_env *learn,
			 enum http_result r, const struct http_request *req,
			 struct gw_proxy_verdict *out)
{
	struct gw_tcp_verdict *v = &out->v;
	uint16_t port;

	memset(out, 0, sizeof(*out));
	v->rule = -1;
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
	if (learn) {
		if (req->host_kind == PROTO_HOST_NAME) {
			learn_by_name(policy, req->host, port, v);
			return;
		}
		if (gw_addr_parse(req->host, &out->literal)) {
			verdict(v, GW_TCP_DENY, GW_TR_PROXY_LITERAL);
			return;
		}
		learn_by_addr(policy, learn, &out->literal, port, v);
		return;
	}
	by_name(policy, req->host, port, v); /* a literal is matched against the cidr rules */
	if (v->action == GW_TCP_DENY || req->host_kind == PROTO_HOST_NAME)
		return;
	if (gw_addr_parse(req->host, &out->literal)) {
		verdict(v, GW_TCP_DENY, GW_TR_PROXY_LITERAL);
		return;
	}
	v->dst = &out->literal;
	verdict(v, GW_TCP_ALLOW_ADDR, GW_TR_ALLOWED);
}

void gw_proxy_decide(const struct wd_policy *policy, enum http_result r,
		     const struct http_request *req, struct gw_proxy_verdict *out)
{
	proxy_decide(policy, NULL, r, req, out);
}

void gw_proxy_decide_learn(const struct wd_policy *policy, const struct gw_ssrf_env *env,
			   enum http_result r, const struct http_request *req,
			   struct gw_proxy_verdict *out)
{
	proxy_decide(policy, env, r, req, out);
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
		snprintf(buf, size,
			 "%s:%u is a %s address: refused in learn mode as in any run (SSRF guard)",
			 gw_addr_str(v->dst, at, sizeof(at)), v->port,
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

				snprintf(one, sizeof(one), "%s is a %s address",
					 gw_addr_str(a, txt, sizeof(txt)), gw_addr_class_name(c));
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

/* ------------------------------------------------------------ DNS */

int gw_name_allowed(const struct wd_policy *p, const char *name)
{
	for (size_t i = 0; p && i < p->nrules; i++) {
		int m;

		if (p->rules[i].kind == POLICY_RULE_CIDR)
			continue;
		m = policy_match(p, name, p->rules[i].ports[0]);
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

void gw_dns_decide(const struct gw_dns_facts *f, struct gw_dns_verdict *v)
{
	const struct dns_query *q = f->q;

	memset(v, 0, sizeof(*v));
	v->rule = -1;
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
				    learn_name_ok(decided_name(q)) ? GW_DR_CEILING
								   : GW_DR_NOT_ALLOWED,
				    false, DNS_RCODE_NXDOMAIN);
			v->ede = true;
			v->ede_code = DNS_EDE_BLOCKED;
			return;
		}
	} else if ((v->rule = gw_name_allowed(f->policy, decided_name(q))) < 0) {
		v->rule = -1;
		dns_verdict(v, GW_DNS_RCODE,
			    policy_ceiling_why(f->policy, decided_name(q), 0, &v->ceiling)
				? GW_DR_CEILING
				: GW_DR_NOT_ALLOWED,
			    false, DNS_RCODE_NXDOMAIN);
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
	}
	return "denied";
}

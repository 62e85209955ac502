/* socksconn.c - a SOCKS5 client on the proxy port (RFC 1928, no authentication, CONNECT only):
 * its greeting answered, its request read and decided as a CONNECT to the same target
 * (gw_socks_decide()), its refusals answered with a reply code. conn.c sends the client here
 * when its first byte is 5 (no HTTP method and no TLS record starts so) and acts on the
 * verdict as on a CONNECT's: the success reply after the upstream connect, the tunnel's
 * first bytes then checked against the target's name.
 *
 * Theory of operation. c->socks says where the client is:
 *
 *   GREETING  its first byte was 5: waiting for a complete greeting; "no authentication"
 *             offered: answered 05 00 (-> REQUEST); not offered: 05 FF and closed;
 *   REQUEST   waiting for the request; CONNECT: decided (-> DECIDED); BIND, UDP ASSOCIATE,
 *             another command or address type: refused with its reply code;
 *   DECIDED   the verdict is conn.c's; a denial (policy, SSRF guard, no address) answers
 *             "not allowed by ruleset" (a name that does not resolve: "host unreachable");
 *   TUNNEL    the success reply went out: from here on a denial is the tunnel's (a TLS
 *             alert, a 403, else a reset), as in a CONNECT tunnel.
 *
 * Bytes that cannot be parsed close the connection without an answer; nothing is ever
 * relayed before the verdict. Every refusal is a net.connect denial with its denial id. */
#include "gateway/decide.h"
#include "gateway/tcp.h"
#include "gateway/sock.h"

#include <string.h>
#include <sys/socket.h>

/* refuse @c: @rep answered when not 0 (see connend.c), audited with @why */
static enum gw_socks_step refuse(struct gw_conn *c, uint8_t rep, const char *why)
{
	c->socks_rep = rep;
	gw_conn_deny(c, why);
	return GW_SOCKS_DONE;
}

/* drop the first @n bytes of c->buf (what the client sent after them stays) */
static void consume(struct gw_conn *c, size_t n)
{
	memmove(c->buf, c->buf + n, c->blen - n);
	c->blen -= n;
}

/* the greeting: answered and consumed, or refused */
static enum gw_socks_step greeting(struct gw_conn *c, bool final)
{
	static const uint8_t noauth[2] = {5, 0};
	struct socks5_greeting g;

	switch (socks5_greeting_parse(c->buf, c->blen, &g)) {
	case SOCKS5_NEED_MORE:
		if (!final && c->blen < GW_PEEK_MAX)
			return GW_SOCKS_WAIT;
		return refuse(c, 0, "incomplete SOCKS5 greeting");
	case SOCKS5_MALFORMED:
		return refuse(c, 0, g.why);
	case SOCKS5_REFUSED:
		return refuse(c, g.rep, g.why);
	case SOCKS5_OK:
		break;
	}
	if (gw_sock_send(c->cfd, noauth, sizeof(noauth), MSG_NOSIGNAL | MSG_DONTWAIT) !=
	    (ssize_t)sizeof(noauth)) {
		gw_conn_close(c, "client write failed");
		return GW_SOCKS_DONE;
	}
	consume(c, g.len);
	c->socks = GW_SOCKS_REQUEST;
	return GW_SOCKS_WAIT;
}

enum gw_socks_step gw_conn_socks(struct gw_conn *c, bool final, const struct gw_ssrf_env *learn,
				 struct gw_proxy_verdict *pv, size_t *used)
{
	struct socks5_request req;
	enum gw_socks_step s;

	c->proto = "socks5";
	c->http = c->tls = false;
	if (c->socks == GW_SOCKS_NONE)
		c->socks = GW_SOCKS_GREETING;
	if (c->socks == GW_SOCKS_GREETING) {
		s = greeting(c, final);
		if (c->socks != GW_SOCKS_REQUEST || !c->blen)
			return s;
		/* the request came with the greeting */
	}
	switch (socks5_request_parse(c->buf, c->blen, &req)) {
	case SOCKS5_NEED_MORE:
		if (!final && c->blen < GW_PEEK_MAX)
			return GW_SOCKS_WAIT;
		return refuse(c, 0, "incomplete SOCKS5 request");
	case SOCKS5_MALFORMED:
		return refuse(c, 0, req.why);
	case SOCKS5_REFUSED:
		return refuse(c, req.rep, req.why);
	case SOCKS5_OK:
		break;
	}
	/* the event names what was asked for */
	if (gw_str_set(&c->host, req.host))
		return refuse(c, SOCKS5_REP_FAILURE, "out of memory");
	c->socks = GW_SOCKS_DECIDED;
	c->socks_rep = SOCKS5_REP_NOT_ALLOWED;
	if (!c->run->shadow) {
		gw_socks_decide(c->run->policy, &c->run->mcp, learn, &req, pv);
	} else {
		/* a shadow run: a policy denial let through, said while @req is here */
		struct gw_tcp_verdict would;
		struct gw_ssrf_env env;

		gw_ssrf_env(c->t->runs, &env);
		if (gw_socks_decide_shadow(c->run->policy, &c->run->mcp, &env, &req, pv, &would) &&
		    gw_conn_would(c, &would))
			pv->v = would;
	}
	/* the verdict names what it decided by the heap copy: @req is gone when the caller reads
	 * it (the audit's resource and reason are made after this returns) */
	if (pv->v.name == req.host)
		pv->v.name = c->host;
	if (pv->v.bound == req.host)
		pv->v.bound = c->host;
	*used = req.len;
	return GW_SOCKS_VERDICT;
}

int gw_socks_established(struct gw_conn *c, uint8_t *out, size_t size)
{
	c->socks = GW_SOCKS_TUNNEL;
	c->socks_rep = 0;
	return socks5_reply_compose(out, size, SOCKS5_REP_OK);
}

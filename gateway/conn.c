/* conn.c - a TCP connection's state machine: what is decided at accept and on
 * the client's first bytes (decide.c: synthetic address, TLS SNI, HTTP Host, proxy
 * CONNECT / absolute-form / SOCKS5 (socksconn.c)), upstream resolution and connect, the events and
 * deadlines of every state. The relay itself, the audit events, denials and the
 * end of a connection are relayconn.c's; accepting is tcp.c's.
 *
 * Theory of operation. A connection moves through these states:
 *
 *   PEEK     the destination is not known (or not allowed) yet: read the
 *            client's first bytes into c->buf (bounded by peek_ms) until a
 *            TLS ClientHello, an HTTP head or plain bytes decide;
 *   RESOLVE  an allowed name is being resolved (c-ares, cached);
 *   CONNECT  trying each resolved address in turn (connect_ms each);
 *   RELAY    bytes flow both ways: small reads are copied through one
 *            per-loop buffer (recv/send); a read that fills it marks the
 *            direction as bulk, which then moves through a pipe with
 *            splice(2);
 *   DRAIN    denied: the 403 or TLS alert was sent, reading until the client
 *            closes (2 s at most) so that the answer is not lost to a reset;
 *   CLOSED   parked on the zombie list until the end of the loop round.
 *
 * A connection to a synthetic address knows its name at once: it is
 * resolved and connected without waiting (server-first protocols such as SSH
 * work), but the client->upstream direction stays "unchecked" until its
 * first bytes were seen: a ClientHello's SNI or an HTTP Host that names
 * another host is denied (domain fronting). The peeked bytes are written
 * upstream before splicing starts. Each direction (struct gw_half) passes
 * its end of stream on at once with shutdown(SHUT_WR); the connection closes
 * when both directions ended, on an error, or after idle_ms without traffic.
 *
 * Both sockets are added to epoll once, edge-triggered, for reading and
 * writing; struct gw_ready keeps what the events said, and a flag is cleared
 * only when a read found the socket drained (EAGAIN, or a short copy read)
 * or a write found it full. No epoll_ctl per state change, no read that is
 * known to return EAGAIN, and a short read after the peer's FIN
 * (GW_POLL_RDHUP) is its end of stream without one more read. A wake-up moves at
 * most 16 chunks per direction; a connection with more is queued on t->again
 * and served again before the loop sleeps.
 *
 * Audit: one "net.connect" event at decision time (allowed or denied, with
 * the denial id sent to the client), and one "net.close" event for every
 * allowed connection (bytes up/down, duration, how it ended).
 */
#include "gateway/decide.h"
#include "gateway/dns.h"
#include "gateway/tcp.h"
#include "gateway/sock.h"

#include <errno.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GW_RESOLVE_NS 10000000000ull

static void start_resolve(struct gw_conn *c);
static void try_connect(struct gw_conn *c);
static void fail_upstream(struct gw_conn *c, const char *reason);
static void proxy_request(struct gw_conn *c, bool final);

/* what the client's first bytes in c->buf say (gw_sniff()); the connection
 * keeps what it needs of it (c->tls, c->http, c->sni, c->host, ...) */
static enum gw_sniff sniff(struct gw_conn *c, bool final, struct gw_first *f)
{
	enum gw_sniff s =
	    gw_sniff(c->buf, c->blen, final || c->blen >= GW_PEEK_MAX, c->t->hello, f);

	c->tls = f->tls;
	c->http = f->http;
	c->proto = f->proto;
	if (f->tls) {
		c->tls_version = f->tls_version;
		c->ech = f->ech;
	}
	if (gw_str_set(&c->sni, f->sni) || gw_str_set(&c->host, f->host)) {
		f->why = "out of memory";
		return GW_SNIFF_MALFORMED;
	}
	return s;
}

/* the upstream addresses to try: a heap copy of @a[0..@n) (@n <= GW_CACHE_ADDRS). Return: 0 or
 * -ENOMEM */
static int set_cand(struct gw_conn *c, const struct gw_addr *a, size_t n)
{
	struct gw_addr *v = malloc(n * sizeof(*v));

	if (!v)
		return -ENOMEM;
	memcpy(v, a, n * sizeof(*v));
	free(c->cand);
	c->cand = v;
	c->ncand = (uint8_t)n;
	c->icand = 0;
	return 0;
}

/* the audit text of @v's reason, for a connection of @c's run */
static const char *reason_of(const struct gw_conn *c, const struct gw_tcp_verdict *v, char *buf,
			     size_t size)
{
	return gw_tcp_reason_text(v, c->run->policy_name, buf, size);
}

/* c->rule = the text of @v's allowing rule, network.allow's or a tool's (none: learn mode allowed
 * it). Return: 0 or -ENOMEM */
static int set_rule(struct gw_conn *c, const struct gw_tcp_verdict *v)
{
	char buf[600];

	return gw_str_set(&c->rule, gw_tools_rule_text(c->run->policy, v->tool, v->rule, v->tools,
						       buf, sizeof(buf)));
}

/* learn mode: the SSRF guard's environment in @env for the decision (the facts' `learn`);
 * NULL for any other run */
static const struct gw_ssrf_env *learn_env(struct gw_conn *c, struct gw_ssrf_env *env)
{
	if (!c->run->learn)
		return NULL;
	gw_ssrf_env(c->t->runs, env);
	return env;
}

/* @facts decided: for a shadow run as gw_tcp_decide_shadow() (a policy denial let through is
 * kept for the net.connect event; out of memory: denied), else gw_tcp_decide() */
static void decide(struct gw_conn *c, const struct gw_tcp_facts *facts, struct gw_tcp_verdict *v)
{
	struct gw_tcp_verdict would;
	struct gw_ssrf_env env;

	if (!c->run->shadow) {
		gw_tcp_decide(facts, v);
		return;
	}
	gw_ssrf_env(c->t->runs, &env);
	if (gw_tcp_decide_shadow(facts, &env, v, &would) && gw_conn_would(c, &would))
		*v = would;
}

/* act on the verdict on the client's first bytes (gw_tcp_decide() with them) */
static void first_verdict(struct gw_conn *c, const struct gw_tcp_verdict *v)
{
	char reason[600];

	if (v->action == GW_TCP_DENY) {
		/* a name refused by policy is the event's resource */
		if ((v->reason == GW_TR_NO_RULE || v->reason == GW_TR_TOOL_ONLY ||
		     (v->reason == GW_TR_CEILING && v->name)) &&
		    v->name != c->name && gw_str_set(&c->name, v->name))
			gw_conn_deny(c, "out of memory");
		else
			gw_conn_deny(c, reason_of(c, v, reason, sizeof(reason)));
		return;
	}
	if (v->action == GW_TCP_ALLOW_BYTES) {
		/* a bound connection's first bytes passed; every later request on
		 * it is checked as this one was */
		c->checked = true;
		c->http_track = c->http;
		if (c->st == GW_C_RELAY && !c->decided) {
			c->decided = true;
			gw_conn_audit(c, "net.connect", true, "allowed");
		}
		gw_conn_flush_peeked(c);
		return;
	}
	if (v->action == GW_TCP_ALLOW_NAME) {
		if (gw_str_set(&c->name, v->name) || set_rule(c, v)) {
			gw_conn_deny(c, "out of memory");
			return;
		}
		c->checked = true;
		c->http_track = c->http; /* later requests must name it too */
		start_resolve(c);
		return;
	}
	/* GW_TCP_ALLOW_ADDR: a cidr rule names the address */
	if (set_rule(c, v) || set_cand(c, &c->orig, 1)) {
		gw_conn_deny(c, "out of memory");
		return;
	}
	c->checked = true;
	try_connect(c);
}

void gw_conn_ask_answer(struct gw_conn *c, bool allow, const char *why)
{
	c->asked = false;
	if (!allow) {
		gw_conn_deny(c, why);
		return;
	}
	proxy_request(c, true); /* the request again, under the policy that now allows it */
}

/* act on the verdict on a proxy request (CONNECT, absolute-form, SOCKS5) whose target c->host
 * names; @used: a tunnel's request bytes at the start of c->buf (what follows them is kept for
 * the tunnel's check) */
static void proxy_verdict(struct gw_conn *c, const struct gw_proxy_verdict *pv, size_t used)
{
	char reason[600];

	c->proto = pv->proto;
	/* the event names what was asked for: the target, and once its form
	 * was understood its port and name (and the rule that allowed it) */
	if ((pv->v.port && gw_str_set(&c->name, c->host)) ||
	    (pv->v.rule >= 0 && set_rule(c, &pv->v))) {
		gw_conn_deny(c, "out of memory");
		return;
	}
	if (pv->v.port)
		c->oport = pv->v.port;
	if (pv->v.action == GW_TCP_DENY) {
		if (!gw_conn_ask_hold(c, &pv->v))
			gw_conn_deny(c, reason_of(c, &pv->v, reason, sizeof(reason)));
		return;
	}
	c->budget = pv->budget;
	/* not reading the client until connected; a tunnel's first
	 * bytes are checked after the 200 (see connected()) */
	c->checked = true;
	if (pv->connect) {
		/* keep what follows the head (a pipelined ClientHello) for the check */
		memmove(c->buf, c->buf + used, c->blen - used);
		c->blen -= used;
	}
	if (pv->v.action == GW_TCP_ALLOW_ADDR) {
		if (set_cand(c, &pv->literal, 1)) {
			gw_conn_deny(c, "out of memory");
			return;
		}
		try_connect(c);
		return;
	}
	start_resolve(c);
}

/* a shadow run's proxy request decided (gw_proxy_decide_shadow(), as decide()) */
static void proxy_shadow(struct gw_conn *c, enum http_result r, const struct http_request *req,
			 struct gw_proxy_verdict *pv)
{
	struct gw_tcp_verdict would;
	struct gw_ssrf_env env;

	gw_ssrf_env(c->t->runs, &env);
	if (gw_proxy_decide_shadow(c->run->policy, &c->run->mcp, &env, r, req, pv, &would) &&
	    gw_conn_would(c, &would))
		pv->v = would;
}

static void proxy_request(struct gw_conn *c, bool final)
{
	struct http_request req;
	enum http_result r;
	struct gw_proxy_verdict pv;
	struct gw_ssrf_env env;
	size_t used = 0;

	if (c->socks || (c->blen && c->buf[0] == 5)) {
		/* SOCKS5: no HTTP method or TLS record starts with byte 5 */
		if (gw_conn_socks(c, final, learn_env(c, &env), &pv, &used) == GW_SOCKS_VERDICT)
			proxy_verdict(c, &pv, used);
		return;
	}
	r = http_request_parse(c->buf, c->blen, &req);
	c->http = true;
	c->proto = "proxy";
	if (c->blen && c->buf[0] == 0x16) {
		c->http = false;
		c->tls = true;
		c->tls_version = 0x0303;
	}
	if (r == HTTP_NEED_MORE && !final && c->blen < GW_PEEK_MAX)
		return;
	if (c->run->learn)
		gw_proxy_decide_learn(c->run->policy, learn_env(c, &env), r, &req, &pv);
	else if (c->run->shadow)
		proxy_shadow(c, r, &req, &pv);
	else
		gw_proxy_decide(c->run->policy, &c->run->mcp, r, &req, &pv);
	if (r == HTTP_OK && gw_str_set(&c->host, req.host)) {
		gw_conn_deny(c, "out of memory");
		return;
	}
	proxy_verdict(c, &pv, req.head_len);
}

static int read_first(struct gw_conn *c, bool *eof)
{
	*eof = false;
	if (!c->buf) {
		c->buf = gw_buf_get(&c->t->pool);
		if (!c->buf)
			return -ENOMEM;
	}
	while (c->blen < GW_PEEK_MAX) {
		size_t want = GW_PEEK_MAX - c->blen;
		ssize_t n = gw_sock_recv(c->cfd, c->buf + c->blen, want, MSG_DONTWAIT);

		if (n > 0) {
			c->blen += (size_t)n;
			if ((size_t)n < want) {
				/* drained for now: no extra recv() for EAGAIN; new
				 * bytes bring a new edge, and after the client's FIN
				 * this was the last of them */
				c->cr.rd = false;
				*eof = c->cr.rdhup;
				return 0;
			}
			continue;
		}
		if (n == 0) {
			*eof = true;
			return 0;
		}
		if (errno == EAGAIN) {
			c->cr.rd = false;
			return 0;
		}
		if (errno == EINTR)
			return 0;
		return -errno;
	}
	return 0;
}

/* the client spoke (or closed) while its first bytes are still undecided */
static void first_bytes(struct gw_conn *c, bool final)
{
	struct gw_tcp_verdict v;
	struct gw_first f;
	struct gw_ssrf_env env;
	struct gw_tcp_facts facts = {
	    .policy = c->run->policy,
	    .dst = &c->orig,
	    .port = c->oport,
	    .bound = c->synthetic ? c->name : NULL,
	    .first = &f,
	    .calls = &c->run->mcp,
	};

	if (c->kind == GW_K_PROXY && !c->connect_ok) {
		proxy_request(c, final);
		return;
	}
	if (sniff(c, final, &f) == GW_SNIFF_MORE)
		return;
	if (c->pending_deny) {
		gw_conn_deny(c, c->pending_deny);
		return;
	}
	if (!c->synthetic)
		gw_disarm(c->t->ev, &c->timer);
	facts.learn = learn_env(c, &env);
	decide(c, &facts, &v);
	first_verdict(c, &v);
}

static void client_readable(struct gw_conn *c)
{
	bool eof;
	int r = read_first(c, &eof);

	if (r < 0) {
		gw_conn_close(c, "client read failed");
		return;
	}
	if (eof)
		c->c2u.eof = true;
	first_bytes(c, eof || c->blen >= GW_PEEK_MAX);
	if (c->st == GW_C_RELAY && !c->checked && c->blen && !c->peek_armed) {
		/* a bound connection's client started talking: it has peek_ms to
		 * finish its ClientHello or request head (the idle check resumes
		 * after that) */
		c->peek_armed = true;
		gw_arm(c->t->ev, &c->timer,
		       c->t->ev->now + (uint64_t)c->t->lim->peek_ms * 1000000ull);
	}
}

/* deny now, or, when the client has not spoken yet on a bound connection,
 * once its first bytes tell how to answer readably (or at the peek timeout) */
static void deny_when_known(struct gw_conn *c, const char *reason)
{
	if (c->checked || c->kind != GW_K_TRANSPARENT || c->blen || c->c2u.eof) {
		gw_conn_deny(c, reason);
		return;
	}
	if (gw_str_set(&c->pending_deny, reason) || !c->pending_deny) {
		gw_conn_deny(c, reason); /* out of memory: deny now, less readably */
		return;
	}
	wd_closep(&c->ufd);
	c->ur = (struct gw_ready){0};
	c->st = GW_C_PEEK;
	gw_arm(c->t->ev, &c->timer, c->t->ev->now + (uint64_t)c->t->lim->peek_ms * 1000000ull);
}

static void resolved(struct gw_waiter *w, const struct gw_cache_entry *e)
{
	struct gw_conn *c = (struct gw_conn *)((char *)w - offsetof(struct gw_conn, waiter));
	char reason[600], all[400];
	struct gw_addr cand[GW_CACHE_ADDRS];
	struct gw_ssrf_env env;
	size_t n;

	if (c->st != GW_C_RESOLVE)
		return;
	if (e->rcode || !e->n) {
		if (c->socks_rep)
			c->socks_rep = SOCKS5_REP_HOST_UNREACHABLE;
		snprintf(reason, sizeof(reason), "%s does not resolve (%s)", c->name,
			 e->rcode == DNS_RCODE_NXDOMAIN ? "NXDOMAIN"
			 : e->rcode			? "resolution failed"
							: "no addresses");
		deny_when_known(c, reason);
		return;
	}
	gw_ssrf_env(c->t->runs, &env);
	/* in learn mode no cidr rule of the policy lifts the guard */
	n = gw_upstream_pick(&env, c->run->learn ? NULL : c->run->policy, e->addrs, e->n, c->oport,
			     cand, all, sizeof(all));
	if (!n) {
		snprintf(reason, sizeof(reason), "%s resolves only to refused addresses (%s)",
			 c->name, all);
		deny_when_known(c, reason);
		return;
	}
	if (set_cand(c, cand, n)) {
		fail_upstream(c, "out of memory");
		return;
	}
	try_connect(c);
}

static void start_resolve(struct gw_conn *c)
{
	c->st = GW_C_RESOLVE;
	c->waiter.cb = resolved;
	gw_arm(c->t->ev, &c->timer, c->t->ev->now + GW_RESOLVE_NS);
	gw_resolve(c->t->res, c->name, &c->waiter);
}

/* the policy allowed the connection but the upstream side failed: a
 * decision event, then a reset whose close event says why */
static void fail_upstream(struct gw_conn *c, const char *reason)
{
	if (!c->decided) {
		c->decided = true;
		gw_conn_audit(c, "net.connect", true, "allowed");
	}
	gw_conn_reset(c, reason);
}

/* a proxy tunnel (CONNECT, SOCKS5): its first bytes are checked after the reply */
static bool proxy_tunnel(const struct gw_conn *c)
{
	return c->kind == GW_K_PROXY && (c->socks || !strcmp(c->proto, "connect"));
}

/* a tunnel's upstream is connected: say so (the 200, or SOCKS5's success reply). Return: 0, or
 * -EIO when the client did not take it */
static int tunnel_ok(struct gw_conn *c)
{
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
	uint8_t rep[SOCKS5_REPLY_LEN];
	const void *b = ok;
	int n = (int)sizeof(ok) - 1;

	if (c->socks) {
		n = gw_socks_established(c, rep, sizeof(rep));
		b = rep;
	}
	if (n <= 0 || gw_sock_send(c->cfd, b, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) != n)
		return -EIO;
	return 0;
}

static void connected(struct gw_conn *c)
{
	struct gw_tcp *t = c->t;

	c->up = c->cand[c->icand - 1];
	free(c->cand); /* only needed while connecting */
	c->cand = NULL;
	c->ncand = c->icand = 0;
	c->st = GW_C_RELAY;
	t->ev->stats.relayed++;
	if (c->checked && !proxy_tunnel(c)) {
		/* decided now; otherwise once the client's first bytes pass */
		c->decided = true;
		gw_conn_audit(c, "net.connect", true, "allowed");
	}
	c->last_ns = t->ev->now;
	gw_arm(t->ev, &c->timer, t->ev->now + (uint64_t)t->lim->idle_ms * 1000000ull);
	if (!c->checked && c->blen && !c->peek_armed) {
		c->peek_armed = true;
		gw_arm(t->ev, &c->timer, t->ev->now + (uint64_t)t->lim->peek_ms * 1000000ull);
	}
	if (proxy_tunnel(c) && !c->connect_ok) {
		if (tunnel_ok(c)) {
			gw_conn_close(c, "client write failed");
			return;
		}
		c->connect_ok = true;
		c->synthetic = true; /* the tunnel is bound to the CONNECT name */
		c->checked = false;
		if (c->blen)
			first_bytes(c, c->c2u.eof);
		if (c->st != GW_C_RELAY)
			return;
	}
	if (!c->checked && c->c2u.eof)
		c->checked = true; /* the client closed without a word */
	if (!c->checked && c->cr.rd) {
		/* bytes that came while connecting (a CONNECT tunnel's first):
		 * edge-triggered, no new event will say so */
		client_readable(c);
		if (c->st != GW_C_RELAY)
			return;
	}
	gw_conn_relay(c); /* the peeked bytes first, then whatever is waiting */
}

static void try_connect(struct gw_conn *c)
{
	struct gw_tcp *t = c->t;
	int last = c->last_err;
	char why[400];
	const char *spent = c->icand ? NULL : gw_conn_upload_check(c, why, sizeof(why));

	if (spent) {
		deny_when_known(c, spent); /* the run's upload budget for the name is spent */
		return;
	}

	while (c->icand < c->ncand) {
		const struct gw_addr *a = &c->cand[c->icand++];
		struct sockaddr_storage ss;
		socklen_t sl = gw_addr_to_sa(a, c->oport, &ss);
		int fd = wd_socket_nb(a->family, SOCK_STREAM);

		if (fd < 0) {
			last = -fd;
			if (fd == -EMFILE || fd == -ENFILE)
				t->ev->stats.emfile++;
			break;
		}
		/* as on the client leg (set on the listener, inherited by accept):
		 * pass small writes on at once */
		gw_sock_setopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){1}, sizeof(int));
		/* and fixed buffers, as the listeners give the client leg (fds.c) */
		gw_sock_setopt(fd, SOL_SOCKET, SO_RCVBUF, &t->lim->sockbuf,
			       sizeof(t->lim->sockbuf));
		gw_sock_setopt(fd, SOL_SOCKET, SO_SNDBUF, &t->lim->sockbuf,
			       sizeof(t->lim->sockbuf));
		if (gw_sock_connect(fd, (struct sockaddr *)&ss, sl) == 0 || errno == EINPROGRESS) {
			/* registered once for both ways; GW_POLL_OUT says connected */
			c->ufd = fd;
			c->ur = (struct gw_ready){0};
			if (gw_ev_add(t->ev, fd, GW_EP_EVENTS, GW_REF(GW_REF_UP, c))) {
				gw_conn_close(c, "epoll_ctl failed");
				return;
			}
			c->st = GW_C_CONNECT;
			gw_arm(t->ev, &c->timer,
			       t->ev->now + (uint64_t)t->lim->connect_ms * 1000000ull);
			return;
		}
		last = errno;
		gw_sock_close(fd);
	}
	t->ev->stats.upstream_failed++;
	{
		char reason[300];

		snprintf(reason, sizeof(reason), "upstream %s:%u: %s", c->name ? c->name : "?",
			 c->oport, last ? strerror(last) : "no address answered");
		c->up = c->ncand ? c->cand[c->ncand - 1] : c->orig;
		fail_upstream(c, reason);
	}
}

/* an event on a connecting socket: writable without an error is connected
 * (a socket in SYN_SENT never reports GW_POLL_OUT); SO_ERROR only on failure */
static void upstream_connecting(struct gw_conn *c, unsigned events)
{
	int err;

	if (!(events & (GW_POLL_ERR | GW_POLL_HUP))) {
		if (events & GW_POLL_OUT)
			connected(c);
		return;
	}
	err = gw_sock_so_error(c->ufd);
	c->last_err = err ? err : ECONNREFUSED;
	wd_closep(&c->ufd);
	try_connect(c);
}

void gw_conn_event(struct gw_conn *c, bool up, unsigned events)
{
	struct gw_ready *rd = up ? &c->ur : &c->cr;

	if (c->st == GW_C_CLOSED)
		return;
	/* edge-triggered: remember what this edge said until a syscall says otherwise */
	if (events & (GW_POLL_IN | GW_POLL_RDHUP | GW_POLL_HUP | GW_POLL_ERR))
		rd->rd = true;
	if (events & GW_POLL_RDHUP)
		rd->rdhup = true;
	if (events & (GW_POLL_OUT | GW_POLL_HUP | GW_POLL_ERR))
		rd->wr = true;
	if (!up && (events & GW_POLL_ERR) && c->st != GW_C_DRAIN) {
		gw_conn_close(c, "client connection reset");
		return;
	}
	if (!up && (events & GW_POLL_HUP) && c->checked &&
	    (c->st == GW_C_RESOLVE || c->st == GW_C_CONNECT)) {
		gw_conn_close(c, "client closed before the upstream answered");
		return;
	}
	if (up && (events & GW_POLL_ERR) && c->st == GW_C_RELAY) {
		gw_conn_close(c, "upstream connection reset");
		return;
	}
	switch (c->st) {
	case GW_C_PEEK:
		if (c->asked) {
			/* held for a person: only its end is read (the request is whole) */
			if (rd->rdhup || (events & GW_POLL_HUP))
				gw_conn_close(c, "the client closed while its ask was pending");
			break;
		}
		if (c->cr.rd)
			client_readable(c);
		break;
	case GW_C_RESOLVE:
		if (!c->checked && c->cr.rd)
			client_readable(c);
		break;
	case GW_C_CONNECT:
		if (up)
			upstream_connecting(c, events);
		else if (!c->checked && c->cr.rd)
			client_readable(c);
		break;
	case GW_C_RELAY:
		if (!c->checked && c->cr.rd) {
			client_readable(c);
			if (c->st != GW_C_RELAY)
				return;
		}
		gw_conn_relay(c);
		break;
	case GW_C_DRAIN: {
		char sink[4096];
		ssize_t n;

		if (!c->cr.rd)
			break;
		while ((n = gw_sock_recv(c->cfd, sink, sizeof(sink), MSG_DONTWAIT)) > 0)
			;
		if (n < 0 && errno == EAGAIN)
			c->cr.rd = false;
		else if (n == 0 || errno != EINTR)
			gw_conn_close(c, "denied");
		break;
	}
	case GW_C_CLOSED:
		break;
	}
}

void gw_conn_timeout(struct gw_conn *c)
{
	struct gw_tcp *t = c->t;
	char reason[300];

	switch (c->st) {
	case GW_C_PEEK:
		if (c->kind == GW_K_PROXY) {
			snprintf(reason, sizeof(reason), "no complete proxy request within %u ms",
				 t->lim->peek_ms);
			gw_conn_deny(c, reason);
			return;
		}
		first_bytes(c, true);
		break;
	case GW_C_RESOLVE:
		snprintf(reason, sizeof(reason), "resolving %s timed out", c->name);
		fail_upstream(c, reason);
		break;
	case GW_C_CONNECT:
		wd_closep(&c->ufd);
		c->last_err = ETIMEDOUT;
		try_connect(c);
		break;
	case GW_C_RELAY: {
		uint64_t idle = (uint64_t)t->lim->idle_ms * 1000000ull;

		if (c->late_deny) {
			gw_conn_late_deny_say(c); /* the upstream had its time to finish */
			break;
		}
		if (!c->checked && c->blen) {
			first_bytes(c, true);
			if (c->st != GW_C_RELAY)
				break;
		}
		if (t->ev->now - c->last_ns >= idle)
			gw_conn_close(c, "idle timeout");
		else
			gw_arm(t->ev, &c->timer, c->last_ns + idle);
		break;
	}
	case GW_C_DRAIN:
		gw_conn_close(c, "denied");
		break;
	case GW_C_CLOSED:
		break;
	}
}

void gw_conn_start(struct gw_conn *c)
{
	struct gw_tcp *t = c->t;
	struct gw_tcp_facts facts = {0};
	struct gw_tcp_verdict v;
	struct gw_ssrf_env env;
	const char *name;

	c->st = GW_C_PEEK;
	if (c->kind == GW_K_PROXY) {
		gw_arm(t->ev, &c->timer, t->ev->now + (uint64_t)t->lim->peek_ms * 1000000ull);
		return;
	}
	name = gw_synth_name(&c->run->synth, &c->orig);
	if (name) {
		c->synthetic = true;
		if (gw_str_set(&c->name, name)) {
			gw_conn_reset(c, "out of memory");
			return;
		}
	}
	facts.policy = c->run->policy;
	facts.dst = &c->orig;
	facts.port = c->oport;
	facts.bound = c->name;
	facts.learn = learn_env(c, &env);
	facts.calls = &c->run->mcp;
	decide(c, &facts, &v);
	switch (v.action) {
	case GW_TCP_ALLOW_NAME:
		/* a synthetic address: its name is known, nothing to wait for */
		if (set_rule(c, &v)) {
			gw_conn_reset(c, "out of memory");
			return;
		}
		start_resolve(c);
		return;
	case GW_TCP_ALLOW_ADDR:
		/* a cidr rule names the address: no name needed, nothing to wait for */
		if (set_rule(c, &v) || set_cand(c, &c->orig, 1)) {
			gw_conn_reset(c, "out of memory");
			return;
		}
		c->checked = true;
		try_connect(c);
		return;
	case GW_TCP_DENY: {
		/* a synthetic name whose port no rule allows: denied once the
		 * client's first bytes tell how to answer readably */
		char reason[600];

		deny_when_known(c, reason_of(c, &v, reason, sizeof(reason)));
		return;
	}
	case GW_TCP_NEED_BYTES:
	case GW_TCP_ALLOW_BYTES:
		break;
	}
	gw_arm(t->ev, &c->timer, t->ev->now + (uint64_t)t->lim->peek_ms * 1000000ull);
}

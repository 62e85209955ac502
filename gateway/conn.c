/* conn.c - the gateway's TCP path: accept, attribution, the decision by name
 * (synthetic address, TLS SNI, HTTP Host, proxy CONNECT / absolute-form),
 * upstream resolution and connect, readable denials, and the splice relay.
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
 * (EPOLLRDHUP) is its end of stream without one more read. A wake-up moves at
 * most 16 chunks per direction; a connection with more is queued on g->again
 * and served again before the loop sleeps.
 *
 * Audit: one "net.connect" event at decision time (allowed or denied, with
 * the denial id sent to the client), and one "net.close" event for every
 * allowed connection (bytes up/down, duration, how it ended).
 */
#include "gateway/decide.h"
#include "gateway/gw_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6/ip6_tables.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#define GW_CHUNK 65536
#define GW_DRAIN_NS 2000000000ull
#define GW_RESOLVE_NS 10000000000ull
#define GW_PIPE_POOL 256

#define GW_EP_EVENTS (EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET)

static void start_resolve(struct gw_conn *c);
static void try_connect(struct gw_conn *c);
static void relay(struct gw_conn *c);
static void fail_upstream(struct gw_conn *c, const char *reason);
static void account(struct gw_conn *c, bool gone);

/* *@dst = a heap copy of @src (at most 255 bytes; NULL or "" -> NULL). Return: 0 or -ENOMEM */
static int str_set(char **dst, const char *src)
{
	size_t n = src ? strnlen(src, 255) : 0;
	char *p = NULL;

	if (n) {
		p = malloc(n + 1);
		if (!p)
			return -ENOMEM;
		memcpy(p, src, n);
		p[n] = '\0';
	}
	free(*dst);
	*dst = p;
	return 0;
}

/* ------------------------------------------------------------ pipe pool */

static int pipe_get(struct gw *g, int p[2])
{
	if (g->npipes) {
		g->npipes--;
		p[0] = g->pipes[g->npipes][0];
		p[1] = g->pipes[g->npipes][1];
		return 0;
	}
	return pipe2(p, O_NONBLOCK | O_CLOEXEC) ? -errno : 0;
}

static void pipe_put(struct gw *g, struct gw_half *h)
{
	if (h->pipe[0] < 0)
		return;
	if (h->inpipe == 0 && g->npipes < GW_PIPE_POOL) {
		if (g->npipes == g->cap_pipes) {
			size_t cap = g->cap_pipes ? g->cap_pipes * 2 : 16;
			void *v = realloc(g->pipes, cap * sizeof(*g->pipes));

			if (!v)
				goto close;
			g->pipes = v;
			g->cap_pipes = cap;
		}
		g->pipes[g->npipes][0] = h->pipe[0];
		g->pipes[g->npipes][1] = h->pipe[1];
		g->npipes++;
		h->pipe[0] = h->pipe[1] = -1;
		return;
	}
close:
	close(h->pipe[0]);
	close(h->pipe[1]);
	h->pipe[0] = h->pipe[1] = -1;
}

/* ------------------------------------------------------------ peek buffers */

static uint8_t *buf_get(struct gw *g)
{
	return g->nbufs ? g->bufs[--g->nbufs] : malloc(GW_PEEK_MAX);
}

static void buf_put(struct gw *g, uint8_t *b)
{
	if (!b)
		return;
	if (g->nbufs < GW_BUF_POOL)
		g->bufs[g->nbufs++] = b;
	else
		free(b);
}

/* ------------------------------------------------------------ audit */

static void conn_event(struct gw_conn *c, const char *action, bool allowed, const char *reason)
{
	char dst[INET6_ADDRSTRLEN];
	const struct gw_addr *a = c->up.family ? &c->up : &c->orig;
	struct audit_event ev = {
	    .type = AUDIT_TYPE_NET,
	    .action = action,
	    .resource = c->name ? c->name : gw_addr_str(&c->orig, dst, sizeof(dst)),
	    .allowed = allowed,
	    .reason = reason,
	    .rule = c->rule,
	    .proto = c->proto,
	    .sni = c->sni,
	    .host = c->host,
	    .denial_id = c->denial_id[0] ? c->denial_id : NULL,
	    .has = AUDIT_HAS_PORT,
	    .port = c->oport,
	};
	char dtxt[INET6_ADDRSTRLEN];
	struct gw_addr lit;

	ev.ech = c->ech;
	if (c->kind == GW_K_PROXY && !c->up.family && c->host) {
		/* a proxy request not connected (denied, or failed before): the
		 * destination is what the client asked for, not the proxy's own
		 * address; a name the gateway never resolved has no address */
		ev.dst =
		    gw_addr_parse(c->host, &lit) ? NULL : gw_addr_str(&lit, dtxt, sizeof(dtxt));
	} else {
		ev.dst = gw_addr_str(a, dtxt, sizeof(dtxt));
	}
	if (!strcmp(action, "net.close")) {
		ev.has |= AUDIT_HAS_BYTES_UP | AUDIT_HAS_BYTES_DOWN | AUDIT_HAS_DURATION;
		ev.bytes_up = (int64_t)c->c2u.bytes;
		ev.bytes_down = (int64_t)c->u2c.bytes;
		ev.duration_ms = (int64_t)((c->g->now - c->start_ns) / 1000000ull);
	}
	if (allowed)
		gw_audit(c->g, c->run, &ev);
	else
		gw_audit_denial(c->g, c->run, &ev); /* counted in the run's denials */
}

/* ------------------------------------------------------------ closing */

void gw_conn_close(struct gw_conn *c, const char *end)
{
	struct gw *g = c->g;

	if (c->st == GW_C_CLOSED)
		return;
	if (!c->decided && c->st == GW_C_RELAY && c->ufd >= 0) {
		/* relayed before the client said anything (server-first) */
		c->decided = true;
		conn_event(c, "net.connect", true, "allowed");
	}
	if (c->decided) {
		conn_event(c, "net.close", true, end);
		if (c->run) {
			c->run->bytes_up += c->c2u.bytes;
			c->run->bytes_down += c->u2c.bytes;
		}
	}
	account(c, true); /* its pipes and stashes go with it */
	c->st = GW_C_CLOSED;
	gw_timer_cancel(&g->timers, &c->timer);
	gw_resolve_cancel(&c->waiter);
	/* close() takes the sockets out of the epoll set (never duplicated) */
	wd_closep(&c->cfd);
	wd_closep(&c->ufd);
	pipe_put(g, &c->c2u);
	pipe_put(g, &c->u2c);
	buf_put(g, c->buf);
	c->buf = NULL;
	if (c->queued) {
		for (struct gw_conn **pp = &g->again; *pp; pp = &(*pp)->again)
			if (*pp == c) {
				*pp = c->again;
				break;
			}
		c->queued = false;
	}
	if (c->prev)
		c->prev->next = c->next;
	else
		g->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	g->nconns--;
	if (c->run) {
		c->run->conns--;
		gw_run_put(g, c->run);
		c->run = NULL;
	}
	c->next = g->zombies;
	c->prev = NULL;
	g->zombies = c;
}

void gw_conn_reap(struct gw *g)
{
	while (g->zombies) {
		struct gw_conn *c = g->zombies;

		g->zombies = c->next;
		free(c->name);
		free(c->sni);
		free(c->host);
		free(c->rule);
		free(c->cand);
		free(c->pending_deny);
		free(c->late_deny);
		free(c->c2u.stash);
		free(c->u2c.stash);
		free(c);
	}
}

/* close with a TCP reset (SO_LINGER 0) */
static void conn_reset(struct gw_conn *c, const char *end)
{
	struct linger lg = {.l_onoff = 1, .l_linger = 0};

	if (c->cfd >= 0)
		setsockopt(c->cfd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	gw_conn_close(c, end);
}

/* ------------------------------------------------------------ denial */

static void deny(struct gw_conn *c, const char *reason)
{
	struct gw *g = c->g;
	char out[1024];
	int n = 0;

	gw_new_denial_id(g, c->denial_id, sizeof(c->denial_id));
	g->stats.denied++;
	c->decided = false; /* the denial is the connection's one event */
	conn_event(c, "net.connect", false, reason);
	gw_resolve_cancel(&c->waiter);
	wd_closep(&c->ufd); /* close() takes it out of the epoll set */
	if (c->tls) {
		n = tls_alert_compose((uint8_t *)out, sizeof(out), TLS_ALERT_ACCESS_DENIED,
				      c->tls_version);
	} else if (c->http) {
		char line[500]; /* the composer takes at most 512 bytes */

		snprintf(line, sizeof(line), "%s", reason);
		n = http_403_compose(out, sizeof(out), line, c->denial_id);
	}
	if (n <= 0 || send(c->cfd, out, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) != n) {
		conn_reset(c, reason);
		return;
	}
	shutdown(c->cfd, SHUT_WR);
	c->st = GW_C_DRAIN;
	gw_arm(g, &c->timer, g->now + GW_DRAIN_NS);
}

/* ------------------------------------------------------------ first bytes */

/* what the client's first bytes in c->buf say (gw_sniff()); the connection
 * keeps what it needs of it (c->tls, c->http, c->sni, c->host, ...) */
static enum gw_sniff sniff(struct gw_conn *c, bool final, struct gw_first *f)
{
	enum gw_sniff s =
	    gw_sniff(c->buf, c->blen, final || c->blen >= GW_PEEK_MAX, c->g->hello, f);

	c->tls = f->tls;
	c->http = f->http;
	c->proto = f->proto;
	if (f->tls) {
		c->tls_version = f->tls_version;
		c->ech = f->ech;
	}
	if (str_set(&c->sni, f->sni) || str_set(&c->host, f->host)) {
		f->why = "out of memory";
		return GW_SNIFF_MALFORMED;
	}
	return s;
}

/* start relaying once connected and checked: write the peeked bytes first */
static void flush_peeked(struct gw_conn *c)
{
	if (c->flushed || !c->checked || c->st != GW_C_RELAY)
		return;
	if (c->http_track) {
		/* the peeked bytes are the start of the request stream: the
		 * relay frames them (pump_http()), the first head included */
		c->flushed = true;
		return;
	}
	if (c->budget >= 0 && (int64_t)c->blen > c->budget)
		c->blen = (size_t)c->budget; /* absolute-form: one request only */
	while (c->boff < c->blen) {
		ssize_t n;

		if (!c->ur.wr)
			return; /* EPOLLOUT brings us back */
		n = send(c->ufd, c->buf + c->boff, c->blen - c->boff, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN) {
				c->ur.wr = false;
				return;
			}
			if (errno == EINTR)
				continue;
			gw_conn_close(c, "upstream write failed");
			return;
		}
		c->boff += (size_t)n;
		c->c2u.bytes += (uint64_t)n;
	}
	if (c->budget >= 0) {
		c->budget -= (int64_t)c->blen;
		if (c->budget <= 0)
			c->c2u.eof = true;
	}
	c->flushed = true;
	buf_put(c->g, c->buf);
	c->buf = NULL;
	c->blen = c->boff = 0;
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

/* c->rule = the text of @v's allowing rule. Return: 0 or -ENOMEM */
static int set_rule(struct gw_conn *c, const struct gw_tcp_verdict *v)
{
	return str_set(&c->rule, c->run->policy->rules[v->rule].text);
}

/* act on the verdict on the client's first bytes (gw_tcp_decide() with them) */
static void first_verdict(struct gw_conn *c, const struct gw_tcp_verdict *v)
{
	char reason[600];

	if (v->action == GW_TCP_DENY) {
		/* a name refused by policy is the event's resource */
		if (v->reason == GW_TR_NO_RULE && v->name != c->name && str_set(&c->name, v->name))
			deny(c, "out of memory");
		else
			deny(c, reason_of(c, v, reason, sizeof(reason)));
		return;
	}
	if (v->action == GW_TCP_ALLOW_BYTES) {
		/* a bound connection's first bytes passed; every later request on
		 * it is checked as this one was */
		c->checked = true;
		c->http_track = c->http;
		if (c->st == GW_C_RELAY && !c->decided) {
			c->decided = true;
			conn_event(c, "net.connect", true, "allowed");
		}
		flush_peeked(c);
		return;
	}
	if (v->action == GW_TCP_ALLOW_NAME) {
		if (str_set(&c->name, v->name) || set_rule(c, v)) {
			deny(c, "out of memory");
			return;
		}
		c->checked = true;
		c->http_track = c->http; /* later requests must name it too */
		start_resolve(c);
		return;
	}
	/* GW_TCP_ALLOW_ADDR: a cidr rule names the address */
	if (set_rule(c, v) || set_cand(c, &c->orig, 1)) {
		deny(c, "out of memory");
		return;
	}
	c->checked = true;
	try_connect(c);
}

/* ------------------------------------------------------------ the proxy port */

static void proxy_request(struct gw_conn *c, bool final)
{
	struct http_request req;
	enum http_result r = http_request_parse(c->buf, c->blen, &req);
	struct gw_proxy_verdict pv;
	char reason[600];

	c->http = true;
	c->proto = "proxy";
	if (c->blen && c->buf[0] == 0x16) {
		c->http = false;
		c->tls = true;
		c->tls_version = 0x0303;
	}
	if (r == HTTP_NEED_MORE && !final && c->blen < GW_PEEK_MAX)
		return;
	gw_proxy_decide(c->run->policy, r, &req, &pv);
	c->proto = pv.proto;
	/* the event names what was asked for: the target, and once its form
	 * was understood its port and name (and the rule that allowed it) */
	if ((r == HTTP_OK && str_set(&c->host, req.host)) ||
	    (pv.v.port && str_set(&c->name, req.host)) || (pv.v.rule >= 0 && set_rule(c, &pv.v))) {
		deny(c, "out of memory");
		return;
	}
	if (pv.v.port)
		c->oport = pv.v.port;
	if (pv.v.action == GW_TCP_DENY) {
		deny(c, reason_of(c, &pv.v, reason, sizeof(reason)));
		return;
	}
	c->budget = pv.budget;
	/* not reading the client until connected; a CONNECT tunnel's first
	 * bytes are checked after the 200 (see connected()) */
	c->checked = true;
	if (pv.connect) {
		/* keep what follows the head (a pipelined ClientHello) for the check */
		memmove(c->buf, c->buf + req.head_len, c->blen - req.head_len);
		c->blen -= req.head_len;
	}
	if (pv.v.action == GW_TCP_ALLOW_ADDR) {
		if (set_cand(c, &pv.literal, 1)) {
			deny(c, "out of memory");
			return;
		}
		try_connect(c);
		return;
	}
	start_resolve(c);
}

/* ------------------------------------------------------------ reading first bytes */

static int read_first(struct gw_conn *c, bool *eof)
{
	*eof = false;
	if (!c->buf) {
		c->buf = buf_get(c->g);
		if (!c->buf)
			return -ENOMEM;
	}
	while (c->blen < GW_PEEK_MAX) {
		size_t want = GW_PEEK_MAX - c->blen;
		ssize_t n = recv(c->cfd, c->buf + c->blen, want, MSG_DONTWAIT);

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
	struct gw_tcp_facts facts = {
	    .policy = c->run->policy,
	    .dst = &c->orig,
	    .port = c->oport,
	    .bound = c->synthetic ? c->name : NULL,
	    .first = &f,
	};

	if (c->kind == GW_K_PROXY && !c->connect_ok) {
		proxy_request(c, final);
		return;
	}
	if (sniff(c, final, &f) == GW_SNIFF_MORE)
		return;
	if (c->pending_deny) {
		deny(c, c->pending_deny);
		return;
	}
	if (!c->synthetic)
		gw_timer_cancel(&c->g->timers, &c->timer);
	gw_tcp_decide(&facts, &v);
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
		gw_arm(c->g, &c->timer, c->g->now + (uint64_t)c->g->lim.peek_ms * 1000000ull);
	}
}

/* ------------------------------------------------------------ resolve and connect */

/* deny now, or, when the client has not spoken yet on a bound connection,
 * once its first bytes tell how to answer readably (or at the peek timeout) */
static void deny_when_known(struct gw_conn *c, const char *reason)
{
	if (c->checked || c->kind != GW_K_TRANSPARENT || c->blen || c->c2u.eof) {
		deny(c, reason);
		return;
	}
	if (str_set(&c->pending_deny, reason) || !c->pending_deny) {
		deny(c, reason); /* out of memory: deny now, less readably */
		return;
	}
	wd_closep(&c->ufd);
	c->ur = (struct gw_ready){0};
	c->st = GW_C_PEEK;
	gw_arm(c->g, &c->timer, c->g->now + (uint64_t)c->g->lim.peek_ms * 1000000ull);
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
		snprintf(reason, sizeof(reason), "%s does not resolve (%s)", c->name,
			 e->rcode == DNS_RCODE_NXDOMAIN ? "NXDOMAIN"
			 : e->rcode			? "resolution failed"
							: "no addresses");
		deny_when_known(c, reason);
		return;
	}
	gw_ssrf_env(c->g, &env);
	n = gw_upstream_pick(&env, c->run->policy, e->addrs, e->n, c->oport, cand, all,
			     sizeof(all));
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
	gw_arm(c->g, &c->timer, c->g->now + GW_RESOLVE_NS);
	gw_resolve(c->g, c->name, &c->waiter);
}

/* the policy allowed the connection but the upstream side failed: a
 * decision event, then a reset whose close event says why */
static void fail_upstream(struct gw_conn *c, const char *reason)
{
	if (!c->decided) {
		c->decided = true;
		conn_event(c, "net.connect", true, "allowed");
	}
	conn_reset(c, reason);
}

static void connected(struct gw_conn *c)
{
	struct gw *g = c->g;
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";

	c->up = c->cand[c->icand - 1];
	free(c->cand); /* only needed while connecting */
	c->cand = NULL;
	c->ncand = c->icand = 0;
	c->st = GW_C_RELAY;
	g->stats.relayed++;
	if (c->checked && !(c->kind == GW_K_PROXY && !strcmp(c->proto, "connect"))) {
		/* decided now; otherwise once the client's first bytes pass */
		c->decided = true;
		conn_event(c, "net.connect", true, "allowed");
	}
	c->last_ns = g->now;
	gw_arm(g, &c->timer, g->now + (uint64_t)g->lim.idle_ms * 1000000ull);
	if (!c->checked && c->blen && !c->peek_armed) {
		c->peek_armed = true;
		gw_arm(g, &c->timer, g->now + (uint64_t)g->lim.peek_ms * 1000000ull);
	}
	if (c->kind == GW_K_PROXY && !strcmp(c->proto, "connect") && !c->connect_ok) {
		if (send(c->cfd, ok, sizeof(ok) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) !=
		    (ssize_t)sizeof(ok) - 1) {
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
	relay(c); /* the peeked bytes first, then whatever is waiting */
}

static void try_connect(struct gw_conn *c)
{
	struct gw *g = c->g;
	int last = c->last_err;

	while (c->icand < c->ncand) {
		const struct gw_addr *a = &c->cand[c->icand++];
		struct sockaddr_storage ss;
		socklen_t sl = gw_addr_to_sa(a, c->oport, &ss);
		int fd = socket(a->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

		if (fd < 0) {
			last = errno;
			if (errno == EMFILE || errno == ENFILE)
				g->stats.emfile++;
			break;
		}
		/* as on the client leg (set on the listener, inherited by accept):
		 * pass small writes on at once */
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){1}, sizeof(int));
		/* and fixed buffers, as the listeners give the client leg (fds.c) */
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &g->lim.sockbuf, sizeof(g->lim.sockbuf));
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &g->lim.sockbuf, sizeof(g->lim.sockbuf));
		if (connect(fd, (struct sockaddr *)&ss, sl) == 0 || errno == EINPROGRESS) {
			/* registered once for both ways; EPOLLOUT says connected */
			c->ufd = fd;
			c->ur = (struct gw_ready){0};
			if (gw_ep_add(g, fd, GW_EP_EVENTS, GW_REF(GW_REF_UP, c))) {
				gw_conn_close(c, "epoll_ctl failed");
				return;
			}
			c->st = GW_C_CONNECT;
			gw_arm(g, &c->timer, g->now + (uint64_t)g->lim.connect_ms * 1000000ull);
			return;
		}
		last = errno;
		close(fd);
	}
	g->stats.upstream_failed++;
	{
		char reason[300];

		snprintf(reason, sizeof(reason), "upstream %s:%u: %s", c->name ? c->name : "?",
			 c->oport, last ? strerror(last) : "no address answered");
		c->up = c->ncand ? c->cand[c->ncand - 1] : c->orig;
		fail_upstream(c, reason);
	}
}

/* an event on a connecting socket: writable without an error is connected
 * (a socket in SYN_SENT never reports EPOLLOUT); SO_ERROR only on failure */
static void upstream_connecting(struct gw_conn *c, unsigned events)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (!(events & (EPOLLERR | EPOLLHUP))) {
		if (events & EPOLLOUT)
			connected(c);
		return;
	}
	if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
		err = errno;
	c->last_err = err ? err : ECONNREFUSED;
	wd_closep(&c->ufd);
	try_connect(c);
}

/* ------------------------------------------------------------ relay */

#define GW_ROUNDS 16 /* chunks per direction and wake-up */

/* send @n bytes of @b to @dst; what it does not take now waits in @h's stash
 * (heap, only while the destination is full). Return: 0 or -errno */
static int copy_out(struct gw_half *h, int dst, struct gw_ready *dr, const uint8_t *b, size_t n)
{
	size_t off = 0;

	while (off < n && dr->wr) {
		ssize_t k = send(dst, b + off, n - off, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (k < 0) {
			if (errno == EAGAIN) {
				dr->wr = false;
				break;
			}
			if (errno == EINTR)
				continue;
			return -errno;
		}
		off += (size_t)k;
		h->bytes += (uint64_t)k;
	}
	if (off < n) {
		h->stash = malloc(n - off);
		if (!h->stash)
			return -ENOMEM;
		memcpy(h->stash, b + off, n - off);
		h->slen = (uint32_t)(n - off);
		h->soff = 0;
	}
	return 0;
}

/* write out what waits in @h (stash or pipe). Return: 1 when all went out, 0
 * when the destination is full, or -errno */
static int drain_half(struct gw_half *h, int dst, struct gw_ready *dr)
{
	while (h->slen || h->inpipe) {
		ssize_t k;

		if (!dr->wr)
			return 0;
		if (h->slen)
			k = send(dst, h->stash + h->soff, h->slen - h->soff,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		else
			k = splice(h->pipe[0], NULL, dst, NULL, h->inpipe,
				   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (k < 0) {
			if (errno == EAGAIN) {
				dr->wr = false;
				return 0;
			}
			if (errno == EINTR)
				continue;
			return -errno;
		}
		h->bytes += (uint64_t)k;
		if (h->slen) {
			h->soff += (uint32_t)k;
			if (h->soff == h->slen) {
				free(h->stash);
				h->stash = NULL;
				h->slen = h->soff = 0;
			}
		} else {
			h->inpipe -= (uint32_t)k;
		}
	}
	return 1;
}

/*
 * move_once() - one read of at most @want bytes from @src for half @h, passed on to @dst
 * A copy read goes through g->copybuf (recv/send; what @dst does not take waits in
 * @h's stash); a full one turns the half to bulk. A bulk read splices into a pipe
 * from the pool; drain_half() sends it on. @lean (the run holds too much, see
 * relay()): a copy read of at most GW_COPY_MAX, never into a pipe. A short copy
 * read clears @sr->rd and, after the peer's FIN, ends the source.
 * Return: bytes read (> 0), 0 at the source's end (@h->eof set), -EAGAIN when the
 * source is drained, -EINTR, or another -errno.
 */
static ssize_t move_once(struct gw *g, struct gw_half *h, int src, struct gw_ready *sr, int dst,
			 struct gw_ready *dr, size_t want, bool lean)
{
	ssize_t n;
	int r;

	if (lean && want > GW_COPY_MAX)
		want = GW_COPY_MAX;
	if (h->bulk && !lean) {
		if (h->pipe[0] < 0 && pipe_get(g, h->pipe))
			return -EMFILE;
		n = splice(src, NULL, h->pipe[1], NULL, want, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
	} else {
		n = recv(src, g->copybuf, want, MSG_DONTWAIT);
	}
	if (n < 0) {
		if (errno == EAGAIN)
			sr->rd = false;
		return -errno;
	}
	if (n == 0) {
		h->eof = true;
		return 0;
	}
	if (h->bulk && !lean) {
		h->inpipe = (uint32_t)n;
		return n;
	}
	if ((size_t)n < want) {
		/* a short copy read drained the socket; after the peer's FIN that is
		 * its end, no read for the 0 needed */
		sr->rd = false;
		if (sr->rdhup)
			h->eof = true;
	} else if (want == GW_COPY_MAX) {
		h->bulk = true; /* a full buffer: bulk from now on */
	}
	r = copy_out(h, dst, dr, g->copybuf, (size_t)n);
	return r ? r : n;
}

/* the end of @h's source, once everything went out: shutdown(SHUT_WR) to the
 * destination -- unless the other direction ended too (close() sends the FIN
 * then) or the connection still has a denial to say on it */
static void pass_end(struct gw_half *h, const struct gw_half *other, int dst)
{
	if (h->eof && !h->inpipe && !h->slen && !h->shut) {
		if (!other->shut && !h->keep_open)
			shutdown(dst, SHUT_WR);
		h->shut = true;
	}
}

/*
 * pump() - move bytes from @src (readiness @sr) to @dst (@dr) for half @h
 * A source is read only when nothing of it waits and the destination takes
 * bytes; see move_once(). Pipes go back to the pool whenever they are empty.
 * @budget (absolute-form proxy requests) ends the source once spent. @lean (the
 * run holds too much, see relay()): copy reads only, and none once a read left
 * bytes waiting -- the half adds at most GW_COPY_MAX to what the run holds.
 * Return: 1 when the half has more to do but its rounds ran out, 0, or -errno.
 */
static int pump(struct gw *g, struct gw_half *h, const struct gw_half *other, int src,
		struct gw_ready *sr, int dst, struct gw_ready *dr, int64_t *budget, bool lean)
{
	int round, r = 0;

	for (round = 0; round < GW_ROUNDS; round++) {
		size_t want = h->bulk ? GW_CHUNK : GW_COPY_MAX;
		ssize_t n;

		r = drain_half(h, dst, dr);
		if (r <= 0)
			break;
		r = 0;
		if (h->eof || !sr->rd || !dr->wr)
			break;
		if (budget && *budget >= 0 && (int64_t)want > *budget)
			want = (size_t)*budget;
		if (!want) {
			h->eof = true; /* absolute-form: the one request went out */
			break;
		}
		n = move_once(g, h, src, sr, dst, dr, want, lean);
		if (n == -EINTR)
			continue;
		if (n == -EAGAIN || n == 0)
			break;
		if (n < 0) {
			r = (int)n;
			break;
		}
		if (budget && *budget >= 0)
			*budget -= n;
		if (lean && h->slen)
			break; /* what did not go out waits: no more reads this round */
	}
	if (h->pipe[0] >= 0 && !h->inpipe)
		pipe_put(g, h); /* back to the pool while empty */
	if (r < 0)
		return r;
	pass_end(h, other, dst);
	return round == GW_ROUNDS;
}

/* ------------------------------------------------------------ HTTP request streams */

#define GW_LATE_NS 5000000000ull /* a late denial waits this long for the upstream at most */

/*
 * late_deny() - a request after the first on an allowed HTTP connection is
 * denied (fronting, or a stream that cannot be framed). The denial is
 * audited now; the client's later bytes are not read any more and the
 * upstream gets end-of-stream, so it finishes answering the requests it
 * already has; then the client gets the 403 (late_deny_say()). Bounded by
 * GW_LATE_NS.
 */
static void late_deny(struct gw_conn *c, const char *reason)
{
	struct gw *g = c->g;

	if (c->late_deny)
		return;
	gw_new_denial_id(g, c->denial_id, sizeof(c->denial_id));
	g->stats.denied++;
	conn_event(c, "net.connect", false, reason);
	if (str_set(&c->late_deny, reason) || !c->late_deny)
		c->late_deny = strdup("denied");
	c->c2u.eof = true;	 /* the client is not read any more */
	c->u2c.keep_open = true; /* the upstream's end is not passed on: the 403 follows */
	c->boff = c->blen;	 /* what was not framed never goes upstream */
	gw_arm(g, &c->timer, g->now + GW_LATE_NS);
}

/* the upstream answered what it had (or the wait is over): say the late denial */
static void late_deny_say(struct gw_conn *c)
{
	char out[1024], line[500];
	int n;

	snprintf(line, sizeof(line), "%s", c->late_deny ? c->late_deny : "denied");
	n = http_403_compose(out, sizeof(out), line, c->denial_id);
	wd_closep(&c->ufd);
	if (n <= 0 || (c->u2c.slen || c->u2c.inpipe) ||
	    send(c->cfd, out, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) != n) {
		conn_reset(c, c->late_deny);
		return;
	}
	shutdown(c->cfd, SHUT_WR);
	c->st = GW_C_DRAIN;
	gw_arm(c->g, &c->timer, c->g->now + GW_DRAIN_NS);
}

/* a request head on a connection bound to c->name: true when it may go upstream */
static bool request_ok(struct gw_conn *c, const struct http_request *req)
{
	struct gw_tcp_verdict v;
	char reason[600];

	gw_tcp_decide_request(c->name, req, c->hs.requests, &v);
	if (v.action != GW_TCP_DENY)
		return true;
	str_set(&c->host, req->host); /* the event names what this request asked for */
	late_deny(c, reason_of(c, &v, reason, sizeof(reason)));
	return false;
}

/* read more of the client's bytes into c->buf (kept from the first bytes, or
 * from the pool). Return: bytes read, 0 at the end, -EAGAIN, or -errno */
static ssize_t read_more(struct gw_conn *c)
{
	size_t want;
	ssize_t n;

	if (!c->buf && !(c->buf = buf_get(c->g)))
		return -ENOMEM;
	if (c->boff) {
		memmove(c->buf, c->buf + c->boff, c->blen - c->boff);
		c->blen -= c->boff;
		c->boff = 0;
	}
	want = GW_PEEK_MAX - c->blen;
	if (!want)
		return -E2BIG; /* cannot happen: heads, lines and trailers are bounded lower */
	n = recv(c->cfd, c->buf + c->blen, want, MSG_DONTWAIT);
	if (n < 0) {
		if (errno == EAGAIN)
			c->cr.rd = false;
		return -errno;
	}
	if (n == 0) {
		c->c2u.eof = true;
		return 0;
	}
	c->blen += (size_t)n;
	if ((size_t)n < want) {
		c->cr.rd = false;
		if (c->cr.rdhup)
			c->c2u.eof = true; /* the last bytes: frame them, then the end */
	}
	return n;
}

/*
 * pump_http() - the client->upstream half of a connection whose bytes are HTTP
 * requests (c->http_track): every head is framed and checked against the name
 * the connection is bound to before it goes upstream; bodies and chunk framing
 * pass as they are (a body that is not in the buffer moves straight from socket
 * to socket, never past its end, spliced when bulk). Stops at a denial (see
 * late_deny()) and at an Upgrade/CONNECT until the server answered (c->hold).
 * Return: as pump().
 */
static int pump_http(struct gw_conn *c, bool lean)
{
	struct gw *g = c->g;
	struct gw_half *h = &c->c2u;
	int round, r = 0;

	for (round = 0; round < GW_ROUNDS; round++) {
		struct http_step st;
		ssize_t n;

		r = drain_half(h, c->ufd, &c->ur);
		if (r <= 0)
			break;
		r = 0;
		if (c->hs.state == HTTP_STREAM_WAIT)
			c->hold = true; /* nothing more until the server answered */
		if (c->late_deny || c->hold || !c->ur.wr)
			break;
		if (c->boff < c->blen) {
			enum http_stream_result fr =
			    http_stream_next(&c->hs, c->buf + c->boff, c->blen - c->boff, &st);

			if (fr == HTTP_STREAM_REQUEST && !request_ok(c, &st.req))
				break;
			if (fr == HTTP_STREAM_REQUEST || fr == HTTP_STREAM_PASS) {
				r = copy_out(h, c->ufd, &c->ur, c->buf + c->boff, st.len);
				if (r)
					break;
				c->boff += st.len;
				continue;
			}
			if (fr == HTTP_STREAM_HOLD) {
				c->hold = true;
				break;
			}
			if (fr == HTTP_STREAM_MALFORMED) {
				char reason[300];

				snprintf(
				    reason, sizeof(reason),
				    "HTTP request stream cannot be framed after request %u: %s",
				    c->hs.requests, st.why);
				late_deny(c, reason);
				break;
			}
			/* NEED_MORE: read more below */
		} else if ((c->hs.state == HTTP_STREAM_BODY ||
			    c->hs.state == HTTP_STREAM_CHUNK_DATA) &&
			   !h->eof && c->cr.rd) {
			size_t want = h->bulk ? GW_CHUNK : GW_COPY_MAX;

			if ((uint64_t)want > c->hs.left)
				want = (size_t)c->hs.left;
			n = move_once(g, h, c->cfd, &c->cr, c->ufd, &c->ur, want, lean);
			if (n == -EINTR)
				continue;
			if (n == -EAGAIN || n == 0)
				break;
			if (n < 0) {
				r = (int)n;
				break;
			}
			http_stream_body(&c->hs, (uint64_t)n);
			continue;
		}
		if (h->eof) {
			c->boff = c->blen; /* an unfinished head never goes upstream */
			break;
		}
		if (!c->cr.rd || (lean && h->slen))
			break;
		n = read_more(c);
		if (n == -EINTR)
			continue;
		if (n == -EAGAIN)
			break;
		if (n < 0) {
			r = (int)n;
			break;
		}
	}
	if (h->pipe[0] >= 0 && !h->inpipe)
		pipe_put(g, h);
	if (c->boff == c->blen && c->buf) {
		/* nothing buffered: the buffer goes back to the pool (idle
		 * keep-alive connections hold none) */
		buf_put(g, c->buf);
		c->buf = NULL;
		c->blen = c->boff = 0;
	}
	if (r < 0)
		return r;
	pass_end(h, &c->u2c, c->ufd);
	return round == GW_ROUNDS;
}

/*
 * answer_peek() - the stream waits (c->hold) for the server's answer to an
 * Upgrade or CONNECT: look at the status line before relaying it. 101 to an
 * Upgrade, 2xx to a CONNECT: the connection is a tunnel from now on (what the
 * client sent after the request goes up unchecked, as on any tunnel); any
 * other answer, or one that is not HTTP: the next request is framed as before.
 * Return: false while the status line is incomplete (wait for more).
 */
static bool answer_peek(struct gw_conn *c)
{
	uint8_t b[16];
	unsigned status = 0;
	ssize_t n = recv(c->ufd, b, sizeof(b), MSG_PEEK | MSG_DONTWAIT);
	enum http_result hr;

	if (n < 0) {
		if (errno == EAGAIN)
			c->ur.rd = false;
		return errno != EAGAIN && errno != EINTR;
	}
	hr = n ? http_response_status(b, (size_t)n, &status) : HTTP_MALFORMED;
	if (hr == HTTP_NEED_MORE && !c->ur.rdhup) {
		c->ur.rd = false; /* new bytes bring a new edge */
		return false;
	}
	c->hold = false;
	if (hr == HTTP_OK && http_stream_answered(&c->hs, status)) {
		c->http_track = false; /* a tunnel: the buffered rest goes first */
		if (c->boff < c->blen &&
		    copy_out(&c->c2u, c->ufd, &c->ur, c->buf + c->boff, c->blen - c->boff)) {
			gw_conn_close(c, "out of memory");
			return true;
		}
		buf_put(c->g, c->buf);
		c->buf = NULL;
		c->blen = c->boff = 0;
	} else if (c->hs.state == HTTP_STREAM_WAIT) {
		http_stream_answered(&c->hs, 0); /* not HTTP: frame what follows as HTTP */
	}
	return true;
}

/* ------------------------------------------------------------ a run's buffered bytes */

/* bytes @c holds in pipes and stashes, both ways */
static uint32_t held(const struct gw_conn *c)
{
	return c->c2u.inpipe + (c->c2u.slen - c->c2u.soff) + c->u2c.inpipe +
	       (c->u2c.slen - c->u2c.soff);
}

/* the run's connections that stopped reading for it may read again: queue them */
static void run_unthrottle(struct gw *g, const struct gw_run *run)
{
	for (struct gw_conn *o = g->conns; o; o = o->next)
		if (o->run == run && o->throttled && !o->queued && o->st == GW_C_RELAY) {
			o->queued = true;
			o->again = g->again;
			g->again = o;
		}
}

/*
 * account() - bring run->buffered up to date with what @c holds now (@gone:
 * the connection closes, it holds nothing from now on). A run at its
 * limits.run_buffer_kib reads lean (relay()); when it is back under three
 * quarters of it, its throttled connections are served again.
 */
static void account(struct gw_conn *c, bool gone)
{
	struct gw *g = c->g;
	uint32_t now = gone ? 0 : held(c);
	struct gw_run *run = c->run;
	bool over;

	if (!run || now == c->acct) {
		c->acct = now;
		return;
	}
	over = run->buffered >= g->lim.run_buffer;
	run->buffered = run->buffered + now - c->acct;
	c->acct = now;
	if (over && run->buffered < g->lim.run_buffer - g->lim.run_buffer / 4)
		run_unthrottle(g, run);
}

static void relay(struct gw_conn *c)
{
	struct gw *g = c->g;
	int r, more = 0;
	bool lean;

	c->last_ns = g->now;
	if (!c->flushed && c->checked)
		flush_peeked(c);
	if (c->st != GW_C_RELAY)
		return;
	/* a run whose connections hold limits.run_buffer_kib in the gateway reads
	 * lean until the destinations took some of it: a direction whose bytes
	 * wait (the side that is ahead) reads nothing, it waits in its own
	 * socket buffer (bounded, see fds.c); the others read only what their
	 * destination takes at once, never into a pipe -- so a run cannot stall
	 * itself (an echo's answer still flows back) and holds at most one copy
	 * read more per direction */
	lean = c->run && c->run->buffered >= g->lim.run_buffer;
	c->throttled = lean;
	if (c->flushed) {
		r = c->http_track ? pump_http(c, lean)
				  : pump(g, &c->c2u, &c->u2c, c->cfd, &c->cr, c->ufd, &c->ur,
					 c->budget >= 0 ? &c->budget : NULL, lean);
		if (c->st != GW_C_RELAY)
			return;
		if (r < 0) {
			gw_conn_close(c, r == -EMFILE	? "out of descriptors for pipes"
					 : r == -ENOMEM ? "out of memory"
							: "client->upstream error");
			return;
		}
		more |= r;
	}
	if (c->hold && (c->ur.rd || c->ur.rdhup)) {
		if (!answer_peek(c))
			goto out; /* the status line is not all there: nothing relayed yet */
		if (c->st != GW_C_RELAY)
			return;
		more = 1; /* the client's half may move now */
	}
	r = pump(g, &c->u2c, &c->c2u, c->ufd, &c->ur, c->cfd, &c->cr, NULL, lean);
	if (r < 0) {
		gw_conn_close(c, r == -EMFILE	? "out of descriptors for pipes"
				 : r == -ENOMEM ? "out of memory"
						: "upstream->client error");
		return;
	}
	more |= r;
	if (c->late_deny && c->u2c.shut) {
		late_deny_say(c); /* the upstream said all it had to */
		return;
	}
	if (c->c2u.shut && c->u2c.shut) {
		gw_conn_close(c, "closed by both sides");
		return;
	}
out:
	account(c, false);
	if (more && !c->queued) {
		/* no new edge will come for what is already there */
		c->queued = true;
		c->again = g->again;
		g->again = c;
	}
}

bool gw_conn_again(struct gw *g)
{
	struct gw_conn *list = g->again;

	g->again = NULL;
	while (list) {
		struct gw_conn *c = list;

		list = c->again;
		c->again = NULL;
		c->queued = false;
		if (c->st == GW_C_RELAY)
			relay(c);
	}
	return g->again != NULL;
}

/* ------------------------------------------------------------ events */

void gw_conn_event(struct gw_conn *c, bool up, unsigned events)
{
	struct gw_ready *rd = up ? &c->ur : &c->cr;

	if (c->st == GW_C_CLOSED)
		return;
	/* edge-triggered: remember what this edge said until a syscall says otherwise */
	if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
		rd->rd = true;
	if (events & EPOLLRDHUP)
		rd->rdhup = true;
	if (events & (EPOLLOUT | EPOLLHUP | EPOLLERR))
		rd->wr = true;
	if (!up && (events & EPOLLERR) && c->st != GW_C_DRAIN) {
		gw_conn_close(c, "client connection reset");
		return;
	}
	if (!up && (events & EPOLLHUP) && c->checked &&
	    (c->st == GW_C_RESOLVE || c->st == GW_C_CONNECT)) {
		gw_conn_close(c, "client closed before the upstream answered");
		return;
	}
	if (up && (events & EPOLLERR) && c->st == GW_C_RELAY) {
		gw_conn_close(c, "upstream connection reset");
		return;
	}
	switch (c->st) {
	case GW_C_PEEK:
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
		relay(c);
		break;
	case GW_C_DRAIN: {
		char sink[4096];
		ssize_t n;

		if (!c->cr.rd)
			break;
		while ((n = recv(c->cfd, sink, sizeof(sink), MSG_DONTWAIT)) > 0)
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
	struct gw *g = c->g;
	char reason[300];

	switch (c->st) {
	case GW_C_PEEK:
		if (c->kind == GW_K_PROXY) {
			snprintf(reason, sizeof(reason), "no complete proxy request within %u ms",
				 g->lim.peek_ms);
			deny(c, reason);
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
		uint64_t idle = (uint64_t)g->lim.idle_ms * 1000000ull;

		if (c->late_deny) {
			late_deny_say(c); /* the upstream had its time to finish */
			break;
		}
		if (!c->checked && c->blen) {
			first_bytes(c, true);
			if (c->st != GW_C_RELAY)
				break;
		}
		if (g->now - c->last_ns >= idle)
			gw_conn_close(c, "idle timeout");
		else
			gw_arm(g, &c->timer, c->last_ns + idle);
		break;
	}
	case GW_C_DRAIN:
		gw_conn_close(c, "denied");
		break;
	case GW_C_CLOSED:
		break;
	}
}

/* ------------------------------------------------------------ accept */

static void refuse(struct gw *g, int fd, struct gw_run *run, const struct gw_addr *local,
		   const struct gw_addr *peer, uint16_t port, const char *reason)
{
	struct linger lg = {.l_onoff = 1, .l_linger = 0};
	char l[INET6_ADDRSTRLEN], p[INET6_ADDRSTRLEN], id[32];
	char resource[128];
	struct audit_event ev = {
	    .type = AUDIT_TYPE_NET,
	    .action = "net.connect",
	    .resource = resource,
	    .allowed = false,
	    .reason = reason,
	    .proto = "tcp",
	    .has = AUDIT_HAS_PORT,
	    .port = port,
	    .denial_id = id,
	};

	gw_new_denial_id(g, id, sizeof(id));
	snprintf(resource, sizeof(resource), "%s -> %s", gw_addr_str(peer, p, sizeof(p)),
		 gw_addr_str(local, l, sizeof(l)));
	ev.dst = l;
	g->stats.refused++;
	gw_audit_denial(g, run, &ev);
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd);
}

static int original_dst(int fd, int family, struct gw_addr *a, uint16_t *port)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int r;

	if (family == AF_INET)
		r = getsockopt(fd, SOL_IP, SO_ORIGINAL_DST, &ss, &len);
	else
		r = getsockopt(fd, SOL_IPV6, IP6T_SO_ORIGINAL_DST, &ss, &len);
	if (r < 0)
		return -errno;
	return gw_addr_from_sa(&ss, a, port);
}

static void accept_one(struct gw_listener *l, int fd, const struct sockaddr_storage *pss)
{
	struct gw *g = l->g;
	struct sockaddr_storage lss;
	socklen_t ll = sizeof(lss);
	struct gw_addr local, peer, orig = {0};
	uint16_t lport = 0, oport = 0;
	struct gw_tcp_facts facts = {0};
	struct gw_tcp_verdict v;
	struct gw_run *run;
	struct gw_conn *c;
	const char *name;

	g->stats.accepted++;
	if (getsockname(fd, (struct sockaddr *)&lss, &ll) < 0 ||
	    gw_addr_from_sa(&lss, &local, &lport) || gw_addr_from_sa(pss, &peer, NULL)) {
		close(fd);
		return;
	}
	run = gw_run_find_ingress(g, &local, &peer);
	if (!run) {
		refuse(g, fd, NULL, &local, &peer, lport, "no run owns this ingress address pair");
		return;
	}
	if (l->kind == GW_L_TRANSPARENT) {
		if (original_dst(fd, local.family, &orig, &oport)) {
			refuse(g, fd, run, &local, &peer, lport,
			       "no original destination (not redirected)");
			return;
		}
	} else {
		orig = local;
		oport = lport;
	}
	if (g->nconns >= g->lim.conns_total || run->conns >= g->lim.conns_per_run) {
		refuse(g, fd, run, &orig, &peer, oport,
		       g->nconns >= g->lim.conns_total ? "gateway connection limit reached"
						       : "run connection limit reached");
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return;
	}
	c->g = g;
	c->run = run;
	run->refs++;
	run->conns++;
	run->conns_total++;
	g->nconns++;
	c->next = g->conns;
	if (g->conns)
		g->conns->prev = c;
	g->conns = c;
	c->cfd = fd;
	c->ufd = -1;
	c->c2u.pipe[0] = c->c2u.pipe[1] = c->u2c.pipe[0] = c->u2c.pipe[1] = -1;
	c->kind = l->kind == GW_L_PROXY ? GW_K_PROXY : GW_K_TRANSPARENT;
	c->orig = orig;
	c->oport = oport;
	c->peer = peer;
	c->budget = -1;
	c->proto = "tcp";
	c->start_ns = c->last_ns = g->now;
	gw_timer_init(&c->timer, GW_T_CONN, c);
	c->cr.wr = true; /* just accepted: its send buffer is empty */
	/* registered once, edge-triggered, for both ways (see the top of the file) */
	if (gw_ep_add(g, fd, GW_EP_EVENTS, GW_REF(GW_REF_CLIENT, c))) {
		gw_conn_close(c, "epoll_ctl failed");
		return;
	}
	c->st = GW_C_PEEK;
	if (c->kind == GW_K_PROXY) {
		gw_arm(g, &c->timer, g->now + (uint64_t)g->lim.peek_ms * 1000000ull);
		return;
	}
	name = gw_synth_name(&run->synth, &orig);
	if (name) {
		c->synthetic = true;
		if (str_set(&c->name, name)) {
			conn_reset(c, "out of memory");
			return;
		}
	}
	facts.policy = run->policy;
	facts.dst = &c->orig;
	facts.port = oport;
	facts.bound = c->name;
	gw_tcp_decide(&facts, &v);
	switch (v.action) {
	case GW_TCP_ALLOW_NAME:
		/* a synthetic address: its name is known, nothing to wait for */
		if (set_rule(c, &v)) {
			conn_reset(c, "out of memory");
			return;
		}
		start_resolve(c);
		return;
	case GW_TCP_ALLOW_ADDR:
		/* a cidr rule names the address: no name needed, nothing to wait for */
		if (set_rule(c, &v) || set_cand(c, &orig, 1)) {
			conn_reset(c, "out of memory");
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
	gw_arm(g, &c->timer, g->now + (uint64_t)g->lim.peek_ms * 1000000ull);
}

void gw_tcp_accept(struct gw_listener *l)
{
	for (int i = 0; i < 64; i++) {
		if (l->g->nconns >= l->g->fd_conns) {
			/* out of descriptor room: leave the rest in the backlog */
			l->g->stats.emfile++;
			gw_pause_listener(l);
			return;
		}
		struct sockaddr_storage peer;
		socklen_t pl = sizeof(peer);
		int fd =
		    accept4(l->fd, (struct sockaddr *)&peer, &pl, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM) {
				l->g->stats.emfile++;
				gw_pause_listener(l);
			}
			if (errno == ECONNABORTED || errno == EINTR)
				continue;
			return;
		}
		accept_one(l, fd, &peer);
	}
}

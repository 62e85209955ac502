/* relayconn.c - one TCP connection's relay and its end: the peeked bytes
 * written upstream first, then both directions moved (relay.c); on a connection
 * whose client speaks HTTP every request head framed and checked before it goes
 * upstream (a later request that names another host is denied once the upstream
 * answered the earlier ones); the run's buffered bytes accounted (a run over its
 * limit reads lean); the connection's audit events; readable denials (a TLS alert,
 * an HTTP 403, else a reset); and closing, with the memory freed at the end of
 * the loop round. */
#include "gateway/decide.h"
#include "gateway/tcp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#define GW_DRAIN_NS 2000000000ull /* a denied client is read this long for its answer to arrive */
#define GW_LATE_NS 5000000000ull  /* a late denial waits this long for the upstream at most */

/* *@dst = a heap copy of @src (at most 255 bytes; NULL or "" -> NULL). Return: 0 or -ENOMEM */
int gw_str_set(char **dst, const char *src)
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

/* learn mode: a connection's decision in the run's table (its name, else the address literal
 * it went to or asked for; a proxy request understood no further than its form has neither) */
static void learn_note(struct gw_conn *c, bool allowed, const char *reason, const char *addr)
{
	enum gw_learn_proto p = GW_LEARN_RAW;
	const char *host = c->name;

	if (c->kind == GW_K_PROXY)
		p = GW_LEARN_HTTP; /* CONNECT or an absolute-form request */
	else if (c->proto && !strcmp(c->proto, "tls"))
		p = GW_LEARN_TLS;
	else if (c->proto && !strcmp(c->proto, "http"))
		p = GW_LEARN_HTTP;
	if (!host && c->kind == GW_K_PROXY)
		host = c->host;
	else if (!host)
		host = addr;
	if (host)
		(void)gw_learn_note(&c->run->learned, host, c->oport, p, allowed ? NULL : reason);
}

void gw_conn_audit(struct gw_conn *c, const char *action, bool allowed, const char *reason)
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

	if (c->run && c->run->learn && !strcmp(action, "net.connect")) {
		/* recorded before the event, which the audit budget may suppress */
		learn_note(c, allowed, reason, gw_addr_str(&c->orig, dst, sizeof(dst)));
		if (allowed && !strcmp(reason, "allowed"))
			ev.reason = "allowed: learn mode";
	}
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
		ev.duration_ms = (int64_t)((c->t->ev->now - c->start_ns) / 1000000ull);
	}
	if (allowed)
		gw_audit(c->t->audit, gw_run_acct(c->run), &ev);
	else
		gw_audit_denial(c->t->audit, gw_run_acct(c->run),
				&ev); /* counted in the run's denials */
}

void gw_conn_close(struct gw_conn *c, const char *end)
{
	struct gw_tcp *t = c->t;

	if (c->st == GW_C_CLOSED)
		return;
	if (!c->decided && c->st == GW_C_RELAY && c->ufd >= 0) {
		/* relayed before the client said anything (server-first) */
		c->decided = true;
		gw_conn_audit(c, "net.connect", true, "allowed");
	}
	if (c->decided) {
		gw_conn_audit(c, "net.close", true, end);
	}
	gw_conn_account(c, true); /* its pipes and stashes go with it */
	c->st = GW_C_CLOSED;
	gw_disarm(t->ev, &c->timer);
	gw_resolve_cancel(&c->waiter);
	/* close() takes the sockets out of the epoll set (never duplicated) */
	wd_closep(&c->cfd);
	wd_closep(&c->ufd);
	gw_pipe_put(&t->pool, &c->c2u);
	gw_pipe_put(&t->pool, &c->u2c);
	gw_buf_put(&t->pool, c->buf);
	c->buf = NULL;
	if (c->queued) {
		for (struct gw_conn **pp = &t->again; *pp; pp = &(*pp)->again)
			if (*pp == c) {
				*pp = c->again;
				break;
			}
		c->queued = false;
	}
	if (c->prev)
		c->prev->next = c->next;
	else
		t->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->c2u.total = c->u2c.total = NULL; /* the run may go with the next line */
	if (c->run) {
		gw_runs_conn_close(t->runs, c->run);
		c->run = NULL;
	}
	c->next = t->zombies;
	c->prev = NULL;
	t->zombies = c;
}

void gw_conn_reap(struct gw_tcp *t)
{
	while (t->zombies) {
		struct gw_conn *c = t->zombies;

		t->zombies = c->next;
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
void gw_conn_reset(struct gw_conn *c, const char *end)
{
	struct linger lg = {.l_onoff = 1, .l_linger = 0};

	if (c->cfd >= 0)
		setsockopt(c->cfd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	gw_conn_close(c, end);
}

void gw_conn_deny(struct gw_conn *c, const char *reason)
{
	struct gw_tcp *t = c->t;
	char out[1024] = ""; /* sent only as far as a composer wrote it (n > 0) */
	int n = 0;

	gw_new_denial_id(t->ev, c->denial_id, sizeof(c->denial_id));
	t->ev->stats.denied++;
	c->decided = false; /* the denial is the connection's one event */
	gw_conn_audit(c, "net.connect", false, reason);
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
		gw_conn_reset(c, reason);
		return;
	}
	shutdown(c->cfd, SHUT_WR);
	c->st = GW_C_DRAIN;
	gw_arm(t->ev, &c->timer, t->ev->now + GW_DRAIN_NS);
}

/* start relaying once connected and checked: write the peeked bytes first */
void gw_conn_flush_peeked(struct gw_conn *c)
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
		gw_half_count(&c->c2u, (uint64_t)n);
	}
	if (c->budget >= 0) {
		c->budget -= (int64_t)c->blen;
		if (c->budget <= 0)
			c->c2u.eof = true;
	}
	c->flushed = true;
	gw_buf_put(&c->t->pool, c->buf);
	c->buf = NULL;
	c->blen = c->boff = 0;
}

/*
 * late_deny() - a request after the first on an allowed HTTP connection is
 * denied (fronting, or a stream that cannot be framed). The denial is
 * audited now; the client's later bytes are not read any more and the
 * upstream gets end-of-stream, so it finishes answering the requests it
 * already has; then the client gets the 403 (gw_conn_late_deny_say()). Bounded by
 * GW_LATE_NS.
 */
static void late_deny(struct gw_conn *c, const char *reason)
{
	struct gw_tcp *t = c->t;

	if (c->late_deny)
		return;
	gw_new_denial_id(t->ev, c->denial_id, sizeof(c->denial_id));
	t->ev->stats.denied++;
	gw_conn_audit(c, "net.connect", false, reason);
	if (gw_str_set(&c->late_deny, reason) || !c->late_deny)
		c->late_deny = strdup("denied");
	c->c2u.eof = true;	 /* the client is not read any more */
	c->u2c.keep_open = true; /* the upstream's end is not passed on: the 403 follows */
	c->boff = c->blen;	 /* what was not framed never goes upstream */
	gw_arm(t->ev, &c->timer, t->ev->now + GW_LATE_NS);
}

/* the upstream answered what it had (or the wait is over): say the late denial */
void gw_conn_late_deny_say(struct gw_conn *c)
{
	char out[1024], line[500];
	int n;

	snprintf(line, sizeof(line), "%s", c->late_deny ? c->late_deny : "denied");
	n = http_403_compose(out, sizeof(out), line, c->denial_id);
	wd_closep(&c->ufd);
	if (n <= 0 || (c->u2c.slen || c->u2c.inpipe) ||
	    send(c->cfd, out, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) != n) {
		gw_conn_reset(c, c->late_deny);
		return;
	}
	shutdown(c->cfd, SHUT_WR);
	c->st = GW_C_DRAIN;
	gw_arm(c->t->ev, &c->timer, c->t->ev->now + GW_DRAIN_NS);
}

/* a request head on a connection bound to c->name: true when it may go upstream */
static bool request_ok(struct gw_conn *c, const struct http_request *req)
{
	struct gw_tcp_verdict v;
	char reason[600];

	gw_tcp_decide_request(c->name, req, c->hs.requests, &v);
	if (v.action != GW_TCP_DENY)
		return true;
	gw_str_set(&c->host, req->host); /* the event names what this request asked for */
	late_deny(c, gw_tcp_reason_text(&v, c->run->policy_name, reason, sizeof(reason)));
	return false;
}

/* read more of the client's bytes into c->buf (kept from the first bytes, or
 * from the pool). Return: bytes read, 0 at the end, -EAGAIN, or -errno */
static ssize_t read_more(struct gw_conn *c)
{
	size_t want;
	ssize_t n;

	if (!c->buf && !(c->buf = gw_buf_get(&c->t->pool)))
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
	struct gw_tcp *t = c->t;
	struct gw_half *h = &c->c2u;
	int round, r = 0;

	for (round = 0; round < GW_ROUNDS; round++) {
		struct http_step st;
		ssize_t n;

		r = gw_drain_half(h, c->ufd, &c->ur);
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
				r = gw_copy_out(h, c->ufd, &c->ur, c->buf + c->boff, st.len);
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
			n = gw_move_once(&t->pool, h, c->cfd, &c->cr, c->ufd, &c->ur, want, lean);
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
		gw_pipe_put(&t->pool, h);
	if (c->boff == c->blen && c->buf) {
		/* nothing buffered: the buffer goes back to the pool (idle
		 * keep-alive connections hold none) */
		gw_buf_put(&t->pool, c->buf);
		c->buf = NULL;
		c->blen = c->boff = 0;
	}
	if (r < 0)
		return r;
	gw_pass_end(h, &c->u2c, c->ufd);
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
		    gw_copy_out(&c->c2u, c->ufd, &c->ur, c->buf + c->boff, c->blen - c->boff)) {
			gw_conn_close(c, "out of memory");
			return true;
		}
		gw_buf_put(&c->t->pool, c->buf);
		c->buf = NULL;
		c->blen = c->boff = 0;
	} else if (c->hs.state == HTTP_STREAM_WAIT) {
		http_stream_answered(&c->hs, 0); /* not HTTP: frame what follows as HTTP */
	}
	return true;
}

/* bytes @c holds in pipes and stashes, both ways */
static uint32_t held(const struct gw_conn *c)
{
	return c->c2u.inpipe + (c->c2u.slen - c->c2u.soff) + c->u2c.inpipe +
	       (c->u2c.slen - c->u2c.soff);
}

/* the run's connections that stopped reading for it may read again: queue them */
static void run_unthrottle(struct gw_tcp *t, const struct gw_run *run)
{
	for (struct gw_conn *o = t->conns; o; o = o->next)
		if (o->run == run && o->throttled && !o->queued && o->st == GW_C_RELAY) {
			o->queued = true;
			o->again = t->again;
			t->again = o;
		}
}

/*
 * gw_conn_account() - bring run->buffered up to date with what @c holds now (@gone:
 * the connection closes, it holds nothing from now on). A run at its
 * limits.run_buffer_kib reads lean (relay()); when it is back under three
 * quarters of it, its throttled connections are served again.
 */
void gw_conn_account(struct gw_conn *c, bool gone)
{
	struct gw_tcp *t = c->t;
	uint32_t now = gone ? 0 : held(c);
	struct gw_run *run = c->run;
	bool over;

	if (!run || now == c->acct) {
		c->acct = now;
		return;
	}
	over = run->buffered >= t->lim->run_buffer;
	run->buffered = run->buffered + now - c->acct;
	c->acct = now;
	if (over && run->buffered < t->lim->run_buffer - t->lim->run_buffer / 4)
		run_unthrottle(t, run);
}

void gw_conn_relay(struct gw_conn *c)
{
	struct gw_tcp *t = c->t;
	int r, more = 0;
	bool lean;

	c->last_ns = t->ev->now;
	if (!c->flushed && c->checked)
		gw_conn_flush_peeked(c);
	if (c->st != GW_C_RELAY)
		return;
	/* a run whose connections hold limits.run_buffer_kib in the gateway reads
	 * lean until the destinations took some of it: a direction whose bytes
	 * wait (the side that is ahead) reads nothing, it waits in its own
	 * socket buffer (bounded, see fds.c); the others read only what their
	 * destination takes at once, never into a pipe -- so a run cannot stall
	 * itself (an echo's answer still flows back) and holds at most one copy
	 * read more per direction */
	lean = c->run && c->run->buffered >= t->lim->run_buffer;
	c->throttled = lean;
	if (c->flushed) {
		r = c->http_track ? pump_http(c, lean)
				  : gw_pump(&t->pool, &c->c2u, &c->u2c, c->cfd, &c->cr, c->ufd,
					    &c->ur, c->budget >= 0 ? &c->budget : NULL, lean);
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
	r = gw_pump(&t->pool, &c->u2c, &c->c2u, c->ufd, &c->ur, c->cfd, &c->cr, NULL, lean);
	if (r < 0) {
		gw_conn_close(c, r == -EMFILE	? "out of descriptors for pipes"
				 : r == -ENOMEM ? "out of memory"
						: "upstream->client error");
		return;
	}
	more |= r;
	if (c->late_deny && c->u2c.shut) {
		gw_conn_late_deny_say(c); /* the upstream said all it had to */
		return;
	}
	if (c->c2u.shut && c->u2c.shut) {
		gw_conn_close(c, "closed by both sides");
		return;
	}
out:
	gw_conn_account(c, false);
	if (more && !c->queued) {
		/* no new edge will come for what is already there */
		c->queued = true;
		c->again = t->again;
		t->again = c;
	}
}

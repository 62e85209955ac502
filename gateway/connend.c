/* connend.c - what one TCP connection tells and how it ends: its audit events (and learn mode's
 * table), the run's buffered bytes accounted as the connection holds them (a run over its
 * limits.run_buffer_kib reads lean until it is back under three quarters: its throttled
 * connections are queued again), readable denials (a TLS alert, an HTTP 403 with a denial id,
 * a SOCKS5 reply code, else a reset; a later request's denial waits for the upstream to finish
 * the requests before it), and closing, with the memory freed at the end of the loop round. */
#include "gateway/decide.h"
#include "gateway/dns.h"
#include "gateway/tcp.h"
#include "gateway/sock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
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

/* learn mode: a connection's decision in the run's table (its name, else the address literal it
 * went to; a proxy request is noted once its target's name and port are known: c->name) */
static void learn_note(struct gw_conn *c, bool allowed, const char *reason, const char *addr)
{
	enum gw_learn_proto p = GW_LEARN_RAW;
	const char *host = c->name;

	/* a proxy request (CONNECT or absolute-form) counts as HTTP, whatever its tunnel carries */
	if (c->kind == GW_K_PROXY || (c->proto && !strcmp(c->proto, "http")))
		p = GW_LEARN_HTTP;
	else if (c->proto && !strcmp(c->proto, "tls"))
		p = GW_LEARN_TLS;
	if (!host && c->kind != GW_K_PROXY)
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

	if (allowed && c->would && !strcmp(action, "net.connect")) {
		/* a shadow run let through what its policy denies: the denial it would have been */
		ev.decision = AUDIT_WOULD_DENY;
		ev.reason = c->would;
	}
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

int gw_conn_would(struct gw_conn *c, const struct gw_tcp_verdict *would)
{
	char reason[600];
	char *s = strdup(gw_tcp_reason_text(would, c->run->policy_name, reason, sizeof(reason)));

	if (!s)
		return -ENOMEM;
	free(c->would);
	c->would = s;
	gw_new_denial_id(c->t->ev, c->denial_id, sizeof(c->denial_id));
	return 0;
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

void gw_conn_close(struct gw_conn *c, const char *end)
{
	struct gw_tcp *t = c->t;

	if (c->st == GW_C_CLOSED)
		return;
	if (c->asked) {
		/* held by an ask (conn.c): out of it, and a denial in the log */
		c->asked = false;
		gw_dns_ask_unhold(t->dns, c);
		if (!c->decided) {
			c->decided = true;
			gw_conn_audit(c, "net.connect", false, end);
		}
	}
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
		free(c->would);
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
		gw_sock_setopt(c->cfd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	gw_conn_close(c, end);
}

const char *gw_conn_upload_check(struct gw_conn *c, char *buf, size_t size)
{
	char dst[INET6_ADDRSTRLEN];
	const char *name = c->name ? c->name : gw_addr_str(&c->orig, dst, sizeof(dst));
	int ret;

	if (!c->run || c->c2u.up)
		return NULL; /* no run, or checked before (a connect tried again) */
	ret = gw_uploads_get(&c->run->up, name, &c->c2u.up);
	if (ret == 1)
		return NULL; /* no upload budget */
	if (ret == -ENOSPC) {
		snprintf(buf, size,
			 "upload budget: the run sent bytes to %u names, the most the gateway "
			 "counts; refused",
			 GW_UPLOAD_NAMES_MAX);
		return buf;
	}
	if (ret)
		return "out of memory";
	return gw_upload_room(c->c2u.up) ? NULL : gw_upload_reason(c->c2u.up, name, buf, size);
}

void gw_conn_upload_cut(struct gw_conn *c)
{
	const struct gw_upload *a = c->c2u.up;
	enum gw_upload_which w = gw_upload_which(a);
	struct linger lg = {.l_onoff = 1, .l_linger = 0};
	char reason[400], dst[INET6_ADDRSTRLEN], dtxt[INET6_ADDRSTRLEN];
	const char *name = c->name ? c->name : gw_addr_str(&c->orig, dst, sizeof(dst));
	struct audit_event ev = {
	    .type = AUDIT_TYPE_LIMIT,
	    .action = "limit.upload",
	    .resource = name,
	    .allowed = false,
	    .reason = gw_upload_reason(a, name, reason, sizeof(reason)),
	    .rule = w == GW_UPLOAD_RUN ? "limits.upload_total_kib" : "limits.upload_kib",
	    .dst = gw_addr_str(c->up.family ? &c->up : &c->orig, dtxt, sizeof(dtxt)),
	    .proto = c->proto,
	    .sni = c->sni,
	    .host = c->host,
	    .has = AUDIT_HAS_PORT | AUDIT_HAS_BYTES_UP | AUDIT_HAS_LIMIT | AUDIT_HAS_USAGE,
	    .port = c->oport,
	    .bytes_up = (int64_t)c->c2u.bytes,
	    .limit = (int64_t)(w == GW_UPLOAD_RUN ? a->run->cap_run : a->run->cap_name),
	    .usage = (int64_t)(w == GW_UPLOAD_RUN ? a->run->used : a->used),
	};

	gw_new_denial_id(c->t->ev, c->denial_id, sizeof(c->denial_id));
	ev.denial_id = c->denial_id;
	gw_audit_denial(c->t->audit, gw_run_acct(c->run), &ev);
	/* both sides reset: a FIN could pass a cut stream upstream off as a whole one */
	if (c->ufd >= 0)
		gw_sock_setopt(c->ufd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	gw_conn_reset(c, reason);
}

/* the SOCKS5 answer a denial of @c gives (c->socks_rep, by its stage: socksconn.c) into @out.
 * Return: its length; 0: none (malformed bytes, or past the success reply: the tunnel's) */
static int socks_denial(const struct gw_conn *c, uint8_t *out, size_t size)
{
	if (!c->socks_rep || size < SOCKS5_REPLY_LEN)
		return 0;
	if (c->socks == GW_SOCKS_GREETING) {
		out[0] = 5;
		out[1] = SOCKS5_NO_METHOD; /* the only refusal a greeting gets */
		return 2;
	}
	if (c->socks == GW_SOCKS_REQUEST || c->socks == GW_SOCKS_DECIDED)
		return socks5_reply_compose(out, size, c->socks_rep);
	return 0;
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
	} else if (c->socks) {
		n = socks_denial(c, (uint8_t *)out, sizeof(out));
	}
	if (n <= 0 || gw_sock_send(c->cfd, out, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) != n) {
		gw_conn_reset(c, reason);
		return;
	}
	gw_sock_shutdown(c->cfd, SHUT_WR);
	c->st = GW_C_DRAIN;
	gw_arm(t->ev, &c->timer, t->ev->now + GW_DRAIN_NS);
}

/*
 * gw_conn_late_deny() - a request after the first on an allowed HTTP connection is
 * denied (fronting, or a stream that cannot be framed). The denial is
 * audited now; the client's later bytes are not read any more and the
 * upstream gets end-of-stream, so it finishes answering the requests it
 * already has; then the client gets the 403 (gw_conn_late_deny_say()). Bounded by
 * GW_LATE_NS.
 */
void gw_conn_late_deny(struct gw_conn *c, const char *reason)
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
	    gw_sock_send(c->cfd, out, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) != n) {
		gw_conn_reset(c, c->late_deny);
		return;
	}
	gw_sock_shutdown(c->cfd, SHUT_WR);
	c->st = GW_C_DRAIN;
	gw_arm(c->t->ev, &c->timer, c->t->ev->now + GW_DRAIN_NS);
}

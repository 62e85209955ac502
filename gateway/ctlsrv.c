/* ctlsrv.c - the control socket's server side: accept, SO_PEERCRED, read one
 * request per line (at most GW_CTL_MAX bytes), answer one JSON line. A uid
 * acts only on its own runs (root on all). A malformed request gets an error
 * line and the connection is closed. Operations are a const table. */
#include "gateway/gw_internal.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define GW_CTL_IDLE_NS 30000000000ull

static bool may_act(const struct gw_ctlconn *c, const struct gw_run *r)
{
	return c->uid == 0 || c->uid == r->uid;
}

static void put_json(struct gw_ctlconn *c, json_t *j)
{
	char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;

	if (!s || wd_buf_puts(&c->out, s) || wd_buf_puts(&c->out, "\n"))
		c->closing = true;
	free(s);
	json_decref(j);
}

static void put_error(struct gw_ctlconn *c, int code, const char *why)
{
	put_json(c, json_pack("{s:b, s:s, s:s}", "ok", 0, "error", why, "errno",
			      strerrorname_np(-code) ? strerrorname_np(-code) : "EINVAL"));
}

static void put_ok(struct gw_ctlconn *c)
{
	put_json(c, json_pack("{s:b}", "ok", 1));
}

static void audit_run(struct gw *g, const struct gw_run *r, const char *action, uid_t uid,
		      const char *reason)
{
	struct audit_event ev = {
	    .type = AUDIT_TYPE_RUN,
	    .action = action,
	    .resource = r->ifname,
	    .allowed = true,
	    .reason = reason,
	    .has = AUDIT_HAS_UID,
	    .uid = uid,
	};

	gw_audit(g, r, &ev);
}

static void op_register(struct gw_ctlconn *c, const struct gw_ctl_req *req)
{
	char why[1200] = "";
	int r = gw_run_register(c->g, req, c->uid, why, sizeof(why));

	if (r) {
		put_error(c, r, why[0] ? why : strerror(-r));
		return;
	}
	audit_run(c->g, gw_run_find_id(c->g, req->id), "run.gateway-register", c->uid,
		  "registered with the gateway");
	put_ok(c);
}

static struct gw_run *own_run(struct gw_ctlconn *c, const char *id)
{
	struct gw_run *r = gw_run_find_id(c->g, id);

	if (!r || !may_act(c, r)) {
		/* another user's run is reported as absent */
		put_error(c, -ENOENT, "no such run");
		return NULL;
	}
	return r;
}

static void op_unregister(struct gw_ctlconn *c, const struct gw_ctl_req *req)
{
	struct gw_run *r = own_run(c, req->id);

	if (!r)
		return;
	audit_run(c->g, r, "run.gateway-unregister", c->uid, "unregistered from the gateway");
	gw_run_unregister(c->g, r);
	put_ok(c);
}

static void op_replace(struct gw_ctlconn *c, const struct gw_ctl_req *req)
{
	struct gw_run *r = own_run(c, req->id);
	char why[1200] = "";
	int ret;

	if (!r)
		return;
	ret = gw_run_set_policy(r, req, why, sizeof(why));
	if (ret) {
		put_error(c, ret, why);
		return;
	}
	audit_run(c->g, r, "run.policy-replace", c->uid, "allowlist replaced");
	put_ok(c);
}

static json_t *addr_json(const struct gw_addr *a)
{
	char t[INET6_ADDRSTRLEN];

	return a->family ? json_string(gw_addr_str(a, t, sizeof(t))) : json_null();
}

static void op_list(struct gw_ctlconn *c, const struct gw_ctl_req *req)
{
	json_t *runs = json_array();

	(void)req;
	for (struct gw_run *r = c->g->runs; r && runs; r = r->next) {
		if (!may_act(c, r))
			continue;
		json_array_append_new(
		    runs,
		    json_pack("{s:s, s:I, s:s, s:o, s:o, s:o, s:o, s:s, s:I, s:I, s:I, s:I, "
			      "s:I, s:I, s:I}",
			      "id", r->id, "uid", (json_int_t)r->uid, "if", r->ifname, "host_v4",
			      addr_json(&r->host4), "sandbox_v4", addr_json(&r->sb4), "host_v6",
			      addr_json(&r->host6), "sandbox_v6", addr_json(&r->sb6), "policy",
			      r->policy_name, "connections", (json_int_t)r->conns,
			      "connections_total", (json_int_t)r->conns_total, "denied",
			      (json_int_t)r->denied, "dns_queries", (json_int_t)r->dns_queries,
			      "bytes_up", (json_int_t)r->bytes_up, "bytes_down",
			      (json_int_t)r->bytes_down, "synthetic_names",
			      (json_int_t)r->synth.n));
	}
	put_json(c, json_pack("{s:b, s:o}", "ok", 1, "runs", runs));
}

static void op_stats(struct gw_ctlconn *c, const struct gw_ctl_req *req)
{
	const struct gw_stats *s = &c->g->stats;

	(void)req;
	put_json(c,
		 json_pack("{s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "ok", 1,
			   "runs", (json_int_t)c->g->nruns, "connections", (json_int_t)c->g->nconns,
			   "accepted", (json_int_t)s->accepted, "refused", (json_int_t)s->refused,
			   "denied", (json_int_t)s->denied, "relayed", (json_int_t)s->relayed,
			   "dns_queries", (json_int_t)s->dns_queries, "emfile",
			   (json_int_t)s->emfile, "upstream_failed", (json_int_t)s->upstream_failed,
			   "audit_errors", (json_int_t)s->audit_errors));
}

static void (*const handlers[GW_CTL_N])(struct gw_ctlconn *, const struct gw_ctl_req *) = {
    [GW_CTL_REGISTER] = op_register, [GW_CTL_UNREGISTER] = op_unregister,
    [GW_CTL_REPLACE] = op_replace,   [GW_CTL_LIST] = op_list,
    [GW_CTL_STATS] = op_stats,
};

void gw_ctlconn_close(struct gw_ctlconn *c)
{
	struct gw *g = c->g;

	gw_timer_cancel(&g->timers, &c->timer);
	gw_ep_del(g, c->fd);
	close(c->fd);
	if (c->prev)
		c->prev->next = c->next;
	else
		g->ctlconns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	wd_buf_free(&c->in);
	wd_buf_free(&c->out);
	free(c);
}

static void handle_lines(struct gw_ctlconn *c)
{
	char *nl;

	while (!c->closing && c->in.len && (nl = memchr(c->in.data, '\n', c->in.len))) {
		size_t len = (size_t)(nl - c->in.data);
		struct gw_ctl_req req;
		char why[256];
		int r = gw_ctl_parse(c->in.data, len, &req, why, sizeof(why));

		if (r) {
			put_error(c, r, why);
			c->closing = true; /* malformed: this connection ends */
			return;
		}
		handlers[req.op](c, &req);
		gw_ctl_req_clear(&req);
		memmove(c->in.data, nl + 1, c->in.len - len - 1);
		c->in.len -= len + 1;
	}
	if (c->in.len > GW_CTL_MAX) {
		put_error(c, -E2BIG, "request too long");
		c->closing = true;
	}
}

void gw_ctlconn_event(struct gw_ctlconn *c, unsigned events)
{
	char buf[65536];

	if (events & EPOLLERR) {
		gw_ctlconn_close(c);
		return;
	}
	if (!c->closing && (events & (EPOLLIN | EPOLLHUP))) {
		ssize_t n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (n == 0 || (n < 0 && errno != EAGAIN)) {
			c->closing = true;
		} else if (n > 0) {
			if (wd_buf_append(&c->in, buf, (size_t)n))
				c->closing = true;
			else
				handle_lines(c);
		}
	}
	while (c->outoff < c->out.len) {
		ssize_t n = send(c->fd, c->out.data + c->outoff, c->out.len - c->outoff,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EAGAIN)
				break;
			gw_ctlconn_close(c);
			return;
		}
		c->outoff += (size_t)n;
	}
	if (c->outoff == c->out.len) {
		wd_buf_reset(&c->out);
		c->outoff = 0;
		if (c->closing) {
			gw_ctlconn_close(c);
			return;
		}
	}
	gw_ep_mod(c->g, c->fd, (c->closing ? 0 : EPOLLIN) | (c->out.len ? EPOLLOUT : 0),
		  GW_REF(GW_REF_CTL, c));
	gw_arm(c->g, &c->timer, c->g->now + GW_CTL_IDLE_NS);
}

void gw_ctl_accept(struct gw_listener *l)
{
	struct gw *g = l->g;

	for (int i = 0; i < 16; i++) {
		struct ucred cred;
		socklen_t cl = sizeof(cred);
		int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct gw_ctlconn *c;

		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE)
				gw_pause_listener(l);
			return;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 ||
		    !(c = calloc(1, sizeof(*c)))) {
			close(fd);
			continue;
		}
		c->g = g;
		c->fd = fd;
		c->uid = cred.uid;
		c->pid = cred.pid;
		gw_timer_init(&c->timer, GW_T_CTLCONN, c);
		if (gw_ep_add(g, fd, EPOLLIN, GW_REF(GW_REF_CTL, c))) {
			free(c);
			close(fd);
			continue;
		}
		c->next = g->ctlconns;
		if (g->ctlconns)
			g->ctlconns->prev = c;
		g->ctlconns = c;
		gw_arm(g, &c->timer, g->now + GW_CTL_IDLE_NS);
	}
}

/* ctlops.c - the control server's operations: register (without a namespace), unregister,
 * replace, list, stats, mcp, cgroup_join, learned, asks, answer, as a const table; a uid acts only
 * on its own runs (root on all), another user's run is reported as absent. Each answers with one
 * JSON line (ctlconn.c queues it).
 *
 * With --manage-nft (ctl->priv->manage_nft) a register or unregister has a privileged side
 * effect: the run's nft set elements. The worker parses and validates the request itself, then
 * sends the parent one fixed-size struct gw_priv_run (privchan.c) and parks the control
 * connection (c->waiting: no further line of it is read) until the parent's reply comes back
 * (op_done()); only then is the client answered. A register the parent refuses is rolled back;
 * an unregister takes the run out of the table first (its traffic is refused at once) and then
 * asks for its elements to be removed. A register with "netns" is ctlnetns.c's. */
#include "gateway/ctlsrv.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool may_act(const struct gw_ctlconn *c, const struct gw_run *r)
{
	return c->uid == 0 || c->uid == r->uid;
}

/* a register's ok; under a ceiling with what it changed and the effective limits */
static void put_registered(struct gw_ctlconn *c, const struct gw_run *r)
{
	const struct wd_policy *p = r->policy;
	json_t *j, *v;

	if (!p || !p->bounded) {
		gw_ctlconn_put_ok(c);
		return;
	}
	v = json_array();
	for (size_t i = 0; v && i < p->nnarrowed; i++)
		json_array_append_new(v, json_string(p->narrowed[i].msg));
	j = json_pack("{s:b, s:o, s:{s:I, s:I, s:I}}", "ok", 1, "narrowed", v, "limits",
		      "memory_mb", (json_int_t)p->limits.memory_mb, "pids",
		      (json_int_t)p->limits.pids, "timeout_s", (json_int_t)p->limits.timeout_s);
	gw_ctlconn_put_json(c, j);
}

void gw_ctl_audit_run(struct gw_ctl *ctl, struct gw_run *r, const char *action, uid_t uid,
		      const char *reason)
{
	char learn[400];
	struct audit_event ev = {
	    .type = AUDIT_TYPE_RUN,
	    .action = action,
	    .resource = r->ifname,
	    .allowed = true,
	    .reason = reason,
	    .has = AUDIT_HAS_UID,
	    .uid = uid,
	};

	/* a learn-mode run's registration says what that means (and the event has `learn`) */
	if (r->learn && !strcmp(action, "run.gateway-register")) {
		snprintf(learn, sizeof(learn),
			 "%s, in learn mode: any name on any port is allowed and recorded (within "
			 "the host's ceiling; the SSRF classes stay refused)",
			 reason);
		ev.reason = learn;
	}
	/* and a shadow run's what it means */
	if (r->shadow && !strcmp(action, "run.gateway-register")) {
		snprintf(
		    learn, sizeof(learn),
		    "%s, in shadow mode: what its policy denies on the network is let through and "
		    "recorded as would_deny (the host's ceiling and the SSRF guard still deny)",
		    reason);
		ev.reason = learn;
	}
	gw_audit(ctl->audit, gw_run_acct(r), &ev);
}

static void op_done(struct gw_privreq *q, const struct gw_priv_reply *rep);

/* ask the parent to apply a run update (the facts of @run, else the given ones) for @c (NULL:
 * nobody waits for the answer), or to move @facts->pid into @run's cgroup (GW_PRIV_CGROUP_JOIN);
 * Return: 0 or -errno */
int gw_ctlop_send(struct gw_ctl *ctl, struct gw_ctlconn *c, enum gw_priv_type type,
		  struct gw_run *run, const struct gw_ctl_req *facts, uid_t uid)
{
	struct ctl_op *op = calloc(1, sizeof(*op));
	int r;

	if (!op)
		return -ENOMEM;
	op->req.done = op_done;
	if (type == GW_PRIV_CGROUP_JOIN)
		r = gw_privchan_send_join(ctl->priv, &op->req, run->ifname, facts->pid);
	else if (run)
		r = gw_privchan_send(ctl->priv, &op->req, type, run->ifname, &run->sb4, &run->sb6,
				     &run->host4, &run->host6);
	else
		r = gw_privchan_send(ctl->priv, &op->req, type, facts->ifname, &facts->sandbox4,
				     &facts->sandbox6, &facts->host4, &facts->host6);
	if (r) {
		free(op);
		return r;
	}
	op->ctl = ctl;
	op->type = type;
	op->c = c;
	op->run = run;
	op->uid = uid;
	if (run)
		run->refs++;
	if (c)
		c->waiting = op;
	return 0;
}

/* ask the parent to apply a run update for @c; Return: 0 or -errno */
static int priv_send(struct gw_ctlconn *c, enum gw_priv_type type, struct gw_run *run)
{
	return gw_ctlop_send(c->ctl, c, type, run, NULL, c->uid);
}

static void op_register(struct gw_ctlconn *c, const struct gw_ctl_req *req)
{
	char why[1200] = "";
	struct gw_run *run;
	int r;

	r = gw_run_register(c->ctl->runs, req, c->uid, why, sizeof(why));
	if (r) {
		gw_ctlconn_put_error(c, r, why[0] ? why : strerror(-r));
		return;
	}
	run = gw_run_find_id(c->ctl->runs, req->id);
	if (c->ctl->priv->manage_nft) {
		/* answered once the parent added the run's nft elements */
		r = priv_send(c, GW_PRIV_RUN_ADD, run);
		if (r) {
			gw_run_unregister(c->ctl->runs, run);
			snprintf(why, sizeof(why), "cannot reach the gateway's privileged side: %s",
				 strerror(-r));
			gw_ctlconn_put_error(c, r, why);
		}
		return;
	}
	gw_ctl_audit_run(c->ctl, run, "run.gateway-register", c->uid,
			 "registered with the gateway");
	put_registered(c, run);
}

static struct gw_run *own_run(struct gw_ctlconn *c, const char *id)
{
	struct gw_run *r = gw_run_find_id(c->ctl->runs, id);

	if (!r || !may_act(c, r)) {
		/* another user's run is reported as absent */
		gw_ctlconn_put_error(c, -ENOENT, "no such run");
		return NULL;
	}
	return r;
}

static void op_unregister(struct gw_ctlconn *c, const struct gw_ctl_req *req)
{
	struct gw_run *r = own_run(c, req->id);

	if (!r)
		return;
	/* what the nft table dropped of the run until now is its own, not "no run"'s */
	gw_udplog_drain(c->ctl->udp);
	/* a launcher's copy that lost lines says so before the run's last events */
	if (r->acct.stream)
		gw_ctlstream_notice(r->acct.stream_ctx);
	gw_ctl_audit_run(c->ctl, r, "run.gateway-unregister", c->uid,
			 "unregistered from the gateway");
	if (c->ctl->priv->manage_nft) {
		int ret;

		/* out of the table at once; answered once the parent removed its elements */
		r->refs++;
		gw_run_unregister(c->ctl->runs, r);
		ret = priv_send(c, GW_PRIV_RUN_DEL, r);
		if (ret) {
			char why[300];

			snprintf(why, sizeof(why),
				 "the run was unregistered, but its nft elements could not be "
				 "removed: %s",
				 strerror(-ret));
			gw_ctlconn_put_error(c, ret, why);
		}
		gw_run_put(c->ctl->runs, r);
		return;
	}
	gw_run_unregister(c->ctl->runs, r);
	gw_ctlconn_put_ok(c);
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
		gw_ctlconn_put_error(c, ret, why);
		return;
	}
	gw_ctl_audit_run(c->ctl, r, "run.policy-replace", c->uid, "allowlist replaced");
	/* what the run has open is decided again: the removed names' connections close */
	gw_run_policy_changed(c->ctl->runs, r);
	gw_ctlconn_put_ok(c);
}

json_t *gw_ctl_addr_json(const struct gw_addr *a)
{
	char t[INET6_ADDRSTRLEN];

	return a->family ? json_string(gw_addr_str(a, t, sizeof(t))) : json_null();
}

static void op_list(struct gw_ctlconn *c, const struct gw_ctl_req *req)
{
	json_t *runs = json_array();

	(void)req;
	/* the counters include the drops still queued on NFLOG (a run that just exited) and
	 * what the runs sent the DNS front: counted before it is reported */
	gw_udplog_drain(c->ctl->udp);
	gw_dns_drain(c->ctl->dns);
	for (struct gw_run *r = c->ctl->runs->list; r && runs; r = r->next) {
		if (!may_act(c, r))
			continue;
		json_array_append_new(
		    runs,
		    json_pack("{s:s, s:I, s:s, s:o, s:o, s:o, s:o, s:s, s:I, s:I, s:I, s:I, "
			      "s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}",
			      "id", r->id, "uid", (json_int_t)r->uid, "if", r->ifname, "host_v4",
			      gw_ctl_addr_json(&r->host4), "sandbox_v4", gw_ctl_addr_json(&r->sb4),
			      "host_v6", gw_ctl_addr_json(&r->host6), "sandbox_v6",
			      gw_ctl_addr_json(&r->sb6), "policy", r->policy_name, "connections",
			      (json_int_t)r->conns, "connections_total", (json_int_t)r->conns_total,
			      "denied", (json_int_t)r->acct.denied, "dns_queries",
			      (json_int_t)r->dns_queries, "bytes_up", (json_int_t)r->bytes_up,
			      "bytes_down", (json_int_t)r->bytes_down, "synthetic_names",
			      (json_int_t)r->synth.n, "udp_dropped",
			      (json_int_t)r->drops[GW_DROP_UDP].dropped, "host_dropped",
			      (json_int_t)r->drops[GW_DROP_HOST].dropped, "conns_dropped",
			      (json_int_t)r->drops[GW_DROP_CONNS].dropped, "dns_tcp",
			      (json_int_t)r->dnsconns, "buffered", (json_int_t)r->buffered,
			      "audit_bytes", (json_int_t)r->acct.audit_bytes, "dns_limited",
			      (json_int_t)r->dns_limited));
	}
	gw_ctlconn_put_json(c, json_pack("{s:b, s:o}", "ok", 1, "runs", runs));
}

/* how many control connections each uid holds: [{"uid": U, "connections": N}, ...] */
static json_t *ctl_users_json(const struct gw_ctl *ctl)
{
	json_t *by = json_object(), *a = json_array(), *v;
	const char *k;
	char key[16];

	for (const struct gw_ctlconn *o = ctl->conns; by && o; o = o->next) {
		snprintf(key, sizeof(key), "%u", (unsigned)o->uid);
		v = json_object_get(by, key);
		json_object_set_new(by, key, json_integer(v ? json_integer_value(v) + 1 : 1));
	}
	json_object_foreach(by, k, v)
	{
		if (a)
			json_array_append_new(a, json_pack("{s:I, s:I}", "uid",
							   (json_int_t)strtoul(k, NULL, 10),
							   "connections", json_integer_value(v)));
	}
	json_decref(by);
	return a ? a : json_null();
}

static void op_stats(struct gw_ctlconn *c, const struct gw_ctl_req *req)
{
	const struct gw_stats *s = &c->ctl->ev->stats;
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	json_t *j;

	(void)req;
	/* the worker's image as the kernel names it: " (deleted)" once an upgrade removed it */
	exe[n > 0 ? n : 0] = '\0';
	j = json_pack("{s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
		      "s:I, s:I, s:I, s:I, s:b, s:b}",
		      "ok", 1, "runs", (json_int_t)c->ctl->runs->n, "connections",
		      (json_int_t)c->ctl->runs->nconns, "accepted", (json_int_t)s->accepted,
		      "refused", (json_int_t)s->refused, "denied", (json_int_t)s->denied, "relayed",
		      (json_int_t)s->relayed, "dns_queries", (json_int_t)s->dns_queries, "emfile",
		      (json_int_t)s->emfile, "upstream_failed", (json_int_t)s->upstream_failed,
		      "audit_errors", (json_int_t)s->audit_errors, "audit_suppressed",
		      (json_int_t)s->audit_suppressed, "udp_dropped", (json_int_t)s->udp_dropped,
		      "udp_suppressed", (json_int_t)s->udp_suppressed, "nflog_lost",
		      (json_int_t)s->nflog_lost, "host_dropped", (json_int_t)s->host_dropped,
		      "conns_dropped", (json_int_t)s->conns_dropped, "nflog",
		      gw_udplog_active(c->ctl->udp), "manage_nft", c->ctl->priv->manage_nft);
	/* daemon mode's streams (ctlstream.c) and the users' DNS caps */
	if (j) {
		json_object_set_new(j, "stream_lost", json_integer((json_int_t)s->stream_lost));
		json_object_set_new(j, "dns_limited", json_integer((json_int_t)s->dns_limited));
	}
	/* the control socket's bounds and what it holds; root sees who holds them */
	if (j) {
		struct gw_ctl *ctl = c->ctl;

		json_object_set_new(j, "control_connections", json_integer(ctl->nconns));
		json_object_set_new(j, "control_max", json_integer(ctl->runs->ctl_max));
		json_object_set_new(j, "control_per_user", json_integer(ctl->runs->ctl_per_uid));
		json_object_set_new(j, "control_request_ms",
				    json_integer((json_int_t)(ctl->request_ns / 1000000)));
		json_object_set_new(j, "control_refused", json_integer((json_int_t)s->ctl_refused));
		json_object_set_new(j, "control_expired", json_integer((json_int_t)s->ctl_expired));
		if (c->uid == 0)
			json_object_set_new(j, "control_users", ctl_users_json(ctl));
	}
	if (j && exe[0])
		json_object_set_new(j, "worker", json_string(exe));
	gw_ctlconn_put_json(c, j);
}

/* the run's MCP tool calls in flight (its launcher's relay, at every change); the answer
 * has the denials per tool during calls so far */
static void op_mcp(struct gw_ctlconn *c, const struct gw_ctl_req *req)
{
	struct gw_run *r = own_run(c, req->id);
	json_t *den, *ans;

	if (!r)
		return;
	if (gw_toolcalls_set(&r->mcp, req->calls)) {
		gw_ctlconn_put_error(c, -ENOMEM, "out of memory");
		return;
	}
	den = gw_toolcalls_denials_json(&r->mcp);
	ans = den ? json_pack("{s:b, s:o}", "ok", 1, "denials", den) : NULL;
	/* the calls that just ended, with the denials during each (the relay's explanation) */
	if (ans && r->mcp.ended)
		json_object_set(ans, "ended", r->mcp.ended);
	gw_ctlconn_put_json(c, ans);
}

/* daemon mode: the launcher's child moved into the run's cgroup by the parent, asked on the
 * connection that holds the run (the parent checks the process: the run's user's, in the run's
 * namespace) */
static void op_cgroup_join(struct gw_ctlconn *c, const struct gw_ctl_req *req)
{
	struct gw_run *r = c->owned;
	char why[300];
	int ret;

	if (!r || r->dead || strcmp(r->id, req->id)) {
		gw_ctlconn_put_error(
		    c, -ENOENT,
		    "cgroup_join: only on the connection that registered the run (with "
		    "netns), while it holds it");
		return;
	}
	ret = gw_ctlop_send(c->ctl, c, GW_PRIV_CGROUP_JOIN, r, req, c->uid);
	if (ret) {
		snprintf(why, sizeof(why), "cannot reach the gateway's privileged side: %s",
			 strerror(-ret));
		gw_ctlconn_put_error(c, ret, why);
	}
}

/* what a learn-mode run reached: the run's own user (or root) only, like the other per-run ops */
static void op_learned(struct gw_ctlconn *c, const struct gw_ctl_req *req)
{
	struct gw_run *r = own_run(c, req->id);
	char why[200];
	json_t *a;

	if (!r)
		return;
	if (!r->learn) {
		snprintf(why, sizeof(why),
			 "run %s is not in learn mode (register it with \"learn\": true)", r->id);
		gw_ctlconn_put_error(c, -EINVAL, why);
		return;
	}
	a = gw_learn_json(&r->learned);
	if (!a) {
		gw_ctlconn_put_error(c, -ENOMEM, "out of memory");
		return;
	}
	gw_ctlconn_put_json(c, json_pack("{s:b, s:o, s:I}", "ok", 1, "learned", a, "dropped",
					 (json_int_t)r->learned.dropped));
}

/* network.ask: the run's pending asks (its launcher polls them; dnsask.c) */
static void op_asks(struct gw_ctlconn *c, const struct gw_ctl_req *req)
{
	struct gw_run *r = own_run(c, req->id);
	json_t *a;

	if (!r)
		return;
	a = gw_dns_asks_json(c->ctl->dns, r);
	if (!a) {
		gw_ctlconn_put_error(c, -ENOMEM, "out of memory");
		return;
	}
	gw_ctlconn_put_json(c, json_pack("{s:b, s:b, s:o}", "ok", 1, "asker", r->asker, "asks", a));
}

/* network.ask: a person's answer to one ask of the run (for "allow" the launcher replaced the
 * run's policy with the name added first) */
static void op_answer(struct gw_ctlconn *c, const struct gw_ctl_req *req)
{
	struct gw_run *r = own_run(c, req->id);
	char why[200];

	if (!r)
		return;
	if (gw_dns_ask_answer(c->ctl->dns, r, req->ask, req->allow, req->by)) {
		snprintf(why, sizeof(why),
			 "run %s has no ask %u pending (answered, or it timed out)", r->id,
			 req->ask);
		gw_ctlconn_put_error(c, -ENOENT, why);
		return;
	}
	gw_ctlconn_put_ok(c);
}

/* the parent answered @q (@rep), or the channel went away first (@rep NULL,
 * the gateway stops): answer its client */
static void op_done(struct gw_privreq *req, const struct gw_priv_reply *rep)
{
	struct ctl_op *q = (struct ctl_op *)req; /* its first member */
	struct gw_ctlconn *c = q->c;
	struct gw_run *run = q->run;
	struct gw_ctl *ctl = q->ctl;
	char why[400];

	if (!rep) {
		if (c)
			c->waiting = NULL;
		gw_run_put(ctl->runs, run);
		free(q);
		return;
	}
	if (q->type == GW_PRIV_RUN_ADD && run) {
		if (rep->status == 0 && !run->dead) {
			gw_ctl_audit_run(ctl, run, "run.gateway-register", q->uid,
					 "registered with the gateway (nft elements added)");
			if (c)
				put_registered(c, run);
		} else {
			if (!run->dead)
				gw_run_unregister(ctl->runs, run); /* roll back */
			snprintf(why, sizeof(why), "nft: %s",
				 rep->status ? rep->msg : "the run was unregistered meanwhile");
			if (c)
				gw_ctlconn_put_error(c, rep->status ? rep->status : -ENOENT, why);
		}
	} else if (q->type == GW_PRIV_CGROUP_JOIN) {
		if (c && rep->status == 0)
			gw_ctlconn_put_ok(c);
		else if (c)
			gw_ctlconn_put_error(c, rep->status, rep->msg);
	} else if (!c) {
		if (rep->status)
			wd_log(WD_LOG_WARN, "undoing the plumbing of a run on %s: %s",
			       run ? run->ifname : "?", rep->msg);
	} else {
		if (rep->status == 0) {
			gw_ctlconn_put_ok(c);
		} else {
			snprintf(why, sizeof(why),
				 "the run was unregistered, but its nft elements could not be "
				 "removed: %s",
				 rep->msg);
			gw_ctlconn_put_error(c, rep->status, why);
		}
	}
	gw_run_put(ctl->runs, run);
	if (c)
		gw_ctlconn_resume(c);
	free(q);
}

static void (*const handlers[GW_CTL_N])(struct gw_ctlconn *, const struct gw_ctl_req *) = {
    [GW_CTL_REGISTER] = op_register,
    [GW_CTL_UNREGISTER] = op_unregister,
    [GW_CTL_REPLACE] = op_replace,
    [GW_CTL_LIST] = op_list,
    [GW_CTL_STATS] = op_stats,
    [GW_CTL_MCP] = op_mcp,
    [GW_CTL_CGROUP_JOIN] = op_cgroup_join,
    [GW_CTL_LEARNED] = op_learned,
    [GW_CTL_ASKS] = op_asks,
    [GW_CTL_ANSWER] = op_answer,
};

void gw_ctlops_handle(struct gw_ctlconn *c, const struct gw_ctl_req *req)
{
	handlers[req->op](c, req);
}

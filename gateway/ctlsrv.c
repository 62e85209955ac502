/* ctlsrv.c - the control socket's server side: accept, SO_PEERCRED, read one
 * request per line (at most GW_CTL_MAX bytes), answer one JSON line. A uid
 * acts only on its own runs (root on all). A malformed request gets an error
 * line and the connection is closed. Operations are a const table.
 *
 * With --manage-nft (ctl->priv->manage_nft) a register or unregister has a
 * privileged side effect: the run's nft set elements. The worker parses and
 * validates the request itself, then sends the parent one fixed-size
 * struct gw_priv_run (privchan.c) and parks the control connection
 * (c->waiting: no further line of it is read) until the parent's reply comes
 * back; only then is the client answered. A register the parent refuses is
 * rolled back; an unregister takes the run out of the table first (its traffic
 * is refused at once) and then asks for its elements to be removed.
 *
 * A register with "netns" (an unprivileged launcher's, daemon mode) comes with the descriptor of
 * the run's network namespace (SCM_RIGHTS, exactly one, attached to the request's bytes). The
 * worker checks it (gw_netns_check(): a network namespace whose user namespace the client's uid
 * owns, never the host's), parses the policy (its limits go to the run's cgroup), and sends it
 * to the parent (struct gw_priv_netns) together with the client's connection, whose
 * credentials the parent reads itself (gw_priv_peer()), which makes the veth with its peer in
 * that namespace,
 * the addresses, routes, nft elements and the cgroup, and answers with the facts; only then is
 * the run entered in the table (gw_run_register(): one call, where the host's ceiling hooks)
 * and the client answered with its interface, addresses and cgroup folders. The connection
 * then holds the run: when it closes (the launcher is gone, even killed) the run is
 * unregistered and its plumbing undone.
 *
 * Bounds (issue 25): every member of the socket's group may connect, so a connection is
 * accepted only within the control socket's share of the worker's descriptors (gw_fd_share():
 * the relays' share is kept apart, control can never take it) and within its owner's share of
 * that (SO_PEERCRED's uid; a run held in daemon mode counts). One past either bound is told
 * why in one line and closed at once (stats: control_refused). A connection has
 * ctl->request_ns to send each whole request, counted from its accept or from the end of the
 * request before; a byte that comes does not move that deadline, so a line that never ends
 * (one byte now and then) is closed when it is due (control_expired). No deadline runs while
 * the parent works on a request (it is ours to answer) nor while a connection holds a run (it
 * lives as long as its launcher). */
#include "gateway/ctlsrv.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "policy/policy.h"

static bool may_act(const struct gw_ctlconn *c, const struct gw_run *r)
{
	return c->uid == 0 || c->uid == r->uid;
}

static void put_json(struct gw_ctlconn *c, json_t *j)
{
	char *s;

	/* the event lines this connection lost are told before its next answer */
	if (c->stream_lost)
		gw_ctlstream_notice(c);
	s = j ? json_dumps(j, JSON_COMPACT) : NULL;

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

/* a register's ok; under a ceiling with what it changed and the effective limits */
static void put_registered(struct gw_ctlconn *c, const struct gw_run *r)
{
	const struct wd_policy *p = r->policy;
	json_t *j, *v;

	if (!p || !p->bounded) {
		put_ok(c);
		return;
	}
	v = json_array();
	for (size_t i = 0; v && i < p->nnarrowed; i++)
		json_array_append_new(v, json_string(p->narrowed[i].msg));
	j = json_pack("{s:b, s:o, s:{s:I, s:I, s:I}}", "ok", 1, "narrowed", v, "limits",
		      "memory_mb", (json_int_t)p->limits.memory_mb, "pids",
		      (json_int_t)p->limits.pids, "timeout_s", (json_int_t)p->limits.timeout_s);
	put_json(c, j);
}

static void audit_run(struct gw_ctl *ctl, struct gw_run *r, const char *action, uid_t uid,
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
	gw_audit(ctl->audit, gw_run_acct(r), &ev);
}

/* a register or unregister waiting for the parent's answer */
struct ctl_op {
	struct gw_privreq req; /* first: the channel's handle */
	struct gw_ctl *ctl;
	enum gw_priv_type type;
	struct gw_ctlconn *c;	/* the client waiting (NULL once it went away, or none) */
	struct gw_run *run;	/* a reference to the run concerned (NULL: none) */
	uid_t uid;		/* who asked */
	struct gw_ctl_req creq; /* a register with netns: the request, kept until the reply */
};

static void op_done(struct gw_privreq *q, const struct gw_priv_reply *rep);

/* ask the parent to apply a run update (the facts of @run, else the given ones) for @c (NULL:
 * nobody waits for the answer), or to move @facts->pid into @run's cgroup (GW_PRIV_CGROUP_JOIN);
 * Return: 0 or -errno */
static int priv_op(struct gw_ctl *ctl, struct gw_ctlconn *c, enum gw_priv_type type,
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
	return priv_op(c->ctl, c, type, run, NULL, c->uid);
}

static void op_done_netns(struct gw_privreq *q, const struct gw_priv_netns_reply *rep);
static void release_owned(struct gw_ctlconn *c);

/* a register with "netns": the descriptor checked, the policy's limits read, the plumbing asked
 * of the parent (the run enters the table when it answered: op_done_netns()) */
static void op_register_netns(struct gw_ctlconn *c, const struct gw_ctl_req *req)
{
	struct gw_ctl *ctl = c->ctl;
	struct gw_priv_netns m;
	struct wd_policy *pol = NULL;
	struct policy_diags d;
	struct ctl_op *op = NULL;
	char why[400];
	int fd = c->netns_fd, r;

	c->netns_fd = -1; /* this request's; closed here whatever comes of it */
	if (fd < 0) {
		put_error(c, -EBADF,
			  "register with netns: no namespace descriptor came with the request "
			  "(SCM_RIGHTS)");
		return;
	}
	if (!ctl->priv->manage_nft) {
		put_error(c, -EOPNOTSUPP,
			  "this gateway does not plumb runs (start it as root with --manage-nft)");
		goto out;
	}
	if (c->owned) {
		snprintf(why, sizeof(why), "this connection holds run %s already: one run each",
			 c->owned->id);
		put_error(c, -EBUSY, why);
		goto out;
	}
	if (gw_run_find_id(ctl->runs, req->id)) {
		snprintf(why, sizeof(why), "run %s is already registered", req->id);
		put_error(c, -EEXIST, why);
		goto out;
	}
	/* the id names the run's cgroup folder */
	if (!gw_priv_id_ok(req->id)) {
		put_error(c, -EINVAL,
			  "register with netns: the run id must be letters, digits, '_', '.' and "
			  "'-', not starting with '.'");
		goto out;
	}
	r = gw_netns_check(fd, c->uid, why, sizeof(why));
	if (r) {
		put_error(c, r, why);
		goto out;
	}
	/* a policy that does not parse is refused before anything is plumbed */
	policy_diags_init(&d);
	r = policy_parse(req->policy, req->policy_len,
			 req->policy_name[0] ? req->policy_name : "policy", &pol, &d);
	policy_diags_free(&d);
	if (r) {
		put_error(c, r, "invalid policy (`warden policy check` says where)");
		goto out;
	}
	/* the cgroup's limits are the effective policy's: the host's ceiling lowers them (and
	 * sets those the policy leaves unset) before the parent writes them */
	r = gw_run_policy_bound(ctl->runs, c->uid, &pol, why, sizeof(why));
	if (r) {
		policy_free(pol);
		put_error(c, r, why);
		goto out;
	}
	memset(&m, 0, sizeof(m));
	m.uid = (uint32_t)c->uid;
	m.gid = (uint32_t)c->gid;
	snprintf(m.id, sizeof(m.id), "%s", req->id);
	m.memory_mb = pol->limits.memory_mb;
	m.pids = pol->limits.pids;
	m.cpu_milli = pol->limits.cpu_milli;
	policy_free(pol);
	op = calloc(1, sizeof(*op));
	if (!op) {
		put_error(c, -ENOMEM, "out of memory");
		goto out;
	}
	op->req.done_netns = op_done_netns;
	r = gw_privchan_send_netns(ctl->priv, &op->req, &m, fd, c->fd);
	if (r) {
		free(op);
		snprintf(why, sizeof(why), "cannot reach the gateway's privileged side: %s",
			 strerror(-r));
		put_error(c, r, why);
		goto out;
	}
	op->ctl = ctl;
	op->type = GW_PRIV_NETNS_ADD;
	op->c = c;
	op->uid = c->uid;
	/* the request is kept (its policy) until the parent answers */
	op->creq = *req;
	((struct gw_ctl_req *)req)->priv = NULL;
	c->waiting = op;
out:
	close(fd);
}

static void op_register(struct gw_ctlconn *c, const struct gw_ctl_req *req)
{
	char why[1200] = "";
	struct gw_run *run;
	int r;

	if (req->netns) {
		op_register_netns(c, req);
		return;
	}
	r = gw_run_register(c->ctl->runs, req, c->uid, why, sizeof(why));
	if (r) {
		put_error(c, r, why[0] ? why : strerror(-r));
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
			put_error(c, r, why);
		}
		return;
	}
	audit_run(c->ctl, run, "run.gateway-register", c->uid, "registered with the gateway");
	put_registered(c, run);
}

static struct gw_run *own_run(struct gw_ctlconn *c, const char *id)
{
	struct gw_run *r = gw_run_find_id(c->ctl->runs, id);

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
	/* what the nft table dropped of the run until now is its own, not "no run"'s */
	gw_udplog_drain(c->ctl->udp);
	/* a launcher's copy that lost lines says so before the run's last events */
	if (r->acct.stream)
		gw_ctlstream_notice(r->acct.stream_ctx);
	audit_run(c->ctl, r, "run.gateway-unregister", c->uid, "unregistered from the gateway");
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
			put_error(c, ret, why);
		}
		gw_run_put(c->ctl->runs, r);
		return;
	}
	gw_run_unregister(c->ctl->runs, r);
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
	audit_run(c->ctl, r, "run.policy-replace", c->uid, "allowlist replaced");
	/* what the run has open is decided again: the removed names' connections close */
	gw_run_policy_changed(c->ctl->runs, r);
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
			      addr_json(&r->host4), "sandbox_v4", addr_json(&r->sb4), "host_v6",
			      addr_json(&r->host6), "sandbox_v6", addr_json(&r->sb6), "policy",
			      r->policy_name, "connections", (json_int_t)r->conns,
			      "connections_total", (json_int_t)r->conns_total, "denied",
			      (json_int_t)r->acct.denied, "dns_queries", (json_int_t)r->dns_queries,
			      "bytes_up", (json_int_t)r->bytes_up, "bytes_down",
			      (json_int_t)r->bytes_down, "synthetic_names", (json_int_t)r->synth.n,
			      "udp_dropped", (json_int_t)r->drops[GW_DROP_UDP].dropped,
			      "host_dropped", (json_int_t)r->drops[GW_DROP_HOST].dropped,
			      "conns_dropped", (json_int_t)r->drops[GW_DROP_CONNS].dropped,
			      "dns_tcp", (json_int_t)r->dnsconns, "buffered",
			      (json_int_t)r->buffered, "audit_bytes",
			      (json_int_t)r->acct.audit_bytes, "dns_limited",
			      (json_int_t)r->dns_limited));
	}
	put_json(c, json_pack("{s:b, s:o}", "ok", 1, "runs", runs));
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
	put_json(c, j);
}

/* the run's MCP tool calls in flight (its launcher's relay, at every change); the answer
 * has the denials per tool during calls so far */
static void op_mcp(struct gw_ctlconn *c, const struct gw_ctl_req *req)
{
	struct gw_run *r = own_run(c, req->id);
	json_t *den;

	if (!r)
		return;
	if (gw_mcp_set(&r->mcp, req->calls)) {
		put_error(c, -ENOMEM, "out of memory");
		return;
	}
	den = gw_mcp_denials_json(&r->mcp);
	put_json(c, den ? json_pack("{s:b, s:o}", "ok", 1, "denials", den) : NULL);
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
		put_error(c, -ENOENT,
			  "cgroup_join: only on the connection that registered the run (with "
			  "netns), while it holds it");
		return;
	}
	ret = priv_op(c->ctl, c, GW_PRIV_CGROUP_JOIN, r, req, c->uid);
	if (ret) {
		snprintf(why, sizeof(why), "cannot reach the gateway's privileged side: %s",
			 strerror(-ret));
		put_error(c, ret, why);
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
		put_error(c, -EINVAL, why);
		return;
	}
	a = gw_learn_json(&r->learned);
	if (!a) {
		put_error(c, -ENOMEM, "out of memory");
		return;
	}
	put_json(c, json_pack("{s:b, s:o, s:I}", "ok", 1, "learned", a, "dropped",
			      (json_int_t)r->learned.dropped));
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
};

void gw_ctlconn_close(struct gw_ctlconn *c)
{
	struct gw_ctl *ctl = c->ctl;

	if (c->waiting)
		c->waiting->c = NULL; /* the parent's answer finds no client */
	c->closing = true;
	gw_ctlstream_detach(c);
	release_owned(c);
	wd_closep(&c->netns_fd);
	gw_disarm(ctl->ev, &c->timer);
	gw_ep_del(ctl->ev, c->fd);
	close(c->fd);
	ctl->nconns--;
	if (c->prev)
		c->prev->next = c->next;
	else
		ctl->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	wd_buf_free(&c->in);
	wd_buf_free(&c->out);
	free(c);
}

static void handle_lines(struct gw_ctlconn *c)
{
	char *nl;

	while (!c->closing && !c->waiting && c->in.len &&
	       (nl = memchr(c->in.data, '\n', c->in.len))) {
		size_t len = (size_t)(nl - c->in.data);
		struct gw_ctl_req req;
		char why[256];
		int r = gw_ctl_parse(c->in.data, len, &req, why, sizeof(why));

		if (r) {
			put_error(c, r, why);
			c->closing = true; /* malformed: this connection ends */
			return;
		}
		if (c->netns_fd >= 0 && !(req.op == GW_CTL_REGISTER && req.netns)) {
			put_error(c, -EBADMSG, "a descriptor came with a request that takes none");
			gw_ctl_req_clear(&req);
			c->closing = true;
			return;
		}
		handlers[req.op](c, &req);
		gw_ctl_req_clear(&req);
		memmove(c->in.data, nl + 1, c->in.len - len - 1);
		c->in.len -= len + 1;
		c->timed = false; /* read whole: the next request's time starts now */
	}
	if (!c->waiting && c->in.len > GW_CTL_MAX) {
		put_error(c, -E2BIG, "request too long");
		c->closing = true;
	}
}

/* the deadline of @c's request: set once when its time starts (the accept, the end of the
 * request before, the parent's answer), never moved by the bytes that come; none while the
 * parent works on a request or while @c holds a run (it lives as long as its launcher) */
static void ctl_deadline(struct gw_ctlconn *c)
{
	if (c->owned || c->waiting) {
		gw_disarm(c->ctl->ev, &c->timer);
		c->timed = false;
		return;
	}
	if (c->timed)
		return;
	gw_arm(c->ctl->ev, &c->timer, c->ctl->ev->now + c->ctl->request_ns);
	c->timed = true;
}

/* send what is queued, close when done and asked to, set the epoll interest */
static void ctl_output(struct gw_ctlconn *c)
{
	/* the events of what is answered reach the log before the answer */
	gw_audit_flush(c->ctl->ev);
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
	gw_ctlstream_sent(c);
	if (c->outoff == c->out.len) {
		wd_buf_reset(&c->out);
		c->outoff = 0;
		if (c->closing && !c->waiting) {
			gw_ctlconn_close(c);
			return;
		}
	}
	gw_ep_mod(c->ctl->ev, c->fd,
		  (c->closing || c->waiting ? 0 : EPOLLIN) | (c->out.len ? EPOLLOUT : 0),
		  GW_REF(GW_REF_CTL, c));
	ctl_deadline(c);
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
			audit_run(ctl, run, "run.gateway-register", q->uid,
				  "registered with the gateway (nft elements added)");
			if (c)
				put_registered(c, run);
		} else {
			if (!run->dead)
				gw_run_unregister(ctl->runs, run); /* roll back */
			snprintf(why, sizeof(why), "nft: %s",
				 rep->status ? rep->msg : "the run was unregistered meanwhile");
			if (c)
				put_error(c, rep->status ? rep->status : -ENOENT, why);
		}
	} else if (q->type == GW_PRIV_CGROUP_JOIN) {
		if (c && rep->status == 0)
			put_ok(c);
		else if (c)
			put_error(c, rep->status, rep->msg);
	} else if (!c) {
		if (rep->status)
			wd_log(WD_LOG_WARN, "undoing the plumbing of a run on %s: %s",
			       run ? run->ifname : "?", rep->msg);
	} else {
		if (rep->status == 0) {
			put_ok(c);
		} else {
			snprintf(why, sizeof(why),
				 "the run was unregistered, but its nft elements could not be "
				 "removed: %s",
				 rep->msg);
			put_error(c, rep->status, why);
		}
	}
	gw_run_put(ctl->runs, run);
	if (c) {
		c->waiting = NULL;
		handle_lines(c); /* the lines that came meanwhile */
		ctl_output(c);
	}
	free(q);
}

static void put_facts(struct gw_ctlconn *c, const struct gw_run *run,
		      const struct gw_priv_netns_reply *rep)
{
	json_t *cg = json_array();

	for (int i = 0; cg && i < GW_PRIV_CGROUPS; i++)
		if (rep->cgroup[i][0])
			json_array_append_new(cg, json_string(rep->cgroup[i]));
	put_json(c, json_pack("{s:b, s:s, s:o, s:o, s:o, s:o, s:o}", "ok", 1, "if", run->ifname,
			      "host_v4", addr_json(&run->host4), "sandbox_v4", addr_json(&run->sb4),
			      "host_v6", addr_json(&run->host6), "sandbox_v6", addr_json(&run->sb6),
			      "cgroups", cg ? cg : json_array()));
}

/* the parent plumbed a namespace (or refused to, or the channel went away: @rep NULL): the run
 * enters the table and the client is answered; a run that cannot be entered (its client went
 * away meanwhile, its policy is refused) has its plumbing undone */
static void op_done_netns(struct gw_privreq *req, const struct gw_priv_netns_reply *rep)
{
	struct ctl_op *q = (struct ctl_op *)req; /* its first member */
	struct gw_ctlconn *c = q->c;
	struct gw_ctl *ctl = q->ctl;
	struct gw_ctl_req *f = &q->creq;
	struct gw_run *run;
	char why[1200] = "";
	int r;

	if (!rep) {
		if (c)
			c->waiting = NULL;
		goto out;
	}
	if (rep->status) {
		if (c)
			put_error(c, rep->status, rep->msg);
		goto answered;
	}
	snprintf(f->ifname, sizeof(f->ifname), "%s", rep->ifname);
	if (rep->flags & GW_PRIV_HAS_V4) {
		f->sandbox4.family = f->host4.family = AF_INET;
		memcpy(f->sandbox4.a, rep->v4, 4);
		memcpy(f->host4.a, rep->h4, 4);
	}
	if (rep->flags & GW_PRIV_HAS_V6) {
		f->sandbox6.family = f->host6.family = AF_INET6;
		memcpy(f->sandbox6.a, rep->v6, 16);
		memcpy(f->host6.a, rep->h6, 16);
	}
	r = c ? gw_run_register(ctl->runs, f, q->uid, why, sizeof(why)) : -ECONNRESET;
	if (r) {
		/* undone by the parent; nobody waits for that answer */
		priv_op(ctl, NULL, GW_PRIV_RUN_DEL, NULL, f, q->uid);
		if (c)
			put_error(c, r, why[0] ? why : strerror(-r));
		goto answered;
	}
	run = gw_run_find_id(ctl->runs, f->id);
	run->acct.mode = "daemon"; /* a user's namespace, plumbed by this daemon */
	run->refs++;
	c->owned = run;
	gw_disarm(ctl->ev, &c->timer);
	c->timed = false;
	/* the answer first: a launcher reads it as the first line, event lines after it */
	put_facts(c, run, rep);
	if (f->stream)
		gw_ctlstream_attach(c, run);
	audit_run(ctl, run, "run.gateway-register", q->uid,
		  "registered with the gateway (its network namespace plumbed by the gateway)");
answered:
	if (c) {
		c->waiting = NULL;
		handle_lines(c);
		ctl_output(c);
	}
out:
	gw_ctl_req_clear(f);
	free(q);
}

/* @c goes: the run it holds leaves with it (its launcher is gone), plumbing undone */
static void release_owned(struct gw_ctlconn *c)
{
	struct gw_run *r = c->owned;

	c->owned = NULL;
	if (!r)
		return;
	if (!r->dead) {
		gw_udplog_drain(c->ctl->udp);
		audit_run(c->ctl, r, "run.gateway-unregister", c->uid,
			  "unregistered: the launcher's control connection closed");
		r->refs++;
		gw_run_unregister(c->ctl->runs, r);
		priv_op(c->ctl, NULL, GW_PRIV_RUN_DEL, r, NULL, c->uid);
		gw_run_put(c->ctl->runs, r);
	}
	gw_run_put(c->ctl->runs, r);
}

/* the descriptors that came with @mh: at most one, kept in c->netns_fd for the request being
 * read. Return: 0, or -EBADMSG (more than one, another kind of control data, truncated) */
static int take_fds(struct gw_ctlconn *c, struct msghdr *mh)
{
	int bad = (mh->msg_flags & MSG_CTRUNC) ? -EBADMSG : 0;

	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		size_t k;
		int *v;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS) {
			bad = -EBADMSG;
			continue;
		}
		k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		v = (int *)(void *)CMSG_DATA(cm);
		for (size_t i = 0; i < k; i++) {
			if (c->netns_fd < 0 && !bad) {
				c->netns_fd = v[i];
				continue;
			}
			close(v[i]);
			bad = -EBADMSG;
		}
	}
	return bad;
}

void gw_ctlconn_event(struct gw_ctlconn *c, unsigned events)
{
	char buf[65536];

	if ((events & EPOLLERR) || (c->waiting && (events & EPOLLHUP))) {
		gw_ctlconn_close(c); /* a parked request still completes, unanswered */
		return;
	}
	if (!c->closing && !c->waiting && (events & (EPOLLIN | EPOLLHUP))) {
		union {
			char b[CMSG_SPACE(sizeof(int) * 4)];
			struct cmsghdr align;
		} cbuf;
		struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
		struct msghdr mh = {.msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = cbuf.b,
				    .msg_controllen = sizeof(cbuf.b)};
		ssize_t n = recvmsg(c->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

		if (n >= 0 && take_fds(c, &mh)) {
			put_error(c, -EBADMSG,
				  "one namespace descriptor per register, and nothing else as "
				  "control data");
			c->closing = true;
		} else if (n == 0 || (n < 0 && errno != EAGAIN)) {
			c->closing = true;
		} else if (n > 0) {
			if (wd_buf_append(&c->in, buf, (size_t)n))
				c->closing = true;
			else
				handle_lines(c);
		}
	}
	ctl_output(c);
}

/* one JSON error line on a connection about to close, sent if its buffer takes it (a fresh or
 * idle connection's does) */
static void say_once(int fd, int code, const char *why)
{
	json_t *j = json_pack("{s:b, s:s, s:s}", "ok", 0, "error", why, "errno",
			      strerrorname_np(-code) ? strerrorname_np(-code) : "EINVAL");
	char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
	struct iovec iov[2] = {{s, s ? strlen(s) : 0}, {(void *)"\n", 1}};
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};

	if (s)
		(void)sendmsg(fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
	free(s);
	json_decref(j);
}

void gw_ctlconn_expired(struct gw_ctlconn *c)
{
	char why[160];

	c->ctl->ev->stats.ctl_expired++;
	if (!c->out.len) {
		snprintf(why, sizeof(why),
			 "request not whole within %llu ms (control.request_timeout_ms): closed",
			 (unsigned long long)(c->ctl->request_ns / 1000000));
		say_once(c->fd, -ETIMEDOUT, why);
	}
	gw_ctlconn_close(c);
}

/* the control connections @uid holds */
static unsigned uid_conns(const struct gw_ctl *ctl, uid_t uid)
{
	unsigned n = 0;

	for (const struct gw_ctlconn *o = ctl->conns; o; o = o->next)
		n += o->uid == uid;
	return n;
}

/* Refuse a connection past a bound: told why, closed at once, counted. Return: true refused */
static bool ctl_refuse(struct gw_ctl *ctl, int fd, uid_t uid)
{
	char why[300];
	unsigned held;

	if (ctl->nconns >= ctl->runs->ctl_max) {
		snprintf(why, sizeof(why),
			 "too many control connections: the gateway holds its bound of %u "
			 "(control.connections, within its descriptor limit); try again later",
			 ctl->runs->ctl_max);
		say_once(fd, -ENFILE, why);
	} else if ((held = uid_conns(ctl, uid)) >= ctl->runs->ctl_per_uid) {
		snprintf(why, sizeof(why),
			 "too many control connections: uid %u holds %u, its bound "
			 "(control.connections_per_user; each daemon-mode run holds one)",
			 (unsigned)uid, held);
		say_once(fd, -EUSERS, why);
	} else {
		return false;
	}
	ctl->ev->stats.ctl_refused++;
	close(fd);
	return true;
}

void gw_ctl_accept(struct gw_ctl *ctl, struct gw_listener *l)
{
	for (int i = 0; i < 16; i++) {
		struct ucred cred;
		socklen_t cl = sizeof(cred);
		int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct gw_ctlconn *c;

		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE) {
				ctl->ev->stats.emfile++;
				gw_pause_listener(l);
			}
			return;
		}
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0) {
			close(fd);
			continue;
		}
		if (ctl_refuse(ctl, fd, cred.uid))
			continue;
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->ctl = ctl;
		c->fd = fd;
		c->uid = cred.uid;
		c->gid = cred.gid;
		c->pid = cred.pid;
		c->netns_fd = -1;
		gw_timer_init(&c->timer, GW_T_CTLCONN, c);
		if (gw_ep_add(ctl->ev, fd, EPOLLIN, GW_REF(GW_REF_CTL, c))) {
			free(c);
			close(fd);
			continue;
		}
		c->next = ctl->conns;
		if (ctl->conns)
			ctl->conns->prev = c;
		ctl->conns = c;
		ctl->nconns++;
		/* the first request's time starts now */
		ctl_deadline(c);
	}
}

int gw_ctl_init(struct gw_ctl *ctl, struct gw_ev *ev, struct gw_runs *runs, struct gw_audit *audit,
		struct gw_dns *dns, struct gw_udplog *udp, struct gw_privchan *priv, int *fd,
		struct wd_err *err)
{
	int r;

	memset(ctl, 0, sizeof(*ctl));
	ctl->ev = ev;
	ctl->runs = runs;
	ctl->audit = audit;
	ctl->dns = dns;
	ctl->udp = udp;
	ctl->priv = priv;
	ctl->request_ns = (uint64_t)runs->lim->ctl_request_ms * 1000000ull;
	ctl->lis.fd = -1;
	r = gw_listener_add(ev, &ctl->lis, fd, GW_L_CTL, ctl);
	if (r)
		return wd_err_set(err, r, "epoll_ctl: %s", strerror(-r));
	return 0;
}

void gw_ctl_free(struct gw_ctl *ctl)
{
	struct gw_ctlconn *next;

	/* the next taken first: a closed connection is freed */
	for (struct gw_ctlconn *c = ctl->conns; c; c = next) {
		next = c->next;
		gw_ctlconn_close(c);
	}
	gw_listener_close(&ctl->lis);
}

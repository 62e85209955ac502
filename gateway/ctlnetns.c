/* ctlnetns.c - the control server's daemon mode: a register with "netns" (an unprivileged
 * launcher's) comes with the descriptor of the run's network namespace (SCM_RIGHTS, exactly one,
 * attached to the request's bytes). The worker checks it (gw_netns_check(): a network namespace
 * whose user namespace the client's uid owns, never the host's), parses the policy (its limits
 * go to the run's cgroup), and sends it to the parent (struct gw_priv_netns) together with the
 * client's connection, whose credentials the parent reads itself (gw_priv_peer()), which makes
 * the veth with its peer in that namespace, the addresses, routes, nft elements and the cgroup,
 * and answers with the facts; only then is the run entered in the table (gw_run_register(): one
 * call, where the host's ceiling hooks) and the client answered with its interface, addresses
 * and cgroup folders. The connection then holds the run: when it closes (the launcher is gone,
 * even killed) the run is unregistered and its plumbing undone (gw_ctlnetns_release()). */
#include "gateway/ctlsrv.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/policy.h"

static void op_done_netns(struct gw_privreq *q, const struct gw_priv_netns_reply *rep);

/* a register with "netns": the descriptor checked, the policy's limits read, the plumbing asked
 * of the parent (the run enters the table when it answered: op_done_netns()) */
void gw_ctlnetns_register(struct gw_ctlconn *c, const struct gw_ctl_req *req)
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
		gw_ctlconn_put_error(
		    c, -EBADF,
		    "register with netns: no namespace descriptor came with the request "
		    "(SCM_RIGHTS)");
		return;
	}
	if (!ctl->priv->manage_nft) {
		gw_ctlconn_put_error(
		    c, -EOPNOTSUPP,
		    "this gateway does not plumb runs (start it as root with --manage-nft)");
		goto out;
	}
	if (c->owned) {
		snprintf(why, sizeof(why), "this connection holds run %s already: one run each",
			 c->owned->id);
		gw_ctlconn_put_error(c, -EBUSY, why);
		goto out;
	}
	if (gw_run_find_id(ctl->runs, req->id)) {
		snprintf(why, sizeof(why), "run %s is already registered", req->id);
		gw_ctlconn_put_error(c, -EEXIST, why);
		goto out;
	}
	/* the id names the run's cgroup folder */
	if (!gw_priv_id_ok(req->id)) {
		gw_ctlconn_put_error(
		    c, -EINVAL,
		    "register with netns: the run id must be letters, digits, '_', '.' and "
		    "'-', not starting with '.'");
		goto out;
	}
	r = gw_netns_check(fd, c->uid, why, sizeof(why));
	if (r) {
		gw_ctlconn_put_error(c, r, why);
		goto out;
	}
	/* a policy that does not parse is refused before anything is plumbed */
	policy_diags_init(&d);
	r = policy_parse(req->policy, req->policy_len,
			 req->policy_name[0] ? req->policy_name : "policy", &pol, &d);
	policy_diags_free(&d);
	if (r) {
		gw_ctlconn_put_error(c, r, "invalid policy (`warden policy check` says where)");
		goto out;
	}
	/* the cgroup's limits are the effective policy's: the host's ceiling lowers them (and
	 * sets those the policy leaves unset) before the parent writes them */
	r = gw_run_policy_bound(ctl->runs, c->uid, &pol, why, sizeof(why));
	if (r) {
		policy_free(pol);
		gw_ctlconn_put_error(c, r, why);
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
		gw_ctlconn_put_error(c, -ENOMEM, "out of memory");
		goto out;
	}
	op->req.done_netns = op_done_netns;
	r = gw_privchan_send_netns(ctl->priv, &op->req, &m, fd, c->fd);
	if (r) {
		free(op);
		snprintf(why, sizeof(why), "cannot reach the gateway's privileged side: %s",
			 strerror(-r));
		gw_ctlconn_put_error(c, r, why);
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

static void put_facts(struct gw_ctlconn *c, const struct gw_run *run,
		      const struct gw_priv_netns_reply *rep)
{
	json_t *cg = json_array();

	for (int i = 0; cg && i < GW_PRIV_CGROUPS; i++)
		if (rep->cgroup[i][0])
			json_array_append_new(cg, json_string(rep->cgroup[i]));
	gw_ctlconn_put_json(c, json_pack("{s:b, s:s, s:o, s:o, s:o, s:o, s:o}", "ok", 1, "if",
					 run->ifname, "host_v4", gw_ctl_addr_json(&run->host4),
					 "sandbox_v4", gw_ctl_addr_json(&run->sb4), "host_v6",
					 gw_ctl_addr_json(&run->host6), "sandbox_v6",
					 gw_ctl_addr_json(&run->sb6), "cgroups",
					 cg ? cg : json_array()));
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
			gw_ctlconn_put_error(c, rep->status, rep->msg);
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
		gw_ctlop_send(ctl, NULL, GW_PRIV_RUN_DEL, NULL, f, q->uid);
		if (c)
			gw_ctlconn_put_error(c, r, why[0] ? why : strerror(-r));
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
	gw_ctl_audit_run(
	    ctl, run, "run.gateway-register", q->uid,
	    "registered with the gateway (its network namespace plumbed by the gateway)");
answered:
	if (c)
		gw_ctlconn_resume(c);
out:
	gw_ctl_req_clear(f);
	free(q);
}

/* @c goes: the run it holds leaves with it (its launcher is gone), plumbing undone */
void gw_ctlnetns_release(struct gw_ctlconn *c)
{
	struct gw_run *r = c->owned;

	c->owned = NULL;
	if (!r)
		return;
	if (!r->dead) {
		gw_udplog_drain(c->ctl->udp);
		gw_ctl_audit_run(c->ctl, r, "run.gateway-unregister", c->uid,
				 "unregistered: the launcher's control connection closed");
		r->refs++;
		gw_run_unregister(c->ctl->runs, r);
		gw_ctlop_send(c->ctl, NULL, GW_PRIV_RUN_DEL, r, NULL, c->uid);
		gw_run_put(c->ctl->runs, r);
	}
	gw_run_put(c->ctl->runs, r);
}

/* ctlsrv.c - the control socket's server, its top: the server (struct gw_ctl) over its listener,
 * and which file does what with a request. One request per line (ctl.c parses it), one JSON
 * line back; a malformed request gets an error line and the connection is closed. The parts,
 * bottom first:
 *   ctlstream.c  daemon mode's event stream on the connection that holds a run;
 *   ctlconn.c    the connections: accept within the bounds, SO_PEERCRED, reading, deadlines,
 *                answers, closing;
 *   ctlops.c     the operations table (register, unregister, replace, list, stats, mcp,
 *                cgroup_join, learned) and, with --manage-nft, the parent's answers to them;
 *   ctlnetns.c   daemon mode: a register with a network namespace, plumbed by the parent and
 *                held by its connection.
 * ctlconn.c reaches the two above it only through the hooks set here (gw_ctl_init()), so the
 * files call each other one way (tests/unit/gw_layers.py). */
#include "gateway/ctlsrv.h"

#include <string.h>

/* a whole request: a register with a namespace is daemon mode's, every other the table's */
static void handle(struct gw_ctlconn *c, const struct gw_ctl_req *req)
{
	if (req->op == GW_CTL_REGISTER && req->netns)
		gw_ctlnetns_register(c, req);
	else
		gw_ctlops_handle(c, req);
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
	ctl->handle = handle;
	ctl->release = gw_ctlnetns_release;
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
	gw_ctl_reap(ctl);
	gw_listener_close(&ctl->lis);
}

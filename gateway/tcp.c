/* tcp.c - the gateway's TCP listeners: accept on the transparent and proxy
 * ports, attribution of each connection to its run by the ingress address pair,
 * its original destination, the connection limits (a refusal is a reset and an
 * audit event), and the connections whose bounded share of relaying left bytes
 * to move (served again before the loop sleeps). */
#include "gateway/gw_internal.h"

#include <errno.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6/ip6_tables.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

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
	struct gw_run *run;
	struct gw_conn *c;

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
	gw_conn_start(c);
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
			gw_conn_relay(c);
	}
	return g->again != NULL;
}

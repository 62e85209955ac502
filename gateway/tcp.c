/* tcp.c - the gateway's TCP path, its top: the listeners, accept on the transparent and proxy
 * ports, attribution of each connection to its run by the ingress address pair, its original
 * destination, the connection limits and the descriptor room (a refusal is a reset and an
 * audit event), and the connections whose bounded share of relaying left bytes to move
 * (served again before the loop sleeps). */
#include "gateway/tcp.h"
#include "gateway/sock.h"

#include <errno.h>
#ifdef __linux__
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter_ipv6/ip6_tables.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void refuse(struct gw_tcp *t, int fd, struct gw_run *run, const struct gw_addr *local,
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

	gw_new_denial_id(t->ev, id, sizeof(id));
	snprintf(resource, sizeof(resource), "%s -> %s", gw_addr_str(peer, p, sizeof(p)),
		 gw_addr_str(local, l, sizeof(l)));
	ev.dst = l;
	t->ev->stats.refused++;
	gw_audit_denial(t->audit, gw_run_acct(run), &ev);
	gw_sock_setopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	gw_sock_close(fd);
}

/* where a redirected connection was going (nftables' redirect keeps it); other systems
 * redirect nothing to a gateway (proxy mode), so nothing has one there */
static int original_dst(int fd, int family, struct gw_addr *a, uint16_t *port)
{
#ifndef __linux__
	(void)fd;
	(void)family;
	(void)a;
	(void)port;
	return -ENOTSUP;
#else
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int r;

	if (family == AF_INET)
		r = gw_sock_getopt(fd, SOL_IP, SO_ORIGINAL_DST, &ss, &len);
	else
		r = gw_sock_getopt(fd, SOL_IPV6, IP6T_SO_ORIGINAL_DST, &ss, &len);
	if (r < 0)
		return -errno;
	return gw_addr_from_sa(&ss, a, port);
#endif
}

static void accept_one(struct gw_tcp *t, struct gw_listener *l, int fd,
		       const struct sockaddr_storage *pss, bool full)
{
	struct sockaddr_storage lss;
	socklen_t ll = sizeof(lss);
	struct gw_addr local, peer, orig = {0};
	uint16_t lport = 0, oport = 0;
	struct gw_run *run;
	struct gw_conn *c;
	char whybuf[400];
	const char *why;

	t->ev->stats.accepted++;
	if (gw_sock_name(fd, (struct sockaddr *)&lss, &ll) < 0 ||
	    gw_addr_from_sa(&lss, &local, &lport) || gw_addr_from_sa(pss, &peer, NULL)) {
		gw_sock_close(fd);
		return;
	}
	run = gw_run_find_ingress(t->runs, &local, &peer);
	if (!run) {
		refuse(t, fd, NULL, &local, &peer, lport, "no run owns this ingress address pair");
		return;
	}
	if (l->kind == GW_L_TRANSPARENT) {
		if (original_dst(fd, local.family, &orig, &oport)) {
			refuse(t, fd, run, &local, &peer, lport,
			       "no original destination (not redirected)");
			return;
		}
	} else {
		orig = local;
		oport = lport;
	}
	why = full ? gw_runs_room_refusal(t->runs, "", whybuf, sizeof(whybuf))
		   : gw_runs_conn_refusal(t->runs, run, "", whybuf, sizeof(whybuf));
	if (why) {
		refuse(t, fd, run, &orig, &peer, oport, why);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		gw_sock_close(fd);
		return;
	}
	c->t = t;
	c->run = run;
	gw_runs_conn_open(t->runs, run);
	run->conns_total++;
	c->next = t->conns;
	if (t->conns)
		t->conns->prev = c;
	t->conns = c;
	c->cfd = fd;
	c->ufd = -1;
	c->c2u.pipe[0] = c->c2u.pipe[1] = c->u2c.pipe[0] = c->u2c.pipe[1] = -1;
	/* the run's byte counts grow as bytes pass, not when the connection closes: a run that
	 * ends while a server still holds its connection open is asked for them before that */
	c->c2u.total = &run->bytes_up;
	c->u2c.total = &run->bytes_down;
	c->kind = l->kind == GW_L_PROXY ? GW_K_PROXY : GW_K_TRANSPARENT;
	c->orig = orig;
	c->oport = oport;
	c->peer = peer;
	c->budget = -1;
	c->proto = "tcp";
	c->start_ns = c->last_ns = t->ev->now;
	gw_timer_init(&c->timer, GW_T_CONN, c);
	c->cr.wr = true; /* just accepted: its send buffer is empty */
	/* registered once, edge-triggered, for both ways (see the top of the file) */
	if (gw_ev_add(t->ev, fd, GW_EP_EVENTS, GW_REF(GW_REF_CLIENT, c))) {
		gw_conn_close(c, "epoll_ctl failed");
		return;
	}
	gw_conn_start(c);
}

void gw_tcp_accept(struct gw_tcp *t, struct gw_listener *l)
{
	for (int i = 0; i < 64; i++) {
		struct sockaddr_storage peer;
		socklen_t pl = sizeof(peer);
		bool full;
		int fd = gw_listener_accept(l, gw_runs_room(t->runs), &full, &peer, &pl);

		if (fd == -EINTR)
			continue;
		if (fd < 0)
			return;
		accept_one(t, l, fd, &peer, full);
	}
}

bool gw_conn_again(struct gw_tcp *t)
{
	struct gw_conn *list = t->again;

	t->again = NULL;
	while (list) {
		struct gw_conn *c = list;

		list = c->again;
		c->again = NULL;
		c->queued = false;
		if (c->st == GW_C_RELAY)
			gw_conn_relay(c);
	}
	/* gw_conn_relay() queues a connection with more on c->t->again, which is t->again */
	// cppcheck-suppress knownConditionTrueFalse ; it cannot see that (above)
	return t->again != NULL;
}

int gw_tcp_init(struct gw_tcp *t, struct gw_ev *ev, struct gw_runs *runs, struct gw_resolver *res,
		struct gw_audit *audit, const struct gw_limits *lim, int transparent[2],
		int proxy[2], struct wd_err *err)
{
	int r = 0;

	memset(t, 0, sizeof(*t));
	t->ev = ev;
	t->runs = runs;
	t->res = res;
	t->audit = audit;
	t->lim = lim;
	for (int i = 0; i < 4; i++)
		t->lis[i].fd = -1;
	t->hello = malloc(sizeof(*t->hello));
	if (!t->hello || gw_pool_init(&t->pool))
		return wd_err_set(err, -ENOMEM, "out of memory");
	t->pool.max_pipes = runs->fd_pipes; /* the pipes' share of the descriptors */
	for (int i = 0; i < 2 && !r; i++) {
		r = gw_listener_add(ev, &t->lis[i], &transparent[i], GW_L_TRANSPARENT, t);
		r = r ? r : gw_listener_add(ev, &t->lis[2 + i], &proxy[i], GW_L_PROXY, t);
	}
	if (r)
		return wd_err_set(err, r, "epoll_ctl: %s", strerror(-r));
	return 0;
}

void gw_tcp_free(struct gw_tcp *t)
{
	while (t->conns)
		gw_conn_close(t->conns, "gateway stopping");
	gw_conn_reap(t);
	for (int i = 0; i < 4; i++)
		gw_listener_close(&t->lis[i]);
	gw_pool_free(&t->pool);
	free(t->hello);
	t->hello = NULL;
}

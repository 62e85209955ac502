/* gw.c - the top of the gateway worker: it composes the components, hands
 * each epoll event and timer to its owner, and runs the loop. It is the only
 * file that knows them all; they know only what lies below them (see
 * docs/gateway-house.md for the arrows).
 *
 * Theory of operation: gw_serve() waits for the earliest of (an fd event, the
 * first timer, c-ares' next timeout), stamps the clock, dispatches each event by
 * its reference type, fires due timers, lets c-ares process its timeouts, serves
 * the TCP connections whose bounded share of work left bytes to move (their
 * sockets are edge-triggered, no new event comes for them; the next wait then
 * only polls), frees connections closed during this round (they are parked on a
 * zombie list so that a later event of the same batch never touches freed
 * memory), and writes the round's queued audit events.
 *
 * Components, bottom to top: ev (the loop's services), audit (rate limits,
 * budgets, summaries), runs (the run table), resolver (c-ares, the name cache),
 * tcp and dns (the data plane), udplog (NFLOG), privchan (the parent channel),
 * ctl (the control socket). Each is initialised after what it uses and freed
 * before it.
 */
#include "gateway/gw.h"
#include "gateway/auditrl.h"
#include "gateway/ctlsrv.h"
#include "gateway/dns.h"
#include "gateway/ev.h"
#include "gateway/privchan.h"
#include "gateway/resolve.h"
#include "gateway/run.h"
#include "gateway/tcp.h"
#include "gateway/udplog.h"
#include "gateway/udprelay.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/**
 * struct gw - the worker: its configuration and every component
 * @conf:	the configuration (a copy)
 * @lim:	the limits it asks for
 * @ev:		the loop's services
 * @audit:	the audit front
 * @runs:	the run table
 * @res:	the resolver
 * @tcp:	the TCP path
 * @dns:	the DNS front
 * @udp:	the NFLOG reader
 * @priv:	the channel to the privileged parent
 * @ctl:	the control server
 * @up:		the components whose init was entered (GW_UP_*): gw_free() frees those
 */
struct gw {
	struct wd_gwconf conf;
	struct gw_limits lim;
	struct gw_ev ev;
	struct gw_audit audit;
	struct gw_runs runs;
	struct gw_resolver res;
	struct gw_tcp tcp;
	struct gw_dns dns;
	struct gw_udplog udp;
	struct gw_udprelay relay;
	struct gw_privchan priv;
	struct gw_ctl ctl;
	unsigned up;
};

enum {
	GW_UP_EV = 1u << 0,
	GW_UP_RUNS = 1u << 1,
	GW_UP_RES = 1u << 2,
	GW_UP_TCP = 1u << 3,
	GW_UP_DNS = 1u << 4,
	GW_UP_UDP = 1u << 5,
	GW_UP_CTL = 1u << 6,
	GW_UP_RELAY = 1u << 7,
};

void gw_limits_from_conf(const struct wd_gwconf *conf, struct gw_limits *l)
{
	l->conns_total = conf->max_conns;
	l->conns_per_run = conf->max_conns_per_run;
	l->peek_ms = conf->peek_timeout_ms;
	l->connect_ms = conf->connect_timeout_ms;
	l->idle_ms = conf->idle_timeout_s * 1000u;
	l->ttl_floor = conf->dns_ttl_floor_s;
	l->ttl_ceil = conf->dns_ttl_ceiling_s;
	l->synth_per_run = 65536;
	l->audit_bytes = (uint64_t)conf->audit_kib_per_run * 1024;
	l->sockbuf = (int)conf->socket_buffer_kib * 1024;
	l->run_buffer = (uint64_t)conf->run_buffer_kib * 1024;
	l->ctl_total = conf->ctl_conns;
	l->ctl_per_uid = conf->ctl_conns_per_user;
	l->ctl_request_ms = conf->ctl_request_ms;
}

/* a run leaves the table: the NFLOG reader writes its pending summaries */
static void run_ended(void *ctx, struct gw_run *r)
{
	gw_udplog_run_end(ctx, r);
}

/* the run table's policy hook: a replaced policy closes what it no longer allows */
static void policy_replaced(void *ctx, struct gw_run *r)
{
	gw_tcp_revoke(ctx, r);
}

/* SIGTERM/SIGINT end the loop when the caller has blocked them; on Windows, which has no
 * signal mask, always: the console's control events stand in for them (poll_wsapoll.c) */
static void watch_signals(struct gw *g)
{
#ifdef _WIN32
	(void)gw_poller_signals(&g->ev.poll, GW_REF(GW_REF_SIGNAL, NULL));
#else
	sigset_t mask;

	sigemptyset(&mask);
	if (sigprocmask(SIG_BLOCK, NULL, &mask) || !sigismember(&mask, SIGTERM))
		return;
	(void)gw_poller_signals(&g->ev.poll, GW_REF(GW_REF_SIGNAL, NULL));
#endif
}

int gw_new(const struct wd_gwconf *conf, struct gw_fds *fds, struct audit_log *log, struct gw **ret,
	   struct wd_err *err)
{
	struct gw *g = calloc(1, sizeof(*g));
	int r;

	if (!g) {
		gw_fds_close(fds);
		return wd_err_set(err, -ENOMEM, "out of memory");
	}
	g->conf = *conf;
	gw_limits_from_conf(conf, &g->lim);
	/* each component is marked before its init, which first makes it
	 * freeable: gw_free() then releases exactly what was taken */
	g->up = GW_UP_EV;
	r = gw_ev_init(&g->ev, log, err);
	if (r)
		goto fail;
	gw_audit_init(&g->audit, &g->ev, g->lim.audit_bytes);
	gw_privchan_init(&g->priv, &g->ev);
	g->up |= GW_UP_RUNS;
	r = gw_runs_init(&g->runs, &g->ev, &g->audit, &g->conf, &g->lim, err);
	if (r)
		goto fail;
	g->runs.on_end = run_ended;
	g->runs.on_end_ctx = &g->udp;
	g->runs.on_policy = policy_replaced;
	g->runs.on_policy_ctx = &g->tcp;
	g->up |= GW_UP_TCP;
	r = gw_tcp_init(&g->tcp, &g->ev, &g->runs, &g->res, &g->audit, &g->lim, fds->transparent,
			fds->proxy, err);
	if (r)
		goto fail;
	g->up |= GW_UP_DNS;
	r = gw_dns_init(&g->dns, &g->ev, &g->runs, &g->res, &g->audit, &g->lim, fds->dns_udp,
			fds->dns_tcp, err);
	if (r)
		goto fail;
	/* network.ask: proxy requests held by the DNS front's asks (conn.c, dnsask.c) */
	g->tcp.dns = &g->dns;
	g->dns.conn_answer = gw_conn_ask_answer;
	g->up |= GW_UP_CTL;
	r = gw_ctl_init(&g->ctl, &g->ev, &g->runs, &g->audit, &g->dns, &g->udp, &g->priv, &fds->ctl,
			err);
	if (r)
		goto fail;
	g->up |= GW_UP_UDP;
	r = gw_udplog_init(&g->udp, &g->ev, &g->runs, &g->audit, &g->conf, &fds->nflog);
	if (r) {
		wd_err_set(err, r, "epoll_ctl: %s", strerror(-r));
		goto fail;
	}
	g->up |= GW_UP_RELAY;
	r = gw_udprelay_init(&g->relay, &g->ev, &g->runs, &g->res, &g->audit, &g->priv,
			     g->conf.udp_idle_timeout_s, fds->udp, &fds->ct);
	if (r) {
		wd_err_set(err, r, "the UDP relay's listeners: %s", strerror(-r));
		goto fail;
	}
	watch_signals(g);
	g->up |= GW_UP_RES;
	r = gw_resolver_init(&g->res, &g->ev, &g->conf, &g->lim, err);
	if (r)
		goto fail;
	gw_fds_close(fds);
	*ret = g;
	return 0;
fail:
	gw_fds_close(fds);
	gw_free(g);
	return r ? r : -EINVAL;
}

int gw_set_parent(struct gw *g, int fd, bool manage_nft)
{
	return gw_privchan_open(&g->priv, fd, manage_nft);
}

int gw_register_boot(struct gw *g, const struct gw_ctl_req *req, uid_t uid, char *why,
		     size_t why_size)
{
	struct gw_run *run;
	int r;

	if (g->conf.mode != WD_GW_PROXY || g->priv.fd >= 0 || req->op != GW_CTL_REGISTER) {
		snprintf(why, why_size,
			 "a run is registered at start only by a proxy-mode gateway "
			 "of its own, from a register request");
		return -EINVAL;
	}
	r = gw_run_register(&g->runs, req, uid, why, why_size);
	if (r)
		return r;
	run = gw_run_find_id(&g->runs, req->id);
	gw_ctl_audit_run(&g->ctl, run, "run.gateway-register", uid,
			 "registered at the gateway's start (--run)");
	return 0;
}

int gw_run_counts(struct gw *g, const char *id, uint64_t ret[3])
{
	struct gw_run *r = gw_run_find_id(&g->runs, id);

	if (!r)
		return -ENOENT;
	ret[0] = r->acct.denied;
	ret[1] = r->bytes_up;
	ret[2] = r->bytes_down;
	return 0;
}

void gw_stop(struct gw *g)
{
	g->ev.stop = 1;
}

static void fire_timer(struct gw *g, struct gw_timer *t)
{
	switch ((enum gw_timer_kind)t->kind) {
	case GW_T_CONN:
		gw_conn_timeout(t->owner);
		break;
	case GW_T_RESUME:
		gw_resume_listener(t->owner);
		break;
	case GW_T_DNSCONN:
		gw_dnsconn_timeout(t->owner);
		break;
	case GW_T_CTLCONN:
		gw_ctlconn_expired(t->owner);
		break;
	case GW_T_UDPLOG:
		gw_udplog_flush(t->owner);
		break;
	case GW_T_FLOOD:
		gw_runs_audit_summaries(&g->runs); /* every run's, then no run's */
		break;
	case GW_T_ASK:
		gw_dns_ask_expired(t->owner);
		break;
	case GW_T_UDPRELAY:
		gw_udprelay_sweep(t->owner);
		break;
	}
}

static void listener_event(struct gw_listener *l)
{
	switch (l->kind) {
	case GW_L_TRANSPARENT:
	case GW_L_PROXY:
		gw_tcp_accept(l->owner, l);
		break;
	case GW_L_DNS_UDP:
		gw_dns_udp_ready(l->owner, l);
		break;
	case GW_L_DNS_TCP:
		gw_dns_tcp_accept(l->owner, l);
		break;
	case GW_L_CTL:
		gw_ctl_accept(l->owner, l);
		break;
	case GW_L_UDP:
		gw_udprelay_ready(l->owner, l);
		break;
	}
}

static void dispatch(struct gw *g, const struct gw_poll_event *ev)
{
	void *p = GW_REF_PTR(ev->ref);

	switch (GW_REF_TYPE(ev->ref)) {
	case GW_REF_LISTEN:
		listener_event(p);
		break;
	case GW_REF_CLIENT:
		gw_conn_event(p, false, ev->events);
		break;
	case GW_REF_UP:
		gw_conn_event(p, true, ev->events);
		break;
	case GW_REF_DNS_TCP:
		gw_dnsconn_event(p, ev->events);
		break;
	case GW_REF_CTL:
		gw_ctlconn_event(p, ev->events);
		break;
	case GW_REF_ARES:
		gw_resolver_event(&g->res, (int)(ev->ref & 0xffffffffu), ev->events);
		break;
	case GW_REF_NFLOG:
		gw_udplog_event(&g->udp);
		break;
	case GW_REF_PRIV:
		gw_privchan_event(&g->priv, ev->events);
		break;
	case GW_REF_UDP_UP:
		gw_udprelay_up_event(p, ev->events);
		break;
	case GW_REF_SIGNAL:
		if (gw_poller_signal_take(&g->ev.poll))
			g->ev.stop = 1;
		break;
	}
}

int gw_serve(struct gw *g)
{
	struct gw_poll_event evs[256];

	while (!g->ev.stop) {
		struct gw_timer *t;
		int n = gw_ev_wait(&g->ev, evs, (int)WD_ARRAY_SIZE(evs), gw_resolver_next(&g->res),
				   g->tcp.again != NULL);

		if (n == -EINTR)
			continue;
		if (n < 0)
			return n;
		for (int i = 0; i < n; i++)
			dispatch(g, &evs[i]);
		while ((t = gw_timer_expired(&g->ev.timers, g->ev.now)))
			fire_timer(g, t);
		gw_resolver_timeouts(&g->res);
		gw_conn_again(&g->tcp);
		gw_conn_reap(&g->tcp);
		gw_ctl_reap(&g->ctl);
		gw_audit_flush(&g->ev);
	}
	return g->ev.fatal;
}

void gw_free(struct gw *g)
{
	if (!g)
		return;
	/* in the order the single loop freed them: the connections first, the
	 * resolver (its pending answers let go of their runs), the parent's
	 * requests, the runs (their ends written), then the summaries; the UDP flows before
	 * all (their resolver waits cancelled, their closing events written) */
	if (g->up & GW_UP_RELAY)
		gw_udprelay_free(&g->relay);
	if (g->up & GW_UP_TCP)
		gw_tcp_free(&g->tcp);
	if (g->up & GW_UP_DNS)
		gw_dns_free(&g->dns);
	if (g->up & GW_UP_CTL)
		gw_ctl_free(&g->ctl);
	if (g->up & GW_UP_RES)
		gw_resolver_free(&g->res);
	if (g->up & GW_UP_RUNS) {
		gw_privchan_free(&g->priv);
		gw_runs_free(&g->runs);
	}
	if (g->up & GW_UP_UDP)
		gw_udplog_free(&g->udp);
	if (g->up & GW_UP_RUNS)
		gw_audit_free(&g->audit);
	if (g->up & GW_UP_EV)
		gw_ev_free(&g->ev);
	free(g);
}

/* loop.c - the gateway worker's event loop: one epoll instance, typed
 * references in epoll_data, `switch` dispatch, a timer heap, c-ares joined to
 * the same loop, the clock read once per wake-up, and the audit events of a
 * round written in one batch before the loop waits again.
 *
 * Theory of operation: gw_run_loop() waits for the earliest of (an fd event,
 * the first timer, c-ares' next timeout), stamps g->now, dispatches each
 * event by its reference type, fires due timers, lets c-ares process its
 * timeouts, serves the connections whose bounded share of work left bytes
 * to move (g->again: their sockets are edge-triggered, no new event comes for
 * them; the next wait then only polls), frees connections closed during this round (they
 * are parked on a zombie list so that a later event of the same batch never
 * touches freed memory), and writes the round's queued audit events.
 */
#include "gateway/gw_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <unistd.h>

int gw_ep_add(struct gw *g, int fd, unsigned events, uint64_t ref)
{
	struct epoll_event ev = {.events = events, .data.u64 = ref};

	return epoll_ctl(g->ep, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

int gw_ep_mod(struct gw *g, int fd, unsigned events, uint64_t ref)
{
	struct epoll_event ev = {.events = events, .data.u64 = ref};

	return epoll_ctl(g->ep, EPOLL_CTL_MOD, fd, &ev) ? -errno : 0;
}

void gw_ep_del(struct gw *g, int fd)
{
	if (fd >= 0)
		epoll_ctl(g->ep, EPOLL_CTL_DEL, fd, NULL);
}

void gw_arm(struct gw *g, struct gw_timer *t, uint64_t when)
{
	/* On ENOMEM the timer stays as it was; the owner's other deadline
	 * (or the idle check) still ends it. */
	(void)gw_timer_arm(&g->timers, t, when);
}

void gw_audit_flush(struct gw *g)
{
	size_t n;

	if (!g->log || !(n = audit_log_pending(g->log)))
		return;
	if (audit_log_flush(g->log, NULL) < 0)
		g->stats.audit_errors += n;
}

void gw_new_denial_id(struct gw *g, char *out, size_t size)
{
	uint64_t r = gw_rng_next(&g->rng);

	snprintf(out, size, "dn-%012llx", (unsigned long long)(r >> 16));
}

void gw_pause_listener(struct gw_listener *l)
{
	struct gw *g = l->g;

	if (l->paused)
		return;
	l->paused = true;
	gw_ep_mod(g, l->fd, 0, GW_REF(GW_REF_LISTEN, l));
	gw_arm(g, &l->resume, g->now + 100000000ull);
}

static void resume_listener(struct gw_listener *l)
{
	l->paused = false;
	gw_ep_mod(l->g, l->fd, EPOLLIN, GW_REF(GW_REF_LISTEN, l));
}

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
}

static int add_listener(struct gw *g, int *fd, enum gw_listener_kind kind)
{
	struct gw_listener *l;
	int ret;

	if (*fd < 0)
		return 0;
	l = &g->lis[g->nlis++];
	l->g = g;
	l->fd = *fd;
	*fd = -1;
	l->kind = kind;
	gw_timer_init(&l->resume, GW_T_RESUME, l);
	ret = gw_ep_add(g, l->fd, EPOLLIN, GW_REF(GW_REF_LISTEN, l));
	return ret;
}

int gw_new(const struct wd_gwconf *conf, struct gw_fds *fds, struct audit_log *log, struct gw **ret,
	   struct wd_err *err)
{
	const char *pools[4] = {conf->pool_v4, conf->pool_v6, conf->synth_v4, conf->synth_v6};
	struct gw *g = calloc(1, sizeof(*g));
	uint64_t seed = 0;
	sigset_t mask;
	int r = 0;

	if (!g) {
		gw_fds_close(fds);
		return wd_err_set(err, -ENOMEM, "out of memory");
	}
	g->conf = *conf;
	gw_limits_from_conf(conf, &g->lim);
	g->log = log;
	g->sigfd = -1;
	g->nflog_fd = -1;
	g->priv_fd = -1;
	gw_timer_init(&g->udp_timer, GW_T_UDPLOG, g);
	gw_timer_init(&g->flood_timer, GW_T_FLOOD, g);
	if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		seed = wd_mono_ns() ^ (uint64_t)getpid();
	gw_rng_seed(&g->rng, seed);
	for (int i = 0; i < 4; i++)
		if (gw_cidr_parse(pools[i], &g->own_net[i], &g->own_prefix[i])) {
			r = wd_err_set(err, -EINVAL, "bad pool %s", pools[i]);
			goto fail;
		}
	{
		/* each relayed connection may hold 6 descriptors (2 sockets, 2
		 * pipes); keep 32 for listeners, DNS, control and c-ares */
		struct rlimit rl;

		g->fd_conns = g->lim.conns_total;
		if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY) {
			uint64_t room = rl.rlim_cur > 38 ? (rl.rlim_cur - 32) / 6 : 1;

			if (room < g->fd_conns)
				g->fd_conns = (unsigned)room;
		}
	}
	g->ep = epoll_create1(EPOLL_CLOEXEC);
	if (g->ep < 0) {
		r = wd_err_set(err, -errno, "epoll_create1: %s", strerror(errno));
		goto fail;
	}
	g->hello = malloc(sizeof(*g->hello));
	if (!g->hello || gw_pool_init(&g->pool)) {
		r = wd_err_set(err, -ENOMEM, "out of memory");
		goto fail;
	}
	r = gw_cache_init(&g->cache, 65536, g->lim.ttl_floor, g->lim.ttl_ceil);
	if (r) {
		wd_err_set(err, r, "name cache: %s", strerror(-r));
		goto fail;
	}
	for (int i = 0; i < 2; i++) {
		r = add_listener(g, &fds->transparent[i], GW_L_TRANSPARENT);
		r = r ? r : add_listener(g, &fds->proxy[i], GW_L_PROXY);
		r = r ? r : add_listener(g, &fds->dns_udp[i], GW_L_DNS_UDP);
		r = r ? r : add_listener(g, &fds->dns_tcp[i], GW_L_DNS_TCP);
		if (r) {
			wd_err_set(err, r, "epoll_ctl: %s", strerror(-r));
			goto fail;
		}
	}
	r = add_listener(g, &fds->ctl, GW_L_CTL);
	if (r) {
		wd_err_set(err, r, "epoll_ctl: %s", strerror(-r));
		goto fail;
	}
	if (fds->nflog >= 0) {
		g->nflog_fd = fds->nflog;
		fds->nflog = -1;
		r = gw_ep_add(g, g->nflog_fd, EPOLLIN, GW_REF(GW_REF_NFLOG, NULL));
		if (r) {
			wd_err_set(err, r, "epoll_ctl: %s", strerror(-r));
			goto fail;
		}
	}
	/* SIGTERM/SIGINT end the loop when the caller has blocked them */
	sigemptyset(&mask);
	if (!sigprocmask(SIG_BLOCK, NULL, &mask) && sigismember(&mask, SIGTERM)) {
		sigset_t want;

		sigemptyset(&want);
		sigaddset(&want, SIGTERM);
		sigaddset(&want, SIGINT);
		g->sigfd = signalfd(-1, &want, SFD_CLOEXEC | SFD_NONBLOCK);
		if (g->sigfd >= 0)
			gw_ep_add(g, g->sigfd, EPOLLIN, GW_REF(GW_REF_SIGNAL, NULL));
	}
	r = gw_resolve_init(g, err);
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

void gw_stop(struct gw *g)
{
	g->stop = 1;
}

static void fire_timer(struct gw *g, struct gw_timer *t)
{
	switch ((enum gw_timer_kind)t->kind) {
	case GW_T_CONN:
		gw_conn_timeout(t->owner);
		break;
	case GW_T_RESUME:
		resume_listener(t->owner);
		break;
	case GW_T_DNSCONN:
		gw_dnsconn_timeout(t->owner);
		break;
	case GW_T_CTLCONN:
		gw_ctlconn_close(t->owner);
		break;
	case GW_T_UDPLOG:
		gw_udplog_flush(t->owner);
		break;
	case GW_T_FLOOD:
		gw_auditrl_flush(t->owner);
		break;
	}
	(void)g;
}

static void listener_event(struct gw_listener *l)
{
	switch (l->kind) {
	case GW_L_TRANSPARENT:
	case GW_L_PROXY:
		gw_tcp_accept(l);
		break;
	case GW_L_DNS_UDP:
		gw_dns_udp_ready(l);
		break;
	case GW_L_DNS_TCP:
		gw_dns_tcp_accept(l);
		break;
	case GW_L_CTL:
		gw_ctl_accept(l);
		break;
	}
}

static void dispatch(struct gw *g, const struct epoll_event *ev)
{
	void *p = GW_REF_PTR(ev->data.u64);

	switch (GW_REF_TYPE(ev->data.u64)) {
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
		gw_ares_event(g, (int)(ev->data.u64 & 0xffffffffu), ev->events);
		break;
	case GW_REF_NFLOG:
		gw_nflog_event(g);
		break;
	case GW_REF_PRIV:
		gw_priv_event(g, ev->events);
		break;
	case GW_REF_SIGNAL: {
		struct signalfd_siginfo si;

		while (read(g->sigfd, &si, sizeof(si)) == sizeof(si))
			g->stop = 1;
		break;
	}
	}
}

int gw_run_loop(struct gw *g)
{
	struct epoll_event evs[256];

	while (!g->stop) {
		uint64_t next = gw_timer_next(&g->timers), an = gw_ares_next(g);
		int timeout = -1, n;
		struct gw_timer *t;

		g->now = wd_mono_ns();
		if (an < next)
			next = an;
		if (next != UINT64_MAX)
			timeout = next <= g->now ? 0 : (int)((next - g->now + 999999) / 1000000);
		if (timeout > 60000)
			timeout = 60000;
		if (g->again)
			timeout = 0; /* connections with more to relay: only poll */
		n = epoll_wait(g->ep, evs, (int)WD_ARRAY_SIZE(evs), timeout);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		g->now = wd_mono_ns();
		for (int i = 0; i < n; i++)
			dispatch(g, &evs[i]);
		while ((t = gw_timer_expired(&g->timers, g->now)))
			fire_timer(g, t);
		gw_ares_timeouts(g);
		gw_conn_again(g);
		gw_conn_reap(g);
		gw_audit_flush(g);
	}
	return g->fatal;
}

void gw_free(struct gw *g)
{
	if (!g)
		return;
	while (g->conns)
		gw_conn_close(g->conns, "gateway stopping");
	while (g->dnsconns)
		gw_dnsconn_close(g->dnsconns);
	while (g->ctlconns)
		gw_ctlconn_close(g->ctlconns);
	gw_conn_reap(g);
	gw_resolve_free(g);
	gw_priv_free(g);
	while (g->runs)
		gw_run_unregister(g, g->runs);
	gw_udplog_flush(g);
	gw_auditrl_flush(g);
	gw_audit_flush(g);
	gw_timer_cancel(&g->timers, &g->udp_timer);
	gw_timer_cancel(&g->timers, &g->flood_timer);
	wd_closep(&g->nflog_fd);
	free(g->nflog_buf);
	for (size_t i = 0; i < g->nlis; i++)
		wd_closep(&g->lis[i].fd);
	gw_pool_free(&g->pool);
	gw_cache_free(&g->cache);
	wd_htable_free(&g->run_index[0]);
	wd_htable_free(&g->run_index[1]);
	gw_timer_heap_free(&g->timers);
	free(g->local);
	free(g->hello);
	if (g->sigfd >= 0)
		close(g->sigfd);
	if (g->ep > 0)
		close(g->ep);
	free(g);
}

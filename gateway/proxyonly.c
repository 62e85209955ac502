/* proxyonly.c - what a proxy-only build of the gateway (macOS: `mode: proxy` alone,
 * docs/platforms.md) has in place of the Linux-only components gw.c composes: the DNS front
 * (dnsfront.c, dnsudp.c: recvmmsg, sendmmsg, UDP GSO, IP_PKTINFO), the UDP relay (udprelay.c:
 * IP_PKTINFO, conntrack) and the audit of what the nft table dropped (udplog.c over nflog.c: an
 * NFLOG netlink socket). None exists without nftables: a proxy-mode gateway opens no DNS or UDP
 * relay listener and no NFLOG socket (fds.c, main_proxy.c), so these entry points are those of an
 * absent component. Handed such a listener or an NFLOG socket anyway, the init refuses
 * (-ENOTSUP) and the gateway does not start; the event handlers are never reached (nothing of
 * theirs is registered in the loop) and do nothing.
 *
 * Compiled on every OS, empty on Linux (where the real components are built). Built for Mach-O by
 * tests/cross/run; never run on a Mac. */
#ifndef __linux__
#include "gateway/dns.h"
#include "gateway/udplog.h"
#include "gateway/udprelay.h"

#include <errno.h>
#include <string.h>

int gw_dns_init(struct gw_dns *dns, struct gw_ev *ev, struct gw_runs *runs, struct gw_resolver *res,
		struct gw_audit *audit, const struct gw_limits *lim, int udp[2], int tcp[2],
		struct wd_err *err)
{
	memset(dns, 0, sizeof(*dns));
	dns->ev = ev;
	dns->runs = runs;
	dns->res = res;
	dns->audit = audit;
	dns->lim = lim;
	for (int i = 0; i < 2; i++) {
		dns->udp[i].fd = dns->tcp[i].fd = -1;
		if (udp[i] >= 0 || tcp[i] >= 0)
			return wd_err_set(err, -ENOTSUP,
					  "a DNS listener: the DNS front is Linux's, this gateway "
					  "serves proxy mode only");
	}
	return 0;
}

void gw_dns_free(struct gw_dns *dns)
{
	gw_dns_asks_free(dns); /* network.ask's asks of proxy requests (dnsask.c) */
}

void gw_dns_udp_ready(struct gw_dns *dns, struct gw_listener *l)
{
	(void)dns;
	(void)l;
}

void gw_dns_drain(struct gw_dns *dns)
{
	(void)dns;
}

void gw_dns_tcp_accept(struct gw_dns *dns, struct gw_listener *l)
{
	(void)dns;
	(void)l;
}

void gw_dnsconn_event(struct gw_dnsconn *d, unsigned events)
{
	(void)d;
	(void)events;
}

void gw_dnsconn_timeout(struct gw_dnsconn *d)
{
	(void)d;
}

int gw_udplog_init(struct gw_udplog *u, struct gw_ev *ev, struct gw_runs *runs,
		   struct gw_audit *audit, const struct wd_gwconf *conf, int *fd)
{
	memset(u, 0, sizeof(*u));
	u->ev = ev;
	u->runs = runs;
	u->audit = audit;
	u->conf = conf;
	u->fd = -1;
	return *fd >= 0 ? -ENOTSUP : 0;
}

void gw_udplog_free(struct gw_udplog *u)
{
	(void)u;
}

void gw_udplog_event(struct gw_udplog *u)
{
	(void)u;
}

void gw_udplog_flush(struct gw_udplog *u)
{
	(void)u;
}

void gw_udplog_run_end(struct gw_udplog *u, struct gw_run *r)
{
	(void)u;
	(void)r;
}

void gw_udplog_drain(struct gw_udplog *u)
{
	(void)u;
}

bool gw_udplog_active(const struct gw_udplog *u)
{
	(void)u;
	return false;
}

/* the UDP relay: no listener of its own off Linux (no nft redirect to feed it) */
int gw_udprelay_init(struct gw_udprelay *u, struct gw_ev *ev, struct gw_runs *runs,
		     struct gw_resolver *res, struct gw_audit *audit, struct gw_privchan *priv,
		     unsigned idle_s, int fds[2], int *ct)
{
	memset(u, 0, sizeof(*u));
	(void)idle_s;
	u->ev = ev;
	u->runs = runs;
	u->res = res;
	u->audit = audit;
	u->priv = priv;
	u->l[0].fd = u->l[1].fd = -1;
	return fds[0] >= 0 || fds[1] >= 0 || *ct >= 0 ? -ENOTSUP : 0;
}

void gw_udprelay_free(struct gw_udprelay *u)
{
	(void)u;
}

void gw_udprelay_ready(struct gw_udprelay *u, struct gw_listener *l)
{
	(void)u;
	(void)l;
}

void gw_udprelay_up_event(void *p, unsigned events)
{
	(void)p;
	(void)events;
}

void gw_udprelay_sweep(struct gw_udprelay *u)
{
	(void)u;
}

#endif /* !__linux__ */

/* udplog.c - audit events for what the nft table drops and logs to NFLOG: the
 * worker reads the NFLOG socket its parent bound, parses each message
 * (gw_nflog_next(), pure), attributes the packet to a run by its source
 * address and writes one event for it. The log rule's prefix says what it was:
 *
 *   (none)                 other UDP or UDP-lite           "net.udp"
 *   FW_NFLOG_PREFIX_HOST   an address of this host other   "net.host"
 *                          than the run's own gateway
 *   FW_NFLOG_PREFIX_CONNS  a new flow over the run's        "limit.connections"
 *                          limits (open flows, new a second)
 *
 * Every such packet counts as a denial of its run (run.exit's "denials").
 *
 * A flood must not fill the disk: each run (and the "no run" bucket) has a
 * token bucket per kind of GW_UDP_BURST events refilled at GW_UDP_PER_S a
 * second. Packets over the limit are counted; a timer writes one summary
 * event per bucket (with the count in "denials") a second after the first one
 * was suppressed, and a run's pending summaries are written when it
 * unregisters.
 *
 * The kernel sends each logged packet at once (the socket is bound with a
 * queue threshold of 1), and gw_udplog_drain() reads what is queued before the
 * control socket answers "list" or "unregister": the launcher asks both
 * before it writes run.exit, so a datagram sent right before the program
 * exits is still audited and counted.
 */
#include "gateway/udplog.h"
#include "gateway/nflog.h"
#include "nft/nft.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define GW_UDP_BURST 20u
#define GW_UDP_PER_S 5u
#define GW_UDP_SUMMARY_NS 1000000000ull
#define GW_NFLOG_BUF 65536
#define GW_NFLOG_DRAIN_MAX 4096 /* recv()s at most per drain */

/* the audit action and a word for a summary, per kind */
static const struct {
	enum audit_type type;
	const char *action;
	const char *what;
} kinds[GW_DROP_N] = {
    [GW_DROP_UDP] = {AUDIT_TYPE_NET, "net.udp", "dropped UDP datagrams"},
    [GW_DROP_HOST] = {AUDIT_TYPE_NET, "net.host", "dropped packets to addresses of this host"},
    [GW_DROP_CONNS] = {AUDIT_TYPE_LIMIT, "limit.connections",
		       "new flows dropped over the run's connection limit"},
};

static enum gw_drop_kind kind_of(const struct gw_nflog_pkt *p)
{
	if (!strcmp(p->prefix, FW_NFLOG_PREFIX_HOST))
		return GW_DROP_HOST;
	if (!strcmp(p->prefix, FW_NFLOG_PREFIX_CONNS))
		return GW_DROP_CONNS;
	return GW_DROP_UDP; /* no prefix (or one we do not know: still a drop) */
}

static const char *proto_name(uint8_t proto)
{
	switch (proto) {
	case IPPROTO_UDP:
		return "udp";
	case IPPROTO_UDPLITE:
		return "udplite";
	case IPPROTO_TCP:
		return "tcp";
	case IPPROTO_ICMP:
		return "icmp";
	case IPPROTO_ICMPV6:
		return "icmpv6";
	case IPPROTO_SCTP:
		return "sctp";
	default:
		return "ip";
	}
}

/* "10.213.0.1" or "10.213.0.1 / fd77:...::1": the run's own gateway addresses */
static void own_addrs(const struct gw_run *run, char *out, size_t size)
{
	char a4[INET6_ADDRSTRLEN] = "", a6[INET6_ADDRSTRLEN] = "";

	if (run->host4.family)
		gw_addr_str(&run->host4, a4, sizeof(a4));
	if (run->host6.family)
		gw_addr_str(&run->host6, a6, sizeof(a6));
	snprintf(out, size, "%s%s%s", a4, a4[0] && a6[0] ? " / " : "", a6);
}

static void drop_event(struct gw_udplog *u, struct gw_run *run, enum gw_drop_kind k,
		       const struct gw_nflog_pkt *p)
{
	char dst[INET6_ADDRSTRLEN], src[INET6_ADDRSTRLEN], own[2 * INET6_ADDRSTRLEN + 4];
	char reason[400], orphan[120] = "";
	struct audit_event ev = {
	    .type = kinds[k].type,
	    .action = kinds[k].action,
	    .allowed = false,
	    .reason = reason,
	    .proto = proto_name(p->proto),
	};

	ev.dst = ev.resource = gw_addr_str(&p->dst, dst, sizeof(dst));
	if (p->has_ports) {
		ev.has |= AUDIT_HAS_PORT;
		ev.port = p->dport;
	}
	if (!run)
		snprintf(orphan, sizeof(orphan), " (its source %s belongs to no registered run)",
			 gw_addr_str(&p->src, src, sizeof(src)));
	switch (k) {
	case GW_DROP_UDP:
		snprintf(reason, sizeof(reason),
			 "%s is not relayed: the datagram was dropped by the nft table%s",
			 p->proto == IPPROTO_UDPLITE ? "UDP-lite" : "UDP", orphan);
		break;
	case GW_DROP_HOST:
		if (run)
			own_addrs(run, own, sizeof(own));
		snprintf(reason, sizeof(reason),
			 "a run reaches only its own gateway address%s%s%s and only the "
			 "gateway's ports there: %s is an address of this host, the packet was "
			 "dropped by the nft table%s",
			 run ? " (" : "", run ? own : "", run ? ")" : "", dst, orphan);
		break;
	case GW_DROP_CONNS:
		ev.has |= AUDIT_HAS_LIMIT;
		ev.limit = u->conf->nft_conns_per_run;
		snprintf(reason, sizeof(reason),
			 "connection limit: a run holds at most %u open flows "
			 "(nft.conntrack_per_run) and opens at most %u new ones a second "
			 "(nft.conntrack_new_per_s, burst %u); this new flow was dropped by the "
			 "nft table%s",
			 u->conf->nft_conns_per_run, u->conf->nft_new_per_s,
			 u->conf->nft_new_per_s * 10, orphan);
		break;
	case GW_DROP_N:
		return;
	}
	gw_audit(u->audit, gw_run_acct(run), &ev);
}

static void summary(struct gw_udplog *u, struct gw_run *run, enum gw_drop_kind k,
		    struct gw_droplog *d)
{
	char reason[300];
	struct audit_event ev = {
	    .type = kinds[k].type,
	    .action = kinds[k].action,
	    .resource = "",
	    .allowed = false,
	    .reason = reason,
	    .proto = k == GW_DROP_UDP ? "udp" : NULL,
	    .has = AUDIT_HAS_DENIALS,
	};

	if (!d->suppressed)
		return;
	ev.denials = (int64_t)d->suppressed;
	if (k == GW_DROP_CONNS) {
		ev.has |= AUDIT_HAS_LIMIT;
		ev.limit = u->conf->nft_conns_per_run;
	}
	snprintf(reason, sizeof(reason),
		 "rate limit: %llu more %s were not audited one by one (at most %u, then %u a "
		 "second)",
		 (unsigned long long)d->suppressed, kinds[k].what, GW_UDP_BURST, GW_UDP_PER_S);
	d->suppressed = 0;
	gw_audit(u->audit, gw_run_acct(run), &ev);
}

void gw_udplog_flush(struct gw_udplog *u)
{
	for (struct gw_run *r = u->runs->list; r; r = r->next)
		gw_udplog_run_end(u, r);
	for (int k = 0; k < GW_DROP_N; k++)
		summary(u, NULL, (enum gw_drop_kind)k, &u->drops[k]);
}

void gw_udplog_run_end(struct gw_udplog *u, struct gw_run *r)
{
	for (int k = 0; k < GW_DROP_N; k++)
		summary(u, r, (enum gw_drop_kind)k, &r->drops[k]);
}

static void one_packet(struct gw_udplog *u, const struct gw_nflog_pkt *p)
{
	struct gw_run *run = gw_run_find_sandbox(u->runs, &p->src);
	enum gw_drop_kind k = kind_of(p);
	struct gw_droplog *d = run ? &run->drops[k] : &u->drops[k];

	d->dropped++;
	u->ev->stats.denied++;
	if (run)
		run->acct.denied++;
	switch (k) {
	case GW_DROP_UDP:
		u->ev->stats.udp_dropped++;
		break;
	case GW_DROP_HOST:
		u->ev->stats.host_dropped++;
		break;
	case GW_DROP_CONNS:
		u->ev->stats.conns_dropped++;
		break;
	case GW_DROP_N:
		break;
	}
	if (gw_bucket_take(&d->bucket, u->ev->now, GW_UDP_BURST, GW_UDP_PER_S)) {
		drop_event(u, run, k, p);
		return;
	}
	if (k == GW_DROP_UDP)
		u->ev->stats.udp_suppressed++;
	d->suppressed++;
	if (u->timer.pos == GW_TIMER_IDLE)
		gw_arm(u->ev, &u->timer, u->ev->now + GW_UDP_SUMMARY_NS);
}

/* read up to @max datagrams; Return: true when the socket is empty */
static bool nflog_read(struct gw_udplog *u, int max)
{
	if (u->fd < 0)
		return true;
	if (!u->buf && !(u->buf = malloc(GW_NFLOG_BUF)))
		return true;
	for (int i = 0; i < max; i++) {
		ssize_t n = recv(u->fd, u->buf, GW_NFLOG_BUF, MSG_DONTWAIT);
		struct gw_nflog_pkt p;
		size_t off = 0;
		enum gw_nflog_result r;

		if (n < 0) {
			if (errno == ENOBUFS) {
				/* the kernel dropped log messages: say so in the stats */
				u->ev->stats.nflog_lost++;
				continue;
			}
			return true;
		}
		while ((r = gw_nflog_next(u->buf, (size_t)n, &off, &p)) != GW_NFLOG_END) {
			if (r == GW_NFLOG_MALFORMED)
				break;
			if (r == GW_NFLOG_OK && p.src.family)
				one_packet(u, &p);
		}
	}
	return false;
}

void gw_udplog_event(struct gw_udplog *u)
{
	nflog_read(u, 64);
}

void gw_udplog_drain(struct gw_udplog *u)
{
	nflog_read(u, GW_NFLOG_DRAIN_MAX);
}

bool gw_udplog_active(const struct gw_udplog *u)
{
	return u->fd >= 0;
}

int gw_udplog_init(struct gw_udplog *u, struct gw_ev *ev, struct gw_runs *runs,
		   struct gw_audit *audit, const struct wd_gwconf *conf, int *fd)
{
	memset(u, 0, sizeof(*u));
	u->ev = ev;
	u->runs = runs;
	u->audit = audit;
	u->conf = conf;
	u->fd = *fd;
	*fd = -1;
	gw_timer_init(&u->timer, GW_T_UDPLOG, u);
	if (u->fd < 0)
		return 0;
	return gw_ev_add(ev, u->fd, GW_POLL_IN, GW_REF(GW_REF_NFLOG, u));
}

void gw_udplog_free(struct gw_udplog *u)
{
	gw_udplog_flush(u);
	if (u->ev)
		gw_disarm(u->ev, &u->timer);
	wd_closep(&u->fd);
	free(u->buf);
	u->buf = NULL;
}

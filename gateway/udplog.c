/* udplog.c - audit events for the sandbox UDP the nft table drops: the
 * worker reads the NFLOG socket its parent bound, parses each message
 * (gw_nflog_next(), pure), attributes the datagram to a run by its source
 * address and writes one "net.udp" event for it.
 *
 * A flood must not fill the disk: each run (and the "no run" bucket) has a
 * token bucket of GW_UDP_BURST events refilled at GW_UDP_PER_S a second.
 * Datagrams over the limit are counted; a timer writes one summary event
 * per bucket (with the count in "denials") a second after the first one was
 * suppressed, and a run's pending summary is written when it unregisters.
 */
#include "gateway/gw_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>

#define GW_UDP_BURST 20
#define GW_UDP_PER_S 5
#define GW_UDP_SUMMARY_NS 1000000000ull
#define GW_NFLOG_BUF 65536

static void udp_event(struct gw *g, struct gw_run *run, const struct gw_nflog_pkt *p)
{
	char dst[INET6_ADDRSTRLEN], src[INET6_ADDRSTRLEN], reason[200];
	struct audit_event ev = {
	    .type = AUDIT_TYPE_NET,
	    .action = "net.udp",
	    .allowed = false,
	    .reason = reason,
	    .proto = p->proto == IPPROTO_UDP ? "udp" : "ip",
	};

	ev.dst = ev.resource = gw_addr_str(&p->dst, dst, sizeof(dst));
	if (p->has_ports) {
		ev.has |= AUDIT_HAS_PORT;
		ev.port = p->dport;
	}
	if (run)
		snprintf(reason, sizeof(reason),
			 "UDP is not relayed: the datagram was dropped by the nft table");
	else
		snprintf(reason, sizeof(reason),
			 "UDP is not relayed: the datagram was dropped by the nft table (its "
			 "source %s belongs to no registered run)",
			 gw_addr_str(&p->src, src, sizeof(src)));
	gw_audit(g, run, &ev);
}

static void summary(struct gw *g, struct gw_run *run, uint64_t *suppressed)
{
	char reason[200];
	struct audit_event ev = {
	    .type = AUDIT_TYPE_NET,
	    .action = "net.udp",
	    .resource = "",
	    .allowed = false,
	    .reason = reason,
	    .proto = "udp",
	    .has = AUDIT_HAS_DENIALS,
	};

	if (!*suppressed)
		return;
	ev.denials = (int64_t)*suppressed;
	snprintf(reason, sizeof(reason),
		 "rate limit: %llu more dropped UDP datagrams were not audited one by one "
		 "(at most %u, then %u a second)",
		 (unsigned long long)*suppressed, GW_UDP_BURST, GW_UDP_PER_S);
	*suppressed = 0;
	gw_audit(g, run, &ev);
}

void gw_udplog_flush(struct gw *g)
{
	for (struct gw_run *r = g->runs; r; r = r->next)
		summary(g, r, &r->udp_suppressed);
	summary(g, NULL, &g->udp_suppressed);
}

void gw_udplog_run_end(struct gw *g, struct gw_run *r)
{
	summary(g, r, &r->udp_suppressed);
}

static void one_packet(struct gw *g, const struct gw_nflog_pkt *p)
{
	struct gw_run *run = gw_run_find_sandbox(g, &p->src);
	struct gw_bucket *b = run ? &run->udp_bucket : &g->udp_bucket;

	g->stats.udp_dropped++;
	if (run)
		run->udp_dropped++;
	if (gw_bucket_take(b, g->now, GW_UDP_BURST, GW_UDP_PER_S)) {
		udp_event(g, run, p);
		return;
	}
	g->stats.udp_suppressed++;
	if (run)
		run->udp_suppressed++;
	else
		g->udp_suppressed++;
	if (g->udp_timer.pos == GW_TIMER_IDLE)
		gw_arm(g, &g->udp_timer, g->now + GW_UDP_SUMMARY_NS);
}

void gw_nflog_event(struct gw *g)
{
	if (!g->nflog_buf && !(g->nflog_buf = malloc(GW_NFLOG_BUF)))
		return;
	for (int i = 0; i < 64; i++) {
		ssize_t n = recv(g->nflog_fd, g->nflog_buf, GW_NFLOG_BUF, MSG_DONTWAIT);
		struct gw_nflog_pkt p;
		size_t off = 0;
		enum gw_nflog_result r;

		if (n < 0) {
			if (errno == ENOBUFS) {
				/* the kernel dropped log messages: say so in the stats */
				g->stats.nflog_lost++;
				continue;
			}
			return;
		}
		while ((r = gw_nflog_next(g->nflog_buf, (size_t)n, &off, &p)) != GW_NFLOG_END) {
			if (r == GW_NFLOG_MALFORMED)
				break;
			if (r == GW_NFLOG_OK && p.src.family)
				one_packet(g, &p);
		}
	}
}

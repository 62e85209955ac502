/* dnsfront.c - the gateway's DNS front (UDP and TCP): the only resolver a
 * sandbox can reach. UDP queries are taken in batches (recvmmsg) and answered
 * into one send queue (dnsudp.c); DNS over TCP is framed per connection, one
 * forwarded query at a time, and counts in the connection limits. Each query is
 * dnsanswer.c's. */
#include "gateway/dns.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GW_DNSCONN_IDLE_NS 10000000000ull
/* gw_dns_drain(): batches per socket, more than a socket buffer holds (~6 MiB) */
#define GW_DNS_DRAIN_ROUNDS 4096

/* one received datagram: where it came from and went to; NULL when it is to
 * be ignored (truncated, no destination address) */
static const struct gw_replyto *udp_in(struct mmsghdr *m, struct udp_out *out,
				       struct gw_replyto *rt, struct gw_addr *peer)
{
	struct msghdr *mh = &m->msg_hdr;

	rt->fd = out->fd;
	rt->batch = out;
	rt->conn = NULL;
	memset(&rt->local, 0, sizeof(rt->local));
	rt->plen = mh->msg_namelen;
	if (rt->plen > sizeof(rt->peer) || gw_addr_from_sa(&rt->peer, peer, NULL))
		return NULL;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		if (cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_PKTINFO) {
			struct in_pktinfo pi;

			memcpy(&pi, CMSG_DATA(cm), sizeof(pi));
			rt->local.family = AF_INET;
			memcpy(rt->local.a, &pi.ipi_addr, 4);
		} else if (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_PKTINFO) {
			struct in6_pktinfo pi;

			memcpy(&pi, CMSG_DATA(cm), sizeof(pi));
			rt->local.family = AF_INET6;
			memcpy(rt->local.a, &pi.ipi6_addr, 16);
		}
	}
	if (!rt->local.family || (mh->msg_flags & MSG_TRUNC))
		return NULL;
	return rt;
}

/* answer what waits on a UDP DNS socket: up to @rounds batches of UDP_BATCH */
static void udp_ready(struct gw_dns *dns, struct gw_listener *l, int rounds)
{
	struct udp_out out; /* not zeroed: only what n and used cover is read */
	uint8_t bufs[UDP_BATCH][UDP_MSG_MAX];
	union {
		char buf[CMSG_SPACE(sizeof(struct in6_pktinfo)) + 64];
		struct cmsghdr align;
	} cbufs[UDP_BATCH];
	struct gw_replyto rts[UDP_BATCH];
	struct iovec iov[UDP_BATCH];
	struct mmsghdr mm[UDP_BATCH];

	out.fd = l->fd;
	out.n = 0;
	out.used = 0;
	for (int i = 0; i < UDP_BATCH; i++) {
		iov[i] = (struct iovec){.iov_base = bufs[i], .iov_len = sizeof(bufs[i])};
		/* rts[] and cbufs[] are for recvmmsg() to write: only their addresses are
		 * taken here, and udp_in() reads no more than it wrote */
		mm[i].msg_hdr = (struct msghdr){
		    // cppcheck-suppress uninitvar ; an address, not a read (above)
		    .msg_name = &rts[i].peer,
		    .msg_iov = &iov[i],
		    .msg_iovlen = 1,
		    // cppcheck-suppress legacyUninitvar ; an address, not a read (above)
		    .msg_control = cbufs[i].buf,
		};
	}
	for (int round = 0; round < rounds; round++) {
		int n;

		for (int i = 0; i < UDP_BATCH; i++) {
			mm[i].msg_hdr.msg_namelen = sizeof(rts[i].peer);
			mm[i].msg_hdr.msg_controllen = sizeof(cbufs[i].buf);
			mm[i].msg_hdr.msg_flags = 0;
			mm[i].msg_len = 0;
		}
		n = recvmmsg(l->fd, mm, UDP_BATCH, MSG_DONTWAIT, NULL);
		if (n <= 0)
			break;
		for (int i = 0; i < n; i++) {
			struct gw_addr peer;
			const struct gw_replyto *rt = udp_in(&mm[i], &out, &rts[i], &peer);

			if (rt)
				gw_dns_query(dns, bufs[i], mm[i].msg_len, rt, &peer);
		}
		if (n < UDP_BATCH)
			break;
	}
	gw_udp_out_flush(&out);
}

void gw_dns_udp_ready(struct gw_dns *dns, struct gw_listener *l)
{
	udp_ready(dns, l, UDP_ROUNDS);
}

void gw_dns_drain(struct gw_dns *dns)
{
	for (int i = 0; i < 2; i++)
		if (dns->udp[i].fd >= 0)
			udp_ready(dns, &dns->udp[i], GW_DNS_DRAIN_ROUNDS);
}

static void dnsconn_update(struct gw_dnsconn *d)
{
	unsigned ev = d->outoff < d->outlen ? GW_POLL_OUT : 0;

	if (!d->pending && !d->closing)
		ev |= GW_POLL_IN;
	gw_ev_mod(d->dns->ev, d->fd, ev, GW_REF(GW_REF_DNS_TCP, d));
}

void gw_dnsconn_close(struct gw_dnsconn *d)
{
	struct gw_dns *dns = d->dns;

	if (d->pending) {
		d->pending->rt.conn = NULL; /* its answer is dropped */
		d->pending = NULL;
	}
	gw_disarm(dns->ev, &d->timer);
	gw_ev_del(dns->ev, d->fd);
	close(d->fd);
	if (d->prev)
		d->prev->next = d->next;
	else
		dns->conns = d->next;
	if (d->next)
		d->next->prev = d->prev;
	if (d->run) {
		d->run->dnsconns--;
		gw_runs_conn_close(dns->runs, d->run);
	}
	free(d->in);
	free(d->out);
	free(d);
}

static int dnsconn_flush(struct gw_dnsconn *d)
{
	while (d->outoff < d->outlen) {
		ssize_t n = send(d->fd, d->out + d->outoff, d->outlen - d->outoff,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0)
			return errno == EAGAIN ? 0 : -errno;
		d->outoff += (size_t)n;
	}
	return 0;
}

/* answer every complete message in the input, one forwarded query at a time */
static void dnsconn_more(struct gw_dnsconn *d)
{
	struct gw_dns *dns = d->dns;

	d->busy = true;
	while (!d->pending && !d->closing) {
		size_t off, len;
		enum dns_result r = dns_tcp_frame(d->in, d->inlen, &off, &len);
		struct gw_replyto rt = {.fd = -1, .local = d->local, .conn = d};

		if (r == DNS_NEED_MORE)
			break;
		if (r != DNS_OK) {
			d->closing = true;
			break;
		}
		gw_dns_query(dns, d->in + off, len, &rt, &d->peer);
		memmove(d->in, d->in + off + len, d->inlen - off - len);
		d->inlen -= off + len;
	}
	d->busy = false;
	if (dnsconn_flush(d) || (d->closing && d->outoff == d->outlen)) {
		gw_dnsconn_close(d);
		return;
	}
	dnsconn_update(d);
}

void gw_dnsconn_event(struct gw_dnsconn *d, unsigned events)
{
	struct gw_ev *ev = d->dns->ev;

	gw_arm(ev, &d->timer, ev->now + GW_DNSCONN_IDLE_NS);
	if (events & GW_POLL_ERR) {
		gw_dnsconn_close(d);
		return;
	}
	if ((events & (GW_POLL_IN | GW_POLL_HUP)) && !d->pending) {
		ssize_t n;

		if (d->inlen == d->incap) {
			/* a message is at most 2 + 65535 bytes: grow towards that,
			 * so that an idle connection holds 512 bytes, not 64 KiB */
			size_t cap = d->incap ? d->incap * 4 : 512;
			uint8_t *p;

			if (cap > 2 + 65535)
				cap = 2 + 65535;
			p = cap > d->incap ? realloc(d->in, cap) : NULL;
			if (!p) {
				gw_dnsconn_close(d);
				return;
			}
			d->in = p;
			d->incap = cap;
		}
		n = recv(d->fd, d->in + d->inlen, d->incap - d->inlen, MSG_DONTWAIT);

		if (n == 0 || (n < 0 && errno != EAGAIN)) {
			d->closing = true;
		} else if (n > 0) {
			d->inlen += (size_t)n;
		}
	}
	dnsconn_more(d);
}

void gw_dnsconn_timeout(struct gw_dnsconn *d)
{
	gw_dnsconn_close(d);
}

/* a DNS-over-TCP connection that no run owns, or over a connection limit:
 * reset and audited (a denial of its run, when it has one) */
static void dns_tcp_refuse(struct gw_dns *dns, int fd, struct gw_run *run,
			   const struct gw_addr *local, const struct gw_addr *peer,
			   const char *reason)
{
	struct linger lg = {.l_onoff = 1, .l_linger = 0};
	char l[INET6_ADDRSTRLEN], p[INET6_ADDRSTRLEN], resource[128];
	struct audit_event ev = {
	    .type = AUDIT_TYPE_NET,
	    .action = "net.connect",
	    .resource = resource,
	    .allowed = false,
	    .reason = reason,
	    .proto = "dns",
	    .has = AUDIT_HAS_PORT,
	    .port = 53,
	};

	snprintf(resource, sizeof(resource), "%s -> %s", gw_addr_str(peer, p, sizeof(p)),
		 gw_addr_str(local, l, sizeof(l)));
	ev.dst = l;
	dns->ev->stats.refused++;
	gw_audit_denial(dns->audit, gw_run_acct(run), &ev);
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd);
}

/*
 * DNS over TCP counts like a relayed connection: in the run's and the
 * gateway's connection limits, and in the descriptor room (gw_runs_room()), so
 * that one run holding many of them cannot use up the worker's descriptors
 * (the control socket, other runs) -- the listener pauses instead, and refuses
 * what still waits once the room has stayed used up (gw_listener_accept()).
 */
void gw_dns_tcp_accept(struct gw_dns *dns, struct gw_listener *l)
{
	struct gw_ev *ev = dns->ev;

	for (int i = 0; i < 32; i++) {
		struct sockaddr_storage pss, lss;
		socklen_t pl = sizeof(pss), ll = sizeof(lss);
		struct gw_addr local, peer;
		struct gw_run *run;
		struct gw_dnsconn *d;
		char whybuf[400];
		const char *why;
		bool full;
		int fd;

		fd = gw_listener_accept(l, gw_runs_room(dns->runs), &full, &pss, &pl);
		if (fd == -EINTR)
			continue;
		if (fd < 0)
			return;
		if (getsockname(fd, (struct sockaddr *)&lss, &ll) ||
		    gw_addr_from_sa(&lss, &local, NULL) || gw_addr_from_sa(&pss, &peer, NULL)) {
			close(fd);
			continue;
		}
		run = gw_run_find_ingress(dns->runs, &local, &peer);
		if (!run) {
			dns_tcp_refuse(dns, fd, NULL, &local, &peer,
				       "no run owns this ingress address pair (DNS over TCP)");
			continue;
		}
		why = full ? gw_runs_room_refusal(dns->runs, " (DNS over TCP)", whybuf,
						  sizeof(whybuf))
			   : gw_runs_conn_refusal(dns->runs, run, " (DNS over TCP)", whybuf,
						  sizeof(whybuf));
		if (why) {
			dns_tcp_refuse(dns, fd, run, &local, &peer, why);
			continue;
		}
		/* the steps of tcp.c's accept_one() (the limits' refusal, then the connection's own
		 * struct linked into its component's list), kept apart: the structs, their lists
		 * and their refusals' audit events differ */
		d = calloc(1, sizeof(*d));
		if (!d) {
			close(fd);
			continue;
		}
		d->dns = dns;
		d->fd = fd;
		d->resume = dnsconn_more;
		d->local = local;
		d->peer = peer;
		gw_timer_init(&d->timer, GW_T_DNSCONN, d);
		if (gw_ev_add(ev, fd, GW_POLL_IN, GW_REF(GW_REF_DNS_TCP, d))) {
			free(d);
			close(fd);
			continue;
		}
		d->run = run;
		gw_runs_conn_open(dns->runs, run);
		run->dnsconns++;
		d->next = dns->conns;
		if (dns->conns)
			dns->conns->prev = d;
		dns->conns = d;
		gw_arm(ev, &d->timer, ev->now + GW_DNSCONN_IDLE_NS);
	}
}

int gw_dns_init(struct gw_dns *dns, struct gw_ev *ev, struct gw_runs *runs, struct gw_resolver *res,
		struct gw_audit *audit, const struct gw_limits *lim, int udp[2], int tcp[2],
		struct wd_err *err)
{
	int r = 0;

	memset(dns, 0, sizeof(*dns));
	dns->ev = ev;
	dns->runs = runs;
	dns->res = res;
	dns->audit = audit;
	dns->lim = lim;
	dns->held_answer = gw_dns_held_answer;
	for (int i = 0; i < 2; i++)
		dns->udp[i].fd = dns->tcp[i].fd = -1;
	for (int i = 0; i < 2 && !r; i++) {
		r = gw_listener_add(ev, &dns->udp[i], &udp[i], GW_L_DNS_UDP, dns);
		r = r ? r : gw_listener_add(ev, &dns->tcp[i], &tcp[i], GW_L_DNS_TCP, dns);
	}
	if (r)
		return wd_err_set(err, r, "epoll_ctl: %s", strerror(-r));
	return 0;
}

void gw_dns_free(struct gw_dns *dns)
{
	struct gw_dnsconn *next;

	/* the next taken first: a closed connection is freed */
	for (struct gw_dnsconn *d = dns->conns; d; d = next) {
		next = d->next;
		gw_dnsconn_close(d);
	}
	for (int i = 0; i < 2; i++) {
		gw_listener_close(&dns->udp[i]);
		gw_listener_close(&dns->tcp[i]);
	}
	gw_dns_asks_free(dns);
}

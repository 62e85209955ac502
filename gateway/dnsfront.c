/* dnsfront.c - the gateway's DNS front (UDP and TCP): the only resolver a
 * sandbox can reach. Allowed names get synthetic A/AAAA answers from the
 * run's pool; names the policy does not allow get NXDOMAIN (with an Extended
 * DNS Error where the client sent EDNS) and are never asked upstream;
 * HTTPS/SVCB get an empty answer; other types of allowed names are forwarded
 * through c-ares and relayed with every address in them replaced by a
 * synthetic one (or zeroed) and the additional section dropped. Every query
 * is one "dns.query" audit event. */
#include "gateway/decide.h"
#include "gateway/gw_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/udp.h>
#include <sys/epoll.h>
#include <unistd.h>

#define GW_DNS_TTL 300
#define GW_DNSCONN_IDLE_NS 10000000000ull

struct udp_out;

/* where a reply goes */
struct gw_replyto {
	int fd; /* UDP socket, or -1 for TCP */
	struct sockaddr_storage peer;
	socklen_t plen;
	struct gw_addr local;
	struct gw_dnsconn *conn; /* TCP */
	struct udp_out *batch;	 /* UDP: queue the reply here (sent with sendmmsg) */
};

/*
 * UDP batching: gw_dns_udp_ready() takes up to UDP_BATCH datagrams with one
 * recvmmsg(), at most UDP_ROUNDS times per wake-up so that the rest of the
 * loop gets its turn (64 datagrams, as before batching); it answers each into
 * a struct udp_out and sends the queue with one sendmmsg() at the end (an
 * answer that does not fit sends the queue first). A denial's
 * audit event is written (gw_audit() writes denials at once) while its
 * answer is still queued, so the event is on disk before the client learns
 * of the denial; allowed events are written with the loop round's batch.
 */
#define UDP_BATCH 32
#define UDP_ROUNDS 2
#define UDP_OUT_MAX (UDP_BATCH * UDP_ROUNDS) /* answers queued before a send */
#define UDP_MSG_MAX 4096		     /* longest query taken and answer sent */
/* gw_dns_drain(): batches per socket, more than a socket buffer holds (~6 MiB) */
#define GW_DNS_DRAIN_ROUNDS 4096

union pktinfo_buf {
	char buf[CMSG_SPACE(sizeof(struct in6_pktinfo))];
	struct cmsghdr align;
};

struct udp_out {
	int fd;
	unsigned n;  /* answers queued */
	size_t used; /* bytes of @arena they use */
	struct mmsghdr mm[UDP_OUT_MAX];
	struct iovec iov[UDP_OUT_MAX];
	struct sockaddr_storage peer[UDP_OUT_MAX];
	union pktinfo_buf cm[UDP_OUT_MAX];
	uint8_t arena[8 * UDP_MSG_MAX];
};

struct gw_dnsq {
	struct gw *g;
	struct gw_run *run;
	struct dns_query q;
	struct gw_replyto rt;
};

/* @a as text; IPv4 without stdio (inet_ntop formats with sprintf, once per
 * answered query) */
static const char *addr_text(const struct gw_addr *a, char *out, size_t size)
{
	char *o = out;

	if (a->family != AF_INET || size < INET_ADDRSTRLEN)
		return gw_addr_str(a, out, size);
	for (int i = 0; i < 4; i++) {
		unsigned v = a->a[i];

		if (v >= 100)
			*o++ = (char)('0' + v / 100);
		if (v >= 10)
			*o++ = (char)('0' + v / 10 % 10);
		*o++ = (char)('0' + v % 10);
		*o++ = i < 3 ? '.' : '\0';
	}
	return out;
}

static void dns_event(struct gw *g, struct gw_run *run, const struct dns_query *q, bool allowed,
		      const char *reason, const char *rule, const char *dst)
{
	char tbuf[16];
	struct audit_event ev = {
	    .type = AUDIT_TYPE_DNS,
	    .action = "dns.query",
	    .resource = q->qname,
	    .allowed = allowed,
	    .reason = reason,
	    .rule = rule,
	    /* a query whose question was not read has no type to name */
	    .qtype = q->question_ok ? gw_dns_qtype_name(q->qtype, tbuf, sizeof(tbuf)) : NULL,
	    .dst = dst,
	};

	g->stats.dns_queries++;
	if (allowed)
		gw_audit(g, run, &ev);
	else
		gw_audit_denial(g, run, &ev); /* counted in the run's denials */
}

/* warden run's liveness check (GW_LIVENESS_NAME, HTTPS) reached the gateway
 * from inside the run: its own action, not a DNS decision. A program in the
 * run can send the same query; it is then recorded the same way. */
static void liveness_event(struct gw *g, struct gw_run *run, const char *reason)
{
	struct audit_event ev = {
	    .type = AUDIT_TYPE_RUN,
	    .action = "run.liveness",
	    .resource = GW_LIVENESS_NAME,
	    .allowed = true,
	    .reason = reason,
	};

	g->stats.dns_queries++;
	gw_audit(g, run, &ev);
}

/* ------------------------------------------------------------ sending */

static void tcp_send(struct gw_dnsconn *d, const uint8_t *msg, size_t len);

/* a control message that makes the answer leave from @local (the address
 * the query was sent to: the redirect's target) */
static size_t fill_pktinfo(const struct gw_addr *local, union pktinfo_buf *cbuf)
{
	struct cmsghdr *cm = (struct cmsghdr *)cbuf->buf;

	memset(cbuf, 0, sizeof(*cbuf));
	if (local->family == AF_INET) {
		struct in_pktinfo pi = {0};

		memcpy(&pi.ipi_spec_dst, local->a, 4);
		cm->cmsg_level = IPPROTO_IP;
		cm->cmsg_type = IP_PKTINFO;
		cm->cmsg_len = CMSG_LEN(sizeof(pi));
		memcpy(CMSG_DATA(cm), &pi, sizeof(pi));
		return CMSG_SPACE(sizeof(pi));
	}
	{
		struct in6_pktinfo pi = {0};

		memcpy(&pi.ipi6_addr, local->a, 16);
		cm->cmsg_level = IPPROTO_IPV6;
		cm->cmsg_type = IPV6_PKTINFO;
		cm->cmsg_len = CMSG_LEN(sizeof(pi));
		memcpy(CMSG_DATA(cm), &pi, sizeof(pi));
		return CMSG_SPACE(sizeof(pi));
	}
}

/*
 * Answers of the same size for the same client (same peer, same local
 * address) leave as one UDP GSO send (UDP_SEGMENT): the kernel routes,
 * filters and NATs them once and cuts them into datagrams at the end, so the
 * client receives the same datagrams it would otherwise. A kernel or route
 * that refuses GSO gets the answers one by one, and GSO is not tried again
 * by this process.
 */
#define UDP_GSO_SEG_MAX 1232	/* an answer longer than this is never grouped */
#define UDP_GSO_BYTES_MAX 60000 /* bytes in one GSO send */

static bool udp_gso_refused;

union gso_cbuf {
	char buf[CMSG_SPACE(sizeof(struct in6_pktinfo)) + CMSG_SPACE(sizeof(uint16_t))];
	struct cmsghdr align;
};

struct udp_send {
	struct mmsghdr mm[UDP_OUT_MAX];
	struct iovec iov[UDP_OUT_MAX];
	union gso_cbuf cm[UDP_OUT_MAX];
	unsigned n;
};

static bool same_dest(const struct udp_out *o, unsigned i, unsigned j)
{
	const struct msghdr *a = &o->mm[i].msg_hdr, *b = &o->mm[j].msg_hdr;

	return a->msg_namelen == b->msg_namelen && a->msg_controllen == b->msg_controllen &&
	       !memcmp(a->msg_name, b->msg_name, a->msg_namelen) &&
	       !memcmp(a->msg_control, b->msg_control, a->msg_controllen);
}

/* the queued answers as sends: groups of equal-sized answers to one client */
static void udp_group(const struct udp_out *o, struct udp_send *u)
{
	bool taken[UDP_OUT_MAX] = {false};
	unsigned ni = 0;

	u->n = 0;
	for (unsigned i = 0; i < o->n; i++) {
		size_t seg = o->iov[i].iov_len, bytes = seg;
		unsigned start = ni, g;
		struct msghdr *mh;

		if (taken[i])
			continue;
		g = u->n++;
		mh = &u->mm[g].msg_hdr;
		u->iov[ni++] = o->iov[i];
		for (unsigned j = i + 1; !udp_gso_refused && seg <= UDP_GSO_SEG_MAX && j < o->n;
		     j++) {
			if (taken[j] || o->iov[j].iov_len != seg ||
			    bytes + seg > UDP_GSO_BYTES_MAX || !same_dest(o, i, j))
				continue;
			taken[j] = true;
			u->iov[ni++] = o->iov[j];
			bytes += seg;
		}
		*mh = o->mm[i].msg_hdr;
		mh->msg_iov = &u->iov[start];
		mh->msg_iovlen = ni - start;
		if (ni - start > 1) {
			struct cmsghdr *cm;
			uint16_t gso = (uint16_t)seg;

			memset(&u->cm[g], 0, sizeof(u->cm[g]));
			memcpy(u->cm[g].buf, o->mm[i].msg_hdr.msg_control,
			       o->mm[i].msg_hdr.msg_controllen);
			mh->msg_control = u->cm[g].buf;
			mh->msg_controllen = sizeof(u->cm[g].buf);
			cm = CMSG_NXTHDR(mh, (struct cmsghdr *)u->cm[g].buf);
			cm->cmsg_level = SOL_UDP;
			cm->cmsg_type = UDP_SEGMENT;
			cm->cmsg_len = CMSG_LEN(sizeof(gso));
			memcpy(CMSG_DATA(cm), &gso, sizeof(gso));
			mh->msg_controllen =
			    o->mm[i].msg_hdr.msg_controllen + CMSG_SPACE(sizeof(gso));
		}
	}
}

/* a GSO send the kernel refused: its answers one by one, and no more GSO */
static void udp_ungroup(int fd, const struct msghdr *gso)
{
	struct msghdr mh = *gso;

	udp_gso_refused = true;
	mh.msg_iovlen = 1;
	for (size_t k = 0; k < gso->msg_iovlen; k++) {
		union pktinfo_buf cb;
		size_t pl = gso->msg_controllen - CMSG_SPACE(sizeof(uint16_t));

		memcpy(cb.buf, gso->msg_control, pl);
		mh.msg_control = cb.buf;
		mh.msg_controllen = pl;
		mh.msg_iov = &gso->msg_iov[k];
		sendmsg(fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
	}
}

/* send the queued answers (best effort, like a single sendmsg: an answer
 * the kernel refuses is dropped and the rest still go) */
static void udp_out_flush(struct udp_out *o)
{
	struct udp_send u;
	unsigned sent = 0;

	if (!o->n)
		return;
	udp_group(o, &u);
	while (sent < u.n) {
		int r = sendmmsg(o->fd, u.mm + sent, u.n - sent, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (r > 0) {
			sent += (unsigned)r;
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && u.mm[sent].msg_hdr.msg_iovlen > 1 &&
		    (errno == EIO || errno == EINVAL || errno == EOPNOTSUPP ||
		     errno == ENOPROTOOPT))
			udp_ungroup(o->fd, &u.mm[sent].msg_hdr);
		sent++; /* this one failed: drop it, go on with the next */
	}
	o->n = 0;
	o->used = 0;
}

static void udp_out_queue(struct udp_out *o, const struct gw_replyto *rt, const uint8_t *msg,
			  size_t len)
{
	unsigned i;

	if (o->n == UDP_OUT_MAX || o->used + len > sizeof(o->arena))
		udp_out_flush(o);
	i = o->n++;
	memcpy(o->arena + o->used, msg, len);
	memcpy(&o->peer[i], &rt->peer, rt->plen);
	o->iov[i] = (struct iovec){.iov_base = o->arena + o->used, .iov_len = len};
	o->mm[i].msg_hdr = (struct msghdr){
	    .msg_name = &o->peer[i],
	    .msg_namelen = rt->plen,
	    .msg_iov = &o->iov[i],
	    .msg_iovlen = 1,
	    .msg_control = o->cm[i].buf,
	    .msg_controllen = fill_pktinfo(&rt->local, &o->cm[i]),
	};
	o->used += len;
}

static void send_reply(struct gw *g, const struct gw_replyto *rt, const uint8_t *msg, size_t len)
{
	struct iovec iov = {.iov_base = (void *)msg, .iov_len = len};
	union pktinfo_buf cbuf;
	struct msghdr mh = {
	    .msg_name = (void *)&rt->peer,
	    .msg_namelen = rt->plen,
	    .msg_iov = &iov,
	    .msg_iovlen = 1,
	    .msg_control = cbuf.buf,
	};

	(void)g;
	if (rt->fd < 0) {
		if (rt->conn)
			tcp_send(rt->conn, msg, len);
		return;
	}
	if (rt->batch && len <= UDP_MSG_MAX) {
		udp_out_queue(rt->batch, rt, msg, len);
		return;
	}
	mh.msg_controllen = fill_pktinfo(&rt->local, &cbuf);
	sendmsg(rt->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
}

static void reply(struct gw *g, const struct gw_replyto *rt, const struct dns_query *q,
		  const struct dns_reply *r)
{
	uint8_t out[UDP_MSG_MAX];
	struct dns_reply rr = *r;
	int n;

	rr.tcp = rt->fd < 0;
	n = dns_reply_compose(q, &rr, out, sizeof(out));
	if (n > 0)
		send_reply(g, rt, out, (size_t)n);
}

/* ------------------------------------------------------------ forwarding */

/* replace or remove the addresses of an upstream answer, in place */
static size_t scrub(struct gw_run *run, const struct dns_query *q, uint8_t *m, size_t len)
{
	struct dns_response resp;
	struct dns_rr_iter it;
	struct dns_rr rr;
	size_t cut = len;

	if (dns_response_parse(m, len, &resp) != DNS_OK)
		return 0;
	m[0] = (uint8_t)(q->id >> 8);
	m[1] = (uint8_t)q->id;
	/* echo the question as the client wrote it (same bytes but for case) */
	if (resp.counts[0] == 1 && len >= DNS_HEADER_LEN + q->qname_wire_len &&
	    !strncasecmp((const char *)m + DNS_HEADER_LEN, (const char *)q->qname_wire,
			 q->qname_wire_len))
		memcpy(m + DNS_HEADER_LEN, q->qname_wire, q->qname_wire_len);
	dns_rr_iter_init(&it, &resp);
	for (;;) {
		size_t at = it.off;

		if (dns_rr_next(m, len, &it, &rr) != DNS_OK)
			break;
		if (rr.section == DNS_SECTION_ADDITIONAL) {
			/* glue and OPT: dropped (pointers only point backwards) */
			cut = at;
			m[10] = m[11] = 0;
			break;
		}
		if (rr.type == DNS_TYPE_A || rr.type == DNS_TYPE_AAAA) {
			int fam = rr.type == DNS_TYPE_A ? AF_INET : AF_INET6;
			struct gw_addr a = {0};

			if (gw_name_allowed(run->policy, rr.name) < 0 ||
			    gw_synth_get(&run->synth, fam, rr.name, &a) < 0)
				memset(a.a, 0, sizeof(a.a));
			memcpy(m + rr.rdata.off, a.a, fam == AF_INET ? 4 : 16);
		}
	}
	return cut;
}

/* cut a reply to the client's UDP size: header and question only, TC set */
static size_t fit_udp(const struct dns_query *q, uint8_t *m, size_t len)
{
	size_t limit = 512, qend = DNS_HEADER_LEN + q->qname_wire_len + 4;

	if (q->edns.present && q->edns.udp_size > limit)
		limit = q->edns.udp_size;
	if (len <= limit || qend > len)
		return len;
	m[2] |= 0x02; /* TC */
	memset(m + 6, 0, 6);
	return qend;
}

static void dnsq_free(struct gw_dnsq *dq)
{
	if (dq->rt.conn && dq->rt.conn->pending == dq)
		dq->rt.conn->pending = NULL;
	gw_run_put(dq->g, dq->run);
	free(dq);
}

static void dnsconn_more(struct gw_dnsconn *d);

static void forwarded(void *arg, int status, int timeouts, unsigned char *abuf, int alen)
{
	struct gw_dnsq *dq = arg;
	struct gw *g = dq->g;
	struct gw_dnsconn *conn = dq->rt.conn;
	size_t n = 0;

	(void)timeouts;
	if (status == ARES_EDESTRUCTION) {
		dnsq_free(dq);
		return;
	}
	if (abuf && alen > DNS_HEADER_LEN) {
		uint8_t *m = malloc((size_t)alen);

		if (m) {
			memcpy(m, abuf, (size_t)alen);
			n = scrub(dq->run, &dq->q, m, (size_t)alen);
			if (n && dq->rt.fd >= 0)
				n = fit_udp(&dq->q, m, n);
			if (n && (dq->rt.fd >= 0 || conn))
				send_reply(g, &dq->rt, m, n);
			free(m);
		}
	}
	if (!n && (dq->rt.fd >= 0 || conn)) {
		struct dns_reply r = {.rcode = DNS_RCODE_SERVFAIL};

		reply(g, &dq->rt, &dq->q, &r);
	}
	dnsq_free(dq);
	if (conn && !conn->busy)
		dnsconn_more(conn);
}

/* ------------------------------------------------------------ one query */

/* an allowed A/AAAA query: the run's synthetic address for the name */
static void answer_synthetic(struct gw *g, struct gw_run *run, const struct gw_replyto *rt,
			     const struct dns_query *q, const char *why, const char *rule_text)
{
	struct dns_answer ans = {.type = q->qtype, .ttl = GW_DNS_TTL};
	struct dns_reply r = {0};
	char reason[600], atxt[INET6_ADDRSTRLEN];
	struct gw_addr a;
	int fam = q->qtype == DNS_TYPE_A ? AF_INET : AF_INET6;
	int sr = gw_synth_get(&run->synth, fam, q->qname, &a);

	if (sr < 0) {
		snprintf(reason, sizeof(reason), "no synthetic address for %s: %s", q->qname,
			 sr == -ENOSPC ? "the run's pool is exhausted" : strerror(-sr));
		r.rcode = DNS_RCODE_SERVFAIL;
		r.ede = true;
		r.ede_code = DNS_EDE_OTHER;
		r.ede_text = reason;
		reply(g, rt, q, &r);
		dns_event(g, run, q, false, reason, rule_text, NULL);
		return;
	}
	memcpy(ans.addr, a.a, gw_addr_len(fam));
	r.rcode = DNS_RCODE_NOERROR;
	r.aa = true;
	r.answers = &ans;
	r.n_answers = 1;
	reply(g, rt, q, &r);
	dns_event(g, run, q, true, why, rule_text, addr_text(&a, atxt, sizeof(atxt)));
}

/* an allowed query of another type: asked upstream, answered when c-ares is */
static void forward(struct gw *g, struct gw_run *run, const struct gw_replyto *rt,
		    const struct dns_query *q, const char *why, const char *rule_text)
{
	struct gw_dnsq *dq = calloc(1, sizeof(*dq));

	if (!dq) {
		struct dns_reply r = {.rcode = DNS_RCODE_SERVFAIL};

		reply(g, rt, q, &r);
		return;
	}
	dq->g = g;
	dq->run = run;
	run->refs++;
	dq->q = *q;
	dq->rt = *rt;
	dq->rt.batch = NULL; /* answered later, on its own */
	if (rt->conn)
		rt->conn->pending = dq;
	dns_event(g, run, q, true, why, rule_text, NULL);
	ares_query(g->ares, q->qname, DNS_CLASS_IN, q->qtype, forwarded, dq);
}

/* one query: decided (gw_dns_decide()), answered and audited */
static void query(struct gw *g, const uint8_t *msg, size_t len, const struct gw_replyto *rt,
		  const struct gw_addr *peer)
{
	struct dns_query q;
	struct dns_reply r = {0};
	struct gw_dns_verdict v;
	struct gw_dns_facts f = {.parsed = dns_query_parse(msg, len, &q), .q = &q};
	struct gw_run *run = gw_run_find_ingress(g, &rt->local, peer);
	char reason[600];
	const char *why, *rule_text = NULL;

	f.policy = run ? run->policy : NULL;
	f.upstream = g->ares_ok;
	gw_dns_decide(&f, &v);
	if (run)
		run->dns_queries++;
	why = gw_dns_reason_text(&v, &q, run ? run->policy_name : "", peer, reason, sizeof(reason));
	if (v.rule >= 0)
		rule_text = run->policy->rules[v.rule].text;
	switch (v.action) {
	case GW_DNS_SILENT:
		break;
	case GW_DNS_RCODE:
		r.rcode = v.rcode;
		if (v.ede) {
			r.ede = true;
			r.ede_code = v.ede_code;
			r.ede_text = why;
		}
		reply(g, rt, &q, &r);
		break;
	case GW_DNS_EMPTY:
	case GW_DNS_LIVENESS:
		r.rcode = DNS_RCODE_NOERROR;
		r.aa = true;
		reply(g, rt, &q, &r);
		break;
	case GW_DNS_SYNTHETIC:
		answer_synthetic(g, run, rt, &q, why, rule_text);
		return;
	case GW_DNS_FORWARD:
		forward(g, run, rt, &q, why, rule_text);
		return;
	}
	if (v.action == GW_DNS_LIVENESS)
		liveness_event(g, run, why);
	else
		dns_event(g, run, &q, v.allowed, why, rule_text, NULL);
}

/* ------------------------------------------------------------ UDP */

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
static void udp_ready(struct gw_listener *l, int rounds)
{
	struct gw *g = l->g;
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
		mm[i].msg_hdr = (struct msghdr){
		    .msg_name = &rts[i].peer,
		    .msg_iov = &iov[i],
		    .msg_iovlen = 1,
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
				query(g, bufs[i], mm[i].msg_len, rt, &peer);
		}
		if (n < UDP_BATCH)
			break;
	}
	udp_out_flush(&out);
}

void gw_dns_udp_ready(struct gw_listener *l)
{
	udp_ready(l, UDP_ROUNDS);
}

void gw_dns_drain(struct gw *g)
{
	for (size_t i = 0; i < g->nlis; i++)
		if (g->lis[i].kind == GW_L_DNS_UDP)
			udp_ready(&g->lis[i], GW_DNS_DRAIN_ROUNDS);
}

/* ------------------------------------------------------------ TCP */

static void dnsconn_update(struct gw_dnsconn *d)
{
	unsigned ev = d->outoff < d->outlen ? EPOLLOUT : 0;

	if (!d->pending && !d->closing)
		ev |= EPOLLIN;
	gw_ep_mod(d->g, d->fd, ev, GW_REF(GW_REF_DNS_TCP, d));
}

void gw_dnsconn_close(struct gw_dnsconn *d)
{
	struct gw *g = d->g;

	if (d->pending) {
		d->pending->rt.conn = NULL; /* its answer is dropped */
		d->pending = NULL;
	}
	gw_timer_cancel(&g->timers, &d->timer);
	gw_ep_del(g, d->fd);
	close(d->fd);
	if (d->prev)
		d->prev->next = d->next;
	else
		g->dnsconns = d->next;
	if (d->next)
		d->next->prev = d->prev;
	g->nconns--;
	if (d->run) {
		d->run->conns--;
		d->run->dnsconns--;
		gw_run_put(g, d->run);
	}
	free(d->in);
	free(d->out);
	free(d);
}

static void tcp_send(struct gw_dnsconn *d, const uint8_t *msg, size_t len)
{
	uint8_t *o;

	if (d->outoff == d->outlen)
		d->outoff = d->outlen = 0;
	o = realloc(d->out, d->outlen + len + 2);
	if (!o) {
		d->closing = true;
		return;
	}
	d->out = o;
	o[d->outlen] = (uint8_t)(len >> 8);
	o[d->outlen + 1] = (uint8_t)len;
	memcpy(o + d->outlen + 2, msg, len);
	d->outlen += len + 2;
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
	struct gw *g = d->g;

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
		query(g, d->in + off, len, &rt, &d->peer);
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
	struct gw *g = d->g;

	gw_arm(g, &d->timer, g->now + GW_DNSCONN_IDLE_NS);
	if (events & EPOLLERR) {
		gw_dnsconn_close(d);
		return;
	}
	if ((events & (EPOLLIN | EPOLLHUP)) && !d->pending) {
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
static void dns_tcp_refuse(struct gw *g, int fd, struct gw_run *run, const struct gw_addr *local,
			   const struct gw_addr *peer, const char *reason)
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
	g->stats.refused++;
	gw_audit_denial(g, run, &ev);
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	close(fd);
}

/*
 * DNS over TCP counts like a relayed connection: in the run's and the
 * gateway's connection limits, and in the descriptor room (g->fd_conns), so
 * that one run holding many of them cannot use up the worker's descriptors
 * (the control socket, other runs) -- the listener pauses instead.
 */
void gw_dns_tcp_accept(struct gw_listener *l)
{
	struct gw *g = l->g;

	for (int i = 0; i < 32; i++) {
		struct sockaddr_storage pss, lss;
		socklen_t pl = sizeof(pss), ll = sizeof(lss);
		struct gw_addr local, peer;
		struct gw_run *run;
		struct gw_dnsconn *d;
		int fd;

		if (g->nconns >= g->fd_conns) {
			g->stats.emfile++;
			gw_pause_listener(l); /* the rest waits in the backlog */
			return;
		}
		fd = accept4(l->fd, (struct sockaddr *)&pss, &pl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM) {
				g->stats.emfile++;
				gw_pause_listener(l);
			}
			if (errno == ECONNABORTED || errno == EINTR)
				continue;
			return;
		}
		if (getsockname(fd, (struct sockaddr *)&lss, &ll) ||
		    gw_addr_from_sa(&lss, &local, NULL) || gw_addr_from_sa(&pss, &peer, NULL)) {
			close(fd);
			continue;
		}
		run = gw_run_find_ingress(g, &local, &peer);
		if (!run) {
			dns_tcp_refuse(g, fd, NULL, &local, &peer,
				       "no run owns this ingress address pair (DNS over TCP)");
			continue;
		}
		if (g->nconns >= g->lim.conns_total || run->conns >= g->lim.conns_per_run) {
			dns_tcp_refuse(g, fd, run, &local, &peer,
				       g->nconns >= g->lim.conns_total
					   ? "gateway connection limit reached (DNS over TCP)"
					   : "run connection limit reached (DNS over TCP)");
			continue;
		}
		d = calloc(1, sizeof(*d));
		if (!d) {
			close(fd);
			continue;
		}
		d->g = g;
		d->fd = fd;
		d->local = local;
		d->peer = peer;
		gw_timer_init(&d->timer, GW_T_DNSCONN, d);
		if (gw_ep_add(g, fd, EPOLLIN, GW_REF(GW_REF_DNS_TCP, d))) {
			free(d);
			close(fd);
			continue;
		}
		d->run = run;
		run->refs++;
		run->conns++;
		run->dnsconns++;
		g->nconns++;
		d->next = g->dnsconns;
		if (g->dnsconns)
			g->dnsconns->prev = d;
		g->dnsconns = d;
		gw_arm(g, &d->timer, g->now + GW_DNSCONN_IDLE_NS);
	}
}

/* udprelay.c - the UDP relay: datagrams a run sent to a synthetic address (a name the DNS front
 * answered), redirected by the nft table to ports.udp, relayed per flow to an address the gateway
 * resolved itself for that name, when a `proto: udp` rule of the run's policy allows the name and
 * port (docs/gateway.md, "UDP by name").
 *
 * Theory of operation. A flow is one client address and port (udpflow.c). Its first datagram
 * makes it (GW_UF_LOOKUP) and is held: the parent asks conntrack for the flow's original
 * destination by its reply tuple (the listener's local address and ports.udp -> the client),
 * since Linux gives SO_ORIGINAL_DST for TCP only; the run's synthetic table names the host bound
 * there; udpdecide.c decides; the resolver gives the name's addresses and the SSRF guard picks
 * one (GW_UF_DECIDE); a connected upstream socket is made, the held datagrams go first, then every
 * datagram both ways (GW_UF_OPEN). Replies leave from the listener with the local address the
 * client sent to (IP_PKTINFO), so that conntrack rewrites their source back to the synthetic
 * address and port. A denied flow (GW_UF_DENIED) drops what comes until it is idle: one event per
 * flow, not per datagram. Every flow ends after limits.udp_idle_timeout_s (60 s) without a
 * datagram, or when its run ended, with one closing `net.udp` event carrying its bytes.
 *
 * QUIC: a flow whose first datagram is a QUIC v1/v2 long-header packet must show its ClientHello
 * before it is relayed: once the name and port are allowed, the held datagrams (and the ones that
 * follow, while it needs more: a ClientHello may span two Initials) go through quicsniff.c, and
 * the server name it reads must equal the bound name (decided as a TLS connection's SNI is); the
 * held datagrams are then relayed in order. A malformed Initial or one without a name is denied.
 */
#include "gateway/udprelay.h"
#include "gateway/decide.h"
#include "gateway/quicsniff.h"
#include "gateway/udpdecide.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* the relay's own state of one flow */
struct uflow {
	struct gw_udprelay *u;
	struct gw_udpflow *f;
	struct gw_run *run; /* a reference */
	struct gw_privreq q;
	struct gw_waiter w;
	int li;		      /* its listener: 0 IPv4, 1 IPv6 */
	struct gw_addr local; /* the address the client's datagrams reached */
	struct gw_addr up;    /* the upstream address */
	bool asked, waiting, announced;
	struct gw_quic_flow *quic; /* a QUIC flow whose ClientHello is not whole yet */
	struct gw_upload *acct;	   /* the name's upload account (limits.upload_kib), or NULL */
	uint8_t dcid[20];	   /* a QUIC flow's Destination Connection ID, as first checked */
	uint8_t dcid_len;	   /* 0: not a QUIC flow, no Initial goes up */
	bool foreign_told;	   /* a foreign Initial was audited */
	int rule;
	char denial_id[40];
};

static uint64_t now_ms(const struct gw_udprelay *u)
{
	return u->ev->now / 1000000ull;
}

/* one `net.udp` event of @uf: the decision (@close false) or the flow's end with its bytes */
static void event(struct uflow *uf, bool allowed, const char *reason, bool close)
{
	struct gw_udpflow *f = uf->f;
	char dst[INET6_ADDRSTRLEN], synth[INET6_ADDRSTRLEN];
	const struct wd_policy *p = uf->run ? uf->run->policy : NULL;
	struct audit_event ev = {
	    .type = AUDIT_TYPE_NET,
	    .action = "net.udp",
	    .resource = f->name[0]	? f->name
			: f->dst.family ? gw_addr_str(&f->dst, synth, sizeof(synth))
					: "",
	    .allowed = allowed,
	    .reason = reason,
	    .proto = "udp",
	    .rule =
		p && uf->rule >= 0 && (size_t)uf->rule < p->nrules ? p->rules[uf->rule].text : NULL,
	    .denial_id = uf->denial_id[0] ? uf->denial_id : NULL,
	};

	if (f->dport) {
		ev.has |= AUDIT_HAS_PORT;
		ev.port = f->dport;
	}
	if (uf->up.family)
		ev.dst = gw_addr_str(&uf->up, dst, sizeof(dst));
	else if (f->dst.family)
		ev.dst = gw_addr_str(&f->dst, dst, sizeof(dst));
	if (close) {
		ev.has |= AUDIT_HAS_BYTES_UP | AUDIT_HAS_BYTES_DOWN | AUDIT_HAS_DURATION;
		ev.bytes_up = (int64_t)f->up;
		ev.bytes_down = (int64_t)f->down;
		ev.duration_ms = (int64_t)(now_ms(uf->u) - f->opened_ms);
	}
	if (allowed)
		gw_audit(uf->u->audit, gw_run_acct(uf->run), &ev);
	else
		gw_audit_denial(uf->u->audit, gw_run_acct(uf->run), &ev);
}

/* @uf is denied: its event with a denial id, its held datagrams dropped */
static void deny(struct uflow *uf, const char *reason)
{
	struct gw_udp_held *h;

	uf->f->state = GW_UF_DENIED;
	free(uf->quic);
	uf->quic = NULL;
	gw_new_denial_id(uf->u->ev, uf->denial_id, sizeof(uf->denial_id));
	event(uf, false, reason, false);
	while ((h = gw_udpflow_take(uf->f))) {
		uf->f->dropped++;
		free(h);
	}
}

/* the flow ends: its closing event when it was let through, everything released */
static void end(struct uflow *uf, const char *why)
{
	struct gw_udprelay *u = uf->u;
	struct gw_udpflow *f = uf->f;

	if (uf->announced)
		event(uf, true, why, true);
	if (uf->waiting)
		gw_resolve_cancel(&uf->w);
	if (f->fd >= 0) {
		gw_ev_del(u->ev, f->fd);
		wd_closep(&f->fd);
	}
	if (uf->run) {
		uf->run->bytes_up += f->up;
		uf->run->bytes_down += f->down;
	}
	free(uf->quic);
	uf->quic = NULL;
	gw_udpflow_del(&u->flows, f, uf->run ? &uf->run->udp_flows : NULL);
	if (uf->asked) {
		/* the parent's answer is still due: the request keeps @uf until then */
		uf->f = NULL;
		return;
	}
	gw_run_put(u->runs, uf->run);
	free(uf);
}

/* the upload budget is spent: one limit.upload event, and the flow drops what comes until it is
 * idle (its closing event says what went through) */
static void budget_spent(struct uflow *uf)
{
	struct gw_upload *a = uf->acct;
	struct gw_udpflow *f = uf->f;
	enum gw_upload_which w = gw_upload_which(a);
	char reason[400], dst[INET6_ADDRSTRLEN];
	struct audit_event ev = {
	    .type = AUDIT_TYPE_LIMIT,
	    .action = "limit.upload",
	    .resource = f->name,
	    .allowed = false,
	    .reason = gw_upload_reason(a, f->name, reason, sizeof(reason)),
	    .rule = w == GW_UPLOAD_RUN ? "limits.upload_total_kib" : "limits.upload_kib",
	    .dst = gw_addr_str(&uf->up, dst, sizeof(dst)),
	    .proto = "udp",
	    .has = AUDIT_HAS_PORT | AUDIT_HAS_BYTES_UP | AUDIT_HAS_LIMIT | AUDIT_HAS_USAGE,
	    .port = f->dport,
	    .bytes_up = (int64_t)f->up,
	    .limit = (int64_t)(w == GW_UPLOAD_RUN ? a->run->cap_run : a->run->cap_name),
	    .usage = (int64_t)(w == GW_UPLOAD_RUN ? a->run->used : a->used),
	};

	gw_new_denial_id(uf->u->ev, uf->denial_id, sizeof(uf->denial_id));
	ev.denial_id = uf->denial_id;
	gw_audit_denial(uf->u->audit, gw_run_acct(uf->run), &ev);
	f->state = GW_UF_DENIED;
}

/* a QUIC v1 or v2 long-header packet (its ClientHello is then required) */
static bool quic_like(const uint8_t *b, size_t n)
{
	uint32_t v;

	if (n < 5 || (b[0] & 0xc0) != 0xc0)
		return false;
	v = (uint32_t)b[1] << 24 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 8 | b[4];
	return v == QUIC_VERSION_1 || v == QUIC_VERSION_2;
}

/*
 * Only the QUIC connection whose ClientHello was checked goes up a flow: an Initial of another
 * connection (another Destination Connection ID; on a flow that began as plain UDP, any
 * Initial) would carry a server name nobody read, e.g. another site at the allowed name's
 * address. It is dropped, and the flow's first one audited. A server's Retry makes the client
 * start again under a new DCID: that connection fails here and the client falls back to TCP.
 */
static bool foreign_initial(struct uflow *uf, const uint8_t *b, size_t n)
{
	struct quic_initial_hdr h;
	enum quic_result r;
	char reason[500];

	/* another packet type (0-RTT, Handshake) or not QUIC: not an Initial; one the header
	 * reader refuses counts as another connection's (it is not the one that was read) */
	r = quic_like(b, n) ? quic_initial_header_parse(b, n, &h) : QUIC_ABSENT;
	if (r == QUIC_ABSENT)
		return false;
	if (r == QUIC_OK && uf->dcid_len && h.dcid_len == uf->dcid_len &&
	    !memcmp(h.dcid, uf->dcid, h.dcid_len))
		return false;
	if (!uf->foreign_told) {
		uf->foreign_told = true;
		snprintf(
		    reason, sizeof(reason),
		    "udp to %.255s:%u: a QUIC Initial of another connection than the one whose "
		    "server name was checked (%s); dropped, the flow goes on",
		    uf->f->name, uf->f->dport,
		    uf->dcid_len ? "another Destination Connection ID"
				 : "the flow began as plain UDP");
		gw_new_denial_id(uf->u->ev, uf->denial_id, sizeof(uf->denial_id));
		event(uf, false, reason, false);
		uf->denial_id[0] = '\0';
	}
	return true;
}

static void send_up(struct uflow *uf, const uint8_t *b, size_t n)
{
	ssize_t w;

	if (foreign_initial(uf, b, n)) {
		uf->f->dropped++;
		return;
	}
	if (uf->f->state != GW_UF_OPEN) {
		uf->f->dropped++;
		return;
	}
	if (uf->acct && !gw_upload_take(uf->acct, n)) {
		uf->f->dropped++;
		budget_spent(uf);
		return;
	}
	w = send(uf->f->fd, b, n, MSG_DONTWAIT | MSG_NOSIGNAL);

	if (w == (ssize_t)n)
		uf->f->up += n;
	else
		uf->f->dropped++;
}

static void resolved(struct gw_waiter *w, const struct gw_cache_entry *e)
{
	struct uflow *uf = (struct uflow *)((char *)w - offsetof(struct uflow, w));
	struct gw_udprelay *u = uf->u;
	struct gw_udpflow *f = uf->f;
	struct gw_addr cand[GW_CACHE_ADDRS];
	struct sockaddr_storage ss;
	struct gw_ssrf_env env;
	struct gw_udp_held *h;
	char reason[1000], all[400];
	socklen_t sl;
	size_t n;
	int fd;

	uf->waiting = false;
	if (e->rcode || !e->n) {
		snprintf(reason, sizeof(reason), "udp to %s:%u: the name does not resolve", f->name,
			 f->dport);
		deny(uf, reason);
		return;
	}
	gw_ssrf_env(u->runs, &env);
	n = gw_upstream_pick(&env, uf->run->policy, e->addrs, e->n, f->dport, cand, all,
			     sizeof(all));
	if (!n) {
		snprintf(reason, sizeof(reason),
			 "udp to %s:%u resolves only to refused addresses (%.400s)", f->name,
			 f->dport, all);
		deny(uf, reason);
		return;
	}
	uf->up = cand[0];
	sl = gw_addr_to_sa(&cand[0], f->dport, &ss);
	fd = socket(cand[0].family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&ss, sl) ||
	    gw_ev_add(u->ev, fd, GW_POLL_IN, GW_REF(GW_REF_UDP_UP, uf))) {
		snprintf(reason, sizeof(reason), "udp to %s:%u: no upstream socket (%s)", f->name,
			 f->dport, strerror(errno));
		if (fd >= 0)
			close(fd);
		deny(uf, reason);
		return;
	}
	if (gw_uploads_get(&uf->run->up, f->name, &uf->acct) < 0) {
		close(fd);
		deny(uf, "udp: no upload account for the name (the run has too many)");
		return;
	}
	f->fd = fd;
	f->state = GW_UF_OPEN;
	uf->announced = true;
	event(uf, true, "allowed", false);
	while ((h = gw_udpflow_take(f))) {
		send_up(uf, h->data, h->len);
		free(h);
	}
}

/* the decision once everything is known (@quic: with the Initial's server name @sni) */
static void decide(struct uflow *uf, bool quic, const char *sni)
{
	struct gw_udpflow *f = uf->f;
	struct gw_udp_facts facts = {.policy = uf->run->policy,
				     .dst = &f->dst,
				     .port = f->dport,
				     .bound = f->name[0] ? f->name : NULL,
				     .quic = quic,
				     .sni = sni};
	struct gw_udp_verdict v;
	char reason[700];

	gw_udp_decide(&facts, &v);
	uf->rule = v.rule;
	if (!v.allow) {
		deny(uf, gw_udp_reason_text(&v, uf->run->policy_name, reason, sizeof(reason)));
		return;
	}
	f->state = GW_UF_DECIDE;
	uf->waiting = true;
	uf->w.cb = resolved;
	gw_resolve(uf->u->res, f->name, &uf->w);
}

/* one datagram of a QUIC flow whose ClientHello is awaited: decided once it is whole */
static void quic_feed(struct uflow *uf, const uint8_t *b, size_t n)
{
	static uint8_t work[65536];
	static struct tls_hello th;
	const char *why = NULL;
	char reason[300];

	switch (gw_quic_datagram(uf->quic, b, n, work, sizeof(work), &th, &why)) {
	case QUIC_NEED_MORE:
		return;
	case QUIC_OK:
		free(uf->quic);
		uf->quic = NULL;
		decide(uf, true, th.sni);
		return;
	case QUIC_ABSENT:
		free(uf->quic);
		uf->quic = NULL;
		decide(uf, true, "");
		return;
	case QUIC_MALFORMED:
		snprintf(reason, sizeof(reason), "udp to %s:%u: a malformed QUIC Initial (%s)",
			 uf->f->name, uf->f->dport, why ? why : "?");
		deny(uf, reason);
		return;
	}
}

/* the parent's answer: the flow's original destination, then the decision */
static void ct_done(struct gw_privreq *q, const struct gw_priv_ct_reply *rep)
{
	struct uflow *uf = (struct uflow *)((char *)q - offsetof(struct uflow, q));
	struct gw_udpflow *f = uf->f;
	struct gw_udp_facts facts = {0};
	struct gw_udp_verdict v;
	const char *name;
	char reason[700];

	uf->asked = false;
	if (!f) { /* the flow ended meanwhile */
		gw_run_put(uf->u->runs, uf->run);
		free(uf);
		return;
	}
	if (!rep || rep->status) {
		snprintf(reason, sizeof(reason),
			 "udp: the flow's original destination is unknown (conntrack: %s)",
			 rep ? strerror(-rep->status) : "the parent is gone");
		deny(uf, reason);
		return;
	}
	f->dst.family = rep->family;
	memcpy(f->dst.a, rep->dst, sizeof(f->dst.a));
	f->dport = rep->port;
	name = gw_synth_name(&uf->run->synth, &f->dst);
	if (name)
		snprintf(f->name, sizeof(f->name), "%s", name);
	facts.policy = uf->run->policy;
	facts.dst = &f->dst;
	facts.port = f->dport;
	facts.bound = name;
	gw_udp_decide(&facts, &v);
	uf->rule = v.rule;
	if (!v.allow) {
		deny(uf, gw_udp_reason_text(&v, uf->run->policy_name, reason, sizeof(reason)));
		return;
	}
	if (f->held && quic_like(f->held->data, f->held->len)) {
		/* the name and port are allowed; its ClientHello must agree with the name */
		struct quic_initial_hdr ih;

		if (quic_initial_header_parse(f->held->data, f->held->len, &ih) == QUIC_OK) {
			memcpy(uf->dcid, ih.dcid, ih.dcid_len);
			uf->dcid_len = ih.dcid_len;
		}
		uf->quic = calloc(1, sizeof(*uf->quic));
		if (!uf->quic) {
			deny(uf, "udp: out of memory for the flow's QUIC Initial");
			return;
		}
		f->state = GW_UF_DECIDE;
		/* a denial frees the held datagrams: the next one is not read after a decision */
		for (struct gw_udp_held *h = f->held, *next; h; h = next) {
			next = h->next;
			quic_feed(uf, h->data, h->len);
			if (!uf->quic)
				break;
		}
		return;
	}
	decide(uf, false, NULL);
}

/* a new flow's first datagram: attributed, held, its destination asked for */
static void new_flow(struct gw_udprelay *u, int li, const struct gw_addr *local,
		     const struct gw_addr *client, uint16_t cport, const uint8_t *b, size_t n)
{
	struct gw_run *run = gw_run_find_ingress(u->runs, local, client);
	struct gw_ct_tuple reply = {.src = *local, .dst = *client, .dport = cport};
	struct gw_udpflow *f;
	struct uflow *uf;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	uint16_t lport = 0;
	int r;

	if (!run || run->dead)
		return; /* the nft table redirects registered runs only */
	uf = calloc(1, sizeof(*uf));
	if (!uf)
		return;
	r = gw_udpflow_add(&u->flows, client, cport, run, &run->udp_flows, GW_UDP_FLOWS_PER_RUN,
			   now_ms(u), &f);
	if (r) {
		struct audit_event ev = {.type = AUDIT_TYPE_NET,
					 .action = "net.udp",
					 .resource = "",
					 .allowed = false,
					 .proto = "udp"};
		char why[200];

		free(uf);
		if (r != -ENOSPC)
			return;
		snprintf(why, sizeof(why),
			 "udp flow limit: a run holds at most %u flows through the UDP relay (the "
			 "gateway %u); new ones are dropped",
			 GW_UDP_FLOWS_PER_RUN, GW_UDP_FLOWS_MAX);
		ev.reason = why;
		gw_audit_count(u->audit, gw_run_acct(run), &ev, why);
		return;
	}
	uf->u = u;
	uf->f = f;
	uf->run = run;
	run->refs++;
	uf->li = li;
	uf->local = *local;
	uf->rule = -1;
	f->ctx = uf;
	if (getsockname(u->l[li].fd, (struct sockaddr *)&ss, &sl) == 0) {
		struct gw_addr any;

		(void)gw_addr_from_sa(&ss, &any, &lport);
	}
	reply.sport = lport;
	(void)gw_udpflow_hold(f, b, n);
	uf->q.done_ct = ct_done;
	if (u->ct >= 0 && u->priv->fd < 0) {
		/* rootless: this process owns the run's user namespace and asks itself */
		struct gw_priv_ct_reply rep;
		struct gw_ct_tuple orig = {0};
		int ct = gw_ct_lookup(u->ct, ++u->ct_seq, &reply, &orig);

		if (!ct && !gw_addr_eq(&orig.src, client))
			ct = -EPERM;
		if (gw_priv_ct_reply_encode(&rep, 0, ct, ct ? NULL : &orig.dst, orig.dport))
			gw_priv_ct_reply_encode(&rep, 0, -EIO, NULL, 0);
		uf->asked = true; /* ct_done() clears it */
		ct_done(&uf->q, &rep);
		return;
	}
	if (gw_privchan_send_ct(u->priv, &uf->q, &reply)) {
		deny(uf, "udp: the flow's original destination is unknown (no privileged "
			 "parent to ask conntrack)");
		return;
	}
	uf->asked = true;
}

/* one datagram from a client */
static void from_client(struct gw_udprelay *u, int li, const struct gw_addr *local,
			const struct gw_addr *client, uint16_t cport, const uint8_t *b, size_t n)
{
	struct gw_udpflow *f = gw_udpflow_find(&u->flows, client, cport);

	if (!f) {
		new_flow(u, li, local, client, cport, b, n);
		return;
	}
	f->last_ms = now_ms(u);
	switch (f->state) {
	case GW_UF_LOOKUP:
	case GW_UF_DECIDE:
		if (gw_udpflow_hold(f, b, n) == 0 && ((struct uflow *)f->ctx)->quic)
			quic_feed(f->ctx, b, n);
		break;
	case GW_UF_OPEN:
		send_up(f->ctx, b, n);
		break;
	case GW_UF_DENIED:
		f->dropped++;
		break;
	}
}

/* the local address of a received datagram (IP_PKTINFO / IPV6_PKTINFO) */
static int pktinfo(struct msghdr *mh, struct gw_addr *out)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
			struct in_pktinfo pi;

			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			out->family = AF_INET;
			memcpy(out->a, &pi.ipi_addr, 4);
			return 0;
		}
		if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
			struct in6_pktinfo pi;

			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			out->family = AF_INET6;
			memcpy(out->a, &pi.ipi6_addr, 16);
			return 0;
		}
	}
	return -1;
}

void gw_udprelay_ready(struct gw_udprelay *u, struct gw_listener *l)
{
	static uint8_t buf[65536];
	int li = l == &u->l[1];

	for (int i = 0; i < 64; i++) {
		struct sockaddr_storage peer = {0};
		union {
			char b[CMSG_SPACE(sizeof(struct in6_pktinfo))];
			struct cmsghdr align;
		} cbuf;
		struct iovec iov = {buf, sizeof(buf)};
		struct msghdr mh = {.msg_name = &peer,
				    .msg_namelen = sizeof(peer),
				    .msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = cbuf.b,
				    .msg_controllen = sizeof(cbuf.b)};
		struct gw_addr client, local;
		uint16_t cport;
		ssize_t n = recvmsg(l->fd, &mh, MSG_DONTWAIT);

		if (n < 0)
			return;
		if (pktinfo(&mh, &local) || gw_addr_from_sa(&peer, &client, &cport) ||
		    client.family != local.family)
			continue;
		from_client(u, li, &local, &client, cport, buf, (size_t)n);
	}
}

void gw_udprelay_up_event(void *p, unsigned events)
{
	static uint8_t buf[65536];
	struct uflow *uf = p;
	struct gw_udpflow *f = uf->f;
	struct gw_udprelay *u = uf->u;
	struct sockaddr_storage to;
	socklen_t tl;

	(void)events;
	tl = gw_addr_to_sa(&f->client, f->cport, &to);
	for (int i = 0; i < 64; i++) {
		union {
			char b[CMSG_SPACE(sizeof(struct in6_pktinfo))];
			struct cmsghdr align;
		} cbuf;
		struct iovec iov = {buf, 0};
		struct msghdr mh = {.msg_name = &to,
				    .msg_namelen = tl,
				    .msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = cbuf.b};
		struct cmsghdr *c;
		ssize_t n = recv(f->fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (n < 0)
			return; /* EAGAIN, or an ICMP error on the connected socket: go on */
		iov.iov_len = (size_t)n;
		memset(&cbuf, 0, sizeof(cbuf));
		c = (struct cmsghdr *)cbuf.b;
		if (uf->local.family == AF_INET) {
			struct in_pktinfo pi = {0};

			memcpy(&pi.ipi_spec_dst, uf->local.a, 4);
			mh.msg_controllen = CMSG_SPACE(sizeof(pi));
			c->cmsg_level = IPPROTO_IP;
			c->cmsg_type = IP_PKTINFO;
			c->cmsg_len = CMSG_LEN(sizeof(pi));
			memcpy(CMSG_DATA(c), &pi, sizeof(pi));
		} else {
			struct in6_pktinfo pi = {0};

			memcpy(&pi.ipi6_addr, uf->local.a, 16);
			mh.msg_controllen = CMSG_SPACE(sizeof(pi));
			c->cmsg_level = IPPROTO_IPV6;
			c->cmsg_type = IPV6_PKTINFO;
			c->cmsg_len = CMSG_LEN(sizeof(pi));
			memcpy(CMSG_DATA(c), &pi, sizeof(pi));
		}
		if (sendmsg(u->l[uf->li].fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) == n)
			f->down += (uint64_t)n;
		else
			f->dropped++;
		f->last_ms = now_ms(u);
	}
}

void gw_udprelay_sweep(struct gw_udprelay *u)
{
	struct gw_udpflow *idle[256];
	size_t n = gw_udpflow_idle(&u->flows, now_ms(u), u->idle_ms, idle, 256);
	size_t cursor = 0;
	struct gw_udpflow *f;

	for (size_t i = 0; i < n; i++)
		end(idle[i]->ctx, "closed: idle");
	/* the flows of runs that ended */
	n = 0;
	while (n < 256 && (f = wd_htable_each(&u->flows.index, &cursor)))
		if (((struct uflow *)f->ctx)->run->dead)
			idle[n++] = f;
	for (size_t i = 0; i < n; i++)
		end(idle[i]->ctx, "closed: the run ended");
	gw_arm(u->ev, &u->sweep, u->ev->now + GW_UDP_SWEEP_MS * 1000000ull);
}

int gw_udprelay_init(struct gw_udprelay *u, struct gw_ev *ev, struct gw_runs *runs,
		     struct gw_resolver *res, struct gw_audit *audit, struct gw_privchan *priv,
		     unsigned idle_s, int fds[2], int *ct)
{
	int one = 1, r = 0;

	memset(u, 0, sizeof(*u));
	u->ev = ev;
	u->runs = runs;
	u->res = res;
	u->audit = audit;
	u->priv = priv;
	u->l[0].fd = u->l[1].fd = -1;
	u->idle_ms = (uint64_t)(idle_s ? idle_s : 60) * 1000u;
	u->ct = *ct;
	*ct = -1;
	gw_timer_init(&u->sweep, GW_T_UDPRELAY, u);
	r = gw_udpflows_init(&u->flows, GW_UDP_FLOWS_MAX);
	for (int i = 0; i < 2 && !r; i++) {
		if (fds[i] < 0)
			continue;
		if (setsockopt(fds[i], i ? IPPROTO_IPV6 : IPPROTO_IP,
			       i ? IPV6_RECVPKTINFO : IP_PKTINFO, &one, sizeof(one)))
			r = -errno;
		else
			r = gw_listener_add(ev, &u->l[i], &fds[i], GW_L_UDP, u);
		u->on |= !r;
	}
	for (int i = 0; i < 2; i++)
		wd_closep(&fds[i]);
	if (!r && u->on)
		gw_arm(ev, &u->sweep, ev->now + GW_UDP_SWEEP_MS * 1000000ull);
	return r;
}

void gw_udprelay_free(struct gw_udprelay *u)
{
	size_t cursor = 0;
	struct gw_udpflow *f;

	while ((cursor = 0, f = wd_htable_each(&u->flows.index, &cursor)))
		end(f->ctx, "closed: the gateway stops");
	gw_udpflows_free(&u->flows);
	gw_disarm(u->ev, &u->sweep);
	for (int i = 0; i < 2; i++)
		gw_listener_close(&u->l[i]);
	wd_closep(&u->ct);
}

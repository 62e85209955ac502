/* dnsudp.c - the DNS front's UDP sending side: answers queued during a
 * wake-up and sent with one sendmmsg() at the end, answers of the same size for
 * the same client grouped into one UDP GSO send, each leaving from the address
 * its query was sent to (IP_PKTINFO / IPV6_PKTINFO). */
#include "gateway/dns.h"

#include <errno.h>
#include <netinet/udp.h>
#include <string.h>

/* a control message that makes the answer leave from @local (the address
 * the query was sent to: the redirect's target) */
size_t gw_udp_pktinfo(const struct gw_addr *local, union pktinfo_buf *cbuf)
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
		(void)sendmsg(fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL); /* best effort (flush) */
	}
}

/* send the queued answers (best effort, like a single sendmsg: an answer
 * the kernel refuses is dropped and the rest still go) */
void gw_udp_out_flush(struct udp_out *o)
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

void gw_udp_out_queue(struct udp_out *o, const struct gw_replyto *rt, const uint8_t *msg,
		      size_t len)
{
	unsigned i;

	if (o->n == UDP_OUT_MAX || o->used + len > sizeof(o->arena))
		gw_udp_out_flush(o);
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
	    .msg_controllen = gw_udp_pktinfo(&rt->local, &o->cm[i]),
	};
	o->used += len;
}

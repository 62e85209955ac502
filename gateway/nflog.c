/* nflog.c - NFLOG for the gateway: the pure parser of the netlink messages
 * the nft table's `log [prefix P] group N` produces (dropped sandbox UDP and
 * UDP-lite, attempts at host addresses, connections over a run's limit), and the
 * socket setup the privileged parent performs before handing the socket to the
 * worker.
 *
 * The parser reads nothing it has not bounds-checked: the netlink header's
 * length against the buffer, each attribute's length against its message,
 * the IP header's length against the copied payload, and the UDP header
 * against what follows it. The worker (udplog.c) only
 * reads the socket; binding a group needs CAP_NET_ADMIN, which only the
 * parent holds.
 */
#include "gateway/nflog.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define NL_HDR 16u   /* struct nlmsghdr */
#define NFGEN_HDR 4u /* struct nfgenmsg */
#define ALIGN4(n) (((n) + 3u) & ~(size_t)3u)

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* the protocols whose first four bytes are the source and destination ports */
static bool has_ports(uint8_t proto)
{
	return proto == IPPROTO_UDP || proto == IPPROTO_TCP || proto == IPPROTO_UDPLITE;
}

/* the transport header of an IPv6 packet: walk at most 8 extension headers */
static void ipv6_transport(const uint8_t *p, size_t n, struct gw_nflog_pkt *pkt)
{
	uint8_t nh = p[6];
	size_t off = 40;

	for (int i = 0; i < 8; i++) {
		switch (nh) {
		case 0:	 /* hop-by-hop */
		case 43: /* routing */
		case 60: /* destination options */
			if (n < off + 8)
				goto out;
			nh = p[off];
			off += ((size_t)p[off + 1] + 1) * 8;
			continue;
		case 44: /* fragment: only the first one carries the ports */
			if (n < off + 8)
				goto out;
			nh = p[off];
			if ((get16(p + off + 2) & 0xfff8) != 0) {
				pkt->proto = nh;
				return;
			}
			off += 8;
			continue;
		default:
			break;
		}
		break;
	}
out:
	pkt->proto = nh;
	if (has_ports(nh) && off <= n && n - off >= 4) {
		pkt->sport = get16(p + off);
		pkt->dport = get16(p + off + 2);
		pkt->has_ports = true;
	}
}

/* the addresses and ports of a logged IP packet (cut to the copy range) */
static enum gw_nflog_result parse_ip(const uint8_t *p, size_t n, struct gw_nflog_pkt *pkt)
{
	if (n < 1)
		return GW_NFLOG_MALFORMED;
	if (p[0] >> 4 == 4) {
		size_t ihl = (size_t)(p[0] & 0xf) * 4;

		if (n < 20 || ihl < 20 || ihl > n)
			return GW_NFLOG_MALFORMED;
		pkt->proto = p[9];
		pkt->src.family = pkt->dst.family = AF_INET;
		memcpy(pkt->src.a, p + 12, 4);
		memcpy(pkt->dst.a, p + 16, 4);
		if ((get16(p + 6) & 0x1fff) == 0 && has_ports(pkt->proto) && n - ihl >= 4) {
			pkt->sport = get16(p + ihl);
			pkt->dport = get16(p + ihl + 2);
			pkt->has_ports = true;
		}
		return GW_NFLOG_OK;
	}
	if (p[0] >> 4 == 6) {
		if (n < 40)
			return GW_NFLOG_MALFORMED;
		pkt->src.family = pkt->dst.family = AF_INET6;
		memcpy(pkt->src.a, p + 8, 16);
		memcpy(pkt->dst.a, p + 24, 16);
		ipv6_transport(p, n, pkt);
		return GW_NFLOG_OK;
	}
	return GW_NFLOG_MALFORMED;
}

enum gw_nflog_result gw_nflog_next(const uint8_t *buf, size_t len, size_t *off,
				   struct gw_nflog_pkt *pkt)
{
	const uint8_t *m, *payload = NULL;
	size_t mlen, at, plen = 0;
	uint32_t nlen;
	uint16_t type;

	if (*off >= len)
		return GW_NFLOG_END;
	if (len - *off < NL_HDR)
		return GW_NFLOG_MALFORMED;
	m = buf + *off;
	memcpy(&nlen, m, 4); /* host byte order, as the kernel writes it */
	memcpy(&type, m + 4, 2);
	if (nlen < NL_HDR || nlen > len - *off)
		return GW_NFLOG_MALFORMED;
	mlen = nlen;
	*off += ALIGN4(mlen) < len - *off ? ALIGN4(mlen) : len - *off;
	if (type != ((NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET))
		return GW_NFLOG_ABSENT; /* an ack, an error, NLMSG_DONE, ... */
	if (mlen < NL_HDR + NFGEN_HDR)
		return GW_NFLOG_MALFORMED;
	memset(pkt, 0, sizeof(*pkt));
	pkt->group = get16(m + NL_HDR + 2);
	for (at = NL_HDR + NFGEN_HDR; at < mlen;) {
		uint16_t alen, atype;

		if (mlen - at < 4)
			return GW_NFLOG_MALFORMED;
		memcpy(&alen, m + at, 2);
		memcpy(&atype, m + at + 2, 2);
		atype &= NLA_TYPE_MASK;
		if (alen < 4 || alen > mlen - at)
			return GW_NFLOG_MALFORMED;
		switch (atype) {
		case NFULA_PAYLOAD:
			payload = m + at + 4;
			plen = alen - 4u;
			break;
		case NFULA_IFINDEX_INDEV:
			if (alen != 8)
				return GW_NFLOG_MALFORMED;
			pkt->indev = get32(m + at + 4);
			break;
		case NFULA_PREFIX: {
			/* a NUL-terminated string; what fits, up to its NUL */
			size_t n = strnlen((const char *)m + at + 4, alen - 4u);

			if (n >= sizeof(pkt->prefix))
				n = sizeof(pkt->prefix) - 1;
			memcpy(pkt->prefix, m + at + 4, n);
			pkt->prefix[n] = '\0';
			break;
		}
		default:
			break;
		}
		at += ALIGN4((size_t)alen) < mlen - at ? ALIGN4((size_t)alen) : mlen - at;
	}
	if (!payload)
		return GW_NFLOG_OK; /* logged, but nothing copied: no addresses */
	return parse_ip(payload, plen, pkt);
}

/* ------------------------------------------------------------ the socket */

/* one NFULNL_MSG_CONFIG request with one attribute, and its ack */
static int nflog_config(int fd, uint16_t group, uint32_t seq, uint16_t atype, const void *a,
			size_t alen)
{
	union {
		uint8_t b[64];
		struct nlmsghdr align;
	} req;
	uint8_t ans[8192];
	struct nlmsghdr *h = &req.align;
	struct nfgenmsg *g;
	struct nlattr *na;

	memset(&req, 0, sizeof(req));
	h->nlmsg_len = (uint32_t)(NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(*g)) + NLA_HDRLEN + alen);
	h->nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG;
	h->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	h->nlmsg_seq = seq;
	g = (struct nfgenmsg *)(req.b + NLMSG_HDRLEN);
	g->nfgen_family = AF_UNSPEC;
	g->version = NFNETLINK_V0;
	g->res_id = htons(group);
	na = (struct nlattr *)(req.b + NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(*g)));
	na->nla_len = (uint16_t)(NLA_HDRLEN + alen);
	na->nla_type = atype;
	memcpy((uint8_t *)na + NLA_HDRLEN, a, alen);
	if (send(fd, req.b, h->nlmsg_len, 0) != (ssize_t)h->nlmsg_len)
		return -errno;
	/* packets of the group may already arrive: skip them until our ack */
	for (int tries = 0; tries < 64; tries++) {
		ssize_t n = recv(fd, ans, sizeof(ans), 0);

		if (n < 0)
			return -errno;
		for (size_t off = 0; off + NLMSG_HDRLEN <= (size_t)n;) {
			struct nlmsghdr r;
			struct nlmsgerr e;

			memcpy(&r, ans + off, sizeof(r));
			if (r.nlmsg_len < NLMSG_HDRLEN || r.nlmsg_len > (size_t)n - off)
				return -EBADMSG;
			if (r.nlmsg_type == NLMSG_ERROR && r.nlmsg_seq == seq &&
			    r.nlmsg_len >= NLMSG_HDRLEN + sizeof(e.error)) {
				memcpy(&e.error, ans + off + NLMSG_HDRLEN, sizeof(e.error));
				return e.error;
			}
			off += NLMSG_ALIGN(r.nlmsg_len);
		}
	}
	return -ETIMEDOUT;
}

int gw_nflog_open(uint16_t group, int *ret_fd, struct wd_err *err)
{
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
	struct timeval tv = {.tv_sec = 2};
	struct nfulnl_msg_config_cmd bind_cmd = {.command = NFULNL_CFG_CMD_BIND};
	struct nfulnl_msg_config_mode mode = {.copy_range = htonl(128),
					      .copy_mode = NFULNL_COPY_PACKET};
	/* every packet at once, not batched: a run that exits right after its last datagram
	 * still has it audited (the worker drains the socket before answering list and
	 * unregister, which the launcher asks before writing run.exit) */
	uint32_t qthresh = htonl(1), timeout = htonl(1);
	/* one message per packet: a flood's worth (~20,000 messages) waits here, not lost */
	int fd, r, rcvbuf = 16 << 20;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
	if (fd < 0)
		return wd_err_set(err, -errno, "NFLOG socket: %s", strerror(errno));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = wd_err_set(err, -errno, "NFLOG bind: %s", strerror(errno));
		goto fail;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	r = nflog_config(fd, group, 1, NFULA_CFG_CMD, &bind_cmd, sizeof(bind_cmd));
	r = r ? r : nflog_config(fd, group, 2, NFULA_CFG_MODE, &mode, sizeof(mode));
	r = r ? r : nflog_config(fd, group, 3, NFULA_CFG_QTHRESH, &qthresh, sizeof(qthresh));
	r = r ? r : nflog_config(fd, group, 4, NFULA_CFG_TIMEOUT, &timeout, sizeof(timeout));
	if (r) {
		r = wd_err_set(err, r, "binding NFLOG group %u: %s", group, strerror(-r));
		goto fail;
	}
	tv.tv_sec = 0;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
		r = wd_err_set(err, -errno, "NFLOG socket: fcntl: %s", strerror(errno));
		goto fail;
	}
	*ret_fd = fd;
	return 0;
fail:
	close(fd);
	return r;
}

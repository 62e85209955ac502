/* ctmsg.c - conntrack lookups for the UDP relay: the original destination of a redirected
 * UDP flow. Linux answers SO_ORIGINAL_DST for TCP only; for UDP the relay asks conntrack for
 * the entry whose reply tuple is (the gateway's address and port_udp -> the client's address
 * and port), and that entry's original tuple names the synthetic address and port the program
 * sent to. The composer and the parser are pure (bytes in, tuple out; every length checked);
 * gw_ct_lookup() is the one round trip. nfnetlink wants CAP_NET_ADMIN of the caller and of the
 * socket's opener in the namespace's user namespace: the privileged parent asks in root and
 * daemon mode, the rootless gateway (the owner of the run's user namespace) in its own.
 */
#include "gateway/ctmsg.h"

#include <errno.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define NL_HDR 16u   /* struct nlmsghdr */
#define NFGEN_HDR 4u /* struct nfgenmsg */
#define NLA_HDR 4u   /* struct nlattr */
#define ALIGN4(n) (((n) + 3u) & ~(size_t)3u)

/* ------------------------------------------------------------ compose */

/* a request under construction: @len bytes of @size written at @buf */
struct wbuf {
	uint8_t *buf;
	size_t size, len;
	bool full;
};

static void put_host16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, 2);
}

/* an attribute of @n bytes at @v (NULL: a nest opened, its length set by nest_end()).
 * Return: the attribute's offset */
static size_t attr(struct wbuf *w, uint16_t type, const void *v, size_t n)
{
	size_t at = w->len;

	if (w->full || w->size - w->len < ALIGN4(NLA_HDR + n)) {
		w->full = true;
		return at;
	}
	put_host16(w->buf + at, (uint16_t)(NLA_HDR + n));
	put_host16(w->buf + at + 2, type);
	if (n)
		memcpy(w->buf + at + NLA_HDR, v, n);
	memset(w->buf + at + NLA_HDR + n, 0, ALIGN4(NLA_HDR + n) - (NLA_HDR + n));
	w->len += ALIGN4(NLA_HDR + n);
	return at;
}

static void nest_end(struct wbuf *w, size_t at)
{
	if (!w->full)
		put_host16(w->buf + at, (uint16_t)(w->len - at));
}

int gw_ct_get_build(uint8_t *buf, size_t size, uint32_t seq, const struct gw_ct_tuple *reply)
{
	struct wbuf w = {.buf = buf, .size = size};
	int fam = reply->src.family;
	size_t alen = gw_addr_len(fam), tup, ip, pr;
	uint16_t type = (uint16_t)(NFNL_SUBSYS_CTNETLINK << 8 | IPCTNL_MSG_CT_GET);
	uint16_t flags = NLM_F_REQUEST;
	uint16_t sport = htons(reply->sport), dport = htons(reply->dport);
	uint32_t len;
	uint8_t proto = IPPROTO_UDP;

	if (!alen || reply->dst.family != fam || size < NL_HDR + NFGEN_HDR)
		return -EINVAL;
	memset(buf, 0, NL_HDR + NFGEN_HDR);
	memcpy(buf + 4, &type, 2);
	memcpy(buf + 6, &flags, 2);
	memcpy(buf + 8, &seq, 4);
	buf[NL_HDR] = (uint8_t)fam; /* nfgen_family */
	buf[NL_HDR + 1] = NFNETLINK_V0;
	w.len = NL_HDR + NFGEN_HDR;
	tup = attr(&w, CTA_TUPLE_REPLY | NLA_F_NESTED, NULL, 0);
	ip = attr(&w, CTA_TUPLE_IP | NLA_F_NESTED, NULL, 0);
	attr(&w, fam == AF_INET ? CTA_IP_V4_SRC : CTA_IP_V6_SRC, reply->src.a, alen);
	attr(&w, fam == AF_INET ? CTA_IP_V4_DST : CTA_IP_V6_DST, reply->dst.a, alen);
	nest_end(&w, ip);
	pr = attr(&w, CTA_TUPLE_PROTO | NLA_F_NESTED, NULL, 0);
	attr(&w, CTA_PROTO_NUM, &proto, 1);
	attr(&w, CTA_PROTO_SRC_PORT, &sport, 2);
	attr(&w, CTA_PROTO_DST_PORT, &dport, 2);
	nest_end(&w, pr);
	nest_end(&w, tup);
	if (w.full)
		return -EINVAL;
	len = (uint32_t)w.len;
	memcpy(buf, &len, 4);
	return (int)w.len;
}

/* ------------------------------------------------------------ parse */

/* the next attribute of [@p, @p + @n) at *@off: its type (flags masked off), value and length.
 * Return: false at the end or on a malformed one (*@bad set) */
static bool next_attr(const uint8_t *p, size_t n, size_t *off, uint16_t *type, const uint8_t **v,
		      size_t *vlen, bool *bad)
{
	uint16_t alen, t;

	if (*off >= n)
		return false;
	if (n - *off < NLA_HDR) {
		*bad = true;
		return false;
	}
	memcpy(&alen, p + *off, 2);
	memcpy(&t, p + *off + 2, 2);
	if (alen < NLA_HDR || alen > n - *off) {
		*bad = true;
		return false;
	}
	*type = t & NLA_TYPE_MASK;
	*v = p + *off + NLA_HDR;
	*vlen = alen - NLA_HDR;
	*off += ALIGN4(alen) < n - *off ? ALIGN4(alen) : n - *off;
	return true;
}

/* CTA_TUPLE_IP's nest into @t. Return: 0, or -1 when malformed or incomplete */
static int parse_ip(const uint8_t *p, size_t n, struct gw_ct_tuple *t)
{
	size_t off = 0, vlen;
	const uint8_t *v;
	uint16_t type;
	bool bad = false;
	unsigned seen = 0;

	while (next_attr(p, n, &off, &type, &v, &vlen, &bad)) {
		struct gw_addr *a = NULL;
		int fam = 0;

		switch (type) {
		case CTA_IP_V4_SRC:
		case CTA_IP_V4_DST:
			fam = AF_INET;
			break;
		case CTA_IP_V6_SRC:
		case CTA_IP_V6_DST:
			fam = AF_INET6;
			break;
		default:
			continue;
		}
		a = (type == CTA_IP_V4_SRC || type == CTA_IP_V6_SRC) ? &t->src : &t->dst;
		if (vlen != gw_addr_len(fam))
			return -1;
		a->family = fam;
		memcpy(a->a, v, vlen);
		seen |= a == &t->src ? 1u : 2u;
	}
	return bad || seen != 3 || t->src.family != t->dst.family ? -1 : 0;
}

/* CTA_TUPLE_PROTO's nest into @t (UDP only). Return: 0, or -1 */
static int parse_proto(const uint8_t *p, size_t n, struct gw_ct_tuple *t)
{
	size_t off = 0, vlen;
	const uint8_t *v;
	uint16_t type, port;
	bool bad = false;
	unsigned seen = 0;

	while (next_attr(p, n, &off, &type, &v, &vlen, &bad)) {
		switch (type) {
		case CTA_PROTO_NUM:
			if (vlen != 1 || v[0] != IPPROTO_UDP)
				return -1;
			seen |= 1;
			break;
		case CTA_PROTO_SRC_PORT:
		case CTA_PROTO_DST_PORT:
			if (vlen != 2)
				return -1;
			memcpy(&port, v, 2);
			if (type == CTA_PROTO_SRC_PORT)
				t->sport = ntohs(port);
			else
				t->dport = ntohs(port);
			seen |= type == CTA_PROTO_SRC_PORT ? 2u : 4u;
			break;
		default:
			break;
		}
	}
	return bad || seen != 7 ? -1 : 0;
}

/* a CTA_TUPLE_ORIG nest into @t. Return: 0, or -1 */
static int parse_tuple(const uint8_t *p, size_t n, struct gw_ct_tuple *t)
{
	size_t off = 0, vlen;
	const uint8_t *v;
	uint16_t type;
	bool bad = false;
	unsigned seen = 0;

	while (next_attr(p, n, &off, &type, &v, &vlen, &bad)) {
		if (type == CTA_TUPLE_IP) {
			if (parse_ip(v, vlen, t))
				return -1;
			seen |= 1;
		} else if (type == CTA_TUPLE_PROTO) {
			if (parse_proto(v, vlen, t))
				return -1;
			seen |= 2;
		}
	}
	return bad || seen != 3 ? -1 : 0;
}

enum gw_ct_result gw_ct_get_parse(const uint8_t *buf, size_t len, uint32_t seq,
				  struct gw_ct_tuple *orig, int *err)
{
	uint32_t mlen, mseq;
	uint16_t type;
	size_t off, vlen;
	const uint8_t *v;
	uint16_t atype;
	bool bad = false;

	if (len < NL_HDR)
		return GW_CT_MALFORMED;
	memcpy(&mlen, buf, 4);
	memcpy(&type, buf + 4, 2);
	memcpy(&mseq, buf + 8, 4);
	if (mlen < NL_HDR || mlen > len || mseq != seq)
		return GW_CT_MALFORMED;
	if (type == NLMSG_ERROR) {
		int32_t e;

		if (mlen < NL_HDR + 4)
			return GW_CT_MALFORMED;
		memcpy(&e, buf + NL_HDR, 4);
		if (e >= 0 || e < -4095)
			return GW_CT_MALFORMED; /* an ack was not asked for */
		*err = e;
		return GW_CT_ERROR;
	}
	if (type != (NFNL_SUBSYS_CTNETLINK << 8 | IPCTNL_MSG_CT_NEW) || mlen < NL_HDR + NFGEN_HDR)
		return GW_CT_MALFORMED;
	off = NL_HDR + NFGEN_HDR;
	while (next_attr(buf, mlen, &off, &atype, &v, &vlen, &bad)) {
		if (atype != CTA_TUPLE_ORIG)
			continue;
		memset(orig, 0, sizeof(*orig));
		return parse_tuple(v, vlen, orig) ? GW_CT_MALFORMED : GW_CT_OK;
	}
	return GW_CT_MALFORMED;
}

/* ------------------------------------------------------------ the round trip */

int gw_ct_open(void)
{
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int ret = -errno;

		close(fd);
		return ret;
	}
	return fd;
}

int gw_ct_lookup(int fd, uint32_t seq, const struct gw_ct_tuple *reply, struct gw_ct_tuple *orig)
{
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	uint8_t req[GW_CT_REQ_MAX];
	uint8_t ans[4096];
	int n = gw_ct_get_build(req, sizeof(req), seq, reply), err = 0;
	ssize_t got;

	if (n < 0)
		return n;
	if (sendto(fd, req, (size_t)n, 0, (struct sockaddr *)&kernel, sizeof(kernel)) != n)
		return errno ? -errno : -EIO;
	for (int tries = 0; tries < 4; tries++) {
		got = recv(fd, ans, sizeof(ans), MSG_DONTWAIT);
		if (got < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		switch (gw_ct_get_parse(ans, (size_t)got, seq, orig, &err)) {
		case GW_CT_OK:
			return 0;
		case GW_CT_ERROR:
			return err;
		case GW_CT_MALFORMED:
			continue; /* a stale answer to an earlier request: read on */
		}
	}
	return -EBADMSG;
}

/* privsep.c - the privileged parent hands the worker its listening sockets
 * over a SOCK_SEQPACKET socketpair: one typed, size-checked message with the
 * descriptors attached (SCM_RIGHTS). The worker has dropped its privileges
 * before it receives anything; a message that is not exactly right is fatal. */
#include "gateway/gw.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* the slots of struct gw_fds, in message order */
static int *slot(struct gw_fds *fds, unsigned kind)
{
	int *const v[GW_PRIV_KINDS] = {
	    &fds->transparent[0], &fds->transparent[1], &fds->proxy[0],
	    &fds->proxy[1],	  &fds->dns_udp[0],	&fds->dns_udp[1],
	    &fds->dns_tcp[0],	  &fds->dns_tcp[1],	&fds->ctl,
	};

	return kind < GW_PRIV_KINDS ? v[kind] : NULL;
}

/* what each slot must be: socket type and family (0: AF_INET or AF_INET6 by slot) */
static const struct {
	int type;
	int family;
} want[GW_PRIV_KINDS] = {
    {SOCK_STREAM, AF_INET},  {SOCK_STREAM, AF_INET6}, {SOCK_STREAM, AF_INET},
    {SOCK_STREAM, AF_INET6}, {SOCK_DGRAM, AF_INET},   {SOCK_DGRAM, AF_INET6},
    {SOCK_STREAM, AF_INET},  {SOCK_STREAM, AF_INET6}, {SOCK_STREAM, AF_UNIX},
};

int gw_priv_check(const struct gw_priv_msg *m, size_t len, unsigned nfds)
{
	unsigned seen = 0;

	if (len != sizeof(*m) || m->magic != GW_PRIV_MAGIC || m->version != 1 ||
	    m->type != GW_PRIV_LISTENERS || m->count != nfds || m->count == 0 ||
	    m->count > GW_PRIV_KINDS)
		return -EBADMSG;
	for (unsigned i = 0; i < m->count; i++) {
		if (m->kinds[i] >= GW_PRIV_KINDS || (seen & (1u << m->kinds[i])))
			return -EBADMSG;
		seen |= 1u << m->kinds[i];
	}
	for (unsigned i = m->count; i < GW_PRIV_KINDS; i++)
		if (m->kinds[i] != 0xff)
			return -EBADMSG;
	return 0;
}

int gw_priv_send_fds(int sock, struct gw_fds *fds)
{
	struct gw_priv_msg m = {.magic = GW_PRIV_MAGIC, .version = 1, .type = GW_PRIV_LISTENERS};
	union {
		char buf[CMSG_SPACE(sizeof(int) * GW_PRIV_KINDS)];
		struct cmsghdr align;
	} cbuf;
	int v[GW_PRIV_KINDS];
	struct iovec iov = {.iov_base = &m, .iov_len = sizeof(m)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf.buf};
	struct cmsghdr *cm;

	memset(m.kinds, 0xff, sizeof(m.kinds));
	memset(&cbuf, 0, sizeof(cbuf));
	for (unsigned k = 0; k < GW_PRIV_KINDS; k++)
		if (*slot(fds, k) >= 0) {
			m.kinds[m.count] = (uint8_t)k;
			v[m.count++] = *slot(fds, k);
		}
	if (!m.count)
		return -EINVAL;
	mh.msg_controllen = CMSG_SPACE(sizeof(int) * m.count);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * m.count);
	memcpy(CMSG_DATA(cm), v, sizeof(int) * m.count);
	if (sendmsg(sock, &mh, MSG_NOSIGNAL) != (ssize_t)sizeof(m))
		return -errno ? -errno : -EIO;
	return 0;
}

int gw_priv_recv_fds(int sock, struct gw_fds *fds, struct wd_err *err)
{
	struct gw_priv_msg m;
	union {
		char buf[CMSG_SPACE(sizeof(int) * GW_PRIV_KINDS)];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = {.iov_base = &m, .iov_len = sizeof(m)};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = cbuf.buf,
			    .msg_controllen = sizeof(cbuf.buf)};
	struct timeval tv = {.tv_sec = 30};
	int v[GW_PRIV_KINDS];
	unsigned nfds = 0;
	ssize_t n;
	int r = -EBADMSG;

	for (int i = 0; i < 2; i++) {
		fds->transparent[i] = fds->proxy[i] = fds->dns_udp[i] = fds->dns_tcp[i] = -1;
	}
	fds->ctl = -1;
	setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	if (n < 0)
		return wd_err_set(err, -errno, "receiving the sockets from the parent: %s",
				  strerror(errno));
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		size_t k;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS || nfds)
			goto bad;
		k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		if (k > GW_PRIV_KINDS)
			goto bad;
		memcpy(v, CMSG_DATA(cm), k * sizeof(int));
		nfds = (unsigned)k;
	}
	if ((mh.msg_flags & (MSG_CTRUNC | MSG_TRUNC)) || gw_priv_check(&m, (size_t)n, nfds))
		goto bad;
	for (unsigned i = 0; i < nfds; i++) {
		int type = 0, family = 0;
		socklen_t l1 = sizeof(type), l2 = sizeof(family);

		if (getsockopt(v[i], SOL_SOCKET, SO_TYPE, &type, &l1) ||
		    getsockopt(v[i], SOL_SOCKET, SO_DOMAIN, &family, &l2) ||
		    type != want[m.kinds[i]].type || family != want[m.kinds[i]].family)
			goto bad;
	}
	for (unsigned i = 0; i < nfds; i++) {
		*slot(fds, m.kinds[i]) = v[i];
		v[i] = -1;
	}
	return 0;
bad:
	for (unsigned i = 0; i < nfds; i++)
		if (v[i] >= 0)
			close(v[i]);
	return wd_err_set(err, r, "malformed message from the parent");
}

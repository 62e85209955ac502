/* privio.c - the parent <-> worker channel's I/O and what the kernel says of its descriptors:
 * the descriptor handoff sent and received (each descriptor must be of the kind its slot says),
 * the one collector of SCM_RIGHTS, a daemon-mode request sent with its two descriptors, a
 * network namespace checked against the uid that passed it, a client connection's credentials
 * read off the control socket. The messages themselves are privsep.c's (pure). */
#include "gateway/privsep.h"

#include <errno.h>
#include <fcntl.h>
#ifdef __linux__
#include <linux/netlink.h>
#include <linux/nsfs.h>
#include <sched.h>
#include <sys/ioctl.h>
#endif
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

/* the slots of struct gw_fds, in message order */
static int *slot(struct gw_fds *fds, unsigned kind)
{
	int *const v[GW_PRIV_KINDS] = {
	    &fds->transparent[0], &fds->transparent[1], &fds->proxy[0],
	    &fds->proxy[1],	  &fds->dns_udp[0],	&fds->dns_udp[1],
	    &fds->dns_tcp[0],	  &fds->dns_tcp[1],	&fds->ctl,
	    &fds->audit,	  &fds->nflog,		&fds->udp[0],
	    &fds->udp[1],
	};

	return kind < GW_PRIV_KINDS ? v[kind] : NULL;
}

#ifdef __linux__
/* what each slot must be: socket type and family; type 0: a regular file
 * open for appending (the audit log) */
static const struct {
	int type;
	int family;
} want[GW_PRIV_KINDS] = {
    {SOCK_STREAM, AF_INET}, {SOCK_STREAM, AF_INET6},
    {SOCK_STREAM, AF_INET}, {SOCK_STREAM, AF_INET6},
    {SOCK_DGRAM, AF_INET},  {SOCK_DGRAM, AF_INET6},
    {SOCK_STREAM, AF_INET}, {SOCK_STREAM, AF_INET6},
    {SOCK_STREAM, AF_UNIX}, {0, 0},
    {SOCK_RAW, AF_NETLINK}, {SOCK_DGRAM, AF_INET},
    {SOCK_DGRAM, AF_INET6},
};

/* does descriptor @fd fit slot @kind? */
static bool fits(int fd, unsigned kind)
{
	int type = 0, family = 0, proto = 0;
	socklen_t l1 = sizeof(type), l2 = sizeof(family), l3 = sizeof(proto);

	if (!want[kind].type) {
		struct stat st;
		int fl = fcntl(fd, F_GETFL);

		return !fstat(fd, &st) && S_ISREG(st.st_mode) && fl >= 0 && (fl & O_APPEND) &&
		       (fl & O_ACCMODE) != O_RDONLY;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l1) ||
	    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &family, &l2) || type != want[kind].type ||
	    family != want[kind].family)
		return false;
	if (family == AF_NETLINK &&
	    (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &l3) || proto != NETLINK_NETFILTER))
		return false;
	return true;
}

#endif /* __linux__ */

int gw_priv_send_fds(int sock, struct gw_fds *fds)
{
	struct gw_priv_msg m = {
	    .magic = GW_PRIV_MAGIC, .version = GW_PRIV_VERSION, .type = GW_PRIV_LISTENERS};
	int v[GW_PRIV_KINDS];
	ssize_t sent;

	memset(m.kinds, 0xff, sizeof(m.kinds));
	for (unsigned k = 0; k < GW_PRIV_KINDS; k++)
		if (*slot(fds, k) >= 0) {
			m.kinds[m.count] = (uint8_t)k;
			v[m.count++] = *slot(fds, k);
		}
	if (!m.count)
		return -EINVAL;
	sent = wd_send_fds(sock, &m, sizeof(m), v, m.count, 0);
	if (sent < 0)
		return (int)sent;
	return sent == (ssize_t)sizeof(m) ? 0 : -EIO;
}

int gw_priv_take_fds(struct msghdr *mh, int *fd, size_t max)
{
	bool bad = mh->msg_flags & MSG_CTRUNC;
	size_t took = 0, at = 0;

	if (max > sizeof(took) * 8)
		return -EINVAL;
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		size_t k = cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS
			       ? (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int)
			       : 0;
		const uint8_t *data = CMSG_DATA(cm);

		if (!k)
			bad = true;
		for (size_t i = 0; i < k; i++) {
			int v;

			memcpy(&v, data + i * sizeof(int), sizeof(int));
#ifndef MSG_CMSG_CLOEXEC
			/* macOS: recvmsg() has no flag for it; close-on-exec from here on */
			fcntl(v, F_SETFD, FD_CLOEXEC);
#endif
			while (at < max && fd[at] >= 0)
				at++;
			if (at == max) {
				close(v);
				bad = true;
				continue;
			}
			fd[at] = v;
			took |= (size_t)1 << at; /* max is small: a bit a slot */
		}
	}
	if (!bad) {
		size_t n = 0;

		for (size_t i = 0; i < max; i++)
			n += (took >> i) & 1;
		return (int)n;
	}
	for (size_t i = 0; i < max; i++)
		if ((took >> i) & 1)
			wd_closep(&fd[i]);
	return -EBADMSG;
}

/* the worker's start, the namespace check and the peer's credentials are Linux's (privilege
 * separation, network namespaces, SO_PEERCRED); a proxy-only build (macOS) has neither a
 * privileged parent nor namespaces, and refuses a namespace sent with a register */
#ifdef __linux__
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
	int r;

	gw_fds_init(fds);
	setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
	if (n < 0)
		return wd_err_set(err, -errno, "receiving the sockets from the parent: %s",
				  strerror(errno));
	if (n == 0) /* the parent gave up (it says why) and closed the channel */
		return wd_err_set(err, -EPIPE,
				  "the parent stopped before handing over the sockets");
	for (unsigned i = 0; i < GW_PRIV_KINDS; i++)
		v[i] = -1;
	r = gw_priv_take_fds(&mh, v, GW_PRIV_KINDS);
	if (r < 0)
		return wd_err_set(err, r, "malformed message from the parent");
	nfds = (unsigned)r;
	r = -EBADMSG;
	if ((mh.msg_flags & MSG_TRUNC) || gw_priv_check(&m, (size_t)n, nfds))
		goto bad;
	for (unsigned i = 0; i < nfds; i++)
		if (!fits(v[i], m.kinds[i]))
			goto bad;
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

#endif /* __linux__ */

int gw_priv_send_netns(int sock, const struct gw_priv_netns *m, int fd, int client)
{
	const int v[2] = {fd, client};
	ssize_t n = wd_send_fds(sock, m, sizeof(*m), v, 2, MSG_DONTWAIT);

	if (n < 0)
		return (int)n;
	return n == (ssize_t)sizeof(*m) ? 0 : -EIO;
}

#ifdef __linux__

int gw_netns_check(int fd, uid_t uid, char *why, size_t size)
{
	struct stat given, own;
	uid_t owner = (uid_t)-1;
	int type, userns, ret = 0;

	type = ioctl(fd, NS_GET_NSTYPE);
	if (type < 0) {
		snprintf(why, size, "the descriptor sent is not a namespace (%s)", strerror(errno));
		return -EINVAL;
	}
	if (type != CLONE_NEWNET) {
		snprintf(why, size,
			 "the descriptor sent is a namespace, but not a network namespace");
		return -EINVAL;
	}
	/* the user namespace that owns it, and that one's owner */
	userns = ioctl(fd, NS_GET_USERNS);
	if (userns < 0) {
		snprintf(why, size,
			 "the network namespace sent is not owned by uid %u (its user namespace "
			 "is out of the gateway's reach: %s)",
			 (unsigned)uid, strerror(errno));
		return -EPERM;
	}
	if (ioctl(userns, NS_GET_OWNER_UID, &owner) < 0 || fstat(userns, &given) < 0 ||
	    stat("/proc/self/ns/user", &own) < 0) {
		ret = -errno;
		snprintf(why, size, "reading the owner of the namespace sent: %s", strerror(errno));
		goto out;
	}
	/* only one of a user namespace of the caller's own, never the host's, whoever asks:
	 * daemon mode is a user's (root's runs build their own network); the parent checks again
	 * with the uid it read itself off the client's connection (gw_priv_peer()) */
	if (owner != uid || (given.st_dev == own.st_dev && given.st_ino == own.st_ino)) {
		snprintf(why, size,
			 "the network namespace sent is not owned by uid %u (its user namespace "
			 "belongs to uid %u%s): the gateway plumbs a user's own namespaces only",
			 (unsigned)uid, (unsigned)owner,
			 given.st_dev == own.st_dev && given.st_ino == own.st_ino ? ", the host's"
										  : "");
		ret = -EPERM;
	}
out:
	close(userns);
	return ret;
}

int gw_priv_peer(int client, const char *ctl_path, struct ucred *cred, char *why, size_t size)
{
	struct sockaddr_un self;
	socklen_t sl = sizeof(self), cl = sizeof(*cred), il = sizeof(int);
	int type = 0, listening = 0;

	memset(&self, 0, sizeof(self));
	if (getsockopt(client, SOL_SOCKET, SO_TYPE, &type, &il) < 0 || type != SOCK_STREAM ||
	    getsockname(client, (struct sockaddr *)&self, &sl) < 0 || self.sun_family != AF_UNIX) {
		snprintf(why, size, "the client's descriptor is not a unix stream socket");
		return -EPERM;
	}
	il = sizeof(int);
	if (getsockopt(client, SOL_SOCKET, SO_ACCEPTCONN, &listening, &il) < 0 || listening) {
		snprintf(why, size, "the client's descriptor is a listening socket");
		return -EPERM;
	}
	/* an accepted connection's own address is the listener's path; a socketpair's is empty,
	 * a socket connected from elsewhere has its own (or none) */
	if (sl <= offsetof(struct sockaddr_un, sun_path) || !self.sun_path[0] ||
	    strnlen(self.sun_path, sizeof(self.sun_path)) == sizeof(self.sun_path) ||
	    strcmp(self.sun_path, ctl_path)) {
		snprintf(why, size,
			 "the client's descriptor is not a connection accepted on the control "
			 "socket %s",
			 ctl_path);
		return -EPERM;
	}
	if (getsockopt(client, SOL_SOCKET, SO_PEERCRED, cred, &cl) < 0) {
		int r = -errno;

		snprintf(why, size, "reading the client's credentials: %s", strerror(errno));
		return r;
	}
	return 0;
}
#else
int gw_netns_check(int fd, uid_t uid, char *why, size_t size)
{
	(void)fd;
	(void)uid;
	snprintf(why, size, "network namespaces are Linux's: this gateway serves proxy mode only");
	return -ENOTSUP;
}
#endif /* __linux__ */

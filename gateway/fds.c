/* fds.c - the gateway's listening sockets, opened by the privileged parent
 * before the worker drops its privileges: transparent, proxy and DNS (UDP and
 * TCP) for each family, and the control socket. */
#include "gateway/addr.h"
#include "gateway/fds.h"
#include "gateway/sock.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#ifdef __linux__
#include <linux/netlink.h>
#endif
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

void gw_fds_init(struct gw_fds *fds)
{
	for (int i = 0; i < 2; i++)
		fds->transparent[i] = fds->proxy[i] = fds->dns_udp[i] = fds->dns_tcp[i] =
		    fds->udp[i] = -1;
	fds->ctl = fds->audit = fds->nflog = fds->ct = -1;
}

void gw_fds_close(struct gw_fds *fds)
{
	for (int i = 0; i < 2; i++) {
		wd_closep(&fds->transparent[i]);
		wd_closep(&fds->proxy[i]);
		wd_closep(&fds->dns_udp[i]);
		wd_closep(&fds->dns_tcp[i]);
		wd_closep(&fds->udp[i]);
	}
	wd_closep(&fds->ctl);
	wd_closep(&fds->audit);
	wd_closep(&fds->nflog);
	wd_closep(&fds->ct);
}

/* The options every listening socket gets (before bind for IPV6_V6ONLY, before listen for
 * the buffers' window scale): those of the sockets the gateway makes and those it inherits. */
static void tune(int fd, int family, int type, int sockbuf)
{
	int one = 1;

#ifdef _WIN32
	/* Winsock's SO_REUSEADDR lets another socket bind a port in use: the port kept ours */
	gw_sock_setopt(fd, SOL_SOCKET, SO_EXCLUSIVEADDRUSE, &one, sizeof(one));
#else
	gw_sock_setopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
#endif
	if (family == AF_INET6)
		gw_sock_setopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	/* Nagle off on every accepted connection: Linux copies the listener's
	 * TCP_NODELAY into the sockets accept() returns, so this costs no
	 * syscall per connection. A relay must not hold back a small segment
	 * waiting for the ACK of the previous one: the sender already chose
	 * when to write. */
	if (type == SOCK_STREAM)
		gw_sock_setopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/* Fixed socket buffers (limits.socket_buffer_kib), inherited the same way:
	 * autotuning would let each socket of a client that writes without
	 * reading (or a server that does) grow to tcp_rmem/tcp_wmem's maximum,
	 * megabytes of the host's TCP memory per socket. Set before listen(), so
	 * the window scale offered fits them. */
	if (type == SOCK_STREAM && sockbuf > 0) {
		gw_sock_setopt(fd, SOL_SOCKET, SO_RCVBUF, &sockbuf, sizeof(sockbuf));
		gw_sock_setopt(fd, SOL_SOCKET, SO_SNDBUF, &sockbuf, sizeof(sockbuf));
	}
	if (type == SOCK_DGRAM) {
		if (family == AF_INET)
			gw_sock_setopt(fd, IPPROTO_IP, IP_PKTINFO, &one, sizeof(one));
		else
			gw_sock_setopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof(one));
	}
}

static int inet_socket(const char *addr, uint16_t port, int type, int sockbuf, int *ret_fd,
		       struct wd_err *err)
{
	struct gw_addr a;
	struct sockaddr_storage ss;
	socklen_t sl;
	int fd, r;

	if (!*addr)
		return 0; /* this family is off (listen.v4/v6: "") */
	if (gw_addr_parse(addr, &a))
		return wd_err_set(err, -EINVAL, "bad listen address %s", addr);
	fd = wd_socket_nb(a.family, type);
	if (fd < 0) {
		if (fd == -EAFNOSUPPORT && a.family == AF_INET6)
			return 0; /* no IPv6 here: IPv4 only */
		return wd_err_set(err, fd, "socket: %s", strerror(-fd));
	}
	tune(fd, a.family, type, sockbuf);
	sl = gw_addr_to_sa(&a, port, &ss);
	if (gw_sock_bind(fd, (struct sockaddr *)&ss, sl) < 0) {
		r = wd_err_set(err, -errno, "bind %s%s%s:%u: %s", a.family == AF_INET6 ? "[" : "",
			       addr, a.family == AF_INET6 ? "]" : "", port, strerror(errno));
		gw_sock_close(fd);
		return r;
	}
	if (type == SOCK_STREAM && gw_sock_listen(fd, 4096) < 0) {
		r = wd_err_set(err, -errno, "listen on port %u: %s", port, strerror(errno));
		gw_sock_close(fd);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

static int ctl_socket(const char *path, int *ret_fd, struct wd_err *err)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	char dir[sizeof(sun.sun_path)];
	struct stat st;
	int fd, r;

	if (strlen(path) >= sizeof(sun.sun_path))
		return wd_err_set(err, -ENAMETOOLONG, "control socket path too long: %s", path);
	strcpy(sun.sun_path, path);
	strcpy(dir, path);
	r = wd_mkdir_p(dirname(dir), 0755);
	if (r)
		return wd_err_set(err, r, "cannot create the folder of %s: %s", path, strerror(-r));
	fd = wd_socket_nb(AF_UNIX, SOCK_STREAM);
	if (fd < 0)
		return wd_err_set(err, fd, "socket: %s", strerror(-fd));
	if (!lstat(path, &st)) {
		int probe;

		if (!S_ISSOCK(st.st_mode)) {
			close(fd);
			return wd_err_set(err, -EEXIST, "%s exists and is not a socket", path);
		}
		/* a live gateway answers: leave it alone; a stale socket is replaced */
		probe = wd_socket_nb(AF_UNIX, SOCK_STREAM);
		/* a blocking connect: a gateway whose backlog is full is still a live one */
		if (probe >= 0)
			fcntl(probe, F_SETFL, 0);
		if (probe >= 0 && !connect(probe, (struct sockaddr *)&sun, sizeof(sun))) {
			close(probe);
			close(fd);
			return wd_err_set(err, -EADDRINUSE, "another gateway is listening on %s",
					  path);
		}
		if (probe >= 0)
			close(probe);
		unlink(path);
	}
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		r = wd_err_set(err, -errno, "bind %s: %s", path, strerror(errno));
		close(fd);
		return r;
	}
	/* every user may connect; each request is checked against SO_PEERCRED */
	if (chmod(path, 0666) < 0 || listen(fd, 64) < 0) {
		r = wd_err_set(err, -errno, "control socket %s: %s", path, strerror(errno));
		close(fd);
		unlink(path);
		return r;
	}
	*ret_fd = fd;
	return 0;
}

int gw_fds_open(const struct wd_gwconf *conf, const char *ctl_path, struct gw_fds *fds,
		struct wd_err *err)
{
	const char *addr[2] = {conf->listen_v4, conf->listen_v6};
	int sb = (int)conf->socket_buffer_kib * 1024;
	/* proxy mode: the proxy port alone (conf.h), on the loopback addresses conf_parse()
	 * allows it */
	bool all = conf->mode != WD_GW_PROXY;
	int r = 0;

	gw_fds_init(fds);
	for (int i = 0; i < 2 && !r; i++) {
		r = all ? inet_socket(addr[i], conf->port_transparent, SOCK_STREAM, sb,
				      &fds->transparent[i], err)
			: 0;
		r = r ? r
		      : inet_socket(addr[i], conf->port_proxy, SOCK_STREAM, sb, &fds->proxy[i],
				    err);
		r = r || !all ? r
			      : inet_socket(addr[i], conf->port_dns, SOCK_DGRAM, 0,
					    &fds->dns_udp[i], err);
		r = r || !all ? r
			      : inet_socket(addr[i], conf->port_dns, SOCK_STREAM, sb,
					    &fds->dns_tcp[i], err);
		r = r || !all
			? r
			: inet_socket(addr[i], conf->port_udp, SOCK_DGRAM, 0, &fds->udp[i], err);
	}
	if (!r && ctl_path && *ctl_path)
		r = ctl_socket(ctl_path, &fds->ctl, err);
	if (r)
		gw_fds_close(fds);
	return r;
}

/* The slot of an inherited socket: by type and local port; NULL when it fits none (in proxy
 * mode, only the proxy port's, bound to a loopback address). */
static int *inherited_slot(const struct wd_gwconf *conf, struct gw_fds *fds, int type, int fam,
			   const struct gw_addr *a, uint16_t port)
{
	int f = fam == AF_INET6;

	if (conf->mode == WD_GW_PROXY)
		return type == SOCK_STREAM && port == conf->port_proxy &&
			       gw_addr_classify(a) == GW_ADDR_LOOPBACK
			   ? &fds->proxy[f]
			   : NULL;
	if (type == SOCK_STREAM && port == conf->port_transparent)
		return &fds->transparent[f];
	if (type == SOCK_STREAM && port == conf->port_proxy)
		return &fds->proxy[f];
	if (type == SOCK_STREAM && port == conf->port_dns)
		return &fds->dns_tcp[f];
	if (type == SOCK_DGRAM && port == conf->port_dns)
		return &fds->dns_udp[f];
	if (type == SOCK_DGRAM && port == conf->port_udp)
		return &fds->udp[f];
	return NULL;
}

int gw_fds_inherit(const struct wd_gwconf *conf, int first, int n, struct gw_fds *fds,
		   struct wd_err *err)
{
	int sb = (int)conf->socket_buffer_kib * 1024;

	for (int fd = first; fd < first + n; fd++) {
		int type = 0, fam = 0, acc = 0, v6only = 0, fl, *slot;
		socklen_t l1 = sizeof(type), l3 = sizeof(acc), l4 = sizeof(v6only);
		struct sockaddr_storage ss = {0};
		socklen_t sl = sizeof(ss);
		struct gw_addr la = {0};
		uint16_t port;

#ifdef __linux__
		socklen_t l2 = sizeof(fam);

		if (!gw_sock_getopt(fd, SOL_SOCKET, SO_DOMAIN, &fam, &l2) && fam == AF_NETLINK) {
			int proto = 0;
			socklen_t l5 = sizeof(proto);

			/* the NFLOG socket of a rootless run's table, bound there; then the UDP
			 * relay's conntrack socket of the same namespace */
			if (gw_sock_getopt(fd, SOL_SOCKET, SO_PROTOCOL, &proto, &l5) ||
			    proto != NETLINK_NETFILTER || fds->ct >= 0 || conf->mode == WD_GW_PROXY)
				return wd_err_set(err, -EINVAL,
						  "inherited descriptor %d is a netlink socket "
						  "but not the NFLOG or the conntrack socket",
						  fd);
			fl = fcntl(fd, F_GETFL);
			if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
			    fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
				return wd_err_set(err, -errno, "inherited descriptor %d: %s", fd,
						  strerror(errno));
			*(fds->nflog < 0 ? &fds->nflog : &fds->ct) = fd;
			continue;
		}
#endif
		/* the family of the bound address (macOS has no SO_DOMAIN) */
		fam = gw_sock_getopt(fd, SOL_SOCKET, SO_TYPE, &type, &l1) ||
			      getsockname(fd, (struct sockaddr *)&ss, &sl)
			  ? AF_UNSPEC
			  : ss.ss_family;
		if ((fam != AF_INET && fam != AF_INET6) ||
		    (type != SOCK_STREAM && type != SOCK_DGRAM))
			return wd_err_set(
			    err, -EBADF,
			    "inherited descriptor %d is not an IPv4 or IPv6 TCP or UDP "
			    "socket",
			    fd);
		if (type == SOCK_STREAM &&
		    (gw_sock_getopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &l3) || !acc))
			return wd_err_set(err, -EINVAL, "inherited descriptor %d is not listening",
					  fd);
		/* dual-stack would let one socket answer both families' slots */
		if (fam == AF_INET6 &&
		    (gw_sock_getopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, &l4) || !v6only))
			return wd_err_set(err, -EINVAL,
					  "inherited descriptor %d is an IPv6 socket without "
					  "IPV6_V6ONLY",
					  fd);
		if (gw_addr_from_sa(&ss, &la, &port))
			return wd_err_set(err, -EBADF, "inherited descriptor %d: no address", fd);
		slot = inherited_slot(conf, fds, type, fam, &la, port);
		if (!slot || *slot >= 0)
			return wd_err_set(err, -EINVAL,
					  "inherited descriptor %d (%s port %u) fits no free "
					  "listener slot of the config's ports",
					  fd, type == SOCK_STREAM ? "TCP" : "UDP", port);
		fl = wd_socket_adopt(fd);
		if (fl)
			return wd_err_set(err, fl, "inherited descriptor %d: %s", fd,
					  strerror(-fl));
		tune(fd, fam, type, sb);
		*slot = fd;
	}
	return 0;
}

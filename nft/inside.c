/* inside.c - what a run's own network namespace gives its gateway (FW_MODE_RUN): the
 * listening sockets at the gateway's addresses, the NFLOG socket of the table's group and the
 * UDP relay's sockets (its listeners, a conntrack socket), made
 * inside by whoever is there with CAP_NET_ADMIN (rootless mode's namespace maker,
 * run/mode_rootless.c; the Docker backend's init, run/docker_init.c) and handed to the gateway
 * outside over SCM_RIGHTS. One list, so both hand over the same sockets in the same order. */
#include "nft/nft.h"

#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

/* One NFULNL_MSG_CONFIG request for @group with one attribute, and its ack (packets of the
 * group that arrive meanwhile are skipped). Return: 0, or a negative errno. */
static int nflog_config(int fd, uint16_t group, uint32_t seq, uint16_t type, const void *a,
			size_t alen)
{
	char req[256], ans[8192];
	struct nlmsghdr *h = mnl_nlmsg_put_header(req);
	struct nfgenmsg *g;

	h->nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG;
	h->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	h->nlmsg_seq = seq;
	g = mnl_nlmsg_put_extra_header(h, sizeof(*g));
	g->nfgen_family = AF_UNSPEC;
	g->version = NFNETLINK_V0;
	g->res_id = htons(group);
	mnl_attr_put(h, type, alen, a);
	if (send(fd, h, h->nlmsg_len, 0) != (ssize_t)h->nlmsg_len)
		return -errno;
	for (int tries = 0; tries < 64; tries++) {
		ssize_t n = recv(fd, ans, sizeof(ans), 0);
		const struct nlmsghdr *r = (const struct nlmsghdr *)ans;
		int left = (int)n;

		if (n < 0)
			return -errno;
		for (; mnl_nlmsg_ok(r, left); r = mnl_nlmsg_next(r, &left))
			if (r->nlmsg_type == NLMSG_ERROR && r->nlmsg_seq == seq &&
			    r->nlmsg_len >= NLMSG_HDRLEN + sizeof(int))
				return ((const struct nlmsgerr *)mnl_nlmsg_get_payload(r))->error;
	}
	return -ETIMEDOUT;
}

int fw_nflog_bind(uint16_t group, struct wd_err *err)
{
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
	struct nfulnl_msg_config_cmd cmd = {.command = NFULNL_CFG_CMD_BIND};
	struct nfulnl_msg_config_mode mode = {.copy_range = htonl(128),
					      .copy_mode = NFULNL_COPY_PACKET};
	uint32_t one = htonl(1);
	struct timeval tv = {.tv_sec = 2};
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER), ret,
	    buf = 16 << 20;

	if (fd < 0)
		return wd_err_set(err, -errno, "NFLOG socket in the run's namespace: %s",
				  strerror(errno));
	ret = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? -errno : 0;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	ret = ret ? ret : nflog_config(fd, group, 1, NFULA_CFG_CMD, &cmd, sizeof(cmd));
	ret = ret ? ret : nflog_config(fd, group, 2, NFULA_CFG_MODE, &mode, sizeof(mode));
	ret = ret ? ret : nflog_config(fd, group, 3, NFULA_CFG_QTHRESH, &one, sizeof(one));
	ret = ret ? ret : nflog_config(fd, group, 4, NFULA_CFG_TIMEOUT, &one, sizeof(one));
	if (ret) {
		close(fd);
		return wd_err_set(err, ret, "binding NFLOG group %u in the run's namespace: %s",
				  group, strerror(-ret));
	}
	tv.tv_sec = 0;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

int fw_run_listeners(const struct fw_config *c, const struct in_addr *gw4,
		     const struct in6_addr *gw6, int fds[FW_RUN_NLISTEN], struct wd_err *err)
{
	const struct {
		int family;
		const void *addr;
		uint16_t port;
		int type;
	} socks[FW_RUN_NLISTEN] = {
	    {AF_INET, gw4, c->port_transparent, SOCK_STREAM},
	    {AF_INET6, gw6, c->port_transparent, SOCK_STREAM},
	    {AF_INET, gw4, c->port_proxy, SOCK_STREAM},
	    {AF_INET6, gw6, c->port_proxy, SOCK_STREAM},
	    {AF_INET, gw4, c->port_dns, SOCK_DGRAM},
	    {AF_INET6, gw6, c->port_dns, SOCK_DGRAM},
	    {AF_INET, gw4, c->port_dns, SOCK_STREAM},
	    {AF_INET6, gw6, c->port_dns, SOCK_STREAM},
	};
	char s[INET6_ADDRSTRLEN];

	for (int i = 0; i < FW_RUN_NLISTEN; i++)
		fds[i] = -1;
	for (int i = 0; i < FW_RUN_NLISTEN; i++) {
		fds[i] =
		    wd_socket_bound(socks[i].family, socks[i].addr, socks[i].port, socks[i].type);
		int ret = fds[i];

		if (ret >= 0)
			continue;
		wd_err_set(err, ret, "binding %s port %u in the run's namespace: %s",
			   inet_ntop(socks[i].family, socks[i].addr, s, sizeof(s)) ? s : "?",
			   socks[i].port, strerror(-ret));
		for (int j = 0; j < i; j++)
			wd_closep(&fds[j]);
		fds[i] = -1;
		return ret;
	}
	return 0;
}

int fw_run_udp_sockets(const struct fw_config *c, const struct in_addr *gw4,
		       const struct in6_addr *gw6, int fds[FW_RUN_NUDP], struct wd_err *err)
{
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
	const void *addr[2] = {gw4, gw6};
	char s[INET6_ADDRSTRLEN];
	int ret = 0;

	for (int i = 0; i < FW_RUN_NUDP; i++)
		fds[i] = -1;
	for (int i = 0; i < 2 && !ret; i++) {
		int family = i ? AF_INET6 : AF_INET;

		fds[i] = wd_socket_bound(family, addr[i], c->port_udp, SOCK_DGRAM);
		if (fds[i] < 0)
			ret =
			    wd_err_set(err, fds[i], "binding %s port %u in the run's namespace: %s",
				       inet_ntop(family, addr[i], s, sizeof(s)) ? s : "?",
				       c->port_udp, strerror(-fds[i]));
	}
	if (!ret) {
		fds[2] = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
		if (fds[2] < 0 || bind(fds[2], (struct sockaddr *)&sa, sizeof(sa)) < 0)
			ret = wd_err_set(err, -errno,
					 "the conntrack socket of the run's namespace: %s",
					 strerror(errno));
	}
	if (ret)
		for (int i = 0; i < FW_RUN_NUDP; i++)
			wd_closep(&fds[i]);
	return ret;
}

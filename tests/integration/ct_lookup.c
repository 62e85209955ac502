/* ct_lookup.c - the UDP relay's conntrack lookup (gateway/ctmsg.c) on a real kernel
 * (tests/integration/udp_conntrack.sh): binds the wildcard address of a family at PORT, takes one
 * datagram that an nft redirect brought there, and asks conntrack for the flow by its reply tuple
 * (the local address and PORT -> the peer's address and port), as the gateway will. Prints one
 * line: "ok dst=ADDRESS dport=PORT wrong=ERRNO" (wrong: the same question with the peer's port
 * off by one, which must find nothing: -2), or "error WHAT". Usage: ct_lookup 4|6 PORT SECONDS */
#include "gateway/ctmsg.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* the datagram's local address, from its IP_PKTINFO / IPV6_PKTINFO */
static int local_addr(struct msghdr *mh, int family, struct gw_addr *out)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (family == AF_INET && c->cmsg_level == IPPROTO_IP &&
		    c->cmsg_type == IP_PKTINFO) {
			struct in_pktinfo pi;

			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			out->family = AF_INET;
			memcpy(out->a, &pi.ipi_addr, 4);
			return 0;
		}
		if (family == AF_INET6 && c->cmsg_level == IPPROTO_IPV6 &&
		    c->cmsg_type == IPV6_PKTINFO) {
			struct in6_pktinfo pi;

			memcpy(&pi, CMSG_DATA(c), sizeof(pi));
			out->family = AF_INET6;
			memcpy(out->a, &pi.ipi6_addr, 16);
			return 0;
		}
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct sockaddr_storage ss = {0}, peer = {0};
	char buf[2048], cbuf[256], at[INET6_ADDRSTRLEN];
	struct iovec iov = {buf, sizeof(buf)};
	struct msghdr mh = {.msg_name = &peer,
			    .msg_namelen = sizeof(peer),
			    .msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = cbuf,
			    .msg_controllen = sizeof(cbuf)};
	struct gw_ct_tuple reply = {0}, orig, other;
	struct pollfd pf;
	int fd, ct = -1, on = 1, family, r, wrong, ret = 1;
	uint16_t port, pport;

	if (argc != 4 || (strcmp(argv[1], "4") && strcmp(argv[1], "6"))) {
		fprintf(stderr, "usage: ct_lookup 4|6 PORT SECONDS\n");
		return 2;
	}
	family = argv[1][0] == '4' ? AF_INET : AF_INET6;
	port = (uint16_t)atoi(argv[2]);
	ss.ss_family = (sa_family_t)family;
	if (family == AF_INET)
		((struct sockaddr_in *)&ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)&ss)->sin6_port = htons(port);
	fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 ||
	    (family == AF_INET6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on))) ||
	    setsockopt(fd, family == AF_INET ? IPPROTO_IP : IPPROTO_IPV6,
		       family == AF_INET ? IP_PKTINFO : IPV6_RECVPKTINFO, &on, sizeof(on)) ||
	    bind(fd, (struct sockaddr *)&ss,
		 family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6))) {
		printf("error bind\n");
		goto out;
	}
	ct = gw_ct_open();
	if (ct < 0) {
		printf("error conntrack socket: %s\n", strerror(-ct));
		goto out;
	}
	printf("listening\n");
	fflush(stdout);
	pf = (struct pollfd){.fd = fd, .events = POLLIN};
	if (poll(&pf, 1, atoi(argv[3]) * 1000) != 1 || recvmsg(fd, &mh, 0) < 0) {
		printf("error no datagram\n");
		goto out;
	}
	if (local_addr(&mh, family, &reply.src) || gw_addr_from_sa(&peer, &reply.dst, &pport) ||
	    reply.dst.family != family) {
		printf("error addresses\n");
		goto out;
	}
	reply.sport = port;
	reply.dport = pport;
	r = gw_ct_lookup(ct, 1, &reply, &orig);
	if (r) {
		printf("error lookup: %s\n", strerror(-r));
		goto out;
	}
	reply.dport = (uint16_t)(pport + 1);
	wrong = gw_ct_lookup(ct, 2, &reply, &other);
	printf("ok dst=%s dport=%u wrong=%d\n", gw_addr_str(&orig.dst, at, sizeof(at)), orig.dport,
	       wrong);
	ret = 0;
out:
	if (ct >= 0)
		close(ct);
	if (fd >= 0)
		close(fd);
	return ret;
}

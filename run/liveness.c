/* run_liveness.c - the check stage of `warden run`: before the program starts, enforcement is
 * shown to be live end to end. The gateway lists the run, and a DNS query sent from a socket
 * opened inside the run's namespace to port 53 of its host-side address is answered: that
 * answer needs the nft redirect, the run's anti-spoof elements and the gateway's DNS front all
 * at once. A pooled network that fails gets its nft elements again, once (the table may have
 * been replaced since it was made).
 *
 * The query comes from the DNS composer of gateway/proto/ (dns_query_compose(), in wd_proto,
 * a library that links nothing but libc), so the launcher builds no DNS message by hand.
 */
#include "gateway/proto/proto.h"
#include "run/internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

int run_liveness_query(uint16_t id, uint8_t *out, size_t size)
{
	return dns_query_compose(id, RUN_LIVENESS_NAME, DNS_TYPE_HTTPS, out, size);
}

bool run_liveness_answers(const uint8_t *q, const uint8_t *ans, size_t len)
{
	return len >= 12 && ans[0] == q[0] && ans[1] == q[1] && (ans[2] & 0x80);
}

struct probe {
	int netns_fd;
	int family;
	int fd; /* out */
	int err;
};

/* A thread enters the run's netns and opens a UDP socket there (sockets keep their netns). */
static void *probe_thread(void *arg)
{
	struct probe *p = arg;

	if (setns(p->netns_fd, CLONE_NEWNET) < 0) {
		p->err = -errno;
		return NULL;
	}
	p->fd = socket(p->family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (p->fd < 0)
		p->err = -errno;
	return NULL;
}

/* One DNS query from inside the run to its host-side address, port 53. Return: 0 answered. */
static int dns_probe(struct run *r, char *why, size_t wsize)
{
	struct probe p = {r->network.net.netns_fd, r->network.host4[0] ? AF_INET : AF_INET6, -1, 0};
	struct sockaddr_storage ss = {0};
	uint8_t q[512], ans[1500];
	socklen_t sl;
	pthread_t t;
	uint16_t id;
	int qlen, ret = -ETIMEDOUT;

	if (r->mode->own_userns) {
		/* made inside by the namespace maker, bound to the program's address (daemon
		 * mode: unbound, the route picks it) */
		p.fd = r->network.rl.probe_fd;
		p.family = AF_INET;
	} else if (pthread_create(&t, NULL, probe_thread, &p) || pthread_join(t, NULL)) {
		snprintf(why, wsize, "cannot start the probe thread");
		return -EAGAIN;
	}
	if (p.err) {
		snprintf(why, wsize, "socket in the run's namespace: %s", strerror(-p.err));
		return p.err;
	}
	if (getrandom(&id, sizeof(id), 0) != sizeof(id))
		id = (uint16_t)getpid();
	qlen = run_liveness_query(id, q, sizeof(q));
	if (qlen < 0) {
		snprintf(why, wsize, "composing the DNS query: %s", strerror(-qlen));
		close(p.fd);
		return qlen;
	}
	if (p.family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(53);
		inet_pton(AF_INET, r->network.host4, &s4->sin_addr);
		sl = sizeof(*s4);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(53);
		inet_pton(AF_INET6, r->network.host6, &s6->sin6_addr);
		sl = sizeof(*s6);
	}
	for (int attempt = 0; attempt < 4 && ret; attempt++) {
		struct pollfd pfd = {p.fd, POLLIN, 0};

		if (sendto(p.fd, q, (size_t)qlen, 0, (struct sockaddr *)&ss, sl) < 0) {
			ret = -errno;
			snprintf(why, wsize, "sending a DNS query to port 53: %s", strerror(errno));
			continue;
		}
		while (poll(&pfd, 1, 250 << attempt) == 1) {
			ssize_t n = recv(p.fd, ans, sizeof(ans), 0);

			if (n > 0 && run_liveness_answers(q, ans, (size_t)n)) {
				ret = 0;
				break;
			}
			if (n < 0) {
				snprintf(why, wsize, "DNS probe: %s", strerror(errno));
				break;
			}
		}
		if (ret == -ETIMEDOUT)
			snprintf(why, wsize, "no DNS answer from inside the run (port 53 of %s)",
				 p.family == AF_INET ? r->network.host4 : r->network.host6);
	}
	if (p.fd != r->network.rl.probe_fd)
		close(p.fd);
	return ret;
}

int run_liveness_check(struct run *r)
{
	char why[512];

	if (!run_gwclient_lists(r))
		return run_fail(r, "check", "see the gateway's log",
				"the gateway does not list run %s after registering it", r->id);
	if (dns_probe(r, why, sizeof(why)) &&
	    (!r->network.pooled || run_network_refresh(r) || dns_probe(r, why, sizeof(why))))
		return run_fail(r, "check",
				"`warden nft audit`; is the gateway's DNS port reachable?",
				"enforcement is not live: %s", why);
	return 0;
}

/* gw_load.c - load helper for the gateway lab tests: an epoll echo server
 * (`serve PORT`) and a client that opens N concurrent connections, sends each
 * its own pseudo-random bytes, half-closes, and checks that exactly the same
 * bytes come back (`client ADDR PORT N BYTES [SECONDS]`). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static void raise_nofile(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* ------------------------------------------------------------ server */

struct econn {
	int fd;
	char buf[65536];
	size_t len, off;
	bool eof;
};

static int serve(int port)
{
	struct sockaddr_in6 sa = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
	int zero = 0, one = 1, lfd, ep;

	raise_nofile();
	lfd = socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (lfd < 0) {
		perror("gw_load socket");
		return 1;
	}
	setsockopt(lfd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 4096)) {
		perror("gw_load serve");
		close(lfd);
		return 1;
	}
	ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
	for (;;) {
		struct epoll_event evs[128];
		int n = epoll_wait(ep, evs, 128, -1);

		for (int i = 0; i < n; i++) {
			struct econn *c = evs[i].data.ptr;

			if (!c) {
				int fd;

				while ((fd = accept4(lfd, NULL, NULL,
						     SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
					c = calloc(1, sizeof(*c));
					c->fd = fd;
					ev.events = EPOLLIN;
					ev.data.ptr = c;
					epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
				}
				continue;
			}
			for (;;) {
				if (c->off < c->len) {
					ssize_t w = write(c->fd, c->buf + c->off, c->len - c->off);

					if (w < 0 && errno == EAGAIN)
						break;
					if (w < 0)
						goto drop;
					c->off += (size_t)w;
					continue;
				}
				c->off = c->len = 0;
				if (c->eof) {
					shutdown(c->fd, SHUT_WR);
					goto drop;
				}
				ssize_t r = read(c->fd, c->buf, sizeof(c->buf));

				if (r > 0) {
					c->len = (size_t)r;
				} else if (r == 0) {
					c->eof = true;
				} else if (errno == EAGAIN) {
					break;
				} else {
					goto drop;
				}
			}
			ev.events = c->off < c->len ? EPOLLOUT : EPOLLIN;
			ev.data.ptr = c;
			epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
			continue;
		drop:
			close(c->fd);
			free(c);
		}
	}
}

/* ------------------------------------------------------------ client */

struct cconn {
	int fd;
	uint64_t tx_rng, rx_rng;
	size_t sent, got;
	bool shut, done, ok;
};

static uint8_t next_byte(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (uint8_t)(*s >> 24);
}

static int client(const char *addr, int port, int n, size_t bytes, int seconds)
{
	struct sockaddr_storage ss = {0};
	socklen_t sl;
	struct cconn *cs = calloc((size_t)n, sizeof(*cs));
	int ep = epoll_create1(EPOLL_CLOEXEC), left = n, good = 0;
	time_t end = time(NULL) + seconds;

	raise_nofile();
	if (strchr(addr, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		inet_pton(AF_INET6, addr, &s6->sin6_addr);
		sl = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		inet_pton(AF_INET, addr, &s4->sin_addr);
		sl = sizeof(*s4);
	}
	/* open every connection first: they are all in flight at once */
	for (int i = 0; i < n; i++) {
		struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.ptr = &cs[i]};

		cs[i].tx_rng = cs[i].rx_rng = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
		cs[i].fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (cs[i].fd < 0 ||
		    (connect(cs[i].fd, (struct sockaddr *)&ss, sl) && errno != EINPROGRESS)) {
			cs[i].done = true;
			left--;
			continue;
		}
		epoll_ctl(ep, EPOLL_CTL_ADD, cs[i].fd, &ev);
	}
	while (left > 0 && time(NULL) < end) {
		struct epoll_event evs[256];
		int k = epoll_wait(ep, evs, 256, 1000);

		for (int i = 0; i < k; i++) {
			struct cconn *c = evs[i].data.ptr;
			uint8_t buf[16384];

			if (c->done)
				continue;
			if (evs[i].events & (EPOLLERR)) {
				c->done = true;
				left--;
				close(c->fd);
				continue;
			}
			while (c->sent < bytes && (evs[i].events & EPOLLOUT)) {
				size_t m =
				    bytes - c->sent < sizeof(buf) ? bytes - c->sent : sizeof(buf);
				uint64_t save = c->tx_rng;
				ssize_t w;

				// cppcheck-suppress knownConditionTrueFalse ; m is 1 to sizeof(buf)
				for (size_t j = 0; j < m; j++)
					buf[j] = next_byte(&c->tx_rng);
				if (c->sent == 0)
					buf[0] = 'x'; /* never looks like TLS or HTTP */
				w = write(c->fd, buf, m);
				if (w <= 0) {
					c->tx_rng = save;
					break;
				}
				/* rewind the generator to what was actually written */
				c->tx_rng = save;
				for (ssize_t j = 0; j < w; j++)
					next_byte(&c->tx_rng);
				c->sent += (size_t)w;
			}
			if (c->sent == bytes && !c->shut) {
				shutdown(c->fd, SHUT_WR);
				c->shut = true;
				struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
				epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev);
			}
			for (;;) {
				ssize_t r = read(c->fd, buf, sizeof(buf));

				if (r > 0) {
					for (ssize_t j = 0; j < r; j++) {
						uint8_t want = next_byte(&c->rx_rng);

						if (c->got == 0 && j == 0)
							want = 'x';
						if (buf[j] != want)
							c->got = SIZE_MAX / 2; /* mismatch */
					}
					if (c->got < SIZE_MAX / 2)
						c->got += (size_t)r;
					continue;
				}
				if (r == 0 || errno != EAGAIN) {
					c->ok = r == 0 && c->got == bytes && c->sent == bytes;
					good += c->ok;
					c->done = true;
					left--;
					close(c->fd);
				}
				break;
			}
		}
	}
	printf("%d ok, %d failed\n", good, n - good);
	fflush(stdout);
	for (int i = 0; i < n; i++)
		if (!cs[i].done)
			close(cs[i].fd);
	free(cs);
	close(ep);
	return good == n ? 0 : 1;
}

/* open @n connections, wait 2 s, report how many are alive and how many were reset */
static int hold(const char *addr, int port, int n, int seconds)
{
	struct sockaddr_storage ss = {0};
	socklen_t sl;
	int *fds = calloc((size_t)n, sizeof(int)), alive = 0;

	raise_nofile();
	if (strchr(addr, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		inet_pton(AF_INET6, addr, &s6->sin6_addr);
		sl = sizeof(*s6);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		inet_pton(AF_INET, addr, &s4->sin_addr);
		sl = sizeof(*s4);
	}
	for (int i = 0; i < n; i++) {
		fds[i] = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fds[i] >= 0 && connect(fds[i], (struct sockaddr *)&ss, sl)) {
			close(fds[i]);
			fds[i] = -1;
		}
	}
	sleep(2);
	for (int i = 0; i < n; i++) {
		char b;
		ssize_t r;

		if (fds[i] < 0)
			continue;
		r = recv(fds[i], &b, 1, MSG_DONTWAIT | MSG_PEEK);
		if (r < 0 && errno == EAGAIN)
			alive++;
	}
	printf("%d alive, %d reset\n", alive, n - alive);
	fflush(stdout);
	if (seconds > 2)
		sleep((unsigned)(seconds - 2));
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 6 && !strcmp(argv[1], "hold"))
		return hold(argv[2], atoi(argv[3]), atoi(argv[4]), atoi(argv[5]));
	if (argc == 3 && !strcmp(argv[1], "serve"))
		return serve(atoi(argv[2]));
	if ((argc == 6 || argc == 7) && !strcmp(argv[1], "client"))
		return client(argv[2], atoi(argv[3]), atoi(argv[4]), strtoul(argv[5], NULL, 10),
			      argc == 7 ? atoi(argv[6]) : 60);
	fprintf(stderr, "usage: gw_load serve PORT | client ADDR PORT N BYTES [SECONDS] | "
			"hold ADDR PORT N SECONDS\n");
	return 2;
}

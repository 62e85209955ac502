/* dns_burst.c - a small DNS client for the gateway tests: sends N UDP queries
 * with up to W of them outstanding (so the server's socket holds many queries
 * at once and its batching is exercised), and checks every answer: the id and
 * question echoed, NOERROR with one A/AAAA record for allowed names (the same
 * address every time for a name), NXDOMAIN for names under blocked.test.
 *
 *   dns_burst SERVER PORT N [WINDOW [denied]]
 *
 * Query i asks, in turn: allowed.test A, h<k>.wild.test A, h<k>.wild.test
 * AAAA, ..., and every tenth query b<i>.blocked.test A; with "denied" every
 * query asks f<i % 8>.blocked.test A (a flood of denials over 8 names). N may
 * exceed 65536 (query ids wrap; at most WINDOW < 65536 are outstanding).
 * Prints one line "N sent, A answered, C correct, D denied" and exits 0 when
 * every query got a correct answer within 10 s (plus 1 s per 5,000 queries);
 * otherwise prints what went wrong and exits 1.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAXQ 1000000
#define NAMES 100

struct q {
	char name[64];
	uint16_t type;
	bool blocked;
	bool answered;
};

static struct q *qs;
static unsigned sent_n;			/* queries sent so far: answers map their id back */
static uint8_t addrs[2][NAMES + 1][16]; /* [A/AAAA][name index] first answer seen */
static bool seen[2][NAMES + 1];

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static size_t put_name(uint8_t *p, const char *name)
{
	size_t n = 0;

	while (*name) {
		const char *dot = strchr(name, '.');
		size_t l = dot ? (size_t)(dot - name) : strlen(name);

		p[n++] = (uint8_t)l;
		memcpy(p + n, name, l);
		n += l;
		name += l + (dot ? 1 : 0);
	}
	p[n++] = 0;
	return n;
}

static size_t build(unsigned i, uint8_t *m)
{
	size_t n = 12;

	memset(m, 0, 12);
	m[0] = (uint8_t)(i >> 8);
	m[1] = (uint8_t)i;
	m[2] = 0x01; /* RD */
	m[5] = 1;    /* QDCOUNT */
	n += put_name(m + n, qs[i].name);
	m[n++] = 0;
	m[n++] = (uint8_t)qs[i].type;
	m[n++] = 0;
	m[n++] = 1; /* IN */
	return n;
}

static int name_idx(unsigned i)
{
	if (!strcmp(qs[i].name, "allowed.test"))
		return 0;
	return atoi(qs[i].name + 1);
}

/* check one answer; returns 1 correct, 0 wrong (says why), -1 not ours */
static int check(const uint8_t *m, size_t len, unsigned n, unsigned *ret_i)
{
	uint8_t qw[300];
	size_t qlen, off;
	unsigned i, an, rcode;
	struct q *q;
	int fam;

	if (len < 12 || !sent_n)
		return -1;
	/* the latest query sent with this 16-bit id (the window is smaller) */
	i = (unsigned)m[0] << 8 | m[1];
	if (i >= sent_n)
		return -1;
	i += (sent_n - 1 - i) / 65536 * 65536;
	if (i >= n || qs[i].answered)
		return -1;
	q = &qs[i];
	*ret_i = i;
	rcode = m[3] & 15;
	an = (unsigned)m[6] << 8 | m[7];
	qlen = put_name(qw, q->name);
	if (!(m[2] & 0x80) || m[5] != 1 || len < 12 + qlen + 4 || memcmp(m + 12, qw, qlen) ||
	    m[12 + qlen + 1] != q->type) {
		printf("query %u (%s): the answer does not echo the question\n", i, q->name);
		return 0;
	}
	if (q->blocked) {
		if (rcode != 3 || an != 0) {
			printf("query %u (%s): rcode %u, %u answers; wanted NXDOMAIN\n", i, q->name,
			       rcode, an);
			return 0;
		}
		return 1;
	}
	fam = q->type == 28;
	off = 12 + qlen + 4;
	/* one record: a pointer to the question's name, type, class, ttl, rdlength */
	if (rcode != 0 || an != 1 || len < off + 12 + (fam ? 16u : 4u) || m[off] != 0xc0 ||
	    m[off + 3] != q->type || m[off + 11] != (fam ? 16 : 4)) {
		printf("query %u (%s): rcode %u, %u answers; wanted one %s record\n", i, q->name,
		       rcode, an, fam ? "AAAA" : "A");
		return 0;
	}
	off += 12;
	{
		int k = name_idx(i);

		if (!seen[fam][k]) {
			seen[fam][k] = true;
			memcpy(addrs[fam][k], m + off, fam ? 16 : 4);
		} else if (memcmp(addrs[fam][k], m + off, fam ? 16 : 4)) {
			printf("query %u (%s): a different address than before\n", i, q->name);
			return 0;
		}
	}
	return 1;
}

int main(int argc, char **argv)
{
	struct sockaddr_storage ss = {0};
	socklen_t sl;
	unsigned n, window, sent = 0, answered = 0, correct = 0, denied = 0, out = 0;
	uint64_t deadline;
	int fd;

	if (argc < 4 || (n = (unsigned)atoi(argv[3])) == 0 || n > MAXQ) {
		fprintf(stderr, "usage: dns_burst SERVER PORT N [WINDOW] (N <= %u)\n",
			(unsigned)MAXQ);
		return 2;
	}
	window = argc > 4 ? (unsigned)atoi(argv[4]) : 100;
	if (!window)
		window = 1;
	if (window > 60000)
		window = 60000;
	qs = calloc(n, sizeof(*qs));
	if (!qs) {
		perror("dns_burst");
		return 1;
	}
	if (inet_pton(AF_INET, argv[1], &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)atoi(argv[2]));
		sl = sizeof(*s4);
	} else if (inet_pton(AF_INET6, argv[1], &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)atoi(argv[2]));
		sl = sizeof(*s6);
	} else {
		fprintf(stderr, "dns_burst: bad address %s\n", argv[1]);
		return 2;
	}
	for (unsigned i = 0; i < n; i++) {
		qs[i].type = 1;
		if (argc > 5 && !strcmp(argv[5], "denied")) {
			snprintf(qs[i].name, sizeof(qs[i].name), "f%u.blocked.test", i % 8);
			qs[i].blocked = true;
		} else if (i % 10 == 9) {
			snprintf(qs[i].name, sizeof(qs[i].name), "b%u.blocked.test", i);
			qs[i].blocked = true;
		} else if (i % NAMES == 0) {
			snprintf(qs[i].name, sizeof(qs[i].name), "allowed.test");
		} else {
			snprintf(qs[i].name, sizeof(qs[i].name), "h%u.wild.test", i % NAMES);
			if (i % 3 == 2)
				qs[i].type = 28;
		}
	}
	fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&ss, sl)) {
		perror("dns_burst: socket");
		return 1;
	}
	deadline = now_ms() + 10000 + n / 5;
	while (answered < n && now_ms() < deadline) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		uint8_t m[4096];
		ssize_t r;

		while (sent < n && out < window) {
			size_t len = build(sent, m);

			if (send(fd, m, len, 0) != (ssize_t)len) {
				perror("dns_burst: send");
				return 1;
			}
			sent++;
			sent_n = sent;
			out++;
		}
		if (poll(&pfd, 1, 200) <= 0)
			continue;
		while ((r = recv(fd, m, sizeof(m), MSG_DONTWAIT)) > 0) {
			unsigned i;
			int c = check(m, (size_t)r, n, &i);

			if (c < 0)
				continue;
			qs[i].answered = true;
			answered++;
			out--;
			correct += (unsigned)c;
			denied += c > 0 && qs[i].blocked;
		}
	}
	printf("%u sent, %u answered, %u correct, %u denied\n", sent, answered, correct, denied);
	close(fd);
	return answered == n && correct == n ? 0 : 1;
}

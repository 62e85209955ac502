/* quic_sni.c - reads the QUIC Initial packets a real client sends (tests/integration/
 * quic_clients.sh) with the gateway's own code (gateway/quicsniff.h): binds a UDP address, takes
 * the datagrams of the first peer that sends one, feeds them to one flow until the ClientHello is
 * whole or refused, and prints one line of JSON: {"result":"ok","sni":NAME,"version":"0x..",
 * "packets":N,"datagrams":N,"max_version":"0x0304"} or {"result":"malformed"|"absent","why":..}
 * or {"result":"timeout","datagrams":N}. It answers nothing: the client only retransmits.
 * Usage: quic_sni ADDRESS PORT SECONDS */
#include "gateway/quicsniff.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static uint8_t dgram[65536], work[65536];
static struct tls_hello th;
static struct gw_quic_flow flow;

int main(int argc, char **argv)
{
	struct sockaddr_storage ss = {0}, peer = {0}, from;
	socklen_t plen = 0, flen;
	int fd, secs, datagrams = 0;
	enum quic_result r = QUIC_NEED_MORE;
	const char *why = NULL;
	time_t end;

	if (argc != 4) {
		fprintf(stderr, "usage: quic_sni ADDRESS PORT SECONDS\n");
		return 2;
	}
	secs = atoi(argv[3]);
	if (inet_pton(AF_INET, argv[1], &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		ss.ss_family = AF_INET;
		((struct sockaddr_in *)&ss)->sin_port = htons((uint16_t)atoi(argv[2]));
	} else if (inet_pton(AF_INET6, argv[1], &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
		ss.ss_family = AF_INET6;
		((struct sockaddr_in6 *)&ss)->sin6_port = htons((uint16_t)atoi(argv[2]));
	} else {
		fprintf(stderr, "quic_sni: %s is not an address\n", argv[1]);
		return 2;
	}
	fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&ss, sizeof(ss)) < 0) {
		perror("quic_sni: bind");
		return 2;
	}
	printf("listening\n");
	fflush(stdout);
	end = time(NULL) + secs;
	while (r == QUIC_NEED_MORE && time(NULL) < end) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (poll(&p, 1, 200) <= 0)
			continue;
		flen = sizeof(from);
		n = recvfrom(fd, dgram, sizeof(dgram), 0, (struct sockaddr *)&from, &flen);
		if (n <= 0)
			continue;
		/* the first peer's flow only, as the gateway keeps one per flow */
		if (!plen) {
			peer = from;
			plen = flen;
		} else if (flen != plen || memcmp(&from, &peer, flen)) {
			continue;
		}
		datagrams++;
		r = gw_quic_datagram(&flow, dgram, (size_t)n, work, sizeof(work), &th, &why);
	}
	if (r == QUIC_OK)
		printf("{\"result\":\"ok\",\"sni\":\"%s\",\"version\":\"0x%08x\",\"packets\":%u,"
		       "\"datagrams\":%d,\"max_version\":\"0x%04x\",\"ech\":%s}\n",
		       th.sni, flow.version, flow.packets, datagrams, th.max_version,
		       th.has_ech ? "true" : "false");
	else if (r == QUIC_NEED_MORE)
		printf("{\"result\":\"timeout\",\"datagrams\":%d,\"packets\":%u}\n", datagrams,
		       flow.packets);
	else
		printf("{\"result\":\"%s\",\"why\":\"%s\",\"datagrams\":%d}\n",
		       r == QUIC_ABSENT ? "absent" : "malformed", why ? why : "", datagrams);
	/* the verdict on disk before anything else runs at exit (a sanitizer's exit handlers) */
	fflush(stdout);
	close(fd);
	return r == QUIC_OK ? 0 : 1;
}

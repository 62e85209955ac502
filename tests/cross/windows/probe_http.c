/* probe_http.c - test only: a Windows program that fetches through the proxy warden gave it,
 * run through warden-wintest.exe with the real warden-gateway.exe (tests/cross/run-windows).
 * `probe_http URL...`: for each URL, one HTTP/1.1 GET in absolute form to the port of
 * HTTP_PROXY on 127.0.0.1 (as a proxy-aware client does); prints "URL status CODE", the first
 * line of a 200's body as "URL body LINE", and a denial id in the answer ("dn-" and 12 hex
 * digits) as "URL denial ID". Exits 0 when every URL got an answer, 1 otherwise. */
#include <winsock2.h>
#include <windows.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the answer to GET @url through 127.0.0.1:@port into @buf; Return: its length, -1 when none */
static int fetch(unsigned short port, const char *url, char *buf, int size)
{
	struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(port)};
	const char *host = strstr(url, "://");
	char req[1024], h[256];
	SOCKET s;
	int n, len = 0;

	if (!host)
		return -1;
	host += 3;
	snprintf(h, sizeof(h), "%.*s", (int)strcspn(host, "/:"), host);
	n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n",
		     url, h);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	s = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
	if (s == INVALID_SOCKET || connect(s, (struct sockaddr *)&sin, sizeof(sin)) ||
	    send(s, req, n, 0) != n) {
		if (s != INVALID_SOCKET)
			closesocket(s);
		return -1;
	}
	while (len < size - 1 && (n = recv(s, buf + len, size - 1 - len, 0)) > 0)
		len += n;
	closesocket(s);
	buf[len] = '\0';
	return len ? len : -1;
}

int main(int argc, char **argv)
{
	static char buf[65536];
	const char *proxy = getenv("HTTP_PROXY"), *colon = proxy ? strrchr(proxy, ':') : NULL;
	WSADATA wsa;
	int bad = 0;

	if (!colon || WSAStartup(MAKEWORD(2, 2), &wsa)) {
		printf("no HTTP_PROXY\n");
		return 1;
	}
	for (int i = 1; i < argc; i++) {
		const char *body, *dn;
		int code = 0;

		if (fetch((unsigned short)atoi(colon + 1), argv[i], buf, sizeof(buf)) < 0) {
			printf("%s no answer\n", argv[i]);
			bad = 1;
			continue;
		}
		sscanf(buf, "HTTP/1.%*d %d", &code);
		printf("%s status %d\n", argv[i], code);
		body = strstr(buf, "\r\n\r\n");
		if (code == 200 && body)
			printf("%s body %.*s\n", argv[i], (int)strcspn(body + 4, "\r\n"), body + 4);
		dn = strstr(buf, "dn-");
		if (dn && strspn(dn + 3, "0123456789abcdef") >= 12)
			printf("%s denial %.15s\n", argv[i], dn);
	}
	fflush(stdout);
	return bad;
}

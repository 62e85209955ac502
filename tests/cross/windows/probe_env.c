/* probe_env.c - test only: the program tests/cross/run-windows runs through warden-wintest.exe.
 * Prints the proxy variables, TEMP and whether $WARDEN_WINTEST_SECRET reached it, connects to
 * the port of HTTP_PROXY ("connect ok" or "connect failed"), then exits with argv[1]'s code;
 * `probe_env CODE wait` waits 60 s first (the wall-time limit's test ends it sooner). */
#include <winsock2.h>
#include <windows.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	static const char *const names[] = {"HTTP_PROXY", "HTTPS_PROXY",	"ALL_PROXY",
					    "NO_PROXY",	  "NODE_USE_ENV_PROXY", "TEMP"};
	const char *http = getenv("HTTP_PROXY"), *colon;
	struct sockaddr_in sin = {.sin_family = AF_INET};
	WSADATA wsa;
	SOCKET s;
	int ok = 0;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		printf("%s=%s\n", names[i], getenv(names[i]) ? getenv(names[i]) : "(unset)");
	printf("secret %s\n", getenv("WARDEN_WINTEST_SECRET") ? "present" : "absent");
	colon = http ? strrchr(http, ':') : NULL;
	if (colon && !WSAStartup(MAKEWORD(2, 2), &wsa)) {
		s = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP);
		sin.sin_port = htons((unsigned short)atoi(colon + 1));
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		ok = s != INVALID_SOCKET && !connect(s, (struct sockaddr *)&sin, sizeof(sin));
		if (s != INVALID_SOCKET)
			closesocket(s);
	}
	printf("connect %s\n", ok ? "ok" : "failed");
	fflush(stdout);
	if (argc > 2 && !strcmp(argv[2], "wait"))
		Sleep(60000);
	return argc > 1 ? atoi(argv[1]) : 0;
}

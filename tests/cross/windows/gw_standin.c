/* gw_standin.c - test only: a stand-in for warden-gateway.exe in tests/cross/run-windows, for
 * the checks of warden.exe's own side (the real gateway is run there too, in a namespace).
 * `gw_standin --config PATH --run RUN --counts FILE --listen-info L --ready-event H
 * --stop-event S`: reads the proxy port and mode from the configuration warden wrote, writes
 * "config PATH mode M port P", "run RUN register R" (R: 1 when RUN has "op":"register" in it)
 * and "listener port Q" (the port of the listener warden handed over in L) to
 * $WARDEN_WINTEST_GW_LOG, sets the event H (warden.exe's readiness wait), then accepts and closes
 * connections until S is set (it exits, "stopped" in the log, and writes no counts: it counted
 * nothing) or it is ended. It decides nothing and relays nothing. $WARDEN_WINTEST_GW_FAIL=1:
 * exits 3 at once (a gateway that cannot start). */
#include <winsock2.h>
#include <windows.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *log_path;

/* S set: said, and gone */
static DWORD WINAPI stop_watch(void *h)
{
	FILE *f;

	if (WaitForSingleObject((HANDLE)h, INFINITE) != WAIT_OBJECT_0)
		return 0;
	f = log_path ? fopen(log_path, "a") : NULL;
	if (f) {
		fprintf(f, "stopped\n");
		fclose(f);
	}
	ExitProcess(0);
}

/* an event handle passed in decimal */
static HANDLE handle_of(const char *s)
{
	/* NOLINTNEXTLINE(performance-no-int-to-ptr): a handle value warden passed in decimal */
	return (HANDLE)(uintptr_t)strtoull(s, NULL, 10);
}

int main(int argc, char **argv)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};
	static char req[65536];
	char line[512], mode[32] = "?";
	size_t n;
	unsigned port = 0;
	const char *log = getenv("WARDEN_WINTEST_GW_LOG"), *bad = getenv("WARDEN_WINTEST_GW_FAIL");
	FILE *f;
	WSADATA wsa;
	WSAPROTOCOL_INFOW info;
	int slen = sizeof(sin);
	SOCKET s, c;
	HANDLE t;

	log_path = log;
	if (argc != 13 || strcmp(argv[1], "--config") || strcmp(argv[3], "--run") ||
	    strcmp(argv[5], "--counts") || strcmp(argv[7], "--listen-info") ||
	    strcmp(argv[9], "--ready-event") || strcmp(argv[11], "--stop-event"))
		return 2;
	if (bad && !strcmp(bad, "1"))
		return 3;
	f = fopen(argv[2], "r");
	if (!f)
		return 2;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, " proxy: %u", &port);
		sscanf(line, "mode: %31s", mode);
	}
	fclose(f);
	f = fopen(argv[4], "r");
	if (!f)
		return 2;
	n = fread(req, 1, sizeof(req) - 1, f);
	req[n] = '\0';
	fclose(f);
	f = log ? fopen(log, "a") : NULL;
	if (f) {
		fprintf(f, "config %s mode %s port %u\n", argv[2], mode, port);
		fprintf(f, "run %s register %d\n", argv[4],
			strstr(req, "\"op\":\"register\"") != NULL);
		fclose(f);
	}
	if (!port || port > 65535 || WSAStartup(MAKEWORD(2, 2), &wsa))
		return 2;
	/* the listener warden made, as WSADuplicateSocketW() wrote it for this process */
	f = fopen(argv[8], "rb");
	if (!f || fread(&info, sizeof(info), 1, f) != 1)
		return 4;
	fclose(f);
	s = WSASocketW(FROM_PROTOCOL_INFO, FROM_PROTOCOL_INFO, FROM_PROTOCOL_INFO, &info, 0, 0);
	if (s == INVALID_SOCKET || getsockname(s, (struct sockaddr *)&sin, &slen))
		return 4;
	f = log ? fopen(log, "a") : NULL;
	if (f) {
		fprintf(f, "listener port %u\n", ntohs(sin.sin_port));
		fclose(f);
	}
	t = CreateThread(NULL, 0, stop_watch, handle_of(argv[12]), 0, NULL);
	if (!t || !SetEvent(handle_of(argv[10])))
		return 5;
	CloseHandle(t);
	while ((c = accept(s, NULL, NULL)) != INVALID_SOCKET)
		closesocket(c);
	return 0;
}

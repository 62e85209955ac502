/* poll_wsapoll.c - the gateway's poller on Windows (poller.h): WSAPoll() over a table of the
 * registered sockets (the poller keeps it: WSAPoll, like poll(2), has no kernel-side set), the
 * caller's reference beside each, and a console control handler for SIGTERM and SIGINT.
 *
 * How WSAPoll's reports map onto the contract:
 * - POLLRDNORM: GW_POLL_IN; POLLWRNORM: GW_POLL_OUT; POLLERR: GW_POLL_ERR, with POLLHUP
 *   also GW_POLL_HUP (an abort: a reset); POLLHUP alone (the peer's FIN, once the bytes
 *   before it are read): GW_POLL_IN and GW_POLL_RDHUP. POLLNVAL (a socket closed without
 *   gw_poller_del()): the entry leaves the table, nothing is reported, as with epoll.
 * - gw_poller_add() of a registered socket takes the registration anew (as kqueue does): a
 *   handle value closed without gw_poller_del() can come back for a new socket.
 * - Edge-triggered interest is kept here, since WSAPoll only knows levels: a direction once
 *   reported is not reported again until the socket was seen not ready in it, or (reading)
 *   more bytes are waiting than at the last report (FIONREAD). That is an edge per change of
 *   readiness as the contract asks; a wait sees the levels only at its own instants.
 * - Signals: SetConsoleCtrlHandler(): Ctrl-C, Ctrl-Break, the console closing, a log-off or a
 *   shut-down are counted (what SIGINT and SIGTERM are to the Linux gateway) and wake the wait
 *   through a loopback UDP socket connected to itself, registered in the table like any other.
 * A socket is an int here as everywhere in the gateway: Winsock's handles are small values a
 * process's table gives out, and the cast keeps them (docs/platforms.md).
 *
 * Built for x86_64-w64-mingw32 by tests/cross/run-windows and run under wine there
 * (tests/unit/test_gw_poller.c); it has never run on Windows itself. */
#ifdef _WIN32
#include "gateway/poller.h"

#include "common/common.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* one registered socket: what it wants, its reference, the edge state of its directions */
struct slot {
	unsigned events;      /* GW_POLL_* as registered */
	uint64_t ref;	      /* what its events carry */
	unsigned reported;    /* ET: directions reported and not seen unready since */
	unsigned long queued; /* ET: FIONREAD at the last IN reported */
};

struct gw_wsapoll {
	WSAPOLLFD *pfd; /* pfd[0] is the wake-up socket */
	struct slot *slot;
	size_t n, cap;
	SOCKET wake;
};

/* the console handler has no argument: the poller of gw_poller_signals() and its counter */
static SOCKET wake_sock = INVALID_SOCKET;
static atomic_uint sig_count;

const char *gw_poller_name(void)
{
	return "wsapoll";
}

/* -errno for WSAGetLastError()'s @e */
static int wsa_err(int e)
{
	switch (e) {
	case WSAENOTSOCK:
		return -ENOTSOCK;
	case WSAEINVAL:
		return -EINVAL;
	case WSAEINTR:
		return -EINTR;
	case WSAENOBUFS:
		return -ENOMEM;
	case WSANOTINITIALISED:
		return -ENETDOWN;
	default:
		return -EIO;
	}
}

/* the wake-up socket: UDP on 127.0.0.1, connected to itself, non-blocking */
static SOCKET wake_open(void)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	int len = sizeof(sa);
	u_long one = 1;
	SOCKET s =
	    WSASocketW(AF_INET, SOCK_DGRAM, IPPROTO_UDP, NULL, 0, WSA_FLAG_NO_HANDLE_INHERIT);

	if (s == INVALID_SOCKET)
		return s;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(s, (struct sockaddr *)&sa, sizeof(sa)) ||
	    getsockname(s, (struct sockaddr *)&sa, &len) ||
	    connect(s, (struct sockaddr *)&sa, sizeof(sa)) || ioctlsocket(s, FIONBIO, &one)) {
		closesocket(s);
		return INVALID_SOCKET;
	}
	return s;
}

int gw_poller_open(struct gw_poller *p)
{
	WSADATA wd;
	struct gw_wsapoll *w;
	int r;

	p->fd = -1;
	p->sigfd = -1;
	p->sigref = 0;
	p->sigs = 0;
	p->win = NULL;
	if (WSAStartup(MAKEWORD(2, 2), &wd))
		return -ENETDOWN;
	w = calloc(1, sizeof(*w));
	if (!w) {
		WSACleanup();
		return -ENOMEM;
	}
	p->win = w;
	w->cap = 16;
	w->pfd = calloc(w->cap, sizeof(*w->pfd));
	w->slot = calloc(w->cap, sizeof(*w->slot));
	w->wake = wake_open();
	if (!w->pfd || !w->slot || w->wake == INVALID_SOCKET) {
		r = !w->pfd || !w->slot ? -ENOMEM : wsa_err(WSAGetLastError());
		gw_poller_close(p);
		return r;
	}
	w->pfd[0].fd = w->wake;
	w->pfd[0].events = POLLRDNORM;
	w->n = 1;
	p->fd = (int)w->wake;
	return 0;
}

void gw_poller_close(struct gw_poller *p)
{
	struct gw_wsapoll *w = p->win;

	if (!w)
		return;
	if (wake_sock == w->wake)
		wake_sock = INVALID_SOCKET;
	if (w->wake != INVALID_SOCKET)
		closesocket(w->wake);
	free(w->pfd);
	free(w->slot);
	free(w);
	p->win = NULL;
	p->fd = -1;
	WSACleanup();
}

/* the index of @fd in the table, or 0 (the wake-up socket's: never a caller's) */
static size_t find(const struct gw_wsapoll *w, int fd)
{
	for (size_t i = 1; i < w->n; i++)
		if (w->pfd[i].fd == (SOCKET)fd)
			return i;
	return 0;
}

static void set(struct gw_wsapoll *w, size_t i, unsigned events, uint64_t ref)
{
	w->pfd[i].events = (short)(((events & (GW_POLL_IN | GW_POLL_RDHUP)) ? POLLRDNORM : 0) |
				   ((events & GW_POLL_OUT) ? POLLWRNORM : 0));
	w->slot[i].events = events;
	w->slot[i].ref = ref;
	w->slot[i].reported = 0;
	w->slot[i].queued = 0;
}

int gw_poller_add(struct gw_poller *p, int fd, unsigned events, uint64_t ref)
{
	struct gw_wsapoll *w = p->win;
	int type, tl = sizeof(type);
	size_t i;

	if (!w)
		return -EBADF;
	if (fd < 0 || getsockopt((SOCKET)fd, SOL_SOCKET, SO_TYPE, (char *)&type, &tl))
		return -ENOTSOCK; /* not a socket: WSAPoll polls nothing else */
	/* registered: a socket closed without gw_poller_del() whose handle value came back for
	 * a new one (as kqueue does, the registration is taken anew) */
	i = find(w, fd);
	if (i) {
		set(w, i, events, ref);
		return 0;
	}
	if (w->n == w->cap) {
		size_t cap = w->cap * 2;
		WSAPOLLFD *pfd = realloc(w->pfd, cap * sizeof(*pfd));
		struct slot *slot;

		if (!pfd)
			return -ENOMEM;
		w->pfd = pfd;
		slot = realloc(w->slot, cap * sizeof(*slot));
		if (!slot)
			return -ENOMEM;
		w->slot = slot;
		w->cap = cap;
	}
	w->pfd[w->n].fd = (SOCKET)fd;
	w->pfd[w->n].revents = 0;
	set(w, w->n++, events, ref);
	return 0;
}

int gw_poller_mod(struct gw_poller *p, int fd, unsigned events, uint64_t ref)
{
	struct gw_wsapoll *w = p->win;
	size_t i = w ? find(w, fd) : 0;

	if (!i)
		return -ENOENT;
	set(w, i, events, ref);
	return 0;
}

void gw_poller_del(struct gw_poller *p, int fd)
{
	struct gw_wsapoll *w = p->win;
	size_t i = w && fd >= 0 ? find(w, fd) : 0;

	if (!i)
		return;
	w->n--;
	w->pfd[i] = w->pfd[w->n];
	w->slot[i] = w->slot[w->n];
}

/* the bits to report for table entry @i out of its revents, edge state kept */
static unsigned bits_of(struct gw_wsapoll *w, size_t i)
{
	struct slot *sl = &w->slot[i];
	short re = w->pfd[i].revents;
	unsigned lvl = 0, fresh;
	unsigned long queued = 0;

	if (re & POLLRDNORM) {
		lvl |= GW_POLL_IN;
		(void)ioctlsocket(w->pfd[i].fd, FIONREAD, &queued);
	}
	if (re & POLLWRNORM)
		lvl |= GW_POLL_OUT;
	/* POLLHUP alone is the peer's FIN once its bytes are read (the socket is not even
	 * readable then): the end of reading, which a read of 0 confirms. With POLLERR it is an
	 * abort: both directions are over. */
	if ((re & POLLHUP) && !(re & POLLERR))
		lvl |= GW_POLL_IN | GW_POLL_RDHUP;
	if ((re & POLLHUP) && (re & POLLERR))
		lvl |= GW_POLL_HUP;
	if (re & (POLLERR | POLLNVAL))
		lvl |= GW_POLL_ERR;
	lvl &= sl->events | GW_POLL_HUP | GW_POLL_ERR;
	if (!(sl->events & GW_POLL_ET))
		return lvl;
	fresh = lvl & ~sl->reported;
	/* reading: more bytes than at the last report are a new edge too */
	if ((lvl & GW_POLL_IN) && (sl->reported & GW_POLL_IN) && queued > sl->queued)
		fresh |= GW_POLL_IN;
	if (fresh & GW_POLL_RDHUP)
		fresh |= GW_POLL_IN;
	sl->reported = lvl; /* what was seen unready is armed again */
	sl->queued = queued;
	return fresh;
}

int gw_poller_wait(struct gw_poller *p, struct gw_poll_event *evs, int n, int timeout_ms)
{
	struct gw_wsapoll *w = p->win;
	int r, out = 0;

	if (!w)
		return -EBADF;
	r = WSAPoll(w->pfd, (ULONG)w->n, timeout_ms < 0 ? -1 : timeout_ms);
	if (r == SOCKET_ERROR)
		return wsa_err(WSAGetLastError());
	if (r == 0)
		return 0;
	if (w->pfd[0].revents & POLLRDNORM) {
		char buf[64];
		unsigned got;

		while (recv(w->wake, buf, sizeof(buf), 0) > 0)
			;
		got = atomic_exchange(&sig_count, 0);
		p->sigs += got;
		if (got && out < n) {
			evs[out].ref = p->sigref;
			evs[out++].events = GW_POLL_IN;
		}
	}
	for (size_t i = 1; i < w->n && out < n; i++) {
		unsigned bits;

		/* closed without gw_poller_del(): it leaves the table by itself, as with epoll */
		if (w->pfd[i].revents & POLLNVAL) {
			gw_poller_del(p, (int)w->pfd[i--].fd);
			continue;
		}
		if (!w->pfd[i].revents && !(w->slot[i].events & GW_POLL_ET))
			continue;
		bits = bits_of(w, i);
		if (!bits)
			continue;
		evs[out].ref = w->slot[i].ref;
		evs[out++].events = bits;
	}
	return out;
}

/* the console's control events: counted, and the wait woken */
static BOOL WINAPI on_ctrl(DWORD type)
{
	switch (type) {
	case CTRL_C_EVENT:
	case CTRL_BREAK_EVENT:
	case CTRL_CLOSE_EVENT:
	case CTRL_LOGOFF_EVENT:
	case CTRL_SHUTDOWN_EVENT:
		atomic_fetch_add(&sig_count, 1);
		if (wake_sock != INVALID_SOCKET)
			(void)send(wake_sock, "s", 1, 0);
		return TRUE;
	default:
		return FALSE;
	}
}

void gw_poller_win_stop(void)
{
	on_ctrl(CTRL_BREAK_EVENT);
}

int gw_poller_signals(struct gw_poller *p, uint64_t ref)
{
	struct gw_wsapoll *w = p->win;

	if (!w)
		return -EBADF;
	p->sigref = ref;
	wake_sock = w->wake;
	if (!SetConsoleCtrlHandler(on_ctrl, TRUE)) {
		wake_sock = INVALID_SOCKET;
		return -EIO;
	}
	return 0;
}

unsigned gw_poller_signal_take(struct gw_poller *p)
{
	unsigned n = p->sigs;

	p->sigs = 0;
	return n;
}
#endif /* _WIN32 */

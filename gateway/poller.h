/* poller.h - the gateway worker's readiness interface, one small API over the operating
 * system's poller (internal header): epoll on Linux (poll_epoll.c), kqueue on macOS and the
 * BSDs (poll_kqueue.c), WSAPoll on Windows (poll_wsapoll.c). ev.c is its only caller; the
 * components above see GW_POLL_* bits and the 64-bit reference they registered, never the system's
 * types.
 *
 * The contract both backends keep (tests/unit/test_gw_poller.c states it as tests):
 * - A descriptor is registered once with the readiness it wants (GW_POLL_IN, GW_POLL_OUT),
 *   optionally GW_POLL_ET (edge-triggered: an event per change of readiness, not per wait).
 *   gw_poller_mod() changes what it wants; 0 wants nothing (a paused listener).
 * - A wait returns at most one event per descriptor and per wait: the bits that are ready,
 *   with GW_POLL_HUP (no more either way) and GW_POLL_ERR (a pending socket error) reported
 *   whether asked for or not; GW_POLL_RDHUP (the peer will send no more) when asked for
 *   (kqueue may report it unasked: its EV_EOF comes with every read filter).
 * - The reference comes back as registered, all 64 bits (ev.h tags its top byte).
 * - Signals: gw_poller_signals() turns SIGTERM and SIGINT into an event with a reference of
 *   the caller's; gw_poller_signal_take() consumes what arrived.
 * Windows (poll_wsapoll.c: WSAPoll) keeps the contract with kqueue's tolerance of a second add
 * and with two more differences the callers tolerate: edge-triggered interest is emulated (an edge
 * is a direction seen ready after it was seen unready, or more bytes waiting than at the last
 * report), and the peer's FIN is seen (GW_POLL_RDHUP, with GW_POLL_IN) only once the bytes before
 * it are read: an edge-triggered reader reads until it would block anyway. SIGTERM and SIGINT are
 * the console's control events there (Ctrl-C, Ctrl-Break, closing, log-off, shut-down). */
#ifndef WARDEN_GATEWAY_POLLER_H
#define WARDEN_GATEWAY_POLLER_H

#include <stdbool.h>
#include <stdint.h>

/* readiness bits (asked for and reported) */
enum {
	GW_POLL_IN = 0x01,  /* readable (or a connection to accept) */
	GW_POLL_OUT = 0x02, /* writable (a connect finished, room to send) */
	GW_POLL_RDHUP =
	    0x04,	    /* the peer shut its sending side (ask for it to be sure to hear it) */
	GW_POLL_HUP = 0x08, /* both directions are over: reported, never asked for */
	GW_POLL_ERR = 0x10, /* a socket error is pending: reported, never asked for */
	GW_POLL_ET = 0x20,  /* asked for: edge-triggered */
};

/**
 * struct gw_poll_event - one descriptor's readiness out of a wait
 * @ref:	the reference it was registered with
 * @events:	GW_POLL_* bits
 */
struct gw_poll_event {
	uint64_t ref;
	unsigned events;
};

/**
 * struct gw_poller - the system's poller
 * @fd:		the epoll or kqueue descriptor (-1: none)
 * @sigfd:	Linux: the signalfd of gw_poller_signals(), or -1
 * @sigref:	the reference signal events carry
 * @sigs:	kqueue, Windows: signals seen and not yet taken
 * @win:	Windows: the table of registered sockets (poll_wsapoll.c)
 */
struct gw_poller {
	int fd;
	int sigfd;
	uint64_t sigref;
	unsigned sigs;
#ifdef _WIN32
	struct gw_wsapoll *win;
#endif
};

/** gw_poller_name() - "epoll", "kqueue" or "wsapoll": what this build polls with. */
const char *gw_poller_name(void);

/**
 * gw_poller_open() - create the system's poller (CLOEXEC)
 * Return: 0, or a negative errno (@p is then closed: gw_poller_close() is harmless).
 */
int gw_poller_open(struct gw_poller *p);

/** gw_poller_close() - close the poller and its signal source (harmless when closed). */
void gw_poller_close(struct gw_poller *p);

/**
 * gw_poller_add() - register @fd
 * @p:		the poller
 * @fd:		a descriptor not registered yet
 * @events:	GW_POLL_IN, GW_POLL_OUT, GW_POLL_RDHUP, GW_POLL_ET (0: nothing until
 *		gw_poller_mod())
 * @ref:	what its events carry
 * Return: 0, or a negative errno (-EEXIST: registered already).
 */
int gw_poller_add(struct gw_poller *p, int fd, unsigned events, uint64_t ref);

/**
 * gw_poller_mod() - change what @fd wants and its reference
 * Return: 0, or a negative errno (-ENOENT: @fd was not registered; then nothing changed).
 */
int gw_poller_mod(struct gw_poller *p, int fd, unsigned events, uint64_t ref);

/** gw_poller_del() - unregister @fd (harmless when it is not registered, or -1). */
void gw_poller_del(struct gw_poller *p, int fd);

/**
 * gw_poller_wait() - wait for readiness
 * @p:		the poller
 * @evs:	room for the events
 * @n:		how many fit (at least 1)
 * @timeout_ms:	-1: no limit; 0: only poll
 * Return: the number of events written, or a negative errno (-EINTR: a signal came).
 */
int gw_poller_wait(struct gw_poller *p, struct gw_poll_event *evs, int n, int timeout_ms);

/**
 * gw_poller_signals() - report SIGTERM and SIGINT as events carrying @ref
 *
 * The caller has blocked both (sigprocmask) before: they are then taken by the poller alone
 * (Linux: a signalfd; kqueue: EVFILT_SIGNAL, which sees signals however they are handled).
 * Return: 0, or a negative errno (no signal events then).
 */
int gw_poller_signals(struct gw_poller *p, uint64_t ref);

#ifdef _WIN32
/**
 * gw_poller_win_stop() - what a console's Ctrl+Break is to the loop (a SIGTERM): counted and the
 * wait woken; callable from any thread (the Windows gateway's --stop-event watcher)
 */
void gw_poller_win_stop(void);
#endif

/** gw_poller_signal_take() - how many of those signals arrived since the last call. */
unsigned gw_poller_signal_take(struct gw_poller *p);

#endif /* WARDEN_GATEWAY_POLLER_H */

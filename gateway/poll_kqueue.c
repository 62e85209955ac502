/* poll_kqueue.c - the gateway's poller on macOS and the BSDs (poller.h): kqueue, a read and a
 * write filter per descriptor (only the wanted ones are registered), EV_CLEAR for
 * edge-triggered interest, the caller's reference in udata, and EVFILT_SIGNAL for SIGTERM and
 * SIGINT. A wait merges the two filters' events of one descriptor into one gw_poll_event.
 *
 * How kqueue's reports map onto the contract:
 * - EVFILT_READ ready: GW_POLL_IN; with EV_EOF (the peer shut its side): GW_POLL_RDHUP.
 * - EVFILT_WRITE ready: GW_POLL_OUT; with EV_EOF (no more can be sent): GW_POLL_HUP.
 * - EV_EOF with a socket error in fflags (a reset, a refused connect): GW_POLL_ERR as well.
 * - EV_ERROR (a filter could not be registered): GW_POLL_ERR.
 * Differences from epoll the callers tolerate: gw_poller_add() of a registered descriptor
 * and gw_poller_mod() of an unregistered one both register it (kqueue keeps no per-descriptor
 * record to refuse them by); a descriptor closed without gw_poller_del() leaves the queue by
 * itself, as with epoll.
 *
 * Built and linked for Mach-O by tests/cross/run; it has never run on a Mac (docs/platforms.md). */
#if defined(__APPLE__) || defined(__FreeBSD__) || defined(__OpenBSD__) || defined(__NetBSD__)
#include "gateway/poller.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <sys/event.h>
#include <sys/time.h>
#include <unistd.h>

const char *gw_poller_name(void)
{
	return "kqueue";
}

int gw_poller_open(struct gw_poller *p)
{
	p->sigfd = -1;
	p->sigref = 0;
	p->sigs = 0;
	p->fd = kqueue();
	if (p->fd < 0)
		return -errno;
	if (fcntl(p->fd, F_SETFD, FD_CLOEXEC) < 0) {
		int r = -errno;

		gw_poller_close(p);
		return r;
	}
	return 0;
}

void gw_poller_close(struct gw_poller *p)
{
	if (p->fd >= 0)
		close(p->fd);
	p->fd = -1;
}

/* one filter's change: wanted, it is added (or changed) with the caller's reference;
 * unwanted, it is deleted (ENOENT: it was not there, which is what was asked) */
static int change(struct gw_poller *p, int fd, short filter, bool want, bool et, uint64_t ref)
{
	struct kevent kev;

	EV_SET(&kev, (uintptr_t)fd, filter,
	       want ? (EV_ADD | EV_ENABLE | (et ? EV_CLEAR : 0)) : EV_DELETE, 0, 0,
	       (void *)(uintptr_t)ref);
	if (kevent(p->fd, &kev, 1, NULL, 0, NULL) == 0)
		return 0;
	return !want && errno == ENOENT ? 0 : -errno;
}

static int set(struct gw_poller *p, int fd, unsigned events, uint64_t ref)
{
	bool et = events & GW_POLL_ET;
	int r;

	r = change(p, fd, EVFILT_READ, events & (GW_POLL_IN | GW_POLL_RDHUP), et, ref);
	if (!r)
		r = change(p, fd, EVFILT_WRITE, events & GW_POLL_OUT, et, ref);
	return r;
}

int gw_poller_add(struct gw_poller *p, int fd, unsigned events, uint64_t ref)
{
	int r = set(p, fd, events, ref);

	if (r)
		gw_poller_del(p, fd);
	return r;
}

int gw_poller_mod(struct gw_poller *p, int fd, unsigned events, uint64_t ref)
{
	return set(p, fd, events, ref);
}

void gw_poller_del(struct gw_poller *p, int fd)
{
	if (fd < 0)
		return;
	(void)change(p, fd, EVFILT_READ, false, false, 0);
	(void)change(p, fd, EVFILT_WRITE, false, false, 0);
}

static unsigned bits_of(const struct kevent *k)
{
	unsigned r = 0;

	if (k->flags & EV_ERROR)
		return GW_POLL_ERR;
	if (k->filter == EVFILT_READ)
		r = GW_POLL_IN | ((k->flags & EV_EOF) ? GW_POLL_RDHUP : 0);
	else if (k->filter == EVFILT_WRITE)
		r = GW_POLL_OUT | ((k->flags & EV_EOF) ? GW_POLL_HUP : 0);
	if ((k->flags & EV_EOF) && k->fflags)
		r |= GW_POLL_ERR;
	return r;
}

int gw_poller_wait(struct gw_poller *p, struct gw_poll_event *evs, int n, int timeout_ms)
{
	struct kevent kev[256];
	struct timespec ts, *tsp = NULL;
	uintptr_t ident[256];
	int r, out = 0;

	if (n > 128)
		n = 128; /* two filters per descriptor fit in kev[] */
	if (timeout_ms >= 0) {
		ts.tv_sec = timeout_ms / 1000;
		ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000L;
		tsp = &ts;
	}
	r = kevent(p->fd, NULL, 0, kev, n, tsp);
	if (r < 0)
		return -errno;
	for (int i = 0; i < r; i++) {
		int j;

		if (kev[i].filter == EVFILT_SIGNAL) {
			p->sigs += (unsigned)kev[i].data;
			for (j = 0;
			     j < out && !(evs[j].ref == p->sigref && ident[j] == UINTPTR_MAX); j++)
				;
			if (j == out) {
				ident[out] = UINTPTR_MAX;
				evs[out].ref = p->sigref;
				evs[out++].events = GW_POLL_IN;
			}
			continue;
		}
		for (j = 0; j < out && ident[j] != kev[i].ident; j++)
			;
		if (j == out) {
			ident[out] = kev[i].ident;
			evs[out].ref = (uint64_t)(uintptr_t)kev[i].udata;
			evs[out++].events = 0;
		}
		evs[j].events |= bits_of(&kev[i]);
	}
	return out;
}

int gw_poller_signals(struct gw_poller *p, uint64_t ref)
{
	static const int sigs[] = {SIGTERM, SIGINT};
	struct kevent kev[2];

	for (size_t i = 0; i < 2; i++)
		EV_SET(&kev[i], (uintptr_t)sigs[i], EVFILT_SIGNAL, EV_ADD | EV_ENABLE, 0, 0, NULL);
	if (kevent(p->fd, kev, 2, NULL, 0, NULL) < 0)
		return -errno;
	p->sigref = ref;
	return 0;
}

unsigned gw_poller_signal_take(struct gw_poller *p)
{
	unsigned n = p->sigs;

	p->sigs = 0;
	return n;
}
#endif /* kqueue */

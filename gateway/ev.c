/* ev.c - the bottom of the gateway worker: the poller (poller.h) with typed
 * references, timers armed into the heap (timer.c), listeners that pause for
 * 100 ms when the worker runs out of descriptors (and take what waits to be
 * refused once its room has stayed used up for 2 s), the clock read once per
 * wake-up, the audit log's per-round batch and denial ids. It includes no
 * component's header: the components register here, gw.c dispatches. */
#include "gateway/ev.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

int gw_ev_init(struct gw_ev *ev, struct audit_log *log, struct wd_err *err)
{
	uint64_t seed = 0;
	int r;

	memset(ev, 0, sizeof(*ev));
	ev->log = log;
#ifdef __linux__
	if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
#else
	if (getentropy(&seed, sizeof(seed)))
#endif
		seed = wd_mono_ns() ^ (uint64_t)getpid();
	gw_rng_seed(&ev->rng, seed);
	r = gw_poller_open(&ev->poll);
	if (r)
		return wd_err_set(err, r, "%s: %s", gw_poller_name(), strerror(-r));
	return 0;
}

void gw_ev_free(struct gw_ev *ev)
{
	gw_audit_flush(ev);
	gw_timer_heap_free(&ev->timers);
	/* a zeroed @ev has poll.fd 0, which is not ours */
	if (ev->poll.fd > 0)
		gw_poller_close(&ev->poll);
	ev->poll.fd = -1;
}

int gw_ev_wait(struct gw_ev *ev, struct gw_poll_event *evs, int n, uint64_t deadline, bool poll)
{
	uint64_t next = gw_timer_next(&ev->timers);
	int timeout = -1, r;

	ev->now = wd_mono_ns();
	if (deadline < next)
		next = deadline;
	if (next != UINT64_MAX)
		timeout = next <= ev->now ? 0 : (int)((next - ev->now + 999999) / 1000000);
	if (timeout > 60000)
		timeout = 60000;
	if (poll)
		timeout = 0;
	r = gw_poller_wait(&ev->poll, evs, n, timeout);
	if (r < 0)
		return r;
	ev->now = wd_mono_ns();
	return r;
}

int gw_ev_add(struct gw_ev *ev, int fd, unsigned events, uint64_t ref)
{
	return gw_poller_add(&ev->poll, fd, events, ref);
}

int gw_ev_mod(struct gw_ev *ev, int fd, unsigned events, uint64_t ref)
{
	return gw_poller_mod(&ev->poll, fd, events, ref);
}

void gw_ev_del(struct gw_ev *ev, int fd)
{
	gw_poller_del(&ev->poll, fd);
}

void gw_arm(struct gw_ev *ev, struct gw_timer *t, uint64_t when)
{
	/* On ENOMEM the timer stays as it was; the owner's other deadline
	 * (or the idle check) still ends it. */
	(void)gw_timer_arm(&ev->timers, t, when);
}

void gw_disarm(struct gw_ev *ev, struct gw_timer *t)
{
	gw_timer_cancel(&ev->timers, t);
}

void gw_ev_fail(struct gw_ev *ev, int err)
{
	ev->fatal = err;
	ev->stop = 1;
}

void gw_audit_flush(struct gw_ev *ev)
{
	size_t n;

	if (!ev->log || !(n = audit_log_pending(ev->log)))
		return;
	if (audit_log_flush(ev->log, NULL) < 0)
		ev->stats.audit_errors += n;
}

void gw_new_denial_id(struct gw_ev *ev, char *out, size_t size)
{
	uint64_t r = gw_rng_next(&ev->rng);

	snprintf(out, size, "dn-%012llx", (unsigned long long)(r >> 16));
}

int gw_listener_add(struct gw_ev *ev, struct gw_listener *l, int *fd, enum gw_listener_kind kind,
		    void *owner)
{
	l->ev = ev;
	l->fd = *fd;
	*fd = -1;
	l->kind = kind;
	l->owner = owner;
	l->paused = false;
	l->full_since = 0;
	gw_timer_init(&l->resume, GW_T_RESUME, l);
	if (l->fd < 0)
		return 0;
	return gw_ev_add(ev, l->fd, GW_POLL_IN, GW_REF(GW_REF_LISTEN, l));
}

void gw_listener_close(struct gw_listener *l)
{
	if (l->ev)
		gw_disarm(l->ev, &l->resume);
	wd_closep(&l->fd);
}

void gw_pause_listener(struct gw_listener *l)
{
	if (l->paused)
		return;
	l->paused = true;
	gw_ev_mod(l->ev, l->fd, 0, GW_REF(GW_REF_LISTEN, l));
	gw_arm(l->ev, &l->resume, l->ev->now + 100000000ull);
}

int gw_listener_accept(struct gw_listener *l, bool room, bool *full, struct sockaddr_storage *peer,
		       socklen_t *plen)
{
	int fd;

	*full = false;
	if (room) {
		l->full_since = 0;
	} else {
		if (!l->full_since)
			l->full_since = l->ev->now ? l->ev->now : 1;
		if (l->ev->now - l->full_since < GW_ROOM_WAIT_NS) {
			l->ev->stats.emfile++;
			gw_pause_listener(l);
			return -EAGAIN;
		}
		*full = true; /* waited long enough: taken, to be refused */
	}
	fd = wd_accept_nb(l->fd, (struct sockaddr *)peer, plen);
	if (fd >= 0)
		return fd;
	if (fd == -EMFILE || fd == -ENFILE || fd == -ENOBUFS || fd == -ENOMEM) {
		l->ev->stats.emfile++;
		gw_pause_listener(l);
	}
	return fd == -ECONNABORTED || fd == -EINTR ? -EINTR : -EAGAIN;
}

void gw_resume_listener(struct gw_listener *l)
{
	l->paused = false;
	gw_ev_mod(l->ev, l->fd, GW_POLL_IN, GW_REF(GW_REF_LISTEN, l));
}

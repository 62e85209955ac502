/* poll_epoll.c - the gateway's poller on Linux (poller.h): epoll, one epoll_event per
 * descriptor with the caller's 64-bit reference in epoll_data, and a signalfd for SIGTERM
 * and SIGINT. The GW_POLL_* bits map one to one onto EPOLL* bits. */
#ifdef __linux__
#include "gateway/poller.h"

#include <errno.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

static const struct {
	unsigned gw, ep;
} bits[] = {
    {GW_POLL_IN, EPOLLIN},   {GW_POLL_OUT, EPOLLOUT}, {GW_POLL_RDHUP, EPOLLRDHUP},
    {GW_POLL_HUP, EPOLLHUP}, {GW_POLL_ERR, EPOLLERR}, {GW_POLL_ET, EPOLLET},
};

static unsigned to_epoll(unsigned events)
{
	unsigned r = 0;

	for (unsigned i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		if (events & bits[i].gw)
			r |= bits[i].ep;
	return r;
}

static unsigned from_epoll(unsigned events)
{
	unsigned r = 0;

	for (unsigned i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		if (events & bits[i].ep)
			r |= bits[i].gw;
	return r & ~(unsigned)GW_POLL_ET;
}

const char *gw_poller_name(void)
{
	return "epoll";
}

int gw_poller_open(struct gw_poller *p)
{
	p->sigfd = -1;
	p->sigref = 0;
	p->sigs = 0;
	p->fd = epoll_create1(EPOLL_CLOEXEC);
	return p->fd < 0 ? -errno : 0;
}

void gw_poller_close(struct gw_poller *p)
{
	if (p->sigfd >= 0)
		close(p->sigfd);
	if (p->fd >= 0)
		close(p->fd);
	p->sigfd = -1;
	p->fd = -1;
}

int gw_poller_add(struct gw_poller *p, int fd, unsigned events, uint64_t ref)
{
	struct epoll_event e = {.events = to_epoll(events), .data.u64 = ref};

	return epoll_ctl(p->fd, EPOLL_CTL_ADD, fd, &e) ? -errno : 0;
}

int gw_poller_mod(struct gw_poller *p, int fd, unsigned events, uint64_t ref)
{
	struct epoll_event e = {.events = to_epoll(events), .data.u64 = ref};

	return epoll_ctl(p->fd, EPOLL_CTL_MOD, fd, &e) ? -errno : 0;
}

void gw_poller_del(struct gw_poller *p, int fd)
{
	if (fd >= 0)
		epoll_ctl(p->fd, EPOLL_CTL_DEL, fd, NULL);
}

int gw_poller_wait(struct gw_poller *p, struct gw_poll_event *evs, int n, int timeout_ms)
{
	struct epoll_event ee[256];
	int r;

	if (n > (int)(sizeof(ee) / sizeof(ee[0])))
		n = (int)(sizeof(ee) / sizeof(ee[0]));
	r = epoll_wait(p->fd, ee, n, timeout_ms);
	if (r < 0)
		return -errno;
	for (int i = 0; i < r; i++) {
		evs[i].ref = ee[i].data.u64;
		evs[i].events = from_epoll(ee[i].events);
	}
	return r;
}

int gw_poller_signals(struct gw_poller *p, uint64_t ref)
{
	sigset_t want;
	int r;

	sigemptyset(&want);
	sigaddset(&want, SIGTERM);
	sigaddset(&want, SIGINT);
	p->sigfd = signalfd(-1, &want, SFD_CLOEXEC | SFD_NONBLOCK);
	if (p->sigfd < 0)
		return -errno;
	p->sigref = ref;
	r = gw_poller_add(p, p->sigfd, GW_POLL_IN, ref);
	if (r) {
		close(p->sigfd);
		p->sigfd = -1;
	}
	return r;
}

unsigned gw_poller_signal_take(struct gw_poller *p)
{
	struct signalfd_siginfo si;
	unsigned n = 0;

	while (p->sigfd >= 0 && read(p->sigfd, &si, sizeof(si)) == sizeof(si))
		n++;
	return n;
}
#endif /* __linux__ */

/* ev.h - the bottom of the gateway worker (internal header; ev.c, timer.c): the
 * event loop's services that every component uses and that know no component --
 * typed references in the poller's events (poller.h: epoll, kqueue), the timer heap, listeners that
 * pause when descriptors run out, the clock of the current wake-up, the audit
 * log and its per-round batch, denial ids, the loop-wide counters and limits.
 * Components register their descriptors and timers here; gw.c dispatches. */
#ifndef WARDEN_GATEWAY_EV_H
#define WARDEN_GATEWAY_EV_H

#include "audit/audit.h"
#include "common/common.h"
#include "gateway/addr.h"
#include "gateway/poller.h"
#include "conf/conf.h"

#include <stdbool.h>
#include <sys/socket.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------ timer heap */

/**
 * struct gw_timer - one deadline, embedded in its owner
 * @when:	monotonic deadline in nanoseconds
 * @pos:	index in the heap, or GW_TIMER_IDLE when not armed
 * @kind:	what fires (owner-defined)
 * @owner:	the object the timer belongs to
 */
struct gw_timer {
	uint64_t when;
	size_t pos;
	int kind;
	void *owner;
};

#define GW_TIMER_IDLE ((size_t)-1)

/**
 * struct gw_timer_heap - a binary min-heap of armed timers
 * @v:		the heap (pointers to embedded timers)
 * @n:		armed timers
 * @cap:	allocated slots
 */
struct gw_timer_heap {
	struct gw_timer **v;
	size_t n;
	size_t cap;
};

/** gw_timer_init() - an idle timer for @owner, of @kind. */
void gw_timer_init(struct gw_timer *t, int kind, void *owner);
/**
 * gw_timer_arm() - arm (or re-arm) @t to fire at @when
 * Return: 0, or -ENOMEM (the timer is then left as it was).
 */
int gw_timer_arm(struct gw_timer_heap *h, struct gw_timer *t, uint64_t when);
/** gw_timer_cancel() - disarm @t (harmless when idle). */
void gw_timer_cancel(struct gw_timer_heap *h, struct gw_timer *t);
/** gw_timer_next() - the earliest deadline, or UINT64_MAX when none is armed. */
uint64_t gw_timer_next(const struct gw_timer_heap *h);
/**
 * gw_timer_expired() - remove and return one timer due at @now
 * Return: the timer (now idle), or NULL when none is due.
 */
struct gw_timer *gw_timer_expired(struct gw_timer_heap *h, uint64_t now);
/** gw_timer_heap_free() - release the heap's memory (timers stay with their owners). */
void gw_timer_heap_free(struct gw_timer_heap *h);

/* ------------------------------------------------------------ token bucket */

/**
 * struct gw_bucket - a token bucket (pure): @burst events, then @per_s a second
 */
struct gw_bucket {
	uint64_t last_ns;
	uint32_t tokens_milli; /* thousandths of a token */
};

/**
 * gw_bucket_take() - may one more event pass at @now (monotonic ns)?
 * @b:		the bucket (all zero: full on first use)
 * @now:	monotonic ns
 * @burst:	tokens when full
 * @per_s:	tokens added per second
 *
 * Return: true (a token was taken) or false (rate-limited).
 */
bool gw_bucket_take(struct gw_bucket *b, uint64_t now, unsigned burst, unsigned per_s);

/* ------------------------------------------------------------ limits and counters */

/**
 * struct gw_limits - resource limits of the data plane
 * @conns_total:	most relayed connections at once
 * @conns_per_run:	most per run
 * @peek_ms:		longest wait for a client's first bytes
 * @connect_ms:		longest wait for an upstream connect (per address)
 * @idle_ms:		a relayed connection idle this long is closed
 * @ttl_floor:		name cache TTL floor (s)
 * @ttl_ceil:		name cache TTL ceiling (s)
 * @synth_per_run:	most synthetic names per run and family
 * @audit_bytes:	audit bytes a run's events may take (then summaries only)
 * @sockbuf:		SO_RCVBUF / SO_SNDBUF of relayed sockets, bytes
 * @run_buffer:		bytes a run's connections may hold in pipes and stashes
 * @ctl_total:		most control connections at once (before the descriptor share:
 *			gw_fd_share())
 * @ctl_per_uid:	most one uid may hold (likewise)
 * @ctl_request_ms:	time a control connection has to send one whole request
 */
struct gw_limits {
	unsigned conns_total;
	unsigned conns_per_run;
	unsigned peek_ms;
	unsigned connect_ms;
	unsigned idle_ms;
	unsigned ttl_floor;
	unsigned ttl_ceil;
	unsigned synth_per_run;
	uint64_t audit_bytes;
	int sockbuf;
	uint64_t run_buffer;
	unsigned ctl_total;
	unsigned ctl_per_uid;
	unsigned ctl_request_ms;
};

/**
 * gw_limits_from_conf() - the limits a config asks for
 */
void gw_limits_from_conf(const struct wd_gwconf *conf, struct gw_limits *l);

/* counters of the whole worker, written by every component, read by "stats" */
struct gw_stats {
	uint64_t accepted, refused, denied, relayed, dns_queries, emfile, audit_errors,
	    upstream_failed, udp_dropped, udp_suppressed, nflog_lost, host_dropped, conns_dropped,
	    audit_suppressed;
	/* event lines daemon mode's launchers could not be sent (ctlstream.c); DNS queries
	 * refused by a user's DNS cap (gw_runs_dns_take()) */
	uint64_t stream_lost, dns_limited;
	/* control connections refused at accept (a bound was reached), and closed because their
	 * request was not whole by its deadline (ctlsrv.c) */
	uint64_t ctl_refused, ctl_expired;
};

/* ------------------------------------------------------------ references and timers */

/* What a poller event refers to: the type sits in the top 8 bits of
 * its 64-bit reference, a pointer (or an fd for c-ares) in the low 56. gw.c's
 * dispatch() is the one switch over them. */
enum gw_ref {
	GW_REF_LISTEN = 1, /* struct gw_listener (TCP accept, UDP DNS, control) */
	GW_REF_CLIENT,	   /* struct gw_conn, the sandbox side */
	GW_REF_UP,	   /* struct gw_conn, the upstream side */
	GW_REF_DNS_TCP,	   /* struct gw_dnsconn */
	GW_REF_CTL,	   /* struct gw_ctlconn */
	GW_REF_ARES,	   /* a c-ares socket (fd) */
	GW_REF_SIGNAL,	   /* SIGTERM / SIGINT (gw_poller_signals()) */
	GW_REF_NFLOG,	   /* the NFLOG socket (what the nft table dropped and logged) */
	GW_REF_PRIV,	   /* the channel to the privileged parent */
	GW_REF_UDP_UP,	   /* a UDP relay flow's upstream socket (udprelay.c) */
};

#define GW_REF(type, p) (((uint64_t)(type) << 56) | (uint64_t)(uintptr_t)(p))
#define GW_REF_TYPE(u) ((enum gw_ref)((u) >> 56))
/* NOLINTNEXTLINE(performance-no-int-to-ptr): the tagged pointer GW_REF() made */
#define GW_REF_PTR(u) ((void *)(uintptr_t)((u) & ((1ull << 56) - 1)))

/* what a listener is for (gw.c hands its events to its owner) */
enum gw_listener_kind {
	GW_L_TRANSPARENT,
	GW_L_PROXY,
	GW_L_DNS_UDP,
	GW_L_DNS_TCP,
	GW_L_CTL,
	GW_L_UDP, /* the UDP relay's port (udprelay.c) */
};

/* timer kinds (gw.c's fire_timer() is the one switch over them) */
enum gw_timer_kind {
	GW_T_CONN,     /* a connection's deadline (peek, connect, idle, drain) */
	GW_T_RESUME,   /* a listener paused on EMFILE */
	GW_T_DNSCONN,  /* a DNS-over-TCP connection's idle deadline */
	GW_T_CTLCONN,  /* a control connection's deadline */
	GW_T_UDPLOG,   /* write the summaries of rate-limited NFLOG events */
	GW_T_FLOOD,    /* write the summaries of events not written one by one (auditrl.c) */
	GW_T_ASK,      /* an ask's deadline: no answer in time (dnsask.c) */
	GW_T_UDPRELAY, /* the UDP relay's sweep of idle flows (udprelay.c) */
};

/* ------------------------------------------------------------ the loop */

/**
 * struct gw_ev - the loop's services
 * @poll:	the system's poller (poller.h)
 * @timers:	every armed deadline
 * @now:	CLOCK_MONOTONIC of the current wake-up (ns): read once, passed down
 * @stop:	set to end the loop (async-signal-safe)
 * @fatal:	the error the loop ends with (a component gave up: gw_ev_fail())
 * @log:	the audit log (NULL: no events are written)
 * @rng:	randomness for denial ids and allocation (not for secrets)
 * @stats:	the worker's counters
 */
struct gw_ev {
	struct gw_poller poll;
	struct gw_timer_heap timers;
	uint64_t now;
	volatile int stop;
	int fatal;
	struct audit_log *log;
	struct gw_rng rng;
	struct gw_stats stats;
};

/**
 * struct gw_listener - a listening socket in the loop
 * @ev:		the loop
 * @fd:		the socket
 * @kind:	what it is for
 * @owner:	the component whose handler takes its events
 * @paused:	not accepting (out of descriptors) until @resume fires
 * @resume:	GW_T_RESUME
 */
struct gw_listener {
	struct gw_ev *ev;
	int fd;
	enum gw_listener_kind kind;
	void *owner;
	bool paused;
	struct gw_timer resume;
	uint64_t full_since; /* when the descriptor room was found used up, 0 while it is not */
};

/* how long connections wait in the backlog while the descriptor room stays used up; then
 * they are accepted and refused (gw_listener_accept()) */
#define GW_ROOM_WAIT_NS 2000000000ull

/**
 * gw_ev_init() - the poller, an empty timer heap, a seeded generator
 * @ev:		the services
 * @log:	the audit log (borrowed; NULL: no events)
 * @err:	what failed
 * Return: 0, or a negative errno.
 */
int gw_ev_init(struct gw_ev *ev, struct audit_log *log, struct wd_err *err);

/** gw_ev_free() - write what the audit queue holds, close the poller (a zeroed @ev is
 * fine). */
void gw_ev_free(struct gw_ev *ev);

/**
 * gw_ev_wait() - wait for events until the earliest deadline
 * @ev:		the loop
 * @evs:	room for the events
 * @n:		how many fit
 * @deadline:	another deadline to wake up for (c-ares'), or UINT64_MAX
 * @poll:	only poll (work is left that no event will announce)
 *
 * @ev->now is stamped before and after the wait.
 *
 * Return: the number of events, 0, or a negative errno (-EINTR: try again).
 */
int gw_ev_wait(struct gw_ev *ev, struct gw_poll_event *evs, int n, uint64_t deadline, bool poll);

/** gw_ev_add() - add @fd to the loop with @events (GW_POLL_*) and reference @ref.
 * Return: 0 or -errno. */
int gw_ev_add(struct gw_ev *ev, int fd, unsigned events, uint64_t ref);
/** gw_ev_mod() - change @fd's events and reference. Return: 0 or -errno (-ENOENT: not added;
 * kqueue adds it instead, poller.h). */
int gw_ev_mod(struct gw_ev *ev, int fd, unsigned events, uint64_t ref);
/** gw_ev_del() - remove @fd from the loop (harmless when absent or -1). */
void gw_ev_del(struct gw_ev *ev, int fd);
/** gw_arm() - arm @t for @when (monotonic ns); on -ENOMEM the timer stays as it was. */
void gw_arm(struct gw_ev *ev, struct gw_timer *t, uint64_t when);
/** gw_disarm() - cancel @t (harmless when idle). */
void gw_disarm(struct gw_ev *ev, struct gw_timer *t);
/** gw_ev_fail() - end the loop with @err (a component cannot go on: fail closed). */
void gw_ev_fail(struct gw_ev *ev, int err);
/** gw_audit_flush() - write the audit events queued this round (one locked write). */
void gw_audit_flush(struct gw_ev *ev);
/** gw_new_denial_id() - a fresh "dn-<12 hex>" id into @out (at least 16 bytes). */
void gw_new_denial_id(struct gw_ev *ev, char *out, size_t size);

/**
 * gw_listener_add() - put a listening socket into the loop
 * @ev:		the loop
 * @l:		the listener (its memory is the owner's)
 * @fd:		*@fd is the socket (taken: set to -1, even on error); -1: nothing to add
 * @kind:	what it is for
 * @owner:	the component whose handler takes its events
 * Return: 0, or a negative errno.
 */
int gw_listener_add(struct gw_ev *ev, struct gw_listener *l, int *fd, enum gw_listener_kind kind,
		    void *owner);
/** gw_listener_close() - close @l's socket (harmless when it has none). */
void gw_listener_close(struct gw_listener *l);
/** gw_pause_listener() - stop accepting on @l for 100 ms (out of descriptors). */
void gw_pause_listener(struct gw_listener *l);
/** gw_resume_listener() - accept on @l again (its GW_T_RESUME timer). */
void gw_resume_listener(struct gw_listener *l);
/**
 * gw_listener_accept() - accept one connection on a data listener of @l (TCP, DNS over TCP):
 * non-blocking and CLOEXEC, within the descriptor room
 * @l:		the listener
 * @room:	the descriptor limit leaves room for one more (gw_runs_room())
 * @full:	out: true when the descriptor came past the room, for the caller to refuse
 * @peer:	the client's address
 * @plen:	its length (in: the room, out: what was written)
 *
 * Out of room or out of descriptors or memory, the listener pauses (gw_pause_listener()) and
 * the stats count it (emfile): the rest waits in the backlog. A wait for room is bounded:
 * once the room has stayed used up for GW_ROOM_WAIT_NS (connections that hold it, none
 * leaving), what waits is accepted with @full set, to be refused readably (a reset and an
 * audit event) rather than held in the backlog, connected but unanswered, until one leaves.
 * Return: the descriptor; -EINTR: try the next (aborted before it was taken, a signal); or
 * -EAGAIN: stop for this wake-up (nothing more waits, out of room, any other error).
 */
int gw_listener_accept(struct gw_listener *l, bool room, bool *full, struct sockaddr_storage *peer,
		       socklen_t *plen);

#endif /* WARDEN_GATEWAY_EV_H */

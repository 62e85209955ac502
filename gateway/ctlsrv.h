/* ctlsrv.h - the control socket's server (internal header; ctlsrv.c, ctlconn.c, ctlops.c,
 * ctlnetns.c, ctlstream.c): one request per line (ctl.c parses it), one JSON line back, a uid
 * acting on its own runs only. It reads the run table, the DNS front's and the NFLOG reader's
 * queues (drained before counters are reported) and, with --manage-nft, sends run updates
 * through the parent channel. */
#ifndef WARDEN_GATEWAY_CTLSRV_H
#define WARDEN_GATEWAY_CTLSRV_H

#include "common/common.h"
#include "gateway/auditrl.h"
#include "gateway/dns.h"
#include "gateway/ev.h"
#include "gateway/privchan.h"
#include "gateway/run.h"
#include "gateway/udplog.h"

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

struct ctl_op;
struct gw_ctlconn;

/**
 * struct gw_ctl - the control server
 * @ev:		the loop
 * @runs:	the run table
 * @audit:	the audit front (run.* events)
 * @dns:	the DNS front (drained before counters are reported)
 * @udp:	the NFLOG reader (drained before counters are reported and before
 *		a run leaves)
 * @priv:	the parent channel (--manage-nft)
 * @lis:	the control socket
 * @conns:	open control connections
 * @nconns:	how many
 * @request_ns:	the time a connection has to send one whole request (limits.ctl_request_ms)
 * @handle:	what a whole request does (set by gw_ctl_init(): ctlops.c or ctlnetns.c); the
 *		connections (ctlconn.c) reach the operations only through it
 * @release:	a closing connection's run leaves with it (ctlnetns.c)
 * @zombies:	closed connections, freed after the loop's round of events (gw_ctl_reap())
 *
 * The bounds (the run table's ctl_max and ctl_per_uid, gw_fd_share()) are checked at accept:
 * a connection past either is told why in one line and closed at once.
 */
struct gw_ctl {
	struct gw_ev *ev;
	struct gw_runs *runs;
	struct gw_audit *audit;
	struct gw_dns *dns;
	struct gw_udplog *udp;
	struct gw_privchan *priv;
	struct gw_listener lis;
	struct gw_ctlconn *conns;
	unsigned nconns;
	uint64_t request_ns;
	void (*handle)(struct gw_ctlconn *c, const struct gw_ctl_req *req);
	void (*release)(struct gw_ctlconn *c);
	struct gw_ctlconn *zombies;
};

/**
 * struct gw_ctlconn - one control connection
 * @ctl:	its server
 * @fd:		the socket
 * @next:	the next connection
 * @prev:	the previous one
 * @uid:	the client's uid (SO_PEERCRED)
 * @gid:	its gid
 * @pid:	its pid
 * @netns_fd:	a descriptor that came with the request being read (SCM_RIGHTS), -1: none;
 *		only a register with "netns" takes one
 * @owned:	the run registered with a namespace over this connection (a reference): it is
 *		unregistered when the connection closes (its launcher is gone); such a
 *		connection has no idle timeout
 * @in:		what arrived and was not handled yet
 * @out:	what is to be sent
 * @outoff:	how much of @out went out
 * @closing:	close once @out is sent
 * @closed:	closed (gw_ctlconn_close()): waits in the server's zombies to be freed
 * @waiting:	a register/unregister the parent has not answered yet (no
 *		further line is read meanwhile)
 * @timer:	GW_T_CTLCONN: the deadline of the request being read (@ctl->request_ns after
 *		the accept, or after the previous request was read whole); never moved by a
 *		byte that comes; not armed while the parent works on a request or while the
 *		connection holds a run
 * @timed:	@timer is the deadline of the request being read
 * @stream_run:	the run whose audit lines are sent on this connection (ctlstream.c; the
 *		register asked with "stream"); NULL: none
 * @stream_sent: event lines queued for sending
 * @stream_lost: event lines dropped since the last "audit.stream" notice (output full)
 * @stream_lost_total: all dropped
 * @stream_notice: the notice is being written (it may use the reserve)
 * @stream_armed: GW_POLL_OUT was asked for the queued lines
 */
struct gw_ctlconn {
	struct gw_ctl *ctl;
	int fd;
	struct gw_ctlconn *next, *prev;
	uid_t uid;
	gid_t gid;
	pid_t pid;
	int netns_fd;
	struct gw_run *owned;
	struct wd_buf in;
	struct wd_buf out;
	size_t outoff;
	bool closing;
	bool closed;
	struct ctl_op *waiting;
	struct gw_timer timer;
	bool timed;
	struct gw_run *stream_run;
	uint64_t stream_sent, stream_lost, stream_lost_total;
	bool stream_notice;
	bool stream_armed;
};

/**
 * gw_ctl_init() - the server over its listening socket
 * @ctl:	the server
 * @ev:		the loop
 * @runs:	the run table
 * @audit:	the audit front
 * @dns:	the DNS front
 * @udp:	the NFLOG reader
 * @priv:	the parent channel
 * @fd:		*@fd is the listening socket (taken: set to -1); -1: none
 * @err:	what failed
 * Return: 0, or a negative errno.
 */
int gw_ctl_init(struct gw_ctl *ctl, struct gw_ev *ev, struct gw_runs *runs, struct gw_audit *audit,
		struct gw_dns *dns, struct gw_udplog *udp, struct gw_privchan *priv, int *fd,
		struct wd_err *err);

/** gw_ctl_free() - close every control connection and the listener. */
void gw_ctl_free(struct gw_ctl *ctl);

/** gw_ctl_accept() - accept control connections (SO_PEERCRED recorded). */
void gw_ctl_accept(struct gw_ctl *ctl, struct gw_listener *l);
/** gw_ctlconn_event() - an epoll event on a control connection. */
void gw_ctlconn_event(struct gw_ctlconn *c, unsigned events);
/** gw_ctlconn_close() - close a control connection (again: nothing); it is freed by the
 * next gw_ctl_reap(), after the round of events that may still name it. */
void gw_ctlconn_close(struct gw_ctlconn *c);

/** gw_ctl_reap() - free the control connections closed in this round of events. */
void gw_ctl_reap(struct gw_ctl *ctl);
/**
 * gw_ctlconn_expired() - @c's request was not whole by its deadline (its GW_T_CTLCONN timer):
 * counted (stats ctl_expired), told so in one line when it can be, and closed
 */
void gw_ctlconn_expired(struct gw_ctlconn *c);

/* ------------------------------------------------------------ ctlconn.c */

/**
 * gw_ctlconn_put_json() - queue @j (taken; NULL: out of memory) as @c's answer line; a
 * connection whose answer cannot be queued is closed once its output is sent
 */
void gw_ctlconn_put_json(struct gw_ctlconn *c, json_t *j);
/** gw_ctlconn_put_error() - queue an error answer: @why and the errno name of @code (< 0). */
void gw_ctlconn_put_error(struct gw_ctlconn *c, int code, const char *why);
/** gw_ctlconn_put_ok() - queue {"ok":true}. */
void gw_ctlconn_put_ok(struct gw_ctlconn *c);
/**
 * gw_ctlconn_resume() - the parent answered @c's parked request (its answer is queued): read
 * the lines that came meanwhile, send, rearm (@c may be closed and freed on return)
 */
void gw_ctlconn_resume(struct gw_ctlconn *c);

/* ------------------------------------------------------------ ctlops.c */

/**
 * struct ctl_op - a request waiting for the parent's answer (a register or unregister under
 * --manage-nft, a cgroup_join, a register with netns)
 * @req:	first: the channel's handle
 * @ctl:	the server
 * @type:	what was asked
 * @c:		the client waiting (NULL once it went away, or none)
 * @run:	a reference to the run concerned (NULL: none)
 * @uid:	who asked
 * @creq:	a register with netns: the request, kept until the reply
 */
struct ctl_op {
	struct gw_privreq req;
	struct gw_ctl *ctl;
	enum gw_priv_type type;
	struct gw_ctlconn *c;
	struct gw_run *run;
	uid_t uid;
	struct gw_ctl_req creq;
};

/** gw_ctlops_handle() - carry out @req (any but a register with "netns") for @c. */
void gw_ctlops_handle(struct gw_ctlconn *c, const struct gw_ctl_req *req);

/**
 * gw_ctlop_send() - ask the parent to apply a run update (the facts of @run, else those of
 * @facts) for @c (NULL: nobody waits for the answer), or to move @facts->pid into @run's cgroup
 * (GW_PRIV_CGROUP_JOIN); @c is parked until the answer
 * Return: 0, or a negative errno.
 */
int gw_ctlop_send(struct gw_ctl *ctl, struct gw_ctlconn *c, enum gw_priv_type type,
		  struct gw_run *run, const struct gw_ctl_req *facts, uid_t uid);

/** gw_ctl_audit_run() - a run.* event of @r (@action, @reason) asked by @uid. */
void gw_ctl_audit_run(struct gw_ctl *ctl, struct gw_run *r, const char *action, uid_t uid,
		      const char *reason);

/** gw_ctl_addr_json() - @a as a JSON string, null when unset. */
json_t *gw_ctl_addr_json(const struct gw_addr *a);

/* ------------------------------------------------------------ ctlnetns.c */

/**
 * gw_ctlnetns_register() - a register with "netns": the descriptor that came with it checked,
 * the policy's limits read, the plumbing asked of the parent; the run enters the table and @c
 * is answered when the parent has answered
 */
void gw_ctlnetns_register(struct gw_ctlconn *c, const struct gw_ctl_req *req);

/** gw_ctlnetns_release() - @c goes: the run it holds leaves with it, its plumbing undone. */
void gw_ctlnetns_release(struct gw_ctlconn *c);

/* ------------------------------------------------------------ ctlstream.c */

/**
 * gw_ctlstream_attach() - send @run's audit lines on @c from now on, as event lines
 * @c:		the connection that holds the run
 * @run:	the run (@c holds a reference: c->owned)
 */
void gw_ctlstream_attach(struct gw_ctlconn *c, struct gw_run *run);

/**
 * gw_ctlstream_notice() - when event lines of @c's run were dropped, write one "audit.stream"
 * event saying how many (central log, and into the stream's reserve); harmless otherwise
 */
void gw_ctlstream_notice(struct gw_ctlconn *c);

/**
 * gw_ctlstream_sent() - after @c's output was sent (in part): drop what went, and write the
 * notice once the launcher has caught up to half the bound
 */
void gw_ctlstream_sent(struct gw_ctlconn *c);

/**
 * gw_ctlstream_detach() - no more lines on @c (it closes): the notice if lines were lost,
 * then the run's account forgets the connection
 */
void gw_ctlstream_detach(struct gw_ctlconn *c);

#endif /* WARDEN_GATEWAY_CTLSRV_H */

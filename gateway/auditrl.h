/* auditrl.h - the data plane's audit front (internal header; auditrl.c): every
 * event of a run goes through it, so that a flood cannot fill the disk and the
 * log still shows that it happened -- denial rate limits, a run's audit byte
 * budget, summary events. A run's share is a struct gw_audit_acct embedded in
 * the run (run.h); NULL stands for "no run". */
#ifndef WARDEN_GATEWAY_AUDITRL_H
#define WARDEN_GATEWAY_AUDITRL_H

#include "audit/audit.h"
#include "gateway/ev.h"
#include "gateway/toolcalls.h"

#include <stdint.h>

struct gw_flood;

/**
 * struct gw_audit_acct - one run's account with the audit front
 * @id:		the run's id (owned by the run)
 * @policy:	its policy name (owned by the run; "" when none)
 * @denied:	its denials, written one by one or counted (run.exit's "denials")
 * @deny_bucket: denials written one by one: GW_DENY_BURST, then GW_DENY_PER_S a second
 * @audit_bytes: audit log bytes its events took
 * @flood:	events not written one by one, for the next summary (NULL: none)
 * @mcp:	the run's MCP tool calls in flight: their `mcp` goes on its net and dns
 *		events, its denials count per tool
 * @stream:	called with each line written for the run, exactly as the log got it (its
 *		newline included): daemon mode's copy for the launcher's own log (ctlsrv.c);
 *		it must not block and must not write events itself. NULL: none
 * @stream_ctx:	its argument
 */
struct gw_audit_acct {
	const char *id;
	const char *policy;
	int64_t uid;	  /* whose run it is (the register's SO_PEERCRED uid); -1: none */
	const char *mode; /* "daemon" for a namespace a user handed over; NULL: not said */
	const char *user; /* @uid's user name; NULL: none */
	uint64_t denied;
	struct gw_bucket deny_bucket;
	uint64_t audit_bytes;
	struct gw_flood *flood;
	struct gw_toolcalls *mcp; /* its MCP tool calls in flight (owned by the run); NULL: none */
	bool learn;		  /* the run is in learn mode: its net and dns events say so */
	bool shadow;		  /* a shadow run (`warden run --shadow`): its events say so */
	void (*stream)(void *ctx, const char *line, size_t len);
	void *stream_ctx;
};

/**
 * struct gw_audit - the audit front
 * @ev:		the loop (the log, the clock, the counters)
 * @budget:	audit bytes a run may take (limits.audit_kib_per_run)
 * @deny_bucket: denials of no run written one by one
 * @flood:	events of no run not written one by one
 * @timer:	GW_T_FLOOD: write the summaries
 */
struct gw_audit {
	struct gw_ev *ev;
	uint64_t budget;
	struct gw_bucket deny_bucket;
	struct gw_flood *flood;
	struct gw_timer timer;
};

/* What the nft table dropped and logged to NFLOG, told apart by the log rule's
 * prefix (udplog.c counts them per run and kind). */
enum gw_drop_kind {
	GW_DROP_UDP,   /* other UDP or UDP-lite (no prefix): "net.udp" */
	GW_DROP_HOST,  /* an address of this host other than the run's own gateway: "net.host" */
	GW_DROP_CONNS, /* a new flow over the run's conntrack limit: "limit.connections" */
	GW_DROP_N,
};

/**
 * struct gw_droplog - the audit of one kind of drop, for one run (or for no run)
 * @bucket:	events written one by one: GW_UDP_BURST, then GW_UDP_PER_S a second
 * @dropped:	packets seen on NFLOG
 * @suppressed:	of those, not audited one by one yet (the next summary counts them)
 */
struct gw_droplog {
	struct gw_bucket bucket;
	uint64_t dropped;
	uint64_t suppressed;
};

/**
 * gw_audit_init() - an audit front over @ev's log
 * @a:		the front
 * @ev:		the loop
 * @budget:	audit bytes a run's events may take, then summaries only
 */
void gw_audit_init(struct gw_audit *a, struct gw_ev *ev, uint64_t budget);

/** gw_audit_free() - write the pending summaries of no run and stop the timer. */
void gw_audit_free(struct gw_audit *a);

/**
 * gw_audit() - write one event for @run (NULL: no run) to the audit log
 * Within the run's audit budget the event is written (an allowed one deferred
 * to the end of the loop round); past it, only counted for the next summary --
 * except the run's lifecycle events and summaries themselves. A failed write is
 * counted in the worker's audit_errors.
 */
void gw_audit(struct gw_audit *a, struct gw_audit_acct *run, struct audit_event *ev);

/**
 * gw_audit_denial() - a denial of @run: counted in @run->denied, written in
 * full while the run's rate allows (GW_DENY_BURST, then GW_DENY_PER_S a second;
 * see auditrl.c), else counted for the next summary
 */
void gw_audit_denial(struct gw_audit *a, struct gw_audit_acct *run, struct audit_event *ev);

/**
 * gw_audit_count() - a denial of @run that is never written one by one (a flood the gateway
 * refuses by a cap: the per-user DNS query cap): counted in @run->denied and in the next
 * summary of its kind, whose reason says @why (copied)
 */
void gw_audit_count(struct gw_audit *a, struct gw_audit_acct *run, struct audit_event *ev,
		    const char *why);

/**
 * gw_audit_summaries() - write @run's pending summaries (NULL: those of no run),
 * at the flood timer and when a run leaves
 */
void gw_audit_summaries(struct gw_audit *a, struct gw_audit_acct *run);

#endif /* WARDEN_GATEWAY_AUDITRL_H */

/* ship_internal.h - what writer.c uses of ship.c (shipping a copy of each audit line to
 * syslog or journald); nothing outside audit/ includes it. */
#ifndef WARDEN_AUDIT_SHIP_INTERNAL_H
#define WARDEN_AUDIT_SHIP_INTERNAL_H

#include "audit/audit.h"

struct audit_shipper;

/**
 * ship_open() - a shipper for @sink; the socket is opened (a TCP connect started) now
 * @sink:	where to (not AUDIT_SINK_NONE)
 * @app:	APP-NAME / SYSLOG_IDENTIFIER ("warden-gateway")
 * @ret:	on success, the shipper
 * @err:	on error, why; may be NULL
 *
 * A sink that cannot be reached is not an error: it is an outage, reported through
 * ship_notice() and retried.
 * Return: 0, -EINVAL (no sink, a facility out of range) or -ENOMEM.
 */
int ship_open(const struct audit_sink *sink, const char *app, struct audit_shipper **ret,
	      struct wd_err *err);

/* Bytes of the chain's hex digest a chained line's copy leaves to be filled (ship_fill()). */
#define SHIP_HOLE_LEN 64

/**
 * ship_queue() - frame one encoded line for the sink (sent by ship_commit())
 * @sh:		shipper
 * @ev:		the event (its time stamped), for the header
 * @line:	its encoded line (a trailing '\n' is left out)
 * @len:	the line's length
 * @chained:	the writer adds the chain's "prev" member when it writes the line: the copy
 *		gets it too, its digest a hole ship_fill() fills once it is known
 *
 * Out of memory counts the event as not shipped.
 * Return: where the hole is (for ship_fill()), or -1 (not chained, or not queued).
 */
ssize_t ship_queue(struct audit_shipper *sh, const struct audit_event *ev, const char *line,
		   size_t len, bool chained);

/**
 * ship_fill() - the chain's digest (SHIP_HOLE_LEN hex digits) into a queued copy's hole
 * @sh:		shipper
 * @hole:	ship_queue()'s answer for that line, in the batch not committed yet
 * @hex:	the digits
 */
void ship_fill(struct audit_shipper *sh, ssize_t hole, const char *hex);

/**
 * ship_commit() - send what ship_queue() framed, or drop it
 * @sh:		shipper
 * @written:	the local log took the batch: send it; false: forget it
 *
 * Never blocks: what the sink does not take now is counted (or, TCP, kept while there
 * is room).
 */
void ship_commit(struct audit_shipper *sh, bool written);

/**
 * ship_notice() - an event for the local log about the sink: an outage began, or ended
 * @sh:		shipper
 * @ev:		filled with the "audit.ship" event (type "audit"); its strings live in @sh
 *		and @reason
 * @reason:	storage for its reason
 * @size:	size of @reason (512 is enough)
 * @ret_ship:	true when the event is to be shipped too (the end of an outage)
 *
 * Return: 1 with an event, 0 when there is nothing to report.
 */
int ship_notice(struct audit_shipper *sh, struct audit_event *ev, char *reason, size_t size,
		bool *ret_ship);

/** ship_stats() - messages shipped (or kept for TCP) and not shipped, since ship_open(). */
void ship_stats(const struct audit_shipper *sh, uint64_t *ret_sent, uint64_t *ret_dropped);

/** ship_close() - a last moment (1 s) for the TCP sink's unsent frames, then free; NULL ok. */
void ship_close(struct audit_shipper *sh);

#endif

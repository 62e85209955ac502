/* ctlstream.c - daemon mode's event stream: the audit lines of a run, sent on the control
 * connection that holds it, for the launcher's own log.
 *
 * Theory of operation. A register with "netns" and "stream": "events" attaches the run's audit
 * account to its connection (gw_ctlstream_attach()): from then on every line the audit front
 * writes for the run (auditrl.c: write_event()) is also appended to that connection's output,
 * framed as an event line, `{"event":LINE}` -- LINE exactly the bytes of the central log,
 * without its newline. Answers stay `{"ok":...}` lines on the same connection, in order, so an
 * answer that follows an event was written after it. The central log is written first (the
 * output goes out after the loop flushed the audit queue: ctl_output()), and stays the record.
 *
 * The loop never waits for a launcher: at most GW_STREAM_MAX bytes of a connection's output
 * wait unsent; an event line that does not fit is dropped and counted (the connection's @lost).
 * After a loss nothing more is queued until one "audit.stream" event (type audit, allowed
 * false, count N, the reason) has been written for the run -- into the central log, and
 * through the same stream into the launcher's (it is always queued: there is at most one per
 * loss, and GW_STREAM_RESERVE is kept free for it) -- so both logs say that N events did not
 * reach the launcher, at the place where they are missing. It is written once the launcher
 * has read the output down to half the bound, before any answer on the connection (so a
 * launcher that reads up to its unregister's answer has every notice), when the run is
 * unregistered, and when the connection closes with events still lost. The launcher
 * only reads: nothing it sends becomes an event (its lines are requests, parsed as ever).
 */
#include "gateway/ctlsrv.h"

#include <stdio.h>
#include <string.h>

/* unsent output a connection may hold for its run's events (answers are not bounded by it) */
#define GW_STREAM_MAX (256u * 1024u)
/* of which this much is kept for the "audit.stream" notice */
#define GW_STREAM_RESERVE 4096u

static const char frame_open[] = "{\"event\":";
static const char frame_close[] = "}\n";

/* bytes of @c's output not sent yet */
static size_t unsent(const struct gw_ctlconn *c)
{
	return c->out.len - c->outoff;
}

/* one line of the run's (newline included): framed into @c's output, or dropped and counted */
static void stream_line(void *ctx, const char *line, size_t len)
{
	struct gw_ctlconn *c = ctx;
	size_t n = sizeof(frame_open) - 1 + (len - 1) + sizeof(frame_close) - 1;

	if (c->closing || !len || line[len - 1] != '\n')
		return;
	/* After a loss nothing more is queued until the notice is (so the launcher's copy keeps
	 * the central log's order); the notice itself is always queued: one per loss at most */
	if (!c->stream_notice &&
	    (c->stream_lost || unsent(c) + n > GW_STREAM_MAX - GW_STREAM_RESERVE)) {
		c->stream_lost++;
		c->stream_lost_total++;
		c->ctl->ev->stats.stream_lost++;
		return;
	}
	if (wd_buf_append(&c->out, frame_open, sizeof(frame_open) - 1) ||
	    wd_buf_append(&c->out, line, len - 1) ||
	    wd_buf_append(&c->out, frame_close, sizeof(frame_close) - 1)) {
		c->closing = true; /* out of memory: the run ends with its connection */
		return;
	}
	c->stream_sent++;
	if (!c->stream_armed) {
		/* sent by ctl_output() when the socket takes it, after the round's audit flush */
		c->stream_armed = true;
		gw_ev_mod(c->ctl->ev, c->fd,
			  (c->closing || c->waiting ? 0 : GW_POLL_IN) | GW_POLL_OUT,
			  GW_REF(GW_REF_CTL, c));
	}
}

void gw_ctlstream_attach(struct gw_ctlconn *c, struct gw_run *run)
{
	c->stream_run = run;
	run->acct.stream = stream_line;
	run->acct.stream_ctx = c;
}

void gw_ctlstream_notice(struct gw_ctlconn *c)
{
	struct gw_run *run = c->stream_run;
	char reason[512];
	struct audit_event ev = {
	    .type = AUDIT_TYPE_OTHER,
	    .type_name = "audit",
	    .action = "audit.stream",
	    .resource = run ? run->id : "",
	    .allowed = false,
	    .reason = reason,
	    .has = AUDIT_HAS_COUNT,
	};

	if (!run || !c->stream_lost)
		return;
	ev.count = (int64_t)c->stream_lost;
	snprintf(reason, sizeof(reason),
		 "%llu events of run %s were not sent to its launcher's own log: the launcher "
		 "read them too slowly (at most %u KiB wait for it); the gateway's log %s has "
		 "every one",
		 (unsigned long long)c->stream_lost, run->id, GW_STREAM_MAX / 1024,
		 c->ctl->ev->log ? audit_log_path(c->ctl->ev->log) : "(none)");
	c->stream_lost = 0;
	c->stream_notice = true; /* into the reserve */
	gw_audit(c->ctl->audit, gw_run_acct(run), &ev);
	c->stream_notice = false;
}

void gw_ctlstream_sent(struct gw_ctlconn *c)
{
	/* what was sent goes, so a connection read slowly but steadily does not grow */
	if (c->outoff && c->outoff >= c->out.len / 2) {
		memmove(c->out.data, c->out.data + c->outoff, c->out.len - c->outoff);
		c->out.len -= c->outoff;
		c->outoff = 0;
	}
	c->stream_armed = false;
	if (c->stream_lost && unsent(c) <= GW_STREAM_MAX / 2)
		gw_ctlstream_notice(c);
}

void gw_ctlstream_detach(struct gw_ctlconn *c)
{
	struct gw_run *run = c->stream_run;

	if (!run)
		return;
	gw_ctlstream_notice(c); /* in the central log at least */
	run->acct.stream = NULL;
	run->acct.stream_ctx = NULL;
	c->stream_run = NULL;
}

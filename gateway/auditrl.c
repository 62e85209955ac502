/* auditrl.c - the gateway's audit events under floods: a run cannot fill the
 * disk, and the log still shows that the flood happened and what it was.
 *
 * Theory of operation. Every event of the data plane goes through gw_audit();
 * every denial through gw_audit_denial() first.
 *   - Denials: each run (and the "no run" bucket) has a token bucket of
 *     GW_DENY_BURST events refilled at GW_DENY_PER_S a second. A denial that
 *     finds a token is written in full; one that does not is counted. Every
 *     denial counts in run->denied (run.exit's "denials"), written or not.
 *   - Budget: each run may have limits.audit_kib_per_run of audit log written
 *     for it (counted exactly: the length of each line). Past it, its events
 *     are counted instead of written -- except its lifecycle events (register,
 *     unregister, policy replace) and the summaries.
 *   - Summaries: what was counted is kept per kind of event (action and
 *     decision) with counts by name (the first GW_FLOOD_NAMES names of each
 *     kind; the rest as one number). A timer writes one summary event per
 *     kind and run GW_FLOOD_SUMMARY_NS after the first event was counted, and
 *     a run's pending summaries are written when it leaves the table. A
 *     summary has the action and decision of the events it stands for,
 *     resource "", "count" (how many), "names" (counts by name) and a reason
 *     that says why they were not written one by one.
 * A flood of N denials therefore writes at most GW_DENY_BURST + GW_DENY_PER_S
 * per second full events and one summary per kind and second, and the counts
 * add up to N.
 */
#include "gateway/auditrl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GW_DENY_BURST 100u
#define GW_DENY_PER_S 10u
#define GW_FLOOD_SUMMARY_NS 1000000000ull
#define GW_FLOOD_SLOTS 8  /* kinds of event (action, decision) a summary counts apart */
#define GW_FLOOD_NAMES 16 /* names counted apart per kind; the rest are "other" */

/* one kind of event (action and decision) counted since the last summary */
struct gw_flood_slot {
	const char *action; /* the writer's string literal */
	enum audit_type type;
	bool allowed;
	uint64_t count;
	uint64_t other; /* events whose name did not fit in @names */
	char *why;	/* heap: why they were never written one by one (gw_audit_count()); NULL */
	unsigned nnames;
	struct gw_flood_name {
		char *name; /* heap, printable ASCII */
		uint64_t n;
	} names[GW_FLOOD_NAMES];
};

/* the events of a run (or of no run) not written one by one since the last
 * summary: allocated on the first one, freed by the summary */
struct gw_flood {
	unsigned nslots;
	struct gw_flood_slot slot[GW_FLOOD_SLOTS];
	uint64_t lost; /* events of a kind beyond GW_FLOOD_SLOTS */
};

void gw_audit_init(struct gw_audit *a, struct gw_ev *ev, uint64_t budget)
{
	memset(a, 0, sizeof(*a));
	a->ev = ev;
	a->budget = budget;
	gw_timer_init(&a->timer, GW_T_FLOOD, a);
}

/* events always written: a run's lifecycle, summaries (of NFLOG drops too), and the audit's
 * own notices ("audit.stream": what a launcher's copy lacks) */
static bool exempt(const struct audit_event *ev)
{
	if (ev->has & (AUDIT_HAS_COUNT | AUDIT_HAS_DENIALS))
		return true;
	if (ev->type == AUDIT_TYPE_OTHER && ev->type_name && !strcmp(ev->type_name, "audit"))
		return true;
	return ev->type == AUDIT_TYPE_RUN && strcmp(ev->action, "run.liveness") != 0;
}

/* one write; its bytes count against @run's budget; the run's stream gets the same line */
static void write_event(struct gw_audit *a, struct gw_audit_acct *run, struct audit_event *ev)
{
	struct gw_ev *e = a->ev;
	const char *line;
	size_t len;

	if (audit_log_write(e->log, ev, ev->allowed ? AUDIT_WRITE_DEFER : 0, NULL)) {
		e->stats.audit_errors++;
		return;
	}
	if (!run)
		return;
	run->audit_bytes += audit_log_last_len(e->log);
	if (run->stream && (line = audit_log_last_line(e->log, &len)))
		run->stream(run->stream_ctx, line, len);
}

/* the name an event is counted under: printable ASCII, at most 255 bytes, never "" */
static void count_name(const char *res, char *out, size_t size)
{
	size_t n = 0;

	for (; res && res[n] && n + 1 < size && n < 255; n++) {
		unsigned char ch = (unsigned char)res[n];

		out[n] = (char)(ch >= 0x20 && ch < 0x7f ? ch : '?');
	}
	if (!n)
		out[n++] = '-';
	out[n] = '\0';
}

/* count @ev for @run's next summary instead of writing it (@why: the summary's own reason) */
static void suppress(struct gw_audit *a, struct gw_audit_acct *run, const struct audit_event *ev,
		     const char *why)
{
	struct gw_flood **fp = run ? &run->flood : &a->flood;
	struct gw_flood *f = *fp;
	struct gw_flood_slot *s = NULL;
	char name[256];

	a->ev->stats.audit_suppressed++;
	if (!f && !(f = *fp = calloc(1, sizeof(*f)))) {
		a->ev->stats.audit_errors++;
		return;
	}
	for (unsigned i = 0; i < f->nslots && !s; i++)
		if (f->slot[i].allowed == ev->allowed && !strcmp(f->slot[i].action, ev->action))
			s = &f->slot[i];
	if (!s) {
		if (f->nslots == GW_FLOOD_SLOTS) {
			f->lost++;
			goto arm;
		}
		s = &f->slot[f->nslots++];
		s->action = ev->action;
		s->type = ev->type;
		s->allowed = ev->allowed;
		s->why = why ? strdup(why) : NULL;
	}
	s->count++;
	count_name(ev->resource, name, sizeof(name));
	for (unsigned i = 0; i < s->nnames; i++)
		if (!strcmp(s->names[i].name, name)) {
			s->names[i].n++;
			goto arm;
		}
	if (s->nnames < GW_FLOOD_NAMES && (s->names[s->nnames].name = strdup(name)))
		s->names[s->nnames++].n = 1;
	else
		s->other++;
arm:
	if (a->timer.pos == GW_TIMER_IDLE)
		gw_arm(a->ev, &a->timer, a->ev->now + GW_FLOOD_SUMMARY_NS);
}

/* every event of a run names whose run it is (a shared daemon's log holds many users'):
 * summaries too */
static void whose(const struct gw_audit_acct *run, struct audit_event *ev)
{
	if (run->uid >= 0 && !(ev->has & AUDIT_HAS_UID)) {
		ev->has |= AUDIT_HAS_UID;
		ev->uid = run->uid;
	}
	if (run->mode && !ev->mode)
		ev->mode = run->mode;
	if (run->user && !ev->user)
		ev->user = run->user;
	/* a learn-mode run's every event says so (docs/audit.md "learn") */
	if (run->learn)
		ev->learn = true;
	/* and a shadow run's (docs/audit.md "shadow") */
	if (run->shadow)
		ev->shadow = true;
}

void gw_audit(struct gw_audit *a, struct gw_audit_acct *run, struct audit_event *ev)
{
	ev->run = run ? run->id : "";
	if (run && run->policy[0] && !ev->policy)
		ev->policy = run->policy;
	if (run)
		whose(run, ev);
	/* the MCP tool calls in flight when it happened (docs/audit.md "mcp") */
	if (run && run->mcp && run->mcp->json && !ev->mcp &&
	    (ev->type == AUDIT_TYPE_NET || ev->type == AUDIT_TYPE_DNS))
		ev->mcp = run->mcp->json;
	if (!a->ev->log)
		return;
	if (run && run->audit_bytes >= a->budget && !exempt(ev)) {
		suppress(a, run, ev, NULL);
		return;
	}
	/* Allowed events are queued and written once per loop round (one locked
	 * write for the batch, before the loop waits again); a denial goes out at
	 * once, with the queue, before the client learns of it. */
	write_event(a, run, ev);
}

void gw_audit_denial(struct gw_audit *a, struct gw_audit_acct *run, struct audit_event *ev)
{
	struct gw_bucket *b = run ? &run->deny_bucket : &a->deny_bucket;

	if (run)
		run->denied++;
	if (run && run->mcp)
		gw_toolcalls_denial(run->mcp, ev->resource, ev->has & AUDIT_HAS_PORT ? ev->port : 0,
				    ev->denial_id, ev->reason);
	if (gw_bucket_take(b, a->ev->now, GW_DENY_BURST, GW_DENY_PER_S)) {
		gw_audit(a, run, ev);
		return;
	}
	ev->run = run ? run->id : "";
	suppress(a, run, ev, NULL);
}

void gw_audit_count(struct gw_audit *a, struct gw_audit_acct *run, struct audit_event *ev,
		    const char *why)
{
	if (run)
		run->denied++;
	ev->run = run ? run->id : "";
	suppress(a, run, ev, why);
}

/* one summary event per kind of event counted; frees @*fp */
void gw_audit_summaries(struct gw_audit *a, struct gw_audit_acct *run)
{
	struct gw_flood **fp = run ? &run->flood : &a->flood;
	struct gw_flood *f = *fp;

	if (!f)
		return;
	*fp = NULL;
	for (unsigned i = 0; i < f->nslots; i++) {
		struct gw_flood_slot *s = &f->slot[i];
		struct audit_count names[GW_FLOOD_NAMES];
		char reason[768], why[400], other[96] = "";
		bool budget = run && run->audit_bytes >= a->budget;
		struct audit_event ev = {
		    .run = run ? run->id : "",
		    .type = s->type,
		    .action = s->action,
		    .resource = "",
		    .allowed = s->allowed,
		    .reason = reason,
		    .policy = run && run->policy[0] ? run->policy : NULL,
		    .has = AUDIT_HAS_COUNT,
		    .count = (int64_t)s->count,
		    .names_len = s->nnames,
		};

		for (unsigned k = 0; k < s->nnames; k++)
			names[k] = (struct audit_count){s->names[k].name, (int64_t)s->names[k].n};
		ev.names = names;
		if (s->other)
			snprintf(other, sizeof(other), "; %llu of them for other names",
				 (unsigned long long)s->other);
		if (i == 0 && f->lost)
			snprintf(other + strlen(other), sizeof(other) - strlen(other),
				 "; %llu events of other kinds", (unsigned long long)f->lost);
		if (s->why)
			snprintf(why, sizeof(why), "%s", s->why);
		else if (budget || s->allowed)
			snprintf(why, sizeof(why), "the run's audit budget of %llu KiB is used up",
				 (unsigned long long)(a->budget / 1024));
		else
			snprintf(why, sizeof(why),
				 "denials: the first %u of a run in full, then %u a second",
				 GW_DENY_BURST, GW_DENY_PER_S);
		snprintf(reason, sizeof(reason),
			 "rate limit: %llu %s %s events were not written one by one (%s); "
			 "counts by name in \"names\"%s",
			 (unsigned long long)s->count, s->allowed ? "allowed" : "denied", s->action,
			 why, other);
		if (run)
			whose(run, &ev);
		if (a->ev->log)
			write_event(a, run, &ev);
		for (unsigned k = 0; k < s->nnames; k++)
			free(s->names[k].name);
		free(s->why);
	}
	free(f);
}

void gw_audit_free(struct gw_audit *a)
{
	gw_audit_summaries(a, NULL);
	if (a->ev)
		gw_disarm(a->ev, &a->timer);
}

/* server.c - the pieces every tool of `warden mcp` uses: its audit events, an answer to a
 * call, a run found by id and stopped (TERM; tools.c sends the KILL after the grace). */
#include "mcp/internal.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------ audit, helpers */

void mcp_audit(struct mcp_server *m, const char *action, const char *run, const char *resource,
	       bool allowed, const char *fmt, ...)
{
	struct audit_event ev = {0};
	struct wd_err err;
	char reason[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	ev.run = run ? run : "";
	ev.type = AUDIT_TYPE_OTHER;
	ev.type_name = "mcp";
	ev.action = action;
	ev.resource = resource;
	ev.allowed = allowed;
	ev.reason = reason;
	ev.policy = m->policy_path;
	ev.has = AUDIT_HAS_PID | AUDIT_HAS_UID;
	ev.pid = getpid();
	ev.uid = getuid();
	wd_err_clear(&err);
	if (m->log && audit_log_write(m->log, &ev, AUDIT_WRITE_DURABLE, &err))
		wd_say(stderr, "warden mcp: audit: %s", err.msg);
}

int mcp_answer(struct mcp_server *m, json_t *id, json_t *result)
{
	return mcp_reply(&m->s, id, result);
}

struct mcp_run *mcp_run_by_id(struct mcp_server *m, const char *id)
{
	for (size_t i = 0; i < MCP_MAX_RUNS; i++)
		if (m->runs[i].used && !strcmp(m->runs[i].id, id))
			return &m->runs[i];
	return NULL;
}

void mcp_run_stop(struct mcp_run *r)
{
	if (r->reaped || r->term_at)
		return;
	kill(r->pid, SIGTERM);
	r->term_at = wd_mono_ns();
	if (!r->term_at)
		r->term_at = 1;
}

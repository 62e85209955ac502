/* query.c - the tools that look at runs or stop one: list_audit_log (the events of this
 * server's runs and its own, unless the policy says all), list_runs and kill_run. */
#include "mcp/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------ list_audit_log, list_runs */

static int cmp_id(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* @run is one this server started (m->session_runs is kept sorted) */
static bool session_run(const struct mcp_server *m, const char *run)
{
	return run && *run && m->nsession_runs &&
	       bsearch(run, m->session_runs, m->nsession_runs, sizeof(*m->session_runs), cmp_id);
}

/* list_audit_log's scope: with `mcp.audit_log: all` the whole log; else the events of this
 * server's runs, and its own (type mcp, its pid, written since it started) */
static bool in_scope(const struct mcp_server *m, pid_t self, const struct audit_event *ev)
{
	if (m->base->mcp_audit_log_all || session_run(m, ev->run))
		return true;
	return !strcmp(audit_event_type(ev), "mcp") && (ev->has & AUDIT_HAS_PID) &&
	       ev->pid == (int64_t)self && ev->ts.tv_sec >= m->started.tv_sec;
}

json_t *mcp_list_audit_log(struct mcp_server *m, json_t *args)
{
	json_t *jt = json_object_get(args, "tail"), *jr = json_object_get(args, "run");
	bool denied = json_is_true(json_object_get(args, "denied_only"));
	size_t tail = jt ? (size_t)json_integer_value(jt) : 100, n = 0, bytes = 0, cut = 0;
	struct audit_reader *rd = NULL;
	struct audit_event ev;
	json_t **ring, *list;
	size_t *size, first;
	pid_t self = getpid();
	struct wd_err err;
	int ret;

	if (jr && !m->base->mcp_audit_log_all && !session_run(m, json_string_value(jr)))
		return mcp_tool_error("list_audit_log: `%s` is not a run of this server; the agent "
				      "reads only the events of its own runs (the policy's "
				      "`mcp.audit_log: all` widens it to the whole log)",
				      json_string_value(jr));
	wd_err_clear(&err);
	ret = audit_reader_open(m->audit_path, 0, &rd, &err);
	if (ret == -ENOENT)
		return mcp_tool_result(
		    json_pack("{s:[], s:i, s:i}", "events", "skipped_lines", 0, "cut_events", 0));
	if (ret)
		return mcp_tool_error("list_audit_log: %s", err.msg[0] ? err.msg : strerror(-ret));
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	ring = calloc(tail, sizeof(*ring));
	size = calloc(tail, sizeof(*size));
	if (!ring || !size) {
		free(ring);
		free(size);
		audit_reader_close(rd);
		return NULL;
	}
	/* without a filter (and the whole log in scope) only the last @tail lines are read */
	if (!jr && !denied && m->base->mcp_audit_log_all)
		audit_reader_tail(rd, tail);
	while (audit_reader_next(rd, &ev) == 1) {
		size_t len;
		const char *line;

		if (in_scope(m, self, &ev) &&
		    (!jr || (ev.run && !strcmp(ev.run, json_string_value(jr)))) &&
		    (!denied || !ev.allowed)) {
			line = audit_reader_line(rd, &len);
			json_decref(ring[n % tail]);
			ring[n % tail] = json_loadb(line, len, 0, NULL);
			size[n % tail] = len;
			n++;
		}
		audit_event_clear(&ev);
	}
	/* the newest events that fit MCP_LOG_CAP bytes (each one's JSON line) */
	first = n > tail ? n - tail : 0;
	for (size_t i = n; i > first; i--) {
		if (bytes + size[(i - 1) % tail] > MCP_LOG_CAP) {
			cut = i - first;
			first = i;
			break;
		}
		bytes += size[(i - 1) % tail];
	}
	list = json_array();
	for (size_t i = first; list && i < n; i++) {
		json_t *e = ring[i % tail];

		if (e)
			json_array_append(list, e);
	}
	for (size_t i = 0; i < tail; i++)
		json_decref(ring[i]);
	free(ring);
	free(size);
	n = audit_reader_skipped(rd);
	audit_reader_close(rd);
	return mcp_tool_result(json_pack("{s:o, s:I, s:I}", "events", list, "skipped_lines",
					 (json_int_t)n, "cut_events", (json_int_t)cut));
}

json_t *mcp_list_runs(struct mcp_server *m)
{
	json_t *list = json_array();
	uint64_t now = wd_mono_ns();

	for (size_t i = 0; list && i < MCP_MAX_RUNS; i++) {
		const struct mcp_run *r = &m->runs[i];

		if (r->used)
			json_array_append_new(list,
					      json_pack("{s:s, s:s, s:i, s:f, s:b}", "run", r->id,
							"command", r->cmdline, "pid", (int)r->pid,
							"age_s", (double)(now - r->t0) / 1e9,
							"stopping", r->term_at != 0));
	}
	return mcp_tool_result(json_pack("{s:o}", "runs", list));
}

json_t *mcp_kill_run(struct mcp_server *m, json_t *args)
{
	const char *id = json_string_value(json_object_get(args, "run"));
	struct mcp_run *r = mcp_run_by_id(m, id);

	if (!r)
		return mcp_tool_error("kill_run: `%s` is not a live run of this server (list_runs)",
				      id);
	r->killed = true;
	mcp_run_stop(r);
	mcp_audit(m, "mcp.kill", r->id, r->cmdline, true, "kill_run: TERM sent, KILL after %llu s",
		  MCP_GRACE_NS / 1000000000ull);
	return mcp_tool_result(json_pack("{s:s, s:s}", "run", r->id, "signal", "TERM"));
}

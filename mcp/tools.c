/* tools.c - the tools of `warden mcp`: their table (run_sandboxed, list_audit_log, list_runs,
 * kill_run, set_egress_allowlist), the dispatch of a call to the file that does it, the
 * timers, and the end of the server.
 *
 * Theory of operation (docs/mcp.md has the long form). A run is this same program's `run`
 * verb, started with the derived policy (the configured one minus the names removed, plus the
 * names a person approved) and `--started-by mcp`, its stdin, stdout and stderr pipes of ours;
 * the event loop (cmd_mcp.c) moves their bytes (child.c) and notices its end through a pidfd, so
 * calls run side by side while the server keeps reading. A cancelled call's run gets TERM, then
 * KILL after MCP_GRACE_NS. The agent cannot widen its own sandbox: removing a name applies at once,
 * adding one only makes a request in the approval store (approval.c) that a person decides,
 * through the client's elicitation or `warden allowlist approve|deny` at a terminal; a policy
 * with `mcp.allowlist: locked` refuses additions. Every request and decision is audited. A
 * call asks for few names (MCP_ASK_MAX_NAMES, MCP_ASK_MAX_BYTES), and its question is made
 * from exactly the requests an acceptance decides (ask_text()), so the person sees all that
 * is added (allowlist.c). list_audit_log shows the agent the events of this server's runs and its
 * own (query.c, in_scope()), unless the policy says `mcp.audit_log: all`.
 */
#include "mcp/internal.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------ the tools' table */

static const struct mcp_arg run_args[] = {
    {"command", MCP_ARG_STRING_OR_STRINGS, true, 256, 0, 4096,
     "the program and its arguments (a list), or one shell line run by /bin/sh -c"},
    {"stdin", MCP_ARG_STRING, false, MCP_STDIN_MAX, 0, 0, "bytes given to the program's stdin"},
    {"timeout_s", MCP_ARG_INT, false, 86400, 1, 0, "wall-clock limit in seconds"},
    {"cwd", MCP_ARG_STRING, false, 4096, 0, 0,
     "working folder: must lie inside one of the policy's write grants"},
};

static const struct mcp_arg log_args[] = {
    {"tail", MCP_ARG_INT, false, 10000, 1, 0, "how many of the last events (default 100)"},
    {"run", MCP_ARG_STRING, false, 64, 0, 0, "only this run's events"},
    {"denied_only", MCP_ARG_BOOL, false, 0, 0, 0, "only denials"},
};

_Static_assert(MCP_ASK_MAX_NAMES == 8 && MCP_ASK_MAX_BYTES == 512,
	       "set_egress_allowlist's description of `add` says 8 names and 512 bytes");

static const struct mcp_arg kill_args[] = {
    {"run", MCP_ARG_STRING, true, 64, 0, 0, "the run id (list_runs)"},
};

static const struct mcp_arg allow_args[] = {
    {"add", MCP_ARG_STRINGS, false, MCP_ASK_MAX_NAMES, 0, 255,
     "names to allow (network.allow entries: host, *.suffix, host:port): a "
     "request that waits for a person's approval; at most 8 names of at most 512 bytes in all "
     "(the person is shown every one)"},
    {"remove", MCP_ARG_STRINGS, false, MCP_MAX_NAMES, 0, 255,
     "names to take out of the allowlist: applies at once"},
    {"run", MCP_ARG_STRING, false, 64, 0, 0,
     "a live run of this server: the removal applies to it too"},
};

static const char run_out_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"run\":{\"type\":\"string\"},"
    "\"exit\":{\"type\":\"integer\"},"
    "\"signal\":{\"type\":\"integer\"},"
    "\"stdout\":{\"type\":\"string\"},"
    "\"stderr\":{\"type\":\"string\"},"
    "\"stdout_cut_bytes\":{\"type\":\"integer\"},"
    "\"stderr_cut_bytes\":{\"type\":\"integer\"},"
    "\"killed\":{\"type\":\"boolean\"},"
    "\"denials\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
    "\"host\":{\"type\":\"string\"},\"reason\":{\"type\":\"string\"},"
    "\"denial_id\":{\"type\":\"string\"},\"action\":{\"type\":\"string\"},"
    "\"port\":{\"type\":\"integer\"}},\"required\":[\"host\",\"reason\"]}}},"
    "\"required\":[\"run\",\"exit\",\"stdout\",\"stderr\",\"stdout_cut_bytes\","
    "\"stderr_cut_bytes\",\"denials\"]}";

static const char log_out_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"events\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}},"
    "\"skipped_lines\":{\"type\":\"integer\"},"
    "\"cut_events\":{\"type\":\"integer\"}},\"required\":[\"events\"]}";

static const char runs_out_schema[] =
    "{\"type\":\"object\",\"properties\":{\"runs\":{\"type\":\"array\",\"items\":"
    "{\"type\":\"object\",\"properties\":{\"run\":{\"type\":\"string\"},"
    "\"command\":{\"type\":\"string\"},\"pid\":{\"type\":\"integer\"},"
    "\"age_s\":{\"type\":\"number\"},\"stopping\":{\"type\":\"boolean\"}},"
    "\"required\":[\"run\",\"command\",\"pid\",\"age_s\"]}}},\"required\":[\"runs\"]}";

static const char kill_out_schema[] =
    "{\"type\":\"object\",\"properties\":{\"run\":{\"type\":\"string\"},"
    "\"signal\":{\"type\":\"string\"}},\"required\":[\"run\",\"signal\"]}";

static const char allow_out_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"removed\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}},"
    "\"added\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}},"
    "\"pending\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
    "\"name\":{\"type\":\"string\"},\"request\":{\"type\":\"string\"}},"
    "\"required\":[\"name\",\"request\"]}},"
    "\"refused\":{\"type\":\"array\",\"items\":{\"type\":\"object\"}},"
    "\"message\":{\"type\":\"string\"}},\"required\":[\"message\"]}";

const struct mcp_tool mcp_tools[] = {
    {"run_sandboxed", "Run a command in the Warden sandbox",
     "Runs a command under the configured Warden policy (network by host name only as allowed, "
     "files only as granted), exactly like `warden run`. Returns stdout, stderr (each capped: "
     "how much was cut is said), the exit status, the run id and the run's network denials.",
     run_args, WD_ARRAY_SIZE(run_args), run_out_schema},
    {"list_audit_log", "Read the audit log",
     "The last events of the Warden audit log of this server's runs (and its own events; the "
     "policy's mcp.audit_log: all widens it to the whole log), structured; optionally of one "
     "run, or only denials. At most 1 MiB of events: the newest; cut_events says how many "
     "older ones were left out.",
     log_args, WD_ARRAY_SIZE(log_args), log_out_schema},
    {"set_egress_allowlist", "Change the network allowlist",
     "Removes names from the allowlist (at once, for new runs and with `run` for that live "
     "run) or asks to add names: an addition does nothing until a person approves it; the "
     "answer then says `pending approval REQUEST-ID`.",
     allow_args, WD_ARRAY_SIZE(allow_args), allow_out_schema},
    {"list_runs", "List this server's live runs", "The runs of run_sandboxed still going on.", NULL,
     0, runs_out_schema},
    {"kill_run", "Stop a live run",
     "Stops one of this server's live runs: TERM, then KILL after a grace period.", kill_args,
     WD_ARRAY_SIZE(kill_args), kill_out_schema},
};
const size_t mcp_ntools = WD_ARRAY_SIZE(mcp_tools);

/* ------------------------------------------------------------ dispatch, timers */

void mcp_tool_call(void *ctx, const struct mcp_tool *tool, json_t *id, json_t *args,
		   json_t *progress)
{
	struct mcp_server *m = ctx;
	json_t *res = NULL;

	if (!strcmp(tool->name, "run_sandboxed"))
		res = mcp_run_start(m, id, args, progress);
	else if (!strcmp(tool->name, "list_audit_log"))
		res = mcp_list_audit_log(m, args);
	else if (!strcmp(tool->name, "list_runs"))
		res = mcp_list_runs(m);
	else if (!strcmp(tool->name, "kill_run"))
		res = mcp_kill_run(m, args);
	else if (!strcmp(tool->name, "set_egress_allowlist"))
		res = mcp_set_allowlist(m, id, args);
	else
		res = mcp_tool_error("%s: not built", tool->name);
	if (res)
		mcp_answer(m, id, res);
}

void mcp_tool_cancelled(void *ctx, json_t *id, const char *reason)
{
	struct mcp_server *m = ctx;

	for (size_t i = 0; i < MCP_MAX_RUNS; i++) {
		struct mcp_run *r = &m->runs[i];

		if (!r->used || !json_equal(r->call, id) || r->cancelled)
			continue;
		r->cancelled = true;
		mcp_run_stop(r);
		mcp_audit(m, "mcp.cancel", r->id, r->cmdline, true,
			  "notifications/cancelled%s%s: TERM sent, KILL after %llu s",
			  reason ? ": " : "", reason ? reason : "", MCP_GRACE_NS / 1000000000ull);
	}
	for (size_t i = 0; i < MCP_MAX_ADDS; i++) {
		struct mcp_add *a = &m->adds[i];

		/* a cancelled question: its names stay pending for a terminal */
		if (a->used && a->call && json_equal(a->call, id)) {
			json_decref(a->call);
			a->call = NULL;
			a->elicit = 0;
		}
	}
}

void mcp_tick(struct mcp_server *m, uint64_t now)
{
	for (size_t i = 0; i < MCP_MAX_RUNS; i++) {
		struct mcp_run *r = &m->runs[i];

		if (!r->used)
			continue;
		if (r->term_at && !r->reaped && now - r->term_at > MCP_GRACE_NS) {
			kill(r->pid, SIGKILL);
			r->term_at = now; /* again after another grace, should it linger */
		}
		if (r->progress && !r->cancelled && now >= r->next_progress) {
			char msg[128];

			r->nprogress++;
			snprintf(msg, sizeof(msg), "run %s going on for %u s, %zu bytes of output",
				 r->id, r->nprogress, r->out[0].buf.len + r->out[1].buf.len);
			mcp_notify(&m->s, "notifications/progress",
				   json_pack("{s:O, s:i, s:s}", "progressToken", r->progress,
					     "progress", (int)r->nprogress, "message", msg));
			r->next_progress = now + 1000000000ull;
		}
	}
	mcp_poll_decisions(m);
}

void mcp_shutdown(struct mcp_server *m)
{
	uint64_t t0 = wd_mono_ns();
	bool live;

	for (size_t i = 0; i < MCP_MAX_RUNS; i++)
		if (m->runs[i].used) {
			m->runs[i].cancelled = true;
			mcp_run_stop(&m->runs[i]);
			mcp_audit(m, "mcp.cancel", m->runs[i].id, m->runs[i].cmdline, true,
				  "the client went away: TERM sent");
		}
	do {
		live = false;
		for (size_t i = 0; i < MCP_MAX_RUNS; i++) {
			struct mcp_run *r = &m->runs[i];

			if (!r->used)
				continue;
			for (int k = 0; k < 2; k++)
				if (r->out[k].fd >= 0)
					mcp_run_io(m, r, r->out[k].fd);
			if (!r->reaped && wd_mono_ns() - t0 > MCP_GRACE_NS)
				kill(r->pid, SIGKILL);
			if (!r->reaped && waitpid(r->pid, &r->wstatus, WNOHANG) == r->pid)
				r->reaped = true;
			if (r->reaped) {
				for (int k = 0; k < 2; k++)
					if (r->out[k].fd >= 0) {
						close(r->out[k].fd);
						r->out[k].fd = -1;
					}
				mcp_run_finish(m, r);
			} else {
				live = true;
			}
		}
		if (live)
			nanosleep(&(struct timespec){0, 20000000}, NULL);
	} while (live);
	for (size_t i = 0; i < MCP_MAX_ADDS; i++) {
		struct mcp_add *a = &m->adds[i];

		for (size_t k = 0; a->used && k < a->n; k++)
			if (a->req[k].id[0]) {
				run_approval_remove(m->approval_fd, a->req[k].id);
				mcp_audit(
				    m, "mcp.allowlist.deny", a->req[k].run, a->req[k].name, false,
				    "request %s: the server ended before a person decided; the "
				    "name stays out",
				    a->req[k].id);
			}
		if (a->used)
			mcp_add_drop(a);
	}
	if (m->derived[0])
		unlink(m->derived);
	if (m->state_dir[0])
		rmdir(m->state_dir);
	free(m->session_runs);
	m->session_runs = NULL;
	m->nsession_runs = 0;
}

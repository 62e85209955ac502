/* internal.h - internal to `warden mcp`: the server's state, shared by cmd_mcp.c (the verb,
 * the event loop) and the tools. docs/mcp.md has the theory of operation.
 *
 * The files, bottom first (each calls only those above it; proto.c and approval.c are APIs of
 * their own below them all):
 *   server.c	audit events, answers, a run found by id and stopped
 *   derive.c	the derived policy new runs get
 *   child.c	run_sandboxed: the `warden run` child, its pipes, its answer
 *   query.c	list_audit_log, list_runs, kill_run
 *   allowlist.c	set_egress_allowlist and the approvals glue
 *   tools.c	the tools' table, the dispatch of a call, the timers, the end
 */
#ifndef WARDEN_MCP_INTERNAL_H
#define WARDEN_MCP_INTERNAL_H

#include "run/approval.h"
#include "mcp/proto.h"
#include "audit/audit.h"
#include "common/common.h"
#include "policy/policy.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#define MCP_MAX_RUNS 16		   /* runs of one server at once */
#define MCP_MAX_ADDS 64		   /* additions waiting for a person at once */
#define MCP_OUT_CAP (256u << 10)   /* stdout and stderr kept of a run, each */
#define MCP_STDIN_MAX (1u << 20)   /* the stdin argument's bytes */
#define MCP_GRACE_NS 3000000000ull /* TERM, then KILL after this */
#define MCP_MAX_NAMES 64	   /* names to remove in one set_egress_allowlist call */
#define MCP_ASK_MAX_NAMES 8	   /* names to add in one call: one question shows them all */
#define MCP_ASK_MAX_BYTES 512	   /* and their bytes in all */
#define MCP_LOG_CAP (1u << 20)	   /* list_audit_log: bytes of events in one answer */

/**
 * struct mcp_out - one captured stream of a run
 * @fd:		our end of its pipe, -1 once at its end
 * @buf:	what was kept (at most MCP_OUT_CAP)
 * @cut:	bytes not kept
 */
struct mcp_out {
	int fd;
	struct wd_buf buf;
	uint64_t cut;
};

/**
 * struct mcp_run - one run_sandboxed call's run
 * @used:	the slot is taken
 * @id:		the run's id (given to `warden run --run-id`)
 * @call:	the tools/call request's id (a reference)
 * @progress:	its progressToken, or NULL
 * @pid:	the `warden run` process
 * @pidfd:	a pidfd of it, -1 once reaped
 * @in_fd:	our end of its stdin pipe, -1 once all was written
 * @in:		the stdin bytes (owned), @in_len of them, @in_off written
 * @out:	stdout and stderr
 * @t0:		when it started (monotonic ns)
 * @term_at:	when TERM was sent (0: not), for the KILL after the grace
 * @cancelled:	the client cancelled the call: no answer is sent
 * @killed:	kill_run stopped it
 * @wstatus:	its wait status, once @reaped
 * @reaped:	waited for
 * @argv0:	the command's first word, for list_runs
 * @cmdline:	the command, for list_runs and the audit
 * @next_progress: when the next progress notification is due
 * @nprogress:	how many were sent
 */
struct mcp_run {
	bool used;
	char id[16];
	json_t *call;
	json_t *progress;
	pid_t pid;
	int pidfd;
	int in_fd;
	char *in;
	size_t in_len, in_off;
	struct mcp_out out[2];
	uint64_t t0;
	uint64_t term_at;
	bool cancelled;
	bool killed;
	int wstatus;
	bool reaped;
	char cmdline[512];
	uint64_t next_progress;
	unsigned nprogress;
};

/**
 * struct mcp_add - names asked for in one set_egress_allowlist call, waiting for a decision
 * @used:	the slot is taken
 * @call:	the tools/call waiting for an elicitation's answer, or NULL (answered "pending")
 * @elicit:	our elicitation/create request's id, 0 when none
 * @n:		how many names
 * @req:	each one's request in the approval store
 */
struct mcp_add {
	bool used;
	json_t *call;
	long long elicit;
	size_t n;
	struct run_approval_req req[MCP_ASK_MAX_NAMES];
};

/**
 * struct mcp_server - `warden mcp`'s state
 * @s:		the protocol session
 * @self:	this program's path, to start `warden run` and `warden allowlist`
 * @policy_path: --policy, absolute, or NULL (the empty policy)
 * @config:	--config, absolute, or NULL
 * @audit_path:	the audit log, absolute
 * @log:	the audit log, for the server's own events
 * @base:	the policy as loaded and validated at start
 * @removed:	names removed by set_egress_allowlist (each a one-rule policy)
 * @nremoved:	how many
 * @added:	names a person approved (each a one-rule policy)
 * @nadded:	how many
 * @gen:	the derived policy's generation
 * @derived:	the derived policy file new runs get: @base minus @removed plus @added
 * @state_dir:	the server's own folder (0700): the derived policies
 * @approval_dir: the approval store's folder
 * @approval_fd: its descriptor
 * @runs:	the live runs
 * @adds:	the additions waiting for a person
 * @started:	when the server started (CLOCK_REALTIME): its own audit events are the ones of
 *		its pid written since
 * @session_runs: the ids of every run this server started (list_audit_log's scope)
 * @nsession_runs: how many
 * @eof:	the client closed stdin
 */
struct mcp_server {
	struct mcp_session s;
	char self[PATH_MAX];
	char *policy_path;
	char *config;
	const char *backend; /* --backend NAME given to each `warden run`, or NULL */
	char audit_path[PATH_MAX];
	struct audit_log *log;
	struct audit_key *key; /* signs the anchor of a file a rotation begins */
	struct wd_policy *base;
	struct wd_policy **removed;
	size_t nremoved;
	struct wd_policy **added;
	size_t nadded;
	unsigned gen;
	char derived[PATH_MAX];
	char state_dir[PATH_MAX];
	char approval_dir[PATH_MAX];
	int approval_fd;
	struct mcp_run runs[MCP_MAX_RUNS];
	struct mcp_add adds[MCP_MAX_ADDS];
	struct timespec started;
	char (*session_runs)[16];
	size_t nsession_runs;
	bool eof;
};

/* ------------------------------------------------------------ server.c */

/** mcp_answer() - answer the call @id with @result (taken). Return: as mcp_reply(). */
int mcp_answer(struct mcp_server *m, json_t *id, json_t *result);

/** mcp_run_by_id() - the live run @id of this server, or NULL */
struct mcp_run *mcp_run_by_id(struct mcp_server *m, const char *id);

/** mcp_run_stop() - send @r TERM once (mcp_tick() sends the KILL after MCP_GRACE_NS) */
void mcp_run_stop(struct mcp_run *r);

/* ------------------------------------------------------------ derive.c */

/**
 * mcp_one_rule() - @text (a network rule as a policy writes it) as a one-rule policy
 * @ret:	the policy, on success
 * @why:	the reason on failure
 * Return: 0, -EINVAL (@why says why), or -ENOMEM.
 */
int mcp_one_rule(const char *text, struct wd_policy **ret, char *why, size_t wsize);

/** mcp_same_target() - @a and @b name the same host, pattern or address range (ports aside) */
bool mcp_same_target(const struct policy_rule *a, const struct policy_rule *b);

/** mcp_is_removed() - @r's target was removed by set_egress_allowlist */
bool mcp_is_removed(const struct mcp_server *m, const struct policy_rule *r);

/* ------------------------------------------------------------ the tools */

/**
 * mcp_run_start() - run_sandboxed (child.c): start the run of @args for the call @id
 * Return: an error result to answer now, or NULL (answered when the run ends).
 */
json_t *mcp_run_start(struct mcp_server *m, json_t *id, json_t *args, json_t *progress);

/** mcp_run_finish() - answer @r's call from its end and free its slot (child.c) */
void mcp_run_finish(struct mcp_server *m, struct mcp_run *r);

/** mcp_list_audit_log() - list_audit_log (query.c). Return: the result to answer. */
json_t *mcp_list_audit_log(struct mcp_server *m, json_t *args);

/** mcp_list_runs() - list_runs (query.c). Return: the result to answer. */
json_t *mcp_list_runs(struct mcp_server *m);

/** mcp_kill_run() - kill_run (query.c). Return: the result to answer. */
json_t *mcp_kill_run(struct mcp_server *m, json_t *args);

/**
 * mcp_set_allowlist() - set_egress_allowlist (allowlist.c)
 * Return: the result to answer now, or NULL (answered when the person's answer comes).
 */
json_t *mcp_set_allowlist(struct mcp_server *m, json_t *id, json_t *args);

/** mcp_poll_decisions() - decide the waiting additions a person decided at a terminal */
void mcp_poll_decisions(struct mcp_server *m);

/** mcp_add_drop() - release the slot @a */
void mcp_add_drop(struct mcp_add *a);

/* the tools (tools.c) */
extern const struct mcp_tool mcp_tools[];
extern const size_t mcp_ntools;

/**
 * mcp_tool_call() - struct mcp_ops.call: run the tool, answering now or when it is done
 */
void mcp_tool_call(void *ctx, const struct mcp_tool *tool, json_t *id, json_t *args,
		   json_t *progress);

/** mcp_tool_cancelled() - struct mcp_ops.cancelled: stop that call's run (audited) */
void mcp_tool_cancelled(void *ctx, json_t *id, const char *reason);

/** mcp_tool_answer() - struct mcp_ops.answer: the client's answer to an elicitation */
void mcp_tool_answer(void *ctx, json_t *id, const json_t *result, const json_t *error);

/**
 * mcp_derive() - write the derived policy for new runs (@m->derived), validated
 * @why:	the reason on failure
 * Return: 0, or a negative errno.
 */
int mcp_derive(struct mcp_server *m, char *why, size_t wsize);

/**
 * mcp_protect() - what the policy's grants must keep away from: the audit log, the approval
 * store, the server's state (and what `warden run` protects)
 */
void mcp_protect(const struct mcp_server *m, struct policy_protect *v, size_t *n, size_t max);

/** mcp_audit() - write one of the server's events (type mcp); errors are said on stderr */
void mcp_audit(struct mcp_server *m, const char *action, const char *run, const char *resource,
	       bool allowed, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/** mcp_run_io() - move a run's bytes: @fd (its stdin, stdout or stderr pipe) became ready */
void mcp_run_io(struct mcp_server *m, struct mcp_run *r, int fd);

/** mcp_run_check() - reap the run's process when it ended; answer the call once all is read */
void mcp_run_check(struct mcp_server *m, struct mcp_run *r);

/** mcp_tick() - timers: progress, the KILL after the grace, decisions in the approval store */
void mcp_tick(struct mcp_server *m, uint64_t now);

/** mcp_shutdown() - stop every run (TERM, then KILL), drop pending requests, remove state */
void mcp_shutdown(struct mcp_server *m);

#endif

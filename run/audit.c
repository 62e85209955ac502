/* run_audit.c - the events `warden run` writes itself: "run.start" (durable before the program
 * runs: written first, its fdatasync done by a helper process while the network is built and
 * waited for at the last stage before exec), the limit events of an ended run, and "run.exit"
 * (written when the status is known, made durable once the teardown child is on its own). Every
 * event carries the run id, the policy and its hash, the launcher's pid and the person's uid. */
#include "run/internal.h"
#include "sandbox/sandbox.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* fill_common() - what every event of the launcher carries: run, policy, pid, uid, mode */
static void fill_common(struct run *r, struct audit_event *ev)
{
	static char user[256];
	struct passwd pw, *pwr = NULL;
	char pwbuf[1024];

	ev->run = r->id;
	ev->policy = r->input.policy_abs;
	ev->policy_hash = r->input.policy_hash;
	ev->has |= AUDIT_HAS_PID | AUDIT_HAS_UID;
	ev->pid = getpid();
	ev->uid = r->input.caller_uid;
	if (!getpwuid_r(r->input.caller_uid, &pw, pwbuf, sizeof(pwbuf), &pwr) && pwr &&
	    strlen(pw.pw_name) < sizeof(user)) {
		strcpy(user, pw.pw_name);
		ev->user = user;
	}
	ev->mode = r->mode->name;
}

static int write_event(struct run *r, struct audit_event *ev, unsigned flags)
{
	struct wd_err err;
	int ret;

	fill_common(r, ev);
	wd_err_clear(&err);
	ret = audit_log_write(r->audit.log, ev, flags, &err);
	if (ret)
		wd_say(stderr, "warden run: audit: %s", err.msg[0] ? err.msg : strerror(-ret));
	return ret;
}

/* run.start's `isolation`: the network, the sandbox backend's words, the uid, the limits. */
static void isolation_text(struct run *r, char *out, size_t size)
{
	char sb[256];

	run_sandbox_describe(r, sb, sizeof(sb));
	r->mode->isolation(r, sb, out, size);
}

/* run.start's `mcp`: {"relay": true}, or {"relay": false, "reason"} (run_stdio_plan() decided) */
static const char *stdio_start_json(const struct run *r, char *out, size_t size)
{
	if (r->sandbox.io.want)
		snprintf(out, size, "{\"relay\":true}");
	else
		snprintf(out, size,
			 "{\"relay\":false,\"reason\":\"%s: no relay, no MCP attribution\"}",
			 r->sandbox.io.why);
	return out;
}

/* load_key() - the person's signing key for run.exit, made on first use. Fails closed: a run
 * whose record cannot be signed does not start. Return: 0, or run_fail()'s status */
static int load_key(struct run *r)
{
	const char *fix;
	struct wd_err err;
	int ret;

	wd_err_clear(&err);
	ret = run_audit_key_open(run_audit_key_path(), &r->audit.key, &err, &fix);
	if (ret)
		return run_fail(r, "audit", fix, "%s", err.msg[0] ? err.msg : strerror(-ret));
	return 0;
}

/* write_signed() - run.exit with its root, count and key, signed. When the run's lines
 * cannot be read back, it is written unsigned (a verifier counts it) and said on stderr.
 * Return: 0 or -errno */
static int write_signed(struct run *r, struct audit_event *ev, unsigned flags)
{
	char hex[8 + 2 * AUDIT_HASH_LEN];
	struct wd_err err;
	int ret;

	if (!r->audit.key)
		ret = -ENOKEY;
	else if (!r->audit.has_pos || !r->audit.has_start_hash)
		ret = -ENODATA;
	else
		ret = audit_run_root(audit_log_path(r->audit.log), &r->audit.start_pos,
				     r->audit.start_hash, r->id, hex, &ev->events);
	if (ret < 0) {
		wd_say(stderr,
		       "warden run: audit: run.exit is not signed: the run's lines could "
		       "not be read back (%s)",
		       strerror(-ret));
		return write_event(r, ev, flags);
	}
	ev->root = hex;
	ev->has |= AUDIT_HAS_EVENTS;
	ev->key = audit_key_id(r->audit.key);
	fill_common(r, ev);
	wd_err_clear(&err);
	ret = audit_log_write_signed(r->audit.log, ev, r->audit.key, flags, &err);
	if (ret)
		wd_say(stderr, "warden run: audit: %s", err.msg[0] ? err.msg : strerror(-ret));
	ev->root = NULL; /* @hex is this function's: the caller's event does not keep it */
	return ret;
}

/*
 * sync_start() - make run.start durable without making the run wait for it here: a helper
 * process fdatasync()s the log through the descriptor it was written with (a child shares it)
 * and exits with 0 or the errno, while the launcher builds the network (a rootless launcher
 * unshares its own user namespace later, which a thread would forbid). run_audit_durable()
 * reaps it before the program may run. When no process can be made, the sync is done here.
 * Return: 0, or a negative errno (the sync itself failed).
 */
static int sync_start(struct run *r)
{
	pid_t pid = fork();
	int ret;

	if (pid == 0) {
		/* the exit status carries the errno (1..255; a larger one says EIO) */
		ret = audit_log_sync(r->audit.log);
		if (ret >= 0)
			_exit(0);
		_exit(-ret < 256 ? -ret : EIO);
	}
	if (pid > 0) {
		r->audit.sync_pid = pid;
		return 0;
	}
	return audit_log_sync(r->audit.log);
}

int run_audit_start(struct run *r)
{
	struct audit_event ev = {0};
	char iso[384], reason[700], mcp[256];
	struct wd_err err;
	const char *path = run_audit_path(r->o.audit);
	uint64_t max;
	int ret;

	if (!path)
		return run_fail(r, "audit", "set WARDEN_AUDIT_LOG or pass --audit-log PATH",
				"no audit log path (no home folder)");
	wd_err_clear(&err);
	ret = audit_log_open(path, &r->audit.log, &err);
	if (ret)
		return run_fail(r, "audit",
				"fix the audit log's path or permissions (see --audit-log)", "%s",
				err.msg[0] ? err.msg : strerror(-ret));
	if (run_audit_max_bytes(&max) < 0)
		return run_fail(r, "audit", "set it to a number of bytes (0: never rotate)",
				"WARDEN_AUDIT_MAX_BYTES is not a whole number of bytes");
	audit_log_set_max(r->audit.log, max);
	audit_log_chain(r->audit.log);
	ret = load_key(r);
	if (ret)
		return ret;
	/* a file this run begins (a rotation) starts with a signed anchor, or gets no line */
	ret = audit_log_sign_anchors(r->audit.log, r->audit.key, &err);
	if (ret)
		return run_fail(r, "audit",
				"check the audit log's .1 file (readable, a regular file)", "%s",
				err.msg[0] ? err.msg : strerror(-ret));
	isolation_text(r, iso, sizeof(iso));
	snprintf(reason, sizeof(reason), "gateway: %s%s%s",
		 r->mode->by_daemon ? r->gateway.gw.socket
		 : r->o.gateway	    ? r->o.gateway
				    : "embedded unless a daemon answers",
		 r->learn ? ", in learn mode (any name on any port allowed and recorded, the SSRF "
			    "classes refused)"
		 : r->o.shadow
		     ? "; SHADOW RUN: nothing is enforced on the network: what the policy "
		       "denies is let through and recorded as would_deny (the host's "
		       "ceiling, the SSRF guard and malformed bytes still deny); the "
		       "sandbox's files stay enforced"
		     : "",
		 r->o.started_by ? "; started by warden mcp" : "");
	ev.type = AUDIT_TYPE_RUN;
	ev.action = "run.start";
	ev.resource = r->input.exe;
	ev.allowed = true;
	ev.reason = reason;
	ev.isolation = iso;
	ev.learn = r->learn;
	ev.shadow = r->o.shadow;
	ev.mcp = stdio_start_json(r, mcp, sizeof(mcp));
	ev.command = (const char *const *)r->input.argv;
	for (ev.command_len = 0; r->input.argv[ev.command_len]; ev.command_len++)
		;
	/* written now (not deferred), made durable by sync_start() meanwhile */
	ret = write_event(r, &ev, 0);
	if (ret)
		return run_fail(r, "audit", "free space or fix permissions of the audit log",
				"run.start could not be written to %s: %s", path, strerror(-ret));
	r->audit.started = true;
	ret = sync_start(r);
	if (ret)
		return run_fail(r, "audit", "free space or fix the audit log's file system",
				"run.start could not be written durably to %s: %s", path,
				strerror(-ret));
	r->audit.has_pos = audit_log_where(r->audit.log, &r->audit.start_pos) == 0;
	/* loud, whatever -q says: the policy is not enforced on the network */
	if (r->o.shadow)
		wd_say(stderr,
		       "warden run: warning: shadow run: nothing is enforced on the network; what "
		       "the policy denies is let through and logged as would_deny (the host's "
		       "ceiling and the SSRF guard still deny; files stay enforced)");
	r->audit.has_start_hash = audit_log_last_hash(r->audit.log, r->audit.start_hash) == 0;
	return 0;
}

/* sync_wait() - reap the sync helper. Return: 0 (synced), or a negative errno (its
 * fdatasync's, or -EINTR when it was killed) */
static int sync_wait(struct run *r)
{
	pid_t pid = r->audit.sync_pid;
	int st;

	if (pid <= 0)
		return 0;
	r->audit.sync_pid = 0;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFEXITED(st))
		return -WEXITSTATUS(st);
	return -EINTR;
}

int run_audit_durable(struct run *r)
{
	int ret = sync_wait(r);

	if (ret)
		return run_fail(r, "audit", "free space or fix the audit log's file system",
				"run.start could not be made durable in %s (fdatasync): %s",
				audit_log_path(r->audit.log), strerror(-ret));
	return 0;
}

void run_audit_durable_reap(struct run *r)
{
	sync_wait(r);
}

static void audit_limit(struct run *r, const char *action, const char *why, int64_t limit,
			int64_t usage)
{
	struct audit_event ev = {0};

	ev.type = AUDIT_TYPE_LIMIT;
	ev.action = action;
	ev.resource = r->input.exe;
	ev.allowed = false;
	ev.reason = why;
	if (limit >= 0) {
		ev.has |= AUDIT_HAS_LIMIT;
		ev.limit = limit;
	}
	if (usage >= 0) {
		ev.has |= AUDIT_HAS_USAGE;
		ev.usage = usage;
	}
	write_event(r, &ev, 0);
}

void run_audit_limits(struct run *r, struct run_outcome *o)
{
	const struct policy_limits *l = &r->input.pol->limits;
	bool mem_hit = false, pids_hit = false;
	uint64_t mem_peak = 0;
	char why[128];

	limits_breaches(&r->limits.lim, &mem_hit, &pids_hit, &mem_peak);
	/* what the wait saw in the cgroup's events files (a systemd scope is gone by now) */
	mem_hit = mem_hit || (l->memory_mb && o->oom_kills);
	pids_hit = pids_hit || (l->pids && o->pids_refused);
	if ((mem_hit || o->rss_hit) && !o->sig && o->status == 128 + SIGKILL)
		o->sig = SIGKILL;
	if (mem_hit || o->rss_hit) {
		snprintf(why, sizeof(why), "memory limit of %llu MiB reached (%s)",
			 (unsigned long long)l->memory_mb,
			 o->rss_hit	   ? limits_kind_name(LIMITS_SAMPLING)
			 : r->limits.scope ? "cgroup2, the user's systemd scope"
					   : limits_kind_name(r->limits.lkind));
		audit_limit(r, "limit.memory", why, (int64_t)(l->memory_mb << 20),
			    o->rss_hit ? (int64_t)o->rss_peak_kb * 1024 : (int64_t)mem_peak);
		wd_say(stderr, "warden run: %s", why);
	}
	if (pids_hit) {
		snprintf(why, sizeof(why), "process limit of %u reached: a fork was refused",
			 l->pids);
		audit_limit(r, "limit.pids", why, l->pids, -1);
	}
	if (o->timed_out) {
		unsigned t = r->o.timeout_s ? r->o.timeout_s : l->timeout_s;

		snprintf(why, sizeof(why), "timeout of %u s: SIGTERM, then SIGKILL after %d ms", t,
			 RUN_KILL_GRACE_MS);
		audit_limit(r, "limit.time", why, (int64_t)t * 1000,
			    (int64_t)((wd_mono_ns() - r->audit.t0) / 1000000));
		wd_say(stderr, "warden run: %s", why);
	}
}

void run_audit_exit(struct run *r, int status, int sig, const struct run_counts *c, unsigned flags)
{
	static const struct run_counts unknown = {-1, -1, -1};
	struct audit_event ev = {0};

	if (!r->audit.started)
		return;
	ev.type = AUDIT_TYPE_RUN;
	ev.action = "run.exit";
	ev.resource = r->input.exe;
	ev.learn = r->learn;
	ev.shadow = r->o.shadow;
	ev.allowed = status != RUN_EXIT_WARDEN || !r->audit.fail_reason[0];
	ev.reason = r->audit.fail_reason[0] ? r->audit.fail_reason : NULL;
	ev.has = AUDIT_HAS_EXIT | AUDIT_HAS_DURATION;
	ev.exit = status;
	ev.duration_ms = (int64_t)((wd_mono_ns() - r->audit.t0) / 1000000);
	if (sig) {
		ev.has |= AUDIT_HAS_SIGNAL;
		ev.signal = sig;
	}
	if (!c)
		c = &unknown;
	if (c->denied >= 0) {
		ev.has |= AUDIT_HAS_DENIALS;
		ev.denials = c->denied;
	}
	if (c->up >= 0) {
		ev.has |= AUDIT_HAS_BYTES_UP | AUDIT_HAS_BYTES_DOWN;
		ev.bytes_up = c->up;
		ev.bytes_down = c->down;
	}
	ev.mcp = r->sandbox.io.exit_mcp;
	if (r->gateway.killed_by[0]) {
		/* stopped by a person: not the program's own end */
		ev.allowed = false;
		ev.reason = r->gateway.killed_by;
	}
	if (r->gateway.gw_lost) {
		ev.has |= AUDIT_HAS_COUNTS_INCOMPLETE;
		ev.counts_incomplete = true;
		if (!ev.reason)
			ev.reason = r->gateway.gw_lost_why;
	}
	write_signed(r, &ev, flags);
}

/* fdatasync the audit log (run.exit was written without it), through the descriptor it was
 * written with: opening the path again could reach another file (renamed, replaced by a
 * FIFO that blocks the open) */
void run_audit_sync(const struct run *r)
{
	if (r->audit.log)
		audit_log_sync(r->audit.log);
}

void run_audit_mcp(struct run *r, const char *reason)
{
	struct audit_event ev = {0};

	ev.type = AUDIT_TYPE_RUN;
	ev.action = "run.mcp";
	ev.resource = r->input.exe;
	ev.allowed = true;
	ev.reason = reason;
	write_event(r, &ev, 0);
}

void run_audit_mcp_filter(struct run *r, const struct run_mcpfilter_note *n)
{
	static const char *const actions[] = {
	    [RUN_MCPF_REFUSED] = "mcp.call",
	    [RUN_MCPF_HIDDEN] = "mcp.list",
	    [RUN_MCPF_DROPPED] = "mcp.drop",
	};
	struct audit_event ev = {0};

	ev.type = AUDIT_TYPE_OTHER;
	ev.type_name = "mcp";
	ev.action = actions[n->act];
	ev.resource =
	    n->act == RUN_MCPF_DROPPED ? (n->dir == MCP_C2S ? "client" : "server") : n->tool;
	ev.allowed = false;
	ev.reason = n->reason;
	ev.rule = n->rule[0] ? n->rule : NULL;
	ev.denial_id = n->denial_id[0] ? n->denial_id : NULL;
	write_event(r, &ev, 0);
}

void run_audit_kill(struct run *r, uid_t uid, pid_t pid)
{
	struct audit_event ev = {0};
	struct passwd pw, *pwr = NULL;
	char why[400], pwbuf[1024];

	if (getpwuid_r(uid, &pw, pwbuf, sizeof(pwbuf), &pwr) || !pwr)
		pwr = NULL;
	snprintf(
	    why, sizeof(why),
	    "warden kill by uid %u%s%s%s (pid %d): SIGTERM to the program, SIGKILL after %d ms",
	    (unsigned)uid, pwr ? " (" : "", pwr ? pw.pw_name : "", pwr ? ")" : "", (int)pid,
	    RUN_KILL_GRACE_MS);
	snprintf(r->gateway.killed_by, sizeof(r->gateway.killed_by),
		 "killed by uid %u (pid %d) with warden kill", (unsigned)uid, (int)pid);
	ev.type = AUDIT_TYPE_RUN;
	ev.action = "run.kill";
	ev.resource = r->input.exe;
	ev.allowed = true;
	ev.reason = why;
	ev.has = AUDIT_HAS_SIGNAL;
	ev.signal = SIGTERM;
	write_event(r, &ev, 0);
}

/* a file event that stands for @count accesses not written one by one: why in @reason */
static void files_summary(struct run *r, const char *reason, uint64_t count)
{
	struct audit_event ev = {0};

	ev.type = AUDIT_TYPE_FILE;
	ev.action = "file.open";
	ev.resource = "";
	ev.allowed = false;
	ev.reason = reason;
	ev.has |= AUDIT_HAS_COUNT;
	ev.count = (int64_t)count;
	write_event(r, &ev, AUDIT_WRITE_DEFER);
}

void run_audit_files(struct run *r)
{
	char reason[PATH_MAX + 160], rule[64];
	uint64_t dropped, seen;
	const char *name;
	struct wd_err err;

	if (!r->sandbox.files || !r->audit.started)
		return;
	/* the policy as a person knows it: its file's name */
	name = strrchr(r->input.policy_abs, '/');
	name = name && name[1] ? name + 1 : r->input.policy_abs;
	for (size_t i = 0; i < recorder_count(r->sandbox.files); i++) {
		const struct recorder_entry *f = recorder_get(r->sandbox.files, i);
		struct audit_event ev = {0};
		bool denied = f->verdict == RECORDER_DENIED;

		ev.type = AUDIT_TYPE_FILE;
		ev.action = f->op == SANDBOX_OP_EXEC ? "file.exec"
			    : f->op == SANDBOX_OP_STAT || f->op == SANDBOX_OP_ACCESS ||
				    f->op == SANDBOX_OP_READLINK
				? "file.stat"
				: "file.open";
		ev.resource = f->path;
		ev.allowed = !denied;
		snprintf(rule, sizeof(rule), "audit.files: %s",
			 policy_audit_files_name(policy_audit_files(r->input.pol)));
		ev.rule = rule;
		if (denied)
			snprintf(reason, sizeof(reason),
				 "not granted by policy %s: the path exists on the host, the "
				 "sandbox does not show it",
				 name);
		else
			snprintf(reason, sizeof(reason), "granted by policy %s", name);
		ev.reason = reason;
		ev.op = sandbox_op_name((enum sandbox_op)f->op);
		ev.has |= AUDIT_HAS_PROC_PID;
		ev.proc_pid = f->pid;
		ev.comm = f->comm[0] ? f->comm : NULL;
		if (f->count > 1) {
			ev.has |= AUDIT_HAS_COUNT;
			ev.count = (int64_t)f->count;
		}
		write_event(r, &ev, AUDIT_WRITE_DEFER);
	}
	dropped = recorder_dropped(r->sandbox.files, &seen);
	if (dropped) {
		snprintf(reason, sizeof(reason),
			 "rate limit: %llu more accesses of paths beyond the first %zu were only "
			 "counted",
			 (unsigned long long)dropped, recorder_count(r->sandbox.files));
		files_summary(r, reason, dropped);
	}
	if (recorder_lost(r->sandbox.files)) {
		snprintf(reason, sizeof(reason),
			 "incomplete: the file-access recorder died or sent malformed results; "
			 "none of this run's file accesses are in the log");
		files_summary(r, reason, 0);
	}
	if (recorder_unreadable(r->sandbox.files)) {
		snprintf(reason, sizeof(reason),
			 "incomplete: the kernel did not let the recorder read the path of %llu "
			 "calls (ptrace restrictions, e.g. kernel.yama.ptrace_scope >= 2); their "
			 "attempts are not in the log",
			 (unsigned long long)recorder_unreadable(r->sandbox.files));
		files_summary(r, reason, recorder_unreadable(r->sandbox.files));
	}
	wd_err_clear(&err);
	if (audit_log_flush(r->audit.log, &err) < 0)
		wd_say(stderr, "warden run: audit: %s", err.msg[0] ? err.msg : "file events");
}

/* mcp_tools.c - the tools of `warden mcp`: run_sandboxed, list_audit_log, list_runs, kill_run,
 * set_egress_allowlist.
 *
 * Theory of operation (docs/mcp.md has the long form). A run is this same program's `run`
 * verb, started with the derived policy (the configured one minus the names removed, plus the
 * names a person approved) and `--started-by mcp`, its stdin, stdout and stderr pipes of ours;
 * the event loop (cmd_mcp.c) moves their bytes and notices its end through a pidfd, so calls
 * run side by side while the server keeps reading. A cancelled call's run gets TERM, then KILL
 * after MCP_GRACE_NS. The agent cannot widen its own sandbox: removing a name applies at once,
 * adding one only makes a request in the approval store (approval.c) that a person decides,
 * through the client's elicitation or `warden allowlist approve|deny` at a terminal; a policy
 * with `mcp.allowlist: locked` refuses additions. Every request and decision is audited. A
 * call asks for few names (MCP_ASK_MAX_NAMES, MCP_ASK_MAX_BYTES), and its question is made
 * from exactly the requests an acceptance decides (ask_text()), so the person sees all that
 * is added. list_audit_log shows the agent the events of this server's runs and its own
 * (in_scope()), unless the policy says `mcp.audit_log: all`.
 */
#include "mcp/internal.h"
#include "run/run.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
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

static int reply(struct mcp_server *m, json_t *id, json_t *result)
{
	return mcp_reply(&m->s, id, result);
}

static struct mcp_run *run_by_id(struct mcp_server *m, const char *id)
{
	for (size_t i = 0; i < MCP_MAX_RUNS; i++)
		if (m->runs[i].used && !strcmp(m->runs[i].id, id))
			return &m->runs[i];
	return NULL;
}

static void stop_run(struct mcp_run *r)
{
	if (r->reaped || r->term_at)
		return;
	kill(r->pid, SIGTERM);
	r->term_at = wd_mono_ns();
	if (!r->term_at)
		r->term_at = 1;
}

/* ------------------------------------------------------------ the derived policy */

/* @text as a policy of one network.allow entry: the real parser checks and normalises it */
static int one_rule(const char *text, struct wd_policy **ret, char *why, size_t wsize)
{
	struct wd_buf y = WD_BUF_INIT;
	struct policy_diags d;
	int ret_ = 0;

	policy_diags_init(&d);
	if (wd_buf_puts(&y, "version: 1\nnetwork:\n  allow:\n    - ") ||
	    policy_json_string(&y, text) || wd_buf_puts(&y, "\n")) {
		wd_buf_free(&y);
		return -ENOMEM;
	}
	ret_ = policy_parse(y.data, y.len, "name", ret, &d);
	if (ret_ && d.n) {
		struct wd_buf msg = WD_BUF_INIT;

		policy_diag_format(&d, 0, &msg);
		/* "name:5:7: error: ..." -> what follows "error: " */
		snprintf(why, wsize, "%s",
			 msg.data && strstr(msg.data, "error: ") ? strstr(msg.data, "error: ") + 7
								 : "not a network.allow entry");
		wd_buf_free(&msg);
	} else if (!ret_ && (*ret)->nrules != 1) {
		policy_free(*ret);
		snprintf(why, wsize, "not one network.allow entry");
		ret_ = -EINVAL;
	}
	policy_diags_free(&d);
	wd_buf_free(&y);
	return ret_;
}

/* the same name (host or pattern, or the same address range), ports aside */
static bool same_target(const struct policy_rule *a, const struct policy_rule *b)
{
	if (a->kind != b->kind)
		return false;
	if (a->kind == POLICY_RULE_CIDR)
		return a->family == b->family && a->prefix == b->prefix &&
		       !memcmp(a->addr, b->addr, a->family == AF_INET ? 4 : 16);
	return !strcmp(a->host, b->host);
}

static bool is_removed(const struct mcp_server *m, const struct policy_rule *r)
{
	for (size_t i = 0; i < m->nremoved; i++)
		if (same_target(&m->removed[i]->rules[0], r))
			return true;
	return false;
}

void mcp_protect(const struct mcp_server *m, struct policy_protect *v, size_t *n, size_t max)
{
	static struct run_protect pr;

	run_protect_init(&pr, m->audit_path, NULL);
	*n = 0;
	for (size_t i = 0; i < pr.n && *n < max; i++)
		v[(*n)++] = pr.v[i];
	if (*n < max)
		v[(*n)++] = (struct policy_protect){m->approval_dir, "the approval store", true};
	if (*n < max && m->state_dir[0])
		v[(*n)++] = (struct policy_protect){m->state_dir, "warden mcp's state", true};
}

int mcp_derive(struct mcp_server *m, char *why, size_t wsize)
{
	struct policy_rule *rules = NULL, none;
	struct wd_buf y = WD_BUF_INIT;
	struct policy_protect prot[RUN_PROTECT_MAX + 2];
	struct policy_ctx ctx = {0};
	struct policy_diags d;
	struct wd_policy p, *check = NULL;
	char path[PATH_MAX];
	size_t n = 0;
	int fd, ret;

	p = *m->base;
	rules = calloc(m->base->nrules + m->nadded + 1, sizeof(*rules));
	if (!rules)
		return -ENOMEM;
	for (size_t i = 0; i < m->base->nrules; i++)
		if (!is_removed(m, &m->base->rules[i]))
			rules[n++] = m->base->rules[i];
	for (size_t i = 0; i < m->nadded; i++)
		if (!is_removed(m, &m->added[i]->rules[0]))
			rules[n++] = m->added[i]->rules[0];
	memset(&none, 0, sizeof(none));
	p.rules = n ? rules : (m->base->rules || m->nremoved || m->nadded ? &none : NULL);
	p.nrules = n;
	ret = policy_render_yaml(&p, &y);
	free(rules);
	if (ret)
		goto out;
	m->gen++;
	n = (size_t)snprintf(path, sizeof(path), "%s/policy-%u.yaml", m->state_dir, m->gen);
	if (n >= sizeof(path)) {
		ret = -ENAMETOOLONG;
		goto out;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = -errno;
		snprintf(why, wsize, "cannot write %s: %s", path, strerror(errno));
		goto out;
	}
	ret = wd_write_all(fd, y.data, y.len);
	close(fd);
	if (ret) {
		snprintf(why, wsize, "cannot write %s: %s", path, strerror(-ret));
		goto out;
	}
	/* what runs get is checked as `warden run` will check it */
	mcp_protect(m, prot, &ctx.nprotect, WD_ARRAY_SIZE(prot));
	ctx.protect = prot;
	policy_diags_init(&d);
	ret = policy_load(path, &ctx, &check, &d);
	if (ret) {
		struct wd_buf msg = WD_BUF_INIT;

		if (d.n)
			policy_diag_format(&d, 0, &msg);
		snprintf(why, wsize, "the derived policy %s is not valid: %s", path,
			 msg.data ? msg.data : strerror(-ret));
		wd_buf_free(&msg);
		unlink(path);
	} else {
		if (m->derived[0])
			unlink(m->derived);
		snprintf(m->derived, sizeof(m->derived), "%s", path);
	}
	policy_free(check);
	policy_diags_free(&d);
out:
	wd_buf_free(&y);
	return ret;
}

/* ------------------------------------------------------------ run_sandboxed */

static int pidfd_of(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static bool cwd_granted(const struct mcp_server *m, const char *cwd, char *real)
{
	if (!realpath(cwd, real))
		return false;
	for (size_t i = 0; i < m->base->nwrite; i++)
		if (m->base->write[i].real && run_path_within(real, m->base->write[i].real))
			return true;
	return false;
}

static json_t *start_run(struct mcp_server *m, json_t *id, json_t *args, json_t *progress)
{
	json_t *cmd = json_object_get(args, "command"), *in = json_object_get(args, "stdin");
	json_t *tmo = json_object_get(args, "timeout_s"), *cwd = json_object_get(args, "cwd");
	const char *argv[300];
	char real[PATH_MAX], tbuf[16];
	int inp[2] = {-1, -1}, outp[2] = {-1, -1}, errp[2] = {-1, -1};
	struct mcp_run *r = NULL;
	char(*ids)[16];
	uint8_t b[6];
	size_t n = 0, i;
	pid_t pid;

	for (i = 0; i < MCP_MAX_RUNS && !r; i++)
		if (!m->runs[i].used)
			r = &m->runs[i];
	if (!r)
		return mcp_tool_error("run_sandboxed: %d runs are going on already; wait for one "
				      "(list_runs) or stop one (kill_run)",
				      MCP_MAX_RUNS);
	if (json_is_string(cmd) && !json_string_length(cmd))
		return mcp_tool_error("run_sandboxed: `command` is empty");
	if (json_is_array(cmd) && !json_string_length(json_array_get(cmd, 0)))
		return mcp_tool_error("run_sandboxed: `command`[0] is empty");
	if (json_is_string(cmd) && strlen(json_string_value(cmd)) != json_string_length(cmd))
		return mcp_tool_error("run_sandboxed: `command` holds a NUL character");
	if (in && strlen(json_string_value(in)) != json_string_length(in))
		return mcp_tool_error("run_sandboxed: `stdin` holds a NUL character; give text");
	/* the agent may shorten its run, never lengthen it past the policy's limit */
	if (tmo && m->base->limits.timeout_s &&
	    json_integer_value(tmo) > (json_int_t)m->base->limits.timeout_s)
		return mcp_tool_error("run_sandboxed: `timeout_s` %lld is over the policy's "
				      "limits.timeout_s (%u): a run may be shorter, never longer",
				      (long long)json_integer_value(tmo),
				      m->base->limits.timeout_s);
	if (cwd && !cwd_granted(m, json_string_value(cwd), real))
		return mcp_tool_error("run_sandboxed: `cwd` %s is not inside a write grant of the "
				      "policy (or does not exist)",
				      json_string_value(cwd));
	if (!m->derived[0])
		return mcp_tool_error("run_sandboxed: no valid policy for new runs");
	if (getrandom(b, sizeof(b), 0) != sizeof(b))
		return mcp_tool_error("run_sandboxed: no randomness for the run id");
	ids = realloc(m->session_runs, (m->nsession_runs + 1) * sizeof(*ids));
	if (!ids)
		return mcp_tool_error("run_sandboxed: no memory");
	m->session_runs = ids;
	memset(r, 0, sizeof(*r));
	snprintf(r->id, sizeof(r->id), "%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3], b[4],
		 b[5]);
	/* list_audit_log's scope: the runs of this server, sorted */
	for (i = m->nsession_runs; i && strcmp(ids[i - 1], r->id) > 0; i--)
		memcpy(ids[i], ids[i - 1], sizeof(ids[i]));
	memcpy(ids[i], r->id, sizeof(r->id));
	m->nsession_runs++;
	argv[n++] = m->self;
	argv[n++] = "run";
	argv[n++] = "-q";
	argv[n++] = "--audit-log";
	argv[n++] = m->audit_path;
	argv[n++] = "-p";
	argv[n++] = m->derived;
	if (m->config) {
		argv[n++] = "--config";
		argv[n++] = m->config;
	}
	if (tmo) {
		snprintf(tbuf, sizeof(tbuf), "%lld", (long long)json_integer_value(tmo));
		argv[n++] = "--timeout";
		argv[n++] = tbuf;
	}
	argv[n++] = "--run-id";
	argv[n++] = r->id;
	argv[n++] = "--started-by";
	argv[n++] = "mcp";
	argv[n++] = "--";
	if (json_is_string(cmd)) {
		argv[n++] = "/bin/sh";
		argv[n++] = "-c";
		argv[n++] = json_string_value(cmd);
		snprintf(r->cmdline, sizeof(r->cmdline), "%s", json_string_value(cmd));
	} else {
		json_t *w;

		json_array_foreach(cmd, i, w)
		{
			size_t l = strlen(r->cmdline);

			argv[n++] = json_string_value(w);
			snprintf(r->cmdline + l, sizeof(r->cmdline) - l, "%s%s", l ? " " : "",
				 json_string_value(w));
		}
	}
	argv[n] = NULL;
	if (pipe2(inp, O_CLOEXEC) || pipe2(outp, O_CLOEXEC) || pipe2(errp, O_CLOEXEC))
		goto fail;
	pid = fork();
	if (pid < 0)
		goto fail;
	if (pid == 0) {
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		if (dup2(inp[0], 0) < 0 || dup2(outp[1], 1) < 0 || dup2(errp[1], 2) < 0)
			_exit(125);
		if (cwd && chdir(real) < 0)
			_exit(125);
		execv(m->self, (char *const *)argv);
		dprintf(2, "warden mcp: exec %s: %s\n", m->self, strerror(errno));
		_exit(125);
	}
	close(inp[0]);
	close(outp[1]);
	close(errp[1]);
	r->used = true;
	r->pid = pid;
	r->pidfd = pidfd_of(pid);
	r->in_fd = inp[1];
	r->out[0].fd = outp[0];
	r->out[1].fd = errp[0];
	fcntl(r->in_fd, F_SETFL, O_NONBLOCK);
	fcntl(r->out[0].fd, F_SETFL, O_NONBLOCK);
	fcntl(r->out[1].fd, F_SETFL, O_NONBLOCK);
	if (in && json_string_length(in)) {
		r->in_len = json_string_length(in);
		r->in = malloc(r->in_len);
		if (r->in)
			memcpy(r->in, json_string_value(in), r->in_len);
	}
	if (!r->in) {
		close(r->in_fd);
		r->in_fd = -1;
	}
	r->call = json_incref(id);
	r->progress = json_incref(progress);
	r->t0 = wd_mono_ns();
	r->next_progress = r->t0 + 1000000000ull;
	return NULL;
fail:
	for (i = 0; i < 2; i++) {
		if (inp[i] >= 0)
			close(inp[i]);
		if (outp[i] >= 0)
			close(outp[i]);
		if (errp[i] >= 0)
			close(errp[i]);
	}
	return mcp_tool_error("run_sandboxed: cannot start the run: %s", strerror(errno));
}

void mcp_run_io(struct mcp_server *m, struct mcp_run *r, int fd)
{
	char buf[65536];
	ssize_t n;

	(void)m;
	if (fd == r->in_fd) {
		n = write(fd, r->in + r->in_off, r->in_len - r->in_off);
		if (n > 0)
			r->in_off += (size_t)n;
		if ((n < 0 && errno != EAGAIN && errno != EINTR) || r->in_off == r->in_len) {
			close(r->in_fd);
			r->in_fd = -1;
			free(r->in);
			r->in = NULL;
		}
		return;
	}
	for (int k = 0; k < 2; k++) {
		struct mcp_out *o = &r->out[k];

		if (fd != o->fd)
			continue;
		for (int rounds = 0; rounds < 16; rounds++) {
			n = read(fd, buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && errno == EAGAIN)
				return;
			if (n <= 0) {
				close(o->fd);
				o->fd = -1;
				return;
			}
			size_t keep = o->buf.len < MCP_OUT_CAP ? MCP_OUT_CAP - o->buf.len : 0;

			if (keep > (size_t)n)
				keep = (size_t)n;
			if (keep)
				wd_buf_append(&o->buf, buf, keep);
			o->cut += (size_t)n - keep;
		}
	}
}

/* the run's denials from the audit log: host, reason, denial id */
static json_t *run_denials(struct mcp_server *m, const char *run)
{
	struct audit_reader *rd = NULL;
	struct audit_event ev;
	json_t *list = json_array();

	if (audit_reader_open(m->audit_path, 0, &rd, NULL))
		return list;
	audit_reader_tail(rd, 200000);
	while (list && audit_reader_next(rd, &ev) == 1) {
		if (ev.run && !strcmp(ev.run, run) && !ev.allowed &&
		    (ev.type == AUDIT_TYPE_NET || ev.type == AUDIT_TYPE_DNS)) {
			json_t *d =
			    json_pack("{s:s, s:s, s:s}", "host", ev.resource ? ev.resource : "",
				      "reason", ev.reason ? ev.reason : "", "action", ev.action);

			if (d && ev.denial_id)
				json_object_set_new(d, "denial_id", json_string(ev.denial_id));
			if (d && (ev.has & AUDIT_HAS_PORT))
				json_object_set_new(d, "port", json_integer(ev.port));
			json_array_append_new(list, d);
		}
		audit_event_clear(&ev);
	}
	audit_reader_close(rd);
	return list;
}

static json_t *string_of(const struct wd_buf *b)
{
	/* the program's bytes need not be UTF-8: invalid sequences become U+FFFD */
	struct wd_buf t = WD_BUF_INIT;
	json_t *s;
	size_t i = 0;

	while (i < b->len) {
		int n = wd_utf8_seqlen(b->data + i, b->len - i);

		if (n > 0) {
			wd_buf_append(&t, b->data + i, (size_t)n);
			i += (size_t)n;
		} else {
			wd_buf_puts(&t, "\xef\xbf\xbd");
			i++;
		}
	}
	s = json_stringn(t.data ? t.data : "", t.len);
	wd_buf_free(&t);
	return s;
}

static void finish_run(struct mcp_server *m, struct mcp_run *r)
{
	int st = r->wstatus, exitc, sig = 0;
	json_t *res;

	exitc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	if (WIFSIGNALED(st))
		sig = WTERMSIG(st);
	if (r->cancelled) {
		mcp_audit(m, "mcp.cancel", r->id, r->cmdline, true,
			  "the client cancelled the call; the run ended with status %d", exitc);
	} else if (exitc >= 125 && exitc <= 127 && r->out[1].buf.len >= 11 &&
		   !memcmp(r->out[1].buf.data, "warden run:", 11)) {
		/* Warden refused or failed before the program ran: the tool's error */
		wd_buf_append(&r->out[1].buf, "", 1);
		reply(m, r->call,
		      mcp_tool_error("run_sandboxed: the run did not start (status %d): %s", exitc,
				     r->out[1].buf.data));
	} else {
		res = json_pack("{s:s, s:i, s:o, s:o, s:I, s:I, s:b, s:o}", "run", r->id, "exit",
				exitc, "stdout", string_of(&r->out[0].buf), "stderr",
				string_of(&r->out[1].buf), "stdout_cut_bytes",
				(json_int_t)r->out[0].cut, "stderr_cut_bytes",
				(json_int_t)r->out[1].cut, "killed", r->killed, "denials",
				run_denials(m, r->id));
		if (res && sig)
			json_object_set_new(res, "signal", json_integer(sig));
		reply(m, r->call, mcp_tool_result(res));
	}
	for (int k = 0; k < 2; k++) {
		if (r->out[k].fd >= 0)
			close(r->out[k].fd);
		wd_buf_free(&r->out[k].buf);
	}
	if (r->in_fd >= 0)
		close(r->in_fd);
	if (r->pidfd >= 0)
		close(r->pidfd);
	free(r->in);
	json_decref(r->call);
	json_decref(r->progress);
	memset(r, 0, sizeof(*r));
}

void mcp_run_check(struct mcp_server *m, struct mcp_run *r)
{
	if (!r->reaped && waitpid(r->pid, &r->wstatus, WNOHANG) == r->pid) {
		r->reaped = true;
		if (r->pidfd >= 0)
			close(r->pidfd);
		r->pidfd = -1;
		/* what is left in the pipes now; a process of the run that kept them open is
		 * gone with the run (warden run reaps its cgroup) */
		for (int k = 0; k < 2; k++)
			if (r->out[k].fd >= 0)
				mcp_run_io(m, r, r->out[k].fd);
	}
	if (r->reaped && r->out[0].fd < 0 && r->out[1].fd < 0)
		finish_run(m, r);
}

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

static json_t *list_audit_log(struct mcp_server *m, json_t *args)
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

static json_t *list_runs(struct mcp_server *m)
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

static json_t *kill_run(struct mcp_server *m, json_t *args)
{
	const char *id = json_string_value(json_object_get(args, "run"));
	struct mcp_run *r = run_by_id(m, id);

	if (!r)
		return mcp_tool_error("kill_run: `%s` is not a live run of this server (list_runs)",
				      id);
	r->killed = true;
	stop_run(r);
	mcp_audit(m, "mcp.kill", r->id, r->cmdline, true, "kill_run: TERM sent, KILL after %llu s",
		  MCP_GRACE_NS / 1000000000ull);
	return mcp_tool_result(json_pack("{s:s, s:s}", "run", r->id, "signal", "TERM"));
}

/* ------------------------------------------------------------ set_egress_allowlist */

/* `warden allowlist RUN remove NAME`, or with @approved `RUN add NAME --approved ID`
 * (cmd_allowlist.c): 0, or the reason in @why */
static int live_change(struct mcp_server *m, const char *run, const char *name,
		       const char *approved, char *why, size_t wsize)
{
	int p[2], st = 0;
	ssize_t n;
	size_t got = 0;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		dup2(null, 0);
		dup2(p[1], 1);
		dup2(p[1], 2);
		if (approved)
			execl(m->self, m->self, "allowlist", run, "add", name, "--approved",
			      approved, (char *)NULL);
		else
			execl(m->self, m->self, "allowlist", run, "remove", name, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	why[0] = '\0';
	while (got + 1 < wsize && (n = read(p[0], why + got, wsize - 1 - got)) > 0)
		got += (size_t)n;
	why[got] = '\0';
	while (got && (why[got - 1] == '\n'))
		why[--got] = '\0';
	close(p[0]);
	waitpid(pid, &st, 0);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
}

static struct mcp_add *add_slot(struct mcp_server *m)
{
	for (size_t i = 0; i < MCP_MAX_ADDS; i++)
		if (!m->adds[i].used)
			return &m->adds[i];
	return NULL;
}

/* a person's decision on @req (by @by): applied to new runs, audited, the file removed */
static void decide(struct mcp_server *m, struct approval_req *req, bool yes, const char *by,
		   json_t *added, json_t *refused)
{
	struct wd_policy *p = NULL, **v;
	char why[512];

	/* a live run gets an approved name through `warden allowlist RUN add NAME --approved ID`,
	 * which checks the store: the request approved (by elicitation: recorded so first) */
	if (yes && req->run[0]) {
		int ret = approval_decide(m->approval_fd, req->id, true, by);

		if (!ret || ret == -EALREADY)
			ret = live_change(m, req->run, req->name, req->id, why, sizeof(why));
		mcp_audit(m, "mcp.allowlist.approve", req->run, req->name, !ret,
			  ret ? "request %s: approved by %s, but the live run did not take it: %s"
			      : "request %s: approved by %s; the live run may reach it now%s",
			  req->id, by, ret ? why : "");
	}
	approval_remove(m->approval_fd, req->id);
	if (!yes) {
		mcp_audit(m, "mcp.allowlist.deny", req->run, req->name, false,
			  "request %s: refused by %s; the name stays out", req->id, by);
		if (refused)
			json_array_append_new(refused,
					      json_pack("{s:s, s:s, s:s}", "name", req->name,
							"request", req->id, "why", "refused"));
		return;
	}
	if (one_rule(req->name, &p, why, sizeof(why))) {
		mcp_audit(m, "mcp.allowlist.deny", req->run, req->name, false,
			  "request %s: approved by %s but not a valid entry: %s", req->id, by, why);
		return;
	}
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	v = realloc(m->added, (m->nadded + 1) * sizeof(*v));
	if (!v) {
		policy_free(p);
		return;
	}
	m->added = v;
	m->added[m->nadded++] = p;
	/* an approved name is no longer removed */
	for (size_t i = 0; i < m->nremoved; i++)
		if (same_target(&m->removed[i]->rules[0], &p->rules[0])) {
			policy_free(m->removed[i]);
			m->removed[i--] = m->removed[--m->nremoved];
		}
	if (mcp_derive(m, why, sizeof(why))) {
		mcp_audit(m, "mcp.allowlist.deny", req->run, req->name, false,
			  "request %s: approved by %s but the policy for new runs could not be "
			  "made: %s",
			  req->id, by, why);
		m->nadded--;
		policy_free(p);
		return;
	}
	mcp_audit(m, "mcp.allowlist.approve", req->run, req->name, true,
		  "request %s: approved by %s; new runs of this server may reach %s", req->id, by,
		  p->rules[0].text);
	if (added)
		json_array_append_new(added,
				      json_pack("{s:s, s:s, s:s}", "name", req->name, "request",
						req->id, "rule", p->rules[0].text));
}

/* The question for the additions @a waits on, built from exactly the requests an acceptance
 * decides (a->req[0..n-1]), each shown as the rule decide() adds: wildcards first, then address
 * ranges, each marked, then plain names; numbered, and their count said at the start and the
 * end, so a display that cuts the text shows that it does. docs/mcp.md gives the form. */
static int ask_text(const struct mcp_add *a, struct wd_buf *out, char *why, size_t wsize)
{
	static const struct {
		enum policy_rule_kind kind;
		const char *mark;
	} order[] = {
	    {POLICY_RULE_WILDCARD, "WILDCARD "},
	    {POLICY_RULE_CIDR, "IP RANGE "},
	    {POLICY_RULE_HOST, ""},
	};
	struct wd_policy *p[MCP_ASK_MAX_NAMES] = {0};
	struct wd_buf esc = WD_BUF_INIT;
	size_t shown = 0;
	int ret = 0;

	if (a->n > MCP_ASK_MAX_NAMES)
		return -E2BIG;
	for (size_t i = 0; i < a->n && !ret; i++)
		ret = one_rule(a->req[i].name, &p[i], why, wsize);
	if (!ret)
		ret = wd_buf_printf(out,
				    "The agent asks Warden to let its sandboxed commands reach %zu "
				    "network %s. Accepting adds exactly %s, for new runs of this "
				    "server, and nothing else:\n",
				    a->n, a->n == 1 ? "entry" : "entries",
				    a->n == 1 ? "this one" : "these");
	for (size_t o = 0; o < WD_ARRAY_SIZE(order) && !ret; o++)
		for (size_t i = 0; i < a->n && !ret; i++) {
			const struct policy_rule *r = &p[i]->rules[0];
			const char *mark = order[o].mark;
			bool one = r->kind == POLICY_RULE_CIDR &&
				   r->prefix == (r->family == AF_INET ? 32u : 128u);

			if (r->kind != order[o].kind)
				continue;
			if (one)
				mark = "IP ADDRESS ";
			/* a rule's text passed the policy's name syntax; escaped all the same, as
			 * every text from an agent that a person reads (wd_esc()) */
			ret =
			    wd_buf_printf(out, "  %zu. %s%s", ++shown, mark, wd_esc(&esc, r->text));
			if (!ret && r->kind == POLICY_RULE_WILDCARD)
				ret = wd_buf_printf(out, " (any name under %s)",
						    wd_esc(&esc, r->host));
			else if (!ret && r->kind == POLICY_RULE_CIDR && !one)
				ret = wd_buf_puts(out, " (any address in it)");
			if (!ret)
				ret = wd_buf_puts(out, "\n");
		}
	if (!ret && shown != a->n) {
		snprintf(why, wsize, "%zu of %zu entries placed", shown, a->n);
		ret = -EINVAL;
	}
	if (!ret)
		ret = wd_buf_printf(out, "Allow %s%zu?", a->n == 1 ? "this " : "all ", a->n);
	for (size_t i = 0; i < a->n; i++)
		policy_free(p[i]);
	wd_buf_free(&esc);
	if (ret == -ENOMEM)
		snprintf(why, wsize, "no memory");
	return ret;
}

static void drop_add(struct mcp_add *a)
{
	json_decref(a->call);
	memset(a, 0, sizeof(*a));
}

static json_t *set_allowlist(struct mcp_server *m, json_t *id, json_t *args)
{
	json_t *add = json_object_get(args, "add"), *rem = json_object_get(args, "remove");
	json_t *jrun = json_object_get(args, "run"), *w;
	json_t *removed = NULL, *pending = NULL, *refused = NULL;
	const char *run = jrun ? json_string_value(jrun) : "";
	struct wd_policy *p;
	struct mcp_add *a = NULL;
	char why[512], msg[1024] = "";
	size_t i, ask_bytes = 0;

	if (!json_array_size(add) && !json_array_size(rem))
		return mcp_tool_error(
		    "set_egress_allowlist: nothing to do: give `add` or `remove`");
	if (jrun && !run_by_id(m, run))
		return mcp_tool_error("set_egress_allowlist: `%s` is not a live run of this server "
				      "(list_runs)",
				      run);
	/* every name is checked before anything changes; the names to add fit one question that
	 * shows every one of them (their number is bounded by the argument table) */
	json_array_foreach(add, i, w) ask_bytes += json_string_length(w);
	if (ask_bytes > MCP_ASK_MAX_BYTES)
		return mcp_tool_error(
		    "set_egress_allowlist: `add` holds %zu bytes of names; one request may ask for "
		    "at most %d names of at most %d bytes in all, so that the person is shown "
		    "every "
		    "one of them: ask in smaller requests. Nothing was changed",
		    ask_bytes, MCP_ASK_MAX_NAMES, MCP_ASK_MAX_BYTES);
	for (int pass = 0; pass < 2; pass++)
		json_array_foreach(pass ? rem : add, i, w)
		{
			if (one_rule(json_string_value(w), &p, why, sizeof(why)))
				return mcp_tool_error("set_egress_allowlist: %s[%zu] `%s`: %s",
						      pass ? "remove" : "add", i,
						      json_string_value(w), why);
			policy_free(p);
		}
	if (json_array_size(add) && !m->base->mcp_allowlist_locked) {
		a = add_slot(m);
		if (!a)
			return mcp_tool_error("set_egress_allowlist: %d requests wait for a person "
					      "already",
					      MCP_MAX_ADDS);
	}
	removed = json_array();
	pending = json_array();
	refused = json_array();

	/* removals: at once */
	json_array_foreach(rem, i, w)
	{
		const char *name = json_string_value(w);
		struct wd_policy **v;
		json_t *e;
		int still;

		p = NULL;
		if (one_rule(name, &p, why, sizeof(why)))
			continue; /* checked above: not reached */
		/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
		v = realloc(m->removed, (m->nremoved + 1) * sizeof(*v));
		if (!v) {
			policy_free(p);
			continue;
		}
		m->removed = v;
		m->removed[m->nremoved++] = p;
		for (size_t k = 0; k < m->nadded; k++)
			if (same_target(&m->added[k]->rules[0], &p->rules[0])) {
				policy_free(m->added[k]);
				m->added[k--] = m->added[--m->nadded];
			}
		e = json_pack("{s:s, s:s}", "name", name, "applies_to", "new runs");
		mcp_audit(m, "mcp.allowlist.remove", run, name, true,
			  "removed by the agent: new runs of this server do not get %s", name);
		if (*run) {
			int ret = live_change(m, run, name, NULL, why, sizeof(why));

			json_object_set_new(e, "live", json_boolean(!ret));
			if (ret) {
				json_object_set_new(e, "live_error", json_string(why));
				mcp_audit(m, "mcp.allowlist.remove", run, name, false,
					  "the live run %s keeps %s: warden allowlist failed: %s",
					  run, name, why);
			}
		}
		/* a pattern may still cover it */
		still = p->rules[0].kind == POLICY_RULE_CIDR
			    ? -ENOENT
			    : policy_match_name(m->base, p->rules[0].host);
		if (still >= 0 && !is_removed(m, &m->base->rules[still]))
			json_object_set_new(e, "still_allowed_by",
					    json_string(m->base->rules[still].text));
		json_array_append_new(removed, e);
	}
	if (json_array_size(rem) && mcp_derive(m, why, sizeof(why))) {
		json_decref(removed);
		json_decref(pending);
		json_decref(refused);
		return mcp_tool_error("set_egress_allowlist: %s", why);
	}

	/* additions: refused when locked; else requests that wait for a person */
	if (json_array_size(add) && m->base->mcp_allowlist_locked) {
		json_array_foreach(add, i, w)
		{
			mcp_audit(m, "mcp.allowlist.refuse", run, json_string_value(w), false,
				  "the policy says mcp.allowlist: locked: no name can be added");
			json_array_append_new(refused,
					      json_pack("{s:s, s:s}", "name", json_string_value(w),
							"why", "mcp.allowlist: locked"));
		}
		json_decref(removed);
		json_decref(pending);
		json_decref(refused);
		return mcp_tool_error(
		    "set_egress_allowlist: refused: the policy locks the allowlist "
		    "(mcp.allowlist: locked); nothing was added%s",
		    json_array_size(rem) ? " (the removals were applied)" : "");
	}
	if (a) {
		memset(a, 0, sizeof(*a));
		json_array_foreach(add, i, w)
		{
			struct approval_req *q = &a->req[a->n];
			int ret;

			snprintf(q->name, sizeof(q->name), "%s", json_string_value(w));
			snprintf(q->run, sizeof(q->run), "%s", run);
			q->server_pid = getpid();
			ret = approval_create(m->approval_fd, q);
			if (ret) {
				mcp_audit(m, "mcp.allowlist.refuse", run, q->name, false,
					  "the request could not be stored: %s", strerror(-ret));
				json_array_append_new(refused,
						      json_pack("{s:s, s:s}", "name", q->name,
								"why", strerror(-ret)));
				continue;
			}
			mcp_audit(m, "mcp.allowlist.request", run, q->name, false,
				  "request %s: the agent asks to add %s; pending a person's "
				  "approval",
				  q->id, q->name);
			json_array_append_new(
			    pending, json_pack("{s:s, s:s}", "name", q->name, "request", q->id));
			snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg),
				 "%spending approval %s", a->n ? "; " : "", q->id);
			a->n++;
		}
		if (a->n)
			a->used = true;
	}
	if (a && a->used && m->s.elicitation) {
		/* the client asks its user; the call is answered with the decision */
		struct wd_buf text = WD_BUF_INIT;
		int ret;

		ret = ask_text(a, &text, why, sizeof(why));
		if (ret)
			mcp_audit(m, "mcp.allowlist.request", run, "", false,
				  "the question could not be made (%s): the requests stay pending "
				  "for a terminal",
				  why);
		if (!ret &&
		    !mcp_request(&m->s, "elicitation/create",
				 json_pack("{s:s, s:{s:s, s:{s:{s:s, s:s, s:s}}, s:[s]}}",
					   "message", wd_buf_cstr(&text), "requestedSchema", "type",
					   "object", "properties", "approve", "type", "boolean",
					   "title", "Allow all", "description",
					   "true allows exactly the entries listed, for new runs",
					   "required", "approve"),
				 &a->elicit)) {
			wd_buf_free(&text);
			a->call = json_incref(id);
			json_decref(removed);
			json_decref(pending);
			json_decref(refused);
			return NULL;
		}
		wd_buf_free(&text);
	}
	if (!msg[0])
		snprintf(msg, sizeof(msg), "%s",
			 json_array_size(rem) ? "removed" : "nothing added");
	else
		snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg),
			 ": a person runs `warden allowlist approve REQUEST-ID` (or deny) at a "
			 "terminal; until then the names stay out");
	return mcp_tool_result(json_pack("{s:o, s:o, s:o, s:s}", "removed", removed, "pending",
					 pending, "refused", refused, "message", msg));
}

void mcp_tool_answer(void *ctx, json_t *id, const json_t *result, const json_t *error)
{
	struct mcp_server *m = ctx;
	json_t *added, *refused, *content;
	const char *action = NULL;
	struct mcp_add *a = NULL;
	char by[64];
	bool yes;

	for (size_t i = 0; i < MCP_MAX_ADDS && !a; i++)
		if (m->adds[i].used && m->adds[i].elicit && json_is_integer(id) &&
		    json_integer_value(id) == m->adds[i].elicit)
			a = &m->adds[i];
	if (!a)
		return; /* no question of ours: dropped */
	if (error || !json_is_object(result)) {
		/* the client could not ask: the requests stay pending for a terminal */
		json_t *pending = json_array();
		char msg[1024] = "";

		for (size_t i = 0; i < a->n; i++) {
			json_array_append_new(pending,
					      json_pack("{s:s, s:s}", "name", a->req[i].name,
							"request", a->req[i].id));
			snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg),
				 "%spending approval %s", i ? "; " : "", a->req[i].id);
		}
		reply(m, a->call,
		      mcp_tool_result(json_pack("{s:[], s:o, s:[], s:s}", "removed", "pending",
						pending, "refused", "message", msg)));
		json_decref(a->call);
		a->call = NULL;
		a->elicit = 0;
		return;
	}
	action = json_string_value(json_object_get(result, "action"));
	content = json_object_get(result, "content");
	yes = action && !strcmp(action, "accept") &&
	      json_is_true(json_object_get(content, "approve"));
	snprintf(by, sizeof(by), "the client's user (elicitation: %s)", action ? action : "?");
	added = json_array();
	refused = json_array();
	for (size_t i = 0; i < a->n; i++)
		decide(m, &a->req[i], yes, by, added, refused);
	reply(m, a->call,
	      mcp_tool_result(json_pack("{s:[], s:o, s:[], s:o, s:s}", "removed", "added", added,
					"pending", "refused", refused, "message",
					yes ? "approved: new runs may reach the names"
					    : "refused: the names stay out")));
	drop_add(a);
}

/* the store, read on each tick: decisions made at a terminal */
static void poll_decisions(struct mcp_server *m)
{
	for (size_t i = 0; i < MCP_MAX_ADDS; i++) {
		struct mcp_add *a = &m->adds[i];
		size_t left = 0;

		if (!a->used || a->call)
			continue;
		for (size_t k = 0; k < a->n; k++) {
			struct approval_req now;
			int ret;

			if (!a->req[k].id[0])
				continue;
			ret = approval_read(m->approval_fd, a->req[k].id, &now);
			if (ret == -ENOENT) {
				mcp_audit(m, "mcp.allowlist.deny", a->req[k].run, a->req[k].name,
					  false,
					  "request %s: its file was removed; the name stays out",
					  a->req[k].id);
				a->req[k].id[0] = '\0';
				continue;
			}
			if (ret || now.state == APPROVAL_PENDING) {
				left++;
				continue;
			}
			decide(m, &now, now.state == APPROVAL_APPROVED,
			       now.decided_by[0] ? now.decided_by : "a terminal", NULL, NULL);
			a->req[k].id[0] = '\0';
		}
		if (!left)
			drop_add(a);
	}
}

/* ------------------------------------------------------------ dispatch, timers */

void mcp_tool_call(void *ctx, const struct mcp_tool *tool, json_t *id, json_t *args,
		   json_t *progress)
{
	struct mcp_server *m = ctx;
	json_t *res = NULL;

	if (!strcmp(tool->name, "run_sandboxed"))
		res = start_run(m, id, args, progress);
	else if (!strcmp(tool->name, "list_audit_log"))
		res = list_audit_log(m, args);
	else if (!strcmp(tool->name, "list_runs"))
		res = list_runs(m);
	else if (!strcmp(tool->name, "kill_run"))
		res = kill_run(m, args);
	else if (!strcmp(tool->name, "set_egress_allowlist"))
		res = set_allowlist(m, id, args);
	else
		res = mcp_tool_error("%s: not built", tool->name);
	if (res)
		reply(m, id, res);
}

void mcp_tool_cancelled(void *ctx, json_t *id, const char *reason)
{
	struct mcp_server *m = ctx;

	for (size_t i = 0; i < MCP_MAX_RUNS; i++) {
		struct mcp_run *r = &m->runs[i];

		if (!r->used || !json_equal(r->call, id) || r->cancelled)
			continue;
		r->cancelled = true;
		stop_run(r);
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
	poll_decisions(m);
}

void mcp_shutdown(struct mcp_server *m)
{
	uint64_t t0 = wd_mono_ns();
	bool live;

	for (size_t i = 0; i < MCP_MAX_RUNS; i++)
		if (m->runs[i].used) {
			m->runs[i].cancelled = true;
			stop_run(&m->runs[i]);
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
				finish_run(m, r);
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
				approval_remove(m->approval_fd, a->req[k].id);
				mcp_audit(
				    m, "mcp.allowlist.deny", a->req[k].run, a->req[k].name, false,
				    "request %s: the server ended before a person decided; the "
				    "name stays out",
				    a->req[k].id);
			}
		if (a->used)
			drop_add(a);
	}
	if (m->derived[0])
		unlink(m->derived);
	if (m->state_dir[0])
		rmdir(m->state_dir);
	free(m->session_runs);
	m->session_runs = NULL;
	m->nsession_runs = 0;
}

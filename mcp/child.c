/* child.c - run_sandboxed's child process: `warden run` started with the derived policy,
 * its stdin written and its stdout and stderr kept (capped), its end seen through a pidfd,
 * and the answer made from its exit and its network denials. */
#include "mcp/internal.h"
#include "run/run.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

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

json_t *mcp_run_start(struct mcp_server *m, json_t *id, json_t *args, json_t *progress)
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
	if (m->backend) {
		argv[n++] = "--backend";
		argv[n++] = m->backend;
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

void mcp_run_finish(struct mcp_server *m, struct mcp_run *r)
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
		mcp_answer(m, r->call,
			   mcp_tool_error("run_sandboxed: the run did not start (status %d): %s",
					  exitc, r->out[1].buf.data));
	} else {
		res = json_pack("{s:s, s:i, s:o, s:o, s:I, s:I, s:b, s:o}", "run", r->id, "exit",
				exitc, "stdout", string_of(&r->out[0].buf), "stderr",
				string_of(&r->out[1].buf), "stdout_cut_bytes",
				(json_int_t)r->out[0].cut, "stderr_cut_bytes",
				(json_int_t)r->out[1].cut, "killed", r->killed, "denials",
				run_denials(m, r->id));
		if (res && sig)
			json_object_set_new(res, "signal", json_integer(sig));
		mcp_answer(m, r->call, mcp_tool_result(res));
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
		mcp_run_finish(m, r);
}

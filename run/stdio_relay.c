/* run_stdio.c - `warden run`'s stdio relay and MCP tool-call attribution (run_stdio.h).
 *
 * Theory of operation. When stdin and stdout are open and neither is a terminal (an MCP
 * client's pipes, `out=$(warden run ...)`), the stage "stdio" (before "fork") gives the program
 * two pipes: the launcher keeps the client's descriptors (moved above 2, CLOEXEC) and its own
 * ends of the pipes (non-blocking, CLOEXEC), and puts the program's ends at 0 and 1, which the
 * sandbox's child inherits; run.c points 0 and 1 at /dev/null once the program runs. The
 * wait loop (run_wait.c) polls the four descriptors. Each direction reads into its buffer,
 * hands the new bytes to the tracker (toolcalls.c) and writes them on, unchanged and in order.
 * The tracker consumes up to the newline of a line that changed the calls in flight; the
 * relay then tells the run's gateway (`{"op": "mcp", "id", "calls"}` on its control socket,
 * answered before the relay goes on) and only then writes that newline: a server that acts on
 * a tools/call as soon as it has the line acts after its gateway knows the call. No byte is
 * held past the end of its line, and none is held at all while attribution is off.
 *
 * The client's descriptors are not ours to make non-blocking (their file description is the
 * client's): a read follows POLLIN (it returns what is there); the client's stdout, when it is a
 * pipe, is opened again through /proc/self/fd (a file description of our own, non-blocking);
 * a socket gets MSG_DONTWAIT; anything else (a file, or a pipe that cannot be opened again) is
 * written at most PIPE_BUF bytes at a time after POLLOUT, which a pipe with room takes whole
 * without blocking. EOF goes through in each direction: the client closing stdin closes the
 * program's stdin once the buffered bytes are written; the program closing stdout closes the
 * client's once they are delivered. A reader gone (EPIPE; SIGPIPE is ignored) closes the
 * other side of that direction, as a direct pipe would. After the program ended, what it wrote
 * is delivered (bounded by RUN_STDIO_DRAIN_MS without progress). */
#include "run/internal.h"
#include "policy/policy.h"
#include "run/elicit.h"
#include "run/mcppin.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* How long the gateway may take to acknowledge an update. */
#define RUN_STDIO_GW_MS 2000
/* After the program ended: how long the relay waits for the client to take its output. */
#define RUN_STDIO_DRAIN_MS 2000

void run_stdio_plan(struct run *r)
{
	struct run_stdio *io = &r->sandbox.io;
	const char *env = getenv("WARDEN_STDIO_RELAY");

	for (int d = 0; d < 2; d++)
		io->dir[d].in = io->dir[d].out = -1;
	run_toolcalls_init(&io->track);
	/* `warden trace`: the tools the server lists are recorded for warden init's pin file */
	if (r->trace)
		io->track.listed = json_object();
	if (env && !strcmp(env, "0"))
		snprintf(io->why, sizeof(io->why), "WARDEN_STDIO_RELAY=0");
	else if (fcntl(STDIN_FILENO, F_GETFD) < 0 || fcntl(STDOUT_FILENO, F_GETFD) < 0)
		snprintf(io->why, sizeof(io->why), "stdin or stdout is closed");
	else if (isatty(STDIN_FILENO) || isatty(STDOUT_FILENO))
		snprintf(io->why, sizeof(io->why), "stdin or stdout is a terminal");
	else
		io->want = true;
}

static bool is_sock(int fd)
{
	struct stat st;

	return !fstat(fd, &st) && S_ISSOCK(st.st_mode);
}

/* the client's stdout when it is a pipe: a file description of our own, opened through
 * /proc/self/fd, may be non-blocking without touching the client's (writes of any size);
 * else @fd as it is */
static int own_fifo(int fd, bool *nb)
{
	struct stat st;
	char path[64];
	int o;

	*nb = false;
	if (fstat(fd, &st) || !S_ISFIFO(st.st_mode))
		return fd;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	o = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (o < 0)
		return fd;
	close(fd);
	*nb = true;
	return o;
}

/* the filter's acts into the run's audit log */
static void filter_note(void *ctx, const struct run_mcpfilter_note *n)
{
	run_audit_mcp_filter((struct run *)ctx, n);
}

static void new_denial_id(void *ctx, char *out, size_t size)
{
	uint64_t v = 0;

	(void)ctx;
	if (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v))
		v = wd_mono_ns() * 0x9e3779b97f4a7c15ULL;
	snprintf(out, size, "dn-%012llx", (unsigned long long)(v >> 16));
}

/* mcp.pin: the pin file read (relative: to the policy file's folder); missing or unreadable
 * fails the run (every tool would be hidden: a person accepts them first) */
static int load_pins(struct run *r)
{
	struct run_stdio *io = &r->sandbox.io;
	const char *pin = r->input.pol->mcp_pin, *learn = getenv("WARDEN_MCP_PIN_LEARN");
	char path[PATH_MAX], err[PATH_MAX + 200];
	int ret;

	if (!pin)
		return 0;
	if (learn && !strcmp(learn, "1")) {
		io->pin_learn = true;
		run_audit_mcp(r, "mcp.pin not enforced: WARDEN_MCP_PIN_LEARN=1 (warden mcp pin "
				 "reading the server's tools)");
		return 0;
	}
	if (run_mcppin_path(r->o.policy, pin, path, sizeof(path)))
		return run_fail(r, "stdio", NULL, "mcp.pin: the path is too long");
	snprintf(io->accept_hint, sizeof(io->accept_hint), "`warden mcp pin --accept -p %s`",
		 r->o.policy ? r->o.policy : "POLICY");
	ret = run_mcppin_load(path, &io->pins, err, sizeof(err));
	if (ret == -ENOENT)
		return run_fail(r, "stdio", io->accept_hint,
				"the policy's mcp.pin file %s does not exist: no tool of the "
				"server has been accepted yet",
				path);
	if (ret)
		return run_fail(r, "stdio", NULL, "mcp.pin: %s", err);
	return 0;
}

int run_stdio_setup(struct run *r)
{
	struct run_stdio *io = &r->sandbox.io;
	struct run_stdio_dir *c2s = &io->dir[MCP_C2S], *s2c = &io->dir[MCP_S2C];
	int in[2] = {-1, -1}, out[2] = {-1, -1}, ret;

	/* tool rules are enforced on the relayed lines: no relay, no run (fail closed) */
	if (policy_mcp_tools_on(r->input.pol) && !io->want)
		return run_fail(
		    r, "stdio",
		    "start it from an MCP client (pipes for stdin and stdout), or take "
		    "mcp.tools and mcp.pin out of the policy",
		    "the policy's mcp.tools rules (or mcp.pin) are enforced on the relayed stdio, "
		    "and there is no relay: %s",
		    io->why);
	/* once: a container's network stage sets it up before its own stage (mode_docker.c) */
	if (!io->want || io->on)
		return 0;
	ret = load_pins(r);
	if (ret)
		return ret;
	c2s->buf = malloc(RUN_STDIO_BUF);
	s2c->buf = malloc(RUN_STDIO_BUF);
	if (!c2s->buf || !s2c->buf)
		return run_fail(r, "stdio", NULL, "out of memory");
	c2s->in = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
	s2c->out = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	if (c2s->in < 0 || s2c->out < 0 || pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC))
		goto fail;
	/* the program's ends at 0 and 1 (dup2 clears CLOEXEC: the sandbox's child inherits them) */
	if (dup2(in[0], STDIN_FILENO) < 0 || dup2(out[1], STDOUT_FILENO) < 0)
		goto fail;
	close(in[0]);
	close(out[1]);
	c2s->out = in[1];
	s2c->in = out[0];
	fcntl(c2s->out, F_SETFL, O_NONBLOCK);
	fcntl(s2c->in, F_SETFL, O_NONBLOCK);
	/* bigger pipes: fewer wakeups for bulk (the default is 64 KiB; refused above the
	 * user's limit, which is fine) */
	fcntl(c2s->out, F_SETPIPE_SZ, 1 << 20);
	fcntl(s2c->in, F_SETPIPE_SZ, 1 << 20);
	c2s->out_nb = true;
	c2s->in_sock = is_sock(c2s->in);
	s2c->out_sock = is_sock(s2c->out);
	if (!s2c->out_sock)
		s2c->out = own_fifo(s2c->out, &s2c->out_nb);
	/* network.ask: whole lines too, for the person's answer through the client (elicit.h) */
	io->asks = !r->learn &&
		   ((r->input.pol->ask && r->input.pol->ask->nrules) || r->input.pol->ask_any);
	if (policy_mcp_tools_on(r->input.pol) || r->input.pol->mcp_explain || io->asks) {
		io->filter = true;
		io->explain = r->input.pol->mcp_explain;
		io->mf.policy = r->input.pol;
		io->mf.note = filter_note;
		io->mf.new_id = new_denial_id;
		io->mf.ctx = r;
		io->mf.pins = io->pins;
		io->mf.pin_file = r->input.pol->mcp_pin;
		io->mf.accept_hint = io->accept_hint;
	}
	io->on = true;
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		wd_closep(&in[i]);
		wd_closep(&out[i]);
	}
	return run_fail(r, "stdio", NULL, "the program's stdio pipes: %s", strerror(errno));
}

/* the event that attribution is off for the run (once, and only for a program that spoke
 * JSON-RPC before), relaying unaffected */
static void say_off(struct run *r)
{
	char why[400];

	if (r->sandbox.io.told_off || !r->sandbox.io.track.off)
		return;
	r->sandbox.io.told_off = true;
	if (!r->sandbox.io.track.looked_mcp)
		return; /* not an MCP program: nothing was attributed, nothing to say */
	snprintf(why, sizeof(why),
		 "MCP tool-call attribution off for the rest of the run: %s; "
		 "stdio is still relayed unchanged",
		 r->sandbox.io.track.why);
	run_audit_mcp(r, why);
}

/*
 * The gateway did not take an update of the calls in flight (@why): it may still hold the calls
 * of before, which would keep a tool's network rules (mcp.tools.NAME.network) open after its
 * call ended. Attribution is off from now on (no call is ever in flight again for the gateway
 * once it takes the empty set), so it is told the empty set once more; a run whose policy has
 * tool network rules and whose gateway took neither ends here (fail closed).
 */
static void gateway_stale(struct run *r, const char *why)
{
	json_t *req = json_pack("{s:s, s:s, s:[]}", "op", "mcp", "id", r->id, "calls");
	char why2[300] = "out of memory";
	int ret =
	    req ? run_gw_call(r->gateway.gw.socket, req, RUN_STDIO_GW_MS, NULL, why2, sizeof(why2))
		: -ENOMEM;

	json_decref(req);
	if (!ret || !r->input.pol || !r->input.pol->ntool_net)
		return;
	snprintf(r->audit.fail_reason, sizeof(r->audit.fail_reason),
		 "the gateway did not take the end of an MCP tool call (%s; again: %s): a tool's "
		 "network rules could have stayed open, so the run was ended",
		 why, why2);
	wd_say(stderr, "warden run: %s", r->audit.fail_reason);
	run_sandbox_signal(r, SANDBOX_INSIDE, SIGKILL);
	limits_signal(&r->limits.lim, SIGKILL);
}

/* tell the gateway which calls are in flight; @ret_ans: its answer (NULL: not wanted) */
static int tell_gateway(struct run *r, json_t **ret_ans)
{
	json_t *calls = run_toolcalls_calls_json(&r->sandbox.io.track), *req;
	uint64_t t0 = wd_mono_ns();
	char why[300];
	int ret;

	if (!r->gateway.registered || !r->gateway.gw.socket[0]) {
		json_decref(calls);
		return 0;
	}
	req = calls ? json_pack("{s:s, s:s, s:o}", "op", "mcp", "id", r->id, "calls", calls) : NULL;
	if (!req)
		return -ENOMEM;
	ret = run_gw_call(r->gateway.gw.socket, req, RUN_STDIO_GW_MS, ret_ans, why, sizeof(why));
	json_decref(req);
	r->sandbox.io.updates++;
	r->sandbox.io.update_ns += wd_mono_ns() - t0;
	if (ret) {
		char off[400];

		snprintf(off, sizeof(off), "the gateway did not take the calls in flight (%s)",
			 why);
		run_toolcalls_stop(&r->sandbox.io.track, off);
		gateway_stale(r, why);
	}
	return ret;
}

/* tell the gateway; with mcp.explain_denials, keep the denials of the calls that ended */
static void tell_gateway_ended(struct run *r)
{
	struct run_stdio *io = &r->sandbox.io;
	json_t *ans = NULL, *e, *v;
	size_t i;

	tell_gateway(r, io->explain ? &ans : NULL);
	e = json_object_get(ans, "ended");
	if (json_is_array(e) && !io->ended)
		io->ended = json_array();
	json_array_foreach(e, i, v)
	{
		if (json_array_size(io->ended) < RUN_TOOLCALLS_CALLS)
			json_array_append(io->ended, v);
	}
	json_decref(ans);
}

/* bytes of @d about to go on: tracked, the gateway told, releasable */
static void track(struct run *r, enum mcp_dir d, const char *p, size_t n)
{
	size_t from = 0;
	bool changed;

	while (from < n && !r->sandbox.io.track.off) {
		from += run_toolcalls_feed(&r->sandbox.io.track, d, p + from, n - from, &changed);
		/* a call started or ended, or attribution went off (the gateway forgets them) */
		if (changed)
			tell_gateway_ended(r);
	}
	say_off(r);
}

static void dir_close_in(struct run_stdio_dir *x)
{
	wd_closep(&x->in);
}

static void dir_close_out(struct run_stdio_dir *x)
{
	wd_closep(&x->out);
	x->len = x->off = 0;
	x->q.len = x->qoff = 0;
}

/* bytes of @x read and not written yet */
static size_t pending(const struct run_stdio *io, const struct run_stdio_dir *x)
{
	return io->filter ? x->q.len - x->qoff : x->len - x->off;
}

/* filter mode: the complete line of @d through the filter; what goes on is tracked (the
 * gateway told) and queued, an answer to the client queued the other way */
static void filter_line(struct run *r, enum mcp_dir d)
{
	struct run_stdio *io = &r->sandbox.io;
	struct run_stdio_dir *x = &io->dir[d], *o = &io->dir[d == MCP_C2S ? MCP_S2C : MCP_C2S];
	struct wd_buf fwd = WD_BUF_INIT, reply = WD_BUF_INIT;
	const char *s = x->line.data ? x->line.data : "";
	int ret;

	/* network.ask: the client's answer to the launcher's own request is not the server's */
	if (io->asks && d == MCP_C2S && run_elicit_client_line(io, r->id, s, x->line.len)) {
		x->line.len = 0;
		return;
	}
	ret = run_mcpfilter_line(&io->mf, d, s, x->line.len, &fwd, &reply);
	x->line.len = 0;
	if (!ret && fwd.len) {
		track(r, d, fwd.data, fwd.len);
		/* the server's answer ended calls that had denials: it says so (explain_denials) */
		if (d == MCP_S2C && io->explain && json_array_size(io->ended) &&
		    run_mcpfilter_explain(fwd.data, fwd.len - 1, io->ended, r->input.policy_abs,
					  r->id, &reply) == 1) {
			struct wd_buf t = fwd;

			fwd = reply;
			reply = t;
			reply.len = 0;
		}
		if (x->out >= 0)
			ret = wd_buf_append(&x->q, fwd.data, fwd.len);
	}
	if (!ret && reply.len && o->out >= 0)
		ret = wd_buf_append(&o->q, reply.data, reply.len);
	if (ret)
		run_audit_mcp(r, "a line of the MCP stdio relay dropped: out of memory");
	wd_buf_free(&fwd);
	wd_buf_free(&reply);
}

/* filter mode: @n bytes read from @d cut into lines for the filter; a line longer than the
 * filter reads is dropped up to its newline */
static void filter_feed(struct run *r, enum mcp_dir d, const char *p, size_t n)
{
	struct run_stdio_dir *x = &r->sandbox.io.dir[d];

	while (n) {
		const char *nl = memchr(p, '\n', n);
		size_t take = nl ? (size_t)(nl - p) : n;

		if (!x->skip && x->line.len + take > RUN_TOOLCALLS_LINE_MAX) {
			run_mcpfilter_drop_long(&r->sandbox.io.mf, d);
			x->line.len = 0;
			x->skip = true;
		} else if (!x->skip && wd_buf_append(&x->line, p, take)) {
			run_audit_mcp(r, "a line of the MCP stdio relay dropped: out of memory");
			x->line.len = 0;
			x->skip = true;
		}
		p += take;
		n -= take;
		if (!nl)
			break;
		if (!x->skip)
			filter_line(r, d);
		x->skip = false;
		p++;
		n--;
	}
}

static void dir_read(struct run *r, enum mcp_dir d)
{
	struct run_stdio_dir *x = &r->sandbox.io.dir[d];
	size_t from;
	ssize_t n;

	if (x->off == x->len)
		x->off = x->len = 0;
	else if (x->off > RUN_STDIO_BUF / 2) {
		memmove(x->buf, x->buf + x->off, x->len - x->off);
		x->len -= x->off;
		x->off = 0;
	}
	if (x->len == RUN_STDIO_BUF)
		return;
	if (x->in_sock)
		n = recv(x->in, x->buf + x->len, RUN_STDIO_BUF - x->len, MSG_DONTWAIT);
	else
		n = read(x->in, x->buf + x->len, RUN_STDIO_BUF - x->len);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n <= 0) {
		/* EOF (or an error: the same for the reader); a last line without its newline
		 * is still a line for the filter */
		if (r->sandbox.io.filter && x->line.len && !x->skip)
			filter_line(r, d);
		dir_close_in(x);
		return;
	}
	if (x->out < 0)
		return; /* nobody reads this direction any more: dropped, as a closed pipe would */
	if (r->sandbox.io.filter) {
		filter_feed(r, d, x->buf + x->len, (size_t)n);
		return; /* @buf only took the bytes: what goes on is in @q */
	}
	from = x->len;
	x->len += (size_t)n;
	track(r, d, x->buf + from, x->len - from);
}

static void dir_write(struct run_stdio_dir *x, bool filter)
{
	const char *p = filter ? x->q.data + x->qoff : x->buf + x->off;
	size_t n = filter ? x->q.len - x->qoff : x->len - x->off;
	ssize_t w;

	if (!n)
		return;
	if (x->out_sock)
		w = send(x->out, p, n, MSG_DONTWAIT | MSG_NOSIGNAL);
	else
		w = write(x->out, p, x->out_nb || n < PIPE_BUF ? n : PIPE_BUF);
	if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (w < 0) {
		/* the reader is gone (EPIPE): this direction ends, its writer is told by its
		 * pipe closing; the other direction goes on */
		dir_close_out(x);
		dir_close_in(x);
		return;
	}
	x->bytes += (uint64_t)w;
	if (!filter) {
		x->off += (size_t)w;
		if (x->off == x->len)
			x->off = x->len = 0;
		return;
	}
	x->qoff += (size_t)w;
	if (x->qoff == x->q.len) {
		x->qoff = x->q.len = 0;
	} else if (x->qoff > RUN_STDIO_BUF) {
		memmove(x->q.data, x->q.data + x->qoff, x->q.len - x->qoff + 1); /* and its NUL */
		x->q.len -= x->qoff;
		x->qoff = 0;
	}
}

void run_stdio_poll(struct run *r, struct pollfd *p)
{
	struct run_stdio *io = &r->sandbox.io;

	for (int d = 0; d < 2; d++) {
		struct run_stdio_dir *x = &io->dir[d];
		bool room;

		p[2 * d] = (struct pollfd){-1, POLLIN, 0};
		p[2 * d + 1] = (struct pollfd){-1, POLLOUT, 0};
		if (!io->on)
			continue;
		/* EOF in, everything written: the reader sees EOF */
		if (x->in < 0 && !pending(io, x) && x->out >= 0)
			dir_close_out(x);
		/* filter mode: read on while what waits to go out is small, in both directions
		 * for the client (its refused calls are answered on its stdout) */
		if (io->filter)
			room = pending(io, x) < RUN_STDIO_BUF &&
			       (d == MCP_S2C || pending(io, &io->dir[MCP_S2C]) < 4 * RUN_STDIO_BUF);
		else
			room = x->len < RUN_STDIO_BUF || x->off;
		if (x->in >= 0 && room)
			p[2 * d].fd = x->in;
		if (x->out >= 0 && pending(io, x))
			p[2 * d + 1].fd = x->out;
	}
}

void run_stdio_io(struct run *r, const struct pollfd *p)
{
	for (int d = 0; d < 2 && r->sandbox.io.on; d++) {
		struct run_stdio_dir *x = &r->sandbox.io.dir[d];

		if (p[2 * d + 1].fd >= 0 && p[2 * d + 1].revents)
			dir_write(x, r->sandbox.io.filter);
		if (p[2 * d].fd >= 0 && p[2 * d].revents && x->in >= 0)
			dir_read(r, (enum mcp_dir)d);
	}
}

void run_stdio_drain(struct run *r)
{
	struct run_stdio *io = &r->sandbox.io;
	struct pollfd p[RUN_STDIO_NPOLL];
	uint64_t last = wd_mono_ns(), moved;

	if (!io->on)
		return;
	/* the program is gone: what the client still sends has no reader */
	dir_close_in(&io->dir[MCP_C2S]);
	dir_close_out(&io->dir[MCP_C2S]);
	for (;;) {
		moved = io->dir[MCP_S2C].bytes + pending(io, &io->dir[MCP_S2C]);
		run_stdio_poll(r, p);
		if (p[2].fd < 0 && p[3].fd < 0)
			break;
		if (poll(p, RUN_STDIO_NPOLL, 100) < 0 && errno != EINTR)
			break;
		run_stdio_io(r, p);
		if (io->dir[MCP_S2C].bytes + pending(io, &io->dir[MCP_S2C]) != moved)
			last = wd_mono_ns();
		else if (wd_mono_ns() - last > (uint64_t)RUN_STDIO_DRAIN_MS * 1000000)
			break;
	}
}

void run_stdio_finish(struct run *r)
{
	struct run_stdio *io = &r->sandbox.io;
	json_t *ans = NULL, *ex;

	if (!io->on)
		return;
	for (int d = 0; d < 2; d++) {
		dir_close_in(&io->dir[d]);
		dir_close_out(&io->dir[d]);
	}
	/* the calls still in flight end with the program; the answer has the gateway's
	 * denials per tool during calls */
	if (!io->track.off) {
		run_toolcalls_free(&io->track);
		tell_gateway(r, &ans);
	}
	ex = run_toolcalls_exit_json(&io->track, ans ? json_object_get(ans, "denials") : NULL);
	if (ex && io->filter)
		json_object_set_new(
		    ex, "filter",
		    json_pack("{s:I, s:I, s:I}", "refused", (json_int_t)io->mf.refused, "hidden",
			      (json_int_t)io->mf.hidden, "dropped", (json_int_t)io->mf.dropped));
	json_decref(ans);
	free(io->exit_mcp);
	io->exit_mcp = ex ? json_dumps(ex, JSON_COMPACT) : NULL;
	json_decref(ex);
	if (io->updates && getenv("WARDEN_TIMING"))
		wd_say(stderr, "warden run: timing: mcp updates %llu, %.1f us each",
		       (unsigned long long)io->updates,
		       (double)io->update_ns / 1e3 / (double)io->updates);
}

void run_stdio_free(struct run *r)
{
	struct run_stdio *io = &r->sandbox.io;

	for (int d = 0; d < 2; d++) {
		dir_close_in(&io->dir[d]);
		dir_close_out(&io->dir[d]);
		free(io->dir[d].buf);
		io->dir[d].buf = NULL;
		wd_buf_free(&io->dir[d].line);
		wd_buf_free(&io->dir[d].q);
	}
	run_mcpfilter_free(&io->mf);
	json_decref(io->pins);
	io->pins = NULL;
	json_decref(io->ended);
	io->ended = NULL;
	run_toolcalls_free(&io->track);
	json_decref(io->track.listed);
	io->track.listed = NULL;
	free(io->exit_mcp);
	io->exit_mcp = NULL;
}

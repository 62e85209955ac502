/* learn.c - `warden trace`'s run (run_trace_main(), for `warden trace` and `warden init --
 * COMMAND`): a run_main() with the learn hooks (learn.h) that make it a trace. The policy hook
 * is learn_policy.c's; here are the others: memory and pids sampled in the wait, what the run
 * did collected at its end (the gateway's learned names, the recorder's entries, the peaks),
 * the trace written (trace/write.h, outdir.h) and its summary said on stderr.
 */
#include "run/internal.h"
#include "run/learn.h"
#include "trace/write.h"
#include "sandbox/sandbox.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* At most this many names are listed by the summary (the trace has all). */
#define SUMMARY_NAMES 12

/* ------------------------------------------------------------ measuring */

static void learn_sample(struct run *r, int pid)
{
	struct run_trace *t = r->trace;
	uint64_t n = limits_pids_now(&r->limits.lim, pid), kb = limits_rss_kb(pid);

	if (n > t->peak_pids)
		t->peak_pids = n;
	if (kb > t->peak_rss_kib)
		t->peak_rss_kib = kb;
}

/* ------------------------------------------------------------ collecting */

/* What a recorder entry was, as a trace operation (-1: not one). In trace mode the entries'
 * op is an enum trace_op already; a recorder in another mode (audit.files all) is mapped. */
static int entry_op(const struct run *r, const struct recorder_entry *e)
{
	static const int map[] = {
	    [SANDBOX_OP_OPEN] = TRACE_READ,   [SANDBOX_OP_READ] = TRACE_READ,
	    [SANDBOX_OP_WRITE] = TRACE_WRITE, [SANDBOX_OP_CREATE] = TRACE_CREATE,
	    [SANDBOX_OP_EXEC] = TRACE_EXEC,   [SANDBOX_OP_STAT] = TRACE_STAT,
	    [SANDBOX_OP_ACCESS] = TRACE_STAT, [SANDBOX_OP_READLINK] = TRACE_STAT,
	};

	if (policy_audit_files(r->input.pol) == POLICY_FILES_TRACE) {
		if (e->op < 0 || e->op >= TRACE_OP_N)
			return -1;
		if (e->verdict != RECORDER_GRANTED && e->verdict != RECORDER_MISSING)
			return -1;
		/* a missing path is only ever "missing", whatever the call was */
		return e->verdict == RECORDER_MISSING ? TRACE_MISSING : e->op;
	}
	if (e->op < 0 || (size_t)e->op >= WD_ARRAY_SIZE(map))
		return -1;
	if (e->verdict != RECORDER_GRANTED && e->verdict != RECORDER_DENIED)
		return -1;
	return map[e->op];
}

/* Why a refused connect was refused, in the trace. */
#define TRACE_SOCKET_REFUSED "a unix socket not named with --allow-socket"

static int collect_files(struct run *r, struct trace *t)
{
	size_t n = recorder_count(r->sandbox.files);

	t->files = calloc(n ? n : 1, sizeof(*t->files));
	if (!t->files)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct recorder_entry *e = recorder_get(r->sandbox.files, i);
		struct trace_file_ev *f = &t->files[t->nfiles];
		bool refused = policy_audit_files(r->input.pol) == POLICY_FILES_TRACE &&
			       e->op == RECORDER_REFUSED_CONNECT && e->verdict == RECORDER_DENIED;
		int op = refused ? TRACE_CONNECT : entry_op(r, e);

		if (op < 0 || !e->path || e->path[0] != '/')
			continue;
		f->path = strdup(e->path);
		if (!f->path)
			return -ENOMEM;
		if (refused && !(f->refused = strdup(TRACE_SOCKET_REFUSED))) {
			free(f->path);
			f->path = NULL;
			return -ENOMEM;
		}
		f->op = (enum trace_op)op;
		f->count = e->count;
		snprintf(f->comm, sizeof(f->comm), "%s", e->comm);
		t->nfiles++;
	}
	return 0;
}

static const struct {
	const char *name;
	enum trace_proto proto;
} protos[] = {
    {"tls", TRACE_PROTO_TLS},
    {"http", TRACE_PROTO_HTTP},
    {"raw", TRACE_PROTO_RAW},
    {"dns", TRACE_PROTO_DNS},
};

/* The gateway's learned list ({"host","port","proto","count"[,"refused"]} each) into @t;
 * an entry that is not one is left out. Return: 0 or -ENOMEM. */
static int collect_nets(const json_t *arr, struct trace *t)
{
	size_t i, n = json_array_size(arr);
	json_t *it;

	t->nets = calloc(n ? n : 1, sizeof(*t->nets));
	if (!t->nets)
		return -ENOMEM;
	json_array_foreach(arr, i, it)
	{
		const char *host = json_string_value(json_object_get(it, "host"));
		const char *proto = json_string_value(json_object_get(it, "proto"));
		const char *refused = json_string_value(json_object_get(it, "refused"));
		json_int_t port = json_integer_value(json_object_get(it, "port"));
		json_int_t count = json_integer_value(json_object_get(it, "count"));
		struct trace_net_ev *e = &t->nets[t->nnets];
		size_t k = 0;

		while (proto && k < WD_ARRAY_SIZE(protos) && strcmp(protos[k].name, proto))
			k++;
		if (!host || !host[0] || !proto || k == WD_ARRAY_SIZE(protos) || port < 0 ||
		    port > 65535 || (protos[k].proto != TRACE_PROTO_DNS && !port))
			continue;
		e->host = strdup(host);
		e->refused = refused && refused[0] ? strdup(refused) : NULL;
		if (!e->host || (refused && refused[0] && !e->refused)) {
			free(e->host);
			free(e->refused);
			return -ENOMEM;
		}
		e->proto = protos[k].proto;
		e->port = protos[k].proto == TRACE_PROTO_DNS ? 0 : (uint16_t)port;
		e->count = count > 0 ? (uint64_t)count : 1;
		t->nnets++;
	}
	return 0;
}

/* The env.allow names the program was given (those the launcher's environment has). */
static int collect_env(const struct run *r, struct trace *t)
{
	const struct wd_policy *p = r->input.pol;

	t->env = calloc(p->nenv_allow ? p->nenv_allow : 1, sizeof(*t->env));
	if (!t->env)
		return -ENOMEM;
	for (size_t i = 0; i < p->nenv_allow; i++) {
		if (!getenv(p->env_allow[i]))
			continue;
		t->env[t->nenv] = strdup(p->env_allow[i]);
		if (!t->env[t->nenv])
			return -ENOMEM;
		t->nenv++;
	}
	return 0;
}

/* Did the program speak JSON-RPC on its stdin and stdout (an MCP server over stdio)? The relay's
 * tracker (toolcalls.h) read every line both ways as a JSON-RPC message or batch: at least one
 * each way, and none that was not one (that turns it off). A terminal has no relay: not told. */
static bool stdio_jsonrpc(const struct run *r)
{
	const struct run_stdio *io = &r->sandbox.io;

	return io->on && !io->track.off && io->track.lineno[MCP_C2S] > 0 &&
	       io->track.lineno[MCP_S2C] > 0;
}

/* The MCP tools the server listed in answers to the client's tools/list (the relay's tracker
 * collected their canonical definitions), for warden init's pin file; NULL: none, or the
 * program spoke no JSON-RPC on its stdio. */
static json_t *listed_tools(const struct run *r)
{
	const json_t *listed = r->sandbox.io.track.listed;
	const char *name;
	json_t *def, *a;

	if (!stdio_jsonrpc(r) || !json_object_size(listed) || !(a = json_array()))
		return NULL;
	json_object_foreach((json_t *)listed, name, def)
	{
		if (json_array_append(a, def)) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

static void learn_collect(struct run *r, const struct run_outcome *o)
{
	struct run_trace *rt = r->trace;
	struct trace *t = &rt->t;
	json_t *learned = NULL;
	bool mem, pids;
	uint64_t peak = 0;
	int ret;

	(void)o;
	t->wall_ms = (wd_mono_ns() - r->audit.t0) / 1000000u;
	if (!t->wall_ms)
		t->wall_ms = 1;
	limits_breaches(&r->limits.lim, &mem, &pids, &peak);
	t->peak_memory_kib = peak ? peak / 1024 : rt->peak_rss_kib;
	t->peak_pids = rt->peak_pids;
	t->stdio_jsonrpc = stdio_jsonrpc(r);
	t->tools = listed_tools(r);
	t->command = calloc((size_t)r->cmd_argc + 1, sizeof(char *));
	ret = t->command ? 0 : -ENOMEM;
	for (int i = 0; !ret && i < r->cmd_argc; i++) {
		t->command[i] = strdup(r->cmd_argv[i]);
		ret = t->command[i] ? 0 : -ENOMEM;
		t->ncommand += !ret;
	}
	t->cwd = strdup(rt->cwd);
	t->home = strdup(rt->home);
	if (!ret && (!t->cwd || !t->home))
		ret = -ENOMEM;
	if (!ret)
		ret = collect_files(r, t);
	if (!ret && r->gateway.registered && !run_gw_learned(r, &learned))
		ret = collect_nets(learned, t);
	if (!ret)
		ret = collect_env(r, t);
	json_decref(learned);
	if (ret)
		wd_say(stderr, "warden trace: collecting the trace: %s", strerror(-ret));
}

/* ------------------------------------------------------------ writing, the summary */

/* The trace into the folder opened before the program ran: -o's name replaced, else a new
 * file in the default folder. Return: 0, or a negative errno (said). */
static int write_trace(struct run *r, const struct wd_buf *b)
{
	struct run_trace *rt = r->trace;
	char name[NAME_MAX + 1], got[NAME_MAX + 1];
	const char *dir = rt->dir.path;
	int ret;

	if (rt->out)
		ret = snprintf(name, sizeof(name), "%s", strrchr(rt->out, '/') + 1) >=
			      (int)sizeof(name)
			  ? -ENAMETOOLONG
			  : 0;
	else
		ret = trace_file_name(rt->t.command[0], rt->started_t, name, sizeof(name));
	if (!ret)
		ret = outdir_write(&rt->dir, name, rt->out ? OUTDIR_REPLACE : OUTDIR_SUFFIX, 0600,
				   b->data, b->len, got, sizeof(got));
	if (!ret && snprintf(rt->path, sizeof(rt->path), "%s%s%s", dir, strcmp(dir, "/") ? "/" : "",
			     got) >= (int)sizeof(rt->path))
		ret = -ENAMETOOLONG;
	if (ret == -ESTALE)
		wd_say(stderr,
		       "warden trace: the trace was not written: the folder %s was replaced or "
		       "moved while the program ran (something now at that path is not the folder "
		       "opened before it started; the program could change it)",
		       dir);
	else if (ret)
		wd_say(stderr, "warden trace: cannot write the trace in %s: %s%s", dir,
		       strerror(-ret), rt->out ? "" : " (use -o TRACE)");
	if (ret)
		rt->path[0] = '\0';
	return ret;
}

/* "~/x" for a path in the home folder, for the summary */
static const char *short_path(const char *path, const char *home, char *buf, size_t size)
{
	size_t n = strlen(home);

	if (n > 1 && !strncmp(path, home, n) && (path[n] == '/' || !path[n])) {
		snprintf(buf, size, "~%s", path + n);
		return buf;
	}
	return path;
}

/* One warning per credential store the program reached. */
static void say_stores(const struct run_trace *rt)
{
	const char *const *cs;
	char store[PATH_MAX + 64], sp[PATH_MAX + 2];
	size_t n;

	cs = policy_credential_stores(&n);
	for (size_t i = 0; i < n; i++) {
		const struct trace_file_ev *first = NULL;
		size_t hits = 0;

		run_learn_store_path(cs[i], rt->home, store, sizeof(store));
		for (size_t k = 0; k < rt->t.nfiles; k++)
			if (rt->t.files[k].op != TRACE_MISSING &&
			    run_path_within(rt->t.files[k].path, store)) {
				first = first ? first : &rt->t.files[k];
				hits++;
			}
		if (first)
			wd_say(
			    stderr,
			    "warden trace: warning: the program tried the credential store %s "
			    "(%s by %s%s%s); it was hidden in the trace and warden init will not "
			    "grant it",
			    cs[i], short_path(first->path, rt->home, sp, sizeof(sp)),
			    first->comm[0] ? first->comm : "?", hits > 1 ? ", and more" : "", "");
	}
}

/* One warning per unix socket the learning sandbox refused. */
static void say_sockets(const struct run_trace *rt)
{
	char sp[PATH_MAX + 2];

	for (size_t i = 0; i < rt->t.nfiles; i++) {
		const struct trace_file_ev *e = &rt->t.files[i];

		if (e->op != TRACE_CONNECT || !e->refused)
			continue;
		wd_say(stderr,
		       "warden trace: warning: %s tried to connect to the unix socket %s; it was "
		       "refused (a service outside the sandbox) and warden init will not grant "
		       "it: trace again with --allow-socket %s if the program must reach it",
		       e->comm[0] ? e->comm : "the program",
		       short_path(e->path, rt->home, sp, sizeof(sp)), e->path);
	}
}

static void say_files(const struct run_trace *rt)
{
	size_t n[TRACE_OP_N] = {0}, in_cwd = 0, refused = 0;

	for (size_t i = 0; i < rt->t.nfiles; i++) {
		if (rt->t.files[i].refused) {
			refused++;
			continue;
		}
		n[rt->t.files[i].op]++;
		if (trace_op_writes(rt->t.files[i].op) &&
		    run_path_within(rt->t.files[i].path, rt->cwd))
			in_cwd++;
	}
	wd_say(stderr,
	       "warden trace: files: %zu read, %zu executed, %zu looked at, %zu written, %zu "
	       "created, %zu removed, %zu renamed (%zu of these changes in the current folder), "
	       "%zu unix sockets connected to, %zu refused",
	       n[TRACE_READ], n[TRACE_EXEC], n[TRACE_STAT] + n[TRACE_MISSING], n[TRACE_WRITE],
	       n[TRACE_CREATE], n[TRACE_REMOVE], n[TRACE_RENAME], in_cwd, n[TRACE_CONNECT],
	       refused);
}

/* the names the program reached, on one line (escaped: a name is the program's choice) */
static void say_nets(const struct run_trace *rt)
{
	struct wd_buf line = WD_BUF_INIT;
	size_t shown = 0, refused = 0, reached;

	for (size_t i = 0; i < rt->t.nnets; i++)
		refused += rt->t.nets[i].refused != NULL;
	reached = rt->t.nnets - refused;
	wd_buf_printf(&line, "warden trace: names: %zu reached or tried%s", reached,
		      reached ? ":" : "");
	for (size_t i = 0; i < rt->t.nnets && shown < SUMMARY_NAMES; i++) {
		const struct trace_net_ev *e = &rt->t.nets[i];

		if (e->refused)
			continue;
		if (e->proto == TRACE_PROTO_DNS)
			wd_buf_printf(&line, " %s (resolved only)", e->host);
		else
			wd_buf_printf(&line, " %s:%u", e->host, e->port);
		shown++;
	}
	wd_say(stderr, "%s%s", wd_buf_cstr(&line), reached > shown ? " ..." : "");
	wd_buf_free(&line);
	for (size_t i = 0; i < rt->t.nnets; i++)
		if (rt->t.nets[i].refused)
			wd_say(stderr, "warden trace: refused even while learning: %s:%u (%s)",
			       rt->t.nets[i].host, rt->t.nets[i].port, rt->t.nets[i].refused);
}

static void say_env(const struct run *r, const struct run_trace *rt)
{
	struct wd_buf line = WD_BUF_INIT;

	wd_buf_printf(&line, "warden trace: environment given%s", rt->t.nenv ? ":" : ": none");
	for (size_t i = 0; i < rt->t.nenv; i++)
		wd_buf_printf(&line, " %s", rt->t.env[i]);
	if (r->input.pol->nenv_set) {
		wd_buf_puts(&line, "; set by the base policy (copy its env.set):");
		for (size_t i = 0; i < r->input.pol->nenv_set; i++)
			wd_buf_printf(&line, " %s", r->input.pol->env_set[i].name);
	}
	wd_say(stderr, "%s", wd_buf_cstr(&line));
	wd_buf_free(&line);
}

static void summary(const struct run *r, const struct run_trace *rt, int status,
		    const struct trace_write_info *wi)
{
	const struct trace *t = &rt->t;

	if (!rt->quiet) {
		wd_say(stderr, "warden trace: %s exited with status %d after %.1f s",
		       t->ncommand ? t->command[0] : "the program", status,
		       (double)t->wall_ms / 1000.0);
		say_files(rt);
		say_nets(rt);
		say_env(r, rt);
		wd_say(stderr,
		       "warden trace: measured: peak memory %llu KiB, %llu processes and threads "
		       "at most, %llu ms",
		       (unsigned long long)t->peak_memory_kib, (unsigned long long)t->peak_pids,
		       (unsigned long long)t->wall_ms);
		if (t->stdio_jsonrpc)
			wd_say(stderr,
			       "warden trace: it spoke JSON-RPC on stdin and stdout (an MCP "
			       "server): warden init gives it no timeout");
		wd_say(stderr,
		       "warden trace: the current folder was %s; the home folder was read-only "
		       "(bubblewrap 0.8 has no --tmp-overlay: writes there failed)",
		       rt->cwd_rw ? "writable" : "read-only");
	}
	say_stores(rt);
	say_sockets(rt);
	if (wi->bad_utf8)
		wd_say(stderr,
		       "warden trace: warning: %zu paths are not valid UTF-8 and were left out (a "
		       "policy cannot name them)",
		       wi->bad_utf8);
	if (wi->too_big)
		wd_say(stderr,
		       "warden trace: warning: %zu file events were left out to keep the trace "
		       "under 64 MiB",
		       wi->too_big);
	if (r->sandbox.files && recorder_dropped(r->sandbox.files, NULL))
		wd_say(stderr,
		       "warden trace: warning: %llu accesses were not kept (the recorder's table "
		       "was full): the trace is incomplete",
		       (unsigned long long)recorder_dropped(r->sandbox.files, NULL));
	if (recorder_lost(r->sandbox.files))
		fprintf(stderr, "warden trace: warning: the file-access recorder died or sent "
				"malformed results: the trace has no file accesses\n");
	if (r->sandbox.files && recorder_unreadable(r->sandbox.files))
		wd_say(stderr,
		       "warden trace: warning: %llu paths could not be read from the program: "
		       "the trace is incomplete",
		       (unsigned long long)recorder_unreadable(r->sandbox.files));
	if (!rt->init || !rt->quiet)
		wd_say(stderr, "warden: trace written to %s", rt->path);
	/* the hint is `warden trace`'s: `warden init -- COMMAND` goes on to the policy */
	if (!rt->quiet && !rt->init)
		wd_say(stderr, "warden trace: next: warden init --from %s -o policy.yaml",
		       rt->path);
}

/*
 * Did the program start? A sandbox that failed before the exec (bwrap's "Can't chdir", a
 * mount it could not make) exits non-zero with no program run: the recorder saw no exec,
 * though the seccomp filter is in place from the program's own execve on (the command's
 * exec is the first the trace records). A trace from it would be empty and the policy from it
 * a lie. A recorder that died, or none, cannot tell: then the program is taken to have run.
 */
static bool program_started(const struct run *r, const struct trace *t, int status)
{
	if (!status || !r->sandbox.files || recorder_lost(r->sandbox.files))
		return true;
	for (size_t i = 0; i < t->nfiles; i++)
		if (t->files[i].op == TRACE_EXEC)
			return true;
	return false;
}

static int learn_finish(struct run *r, int status)
{
	struct run_trace *rt = r->trace;
	struct wd_buf b = WD_BUF_INIT;
	struct trace_write_info wi = {0};
	int ret;

	if (!rt->t.ncommand) {
		fprintf(stderr, "warden trace: nothing to write: the trace was not collected\n");
		return RUN_EXIT_WARDEN;
	}
	if (!program_started(r, &rt->t, status)) {
		rt->not_started = true;
		wd_say(stderr,
		       "warden trace: the program did not start (the sandbox exited with status "
		       "%d before it ran it; the message above says why): no trace written",
		       status);
		return RUN_EXIT_WARDEN;
	}
	ret = trace_format(&rt->t, rt->started, &b, &wi);
	if (ret) {
		wd_say(stderr, "warden trace: the trace: %s", strerror(-ret));
		wd_buf_free(&b);
		return RUN_EXIT_WARDEN;
	}
	ret = write_trace(r, &b);
	wd_buf_free(&b);
	if (ret)
		return RUN_EXIT_WARDEN;
	summary(r, rt, status, &wi);
	return status;
}

/* ------------------------------------------------------------ the trace's run */

static const struct run_learn learn_trace = {
    .policy = run_learn_policy,
    .sample = learn_sample,
    .collect = learn_collect,
    .finish = learn_finish,
};

int run_trace_main(const struct run_opts *o, struct run_trace *rt, int argc, char **argv)
{
	struct timespec now;
	int status;

	outdir_init(&rt->dir);
	clock_gettime(CLOCK_REALTIME, &now);
	rt->started_t = now.tv_sec;
	now.tv_nsec = 0;
	if (wd_rfc3339(&now, rt->started, sizeof(rt->started)))
		rt->started[0] = '\0';
	status = run_main(o, argc, argv, &learn_trace, rt);
	/* not found or not executable (said): refused before anything ran, no trace */
	if (!rt->path[0] && (status == RUN_EXIT_NOTFOUND || status == RUN_EXIT_NOEXEC)) {
		rt->not_started = true;
		fprintf(stderr, "warden trace: the program did not start: no trace written\n");
	}
	outdir_close(&rt->dir);
	trace_free(&rt->t);
	for (size_t i = 0; i < rt->nsock_masks; i++)
		free(rt->sock_masks[i]);
	free(rt->sock_masks);
	rt->sock_masks = NULL;
	rt->nsock_masks = 0;
	return status;
}

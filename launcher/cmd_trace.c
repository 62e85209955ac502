/* cmd_trace.c - `warden trace [-p BASE] [-o TRACE] [-e NAME]... -- COMMAND`: a run in a learning
 * sandbox whose accesses become a trace (docs/trace.md), and the summary of what it did.
 *
 * Theory of operation (run_trace.h has the stages). A trace is never unsandboxed: it is a
 * `warden run` (run_main()) of COMMAND with three changes. The sandbox is a learning one: the
 * host's `/` read-only instead of the runtime base and the grants, the current folder
 * writable (unless it is the home folder or holds it, or the policy validator refuses it as a
 * write grant), every credential store and Warden's own folders masked, the sandbox's own
 * /dev, /proc, /tmp, and no /sys or service sockets. The gateway is in learn mode: every
 * name is let through and recorded, the SSRF classes still refused. The file-access recorder
 * records every access of the whole process tree. BASE (-p) gives the environment, the limits
 * and sandbox.allow; its grants and rules are not used. After the program ended, what the
 * gateway learned, what the recorder kept and the peaks measured become the trace (written by
 * trace_write.c), and a summary on stderr says what it holds.
 *
 * The home folder would be a scratch overlay (writes thrown away), but bubblewrap 0.8 has no
 * --tmp-overlay: it is read-only, and the summary says so.
 */
#include "launcher/cli.h"
#include "run/internal.h"
#include "run/learn.h"
#include "trace/write.h"
#include "sandbox/sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The recorder's mode for a trace: it carries every path call out itself (docs/files.md). */
#define RUN_TRACE_FILES POLICY_FILES_TRACE

/* How far the learning sandbox looks for the host's sockets under /run to mask them. */
#define TRACE_SOCK_DEPTH 5
#define TRACE_SOCK_BUDGET 20000

/* At most this many names are listed by the summary (the trace has all). */
#define SUMMARY_NAMES 12

static void usage(FILE *f)
{
	fprintf(f,
		"usage: warden trace [-p BASE] [-o TRACE] [-e NAME]... [--allow-socket PATH]...\n"
		"                    [--mode MODE] [-q] [--audit-log PATH] [--timeout SECONDS]\n"
		"                    -- COMMAND ARGS...\n"
		"\n"
		"Run COMMAND in a learning sandbox and record what it did: the host visible\n"
		"read-only (credential stores and Warden's own folders hidden), the current\n"
		"folder writable, the home folder read-only, no unix socket of the host\n"
		"reachable but those named with --allow-socket; its own network namespace\n"
		"whose gateway lets every name through (the SSRF classes stay refused) and\n"
		"records it. The trace (docs/trace.md) goes to\n"
		"${XDG_STATE_HOME:-~/.local/state}/warden/traces/TIME-NAME.jsonl, or -o TRACE;\n"
		"`warden init --from TRACE` makes the policy from it.\n"
		"\n"
		"  -p, --policy BASE     a policy whose env, limits and sandbox.allow apply (its\n"
		"                        grants and network rules are not needed)\n"
		"  -o, --output TRACE    write the trace there (replaced if it exists; never\n"
		"                        through a symbolic link)\n"
		"  -e, --env NAME        pass the variable NAME to the program (recorded)\n"
		"      --allow-socket PATH  let the program connect to the unix socket PATH (a\n"
		"                        service it needs: the policy will grant it, saying so);\n"
		"                        every other one is refused and recorded as refused\n"
		"      --mode MODE       root, rootless or daemon, as for warden run\n"
		"      --audit-log PATH  the audit log of the run\n"
		"      --timeout SEC     wall-clock limit\n"
		"  -q, --quiet           no progress messages; the summary is its warnings and\n"
		"                        the trace's path\n"
		"\n"
		"Exit: the program's status; 125 Warden failed (also when the trace could not be\n"
		"written); 2 usage error.\n");
}

/* ------------------------------------------------------------ the learning sandbox's policy */

/* The home folder of the person tracing: under sudo the user's, else $HOME, else passwd's. */
static void person_home(const struct run *r, char *out, size_t size)
{
	const char *h = NULL;
	struct passwd *pw;

	if (getuid() == 0 && r->caller_uid != 0) {
		pw = getpwuid(r->caller_uid);
		h = pw ? pw->pw_dir : NULL;
	} else {
		h = getenv("HOME");
		if (!h || h[0] != '/') {
			pw = getpwuid(getuid());
			h = pw ? pw->pw_dir : NULL;
		}
	}
	snprintf(out, size, "%s", h && h[0] == '/' ? h : "");
}

/* @path, when it exists, added to the policy's masks by its real path (once). Return: 0 or
 * -ENOMEM. */
static int mask_add(struct wd_policy *p, const char *path)
{
	char real[PATH_MAX];
	struct stat st;
	char **m;

	if (!path || path[0] != '/' || lstat(path, &st) < 0 || !realpath(path, real))
		return 0;
	for (size_t i = 0; i < p->nmask; i++)
		if (!strcmp(p->mask[i], real))
			return 0;
	m = realloc(p->mask, (p->nmask + 1) * sizeof(*m));
	if (!m)
		return -ENOMEM;
	p->mask = m;
	m[p->nmask] = strdup(real);
	if (!m[p->nmask])
		return -ENOMEM;
	p->nmask++;
	return 0;
}

/* "~/x" of @home, else @store itself */
static void store_path(const char *store, const char *home, char *out, size_t size)
{
	if (store[0] == '~')
		snprintf(out, size, "%s%s", home[0] ? home : "/nonexistent", store + 1);
	else
		snprintf(out, size, "%s", store);
}

/* Whether the person named @path with --allow-socket (it is not masked then). */
static bool named_socket(const struct run_trace *t, const char *path)
{
	for (size_t i = 0; i < t->nsockets; i++)
		if (!strcmp(t->sockets[i], path))
			return true;
	return false;
}

/* Sockets under @dir (not following links, at most @depth folders down, @budget entries
 * looked at), each masked: a program must not reach a host service through the read-only
 * view (bwrap_learn_own covers the usual folders; this the rest of /run). Return: 0 or
 * -ENOMEM. */
/* NOLINTNEXTLINE(misc-no-recursion): at most TRACE_SOCK_DEPTH deep */
static int mask_sockets(struct wd_policy *p, const struct run_trace *t, const char *dir, int depth,
			unsigned *budget)
{
	char path[PATH_MAX];
	struct dirent *de;
	struct stat st;
	DIR *d;
	int ret = 0;

	if (depth < 0 || !*budget)
		return 0;
	d = opendir(dir);
	if (!d)
		return 0;
	while (!ret && *budget && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		(*budget)--;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path) ||
		    lstat(path, &st) < 0)
			continue;
		if (S_ISSOCK(st.st_mode) && !named_socket(t, path))
			ret = mask_add(p, path);
		else if (S_ISDIR(st.st_mode))
			ret = mask_sockets(p, t, path, depth - 1, budget);
	}
	closedir(d);
	return ret;
}

/* Every credential store (of @home), Warden's own folders and files, the sockets of /run.
 * Return: 0 or -ENOMEM. */
static int learn_masks(struct run *r, const struct cli_protect *pr)
{
	struct wd_policy *p = r->pol;
	const char *const *cs;
	char path[PATH_MAX + 64];
	size_t n;
	int ret = 0;

	cs = policy_credential_stores(&n);
	for (size_t i = 0; !ret && i < n; i++) {
		store_path(cs[i], r->trace->home, path, sizeof(path));
		ret = mask_add(p, path);
	}
	/* the audit logs, /run/warden, a rootless run's state, the daemon's log folder */
	for (size_t i = 0; !ret && i < pr->n; i++)
		ret = mask_add(p, pr->v[i].path);
	/* Warden's state folder: the audit log, the traces, the approvals (the launcher's own
	 * and, under sudo, the user's) */
	if (!ret && !trace_default_dir(path, sizeof(path))) {
		char *slash = strrchr(path, '/');

		if (slash)
			*slash = '\0';
		ret = mask_add(p, path);
	}
	if (!ret && r->trace->home[0]) {
		snprintf(path, sizeof(path), "%s/.local/state/warden", r->trace->home);
		ret = mask_add(p, path);
	}
	if (!ret) {
		unsigned budget = TRACE_SOCK_BUDGET;

		ret = mask_sockets(p, r->trace, "/run", TRACE_SOCK_DEPTH, &budget);
	}
	return ret;
}

/* Whether the program's user may write in @st's folder (root mode: by its mode bits, for the
 * user and its groups; an ACL is not read, so such a folder stays read-only). */
static bool user_may_write(const struct run *r, const char *path)
{
	struct stat st;

	if (geteuid() != 0)
		return !access(path, W_OK | X_OK);
	if (stat(path, &st) < 0)
		return false;
	if (st.st_uid == r->uid)
		return (st.st_mode & 0300) == 0300;
	if (st.st_gid == r->gid)
		return (st.st_mode & 0030) == 0030;
	for (int i = 0; i < r->ngroups; i++)
		if (st.st_gid == r->groups[i])
			return (st.st_mode & 0030) == 0030;
	return (st.st_mode & 0003) == 0003;
}

/* The current folder as the one write grant, as the validator would judge it in a policy
 * (on or in a credential store, the runtime base or a protected folder, holding a protected
 * folder: refused). Return: 0 (r->trace->cwd_rw says whether), or -ENOMEM. */
static int learn_cwd(struct run *r, const struct cli_protect *pr)
{
	struct run_trace *t = r->trace;
	struct wd_buf yaml = WD_BUF_INIT;
	struct policy_ctx ctx = {
	    .home = t->home[0] ? t->home : NULL, .protect = pr->v, .nprotect = pr->n};
	struct policy_diags d;
	struct wd_policy *p = NULL;
	int ret;

	t->cwd_rw = false;
	if (t->home[0] && run_path_within(t->home, t->cwd)) {
		snprintf(
		    t->why_ro, sizeof(t->why_ro),
		    "it is (or holds) the home folder %.400s; cd into a project folder to trace "
		    "writes",
		    t->home);
		return 0;
	}
	if (!user_may_write(r, t->cwd)) {
		snprintf(t->why_ro, sizeof(t->why_ro), "%s may not write there",
			 r->user ? r->user : "the program's user");
		return 0;
	}
	for (const char *c = t->cwd; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f) {
			snprintf(t->why_ro, sizeof(t->why_ro), "its path holds control characters");
			return 0;
		}
	ret = wd_buf_puts(&yaml, "version: 1\nfilesystem:\n  write:\n    - \"");
	for (const char *c = t->cwd; !ret && *c; c++)
		ret = *c == '"' || *c == '\\' ? wd_buf_printf(&yaml, "\\%c", *c)
					      : wd_buf_append(&yaml, c, 1);
	if (!ret)
		ret = wd_buf_puts(&yaml, "\"\n");
	if (ret) {
		wd_buf_free(&yaml);
		return -ENOMEM;
	}
	policy_diags_init(&d);
	ret = policy_parse(yaml.data, yaml.len, "(warden trace: the current folder)", &p, &d);
	if (!ret)
		ret = policy_validate(p, &ctx, &d);
	if (ret != -ENOMEM && (ret || !p->nwrite || !p->write[0].real)) {
		const char *msg = "the policy validator refuses it";

		for (size_t i = 0; i < d.n; i++)
			if (d.v[i].level == POLICY_DIAG_ERROR) {
				msg = d.v[i].msg;
				break;
			}
		snprintf(t->why_ro, sizeof(t->why_ro), "%.600s", msg);
		ret = 0;
	} else if (!ret) {
		/* the grant moves into the run's policy, with the masks it needs */
		r->pol->write = p->write;
		r->pol->nwrite = p->nwrite;
		p->write = NULL;
		p->nwrite = 0;
		for (size_t i = 0; !ret && i < p->nmask; i++)
			ret = mask_add(r->pol, p->mask[i]);
		t->cwd_rw = true;
	}
	policy_free(p);
	policy_diags_free(&d);
	wd_buf_free(&yaml);
	return ret;
}

/* @name into env.allow (once). Return: 0 or -ENOMEM. */
static int env_allow_add(struct wd_policy *p, const char *name)
{
	char **v;

	for (size_t i = 0; i < p->nenv_allow; i++)
		if (!strcmp(p->env_allow[i], name))
			return 0;
	v = realloc(p->env_allow, (p->nenv_allow + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	p->env_allow = v;
	v[p->nenv_allow] = strdup(name);
	if (!v[p->nenv_allow])
		return -ENOMEM;
	p->nenv_allow++;
	return 0;
}

static void grants_free(struct policy_grant *g, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(g[i].path);
		free(g[i].real);
	}
	free(g);
}

/*
 * The folder the trace goes to, opened and kept before the program runs (outdir.h): -o's, or
 * the default one (its missing folders made). Whom as: root tracing for a sudo user opens it
 * as the user (it must be a folder the user may write; the file will be theirs), except the
 * default folder outside the user's home folder (sudo's HOME, root's); anyone else as
 * themselves. Return: 0, or 125 (said).
 */
static int trace_dest_open(struct run *r)
{
	struct run_trace *rt = r->trace;
	struct outdir_who who = {0};
	char dir[PATH_MAX];
	const char *slash;
	int ret;

	if (rt->out) {
		slash = strrchr(rt->out, '/');
		if (strlen(slash + 1) > NAME_MAX)
			return run_fail(r, "trace", NULL, "-o %s: %s", rt->out,
					strerror(ENAMETOOLONG));
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - rt->out), rt->out);
		if (!dir[0])
			snprintf(dir, sizeof(dir), "/");
	} else {
		ret = trace_default_dir(dir, sizeof(dir));
		if (ret)
			return run_fail(r, "trace", "use -o TRACE", "the traces folder: %s",
					strerror(-ret));
	}
	if (geteuid() == 0 && r->caller_uid != 0 &&
	    (rt->out || (rt->home[0] && run_path_within(dir, rt->home)))) {
		who.drop = true;
		who.uid = r->caller_uid;
		who.gid = r->gid;
		who.ngroups = r->ngroups < OUTDIR_GROUPS_MAX ? r->ngroups : OUTDIR_GROUPS_MAX;
		memcpy(who.groups, r->groups, (size_t)who.ngroups * sizeof(gid_t));
	}
	ret = outdir_open(&rt->dir, dir, !rt->out, &who);
	if (ret)
		return run_fail(r, "trace",
				rt->out ? "name a file in a folder you may write" : "use -o TRACE",
				"cannot write the trace in %s: %s%s", dir,
				ret == -ELOOP ? "a symbolic link is on the way" : strerror(-ret),
				who.drop ? " (the trace is written as the invoking user)" : "");
	return 0;
}

int run_trace_policy(struct run *r)
{
	struct run_trace *t = r->trace;
	struct wd_policy *p = r->pol;
	struct cli_protect pr;
	char cwd[PATH_MAX];
	int ret;

	if (!t)
		return 0;
	person_home(r, t->home, sizeof(t->home));
	if (!getcwd(cwd, sizeof(cwd)) || !realpath(cwd, t->cwd))
		return run_fail(r, "policy", "run warden trace from a folder that exists",
				"the current folder: %s", strerror(errno));
	/* BASE's grants are not needed: the host is visible read-only */
	grants_free(p->read, p->nread);
	grants_free(p->write, p->nwrite);
	p->read = p->write = NULL;
	p->nread = p->nwrite = 0;
	for (size_t i = 0; i < p->nmask; i++)
		free(p->mask[i]);
	free(p->mask);
	p->mask = NULL;
	p->nmask = 0;
	/* before anything runs, and before the masks: a default folder made now is hidden */
	ret = trace_dest_open(r);
	if (ret)
		return ret;
	cli_protect_init(&pr, cli_audit_path(r->o.audit), r->gwc.audit_path);
	ret = learn_cwd(r, &pr);
	if (!ret)
		ret = learn_masks(r, &pr);
	for (size_t i = 0; !ret && i < t->nenv; i++)
		ret = env_allow_add(p, t->env[i]);
	if (ret)
		return run_fail(r, "policy", NULL, "the learning sandbox: out of memory");
	p->audit_files = RUN_TRACE_FILES;
	/* the gateway lets every name through and records it (the SSRF classes stay refused) */
	r->learn = true;
	if (!t->cwd_rw)
		run_note(r, "trace: the current folder %s stays read-only: %s", t->cwd, t->why_ro);
	run_note(r,
		 "trace: a learning sandbox: the host read-only, %s%s, the home folder "
		 "read-only; %zu paths hidden",
		 t->cwd, t->cwd_rw ? " writable" : " read-only", p->nmask);
	return 0;
}

/* ------------------------------------------------------------ measuring */

void run_trace_sample(struct run *r, int pid)
{
	struct run_trace *t = r->trace;
	uint64_t n = limits_pids_now(&r->lim, pid), kb = limits_rss_kb(pid);

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

	if (policy_audit_files(r->pol) == POLICY_FILES_TRACE) {
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
	size_t n = recorder_count(r->files);

	t->files = calloc(n ? n : 1, sizeof(*t->files));
	if (!t->files)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct recorder_entry *e = recorder_get(r->files, i);
		struct trace_file_ev *f = &t->files[t->nfiles];
		bool refused = policy_audit_files(r->pol) == POLICY_FILES_TRACE &&
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
	const struct wd_policy *p = r->pol;

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

void run_trace_collect(struct run *r, const struct run_outcome *o)
{
	struct run_trace *rt = r->trace;
	struct trace *t = &rt->t;
	json_t *learned = NULL;
	bool mem, pids;
	uint64_t peak = 0;
	int ret;

	(void)o;
	t->wall_ms = (wd_mono_ns() - r->t0) / 1000000u;
	if (!t->wall_ms)
		t->wall_ms = 1;
	limits_breaches(&r->lim, &mem, &pids, &peak);
	t->peak_memory_kib = peak ? peak / 1024 : rt->peak_rss_kib;
	t->peak_pids = rt->peak_pids;
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
	if (!ret && r->registered && !run_gw_learned(r, &learned))
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

		store_path(cs[i], rt->home, store, sizeof(store));
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
	if (r->pol->nenv_set) {
		wd_buf_puts(&line, "; set by the base policy (copy its env.set):");
		for (size_t i = 0; i < r->pol->nenv_set; i++)
			wd_buf_printf(&line, " %s", r->pol->env_set[i].name);
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
	if (r->files && recorder_dropped(r->files, NULL))
		wd_say(stderr,
		       "warden trace: warning: %llu accesses were not kept (the recorder's table "
		       "was full): the trace is incomplete",
		       (unsigned long long)recorder_dropped(r->files, NULL));
	if (recorder_lost(r->files))
		fprintf(stderr, "warden trace: warning: the file-access recorder died or sent "
				"malformed results: the trace has no file accesses\n");
	if (r->files && recorder_unreadable(r->files))
		wd_say(stderr,
		       "warden trace: warning: %llu paths could not be read from the program: "
		       "the trace is incomplete",
		       (unsigned long long)recorder_unreadable(r->files));
	wd_say(stderr, "warden: trace written to %s", rt->path);
	if (!rt->quiet)
		wd_say(stderr, "warden trace: next: warden init --from %s -o policy.yaml",
		       rt->path);
}

int run_trace_finish(struct run *r, int status)
{
	struct run_trace *rt = r->trace;
	struct wd_buf b = WD_BUF_INIT;
	struct trace_write_info wi = {0};
	int ret;

	if (!rt->t.ncommand) {
		fprintf(stderr, "warden trace: nothing to write: the trace was not collected\n");
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

/* ------------------------------------------------------------ the verb */

/* --allow-socket @arg as the recorder compares it: absolute, without symbolic links (its
 * real path; one not there yet: its folder's real path and its name). Return: a new string,
 * or NULL (its folder is not there, or no memory). */
static char *socket_path(const char *arg)
{
	char real[PATH_MAX], copy[PATH_MAX], *slash, *out;
	const char *name;

	if (!arg[0] || snprintf(copy, sizeof(copy), "%s", arg) >= (int)sizeof(copy))
		return NULL;
	if (realpath(copy, real))
		return strdup(real);
	if (errno != ENOENT)
		return NULL;
	slash = strrchr(copy, '/');
	name = slash ? slash + 1 : copy;
	if (slash)
		*slash = '\0';
	if (!name[0] || !strcmp(name, ".") || !strcmp(name, "..") ||
	    !realpath(slash ? (copy[0] ? copy : "/") : ".", real))
		return NULL;
	if (asprintf(&out, "%s%s%s", real, strcmp(real, "/") ? "/" : "", name) < 0)
		return NULL;
	return out;
}

int trace_command(int argc, char **argv, char *ret_path, size_t size)
{
	static const struct option opts[] = {
	    {"policy", required_argument, NULL, 'p'},
	    {"output", required_argument, NULL, 'o'},
	    {"env", required_argument, NULL, 'e'},
	    {"allow-socket", required_argument, NULL, 'S'},
	    {"mode", required_argument, NULL, 'm'},
	    {"audit-log", required_argument, NULL, 'a'},
	    {"timeout", required_argument, NULL, 't'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct run_trace *rt = calloc(1, sizeof(*rt));
	char **env = calloc((size_t)argc + 1, sizeof(char *));
	char **rargv = calloc((size_t)argc * 2 + 4, sizeof(char *));
	char **socks = calloc((size_t)argc + 1, sizeof(char *));
	char out_abs[PATH_MAX];
	struct timespec now;
	size_t nenv = 0;
	int rargc = 0, c, status = WD_EXIT_USAGE;

	if (ret_path && size)
		ret_path[0] = '\0';
	if (!rt || !env || !rargv || !socks) {
		fprintf(stderr, "warden trace: out of memory\n");
		status = RUN_EXIT_WARDEN;
		goto out;
	}
	outdir_init(&rt->dir);
	rargv[rargc++] = "trace";
	optind = 1;
	while ((c = getopt_long(argc, argv, "+p:o:e:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			rargv[rargc++] = "--policy";
			rargv[rargc++] = optarg;
			break;
		case 'o':
			rt->out = optarg;
			break;
		case 'e':
			if (!policy_env_name_ok(optarg)) {
				wd_say(
				    stderr,
				    "warden trace: -e %s: a variable's name (a letter or _, then "
				    "letters, digits and _)",
				    optarg);
				goto out;
			}
			env[nenv++] = optarg;
			break;
		case 'S':
			socks[rt->nsockets] = socket_path(optarg);
			if (!socks[rt->nsockets]) {
				wd_say(
				    stderr,
				    "warden trace: --allow-socket %s: not a path in a folder that "
				    "exists",
				    optarg);
				goto out;
			}
			rt->nsockets++;
			break;
		case 'm':
			rargv[rargc++] = "--mode";
			rargv[rargc++] = optarg;
			break;
		case 'a':
			rargv[rargc++] = "--audit-log";
			rargv[rargc++] = optarg;
			break;
		case 't':
			rargv[rargc++] = "--timeout";
			rargv[rargc++] = optarg;
			break;
		case 'q':
			rargv[rargc++] = "--quiet";
			rt->quiet = true;
			break;
		case 'h':
			usage(stdout);
			status = WD_EXIT_OK;
			goto out;
		default:
			usage(stderr);
			goto out;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "warden trace: no command: give one after `--`\n");
		usage(stderr);
		goto out;
	}
	if (rt->out) {
		/* the folder must be there before anything runs (run_trace_policy() opens it and
		 * keeps it); the file is made at the end */
		char copy[PATH_MAX], *slash;

		if (snprintf(copy, sizeof(copy), "%s", rt->out) >= (int)sizeof(copy)) {
			wd_say(stderr, "warden trace: -o %s: too long", rt->out);
			goto out;
		}
		slash = strrchr(copy, '/');
		if (slash)
			*slash = '\0';
		if (!realpath(slash ? (copy[0] ? copy : "/") : ".", out_abs) ||
		    snprintf(out_abs + strlen(out_abs), sizeof(out_abs) - strlen(out_abs), "/%s",
			     slash ? slash + 1 : copy) >=
			(int)(sizeof(out_abs) - strlen(out_abs)) ||
		    (slash && !slash[1])) {
			wd_say(stderr, "warden trace: -o %s: not a file in a folder that exists",
			       rt->out);
			goto out;
		}
		rt->out = out_abs;
	}
	rargv[rargc++] = "--";
	for (int i = optind; i < argc; i++)
		rargv[rargc++] = argv[i];
	rargv[rargc] = NULL;
	rt->env = env;
	rt->nenv = nenv;
	rt->sockets = socks;
	clock_gettime(CLOCK_REALTIME, &now);
	rt->started_t = now.tv_sec;
	now.tv_nsec = 0;
	if (wd_rfc3339(&now, rt->started, sizeof(rt->started)))
		rt->started[0] = '\0';
	status = run_main(rargc, rargv, rt);
	if (ret_path && size)
		snprintf(ret_path, size, "%s", rt->path);
out:
	if (rt) {
		outdir_close(&rt->dir);
		trace_free(&rt->t);
	}
	free(rt);
	free(env);
	free(rargv);
	for (size_t i = 0; socks && socks[i]; i++)
		free(socks[i]);
	free(socks);
	return status;
}

int cmd_trace(int argc, char **argv)
{
	return trace_command(argc, argv, NULL, 0);
}

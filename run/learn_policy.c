/* learn_policy.c - a trace's learn hook after the policy stage (run_learn_policy()): BASE's
 * policy becomes the learning sandbox's. No read grants (the host is visible read-only); the
 * current folder the one write grant, unless it is the home folder or holds it, or the policy
 * validator refuses it as a write grant; every credential store, Warden's own folders and the
 * host's sockets under /run masked (but those named with --allow-socket); BASE's env and limits
 * kept, the -e names added to env.allow; the recorder in trace mode; the gateway in learn mode.
 * Before all that, the folder the trace goes to is opened and kept (outdir.h).
 */
#include "run/internal.h"
#include "run/learn.h"
#include "trace/write.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The recorder's mode for a trace: it carries every path call out itself (docs/files.md). */
#define RUN_TRACE_FILES POLICY_FILES_TRACE

/* How far the learning sandbox looks for the host's sockets under /run to mask them. */
#define TRACE_SOCK_DEPTH 5
#define TRACE_SOCK_BUDGET 20000

/* The home folder of the person tracing: under sudo the user's, else $HOME, else passwd's. */
static void person_home(const struct run *r, char *out, size_t size)
{
	const char *h = NULL;
	struct passwd *pw;

	if (getuid() == 0 && r->input.caller_uid != 0) {
		pw = getpwuid(r->input.caller_uid);
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

void run_learn_store_path(const char *store, const char *home, char *out, size_t size)
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

/* @path (a socket, already a real path: mask_sockets() follows no link) added to the trace's
 * socket masks. Return: 0 or -ENOMEM. */
static int sock_mask_add(struct run_trace *t, const char *path)
{
	char **m = realloc(t->sock_masks, (t->nsock_masks + 1) * sizeof(*m));

	if (!m)
		return -ENOMEM;
	t->sock_masks = m;
	m[t->nsock_masks] = strdup(path);
	if (!m[t->nsock_masks])
		return -ENOMEM;
	t->nsock_masks++;
	return 0;
}

/* Sockets under @dir (not following links, at most @depth folders down, @budget entries
 * looked at), each to be masked: a program must not reach a host service through the
 * read-only view (bwrap_learn_own covers the usual folders; this the rest of /run). They are
 * not the policy's masks, which bwrap makes and must find in place: /run's sockets come and
 * go, and one removed before the sandbox starts would stop it (the sandbox's first process
 * covers those still there: run_child_plan .premask). Return: 0 or -ENOMEM. */
/* NOLINTNEXTLINE(misc-no-recursion): at most TRACE_SOCK_DEPTH deep */
static int mask_sockets(struct run_trace *t, const char *dir, int depth, unsigned *budget)
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
			ret = sock_mask_add(t, path);
		else if (S_ISDIR(st.st_mode))
			ret = mask_sockets(t, path, depth - 1, budget);
	}
	closedir(d);
	return ret;
}

/* Every credential store (of @home), Warden's own folders and files, the sockets of /run.
 * Return: 0 or -ENOMEM. */
static int learn_masks(struct run *r, const struct run_protect *pr)
{
	struct wd_policy *p = r->input.pol;
	const char *const *cs;
	char path[PATH_MAX + 64];
	size_t n;
	int ret = 0;

	cs = policy_credential_stores(&n);
	for (size_t i = 0; !ret && i < n; i++) {
		run_learn_store_path(cs[i], r->trace->home, path, sizeof(path));
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

		ret = mask_sockets(r->trace, "/run", TRACE_SOCK_DEPTH, &budget);
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
	if (st.st_uid == r->input.uid)
		return (st.st_mode & 0300) == 0300;
	if (st.st_gid == r->input.gid)
		return (st.st_mode & 0030) == 0030;
	for (int i = 0; i < r->input.ngroups; i++)
		if (st.st_gid == r->input.groups[i])
			return (st.st_mode & 0030) == 0030;
	return (st.st_mode & 0003) == 0003;
}

/* The current folder as the one write grant, as the validator would judge it in a policy
 * (on or in a credential store, the runtime base or a protected folder, holding a protected
 * folder: refused). Return: 0 (r->trace->cwd_rw says whether), or -ENOMEM. */
static int learn_cwd(struct run *r, const struct run_protect *pr)
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
			 r->input.user ? r->input.user : "the program's user");
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
		r->input.pol->write = p->write;
		r->input.pol->nwrite = p->nwrite;
		p->write = NULL;
		p->nwrite = 0;
		for (size_t i = 0; !ret && i < p->nmask; i++)
			ret = mask_add(r->input.pol, p->mask[i]);
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
	if (geteuid() == 0 && r->input.caller_uid != 0 &&
	    (rt->out || (rt->home[0] && run_path_within(dir, rt->home)))) {
		who.drop = true;
		who.uid = r->input.caller_uid;
		who.gid = r->input.gid;
		who.ngroups =
		    r->input.ngroups < OUTDIR_GROUPS_MAX ? r->input.ngroups : OUTDIR_GROUPS_MAX;
		memcpy(who.groups, r->input.groups, (size_t)who.ngroups * sizeof(gid_t));
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

int run_learn_policy(struct run *r)
{
	struct run_trace *t = r->trace;
	struct wd_policy *p = r->input.pol;
	struct run_protect pr;
	char cwd[PATH_MAX];
	int ret;

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
	run_protect_init(&pr, run_audit_path(r->o.audit), r->input.gwc.audit_path);
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
		 t->cwd, t->cwd_rw ? " writable" : " read-only", p->nmask + t->nsock_masks);
	return 0;
}

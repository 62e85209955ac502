/* paths.c - where a run's own things live, and what no policy grant may expose: the audit
 * log's path (the verbs' default too), the caller's own run state folder (rootless and daemon
 * modes), the audit log's size cap, and the protected paths a run's or a `policy check`'s
 * grants are validated against. Portable: the macOS launcher builds it too.
 */
#include "run/run.h"
#include "audit/audit.h"
#include "common/common.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* @d: a folder of the caller's that nobody else may write, made (0700) when missing. */
static int private_dir(const char *d, struct wd_err *err)
{
	struct stat st;

	if (mkdir(d, 0700) < 0 && errno != EEXIST)
		return wd_err_set(err, -errno, "cannot create %s: %s", d, strerror(errno));
	if (lstat(d, &st) < 0)
		return wd_err_set(err, -errno, "%s: %s", d, strerror(errno));
	if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 022))
		return wd_err_set(err, -EPERM,
				  "%s is not a folder of uid %u's that only it may write: remove "
				  "it (someone may have planted it) and run again",
				  d, (unsigned)getuid());
	return 0;
}

int run_rootless_dir_path(char *out, size_t size)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	struct stat st;
	int ret;

	if (xdg && xdg[0] == '/' && !lstat(xdg, &st) && S_ISDIR(st.st_mode) &&
	    st.st_uid == getuid() && !(st.st_mode & 077))
		ret = snprintf(out, size, "%s/warden", xdg);
	else
		ret = snprintf(out, size, "/tmp/warden-%u", (unsigned)getuid());
	return ret < 0 || (size_t)ret >= size ? -ENAMETOOLONG : 0;
}

int run_rootless_dir(char *out, size_t size, struct wd_err *err)
{
	char runs[PATH_MAX];
	int ret;

	if (run_rootless_dir_path(out, size))
		return wd_err_set(err, -ENAMETOOLONG, "the run state folder's path is too long");
	ret = private_dir(out, err);
	if (ret)
		return ret;
	if (snprintf(runs, sizeof(runs), "%s/runs", out) >= (int)sizeof(runs))
		return wd_err_set(err, -ENAMETOOLONG, "the run state folder's path is too long");
	return private_dir(runs, err);
}

#ifdef _WIN32
/* %LOCALAPPDATA%\warden\@name into @path (@size bytes), the folder made when missing; NULL
 * when there is no %LOCALAPPDATA% or the path does not fit */
static const char *state_file(const char *name, char *path, size_t size)
{
	const char *app = getenv("LOCALAPPDATA");
	int n;

	if (!app || !*app || snprintf(path, size, "%s\\warden", app) >= (int)size)
		return NULL;
	CreateDirectoryA(path, NULL);
	n = snprintf(path, size, "%s\\warden\\%s", app, name);
	return n > 0 && (size_t)n < size ? path : NULL;
}
#else
/* ${XDG_STATE_HOME:-$HOME/.local/state}/warden/@name into @path (@size bytes); NULL when there is
 * no home folder or the path does not fit */
static const char *state_file(const char *name, char *path, size_t size)
{
	const char *state = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	int n;

	if (state && *state == '/') {
		n = snprintf(path, size, "%s/warden/%s", state, name);
		return n > 0 && (size_t)n < size ? path : NULL;
	}
	if (!home || *home != '/') {
		struct passwd *pw = getpwuid(getuid());

		home = pw ? pw->pw_dir : NULL;
	}
	if (!home)
		return NULL;
	n = snprintf(path, size, "%s/.local/state/warden/%s", home, name);
	return n > 0 && (size_t)n < size ? path : NULL;
}
#endif

const char *run_audit_path(const char *override)
{
	static char path[PATH_MAX];
	const char *env = getenv("WARDEN_AUDIT_LOG");

	if (override && *override)
		return override;
	if (env && *env)
		return env;
	return state_file("audit.jsonl", path, sizeof(path));
}

const char *run_audit_key_path(void)
{
	static char path[PATH_MAX];
	const char *env = getenv("WARDEN_AUDIT_KEY");

	if (env && *env)
		return env;
	return state_file("audit-key.pem", path, sizeof(path));
}

int run_audit_key_open(const char *path, struct audit_key **ret_key, struct wd_err *err,
		       const char **fix)
{
	int ret;

	*fix = "set WARDEN_AUDIT_KEY to a file for the signing key";
	if (!path)
		return wd_err_set(err, -ENOENT,
				  "no place for the audit signing key (no home folder)");
	*fix = "fix or remove the key file (a new one is made)";
	ret = audit_key_load(path, true, ret_key, err);
	if (ret == 0 && !audit_key_can_sign(*ret_key)) {
		audit_key_free(*ret_key);
		*ret_key = NULL;
		ret = wd_err_set(err, -EINVAL,
				 "%s holds a public key: run records cannot be signed", path);
	}
	return ret;
}

/* @path made absolute, appended to @pr as @what */
static void protect_add(struct run_protect *pr, const char *path, const char *what, bool folder)
{
	char cwd[PATH_MAX];
	int n;

	if (!path || !*path || pr->n >= RUN_PROTECT_MAX)
		return;
	if (path[0] == '/')
		n = snprintf(pr->path[pr->n], sizeof(pr->path[pr->n]), "%s", path);
	else if (getcwd(cwd, sizeof(cwd)))
		n = snprintf(pr->path[pr->n], sizeof(pr->path[pr->n]), "%s/%s", cwd, path);
	else
		return;
	if (n < 0 || (size_t)n >= sizeof(pr->path[pr->n]))
		return;
	snprintf(pr->what[pr->n], sizeof(pr->what[pr->n]), "%s %s", what, path);
	pr->v[pr->n].path = pr->path[pr->n];
	pr->v[pr->n].what = pr->what[pr->n];
	pr->v[pr->n].folder = folder;
	pr->n++;
}

void run_protect_init(struct run_protect *pr, const char *audit_path, const char *gw_audit)
{
	memset(pr, 0, sizeof(*pr));
	protect_add(pr, audit_path, "the audit log", false);
	protect_add(pr, run_audit_key_path(), "the audit signing key", false);
	if (gw_audit && *gw_audit && (!audit_path || strcmp(gw_audit, audit_path)))
		protect_add(pr, gw_audit, "the gateway's audit log", false);
	protect_add(pr, "/run/warden", "Warden's run state", true);
	/* a rootless run's state: its gateway's control socket answers the caller's uid, which
	 * is the program's too */
	if (geteuid() != 0) {
		char dir[200];

		if (!run_rootless_dir_path(dir, sizeof(dir)))
			protect_add(pr, dir, "Warden's run state (rootless)", true);
	}
	/* where a warden-gateway daemon keeps its central log by default (warden-gateway(8)) */
	protect_add(pr, "/var/log/warden", "the gateway daemon's log folder", true);
}

int run_audit_max_bytes(uint64_t *ret_max)
{
	const char *env = getenv("WARDEN_AUDIT_MAX_BYTES");
	unsigned long long v;

	if (!env || !*env) {
		*ret_max = AUDIT_DEFAULT_MAX_BYTES;
		return 0;
	}
	if (wd_parse_uint(env, UINT64_MAX, &v))
		return -EINVAL;
	*ret_max = v;
	return 0;
}

/* cli.c - the helpers the `warden` verbs share: --help detection, verbs not built yet, the
 * audit log's path, and what no policy grant may
 * expose. */
#include "launcher/cli.h"
#include "run/run.h"

#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool cli_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return true;
	}
	return false;
}

int cli_not_built(const char *verb, const char *what)
{
	wd_say(stderr, "warden %s: not built yet (%s)", verb, what);
	return WD_EXIT_USAGE;
}

const char *cli_audit_path(const char *override)
{
	static char path[PATH_MAX];
	const char *env = getenv("WARDEN_AUDIT_LOG");
	const char *state = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	int n;

	if (override && *override)
		return override;
	if (env && *env)
		return env;
	if (state && *state == '/') {
		n = snprintf(path, sizeof(path), "%s/warden/audit.jsonl", state);
		return n > 0 && (size_t)n < sizeof(path) ? path : NULL;
	}
	if (!home || *home != '/') {
		struct passwd *pw = getpwuid(getuid());

		home = pw ? pw->pw_dir : NULL;
	}
	if (!home)
		return NULL;
	n = snprintf(path, sizeof(path), "%s/.local/state/warden/audit.jsonl", home);
	return n > 0 && (size_t)n < sizeof(path) ? path : NULL;
}

/* @path made absolute, appended to @pr as @what */
static void protect_add(struct cli_protect *pr, const char *path, const char *what, bool folder)
{
	char cwd[PATH_MAX];
	int n;

	if (!path || !*path || pr->n >= CLI_PROTECT_MAX)
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

void cli_protect_init(struct cli_protect *pr, const char *audit_path, const char *gw_audit)
{
	memset(pr, 0, sizeof(*pr));
	protect_add(pr, audit_path, "the audit log", false);
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

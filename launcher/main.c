/* main.c - `warden`: the launcher sidecar and command line; dispatches verbs from a table. */
#include "launcher/cli.h"
#include "launcher/run.h"
#include "common/common.h"

#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct verb {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct verb verbs[] = {
    {"run", cmd_run, "run a program in a sandbox under a policy"},
    {"policy", cmd_policy, "check a policy file (policy check FILE)"},
    {"logs", cmd_logs, "read the audit log"},
    {"nft", cmd_nft, "render or audit the nftables ruleset"},
    {"trace", cmd_trace, "run a program and propose a policy from what it did"},
    {"init", cmd_init, "write a starter policy"},
    {"status", cmd_status, "list live runs"},
    {"kill", cmd_kill, "stop a live run"},
    {"mcp", cmd_mcp, "wrap an MCP server"},
    {"doctor", cmd_doctor, "check every prerequisite of `warden run` and say how to fix it"},
    {"gc", cmd_gc, "remove what crashed runs left behind"},
    {"version", cmd_version, "print the version"},
    {"help", cmd_help, "print this help"},
};

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
	fprintf(stderr, "warden %s: not built yet (%s)\n", verb, what);
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
	/* where a warden-gateway daemon keeps its central log by default (warden-gateway(8)) */
	protect_add(pr, "/var/log/warden", "the gateway daemon's log folder", true);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: warden VERB [ARGS...]\n\nverbs:\n");
	for (size_t i = 0; i < WD_ARRAY_SIZE(verbs); i++)
		fprintf(f, "  %-8s %s\n", verbs[i].name, verbs[i].summary);
	fprintf(f, "\n`warden VERB --help` describes each verb; see warden(1).\n");
}

int cmd_help(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	usage(stdout);
	return WD_EXIT_OK;
}

int cmd_version(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("warden %s\n", WARDEN_VERSION);
	return WD_EXIT_OK;
}

int main(int argc, char **argv)
{
	const char *base = argc > 0 ? strrchr(argv[0], '/') : NULL;

	/* a pooled network's holder is this program again, named so (launcher/run_pool.c) */
	if (argc > 0 && !strcmp(base ? base + 1 : argv[0], RUN_POOL_HOLDER_NAME))
		return run_pool_holder(argc, argv);
	if (argc < 2) {
		usage(stderr);
		return WD_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return cmd_help(argc - 1, argv + 1);
	if (!strcmp(argv[1], "--version"))
		return cmd_version(argc - 1, argv + 1);
	for (size_t i = 0; i < WD_ARRAY_SIZE(verbs); i++)
		if (!strcmp(argv[1], verbs[i].name))
			return verbs[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "warden: unknown verb '%s'\n", argv[1]);
	usage(stderr);
	return WD_EXIT_USAGE;
}

/* cli.h - internal to launcher/: the `warden` verbs and their shared helpers.
 *
 * Each verb is `int cmd_<verb>(int argc, char **argv)` where argv[0] is the
 * verb's own name; it returns the process exit status (see warden(1)):
 *   0 success, 1 a check found problems, 2 usage error or invalid input
 *   (or a verb that is not built yet), 125 Warden itself failed.
 */
#ifndef WARDEN_LAUNCHER_CLI_H
#define WARDEN_LAUNCHER_CLI_H

#include "policy/policy.h"

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

enum {
	WD_EXIT_OK = 0,
	WD_EXIT_FOUND = 1,
	WD_EXIT_USAGE = 2,
	WD_EXIT_INTERNAL = 125,
};

int cmd_run(int argc, char **argv);
int cmd_policy(int argc, char **argv);
int cmd_logs(int argc, char **argv);
int cmd_nft(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_init(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_kill(int argc, char **argv);
int cmd_mcp(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_gc(int argc, char **argv);
int cmd_version(int argc, char **argv);
int cmd_help(int argc, char **argv);
int cmd_allowlist(int argc, char **argv);

/**
 * cli_wants_help() - true when argv holds -h or --help before any "--"
 */
bool cli_wants_help(int argc, char **argv);

/**
 * cli_not_built() - say that @verb is not built yet and which issue brings it
 * Return: WD_EXIT_USAGE.
 */
int cli_not_built(const char *verb, const char *what);

/**
 * cli_audit_path() - the audit log path the verbs use
 * @override:	a --audit-log argument, or NULL
 *
 * Order: @override, $WARDEN_AUDIT_LOG, ${XDG_STATE_HOME:-~/.local/state}/warden/audit.jsonl.
 * Return: a static buffer, or NULL when no home folder can be found.
 */
const char *cli_audit_path(const char *override);

/* What no policy grant may expose: the audit logs and the run state. */
#define CLI_PROTECT_MAX 5

/**
 * struct cli_protect - what a run's grants must keep away from
 * @v:		entries for struct policy_ctx (point into @path and @what)
 * @n:		number of entries
 * @path:	their paths, absolute
 * @what:	their descriptions
 */
struct cli_protect {
	struct policy_protect v[CLI_PROTECT_MAX];
	size_t n;
	char path[CLI_PROTECT_MAX][PATH_MAX];
	char what[CLI_PROTECT_MAX][PATH_MAX + 32];
};

/**
 * cli_protect_init() - what is protected for one run or one `policy check`
 * @pr:		filled in
 * @audit_path:	the audit log the run writes (cli_audit_path()), or NULL
 * @gw_audit:	the gateway's own audit log from its config, "" or NULL when none
 *
 * Relative paths are made absolute against the current folder. /run/warden (run state,
 * the shared /etc copies, the pool) and /var/log/warden (a daemon's default log folder)
 * are always protected.
 */
void cli_protect_init(struct cli_protect *pr, const char *audit_path, const char *gw_audit);

#endif

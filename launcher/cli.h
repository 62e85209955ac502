/* cli.h - internal to launcher/: the `warden` verbs and their shared helpers.
 *
 * Each verb is `int cmd_<verb>(int argc, char **argv)` where argv[0] is the
 * verb's own name; it returns the process exit status (see warden(1)):
 *   0 success, 1 a check found problems, 2 usage error or invalid input
 *   (or a verb that is not built yet), 125 Warden itself failed.
 */
#ifndef WARDEN_LAUNCHER_CLI_H
#define WARDEN_LAUNCHER_CLI_H

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

#endif

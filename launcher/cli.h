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

#include "common/common.h"

/* WARDEN_PROXY_RUN: the launcher of a system whose runs reach the network only through a
 * proxy-mode gateway (macOS: the Seatbelt backend, run/mode_seatbelt.c): `warden run` is
 * run_seatbelt_main() and the verbs that need Linux say they are not available. Defined on
 * macOS, and for the Linux lab's test-only `warden-seatbelt` (launcher/CMakeLists.txt). */
#if defined(__APPLE__) && !defined(WARDEN_PROXY_RUN)
#define WARDEN_PROXY_RUN 1
#endif

enum {
	WD_EXIT_OK = 0,
	WD_EXIT_FOUND = 1,
	WD_EXIT_USAGE = 2,
	WD_EXIT_INTERNAL = 125,
};

int cmd_run(int argc, char **argv);
int cmd_policy(int argc, char **argv);
int cmd_logs(int argc, char **argv);
int cmd_attest(int argc, char **argv);
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
 * cmd_approve() - `warden approve ID`: approve a pending request of the approval store (a
 * run's network.ask, `warden mcp`'s set_egress_allowlist), as `warden allowlist approve`
 * Return: the exit status.
 */
int cmd_approve(int argc, char **argv);

/** cmd_deny() - `warden deny ID`: deny one (`warden allowlist deny`). Return: the exit status. */
int cmd_deny(int argc, char **argv);

/**
 * struct cli_verb - one row of `warden`'s verb table (launcher/main.c)
 * @name:	the verb as typed
 * @fn:		its cmd_<verb>()
 * @summary:	one line for `warden help` and the shell completions
 */
struct cli_verb {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

/**
 * cli_usage_error() - a verb's usage error: "warden VERB: MESSAGE", its one-line @synopsis and
 * "see `warden VERB --help`", on stderr (the message escaped: it may quote an argument)
 * @verb:	the verb's name
 * @synopsis:	"warden VERB [OPTION...] ..." on one line
 * @fmt:	printf-style message without the newline
 *
 * Return: WD_EXIT_USAGE.
 */
int cli_usage_error(const char *verb, const char *synopsis, const char *fmt, ...) WD_PRINTF(3, 4);

/**
 * cli_completion() - `warden completion bash|zsh|fish [FILE]` (hidden): print the completion
 * script for that shell, generated from @verbs: every verb with its summary, and for each the
 * options and sub-verbs its own `--help` names (read by running it in a child)
 * @argc, @argv:	the verb's arguments (argv[0] is "completion")
 * @verbs, @n:		the verb table
 *
 * Return: 0, WD_EXIT_USAGE on a bad shell name, WD_EXIT_INTERNAL when FILE cannot be written.
 */
int cli_completion(int argc, char **argv, const struct cli_verb *verbs, size_t n);

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
 * cli_not_here() - a verb of the table that this OS cannot carry out (WARDEN_PROXY_RUN: the
 * nft table, namespaces, cgroups, the tracer, the daemon's runs): says so and names the verbs
 * that work here
 * @argc, @argv:	the verb's arguments (argv[0] is its name)
 * Return: WD_EXIT_USAGE.
 */
int cli_not_here(int argc, char **argv);

#endif

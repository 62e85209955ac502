/* main.c - `warden`: the launcher sidecar and command line; dispatches verbs from a table. */
#include "audit/audit.h"
#include "launcher/cli.h"
#include "run/run.h"
#include "run/pool.h"
#include "common/common.h"

#include <stdio.h>
#include <string.h>

#if defined(WARDEN_PROXY_RUN) && defined(_WIN32)
/* Windows: runs through the AppContainer backend; what needs Linux says so (cli_not_here()) */
static const struct cli_verb verbs[] = {
    {"run", cmd_run, "run a program in a sandbox under a policy (AppContainer)"},
    {"version", cmd_version, "print the version"},
    {"help", cmd_help, "print this help, or a verb's (help VERB)"},
    {"policy", cli_not_here, "not available on Windows yet"},
    {"logs", cmd_logs, "read the audit log; --verify checks its chain and signed run records"},
    {"attest", cli_not_here, "not available on Windows"},
    {"nft", cli_not_here, "not available on Windows (nftables is Linux's)"},
    {"trace", cli_not_here, "not available on Windows"},
    {"init", cli_not_here, "not available on Windows"},
    {"status", cli_not_here, "not available on Windows"},
    {"kill", cli_not_here, "not available on Windows"},
    {"mcp", cli_not_here, "not available on Windows"},
    {"doctor", cli_not_here, "not available on Windows"},
    {"gc", cli_not_here, "not available on Windows"},
    {"allowlist", cli_not_here, "not available on Windows"},
    {"approve", cli_not_here, "not available on Windows"},
    {"deny", cli_not_here, "not available on Windows"},
};
#elif defined(WARDEN_PROXY_RUN)
/* macOS: runs through the Seatbelt backend; what needs Linux says so (cli_not_here()) */
static const struct cli_verb verbs[] = {
    {"run", cmd_run, "run a program in a sandbox under a policy (Seatbelt)"},
    {"version", cmd_version, "print the version"},
    {"help", cmd_help, "print this help, or a verb's (help VERB)"},
    {"policy", cli_not_here, "not available on macOS yet"},
    {"logs", cmd_logs, "read the audit log; --verify checks its chain and signed run records"},
    {"attest", cli_not_here, "not available on macOS"},
    {"nft", cli_not_here, "not available on macOS (nftables is Linux's)"},
    {"trace", cli_not_here, "not available on macOS"},
    {"init", cli_not_here, "not available on macOS"},
    {"status", cli_not_here, "not available on macOS"},
    {"kill", cli_not_here, "not available on macOS"},
    {"mcp", cli_not_here, "not available on macOS"},
    {"doctor", cli_not_here, "not available on macOS"},
    {"gc", cli_not_here, "not available on macOS"},
    {"allowlist", cli_not_here, "not available on macOS"},
    {"approve", cli_not_here, "not available on macOS"},
    {"deny", cli_not_here, "not available on macOS"},
};
#else
static const struct cli_verb verbs[] = {
    {"run", cmd_run, "run a program in a sandbox under a policy"},
    {"policy", cmd_policy, "check a policy file (policy check FILE)"},
    {"logs", cmd_logs, "read the audit log"},
    {"attest", cmd_attest, "a run's signed record as an in-toto statement (DSSE)"},
    {"nft", cmd_nft, "render or audit the nftables ruleset"},
    {"trace", cmd_trace, "run a program and propose a policy from what it did"},
    {"init", cmd_init, "write a starter policy"},
    {"status", cmd_status, "list live runs"},
    {"kill", cmd_kill, "stop a live run"},
    {"mcp", cmd_mcp, "be an MCP server whose tools run commands in sandboxes"},
    {"doctor", cmd_doctor, "check every prerequisite of `warden run` and say how to fix it"},
    {"gc", cmd_gc, "remove what crashed runs left behind"},
    {"version", cmd_version, "print the version"},
    {"help", cmd_help, "print this help, or a verb's (help VERB)"},
    {"allowlist", cmd_allowlist,
     "show or change a live run's allowlist; approve warden mcp's requests"},
    {"approve", cmd_approve, "approve a pending ask (network.ask) or warden mcp request"},
    {"deny", cmd_deny, "deny a pending ask (network.ask) or warden mcp request"},
};
#endif

static void usage(FILE *f)
{
	fprintf(f, "usage: warden VERB [ARGS...]\n\nverbs:\n");
	for (size_t i = 0; i < WD_ARRAY_SIZE(verbs); i++)
		fprintf(f, "  %-8s %s\n", verbs[i].name, verbs[i].summary);
	fprintf(f, "\n`warden VERB --help` describes each verb; see warden(1).\n");
}

/* `warden help [VERB]`: the verbs, or that verb's own help (as `warden VERB --help`) */
int cmd_help(int argc, char **argv)
{
	char help[] = "--help";

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return WD_EXIT_OK;
	}
	if (argc > 2)
		return cli_usage_error("help", "warden help [VERB]", "one verb at a time");
	for (size_t i = 0; i < WD_ARRAY_SIZE(verbs); i++)
		if (!strcmp(argv[1], verbs[i].name)) {
			char *av[] = {argv[1], help, NULL};

			return verbs[i].fn(2, av);
		}
	return cli_usage_error("help", "warden help [VERB]", "unknown verb '%s'", argv[1]);
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
	/* before any OpenSSL call: no openssl.cnf read, no clean-up at exit (audit/audit.h) */
	audit_crypto_init_brief();
#ifndef WARDEN_PROXY_RUN
	const char *base = argc > 0 ? strrchr(argv[0], '/') : NULL;

	/* a pooled network's holder is this program again, named so (launcher/run_pool.c) */
	if (argc > 0 && !strcmp(base ? base + 1 : argv[0], RUN_POOL_HOLDER_NAME))
		return run_pool_holder(argc, argv);
	/* a launcher killed with SIGKILL left its run without run.exit: written now (crashed.c) */
	run_crashed_check();
#endif
#ifdef _WIN32
	/* a Windows before 10 1903 ignores the UTF-8 manifest (common/win_utf8.manifest) and hands
	 * the arguments over in its legacy code page: refused rather than read changed */
	if (wd_win_utf8_args() < 0) {
		wd_say(stderr,
		       "warden: this Windows does not run warden with UTF-8 as its code page "
		       "(Windows 10 1903 and later do): an argument outside ASCII would reach "
		       "it changed; refused");
		return WD_EXIT_USAGE;
	}
#endif
	if (argc < 2) {
		usage(stderr);
		return WD_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return cmd_help(argc - 1, argv + 1);
	if (!strcmp(argv[1], "--version"))
		return cmd_version(argc - 1, argv + 1);
#ifndef WARDEN_PROXY_RUN
	/* hidden: the shell completions, generated from the table (deploy/CMakeLists.txt) */
	if (!strcmp(argv[1], "completion"))
		return cli_completion(argc - 1, argv + 1, verbs, WD_ARRAY_SIZE(verbs));
#endif
	for (size_t i = 0; i < WD_ARRAY_SIZE(verbs); i++)
		if (!strcmp(argv[1], verbs[i].name))
			return verbs[i].fn(argc - 1, argv + 1);
	wd_say(stderr, "warden: unknown verb '%s'", argv[1]);
	usage(stderr);
	return WD_EXIT_USAGE;
}

/* cmd_run.c - `warden run`: one program in a sandbox that reaches only what its policy grants.
 * This file is the verb: its usage and its options; the run itself is run/'s (run_main(), whose
 * file run/run.c has the theory of operation, and docs/run.md the long form).
 */
#include "launcher/cli.h"
#include "run/run.h"
#include "policy/policy.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: warden run [-p POLICY] [--allow HOST[:PORT]]... [--ask HOST[:PORT]]...\n"
	    "                  [--read PATH]...\n"
	    "                  [--write PATH]... [--gateway SOCKET] [--config GATEWAY.yaml]\n"
	    "                  [--audit-log PATH] [--timeout SECONDS] [--mode MODE]\n"
	    "                  [--backend NAME] [--shadow] [-q]\n"
	    "                  [-- COMMAND ARGS...]\n"
	    "       warden run [-p POLICY] [--allow ...] [--read ...] [--write ...] "
	    "--print-policy\n"
	    "       warden run [-p POLICY] --print-seccomp\n"
	    "       warden run [-p POLICY] [--mode MODE] [--backend NAME] --print-bwrap\n"
	    "                  [-- COMMAND ARGS...]\n"
	    "\n"
	    "Run COMMAND (else the policy's `command`) in a sandbox: its own network namespace\n"
	    "whose every DNS query and TCP connection goes to a gateway that decides by name,\n"
	    "under bubblewrap with only the runtime base and the policy's grants visible.\n"
	    "\n"
	    "  -p, --policy FILE     the policy (default: an empty policy: no files, no network,\n"
	    "                        or the flags below alone)\n"
	    "      --allow HOST[:PORT]  add HOST (a name or *.suffix; ports 80 and 443 unless\n"
	    "                        :PORT) to network.allow, as the policy's entry would\n"
	    "      --ask HOST[:PORT]  add HOST (a name, *.suffix, or \"*\") to network.ask: a\n"
	    "                        name outside the allow list but matched here is held\n"
	    "                        while a person answers (warden approve|deny ID)\n"
	    "      --read PATH       add PATH to filesystem.read (relative to the current\n"
	    "                        folder; ~ is your home; a trailing / means a folder)\n"
	    "      --write PATH      add PATH to filesystem.write (the same; a missing PATH\n"
	    "                        is made as for the policy's write grants)\n"
	    "                        The four repeat, and add to -p's lists (no -p: they\n"
	    "                        are the whole policy); the result is checked as one.\n"
	    "      --print-policy    print the effective policy (-p and the flags) as YAML\n"
	    "                        for -p or `warden policy check -`, and exit 0; nothing runs\n"
	    "      --gateway SOCKET  use the warden-gateway daemon answering on SOCKET\n"
	    "                        (default: %s if it answers, else an embedded\n"
	    "                        gateway started for this run)\n"
	    "      --config FILE     warden-gateway config: ports, nft table, pools\n"
	    "      --audit-log PATH  audit log (default: $WARDEN_AUDIT_LOG, else\n"
	    "                        ${XDG_STATE_HOME:-~/.local/state}/warden/audit.jsonl)\n"
	    "      --timeout SEC     wall-clock limit (overrides limits.timeout)\n"
	    "      --mode MODE       root: the run's network on the host (needs root);\n"
	    "                        rootless: in a user namespace of the caller's own (no\n"
	    "                        root, no daemon); daemon: that namespace plumbed by the\n"
	    "                        host's gateway daemon (a user; --gateway names its\n"
	    "                        socket). Default: root as root; as a user the daemon\n"
	    "                        if it answers, else rootless\n"
	    "      --backend NAME    what confines the program: linux (bubblewrap; alias\n"
	    "                        bwrap), docker, seatbelt (macOS), windows; overrides the\n"
	    "                        policy's sandbox.backend. One that cannot run here fails\n"
	    "                        the run (125), never falls back. Default: this OS's own,\n"
	    "                        else a fallback the policy names (sandbox.fallback)\n"
	    "      --sandbox-user U  started by root (not through sudo): run the program as\n"
	    "                        user U (name or uid; default $WARDEN_SANDBOX_USER, else\n"
	    "                        nobody); the program never runs as root\n"
	    "      --shadow          roll a policy out without breaking the program: what the\n"
	    "                        policy denies on the network is let through and logged as\n"
	    "                        would_deny (the host's ceiling and the SSRF guard still\n"
	    "                        deny; files stay enforced); the end-of-run block lists it\n"
	    "  -q, --quiet           no progress messages\n"
	    "      --print-seccomp   print the seccomp filter the policy gives every process\n"
	    "                        of the run (no root needed, nothing runs) and exit 0\n"
	    "      --print-bwrap     print the sandbox backend's command line of this run as one\n"
	    "                        shell line (its descriptors' files in a new folder,\n"
	    "                        named on stderr) and exit 0; nothing runs\n"
	    "\n"
	    "Exit: the program's status; 128+N when it died of signal N; 124 timeout;\n"
	    "125 Warden failed before the program started (the message names the step);\n"
	    "126 the command is not executable; 127 it is not found or not visible.\n",
	    RUN_DAEMON_SOCKET);
}

/* the one line a usage error prints (cli_usage_error()) */
static const char synopsis[] = "warden run [-p POLICY] [OPTION...] [-- COMMAND ARGS...]";

/* a usage error: what was wrong, the short usage, exit 2 (warden(1)); Return: -EINVAL */
static int usage_error(const char *what, const char *arg)
{
	cli_usage_error("run", synopsis, "%s%s%s%s", what, arg ? " `" : "", arg ? arg : "",
			arg ? "`" : "");
	return -EINVAL;
}

/* an option getopt_long() refused: @c is '?' (unknown) or ':' (its argument missing) */
static int bad_option(int c, char **argv)
{
	char opt[3] = {'-', (char)optopt, '\0'};
	const char *arg = c == '?' && optopt ? opt : argv[optind - 1];

	return usage_error(c == ':' ? "missing argument for" : "unknown option", arg);
}

/* run/ says it when there is no command (run_main() then exits RUN_EXIT_USAGE) */
static void short_usage(FILE *f)
{
	fprintf(f, "usage: %s\nsee `warden run --help`\n", synopsis);
}

/* one --allow/--read/--write into @flags (room for every argument of the command line) */
static void add_flag(struct run_opts *o, struct run_flag *flags, enum run_flag_kind kind,
		     const char *arg)
{
	flags[o->nflags].kind = kind;
	flags[o->nflags].arg = arg;
	o->nflags++;
	o->flags = flags;
}

static int parse_opts(int argc, char **argv, struct run_opts *o, struct run_flag *flags,
		      int *ret_optind)
{
	static const struct option opts[] = {
	    {"policy", required_argument, NULL, 'p'},
	    {"gateway", required_argument, NULL, 'g'},
	    {"config", required_argument, NULL, 'c'},
	    {"audit-log", required_argument, NULL, 'a'},
	    {"timeout", required_argument, NULL, 't'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"sandbox-user", required_argument, NULL, 'u'},
	    {"help", no_argument, NULL, 'h'},
	    {"print-seccomp", no_argument, NULL, 'S'},
	    {"print-bwrap", no_argument, NULL, 'B'},
	    {"mode", required_argument, NULL, 'm'},
	    {"backend", required_argument, NULL, 'b'},
	    {"run-id", required_argument, NULL, 'I'},
	    {"started-by", required_argument, NULL, 'M'},
	    {"allow", required_argument, NULL, 'A'},
	    {"ask", required_argument, NULL, 'K'},
	    {"read", required_argument, NULL, 'R'},
	    {"write", required_argument, NULL, 'W'},
	    {"print-policy", no_argument, NULL, 'P'},
	    {"shadow", no_argument, NULL, 'D'},
	    {NULL, 0, NULL, 0},
	};
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:p:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			o->policy = optarg;
			break;
		case 'g':
			o->gateway = optarg;
			break;
		case 'c':
			o->config = optarg;
			break;
		case 'a':
			o->audit = optarg;
			break;
		case 'u':
			o->sandbox_user = optarg;
			break;
		case 't':
			if (run_opts_timeout(optarg, &o->timeout_s))
				return usage_error("--timeout: 1 to 604800 seconds, not", optarg);
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'm':
			if (!run_opts_mode_ok(optarg))
				return usage_error("--mode: root, rootless or daemon, not", optarg);
			o->mode = optarg;
			break;
		case 'b':
			if (!policy_backend_lookup(optarg))
				return usage_error("--backend: linux (or bwrap), docker, seatbelt "
						   "or windows, not",
						   optarg);
			o->backend = optarg;
			break;
		case 'A':
			add_flag(o, flags, RUN_FLAG_ALLOW, optarg);
			break;
		case 'K':
			add_flag(o, flags, RUN_FLAG_ASK, optarg);
			break;
		case 'R':
			add_flag(o, flags, RUN_FLAG_READ, optarg);
			break;
		case 'W':
			add_flag(o, flags, RUN_FLAG_WRITE, optarg);
			break;
		case 'P':
			o->print_policy = true;
			break;
		case 'D':
			o->shadow = true;
			break;
		case 'S':
			o->print_seccomp = true;
			break;
		case 'B':
			o->print_bwrap = true;
			break;
		case 'I': /* hidden: `warden mcp` names its runs (12 lower-case hex digits) */
			if (strlen(optarg) != 12 || strspn(optarg, "0123456789abcdef") != 12)
				return usage_error("--run-id: 12 lower-case hex digits, not",
						   optarg);
			o->run_id = optarg;
			break;
		case 'M': /* hidden: who started the run; only `warden mcp` says so */
			if (strcmp(optarg, "mcp"))
				return usage_error("--started-by: mcp, not", optarg);
			o->started_by = optarg;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			return bad_option(c, argv);
		}
	}
	*ret_optind = optind;
	return 0;
}

int cmd_run(int argc, char **argv)
{
	struct run_opts o = {.usage = short_usage};
	struct run_flag *flags = calloc((size_t)argc + 1, sizeof(*flags));
	int ret, first, status;

	if (!flags) {
		fprintf(stderr, "warden run: out of memory\n");
		return WD_EXIT_USAGE;
	}
	ret = parse_opts(argc, argv, &o, flags, &first);
	if (ret)
		status = ret > 0 ? WD_EXIT_OK : WD_EXIT_USAGE;
#if defined(WARDEN_PROXY_RUN) && defined(_WIN32)
	else
		status = run_appcontainer_main(&o, argc - first, argv + first);
#elif defined(WARDEN_PROXY_RUN)
	else
		status = run_seatbelt_main(&o, argc - first, argv + first);
#else
	else
		status = run_main(&o, argc - first, argv + first, NULL, NULL);
#endif
	free(flags);
	return status;
}

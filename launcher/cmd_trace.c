/* cmd_trace.c - `warden trace [-p BASE] [-o TRACE] [-e NAME]... -- COMMAND`: a run in a learning
 * sandbox whose accesses become a trace (docs/trace.md), and the summary of what it did. This
 * file is the verb: its usage and its options; the trace's run is run/'s (run_trace_main(),
 * learn.h has its theory of operation).
 *
 * A trace is never unsandboxed: it is a `warden run` of COMMAND with three changes. The sandbox
 * is a learning one: the host's `/` read-only instead of the runtime base and the grants, the
 * current folder writable (unless it is the home folder or holds it, or the policy validator
 * refuses it as a write grant), every credential store and Warden's own folders masked, the
 * sandbox's own /dev, /proc, a scratch /dev/shm (TMPDIR; the host's /tmp is shown read-only),
 * and no /sys or service sockets. The gateway is in learn mode: every name is let through
 * and recorded, the SSRF classes still refused. The file-access recorder records every access
 * of the whole process tree. BASE (-p) gives the environment, the limits and sandbox.allow;
 * its grants and rules are not used.
 *
 * The home folder would be a scratch overlay (writes thrown away), but bubblewrap 0.8 has no
 * --tmp-overlay: it is read-only, and the summary says so.
 */
#include "launcher/cli.h"
#include "run/run.h"
#include "run/learn.h"
#include "policy/policy.h"
#include "common/common.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		"written, or the sandbox failed before the program ran); 126, 127 the program\n"
		"could not be run; 2 usage error. A program that did not start writes no trace.\n");
}

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

int cmd_trace(int argc, char **argv)
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
	    /* `warden run`'s policy flags: refused by name, not taken for an abbreviation of
	     * --allow-socket */
	    {"allow", required_argument, NULL, 'A'},
	    {"read", required_argument, NULL, 'R'},
	    {"write", required_argument, NULL, 'W'},
	    {NULL, 0, NULL, 0},
	};
	struct run_opts o = {0};
	struct run_trace *rt = calloc(1, sizeof(*rt));
	char **env = calloc((size_t)argc + 1, sizeof(char *));
	char **socks = calloc((size_t)argc + 1, sizeof(char *));
	char out_abs[PATH_MAX];
	size_t nenv = 0;
	int c, status = WD_EXIT_USAGE;

	if (!rt || !env || !socks) {
		fprintf(stderr, "warden trace: out of memory\n");
		status = RUN_EXIT_WARDEN;
		goto out;
	}
	optind = 1;
	while ((c = getopt_long(argc, argv, "+p:o:e:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			o.policy = optarg;
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
			if (!run_opts_mode_ok(optarg)) {
				fprintf(stderr, "warden trace: --mode: root, rootless or daemon\n");
				status = RUN_EXIT_WARDEN;
				goto out;
			}
			o.mode = optarg;
			break;
		case 'a':
			o.audit = optarg;
			break;
		case 't':
			if (run_opts_timeout(optarg, &o.timeout_s)) {
				fprintf(stderr, "warden trace: --timeout: 1 to 604800 seconds\n");
				status = RUN_EXIT_WARDEN;
				goto out;
			}
			break;
		case 'q':
			o.quiet = true;
			rt->quiet = true;
			break;
		case 'A':
		case 'R':
		case 'W':
			fprintf(
			    stderr,
			    "warden trace: --%s is warden run's: a trace shows the program the "
			    "host read-only and records what it reaches; warden init writes the "
			    "policy\n",
			    c == 'A'   ? "allow"
			    : c == 'R' ? "read"
				       : "write");
			goto out;
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
		/* the folder must be there before anything runs (run_learn_policy() opens it and
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
	rt->env = env;
	rt->nenv = nenv;
	rt->sockets = socks;
	status = run_trace_main(&o, rt, argc - optind, argv + optind);
out:
	free(rt);
	free(env);
	for (size_t i = 0; socks && socks[i]; i++)
		free(socks[i]);
	free(socks);
	return status;
}

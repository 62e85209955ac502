/* cli.c - the helpers the `warden` verbs share: --help detection and verbs not built yet (the
 * audit log's path and what no grant may expose are run/'s: run_audit_path(), run_protect_init()).
 */
#include "launcher/cli.h"
#include "run/run.h"

#include <stdio.h>
#include <string.h>

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

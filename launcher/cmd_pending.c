/* cmd_pending.c - verbs that are planned but not built yet: each says so and exits 2. */
#include "launcher/cli.h"

#include <stdio.h>

#define PENDING(fn, verb, what, helptext)                                                          \
	int fn(int argc, char **argv)                                                              \
	{                                                                                          \
		if (cli_wants_help(argc, argv)) {                                                  \
			printf("usage: %s\n(not built yet: %s)\n", helptext, what);                \
			return WD_EXIT_OK;                                                         \
		}                                                                                  \
		return cli_not_built(verb, what);                                                  \
	}

PENDING(cmd_trace, "trace", "planned after `warden run`", "warden trace [-- COMMAND ARGS...]")

/* cmd_allowlist_min.c - a minimal `warden allowlist` verb: only the approval subcommands
 * (cmd_allowlist_approve.c). h/15live's verb (show, RUN add|remove NAME) replaces this file
 * and dispatches approve, deny and pending to cmd_allowlist_approval(). */
#include "launcher/cli.h"

#include <stdio.h>
#include <string.h>

int cmd_allowlist(int argc, char **argv)
{
	if (argc >= 2 && (!strcmp(argv[1], "approve") || !strcmp(argv[1], "deny") ||
			  !strcmp(argv[1], "pending")))
		return cmd_allowlist_approval(argc - 1, argv + 1);
	if (cli_wants_help(argc, argv)) {
		printf("usage: warden allowlist pending | approve ID | deny ID\n"
		       "(`warden allowlist [RUN]` and `RUN add|remove NAME`: not built yet)\n");
		return WD_EXIT_OK;
	}
	return cli_not_built("allowlist", "showing and changing a live run's allowlist comes "
					  "with `warden status` (issue 15)");
}

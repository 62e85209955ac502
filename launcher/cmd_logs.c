/* cmd_logs.c - placeholder until the module behind `warden logs` lands. */
#include "launcher/cli.h"

int cmd_logs(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cli_not_built("logs", "in progress");
}

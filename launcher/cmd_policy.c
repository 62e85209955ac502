/* cmd_policy.c - placeholder until the module behind `warden policy` lands. */
#include "launcher/cli.h"

int cmd_policy(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cli_not_built("policy", "in progress");
}

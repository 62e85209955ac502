/* cmd_nft.c - placeholder until the module behind `warden nft` lands. */
#include "launcher/cli.h"

int cmd_nft(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cli_not_built("nft", "in progress");
}

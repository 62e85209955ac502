/* main.c - `warden-gateway`: the transparent egress gateway daemon (entry point). */
#include "common/common.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *f)
{
	fprintf(f, "usage: warden-gateway [--config FILE] [--version] [--help]\n"
		   "The transparent egress gateway; see warden-gateway(8).\n");
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--version")) {
			printf("warden-gateway %s\n", WARDEN_VERSION);
			return 0;
		}
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 0;
		}
	}
	fprintf(stderr, "warden-gateway: the gateway's data plane is not built yet "
			"(it arrives with the gateway issue)\n");
	return 2;
}

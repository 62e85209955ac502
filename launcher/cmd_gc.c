/* cmd_gc.c - `warden gc`: remove what runs whose launcher died left behind (embedded gateways,
 * cgroups, nft elements, registrations, namespaces, veths, address slots). */
#include "launcher/cli.h"
#include "launcher/run.h"
#include "netns/netns.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fprintf(f, "usage: warden gc [-q]\n\n"
		   "Remove the leftovers of runs whose launcher is gone (killed, crashed): their\n"
		   "embedded gateway, cgroups, nft set elements, gateway registration, network\n"
		   "namespace, veth pair and address slot. Live runs are never touched. `warden\n"
		   "run` does the same for crashed runs each time it starts.\n\n"
		   "exit status: 0 done, 1 something could not be removed, 2 usage error,\n"
		   "125 not root\n");
}

int cmd_gc(int argc, char **argv)
{
	struct netns_pool_config cfg;
	struct wd_err err;
	unsigned runs = 0, slots = 0;
	bool quiet = false;
	int ret = WD_EXIT_OK;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return WD_EXIT_OK;
		}
		if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet")) {
			quiet = true;
			continue;
		}
		usage(stderr);
		return WD_EXIT_USAGE;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "warden gc: needs root (namespaces, nftables, cgroups)\n"
				"  fix: sudo warden gc\n");
		return WD_EXIT_INTERNAL;
	}
	wd_err_clear(&err);
	if (run_gc(RUN_STATE_DIR, &runs, &err)) {
		fprintf(stderr, "warden gc: %s\n", err.msg);
		ret = WD_EXIT_FOUND;
	}
	netns_pool_config_defaults(&cfg);
	wd_err_clear(&err);
	if (netns_gc(&cfg, &slots, &err)) {
		fprintf(stderr, "warden gc: network: %s\n", err.msg);
		ret = WD_EXIT_FOUND;
	}
	if (!quiet)
		printf("warden gc: %u crashed run%s cleaned up, %u address slot%s reclaimed\n",
		       runs, runs == 1 ? "" : "s", slots, slots == 1 ? "" : "s");
	return ret;
}

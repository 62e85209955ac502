/* cmd_gc.c - `warden gc`: remove what runs whose launcher died left behind (embedded gateways,
 * cgroups, nft elements, registrations, namespaces, veths, address slots), and the pool of
 * ready-made run networks' broken or foreign entries (all of them with --pool). */
#include "launcher/cli.h"
#include "run/run.h"
#include "run/state.h"
#include "run/pool.h"
#include "netns/netns.h"
#include "nft/nft.h"
#include "conf/host.h"
#include "policy/policy.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fprintf(f,
		"usage: warden gc [--pool] [--config GATEWAY.yaml] [-q]\n\n"
		"Remove the leftovers of runs whose launcher is gone (killed, crashed): their\n"
		"embedded gateway, cgroups, nft set elements, gateway registration, network\n"
		"namespace, veth pair and address slot. Live runs are never touched. `warden\n"
		"run` does the same for crashed runs each time it starts.\n"
		"Ready-made run networks (the pool, see WARDEN_POOL in warden(1)) are kept when\n"
		"healthy and made for the configuration (default, or --config); half-made and\n"
		"other ones are removed, and so are those of another host network namespace\n"
		"that is gone. --pool removes all of this host namespace's too.\n\n"
		"exit status: 0 done, 1 something could not be removed, 2 usage error,\n"
		"125 not root\n");
}

/* A user's own leftovers: the state folders of rootless runs whose launcher died (their
 * namespaces died with their processes; a surviving embedded gateway is killed). */
static int gc_rootless(bool quiet)
{
	char dir[200], runs_dir[256];
	struct wd_err err;
	unsigned runs = 0;

	wd_err_clear(&err);
	if (run_rootless_dir(dir, sizeof(dir), &err)) {
		wd_say(stderr, "warden gc: %s", err.msg);
		return WD_EXIT_FOUND;
	}
	snprintf(runs_dir, sizeof(runs_dir), "%s/runs", dir);
	if (run_crashed_log(runs_dir, NULL, &err))
		wd_say(stderr, "warden gc: %s", err.msg);
	wd_err_clear(&err);
	if (run_gc(runs_dir, &runs, &err)) {
		wd_say(stderr, "warden gc: %s", err.msg);
		return WD_EXIT_FOUND;
	}
	if (!quiet)
		wd_say(stdout, "warden gc: %u crashed rootless run%s of uid %u cleaned up", runs,
		       runs == 1 ? "" : "s", (unsigned)getuid());
	return WD_EXIT_OK;
}

int cmd_gc(int argc, char **argv)
{
	struct netns_pool_config cfg;
	struct fw_config fc;
	struct wd_gwconf gwc;
	struct wd_err err;
	unsigned runs = 0, slots = 0, pooled = 0;
	const char *config = NULL;
	bool quiet = false, drain = false;
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
		if (!strcmp(argv[i], "--pool")) {
			drain = true;
			continue;
		}
		if (!strcmp(argv[i], "--config") && i + 1 < argc) {
			config = argv[++i];
			continue;
		}
		usage(stderr);
		return WD_EXIT_USAGE;
	}
	if (geteuid() != 0)
		return gc_rootless(quiet);
	if (config) {
		struct policy_diags d;

		policy_diags_init(&d);
		if (conf_load(config, &gwc, &d)) {
			policy_diags_free(&d);
			wd_say(stderr, "warden gc: %s is not a valid gateway config", config);
			return WD_EXIT_USAGE;
		}
		policy_diags_free(&d);
		conf_free(&gwc); /* gc needs its pools, not its ceiling */
	} else {
		conf_defaults(&gwc);
	}
	wd_err_clear(&err);
	if (run_crashed_log(RUN_STATE_DIR, NULL, &err)) {
		wd_say(stderr, "warden gc: %s", err.msg);
		ret = WD_EXIT_FOUND;
	}
	wd_err_clear(&err);
	if (run_gc(RUN_STATE_DIR, &runs, &err)) {
		wd_say(stderr, "warden gc: %s", err.msg);
		ret = WD_EXIT_FOUND;
	}
	conf_fw_config(&gwc, &fc);
	if (conf_pool_config(&gwc, &cfg)) {
		wd_say(stderr, "warden gc: bad run pool %s or %s", gwc.pool_v4, gwc.pool_v6);
		return WD_EXIT_USAGE;
	}
	wd_err_clear(&err);
	if (run_pool_gc(RUN_POOL_DIR, &cfg, &fc, drain, &pooled, &err)) {
		wd_say(stderr, "warden gc: pool: %s", err.msg);
		ret = WD_EXIT_FOUND;
	}
	wd_err_clear(&err);
	if (netns_gc(&cfg, &slots, &err)) {
		wd_say(stderr, "warden gc: network: %s", err.msg);
		ret = WD_EXIT_FOUND;
	}
	if (!quiet)
		wd_say(stdout,
		       "warden gc: %u crashed run%s cleaned up, %u pooled network%s removed, "
		       "%u address slot%s reclaimed",
		       runs, runs == 1 ? "" : "s", pooled, pooled == 1 ? "" : "s", slots,
		       slots == 1 ? "" : "s");
	return ret;
}

/* cmd_gc.c - `warden gc`: write the run.exit of runs whose launcher died (crashed: true), remove
 * what they left behind (embedded gateways, cgroups, nft elements, registrations, namespaces,
 * veths, address slots), and the pool of ready-made run networks' broken or foreign entries
 * (all of them with --pool; with --all the `inet warden` table too, when nothing uses it). */
#include "launcher/cli.h"
#include "run/gw.h"
#include "run/live.h"
#include "run/run.h"
#include "run/state.h"
#include "run/pool.h"
#include "netns/netns.h"
#include "nft/nft.h"
#include "conf/host.h"
#include "policy/policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fprintf(f,
		"usage: warden gc [--pool | --all] [--config GATEWAY.yaml] [-q]\n\n"
		"Write the run.exit (\"crashed\": true) of runs whose launcher is gone (killed,\n"
		"crashed), then remove their leftovers: their\n"
		"embedded gateway, cgroups, nft set elements, gateway registration, network\n"
		"namespace, veth pair and address slot, and the container of a run of the docker\n"
		"backend (on the engine the docker CLI reaches). Live runs are never touched. `warden\n"
		"run` does the same for crashed runs each time it starts.\n"
		"Ready-made run networks (the pool, see WARDEN_POOL in warden(1)) are kept when\n"
		"healthy and made for the configuration (default, or --config); half-made and\n"
		"other ones are removed, and so are those of another host network namespace\n"
		"that is gone. --pool removes all of this host namespace's too.\n"
		"--all also removes the nft table (inet warden) that root-mode runs share and\n"
		"that stays between runs by design: nothing of Warden is left. It refuses while\n"
		"a root-mode run is live or a gateway daemon answers (the table is theirs).\n\n"
		"exit status: 0 done, 1 something could not be removed (or --all refused),\n"
		"2 usage error,\n"
		"125 not root\n");
}

/* The Docker backend's containers whose launcher is gone (run_docker_gc()). */
static void containers(bool quiet)
{
	unsigned n = 0;

	run_docker_gc(&n);
	if (n && !quiet)
		wd_say(stdout, "warden gc: %u container%s of runs whose launcher is gone removed", n,
		       n == 1 ? "" : "s");
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
	containers(quiet);
	return WD_EXIT_OK;
}

/* --all: what uses the table now: root-mode runs alive (a rootless run's table is its own
 * namespace's), a daemon on @sock. Return: 0 none (the table may go), or 1 (said) */
static int table_in_use(const char *sock)
{
	struct live_run *v = NULL;
	struct wd_err err;
	size_t n = 0, live = 0;
	char *ans = NULL;

	wd_err_clear(&err);
	if (live_runs_find(&v, &n, &err)) {
		wd_say(stderr, "warden gc: --all: cannot tell which runs are live: %s", err.msg);
		return 1;
	}
	for (size_t i = 0; i < n; i++)
		live += v[i].rec.table[0] != '\0';
	free(v);
	if (live) {
		wd_say(stderr,
		       "warden gc: --all: %zu root-mode run%s live (warden status): the nft table "
		       "is theirs; nothing of it removed (wait for them, or warden kill)",
		       live, live == 1 ? " is" : "s are");
		return 1;
	}
	if (!run_gw_request(sock, "{\"op\":\"stats\"}", 1000, &ans)) {
		free(ans);
		wd_say(stderr,
		       "warden gc: --all: a gateway daemon answers on %s and owns the nft table; "
		       "stop it first (systemctl stop warden-gateway)",
		       sock);
		return 1;
	}
	return 0;
}

int cmd_gc(int argc, char **argv)
{
	struct netns_pool_config cfg;
	struct fw_config fc;
	struct wd_gwconf gwc;
	struct wd_err err;
	unsigned runs = 0, slots = 0, pooled = 0;
	const char *config = NULL;
	bool quiet = false, drain = false, all = false;
	char table[80] = "";
	int ret = WD_EXIT_OK, x;

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
		if (!strcmp(argv[i], "--all")) {
			all = drain = true;
			continue;
		}
		if (!strcmp(argv[i], "--config") && i + 1 < argc) {
			config = argv[++i];
			continue;
		}
		usage(stderr);
		return WD_EXIT_USAGE;
	}
	if (geteuid() != 0) {
		if (all && !quiet)
			wd_say(stderr, "warden gc: --all: a user's runs leave no table or pool "
				       "behind; doing what gc does");
		return gc_rootless(quiet);
	}
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
	/* --all refuses as a whole, before the pool is drained: a refusal changes nothing */
	if (all && table_in_use(gwc.control_path[0] ? gwc.control_path : RUN_DAEMON_SOCKET))
		return WD_EXIT_FOUND;
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
	/* last: the pool's elements went with its networks */
	if (all) {
		wd_err_clear(&err);
		x = fw_table_present(&fc, &err);
		if (x > 0) {
			x = fw_uninstall(&fc, &err);
			snprintf(table, sizeof(table), ", nft table inet %s removed", fc.table);
		}
		if (x < 0) {
			wd_say(stderr, "warden gc: nft table inet %s: %s", fc.table,
			       err.msg[0] ? err.msg : strerror(-x));
			table[0] = '\0';
			ret = WD_EXIT_FOUND;
		}
	}
	if (!quiet)
		wd_say(stdout,
		       "warden gc: %u crashed run%s cleaned up, %u pooled network%s removed, "
		       "%u address slot%s reclaimed%s",
		       runs, runs == 1 ? "" : "s", pooled, pooled == 1 ? "" : "s", slots,
		       slots == 1 ? "" : "s", table);
	containers(quiet);
	return ret;
}

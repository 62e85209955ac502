/* mode_rootless.h - rootless mode's namespaces (mode_rootless.c): the plan a short-lived maker
 * builds (a user and network namespace of the caller's own, lo, routes, the run's own nft
 * table, the gateway's sockets made inside), what it hands over, and the systemd user scope
 * of the limits. Daemon mode's bare namespaces and `warden doctor` use the maker too. Internal
 * to run/ (run/internal.h includes it). */
#ifndef WARDEN_RUN_MODE_ROOTLESS_H
#define WARDEN_RUN_MODE_ROOTLESS_H

#include "common/common.h"
#include "netns/netns.h"
#include "nft/nft.h"

#include <stdbool.h>
#include <sys/types.h>

struct run;

/* The descriptors a rootless run's maker hands over (run_rootless.c), in this order. */
enum {
	RUN_ROOTLESS_USERNS,
	RUN_ROOTLESS_NETNS,
	RUN_ROOTLESS_PROBE,
	RUN_ROOTLESS_NFLOG,
	RUN_ROOTLESS_LISTEN,
	RUN_ROOTLESS_NLISTEN = FW_RUN_NLISTEN, /* nft/inside.c fw_run_listeners() */
	/* the UDP relay's (when the table redirects UDP: fw_config.port_udp): its listeners at the
	 * run's gateway addresses, and a conntrack socket of the run's namespace */
	RUN_ROOTLESS_UDP4 = RUN_ROOTLESS_LISTEN + RUN_ROOTLESS_NLISTEN,
	RUN_ROOTLESS_UDP6,
	RUN_ROOTLESS_CT,
	RUN_ROOTLESS_NFDS,
};

/* The descriptors of struct run_rootless's @listen: the listeners, NFLOG, the UDP relay's three */
#define RUN_ROOTLESS_NGW (RUN_ROOTLESS_NLISTEN + 1 + FW_RUN_NUDP)

/**
 * struct run_rootless_plan - what the maker of a rootless run's namespaces builds
 * @uid:	the caller's uid, mapped onto itself
 * @gid:	the caller's gid, mapped onto itself
 * @fc:		the run's own table (FW_MODE_RUN, run_rootless_fw_config())
 * @addr:	the run's addresses (the gateway's at the host end)
 * @bare:	daemon mode: only the namespaces and an unbound probe socket (no addresses, no
 *		table, no gateway sockets: the daemon plumbs the network, the host's table
 *		enforces); @fc and @addr unused
 */
struct run_rootless_plan {
	uid_t uid;
	gid_t gid;
	struct fw_config fc;
	struct netns_addrs addr;
	bool bare;
};

/* The descriptors a bare maker (daemon mode) hands over: userns, netns, probe. */
#define RUN_ROOTLESS_NBARE 3

/**
 * struct run_rootless - a rootless run's namespaces and sockets (-1 when absent)
 * @userns_fd:	its user namespace
 * @netns_fd:	its network namespace
 * @probe_fd:	a UDP socket inside, bound to the program's IPv4 address (the liveness probe)
 * @listen:	what the gateway gets: its listening sockets inside, at the gateway's addresses,
 *		then the NFLOG socket bound to the table's group inside
 * @addr:	the addresses
 */
struct run_rootless {
	int userns_fd;
	int netns_fd;
	int probe_fd;
	int listen[RUN_ROOTLESS_NGW];
	struct netns_addrs addr;
};

/**
 * run_rootless_scope_pick() - whether a rootless run's limits go into a systemd user scope:
 * run_rootless_scope_usable() of the caller's $XDG_RUNTIME_DIR, RUN_SYSTEMD_RUN and
 * /sys/fs/cgroup; sets r->limits.scope. WARDEN_NO_SYSTEMD_SCOPE=1 keeps the fallback (to compare).
 */
void run_rootless_scope_pick(struct run *r);

/**
 * run_rootless_scope_prepare() - r->limits.scope_argv (run_rootless_scope_argv() for the run's id
 * and limits, running `env -i` ahead of the sandbox's command line) and r->limits.scope_env Return:
 * 0, or -ENOMEM.
 */
int run_rootless_scope_prepare(struct run *r);

/** run_rootless_scope_free() - release what run_rootless_scope_prepare() made. */
void run_rootless_scope_free(struct run *r);

/** run_rootless_init() - mark every descriptor of @rl absent. */
void run_rootless_init(struct run_rootless *rl);

/**
 * run_rootless_make() - a rootless run's user and network namespaces, made by a short-lived
 * child (run_rootless.c's theory of operation): lo, addresses, routes, the run's own nft table
 * (audited clean), the gateway's listening sockets and the probe's socket
 * @rl:		filled in (run_rootless_close() releases it)
 * @p:		what to build
 * @err:	what failed (nf_nat missing, user namespaces refused, ...), with the fix
 *
 * Return: 0, or a negative errno (nothing is left: the namespaces die with the child).
 */
int run_rootless_make(struct run_rootless *rl, const struct run_rootless_plan *p,
		      struct wd_err *err);

/**
 * run_rootless_down() - the network stage undone for a run with its own namespaces (rootless
 * and daemon modes): the held connection, the namespaces' descriptors
 */
void run_rootless_down(struct run *r);

/** run_rootless_close() - close what @rl holds (the namespaces go once nothing else holds them). */
void run_rootless_close(struct run_rootless *rl);

/**
 * run_rootless_up() - the network stage of a rootless run: run_rootless_make() with the run's
 * config and addresses; the addresses recorded as text (r->network.host4, r->network.host6, the
 * state's) Return: 0, or 125 (said).
 */
int run_rootless_up(struct run *r);

#endif

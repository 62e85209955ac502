/* run.h - the gateway's table of runs (internal header; run.c, runpolicy.c, runlimit.c):
 * registration from the control socket, attribution of a connection or query by its ingress address
 * pair, each run's compiled policy, synthetic addresses, counters and audit account, the connection
 * budget of every run and of the worker, and what the SSRF guard needs to know about this host.
 * Runs are reference-counted: an unregistered run lives on until its last connection or query lets
 * go of it. */
#ifndef WARDEN_GATEWAY_RUN_H
#define WARDEN_GATEWAY_RUN_H

#include "common/common.h"
#include "gateway/addr.h"
#include "gateway/auditrl.h"
#include "gateway/ctl.h"
#include "gateway/dnsbudget.h"
#include "gateway/ev.h"
#include "gateway/learn.h"
#include "gateway/synth.h"
#include "gateway/upload.h"
#include "conf/conf.h"
#include "policy/policy.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct gw_ssrf_env;

/**
 * struct gw_user - what all runs of one uid hold at once (the ceiling's per-user caps)
 * @next:	the next user with runs
 * @uid:	the uid
 * @runs:	its registered runs
 * @conns:	relayed and DNS-over-TCP connections of all its runs
 * @refs:	runs (registered or not yet freed) that point here
 * @dns_bucket:	the DNS queries its runs may have asked upstream (the ceiling's
 *		dns_queries_per_s: that many at once, then that many a second)
 * @dns_limited: queries refused for it
 */
struct gw_user {
	struct gw_user *next;
	uid_t uid;
	unsigned runs;
	unsigned conns;
	unsigned refs;
	struct gw_bucket dns_bucket;
	uint64_t dns_limited;
};

/**
 * struct gw_run - one registered run
 * @next:	the next registered run
 * @id:		its id
 * @uid:	who registered it (SO_PEERCRED)
 * @ifname:	the host side of its link
 * @host4:	the host side's IPv4 address (family 0: none), the run's own gateway
 * @sb4:	the sandbox's IPv4 address
 * @host6:	the same for IPv6
 * @sb6:	see @host6
 * @policy:	its compiled policy (with a ceiling: the effective one, policy_ceiling_apply())
 * @policy_name: its name, for messages and events
 * @ceiling:	the operator's ceiling (the configuration's; NULL: none)
 * @user:	its uid's account (per-user caps)
 * @synth:	its synthetic addresses
 * @refs:	references (the table's, connections', queries', the parent's requests')
 * @dead:	unregistered (out of the table, freed with its last reference)
 * @acct:	its account with the audit front (denials, budget, summaries)
 * @conns:	relayed connections and DNS-over-TCP connections now
 * @conns_total: relayed connections accepted, ever
 * @dns_queries: DNS queries
 * @bytes_up:	bytes relayed sandbox -> upstream (closed connections)
 * @bytes_down:	bytes relayed upstream -> sandbox
 * @drops:	what the nft table dropped of it (udplog.c)
 * @buffered:	bytes its connections hold in pipes and stashes
 * @dnsconns:	DNS-over-TCP connections (counted in @conns too)
 * @udp_flows:	its flows through the UDP relay now (at most GW_UDP_FLOWS_PER_RUN)
 * @learn:	registered with "learn": true: in learn mode for its life (its policy's rules
 *		are replaced by any name on any port within the host's ceiling; `replace` keeps it)
 * @learned:	learn mode: what it reached and was refused (the `learned` op)
 * @shadow:	registered with "shadow": true (`warden run --shadow`): its policy's denials are
 *		let through and audited as "would_deny" (decide.h, gw_tcp_decide_shadow());
 *		the host's ceiling, the SSRF guard and malformed bytes still deny
 * @up:		its upload budgets and what each name was sent (upload.h; set with its policy)
 * @dnsbudget:	its DNS exfiltration budget: the names charged under each wildcard parent
 *		(dnsbudget.h; kept across a `replace`: names asked before stay free)
 */
struct gw_run {
	struct gw_run *next;
	char id[GW_RUN_ID_MAX + 1];
	uid_t uid;
	char ifname[16];
	struct gw_addr host4, sb4, host6, sb6;
	struct wd_policy *policy;
	char policy_name[256];
	const struct policy_ceiling *ceiling;
	struct gw_user *user;
	struct gw_synth synth;
	unsigned refs;
	bool dead;
	struct gw_audit_acct acct;
	char user_name[64]; /* the uid's name for the audit events (acct.user), or "" */
	unsigned conns;
	uint64_t conns_total, dns_queries, bytes_up, bytes_down;
	uint64_t dns_limited; /* queries refused by its uid's DNS cap (gw_runs_dns_take()) */
	struct gw_droplog drops[GW_DROP_N];
	uint64_t buffered;
	unsigned dnsconns;
	size_t udp_flows;	 /* its UDP relay flows now (udprelay.c) */
	struct gw_toolcalls mcp; /* its MCP tool calls in flight, denials per tool (acct.mcp) */
	bool learn;
	struct gw_learn learned;
	bool shadow;
	bool asker;	/* its launcher can ask a person (network.ask: dnsask.c) */
	unsigned nasks; /* its asks pending */
	struct gw_uploads up;
	struct gw_dnsbudget dnsbudget;
};

/**
 * struct gw_runs - the table
 * @ev:		the loop
 * @audit:	the audit front (a run's summaries are written when it ends)
 * @conf:	the configuration (pools)
 * @lim:	the limits (connections, synthetic names)
 * @own_net:	the gateway's own pools: runs v4/v6, synthetic v4/v6
 * @own_prefix:	their prefix lengths
 * @list:	the registered runs, newest first
 * @n:		how many
 * @users:	the uids with runs (per-user caps)
 * @index:	runs by sandbox address: [0] v4, [1] v6
 * @nconns:	relayed and DNS-over-TCP connections of every run now
 * @fd_conns:	connections the descriptor limit leaves room for
 * @fd_pipes:	pipes it leaves room for (the relays' pool, gw_tcp_init())
 * @ctl_max:	control connections the descriptor share leaves room for (gw_fd_share())
 * @ctl_per_uid: of which one uid may hold this many
 * @local:	the host's own addresses (for the SSRF guard), @nlocal of them
 * @nlocal:	see @local
 * @local_at:	when they were read (monotonic ns)
 * @on_end:	called as a run leaves the table, before its summaries (set by gw.c:
 *		the drop log's summaries); may be NULL
 * @on_end_ctx:	its first argument
 * @on_policy:	called after a run's policy was replaced (gw_run_policy_changed(); set by gw.c:
 *		the TCP path closes the connections the new policy no longer allows); may be
 *		NULL
 * @on_policy_ctx: its first argument
 */
struct gw_runs {
	struct gw_ev *ev;
	struct gw_audit *audit;
	const struct wd_gwconf *conf;
	const struct gw_limits *lim;
	struct gw_addr own_net[4];
	unsigned own_prefix[4];
	struct gw_run *list;
	unsigned n;
	struct gw_user *users;
	struct wd_htable index[2];
	unsigned nconns;
	unsigned fd_conns;
	unsigned fd_pipes;
	unsigned ctl_max;
	unsigned ctl_per_uid;
	struct gw_addr *local;
	size_t nlocal;
	uint64_t local_at;
	void (*on_end)(void *ctx, struct gw_run *r);
	void *on_end_ctx;
	void (*on_policy)(void *ctx, struct gw_run *r);
	void *on_policy_ctx;
};

/**
 * gw_runs_init() - an empty table
 * @t:		the table
 * @ev:		the loop (clock, randomness)
 * @audit:	the audit front
 * @conf:	the configuration (borrowed: its pools)
 * @lim:	the limits (borrowed)
 * @err:	what failed
 *
 * The descriptors (RLIMIT_NOFILE) are shared out once by gw_fd_share(): @t->fd_conns for
 * relayed connections, @t->fd_pipes for their pipes, @t->ctl_max and @t->ctl_per_uid for control
 * connections.
 *
 * Return: 0, or -EINVAL (a pool does not parse).
 */
int gw_runs_init(struct gw_runs *t, struct gw_ev *ev, struct gw_audit *audit,
		 const struct wd_gwconf *conf, const struct gw_limits *lim, struct wd_err *err);

/** gw_runs_free() - unregister every run (its end is written) and free the table. */
void gw_runs_free(struct gw_runs *t);

/** gw_run_acct() - @r's audit account, or NULL (no run). */
static inline struct gw_audit_acct *gw_run_acct(struct gw_run *r)
{
	return r ? &r->acct : NULL;
}

/** gw_run_find_ingress() - the run whose link is @local (host side) and @peer (sandbox), or NULL.
 */
struct gw_run *gw_run_find_ingress(struct gw_runs *t, const struct gw_addr *local,
				   const struct gw_addr *peer);
/** gw_run_find_sandbox() - the registered run whose sandbox address is @a, or NULL. */
struct gw_run *gw_run_find_sandbox(struct gw_runs *t, const struct gw_addr *a);
/** gw_run_find_id() - the registered run called @id, or NULL. */
struct gw_run *gw_run_find_id(struct gw_runs *t, const char *id);

/**
 * gw_run_register() - add a run from a register request, owned by @uid
 * @t:		the table
 * @req:	a register request
 * @uid:	who asked
 * @why:	on error, a reason for the client
 * @why_size:	its size
 *
 * With a ceiling in the configuration the run's policy is the effective one (the
 * request's intersected with the ceiling in force for @uid and its groups), and the
 * ceiling's per-user cap on runs is checked; a refusal for that cap is audited.
 *
 * Return: 0; -EEXIST (id, interface or an address already used), -EINVAL
 * (addresses outside the pools, invalid policy), -EUSERS (the uid has as many
 * runs as the ceiling allows), -ENOMEM.
 */
int gw_run_register(struct gw_runs *t, const struct gw_ctl_req *req, uid_t uid, char *why,
		    size_t why_size);

/**
 * gw_run_policy_changed() - @r's policy was replaced (a `replace` that succeeded): the hook
 * (@t->on_policy) re-decides what @r has open
 */
void gw_run_policy_changed(struct gw_runs *t, struct gw_run *r);

/** gw_run_unregister() - remove @r from the table; it is freed with its last reference. */
void gw_run_unregister(struct gw_runs *t, struct gw_run *r);

/** gw_run_put() - drop one reference to @r (NULL is fine). */
void gw_run_put(struct gw_runs *t, struct gw_run *r);

/** gw_runs_audit_summaries() - write every run's pending audit summaries, then no run's. */
void gw_runs_audit_summaries(struct gw_runs *t);

/** gw_runs_conn_open() - count a new connection of @r (it holds a reference from now on). */
void gw_runs_conn_open(struct gw_runs *t, struct gw_run *r);

/** gw_runs_conn_close() - the connection of @r is gone (its reference is dropped). */
void gw_runs_conn_close(struct gw_runs *t, struct gw_run *r);

/**
 * gw_ssrf_env() - what the SSRF guard (gw_upstream_class()) needs besides the
 * special ranges: the gateway's pools and the host's own addresses (read at
 * most every 2 s)
 */
void gw_ssrf_env(struct gw_runs *t, struct gw_ssrf_env *env);

/* ------------------------------------------------------------ runpolicy.c */

/** gw_run_user_name() - @uid's user name into @out ("" when it has none, or the lookup fails). */
void gw_run_user_name(uid_t uid, char *out, size_t size);

/**
 * gw_run_set_policy() - compile @req's policy and make it @r's (the old one is freed)
 *
 * Under a ceiling (@r->ceiling) the policy installed is the effective one, so a
 * replace never widens past it.
 *
 * Return: 0; -EINVAL with the first diagnostic in @why (the old policy stays);
 * -ENOENT/-EIO (the uid's user or groups could not be looked up: refused, fail
 * closed); -ENOMEM.
 */
int gw_run_set_policy(struct gw_run *r, const struct gw_ctl_req *req, char *why, size_t why_size);

/**
 * gw_run_policy_bound() - replace @p by the effective policy the ceiling of @t's
 * config gives @uid's runs (unchanged without a ceiling), before any run exists:
 * what a daemon-mode register plumbs (its cgroup's limits) must be bounded too
 *
 * Return: 0, or as gw_run_set_policy() (@p unchanged, @why says why).
 */
int gw_run_policy_bound(const struct gw_runs *t, uid_t uid, struct wd_policy **p, char *why,
			size_t why_size);

/* ------------------------------------------------------------ runlimit.c */

/* descriptors kept for the listeners, the DNS front, the audit log, NFLOG, c-ares and a
 * control request's passing descriptors */
#define GW_FD_BASE 32
/* descriptors one relayed (or DNS-over-TCP) connection holds: its 2 sockets */
#define GW_FD_PER_CONN 2
/* and the pipes (2 descriptors each) a bulk direction borrows while bytes wait in one: one
 * per this many connections; past that share a bulk chunk is copied (relay.c) */
#define GW_CONNS_PER_PIPE 4
/* descriptors one control connection may hold: its socket and a namespace passed with a
 * register (until it is handed to the parent) */
#define GW_FD_PER_CTL 2

/**
 * struct gw_fd_share - what each kind of connection may hold of the worker's descriptors
 * @conns:	relayed and DNS-over-TCP connections at once
 * @ctl:	control connections at once
 * @ctl_per_uid: control connections one uid may hold
 * @pipes:	pipes open at once (the relays' pool: struct gw_pool's max_pipes)
 */
struct gw_fd_share {
	unsigned conns;
	unsigned pipes;
	unsigned ctl;
	unsigned ctl_per_uid;
};

/**
 * gw_fd_share() - share a descriptor limit out between the relays and the control socket (pure)
 * @nofile:	RLIMIT_NOFILE's soft limit; RLIM_INFINITY (or 0: unknown) bounds nothing
 * @lim:	the configured bounds (conns_total, ctl_total, ctl_per_uid)
 * @out:	the share
 *
 * GW_FD_BASE descriptors stay for the worker itself. Control connections may take at most a
 * quarter of the rest (GW_FD_PER_CTL each), and one uid at most half of what control has; the
 * relays get what the control connections can never take: GW_FD_PER_CONN for each connection
 * and a pipe (2) for each GW_CONNS_PER_PIPE of them, whatever the connections leave (bounded
 * by limits.connections) going to pipes. So no number of control connections, of one user or
 * of all, can take a descriptor a relay needs, and one user cannot take every control
 * connection. Each share is at least 1 (2 for control); without a limit (@nofile 0) pipes are
 * not bounded (UINT_MAX).
 */
void gw_fd_share(uint64_t nofile, const struct gw_limits *lim, struct gw_fd_share *out);

/* what a new connection of a run meets (gw_runs_conn_limit()) */
enum gw_conn_limit {
	GW_LIMIT_NONE = 0,
	GW_LIMIT_GATEWAY, /* limits.max_connections of the worker */
	GW_LIMIT_RUN,	  /* limits.max_connections_per_run */
	GW_LIMIT_USER,	  /* the ceiling's limits.connections for the run's uid */
};

/** gw_runs_room() - the descriptor limit leaves room for one more connection. */
bool gw_runs_room(const struct gw_runs *t);

/** gw_runs_conn_limit() - the connection limit one more connection of @r would pass, if any. */
enum gw_conn_limit gw_runs_conn_limit(const struct gw_runs *t, const struct gw_run *r);

/**
 * gw_runs_conn_refusal() - why one more connection of @r is refused, if it is: the one switch
 * over gw_runs_conn_limit() that the TCP path and DNS over TCP share
 * @t:		the run table
 * @r:		the run
 * @via:	appended to the reason ("" for TCP, " (DNS over TCP)")
 * @buf:	room for the reason
 * @size:	its size
 * Return: NULL (no limit is reached), or @buf holding the audit reason.
 */
const char *gw_runs_conn_refusal(const struct gw_runs *t, const struct gw_run *r, const char *via,
				 char *buf, size_t size);

/**
 * gw_runs_room_refusal() - the audit reason of a connection refused because the worker's
 * descriptor room (gw_runs_room()) stayed used up while it waited in the backlog
 * @t:		the run table
 * @via:	appended to the reason ("" for TCP, " (DNS over TCP)")
 * @buf:	room for the reason
 * @size:	its size
 * Return: @buf.
 */
const char *gw_runs_room_refusal(const struct gw_runs *t, const char *via, char *buf, size_t size);

/**
 * gw_runs_dns_take() - may @r ask the resolvers one more query now? Takes a token of its uid's
 * DNS bucket (the ceiling's dns_queries_per_s; no cap: always). A refusal is counted in the
 * run's, the user's and the worker's dns_limited.
 * Return: true (ask), false (refuse: the cap is reached).
 */
bool gw_runs_dns_take(struct gw_runs *t, struct gw_run *r);

#endif /* WARDEN_GATEWAY_RUN_H */

/* nft.h - Warden's nftables ruleset: one static table, per-run set elements, rendering and audit.
 *
 * The table (`table inet warden` by default) has a fixed shape: five base chains and eight named
 * sets. A run is five set elements (its veth name; the veth name paired with the sandbox's IPv4
 * and/or IPv6 address, the only sources allowed on it; and the veth name paired with the run's
 * own gateway addresses, the host-side addresses of that veth, the only host addresses it may
 * reach); adding or removing a run is one netlink batch that touches only set elements, so run
 * 1000 costs what run 1 costs. docs/nft.md explains every rule.
 *
 * One in-memory model (nft/model.c) describes the table; fw_render() prints it as `nft -f` text,
 * fw_install() turns the same model into libnftnl objects, and fw_audit() compares the live
 * ruleset against it. Nothing here prints; errors come back as a negative errno plus a
 * struct wd_err naming the object that failed ("add set element wd-3f9a to runs_v4: ...").
 */
#ifndef WARDEN_NFT_H
#define WARDEN_NFT_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/common.h"

/**
 * struct fw_config - what the ruleset depends on (filled from the gateway config by the caller)
 * @table:		table name, family is always inet ("warden" -> table inet warden);
 *			letters, digits and '_' only
 * @if_prefix:		host-side veth name prefix the wildcard rules match ("wd-" -> "wd-*");
 *			1..7 characters from [A-Za-z0-9_.-]
 * @port_transparent:	gateway port TCP is redirected to (15001)
 * @port_dns:		gateway DNS port, TCP and UDP (15053)
 * @port_proxy:		gateway explicit HTTP proxy port, reachable directly (15080)
 * @port_udp:		the gateway's UDP relay port; 0 (the default): no relay, no UDP is
 *			redirected (UDP to a synthetic address is dropped and logged as any other).
 *			Set, a run's UDP (not DNS) to @synth4 / @synth6 is redirected there
 * @synth4:		the synthetic IPv4 pool's network address (with @port_udp)
 * @synth4_prefix:	its length (1..32)
 * @synth6:		the synthetic IPv6 pool's network address (with @port_udp)
 * @synth6_prefix:	its length (1..128)
 * @nflog_group:	NFLOG group dropped packets are logged to (7000): other UDP and UDP-lite
 *			without a prefix, attempts at host addresses with FW_NFLOG_PREFIX_HOST,
 *			connections over @conns_per_run with FW_NFLOG_PREFIX_CONNS
 * @conns_per_run:	most open flows (conntrack entries other than closed TCP) one run may
 *			hold at once; new ones beyond it are dropped (default 4096; 16..1048576)
 * @new_per_s:		most new flows one run may open a second, with a burst of ten seconds'
 *			worth; closed TCP flows leave conntrack after FW_CT_CLOSED_S, so a run
 *			holds at most @conns_per_run + 20 * @new_per_s entries (default 200;
 *			1..100000)
 * @mode:		FW_MODE_HOST (the shared table above, on the host) or FW_MODE_RUN (the
 *			table of one rootless run, inside that run's own network namespace;
 *			docs/nft.md "The rootless ruleset")
 * @gw4:		FW_MODE_RUN: the gateway's IPv4 address inside the run's namespace, where
 *			every TCP connection and DNS query is sent (DNAT)
 * @gw6:		FW_MODE_RUN: the same for IPv6
 */
struct fw_config {
	char table[32];
	char if_prefix[8];
	uint16_t port_transparent;
	uint16_t port_dns;
	uint16_t port_proxy;
	uint16_t port_udp;
	struct in_addr synth4;
	uint8_t synth4_prefix;
	struct in6_addr synth6;
	uint8_t synth6_prefix;
	uint16_t nflog_group;
	uint32_t conns_per_run;
	uint32_t new_per_s;
	enum fw_mode {
		FW_MODE_HOST,
		FW_MODE_RUN,
	} mode;
	struct in_addr gw4;
	struct in6_addr gw6;
};

/* The NFLOG prefixes of the table's log rules, which the gateway reads to say what was dropped
 * (a packet logged without a prefix is other UDP or UDP-lite). */
#define FW_NFLOG_PREFIX_HOST "warden-host"
#define FW_NFLOG_PREFIX_CONNS "warden-conns"
/* FW_MODE_RUN: anything but TCP and UDP (ICMP, raw, other protocols), dropped in the run's
 * own namespace. */
#define FW_NFLOG_PREFIX_OTHER "warden-other"

/* Bounds and defaults of fw_config.conns_per_run and .new_per_s. */
#define FW_CONNS_PER_RUN_DEFAULT 4096u
#define FW_CONNS_PER_RUN_MIN 16u
#define FW_CONNS_PER_RUN_MAX 1048576u
#define FW_NEW_PER_S_DEFAULT 200u
#define FW_NEW_PER_S_MAX 100000u
/* Seconds a run's closed TCP flow (TIME_WAIT, CLOSE) stays in conntrack (the kernel's
 * default is 120 s for TIME_WAIT, and the kernel's connection count skips closed flows). */
#define FW_CT_CLOSED_S 10u

/**
 * struct fw_run - one run's facts, stored as set elements
 * @ifname:	host-side veth name, e.g. "wd-3f9a1c2b7e"; must start with the config's prefix
 * @has_v4:	@sbx4 is valid
 * @has_v6:	@sbx6 is valid
 * @sbx4:	the sandbox's IPv4 address: packets from @ifname must come from it
 * @sbx6:	the sandbox's IPv6 address: packets from @ifname must come from it
 * @has_gw4:	@gw4 is valid (needs @has_v4)
 * @has_gw6:	@gw6 is valid (needs @has_v6)
 * @gw4:	the run's own gateway address, IPv4: the host side of @ifname, the only host
 *		address packets from @ifname may reach (the gateway's ports there); without it
 *		no IPv4 reaches the gateway (fail closed)
 * @gw6:	the same for IPv6
 */
struct fw_run {
	char ifname[16];
	bool has_v4;
	bool has_v6;
	struct in_addr sbx4;
	struct in6_addr sbx6;
	bool has_gw4;
	bool has_gw6;
	struct in_addr gw4;
	struct in6_addr gw6;
};

/** enum fw_finding_level - how bad an audit finding is */
enum fw_finding_level {
	FW_VIOLATION, /* an invariant is broken: audit fails */
	FW_NOTE,      /* worth a look, cannot open a hole (e.g. a foreign accept) */
};

/**
 * struct fw_finding - one line of an audit report
 * @level:	violation or note
 * @object:	what it is about ("table inet warden", "chain inet warden input", ...)
 * @msg:	what is wrong, one line, no trailing newline
 */
struct fw_finding {
	enum fw_finding_level level;
	char object[128];
	char msg[512];
};

/**
 * struct fw_audit_report - the result of fw_audit()
 * @items:	findings in the order they were found
 * @n:		number of @items
 * @cap:	allocated @items
 * @violations:	how many of @items are FW_VIOLATION
 * @notes:	how many of @items are FW_NOTE
 * @runs_if:	elements in the run interface set (when readable)
 * @runs_v4:	elements in the IPv4 anti-spoof set
 * @runs_v6:	elements in the IPv6 anti-spoof set
 * @gw_v4:	elements in the set of the runs' own IPv4 gateway addresses
 * @gw_v6:	elements in the set of the runs' own IPv6 gateway addresses
 */
struct fw_audit_report {
	struct fw_finding *items;
	size_t n;
	size_t cap;
	size_t violations;
	size_t notes;
	unsigned runs_if;
	unsigned runs_v4;
	unsigned runs_v6;
	unsigned gw_v4;
	unsigned gw_v6;
};

/**
 * fw_config_defaults() - fill @c with the defaults: table "warden", prefix "wd-",
 * ports 15001/15053/15080, NFLOG group 7000, 4096 open flows and 200 new ones a second per run
 * @c:	config to fill
 */
void fw_config_defaults(struct fw_config *c);

/**
 * fw_config_check() - validate a config before it is rendered or installed
 * @c:		config to check
 * @err:	filled with the offending field on failure; may be NULL
 *
 * Return: 0, or -EINVAL (bad table name, prefix, zero or clashing ports, a connection limit out
 * of range).
 */
int fw_config_check(const struct fw_config *c, struct wd_err *err);

/**
 * fw_render() - append the ruleset as `nft -f` text to @out
 * @c:		config (checked with fw_config_check())
 * @out:	buffer to append to
 *
 * The text starts with the "table ...; delete table ..." idiom, so loading it replaces the table
 * atomically; it is deterministic (same config, same bytes) and describes exactly what
 * fw_install() creates.
 *
 * Return: 0, -EINVAL for a bad config, or -ENOMEM.
 */
int fw_render(const struct fw_config *c, struct wd_buf *out);

/**
 * fw_config_rootless() - turn @c into the config of a rootless run's own table (FW_MODE_RUN)
 * @c:		a config (table name, ports, NFLOG group are kept)
 * @gw4:	the gateway's IPv4 address inside the run's namespace
 * @gw6:	the same for IPv6
 */
void fw_config_rootless(struct fw_config *c, const struct in_addr *gw4, const struct in6_addr *gw6);

/**
 * fw_install() - create or replace the table in the current network namespace, one batch
 * @c:		config
 * @err:	names the object that failed; may be NULL
 *
 * Replacing drops every run element: runs registered before must be added again (until then
 * their traffic is dropped: fail closed).
 *
 * Return: 0, or a negative errno (-EPERM without CAP_NET_ADMIN, -EINVAL bad config, ...).
 */
int fw_install(const struct fw_config *c, struct wd_err *err);

/**
 * fw_uninstall() - delete the table
 * @c:		config (only the table name is used)
 * @err:	may be NULL
 *
 * Return: 0 (also when the table does not exist), or a negative errno.
 */
int fw_uninstall(const struct fw_config *c, struct wd_err *err);

/**
 * fw_run_add() - register a run: add its set elements in one batch
 * @c:		config
 * @r:		the run; @r->ifname must start with @c->if_prefix
 * @err:	names the element that failed; may be NULL
 *
 * Adds @r->ifname to runs_if, (ifname . sandbox address) to runs_v4 / runs_v6 and (ifname .
 * gateway address) to gw_v4 / gw_v6, in one batch. Adding an element that is already there is
 * not an error.
 *
 * Return: 0, -EINVAL for a bad run, -ENOENT when the table is not installed, or another
 * negative errno.
 */
int fw_run_add(const struct fw_config *c, const struct fw_run *r, struct wd_err *err);

/**
 * fw_run_del() - unregister a run: delete its set elements in one batch
 * @c:		config
 * @r:		the run (same facts as given to fw_run_add())
 * @err:	may be NULL
 *
 * Elements that are already absent are skipped (the batch is retried without them), so
 * deleting twice, or deleting a half-registered run, succeeds. A missing table is also 0.
 *
 * Return: 0, or a negative errno.
 */
int fw_run_del(const struct fw_config *c, const struct fw_run *r, struct wd_err *err);

/**
 * struct fw_conn - an open nftables netlink connection that a long-lived caller (the gateway's
 * privileged side, a test creating many runs) reuses across fw_conn_run_add()/_del() calls
 *
 * Why: closing a netfilter netlink socket waits for the kernel to finish the deferred work of
 * earlier deletions (an RCU grace period, several milliseconds); a reused connection pays it
 * once, at fw_conn_close(), instead of on every run teardown.
 */
struct fw_conn;

/**
 * fw_conn_open() - open a connection in the current network namespace
 * @ret:	the connection, on success (close with fw_conn_close())
 * @err:	may be NULL
 *
 * Return: 0, or a negative errno.
 */
int fw_conn_open(struct fw_conn **ret, struct wd_err *err);

/** fw_conn_close() - close @conn; NULL is fine. May block for a few milliseconds (see above). */
void fw_conn_close(struct fw_conn *conn);

/**
 * fw_conn_run_add() - fw_run_add() over an open connection
 * Return: as fw_run_add().
 */
int fw_conn_run_add(struct fw_conn *conn, const struct fw_config *c, const struct fw_run *r,
		    struct wd_err *err);

/**
 * fw_conn_run_del() - fw_run_del() over an open connection
 * Return: as fw_run_del().
 */
int fw_conn_run_del(struct fw_conn *conn, const struct fw_config *c, const struct fw_run *r,
		    struct wd_err *err);

/**
 * fw_audit() - read the live ruleset over netlink and check Warden's invariants
 * @c:		config the table should match
 * @rep:	zeroed report, filled with findings (free with fw_audit_report_free())
 * @err:	netlink / memory errors; may be NULL
 *
 * Checks: the table, sets and chains exist with the expected types, hooks, priorities and
 * policies; every chain holds exactly the model's rules in order (a missing, extra or reordered
 * rule is a violation, and an extra rule that accepts or redirects is called out as such, in
 * particular one that accepts a gateway port without matching the run's own gateway address);
 * the
 * gateway port sets hold exactly the configured ports; in other tables, a NAT chain at
 * prerouting with an earlier or equal priority whose rules may see traffic from the prefix is a
 * violation (it would pre-empt the redirect), while foreign accepts and drops are notes.
 *
 * Return: 0 when the audit ran (look at @rep->violations), or a negative errno when the
 * ruleset could not be read.
 */
int fw_audit(const struct fw_config *c, struct fw_audit_report *rep, struct wd_err *err);

/**
 * fw_table_present() - whether the table of @c exists in the current network namespace (what
 * `warden status` shows of the table that stays between runs)
 * @c:		config (only the table name is used)
 * @err:	netlink errors; may be NULL
 * Return: 1 present, 0 absent, or a negative errno (the ruleset could not be read).
 */
int fw_table_present(const struct fw_config *c, struct wd_err *err);

/**
 * fw_audit_report_free() - release the findings in @rep and zero it; @rep may be NULL
 */
void fw_audit_report_free(struct fw_audit_report *rep);

/* inside.c: what a run's own namespace (FW_MODE_RUN) hands its gateway, made inside it */

/* The gateway's listening sockets of a run's namespace, in this order: transparent, proxy,
 * DNS over UDP, DNS over TCP; IPv4 then IPv6 of each. */
#define FW_RUN_NLISTEN 8

/**
 * fw_run_listeners() - the gateway's listening sockets of a run's own namespace, bound in the
 * current network namespace at the gateway's addresses and @c's ports (the order above)
 * @c:		the run's config (its ports)
 * @gw4:	the gateway's IPv4 address in the namespace
 * @gw6:	its IPv6 address
 * @fds:	filled with FW_RUN_NLISTEN descriptors (CLOEXEC); all -1 on failure
 * @err:	which one could not be bound
 * Return: 0, or a negative errno (nothing is left open).
 */
int fw_run_listeners(const struct fw_config *c, const struct in_addr *gw4,
		     const struct in6_addr *gw6, int fds[FW_RUN_NLISTEN], struct wd_err *err);

/**
 * fw_nflog_bind() - a netlink socket bound to NFLOG group @group in the current network
 * namespace (CAP_NET_ADMIN there), with the settings of the gateway's own socket
 * (gateway/nflog.c gw_nflog_open(): keep them in step): every packet at once, its first 128
 * bytes
 * @group:	the run's table's NFLOG group
 * @err:	why not
 * Return: the descriptor (CLOEXEC), or a negative errno.
 */
int fw_nflog_bind(uint16_t group, struct wd_err *err);

/* The UDP relay's sockets of a run's namespace (when its table redirects UDP to a synthetic
 * address: fw_config.port_udp), in this order: the listeners at IPv4 and IPv6, conntrack's. */
#define FW_RUN_NUDP 3

/**
 * fw_run_udp_sockets() - the UDP relay's sockets of a run's own namespace, made in the current
 * network namespace: its listeners at the gateway's addresses and @c's port_udp, and a
 * NETLINK_NETFILTER socket through which a process with CAP_NET_ADMIN over the namespace asks
 * conntrack for a redirected flow's original destination (the order above)
 * @c:		the run's config (port_udp, not 0)
 * @gw4:	the gateway's IPv4 address in the namespace
 * @gw6:	its IPv6 address
 * @fds:	filled with FW_RUN_NUDP descriptors (CLOEXEC); all -1 on failure
 * @err:	which one could not be made
 * Return: 0, or a negative errno (nothing is left open).
 */
int fw_run_udp_sockets(const struct fw_config *c, const struct in_addr *gw4,
		       const struct in6_addr *gw6, int fds[FW_RUN_NUDP], struct wd_err *err);

#endif /* WARDEN_NFT_H */

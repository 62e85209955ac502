/* conf.h - the gateway configuration (deploy/examples/gateway.yaml): struct wd_gwconf, its
 * defaults, its strict parse (the same YAML machinery and file:line:col diagnostics as a
 * policy's, policy/yaml.h) and its rendering (the launcher hands it to an embedded gateway,
 * the privileged parent to its worker). gwconf.c; the audit.ship sink is audit/'s
 * (audit_sink_parse()), the ceiling policy/'s (policy_ceiling_parse()).
 *
 * Its translations into the host's plumbing (nft table, run networks) are conf/host.h's, a
 * library of their own (wd_conf_host) so that the gateway's worker, which parses the
 * configuration, links neither libnftnl nor libnl.
 */
#ifndef WARDEN_CONF_H
#define WARDEN_CONF_H

#include "audit/audit.h"
#include "common/common.h"
#include "policy/policy.h"

#include <stddef.h>
#include <stdint.h>

/* where the gateway daemon keeps its key for the central log's run records (audit.key) */
#define WD_GW_AUDIT_KEY_DEFAULT "/var/lib/warden/gateway-audit-key.pem"

/* what a gateway serves (mode): runs whose every connection nftables redirects to it
 * (transparent: its transparent, DNS and proxy ports), or one run whose clients are told to use
 * its proxy port on loopback (proxy: macOS and Windows, where no redirect exists; docs/gateway.md
 * "Proxy mode") */
enum wd_gw_mode {
	WD_GW_TRANSPARENT = 0,
	WD_GW_PROXY,
};

/**
 * struct wd_gwconf - warden-gateway configuration (deploy/examples/gateway.yaml)
 * @mode:		transparent (default) or proxy (mode)
 * @port_transparent:	redirected TCP lands here (ports.transparent)
 * @port_dns:		redirected DNS lands here (ports.dns)
 * @port_proxy:		explicit HTTP proxy port (ports.proxy)
 * @port_udp:		the UDP relay: redirected datagrams to a synthetic address land here
 *			(ports.udp)
 * @nft_table:		name of the `inet` table (nft.table)
 * @if_prefix:		host-side veth name prefix (nft.interface_prefix)
 * @nflog_group:	NFLOG group for dropped packets (nft.nflog_group)
 * @nft_conns_per_run:	most open flows (conntrack entries) a run may hold (nft.conntrack_per_run)
 * @nft_new_per_s:	most new flows a run may open a second (nft.conntrack_new_per_s)
 * @pool_v4:		runs' veth links (pools.runs_v4)
 * @pool_v6:		(pools.runs_v6)
 * @synth_v4:		synthetic DNS answers (pools.synthetic_v4)
 * @synth_v6:		(pools.synthetic_v6)
 * @audit_path:		audit log (audit.path); "" = the launcher's default
 * @audit_key:		the daemon's key for its signed run records (audit.key); "" =
 *			WD_GW_AUDIT_KEY_DEFAULT
 * @audit_ship:		where a copy of each event is shipped (audit.ship, audit.facility);
 *			kind AUDIT_SINK_NONE: nowhere
 * @user:		unprivileged user of the data plane (user)
 * @resolvers:		upstream DNS servers, "ADDR" or "ADDR:PORT" / "[V6]:PORT"
 *			(resolvers); none: the host's /etc/resolv.conf
 * @nresolvers:		how many of @resolvers are set
 * @control_path:	the control socket (control.path)
 * @ctl_conns:		control connections open at once, every user's (control.connections)
 * @ctl_conns_per_user:	control connections one uid may hold open (control.connections_per_user);
 *			a daemon-mode run holds one for its life
 * @ctl_request_ms:	time a control connection has to send a whole request, counted from
 *			its accept or the end of its previous request, never re-armed by a
 *			byte (control.request_timeout_ms)
 * @listen_v4:		IPv4 address the gateway's sockets bind (listen.v4);
 *			"" (written `""`): no IPv4 sockets
 * @listen_v6:		IPv6 address (listen.v6); "": no IPv6 sockets
 * @max_conns:		relayed connections at once (limits.connections)
 * @max_conns_per_run:	per run (limits.connections_per_run)
 * @peek_timeout_ms:	wait for a client's first bytes (limits.peek_timeout_ms)
 * @connect_timeout_ms:	wait for each upstream connect (limits.connect_timeout_ms)
 * @idle_timeout_s:	an idle relayed connection is closed (limits.idle_timeout_s)
 * @udp_idle_timeout_s: a UDP relay flow without a datagram either way this long ends
 *			(limits.udp_idle_timeout_s)
 * @dns_ttl_floor_s:	name cache TTL floor (limits.dns_ttl_floor_s)
 * @dns_ttl_ceiling_s:	name cache TTL ceiling (limits.dns_ttl_ceiling_s)
 * @audit_kib_per_run:	audit bytes (KiB) a run's events may take; past it the
 *			run gets summaries only (limits.audit_kib_per_run)
 * @socket_buffer_kib:	SO_RCVBUF and SO_SNDBUF of every relayed socket
 *			(limits.socket_buffer_kib)
 * @run_buffer_kib:	bytes (KiB) a run's connections may hold in the gateway's
 *			pipes and buffers; past it their sources are not read
 *			(limits.run_buffer_kib)
 * @ceiling:		the operator's ceiling (ceiling); NULL: none (owned: free the
 *			configuration with conf_free(); a struct copy borrows it)
 */
struct wd_gwconf {
	enum wd_gw_mode mode;	      /* default transparent */
	uint16_t port_transparent;    /* default 15001 */
	uint16_t port_dns;	      /* default 15053 */
	uint16_t port_proxy;	      /* default 15080 */
	uint16_t port_udp;	      /* default 15054 */
	char nft_table[32];	      /* default "warden" */
	char if_prefix[8];	      /* default "wd-" */
	uint16_t nflog_group;	      /* default 7000 */
	uint32_t nft_conns_per_run;   /* default 4096 */
	uint32_t nft_new_per_s;	      /* default 200 */
	char pool_v4[64];	      /* runs' veth links, default "10.213.0.0/16" */
	char pool_v6[64];	      /* default "fd77:7764:6e00::/48" */
	char synth_v4[64];	      /* synthetic answers, default "100.96.0.0/12" */
	char synth_v6[64];	      /* default "fd77:7764:5300::/48" */
	char audit_path[4096];	      /* default "" = the launcher's default */
	char audit_key[4096];	      /* default "" = WD_GW_AUDIT_KEY_DEFAULT */
	struct audit_sink audit_ship; /* default: none, facility authpriv */
	char user[64];		      /* default "nobody" */
	char resolvers[4][64];	      /* default: none (/etc/resolv.conf) */
	uint32_t nresolvers;
	char control_path[108];	     /* default "/run/warden/gateway.sock" */
	uint32_t ctl_conns;	     /* default 1024 */
	uint32_t ctl_conns_per_user; /* default 64 */
	uint32_t ctl_request_ms;     /* default 5000 */
	char listen_v4[16];	     /* default "0.0.0.0" */
	char listen_v6[48];	     /* default "::" */
	uint32_t max_conns;	     /* default 4096 */
	uint32_t max_conns_per_run;  /* default 1024 */
	uint32_t peek_timeout_ms;    /* default 5000 */
	uint32_t connect_timeout_ms; /* default 5000 */
	uint32_t idle_timeout_s;     /* default 300 */
	uint32_t udp_idle_timeout_s; /* default 60 */
	uint32_t dns_ttl_floor_s;    /* default 5 */
	uint32_t dns_ttl_ceiling_s;  /* default 300 */
	uint32_t audit_kib_per_run;  /* default 16384 */
	uint32_t socket_buffer_kib;  /* default 1024 */
	uint32_t run_buffer_kib;     /* default 16384 */
	struct policy_ceiling *ceiling;
};

/** conf_defaults() - fill @c with the defaults above. */
void conf_defaults(struct wd_gwconf *c);

/**
 * conf_parse() - parse a gateway config (pure: no I/O)
 * @buf:	the bytes
 * @len:	number of bytes
 * @filename:	name used in diagnostics
 * @c:		filled in: defaults first, then the file's values. On error
 *		its contents are unspecified.
 * @d:		diagnostics are appended here
 *
 * Return: 0, -EINVAL (errors listed in @d), or -ENOMEM.
 */
int conf_parse(const char *buf, size_t len, const char *filename, struct wd_gwconf *c,
	       struct policy_diags *d);

/**
 * conf_load() - read and parse a gateway config file, or take the defaults
 * @path:	file to read; NULL: no file, @c gets conf_defaults() (and 0 is returned)
 * @c:		as for conf_parse()
 * @d:		diagnostics (an unreadable file is one error without position)
 *
 * Return: 0, -EINVAL, a negative errno from reading the file, or -ENOMEM.
 */
int conf_load(const char *path, struct wd_gwconf *c, struct policy_diags *d);

/**
 * conf_render_yaml() - append @c as a complete gateway config file
 *
 * The ceiling's rules, limits and scopes are written with their `from` (where
 * the file they were read from has them), so a config handed on keeps citing the
 * operator's file.
 *
 * Return: 0, or -ENOMEM.
 */
int conf_render_yaml(const struct wd_gwconf *c, struct wd_buf *out);

/** conf_free() - release what @c owns (its ceiling) and set it to NULL; @c may be NULL. */
void conf_free(struct wd_gwconf *c);

#endif /* WARDEN_CONF_H */

/* gwconf.c - the warden-gateway configuration file: strict YAML -> struct
 * wd_gwconf, with the same file:line:col diagnostics as policies. */
#include "conf/conf.h"
#include "policy/yaml.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

void conf_defaults(struct wd_gwconf *c)
{
	memset(c, 0, sizeof(*c));
	c->port_transparent = 15001;
	c->port_dns = 15053;
	c->port_proxy = 15080;
	c->port_udp = 15054;
	snprintf(c->nft_table, sizeof(c->nft_table), "warden");
	snprintf(c->if_prefix, sizeof(c->if_prefix), "wd-");
	c->nflog_group = 7000;
	c->nft_conns_per_run = 4096;
	c->nft_new_per_s = 200;
	snprintf(c->pool_v4, sizeof(c->pool_v4), "10.213.0.0/16");
	snprintf(c->pool_v6, sizeof(c->pool_v6), "fd77:7764:6e00::/48");
	snprintf(c->synth_v4, sizeof(c->synth_v4), "100.96.0.0/12");
	snprintf(c->synth_v6, sizeof(c->synth_v6), "fd77:7764:5300::/48");
	c->user[0] = '\0';
	snprintf(c->user, sizeof(c->user), "nobody");
	snprintf(c->control_path, sizeof(c->control_path), "/run/warden/gateway.sock");
	c->ctl_conns = 1024;
	c->ctl_conns_per_user = 64;
	c->ctl_request_ms = 5000;
	snprintf(c->listen_v4, sizeof(c->listen_v4), "0.0.0.0");
	snprintf(c->listen_v6, sizeof(c->listen_v6), "::");
	c->max_conns = 4096;
	c->max_conns_per_run = 1024;
	c->peek_timeout_ms = 5000;
	c->connect_timeout_ms = 5000;
	c->idle_timeout_s = 300;
	c->udp_idle_timeout_s = 60;
	c->dns_ttl_floor_s = 5;
	c->dns_ttl_ceiling_s = 300;
	c->audit_kib_per_run = 16384;
	c->audit_ship.facility = AUDIT_SINK_FACILITY_DEFAULT;
	c->socket_buffer_kib = 1024;
	c->run_buffer_kib = 16384;
}

enum {
	TOP_VERSION,
	TOP_PORTS,
	TOP_NFT,
	TOP_POOLS,
	TOP_AUDIT,
	TOP_USER,
	TOP_RESOLVERS,
	TOP_CONTROL,
	TOP_LISTEN,
	TOP_LIMITS,
	TOP_CEILING,
	TOP_MODE,
	TOP_N
};
static const char *const top_keys[TOP_N] = {"version", "ports",	 "nft",	      "pools",
					    "audit",   "user",	 "resolvers", "control",
					    "listen",  "limits", "ceiling",   "mode"};

enum { CONTROL_PATH, CONTROL_CONNS, CONTROL_CONNS_USER, CONTROL_REQUEST, CONTROL_N };
static const char *const control_keys[CONTROL_N] = {"path", "connections", "connections_per_user",
						    "request_timeout_ms"};

enum { LISTEN_V4, LISTEN_V6, LISTEN_N };
static const char *const listen_keys[LISTEN_N] = {"v4", "v6"};

enum {
	LIM_CONNS,
	LIM_CONNS_RUN,
	LIM_PEEK,
	LIM_CONNECT,
	LIM_IDLE,
	LIM_TTL_FLOOR,
	LIM_TTL_CEIL,
	LIM_AUDIT,
	LIM_SOCKBUF,
	LIM_RUNBUF,
	LIM_UDP_IDLE,
	LIM_N
};
static const char *const limit_keys[LIM_N] = {
    "connections",	 "connections_per_run", "peek_timeout_ms",   "connect_timeout_ms",
    "idle_timeout_s",	 "dns_ttl_floor_s",	"dns_ttl_ceiling_s", "audit_kib_per_run",
    "socket_buffer_kib", "run_buffer_kib",	"udp_idle_timeout_s"};
/* allowed range of each limit */
static const struct {
	uint32_t min, max;
} limit_range[LIM_N] = {
    [LIM_CONNS] = {1, 1000000},	   [LIM_CONNS_RUN] = {1, 1000000}, [LIM_PEEK] = {100, 600000},
    [LIM_CONNECT] = {100, 600000}, [LIM_IDLE] = {1, 604800},	   [LIM_TTL_FLOOR] = {0, 86400},
    [LIM_TTL_CEIL] = {1, 86400},   [LIM_AUDIT] = {64, 4194304},	   [LIM_SOCKBUF] = {16, 65536},
    [LIM_RUNBUF] = {256, 4194304}, [LIM_UDP_IDLE] = {1, 86400},
};

enum { PORT_TRANSPARENT, PORT_DNS, PORT_PROXY, PORT_UDP, PORT_N };
static const char *const port_keys[PORT_N] = {"transparent", "dns", "proxy", "udp"};

enum { NFT_TABLE, NFT_IFPREFIX, NFT_NFLOG, NFT_CONNS, NFT_NEW, NFT_N };
static const char *const nft_keys[NFT_N] = {"table", "interface_prefix", "nflog_group",
					    "conntrack_per_run", "conntrack_new_per_s"};

enum { POOL_RUNS4, POOL_RUNS6, POOL_SYN4, POOL_SYN6, POOL_N };
static const char *const pool_keys[POOL_N] = {"runs_v4", "runs_v6", "synthetic_v4", "synthetic_v6"};

enum { AUDIT_PATH, AUDIT_SHIP, AUDIT_FACILITY, AUDIT_KEY, AUDIT_N };
static const char *const audit_keys[AUDIT_N] = {"path", "ship", "facility", "key"};

/* allowed sizes of each pool: [family, min prefix, max prefix] */
static const struct {
	int family;
	unsigned min, max;
} pool_rules[POOL_N] = {
    [POOL_RUNS4] = {AF_INET, 8, 24},
    [POOL_RUNS6] = {AF_INET6, 16, 112},
    [POOL_SYN4] = {AF_INET, 8, 24},
    [POOL_SYN6] = {AF_INET6, 16, 112},
};

/* a name made of the characters in @set, 1..@max bytes; reports otherwise */
static int want_name(struct policy_diags *d, const struct policy_yt_node *n, const char *what,
		     const char *set, const char *set_text, size_t max, char *out)
{
	const char *s = policy_yt_str(d, n, what);

	if (!s)
		return -EINVAL;
	if (strlen(s) > max) {
		policy_diag_err(d, n, "%s: `%s` is %zu characters long; expected at most %zu", what,
				s, strlen(s), max);
		return -EINVAL;
	}
	if (strspn(s, set) != strlen(s)) {
		policy_diag_err(d, n, "%s: `%s` has the character `%c`; expected only %s", what, s,
				s[strspn(s, set)], set_text);
		return -EINVAL;
	}
	memcpy(out, s, strlen(s) + 1);
	return 0;
}

static int parse_ports(struct policy_diags *d, const struct policy_yt_node *n, struct wd_gwconf *c)
{
	const struct policy_yt_node *v[PORT_N];
	uint16_t *dst[PORT_N] = {&c->port_transparent, &c->port_dns, &c->port_proxy, &c->port_udp};
	int ret = 0;

	if (policy_yt_map_keys(d, n, "`ports`", port_keys, PORT_N, v))
		return -EINVAL;
	for (int i = 0; i < PORT_N; i++) {
		char what[64];
		uint64_t port;

		if (!v[i])
			continue;
		snprintf(what, sizeof(what), "ports.%s", port_keys[i]);
		if (policy_yt_uint(d, v[i], what, 1, 65535, &port))
			ret = -EINVAL;
		else
			*dst[i] = (uint16_t)port;
	}
	for (int i = 0; i < PORT_N; i++)
		for (int j = i + 1; j < PORT_N; j++)
			if (*dst[i] == *dst[j]) {
				const struct policy_yt_node *at = v[j] ? v[j] : (v[i] ? v[i] : n);

				policy_diag_err(
				    d, at,
				    "ports.%s and ports.%s are both %u; expected distinct "
				    "ports",
				    port_keys[i], port_keys[j], *dst[i]);
				ret = -EINVAL;
			}
	return ret;
}

static int parse_nft(struct policy_diags *d, const struct policy_yt_node *n, struct wd_gwconf *c)
{
	const struct policy_yt_node *v[NFT_N];
	uint64_t group, conns, rate;
	int ret = 0;

	if (policy_yt_map_keys(d, n, "`nft`", nft_keys, NFT_N, v))
		return -EINVAL;
	if (v[NFT_TABLE] && want_name(d, v[NFT_TABLE], "nft.table",
				      "abcdefghijklmnopqrstuvwxyz"
				      "0123456789_",
				      "a-z, 0-9 and _", sizeof(c->nft_table) - 1, c->nft_table))
		ret = -EINVAL;
	if (v[NFT_IFPREFIX] &&
	    want_name(d, v[NFT_IFPREFIX], "nft.interface_prefix",
		      "abcdefghijklmnopqrstuvwxyz0123456789-_", "a-z, 0-9, - and _",
		      sizeof(c->if_prefix) - 1, c->if_prefix))
		ret = -EINVAL;
	if (v[NFT_NFLOG]) {
		if (policy_yt_uint(d, v[NFT_NFLOG], "nft.nflog_group", 0, 65535, &group))
			ret = -EINVAL;
		else
			c->nflog_group = (uint16_t)group;
	}
	if (v[NFT_CONNS]) {
		/* the bounds of fw_config_check() (nft/ is not a dependency of policy/) */
		if (policy_yt_uint(d, v[NFT_CONNS], "nft.conntrack_per_run", 16, 1048576, &conns))
			ret = -EINVAL;
		else
			c->nft_conns_per_run = (uint32_t)conns;
	}
	if (v[NFT_NEW]) {
		if (policy_yt_uint(d, v[NFT_NEW], "nft.conntrack_new_per_s", 1, 100000, &rate))
			ret = -EINVAL;
		else
			c->nft_new_per_s = (uint32_t)rate;
	}
	return ret;
}

static int parse_pools(struct policy_diags *d, const struct policy_yt_node *n, struct wd_gwconf *c)
{
	const struct policy_yt_node *v[POOL_N];
	char *dst[POOL_N] = {c->pool_v4, c->pool_v6, c->synth_v4, c->synth_v6};
	struct wd_cidr net[POOL_N];
	int ret = 0;

	if (policy_yt_map_keys(d, n, "`pools`", pool_keys, POOL_N, v))
		return -EINVAL;
	for (int i = 0; i < POOL_N; i++) {
		enum wd_cidr_result r;
		const char *s;
		char canon[64];

		if (!v[i])
			continue;
		s = policy_yt_str(d, v[i], pool_keys[i]);
		if (!s) {
			ret = -EINVAL;
			continue;
		}
		r = wd_cidr_parse(s, 0, &net[i]);
		if (r == WD_CIDR_HOST_BITS) {
			wd_cidr_format(net[i].family, net[i].addr, net[i].prefix, canon,
				       sizeof(canon));
			policy_diag_err(d, v[i],
					"pools.%s: `%s` has host bits set; expected the network "
					"address `%s`",
					pool_keys[i], s, canon);
			ret = -EINVAL;
			continue;
		}
		if (r != WD_CIDR_OK || net[i].family != pool_rules[i].family) {
			policy_diag_err(
			    d, v[i], "pools.%s: found `%s`; expected an %s range like `%s`",
			    pool_keys[i], s, pool_rules[i].family == AF_INET ? "IPv4" : "IPv6",
			    pool_rules[i].family == AF_INET ? "10.213.0.0/16"
							    : "fd77:7764:6e00::/48");
			ret = -EINVAL;
			continue;
		}
		if (net[i].prefix < pool_rules[i].min || net[i].prefix > pool_rules[i].max) {
			policy_diag_err(
			    d, v[i], "pools.%s: prefix /%u is out of range; expected /%u to /%u",
			    pool_keys[i], net[i].prefix, pool_rules[i].min, pool_rules[i].max);
			ret = -EINVAL;
			continue;
		}
		wd_cidr_format(net[i].family, net[i].addr, net[i].prefix, dst[i], 64);
	}
	if (ret)
		return ret;
	/* the pools must not overlap: compare every pair (defaults included) */
	for (int i = 0; i < POOL_N; i++) {
		if (wd_cidr_parse(dst[i], 0, &net[i]) != WD_CIDR_OK)
			return -EINVAL;
	}
	for (int i = 0; i < POOL_N; i++)
		for (int j = i + 1; j < POOL_N; j++) {
			unsigned p = net[i].prefix < net[j].prefix ? net[i].prefix : net[j].prefix;
			const struct policy_yt_node *at = v[j] ? v[j] : (v[i] ? v[i] : n);

			if (net[i].family != net[j].family ||
			    !wd_prefix_contains(net[i].family, net[i].addr, p, net[j].addr))
				continue;
			policy_diag_err(d, at,
					"pools.%s (%s) and pools.%s (%s) overlap; expected "
					"separate ranges",
					pool_keys[i], dst[i], pool_keys[j], dst[j]);
			ret = -EINVAL;
		}
	return ret;
}

/* audit.ship ("unix:PATH", "udp:ADDR:PORT", ...) and audit.facility ("authpriv", ...); the
 * position of a mistake inside the ship string is its column */
static int parse_audit_ship(struct policy_diags *d, const struct policy_yt_node *ship,
			    const struct policy_yt_node *fac, struct wd_gwconf *c)
{
	const char *s, *why;
	size_t off;
	int f, ret = 0;

	if (fac) {
		s = policy_yt_str(d, fac, "audit.facility");
		f = s ? audit_sink_facility(s) : -EINVAL;
		if (!s) {
			ret = -EINVAL;
		} else if (f < 0) {
			policy_diag_err(
			    d, fac,
			    "audit.facility: found `%.40s`; expected a syslog facility: kern, "
			    "user, mail, daemon, auth, syslog, lpr, news, uucp, cron, authpriv, "
			    "ftp, ntp, audit, alert, clock, local0 ... local7",
			    s);
			ret = -EINVAL;
		} else {
			c->audit_ship.facility = f;
		}
	}
	if (!ship)
		return ret;
	s = policy_yt_str(d, ship, "audit.ship");
	if (!s)
		return -EINVAL;
	if (audit_sink_parse(s, &c->audit_ship, &off, &why)) {
		policy_diag_add(d, POLICY_DIAG_ERROR, ship->line,
				ship->col + (int)off + (ship->plain ? 0 : 1),
				"audit.ship: found `%.120s`; %s", s, why);
		return -EINVAL;
	}
	return ret;
}

/* parse_abs_path() - @n (may be NULL: kept) as an absolute path into @out */
static int parse_abs_path(struct policy_diags *d, const struct policy_yt_node *n, const char *what,
			  char *out, size_t size)
{
	const char *s;

	if (!n)
		return 0;
	s = policy_yt_str(d, n, what);
	if (!s)
		return -EINVAL;
	if (!wd_path_absolute(s) || strlen(s) >= size) {
		policy_diag_err(d, n,
				"%s: found `%.80s`; expected an absolute path shorter than %zu "
				"bytes",
				what, s, size);
		return -EINVAL;
	}
	memcpy(out, s, strlen(s) + 1);
	return 0;
}

static int parse_audit(struct policy_diags *d, const struct policy_yt_node *n, struct wd_gwconf *c)
{
	const struct policy_yt_node *v[AUDIT_N];

	if (policy_yt_map_keys(d, n, "`audit`", audit_keys, AUDIT_N, v))
		return -EINVAL;
	if (parse_audit_ship(d, v[AUDIT_SHIP], v[AUDIT_FACILITY], c))
		return -EINVAL;
	if (parse_abs_path(d, v[AUDIT_KEY], "audit.key", c->audit_key, sizeof(c->audit_key)))
		return -EINVAL;
	return parse_abs_path(d, v[AUDIT_PATH], "audit.path", c->audit_path, sizeof(c->audit_path));
}

/* "ADDR" or "ADDR:PORT" (IPv4) or "[V6]:PORT" or a bare IPv6 address */
static bool resolver_ok(const char *s)
{
	char host[64];
	const char *port = NULL;
	uint8_t a[16];
	size_t len = strlen(s);

	if (len >= sizeof(host))
		return false;
	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':')
			return false;
		memcpy(host, s + 1, (size_t)(close - s - 1));
		host[close - s - 1] = '\0';
		port = close + 2;
		if (inet_pton(AF_INET6, host, a) != 1)
			return false;
	} else if (inet_pton(AF_INET6, s, a) == 1) {
		return true;
	} else {
		const char *colon = strchr(s, ':');

		memcpy(host, s, len + 1);
		if (colon) {
			host[colon - s] = '\0';
			port = colon + 1;
		}
		if (inet_pton(AF_INET, host, a) != 1)
			return false;
	}
	if (port) {
		unsigned long v = 0;

		if (!*port || strspn(port, "0123456789") != strlen(port) || strlen(port) > 5)
			return false;
		v = strtoul(port, NULL, 10);
		if (v < 1 || v > 65535 || port[0] == '0')
			return false;
	}
	return true;
}

static int parse_resolvers(struct policy_diags *d, const struct policy_yt_node *n,
			   struct wd_gwconf *c)
{
	int ret = 0;

	if (policy_yt_want_seq(d, n, "resolvers"))
		return -EINVAL;
	if (n->nkids > WD_ARRAY_SIZE(c->resolvers)) {
		policy_diag_err(d, n, "resolvers: %zu entries; expected at most %zu", n->nkids,
				WD_ARRAY_SIZE(c->resolvers));
		return -EINVAL;
	}
	for (size_t i = 0; i < n->nkids; i++) {
		const char *s = policy_yt_str(d, n->kids[i], "resolvers entry");

		if (!s) {
			ret = -EINVAL;
			continue;
		}
		if (!resolver_ok(s)) {
			policy_diag_err(
			    d, n->kids[i],
			    "resolvers: found `%.80s`; expected an IP address, optionally "
			    "with a port (`192.0.2.53`, `192.0.2.53:5353`, `[2001:db8::53]:53`)",
			    s);
			ret = -EINVAL;
			continue;
		}
		memcpy(c->resolvers[c->nresolvers++], s, strlen(s) + 1);
	}
	return ret;
}

static int parse_control(struct policy_diags *d, const struct policy_yt_node *n,
			 struct wd_gwconf *c)
{
	static const struct {
		uint32_t min, max;
	} range[CONTROL_N] = {
	    [CONTROL_CONNS] = {2, 1000000},
	    [CONTROL_CONNS_USER] = {1, 1000000},
	    [CONTROL_REQUEST] = {100, 600000},
	};
	uint32_t *dst[CONTROL_N] = {NULL, &c->ctl_conns, &c->ctl_conns_per_user,
				    &c->ctl_request_ms};
	const struct policy_yt_node *v[CONTROL_N];
	const char *s;
	int ret = 0;

	if (policy_yt_map_keys(d, n, "`control`", control_keys, CONTROL_N, v))
		return -EINVAL;
	for (int i = CONTROL_CONNS; i < CONTROL_N; i++) {
		char what[64];
		uint64_t val;

		if (!v[i])
			continue;
		snprintf(what, sizeof(what), "control.%s", control_keys[i]);
		if (policy_yt_uint(d, v[i], what, range[i].min, range[i].max, &val))
			ret = -EINVAL;
		else
			*dst[i] = (uint32_t)val;
	}
	if (!ret && c->ctl_conns_per_user >= c->ctl_conns) {
		const struct policy_yt_node *at = v[CONTROL_CONNS_USER] ? v[CONTROL_CONNS_USER] : n;

		policy_diag_err(
		    d, at,
		    "control.connections_per_user (%u) is not below control.connections "
		    "(%u); expected less than the total, so that one user cannot take "
		    "every control connection",
		    c->ctl_conns_per_user, c->ctl_conns);
		ret = -EINVAL;
	}
	if (!v[CONTROL_PATH])
		return ret;
	s = policy_yt_str(d, v[CONTROL_PATH], "control.path");
	if (!s)
		return -EINVAL;
	if (!wd_path_absolute(s) || strlen(s) >= sizeof(c->control_path)) {
		policy_diag_err(d, v[CONTROL_PATH],
				"control.path: found `%.80s`; expected an absolute path "
				"shorter than %zu bytes",
				s, sizeof(c->control_path));
		return -EINVAL;
	}
	memcpy(c->control_path, s, strlen(s) + 1);
	return ret;
}

static int parse_listen(struct policy_diags *d, const struct policy_yt_node *n, struct wd_gwconf *c)
{
	const struct policy_yt_node *v[LISTEN_N];
	char *dst[LISTEN_N] = {c->listen_v4, c->listen_v6};
	const size_t size[LISTEN_N] = {sizeof(c->listen_v4), sizeof(c->listen_v6)};
	int fam[LISTEN_N] = {AF_INET, AF_INET6};
	int ret = 0;

	if (policy_yt_map_keys(d, n, "`listen`", listen_keys, LISTEN_N, v))
		return -EINVAL;
	for (int i = 0; i < LISTEN_N; i++) {
		uint8_t a[16];
		const char *s;

		if (!v[i])
			continue;
		if (v[i]->type == POLICY_YT_SCALAR && !v[i]->plain && v[i]->len == 0) {
			dst[i][0] = '\0'; /* "": no sockets of this family */
			continue;
		}
		s = policy_yt_str(d, v[i], listen_keys[i]);
		if (!s || strlen(s) >= size[i] || inet_pton(fam[i], s, a) != 1) {
			if (s)
				policy_diag_err(
				    d, v[i], "listen.%s: found `%.80s`; expected an %s address",
				    listen_keys[i], s, i == LISTEN_V4 ? "IPv4" : "IPv6");
			ret = -EINVAL;
			continue;
		}
		memcpy(dst[i], s, strlen(s) + 1);
	}
	if (!ret && !c->listen_v4[0] && !c->listen_v6[0]) {
		policy_diag_err(d, n,
				"listen: both families are off; expected at least one address");
		ret = -EINVAL;
	}
	return ret;
}

/* mode: transparent (default) or proxy; a proxy-mode gateway listens on loopback only: its
 * listen addresses default to 127.0.0.1 and ::1 (set here, before `listen` is read) */
static void parse_mode(struct policy_diags *d, const struct policy_yt_node *n, struct wd_gwconf *c)
{
	const char *s = policy_yt_str(d, n, "mode");

	if (!s || !strcmp(s, "transparent"))
		return;
	if (strcmp(s, "proxy")) {
		policy_diag_err(d, n, "mode: found `%.80s`; expected `transparent` or `proxy`", s);
		return;
	}
	c->mode = WD_GW_PROXY;
	snprintf(c->listen_v4, sizeof(c->listen_v4), "127.0.0.1");
	snprintf(c->listen_v6, sizeof(c->listen_v6), "::1");
}

/* a proxy-mode gateway's listen addresses must be loopback ones: the one run it serves is
 * every loopback client of its proxy port, and nothing outside the machine may reach it */
static void check_proxy_listen(struct policy_diags *d, const struct policy_yt_node *listen,
			       const struct wd_gwconf *c)
{
	struct in6_addr a6;
	uint8_t a[4];

	if (c->mode != WD_GW_PROXY || !listen)
		return;
	if (c->listen_v4[0] && (inet_pton(AF_INET, c->listen_v4, a) != 1 || a[0] != 127))
		policy_diag_err(d, listen,
				"listen.v4: `%s` is not a loopback address; a proxy-mode gateway "
				"listens on 127.0.0.0/8 only (or \"\": no IPv4)",
				c->listen_v4);
	if (c->listen_v6[0] &&
	    (inet_pton(AF_INET6, c->listen_v6, &a6) != 1 || !IN6_IS_ADDR_LOOPBACK(&a6)))
		policy_diag_err(
		    d, listen,
		    "listen.v6: `%s` is not ::1; a proxy-mode gateway listens on loopback "
		    "only (or \"\": no IPv6)",
		    c->listen_v6);
}

static int parse_limits(struct policy_diags *d, const struct policy_yt_node *n, struct wd_gwconf *c)
{
	const struct policy_yt_node *v[LIM_N];
	uint32_t *dst[LIM_N] = {
	    &c->max_conns,	    &c->max_conns_per_run, &c->peek_timeout_ms,
	    &c->connect_timeout_ms, &c->idle_timeout_s,	   &c->dns_ttl_floor_s,
	    &c->dns_ttl_ceiling_s,  &c->audit_kib_per_run, &c->socket_buffer_kib,
	    &c->run_buffer_kib,	    &c->udp_idle_timeout_s};
	int ret = 0;

	if (policy_yt_map_keys(d, n, "`limits`", limit_keys, LIM_N, v))
		return -EINVAL;
	for (int i = 0; i < LIM_N; i++) {
		char what[64];
		uint64_t val;

		if (!v[i])
			continue;
		snprintf(what, sizeof(what), "limits.%s", limit_keys[i]);
		if (policy_yt_uint(d, v[i], what, limit_range[i].min, limit_range[i].max, &val))
			ret = -EINVAL;
		else
			*dst[i] = (uint32_t)val;
	}
	if (!ret && c->dns_ttl_floor_s > c->dns_ttl_ceiling_s) {
		const struct policy_yt_node *at = v[LIM_TTL_FLOOR] ? v[LIM_TTL_FLOOR] : n;

		policy_diag_err(
		    d, at,
		    "limits.dns_ttl_floor_s (%u) is above limits.dns_ttl_ceiling_s (%u); "
		    "expected floor <= ceiling",
		    c->dns_ttl_floor_s, c->dns_ttl_ceiling_s);
		ret = -EINVAL;
	}
	if (!ret && c->max_conns_per_run > c->max_conns) {
		const struct policy_yt_node *at = v[LIM_CONNS_RUN] ? v[LIM_CONNS_RUN] : n;

		policy_diag_err(d, at,
				"limits.connections_per_run (%u) is above limits.connections (%u); "
				"expected at most the total",
				c->max_conns_per_run, c->max_conns);
		ret = -EINVAL;
	}
	return ret;
}

static int check_version(struct policy_diags *d, const struct policy_yt_node *root,
			 const struct policy_yt_node *v)
{
	uint64_t version;

	if (!v) {
		policy_diag_err(d, root,
				"missing key `version`; expected `version: %d` at the top level",
				POLICY_VERSION);
		return -EINVAL;
	}
	if (policy_yt_uint(d, v, "version", 0, UINT32_MAX, &version))
		return -EINVAL;
	if (version != POLICY_VERSION) {
		policy_diag_err(d, v, "version %llu is not supported; expected %d",
				(unsigned long long)version, POLICY_VERSION);
		return -EINVAL;
	}
	return 0;
}

int conf_parse(const char *buf, size_t len, const char *filename, struct wd_gwconf *c,
	       struct policy_diags *d)
{
	const struct policy_yt_node *v[TOP_N];
	struct policy_yt_node *root = NULL;
	size_t errors = d->errors;
	int ret;

	if (!d->file[0])
		snprintf(d->file, sizeof(d->file), "%s", filename ? filename : "<input>");
	conf_defaults(c);
	ret = policy_yt_parse(buf, len, d, &root);
	if (ret)
		return ret;
	if (!root) {
		policy_diag_add(d, POLICY_DIAG_ERROR, 1, 1,
				"the file is empty; expected a mapping with at least `version: %d`",
				POLICY_VERSION);
		return -EINVAL;
	}
	if (policy_yt_map_keys(d, root, "the top level", top_keys, TOP_N, v))
		goto out;
	check_version(d, root, v[TOP_VERSION]);
	if (v[TOP_PORTS])
		parse_ports(d, v[TOP_PORTS], c);
	if (v[TOP_NFT])
		parse_nft(d, v[TOP_NFT], c);
	if (v[TOP_POOLS])
		parse_pools(d, v[TOP_POOLS], c);
	if (v[TOP_AUDIT])
		parse_audit(d, v[TOP_AUDIT], c);
	if (v[TOP_USER])
		want_name(d, v[TOP_USER], "user",
			  "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-",
			  "letters, digits, `.`, `_` and `-`", sizeof(c->user) - 1, c->user);
	if (v[TOP_RESOLVERS])
		parse_resolvers(d, v[TOP_RESOLVERS], c);
	if (v[TOP_CONTROL])
		parse_control(d, v[TOP_CONTROL], c);
	if (v[TOP_MODE])
		parse_mode(d, v[TOP_MODE], c);
	if (v[TOP_LISTEN] && !parse_listen(d, v[TOP_LISTEN], c))
		check_proxy_listen(d, v[TOP_LISTEN], c);
	if (v[TOP_LIMITS])
		parse_limits(d, v[TOP_LIMITS], c);
	if (v[TOP_USER] && c->user[0] == '-') {
		policy_diag_err(d, v[TOP_USER], "user: `%s` starts with `-`; expected a user name",
				c->user);
	}
	if (v[TOP_CEILING]) {
		int err;

		c->ceiling =
		    policy_ceiling_parse(d, policy_yt_key_of(root, v[TOP_CEILING]), v[TOP_CEILING],
					 filename ? filename : "<input>", &err);
		if (err == -ENOMEM) {
			policy_yt_free(root);
			conf_free(c);
			return -ENOMEM;
		}
	}
out:
	policy_yt_free(root);
	if (d->errors > errors) {
		conf_free(c);
		return -EINVAL;
	}
	return 0;
}

void conf_free(struct wd_gwconf *c)
{
	if (!c)
		return;
	policy_ceiling_free(c->ceiling);
	c->ceiling = NULL;
}

int conf_load(const char *path, struct wd_gwconf *c, struct policy_diags *d)
{
	char *data = NULL;
	size_t len = 0;
	int ret;

	if (!path) {
		conf_defaults(c);
		return 0;
	}
	if (!d->file[0])
		snprintf(d->file, sizeof(d->file), "%s", path);
	ret = wd_read_file(path, POLICY_MAX_BYTES, &data, &len);
	if (ret < 0) {
		policy_diag_add(d, POLICY_DIAG_ERROR, 0, 0, "cannot read the file: %s",
				strerror(-ret));
		return ret;
	}
	ret = conf_parse(data, len, path, c, d);
	free(data);
	return ret;
}

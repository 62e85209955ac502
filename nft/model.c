/* model.c - the one description of Warden's nftables table, and its rendering as `nft -f` text.
 *
 * Theory of operation: fw_model_build() turns a config into a fixed list of sets and base
 * chains whose rules are short lists of statements (enum fw_stmt_kind). Everything else walks
 * this model: fw_render() prints it, build.c turns each statement into the expressions nft
 * itself would generate, and check.c compares the live table against it. Changing the ruleset
 * means changing this file (and the golden files in tests/nft/golden/).
 */
#include "nft/nft_internal.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

void fw_config_defaults(struct fw_config *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->table, sizeof(c->table), "%s", "warden");
	snprintf(c->if_prefix, sizeof(c->if_prefix), "%s", "wd-");
	c->port_transparent = 15001;
	c->port_dns = 15053;
	c->port_proxy = 15080;
	c->port_udp = 15054;
	inet_pton(AF_INET, "100.96.0.0", &c->synth4);
	c->synth4_prefix = 12;
	inet_pton(AF_INET6, "fd77:7764:5300::", &c->synth6);
	c->synth6_prefix = 48;
	c->nflog_group = 7000;
	c->conns_per_run = FW_CONNS_PER_RUN_DEFAULT;
	c->new_per_s = FW_NEW_PER_S_DEFAULT;
}

static bool name_ok(const char *s, size_t max, const char *extra)
{
	size_t n = strnlen(s, max);

	if (n == 0 || n >= max)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (!isalnum(ch) && ch != '_' && !strchr(extra, ch))
			return false;
	}
	return true;
}

int fw_config_check(const struct fw_config *c, struct wd_err *err)
{
	if (!name_ok(c->table, sizeof(c->table), "") || isdigit((unsigned char)c->table[0]))
		return wd_err_set(err, -EINVAL,
				  "nft table name must be 1-31 letters, digits or '_' "
				  "(not starting with a digit)");
	if (!name_ok(c->if_prefix, sizeof(c->if_prefix), ".-"))
		return wd_err_set(err, -EINVAL,
				  "interface prefix must be 1-7 characters from [A-Za-z0-9_.-]");
	if (!c->port_transparent || !c->port_dns || !c->port_proxy)
		return wd_err_set(err, -EINVAL, "gateway ports must not be 0");
	if (c->port_transparent == c->port_dns || c->port_transparent == c->port_proxy ||
	    c->port_dns == c->port_proxy)
		return wd_err_set(err, -EINVAL,
				  "gateway ports must differ (transparent %u, dns %u, proxy %u)",
				  c->port_transparent, c->port_dns, c->port_proxy);
	if (c->port_dns == 53 || c->port_transparent == 53 || c->port_proxy == 53 ||
	    c->port_udp == 53)
		return wd_err_set(err, -EINVAL, "gateway ports must not be 53 (it is redirected)");
	if (c->port_udp && (c->port_udp == c->port_transparent || c->port_udp == c->port_dns ||
			    c->port_udp == c->port_proxy))
		return wd_err_set(err, -EINVAL,
				  "the UDP relay's port %u must differ from the others",
				  c->port_udp);
	if (c->port_udp &&
	    (c->synth4_prefix < 1 || c->synth4_prefix > 32 || c->synth6_prefix < 1 ||
	     c->synth6_prefix > 128 ||
	     !wd_prefix_is_network(AF_INET, (const uint8_t *)&c->synth4, c->synth4_prefix) ||
	     !wd_prefix_is_network(AF_INET6, (const uint8_t *)&c->synth6, c->synth6_prefix)))
		return wd_err_set(err, -EINVAL,
				  "the UDP relay needs the synthetic pools as network addresses "
				  "with a prefix length");
	if (c->mode == FW_MODE_RUN &&
	    (!c->gw4.s_addr || IN6_IS_ADDR_UNSPECIFIED(&c->gw6) ||
	     (ntohl(c->gw4.s_addr) >> 24) == 127 || IN6_IS_ADDR_LOOPBACK(&c->gw6)))
		return wd_err_set(err, -EINVAL,
				  "a rootless run's table needs its gateway's addresses "
				  "(neither unspecified nor loopback)");
	if (c->mode != FW_MODE_HOST && c->mode != FW_MODE_RUN)
		return wd_err_set(err, -EINVAL, "unknown ruleset mode %d", (int)c->mode);
	if (c->conns_per_run < FW_CONNS_PER_RUN_MIN || c->conns_per_run > FW_CONNS_PER_RUN_MAX)
		return wd_err_set(err, -EINVAL, "connections per run must be %u..%u (not %u)",
				  FW_CONNS_PER_RUN_MIN, FW_CONNS_PER_RUN_MAX, c->conns_per_run);
	if (c->new_per_s < 1 || c->new_per_s > FW_NEW_PER_S_MAX)
		return wd_err_set(err, -EINVAL,
				  "new connections per run a second must be 1..%u "
				  "(not %u)",
				  FW_NEW_PER_S_MAX, c->new_per_s);
	return 0;
}

#define S(k, a, st)                                                                                \
	{                                                                                          \
		.kind = (k), .arg = (a), .set = (st)                                               \
	}
#define LOG(group, prefix)                                                                         \
	{                                                                                          \
		.kind = FW_LOG_GROUP, .arg = (group), .text = (prefix)                             \
	}
#define R(why_, ...)                                                                               \
	{                                                                                          \
		.s = {__VA_ARGS__},                                                                \
		.n = sizeof((struct fw_stmt[]){__VA_ARGS__}) / sizeof(struct fw_stmt), .why = why_ \
	}

static void add_rule(struct fw_chain_def *ch, struct fw_rule r)
{
	/* The model is fixed: overflowing FW_CHAIN_MAX_RULES is a programming error. */
	if (ch->nrules < FW_CHAIN_MAX_RULES)
		ch->rules[ch->nrules++] = r;
}

static void set_def(struct fw_set_def *s, const char *name, enum fw_key key, uint32_t id,
		    const char *why)
{
	*s = (struct fw_set_def){.name = name, .key = key, .id = id, .why = why};
}

void fw_config_rootless(struct fw_config *c, const struct in_addr *gw4, const struct in6_addr *gw6)
{
	c->mode = FW_MODE_RUN;
	c->gw4 = *gw4;
	c->gw6 = *gw6;
}

/*
 * FW_MODE_RUN: the table of one rootless run, inside the run's own network namespace (its only
 * interface is lo; the gateway's listening sockets live there too, at cfg.gw4/gw6, and the
 * gateway process that accepts on them lives outside). Packets leave nothing but lo, so the
 * output hook is the one place to decide: every TCP connection and DNS query is DNATed to the
 * gateway's address, the gateway's ports there are reachable, loopback stays loopback, and
 * everything else is dropped and logged. No anti-spoof set (the program has no raw sockets:
 * its capabilities live in a nested user namespace), no forward (nothing to forward to).
 * The run's conntrack entries are bounded as a root-mode run's are in the host's table (open
 * flows, new ones a second, closed TCP flows gone soon), by plain expressions: the whole
 * namespace is the one run, so no set keyed by interface.
 */
static void model_run(const struct fw_config *c, struct fw_model *m)
{
	struct fw_chain_def *ch;

	m->nobjs = 1;
	m->objs[0] = (struct fw_obj_def){
	    .name = FW_OBJ_RUN_TCP,
	    .time_wait = FW_CT_CLOSED_S,
	    .close = FW_CT_CLOSED_S,
	    .why = "the run's closed TCP flows leave conntrack soon: the kernel's count skips "
		   "them, the rate limit bounds them"};
	m->nsets = 2;
	m->nchains = 2;
	set_def(&m->sets[0], FW_SET_GW_TCP, FW_KEY_PORT, 1,
		"gateway TCP ports: transparent, DNS, proxy");
	m->sets[0].elems[0] = c->port_transparent;
	m->sets[0].elems[1] = c->port_dns;
	m->sets[0].elems[2] = c->port_proxy;
	m->sets[0].nelems = 3;
	set_def(&m->sets[1], FW_SET_GW_UDP, FW_KEY_PORT, 2,
		c->port_udp ? "gateway UDP ports: DNS, the UDP relay" : "gateway UDP port: DNS");
	m->sets[1].elems[0] = c->port_dns;
	m->sets[1].nelems = 1;
	if (c->port_udp)
		m->sets[1].elems[m->sets[1].nelems++] = c->port_udp;

	/* 1. Every TCP connection and DNS query to the gateway's address. */
	ch = &m->chains[0];
	*ch = (struct fw_chain_def){
	    .name = "divert",
	    .type = "nat",
	    .hook = NF_INET_LOCAL_OUT,
	    .prio = -100,
	    .prio_text = "-100", /* nft 1.0.6 takes "dstnat" at prerouting only */
	    .why = "every TCP connection and DNS query goes to the gateway"};
	add_rule(ch, (struct fw_rule)R("loopback stays inside the run (its own local services)",
				       S(FW_DADDR4_LOOPBACK, 0, NULL), S(FW_ACCEPT, 0, NULL)));
	add_rule(ch,
		 (struct fw_rule)R(NULL, S(FW_DADDR6_LOOPBACK, 0, NULL), S(FW_ACCEPT, 0, NULL)));
	add_rule(ch,
		 (struct fw_rule)R("the explicit proxy, at the gateway's address, is not "
				   "redirected",
				   S(FW_DADDR4_GW, 0, NULL), S(FW_TCP_DPORT, c->port_proxy, NULL),
				   S(FW_ACCEPT, 0, NULL)));
	add_rule(ch,
		 (struct fw_rule)R(NULL, S(FW_DADDR6_GW, 0, NULL),
				   S(FW_TCP_DPORT, c->port_proxy, NULL), S(FW_ACCEPT, 0, NULL)));
	add_rule(ch, (struct fw_rule)R("DNS to any address lands on the gateway's DNS port",
				       S(FW_NFPROTO, NFPROTO_IPV4, NULL), S(FW_UDP_DPORT, 53, NULL),
				       S(FW_DNAT4_GW, c->port_dns, NULL)));
	add_rule(ch,
		 (struct fw_rule)R(NULL, S(FW_NFPROTO, NFPROTO_IPV6, NULL),
				   S(FW_UDP_DPORT, 53, NULL), S(FW_DNAT6_GW, c->port_dns, NULL)));
	add_rule(ch,
		 (struct fw_rule)R(NULL, S(FW_NFPROTO, NFPROTO_IPV4, NULL),
				   S(FW_TCP_DPORT, 53, NULL), S(FW_DNAT4_GW, c->port_dns, NULL)));
	add_rule(ch,
		 (struct fw_rule)R(NULL, S(FW_NFPROTO, NFPROTO_IPV6, NULL),
				   S(FW_TCP_DPORT, 53, NULL), S(FW_DNAT6_GW, c->port_dns, NULL)));
	if (c->port_udp) {
		add_rule(ch, (struct fw_rule)R("other UDP to a synthetic address lands on the UDP "
					       "relay's port",
					       S(FW_DADDR4_SYNTH, 0, NULL),
					       S(FW_L4PROTO, IPPROTO_UDP, NULL),
					       S(FW_DNAT4_GW, c->port_udp, NULL)));
		add_rule(ch, (struct fw_rule)R(NULL, S(FW_DADDR6_SYNTH, 0, NULL),
					       S(FW_L4PROTO, IPPROTO_UDP, NULL),
					       S(FW_DNAT6_GW, c->port_udp, NULL)));
	}
	add_rule(ch, (struct fw_rule)R("all other TCP lands on the transparent port",
				       S(FW_NFPROTO, NFPROTO_IPV4, NULL),
				       S(FW_L4PROTO, IPPROTO_TCP, NULL),
				       S(FW_DNAT4_GW, c->port_transparent, NULL)));
	add_rule(ch, (struct fw_rule)R(NULL, S(FW_NFPROTO, NFPROTO_IPV6, NULL),
				       S(FW_L4PROTO, IPPROTO_TCP, NULL),
				       S(FW_DNAT6_GW, c->port_transparent, NULL)));

	/* 2. After the DNAT: only the gateway's ports at its address, and loopback. */
	ch = &m->chains[1];
	*ch =
	    (struct fw_chain_def){.name = "output",
				  .type = "filter",
				  .hook = NF_INET_LOCAL_OUT,
				  .prio = 0,
				  .prio_text = "filter",
				  .why = "the run reaches the gateway's ports at its address, and "
					 "nothing else"};
	add_rule(ch, (struct fw_rule)R("loopback stays inside the run",
				       S(FW_DADDR4_LOOPBACK, 0, NULL), S(FW_ACCEPT, 0, NULL)));
	add_rule(ch,
		 (struct fw_rule)R(NULL, S(FW_DADDR6_LOOPBACK, 0, NULL), S(FW_ACCEPT, 0, NULL)));
	add_rule(ch, (struct fw_rule)R("replies of the gateway's sockets, which live here too",
				       S(FW_CT_EST_REL, 0, NULL), S(FW_ACCEPT, 0, NULL)));
	add_rule(ch, (struct fw_rule)R(
			 "bounded conntrack entries of the run: open flows, and "
			 "new ones a second; beyond, dropped and logged",
			 S(FW_CT_NEW, 0, NULL), S(FW_CT_COUNT_OVER, c->conns_per_run, NULL),
			 LOG(c->nflog_group, FW_NFLOG_PREFIX_CONNS), S(FW_DROP, 0, NULL)));
	add_rule(
	    ch, (struct fw_rule)R(NULL, S(FW_CT_NEW, 0, NULL), S(FW_RATE_OVER, c->new_per_s, NULL),
				  LOG(c->nflog_group, FW_NFLOG_PREFIX_CONNS), S(FW_DROP, 0, NULL)));
	add_rule(ch, (struct fw_rule)R(
			 NULL, S(FW_CT_NEW, 0, NULL), S(FW_L4PROTO, IPPROTO_TCP, NULL),
			 (struct fw_stmt){.kind = FW_CT_TIMEOUT_SET, .text = FW_OBJ_RUN_TCP}));
	add_rule(ch, (struct fw_rule)R("the gateway's ports at its address (after the DNAT)",
				       S(FW_DADDR4_GW, 0, NULL),
				       S(FW_TCP_DPORT_IN_SET, 0, FW_SET_GW_TCP),
				       S(FW_ACCEPT, 0, NULL)));
	add_rule(ch, (struct fw_rule)R(NULL, S(FW_DADDR6_GW, 0, NULL),
				       S(FW_TCP_DPORT_IN_SET, 0, FW_SET_GW_TCP),
				       S(FW_ACCEPT, 0, NULL)));
	add_rule(ch, (struct fw_rule)R(NULL, S(FW_DADDR4_GW, 0, NULL),
				       S(FW_UDP_DPORT_IN_SET, 0, FW_SET_GW_UDP),
				       S(FW_ACCEPT, 0, NULL)));
	add_rule(ch, (struct fw_rule)R(NULL, S(FW_DADDR6_GW, 0, NULL),
				       S(FW_UDP_DPORT_IN_SET, 0, FW_SET_GW_UDP),
				       S(FW_ACCEPT, 0, NULL)));
	add_rule(ch, (struct fw_rule)R("other UDP and UDP-lite: logged and dropped",
				       S(FW_L4PROTO, IPPROTO_UDP, NULL), LOG(c->nflog_group, NULL),
				       S(FW_DROP, 0, NULL)));
	add_rule(ch, (struct fw_rule)R(NULL, S(FW_L4PROTO, IPPROTO_UDPLITE, NULL),
				       LOG(c->nflog_group, NULL), S(FW_DROP, 0, NULL)));
	add_rule(ch, (struct fw_rule)R("everything else (ICMP, other protocols): logged and "
				       "dropped",
				       LOG(c->nflog_group, FW_NFLOG_PREFIX_OTHER),
				       S(FW_DROP, 0, NULL)));
}

int fw_model_build(const struct fw_config *c, struct fw_model *m, struct wd_err *err)
{
	int ret = fw_config_check(c, err);
	struct fw_chain_def *ch;

	if (ret < 0)
		return ret;
	memset(m, 0, sizeof(*m));
	m->cfg = *c;
	if (c->mode == FW_MODE_RUN) {
		model_run(c, m);
		return 0;
	}
	m->nobjs = FW_NOBJS;
	m->nsets = FW_NSETS;
	m->nchains = FW_NCHAINS;

	set_def(&m->sets[0], FW_SET_RUNS_IF, FW_KEY_IFNAME, 1,
		"host-side veth of every registered run");
	set_def(&m->sets[1], FW_SET_RUNS_V4, FW_KEY_IFNAME_IPV4, 2,
		"run veth . the only IPv4 source allowed on it");
	set_def(&m->sets[2], FW_SET_RUNS_V6, FW_KEY_IFNAME_IPV6, 3,
		"run veth . the only IPv6 source allowed on it");
	set_def(&m->sets[3], FW_SET_GW_V4, FW_KEY_IFNAME_IPV4, 4,
		"run veth . its host-side IPv4 address: the only host address the run reaches");
	set_def(&m->sets[4], FW_SET_GW_V6, FW_KEY_IFNAME_IPV6, 5,
		"run veth . its host-side IPv6 address: the only host address the run reaches");
	set_def(&m->sets[5], FW_SET_GW_TCP, FW_KEY_PORT, 6,
		"gateway TCP ports: transparent, DNS, proxy");
	m->sets[5].elems[0] = c->port_transparent;
	m->sets[5].elems[1] = c->port_dns;
	m->sets[5].elems[2] = c->port_proxy;
	m->sets[5].nelems = 3;
	set_def(&m->sets[6], FW_SET_GW_UDP, FW_KEY_PORT, 7,
		c->port_udp ? "gateway UDP ports: DNS, the UDP relay" : "gateway UDP port: DNS");
	m->sets[6].elems[0] = c->port_dns;
	m->sets[6].nelems = 1;
	if (c->port_udp)
		m->sets[6].elems[m->sets[6].nelems++] = c->port_udp;
	set_def(&m->sets[7], FW_SET_RUN_CONNS, FW_KEY_IFNAME, 8,
		"run veth -> its open flows (conntrack entries), counted by the packet path");
	m->sets[7].dynamic = true;
	m->sets[7].size = FW_METER_SIZE;
	set_def(&m->sets[8], FW_SET_RUN_RATE, FW_KEY_IFNAME, 9,
		"run veth -> the rate of its new flows, measured by the packet path");
	m->sets[8].dynamic = true;
	m->sets[8].size = FW_METER_SIZE;
	m->objs[0] = (struct fw_obj_def){
	    .name = FW_OBJ_RUN_TCP,
	    .time_wait = FW_CT_CLOSED_S,
	    .close = FW_CT_CLOSED_S,
	    .why = "a run's closed TCP flows leave conntrack soon: the kernel's count skips "
		   "them, the rate limit bounds them"};

	/* 1. Anti-spoofing, before conntrack and NAT see the packet. */
	ch = &m->chains[0];
	*ch = (struct fw_chain_def){.name = "antispoof",
				    .type = "filter",
				    .hook = NF_INET_PRE_ROUTING,
				    .prio = -300,
				    .prio_text = "raw",
				    .why = "a run's veth may only carry its own source address"};
	add_rule(ch, (struct fw_rule)R("not a run interface: not our business",
				       S(FW_IIF_NOT_PREFIX, 0, NULL), S(FW_ACCEPT, 0, NULL)));
	add_rule(ch, (struct fw_rule)R("registered run, its own IPv4 source",
				       S(FW_IIF_SADDR4_IN_SET, 0, FW_SET_RUNS_V4),
				       S(FW_ACCEPT, 0, NULL)));
	add_rule(ch, (struct fw_rule)R("registered run, its own IPv6 source",
				       S(FW_IIF_SADDR6_IN_SET, 0, FW_SET_RUNS_V6),
				       S(FW_ACCEPT, 0, NULL)));
	add_rule(ch, (struct fw_rule)R("IPv6 neighbour discovery from link-local or :: sources",
				       S(FW_IIF_IN_SET, 0, FW_SET_RUNS_IF),
				       S(FW_ICMPV6_TYPE, 135, NULL), S(FW_IP6_HOPLIMIT, 255, NULL),
				       S(FW_ACCEPT, 0, NULL)));
	add_rule(ch, (struct fw_rule)R(NULL, S(FW_IIF_IN_SET, 0, FW_SET_RUNS_IF),
				       S(FW_ICMPV6_TYPE, 136, NULL), S(FW_IP6_HOPLIMIT, 255, NULL),
				       S(FW_ACCEPT, 0, NULL)));
	add_rule(
	    ch, (struct fw_rule)R("unregistered interface or spoofed source", S(FW_DROP, 0, NULL)));

	/* 2. Redirect TCP and DNS to the gateway. */
	ch = &m->chains[1];
	*ch =
	    (struct fw_chain_def){.name = "divert",
				  .type = "nat",
				  .hook = NF_INET_PRE_ROUTING,
				  .prio = -100,
				  .prio_text = "dstnat",
				  .why = "every TCP connection and DNS query goes to the gateway"};
	add_rule(ch, (struct fw_rule)R(NULL, S(FW_IIF_NOT_PREFIX, 0, NULL), S(FW_ACCEPT, 0, NULL)));
	add_rule(ch,
		 (struct fw_rule)R("the explicit proxy, at the run's own gateway address, is not "
				   "redirected",
				   S(FW_IIF_DADDR4_IN_SET, 0, FW_SET_GW_V4),
				   S(FW_TCP_DPORT, c->port_proxy, NULL), S(FW_ACCEPT, 0, NULL)));
	add_rule(ch,
		 (struct fw_rule)R(NULL, S(FW_IIF_DADDR6_IN_SET, 0, FW_SET_GW_V6),
				   S(FW_TCP_DPORT, c->port_proxy, NULL), S(FW_ACCEPT, 0, NULL)));
	add_rule(ch, (struct fw_rule)R(
			 "the proxy port at any other address of this host: a host "
			 "service, dropped and logged",
			 S(FW_TCP_DPORT, c->port_proxy, NULL), S(FW_FIB_DADDR_LOCAL, 0, NULL),
			 LOG(c->nflog_group, FW_NFLOG_PREFIX_HOST), S(FW_DROP, 0, NULL)));
	add_rule(ch,
		 (struct fw_rule)R("DNS to any address lands on the gateway's DNS port",
				   S(FW_UDP_DPORT, 53, NULL), S(FW_REDIRECT, c->port_dns, NULL)));
	add_rule(ch, (struct fw_rule)R(NULL, S(FW_TCP_DPORT, 53, NULL),
				       S(FW_REDIRECT, c->port_dns, NULL)));
	if (c->port_udp) {
		add_rule(ch, (struct fw_rule)R("other UDP to a synthetic address (a name the DNS "
					       "front answered) lands on the UDP relay's port",
					       S(FW_DADDR4_SYNTH, 0, NULL),
					       S(FW_L4PROTO, IPPROTO_UDP, NULL),
					       S(FW_REDIRECT, c->port_udp, NULL)));
		add_rule(ch, (struct fw_rule)R(NULL, S(FW_DADDR6_SYNTH, 0, NULL),
					       S(FW_L4PROTO, IPPROTO_UDP, NULL),
					       S(FW_REDIRECT, c->port_udp, NULL)));
	}
	add_rule(ch, (struct fw_rule)R("all other TCP lands on the transparent port",
				       S(FW_L4PROTO, IPPROTO_TCP, NULL),
				       S(FW_REDIRECT, c->port_transparent, NULL)));

	/* 3. Other UDP is dropped where it is seen first, and logged for the gateway. */
	ch = &m->chains[2];
	*ch = (struct fw_chain_def){
	    .name = "udp_audit",
	    .type = "filter",
	    .hook = NF_INET_PRE_ROUTING,
	    .prio = -90,
	    .prio_text = "dstnat + 10",
	    .why = "after the redirect: UDP not bound for the gateway is logged "
		   "and dropped"};
	add_rule(ch, (struct fw_rule)R(NULL, S(FW_IIF_NOT_PREFIX, 0, NULL), S(FW_ACCEPT, 0, NULL)));
	add_rule(ch, (struct fw_rule)R("DNS at the run's own gateway address (redirected, or sent "
				       "there)",
				       S(FW_IIF_DADDR4_IN_SET, 0, FW_SET_GW_V4),
				       S(FW_UDP_DPORT, c->port_dns, NULL), S(FW_ACCEPT, 0, NULL)));
	add_rule(ch, (struct fw_rule)R(NULL, S(FW_IIF_DADDR6_IN_SET, 0, FW_SET_GW_V6),
				       S(FW_UDP_DPORT, c->port_dns, NULL), S(FW_ACCEPT, 0, NULL)));
	if (c->port_udp) {
		add_rule(ch, (struct fw_rule)R("the UDP relay at the run's own gateway address "
					       "(redirected from a synthetic address)",
					       S(FW_IIF_DADDR4_IN_SET, 0, FW_SET_GW_V4),
					       S(FW_UDP_DPORT, c->port_udp, NULL),
					       S(FW_ACCEPT, 0, NULL)));
		add_rule(ch, (struct fw_rule)R(NULL, S(FW_IIF_DADDR6_IN_SET, 0, FW_SET_GW_V6),
					       S(FW_UDP_DPORT, c->port_udp, NULL),
					       S(FW_ACCEPT, 0, NULL)));
	}
	add_rule(ch,
		 (struct fw_rule)R("UDP to any other address of this host: a host service, "
				   "dropped and logged",
				   S(FW_L4PROTO, IPPROTO_UDP, NULL), S(FW_FIB_DADDR_LOCAL, 0, NULL),
				   LOG(c->nflog_group, FW_NFLOG_PREFIX_HOST), S(FW_DROP, 0, NULL)));
	add_rule(ch, (struct fw_rule)R("other UDP and UDP-lite: NFLOG for the gateway's audit log",
				       S(FW_L4PROTO, IPPROTO_UDP, NULL), LOG(c->nflog_group, NULL),
				       S(FW_DROP, 0, NULL)));
	add_rule(ch, (struct fw_rule)R(NULL, S(FW_L4PROTO, IPPROTO_UDPLITE, NULL),
				       LOG(c->nflog_group, NULL), S(FW_DROP, 0, NULL)));

	/* 4. The host itself: only the gateway's ports, at the run's own gateway address. */
	ch = &m->chains[3];
	*ch = (struct fw_chain_def){
	    .name = "input",
	    .type = "filter",
	    .hook = NF_INET_LOCAL_IN,
	    .prio = 0,
	    .prio_text = "filter",
	    .why = "from a run, this host offers only the gateway, at the run's "
		   "own gateway address"};
	add_rule(ch, (struct fw_rule)R(NULL, S(FW_IIF_NOT_PREFIX, 0, NULL), S(FW_ACCEPT, 0, NULL)));
	add_rule(ch, (struct fw_rule)R("bounded conntrack entries per run: open flows, and new "
				       "ones a second; beyond, dropped and logged",
				       S(FW_CT_NEW, 0, NULL),
				       S(FW_CT_COUNT_OVER, c->conns_per_run, FW_SET_RUN_CONNS),
				       LOG(c->nflog_group, FW_NFLOG_PREFIX_CONNS),
				       S(FW_DROP, 0, NULL)));
	add_rule(ch, (struct fw_rule)R(NULL, S(FW_CT_NEW, 0, NULL),
				       S(FW_RATE_OVER, c->new_per_s, FW_SET_RUN_RATE),
				       LOG(c->nflog_group, FW_NFLOG_PREFIX_CONNS),
				       S(FW_DROP, 0, NULL)));
	add_rule(
	    ch, (struct fw_rule)R("a meter set that is full takes no element for a new run, "
				  "and its limit would not apply: dropped and logged",
				  S(FW_CT_NEW, 0, NULL), S(FW_IIF_NOT_IN_SET, 0, FW_SET_RUN_CONNS),
				  LOG(c->nflog_group, FW_NFLOG_PREFIX_CONNS), S(FW_DROP, 0, NULL)));
	add_rule(ch, (struct fw_rule)R(
			 NULL, S(FW_CT_NEW, 0, NULL), S(FW_IIF_NOT_IN_SET, 0, FW_SET_RUN_RATE),
			 LOG(c->nflog_group, FW_NFLOG_PREFIX_CONNS), S(FW_DROP, 0, NULL)));
	add_rule(ch, (struct fw_rule)R(
			 NULL, S(FW_CT_NEW, 0, NULL), S(FW_L4PROTO, IPPROTO_TCP, NULL),
			 (struct fw_stmt){.kind = FW_CT_TIMEOUT_SET, .text = FW_OBJ_RUN_TCP}));
	add_rule(ch, (struct fw_rule)R("the gateway's ports at the run's own gateway address "
				       "(after the redirect)",
				       S(FW_IIF_DADDR4_IN_SET, 0, FW_SET_GW_V4),
				       S(FW_TCP_DPORT_IN_SET, 0, FW_SET_GW_TCP),
				       S(FW_ACCEPT, 0, NULL)));
	add_rule(ch, (struct fw_rule)R(NULL, S(FW_IIF_DADDR6_IN_SET, 0, FW_SET_GW_V6),
				       S(FW_TCP_DPORT_IN_SET, 0, FW_SET_GW_TCP),
				       S(FW_ACCEPT, 0, NULL)));
	add_rule(ch, (struct fw_rule)R(NULL, S(FW_IIF_DADDR4_IN_SET, 0, FW_SET_GW_V4),
				       S(FW_UDP_DPORT_IN_SET, 0, FW_SET_GW_UDP),
				       S(FW_ACCEPT, 0, NULL)));
	add_rule(ch, (struct fw_rule)R(NULL, S(FW_IIF_DADDR6_IN_SET, 0, FW_SET_GW_V6),
				       S(FW_UDP_DPORT_IN_SET, 0, FW_SET_GW_UDP),
				       S(FW_ACCEPT, 0, NULL)));
	add_rule(ch, (struct fw_rule)R("replies to connections this host opened, and ICMP errors "
				       "about them (PMTU)",
				       S(FW_CT_EST_REL, 0, NULL), S(FW_ACCEPT, 0, NULL)));
	add_rule(ch, (struct fw_rule)R("IPv6 neighbour discovery on the veth",
				       S(FW_IIF_IN_SET, 0, FW_SET_RUNS_IF),
				       S(FW_ICMPV6_TYPE, 135, NULL), S(FW_IP6_HOPLIMIT, 255, NULL),
				       S(FW_ACCEPT, 0, NULL)));
	add_rule(ch, (struct fw_rule)R(NULL, S(FW_IIF_IN_SET, 0, FW_SET_RUNS_IF),
				       S(FW_ICMPV6_TYPE, 136, NULL), S(FW_IP6_HOPLIMIT, 255, NULL),
				       S(FW_ACCEPT, 0, NULL)));
	add_rule(ch,
		 (struct fw_rule)R("anything else at an address of this host (ping, other "
				   "protocols): dropped and logged",
				   S(FW_FIB_DADDR_LOCAL, 0, NULL),
				   LOG(c->nflog_group, FW_NFLOG_PREFIX_HOST), S(FW_DROP, 0, NULL)));
	add_rule(ch,
		 (struct fw_rule)R("everything else (multicast, broadcast)", S(FW_DROP, 0, NULL)));

	/* 5. Never route for a run, in either direction. */
	ch = &m->chains[4];
	*ch = (struct fw_chain_def){
	    .name = "forward",
	    .type = "filter",
	    .hook = NF_INET_FORWARD,
	    .prio = 0,
	    .prio_text = "filter",
	    .why = "a run reaches nothing but this host, and nothing reaches it"};
	add_rule(ch, (struct fw_rule)R(NULL, S(FW_IIF_PREFIX, 0, NULL), S(FW_DROP, 0, NULL)));
	add_rule(ch, (struct fw_rule)R(NULL, S(FW_OIF_PREFIX, 0, NULL), S(FW_DROP, 0, NULL)));
	return 0;
}

const char *fw_hook_name(uint32_t hook)
{
	static const char *const names[] = {
	    [NF_INET_PRE_ROUTING] = "prerouting",   [NF_INET_LOCAL_IN] = "input",
	    [NF_INET_FORWARD] = "forward",	    [NF_INET_LOCAL_OUT] = "output",
	    [NF_INET_POST_ROUTING] = "postrouting",
	};

	return hook < WD_ARRAY_SIZE(names) && names[hook] ? names[hook] : "?";
}

static const char *icmpv6_type_name(uint32_t t)
{
	switch (t) {
	case 135:
		return "nd-neighbor-solicit";
	case 136:
		return "nd-neighbor-advert";
	default:
		return NULL;
	}
}

static int stmt_text(const struct fw_model *m, const struct fw_stmt *s, struct wd_buf *out)
{
	const char *pfx = m->cfg.if_prefix;
	char a[INET6_ADDRSTRLEN];
	const char *name;

	switch (s->kind) {
	case FW_IIF_NOT_PREFIX:
		return wd_buf_printf(out, "iifname != \"%s*\"", pfx);
	case FW_IIF_PREFIX:
		return wd_buf_printf(out, "iifname \"%s*\"", pfx);
	case FW_OIF_PREFIX:
		return wd_buf_printf(out, "oifname \"%s*\"", pfx);
	case FW_IIF_SADDR4_IN_SET:
		return wd_buf_printf(out, "iifname . ip saddr @%s", s->set);
	case FW_IIF_SADDR6_IN_SET:
		return wd_buf_printf(out, "iifname . ip6 saddr @%s", s->set);
	case FW_IIF_DADDR4_IN_SET:
		return wd_buf_printf(out, "iifname . ip daddr @%s", s->set);
	case FW_IIF_DADDR6_IN_SET:
		return wd_buf_printf(out, "iifname . ip6 daddr @%s", s->set);
	case FW_IIF_IN_SET:
		return wd_buf_printf(out, "iifname @%s", s->set);
	case FW_IIF_NOT_IN_SET:
		return wd_buf_printf(out, "iifname != @%s", s->set);
	case FW_ICMPV6_TYPE:
		name = icmpv6_type_name(s->arg);
		if (name)
			return wd_buf_printf(out, "icmpv6 type %s", name);
		return wd_buf_printf(out, "icmpv6 type %u", s->arg);
	case FW_IP6_HOPLIMIT:
		return wd_buf_printf(out, "ip6 hoplimit %u", s->arg);
	case FW_L4PROTO:
		return wd_buf_printf(out, "meta l4proto %s",
				     s->arg == IPPROTO_TCP   ? "tcp"
				     : s->arg == IPPROTO_UDP ? "udp"
							     : "udplite");
	case FW_TCP_DPORT:
		return wd_buf_printf(out, "tcp dport %u", s->arg);
	case FW_UDP_DPORT:
		return wd_buf_printf(out, "udp dport %u", s->arg);
	case FW_TCP_DPORT_IN_SET:
		return wd_buf_printf(out, "tcp dport @%s", s->set);
	case FW_UDP_DPORT_IN_SET:
		return wd_buf_printf(out, "udp dport @%s", s->set);
	case FW_FIB_DADDR_LOCAL:
		return wd_buf_puts(out, "fib daddr type local");
	case FW_CT_EST_REL:
		return wd_buf_puts(out, "ct state established,related");
	case FW_CT_NEW:
		return wd_buf_puts(out, "ct state new");
	case FW_CT_COUNT_OVER:
		if (!s->set)
			return wd_buf_printf(out, "ct count over %u", s->arg);
		return wd_buf_printf(out, "add @%s { iifname ct count over %u }", s->set, s->arg);
	case FW_RATE_OVER:
		if (!s->set)
			return wd_buf_printf(out, "limit rate over %u/second burst %u packets",
					     s->arg, s->arg * 10);
		return wd_buf_printf(
		    out, "add @%s { iifname limit rate over %u/second burst %u packets }", s->set,
		    s->arg, s->arg * 10);
	case FW_CT_TIMEOUT_SET:
		return wd_buf_printf(out, "ct timeout set \"%s\"", s->text);
	case FW_LOG_GROUP:
		if (s->text)
			return wd_buf_printf(out, "log prefix \"%s\" group %u", s->text, s->arg);
		return wd_buf_printf(out, "log group %u", s->arg);
	case FW_REDIRECT:
		return wd_buf_printf(out, "redirect to :%u", s->arg);
	case FW_NFPROTO:
		return wd_buf_printf(out, "meta nfproto %s",
				     s->arg == NFPROTO_IPV6 ? "ipv6" : "ipv4");
	case FW_DADDR4_GW:
		return wd_buf_printf(out, "ip daddr %s",
				     inet_ntop(AF_INET, &m->cfg.gw4, a, sizeof(a)) ? a : "?");
	case FW_DADDR6_GW:
		return wd_buf_printf(out, "ip6 daddr %s",
				     inet_ntop(AF_INET6, &m->cfg.gw6, a, sizeof(a)) ? a : "?");
	case FW_DADDR4_LOOPBACK:
		return wd_buf_puts(out, "ip daddr 127.0.0.0/8");
	case FW_DADDR4_SYNTH:
		return wd_buf_printf(out, "ip daddr %s/%u",
				     inet_ntop(AF_INET, &m->cfg.synth4, a, sizeof(a)) ? a : "?",
				     m->cfg.synth4_prefix);
	case FW_DADDR6_SYNTH:
		return wd_buf_printf(out, "ip6 daddr %s/%u",
				     inet_ntop(AF_INET6, &m->cfg.synth6, a, sizeof(a)) ? a : "?",
				     m->cfg.synth6_prefix);
	case FW_DADDR6_LOOPBACK:
		return wd_buf_puts(out, "ip6 daddr ::1");
	case FW_DNAT4_GW:
		return wd_buf_printf(out, "dnat ip to %s:%u",
				     inet_ntop(AF_INET, &m->cfg.gw4, a, sizeof(a)) ? a : "?",
				     s->arg);
	case FW_DNAT6_GW:
		return wd_buf_printf(out, "dnat ip6 to [%s]:%u",
				     inet_ntop(AF_INET6, &m->cfg.gw6, a, sizeof(a)) ? a : "?",
				     s->arg);
	case FW_ACCEPT:
		return wd_buf_puts(out, "accept");
	case FW_DROP:
		return wd_buf_puts(out, "drop");
	}
	return -EINVAL;
}

int fw_rule_text(const struct fw_model *m, const struct fw_rule *r, struct wd_buf *out)
{
	for (unsigned i = 0; i < r->n; i++) {
		int ret = i ? wd_buf_puts(out, " ") : 0;

		if (!ret)
			ret = stmt_text(m, &r->s[i], out);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static const char *key_text(enum fw_key k)
{
	switch (k) {
	case FW_KEY_IFNAME:
		return "ifname";
	case FW_KEY_IFNAME_IPV4:
		return "ifname . ipv4_addr";
	case FW_KEY_IFNAME_IPV6:
		return "ifname . ipv6_addr";
	case FW_KEY_PORT:
		return "inet_service";
	}
	return "?";
}

static int render_set(const struct fw_set_def *s, struct wd_buf *out)
{
	int ret = wd_buf_printf(out, "\t# %s\n\tset %s {\n\t\ttype %s\n", s->why, s->name,
				key_text(s->key));

	if (!ret && s->size)
		ret = wd_buf_printf(out, "\t\tsize %u\n", s->size);
	if (!ret && s->dynamic)
		ret = wd_buf_puts(out, "\t\tflags dynamic\n");
	if (!ret && s->nelems) {
		ret = wd_buf_puts(out, "\t\telements = { ");
		for (unsigned i = 0; !ret && i < s->nelems; i++)
			ret = wd_buf_printf(out, "%s%u", i ? ", " : "", s->elems[i]);
		if (!ret)
			ret = wd_buf_puts(out, " }\n");
	}
	return ret ? ret : wd_buf_puts(out, "\t}\n\n");
}

static int render_obj(const struct fw_obj_def *o, struct wd_buf *out)
{
	return wd_buf_printf(out,
			     "\t# %s\n\tct timeout %s {\n\t\tprotocol tcp\n\t\tl3proto inet\n"
			     "\t\tpolicy = { time_wait : %u, close : %u }\n\t}\n\n",
			     o->why, o->name, o->time_wait, o->close);
}

static int render_chain(const struct fw_model *m, const struct fw_chain_def *ch, struct wd_buf *out)
{
	int ret = wd_buf_printf(out,
				"\t# %s\n\tchain %s {\n\t\ttype %s hook %s priority %s; "
				"policy accept;\n",
				ch->why, ch->name, ch->type, fw_hook_name(ch->hook), ch->prio_text);

	for (unsigned i = 0; !ret && i < ch->nrules; i++) {
		const struct fw_rule *r = &ch->rules[i];

		if (r->why)
			ret = wd_buf_printf(out, "\t\t# %s\n", r->why);
		if (!ret)
			ret = wd_buf_puts(out, "\t\t");
		if (!ret)
			ret = fw_rule_text(m, r, out);
		if (!ret)
			ret = wd_buf_puts(out, "\n");
	}
	return ret ? ret : wd_buf_puts(out, "\t}\n");
}

int fw_render(const struct fw_config *c, struct wd_buf *out)
{
	struct fw_model m;
	int ret = fw_model_build(c, &m, NULL);

	if (ret < 0)
		return ret;
	if (c->mode == FW_MODE_RUN)
		ret = wd_buf_printf(
		    out,
		    "#!/usr/sbin/nft -f\n"
		    "# Warden ruleset of one rootless run, inside the run's own network "
		    "namespace,\n"
		    "# generated by `warden nft render --rootless`; do not edit.\n"
		    "# Gateway ports: transparent %u, DNS %u, proxy %u. NFLOG group %u.\n"
		    "# The namespace is new: the table is created, never replaced (one already\n"
		    "# there fails the load).\n"
		    "create table inet %s\n\n"
		    "table inet %s {\n",
		    c->port_transparent, c->port_dns, c->port_proxy, c->nflog_group, c->table,
		    c->table);
	else
		ret = wd_buf_printf(
		    out,
		    "#!/usr/sbin/nft -f\n"
		    "# Warden sandbox ruleset, generated by `warden nft render`; do not edit.\n"
		    "# Run interfaces: \"%s*\". Gateway ports: transparent %u, DNS %u, "
		    "proxy %u. NFLOG group %u.\n"
		    "# Per run: at most %u open flows, %u new flows a second (burst %u).\n"
		    "# Loading this file replaces the table atomically (and forgets every "
		    "registered run).\n"
		    "table inet %s\n"
		    "delete table inet %s\n\n"
		    "table inet %s {\n",
		    c->if_prefix, c->port_transparent, c->port_dns, c->port_proxy, c->nflog_group,
		    c->conns_per_run, c->new_per_s, c->new_per_s * 10, c->table, c->table,
		    c->table);
	for (unsigned i = 0; !ret && i < m.nobjs; i++)
		ret = render_obj(&m.objs[i], out);
	for (unsigned i = 0; !ret && i < m.nsets; i++)
		ret = render_set(&m.sets[i], out);
	for (unsigned i = 0; !ret && i < m.nchains; i++) {
		ret = wd_buf_puts(out, i ? "\n" : "");
		if (!ret)
			ret = render_chain(&m, &m.chains[i], out);
	}
	return ret ? ret : wd_buf_puts(out, "}\n");
}

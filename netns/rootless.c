/* rootless.c - the network of a rootless run, set up from inside its own (unprivileged) network
 * namespace: lo up, the gateway's and the program's addresses on lo, default routes via lo from
 * the program's addresses, the gateway's address reached from the program's. No veth: nothing of
 * the run reaches the host's namespace, and the `dummy` and `veth` drivers may not be loadable by a
 * user. Every connect() finds a route (to lo), and the run's nft table (FW_MODE_RUN) sends it to
 * the gateway's sockets, which live in this namespace at the gateway's address. */
#include "netns/netns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/route.h>
#include <stdio.h>
#include <string.h>

/* lo is ifindex 1 in every network namespace */
#define LO_IFINDEX 1

static int lo_up(struct nl_sock *sk)
{
	struct rtnl_link *orig = rtnl_link_alloc(), *chg = rtnl_link_alloc();
	int ret = -ENOMEM;

	if (orig && chg) {
		rtnl_link_set_ifindex(orig, LO_IFINDEX);
		rtnl_link_set_flags(chg, IFF_UP);
		ret = netns_errno_from_nl(rtnl_link_change(sk, orig, chg, 0));
	}
	if (orig)
		rtnl_link_put(orig);
	if (chg)
		rtnl_link_put(chg);
	return ret;
}

/* @a as a host address (/32, /128) on lo */
static int lo_addr(struct nl_sock *sk, int family, const void *a)
{
	struct rtnl_addr *ra = rtnl_addr_alloc();
	int len = family == AF_INET ? 32 : 128;
	struct nl_addr *local = nl_addr_build(family, a, (size_t)len / 8);
	int ret = -ENOMEM;

	if (ra && local) {
		nl_addr_set_prefixlen(local, len);
		rtnl_addr_set_ifindex(ra, LO_IFINDEX);
		ret = netns_errno_from_nl(rtnl_addr_set_local(ra, local));
		rtnl_addr_set_prefixlen(ra, len);
		if (family == AF_INET6)
			rtnl_addr_set_flags(ra, IFA_F_NODAD);
		if (!ret)
			ret = netns_errno_from_nl(rtnl_addr_add(sk, ra, NLM_F_CREATE | NLM_F_EXCL));
	}
	if (local)
		nl_addr_put(local);
	if (ra)
		rtnl_addr_put(ra);
	return ret;
}

/* default dev lo src @src */
static int lo_default_route(struct nl_sock *sk, int family, const void *src)
{
	static const uint8_t any[16];
	size_t alen = family == AF_INET ? 4 : 16;
	struct rtnl_route *rt = rtnl_route_alloc();
	struct nl_addr *dst = nl_addr_build(family, any, alen),
		       *pref = nl_addr_build(family, src, alen);
	struct rtnl_nexthop *nh = rtnl_route_nh_alloc();
	int ret = -ENOMEM;

	if (rt && dst && pref && nh) {
		nl_addr_set_prefixlen(dst, 0);
		rtnl_route_set_family(rt, (uint8_t)family);
		rtnl_route_set_table(rt, RT_TABLE_MAIN);
		rtnl_route_set_protocol(rt, RTPROT_STATIC);
		rtnl_route_set_scope(rt, family == AF_INET ? RT_SCOPE_LINK : RT_SCOPE_UNIVERSE);
		ret = netns_errno_from_nl(rtnl_route_set_dst(rt, dst));
		if (!ret)
			ret = netns_errno_from_nl(rtnl_route_set_pref_src(rt, pref));
		rtnl_route_nh_set_ifindex(nh, LO_IFINDEX);
		rtnl_route_add_nexthop(rt, nh);
		nh = NULL; /* the route owns it now */
		if (!ret)
			ret =
			    netns_errno_from_nl(rtnl_route_add(sk, rt, NLM_F_CREATE | NLM_F_EXCL));
	}
	if (nh)
		rtnl_route_nh_free(nh);
	if (dst)
		nl_addr_put(dst);
	if (pref)
		nl_addr_put(pref);
	if (rt)
		rtnl_route_put(rt);
	return ret;
}

/*
 * The local route of the gateway's address @host, with @src as its preferred source. A program
 * that connects to the gateway's address itself (its DNS server, the explicit proxy) would
 * otherwise send from that same address (the kernel's choice for a local destination), and the
 * gateway knows a run's connections by the program's address. IPv4 replaces the kernel's route
 * of the address; IPv6 keeps a route per address at metric 0 that a replace cannot reach, so the
 * IPv6 gateway address is no address of lo at all, only this route (the gateway's sockets bind
 * it with IPV6_FREEBIND).
 */
static int lo_local_route(struct nl_sock *sk, int family, const void *host, const void *src)
{
	size_t alen = family == AF_INET ? 4 : 16;
	struct rtnl_route *rt = rtnl_route_alloc();
	struct nl_addr *dst = nl_addr_build(family, host, alen),
		       *pref = nl_addr_build(family, src, alen);
	struct rtnl_nexthop *nh = rtnl_route_nh_alloc();
	int ret = -ENOMEM;

	if (rt && dst && pref && nh) {
		nl_addr_set_prefixlen(dst, (int)alen * 8);
		rtnl_route_set_family(rt, (uint8_t)family);
		rtnl_route_set_table(rt, RT_TABLE_LOCAL);
		rtnl_route_set_type(rt, RTN_LOCAL);
		rtnl_route_set_protocol(rt, RTPROT_KERNEL);
		rtnl_route_set_scope(rt, RT_SCOPE_HOST);
		ret = netns_errno_from_nl(rtnl_route_set_dst(rt, dst));
		rtnl_route_nh_set_ifindex(nh, LO_IFINDEX);
		rtnl_route_add_nexthop(rt, nh);
		nh = NULL; /* the route owns it now */
		if (!ret)
			ret = netns_errno_from_nl(rtnl_route_set_pref_src(rt, pref));
		if (!ret)
			ret = netns_errno_from_nl(
			    rtnl_route_add(sk, rt, NLM_F_CREATE | NLM_F_REPLACE));
	}
	if (nh)
		rtnl_route_nh_free(nh);
	if (dst)
		nl_addr_put(dst);
	if (pref)
		nl_addr_put(pref);
	if (rt)
		rtnl_route_put(rt);
	return ret;
}

int netns_rootless_up(const struct netns_addrs *a, struct wd_err *err)
{
	struct nl_sock *sk = nl_socket_alloc();
	char s[INET6_ADDRSTRLEN];
	int ret;

	if (!sk)
		return wd_err_set(err, -ENOMEM, "out of memory");
	ret = netns_errno_from_nl(nl_connect(sk, NETLINK_ROUTE));
	if (ret) {
		wd_err_set(err, ret, "rtnetlink in the run's namespace: %s", strerror(-ret));
		goto out;
	}
	ret = lo_up(sk);
	if (ret) {
		wd_err_set(err, ret, "bringing lo up in the run's namespace: %s", strerror(-ret));
		goto out;
	}
	{
		const struct {
			int family;
			const void *a;
		} addrs[] = {{AF_INET, &a->host4}, {AF_INET, &a->sbx4}, {AF_INET6, &a->sbx6}};

		for (size_t i = 0; i < WD_ARRAY_SIZE(addrs); i++) {
			ret = lo_addr(sk, addrs[i].family, addrs[i].a);
			if (ret) {
				inet_ntop(addrs[i].family, addrs[i].a, s, sizeof(s));
				wd_err_set(err, ret, "adding %s to lo in the run's namespace: %s",
					   s, strerror(-ret));
				goto out;
			}
		}
	}
	for (int v6 = 0; v6 < 2; v6++) {
		ret = v6 ? lo_local_route(sk, AF_INET6, &a->host6, &a->sbx6)
			 : lo_local_route(sk, AF_INET, &a->host4, &a->sbx4);
		if (ret) {
			wd_err_set(
			    err, ret,
			    "the gateway address's local %s route in the run's namespace: %s",
			    v6 ? "IPv6" : "IPv4", strerror(-ret));
			goto out;
		}
	}
	ret = lo_default_route(sk, AF_INET, &a->sbx4);
	if (!ret)
		ret = lo_default_route(sk, AF_INET6, &a->sbx6);
	if (ret)
		wd_err_set(err, ret, "adding a default route via lo in the run's namespace: %s",
			   strerror(-ret));
out:
	nl_socket_free(sk);
	return ret;
}

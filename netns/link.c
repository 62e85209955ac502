/* link.c - the netlink and /proc pieces of a run's network that lifecycle.c's stages put
 * together: the namespace's birth in a thread of its own, its bind mount, the veth pair, the
 * host side's hardening sysctls, addresses, links up, default routes, and deleting a link. */
#include "netns/netns_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/veth.h>
#include <netlink/route/route.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

/* Stage 6: host-side hardening of <prefix><id>, written while it is down. */
static const struct {
	const char *key; /* under /proc/sys/net/, %s is the interface */
	const char *val;
} host_sysctls[] = {
    {"ipv4/conf/%s/rp_filter", "1"},	       /* strict reverse-path filter: anti-spoof */
    {"ipv4/conf/%s/forwarding", "0"},	       /* never route what the sandbox sends */
    {"ipv4/conf/%s/accept_redirects", "0"},    /* ignore ICMP redirects from the sandbox */
    {"ipv4/conf/%s/send_redirects", "0"},      /* and send none to it */
    {"ipv4/conf/%s/accept_source_route", "0"}, /* no source-routed packets */
    {"ipv4/conf/%s/arp_ignore", "1"},	       /* answer ARP only for this link's address */
    {"ipv4/conf/%s/arp_announce", "2"},	       /* and never announce the host's others */
    {"ipv6/conf/%s/accept_ra", "0"},	       /* a sandbox must not install host routes */
    {"ipv6/conf/%s/forwarding", "0"},	       /* host, not router, on this link */
    {"ipv6/conf/%s/accept_redirects", "0"},
    {"ipv6/conf/%s/accept_source_route", "0"},
    {"ipv6/conf/%s/router_solicitations", "0"}, /* do not solicit routers from the sandbox */
    {"ipv6/conf/%s/accept_dad", "0"},		/* link-local usable at once; globals are nodad */
};

/* Stage 3: defaults in the new namespace, inherited by eth0 when it appears. */
static const struct {
	const char *path;
	const char *val;
} sandbox_sysctls[] = {
    {"/proc/sys/net/ipv6/conf/default/accept_ra", "0"},
    {"/proc/sys/net/ipv6/conf/default/router_solicitations", "0"},
    {"/proc/sys/net/ipv6/conf/default/accept_dad", "0"},
};

static int sysctl_write(const char *path, const char *val)
{
	int fd, ret;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = wd_write_all(fd, val, strlen(val));
	if (close(fd) < 0 && ret == 0)
		ret = -errno;
	return ret;
}

/* Print "addr/len" of @family into @out (for messages). */
static const char *addr_str(int family, const void *a, unsigned len, char *out, size_t outlen)
{
	char s[INET6_ADDRSTRLEN];

	if (!inet_ntop(family, a, s, sizeof(s)))
		snprintf(s, sizeof(s), "?");
	snprintf(out, outlen, "%s/%u", s, len);
	return out;
}

/* Stage 3, run in a thread of its own: the namespace and a socket inside it. */
static void *birth_main(void *arg)
{
	struct netns_birth_arg *b = arg;

	if (b->adopt_fd >= 0) {
		if (setns(b->adopt_fd, CLONE_NEWNET) < 0) {
			b->ret = -errno;
			b->step = "entering the given network namespace (setns)";
			return NULL;
		}
	} else if (unshare(CLONE_NEWNET) < 0) {
		b->ret = -errno;
		b->step = "creating the network namespace (unshare)";
		return NULL;
	}
	b->ns_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (b->ns_fd < 0) {
		b->ret = -errno;
		b->step = "opening the new network namespace";
		return NULL;
	}
	for (size_t i = 0; i < WD_ARRAY_SIZE(sandbox_sysctls); i++) {
		b->ret = sysctl_write(sandbox_sysctls[i].path, sandbox_sysctls[i].val);
		if (b->ret < 0) {
			b->step = "setting the sandbox's IPv6 defaults";
			snprintf(b->detail, sizeof(b->detail), "%s", sandbox_sysctls[i].path);
			return NULL;
		}
	}
	b->sk = nl_socket_alloc();
	if (!b->sk) {
		b->ret = -ENOMEM;
		b->step = "allocating the sandbox's netlink socket";
		return NULL;
	}
	b->ret = netns_errno_from_nl(nl_connect(b->sk, NETLINK_ROUTE));
	if (b->ret < 0)
		b->step = "opening a netlink socket inside the namespace";
	return NULL;
}

int netns_birth(struct netns_birth_arg *b, int adopt_fd, struct wd_err *err)
{
	pthread_t t;
	int rc;

	memset(b, 0, sizeof(*b));
	b->adopt_fd = adopt_fd;
	b->ns_fd = -1;
	rc = pthread_create(&t, NULL, birth_main, b);
	if (rc)
		return wd_err_set(err, -rc, "starting the namespace thread: %s", strerror(rc));
	pthread_join(t, NULL);
	if (b->ret < 0) {
		wd_err_set(err, b->ret, "%s%s%s: %s", b->step, b->detail[0] ? " " : "", b->detail,
			   strerror(-b->ret));
		return b->ret;
	}
	return 0;
}

/* Make @dir a shared mount point (as `ip netns` does), so that a namespace
 * unmounted here is unmounted in every mount namespace that copied it. */
static int netns_dir_prepare(const char *dir, struct wd_err *err)
{
	int ret = wd_mkdir_p(dir, 0755);

	if (ret < 0)
		return wd_err_set(err, ret, "creating %s: %s", dir, strerror(-ret));
	if (mount("", dir, "none", MS_SHARED | MS_REC, NULL) == 0)
		return 0;
	if (errno != EINVAL)
		goto fail;
	/* not a mount point yet: bind it onto itself, then share it */
	if (mount(dir, dir, "none", MS_BIND | MS_REC, NULL) < 0)
		goto fail;
	if (mount("", dir, "none", MS_SHARED | MS_REC, NULL) < 0)
		goto fail;
	return 0;
fail:
	ret = -errno;
	return wd_err_set(err, ret, "making %s a shared mount point: %s", dir, strerror(-ret));
}

/* Stage 4: bind-mount @ns_fd at @dir/@name. -EEXIST means the name is taken. */
int netns_bind(const char *dir, const char *name, int ns_fd, struct wd_err *err)
{
	char path[PATH_MAX], src[64];
	int fd, ret;

	ret = netns_dir_prepare(dir, err);
	if (ret < 0)
		return ret;
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return wd_err_set(err, -ENAMETOOLONG, "namespace path too long");
	fd = open(path, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0);
	if (fd < 0) {
		ret = -errno;
		return wd_err_set(err, ret, "creating %s: %s", path, strerror(-ret));
	}
	close(fd);
	snprintf(src, sizeof(src), "/proc/self/fd/%d", ns_fd);
	if (mount(src, path, "none", MS_BIND, NULL) < 0) {
		ret = -errno;
		unlink(path);
		return wd_err_set(err, ret, "bind-mounting the namespace at %s: %s", path,
				  strerror(-ret));
	}
	return 0;
}

/* Undo netns_bind(): detach the mount (its last reference to the namespace) and
 * remove the file. Return: 0, or a negative errno. */
int netns_unbind(const char *dir, const char *name)
{
	char path[PATH_MAX];
	int ret = 0;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if (umount2(path, MNT_DETACH) < 0 && errno != EINVAL && errno != ENOENT)
		ret = -errno;
	if (unlink(path) < 0 && errno != ENOENT && ret == 0)
		ret = -errno;
	return ret;
}

/* Interface index of @ifname in the namespace @sk lives in (SIOCGIFINDEX on
 * the netlink socket: the ioctl uses the socket's namespace). */
int netns_ifindex_in(struct nl_sock *sk, const char *ifname)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(nl_socket_get_fd(sk), SIOCGIFINDEX, &ifr) < 0)
		return -errno;
	return ifr.ifr_ifindex;
}

/* Stage 5: the veth pair, the peer created inside @ns_fd and up. */
int netns_veth_create(struct nl_sock *sk, const char *ifname, int ns_fd, struct wd_err *err)
{
	struct rtnl_link *link, *peer;
	int ret;

	link = rtnl_link_veth_alloc();
	if (!link)
		return wd_err_set(err, -ENOMEM, "creating veth %s: out of memory", ifname);
	rtnl_link_set_name(link, ifname);
	peer = rtnl_link_veth_get_peer(link);
	rtnl_link_set_name(peer, NETNS_SANDBOX_IFNAME);
	rtnl_link_set_ns_fd(peer, ns_fd);
	/* not IFF_UP here: veth refuses to open the peer before the pair is linked */
	rtnl_link_put(peer);
	ret = netns_errno_from_nl(rtnl_link_add(sk, link, NLM_F_CREATE | NLM_F_EXCL));
	rtnl_link_veth_release(link);
	if (ret < 0)
		return wd_err_set(err, ret, "creating veth %s <-> %s in the sandbox: %s", ifname,
				  NETNS_SANDBOX_IFNAME, strerror(-ret));
	return 0;
}

/* Stage 6. */
int netns_host_harden(const char *ifname, struct wd_err *err)
{
	for (size_t i = 0; i < WD_ARRAY_SIZE(host_sysctls); i++) {
		char path[PATH_MAX], key[128];
		int ret;

		snprintf(key, sizeof(key), host_sysctls[i].key, ifname);
		snprintf(path, sizeof(path), "/proc/sys/net/%s", key);
		ret = sysctl_write(path, host_sysctls[i].val);
		if (ret < 0)
			return wd_err_set(err, ret, "hardening %s: setting %s=%s: %s", ifname, key,
					  host_sysctls[i].val, strerror(-ret));
	}
	return 0;
}

static int link_up(struct nl_sock *sk, int ifindex, const char *what, struct wd_err *err)
{
	struct rtnl_link *orig = rtnl_link_alloc(), *chg = rtnl_link_alloc();
	int ret = -ENOMEM;

	if (!orig || !chg)
		goto out;
	rtnl_link_set_ifindex(orig, ifindex);
	rtnl_link_set_flags(chg, IFF_UP);
	ret = netns_errno_from_nl(rtnl_link_change(sk, orig, chg, 0));
out:
	if (orig)
		rtnl_link_put(orig);
	if (chg)
		rtnl_link_put(chg);
	if (ret < 0)
		return wd_err_set(err, ret, "bringing %s up: %s", what, strerror(-ret));
	return 0;
}

static int addr_add(struct nl_sock *sk, int ifindex, const char *ifdesc, int family, const void *a,
		    unsigned len, struct wd_err *err)
{
	struct rtnl_addr *ra = rtnl_addr_alloc();
	struct nl_addr *local = NULL;
	char s[INET6_ADDRSTRLEN + 8];
	int ret = -ENOMEM;

	if (!ra)
		goto out;
	local = nl_addr_build(family, a, family == AF_INET ? 4 : 16);
	if (!local)
		goto out;
	nl_addr_set_prefixlen(local, (int)len);
	rtnl_addr_set_ifindex(ra, ifindex);
	ret = netns_errno_from_nl(rtnl_addr_set_local(ra, local));
	if (ret < 0)
		goto out;
	rtnl_addr_set_prefixlen(ra, (int)len);
	if (family == AF_INET6)
		rtnl_addr_set_flags(ra, IFA_F_NODAD);
	ret = netns_errno_from_nl(rtnl_addr_add(sk, ra, NLM_F_CREATE | NLM_F_EXCL));
out:
	if (local)
		nl_addr_put(local);
	if (ra)
		rtnl_addr_put(ra);
	if (ret < 0)
		return wd_err_set(err, ret, "adding %s to %s: %s",
				  addr_str(family, a, len, s, sizeof(s)), ifdesc, strerror(-ret));
	return 0;
}

static int default_route_add(struct nl_sock *sk, int ifindex, int family, const void *gw,
			     struct wd_err *err)
{
	static const uint8_t any[16];
	struct rtnl_route *rt = rtnl_route_alloc();
	struct nl_addr *dst = NULL, *via = NULL;
	struct rtnl_nexthop *nh = NULL;
	size_t alen = family == AF_INET ? 4 : 16;
	char s[INET6_ADDRSTRLEN];
	int ret = -ENOMEM;

	if (!rt)
		goto out;
	dst = nl_addr_build(family, any, alen);
	via = nl_addr_build(family, gw, alen);
	nh = rtnl_route_nh_alloc();
	if (!dst || !via || !nh)
		goto out;
	nl_addr_set_prefixlen(dst, 0);
	rtnl_route_set_family(rt, (uint8_t)family);
	rtnl_route_set_table(rt, RT_TABLE_MAIN);
	rtnl_route_set_protocol(rt, RTPROT_STATIC);
	rtnl_route_set_scope(rt, RT_SCOPE_UNIVERSE);
	ret = netns_errno_from_nl(rtnl_route_set_dst(rt, dst));
	if (ret < 0)
		goto out;
	rtnl_route_nh_set_ifindex(nh, ifindex);
	rtnl_route_nh_set_gateway(nh, via);
	rtnl_route_add_nexthop(rt, nh);
	nh = NULL; /* the route owns it now */
	ret = netns_errno_from_nl(rtnl_route_add(sk, rt, NLM_F_CREATE | NLM_F_EXCL));
out:
	if (nh)
		rtnl_route_nh_free(nh);
	if (dst)
		nl_addr_put(dst);
	if (via)
		nl_addr_put(via);
	if (rt)
		rtnl_route_put(rt);
	if (ret < 0) {
		if (!inet_ntop(family, gw, s, sizeof(s)))
			snprintf(s, sizeof(s), "?");
		return wd_err_set(err, ret, "adding the default %s route via %s in the sandbox: %s",
				  family == AF_INET ? "IPv4" : "IPv6", s, strerror(-ret));
	}
	return 0;
}

/* Stage 7. */
int netns_host_side(struct nl_sock *sk, const struct netns_run *run, struct wd_err *err)
{
	int ifindex, ret;

	ifindex = netns_ifindex_in(sk, run->ifname);
	if (ifindex < 0)
		return wd_err_set(err, ifindex, "looking up %s: %s", run->ifname,
				  strerror(-ifindex));
	ret = addr_add(sk, ifindex, run->ifname, AF_INET, &run->addr.host4, run->addr.len4, err);
	if (ret < 0)
		return ret;
	ret = addr_add(sk, ifindex, run->ifname, AF_INET6, &run->addr.host6, run->addr.len6, err);
	if (ret < 0)
		return ret;
	return link_up(sk, ifindex, run->ifname, err);
}

/* Stage 8, through the socket that lives in the sandbox's namespace. */
int netns_sandbox_side(struct nl_sock *sk, const struct netns_run *run, struct wd_err *err)
{
	const char *eth = "eth0 in the sandbox";
	int ifindex, ret;

	ret = link_up(sk, 1, "lo in the sandbox", err); /* lo is ifindex 1 in every namespace */
	if (ret < 0)
		return ret;
	ifindex = netns_ifindex_in(sk, NETNS_SANDBOX_IFNAME);
	if (ifindex < 0)
		return wd_err_set(err, ifindex, "looking up %s: %s", eth, strerror(-ifindex));
	ret = link_up(sk, ifindex, eth, err);
	if (ret < 0)
		return ret;
	ret = addr_add(sk, ifindex, eth, AF_INET, &run->addr.sbx4, run->addr.len4, err);
	if (ret < 0)
		return ret;
	ret = addr_add(sk, ifindex, eth, AF_INET6, &run->addr.sbx6, run->addr.len6, err);
	if (ret < 0)
		return ret;
	ret = default_route_add(sk, ifindex, AF_INET, &run->addr.host4, err);
	if (ret < 0)
		return ret;
	return default_route_add(sk, ifindex, AF_INET6, &run->addr.host6, err);
}

/* Delete @ifname from the caller's namespace; already gone is fine (gc only:
 * this waits for the kernel). Return: 0, or a negative errno. */
int netns_link_delete_if_present(struct nl_sock *sk, const char *ifname)
{
	struct rtnl_link *l;
	int ret;

	l = rtnl_link_alloc();
	if (!l)
		return -ENOMEM;
	rtnl_link_set_name(l, ifname);
	ret = netns_errno_from_nl(rtnl_link_delete(sk, l));
	rtnl_link_put(l);
	return ret == -ENODEV || ret == -ENOENT ? 0 : ret;
}

/* Delete @ifname (if present) over a netlink socket of its own. */
int netns_delete_link(const char *ifname)
{
	struct nl_sock *sk;
	int ret;

	if (if_nametoindex(ifname) == 0)
		return 0;
	sk = nl_socket_alloc();
	if (!sk)
		return -ENOMEM;
	ret = netns_errno_from_nl(nl_connect(sk, NETLINK_ROUTE));
	if (ret == 0)
		ret = netns_link_delete_if_present(sk, ifname);
	nl_socket_free(sk);
	return ret;
}

/* Record how long @stage took since *@t, and restart the clock. */

/* lifecycle.c - a run's network, its whole lifecycle: create (namespace, veth, hardening,
 * addresses, routes: the stages below, their pieces in link.c), destroy, and gc of runs whose
 * launcher died.
 *
 * Theory of operation. netns_run_create() goes through named stages; each
 * failure names its stage in the error and undoes what came before:
 *
 *   1. names	random id -> <prefix><id> for the host interface and the namespace
 *   2. slot	claim an address slot (alloc.c), recording pid + run id
 *   3. birth	a short-lived thread unshare()s CLONE_NEWNET (only that thread
 *		moves: network namespaces are per task), sets the namespace's IPv6
 *		defaults, opens /proc/thread-self/ns/net and a NETLINK_ROUTE socket
 *		that stays bound to the new namespace, then exits. The calling
 *		thread never changes namespace. netns_run_adopt() is the same with
 *		setns() into a namespace someone else created.
 *   4. mount	optionally bind-mount the namespace at <netns_dir>/<name>
 *   5. veth	one RTM_NEWLINK: <prefix><id> here, its peer eth0 created directly
 *		in the namespace (IFLA_NET_NS_FD on the peer)
 *   6. harden	host-side sysctls of <prefix><id> while it is still down
 *   7. host	addresses on the host end (IPv6 nodad), then the host end up
 *   8. sandbox	through the namespace's socket: lo and eth0 up, eth0's addresses (nodad),
 *		default routes (v4, v6) via the host end
 *
 * Teardown never deletes the veth: it unmounts the bind mount and closes the
 * namespace fd, the last references, and the kernel removes the namespace and
 * with it both ends of the pair, asynchronously. Then the slot is freed. Because
 * removal is asynchronous, names are random and slots are handed out
 * round-robin, so neither is reused right away.
 */
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

/* How often a random name may clash with an existing one before we give up. */
#define NAME_ATTEMPTS 4

static void stage_done(struct netns_run *run, enum netns_stage stage, uint64_t *t)
{
	uint64_t now = wd_mono_ns();

	run->stage_ns[stage] = now - *t;
	*t = now;
}

/* One attempt at netns_run_create(); -EEXIST with *@clash set means the random
 * name was taken and a new one may be tried. */
static int run_create_once(const struct netns_pool_config *cfg, int adopt_fd, struct netns_run *run,
			   bool *clash, struct wd_err *err)
{
	struct netns_slot_rec rec;
	struct nl_sock *host = NULL;
	struct netns_birth_arg b = {.ns_fd = -1};
	bool have_slot = false, veth_made = false;
	uint8_t rnd[6];
	uint64_t t;
	int ret;

	memset(run, 0, sizeof(*run));
	run->netns_fd = -1;
	*clash = false;

	/* 1. names */
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return wd_err_set(err, -EIO, "reading random bytes for the run id failed");
	ret = netns_format_names(cfg->ifname_prefix, rnd, sizeof(rnd), run->id, run->ifname);
	if (ret < 0)
		return wd_err_set(err, ret, "bad interface prefix \"%s\"", cfg->ifname_prefix);
	memcpy(run->name, run->ifname, sizeof(run->name));

	/* 2. slot */
	memset(&rec, 0, sizeof(rec));
	rec.pid = getpid();
	ret = wd_proc_stat(0, &rec.start, NULL);
	if (ret < 0)
		return wd_err_set(err, ret, "reading this process's start time: %s",
				  strerror(-ret));
	memcpy(rec.id, run->id, sizeof(rec.id));
	memcpy(rec.ifname, run->ifname, sizeof(rec.ifname));
	memcpy(rec.name, run->name, sizeof(rec.name));
	rec.mounted = cfg->bind_mount;
	t = wd_mono_ns();
	ret = netns_slot_alloc(cfg, &rec, &run->slot, err);
	if (ret < 0)
		return ret;
	have_slot = true;
	ret = netns_slot_addrs(cfg, run->slot, &run->addr);
	if (ret < 0) {
		wd_err_set(err, ret, "computing the addresses of slot %u", run->slot);
		goto out;
	}
	stage_done(run, NETNS_STAGE_SLOT, &t);

	/* 3. birth */
	ret = netns_birth(&b, adopt_fd, err);
	if (ret < 0)
		goto out;
	run->netns_fd = b.ns_fd;
	b.ns_fd = -1;
	stage_done(run, NETNS_STAGE_BIRTH, &t);

	/* 4. mount */
	if (cfg->bind_mount) {
		ret = netns_bind(cfg->netns_dir, run->name, run->netns_fd, err);
		if (ret == -EEXIST)
			*clash = true;
		if (ret < 0)
			goto out;
		run->mounted = true;
	}
	stage_done(run, NETNS_STAGE_MOUNT, &t);

	/* 5. veth */
	host = nl_socket_alloc();
	if (!host) {
		ret = wd_err_set(err, -ENOMEM, "allocating a netlink socket: out of memory");
		goto out;
	}
	ret = netns_errno_from_nl(nl_connect(host, NETLINK_ROUTE));
	if (ret < 0) {
		wd_err_set(err, ret, "opening a netlink socket: %s", strerror(-ret));
		goto out;
	}
	if (adopt_fd >= 0 && netns_ifindex_in(b.sk, NETNS_SANDBOX_IFNAME) >= 0) {
		ret = wd_err_set(err, -EEXIST, "the given namespace already has an %s",
				 NETNS_SANDBOX_IFNAME);
		goto out;
	}
	ret = netns_veth_create(host, run->ifname, run->netns_fd, err);
	if (ret == -EEXIST)
		*clash = true;
	if (ret < 0)
		goto out;
	veth_made = true;
	stage_done(run, NETNS_STAGE_VETH, &t);

	/* 6. harden, 7. host side, 8. sandbox side */
	ret = netns_host_harden(run->ifname, err);
	if (ret < 0)
		goto out;
	stage_done(run, NETNS_STAGE_HARDEN, &t);
	ret = netns_host_side(host, run, err);
	if (ret < 0)
		goto out;
	stage_done(run, NETNS_STAGE_HOST, &t);
	ret = netns_sandbox_side(b.sk, run, err);
	if (ret < 0)
		goto out;
	stage_done(run, NETNS_STAGE_SANDBOX, &t);
	run->adopted = adopt_fd >= 0;
	run->live = true;
out:
	if (host)
		nl_socket_free(host);
	if (b.sk)
		nl_socket_free(b.sk); /* it holds a reference to the namespace */
	wd_closep(&b.ns_fd);
	if (ret < 0) {
		if (veth_made && adopt_fd >= 0)
			netns_delete_link(run->ifname); /* the namespace may outlive us */
		if (run->mounted)
			netns_unbind(cfg->netns_dir, run->name);
		run->mounted = false;
		wd_closep(&run->netns_fd);
		if (have_slot)
			netns_slot_release(cfg, run->slot, run->id, getpid());
	}
	return ret;
}

static int run_create(const struct netns_pool_config *cfg, int adopt_fd, struct netns_run *out,
		      struct wd_err *err)
{
	bool clash = false;
	int ret;

	memset(out, 0, sizeof(*out));
	out->netns_fd = -1;
	ret = netns_pool_check(cfg, NULL, err);
	if (ret < 0)
		return ret;
	for (int i = 0; i < NAME_ATTEMPTS; i++) {
		wd_err_clear(err);
		ret = run_create_once(cfg, adopt_fd, out, &clash, err);
		if (ret != -EEXIST || !clash)
			return ret;
	}
	return wd_err_set(err, -EEXIST, "no free run name after %d attempts", NAME_ATTEMPTS);
}

int netns_run_create(const struct netns_pool_config *cfg, struct netns_run *out, struct wd_err *err)
{
	return run_create(cfg, -1, out, err);
}

int netns_run_adopt(const struct netns_pool_config *cfg, int netns_fd, struct netns_run *out,
		    struct wd_err *err)
{
	struct stat given, own;

	memset(out, 0, sizeof(*out));
	out->netns_fd = -1;
	if (netns_fd < 0 || fstat(netns_fd, &given) < 0)
		return wd_err_set(err, -EBADF, "no namespace given");
	if (stat("/proc/thread-self/ns/net", &own) < 0)
		return wd_err_set(err, -errno, "reading this thread's namespace: %s",
				  strerror(errno));
	if (given.st_dev == own.st_dev && given.st_ino == own.st_ino)
		return wd_err_set(err, -EINVAL,
				  "the given namespace is the host's own: refusing to adopt it");
	return run_create(cfg, netns_fd, out, err);
}

int netns_run_destroy(const struct netns_pool_config *cfg, struct netns_run *run,
		      struct wd_err *err)
{
	int ret = 0, r;

	if (!run || !run->live)
		return 0;
	if (run->mounted) {
		r = netns_unbind(cfg->netns_dir, run->name);
		if (r < 0 && ret == 0)
			ret = wd_err_set(err, r, "removing namespace %s/%s: %s", cfg->netns_dir,
					 run->name, strerror(-r));
		run->mounted = false;
	}
	if (run->adopted) {
		/* others may hold the namespace: the pair must go before the slot does */
		r = netns_delete_link(run->ifname);
		if (r < 0 && ret == 0)
			ret = wd_err_set(err, r, "deleting %s: %s", run->ifname, strerror(-r));
	}
	wd_closep(&run->netns_fd);
	/* by id alone (ids are unique): a forked child may tear down its parent's run */
	r = netns_slot_release(cfg, run->slot, run->id, 0);
	if (r < 0 && ret == 0)
		ret = wd_err_set(err, r, "freeing address slot %u of %s: %s", run->slot,
				 run->ifname, strerror(-r));
	run->live = false;
	return ret;
}

int netns_gc(const struct netns_pool_config *cfg, unsigned *ret_reclaimed, struct wd_err *err)
{
	struct netns_stale *stale = NULL;
	struct nl_sock *sk = NULL;
	unsigned reclaimed = 0;
	size_t n = 0;
	int ret;

	ret = netns_pool_check(cfg, NULL, err);
	if (ret < 0)
		return ret;
	ret = netns_slot_list_stale(cfg, &stale, &n);
	if (ret < 0) {
		wd_err_set(err, ret, "listing slots in %s: %s", cfg->state_dir, strerror(-ret));
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const struct netns_slot_rec *r = &stale[i].rec;
		size_t plen = strlen(cfg->ifname_prefix);
		/* only names of our own making are unmounted or deleted */
		bool ours = strncmp(r->ifname, cfg->ifname_prefix, plen) == 0 &&
			    strncmp(r->name, cfg->ifname_prefix, plen) == 0;

		if (ours && r->mounted && cfg->netns_dir) {
			ret = netns_unbind(cfg->netns_dir, r->name);
			if (ret < 0) {
				wd_err_set(err, ret, "removing namespace %s/%s: %s", cfg->netns_dir,
					   r->name, strerror(-ret));
				goto out;
			}
		}
		if (ours && if_nametoindex(r->ifname) != 0) {
			if (!sk) {
				sk = nl_socket_alloc();
				if (!sk) {
					ret = wd_err_set(err, -ENOMEM, "gc: out of memory");
					goto out;
				}
				ret = netns_errno_from_nl(nl_connect(sk, NETLINK_ROUTE));
				if (ret < 0) {
					wd_err_set(err, ret, "opening a netlink socket: %s",
						   strerror(-ret));
					goto out;
				}
			}
			ret = netns_link_delete_if_present(sk, r->ifname);
			if (ret < 0) {
				wd_err_set(err, ret, "deleting %s: %s", r->ifname, strerror(-ret));
				goto out;
			}
		}
		ret = netns_slot_release(cfg, stale[i].slot, r->id, r->pid);
		if (ret < 0) {
			wd_err_set(err, ret, "freeing slot %u: %s", stale[i].slot, strerror(-ret));
			goto out;
		}
		if (ret > 0)
			reclaimed++;
	}
	ret = 0;
	if (ret_reclaimed)
		*ret_reclaimed = reclaimed;
out:
	if (sk)
		nl_socket_free(sk);
	free(stale);
	return ret;
}

int netns_run_set_owner(const struct netns_pool_config *cfg, const struct netns_run *run, pid_t pid)
{
	if (!run || !run->live || pid <= 0)
		return -EINVAL;
	return netns_slot_set_owner(cfg, run->slot, run->id, pid);
}

int netns_run_attach(const struct netns_pool_config *cfg, uint32_t slot, const char *id,
		     int netns_fd, struct netns_run *out, struct wd_err *err)
{
	struct netns_slot_rec rec;
	int ret;

	memset(out, 0, sizeof(*out));
	out->netns_fd = -1;
	ret = netns_slot_read(cfg, slot, &rec);
	if (ret == -ENOENT || ret == -EINVAL || (ret == 0 && strcmp(rec.id, id) != 0))
		return wd_err_set(err, -ESTALE, "address slot %u no longer holds network %s", slot,
				  id);
	if (ret < 0)
		return wd_err_set(err, ret, "reading address slot %u: %s", slot, strerror(-ret));
	ret = netns_slot_addrs(cfg, slot, &out->addr);
	if (ret < 0)
		return wd_err_set(err, ret, "computing the addresses of slot %u", slot);
	out->netns_fd = fcntl(netns_fd, F_DUPFD_CLOEXEC, 3);
	if (out->netns_fd < 0) {
		ret = -errno;
		return wd_err_set(err, ret, "duplicating the namespace of %s: %s", rec.name,
				  strerror(-ret));
	}
	memcpy(out->id, rec.id, sizeof(out->id));
	memcpy(out->ifname, rec.ifname, sizeof(out->ifname));
	memcpy(out->name, rec.name, sizeof(out->name));
	out->slot = slot;
	out->live = true;
	return 0;
}

int netns_slot_owner(const struct netns_pool_config *cfg, uint32_t slot, const char *id,
		     pid_t *ret_pid)
{
	struct netns_slot_rec rec;
	int ret = netns_slot_read(cfg, slot, &rec);

	if (ret == -ENOENT || ret == -EINVAL || (ret == 0 && strcmp(rec.id, id) != 0))
		return -ESTALE;
	if (ret < 0)
		return ret;
	*ret_pid = rec.pid;
	return 0;
}

int netns_run_healthy(const struct netns_run *run, struct wd_err *err)
{
	struct ifreq ifr;
	int fd, ret = 0;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", run->ifname);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return wd_err_set(err, -errno, "socket: %s", strerror(errno));
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		ret = wd_err_set(err, -ENODEV, "%s is gone", run->ifname);
	else if ((ifr.ifr_flags & (IFF_UP | IFF_RUNNING)) != (IFF_UP | IFF_RUNNING))
		ret = wd_err_set(err, -ENETDOWN, "%s is %s", run->ifname,
				 ifr.ifr_flags & IFF_UP ? "without carrier" : "down");
	close(fd);
	return ret;
}

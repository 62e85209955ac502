/* netns.h - a run's network: its namespace, the veth pair to the host, addresses,
 * routes, host-side hardening, and the address-slot allocator that concurrent
 * launchers share (libnl-3 route, in-process; no `ip` children).
 *
 * See docs/netns.md for the stages, the allocation scheme and the teardown.
 */
#ifndef WARDEN_NETNS_H
#define WARDEN_NETNS_H

#include <net/if.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/common.h"

/* Longest run id (hex digits) plus its NUL. */
#define NETNS_ID_MAX 13
/* Longest interface-name prefix: leaves at least 8 hex digits of id in 15 bytes. */
#define NETNS_PREFIX_MAX 7
/* Upper bound on the number of slots a pool offers, whatever its size. */
#define NETNS_MAX_SLOTS (1u << 20)
/* The sandbox side of every veth pair is called this. */
#define NETNS_SANDBOX_IFNAME "eth0"

/**
 * struct netns_prefix - an address prefix ("10.213.0.0/16")
 * @family:	AF_INET or AF_INET6
 * @v4:		the network, when @family is AF_INET
 * @v6:		the network, when @family is AF_INET6
 * @len:	prefix length in bits
 */
struct netns_prefix {
	int family;
	union {
		struct in_addr v4;
		struct in6_addr v6;
	};
	unsigned len;
};

/**
 * struct netns_pool_config - where runs get their addresses and names
 * @pool4:		IPv4 pool (default 10.213.0.0/16)
 * @run4_len:		prefix length of one run's IPv4 link: 30 or 31 (default 30)
 * @pool6:		IPv6 pool (default fd77:7764:6e00::/48)
 * @run6_len:		prefix length of one run's IPv6 link: 64 or 127 (default 64)
 * @state_dir:		allocation state (lock + one file per slot), default
 *			/run/warden/alloc; created 0700 when missing
 * @netns_dir:		where namespaces are bind-mounted (default /run/netns)
 * @bind_mount:		bind-mount each run's namespace as @netns_dir/<name> so
 *			`ip netns` shows it while the run lives (default true)
 * @ifname_prefix:	host-side interface (and namespace) name prefix, 1 to
 *			NETNS_PREFIX_MAX characters of [a-z0-9_-] (default "wd-")
 */
struct netns_pool_config {
	struct netns_prefix pool4;
	unsigned run4_len;
	struct netns_prefix pool6;
	unsigned run6_len;
	const char *state_dir;
	const char *netns_dir;
	bool bind_mount;
	char ifname_prefix[NETNS_PREFIX_MAX + 1];
};

/**
 * struct netns_addrs - the addresses of one slot
 * @host4:	host end of the IPv4 link (the sandbox's IPv4 gateway)
 * @sbx4:	sandbox end (eth0)
 * @len4:	IPv4 prefix length on both ends
 * @host6:	host end of the IPv6 link (the sandbox's IPv6 gateway)
 * @sbx6:	sandbox end (eth0)
 * @len6:	IPv6 prefix length on both ends
 */
struct netns_addrs {
	struct in_addr host4, sbx4;
	unsigned len4;
	struct in6_addr host6, sbx6;
	unsigned len6;
};

/**
 * enum netns_stage - the stages of netns_run_create(), for timing and messages
 * @NETNS_STAGE_SLOT:		claiming an address slot
 * @NETNS_STAGE_BIRTH:		creating the namespace (thread) and its netlink socket
 * @NETNS_STAGE_MOUNT:		bind-mounting it under netns_dir
 * @NETNS_STAGE_VETH:		creating the veth pair, the peer inside the namespace
 * @NETNS_STAGE_HARDEN:		host-side sysctls
 * @NETNS_STAGE_HOST:		host-side addresses, link up
 * @NETNS_STAGE_SANDBOX:	sandbox side: lo and eth0 up, addresses, default routes
 * @NETNS_STAGE_COUNT:		number of stages
 */
enum netns_stage {
	NETNS_STAGE_SLOT,
	NETNS_STAGE_BIRTH,
	NETNS_STAGE_MOUNT,
	NETNS_STAGE_VETH,
	NETNS_STAGE_HARDEN,
	NETNS_STAGE_HOST,
	NETNS_STAGE_SANDBOX,
	NETNS_STAGE_COUNT
};

/**
 * struct netns_run - the network of one run
 * @id:		random hex id, unique per run, never reused soon
 * @ifname:	host side of the veth pair: <prefix><id>
 * @name:	namespace name (same as @ifname); bind-mounted under
 *		netns_dir when @mounted
 * @netns_fd:	the namespace (O_RDONLY|O_CLOEXEC fd of /proc/.../ns/net), or -1;
 *		setns(@netns_fd, CLONE_NEWNET) from a child enters it
 * @mounted:	the namespace is bind-mounted at netns_dir/@name
 * @slot:	allocation slot the addresses come from
 * @addr:	addresses and prefix lengths of both ends
 * @adopted:	the namespace came from netns_run_adopt()
 * @live:	created and not yet destroyed (netns_run_destroy() is a no-op otherwise)
 * @stage_ns:	how long each stage of netns_run_create() took (monotonic ns)
 */
struct netns_run {
	char id[NETNS_ID_MAX];
	char ifname[IFNAMSIZ];
	char name[IFNAMSIZ];
	int netns_fd;
	bool mounted;
	uint32_t slot;
	struct netns_addrs addr;
	bool adopted;
	bool live;
	uint64_t stage_ns[NETNS_STAGE_COUNT];
};

/**
 * netns_stage_name() - a stage's short name ("slot", "birth", ...), "?" when unknown
 */
const char *netns_stage_name(enum netns_stage stage);

/**
 * netns_pool_config_defaults() - fill @cfg with the defaults listed at
 * struct netns_pool_config
 * @cfg:	configuration to fill
 */
void netns_pool_config_defaults(struct netns_pool_config *cfg);

/**
 * netns_parse_prefix() - parse "a.b.c.d/n" or "x:y::/n" strictly
 * @text:	the prefix; the length is required, host bits must be zero
 * @ret:	on success, the parsed prefix
 *
 * Return: 0, or -EINVAL when @text is not a valid prefix.
 */
int netns_parse_prefix(const char *text, struct netns_prefix *ret);

/**
 * netns_format_prefix() - format @p as "addr/len"
 * @p:		prefix to format
 * @out:	buffer of at least INET6_ADDRSTRLEN + 4 bytes
 * @outlen:	size of @out
 *
 * Return: 0, or -EINVAL (unknown family) or -ENOSPC (@out too small).
 */
int netns_format_prefix(const struct netns_prefix *p, char *out, size_t outlen);

/**
 * netns_pool_check() - validate @cfg and count the slots its pools offer
 * @cfg:	configuration to check
 * @ret_slots:	on success, number of slots: the smaller of what the two pools
 *		hold, capped at NETNS_MAX_SLOTS; may be NULL
 * @err:	on failure, says which setting is wrong; may be NULL
 *
 * Return: 0, or -EINVAL.
 */
int netns_pool_check(const struct netns_pool_config *cfg, uint32_t *ret_slots, struct wd_err *err);

/**
 * netns_slot_addrs() - the addresses of slot @slot: slot n is the n-th /run4_len
 * of pool4 and the n-th /run6_len of pool6; in a /30 the host end is .1 and the
 * sandbox .2, in a /31 the host is the first address; in a /64 the host end is
 * ::1 and the sandbox ::2, in a /127 the host is the first address.
 * @cfg:	a configuration netns_pool_check() accepts
 * @slot:	slot number, below the slot count
 * @ret:	on success, the addresses
 *
 * Return: 0, -EINVAL (bad @cfg) or -ERANGE (@slot outside the pool).
 */
int netns_slot_addrs(const struct netns_pool_config *cfg, uint32_t slot, struct netns_addrs *ret);

/**
 * netns_format_names() - build a run's id and interface name from random bytes
 * @prefix:	interface name prefix (1..NETNS_PREFIX_MAX chars of [a-z0-9_-])
 * @rnd:	random bytes
 * @nrnd:	number of bytes in @rnd (at least 4)
 * @ret_id:	on success, lowercase hex of @rnd, cut so the name fits 15 bytes
 *		and NETNS_ID_MAX - 1 digits
 * @ret_ifname:	on success, @prefix followed by @ret_id
 *
 * Return: 0, or -EINVAL (bad prefix or too few random bytes).
 */
int netns_format_names(const char *prefix, const uint8_t *rnd, size_t nrnd,
		       char ret_id[NETNS_ID_MAX], char ret_ifname[IFNAMSIZ]);

/**
 * netns_errno_from_nl() - convert a libnl error (-NLE_*) to a negative errno
 * @nlerr:	libnl return value; values >= 0 mean success
 *
 * Return: 0 for success, otherwise a negative errno (-EIO when unknown).
 */
int netns_errno_from_nl(int nlerr);

/**
 * netns_run_create() - build a run's network: allocate a slot, create the
 * namespace (from a short-lived thread; the caller never moves), the veth pair
 * <prefix><id> <-> eth0 in one request, host-side hardening, addresses on both
 * ends (IPv6 with nodad), lo and both ends up, default routes in the sandbox.
 * @cfg:	pool configuration (netns_pool_check() must accept it)
 * @out:	on success, the run; on failure left with @out->live false and
 *		@out->netns_fd -1, everything created so far undone
 * @err:	on failure, names the step that failed; may be NULL
 *
 * Needs CAP_SYS_ADMIN and CAP_NET_ADMIN. The host side goes into the caller's
 * current network namespace.
 *
 * Return: 0, or a negative errno (-ENOSPC when the pool is full).
 */
int netns_run_create(const struct netns_pool_config *cfg, struct netns_run *out,
		     struct wd_err *err);

/**
 * netns_run_adopt() - netns_run_create() in an existing namespace, e.g. one an
 * unprivileged launcher created (with its own user namespace) and handed over
 * @cfg:	pool configuration
 * @netns_fd:	the namespace (an fd of /proc/<pid>/ns/net or a bind mount);
 *		duplicated, the caller keeps its own
 * @out:	as for netns_run_create(); @out->netns_fd is the duplicate
 * @err:	on failure, names the step that failed; may be NULL
 *
 * The namespace must not have an eth0 yet (-EEXIST). Since others may keep the
 * namespace alive, netns_run_destroy() deletes an adopted run's veth itself
 * (synchronously, unlike for netns_run_create()'s runs) before the slot, and so
 * its addresses, can be handed out again.
 *
 * Return: 0, or a negative errno (-EBADF when @netns_fd is not an open fd,
 * -EINVAL when it is the caller's own network namespace or not one at all).
 */
int netns_run_adopt(const struct netns_pool_config *cfg, int netns_fd, struct netns_run *out,
		    struct wd_err *err);

/**
 * netns_run_destroy() - tear a run's network down: unmount the namespace's bind
 * mount, close its fd (the kernel then removes the veth pair, asynchronously)
 * and free the slot. Never deletes the veth synchronously, except for an
 * adopted run (see netns_run_adopt()).
 * @cfg:	the configuration the run was created with
 * @run:	the run; NULL, or a run that is not live, is a no-op
 * @err:	on failure, says what could not be undone; may be NULL
 *
 * Everything that can be undone is, even after an error; @run is not live
 * afterwards either way, so a second call is harmless.
 *
 * Return: 0, or the first negative errno met.
 */
int netns_run_destroy(const struct netns_pool_config *cfg, struct netns_run *run,
		      struct wd_err *err);

/**
 * netns_gc() - reclaim the slots of runs whose owner process is gone: unmount
 * and remove their namespace's bind mount, delete their host interface if it is
 * still there (synchronously: gc is not on a run's launch path), free the slot.
 * @cfg:		pool configuration (its state_dir is scanned)
 * @ret_reclaimed:	on success, number of slots freed; may be NULL
 * @err:		on failure, what went wrong; may be NULL
 *
 * Owner liveness is judged by pid and process start time through /proc, so the
 * state directory must be used by processes of one pid namespace; interface
 * existence is judged in the caller's network namespace.
 *
 * Return: 0, or a negative errno.
 */
int netns_gc(const struct netns_pool_config *cfg, unsigned *ret_reclaimed, struct wd_err *err);

/**
 * netns_slot_count() - count the slots currently recorded in the state dir
 * @cfg:	pool configuration
 * @ret_used:	on success, the number of slot records (live or stale)
 *
 * Return: 0 (also when the state dir does not exist yet), or a negative errno.
 */
int netns_slot_count(const struct netns_pool_config *cfg, unsigned *ret_used);

/**
 * netns_run_set_owner() - hand @run's address slot to another process: a later
 * netns_gc() reclaims the slot when that process is gone (e.g. the detached child
 * that tears a run down, the holder of a ready-made network, the run that leases it)
 * @cfg:	the configuration the run was created with
 * @run:	a live run
 * @pid:	the new owner
 *
 * Return: 0; -EINVAL when @run is not live; -ESTALE when its slot no longer names
 * it; -ENOENT when @pid does not exist; another negative errno.
 */
int netns_run_set_owner(const struct netns_pool_config *cfg, const struct netns_run *run,
			pid_t pid);

/**
 * netns_run_attach() - rebuild the struct netns_run of a live run network from its
 * slot record and a descriptor of its namespace (e.g. one held by another process)
 * @cfg:	the configuration it was created with
 * @slot:	its slot
 * @id:		its id (the slot's record must name it)
 * @netns_fd:	its namespace; duplicated, the caller keeps its own
 * @out:	on success, a live, unmounted run; netns_run_destroy() tears it down
 * @err:	on failure, what is wrong; may be NULL
 *
 * Return: 0; -ESTALE when the slot does not hold run @id; another negative errno.
 */
int netns_run_attach(const struct netns_pool_config *cfg, uint32_t slot, const char *id,
		     int netns_fd, struct netns_run *out, struct wd_err *err);

/**
 * netns_slot_owner() - who owns @slot, if it holds network @id
 * @cfg:	pool configuration
 * @slot:	the slot
 * @id:		the network id its record must name
 * @ret_pid:	on success, the owner's pid
 *
 * Return: 0; -ESTALE when the slot is free or holds another network; another
 * negative errno.
 */
int netns_slot_owner(const struct netns_pool_config *cfg, uint32_t slot, const char *id,
		     pid_t *ret_pid);

/**
 * netns_run_healthy() - cheap check that a run network still works as built: the
 * host end exists, is up and has carrier (so the peer eth0 is up in its namespace)
 * @run:	the run
 * @err:	when it is not, why; may be NULL
 *
 * Return: 0 when healthy, else a negative errno (-ENODEV no interface, -ENETDOWN
 * down or no carrier).
 */
int netns_run_healthy(const struct netns_run *run, struct wd_err *err);

/**
 * netns_rootless_up() - the network of a rootless run, from inside its own network namespace
 * (the caller is in it, with CAP_NET_ADMIN over it): lo up; @a's sandbox (the program)
 * addresses on lo as /32 and /128; the host (the gateway) addresses reached through local routes
 * whose source is the sandbox address (a program that connects to the gateway's address sends
 * from its own; the IPv4 one is an address of lo too, the IPv6 one only a route: sockets bind
 * it with IPV6_FREEBIND); default routes via lo whose source is the sandbox address
 * @a:		the addresses (netns_slot_addrs())
 * @err:	what failed
 *
 * Return: 0, or a negative errno.
 */
int netns_rootless_up(const struct netns_addrs *a, struct wd_err *err);

#endif /* WARDEN_NETNS_H */

/* pool.h - the pool of ready-made run networks (pool.c, pool_entry.c): lease, fill, gc; the network
 * stage and `warden gc --pool` use it. */
#ifndef WARDEN_RUN_POOL_H
#define WARDEN_RUN_POOL_H

#include "common/common.h"
#include "conf/conf.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct netns_pool_config;
struct netns_run;
struct fw_config;

/* Where ready-made run networks wait (one file per network, see run_pool.c). */
#define RUN_POOL_DIR "/run/warden/pool"
/* Ready networks kept by default ($WARDEN_POOL overrides; 0 disables), and at most. */
#define RUN_POOL_DEFAULT 2
#define RUN_POOL_MAX 16
/* Seconds a ready network waits to be leased before its holder ends it ($WARDEN_POOL_IDLE
 * overrides, 1..RUN_POOL_IDLE_MAX), and how often a holder looks whether its veth and its host
 * namespace are still there. */
#define RUN_POOL_IDLE_DEFAULT 600
#define RUN_POOL_IDLE_MAX 86400
#define RUN_POOL_CHECK_S 2
/* argv[0] and comm of a holder: `warden-pool <netns>` (main() dispatches on it). */
#define RUN_POOL_HOLDER_NAME "warden-pool"

/**
 * run_pool_size() - how many ready networks to keep: $WARDEN_POOL (0..RUN_POOL_MAX), else
 * RUN_POOL_DEFAULT (also when the variable is not a number in range)
 */
unsigned run_pool_size(void);

/** run_pool_idle_s() - $WARDEN_POOL_IDLE (1..RUN_POOL_IDLE_MAX), else RUN_POOL_IDLE_DEFAULT */
unsigned run_pool_idle_s(void);

/**
 * run_pool_holder() - main() of a holder, `warden-pool <netns>` (exec'd by the maker of a
 * pooled network with the namespace on fd 3 and the adoption pipe on fd 4): waits to be
 * adopted, then sleeps until killed (a lease), idle for run_pool_idle_s(), or its veth or
 * host namespace is gone; in those three cases it removes its entry and nft elements first
 * @argc:	2
 * @argv:	RUN_POOL_HOLDER_NAME, the network's name (its host-side interface)
 *
 * Return: RUN_EXIT_USAGE when not started that way; otherwise it does not return.
 */
int run_pool_holder(int argc, char **argv);

/**
 * run_pool_netns_in_use() - whether the network namespace with inode @ino still has a reason
 * to exist: it is pid 1's, it is bind-mounted under /run/netns (or /var/run/netns), or a
 * process that is not a pool holder lives in it (an unknown inode, 0, counts as in use)
 */
bool run_pool_netns_in_use(unsigned long long ino);

/**
 * struct run_pool_info - one pooled network as `warden status` shows it (run_pool_list())
 * @id:		the network's name (its host-side interface)
 * @state:	"ready" (a holder keeps it) or "making"
 * @pid:	the holder's (or maker's) pid
 * @alive:	that process still runs
 */
struct run_pool_info {
	char id[32];
	char state[8];
	pid_t pid;
	bool alive;
};

/**
 * run_pool_list() - the pooled networks in @dir, read without the pool's lock (entries are
 * renamed into place), unparsable files left out
 * @dir:	the pool folder (RUN_POOL_DIR)
 * @out:	filled with up to @max entries
 * @max:	room in @out
 * @ret_n:	how many there are (may exceed @max: only @max are filled in)
 * Return: 0, or a negative errno (the folder cannot be read; a missing one is empty).
 */
int run_pool_list(const char *dir, struct run_pool_info *out, size_t max, size_t *ret_n);

/**
 * run_pool_lease() - take a ready network of this configuration out of the pool
 * @dir:	the pool folder (RUN_POOL_DIR)
 * @nc:		the run's network configuration (must bind-mount namespaces)
 * @fc:		the run's nft configuration (the network's elements are in its table)
 * @record:	called (under the pool's lock) once the network is the caller's and healthy,
 *		before it leaves the pool: the caller records it in its run state; a non-zero
 *		return gives up the lease (the network is torn down) and is returned
 * @arg:	passed to @record
 * @out:	on success, the live network (its slot's owner is the caller)
 * @err:	why a leased network was refused; may be NULL
 *
 * Return: 0; -ENOENT when no ready network of this configuration is pooled (or the pool is
 * locked by someone else: the launch path never waits); -EAGAIN when the ones met were
 * unhealthy (torn down; @err says why; build a fresh one); the error of @record.
 */
int run_pool_lease(const char *dir, const struct netns_pool_config *nc, const struct fw_config *fc,
		   int (*record)(void *arg, const struct netns_run *net), void *arg,
		   struct netns_run *out, struct wd_err *err);

/**
 * run_pool_fill() - make ready networks until the pool holds @want of this configuration
 * (counting those being made by live makers); the table must be installed
 * @dir:	the pool folder
 * @nc:		network configuration
 * @fc:		nft configuration
 * @want:	target size
 * @ret_made:	number made; may be NULL
 * @err:	what failed; may be NULL
 *
 * Return: 0, or a negative errno (what was made stays; a half-made one is undone).
 */
int run_pool_fill(const char *dir, const struct netns_pool_config *nc, const struct fw_config *fc,
		  unsigned want, unsigned *ret_made, struct wd_err *err);

/**
 * run_pool_gc() - reclaim pooled networks: half-made ones whose maker is gone, ready ones of
 * another configuration, whose holder is gone or that fail the health check (interface up
 * with carrier), those of another host namespace that is gone (run_pool_netns_in_use()), and
 * with @drain all of this host namespace's
 * (nft elements, namespace, veth, slot, entry)
 * @dir:		the pool folder
 * @nc:			the configuration whose healthy ready networks are kept
 * @fc:			its nft configuration
 * @drain:		reclaim every entry
 * @ret_reclaimed:	number reclaimed; may be NULL
 * @err:		the first failure; may be NULL
 *
 * Return: 0, or the first negative errno (the other entries are still handled).
 */
int run_pool_gc(const char *dir, const struct netns_pool_config *nc, const struct fw_config *fc,
		bool drain, unsigned *ret_reclaimed, struct wd_err *err);

#endif /* WARDEN_RUN_POOL_H */

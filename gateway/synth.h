/* synth.h - a run's synthetic addresses (internal header; synth.c, pure): the
 * DNS front binds each allowed name to an address of the run's pools, and the TCP
 * path learns a connection's name back from the address it dialled. */
#ifndef WARDEN_GATEWAY_SYNTH_H
#define WARDEN_GATEWAY_SYNTH_H

#include "common/common.h"
#include "gateway/addr.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/**
 * struct gw_synth_entry - one bound synthetic address (one allocation)
 * @addr:	the address
 * @name:	the name it stands for
 */
struct gw_synth_entry {
	struct gw_addr addr;
	char name[];
};

/**
 * struct gw_synth - a run's synthetic addresses: name <-> address, per family
 * @net:	the pool of each family ([0] v4, [1] v6)
 * @prefix:	its prefix length
 * @n:		bound entries (never removed)
 * @by_addr:	struct gw_synth_entry by address (owns them)
 * @by_name:	the same entries by (family, name)
 * @limit:	most entries per family
 * @count:	entries per family
 * @rng:	allocation randomness
 */
struct gw_synth {
	struct gw_addr net[2];
	unsigned prefix[2];
	size_t n;
	struct wd_htable by_addr;
	struct wd_htable by_name;
	size_t limit;
	size_t count[2];
	struct gw_rng rng;
};

/**
 * gw_synth_init() - an empty pool pair
 * @s:		the pools
 * @net4:	IPv4 pool ("100.96.0.0/12"), prefix 8..30
 * @net6:	IPv6 pool, prefix 16..126
 * @limit:	most addresses handed out per family (also capped by the pool size)
 * @seed:	seed for the random allocation
 *
 * Return: 0, or -EINVAL for a bad pool.
 */
int gw_synth_init(struct gw_synth *s, const char *net4, const char *net6, size_t limit,
		  uint64_t seed);

/**
 * gw_synth_get() - the synthetic address for @name, allocating one if needed
 * @s:		the pools
 * @family:	AF_INET or AF_INET6
 * @name:	normalised name (lower case, no trailing dot)
 * @ret:	the address
 *
 * A new address is chosen at random among the free ones of the pool (not
 * the network address nor, for IPv4, the broadcast address) and stays bound
 * to @name for the life of @s.
 *
 * Return: 0 (bound before), 1 (newly bound), -ENOSPC when the pool or the
 * limit is exhausted, -EINVAL, -ENOMEM.
 */
int gw_synth_get(struct gw_synth *s, int family, const char *name, struct gw_addr *ret);

/**
 * gw_synth_name() - the name bound to @a
 * Return: the name (owned by @s), or NULL when @a is not bound.
 */
const char *gw_synth_name(struct gw_synth *s, const struct gw_addr *a);

/** gw_synth_in_pool() - @a lies inside one of the pools (bound or not). */
bool gw_synth_in_pool(const struct gw_synth *s, const struct gw_addr *a);

/** gw_synth_free() - release everything; @s may be zeroed. */
void gw_synth_free(struct gw_synth *s);

#endif /* WARDEN_GATEWAY_SYNTH_H */

/* cache.h - the name cache (internal header; cache.c, pure): name -> addresses,
 * kept by TTL clamped to [floor, ceiling], fed by the resolver (resolve.c). */
#ifndef WARDEN_GATEWAY_CACHE_H
#define WARDEN_GATEWAY_CACHE_H

#include "common/common.h"
#include "gateway/addr.h"

#include <stddef.h>
#include <stdint.h>

#define GW_CACHE_ADDRS 16

/**
 * struct gw_cache_entry - one cached answer for a name
 * @name:	the name
 * @rcode:	DNS rcode of the answer (NOERROR with no addresses = no data)
 * @addrs:	addresses (A and AAAA together)
 * @n:		number of @addrs
 * @expires:	monotonic ns after which the entry is stale
 * @hash:	wd_hash_str(@name)
 */
struct gw_cache_entry {
	char name[256];
	int rcode;
	struct gw_addr addrs[GW_CACHE_ADDRS];
	size_t n;
	uint64_t expires;
	uint64_t hash;
};

/**
 * struct gw_cache - name -> addresses, by TTL clamped to [floor, ceiling]
 * @t:		struct gw_cache_entry by name (@t.n entries)
 * @max:	most entries
 * @ttl_floor:	shortest time an answer is kept (s)
 * @ttl_ceil:	longest (s)
 */
struct gw_cache {
	struct wd_htable t;
	size_t max;
	uint32_t ttl_floor;
	uint32_t ttl_ceil;
};

/**
 * gw_cache_init() - an empty cache
 * @c:		the cache
 * @max:	most entries kept
 * @ttl_floor:	shortest time (s) an answer is kept, also for negative answers
 * @ttl_ceil:	longest
 *
 * Return: 0, -EINVAL, -ENOMEM.
 */
int gw_cache_init(struct gw_cache *c, size_t max, uint32_t ttl_floor, uint32_t ttl_ceil);

/**
 * gw_cache_put() - remember an answer (replacing an older one)
 * @c:		the cache
 * @name:	the name
 * @rcode:	its rcode
 * @addrs:	addresses (up to GW_CACHE_ADDRS are kept)
 * @n:		how many
 * @ttl:	the answer's TTL in seconds (clamped)
 * @now:	monotonic ns
 *
 * When full, stale entries are dropped first; if still full the answer is
 * not cached.
 *
 * Return: 0, -ENOSPC (not cached), -ENOMEM.
 */
int gw_cache_put(struct gw_cache *c, const char *name, int rcode, const struct gw_addr *addrs,
		 size_t n, uint32_t ttl, uint64_t now);

/**
 * gw_cache_get() - a fresh answer for @name
 * Return: the entry (valid until the next put), or NULL.
 */
const struct gw_cache_entry *gw_cache_get(struct gw_cache *c, const char *name, uint64_t now);

/** gw_cache_free() - release everything. */
void gw_cache_free(struct gw_cache *c);

#endif /* WARDEN_GATEWAY_CACHE_H */

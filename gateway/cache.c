/* cache.c - the gateway's name cache: name -> upstream addresses (A and
 * AAAA together), kept for the answer's TTL clamped to [floor, ceiling];
 * negative answers are kept for the floor. Pure: the caller passes the clock.
 * Entries live in a wd_htable under the keyed hash (the names are the
 * sandbox's); a stale entry goes when it is looked up, or in the sweep a full
 * cache makes before it refuses a new name. */
#include "gateway/cache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static bool entry_eq(const void *item, const void *key)
{
	return !strcmp(((const struct gw_cache_entry *)item)->name, key);
}

int gw_cache_init(struct gw_cache *c, size_t max, uint32_t ttl_floor, uint32_t ttl_ceil)
{
	memset(c, 0, sizeof(*c));
	if (!max || ttl_floor > ttl_ceil)
		return -EINVAL;
	if (wd_htable_init(&c->t, max < 64 ? max : 64))
		return -ENOMEM;
	c->max = max;
	c->ttl_floor = ttl_floor;
	c->ttl_ceil = ttl_ceil;
	return 0;
}

static bool stale(void *item, void *now)
{
	struct gw_cache_entry *e = item;

	if (e->expires > *(const uint64_t *)now)
		return false;
	free(e);
	return true;
}

int gw_cache_put(struct gw_cache *c, const char *name, int rcode, const struct gw_addr *addrs,
		 size_t n, uint32_t ttl, uint64_t now)
{
	struct gw_cache_entry *e;
	uint64_t h;

	if (!name || strlen(name) >= sizeof(e->name))
		return -EINVAL;
	if (n == 0 || rcode)
		ttl = c->ttl_floor;
	if (ttl < c->ttl_floor)
		ttl = c->ttl_floor;
	if (ttl > c->ttl_ceil)
		ttl = c->ttl_ceil;
	h = wd_hash_str(name);
	e = wd_htable_find(&c->t, h, entry_eq, name);
	if (!e) {
		if (c->t.n >= c->max) {
			wd_htable_sweep(&c->t, stale, &now);
			if (c->t.n >= c->max)
				return -ENOSPC;
		}
		e = calloc(1, sizeof(*e));
		if (!e)
			return -ENOMEM;
		strcpy(e->name, name);
		e->hash = h;
		if (wd_htable_insert(&c->t, h, e)) {
			free(e);
			return -ENOMEM;
		}
	}
	e->rcode = rcode;
	e->n = n < GW_CACHE_ADDRS ? n : GW_CACHE_ADDRS;
	if (e->n)
		memcpy(e->addrs, addrs, e->n * sizeof(*addrs));
	e->expires = now + (uint64_t)ttl * 1000000000ull;
	return 0;
}

const struct gw_cache_entry *gw_cache_get(struct gw_cache *c, const char *name, uint64_t now)
{
	struct gw_cache_entry *e = wd_htable_find(&c->t, wd_hash_str(name), entry_eq, name);

	if (!e)
		return NULL;
	if (e->expires <= now) {
		wd_htable_remove(&c->t, e->hash, e);
		free(e);
		return NULL;
	}
	return e;
}

void gw_cache_free(struct gw_cache *c)
{
	size_t cursor = 0;
	void *e;

	while ((e = wd_htable_each(&c->t, &cursor)))
		free(e);
	wd_htable_free(&c->t);
	memset(c, 0, sizeof(*c));
}

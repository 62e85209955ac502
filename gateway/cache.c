/* cache.c - the gateway's name cache: name -> upstream addresses (A and
 * AAAA together), kept for the answer's TTL clamped to [floor, ceiling];
 * negative answers are kept for the floor. Pure: the caller passes the clock. */
#include "gateway/gw.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static size_t bucket(const struct gw_cache *c, const char *name)
{
	uint32_t h = 2166136261u;

	for (const char *p = name; *p; p++) {
		h ^= (uint8_t)*p;
		h *= 16777619u;
	}
	return h & (c->nb - 1);
}

int gw_cache_init(struct gw_cache *c, size_t max, uint32_t ttl_floor, uint32_t ttl_ceil)
{
	memset(c, 0, sizeof(*c));
	if (!max || ttl_floor > ttl_ceil)
		return -EINVAL;
	c->nb = 64;
	while (c->nb < max && c->nb < (1u << 20))
		c->nb *= 2;
	c->b = calloc(c->nb, sizeof(*c->b));
	if (!c->b)
		return -ENOMEM;
	c->max = max;
	c->ttl_floor = ttl_floor;
	c->ttl_ceil = ttl_ceil;
	return 0;
}

/* drop every stale entry */
static void sweep(struct gw_cache *c, uint64_t now)
{
	for (size_t i = 0; i < c->nb; i++) {
		struct gw_cache_entry **pp = &c->b[i];

		while (*pp) {
			struct gw_cache_entry *e = *pp;

			if (e->expires <= now) {
				*pp = e->next;
				free(e);
				c->n--;
			} else {
				pp = &e->next;
			}
		}
	}
}

static struct gw_cache_entry **find(struct gw_cache *c, const char *name)
{
	struct gw_cache_entry **pp = &c->b[bucket(c, name)];

	while (*pp && strcmp((*pp)->name, name))
		pp = &(*pp)->next;
	return pp;
}

int gw_cache_put(struct gw_cache *c, const char *name, int rcode, const struct gw_addr *addrs,
		 size_t n, uint32_t ttl, uint64_t now)
{
	struct gw_cache_entry **pp, *e;

	if (!name || strlen(name) >= sizeof(e->name))
		return -EINVAL;
	if (n == 0 || rcode)
		ttl = c->ttl_floor;
	if (ttl < c->ttl_floor)
		ttl = c->ttl_floor;
	if (ttl > c->ttl_ceil)
		ttl = c->ttl_ceil;
	pp = find(c, name);
	e = *pp;
	if (!e) {
		if (c->n >= c->max) {
			sweep(c, now);
			if (c->n >= c->max)
				return -ENOSPC;
			pp = find(c, name);
		}
		e = calloc(1, sizeof(*e));
		if (!e)
			return -ENOMEM;
		strcpy(e->name, name);
		*pp = e;
		c->n++;
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
	struct gw_cache_entry **pp, *e;

	if (!c->b)
		return NULL;
	pp = find(c, name);
	e = *pp;
	if (!e)
		return NULL;
	if (e->expires <= now) {
		*pp = e->next;
		free(e);
		c->n--;
		return NULL;
	}
	return e;
}

void gw_cache_free(struct gw_cache *c)
{
	for (size_t i = 0; c->b && i < c->nb; i++) {
		struct gw_cache_entry *e = c->b[i];

		while (e) {
			struct gw_cache_entry *next = e->next;

			free(e);
			e = next;
		}
	}
	free(c->b);
	memset(c, 0, sizeof(*c));
}

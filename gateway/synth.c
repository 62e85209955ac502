/* synth.c - a run's synthetic addresses: each allowed name gets an address
 * chosen at random in the pool, bound for the run's life (never reused),
 * with indexes name -> address and address -> name.
 *
 * Entries are only ever added; each is one allocation (address and name)
 * held by two wd_htables under the keyed hash: by address (the owner, for
 * freeing) and by name (the names are the sandbox's; a name's v4 and v6
 * entries share its hash).
 */
#include "gateway/synth.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_addr(const struct gw_addr *a)
{
	return wd_hash(a->a, gw_addr_len(a->family));
}

static int fam_idx(int family)
{
	return family == AF_INET ? 0 : family == AF_INET6 ? 1 : -1;
}

int gw_synth_init(struct gw_synth *s, const char *net4, const char *net6, size_t limit,
		  uint64_t seed)
{
	memset(s, 0, sizeof(*s));
	if (gw_cidr_parse(net4, &s->net[0], &s->prefix[0]) || s->net[0].family != AF_INET ||
	    s->prefix[0] < 8 || s->prefix[0] > 30)
		return -EINVAL;
	if (gw_cidr_parse(net6, &s->net[1], &s->prefix[1]) || s->net[1].family != AF_INET6 ||
	    s->prefix[1] < 16 || s->prefix[1] > 126)
		return -EINVAL;
	s->limit = limit ? limit : 1;
	gw_rng_seed(&s->rng, seed);
	return 0;
}

/* usable addresses in pool @f (capped at 2^62) */
static uint64_t pool_size(const struct gw_synth *s, int f)
{
	unsigned bits = (f ? 128u : 32u) - s->prefix[f];

	if (bits > 62)
		bits = 62;
	/* v4: not the network nor the broadcast address; v6: not the network address */
	return (1ull << bits) - (f ? 1 : 2);
}

/* the pool's address number @k (1 .. size) */
static void pool_addr(const struct gw_synth *s, int f, uint64_t k, struct gw_addr *out)
{
	size_t len = f ? 16 : 4;

	*out = s->net[f];
	for (size_t i = 0; i < 8 && k; i++) {
		out->a[len - 1 - i] |= (uint8_t)(k & 0xff);
		k >>= 8;
	}
}

static bool eq_addr(const void *item, const void *key)
{
	return gw_addr_eq(&((const struct gw_synth_entry *)item)->addr, key);
}

struct name_key {
	int family;
	const char *name;
};

static bool eq_name(const void *item, const void *key)
{
	const struct gw_synth_entry *e = item;
	const struct name_key *k = key;

	return e->addr.family == k->family && !strcmp(e->name, k->name);
}

/* bind @a to @name (hash @hn) in both indexes. Return: 0, or -ENOMEM (nothing bound). */
static int bind_name(struct gw_synth *s, const struct gw_addr *a, const char *name, uint64_t hn)
{
	size_t len = strlen(name);
	struct gw_synth_entry *e = malloc(sizeof(*e) + len + 1);
	uint64_t ha = hash_addr(a);

	if (!e)
		return -ENOMEM;
	e->addr = *a;
	memcpy(e->name, name, len + 1);
	if (wd_htable_insert(&s->by_addr, ha, e)) {
		free(e);
		return -ENOMEM;
	}
	if (wd_htable_insert(&s->by_name, hn, e)) {
		wd_htable_remove(&s->by_addr, ha, e);
		free(e);
		return -ENOMEM;
	}
	s->n++;
	return 0;
}

int gw_synth_get(struct gw_synth *s, int family, const char *name, struct gw_addr *ret)
{
	int f = fam_idx(family);
	struct name_key key = {family, name};
	const struct gw_synth_entry *e;
	uint64_t size, start, hn;
	struct gw_addr a;

	if (f < 0 || !name || !*name)
		return -EINVAL;
	hn = wd_hash_str(name);
	e = wd_htable_find(&s->by_name, hn, eq_name, &key);
	if (e) {
		*ret = e->addr;
		return 0;
	}
	size = pool_size(s, f);
	if (s->count[f] >= s->limit || s->count[f] >= size)
		return -ENOSPC;
	/* a random start, then the next free address (wrapping) */
	start = gw_rng_next(&s->rng) % size;
	for (uint64_t i = 0; i < size; i++) {
		pool_addr(s, f, (start + i) % size + 1, &a);
		if (wd_htable_find(&s->by_addr, hash_addr(&a), eq_addr, &a))
			continue;
		if (bind_name(s, &a, name, hn))
			return -ENOMEM;
		s->count[f]++;
		*ret = a;
		return 1;
	}
	return -ENOSPC;
}

const char *gw_synth_name(struct gw_synth *s, const struct gw_addr *a)
{
	const struct gw_synth_entry *e;

	if (fam_idx(a->family) < 0)
		return NULL;
	e = wd_htable_find(&s->by_addr, hash_addr(a), eq_addr, a);
	return e ? e->name : NULL;
}

bool gw_synth_in_pool(const struct gw_synth *s, const struct gw_addr *a)
{
	int f = fam_idx(a->family);

	return f >= 0 && gw_prefix_contains(&s->net[f], s->prefix[f], a);
}

void gw_synth_free(struct gw_synth *s)
{
	size_t cursor = 0;
	void *e;

	while ((e = wd_htable_each(&s->by_addr, &cursor)))
		free(e);
	wd_htable_free(&s->by_addr);
	wd_htable_free(&s->by_name);
	memset(s, 0, sizeof(*s));
}

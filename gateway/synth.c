/* synth.c - a run's synthetic addresses: each allowed name gets an address
 * chosen at random in the pool, bound for the run's life (never reused),
 * with indexes name -> address and address -> name.
 *
 * Entries are only ever added, so the two open-addressing indexes need no
 * tombstones; they are rebuilt when they pass half full.
 */
#include "gateway/gw.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint32_t fnv(const void *p, size_t n, uint32_t h)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 16777619u;
	}
	return h;
}

static uint32_t hash_addr(const struct gw_addr *a)
{
	return fnv(a->a, gw_addr_len(a->family), 2166136261u + (uint32_t)a->family);
}

static uint32_t hash_name(int family, const char *name)
{
	return fnv(name, strlen(name), 2166136261u + (uint32_t)family);
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

static uint32_t *find_slot(uint32_t *idx, size_t mask, const struct gw_synth_entry *v, uint32_t h,
			   bool (*eq)(const struct gw_synth_entry *, const void *), const void *key)
{
	for (size_t i = h & mask;; i = (i + 1) & mask) {
		if (!idx[i] || eq(&v[idx[i] - 1], key))
			return &idx[i];
	}
}

static bool eq_addr(const struct gw_synth_entry *e, const void *key)
{
	return gw_addr_eq(&e->addr, key);
}

struct name_key {
	int family;
	const char *name;
};

static bool eq_name(const struct gw_synth_entry *e, const void *key)
{
	const struct name_key *k = key;

	return e->addr.family == k->family && !strcmp(e->name, k->name);
}

static int grow(struct gw_synth *s)
{
	size_t cap = s->cap ? s->cap * 2 : 16, mask = cap * 2 - 1;
	struct gw_synth_entry *v = realloc(s->v, cap * sizeof(*v));
	uint32_t *ba, *bn;

	if (!v)
		return -ENOMEM;
	s->v = v;
	ba = calloc(mask + 1, sizeof(*ba));
	bn = calloc(mask + 1, sizeof(*bn));
	if (!ba || !bn) {
		free(ba);
		free(bn);
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->n; i++) {
		struct name_key k = {v[i].addr.family, v[i].name};

		*find_slot(ba, mask, v, hash_addr(&v[i].addr), eq_addr, &v[i].addr) =
		    (uint32_t)i + 1;
		*find_slot(bn, mask, v, hash_name(k.family, k.name), eq_name, &k) = (uint32_t)i + 1;
	}
	free(s->by_addr);
	free(s->by_name);
	s->by_addr = ba;
	s->by_name = bn;
	s->cap = cap;
	s->mask = mask;
	return 0;
}

int gw_synth_get(struct gw_synth *s, int family, const char *name, struct gw_addr *ret)
{
	int f = fam_idx(family);
	struct name_key key = {family, name};
	uint64_t size, start;
	uint32_t *slot;
	struct gw_addr a;
	char *copy;

	if (f < 0 || !name || !*name)
		return -EINVAL;
	if (s->n == s->cap && grow(s))
		return -ENOMEM;
	slot = find_slot(s->by_name, s->mask, s->v, hash_name(family, name), eq_name, &key);
	if (*slot) {
		*ret = s->v[*slot - 1].addr;
		return 0;
	}
	size = pool_size(s, f);
	if (s->count[f] >= s->limit || s->count[f] >= size)
		return -ENOSPC;
	/* a random start, then the next free address (wrapping) */
	start = gw_rng_next(&s->rng) % size;
	for (uint64_t i = 0; i < size; i++) {
		uint32_t *as;

		pool_addr(s, f, (start + i) % size + 1, &a);
		as = find_slot(s->by_addr, s->mask, s->v, hash_addr(&a), eq_addr, &a);
		if (*as)
			continue;
		copy = strdup(name);
		if (!copy)
			return -ENOMEM;
		s->v[s->n].addr = a;
		s->v[s->n].name = copy;
		s->n++;
		*as = (uint32_t)s->n;
		*slot = (uint32_t)s->n;
		s->count[f]++;
		*ret = a;
		return 1;
	}
	return -ENOSPC;
}

const char *gw_synth_name(const struct gw_synth *s, const struct gw_addr *a)
{
	uint32_t *slot;

	if (!s->by_addr || fam_idx(a->family) < 0)
		return NULL;
	slot = find_slot(s->by_addr, s->mask, s->v, hash_addr(a), eq_addr, a);
	return *slot ? s->v[*slot - 1].name : NULL;
}

bool gw_synth_in_pool(const struct gw_synth *s, const struct gw_addr *a)
{
	int f = fam_idx(a->family);

	return f >= 0 && gw_prefix_contains(&s->net[f], s->prefix[f], a);
}

void gw_synth_free(struct gw_synth *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].name);
	free(s->v);
	free(s->by_addr);
	free(s->by_name);
	memset(s, 0, sizeof(*s));
}

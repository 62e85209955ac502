/* dnsbudget.c - the DNS exfiltration budget's arithmetic, pure (no clock, no I/O): a program
 * allowed `*.example.test` can spell data into the names it asks; each run's new names below
 * a wildcard parent are charged the bytes left of the parent, at most
 * limits.dns_label_kib_per_min KiB in a one-minute window per parent.
 *
 * Theory of operation: the state is one run's (struct gw_dnsbudget in struct gw_run). A
 * parent's window is fixed: it starts with the first name charged after the previous one
 * ended, and ends GW_DNSB_WINDOW_NS later (so two back-to-back windows let at most twice the
 * budget through in a minute that straddles them). The names charged are remembered as
 * keyed hashes of their wire form (SipHash under a secret key: a program cannot aim two names
 * at one slot on purpose) in one open-addressing table per run, at most half full; a name
 * found there is free for the run's life, so a name answered before the budget ran out keeps
 * resolving. Refused names are not remembered: each new ask of one is decided again. */
#include "gateway/dnsbudget.h"
#include "common/common.h"

#include <stdlib.h>
#include <string.h>

size_t gw_dnsb_cost(const char *name, const char *parent)
{
	size_t n = strlen(name), p = strlen(parent);

	return n > p + 1 ? n - p - 1 : 1;
}

static struct gw_dnsb_parent *parent_get(struct gw_dnsbudget *b, const char *parent)
{
	struct gw_dnsb_parent *ps;
	char *name;

	for (size_t i = 0; i < b->nparents; i++)
		if (!strcmp(b->parents[i].name, parent))
			return &b->parents[i];
	if (b->nparents >= GW_DNSB_PARENTS_MAX)
		return &b->parents[b->nparents - 1];
	name = strdup(parent);
	ps = realloc(b->parents, (b->nparents + 1) * sizeof(*ps));
	if (!name || !ps) {
		free(name);
		if (ps)
			b->parents = ps;
		return NULL;
	}
	b->parents = ps;
	ps = &b->parents[b->nparents++];
	memset(ps, 0, sizeof(*ps));
	ps->name = name;
	return ps;
}

/* the slot of @h in @b->seen: where it is, or the empty slot where it goes */
static size_t seen_slot(const struct gw_dnsbudget *b, uint64_t h)
{
	size_t mask = b->seen_cap - 1, i = (size_t)h & mask;

	while (b->seen[i] && b->seen[i] != h)
		i = (i + 1) & mask;
	return i;
}

static bool seen_has(const struct gw_dnsbudget *b, uint64_t h)
{
	return b->seen_cap && b->seen[seen_slot(b, h)] == h;
}

/* remember @h; false when the table is full (GW_DNSB_NAMES_MAX) or out of memory */
static bool seen_add(struct gw_dnsbudget *b, uint64_t h)
{
	if (b->nseen >= GW_DNSB_NAMES_MAX)
		return false;
	if ((b->nseen + 1) * 2 > b->seen_cap) {
		size_t cap = b->seen_cap ? b->seen_cap * 2 : 64;
		struct gw_dnsbudget nb = {.seen = calloc(cap, sizeof(uint64_t)), .seen_cap = cap};

		if (!nb.seen)
			return false;
		for (size_t i = 0; i < b->seen_cap; i++)
			if (b->seen[i])
				nb.seen[seen_slot(&nb, b->seen[i])] = b->seen[i];
		free(b->seen);
		b->seen = nb.seen;
		b->seen_cap = cap;
	}
	b->seen[seen_slot(b, h)] = h;
	b->nseen++;
	return true;
}

enum gw_dnsb_result gw_dnsb_charge(struct gw_dnsbudget *b, const char *parent, const char *name,
				   const uint8_t *wire, size_t wire_len, uint64_t limit,
				   uint64_t now, uint64_t *used)
{
	uint64_t h = wd_hash(wire, wire_len), cost;
	struct gw_dnsb_parent *p;

	if (used)
		*used = 0;
	if (!limit)
		return GW_DNSB_SEEN;
	h = h ? h : 1; /* 0 marks an empty slot */
	if (seen_has(b, h))
		return GW_DNSB_SEEN;
	p = parent_get(b, parent);
	if (!p)
		return GW_DNSB_OVER; /* out of memory: refused, and said */
	if (now - p->start >= GW_DNSB_WINDOW_NS || now < p->start || (!p->used && !p->denied)) {
		p->start = now;
		p->used = 0;
		p->denied = 0;
	}
	cost = gw_dnsb_cost(name, parent);
	if (p->used + cost > limit) {
		if (used)
			*used = p->used;
		return p->denied++ ? GW_DNSB_OVER_AGAIN : GW_DNSB_OVER;
	}
	p->used += cost;
	if (used)
		*used = p->used;
	(void)seen_add(b, h); /* full: charged, not remembered (it costs again) */
	return GW_DNSB_CHARGED;
}

void gw_dnsb_free(struct gw_dnsbudget *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->nparents; i++)
		free(b->parents[i].name);
	free(b->parents);
	free(b->seen);
	memset(b, 0, sizeof(*b));
}

/* dnsbudget.h - the DNS exfiltration budget (internal header; dnsbudget.c): per run and per
 * wildcard parent, the bytes of the distinct names asked below the parent in a one-minute
 * window (the policy's limits.dns_label_kib_per_min). Pure arithmetic over state the run holds
 * (struct gw_run); the clock is the caller's (the loop's wake-up time). */
#ifndef WARDEN_GATEWAY_DNSBUDGET_H
#define WARDEN_GATEWAY_DNSBUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* the window: fixed, one minute, starting with the first name charged to a parent in it */
#define GW_DNSB_WINDOW_NS (60ULL * 1000000000ULL)
/* the default budget (limits.dns_label_kib_per_min not set), KiB a minute per parent */
#define GW_DNSB_DEFAULT_KIB 4
/* distinct names a run's budget remembers (answered free when asked again); past it a new
 * name is still charged but not remembered, so it costs again each time it is asked */
#define GW_DNSB_NAMES_MAX 16384
/* wildcard parents a run's budget keeps apart; past it every further parent shares the last */
#define GW_DNSB_PARENTS_MAX 64

/**
 * struct gw_dnsb_parent - one wildcard parent's window
 * @name:	the parent ("example.test" for `*.example.test`; heap)
 * @start:	when its window began (monotonic ns)
 * @used:	bytes charged in the window
 * @denied:	new names refused in the window
 */
struct gw_dnsb_parent {
	char *name;
	uint64_t start;
	uint64_t used;
	uint64_t denied;
};

/**
 * struct gw_dnsbudget - one run's DNS exfiltration budget (zeroed: empty)
 * @parents:	the parents charged so far, @nparents of them
 * @nparents:	see @parents
 * @seen:	keyed hashes of the names charged (open addressing, 0: empty), @seen_cap slots
 * @seen_cap:	see @seen (a power of two, or 0)
 * @nseen:	names in @seen
 */
struct gw_dnsbudget {
	struct gw_dnsb_parent *parents;
	size_t nparents;
	uint64_t *seen;
	size_t seen_cap;
	size_t nseen;
};

/* what one name costs (gw_dnsb_charge()) */
enum gw_dnsb_result {
	GW_DNSB_SEEN = 0, /* asked before and answered: free */
	GW_DNSB_CHARGED,  /* new, within the budget: charged and remembered */
	GW_DNSB_OVER,	  /* new, past the budget: refuse; the window's first refusal (audit it) */
	GW_DNSB_OVER_AGAIN, /* new, past the budget: refuse; refused before in this window */
};

/**
 * gw_dnsb_cost() - the bytes a name costs under its parent: the part left of the parent,
 * without the dot before it ("a.b" for "a.b.example.test" under "example.test": 3)
 * @name:	the name asked
 * @parent:	its wildcard parent (a proper suffix of @name after a dot)
 * Return: the cost, at least 1.
 */
size_t gw_dnsb_cost(const char *name, const char *parent);

/**
 * gw_dnsb_charge() - charge @name to @parent's window at @now
 * @b:		the run's budget
 * @parent:	the wildcard parent of the rule that allowed @name
 * @name:	the name as the run asked it (lower case, no trailing dot)
 * @wire:	the name's wire form as sent (case kept): its key among the names seen, so a
 *		name asked in other letter cases is a new name
 * @wire_len:	its length
 * @limit:	the budget in bytes a window (0: off, every name is free)
 * @now:	the loop's time (monotonic ns)
 * @used:	if not NULL, the parent's bytes used in the window after this name
 *
 * A name seen before is free; a new one is charged its gw_dnsb_cost() when the window has
 * room for it, and refused otherwise (a refused name is not remembered). A window older than
 * GW_DNSB_WINDOW_NS starts again empty at @now. Out of memory a new name is refused (fails
 * closed).
 *
 * Return: what @name cost (enum gw_dnsb_result).
 */
enum gw_dnsb_result gw_dnsb_charge(struct gw_dnsbudget *b, const char *parent, const char *name,
				   const uint8_t *wire, size_t wire_len, uint64_t limit,
				   uint64_t now, uint64_t *used);

/** gw_dnsb_free() - release @b's memory (it is then empty); NULL is fine. */
void gw_dnsb_free(struct gw_dnsbudget *b);

#endif /* WARDEN_GATEWAY_DNSBUDGET_H */

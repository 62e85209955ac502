/* resolve.h - upstream name resolution (internal header; resolve.c): c-ares in
 * the worker's loop, A and AAAA of a name shared by everyone who waits for it and
 * kept in the name cache, and forwarding one query for the DNS front. Its users
 * see no c-ares type. */
#ifndef WARDEN_GATEWAY_RESOLVE_H
#define WARDEN_GATEWAY_RESOLVE_H

#include "common/common.h"
#include "gateway/cache.h"
#include "gateway/ev.h"
#include "conf/conf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>

struct ares_channeldata;
struct gw_lookup;

/**
 * struct gw_waiter - one wait for a name's addresses, embedded in the waiting object
 * @link:	on @lk's queue while @lk is set
 * @lk:		the lookup waited for (NULL: none)
 * @cb:		called once with the answer (valid during the call only)
 */
struct gw_waiter {
	TAILQ_ENTRY(gw_waiter) link;
	struct gw_lookup *lk;
	void (*cb)(struct gw_waiter *w, const struct gw_cache_entry *e);
};

/**
 * struct gw_lookup - a name being resolved, with everyone waiting for it
 * @hash:	wd_hash_str(@name)
 * @res:	the resolver
 * @name:	the name
 * @pending:	queries not answered yet (AAAA and A: 2)
 * @rcode:	the answer's rcode so far
 * @ttl:	the shortest TTL of the addresses so far
 * @addrs:	the addresses so far, @n of them
 * @n:		see @addrs
 * @waiters:	in order of arrival
 */
struct gw_lookup {
	uint64_t hash;
	struct gw_resolver *res;
	char name[256];
	int pending;
	int rcode;
	uint32_t ttl;
	struct gw_addr addrs[GW_CACHE_ADDRS];
	size_t n;
	TAILQ_HEAD(, gw_waiter) waiters;
};

/**
 * struct gw_forward - one query forwarded for the DNS front, embedded in its owner
 * @cb:		called once: @status 0 with the upstream's answer (@abuf NULL when
 *		there is none: a failure), or -ECANCELED when the resolver goes away
 */
struct gw_forward {
	void (*cb)(struct gw_forward *f, int status, const uint8_t *abuf, size_t alen);
};

/**
 * struct gw_resolver - c-ares and the name cache
 * @ev:		the loop
 * @ares:	the channel
 * @ok:		@ares exists
 * @cache:	name -> addresses
 * @lookups:	pending struct gw_lookup by name
 */
struct gw_resolver {
	struct gw_ev *ev;
	struct ares_channeldata *ares;
	bool ok;
	struct gw_cache cache;
	struct wd_htable lookups;
};

/**
 * gw_resolver_init() - the name cache and the c-ares channel in the loop
 * @res:	the resolver
 * @ev:		the loop
 * @conf:	upstream resolvers (none: /etc/resolv.conf)
 * @lim:	the cache's TTL floor and ceiling
 * @err:	what failed
 * Return: 0, or a negative errno.
 */
int gw_resolver_init(struct gw_resolver *res, struct gw_ev *ev, const struct wd_gwconf *conf,
		     const struct gw_limits *lim, struct wd_err *err);

/** gw_resolver_free() - destroy the channel (pending callbacks see -ECANCELED) and the cache. */
void gw_resolver_free(struct gw_resolver *res);

/**
 * gw_resolve() - A and AAAA of @name: from the cache at once, else when c-ares
 * answers (@w->cb is called exactly once unless cancelled)
 */
void gw_resolve(struct gw_resolver *res, const char *name, struct gw_waiter *w);

/** gw_resolve_cancel() - forget @w (its callback will not run); harmless when idle. */
void gw_resolve_cancel(struct gw_waiter *w);

/**
 * gw_lookup_answer() - one of @lk's two queries was answered
 * @lk:		the lookup
 * @abuf:	the upstream's answer (NULL: none came)
 * @alen:	its length
 *
 * The rcodes of the AAAA and A answers are merged (one NOERROR wins over an
 * NXDOMAIN or SERVFAIL of the other), the addresses of the answer section kept
 * (at most GW_CACHE_ADDRS) with the shortest TTL; after the second answer the
 * result is cached and every waiter is called, in order of arrival, and @lk is
 * freed. (c-ares calls it; tests call it with answers of their own.)
 */
void gw_lookup_answer(struct gw_lookup *lk, const uint8_t *abuf, size_t alen);

/** gw_resolver_ok() - there is an upstream resolver to ask. */
bool gw_resolver_ok(const struct gw_resolver *res);

/** gw_resolver_forward() - ask upstream for @name's records of @type; @f->cb answers. */
void gw_resolver_forward(struct gw_resolver *res, const char *name, uint16_t type,
			 struct gw_forward *f);

/** gw_resolver_event() - an epoll event on a c-ares socket. */
void gw_resolver_event(struct gw_resolver *res, int fd, unsigned events);

/** gw_resolver_timeouts() - let c-ares handle its expired timeouts. */
void gw_resolver_timeouts(struct gw_resolver *res);

/** gw_resolver_next() - c-ares' next deadline (monotonic ns), or UINT64_MAX. */
uint64_t gw_resolver_next(struct gw_resolver *res);

#endif /* WARDEN_GATEWAY_RESOLVE_H */

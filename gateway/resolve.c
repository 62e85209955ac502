/* resolve.c - upstream name resolution for connections: c-ares driven from
 * the worker's loop (ARES_OPT_SOCK_STATE_CB, ares_process_fd, ares_timeout),
 * A and AAAA asked together with ares_query, answers parsed with the
 * gateway's own DNS parser and cached by TTL. Concurrent lookups of one name
 * share one pair of queries: a struct gw_lookup in g->lookups (a wd_htable by
 * name) with a queue of waiters, each answered in order of arrival. */
#include "gateway/gw_internal.h"

#include <arpa/nameser.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/time.h>

static void sock_state(void *data, ares_socket_t fd, int readable, int writable)
{
	struct gw *g = data;
	unsigned ev = (readable ? EPOLLIN : 0) | (writable ? EPOLLOUT : 0);
	uint64_t ref = GW_REF(GW_REF_ARES, 0) | (uint32_t)fd;

	if (!ev) {
		gw_ep_del(g, fd);
		return;
	}
	if (gw_ep_mod(g, fd, ev, ref) == -ENOENT)
		gw_ep_add(g, fd, ev, ref);
}

int gw_resolve_init(struct gw *g, struct wd_err *err)
{
	struct ares_options o = {0};
	int r;

	r = ares_library_init(ARES_LIB_INIT_ALL);
	if (r != ARES_SUCCESS)
		return wd_err_set(err, -EIO, "c-ares: %s", ares_strerror(r));
	o.sock_state_cb = sock_state;
	o.sock_state_cb_data = g;
	o.flags = ARES_FLAG_NOSEARCH | ARES_FLAG_NOALIASES;
	o.timeout = 2000;
	o.tries = 2;
	r = ares_init_options(&g->ares, &o,
			      ARES_OPT_SOCK_STATE_CB | ARES_OPT_FLAGS | ARES_OPT_TIMEOUTMS |
				  ARES_OPT_TRIES);
	if (r != ARES_SUCCESS)
		return wd_err_set(err, -EIO, "c-ares: %s", ares_strerror(r));
	g->ares_ok = true;
	if (g->conf.nresolvers) {
		struct wd_buf csv = WD_BUF_INIT;

		for (uint32_t i = 0; i < g->conf.nresolvers; i++)
			wd_buf_printf(&csv, "%s%s", i ? "," : "", g->conf.resolvers[i]);
		r = ares_set_servers_ports_csv(g->ares, wd_buf_cstr(&csv));
		wd_buf_free(&csv);
		if (r != ARES_SUCCESS)
			return wd_err_set(err, -EINVAL, "resolvers: %s", ares_strerror(r));
	}
	return 0;
}

void gw_resolve_free(struct gw *g)
{
	if (g->ares_ok) {
		ares_destroy(g->ares); /* pending callbacks run with ARES_EDESTRUCTION */
		g->ares_ok = false;
	}
	{
		size_t cursor = 0;
		void *lk;

		while ((lk = wd_htable_each(&g->lookups, &cursor)))
			free(lk);
		wd_htable_free(&g->lookups);
	}
}

void gw_ares_event(struct gw *g, int fd, unsigned events)
{
	ares_socket_t r = (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) ? fd : ARES_SOCKET_BAD;
	ares_socket_t w = (events & EPOLLOUT) ? fd : ARES_SOCKET_BAD;

	ares_process_fd(g->ares, r, w);
}

uint64_t gw_ares_next(struct gw *g)
{
	struct timeval tv, *t;

	if (!g->ares_ok)
		return UINT64_MAX;
	t = ares_timeout(g->ares, NULL, &tv);
	if (!t)
		return UINT64_MAX;
	return g->now + (uint64_t)t->tv_sec * 1000000000ull + (uint64_t)t->tv_usec * 1000ull;
}

void gw_ares_timeouts(struct gw *g)
{
	struct timeval tv, *t;

	if (!g->ares_ok)
		return;
	t = ares_timeout(g->ares, NULL, &tv);
	if (t && t->tv_sec == 0 && t->tv_usec == 0)
		ares_process_fd(g->ares, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
}

static void lookup_done(struct gw_lookup *lk)
{
	struct gw *g = lk->g;
	struct gw_cache_entry tmp;
	const struct gw_cache_entry *e;

	(void)wd_htable_remove(&g->lookups, lk->hash, lk);
	gw_cache_put(&g->cache, lk->name, lk->rcode, lk->addrs, lk->n, lk->ttl, g->now);
	/* waiters get the answer even when the cache had no room for it */
	memset(&tmp, 0, sizeof(tmp));
	snprintf(tmp.name, sizeof(tmp.name), "%s", lk->name);
	tmp.rcode = lk->rcode;
	tmp.n = lk->n;
	memcpy(tmp.addrs, lk->addrs, lk->n * sizeof(lk->addrs[0]));
	e = &tmp;
	while (!TAILQ_EMPTY(&lk->waiters)) {
		struct gw_waiter *w = TAILQ_FIRST(&lk->waiters);

		TAILQ_REMOVE(&lk->waiters, w, link);
		w->lk = NULL;
		w->cb(w, e);
	}
	free(lk);
}

static void answer(void *arg, int status, int timeouts, unsigned char *abuf, int alen)
{
	struct gw_lookup *lk = arg;
	struct dns_response resp;
	struct dns_rr_iter it;
	struct dns_rr rr;

	(void)timeouts;
	if (status == ARES_EDESTRUCTION)
		return; /* gw_resolve_free() releases the lookups */
	if (abuf && dns_response_parse(abuf, (size_t)alen, &resp) == DNS_OK) {
		if (resp.rcode == DNS_RCODE_NOERROR) {
			if (lk->rcode == DNS_RCODE_NXDOMAIN || lk->rcode == DNS_RCODE_SERVFAIL)
				lk->rcode = DNS_RCODE_NOERROR;
		} else if (lk->rcode != DNS_RCODE_NOERROR || lk->pending == 2) {
			lk->rcode = resp.rcode;
		}
		dns_rr_iter_init(&it, &resp);
		while (dns_rr_next(abuf, (size_t)alen, &it, &rr) == DNS_OK) {
			struct gw_addr a = {0};

			if (rr.section != DNS_SECTION_ANSWER)
				break;
			if (rr.type == DNS_TYPE_A)
				a.family = AF_INET;
			else if (rr.type == DNS_TYPE_AAAA)
				a.family = AF_INET6;
			else
				continue;
			memcpy(a.a, rr.addr, gw_addr_len(a.family));
			if (lk->n < GW_CACHE_ADDRS)
				lk->addrs[lk->n++] = a;
			if (rr.ttl < lk->ttl)
				lk->ttl = rr.ttl;
		}
	} else if (lk->pending == 2) {
		lk->rcode = DNS_RCODE_SERVFAIL;
	}
	if (--lk->pending == 0)
		lookup_done(lk);
}

static bool lookup_is(const void *item, const void *name)
{
	return !strcmp(((const struct gw_lookup *)item)->name, name);
}

void gw_resolve(struct gw *g, const char *name, struct gw_waiter *w)
{
	const struct gw_cache_entry *e = gw_cache_get(&g->cache, name, g->now);
	struct gw_lookup *lk;
	uint64_t h;

	w->lk = NULL;
	if (e) {
		w->cb(w, e);
		return;
	}
	h = wd_hash_str(name);
	lk = wd_htable_find(&g->lookups, h, lookup_is, name);
	if (lk) {
		w->lk = lk;
		TAILQ_INSERT_TAIL(&lk->waiters, w, link);
		return;
	}
	lk = calloc(1, sizeof(*lk));
	if (!lk || wd_htable_insert(&g->lookups, h, lk)) {
		struct gw_cache_entry fail = {.rcode = DNS_RCODE_SERVFAIL};

		free(lk);
		w->cb(w, &fail);
		return;
	}
	lk->hash = h;
	lk->g = g;
	snprintf(lk->name, sizeof(lk->name), "%s", name);
	lk->pending = 2;
	lk->rcode = DNS_RCODE_SERVFAIL;
	lk->ttl = UINT32_MAX;
	TAILQ_INIT(&lk->waiters);
	/* queue the waiter before asking: c-ares may answer at once */
	w->lk = lk;
	TAILQ_INSERT_TAIL(&lk->waiters, w, link);
	ares_query(g->ares, name, ns_c_in, ns_t_aaaa, answer, lk);
	ares_query(g->ares, name, ns_c_in, ns_t_a, answer, lk);
}

void gw_resolve_cancel(struct gw_waiter *w)
{
	if (!w->lk)
		return;
	TAILQ_REMOVE(&w->lk->waiters, w, link);
	w->lk = NULL;
}

/* resolve.c - upstream name resolution: c-ares driven from the worker's loop
 * (ARES_OPT_SOCK_STATE_CB, ares_process_fd, ares_timeout), A and AAAA asked
 * together with ares_query, answers parsed with the gateway's own DNS parser and
 * cached by TTL. Concurrent lookups of one name share one pair of queries: a
 * struct gw_lookup in res->lookups (a wd_htable by name) with a queue of
 * waiters, each answered in order of arrival. The DNS front's other types are
 * forwarded through the same channel (gw_resolver_forward()). */
#include "gateway/resolve.h"
#include "gateway/proto/proto.h"

#include <ares.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static void sock_state(void *data, ares_socket_t fd, int readable, int writable)
{
	struct gw_resolver *res = data;
	unsigned ev = (readable ? GW_POLL_IN : 0) | (writable ? GW_POLL_OUT : 0);
	uint64_t ref = GW_REF(GW_REF_ARES, 0) | (uint32_t)fd;

	if (!ev) {
		gw_ev_del(res->ev, fd);
		return;
	}
	if (gw_ev_mod(res->ev, fd, ev, ref) == -ENOENT)
		gw_ev_add(res->ev, fd, ev, ref);
}

int gw_resolver_init(struct gw_resolver *res, struct gw_ev *ev, const struct wd_gwconf *conf,
		     const struct gw_limits *lim, struct wd_err *err)
{
	struct ares_options o = {0};
	int r;

	memset(res, 0, sizeof(*res));
	res->ev = ev;
	r = gw_cache_init(&res->cache, 65536, lim->ttl_floor, lim->ttl_ceil);
	if (r)
		return wd_err_set(err, r, "name cache: %s", strerror(-r));
	r = ares_library_init(ARES_LIB_INIT_ALL);
	if (r != ARES_SUCCESS)
		return wd_err_set(err, -EIO, "c-ares: %s", ares_strerror(r));
	o.sock_state_cb = sock_state;
	o.sock_state_cb_data = res;
	o.flags = ARES_FLAG_NOSEARCH | ARES_FLAG_NOALIASES;
	o.timeout = 2000;
	o.tries = 2;
	r = ares_init_options(&res->ares, &o,
			      ARES_OPT_SOCK_STATE_CB | ARES_OPT_FLAGS | ARES_OPT_TIMEOUTMS |
				  ARES_OPT_TRIES);
	if (r != ARES_SUCCESS)
		return wd_err_set(err, -EIO, "c-ares: %s", ares_strerror(r));
	res->ok = true;
	if (conf->nresolvers) {
		struct wd_buf csv = WD_BUF_INIT;

		for (uint32_t i = 0; i < conf->nresolvers; i++)
			wd_buf_printf(&csv, "%s%s", i ? "," : "", conf->resolvers[i]);
		r = ares_set_servers_ports_csv(res->ares, wd_buf_cstr(&csv));
		wd_buf_free(&csv);
		if (r != ARES_SUCCESS)
			return wd_err_set(err, -EINVAL, "resolvers: %s", ares_strerror(r));
	}
	return 0;
}

void gw_resolver_free(struct gw_resolver *res)
{
	size_t cursor = 0;
	void *lk;

	if (res->ok) {
		ares_destroy(res->ares); /* pending callbacks run with ARES_EDESTRUCTION */
		res->ok = false;
	}
	while ((lk = wd_htable_each(&res->lookups, &cursor)))
		free(lk);
	wd_htable_free(&res->lookups);
	gw_cache_free(&res->cache);
}

bool gw_resolver_ok(const struct gw_resolver *res)
{
	return res->ok;
}

void gw_resolver_event(struct gw_resolver *res, int fd, unsigned events)
{
	/* ares_socket_t is an int on POSIX, Winsock's unsigned SOCKET on Windows */
	ares_socket_t s = (ares_socket_t)fd;
	ares_socket_t r = (events & (GW_POLL_IN | GW_POLL_ERR | GW_POLL_HUP)) ? s : ARES_SOCKET_BAD;
	ares_socket_t w = (events & GW_POLL_OUT) ? s : ARES_SOCKET_BAD;

	ares_process_fd(res->ares, r, w);
}

uint64_t gw_resolver_next(struct gw_resolver *res)
{
	struct timeval tv, *t;

	if (!res->ok)
		return UINT64_MAX;
	t = ares_timeout(res->ares, NULL, &tv);
	if (!t)
		return UINT64_MAX;
	return res->ev->now + (uint64_t)t->tv_sec * 1000000000ull + (uint64_t)t->tv_usec * 1000ull;
}

void gw_resolver_timeouts(struct gw_resolver *res)
{
	struct timeval tv, *t;

	if (!res->ok)
		return;
	t = ares_timeout(res->ares, NULL, &tv);
	if (t && t->tv_sec == 0 && t->tv_usec == 0)
		ares_process_fd(res->ares, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
}

static void lookup_done(struct gw_lookup *lk)
{
	struct gw_resolver *res = lk->res;
	struct gw_cache_entry tmp;
	const struct gw_cache_entry *e;

	(void)wd_htable_remove(&res->lookups, lk->hash, lk);
	gw_cache_put(&res->cache, lk->name, lk->rcode, lk->addrs, lk->n, lk->ttl, res->ev->now);
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

void gw_lookup_answer(struct gw_lookup *lk, const uint8_t *abuf, size_t alen)
{
	struct dns_response resp;
	struct dns_rr_iter it;
	struct dns_rr rr;

	if (abuf && dns_response_parse(abuf, alen, &resp) == DNS_OK) {
		if (resp.rcode == DNS_RCODE_NOERROR) {
			if (lk->rcode == DNS_RCODE_NXDOMAIN || lk->rcode == DNS_RCODE_SERVFAIL)
				lk->rcode = DNS_RCODE_NOERROR;
		} else if (lk->rcode != DNS_RCODE_NOERROR || lk->pending == 2) {
			lk->rcode = resp.rcode;
		}
		dns_rr_iter_init(&it, &resp);
		while (dns_rr_next(abuf, alen, &it, &rr) == DNS_OK) {
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

static void answer(void *arg, int status, int timeouts, unsigned char *abuf, int alen)
{
	(void)timeouts;
	if (status == ARES_EDESTRUCTION)
		return; /* gw_resolver_free() releases the lookups */
	gw_lookup_answer(arg, abuf, abuf && alen > 0 ? (size_t)alen : 0);
}

static bool lookup_is(const void *item, const void *name)
{
	return !strcmp(((const struct gw_lookup *)item)->name, name);
}

void gw_resolve(struct gw_resolver *res, const char *name, struct gw_waiter *w)
{
	const struct gw_cache_entry *e = gw_cache_get(&res->cache, name, res->ev->now);
	struct gw_lookup *lk;
	uint64_t h;

	w->lk = NULL;
	if (e) {
		w->cb(w, e);
		return;
	}
	h = wd_hash_str(name);
	lk = wd_htable_find(&res->lookups, h, lookup_is, name);
	if (lk) {
		w->lk = lk;
		TAILQ_INSERT_TAIL(&lk->waiters, w, link);
		return;
	}
	lk = calloc(1, sizeof(*lk));
	if (!lk || wd_htable_insert(&res->lookups, h, lk)) {
		struct gw_cache_entry fail = {.rcode = DNS_RCODE_SERVFAIL};

		free(lk);
		w->cb(w, &fail);
		return;
	}
	lk->hash = h;
	lk->res = res;
	snprintf(lk->name, sizeof(lk->name), "%s", name);
	lk->pending = 2;
	lk->rcode = DNS_RCODE_SERVFAIL;
	lk->ttl = UINT32_MAX;
	TAILQ_INIT(&lk->waiters);
	/* queue the waiter before asking: c-ares may answer at once */
	w->lk = lk;
	TAILQ_INSERT_TAIL(&lk->waiters, w, link);
	ares_query(res->ares, name, DNS_CLASS_IN, DNS_TYPE_AAAA, answer, lk);
	ares_query(res->ares, name, DNS_CLASS_IN, DNS_TYPE_A, answer, lk);
}

void gw_resolve_cancel(struct gw_waiter *w)
{
	if (!w->lk)
		return;
	TAILQ_REMOVE(&w->lk->waiters, w, link);
	w->lk = NULL;
}

static void forwarded(void *arg, int status, int timeouts, unsigned char *abuf, int alen)
{
	struct gw_forward *f = arg;

	(void)timeouts;
	f->cb(f, status == ARES_EDESTRUCTION ? -ECANCELED : 0, abuf,
	      abuf && alen > 0 ? (size_t)alen : 0);
}

void gw_resolver_forward(struct gw_resolver *res, const char *name, uint16_t type,
			 struct gw_forward *f)
{
	ares_query(res->ares, name, DNS_CLASS_IN, type, forwarded, f);
}

/* test_gw_resolve.c - unit tests for the resolver glue (gateway/resolve.c) without the
 * network and without root: the upstream "resolver" is a UDP socket of this test on
 * 127.0.0.1, which either stays silent (the bookkeeping cases feed the answers to
 * gw_lookup_answer() themselves) or answers with messages composed by the gateway's
 * own DNS code (the loop cases: c-ares sends, the test answers, the resolver's socket
 * events go through gw_resolver_event()). Covered: one pair of queries for any number
 * of waiters, waiters answered in order of arrival, cancel, the AAAA/A rcode merge,
 * the shortest TTL, the address cap, the cache (and a failed lookup answered from it
 * for the TTL floor), forwarding for the DNS front. */
#include "conf/conf.h"
#include "gateway/ev.h"
#include "gateway/proto/proto.h"
#include "gateway/resolve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

struct fixture {
	struct wd_gwconf conf;
	struct gw_limits lim;
	struct gw_ev ev;
	struct gw_resolver res;
	int server; /* the upstream: a UDP socket on 127.0.0.1 */
};

/* one waiting party */
struct party {
	struct gw_waiter w;
	int calls;
	int order; /* when it was answered (1, 2, ...) */
	int rcode;
	size_t n;
	struct gw_addr addrs[GW_CACHE_ADDRS];
};

static int answered; /* parties answered so far, in this test */

static void on_answer(struct gw_waiter *w, const struct gw_cache_entry *e)
{
	struct party *p = (struct party *)w; /* its first member */

	p->calls++;
	p->order = ++answered;
	p->rcode = e->rcode;
	p->n = e->n;
	memcpy(p->addrs, e->addrs, e->n * sizeof(e->addrs[0]));
}

static struct fixture *fixture_new(void)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);
	struct wd_err err;

	assert_non_null(f);
	conf_defaults(&f->conf);
	f->server = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(f->server >= 0);
	assert_int_equal(bind(f->server, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(f->server, (struct sockaddr *)&sa, &sl), 0);
	/* the only resolver c-ares may ask: this test's socket */
	snprintf(f->conf.resolvers[0], sizeof(f->conf.resolvers[0]), "127.0.0.1:%u",
		 ntohs(sa.sin_port));
	f->conf.nresolvers = 1;
	gw_limits_from_conf(&f->conf, &f->lim);
	assert_int_equal(gw_ev_init(&f->ev, NULL, &err), 0);
	f->ev.now = wd_mono_ns();
	assert_int_equal(gw_resolver_init(&f->res, &f->ev, &f->conf, &f->lim, &err), 0);
	answered = 0;
	return f;
}

static void fixture_free(struct fixture *f)
{
	gw_resolver_free(&f->res);
	gw_ev_free(&f->ev);
	close(f->server);
	free(f);
}

/* a response to @q (a question for @q->qname of @q->qtype) with @n addresses of @ttl */
static size_t response(const struct dns_query *q, uint16_t rcode, size_t n, uint32_t ttl,
		       uint8_t *out, size_t size)
{
	struct dns_answer ans[20];
	struct dns_reply r = {.rcode = rcode, .answers = ans, .n_answers = n};
	int len;

	assert_true(n <= 20);
	for (size_t i = 0; i < n; i++) {
		memset(&ans[i], 0, sizeof(ans[i]));
		ans[i].type = q->qtype;
		ans[i].ttl = ttl + (uint32_t)i;
		if (q->qtype == DNS_TYPE_A) {
			ans[i].addr[0] = 203, ans[i].addr[1] = 0, ans[i].addr[2] = 113;
			ans[i].addr[3] = (uint8_t)(10 + i);
		} else {
			ans[i].addr[0] = 0x20, ans[i].addr[1] = 0x01, ans[i].addr[2] = 0x0d;
			ans[i].addr[3] = 0xb8, ans[i].addr[15] = (uint8_t)(10 + i);
		}
	}
	len = dns_reply_compose(q, &r, out, size);
	assert_true(len > 0);
	return (size_t)len;
}

/* a question as a parsed query, for composing answers without a socket */
static struct dns_query question(const char *name, uint16_t type)
{
	struct dns_query q = {
	    .header_ok = true, .question_ok = true, .id = 7, .qtype = type, .qclass = DNS_CLASS_IN};
	size_t o = 0;
	const char *p = name;

	snprintf(q.qname, sizeof(q.qname), "%s", name);
	while (*p) {
		const char *dot = strchr(p, '.');
		size_t l = dot ? (size_t)(dot - p) : strlen(p);

		q.qname_wire[o++] = (uint8_t)l;
		memcpy(q.qname_wire + o, p, l);
		o += l;
		p += l + (dot ? 1 : 0);
	}
	q.qname_wire[o++] = 0;
	q.qname_wire_len = o;
	return q;
}

/* the pending lookup of @name (there must be one) */
static struct gw_lookup *lookup_of(struct fixture *f, const char *name)
{
	size_t cursor = 0;
	struct gw_lookup *lk;

	while ((lk = wd_htable_each(&f->res.lookups, &cursor)))
		if (!strcmp(lk->name, name))
			return lk;
	fail_msg("no lookup for %s", name);
	return NULL;
}

/* ------------------------------------------------------------ bookkeeping */

static void test_shared_lookup_and_order(void **state)
{
	struct fixture *f = fixture_new();
	struct party a = {.w.cb = on_answer}, b = {.w.cb = on_answer}, c = {.w.cb = on_answer};
	struct dns_query qa = question("shared.test", DNS_TYPE_A);
	struct dns_query q6 = question("shared.test", DNS_TYPE_AAAA);
	uint8_t m[512];
	struct gw_lookup *lk;
	size_t n;

	(void)state;
	gw_resolve(&f->res, "shared.test", &a.w);
	gw_resolve(&f->res, "shared.test", &b.w);
	gw_resolve(&f->res, "shared.test", &c.w);
	assert_int_equal(f->res.lookups.n, 1); /* one pair of queries for the three */
	lk = lookup_of(f, "shared.test");
	assert_int_equal(lk->pending, 2);
	gw_resolve_cancel(&b.w); /* b goes away before the answer */
	n = response(&q6, DNS_RCODE_NOERROR, 1, 300, m, sizeof(m));
	gw_lookup_answer(lk, m, n);
	assert_int_equal(a.calls, 0); /* not before both answers */
	n = response(&qa, DNS_RCODE_NOERROR, 2, 60, m, sizeof(m));
	gw_lookup_answer(lk, m, n); /* lk is freed here */
	assert_int_equal(f->res.lookups.n, 0);
	assert_int_equal(a.calls, 1);
	assert_int_equal(b.calls, 0);
	assert_int_equal(c.calls, 1);
	assert_int_equal(a.order, 1); /* in order of arrival */
	assert_int_equal(c.order, 2);
	assert_int_equal(a.rcode, DNS_RCODE_NOERROR);
	assert_int_equal(a.n, 3);
	assert_int_equal(a.addrs[0].family, AF_INET6);
	assert_int_equal(a.addrs[1].family, AF_INET);
	/* cached: the next one is answered at once, without a lookup */
	{
		struct party d = {.w.cb = on_answer};
		const struct gw_cache_entry *e =
		    gw_cache_get(&f->res.cache, "shared.test", f->ev.now);

		assert_non_null(e);
		assert_int_equal(e->n, 3);
		/* the shortest TTL (60, clamped to the floor) decides how long */
		assert_true(e->expires <=
			    f->ev.now + (uint64_t)(60 > f->lim.ttl_floor ? 60 : f->lim.ttl_floor) *
					    1000000000ull);
		gw_resolve(&f->res, "shared.test", &d.w);
		assert_int_equal(d.calls, 1);
		assert_int_equal(d.n, 3);
		assert_int_equal(f->res.lookups.n, 0);
	}
	fixture_free(f);
}

/* the AAAA and A answers' rcodes merge: a NOERROR wins, a failure alone fails */
static void test_rcode_merge(void **state)
{
	static const struct {
		int first, second; /* -1: no answer came (timeout, unparseable) */
		int want;
	} cases[] = {
	    {DNS_RCODE_NOERROR, DNS_RCODE_NOERROR, DNS_RCODE_NOERROR},
	    {DNS_RCODE_NXDOMAIN, DNS_RCODE_NOERROR, DNS_RCODE_NOERROR},
	    {DNS_RCODE_NOERROR, DNS_RCODE_NXDOMAIN, DNS_RCODE_NOERROR},
	    {DNS_RCODE_SERVFAIL, DNS_RCODE_NOERROR, DNS_RCODE_NOERROR},
	    {DNS_RCODE_NXDOMAIN, DNS_RCODE_NXDOMAIN, DNS_RCODE_NXDOMAIN},
	    {-1, DNS_RCODE_NXDOMAIN, DNS_RCODE_NXDOMAIN},
	    {DNS_RCODE_NXDOMAIN, -1, DNS_RCODE_NXDOMAIN},
	    {-1, DNS_RCODE_NOERROR, DNS_RCODE_NOERROR},
	    {-1, -1, DNS_RCODE_SERVFAIL},
	    {DNS_RCODE_REFUSED, DNS_RCODE_SERVFAIL, DNS_RCODE_SERVFAIL},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fixture *f = fixture_new();
		struct party p = {.w.cb = on_answer};
		struct dns_query q = question("merge.test", DNS_TYPE_A);
		int rc[2] = {cases[i].first, cases[i].second};
		struct gw_lookup *lk;
		uint8_t m[512];

		gw_resolve(&f->res, "merge.test", &p.w);
		lk = lookup_of(f, "merge.test");
		for (int k = 0; k < 2; k++) {
			if (rc[k] < 0) {
				gw_lookup_answer(lk, k ? (const uint8_t *)"garbage" : NULL,
						 k ? 7 : 0);
				continue;
			}
			gw_lookup_answer(
			    lk, m, response(&q, (uint16_t)rc[k], rc[k] ? 0 : 1, 30, m, sizeof(m)));
		}
		if (p.calls != 1 || p.rcode != cases[i].want)
			fail_msg("case %zu: %d then %d: got rcode %d (%d calls), want %d", i, rc[0],
				 rc[1], p.rcode, p.calls, cases[i].want);
		fixture_free(f);
	}
}

/* at most GW_CACHE_ADDRS addresses are kept, answer section only */
static void test_address_cap(void **state)
{
	struct fixture *f = fixture_new();
	struct party p = {.w.cb = on_answer};
	struct dns_query qa = question("many.test", DNS_TYPE_A);
	struct dns_query q6 = question("many.test", DNS_TYPE_AAAA);
	struct gw_lookup *lk;
	uint8_t m[1500];

	(void)state;
	gw_resolve(&f->res, "many.test", &p.w);
	lk = lookup_of(f, "many.test");
	gw_lookup_answer(lk, m, response(&q6, DNS_RCODE_NOERROR, 10, 100, m, sizeof(m)));
	assert_int_equal(lk->n, 10);
	assert_int_equal(lk->ttl, 100);
	gw_lookup_answer(lk, m, response(&qa, DNS_RCODE_NOERROR, 10, 50, m, sizeof(m)));
	assert_int_equal(p.n, GW_CACHE_ADDRS);
	assert_int_equal(p.addrs[GW_CACHE_ADDRS - 1].family, AF_INET);
	fixture_free(f);
}

/* a lookup that found nothing is cached too (for the TTL floor): no new queries */
static void test_negative_cached(void **state)
{
	struct fixture *f = fixture_new();
	struct party p = {.w.cb = on_answer}, p2 = {.w.cb = on_answer};
	struct dns_query q = question("gone.test", DNS_TYPE_A);
	struct gw_lookup *lk;
	uint8_t m[512];

	(void)state;
	gw_resolve(&f->res, "gone.test", &p.w);
	lk = lookup_of(f, "gone.test");
	gw_lookup_answer(lk, m, response(&q, DNS_RCODE_NXDOMAIN, 0, 0, m, sizeof(m)));
	gw_lookup_answer(lk, m, response(&q, DNS_RCODE_NXDOMAIN, 0, 0, m, sizeof(m)));
	assert_int_equal(p.rcode, DNS_RCODE_NXDOMAIN);
	gw_resolve(&f->res, "gone.test", &p2.w);
	assert_int_equal(p2.calls, 1);
	assert_int_equal(p2.rcode, DNS_RCODE_NXDOMAIN);
	assert_int_equal(f->res.lookups.n, 0);
	fixture_free(f);
}

/* ------------------------------------------------------------ through c-ares */

/* answer every query the server has, then let the loop hand c-ares its socket events
 * until @done parties were answered (2 s at most) */
static void serve(struct fixture *f, int done, uint16_t a_rcode, uint16_t aaaa_rcode)
{
	uint64_t until = wd_mono_ns() + 2000000000ull;

	while (answered < done && wd_mono_ns() < until) {
		struct pollfd pfd = {.fd = f->server, .events = POLLIN};
		struct gw_poll_event evs[8];
		int n;

		while (poll(&pfd, 1, 0) == 1) {
			uint8_t in[512], out[512];
			struct sockaddr_storage from;
			socklen_t fl = sizeof(from);
			ssize_t k =
			    recvfrom(f->server, in, sizeof(in), 0, (struct sockaddr *)&from, &fl);
			struct dns_query q;
			size_t len;

			assert_true(k > 0);
			assert_int_equal(dns_query_parse(in, (size_t)k, &q), DNS_OK);
			len = response(&q, q.qtype == DNS_TYPE_A ? a_rcode : aaaa_rcode,
				       (q.qtype == DNS_TYPE_A ? a_rcode : aaaa_rcode) ? 0 : 1, 120,
				       out, sizeof(out));
			assert_int_equal(
			    sendto(f->server, out, len, 0, (struct sockaddr *)&from, fl),
			    (ssize_t)len);
		}
		/* wake up at least every 10 ms to look at the server's socket */
		n = gw_ev_wait(&f->ev, evs, 8, wd_mono_ns() + 10000000ull, false);
		for (int i = 0; i < n; i++) {
			assert_int_equal(GW_REF_TYPE(evs[i].ref), GW_REF_ARES);
			gw_resolver_event(&f->res, (int)(evs[i].ref & 0xffffffffu), evs[i].events);
		}
		gw_resolver_timeouts(&f->res);
	}
	assert_int_equal(answered, done);
}

static void test_through_cares(void **state)
{
	struct fixture *f = fixture_new();
	struct party a = {.w.cb = on_answer}, b = {.w.cb = on_answer};

	(void)state;
	gw_resolve(&f->res, "loop.test", &a.w);
	gw_resolve(&f->res, "loop.test", &b.w);
	assert_int_equal(f->res.lookups.n, 1);
	serve(f, 2, DNS_RCODE_NOERROR, DNS_RCODE_NXDOMAIN);
	assert_int_equal(a.rcode, DNS_RCODE_NOERROR); /* the A answer's NOERROR wins */
	assert_int_equal(a.n, 1);
	assert_int_equal(a.addrs[0].family, AF_INET);
	assert_int_equal(a.addrs[0].a[3], 10);
	assert_int_equal(a.order, 1);
	assert_int_equal(b.order, 2);
	assert_int_equal(f->res.lookups.n, 0);
	assert_non_null(gw_cache_get(&f->res.cache, "loop.test", f->ev.now));
	fixture_free(f);
}

/* a forwarded query for the DNS front: the upstream's answer, or -ECANCELED at the end */
struct fwd {
	struct gw_forward f;
	int calls;
	int status;
	uint16_t rcode;
};

static void on_forward(struct gw_forward *f, int status, const uint8_t *abuf, size_t alen)
{
	struct fwd *w = (struct fwd *)f;
	struct dns_response r;

	w->calls++;
	w->status = status;
	if (!status && abuf && dns_response_parse(abuf, alen, &r) == DNS_OK)
		w->rcode = r.rcode;
	answered++;
}

static void test_forward(void **state)
{
	struct fixture *f = fixture_new();
	struct fwd w = {.f.cb = on_forward}, gone = {.f.cb = on_forward};

	(void)state;
	assert_true(gw_resolver_ok(&f->res));
	gw_resolver_forward(&f->res, "txt.test", DNS_TYPE_A, &w.f);
	serve(f, 1, DNS_RCODE_NXDOMAIN, DNS_RCODE_NXDOMAIN);
	assert_int_equal(w.calls, 1);
	assert_int_equal(w.status, 0);
	assert_int_equal(w.rcode, DNS_RCODE_NXDOMAIN);
	/* one still waiting when the resolver goes away is told so, once */
	gw_resolver_forward(&f->res, "late.test", DNS_TYPE_A, &gone.f);
	gw_resolver_free(&f->res);
	assert_int_equal(gone.calls, 1);
	assert_int_equal(gone.status, -ECANCELED);
	memset(&f->res, 0, sizeof(f->res)); /* fixture_free() frees it again: a no-op now */
	fixture_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_shared_lookup_and_order),
	    cmocka_unit_test(test_rcode_merge),
	    cmocka_unit_test(test_address_cap),
	    cmocka_unit_test(test_negative_cached),
	    cmocka_unit_test(test_through_cares),
	    cmocka_unit_test(test_forward),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

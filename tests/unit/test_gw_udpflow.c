/* test_gw_udpflow.c - unit tests for the UDP relay's flows (gateway/udpflow.c): one flow per
 * client address and port (IPv4 and IPv6, the same port of two clients), the table's and a
 * run's bounds, the held datagrams' order and bounds (count, bytes, size), and the idle sweep. */
#include "gateway/udpflow.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static struct gw_addr A(const char *s) {
	struct gw_addr a;

	assert_int_equal(gw_addr_parse(s, &a), 0);
	return a;
}

static void
test_keys_and_bounds(void **state)
{
	struct gw_udpflows t;
	struct gw_udpflow *f1, *f2, *f3, *f;
	struct gw_addr c1 = A("10.213.0.2"), c2 = A("10.213.0.6"), c6 = A("fd77:7764:6e00::2");
	size_t run1 = 0, run2 = 0;
	int r1, r2;

	(void)state;
	assert_int_equal(gw_udpflows_init(&t, 3), 0);
	assert_int_equal(gw_udpflow_add(&t, &c1, 40000, &r1, &run1, 2, 5, &f1), 0);
	assert_int_equal(f1->state, GW_UF_LOOKUP);
	assert_int_equal(f1->fd, -1);
	assert_ptr_equal(f1->run, &r1);
	assert_int_equal(gw_udpflow_add(&t, &c1, 40000, &r1, &run1, 2, 5, &f), -EEXIST);
	/* the same port of another client, and the same client on another port */
	assert_int_equal(gw_udpflow_add(&t, &c2, 40000, &r2, &run2, 2, 5, &f2), 0);
	assert_int_equal(gw_udpflow_add(&t, &c1, 40001, &r1, &run1, 2, 5, &f3), 0);
	assert_int_equal(run1, 2);
	assert_int_equal(run2, 1);
	/* the run's bound, then the table's */
	assert_int_equal(gw_udpflow_add(&t, &c1, 40002, &r1, &run1, 2, 5, &f), -ENOSPC);
	assert_int_equal(gw_udpflow_add(&t, &c6, 40000, &r2, &run2, 2, 5, &f), -ENOSPC);
	assert_ptr_equal(gw_udpflow_find(&t, &c1, 40000), f1);
	assert_ptr_equal(gw_udpflow_find(&t, &c2, 40000), f2);
	assert_ptr_equal(gw_udpflow_find(&t, &c1, 40001), f3);
	assert_null(gw_udpflow_find(&t, &c6, 40000));
	gw_udpflow_del(&t, f3, &run1);
	assert_int_equal(run1, 1);
	assert_null(gw_udpflow_find(&t, &c1, 40001));
	assert_int_equal(gw_udpflow_add(&t, &c6, 40000, &r2, &run2, 2, 5, &f), 0);
	assert_ptr_equal(gw_udpflow_find(&t, &c6, 40000), f);
	assert_int_equal(t.n, 3);
	gw_udpflows_free(&t);
}

static void test_hold(void **state)
{
	static uint8_t big[GW_UDP_DATAGRAM_MAX + 1];
	struct gw_udpflows t;
	struct gw_udpflow *f;
	struct gw_udp_held *h;
	struct gw_addr c = A("10.213.0.2");
	uint8_t d[2000];

	(void)state;
	assert_int_equal(gw_udpflows_init(&t, 8), 0);
	assert_int_equal(gw_udpflow_add(&t, &c, 1, NULL, NULL, 0, 0, &f), 0);
	for (unsigned i = 0; i < GW_UDP_HOLD_MAX; i++) {
		memset(d, (int)i, sizeof(d));
		assert_int_equal(gw_udpflow_hold(f, d, 1200), 0);
	}
	assert_int_equal(gw_udpflow_hold(f, d, 1), -ENOBUFS);
	assert_int_equal(f->dropped, 1);
	assert_int_equal(f->held_bytes, GW_UDP_HOLD_MAX * 1200);
	/* in the order they came */
	for (unsigned i = 0; i < GW_UDP_HOLD_MAX; i++) {
		h = gw_udpflow_take(f);
		assert_non_null(h);
		assert_int_equal(h->len, 1200);
		assert_int_equal(h->data[0], i);
		free(h);
	}
	assert_null(gw_udpflow_take(f));
	assert_int_equal(f->held_bytes, 0);
	/* the byte bound and the size bound */
	assert_int_equal(gw_udpflow_hold(f, big, GW_UDP_HOLD_BYTES), 0);
	assert_int_equal(gw_udpflow_hold(f, big, 1), -ENOBUFS);
	assert_int_equal(gw_udpflow_hold(f, big, sizeof(big)), -EMSGSIZE);
	assert_int_equal(f->dropped, 3);
	gw_udpflows_free(&t); /* frees what is still held */
}

static void test_idle(void **state)
{
	struct gw_udpflows t;
	struct gw_udpflow *a, *b, *out[4];
	struct gw_addr c = A("10.213.0.2");
	size_t n;

	(void)state;
	assert_int_equal(gw_udpflows_init(&t, 8), 0);
	assert_int_equal(gw_udpflow_add(&t, &c, 1, NULL, NULL, 0, 1000, &a), 0);
	assert_int_equal(gw_udpflow_add(&t, &c, 2, NULL, NULL, 0, 1000, &b), 0);
	b->last_ms = 50000;
	assert_int_equal(gw_udpflow_idle(&t, 60999, 60000, out, 4), 0);
	n = gw_udpflow_idle(&t, 61000, 60000, out, 4);
	assert_int_equal(n, 1);
	assert_ptr_equal(out[0], a);
	gw_udpflow_del(&t, a, NULL);
	assert_int_equal(gw_udpflow_idle(&t, 200000, 60000, out, 0), 0);
	assert_int_equal(gw_udpflow_idle(&t, 200000, 60000, out, 4), 1);
	gw_udpflows_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_keys_and_bounds),
	    cmocka_unit_test(test_hold),
	    cmocka_unit_test(test_idle),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

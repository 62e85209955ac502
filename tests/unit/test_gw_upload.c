/* test_gw_upload.c - unit tests for a run's upload budgets (gateway/upload.c): accounts by name,
 * the room left under the name's and the run's budgets, which one binds, and the refusal text;
 * and the relay under a budget (gateway/relay.c over socket pairs): exactly the budget goes
 * through, copied and spliced, then -EDQUOT, while a source that ends at the budget just ends. */
#include "gateway/relay.h"
#include "gateway/upload.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

/* no budget: nothing to count, no account made */
static void test_none(void **state)
{
	struct gw_uploads u = {0};
	struct gw_upload *a = NULL;

	(void)state;
	gw_uploads_set(&u, 0, 0);
	assert_int_equal(gw_uploads_get(&u, "a.test", &a), 1);
	assert_null(a);
	assert_int_equal(u.n, 0);
	gw_uploads_free(&u);
}

/* per name: each name its own account, the same name the same one; reads are capped to the rest */
static void test_per_name(void **state)
{
	struct gw_uploads u = {0};
	struct gw_upload *a, *b, *a2;
	char why[200];

	(void)state;
	gw_uploads_set(&u, 64, 0);
	assert_int_equal(u.cap_name, 65536);
	assert_int_equal(gw_uploads_get(&u, "a.test", &a), 0);
	assert_int_equal(gw_uploads_get(&u, "b.test", &b), 0);
	assert_int_equal(gw_uploads_get(&u, "a.test", &a2), 0);
	assert_ptr_equal(a, a2);
	assert_ptr_not_equal(a, b);
	assert_int_equal(u.n, 2);
	assert_int_equal(gw_upload_room(a), 65536);
	assert_int_equal(gw_upload_which(a), GW_UPLOAD_NAME);
	gw_upload_charge(a, 65000);
	assert_int_equal(gw_upload_room(a), 536);
	/* a take that does not fit charges nothing; one that fits exactly leaves nothing */
	assert_false(gw_upload_take(a, 537));
	assert_int_equal(a->used, 65000);
	assert_true(gw_upload_take(a, 536));
	assert_int_equal(gw_upload_room(a), 0);
	assert_false(gw_upload_take(a, 1));
	assert_true(gw_upload_take(a, 0));
	/* the other name is untouched: per name, not per run */
	assert_int_equal(gw_upload_room(b), 65536);
	assert_int_equal(u.used, 65536);
	assert_string_equal(gw_upload_reason(a, "a.test", why, sizeof(why)),
			    "upload budget spent: a.test was sent 65536 bytes, limits.upload_kib "
			    "allows 65536");
	/* a replaced policy changes the budget, never what was sent */
	gw_uploads_set(&u, 128, 0);
	assert_int_equal(gw_upload_room(a), 65536);
	gw_uploads_free(&u);
	assert_int_equal(u.n, 0);
}

/* the run's total binds across names; on a tie the name's is said */
static void test_run_total(void **state)
{
	struct gw_uploads u = {0};
	struct gw_upload *a, *b;
	char why[200];

	(void)state;
	gw_uploads_set(&u, 4, 6);
	assert_int_equal(gw_uploads_get(&u, "a.test", &a), 0);
	assert_int_equal(gw_uploads_get(&u, "b.test", &b), 0);
	assert_int_equal(gw_upload_which(a), GW_UPLOAD_NAME); /* 4096 <= 6144 */
	gw_upload_charge(a, 4096);
	assert_int_equal(gw_upload_room(a), 0);
	assert_int_equal(gw_upload_which(a), GW_UPLOAD_NAME);
	assert_int_equal(gw_upload_room(b), 2048); /* the run has 2048 left */
	assert_int_equal(gw_upload_which(b), GW_UPLOAD_RUN);
	gw_upload_charge(b, 2048);
	assert_int_equal(gw_upload_room(b), 0);
	assert_int_equal(gw_upload_which(b), GW_UPLOAD_RUN);
	assert_string_equal(gw_upload_reason(b, "b.test", why, sizeof(why)),
			    "upload budget spent: the run sent 6144 bytes upstream, "
			    "limits.upload_total_kib allows 6144");
	/* overcharged (a read charged whole): still no room, never a wrap-around */
	gw_upload_charge(b, 10);
	assert_int_equal(gw_upload_room(b), 0);
	assert_int_equal(gw_upload_room(a), 0);
	gw_uploads_free(&u);
}

/* only a run total: every name shares one account */
static void test_total_only(void **state)
{
	struct gw_uploads u = {0};
	struct gw_upload *a, *b;

	(void)state;
	gw_uploads_set(&u, 0, 1);
	assert_int_equal(gw_uploads_get(&u, "a.test", &a), 0);
	assert_int_equal(gw_uploads_get(&u, "b.test", &b), 0);
	assert_ptr_equal(a, b);
	assert_int_equal(u.n, 1);
	assert_int_equal(gw_upload_which(a), GW_UPLOAD_RUN);
	assert_true(gw_upload_take(a, 1024));
	assert_false(gw_upload_take(b, 1));
	gw_uploads_free(&u);
}

/* the most names a run keeps an account for: one more is refused (fail closed) */
static void test_names_max(void **state)
{
	struct gw_uploads u = {0};
	struct gw_upload *a = NULL;
	char name[32];

	(void)state;
	gw_uploads_set(&u, 1, 0);
	for (unsigned i = 0; i < GW_UPLOAD_NAMES_MAX; i++) {
		snprintf(name, sizeof(name), "n%u.test", i);
		assert_int_equal(gw_uploads_get(&u, name, &a), 0);
	}
	assert_int_equal(u.n, GW_UPLOAD_NAMES_MAX);
	a = NULL;
	assert_int_equal(gw_uploads_get(&u, "one-more.test", &a), -ENOSPC);
	assert_null(a);
	/* a name it has still finds its account */
	assert_int_equal(gw_uploads_get(&u, "n7.test", &a), 0);
	assert_string_equal(a->name, "n7.test");
	gw_uploads_free(&u);
}

/* @n bytes through gw_pump() from one socket pair to another under a budget of @cap bytes;
 * @end: the writer shuts down after them. Returns the pump's last result, *@out the bytes that
 * came out */
static int pump_through(size_t n, uint64_t cap, bool end, size_t *out)
{
	struct gw_pool pool;
	struct gw_half h = {.pipe = {-1, -1}}, other = {.pipe = {-1, -1}};
	struct gw_uploads u = {0};
	struct gw_upload *a;
	int s[2], d[2], r = 0;
	static uint8_t buf[1 << 20];
	size_t sent = 0, got = 0;

	assert_int_equal(gw_pool_init(&pool), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, s), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, d), 0);
	setsockopt(s[0], SOL_SOCKET, SO_SNDBUF, &(int){1 << 20}, sizeof(int));
	setsockopt(d[1], SOL_SOCKET, SO_RCVBUF, &(int){1 << 20}, sizeof(int));
	u.cap_name = cap;
	assert_int_equal(gw_uploads_get(&u, "a.test", &a), 0);
	h.up = a;
	memset(buf, 'x', sizeof(buf));
	for (int i = 0; i < 1000 && (sent < n || got < n); i++) {
		struct gw_ready sr = {.rd = true}, dr = {.wr = true};
		ssize_t k;

		if (sent < n) {
			k = send(s[0], buf, n - sent, MSG_DONTWAIT);
			if (k > 0)
				sent += (size_t)k;
			if (sent == n && end)
				shutdown(s[0], SHUT_WR);
		}
		r = gw_pump(&pool, &h, &other, s[1], &sr, d[0], &dr, NULL, false);
		while ((k = recv(d[1], buf, sizeof(buf), MSG_DONTWAIT)) > 0)
			got += (size_t)k;
		if (r < 0 || h.eof)
			break;
	}
	*out = got;
	assert_int_equal(a->used, got); /* charged = what came out (nothing left in a pipe) */
	gw_pipe_put(&pool, &h);
	gw_pool_free(&pool);
	gw_uploads_free(&u);
	close(s[0]);
	close(s[1]);
	close(d[0]);
	close(d[1]);
	return r;
}

/* more than the budget: exactly the budget comes out (small reads, then spliced ones), then
 * -EDQUOT; exactly the budget and an end: no cut */
static void test_relay_cut(void **state)
{
	size_t got;

	(void)state;
	assert_int_equal(pump_through(300000, 200000, false, &got), -EDQUOT);
	assert_int_equal(got, 200000);
	assert_int_equal(pump_through(5000, 1000, false, &got), -EDQUOT);
	assert_int_equal(got, 1000);
	assert_int_not_equal(pump_through(200000, 200000, true, &got), -EDQUOT);
	assert_int_equal(got, 200000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_none),      cmocka_unit_test(test_per_name),
	    cmocka_unit_test(test_run_total), cmocka_unit_test(test_total_only),
	    cmocka_unit_test(test_names_max), cmocka_unit_test(test_relay_cut),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_gw_upload.c - unit tests for a run's upload budgets (gateway/upload.c): accounts by name,
 * the room left under the name's and the run's budgets, which one binds, and the refusal text. */
#include "gateway/upload.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_none),      cmocka_unit_test(test_per_name),
	    cmocka_unit_test(test_run_total), cmocka_unit_test(test_total_only),
	    cmocka_unit_test(test_names_max),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_common_time.c - wd_rfc3339() and wd_rfc3339_parse() of common/time.c (the audit
 * log's timestamps): fixed vectors at the edges of its range, leap days, times before 1970,
 * refusals, random times against gmtime_r(3), and the parser's round trip and forms. */
#include "common/common.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

static void test_vectors(void **state)
{
	static const struct {
		int64_t sec;
		long nsec;
		const char *want;
	} v[] = {
	    {0, 0, "1970-01-01T00:00:00.000000Z"},
	    {0, 999999999, "1970-01-01T00:00:00.999999Z"},
	    {-1, 999999000, "1969-12-31T23:59:59.999999Z"},
	    {951782400, 123456000, "2000-02-29T00:00:00.123456Z"},
	    {4107542399, 0, "2100-02-28T23:59:59.000000Z"},
	    {1795947255, 5000, "2026-11-29T10:14:15.000005Z"},
	    {-62167219200LL, 0, "0000-01-01T00:00:00.000000Z"},
	    {253402300799LL, 0, "9999-12-31T23:59:59.000000Z"},
	};
	char out[28];

	(void)state;
	for (size_t i = 0; i < WD_ARRAY_SIZE(v); i++) {
		struct timespec ts = {(time_t)v[i].sec, v[i].nsec};

		memset(out, 'x', sizeof(out));
		assert_int_equal(wd_rfc3339(&ts, out, sizeof(out)), 0);
		assert_string_equal(out, v[i].want);
	}
}

static void test_refused(void **state)
{
	struct timespec ts = {0, 0};
	char out[64];

	(void)state;
	assert_int_equal(wd_rfc3339(&ts, out, 27), -EINVAL);
	ts.tv_nsec = -1;
	assert_int_equal(wd_rfc3339(&ts, out, sizeof(out)), -EINVAL);
	ts.tv_nsec = 1000000000L;
	assert_int_equal(wd_rfc3339(&ts, out, sizeof(out)), -EINVAL);
	ts = (struct timespec){(time_t)-62167219201LL, 0};
	assert_int_equal(wd_rfc3339(&ts, out, sizeof(out)), -EINVAL);
	ts = (struct timespec){(time_t)253402300800LL, 0};
	assert_int_equal(wd_rfc3339(&ts, out, sizeof(out)), -EINVAL);
}

/* the same text as gmtime_r() and printf for random times over the whole range */
static void test_against_gmtime(void **state)
{
	char out[28], want[96];

	(void)state;
	srand(11);
	for (int i = 0; i < 200000; i++) {
		int64_t span = 253402300799LL + 62167219200LL;
		uint64_t r = ((uint64_t)rand() << 31) ^ (uint64_t)rand();
		struct timespec ts = {(time_t)((int64_t)(r % (uint64_t)span) - 62167219200LL),
				      rand() % 1000000000L};
		struct tm tm;

		assert_non_null(gmtime_r(&ts.tv_sec, &tm));
		snprintf(want, sizeof(want), "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
			 tm.tm_sec, ts.tv_nsec / 1000);
		assert_int_equal(wd_rfc3339(&ts, out, sizeof(out)), 0);
		assert_string_equal(out, want);
	}
}

/* wd_rfc3339_parse() takes back what wd_rfc3339() writes, to the microsecond */
static void test_parse_round_trip(void **state)
{
	char out[28];

	(void)state;
	srand(12);
	for (int i = 0; i < 100000; i++) {
		int64_t span = 253402300799LL + 62167219200LL;
		uint64_t r = ((uint64_t)rand() << 31) ^ (uint64_t)rand();
		struct timespec ts = {(time_t)((int64_t)(r % (uint64_t)span) - 62167219200LL),
				      (rand() % 1000000L) * 1000L};
		struct timespec back = {0, 0};

		assert_int_equal(wd_rfc3339(&ts, out, sizeof(out)), 0);
		assert_int_equal(wd_rfc3339_parse(out, &back), 0);
		assert_int_equal((int64_t)back.tv_sec, (int64_t)ts.tv_sec);
		assert_int_equal(back.tv_nsec, ts.tv_nsec);
	}
}

/* offsets, lower case, long fractions; and what is not RFC 3339 */
static void test_parse_forms(void **state)
{
	static const struct {
		const char *in;
		int64_t sec;
		long nsec;
	} ok[] = {
	    {"2026-11-29T10:14:15Z", 1795947255, 0},
	    {"2026-11-29t10:14:15z", 1795947255, 0},
	    {"2026-11-29T11:14:15+01:00", 1795947255, 0},
	    {"2026-11-29T05:44:15-04:30", 1795947255, 0},
	    {"2026-11-29T10:14:15.5Z", 1795947255, 500000000L},
	    {"2026-11-29T10:14:15.123456789123Z", 1795947255, 123456789L},
	};
	static const char *const bad[] = {
	    "",
	    "2026-11-29",
	    "2026-11-29 10:14:15Z",
	    "2026-11-29T10:14:15",
	    "2026-11-29T10:14:15.Z",
	    "2026-13-29T10:14:15Z",
	    "2026-11-32T10:14:15Z",
	    "2026-11-29T24:14:15Z",
	    "2026-11-29T10:60:15Z",
	    "2026-11-29T10:14:61Z",
	    "2026-11-29T10:14:15+24:00",
	    "2026-11-29T10:14:15+01:60",
	    "2026-11-29T10:14:15Zjunk",
	    "20x6-11-29T10:14:15Z",
	};
	struct timespec ts;

	(void)state;
	for (size_t i = 0; i < WD_ARRAY_SIZE(ok); i++) {
		assert_int_equal(wd_rfc3339_parse(ok[i].in, &ts), 0);
		assert_int_equal((int64_t)ts.tv_sec, ok[i].sec);
		assert_int_equal(ts.tv_nsec, ok[i].nsec);
	}
	for (size_t i = 0; i < WD_ARRAY_SIZE(bad); i++)
		assert_int_equal(wd_rfc3339_parse(bad[i], &ts), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_vectors),	   cmocka_unit_test(test_refused),
	    cmocka_unit_test(test_against_gmtime), cmocka_unit_test(test_parse_round_trip),
	    cmocka_unit_test(test_parse_forms),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

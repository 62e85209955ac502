/* time.c - clocks and timestamps. wd_rfc3339() is on the audit encoder's path (one event
 * per DNS query): it formats with civil-date arithmetic, without stdio, gmtime_r() or the
 * time zone machinery. */
#include "common/common.h"

#include <errno.h>
#include <string.h>

uint64_t wd_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* the proleptic Gregorian date of @days since 1970-01-01 (the "days from
 * civil" algorithm run backwards: 400-year eras, years starting in March) */
static void civil(int64_t days, int64_t *y, int *m, int *d)
{
	int64_t z = days + 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t doe = z - era * 146097;					     /* [0, 146096] */
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* [0, 399] */
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);		     /* [0, 365] */
	int64_t mp = (5 * doy + 2) / 153;				     /* [0, 11] */

	*d = (int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

/* "00" .. "99": two digits per lookup instead of a division per digit */
#define TENS(t) t, '0', t, '1', t, '2', t, '3', t, '4', t, '5', t, '6', t, '7', t, '8', t, '9'
static const char digit_pairs[200] = {TENS('0'), TENS('1'), TENS('2'), TENS('3'), TENS('4'),
				      TENS('5'), TENS('6'), TENS('7'), TENS('8'), TENS('9')};
#undef TENS

/* @v (0-99) as two digits at @o, then @sep unless it is 0; returns the next free byte */
static char *put2(char *o, unsigned v, char sep)
{
	memcpy(o, digit_pairs + 2 * v, 2);
	if (!sep)
		return o + 2;
	o[2] = sep;
	return o + 3;
}

int wd_rfc3339(const struct timespec *ts, char *out, size_t outlen)
{
	int64_t t = ts->tv_sec, days = t / 86400, sod = t % 86400, y;
	unsigned us = (unsigned)(ts->tv_nsec / 1000);
	int m, d;
	char *o = out;

	/* years 0000-9999: 0000-01-01T00:00:00Z .. 9999-12-31T23:59:59Z */
	if (outlen < 28 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000L || t < -62167219200LL ||
	    t > 253402300799LL)
		return -EINVAL;
	if (sod < 0) {
		sod += 86400;
		days--;
	}
	civil(days, &y, &m, &d);
	/* "YYYY-MM-DDTHH:MM:SS.uuuuuuZ" */
	o = put2(o, (unsigned)y / 100, 0);
	o = put2(o, (unsigned)y % 100, '-');
	o = put2(o, (unsigned)m, '-');
	o = put2(o, (unsigned)d, 'T');
	o = put2(o, (unsigned)(sod / 3600), ':');
	o = put2(o, (unsigned)(sod / 60 % 60), ':');
	o = put2(o, (unsigned)(sod % 60), '.');
	o = put2(o, us / 10000, 0);
	o = put2(o, us / 100 % 100, 0);
	o = put2(o, us % 100, 'Z');
	*o = '\0';
	return 0;
}

/* time.c - clocks and timestamps. wd_rfc3339() is on the audit encoder's path (one event
 * per DNS query): it formats with civil-date arithmetic, without stdio, gmtime_r() or the
 * time zone machinery. wd_rfc3339_parse() is its way back, for the audit decoder. */
#include "common/common.h"

#include <errno.h>
#include <string.h>
#include <time.h>

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

static bool digits(const char *s, int n, int *out)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return true;
}

int wd_rfc3339_parse(const char *s, struct timespec *out)
{
	int y, mo, d, h, mi, sec, oh = 0, om = 0, sign = 0;
	long nsec = 0;
	struct tm tm = {0};
	time_t t;

	if (strlen(s) < 20 || !digits(s, 4, &y) || s[4] != '-' || !digits(s + 5, 2, &mo) ||
	    s[7] != '-' || !digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != 't') ||
	    !digits(s + 11, 2, &h) || s[13] != ':' || !digits(s + 14, 2, &mi) || s[16] != ':' ||
	    !digits(s + 17, 2, &sec))
		return -EINVAL;
	s += 19;
	if (*s == '.') {
		long scale = 100000000L;
		int nd = 0;

		for (s++; *s >= '0' && *s <= '9'; s++, nd++)
			if (nd < 9) {
				nsec += (*s - '0') * scale;
				scale /= 10;
			}
		if (nd == 0)
			return -EINVAL;
	}
	if (*s == 'Z' || *s == 'z') {
		s++;
	} else if (*s == '+' || *s == '-') {
		sign = *s == '+' ? 1 : -1;
		if (!digits(s + 1, 2, &oh) || s[3] != ':' || !digits(s + 4, 2, &om) || oh > 23 ||
		    om > 59)
			return -EINVAL;
		s += 6;
	} else {
		return -EINVAL;
	}
	if (*s || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
		return -EINVAL;
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	t = timegm(&tm);
	out->tv_sec = t - sign * (oh * 3600 + om * 60);
	out->tv_nsec = nsec;
	return 0;
}

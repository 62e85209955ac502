/* time.c - clocks and timestamps. */
#include "common/common.h"

#include <errno.h>
#include <stdio.h>

uint64_t wd_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int wd_rfc3339(const struct timespec *ts, char *out, size_t outlen)
{
	struct tm tm;
	int n;

	if (outlen < 28 || !gmtime_r(&ts->tv_sec, &tm))
		return -EINVAL;
	n = snprintf(out, outlen, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", tm.tm_year + 1900,
		     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		     ts->tv_nsec / 1000);
	return n > 0 && (size_t)n < outlen ? 0 : -EINVAL;
}

/* opts.c - the checks of `warden run`'s option values that the launcher makes while it reads
 * them (--mode, --timeout): pure, and shared by every OS's run path (run.c on Linux,
 * mode_seatbelt.c on macOS). */
#include "run/run.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

bool run_opts_mode_ok(const char *arg)
{
	return !strcmp(arg, "root") || !strcmp(arg, "rootless") || !strcmp(arg, "daemon");
}

int run_opts_timeout(const char *arg, unsigned *ret)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || *end || v < 1 || v > RUN_TIMEOUT_MAX_S)
		return -EINVAL;
	*ret = (unsigned)v;
	return 0;
}

/* cli.c - the helpers the `warden` verbs share: --help detection, the short usage of a usage
 * error, and verbs not built yet (the
 * audit log's path and what no grant may expose are run/'s: run_audit_path(), run_protect_init()).
 */
#include "launcher/cli.h"
#include "run/run.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

bool cli_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return true;
	}
	return false;
}

int cli_not_built(const char *verb, const char *what)
{
	wd_say(stderr, "warden %s: not built yet (%s)", verb, what);
	return WD_EXIT_USAGE;
}

int cli_usage_error(const char *verb, const char *synopsis, const char *fmt, ...)
{
	struct wd_buf b = WD_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	wd_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	wd_say(stderr, "warden %s: %s", verb, wd_buf_cstr(&b));
	wd_buf_free(&b);
	fprintf(stderr, "usage: %s\nsee `warden %s --help`\n", synopsis, verb);
	return WD_EXIT_USAGE;
}

int cli_not_here(int argc, char **argv)
{
	(void)argc;
#ifdef _WIN32
	wd_say(stderr,
	       "warden %s: not available on Windows (it needs Linux: nftables, namespaces, "
	       "cgroups or the gateway daemon); here: warden run, logs, version, help",
	       argv[0]);
#else
	wd_say(stderr,
	       "warden %s: not available on macOS (it needs Linux: nftables, namespaces, "
	       "cgroups or the gateway daemon); here: warden run, logs, version, help",
	       argv[0]);
#endif
	return WD_EXIT_USAGE;
}

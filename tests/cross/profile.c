/* profile.c - `warden-profile macos|windows POLICY [PORT]`: what the backend of another OS would
 * enforce for a policy, printed: the Seatbelt profile (macos) or the AppContainer plan (windows),
 * through run_platform_render() (run/platform.c), the code behind `warden policy check --for`,
 * which checks the profile's invariants before it gives it out. PORT is the gateway's proxy port
 * on loopback, the profile's one network destination (0 or none: no network at all).
 *
 * It exists because `warden` itself is not built for macOS yet: tests/macos/seatbelt.sh needs
 * the profile on the Mac it runs on, from the Mac's own paths. Linked natively here (CTest
 * unit.cross_profile compares it with `warden policy check --for macos`) and for Mach-O by
 * tests/cross/run; .github/workflows/macos.yml runs it on a Mac. Exit: 0 printed, 1 the policy
 * is invalid or the profile broke an invariant (said on stderr), 2 a usage error. */
#include "common/common.h"
#include "policy/policy.h"
#include "run/run.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(void)
{
	fprintf(stderr, "usage: warden-profile macos|windows POLICY [PORT]\n"
			"Prints the Seatbelt profile (macos) or AppContainer plan (windows) of "
			"POLICY;\nPORT: the gateway's proxy port on loopback (default 0: no "
			"network).\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct policy_ctx ctx = {.home = getenv("HOME")};
	struct wd_buf out = WD_BUF_INIT;
	struct wd_policy *p = NULL;
	struct policy_diags d;
	struct wd_err err;
	unsigned long port = 0;
	char *end = NULL;
	int ret;

	if (argc < 3 || argc > 4 || (strcmp(argv[1], "macos") && strcmp(argv[1], "windows")))
		return usage();
	if (argc == 4) {
		errno = 0;
		port = strtoul(argv[3], &end, 10);
		if (errno || !*argv[3] || *end || port > 65535)
			return usage();
	}
	if (ctx.home && ctx.home[0] != '/')
		ctx.home = NULL;
	policy_diags_init(&d);
	ret = policy_load(argv[2], &ctx, &p, &d);
	for (size_t i = 0; i < d.n; i++) {
		struct wd_buf b = WD_BUF_INIT;

		policy_diag_format(&d, i, &b);
		fprintf(stderr, "%s\n", wd_buf_cstr(&b));
		wd_buf_free(&b);
	}
	policy_diags_free(&d);
	if (ret) {
		fprintf(stderr, "warden-profile: %s: %s\n", argv[2],
			ret == -EINVAL ? "not a valid policy" : strerror(-ret));
		return 1;
	}
	wd_err_clear(&err);
	ret = run_platform_render(p, argv[1], ctx.home, (uint16_t)port, &out, &err);
	policy_free(p);
	if (ret) {
		fprintf(stderr, "warden-profile: %s\n", err.msg[0] ? err.msg : strerror(-ret));
		wd_buf_free(&out);
		return 1;
	}
	fputs(wd_buf_cstr(&out), stdout);
	wd_buf_free(&out);
	return fflush(stdout) ? 1 : 0;
}

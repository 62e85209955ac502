/* cmd_policy.c - `warden policy check [--json] FILE`: load, validate and print a
 * normalised policy, or every error in it with its file:line:column. */
#include "launcher/cli.h"
#include "common/common.h"
#include "policy/policy.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static void usage(FILE *f)
{
	fprintf(f, "usage: warden policy check [--json] FILE\n\n"
		   "Checks a policy file (see warden-policy(5)). On success prints the\n"
		   "normalised policy (YAML, or JSON with --json) and any warnings; on\n"
		   "failure prints every error as FILE:LINE:COLUMN: error: MESSAGE.\n\n"
		   "exit status: 0 valid, 2 invalid or usage error, 125 internal error\n");
}

/* every diagnostic, sorted by position, one line each on stderr */
static int print_diags(struct policy_diags *d)
{
	struct wd_buf line = WD_BUF_INIT;
	int ret = 0;

	policy_diags_sort(d);
	for (size_t i = 0; i < d->n; i++) {
		wd_buf_reset(&line);
		ret = policy_diag_format(d, i, &line);
		if (ret)
			break;
		fprintf(stderr, "%s\n", wd_buf_cstr(&line));
	}
	if (d->dropped)
		fprintf(stderr, "%s: %zu more diagnostics not shown\n", d->file, d->dropped);
	wd_buf_free(&line);
	return ret;
}

/* {"file":..., "valid":false, "errors":N, "warnings":N, "diagnostics":[...]} */
static int json_diags(const struct policy_diags *d, struct wd_buf *out)
{
	int ret = 0;

	ret |= wd_buf_puts(out, "{\"file\":");
	ret |= policy_json_string(out, d->file);
	ret |= wd_buf_printf(out,
			     ",\"valid\":false,\"errors\":%zu,\"warnings\":%zu,"
			     "\"diagnostics\":[",
			     d->errors, d->warnings);
	for (size_t i = 0; i < d->n; i++) {
		const struct policy_diag *g = &d->v[i];

		ret |=
		    wd_buf_printf(out,
				  "%s{\"level\":\"%s\",\"line\":%d,\"column\":%d,"
				  "\"message\":",
				  i ? "," : "", g->level == POLICY_DIAG_ERROR ? "error" : "warning",
				  g->line, g->col);
		ret |= policy_json_string(out, g->msg);
		ret |= wd_buf_puts(out, "}");
	}
	ret |= wd_buf_puts(out, "]}\n");
	return ret ? -ENOMEM : 0;
}

static int check(const char *path, bool json)
{
	struct policy_diags d;
	struct wd_policy *p = NULL;
	struct wd_buf out = WD_BUF_INIT;
	struct cli_protect pr;
	struct policy_ctx ctx = {0};
	int ret, status;

	/* the grants are checked against what a `warden run` would write to */
	cli_protect_init(&pr, cli_audit_path(NULL), NULL);
	ctx.protect = pr.v;
	ctx.nprotect = pr.n;
	policy_diags_init(&d);
	ret = policy_load(path, &ctx, &p, &d);
	if (print_diags(&d)) {
		status = WD_EXIT_INTERNAL;
		goto out;
	}
	if (ret == -ENOMEM) {
		fprintf(stderr, "warden policy: out of memory\n");
		status = WD_EXIT_INTERNAL;
		goto out;
	}
	if (ret) {
		if (d.errors)
			fprintf(stderr, "%s: %zu error%s\n", d.file, d.errors,
				d.errors == 1 ? "" : "s");
		if (json && !json_diags(&d, &out))
			fputs(wd_buf_cstr(&out), stdout);
		status = WD_EXIT_USAGE;
		goto out;
	}
	ret = json ? policy_render_json(p, &out) : policy_render_yaml(p, &out);
	if (ret || (json && wd_buf_puts(&out, "\n"))) {
		fprintf(stderr, "warden policy: out of memory\n");
		status = WD_EXIT_INTERNAL;
		goto out;
	}
	fputs(wd_buf_cstr(&out), stdout);
	status = fflush(stdout) ? WD_EXIT_INTERNAL : WD_EXIT_OK;
out:
	wd_buf_free(&out);
	policy_free(p);
	policy_diags_free(&d);
	return status;
}

int cmd_policy(int argc, char **argv)
{
	const char *file = NULL;
	bool json = false;

	if (cli_wants_help(argc, argv)) {
		usage(stdout);
		return WD_EXIT_OK;
	}
	if (argc < 2 || strcmp(argv[1], "check")) {
		if (argc >= 2)
			fprintf(stderr, "warden policy: unknown sub-command `%s`\n", argv[1]);
		usage(stderr);
		return WD_EXIT_USAGE;
	}
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "--") && i + 1 < argc && !file) {
			file = argv[++i];
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "warden policy check: unknown option `%s`\n", argv[i]);
			usage(stderr);
			return WD_EXIT_USAGE;
		} else if (!file) {
			file = argv[i];
		} else {
			fprintf(stderr, "warden policy check: expected one FILE, got `%s` too\n",
				argv[i]);
			return WD_EXIT_USAGE;
		}
	}
	if (!file) {
		fprintf(stderr, "warden policy check: missing FILE\n");
		usage(stderr);
		return WD_EXIT_USAGE;
	}
	return check(file, json);
}

/* cmd_policy.c - `warden policy check [--json] FILE|-`: load, validate and print a
 * normalised policy, or every error in it with its file:line:column; with `--ceiling
 * [GATEWAY.yaml] [--user NAME]`, the effective policy under a gateway's ceiling and
 * where each narrowing came from. `warden policy new --mcp [-o FILE] -- COMMAND...`: a
 * starting policy for an MCP server (run/newpolicy.c), checked before it is written. */
#include "launcher/cli.h"
#include "run/newpolicy.h"
#include "run/run.h"
#include "common/common.h"
#include "conf/conf.h"
#include "policy/policy.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_GWCONF "/etc/warden/gateway.yaml"
#define WHO_GROUPS 64
/* --for's default proxy port: the gateway's default ports.proxy (warden-gateway(8)) */
#define WD_FOR_PROXY_PORT 15080

static void usage(FILE *f)
{
	fprintf(f, "usage: warden policy check [--json] FILE|-\n"
		   "       warden policy check --ceiling [GATEWAY.yaml] [--user NAME] FILE\n"
		   "       warden policy check --for macos|windows [--proxy-port N] FILE\n\n"
		   "Checks a policy file (see warden-policy(5)). On success prints the\n"
		   "normalised policy (YAML, or JSON with --json) and any warnings; on\n"
		   "failure prints every error as FILE:LINE:COLUMN: error: MESSAGE.\n"
		   "FILE `-` reads the policy from standard input. --json prints\n"
		   "one object whose key `valid` is the verdict, true or false.\n\n"
		   "With --ceiling: the effective policy a gateway with that config\n"
		   "(default " DEFAULT_GWCONF ") gives a run of NAME (a user name or\n"
		   "uid; default: you), with where each narrowing came from.\n\n"
		   "With --for: what that OS's backend would enforce, checked against its\n"
		   "invariants: the Seatbelt profile (macos) or the AppContainer plan\n"
		   "(windows), the gateway's proxy on loopback port N (default 15080) the\n"
		   "one way out. Neither backend runs on this OS (docs/platforms.md).\n\n"
		   "exit status: 0 valid, 2 invalid or usage error, 125 internal error\n\n"
		   "       warden policy new --mcp [-o FILE] [--force] -- COMMAND ARGS...\n"
		   "writes a starting policy for an MCP server (see warden policy new --help).\n");
}

/* the names a ceiling sees for @user (a name, a uid, or NULL: the caller) */
struct who {
	struct policy_who w;
	char name[64];
	char groups[WHO_GROUPS][64];
	const char *gp[WHO_GROUPS];
};

static int who_of(const char *user, struct who *o)
{
	struct passwd *pw;
	gid_t gids[WHO_GROUPS];
	int n = WHO_GROUPS;
	char *end = NULL;
	unsigned long uid;

	memset(o, 0, sizeof(*o));
	o->w.groups = o->gp;
	if (!user) {
		uid = getuid();
		pw = getpwuid((uid_t)uid);
	} else {
		pw = getpwnam(user);
		uid = strtoul(user, &end, 10);
		if (!pw && end && !*end && *user)
			pw = getpwuid((uid_t)uid);
		else if (!pw) {
			wd_say(stderr, "warden policy check: --user %s: no such user", user);
			return -ENOENT;
		}
	}
	o->w.uid = pw ? (uint32_t)pw->pw_uid : (uint32_t)uid;
	if (!pw)
		return 0; /* a uid without a name: users.UID and the top level */
	snprintf(o->name, sizeof(o->name), "%s", pw->pw_name);
	o->w.name = o->name;
	if (getgrouplist(o->name, pw->pw_gid, gids, &n) < 0) {
		wd_say(stderr, "warden policy check: %s is in more than %d groups", o->name,
		       WHO_GROUPS);
		return -E2BIG;
	}
	for (int i = 0; i < n; i++) {
		struct group gr, *g = NULL;
		char buf[4096];

		if (getgrgid_r(gids[i], &gr, buf, sizeof(buf), &g) || !g)
			continue;
		snprintf(o->groups[o->w.ngroups], 64, "%s", g->gr_name);
		o->gp[o->w.ngroups] = o->groups[o->w.ngroups];
		o->w.ngroups++;
	}
	return 0;
}

/* print @p under the ceiling of @gwpath for @user. Return: an exit status */
static int check_ceiling(const struct wd_policy *p, const char *gwpath, const char *user)
{
	struct policy_diags d;
	struct wd_gwconf c;
	struct wd_policy *e = NULL;
	struct wd_buf out = WD_BUF_INIT;
	struct who who;
	int ret, status = WD_EXIT_USAGE;

	policy_diags_init(&d);
	ret = conf_load(gwpath, &c, &d);
	policy_diags_sort(&d);
	for (size_t i = 0; i < d.n; i++) {
		wd_buf_reset(&out);
		if (!policy_diag_format(&d, i, &out))
			wd_say(stderr, "%s", wd_buf_cstr(&out));
	}
	wd_buf_reset(&out);
	policy_diags_free(&d);
	if (ret) {
		wd_say(stderr, "warden policy check: %s: not a valid gateway config (%s)", gwpath,
		       strerror(-ret));
		return WD_EXIT_USAGE;
	}
	if (!c.ceiling) {
		wd_say(stderr,
		       "warden policy check: %s has no `ceiling`: runs get their policy as "
		       "written",
		       gwpath);
		status = WD_EXIT_OK;
		goto out;
	}
	if (who_of(user, &who))
		goto out;
	ret = policy_ceiling_apply(c.ceiling, &who.w, p, &e);
	if (ret == -E2BIG) {
		wd_say(stderr,
		       "warden policy check: the policy's rules and the ceiling's overlap in more "
		       "than %d pairs: a gateway refuses this run",
		       POLICY_CEILING_MAX_PAIRS);
		goto out;
	}
	if (!ret)
		ret = policy_render_effective(e, &out);
	if (ret) {
		fprintf(stderr, "warden policy: out of memory\n");
		status = WD_EXIT_INTERNAL;
		goto out;
	}
	wd_say(stdout, "# for uid %u%s%s", who.w.uid, who.w.name ? " " : "",
	       who.w.name ? who.w.name : "");
	fputs(wd_buf_cstr(&out), stdout);
	status = fflush(stdout) ? WD_EXIT_INTERNAL : WD_EXIT_OK;
out:
	wd_buf_free(&out);
	policy_free(e);
	conf_free(&c);
	return status;
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
		wd_say(stderr, "%s", wd_buf_cstr(&line));
	}
	if (d->dropped)
		wd_say(stderr, "%s: %zu more diagnostics not shown", d->file, d->dropped);
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

/* the policy on standard input (`policy check -`), at most POLICY_MAX_BYTES. Return: 0 or -errno */
static int read_stdin(char **ret_data, size_t *ret_len)
{
	struct wd_buf b = WD_BUF_INIT;
	int ret;

	for (;;) {
		ssize_t n;

		ret = wd_buf_reserve(&b, 4096);
		if (ret < 0)
			goto fail;
		n = read(STDIN_FILENO, b.data + b.len, b.cap - b.len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			goto fail;
		}
		if (n == 0)
			break;
		b.len += (size_t)n;
		if (b.len > POLICY_MAX_BYTES) {
			ret = -EFBIG;
			goto fail;
		}
	}
	b.data[b.len] = '\0';
	*ret_data = b.data;
	*ret_len = b.len;
	return 0;
fail:
	wd_buf_free(&b);
	return ret;
}

/* policy_load(), or for @path `-` the same over standard input */
static int load(const char *path, const struct policy_ctx *ctx, struct wd_policy **ret,
		struct policy_diags *d)
{
	char *data = NULL;
	size_t len = 0;
	int r;

	if (strcmp(path, "-"))
		return policy_load(path, ctx, ret, d);
	snprintf(d->file, sizeof(d->file), "(stdin)");
	r = read_stdin(&data, &len);
	if (r) {
		fprintf(stderr, "warden policy check: cannot read the policy from stdin: %s%s\n",
			strerror(-r), r == -EFBIG ? " (the limit is 1 MiB)" : "");
		return r == -ENOMEM ? r : -EINVAL;
	}
	r = policy_load_buf(data, len, "(stdin)", ctx, ret, d);
	free(data);
	return r;
}

/* the home folder `~` names, as the validator finds it for `policy check`: $HOME, else the
 * password database's (under sudo: SUDO_USER's, as `warden run` does) */
static const char *check_home(void)
{
	const char *su = getenv("SUDO_UID"), *home = getenv("HOME");
	struct passwd *pw = NULL;

	if (getuid() == 0 && su && *su)
		pw = getpwuid((uid_t)strtoul(su, NULL, 10));
	if (pw && pw->pw_dir && pw->pw_dir[0] == '/')
		return pw->pw_dir;
	if (home && home[0] == '/')
		return home;
	pw = getpwuid(getuid());
	return pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
}

/*
 * `command`: `~` made the home folder, and its program found the way `warden run` finds it;
 * one that is missing or not executable is a warning at its line:column (the run may give its
 * own command after `--`). Return: 0, or -ENOMEM.
 */
static int check_command(struct wd_policy *p, const char *file)
{
	char exe[PATH_MAX];
	int ret;

	if (!p->command || !p->ncommand)
		return 0;
	ret = policy_command_expand(p, check_home());
	if (ret == -ENOMEM)
		return ret;
	if (ret) {
		wd_say(stderr,
		       "%s:%d:%d: warning: command: `%s` starts with `~` and the home folder is "
		       "unknown (set HOME)",
		       file, p->command_line, p->command_col, p->command[0]);
		return 0;
	}
	ret = run_resolve_command(p->command[0], getenv("PATH"), exe, sizeof(exe));
	if (ret == -EACCES)
		wd_say(stderr,
		       "%s:%d:%d: warning: command: `%s` is not an executable file; `warden run` "
		       "would exit 126",
		       file, p->command_line, p->command_col, p->command[0]);
	else if (ret)
		wd_say(stderr,
		       "%s:%d:%d: warning: command: `%s` is not found%s; `warden run` would exit "
		       "127",
		       file, p->command_line, p->command_col, p->command[0],
		       strchr(p->command[0], '/') ? "" : " in PATH");
	return 0;
}

/* --for OS: the policy as that OS's backend would enforce it (run/platform.c), or 125/2 */
static int print_for(const struct wd_policy *p, const char *os, unsigned long port)
{
	struct wd_buf out = WD_BUF_INIT;
	struct wd_err err;
	int ret;

	wd_err_clear(&err);
	ret = run_platform_render(p, os, check_home(), (uint16_t)port, &out, &err);
	if (ret) {
		wd_say(stderr, "warden policy check: --for %s: %s", os,
		       err.msg[0] ? err.msg : strerror(-ret));
		wd_buf_free(&out);
		return ret == -ENOMEM ? WD_EXIT_INTERNAL : WD_EXIT_USAGE;
	}
	fputs(wd_buf_cstr(&out), stdout);
	wd_buf_free(&out);
	return fflush(stdout) ? WD_EXIT_INTERNAL : WD_EXIT_OK;
}

static int check(const char *path, bool json, const char *gwpath, const char *user, const char *os,
		 unsigned long port)
{
	struct policy_diags d;
	struct wd_policy *p = NULL;
	struct wd_buf out = WD_BUF_INIT;
	struct run_protect pr;
	struct policy_ctx ctx = {0};
	int ret, status;

	/* the grants are checked against what a `warden run` would write to */
	run_protect_init(&pr, run_audit_path(NULL), NULL);
	ctx.protect = pr.v;
	ctx.nprotect = pr.n;
	policy_diags_init(&d);
	ret = load(path, &ctx, &p, &d);
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
			wd_say(stderr, "%s: %zu error%s", d.file, d.errors,
			       d.errors == 1 ? "" : "s");
		if (json && !json_diags(&d, &out))
			fputs(wd_buf_cstr(&out), stdout);
		status = WD_EXIT_USAGE;
		goto out;
	}
	if (check_command(p, d.file) == -ENOMEM) {
		fprintf(stderr, "warden policy: out of memory\n");
		status = WD_EXIT_INTERNAL;
		goto out;
	}
	if (gwpath) {
		status = check_ceiling(p, gwpath, user);
		goto out;
	}
	if (os) {
		status = print_for(p, os, port);
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

/* ---------------------------------------------------------- warden policy new --mcp */

static void new_usage(FILE *f)
{
	fprintf(f, "usage: warden policy new --mcp [-o FILE] [--force] -- COMMAND ARGS...\n\n"
		   "Writes a starting policy for the MCP server COMMAND ARGS (see warden(1)):\n"
		   "COMMAND is found through PATH and followed to its real file; what the\n"
		   "sandbox would not show is granted read (a node package's node_modules\n"
		   "folder, a Python virtual environment, an interpreter outside /usr);\n"
		   "no network (npx: npm's cache and registry.npmjs.org:443), no timeout,\n"
		   "`command:` set. The policy is checked before it is written, to FILE\n"
		   "(kept if it exists, unless --force) or to stdout (-o - or no -o).\n\n"
		   "exit status: 0 written, 2 usage error, COMMAND not found or FILE exists,\n"
		   "125 internal error (the policy made fails its check)\n");
}

/* @text to @out ("-": stdout), 0644, whole or not at all. Return: 0 or a negative errno */
static int new_write(const struct wd_buf *text, const char *out)
{
	struct wd_atomic a;
	int ret;

	if (!strcmp(out, "-")) {
		fputs(wd_buf_cstr(text), stdout);
		return fflush(stdout) ? -EIO : 0;
	}
	ret = wd_atomic_open(&a, AT_FDCWD, out, WD_ATOMIC_SYNC);
	if (ret)
		return ret;
	ret = fchmod(a.fd, 0644) < 0 ? -errno : wd_write_all(a.fd, text->data, text->len);
	if (ret) {
		wd_atomic_abort(&a);
		return ret;
	}
	return wd_atomic_commit(&a);
}

/* `warden policy new --mcp [-o FILE] [--force] -- COMMAND ARGS...` (argv[0] is "new") */
static int policy_new(int argc, char **argv)
{
	const char *out = "-";
	struct wd_buf text = WD_BUF_INIT;
	struct wd_err err = {0};
	struct stat st;
	bool mcp = false, force = false;
	int i, ret, status = WD_EXIT_USAGE;

	if (cli_wants_help(argc, argv)) {
		new_usage(stdout);
		return WD_EXIT_OK;
	}
	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--mcp")) {
			mcp = true;
		} else if (!strcmp(argv[i], "--force")) {
			force = true;
		} else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
			out = argv[++i];
		} else {
			wd_say(stderr, "warden policy new: unknown option `%s`", argv[i]);
			new_usage(stderr);
			return WD_EXIT_USAGE;
		}
	}
	if (!mcp || i + 1 >= argc) {
		fprintf(stderr, "warden policy new: %s\n",
			mcp ? "missing `-- COMMAND`" : "say what the policy is for: --mcp");
		new_usage(stderr);
		return WD_EXIT_USAGE;
	}
	if (strcmp(out, "-") && !force && !lstat(out, &st)) {
		wd_say(stderr, "warden policy new: %s exists; keeping it (--force replaces it)",
		       out);
		return WD_EXIT_USAGE;
	}
	ret = run_policy_new_mcp(argc - i - 1, argv + i + 1, getenv("PATH"), &text, &err);
	if (ret) {
		wd_say(stderr, "warden policy new: %s", err.msg);
		status = ret == -ENOMEM ? WD_EXIT_INTERNAL : WD_EXIT_USAGE;
		goto out;
	}
	if (run_policy_self_check(&text, strcmp(out, "-") ? out : "<stdout>", "warden policy new",
				  true)) {
		status = WD_EXIT_INTERNAL;
		goto out;
	}
	ret = new_write(&text, out);
	if (ret) {
		wd_say(stderr, "warden policy new: %s: %s", out, strerror(-ret));
		status = WD_EXIT_INTERNAL;
		goto out;
	}
	if (strcmp(out, "-"))
		wd_say(stderr, "warden policy new: wrote %s; next: warden policy check %s", out,
		       out);
	status = WD_EXIT_OK;
out:
	wd_buf_free(&text);
	return status;
}

int cmd_policy(int argc, char **argv)
{
	const char *file = NULL, *gwpath = NULL, *user = NULL, *after_ceiling = NULL, *os = NULL;
	unsigned long port = WD_FOR_PROXY_PORT;
	bool json = false, ceiling = false;

	if (argc >= 2 && !strcmp(argv[1], "new"))
		return policy_new(argc - 1, argv + 1);
	if (cli_wants_help(argc, argv)) {
		usage(stdout);
		return WD_EXIT_OK;
	}
	if (argc < 2 || strcmp(argv[1], "check")) {
		if (argc >= 2)
			wd_say(stderr, "warden policy: unknown sub-command `%s`", argv[1]);
		usage(stderr);
		return WD_EXIT_USAGE;
	}
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "--ceiling")) {
			ceiling = true;
			/* an argument right after it is the gateway config when FILE (or
			 * --user NAME FILE) follows too */
			if (!after_ceiling && i + 2 < argc && argv[i + 1][0] != '-' &&
			    (argv[i + 2][0] != '-' ||
			     (i + 3 < argc && !strcmp(argv[i + 2], "--user"))))
				after_ceiling = argv[++i];
		} else if (!strncmp(argv[i], "--ceiling=", 10)) {
			ceiling = true;
			gwpath = argv[i] + 10;
		} else if (!strcmp(argv[i], "--user") && i + 1 < argc) {
			user = argv[++i];
		} else if (!strcmp(argv[i], "--for") && i + 1 < argc) {
			os = argv[++i];
		} else if (!strcmp(argv[i], "--proxy-port") && i + 1 < argc) {
			char *end;

			port = strtoul(argv[++i], &end, 10);
			if (*end || !port || port > 65535) {
				wd_say(stderr,
				       "warden policy check: --proxy-port: expected 1-65535, "
				       "not `%s`",
				       argv[i]);
				return WD_EXIT_USAGE;
			}
		} else if (!strcmp(argv[i], "--") && i + 1 < argc && !file) {
			file = argv[++i];
		} else if (argv[i][0] == '-' && argv[i][1]) {
			wd_say(stderr, "warden policy check: unknown option `%s`", argv[i]);
			usage(stderr);
			return WD_EXIT_USAGE;
		} else if (!file) {
			file = argv[i];
		} else {
			wd_say(stderr, "warden policy check: expected one FILE, got `%s` too",
			       argv[i]);
			return WD_EXIT_USAGE;
		}
	}
	if (!file) {
		fprintf(stderr, "warden policy check: missing FILE\n");
		usage(stderr);
		return WD_EXIT_USAGE;
	}
	if (user && !ceiling) {
		fprintf(stderr, "warden policy check: --user goes with --ceiling\n");
		return WD_EXIT_USAGE;
	}
	if (ceiling && json) {
		fprintf(stderr, "warden policy check: --ceiling prints YAML only (no --json)\n");
		return WD_EXIT_USAGE;
	}
	if (os && (ceiling || json)) {
		fprintf(stderr, "warden policy check: --for goes without --ceiling and --json\n");
		return WD_EXIT_USAGE;
	}
	if (os && strcmp(os, "macos") && strcmp(os, "windows")) {
		wd_say(stderr, "warden policy check: --for: expected macos or windows, not `%s`",
		       os);
		return WD_EXIT_USAGE;
	}
	if (ceiling && !gwpath)
		gwpath = after_ceiling ? after_ceiling : DEFAULT_GWCONF;
	return check(file, json, gwpath, user, os, port);
}

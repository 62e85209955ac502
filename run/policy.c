/* run_policy.c - the inputs of `warden run`, its first stages: the gateway configuration (and
 * from it the nft table's and the run networks' configuration), whom the program runs as, the
 * policy (with --allow/--read/--write: flags.c's), and the command resolved to a file the
 * sandbox can see. */
#include "run/internal.h"
#include "conf/host.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void print_diags(struct policy_diags *d)
{
	struct wd_buf line = WD_BUF_INIT;

	policy_diags_sort(d);
	for (size_t i = 0; i < d->n; i++) {
		wd_buf_reset(&line);
		if (!policy_diag_format(d, i, &line))
			wd_say(stderr, "%s", wd_buf_cstr(&line));
	}
	wd_buf_free(&line);
}

int run_policy_self_check(const struct wd_buf *text, const char *name, const char *who, bool all)
{
	struct policy_diags d;
	struct wd_policy *p = NULL;
	struct run_protect pr;
	struct policy_ctx ctx = {0};
	struct wd_buf line = WD_BUF_INIT;
	int rc;

	run_protect_init(&pr, run_audit_path(NULL), NULL);
	ctx.protect = pr.v;
	ctx.nprotect = pr.n;
	policy_diags_init(&d);
	rc = policy_parse(text->data, text->len, name, &p, &d);
	if (!rc)
		rc = policy_validate(p, &ctx, &d);
	policy_diags_sort(&d);
	for (size_t i = 0; i < d.n; i++) {
		bool err = d.v[i].level == POLICY_DIAG_ERROR;

		if (!err && !all)
			continue;
		wd_buf_reset(&line);
		if (!policy_diag_format(&d, i, &line))
			wd_say(stderr, "%s: %s%s", who,
			       err ? "the policy made fails its check: " : "", wd_buf_cstr(&line));
	}
	if (!rc && d.errors)
		rc = -EINVAL;
	wd_buf_free(&line);
	policy_free(p);
	policy_diags_free(&d);
	return rc;
}

int run_config_load(struct run *r)
{
	struct policy_diags d;
	int ret;

	policy_diags_init(&d);
	if (r->o.config) {
		ret = conf_load(r->o.config, &r->input.gwc, &d);
		if (ret) {
			print_diags(&d);
			policy_diags_free(&d);
			return run_fail(r, "gateway", "correct the gateway config",
					"%s is not valid (%s)", r->o.config, strerror(-ret));
		}
	} else {
		conf_defaults(&r->input.gwc);
	}
	policy_diags_free(&d);
	conf_fw_config(&r->input.gwc, &r->network.fcfg);
	if (conf_pool_config(&r->input.gwc, &r->network.ncfg))
		return run_fail(r, "gateway", "correct pools.runs_v4 / runs_v6",
				"bad run pool %s or %s", r->input.gwc.pool_v4,
				r->input.gwc.pool_v6);
	return 0;
}

/*
 * Who the program runs as, never uid 0: under sudo the invoking user (SUDO_UID/SUDO_GID, with
 * their groups, and their home for `~` and the credential stores); started by root directly,
 * the sandbox user (--sandbox-user, $WARDEN_SANDBOX_USER, else nobody) with no supplementary
 * groups, root's home still naming `~`. Return: 0, or 125 after saying why.
 */
static int invoking_user(struct run *r, const char **ret_home)
{
	const char *su = getenv("SUDO_UID"), *sg = getenv("SUDO_GID");
	const char *want = r->o.sandbox_user;
	unsigned long long id_u = 0, id_g = 0;
	struct passwd *pw;
	char name[64];
	int ret;

	r->input.uid = r->input.caller_uid = getuid();
	r->input.gid = getgid();
	*ret_home = NULL;
	if (r->input.uid != 0)
		return 0;
	if (su && sg &&
	    (wd_parse_uint(su, UINT32_MAX - 1, &id_u) || wd_parse_uint(sg, UINT32_MAX - 1, &id_g)))
		return run_fail(r, "user",
				"run warden through sudo, or unset SUDO_UID and SUDO_GID",
				"SUDO_UID `%s` and SUDO_GID `%s` are not a uid and a gid", su, sg);
	if (su && sg && id_u > 0) {
		r->input.uid = r->input.caller_uid = (uid_t)id_u;
		r->input.gid = (gid_t)id_g;
		pw = getpwuid(r->input.uid);
		if (pw) {
			int n = (int)WD_ARRAY_SIZE(r->input.groups);

			r->input.user = strdup(pw->pw_name);
			*ret_home = pw->pw_dir;
			if (getgrouplist(pw->pw_name, r->input.gid, r->input.groups, &n) >= 0)
				r->input.ngroups = n;
		}
		return 0;
	}
	ret = run_sandbox_user(want, &r->input.uid, &r->input.gid, name, sizeof(name));
	if (ret == -ENOENT)
		return run_fail(r, "user", "name an existing user, or a uid",
				"no sandbox user `%s`", name);
	if (ret)
		return run_fail(r, "user", "pick an unprivileged user for --sandbox-user",
				"the sandbox user `%s` is root: a program never runs as root",
				name);
	r->input.user = strdup(name);
	r->input.ngroups = 0;
	return 0;
}

/* the home folder `~` names in `command`: @home (the sudo user's), else $HOME, else the
 * password database's; NULL when none is absolute */
static const char *command_home(const char *home)
{
	struct passwd *pw;

	if (home && home[0] == '/')
		return home;
	home = getenv("HOME");
	if (home && home[0] == '/')
		return home;
	pw = getpwuid(getuid());
	return pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
}

int run_policy_load(struct run *r)
{
	static const char empty[] = "version: 1\n";
	struct policy_diags d;
	struct policy_ctx ctx = {0};
	struct run_protect pr;
	int ret;

	ret = invoking_user(r, &ctx.home);
	if (ret)
		return ret;
	run_protect_init(&pr, run_audit_path(r->o.audit), r->input.gwc.audit_path);
	ctx.protect = pr.v;
	ctx.nprotect = pr.n;
	policy_diags_init(&d);
	if (r->o.nflags) {
		ret = run_flags_policy_load(r, &ctx);
		if (ret) {
			policy_diags_free(&d);
			return ret;
		}
	} else if (r->o.policy) {
		ret = policy_load(r->o.policy, &ctx, &r->input.pol, &d);
		if (ret) {
			print_diags(&d);
			policy_diags_free(&d);
			return run_fail(r, "policy",
					"correct the policy (warden policy check FILE)",
					"%s is not valid (%s)", r->o.policy, strerror(-ret));
		}
		ret = wd_read_file(r->o.policy, POLICY_MAX_BYTES, &r->input.policy_text,
				   &r->input.policy_len);
		if (ret) {
			policy_diags_free(&d);
			return run_fail(r, "policy", NULL, "%s: %s", r->o.policy, strerror(-ret));
		}
		if (!realpath(r->o.policy, r->input.policy_abs))
			snprintf(r->input.policy_abs, sizeof(r->input.policy_abs), "%s",
				 r->o.policy);
	} else {
		ret = policy_parse(empty, sizeof(empty) - 1, "(empty policy)", &r->input.pol, &d);
		ret = ret ? ret : policy_validate(r->input.pol, &ctx, &d);
		r->input.policy_text = strdup(empty);
		r->input.policy_len = sizeof(empty) - 1;
		snprintf(r->input.policy_abs, sizeof(r->input.policy_abs), "(none)");
		if (ret || !r->input.policy_text) {
			policy_diags_free(&d);
			return run_fail(r, "policy", NULL, "the empty policy: %s", strerror(-ret));
		}
	}
	/* warnings are worth seeing */
	if (d.n && !r->o.quiet)
		print_diags(&d);
	policy_diags_free(&d);
	ret = policy_command_expand(r->input.pol, command_home(ctx.home));
	if (ret == -EINVAL)
		return run_fail(r, "policy", "set HOME, or write the command's path in full",
				"`command` starts with `~` and the home folder is unknown");
	if (ret)
		return run_fail(r, "policy", NULL, "out of memory");
	if (run_sha256_hex(r->input.policy_text, r->input.policy_len, r->input.policy_hash))
		return run_fail(r, "policy", NULL, "the policy's SHA-256: libcrypto failed");
	return 0;
}

/* Is @path (canonical) visible inside the sandbox? */
static bool visible(const struct run *r, const char *path)
{
	static const char *const base[] = {"/usr",   "/bin",   "/sbin",	  "/lib",
					   "/lib32", "/lib64", "/libx32", "/etc/alternatives"};

	/* `warden trace`: the learning sandbox shows the whole host read-only, its /tmp too */
	if (r->trace)
		return true;
	for (size_t i = 0; i < WD_ARRAY_SIZE(base); i++)
		if (run_path_within(path, base[i]))
			return true;
	for (size_t i = 0; i < r->input.pol->nread; i++)
		if (r->input.pol->read[i].real && run_path_within(path, r->input.pol->read[i].real))
			return true;
	for (size_t i = 0; i < r->input.pol->nwrite; i++)
		if (r->input.pol->write[i].real &&
		    run_path_within(path, r->input.pol->write[i].real))
			return true;
	return false;
}

int run_command_resolve(struct run *r, int argc, char **argv)
{
	char real[PATH_MAX];
	size_t n;
	int ret;

	if (argc > 0) {
		n = (size_t)argc;
		r->input.argv = calloc(n + 1, sizeof(char *));
		for (size_t i = 0; r->input.argv && i < n; i++)
			r->input.argv[i] = argv[i];
	} else if (r->input.pol->command && r->input.pol->ncommand) {
		n = r->input.pol->ncommand;
		r->input.argv = calloc(n + 1, sizeof(char *));
		for (size_t i = 0; r->input.argv && i < n; i++)
			r->input.argv[i] = r->input.pol->command[i];
	} else {
		fprintf(stderr, "warden run: no command: give one after `--` or set `command` in "
				"the policy\n");
		if (r->o.usage)
			r->o.usage(stderr);
		return RUN_EXIT_USAGE;
	}
	if (!r->input.argv)
		return run_fail(r, "policy", NULL, "out of memory");
	r->input.argv0 = r->input.argv[0];
	/* a forced backend with its own root (a container's image) resolves the command there
	 * (mode_docker.c restores the word when docker is only the fallback) */
	if (run_backend_own_root(r->o.backend ? policy_backend_lookup(r->o.backend)
					      : r->input.pol->sandbox_backend)) {
		snprintf(r->input.exe, sizeof(r->input.exe), "%s", r->input.argv[0]);
		return 0;
	}
	ret = run_resolve_command(r->input.argv[0], getenv("PATH"), r->input.exe,
				  sizeof(r->input.exe));
	if (ret == -EACCES) {
		wd_say(stderr, "warden run: %s: not an executable file", r->input.argv[0]);
		return RUN_EXIT_NOEXEC;
	}
	if (ret) {
		wd_say(stderr, "warden run: %s: command not found", r->input.argv[0]);
		return RUN_EXIT_NOTFOUND;
	}
	if (!realpath(r->input.exe, real) || !visible(r, real)) {
		wd_say(stderr, "warden run: %s (%s) is not visible inside the sandbox",
		       r->input.exe, realpath(r->input.exe, real) ? real : r->input.exe);
		wd_say(stderr, "  fix: add its folder to filesystem.read in the policy");
		return RUN_EXIT_NOTFOUND;
	}
	r->input.argv[0] = r->input.exe;
	return 0;
}

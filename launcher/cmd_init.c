/* cmd_init.c - `warden init [--from TRACE | -- COMMAND] [-o FILE] [--force]`: a policy from a
 * trace (init_infer.c; `-- COMMAND` traces it first with `warden trace`), or a commented starter
 * policy. What it writes must pass `warden policy
 * check`: it is checked the same way before anything is written, and a file that fails is a
 * bug in warden init (125), never written. An existing file is kept unless --force; then it is
 * replaced atomically. */
#include "run/bwrap.h"
#include "sandbox/sandbox.h"
#include "launcher/cli.h"
#include "trace/infer.h"
#include "run/outdir.h"
#include "run/run.h"
#include "run/learn.h"
#include "run/mcppin.h"
#include "trace/file.h"
#include "common/common.h"
#include "policy/policy.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define INIT_DEFAULT_OUT "policy.yaml"
#define INIT_MAX_CREDS 64

static void usage(FILE *f)
{
	fprintf(f,
		"usage: warden init [--from TRACE] [-o FILE] [--force] [-q]\n"
		"       warden init [-o FILE] [--force] [-q] -- COMMAND ARGS...\n\n"
		"Writes a policy (warden-policy(5)) to FILE (default " INIT_DEFAULT_OUT
		"; - for stdout).\n"
		"With --from: the least-privilege policy for what the trace recorded (`warden\n"
		"trace` writes traces): the files read and written, folded to the narrowest\n"
		"folders, the names and ports reached, the environment given, limits from what\n"
		"was measured, each entry with a comment saying what used it. Credential stores\n"
		"the program read are left out, commented, with a warning. Without --from: a\n"
		"commented starter policy. With -- COMMAND: `warden trace -- COMMAND` first (the\n"
		"trace goes to the default folder), then the policy from that trace. An existing\n"
		"FILE is kept unless --force (checked before anything runs). -q, --quiet: no\n"
		"progress or summary, only warnings and errors.\n\n"
		"exit status: 0 written, 2 usage error, bad trace or FILE exists, 125 internal;\n"
		"with -- COMMAND: 126 or 127 when it could not be run, 125 when the sandbox\n"
		"failed before it ran (nothing written then)\n");
}

static bool path_exists(const char *path, void *ctx)
{
	struct stat st;

	(void)ctx;
	return !lstat(path, &st);
}

static void today(char *out, size_t size)
{
	time_t now = time(NULL);
	struct tm tm;

	if (!gmtime_r(&now, &tm) || !strftime(out, size, "%Y-%m-%d", &tm))
		snprintf(out, size, "an unknown day");
}

/* the absolute folder @out goes to, and its file name */
static int out_place(const char *out, char *dir, size_t dsize, char *base, size_t bsize)
{
	char copy[PATH_MAX], real[PATH_MAX];

	if (!strcmp(out, "-")) {
		if (!getcwd(dir, dsize))
			return -errno;
		snprintf(base, bsize, "%s", INIT_DEFAULT_OUT);
		return 0;
	}
	if (strlen(out) >= sizeof(copy))
		return -ENAMETOOLONG;
	snprintf(copy, sizeof(copy), "%s", out);
	snprintf(base, bsize, "%s", basename(copy));
	snprintf(copy, sizeof(copy), "%s", out);
	if (!realpath(dirname(copy), real))
		return -errno;
	snprintf(dir, dsize, "%s", real);
	return 0;
}

/* what `warden policy check` would say about @text as @dir/@base; prints its errors */
static int self_check(const struct wd_buf *text, const char *dir, const char *base)
{
	char name[PATH_MAX + NAME_MAX + 2];

	snprintf(name, sizeof(name), "%s/%s", strcmp(dir, "/") ? dir : "", base);
	return run_policy_self_check(text, name, "warden init", false);
}

/*
 * `warden init -- COMMAND`: `warden trace -- COMMAND` to the default path first (run_trace_main()).
 * The run makes our stdout /dev/null once the program has it (run/run.c); with `-o -` the policy
 * still goes to the caller's. Return: 0 (@path is the trace), or the exit status to end with.
 */
static int trace_then(int n, char **words, bool to_stdout, bool quiet, char *path, size_t size)
{
	struct run_opts o = {.quiet = quiet};
	struct run_trace *rt = calloc(1, sizeof(*rt));
	int saved = -1, status;
	bool not_started;

	if (!rt) {
		fprintf(stderr, "warden init: out of memory\n");
		return WD_EXIT_INTERNAL;
	}
	rt->quiet = quiet;
	rt->init = true;
	saved = to_stdout ? fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3) : -1;
	status = run_trace_main(&o, rt, n, words);
	snprintf(path, size, "%s", rt->path);
	not_started = rt->not_started;
	free(rt);
	if (saved >= 0) {
		dup2(saved, STDOUT_FILENO);
		close(saved);
	}
	if (not_started) {
		/* not found (127), not executable (126), the sandbox failed (125): said above */
		fprintf(stderr, "warden init: the program did not start; no policy written\n");
		return status ? status : WD_EXIT_INTERNAL;
	}
	if (!path[0]) {
		fprintf(stderr,
			"warden init: no trace was written; nothing to make a policy from\n");
		return status == WD_EXIT_USAGE ? WD_EXIT_USAGE : WD_EXIT_INTERNAL;
	}
	if (status == WD_EXIT_INTERNAL)
		return WD_EXIT_INTERNAL;
	if (status && !quiet)
		wd_say(stderr,
		       "warden init: the program exited with status %d; the policy covers what it "
		       "did until then",
		       status);
	return 0;
}

/* the pin file's name beside the policy @base: "policy.yaml" -> "policy.pin.json" */
static int pin_name(const char *base, char *out, size_t size)
{
	size_t n = strlen(base);
	int len;

	if (n > 5 && !strcmp(base + n - 5, ".yaml"))
		n -= 5;
	else if (n > 4 && !strcmp(base + n - 4, ".yml"))
		n -= 4;
	len = snprintf(out, size, "%.*s.pin.json", (int)n, base);
	return len < 0 || (size_t)len >= size ? -ENAMETOOLONG : 0;
}

/* the pin file of the MCP tools @t recorded, written into @od as @name before the policy that
 * names it. Return: 0, or a negative errno (said on stderr). */
static int write_pin(const struct outdir *od, const char *name, const struct trace *t, bool force)
{
	json_t *cmd = json_array();
	char *text = NULL;
	int rc = cmd ? 0 : -ENOMEM;

	for (size_t i = 0; !rc && i < t->ncommand; i++)
		rc = json_array_append_new(cmd, json_string(t->command[i])) ? -ENOMEM : 0;
	if (!rc)
		rc = run_mcppin_format(t->tools, cmd, &text);
	if (!rc)
		rc = outdir_write(od, name, force ? OUTDIR_REPLACE : OUTDIR_KEEP, 0644, text,
				  strlen(text), NULL, 0);
	if (rc == -EEXIST)
		wd_say(stderr,
		       "warden init: nothing written: %s exists (the pin file of the MCP tools "
		       "init writes beside the policy); keeping it (--force replaces it)",
		       name);
	else if (rc)
		wd_say(stderr, "warden init: cannot write the pin file %s: %s", name,
		       strerror(-rc));
	free(text);
	json_decref(cmd);
	return rc;
}

int cmd_init(int argc, char **argv)
{
	const char *from = NULL, *out = INIT_DEFAULT_OUT;
	char traced[PATH_MAX];
	int cmd = 0;
	const char *creds[INIT_MAX_CREDS + 1] = {0}, *protect[RUN_PROTECT_MAX + 1] = {0};
	char dir[PATH_MAX], base[NAME_MAX + 1], date[32], pin[NAME_MAX + 1] = "";
	struct infer_result res = {0};
	struct wd_buf starter = WD_BUF_INIT;
	const struct wd_buf *text = &starter;
	struct trace t = {0};
	struct run_protect pr;
	struct wd_err err = {0};
	struct outdir od;
	struct outdir_who who;
	struct stat st;
	bool force = false, quiet = false;
	int i, rc, status = WD_EXIT_INTERNAL;
	size_t ncreds;
	const char *const *cs = policy_credential_stores(&ncreds);

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return WD_EXIT_OK;
		}
		if (!strcmp(argv[i], "--force")) {
			force = true;
		} else if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet")) {
			quiet = true;
		} else if ((!strcmp(argv[i], "--from") || !strcmp(argv[i], "-o")) && i + 1 < argc) {
			*(argv[i][1] == 'o' ? &out : &from) = argv[i + 1];
			i++;
		} else if (!strcmp(argv[i], "--")) {
			cmd = i + 1;
			break;
		} else {
			wd_say(stderr, "warden init: unexpected argument '%s'", argv[i]);
			usage(stderr);
			return WD_EXIT_USAGE;
		}
	}
	rc = out_place(out, dir, sizeof(dir), base, sizeof(base));
	if (rc) {
		wd_say(stderr, "warden init: -o %s: its folder: %s", out, strerror(-rc));
		return WD_EXIT_USAGE;
	}
	if (strcmp(out, "-") && !force && !lstat(out, &st)) {
		wd_say(stderr, "warden init: %s exists; keeping it (--force replaces it)", out);
		return WD_EXIT_USAGE;
	}
	/* -o's folder, opened and kept before a traced program can replace it (outdir.h); under
	 * sudo as the invoking user, whose file the policy is */
	outdir_init(&od);
	rc = outdir_who_sudo(&who);
	if (!rc && strcmp(out, "-"))
		rc = outdir_open(&od, dir, false, &who);
	if (rc) {
		wd_say(stderr, "warden init: -o %s: cannot write in %s: %s%s", out, dir,
		       rc == -ELOOP    ? "a symbolic link is on the way"
		       : rc == -EINVAL ? "SUDO_UID or SUDO_GID is not a number"
				       : strerror(-rc),
		       who.drop ? " (the policy is written as the invoking user)" : "");
		return WD_EXIT_USAGE;
	}
	if (cmd) {
		if (from || cmd >= argc) {
			wd_say(stderr, "warden init: %s",
			       from ? "--from TRACE and -- COMMAND: one or the other"
				    : "-- needs a COMMAND");
			usage(stderr);
			status = WD_EXIT_USAGE;
			goto out;
		}
		rc = trace_then(argc - cmd, argv + cmd, !strcmp(out, "-"), quiet, traced,
				sizeof(traced));
		if (rc) {
			status = rc;
			goto out;
		}
		from = traced;
	}
	today(date, sizeof(date));
	if (!from) {
		if (infer_starter(&starter, date))
			goto oom;
	} else {
		rc = trace_load(from, &t, &err);
		if (rc) {
			wd_say(stderr, "warden init: %s", err.msg);
			status = rc == -ENOMEM ? WD_EXIT_INTERNAL : WD_EXIT_USAGE;
			goto out;
		}
		run_protect_init(&pr, run_audit_path(NULL), NULL);
		for (size_t k = 0; k < pr.n; k++)
			protect[k] = pr.v[k].path;
		for (size_t k = 0; k < ncreds && k < INIT_MAX_CREDS; k++)
			creds[k] = cs[k];
		/* an MCP server's tools, pinned beside the policy (not with -o -: no folder) */
		if (json_array_size(t.tools) && strcmp(out, "-") &&
		    pin_name(base, pin, sizeof(pin)))
			pin[0] = '\0';
		struct infer_opts o = {
		    .policy_dir = dir,
		    .home = getenv("HOME"),
		    .cred_stores = creds,
		    .base_dirs = sandbox_base_dirs,
		    .base_files = bwrap_base_etc,
		    .protect = protect,
		    .exists = path_exists,
		    .source = from,
		    .now = date,
		    .pin = pin[0] ? pin : NULL,
		};
		if (infer_policy(&t, &o, &res))
			goto oom;
		text = &res.yaml;
	}
	if (self_check(text, dir, base)) {
		fprintf(stderr,
			"warden init: nothing written (this is a bug in warden init: please "
			"report it with the trace)\n");
		goto out;
	}
	if (!strcmp(out, "-")) {
		status = fwrite(text->data, 1, text->len, stdout) == text->len && !fflush(stdout)
			     ? WD_EXIT_OK
			     : WD_EXIT_INTERNAL;
	} else if (pin[0] && !force && !faccessat(od.dfd, pin, F_OK, AT_SYMLINK_NOFOLLOW)) {
		wd_say(stderr,
		       "warden init: nothing written: %s exists (the pin file of the MCP tools "
		       "init writes beside the policy); keeping it (--force replaces it)",
		       pin);
		status = WD_EXIT_USAGE;
		goto out;
	} else if ((rc = outdir_write(&od, base, force ? OUTDIR_REPLACE : OUTDIR_KEEP, 0644,
				      text->data, text->len, NULL, 0))) {
		if (rc == -ESTALE)
			wd_say(stderr,
			       "warden init: nothing written: the folder %s of %s was replaced or "
			       "moved while the program ran (something now at that path is not the "
			       "folder opened before it started)",
			       dir, out);
		else
			wd_say(stderr, "warden init: cannot write %s: %s", out, strerror(-rc));
		status = rc == -EEXIST ? WD_EXIT_USAGE : WD_EXIT_INTERNAL;
		goto out;
	} else if (pin[0] && (rc = write_pin(&od, pin, &t, force))) {
		/* the policy first, then its pin: a policy whose pin file is missing (or is an
		 * older one) hides and refuses the tools it does not match: fail closed. One this
		 * init made goes again; one --force replaced stays, and the message says so. */
		if (!force)
			unlinkat(od.dfd, base, 0);
		else
			wd_say(
			    stderr,
			    "warden init: %s was written, its pin file %s was not: the run hides "
			    "the tools it cannot match until `warden mcp pin -p %s --accept`",
			    out, pin, out);
		status = rc == -EEXIST ? WD_EXIT_USAGE : WD_EXIT_INTERNAL;
		goto out;
	} else {
		status = WD_EXIT_OK;
	}
	/* one line a warning, each escaped already (init_infer.c's warn()) */
	fputs(wd_buf_cstr(&res.warnings), stderr);
	if (quiet)
		goto out;
	if (from)
		wd_say(stderr,
		       "warden init: %s: %u read grants, %u write grants, %u network rules, "
		       "%u warnings; check it with: warden policy check %s",
		       strcmp(out, "-") ? out : "stdout", res.nread, res.nwrite, res.nallow,
		       res.nwarnings, strcmp(out, "-") ? out : "FILE");
	if (from && pin[0])
		wd_say(stderr, "warden init: %s: the %zu MCP tools it listed, pinned (mcp.pin)",
		       pin, json_array_size(t.tools));
	else if (from && json_array_size(t.tools))
		wd_say(stderr,
		       "warden init: it listed %zu MCP tools; not pinned with -o - (warden mcp pin "
		       "-p FILE --accept pins them)",
		       json_array_size(t.tools));
	else if (strcmp(out, "-"))
		wd_say(stderr, "warden init: wrote the starter policy %s", out);
	goto out;
oom:
	fprintf(stderr, "warden init: out of memory\n");
out:
	outdir_close(&od);
	trace_free(&t);
	infer_result_free(&res);
	wd_buf_free(&starter);
	return status;
}

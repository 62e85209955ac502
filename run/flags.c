/* flags.c - `warden run --allow HOST[:PORT] --read PATH --write PATH` (the quick path, without a
 * policy file): the flags written as a policy document and parsed by the policy's own parser, so
 * that an entry means exactly what the same entry of a policy means; merged over `-p FILE` (the
 * union) and validated with it as one policy; every diagnostic about a flag's entry names the
 * flag. The effective policy, rendered as YAML, is the run's policy text (the gateway's, the
 * audit log's hash, `--print-policy`). docs/policy.md, "Flags", says what a user reads. */
#include "run/internal.h"
#include "run/flags.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const flag_names[] = {
    [RUN_FLAG_ALLOW] = "--allow",
    [RUN_FLAG_READ] = "--read",
    [RUN_FLAG_WRITE] = "--write",
    [RUN_FLAG_ASK] = "--ask",
};

/* the policy list each flag adds to, as the parser names it in its messages */
static const char *const flag_lists[] = {
    [RUN_FLAG_ALLOW] = "network.allow",
    [RUN_FLAG_READ] = "filesystem.read",
    [RUN_FLAG_WRITE] = "filesystem.write",
    [RUN_FLAG_ASK] = "network.ask",
};

const char *run_flag_name(enum run_flag_kind kind)
{
	return (size_t)kind < WD_ARRAY_SIZE(flag_names) ? flag_names[kind] : "--?";
}

/* one entry: "    - " and @arg quoted (a relative path made @cwd's); its line in *@line */
static int put_entry(struct wd_buf *out, const struct run_flag *f, const char *cwd, int *line,
		     int *at)
{
	struct wd_buf path = WD_BUF_INIT;
	const char *s = f->arg;
	int ret;

	if (f->kind != RUN_FLAG_ALLOW && f->kind != RUN_FLAG_ASK && s[0] && s[0] != '/' &&
	    s[0] != '~') {
		/* folded as the validator folds it (a trailing `/`, which says "a folder", kept) */
		ret = wd_buf_printf(&path, "%s/%s", cwd, s);
		if (!ret && !wd_path_fold(path.data, path.data, path.len + 1)) {
			path.len = strlen(path.data);
			if (s[strlen(s) - 1] == '/' && strcmp(path.data, "/"))
				ret = wd_buf_puts(&path, "/");
		}
		if (ret) {
			wd_buf_free(&path);
			return -ENOMEM;
		}
		s = wd_buf_cstr(&path);
	}
	ret = wd_buf_puts(out, "    - ");
	ret |= wd_yaml_quote(out, s);
	ret |= wd_buf_puts(out, "\n");
	wd_buf_free(&path);
	*at = (*line)++;
	return ret ? -ENOMEM : 0;
}

int run_flags_yaml(const struct run_flag *v, size_t n, const char *cwd, struct wd_buf *out,
		   int *ret_line)
{
	static const struct {
		const char *head;
		enum run_flag_kind kind;
	} lists[] = {
	    {"network:\n  allow:\n", RUN_FLAG_ALLOW},
	    {"  ask:\n", RUN_FLAG_ASK},
	    {"filesystem:\n  read:\n", RUN_FLAG_READ},
	    {"  write:\n", RUN_FLAG_WRITE},
	};
	bool fs = false, net = false;
	int line = 2, ret;

	if (!n || !cwd || cwd[0] != '/')
		return -EINVAL;
	ret = wd_buf_puts(out, "version: 1\n");
	for (size_t l = 0; l < WD_ARRAY_SIZE(lists) && !ret; l++) {
		const char *head = lists[l].head;
		bool any = false;

		for (size_t i = 0; i < n; i++)
			any |= v[i].kind == lists[l].kind;
		if (!any)
			continue;
		/* filesystem.write alone needs the `filesystem:` line of its own, network.ask
		 * the `network:` one */
		if (lists[l].kind == RUN_FLAG_WRITE && !fs) {
			ret = wd_buf_puts(out, "filesystem:\n");
			line++;
		}
		if (lists[l].kind == RUN_FLAG_ASK && !net) {
			ret = wd_buf_puts(out, "network:\n");
			line++;
		}
		fs |= lists[l].kind == RUN_FLAG_READ || lists[l].kind == RUN_FLAG_WRITE;
		net |= lists[l].kind == RUN_FLAG_ALLOW;
		for (const char *c = head; *c; c++)
			line += *c == '\n';
		ret = ret ? ret : wd_buf_puts(out, head);
		for (size_t i = 0; i < n && !ret; i++)
			if (v[i].kind == lists[l].kind)
				ret = put_entry(out, &v[i], cwd, &line, &ret_line[i]);
	}
	return ret ? -ENOMEM : 0;
}

int run_flags_which(const int *ret_line, size_t n, int line)
{
	if (!ret_line)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (ret_line[i] == line)
			return (int)i;
	return -1;
}

/* the diagnostics, sorted: one at a line past @offset is the flag's at that line of its own
 * YAML, said as "warden run: --allow ARG: error: ..." (its list's name dropped from the
 * message: the flag says it); the others as the policy's (all of them when @lines is NULL: the
 * file's own parse). Warnings only when @warnings. */
static void say_diags(struct run *r, struct policy_diags *d, int offset, const int *lines,
		      bool warnings)
{
	struct wd_buf line = WD_BUF_INIT;

	policy_diags_sort(d);
	for (size_t i = 0; i < d->n; i++) {
		const struct policy_diag *g = &d->v[i];
		bool err = g->level == POLICY_DIAG_ERROR;
		int k = lines && g->line > offset
			    ? run_flags_which(lines, r->o.nflags, g->line - offset)
			    : -1;
		const char *msg = g->msg, *list;

		if (!err && !warnings)
			continue;
		if (k < 0) {
			wd_buf_reset(&line);
			if (!policy_diag_format(d, i, &line))
				wd_say(stderr, "%s", wd_buf_cstr(&line));
			continue;
		}
		list = flag_lists[r->o.flags[k].kind];
		if (!strncmp(msg, list, strlen(list)) && !strncmp(msg + strlen(list), ": ", 2))
			msg += strlen(list) + 2;
		wd_say(stderr, "warden run: %s %s: %s: %s", run_flag_name(r->o.flags[k].kind),
		       r->o.flags[k].arg[0] ? r->o.flags[k].arg : "''", err ? "error" : "warning",
		       msg);
	}
	wd_buf_free(&line);
}

/* the file's lines: a number past its last one (the flags' entries are shifted past it) */
static int past_last_line(const char *data, size_t len)
{
	int n = 2;

	for (size_t i = 0; i < len; i++)
		n += data[i] == '\n';
	return n;
}

/* -p FILE parsed (not validated) into *@ret; its errors said. Return: 0, or 125 (said). */
static int parse_file(struct run *r, struct policy_diags *d, struct wd_policy **ret,
		      int *ret_offset)
{
	char *data = NULL;
	size_t len = 0;
	int ret_parse;

	ret_parse = wd_read_file(r->o.policy, POLICY_MAX_BYTES, &data, &len);
	if (ret_parse)
		return run_fail(r, "policy", NULL, "%s: %s", r->o.policy, strerror(-ret_parse));
	ret_parse = policy_parse(data, len, r->o.policy, ret, d);
	*ret_offset = past_last_line(data, len);
	free(data);
	if (ret_parse) {
		say_diags(r, d, *ret_offset, NULL, true);
		return run_fail(r, "policy", "correct the policy (warden policy check FILE)",
				"%s is not valid (%s)", r->o.policy, strerror(-ret_parse));
	}
	if (!realpath(r->o.policy, r->input.policy_abs))
		snprintf(r->input.policy_abs, sizeof(r->input.policy_abs), "%s", r->o.policy);
	return 0;
}

/* the flags' own policy, parsed with the policy's parser; its errors said as the flags'.
 * Return: 0, or 125 (said). */
static int parse_flags(struct run *r, int *lines, struct wd_policy **ret)
{
	struct wd_buf yaml = WD_BUF_INIT;
	struct policy_diags d;
	char cwd[PATH_MAX];
	int ret_parse;

	if (!getcwd(cwd, sizeof(cwd)))
		return run_fail(r, "policy", "run warden from a folder that exists",
				"the current folder is unknown (%s): --read and --write paths are "
				"taken from it",
				strerror(errno));
	ret_parse = run_flags_yaml(r->o.flags, r->o.nflags, cwd, &yaml, lines);
	if (ret_parse) {
		wd_buf_free(&yaml);
		return run_fail(r, "policy", NULL, "the flags: %s", strerror(-ret_parse));
	}
	policy_diags_init(&d);
	snprintf(d.file, sizeof(d.file), "warden run");
	ret_parse = policy_parse(yaml.data, yaml.len, "warden run", ret, &d);
	wd_buf_free(&yaml);
	say_diags(r, &d, 0, lines, !r->o.quiet);
	policy_diags_free(&d);
	if (ret_parse)
		return run_fail(r, "policy", "correct the flags (warden run --help)",
				"the --allow/--read/--write flags are not valid (%s)",
				strerror(-ret_parse));
	return 0;
}

int run_flags_policy_load(struct run *r, const struct policy_ctx *ctx)
{
	struct wd_policy *file = NULL, *flags = NULL;
	struct policy_diags d;
	struct wd_buf text = WD_BUF_INIT;
	int *lines, offset = 0, ret;
	size_t n;

	lines = calloc(r->o.nflags ? r->o.nflags : 1, sizeof(*lines));
	if (!lines)
		return run_fail(r, "policy", NULL, "out of memory");
	policy_diags_init(&d);
	snprintf(d.file, sizeof(d.file), "%s", r->o.policy ? r->o.policy : "warden run");
	ret = r->o.policy ? parse_file(r, &d, &file, &offset) : 0;
	if (!ret)
		ret = parse_flags(r, lines, &flags);
	if (ret)
		goto out;
	if (file) {
		ret = policy_merge(file, flags, offset);
		if (ret) {
			ret = run_fail(r, "policy", NULL, "merging the flags: %s", strerror(-ret));
			goto out;
		}
		n = strlen(r->input.policy_abs);
		snprintf(r->input.policy_abs + n, sizeof(r->input.policy_abs) - n, "+flags");
	} else {
		file = flags;
		flags = NULL;
		snprintf(r->input.policy_abs, sizeof(r->input.policy_abs), "(flags)");
	}
	ret = policy_validate(file, ctx, &d);
	say_diags(r, &d, offset, lines, !r->o.quiet);
	if (ret) {
		ret = run_fail(r, "policy", "correct the policy or the flags", "%s not valid (%s)",
			       r->o.policy ? "the policy with the flags is" : "the flags are",
			       strerror(-ret));
		goto out;
	}
	/* the effective policy is the run's text: what the gateway enforces, what is hashed */
	if (policy_render_yaml(file, &text) || !text.data) {
		ret = run_fail(r, "policy", NULL, "out of memory");
		goto out;
	}
	/* the gateway (a daemon's too) parses it again: it must fit what a policy may be */
	if (text.len > POLICY_MAX_BYTES) {
		ret = run_fail(r, "policy", "put fewer rules and grants in the policy",
			       "the policy with the flags is %zu bytes as YAML; the limit is 1 MiB",
			       text.len);
		goto out;
	}
	r->input.policy_len = text.len;
	r->input.policy_text = text.data;
	text = (struct wd_buf)WD_BUF_INIT;
	r->input.pol = file;
	file = NULL;
out:
	wd_buf_free(&text);
	policy_free(file);
	policy_free(flags);
	policy_diags_free(&d);
	free(lines);
	return ret;
}

/* infer.c - a trace in, a least-privilege policy out (the rules: docs/trace.md): the header,
 * the command, the sections in order (infer_files.c, infer_net.c, env and limits here), and
 * the starter policy without a trace. */
#include "trace/infer_internal.h"
#include "policy/policy.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ the rest */

/* names that usually carry a secret: granted, but with a word */
static bool secretish(const char *s)
{
	static const char *const words[] = {"TOKEN", "SECRET",	   "PASSWORD", "PASSWD",
					    "KEY",   "CREDENTIAL", "AUTH"};

	for (size_t i = 0; i < WD_ARRAY_SIZE(words); i++)
		if (strstr(s, words[i]))
			return true;
	return false;
}

/* a name YAML reads as null or a boolean when it is not quoted (`Null`, `yes`, `off`, ...) */
static bool yaml_word(const char *s)
{
	static const char *const words[] = {"null", "true", "false", "yes", "no",
					    "on",   "off",  "y",     "n"};
	char low[8];
	size_t n = strlen(s);

	if (n >= sizeof(low))
		return false;
	for (size_t i = 0; i <= n; i++)
		low[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] - 'A' + 'a' : s[i]);
	for (size_t i = 0; i < WD_ARRAY_SIZE(words); i++)
		if (!strcmp(low, words[i]))
			return true;
	return false;
}

static int emit_env(struct infer_ctx *c, struct wd_buf *b)
{
	const char **v;
	size_t n = 0;
	bool any = false;

	if (!c->t->nenv)
		return 0;
	v = calloc(c->t->nenv, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < c->t->nenv; i++)
		v[n++] = c->t->env[i];
	qsort(v, n, sizeof(*v), infer_cmp_str);
	for (size_t i = 0; i < n && !any; i++)
		any = policy_env_name_ok(v[i]);
	/* none a policy can hold: an empty list, not a key with only comments below it */
	wd_buf_puts(b, any ? "env:\n  allow:\n" : "env:\n  allow: []\n");
	for (size_t i = 0; i < n; i++) {
		if (i && !strcmp(v[i], v[i - 1]))
			continue;
		if (!policy_env_name_ok(v[i])) {
			wd_buf_puts(b, "    # (a variable whose name a policy cannot hold)\n");
			continue;
		}
		wd_buf_puts(b, "    - ");
		if (yaml_word(v[i]))
			infer_yaml_quote(b, v[i]);
		else
			wd_buf_puts(b, v[i]);
		wd_buf_printf(b, "%s\n",
			      secretish(v[i]) ? "   # looks like a secret: keep it only if the "
						"program needs it"
					      : "");
	}
	free(v);
	return 0;
}

uint64_t infer_nice_up(uint64_t v)
{
	uint64_t p = 1;

	if (v <= 1)
		return 1;
	while (p <= UINT64_MAX / 10) {
		if (v <= p)
			return p;
		if (v <= 2 * p)
			return 2 * p;
		if (v <= 5 * p)
			return 5 * p;
		p *= 10;
	}
	return UINT64_MAX;
}

/* A value measured in one short trace, times @mul, rounded up, within [@floor, @cap]. */
static uint64_t limit_from(uint64_t measured, uint64_t mul, uint64_t floor, uint64_t cap)
{
	uint64_t v = infer_nice_up(measured > UINT64_MAX / mul ? UINT64_MAX : measured * mul);

	return v < floor ? floor : v > cap ? cap : v;
}

/*
 * The limits: what one trace measured is a lower bound, not a budget. Its memory peak is
 * sampled (a child that lived between two samples, curl's 11 MiB beside a shell's 2, is never
 * seen), and the same program on a loaded machine or with other input takes longer and more:
 * a limit cut close to one trace kills the program later (SIGKILL, exit 137). So each limit is
 * the measurement times a margin, and never under a floor (INFER_FLOOR_*); the comment keeps
 * what was measured. A program that spoke JSON-RPC on its stdio (an MCP server) gets no
 * timeout at all: it runs as long as its client, which one short trace cannot measure (a
 * server killed 60 s into real use is what issue 27 saw); the comment says so.
 */
static void emit_limits(const struct infer_ctx *c, struct wd_buf *b)
{
	const struct trace *t = c->t;

	if (!t->peak_memory_kib && !t->peak_pids && !t->wall_ms)
		return;
	/* only the comment on the timeout would be left: no `limits:` key with nothing below */
	wd_buf_puts(b, t->peak_memory_kib || t->peak_pids || !t->stdio_jsonrpc ? "limits:\n"
									       : "# limits:\n");
	if (t->peak_memory_kib) {
		uint64_t mib = (t->peak_memory_kib + 1023) / 1024;

		wd_buf_printf(
		    b,
		    "  memory_mb: %llu   # peak %llu MiB seen, times 2, rounded up, at "
		    "least %u\n",
		    (unsigned long long)limit_from(mib, 2, INFER_FLOOR_MEMORY_MB, 1048576),
		    (unsigned long long)mib, INFER_FLOOR_MEMORY_MB);
	}
	if (t->peak_pids)
		wd_buf_printf(
		    b,
		    "  pids: %llu   # %llu processes and threads at most, times 2, at "
		    "least %u\n",
		    (unsigned long long)limit_from(t->peak_pids, 2, INFER_FLOOR_PIDS, 4194304),
		    (unsigned long long)t->peak_pids, INFER_FLOOR_PIDS);
	if (t->stdio_jsonrpc)
		wd_buf_printf(
		    b,
		    "  # timeout_s: none. It spoke JSON-RPC on stdin and stdout (an MCP "
		    "server): it\n  # lives as long as its client, and the trace's %llu.%01llu "
		    "s say nothing of that.\n  # A policy has no timeout when the key is "
		    "absent; set one if you want it.\n",
		    (unsigned long long)(t->wall_ms / 1000),
		    (unsigned long long)(t->wall_ms % 1000 / 100));
	else if (t->wall_ms)
		wd_buf_printf(b,
			      "  timeout_s: %llu   # ran %llu.%01llu s, times 3, rounded up, at "
			      "least %u\n",
			      (unsigned long long)limit_from((t->wall_ms * 3 + 999) / 1000, 1,
							     INFER_FLOOR_TIMEOUT_S, 604800),
			      (unsigned long long)(t->wall_ms / 1000),
			      (unsigned long long)(t->wall_ms % 1000 / 100), INFER_FLOOR_TIMEOUT_S);
}

/*
 * An MCP server's tools: the definitions it listed during the trace are pinned (the pin file,
 * written by warden init beside the policy: run/mcppin.h). A later run hides a tool whose
 * definition changed, or a new one, until a person accepts it with `warden mcp pin --accept`.
 */
static void emit_mcp(const struct trace *t, const struct infer_opts *o, struct wd_buf *b)
{
	size_t n = json_array_size(t->tools);

	if (!n)
		return;
	if (!o->pin) {
		wd_buf_printf(
		    b,
		    "# mcp:\n#   pin: FILE   # it listed %zu MCP tools; pin them with `warden "
		    "mcp pin -p THIS-FILE --accept`\n",
		    n);
		return;
	}
	wd_buf_printf(
	    b,
	    "mcp:\n  # The %zu MCP tools it listed during the trace, pinned: a tool whose "
	    "definition\n  # changes (or a new one) is hidden and refused until `warden "
	    "mcp pin -p THIS-FILE\n  # --accept` (warden-policy(5), mcp.pin).\n  pin: ",
	    n);
	infer_yaml_quote(b, o->pin);
	wd_buf_puts(b, "\n");
}

int infer_policy(const struct trace *t, const struct infer_opts *o, struct infer_result *res)
{
	struct wd_buf *b = &res->yaml;
	struct infer_ctx c;
	int rc;

	memset(res, 0, sizeof(*res));
	if (!o->policy_dir || o->policy_dir[0] != '/')
		return -EINVAL;
	rc = infer_ctx_init(&c, t, o, res);
	if (rc)
		goto out;
	/* the header's comments quote the trace's path, command and folder escaped
	 * (wd_esc()): a control character is no YAML, a bidi control would hide text */
	wd_buf_puts(b, "# Made by `warden init` from ");
	wd_esc_append(b, o->source ? o->source : "a trace", 0);
	wd_buf_printf(b, "%s%s.\n", o->now ? " on " : "", o->now ? o->now : "");
	wd_buf_puts(b, "# The traced command:");
	for (size_t i = 0; i < t->ncommand; i++) {
		wd_buf_puts(b, " ");
		wd_esc_append(b, t->command[i], 0);
	}
	wd_buf_puts(b, "\n# It ran in ");
	wd_esc_append(b, t->cwd, 0);
	wd_buf_puts(b, ". Each entry says what used it; read them before you use this\n# policy "
		       "(its format: warden-policy(5)).\n");
	wd_buf_puts(b, "version: 1\n");
	if (t->ncommand) {
		bool ok = true;

		for (size_t i = 0; i < t->ncommand; i++)
			ok &= infer_printable_utf8(t->command[i]);
		if (ok) {
			wd_buf_puts(b, "command: [");
			for (size_t i = 0; i < t->ncommand; i++) {
				wd_buf_puts(b, i ? ", " : "");
				infer_yaml_quote(b, t->command[i]);
			}
			wd_buf_puts(b, "]\n");
		}
	}
	if ((rc = infer_emit_files(&c, b)) || (rc = infer_emit_network(&c, b)) ||
	    (rc = emit_env(&c, b)))
		goto out;
	emit_limits(&c, b);
	emit_mcp(t, o, b);
	if (!b->data)
		rc = -ENOMEM;
out:
	infer_ctx_free(&c);
	return rc;
}

int infer_starter(struct wd_buf *out, const char *now)
{
	return wd_buf_printf(
	    out,
	    "# A starter policy from `warden init`%s%s. Everything is denied that is not\n"
	    "# granted here; warden-policy(5) has every key. To start from what a program\n"
	    "# really does instead: warden trace -- COMMAND, then warden init --from TRACE.\n"
	    "version: 1\n"
	    "# The program to run when `warden run -p THIS-FILE` is given no command:\n"
	    "# command: [\"node\", \"server.js\"]\n"
	    "filesystem:\n"
	    "  # Folders and files the program may read (relative to this file's folder;\n"
	    "  # the system's /usr, /lib and CA certificates are always there, read-only).\n"
	    "  read:\n"
	    "    - .\n"
	    "  # Folders it may write (they are readable too):\n"
	    "  # write:\n"
	    "  #   - ./out\n"
	    "network:\n"
	    "  # Host names it may reach: a name is ports 80 and 443; \"name:port\" one port;\n"
	    "  # \"*.example.com\" every name below example.com. Nothing else gets out.\n"
	    "  allow: []\n"
	    "  #  - api.github.com\n"
	    "  #  - \"registry.npmjs.org:443\"\n"
	    "# env:\n"
	    "#   allow: [PATH, HOME, LANG]   # variables passed through; the rest are dropped\n"
	    "limits:\n"
	    "  memory_mb: 1024\n"
	    "  pids: 256\n"
	    "  timeout_s: 3600\n",
	    now ? " on " : "", now ? now : "");
}

void infer_result_free(struct infer_result *res)
{
	if (!res)
		return;
	wd_buf_free(&res->yaml);
	wd_buf_free(&res->warnings);
	memset(res, 0, sizeof(*res));
}

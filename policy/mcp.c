/* mcp.c - the policy's `mcp` map (pure: no I/O): what `warden mcp` does with requests to add a
 * name (`allowlist`), which events it shows (`audit_log`), and `tools`, the allow and deny
 * patterns of a wrapped MCP server's tools and `pin`, the file of their accepted definitions,
 * both of which `warden run`'s stdio relay enforces
 * (run/mcpfilter.c), with the decision itself (policy_mcp_tool_allowed()). A part of the parser
 * in parse.c, which calls policy_parse_mcp(). */
#include "policy/policy_internal.h"

#include <stdio.h>
#include <string.h>

enum { MCP_ALLOWLIST, MCP_AUDIT_LOG, MCP_TOOLS, MCP_PIN, MCP_EXPLAIN, MCP_N };
static const char *const mcp_keys[MCP_N] = {"allowlist", "audit_log", "tools", "pin",
					    "explain_denials"};
enum { TOOLS_ALLOW, TOOLS_DENY, TOOLS_N };
static const char *const tools_keys[TOOLS_N] = {"allow", "deny"};

/* what is wrong with a tool pattern, or NULL */
static const char *pat_problem(const char *s)
{
	size_t n = strlen(s);

	if (n > POLICY_TOOL_PAT_MAX)
		return "is longer than 128 bytes (MCP tool names are 1 to 128 characters)";
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x21 || (unsigned char)s[i] > 0x7e)
			return "has a character that is not printable ASCII (a space, a control "
			       "character or a non-ASCII byte); tool names are letters, digits, "
			       "`_`, `-`, `.` and the like, and `*` matches any run of them";
	return NULL;
}

/* one list of mcp.tools (@what: "mcp.tools.allow") into @ret / @ret_n */
static void parse_pats(struct pctx *c, const struct policy_yt_node *n, const char *what,
		       struct policy_tool_pat **ret, size_t *ret_n)
{
	struct policy_tool_pat *v;
	size_t k = 0;

	if (policy_yt_want_seq(c->d, n, what))
		return;
	v = pctx_calloc(c, n->nkids, sizeof(*v));
	if (!v)
		return;
	for (size_t i = 0; i < n->nkids; i++) {
		const struct policy_yt_node *item = n->kids[i];
		const char *s = policy_yt_str(c->d, item, what), *bad;
		bool dup = false;

		if (!s)
			continue;
		bad = pat_problem(s);
		if (bad) {
			policy_diag_err(c->d, item, "%s: `%.64s` %s", what, s, bad);
			continue;
		}
		for (size_t j = 0; j < k; j++)
			dup |= !strcmp(v[j].pat, s);
		if (dup) {
			policy_diag_warn(c->d, item, "%s: `%s` is listed twice", what, s);
			continue;
		}
		v[k].pat = pctx_strdup(c, s);
		v[k++].line = item->line;
	}
	*ret = v;
	*ret_n = k;
}

/* mcp.tools: { allow: [PATTERN...], deny: [PATTERN...] } */
static void parse_tools(struct pctx *c, const struct policy_yt_node *n)
{
	const struct policy_yt_node *v[TOOLS_N];

	if (policy_yt_map_keys(c->d, n, "`mcp.tools`", tools_keys, TOOLS_N, v))
		return;
	if (v[TOOLS_ALLOW]) {
		c->p->has_tools_allow = true;
		parse_pats(c, v[TOOLS_ALLOW], "mcp.tools.allow", &c->p->tools_allow,
			   &c->p->ntools_allow);
	}
	if (v[TOOLS_DENY])
		parse_pats(c, v[TOOLS_DENY], "mcp.tools.deny", &c->p->tools_deny,
			   &c->p->ntools_deny);
}

/* mcp: { allowlist: approval | locked, audit_log: session | all, tools: {...} } */
void policy_parse_mcp(struct pctx *c, const struct policy_yt_node *n)
{
	const struct policy_yt_node *v[MCP_N];
	const char *s;

	if (policy_yt_map_keys(c->d, n, "`mcp`", mcp_keys, MCP_N, v))
		return;
	s = v[MCP_ALLOWLIST] ? policy_yt_str(c->d, v[MCP_ALLOWLIST], "mcp.allowlist") : NULL;
	if (s && !strcmp(s, "locked"))
		c->p->mcp_allowlist_locked = true;
	else if (s && strcmp(s, "approval"))
		policy_diag_err(
		    c->d, v[MCP_ALLOWLIST],
		    "mcp.allowlist: `%s` is not a mode; expected `approval` (additions wait "
		    "for a person) or `locked` (additions are refused)",
		    s);
	s = v[MCP_AUDIT_LOG] ? policy_yt_str(c->d, v[MCP_AUDIT_LOG], "mcp.audit_log") : NULL;
	if (s && !strcmp(s, "all"))
		c->p->mcp_audit_log_all = true;
	else if (s && strcmp(s, "session"))
		policy_diag_err(
		    c->d, v[MCP_AUDIT_LOG],
		    "mcp.audit_log: `%s` is not a scope; expected `session` (the events of "
		    "this server's runs) or `all` (the whole audit log)",
		    s);
	if (v[MCP_TOOLS])
		parse_tools(c, v[MCP_TOOLS]);
	if (v[MCP_EXPLAIN])
		policy_yt_bool(c->d, v[MCP_EXPLAIN], "mcp.explain_denials", &c->p->mcp_explain);
	s = v[MCP_PIN] ? policy_yt_str(c->d, v[MCP_PIN], "mcp.pin") : NULL;
	if (s) {
		c->p->mcp_pin = pctx_strdup(c, s);
		c->p->mcp_pin_line = v[MCP_PIN]->line;
	}
}

bool policy_mcp_tools_on(const struct wd_policy *p)
{
	return p && (p->has_tools_allow || p->ntools_deny || p->mcp_pin);
}

/* @name matches @pat, where `*` matches any run of bytes (iterative, with one backtrack point:
 * linear in practice, never exponential) */
static bool glob(const char *pat, const char *name)
{
	const char *star = NULL, *mark = NULL;

	while (*name) {
		if (*pat == '*') {
			star = pat++;
			mark = name;
		} else if (*pat == *name) {
			pat++;
			name++;
		} else if (star) {
			pat = star + 1;
			name = ++mark;
		} else {
			return false;
		}
	}
	while (*pat == '*')
		pat++;
	return !*pat;
}

static const struct policy_tool_pat *find(const struct policy_tool_pat *v, size_t n,
					  const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (glob(v[i].pat, name))
			return &v[i];
	return NULL;
}

bool policy_mcp_tool_allowed(const struct wd_policy *p, const char *name, char *rule, size_t size)
{
	const struct policy_tool_pat *m;
	char dummy[8];

	if (!rule) {
		rule = dummy;
		size = sizeof(dummy);
	}
	snprintf(rule, size, "%s", "");
	if (!policy_mcp_tools_on(p))
		return true;
	if (!name || !*name) {
		snprintf(rule, size, "mcp.tools: a tools/call without a tool name");
		return false;
	}
	m = find(p->tools_deny, p->ntools_deny, name);
	if (m) {
		snprintf(rule, size, "mcp.tools.deny: `%s` (line %d)", m->pat, m->line);
		return false;
	}
	if (!p->has_tools_allow)
		return true;
	m = find(p->tools_allow, p->ntools_allow, name);
	if (m) {
		snprintf(rule, size, "mcp.tools.allow: `%s` (line %d)", m->pat, m->line);
		return true;
	}
	snprintf(rule, size, "mcp.tools.allow: no pattern matches");
	return false;
}

/* mcp.c - the policy's `mcp` map (pure: no I/O): what `warden mcp` does with requests to add a
 * name (`allowlist`), which events it shows (`audit_log`), and `tools`, the allow and deny
 * patterns of a wrapped MCP server's tools and `pin`, the file of their accepted definitions,
 * both of which `warden run`'s stdio relay enforces
 * (run/mcpfilter.c), with the decision itself (policy_mcp_tool_allowed()), and a tool's own
 * network rules (`mcp.tools.NAME.network`, which the gateway applies while a call of the tool
 * is in flight: gateway/decide.c). A part of the parser in parse.c, which calls
 * policy_parse_mcp(). */
#include "policy/policy_internal.h"

#include <errno.h>
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

enum { TOOL_NETWORK, TOOL_N };
static const char *const tool_keys[TOOL_N] = {"network"};

/* what is wrong with the name of a tool with rules of its own, or NULL */
static const char *tool_name_problem(const char *s)
{
	const char *bad = pat_problem(s);

	if (bad)
		return bad;
	if (strchr(s, '*'))
		return "has a `*`; a tool's own rules name one tool exactly";
	return NULL;
}

/* mcp.tools.NAME: { network: [RULE...] } (@key: NAME's node) into a new c->p->tool_net entry */
static void parse_tool_net(struct pctx *c, const struct policy_yt_node *key,
			   const struct policy_yt_node *n)
{
	const struct policy_yt_node *v[TOOL_N];
	struct policy_tool_net *t;
	char where[POLICY_TOOL_PAT_MAX + 32];
	const char *bad = tool_name_problem(key->str);
	struct pctx sub = {.d = c->d};

	if (bad) {
		policy_diag_err(c->d, key, "mcp.tools: the tool name `%.64s` %s", key->str, bad);
		return;
	}
	if (policy_tool_net_find(c->p, key->str) >= 0) {
		policy_diag_err(c->d, key, "mcp.tools: the tool `%s` is given twice", key->str);
		return;
	}
	if (c->p->ntool_net >= POLICY_TOOL_NET_MAX) {
		policy_diag_err(c->d, key,
				"mcp.tools: more than %d tools with rules of their own; put the "
				"names every tool needs in network.allow",
				POLICY_TOOL_NET_MAX);
		return;
	}
	snprintf(where, sizeof(where), "mcp.tools.%s", key->str);
	if (policy_yt_map_keys(c->d, n, where, tool_keys, TOOL_N, v))
		return;
	t = &c->p->tool_net[c->p->ntool_net];
	t->line = key->line;
	t->col = key->col;
	t->tool = pctx_strdup(c, key->str);
	t->net = pctx_calloc(c, 1, sizeof(*t->net));
	c->p->ntool_net++;
	if (!t->tool || !t->net)
		return;
	t->net->version = POLICY_VERSION;
	t->net->file = pctx_strdup(c, c->p->file ? c->p->file : "policy");
	if (!v[TOOL_NETWORK]) {
		policy_diag_err(c->d, n, "%s: has no `network`; expected network: [RULE, ...]",
				where);
		return;
	}
	snprintf(where, sizeof(where), "mcp.tools.%s.network", key->str);
	sub.p = t->net;
	policy_parse_rules(&sub, v[TOOL_NETWORK], where);
	c->oom |= sub.oom;
	for (size_t i = 0; i < t->net->nrules; i++)
		if (t->net->rules[i].proto == POLICY_PROTO_UDP)
			policy_diag_add(
			    c->d, POLICY_DIAG_ERROR, t->net->rules[i].line, t->net->rules[i].col,
			    "%s: `%s`: a tool's own rules allow connections only; allow "
			    "udp with a network.allow rule",
			    where, t->net->rules[i].text);
}

/*
 * mcp.tools: { allow: [PATTERN...], deny: [PATTERN...], NAME: { network: [RULE...] }, ... }
 * A key whose value is a mapping is a tool with rules of its own, whatever its name (a tool
 * named `allow` or `deny` too); `allow` and `deny` with any other value are the pattern lists;
 * any other key must have a mapping.
 */
static void parse_tools(struct pctx *c, const struct policy_yt_node *n)
{
	const struct policy_yt_node *v[TOOLS_N] = {NULL, NULL};

	if (n->type != POLICY_YT_MAP) {
		char what[64];

		policy_yt_describe(n, what, sizeof(what));
		policy_diag_err(c->d, n,
				"`mcp.tools`: found %s; expected a mapping (allow: [...], deny: "
				"[...], TOOL: { network: [...] })",
				what);
		return;
	}
	c->p->tool_net = pctx_calloc(c, n->nkids / 2, sizeof(*c->p->tool_net));
	if (!c->p->tool_net)
		return;
	for (size_t i = 0; i + 1 < n->nkids; i += 2) {
		const struct policy_yt_node *key = n->kids[i], *val = n->kids[i + 1];
		int k = -1;

		if (key->type != POLICY_YT_SCALAR || !key->len) {
			policy_diag_err(c->d, key,
					"`mcp.tools`: a key must be a tool name, "
					"`allow` or `deny`");
			continue;
		}
		if (val->type == POLICY_YT_MAP) {
			parse_tool_net(c, key, val);
			continue;
		}
		for (int j = 0; j < TOOLS_N; j++)
			if (!strcmp(key->str, tools_keys[j]))
				k = j;
		if (k < 0) {
			const char *near = wd_levenshtein(key->str, "allow") <= 2  ? "allow"
					   : wd_levenshtein(key->str, "deny") <= 2 ? "deny"
										   : NULL;

			if (near)
				policy_diag_err(c->d, key,
						"unknown key `%.64s` in `mcp.tools`; did you mean "
						"`%s`?",
						key->str, near);
			else
				policy_diag_err(c->d, key,
						"`mcp.tools`: `%.64s` is not `allow` or `deny`; a "
						"tool with rules of its own is a mapping: %.64s: { "
						"network: [...] }",
						key->str, key->str);
			continue;
		}
		if (v[k]) {
			policy_diag_err(c->d, key, "`mcp.tools`: `%s` is given twice", key->str);
			continue;
		}
		v[k] = val;
	}
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

int policy_tool_net_find(const struct wd_policy *p, const char *tool)
{
	for (size_t i = 0; p && tool && i < p->ntool_net; i++)
		if (p->tool_net[i].tool && !strcmp(p->tool_net[i].tool, tool))
			return (int)i;
	return -ENOENT;
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

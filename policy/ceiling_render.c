/* ceiling_render.c - the ceiling written back as YAML with every `from` (a config handed on
 * keeps citing the operator's file), and an effective policy written for a person (`warden
 * policy check --ceiling`). */
#include "policy/policy_internal.h"

#include <errno.h>
#include <stdio.h>

/* ------------------------------------------------------------ render */

static int render_rule(struct wd_buf *out, const char *indent, const struct policy_rule *r,
		       bool ports)
{
	int ret = 0;

	ret |=
	    wd_buf_printf(out, "%s- { %s: ", indent, r->kind == POLICY_RULE_CIDR ? "cidr" : "host");
	if (r->kind == POLICY_RULE_CIDR) {
		char cidr[64];

		wd_cidr_format(r->family, r->addr, r->prefix, cidr, sizeof(cidr));
		ret |= wd_yaml_quote(out, cidr);
	} else {
		char h[300];

		snprintf(h, sizeof(h), "%s%s", r->kind == POLICY_RULE_WILDCARD ? "*." : "",
			 r->host);
		ret |= wd_yaml_quote(out, h);
	}
	if (ports) {
		ret |= wd_buf_puts(out, ", ports: [");
		for (size_t i = 0; i < r->nports; i++)
			ret |= wd_buf_printf(out, "%s%u", i ? ", " : "", r->ports[i]);
		ret |= wd_buf_puts(out, "]");
		if (r->proto == POLICY_PROTO_UDP)
			ret |= wd_buf_puts(out, ", proto: udp");
	}
	ret |= wd_buf_puts(out, ", from: ");
	ret |= wd_yaml_quote(out, r->from ? r->from : "");
	ret |= wd_buf_puts(out, " }\n");
	return ret;
}

static int render_scope(const struct policy_ceil_scope *s, const char *ind, struct wd_buf *out)
{
	char sub[16];
	int ret = 0;

	snprintf(sub, sizeof(sub), "%s  ", ind);
	ret |= wd_buf_printf(out, "%sfrom: ", ind);
	ret |= wd_yaml_quote(out, s->from ? s->from : "");
	ret |= wd_buf_puts(out, "\n");
	if (s->has_allow && s->allow_any) {
		ret |= wd_buf_printf(out, "%sallow: any\n", ind);
	} else if (s->has_allow) {
		ret |= wd_buf_printf(out, "%sallow:%s\n", ind, s->nallow ? "" : " []");
		for (size_t i = 0; i < s->nallow; i++)
			ret |= render_rule(out, sub, &s->allow[i], true);
	}
	if (s->ndeny) {
		ret |= wd_buf_printf(out, "%sdeny:\n", ind);
		for (size_t i = 0; i < s->ndeny; i++)
			ret |= render_rule(out, sub, &s->deny[i], false);
	}
	for (int i = 0, first = 1; i < POLICY_CAP_N; i++) {
		if (!s->caps[i])
			continue;
		if (first)
			ret |= wd_buf_printf(out, "%slimits:\n", ind);
		first = 0;
		ret |= wd_buf_printf(out, "%s%s: { max: %llu, from: ", sub, policy_cap_name(i),
				     (unsigned long long)s->caps[i]);
		ret |= wd_yaml_quote(out, s->caps_from[i] ? s->caps_from[i] : "");
		ret |= wd_buf_puts(out, " }\n");
	}
	return ret;
}

int policy_ceiling_render(const struct policy_ceiling *c, struct wd_buf *out)
{
	int ret = 0;

	if (!c)
		return 0;
	ret |= wd_buf_puts(out, "ceiling:\n");
	ret |= render_scope(&c->top, "  ", out);
	for (int g = 0; g < 2; g++) {
		const struct policy_ceil_scope *v = g ? c->groups : c->users;
		size_t n = g ? c->ngroups : c->nusers;

		if (!n)
			continue;
		ret |= wd_buf_printf(out, "  %s:\n", g ? "groups" : "users");
		for (size_t i = 0; i < n; i++) {
			ret |= wd_buf_printf(out, "    \"%s\":\n", v[i].name);
			ret |= render_scope(&v[i], "      ", out);
		}
	}
	return ret ? -ENOMEM : 0;
}

/* @p's rules as YAML items after @indent, each with the ceiling rule it is within */
static int effective_rules(const struct wd_policy *p, const char *indent, struct wd_buf *out)
{
	int ret = 0;

	for (size_t i = 0; i < p->nrules; i++) {
		ret |= wd_buf_printf(out, "%s- ", indent);
		ret |= wd_yaml_quote(out, p->rules[i].text ? p->rules[i].text : "");
		if (p->rules[i].from)
			ret |= wd_buf_printf(out, "  # within the ceiling's rule at %s",
					     p->rules[i].from);
		ret |= wd_buf_puts(out, "\n");
	}
	return ret;
}

/* mcp.tools.NAME.network of an effective policy: each tool's rules within the ceiling, and what
 * the ceiling changed in them */
static int effective_tools(const struct wd_policy *p, struct wd_buf *out)
{
	int ret = 0;

	if (!p->ntool_net)
		return 0;
	ret |= wd_buf_puts(out, "mcp:\n  tools:\n");
	for (size_t i = 0; i < p->ntool_net; i++) {
		const struct wd_policy *n = p->tool_net[i].net;

		ret |= wd_buf_puts(out, "    ");
		ret |= wd_yaml_quote(out, p->tool_net[i].tool);
		ret |= wd_buf_printf(out, ":\n      network:%s\n", n && n->nrules ? "" : " []");
		if (!n)
			continue;
		ret |= effective_rules(n, "        ", out);
		for (size_t k = 0; k < n->nnarrowed; k++)
			ret |= wd_buf_printf(out, "      #   %s:%d:%d: %s\n", p->file,
					     n->narrowed[k].line, n->narrowed[k].col,
					     n->narrowed[k].msg);
	}
	return ret;
}

int policy_render_effective(const struct wd_policy *p, struct wd_buf *out)
{
	int ret = 0;

	ret |= wd_buf_printf(out, "# the effective policy of %s under the host's ceiling\n",
			     p->file ? p->file : "the policy");
	ret |= wd_buf_printf(out, "network:\n  allow:%s\n", p->nrules ? "" : " []");
	ret |= effective_rules(p, "    ", out);
	if (p->denied && p->denied->nrules) {
		ret |= wd_buf_puts(out, "  # denied by the ceiling, on every port:\n");
		for (size_t i = 0; i < p->denied->nrules; i++)
			ret |= wd_buf_printf(out, "  #   %s  (%s)\n", p->denied->rules[i].text,
					     p->denied->rules[i].from);
	}
	if (p->ceiling_allow)
		ret |= wd_buf_printf(out, "  # the ceiling's allow list in force: %s\n",
				     p->ceiling_from ? p->ceiling_from : "?");
	else
		ret |= wd_buf_printf(out, "  # the ceiling's allow list in force: any (%s)\n",
				     p->ceiling_from ? p->ceiling_from : "?");
	ret |= effective_tools(p, out);
	if (p->limits.memory_mb || p->limits.pids || p->limits.timeout_s) {
		ret |= wd_buf_puts(out, "limits:\n");
		if (p->limits.memory_mb)
			ret |= wd_buf_printf(out, "  memory_mb: %llu\n",
					     (unsigned long long)p->limits.memory_mb);
		if (p->limits.pids)
			ret |= wd_buf_printf(out, "  pids: %u\n", p->limits.pids);
		if (p->limits.timeout_s)
			ret |= wd_buf_printf(out, "  timeout_s: %u\n", p->limits.timeout_s);
	}
	for (int i = 0, first = 1; i < POLICY_CAP_N; i++) {
		if (!p->caps[i])
			continue;
		if (first)
			ret |= wd_buf_puts(out, "# per-user caps in force:\n");
		first = 0;
		ret |= wd_buf_printf(out, "#   %s: %llu  (%s)\n", policy_cap_name(i),
				     (unsigned long long)p->caps[i], p->caps_from[i]);
	}
	if (p->nnarrowed)
		ret |= wd_buf_puts(out, "# what the ceiling changed:\n");
	for (size_t i = 0; i < p->nnarrowed; i++) {
		if (p->narrowed[i].line)
			ret |=
			    wd_buf_printf(out, "#   %s:%d:%d: %s\n", p->file, p->narrowed[i].line,
					  p->narrowed[i].col, p->narrowed[i].msg);
		else
			ret |= wd_buf_printf(out, "#   %s\n", p->narrowed[i].msg);
	}
	return ret ? -ENOMEM : 0;
}

/* render.c - the normalised policy as YAML (re-parseable, deterministic) and
 * as JSON (written by hand: this module does not link a JSON library). */
#include "policy/policy_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int policy_json_string(struct wd_buf *out, const char *s)
{
	return wd_yaml_quote(out, s);
}

static int put_cpu(struct wd_buf *out, uint32_t milli)
{
	char frac[8];
	size_t n;

	if (milli % 1000 == 0)
		return wd_buf_printf(out, "%u", milli / 1000);
	snprintf(frac, sizeof(frac), "%03u", milli % 1000);
	for (n = strlen(frac); n > 0 && frac[n - 1] == '0'; n--)
		frac[n - 1] = '\0';
	return wd_buf_printf(out, "%u.%s", milli / 1000, frac);
}

static const char *grant_path(const struct policy_grant *g)
{
	return g->real ? g->real : g->path;
}

/* a grant's type as rendered: the written one, else what a missing grant is made as (the real
 * path has lost a trailing `/`, so the rendered policy says it); NULL: none */
static const char *grant_type(const struct policy_grant *g)
{
	if (g->type == POLICY_GRANT_FILE ||
	    (g->type == POLICY_GRANT_ANY && g->missing && g->make_file))
		return "file";
	if (g->type == POLICY_GRANT_DIR || (g->type == POLICY_GRANT_ANY && g->missing))
		return "dir";
	return NULL;
}

static int yaml_grants(struct wd_buf *out, const char *key, const struct policy_grant *g, size_t n)
{
	int ret = wd_buf_printf(out, "  %s:%s\n", key, n ? "" : " []");

	for (size_t i = 0; i < n && !ret; i++) {
		const char *type = grant_type(&g[i]);
		bool map = g[i].sensitive || type;

		ret |= wd_buf_puts(out, map ? "    - { path: " : "    - ");
		ret |= wd_yaml_quote(out, grant_path(&g[i]));
		if (g[i].sensitive)
			ret |= wd_buf_puts(out, ", sensitive: true");
		if (type)
			ret |= wd_buf_printf(out, ", type: %s", type);
		ret |= wd_buf_puts(out, map ? " }\n" : "\n");
	}
	return ret;
}

static int yaml_ports(struct wd_buf *out, const struct policy_rule *r)
{
	int ret = wd_buf_puts(out, ", ports: [");

	for (size_t i = 0; i < r->nports; i++)
		ret |= wd_buf_printf(out, "%s%u", i ? ", " : "", r->ports[i]);
	if (r->proto == POLICY_PROTO_UDP)
		ret |= wd_buf_puts(out, "], proto: udp }");
	else
		ret |= wd_buf_puts(out, "] }");
	return ret;
}

/* one network rule as a YAML sequence item, after @indent */
static int yaml_rule(struct wd_buf *out, const char *indent, const struct policy_rule *r)
{
	char cidr[64];
	int ret = 0;

	if (r->kind == POLICY_RULE_CIDR) {
		ret |= wd_cidr_format(r->family, r->addr, r->prefix, cidr, sizeof(cidr));
		ret |= wd_buf_printf(out, "%s- { cidr: \"%s\"", indent, cidr);
	} else {
		ret |= wd_buf_printf(out, "%s- { host: \"%s%s\"", indent,
				     r->kind == POLICY_RULE_WILDCARD ? "*." : "", r->host);
	}
	ret |= yaml_ports(out, r);
	return ret | wd_buf_puts(out, "\n");
}

/* mcp.tools.NAME: { network: [...] } of every tool with rules of its own, under `  tools:` */
static int yaml_tool_nets(struct wd_buf *out, const struct wd_policy *p)
{
	int ret = 0;

	for (size_t i = 0; i < p->ntool_net; i++) {
		const struct wd_policy *net = p->tool_net[i].net;

		ret |= wd_buf_puts(out, "    ");
		ret |= wd_yaml_quote(out, p->tool_net[i].tool);
		ret |= wd_buf_printf(out, ":\n      network:%s\n", net && net->nrules ? "" : " []");
		for (size_t k = 0; net && k < net->nrules; k++)
			ret |= yaml_rule(out, "        ", &net->rules[k]);
	}
	return ret;
}

/* one list of mcp.tools as a YAML line under `  tools:` */
static int yaml_tool_pats(struct wd_buf *out, const char *key, const struct policy_tool_pat *v,
			  size_t n)
{
	int ret = wd_buf_printf(out, "    %s: [", key);

	for (size_t i = 0; i < n; i++) {
		ret |= wd_buf_puts(out, i ? ", " : "");
		ret |= wd_yaml_quote(out, v[i].pat);
	}
	return ret | wd_buf_puts(out, "]\n");
}

/* `mcp` as a JSON member after others: ,"mcp":{...} */
static int json_mcp(struct wd_buf *out, const struct wd_policy *p)
{
	const char *sep = "";
	int ret = wd_buf_puts(out, ",\"mcp\":{");

	if (p->mcp_allowlist_locked) {
		ret |= wd_buf_puts(out, "\"allowlist\":\"locked\"");
		sep = ",";
	}
	if (p->mcp_audit_log_all) {
		ret |= wd_buf_printf(out, "%s\"audit_log\":\"all\"", sep);
		sep = ",";
	}
	if (p->mcp_explain) {
		ret |= wd_buf_printf(out, "%s\"explain_denials\":true", sep);
		sep = ",";
	}
	if (p->mcp_pin) {
		ret |= wd_buf_printf(out, "%s\"pin\":", sep);
		ret |= wd_yaml_quote(out, p->mcp_pin);
		sep = ",";
	}
	if (p->has_tools_allow || p->ntools_deny || p->ntool_net) {
		const struct {
			const char *key;
			const struct policy_tool_pat *v;
			size_t n;
			bool on;
		} l[2] = {{"allow", p->tools_allow, p->ntools_allow, p->has_tools_allow},
			  {"deny", p->tools_deny, p->ntools_deny, p->ntools_deny > 0}};
		const char *s2 = "";

		ret |= wd_buf_printf(out, "%s\"tools\":{", sep);
		for (int k = 0; k < 2; k++) {
			if (!l[k].on)
				continue;
			ret |= wd_buf_printf(out, "%s\"%s\":[", s2, l[k].key);
			for (size_t i = 0; i < l[k].n; i++) {
				ret |= wd_buf_puts(out, i ? "," : "");
				ret |= wd_yaml_quote(out, l[k].v[i].pat);
			}
			ret |= wd_buf_puts(out, "]");
			s2 = ",";
		}
		/* each tool's own rules under "network" (a tool may be named "allow") */
		if (p->ntool_net)
			ret |= wd_buf_printf(out, "%s\"network\":{", s2);
		for (size_t i = 0; i < p->ntool_net; i++) {
			const struct wd_policy *net = p->tool_net[i].net;

			ret |= wd_buf_puts(out, i ? "," : "");
			ret |= wd_yaml_quote(out, p->tool_net[i].tool);
			ret |= wd_buf_puts(out, ":[");
			for (size_t k = 0; net && k < net->nrules; k++) {
				ret |= wd_buf_puts(out, k ? "," : "");
				ret |= wd_yaml_quote(out,
						     net->rules[k].text ? net->rules[k].text : "");
			}
			ret |= wd_buf_puts(out, "]");
		}
		ret |= wd_buf_puts(out, p->ntool_net ? "}}" : "}");
	}
	return ret | wd_buf_puts(out, "}");
}

/* sandbox.backend and sandbox.fallback, when set (YAML lines, or JSON members after others) */
static int put_backends(struct wd_buf *out, const struct wd_policy *p, bool json)
{
	int ret = 0;
	bool first = true;

	if (p->sandbox_backend) {
		ret |= wd_buf_puts(out, json ? ",\"backend\":" : "  backend: ");
		ret |= wd_yaml_quote(out, policy_backend_name(p->sandbox_backend));
		ret |= wd_buf_puts(out, json ? "" : "\n");
	}
	if (p->docker_image && json) {
		ret |= wd_buf_puts(out, ",\"docker\":{\"image\":");
		ret |= policy_json_string(out, p->docker_image);
		ret |= wd_buf_puts(out, "}");
	} else if (p->docker_image) {
		ret |= wd_buf_puts(out, "  docker:\n    image: ");
		ret |= wd_yaml_quote(out, p->docker_image);
		ret |= wd_buf_puts(out, "\n");
	}
	if (!p->sandbox_fallback)
		return ret;
	ret |= wd_buf_puts(out, json ? ",\"fallback\":[" : "  fallback: [");
	for (unsigned b = 1; b < POLICY_BACKEND_N; b++) {
		if (!(p->sandbox_fallback & (1u << b)))
			continue;
		ret |= wd_buf_puts(out, first ? "" : json ? "," : ", ");
		ret |= wd_yaml_quote(out, policy_backend_name(b));
		first = false;
	}
	ret |= wd_buf_puts(out, json ? "]" : "]\n");
	return ret;
}

static int yaml_backends(struct wd_buf *out, const struct wd_policy *p)
{
	return put_backends(out, p, false);
}

/* network.ask and network.ask_timeout (after network.allow, or with a `network:` of their own) */
static int yaml_ask(struct wd_buf *out, const struct wd_policy *p)
{
	int ret = 0;

	if (!(p->ask && p->ask->nrules) && !p->ask_any && !p->ask_timeout_s)
		return 0;
	if (!p->rules)
		ret |= wd_buf_puts(out, "network:\n");
	if ((p->ask && p->ask->nrules) || p->ask_any) {
		ret |= wd_buf_puts(out, "  ask:\n");
		if (p->ask_any)
			ret |= wd_buf_puts(out, "    - \"*\"\n");
		for (size_t i = 0; p->ask && i < p->ask->nrules; i++) {
			const struct policy_rule *r = &p->ask->rules[i];

			ret |= wd_buf_printf(out, "    - { host: \"%s%s\"",
					     r->kind == POLICY_RULE_WILDCARD ? "*." : "", r->host);
			ret |= yaml_ports(out, r);
			ret |= wd_buf_puts(out, "\n");
		}
	}
	if (p->ask_timeout_s)
		ret |= wd_buf_printf(out, "  ask_timeout: %u\n", p->ask_timeout_s);
	return ret;
}

/* network.ask in JSON: ,"ask":[{"host","ports","text"}...],"ask_any","ask_timeout" (only
 * when the policy has one: the keys of a policy without asks stay as they were) */
static int json_ask(struct wd_buf *out, const struct wd_policy *p)
{
	int ret = 0;

	if (!(p->ask && p->ask->nrules) && !p->ask_any && !p->ask_timeout_s)
		return 0;
	ret |= wd_buf_puts(out, ",\"ask\":[");
	for (size_t i = 0; p->ask && i < p->ask->nrules; i++) {
		const struct policy_rule *r = &p->ask->rules[i];

		ret |= wd_buf_printf(out, "%s{\"host\":\"%s%s\",\"ports\":[", i ? "," : "",
				     r->kind == POLICY_RULE_WILDCARD ? "*." : "", r->host);
		for (size_t k = 0; k < r->nports; k++)
			ret |= wd_buf_printf(out, "%s%u", k ? "," : "", r->ports[k]);
		ret |= wd_buf_puts(out, "],\"text\":");
		ret |= wd_yaml_quote(out, r->text ? r->text : "");
		ret |= wd_buf_puts(out, "}");
	}
	ret |= wd_buf_printf(out, "],\"ask_any\":%s,\"ask_timeout\":%u",
			     p->ask_any ? "true" : "false", policy_ask_timeout_s(p));
	return ret;
}

int policy_render_yaml(const struct wd_policy *p, struct wd_buf *out)
{
	int ret = 0;

	ret |= wd_buf_printf(out, "version: %d\n", p->version);
	if (p->ncommand) {
		ret |= wd_buf_puts(out, "command: [");
		for (size_t i = 0; i < p->ncommand; i++) {
			ret |= wd_buf_puts(out, i ? ", " : "");
			ret |= wd_yaml_quote(out, p->command[i]);
		}
		ret |= wd_buf_puts(out, "]\n");
	}
	if (p->nread || p->nwrite) {
		ret |= wd_buf_puts(out, "filesystem:\n");
		ret |= yaml_grants(out, "read", p->read, p->nread);
		ret |= yaml_grants(out, "write", p->write, p->nwrite);
		for (size_t i = 0; i < p->nmask; i++) {
			ret |= wd_buf_puts(out, "  # masked (credential store inside a grant): ");
			ret |= wd_yaml_quote(out, p->mask[i]);
			ret |= wd_buf_puts(out, "\n");
		}
	}
	if (p->rules) {
		ret |= wd_buf_printf(out, "network:\n  allow:%s\n", p->nrules ? "" : " []");
		for (size_t i = 0; i < p->nrules; i++)
			ret |= yaml_rule(out, "    ", &p->rules[i]);
	}
	ret |= yaml_ask(out, p);
	if (p->env_allow || p->env_set) {
		ret |= wd_buf_puts(out, "env:\n");
		if (p->env_allow) {
			ret |= wd_buf_printf(out, "  allow: [");
			for (size_t i = 0; i < p->nenv_allow; i++) {
				ret |= wd_buf_puts(out, i ? ", " : "");
				ret |= wd_yaml_quote(out, p->env_allow[i]);
			}
			ret |= wd_buf_puts(out, "]\n");
		}
		if (p->env_set) {
			ret |= wd_buf_printf(out, "  set:%s\n", p->nenv_set ? "" : " {}");
			for (size_t i = 0; i < p->nenv_set; i++) {
				ret |= wd_buf_puts(out, "    ");
				ret |= wd_yaml_quote(out, p->env_set[i].name);
				ret |= wd_buf_puts(out, ": ");
				ret |= wd_yaml_quote(out, p->env_set[i].value);
				ret |= wd_buf_puts(out, "\n");
			}
		}
	}
	if (p->limits.memory_mb || p->limits.pids || p->limits.cpu_milli || p->limits.timeout_s ||
	    p->limits.disk_mb || p->limits.upload_kib || p->limits.upload_total_kib ||
	    p->limits.dns_label_set) {
		ret |= wd_buf_puts(out, "limits:\n");
		if (p->limits.memory_mb)
			ret |= wd_buf_printf(out, "  memory_mb: %llu\n",
					     (unsigned long long)p->limits.memory_mb);
		if (p->limits.pids)
			ret |= wd_buf_printf(out, "  pids: %u\n", p->limits.pids);
		if (p->limits.cpu_milli) {
			ret |= wd_buf_puts(out, "  cpu: ");
			ret |= put_cpu(out, p->limits.cpu_milli);
			ret |= wd_buf_puts(out, "\n");
		}
		if (p->limits.timeout_s)
			ret |= wd_buf_printf(out, "  timeout_s: %u\n", p->limits.timeout_s);
		if (p->limits.disk_mb)
			ret |= wd_buf_printf(out, "  disk_mb: %llu\n",
					     (unsigned long long)p->limits.disk_mb);
		if (p->limits.upload_kib)
			ret |= wd_buf_printf(out, "  upload_kib: %llu\n",
					     (unsigned long long)p->limits.upload_kib);
		if (p->limits.upload_total_kib)
			ret |= wd_buf_printf(out, "  upload_total_kib: %llu\n",
					     (unsigned long long)p->limits.upload_total_kib);
		if (p->limits.dns_label_set)
			ret |= wd_buf_printf(out, "  dns_label_kib_per_min: %u\n",
					     p->limits.dns_label_kib_per_min);
	}
	if (p->sandbox_allow || p->sandbox_backend || p->sandbox_fallback || p->docker_image)
		ret |= wd_buf_puts(out, "sandbox:\n");
	ret |= yaml_backends(out, p);
	if (p->sandbox_allow) {
		bool first = true;

		ret |= wd_buf_puts(out, "  allow: [");
		for (unsigned bit = 1; bit; bit <<= 1) {
			const char *name =
			    (p->sandbox_allow & bit) ? policy_sandbox_allow_name(bit) : NULL;

			if (!name)
				continue;
			ret |= wd_buf_puts(out, first ? "" : ", ");
			ret |= wd_yaml_quote(out, name);
			first = false;
		}
		ret |= wd_buf_puts(out, "]\n");
	}
	if (p->mcp_allowlist_locked || p->mcp_audit_log_all || policy_mcp_tools_on(p) ||
	    p->mcp_explain || p->ntool_net)
		ret |= wd_buf_puts(out, "mcp:\n");
	if (p->mcp_explain)
		ret |= wd_buf_puts(out, "  explain_denials: true\n");
	if (p->mcp_allowlist_locked)
		ret |= wd_buf_puts(out, "  allowlist: \"locked\"\n");
	if (p->mcp_audit_log_all)
		ret |= wd_buf_puts(out, "  audit_log: \"all\"\n");
	if (p->mcp_pin) {
		ret |= wd_buf_puts(out, "  pin: ");
		ret |= wd_yaml_quote(out, p->mcp_pin);
		ret |= wd_buf_puts(out, "\n");
	}
	if (p->has_tools_allow || p->ntools_deny || p->ntool_net) {
		ret |= wd_buf_puts(out, "  tools:\n");
		if (p->has_tools_allow)
			ret |= yaml_tool_pats(out, "allow", p->tools_allow, p->ntools_allow);
		if (p->ntools_deny)
			ret |= yaml_tool_pats(out, "deny", p->tools_deny, p->ntools_deny);
		ret |= yaml_tool_nets(out, p);
	}
	/* `trace` is internal (warden trace's own policy): never written into a policy file */
	if (p->audit_files != POLICY_FILES_UNSET && p->audit_files != POLICY_FILES_TRACE)
		ret |=
		    wd_buf_printf(out, "audit:\n  files: %s\n",
				  policy_audit_files_name((enum policy_audit_files)p->audit_files));
	return ret ? -ENOMEM : 0;
}

static int json_strings(struct wd_buf *out, char *const *v, size_t n)
{
	int ret = wd_buf_puts(out, "[");

	for (size_t i = 0; i < n; i++) {
		ret |= wd_buf_puts(out, i ? "," : "");
		ret |= wd_yaml_quote(out, v[i]);
	}
	return ret | wd_buf_puts(out, "]");
}

static int json_grants(struct wd_buf *out, const struct policy_grant *g, size_t n)
{
	int ret = wd_buf_puts(out, "[");

	for (size_t i = 0; i < n; i++) {
		ret |= wd_buf_puts(out, i ? ",{\"path\":" : "{\"path\":");
		ret |= wd_yaml_quote(out, g[i].path);
		ret |= wd_buf_puts(out, ",\"real\":");
		ret |= g[i].real ? wd_yaml_quote(out, g[i].real) : wd_buf_puts(out, "null");
		ret |= wd_buf_printf(out, ",\"sensitive\":%s,\"missing\":%s,",
				     g[i].sensitive ? "true" : "false",
				     g[i].missing ? "true" : "false");
		ret |= grant_type(&g[i]) ? wd_buf_printf(out, "\"type\":\"%s\",", grant_type(&g[i]))
					 : 0;
		ret |= wd_buf_printf(out, "\"line\":%d}", g[i].line);
	}
	return ret | wd_buf_puts(out, "]");
}

static const char *const kind_name[] = {
    [POLICY_RULE_HOST] = "host",
    [POLICY_RULE_WILDCARD] = "wildcard",
    [POLICY_RULE_CIDR] = "cidr",
};

int policy_render_json(const struct wd_policy *p, struct wd_buf *out)
{
	int ret = 0;

	ret |= wd_buf_printf(out, "{\"version\":%d,\"file\":", p->version);
	ret |= wd_yaml_quote(out, p->file ? p->file : "");
	ret |= wd_buf_printf(out, ",\"valid\":%s,\"command\":", p->validated ? "true" : "false");
	ret |= p->command ? json_strings(out, p->command, p->ncommand) : wd_buf_puts(out, "null");
	ret |= wd_buf_puts(out, ",\"filesystem\":{\"read\":");
	ret |= json_grants(out, p->read, p->nread);
	ret |= wd_buf_puts(out, ",\"write\":");
	ret |= json_grants(out, p->write, p->nwrite);
	ret |= wd_buf_puts(out, ",\"mask\":");
	ret |= json_strings(out, p->mask, p->nmask);
	ret |= wd_buf_puts(out, "},\"network\":{\"allow\":[");
	for (size_t i = 0; i < p->nrules; i++) {
		const struct policy_rule *r = &p->rules[i];
		char cidr[64];

		ret |= wd_buf_printf(out, "%s{\"kind\":\"%s\",", i ? "," : "", kind_name[r->kind]);
		if (r->kind == POLICY_RULE_CIDR) {
			ret |= wd_cidr_format(r->family, r->addr, r->prefix, cidr, sizeof(cidr));
			ret |= wd_buf_printf(out, "\"cidr\":\"%s\"", cidr);
		} else {
			ret |= wd_buf_printf(out, "\"host\":\"%s%s\"",
					     r->kind == POLICY_RULE_WILDCARD ? "*." : "", r->host);
		}
		ret |= wd_buf_puts(out, ",\"ports\":[");
		for (size_t k = 0; k < r->nports; k++)
			ret |= wd_buf_printf(out, "%s%u", k ? "," : "", r->ports[k]);
		ret |= wd_buf_puts(out, "],\"text\":");
		ret |= wd_yaml_quote(out, r->text ? r->text : "");
		ret |= wd_buf_printf(out, ",\"proto\":\"%s\",\"line\":%d}",
				     r->proto == POLICY_PROTO_UDP ? "udp" : "tcp", r->line);
	}
	ret |= wd_buf_puts(out, "]");
	ret |= json_ask(out, p);
	ret |= wd_buf_puts(out, "},\"env\":{\"allow\":");
	ret |= json_strings(out, p->env_allow, p->nenv_allow);
	ret |= wd_buf_puts(out, ",\"set\":{");
	for (size_t i = 0; i < p->nenv_set; i++) {
		ret |= wd_buf_puts(out, i ? "," : "");
		ret |= wd_yaml_quote(out, p->env_set[i].name);
		ret |= wd_buf_puts(out, ":");
		ret |= wd_yaml_quote(out, p->env_set[i].value);
	}
	ret |= wd_buf_puts(out, "}},\"limits\":{\"memory_mb\":");
	if (p->limits.memory_mb)
		ret |= wd_buf_printf(out, "%llu", (unsigned long long)p->limits.memory_mb);
	else
		ret |= wd_buf_puts(out, "null");
	ret |= p->limits.pids ? wd_buf_printf(out, ",\"pids\":%u", p->limits.pids)
			      : wd_buf_puts(out, ",\"pids\":null");
	ret |= wd_buf_puts(out, ",\"cpu\":");
	ret |= p->limits.cpu_milli ? put_cpu(out, p->limits.cpu_milli) : wd_buf_puts(out, "null");
	ret |= p->limits.timeout_s ? wd_buf_printf(out, ",\"timeout_s\":%u", p->limits.timeout_s)
				   : wd_buf_puts(out, ",\"timeout_s\":null");
	ret |= p->limits.disk_mb
		   ? wd_buf_printf(out, ",\"disk_mb\":%llu", (unsigned long long)p->limits.disk_mb)
		   : wd_buf_puts(out, ",\"disk_mb\":null");
	ret |= p->limits.upload_kib ? wd_buf_printf(out, ",\"upload_kib\":%llu",
						    (unsigned long long)p->limits.upload_kib)
				    : wd_buf_puts(out, ",\"upload_kib\":null");
	ret |= p->limits.upload_total_kib
		   ? wd_buf_printf(out, ",\"upload_total_kib\":%llu",
				   (unsigned long long)p->limits.upload_total_kib)
		   : wd_buf_puts(out, ",\"upload_total_kib\":null");
	ret |= p->limits.dns_label_set ? wd_buf_printf(out, ",\"dns_label_kib_per_min\":%u",
						       p->limits.dns_label_kib_per_min)
				       : wd_buf_puts(out, ",\"dns_label_kib_per_min\":null");
	ret |= wd_buf_puts(out, "},\"sandbox\":{\"allow\":[");
	for (unsigned bit = 1, n = 0; bit; bit <<= 1) {
		const char *name = (p->sandbox_allow & bit) ? policy_sandbox_allow_name(bit) : NULL;

		if (!name)
			continue;
		ret |= wd_buf_puts(out, n++ ? "," : "");
		ret |= wd_yaml_quote(out, name);
	}
	ret |= wd_buf_puts(out, "]");
	ret |= put_backends(out, p, true);
	ret |= wd_buf_puts(out, "}");
	if (p->mcp_allowlist_locked || p->mcp_audit_log_all || policy_mcp_tools_on(p) ||
	    p->mcp_explain || p->ntool_net)
		ret |= json_mcp(out, p);
	ret |= wd_buf_puts(out, "}");
	return ret ? -ENOMEM : 0;
}

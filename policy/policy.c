/* policy.c - the policy parser: YAML tree -> struct wd_policy through key
 * tables, reporting every problem with its position (pure: no I/O).
 *
 * Stages: yt_parse() (syntax, refusals, limits) -> the schema walk below
 * (keys, types, ranges, host names, address ranges, env names) -> the matcher
 * is compiled when no error was found. Filesystem checks live in validate.c.
 */
#include "policy/policy_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

enum { TOP_VERSION, TOP_COMMAND, TOP_FS, TOP_NET, TOP_ENV, TOP_LIMITS, TOP_SANDBOX, TOP_N };
static const char *const top_keys[TOP_N] = {"version", "command", "filesystem", "network",
					    "env",     "limits",  "sandbox"};

enum { FS_READ, FS_WRITE, FS_N };
static const char *const fs_keys[FS_N] = {"read", "write"};

enum { GRANT_PATH, GRANT_SENSITIVE, GRANT_N };
static const char *const grant_keys[GRANT_N] = {"path", "sensitive"};

enum { NET_ALLOW, NET_N };
static const char *const net_keys[NET_N] = {"allow"};

enum { RULE_HOST, RULE_CIDR, RULE_PORTS, RULE_N };
static const char *const rule_keys[RULE_N] = {"host", "cidr", "ports"};

enum { ENV_ALLOW, ENV_SET, ENV_N };
static const char *const env_keys[ENV_N] = {"allow", "set"};

enum { LIM_MEMORY, LIM_PIDS, LIM_CPU, LIM_TIMEOUT, LIM_DISK, LIM_N };
static const char *const limit_keys[LIM_N] = {"memory_mb", "pids", "cpu", "timeout_s", "disk_mb"};

enum { SBX_ALLOW, SBX_N };
static const char *const sandbox_keys[SBX_N] = {"allow"};

/* sandbox.allow: the words, their bits, and what each costs (for the message) */
static const struct {
	const char *name;
	unsigned bit;
} sandbox_allow_words[] = {
    {"userns", POLICY_SANDBOX_USERNS},
};

/* ranges of the integer limits */
static const struct {
	uint64_t min, max;
} limit_range[LIM_N] = {
    [LIM_MEMORY] = {1, 1048576}, [LIM_PIDS] = {1, 4194304},
    [LIM_CPU] = {10, 1024000}, /* thousandths of a core */
    [LIM_TIMEOUT] = {1, 604800}, [LIM_DISK] = {1, 16777216},
};

static const uint16_t default_ports[] = {80, 443};

struct pctx {
	struct policy_diags *d;
	struct wd_policy *p;
	int oom;
};

static char *xstrdup(struct pctx *c, const char *s)
{
	char *r = strdup(s);

	if (!r)
		c->oom = 1;
	return r;
}

static void *xcalloc(struct pctx *c, size_t n, size_t size)
{
	void *r = calloc(n ? n : 1, size);

	if (!r)
		c->oom = 1;
	return r;
}

void policy_free(struct wd_policy *p)
{
	if (!p)
		return;
	free(p->file);
	for (size_t i = 0; i < p->ncommand; i++)
		free(p->command[i]);
	free(p->command);
	for (size_t i = 0; i < p->nread; i++) {
		free(p->read[i].path);
		free(p->read[i].real);
	}
	free(p->read);
	for (size_t i = 0; i < p->nwrite; i++) {
		free(p->write[i].path);
		free(p->write[i].real);
	}
	free(p->write);
	for (size_t i = 0; i < p->nmask; i++)
		free(p->mask[i]);
	free(p->mask);
	for (size_t i = 0; i < p->nrules; i++) {
		free(p->rules[i].host);
		free(p->rules[i].ports);
		free(p->rules[i].text);
	}
	free(p->rules);
	for (size_t i = 0; i < p->nenv_allow; i++)
		free(p->env_allow[i]);
	free(p->env_allow);
	for (size_t i = 0; i < p->nenv_set; i++) {
		free(p->env_set[i].name);
		free(p->env_set[i].value);
	}
	free(p->env_set);
	matcher_free(p->matcher);
	free(p);
}

/* ------------------------------------------------------------ top level */

static void parse_version(struct pctx *c, const struct yt_node *root, const struct yt_node *v)
{
	uint64_t version;

	if (!v) {
		diag_err(c->d, root,
			 "missing key `version`; expected `version: %d` at the top level",
			 POLICY_VERSION);
		return;
	}
	if (yt_uint(c->d, v, "version", 0, UINT32_MAX, &version))
		return;
	if (version != POLICY_VERSION) {
		diag_err(c->d, v, "version %llu is not supported; expected %d",
			 (unsigned long long)version, POLICY_VERSION);
		return;
	}
	c->p->version = (int)version;
}

static void parse_command(struct pctx *c, const struct yt_node *n)
{
	struct wd_policy *p = c->p;

	if (yt_want_seq(c->d, n, "command"))
		return;
	if (n->nkids == 0) {
		diag_err(c->d, n,
			 "command: found an empty list; expected the program and its "
			 "arguments, like [\"/usr/bin/node\", \"server.js\"]");
		return;
	}
	p->command = xcalloc(c, n->nkids + 1, sizeof(char *));
	if (!p->command)
		return;
	for (size_t i = 0; i < n->nkids; i++) {
		const char *s = yt_str(c->d, n->kids[i], "command");

		if (s)
			p->command[p->ncommand++] = xstrdup(c, s);
	}
}

/* ------------------------------------------------------------ filesystem */

/* a grant's path: any non-empty string; a plain `~` (YAML's null) means the home folder */
static const char *grant_str(struct pctx *c, const struct yt_node *n, const char *what)
{
	if (n->type == YT_SCALAR && n->plain && !strcmp(n->str, "~"))
		return n->str;
	return yt_str(c->d, n, what);
}

static void parse_grants(struct pctx *c, const struct yt_node *n, const char *what,
			 struct policy_grant **ret, size_t *nret)
{
	struct policy_grant *g;

	if (yt_want_seq(c->d, n, what))
		return;
	g = xcalloc(c, n->nkids, sizeof(*g));
	if (!g)
		return;
	*ret = g;
	for (size_t i = 0; i < n->nkids; i++) {
		const struct yt_node *item = n->kids[i], *v[GRANT_N];
		const char *path = NULL;
		bool sensitive = false;
		char where[64];

		if (item->type == YT_MAP) {
			snprintf(where, sizeof(where), "a `%s` grant", what);
			yt_map_keys(c->d, item, where, grant_keys, GRANT_N, v);
			if (!v[GRANT_PATH]) {
				diag_err(c->d, item,
					 "%s: missing key `path`; expected "
					 "{ path: \"...\", sensitive: true }",
					 what);
				continue;
			}
			path = grant_str(c, v[GRANT_PATH], what);
			if (v[GRANT_SENSITIVE] &&
			    yt_bool(c->d, v[GRANT_SENSITIVE], "sensitive", &sensitive))
				continue;
			item = v[GRANT_PATH];
		} else if (item->type == YT_SCALAR) {
			path = grant_str(c, item, what);
		} else {
			diag_err(c->d, item,
				 "%s: found a list; expected a path or "
				 "{ path: \"...\", sensitive: true }",
				 what);
			continue;
		}
		if (!path)
			continue;
		if (strlen(path) >= 4096) {
			diag_err(c->d, item,
				 "%s: the path is %zu bytes long; expected less than 4096", what,
				 strlen(path));
			continue;
		}
		if (path[0] == '~' && path[1] && path[1] != '/') {
			diag_err(c->d, item,
				 "%s: found `%s`; only `~` and `~/...` (the invoking "
				 "user's home) are supported",
				 what, path);
			continue;
		}
		g[*nret].path = xstrdup(c, path);
		g[*nret].sensitive = sensitive;
		g[*nret].line = item->line;
		g[*nret].col = item->col;
		(*nret)++;
	}
}

static void parse_filesystem(struct pctx *c, const struct yt_node *n)
{
	const struct yt_node *v[FS_N];

	if (yt_map_keys(c->d, n, "`filesystem`", fs_keys, FS_N, v))
		return;
	if (v[FS_READ])
		parse_grants(c, v[FS_READ], "filesystem.read", &c->p->read, &c->p->nread);
	if (v[FS_WRITE])
		parse_grants(c, v[FS_WRITE], "filesystem.write", &c->p->write, &c->p->nwrite);
}

/* ------------------------------------------------------------ network */

static int port_cmp(const void *a, const void *b)
{
	return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b;
}

/* sort and deduplicate @r's ports, then make its text */
static void rule_finish(struct pctx *c, struct policy_rule *r)
{
	struct wd_buf t = WD_BUF_INIT;
	size_t k = 0;
	int ret = 0;

	qsort(r->ports, r->nports, sizeof(uint16_t), port_cmp);
	for (size_t i = 0; i < r->nports; i++)
		if (!k || r->ports[k - 1] != r->ports[i])
			r->ports[k++] = r->ports[i];
	r->nports = k;
	if (r->kind == POLICY_RULE_CIDR) {
		char cidr[64];

		ret |= wd_cidr_format(r->family, r->addr, r->prefix, cidr, sizeof(cidr));
		ret |= wd_buf_puts(&t, cidr);
	} else {
		ret |=
		    wd_buf_printf(&t, "%s%s", r->kind == POLICY_RULE_WILDCARD ? "*." : "", r->host);
	}
	for (size_t i = 0; i < r->nports; i++)
		ret |= wd_buf_printf(&t, "%c%u", i ? ',' : ':', r->ports[i]);
	if (ret) {
		c->oom = 1;
		wd_buf_free(&t);
		return;
	}
	r->text = t.data;
}

/*
 * Check a host pattern (exact or `*.suffix`) and fill @r's kind and host.
 * Return: 0, or -EINVAL after reporting at @at.
 */
static int parse_host(struct pctx *c, const struct yt_node *at, const char *what, const char *text,
		      struct policy_rule *r)
{
	char norm[256];
	const char *name = text;
	enum host_check hc;

	if (net_is_ip_literal(text) || text[0] == '[') {
		diag_err(c->d, at,
			 "%s: `%s` is an IP address; expected a host name (allow "
			 "addresses with { cidr: \"ADDRESS/PREFIX\", ports: [PORT] })",
			 what, text);
		return -EINVAL;
	}
	if (strchr(text, '*')) {
		if (strncmp(text, "*.", 2) || strchr(text + 2, '*')) {
			diag_err(c->d, at,
				 "%s: found `%s`; a wildcard must be the whole leftmost "
				 "label, like `*.example.com`",
				 what, text);
			return -EINVAL;
		}
		name = text + 2;
	}
	hc = host_normalise(name, norm, sizeof(norm));
	if (hc != HOST_OK) {
		diag_err(c->d, at, "%s: `%s` is not a valid host name: %s", what, text,
			 host_check_text(hc));
		return -EINVAL;
	}
	if (name != text && !strchr(norm, '.')) {
		diag_err(c->d, at,
			 "%s: `%s` covers a whole top-level domain; expected a wildcard "
			 "over a registered name, like `*.example.%s`",
			 what, text, norm);
		return -EINVAL;
	}
	r->kind = name != text ? POLICY_RULE_WILDCARD : POLICY_RULE_HOST;
	r->host = xstrdup(c, norm);
	return r->host ? 0 : -ENOMEM;
}

static int set_default_ports(struct pctx *c, struct policy_rule *r)
{
	r->ports = xcalloc(c, WD_ARRAY_SIZE(default_ports), sizeof(uint16_t));
	if (!r->ports)
		return -ENOMEM;
	memcpy(r->ports, default_ports, sizeof(default_ports));
	r->nports = WD_ARRAY_SIZE(default_ports);
	return 0;
}

/* "host", "host:port", "*.suffix", "*.suffix:port" */
static int parse_rule_string(struct pctx *c, const struct yt_node *n, struct policy_rule *r)
{
	char host[300];
	const char *s = yt_str(c->d, n, "network.allow"), *colon;
	uint64_t port = 0;

	if (!s)
		return -EINVAL;
	colon = strchr(s, ':');
	if (colon && (strchr(colon + 1, ':') || s[0] == '[')) {
		diag_err(c->d, n,
			 "network.allow: `%s` looks like an IPv6 address; expected a host "
			 "name (allow addresses with { cidr: \"ADDRESS/PREFIX\", ports: [PORT] })",
			 s);
		return -EINVAL;
	}
	if (strlen(s) >= sizeof(host)) {
		diag_err(c->d, n,
			 "network.allow: the entry is %zu characters long; expected a "
			 "host name of at most 253",
			 strlen(s));
		return -EINVAL;
	}
	snprintf(host, sizeof(host), "%s", s);
	if (colon) {
		const char *ps = colon + 1;

		host[colon - s] = '\0';
		if (!*ps || strlen(ps) > 5 || strspn(ps, "0123456789") != strlen(ps) ||
		    (port = strtoull(ps, NULL, 10)) < 1 || port > 65535) {
			diag_err(c->d, n,
				 "network.allow: `%s` has the port `%s`; expected a port "
				 "from 1 to 65535",
				 s, ps);
			return -EINVAL;
		}
	}
	if (parse_host(c, n, "network.allow", host, r))
		return -EINVAL;
	if (!port)
		return set_default_ports(c, r);
	r->ports = xcalloc(c, 1, sizeof(uint16_t));
	if (!r->ports)
		return -ENOMEM;
	r->ports[0] = (uint16_t)port;
	r->nports = 1;
	return 0;
}

static int parse_ports(struct pctx *c, const struct yt_node *n, struct policy_rule *r)
{
	int ret = 0;

	if (yt_want_seq(c->d, n, "ports"))
		return -EINVAL;
	if (n->nkids == 0) {
		diag_err(c->d, n, "ports: found an empty list; expected at least one port");
		return -EINVAL;
	}
	r->ports = xcalloc(c, n->nkids, sizeof(uint16_t));
	if (!r->ports)
		return -ENOMEM;
	for (size_t i = 0; i < n->nkids; i++) {
		uint64_t port;

		if (yt_uint(c->d, n->kids[i], "ports", 1, 65535, &port)) {
			ret = -EINVAL;
			continue;
		}
		for (size_t k = 0; k < r->nports; k++)
			if (r->ports[k] == port)
				diag_warn(c->d, n->kids[i], "ports: %llu is listed twice",
					  (unsigned long long)port);
		r->ports[r->nports++] = (uint16_t)port;
	}
	return ret;
}

static int parse_cidr(struct pctx *c, const struct yt_node *n, struct policy_rule *r)
{
	const char *s = yt_str(c->d, n, "cidr");
	struct wd_cidr net;
	char canon[64];

	if (!s)
		return -EINVAL;
	switch (wd_cidr_parse(s, WD_CIDR_BARE, &net)) {
	case WD_CIDR_OK:
		break;
	case WD_CIDR_HOST_BITS:
		wd_cidr_format(net.family, net.addr, net.prefix, canon, sizeof(canon));
		diag_err(c->d, n,
			 "cidr: `%s` has host bits set; expected the network address "
			 "`%s` (or a /%u for one address)",
			 s, canon, net.family == AF_INET ? 32 : 128);
		return -EINVAL;
	case WD_CIDR_MALFORMED:
		diag_err(c->d, n,
			 "cidr: found `%s`; expected an address range like "
			 "`10.20.0.0/16` or `fd00:1::/64`",
			 s);
		return -EINVAL;
	}
	r->family = net.family;
	memcpy(r->addr, net.addr, sizeof(r->addr));
	r->prefix = net.prefix;
	if (r->prefix == 0) {
		diag_err(c->d, n, "cidr: `%s` covers every address; expected a narrower range", s);
		return -EINVAL;
	}
	r->kind = POLICY_RULE_CIDR;
	return 0;
}

static int parse_rule_map(struct pctx *c, const struct yt_node *n, struct policy_rule *r)
{
	const struct yt_node *v[RULE_N];
	int ret = 0;

	yt_map_keys(c->d, n, "a `network.allow` rule", rule_keys, RULE_N, v);
	if (v[RULE_HOST] && v[RULE_CIDR]) {
		diag_err(c->d, yt_key_of(n, v[RULE_CIDR]),
			 "network.allow: a rule has both `host` "
			 "and `cidr`; expected one of them (write two rules)");
		return -EINVAL;
	}
	if (!v[RULE_HOST] && !v[RULE_CIDR]) {
		diag_err(c->d, n,
			 "network.allow: a rule has neither `host` nor `cidr`; expected "
			 "{ host: NAME, ports: [...] } or { cidr: RANGE, ports: [...] }");
		return -EINVAL;
	}
	if (v[RULE_HOST]) {
		const char *s = yt_str(c->d, v[RULE_HOST], "host");

		if (s && strchr(s, ':') && !net_is_ip_literal(s) && s[0] != '[') {
			diag_err(c->d, v[RULE_HOST],
				 "host: found `%s`; expected a name without a "
				 "port (put ports in `ports`)",
				 s);
			ret = -EINVAL;
		} else if (!s || parse_host(c, v[RULE_HOST], "host", s, r)) {
			ret = -EINVAL;
		}
	} else if (parse_cidr(c, v[RULE_CIDR], r)) {
		ret = -EINVAL;
	}
	if (v[RULE_PORTS]) {
		if (parse_ports(c, v[RULE_PORTS], r))
			ret = -EINVAL;
	} else if (v[RULE_CIDR]) {
		diag_err(c->d, n,
			 "network.allow: a `cidr` rule has no `ports`; expected explicit "
			 "ports, like ports: [443]");
		ret = -EINVAL;
	} else if (!ret) {
		ret = set_default_ports(c, r);
	}
	return ret;
}

static void parse_network(struct pctx *c, const struct yt_node *n)
{
	const struct yt_node *v[NET_N], *allow;
	struct wd_policy *p = c->p;

	if (yt_map_keys(c->d, n, "`network`", net_keys, NET_N, v) || !v[NET_ALLOW])
		return;
	allow = v[NET_ALLOW];
	if (yt_want_seq(c->d, allow, "network.allow"))
		return;
	p->rules = xcalloc(c, allow->nkids, sizeof(*p->rules));
	if (!p->rules)
		return;
	for (size_t i = 0; i < allow->nkids; i++) {
		const struct yt_node *item = allow->kids[i];
		struct policy_rule *r = &p->rules[p->nrules];
		int ret;

		memset(r, 0, sizeof(*r));
		if (item->type == YT_SCALAR) {
			ret = parse_rule_string(c, item, r);
		} else if (item->type == YT_MAP) {
			ret = parse_rule_map(c, item, r);
		} else {
			diag_err(c->d, item,
				 "network.allow: found a list; expected a host name or "
				 "{ host: ..., ports: [...] } / { cidr: ..., ports: [...] }");
			ret = -EINVAL;
		}
		if (ret) {
			free(r->host);
			free(r->ports);
			memset(r, 0, sizeof(*r));
			continue;
		}
		r->line = item->line;
		r->col = item->col;
		rule_finish(c, r);
		for (size_t k = 0; k < p->nrules && r->text; k++)
			if (p->rules[k].text && !strcmp(p->rules[k].text, r->text)) {
				diag_warn(c->d, item,
					  "network.allow: `%s` repeats the rule at line %d",
					  r->text, p->rules[k].line);
				break;
			}
		p->nrules++;
	}
}

/* ------------------------------------------------------------ env */

static bool env_name_ok(const char *s)
{
	if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

static const char *env_name(struct pctx *c, const struct yt_node *n, const char *what)
{
	const char *s = yt_str(c->d, n, what);

	if (!s)
		return NULL;
	if (!env_name_ok(s) || strlen(s) > 255) {
		diag_err(c->d, n,
			 "%s: `%s` is not a valid variable name; expected letters, digits "
			 "and `_`, not starting with a digit",
			 what, s);
		return NULL;
	}
	return s;
}

static void parse_env(struct pctx *c, const struct yt_node *n)
{
	const struct yt_node *v[ENV_N], *set, *allow;
	struct wd_policy *p = c->p;

	if (yt_map_keys(c->d, n, "`env`", env_keys, ENV_N, v))
		return;
	allow = v[ENV_ALLOW];
	if (allow && !yt_want_seq(c->d, allow, "env.allow")) {
		p->env_allow = xcalloc(c, allow->nkids, sizeof(char *));
		for (size_t i = 0; p->env_allow && i < allow->nkids; i++) {
			const char *s = env_name(c, allow->kids[i], "env.allow");
			bool dup = false;

			if (!s)
				continue;
			for (size_t k = 0; k < p->nenv_allow && !dup; k++)
				dup = p->env_allow[k] && !strcmp(p->env_allow[k], s);
			if (dup) {
				diag_warn(c->d, allow->kids[i], "env.allow: `%s` is listed twice",
					  s);
				continue;
			}
			p->env_allow[p->nenv_allow++] = xstrdup(c, s);
		}
	}
	set = v[ENV_SET];
	if (!set)
		return;
	if (set->type != YT_MAP) {
		char found[96];

		yt_describe(set, found, sizeof(found));
		diag_err(c->d, set, "env.set: found %s; expected a mapping of NAME: value", found);
		return;
	}
	p->env_set = xcalloc(c, set->nkids / 2, sizeof(*p->env_set));
	for (size_t i = 0; p->env_set && i + 1 < set->nkids; i += 2) {
		const struct yt_node *key = set->kids[i], *val = set->kids[i + 1];
		const char *name = env_name(c, key, "env.set"), *value;
		bool dup = false;
		char found[96];

		if (!name)
			continue;
		for (size_t k = 0; k < p->nenv_set && !dup; k++) {
			dup = !strcmp(p->env_set[k].name, name);
			if (dup)
				diag_err(c->d, key,
					 "duplicate key `%s` in `env.set` (first given at "
					 "line %d)",
					 name, p->env_set[k].line);
		}
		if (dup)
			continue;
		if (val->type != YT_SCALAR || yt_is_null(val)) {
			yt_describe(val, found, sizeof(found));
			diag_err(c->d, val,
				 "env.set.%s: found %s; expected a string (write \"\" for "
				 "an empty value)",
				 name, found);
			continue;
		}
		value = val->str;
		p->env_set[p->nenv_set].name = xstrdup(c, name);
		p->env_set[p->nenv_set].value = xstrdup(c, value);
		p->env_set[p->nenv_set].line = key->line;
		p->env_set[p->nenv_set].col = key->col;
		if (!p->env_set[p->nenv_set].name || !p->env_set[p->nenv_set].value) {
			free(p->env_set[p->nenv_set].name);
			free(p->env_set[p->nenv_set].value);
			continue;
		}
		p->nenv_set++;
	}
}

/* ------------------------------------------------------------ limits */

/* "1", "1.5", "0.25": a plain decimal with at most three decimals, in thousandths */
static int parse_milli(const struct yt_node *n, uint64_t *ret)
{
	uint64_t whole = 0, frac = 0;
	const char *s = n->str;
	int digits = 0, fd = 0;

	if (n->type != YT_SCALAR || !n->plain || !n->len)
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++, digits++) {
		whole = whole * 10 + (uint64_t)(*s - '0');
		if (whole > 10000000)
			return -ERANGE;
	}
	if (*s == '.') {
		for (s++; *s >= '0' && *s <= '9'; s++, fd++) {
			if (fd >= 3)
				return -EINVAL;
			frac = frac * 10 + (uint64_t)(*s - '0');
		}
		if (!fd)
			return -EINVAL;
	}
	if (*s || !digits)
		return -EINVAL;
	for (; fd < 3; fd++)
		frac *= 10;
	*ret = whole * 1000 + frac;
	return 0;
}

static void parse_limits(struct pctx *c, const struct yt_node *n)
{
	const struct yt_node *v[LIM_N];
	struct policy_limits *l = &c->p->limits;
	uint64_t val;
	char found[96];
	int ret;

	if (yt_map_keys(c->d, n, "`limits`", limit_keys, LIM_N, v))
		return;
	for (int i = 0; i < LIM_N; i++) {
		char what[32];

		if (!v[i])
			continue;
		snprintf(what, sizeof(what), "limits.%s", limit_keys[i]);
		if (i == LIM_CPU) {
			yt_describe(v[i], found, sizeof(found));
			ret = parse_milli(v[i], &val);
			if (ret == -EINVAL) {
				diag_err(c->d, v[i],
					 "limits.cpu: found %s; expected a number of cores "
					 "like 1 or 1.5 (at most three decimals)",
					 found);
				continue;
			}
			if (ret || val < limit_range[i].min || val > limit_range[i].max) {
				diag_err(c->d, v[i],
					 "limits.cpu: %s is out of range; expected 0.01 to "
					 "1024 cores",
					 found);
				continue;
			}
			l->cpu_milli = (uint32_t)val;
			continue;
		}
		if (yt_uint(c->d, v[i], what, limit_range[i].min, limit_range[i].max, &val))
			continue;
		switch (i) {
		case LIM_MEMORY:
			l->memory_mb = val;
			break;
		case LIM_PIDS:
			l->pids = (uint32_t)val;
			break;
		case LIM_TIMEOUT:
			l->timeout_s = (uint32_t)val;
			break;
		case LIM_DISK:
			l->disk_mb = val;
			break;
		default:
			break;
		}
	}
}

/* ------------------------------------------------------------ sandbox */

const char *policy_sandbox_allow_name(unsigned bit)
{
	for (size_t i = 0; i < WD_ARRAY_SIZE(sandbox_allow_words); i++)
		if (sandbox_allow_words[i].bit == bit)
			return sandbox_allow_words[i].name;
	return NULL;
}

/* sandbox: { allow: [userns] } - what the seccomp filter and bwrap loosen on purpose */
static void parse_sandbox(struct pctx *c, const struct yt_node *n)
{
	const struct yt_node *v[SBX_N], *allow;
	char list[128] = "";

	if (yt_map_keys(c->d, n, "`sandbox`", sandbox_keys, SBX_N, v) || !v[SBX_ALLOW])
		return;
	allow = v[SBX_ALLOW];
	if (yt_want_seq(c->d, allow, "sandbox.allow"))
		return;
	for (size_t i = 0; i < WD_ARRAY_SIZE(sandbox_allow_words); i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
			 sandbox_allow_words[i].name);
	for (size_t i = 0; i < allow->nkids; i++) {
		const struct yt_node *item = allow->kids[i];
		const char *s = yt_str(c->d, item, "sandbox.allow"), *near = NULL;
		unsigned best = 3, bit = 0;

		if (!s)
			continue;
		for (size_t k = 0; k < WD_ARRAY_SIZE(sandbox_allow_words); k++) {
			unsigned dist = wd_levenshtein(s, sandbox_allow_words[k].name);

			if (!strcmp(s, sandbox_allow_words[k].name))
				bit = sandbox_allow_words[k].bit;
			else if (dist < best) {
				best = dist;
				near = sandbox_allow_words[k].name;
			}
		}
		if (!bit) {
			if (near)
				diag_err(c->d, item,
					 "sandbox.allow: `%s` is not something the sandbox can "
					 "allow; did you mean `%s`? (expected one of: %s)",
					 s, near, list);
			else
				diag_err(c->d, item,
					 "sandbox.allow: `%s` is not something the sandbox can "
					 "allow; expected one of: %s",
					 s, list);
			continue;
		}
		if (c->p->sandbox_allow & bit)
			diag_warn(c->d, item, "sandbox.allow: `%s` is listed twice", s);
		c->p->sandbox_allow |= bit;
	}
}

/* ------------------------------------------------------------ entry point */

int policy_parse(const char *buf, size_t len, const char *filename, struct wd_policy **ret,
		 struct policy_diags *d)
{
	const struct yt_node *v[TOP_N];
	struct yt_node *root = NULL;
	struct pctx c = {.d = d};
	size_t errors = d->errors;
	int r;

	if (!filename)
		filename = "<input>";
	if (!d->file[0])
		snprintf(d->file, sizeof(d->file), "%s", filename);
	r = yt_parse(buf, len, d, &root);
	if (r)
		return r;
	if (!root) {
		diag_add(d, POLICY_DIAG_ERROR, 1, 1,
			 "the file is empty; expected a mapping with at least `version: %d`",
			 POLICY_VERSION);
		return -EINVAL;
	}
	c.p = calloc(1, sizeof(*c.p));
	if (!c.p) {
		yt_free(root);
		return -ENOMEM;
	}
	c.p->file = xstrdup(&c, filename);
	if (yt_map_keys(d, root, "the top level", top_keys, TOP_N, v))
		goto out;
	parse_version(&c, root, v[TOP_VERSION]);
	if (v[TOP_COMMAND])
		parse_command(&c, v[TOP_COMMAND]);
	if (v[TOP_FS])
		parse_filesystem(&c, v[TOP_FS]);
	if (v[TOP_NET])
		parse_network(&c, v[TOP_NET]);
	if (v[TOP_ENV])
		parse_env(&c, v[TOP_ENV]);
	if (v[TOP_LIMITS])
		parse_limits(&c, v[TOP_LIMITS]);
	if (v[TOP_SANDBOX])
		parse_sandbox(&c, v[TOP_SANDBOX]);
out:
	yt_free(root);
	if (!c.oom && d->errors == errors && matcher_build(c.p) < 0)
		c.oom = 1;
	if (c.oom || d->errors > errors) {
		policy_free(c.p);
		return c.oom ? -ENOMEM : -EINVAL;
	}
	*ret = c.p;
	return 0;
}

int policy_load(const char *path, const struct policy_ctx *ctx, struct wd_policy **ret,
		struct policy_diags *d)
{
	struct wd_policy *p = NULL;
	char *data = NULL;
	size_t len = 0;
	int r;

	if (!d->file[0])
		snprintf(d->file, sizeof(d->file), "%s", path);
	r = wd_read_file(path, POLICY_MAX_BYTES, &data, &len);
	if (r < 0) {
		diag_add(d, POLICY_DIAG_ERROR, 0, 0, "cannot read the policy: %s%s", strerror(-r),
			 r == -EFBIG ? " (the limit is 1 MiB)" : "");
		return r;
	}
	r = policy_parse(data, len, path, &p, d);
	free(data);
	if (r)
		return r;
	r = policy_validate(p, ctx, d);
	if (r) {
		policy_free(p);
		return r;
	}
	*ret = p;
	return 0;
}

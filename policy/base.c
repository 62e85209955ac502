/* base.c - the policy's objects themselves, below every layer of policy/ (parse, apply,
 * render): freeing a policy, a rule and a ceiling, a rule's normal form (sorted ports and its
 * text), the caps' names, the backends' words, and `~` in `command` made the home folder. */
#include "policy/policy_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NOLINTNEXTLINE(misc-no-recursion): one level: an effective policy's parts are plain ones */
void policy_free(struct wd_policy *p)
{
	if (!p)
		return;
	free(p->file);
	free(p->docker_image);
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
	for (size_t i = 0; i < p->nrules; i++)
		policy_rule_clear(&p->rules[i]);
	free(p->rules);
	policy_free(p->denied);
	policy_free(p->unbounded);
	policy_free(p->ceiling_allow);
	policy_free(p->ask);
	free(p->ceiling_from);
	for (int i = 0; i < POLICY_CAP_N; i++)
		free(p->caps_from[i]);
	for (size_t i = 0; i < p->nnarrowed; i++)
		free(p->narrowed[i].msg);
	free(p->narrowed);
	for (size_t i = 0; i < p->nenv_allow; i++)
		free(p->env_allow[i]);
	free(p->env_allow);
	for (size_t i = 0; i < p->nenv_set; i++) {
		free(p->env_set[i].name);
		free(p->env_set[i].value);
	}
	free(p->env_set);
	for (size_t i = 0; i < p->ntools_allow; i++)
		free(p->tools_allow[i].pat);
	free(p->tools_allow);
	for (size_t i = 0; i < p->ntools_deny; i++)
		free(p->tools_deny[i].pat);
	free(p->tools_deny);
	free(p->mcp_pin);
	for (size_t i = 0; i < p->ntool_net; i++) {
		free(p->tool_net[i].tool);
		policy_free(p->tool_net[i].net);
	}
	free(p->tool_net);
	policy_matcher_free(p->matcher);
	free(p);
}

static int port_cmp(const void *a, const void *b)
{
	return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b;
}

/* sort and deduplicate @r's ports, then make its text */
void policy_rule_finish(struct pctx *c, struct policy_rule *r)
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
	if (r->proto == POLICY_PROTO_UDP)
		ret |= wd_buf_puts(&t, "/udp");
	if (ret) {
		c->oom = 1;
		wd_buf_free(&t);
		return;
	}
	r->text = t.data;
}

/* the caps' names (index = enum policy_cap): the key a ceiling writes, and what messages say */
static const char *const cap_names[POLICY_CAP_N] = {
    [POLICY_CAP_RUNS] = "runs",		  [POLICY_CAP_CONNECTIONS] = "connections",
    [POLICY_CAP_MEMORY_MB] = "memory_mb", [POLICY_CAP_PIDS] = "pids",
    [POLICY_CAP_TIMEOUT_S] = "timeout_s", [POLICY_CAP_DNS_QUERIES_PER_S] = "dns_queries_per_s",
};

const char *policy_cap_name(enum policy_cap cap)
{
	return (unsigned)cap < POLICY_CAP_N ? cap_names[cap] : NULL;
}

void policy_rule_clear(struct policy_rule *r)
{
	free(r->host);
	free(r->ports);
	free(r->text);
	free(r->from);
	memset(r, 0, sizeof(*r));
}

static void scope_clear(struct policy_ceil_scope *s)
{
	free(s->name);
	for (size_t i = 0; i < s->nallow; i++)
		policy_rule_clear(&s->allow[i]);
	free(s->allow);
	for (size_t i = 0; i < s->ndeny; i++)
		policy_rule_clear(&s->deny[i]);
	free(s->deny);
	for (int i = 0; i < POLICY_CAP_N; i++)
		free(s->caps_from[i]);
	free(s->from);
	memset(s, 0, sizeof(*s));
}

void policy_ceiling_free(struct policy_ceiling *c)
{
	if (!c)
		return;
	scope_clear(&c->top);
	for (size_t i = 0; i < c->nusers; i++)
		scope_clear(&c->users[i]);
	free(c->users);
	for (size_t i = 0; i < c->ngroups; i++)
		scope_clear(&c->groups[i]);
	free(c->groups);
	free(c);
}

int policy_command_expand(struct wd_policy *p, const char *home)
{
	for (size_t i = 0; i < p->ncommand; i++) {
		const char *s = p->command[i];
		char *x;

		if (strcmp(s, "~") && strncmp(s, "~/", 2))
			continue;
		if (!home || home[0] != '/')
			return -EINVAL;
		if (asprintf(&x, "%s%s", home, s + 1) < 0)
			return -ENOMEM;
		free(p->command[i]);
		p->command[i] = x;
	}
	return 0;
}

/* ------------------------------------------------------------ backends */

/* the backends' words, index = enum policy_backend */
static const char *const backend_words[POLICY_BACKEND_N] = {
    [POLICY_BACKEND_LINUX] = "linux",
    [POLICY_BACKEND_DOCKER] = "docker",
    [POLICY_BACKEND_SEATBELT] = "seatbelt",
    [POLICY_BACKEND_WINDOWS] = "windows",
};

const char *policy_backend_name(unsigned b)
{
	return b < POLICY_BACKEND_N ? backend_words[b] : NULL;
}

unsigned policy_backend_lookup(const char *word)
{
	if (!word)
		return POLICY_BACKEND_AUTO;
	if (!strcmp(word, "bwrap"))
		return POLICY_BACKEND_LINUX;
	for (unsigned b = 1; b < POLICY_BACKEND_N; b++)
		if (!strcmp(word, backend_words[b]))
			return b;
	return POLICY_BACKEND_AUTO;
}

const char *policy_backend_list(void)
{
	return "linux (alias bwrap), docker, seatbelt, windows";
}

bool policy_env_names(const struct wd_policy *p, const char *name)
{
	for (size_t i = 0; i < p->nenv_set; i++)
		if (!strcmp(p->env_set[i].name, name))
			return true;
	for (size_t i = 0; i < p->nenv_allow; i++)
		if (!strcmp(p->env_allow[i], name))
			return true;
	return false;
}

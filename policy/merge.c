/* merge.c - one parsed policy's network rules and filesystem grants added to another's (the
 * union), before validation: `warden run --allow/--read/--write` over `-p FILE` (run/flags.c
 * makes the flags a policy of their own with the same parser). No I/O. */
#include "policy/policy_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* @g is already in @v (same path as written, same type, same `sensitive`) */
static bool has_grant(const struct policy_grant *v, size_t n, const struct policy_grant *g)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].path, g->path) && v[i].type == g->type &&
		    v[i].sensitive == g->sensitive)
			return true;
	return false;
}

/* move @from's grants not already in *@v to its end, their lines shifted. Return: 0, -ENOMEM */
static int move_grants(struct policy_grant **v, size_t *n, struct policy_grant *from, size_t nfrom,
		       int line_offset)
{
	struct policy_grant *g;

	if (!nfrom)
		return 0;
	g = realloc(*v, (*n + nfrom) * sizeof(*g));
	if (!g)
		return -ENOMEM;
	*v = g;
	for (size_t i = 0; i < nfrom; i++) {
		if (has_grant(g, *n, &from[i])) {
			free(from[i].path);
			free(from[i].real);
		} else {
			g[*n] = from[i];
			g[*n].line += line_offset;
			(*n)++;
		}
		memset(&from[i], 0, sizeof(from[i]));
	}
	return 0;
}

static bool has_rule(const struct wd_policy *p, const struct policy_rule *r)
{
	for (size_t i = 0; i < p->nrules; i++)
		if (p->rules[i].text && r->text && !strcmp(p->rules[i].text, r->text))
			return true;
	return false;
}

/* @from's network.ask rules moved to @into's (made when it has none). Return: 0, -ENOMEM */
static int merge_ask(struct wd_policy *into, struct wd_policy *from)
{
	struct wd_policy *fa = from->ask;
	struct policy_rule *rules;

	into->ask_any |= from->ask_any;
	if (from->ask_timeout_s)
		into->ask_timeout_s = from->ask_timeout_s;
	if (!fa || !fa->nrules)
		return 0;
	if (!into->ask) {
		into->ask = fa;
		from->ask = NULL;
		return 0;
	}
	rules = realloc(into->ask->rules, (into->ask->nrules + fa->nrules) * sizeof(*rules));
	if (!rules)
		return -ENOMEM;
	into->ask->rules = rules;
	for (size_t i = 0; i < fa->nrules; i++) {
		if (has_rule(into->ask, &fa->rules[i])) {
			policy_rule_clear(&fa->rules[i]);
			continue;
		}
		rules[into->ask->nrules++] = fa->rules[i];
		memset(&fa->rules[i], 0, sizeof(fa->rules[i]));
	}
	fa->nrules = 0;
	policy_matcher_free(fa->matcher);
	fa->matcher = NULL;
	policy_matcher_free(into->ask->matcher);
	into->ask->matcher = NULL;
	return policy_matcher_build(into->ask) < 0 ? -ENOMEM : 0;
}

int policy_merge(struct wd_policy *into, struct wd_policy *from, int line_offset)
{
	struct policy_rule *rules;
	int ret;

	if (into->validated || from->validated)
		return -EINVAL;
	if (from->nrules) {
		rules = realloc(into->rules, (into->nrules + from->nrules) * sizeof(*rules));
		if (!rules)
			return -ENOMEM;
		into->rules = rules;
		for (size_t i = 0; i < from->nrules; i++) {
			if (has_rule(into, &from->rules[i])) {
				policy_rule_clear(&from->rules[i]);
				continue;
			}
			rules[into->nrules] = from->rules[i];
			rules[into->nrules].line += line_offset;
			into->nrules++;
			memset(&from->rules[i], 0, sizeof(from->rules[i]));
		}
		from->nrules = 0;
	}
	/* network.ask: --ask over the file's (the union; the flags' timeout wins) */
	if (from->ask || from->ask_any || from->ask_timeout_s) {
		ret = merge_ask(into, from);
		if (ret)
			return ret;
	}
	ret = move_grants(&into->read, &into->nread, from->read, from->nread, line_offset);
	if (!ret) {
		from->nread = 0;
		ret = move_grants(&into->write, &into->nwrite, from->write, from->nwrite,
				  line_offset);
	}
	if (!ret)
		from->nwrite = 0;
	/* both matchers point into rules that moved */
	policy_matcher_free(from->matcher);
	from->matcher = NULL;
	policy_matcher_free(into->matcher);
	into->matcher = NULL;
	if (ret)
		return ret;
	return policy_matcher_build(into) < 0 ? -ENOMEM : 0;
}

/* policy_internal.h - internal to policy/: the parser's state (struct pctx), the host-name
 * rule, the rule helpers and the matcher. The YAML tree and the diagnostics helpers are
 * yaml.h's (conf/ uses them too).
 *
 * The files of policy/ and who may use whom (each only those below it; no circle, checked
 * with nm by tests/unit/policy_layers.py):
 *   render   render.c, ceiling_render.c       (policy and ceiling -> YAML / JSON)
 *   apply    ceiling_apply.c                  (a ceiling bounds a policy)
 *   parse    parse.c -> network.c, mcp.c, validate.c -> credstores.c (the credential stores);
 *            ceiling_parse.c -> network.c; merge.c (one parsed policy's lists added to
 *            another's) -> base.c, match.c
 *   objects  base.c (free, a rule's normal form, names) -> match.c -> hostname.c
 *   bottom   yaml.c (the YAML tree, diagnostics)
 */
#ifndef WARDEN_POLICY_INTERNAL_H
#define WARDEN_POLICY_INTERNAL_H

#include "policy/policy.h"
#include "policy/yaml.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ host names */

/**
 * policy_host_fold() - a host name as a policy writes it, lower-cased and without one
 * trailing dot (hostname.c): wd_name_fold()'s strict syntax, and a last label that is not all
 * digits
 * @in:		the name as written (no wildcard)
 * @out:	at least WD_NAME_MAX + 1 bytes
 * @outlen:	size of @out
 *
 * Return: NULL when the name is valid, else what is wrong with it (for a message).
 */
const char *policy_host_fold(const char *in, char *out, size_t outlen);

/**
 * policy_host_ssrf_class() - what a folded host name @norm names when it is one of those that
 * resolve, by convention, only into a range the gateway's SSRF guard refuses (`localhost` and
 * names under it, the cloud metadata names)
 * Return: a short description ("this machine: loopback, ..."), or NULL for any other name.
 */
const char *policy_host_ssrf_class(const char *norm);

/* ------------------------------------------------------------------- matcher */

/* one name rule (exact or wildcard) in a table of the matcher */
struct mentry {
	const char *key; /* the rule's host (for a wildcard, its suffix) */
	uint32_t rule;
};

/**
 * struct policy_matcher - the compiled matcher (match.c)
 * @exact:	struct mentry by exact name (several per name: one per rule)
 * @anyport:	the rules match on any port (a ceiling's denied names)
 * @wild:	struct mentry by wildcard suffix
 * @wild_lens:	bit n set: some wildcard suffix is n bytes long (only suffixes of those
 *		lengths are looked up)
 * @names:	one entry per rule (those of cidr rules unused), the tables' items
 * @cidr:	rule indices of the cidr rules, in order
 * @ncidr:	their number
 * @below:	policy_matcher_build_below(): one struct mentry for each proper suffix of a name
 *		rule's host that starts after a dot (`example.com` and `com` for
 *		`a.example.com`), sorted by suffix: the rules that lie below a name are a
 *		range of it (a sorted array, not a table: a common suffix has many rules)
 * @nbelow:	its length
 */
struct policy_matcher {
	bool anyport; /* every rule matches on every port (an effective policy's @denied) */
	struct wd_htable exact;
	struct wd_htable wild;
	uint64_t wild_lens[4];
	struct mentry *names;
	uint32_t *cidr;
	size_t ncidr;
	struct mentry *below;
	size_t nbelow;
};

/* The parser's state while it walks one policy (parse.c, network.c, ceiling_parse.c) or
 * builds an effective one (ceiling_apply.c). */
struct pctx {
	struct policy_diags *d;
	struct wd_policy *p;
	int oom; /* an allocation failed: the parse fails with -ENOMEM */
};

/* pctx_strdup(), pctx_calloc() - strdup(), calloc() (of at least one element) that set
 * @c->oom when they fail. */
static inline char *pctx_strdup(struct pctx *c, const char *s)
{
	char *r = strdup(s);

	if (!r)
		c->oom = 1;
	return r;
}

static inline void *pctx_calloc(struct pctx *c, size_t n, size_t size)
{
	void *r = calloc(n ? n : 1, size);

	if (!r)
		c->oom = 1;
	return r;
}

/* policy_parse_mcp() - the `mcp` map into @c->p's mcp_* fields (mcp.c) */
void policy_parse_mcp(struct pctx *c, const struct policy_yt_node *n);

/* policy_parse_network() - the `network` map into @c->p->rules (network.c) */
void policy_parse_network(struct pctx *c, const struct policy_yt_node *n);

/* policy_parse_rules() - a sequence of network.allow entries into @c->p->rules (network.c);
 * @where names the list in messages ("network.allow", "mcp.tools.fetch.network") */
void policy_parse_rules(struct pctx *c, const struct policy_yt_node *seq, const char *where);

/*
 * policy_rule_item() - one `network.allow`-style item into @r (network.c): a string or a
 * { host | cidr, ports } map; with @from non-NULL the map may also have `from`
 * (a ceiling's rule), whose value node is stored there (NULL when absent). @where
 * names the list in messages. Return: 0, or -EINVAL after reporting.
 */
int policy_rule_item(struct pctx *c, const struct policy_yt_node *item, const char *where,
		     struct policy_rule *r, const struct policy_yt_node **from);

/* policy_rule_finish() - sort and deduplicate @r's ports, then make its text (base.c) */
void policy_rule_finish(struct pctx *c, struct policy_rule *r);

/* policy_rule_clear() - free what @r owns and zero it (base.c) */
void policy_rule_clear(struct policy_rule *r);

/**
 * policy_matcher_build() - compile @p->rules into @p->matcher
 * Return: 0, or -ENOMEM.
 */
int policy_matcher_build(struct wd_policy *p);

/* policy_matcher_build_anyport() - policy_matcher_build() for rules that match on any port. Return:
 * 0 or -ENOMEM
 */
int policy_matcher_build_anyport(struct wd_policy *p);

/* policy_matcher_build_below() - add the @below index to @p's built matcher. Return: 0 or -ENOMEM
 */
int policy_matcher_build_below(struct wd_policy *p);

/*
 * policy_matcher_overlapping() - every name rule of @p (built with policy_matcher_build_below())
 * whose pattern may overlap the pattern @wild ? `*.name` : `name` (any port): the exact rules for
 * the name (an exact pattern), the wildcards over the name or over a proper suffix of it,
 * and (a wildcard pattern) the rules below the name. Their indices go to @out (room for
 * @max; more are counted), in no order, possibly twice. Return: how many there are.
 */
size_t policy_matcher_overlapping(const struct wd_policy *p, bool wild, const char *name,
				  uint32_t *out, size_t max);

/** policy_matcher_free() - release a matcher; @m may be NULL. */
void policy_matcher_free(struct policy_matcher *m);

#endif /* WARDEN_POLICY_INTERNAL_H */

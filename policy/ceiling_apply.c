/* ceiling_apply.c - policy_ceiling_apply(), the pure function that bounds a run's policy by
 * the operator's ceiling (parsed by ceiling_parse.c), and policy_ceiling_why(), which tells
 * a denial the ceiling caused from one the policy did.
 *
 * Theory of operation. The ceiling has a top level and per-user and per-group
 * overrides ("scopes"). For one user the scopes in force are their own override,
 * those of their groups and the top level. `allow` comes from the most specific
 * scope that sets it (several groups: the union of their lists); `deny` entries of
 * every scope in force add up (a denial is never lifted by an override); each cap
 * comes from the user's override, else the largest one a group of theirs sets, else
 * the top level (dns_queries_per_s, set nowhere: POLICY_DNS_QUERIES_PER_S_DEFAULT). No `allow`
 * anywhere: nothing is allowed (fail closed); `allow: any` bounds no name, the denials still apply.
 *
 * Intersection: a name rule and an address range never overlap. Two name
 * patterns (an exact name or `*.suffix`) either nest or are disjoint, so the
 * intersection of two is the narrower one, or nothing; two ranges likewise; the
 * ports are those both list. A user's rule becomes the union of its intersections
 * with every ceiling rule in force, in ceiling order (empty: the rule is dropped),
 * and a rule a `deny` entry covers entirely is dropped. Denied names inside a kept
 * rule cannot be expressed as rules, so they stay a list that policy_match() checks
 * first. Every change is recorded with where the ceiling said so (a rule's or
 * scope's `from`: "FILE:LINE" of the operator's file, kept when the config is
 * rendered and handed on).
 */
#include "policy/policy_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* @h lies strictly below @s ("a.b.c" below "b.c") */
static bool below(const char *h, const char *s)
{
	size_t lh = strlen(h), ls = strlen(s);

	return lh > ls + 1 && h[lh - ls - 1] == '.' && !strcmp(h + lh - ls, s);
}

/* every name name rule @b admits, name rule @a admits too */
static bool covers(const struct policy_rule *a, const struct policy_rule *b)
{
	if (a->kind == POLICY_RULE_CIDR || b->kind == POLICY_RULE_CIDR)
		return false;
	if (a->kind == POLICY_RULE_HOST)
		return b->kind == POLICY_RULE_HOST && !strcmp(a->host, b->host);
	if (!strcmp(a->host, b->host))
		return b->kind == POLICY_RULE_WILDCARD; /* `*.s` never admits `s` itself */
	return below(b->host, a->host);
}

/* the narrower of @u and @c where they overlap (names or ranges), else NULL */
static const struct policy_rule *narrower(const struct policy_rule *u, const struct policy_rule *c)
{
	if ((u->kind == POLICY_RULE_CIDR) != (c->kind == POLICY_RULE_CIDR))
		return NULL; /* a name and an address range never overlap */
	if (u->kind == POLICY_RULE_CIDR) {
		unsigned p = u->prefix < c->prefix ? u->prefix : c->prefix;

		if (u->family != c->family || !wd_prefix_contains(u->family, u->addr, p, c->addr))
			return NULL;
		return u->prefix >= c->prefix ? u : c;
	}
	if (covers(c, u))
		return u;
	if (covers(u, c))
		return c;
	return NULL;
}

static int rule_copy(struct policy_rule *dst, const struct policy_rule *src)
{
	*dst = *src;
	dst->host = src->host ? strdup(src->host) : NULL;
	dst->text = src->text ? strdup(src->text) : NULL;
	dst->from = src->from ? strdup(src->from) : NULL;
	dst->ports = calloc(src->nports ? src->nports : 1, sizeof(uint16_t));
	if (dst->ports)
		memcpy(dst->ports, src->ports, src->nports * sizeof(uint16_t));
	if ((src->host && !dst->host) || (src->text && !dst->text) || (src->from && !dst->from) ||
	    !dst->ports) {
		policy_rule_clear(dst);
		return -ENOMEM;
	}
	return 0;
}

/* the effective policy being made */
struct eff {
	struct pctx c;
	struct wd_policy *p;
	size_t cap_rules, cap_notes;
	size_t pairs; /* (rule, ceiling rule) pairs looked at so far */
	bool too_big; /* more than POLICY_CEILING_MAX_PAIRS */
};

static void note(struct eff *e, int line, int col, const char *fmt, ...) WD_PRINTF(4, 5);

static void note(struct eff *e, int line, int col, const char *fmt, ...)
{
	struct wd_policy *p = e->p;
	char msg[1024];
	va_list ap;

	if (p->nnarrowed == e->cap_notes) {
		size_t n = e->cap_notes ? 2 * e->cap_notes : 8;
		struct policy_narrowing *v = realloc(p->narrowed, n * sizeof(*v));

		if (!v) {
			e->c.oom = 1;
			return;
		}
		p->narrowed = v;
		e->cap_notes = n;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p->narrowed[p->nnarrowed].line = line;
	p->narrowed[p->nnarrowed].col = col;
	p->narrowed[p->nnarrowed].msg = pctx_strdup(&e->c, msg);
	if (p->narrowed[p->nnarrowed].msg)
		p->nnarrowed++;
}

/* a new rule at the end of @p's rules (zeroed), or NULL */
static struct policy_rule *rule_add(struct pctx *c, struct wd_policy *p, size_t *cap)
{
	if (p->nrules == *cap) {
		size_t n = *cap ? 2 * *cap : 8;
		struct policy_rule *v = realloc(p->rules, n * sizeof(*v));

		if (!v) {
			c->oom = 1;
			return NULL;
		}
		p->rules = v;
		*cap = n;
	}
	memset(&p->rules[p->nrules], 0, sizeof(p->rules[0]));
	return &p->rules[p->nrules];
}

/* a policy of copies of @n rules (@v, or @pv: pointers), its matcher built (@anyport: for
 * any port; @below: with the index of the rules below a name); NULL: -ENOMEM */
static struct wd_policy *rules_policy(struct pctx *c, const struct policy_rule *v,
				      const struct policy_rule *const *pv, size_t n, bool anyport,
				      bool below)
{
	struct wd_policy *p = pctx_calloc(c, 1, sizeof(*p));
	size_t cap = 0;

	if (!p)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		struct policy_rule *r = rule_add(c, p, &cap);

		if (!r || rule_copy(r, pv ? pv[i] : &v[i])) {
			c->oom = 1;
			break;
		}
		p->nrules++;
	}
	if (!c->oom && ((anyport ? policy_matcher_build_anyport(p) : policy_matcher_build(p)) ||
			(below && policy_matcher_build_below(p))))
		c->oom = 1;
	if (c->oom) {
		policy_free(p);
		return NULL;
	}
	return p;
}

static bool in_groups(const struct policy_who *who, const char *name)
{
	for (size_t i = 0; i < who->ngroups; i++)
		if (who->groups[i] && !strcmp(who->groups[i], name))
			return true;
	return false;
}

/* the user's own override: users.NAME, else users.UID */
static const struct policy_ceil_scope *user_scope(const struct policy_ceiling *c,
						  const struct policy_who *who)
{
	char uid[16];

	snprintf(uid, sizeof(uid), "%u", who->uid);
	for (size_t i = 0; who->name && i < c->nusers; i++)
		if (!strcmp(c->users[i].name, who->name))
			return &c->users[i];
	for (size_t i = 0; i < c->nusers; i++)
		if (!strcmp(c->users[i].name, uid))
			return &c->users[i];
	return NULL;
}

/* "a, b" of the scopes' @from */
static char *join_from(struct pctx *c, const struct policy_ceil_scope *const *v, size_t n)
{
	struct wd_buf b = WD_BUF_INIT;
	int ret = 0;

	for (size_t i = 0; i < n; i++)
		ret |= wd_buf_printf(&b, "%s%s", i ? ", " : "", v[i]->from ? v[i]->from : "?");
	if (ret || !b.data) {
		wd_buf_free(&b);
		c->oom = 1;
		return NULL;
	}
	return b.data;
}

/* the caps in force: the user's, else the largest of their groups', else the top's */
static void apply_caps(struct eff *e, const struct policy_ceiling *c,
		       const struct policy_ceil_scope *u, const struct policy_ceil_scope *const *g,
		       size_t ng)
{
	for (int i = 0; i < POLICY_CAP_N; i++) {
		const struct policy_ceil_scope *src = NULL;

		if (u && u->caps[i]) {
			src = u;
		} else {
			for (size_t k = 0; k < ng; k++)
				if (g[k]->caps[i] && (!src || g[k]->caps[i] > src->caps[i]))
					src = g[k];
			if (!src && c->top.caps[i])
				src = &c->top;
		}
		if (!src && i == POLICY_CAP_DNS_QUERIES_PER_S) {
			/* the shared resolvers are never unbounded under a ceiling */
			e->p->caps[i] = POLICY_DNS_QUERIES_PER_S_DEFAULT;
			e->p->caps_from[i] = pctx_strdup(&e->c, "the default");
			continue;
		}
		if (!src)
			continue;
		e->p->caps[i] = src->caps[i];
		e->p->caps_from[i] = pctx_strdup(&e->c, src->caps_from[i] ? src->caps_from[i] : "");
	}
}

/* the run limits: above a cap, or not set under one, they become the cap */
static void apply_limits(struct eff *e, const struct wd_policy *user)
{
	struct policy_limits *l = &e->p->limits;
	static const enum policy_cap which[] = {POLICY_CAP_MEMORY_MB, POLICY_CAP_PIDS,
						POLICY_CAP_TIMEOUT_S};

	*l = user->limits;
	for (size_t i = 0; i < WD_ARRAY_SIZE(which); i++) {
		enum policy_cap k = which[i];
		uint64_t cap = e->p->caps[k], asked;

		if (!cap)
			continue;
		asked = k == POLICY_CAP_MEMORY_MB ? l->memory_mb
			: k == POLICY_CAP_PIDS	  ? l->pids
						  : l->timeout_s;
		if (asked && asked <= cap)
			continue;
		if (asked)
			note(e, 0, 0, "limits.%s %llu is lowered to %llu by the host's ceiling %s",
			     policy_cap_name(k), (unsigned long long)asked, (unsigned long long)cap,
			     e->p->caps_from[k]);
		else
			note(e, 0, 0, "limits.%s is not set; the host's ceiling %s sets %llu",
			     policy_cap_name(k), e->p->caps_from[k], (unsigned long long)cap);
		if (k == POLICY_CAP_MEMORY_MB)
			l->memory_mb = cap;
		else if (k == POLICY_CAP_PIDS)
			l->pids = (uint32_t)cap;
		else
			l->timeout_s = (uint32_t)cap;
	}
}

/* the ports both rules list, into @out (room for @a's). Return: how many */
static size_t ports_both(const struct policy_rule *a, const struct policy_rule *b, uint16_t *out)
{
	size_t i = 0, j = 0, n = 0;

	while (i < a->nports && j < b->nports) {
		if (a->ports[i] == b->ports[j]) {
			out[n++] = a->ports[i];
			i++;
			j++;
		} else if (a->ports[i] < b->ports[j]) {
			i++;
		} else {
			j++;
		}
	}
	return n;
}

/* @u's intersection with ceiling rule @cr appended to the effective rules (or nothing).
 * Return: 1 appended, 0 the names overlap but no port does, -1 no overlap */
static int intersect(struct eff *e, const struct policy_rule *u, const struct policy_rule *cr)
{
	const struct policy_rule *nar = narrower(u, cr);
	struct policy_rule *r;
	uint16_t *ports;
	size_t n;

	if (!nar || u->proto != cr->proto)
		return -1; /* a udp rule is bounded by the ceiling's udp rules only */
	ports = pctx_calloc(&e->c, u->nports, sizeof(uint16_t));
	if (!ports)
		return 0;
	n = ports_both(u, cr, ports);
	if (!n || !(r = rule_add(&e->c, e->p, &e->cap_rules))) {
		free(ports);
		return 0;
	}
	r->kind = nar->kind;
	r->host = nar->host ? pctx_strdup(&e->c, nar->host) : NULL;
	r->family = nar->family;
	memcpy(r->addr, nar->addr, sizeof(r->addr));
	r->prefix = nar->prefix;
	r->ports = ports;
	r->nports = n;
	r->proto = u->proto;
	r->line = u->line;
	r->col = u->col;
	r->from = pctx_strdup(&e->c, cr->from ? cr->from : "");
	policy_rule_finish(&e->c, r);
	e->p->nrules++;
	return 1;
}

static int idx_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The rules of @p (a policy of ceiling rules: allow or deny, policy_matcher_build_below()) that
 * may overlap @u, ascending, each once: for a name rule, found through the matcher's
 * tables (a few lookups per label, whatever the number of rules); for a range, @p's
 * ranges. Return: a new array (free()), *@n set; NULL with *@n 0 when there are none
 * (e->c.oom set when memory ran out).
 */
static uint32_t *overlapping(struct eff *e, const struct wd_policy *p, const struct policy_rule *u,
			     size_t *n)
{
	const struct policy_matcher *m = p ? p->matcher : NULL;
	uint32_t *v;
	size_t k = 0;

	*n = 0;
	if (!m || e->too_big)
		return NULL;
	if (u->kind == POLICY_RULE_CIDR) {
		if (!m->ncidr)
			return NULL;
		e->pairs += m->ncidr;
		if (e->pairs > POLICY_CEILING_MAX_PAIRS) {
			e->too_big = true;
			return NULL;
		}
		v = pctx_calloc(&e->c, m->ncidr, sizeof(*v));
		if (v)
			memcpy(v, m->cidr, m->ncidr * sizeof(*v));
		*n = v ? m->ncidr : 0;
		return v; /* in order already */
	}
	k = policy_matcher_overlapping(p, u->kind == POLICY_RULE_WILDCARD, u->host, NULL, 0);
	e->pairs += k;
	if (e->pairs > POLICY_CEILING_MAX_PAIRS) {
		e->too_big = true; /* the time and the rules it would take are bounded */
		return NULL;
	}
	if (!k)
		return NULL;
	v = pctx_calloc(&e->c, k, sizeof(*v));
	if (!v)
		return NULL;
	k = policy_matcher_overlapping(p, u->kind == POLICY_RULE_WILDCARD, u->host, v, k);
	qsort(v, k, sizeof(*v), idx_cmp);
	for (size_t i = 0; i < k; i++)
		if (!*n || v[*n - 1] != v[i])
			v[(*n)++] = v[i];
	return v;
}

/* a `deny` entry that covers all of @u, or NULL */
static const struct policy_rule *denied_whole(struct eff *e, const struct policy_rule *u,
					      const struct wd_policy *denied)
{
	const struct policy_rule *d = NULL;
	size_t n;
	uint32_t *v = overlapping(e, denied, u, &n);

	for (size_t i = 0; i < n && !d; i++)
		if (covers(&denied->rules[v[i]], u))
			d = &denied->rules[v[i]];
	free(v);
	return d;
}

/* the denied names inside what @u became (its effective rules from @first on): noted */
static void deny_inside(struct eff *e, const struct policy_rule *u, size_t first,
			const struct wd_policy *denied)
{
	uint32_t *seen = NULL;
	size_t nseen = 0;

	for (size_t k = first; denied && k < e->p->nrules && !e->c.oom; k++) {
		const struct policy_rule *r = &e->p->rules[k];
		size_t n;
		uint32_t *v = overlapping(e, denied, r, &n), *grown;

		grown = n ? realloc(seen, (nseen + n) * sizeof(*seen)) : seen;
		if (n && !grown)
			e->c.oom = 1;
		else
			seen = grown;
		for (size_t i = 0; n && grown && i < n; i++)
			if (covers(r, &denied->rules[v[i]]))
				seen[nseen++] = v[i];
		free(v);
	}
	if (nseen)
		qsort(seen, nseen, sizeof(*seen), idx_cmp);
	for (size_t i = 0; i < nseen; i++) {
		const struct policy_rule *d = &denied->rules[seen[i]];

		if (i && seen[i] == seen[i - 1])
			continue;
		note(e, u->line, u->col,
		     "`%s`: the host's ceiling %s denies `%s` (names under it are refused)",
		     u->text, d->from, d->text);
	}
	free(seen);
}

/* one rule of the user's policy through the ceiling (@any: `allow: any`) */
static void apply_rule(struct eff *e, const struct policy_rule *u, bool any,
		       const struct wd_policy *denied)
{
	const struct wd_policy *ca = e->p->ceiling_allow;
	size_t first = e->p->nrules, n = 0;
	const struct policy_rule *ports_only = NULL, *d;
	struct wd_buf b = WD_BUF_INIT;
	uint32_t *v = NULL;
	bool same;

	d = denied_whole(e, u, denied);
	if (d) {
		note(e, u->line, u->col, "`%s` is dropped: the host's ceiling %s denies `%s`",
		     u->text, d->from, d->text);
		return;
	}
	if (any) {
		struct policy_rule *r = rule_add(&e->c, e->p, &e->cap_rules);

		if (r && !rule_copy(r, u))
			e->p->nrules++;
		else
			e->c.oom = 1;
		deny_inside(e, u, first, denied);
		return;
	}
	v = overlapping(e, ca, u, &n);
	for (size_t i = 0; i < n; i++)
		if (intersect(e, u, &ca->rules[v[i]]) == 0 && !ports_only)
			ports_only = &ca->rules[v[i]];
	free(v);
	if (e->p->nrules == first) {
		if (ports_only)
			note(
			    e, u->line, u->col,
			    "`%s` is dropped: the host's ceiling %s allows `%s` (other ports only)",
			    u->text, ports_only->from, ports_only->text);
		else
			note(e, u->line, u->col,
			     "`%s` is dropped: not allowed by the host's ceiling %s (no rule of "
			     "its allow list covers it)",
			     u->text, e->p->ceiling_from);
		return;
	}
	same = e->p->nrules == first + 1 && e->p->rules[first].text && u->text &&
	       !strcmp(e->p->rules[first].text, u->text);
	for (size_t i = first; !same && i < e->p->nrules; i++)
		if (wd_buf_printf(&b, "%s`%s` (%s)", i > first ? ", " : "",
				  e->p->rules[i].text ? e->p->rules[i].text : "?",
				  e->p->rules[i].from))
			e->c.oom = 1;
	if (!same)
		note(e, u->line, u->col, "`%s` is narrowed by the host's ceiling to %s", u->text,
		     wd_buf_cstr(&b));
	wd_buf_free(&b);
	deny_inside(e, u, first, denied);
}

/* each tool's own rules of @user (mcp.tools.NAME.network) bounded by @c exactly as its
 * network.allow is, into @e's tool_net. Return: 0, -E2BIG or -ENOMEM */
/* NOLINTNEXTLINE(misc-no-recursion): one level: a tool's rules are a plain policy, no tools */
static int apply_tools(const struct policy_ceiling *c, const struct policy_who *who,
		       const struct wd_policy *user, struct wd_policy *e)
{
	if (!user->ntool_net)
		return 0;
	e->tool_net = calloc(user->ntool_net, sizeof(*e->tool_net));
	if (!e->tool_net)
		return -ENOMEM;
	for (size_t i = 0; i < user->ntool_net; i++) {
		const struct policy_tool_net *u = &user->tool_net[i];
		struct policy_tool_net *t = &e->tool_net[e->ntool_net];
		int r;

		t->tool = strdup(u->tool);
		if (!t->tool)
			return -ENOMEM;
		t->line = u->line;
		t->col = u->col;
		e->ntool_net++;
		r = policy_ceiling_apply(c, who, u->net, &t->net);
		if (r)
			return r;
	}
	return 0;
}

/* NOLINTNEXTLINE(misc-no-recursion): through apply_tools(), one level */
int policy_ceiling_apply(const struct policy_ceiling *c, const struct policy_who *who,
			 const struct wd_policy *user, struct wd_policy **ret)
{
	const struct policy_ceil_scope *u = user_scope(c, who), **g = NULL, **src = NULL;
	const struct policy_rule **allow = NULL, **deny = NULL;
	size_t ng = 0, nsrc = 0, nallow = 0, ndeny = 0;
	struct eff e = {.c = {.d = NULL}};
	bool any = false;
	int r = 0;

	e.p = calloc(1, sizeof(*e.p));
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	g = calloc(c->ngroups + 1, sizeof(*g));
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	src = calloc(c->ngroups + 1, sizeof(*src));
	if (!e.p || !g || !src) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < c->ngroups; i++)
		if (in_groups(who, c->groups[i].name))
			g[ng++] = &c->groups[i];
	/* allow: the user's, else their groups' together, else the top's */
	if (u && u->has_allow) {
		src[nsrc++] = u;
	} else {
		for (size_t i = 0; i < ng; i++)
			if (g[i]->has_allow)
				src[nsrc++] = g[i];
		if (!nsrc)
			src[nsrc++] = &c->top;
	}
	for (size_t i = 0; i < nsrc; i++) {
		any |= src[i]->has_allow && src[i]->allow_any;
		nallow += src[i]->nallow;
	}
	/* deny: every scope in force */
	ndeny = c->top.ndeny + (u ? u->ndeny : 0);
	for (size_t i = 0; i < ng; i++)
		ndeny += g[i]->ndeny;
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	allow = calloc(nallow + 1, sizeof(*allow));
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	deny = calloc(ndeny + 1, sizeof(*deny));
	if (!allow || !deny) {
		r = -ENOMEM;
		goto out;
	}
	nallow = ndeny = 0;
	for (size_t i = 0; i < nsrc; i++)
		for (size_t k = 0; k < src[i]->nallow; k++)
			allow[nallow++] = &src[i]->allow[k];
	for (size_t k = 0; k < c->top.ndeny; k++)
		deny[ndeny++] = &c->top.deny[k];
	for (size_t i = 0; i < ng; i++)
		for (size_t k = 0; k < g[i]->ndeny; k++)
			deny[ndeny++] = &g[i]->deny[k];
	for (size_t k = 0; u && k < u->ndeny; k++)
		deny[ndeny++] = &u->deny[k];

	e.p->bounded = true;
	e.p->version = user->version;
	e.p->file = pctx_strdup(&e.c, user->file ? user->file : "policy");
	e.p->ceiling_from = join_from(&e.c, src, nsrc);
	e.p->unbounded = rules_policy(&e.c, user->rules, NULL, user->nrules, false, false);
	if (!any)
		e.p->ceiling_allow = rules_policy(&e.c, NULL, allow, nallow, false, true);
	if (ndeny)
		e.p->denied = rules_policy(&e.c, NULL, deny, ndeny, true, true);
	if (e.c.oom)
		goto oom;
	for (size_t i = 0; i < user->nrules && !e.c.oom && !e.too_big; i++)
		apply_rule(&e, &user->rules[i], any, e.p->denied);
	if (e.too_big) {
		r = -E2BIG;
		goto out;
	}
	apply_caps(&e, c, u, g, ng);
	apply_limits(&e, user);
	r = apply_tools(c, who, user, e.p);
	if (r == -ENOMEM)
		goto oom;
	if (r)
		goto out;
	if (!e.c.oom && policy_ask_copy(e.p, user))
		e.c.oom = 1;
	if (!e.c.oom && policy_matcher_build(e.p))
		e.c.oom = 1;
	if (e.c.oom)
		goto oom;
	*ret = e.p;
	e.p = NULL;
	goto out;
oom:
	r = -ENOMEM;
out:
	policy_free(e.p);
	free(g);
	free(src);
	free(allow);
	free(deny);
	return r;
}

/* ------------------------------------------------------------ why */

bool policy_ceiling_why(const struct wd_policy *p, const char *host, uint16_t port,
			struct policy_why *out)
{
	return policy_ceiling_why_proto(p, host, port, POLICY_PROTO_TCP, out);
}

bool policy_ceiling_why_proto(const struct wd_policy *p, const char *host, uint16_t port,
			      enum policy_proto proto, struct policy_why *out)
{
	int m, d;

	if (!p || !p->bounded || !p->unbounded || !host)
		return false;
	m = port ? policy_match_proto(p->unbounded, host, port, proto)
		 : policy_match_name(p->unbounded, host);
	if (m < 0)
		return false; /* the user's own policy refuses it */
	memset(out, 0, sizeof(*out));
	if (p->denied && (d = policy_match(p->denied, host, 0)) >= 0) {
		out->denied = true;
		out->from = p->denied->rules[d].from;
		out->rule = p->denied->rules[d].text;
		return true;
	}
	if ((port ? policy_match_proto(p, host, port, proto) : policy_match_name(p, host)) >= 0 ||
	    !p->ceiling_allow)
		return false;
	m = policy_match_name(p->ceiling_allow, host);
	if (m >= 0 && p->ceiling_allow->rules[m].proto == proto) { /* its rule, other ports */
		out->from = p->ceiling_allow->rules[m].from;
		out->rule = p->ceiling_allow->rules[m].text;
	} else {
		out->from = p->ceiling_from;
	}
	return true;
}

bool policy_ceiling_why_addr(const struct wd_policy *p, int family, const void *addr, uint16_t port,
			     struct policy_why *out)
{
	if (!p || !p->bounded || !p->unbounded ||
	    policy_match_addr(p->unbounded, family, addr, port) < 0 ||
	    policy_match_addr(p, family, addr, port) >= 0 || !p->ceiling_allow)
		return false;
	memset(out, 0, sizeof(*out));
	out->from = p->ceiling_from;
	for (size_t i = 0; i < p->ceiling_allow->nrules; i++) {
		const struct policy_rule *r = &p->ceiling_allow->rules[i];

		if (r->kind == POLICY_RULE_CIDR && r->family == family &&
		    wd_prefix_contains(family, r->addr, r->prefix, addr)) {
			out->from = r->from;
			out->rule = r->text;
			break;
		}
	}
	return true;
}

const char *policy_ceiling_reason(const struct policy_why *w, char *buf, size_t size)
{
	if (w->denied)
		snprintf(buf, size, "denied by the host's ceiling %s (`%s`)", w->from, w->rule);
	else if (w->rule)
		snprintf(buf, size,
			 "not allowed by the host's ceiling %s (its rule `%s` is for other ports)",
			 w->from, w->rule);
	else
		snprintf(buf, size, "not allowed by the host's ceiling %s", w->from);
	return buf;
}

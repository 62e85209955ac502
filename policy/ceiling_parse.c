/* ceiling_parse.c - the operator's ceiling (the gateway config's `ceiling` section): its
 * strict parse into struct policy_ceiling, every rule, cap and scope with where the operator's
 * file says it (`from`). Pure: no I/O. What the ceiling does to a run's policy is
 * ceiling_apply.c's, its rendering ceiling_render.c's.
 */
#include "policy/policy_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

enum { CEIL_ALLOW, CEIL_DENY, CEIL_LIMITS, CEIL_FROM, CEIL_USERS, CEIL_GROUPS, CEIL_N };
/* a user's or group's override takes the first CEIL_USERS keys */
static const char *const ceil_keys[CEIL_N] = {"allow", "deny", "limits", "from", "users", "groups"};

enum { CAPV_MAX, CAPV_FROM, CAPV_N };
static const char *const capv_keys[CAPV_N] = {"max", "from"};

/* the caps' ranges (index = enum policy_cap; their names: policy_cap_name()) */
static const struct {
	uint64_t min, max;
} caps[POLICY_CAP_N] = {
    [POLICY_CAP_RUNS] = {1, 100000},	   [POLICY_CAP_CONNECTIONS] = {1, 1000000},
    [POLICY_CAP_MEMORY_MB] = {1, 1048576}, [POLICY_CAP_PIDS] = {1, 4194304},
    [POLICY_CAP_TIMEOUT_S] = {1, 604800},  [POLICY_CAP_DNS_QUERIES_PER_S] = {1, 1000000},
};

/* the longest `from` */
#define FROM_MAX 256
/* the most users or groups in a ceiling */
#define SCOPES_MAX 4096

/* ------------------------------------------------------------ parse */

/* "FILE:LINE" of @n */
static char *pos_of(struct pctx *c, const char *file, const struct policy_yt_node *n)
{
	char buf[FROM_MAX + 32];

	snprintf(buf, sizeof(buf), "%s:%d", file, n->line);
	return pctx_strdup(c, buf);
}

/* a `from` value: 1..FROM_MAX printable characters. Return: a copy, or NULL (reported) */
static char *from_value(struct pctx *c, const struct policy_yt_node *n, const char *what)
{
	const char *s = policy_yt_str(c->d, n, what);

	if (!s)
		return NULL;
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e) {
			policy_diag_err(c->d, n,
					"%s: a control or non-ASCII character; expected text "
					"like \"/etc/warden/gateway.yaml:12\"",
					what);
			return NULL;
		}
	if (strlen(s) > FROM_MAX) {
		policy_diag_err(c->d, n, "%s: %zu characters; expected at most %d", what, strlen(s),
				FROM_MAX);
		return NULL;
	}
	return pctx_strdup(c, s);
}

static void parse_allow(struct pctx *c, struct policy_ceil_scope *s, const struct policy_yt_node *n,
			const char *file, const char *where)
{
	s->has_allow = true;
	if (n->type == POLICY_YT_SCALAR && n->plain && !strcmp(n->str, "any")) {
		s->allow_any = true;
		return;
	}
	if (n->type != POLICY_YT_SEQ) {
		char desc[96];

		policy_yt_describe(n, desc, sizeof(desc));
		policy_diag_err(c->d, n,
				"%s: found %s; expected a list of rules (network.allow syntax) or "
				"`any`",
				where, desc);
		return;
	}
	s->allow = pctx_calloc(c, n->nkids, sizeof(*s->allow));
	if (!s->allow)
		return;
	for (size_t i = 0; i < n->nkids; i++) {
		struct policy_rule *r = &s->allow[s->nallow];
		const struct policy_yt_node *from;

		if (policy_rule_item(c, n->kids[i], where, r, &from))
			continue;
		r->from = from ? from_value(c, from, "from") : pos_of(c, file, n->kids[i]);
		if (!r->from) {
			policy_rule_clear(r);
			continue;
		}
		s->nallow++;
	}
}

static void parse_deny(struct pctx *c, struct policy_ceil_scope *s, const struct policy_yt_node *n,
		       const char *file, const char *where)
{
	if (policy_yt_want_seq(c->d, n, where))
		return;
	s->deny = pctx_calloc(c, n->nkids, sizeof(*s->deny));
	if (!s->deny)
		return;
	for (size_t i = 0; i < n->nkids; i++) {
		const struct policy_yt_node *item = n->kids[i], *from = NULL, *ports = NULL;
		struct policy_rule *r = &s->deny[s->ndeny];

		if (item->type == POLICY_YT_MAP) {
			for (size_t k = 0; k + 1 < item->nkids; k += 2)
				if (item->kids[k]->type == POLICY_YT_SCALAR &&
				    !strcmp(item->kids[k]->str, "ports"))
					ports = item->kids[k];
		}
		if (policy_rule_item(c, item, where, r, &from))
			continue;
		if (r->kind == POLICY_RULE_CIDR || ports ||
		    (item->type == POLICY_YT_SCALAR && strchr(item->str, ':'))) {
			policy_diag_err(
			    c->d, ports ? ports : item,
			    "%s: found `%s`; expected a host name or pattern without ports "
			    "(a denied name is denied on every port; leave address ranges out "
			    "of `allow` instead)",
			    where, r->text ? r->text : "?");
			policy_rule_clear(r);
			continue;
		}
		r->nports = 0; /* every port */
		free(r->text);
		r->text = NULL;
		policy_rule_finish(c, r); /* the text without ports */
		r->from = from ? from_value(c, from, "from") : pos_of(c, file, item);
		if (!r->from) {
			policy_rule_clear(r);
			continue;
		}
		s->ndeny++;
	}
}

static void parse_caps(struct pctx *c, struct policy_ceil_scope *s, const struct policy_yt_node *n,
		       const char *file, const char *where)
{
	const char *names[POLICY_CAP_N];
	const struct policy_yt_node *v[POLICY_CAP_N];
	char what[160];

	for (int i = 0; i < POLICY_CAP_N; i++)
		names[i] = policy_cap_name(i);
	snprintf(what, sizeof(what), "`%.120s`", where);
	if (policy_yt_map_keys(c->d, n, what, names, POLICY_CAP_N, v))
		return;
	for (int i = 0; i < POLICY_CAP_N; i++) {
		const struct policy_yt_node *val = v[i], *from = NULL;
		uint64_t x;

		if (!val)
			continue;
		snprintf(what, sizeof(what), "%.120s.%s", where, policy_cap_name(i));
		if (val->type == POLICY_YT_MAP) {
			const struct policy_yt_node *cv[CAPV_N];
			char inner[200];

			snprintf(inner, sizeof(inner), "`%.160s`", what);
			if (policy_yt_map_keys(c->d, val, inner, capv_keys, CAPV_N, cv))
				continue;
			if (!cv[CAPV_MAX]) {
				policy_diag_err(c->d, val,
						"%s: no `max`; expected { max: N, from: TEXT }",
						what);
				continue;
			}
			from = cv[CAPV_FROM];
			val = cv[CAPV_MAX];
		}
		if (policy_yt_uint(c->d, val, what, caps[i].min, caps[i].max, &x))
			continue;
		s->caps[i] = x;
		s->caps_from[i] = from ? from_value(c, from, "from") : pos_of(c, file, val);
		if (!s->caps_from[i])
			s->caps[i] = 0;
	}
}

/* one scope: the top level (@top) or an override; @key is the node its position is at */
static void parse_scope(struct pctx *c, struct policy_ceil_scope *s,
			const struct policy_yt_node *key, const struct policy_yt_node *n,
			const char *file, const char *where, bool top,
			const struct policy_yt_node **v)
{
	char what[160];

	snprintf(what, sizeof(what), "`%.120s`", where);
	for (int i = 0; i < CEIL_N; i++)
		v[i] = NULL;
	if (policy_yt_map_keys(c->d, n, what, ceil_keys, top ? CEIL_N : CEIL_USERS, v))
		return;
	if (v[CEIL_ALLOW]) {
		snprintf(what, sizeof(what), "%.120s.allow", where);
		parse_allow(c, s, v[CEIL_ALLOW], file, what);
	}
	if (v[CEIL_DENY]) {
		snprintf(what, sizeof(what), "%.120s.deny", where);
		parse_deny(c, s, v[CEIL_DENY], file, what);
	}
	if (v[CEIL_LIMITS]) {
		snprintf(what, sizeof(what), "%.120s.limits", where);
		parse_caps(c, s, v[CEIL_LIMITS], file, what);
	}
	if (v[CEIL_FROM])
		s->from = from_value(c, v[CEIL_FROM], "from");
	else
		s->from = pos_of(c, file, v[CEIL_ALLOW] ? policy_yt_key_of(n, v[CEIL_ALLOW]) : key);
}

/* a user or group name (or a uid in digits for a user) */
static bool scope_name_ok(const char *s)
{
	size_t n = strlen(s);

	return n && n <= 64 && s[0] != '-' &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

static void parse_scopes(struct pctx *c, const struct policy_yt_node *n, const char *file,
			 const char *where, struct policy_ceil_scope **ret, size_t *nret)
{
	const struct policy_yt_node *v[CEIL_N];
	struct policy_ceil_scope *s;

	if (n->type != POLICY_YT_MAP) {
		char desc[96];

		policy_yt_describe(n, desc, sizeof(desc));
		policy_diag_err(c->d, n, "%s: found %s; expected a mapping of names to overrides",
				where, desc);
		return;
	}
	if (n->nkids / 2 > SCOPES_MAX) {
		policy_diag_err(c->d, n, "%s: %zu entries; expected at most %d", where,
				n->nkids / 2, SCOPES_MAX);
		return;
	}
	s = pctx_calloc(c, n->nkids / 2, sizeof(*s));
	if (!s)
		return;
	*ret = s;
	for (size_t i = 0; i + 1 < n->nkids; i += 2) {
		const struct policy_yt_node *k = n->kids[i];
		char sub[200];
		bool dup = false;

		if (k->type != POLICY_YT_SCALAR || !scope_name_ok(k->str)) {
			policy_diag_err(
			    c->d, k,
			    "%s: a key is not a name; expected a %s name (letters, digits, "
			    "`.`, `_`, `-`)%s",
			    where, strcmp(where, "ceiling.users") ? "group" : "user",
			    strcmp(where, "ceiling.users") ? "" : " or a uid");
			continue;
		}
		for (size_t j = 0; j < *nret; j++)
			dup |= s[j].name && !strcmp(s[j].name, k->str);
		if (dup) {
			policy_diag_err(c->d, k,
					"%s: `%s` is listed twice; expected each name once", where,
					k->str);
			continue;
		}
		snprintf(sub, sizeof(sub), "%.60s.%.64s", where, k->str);
		s[*nret].name = pctx_strdup(c, k->str);
		if (!s[*nret].name)
			return; /* out of memory: pctx says so */
		parse_scope(c, &s[*nret], k, n->kids[i + 1], file, sub, false, v);
		(*nret)++;
	}
}

static struct policy_ceiling *ceiling_parse(struct pctx *c, const struct policy_yt_node *key,
					    const struct policy_yt_node *n, const char *file)
{
	struct policy_ceiling *ceil = pctx_calloc(c, 1, sizeof(*ceil));
	const struct policy_yt_node *v[CEIL_N];
	size_t errors = c->d->errors;

	if (!ceil)
		return NULL;
	if (policy_yt_is_null(n)) {
		/* `ceiling:` with nothing: nothing is allowed (fail closed), said out loud */
		policy_diag_warn(
		    c->d, n,
		    "ceiling: empty; users' runs may reach nothing (write `allow: [...]`, "
		    "or `allow: any` with `deny`)");
		ceil->top.from = pos_of(c, file, key);
		return ceil;
	}
	ceil->top.name = pctx_strdup(c, "");
	parse_scope(c, &ceil->top, key, n, file, "ceiling", true, v);
	if (v[CEIL_USERS])
		parse_scopes(c, v[CEIL_USERS], file, "ceiling.users", &ceil->users, &ceil->nusers);
	if (v[CEIL_GROUPS])
		parse_scopes(c, v[CEIL_GROUPS], file, "ceiling.groups", &ceil->groups,
			     &ceil->ngroups);
	if (c->oom || c->d->errors > errors) {
		policy_ceiling_free(ceil);
		return NULL;
	}
	if (!ceil->top.has_allow)
		policy_diag_warn(
		    c->d, n,
		    "ceiling: no `allow`; users' runs may reach nothing unless an override "
		    "allows it (write `allow: [...]`, or `allow: any`)");
	return ceil;
}

struct policy_ceiling *policy_ceiling_parse(struct policy_diags *d,
					    const struct policy_yt_node *key,
					    const struct policy_yt_node *n, const char *file,
					    int *ret_err)
{
	struct pctx c = {.d = d};
	struct policy_ceiling *ceil = ceiling_parse(&c, key, n, file);

	*ret_err = 0;
	if (c.oom) {
		policy_ceiling_free(ceil);
		*ret_err = -ENOMEM;
		return NULL;
	}
	if (!ceil)
		*ret_err = -EINVAL;
	return ceil;
}

/* network.c - the policy's `network` section: each `network.allow` item (a host name, a
 * "host:port" string, or a { host | cidr, ports } map) -> struct policy_rule, checked and
 * normalised, ports sorted and deduplicated, its text made for the audit log (pure: no
 * I/O). A part of the parser in parse.c, which calls policy_parse_network().
 */
#include "policy/policy_internal.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

enum { NET_ALLOW, NET_ASK, NET_ASK_TIMEOUT, NET_N };
static const char *const net_keys[NET_N] = {"allow", "ask", "ask_timeout"};

/* RULE_FROM last: only a ceiling's rules take it (policy_rule_item() with @from) */
enum { RULE_HOST, RULE_CIDR, RULE_PORTS, RULE_PROTO, RULE_FROM, RULE_N };
static const char *const rule_keys[RULE_N] = {"host", "cidr", "ports", "proto", "from"};

static const uint16_t default_ports[] = {80, 443};

/*
 * Is @text a URL (`scheme://host...`)? Then report at @at that a host name is expected and
 * suggest the rule the URL meant: `host:PORT`, PORT being the URL's own or its scheme's (443 for
 * https and wss, 80 for http and ws). Return: true when reported.
 */
static bool report_url(struct pctx *c, const struct policy_yt_node *at, const char *what,
		       const char *text)
{
	const char *sep = strstr(text, "://"), *h, *end, *at_sign;
	size_t slen, hlen;
	const char *port = "";

	if (!sep)
		return false;
	slen = (size_t)(sep - text);
	h = sep + 3;
	end = h + strcspn(h, "/?#");
	at_sign = memchr(h, '@', (size_t)(end - h));
	if (at_sign)
		h = at_sign + 1;
	hlen = (size_t)(end - h);
	if (!memchr(h, ':', hlen)) {
		if ((slen == 5 && !strncasecmp(text, "https", 5)) ||
		    (slen == 3 && !strncasecmp(text, "wss", 3)))
			port = ":443";
		else if ((slen == 4 && !strncasecmp(text, "http", 4)) ||
			 (slen == 2 && !strncasecmp(text, "ws", 2)))
			port = ":80";
	}
	if (hlen == 0 || hlen > 253) {
		policy_diag_err(c->d, at, "%s: `%s`: expected a host name, not a URL", what, text);
		return true;
	}
	policy_diag_err(c->d, at,
			"%s: `%s`: expected a host name, not a URL; did you mean "
			"`%.*s%s`?",
			what, text, (int)hlen, h, port);
	return true;
}

/* `host:` with a port in it (not an IPv6 literal, which parse_host() reports): report at @at.
 * Return: true when reported. */
static bool report_host_port(struct pctx *c, const struct policy_yt_node *at, const char *s)
{
	if (!strchr(s, ':') || wd_name_is_ip_literal(s) || s[0] == '[')
		return false;
	policy_diag_err(
	    c->d, at, "host: found `%s`; expected a name without a port (put ports in `ports`)", s);
	return true;
}

/*
 * Check a host pattern (exact or `*.suffix`) and fill @r's kind and host.
 * Return: 0, or -EINVAL after reporting at @at.
 */
static int parse_host(struct pctx *c, const struct policy_yt_node *at, const char *what,
		      const char *text, struct policy_rule *r)
{
	char norm[256];
	const char *name = text, *why, *ssrf;

	if (report_url(c, at, what, text))
		return -EINVAL;
	if (wd_name_is_ip_literal(text) || text[0] == '[') {
		policy_diag_err(c->d, at,
				"%s: `%s` is an IP address; expected a host name (allow "
				"addresses with { cidr: \"ADDRESS/PREFIX\", ports: [PORT] })",
				what, text);
		return -EINVAL;
	}
	if (strchr(text, '*')) {
		if (strncmp(text, "*.", 2) || strchr(text + 2, '*')) {
			policy_diag_err(c->d, at,
					"%s: found `%s`; a wildcard must be the whole leftmost "
					"label, like `*.example.com`",
					what, text);
			return -EINVAL;
		}
		name = text + 2;
	}
	why = policy_host_fold(name, norm, sizeof(norm));
	if (why) {
		policy_diag_err(c->d, at, "%s: `%s` is not a valid host name: %s", what, text, why);
		return -EINVAL;
	}
	if (name != text && !strchr(norm, '.')) {
		policy_diag_err(c->d, at,
				"%s: `%s` covers a whole top-level domain; expected a wildcard "
				"over a registered name, like `*.example.%s`",
				what, text, norm);
		return -EINVAL;
	}
	ssrf = policy_host_ssrf_class(norm);
	if (ssrf)
		policy_diag_add(c->d, POLICY_DIAG_WARNING, at->line, at->col,
				"%s: `%s` names %s; the gateway refuses those addresses (its SSRF "
				"guard) unless a `cidr` rule names them too, so this rule alone "
				"reaches nothing",
				what, text, ssrf);
	r->kind = name != text ? POLICY_RULE_WILDCARD : POLICY_RULE_HOST;
	r->host = pctx_strdup(c, norm);
	return r->host ? 0 : -ENOMEM;
}

static int set_default_ports(struct pctx *c, struct policy_rule *r)
{
	r->ports = pctx_calloc(c, WD_ARRAY_SIZE(default_ports), sizeof(uint16_t));
	if (!r->ports)
		return -ENOMEM;
	memcpy(r->ports, default_ports, sizeof(default_ports));
	r->nports = WD_ARRAY_SIZE(default_ports);
	return 0;
}

/* "host", "host:port", "*.suffix", "*.suffix:port" */
static int parse_rule_string(struct pctx *c, const struct policy_yt_node *n, struct policy_rule *r,
			     const char *where)
{
	char host[300];
	const char *s = policy_yt_str(c->d, n, where), *colon;
	uint64_t port = 0;

	if (!s)
		return -EINVAL;
	if (report_url(c, n, where, s))
		return -EINVAL;
	colon = strchr(s, ':');
	if (colon && (strchr(colon + 1, ':') || s[0] == '[')) {
		policy_diag_err(
		    c->d, n,
		    "%s: `%s` looks like an IPv6 address; expected a host "
		    "name (allow addresses with { cidr: \"ADDRESS/PREFIX\", ports: [PORT] })",
		    where, s);
		return -EINVAL;
	}
	if (strlen(s) >= sizeof(host)) {
		policy_diag_err(c->d, n,
				"%s: the entry is %zu characters long; expected a "
				"host name of at most 253",
				where, strlen(s));
		return -EINVAL;
	}
	snprintf(host, sizeof(host), "%s", s);
	if (colon) {
		const char *ps = colon + 1;

		host[colon - s] = '\0';
		if (!*ps || strlen(ps) > 5 || strspn(ps, "0123456789") != strlen(ps) ||
		    (port = strtoull(ps, NULL, 10)) < 1 || port > 65535) {
			policy_diag_err(c->d, n,
					"%s: `%s` has the port `%s`; expected a port "
					"from 1 to 65535",
					where, s, ps);
			return -EINVAL;
		}
	}
	if (parse_host(c, n, where, host, r))
		return -EINVAL;
	if (!port)
		return set_default_ports(c, r);
	r->ports = pctx_calloc(c, 1, sizeof(uint16_t));
	if (!r->ports)
		return -ENOMEM;
	r->ports[0] = (uint16_t)port;
	r->nports = 1;
	return 0;
}

static int parse_ports(struct pctx *c, const struct policy_yt_node *n, struct policy_rule *r)
{
	int ret = 0;

	if (policy_yt_want_seq(c->d, n, "ports"))
		return -EINVAL;
	if (n->nkids == 0) {
		policy_diag_err(c->d, n, "ports: found an empty list; expected at least one port");
		return -EINVAL;
	}
	r->ports = pctx_calloc(c, n->nkids, sizeof(uint16_t));
	if (!r->ports)
		return -ENOMEM;
	for (size_t i = 0; i < n->nkids; i++) {
		uint64_t port;

		if (policy_yt_uint(c->d, n->kids[i], "ports", 1, 65535, &port)) {
			ret = -EINVAL;
			continue;
		}
		for (size_t k = 0; k < r->nports; k++)
			if (r->ports[k] == port)
				policy_diag_warn(c->d, n->kids[i], "ports: %llu is listed twice",
						 (unsigned long long)port);
		r->ports[r->nports++] = (uint16_t)port;
	}
	return ret;
}

static int parse_cidr(struct pctx *c, const struct policy_yt_node *n, struct policy_rule *r)
{
	const char *s = policy_yt_str(c->d, n, "cidr");
	struct wd_cidr net;
	char canon[64];

	if (!s)
		return -EINVAL;
	switch (wd_cidr_parse(s, WD_CIDR_BARE, &net)) {
	case WD_CIDR_OK:
		break;
	case WD_CIDR_HOST_BITS:
		wd_cidr_format(net.family, net.addr, net.prefix, canon, sizeof(canon));
		policy_diag_err(c->d, n,
				"cidr: `%s` has host bits set; expected the network address "
				"`%s` (or a /%u for one address)",
				s, canon, net.family == AF_INET ? 32 : 128);
		return -EINVAL;
	case WD_CIDR_MALFORMED:
		policy_diag_err(c->d, n,
				"cidr: found `%s`; expected an address range like "
				"`10.20.0.0/16` or `fd00:1::/64`",
				s);
		return -EINVAL;
	}
	r->family = net.family;
	memcpy(r->addr, net.addr, sizeof(r->addr));
	r->prefix = net.prefix;
	if (r->prefix == 0) {
		policy_diag_err(c->d, n,
				"cidr: `%s` covers every address; expected a narrower range", s);
		return -EINVAL;
	}
	r->kind = POLICY_RULE_CIDR;
	return 0;
}

/* `proto: tcp | udp` into @r->proto. Return: 0, or -EINVAL after reporting at @n */
static int parse_proto(struct pctx *c, const struct policy_yt_node *n, struct policy_rule *r)
{
	const char *s = policy_yt_str(c->d, n, "proto");

	if (!s)
		return -EINVAL;
	if (!strcmp(s, "tcp")) {
		r->proto = POLICY_PROTO_TCP;
	} else if (!strcmp(s, "udp")) {
		r->proto = POLICY_PROTO_UDP;
	} else {
		policy_diag_err(c->d, n, "proto: found `%s`; expected `tcp` or `udp`", s);
		return -EINVAL;
	}
	return 0;
}

static int parse_rule_map(struct pctx *c, const struct policy_yt_node *n, struct policy_rule *r,
			  const char *where, const struct policy_yt_node **from)
{
	const struct policy_yt_node *v[RULE_N] = {NULL};
	char what[96];
	int ret = 0;

	snprintf(what, sizeof(what), "a `%s` rule", where);
	policy_yt_map_keys(c->d, n, what, rule_keys, from ? RULE_N : RULE_FROM, v);
	if (from)
		*from = v[RULE_FROM];
	if (v[RULE_HOST] && v[RULE_CIDR]) {
		policy_diag_err(c->d, policy_yt_key_of(n, v[RULE_CIDR]),
				"%s: a rule has both `host` "
				"and `cidr`; expected one of them (write two rules)",
				where);
		return -EINVAL;
	}
	if (!v[RULE_HOST] && !v[RULE_CIDR]) {
		policy_diag_err(c->d, n,
				"%s: a rule has neither `host` nor `cidr`; expected "
				"{ host: NAME, ports: [...] } or { cidr: RANGE, ports: [...] }",
				where);
		return -EINVAL;
	}
	if (v[RULE_HOST]) {
		const char *s = policy_yt_str(c->d, v[RULE_HOST], "host");

		if (!s || report_url(c, v[RULE_HOST], "host", s) ||
		    report_host_port(c, v[RULE_HOST], s) ||
		    parse_host(c, v[RULE_HOST], "host", s, r))
			ret = -EINVAL;
	} else if (parse_cidr(c, v[RULE_CIDR], r)) {
		ret = -EINVAL;
	}
	if (v[RULE_PROTO] && parse_proto(c, v[RULE_PROTO], r))
		return -EINVAL;
	if (r->proto == POLICY_PROTO_UDP && v[RULE_CIDR]) {
		policy_diag_err(c->d, policy_yt_key_of(n, v[RULE_PROTO]),
				"%s: proto: udp needs a host rule; udp to addresses is not "
				"supported yet",
				where);
		return -EINVAL;
	}
	if (r->proto == POLICY_PROTO_UDP && !v[RULE_PORTS]) {
		policy_diag_err(c->d, n,
				"%s: a `proto: udp` rule has no `ports`; expected explicit "
				"ports, like ports: [3478]",
				where);
		return -EINVAL;
	}
	if (v[RULE_PORTS]) {
		if (parse_ports(c, v[RULE_PORTS], r))
			ret = -EINVAL;
	} else if (v[RULE_CIDR]) {
		policy_diag_err(c->d, n,
				"%s: a `cidr` rule has no `ports`; expected explicit "
				"ports, like ports: [443]",
				where);
		ret = -EINVAL;
	} else if (!ret) {
		ret = set_default_ports(c, r);
	}
	return ret;
}

int policy_rule_item(struct pctx *c, const struct policy_yt_node *item, const char *where,
		     struct policy_rule *r, const struct policy_yt_node **from)
{
	int ret;

	memset(r, 0, sizeof(*r));
	if (from)
		*from = NULL;
	if (item->type == POLICY_YT_SCALAR) {
		ret = parse_rule_string(c, item, r, where);
	} else if (item->type == POLICY_YT_MAP) {
		ret = parse_rule_map(c, item, r, where, from);
	} else {
		policy_diag_err(c->d, item,
				"%s: found a list; expected a host name or "
				"{ host: ..., ports: [...] } / { cidr: ..., ports: [...] }",
				where);
		ret = -EINVAL;
	}
	if (ret) {
		free(r->host);
		free(r->ports);
		memset(r, 0, sizeof(*r));
		return ret;
	}
	r->line = item->line;
	r->col = item->col;
	policy_rule_finish(c, r);
	return 0;
}

static bool same_text(const void *item, const void *key)
{
	return !strcmp(((const struct policy_rule *)item)->text, key);
}

/*
 * network.ask: host names and wildcards as network.allow writes them (ports too), or "*" (any
 * name): a name outside the allow rules but matched here is held while a person is asked
 * (docs/warden-policy.5). The rules make a policy of their own (@p->ask) with its own matcher.
 */
static void parse_ask(struct pctx *c, const struct policy_yt_node *ask)
{
	struct wd_policy *a;

	if (policy_yt_want_seq(c->d, ask, "network.ask"))
		return;
	a = pctx_calloc(c, 1, sizeof(*a));
	if (!a)
		return;
	c->p->ask = a;
	a->version = 1;
	a->rules = pctx_calloc(c, ask->nkids, sizeof(*a->rules));
	if (!a->rules)
		return;
	for (size_t i = 0; i < ask->nkids; i++) {
		const struct policy_yt_node *item = ask->kids[i];
		struct policy_rule *r = &a->rules[a->nrules];

		if (item->type == POLICY_YT_SCALAR && item->str && !strcmp(item->str, "*")) {
			c->p->ask_any = true;
			continue;
		}
		if (policy_rule_item(c, item, "network.ask", r, NULL))
			continue;
		if (r->kind == POLICY_RULE_CIDR) {
			policy_diag_err(c->d, item,
					"network.ask: `%s`: a person is asked about names, not "
					"addresses",
					r->text ? r->text : "cidr");
			policy_rule_clear(r);
			continue;
		}
		if (r->proto == POLICY_PROTO_UDP) {
			policy_diag_err(c->d, item,
					"network.ask: `%s`: a person is asked about connections; "
					"allow udp with a network.allow rule",
					r->text ? r->text : "udp");
			policy_rule_clear(r);
			continue;
		}
		a->nrules++;
	}
	if (!c->oom && policy_matcher_build(a) < 0)
		c->oom = 1;
}

void policy_parse_rules(struct pctx *c, const struct policy_yt_node *seq, const char *where)
{
	struct wd_policy *p = c->p;
	struct wd_htable seen = {0};

	if (policy_yt_want_seq(c->d, seq, where))
		return;
	p->rules = pctx_calloc(c, seq->nkids, sizeof(*p->rules));
	if (!p->rules)
		return;
	/* repeated rules by their text, through a table: comparing each rule with every one
	 * before it took 2 s for 30,000 rules, which a daemon's user could make every user's
	 * traffic wait for (without memory for the table the warning is only skipped) */
	(void)wd_htable_init(&seen, seq->nkids);
	for (size_t i = 0; i < seq->nkids; i++) {
		const struct policy_yt_node *item = seq->kids[i];
		struct policy_rule *r = &p->rules[p->nrules];
		const struct policy_rule *first;
		uint64_t h;

		if (policy_rule_item(c, item, where, r, NULL))
			continue;
		p->nrules++;
		if (!r->text)
			continue;
		h = wd_hash_str(r->text);
		first = wd_htable_find(&seen, h, same_text, r->text);
		if (first)
			policy_diag_warn(c->d, item, "%s: `%s` repeats the rule at line %d", where,
					 r->text, first->line);
		else
			(void)wd_htable_insert(&seen, h, r);
	}
	wd_htable_free(&seen);
}

void policy_parse_network(struct pctx *c, const struct policy_yt_node *n)
{
	const struct policy_yt_node *v[NET_N];
	struct wd_policy *p = c->p;

	if (policy_yt_map_keys(c->d, n, "`network`", net_keys, NET_N, v))
		return;
	if (v[NET_ASK])
		parse_ask(c, v[NET_ASK]);
	if (v[NET_ASK_TIMEOUT]) {
		uint64_t t;

		if (!policy_yt_uint(c->d, v[NET_ASK_TIMEOUT], "network.ask_timeout", 1,
				    POLICY_ASK_TIMEOUT_MAX, &t))
			p->ask_timeout_s = (unsigned)t;
	}
	if (v[NET_ALLOW])
		policy_parse_rules(c, v[NET_ALLOW], "network.allow");
}

int policy_ask_match(const struct wd_policy *p, const char *host, uint16_t port)
{
	int m;

	if (!p || !host)
		return -ENOENT;
	if (p->ask) {
		m = port ? policy_match(p->ask, host, port) : policy_match_name(p->ask, host);
		if (m >= 0)
			return m;
	}
	return p->ask_any ? POLICY_ASK_ANY : -ENOENT;
}

unsigned policy_ask_timeout_s(const struct wd_policy *p)
{
	return p && p->ask_timeout_s ? p->ask_timeout_s : POLICY_ASK_TIMEOUT_DEFAULT;
}

int policy_ask_copy(struct wd_policy *to, const struct wd_policy *from)
{
	const struct wd_policy *f = from->ask;
	struct wd_policy *a;

	to->ask_any = from->ask_any;
	to->ask_timeout_s = from->ask_timeout_s;
	if (!f)
		return 0;
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	to->ask = a;
	a->version = 1;
	a->rules = calloc(f->nrules ? f->nrules : 1, sizeof(*a->rules));
	if (!a->rules)
		return -ENOMEM;
	for (size_t i = 0; i < f->nrules; i++) {
		const struct policy_rule *r = &f->rules[i];
		struct policy_rule *q = &a->rules[a->nrules++];

		*q = (struct policy_rule){
		    .kind = r->kind, .proto = r->proto, .line = r->line, .col = r->col};
		q->host = r->host ? strdup(r->host) : NULL;
		q->text = r->text ? strdup(r->text) : NULL;
		q->ports = calloc(r->nports ? r->nports : 1, sizeof(*q->ports));
		if ((r->host && !q->host) || (r->text && !q->text) || !q->ports)
			return -ENOMEM;
		memcpy(q->ports, r->ports, r->nports * sizeof(*q->ports));
		q->nports = r->nports;
	}
	return policy_matcher_build(a) < 0 ? -ENOMEM : 0;
}

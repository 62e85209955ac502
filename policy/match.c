/* match.c - the compiled network matcher: exact names in one hash table,
 * wildcard suffixes in another, address ranges in a short list.
 *
 * Theory of operation: a rule `api.github.com` is stored under its name in
 * the exact table; a rule `*.github.com` under `github.com` in the wildcard
 * table. To match `a.b.github.com` the matcher looks the whole name up in the
 * exact table, then each proper suffix that starts after a dot
 * (`b.github.com`, `github.com`, `com`) in the wildcard table: one hash
 * lookup per label, whatever the number of rules. So a wildcard matches any
 * depth below its suffix and never the suffix itself (the apex). Several rules
 * may share a key (different ports); every entry with the key is checked and
 * the lowest rule index that allows the port wins, so the answer is "the
 * first rule in file order". Both tables are common/hash.c's wd_htable under
 * the keyed hash: the names looked up come from the sandbox. A suffix is
 * hashed only when some wildcard suffix has its length.
 */
#include "policy/policy_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* a name to look up: @len bytes at @s (a suffix of a longer name, not NUL-terminated) */
struct mkey {
	const char *s;
	size_t len;
};

static bool mentry_eq(const void *item, const void *key)
{
	const struct mentry *e = item;
	const struct mkey *k = key;

	return !strncmp(e->key, k->s, k->len) && !e->key[k->len];
}

static bool has_port(const struct policy_rule *r, uint16_t port)
{
	size_t lo = 0, hi = r->nports;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->ports[mid] == port)
			return true;
		if (r->ports[mid] < port)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* some wildcard suffix is @len bytes long (a suffix of another length need not be hashed) */
static bool has_wild_len(const struct policy_matcher *m, size_t len)
{
	return len < 256 && (m->wild_lens[len / 64] >> (len % 64) & 1);
}

/* lowest rule index under @key (of @len bytes) allowing @port over @proto, or @best (an
 * anyport matcher, a ceiling's denied names, ignores the transport too) */
static int64_t mtable_find(const struct wd_policy *p, struct wd_htable *t, const char *key,
			   size_t len, uint16_t port, enum policy_proto proto, int64_t best)
{
	struct mkey k = {key, len};
	uint64_t h = wd_hash(key, len);
	size_t cursor = 0;
	const struct mentry *e;

	while ((e = wd_htable_next(t, &cursor, h, mentry_eq, &k)))
		if ((best < 0 || e->rule < best) &&
		    (p->matcher->anyport ||
		     (p->rules[e->rule].proto == proto && has_port(&p->rules[e->rule], port))))
			best = e->rule;
	return best;
}

void policy_matcher_free(struct policy_matcher *m)
{
	if (!m)
		return;
	wd_htable_free(&m->exact);
	wd_htable_free(&m->wild);
	free(m->below);
	free(m->names);
	free(m->cidr);
	free(m);
}

int policy_matcher_build(struct wd_policy *p)
{
	struct policy_matcher *m = calloc(1, sizeof(*m));
	size_t len;

	if (!m)
		return -ENOMEM;
	m->names = calloc(p->nrules ? p->nrules : 1, sizeof(*m->names));
	m->cidr = calloc(p->nrules ? p->nrules : 1, sizeof(*m->cidr));
	if (!m->names || !m->cidr)
		goto oom;
	for (size_t i = 0; i < p->nrules; i++) {
		const struct policy_rule *r = &p->rules[i];
		struct mentry *e = &m->names[i];

		e->key = r->host;
		e->rule = (uint32_t)i;
		switch (r->kind) {
		case POLICY_RULE_HOST:
			if (wd_htable_insert(&m->exact, wd_hash_str(r->host), e))
				goto oom;
			break;
		case POLICY_RULE_WILDCARD:
			if (wd_htable_insert(&m->wild, wd_hash_str(r->host), e))
				goto oom;
			len = strlen(r->host);
			if (len < 256)
				m->wild_lens[len / 64] |= 1ULL << (len % 64);
			break;
		case POLICY_RULE_CIDR:
			m->cidr[m->ncidr++] = (uint32_t)i;
			break;
		}
	}
	policy_matcher_free(p->matcher);
	p->matcher = m;
	return 0;
oom:
	policy_matcher_free(m);
	return -ENOMEM;
}

static int mentry_cmp(const void *a, const void *b)
{
	const struct mentry *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : (x->rule > y->rule) - (x->rule < y->rule);
}

int policy_matcher_build_below(struct wd_policy *p)
{
	struct policy_matcher *m = p->matcher;
	size_t n = 0;

	for (size_t i = 0; i < p->nrules; i++)
		for (const char *h = p->rules[i].host; h && *h; h++)
			n += *h == '.';
	m->below = calloc(n ? n : 1, sizeof(*m->below));
	if (!m->below)
		return -ENOMEM;
	for (size_t i = 0; i < p->nrules; i++)
		for (const char *h = p->rules[i].host; h && *h; h++)
			if (*h == '.') {
				m->below[m->nbelow].key = h + 1;
				m->below[m->nbelow++].rule = (uint32_t)i;
			}
	qsort(m->below, m->nbelow, sizeof(*m->below), mentry_cmp);
	return 0;
}

/* the rules below @name (the @below range whose suffix it is) into @out; Return: the new count */
static size_t collect_below(const struct policy_matcher *m, const char *name, uint32_t *out,
			    size_t max, size_t n)
{
	size_t lo = 0, hi = m->nbelow;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(m->below[mid].key, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < m->nbelow && !strcmp(m->below[lo].key, name); lo++, n++)
		if (n < max)
			out[n] = m->below[lo].rule;
	return n;
}

/* every rule under @key (@len bytes) of @t into @out; Return: the new count */
static size_t collect(struct wd_htable *t, const char *key, size_t len, uint32_t *out, size_t max,
		      size_t n)
{
	struct mkey k = {key, len};
	uint64_t h = wd_hash(key, len);
	size_t cursor = 0;
	const struct mentry *e;

	while ((e = wd_htable_next(t, &cursor, h, mentry_eq, &k))) {
		if (n < max)
			out[n] = e->rule;
		n++;
	}
	return n;
}

size_t policy_matcher_overlapping(const struct wd_policy *p, bool wild, const char *name,
				  uint32_t *out, size_t max)
{
	struct policy_matcher *m = p ? p->matcher : NULL;
	size_t len, n = 0;

	if (!m || !name)
		return 0;
	len = strlen(name);
	if (wild) {
		n = collect(&m->wild, name, len, out, max, n);
		n = collect_below(m, name, out, max, n);
	} else {
		n = collect(&m->exact, name, len, out, max, n);
	}
	for (size_t i = 0; i < len; i++)
		if (name[i] == '.')
			n = collect(&m->wild, name + i + 1, len - i - 1, out, max, n);
	return n;
}

int policy_matcher_build_anyport(struct wd_policy *p)
{
	int ret = policy_matcher_build(p);

	if (!ret)
		p->matcher->anyport = true;
	return ret;
}

int policy_match_addr(const struct wd_policy *p, int family, const void *addr, uint16_t port)
{
	const struct policy_matcher *m = p ? p->matcher : NULL;

	if (!m || !addr || (family != AF_INET && family != AF_INET6))
		return -ENOENT;
	for (size_t i = 0; i < m->ncidr; i++) {
		const struct policy_rule *r = &p->rules[m->cidr[i]];

		if (r->family == family && wd_prefix_contains(family, r->addr, r->prefix, addr) &&
		    has_port(r, port))
			return (int)m->cidr[i];
	}
	return -ENOENT;
}

/* an address literal ("10.0.0.1", "::1", "[::1]") matched against the cidr rules */
static int match_literal(const struct wd_policy *p, const char *host, uint16_t port)
{
	uint8_t addr[16];
	char tmp[64];
	size_t len = strlen(host);

	if (inet_pton(AF_INET, host, addr) == 1)
		return policy_match_addr(p, AF_INET, addr, port);
	if (inet_pton(AF_INET6, host, addr) == 1)
		return policy_match_addr(p, AF_INET6, addr, port);
	if (len > 2 && len < sizeof(tmp) && host[0] == '[' && host[len - 1] == ']') {
		memcpy(tmp, host + 1, len - 2);
		tmp[len - 2] = '\0';
		if (inet_pton(AF_INET6, tmp, addr) == 1)
			return policy_match_addr(p, AF_INET6, addr, port);
	}
	return -ENOENT;
}

/* NOLINTNEXTLINE(misc-no-recursion): one level: an effective policy's `denied` has none */
int policy_match_proto(const struct wd_policy *p, const char *host, uint16_t port,
		       enum policy_proto proto)
{
	struct policy_matcher *m = p ? p->matcher : NULL;
	char name[256];
	int64_t best;
	size_t len;

	if (!m || !host)
		return -ENOENT;
	/* an address never passes as a name (last label all digits, or a `:`) */
	if (policy_host_fold(host, name, sizeof(name)))
		return proto == POLICY_PROTO_TCP ? match_literal(p, host, port) : -ENOENT;
	if (p->denied && policy_match_proto(p->denied, name, port, proto) >= 0)
		return -EACCES; /* a ceiling's denied name: before any rule */
	len = strlen(name);
	best = mtable_find(p, &m->exact, name, len, port, proto, -1);
	for (size_t i = 0; i < len; i++)
		if (name[i] == '.' && has_wild_len(m, len - i - 1))
			best =
			    mtable_find(p, &m->wild, name + i + 1, len - i - 1, port, proto, best);
	return best < 0 ? -ENOENT : (int)best;
}

int policy_match(const struct wd_policy *p, const char *host, uint16_t port)
{
	return policy_match_proto(p, host, port, POLICY_PROTO_TCP);
}

int policy_match_name(const struct wd_policy *p, const char *host)
{
	int best = -ENOENT;

	/* the first rule that allows the name on one of its own ports */
	for (size_t i = 0; p && i < p->nrules; i++) {
		int m;

		if (p->rules[i].kind == POLICY_RULE_CIDR || (best >= 0 && (size_t)best < i))
			continue;
		m = policy_match_proto(p, host, p->rules[i].ports[0], p->rules[i].proto);
		if (m == -EACCES)
			return m;
		if (m >= 0 && (best < 0 || m < best))
			best = m;
	}
	return best;
}

bool policy_allows(const struct wd_policy *p, const char *host, uint16_t port)
{
	return policy_match(p, host, port) >= 0;
}

bool policy_allows_addr(const struct wd_policy *p, int family, const void *addr, uint16_t port)
{
	return policy_match_addr(p, family, addr, port) >= 0;
}

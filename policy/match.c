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
 * first rule in file order". Tables use open addressing with linear probing
 * and are never deleted from, so all entries of a key lie between its home
 * slot and the next empty slot.
 */
#include "policy/policy_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

struct mentry {
	const char *key; /* NULL: empty slot; points into the rule */
	uint32_t hash;
	uint32_t rule;
};

struct mtable {
	struct mentry *slots;
	size_t mask;
};

struct policy_matcher {
	struct mtable exact;
	struct mtable wild;
	uint32_t *cidr; /* rule indices of the cidr rules, in order */
	size_t ncidr;
};

static uint32_t fnv1a(const char *s, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++) {
		h ^= (uint8_t)s[i];
		h *= 16777619u;
	}
	return h;
}

static int mtable_init(struct mtable *t, size_t n)
{
	size_t size = 8;

	while (size < n * 2)
		size *= 2;
	t->slots = calloc(size, sizeof(*t->slots));
	if (!t->slots)
		return -ENOMEM;
	t->mask = size - 1;
	return 0;
}

static void mtable_add(struct mtable *t, const char *key, uint32_t rule)
{
	uint32_t h = fnv1a(key, strlen(key));
	size_t i = h & t->mask;

	while (t->slots[i].key)
		i = (i + 1) & t->mask;
	t->slots[i].key = key;
	t->slots[i].hash = h;
	t->slots[i].rule = rule;
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

/* lowest rule index under @key (of @len bytes) allowing @port, or @best */
static int64_t mtable_find(const struct wd_policy *p, const struct mtable *t, const char *key,
			   size_t len, uint16_t port, int64_t best)
{
	uint32_t h = fnv1a(key, len);

	for (size_t i = h & t->mask; t->slots[i].key; i = (i + 1) & t->mask) {
		const struct mentry *e = &t->slots[i];

		if (e->hash != h || strncmp(e->key, key, len) || e->key[len])
			continue;
		if ((best < 0 || e->rule < best) && has_port(&p->rules[e->rule], port))
			best = e->rule;
	}
	return best;
}

void matcher_free(struct policy_matcher *m)
{
	if (!m)
		return;
	free(m->exact.slots);
	free(m->wild.slots);
	free(m->cidr);
	free(m);
}

int matcher_build(struct wd_policy *p)
{
	struct policy_matcher *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	if (mtable_init(&m->exact, p->nrules) || mtable_init(&m->wild, p->nrules))
		goto oom;
	m->cidr = calloc(p->nrules ? p->nrules : 1, sizeof(*m->cidr));
	if (!m->cidr)
		goto oom;
	for (size_t i = 0; i < p->nrules; i++) {
		const struct policy_rule *r = &p->rules[i];

		switch (r->kind) {
		case POLICY_RULE_HOST:
			mtable_add(&m->exact, r->host, (uint32_t)i);
			break;
		case POLICY_RULE_WILDCARD:
			mtable_add(&m->wild, r->host, (uint32_t)i);
			break;
		case POLICY_RULE_CIDR:
			m->cidr[m->ncidr++] = (uint32_t)i;
			break;
		}
	}
	matcher_free(p->matcher);
	p->matcher = m;
	return 0;
oom:
	matcher_free(m);
	return -ENOMEM;
}

int policy_match_addr(const struct wd_policy *p, int family, const void *addr, uint16_t port)
{
	const struct policy_matcher *m = p ? p->matcher : NULL;

	if (!m || !addr || (family != AF_INET && family != AF_INET6))
		return -ENOENT;
	for (size_t i = 0; i < m->ncidr; i++) {
		const struct policy_rule *r = &p->rules[m->cidr[i]];

		if (r->family == family && net_prefix_contains(family, r->addr, r->prefix, addr) &&
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

int policy_match(const struct wd_policy *p, const char *host, uint16_t port)
{
	const struct policy_matcher *m = p ? p->matcher : NULL;
	char name[256];
	int64_t best;
	size_t len;

	if (!m || !host)
		return -ENOENT;
	/* an address never passes as a name (last label all digits, or a `:`) */
	if (host_normalise(host, name, sizeof(name)) != HOST_OK)
		return match_literal(p, host, port);
	len = strlen(name);
	best = mtable_find(p, &m->exact, name, len, port, -1);
	for (size_t i = 0; i < len; i++)
		if (name[i] == '.')
			best = mtable_find(p, &m->wild, name + i + 1, len - i - 1, port, best);
	return best < 0 ? -ENOENT : (int)best;
}

bool policy_allows(const struct wd_policy *p, const char *host, uint16_t port)
{
	return policy_match(p, host, port) >= 0;
}

bool policy_allows_addr(const struct wd_policy *p, int family, const void *addr, uint16_t port)
{
	return policy_match_addr(p, family, addr, port) >= 0;
}

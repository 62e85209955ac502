/* util.c - small gateway helpers: address conversions and a fast PRNG. */
#include "common/common.h"
#include "gateway/addr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

size_t gw_addr_len(int family)
{
	return wd_addr_len(family);
}

bool gw_addr_eq(const struct gw_addr *x, const struct gw_addr *y)
{
	return x->family == y->family && x->family && !memcmp(x->a, y->a, gw_addr_len(x->family));
}

int gw_addr_from_sa(const struct sockaddr_storage *ss, struct gw_addr *a, uint16_t *port)
{
	memset(a, 0, sizeof(*a));
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;

		a->family = AF_INET;
		memcpy(a->a, &s4->sin_addr, 4);
		if (port)
			*port = ntohs(s4->sin_port);
		return 0;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;

		if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
			a->family = AF_INET;
			memcpy(a->a, s6->sin6_addr.s6_addr + 12, 4);
		} else {
			a->family = AF_INET6;
			memcpy(a->a, &s6->sin6_addr, 16);
		}
		if (port)
			*port = ntohs(s6->sin6_port);
		return 0;
	}
	return -EAFNOSUPPORT;
}

socklen_t gw_addr_to_sa(const struct gw_addr *a, uint16_t port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (a->family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		memcpy(&s4->sin_addr, a->a, 4);
		return sizeof(*s4);
	}
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	s6->sin6_family = AF_INET6;
	s6->sin6_port = htons(port);
	memcpy(&s6->sin6_addr, a->a, 16);
	return sizeof(*s6);
}

const char *gw_addr_str(const struct gw_addr *a, char *out, size_t size)
{
	if (!a->family || !inet_ntop(a->family, a->a, out, (socklen_t)size))
		snprintf(out, size, "?");
	return out;
}

int gw_addr_parse(const char *s, struct gw_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, s, a->a) == 1) {
		a->family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, a->a) == 1) {
		a->family = AF_INET6;
		return 0;
	}
	return -EINVAL;
}

void gw_rng_seed(struct gw_rng *r, uint64_t seed)
{
	r->s = seed ? seed : 0x9e3779b97f4a7c15ull;
}

uint64_t gw_rng_next(struct gw_rng *r)
{
	/* xorshift64* */
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dull;
}

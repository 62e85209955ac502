/* net.c - address ranges ("10.20.0.0/16", "fd00:1::/64"): the one strict parser, the
 * formatter and the prefix arithmetic that policies, the gateway and netns/ share. Pure:
 * no I/O, no allocation. */
#include "common/common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

size_t wd_addr_len(int family)
{
	return family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
}

void wd_prefix_mask(int family, uint8_t *addr, unsigned prefix)
{
	size_t len = wd_addr_len(family);

	for (size_t i = 0; i < len; i++) {
		unsigned bits = prefix > i * 8 ? prefix - (unsigned)i * 8 : 0;

		if (bits < 8)
			addr[i] &= (uint8_t)(0xff00u >> bits);
	}
}

bool wd_prefix_contains(int family, const uint8_t *net, unsigned prefix, const uint8_t *addr)
{
	unsigned full = prefix / 8, rest = prefix % 8;
	size_t len = wd_addr_len(family);

	if (!len || prefix > len * 8 || memcmp(net, addr, full))
		return false;
	return !rest || ((net[full] ^ addr[full]) & (uint8_t)(0xff00u >> rest)) == 0;
}

bool wd_prefix_is_network(int family, const uint8_t *addr, unsigned prefix)
{
	uint8_t masked[16] = {0};
	size_t len = wd_addr_len(family);

	memcpy(masked, addr, len);
	wd_prefix_mask(family, masked, prefix);
	return !memcmp(masked, addr, len);
}

/* a prefix length: 1 to 3 decimal digits, no sign, no leading zero, at most @max */
static bool parse_len(const char *s, unsigned max, unsigned *ret)
{
	unsigned v = 0;
	size_t n = strlen(s);

	if (n == 0 || n > 3 || (s[0] == '0' && n > 1))
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v > max)
		return false;
	*ret = v;
	return true;
}

enum wd_cidr_result wd_cidr_parse(const char *s, unsigned flags, struct wd_cidr *ret)
{
	char host[INET6_ADDRSTRLEN];
	const char *slash = strchr(s, '/');
	size_t hlen = slash ? (size_t)(slash - s) : strlen(s);
	struct wd_cidr c = {0};

	if (hlen == 0 || hlen >= sizeof(host) || (!slash && !(flags & WD_CIDR_BARE)))
		return WD_CIDR_MALFORMED;
	memcpy(host, s, hlen);
	host[hlen] = '\0';
	if (inet_pton(AF_INET, host, c.addr) == 1)
		c.family = AF_INET;
	else if (inet_pton(AF_INET6, host, c.addr) == 1)
		c.family = AF_INET6;
	else
		return WD_CIDR_MALFORMED;
	c.prefix = (unsigned)wd_addr_len(c.family) * 8;
	if (slash && !parse_len(slash + 1, c.prefix, &c.prefix))
		return WD_CIDR_MALFORMED;
	if (!wd_prefix_is_network(c.family, c.addr, c.prefix)) {
		wd_prefix_mask(c.family, c.addr, c.prefix);
		*ret = c;
		return WD_CIDR_HOST_BITS;
	}
	*ret = c;
	return WD_CIDR_OK;
}

int wd_cidr_format(int family, const uint8_t *addr, unsigned prefix, char *out, size_t outlen)
{
	char a[INET6_ADDRSTRLEN];
	int n;

	if (outlen)
		out[0] = '\0';
	if (!wd_addr_len(family) || !inet_ntop(family, addr, a, sizeof(a)))
		return -EINVAL;
	n = snprintf(out, outlen, "%s/%u", a, prefix);
	if (n < 0 || (size_t)n >= outlen) {
		if (outlen)
			out[0] = '\0';
		return -ENOSPC;
	}
	return 0;
}

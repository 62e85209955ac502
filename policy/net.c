/* net.c - host name and address-range syntax shared by policies, the matcher
 * and the gateway config: normalisation and checks, no I/O. */
#include "policy/policy_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

static unsigned addr_len(int family)
{
	return family == AF_INET ? 4 : 16;
}

void net_mask_addr(int family, uint8_t *addr, unsigned prefix)
{
	unsigned len = addr_len(family);

	for (unsigned i = 0; i < len; i++) {
		unsigned bits = prefix > i * 8 ? prefix - i * 8 : 0;

		if (bits >= 8)
			continue;
		addr[i] &= (uint8_t)(0xff00u >> bits);
	}
}

bool net_prefix_contains(int family, const uint8_t *net, unsigned prefix, const uint8_t *addr)
{
	unsigned full = prefix / 8, rest = prefix % 8;

	if (prefix > addr_len(family) * 8)
		return false;
	if (memcmp(net, addr, full))
		return false;
	if (!rest)
		return true;
	return ((net[full] ^ addr[full]) & (uint8_t)(0xff00u >> rest)) == 0;
}

int net_parse_cidr(const char *s, int *family, uint8_t *addr, unsigned *prefix)
{
	char host[INET6_ADDRSTRLEN + 1];
	const char *slash = strchr(s, '/');
	size_t hlen = slash ? (size_t)(slash - s) : strlen(s);
	uint8_t masked[16];
	unsigned max, p = 0;

	if (hlen == 0 || hlen >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, hlen);
	host[hlen] = '\0';
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, host, addr) == 1)
		*family = AF_INET;
	else if (inet_pton(AF_INET6, host, addr) == 1)
		*family = AF_INET6;
	else
		return -EINVAL;
	max = addr_len(*family) * 8;
	if (!slash) {
		*prefix = max;
		return 0;
	}
	slash++;
	if (!*slash || strlen(slash) > 3)
		return -EINVAL;
	for (const char *c = slash; *c; c++) {
		if (*c < '0' || *c > '9')
			return -EINVAL;
		p = p * 10 + (unsigned)(*c - '0');
	}
	if (p > max || (slash[0] == '0' && slash[1]))
		return -EINVAL;
	*prefix = p;
	memcpy(masked, addr, 16);
	net_mask_addr(*family, masked, p);
	if (memcmp(masked, addr, 16))
		return -EADDRNOTAVAIL;
	return 0;
}

void net_format_cidr(int family, const uint8_t *addr, unsigned prefix, char *out, size_t outlen)
{
	char a[INET6_ADDRSTRLEN];

	if (!inet_ntop(family, addr, a, sizeof(a)))
		snprintf(a, sizeof(a), "?");
	snprintf(out, outlen, "%s/%u", a, prefix);
}

bool net_is_ip_literal(const char *s)
{
	uint8_t buf[16];
	char tmp[INET6_ADDRSTRLEN + 2];
	size_t len = strlen(s);

	if (inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1)
		return true;
	if (len > 2 && len < sizeof(tmp) && s[0] == '[' && s[len - 1] == ']') {
		memcpy(tmp, s + 1, len - 2);
		tmp[len - 2] = '\0';
		return inet_pton(AF_INET6, tmp, buf) == 1;
	}
	return false;
}

static const char *const host_check_texts[] = {
    [HOST_OK] = "valid",
    [HOST_EMPTY] = "the name is empty",
    [HOST_TOO_LONG] = "the name is longer than 253 characters",
    [HOST_LABEL_EMPTY] = "the name has an empty label (two dots in a row, or a leading dot)",
    [HOST_LABEL_TOO_LONG] = "a label is longer than 63 characters",
    [HOST_BAD_CHAR] = "labels may hold only letters, digits and hyphens",
    [HOST_HYPHEN_EDGE] = "a label starts or ends with a hyphen",
    [HOST_ALL_NUMERIC] = "the last label is all digits (an address? use `cidr`)",
};

const char *host_check_text(enum host_check c)
{
	return host_check_texts[c];
}

/* host-name characters: the lower-case form, or 0 for a character not allowed */
static const char host_chars[256] = {
    ['-'] = '-', ['0'] = '0', ['1'] = '1', ['2'] = '2', ['3'] = '3', ['4'] = '4', ['5'] = '5',
    ['6'] = '6', ['7'] = '7', ['8'] = '8', ['9'] = '9', ['a'] = 'a', ['b'] = 'b', ['c'] = 'c',
    ['d'] = 'd', ['e'] = 'e', ['f'] = 'f', ['g'] = 'g', ['h'] = 'h', ['i'] = 'i', ['j'] = 'j',
    ['k'] = 'k', ['l'] = 'l', ['m'] = 'm', ['n'] = 'n', ['o'] = 'o', ['p'] = 'p', ['q'] = 'q',
    ['r'] = 'r', ['s'] = 's', ['t'] = 't', ['u'] = 'u', ['v'] = 'v', ['w'] = 'w', ['x'] = 'x',
    ['y'] = 'y', ['z'] = 'z', ['A'] = 'a', ['B'] = 'b', ['C'] = 'c', ['D'] = 'd', ['E'] = 'e',
    ['F'] = 'f', ['G'] = 'g', ['H'] = 'h', ['I'] = 'i', ['J'] = 'j', ['K'] = 'k', ['L'] = 'l',
    ['M'] = 'm', ['N'] = 'n', ['O'] = 'o', ['P'] = 'p', ['Q'] = 'q', ['R'] = 'r', ['S'] = 's',
    ['T'] = 't', ['U'] = 'u', ['V'] = 'v', ['W'] = 'w', ['X'] = 'x', ['Y'] = 'y', ['Z'] = 'z',
};

/* check one label out[start, end) that was already copied */
static enum host_check label_check(const char *out, size_t start, size_t end)
{
	if (end == start)
		return HOST_LABEL_EMPTY;
	if (end - start > 63)
		return HOST_LABEL_TOO_LONG;
	if (out[start] == '-' || out[end - 1] == '-')
		return HOST_HYPHEN_EDGE;
	return HOST_OK;
}

enum host_check host_normalise(const char *in, char *out, size_t outlen)
{
	size_t len = strlen(in), start = 0, i;
	enum host_check hc;
	bool digits = true;

	if (len && in[len - 1] == '.')
		len--;
	if (len == 0)
		return HOST_EMPTY;
	if (len > 253 || len + 1 > outlen)
		return HOST_TOO_LONG;
	for (i = 0; i < len; i++) {
		char c = host_chars[(unsigned char)in[i]];

		if (in[i] == '.') {
			hc = label_check(out, start, i);
			if (hc != HOST_OK)
				return hc;
			out[i] = '.';
			start = i + 1;
			digits = true;
			continue;
		}
		if (!c)
			return HOST_BAD_CHAR;
		digits = digits && c >= '0' && c <= '9';
		out[i] = c;
	}
	hc = label_check(out, start, len);
	if (hc != HOST_OK)
		return hc;
	out[len] = '\0';
	return digits ? HOST_ALL_NUMERIC : HOST_OK;
}

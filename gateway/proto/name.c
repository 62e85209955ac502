/* name.c - host name and IPv4 literal validation shared by the TLS, HTTP and
 * DNS parsers (pure). */
#include "gateway/proto/proto_internal.h"

#include <string.h>

bool proto_ipv4_parse(const uint8_t *p, size_t n, uint8_t addr[4])
{
	size_t i = 0;

	for (int part = 0; part < 4; part++) {
		unsigned v = 0, digits = 0;

		if (part > 0) {
			if (i >= n || p[i] != '.')
				return false;
			i++;
		}
		while (i < n && p[i] >= '0' && p[i] <= '9' && digits < 4) {
			v = v * 10 + (unsigned)(p[i] - '0');
			digits++;
			i++;
		}
		if (digits == 0 || digits > 3 || v > 255)
			return false;
		if (digits > 1 && p[i - digits] == '0')
			return false; /* leading zero: octal to inet_aton */
		addr[part] = (uint8_t)v;
	}
	return i == n;
}

/* a label that an address parser would read as a number */
static bool numeric_label(const uint8_t *p, size_t n)
{
	size_t i = 0;

	if (n >= 2 && p[0] == '0' && proto_lower(p[1]) == 'x') {
		for (i = 2; i < n; i++) {
			uint8_t c = proto_lower(p[i]);

			if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
				return false;
		}
		return true;
	}
	for (i = 0; i < n; i++)
		if (p[i] < '0' || p[i] > '9')
			return false;
	return n > 0;
}

enum proto_host_kind proto_host_parse(const uint8_t *p, size_t n, unsigned flags, char *out,
				      const char **why)
{
	size_t label = 0, last_start = 0;
	uint8_t addr[4];

	out[0] = '\0';
	if (n > 0 && p[n - 1] == '.')
		n--;
	if (n == 0) {
		*why = "empty host name";
		return PROTO_HOST_NONE;
	}
	if (n > PROTO_NAME_MAX) {
		*why = "host name longer than 253";
		return PROTO_HOST_NONE;
	}
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '.') {
			if (label == 0) {
				*why = "empty label in host name";
				return PROTO_HOST_NONE;
			}
			label = 0;
			last_start = i + 1;
			continue;
		}
		if (!proto_host_char(p[i])) {
			*why = "invalid character in host name";
			return PROTO_HOST_NONE;
		}
		if (++label > DNS_LABEL_MAX) {
			*why = "host name label longer than 63";
			return PROTO_HOST_NONE;
		}
	}
	if (numeric_label(p + last_start, n - last_start)) {
		if (!proto_ipv4_parse(p, n, addr)) {
			*why = "numeric host that is not a dotted quad";
			return PROTO_HOST_NONE;
		}
		if (!(flags & PROTO_HOST_ALLOW_IPV4)) {
			*why = "IP literal where a host name is required";
			return PROTO_HOST_NONE;
		}
	}
	for (size_t i = 0; i < n; i++)
		out[i] = (char)proto_lower(p[i]);
	out[n] = '\0';
	return numeric_label(p + last_start, n - last_start) ? PROTO_HOST_IPV4 : PROTO_HOST_NAME;
}

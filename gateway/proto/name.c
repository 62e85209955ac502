/* name.c - host name and IPv4 literal validation shared by the TLS, HTTP and
 * DNS parsers (pure); the name syntax itself is common/name.c's (wd_name_fold()). */
#include "gateway/proto/proto_internal.h"

#include "common/common.h"

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
	enum wd_name_check nc;
	size_t last = 0;
	uint8_t addr[4];
	bool numeric;

	/* the syntax is common/name.c's (the names on the wire: `_` allowed, `-` anywhere) */
	nc = wd_name_fold((const char *)p, n, WD_NAME_WIRE, out, PROTO_NAME_MAX + 1, &last);
	if (nc != WD_NAME_OK) {
		*why = wd_name_check_text(nc);
		return PROTO_HOST_NONE;
	}
	n = strlen(out);
	numeric = numeric_label((const uint8_t *)out + last, n - last);
	if (numeric) {
		if (!proto_ipv4_parse((const uint8_t *)out, n, addr)) {
			*why = "numeric host that is not a dotted quad";
			out[0] = '\0';
			return PROTO_HOST_NONE;
		}
		if (!(flags & PROTO_HOST_ALLOW_IPV4)) {
			*why = "IP literal where a host name is required";
			out[0] = '\0';
			return PROTO_HOST_NONE;
		}
	}
	return numeric ? PROTO_HOST_IPV4 : PROTO_HOST_NAME;
}

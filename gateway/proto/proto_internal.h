/* proto_internal.h - helpers shared by the gateway/proto parsers (internal header). */
#ifndef WARDEN_GATEWAY_PROTO_INTERNAL_H
#define WARDEN_GATEWAY_PROTO_INTERNAL_H

#include "gateway/proto/proto.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* flags for proto_host_parse() */
#define PROTO_HOST_ALLOW_IPV4 0x1u /* a dotted-quad is a result, not a failure */

static inline uint8_t proto_lower(uint8_t c)
{
	return c >= 'A' && c <= 'Z' ? (uint8_t)(c + ('a' - 'A')) : c;
}

/* a byte allowed in a host name label (letters, digits, '-', '_') */
static inline bool proto_host_char(uint8_t c)
{
	c = proto_lower(c);
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

/* RFC 9110 §5.6.2 tchar: a byte of a token (method, field name) */
static inline bool proto_tchar(uint8_t c)
{
	static const char extra[] = "!#$%&'*+-.^_`|~";

	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
		return true;
	for (size_t i = 0; i < sizeof(extra) - 1; i++)
		if (c == (uint8_t)extra[i])
			return true;
	return false;
}

/* a field-value byte: VCHAR, SP, HTAB, obs-text */
static inline bool proto_vchar(uint8_t c)
{
	return c == '\t' || (c >= 0x20 && c != 0x7f);
}

/**
 * proto_host_parse() - validate and normalise a host name (or IPv4 literal)
 * @p:		the bytes
 * @n:		how many
 * @flags:	PROTO_HOST_ALLOW_IPV4 or 0
 * @out:	PROTO_NAME_MAX + 1 bytes: the name, lower-case, without one
 *		trailing dot, NUL-terminated
 * @why:	on failure, the failed rule
 *
 * A name is 1..253 characters of labels 1..63 long made of letters, digits,
 * '-' and '_'. A last label that is numeric (decimal, or 0x-hex) makes it an
 * address: allowed only as a strict dotted quad and only with the flag.
 *
 * Return: PROTO_HOST_NAME, PROTO_HOST_IPV4, or PROTO_HOST_NONE on failure.
 */
enum proto_host_kind proto_host_parse(const uint8_t *p, size_t n, unsigned flags, char *out,
				      const char **why);

/**
 * proto_ipv4_parse() - parse a strict dotted quad (no leading zeros)
 * @p:		text
 * @n:		its length
 * @addr:	on success, the 4 address bytes
 *
 * Return: true when @p is exactly one dotted quad.
 */
bool proto_ipv4_parse(const uint8_t *p, size_t n, uint8_t addr[4]);

#endif /* WARDEN_GATEWAY_PROTO_INTERNAL_H */

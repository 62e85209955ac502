/* addr.h - the gateway's address type and its pure helpers (internal header):
 * conversions to and from sockaddrs and text, the SSRF guard's classifier of
 * special-purpose ranges, prefixes, and a small non-cryptographic generator
 * (util.c, addrclass.c). */
#ifndef WARDEN_GATEWAY_ADDR_H
#define WARDEN_GATEWAY_ADDR_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* ------------------------------------------------------- small helpers */

/**
 * struct gw_addr - an IPv4 or IPv6 address
 * @family:	AF_INET or AF_INET6 (0: none)
 * @a:		4 or 16 bytes, network order
 */
struct gw_addr {
	int family;
	uint8_t a[16];
};

/** gw_addr_len() - 4 for AF_INET, 16 for AF_INET6, 0 otherwise. */
size_t gw_addr_len(int family);
/** gw_addr_eq() - same family and bytes. */
bool gw_addr_eq(const struct gw_addr *x, const struct gw_addr *y);
/**
 * gw_addr_from_sa() - address and port of a sockaddr (v4-mapped v6 becomes v4)
 * Return: 0, or -EAFNOSUPPORT.
 */
int gw_addr_from_sa(const struct sockaddr_storage *ss, struct gw_addr *a, uint16_t *port);
/** gw_addr_to_sa() - the sockaddr for @a:@port; returns its length. */
socklen_t gw_addr_to_sa(const struct gw_addr *a, uint16_t port, struct sockaddr_storage *ss);
/** gw_addr_str() - @a as text into @out (at least INET6_ADDRSTRLEN bytes); returns @out. */
const char *gw_addr_str(const struct gw_addr *a, char *out, size_t size);
/**
 * gw_addr_parse() - parse an IPv4 or IPv6 literal
 * Return: 0, or -EINVAL.
 */
int gw_addr_parse(const char *s, struct gw_addr *a);

/**
 * struct gw_rng - a small xorshift generator (not for secrets)
 * @s:		state; never 0
 */
struct gw_rng {
	uint64_t s;
};

/** gw_rng_seed() - seed @r (0 is replaced by a fixed constant). */
void gw_rng_seed(struct gw_rng *r, uint64_t seed);
/** gw_rng_next() - the next 64 random bits. */
uint64_t gw_rng_next(struct gw_rng *r);

/* -------------------------------------------------- address classifier */

/**
 * enum gw_addr_class - why an upstream address is refused (SSRF guard)
 */
enum gw_addr_class {
	GW_ADDR_PUBLIC = 0,  /* nothing special: may be connected to */
	GW_ADDR_UNSPECIFIED, /* 0.0.0.0/8, :: */
	GW_ADDR_LOOPBACK,    /* 127/8, ::1 */
	GW_ADDR_PRIVATE,     /* RFC 1918, fec0::/10 */
	GW_ADDR_CGNAT,	     /* 100.64/10 */
	GW_ADDR_LINK_LOCAL,  /* 169.254/16 (metadata), fe80::/10 */
	GW_ADDR_MULTICAST,   /* 224/4, ff00::/8 */
	GW_ADDR_RESERVED,    /* 240/4 and broadcast, 192.0.0/24, 100::/64 */
	GW_ADDR_EMBEDDED_V4, /* ::ffff:0:0/96, ::/96, 64:ff9b::/96, 2002::/16, 2001::/32 */
	GW_ADDR_ULA,	     /* fc00::/7 */
	GW_ADDR_GATEWAY,     /* the gateway's own addresses and pools (set by the caller) */
};

/**
 * gw_addr_classify() - the special-purpose range @a is in
 * @a:		the address
 *
 * Pure. Documentation ranges (192.0.2/24, 198.51.100/24, 203.0.113/24,
 * 2001:db8::/32) are PUBLIC: the test lab lives there.
 *
 * Return: the class (GW_ADDR_PUBLIC when none applies).
 */
enum gw_addr_class gw_addr_classify(const struct gw_addr *a);

/** gw_addr_class_name() - short text for @c ("loopback", ...). */
const char *gw_addr_class_name(enum gw_addr_class c);

/**
 * gw_prefix_contains() - whether @a lies in @net/@prefix (same family)
 */
bool gw_prefix_contains(const struct gw_addr *net, unsigned prefix, const struct gw_addr *a);

/**
 * gw_cidr_parse() - parse "addr/prefix" strictly (wd_cidr_parse(): host bits must be zero)
 * Return: 0, or -EINVAL.
 */
int gw_cidr_parse(const char *s, struct gw_addr *net, unsigned *prefix);

#endif /* WARDEN_GATEWAY_ADDR_H */

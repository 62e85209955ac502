/* ctmsg.h - conntrack lookups for the UDP relay (internal header; ctmsg.c): the pure
 * composer of an IPCTNL_MSG_CT_GET request by a flow's reply tuple and the pure parser of the
 * answer (the original tuple: the synthetic address and port the sandbox sent to), and the
 * one blocking round trip over a NETLINK_NETFILTER socket (gw_ct_lookup()). */
#ifndef WARDEN_GATEWAY_CTMSG_H
#define WARDEN_GATEWAY_CTMSG_H

#include "gateway/addr.h"

#include <stddef.h>
#include <stdint.h>

/**
 * struct gw_ct_tuple - one direction of a conntrack entry (UDP only)
 * @src:	source address
 * @dst:	destination address (same family as @src)
 * @sport:	source port, host order
 * @dport:	destination port, host order
 */
struct gw_ct_tuple {
	struct gw_addr src, dst;
	uint16_t sport, dport;
};

/* room for one request (headers and the nested reply tuple of IPv6 addresses) */
#define GW_CT_REQ_MAX 128u

enum gw_ct_result {
	GW_CT_OK,	 /* @orig is the entry's original tuple */
	GW_CT_ERROR,	 /* the kernel answered an error (*@err: its -errno; -ENOENT: no entry) */
	GW_CT_MALFORMED, /* not an answer to our request, or cut, or without the tuple */
};

/**
 * gw_ct_get_build() - compose a conntrack GET request by a UDP reply tuple (pure)
 * @buf:	where to write (at least GW_CT_REQ_MAX bytes)
 * @size:	its size
 * @seq:	the request's sequence number
 * @reply:	the reply direction of the flow: source the gateway's address and port_udp,
 *		destination the client's address and port
 *
 * Return: the request's length, or -EINVAL (@size too small, families differ or are not
 * AF_INET / AF_INET6).
 */
int gw_ct_get_build(uint8_t *buf, size_t size, uint32_t seq, const struct gw_ct_tuple *reply);

/**
 * gw_ct_get_parse() - read the kernel's answer to gw_ct_get_build()'s request (pure)
 * @buf:	one datagram received on the socket
 * @len:	its length
 * @seq:	the request's sequence number (an answer with another is MALFORMED)
 * @orig:	on GW_CT_OK, the entry's original tuple (UDP; other protocols are MALFORMED)
 * @err:	on GW_CT_ERROR, the kernel's -errno
 *
 * Every length (netlink header, attributes, nested attributes) is checked against what is
 * there; nothing is read past @len.
 *
 * Return: a named outcome (enum gw_ct_result).
 */
enum gw_ct_result gw_ct_get_parse(const uint8_t *buf, size_t len, uint32_t seq,
				  struct gw_ct_tuple *orig, int *err);

/**
 * gw_ct_lookup() - the original tuple of the UDP flow whose reply tuple is @reply
 * @fd:		a NETLINK_NETFILTER socket opened in the flow's network namespace by a process
 *		with CAP_NET_ADMIN there (gw_ct_open())
 * @seq:	a sequence number (the caller's counter)
 * @reply:	as gw_ct_get_build()
 * @orig:	set on success
 *
 * The kernel answers a GET while it handles the send, so the answer is read without waiting
 * (MSG_DONTWAIT); an answer to an earlier request (another @seq) is skipped.
 *
 * Return: 0, -ENOENT (no such entry), or another negative errno.
 */
int gw_ct_lookup(int fd, uint32_t seq, const struct gw_ct_tuple *reply, struct gw_ct_tuple *orig);

/**
 * gw_ct_open() - a NETLINK_NETFILTER socket for gw_ct_lookup() in the caller's network
 * namespace (close-on-exec, bound)
 *
 * Return: the descriptor, or a negative errno.
 */
int gw_ct_open(void);

#endif

/* nflog.h - NFLOG messages (internal header; nflog.c): the pure parser of what
 * the nft table logged, read by the worker's udplog.c, and binding the group
 * (gw_nflog_open(): the parent's, before the handoff). */
#ifndef WARDEN_GATEWAY_NFLOG_H
#define WARDEN_GATEWAY_NFLOG_H

#include "common/common.h"
#include "gateway/addr.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/**
 * struct gw_nflog_pkt - one packet the nft table logged to NFLOG
 * @group:	the NFLOG group (res_id)
 * @proto:	IP protocol (17 for UDP); 0 when the payload was not readable
 * @src:	source address (family 0 when the payload was not readable)
 * @dst:	destination address
 * @sport:	source port (UDP/TCP with @has_ports)
 * @dport:	destination port
 * @has_ports:	the transport header was there (not a later fragment, not cut):
 *		UDP, TCP and UDP-lite
 * @indev:	input interface index (0: absent)
 * @prefix:	the log rule's prefix (FW_NFLOG_PREFIX_* of nft/nft.h), "" when it has
 *		none; cut to fit, always NUL-terminated
 */
struct gw_nflog_pkt {
	uint16_t group;
	uint8_t proto;
	struct gw_addr src, dst;
	uint16_t sport, dport;
	bool has_ports;
	uint32_t indev;
	char prefix[32];
};

enum gw_nflog_result {
	GW_NFLOG_OK,	    /* @pkt is one logged packet */
	GW_NFLOG_ABSENT,    /* a message that is no packet (ack, other type): skipped */
	GW_NFLOG_END,	    /* no more messages in the buffer */
	GW_NFLOG_MALFORMED, /* stop: the rest of the buffer cannot be trusted */
};

/**
 * gw_nflog_next() - parse the next netlink message of an NFLOG datagram (pure)
 * @buf:	what recv() returned on the NFLOG socket
 * @len:	its length
 * @off:	where to start; advanced past the message
 * @pkt:	filled on GW_NFLOG_OK
 *
 * Every length (netlink header, attributes, IP and UDP headers) is checked
 * against what is there; nothing is read past @len.
 *
 * Return: a named outcome (enum gw_nflog_result).
 */
enum gw_nflog_result gw_nflog_next(const uint8_t *buf, size_t len, size_t *off,
				   struct gw_nflog_pkt *pkt);

/**
 * gw_nflog_open() - a netlink socket bound to NFLOG group @group (needs CAP_NET_ADMIN)
 * @group:	the group the nft table logs to (nft.nflog_group)
 * @ret_fd:	the socket (CLOEXEC, non-blocking), on success
 * @err:	what failed
 *
 * Only the privileged parent calls this; the worker only reads the socket.
 *
 * Return: 0, or a negative errno (-EBUSY: another process has the group).
 */
int gw_nflog_open(uint16_t group, int *ret_fd, struct wd_err *err);

#endif /* WARDEN_GATEWAY_NFLOG_H */

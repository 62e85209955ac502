/* quicsniff.h - a QUIC client's Initial packets opened, for the name in its ClientHello (internal
 * header; quicsniff.c): the Initial keys every endpoint derives from the client's Destination
 * Connection ID (RFC 9001 §5.2; RFC 9369 §3.3 for version 2), header protection removed, the
 * payload opened with AES-128-GCM (libcrypto), its frames read into the CRYPTO stream
 * (proto/quic.c). These keys protect nothing from an observer; reading them is what any
 * middlebox may do, and what lets the gateway decide a QUIC flow by name as it decides TLS over
 * TCP (docs/gateway.md). */
#ifndef WARDEN_GATEWAY_QUICSNIFF_H
#define WARDEN_GATEWAY_QUICSNIFF_H

#include "gateway/proto/proto.h"

#include <stddef.h>
#include <stdint.h>

/**
 * struct gw_quic_keys - the client's Initial packet protection keys
 * @key:	AEAD key (AES-128-GCM)
 * @iv:		AEAD IV
 * @hp:		header protection key (AES-128)
 */
struct gw_quic_keys {
	uint8_t key[16];
	uint8_t iv[12];
	uint8_t hp[16];
};

/**
 * gw_quic_initial_keys() - the client's Initial keys for @version and its Destination
 * Connection ID
 * @version:	QUIC_VERSION_1 or QUIC_VERSION_2
 * @dcid:	the connection ID
 * @dcid_len:	its length
 * @out:	the keys
 *
 * Return: 0, -EINVAL (another version), or -EIO (libcrypto failed).
 */
int gw_quic_initial_keys(uint32_t version, const uint8_t *dcid, size_t dcid_len,
			 struct gw_quic_keys *out);

/**
 * gw_quic_initial_open() - remove the header protection of the Initial packet @pkt and open
 * its payload, in a copy
 * @pkt:	the packet (not changed: the gateway relays it as it came)
 * @h:		quic_initial_header_parse()'s QUIC_OK result for it
 * @work:	room for a copy of the packet (@h->pkt_len bytes): the header unprotected, the
 *		payload opened in place
 * @payload_off: where in @work the payload's frames start
 * @plain_len:	their length (no tag)
 * @pn:		the packet number as sent (truncated)
 * @why:	on MALFORMED, the rule
 *
 * Return: QUIC_OK, or QUIC_MALFORMED (the tag does not verify: not this DCID's Initial, or
 * altered; the reserved bits set; libcrypto failed).
 */
enum quic_result gw_quic_initial_open(const uint8_t *pkt, const struct quic_initial_hdr *h,
				      uint8_t *work, size_t *payload_off, size_t *plain_len,
				      uint64_t *pn, const char **why);

/**
 * struct gw_quic_flow - what a UDP flow's first datagrams said, until its ClientHello is whole
 * @version:	the version of its first Initial (0: none yet)
 * @dcid:	its Destination Connection ID (every later Initial must carry the same)
 * @dcid_len:	its length
 * @packets:	Initial packets opened
 * @crypto:	the CRYPTO stream so far
 */
struct gw_quic_flow {
	uint32_t version;
	uint8_t dcid[QUIC_CID_MAX];
	uint8_t dcid_len;
	unsigned packets;
	struct quic_crypto crypto;
};

/**
 * gw_quic_datagram() - one datagram of the client: every Initial in it opened into @f (0-RTT and
 * Handshake packets coalesced with them are stepped over; a short-header packet ends the
 * datagram), then the ClientHello tried
 * @f:		the flow (zeroed before its first datagram)
 * @dgram:	the datagram
 * @len:	its length
 * @work:	scratch for one packet (the datagram's length is always enough)
 * @wsize:	its size
 * @th:		the ClientHello's facts once QUIC_OK or QUIC_ABSENT (scratch for the TLS parser)
 * @why:	on MALFORMED or ABSENT, the rule
 *
 * Return: QUIC_OK (a whole ClientHello with a server name: @th->sni), QUIC_NEED_MORE (more
 * datagrams are needed), QUIC_ABSENT (not a QUIC Initial, or a ClientHello without a name) or
 * QUIC_MALFORMED.
 */
enum quic_result gw_quic_datagram(struct gw_quic_flow *f, const uint8_t *dgram, size_t len,
				  uint8_t *work, size_t wsize, struct tls_hello *th,
				  const char **why);

#endif /* WARDEN_GATEWAY_QUICSNIFF_H */

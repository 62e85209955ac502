/* quic.h - the framing of a QUIC client's Initial packets (RFC 9000 §17.2, §19; RFC 9369 for
 * version 2), pure: the long header up to its protected packet number, the frames of a
 * decrypted Initial payload, and the CRYPTO stream they carry reassembled into the client's
 * TLS ClientHello, whose server name the gateway decides on as for TLS over TCP. The packet
 * protection itself (keys from the Destination Connection ID, header protection, AES-128-GCM)
 * is libcrypto's work and lives outside this folder (gateway/quicsniff.c), which links nothing but
 * libc. Included by proto.h; docs/proto.md says what is refused and why. */
#ifndef WARDEN_GATEWAY_PROTO_QUIC_H
#define WARDEN_GATEWAY_PROTO_QUIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tls_hello;

/* The versions whose Initial packets are read (others are not QUIC the gateway knows). */
#define QUIC_VERSION_1 0x00000001u
#define QUIC_VERSION_2 0x6b3343cfu
/* Longest connection ID (RFC 9000 §17.2); a client's first Destination Connection ID has at
 * least QUIC_DCID_MIN bytes (§7.2). */
#define QUIC_CID_MAX 20
#define QUIC_DCID_MIN 8
/* The AEAD tag and the header protection sample (RFC 9001 §5.3, §5.4.2). */
#define QUIC_TAG_LEN 16
#define QUIC_SAMPLE_LEN 16
/* Most CRYPTO bytes kept: a ClientHello at most TLS_HELLO_MAX long. */
#define QUIC_CRYPTO_MAX 16384

/**
 * enum quic_result - outcome of a QUIC parser
 * @QUIC_OK:		parsed
 * @QUIC_NEED_MORE:	the ClientHello is not complete yet: more Initial packets are needed
 * @QUIC_ABSENT:	not a client Initial of a version known here (a short header, another
 *			long packet type, another version): @why says which
 * @QUIC_MALFORMED:	breaks a rule of RFC 9000/9001 or one of ours (docs/proto.md): @why
 */
enum quic_result {
	QUIC_OK = 0,
	QUIC_NEED_MORE,
	QUIC_ABSENT,
	QUIC_MALFORMED,
};

/**
 * struct quic_initial_hdr - a long header read up to its (protected) packet number
 * @version:	QUIC_VERSION_1 or QUIC_VERSION_2
 * @dcid:	the Destination Connection ID (the Initial keys come from it)
 * @dcid_len:	its length (QUIC_DCID_MIN..QUIC_CID_MAX)
 * @scid_len:	the Source Connection ID's length
 * @pn_offset:	where the packet number starts, from the packet's first byte
 * @pkt_len:	the whole packet's length (the next coalesced packet starts there)
 * @why:	on ABSENT or MALFORMED, the rule (a literal)
 */
struct quic_initial_hdr {
	uint32_t version;
	uint8_t dcid[QUIC_CID_MAX];
	uint8_t dcid_len;
	uint8_t scid_len;
	size_t pn_offset;
	size_t pkt_len;
	const char *why;
};

/**
 * quic_initial_header_parse() - read the long header of the packet at @buf
 * @buf:	the packet (the datagram's bytes from its first byte)
 * @len:	bytes to the datagram's end
 * @out:	result; always written
 *
 * A client's Initial: the long-header form and fixed bits, a known version, the Initial type
 * of that version, a Destination Connection ID of 8 to 20 bytes, a Source Connection ID of at
 * most 20, a token, and a Length that fits in the datagram and leaves room for a 4-byte
 * packet number's header protection sample (RFC 9001 §5.4.2) and the AEAD tag. Another long
 * packet type of a known version (0-RTT, Handshake) is ABSENT with @out->pkt_len set, so that
 * a caller can step over it to the next coalesced packet.
 *
 * Return: QUIC_OK, QUIC_ABSENT or QUIC_MALFORMED (never NEED_MORE: a datagram is whole).
 */
enum quic_result quic_initial_header_parse(const uint8_t *buf, size_t len,
					   struct quic_initial_hdr *out);

/**
 * struct quic_crypto - a client's CRYPTO stream at the Initial level, reassembled
 * @data:	the bytes at their stream offsets
 * @have:	a bit per byte of @data: received
 * @frames:	CRYPTO frames taken
 */
struct quic_crypto {
	uint8_t data[QUIC_CRYPTO_MAX];
	uint8_t have[QUIC_CRYPTO_MAX / 8];
	unsigned frames;
};

/**
 * quic_initial_frames() - take the frames of one decrypted Initial payload
 * @buf:	the payload (after the packet number, before the tag)
 * @len:	its length
 * @acc:	the CRYPTO stream so far (zeroed before the first packet)
 * @why:	on MALFORMED, the rule
 *
 * An Initial may hold only PADDING, PING, ACK, CRYPTO and CONNECTION_CLOSE frames (RFC 9000
 * §12.4); anything else, a frame that overruns the payload, CRYPTO data beyond
 * QUIC_CRYPTO_MAX, and CRYPTO bytes that differ where they overlap bytes already received (one
 * name for the gateway, another for the server) are MALFORMED. A CONNECTION_CLOSE is MALFORMED
 * too: a client that closes before its hello names nothing.
 *
 * Return: QUIC_OK or QUIC_MALFORMED.
 */
enum quic_result quic_initial_frames(const uint8_t *buf, size_t len, struct quic_crypto *acc,
				     const char **why);

/**
 * quic_crypto_hello() - the ClientHello of @acc, once its bytes from offset 0 are all there
 * @acc:	the CRYPTO stream
 * @out:	the ClientHello's facts (tls_handshake_hello_parse()); always written
 *
 * Return: QUIC_OK (a ClientHello with a server name), QUIC_NEED_MORE (not all of it yet),
 * QUIC_ABSENT (a whole ClientHello without a server name) or QUIC_MALFORMED (not a
 * ClientHello, or one the TLS parser refuses: @out->why).
 */
enum quic_result quic_crypto_hello(const struct quic_crypto *acc, struct tls_hello *out);

/**
 * quic_varint() - a variable-length integer (RFC 9000 §16) at @buf
 * @buf:	the bytes
 * @len:	how many there are
 * @v:		the value
 * Return: its length in bytes (1, 2, 4 or 8), or 0 when it overruns @len.
 */
size_t quic_varint(const uint8_t *buf, size_t len, uint64_t *v);

#endif /* WARDEN_GATEWAY_PROTO_QUIC_H */

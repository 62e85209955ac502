/* quic.c - a QUIC client's Initial packets, the parts that need no keys (quic.h): the long
 * header, the frames of a decrypted payload, the CRYPTO stream reassembled into a ClientHello.
 *
 * What a client sends first is one or more Initial packets, each in a UDP datagram padded to
 * 1200 bytes or more, perhaps coalesced with 0-RTT packets after it. Their payloads carry the
 * TLS ClientHello in CRYPTO frames at stream offsets, in any order, split anywhere (Chromium
 * splits and shuffles them on purpose), with PADDING and PING frames between. The gateway reads
 * the server name once every byte from offset 0 to the end of the hello is there; bytes that
 * arrive twice must be the same bytes, or the gateway and the server would read two names. */
#include "gateway/proto/proto.h"
#include "gateway/proto/cursor.h"

#include <string.h>

/* frame types an Initial may carry (RFC 9000 §12.4, Table 3) */
enum {
	QUIC_FT_PADDING = 0x00,
	QUIC_FT_PING = 0x01,
	QUIC_FT_ACK = 0x02,
	QUIC_FT_ACK_ECN = 0x03,
	QUIC_FT_CRYPTO = 0x06,
	QUIC_FT_CLOSE = 0x1c,
};

size_t quic_varint(const uint8_t *buf, size_t len, uint64_t *v)
{
	size_t n;

	if (!len)
		return 0;
	n = (size_t)1 << (buf[0] >> 6);
	if (n > len)
		return 0;
	*v = buf[0] & 0x3f;
	for (size_t i = 1; i < n; i++)
		*v = *v << 8 | buf[i];
	return n;
}

/* a varint at @c's position; sets @c's error flag when it overruns */
static uint64_t cur_varint(struct cur *c)
{
	uint64_t v = 0;
	size_t n;

	if (c->err)
		return 0;
	n = quic_varint(c->p + c->off, c->len - c->off, &v);
	if (!n) {
		c->err = true;
		return 0;
	}
	c->off += n;
	return v;
}

static enum quic_result hdr_bad(struct quic_initial_hdr *out, enum quic_result r, const char *why)
{
	out->why = why;
	return r;
}

enum quic_result quic_initial_header_parse(const uint8_t *buf, size_t len,
					   struct quic_initial_hdr *out)
{
	struct cur c;
	uint8_t first, type;
	uint64_t tlen, plen;
	const uint8_t *dcid;

	memset(out, 0, sizeof(*out));
	cur_init(&c, buf, len);
	first = cur_u8(&c);
	if (!cur_ok(&c) || !(first & 0x80))
		return hdr_bad(out, QUIC_ABSENT, "not a QUIC long header");
	out->version = cur_u32(&c);
	if (!cur_ok(&c))
		return hdr_bad(out, QUIC_MALFORMED, "QUIC long header shorter than its version");
	if (out->version != QUIC_VERSION_1 && out->version != QUIC_VERSION_2)
		return hdr_bad(out, QUIC_ABSENT,
			       out->version ? "a QUIC version other than 1 and 2"
					    : "a QUIC version negotiation packet");
	if (!(first & 0x40))
		return hdr_bad(out, QUIC_MALFORMED, "QUIC fixed bit clear in a long header");
	type = (first >> 4) & 3;
	out->dcid_len = cur_u8(&c);
	dcid = cur_bytes(&c, out->dcid_len);
	out->scid_len = cur_u8(&c);
	cur_skip(&c, out->scid_len);
	if (!cur_ok(&c) || out->dcid_len > QUIC_CID_MAX || out->scid_len > QUIC_CID_MAX)
		return hdr_bad(out, QUIC_MALFORMED, "QUIC connection ID longer than 20 bytes");
	memcpy(out->dcid, dcid, out->dcid_len);
	/* Initial is type 0 in version 1 and 1 in version 2 (RFC 9369 §3.2); Retry has no Length */
	if (type != (out->version == QUIC_VERSION_1 ? 0 : 1)) {
		if (type == (out->version == QUIC_VERSION_1 ? 3 : 0))
			return hdr_bad(out, QUIC_ABSENT, "a QUIC Retry packet");
		plen = cur_varint(&c);
		if (!cur_ok(&c) || plen > cur_remaining(&c))
			return hdr_bad(out, QUIC_MALFORMED, "QUIC packet longer than its datagram");
		out->pkt_len = c.off + (size_t)plen;
		return hdr_bad(out, QUIC_ABSENT, "a QUIC long packet other than Initial");
	}
	if (out->dcid_len < QUIC_DCID_MIN)
		return hdr_bad(
		    out, QUIC_MALFORMED,
		    "QUIC client Initial's Destination Connection ID shorter than 8 bytes");
	tlen = cur_varint(&c);
	if (!cur_ok(&c) || tlen > cur_remaining(&c))
		return hdr_bad(out, QUIC_MALFORMED, "QUIC Initial token overruns the packet");
	cur_skip(&c, (size_t)tlen);
	plen = cur_varint(&c);
	if (!cur_ok(&c) || plen > cur_remaining(&c))
		return hdr_bad(out, QUIC_MALFORMED, "QUIC Initial longer than its datagram");
	/* the sample starts 4 bytes after the packet number's start (RFC 9001 §5.4.2); that
	 * leaves room for the smallest packet number, a frame byte and the tag too */
	if (plen < 4 + QUIC_SAMPLE_LEN)
		return hdr_bad(out, QUIC_MALFORMED, "QUIC Initial too short to be protected");
	out->pn_offset = c.off;
	out->pkt_len = c.off + (size_t)plen;
	return QUIC_OK;
}

/* @n bytes of CRYPTO data at stream offset @off into @acc: MALFORMED where they differ from
 * bytes already there */
static enum quic_result crypto_take(struct quic_crypto *acc, uint64_t off, const uint8_t *p,
				    size_t n, const char **why)
{
	if (off > QUIC_CRYPTO_MAX || n > QUIC_CRYPTO_MAX - off) {
		*why = "QUIC CRYPTO data beyond 16 KiB (a ClientHello is no larger)";
		return QUIC_MALFORMED;
	}
	for (size_t i = 0; i < n; i++) {
		size_t at = (size_t)off + i;
		uint8_t bit = (uint8_t)(1u << (at & 7));

		if (acc->have[at >> 3] & bit) {
			if (acc->data[at] != p[i]) {
				*why = "QUIC CRYPTO data differs where it overlaps";
				return QUIC_MALFORMED;
			}
			continue;
		}
		acc->data[at] = p[i];
		acc->have[at >> 3] |= bit;
	}
	acc->frames++;
	return QUIC_OK;
}

/* an ACK frame's body (after its type): read and ignored */
static bool skip_ack(struct cur *c, bool ecn)
{
	uint64_t ranges;

	cur_varint(c); /* largest acknowledged */
	cur_varint(c); /* delay */
	ranges = cur_varint(c);
	cur_varint(c); /* first range */
	for (uint64_t i = 0; cur_ok(c) && i < ranges; i++) {
		cur_varint(c); /* gap */
		cur_varint(c); /* range length */
	}
	if (ecn)
		for (int i = 0; i < 3; i++)
			cur_varint(c);
	return cur_ok(c);
}

enum quic_result quic_initial_frames(const uint8_t *buf, size_t len, struct quic_crypto *acc,
				     const char **why)
{
	struct cur c;

	*why = NULL;
	if (!len) {
		*why = "QUIC Initial without a frame";
		return QUIC_MALFORMED;
	}
	cur_init(&c, buf, len);
	while (cur_remaining(&c)) {
		uint64_t type = cur_varint(&c), off, n;
		const uint8_t *data;
		enum quic_result r;

		if (!cur_ok(&c))
			break;
		switch (type) {
		case QUIC_FT_PADDING:
		case QUIC_FT_PING:
			continue;
		case QUIC_FT_ACK:
		case QUIC_FT_ACK_ECN:
			if (!skip_ack(&c, type == QUIC_FT_ACK_ECN))
				break; /* @c's error is set */
			continue;
		case QUIC_FT_CRYPTO:
			off = cur_varint(&c);
			n = cur_varint(&c);
			data =
			    cur_ok(&c) && n <= cur_remaining(&c) ? cur_bytes(&c, (size_t)n) : NULL;
			if (!data) {
				c.err = true;
				break;
			}
			r = crypto_take(acc, off, data, (size_t)n, why);
			if (r != QUIC_OK)
				return r;
			continue;
		case QUIC_FT_CLOSE:
			*why = "QUIC client closed the connection in its Initial";
			return QUIC_MALFORMED;
		default:
			*why = "QUIC frame type not allowed in an Initial packet";
			return QUIC_MALFORMED;
		}
		break;
	}
	if (!cur_ok(&c)) {
		*why = "QUIC frame overruns its packet";
		return QUIC_MALFORMED;
	}
	return QUIC_OK;
}

/* how many bytes from offset 0 are all there */
static size_t contiguous(const struct quic_crypto *acc)
{
	size_t n = 0;

	while (n < QUIC_CRYPTO_MAX && (acc->have[n >> 3] & (1u << (n & 7))))
		n++;
	return n;
}

enum quic_result quic_crypto_hello(const struct quic_crypto *acc, struct tls_hello *out)
{
	size_t n = contiguous(acc);

	switch (tls_handshake_hello_parse(acc->data, n, out)) {
	case TLS_OK:
		return QUIC_OK;
	case TLS_NEED_MORE:
		return QUIC_NEED_MORE;
	case TLS_ABSENT:
		return QUIC_ABSENT;
	case TLS_MALFORMED:
		break;
	}
	return QUIC_MALFORMED;
}

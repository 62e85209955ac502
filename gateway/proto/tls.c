/* tls.c - TLS ClientHello parser (SNI, versions, ALPN/ECH facts) and the fatal
 * alert composer used for TLS denials. Pure: see proto.h.
 *
 * Theory of operation: the input is the byte stream a client sent so far.
 * Stage 1 walks TLS record headers: every record before the ClientHello is
 * complete must be a handshake record (type 22, version 3.x, 1..2^14 bytes);
 * their payloads form the handshake stream, whose first message must be a
 * ClientHello of at most TLS_HELLO_MAX bytes. When the whole message sits in
 * the first record it is parsed in place; otherwise the payloads are gathered
 * into out->scratch. Stage 2 parses the message with a bounds-checked cursor,
 * each length-prefixed vector in its own sub-cursor, so a length that lies
 * fails inside its vector.
 */
#include "gateway/proto/cursor.h"
#include "gateway/proto/proto_internal.h"

#include <errno.h>
#include <string.h>

#define TLS_CT_HANDSHAKE 22
#define TLS_CT_ALERT 21
#define TLS_HS_CLIENT_HELLO 1
#define TLS_RECORD_MAX 16384
#define TLS_MAX_EXTENSIONS 128

enum tls_ext {
	EXT_SERVER_NAME = 0,
	EXT_ALPN = 16,
	EXT_PRE_SHARED_KEY = 41,
	EXT_SUPPORTED_VERSIONS = 43,
	EXT_ECH = 0xfe0d,
};

static enum tls_result bad(struct tls_hello *out, const char *why)
{
	out->why = why;
	return TLS_MALFORMED;
}

/* RFC 8701: 0x0a0a, 0x1a1a, ... 0xfafa */
static bool is_grease(uint16_t v)
{
	return (v & 0x0f0f) == 0x0a0a && (v >> 8) == (v & 0xff);
}

/* check the (possibly partial) record header at @p, @n bytes available */
static enum tls_result record_header(const uint8_t *p, size_t n, struct tls_hello *out)
{
	if (n >= 1 && p[0] != TLS_CT_HANDSHAKE)
		return bad(out, "non-handshake record before the ClientHello ended");
	if (n >= 2 && p[1] != 3)
		return bad(out, "record version is not 3.x");
	if (n >= 3 && p[2] > 4)
		return bad(out, "record version is not 3.0-3.4");
	if (n >= 5) {
		size_t rlen = (size_t)p[3] << 8 | p[4];

		if (rlen == 0)
			return bad(out, "empty handshake record");
		if (rlen > TLS_RECORD_MAX)
			return bad(out, "record longer than 2^14");
		return TLS_OK;
	}
	return TLS_NEED_MORE;
}

/* the message length a 4-byte handshake header announces, or MALFORMED */
static enum tls_result hs_header(const uint8_t *h, size_t *need, struct tls_hello *out)
{
	size_t mlen = (size_t)h[1] << 16 | (size_t)h[2] << 8 | h[3];

	if (h[0] != TLS_HS_CLIENT_HELLO)
		return bad(out, "first handshake message is not a ClientHello");
	if (mlen + 4 > TLS_HELLO_MAX)
		return bad(out, "ClientHello larger than 16 KiB");
	*need = mlen + 4;
	return TLS_OK;
}

static enum tls_result parse_sni(struct cur *e, struct tls_hello *out)
{
	struct cur list;
	const uint8_t *name;
	uint16_t nlen;

	if (!cur_sub(e, cur_u16(e), &list) || cur_remaining(e))
		return bad(out, "server_name list length does not match");
	if (cur_u8(&list) != 0 || !cur_ok(&list))
		return bad(out, "server_name entry is not a host_name");
	nlen = cur_u16(&list);
	name = cur_bytes(&list, nlen);
	if (!name)
		return bad(out, "server_name host_name length overruns");
	if (cur_remaining(&list))
		return bad(out, "server_name has more than one entry");
	if (proto_host_parse(name, nlen, 0, out->sni, &out->why) != PROTO_HOST_NAME)
		return TLS_MALFORMED;
	out->sni_len = strlen(out->sni);
	return TLS_OK;
}

static enum tls_result parse_alpn(struct cur *e, struct tls_hello *out)
{
	struct cur list;

	if (!cur_sub(e, cur_u16(e), &list) || cur_remaining(e) || !cur_remaining(&list))
		return bad(out, "ALPN list length does not match");
	while (cur_remaining(&list)) {
		uint8_t n = cur_u8(&list);

		if (n == 0 || !cur_skip(&list, n))
			return bad(out, "ALPN protocol name length is wrong");
	}
	out->has_alpn = true;
	return TLS_OK;
}

static enum tls_result parse_versions(struct cur *e, struct tls_hello *out)
{
	uint8_t n = cur_u8(e);
	uint16_t best = 0;

	if (!cur_ok(e) || n == 0 || n % 2 || n != cur_remaining(e))
		return bad(out, "supported_versions length is wrong");
	while (cur_remaining(e)) {
		uint16_t v = cur_u16(e);

		if (!is_grease(v) && v > best && (v >> 8) == 3 && (v & 0xff) <= 4)
			best = v;
	}
	if (best < 0x0301)
		return bad(out, "supported_versions offers no TLS version");
	out->max_version = best;
	return TLS_OK;
}

static enum tls_result parse_extensions(struct cur *c, struct tls_hello *out)
{
	uint16_t seen[TLS_MAX_EXTENSIONS];
	unsigned nseen = 0;
	struct cur all;
	bool has_sni = false;
	enum tls_result r;

	if (!cur_sub(c, cur_u16(c), &all) || cur_remaining(c))
		return bad(out, "extensions length does not match the ClientHello");
	while (cur_remaining(&all)) {
		uint16_t type = cur_u16(&all);
		struct cur e;

		if (!cur_sub(&all, cur_u16(&all), &e))
			return bad(out, "extension length overruns");
		if (nseen == TLS_MAX_EXTENSIONS)
			return bad(out, "more than 128 extensions");
		for (unsigned i = 0; i < nseen; i++)
			if (seen[i] == type)
				return bad(out, "duplicate extension");
		seen[nseen++] = type;
		out->n_extensions = nseen;
		switch (type) {
		case EXT_SERVER_NAME:
			r = parse_sni(&e, out);
			has_sni = true;
			break;
		case EXT_ALPN:
			r = parse_alpn(&e, out);
			break;
		case EXT_SUPPORTED_VERSIONS:
			r = parse_versions(&e, out);
			break;
		case EXT_PRE_SHARED_KEY:
			r = cur_remaining(&all)
				? bad(out, "pre_shared_key is not the last extension")
				: TLS_OK;
			break;
		case EXT_ECH:
			out->has_ech = true;
			r = TLS_OK;
			break;
		default:
			r = TLS_OK;
			break;
		}
		if (r != TLS_OK)
			return r;
	}
	return has_sni ? TLS_OK : TLS_ABSENT;
}

/* stage 2: the ClientHello message @m of @n bytes (handshake header included) */
static enum tls_result parse_hello(const uint8_t *m, size_t n, struct tls_hello *out)
{
	struct cur c, v;
	const uint8_t *comp;
	uint8_t ncomp;
	uint16_t ver;

	cur_init(&c, m + 4, n - 4);
	ver = cur_u16(&c);
	if (!cur_ok(&c) || ver < 0x0301 || ver > 0x0303)
		return bad(out, "ClientHello legacy_version is not TLS 1.0-1.2");
	out->legacy_version = ver;
	out->max_version = ver;
	if (!cur_skip(&c, 32))
		return bad(out, "ClientHello too short for its random");
	if (!cur_sub(&c, cur_u8(&c), &v) || v.len > 32)
		return bad(out, "session id longer than 32 or overruns");
	if (!cur_sub(&c, cur_u16(&c), &v) || v.len < 2 || v.len % 2)
		return bad(out, "cipher suites length is wrong");
	ncomp = cur_u8(&c);
	comp = cur_bytes(&c, ncomp);
	if (!comp || ncomp == 0 || !memchr(comp, 0, ncomp))
		return bad(out, "compression methods lack null");
	if (!cur_remaining(&c))
		return TLS_ABSENT; /* no extensions at all: valid, no SNI */
	return parse_extensions(&c, out);
}

/* stage 1 for the common case: the whole ClientHello in the first record */
static bool in_first_record(const uint8_t *buf, size_t len, size_t *need)
{
	size_t rlen, mlen;

	if (len < 9)
		return false;
	rlen = (size_t)buf[3] << 8 | buf[4];
	mlen = (size_t)buf[6] << 16 | (size_t)buf[7] << 8 | buf[8];
	if (len < 5 + rlen || rlen < 4 || mlen + 4 > rlen)
		return false;
	*need = mlen + 4;
	return true;
}

enum tls_result tls_client_hello_parse(const uint8_t *buf, size_t len, struct tls_hello *out)
{
	size_t off = 0, have = 0, need = 0;
	enum tls_result r;

	memset(out, 0, offsetof(struct tls_hello, scratch));
	if (len == 0)
		return TLS_NEED_MORE;
	if (buf[0] != TLS_CT_HANDSHAKE) {
		out->why = "not a TLS handshake record";
		return TLS_ABSENT;
	}
	out->is_tls = true;

	if (in_first_record(buf, len, &need)) {
		size_t rlen = (size_t)buf[3] << 8 | buf[4];

		r = record_header(buf, 5, out);
		if (r != TLS_OK)
			return r;
		r = hs_header(buf + 5, &need, out);
		if (r != TLS_OK)
			return r;
		if (need != rlen)
			return bad(out, "data after the ClientHello in its record");
		out->n_records = 1;
		out->hello_len = 5 + rlen;
		return parse_hello(buf + 5, need, out);
	}

	for (;;) {
		size_t rlen, avail, take, before = have;
		const uint8_t *frag;

		r = record_header(buf + off, len - off, out);
		if (r != TLS_OK)
			return r;
		rlen = (size_t)buf[off + 3] << 8 | buf[off + 4];
		frag = buf + off + 5;
		avail = len - off - 5 < rlen ? len - off - 5 : rlen;
		out->n_records++;

		/* the handshake header first, then at most the rest of the message */
		take = have < 4 ? 4 - have : 0;
		take = take < avail ? take : avail;
		memcpy(out->scratch + have, frag, take);
		have += take;
		if (have && out->scratch[0] != TLS_HS_CLIENT_HELLO)
			return bad(out, "first handshake message is not a ClientHello");
		if (have == 4 && need == 0) {
			r = hs_header(out->scratch, &need, out);
			if (r != TLS_OK)
				return r;
		}
		if (need) {
			if (before + rlen > need)
				return bad(out, "data after the ClientHello in its record");
			memcpy(out->scratch + have, frag + take, avail - take);
			have += avail - take;
		}
		if (avail < rlen)
			return TLS_NEED_MORE;
		off += 5 + rlen;
		if (need && have == need)
			break;
		if (off == len)
			return TLS_NEED_MORE;
	}
	out->hello_len = off;
	return parse_hello(out->scratch, need, out);
}

enum tls_result tls_handshake_hello_parse(const uint8_t *msg, size_t len, struct tls_hello *out)
{
	size_t need = 0;
	enum tls_result r;

	memset(out, 0, offsetof(struct tls_hello, scratch));
	out->is_tls = true;
	if (len < 4)
		return TLS_NEED_MORE;
	r = hs_header(msg, &need, out);
	if (r != TLS_OK)
		return r;
	if (len < need)
		return TLS_NEED_MORE;
	out->hello_len = need;
	return parse_hello(msg, need, out);
}

int tls_alert_compose(uint8_t *out, size_t size, enum tls_alert_desc desc, uint16_t version)
{
	if (size < TLS_ALERT_LEN)
		return -ENOSPC;
	if (version < 0x0301 || version > 0x0303)
		version = 0x0303;
	out[0] = TLS_CT_ALERT;
	out[1] = (uint8_t)(version >> 8);
	out[2] = (uint8_t)version;
	out[3] = 0;
	out[4] = 2;
	out[5] = 2; /* fatal */
	out[6] = (uint8_t)desc;
	return TLS_ALERT_LEN;
}

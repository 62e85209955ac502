/* test_gw_quic.c - unit tests for a QUIC client's Initial packets (gateway/proto/quic.c,
 * gateway/quicsniff.c): the Initial keys and the client Initial of RFC 9001 Appendix A (version 1)
 * and RFC 9369 Appendix A (version 2) opened to the ClientHello naming example.com; a packet
 * altered in one byte, or opened with another connection ID, refused; the long header's rules; the
 * frames an Initial may carry; the CRYPTO stream reassembled from frames out of order and across
 * datagrams, and refused where overlapping bytes differ; coalesced packets stepped over. Packets
 * beyond the RFC's are sealed here with libcrypto (seal()), as a client would. */
#include "gateway/quicsniff.h"

#include <errno.h>
#include <openssl/evp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static const uint8_t rfc_dcid[8] = {0x83, 0x94, 0xc8, 0xf0, 0x3e, 0x51, 0x57, 0x08};

/* the RFC's files (tests/unit/data): the 1200-byte client Initials and the CRYPTO frame */
static size_t load(const char *name, uint8_t *out, size_t size)
{
	char path[512];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/tests/unit/data/%s", WD_SOURCE_DIR, name);
	f = fopen(path, "rb");
	assert_non_null(f);
	n = fread(out, 1, size, f);
	fclose(f);
	assert_true(n > 0);
	return n;
}

static void hex_eq(const uint8_t *got, size_t n, const char *want)
{
	char buf[256];

	assert_true(2 * n < sizeof(buf));
	for (size_t i = 0; i < n; i++)
		snprintf(buf + 2 * i, 3, "%02x", got[i]);
	assert_string_equal(buf, want);
}

static uint8_t work[65536];
static struct tls_hello th;

static void test_rfc_keys(void **state)
{
	struct gw_quic_keys k;

	(void)state;
	assert_int_equal(gw_quic_initial_keys(QUIC_VERSION_1, rfc_dcid, 8, &k), 0);
	hex_eq(k.key, 16, "1f369613dd76d5467730efcbe3b1a22d");
	hex_eq(k.iv, 12, "fa044b2f42a3fd3b46fb255c");
	hex_eq(k.hp, 16, "9f50449e04a0e810283a1e9933adedd2");
	assert_int_equal(gw_quic_initial_keys(QUIC_VERSION_2, rfc_dcid, 8, &k), 0);
	hex_eq(k.key, 16, "8b1a0bc121284290a29e0971b5cd045d");
	hex_eq(k.iv, 12, "91f73e2351d8fa91660e909f");
	hex_eq(k.hp, 16, "45b95e15235d6f45a6b19cbcb0294ba9");
	assert_int_equal(gw_quic_initial_keys(0xff00001d, rfc_dcid, 8, &k), -EINVAL);
}

/* the RFC's packet of @version opens to its CRYPTO frame and 917 bytes of padding */
static void rfc_packet(const char *file, uint32_t version)
{
	uint8_t pkt[1200], frame[245];
	struct quic_initial_hdr h;
	struct gw_quic_flow f;
	size_t off, plen;
	uint64_t pn;
	const char *why;

	assert_int_equal(load(file, pkt, sizeof(pkt)), 1200);
	assert_int_equal(load("quic_rfc_a2_crypto_frame.bin", frame, sizeof(frame)), 245);
	assert_int_equal(quic_initial_header_parse(pkt, sizeof(pkt), &h), QUIC_OK);
	assert_int_equal(h.version, version);
	assert_int_equal(h.dcid_len, 8);
	assert_memory_equal(h.dcid, rfc_dcid, 8);
	assert_int_equal(h.pn_offset, 18);
	assert_int_equal(h.pkt_len, 1200);
	assert_int_equal(gw_quic_initial_open(pkt, &h, work, &off, &plen, &pn, &why), QUIC_OK);
	assert_int_equal(pn, 2);
	assert_int_equal(off, 22);
	assert_int_equal(plen, 1162);
	assert_memory_equal(work + off, frame, sizeof(frame));
	for (size_t i = sizeof(frame); i < plen; i++)
		assert_int_equal(work[off + i], 0);
	/* the whole datagram: the ClientHello's name */
	memset(&f, 0, sizeof(f));
	assert_int_equal(gw_quic_datagram(&f, pkt, sizeof(pkt), work, sizeof(work), &th, &why),
			 QUIC_OK);
	assert_string_equal(th.sni, "example.com");
	assert_int_equal(th.max_version, 0x0304);
	assert_true(th.has_alpn);
	assert_int_equal(f.packets, 1);
	/* one byte of the ciphertext changed: it does not open */
	pkt[600] ^= 1;
	memset(&f, 0, sizeof(f));
	assert_int_equal(gw_quic_datagram(&f, pkt, sizeof(pkt), work, sizeof(work), &th, &why),
			 QUIC_MALFORMED);
	assert_string_equal(why, "QUIC Initial does not open with its connection ID's keys");
	pkt[600] ^= 1;
	/* another connection ID: other keys, it does not open either */
	pkt[6] ^= 1;
	memset(&f, 0, sizeof(f));
	assert_int_equal(gw_quic_datagram(&f, pkt, sizeof(pkt), work, sizeof(work), &th, &why),
			 QUIC_MALFORMED);
	pkt[6] ^= 1;
}

static void test_rfc9001_a2(void **state)
{
	(void)state;
	rfc_packet("quic_rfc9001_a2.bin", QUIC_VERSION_1);
}

static void test_rfc9369_a2(void **state)
{
	(void)state;
	rfc_packet("quic_rfc9369_a2.bin", QUIC_VERSION_2);
}

/* ------------------------------------------------------------ packets sealed here */

static size_t put_varint(uint8_t *p, uint64_t v)
{
	if (v < 64) {
		p[0] = (uint8_t)v;
		return 1;
	}
	if (v < 16384) {
		p[0] = (uint8_t)(0x40 | v >> 8);
		p[1] = (uint8_t)v;
		return 2;
	}
	p[0] = (uint8_t)(0x80 | v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return 4;
}

/* a CRYPTO frame of @n bytes of @data at @off */
static size_t crypto_frame(uint8_t *p, uint64_t off, const uint8_t *data, size_t n)
{
	size_t i = 0;

	p[i++] = 0x06;
	i += put_varint(p + i, off);
	i += put_varint(p + i, n);
	memcpy(p + i, data, n);
	return i + n;
}

/* a client Initial of version 1 with @dcid, packet number @pn, the frames @pl (@n bytes)
 * padded to 1200 bytes, sealed and header-protected as RFC 9001 §5 says; its length */
static size_t seal(uint8_t *out, const uint8_t *dcid, size_t dlen, uint32_t pn, const uint8_t *pl,
		   size_t n)
{
	struct gw_quic_keys k;
	uint8_t hdr[64], nonce[12], mask[16], payload[1200] = {0};
	size_t h = 0, pn_off, plen, total;
	EVP_CIPHER_CTX *c;
	int len;

	assert_int_equal(gw_quic_initial_keys(QUIC_VERSION_1, dcid, dlen, &k), 0);
	/* Length covers a 4-byte packet number, the payload and the tag: 1200 bytes in all */
	hdr[h++] = 0xc3;
	hdr[h++] = 0, hdr[h++] = 0, hdr[h++] = 0, hdr[h++] = 1;
	hdr[h++] = (uint8_t)dlen;
	memcpy(hdr + h, dcid, dlen);
	h += dlen;
	hdr[h++] = 0; /* no SCID */
	hdr[h++] = 0; /* no token */
	plen = 1200 - h - 2;
	hdr[h++] = (uint8_t)(0x40 | plen >> 8);
	hdr[h++] = (uint8_t)plen;
	pn_off = h;
	hdr[h++] = (uint8_t)(pn >> 24), hdr[h++] = (uint8_t)(pn >> 16);
	hdr[h++] = (uint8_t)(pn >> 8), hdr[h++] = (uint8_t)pn;
	assert_true(n <= plen - 4 - 16);
	memcpy(payload, pl, n);
	memcpy(nonce, k.iv, 12);
	for (int i = 0; i < 4; i++)
		nonce[11 - i] ^= (uint8_t)(pn >> (8 * i));
	memcpy(out, hdr, h);
	c = EVP_CIPHER_CTX_new();
	assert_true(EVP_EncryptInit_ex(c, EVP_aes_128_gcm(), NULL, k.key, nonce) > 0);
	assert_true(EVP_EncryptUpdate(c, NULL, &len, hdr, (int)h) > 0);
	assert_true(EVP_EncryptUpdate(c, out + h, &len, payload, (int)(plen - 4 - 16)) > 0);
	assert_true(EVP_EncryptFinal_ex(c, out + h + len, &len) > 0);
	assert_true(EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, 16, out + 1200 - 16) > 0);
	EVP_CIPHER_CTX_free(c);
	c = EVP_CIPHER_CTX_new();
	assert_true(EVP_EncryptInit_ex(c, EVP_aes_128_ecb(), NULL, k.hp, NULL) > 0);
	assert_true(EVP_EncryptUpdate(c, mask, &len, out + pn_off + 4, 16) > 0);
	EVP_CIPHER_CTX_free(c);
	out[0] ^= mask[0] & 0x0f;
	for (int i = 0; i < 4; i++)
		out[pn_off + (size_t)i] ^= mask[1 + i];
	total = 1200;
	return total;
}

static const uint8_t dcid2[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};

/* the RFC's ClientHello split in three pieces over two datagrams, out of order, with PING,
 * PADDING and ACK frames between: NEED_MORE, then the name */
static void test_split_across_datagrams(void **state)
{
	uint8_t frame[245], pl[600], d1[1200], d2[1200];
	const uint8_t *hello;
	struct gw_quic_flow f;
	const char *why;
	size_t n = 0;

	(void)state;
	load("quic_rfc_a2_crypto_frame.bin", frame, sizeof(frame));
	hello = frame + 4; /* the frame's header is 06 00 40f1: offset 0, 241 bytes */
	pl[n++] = 0x01;	   /* PING */
	n += crypto_frame(pl + n, 150, hello + 150, 91);
	pl[n++] = 0x00;
	n += crypto_frame(pl + n, 0, hello, 60);
	seal(d1, dcid2, sizeof(dcid2), 0, pl, n);
	memset(&f, 0, sizeof(f));
	assert_int_equal(gw_quic_datagram(&f, d1, 1200, work, sizeof(work), &th, &why),
			 QUIC_NEED_MORE);
	n = 0;
	pl[n++] = 0x02; /* ACK: largest 0, delay 0, no more ranges, first range 0 */
	pl[n++] = 0, pl[n++] = 0, pl[n++] = 0, pl[n++] = 0;
	n += crypto_frame(pl + n, 40, hello + 40, 120); /* overlaps both: the same bytes */
	seal(d2, dcid2, sizeof(dcid2), 1, pl, n);
	assert_int_equal(gw_quic_datagram(&f, d2, 1200, work, sizeof(work), &th, &why), QUIC_OK);
	assert_string_equal(th.sni, "example.com");
	assert_int_equal(f.packets, 2);

	/* the same second datagram with other bytes where it overlaps: refused */
	memset(&f, 0, sizeof(f));
	assert_int_equal(gw_quic_datagram(&f, d1, 1200, work, sizeof(work), &th, &why),
			 QUIC_NEED_MORE);
	{
		uint8_t other[120];

		memcpy(other, hello + 40, sizeof(other));
		other[10] ^= 0x20;
		n = 0;
		n += crypto_frame(pl + n, 40, other, sizeof(other));
		seal(d2, dcid2, sizeof(dcid2), 1, pl, n);
	}
	assert_int_equal(gw_quic_datagram(&f, d2, 1200, work, sizeof(work), &th, &why),
			 QUIC_MALFORMED);
	assert_string_equal(why, "QUIC CRYPTO data differs where it overlaps");

	/* a second datagram of another connection ID in the same flow: refused */
	memset(&f, 0, sizeof(f));
	assert_int_equal(gw_quic_datagram(&f, d1, 1200, work, sizeof(work), &th, &why),
			 QUIC_NEED_MORE);
	n = crypto_frame(pl, 60, hello + 60, 90);
	seal(d2, rfc_dcid, sizeof(rfc_dcid), 1, pl, n);
	assert_int_equal(gw_quic_datagram(&f, d2, 1200, work, sizeof(work), &th, &why),
			 QUIC_MALFORMED);
	assert_string_equal(why, "QUIC Initial of another connection in the same flow");
}

/* an Initial coalesced with a 0-RTT packet after it: the 0-RTT packet is stepped over */
static void test_coalesced(void **state)
{
	uint8_t frame[245], d[1300];
	struct gw_quic_flow f;
	const char *why;
	size_t n;

	(void)state;
	load("quic_rfc_a2_crypto_frame.bin", frame, sizeof(frame));
	n = seal(d, dcid2, sizeof(dcid2), 0, frame, sizeof(frame));
	/* a 0-RTT long header (type 1 in version 1): 30 bytes, nothing the gateway opens */
	d[n] = 0xd0;
	d[n + 1] = 0, d[n + 2] = 0, d[n + 3] = 0, d[n + 4] = 1;
	d[n + 5] = 0;  /* no DCID */
	d[n + 6] = 0;  /* no SCID */
	d[n + 7] = 22; /* Length */
	memset(d + n + 8, 0xaa, 22);
	memset(&f, 0, sizeof(f));
	assert_int_equal(gw_quic_datagram(&f, d, n + 30, work, sizeof(work), &th, &why), QUIC_OK);
	assert_string_equal(th.sni, "example.com");
	assert_int_equal(f.packets, 1);
	/* a Length past the datagram's end is malformed even in the packet after */
	d[n + 7] = 40;
	memset(&f, 0, sizeof(f));
	assert_int_equal(gw_quic_datagram(&f, d, n + 30, work, sizeof(work), &th, &why),
			 QUIC_MALFORMED);
}

static void test_frames(void **state)
{
	struct quic_crypto *acc = calloc(1, sizeof(*acc));
	const char *why;
	uint8_t p[64];

	(void)state;
	assert_non_null(acc);
	/* a STREAM frame (0x08) in an Initial */
	p[0] = 0x08;
	assert_int_equal(quic_initial_frames(p, 4, acc, &why), QUIC_MALFORMED);
	assert_string_equal(why, "QUIC frame type not allowed in an Initial packet");
	/* CONNECTION_CLOSE */
	p[0] = 0x1c;
	assert_int_equal(quic_initial_frames(p, 4, acc, &why), QUIC_MALFORMED);
	/* a CRYPTO frame longer than what is left */
	p[0] = 0x06, p[1] = 0, p[2] = 10, p[3] = 'a';
	assert_int_equal(quic_initial_frames(p, 4, acc, &why), QUIC_MALFORMED);
	assert_string_equal(why, "QUIC frame overruns its packet");
	/* CRYPTO data beyond 16 KiB */
	p[0] = 0x06, p[1] = 0x80, p[2] = 0x00, p[3] = 0x40, p[4] = 0x00, p[5] = 1, p[6] = 'x';
	assert_int_equal(quic_initial_frames(p, 7, acc, &why), QUIC_MALFORMED);
	assert_string_equal(why, "QUIC CRYPTO data beyond 16 KiB (a ClientHello is no larger)");
	/* an empty payload */
	assert_int_equal(quic_initial_frames(p, 0, acc, &why), QUIC_MALFORMED);
	/* PADDING only: fine, nothing taken */
	memset(p, 0, sizeof(p));
	assert_int_equal(quic_initial_frames(p, sizeof(p), acc, &why), QUIC_OK);
	assert_int_equal(quic_crypto_hello(acc, &th), QUIC_NEED_MORE);
	/* a first handshake message that is no ClientHello */
	p[0] = 0x06, p[1] = 0, p[2] = 4, p[3] = 2, p[4] = 0, p[5] = 0, p[6] = 40;
	assert_int_equal(quic_initial_frames(p, 7, acc, &why), QUIC_OK);
	assert_int_equal(quic_crypto_hello(acc, &th), QUIC_MALFORMED);
	free(acc);
}

static void test_header(void **state)
{
	uint8_t pkt[1200];
	struct quic_initial_hdr h;

	(void)state;
	load("quic_rfc9001_a2.bin", pkt, sizeof(pkt));
	/* a short header */
	pkt[0] = 0x40;
	assert_int_equal(quic_initial_header_parse(pkt, sizeof(pkt), &h), QUIC_ABSENT);
	pkt[0] = 0xc0;
	/* version negotiation, another version */
	memset(pkt + 1, 0, 4);
	assert_int_equal(quic_initial_header_parse(pkt, sizeof(pkt), &h), QUIC_ABSENT);
	assert_string_equal(h.why, "a QUIC version negotiation packet");
	pkt[4] = 2;
	assert_int_equal(quic_initial_header_parse(pkt, sizeof(pkt), &h), QUIC_ABSENT);
	pkt[4] = 1;
	/* the fixed bit clear */
	pkt[0] = 0x80;
	assert_int_equal(quic_initial_header_parse(pkt, sizeof(pkt), &h), QUIC_MALFORMED);
	pkt[0] = 0xc0;
	/* a Length past the datagram */
	assert_int_equal(quic_initial_header_parse(pkt, 1199, &h), QUIC_MALFORMED);
	assert_string_equal(h.why, "QUIC Initial longer than its datagram");
	/* a DCID of 4 bytes in a client Initial */
	pkt[5] = 4;
	assert_int_equal(quic_initial_header_parse(pkt, sizeof(pkt), &h), QUIC_MALFORMED);
	/* of 21 */
	pkt[5] = 21;
	assert_int_equal(quic_initial_header_parse(pkt, sizeof(pkt), &h), QUIC_MALFORMED);
	pkt[5] = 8;
	assert_int_equal(quic_initial_header_parse(pkt, sizeof(pkt), &h), QUIC_OK);
	/* every prefix of the packet is refused or absent, never read past */
	for (size_t n = 0; n < 40; n++)
		assert_int_not_equal(quic_initial_header_parse(pkt, n, &h), QUIC_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rfc_keys),   cmocka_unit_test(test_rfc9001_a2),
	    cmocka_unit_test(test_rfc9369_a2), cmocka_unit_test(test_split_across_datagrams),
	    cmocka_unit_test(test_coalesced),  cmocka_unit_test(test_frames),
	    cmocka_unit_test(test_header),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

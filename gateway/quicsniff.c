/* quicsniff.c - a QUIC client's Initial packets opened with libcrypto (quicsniff.h): HKDF-SHA256
 * for the Initial secrets and keys, AES-128-ECB for the header protection mask, AES-128-GCM for the
 * payload, all from OpenSSL's EVP interfaces (no cryptography of our own). The framing is
 * proto/quic.c's. */
#include "gateway/quicsniff.h"

#include <errno.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <string.h>

/* the initial salts (RFC 9001 §5.2, RFC 9369 §3.3.1) */
static const uint8_t salt_v1[20] = {0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34, 0xb3, 0x4d, 0x17,
				    0x9a, 0xe6, 0xa4, 0xc8, 0x0c, 0xad, 0xcc, 0xbb, 0x7f, 0x0a};
static const uint8_t salt_v2[20] = {0x0d, 0xed, 0xe3, 0xde, 0xf7, 0x00, 0xa6, 0xdb, 0x81, 0x93,
				    0x81, 0xbe, 0x6e, 0x26, 0x9d, 0xcb, 0xf9, 0xbd, 0x2e, 0xd9};

/* HKDF-Extract (@salt, @ikm) into @prk (32 bytes), or HKDF-Expand (@ikm as the PRK, @info)
 * into @out (@n bytes). Return: 0 or -EIO. */
static int hkdf(int mode, const uint8_t *salt, size_t slen, const uint8_t *ikm, size_t ilen,
		const uint8_t *info, size_t infolen, uint8_t *out, size_t n)
{
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, NULL);
	size_t outlen = n;
	int ok;

	ok = c && EVP_PKEY_derive_init(c) > 0 && EVP_PKEY_CTX_set_hkdf_mode(c, mode) > 0 &&
	     EVP_PKEY_CTX_set_hkdf_md(c, EVP_sha256()) > 0 &&
	     (!salt || EVP_PKEY_CTX_set1_hkdf_salt(c, salt, (int)slen) > 0) &&
	     EVP_PKEY_CTX_set1_hkdf_key(c, ikm, (int)ilen) > 0 &&
	     (!info || EVP_PKEY_CTX_add1_hkdf_info(c, info, (int)infolen) > 0) &&
	     EVP_PKEY_derive(c, out, &outlen) > 0 && outlen == n;
	EVP_PKEY_CTX_free(c);
	return ok ? 0 : -EIO;
}

/* HKDF-Expand-Label(@secret, @label, "", @n) of TLS 1.3 (RFC 8446 §7.1) */
static int expand_label(const uint8_t secret[32], const char *label, uint8_t *out, size_t n)
{
	uint8_t info[2 + 1 + 6 + 32 + 1];
	size_t l = strlen(label), i = 0;

	if (l > 32)
		return -EINVAL;
	info[i++] = (uint8_t)(n >> 8);
	info[i++] = (uint8_t)n;
	info[i++] = (uint8_t)(6 + l);
	memcpy(info + i, "tls13 ", 6);
	i += 6;
	memcpy(info + i, label, l);
	i += l;
	info[i++] = 0; /* no context */
	return hkdf(EVP_PKEY_HKDEF_MODE_EXPAND_ONLY, NULL, 0, secret, 32, info, i, out, n);
}

int gw_quic_initial_keys(uint32_t version, const uint8_t *dcid, size_t dcid_len,
			 struct gw_quic_keys *out)
{
	bool v2 = version == QUIC_VERSION_2;
	uint8_t initial[32], client[32];
	int ret;

	if (version != QUIC_VERSION_1 && !v2)
		return -EINVAL;
	ret = hkdf(EVP_PKEY_HKDEF_MODE_EXTRACT_ONLY, v2 ? salt_v2 : salt_v1, sizeof(salt_v1), dcid,
		   dcid_len, NULL, 0, initial, sizeof(initial));
	if (!ret)
		ret = expand_label(initial, "client in", client, sizeof(client));
	if (!ret)
		ret = expand_label(client, v2 ? "quicv2 key" : "quic key", out->key,
				   sizeof(out->key));
	if (!ret)
		ret = expand_label(client, v2 ? "quicv2 iv" : "quic iv", out->iv, sizeof(out->iv));
	if (!ret)
		ret = expand_label(client, v2 ? "quicv2 hp" : "quic hp", out->hp, sizeof(out->hp));
	OPENSSL_cleanse(initial, sizeof(initial));
	OPENSSL_cleanse(client, sizeof(client));
	return ret;
}

/* AES-128-ECB of one block: the header protection mask (RFC 9001 §5.4.3) */
static bool hp_mask(const uint8_t hp[16], const uint8_t sample[16], uint8_t mask[16])
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int n = 0;
	bool ok;

	ok = c && EVP_EncryptInit_ex(c, EVP_aes_128_ecb(), NULL, hp, NULL) > 0 &&
	     EVP_CIPHER_CTX_set_padding(c, 0) > 0 &&
	     EVP_EncryptUpdate(c, mask, &n, sample, 16) > 0 && n == 16;
	EVP_CIPHER_CTX_free(c);
	return ok;
}

/* AES-128-GCM open of @ct (@n bytes, then the tag) with @aad into @plain */
static bool gcm_open(const struct gw_quic_keys *k, const uint8_t nonce[12], const uint8_t *aad,
		     size_t aadlen, const uint8_t *ct, size_t n, uint8_t *plain)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int len = 0, fin = 0;
	bool ok;

	ok = c && EVP_DecryptInit_ex(c, EVP_aes_128_gcm(), NULL, NULL, NULL) > 0 &&
	     EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_IVLEN, 12, NULL) > 0 &&
	     EVP_DecryptInit_ex(c, NULL, NULL, k->key, nonce) > 0 &&
	     EVP_DecryptUpdate(c, NULL, &len, aad, (int)aadlen) > 0 &&
	     EVP_DecryptUpdate(c, plain, &len, ct, (int)n) > 0 && (size_t)len == n &&
	     EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, QUIC_TAG_LEN, (void *)(ct + n)) > 0 &&
	     EVP_DecryptFinal_ex(c, plain + len, &fin) > 0;
	EVP_CIPHER_CTX_free(c);
	return ok;
}

enum quic_result gw_quic_initial_open(const uint8_t *pkt, const struct quic_initial_hdr *h,
				      uint8_t *work, size_t *payload_off, size_t *plain_len,
				      uint64_t *pn, const char **why)
{
	uint8_t mask[16], nonce[12];
	struct gw_quic_keys k;
	size_t pn_len, ct_len, hlen;
	bool opened;

	*why = NULL;
	*payload_off = *plain_len = 0;
	*pn = 0;
	if (gw_quic_initial_keys(h->version, h->dcid, h->dcid_len, &k) ||
	    !hp_mask(k.hp, pkt + h->pn_offset + 4, mask)) {
		*why = "QUIC Initial keys could not be derived (libcrypto)";
		return QUIC_MALFORMED;
	}
	/* the header unprotected in the copy (the packet is relayed as it came) */
	memcpy(work, pkt, h->pkt_len);
	work[0] ^= mask[0] & 0x0f;
	pn_len = (size_t)(work[0] & 3) + 1;
	for (size_t i = 0; i < pn_len; i++) {
		work[h->pn_offset + i] ^= mask[1 + i];
		*pn = *pn << 8 | work[h->pn_offset + i];
	}
	memcpy(nonce, k.iv, sizeof(nonce));
	for (size_t i = 0; i < 8; i++)
		nonce[11 - i] ^= (uint8_t)(*pn >> (8 * i));
	hlen = h->pn_offset + pn_len;
	ct_len = h->pkt_len - hlen - QUIC_TAG_LEN;
	opened = gcm_open(&k, nonce, work, hlen, work + hlen, ct_len, work + hlen);
	OPENSSL_cleanse(&k, sizeof(k));
	if (!opened) {
		*why = "QUIC Initial does not open with its connection ID's keys";
		return QUIC_MALFORMED;
	}
	/* the reserved bits, checked only once the packet is authentic (RFC 9000 §17.2) */
	if (work[0] & 0x0c) {
		*why = "QUIC Initial's reserved bits are set";
		return QUIC_MALFORMED;
	}
	*payload_off = hlen;
	*plain_len = ct_len;
	return QUIC_OK;
}

enum quic_result gw_quic_datagram(struct gw_quic_flow *f, const uint8_t *dgram, size_t len,
				  uint8_t *work, size_t wsize, struct tls_hello *th,
				  const char **why)
{
	struct quic_initial_hdr h;
	size_t off = 0, plen, poff;
	uint64_t pn;
	unsigned initials = 0;
	enum quic_result r;

	*why = NULL;
	while (off < len) {
		r = quic_initial_header_parse(dgram + off, len - off, &h);
		if (r == QUIC_ABSENT && h.pkt_len && initials) {
			off += h.pkt_len; /* a 0-RTT or Handshake packet after an Initial */
			continue;
		}
		if (r == QUIC_ABSENT && initials)
			break; /* a short-header packet: the rest of the datagram is its */
		if (r != QUIC_OK) {
			*why = h.why;
			return r;
		}
		if (!f->version) {
			f->version = h.version;
			f->dcid_len = h.dcid_len;
			memcpy(f->dcid, h.dcid, h.dcid_len);
		} else if (h.version != f->version || h.dcid_len != f->dcid_len ||
			   memcmp(h.dcid, f->dcid, h.dcid_len)) {
			*why = "QUIC Initial of another connection in the same flow";
			return QUIC_MALFORMED;
		}
		if (h.pkt_len > wsize) {
			*why = "QUIC Initial larger than the gateway's datagram buffer";
			return QUIC_MALFORMED;
		}
		r = gw_quic_initial_open(dgram + off, &h, work, &poff, &plen, &pn, why);
		if (r == QUIC_OK)
			r = quic_initial_frames(work + poff, plen, &f->crypto, why);
		if (r != QUIC_OK)
			return r;
		f->packets++;
		initials++;
		off += h.pkt_len;
	}
	r = quic_crypto_hello(&f->crypto, th);
	if (r == QUIC_MALFORMED || r == QUIC_ABSENT)
		*why = r == QUIC_ABSENT ? "QUIC ClientHello without a server name" : th->why;
	return r;
}

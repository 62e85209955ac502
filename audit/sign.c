/* sign.c - the keys that sign run records: ed25519 through libcrypto (EVP_PKEY_ED25519,
 * EVP_DigestSign), a person's key made on first use (0600), the signed line's layout. */
#include "audit/audit.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct audit_key {
	EVP_PKEY *pkey;
	bool priv;
	char id[8 + 2 * AUDIT_HASH_LEN + 1]; /* "ed25519:" + hex */
};

/*
 * A key file as PEM_write_PrivateKey()/PEM_write_PUBKEY() write an ed25519 key: one line of
 * base64 between the labels, the DER a fixed prefix (RFC 8410: the PKCS#8 / SPKI wrapping of
 * id-Ed25519) and the 32 raw bytes. Such a file is read without OpenSSL's decoders (their
 * set-up was 5.8 M instructions of a launch: docs/benchmarks.md); any other layout goes the
 * decoders' way, so what a file means does not change, only how fast the usual one is read.
 */
struct raw_form {
	const char *begin, *end; /* the labels' lines */
	size_t b64;		 /* the base64 line's length */
	size_t pad;		 /* how many '=' end it */
	const uint8_t *der;	 /* the DER before the 32 key bytes */
	size_t der_len;
	bool priv;
};

static const uint8_t der_priv[] = {0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06,
				   0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20};
static const uint8_t der_pub[] = {0x30, 0x2a, 0x30, 0x05, 0x06, 0x03,
				  0x2b, 0x65, 0x70, 0x03, 0x21, 0x00};
static const struct raw_form raw_forms[] = {
    {"-----BEGIN PRIVATE KEY-----\n", "\n-----END PRIVATE KEY-----\n", 64, 0, der_priv,
     sizeof(der_priv), true},
    {"-----BEGIN PUBLIC KEY-----\n", "\n-----END PUBLIC KEY-----\n", 60, 1, der_pub,
     sizeof(der_pub), false},
};

/* raw_key() - when @text[0..@len) is exactly one of raw_forms, its 32 key bytes in @raw and
 * the form in *@form. Return: true when it is (pure: no provider is touched) */
static bool raw_key(const char *text, size_t len, uint8_t raw[32], const struct raw_form **form)
{
	uint8_t der[64 + 1];

	for (size_t i = 0; i < WD_ARRAY_SIZE(raw_forms); i++) {
		const struct raw_form *f = &raw_forms[i];
		size_t bl = strlen(f->begin), el = strlen(f->end);
		const char *b64 = text + bl;

		if (len != bl + f->b64 + el || memcmp(text, f->begin, bl) ||
		    memcmp(b64 + f->b64, f->end, el))
			continue;
		for (size_t j = 0; j < f->b64; j++)
			if (j >= f->b64 - f->pad ? b64[j] != '='
						 : !((b64[j] >= 'A' && b64[j] <= 'Z') ||
						     (b64[j] >= 'a' && b64[j] <= 'z') ||
						     (b64[j] >= '0' && b64[j] <= '9') ||
						     b64[j] == '+' || b64[j] == '/'))
				return false;
		/* EVP_DecodeBlock() counts the padding's bytes too */
		if (EVP_DecodeBlock(der, (const unsigned char *)b64, (int)f->b64) !=
			(int)(f->der_len + 32 + f->pad) ||
		    memcmp(der, f->der, f->der_len)) {
			OPENSSL_cleanse(der, sizeof(der));
			return false;
		}
		memcpy(raw, der + f->der_len, 32);
		OPENSSL_cleanse(der, sizeof(der));
		*form = f;
		return true;
	}
	return false;
}

/* the member a signature is written as, and its base64 length (64 bytes) */
#define SIG_KEY ",\"sig\":\""
#define SIG_B64 88

/* make_id() - @k->id from the raw public key */
static int make_id(struct audit_key *k)
{
	uint8_t raw[32], d[AUDIT_HASH_LEN];
	size_t n = sizeof(raw);

	if (EVP_PKEY_get_raw_public_key(k->pkey, raw, &n) != 1 || n != sizeof(raw))
		return -EINVAL;
	audit_sha256(raw, n, d);
	memcpy(k->id, "ed25519:", 8);
	audit_hex(d, sizeof(d), k->id + 8);
	return 0;
}

/* new_key() - a fresh private key written to @path (O_EXCL, 0600, no link followed) */
static int new_key(const char *path, struct wd_err *err)
{
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_ED25519, NULL);
	EVP_PKEY *pkey = NULL;
	char dir[PATH_MAX];
	FILE *f = NULL;
	int fd = -1, ret;

	if (strlen(path) >= sizeof(dir)) {
		ret = wd_err_set(err, -ENAMETOOLONG, "key path is too long: %s", path);
		goto out;
	}
	strcpy(dir, path);
	ret = wd_mkdir_p(dirname(dir), 0700);
	if (ret < 0) {
		ret = wd_err_set(err, ret, "cannot create the folder of %s: %s", path,
				 strerror(-ret));
		goto out;
	}
	if (!ctx || EVP_PKEY_keygen_init(ctx) != 1 || EVP_PKEY_keygen(ctx, &pkey) != 1) {
		ret = wd_err_set(err, -EIO, "cannot make an ed25519 key (libcrypto)");
		goto out;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		ret = errno == EEXIST ? 0 /* another process made it first: load that one */
				      : wd_err_set(err, -errno, "cannot create signing key %s: %s",
						   path, strerror(errno));
		goto out;
	}
	f = fdopen(fd, "w");
	if (!f) {
		ret = wd_err_set(err, -errno, "signing key %s: %s", path, strerror(errno));
		goto out;
	}
	fd = -1;
	if (PEM_write_PrivateKey(f, pkey, NULL, NULL, 0, NULL, NULL) != 1 || fflush(f) ||
	    fsync(fileno(f))) {
		ret = wd_err_set(err, -EIO, "cannot write signing key %s", path);
		unlink(path);
		goto out;
	}
	ret = 0;
out:
	if (f)
		fclose(f);
	wd_closep(&fd);
	EVP_PKEY_free(pkey);
	EVP_PKEY_CTX_free(ctx);
	return ret;
}

/* Largest key file read (PEM keys are a few hundred bytes; a certificate bundle is not one) */
#define KEY_FILE_MAX (1 << 20)

/* read_key_file() - the whole of a key file (@fd; at most KEY_FILE_MAX bytes) into @out.
 * Return: 0 or a negative errno */
static int read_key_file(int fd, struct wd_buf *out)
{
	char buf[4096];
	ssize_t n;
	int ret;

	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			break;
		}
		if (n == 0) {
			ret = 0;
			break;
		}
		if (out->len + (size_t)n > KEY_FILE_MAX) {
			ret = -EFBIG;
			break;
		}
		ret = wd_buf_append(out, buf, (size_t)n);
		if (ret < 0)
			break;
	}
	OPENSSL_cleanse(buf, sizeof(buf));
	return ret;
}

/* pem_key() - a key from PEM @text through OpenSSL's decoders: a PKCS#8 private key, else a
 * public key (SubjectPublicKeyInfo); *@priv says which. Return: the key, or NULL */
static EVP_PKEY *pem_key(const struct wd_buf *text, bool *priv)
{
	BIO *b = BIO_new_mem_buf(text->data, (int)text->len);
	EVP_PKEY *pkey = NULL;

	if (!b)
		return NULL;
	pkey = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
	*priv = pkey != NULL;
	if (!pkey && BIO_reset(b) == 1)
		pkey = PEM_read_bio_PUBKEY(b, NULL, NULL, NULL);
	BIO_free(b);
	return pkey;
}

int audit_key_load(const char *path, bool create, struct audit_key **ret_key, struct wd_err *err)
{
	struct wd_buf text = WD_BUF_INIT;
	const struct raw_form *form;
	struct audit_key *k = NULL;
	uint8_t raw[32];
	struct stat st;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0 && errno == ENOENT && create) {
		ret = new_key(path, err);
		if (ret < 0)
			return ret;
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	}
	if (fd < 0)
		return wd_err_set(err, -errno, "cannot open key %s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return wd_err_set(err, -EINVAL, "key %s is not a regular file", path);
	}
	ret = read_key_file(fd, &text);
	close(fd);
	if (ret < 0) {
		ret = wd_err_set(err, ret, "key %s: %s", path, strerror(-ret));
		goto out;
	}
	k = calloc(1, sizeof(*k));
	if (!k) {
		ret = wd_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	if (raw_key(text.data ? text.data : "", text.len, raw, &form)) {
		k->priv = form->priv;
		k->pkey = form->priv ? EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, NULL, raw, 32)
				     : EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, NULL, raw, 32);
		OPENSSL_cleanse(raw, sizeof(raw));
	} else {
		k->pkey = pem_key(&text, &k->priv);
	}
#ifndef _WIN32
	/* Windows has no mode bits (the C runtime makes st_mode up from the read-only flag): a key
	 * there is the user's by its folder's inherited DACL (%LOCALAPPDATA%: the user, SYSTEM,
	 * Administrators), which is not read (docs/platforms.md) */
	if (k->pkey && k->priv && (st.st_mode & 077)) {
		ret = wd_err_set(err, -EPERM,
				 "signing key %s can be read by others (mode %04o); fix: "
				 "chmod 600 %s",
				 path, (unsigned)(st.st_mode & 07777), path);
		goto out;
	}
#endif
	if (!k->pkey || EVP_PKEY_get_base_id(k->pkey) != EVP_PKEY_ED25519 || make_id(k) < 0) {
		ret = wd_err_set(err, -EINVAL, "%s is not an ed25519 key in PEM", path);
		goto out;
	}
	*ret_key = k;
	k = NULL;
	ret = 0;
out:
	if (text.data)
		OPENSSL_cleanse(text.data, text.len);
	wd_buf_free(&text);
	audit_key_free(k);
	return ret;
}

void audit_key_free(struct audit_key *k)
{
	if (!k)
		return;
	EVP_PKEY_free(k->pkey);
	free(k);
}

const char *audit_key_id(const struct audit_key *k)
{
	return k->id;
}

bool audit_key_can_sign(const struct audit_key *k)
{
	return k->priv;
}

int audit_key_public_pem(const struct audit_key *k, struct wd_buf *out)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *p;
	long n;
	int ret = -EIO;

	if (b && PEM_write_bio_PUBKEY(b, k->pkey) == 1 && (n = BIO_get_mem_data(b, &p)) > 0)
		ret = wd_buf_append(out, p, (size_t)n);
	BIO_free(b);
	return ret;
}

int audit_key_sign(const struct audit_key *k, const void *msg, size_t len, uint8_t sig[64])
{
	EVP_MD_CTX *ctx;
	size_t n = 64;
	int ret = -EIO;

	if (!k->priv)
		return -EINVAL;
	ctx = EVP_MD_CTX_new();
	if (ctx && EVP_DigestSignInit(ctx, NULL, NULL, NULL, k->pkey) == 1 &&
	    EVP_DigestSign(ctx, sig, &n, msg, len) == 1 && n == 64)
		ret = 0;
	EVP_MD_CTX_free(ctx);
	return ret;
}

int audit_key_verify(const struct audit_key *k, const void *msg, size_t len, const uint8_t sig[64])
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int ret = -EBADMSG;

	if (ctx && EVP_DigestVerifyInit(ctx, NULL, NULL, NULL, k->pkey) == 1 &&
	    EVP_DigestVerify(ctx, sig, 64, msg, len) == 1)
		ret = 0;
	EVP_MD_CTX_free(ctx);
	return ret;
}

int audit_sign_line(const struct audit_key *k, const char *line, size_t len, struct wd_buf *out)
{
	uint8_t sig[64];
	char b64[SIG_B64 + 1];
	int ret;

	if (len < 3 || line[len - 1] != '\n' || line[len - 2] != '}')
		return -EINVAL;
	ret = audit_key_sign(k, line, len - 1, sig);
	if (ret < 0)
		return ret;
	if (EVP_EncodeBlock((unsigned char *)b64, sig, sizeof(sig)) != SIG_B64)
		return -EIO;
	ret = wd_buf_append(out, line, len - 2);
	if (!ret)
		ret = wd_buf_printf(out, SIG_KEY "%s\"}\n", b64);
	return ret < 0 ? ret : 0;
}

int audit_log_write_signed(struct audit_log *log, const struct audit_event *ev,
			   const struct audit_key *k, unsigned flags, struct wd_err *err)
{
	struct wd_buf line = WD_BUF_INIT, signed_line = WD_BUF_INIT;
	struct audit_event stamped = *ev;
	int ret;

	/* encoded here, not by the writer, which stamps only the events it encodes itself */
	if (!stamped.ts.tv_sec && !stamped.ts.tv_nsec)
		clock_gettime(CLOCK_REALTIME, &stamped.ts);
	ret = audit_event_encode(&stamped, &line, err);
	if (ret == 0 && (ret = audit_sign_line(k, line.data, line.len, &signed_line)) < 0)
		wd_err_set(err, ret, "signing the %s line: %s", stamped.action, strerror(-ret));
	if (ret == 0)
		ret = audit_log_write_encoded(log, &stamped, signed_line.data, signed_line.len,
					      flags, err);
	wd_buf_free(&line);
	wd_buf_free(&signed_line);
	return ret;
}

/* trailing() - when @line[0..*@len) ends with ,"@key":"VALUE"} (VALUE without quotes or
 * backslashes), cut it to end before that member and point *@val at VALUE (*@vlen long).
 * Return: true when it did */
static bool trailing(const char *line, size_t *len, const char *key, const char **val, size_t *vlen)
{
	size_t n = *len, klen = strlen(key), q;

	if (n < 2 || line[n - 1] != '}' || line[n - 2] != '"')
		return false;
	for (q = n - 2; q > 0 && line[q - 1] != '"'; q--)
		if (line[q - 1] == '\\')
			return false;
	if (q == 0 || q - 1 < klen + 4)
		return false;
	/* line[q-1] is the opening quote of VALUE; before it ,"key": */
	if (line[q - 2] != ':' || line[q - 3] != '"' || memcmp(line + q - 3 - klen, key, klen) ||
	    line[q - 4 - klen] != '"' || line[q - 5 - klen] != ',')
		return false;
	*val = line + q;
	*vlen = n - 2 - q;
	*len = q - 5 - klen;
	return true;
}

int audit_line_signed_part(const char *line, size_t len, struct wd_buf *out, uint8_t sig[64])
{
	uint8_t raw[SIG_B64];
	const char *v;
	size_t vlen, n;
	int ret;

	wd_buf_reset(out);
	/* without the chain's member (a line may be signed and not chained) */
	if (trailing(line, &len, "prev", &v, &vlen)) {
		ret = wd_buf_append(out, line, len);
		if (!ret)
			ret = wd_buf_append(out, "}", 1);
	} else {
		ret = wd_buf_append(out, line, len);
	}
	if (ret < 0)
		return ret;
	n = out->len;
	if (!trailing(out->data, &n, "sig", &v, &vlen))
		return -ENOENT;
	if (n < 1 || out->data[0] != '{')
		return -EBADMSG; /* a record is an object: something before its members */
	if (vlen != SIG_B64 || EVP_DecodeBlock(raw, (const unsigned char *)v, SIG_B64) != 64 + 2 ||
	    v[SIG_B64 - 1] != '=' || v[SIG_B64 - 2] != '=')
		return -EBADMSG;
	memcpy(sig, raw, 64);
	out->len = n;
	return wd_buf_append(out, "}", 1);
}

int audit_base64(const void *p, size_t n, struct wd_buf *out)
{
	char *tmp = malloc(4 * ((n + 2) / 3) + 1);
	int len, ret;

	if (!tmp)
		return -ENOMEM;
	len = EVP_EncodeBlock((unsigned char *)tmp, p, (int)n);
	ret = len < 0 ? -EINVAL : wd_buf_append(out, tmp, (size_t)len);
	free(tmp);
	return ret;
}

int audit_unbase64(const char *s, size_t n, struct wd_buf *out)
{
	unsigned char *tmp;
	size_t pad = 0;
	int len, ret;

	if (n % 4)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (s[i] == '\n' || s[i] == ' ' || s[i] == '\r')
			return -EINVAL; /* EVP_DecodeBlock would skip them */
	if (n && s[n - 1] == '=')
		pad = n > 1 && s[n - 2] == '=' ? 2 : 1;
	tmp = malloc(n / 4 * 3 + 1);
	if (!tmp)
		return -ENOMEM;
	len = EVP_DecodeBlock(tmp, (const unsigned char *)s, (int)n);
	ret = len < 0 || (size_t)len < pad ? -EINVAL : wd_buf_append(out, tmp, (size_t)len - pad);
	free(tmp);
	return ret;
}

/* sign.c - the keys that sign run records: ed25519 through libcrypto (EVP_PKEY_ED25519,
 * EVP_DigestSign), a person's key made on first use (0600), the signed line's layout. */
#include "audit/audit.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
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

int audit_key_load(const char *path, bool create, struct audit_key **ret_key, struct wd_err *err)
{
	struct audit_key *k = NULL;
	struct stat st;
	FILE *f = NULL;
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
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return wd_err_set(err, -errno, "key %s: %s", path, strerror(errno));
	}
	k = calloc(1, sizeof(*k));
	if (!k) {
		ret = wd_err_set(err, -ENOMEM, "out of memory");
		goto out;
	}
	k->pkey = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	if (k->pkey) {
		k->priv = true;
		if (st.st_mode & 077) {
			ret = wd_err_set(err, -EPERM,
					 "signing key %s can be read by others (mode %04o); fix: "
					 "chmod 600 %s",
					 path, (unsigned)(st.st_mode & 07777), path);
			goto out;
		}
	} else {
		rewind(f);
		k->pkey = PEM_read_PUBKEY(f, NULL, NULL, NULL);
	}
	if (!k->pkey || EVP_PKEY_get_base_id(k->pkey) != EVP_PKEY_ED25519 || make_id(k) < 0) {
		ret = wd_err_set(err, -EINVAL, "%s is not an ed25519 key in PEM", path);
		goto out;
	}
	*ret_key = k;
	k = NULL;
	ret = 0;
out:
	fclose(f);
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

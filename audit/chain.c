/* chain.c - the audit log's hash chain and run roots: SHA-256 (libcrypto), a writer made
 * chained, the Merkle root of a run's lines and the reading that collects them. */
#include "audit/chain_internal.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void audit_crypto_init(void)
{
	/* the one effect wanted is the flag; a failure here shows again at the first digest or
	 * signature, which fail closed */
	(void)OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG, NULL);
}

void audit_crypto_init_brief(void)
{
	/* as above; no clean-up handler: at exit the kernel takes the memory back, and
	 * OPENSSL_cleanup() freeing it was 0.8 M of a launch's instructions (docs/benchmarks.md).
	 * The flag counts only in the process's first OpenSSL call. */
	(void)OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_NO_ATEXIT, NULL);
}

void audit_sha256(const void *p, size_t len, uint8_t out[AUDIT_HASH_LEN])
{
	/* fetched once per thread, and one context reused: OpenSSL 3's implicit fetch on every
	 * EVP_Digest() was half of a line's cost (docs/benchmarks.md, "The audit chain") */
	static _Thread_local EVP_MD *md;
	static _Thread_local EVP_MD_CTX *ctx;
	unsigned int n = AUDIT_HASH_LEN;

	if (!md)
		md = EVP_MD_fetch(NULL, "SHA256", NULL);
	if (!ctx)
		ctx = EVP_MD_CTX_new();
	/* SHA-256 cannot fail but for memory; then the digest is zeros, which no verifier takes
	 * for a link */
	if (!md || !ctx || !EVP_DigestInit_ex(ctx, md, NULL) || !EVP_DigestUpdate(ctx, p, len) ||
	    !EVP_DigestFinal_ex(ctx, out, &n))
		memset(out, 0, AUDIT_HASH_LEN);
}

void audit_hex(const uint8_t *p, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = '\0';
}

void audit_log_chain(struct audit_log *log)
{
	audit_writer_set_digest(log, audit_sha256);
}

/* node() - SHA-256(0x01 || @l || @r) */
static void node(const uint8_t l[AUDIT_HASH_LEN], const uint8_t r[AUDIT_HASH_LEN],
		 uint8_t out[AUDIT_HASH_LEN])
{
	uint8_t in[1 + 2 * AUDIT_HASH_LEN];

	in[0] = 1;
	memcpy(in + 1, l, AUDIT_HASH_LEN);
	memcpy(in + 1 + AUDIT_HASH_LEN, r, AUDIT_HASH_LEN);
	audit_sha256(in, sizeof(in), out);
}

/* NOLINTNEXTLINE(misc-no-recursion): depth log2(n), at most 64 */
void audit_merkle_root(const uint8_t (*leaves)[AUDIT_HASH_LEN], size_t n,
		       uint8_t out[AUDIT_HASH_LEN])
{
	uint8_t l[AUDIT_HASH_LEN], r[AUDIT_HASH_LEN];
	size_t k = 1;

	if (n == 0) {
		audit_sha256("", 0, out);
		return;
	}
	if (n == 1) {
		memcpy(out, leaves[0], AUDIT_HASH_LEN);
		return;
	}
	while (k * 2 < n)
		k *= 2;
	/* depth is log2(n): recursion is bounded by 64 */
	audit_merkle_root(leaves, k, l);
	audit_merkle_root(leaves + k, n - k, r);
	node(l, r, out);
}

int audit_leaves_add(struct audit_leaves *l, const uint8_t d[AUDIT_HASH_LEN])
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		void *v = realloc(l->v, cap * AUDIT_HASH_LEN);

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	memcpy(l->v[l->n++], d, AUDIT_HASH_LEN);
	return 0;
}

void audit_leaves_free(struct audit_leaves *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

int audit_run_leaves(const char *path, const struct audit_log_pos *pos, const char *run,
		     struct audit_leaves *l)
{
	struct audit_reader *rd;
	struct audit_event ev;
	uint8_t d[AUDIT_HASH_LEN];
	const char *line;
	size_t len;
	int ret;

	ret = audit_reader_open(path, 0, &rd, NULL);
	if (ret < 0)
		return ret;
	if (pos)
		ret = audit_reader_seek(rd, pos);
	while (ret == 0 && (ret = audit_reader_next(rd, &ev)) == 1) {
		ret = 0;
		if (!strcmp(ev.run, run) && (line = audit_reader_line(rd, &len))) {
			audit_sha256(line, len, d);
			ret = audit_leaves_add(l, d);
		}
		audit_event_clear(&ev);
	}
	audit_reader_close(rd);
	return ret;
}

int audit_run_root(const char *path, const struct audit_log_pos *start,
		   const uint8_t start_hash[AUDIT_HASH_LEN], const char *run,
		   char root[8 + 2 * AUDIT_HASH_LEN], int64_t *count)
{
	struct audit_leaves l = {0};
	uint8_t d[AUDIT_HASH_LEN];
	char old[4096];
	int ret;

	ret = audit_leaves_add(&l, start_hash);
	if (ret == 0)
		ret = audit_run_leaves(path, start, run, &l);
	if (ret == -ESTALE) {
		/* rotated since run.start: its file is "<path>.1" now, then the new one */
		if (snprintf(old, sizeof(old), "%s" AUDIT_ROTATED_SUFFIX, path) >= (int)sizeof(old))
			ret = -ENAMETOOLONG;
		else
			ret = audit_run_leaves(old, start, run, &l);
		if (ret == 0)
			ret = audit_run_leaves(path, NULL, run, &l);
	}
	if (ret == 0) {
		audit_merkle_root((const uint8_t(*)[AUDIT_HASH_LEN])l.v, l.n, d);
		memcpy(root, "sha256:", 7);
		audit_hex(d, sizeof(d), root + 7);
		*count = (int64_t)l.n;
	}
	audit_leaves_free(&l);
	return ret;
}

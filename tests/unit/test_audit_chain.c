/* test_audit_chain.c - unit tests for the tamper-evident audit log (issue 32, item 5): the
 * hash chain a writer adds (batches, two writers on one file, rotation), the verifier finding
 * an edited, a removed and two swapped lines, Merkle roots of known inputs, ed25519 keys made
 * on first use, and a signed run record checked, refused under a changed signature, an
 * unknown key and a removed run line. */
#include "audit/audit.h"
#include "audit/record.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

struct fixture {
	char dir[64];
	char log[128];
	char old[140];
	char key[128];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	strcpy(f->dir, "/tmp/wd-test-chain-XXXXXX");
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	snprintf(f->log, sizeof(f->log), "%s/audit.jsonl", f->dir);
	snprintf(f->old, sizeof(f->old), "%s" AUDIT_ROTATED_SUFFIX, f->log);
	snprintf(f->key, sizeof(f->key), "%s/keys/audit-key.pem", f->dir);
	*state = f;
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	nftw(f->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
	return 0;
}

static void put(struct audit_log *log, const char *run, const char *action, unsigned flags)
{
	struct audit_event ev = {0};
	struct wd_err err;

	ev.run = run;
	ev.type = !strncmp(action, "run.", 4) ? AUDIT_TYPE_RUN : AUDIT_TYPE_DNS;
	ev.action = action;
	ev.resource = "example.test";
	ev.allowed = true;
	ev.ts.tv_sec = 1700000000;
	assert_int_equal(audit_log_write(log, &ev, flags, &err), 0);
}

/* the file's lines (at most 64), NUL-terminated, in @buf */
static size_t lines_of(const char *path, char *buf, size_t size, char *v[64])
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	size_t k = 0;

	assert_true(fd >= 0);
	n = read(fd, buf, size - 1);
	close(fd);
	assert_true(n >= 0);
	buf[n] = '\0';
	for (char *p = buf, *nl; *p && k < 64 && (nl = strchr(p, '\n')); p = nl + 1) {
		*nl = '\0';
		v[k++] = p;
	}
	return k;
}

static void write_lines(const char *path, char *const *v, size_t n)
{
	FILE *f = fopen(path, "we");

	assert_non_null(f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s\n", v[i]);
	assert_int_equal(fclose(f), 0);
}

/* the prev a line names must be the SHA-256 of @before (NULL: zeros) */
static void assert_links(const char *line, const char *before)
{
	uint8_t d[AUDIT_HASH_LEN] = {0};
	char hex[2 * AUDIT_HASH_LEN + 1], want[128];

	if (before)
		audit_sha256(before, strlen(before), d);
	audit_hex(d, sizeof(d), hex);
	snprintf(want, sizeof(want), ",\"prev\":\"%s\"}", hex);
	assert_true(strlen(line) > strlen(want));
	assert_string_equal(line + strlen(line) - strlen(want), want);
}

static enum audit_verify_status verify(const char *const *paths, size_t n, struct audit_key *k,
				       uint64_t *ret_line)
{
	struct audit_verify_result res;
	struct wd_err err;

	assert_int_equal(audit_verify(paths, n, &k, k ? 1 : 0, &res, &err), 0);
	if (ret_line)
		*ret_line = res.line;
	return res.status;
}

static void test_chain_links(void **state)
{
	struct fixture *f = *state;
	struct audit_log *a, *b;
	struct wd_err err;
	char buf[16384], *v[64];
	const char *paths[] = {f->log};
	size_t n;

	assert_int_equal(audit_log_open(f->log, &a, &err), 0);
	assert_int_equal(audit_log_open(f->log, &b, &err), 0);
	audit_log_chain(a);
	audit_log_chain(b);
	put(a, "r1", "dns.query", 0);
	put(a, "r1", "dns.query", AUDIT_WRITE_DEFER); /* a batch of two */
	put(a, "r1", "dns.query", AUDIT_WRITE_DEFER);
	assert_int_equal(audit_log_flush(a, &err), 2);
	put(b, "r2", "dns.query", 0); /* another writer: reads a's last line back */
	put(a, "r1", "dns.query", 0); /* and a reads b's */
	audit_log_close(a);
	audit_log_close(b);
	n = lines_of(f->log, buf, sizeof(buf), v);
	assert_int_equal(n, 5);
	assert_links(v[0], NULL);
	for (size_t i = 1; i < n; i++)
		assert_links(v[i], v[i - 1]);
	assert_int_equal(verify(paths, 1, NULL, NULL), AUDIT_VERIFY_OK);
}

/* an edited, a removed and two swapped lines: each found, at the line after the change */
static void test_chain_tamper(void **state)
{
	struct fixture *f = *state;
	struct audit_log *a;
	struct wd_err err;
	char buf[16384], *v[64], *w[64], edited[1024];
	const char *paths[] = {f->log};
	uint64_t line;
	size_t n;

	assert_int_equal(audit_log_open(f->log, &a, &err), 0);
	audit_log_chain(a);
	for (int i = 0; i < 6; i++)
		put(a, "r1", "dns.query", 0);
	audit_log_close(a);
	n = lines_of(f->log, buf, sizeof(buf), v);
	assert_int_equal(n, 6);
	/* positive control: the intact file, written back the same way */
	write_lines(f->log, v, n);
	assert_int_equal(verify(paths, 1, NULL, NULL), AUDIT_VERIFY_OK);
	/* edited line 3: found at line 4 */
	memcpy(w, v, sizeof(w));
	snprintf(edited, sizeof(edited), "%s", v[2]);
	*strstr(edited, "example") = 'E';
	w[2] = edited;
	write_lines(f->log, w, n);
	assert_int_equal(verify(paths, 1, NULL, &line), AUDIT_VERIFY_BROKEN);
	assert_int_equal(line, 4);
	/* removed line 3: line 3 (the old 4) does not link */
	memcpy(w, v, sizeof(w));
	memmove(w + 2, w + 3, (n - 3) * sizeof(*w));
	write_lines(f->log, w, n - 1);
	assert_int_equal(verify(paths, 1, NULL, &line), AUDIT_VERIFY_BROKEN);
	assert_int_equal(line, 3);
	/* lines 4 and 5 swapped: found at line 4 */
	memcpy(w, v, sizeof(w));
	w[3] = v[4];
	w[4] = v[3];
	write_lines(f->log, w, n);
	assert_int_equal(verify(paths, 1, NULL, &line), AUDIT_VERIFY_BROKEN);
	assert_int_equal(line, 4);
	/* a line without "prev" in the middle */
	memcpy(w, v, sizeof(w));
	w[2] = "{\"ts\":\"2023-11-14T22:13:20.000000Z\",\"run\":\"r1\",\"type\":\"dns\","
	       "\"action\":\"dns.query\",\"allowed\":true,\"resource\":\"x\",\"reason\":\"\"}";
	write_lines(f->log, w, n);
	assert_int_equal(verify(paths, 1, NULL, &line), AUDIT_VERIFY_UNCHAINED);
	assert_int_equal(line, 3);
}

/* an older writer's lines before the chain are counted and allowed; a crash's torn fragment
 * is linked to (its bytes hashed) and reported as no event; a line that is not one line is
 * refused by audit_log_write_encoded() */
static void test_chain_older_and_torn(void **state)
{
	struct fixture *f = *state;
	static const char old[] = "{\"ts\":\"2023-11-14T22:13:20.000000Z\",\"run\":\"\",\"type\":"
				  "\"dns\",\"action\":\"dns.query\",\"allowed\":true,\"resource\":"
				  "\"x\",\"reason\":\"\"}\n";
	const char *paths[] = {f->log};
	struct audit_verify_result res;
	struct audit_event ev = {0};
	struct audit_log *a;
	struct wd_err err;
	char buf[16384], *v[64];
	uint64_t line;
	FILE *fp;

	fp = fopen(f->log, "we");
	assert_non_null(fp);
	fputs(old, fp);
	fputs(old, fp);
	fclose(fp);
	assert_int_equal(audit_log_open(f->log, &a, &err), 0);
	audit_log_chain(a);
	put(a, "r1", "dns.query", 0);
	put(a, "r1", "dns.query", 0);
	audit_log_close(a);
	assert_int_equal(audit_verify(paths, 1, NULL, 0, &res, &err), 0);
	assert_int_equal(res.status, AUDIT_VERIFY_OK);
	assert_int_equal(res.unchained, 2);
	assert_int_equal(lines_of(f->log, buf, sizeof(buf), v), 4);
	assert_links(v[2], v[1]);
	/* a torn fragment at the end, then a chained line: it links to the fragment */
	fp = fopen(f->log, "ae");
	assert_non_null(fp);
	fputs("{\"ts\":\"20", fp);
	fclose(fp);
	assert_int_equal(audit_log_open(f->log, &a, &err), 0);
	audit_log_chain(a);
	put(a, "r1", "dns.query", 0);
	ev.run = "r1";
	ev.type = AUDIT_TYPE_DNS;
	ev.action = "dns.query";
	assert_int_equal(audit_log_write_encoded(a, &ev, "{\"a\":1}\n{\"b\":2}\n", 16, 0, &err),
			 -EINVAL);
	assert_int_equal(audit_log_write_encoded(a, &ev, "{\"a\":1}", 7, 0, &err), -EINVAL);
	audit_log_close(a);
	assert_int_equal(lines_of(f->log, buf, sizeof(buf), v), 6);
	assert_links(v[5], v[4]);
	assert_int_equal(verify(paths, 1, NULL, &line), AUDIT_VERIFY_BROKEN);
	assert_int_equal(line, 5);
}

/* a rotation: the new file begins with a signed anchor that links to the ".1" file's last line
 * and names its line count; a verifier wants it there */
static void test_chain_rotation(void **state)
{
	struct fixture *f = *state;
	struct audit_log *a;
	struct audit_key *k = NULL;
	struct wd_err err;
	char buf[16384], buf2[16384], *v[64], *u[64], *w[64];
	const char *paths[] = {f->old, f->log};
	struct audit_verify_result res;
	uint64_t line;
	size_t n, m;

	assert_int_equal(audit_key_load(f->key, true, &k, &err), 0);
	/* a writer that cannot sign rotates: the new file has no anchor, and that is reported */
	assert_int_equal(audit_log_open(f->log, &a, &err), 0);
	audit_log_chain(a);
	audit_log_set_max(a, 700);
	for (int i = 0; i < 6; i++)
		put(a, "r0", "dns.query", 0);
	audit_log_close(a);
	assert_int_equal(verify(paths, 2, k, &line), AUDIT_VERIFY_NO_ANCHOR);
	assert_int_equal(line, 1);
	unlink(f->old);
	unlink(f->log);

	assert_int_equal(audit_log_open(f->log, &a, &err), 0);
	audit_log_chain(a);
	audit_log_set_max(a, 700);
	assert_int_equal(audit_log_sign_anchors(a, k, &err), 0);
	for (int i = 0; i < 6; i++)
		put(a, "r1", "dns.query", 0);
	audit_log_close(a);
	n = lines_of(f->old, buf, sizeof(buf), v);
	m = lines_of(f->log, buf2, sizeof(buf2), u);
	assert_true(n > 1 && m > 1);
	assert_non_null(strstr(u[0], "\"action\":\"audit.anchor\""));
	assert_non_null(strstr(u[0], "\"resource\":\"audit.jsonl.1\""));
	{
		char want[32];

		snprintf(want, sizeof(want), "\"lines\":%zu,", n);
		assert_non_null(strstr(u[0], want));
	}
	assert_links(u[0], v[n - 1]);
	assert_links(u[1], u[0]);
	assert_int_equal(audit_verify(paths, 2, &k, 1, &res, &err), 0);
	assert_int_equal(res.status, AUDIT_VERIFY_OK);
	/* the cap is small: ".1" may have begun with an anchor of its own */
	assert_int_equal(res.anchors, 1 + (strstr(v[0], "audit.anchor") != NULL));
	/* without the key, the anchor's signer is unknown */
	assert_int_equal(verify(paths, 2, NULL, &line), AUDIT_VERIFY_UNKNOWN_KEY);
	assert_int_equal(line, 1);
	/* a writer adopted from a descriptor (the gateway's worker) goes on in ".1": the anchor
	 * names a line of ".1" that is no longer its last, which is taken */
	{
		int fd = open(f->old, O_RDWR | O_APPEND | O_CLOEXEC);

		assert_true(fd >= 0);
		assert_int_equal(audit_log_from_fd(fd, f->old, &a, &err), 0);
		audit_log_chain(a);
		put(a, "late", "dns.query", 0);
		audit_log_close(a);
		assert_int_equal(verify(paths, 2, k, NULL), AUDIT_VERIFY_OK);
	}
	n = lines_of(f->old, buf, sizeof(buf), v);
	/* the old file's tail cut (its late line and the one the anchor names) */
	write_lines(f->old, v, n - 2);
	assert_int_equal(verify(paths, 2, k, &line), AUDIT_VERIFY_BAD_ANCHOR);
	assert_int_equal(line, 1);
	write_lines(f->old, v, 0); /* all of it: the anchor still names its lines */
	assert_int_equal(verify(paths, 2, k, &line), AUDIT_VERIFY_BAD_ANCHOR);
	assert_int_equal(line, 1);
	write_lines(f->old, v, n);
	assert_int_equal(verify(paths, 2, k, NULL), AUDIT_VERIFY_OK);
	/* the anchor removed: the file no longer begins with one */
	write_lines(f->log, u + 1, m - 1);
	assert_int_equal(verify(paths, 2, k, &line), AUDIT_VERIFY_NO_ANCHOR);
	assert_int_equal(line, 1);
	/* the anchor changed (its count), the chain after it made again: its signature fails */
	{
		char forged[2048], *c = strstr(u[0], "\"lines\":");
		size_t at;

		assert_non_null(c);
		at = (size_t)(c - u[0]) + 8;
		snprintf(forged, sizeof(forged), "%.*s9%s", (int)at, u[0], u[0] + at);
		memcpy(w, u, sizeof(w));
		w[0] = forged;
		write_lines(f->log, w, m);
		assert_int_equal(verify(paths, 2, k, &line), AUDIT_VERIFY_BAD_SIG);
		assert_int_equal(line, 1);
	}
	/* a later line of the new file moved first is no anchor */
	memcpy(w, u, sizeof(w));
	w[1] = u[0];
	w[0] = u[1];
	write_lines(f->log, w, m);
	assert_int_equal(verify(paths, 2, k, &line), AUDIT_VERIFY_NO_ANCHOR);
	assert_int_equal(line, 1);
	write_lines(f->log, u, m);
	assert_int_equal(verify(paths, 2, k, NULL), AUDIT_VERIFY_OK);
	audit_key_free(k);
}

/* a signing writer that opens an empty file with a ".1" beside it anchors it at once; a second
 * one on the same file adds no anchor of its own */
static void test_anchor_at_once(void **state)
{
	struct fixture *f = *state;
	struct audit_log *a, *b;
	struct audit_key *k = NULL;
	struct wd_err err;
	char buf[16384], buf2[16384], *v[64], *u[64];
	const char *paths[] = {f->old, f->log};
	size_t n, m;

	assert_int_equal(audit_key_load(f->key, true, &k, &err), 0);
	assert_int_equal(audit_log_open(f->old, &a, &err), 0);
	audit_log_chain(a);
	for (int i = 0; i < 3; i++)
		put(a, "r1", "dns.query", 0);
	audit_log_close(a);
	assert_int_equal(audit_log_open(f->log, &a, &err), 0);
	audit_log_chain(a);
	assert_int_equal(audit_log_sign_anchors(a, k, &err), 0);
	m = lines_of(f->log, buf2, sizeof(buf2), u);
	assert_int_equal(m, 1);
	assert_non_null(strstr(u[0], "\"action\":\"audit.anchor\""));
	assert_non_null(strstr(u[0], "\"lines\":3,"));
	assert_int_equal(audit_log_open(f->log, &b, &err), 0);
	audit_log_chain(b);
	assert_int_equal(audit_log_sign_anchors(b, k, &err), 0);
	put(b, "r2", "dns.query", 0);
	put(a, "r2", "dns.query", 0);
	audit_log_close(a);
	audit_log_close(b);
	n = lines_of(f->old, buf, sizeof(buf), v);
	m = lines_of(f->log, buf2, sizeof(buf2), u);
	assert_int_equal(n, 3);
	assert_int_equal(m, 3);
	assert_null(strstr(u[1], "audit.anchor"));
	assert_links(u[0], v[2]);
	assert_int_equal(verify(paths, 2, k, NULL), AUDIT_VERIFY_OK);
	/* a writer without a key to sign with is refused, and writes nothing */
	assert_int_equal(audit_log_open(f->log, &a, &err), 0);
	assert_int_equal(audit_log_sign_anchors(a, NULL, &err), -EPERM);
	audit_log_close(a);
	audit_key_free(k);
}

static void test_merkle_known(void **state)
{
	uint8_t leaves[5][AUDIT_HASH_LEN], root[AUDIT_HASH_LEN];
	char hex[2 * AUDIT_HASH_LEN + 1];

	(void)state;
	for (int i = 0; i < 5; i++)
		audit_sha256((const char[]){(char)('a' + i)}, 1, leaves[i]);
	/* expected values from Python's hashlib: H(0x01 || left || right), RFC 6962's split */
	audit_merkle_root((const uint8_t(*)[AUDIT_HASH_LEN])leaves, 0, root);
	audit_hex(root, sizeof(root), hex);
	assert_string_equal(hex,
			    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	audit_merkle_root((const uint8_t(*)[AUDIT_HASH_LEN])leaves, 2, root);
	audit_hex(root, sizeof(root), hex);
	assert_string_equal(hex,
			    "1fdf7b651907a893865fdf1866cf251d60d527dfafa10a663514f4f9ee34ab22");
	audit_merkle_root((const uint8_t(*)[AUDIT_HASH_LEN])leaves, 3, root);
	audit_hex(root, sizeof(root), hex);
	assert_string_equal(hex,
			    "1394b29c3086a6150915a75bd1ab6c5dd7e461ec0c5e7d31939ae192d08eb59a");
	audit_merkle_root((const uint8_t(*)[AUDIT_HASH_LEN])leaves, 5, root);
	audit_hex(root, sizeof(root), hex);
	assert_string_equal(hex,
			    "a35cc874099bd151fdc047602c88631c8d68ea9f6a0dde44c98672f7185fb529");
	audit_merkle_root((const uint8_t(*)[AUDIT_HASH_LEN])leaves, 1, root);
	assert_memory_equal(root, leaves[0], AUDIT_HASH_LEN);
}

static void test_key_sign_verify(void **state)
{
	struct fixture *f = *state;
	struct audit_key *k, *again, *pub;
	struct wd_buf pem = WD_BUF_INIT, out = WD_BUF_INIT, part = WD_BUF_INIT;
	static const char line[] = "{\"a\":1}\n";
	char pubpath[160];
	uint8_t sig[64];
	struct stat st;
	struct wd_err err;
	FILE *fp;

	assert_int_equal(audit_key_load(f->key, false, &k, &err), -ENOENT);
	assert_int_equal(audit_key_load(f->key, true, &k, &err), 0);
	assert_int_equal(stat(f->key, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_true(audit_key_can_sign(k));
	assert_int_equal(strncmp(audit_key_id(k), "ed25519:", 8), 0);
	/* made once: loaded again, the same key */
	assert_int_equal(audit_key_load(f->key, true, &again, &err), 0);
	assert_string_equal(audit_key_id(again), audit_key_id(k));
	audit_key_free(again);
	/* its public half, alone, verifies and cannot sign */
	assert_int_equal(audit_key_public_pem(k, &pem), 0);
	snprintf(pubpath, sizeof(pubpath), "%s/pub.pem", f->dir);
	fp = fopen(pubpath, "we");
	assert_non_null(fp);
	fwrite(pem.data, 1, pem.len, fp);
	fclose(fp);
	assert_int_equal(audit_key_load(pubpath, false, &pub, &err), 0);
	assert_false(audit_key_can_sign(pub));
	assert_string_equal(audit_key_id(pub), audit_key_id(k));
	assert_int_equal(audit_key_sign(pub, "x", 1, sig), -EINVAL);
	/* a line signed, its signed part recovered, checked; one bit changed: refused */
	assert_int_equal(audit_sign_line(k, line, strlen(line), &out), 0);
	assert_non_null(strstr(out.data, ",\"sig\":\""));
	assert_int_equal(audit_line_signed_part(out.data, out.len - 1, &part, sig), 0);
	assert_int_equal(part.len, strlen(line) - 1);
	assert_memory_equal(part.data, line, part.len);
	assert_int_equal(audit_key_verify(pub, part.data, part.len, sig), 0);
	sig[5] ^= 1;
	assert_int_equal(audit_key_verify(pub, part.data, part.len, sig), -EBADMSG);
	/* a group-readable private key is refused */
	assert_int_equal(chmod(f->key, 0640), 0);
	assert_int_equal(audit_key_load(f->key, false, &again, &err), -EPERM);
	audit_key_free(pub);
	audit_key_free(k);
	wd_buf_free(&pem);
	wd_buf_free(&out);
	wd_buf_free(&part);
}

/* rechain() - what a forger who knows the format does after a change: each line's "prev"
 * computed again (the lines are edited in place: same length) */
static void rechain(char **v, size_t n)
{
	uint8_t d[AUDIT_HASH_LEN];
	char hex[2 * AUDIT_HASH_LEN + 1];

	for (size_t i = 1; i < n; i++) {
		audit_sha256(v[i - 1], strlen(v[i - 1]), d);
		audit_hex(d, sizeof(d), hex);
		memcpy(v[i] + strlen(v[i]) - 2 - 2 * AUDIT_HASH_LEN, hex, 2 * AUDIT_HASH_LEN);
	}
}

/* a run written the way `warden run` does: run.start, events, a signed run.exit */
static void write_signed_run(struct fixture *f, struct audit_key *k)
{
	struct audit_event ev = {0};
	struct audit_leaves l = {0};
	struct audit_log_pos pos;
	struct audit_log *a;
	struct wd_buf line = WD_BUF_INIT, signed_line = WD_BUF_INIT;
	uint8_t d[AUDIT_HASH_LEN], root[AUDIT_HASH_LEN];
	char hex[8 + 2 * AUDIT_HASH_LEN];
	struct wd_err err;

	assert_int_equal(audit_log_open(f->log, &a, &err), 0);
	audit_log_chain(a);
	put(a, "other", "dns.query", 0);
	put(a, "r9", "run.start", 0);
	assert_int_equal(audit_log_where(a, &pos), 0);
	assert_int_equal(audit_log_last_hash(a, d), 0);
	put(a, "r9", "dns.query", 0);
	put(a, "other", "dns.query", 0);
	put(a, "r9", "dns.query", 0);
	assert_int_equal(audit_leaves_add(&l, d), 0);
	assert_int_equal(audit_run_leaves(f->log, &pos, "r9", &l), 0);
	assert_int_equal(l.n, 3);
	audit_merkle_root((const uint8_t(*)[AUDIT_HASH_LEN])l.v, l.n, root);
	memcpy(hex, "sha256:", 7);
	audit_hex(root, sizeof(root), hex + 7);
	ev.run = "r9";
	ev.type = AUDIT_TYPE_RUN;
	ev.action = "run.exit";
	ev.allowed = true;
	ev.ts.tv_sec = 1700000001;
	ev.root = hex;
	ev.has = AUDIT_HAS_EVENTS | AUDIT_HAS_EXIT;
	ev.events = (int64_t)l.n;
	ev.key = audit_key_id(k);
	assert_int_equal(audit_event_encode(&ev, &line, &err), 0);
	assert_int_equal(audit_sign_line(k, line.data, line.len, &signed_line), 0);
	assert_int_equal(
	    audit_log_write_encoded(a, &ev, signed_line.data, signed_line.len, 0, &err), 0);
	put(a, "r9", "dns.query", 0); /* a late line of the run: after its record, not covered */
	audit_log_close(a);
	audit_leaves_free(&l);
	wd_buf_free(&line);
	wd_buf_free(&signed_line);
}

static void test_signed_record(void **state)
{
	struct fixture *f = *state;
	struct audit_key *k, *other;
	char other_path[160], buf[16384], *v[64] = {0}, *w[64] = {0}, *exit_line, changed[2048];
	const char *paths[] = {f->log};
	struct audit_verify_result res;
	struct wd_err err;
	uint64_t line;
	size_t n;

	assert_int_equal(audit_key_load(f->key, true, &k, &err), 0);
	snprintf(other_path, sizeof(other_path), "%s/other.pem", f->dir);
	assert_int_equal(audit_key_load(other_path, true, &other, &err), 0);
	write_signed_run(f, k);
	assert_int_equal(audit_verify(paths, 1, &k, 1, &res, &err), 0);
	assert_int_equal(res.status, AUDIT_VERIFY_OK);
	assert_int_equal(res.runs, 1);
	/* another key only: unknown */
	assert_int_equal(verify(paths, 1, other, &line), AUDIT_VERIFY_UNKNOWN_KEY);
	assert_int_equal(line, 6);
	/* the signature changed (the chain after it fixed up is not needed: found first) */
	n = lines_of(f->log, buf, sizeof(buf), v);
	assert_int_equal(n, 7);
	exit_line = v[5];
	snprintf(changed, sizeof(changed), "%s", exit_line);
	{
		char *s = strstr(changed, "\"sig\":\"") + 7;

		*s = *s == 'A' ? 'B' : 'A';
	}
	memcpy(w, v, sizeof(w));
	w[5] = changed;
	write_lines(f->log, w, n);
	assert_int_equal(verify(paths, 1, k, &line), AUDIT_VERIFY_BAD_SIG);
	assert_int_equal(line, 6);
	/* the record's exit status changed: its signature no longer covers it */
	snprintf(changed, sizeof(changed), "%s", exit_line);
	strstr(changed, "\"exit\":0")[7] = '1';
	write_lines(f->log, w, n);
	assert_int_equal(verify(paths, 1, k, &line), AUDIT_VERIFY_BAD_SIG);
	/* intact again: the positive control for the same file */
	write_lines(f->log, v, n);
	assert_int_equal(verify(paths, 1, k, NULL), AUDIT_VERIFY_OK);
	/* a run line removed and the chain forged again: the chain holds, the signed root not */
	n = lines_of(f->log, buf, sizeof(buf), v);
	memmove(v + 2, v + 3, (n - 3) * sizeof(*v));
	rechain(v, n - 1);
	write_lines(f->log, v, n - 1);
	assert_int_equal(verify(paths, 1, k, &line), AUDIT_VERIFY_BAD_ROOT);
	assert_int_equal(line, 5);
	audit_key_free(k);
	audit_key_free(other);
}

/* the gateway daemon's run.record: every line of its run in the central log (no run.start
 * there), signed with the daemon's key; intact it verifies, an edited run line re-chained
 * fails on the record's root, a changed record on its signature, another key is unknown */
static void test_daemon_record(void **state)
{
	struct fixture *f = *state;
	struct audit_event ev = {0};
	struct audit_verify_result res;
	struct audit_key *k, *other;
	struct audit_log *a;
	struct wd_err err;
	char other_path[160], buf[16384], *v[64] = {0}, *w[64] = {0}, changed[2048], rec[2048],
					  late[2048];
	const char *paths[] = {f->log};
	uint64_t line;
	size_t n;

	assert_int_equal(audit_key_load(f->key, true, &k, &err), 0);
	snprintf(other_path, sizeof(other_path), "%s/other.pem", f->dir);
	assert_int_equal(audit_key_load(other_path, true, &other, &err), 0);
	assert_int_equal(audit_log_open(f->log, &a, &err), 0);
	audit_log_chain(a);
	put(a, "d1", "dns.query", 0);
	put(a, "other", "dns.query", 0);
	put(a, "d1", "dns.query", 0);
	ev.run = "d1";
	ev.allowed = true;
	ev.ts.tv_sec = 1700000002;
	ev.mode = "daemon";
	/* a public key cannot sign: refused, nothing written */
	{
		struct audit_key *pub;
		struct wd_buf pem = WD_BUF_INIT;
		char pub_path[160];
		FILE *pf;

		snprintf(pub_path, sizeof(pub_path), "%s/pub.pem", f->dir);
		assert_int_equal(audit_key_public_pem(k, &pem), 0);
		pf = fopen(pub_path, "we");
		assert_non_null(pf);
		assert_int_equal(fwrite(pem.data, 1, pem.len, pf), pem.len);
		assert_int_equal(fclose(pf), 0);
		assert_int_equal(audit_key_load(pub_path, false, &pub, &err), 0);
		assert_int_equal(audit_write_run_record(a, &ev, pub, NULL, &err), -ENOKEY);
		audit_key_free(pub);
		wd_buf_free(&pem);
	}
	assert_int_equal(audit_write_run_record(a, &ev, k, NULL, &err), 0);
	put(a, "d1", "dns.query", 0); /* a late line: after the record, not covered */
	/* a second run read from where the file ended before its first line; a stale place
	 * (another file) falls back to the whole file: both records verify */
	{
		struct audit_log_pos from, stale;

		assert_int_equal(audit_log_end(a, &from), 0);
		stale = from;
		stale.ino++;
		put(a, "d2", "dns.query", 0);
		put(a, "d3", "dns.query", 0);
		ev.run = "d2";
		assert_int_equal(audit_write_run_record(a, &ev, k, &from, &err), 0);
		ev.run = "d3";
		assert_int_equal(audit_write_run_record(a, &ev, k, &stale, &err), 0);
	}
	audit_log_close(a);
	assert_int_equal(audit_verify(paths, 1, &k, 1, &res, &err), 0);
	assert_int_equal(res.status, AUDIT_VERIFY_OK);
	assert_int_equal(res.runs, 3);
	n = lines_of(f->log, buf, sizeof(buf), v);
	assert_int_equal(n, 9);
	assert_true(v[7] && strstr(v[7], "\"run\":\"d2\""));
	assert_true(v[7] && strstr(v[7], "\"events\":1"));
	assert_true(v[8] && strstr(v[8], "\"events\":1"));
	/* from here on, the first five lines: d1's run and its record */
	n = 5;
	write_lines(f->log, v, n);
	assert_true(v[3] && strstr(v[3], "\"action\":\"run.record\""));
	assert_true(v[3] && strstr(v[3], "\"events\":2"));
	/* the positive control: intact, under the daemon's key */
	assert_int_equal(audit_verify(paths, 1, &k, 1, &res, &err), 0);
	assert_int_equal(res.status, AUDIT_VERIFY_OK);
	assert_int_equal(res.runs, 1);
	/* under another key only: unknown */
	assert_int_equal(verify(paths, 1, other, &line), AUDIT_VERIFY_UNKNOWN_KEY);
	assert_int_equal(line, 4);
	/* the record's count changed: its signature no longer covers it */
	memcpy(w, v, sizeof(w));
	snprintf(changed, sizeof(changed), "%s", v[3]);
	strstr(changed, "\"events\":2")[9] = '1';
	w[3] = changed;
	write_lines(f->log, w, n);
	assert_int_equal(verify(paths, 1, k, &line), AUDIT_VERIFY_BAD_SIG);
	assert_int_equal(line, 4);
	/* a run line edited: the chain finds it at the line after it */
	memcpy(w, v, sizeof(w));
	snprintf(changed, sizeof(changed), "%s", v[2]);
	*strstr(changed, "example") = 'E';
	w[2] = changed;
	write_lines(f->log, w, n);
	assert_int_equal(verify(paths, 1, k, &line), AUDIT_VERIFY_BROKEN);
	assert_int_equal(line, 4);
	/* and the chain forged again after it (on copies: rechain() edits in place): the
	 * record's root does not hold */
	snprintf(rec, sizeof(rec), "%s", v[3]);
	snprintf(late, sizeof(late), "%s", v[4]);
	w[3] = rec;
	w[4] = late;
	rechain(w, n);
	write_lines(f->log, w, n);
	assert_int_equal(verify(paths, 1, k, &line), AUDIT_VERIFY_BAD_ROOT);
	assert_int_equal(line, 4);
	/* intact again */
	write_lines(f->log, v, n);
	assert_int_equal(verify(paths, 1, k, NULL), AUDIT_VERIFY_OK);
	audit_key_free(k);
	audit_key_free(other);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_chain_links, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_chain_tamper, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_chain_older_and_torn, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_chain_rotation, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_anchor_at_once, setup, teardown),
	    cmocka_unit_test(test_merkle_known),
	    cmocka_unit_test_setup_teardown(test_key_sign_verify, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_signed_record, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_daemon_record, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

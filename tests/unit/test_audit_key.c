/* test_audit_key.c - audit_key_load()'s two ways to one key: the one-line PEM that
 * PEM_write_PrivateKey()/PEM_write_PUBKEY() write for ed25519 is read without OpenSSL's
 * decoders, any other layout through them; both give the same key (RFC 8032's test vector 1:
 * the same public key, the same signature). Other keys in the same layout are refused. */
#include "audit/audit.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

/* RFC 8032 7.1, TEST 1: secret 9d61b1..7f60, public d75a98..511a, the empty message */
#define PRIV_B64 "MC4CAQAwBQYDK2VwBCIEIJ1hsZ3v/VpguoRK9JLsLMREScVpezJpGXA7rAMcrn9g"
#define PUB_B64 "MCowBQYDK2VwAyEA11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo="
/* the same 32 bytes under id-X25519 (1.3.101.110): a key, but not a signing one */
#define X25519_B64 "MC4CAQAwBQYDK2VuBCIEIJ1hsZ3v/VpguoRK9JLsLMREScVpezJpGXA7rAMcrn9g"
#define PRIV(b64) "-----BEGIN PRIVATE KEY-----\n" b64 "\n-----END PRIVATE KEY-----\n"
#define PUB(b64) "-----BEGIN PUBLIC KEY-----\n" b64 "\n-----END PUBLIC KEY-----\n"
/* "ed25519:" + SHA-256 of the public key */
#define KEY_ID "ed25519:21fe31dfa154a261626bf854046fd2271b7bed4b6abe45aa58877ef47f9721b9"

static const uint8_t rfc_sig[64] = {
    0xe5, 0x56, 0x43, 0x00, 0xc3, 0x60, 0xac, 0x72, 0x90, 0x86, 0xe2, 0xcc, 0x80, 0x6e, 0x82, 0x8a,
    0x84, 0x87, 0x7f, 0x1e, 0xb8, 0xe5, 0xd9, 0x74, 0xd8, 0x73, 0xe0, 0x65, 0x22, 0x49, 0x01, 0x55,
    0x5f, 0xb8, 0x82, 0x15, 0x90, 0xa3, 0x3b, 0xac, 0xc6, 0x1e, 0x39, 0x70, 0x1c, 0xf9, 0xb4, 0x6b,
    0xd2, 0x5b, 0xf5, 0xf0, 0x59, 0x5b, 0xbe, 0x24, 0x65, 0x51, 0x41, 0x43, 0x8e, 0x7a, 0x10, 0x0b};

static char dir[64];

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/wd-test-key-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char p[128];

	(void)state;
	for (int i = 0; i < 8; i++) {
		snprintf(p, sizeof(p), "%s/k%d.pem", dir, i);
		unlink(p);
	}
	return rmdir(dir) < 0 ? -1 : 0;
}

/* load() - @text written to file number @n (0600), loaded; Return: audit_key_load()'s */
static int load(int n, const char *text, struct audit_key **k)
{
	struct wd_err err;
	char p[128];
	FILE *f;

	snprintf(p, sizeof(p), "%s/k%d.pem", dir, n);
	f = fopen(p, "we");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(p, 0600), 0);
	wd_err_clear(&err);
	return audit_key_load(p, false, k, &err);
}

/* the private key signs as RFC 8032 says, and its public half (either file) verifies */
static void signs_as_rfc(struct audit_key *k)
{
	uint8_t sig[64];

	assert_true(audit_key_can_sign(k));
	assert_string_equal(audit_key_id(k), KEY_ID);
	assert_int_equal(audit_key_sign(k, "", 0, sig), 0);
	assert_memory_equal(sig, rfc_sig, sizeof(sig));
}

static void test_private_forms(void **state)
{
	struct audit_key *fast = NULL, *slow = NULL, *crlf = NULL;

	(void)state;
	/* as warden writes it: read without the decoders */
	assert_int_equal(load(0, PRIV(PRIV_B64), &fast), 0);
	signs_as_rfc(fast);
	/* text before the block and after it (the decoders skip it): the same key */
	assert_int_equal(load(1, "a comment line\n" PRIV(PRIV_B64) "trailing\n", &slow), 0);
	signs_as_rfc(slow);
	/* CRLF line ends: the same key */
	assert_int_equal(
	    load(2, "-----BEGIN PRIVATE KEY-----\r\n" PRIV_B64 "\r\n-----END PRIVATE KEY-----\r\n",
		 &crlf),
	    0);
	signs_as_rfc(crlf);
	audit_key_free(fast);
	audit_key_free(slow);
	audit_key_free(crlf);
}

static void test_public_forms(void **state)
{
	struct audit_key *fast = NULL, *slow = NULL;

	(void)state;
	assert_int_equal(load(3, PUB(PUB_B64), &fast), 0);
	assert_false(audit_key_can_sign(fast));
	assert_string_equal(audit_key_id(fast), KEY_ID);
	assert_int_equal(audit_key_verify(fast, "", 0, rfc_sig), 0);
	assert_int_equal(load(4, "\n" PUB(PUB_B64), &slow), 0);
	assert_string_equal(audit_key_id(slow), KEY_ID);
	assert_int_equal(audit_key_verify(slow, "", 0, rfc_sig), 0);
	audit_key_free(fast);
	audit_key_free(slow);
}

static void test_refused(void **state)
{
	struct audit_key *k = NULL;
	struct wd_err err;
	char p[128];

	(void)state;
	/* an X25519 key in the same one-line layout: not taken as ed25519 */
	assert_int_equal(load(5, PRIV(X25519_B64), &k), -EINVAL);
	/* one base64 character changed into one that is not: refused, not half-read */
	assert_int_equal(
	    load(6, PRIV("MC4CAQAwBQYDK2VwBCIEIJ1hsZ3v/VpguoRK9JLsLMREScVpezJpGXA7rAMcrn9*"), &k),
	    -EINVAL);
	/* the one-line private key readable by others: refused like any other */
	assert_int_equal(load(7, PRIV(PRIV_B64), &k), 0);
	audit_key_free(k);
	snprintf(p, sizeof(p), "%s/k7.pem", dir);
	assert_int_equal(chmod(p, 0644), 0);
	assert_int_equal(audit_key_load(p, false, &k, &err), -EPERM);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_private_forms),
	    cmocka_unit_test(test_public_forms),
	    cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

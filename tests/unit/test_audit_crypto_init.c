/* test_audit_crypto_init.c - audit_crypto_init() keeps OpenSSL's configuration file out of
 * Warden's processes: under an $OPENSSL_CONF that activates a provider module which does not
 * exist, a process that did not call it gets no SHA-256 (the control, in a child forked
 * before any OpenSSL call), and one that did gets the right digest and an ed25519 key that
 * signs; so does one that called audit_crypto_init_brief() (the launcher's). OpenSSL reads its
 * configuration once per process, so this is a test of its own. */
#include "audit/audit.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static char dir[64];
static char conf[128];

/* SHA-256("abc"), FIPS 180-2's first example */
static const char abc_hex[] = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

static void sha_abc(char hex[2 * AUDIT_HASH_LEN + 1])
{
	uint8_t d[AUDIT_HASH_LEN];

	audit_sha256("abc", 3, d);
	audit_hex(d, sizeof(d), hex);
}

static void test_config_not_read(void **state)
{
	char hex[2 * AUDIT_HASH_LEN + 1], key[128];
	struct audit_key *k = NULL;
	struct wd_err err = {0};
	uint8_t sig[64];
	int status;
	pid_t pid;

	(void)state;
	/* the control: the same digest in a process that never called audit_crypto_init() */
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		sha_abc(hex);
		_exit(!strcmp(hex, abc_hex) ? 0 : 3);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 3);
	/* the launcher's variant (no clean-up at exit) keeps the file out just as well */
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		audit_crypto_init_brief();
		sha_abc(hex);
		_exit(!strcmp(hex, abc_hex) ? 0 : 3);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);

	audit_crypto_init();
	sha_abc(hex);
	assert_string_equal(hex, abc_hex);
	snprintf(key, sizeof(key), "%s/key.pem", dir);
	assert_int_equal(audit_key_load(key, true, &k, &err), 0);
	assert_int_equal(audit_key_sign(k, "abc", 3, sig), 0);
	assert_int_equal(audit_key_verify(k, "abc", 3, sig), 0);
	audit_key_free(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_config_not_read),
	};
	char key[140];
	FILE *f;
	int r;

	snprintf(dir, sizeof(dir), "/tmp/wd-crypto-init-XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	snprintf(conf, sizeof(conf), "%s/openssl.cnf", dir);
	f = fopen(conf, "w");
	if (!f)
		return 1;
	fprintf(f,
		"openssl_conf = init\n[init]\nproviders = prov\n[prov]\nbogus = bogus\n"
		"[bogus]\nmodule = %s/no-such-provider.so\nactivate = 1\n",
		dir);
	fclose(f);
	setenv("OPENSSL_CONF", conf, 1);
	r = cmocka_run_group_tests(tests, NULL, NULL);
	snprintf(key, sizeof(key), "%s/key.pem", dir);
	unlink(key);
	unlink(conf);
	rmdir(dir);
	return r;
}

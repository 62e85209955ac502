/* test_run_backend.c - unit tests of the choice of a run's sandbox backend (run/backend.c:
 * run_backend_choose(), pure: --backend, sandbox.backend, sandbox.fallback and the probes'
 * results in, a backend or a reason out), the registry's probes of the backends this build
 * does not have, and sandbox.backend / sandbox.fallback through the policy's parser and
 * renderers (policy/parse.c, policy/render.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "policy/policy.h"
#include "run/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LINUX POLICY_BACKEND_LINUX
#define DOCKER POLICY_BACKEND_DOCKER
#define SEATBELT POLICY_BACKEND_SEATBELT
#define BIT(b) (1u << (b))

/* probes: every backend probed; those in @ok_bits can run, the others cannot ("B is down") */
static void probes_of(struct run_backend_probe *p, unsigned ok_bits)
{
	for (unsigned b = 0; b < POLICY_BACKEND_N; b++) {
		p[b] = (struct run_backend_probe){.probed = b != 0, .ok = (ok_bits & BIT(b)) != 0};
		snprintf(p[b].why, sizeof(p[b].why), "%s is down", policy_backend_name(b) ?: "?");
		p[b].fix = "fix it";
	}
}

/* choose with @flag, @key, @fallback on Linux, probes from @ok_bits. Return: as the function */
static int choose(unsigned flag, unsigned key, unsigned fallback, unsigned ok_bits, unsigned *ret,
		  char *why, size_t size, const char **fix)
{
	struct run_backend_probe p[POLICY_BACKEND_N];
	struct run_backend_ask a = {flag, key, fallback, LINUX};

	probes_of(p, ok_bits);
	*ret = 0;
	why[0] = '\0';
	return run_backend_choose(&a, p, ret, why, size, fix);
}

/* Nothing chosen: the native backend when it runs, even with a fallback that runs too. */
static void test_auto_native(void **state)
{
	char why[1024];
	const char *fix;
	unsigned b;

	(void)state;
	assert_int_equal(choose(0, 0, 0, BIT(LINUX) | BIT(DOCKER), &b, why, sizeof(why), &fix), 0);
	assert_int_equal(b, LINUX);
	assert_int_equal(
	    choose(0, 0, BIT(DOCKER), BIT(LINUX) | BIT(DOCKER), &b, why, sizeof(why), &fix), 0);
	assert_int_equal(b, LINUX);
}

/* The native backend cannot run and the policy allows no fallback: closed, saying how to allow
 * one; a fallback that runs but is not named is not used. */
static void test_auto_no_fallback(void **state)
{
	char why[1024];
	const char *fix = NULL;
	unsigned b;

	(void)state;
	assert_int_equal(choose(0, 0, 0, BIT(DOCKER), &b, why, sizeof(why), &fix), -ENOENT);
	assert_int_equal(b, 0);
	assert_string_equal(why, "the native backend linux cannot run here: linux is down; not "
				 "falling back to another backend: the policy allows none "
				 "(sandbox.fallback)");
	assert_non_null(fix);
	assert_non_null(strstr(fix, "sandbox: {fallback: [docker]}"));
	/* naming the native one is no fallback */
	assert_int_equal(choose(0, 0, BIT(LINUX), BIT(DOCKER), &b, why, sizeof(why), &fix),
			 -ENOENT);
	assert_non_null(strstr(why, "the policy allows none"));
}

/* The native backend cannot run: a fallback the policy names, when it runs; when it does not
 * either, closed with both reasons. */
static void test_auto_fallback(void **state)
{
	char why[1024];
	const char *fix;
	unsigned b;

	(void)state;
	assert_int_equal(choose(0, 0, BIT(DOCKER), BIT(DOCKER), &b, why, sizeof(why), &fix), 0);
	assert_int_equal(b, DOCKER);
	assert_int_equal(choose(0, 0, BIT(DOCKER), 0, &b, why, sizeof(why), &fix), -ENOENT);
	assert_string_equal(why, "the native backend linux cannot run here: linux is down; the "
				 "fallback docker (sandbox.fallback) cannot run either: docker "
				 "is down");
	/* two named: the registry's order, the first that runs */
	assert_int_equal(
	    choose(0, 0, BIT(DOCKER) | BIT(SEATBELT), BIT(SEATBELT), &b, why, sizeof(why), &fix),
	    0);
	assert_int_equal(b, SEATBELT);
}

/* A forced backend (flag, else policy) is that one or nothing: never a fallback. */
static void test_forced(void **state)
{
	char why[1024];
	const char *fix = NULL;
	unsigned b;

	(void)state;
	assert_int_equal(choose(DOCKER, 0, 0, BIT(LINUX) | BIT(DOCKER), &b, why, sizeof(why), &fix),
			 0);
	assert_int_equal(b, DOCKER);
	assert_int_equal(choose(0, DOCKER, 0, BIT(LINUX) | BIT(DOCKER), &b, why, sizeof(why), &fix),
			 0);
	assert_int_equal(b, DOCKER);
	/* the flag overrides the policy */
	assert_int_equal(choose(LINUX, DOCKER, 0, BIT(LINUX), &b, why, sizeof(why), &fix), 0);
	assert_int_equal(b, LINUX);
	/* forced and down: closed, even with the native one up and a fallback named */
	assert_int_equal(choose(DOCKER, 0, BIT(DOCKER), BIT(LINUX), &b, why, sizeof(why), &fix),
			 -ENOENT);
	assert_int_equal(b, 0);
	assert_string_equal(why, "--backend docker cannot run here: docker is down; a chosen "
				 "backend is never replaced");
	assert_string_equal(fix, "fix it");
	assert_int_equal(choose(0, DOCKER, 0, BIT(LINUX), &b, why, sizeof(why), &fix), -ENOENT);
	assert_string_equal(why, "sandbox.backend: docker (the policy) cannot run here: docker is "
				 "down; a chosen backend is never replaced");
	assert_int_equal(choose(LINUX, 0, BIT(DOCKER), BIT(DOCKER), &b, why, sizeof(why), &fix),
			 -ENOENT);
	assert_non_null(strstr(why, "--backend linux cannot run here"));
}

/* Only probed backends are chosen; which ones run_backend_needed() asks for; bad input. */
static void test_needed_and_unprobed(void **state)
{
	struct run_backend_probe p[POLICY_BACKEND_N] = {0};
	struct run_backend_ask a = {0, 0, BIT(DOCKER), LINUX};
	const char *fix;
	char why[256];
	unsigned b = 0;

	(void)state;
	assert_int_equal(run_backend_needed(&a), BIT(LINUX) | BIT(DOCKER));
	a.key = SEATBELT;
	assert_int_equal(run_backend_needed(&a), BIT(SEATBELT));
	a.flag = DOCKER;
	assert_int_equal(run_backend_needed(&a), BIT(DOCKER));
	/* not probed: not chosen, and said */
	a = (struct run_backend_ask){0, 0, 0, LINUX};
	assert_int_equal(run_backend_choose(&a, p, &b, why, sizeof(why), &fix), -ENOENT);
	assert_non_null(strstr(why, "not probed"));
	a.flag = POLICY_BACKEND_N;
	assert_int_equal(run_backend_choose(&a, p, &b, why, sizeof(why), &fix), -EINVAL);
	/* a short buffer is cut, never overrun */
	probes_of(p, 0);
	a = (struct run_backend_ask){0, 0, BIT(DOCKER), LINUX};
	assert_int_equal(run_backend_choose(&a, p, &b, why, 16, &fix), -ENOENT);
	assert_int_equal(strlen(why), 15);
}

/* A docker CLI that answers `docker version` (written once, in the test's temporary folder). */
static const char *fake_docker(void)
{
	static char path[] = "/tmp/wd-test-docker-XXXXXX";
	static const char text[] = "#!/bin/sh\necho 20.10.24\n";
	int fd;

	if (path[sizeof(path) - 2] != 'X')
		return path;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)(sizeof(text) - 1));
	assert_int_equal(fchmod(fd, 0700), 0);
	close(fd);
	return path;
}

/* The registry's own probes: the backends of other OSes, docker's, this OS's. */
static void test_registry(void **state)
{
	struct run_backend_probe p;
	char line[1536];
	bool ok;

	(void)state;
	assert_int_equal(run_backend_native(), LINUX);
	/* docker: no CLI; a CLI that reaches no engine; a CLI that answers (control). Never a
	 * real engine: the CLI is a script of the test's */
	setenv("WARDEN_DOCKER", "/nonexistent/docker", 1);
	run_backend_probe(DOCKER, &p);
	assert_true(p.probed);
	assert_false(p.ok);
	assert_string_equal(p.why, "no docker CLI ($WARDEN_DOCKER is not an executable file)");
	setenv("WARDEN_DOCKER_INIT", "/bin/true", 1);
	setenv("WARDEN_DOCKER", "/bin/false", 1);
	run_backend_probe(DOCKER, &p);
	assert_false(p.ok);
	assert_string_equal(p.why, "the docker CLI reaches no engine: (no message)");
	setenv("WARDEN_DOCKER", fake_docker(), 1);
	run_backend_probe(DOCKER, &p);
	assert_true(p.ok);
	setenv("WARDEN_DOCKER", "/nonexistent/docker", 1);
	run_backend_probe(SEATBELT, &p);
	assert_false(p.ok);
	assert_string_equal(p.why, "the seatbelt backend is macOS only (this is Linux)");
	run_backend_probe(POLICY_BACKEND_WINDOWS, &p);
	assert_false(p.ok);
	assert_string_equal(p.why, "the windows backend is Windows only (this is Linux)");
	setenv("WARDEN_BWRAP", "/nonexistent/bwrap", 1);
	run_backend_probe(LINUX, &p);
	assert_false(p.ok);
	assert_string_equal(p.why, "bubblewrap not found at /nonexistent/bwrap");
	/* positive control: a file that is there and executable */
	setenv("WARDEN_BWRAP", "/bin/true", 1);
	run_backend_probe(LINUX, &p);
	assert_true(p.ok);
	assert_ptr_equal(run_backend_ops(DOCKER), &sandbox_backend_docker);
	assert_ptr_equal(run_backend_ops(LINUX), &sandbox_backend_bwrap);
	assert_int_equal(run_backend_doctor(0, line, sizeof(line), &ok), 0);
	assert_true(ok);
	assert_string_equal(line,
			    "linux: works (bubblewrap + seccomp; this OS's own, chosen first)");
	assert_int_equal(run_backend_doctor(1, line, sizeof(line), &ok), 0);
	assert_false(ok);
	assert_non_null(strstr(line, "docker: does not work here: no docker CLI"));
	assert_int_equal(run_backend_doctor(4, line, sizeof(line), &ok), -ENOENT);
	unsetenv("WARDEN_BWRAP");
	unsetenv("WARDEN_DOCKER");
	unsetenv("WARDEN_DOCKER_INIT");
	unlink(fake_docker());
}

/* The words, with the alias; the keys parsed, and rendered back as YAML and JSON. */
static void test_policy_keys(void **state)
{
	static const char yaml[] = "version: 1\n"
				   "sandbox:\n"
				   "  backend: bwrap\n"
				   "  fallback: [docker, docker]\n";
	struct policy_diags d;
	struct wd_policy *p = NULL, *q = NULL;
	struct wd_buf y = WD_BUF_INIT, j = WD_BUF_INIT;

	(void)state;
	assert_int_equal(policy_backend_lookup("linux"), LINUX);
	assert_int_equal(policy_backend_lookup("bwrap"), LINUX);
	assert_int_equal(policy_backend_lookup("docker"), DOCKER);
	assert_int_equal(policy_backend_lookup("Docker"), POLICY_BACKEND_AUTO);
	assert_int_equal(policy_backend_lookup(""), POLICY_BACKEND_AUTO);
	assert_null(policy_backend_name(POLICY_BACKEND_AUTO));
	assert_null(policy_backend_name(POLICY_BACKEND_N));
	policy_diags_init(&d);
	assert_int_equal(policy_parse(yaml, sizeof(yaml) - 1, "t.yaml", &p, &d), 0);
	assert_int_equal(d.warnings, 1); /* docker twice */
	assert_int_equal(p->sandbox_backend, LINUX);
	assert_int_equal(p->sandbox_fallback, BIT(DOCKER));
	assert_int_equal(policy_render_yaml(p, &y), 0);
	assert_non_null(strstr(wd_buf_cstr(&y), "sandbox:\n  backend: \"linux\"\n  fallback: "
						"[\"docker\"]\n"));
	assert_int_equal(policy_render_json(p, &j), 0);
	assert_non_null(strstr(wd_buf_cstr(&j), "\"sandbox\":{\"allow\":[],\"backend\":\"linux\","
						"\"fallback\":[\"docker\"]}"));
	/* what render wrote parses to the same */
	policy_diags_free(&d);
	policy_diags_init(&d);
	assert_int_equal(policy_parse(wd_buf_cstr(&y), y.len, "r.yaml", &q, &d), 0);
	assert_int_equal(q->sandbox_backend, LINUX);
	assert_int_equal(q->sandbox_fallback, BIT(DOCKER));
	policy_free(p);
	policy_free(q);
	policy_diags_free(&d);
	wd_buf_free(&y);
	wd_buf_free(&j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_auto_native),		cmocka_unit_test(test_auto_no_fallback),
	    cmocka_unit_test(test_auto_fallback),	cmocka_unit_test(test_forced),
	    cmocka_unit_test(test_needed_and_unprobed), cmocka_unit_test(test_registry),
	    cmocka_unit_test(test_policy_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

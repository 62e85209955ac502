/* test_sandbox_sbpl.c - the Seatbelt profile (sandbox/sbpl.c) and its invariant checker
 * (sandbox/sbpl_check.c), on Linux: a matrix of grants rendered and compared with the golden
 * files in tests/unit/sbpl/ (NAME.sb), each also passing the checker; paths with a quote and a
 * backslash that cannot break out of their string; paths refused; and for every invariant a
 * profile that breaks it, beside the same edit made harmless, so each check is seen to fail.
 *
 * WD_UPDATE_GOLDEN=1 rewrites the golden files from the current code (then review the diff):
 *   WD_UPDATE_GOLDEN=1 build/dev/tests/unit/test_sandbox_sbpl && git diff tests/unit/sbpl
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "policy/policy.h"
#include "sandbox/sbpl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GOLDEN WD_SOURCE_DIR "/tests/unit/sbpl/"
#define HOME "/Users/ann"

/* every credential store, Linux's table and macOS's, with ~ made HOME (as run/ will) */
static char *stores_buf[256];
static size_t nstores;

static void stores_init(void)
{
	size_t n = 0;
	const char *const *linux_stores = policy_credential_stores(&n);

	for (size_t i = 0; i < n + sandbox_sbpl_macos_nstores; i++) {
		const char *s = i < n ? linux_stores[i] : sandbox_sbpl_macos_stores[i - n];
		char path[512];

		if (!strncmp(s, "~/", 2))
			snprintf(path, sizeof(path), "%s%s", HOME, s + 1);
		else
			snprintf(path, sizeof(path), "%s", s);
		assert_true(nstores < sizeof(stores_buf) / sizeof(stores_buf[0]));
		stores_buf[nstores] = strdup(path);
		assert_non_null(stores_buf[nstores]);
		nstores++;
	}
}

static int setup(void **state)
{
	(void)state;
	if (!nstores)
		stores_init();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (size_t i = 0; i < nstores; i++)
		free(stores_buf[i]);
	nstores = 0;
	return 0;
}

/* ---------------------------------------------------------------------- the matrix */

static const struct sandbox_sbpl_grant project_ro[] = {
    {"/Users/ann/project", false},
    {"/opt/data", false},
};
static const struct sandbox_sbpl_grant project_rw[] = {
    {"/Users/ann/project/out", false},
};
static const struct sandbox_sbpl_grant home_ro[] = {
    {HOME, false}, {HOME "/.ssh/known_hosts", true}, /* sensitive, inside a masked store */
};
static const struct sandbox_sbpl_grant home_rw[] = {
    {HOME "/work", false},
};
/* what policy_validate() would list: the stores that exist, and a protected file */
static const char *const home_masks[] = {
    HOME "/.ssh",
    HOME "/.aws",
    HOME "/.local/state/warden/audit",
};
static const struct sandbox_sbpl_grant quote_ro[] = {
    {"/Users/ann/we\"ird\\dir", false},
};

struct matrix_case {
	const char *name;
	struct sandbox_sbpl_in in;
	bool with_stores;
};

static const struct matrix_case matrix[] = {
    {"empty", {0}, false},
    {"read", {.read = project_ro, .nread = 2}, false},
    {"write",
     {.read = project_ro,
      .nread = 2,
      .write = project_rw,
      .nwrite = 1,
      .tmpdir = "/private/var/folders/zz/abc/T/warden-run"},
     false},
    {"home",
     {.read = home_ro,
      .nread = 2,
      .write = home_rw,
      .nwrite = 1,
      .mask = home_masks,
      .nmask = 3,
      .proxy_port = 3128},
     true},
    {"quote", {.read = quote_ro, .nread = 1}, false},
    {"proxy", {.proxy_port = 41234}, false},
};

static struct sandbox_sbpl_in case_in(const struct matrix_case *c)
{
	struct sandbox_sbpl_in in = c->in;

	if (c->with_stores) {
		in.stores = (const char *const *)stores_buf;
		in.nstores = nstores;
	}
	return in;
}

static char *render(const struct sandbox_sbpl_in *in)
{
	struct wd_buf b = {0};
	struct wd_err err = {0};
	int ret = sandbox_sbpl_render(in, &b, &err);

	if (ret)
		fprintf(stderr, "render: %s\n", err.msg);
	assert_int_equal(ret, 0);
	return b.data;
}

static void compare_golden(const char *name, const char *got)
{
	char path[512], *want = NULL;
	size_t len = 0;

	snprintf(path, sizeof(path), "%s%s.sb", GOLDEN, name);
	if (getenv("WD_UPDATE_GOLDEN")) {
		FILE *f = fopen(path, "w");

		assert_non_null(f);
		fputs(got, f);
		assert_int_equal(fclose(f), 0);
	}
	assert_int_equal(wd_read_file(path, 1 << 20, &want, &len), 0);
	if (strcmp(want, got)) {
		fprintf(stderr,
			"%s differs from the rendering; if the change is intended, rerun with "
			"WD_UPDATE_GOLDEN=1 and review the diff\n--- got:\n%s",
			path, got);
		fail();
	}
	free(want);
}

static int check(const char *text, const struct sandbox_sbpl_in *in, struct wd_err *err)
{
	memset(err, 0, sizeof(*err));
	return sandbox_sbpl_check(text, in, err);
}

static void test_matrix(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(matrix) / sizeof(matrix[0]); i++) {
		struct sandbox_sbpl_in in = case_in(&matrix[i]);
		char *text = render(&in);
		struct wd_err err;
		int ret = check(text, &in, &err);

		if (ret)
			fprintf(stderr, "%s: %s\n", matrix[i].name, err.msg);
		assert_int_equal(ret, 0);
		compare_golden(matrix[i].name, text);
		free(text);
	}
}

/* the stores a grant holds are masked; those no grant holds are not mentioned */
static void test_home_masks(void **state)
{
	struct sandbox_sbpl_in in = case_in(&matrix[3]);
	char *text = render(&in);

	(void)state;
	assert_non_null(strstr(text, "(deny file-read* file-write* file-map-executable "
				     "(subpath \"/Users/ann/.gnupg\"))"));
	assert_non_null(strstr(text, "(subpath \"/Users/ann/Library/Keychains\"))"));
	assert_null(strstr(text, "file-write-unlink"));	   /* no mask lies in the write grant */
	assert_null(strstr(text, "/var/run/docker.sock")); /* no grant holds it */
	/* the sensitive grant comes back after the store's mask, the protected file last */
	assert_true(strstr(text, "(allow file-read* file-map-executable (subpath "
				 "\"/Users/ann/.ssh/known_hosts\"))\n\n") >
		    strstr(text, "(subpath \"/Users/ann/.ssh\"))"));
	assert_true(strstr(text, "(subpath \"/Users/ann/.local/state/warden/audit\"))") >
		    strstr(text, "(subpath \"/Users/ann/.ssh/known_hosts\"))\n\n"));
	free(text);
}

/* a mask inside a write grant: renaming the folders above it within the grant is denied */
static void test_mask_ancestors(void **state)
{
	static const struct sandbox_sbpl_grant rw[] = {{"/Users/ann/code", false}};
	static const char *const m[] = {"/Users/ann/code/app/.npmrc"};
	struct sandbox_sbpl_in in = {.write = rw, .nwrite = 1, .mask = m, .nmask = 1};
	char *text = render(&in);
	struct wd_err err;

	(void)state;
	assert_non_null(strstr(text, "(deny file-write-unlink (literal \"/Users/ann/code/app\"))\n"
				     "(deny file-write-unlink (literal \"/Users/ann/code\"))\n"));
	assert_null(strstr(text, "(deny file-write-unlink (literal \"/Users/ann\"))"));
	assert_int_equal(check(text, &in, &err), 0);
	free(text);
}

/* ------------------------------------------------------------------- string literals */

static void test_quote(void **state)
{
	struct wd_buf b = {0};

	(void)state;
	assert_int_equal(sandbox_sbpl_quote(&b, "/a\"b\\c"), 0);
	assert_string_equal(wd_buf_cstr(&b), "\"/a\\\"b\\\\c\"");
	wd_buf_reset(&b);
	assert_int_equal(sandbox_sbpl_quote(&b, "/a\nb"), -EINVAL);
	assert_int_equal(sandbox_sbpl_quote(&b, "/a\x7f"), -EINVAL);
	assert_int_equal(b.len, 0);
	assert_int_equal(sandbox_sbpl_quote(&b, "/caf\xc3\xa9"), 0); /* UTF-8 as it is */
	assert_string_equal(wd_buf_cstr(&b), "\"/caf\xc3\xa9\"");
	wd_buf_free(&b);
}

/* A grant that tries to close its string and add rules stays one path: the checker reads
 * the rendered profile and finds no network and no default allow; the same text pasted
 * unescaped into a profile does break out, and the checker says so. */
static void test_no_breakout(void **state)
{
	static const char evil[] = "/tmp/x\")) (allow network*) (allow default) ; \\";
	const struct sandbox_sbpl_grant ro[] = {{evil, false}};
	struct sandbox_sbpl_in in = {.read = ro, .nread = 1};
	char *text = render(&in);
	struct wd_buf raw = {0};
	struct wd_err err;

	(void)state;
	assert_int_equal(check(text, &in, &err), 0);
	assert_int_equal(wd_buf_printf(&raw,
				       "(version 1)\n(deny default)\n"
				       "(allow file-read* (subpath \"%s\"))\n",
				       evil),
			 0);
	assert_int_equal(check(wd_buf_cstr(&raw), &in, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "network"));
	wd_buf_free(&raw);
	free(text);
}

static void test_refused_paths(void **state)
{
	static const char *const bad[] = {"relative", "/a/../b", "/a/./b", "/a//b",
					  "/a/",      "/a\nb",	 "",	   "/a/.."};
	struct wd_buf b = {0};
	struct wd_err err = {0};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const struct sandbox_sbpl_grant g[] = {{bad[i], false}};
		struct sandbox_sbpl_in in = {.write = g, .nwrite = 1};

		assert_int_equal(sandbox_sbpl_render(&in, &b, &err), -EINVAL);
		assert_non_null(strstr(err.msg, "seatbelt profile"));
		wd_buf_reset(&b);
	}
	wd_buf_free(&b);
}

/* ---------------------------------------------------- each invariant, broken and kept */

/* @text with @from replaced by @to (which must occur), then checked against @in */
static int check_edit(const char *text, const char *from, const char *to,
		      const struct sandbox_sbpl_in *in, struct wd_err *err)
{
	const char *at = strstr(text, from);
	struct wd_buf b = {0};
	int ret;

	assert_non_null(at);
	assert_int_equal(wd_buf_append(&b, text, (size_t)(at - text)), 0);
	assert_int_equal(wd_buf_puts(&b, to), 0);
	assert_int_equal(wd_buf_puts(&b, at + strlen(from)), 0);
	ret = check(wd_buf_cstr(&b), in, err);
	wd_buf_free(&b);
	return ret;
}

#define END "\n; names are the proxy's"

/* appended just before the DNS denial at the end: @bad fails with @why, @good passes */
static void both(const char *text, const struct sandbox_sbpl_in *in, const char *bad,
		 const char *why, const char *good)
{
	char to[1024];
	struct wd_err err;

	snprintf(to, sizeof(to), "%s%s", good, END);
	assert_int_equal(check_edit(text, END, to, in, &err), 0);
	snprintf(to, sizeof(to), "%s%s", bad, END);
	assert_int_equal(check_edit(text, END, to, in, &err), -EINVAL);
	if (!strstr(err.msg, why))
		fprintf(stderr, "wanted `%s`, got `%s`\n", why, err.msg);
	assert_non_null(strstr(err.msg, why));
}

static void test_invariant_default_deny(void **state)
{
	struct sandbox_sbpl_in in = case_in(&matrix[2]);
	char *text = render(&in);
	struct wd_err err;

	(void)state;
	assert_int_equal(check_edit(text, "(deny default)\n", "\n", &in, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "before (deny default)"));
	assert_int_equal(check_edit(text, "(deny default)\n", "(deny default) ; kept\n", &in, &err),
			 0);
	assert_int_equal(check_edit(text, "(version 1)", "(version 2)", &in, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "(version 1)"));
	both(text, &in, "(allow default)", "(allow default)", "(deny default)");
	both(text, &in, "(allow file-read* default)", "(allow default)",
	     "(allow file-read* (literal \"/opt/data\"))");
	free(text);
}

static void test_invariant_write(void **state)
{
	struct sandbox_sbpl_in in = case_in(&matrix[2]);
	char *text = render(&in);

	(void)state;
	both(text, &in, "(allow file-write* (subpath \"/Users/ann/project\"))",
	     "outside the write grants",
	     "(allow file-write* (subpath \"/Users/ann/project/out/x\"))");
	both(text, &in, "(allow file-write-create (literal \"/Users/ann/projectout\"))",
	     "outside the write grants",
	     "(allow file-write-create (literal \"/private/var/folders/zz/abc/T/warden-run/f\"))");
	both(text, &in, "(allow file-write*)", "everywhere", "(allow file-read-metadata)");
	both(text, &in, "(allow file* (subpath \"/opt/data\"))", "outside the write grants",
	     "(allow file-read* (subpath \"/opt/data\"))");
	both(text, &in, "(allow file-write* (regex \"^/Users/ann/project/out\"))",
	     "other than literal or subpath", "(allow file-write* (literal \"/dev/null\"))");
	both(text, &in, "(allow file-write* (subpath \"/dev\"))", "outside the write grants",
	     "(allow file-write* (subpath \"/dev/fd/3\"))");
	free(text);
}

static void test_invariant_network(void **state)
{
	struct sandbox_sbpl_in in = case_in(&matrix[3]);
	struct sandbox_sbpl_in none = case_in(&matrix[2]);
	char *text = render(&in), *text0 = render(&none);
	struct wd_err err;

	(void)state;
	both(text, &in, "(allow network-outbound (remote ip \"localhost:80\"))", "network rule",
	     "(allow network-outbound (remote ip \"localhost:3128\"))");
	both(text, &in, "(allow network*)", "network rule", "(deny network*)");
	both(text, &in, "(allow network-outbound (remote ip \"*:3128\"))", "network rule",
	     "(deny network-outbound (remote ip \"*:3128\"))");
	both(text, &in, "(allow network-bind (local ip \"localhost:3128\"))", "network rule",
	     "(deny network-bind (local ip \"localhost:3128\"))");
	both(text, &in, "(allow system-socket)", "network rule", "(deny system-socket)");
	both(text, &in, "(allow network-outbound (literal \"/private/var/run/mDNSResponder\"))",
	     "network rule",
	     "(deny network-outbound (literal \"/private/var/run/mDNSResponder\"))");
	/* without a proxy port no network rule at all, not even to localhost:0 */
	assert_null(strstr(text0, "(allow network"));
	assert_int_equal(check_edit(text0, END,
				    "(allow network-outbound (remote ip \"localhost:0\"))" END,
				    &none, &err),
			 -EINVAL);
	free(text);
	free(text0);
}

static void test_invariant_dns(void **state)
{
	struct sandbox_sbpl_in in = case_in(&matrix[3]);
	char *text = render(&in);

	(void)state;
	both(text, &in, "(allow mach-lookup (global-name \"com.apple.dnssd.service\"))",
	     "DNS service", "(allow mach-lookup (global-name \"com.apple.logd\"))");
	both(text, &in, "(allow mach-lookup)", "every service",
	     "(allow mach-lookup (local-name \"com.apple.cfprefsd.agent\"))");
	both(text, &in, "(allow mach-lookup (global-name-prefix \"com.apple.\"))",
	     "other than a name", "(deny mach-lookup (global-name-prefix \"com.apple.\"))");
	free(text);
}

static void test_invariant_masks(void **state)
{
	struct sandbox_sbpl_in in = case_in(&matrix[3]);
	char *text = render(&in);
	struct wd_err err;
	static const char aws[] =
	    "(deny file-read* file-write* file-map-executable (subpath \"/Users/ann/.aws\"))\n";
	static const char keys[] = "(deny file-read* file-write* file-map-executable (subpath "
				   "\"/Users/ann/Library/Keychains\"))\n";

	(void)state;
	/* an allow after the masks that holds them undoes them */
	both(text, &in, "(allow file-read* (subpath \"/Users/ann\"))", "after the mask",
	     "(allow file-read* (subpath \"/Users/ann/work\"))");
	both(text, &in, "(allow file-read*)", "after the mask", "(allow file-read-metadata)");
	/* a mask dropped (one validate listed, one only the store table knows) */
	assert_int_equal(check_edit(text, aws, "", &in, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "`/Users/ann/.aws` is readable"));
	assert_int_equal(check_edit(text, keys, "", &in, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "`/Users/ann/Library/Keychains` is readable"));
	/* the mask moved just below the grant that holds it still holds; just above, it is
	 * undone */
	{
		static const char g[] =
		    "(allow file-read* file-map-executable (subpath \"/Users/ann\"))\n";
		const char *at = strstr(text, aws);
		struct wd_buf b = {0};
		char moved[512];

		assert_int_equal(wd_buf_append(&b, text, (size_t)(at - text)), 0);
		assert_int_equal(wd_buf_puts(&b, at + strlen(aws)), 0);
		snprintf(moved, sizeof(moved), "%s%s", g, aws);
		assert_int_equal(check_edit(wd_buf_cstr(&b), g, moved, &in, &err), 0);
		snprintf(moved, sizeof(moved), "%s%s", aws, g);
		assert_int_equal(check_edit(wd_buf_cstr(&b), g, moved, &in, &err), -EINVAL);
		assert_non_null(strstr(err.msg, "after the mask of `/Users/ann/.aws`"));
		wd_buf_free(&b);
	}
	free(text);
}

static void test_reader(void **state)
{
	const struct sandbox_sbpl_in in = {0};
	struct wd_err err;

	(void)state;
	assert_int_equal(check("(version 1)\n(deny default)\n", &in, &err), 0);
	assert_int_equal(
	    check("(version 1)\n(deny default)\n(allow file-read* (regex #\"^/\"))\n", &in, &err),
	    -EINVAL);
	assert_non_null(strstr(err.msg, "line 3"));
	assert_int_equal(check("(version 1)\n(deny default\n", &in, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "unclosed"));
	assert_int_equal(
	    check("(version 1)\n(deny default)\n(allow file-read* (literal \"/a))\n", &in, &err),
	    -EINVAL);
	assert_non_null(strstr(err.msg, "unterminated"));
	assert_int_equal(
	    check("(version 1) (deny default) (allow file-read* (literal \"/a\\n\"))", &in, &err),
	    -EINVAL);
	assert_int_equal(check("(version 1) deny", &in, &err), -EINVAL);
	assert_int_equal(check("", &in, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "(version 1)"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_matrix),
	    cmocka_unit_test(test_home_masks),
	    cmocka_unit_test(test_mask_ancestors),
	    cmocka_unit_test(test_quote),
	    cmocka_unit_test(test_no_breakout),
	    cmocka_unit_test(test_refused_paths),
	    cmocka_unit_test(test_invariant_default_deny),
	    cmocka_unit_test(test_invariant_write),
	    cmocka_unit_test(test_invariant_network),
	    cmocka_unit_test(test_invariant_dns),
	    cmocka_unit_test(test_invariant_masks),
	    cmocka_unit_test(test_reader),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

/* test_run_flags.c - unit tests for `warden run --allow/--read/--write` (issue 27, item 7): the
 * flags written as a policy document (run_flags_yaml(): quoting, relative paths made the current
 * folder's, each flag's line), which flag a diagnostic is about, and policy_merge() (the union of
 * a policy file's lists and the flags', duplicates once, the flags' lines shifted past the file's,
 * the matcher rebuilt). */
#include "policy/policy.h"
#include "run/flags.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy_diags.h"

static struct wd_policy *parse_ok(const char *yaml, const char *name, struct policy_diags *d)
{
	struct wd_policy *p = NULL;
	int ret;

	policy_diags_init(d);
	ret = policy_parse(yaml, strlen(yaml), name, &p, d);
	if (ret)
		dump(d);
	assert_int_equal(ret, 0);
	assert_non_null(p);
	return p;
}

static void test_yaml_of_the_flags(void **state)
{
	/* command-line order, mixed: each list keeps its flags' order */
	const struct run_flag v[] = {
	    {RUN_FLAG_WRITE, "./out/"},
	    {RUN_FLAG_ALLOW, "api.github.com"},
	    {RUN_FLAG_READ, "."},
	    {RUN_FLAG_READ, "~/.config/x"},
	    {RUN_FLAG_ALLOW, "x.test:8443"},
	    {RUN_FLAG_READ, "a/../b \"q\"\n"},
	};
	int line[6] = {0};
	struct wd_buf b = WD_BUF_INIT;

	(void)state;
	assert_int_equal(run_flags_yaml(v, 6, "/home/u/p", &b, line), 0);
	assert_string_equal(wd_buf_cstr(&b), "version: 1\n"
					     "network:\n"
					     "  allow:\n"
					     "    - \"api.github.com\"\n"
					     "    - \"x.test:8443\"\n"
					     "filesystem:\n"
					     "  read:\n"
					     "    - \"/home/u/p\"\n"
					     "    - \"~/.config/x\"\n"
					     "    - \"/home/u/p/b \\\"q\\\"\\n\"\n"
					     "  write:\n"
					     "    - \"/home/u/p/out/\"\n");
	/* lines: allow 4, 5; read 8, 9, 10; write 12 */
	assert_int_equal(line[1], 4);
	assert_int_equal(line[4], 5);
	assert_int_equal(line[2], 8);
	assert_int_equal(line[3], 9);
	assert_int_equal(line[5], 10);
	assert_int_equal(line[0], 12);
	assert_int_equal(run_flags_which(line, 6, 12), 0);
	assert_int_equal(run_flags_which(line, 6, 9), 3);
	assert_int_equal(run_flags_which(line, 6, 6), -1);
	wd_buf_free(&b);
	/* a write alone has its own `filesystem:` line; an empty path stays empty (the parser's) */
	{
		const struct run_flag w[] = {{RUN_FLAG_WRITE, "/tmp/o"}, {RUN_FLAG_WRITE, ""}};

		assert_int_equal(run_flags_yaml(w, 2, "/", &b, line), 0);
		assert_string_equal(wd_buf_cstr(&b), "version: 1\nfilesystem:\n  write:\n"
						     "    - \"/tmp/o\"\n    - \"\"\n");
		assert_int_equal(line[0], 4);
		assert_int_equal(line[1], 5);
		wd_buf_free(&b);
	}
	/* no flags, or a relative folder: refused */
	assert_int_equal(run_flags_yaml(v, 0, "/", &b, line), -EINVAL);
	assert_int_equal(run_flags_yaml(v, 1, "rel", &b, line), -EINVAL);
	wd_buf_free(&b);
	assert_string_equal(run_flag_name(RUN_FLAG_ALLOW), "--allow");
	assert_string_equal(run_flag_name(RUN_FLAG_READ), "--read");
	assert_string_equal(run_flag_name(RUN_FLAG_WRITE), "--write");
}

/* the flags' YAML goes through the policy's parser: a URL gets the policy's message, at the
 * flag's line */
static void test_flag_errors_at_their_line(void **state)
{
	const struct run_flag v[] = {{RUN_FLAG_ALLOW, "ok.test"}, {RUN_FLAG_ALLOW, "https://x/"}};
	struct wd_buf b = WD_BUF_INIT;
	struct policy_diags d;
	struct wd_policy *p = NULL;
	int line[2];

	(void)state;
	assert_int_equal(run_flags_yaml(v, 2, "/", &b, line), 0);
	policy_diags_init(&d);
	assert_int_equal(policy_parse(b.data, b.len, "warden run", &p, &d), -EINVAL);
	assert_null(p);
	assert_int_equal(d.errors, 1);
	assert_int_equal(run_flags_which(line, 2, d.v[0].line), 1);
	assert_non_null(
	    strstr(d.v[0].msg, "expected a host name, not a URL; did you mean `x:443`?"));
	policy_diags_free(&d);
	wd_buf_free(&b);
}

static void test_merge_is_the_union(void **state)
{
	struct policy_diags d1, d2;
	struct wd_policy *file = parse_ok("version: 1\n"
					  "network:\n"
					  "  allow:\n"
					  "    - a.test\n"
					  "    - \"b.test:8443\"\n"
					  "filesystem:\n"
					  "  read: [/usr/share]\n",
					  "p.yaml", &d1);
	struct wd_policy *flags = parse_ok("version: 1\n"
					   "network:\n"
					   "  allow:\n"
					   "    - \"c.test\"\n"
					   "    - \"a.test\"\n"
					   "filesystem:\n"
					   "  read:\n"
					   "    - \"/usr/share\"\n"
					   "    - \"/etc\"\n"
					   "  write:\n"
					   "    - \"/tmp/o/\"\n",
					   "warden run", &d2);
	struct wd_buf b = WD_BUF_INIT;

	(void)state;
	assert_false(policy_allows(file, "c.test", 443));
	assert_int_equal(policy_merge(file, flags, 100), 0);
	/* the file's, then the flags' not already there */
	assert_int_equal(file->nrules, 3);
	assert_string_equal(file->rules[0].text, "a.test:80,443");
	assert_string_equal(file->rules[1].text, "b.test:8443");
	assert_string_equal(file->rules[2].text, "c.test:80,443");
	assert_int_equal(file->rules[0].line, 4);
	assert_int_equal(file->rules[2].line, 104);
	assert_int_equal(file->nread, 2);
	assert_string_equal(file->read[1].path, "/etc");
	assert_int_equal(file->read[1].line, 109);
	assert_int_equal(file->nwrite, 1);
	assert_string_equal(file->write[0].path, "/tmp/o/");
	/* the matcher knows the new rules, and still the old */
	assert_true(policy_allows(file, "c.test", 443));
	assert_true(policy_allows(file, "b.test", 8443));
	assert_false(policy_allows(file, "b.test", 443));
	assert_false(policy_allows(file, "d.test", 443));
	/* @from is left empty */
	assert_int_equal(flags->nrules, 0);
	assert_int_equal(flags->nread, 0);
	assert_int_equal(flags->nwrite, 0);
	assert_null(flags->matcher);
	/* the merged policy renders as one policy, the flags' entries at the ends */
	assert_int_equal(policy_render_yaml(file, &b), 0);
	assert_non_null(strstr(wd_buf_cstr(&b), "    - { host: \"b.test\", ports: [8443] }\n"
						"    - { host: \"c.test\", ports: [80, 443] }\n"));
	assert_non_null(strstr(wd_buf_cstr(&b), "  write:\n    - \"/tmp/o/\"\n"));
	wd_buf_free(&b);
	/* a validated policy is not merged into */
	file->validated = true;
	assert_int_equal(policy_merge(file, flags, 0), -EINVAL);
	policy_free(file);
	policy_free(flags);
	policy_diags_free(&d1);
	policy_diags_free(&d2);
}

/* a file with no network section gets one from the flags */
static void test_merge_into_an_empty_policy(void **state)
{
	struct policy_diags d1, d2;
	struct wd_policy *file = parse_ok("version: 1\n", "p.yaml", &d1);
	struct wd_policy *flags =
	    parse_ok("version: 1\nnetwork:\n  allow:\n    - \"*.x.test:22\"\n", "warden run", &d2);

	(void)state;
	assert_int_equal(policy_merge(file, flags, 3), 0);
	assert_int_equal(file->nrules, 1);
	assert_true(policy_allows(file, "a.x.test", 22));
	assert_false(policy_allows(file, "x.test", 22));
	policy_free(file);
	policy_free(flags);
	policy_diags_free(&d1);
	policy_diags_free(&d2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_yaml_of_the_flags),
	    cmocka_unit_test(test_flag_errors_at_their_line),
	    cmocka_unit_test(test_merge_is_the_union),
	    cmocka_unit_test(test_merge_into_an_empty_policy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

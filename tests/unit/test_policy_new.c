/* test_policy_new.c - `warden policy new --mcp`'s generation (run/newpolicy.c) on a mkdtemp
 * tree: a node bin shim in a hoisted node_modules with node found outside the standard
 * folders (nvm), a Python virtual environment, npx, a missing command, a newline in an
 * argument; every text made passes policy_parse(). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "policy/policy.h"
#include "run/newpolicy.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[PATH_MAX];

static void put(const char *rel, const char *text, mode_t mode)
{
	char p[PATH_MAX * 2];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	f = fopen(p, "w");
	if (!f) {
		fail_msg("%s: %s", p, strerror(errno));
		return;
	}
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(p, mode), 0);
}

static void dir(const char *rel)
{
	char p[PATH_MAX * 2];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	assert_int_equal(mkdir(p, 0755), 0);
}

static void link_to(const char *target, const char *rel)
{
	char p[PATH_MAX * 2];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	assert_int_equal(symlink(target, p), 0);
}

static int setup(void **state)
{
	static const char *const dirs[] = {"proj",
					   "proj/node_modules",
					   "proj/node_modules/.bin",
					   "proj/node_modules/@s",
					   "proj/node_modules/@s/srv",
					   "proj/node_modules/@s/srv/dist",
					   "proj/node_modules/dep",
					   "nodehome",
					   "nodehome/bin",
					   "venv",
					   "venv/bin",
					   "pyhome",
					   "pyhome/bin",
					   "bin",
					   "nodehome/lib",
					   "nodehome/lib/node_modules",
					   "nodehome/lib/node_modules/g",
					   "nodehome/lib/node_modules/g/bin"};
	char shebang[PATH_MAX * 2];

	(void)state;
	snprintf(root, sizeof(root), "/tmp/wd-policy-new-XXXXXX");
	assert_non_null(mkdtemp(root));
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		dir(dirs[i]);
	put("proj/node_modules/@s/srv/package.json", "{\"name\": \"@s/srv\"}\n", 0644);
	put("proj/node_modules/@s/srv/dist/index.js", "#!/usr/bin/env node\nimport 'dep';\n", 0755);
	put("proj/node_modules/dep/package.json", "{\"name\": \"dep\"}\n", 0644);
	link_to("../@s/srv/dist/index.js", "proj/node_modules/.bin/srv");
	/* node as nvm installs it: outside the runtime base and the standard PATH folders */
	put("nodehome/bin/node", "#!/bin/sh\n", 0755);
	/* a virtual environment whose python is another installation's */
	put("pyhome/bin/python3", "#!/bin/sh\n", 0755);
	put("venv/pyvenv.cfg", "home = x\n", 0644);
	snprintf(shebang, sizeof(shebang), "%s/pyhome/bin/python3", root);
	link_to(shebang, "venv/bin/python");
	snprintf(shebang, sizeof(shebang), "#!%s/venv/bin/python\nimport sys\n", root);
	put("venv/bin/tool", shebang, 0755);
	put("bin/npx", "#!/bin/sh\n", 0755);
	/* a global package of nvm's node: its node_modules lies in node's own folder */
	put("nodehome/lib/node_modules/g/package.json", "{\"name\": \"g\"}\n", 0644);
	put("nodehome/lib/node_modules/g/bin/g.js", "#!/usr/bin/env node\n", 0755);
	link_to("../lib/node_modules/g/bin/g.js", "nodehome/bin/g");
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) ? -1 : 0;
}

/* the text made for @argv (expected to succeed), checked to parse */
static char *made(int argc, char *const *argv, const char *path)
{
	struct wd_buf out = WD_BUF_INIT;
	struct wd_err err = {0};
	struct policy_diags d;
	struct wd_policy *p = NULL;
	char *text;
	int ret;

	ret = run_policy_new_mcp(argc, argv, path, &out, &err);
	if (ret)
		fail_msg("run_policy_new_mcp: %d %s", ret, err.msg);
	policy_diags_init(&d);
	ret = policy_parse(out.data, out.len, "new.yaml", &p, &d);
	if (ret)
		fail_msg("the text does not parse (%zu errors, first: %s):\n%s", d.errors,
			 d.n ? d.v[0].msg : "", wd_buf_cstr(&out));
	policy_free(p);
	policy_diags_free(&d);
	text = strdup(wd_buf_cstr(&out));
	wd_buf_free(&out);
	assert_non_null(text);
	return text;
}

static void has(const char *text, const char *fmt, const char *a)
{
	char want[PATH_MAX * 3];

	snprintf(want, sizeof(want), fmt, a);
	if (!strstr(text, want))
		fail_msg("missing `%s` in:\n%s", want, text);
}

static void test_node_shim_hoisted_nvm(void **state)
{
	char path[PATH_MAX * 3];
	char *const argv[] = {"srv", "stdio"};
	char *t;

	(void)state;
	snprintf(path, sizeof(path), "%s/proj/node_modules/.bin:%s/nodehome/bin:/usr/bin:/bin",
		 root, root);
	t = made(2, argv, path);
	/* the shim as found, and its argument */
	has(t, "command: [\"%s/proj/node_modules/.bin/srv\", \"stdio\"]\n", root);
	/* the whole node_modules (the dependency `dep` is beside the package, not in it) */
	has(t, "    - \"%s/proj/node_modules\"\n", root);
	/* node's installation, and PATH so that `env node` finds it inside the sandbox */
	has(t, "    - \"%s/nodehome\"\n", root);
	has(t, "    PATH: \"%s/nodehome/bin:/usr/local/bin:/usr/bin:/bin\"\n", root);
	assert_null(strstr(t, "\n  timeout_s"));
	assert_null(strstr(t, "\nnetwork:"));
	assert_non_null(strstr(t, "  allow: [LANG]\n"));
	free(t);
}

static void test_nvm_global(void **state)
{
	char path[PATH_MAX + 16];
	char *const argv[] = {"g"};
	char *t;

	(void)state;
	snprintf(path, sizeof(path), "%s/nodehome/bin", root);
	t = made(1, argv, path);
	/* one grant: node's folder, which holds the package's node_modules too */
	has(t, "  read:\n    # the interpreter's installation\n    - \"%s/nodehome\"\n# No network",
	    root);
	assert_null(strstr(t, "lib/node_modules\"\n"));
	free(t);
}

static void test_venv(void **state)
{
	char tool[PATH_MAX + 32];
	char *argv[] = {tool};
	char *t;

	(void)state;
	snprintf(tool, sizeof(tool), "%s/venv/bin/tool", root);
	t = made(1, argv, "/usr/bin:/bin");
	has(t, "# the Python virtual environment\n    - \"%s/venv\"\n", root);
	has(t, "# the interpreter's installation\n    - \"%s/pyhome\"\n", root);
	/* the script lies in the environment: no grant of its own */
	assert_null(strstr(t, "the script's installation"));
	free(t);
}

static void test_npx(void **state)
{
	char path[PATH_MAX + 16];
	char *const argv[] = {"npx", "-y", "@scope/server"};
	char *t;

	(void)state;
	snprintf(path, sizeof(path), "%s/bin", root);
	t = made(3, argv, path);
	assert_non_null(strstr(t, "  write:\n    - \"~/.npm\"\n"));
	assert_non_null(strstr(t, "network:\n"));
	assert_non_null(strstr(t, "    - \"registry.npmjs.org:443\"\n"));
	assert_non_null(strstr(t, "  allow: [LANG, HOME]\n"));
	free(t);
}

static void test_not_found(void **state)
{
	struct wd_buf out = WD_BUF_INIT;
	struct wd_err err = {0};
	char *const argv[] = {"no-such-mcp-server"};
	char *const none[] = {""};

	(void)state;
	assert_int_equal(run_policy_new_mcp(1, argv, "/usr/bin:/bin", &out, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "no-such-mcp-server: command not found"));
	assert_int_equal(run_policy_new_mcp(1, none, NULL, &out, &err), -EINVAL);
	assert_int_equal(out.len, 0);
	wd_buf_free(&out);
}

static void test_newline_in_argument(void **state)
{
	char *const argv[] = {"/bin/sh", "-c", "a\nversion: 2"};
	char *t;

	(void)state;
	t = made(3, argv, NULL);
	/* the header comment cannot end early; the command keeps the argument whole */
	assert_non_null(strstr(t, "`/bin/sh -c a?version: 2`"));
	assert_non_null(strstr(t, "\"a\\nversion: 2\"]"));
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_node_shim_hoisted_nvm),
	    cmocka_unit_test(test_nvm_global),
	    cmocka_unit_test(test_venv),
	    cmocka_unit_test(test_npx),
	    cmocka_unit_test(test_not_found),
	    cmocka_unit_test(test_newline_in_argument),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

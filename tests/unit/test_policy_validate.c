/* test_policy_validate.c - path validation against a real temporary tree:
 * symlinks, missing grants, the runtime base, credential stores and masks. */
#include "policy/policy.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "policy_diags.h"

static char root[PATH_MAX], home[PATH_MAX + 16], proj[PATH_MAX + 16], file[PATH_MAX + 32];

static void path_of(char *out, size_t len, const char *rel)
{
	snprintf(out, len, "%s/%s", root, rel);
}

static void mk(const char *rel, bool dir)
{
	char p[PATH_MAX + 64];
	int fd;

	path_of(p, sizeof(p), rel);
	if (dir) {
		assert_int_equal(mkdir(p, 0700), 0);
		return;
	}
	fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	close(fd);
}

static void ln(const char *target_rel, const char *rel)
{
	char t[PATH_MAX + 64], p[PATH_MAX + 64];

	path_of(t, sizeof(t), target_rel);
	path_of(p, sizeof(p), rel);
	assert_int_equal(symlink(t, p), 0);
}

static int setup(void **state)
{
	char tmpl[] = "/tmp/wd-policy-XXXXXX";

	(void)state;
	if (!mkdtemp(tmpl) || !realpath(tmpl, root))
		return -1;
	snprintf(home, sizeof(home), "%s/home", root);
	snprintf(proj, sizeof(proj), "%s/proj", root);
	snprintf(file, sizeof(file), "%s/policy.yaml", proj);
	mk("home", true);
	mk("home/.ssh", true);
	mk("home/.ssh/id_ed25519", false);
	mk("home/docs", true);
	mk("awsreal", true);
	ln("awsreal", "home/.aws");
	mk("proj", true);
	mk("proj/src", true);
	ln("proj/src", "proj/link");
	ln("home/.ssh", "proj/sshlink");
	ln("awsreal", "proj/awslink");
	return 0;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static int teardown(void **state)
{
	(void)state;
	return nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* parse @yaml as if it were @file, then validate with @home; returns validate's result */
static int check(const char *yaml, struct wd_policy **p, struct policy_diags *d)
{
	int ret;

	policy_diags_init(d);
	*p = NULL;
	assert_int_equal(policy_parse(yaml, strlen(yaml), file, p, d), 0);
	ret = policy_validate(*p, &(struct policy_ctx){.home = home}, d);
	if (getenv("WD_TEST_VERBOSE"))
		dump(d);
	return ret;
}

static void done(struct wd_policy *p, struct policy_diags *d)
{
	policy_free(p);
	policy_diags_free(d);
}

static void expect_real(const struct policy_grant *g, const char *rel)
{
	char want[PATH_MAX + 64];

	path_of(want, sizeof(want), rel);
	assert_non_null(g->real);
	assert_string_equal(g->real, want);
}

static void test_relative_dot(void **state)
{
	struct wd_policy *p;
	struct policy_diags d;

	(void)state;
	assert_int_equal(check("version: 1\nfilesystem: {read: [., src/../src, ./src/]}\n", &p, &d),
			 0);
	expect_real(&p->read[0], "proj");
	expect_real(&p->read[1], "proj/src");
	expect_real(&p->read[2], "proj/src");
	assert_int_equal(d.n, 0);
	assert_true(p->validated);
	done(p, &d);
}

/* the links of setup() are root's only when the test runs as root */
static void need_root(void)
{
	if (geteuid() != 0)
		skip();
}

static void test_symlink_warns(void **state)
{
	struct wd_policy *p;
	struct policy_diags d;

	(void)state;
	need_root();
	assert_int_equal(check("version: 1\nfilesystem:\n  read: [link]\n", &p, &d), 0);
	expect_real(&p->read[0], "proj/src");
	assert_int_equal(d.warnings, 1);
	assert_true(has_diag(&d, POLICY_DIAG_WARNING, 3, 10, "through a symbolic link"));
	done(p, &d);
}

/* A link someone other than root owns is never followed: a sandboxed program could have
 * planted it in a write grant. */
static void test_symlink_untrusted_owner(void **state)
{
	struct wd_policy *p;
	struct policy_diags d;
	char lp[PATH_MAX + 64];

	(void)state;
	need_root();
	ln("proj/src", "proj/planted");
	path_of(lp, sizeof(lp), "proj/planted");
	assert_int_equal(lchown(lp, 4321, 4321), 0);
	assert_int_equal(check("version: 1\nfilesystem:\n  read: [planted]\n", &p, &d), -EINVAL);
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 3, 10, "passes through the symbolic link"));
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 3, 10, "owned by uid 4321"));
	done(p, &d);
	/* ... nor on the way to a missing write grant */
	assert_int_equal(check("version: 1\nfilesystem:\n  write: [planted/new]\n", &p, &d),
			 -EINVAL);
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 3, 11, "passes through the symbolic link"));
	done(p, &d);
	/* ... nor a dangling one where a missing write grant would be made */
	assert_int_equal(unlink(lp), 0);
	path_of(lp, sizeof(lp), "proj/dangling");
	assert_int_equal(symlink("/nonexistent-target", lp), 0);
	assert_int_equal(lchown(lp, 4321, 4321), 0);
	assert_int_equal(check("version: 1\nfilesystem:\n  write: [dangling]\n", &p, &d), -EINVAL);
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 3, 11, "passes through the symbolic link"));
	done(p, &d);
	assert_int_equal(unlink(lp), 0);
}

/* A root link in a folder others can write to could be replaced; in a sticky one it cannot. */
static void test_symlink_open_folder(void **state)
{
	struct wd_policy *p;
	struct policy_diags d;
	char dp[PATH_MAX + 64];

	(void)state;
	need_root();
	mk("proj/open", true);
	ln("proj/src", "proj/open/l");
	path_of(dp, sizeof(dp), "proj/open");
	assert_int_equal(chmod(dp, 0777), 0);
	assert_int_equal(check("version: 1\nfilesystem:\n  read: [open/l]\n", &p, &d), -EINVAL);
	assert_true(
	    has_diag(&d, POLICY_DIAG_ERROR, 3, 10, "in a folder others than root can change"));
	done(p, &d);
	assert_int_equal(chmod(dp, 01777), 0);
	assert_int_equal(check("version: 1\nfilesystem:\n  read: [open/l]\n", &p, &d), 0);
	expect_real(&p->read[0], "proj/src");
	done(p, &d);
	/* a link to a link: each is checked */
	ln("proj/open/l", "proj/l2");
	assert_int_equal(chmod(dp, 0777), 0);
	assert_int_equal(check("version: 1\nfilesystem:\n  read: [l2]\n", &p, &d), -EINVAL);
	done(p, &d);
}

/* What the caller protects (the audit log, the run state) no grant exposes. */
static void test_protected(void **state)
{
	struct wd_policy *p;
	struct policy_diags d;
	char logf[PATH_MAX + 64], flat[PATH_MAX + 64], state_dir[PATH_MAX + 64];
	char want[PATH_MAX + 64];
	struct policy_protect prot[3];
	struct policy_ctx ctx = {.protect = prot, .nprotect = 3};
	int ret;

	(void)state;
	ctx.home = home;
	mk("proj/log", true);
	mk("proj/state", true);
	path_of(logf, sizeof(logf), "proj/log/audit.jsonl");
	path_of(flat, sizeof(flat), "home/docs/flat.jsonl");
	path_of(state_dir, sizeof(state_dir), "proj/state");
	prot[0] = (struct policy_protect){logf, "the audit log", false};
	prot[1] = (struct policy_protect){flat, "the other log", false};
	prot[2] = (struct policy_protect){state_dir, "the run state", true};
#define CHECK_CTX(yaml)                                                                            \
	(policy_diags_init(&d), p = NULL,                                                          \
	 assert_int_equal(policy_parse(yaml, strlen(yaml), file, &p, &d), 0),                      \
	 policy_validate(p, &ctx, &d))
	/* a read grant that holds the log's folder: the folder is hidden */
	ret = CHECK_CTX("version: 1\nfilesystem:\n  read: [.]\n");
	assert_int_equal(ret, 0);
	path_of(want, sizeof(want), "proj/log");
	assert_int_equal(p->nmask, 2);
	assert_string_equal(p->mask[0], want);
	assert_string_equal(p->mask[1], state_dir);
	assert_true(has_diag(&d, POLICY_DIAG_WARNING, 3, 10, "will be hidden"));
	done(p, &d);
	/* a read grant that is the log's folder: the file alone (which need not exist yet) */
	ret = CHECK_CTX("version: 1\nfilesystem:\n  read: [~/docs]\n");
	assert_int_equal(ret, 0);
	assert_int_equal(p->nmask, 1);
	assert_string_equal(p->mask[0], flat);
	done(p, &d);
	/* a write grant that holds it, a grant inside it: refused */
	ret = CHECK_CTX("version: 1\nfilesystem:\n  write: [.]\n");
	assert_int_equal(ret, -EINVAL);
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 3, 11, "holds the audit log"));
	done(p, &d);
	ret = CHECK_CTX("version: 1\nfilesystem:\n  read: [state]\n");
	assert_int_equal(ret, -EINVAL);
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 3, 10, "lies in the run state"));
	done(p, &d);
	ret = CHECK_CTX("version: 1\nfilesystem:\n  write: [log/audit.jsonl]\n");
	assert_int_equal(ret, -EINVAL);
	done(p, &d);
	/* a neighbour folder of the log is fine */
	ret = CHECK_CTX("version: 1\nfilesystem:\n  write: [src]\n");
	assert_int_equal(ret, 0);
	assert_int_equal(p->nmask, 0);
	done(p, &d);
#undef CHECK_CTX
}

static void test_missing_read(void **state)
{
	struct wd_policy *p;
	struct policy_diags d;

	(void)state;
	assert_int_equal(check("version: 1\nfilesystem:\n  read: [., nope]\n", &p, &d), -EINVAL);
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 3, 13, "does not exist"));
	assert_false(p->validated);
	done(p, &d);
}

static void test_missing_write(void **state)
{
	struct wd_policy *p;
	struct policy_diags d;

	(void)state;
	assert_int_equal(check("version: 1\nfilesystem:\n  write: [out]\n", &p, &d), 0);
	assert_true(p->write[0].missing);
	expect_real(&p->write[0], "proj/out");
	assert_true(has_diag(&d, POLICY_DIAG_WARNING, 3, 11, "will be created"));
	done(p, &d);
	assert_int_equal(check("version: 1\nfilesystem:\n  write: [nope/out]\n", &p, &d), -EINVAL);
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 3, 11, "neither does its parent"));
	done(p, &d);
}

/* What a missing write grant is made as, said by policy check (issue 27 item 2) */
static void test_missing_kinds(void **state)
{
	struct wd_policy *p;
	struct policy_diags d;
	struct wd_buf b = WD_BUF_INIT;
	char path[PATH_MAX + 64];

	(void)state;
	assert_int_equal(check("version: 1\nfilesystem:\n  write:\n    - out/result.txt\n"
			       "    - {path: out/data, type: file}\n    - out/made/\n"
			       "    - {path: out/d.2, type: dir}\n    - out/plain\n",
			       &p, &d),
			 -EINVAL);
	/* out/ does not exist: none of them may be made */
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 4, 7, "neither does its parent"));
	done(p, &d);
	mk("proj/out", true);
	assert_int_equal(check("version: 1\nfilesystem:\n  write:\n    - out/result.txt\n"
			       "    - {path: out/data, type: file}\n    - out/made/\n"
			       "    - {path: out/d.2, type: dir}\n    - out/plain\n",
			       &p, &d),
			 0);
	for (size_t i = 0; i < 5; i++)
		assert_true(p->write[i].missing);
	assert_true(p->write[0].make_file);
	assert_true(p->write[1].make_file);
	assert_false(p->write[2].make_file);
	assert_false(p->write[3].make_file);
	assert_false(p->write[4].make_file);
	expect_real(&p->write[2], "proj/out/made");
	assert_true(has_diag(&d, POLICY_DIAG_WARNING, 4, 7, "will be created as an empty file"));
	assert_true(has_diag(&d, POLICY_DIAG_WARNING, 5, 14, "will be created as an empty file"));
	assert_true(has_diag(&d, POLICY_DIAG_WARNING, 6, 7, "will be created as an empty folder"));
	assert_true(has_diag(&d, POLICY_DIAG_WARNING, 7, 14, "will be created as an empty folder"));
	/* the ambiguous one: a folder, and the two spellings */
	assert_true(
	    has_diag(&d, POLICY_DIAG_WARNING, 8, 7,
		     "write `out/plain/` for a folder or { path: \"out/plain\", type: file }"));
	assert_int_equal(d.warnings, 5);
	/* the rendered policy says what each is made as (its real path lost the `/`) */
	assert_int_equal(policy_render_yaml(p, &b), 0);
	assert_non_null(strstr(wd_buf_cstr(&b), "/proj/out/result.txt\", type: file }"));
	assert_non_null(strstr(wd_buf_cstr(&b), "/proj/out/made\", type: dir }"));
	assert_non_null(strstr(wd_buf_cstr(&b), "/proj/out/plain\", type: dir }"));
	wd_buf_free(&b);
	done(p, &d);
	/* an existing path must be what the grant says */
	mk("proj/out/file.txt", false);
	mk("proj/out/dir", true);
	assert_int_equal(
	    check("version: 1\nfilesystem:\n  read:\n    - {path: out/dir, type: file}\n"
		  "    - {path: out/file.txt, type: dir}\n    - out/file.txt/\n"
		  "    - {path: out/file.txt, type: file}\n    - out/dir/\n",
		  &p, &d),
	    -EINVAL);
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 4, 14, "is not a regular file"));
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 5, 14, "is not a folder"));
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 6, 7, "trailing `/`"));
	assert_int_equal(d.errors, 3);
	done(p, &d);
	path_of(path, sizeof(path), "proj/out/file.txt");
	assert_int_equal(unlink(path), 0);
	path_of(path, sizeof(path), "proj/out/dir");
	assert_int_equal(rmdir(path), 0);
	path_of(path, sizeof(path), "proj/out");
	assert_int_equal(rmdir(path), 0);
}

/* The rule itself: type: decides, then a trailing `/`, then `name.ext` */
static void test_make_file_rule(void **state)
{
	static const struct {
		const char *path;
		enum policy_grant_type type;
		bool file, sure;
	} cases[] = {
	    {"out/result.txt", POLICY_GRANT_ANY, true, true},
	    {"memory.jsonl", POLICY_GRANT_ANY, true, true},
	    {"/abs/.env.local", POLICY_GRANT_ANY, true, true},
	    {"out/v1.2/", POLICY_GRANT_ANY, false, true},
	    {"out/result.txt", POLICY_GRANT_DIR, false, true},
	    {"out/data", POLICY_GRANT_FILE, true, true},
	    {"./out", POLICY_GRANT_ANY, false, false},
	    {"out/.cache", POLICY_GRANT_ANY, false, false},
	    {"out/name.", POLICY_GRANT_ANY, false, false},
	    {"..", POLICY_GRANT_ANY, false, false},
	};
	bool sure;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool is_file = policy_grant_make_file(cases[i].path, cases[i].type, &sure);

		if (is_file != cases[i].file || sure != cases[i].sure)
			fail_msg("%s: file %d sure %d", cases[i].path, is_file, sure);
	}
}

static void test_root_refused(void **state)
{
	struct wd_policy *p;
	struct policy_diags d;

	(void)state;
	assert_int_equal(check("version: 1\nfilesystem:\n  read: [/, \"/..\", ../../../../../../..]"
			       "\n",
			       &p, &d),
			 -EINVAL);
	assert_int_equal(d.errors, 3);
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 3, 10, "whole filesystem"));
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 3, 13, "whole filesystem"));
	done(p, &d);
}

static void test_runtime_base_write(void **state)
{
	struct wd_policy *p;
	struct policy_diags d;

	(void)state;
	assert_int_equal(check("version: 1\nfilesystem:\n  read: [/usr, /etc/ssl]\n"
			       "  write: [/usr, /usr/share, /etc, /lib/x]\n",
			       &p, &d),
			 -EINVAL);
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 4, 11, "runtime base /usr"));
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 4, 17, "runtime base /usr"));
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 4, 29, "runtime base /etc"));
	/* /lib/x does not exist: its parent does, so it is checked as /lib/x */
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 4, 35, "runtime base /"));
	assert_int_equal(d.errors, 4);
	assert_int_equal(d.warnings, 0);
	done(p, &d);
}

static void test_store_refused(void **state)
{
	struct wd_policy *p;
	struct policy_diags d;

	(void)state;
	assert_int_equal(
	    check("version: 1\nfilesystem:\n  read:\n    - ~/.ssh\n"
		  "    - ~/.ssh/id_ed25519\n    - sshlink\n    - awslink\n    - ~/.aws\n",
		  &p, &d),
	    -EINVAL);
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 4, 7, "credential store ~/.ssh"));
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 5, 7, "credential store ~/.ssh"));
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 6, 7, "credential store ~/.ssh"));
	assert_true(has_diag(&d, POLICY_DIAG_WARNING, 6, 7, "symbolic link"));
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 7, 7, "credential store ~/.aws"));
	assert_true(has_diag(&d, POLICY_DIAG_ERROR, 8, 7, "credential store ~/.aws"));
	assert_int_equal(d.errors, 5);
	done(p, &d);
}

static void test_store_sensitive(void **state)
{
	struct wd_policy *p;
	struct policy_diags d;

	(void)state;
	assert_int_equal(check("version: 1\nfilesystem:\n  read: [{path: ~/.ssh, sensitive: true},"
			       " {path: \"~\", sensitive: true}]\n",
			       &p, &d),
			 0);
	expect_real(&p->read[0], "home/.ssh");
	expect_real(&p->read[1], "home");
	assert_int_equal(p->nmask, 0);
	assert_int_equal(d.n, 0);
	done(p, &d);
}

static void test_home_masks_stores(void **state)
{
	struct wd_policy *p;
	struct policy_diags d;
	char ssh[PATH_MAX + 64], aws[PATH_MAX + 64];

	(void)state;
	assert_int_equal(check("version: 1\nfilesystem:\n  read: [~]\n  write: [\"~/\"]\n", &p, &d),
			 0);
	path_of(ssh, sizeof(ssh), "home/.ssh");
	path_of(aws, sizeof(aws), "awsreal");
	assert_int_equal(p->nmask, 2);
	assert_string_equal(p->mask[0], ssh);
	assert_string_equal(p->mask[1], aws);
	/* one warning per grant, listing the stores it hides (issue 27 item 8) */
	assert_true(has_diag(&d, POLICY_DIAG_WARNING, 3, 10,
			     "contains 2 credential stores, which will be hidden in the sandbox: "
			     "~/.ssh, ~/.aws ("));
	assert_true(
	    has_diag(&d, POLICY_DIAG_WARNING, 4, 11, "hidden in the sandbox: ~/.ssh, ~/.aws"));
	/* ~/.gnupg does not exist: nothing to mask, but writing ~ could create it: one more */
	assert_true(has_diag(&d, POLICY_DIAG_WARNING, 4, 11, "the program could create them: "));
	assert_true(has_diag(&d, POLICY_DIAG_WARNING, 4, 11, "~/.gnupg, "));
	assert_false(has_diag(&d, POLICY_DIAG_WARNING, 3, 10, "could create"));
	assert_int_equal(d.errors, 0);
	assert_int_equal(d.warnings, 3);
	done(p, &d);
}

/* A home (its own: home2) with every store of the table: still one warning per grant, which
 * fits its line ("and N more" when the names do not) */
static void test_home_one_warning(void **state)
{
	struct wd_policy *p;
	struct policy_diags d;
	const char *const *cs;
	char path[256], full[PATH_MAX + 512], was[sizeof(home)];
	size_t n, made = 0;

	(void)state;
	snprintf(was, sizeof(was), "%s", home);
	snprintf(home, sizeof(home), "%s/home2", root);
	mk("home2", true);
	cs = policy_credential_stores(&n);
	for (size_t i = 0; i < n; i++) {
		char *slash;

		if (strncmp(cs[i], "~/", 2))
			continue;
		snprintf(path, sizeof(path), "home2/%s", cs[i] + 2);
		/* the folders on the way (~/.config, ~/.local/share/fish ...) */
		for (slash = strchr(path + 6, '/'); slash; slash = strchr(slash + 1, '/')) {
			*slash = '\0';
			path_of(full, sizeof(full), path);
			assert_true(mkdir(full, 0700) == 0 || errno == EEXIST);
			*slash = '/';
		}
		mk(path, false);
		made++;
	}
	assert_int_equal(check("version: 1\nfilesystem:\n  read: [~]\n", &p, &d), 0);
	assert_int_equal(d.warnings, 1);
	assert_int_equal(p->nmask, made);
	assert_true(has_diag(&d, POLICY_DIAG_WARNING, 3, 10, "credential stores, which will be"));
	assert_true(has_diag(&d, POLICY_DIAG_WARNING, 3, 10, ": ~/.ssh, ~/.gnupg, ~/.aws, "));
	assert_true(has_diag(&d, POLICY_DIAG_WARNING, 3, 10, "~/.claude.json"));
	assert_true(has_diag(&d, POLICY_DIAG_WARNING, 3, 10, " more ("));
	done(p, &d);
	/* a sensitive grant opts ~/.claude back in: not hidden, and the others still are */
	assert_int_equal(check("version: 1\nfilesystem:\n  read: [~, {path: ~/.claude, "
			       "sensitive: true}]\n",
			       &p, &d),
			 0);
	assert_int_equal(p->nmask, made - 1);
	path_of(full, sizeof(full), "home2/.claude");
	for (size_t i = 0; i < p->nmask; i++)
		assert_string_not_equal(p->mask[i], full);
	assert_int_equal(d.errors, 0);
	done(p, &d);
	/* ... and opting in the whole home hides none */
	assert_int_equal(
	    check("version: 1\nfilesystem:\n  read: [~, {path: ~/, sensitive: true}]\n", &p, &d),
	    0);
	assert_int_equal(p->nmask, 0);
	done(p, &d);
	snprintf(home, sizeof(home), "%s", was);
}

static void test_store_link_target_masked(void **state)
{
	struct wd_policy *p;
	struct policy_diags d;

	(void)state;
	/* the root folder holds awsreal, the real ~/.aws: masked, not refused */
	snprintf(file, sizeof(file), "%s/policy.yaml", root);
	assert_int_equal(check("version: 1\nfilesystem:\n  read: [.]\n", &p, &d), 0);
	snprintf(file, sizeof(file), "%s/policy.yaml", proj);
	assert_int_equal(p->nmask, 2);
	done(p, &d);
}

static void test_etc_masks_shadow(void **state)
{
	struct wd_policy *p;
	struct policy_diags d;
	bool found = false;

	(void)state;
	if (access("/etc/shadow", F_OK)) {
		skip();
		return;
	}
	assert_int_equal(check("version: 1\nfilesystem:\n  read: [/etc]\n", &p, &d), 0);
	for (size_t i = 0; i < p->nmask; i++)
		found |= !strcmp(p->mask[i], "/etc/shadow");
	assert_true(found);
	assert_true(has_diag(&d, POLICY_DIAG_WARNING, 3, 10, "/etc/shadow"));
	done(p, &d);
}

static void test_home_env_warning(void **state)
{
	struct wd_policy *p;
	struct policy_diags d;

	(void)state;
	assert_int_equal(check("version: 1\nfilesystem:\n  read: [{path: \"~\", sensitive: true}, "
			       "~/docs]\nenv: {allow: [HOME]}\n",
			       &p, &d),
			 0);
	assert_true(has_diag(&d, POLICY_DIAG_WARNING, 3, 17, "passes HOME"));
	assert_int_equal(d.warnings, 1);
	done(p, &d);
}

static void test_home_from_env(void **state)
{
	struct wd_policy *p = NULL;
	struct policy_diags d;
	const char *yaml = "version: 1\nfilesystem:\n  read: [~/docs]\n";
	const char *was = getenv("HOME");
	char *old = was ? strdup(was) : NULL;

	(void)state;
	setenv("HOME", home, 1);
	policy_diags_init(&d);
	assert_int_equal(policy_parse(yaml, strlen(yaml), file, &p, &d), 0);
	assert_int_equal(policy_validate(p, NULL, &d), 0);
	expect_real(&p->read[0], "home/docs");
	if (old)
		setenv("HOME", old, 1);
	else
		unsetenv("HOME");
	free(old);
	done(p, &d);
}

static void test_revalidate(void **state)
{
	struct wd_policy *p;
	struct policy_diags d;

	(void)state;
	assert_int_equal(check("version: 1\nfilesystem:\n  read: [\"~\"]\n", &p, &d), 0);
	assert_int_equal(policy_validate(p, &(struct policy_ctx){.home = home}, &d), 0);
	assert_int_equal(p->nmask, 2);
	done(p, &d);
}

static void test_load_file(void **state)
{
	static const char yaml[] = "version: 1\nfilesystem:\n  read: [src]\n  write: [out]\n";
	struct wd_policy *p = NULL;
	struct policy_diags d;
	struct wd_buf b = WD_BUF_INIT;
	char want[PATH_MAX * 4];
	FILE *f = fopen(file, "we");

	(void)state;
	assert_non_null(f);
	assert_int_equal(fwrite(yaml, 1, sizeof(yaml) - 1, f), sizeof(yaml) - 1);
	fclose(f);
	policy_diags_init(&d);
	assert_int_equal(policy_load(file, &(struct policy_ctx){.home = home}, &p, &d), 0);
	assert_true(p->validated);
	assert_int_equal(policy_render_yaml(p, &b), 0);
	snprintf(want, sizeof(want),
		 "  read:\n    - \"%s/src\"\n  write:\n    - { path: \"%s/out\", type: dir }\n",
		 proj, proj);
	assert_non_null(strstr(wd_buf_cstr(&b), want));
	unlink(file);
	wd_buf_free(&b);
	done(p, &d);
	policy_diags_init(&d);
	p = NULL;
	assert_int_equal(policy_load(file, &(struct policy_ctx){.home = home}, &p, &d), -ENOENT);
	assert_null(p);
	assert_int_equal(d.errors, 1);
	assert_non_null(strstr(d.v[0].msg, "cannot read the policy"));
	policy_diags_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_relative_dot),
	    cmocka_unit_test(test_symlink_warns),
	    cmocka_unit_test(test_symlink_untrusted_owner),
	    cmocka_unit_test(test_symlink_open_folder),
	    cmocka_unit_test(test_protected),
	    cmocka_unit_test(test_missing_read),
	    cmocka_unit_test(test_missing_write),
	    cmocka_unit_test(test_root_refused),
	    cmocka_unit_test(test_runtime_base_write),
	    cmocka_unit_test(test_store_refused),
	    cmocka_unit_test(test_store_sensitive),
	    cmocka_unit_test(test_home_masks_stores),
	    cmocka_unit_test(test_home_one_warning),
	    cmocka_unit_test(test_missing_kinds),
	    cmocka_unit_test(test_make_file_rule),
	    cmocka_unit_test(test_store_link_target_masked),
	    cmocka_unit_test(test_etc_masks_shadow),
	    cmocka_unit_test(test_home_env_warning),
	    cmocka_unit_test(test_home_from_env),
	    cmocka_unit_test(test_revalidate),
	    cmocka_unit_test(test_load_file),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}

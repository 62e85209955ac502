/* test_launcher_outdir.c - the folder of an end-of-run file (outdir.c): opened before the
 * program runs, never through a link, its missing folders made 0700; the file written only
 * when the path still leads to that folder (a folder swapped for a link, or moved, is -ESTALE
 * and nothing lands behind the link); a new file renamed onto the name (a planted link or file
 * replaced, never followed nor opened), linked when it must not replace, suffixed when taken;
 * as root for another user, that user's identity (a folder they may not write is refused, the
 * file is theirs). */
#include "run/outdir.h"

#include <errno.h>
#include <fcntl.h>
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

static const struct outdir_who self = {0};

/* the text of @dir/@name, or "" */
static const char *slurp(const char *dir, const char *name)
{
	static char buf[256];
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	buf[0] = '\0';
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return buf;
	n = read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
	return buf;
}

static void cleanup(const char *base)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	assert_int_equal(system(cmd), 0);
}

static void test_make_and_suffix(void **state)
{
	char base[] = "/tmp/wd-outdir.XXXXXX", dir[256], p[PATH_MAX], got[NAME_MAX + 1];
	struct outdir d;
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(base));
	snprintf(dir, sizeof(dir), "%s/state/warden/traces", base);
	assert_int_equal(outdir_open(&d, dir, true, &self), 0);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	snprintf(p, sizeof(p), "%s/state/warden", base);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(
	    outdir_write(&d, "t-node.jsonl", OUTDIR_SUFFIX, 0600, "one\n", 4, got, sizeof(got)), 0);
	assert_string_equal(got, "t-node.jsonl");
	assert_string_equal(slurp(dir, got), "one\n");
	snprintf(p, sizeof(p), "%s/t-node.jsonl", dir);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	/* taken: a suffix; a link planted as the next name is skipped, never followed */
	snprintf(p, sizeof(p), "%s/t-node-2.jsonl", dir);
	assert_int_equal(symlink("/etc/passwd", p), 0);
	assert_int_equal(
	    outdir_write(&d, "t-node.jsonl", OUTDIR_SUFFIX, 0600, "two\n", 4, got, sizeof(got)), 0);
	assert_string_equal(got, "t-node-3.jsonl");
	assert_string_equal(slurp(dir, got), "two\n");
	/* a name that is not one component */
	assert_int_equal(outdir_write(&d, "../x", OUTDIR_SUFFIX, 0600, "", 0, NULL, 0), -EINVAL);
	assert_int_equal(outdir_write(&d, "..", OUTDIR_REPLACE, 0600, "", 0, NULL, 0), -EINVAL);
	outdir_close(&d);
	outdir_close(&d);
	cleanup(base);
}

static void test_links_on_the_way(void **state)
{
	char base[] = "/tmp/wd-outdir.XXXXXX", real[256], link[256], p[PATH_MAX];
	struct outdir d;

	(void)state;
	assert_non_null(mkdtemp(base));
	snprintf(real, sizeof(real), "%s/real", base);
	snprintf(link, sizeof(link), "%s/link", base);
	assert_int_equal(mkdir(real, 0700), 0);
	assert_int_equal(symlink(real, link), 0);
	assert_int_equal(outdir_open(&d, link, false, &self), -ELOOP);
	assert_int_equal(d.dfd, -1);
	snprintf(p, sizeof(p), "%s/sub", link);
	assert_int_equal(outdir_open(&d, p, true, &self), -ELOOP);
	snprintf(p, sizeof(p), "%s/sub", real);
	assert_int_equal(access(p, F_OK), -1); /* nothing made behind the link */
	snprintf(p, sizeof(p), "%s/../real", base);
	assert_int_equal(outdir_open(&d, p, false, &self), -EINVAL);
	assert_int_equal(outdir_open(&d, "relative/dir", false, &self), -EINVAL);
	snprintf(p, sizeof(p), "%s/missing", base);
	assert_int_equal(outdir_open(&d, p, false, &self), -ENOENT);
	cleanup(base);
}

static void test_swapped_folder(void **state)
{
	char base[] = "/tmp/wd-outdir.XXXXXX", out[256], orig[256], victim[256], p[PATH_MAX];
	struct outdir d;

	(void)state;
	assert_non_null(mkdtemp(base));
	snprintf(out, sizeof(out), "%s/out", base);
	snprintf(orig, sizeof(orig), "%s/out.orig", base);
	snprintf(victim, sizeof(victim), "%s/victim", base);
	assert_int_equal(mkdir(out, 0755), 0);
	assert_int_equal(mkdir(victim, 0700), 0);
	snprintf(p, sizeof(p), "%s/t.jsonl", victim);
	{
		FILE *f = fopen(p, "w");

		assert_non_null(f);
		fputs("victim's", f);
		fclose(f);
	}
	/* control: unswapped, written */
	assert_int_equal(outdir_open(&d, out, false, &self), 0);
	assert_int_equal(outdir_write(&d, "t.jsonl", OUTDIR_REPLACE, 0600, "trace\n", 6, NULL, 0),
			 0);
	assert_string_equal(slurp(out, "t.jsonl"), "trace\n");
	/* swapped for a link: nothing written, behind it or in the moved folder */
	assert_int_equal(rename(out, orig), 0);
	assert_int_equal(symlink(victim, out), 0);
	assert_int_equal(outdir_write(&d, "t.jsonl", OUTDIR_REPLACE, 0600, "new\n", 4, NULL, 0),
			 -ESTALE);
	assert_int_equal(outdir_write(&d, "u.jsonl", OUTDIR_SUFFIX, 0600, "new\n", 4, NULL, 0),
			 -ESTALE);
	assert_string_equal(slurp(victim, "t.jsonl"), "victim's");
	snprintf(p, sizeof(p), "%s/u.jsonl", victim);
	assert_int_equal(access(p, F_OK), -1);
	assert_string_equal(slurp(orig, "t.jsonl"), "trace\n");
	/* swapped for another folder (no link): the same */
	assert_int_equal(unlink(out), 0);
	assert_int_equal(mkdir(out, 0755), 0);
	assert_int_equal(outdir_write(&d, "t.jsonl", OUTDIR_REPLACE, 0600, "new\n", 4, NULL, 0),
			 -ESTALE);
	assert_string_equal(slurp(out, "t.jsonl"), "");
	outdir_close(&d);
	cleanup(base);
}

static void test_replace_and_keep(void **state)
{
	char base[] = "/tmp/wd-outdir.XXXXXX", victim[256], p[PATH_MAX];
	struct outdir d;
	struct stat st;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(base));
	snprintf(victim, sizeof(victim), "%s.victim", base);
	f = fopen(victim, "w");
	assert_non_null(f);
	fputs("victim's", f);
	fclose(f);
	assert_int_equal(outdir_open(&d, base, false, &self), 0);
	/* a link planted as the name: replaced by the file, its target untouched */
	snprintf(p, sizeof(p), "%s/t.jsonl", base);
	assert_int_equal(symlink(victim, p), 0);
	assert_int_equal(outdir_write(&d, "t.jsonl", OUTDIR_REPLACE, 0600, "trace\n", 6, NULL, 0),
			 0);
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_string_equal(slurp(base, "t.jsonl"), "trace\n");
	assert_string_equal(slurp("/", victim + 1), "victim's");
	/* a hard link planted as the name: replaced, the other name keeps its content */
	assert_int_equal(unlink(p), 0);
	assert_int_equal(link(victim, p), 0);
	assert_int_equal(outdir_write(&d, "t.jsonl", OUTDIR_REPLACE, 0644, "again\n", 6, NULL, 0),
			 0);
	assert_string_equal(slurp("/", victim + 1), "victim's");
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	/* keep: a taken name stays, no temporary left behind */
	assert_int_equal(outdir_write(&d, "t.jsonl", OUTDIR_KEEP, 0644, "no\n", 3, NULL, 0),
			 -EEXIST);
	assert_string_equal(slurp(base, "t.jsonl"), "again\n");
	assert_int_equal(outdir_write(&d, "p.yaml", OUTDIR_KEEP, 0644, "yes\n", 4, NULL, 0), 0);
	assert_string_equal(slurp(base, "p.yaml"), "yes\n");
	snprintf(p, sizeof(p), "ls -A '%s' | grep -c warden", base);
	assert_int_not_equal(system(p), 0); /* grep finds no temporary */
	/* a folder as the name: not replaced */
	snprintf(p, sizeof(p), "%s/dir", base);
	assert_int_equal(mkdir(p, 0700), 0);
	assert_int_equal(outdir_write(&d, "dir", OUTDIR_REPLACE, 0600, "x", 1, NULL, 0), -EISDIR);
	outdir_close(&d);
	cleanup(base);
	unlink(victim);
}

/* root for another user: the user's identity (skipped when not root) */
static void test_as_user(void **state)
{
	char base[] = "/tmp/wd-outdir.XXXXXX", ro[256], rw[256], p[PATH_MAX];
	struct outdir_who nobody = {.drop = true, .uid = 65534, .gid = 65534};
	struct outdir d;
	struct stat st;

	(void)state;
	if (geteuid() != 0)
		skip();
	assert_non_null(mkdtemp(base));
	assert_int_equal(chmod(base, 0755), 0);
	snprintf(ro, sizeof(ro), "%s/ro", base);
	snprintf(rw, sizeof(rw), "%s/rw", base);
	assert_int_equal(mkdir(ro, 0755), 0);
	assert_int_equal(mkdir(rw, 0755), 0);
	assert_int_equal(chown(rw, 65534, 65534), 0);
	/* a folder the user may not write: refused when opened, before anything runs */
	assert_int_equal(outdir_open(&d, ro, false, &nobody), -EACCES);
	assert_int_equal(d.dfd, -1);
	/* control: the user's own folder; the file is the user's */
	assert_int_equal(outdir_open(&d, rw, false, &nobody), 0);
	assert_int_equal(outdir_write(&d, "t.jsonl", OUTDIR_REPLACE, 0600, "trace\n", 6, NULL, 0),
			 0);
	snprintf(p, sizeof(p), "%s/t.jsonl", rw);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_uid, 65534);
	assert_int_equal(st.st_gid, 65534);
	/* the folder made writable by root afterwards does not make root write it: the user's
	 * write is refused once the user may not write there */
	assert_int_equal(chown(rw, 0, 0), 0);
	assert_int_equal(outdir_write(&d, "u.jsonl", OUTDIR_REPLACE, 0600, "x", 1, NULL, 0),
			 -EACCES);
	outdir_close(&d);
	cleanup(base);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_make_and_suffix), cmocka_unit_test(test_links_on_the_way),
	    cmocka_unit_test(test_swapped_folder),  cmocka_unit_test(test_replace_and_keep),
	    cmocka_unit_test(test_as_user),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

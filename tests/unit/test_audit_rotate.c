/* test_audit_rotate.c - unit tests for the audit log's rotation (issue 27, item 10): a capped
 * writer renames the file to ".1" and goes on in a new one, a second writer that still holds
 * the old file follows the path instead of writing into ".1" forever, an uncapped log never
 * rotates, audit_log_where() and audit_reader_seek() find a line again (and say when the
 * file was rotated away). */
#include "audit/audit.h"

#include <errno.h>
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
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	strcpy(f->dir, "/tmp/wd-test-rotate-XXXXXX");
	if (!mkdtemp(f->dir)) {
		free(f);
		return -1;
	}
	snprintf(f->log, sizeof(f->log), "%s/audit.jsonl", f->dir);
	snprintf(f->old, sizeof(f->old), "%s" AUDIT_ROTATED_SUFFIX, f->log);
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

/* put() - one event of @who with sequence @seq (its port) */
static void put(struct audit_log *log, const char *who, int seq)
{
	struct audit_event ev = {.run = who,
				 .type = AUDIT_TYPE_NET,
				 .action = "net.connect",
				 .resource = "a.test",
				 .allowed = false,
				 .reason = "a reason long enough to fill a small file quickly",
				 .has = AUDIT_HAS_PORT,
				 .port = seq};

	assert_int_equal(audit_log_write(log, &ev, 0, NULL), 0);
}

/* count() - events of @who in @path (every line must decode) */
static int count(const char *path, const char *who)
{
	struct audit_reader *r;
	struct audit_event ev;
	int n = 0;

	if (access(path, F_OK) < 0)
		return 0;
	assert_int_equal(audit_reader_open(path, 0, &r, NULL), 0);
	while (audit_reader_next(r, &ev) == 1) {
		n += !strcmp(ev.run, who);
		audit_event_clear(&ev);
	}
	assert_int_equal(audit_reader_skipped(r), 0);
	audit_reader_close(r);
	return n;
}

static off_t size_of(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? st.st_size : -1;
}

static void test_capped_writer_rotates(void **state)
{
	struct fixture *f = *state;
	struct audit_log *log;

	assert_int_equal(audit_log_open(f->log, &log, NULL), 0);
	audit_log_set_max(log, 4096);
	for (int i = 0; i < 200; i++)
		put(log, "a", i);
	audit_log_close(log);
	/* nothing lost but what the one older file allows, both within the cap */
	assert_true(size_of(f->log) > 0 && size_of(f->log) <= 4096);
	assert_true(size_of(f->old) > 0 && size_of(f->old) <= 4096);
	assert_true(count(f->log, "a") + count(f->old, "a") < 200);
	assert_true(count(f->log, "a") > 0);
}

static void test_uncapped_never_rotates(void **state)
{
	struct fixture *f = *state;
	struct audit_log *log;

	assert_int_equal(audit_log_open(f->log, &log, NULL), 0);
	audit_log_set_max(log, 0);
	for (int i = 0; i < 200; i++)
		put(log, "a", i);
	audit_log_close(log);
	assert_int_equal(count(f->log, "a"), 200);
	assert_int_equal(access(f->old, F_OK), -1);
}

/* The second writer opened the file before the first one rotated it: its next lines go to
 * the new file at the path, not to ".1" (it would keep appending there forever). */
static void test_second_writer_follows(void **state)
{
	struct fixture *f = *state;
	struct audit_log *a, *b;
	struct stat st;

	assert_int_equal(audit_log_open(f->log, &a, NULL), 0);
	assert_int_equal(audit_log_open(f->log, &b, NULL), 0); /* no cap of its own */
	audit_log_set_max(a, 2048);
	put(b, "b", 0);
	for (int i = 0; access(f->old, F_OK) < 0 && i < 100; i++)
		put(a, "a", i);
	assert_int_equal(access(f->old, F_OK), 0); /* control: a rotated */
	assert_int_equal(count(f->old, "b"), 1);   /* b's first line went with the old file */
	for (int i = 1; i <= 5; i++)
		put(b, "b", i);
	assert_int_equal(count(f->log, "b"), 5);
	assert_int_equal(count(f->old, "b"), 1);
	/* and the new file is as private as the first */
	assert_int_equal(stat(f->log, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	audit_log_close(a);
	audit_log_close(b);
}

/* A writer whose file was removed under it opens the path again. */
static void test_writer_follows_removal(void **state)
{
	struct fixture *f = *state;
	struct audit_log *a;

	assert_int_equal(audit_log_open(f->log, &a, NULL), 0);
	put(a, "a", 0);
	assert_int_equal(unlink(f->log), 0);
	put(a, "a", 1);
	assert_int_equal(count(f->log, "a"), 1);
	audit_log_close(a);
}

static void test_where_and_seek(void **state)
{
	struct fixture *f = *state;
	struct audit_log_pos pos;
	struct audit_reader *r;
	struct audit_event ev;
	struct audit_log *log;

	assert_int_equal(audit_log_open(f->log, &log, NULL), 0);
	assert_int_equal(audit_log_where(log, &pos), -ENODATA);
	put(log, "before", 0);
	assert_int_equal(audit_log_where(log, &pos), 0);
	put(log, "after", 1);
	assert_int_equal(audit_reader_open(f->log, 0, &r, NULL), 0);
	assert_int_equal(audit_reader_seek(r, &pos), 0);
	assert_int_equal(audit_reader_next(r, &ev), 1);
	assert_string_equal(ev.run, "after");
	audit_event_clear(&ev);
	assert_int_equal(audit_reader_next(r, &ev), 0);
	audit_reader_close(r);
	/* rotated away: the reader of the path says so; the ".1" file is the one */
	audit_log_set_max(log, 1);
	put(log, "next", 2);
	assert_int_equal(audit_reader_open(f->log, 0, &r, NULL), 0);
	assert_int_equal(audit_reader_seek(r, &pos), -ESTALE);
	audit_reader_close(r);
	assert_int_equal(audit_reader_open(f->old, 0, &r, NULL), 0);
	assert_int_equal(audit_reader_seek(r, &pos), 0);
	assert_int_equal(audit_reader_next(r, &ev), 1);
	assert_string_equal(ev.run, "after");
	audit_event_clear(&ev);
	audit_reader_close(r);
	audit_log_close(log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_capped_writer_rotates, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_uncapped_never_rotates, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_second_writer_follows, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_writer_follows_removal, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_where_and_seek, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

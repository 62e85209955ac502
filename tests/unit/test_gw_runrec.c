/* test_gw_runrec.c - unit tests for the privileged parent's crash record (gateway/runrec.c):
 * a record read back is the record written (through the text and through a file), and a record
 * that is not whole and well-formed is refused as a whole: the output is untouched, nothing of it
 * is taken. */
#include "gateway/runrec.h"

#include <arpa/inet.h>
#include <errno.h>
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

static void sample(struct gw_runrec *r)
{
	memset(r, 0, sizeof(*r));
	r->pid = 4242;
	r->start = 1234567890123ULL;
	snprintf(r->ifname, sizeof(r->ifname), "wd-d0000001");
	inet_pton(AF_INET, "10.207.0.2", &r->sbx4);
	inet_pton(AF_INET, "10.207.0.1", &r->gw4);
	inet_pton(AF_INET6, "fd00:7761:7264::2", &r->sbx6);
	inet_pton(AF_INET6, "fd00:7761:7264::1", &r->gw6);
	snprintf(r->cg[0], sizeof(r->cg[0]), "/sys/fs/cgroup/memory/warden-d0000001");
	snprintf(r->cg[2], sizeof(r->cg[2]), "/sys/fs/cgroup/cpu/warden-d0000001");
}

static const char good[] = "4242 1234567890123 wd-d0000001 10.207.0.2 10.207.0.1 "
			   "fd00:7761:7264::2 fd00:7761:7264::1\n"
			   "/sys/fs/cgroup/memory/warden-d0000001\n"
			   "-\n"
			   "/sys/fs/cgroup/cpu/warden-d0000001\n";

static void test_round_trip(void **state)
{
	struct wd_buf b = WD_BUF_INIT;
	struct gw_runrec r, back;

	(void)state;
	sample(&r);
	assert_int_equal(gw_runrec_format(&r, &b), 0);
	assert_int_equal(b.len, strlen(good));
	assert_memory_equal(b.data, good, b.len); /* the documented format, to the byte */
	memset(&back, 0x5a, sizeof(back));
	assert_int_equal(gw_runrec_parse(b.data, b.len, &back), 0);
	assert_memory_equal(&back, &r, sizeof(r));
	wd_buf_free(&b);
}

static void test_file_round_trip(void **state)
{
	char dir[] = "/tmp/test_gw_runrec.XXXXXX", path[128], other[128];
	struct gw_runrec r, back;
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	sample(&r);
	assert_int_equal(gw_runrec_save(dir, &r), 0);
	snprintf(path, sizeof(path), "%s/%s", dir, r.ifname);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(gw_runrec_load(dir, r.ifname, &back), 0);
	assert_memory_equal(&back, &r, sizeof(r));
	/* the same record under another file name is not that run's */
	snprintf(other, sizeof(other), "%s/wd-other", dir);
	assert_int_equal(rename(path, other), 0);
	memset(&back, 0x5a, sizeof(back));
	assert_int_equal(gw_runrec_load(dir, "wd-other", &back), -EINVAL);
	assert_int_equal(gw_runrec_load(dir, r.ifname, &back), -ENOENT);
	unlink(other);
	assert_int_equal(rmdir(dir), 0); /* no temporary file was left */
}

static void test_refused(void **state)
{
	static const char *const bad[] = {
	    "",
	    /* cut short: the last cgroup line, its newline, the whole cgroup block */
	    "4242 1234567890123 wd-d0000001 10.207.0.2 10.207.0.1 fd00:7761:7264::2 "
	    "fd00:7761:7264::1\n/sys/fs/cgroup/memory/warden-d0000001\n-\n",
	    "4242 1234567890123 wd-d0000001 10.207.0.2 10.207.0.1 fd00:7761:7264::2 "
	    "fd00:7761:7264::1\n/sys/fs/cgroup/memory/warden-d0000001\n-\n-",
	    "4242 1234567890123 wd-d0000001 10.207.0.2 10.207.0.1 fd00:7761:7264::2 "
	    "fd00:7761:7264::1\n",
	    "4242 1234567890123 wd-d0000001 10.207.0.2 10.207.0.1 fd00:7761:7264::2 "
	    "fd00:7761:7264::1",
	    /* a line too many */
	    "4242 1234567890123 wd-d0000001 10.207.0.2 10.207.0.1 fd00:7761:7264::2 "
	    "fd00:7761:7264::1\n-\n-\n-\n-\n",
	    /* a bad address (the old reader applied the rest of such a record) */
	    "4242 1234567890123 wd-d0000001 10.207.0.999 10.207.0.1 fd00:7761:7264::2 "
	    "fd00:7761:7264::1\n-\n-\n-\n",
	    "4242 1234567890123 wd-d0000001 10.207.0.2 10.207.0.1 fd00:7761:7264::2 "
	    "10.207.0.1\n-\n-\n-\n",
	    /* a field missing, one too many, two spaces, a trailing space */
	    "4242 1234567890123 wd-d0000001 10.207.0.2 10.207.0.1 fd00:7761:7264::2\n-\n-\n-\n",
	    "4242 1234567890123 wd-d0000001 10.207.0.2 10.207.0.1 fd00:7761:7264::2 "
	    "fd00:7761:7264::1 x\n-\n-\n-\n",
	    "4242  1234567890123 wd-d0000001 10.207.0.2 10.207.0.1 fd00:7761:7264::2 "
	    "fd00:7761:7264::1\n-\n-\n-\n",
	    "4242 1234567890123 wd-d0000001 10.207.0.2 10.207.0.1 fd00:7761:7264::2 "
	    "fd00:7761:7264::1 \n-\n-\n-\n",
	    /* bad numbers: pid 0, a sign, not a number, too big */
	    "0 1234567890123 wd-d0000001 10.207.0.2 10.207.0.1 fd00:7761:7264::2 "
	    "fd00:7761:7264::1\n-\n-\n-\n",
	    "-1 1234567890123 wd-d0000001 10.207.0.2 10.207.0.1 fd00:7761:7264::2 "
	    "fd00:7761:7264::1\n-\n-\n-\n",
	    "4242 12x wd-d0000001 10.207.0.2 10.207.0.1 fd00:7761:7264::2 "
	    "fd00:7761:7264::1\n-\n-\n-\n",
	    "4242 99999999999999999999999 wd-d0000001 10.207.0.2 10.207.0.1 fd00:7761:7264::2 "
	    "fd00:7761:7264::1\n-\n-\n-\n",
	    /* interface names: too long, a slash, ".." */
	    "4242 1 wd-0123456789abcd 10.207.0.2 10.207.0.1 fd00:7761:7264::2 "
	    "fd00:7761:7264::1\n-\n-\n-\n",
	    "4242 1 wd/x 10.207.0.2 10.207.0.1 fd00:7761:7264::2 fd00:7761:7264::1\n-\n-\n-\n",
	    "4242 1 .. 10.207.0.2 10.207.0.1 fd00:7761:7264::2 fd00:7761:7264::1\n-\n-\n-\n",
	    /* cgroup folders: relative, "..", empty */
	    "4242 1 wd-d0000001 10.207.0.2 10.207.0.1 fd00:7761:7264::2 "
	    "fd00:7761:7264::1\nsys/fs/cgroup/x\n-\n-\n",
	    "4242 1 wd-d0000001 10.207.0.2 10.207.0.1 fd00:7761:7264::2 "
	    "fd00:7761:7264::1\n/sys/fs/cgroup/memory/../..\n-\n-\n",
	    "4242 1 wd-d0000001 10.207.0.2 10.207.0.1 fd00:7761:7264::2 "
	    "fd00:7761:7264::1\n\n-\n-\n",
	};
	struct gw_runrec r, before;
	char nul[sizeof(good)];

	(void)state;
	memset(&before, 0x5a, sizeof(before));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = before;
		if (gw_runrec_parse(bad[i], strlen(bad[i]), &r) != -EINVAL)
			fail_msg("record %zu accepted: \"%s\"", i, bad[i]);
		assert_memory_equal(&r, &before, sizeof(r)); /* nothing of it taken */
	}
	/* a NUL inside */
	memcpy(nul, good, sizeof(good));
	nul[40] = '\0';
	assert_int_equal(gw_runrec_parse(nul, sizeof(good) - 1, &r), -EINVAL);
	/* the positive control: the same parser takes the good record */
	assert_int_equal(gw_runrec_parse(good, strlen(good), &r), 0);
	assert_string_equal(r.ifname, "wd-d0000001");
	assert_string_equal(r.cg[1], "");
}

static void test_format_refuses(void **state)
{
	struct wd_buf b = WD_BUF_INIT;
	struct gw_runrec r;

	(void)state;
	sample(&r);
	snprintf(r.ifname, sizeof(r.ifname), "a/b");
	assert_int_equal(gw_runrec_format(&r, &b), -EINVAL);
	sample(&r);
	snprintf(r.cg[1], sizeof(r.cg[1]), "relative");
	assert_int_equal(gw_runrec_format(&r, &b), -EINVAL);
	wd_buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_file_round_trip),
	    cmocka_unit_test(test_refused),
	    cmocka_unit_test(test_format_refuses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

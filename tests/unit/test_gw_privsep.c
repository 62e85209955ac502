/* test_gw_privsep.c - unit tests for the parent -> worker socket handoff (gateway/privsep.c). */
#include "gateway/gw.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

static struct gw_priv_msg good(void)
{
	struct gw_priv_msg m = {
	    .magic = GW_PRIV_MAGIC, .version = 1, .type = GW_PRIV_LISTENERS, .count = 2};

	memset(m.kinds, 0xff, sizeof(m.kinds));
	m.kinds[0] = 0;
	m.kinds[1] = 8;
	return m;
}

static void test_check(void **state)
{
	struct gw_priv_msg m = good();

	(void)state;
	assert_int_equal(gw_priv_check(&m, sizeof(m), 2), 0);
	assert_int_equal(gw_priv_check(&m, sizeof(m) - 1, 2), -EBADMSG);
	assert_int_equal(gw_priv_check(&m, sizeof(m), 3), -EBADMSG);
	m.magic++;
	assert_int_equal(gw_priv_check(&m, sizeof(m), 2), -EBADMSG);
	m = good();
	m.version = 2;
	assert_int_equal(gw_priv_check(&m, sizeof(m), 2), -EBADMSG);
	m = good();
	m.kinds[1] = 0; /* repeated slot */
	assert_int_equal(gw_priv_check(&m, sizeof(m), 2), -EBADMSG);
	m = good();
	m.kinds[1] = 9; /* out of range */
	assert_int_equal(gw_priv_check(&m, sizeof(m), 2), -EBADMSG);
	m = good();
	m.kinds[5] = 3; /* an unused slot that is not 0xff */
	assert_int_equal(gw_priv_check(&m, sizeof(m), 2), -EBADMSG);
	m = good();
	m.count = 0;
	assert_int_equal(gw_priv_check(&m, sizeof(m), 0), -EBADMSG);
}

static void fds_none(struct gw_fds *f)
{
	for (int i = 0; i < 2; i++)
		f->transparent[i] = f->proxy[i] = f->dns_udp[i] = f->dns_tcp[i] = -1;
	f->ctl = -1;
}

static void test_roundtrip(void **state)
{
	struct gw_fds out, in;
	struct wd_err err;
	int sp[2];

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
	fds_none(&out);
	out.transparent[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	out.dns_udp[1] = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	out.ctl = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(gw_priv_send_fds(sp[0], &out), 0);
	assert_int_equal(gw_priv_recv_fds(sp[1], &in, &err), 0);
	assert_true(in.transparent[0] >= 0 && in.transparent[0] != out.transparent[0]);
	assert_true(in.dns_udp[1] >= 0);
	assert_true(in.ctl >= 0);
	assert_int_equal(in.proxy[0], -1);
	assert_int_equal(in.transparent[1], -1);
	gw_fds_close(&in);
	/* a socket of the wrong kind in a slot is refused */
	close(out.transparent[0]);
	out.transparent[0] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_int_equal(gw_priv_send_fds(sp[0], &out), 0);
	assert_int_equal(gw_priv_recv_fds(sp[1], &in, &err), -EBADMSG);
	assert_int_equal(in.transparent[0], -1);
	/* garbage is refused */
	assert_int_equal(write(sp[0], "hello", 5), 5);
	assert_int_equal(gw_priv_recv_fds(sp[1], &in, &err), -EBADMSG);
	gw_fds_close(&out);
	close(sp[0]);
	close(sp[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_check),
	    cmocka_unit_test(test_roundtrip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

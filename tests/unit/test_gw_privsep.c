/* test_gw_privsep.c - unit tests for the parent <-> worker channel (gateway/privsep.c): the
 * descriptor handoff, and the run update / reply messages' encoding and validation. */
#include "conf/conf.h"
#include "gateway/gw.h"
#include "gateway/privsep.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

static struct gw_priv_msg good(void)
{
	struct gw_priv_msg m = {.magic = GW_PRIV_MAGIC,
				.version = GW_PRIV_VERSION,
				.type = GW_PRIV_LISTENERS,
				.count = 2};

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
	m.version = 1; /* the old handoff */
	assert_int_equal(gw_priv_check(&m, sizeof(m), 2), -EBADMSG);
	m = good();
	m.kinds[1] = 0; /* repeated slot */
	assert_int_equal(gw_priv_check(&m, sizeof(m), 2), -EBADMSG);
	m = good();
	m.kinds[1] = GW_PRIV_KINDS; /* out of range */
	assert_int_equal(gw_priv_check(&m, sizeof(m), 2), -EBADMSG);
	m = good();
	m.kinds[5] = 3; /* an unused slot that is not 0xff */
	assert_int_equal(gw_priv_check(&m, sizeof(m), 2), -EBADMSG);
	m = good();
	m.pad[0] = 1;
	assert_int_equal(gw_priv_check(&m, sizeof(m), 2), -EBADMSG);
	m = good();
	m.type = GW_PRIV_RUN_ADD;
	assert_int_equal(gw_priv_check(&m, sizeof(m), 2), -EBADMSG);
	m = good();
	m.count = 0;
	assert_int_equal(gw_priv_check(&m, sizeof(m), 0), -EBADMSG);
}

static void fds_none(struct gw_fds *f)
{
	gw_fds_init(f);
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

/* the audit log travels as a regular file open for appending, nothing else */
static void test_audit_slot(void **state)
{
	char path[] = "/tmp/wd-test-privsep-XXXXXX";
	struct gw_fds out, in;
	struct wd_err err;
	int sp[2], tmp;

	(void)state;
	tmp = mkstemp(path);
	assert_true(tmp >= 0);
	close(tmp);
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
	fds_none(&out);
	out.ctl = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	out.audit = open(path, O_RDWR | O_APPEND | O_CLOEXEC);
	assert_int_equal(gw_priv_send_fds(sp[0], &out), 0);
	assert_int_equal(gw_priv_recv_fds(sp[1], &in, &err), 0);
	assert_true(in.audit >= 0);
	assert_true(fcntl(in.audit, F_GETFL) & O_APPEND);
	assert_int_equal(in.nflog, -1);
	gw_fds_close(&in);
	/* without O_APPEND: refused */
	close(out.audit);
	out.audit = open(path, O_RDWR | O_CLOEXEC);
	assert_int_equal(gw_priv_send_fds(sp[0], &out), 0);
	assert_int_equal(gw_priv_recv_fds(sp[1], &in, &err), -EBADMSG);
	/* a socket in the audit slot: refused */
	close(out.audit);
	out.audit = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_int_equal(gw_priv_send_fds(sp[0], &out), 0);
	assert_int_equal(gw_priv_recv_fds(sp[1], &in, &err), -EBADMSG);
	/* a UDP socket in the NFLOG slot: refused */
	close(out.audit);
	out.audit = -1;
	out.nflog = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_int_equal(gw_priv_send_fds(sp[0], &out), 0);
	assert_int_equal(gw_priv_recv_fds(sp[1], &in, &err), -EBADMSG);
	gw_fds_close(&out);
	close(sp[0]);
	close(sp[1]);
	unlink(path);
}

static void addrs(struct gw_addr *a4, struct gw_addr *a6)
{
	assert_int_equal(gw_addr_parse("10.213.0.2", a4), 0);
	assert_int_equal(gw_addr_parse("fd77:7764:6e00::2", a6), 0);
}

static void test_run_encode(void **state)
{
	struct gw_addr a4, a6, h4, h6, b4, b6, c4, c6, none = {0};
	struct gw_priv_run m;

	(void)state;
	addrs(&a4, &a6);
	assert_int_equal(gw_addr_parse("10.213.0.1", &h4), 0);
	assert_int_equal(gw_addr_parse("fd77:7764:6e00::1", &h6), 0);
	assert_int_equal(sizeof(m), 72); /* fixed size: what the parent expects */
	assert_int_equal(gw_priv_run_encode(&m, GW_PRIV_RUN_ADD, 7, "wd-3f9a", &a4, &a6, &h4, &h6),
			 0);
	assert_int_equal(m.seq, 7);
	assert_int_equal(m.flags, GW_PRIV_HAS_V4 | GW_PRIV_HAS_V6);
	assert_int_equal(gw_priv_run_check(&m, sizeof(m)), 0);
	gw_priv_run_facts(&m, &b4, &b6, &c4, &c6);
	assert_true(gw_addr_eq(&a4, &b4));
	assert_true(gw_addr_eq(&a6, &b6));
	assert_true(gw_addr_eq(&h4, &c4));
	assert_true(gw_addr_eq(&h6, &c6));
	/* one family is enough; the other stays zero */
	assert_int_equal(gw_priv_run_encode(&m, GW_PRIV_RUN_DEL, 8, "wd-x", &none, &a6, NULL, &h6),
			 0);
	assert_int_equal(m.flags, GW_PRIV_HAS_V6);
	gw_priv_run_facts(&m, &b4, &b6, &c4, &c6);
	assert_int_equal(b4.family, 0);
	assert_int_equal(c4.family, 0);
	/* refused at encoding: no address, a sandbox address without its gateway address,
	 * bad names */
	assert_int_equal(
	    gw_priv_run_encode(&m, GW_PRIV_RUN_ADD, 1, "wd-x", &none, &none, NULL, NULL), -EINVAL);
	assert_int_equal(gw_priv_run_encode(&m, GW_PRIV_RUN_ADD, 1, "wd-x", &a4, NULL, NULL, NULL),
			 -EINVAL);
	assert_int_equal(gw_priv_run_encode(&m, GW_PRIV_RUN_ADD, 1, "", &a4, NULL, &h4, NULL),
			 -EINVAL);
	assert_int_equal(
	    gw_priv_run_encode(&m, GW_PRIV_RUN_ADD, 1, "wd-0123456789abcd", &a4, NULL, &h4, NULL),
	    -EINVAL);
	assert_int_equal(gw_priv_run_encode(&m, GW_PRIV_RUN_ADD, 1, "wd x", &a4, NULL, &h4, NULL),
			 -EINVAL);
	assert_int_equal(gw_priv_run_encode(&m, GW_PRIV_RUN_ADD, 1, "wd/x", &a4, NULL, &h4, NULL),
			 -EINVAL);
	assert_int_equal(gw_priv_run_encode(&m, GW_PRIV_RUN_REPLY, 1, "wd-x", &a4, NULL, &h4, NULL),
			 -EINVAL);
}

static void test_run_check(void **state)
{
	struct gw_addr a4, a6, h4;
	struct gw_priv_run good_m, m;

	(void)state;
	addrs(&a4, &a6);
	assert_int_equal(gw_addr_parse("10.213.0.1", &h4), 0);
	assert_int_equal(
	    gw_priv_run_encode(&good_m, GW_PRIV_RUN_ADD, 1, "wd-a", &a4, NULL, &h4, NULL), 0);
	m = good_m;
	assert_int_equal(gw_priv_run_check(&m, sizeof(m) - 1), -EBADMSG);
	assert_int_equal(gw_priv_run_check(&m, sizeof(m) + 1), -EBADMSG);
	m.magic ^= 1;
	assert_int_equal(gw_priv_run_check(&m, sizeof(m)), -EBADMSG);
	m = good_m;
	m.version = 1;
	assert_int_equal(gw_priv_run_check(&m, sizeof(m)), -EBADMSG);
	m = good_m;
	m.type = GW_PRIV_LISTENERS;
	assert_int_equal(gw_priv_run_check(&m, sizeof(m)), -EBADMSG);
	m = good_m;
	m.flags = 0x4; /* unknown flag */
	assert_int_equal(gw_priv_run_check(&m, sizeof(m)), -EBADMSG);
	m = good_m;
	m.flags = 0;
	assert_int_equal(gw_priv_run_check(&m, sizeof(m)), -EBADMSG);
	m = good_m;
	m.pad[2] = 1;
	assert_int_equal(gw_priv_run_check(&m, sizeof(m)), -EBADMSG);
	m = good_m;
	m.v6[15] = 1; /* an address for a family the flags do not name */
	assert_int_equal(gw_priv_run_check(&m, sizeof(m)), -EBADMSG);
	m = good_m;
	memset(m.v4, 0, sizeof(m.v4)); /* a named family without an address */
	assert_int_equal(gw_priv_run_check(&m, sizeof(m)), -EBADMSG);
	m = good_m;
	memset(m.h4, 0, sizeof(m.h4)); /* ... or without its gateway address */
	assert_int_equal(gw_priv_run_check(&m, sizeof(m)), -EBADMSG);
	m = good_m;
	m.h6[15] = 1; /* a gateway address for a family the flags do not name */
	assert_int_equal(gw_priv_run_check(&m, sizeof(m)), -EBADMSG);
	m = good_m;
	memset(m.ifname, 'a', sizeof(m.ifname)); /* unterminated */
	assert_int_equal(gw_priv_run_check(&m, sizeof(m)), -EBADMSG);
	m = good_m;
	m.ifname[10] = 'x'; /* bytes after the NUL */
	assert_int_equal(gw_priv_run_check(&m, sizeof(m)), -EBADMSG);
	m = good_m;
	m.ifname[1] = '\n';
	assert_int_equal(gw_priv_run_check(&m, sizeof(m)), -EBADMSG);
	m = good_m;
	m.ifname[0] = '\0';
	m.ifname[1] = m.ifname[2] = m.ifname[3] = '\0';
	assert_int_equal(gw_priv_run_check(&m, sizeof(m)), -EBADMSG);
}

static void test_reply(void **state)
{
	struct gw_priv_reply r, bad;
	char longmsg[600];

	(void)state;
	assert_int_equal(gw_priv_reply_encode(&r, 5, 0, NULL), 0);
	assert_int_equal(gw_priv_reply_check(&r, sizeof(r), 5), 0);
	assert_int_equal(gw_priv_reply_check(&r, sizeof(r), 6), -EBADMSG); /* out of order */
	assert_int_equal(gw_priv_reply_check(&r, sizeof(r) - 1, 5), -EBADMSG);
	memset(longmsg, 'x', sizeof(longmsg) - 1);
	longmsg[sizeof(longmsg) - 1] = '\0';
	assert_int_equal(gw_priv_reply_encode(&r, 9, -ENOENT, longmsg), 0);
	assert_int_equal(gw_priv_reply_check(&r, sizeof(r), 9), 0);
	assert_int_equal(strlen(r.msg), sizeof(r.msg) - 1); /* cut to fit */
	assert_int_equal(gw_priv_reply_encode(&r, 1, 1, "x"), -EINVAL);
	assert_int_equal(gw_priv_reply_encode(&r, 1, -5000, "x"), -EINVAL);
	assert_int_equal(gw_priv_reply_encode(&r, 1, -EPERM, "no"), 0);
	bad = r;
	bad.status = 3;
	assert_int_equal(gw_priv_reply_check(&bad, sizeof(bad), 1), -EBADMSG);
	bad = r;
	bad.status = -9999;
	assert_int_equal(gw_priv_reply_check(&bad, sizeof(bad), 1), -EBADMSG);
	bad = r;
	bad.msg[100] = 'z'; /* garbage after the NUL */
	assert_int_equal(gw_priv_reply_check(&bad, sizeof(bad), 1), -EBADMSG);
	bad = r;
	memset(bad.msg, 'a', sizeof(bad.msg)); /* unterminated */
	assert_int_equal(gw_priv_reply_check(&bad, sizeof(bad), 1), -EBADMSG);
	bad = r;
	bad.type = GW_PRIV_RUN_ADD;
	assert_int_equal(gw_priv_reply_check(&bad, sizeof(bad), 1), -EBADMSG);
}

/* daemon mode: the namespace request and its reply */
static void test_netns_msgs(void **state)
{
	struct gw_priv_netns m, bad;
	struct gw_priv_netns_reply r, rb;

	(void)state;
	memset(&m, 0, sizeof(m));
	m.magic = GW_PRIV_MAGIC;
	m.version = GW_PRIV_VERSION;
	m.type = GW_PRIV_NETNS_ADD;
	m.uid = 1500;
	strcpy(m.id, "0123abcd");
	assert_int_equal(gw_priv_netns_check(&m, sizeof(m)), 0);
	assert_int_equal(gw_priv_netns_check(&m, sizeof(m) - 1), -EBADMSG);
	bad = m;
	bad.type = GW_PRIV_RUN_ADD;
	assert_int_equal(gw_priv_netns_check(&bad, sizeof(bad)), -EBADMSG);
	bad = m;
	bad.id[0] = '\0';
	assert_int_equal(gw_priv_netns_check(&bad, sizeof(bad)), -EBADMSG);
	bad = m;
	bad.id[20] = 'x'; /* garbage after the NUL */
	assert_int_equal(gw_priv_netns_check(&bad, sizeof(bad)), -EBADMSG);
	bad = m;
	bad.id[2] = ' ';
	assert_int_equal(gw_priv_netns_check(&bad, sizeof(bad)), -EBADMSG);
	/* the id names the run's cgroup folder ("warden-<id>", ".../warden/<id>"): no path */
	static const char *const paths[] = {"x/../../escape", "..", ".hidden", "a/b", "../x"};
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		bad = m;
		memset(bad.id, 0, sizeof(bad.id));
		strcpy(bad.id, paths[i]);
		assert_int_equal(gw_priv_netns_check(&bad, sizeof(bad)), -EBADMSG);
	}
	bad = m;
	strcpy(bad.id, "a-b_c.d9"); /* control: what a launcher's ids are made of */
	assert_int_equal(gw_priv_netns_check(&bad, sizeof(bad)), 0);

	memset(&r, 0, sizeof(r));
	r.magic = GW_PRIV_MAGIC;
	r.version = GW_PRIV_VERSION;
	r.type = GW_PRIV_NETNS_REPLY;
	r.seq = 3;
	strcpy(r.ifname, "wd-0123abcd");
	r.flags = GW_PRIV_HAS_V4 | GW_PRIV_HAS_V6;
	memcpy(r.v4, (uint8_t[]){10, 213, 0, 2}, 4);
	memcpy(r.h4, (uint8_t[]){10, 213, 0, 1}, 4);
	r.v6[0] = r.h6[0] = 0xfd;
	r.v6[15] = 2;
	r.h6[15] = 1;
	strcpy(r.cgroup[0], "/sys/fs/cgroup/warden/0123abcd");
	assert_int_equal(gw_priv_netns_reply_check(&r, sizeof(r), 3), 0);
	assert_int_equal(gw_priv_netns_reply_check(&r, sizeof(r), 4), -EBADMSG);
	assert_int_equal(gw_priv_netns_reply_check(&r, sizeof(r) + 1, 3), -EBADMSG);
	rb = r;
	rb.ifname[0] = '\0'; /* a success names its interface */
	assert_int_equal(gw_priv_netns_reply_check(&rb, sizeof(rb), 3), -EBADMSG);
	rb = r;
	memset(rb.v4, 0, 4); /* ... and its addresses */
	assert_int_equal(gw_priv_netns_reply_check(&rb, sizeof(rb), 3), -EBADMSG);
	rb = r;
	memset(rb.cgroup[1], 'a', sizeof(rb.cgroup[1])); /* unterminated */
	assert_int_equal(gw_priv_netns_reply_check(&rb, sizeof(rb), 3), -EBADMSG);
	rb = r;
	rb.status = -EPERM; /* an error carries no facts */
	assert_int_equal(gw_priv_netns_reply_check(&rb, sizeof(rb), 3), -EBADMSG);
	memset(&rb, 0, sizeof(rb));
	rb.magic = GW_PRIV_MAGIC;
	rb.version = GW_PRIV_VERSION;
	rb.type = GW_PRIV_NETNS_REPLY;
	rb.seq = 3;
	rb.status = -EPERM;
	strcpy(rb.msg, "not owned");
	assert_int_equal(gw_priv_netns_reply_check(&rb, sizeof(rb), 3), 0);
}

/* what a client may hand over: checked without any privilege (the unit test's own namespaces;
 * the lab test, run_daemon.sh, sends other users' and the host's) */
static void test_netns_check(void **state)
{
	char why[300];
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int user = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
	int net = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	uid_t other = getuid() == 4242 ? 4243 : 4242;

	(void)state;
	assert_true(null >= 0 && user >= 0 && net >= 0);
	assert_int_equal(gw_netns_check(null, getuid(), why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "not a namespace"));
	assert_int_equal(gw_netns_check(user, getuid(), why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "not a network namespace"));
	/* this process's network namespace belongs to its user namespace: a user other than its
	 * owner may not hand it over, and nor may its owner when that is the host's */
	assert_int_equal(gw_netns_check(net, other, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "not owned by uid"));
	/* nor root: daemon mode is a user's (root's runs build their own network), and the
	 * parent checks again with the uid the worker names, so a worker that claims uid 0 must
	 * not get the host's namespace plumbed */
	assert_int_equal(gw_netns_check(net, 0, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "the host's"));
	close(null);
	close(user);
	close(net);
}

/* a join request: a process and a run's interface, nothing else */
static void test_join_msgs(void **state)
{
	struct gw_priv_join m, bad;

	(void)state;
	assert_int_equal(gw_priv_join_encode(&m, 7, "wd-abc", 4242), 0);
	assert_int_equal(gw_priv_join_check(&m, sizeof(m)), 0);
	assert_int_equal(m.seq, 7);
	assert_int_equal(m.pid, 4242);
	assert_int_equal(gw_priv_join_check(&m, sizeof(m) + 1), -EBADMSG);
	assert_int_equal(gw_priv_join_encode(&bad, 7, "wd-abc", 1), -EINVAL);
	assert_int_equal(gw_priv_join_encode(&bad, 7, "wd/../x", 4242), -EINVAL);
	assert_int_equal(gw_priv_join_encode(&bad, 7, "wd-0123456789abcdef", 4242), -EINVAL);
	/* one field wrong at a time: no pid, another type, garbage after the interface's NUL */
	for (int i = 0; i < 3; i++) {
		bad = m;
		if (i == 0)
			bad.pid = 0;
		else if (i == 1)
			bad.type = GW_PRIV_RUN_DEL;
		else
			bad.ifname[10] = 'x';
		assert_int_equal(gw_priv_join_check(&bad, sizeof(bad)), -EBADMSG);
	}
}

/* the parent's own reading of who asked: only a connection accepted on the control socket */
/* the UDP relay's conntrack request and reply: round trips, and each field the checks refuse */
static void test_ct_msgs(void **state)
{
	struct gw_ct_tuple t = {.sport = 15054, .dport = 40000}, back;
	struct gw_priv_ct m, bad;
	struct gw_priv_ct_reply r, rb;
	struct gw_addr dst;

	(void)state;
	assert_int_equal(gw_addr_parse("10.213.0.1", &t.src), 0);
	assert_int_equal(gw_addr_parse("10.213.0.2", &t.dst), 0);
	assert_int_equal(gw_priv_ct_encode(&m, 7, &t), 0);
	assert_int_equal(gw_priv_ct_check(&m, sizeof(m), &back), 0);
	assert_true(gw_addr_eq(&back.src, &t.src) && gw_addr_eq(&back.dst, &t.dst));
	assert_int_equal(back.sport, 15054);
	assert_int_equal(back.dport, 40000);
	assert_int_equal(gw_priv_ct_check(&m, sizeof(m) - 1, NULL), -EBADMSG);
	bad = m;
	bad.type = GW_PRIV_CGROUP_JOIN;
	assert_int_equal(gw_priv_ct_check(&bad, sizeof(bad), NULL), -EBADMSG);
	bad = m;
	bad.family = 3;
	assert_int_equal(gw_priv_ct_check(&bad, sizeof(bad), NULL), -EBADMSG);
	bad = m;
	bad.client[4] = 1; /* past an IPv4 address */
	assert_int_equal(gw_priv_ct_check(&bad, sizeof(bad), NULL), -EBADMSG);
	bad = m;
	bad.pad[1] = 1;
	assert_int_equal(gw_priv_ct_check(&bad, sizeof(bad), NULL), -EBADMSG);
	bad = m;
	bad.client_port = 0;
	assert_int_equal(gw_priv_ct_check(&bad, sizeof(bad), NULL), -EBADMSG);
	assert_int_equal(gw_addr_parse("fd77::1", &t.dst), 0); /* families differ */
	assert_int_equal(gw_priv_ct_encode(&m, 7, &t), -EINVAL);

	assert_int_equal(gw_addr_parse("100.96.0.9", &dst), 0);
	assert_int_equal(gw_priv_ct_reply_encode(&r, 7, 0, &dst, 3478), 0);
	assert_int_equal(gw_priv_ct_reply_check(&r, sizeof(r), 7), 0);
	assert_int_equal(gw_priv_ct_reply_check(&r, sizeof(r), 8), -EBADMSG);
	assert_int_equal(r.port, 3478);
	rb = r;
	rb.port = 0;
	assert_int_equal(gw_priv_ct_reply_check(&rb, sizeof(rb), 7), -EBADMSG);
	rb = r;
	rb.status = -ENOENT; /* an error with facts */
	assert_int_equal(gw_priv_ct_reply_check(&rb, sizeof(rb), 7), -EBADMSG);
	assert_int_equal(gw_priv_ct_reply_encode(&r, 7, -ENOENT, NULL, 0), 0);
	assert_int_equal(gw_priv_ct_reply_check(&r, sizeof(r), 7), 0);
	assert_int_equal(gw_priv_ct_reply_encode(&r, 7, 0, NULL, 0), -EINVAL);
	assert_int_equal(gw_priv_ct_reply_encode(&r, 7, 1, NULL, 0), -EINVAL);
}

static void test_peer(void **state)
{
	char dir[] = "/tmp/wd-peer-XXXXXX", path[128], other[128], why[300];
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct ucred cred;
	int lis, lis2, cli, acc, sp[2], null;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/gateway.sock", dir);
	snprintf(other, sizeof(other), "%s/other.sock", dir);
	lis = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	lis2 = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cli = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(lis >= 0 && lis2 >= 0 && cli >= 0);
	strcpy(sa.sun_path, path);
	assert_int_equal(bind(lis, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(lis, 4), 0);
	assert_int_equal(connect(cli, (struct sockaddr *)&sa, sizeof(sa)), 0);
	acc = accept4(lis, NULL, NULL, SOCK_CLOEXEC);
	assert_true(acc >= 0);
	/* the connection accepted on the control socket: the connecting process's credentials */
	memset(&cred, 0xff, sizeof(cred));
	assert_int_equal(gw_priv_peer(acc, path, &cred, why, sizeof(why)), 0);
	assert_int_equal(cred.uid, getuid());
	assert_int_equal(cred.gid, getgid());
	assert_int_equal(cred.pid, getpid());
	/* the connecting side (its peer is whoever listens: root, for the daemon's socket) */
	assert_int_equal(gw_priv_peer(cli, path, &cred, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "not a connection accepted on the control socket"));
	/* the listener itself */
	assert_int_equal(gw_priv_peer(lis, path, &cred, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "listening"));
	/* a socketpair the worker made */
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
	assert_int_equal(gw_priv_peer(sp[0], path, &cred, why, sizeof(why)), -EPERM);
	/* a connection accepted on another socket */
	close(cli);
	cli = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	strcpy(sa.sun_path, other);
	assert_int_equal(bind(lis2, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(lis2, 4), 0);
	assert_int_equal(connect(cli, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(acc);
	acc = accept4(lis2, NULL, NULL, SOCK_CLOEXEC);
	assert_true(acc >= 0);
	assert_int_equal(gw_priv_peer(acc, path, &cred, why, sizeof(why)), -EPERM);
	assert_int_equal(gw_priv_peer(acc, other, &cred, why, sizeof(why)), 0); /* control */
	/* no socket at all */
	null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	assert_int_equal(gw_priv_peer(null, path, &cred, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "not a unix stream socket"));
	close(null);
	close(sp[0]);
	close(sp[1]);
	close(acc);
	close(cli);
	close(lis);
	close(lis2);
	unlink(path);
	unlink(other);
	rmdir(dir);
}

/* the worker's side of the channel: garbage from the parent, or its end, stops the loop */
static void test_worker_channel_fatal(void **state)
{
	static const struct {
		const char *what;
		int fatal;
	} cases[] = {{"garbage", -EBADMSG}, {"reply nobody waits for", -EBADMSG}, {"eof", -EPIPE}};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct wd_gwconf conf;
		struct gw_fds fds;
		struct wd_err err;
		struct gw *g = NULL;
		int sp[2];

		conf_defaults(&conf);
		snprintf(conf.resolvers[0], sizeof(conf.resolvers[0]), "127.0.0.1");
		conf.nresolvers = 1;
		gw_fds_init(&fds);
		assert_int_equal(gw_new(&conf, &fds, NULL, &g, &err), 0);
		assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
		assert_int_equal(gw_set_parent(g, sp[1], true), 0);
		if (i == 0) {
			assert_int_equal(write(sp[0], "hello", 5), 5);
		} else if (i == 1) {
			struct gw_priv_reply r;

			assert_int_equal(gw_priv_reply_encode(&r, 1, 0, NULL), 0);
			assert_int_equal(send(sp[0], &r, sizeof(r), 0), (ssize_t)sizeof(r));
		}
		close(sp[0]);
		assert_int_equal(gw_serve(g), cases[i].fatal);
		gw_free(g);
	}
}

/* receive one message of @sock into @fd[@max] through gw_priv_take_fds() */
static int take(int sock, int *fd, size_t max)
{
	union {
		char b[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} cbuf;
	char byte;
	struct iovec iov = {.iov_base = &byte, .iov_len = 1};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = cbuf.b,
			    .msg_controllen = sizeof(cbuf.b)};

	assert_int_equal(recvmsg(sock, &mh, MSG_CMSG_CLOEXEC), 1);
	return gw_priv_take_fds(&mh, fd, max);
}

/* is @fd an open descriptor? */
static bool open_fd(int fd)
{
	return fd >= 0 && fcntl(fd, F_GETFD) >= 0;
}

static void test_take_fds(void **state)
{
	int sp[2], a = open("/dev/null", O_RDONLY | O_CLOEXEC), b = dup(a), fd[2] = {-1, -1};
	int kept;

	(void)state;
	assert_int_equal(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
	/* two into two slots: in order */
	assert_int_equal(wd_send_fds(sp[0], "x", 1, (int[]){a, b}, 2, 0), 1);
	assert_int_equal(take(sp[1], fd, 2), 2);
	assert_true(open_fd(fd[0]) && open_fd(fd[1]));
	close(fd[0]);
	close(fd[1]);
	/* two into one slot: refused, both closed, the slot free again */
	fd[0] = -1;
	assert_int_equal(wd_send_fds(sp[0], "x", 1, (int[]){a, b}, 2, 0), 1);
	assert_int_equal(take(sp[1], fd, 1), -EBADMSG);
	assert_int_equal(fd[0], -1);
	/* a slot held from an earlier message is not free: that one is kept, the new one closed */
	assert_int_equal(wd_send_fds(sp[0], "x", 1, &a, 1, 0), 1);
	assert_int_equal(take(sp[1], fd, 1), 1);
	kept = fd[0];
	assert_int_equal(wd_send_fds(sp[0], "x", 1, &b, 1, 0), 1);
	assert_int_equal(take(sp[1], fd, 1), -EBADMSG);
	assert_int_equal(fd[0], kept);
	assert_true(open_fd(kept));
	close(kept);
	/* none: zero, the slots untouched */
	fd[0] = fd[1] = -1;
	assert_int_equal(send(sp[0], "x", 1, 0), 1);
	assert_int_equal(take(sp[1], fd, 2), 0);
	assert_int_equal(fd[0], -1);
	close(a);
	close(b);
	close(sp[0]);
	close(sp[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_check),
	    cmocka_unit_test(test_roundtrip),
	    cmocka_unit_test(test_audit_slot),
	    cmocka_unit_test(test_run_encode),
	    cmocka_unit_test(test_run_check),
	    cmocka_unit_test(test_reply),
	    cmocka_unit_test(test_netns_msgs),
	    cmocka_unit_test(test_netns_check),
	    cmocka_unit_test(test_worker_channel_fatal),
	    cmocka_unit_test(test_peer),
	    cmocka_unit_test(test_join_msgs),
	    cmocka_unit_test(test_ct_msgs),
	    cmocka_unit_test(test_take_fds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

/* test_gw_ctmsg.c - unit tests for the conntrack lookup's messages (gateway/ctmsg.c): the
 * GET request's bytes by a reply tuple (IPv4, IPv6, refusals), and the parser of the
 * kernel's answers: an entry (its original tuple, nested attributes with and without
 * NLA_F_NESTED), an error, a wrong sequence number, another protocol, and every cut. */
#include "gateway/ctmsg.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netlink.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

struct msg {
	uint8_t b[1024];
	size_t len;
};

static void put(struct msg *m, const void *p, size_t n)
{
	assert_true(m->len + n <= sizeof(m->b));
	if (n)
		memcpy(m->b + m->len, p, n);
	m->len += n;
	while (m->len % 4)
		m->b[m->len++] = 0;
}

static void attr(struct msg *m, uint16_t type, const void *p, uint16_t n)
{
	uint16_t h[2] = {(uint16_t)(4 + n), type};

	assert_true(m->len + 4 <= sizeof(m->b));
	memcpy(m->b + m->len, h, 4);
	m->len += 4;
	put(m, p, n);
}

static size_t nest(struct msg *m, uint16_t type)
{
	size_t at = m->len;

	attr(m, type, NULL, 0);
	return at;
}

static void nest_end(struct msg *m, size_t at)
{
	uint16_t n = (uint16_t)(m->len - at);

	memcpy(m->b + at, &n, 2);
}

static void tuple(struct msg *m, uint16_t type, uint16_t nested, const char *src, const char *dst,
		  uint8_t proto, uint16_t from_port, uint16_t to_port)
{
	uint8_t a[16], b[16];
	bool v6 = strchr(src, ':') != NULL;
	size_t t = nest(m, type | nested), ip, pr;
	uint16_t sp = htons(from_port), dp = htons(to_port);

	assert_int_equal(inet_pton(v6 ? AF_INET6 : AF_INET, src, a), 1);
	assert_int_equal(inet_pton(v6 ? AF_INET6 : AF_INET, dst, b), 1);
	ip = nest(m, CTA_TUPLE_IP | nested);
	attr(m, v6 ? CTA_IP_V6_SRC : CTA_IP_V4_SRC, a, v6 ? 16 : 4);
	attr(m, v6 ? CTA_IP_V6_DST : CTA_IP_V4_DST, b, v6 ? 16 : 4);
	nest_end(m, ip);
	pr = nest(m, CTA_TUPLE_PROTO | nested);
	attr(m, CTA_PROTO_NUM, &proto, 1);
	attr(m, CTA_PROTO_SRC_PORT, &sp, 2);
	attr(m, CTA_PROTO_DST_PORT, &dp, 2);
	nest_end(m, pr);
	nest_end(m, t);
}

/* the kernel's answer to a GET: IPCTNL_MSG_CT_NEW with both tuples and a status */
static void answer(struct msg *m, uint32_t seq, uint16_t nested, const char *csrc,
		   const char *synth, uint16_t cport, uint16_t sport, const char *gw,
		   uint16_t gport, uint8_t proto)
{
	uint32_t len, status = htonl(0x8);
	uint16_t type = NFNL_SUBSYS_CTNETLINK << 8 | IPCTNL_MSG_CT_NEW, flags = 0;
	uint8_t nfg[4] = {strchr(csrc, ':') ? AF_INET6 : AF_INET, NFNETLINK_V0, 0, 0};

	memset(m, 0, sizeof(*m));
	m->len = 16;
	memcpy(m->b + 4, &type, 2);
	memcpy(m->b + 6, &flags, 2);
	memcpy(m->b + 8, &seq, 4);
	put(m, nfg, 4);
	tuple(m, CTA_TUPLE_ORIG, nested, csrc, synth, proto, cport, sport);
	tuple(m, CTA_TUPLE_REPLY, nested, gw, csrc, proto, gport, cport);
	attr(m, CTA_STATUS, &status, 4);
	len = (uint32_t)m->len;
	memcpy(m->b, &len, 4);
}

static void addr(struct gw_addr *a, const char *s)
{
	assert_int_equal(gw_addr_parse(s, a), 0);
}

static void test_build_v4(void **state)
{
	struct gw_ct_tuple r = {.sport = 15354, .dport = 40000};
	uint8_t buf[GW_CT_REQ_MAX];
	struct msg want = {{0}, 0};
	uint16_t type = NFNL_SUBSYS_CTNETLINK << 8 | IPCTNL_MSG_CT_GET, flags = NLM_F_REQUEST;
	uint32_t seq = 77, len;
	uint8_t nfg[4] = {AF_INET, NFNETLINK_V0, 0, 0};
	int n;

	(void)state;
	addr(&r.src, "10.77.0.1");
	addr(&r.dst, "10.77.0.2");
	n = gw_ct_get_build(buf, sizeof(buf), seq, &r);
	want.len = 16;
	memcpy(want.b + 4, &type, 2);
	memcpy(want.b + 6, &flags, 2);
	memcpy(want.b + 8, &seq, 4);
	put(&want, nfg, 4);
	tuple(&want, CTA_TUPLE_REPLY, NLA_F_NESTED, "10.77.0.1", "10.77.0.2", IPPROTO_UDP, 15354,
	      40000);
	len = (uint32_t)want.len;
	memcpy(want.b, &len, 4);
	assert_int_equal(n, (int)want.len);
	assert_memory_equal(buf, want.b, want.len);
	/* too small a buffer, at every size */
	for (size_t s = 0; s < want.len; s++)
		assert_int_equal(gw_ct_get_build(buf, s, seq, &r), -EINVAL);
}

static void test_build_refusals(void **state)
{
	struct gw_ct_tuple r = {.sport = 1, .dport = 2};
	uint8_t buf[GW_CT_REQ_MAX];

	(void)state;
	addr(&r.src, "fd00::1");
	addr(&r.dst, "fd00::2");
	assert_true(gw_ct_get_build(buf, sizeof(buf), 1, &r) > 0);
	addr(&r.dst, "10.0.0.2");
	assert_int_equal(gw_ct_get_build(buf, sizeof(buf), 1, &r), -EINVAL);
	r.src.family = 0;
	assert_int_equal(gw_ct_get_build(buf, sizeof(buf), 1, &r), -EINVAL);
}

static void test_parse_entry(void **state)
{
	struct msg m;
	struct gw_ct_tuple o;
	struct gw_addr want;
	int err = 0;

	(void)state;
	/* with NLA_F_NESTED (newer kernels) and without */
	for (int i = 0; i < 2; i++) {
		answer(&m, 9, i ? NLA_F_NESTED : 0, "10.77.0.2", "100.64.3.7", 40000, 3478,
		       "10.77.0.1", 15354, IPPROTO_UDP);
		memset(&o, 0xa5, sizeof(o));
		assert_int_equal(gw_ct_get_parse(m.b, m.len, 9, &o, &err), GW_CT_OK);
		addr(&want, "10.77.0.2");
		assert_true(gw_addr_eq(&o.src, &want));
		addr(&want, "100.64.3.7");
		assert_true(gw_addr_eq(&o.dst, &want));
		assert_int_equal(o.sport, 40000);
		assert_int_equal(o.dport, 3478);
	}
	answer(&m, 9, NLA_F_NESTED, "fd00:77::2", "fd7a::3:7", 40001, 443, "fd00:77::1", 15354,
	       IPPROTO_UDP);
	assert_int_equal(gw_ct_get_parse(m.b, m.len, 9, &o, &err), GW_CT_OK);
	addr(&want, "fd7a::3:7");
	assert_true(gw_addr_eq(&o.dst, &want));
	assert_int_equal(o.dport, 443);
	/* another sequence number, another protocol */
	assert_int_equal(gw_ct_get_parse(m.b, m.len, 10, &o, &err), GW_CT_MALFORMED);
	answer(&m, 9, 0, "10.77.0.2", "100.64.3.7", 40000, 3478, "10.77.0.1", 15354, IPPROTO_TCP);
	assert_int_equal(gw_ct_get_parse(m.b, m.len, 9, &o, &err), GW_CT_MALFORMED);
}

static void test_parse_cut_and_lies(void **state)
{
	struct msg m;
	struct gw_ct_tuple o;
	int err = 0;
	uint32_t len;

	(void)state;
	answer(&m, 5, NLA_F_NESTED, "10.77.0.2", "100.64.3.7", 40000, 3478, "10.77.0.1", 15354,
	       IPPROTO_UDP);
	/* every cut of the buffer */
	for (size_t n = 0; n < m.len; n++)
		assert_int_equal(gw_ct_get_parse(m.b, n, 5, &o, &err), GW_CT_MALFORMED);
	/* a message length cut short of the tuple, with the whole buffer there */
	for (len = 16; len < 20 + 4; len++) {
		struct msg c = m;

		memcpy(c.b, &len, 4);
		assert_int_equal(gw_ct_get_parse(c.b, c.len, 5, &o, &err), GW_CT_MALFORMED);
	}
	/* an attribute whose length runs past the message */
	{
		struct msg c = m;
		uint16_t big = 0xfff0;

		memcpy(c.b + 20, &big, 2);
		assert_int_equal(gw_ct_get_parse(c.b, c.len, 5, &o, &err), GW_CT_MALFORMED);
	}
}

static void test_parse_error(void **state)
{
	uint8_t b[36] = {0};
	uint32_t len = sizeof(b), seq = 3;
	uint16_t type = NLMSG_ERROR;
	int32_t e = -ENOENT;
	struct gw_ct_tuple o;
	int err = 0;

	(void)state;
	memcpy(b, &len, 4);
	memcpy(b + 4, &type, 2);
	memcpy(b + 8, &seq, 4);
	memcpy(b + 16, &e, 4);
	assert_int_equal(gw_ct_get_parse(b, sizeof(b), 3, &o, &err), GW_CT_ERROR);
	assert_int_equal(err, -ENOENT);
	e = 0; /* an ack, never asked for */
	memcpy(b + 16, &e, 4);
	assert_int_equal(gw_ct_get_parse(b, sizeof(b), 3, &o, &err), GW_CT_MALFORMED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_build_v4),	cmocka_unit_test(test_build_refusals),
	    cmocka_unit_test(test_parse_entry), cmocka_unit_test(test_parse_cut_and_lies),
	    cmocka_unit_test(test_parse_error),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

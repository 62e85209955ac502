/* test_gw_nflog.c - unit tests for the NFLOG message parser and the token bucket
 * (gateway/nflog.c): IPv4/IPv6 UDP, extension headers, fragments, cut payloads,
 * several messages per datagram, acks, and lengths that lie. */
#include "gateway/ev.h"
#include "gateway/nflog.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <linux/netlink.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

struct msg {
	uint8_t b[4096];
	size_t len;
};

static void put(struct msg *m, const void *p, size_t n)
{
	assert_true(m->len + n <= sizeof(m->b));
	memcpy(m->b + m->len, p, n);
	m->len += n;
}

static void pad4(struct msg *m)
{
	static const uint8_t z[4];

	put(m, z, (4 - m->len % 4) % 4);
}

static void attr(struct msg *m, uint16_t type, const void *p, uint16_t n)
{
	uint16_t h[2] = {(uint16_t)(4 + n), type};

	put(m, h, 4);
	put(m, p, n);
	pad4(m);
}

/* append one NFLOG packet message carrying @payload to @m, with the log rule's @prefix
 * (@prelen bytes: with or without its NUL) */
static void packet_p(struct msg *m, uint16_t group, const uint8_t *payload, uint16_t plen,
		     const char *prefix, uint16_t prelen)
{
	size_t start = m->len;
	struct nlmsghdr h = {.nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET};
	uint8_t gen[4] = {AF_INET, 0, (uint8_t)(group >> 8), (uint8_t)group};
	uint8_t phdr[4] = {0x08, 0x00, 0, 0};
	uint32_t indev = htonl(42);
	uint32_t len;

	put(m, &h, sizeof(h));
	put(m, gen, 4);
	attr(m, NFULA_PACKET_HDR, phdr, 4);
	attr(m, NFULA_IFINDEX_INDEV, &indev, 4);
	attr(m, NFULA_PREFIX, prefix, prelen);
	if (payload)
		attr(m, NFULA_PAYLOAD, payload, plen);
	len = (uint32_t)(m->len - start);
	memcpy(m->b + start, &len, 4);
}

static void packet(struct msg *m, uint16_t group, const uint8_t *payload, uint16_t plen)
{
	packet_p(m, group, payload, plen, "x", 2);
}

/* IPv4 UDP 10.213.0.2:5000 -> 203.0.113.2:9999 */
static const uint8_t udp4[] = {
    0x45, 0, 0,	   36,	 0,    1,    0, 0,  64, 17, 0,	 0,   10,  213, 0,   2,	  203, 0,
    113,  2, 0x13, 0x88, 0x27, 0x0f, 0, 16, 0,	0,  'h', 'e', 'l', 'l', 'o', '!', '!', '!',
};

static uint8_t udp6[48];

static void make_udp6(uint8_t nh)
{
	memset(udp6, 0, sizeof(udp6));
	udp6[0] = 0x60;
	udp6[6] = nh;
	udp6[7] = 64;
	inet_pton(AF_INET6, "fd77:7764:6e00::2", udp6 + 8);
	inet_pton(AF_INET6, "2001:db8::2", udp6 + 24);
	udp6[40] = 0x13;
	udp6[41] = 0x88;
	udp6[42] = 0x00;
	udp6[43] = 53;
}

static void test_v4(void **state)
{
	struct msg m = {0};
	struct gw_nflog_pkt p;
	char t[64];
	size_t off = 0;

	(void)state;
	packet(&m, 7000, udp4, sizeof(udp4));
	assert_int_equal(gw_nflog_next(m.b, m.len, &off, &p), GW_NFLOG_OK);
	assert_int_equal(p.group, 7000);
	assert_int_equal(p.proto, 17);
	assert_string_equal(gw_addr_str(&p.src, t, sizeof(t)), "10.213.0.2");
	assert_string_equal(gw_addr_str(&p.dst, t, sizeof(t)), "203.0.113.2");
	assert_true(p.has_ports);
	assert_int_equal(p.sport, 5000);
	assert_int_equal(p.dport, 9999);
	assert_int_equal(p.indev, 42);
	assert_int_equal(off, m.len);
	assert_int_equal(gw_nflog_next(m.b, m.len, &off, &p), GW_NFLOG_END);
}

/* the log rule's prefix says what was dropped; UDP-lite carries ports like UDP */
static void test_prefix_udplite(void **state)
{
	static const char longp[] = "warden-host-and-then-much-more-than-fits-in-the-field";
	struct msg m = {0};
	struct gw_nflog_pkt p;
	uint8_t lite[sizeof(udp4)];
	size_t off = 0;

	(void)state;
	memcpy(lite, udp4, sizeof(udp4));
	lite[9] = 136; /* IPPROTO_UDPLITE */
	packet_p(&m, 7000, lite, sizeof(lite), "warden-host", 12);
	packet_p(&m, 7000, udp4, sizeof(udp4), "", 1);		       /* no prefix */
	packet_p(&m, 7000, udp4, sizeof(udp4), longp, sizeof(longp));  /* cut to fit */
	packet_p(&m, 7000, udp4, sizeof(udp4), "warden-connsXYZ", 12); /* no NUL */
	assert_int_equal(gw_nflog_next(m.b, m.len, &off, &p), GW_NFLOG_OK);
	assert_int_equal(p.proto, 136);
	assert_true(p.has_ports);
	assert_int_equal(p.dport, 9999);
	assert_string_equal(p.prefix, "warden-host");
	assert_int_equal(gw_nflog_next(m.b, m.len, &off, &p), GW_NFLOG_OK);
	assert_string_equal(p.prefix, "");
	assert_int_equal(gw_nflog_next(m.b, m.len, &off, &p), GW_NFLOG_OK);
	assert_int_equal(strlen(p.prefix), sizeof(p.prefix) - 1);
	assert_memory_equal(p.prefix, longp, sizeof(p.prefix) - 1);
	assert_int_equal(gw_nflog_next(m.b, m.len, &off, &p), GW_NFLOG_OK);
	assert_string_equal(p.prefix, "warden-conns");
	assert_int_equal(gw_nflog_next(m.b, m.len, &off, &p), GW_NFLOG_END);
}

static void test_v6_and_several(void **state)
{
	struct msg m = {0};
	struct gw_nflog_pkt p;
	char t[64];
	size_t off = 0;
	struct nlmsghdr done = {.nlmsg_len = 16, .nlmsg_type = NLMSG_DONE};

	(void)state;
	make_udp6(17);
	packet(&m, 7000, udp6, sizeof(udp6));
	put(&m, &done, sizeof(done)); /* not a packet: skipped */
	packet(&m, 7000, udp4, sizeof(udp4));
	assert_int_equal(gw_nflog_next(m.b, m.len, &off, &p), GW_NFLOG_OK);
	assert_string_equal(gw_addr_str(&p.src, t, sizeof(t)), "fd77:7764:6e00::2");
	assert_string_equal(gw_addr_str(&p.dst, t, sizeof(t)), "2001:db8::2");
	assert_int_equal(p.dport, 53);
	assert_int_equal(gw_nflog_next(m.b, m.len, &off, &p), GW_NFLOG_ABSENT);
	assert_int_equal(gw_nflog_next(m.b, m.len, &off, &p), GW_NFLOG_OK);
	assert_int_equal(p.dport, 9999);
	assert_int_equal(gw_nflog_next(m.b, m.len, &off, &p), GW_NFLOG_END);
}

static void test_v6_extension_headers(void **state)
{
	uint8_t b[56] = {0};
	struct msg m = {0};
	struct gw_nflog_pkt p;
	size_t off = 0;

	(void)state;
	make_udp6(0); /* hop-by-hop, 8 bytes, then UDP */
	memcpy(b, udp6, 40);
	b[40] = 17;
	b[41] = 0;
	b[48] = 0x13;
	b[49] = 0x88;
	b[50] = 0x01;
	b[51] = 0xbb;
	packet(&m, 1, b, sizeof(b));
	assert_int_equal(gw_nflog_next(m.b, m.len, &off, &p), GW_NFLOG_OK);
	assert_int_equal(p.proto, 17);
	assert_true(p.has_ports);
	assert_int_equal(p.dport, 443);
	/* a later fragment has no ports */
	b[6] = 44;
	b[40] = 17;
	b[42] = 0x01; /* offset 32 */
	b[43] = 0x00;
	m.len = 0;
	off = 0;
	packet(&m, 1, b, sizeof(b));
	assert_int_equal(gw_nflog_next(m.b, m.len, &off, &p), GW_NFLOG_OK);
	assert_false(p.has_ports);
	assert_int_equal(p.proto, 17);
	/* an extension header cut off by the copy range: addresses, no ports */
	b[6] = 0;
	m.len = 0;
	off = 0;
	packet(&m, 1, b, 44);
	assert_int_equal(gw_nflog_next(m.b, m.len, &off, &p), GW_NFLOG_OK);
	assert_false(p.has_ports);
	assert_int_equal(p.src.family, AF_INET6);
}

static void test_v4_fragment_and_cut(void **state)
{
	uint8_t b[64] = {0};
	struct msg m = {0};
	struct gw_nflog_pkt p;
	size_t off = 0;

	(void)state;
	memcpy(b, udp4, sizeof(udp4));
	b[6] = 0x00;
	b[7] = 0x10; /* fragment offset 16: no UDP header here */
	packet(&m, 1, b, sizeof(udp4));
	assert_int_equal(gw_nflog_next(m.b, m.len, &off, &p), GW_NFLOG_OK);
	assert_false(p.has_ports);
	/* payload cut inside the UDP header: no ports */
	m.len = off = 0;
	packet(&m, 1, udp4, 22);
	assert_int_equal(gw_nflog_next(m.b, m.len, &off, &p), GW_NFLOG_OK);
	assert_false(p.has_ports);
	/* payload cut inside the IP header: malformed */
	m.len = off = 0;
	packet(&m, 1, udp4, 19);
	assert_int_equal(gw_nflog_next(m.b, m.len, &off, &p), GW_NFLOG_MALFORMED);
	/* an IHL that points past the payload */
	memcpy(b, udp4, sizeof(udp4));
	b[0] = 0x4f;
	m.len = off = 0;
	packet(&m, 1, b, 40);
	assert_int_equal(gw_nflog_next(m.b, m.len, &off, &p), GW_NFLOG_MALFORMED);
	/* IHL below 5 */
	b[0] = 0x44;
	m.len = off = 0;
	packet(&m, 1, b, sizeof(udp4));
	assert_int_equal(gw_nflog_next(m.b, m.len, &off, &p), GW_NFLOG_MALFORMED);
	/* not IP at all */
	b[0] = 0x50;
	m.len = off = 0;
	packet(&m, 1, b, sizeof(udp4));
	assert_int_equal(gw_nflog_next(m.b, m.len, &off, &p), GW_NFLOG_MALFORMED);
	/* no payload attribute: a packet without addresses */
	m.len = off = 0;
	packet(&m, 1, NULL, 0);
	assert_int_equal(gw_nflog_next(m.b, m.len, &off, &p), GW_NFLOG_OK);
	assert_int_equal(p.src.family, 0);
}

static void test_lying_lengths(void **state)
{
	struct msg m = {0};
	struct gw_nflog_pkt p;
	uint32_t len;
	uint16_t alen;
	size_t off;

	(void)state;
	packet(&m, 1, udp4, sizeof(udp4));
	/* message longer than the buffer */
	len = (uint32_t)m.len + 4;
	memcpy(m.b, &len, 4);
	off = 0;
	assert_int_equal(gw_nflog_next(m.b, m.len, &off, &p), GW_NFLOG_MALFORMED);
	/* shorter than a header */
	len = 8;
	memcpy(m.b, &len, 4);
	off = 0;
	assert_int_equal(gw_nflog_next(m.b, m.len, &off, &p), GW_NFLOG_MALFORMED);
	/* a buffer shorter than a header */
	off = 0;
	assert_int_equal(gw_nflog_next(m.b, 10, &off, &p), GW_NFLOG_MALFORMED);
	/* an attribute longer than its message */
	len = (uint32_t)m.len;
	memcpy(m.b, &len, 4);
	alen = 2000;
	memcpy(m.b + 20, &alen, 2);
	off = 0;
	assert_int_equal(gw_nflog_next(m.b, m.len, &off, &p), GW_NFLOG_MALFORMED);
	/* an attribute shorter than its header */
	alen = 2;
	memcpy(m.b + 20, &alen, 2);
	off = 0;
	assert_int_equal(gw_nflog_next(m.b, m.len, &off, &p), GW_NFLOG_MALFORMED);
	/* an interface index of the wrong size */
	m.len = 0;
	{
		struct nlmsghdr h = {.nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET};
		uint8_t gen[4] = {0};
		uint16_t ix = 1;

		put(&m, &h, sizeof(h));
		put(&m, gen, 4);
		attr(&m, NFULA_IFINDEX_INDEV, &ix, 2);
		len = (uint32_t)m.len;
		memcpy(m.b, &len, 4);
	}
	off = 0;
	assert_int_equal(gw_nflog_next(m.b, m.len, &off, &p), GW_NFLOG_MALFORMED);
	/* a packet message without its nfgenmsg */
	m.len = 0;
	{
		struct nlmsghdr h = {.nlmsg_len = 16,
				     .nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET};

		put(&m, &h, sizeof(h));
	}
	off = 0;
	assert_int_equal(gw_nflog_next(m.b, m.len, &off, &p), GW_NFLOG_MALFORMED);
	/* empty buffer */
	off = 0;
	assert_int_equal(gw_nflog_next(m.b, 0, &off, &p), GW_NFLOG_END);
}

static void test_bucket(void **state)
{
	struct gw_bucket b = {0};
	uint64_t t = 1000000000ull;
	int passed = 0;

	(void)state;
	for (int i = 0; i < 100; i++)
		passed += gw_bucket_take(&b, t, 20, 5);
	assert_int_equal(passed, 20);				   /* the burst, then nothing */
	assert_false(gw_bucket_take(&b, t + 100000000ull, 20, 5)); /* 0.1 s: half a token */
	assert_true(gw_bucket_take(&b, t + 200000000ull, 20, 5));  /* 0.2 s: one */
	assert_false(gw_bucket_take(&b, t + 200000000ull, 20, 5));
	/* a long pause refills to the burst, no more */
	passed = 0;
	for (int i = 0; i < 100; i++)
		passed += gw_bucket_take(&b, t + 3600000000000ull, 20, 5);
	assert_int_equal(passed, 20);
	/* the clock going backwards takes nothing and adds nothing */
	assert_false(gw_bucket_take(&b, t, 20, 5));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_v4),
	    cmocka_unit_test(test_prefix_udplite),
	    cmocka_unit_test(test_v6_and_several),
	    cmocka_unit_test(test_v6_extension_headers),
	    cmocka_unit_test(test_v4_fragment_and_cut),
	    cmocka_unit_test(test_lying_lengths),
	    cmocka_unit_test(test_bucket),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

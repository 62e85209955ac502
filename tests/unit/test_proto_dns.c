/* test_proto_dns.c - unit tests for DNS parsing and composing (gateway/proto/dns.c):
 * real dig queries and dnsmasq responses, compression pointer attacks, counts
 * that lie, EDNS and Extended DNS Errors, truncation to the client's size, and the
 * query composer (the launcher's liveness probe uses it). */
#include "common/common.h"
#include "gateway/proto/proto.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proto_captures.h"

/* ---- a message builder ---- */

struct mb {
	uint8_t b[4096];
	size_t n;
};

static void m8(struct mb *m, unsigned v)
{
	m->b[m->n++] = (uint8_t)v;
}

static void m16(struct mb *m, unsigned v)
{
	m8(m, v >> 8);
	m8(m, v);
}

static void m32(struct mb *m, uint32_t v)
{
	m16(m, v >> 16);
	m16(m, v & 0xffff);
}

static void mmem(struct mb *m, const void *p, size_t n)
{
	if (n)
		memcpy(m->b + m->n, p, n);
	m->n += n;
}

/* a dotted name in wire form, uncompressed */
static void mname(struct mb *m, const char *name)
{
	while (*name) {
		const char *dot = strchr(name, '.');
		size_t l = dot ? (size_t)(dot - name) : strlen(name);

		m8(m, l);
		mmem(m, name, l);
		name += l + (dot ? 1 : 0);
	}
	m8(m, 0);
}

static void header(struct mb *m, unsigned id, unsigned flags, unsigned qd, unsigned an, unsigned ns,
		   unsigned ar)
{
	m->n = 0;
	m16(m, id);
	m16(m, flags);
	m16(m, qd);
	m16(m, an);
	m16(m, ns);
	m16(m, ar);
}

static void opt(struct mb *m, unsigned udp, uint32_t ttl, const void *rdata, size_t n)
{
	m8(m, 0);
	m16(m, DNS_TYPE_OPT);
	m16(m, udp);
	m32(m, ttl);
	m16(m, n);
	mmem(m, rdata, n);
}

/* a standard query for @name/@type, with an OPT when @udp > 0 */
static void query(struct mb *m, const char *name, unsigned type, unsigned udp)
{
	header(m, 0xbeef, 0x0100, 1, 0, 0, udp ? 1 : 0);
	mname(m, name);
	m16(m, type);
	m16(m, DNS_CLASS_IN);
	if (udp)
		opt(m, udp, 0x8000, NULL, 0);
}

/* ---- queries ---- */

struct qcap {
	const char *file;
	const char *qname;
	uint16_t qtype;
	bool edns;
};

static const struct qcap qcaps[] = {
    {"dns-query-edns.bin", "allowed.test", DNS_TYPE_A, true},
    {"dns-query-noedns.bin", "allowed.test", DNS_TYPE_AAAA, false},
    {"dns-query-https.bin", "allowed.test", DNS_TYPE_HTTPS, true},
};

static void test_query_captures(void **state)
{
	struct dns_query q;

	(void)state;
	for (size_t i = 0; i < WD_ARRAY_SIZE(qcaps); i++) {
		size_t len;
		uint8_t *b = capture(qcaps[i].file, &len);

		assert_int_equal(dns_query_parse(b, len, &q), DNS_OK);
		assert_string_equal(q.qname, qcaps[i].qname);
		assert_int_equal(q.qtype, qcaps[i].qtype);
		assert_int_equal(q.qclass, DNS_CLASS_IN);
		assert_int_equal(q.edns.present, qcaps[i].edns);
		assert_true(q.rd);
		assert_true(q.header_ok);
		assert_true(q.question_ok);
		if (q.edns.present) {
			assert_int_equal(q.edns.version, 0);
			assert_true(q.edns.udp_size >= 512);
		}
		/* every truncation is MALFORMED (UDP) */
		for (size_t k = 0; k < len; k++) {
			uint8_t *copy = malloc(k ? k : 1);

			memcpy(copy, b, k);
			if (dns_query_parse(copy, k, &q) != DNS_MALFORMED)
				fail_msg("%s: %zu bytes parsed", qcaps[i].file, k);
			free(copy);
		}
		free(b);
	}
}

static void test_query_case_and_root(void **state)
{
	struct mb m;
	struct dns_query q;

	(void)state;
	query(&m, "AlLoWeD.TeSt", DNS_TYPE_A, 0);
	assert_int_equal(dns_query_parse(m.b, m.n, &q), DNS_OK);
	assert_string_equal(q.qname, "allowed.test");
	assert_int_equal(q.qname_wire_len, 14);
	assert_memory_equal(q.qname_wire, "\7AlLoWeD\4TeSt", 14);
	query(&m, "", DNS_TYPE_NS, 0);
	assert_int_equal(dns_query_parse(m.b, m.n, &q), DNS_OK);
	assert_string_equal(q.qname, "");
	query(&m, "_dmarc.x-y.test", DNS_TYPE_TXT, 0);
	assert_int_equal(dns_query_parse(m.b, m.n, &q), DNS_OK);
}

struct bad_case {
	const char *what;
	uint16_t hint;
	bool header_ok;
};

static void expect_bad(const struct mb *m, const char *what, uint16_t hint, bool header_ok)
{
	struct dns_query q;

	if (dns_query_parse(m->b, m->n, &q) != DNS_MALFORMED)
		fail_msg("%s: not MALFORMED", what);
	assert_non_null(q.why);
	if (q.header_ok != header_ok)
		fail_msg("%s: header_ok %d", what, q.header_ok);
	if (header_ok && q.rcode_hint != hint)
		fail_msg("%s: hint %u want %u (%s)", what, q.rcode_hint, hint, q.why);
}

static void test_query_header_rules(void **state)
{
	struct mb m;

	(void)state;
	header(&m, 1, 0, 1, 0, 0, 0);
	m.n = 11;
	expect_bad(&m, "short header", 0, false);
	query(&m, "a.test", 1, 0);
	m.b[2] |= 0x80;
	expect_bad(&m, "QR", 0, false);
	query(&m, "a.test", 1, 0);
	m.b[2] |= 2 << 3;
	expect_bad(&m, "opcode STATUS", DNS_RCODE_NOTIMP, true);
	query(&m, "a.test", 1, 0);
	m.b[2] |= 0x02;
	expect_bad(&m, "TC", DNS_RCODE_FORMERR, true);
	query(&m, "a.test", 1, 0);
	m.b[5] = 0;
	m.n = 12;
	expect_bad(&m, "QDCOUNT 0", DNS_RCODE_FORMERR, true);
	query(&m, "a.test", 1, 0);
	m.b[5] = 2;
	expect_bad(&m, "QDCOUNT 2", DNS_RCODE_FORMERR, true);
	query(&m, "a.test", 1, 0);
	m.b[7] = 1;
	expect_bad(&m, "ANCOUNT lies", DNS_RCODE_FORMERR, true);
	query(&m, "a.test", 1, 0);
	m.b[11] = 3;
	expect_bad(&m, "ARCOUNT lies", DNS_RCODE_FORMERR, true);
	query(&m, "a.test", 1, 0);
	m8(&m, 0);
	expect_bad(&m, "trailing byte", DNS_RCODE_FORMERR, true);
}

static void test_names(void **state)
{
	struct mb m;
	struct dns_query q;

	(void)state;
	/* pointer to itself */
	header(&m, 1, 0x100, 1, 0, 0, 0);
	m16(&m, 0xc00c);
	m16(&m, 1);
	m16(&m, 1);
	expect_bad(&m, "self pointer", DNS_RCODE_FORMERR, true);
	/* pointer forward */
	header(&m, 1, 0x100, 1, 0, 0, 0);
	m16(&m, 0xc010);
	m16(&m, 1);
	m16(&m, 1);
	mname(&m, "a.test");
	expect_bad(&m, "forward pointer", DNS_RCODE_FORMERR, true);
	/* pointer into the header */
	header(&m, 1, 0x100, 1, 0, 0, 0);
	m16(&m, 0xc004);
	m16(&m, 1);
	m16(&m, 1);
	expect_bad(&m, "pointer into header", DNS_RCODE_FORMERR, true);
	/* pointer out of range */
	header(&m, 1, 0x100, 1, 0, 0, 0);
	m16(&m, 0xcfff);
	m16(&m, 1);
	m16(&m, 1);
	expect_bad(&m, "pointer out of range", DNS_RCODE_FORMERR, true);
	/* a loop made of two pointers in the additional section */
	query(&m, "a.test", 1, 0);
	m.b[11] = 1;
	{
		size_t at = m.n;

		m16(&m, 0xc000 | (unsigned)(at + 2));
		m16(&m, 0xc000 | (unsigned)at);
		m16(&m, 1);
		m16(&m, 1);
		m32(&m, 0);
		m16(&m, 0);
	}
	expect_bad(&m, "pointer loop", DNS_RCODE_FORMERR, true);
	/* label types 0x40 and 0x80, label 64 */
	header(&m, 1, 0x100, 1, 0, 0, 0);
	m8(&m, 0x41);
	m.n += 65;
	m16(&m, 1);
	m16(&m, 1);
	expect_bad(&m, "label 65", DNS_RCODE_FORMERR, true);
	header(&m, 1, 0x100, 1, 0, 0, 0);
	m8(&m, 0x80);
	m8(&m, 0);
	m16(&m, 1);
	m16(&m, 1);
	expect_bad(&m, "label type 0x80", DNS_RCODE_FORMERR, true);
	/* 255 bytes in wire form is the most */
	{
		char name[300];
		char l63[64], l61[64];

		memset(l63, 'a', 63);
		l63[63] = '\0';
		memset(l61, 'b', 61);
		l61[61] = '\0';
		snprintf(name, sizeof(name), "%s.%s.%s.%s", l63, l63, l63, l61);
		query(&m, name, 1, 0);
		assert_int_equal(dns_query_parse(m.b, m.n, &q), DNS_OK);
		assert_int_equal(q.qname_wire_len, 255);
		assert_int_equal(strlen(q.qname), 253);
		snprintf(name, sizeof(name), "%s.%s.%s.%sb", l63, l63, l63, l61);
		query(&m, name, 1, 0);
		expect_bad(&m, "256-byte name", DNS_RCODE_FORMERR, true);
		/* 255 reached through a pointer: still counted, 256 refused */
		for (int extra = 0; extra <= 1; extra++) {
			struct dns_response r;

			l61[61] = extra ? 'b' : '\0';
			l61[62] = '\0';
			header(&m, 1, 0x8100, 1, 1, 0, 0);
			snprintf(name, sizeof(name), "%s.%s.%s", l63, l63, l61);
			mname(&m, name);
			m16(&m, 1);
			m16(&m, 1);
			m8(&m, 63);
			mmem(&m, l63, 63);
			m16(&m, 0xc00c);
			m16(&m, 1);
			m16(&m, 1);
			m32(&m, 60);
			m16(&m, 4);
			m32(&m, 0x01020304);
			assert_int_equal(dns_response_parse(m.b, m.n, &r),
					 extra ? DNS_MALFORMED : DNS_OK);
		}
	}
	/* characters outside a host name: REFUSED, question still echoable */
	query(&m, "a b.test", 1, 0);
	expect_bad(&m, "space in name", DNS_RCODE_REFUSED, true);
	assert_int_equal(dns_query_parse(m.b, m.n, &q), DNS_MALFORMED);
	assert_true(q.question_ok);
	header(&m, 1, 0x100, 1, 0, 0, 0);
	m8(&m, 3);
	mmem(&m, "a.b", 3); /* a dot inside a label */
	m8(&m, 4);
	mmem(&m, "test", 4);
	m8(&m, 0);
	m16(&m, 1);
	m16(&m, 1);
	expect_bad(&m, "dot in label", DNS_RCODE_REFUSED, true);
	/* the name for the audit log: bytes outside a host name are '?', so a dot
	 * inside a label cannot make it read as another name */
	assert_int_equal(dns_query_parse(m.b, m.n, &q), DNS_MALFORMED);
	assert_string_equal(q.qname, "a?b.test");
	assert_int_equal(q.qtype, 1);
	query(&m, "A B.Test", 1, 0);
	assert_int_equal(dns_query_parse(m.b, m.n, &q), DNS_MALFORMED);
	assert_string_equal(q.qname, "a?b.test");
	/* truncated inside the name, inside the question */
	query(&m, "a.test", 1, 0);
	m.n = 15;
	expect_bad(&m, "cut in name", DNS_RCODE_FORMERR, true);
	query(&m, "a.test", 1, 0);
	m.n -= 1;
	expect_bad(&m, "cut in qclass", DNS_RCODE_FORMERR, true);
}

static void test_edns(void **state)
{
	static const uint8_t cookie[] = {0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8};
	static const uint8_t bad_opt[] = {0, 10, 0, 9, 1, 2, 3, 4, 5, 6, 7, 8};
	struct mb m;
	struct dns_query q;

	(void)state;
	query(&m, "a.test", 1, 0);
	m.b[11] = 1;
	opt(&m, 4096, 0x8000, cookie, sizeof(cookie));
	assert_int_equal(dns_query_parse(m.b, m.n, &q), DNS_OK);
	assert_true(q.edns.present);
	assert_int_equal(q.edns.udp_size, 4096);
	assert_true(q.edns.do_bit);
	assert_int_equal(q.edns.n_options, 1);
	/* an option that runs past the OPT rdata */
	query(&m, "a.test", 1, 0);
	m.b[11] = 1;
	opt(&m, 4096, 0, bad_opt, sizeof(bad_opt));
	expect_bad(&m, "option overruns", DNS_RCODE_FORMERR, true);
	/* two OPTs */
	query(&m, "a.test", 1, 1232);
	m.b[11] = 2;
	opt(&m, 1232, 0, NULL, 0);
	expect_bad(&m, "two OPT", DNS_RCODE_FORMERR, true);
	/* OPT with a non-root owner */
	query(&m, "a.test", 1, 0);
	m.b[11] = 1;
	mname(&m, "x");
	m16(&m, DNS_TYPE_OPT);
	m16(&m, 512);
	m32(&m, 0);
	m16(&m, 0);
	expect_bad(&m, "OPT owner", DNS_RCODE_FORMERR, true);
	/* OPT in the answer section */
	query(&m, "a.test", 1, 0);
	m.b[7] = 1;
	opt(&m, 512, 0, NULL, 0);
	expect_bad(&m, "OPT in answer", DNS_RCODE_FORMERR, true);
	/* EDNS version 1: BADVERS */
	query(&m, "a.test", 1, 0);
	m.b[11] = 1;
	opt(&m, 1232, 0x00010000, NULL, 0);
	expect_bad(&m, "EDNS version 1", DNS_RCODE_BADVERS, true);
	{
		struct dns_reply r = {.rcode = DNS_RCODE_BADVERS};
		struct dns_response resp;
		uint8_t out[512];
		int n;

		assert_int_equal(dns_query_parse(m.b, m.n, &q), DNS_MALFORMED);
		n = dns_reply_compose(&q, &r, out, sizeof(out));
		assert_true(n > 0);
		assert_int_equal(dns_response_parse(out, (size_t)n, &resp), DNS_OK);
		assert_int_equal(resp.rcode, DNS_RCODE_BADVERS);
		assert_int_equal(resp.flags & 0xf, 0);
	}
}

/* compose a reply to @q and parse it back */
static void reply(const struct dns_query *q, const struct dns_reply *r, uint8_t *out, size_t size,
		  struct dns_response *resp, size_t *n)
{
	int ret = dns_reply_compose(q, r, out, size);

	assert_true(ret > 0);
	*n = (size_t)ret;
	assert_int_equal(dns_response_parse(out, *n, resp), DNS_OK);
	assert_int_equal(resp->id, q->id);
}

static void test_compose_answers(void **state)
{
	struct dns_answer a[2] = {
	    {.type = DNS_TYPE_A, .ttl = 30, .addr = {10, 99, 0, 7}},
	    {.type = DNS_TYPE_A, .ttl = 30, .addr = {10, 99, 0, 8}},
	};
	struct dns_reply r = {.rcode = DNS_RCODE_NOERROR, .aa = true, .answers = a, .n_answers = 2};
	struct dns_response resp;
	struct dns_rr_iter it;
	struct dns_rr rr;
	struct dns_query q;
	uint8_t out[1024];
	size_t len, n;
	uint8_t *b = capture("dns-query-edns.bin", &len);

	(void)state;
	assert_int_equal(dns_query_parse(b, len, &q), DNS_OK);
	reply(&q, &r, out, sizeof(out), &resp, &n);
	assert_int_equal(resp.flags & 0x8000, 0x8000);		 /* QR */
	assert_int_equal(resp.flags & 0x0400, 0x0400);		 /* AA */
	assert_int_equal(resp.flags & 0x0080, 0x0080);		 /* RA */
	assert_int_equal(resp.flags & 0x0100, q.flags & 0x0100); /* RD copied */
	assert_false(resp.tc);
	assert_string_equal(resp.qname, "allowed.test");
	assert_int_equal(resp.qtype, DNS_TYPE_A);
	assert_int_equal(resp.counts[1], 2);
	assert_true(resp.edns.present);
	assert_int_equal(resp.edns.udp_size, DNS_OUR_UDP_SIZE);
	dns_rr_iter_init(&it, &resp);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(dns_rr_next(out, n, &it, &rr), DNS_OK);
		assert_int_equal(rr.section, DNS_SECTION_ANSWER);
		assert_string_equal(rr.name, "allowed.test");
		assert_int_equal(rr.type, DNS_TYPE_A);
		assert_int_equal(rr.ttl, 30);
		assert_memory_equal(rr.addr, a[i].addr, 4);
	}
	assert_int_equal(dns_rr_next(out, n, &it, &rr), DNS_OK);
	assert_int_equal(rr.type, DNS_TYPE_OPT);
	assert_int_equal(rr.section, DNS_SECTION_ADDITIONAL);
	assert_int_equal(dns_rr_next(out, n, &it, &rr), DNS_ABSENT);
	/* the question is echoed byte for byte */
	assert_memory_equal(out + 12, b + 12, q.qname_wire_len + 4);
	free(b);

	/* AAAA to a query without EDNS: no OPT, even if EDE was asked for */
	b = capture("dns-query-noedns.bin", &len);
	assert_int_equal(dns_query_parse(b, len, &q), DNS_OK);
	a[0].type = DNS_TYPE_AAAA;
	memcpy(a[0].addr, "\xfd\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x01", 16);
	r.n_answers = 1;
	r.aa = false;
	r.ede = true;
	r.ede_code = DNS_EDE_BLOCKED;
	reply(&q, &r, out, sizeof(out), &resp, &n);
	assert_int_equal(resp.flags & 0x0400, 0);
	assert_false(resp.edns.present);
	assert_int_equal(resp.counts[3], 0);
	dns_rr_iter_init(&it, &resp);
	assert_int_equal(dns_rr_next(out, n, &it, &rr), DNS_OK);
	assert_int_equal(rr.type, DNS_TYPE_AAAA);
	assert_memory_equal(rr.addr, a[0].addr, 16);
	free(b);
}

static void test_compose_denials(void **state)
{
	struct dns_reply r = {.rcode = DNS_RCODE_NXDOMAIN,
			      .ede = true,
			      .ede_code = DNS_EDE_BLOCKED,
			      .ede_text = "not in policy \"ci\"\n"};
	struct dns_response resp;
	struct dns_rr_iter it;
	struct dns_rr rr;
	struct dns_query q;
	uint8_t out[1024];
	size_t len, n;
	uint8_t *b = capture("dns-query-https.bin", &len);
	static const uint8_t ede[] = "\x00\x0f\x00\x15\x00\x0fnot in policy \"ci\"?";

	(void)state;
	assert_int_equal(dns_query_parse(b, len, &q), DNS_OK);
	reply(&q, &r, out, sizeof(out), &resp, &n);
	assert_int_equal(resp.rcode, DNS_RCODE_NXDOMAIN);
	assert_int_equal(resp.counts[1], 0);
	dns_rr_iter_init(&it, &resp);
	assert_int_equal(dns_rr_next(out, n, &it, &rr), DNS_OK);
	assert_int_equal(rr.type, DNS_TYPE_OPT);
	assert_int_equal(rr.rdata.len, sizeof(ede) - 1);
	assert_memory_equal(out + rr.rdata.off, ede, sizeof(ede) - 1);

	/* HTTPS: NOERROR, no answers (NODATA); REFUSED with Prohibited */
	r = (struct dns_reply){.rcode = DNS_RCODE_NOERROR, .aa = true};
	reply(&q, &r, out, sizeof(out), &resp, &n);
	assert_int_equal(resp.rcode, 0);
	assert_int_equal(resp.counts[1], 0);
	assert_int_equal(resp.qtype, DNS_TYPE_HTTPS);
	r = (struct dns_reply){
	    .rcode = DNS_RCODE_REFUSED, .ede = true, .ede_code = DNS_EDE_PROHIBITED};
	reply(&q, &r, out, sizeof(out), &resp, &n);
	assert_int_equal(resp.rcode, DNS_RCODE_REFUSED);
	free(b);

	/* bad arguments */
	r = (struct dns_reply){.rcode = DNS_RCODE_BADVERS};
	b = capture("dns-query-noedns.bin", &len);
	assert_int_equal(dns_query_parse(b, len, &q), DNS_OK);
	assert_int_equal(dns_reply_compose(&q, &r, out, sizeof(out)), -EINVAL);
	{
		struct dns_answer bad = {.type = DNS_TYPE_MX};

		r = (struct dns_reply){.answers = &bad, .n_answers = 1};
		assert_int_equal(dns_reply_compose(&q, &r, out, sizeof(out)), -EINVAL);
	}
	r = (struct dns_reply){.rcode = 0};
	assert_int_equal(dns_reply_compose(&q, &r, out, 12), -ENOSPC);
	free(b);
}

static void test_compose_formerr(void **state)
{
	struct mb m;
	struct dns_query q;
	struct dns_reply r = {.rcode = DNS_RCODE_FORMERR};
	struct dns_response resp;
	uint8_t out[512];
	size_t n;

	(void)state;
	query(&m, "a.test", 1, 0);
	m.b[5] = 2; /* QDCOUNT 2: no question parsed */
	assert_int_equal(dns_query_parse(m.b, m.n, &q), DNS_MALFORMED);
	assert_false(q.question_ok);
	reply(&q, &r, out, sizeof(out), &resp, &n);
	assert_int_equal(n, 12);
	assert_int_equal(resp.counts[0], 0);
	assert_int_equal(resp.rcode, DNS_RCODE_FORMERR);
	/* no reply to a response */
	query(&m, "a.test", 1, 0);
	m.b[2] |= 0x80;
	assert_int_equal(dns_query_parse(m.b, m.n, &q), DNS_MALFORMED);
	assert_int_equal(dns_reply_compose(&q, &r, out, sizeof(out)), -EINVAL);
}

static void test_truncation(void **state)
{
	static struct dns_answer a[40];
	struct dns_reply r = {.answers = a, .n_answers = 40, .ede = true, .ede_code = 15};
	struct dns_response resp;
	struct dns_query q;
	struct mb m;
	uint8_t out[8192];
	size_t n;

	(void)state;
	for (int i = 0; i < 40; i++)
		a[i] = (struct dns_answer){
		    .type = DNS_TYPE_AAAA,
		    .ttl = 5,
		    .addr = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (uint8_t)i}};
	/* no EDNS: 512 bytes */
	query(&m, "a.test", DNS_TYPE_AAAA, 0);
	assert_int_equal(dns_query_parse(m.b, m.n, &q), DNS_OK);
	reply(&q, &r, out, sizeof(out), &resp, &n);
	assert_true(resp.tc);
	assert_int_equal(resp.counts[1], 0);
	assert_true(n <= 512);
	/* the same over TCP fits */
	r.tcp = true;
	reply(&q, &r, out, sizeof(out), &resp, &n);
	assert_false(resp.tc);
	assert_int_equal(resp.counts[1], 40);
	r.tcp = false;
	/* EDNS 4096 fits; EDNS 600 does not; a UDP size below 512 means 512 */
	query(&m, "a.test", DNS_TYPE_AAAA, 4096);
	assert_int_equal(dns_query_parse(m.b, m.n, &q), DNS_OK);
	reply(&q, &r, out, sizeof(out), &resp, &n);
	assert_false(resp.tc);
	assert_int_equal(resp.counts[1], 40);
	query(&m, "a.test", DNS_TYPE_AAAA, 600);
	assert_int_equal(dns_query_parse(m.b, m.n, &q), DNS_OK);
	reply(&q, &r, out, sizeof(out), &resp, &n);
	assert_true(resp.tc);
	assert_true(resp.edns.present); /* OPT (with the EDE) is kept */
	assert_true(n <= 600);
	query(&m, "a.test", DNS_TYPE_AAAA, 100);
	assert_int_equal(dns_query_parse(m.b, m.n, &q), DNS_OK);
	r.n_answers = 10; /* 12 + 12 + 280 + 17 < 512 */
	reply(&q, &r, out, sizeof(out), &resp, &n);
	assert_false(resp.tc);
	/* the caller's buffer is a limit too */
	r.n_answers = 40;
	reply(&q, &r, out, 200, &resp, &n);
	assert_true(resp.tc);
	assert_true(n <= 200);
}

/* a long EDE text is shortened to fit a 512-byte reply to a long name */
static void test_ede_text_shortened(void **state)
{
	char text[300], name[300];
	struct dns_reply r = {
	    .rcode = DNS_RCODE_NXDOMAIN, .ede = true, .ede_code = 18, .ede_text = text};
	struct dns_response resp;
	struct dns_query q;
	struct mb m;
	uint8_t out[1024];
	size_t n;

	(void)state;
	memset(text, 't', sizeof(text) - 1);
	text[sizeof(text) - 1] = '\0';
	memset(name, 'n', 253);
	for (int i = 60; i < 253; i += 61)
		name[i] = '.';
	name[253] = '\0';
	query(&m, name, 1, 512);
	assert_int_equal(dns_query_parse(m.b, m.n, &q), DNS_OK);
	reply(&q, &r, out, sizeof(out), &resp, &n);
	assert_int_equal(n, 512);
	assert_true(resp.edns.present);
}

/* ---- responses from a real dnsmasq ---- */

static void test_response_captures(void **state)
{
	struct dns_response resp;
	struct dns_rr_iter it;
	struct dns_rr rr;
	size_t len;
	uint8_t *b;
	static const uint8_t v4[] = {203, 0, 113, 10};
	static const uint8_t v6[] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10};

	(void)state;
	b = capture("dns-resp-a.bin", &len);
	assert_int_equal(dns_response_parse(b, len, &resp), DNS_OK);
	assert_int_equal(resp.id, 0x4a21);
	assert_int_equal(resp.rcode, 0);
	assert_string_equal(resp.qname, "allowed.test");
	assert_true(resp.edns.present);
	dns_rr_iter_init(&it, &resp);
	assert_int_equal(dns_rr_next(b, len, &it, &rr), DNS_OK);
	assert_string_equal(rr.name, "allowed.test");
	assert_int_equal(rr.type, DNS_TYPE_A);
	assert_memory_equal(rr.addr, v4, 4);
	free(b);

	b = capture("dns-resp-aaaa.bin", &len);
	assert_int_equal(dns_response_parse(b, len, &resp), DNS_OK);
	assert_false(resp.edns.present);
	dns_rr_iter_init(&it, &resp);
	assert_int_equal(dns_rr_next(b, len, &it, &rr), DNS_OK);
	assert_int_equal(rr.type, DNS_TYPE_AAAA);
	assert_memory_equal(rr.addr, v6, 16);
	assert_int_equal(dns_rr_next(b, len, &it, &rr), DNS_ABSENT);
	free(b);

	b = capture("dns-resp-cname.bin", &len);
	assert_int_equal(dns_response_parse(b, len, &resp), DNS_OK);
	assert_string_equal(resp.qname, "www.allowed.test");
	dns_rr_iter_init(&it, &resp);
	assert_int_equal(dns_rr_next(b, len, &it, &rr), DNS_OK);
	assert_string_equal(rr.name, "www.allowed.test");
	assert_int_equal(rr.type, DNS_TYPE_CNAME);
	assert_string_equal(rr.target, "allowed.test");
	assert_int_equal(dns_rr_next(b, len, &it, &rr), DNS_OK);
	assert_string_equal(rr.name, "allowed.test");
	assert_int_equal(rr.type, DNS_TYPE_A);
	assert_memory_equal(rr.addr, v4, 4);
	free(b);

	b = capture("dns-resp-nx.bin", &len);
	assert_int_equal(dns_response_parse(b, len, &resp), DNS_OK);
	assert_int_equal(resp.rcode, DNS_RCODE_NXDOMAIN);
	assert_int_equal(resp.counts[1], 0);
	/* truncations of a response are MALFORMED too */
	for (size_t k = 0; k < len; k++)
		assert_int_equal(dns_response_parse(b, k, &resp), DNS_MALFORMED);
	free(b);
}

static void test_response_rdata(void **state)
{
	struct dns_response resp;
	struct mb m;
	size_t rd;

	(void)state;
	/* A with 5 bytes of rdata */
	header(&m, 7, 0x8180, 1, 1, 0, 0);
	mname(&m, "a.test");
	m16(&m, 1);
	m16(&m, 1);
	m16(&m, 0xc00c);
	m16(&m, 1);
	m16(&m, 1);
	m32(&m, 60);
	m16(&m, 5);
	m32(&m, 0);
	m8(&m, 0);
	assert_int_equal(dns_response_parse(m.b, m.n, &resp), DNS_MALFORMED);
	/* CNAME whose name is shorter / longer than its rdlength */
	for (int delta = -1; delta <= 1; delta++) {
		header(&m, 7, 0x8180, 1, 1, 0, 0);
		mname(&m, "a.test");
		m16(&m, 1);
		m16(&m, 1);
		m16(&m, 0xc00c);
		m16(&m, DNS_TYPE_CNAME);
		m16(&m, 1);
		m32(&m, 60);
		rd = m.n;
		m16(&m, 0);
		m8(&m, 1);
		m8(&m, 'b');
		m16(&m, 0xc00e); /* "test" of the question */
		m.b[rd + 1] = (uint8_t)(4 + delta);
		if (delta > 0)
			m8(&m, 0);
		{
			struct dns_rr_iter it;
			struct dns_rr rr;
			enum dns_result got = dns_response_parse(m.b, m.n, &resp);

			assert_int_equal(got, delta ? DNS_MALFORMED : DNS_OK);
			if (!delta) {
				dns_rr_iter_init(&it, &resp);
				assert_int_equal(dns_rr_next(m.b, m.n, &it, &rr), DNS_OK);
				assert_string_equal(rr.target, "b.test");
			}
		}
	}
	/* QR clear, QDCOUNT 2 */
	header(&m, 7, 0x0100, 0, 0, 0, 0);
	assert_int_equal(dns_response_parse(m.b, m.n, &resp), DNS_MALFORMED);
	header(&m, 7, 0x8100, 2, 0, 0, 0);
	assert_int_equal(dns_response_parse(m.b, m.n, &resp), DNS_MALFORMED);
	header(&m, 7, 0x8100, 0, 0, 0, 0);
	assert_int_equal(dns_response_parse(m.b, m.n, &resp), DNS_OK);
}

static void test_tcp_frame(void **state)
{
	static const uint8_t f[] = {0, 12, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 99};
	static const uint8_t tiny[] = {0, 11};
	size_t off = 0, n = 0;

	(void)state;
	assert_int_equal(dns_tcp_frame(f, 0, &off, &n), DNS_NEED_MORE);
	assert_int_equal(dns_tcp_frame(f, 1, &off, &n), DNS_NEED_MORE);
	assert_int_equal(dns_tcp_frame(f, 13, &off, &n), DNS_NEED_MORE);
	assert_int_equal(dns_tcp_frame(f, 14, &off, &n), DNS_OK);
	assert_int_equal(off, 2);
	assert_int_equal(n, 12);
	assert_int_equal(dns_tcp_frame(f, sizeof(f), &off, &n), DNS_OK);
	assert_int_equal(dns_tcp_frame(tiny, sizeof(tiny), &off, &n), DNS_MALFORMED);
}

static void test_name_equal(void **state)
{
	(void)state;
	assert_true(dns_name_equal("Allowed.Test", "allowed.test."));
	assert_true(dns_name_equal("", "."));
	assert_false(dns_name_equal("allowed.test", "allowed.tes"));
	assert_false(dns_name_equal("a.test..", "a.test"));
}

/* dns_query_compose(): the query dns_query_parse() reads back, lower-case, RD, class IN; a
 * name that is no host name is refused; a buffer one byte short is -ENOSPC */
static void test_query_compose(void **state)
{
	static const uint8_t want[] = {0xab, 0xcd, 0x01, 0x00, 0,   1,	 0,   0,   0,	0,   0,
				       0,    3,	   'w',	 'w',  'w', 7,	 'e', 'x', 'a', 'm', 'p',
				       'l',  'e',  3,	 'c',  'o', 'm', 0,   0,   28,	0,   1};
	char longname[300];
	uint8_t out[512];
	struct dns_query q;

	(void)state;
	assert_int_equal(
	    dns_query_compose(0xabcd, "WWW.Example.com.", DNS_TYPE_AAAA, out, sizeof(out)),
	    (int)sizeof(want));
	assert_memory_equal(out, want, sizeof(want));
	assert_int_equal(dns_query_parse(out, sizeof(want), &q), DNS_OK);
	assert_int_equal(q.id, 0xabcd);
	assert_true(q.rd);
	assert_string_equal(q.qname, "www.example.com");
	assert_int_equal(q.qtype, DNS_TYPE_AAAA);
	assert_int_equal(q.qclass, DNS_CLASS_IN);
	assert_false(q.edns.present);

	assert_int_equal(
	    dns_query_compose(1, "www.example.com", DNS_TYPE_AAAA, out, sizeof(want) - 1), -ENOSPC);
	assert_int_equal(dns_query_compose(1, "www.example.com", DNS_TYPE_AAAA, out, sizeof(want)),
			 (int)sizeof(want));
	assert_int_equal(dns_query_compose(1, "", DNS_TYPE_A, out, sizeof(out)), -EINVAL);
	assert_int_equal(dns_query_compose(1, "a..b", DNS_TYPE_A, out, sizeof(out)), -EINVAL);
	assert_int_equal(dns_query_compose(1, "a b", DNS_TYPE_A, out, sizeof(out)), -EINVAL);
	assert_int_equal(dns_query_compose(1, "10.0.0.1", DNS_TYPE_A, out, sizeof(out)), -EINVAL);
	assert_int_equal(dns_query_compose(1, NULL, DNS_TYPE_A, out, sizeof(out)), -EINVAL);
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(dns_query_compose(1, longname, DNS_TYPE_A, out, sizeof(out)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_query_captures),
	    cmocka_unit_test(test_query_case_and_root),
	    cmocka_unit_test(test_query_header_rules),
	    cmocka_unit_test(test_names),
	    cmocka_unit_test(test_edns),
	    cmocka_unit_test(test_compose_answers),
	    cmocka_unit_test(test_compose_denials),
	    cmocka_unit_test(test_compose_formerr),
	    cmocka_unit_test(test_truncation),
	    cmocka_unit_test(test_ede_text_shortened),
	    cmocka_unit_test(test_response_captures),
	    cmocka_unit_test(test_response_rdata),
	    cmocka_unit_test(test_tcp_frame),
	    cmocka_unit_test(test_name_equal),
	    cmocka_unit_test(test_query_compose),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

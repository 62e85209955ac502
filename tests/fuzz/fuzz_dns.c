/* fuzz_dns.c - libFuzzer harness for DNS parsing and composing: must never
 * crash; every record of an accepted response can be walked; a reply
 * composed for any query that allows one parses back as a response. */
#include "gateway/proto/proto.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t out[70000];

static void walk(const uint8_t *data, size_t size)
{
	struct dns_response resp;
	struct dns_rr_iter it;
	struct dns_rr rr;
	unsigned n = 0;
	enum dns_result r;

	if (dns_response_parse(data, size, &resp) != DNS_OK)
		return;
	dns_rr_iter_init(&it, &resp);
	while ((r = dns_rr_next(data, size, &it, &rr)) == DNS_OK) {
		if (rr.rdata.off + rr.rdata.len > size)
			abort();
		n++;
	}
	if (r != DNS_ABSENT || n != (unsigned)resp.counts[1] + resp.counts[2] + resp.counts[3])
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dns_query q;
	struct dns_response resp;
	struct dns_answer a[3] = {
	    {.type = DNS_TYPE_A, .ttl = 60, .addr = {10, 0, 0, 1}},
	    {.type = DNS_TYPE_AAAA,
	     .ttl = 60,
	     .addr = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}},
	    {.type = DNS_TYPE_A, .ttl = 60, .addr = {10, 0, 0, 2}},
	};
	struct dns_reply rep = {0};
	size_t off, len;
	enum dns_result r;
	int n;

	walk(data, size);
	if (dns_tcp_frame(data, size, &off, &len) == DNS_OK) {
		if (off + len > size)
			abort();
		walk(data + off, len);
	}

	r = dns_query_parse(data, size, &q);
	if (r == DNS_MALFORMED && !q.why)
		abort();
	if (!q.header_ok)
		return 0;
	rep.rcode = r == DNS_OK ? DNS_RCODE_NOERROR : q.rcode_hint;
	rep.aa = true;
	if (r == DNS_OK) {
		rep.answers = a;
		rep.n_answers = size % 4; /* 0 to 3 */
	}
	rep.ede = size & 1;
	rep.ede_code = DNS_EDE_BLOCKED;
	rep.ede_text = "fuzz: not in policy";
	rep.tcp = size & 2;
	n = dns_reply_compose(&q, &rep, out, sizeof(out));
	if (n == -EINVAL && rep.rcode > 15 && !q.edns.present)
		return 0;
	if (n < 0)
		abort();
	/* a reply to a valid query parses back; to a refused one it may echo a
	 * question name that is not a host name */
	if (dns_response_parse(out, (size_t)n, &resp) != DNS_OK) {
		if (r == DNS_OK)
			abort();
		return 0;
	}
	if (resp.id != q.id || (resp.rcode != rep.rcode))
		abort();
	if (!rep.tcp &&
	    (size_t)n > (q.edns.present && q.edns.udp_size > 512 ? q.edns.udp_size : 512))
		abort();
	walk(out, (size_t)n);
	return 0;
}

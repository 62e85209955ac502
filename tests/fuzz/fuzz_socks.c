/* fuzz_socks.c - libFuzzer harness for the SOCKS5 greeting and request parsers: must never
 * crash; an OK message is NEED_MORE one byte short and parses the same alone; a request's
 * host is NUL-terminated and of the kind it says. */
#include "gateway/proto/proto.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct socks5_greeting g, g2;
	struct socks5_request q, q2;
	enum socks5_result r;

	r = socks5_greeting_parse(data, size, &g);
	if (r == SOCKS5_OK) {
		if (!g.len || g.len > size || g.len > SOCKS5_GREETING_MAX)
			abort();
		if (socks5_greeting_parse(data, g.len - 1, &g2) != SOCKS5_NEED_MORE)
			abort();
		data += g.len;
		size -= g.len;
	} else if ((r == SOCKS5_MALFORMED || r == SOCKS5_REFUSED) && !g.why) {
		abort();
	}
	r = socks5_request_parse(data, size, &q);
	switch (r) {
	case SOCKS5_OK:
		if (!q.len || q.len > size || q.len > SOCKS5_REQUEST_MAX || !q.port)
			abort();
		if (!q.host[0] || q.host_kind == PROTO_HOST_NONE ||
		    strnlen(q.host, sizeof(q.host)) == sizeof(q.host))
			abort();
		if (socks5_request_parse(data, q.len, &q2) != SOCKS5_OK || strcmp(q.host, q2.host))
			abort();
		if (socks5_request_parse(data, q.len - 1, &q2) != SOCKS5_NEED_MORE)
			abort();
		break;
	case SOCKS5_REFUSED:
		if (!q.rep || !q.why)
			abort();
		break;
	case SOCKS5_MALFORMED:
		if (!q.why)
			abort();
		break;
	case SOCKS5_NEED_MORE:
		if (size >= SOCKS5_REQUEST_MAX)
			abort();
		break;
	}
	return 0;
}

/* fuzz_http.c - libFuzzer harness for the HTTP request head parser and the 403
 * composer: must never crash, spans stay inside the head, a complete head is
 * NEED_MORE one byte short. */
#include "gateway/proto/proto.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_request q, q2;
	enum http_result r = http_request_parse(data, size, &q);
	char reason[600], out[1024];
	size_t n;

	switch (r) {
	case HTTP_OK:
		if (!q.host[0] || q.host_kind == PROTO_HOST_NONE)
			abort();
		/* fall through */
	case HTTP_ABSENT:
		if (q.head_len == 0 || q.head_len > size || q.head_len > HTTP_HEAD_MAX)
			abort();
		if (q.method.off + q.method.len > q.head_len ||
		    q.target.off + q.target.len > q.head_len)
			abort();
		if (http_request_parse(data, q.head_len, &q2) != r || strcmp(q.host, q2.host))
			abort();
		if (http_request_parse(data, q.head_len - 1, &q2) != HTTP_NEED_MORE)
			abort();
		break;
	case HTTP_NEED_MORE:
		if (size >= HTTP_HEAD_MAX)
			abort();
		break;
	case HTTP_MALFORMED:
		if (!q.why)
			abort();
		break;
	}

	/* the composer with the input as its reason */
	n = size < sizeof(reason) - 1 ? size : sizeof(reason) - 1;
	memcpy(reason, data, n);
	reason[n] = '\0';
	{
		int len = http_403_compose(out, sizeof(out), reason, "fuzz-1");

		if (len > (int)sizeof(out))
			abort();
		for (int i = 0; i < len; i++)
			if (out[i] == '\0')
				abort();
	}
	return 0;
}

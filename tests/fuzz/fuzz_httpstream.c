/* fuzz_httpstream.c - libFuzzer harness for the HTTP request stream framer
 * (http_stream_next()): must never crash or claim bytes it was not given, and
 * must frame the same requests (same hosts, same kind of end) whether the bytes
 * come at once or in reads of any size. The first input byte picks the read
 * size and how the server answers an Upgrade; the rest is the stream. */
#include "gateway/proto/proto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* the requests framed, as "host;" each, then how it ended; returns bytes consumed */
static size_t frame(const uint8_t *in, size_t len, size_t step, unsigned answer, char *log,
		    size_t lsize)
{
	struct http_stream s = {0};
	size_t got = step ? 0 : len, used = 0, at = 0;
	unsigned holds = 0;

	log[0] = '\0';
	for (;;) {
		struct http_step st;
		enum http_stream_result r = http_stream_next(&s, in + used, got - used, &st);

		switch (r) {
		case HTTP_STREAM_REQUEST:
			if (st.req.head_len != st.len ||
			    st.req.method.off + st.req.method.len > st.len)
				abort();
			if (at < lsize)
				at += (size_t)snprintf(log + at, lsize - at, "%s;", st.req.host);
			/* fall through */
		case HTTP_STREAM_PASS:
			if (st.len == 0 || st.len > got - used)
				abort();
			used += st.len;
			continue;
		case HTTP_STREAM_NEED_MORE:
			if (got < len) {
				got = got + step > len ? len : got + step;
				continue;
			}
			if (at < lsize)
				snprintf(log + at, lsize - at, "MORE");
			return used;
		case HTTP_STREAM_HOLD:
			if (s.state != HTTP_STREAM_WAIT)
				abort();
			/* the server answers; a tunnel ends the framing */
			if (++holds > 4 || http_stream_answered(&s, answer)) {
				if (at < lsize)
					snprintf(log + at, lsize - at, "TUNNEL");
				return used;
			}
			continue;
		case HTTP_STREAM_MALFORMED:
			if (!st.why)
				abort();
			/* the rule named may depend on how much was there (a line
			 * seen whole or in part): only the outcome must agree */
			if (at < lsize)
				snprintf(log + at, lsize - at, "BAD");
			return used;
		}
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char whole[8192], split[8192];
	static const unsigned answers[] = {101, 200, 400, 204};
	size_t step, a, b;
	unsigned answer;
	uint8_t *copy;

	if (size < 1)
		return 0;
	step = (size_t)(data[0] & 0x3f) + 1;
	answer = answers[data[0] >> 6];
	data++;
	size--;
	copy = malloc(size ? size : 1); /* exact size: overreads show under ASan */
	memcpy(copy, data, size);
	a = frame(copy, size, 0, answer, whole, sizeof(whole));
	b = frame(copy, size, step, answer, split, sizeof(split));
	if (a != b || strcmp(whole, split))
		abort();
	{
		unsigned st;

		if (http_response_status(copy, size, &st) == HTTP_OK && (st < 100 || st > 599))
			abort();
	}
	free(copy);
	return 0;
}

/* httpstream.c - framing of a client's HTTP/1.x request stream (keep-alive and
 * pipelined requests, Content-Length and chunked bodies, Upgrade/CONNECT),
 * so that the gateway can check every request head on a connection and not
 * only the first. Pure: see proto.h.
 *
 * Theory of operation: struct http_stream holds where the stream is (before a
 * head, inside a body, at a chunk-size line, inside a chunk, after a chunk,
 * in the trailer, or waiting for the server's answer to an Upgrade). Each call
 * of http_stream_next() looks at the bytes not consumed yet and says what the
 * first of them are: a complete head (REQUEST: the caller checks its Host),
 * bytes to pass on unchecked (PASS: body, chunk framing, empty lines), or that
 * more bytes are needed; it never consumes a byte it has not classified, so a
 * body can never be read as a head or the other way round. Anything it
 * cannot frame is MALFORMED, and the caller denies: a gateway that lost track
 * of where requests begin could be made to pass one unchecked.
 */
#include "gateway/proto/cursor.h"
#include "gateway/proto/proto_internal.h"

#include <string.h>

#define CHUNK_HEX_MAX 15 /* hex digits of a chunk size (< 2^60) */

static enum http_stream_result sbad(struct http_step *out, const char *why)
{
	out->why = why;
	return HTTP_STREAM_MALFORMED;
}

static enum http_stream_result pass(struct http_step *out, size_t n)
{
	out->len = n;
	return HTTP_STREAM_PASS;
}

/* where the stream goes once the current request's body is over */
static void body_done(struct http_stream *s)
{
	s->left = 0;
	if (s->wait_after) {
		s->wait_after = false;
		s->state = HTTP_STREAM_WAIT;
	} else {
		s->state = HTTP_STREAM_HEAD;
	}
}

/* before a head: pass CRLF pairs, refuse a bare CR or LF, frame the head */
static enum http_stream_result head(struct http_stream *s, const uint8_t *buf, size_t len,
				    struct http_step *out)
{
	size_t crlf = 0;
	enum http_result r;

	while (crlf + 1 < len && buf[crlf] == '\r' && buf[crlf + 1] == '\n')
		crlf += 2;
	if (crlf)
		return pass(out, crlf);
	if (buf[0] == '\n' || (buf[0] == '\r' && len > 1))
		return sbad(out, "bare CR or LF before a request line");
	if (buf[0] == '\r')
		return HTTP_STREAM_NEED_MORE;
	r = http_request_parse(buf, len, &out->req);
	switch (r) {
	case HTTP_NEED_MORE:
		return HTTP_STREAM_NEED_MORE;
	case HTTP_MALFORMED:
		return sbad(out, out->req.why ? out->req.why : "malformed request head");
	case HTTP_OK:
	case HTTP_ABSENT:
		break;
	}
	s->requests++;
	out->len = out->req.head_len;
	if (out->req.is_connect && (out->req.chunked || out->req.content_length >= 0))
		return sbad(out, "CONNECT request with a body");
	/* only the first request may turn the connection into a tunnel: the
	 * server's first answer is then certainly the answer to it */
	s->connect = out->req.is_connect;
	s->wait_after = s->requests == 1 && (out->req.upgrade || out->req.is_connect);
	if (out->req.chunked) {
		s->state = HTTP_STREAM_CHUNK_SIZE;
	} else if (out->req.content_length > 0) {
		s->state = HTTP_STREAM_BODY;
		s->left = (uint64_t)out->req.content_length;
	} else {
		body_done(s);
	}
	return HTTP_STREAM_REQUEST;
}

/* "1*HEXDIG [ext] CRLF"; ext: optional SP/HTAB, then ';' and field-value bytes */
static enum http_stream_result chunk_size(struct http_stream *s, const uint8_t *buf, size_t len,
					  struct http_step *out)
{
	size_t lim = len < HTTP_CHUNK_LINE_MAX ? len : HTTP_CHUNK_LINE_MAX;
	const uint8_t *lf = memchr(buf, '\n', lim);
	size_t end = lf ? (size_t)(lf - buf) : lim, i = 0;
	uint64_t v = 0;
	struct cur c;

	cur_init(&c, buf, end);
	while (cur_remaining(&c)) {
		uint8_t ch = cur_peek(&c, 0);
		unsigned d;

		if (ch >= '0' && ch <= '9')
			d = (unsigned)(ch - '0');
		else if ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'f')
			d = (unsigned)((ch | 0x20) - 'a' + 10);
		else
			break;
		if (++i > CHUNK_HEX_MAX)
			return sbad(out, "chunk size longer than 15 hex digits");
		v = v << 4 | d;
		cur_skip(&c, 1);
	}
	if (i == 0 && cur_remaining(&c))
		return sbad(out, "chunk size is not hexadecimal");
	while (cur_remaining(&c) && (cur_peek(&c, 0) == ' ' || cur_peek(&c, 0) == '\t'))
		cur_skip(&c, 1);
	if (cur_remaining(&c) && cur_peek(&c, 0) != '\r') {
		if (cur_peek(&c, 0) != ';')
			return sbad(out, "junk after the chunk size");
		while (cur_remaining(&c) && cur_peek(&c, 0) != '\r') {
			if (!proto_vchar(cur_u8(&c)))
				return sbad(out, "control character in a chunk extension");
		}
	}
	/* the position is at end, or at a CR */
	if (!lf) {
		if (len >= HTTP_CHUNK_LINE_MAX)
			return sbad(out, "chunk-size line longer than 4 KiB");
		if (cur_remaining(&c) > 1)
			return sbad(out, "CR inside a chunk-size line");
		return HTTP_STREAM_NEED_MORE;
	}
	if (i == 0)
		return sbad(out, "chunk size is not hexadecimal");
	if (cur_remaining(&c) != 1 || cur_peek(&c, 0) != '\r')
		return sbad(out, "chunk-size line not ended by CRLF");
	if (v) {
		s->state = HTTP_STREAM_CHUNK_DATA;
		s->left = v;
	} else {
		s->state = HTTP_STREAM_TRAILER;
		s->left = 0;
	}
	return pass(out, end + 1);
}

/* one trailer field line, or the empty line that ends the trailer (and the body) */
static enum http_stream_result trailer(struct http_stream *s, const uint8_t *buf, size_t len,
				       struct http_step *out)
{
	const uint8_t *lf = memchr(buf, '\n', len);
	size_t end = lf ? (size_t)(lf - buf) : len, name = 0;

	if (end > HTTP_HEAD_MAX || s->left + end > HTTP_HEAD_MAX)
		return sbad(out, "trailer section longer than 16 KiB");
	while (name < end && proto_tchar(buf[name]))
		name++;
	if (!lf) {
		/* validate the incomplete line as far as it goes */
		if (name == end || (end == 1 && buf[0] == '\r'))
			return HTTP_STREAM_NEED_MORE;
		if (buf[name] != ':' || name == 0)
			return sbad(out, "trailer line is not a field line");
		for (size_t i = name + 1; i < end; i++)
			if (!proto_vchar(buf[i]) && !(buf[i] == '\r' && i + 1 == end))
				return sbad(out, "control character in a trailer field");
		return HTTP_STREAM_NEED_MORE;
	}
	if (end == 0 || buf[end - 1] != '\r')
		return sbad(out, "bare LF in the trailer section");
	if (end == 1) {
		body_done(s);
		return pass(out, 2);
	}
	if (name == 0 || name >= end - 1 || buf[name] != ':')
		return sbad(out, "trailer line is not a field line");
	for (size_t i = name + 1; i < end - 1; i++)
		if (!proto_vchar(buf[i]))
			return sbad(out, "control character in a trailer field");
	s->left += end + 1;
	return pass(out, end + 1);
}

enum http_stream_result http_stream_next(struct http_stream *s, const uint8_t *buf, size_t len,
					 struct http_step *out)
{
	uint64_t n;

	memset(out, 0, sizeof(*out));
	if (s->state == HTTP_STREAM_WAIT)
		return HTTP_STREAM_HOLD;
	if (len == 0)
		return HTTP_STREAM_NEED_MORE;
	switch (s->state) {
	case HTTP_STREAM_HEAD:
		return head(s, buf, len, out);
	case HTTP_STREAM_BODY:
	case HTTP_STREAM_CHUNK_DATA:
		n = s->left < len ? s->left : len;
		http_stream_body(s, n);
		return pass(out, (size_t)n);
	case HTTP_STREAM_CHUNK_SIZE:
		return chunk_size(s, buf, len, out);
	case HTTP_STREAM_CHUNK_END:
		if (buf[0] != '\r' || (len > 1 && buf[1] != '\n'))
			return sbad(out, "chunk data not followed by CRLF");
		if (len < 2)
			return HTTP_STREAM_NEED_MORE;
		s->state = HTTP_STREAM_CHUNK_SIZE;
		return pass(out, 2);
	case HTTP_STREAM_TRAILER:
		return trailer(s, buf, len, out);
	case HTTP_STREAM_WAIT:
		break;
	}
	return HTTP_STREAM_HOLD;
}

void http_stream_body(struct http_stream *s, uint64_t n)
{
	if (s->state != HTTP_STREAM_BODY && s->state != HTTP_STREAM_CHUNK_DATA)
		return;
	if (n > s->left)
		n = s->left;
	s->left -= n;
	if (s->left)
		return;
	if (s->state == HTTP_STREAM_CHUNK_DATA)
		s->state = HTTP_STREAM_CHUNK_END;
	else
		body_done(s);
}

bool http_stream_answered(struct http_stream *s, unsigned status)
{
	if (s->state != HTTP_STREAM_WAIT)
		return false;
	if (s->connect ? status / 100 == 2 : status == 101)
		return true;
	s->state = HTTP_STREAM_HEAD;
	return false;
}

enum http_result http_response_status(const uint8_t *buf, size_t len, unsigned *status)
{
	static const char pre[] = "HTTP/1.";
	size_t i;

	for (i = 0; i < sizeof(pre) - 1; i++) {
		if (i == len)
			return HTTP_NEED_MORE;
		if (buf[i] != (uint8_t)pre[i])
			return HTTP_MALFORMED;
	}
	if (i == len)
		return HTTP_NEED_MORE;
	if (buf[i] != '0' && buf[i] != '1')
		return HTTP_MALFORMED;
	if (++i == len)
		return HTTP_NEED_MORE;
	if (buf[i++] != ' ')
		return HTTP_MALFORMED;
	*status = 0;
	for (int k = 0; k < 3; k++, i++) {
		if (i == len)
			return HTTP_NEED_MORE;
		if (buf[i] < '0' || buf[i] > '9')
			return HTTP_MALFORMED;
		*status = *status * 10 + (unsigned)(buf[i] - '0');
	}
	if (i == len)
		return HTTP_NEED_MORE;
	if ((buf[i] != ' ' && buf[i] != '\r') || *status < 100 || *status > 599)
		return HTTP_MALFORMED;
	return HTTP_OK;
}

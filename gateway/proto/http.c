/* http.c - HTTP/1.x request head parser (method, target, Host, CONNECT,
 * absolute-form) and the 403 denial composer. Pure: see proto.h.
 *
 * Theory of operation: the head is read line by line, each line ending in
 * CRLF. A complete line is validated in full; the incomplete last line is
 * validated as far as it goes (the same code, told that running out of bytes
 * means NEED_MORE rather than MALFORMED), so binary or non-HTTP input fails on
 * its first bad byte instead of after 16 KiB. The blank line ends the head;
 * then the destination is decided from the target's authority (CONNECT,
 * absolute-form), which must agree with Host, or from Host.
 */
#include "gateway/proto/cursor.h"
#include "gateway/proto/proto_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#define HTTP_METHOD_MAX 32

/* what the header lines said, kept until the blank line */
struct http_headers {
	bool host_seen;
	struct proto_span host;
	bool cl_seen;
	bool te_seen;
};

/* an authority: host (normalised) and port */
struct authority {
	char host[PROTO_NAME_MAX + 1];
	enum proto_host_kind kind;
	uint16_t port; /* 0: not given */
};

static enum http_result bad(struct http_request *out, const char *why)
{
	out->why = why;
	return HTTP_MALFORMED;
}

#define tchar proto_tchar
#define vchar proto_vchar

static bool span_ieq(const uint8_t *p, size_t n, const char *s)
{
	size_t sl = strlen(s);

	if (n != sl)
		return false;
	for (size_t i = 0; i < n; i++)
		if (proto_lower(p[i]) != (uint8_t)s[i])
			return false;
	return true;
}

/* port: 1-5 digits, no leading zero, 1..65535 */
static bool parse_port(const uint8_t *p, size_t n, uint16_t *port)
{
	unsigned v = 0;

	if (n == 0 || n > 5 || p[0] == '0')
		return false;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
		v = v * 10 + (unsigned)(p[i] - '0');
	}
	if (v > 65535)
		return false;
	*port = (uint16_t)v;
	return true;
}

/* host [":" port], host a name, a dotted quad or a bracketed IPv6 literal */
static enum http_result parse_authority(const uint8_t *p, size_t n, bool need_port,
					struct authority *a, struct http_request *out)
{
	size_t hlen;
	const uint8_t *colon;

	memset(a, 0, sizeof(*a));
	if (n > 0 && p[0] == '[') {
		const uint8_t *end = memchr(p, ']', n);
		char text[64];
		uint8_t bin[16];

		hlen = end ? (size_t)(end - p) + 1 : 0;
		if (!end || hlen - 2 == 0 || hlen - 2 >= sizeof(text))
			return bad(out, "bad IPv6 literal");
		memcpy(text, p + 1, hlen - 2);
		text[hlen - 2] = '\0';
		if (inet_pton(AF_INET6, text, bin) != 1 ||
		    !inet_ntop(AF_INET6, bin, a->host, sizeof(a->host)))
			return bad(out, "bad IPv6 literal");
		a->kind = PROTO_HOST_IPV6;
		if (hlen < n && p[hlen] != ':')
			return bad(out, "junk after IPv6 literal");
	} else {
		colon = memchr(p, ':', n);
		hlen = colon ? (size_t)(colon - p) : n;
		if (memchr(p, '@', n))
			return bad(out, "userinfo in authority");
		a->kind = proto_host_parse(p, hlen, PROTO_HOST_ALLOW_IPV4, a->host, &out->why);
		if (a->kind == PROTO_HOST_NONE)
			return HTTP_MALFORMED;
	}
	if (hlen < n) {
		if (!parse_port(p + hlen + 1, n - hlen - 1, &a->port))
			return bad(out, "bad port");
	} else if (need_port) {
		return bad(out, "CONNECT target without port");
	}
	return HTTP_OK;
}

/*
 * The request line in [p, p + n); @partial when its CRLF has not arrived yet.
 * Offsets stored in @out are relative to @p, which is the start of the buffer.
 */
static enum http_result request_line(const uint8_t *p, size_t n, bool partial,
				     struct http_request *out)
{
	static const char version[] = "HTTP/1.";
	struct cur c;
	size_t start;

	cur_init(&c, p, n);
#define NEED(why) return partial ? HTTP_NEED_MORE : bad(out, why)
	while (cur_remaining(&c) && tchar(cur_peek(&c, 0)))
		cur_skip(&c, 1);
	if (c.off > HTTP_METHOD_MAX)
		return bad(out, "method longer than 32");
	if (!cur_remaining(&c))
		NEED("request line ends in the method");
	if (c.off == 0)
		return bad(out, "not an HTTP request (no method)");
	out->method = (struct proto_span){0, c.off};
	if (cur_u8(&c) != ' ')
		return bad(out, "method not followed by one space");

	start = c.off;
	while (cur_remaining(&c) && cur_peek(&c, 0) > 0x20 && cur_peek(&c, 0) < 0x7f)
		cur_skip(&c, 1);
	if (!cur_remaining(&c))
		NEED("request line ends in the target");
	if (c.off == start)
		return bad(out, "empty request target");
	out->target = (struct proto_span){start, c.off - start};
	if (cur_u8(&c) != ' ')
		return bad(out, "target not followed by one space");

	for (size_t i = 0; i < sizeof(version) - 1; i++) {
		if (!cur_remaining(&c))
			NEED("request line ends in the version");
		if (cur_u8(&c) != (uint8_t)version[i])
			return bad(out, "version is not HTTP/1.0 or HTTP/1.1");
	}
	if (!cur_remaining(&c))
		NEED("request line ends in the version");
	switch (cur_u8(&c)) {
	case '0':
		out->minor = 0;
		break;
	case '1':
		out->minor = 1;
		break;
	default:
		return bad(out, "version is not HTTP/1.0 or HTTP/1.1");
	}
	if (cur_remaining(&c))
		return bad(out, "junk after the version");
#undef NEED
	return partial ? HTTP_NEED_MORE : HTTP_OK;
}

/* classify the target; fills out->form and the target authority @ta */
static enum http_result target_form(const uint8_t *buf, struct http_request *out,
				    struct authority *ta)
{
	const uint8_t *m = buf + out->method.off, *t = buf + out->target.off;
	size_t ml = out->method.len, tl = out->target.len, skip, alen;

	out->is_connect = ml == 7 && !memcmp(m, "CONNECT", 7);
	if (out->is_connect) {
		out->form = HTTP_FORM_AUTHORITY;
		return parse_authority(t, tl, true, ta, out);
	}
	if (t[0] == '/') {
		out->form = HTTP_FORM_ORIGIN;
		return HTTP_OK;
	}
	if (tl == 1 && t[0] == '*') {
		if (!(ml == 7 && !memcmp(m, "OPTIONS", 7)))
			return bad(out, "asterisk target outside OPTIONS");
		out->form = HTTP_FORM_ASTERISK;
		return HTTP_OK;
	}
	if (tl > 7 && span_ieq(t, 7, "http://")) {
		skip = 7;
	} else if (tl > 8 && span_ieq(t, 8, "https://")) {
		skip = 8;
		out->https = true;
	} else {
		return bad(out, "target is not origin, absolute http(s) or authority form");
	}
	out->form = HTTP_FORM_ABSOLUTE;
	for (alen = 0; skip + alen < tl; alen++) {
		uint8_t ch = t[skip + alen];

		if (ch == '/' || ch == '?' || ch == '#')
			break;
	}
	if (alen == 0)
		return bad(out, "absolute target without host");
	return parse_authority(t + skip, alen, false, ta, out);
}

/* Content-Length: 1..18 digits */
static bool parse_length(const uint8_t *p, size_t n, int64_t *v)
{
	if (n == 0 || n > 18)
		return false;
	*v = 0;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
		*v = *v * 10 + (p[i] - '0');
	}
	return true;
}

/* the last element of a comma list, trimmed, is "chunked" */
static bool ends_chunked(const uint8_t *p, size_t n)
{
	size_t s = n;

	while (s > 0 && p[s - 1] != ',')
		s--;
	while (s < n && (p[s] == ' ' || p[s] == '\t'))
		s++;
	return span_ieq(p + s, n - s, "chunked");
}

/*
 * One header line [base + 0, base + n) of @buf (without its CRLF); @partial
 * when its CRLF has not arrived yet (then only its bytes are checked).
 */
static enum http_result header_line(const uint8_t *buf, size_t base, size_t n, bool partial,
				    struct http_headers *h, struct http_request *out)
{
	const uint8_t *p = buf + base;
	size_t name_len = 0, vs, ve;

	if (n > 0 && (p[0] == ' ' || p[0] == '\t'))
		return bad(out, "obs-fold (continuation line)");
	while (name_len < n && tchar(p[name_len]))
		name_len++;
	if (name_len == n)
		return partial ? HTTP_NEED_MORE : bad(out, "header line without colon");
	if (p[name_len] != ':')
		return bad(out, name_len ? "bad character in header name (or space before colon)"
					 : "empty header name");
	if (name_len == 0)
		return bad(out, "empty header name");
	for (size_t i = name_len + 1; i < n; i++)
		if (!vchar(p[i]))
			return bad(out, "control character in header value");
	if (partial)
		return HTTP_NEED_MORE;

	vs = name_len + 1;
	ve = n;
	while (vs < ve && (p[vs] == ' ' || p[vs] == '\t'))
		vs++;
	while (ve > vs && (p[ve - 1] == ' ' || p[ve - 1] == '\t'))
		ve--;
	if (span_ieq(p, name_len, "host")) {
		if (h->host_seen)
			return bad(out, "duplicate Host");
		h->host_seen = true;
		h->host = (struct proto_span){base + vs, ve - vs};
	} else if (span_ieq(p, name_len, "content-length")) {
		if (h->cl_seen)
			return bad(out, "duplicate Content-Length");
		h->cl_seen = true;
		if (!parse_length(p + vs, ve - vs, &out->content_length))
			return bad(out, "bad Content-Length");
	} else if (span_ieq(p, name_len, "transfer-encoding")) {
		h->te_seen = true;
		out->chunked = ends_chunked(p + vs, ve - vs);
	} else if (span_ieq(p, name_len, "upgrade")) {
		out->upgrade = true;
	}
	return HTTP_OK;
}

/* the blank line arrived: decide the destination */
static enum http_result finish(const uint8_t *buf, struct http_headers *h, struct http_request *out)
{
	struct authority ta = {0}, ha = {0};
	enum http_result r;
	bool has_host;

	if (h->te_seen && h->cl_seen)
		return bad(out, "both Transfer-Encoding and Content-Length");
	if (h->te_seen && (out->minor == 0 || !out->chunked))
		return bad(out, "Transfer-Encoding not ending in chunked (or in HTTP/1.0)");
	if (out->minor == 1 && !h->host_seen)
		return bad(out, "HTTP/1.1 request without Host");
	r = target_form(buf, out, &ta);
	if (r != HTTP_OK)
		return r;
	has_host = h->host_seen && h->host.len > 0;
	if (has_host) {
		r = parse_authority(buf + h->host.off, h->host.len, false, &ha, out);
		if (r != HTTP_OK)
			return r;
	}
	if (out->form == HTTP_FORM_AUTHORITY || out->form == HTTP_FORM_ABSOLUTE) {
		if (h->host_seen) {
			uint16_t dflt = out->is_connect ? ta.port : out->https ? 443 : 80;
			uint16_t tp = ta.port ? ta.port : dflt;
			uint16_t hp = ha.port ? ha.port : dflt;

			if (!has_host || strcmp(ta.host, ha.host) || tp != hp)
				return bad(out, "Host does not agree with the target");
		}
		memcpy(out->host, ta.host, sizeof(out->host));
		out->host_kind = ta.kind;
		out->port = ta.port;
		return HTTP_OK;
	}
	if (!has_host)
		return HTTP_ABSENT;
	memcpy(out->host, ha.host, sizeof(out->host));
	out->host_kind = ha.kind;
	out->port = ha.port;
	return HTTP_OK;
}

enum http_result http_request_parse(const uint8_t *buf, size_t len, struct http_request *out)
{
	struct http_headers h = {0};
	size_t limit = len < HTTP_HEAD_MAX ? len : HTTP_HEAD_MAX;
	size_t pos = 0;
	enum http_result r;

	memset(out, 0, sizeof(*out));
	out->content_length = -1;
	if (len == 0)
		return HTTP_NEED_MORE;
	for (unsigned line = 0;; line++) {
		const uint8_t *lf = memchr(buf + pos, '\n', limit - pos);
		size_t end;

		if (!lf) {
			/* the incomplete last line: a final CR may await its LF */
			end = limit;
			/* pos == limit after a line that ends the buffer: cppcheck takes
			 * limit for 0 (len == 0 returned above) and end > pos for false */
			// cppcheck-suppress knownConditionTrueFalse ; see above
			if (end > pos && buf[end - 1] == '\r')
				end--;
			r = line == 0 ? request_line(buf, end, true, out)
				      : header_line(buf, pos, end - pos, true, &h, out);
			if (r == HTTP_MALFORMED)
				return r;
			if (len >= HTTP_HEAD_MAX)
				return bad(out, "request head longer than 16 KiB");
			return HTTP_NEED_MORE;
		}
		end = (size_t)(lf - buf);
		if (end == pos || buf[end - 1] != '\r')
			return bad(out, "bare LF line ending");
		end--;
		if (line == 0) {
			r = request_line(buf, end, false, out);
		} else if (end == pos) {
			out->head_len = end + 2;
			return finish(buf, &h, out);
		} else {
			r = header_line(buf, pos, end - pos, false, &h, out);
		}
		if (r != HTTP_OK)
			return r;
		pos = end + 2;
	}
}

/* append @n bytes; false when they do not fit */
static bool put(char *out, size_t size, size_t *at, const char *s, size_t n)
{
	if (n > size - *at)
		return false;
	memcpy(out + *at, s, n);
	*at += n;
	return true;
}

static bool puts_(char *out, size_t size, size_t *at, const char *s)
{
	return put(out, size, at, s, strlen(s));
}

static bool put_uint(char *out, size_t size, size_t *at, size_t v)
{
	char digits[24];
	size_t i = sizeof(digits);

	do {
		digits[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return put(out, size, at, digits + i, sizeof(digits) - i);
}

int http_403_compose(char *out, size_t size, const char *reason, const char *denial_id)
{
	static const char pre[] = "warden: denied: ";
	size_t rlen, idlen, body, at = 0, rstart;

	if (!out || !reason || !denial_id)
		return -EINVAL;
	rlen = strnlen(reason, 513);
	idlen = strnlen(denial_id, 65);
	if (rlen > 512 || idlen == 0 || idlen > 64)
		return -EINVAL;
	for (size_t i = 0; i < idlen; i++) {
		uint8_t ch = (uint8_t)denial_id[i];

		if (!proto_host_char(ch) && ch != '.')
			return -EINVAL;
	}
	/* body: "warden: denied: <reason> (id <id>)\n" */
	body = sizeof(pre) - 1 + rlen + 5 + idlen + 2;
	if (!puts_(out, size, &at,
		   "HTTP/1.1 403 Forbidden\r\n"
		   "Content-Type: text/plain; charset=utf-8\r\n"
		   "Cache-Control: no-store\r\n"
		   "Connection: close\r\n"
		   "X-Warden-Denial: ") ||
	    !put(out, size, &at, denial_id, idlen) ||
	    !puts_(out, size, &at, "\r\nContent-Length: ") || !put_uint(out, size, &at, body) ||
	    !puts_(out, size, &at, "\r\n\r\n") || !puts_(out, size, &at, pre))
		return -ENOSPC;
	rstart = at;
	if (!put(out, size, &at, reason, rlen))
		return -ENOSPC;
	for (size_t i = rstart; i < at; i++)
		if ((uint8_t)out[i] < 0x20 || (uint8_t)out[i] > 0x7e)
			out[i] = '?';
	if (!puts_(out, size, &at, " (id ") || !put(out, size, &at, denial_id, idlen) ||
	    !puts_(out, size, &at, ")\n"))
		return -ENOSPC;
	return (int)at;
}

/* sniff.c - the client's first bytes, pure: which protocol they are (TLS, HTTP, raw TCP) and
 * which host they name (TLS SNI, with Encrypted Client Hello the outer one; HTTP Host); the
 * verdict on that name is decide.c's. A sniffer per protocol, tried in order (a const table);
 * bytes that claim a protocol and break it are MALFORMED (denied). */
#include "gateway/decide.h"
#include "common/common.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

enum sniffed {
	SNIFFED_MORE,	   /* read more */
	SNIFFED_DONE,	   /* decided */
	SNIFFED_MALFORMED, /* broken: deny with @why */
	SNIFFED_NOT_MINE,  /* not this protocol: ask the next sniffer */
};

/* leading CR and LF bytes; *@clean: they are whole CRLF pairs (RFC 9112 §2.2) */
static size_t eol_prefix(const uint8_t *b, size_t n, bool *clean)
{
	size_t i = 0;

	while (i < n && (b[i] == '\r' || b[i] == '\n'))
		i++;
	*clean = true;
	for (size_t k = 0; k < i; k += 2)
		if (k + 1 >= i || b[k] != '\r' || b[k + 1] != '\n')
			*clean = false;
	return i;
}

/* a byte of an HTTP token (RFC 9110 §5.6.2 tchar) */
static bool token_char(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

/*
 * A first line that a lenient server would take for a request: a token of up
 * to 32 bytes, spaces, and "HTTP/" (any case) on the same line. Lenient
 * servers accept what the strict parser refuses (bare LF line ends, several
 * spaces, methods with '-'), so anything that looks like this is HTTP that
 * failed to parse -- denied -- and never raw TCP relayed unchecked.
 */
static bool looks_http(const uint8_t *b, size_t n)
{
	size_t i = 0;

	while (i < n && i <= 32 && token_char(b[i]))
		i++;
	if (i == 0 || i > 32 || i >= n || (b[i] != ' ' && b[i] != '\t'))
		return false;
	for (; i + 5 <= n && b[i] != '\n'; i++)
		if (!strncasecmp((const char *)b + i, "HTTP/", 5))
			return true;
	return false;
}

/* TLS: a ClientHello names the host in its SNI */
static enum sniffed sniff_tls(const uint8_t *buf, size_t len, bool full, struct tls_hello *th,
			      struct gw_first *out)
{
	enum tls_result t = tls_client_hello_parse(buf, len, th);

	if (!th->is_tls)
		return SNIFFED_NOT_MINE;
	out->tls = true;
	out->tls_version = th->legacy_version ? th->legacy_version : 0x0303;
	out->ech = th->has_ech;
	switch (t) {
	case TLS_NEED_MORE:
		if (!full)
			return SNIFFED_MORE;
		out->why = "incomplete TLS ClientHello";
		return SNIFFED_MALFORMED;
	case TLS_OK:
		/* With Encrypted Client Hello the outer SNI is the name the server
		 * sees first and the one decided on: the DNS front gives no ECH
		 * configuration, so a browser's extension is GREASE and its outer
		 * SNI the real name; with a configuration from elsewhere it is the
		 * client-facing server's public name, and that name must be allowed
		 * (docs/gateway.md, "Encrypted Client Hello"). */
		snprintf(out->sni, sizeof(out->sni), "%s", th->sni);
		return SNIFFED_DONE;
	case TLS_ABSENT:
		if (th->has_ech) {
			out->why = "TLS Encrypted Client Hello without an outer server name";
			return SNIFFED_MALFORMED;
		}
		return SNIFFED_DONE;
	case TLS_MALFORMED:
		out->why = th->why ? th->why : "malformed TLS ClientHello";
		return SNIFFED_MALFORMED;
	}
	return SNIFFED_MALFORMED;
}

/*
 * HTTP/1.x: a request head names the host in Host (or an absolute target).
 * Empty lines before it are skipped (RFC 9112 §2.2; servers skip them too),
 * so the request after them is the one checked. A valid prefix of a head
 * that never completes is HTTP that failed, not raw TCP: a server would read
 * whatever comes later as the rest of that request.
 */
static enum sniffed sniff_http(const uint8_t *buf, size_t len, bool full, struct tls_hello *th,
			       struct gw_first *out)
{
	struct http_request req;
	bool clean;
	size_t skip = eol_prefix(buf, len, &clean);
	const uint8_t *b = buf + skip;
	size_t n = len - skip;

	(void)th;
	if (!clean) {
		/* CR and LF bytes that are not CRLF pairs: a lenient server
		 * skips them too, so a request after them is HTTP gone wrong */
		if (n == 0 && !full)
			return SNIFFED_MORE;
		if (n && !looks_http(b, n))
			return SNIFFED_NOT_MINE;
		out->http = true;
		out->why = "bare CR or LF before a request line";
		return SNIFFED_MALFORMED;
	}
	if (n == 0) {
		if (!full)
			return SNIFFED_MORE;
		out->http = true; /* only empty lines: what follows is checked as HTTP */
		return SNIFFED_DONE;
	}
	switch (http_request_parse(b, n, &req)) {
	case HTTP_NEED_MORE:
		if (!full)
			return SNIFFED_MORE;
		out->http = true;
		out->why = "incomplete HTTP request head";
		return SNIFFED_MALFORMED;
	case HTTP_OK:
		out->http = true;
		snprintf(out->host, sizeof(out->host), "%s", req.host);
		return SNIFFED_DONE;
	case HTTP_ABSENT:
		out->http = true;
		return SNIFFED_DONE;
	case HTTP_MALFORMED:
		if (!skip && !looks_http(b, n))
			return SNIFFED_NOT_MINE;
		out->http = true;
		out->why = req.why ? req.why : "malformed HTTP request";
		return SNIFFED_MALFORMED;
	}
	return SNIFFED_NOT_MINE;
}

/* the protocols that name a host in the client's first bytes, in the order tried */
static const struct {
	const char *proto;
	enum sniffed (*fn)(const uint8_t *buf, size_t len, bool full, struct tls_hello *th,
			   struct gw_first *out);
} sniffers[] = {
    {"tls", sniff_tls},
    {"http", sniff_http},
};

enum gw_sniff gw_sniff(const uint8_t *buf, size_t len, bool full, struct tls_hello *th,
		       struct gw_first *out)
{
	memset(out, 0, sizeof(*out));
	out->proto = "tcp";
	if (!len)
		return GW_SNIFF_DONE;
	for (size_t i = 0; i < WD_ARRAY_SIZE(sniffers); i++) {
		enum sniffed s = sniffers[i].fn(buf, len, full, th, out);

		if (s == SNIFFED_NOT_MINE)
			continue;
		out->proto = sniffers[i].proto;
		return s == SNIFFED_MORE   ? GW_SNIFF_MORE
		       : s == SNIFFED_DONE ? GW_SNIFF_DONE
					   : GW_SNIFF_MALFORMED;
	}
	return GW_SNIFF_DONE; /* plain bytes: raw TCP */
}

const char *gw_first_named(const struct gw_first *f)
{
	struct gw_addr a;

	if (f->sni[0])
		return f->sni;
	if (f->host[0] && gw_addr_parse(f->host, &a))
		return f->host;
	return NULL;
}

/* proto.h - the gateway's pure protocol parsers and composers: TLS ClientHello
 * (SNI), HTTP/1.x request heads (Host, CONNECT, absolute-form), DNS
 * messages and SOCKS5 greetings and requests, plus the small denial answers
 * (TLS alert, HTTP 403, DNS response, SOCKS5 reply).
 *
 * Every parser takes (const uint8_t *buf, size_t len, out) and returns a named
 * outcome: ..._OK, ..._NEED_MORE (a prefix of something that may still parse:
 * read more bytes and call again with the whole buffer), ..._ABSENT (parsed,
 * but no name in it, or not this protocol at all: see each function) or
 * ..._MALFORMED (cannot be parsed: the caller denies). On MALFORMED, @out->why
 * names the rule that failed (a string literal, for the audit log).
 * No parser allocates, makes a syscall, reads a clock, logs or keeps state
 * between calls; composers write only into the caller's buffer.
 * See docs/proto.md for what is refused and why.
 */
#ifndef WARDEN_GATEWAY_PROTO_H
#define WARDEN_GATEWAY_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Longest host name in text form (RFC 1035: 253 characters, no trailing dot). */
#define PROTO_NAME_MAX 253

/**
 * enum proto_host_kind - what a host field held
 * @PROTO_HOST_NONE:	nothing (no name)
 * @PROTO_HOST_NAME:	a DNS host name (validated, lower-case, no trailing dot)
 * @PROTO_HOST_IPV4:	an IPv4 literal in strict dotted-quad form
 * @PROTO_HOST_IPV6:	an IPv6 literal (bracketed in HTTP; text kept without brackets)
 */
enum proto_host_kind {
	PROTO_HOST_NONE = 0,
	PROTO_HOST_NAME,
	PROTO_HOST_IPV4,
	PROTO_HOST_IPV6,
};

/**
 * struct proto_span - a piece of an input buffer
 * @off:	offset into the parsed buffer
 * @len:	length in bytes
 */
struct proto_span {
	size_t off;
	size_t len;
};

/* ------------------------------------------------------------------ TLS */

/* Largest ClientHello handshake message accepted (header included). */
#define TLS_HELLO_MAX 16384

/**
 * enum tls_result - outcome of tls_client_hello_parse()
 * @TLS_OK:		a complete ClientHello with a valid host_name SNI
 * @TLS_NEED_MORE:	a valid prefix of a ClientHello; read more
 * @TLS_ABSENT:		a complete, valid ClientHello without SNI; or the first
 *			byte is not a TLS handshake record (not TLS: try HTTP)
 * @TLS_MALFORMED:	cannot be parsed, or breaks a rule in docs/proto.md
 */
enum tls_result {
	TLS_OK = 0,
	TLS_NEED_MORE,
	TLS_ABSENT,
	TLS_MALFORMED,
};

/**
 * struct tls_hello - what a ClientHello says (filled by tls_client_hello_parse())
 * @is_tls:		the input starts with a TLS handshake record (false on
 *			the "not TLS" kind of TLS_ABSENT)
 * @sni:		the server_name host_name, lower-case, no trailing dot,
 *			NUL-terminated ("" when absent)
 * @sni_len:		strlen(@sni)
 * @legacy_version:	ClientHello.legacy_version (0x0301..0x0303)
 * @max_version:	highest version offered (supported_versions when present,
 *			otherwise @legacy_version); 0x0304 for TLS 1.3
 * @has_alpn:		an application_layer_protocol_negotiation extension is present
 * @has_ech:		an encrypted_client_hello extension (0xfe0d) is present:
 *			the outer SNI may be only a public name (but browsers
 *			also send GREASE ECH: see docs/proto.md)
 * @n_extensions:	extensions counted (GREASE included)
 * @n_records:		TLS records the handshake message spanned
 * @hello_len:		bytes of @buf up to the end of the record that completed
 *			the ClientHello
 * @why:		on TLS_MALFORMED (and the not-TLS TLS_ABSENT), the failed rule
 * @scratch:		reassembly space for a ClientHello split across several
 *			records (the parser's only memory; untouched otherwise)
 *
 * The struct is about 16.6 KiB because of @scratch: keep one per worker.
 */
struct tls_hello {
	bool is_tls;
	char sni[PROTO_NAME_MAX + 1];
	size_t sni_len;
	uint16_t legacy_version;
	uint16_t max_version;
	bool has_alpn;
	bool has_ech;
	unsigned n_extensions;
	unsigned n_records;
	size_t hello_len;
	const char *why;
	uint8_t scratch[TLS_HELLO_MAX];
};

/**
 * tls_client_hello_parse() - find the SNI in the first bytes a client sent
 * @buf:	every byte received so far on the connection (TLS records)
 * @len:	bytes in @buf
 * @out:	result; always written (fields zeroed first)
 *
 * Reassembles a ClientHello that spans several handshake records (into
 * @out->scratch) and validates it fully: lengths, versions, duplicate
 * extensions, one host_name in server_name, the name itself.
 *
 * Return: TLS_OK, TLS_NEED_MORE, TLS_ABSENT or TLS_MALFORMED (see enum tls_result).
 */
enum tls_result tls_client_hello_parse(const uint8_t *buf, size_t len, struct tls_hello *out);

/**
 * tls_handshake_hello_parse() - a ClientHello handshake message without the record layer (as
 * QUIC's CRYPTO frames carry it: RFC 9001 §4)
 * @msg:	the message from its 4-byte handshake header; bytes after the message are
 *		not looked at
 * @len:	bytes at @msg
 * @out:	result; always written (@n_records stays 0, @hello_len is the message's length)
 *
 * The same checks as tls_client_hello_parse() on the message itself.
 *
 * Return: TLS_OK, TLS_NEED_MORE (fewer than its header announces), TLS_ABSENT (no SNI) or
 * TLS_MALFORMED.
 */
enum tls_result tls_handshake_hello_parse(const uint8_t *msg, size_t len, struct tls_hello *out);

/**
 * enum tls_alert_desc - alert descriptions used for denials (RFC 8446 §6)
 */
enum tls_alert_desc {
	TLS_ALERT_HANDSHAKE_FAILURE = 40,
	TLS_ALERT_ACCESS_DENIED = 49,
	TLS_ALERT_DECODE_ERROR = 50,
	TLS_ALERT_PROTOCOL_VERSION = 70,
	TLS_ALERT_INTERNAL_ERROR = 80,
	TLS_ALERT_UNRECOGNIZED_NAME = 112,
};

/* Bytes of a composed alert record. */
#define TLS_ALERT_LEN 7

/**
 * tls_alert_compose() - write a fatal TLS alert record
 * @out:	destination
 * @size:	bytes available at @out (at least TLS_ALERT_LEN)
 * @desc:	alert description (enum tls_alert_desc)
 * @version:	record version: the client's legacy_version, 0x0301..0x0303
 *		(anything else is written as 0x0303)
 *
 * Return: TLS_ALERT_LEN, or -ENOSPC when @size is too small.
 */
int tls_alert_compose(uint8_t *out, size_t size, enum tls_alert_desc desc, uint16_t version);

/* ----------------------------------------------------------------- HTTP */

/* Longest request head accepted (request line + headers + blank line). */
#define HTTP_HEAD_MAX 16384

/**
 * enum http_result - outcome of http_request_parse()
 * @HTTP_OK:		a complete, valid head that names a host
 * @HTTP_NEED_MORE:	a valid prefix of a head; read more
 * @HTTP_ABSENT:	a complete, valid HTTP/1.0 head without Host (or with an
 *			empty Host): no name
 * @HTTP_MALFORMED:	anything else (not HTTP, broken, ambiguous, too long)
 */
enum http_result {
	HTTP_OK = 0,
	HTTP_NEED_MORE,
	HTTP_ABSENT,
	HTTP_MALFORMED,
};

/**
 * enum http_form - request-target forms (RFC 9112 §3.2)
 */
enum http_form {
	HTTP_FORM_ORIGIN = 0, /* /path?query */
	HTTP_FORM_ABSOLUTE,   /* http://host:port/path (to a proxy) */
	HTTP_FORM_AUTHORITY,  /* host:port (CONNECT only) */
	HTTP_FORM_ASTERISK,   /* * (OPTIONS only) */
};

/**
 * struct http_request - what a request head says (filled by http_request_parse())
 * @method:	the method token
 * @target:	the request-target as sent
 * @form:	which form @target has
 * @minor:	HTTP/1.@minor (0 or 1)
 * @is_connect:	the method is CONNECT
 * @host:	the destination host, lower-case, no trailing dot, no brackets,
 *		NUL-terminated: from the target's authority (CONNECT,
 *		absolute-form) or else from Host ("" when none)
 * @host_kind:	what @host is
 * @port:	the port given with it, or 0 when none was given (then it is the
 *		scheme's default for absolute-form, else the connection's port)
 * @https:	absolute-form with the https scheme
 * @content_length: the Content-Length value, or -1 when absent
 * @chunked:	Transfer-Encoding ends in chunked
 * @upgrade:	an Upgrade header field is present (the connection may stop
 *		being HTTP if the server answers 101)
 * @head_len:	bytes of the head, up to and including the blank line
 * @why:	on HTTP_MALFORMED, the failed rule
 */
struct http_request {
	struct proto_span method;
	struct proto_span target;
	enum http_form form;
	unsigned minor;
	bool is_connect;
	char host[PROTO_NAME_MAX + 1];
	enum proto_host_kind host_kind;
	uint16_t port;
	bool https;
	int64_t content_length;
	bool chunked;
	bool upgrade;
	size_t head_len;
	const char *why;
};

/**
 * http_request_parse() - parse an HTTP/1.0 or 1.1 request head
 * @buf:	every byte received so far on the connection
 * @len:	bytes in @buf
 * @out:	result; always written (fields zeroed first)
 *
 * Every complete line is validated as soon as it is seen, and the incomplete
 * last line as far as it goes, so non-HTTP input fails early. Line ends must
 * be CRLF; a head longer than HTTP_HEAD_MAX is refused.
 *
 * Return: HTTP_OK, HTTP_NEED_MORE, HTTP_ABSENT or HTTP_MALFORMED.
 */
enum http_result http_request_parse(const uint8_t *buf, size_t len, struct http_request *out);

/* Longest chunk-size line accepted (size, extensions, CRLF). */
#define HTTP_CHUNK_LINE_MAX 4096

/**
 * enum http_stream_state - where a client's request stream is (struct http_stream)
 * @HTTP_STREAM_HEAD:		expecting a request head (empty lines before it are passed)
 * @HTTP_STREAM_BODY:		inside a Content-Length body, @left bytes to go
 * @HTTP_STREAM_CHUNK_SIZE:	expecting a chunk-size line
 * @HTTP_STREAM_CHUNK_DATA:	inside a chunk, @left bytes to go
 * @HTTP_STREAM_CHUNK_END:	expecting the CRLF after a chunk's data
 * @HTTP_STREAM_TRAILER:	the trailer section after the last chunk
 * @HTTP_STREAM_WAIT:		the first request asked for an Upgrade (or was
 *				a CONNECT): nothing more is framed until the
 *				server's answer (http_stream_answered())
 */
enum http_stream_state {
	HTTP_STREAM_HEAD = 0,
	HTTP_STREAM_BODY,
	HTTP_STREAM_CHUNK_SIZE,
	HTTP_STREAM_CHUNK_DATA,
	HTTP_STREAM_CHUNK_END,
	HTTP_STREAM_TRAILER,
	HTTP_STREAM_WAIT,
};

/**
 * struct http_stream - the framing state of one client->server HTTP/1.x stream
 * @state:	where the stream is
 * @left:	body or chunk bytes still to come (BODY, CHUNK_DATA); trailer
 *		bytes seen so far (TRAILER)
 * @requests:	request heads framed so far
 * @wait_after:	the current request asked for an Upgrade: WAIT after its body
 * @connect:	the request that caused WAIT is a CONNECT (2xx opens a tunnel;
 *		for an Upgrade only 101 does)
 *
 * All zero is the start of a stream. The caller keeps it; the functions
 * below only read and update it (no other state, no allocation).
 */
struct http_stream {
	enum http_stream_state state;
	uint64_t left;
	unsigned requests;
	bool wait_after;
	bool connect;
};

/**
 * enum http_stream_result - outcome of http_stream_next()
 * @HTTP_STREAM_REQUEST:	the first @len bytes are a complete request head
 *				(@req): check it, then pass the bytes on
 * @HTTP_STREAM_PASS:		the first @len bytes are body, chunk framing or
 *				empty lines: pass them on as they are
 * @HTTP_STREAM_NEED_MORE:	a head or framing line is incomplete: call
 *				again with more bytes (nothing consumed)
 * @HTTP_STREAM_HOLD:		the stream is in HTTP_STREAM_WAIT: pass nothing
 *				until the server answered
 * @HTTP_STREAM_MALFORMED:	the bytes cannot be framed as HTTP/1.x
 *				requests: deny (@why)
 */
enum http_stream_result {
	HTTP_STREAM_REQUEST = 0,
	HTTP_STREAM_PASS,
	HTTP_STREAM_NEED_MORE,
	HTTP_STREAM_HOLD,
	HTTP_STREAM_MALFORMED,
};

/**
 * struct http_step - what http_stream_next() found
 * @len:	bytes of the input it is about (REQUEST, PASS)
 * @req:	on REQUEST, the parsed head (see http_request_parse(); HTTP_ABSENT
 *		heads are REQUEST with an empty @req.host)
 * @why:	on MALFORMED, the failed rule
 */
struct http_step {
	size_t len;
	struct http_request req;
	const char *why;
};

/**
 * http_stream_next() - frame the next piece of a client's request stream
 * @s:		the stream's state (updated past the piece on REQUEST and PASS)
 * @buf:	the stream's bytes not consumed yet
 * @len:	bytes in @buf
 * @out:	what was found
 *
 * Framing follows RFC 9112 §6 for requests: a head is followed by a chunked
 * body (Transfer-Encoding ending in chunked), else a Content-Length body,
 * else none. Empty lines (CRLF) before a head are passed on (§2.2); a bare
 * CR or LF there, a chunk-size that is not 1..15 hex digits, a chunk
 * extension with control bytes, chunk data not followed by CRLF, a trailer
 * line that is not a field line, a CONNECT with a body, and everything
 * http_request_parse() refuses are MALFORMED. A body or chunk's bytes are
 * never taken for a head.
 *
 * Return: a named outcome (enum http_stream_result).
 */
enum http_stream_result http_stream_next(struct http_stream *s, const uint8_t *buf, size_t len,
					 struct http_step *out);

/**
 * http_stream_body() - @n body or chunk bytes went on without http_stream_next()
 * @s:		the stream, in BODY or CHUNK_DATA
 * @n:		bytes (at most @s->left; more is capped)
 *
 * For a caller that moves a body straight from one socket to another once
 * it knows how long it is.
 */
void http_stream_body(struct http_stream *s, uint64_t n);

/**
 * http_stream_answered() - the server answered the request that made @s wait
 * @s:		the stream, in HTTP_STREAM_WAIT
 * @status:	the status code of the server's first response
 *
 * Return: true when the connection is now a tunnel (101 to an Upgrade, 2xx
 * to a CONNECT): no more framing applies; false when the server stayed with
 * HTTP, and the stream expects the next head again.
 */
bool http_stream_answered(struct http_stream *s, unsigned status);

/**
 * http_response_status() - the status code at the start of a response
 * @buf:	the first bytes the server sent
 * @len:	bytes in @buf
 * @status:	on HTTP_OK, the code (100..599)
 *
 * Return: HTTP_OK ("HTTP/1.x NNN" followed by SP or CR), HTTP_NEED_MORE (a
 * valid prefix), or HTTP_MALFORMED.
 */
enum http_result http_response_status(const uint8_t *buf, size_t len, unsigned *status);

/**
 * http_403_compose() - write a complete "403 Forbidden" response
 * @out:	destination
 * @size:	bytes available at @out
 * @reason:	one-line reason for a person; bytes outside printable ASCII
 *		become '?'; at most 512 bytes
 * @denial_id:	the audit event's id (letters, digits, '.', '_', '-';
 *		1..64 bytes), also sent as the X-Warden-Denial header
 *
 * The response closes the connection. Nothing is written past @size.
 *
 * Return: bytes written, -EINVAL for a bad @reason or @denial_id, or -ENOSPC.
 */
int http_403_compose(char *out, size_t size, const char *reason, const char *denial_id);

/* ------------------------------------------------------------------ DNS */

/* Longest name on the wire (RFC 1035 §2.3.4), and longest label. */
#define DNS_WIRE_NAME_MAX 255
#define DNS_LABEL_MAX 63
#define DNS_HEADER_LEN 12
/* UDP payload size we advertise in our OPT records. */
#define DNS_OUR_UDP_SIZE 1232

enum dns_result {
	DNS_OK = 0,
	DNS_NEED_MORE, /* dns_tcp_frame() only: the framed message is not all here */
	DNS_ABSENT,    /* dns_rr_next(): no more records */
	DNS_MALFORMED,
};

enum dns_type {
	DNS_TYPE_A = 1,
	DNS_TYPE_NS = 2,
	DNS_TYPE_CNAME = 5,
	DNS_TYPE_SOA = 6,
	DNS_TYPE_PTR = 12,
	DNS_TYPE_MX = 15,
	DNS_TYPE_TXT = 16,
	DNS_TYPE_AAAA = 28,
	DNS_TYPE_SRV = 33,
	DNS_TYPE_OPT = 41,
	DNS_TYPE_SVCB = 64,
	DNS_TYPE_HTTPS = 65,
	DNS_TYPE_NULL = 10,
	DNS_TYPE_TKEY = 249,
	DNS_TYPE_TSIG = 250,
	DNS_TYPE_IXFR = 251,
	DNS_TYPE_AXFR = 252,
	DNS_TYPE_MAILB = 253,
	DNS_TYPE_MAILA = 254,
	DNS_TYPE_ANY = 255,
	DNS_TYPE_CAA = 257,
};

#define DNS_CLASS_IN 1

enum dns_rcode {
	DNS_RCODE_NOERROR = 0,
	DNS_RCODE_FORMERR = 1,
	DNS_RCODE_SERVFAIL = 2,
	DNS_RCODE_NXDOMAIN = 3,
	DNS_RCODE_NOTIMP = 4,
	DNS_RCODE_REFUSED = 5,
	DNS_RCODE_BADVERS = 16, /* needs EDNS: the high bits live in the OPT TTL */
};

/* Extended DNS Error info-codes (RFC 8914 §4) we use. */
enum dns_ede {
	DNS_EDE_OTHER = 0,
	DNS_EDE_BLOCKED = 15,
	DNS_EDE_CENSORED = 16,
	DNS_EDE_FILTERED = 17,
	DNS_EDE_PROHIBITED = 18,
	DNS_EDE_NOT_SUPPORTED = 21,
};

/**
 * struct dns_edns - an OPT pseudo-record (RFC 6891)
 * @present:	the message had one
 * @udp_size:	requestor's UDP payload size (as sent)
 * @version:	EDNS version
 * @ext_rcode:	upper 8 bits of the extended rcode
 * @do_bit:	DNSSEC OK
 * @n_options:	options in its rdata
 */
struct dns_edns {
	bool present;
	uint16_t udp_size;
	uint8_t version;
	uint8_t ext_rcode;
	bool do_bit;
	unsigned n_options;
};

/**
 * struct dns_query - a parsed query (filled by dns_query_parse())
 * @header_ok:	the 12-byte header was there and QR was 0: @id and @flags are
 *		valid and a reply with @rcode_hint may be sent even when
 *		MALFORMED (never answer a message that has QR set)
 * @question_ok: the question was parsed: @qname_wire, @qtype, @qclass are set
 *		and a reply echoes them (may be true on MALFORMED)
 * @id:		message ID
 * @flags:	header flags word as sent
 * @rd:		recursion desired
 * @cd:		checking disabled
 * @qname:	question name, lower-case, no trailing dot ("" for the root);
 *		also set on MALFORMED when @question_ok, for messages: then each
 *		byte outside a host name (a '.' inside a label included) is '?'
 *		and the name is no proof of anything
 * @qname_wire:	question name in wire form as sent (case kept, uncompressed),
 *		echoed in the answer
 * @qname_wire_len: bytes in @qname_wire
 * @qtype:	question type
 * @qclass:	question class
 * @edns:	the OPT record, if any
 * @rcode_hint:	on DNS_MALFORMED with @header_ok: the rcode to answer with
 *		(FORMERR, NOTIMP, REFUSED or BADVERS)
 * @why:	on DNS_MALFORMED, the failed rule
 */
struct dns_query {
	bool header_ok;
	bool question_ok;
	uint16_t id;
	uint16_t flags;
	bool rd;
	bool cd;
	char qname[PROTO_NAME_MAX + 1];
	uint8_t qname_wire[DNS_WIRE_NAME_MAX];
	size_t qname_wire_len;
	uint16_t qtype;
	uint16_t qclass;
	struct dns_edns edns;
	uint16_t rcode_hint;
	const char *why;
};

/**
 * dns_query_parse() - parse a DNS query as the gateway's DNS front sees it
 * @buf:	one whole DNS message (a UDP payload, or a TCP message without
 *		its length prefix: see dns_tcp_frame())
 * @len:	bytes in @buf
 * @out:	result; always written (fields zeroed first)
 *
 * A query is: QR=0, opcode QUERY, TC=0, exactly one question, every record
 * in the counts present and well-formed, at most one OPT (root owner, in the
 * additional section), no trailing bytes. A truncated message is MALFORMED.
 *
 * Return: DNS_OK or DNS_MALFORMED.
 */
enum dns_result dns_query_parse(const uint8_t *buf, size_t len, struct dns_query *out);

/**
 * dns_tcp_frame() - find one length-prefixed DNS message in a TCP stream
 * @buf:	bytes received so far
 * @len:	bytes in @buf
 * @msg_off:	on DNS_OK, where the message starts (2)
 * @msg_len:	on DNS_OK, its length
 *
 * Return: DNS_OK, DNS_NEED_MORE, or DNS_MALFORMED (a message shorter than a header).
 */
enum dns_result dns_tcp_frame(const uint8_t *buf, size_t len, size_t *msg_off, size_t *msg_len);

/**
 * struct dns_response - a parsed response's header and question
 * @id:		message ID
 * @flags:	header flags word
 * @rcode:	the rcode (extended with the OPT's bits when there is one)
 * @tc:		truncated
 * @qname:	question name (lower-case, no trailing dot), "" when QDCOUNT is 0
 * @qtype:	question type
 * @qclass:	question class
 * @counts:	QD, AN, NS, AR counts
 * @rr_off:	offset of the first resource record (answer section)
 * @edns:	the OPT record, if any
 * @why:	on DNS_MALFORMED, the failed rule
 */
struct dns_response {
	uint16_t id;
	uint16_t flags;
	uint16_t rcode;
	bool tc;
	char qname[PROTO_NAME_MAX + 1];
	uint16_t qtype;
	uint16_t qclass;
	uint16_t counts[4];
	size_t rr_off;
	struct dns_edns edns;
	const char *why;
};

/**
 * dns_response_parse() - parse and validate a whole DNS response
 * @buf:	the message
 * @len:	bytes in @buf
 * @out:	result; always written (fields zeroed first)
 *
 * Walks every record once, so dns_rr_next() afterwards cannot meet a framing
 * error: names decode (pointers only backward, no loops, <= 255 bytes), each
 * rdata fits, A is 4 bytes, AAAA 16, a CNAME rdata is exactly one name.
 * QDCOUNT must be 0 or 1.
 *
 * Return: DNS_OK or DNS_MALFORMED.
 */
enum dns_result dns_response_parse(const uint8_t *buf, size_t len, struct dns_response *out);

enum dns_section {
	DNS_SECTION_ANSWER = 0,
	DNS_SECTION_AUTHORITY,
	DNS_SECTION_ADDITIONAL,
};

/**
 * struct dns_rr - one resource record (filled by dns_rr_next())
 * @section:	where it was
 * @name:	owner name, lower-case, no trailing dot
 * @type:	RR type
 * @rclass:	RR class (for OPT: the UDP size)
 * @ttl:	TTL (for OPT: the extended flags)
 * @rdata:	where its rdata is in the message
 * @addr:	A (4 bytes) or AAAA (16 bytes) address
 * @target:	CNAME target, decompressed, lower-case, no trailing dot
 */
struct dns_rr {
	enum dns_section section;
	char name[PROTO_NAME_MAX + 1];
	uint16_t type;
	uint16_t rclass;
	uint32_t ttl;
	struct proto_span rdata;
	uint8_t addr[16];
	char target[PROTO_NAME_MAX + 1];
};

/**
 * struct dns_rr_iter - position of dns_rr_next() in a response
 * @off:	offset of the next record
 * @left:	records left in the answer, authority and additional sections
 */
struct dns_rr_iter {
	size_t off;
	uint16_t left[3];
};

/**
 * dns_rr_iter_init() - start walking the records of a parsed response
 * @it:		the iterator
 * @resp:	a response dns_response_parse() returned DNS_OK for
 */
void dns_rr_iter_init(struct dns_rr_iter *it, const struct dns_response *resp);

/**
 * dns_rr_next() - the next resource record of a response
 * @buf:	the message given to dns_response_parse()
 * @len:	its length
 * @it:		the iterator (advanced on DNS_OK)
 * @rr:		the record
 *
 * Return: DNS_OK, DNS_ABSENT at the end, or DNS_MALFORMED.
 */
enum dns_result dns_rr_next(const uint8_t *buf, size_t len, struct dns_rr_iter *it,
			    struct dns_rr *rr);

/**
 * struct dns_answer - one synthetic address answer
 * @type:	DNS_TYPE_A (4 bytes of @addr) or DNS_TYPE_AAAA (16)
 * @ttl:	TTL in seconds
 * @addr:	the address, network order
 */
struct dns_answer {
	uint16_t type;
	uint32_t ttl;
	uint8_t addr[16];
};

/**
 * struct dns_reply - how to answer a query (input of dns_reply_compose())
 * @rcode:	DNS_RCODE_* (BADVERS only when the query had EDNS)
 * @aa:		set the AA bit (our own synthetic answers)
 * @answers:	address answers, each owned by the question name
 * @n_answers:	how many (0 for NXDOMAIN/REFUSED, or NODATA such as HTTPS/SVCB)
 * @ede:	add an Extended DNS Error option (only when the query had EDNS)
 * @ede_code:	its info-code (enum dns_ede)
 * @ede_text:	its EXTRA-TEXT (NULL for none); bytes outside printable ASCII
 *		become '?'; at most 256 bytes
 * @tcp:	the reply goes over TCP: no UDP size limit
 */
struct dns_reply {
	uint16_t rcode;
	bool aa;
	const struct dns_answer *answers;
	size_t n_answers;
	bool ede;
	uint16_t ede_code;
	const char *ede_text;
	bool tcp;
};

/**
 * dns_reply_compose() - answer a parsed query
 * @q:		the query (DNS_OK from dns_query_parse(), or MALFORMED with
 *		header_ok: then the question is echoed only if it was parsed)
 * @r:		what to answer
 * @out:	destination
 * @size:	bytes available at @out
 *
 * Copies the ID, RD and CD; sets QR and RA, AA when asked; echoes the question
 * as sent; answers point at the question name. When the query had an OPT,
 * one is added (our UDP size, DO copied, EDE when asked). Over UDP the reply
 * is limited to the client's size (512 without EDNS): if the answers do not
 * fit, they are all dropped and TC is set.
 *
 * Return: bytes written, -EINVAL for a bad argument, or -ENOSPC when even
 * the truncated reply does not fit in @size.
 */
int dns_reply_compose(const struct dns_query *q, const struct dns_reply *r, uint8_t *out,
		      size_t size);

/**
 * dns_query_compose() - write a query with one question (class IN, RD set)
 * @id:		message ID
 * @name:	the question name, a host name in text form as proto_host_parse()
 *		accepts it (one trailing dot allowed; written lower-case)
 * @qtype:	question type (enum dns_type or any other)
 * @out:	destination
 * @size:	bytes available at @out
 *
 * No EDNS record, no other section: the smallest query a resolver answers.
 * The result is a query dns_query_parse() accepts.
 *
 * Return: bytes written, -EINVAL when @name is not a host name, or -ENOSPC.
 */
int dns_query_compose(uint16_t id, const char *name, uint16_t qtype, uint8_t *out, size_t size);

/**
 * dns_name_equal() - compare two text names case-insensitively, ignoring one
 *		      trailing dot on either
 * @a:		a name
 * @b:		another
 *
 * Return: true when they name the same node.
 */
bool dns_name_equal(const char *a, const char *b);

/* SOCKS5 greetings, requests and replies (socks.c) */
#include "gateway/proto/socks.h"
/* QUIC client Initial framing (quic.c) */
#include "gateway/proto/quic.h"

#endif /* WARDEN_GATEWAY_PROTO_H */

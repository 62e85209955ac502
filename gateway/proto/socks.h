/* socks.h - the SOCKS5 part of the gateway's pure protocol parsers (RFC 1928: the greeting,
 * the request, the reply), kept apart from proto.h for its length; proto.h includes it, and
 * the same rules hold (pure, named outcomes, a rule's words on MALFORMED). */
#ifndef WARDEN_GATEWAY_PROTO_SOCKS_H
#define WARDEN_GATEWAY_PROTO_SOCKS_H

#include <stddef.h>
#include <stdint.h>

#ifndef PROTO_NAME_MAX
#error "include gateway/proto/proto.h, not socks.h"
#endif

/* Longest SOCKS5 greeting (VER, NMETHODS, 255 methods) and request (a 255-byte name). */
#define SOCKS5_GREETING_MAX 257
#define SOCKS5_REQUEST_MAX 262
/* Bytes of a composed reply (IPv4 bound address). */
#define SOCKS5_REPLY_LEN 10

/**
 * enum socks5_result - outcome of socks5_greeting_parse() and socks5_request_parse()
 * @SOCKS5_OK:		a complete, valid message
 * @SOCKS5_NEED_MORE:	a valid prefix; read more
 * @SOCKS5_REFUSED:	well-formed, but asks for what the gateway does not do (no
 *			"no authentication" method; a command other than CONNECT; an
 *			unknown address type): answer with @rep, then close
 * @SOCKS5_MALFORMED:	cannot be parsed: close without an answer
 */
enum socks5_result {
	SOCKS5_OK = 0,
	SOCKS5_NEED_MORE,
	SOCKS5_REFUSED,
	SOCKS5_MALFORMED,
};

/**
 * enum socks5_rep - RFC 1928 §6 reply codes (and §3's "no acceptable methods")
 */
enum socks5_rep {
	SOCKS5_REP_OK = 0x00,
	SOCKS5_REP_FAILURE = 0x01,
	SOCKS5_REP_NOT_ALLOWED = 0x02,
	SOCKS5_REP_HOST_UNREACHABLE = 0x04,
	SOCKS5_REP_REFUSED = 0x05,
	SOCKS5_REP_CMD_UNSUPPORTED = 0x07,
	SOCKS5_REP_ATYP_UNSUPPORTED = 0x08,
	SOCKS5_NO_METHOD = 0xff,
};

/**
 * struct socks5_greeting - a client's method selection message (RFC 1928 §3)
 * @len:	its bytes (the request follows)
 * @rep:	on SOCKS5_REFUSED, SOCKS5_NO_METHOD
 * @why:	on SOCKS5_MALFORMED and SOCKS5_REFUSED, the failed rule
 */
struct socks5_greeting {
	size_t len;
	uint8_t rep;
	const char *why;
};

/**
 * socks5_greeting_parse() - read a SOCKS5 greeting: VER 5, NMETHODS 1..255, the methods
 * @buf:	every byte received so far on the connection
 * @len:	bytes in @buf
 * @out:	result; always written (fields zeroed first)
 *
 * Return: SOCKS5_OK when "no authentication" (0x00) is offered, SOCKS5_REFUSED when it is
 * not, SOCKS5_NEED_MORE, or SOCKS5_MALFORMED (another version, no methods).
 */
enum socks5_result socks5_greeting_parse(const uint8_t *buf, size_t len,
					 struct socks5_greeting *out);

/**
 * struct socks5_request - a client's request (RFC 1928 §4)
 * @cmd:	CMD (1 CONNECT, 2 BIND, 3 UDP ASSOCIATE, ...)
 * @atyp:	ATYP (1 IPv4, 3 domain name, 4 IPv6)
 * @host:	the destination: a host name as proto_host_parse() gives it (a domain name
 *		that is a dotted quad is an IPv4 literal), or an address literal in text
 * @host_kind:	what @host is (PROTO_HOST_NAME, _IPV4 or _IPV6)
 * @port:	DST.PORT (1..65535)
 * @len:	bytes of the request (what follows is the tunnel's first bytes)
 * @rep:	on SOCKS5_REFUSED, the reply code to answer with
 * @why:	on SOCKS5_MALFORMED and SOCKS5_REFUSED, the failed rule
 */
struct socks5_request {
	uint8_t cmd;
	uint8_t atyp;
	char host[PROTO_NAME_MAX + 1];
	enum proto_host_kind host_kind;
	uint16_t port;
	size_t len;
	uint8_t rep;
	const char *why;
};

/**
 * socks5_request_parse() - read a SOCKS5 request: VER 5, CMD, RSV 0, ATYP, DST.ADDR, DST.PORT
 * @buf:	the bytes after the greeting
 * @len:	bytes in @buf
 * @out:	result; always written (fields zeroed first)
 *
 * Only CONNECT is taken; BIND and UDP ASSOCIATE (and any other command) are refused with
 * "command not supported", an unknown address type with "address type not supported". A
 * domain name must be a valid host name (or a strict dotted quad); port 0 is malformed.
 *
 * Return: SOCKS5_OK, SOCKS5_NEED_MORE, SOCKS5_REFUSED or SOCKS5_MALFORMED.
 */
enum socks5_result socks5_request_parse(const uint8_t *buf, size_t len, struct socks5_request *out);

/**
 * socks5_reply_compose() - write a reply: VER 5, @rep, RSV 0, bound address 0.0.0.0:0
 * @out:	destination
 * @size:	bytes available at @out (at least SOCKS5_REPLY_LEN)
 * @rep:	the reply code (enum socks5_rep, not SOCKS5_NO_METHOD)
 *
 * The bound address is not the upstream's: the client learns nothing of where it went.
 *
 * Return: SOCKS5_REPLY_LEN, or -ENOSPC.
 */
int socks5_reply_compose(uint8_t *out, size_t size, uint8_t rep);

#endif /* WARDEN_GATEWAY_PROTO_SOCKS_H */

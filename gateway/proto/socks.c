/* socks.c - the SOCKS5 greeting and CONNECT request (RFC 1928, no authentication only) read
 * for the gateway's proxy port, and the reply it answers with (pure). */
#include "gateway/proto/cursor.h"
#include "gateway/proto/proto_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#define SOCKS5_VERSION 5
#define SOCKS5_NOAUTH 0x00
#define SOCKS5_CMD_CONNECT 1
#define SOCKS5_ATYP_IPV4 1
#define SOCKS5_ATYP_NAME 3
#define SOCKS5_ATYP_IPV6 4

static enum socks5_result bad(const char **why, const char *rule)
{
	*why = rule;
	return SOCKS5_MALFORMED;
}

enum socks5_result socks5_greeting_parse(const uint8_t *buf, size_t len,
					 struct socks5_greeting *out)
{
	struct cur c;
	const uint8_t *methods;
	uint8_t n;

	memset(out, 0, sizeof(*out));
	cur_init(&c, buf, len);
	if (!cur_remaining(&c))
		return SOCKS5_NEED_MORE;
	if (cur_u8(&c) != SOCKS5_VERSION)
		return bad(&out->why, "not SOCKS version 5");
	if (!cur_remaining(&c))
		return SOCKS5_NEED_MORE;
	n = cur_u8(&c);
	if (!n)
		return bad(&out->why, "SOCKS5 greeting offers no method");
	methods = cur_bytes(&c, n);
	if (!methods)
		return SOCKS5_NEED_MORE;
	out->len = c.off;
	if (!memchr(methods, SOCKS5_NOAUTH, n)) {
		out->rep = SOCKS5_NO_METHOD;
		out->why = "SOCKS5 greeting does not offer \"no authentication\"";
		return SOCKS5_REFUSED;
	}
	return SOCKS5_OK;
}

/* the destination address of a request at @c (ATYP already read) into @out */
static enum socks5_result read_addr(struct cur *c, struct socks5_request *out)
{
	const uint8_t *a;
	uint8_t n;

	switch (out->atyp) {
	case SOCKS5_ATYP_IPV4:
		a = cur_bytes(c, 4);
		if (!a)
			return SOCKS5_NEED_MORE;
		snprintf(out->host, sizeof(out->host), "%u.%u.%u.%u", a[0], a[1], a[2], a[3]);
		out->host_kind = PROTO_HOST_IPV4;
		return SOCKS5_OK;
	case SOCKS5_ATYP_IPV6:
		a = cur_bytes(c, 16);
		if (!a)
			return SOCKS5_NEED_MORE;
		if (!inet_ntop(AF_INET6, a, out->host, sizeof(out->host)))
			return bad(&out->why, "bad IPv6 address");
		out->host_kind = PROTO_HOST_IPV6;
		return SOCKS5_OK;
	case SOCKS5_ATYP_NAME:
		if (!cur_remaining(c))
			return SOCKS5_NEED_MORE;
		n = cur_u8(c);
		if (!n)
			return bad(&out->why, "empty SOCKS5 domain name");
		a = cur_bytes(c, n);
		if (!a)
			return SOCKS5_NEED_MORE;
		out->host_kind =
		    proto_host_parse(a, n, PROTO_HOST_ALLOW_IPV4, out->host, &out->why);
		if (out->host_kind == PROTO_HOST_NONE)
			return SOCKS5_MALFORMED;
		return SOCKS5_OK;
	default:
		break;
	}
	out->rep = SOCKS5_REP_ATYP_UNSUPPORTED;
	out->why = "SOCKS5 address type not supported";
	return SOCKS5_REFUSED;
}

enum socks5_result socks5_request_parse(const uint8_t *buf, size_t len, struct socks5_request *out)
{
	enum socks5_result r;
	struct cur c;

	memset(out, 0, sizeof(*out));
	cur_init(&c, buf, len);
	if (!cur_remaining(&c))
		return SOCKS5_NEED_MORE;
	if (cur_u8(&c) != SOCKS5_VERSION)
		return bad(&out->why, "SOCKS5 request of another version");
	if (cur_remaining(&c) < 3)
		return SOCKS5_NEED_MORE;
	out->cmd = cur_u8(&c);
	if (cur_u8(&c) != 0)
		return bad(&out->why, "SOCKS5 request's reserved byte is not 0");
	out->atyp = cur_u8(&c);
	if (out->cmd != SOCKS5_CMD_CONNECT) {
		/* refused whatever follows: nothing of it is used */
		out->rep = SOCKS5_REP_CMD_UNSUPPORTED;
		out->why = out->cmd == 2   ? "SOCKS5 BIND is not supported"
			   : out->cmd == 3 ? "SOCKS5 UDP ASSOCIATE is not supported"
					   : "SOCKS5 command not supported";
		return SOCKS5_REFUSED;
	}
	r = read_addr(&c, out);
	if (r != SOCKS5_OK)
		return r;
	if (cur_remaining(&c) < 2)
		return SOCKS5_NEED_MORE;
	out->port = cur_u16(&c);
	if (!out->port)
		return bad(&out->why, "SOCKS5 destination port 0");
	out->len = c.off;
	return SOCKS5_OK;
}

int socks5_reply_compose(uint8_t *out, size_t size, uint8_t rep)
{
	static const uint8_t tail[] = {0, SOCKS5_ATYP_IPV4, 0, 0, 0, 0, 0, 0};

	if (size < SOCKS5_REPLY_LEN)
		return -ENOSPC;
	out[0] = SOCKS5_VERSION;
	out[1] = rep;
	memcpy(out + 2, tail, sizeof(tail));
	return SOCKS5_REPLY_LEN;
}

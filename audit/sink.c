/* sink.c - where a copy of the audit log is shipped: the pure parser of a sink ("unix:PATH",
 * "udp:ADDR:PORT", "tcp:ADDR:PORT", "journald[:PATH]") and of syslog facility names. */
#include "audit/audit.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

/* RFC 5424 section 6.2.1, table 1: the facilities by number */
static const char *const facility_names[24] = {
    "kern",   "user",	"mail",	    "daemon", "auth",	"syslog", "lpr",    "news",
    "uucp",   "cron",	"authpriv", "ftp",    "ntp",	"audit",  "alert",  "clock",
    "local0", "local1", "local2",   "local3", "local4", "local5", "local6", "local7",
};

int audit_sink_facility(const char *name)
{
	for (int i = 0; i < 24; i++)
		if (!strcmp(name, facility_names[i]))
			return i;
	return -EINVAL;
}

const char *audit_sink_facility_name(int facility)
{
	return facility >= 0 && facility < 24 ? facility_names[facility] : NULL;
}

static const struct {
	const char *prefix;
	enum audit_sink_kind kind;
} kinds[] = {
    {"unix:", AUDIT_SINK_UNIX},
    {"udp:", AUDIT_SINK_UDP},
    {"tcp:", AUDIT_SINK_TCP},
    {"journald:", AUDIT_SINK_JOURNALD},
};

static int fail(size_t *ret_off, size_t off, const char **ret_why, const char *why)
{
	*ret_off = off;
	*ret_why = why;
	return -EINVAL;
}

/* "ADDR:PORT" with ADDR dotted IPv4 or "[IPv6]" */
static int parse_hostport(const char *s, size_t base, struct audit_sink *out, size_t *ret_off,
			  const char **ret_why)
{
	char addr[INET6_ADDRSTRLEN + 1];
	const char *colon, *a = s;
	unsigned long long port;
	size_t alen;

	if (*s == '[') {
		const char *end = strchr(s, ']');

		if (!end)
			return fail(ret_off, base, ret_why,
				    "an IPv6 address in [brackets] lacks its `]`");
		a = s + 1;
		alen = (size_t)(end - a);
		colon = end + 1;
		if (*colon != ':')
			return fail(ret_off, base + (size_t)(colon - s), ret_why,
				    "expected `:PORT` after the address");
		out->family = AF_INET6;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return fail(ret_off, base + strlen(s), ret_why,
				    "expected ADDR:PORT (an IPv4 address, or [IPv6])");
		alen = (size_t)(colon - s);
		out->family = AF_INET;
		if (memchr(s, ':', alen))
			return fail(ret_off, base, ret_why,
				    "an IPv6 address goes in brackets: [ADDR]:PORT");
	}
	if (alen == 0 || alen >= sizeof(addr))
		return fail(ret_off, base, ret_why, "expected an address");
	memcpy(addr, a, alen);
	addr[alen] = '\0';
	if (inet_pton(out->family, addr, out->addr) != 1)
		return fail(ret_off, base + (size_t)(a - s), ret_why,
			    out->family == AF_INET
				? "not an IPv4 address (names are not resolved: give the address)"
				: "not an IPv6 address");
	if (wd_parse_uint(colon + 1, 65535, &port) || port == 0)
		return fail(ret_off, base + (size_t)(colon + 1 - s), ret_why,
			    "expected a port from 1 to 65535");
	out->port = (uint16_t)port;
	return 0;
}

int audit_sink_parse(const char *spec, struct audit_sink *out, size_t *ret_off,
		     const char **ret_why)
{
	struct audit_sink s;
	const char *rest = NULL;
	size_t base = 0;
	int ret;

	memset(&s, 0, sizeof(s)); /* padding too: configs are compared with memcmp() */
	s.kind = AUDIT_SINK_NONE;
	s.facility = out->facility;

	if (!strcmp(spec, "journald")) {
		s.kind = AUDIT_SINK_JOURNALD;
		snprintf(s.path, sizeof(s.path), "%s", AUDIT_SINK_JOURNALD_SOCKET);
		*out = s;
		return 0;
	}
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		size_t n = strlen(kinds[i].prefix);

		if (!strncmp(spec, kinds[i].prefix, n)) {
			s.kind = kinds[i].kind;
			rest = spec + n;
			base = n;
			break;
		}
	}
	if (!rest)
		return fail(ret_off, 0, ret_why,
			    "expected unix:PATH, udp:ADDR:PORT, tcp:ADDR:PORT, journald or "
			    "journald:PATH");
	switch (s.kind) {
	case AUDIT_SINK_UNIX:
	case AUDIT_SINK_JOURNALD:
		if (rest[0] != '/')
			return fail(ret_off, base, ret_why, "expected an absolute path");
		if (strlen(rest) >= sizeof(s.path))
			return fail(ret_off, base, ret_why,
				    "the path is too long for a unix socket (at most 107 bytes)");
		memcpy(s.path, rest, strlen(rest) + 1);
		break;
	case AUDIT_SINK_UDP:
	case AUDIT_SINK_TCP:
		ret = parse_hostport(rest, base, &s, ret_off, ret_why);
		if (ret)
			return ret;
		break;
	case AUDIT_SINK_NONE:
		return fail(ret_off, 0, ret_why, "no sink");
	}
	*out = s;
	return 0;
}

int audit_sink_format(const struct audit_sink *s, char *out, size_t outlen)
{
	char a[INET6_ADDRSTRLEN];
	int n;

	switch (s->kind) {
	case AUDIT_SINK_NONE:
		n = snprintf(out, outlen, "%s", "");
		break;
	case AUDIT_SINK_UNIX:
		n = snprintf(out, outlen, "unix:%s", s->path);
		break;
	case AUDIT_SINK_JOURNALD:
		n = strcmp(s->path, AUDIT_SINK_JOURNALD_SOCKET)
			? snprintf(out, outlen, "journald:%s", s->path)
			: snprintf(out, outlen, "journald");
		break;
	case AUDIT_SINK_UDP:
	case AUDIT_SINK_TCP:
		if (!inet_ntop(s->family, s->addr, a, sizeof(a)))
			return -EINVAL;
		n = snprintf(out, outlen, s->family == AF_INET6 ? "%s:[%s]:%u" : "%s:%s:%u",
			     s->kind == AUDIT_SINK_UDP ? "udp" : "tcp", a, (unsigned)s->port);
		break;
	default:
		return -EINVAL;
	}
	return n < 0 || (size_t)n >= outlen ? -ENOSPC : 0;
}

/* hostname.c - host name and address-literal syntax shared by policies, the matcher
 * and the gateway config: normalisation and checks, no I/O. Address ranges are
 * common/net.c's (wd_cidr_parse()). */
#include "policy/policy_internal.h"

#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>

bool net_is_ip_literal(const char *s)
{
	uint8_t buf[16];
	char tmp[INET6_ADDRSTRLEN + 2];
	size_t len = strlen(s);

	if (inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1)
		return true;
	if (len > 2 && len < sizeof(tmp) && s[0] == '[' && s[len - 1] == ']') {
		memcpy(tmp, s + 1, len - 2);
		tmp[len - 2] = '\0';
		return inet_pton(AF_INET6, tmp, buf) == 1;
	}
	return false;
}

static const char *const host_check_texts[] = {
    [HOST_OK] = "valid",
    [HOST_EMPTY] = "the name is empty",
    [HOST_TOO_LONG] = "the name is longer than 253 characters",
    [HOST_LABEL_EMPTY] = "the name has an empty label (two dots in a row, or a leading dot)",
    [HOST_LABEL_TOO_LONG] = "a label is longer than 63 characters",
    [HOST_BAD_CHAR] = "labels may hold only letters, digits and hyphens",
    [HOST_HYPHEN_EDGE] = "a label starts or ends with a hyphen",
    [HOST_ALL_NUMERIC] = "the last label is all digits (an address? use `cidr`)",
};

const char *host_check_text(enum host_check c)
{
	return host_check_texts[c];
}

/* host-name characters: the lower-case form, or 0 for a character not allowed */
static const char host_chars[256] = {
    ['-'] = '-', ['0'] = '0', ['1'] = '1', ['2'] = '2', ['3'] = '3', ['4'] = '4', ['5'] = '5',
    ['6'] = '6', ['7'] = '7', ['8'] = '8', ['9'] = '9', ['a'] = 'a', ['b'] = 'b', ['c'] = 'c',
    ['d'] = 'd', ['e'] = 'e', ['f'] = 'f', ['g'] = 'g', ['h'] = 'h', ['i'] = 'i', ['j'] = 'j',
    ['k'] = 'k', ['l'] = 'l', ['m'] = 'm', ['n'] = 'n', ['o'] = 'o', ['p'] = 'p', ['q'] = 'q',
    ['r'] = 'r', ['s'] = 's', ['t'] = 't', ['u'] = 'u', ['v'] = 'v', ['w'] = 'w', ['x'] = 'x',
    ['y'] = 'y', ['z'] = 'z', ['A'] = 'a', ['B'] = 'b', ['C'] = 'c', ['D'] = 'd', ['E'] = 'e',
    ['F'] = 'f', ['G'] = 'g', ['H'] = 'h', ['I'] = 'i', ['J'] = 'j', ['K'] = 'k', ['L'] = 'l',
    ['M'] = 'm', ['N'] = 'n', ['O'] = 'o', ['P'] = 'p', ['Q'] = 'q', ['R'] = 'r', ['S'] = 's',
    ['T'] = 't', ['U'] = 'u', ['V'] = 'v', ['W'] = 'w', ['X'] = 'x', ['Y'] = 'y', ['Z'] = 'z',
};

/* check one label out[start, end) that was already copied */
static enum host_check label_check(const char *out, size_t start, size_t end)
{
	if (end == start)
		return HOST_LABEL_EMPTY;
	if (end - start > 63)
		return HOST_LABEL_TOO_LONG;
	if (out[start] == '-' || out[end - 1] == '-')
		return HOST_HYPHEN_EDGE;
	return HOST_OK;
}

enum host_check host_normalise(const char *in, char *out, size_t outlen)
{
	size_t len = strlen(in), start = 0, i;
	enum host_check hc;
	bool digits = true;

	if (len && in[len - 1] == '.')
		len--;
	if (len == 0)
		return HOST_EMPTY;
	if (len > 253 || len + 1 > outlen)
		return HOST_TOO_LONG;
	for (i = 0; i < len; i++) {
		char c = host_chars[(unsigned char)in[i]];

		if (in[i] == '.') {
			hc = label_check(out, start, i);
			if (hc != HOST_OK)
				return hc;
			out[i] = '.';
			start = i + 1;
			digits = true;
			continue;
		}
		if (!c)
			return HOST_BAD_CHAR;
		digits = digits && c >= '0' && c <= '9';
		out[i] = c;
	}
	hc = label_check(out, start, len);
	if (hc != HOST_OK)
		return hc;
	out[len] = '\0';
	return digits ? HOST_ALL_NUMERIC : HOST_OK;
}

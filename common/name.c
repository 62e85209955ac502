/* name.c - host-name syntax, once for every reader of names: a policy's rules and the
 * ceiling (policy/), the names the gateway's parsers read off the wire (gateway/proto/), and
 * address literals. Pure: no I/O. */
#include "common/common.h"

#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>

bool wd_name_is_ip_literal(const char *s)
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

static const char *const name_check_texts[] = {
    [WD_NAME_OK] = "valid",
    [WD_NAME_EMPTY] = "the name is empty",
    [WD_NAME_TOO_LONG] = "the name is longer than 253 characters",
    [WD_NAME_LABEL_EMPTY] = "the name has an empty label (two dots in a row, or a leading dot)",
    [WD_NAME_LABEL_TOO_LONG] = "a label is longer than 63 characters",
    [WD_NAME_BAD_CHAR] = "labels may hold only letters, digits and hyphens",
    [WD_NAME_HYPHEN_EDGE] = "a label starts or ends with a hyphen",
};

const char *wd_name_check_text(enum wd_name_check c)
{
	if ((unsigned)c >= WD_ARRAY_SIZE(name_check_texts))
		return "invalid";
	return name_check_texts[c];
}

/* host-name characters: the lower-case form, or 0 for a character not allowed ('_' is
 * WD_NAME_WIRE's) */
static const char name_chars[256] = {
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
static enum wd_name_check label_check(const char *out, size_t start, size_t end, unsigned flags)
{
	if (end == start)
		return WD_NAME_LABEL_EMPTY;
	if (end - start > WD_NAME_LABEL_MAX)
		return WD_NAME_LABEL_TOO_LONG;
	if (!(flags & WD_NAME_WIRE) && (out[start] == '-' || out[end - 1] == '-'))
		return WD_NAME_HYPHEN_EDGE;
	return WD_NAME_OK;
}

enum wd_name_check wd_name_fold(const char *in, size_t len, unsigned flags, char *out,
				size_t outlen, size_t *ret_last)
{
	size_t start = 0, i;
	enum wd_name_check nc;

	if (outlen)
		out[0] = '\0';
	if (len && in[len - 1] == '.')
		len--;
	if (len == 0)
		return WD_NAME_EMPTY;
	if (len > WD_NAME_MAX || len + 1 > outlen)
		return WD_NAME_TOO_LONG;
	for (i = 0; i < len; i++) {
		char c = name_chars[(unsigned char)in[i]];

		if (in[i] == '.') {
			nc = label_check(out, start, i, flags);
			if (nc != WD_NAME_OK)
				goto fail;
			out[i] = '.';
			start = i + 1;
			continue;
		}
		if (!c && in[i] == '_' && (flags & WD_NAME_WIRE))
			c = '_';
		if (!c) {
			nc = WD_NAME_BAD_CHAR;
			goto fail;
		}
		out[i] = c;
	}
	nc = label_check(out, start, len, flags);
	if (nc != WD_NAME_OK)
		goto fail;
	out[len] = '\0';
	if (ret_last)
		*ret_last = start;
	return WD_NAME_OK;
fail:
	out[0] = '\0';
	return nc;
}

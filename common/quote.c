/* quote.c - a string as one double-quoted literal that is valid YAML and valid JSON: the
 * quoting every writer of policies, gateway configs and hand-written JSON uses, once. */
#include "common/common.h"

#include <errno.h>

int wd_yaml_quote(struct wd_buf *out, const char *s)
{
	int ret = wd_buf_puts(out, "\"");

	for (const unsigned char *c = (const unsigned char *)s; *c && !ret; c++) {
		switch (*c) {
		case '"':
			ret = wd_buf_puts(out, "\\\"");
			break;
		case '\\':
			ret = wd_buf_puts(out, "\\\\");
			break;
		case '\n':
			ret = wd_buf_puts(out, "\\n");
			break;
		case '\r':
			ret = wd_buf_puts(out, "\\r");
			break;
		case '\t':
			ret = wd_buf_puts(out, "\\t");
			break;
		default:
			if (*c < 0x20 || *c == 0x7f) {
				ret = wd_buf_printf(out, "\\u%04x", *c);
			} else if (c[0] == 0xc2 && c[1] == 0x85) {
				/* NEL, LS, PS: line breaks to a YAML 1.1 reader (libyaml), which
				 * would fold them inside the quotes; escaped, they read back as
				 * themselves */
				ret = wd_buf_puts(out, "\\u0085");
				c++;
			} else if (c[0] == 0xe2 && c[1] == 0x80 && (c[2] == 0xa8 || c[2] == 0xa9)) {
				ret = wd_buf_puts(out, c[2] == 0xa8 ? "\\u2028" : "\\u2029");
				c += 2;
			} else {
				ret = wd_buf_append(out, c, 1);
			}
			break;
		}
	}
	return ret ? ret : wd_buf_puts(out, "\"");
}

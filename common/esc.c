/* esc.c - text a run controls, made safe for a person's terminal: the one escaper every verb
 * prints through (warden(1), "Text from runs"), and the strict UTF-8 reader under it.
 *
 * A run chooses its command words, its policy's name and path, the paths it opens, the names
 * it looks up and an MCP tool call's arguments; `warden status`, `logs`, `kill`, `allowlist`,
 * `doctor`, `trace`, `init` and `mcp` show them to someone else (root sees every user's runs).
 * Sent as they are, ESC ] 0 ; ... BEL retitles that person's terminal, ESC [ 2 J clears it, a
 * C1 byte (0x9b is CSI on some terminals) does the same in one byte, and U+202E turns the rest
 * of a line around. wd_esc_append() writes every such character as visible text instead, in
 * one form: \xNN for a byte (C0 controls, DEL, bytes that are not UTF-8, a backslash's own
 * "\\"), \u{NNNN} for a code point (C1 controls written as UTF-8, bidi controls, line and
 * paragraph separators). Everything else passes as it is.
 */
#include "common/common.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

int wd_utf8_seqlen(const char *p, size_t n)
{
	const unsigned char *s = (const unsigned char *)p;
	unsigned char lo = 0x80, hi = 0xbf;
	int len;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (n < (size_t)len)
		return 0;
	/* The second byte's range rules out overlongs, surrogates and > U+10FFFF. */
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (int i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

/* the code point of the valid sequence of @len bytes at @s */
static unsigned decode_cp(const unsigned char *s, int len)
{
	static const unsigned char lead_mask[] = {0, 0x7f, 0x1f, 0x0f, 0x07};
	unsigned cp = s[0] & lead_mask[len];

	for (int i = 1; i < len; i++)
		cp = cp << 6 | (s[i] & 0x3f);
	return cp;
}

/* code points a terminal acts on instead of showing: C1 controls, the bidi embeddings,
 * overrides, isolates and marks (Unicode TR #9), the line and paragraph separators */
static bool cp_is_control(unsigned cp)
{
	return (cp >= 0x80 && cp < 0xa0) || cp == 0x061c || cp == 0x200e || cp == 0x200f ||
	       (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

int wd_esc_append(struct wd_buf *b, const char *s, size_t width)
{
	size_t start = b->len, n = strlen(s), cols = 0, cut_len = start, cut_cols = 0;
	int ret = 0;

	for (size_t i = 0; i < n;) {
		int l = wd_utf8_seqlen(s + i, n - i);
		unsigned cp = l > 0 ? decode_cp((const unsigned char *)s + i, l) : 0;
		size_t before = b->len;

		/* the last place where "..." still fits in @width */
		if (width && cols + 3 <= width) {
			cut_len = b->len;
			cut_cols = cols;
		}
		if (l == 0 || cp < 0x20 || cp == 0x7f) {
			ret = wd_buf_printf(b, "\\x%02x", (unsigned char)s[i]);
			i++;
		} else if (cp == '\\') {
			ret = wd_buf_append(b, "\\\\", 2);
			i++;
		} else if (cp_is_control(cp)) {
			ret = wd_buf_printf(b, "\\u{%04x}", cp);
			i += (size_t)l;
		} else {
			ret = wd_buf_append(b, s + i, (size_t)l);
			i += (size_t)l;
		}
		if (ret < 0)
			break;
		/* a character shown as it is takes one column, an escape one per byte */
		cols += b->len - before == (size_t)l && cp != '\\' ? 1 : b->len - before;
		if (width && cols > width) {
			b->len = cut_len;
			ret = wd_buf_append(b, "...", 3);
			cols = cut_cols + 3;
			break;
		}
	}
	if (ret < 0) {
		/* what was appended is escaped; a half-written escape is not left behind */
		b->len = start;
		if (b->data)
			b->data[start] = '\0';
		return ret;
	}
	return (int)(cols > INT_MAX ? INT_MAX : cols);
}

const char *wd_esc(struct wd_buf *b, const char *s)
{
	wd_buf_reset(b);
	if (wd_esc_append(b, s ? s : "(null)", 0) < 0)
		return "(out of memory)";
	return wd_buf_cstr(b);
}

void wd_vsay(FILE *f, const char *fmt, va_list ap)
{
	struct wd_buf raw = WD_BUF_INIT, esc = WD_BUF_INIT;

	if (wd_buf_vprintf(&raw, fmt, ap) < 0 || wd_esc_append(&esc, wd_buf_cstr(&raw), 0) < 0 ||
	    wd_buf_append(&esc, "\n", 1) < 0) {
		fputs("warden: out of memory writing a message\n", f);
	} else {
		fwrite(esc.data, 1, esc.len, f);
	}
	wd_buf_free(&raw);
	wd_buf_free(&esc);
}

void wd_say(FILE *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	wd_vsay(f, fmt, ap);
	va_end(ap);
}

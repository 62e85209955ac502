/* test_common_esc.c - wd_esc_append() and wd_esc() of common/esc.c, the one escaper for text a
 * run controls: every C0 control, DEL, C1 as a raw byte and as UTF-8, the bidi controls,
 * invalid UTF-8 and the backslash come out as visible escapes; printable text, accents,
 * CJK and emoji pass; cutting to a width never splits an escape or a character; and no
 * output of any string of bytes holds a control byte. Also wd_utf8_seqlen(). */
#include "common/common.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* the escape of @in, whole */
static void expect(const char *in, const char *want)
{
	struct wd_buf b = WD_BUF_INIT;
	const char *got = wd_esc(&b, in);

	if (strcmp(got, want))
		fail_msg("got \"%s\", want \"%s\"", got, want);
	wd_buf_free(&b);
}

/* true when the output holds a byte or code point a terminal would act on */
static bool has_control(const char *s)
{
	size_t n = strlen(s);

	for (size_t i = 0; i < n;) {
		int l = wd_utf8_seqlen(s + i, n - i);
		const unsigned char *u = (const unsigned char *)s + i;

		if (l == 0 || u[0] < 0x20 || u[0] == 0x7f)
			return true;
		if (l == 2 && u[0] == 0xc2 && u[1] < 0xa0)
			return true;
		if (l == 3 && u[0] == 0xe2 && u[1] == 0x80 &&
		    (u[2] == 0x8e || u[2] == 0x8f || (u[2] >= 0xa8 && u[2] <= 0xae)))
			return true;
		if (l == 3 && u[0] == 0xe2 && u[1] == 0x81 && u[2] >= 0xa6 && u[2] <= 0xa9)
			return true;
		if (l == 2 && u[0] == 0xd8 && u[1] == 0x9c)
			return true;
		i += (size_t)l;
	}
	return false;
}

static void test_c0_and_del(void **state)
{
	(void)state;
	expect("\x1b]0;owned\x07", "\\x1b]0;owned\\x07");
	expect("\x1b[2J\x1b[H", "\\x1b[2J\\x1b[H");
	expect("a\rb\bc\td\ne\x7f", "a\\x0db\\x08c\\x09d\\x0ae\\x7f");
	for (unsigned c = 1; c < 0x20; c++) {
		char in[2] = {(char)c, 0}, want[8];

		snprintf(want, sizeof(want), "\\x%02x", c);
		expect(in, want);
	}
}

static void test_c1(void **state)
{
	(void)state;
	/* raw bytes are not UTF-8: each byte */
	expect("\x9b"
	       "2J",
	       "\\x9b2J");
	expect("\x80\x9f", "\\x80\\x9f");
	/* written as UTF-8: the code point */
	expect("\xc2\x9b"
	       "2J",
	       "\\u{009b}2J");
	expect("\xc2\x80\xc2\x9f\xc2\x85", "\\u{0080}\\u{009f}\\u{0085}");
	/* U+00A0 and up are text */
	expect("\xc2\xa0\xc3\xa9", "\xc2\xa0\xc3\xa9");
}

/* @cp (U+0800..U+FFFF, or two bytes below) as UTF-8 in @out: the bidi controls are made at
 * run time, so no string literal of this file holds one (clang-tidy's
 * misc-misleading-bidirectional) */
static const char *utf8(unsigned cp, char out[4])
{
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		out[2] = 0;
	} else {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		out[3] = 0;
	}
	return out;
}

static void test_bidi(void **state)
{
	static const unsigned cps[] = {0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067,
				       0x2068, 0x2069, 0x200e, 0x200f, 0x061c, 0x2028, 0x2029};
	char u[4], in[32], want[32];

	(void)state;
	for (size_t i = 0; i < WD_ARRAY_SIZE(cps); i++) {
		snprintf(want, sizeof(want), "\\u{%04x}", cps[i]);
		expect(utf8(cps[i], u), want);
	}
	/* "exe.txt" shown reversed as "txt.exe" on a terminal without the escape */
	snprintf(in, sizeof(in), "evil%stxt.exe", utf8(0x202e, u));
	expect(in, "evil\\u{202e}txt.exe");
	/* neighbours are text: U+2029 is the last, U+202F and U+2065 are not controls */
	expect("\xe2\x80\xaf\xe2\x81\xa5\xe2\x80\xa7", "\xe2\x80\xaf\xe2\x81\xa5\xe2\x80\xa7");
}

static void test_invalid_utf8(void **state)
{
	(void)state;
	expect("\xff\xfe", "\\xff\\xfe");
	expect("overlong \xc0\xaf", "overlong \\xc0\\xaf");
	expect("torn \xe2\x82", "torn \\xe2\\x82");
	expect("surrogate \xed\xa0\x80", "surrogate \\xed\\xa0\\x80");
	expect("too big \xf4\x90\x80\x80", "too big \\xf4\\x90\\x80\\x80");
	/* an overlong ESC is not an escape byte, but not text either */
	expect("\xc0\x9b", "\\xc0\\x9b");
}

static void test_text_passes(void **state)
{
	(void)state;
	expect("", "");
	expect("/usr/bin/npx -y @scope/server --port=8080 'x'", "/usr/bin/npx -y @scope/server "
								"--port=8080 'x'");
	expect("caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80",
	       "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80");
	/* a backslash is doubled: "\x1b" typed as text is not the escape of ESC */
	expect("\\x1b", "\\\\x1b");
	expect(NULL, "(null)");
}

static void test_width(void **state)
{
	struct wd_buf b = WD_BUF_INIT;
	char u[4];
	int cols;

	(void)state;
	cols = wd_esc_append(&b, "abcdef", 6);
	assert_int_equal(cols, 6);
	assert_string_equal(wd_buf_cstr(&b), "abcdef");
	wd_buf_reset(&b);
	cols = wd_esc_append(&b, "abcdefg", 6);
	assert_int_equal(cols, 6);
	assert_string_equal(wd_buf_cstr(&b), "abc...");
	/* an escape is never cut in half */
	wd_buf_reset(&b);
	cols = wd_esc_append(&b, "ab\x1b[2J", 7);
	assert_string_equal(wd_buf_cstr(&b), "ab...");
	assert_int_equal(cols, 5);
	/* a character counts one column, its bytes are never split */
	wd_buf_reset(&b);
	cols = wd_esc_append(&b, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 4);
	assert_string_equal(wd_buf_cstr(&b), "\xc3\xa9...");
	assert_int_equal(cols, 4);
	/* appending keeps what was there */
	wd_buf_reset(&b);
	wd_buf_puts(&b, "[");
	cols = wd_esc_append(&b, utf8(0x202e, u), 0);
	assert_int_equal(cols, 8);
	assert_string_equal(wd_buf_cstr(&b), "[\\u{202e}");
	wd_buf_free(&b);
}

/* every string of up to 3 bytes from a set of edge bytes: the output holds no control */
static void test_no_control_survives(void **state)
{
	static const unsigned char edge[] = {0x00, 0x07, 0x1b, 0x5c, 0x7f, 0x80, 0x9b, 0x9f,
					     0xa0, 0xae, 0xbf, 0xc0, 0xc2, 0xd8, 0xe2, 0x80,
					     0x81, 0xed, 0xf0, 0xf4, 0xff, 'a'};
	struct wd_buf b = WD_BUF_INIT;
	size_t n = sizeof(edge), tried = 0;

	(void)state;
	for (size_t i = 1; i < n; i++)
		for (size_t j = 0; j < n; j++)
			for (size_t k = 0; k < n; k++) {
				char in[4] = {(char)edge[i], (char)edge[j], (char)edge[k], 0};
				const char *out = wd_esc(&b, in);

				if (has_control(out))
					fail_msg("%02x %02x %02x -> a control", edge[i], edge[j],
						 edge[k]);
				tried++;
			}
	/* every 3-byte sequence with the bidi and C1 leads */
	for (unsigned x = 0x80; x < 0xc0; x++)
		for (unsigned y = 0x80; y < 0xc0; y++) {
			char in[8] = {(char)0xe2, (char)x, (char)y, (char)0xc2, (char)x, 0};

			if (has_control(wd_esc(&b, in)))
				fail_msg("e2 %02x %02x -> a control", x, y);
			tried++;
		}
	assert_true(tried > 10000);
	wd_buf_free(&b);
}

static void test_utf8_seqlen(void **state)
{
	(void)state;
	assert_int_equal(wd_utf8_seqlen("a", 1), 1);
	assert_int_equal(wd_utf8_seqlen("\xc3\xa9", 2), 2);
	assert_int_equal(wd_utf8_seqlen("\xc3\xa9", 1), 0);
	assert_int_equal(wd_utf8_seqlen("\xe2\x82\xac", 3), 3);
	assert_int_equal(wd_utf8_seqlen("\xf0\x9f\x98\x80", 4), 4);
	assert_int_equal(wd_utf8_seqlen("\x9b", 1), 0);
	assert_int_equal(wd_utf8_seqlen("\xc1\xbf", 2), 0);
	assert_int_equal(wd_utf8_seqlen("\xe0\x9f\xbf", 3), 0);
	assert_int_equal(wd_utf8_seqlen("\xed\xa0\x80", 3), 0);
	assert_int_equal(wd_utf8_seqlen("\xf4\x90\x80\x80", 4), 0);
	assert_int_equal(wd_utf8_seqlen("\xf5\x80\x80\x80", 4), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_c0_and_del),
	    cmocka_unit_test(test_c1),
	    cmocka_unit_test(test_bidi),
	    cmocka_unit_test(test_invalid_utf8),
	    cmocka_unit_test(test_text_passes),
	    cmocka_unit_test(test_width),
	    cmocka_unit_test(test_no_control_survives),
	    cmocka_unit_test(test_utf8_seqlen),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

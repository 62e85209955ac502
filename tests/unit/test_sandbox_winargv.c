/* test_sandbox_winargv.c - sandbox/winargv.c: an argv quoted into a Windows command line and
 * split again by the MSVC rules: Microsoft's table of examples, the classic quoting cases,
 * what is refused, the cmd.exe check, and split(quote(argv)) == argv over random argvs. */
#include "sandbox/winargv.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* split @line and compare with the NULL-terminated @want */
static void assert_split(const char *line, const char *const *want)
{
	char **argv = NULL;
	size_t argc = 0, n = 0;

	assert_int_equal(sandbox_win_split(line, strlen(line), &argv, &argc), 0);
	while (want[n])
		n++;
	assert_int_equal(argc, n);
	for (size_t i = 0; i < n; i++)
		assert_string_equal(argv[i], want[i]);
	assert_null(argv[argc]);
	sandbox_win_argv_free(argv);
}

/* "Parsing C++ command-line arguments" (Microsoft Learn), its table of examples (argv[0] is
 * the program name we put in front), and the UCRT's `""` inside quotes. */
static void test_split_microsoft_table(void **state)
{
	(void)state;
	assert_split("p \"abc\" d e", (const char *[]){"p", "abc", "d", "e", NULL});
	assert_split("p a\\\\b d\"e f\"g h", (const char *[]){"p", "a\\\\b", "de fg", "h", NULL});
	assert_split("p a\\\\\\\"b c d", (const char *[]){"p", "a\\\"b", "c", "d", NULL});
	assert_split("p a\\\\\\\\\"b c\" d e", (const char *[]){"p", "a\\\\b c", "d", "e", NULL});
	assert_split("p a\"b\"\" c d", (const char *[]){"p", "ab\" c d", NULL});
	/* the program name: quotes toggle, backslashes literal, even before a quote */
	assert_split("\"C:\\Program Files\\x\\\" a",
		     (const char *[]){"C:\\Program Files\\x\\", "a", NULL});
	assert_split("", (const char *[]){NULL});
	assert_split("p \t ", (const char *[]){"p", NULL});
	assert_split("p \"\" \"\"", (const char *[]){"p", "", "", NULL});
}

/* quote @argv (NULL-terminated) and compare with @want */
static void assert_quote(const char *const *argv, const char *want)
{
	struct wd_buf b = WD_BUF_INIT;
	size_t n = 0;

	while (argv[n])
		n++;
	assert_int_equal(sandbox_win_cmdline(&b, argv, NULL, n), 0);
	assert_string_equal(wd_buf_cstr(&b), want);
	wd_buf_free(&b);
}

static void test_quote_classic(void **state)
{
	(void)state;
	assert_quote((const char *[]){"p", "plain", NULL}, "p plain");
	assert_quote((const char *[]){"p", "", NULL}, "p \"\"");
	assert_quote((const char *[]){"p", "a b", "c\td", NULL}, "p \"a b\" \"c\td\"");
	/* backslashes are literal unless a quote follows */
	assert_quote((const char *[]){"p", "C:\\dir\\", NULL}, "p C:\\dir\\");
	/* ... or the closing quote does: doubled */
	assert_quote((const char *[]){"p", "C:\\my dir\\", NULL}, "p \"C:\\my dir\\\\\"");
	assert_quote((const char *[]){"p", "a\"b", NULL}, "p \"a\\\"b\"");
	assert_quote((const char *[]){"p", "a\\\"b", NULL}, "p \"a\\\\\\\"b\"");
	assert_quote((const char *[]){"p", "\"", NULL}, "p \"\\\"\"");
	assert_quote((const char *[]){"p", "\\\\", NULL}, "p \\\\");
	/* BatBadBut's payload stays one argument for a program (cmd.exe is refused, below) */
	assert_quote((const char *[]){"p", "\" &calc.exe", NULL}, "p \"\\\" &calc.exe\"");
	assert_quote((const char *[]){"C:\\Program Files\\x.exe", "1", NULL},
		     "\"C:\\Program Files\\x.exe\" 1");
	assert_quote((const char *[]){"C:\\dir with space\\", NULL}, "\"C:\\dir with space\\\"");
	assert_quote((const char *[]){"caf\xc3\xa9", "\xe2\x82\xac x", NULL},
		     "caf\xc3\xa9 \"\xe2\x82\xac x\"");
}

/* the command line "p ARG", ARG @n copies of the @len bytes @c; Return: what
 * sandbox_win_cmdline() returned */
static int units_fit(const char *c, size_t len, size_t n)
{
	struct wd_buf b = WD_BUF_INIT;
	char *arg = malloc(len * n + 1);
	const char *argv[2] = {"p", arg};
	int ret;

	assert_non_null(arg);
	for (size_t i = 0; i < n; i++)
		memcpy(arg + i * len, c, len);
	arg[len * n] = '\0';
	ret = sandbox_win_cmdline(&b, argv, NULL, 2);
	assert_int_equal(b.len, ret ? 0 : 2 + len * n);
	free(arg);
	wd_buf_free(&b);
	return ret;
}

static void test_quote_refused(void **state)
{
	struct wd_buf b = WD_BUF_INIT;
	const char *const nul[] = {"p", "a\0b"};
	const size_t nul_lens[] = {1, 3};
	const size_t ok_lens[] = {1, 1};
	const char *const quoted_program[] = {"a\"b.exe", "x"};
	const char *const fine_program[] = {"ab.exe", "x"};

	(void)state;
	assert_int_equal(sandbox_win_cmdline(&b, nul, nul_lens, 2), -EINVAL);
	assert_int_equal(b.len, 0);
	/* the same argv without reaching the NUL is fine */
	assert_int_equal(sandbox_win_cmdline(&b, nul, ok_lens, 2), 0);
	assert_string_equal(wd_buf_cstr(&b), "p a");
	wd_buf_reset(&b);
	assert_int_equal(sandbox_win_quote_arg(&b, "a\0", 2, false), -EINVAL);
	assert_int_equal(sandbox_win_cmdline(&b, quoted_program, NULL, 2), -EINVAL);
	assert_int_equal(b.len, 0);
	assert_int_equal(sandbox_win_cmdline(&b, fine_program, NULL, 2), 0);
	wd_buf_reset(&b);
	assert_int_equal(sandbox_win_cmdline(&b, fine_program, NULL, 0), -EINVAL);
	/* the length limit, in UTF-16 units: "p " and then 32764 units fit, one more does not */
	assert_int_equal(units_fit("x", 1, SANDBOX_WIN_CMDLINE_MAX - 2), 0);
	assert_int_equal(units_fit("x", 1, SANDBOX_WIN_CMDLINE_MAX - 1), -E2BIG);
	/* a 2-byte character is one unit: twice the bytes still fit */
	assert_int_equal(units_fit("\xc3\xa9", 2, SANDBOX_WIN_CMDLINE_MAX - 2), 0);
	assert_int_equal(units_fit("\xc3\xa9", 2, SANDBOX_WIN_CMDLINE_MAX - 1), -E2BIG);
	/* a 4-byte character is two units (a surrogate pair) */
	assert_int_equal(units_fit("\xf0\x9f\x98\x80", 4, (SANDBOX_WIN_CMDLINE_MAX - 2) / 2), 0);
	assert_int_equal(units_fit("\xf0\x9f\x98\x80", 4, (SANDBOX_WIN_CMDLINE_MAX - 2) / 2 + 1),
			 -E2BIG);
	wd_buf_free(&b);
}

static void test_runs_cmd(void **state)
{
	static const char *const yes[] = {
	    "x.bat",	"C:\\a\\x.BAT", "x.cmd",   "x.Cmd. .",
	    "x.bat...", "cmd",		"CMD.EXE", "C:\\Windows\\System32\\cmd.exe",
	    "C:cmd",	"a/b/Cmd.exe",	"x.bat  ",
	};
	static const char *const no[] = {
	    "x.exe", "node.exe",       "C:\\a\\bat", "x.bat.exe", "xcmd.exe",
	    "cmdx",  "C:\\cmd\\x.exe", "x.batx",     "",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		assert_true(sandbox_win_runs_cmd(yes[i]));
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		assert_false(sandbox_win_runs_cmd(no[i]));
}

/* xorshift64*: the same sequence on every run */
static uint64_t next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

/* the bytes random arguments are made of: the special ones often */
static const char alphabet[] = "\\\\\\\"\"\" \t\na\v\xc3\xa9/&%^";

/* split(quote(argv)) == argv for many random argvs */
static void test_roundtrip_random(void **state)
{
	uint64_t seed = 0x5eed2924ull;
	struct wd_buf b = WD_BUF_INIT;
	char store[8][24];
	const char *argv[8];
	unsigned tried = 0;

	(void)state;
	for (unsigned iter = 0; iter < 200000; iter++) {
		size_t argc = 1 + next(&seed) % 8;
		char **back = NULL;
		size_t nback = 0;

		for (size_t i = 0; i < argc; i++) {
			size_t len = next(&seed) % 20;

			for (size_t j = 0; j < len; j++) {
				char c = alphabet[next(&seed) % (sizeof(alphabet) - 1)];

				store[i][j] = c;
				if (i == 0 && c == '"')
					store[i][j] = 'q';
			}
			store[i][len] = '\0';
			argv[i] = store[i];
		}
		wd_buf_reset(&b);
		assert_int_equal(sandbox_win_cmdline(&b, argv, NULL, argc), 0);
		assert_int_equal(sandbox_win_split(b.data, b.len, &back, &nback), 0);
		if (nback != argc)
			fail_msg("iteration %u: %zu arguments back from [%s]", iter, nback, b.data);
		for (size_t i = 0; i < argc; i++)
			if (strcmp(back[i], argv[i]))
				fail_msg(
				    "iteration %u: argument %zu [%s] came back as [%s] from [%s]",
				    iter, i, argv[i], back[i], b.data);
		sandbox_win_argv_free(back);
		tried++;
	}
	assert_int_equal(tried, 200000);
	wd_buf_free(&b);
}

/* the property must be able to fail: a naive quoting (quotes, no escapes) breaks it */
static void test_roundtrip_detects_naive(void **state)
{
	char **back = NULL;
	size_t n = 0;
	const char *naive = "p \"C:\\my dir\\\" \"a\"b\"";

	(void)state;
	assert_int_equal(sandbox_win_split(naive, strlen(naive), &back, &n), 0);
	assert_false(n == 3 && !strcmp(back[1], "C:\\my dir\\") && !strcmp(back[2], "a\"b"));
	sandbox_win_argv_free(back);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_split_microsoft_table),
	    cmocka_unit_test(test_quote_classic),
	    cmocka_unit_test(test_quote_refused),
	    cmocka_unit_test(test_runs_cmd),
	    cmocka_unit_test(test_roundtrip_random),
	    cmocka_unit_test(test_roundtrip_detects_naive),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

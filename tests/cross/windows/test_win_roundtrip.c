/* test_win_roundtrip.c - sandbox/winargv.c through a real Windows process: an argv quoted with
 * sandbox_win_cmdline(), converted to UTF-16, started with CreateProcessW() as argv_echo.exe
 * (beside this program), whose output says how its C runtime (wmain's argv) and
 * CommandLineToArgvW() split the line; both must give the argv back, byte for byte. The
 * classic injection cases, then a few thousand random argvs, then the negative control: a
 * naive quoting (each argument in quotes, nothing escaped) must be caught on the classic cases.
 * Under wine the runtime and shell32 are Wine's reimplementations; on Windows, Microsoft's. */
#include "sandbox/winargv.h"

#include <windows.h>

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define NRANDOM 3000
#define NBATCH 30

/* the child's path: argv_echo.exe in this program's folder */
static wchar_t child[MAX_PATH];

/* quote @argv the naive way (for the negative control): each argument in quotes as it is */
static int naive_cmdline(struct wd_buf *out, const char *const *argv, size_t argc)
{
	int r = 0;

	for (size_t i = 0; i < argc && !r; i++)
		r = wd_buf_printf(out, "%s\"%s\"", i ? " " : "", argv[i]);
	return r;
}

/* @s as UTF-16, or NULL */
static wchar_t *wide(const char *s)
{
	int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, NULL, 0);
	wchar_t *w;

	if (n <= 0)
		return NULL;
	w = calloc((size_t)n, sizeof(*w));
	if (w && MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, w, n) != n) {
		free(w);
		w = NULL;
	}
	return w;
}

/* run the child with the command line @line; Return: its output (NUL-terminated, free it), or
 * NULL with the reason printed */
static char *run_child(const char *line)
{
	SECURITY_ATTRIBUTES sa = {sizeof(sa), NULL, TRUE};
	STARTUPINFOW si = {0};
	PROCESS_INFORMATION pi;
	HANDLE rd, wr;
	struct wd_buf out = WD_BUF_INIT;
	wchar_t *wline = wide(line);
	DWORD n, code = 1;
	char chunk[4096];
	BOOL ok;

	if (!wline || !CreatePipe(&rd, &wr, &sa, 0)) {
		free(wline);
		print_error("cannot convert the line or make a pipe\n");
		return NULL;
	}
	SetHandleInformation(rd, HANDLE_FLAG_INHERIT, 0);
	si.cb = sizeof(si);
	si.dwFlags = STARTF_USESTDHANDLES;
	si.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
	si.hStdOutput = wr;
	si.hStdError = GetStdHandle(STD_ERROR_HANDLE);
	/* wine answers ERROR_INTERNAL_ERROR (1359) now and then when its server is busy (seen on a
	 * loaded CI machine): the child never started, so it is started again, a few times */
	for (int tries = 0;; tries++) {
		ok = CreateProcessW(child, wline, NULL, NULL, TRUE, 0, NULL, NULL, &si, &pi);
		if (ok || GetLastError() != ERROR_INTERNAL_ERROR || tries == 4)
			break;
		Sleep(200);
	}
	free(wline);
	CloseHandle(wr);
	if (!ok) {
		CloseHandle(rd);
		print_error("CreateProcessW: error %lu\n", (unsigned long)GetLastError());
		return NULL;
	}
	while (ReadFile(rd, chunk, sizeof(chunk), &n, NULL) && n)
		if (wd_buf_append(&out, chunk, n))
			break;
	CloseHandle(rd);
	WaitForSingleObject(pi.hProcess, INFINITE);
	GetExitCodeProcess(pi.hProcess, &code);
	CloseHandle(pi.hProcess);
	CloseHandle(pi.hThread);
	if (code != 0 || !out.len) {
		print_error("argv_echo exited %lu\n", (unsigned long)code);
		wd_buf_free(&out);
		return NULL;
	}
	return out.data;
}

/* read "<what> <argc>" and its hex lines at *@p and compare with @argv; @from: compare from
 * that argument on (CommandLineToArgvW's program name is not the runtime's); Return: true
 * when they agree */
static bool agrees(char **p, const char *what, const char *const *argv, size_t argc, size_t from)
{
	char word[16];
	int got, used = 0;

	if (sscanf(*p, "%15s %d\n%n", word, &got, &used) != 2 || strcmp(word, what) ||
	    (size_t)got != argc)
		return false;
	*p += used;
	for (size_t i = 0; i < argc; i++) {
		const unsigned char *a = (const unsigned char *)argv[i];
		char *eol = strchr(*p, '\n');
		size_t len = strlen(argv[i]);
		bool same = eol && (size_t)(eol - *p) == 2 * len;

		for (size_t k = 0; same && k < len; k++) {
			unsigned v;

			same = sscanf(*p + 2 * k, "%2x", &v) == 1 && v == a[k];
		}
		if (!same && i >= from)
			return false;
		if (!eol)
			return false;
		*p = eol + 1;
	}
	return true;
}

/* quote @argv with sandbox_win_cmdline() (or the naive way), run the child; Return: whether
 * both of its splits gave @argv back */
static bool roundtrip(const char *const *argv, size_t argc, bool naive)
{
	struct wd_buf line = WD_BUF_INIT;
	char *out, *p;
	bool ok;
	int r =
	    naive ? naive_cmdline(&line, argv, argc) : sandbox_win_cmdline(&line, argv, NULL, argc);

	assert_int_equal(r, 0);
	out = run_child(wd_buf_cstr(&line));
	assert_non_null(out);
	p = out;
	ok = agrees(&p, "crt", argv, argc, 0) && agrees(&p, "shell", argv, argc, 1);
	if (!ok && !naive)
		print_error("line [%s] split differently:\n%s", wd_buf_cstr(&line), out);
	free(out);
	wd_buf_free(&line);
	return ok;
}

#define ARGV(...)                                                                                  \
	((const char *const[]){"C:\\Program Files\\warden test\\echo.exe", __VA_ARGS__}),          \
	    (sizeof((const char *const[]){"", __VA_ARGS__}) / sizeof(char *))

/* the classic cases; Return: how many of them came back whole */
static size_t classic(bool naive)
{
	const struct {
		const char *const *argv;
		size_t argc;
	} cases[] = {
	    {ARGV("plain")},
	    {ARGV("two words", "tab\there")},
	    {ARGV("")},
	    {ARGV("", "", "x", "")},
	    {ARGV("\"")},
	    {ARGV("a\"b", "\"quoted\"")},
	    {ARGV("C:\\dir\\")},
	    {ARGV("C:\\my dir\\")},
	    {ARGV("trailing\\\\")},
	    {ARGV("a\\\"b", "a\\\\\"b", "\\\\\\")},
	    {ARGV("\" & calc.exe", "x\" \"y")},
	    {ARGV("%PATH%", "^&|<>()")},
	    {ARGV("line\nbreak", "v\vtab")},
	    {ARGV("caf\xc3\xa9", "\xe4\xb8\xad\xe6\x96\x87 \xe6\x96\x87",
		  "\xf0\x9f\x98\x80 emoji\\")},
	    {ARGV("--flag=\"a b\"\\", "-x", "\\\\server\\share\\")},
	};
	size_t whole = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (roundtrip(cases[i].argv, cases[i].argc, naive))
			whole++;
		else if (!naive)
			fail_msg("classic case %zu did not come back", i);
	return whole;
}

static void test_classic(void **state)
{
	(void)state;
	assert_int_equal(classic(false), 15);
}

/* the negative control: the naive quoting loses some of the classic cases */
static void test_naive_caught(void **state)
{
	size_t whole;

	(void)state;
	whole = classic(true);
	print_message("naive quoting: %zu of 15 classic cases came back\n", whole);
	assert_true(whole < 15);
	assert_true(whole > 0); /* and the child does give back what was quoted right */
}

/* a random argument from an alphabet heavy in what quoting gets wrong */
static void random_arg(char *buf, size_t size, uint32_t *seed)
{
	static const char *const pieces[] = {
	    "\\", "\\", "\\", "\"", "\"", " ", "\t", "a", "b", "\xc3\xa9", "\xf0\x9f\x98\x80",
	    "\n", "%",	"&",  "^"};
	size_t len = 0, n;

	*seed = *seed * 1103515245u + 12345u;
	n = (*seed >> 16) % 12;
	for (size_t i = 0; i < n; i++) {
		const char *p;

		*seed = *seed * 1103515245u + 12345u;
		p = pieces[(*seed >> 16) % (sizeof(pieces) / sizeof(pieces[0]))];
		if (len + strlen(p) + 1 > size)
			break;
		memcpy(buf + len, p, strlen(p));
		len += strlen(p);
	}
	buf[len] = '\0';
}

/* NRANDOM random argvs, NBATCH of them after one program name per command line: each
 * argument is quoted on its own, so a line of NBATCH argvs is split as their concatenation */
static void test_random(void **state)
{
	static char bufs[NBATCH * 6][64];
	const char *argv[1 + NBATCH * 6] = {"C:\\Program Files\\warden test\\echo.exe"};
	uint32_t seed = 29;

	(void)state;
	for (int proc = 0; proc < NRANDOM / NBATCH; proc++) {
		size_t argc = 1;

		for (int k = 0; k < NBATCH; k++) {
			size_t n;

			seed = seed * 1103515245u + 12345u;
			n = (seed >> 16) % 6;
			for (size_t i = 0; i < n; i++, argc++) {
				random_arg(bufs[argc - 1], sizeof(bufs[0]), &seed);
				argv[argc] = bufs[argc - 1];
			}
		}
		if (!roundtrip(argv, argc, false))
			fail_msg("random command line %d did not come back", proc);
	}
	print_message("%d random argvs (%d per command line) came back whole from "
		      "CreateProcessW\n",
		      NRANDOM, NBATCH);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_classic),
	    cmocka_unit_test(test_naive_caught),
	    cmocka_unit_test(test_random),
	};
	DWORD n = GetModuleFileNameW(NULL, child, MAX_PATH);
	wchar_t *slash;

	if (!n || n >= MAX_PATH)
		return 2;
	slash = wcsrchr(child, L'\\');
	if (!slash || (size_t)(slash - child) + 16 >= MAX_PATH)
		return 2;
	wcscpy(slash + 1, L"argv_echo.exe");
	return cmocka_run_group_tests(tests, NULL, NULL);
}

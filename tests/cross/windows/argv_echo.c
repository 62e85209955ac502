/* argv_echo.c - the child of test_win_roundtrip: prints its arguments as Windows split them,
 * twice: as the C runtime gave them to wmain() (msvcrt's or the UCRT's parse_cmdline) and as
 * CommandLineToArgvW(GetCommandLineW()) splits the same line. Each argument is printed as the
 * hex of its UTF-8 bytes, one a line, so that nothing in an argument can be mistaken for the
 * format:
 *   crt <argc>
 *   <hex of argv[0]>
 *   ...
 *   shell <argc>
 *   <hex of argv[0]>
 *   ...
 * Built with -municode (wmain). Exit 0, or 1 when a conversion failed. */
#include <windows.h>

#include <fcntl.h>
#include <io.h>
#include <shellapi.h>
#include <stdio.h>
#include <stdlib.h>
#include <wchar.h>

int wmain(int argc, wchar_t **argv);

/* print @w as the hex of its UTF-8 bytes and a newline; Return: 0, or -1 */
static int put_hex(const wchar_t *w)
{
	int n = WideCharToMultiByte(CP_UTF8, WC_ERR_INVALID_CHARS, w, -1, NULL, 0, NULL, NULL);
	char *u;

	if (n <= 0)
		return -1;
	u = malloc((size_t)n);
	if (!u)
		return -1;
	if (WideCharToMultiByte(CP_UTF8, WC_ERR_INVALID_CHARS, w, -1, u, n, NULL, NULL) != n) {
		free(u);
		return -1;
	}
	for (int i = 0; i < n - 1; i++)
		printf("%02x", (unsigned char)u[i]);
	putchar('\n');
	free(u);
	return 0;
}

/* print @what, then @argc arguments; Return: 0, or -1 */
static int put_argv(const char *what, int argc, wchar_t **argv)
{
	printf("%s %d\n", what, argc);
	for (int i = 0; i < argc; i++)
		if (put_hex(argv[i]))
			return -1;
	return 0;
}

int wmain(int argc, wchar_t **argv)
{
	int n = 0;
	wchar_t **shell;
	int ret;

	_setmode(_fileno(stdout), _O_BINARY);
	shell = CommandLineToArgvW(GetCommandLineW(), &n);
	if (!shell)
		return 1;
	ret = put_argv("crt", argc, argv) || put_argv("shell", n, shell);
	LocalFree(shell);
	return ret || fflush(stdout) ? 1 : 0;
}

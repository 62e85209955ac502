/* winargv.h - an argv quoted into the one command line a Windows process is started with, by
 * the rules the program's C runtime (MSVC's parse_cmdline) and CommandLineToArgvW split it
 * with; the inverse splitter, for the tests; whether a program would be run through cmd.exe.
 * Pure and portable: no Linux or Windows header, so it builds with mingw-w64 unchanged.
 *
 * Windows has no argv: CreateProcessW() passes one string and each program splits it itself.
 * Nearly every program splits it the MSVC way (the UCRT's parse_cmdline, the same rules as
 * CommandLineToArgvW for what sandbox_win_cmdline() writes):
 *   - arguments are separated by spaces and tabs outside double quotes;
 *   - 2n backslashes then a quote: n backslashes, and the quote opens or closes quoting;
 *   - 2n+1 backslashes then a quote: n backslashes and a literal quote;
 *   - backslashes not followed by a quote are literal;
 *   - inside quotes, `""` is one literal quote (the UCRT since 2008 stays inside the quotes;
 *     msvcrt before 2008 and CommandLineToArgvW differ here: we never write `""` inside a
 *     quoted argument, so the difference never arises);
 *   - the first argument (the program name) has its own rule: quotes toggle and are dropped,
 *     backslashes are always literal, it ends at the first space or tab outside quotes. So a
 *     program name cannot hold a quote: refused.
 *
 * cmd.exe is different and never safe: it reads the line before the program does, expands
 * %VAR% even inside quotes, treats ^ & | < > ( ) as operators outside quotes, and toggles its
 * own quoting on every `"` regardless of backslashes, so `\"` ends its quoting while the
 * program's runtime still sees an escaped quote. That is BatBadBut (CVE-2024-24576 and its
 * siblings): CreateProcessW on a .bat or .cmd file silently runs `cmd.exe /c` on the line.
 * The AppContainer backend therefore never runs a program through cmd.exe:
 * sandbox_win_runs_cmd() says when a program would be, and the backend refuses it.
 */
#ifndef WARDEN_SANDBOX_WINARGV_H
#define WARDEN_SANDBOX_WINARGV_H

#include "common/common.h"

#include <stdbool.h>
#include <stddef.h>

/* The longest lpCommandLine CreateProcessW takes: 32767 UTF-16 units with the final NUL. */
#define SANDBOX_WIN_CMDLINE_MAX 32766u

/**
 * sandbox_win_quote_arg() - append one argument, quoted for the MSVC rules
 * @out:	where to append
 * @arg:	the argument's bytes (UTF-8; only ASCII bytes are special)
 * @len:	their number
 * @program:	@arg is the program name (argv[0]), which follows the first argument's rule
 *
 * An argument that is empty or holds a space, tab, newline, vertical tab or quote is put in
 * quotes, a quote in it as `\"` and the backslashes before a quote or before the closing quote
 * doubled; any other argument is appended as it is. The program name is only put in quotes.
 *
 * Return: 0; -EINVAL when @arg holds a NUL byte, or is the program name and holds a quote
 * (@out unchanged); -ENOMEM.
 */
int sandbox_win_quote_arg(struct wd_buf *out, const char *arg, size_t len, bool program);

/**
 * sandbox_win_cmdline() - the command line of @argv: each argument quoted, one space between
 * @out:	where to append (on error it is left as it was)
 * @argv:	the arguments; argv[0] is the program name
 * @lens:	their lengths in bytes, or NULL: each is a NUL-terminated string
 * @argc:	their number, at least 1
 *
 * Return: 0; -EINVAL for no argument or an argument sandbox_win_quote_arg() refuses; -E2BIG
 * when the line is longer than SANDBOX_WIN_CMDLINE_MAX UTF-16 units; -ENOMEM.
 */
int sandbox_win_cmdline(struct wd_buf *out, const char *const *argv, const size_t *lens,
			size_t argc);

/**
 * sandbox_win_split() - split a command line the way the UCRT's parse_cmdline does (for the
 * tests: the property split(quote(argv)) == argv, and the fuzz harness)
 * @line:	the command line (need not be NUL-terminated; a NUL byte ends it, as in Windows)
 * @len:	its length in bytes
 * @ret_argv:	on success the arguments, NUL-terminated strings in a NULL-terminated array
 *		(free with sandbox_win_argv_free())
 * @ret_argc:	on success their number (0 for an empty line)
 *
 * Return: 0, or -ENOMEM.
 */
int sandbox_win_split(const char *line, size_t len, char ***ret_argv, size_t *ret_argc);

/** sandbox_win_argv_free() - free what sandbox_win_split() returned; @argv may be NULL. */
void sandbox_win_argv_free(char **argv);

/**
 * sandbox_win_runs_cmd() - whether CreateProcessW would run @program through cmd.exe
 * @program:	the program's path or name
 *
 * True for a name ending in .bat or .cmd in any case, after the trailing dots and spaces
 * Windows strips from a file name ("x.bat. ." runs x.bat), and for cmd.exe itself (cmd, cmd.exe,
 * any folder). Return: true when the backend must refuse @program.
 */
bool sandbox_win_runs_cmd(const char *program);

#endif

/* winargv.c - an argv quoted into a Windows command line (MSVC / CommandLineToArgvW rules),
 * the UCRT's splitter for the tests, and the cmd.exe check; see winargv.h for the rules. */
#include "sandbox/winargv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* put @c into @b; Return: 0 or -ENOMEM */
static int put(struct wd_buf *b, char c)
{
	return wd_buf_append(b, &c, 1);
}

/* put @n backslashes into @b */
static int put_slashes(struct wd_buf *b, size_t n)
{
	int ret = 0;

	while (n-- && !ret)
		ret = put(b, '\\');
	return ret;
}

/* whether @arg needs quotes: empty, or a separator or quote in it */
static bool needs_quotes(const char *arg, size_t len)
{
	if (!len)
		return true;
	for (size_t i = 0; i < len; i++)
		if (arg[i] == ' ' || arg[i] == '\t' || arg[i] == '\n' || arg[i] == '\v' ||
		    arg[i] == '"')
			return true;
	return false;
}

/* @arg in quotes, backslashes doubled before a quote and before the closing quote */
static int quote_escaped(struct wd_buf *out, const char *arg, size_t len)
{
	size_t i = 0;
	int ret = put(out, '"');

	while (!ret && i < len) {
		size_t n = 0;

		while (i < len && arg[i] == '\\') {
			n++;
			i++;
		}
		if (i == len) {
			ret = put_slashes(out, 2 * n);
			break;
		}
		if (arg[i] == '"') {
			ret = put_slashes(out, 2 * n + 1);
		} else {
			ret = put_slashes(out, n);
		}
		if (!ret)
			ret = put(out, arg[i++]);
	}
	return ret ? ret : put(out, '"');
}

int sandbox_win_quote_arg(struct wd_buf *out, const char *arg, size_t len, bool program)
{
	size_t start = out->len;
	int ret;

	if (memchr(arg, '\0', len))
		return -EINVAL;
	if (program && memchr(arg, '"', len))
		return -EINVAL;
	if (!needs_quotes(arg, len))
		return wd_buf_append(out, arg, len);
	if (program) {
		ret = put(out, '"');
		if (!ret && len)
			ret = wd_buf_append(out, arg, len);
		if (!ret)
			ret = put(out, '"');
	} else {
		ret = quote_escaped(out, arg, len);
	}
	if (ret && out->len > start) {
		out->len = start;
		out->data[start] = '\0';
	}
	return ret;
}

/* the UTF-16 units of UTF-8 @s: one per character, two for a 4-byte sequence */
static size_t utf16_units(const char *s, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if ((c & 0xc0) != 0x80)
			n++;
		if (c >= 0xf0)
			n++;
	}
	return n;
}

int sandbox_win_cmdline(struct wd_buf *out, const char *const *argv, const size_t *lens,
			size_t argc)
{
	size_t start = out->len;
	int ret = 0;

	if (!argc)
		return -EINVAL;
	for (size_t i = 0; i < argc && !ret; i++) {
		if (i)
			ret = put(out, ' ');
		if (!ret)
			ret = sandbox_win_quote_arg(out, argv[i], lens ? lens[i] : strlen(argv[i]),
						    i == 0);
	}
	if (!ret && utf16_units(out->data + start, out->len - start) > SANDBOX_WIN_CMDLINE_MAX)
		ret = -E2BIG;
	if (ret && out->len > start) {
		out->len = start;
		out->data[start] = '\0';
	}
	return ret;
}

/**
 * struct split - the splitter's state: the arguments so far and the one being read
 * @argv:	the arguments, NULL-terminated
 * @argc:	their number
 * @cur:	the argument being read
 */
struct split {
	char **argv;
	size_t argc;
	struct wd_buf cur;
};

/* end the current argument: move it into @s->argv */
static int split_push(struct split *s)
{
	char **grown = realloc(s->argv, (s->argc + 2) * sizeof(*grown));
	char *arg;

	if (!grown)
		return -ENOMEM;
	s->argv = grown;
	arg = strdup(wd_buf_cstr(&s->cur));
	if (!arg)
		return -ENOMEM;
	s->argv[s->argc++] = arg;
	s->argv[s->argc] = NULL;
	wd_buf_reset(&s->cur);
	return 0;
}

/* the program name, from @p (before @end): quotes toggle, backslashes literal; Return: where
 * it ended, or NULL for -ENOMEM */
static const char *split_program(struct split *s, const char *p, const char *end)
{
	bool inquote = false;

	while (p < end && (inquote || (*p != ' ' && *p != '\t'))) {
		if (*p == '"')
			inquote = !inquote;
		else if (put(&s->cur, *p))
			return NULL;
		p++;
	}
	return split_push(s) ? NULL : p;
}

/* one argument after the program name, from @p; Return: where it ended, or NULL */
static const char *split_arg(struct split *s, const char *p, const char *end)
{
	bool inquote = false;

	for (;;) {
		size_t n = 0;
		bool copy = true;

		while (p < end && *p == '\\') {
			n++;
			p++;
		}
		if (p < end && *p == '"') {
			if (n % 2 == 0) {
				if (inquote && p + 1 < end && p[1] == '"')
					p++; /* `""` inside quotes: one literal quote */
				else {
					copy = false;
					inquote = !inquote;
				}
			}
			n /= 2;
		}
		if (put_slashes(&s->cur, n))
			return NULL;
		if (p == end || (!inquote && (*p == ' ' || *p == '\t')))
			break;
		if (copy && put(&s->cur, *p))
			return NULL;
		p++;
	}
	return split_push(s) ? NULL : p;
}

int sandbox_win_split(const char *line, size_t len, char ***ret_argv, size_t *ret_argc)
{
	struct split s = {.argv = calloc(1, sizeof(char *)), .cur = WD_BUF_INIT};
	const char *nul = memchr(line, '\0', len);
	const char *end = nul ? nul : line + len;
	const char *p = line;
	int ret = -ENOMEM;

	if (!s.argv)
		goto out;
	if (p < end) {
		p = split_program(&s, p, end);
		if (!p)
			goto out;
	}
	for (;;) {
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p == end)
			break;
		p = split_arg(&s, p, end);
		if (!p)
			goto out;
	}
	*ret_argv = s.argv;
	*ret_argc = s.argc;
	s.argv = NULL;
	ret = 0;
out:
	sandbox_win_argv_free(s.argv);
	wd_buf_free(&s.cur);
	return ret;
}

void sandbox_win_argv_free(char **argv)
{
	if (!argv)
		return;
	for (char **a = argv; *a; a++)
		free(*a);
	free(argv);
}

/* ASCII case-insensitive: the last @n bytes of @s (length @len) are @suffix */
static bool ends_with(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	if (len < n)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[len - n + i];

		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c != suffix[i])
			return false;
	}
	return true;
}

bool sandbox_win_runs_cmd(const char *program)
{
	size_t len = strlen(program);
	size_t base;

	while (len && (program[len - 1] == '.' || program[len - 1] == ' '))
		len--;
	if (ends_with(program, len, ".bat") || ends_with(program, len, ".cmd"))
		return true;
	base = len;
	while (base && program[base - 1] != '\\' && program[base - 1] != '/' &&
	       program[base - 1] != ':')
		base--;
	return (len - base == 3 && ends_with(program, len, "cmd")) ||
	       (len - base == 7 && ends_with(program, len, "cmd.exe"));
}

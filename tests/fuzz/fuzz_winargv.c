/* fuzz_winargv.c - libFuzzer harness for sandbox/winargv.c: the input as a command line split,
 * quoted again and split again must give the same argv; the input as NUL-separated arguments
 * quoted and split must give them back (or be refused: a quote in the program name). */
#include "sandbox/winargv.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* split @line, compare with @argv (@argc); abort on a difference */
static void same_back(const char *line, size_t len, char *const *argv, size_t argc)
{
	char **back = NULL;
	size_t n = 0;

	if (sandbox_win_split(line, len, &back, &n))
		abort();
	if (n != argc)
		abort();
	for (size_t i = 0; i < n; i++)
		if (strcmp(back[i], argv[i]))
			abort();
	sandbox_win_argv_free(back);
}

/* the input as a command line: split, quote, split again */
static void as_line(const char *s, size_t size)
{
	struct wd_buf b = WD_BUF_INIT;
	char **argv = NULL;
	size_t argc = 0;
	int r;

	if (sandbox_win_split(s, size, &argv, &argc))
		abort();
	if (!argc)
		goto out;
	r = sandbox_win_cmdline(&b, (const char *const *)argv, NULL, argc);
	if (r == -EINVAL && strchr(argv[0], '"'))
		goto out; /* the program name held a quote (written "a\"b") */
	if (r == -E2BIG)
		goto out;
	if (r)
		abort();
	same_back(b.data, b.len, argv, argc);
out:
	sandbox_win_argv_free(argv);
	wd_buf_free(&b);
}

/* the input as NUL-separated arguments: quote, split */
static void as_argv(const char *s, size_t size)
{
	struct wd_buf b = WD_BUF_INIT;
	char *copy = malloc(size + 1);
	char *argv[64];
	size_t argc = 0;
	int r;

	if (!copy)
		abort();
	memcpy(copy, s, size);
	copy[size] = '\0';
	for (size_t i = 0; i <= size && argc < 64;) {
		argv[argc++] = copy + i;
		i += strlen(copy + i) + 1;
	}
	r = sandbox_win_cmdline(&b, (const char *const *)argv, NULL, argc);
	if (r == -EINVAL && strchr(argv[0], '"'))
		goto out;
	if (r == -E2BIG)
		goto out;
	if (r)
		abort();
	same_back(b.data, b.len, argv, argc);
out:
	free(copy);
	wd_buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	as_line((const char *)data, size);
	as_argv((const char *)data, size);
	return 0;
}

/* log.c - one-line diagnostics on stderr, for the edges only (STYLE.md rule 5); a line is sent
 * through wd_esc_append(): what it quotes (a host name, a path) cannot drive a terminal. */
#include "common/common.h"

#include <errno.h>
#include <stdio.h>

#ifdef __linux__
#define PROGRAM_NAME program_invocation_short_name
#else
#include <stdlib.h>
#define PROGRAM_NAME getprogname() /* macOS and the BSDs */
#endif

static enum wd_log_level max_level = WD_LOG_INFO;

void wd_log_set_level(enum wd_log_level level)
{
	max_level = level;
}

void wd_log(enum wd_log_level level, const char *fmt, ...)
{
	static const char *const names[] = {
	    [WD_LOG_ERR] = "error",
	    [WD_LOG_WARN] = "warning",
	    [WD_LOG_INFO] = "info",
	    [WD_LOG_DEBUG] = "debug",
	};
	struct wd_buf esc = WD_BUF_INIT;
	char line[2048];
	va_list ap;
	int saved = errno;

	if (level > max_level)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s: %s\n", PROGRAM_NAME, names[level], wd_esc(&esc, line));
	wd_buf_free(&esc);
	errno = saved;
}

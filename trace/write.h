/* write.h - the trace writer of `warden trace`: a struct trace (file.h) as the JSON
 * Lines that trace_parse() reads back, and the file it goes to.
 *
 * Every string goes through jansson, so a quote, a newline or a control character in a path is
 * escaped and read back as the same bytes. A path that is not valid UTF-8 cannot be written
 * as a JSON string at all: it is left out and counted (the policy made from the trace then
 * lacks it, and the run under that policy is refused it: fail closed), never written as
 * another path. The default file is
 * ${XDG_STATE_HOME:-$HOME/.local/state}/warden/traces/<UTC yyyymmddTHHMMSSZ>-<name>.jsonl (a
 * suffix -2, -3, ... when taken); outdir.h opens its folder before the program runs and makes
 * the file (O_EXCL, never through a link, 0600, the folders 0700).
 */
#ifndef WARDEN_TRACE_WRITE_H
#define WARDEN_TRACE_WRITE_H

#include "trace/file.h"
#include "common/common.h"

#include <stddef.h>
#include <sys/types.h>
#include <time.h>

/**
 * struct trace_write_info - what trace_format() could not write as it was
 * @bad_utf8:	file events left out: their path (or a command word, replaced) is not UTF-8
 * @too_big:	file events left out so that the trace stays under TRACE_MAX_BYTES
 * @files:	file lines written (after deduplication)
 * @nets:	net lines written
 * @env:	env lines written
 */
struct trace_write_info {
	size_t bad_utf8;
	size_t too_big;
	size_t files;
	size_t nets;
	size_t env;
};

/**
 * trace_format() - @t as trace lines, in trace_parse()'s format (pure)
 * @t:		the trace; @t->command (non-empty) and @t->cwd (absolute) are required
 * @started:	the "started" text (RFC 3339), or NULL for none
 * @out:	appended to
 * @info:	filled in (may be NULL)
 *
 * File events are deduplicated by (op, path), net events by (host, port, proto), env names by
 * name: counts are summed, the first comm and refusal are kept, the order is the first
 * occurrence's. A command word that is not UTF-8 is written with its bad bytes as U+FFFD (the
 * command is a label, not a grant); a file path that is not UTF-8 is left out.
 *
 * Return: 0, -EINVAL (no command, a cwd or home that is not absolute or not UTF-8), or -ENOMEM.
 */
int trace_format(const struct trace *t, const char *started, struct wd_buf *out,
		 struct trace_write_info *info);

/**
 * trace_file_name() - "<UTC yyyymmddTHHMMSSZ>-<name>.jsonl" for a trace of @argv0 at @now (pure)
 * @argv0:	the command's first word; its last component, with every byte but letters,
 *		digits, '.', '_' and '-' made '_', at most 64 bytes, names the file ("trace" when
 *		empty; a leading '.' becomes '_')
 * @now:	the time
 * @out:	the name
 * @size:	its size
 *
 * Return: 0, or -ENAMETOOLONG.
 */
int trace_file_name(const char *argv0, time_t now, char *out, size_t size);

/**
 * trace_default_dir() - ${XDG_STATE_HOME:-$HOME/.local/state}/warden/traces (an XDG_STATE_HOME
 * that is not absolute is ignored; without HOME, the password database's home of the caller)
 * @out:	the folder
 * @size:	its size
 *
 * Return: 0, -ENOENT (no home folder), or -ENAMETOOLONG.
 */
int trace_default_dir(char *out, size_t size);

#endif /* WARDEN_TRACE_WRITE_H */

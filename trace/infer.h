/* infer.h - from a trace to a least-privilege policy (`warden init --from TRACE`).
 *
 * infer_policy() turns what a traced program did (file.h) into policy YAML a person can
 * read: read grants folded to the narrowest folders that cover what was read, write grants only
 * where it wrote, the names and ports it reached, the environment it was given, limits from
 * what was measured, and a comment on each entry saying what used it. What it must never do,
 * and the rules it folds by, are in docs/trace.md. It is pure but for one question it asks
 * through a callback (does this path exist on the host now?), so the unit tests give it any
 * file system they like.
 */
#ifndef WARDEN_TRACE_INFER_H
#define WARDEN_TRACE_INFER_H

#include "common/common.h"
#include "trace/file.h"

#include <stdbool.h>

/* A folder gets one grant in place of its entries once this many of them would be granted. */
#define INFER_FOLD_MIN 4
/* A wildcard `*.PARENT` replaces exact names once this many siblings under PARENT were seen. */
#define INFER_WILDCARD_MIN 4
/* The least limits init writes, whatever one trace measured (a trace's peak is a lower bound:
 * infer.c, emit_limits()). */
#define INFER_FLOOR_MEMORY_MB 256u
#define INFER_FLOOR_PIDS 64u
#define INFER_FLOOR_TIMEOUT_S 60u

/**
 * struct infer_opts - what infer_policy() knows besides the trace
 * @policy_dir:	absolute folder the policy will be written to (relative grants are written
 *		relative to it, as the policy's reader resolves them)
 * @home:	the home folder whose credential stores are recognised ("" or NULL: the
 *		trace's)
 * @cred_stores: the credential stores ("~/..." or absolute), NULL-terminated
 * @base_dirs:	folders every sandbox sees read-only already (the runtime base), NULL-term.
 * @base_files:	single files every sandbox sees already, NULL-terminated
 * @protect:	absolute paths no grant may cover (the audit log, /run/warden), NULL-term.
 * @exists:	does @path exist on the host now? (lstat; NULL: assume it does)
 * @ctx:	passed to @exists
 * @source:	where the trace came from, for the header comment
 * @now:	the date for the header comment
 * @pin:	the pin file written beside the policy with the MCP tools the trace recorded
 *		(its name, relative to @policy_dir), or NULL: none (an `mcp.pin` comment then
 *		says how to make one when the trace has tools)
 */
struct infer_opts {
	const char *policy_dir;
	const char *home;
	const char *const *cred_stores;
	const char *const *base_dirs;
	const char *const *base_files;
	const char *const *protect;
	bool (*exists)(const char *path, void *ctx);
	void *ctx;
	const char *source;
	const char *now;
	const char *pin;
};

/**
 * struct infer_result - what infer_policy() made
 * @yaml:	the policy text
 * @warnings:	one line per warning a person should read (credential stores read, writes
 *		into the runtime base, names refused during the trace), each ending in '\n',
 *		escaped for a terminal already (wd_esc_append())
 * @nwarnings:	their number
 * @nread:	read grants written
 * @nwrite:	write grants written
 * @nallow:	network rules written
 */
struct infer_result {
	struct wd_buf yaml;
	struct wd_buf warnings;
	unsigned nwarnings;
	unsigned nread;
	unsigned nwrite;
	unsigned nallow;
};

/**
 * infer_policy() - write the least-privilege policy for what @t recorded
 * @t:		the trace
 * @o:		the rest of what it needs
 * @res:	filled in (infer_result_free() it, also after a failure)
 *
 * Return: 0, -EINVAL when @o lacks a needed field, or -ENOMEM.
 */
int infer_policy(const struct trace *t, const struct infer_opts *o, struct infer_result *res);

/**
 * infer_starter() - the commented starter policy `warden init` writes without a trace
 * @out:	appended to
 * @now:	the date for the header comment
 * Return: 0 or -ENOMEM.
 */
int infer_starter(struct wd_buf *out, const char *now);

/** infer_result_free() - release what @res holds */
void infer_result_free(struct infer_result *res);

/**
 * infer_nice_up() - @v rounded up to the next 1, 2 or 5 times a power of ten (at least 1)
 * Return: the rounded value (UINT64_MAX stays).
 */
uint64_t infer_nice_up(uint64_t v);

#endif

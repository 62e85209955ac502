/* flags.h - `warden run --allow HOST[:PORT] --read PATH --write PATH`: the ad-hoc grants of the
 * command line, made a policy of their own with the policy's parser and merged over `-p FILE`
 * (run/flags.c; docs/policy.md, "Flags"). */
#ifndef WD_RUN_FLAGS_H
#define WD_RUN_FLAGS_H

#include "common/common.h"

#include <stddef.h>

/* enum run_flag_kind - which flag: what it adds to (network.allow, filesystem.read, .write) */
enum run_flag_kind {
	RUN_FLAG_ALLOW,
	RUN_FLAG_READ,
	RUN_FLAG_WRITE,
	RUN_FLAG_ASK, /* network.ask */
};

/**
 * struct run_flag - one --allow, --read or --write of the command line
 * @kind:	which flag
 * @arg:	its argument as given (argv's)
 */
struct run_flag {
	enum run_flag_kind kind;
	const char *arg;
};

/** run_flag_name() - "--allow", "--read", "--write", "--ask" */
const char *run_flag_name(enum run_flag_kind kind);

/**
 * run_flags_yaml() - the flags as a policy document (pure: no I/O)
 * @v:		the flags, in command-line order
 * @n:		how many (at least one)
 * @cwd:	the absolute folder a relative --read/--write path is taken from
 * @out:	the YAML is appended here: `version: 1`, then network.allow, filesystem.read
 *		and filesystem.write with one double-quoted entry a line, in the flags' order
 * @ret_line:	room for @n: the line of @out (1-based) holding each flag's entry, so that a
 *		diagnostic about it names the flag
 *
 * A path that starts with neither `/` nor `~` is written @cwd + "/" + path (a trailing `/`
 * kept), so that merged over a policy file it still means the current folder's; `~` is left
 * for validation to expand, as in a policy.
 * Return: 0, -EINVAL (@n is 0 or @cwd not absolute), or -ENOMEM.
 */
int run_flags_yaml(const struct run_flag *v, size_t n, const char *cwd, struct wd_buf *out,
		   int *ret_line);

/**
 * run_flags_which() - the flag a diagnostic's @line is about
 * @ret_line:	run_flags_yaml()'s table
 * @n:		its length
 * @line:	the diagnostic's line in the flags' own YAML
 * Return: the index of the flag, or -1 (no flag's line).
 */
int run_flags_which(const int *ret_line, size_t n, int line);

#endif /* WD_RUN_FLAGS_H */

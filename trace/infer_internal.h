/* infer_internal.h - what the files of `warden init`'s inference share (infer.h is the API).
 *
 * The files, bottom first (each calls only those above it):
 *   infer_text.c	paths as text, the sets of paths, YAML quoting and comments (pure)
 *   infer_ctx.c	struct infer_ctx: the trace's paths indexed, the credential stores, the
 *			warnings, the one callback (infer_opts.exists), what one grant may cover
 *   infer_fold.c	folding many grants into their folder's
 *   infer_files.c	the `filesystem:` section;  infer_net.c  the `network:` section
 *   infer.c		infer_policy(): the header, the sections in order, env and limits
 */
#ifndef WARDEN_TRACE_INFER_INTERNAL_H
#define WARDEN_TRACE_INFER_INTERNAL_H

#include "trace/infer.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

/* One path the policy may grant. */
struct leaf {
	char *path;
	bool dead; /* folded into another leaf, or dropped */
};

/* A list of them. */
struct leaves {
	struct leaf *v;
	size_t n;
};

/**
 * struct infer_ctx - one inference's state
 * @t:		the trace
 * @o:		the caller's options
 * @res:	what is being written (its warnings too)
 * @home:	the home folder, clean ("" when none)
 * @creds:	the credential stores, absolute and clean (@ncreds)
 * @sorted:	every event's path, clean, sorted (to tell folders the program made) (@nsorted)
 * @socks:	every unix socket the program connected to or tried, clean (@nsocks)
 */
struct infer_ctx {
	const struct trace *t;
	const struct infer_opts *o;
	struct infer_result *res;
	char home[PATH_MAX];
	char **creds;
	size_t ncreds;
	char **sorted;
	size_t nsorted;
	char **socks;
	size_t nsocks;
};

/* ------------------------------------------------------------ infer_text.c (pure) */

/** infer_within() - @p is @dir or lies inside it (both clean and absolute) */
bool infer_within(const char *p, const char *dir);
/** infer_within_any() - @p lies within one of @dirs (NULL-terminated; NULL: none) */
bool infer_within_any(const char *p, const char *const *dirs);
/** infer_equal_any() - @p is one of @files (NULL-terminated; NULL: none) */
bool infer_equal_any(const char *p, const char *const *files);
/** infer_path_clean() - fold "//", "/./", "/../" and a trailing "/" of absolute @p in place */
void infer_path_clean(char *p);
/** infer_depth() - the number of components of clean absolute @p ("/" is 0) */
int infer_depth(const char *p);
/** infer_parent_of() - the parent folder of clean absolute @p into @out (@size bytes) */
void infer_parent_of(const char *p, char *out, size_t size);
/** infer_printable_utf8() - @s is printable UTF-8 (no C0 control, no DEL, valid sequences) */
bool infer_printable_utf8(const char *s);
/** infer_leaves_add() - append a copy of @path to @l. Return: 0 or -ENOMEM. */
int infer_leaves_add(struct leaves *l, const char *path);
/** infer_leaves_free() - release @l and empty it */
void infer_leaves_free(struct leaves *l);
/** infer_leaves_drop_covered() - mark dead each leaf of @l inside another live leaf of @by */
void infer_leaves_drop_covered(struct leaves *l, const struct leaves *by);
/** infer_yaml_quote() - append @s to @b as a YAML double-quoted scalar that reads back as @s */
void infer_yaml_quote(struct wd_buf *b, const char *s);
/**
 * infer_said() - @s as a YAML comment may hold it (wd_esc(): no line break YAML knows)
 * @scratch:	the caller's buffer (emptied first; free it), one per argument printed together
 * Return: the escaped text, valid until @scratch changes.
 */
const char *infer_said(struct wd_buf *scratch, const char *s);
/** infer_said_line() - append @line escaped as infer_said() does and "\n" to @out; free @line */
void infer_said_line(struct wd_buf *out, struct wd_buf *line);

/* ------------------------------------------------------------ infer_ctx.c */

/**
 * infer_ctx_init() - @c for @t and @o, writing into @res (the home folder and the
 * credential stores made absolute and clean)
 * Return: 0 or -ENOMEM (infer_ctx_free() @c either way).
 */
int infer_ctx_init(struct infer_ctx *c, const struct trace *t, const struct infer_opts *o,
		   struct infer_result *res);
/** infer_ctx_free() - release what @c holds */
void infer_ctx_free(struct infer_ctx *c);
/** infer_sorted_paths() - fill @c->sorted. Return: 0 or -ENOMEM. */
int infer_sorted_paths(struct infer_ctx *c);
/** infer_socket_paths() - fill @c->socks. Return: 0 or -ENOMEM. */
int infer_socket_paths(struct infer_ctx *c);
/** infer_warn() - one warning line for a person, escaped for a terminal */
void infer_warn(struct infer_ctx *c, const char *fmt, ...) WD_PRINTF(2, 3);
/** infer_cred_of() - the credential store @p lies in, or NULL */
const char *infer_cred_of(const struct infer_ctx *c, const char *p);
/** infer_cmp_str() - qsort() comparison of two `char *` */
int infer_cmp_str(const void *a, const void *b);
/** infer_holds_events() - did any event name a path inside @p (so @p is a folder)? */
bool infer_holds_events(const struct infer_ctx *c, const char *p);
/** infer_made_here() - did the program make @p (or a folder above it) during the trace? */
bool infer_made_here(const struct infer_ctx *c, const char *p);
/** infer_holds_socket() - does @p hold (or is it) a unix socket the trace saw a connect to? */
bool infer_holds_socket(const struct infer_ctx *c, const char *p);
/** infer_grantable_folder() - may one grant cover all of @p? (docs/trace.md) */
bool infer_grantable_folder(const struct infer_ctx *c, const char *p);
/** infer_exists() - does @p exist on the host now? (the caller's callback; none: yes) */
bool infer_exists(const struct infer_ctx *c, const char *p);
/** infer_shown_path() - @p as the policy says it (./..., ~/..., or absolute) into @out */
void infer_shown_path(const struct infer_ctx *c, const char *p, char *out, size_t size);

/* ------------------------------------------------------------ infer_fold.c */

/**
 * infer_fold() - fold @l: a grantable folder in which INFER_FOLD_MIN or more entries would
 * get grants gets one grant in their place, from the deepest folders up; @l ends sorted
 * Return: 0 or -ENOMEM.
 */
int infer_fold(struct infer_ctx *c, struct leaves *l);

/* ------------------------------------------------------------ the sections */

/** infer_emit_files() - the `filesystem:` section onto @b. Return: 0 or -ENOMEM. */
int infer_emit_files(struct infer_ctx *c, struct wd_buf *b);
/** infer_emit_network() - the `network:` section onto @b. Return: 0 or -ENOMEM. */
int infer_emit_network(struct infer_ctx *c, struct wd_buf *b);

#endif

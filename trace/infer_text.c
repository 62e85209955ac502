/* infer_text.c - the lexical pieces of `warden init`'s inference: paths folded and compared
 * as text, the sets of paths it grants, and the YAML quoting and comments it writes them with.
 * Pure (no file system: a path here is only a string). */
#include "trace/infer_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ paths */

/* @p is @dir or lies inside it (both clean and absolute) */
bool infer_within(const char *p, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return true;
	return !strncmp(p, dir, n) && (p[n] == 0 || p[n] == '/');
}

bool infer_within_any(const char *p, const char *const *dirs)
{
	for (size_t i = 0; dirs && dirs[i]; i++)
		if (infer_within(p, dirs[i]))
			return true;
	return false;
}

bool infer_equal_any(const char *p, const char *const *files)
{
	for (size_t i = 0; files && files[i]; i++)
		if (!strcmp(p, files[i]))
			return true;
	return false;
}

/* lexical clean-up of an absolute path: "//", "/./", "/../", a trailing "/" (in place). */
/* common/'s one lexical folding (wd_path_fold()), in place; a path that is not absolute is
 * left as it is (the trace reader admits absolute paths only) */
void infer_path_clean(char *p)
{
	(void)wd_path_fold(p, p, strlen(p) + 1);
}

int infer_depth(const char *p)
{
	int d = 0;

	for (; *p; p++)
		d += *p == '/' && p[1];
	return d;
}

/* the parent folder of a clean absolute path, into @out (PATH_MAX) */
void infer_parent_of(const char *p, char *out, size_t size)
{
	const char *slash = strrchr(p, '/');
	size_t n = slash && slash != p ? (size_t)(slash - p) : 1;

	snprintf(out, size, "%.*s", (int)n, p);
}

/* only printable UTF-8: what a YAML double-quoted string says plainly */
bool infer_printable_utf8(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;

	while (*u) {
		unsigned n = *u < 0x80		   ? 0
			     : (*u & 0xe0) == 0xc0 ? 1
			     : (*u & 0xf0) == 0xe0 ? 2
			     : (*u & 0xf8) == 0xf0 ? 3
						   : 9;
		if (n == 9 || (n == 0 && (*u < 0x20 || *u == 0x7f)) || (n == 1 && *u < 0xc2))
			return false;
		for (unsigned i = 1; i <= n; i++)
			if ((u[i] & 0xc0) != 0x80)
				return false;
		u += n + 1;
	}
	return true;
}

/* ------------------------------------------------------------ the sets of paths */

int infer_leaves_add(struct leaves *l, const char *path)
{
	struct leaf *v;

	v = realloc(l->v, (l->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	l->v = v;
	v[l->n].path = strdup(path);
	v[l->n].dead = false;
	if (!v[l->n].path)
		return -ENOMEM;
	l->n++;
	return 0;
}

void infer_leaves_free(struct leaves *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].path);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* a leaf inside another live leaf is dead */
void infer_leaves_drop_covered(struct leaves *l, const struct leaves *by)
{
	for (size_t i = 0; i < l->n; i++)
		for (size_t k = 0; !l->v[i].dead && k < by->n; k++)
			if (!by->v[k].dead && (by != l || k != i) &&
			    infer_within(l->v[i].path, by->v[k].path))
				l->v[i].dead = true;
}
/* ------------------------------------------------------------ writing YAML */

/* @s as a YAML double-quoted scalar: `"` and `\\` escaped, and every byte YAML would read as
 * anything but itself escaped too: C0 controls and DEL ("\\xNN"), and the line breaks NEL,
 * LS and PS ("\\N", "\\L", "\\P"), which would fold into a space or end a comment the
 * scalar sits in. */
/* common/'s one YAML/JSON quoting (wd_yaml_quote(): every control character, NEL, LS and PS
 * escaped); an allocation failure shows in @b (wd_buf's own state) */
void infer_yaml_quote(struct wd_buf *b, const char *s)
{
	(void)wd_yaml_quote(b, s);
}

/* @s as a comment may hold it: what a trace chose (a process name, a path, a refusal) ends
 * no comment and starts no YAML line (wd_esc(): every line break YAML knows, \\n \\r NEL LS
 * PS, becomes an escape); @scratch is the caller's, one per argument printed together */
const char *infer_said(struct wd_buf *scratch, const char *s)
{
	return wd_esc(scratch, s);
}

/* @line, a comment made of what a trace chose, onto @out escaped as infer_said() does, then "\n";
 * @line is emptied */
void infer_said_line(struct wd_buf *out, struct wd_buf *line)
{
	wd_esc_append(out, line->data ? wd_buf_cstr(line) : "", 0);
	wd_buf_puts(out, "\n");
	wd_buf_free(line);
}

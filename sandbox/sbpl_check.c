/* sbpl_check.c - a reader of Seatbelt profiles (SBPL, an s-expression language) and the check
 * of the invariants every profile Warden renders keeps (sandbox_sbpl_check(), sbpl.h).
 *
 * The check reads the profile as text, not the renderer's intent: it is what tests use to
 * hold sbpl.c to its promises, and what the backend may run on a profile before handing it
 * to sandbox-exec. Where it cannot tell what a rule matches (a filter it does not know), it
 * assumes the worst for the invariant at hand: an allow matches, a deny does not.
 */
#include "sandbox/sbpl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SX_MAX_DEPTH 32

enum sx_kind { SX_LIST, SX_SYM, SX_STR };

/* one datum: a list of children, or a symbol / string's text */
struct sx {
	enum sx_kind kind;
	int line;
	char *text;
	struct sx **v;
	size_t n;
};

/* recursion bounded by the reader's depth limit (read_datum()) */
static void sx_free(struct sx *x) // NOLINT(misc-no-recursion)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->n; i++)
		sx_free(x->v[i]);
	free(x->v);
	free(x->text);
	free(x);
}

struct reader {
	const char *p;
	int line;
	struct wd_err *err;
};

static void skip_space(struct reader *r)
{
	for (;;) {
		if (*r->p == '\n')
			r->line++;
		if (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r') {
			r->p++;
		} else if (*r->p == ';') {
			while (*r->p && *r->p != '\n')
				r->p++;
		} else {
			return;
		}
	}
}

static int push(struct sx *list, struct sx *x)
{
	struct sx **v = realloc(list->v, (list->n + 1) * sizeof(struct sx *));

	if (!v)
		return -ENOMEM;
	list->v = v;
	v[list->n++] = x;
	return 0;
}

static int read_string(struct reader *r, struct sx *x)
{
	struct wd_buf b = {0};
	int ret = 0;

	r->p++; /* the opening quote */
	while (!ret && *r->p && *r->p != '"') {
		if (*r->p == '\\') {
			r->p++;
			if (*r->p != '"' && *r->p != '\\') {
				ret = wd_err_set(r->err, -EINVAL,
						 "line %d: an escape other than \\\" or \\\\",
						 r->line);
				break;
			}
		} else if (*r->p == '\n') {
			r->line++;
		}
		ret = wd_buf_append(&b, r->p, 1);
		r->p++;
	}
	if (!ret && *r->p != '"')
		ret = wd_err_set(r->err, -EINVAL, "line %d: unterminated string", r->line);
	if (ret) {
		wd_buf_free(&b);
		return ret;
	}
	r->p++;
	x->text = b.data ? b.data : strdup("");
	return x->text ? 0 : -ENOMEM;
}

static int read_datum(struct reader *r, int depth, struct sx **ret_x) // NOLINT(misc-no-recursion)
{
	struct sx *x;
	int ret = 0;

	if (depth > SX_MAX_DEPTH)
		return wd_err_set(r->err, -EINVAL, "line %d: nested too deep", r->line);
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->line = r->line;
	if (*r->p == '(') {
		x->kind = SX_LIST;
		r->p++;
		for (;;) {
			struct sx *child = NULL;

			skip_space(r);
			if (*r->p == ')') {
				r->p++;
				break;
			}
			if (!*r->p) {
				ret =
				    wd_err_set(r->err, -EINVAL, "line %d: unclosed list", x->line);
				break;
			}
			ret = read_datum(r, depth + 1, &child);
			if (!ret)
				ret = push(x, child);
			if (ret) {
				sx_free(child);
				break;
			}
		}
	} else if (*r->p == '"') {
		x->kind = SX_STR;
		ret = read_string(r, x);
	} else if (*r->p && !strchr(")#'`,", *r->p)) {
		size_t n = strcspn(r->p, " \t\r\n();\"");

		x->kind = SX_SYM;
		x->text = strndup(r->p, n);
		ret = x->text ? 0 : -ENOMEM;
		r->p += n;
	} else {
		ret = wd_err_set(r->err, -EINVAL, "line %d: cannot read `%c`", r->line,
				 *r->p ? *r->p : '?');
	}
	if (ret) {
		sx_free(x);
		return ret;
	}
	*ret_x = x;
	return 0;
}

/* the whole text as one list of top-level forms */
static int read_all(const char *text, struct sx **ret_top, struct wd_err *err)
{
	struct reader r = {.p = text, .line = 1, .err = err};
	struct sx *top = calloc(1, sizeof(*top));
	int ret = 0;

	if (!top)
		return -ENOMEM;
	top->kind = SX_LIST;
	for (skip_space(&r); !ret && *r.p; skip_space(&r)) {
		struct sx *x = NULL;

		if (*r.p != '(') {
			ret = wd_err_set(err, -EINVAL, "line %d: a top-level form is not a list",
					 r.line);
			break;
		}
		ret = read_datum(&r, 0, &x);
		if (!ret)
			ret = push(top, x);
		if (ret)
			sx_free(x);
	}
	if (ret) {
		sx_free(top);
		return ret;
	}
	*ret_top = top;
	return 0;
}

/* ------------------------------------------------------------------------- the checks */

static bool is_sym(const struct sx *x, const char *s)
{
	return x && x->kind == SX_SYM && !strcmp(x->text, s);
}

static bool within(const char *in, const char *root)
{
	size_t n = strlen(root);

	if (n == 1 && root[0] == '/')
		return true;
	return !strncmp(in, root, n) && (in[n] == '\0' || in[n] == '/');
}

/* a rule: (allow|deny OP... FILTER...); ops are the symbols after the head */
static bool rule_of(const struct sx *f, bool *ret_allow)
{
	if (f->kind != SX_LIST || f->n < 2)
		return false;
	if (is_sym(f->v[0], "allow"))
		*ret_allow = true;
	else if (is_sym(f->v[0], "deny"))
		*ret_allow = false;
	else
		return false;
	return true;
}

static bool has_op(const struct sx *f, bool (*pred)(const char *))
{
	for (size_t i = 1; i < f->n && f->v[i]->kind == SX_SYM; i++)
		if (pred(f->v[i]->text))
			return true;
	return false;
}

static size_t first_filter(const struct sx *f)
{
	size_t i = 1;

	while (i < f->n && f->v[i]->kind == SX_SYM)
		i++;
	return i;
}

static bool op_default(const char *op)
{
	return !strcmp(op, "default");
}
static bool op_write(const char *op)
{
	return !strncmp(op, "file-write", 10) || !strcmp(op, "file*") || op_default(op);
}
static bool op_read(const char *op)
{
	return !strcmp(op, "file-read*") || !strcmp(op, "file-read-data") || !strcmp(op, "file*") ||
	       op_default(op);
}
static bool op_net(const char *op)
{
	return !strncmp(op, "network", 7) || !strncmp(op, "system-socket", 13);
}
static bool op_mach(const char *op)
{
	return !strncmp(op, "mach-lookup", 11) || !strcmp(op, "mach*");
}

/* (literal "P") or (subpath "P"): its path, else NULL */
static const char *path_filter(const struct sx *x, bool *ret_subpath)
{
	if (x->kind != SX_LIST || x->n != 2 || x->v[1]->kind != SX_STR)
		return NULL;
	*ret_subpath = is_sym(x->v[0], "subpath");
	if (!*ret_subpath && !is_sym(x->v[0], "literal"))
		return NULL;
	return x->v[1]->text;
}

/* the devices every process writes (the runtime base allows them) */
static bool device(const char *path, bool subpath)
{
	static const char *const literal[] = {"/dev/null", "/dev/zero", "/dev/tty",
					      "/dev/dtracehelper"};

	for (size_t i = 0; !subpath && i < sizeof(literal) / sizeof(literal[0]); i++)
		if (!strcmp(path, literal[i]))
			return true;
	return within(path, "/dev/fd");
}

static bool in_write_grant(const struct sandbox_sbpl_in *in, const char *path)
{
	for (size_t i = 0; i < in->nwrite; i++)
		if (within(path, in->write[i].path))
			return true;
	return in->tmpdir && within(path, in->tmpdir);
}

static int check_write(const struct sx *f, const struct sandbox_sbpl_in *in, struct wd_err *err)
{
	size_t i = first_filter(f);

	if (i == f->n)
		return wd_err_set(err, -EINVAL, "line %d: a file write allowed everywhere",
				  f->line);
	for (; i < f->n; i++) {
		bool sub = false;
		const char *p = path_filter(f->v[i], &sub);

		if (!p)
			return wd_err_set(err, -EINVAL,
					  "line %d: a file write allowed by a filter other than "
					  "literal or subpath",
					  f->v[i]->line);
		if (!in_write_grant(in, p) && !device(p, sub))
			return wd_err_set(
			    err, -EINVAL,
			    "line %d: a file write allowed at `%s`, outside the write "
			    "grants",
			    f->v[i]->line, p);
	}
	return 0;
}

static int check_net(const struct sx *f, const struct sandbox_sbpl_in *in, struct wd_err *err)
{
	char want[32];
	const struct sx *flt = f->n == 3 ? f->v[2] : NULL;

	snprintf(want, sizeof(want), "localhost:%u", (unsigned)in->proxy_port);
	if (in->proxy_port && is_sym(f->v[1], "network-outbound") && flt && flt->kind == SX_LIST &&
	    flt->n == 3 && is_sym(flt->v[0], "remote") && is_sym(flt->v[1], "ip") &&
	    flt->v[2]->kind == SX_STR && !strcmp(flt->v[2]->text, want))
		return 0;
	return wd_err_set(err, -EINVAL,
			  "line %d: a network rule other than the proxy's loopback port %u",
			  f->line, (unsigned)in->proxy_port);
}

static int check_mach(const struct sx *f, struct wd_err *err)
{
	size_t i = first_filter(f);

	if (i == f->n)
		return wd_err_set(err, -EINVAL, "line %d: mach-lookup of every service", f->line);
	for (; i < f->n; i++) {
		const struct sx *x = f->v[i];

		if (x->kind != SX_LIST || x->n != 2 || x->v[1]->kind != SX_STR ||
		    !(is_sym(x->v[0], "global-name") || is_sym(x->v[0], "local-name")))
			return wd_err_set(err, -EINVAL,
					  "line %d: mach-lookup by a filter other than a name",
					  x->line);
		if (strstr(x->v[1]->text, "dnssd") || strstr(x->v[1]->text, "mDNSResponder"))
			return wd_err_set(err, -EINVAL,
					  "line %d: mach-lookup of the DNS service `%s`", x->line,
					  x->v[1]->text);
	}
	return 0;
}

/* Does rule @f say something about reading @path? An allow with a filter it cannot read
 * matches (the worst case), a deny with one does not. */
static bool matches_read(const struct sx *f, bool allow, const char *path)
{
	size_t i = first_filter(f);

	if (!has_op(f, op_read))
		return false;
	if (i == f->n)
		return true;
	for (; i < f->n; i++) {
		bool sub = false;
		const char *p = path_filter(f->v[i], &sub);

		if (!p ? allow : (sub ? within(path, p) : !strcmp(path, p)))
			return true;
	}
	return false;
}

/* the verdict of the whole profile on reading @path: the last rule that matches */
static bool readable(const struct sx *top, const char *path, int *ret_line)
{
	bool verdict = false;

	*ret_line = 0;
	for (size_t i = 0; i < top->n; i++) {
		bool allow;

		if (rule_of(top->v[i], &allow) && matches_read(top->v[i], allow, path)) {
			verdict = allow;
			*ret_line = top->v[i]->line;
		}
	}
	return verdict;
}

/* every deny of reading a path: no later allow of reading holds that path */
static int check_order(const struct sx *top, struct wd_err *err)
{
	for (size_t i = 0; i < top->n; i++) {
		const struct sx *d = top->v[i];
		bool allow;

		if (!rule_of(d, &allow) || allow || !has_op(d, op_read))
			continue;
		for (size_t k = first_filter(d); k < d->n; k++) {
			bool sub = false;
			const char *m = path_filter(d->v[k], &sub);

			for (size_t j = i + 1; m && j < top->n; j++) {
				bool a;

				if (rule_of(top->v[j], &a) && a && matches_read(top->v[j], a, m))
					return wd_err_set(err, -EINVAL,
							  "line %d: an allow after the mask of "
							  "`%s` (line %d) holds it",
							  top->v[j]->line, m, d->line);
			}
		}
	}
	return 0;
}

static bool held(const struct sandbox_sbpl_in *in, const char *path, bool sensitive)
{
	for (size_t i = 0; i < in->nread; i++)
		if (in->read[i].sensitive == sensitive && within(path, in->read[i].path))
			return true;
	for (size_t i = 0; i < in->nwrite; i++)
		if (in->write[i].sensitive == sensitive && within(path, in->write[i].path))
			return true;
	return !sensitive && in->tmpdir && within(path, in->tmpdir);
}

static int check_hidden(const struct sx *top, const char *path, struct wd_err *err)
{
	char below[4200];
	int line;

	snprintf(below, sizeof(below), "%s/.warden-probe", path);
	if (readable(top, path, &line) || readable(top, below, &line))
		return wd_err_set(err, -EINVAL, "line %d: `%s` is readable: it must be masked",
				  line, path);
	return 0;
}

static int check_forms(const struct sx *top, const struct sandbox_sbpl_in *in, struct wd_err *err)
{
	bool denied = false;
	int ret = 0;

	if (!top->n || top->v[0]->kind != SX_LIST || top->v[0]->n != 2 ||
	    !is_sym(top->v[0]->v[0], "version") || !is_sym(top->v[0]->v[1], "1"))
		return wd_err_set(err, -EINVAL, "the profile does not start with (version 1)");
	for (size_t i = 1; !ret && i < top->n; i++) {
		const struct sx *f = top->v[i];
		bool allow;

		if (!rule_of(f, &allow))
			continue;
		if (!allow && f->n == 2 && is_sym(f->v[1], "default"))
			denied = true;
		if (!allow)
			continue;
		if (!denied)
			return wd_err_set(err, -EINVAL, "line %d: an allow before (deny default)",
					  f->line);
		if (has_op(f, op_default))
			return wd_err_set(err, -EINVAL, "line %d: (allow default)", f->line);
		if (first_filter(f) == 1)
			return wd_err_set(err, -EINVAL, "line %d: an allow of no operation",
					  f->line);
		if (has_op(f, op_write))
			ret = check_write(f, in, err);
		if (!ret && has_op(f, op_net))
			ret = check_net(f, in, err);
		if (!ret && has_op(f, op_mach))
			ret = check_mach(f, err);
	}
	if (!ret && !denied)
		return wd_err_set(err, -EINVAL, "no (deny default)");
	if (!ret)
		ret = check_order(top, err);
	for (size_t i = 0; !ret && i < in->nmask; i++)
		ret = check_hidden(top, in->mask[i], err);
	for (size_t i = 0; !ret && i < in->nstores; i++)
		if (held(in, in->stores[i], false) && !held(in, in->stores[i], true))
			ret = check_hidden(top, in->stores[i], err);
	return ret;
}

int sandbox_sbpl_check(const char *text, const struct sandbox_sbpl_in *in, struct wd_err *err)
{
	struct sx *top = NULL;
	int ret = read_all(text, &top, err);

	if (!ret)
		ret = check_forms(top, in, err);
	sx_free(top);
	return ret;
}

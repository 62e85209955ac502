/* infer_ctx.c - what the inference knows besides one event: the trace's paths sorted and its
 * sockets, the credential stores made absolute, the warnings, the one question it asks the
 * host (infer_opts.exists), and the rules of what one grant may cover. */
#include "trace/infer_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void infer_warn(struct infer_ctx *c, const char *fmt, ...)
{
	struct wd_buf line = WD_BUF_INIT;
	va_list ap;

	/* a path or a process name in it is the program's choice: escaped (wd_esc_append()),
	 * so the warning is one line a terminal only shows */
	va_start(ap, fmt);
	wd_buf_vprintf(&line, fmt, ap);
	va_end(ap);
	wd_esc_append(&c->res->warnings, wd_buf_cstr(&line), 0);
	wd_buf_puts(&c->res->warnings, "\n");
	wd_buf_free(&line);
	c->res->nwarnings++;
}

const char *infer_cred_of(const struct infer_ctx *c, const char *p)
{
	for (size_t i = 0; i < c->ncreds; i++)
		if (infer_within(p, c->creds[i]))
			return c->creds[i];
	return NULL;
}

int infer_cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* did any event name a path inside @p (so @p is a folder)? */
bool infer_holds_events(const struct infer_ctx *c, const char *p)
{
	size_t lo = 0, hi = c->nsorted, n = strlen(p);

	while (lo < hi) { /* the first path after @p: those inside it follow it at once */
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(c->sorted[mid], p) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < c->nsorted && !strncmp(c->sorted[lo], p, n); lo++)
		if (c->sorted[lo][n] == '/')
			return true;
	return false;
}

/* did the program make @p (or a folder above it) during the trace? */
bool infer_made_here(const struct infer_ctx *c, const char *p)
{
	for (size_t i = 0; i < c->t->nfiles; i++) {
		const struct trace_file_ev *e = &c->t->files[i];

		if ((e->op == TRACE_CREATE || e->op == TRACE_RENAME) && infer_within(p, e->path))
			return true;
	}
	return false;
}

/* does @p hold (or is it) a unix socket the trace saw a connect to? */
bool infer_holds_socket(const struct infer_ctx *c, const char *p)
{
	for (size_t i = 0; i < c->nsocks; i++)
		if (infer_within(c->socks[i], p))
			return true;
	return false;
}

/* the connect events' paths, clean, into c->socks */
int infer_socket_paths(struct infer_ctx *c)
{
	c->socks = calloc(c->t->nfiles + 1, sizeof(*c->socks));
	if (!c->socks)
		return -ENOMEM;
	for (size_t i = 0; i < c->t->nfiles; i++) {
		const struct trace_file_ev *e = &c->t->files[i];

		if (e->op != TRACE_CONNECT || strlen(e->path) >= PATH_MAX)
			continue;
		if (!(c->socks[c->nsocks] = strdup(e->path)))
			return -ENOMEM;
		infer_path_clean(c->socks[c->nsocks++]);
	}
	return 0;
}

int infer_sorted_paths(struct infer_ctx *c)
{
	c->sorted = calloc(c->t->nfiles + 1, sizeof(*c->sorted));
	if (!c->sorted)
		return -ENOMEM;
	for (size_t i = 0; i < c->t->nfiles; i++) {
		if (!(c->sorted[i] = strdup(c->t->files[i].path)))
			return -ENOMEM;
		c->nsorted++;
		if (strlen(c->sorted[i]) < PATH_MAX)
			infer_path_clean(c->sorted[i]);
	}
	qsort(c->sorted, c->nsorted, sizeof(*c->sorted), infer_cmp_str);
	return 0;
}

/* May one grant cover all of @p? Never `/`, a top folder, the home folder or what holds it,
 * the runtime base or what holds it, a credential store or what holds one, a protected path
 * or what holds it. */
bool infer_grantable_folder(const struct infer_ctx *c, const char *p)
{
	if (infer_depth(p) <= 1)
		return false;
	if (c->home[0] && infer_within(c->home, p))
		return false;
	for (size_t i = 0; c->o->base_dirs && c->o->base_dirs[i]; i++)
		if (infer_within(c->o->base_dirs[i], p) || infer_within(p, c->o->base_dirs[i]))
			return false;
	for (size_t i = 0; i < c->ncreds; i++)
		if (infer_within(c->creds[i], p))
			return false;
	for (size_t i = 0; c->o->protect && c->o->protect[i]; i++)
		if (infer_within(c->o->protect[i], p))
			return false;
	return true;
}

bool infer_exists(const struct infer_ctx *c, const char *p)
{
	return !c->o->exists || c->o->exists(p, c->o->ctx);
}

/* @p as the policy should say it: relative to its folder, ~/..., or absolute */
void infer_shown_path(const struct infer_ctx *c, const char *p, char *out, size_t size)
{
	const char *pd = c->o->policy_dir;

	if (pd && infer_within(p, pd) && strcmp(pd, "/"))
		snprintf(out, size, ".%s", p + strlen(pd));
	else if (c->home[0] && infer_within(p, c->home) && strcmp(p, c->home))
		snprintf(out, size, "~%s", p + strlen(c->home));
	else
		snprintf(out, size, "%s", p);
	if (!strcmp(out, "."))
		snprintf(out, size, ".");
}

int infer_ctx_init(struct infer_ctx *c, const struct trace *t, const struct infer_opts *o,
		   struct infer_result *res)
{
	const char *home = o->home && o->home[0] ? o->home : t->home;

	memset(c, 0, sizeof(*c));
	c->t = t;
	c->o = o;
	c->res = res;
	if (home && home[0] == '/' && strlen(home) < sizeof(c->home)) {
		snprintf(c->home, sizeof(c->home), "%s", home);
		infer_path_clean(c->home);
		if (!strcmp(c->home, "/"))
			c->home[0] = 0;
	}
	for (size_t i = 0; o->cred_stores && o->cred_stores[i]; i++) {
		const char *s = o->cred_stores[i];
		char p[PATH_MAX], **v;

		if (s[0] == '~' && !c->home[0])
			continue;
		if (s[0] == '~')
			snprintf(p, sizeof(p), "%s%s", c->home, s + 1);
		else
			snprintf(p, sizeof(p), "%s", s);
		infer_path_clean(p);
		v = realloc(c->creds, (c->ncreds + 1) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		c->creds = v;
		if (!(v[c->ncreds] = strdup(p)))
			return -ENOMEM;
		c->ncreds++;
	}
	return 0;
}

void infer_ctx_free(struct infer_ctx *c)
{
	for (size_t i = 0; i < c->nsocks; i++)
		free(c->socks[i]);
	free(c->socks);
	for (size_t i = 0; i < c->ncreds; i++)
		free(c->creds[i]);
	free(c->creds);
	for (size_t i = 0; i < c->nsorted; i++)
		free(c->sorted[i]);
	free(c->sorted);
}

/* init_infer.c - a trace in, a least-privilege policy out (the rules: docs/trace.md). */
#include "trace/infer.h"
#include "policy/policy.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What every sandbox has of its own: never granted, never warned about. */
static const char *const own_prefixes[] = {"/proc", "/sys", "/dev", "/run/warden", NULL};
/* Every sandbox has a /tmp of its own, writable: what the program made there needs no grant;
 * what it read there and did not make was the host's, and does. */
#define SCRATCH "/tmp"
/* Files the launcher writes for every sandbox (bwrap.c's generated files). */
static const char *const own_files[] = {"/etc/resolv.conf", "/etc/hosts", "/etc/passwd",
					"/etc/group", NULL};

/* ------------------------------------------------------------ paths */

/* @p is @dir or lies inside it (both clean and absolute) */
static bool within(const char *p, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return true;
	return !strncmp(p, dir, n) && (p[n] == 0 || p[n] == '/');
}

static bool within_any(const char *p, const char *const *dirs)
{
	for (size_t i = 0; dirs && dirs[i]; i++)
		if (within(p, dirs[i]))
			return true;
	return false;
}

static bool equal_any(const char *p, const char *const *files)
{
	for (size_t i = 0; files && files[i]; i++)
		if (!strcmp(p, files[i]))
			return true;
	return false;
}

/* lexical clean-up of an absolute path: "//", "/./", "/../", a trailing "/" (in place) */
static void path_clean(char *p)
{
	char *out = p, *in = p;

	while (*in) {
		while (*in == '/')
			in++;
		if (!*in)
			break;
		char *end = strchr(in, '/');
		size_t n = end ? (size_t)(end - in) : strlen(in);

		if (n == 1 && in[0] == '.') {
			/* nothing */
		} else if (n == 2 && in[0] == '.' && in[1] == '.') {
			while (out > p && *--out != '/')
				;
		} else {
			*out++ = '/';
			memmove(out, in, n);
			out += n;
		}
		in += n;
	}
	if (out == p)
		*out++ = '/';
	*out = 0;
}

static int depth(const char *p)
{
	int d = 0;

	for (; *p; p++)
		d += *p == '/' && p[1];
	return d;
}

/* the parent folder of a clean absolute path, into @out (PATH_MAX) */
static void parent_of(const char *p, char *out, size_t size)
{
	const char *slash = strrchr(p, '/');
	size_t n = slash && slash != p ? (size_t)(slash - p) : 1;

	snprintf(out, size, "%.*s", (int)n, p);
}

/* only printable UTF-8: what a YAML double-quoted string says plainly */
static bool printable_utf8(const char *s)
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

/* One path the policy may grant, and what led to it. */
struct leaf {
	char *path;
	bool dead; /* folded into another leaf, or dropped */
};

struct leaves {
	struct leaf *v;
	size_t n;
};

static int leaves_add(struct leaves *l, const char *path)
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

static void leaves_free(struct leaves *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].path);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* a leaf inside another live leaf is dead */
static void leaves_drop_covered(struct leaves *l, const struct leaves *by)
{
	for (size_t i = 0; i < l->n; i++)
		for (size_t k = 0; !l->v[i].dead && k < by->n; k++)
			if (!by->v[k].dead && (by != l || k != i) &&
			    within(l->v[i].path, by->v[k].path))
				l->v[i].dead = true;
}

struct ctx {
	const struct trace *t;
	const struct infer_opts *o;
	struct infer_result *res;
	char home[PATH_MAX];
	char **creds; /* the credential stores, absolute */
	size_t ncreds;
	char **sorted; /* every event's path, clean, sorted (to tell folders the program made) */
	size_t nsorted;
	char **socks; /* every unix socket the program connected to or tried, clean */
	size_t nsocks;
};

static void warn(struct ctx *c, const char *fmt, ...) WD_PRINTF(2, 3);
static void warn(struct ctx *c, const char *fmt, ...)
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

static const char *cred_of(const struct ctx *c, const char *p)
{
	for (size_t i = 0; i < c->ncreds; i++)
		if (within(p, c->creds[i]))
			return c->creds[i];
	return NULL;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* did any event name a path inside @p (so @p is a folder)? */
static bool holds_events(const struct ctx *c, const char *p)
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
static bool made_here(const struct ctx *c, const char *p)
{
	for (size_t i = 0; i < c->t->nfiles; i++) {
		const struct trace_file_ev *e = &c->t->files[i];

		if ((e->op == TRACE_CREATE || e->op == TRACE_RENAME) && within(p, e->path))
			return true;
	}
	return false;
}

/* does @p hold (or is it) a unix socket the trace saw a connect to? */
static bool holds_socket(const struct ctx *c, const char *p)
{
	for (size_t i = 0; i < c->nsocks; i++)
		if (within(c->socks[i], p))
			return true;
	return false;
}

/* the connect events' paths, clean, into c->socks */
static int socket_paths(struct ctx *c)
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
		path_clean(c->socks[c->nsocks++]);
	}
	return 0;
}

static int sorted_paths(struct ctx *c)
{
	c->sorted = calloc(c->t->nfiles + 1, sizeof(*c->sorted));
	if (!c->sorted)
		return -ENOMEM;
	for (size_t i = 0; i < c->t->nfiles; i++) {
		if (!(c->sorted[i] = strdup(c->t->files[i].path)))
			return -ENOMEM;
		c->nsorted++;
		if (strlen(c->sorted[i]) < PATH_MAX)
			path_clean(c->sorted[i]);
	}
	qsort(c->sorted, c->nsorted, sizeof(*c->sorted), cmp_str);
	return 0;
}

/* May one grant cover all of @p? Never `/`, a top folder, the home folder or what holds it,
 * the runtime base or what holds it, a credential store or what holds one, a protected path
 * or what holds it. */
static bool grantable_folder(const struct ctx *c, const char *p)
{
	if (depth(p) <= 1)
		return false;
	if (c->home[0] && within(c->home, p))
		return false;
	for (size_t i = 0; c->o->base_dirs && c->o->base_dirs[i]; i++)
		if (within(c->o->base_dirs[i], p) || within(p, c->o->base_dirs[i]))
			return false;
	for (size_t i = 0; i < c->ncreds; i++)
		if (within(c->creds[i], p))
			return false;
	for (size_t i = 0; c->o->protect && c->o->protect[i]; i++)
		if (within(c->o->protect[i], p))
			return false;
	return true;
}

static bool exists(const struct ctx *c, const char *p)
{
	return !c->o->exists || c->o->exists(p, c->o->ctx);
}

/* A tree of the leaves' paths, one node per component, to fold them bottom-up. Every node is
 * also in the tree's flat list, which frees them; the walks below use an explicit stack. */
struct tnode {
	char *name; /* one component; "" at the root */
	struct tnode **kids;
	size_t nkids;
	bool leaf;
};

struct tree {
	struct tnode **all;
	size_t n;
};

/* a path has at most this many components */
#define TREE_DEPTH (PATH_MAX / 2 + 2)

static void tree_free(struct tree *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->all[i]->kids);
		free(t->all[i]->name);
		free(t->all[i]);
	}
	free(t->all);
	memset(t, 0, sizeof(*t));
}

static struct tnode *tnode_new(struct tree *t, const char *name, size_t len)
{
	struct tnode **all = realloc(t->all, (t->n + 1) * sizeof(struct tnode *));
	struct tnode *n;

	if (!all)
		return NULL;
	t->all = all;
	n = calloc(1, sizeof(*n));
	if (n && !(n->name = strndup(name, len))) {
		free(n);
		n = NULL;
	}
	if (n)
		t->all[t->n++] = n;
	return n;
}

/* the node for the clean absolute @path below @root, made as needed */
static struct tnode *tnode_get(struct tree *t, struct tnode *root, const char *path)
{
	struct tnode *n = root;
	const char *p = path;

	while (*p == '/')
		p++;
	while (*p) {
		const char *end = strchr(p, '/');
		size_t len = end ? (size_t)(end - p) : strlen(p), i;

		for (i = 0; i < n->nkids; i++)
			if (strlen(n->kids[i]->name) == len && !memcmp(n->kids[i]->name, p, len))
				break;
		if (i == n->nkids) {
			struct tnode **v =
			    realloc(n->kids, (n->nkids + 1) * sizeof(struct tnode *));
			struct tnode *k;

			if (!v)
				return NULL;
			n->kids = v;
			if (!(k = tnode_new(t, p, len)))
				return NULL;
			v[n->nkids++] = k;
		}
		n = n->kids[i];
		p += len;
		while (*p == '/')
			p++;
	}
	return n;
}

/* one node on a walk's stack: @next kid to visit, @len of its path, kids that hold leaves */
struct frame {
	struct tnode *n;
	size_t next;
	size_t len;
	size_t holding;
};

/* @path (PATH_MAX) += "/" + @k's name, as a new frame on @st; false when it does not fit */
static bool descend(struct frame *st, size_t *sp, struct tnode *k, char *path)
{
	size_t len = st[*sp].len, l2 = len + 1 + strlen(k->name);

	if (l2 >= PATH_MAX || *sp + 1 >= TREE_DEPTH)
		return false;
	path[len] = '/';
	memcpy(path + len + 1, k->name, l2 - len);
	(*sp)++;
	st[*sp] = (struct frame){.n = k, .len = l2};
	return true;
}

/* Fold, from the deepest folders up: a grantable folder with INFER_FOLD_MIN or more entries
 * that hold leaves becomes a leaf itself. */
static int tree_fold(const struct ctx *c, struct tnode *root)
{
	struct frame *st = calloc(TREE_DEPTH, sizeof(*st));
	char path[PATH_MAX] = "";
	size_t sp = 0;

	if (!st)
		return -ENOMEM;
	st[0].n = root;
	for (;;) {
		struct frame *f = &st[sp];
		bool holds;

		if (!f->n->leaf && f->next < f->n->nkids) {
			descend(st, &sp, f->n->kids[f->next++], path);
			continue;
		}
		/* a folder holding a unix socket the program reached is never one grant: the
		 * socket stays its own line, with its own comment */
		if (!f->n->leaf && f->holding >= INFER_FOLD_MIN &&
		    grantable_folder(c, f->len ? path : "/") &&
		    !holds_socket(c, f->len ? path : "/"))
			f->n->leaf = true;
		holds = f->n->leaf || f->holding;
		if (!sp)
			break;
		sp--;
		st[sp].holding += holds;
		path[st[sp].len] = 0;
	}
	free(st);
	return 0;
}

/* the topmost leaves of the tree, in path order, into @l */
static int tree_collect(struct tnode *root, struct leaves *l)
{
	struct frame *st = calloc(TREE_DEPTH, sizeof(*st));
	char path[PATH_MAX] = "";
	size_t sp = 0;
	int rc = 0;

	if (!st)
		return -ENOMEM;
	st[0].n = root;
	while (!rc) {
		struct frame *f = &st[sp];

		if (f->n->leaf && f->next == 0) {
			f->next = SIZE_MAX; /* below a leaf: nothing more */
			rc = leaves_add(l, f->len ? path : "/");
			continue;
		}
		if (f->next < f->n->nkids) {
			descend(st, &sp, f->n->kids[f->next++], path);
			continue;
		}
		if (!sp)
			break;
		sp--;
		path[st[sp].len] = 0;
	}
	free(st);
	return rc;
}

static int cmp_leaf(const void *a, const void *b)
{
	return strcmp(((const struct leaf *)a)->path, ((const struct leaf *)b)->path);
}

/* Fold @l: a grantable folder in which INFER_FOLD_MIN or more entries would get grants gets
 * one grant in their place, from the deepest folders up. */
static int fold(struct ctx *c, struct leaves *l)
{
	struct tree t = {0};
	struct tnode *root = tnode_new(&t, "", 0);
	struct leaves out = {0};
	int rc = 0;

	if (!root) {
		tree_free(&t);
		return -ENOMEM;
	}
	for (size_t i = 0; i < l->n; i++) {
		struct tnode *n;

		if (l->v[i].dead)
			continue;
		if (!(n = tnode_get(&t, root, l->v[i].path))) {
			rc = -ENOMEM;
			goto out;
		}
		n->leaf = true;
	}
	rc = tree_fold(c, root);
	if (!rc)
		rc = tree_collect(root, &out);
	if (!rc) {
		leaves_free(l);
		*l = out;
		memset(&out, 0, sizeof(out));
		if (l->n)
			qsort(l->v, l->n, sizeof(*l->v), cmp_leaf);
	}
out:
	leaves_free(&out);
	tree_free(&t);
	return rc;
}

/* ------------------------------------------------------------ writing YAML */

/* @s as a YAML double-quoted scalar: `"` and `\\` escaped, and every byte YAML would read as
 * anything but itself escaped too: C0 controls and DEL ("\\xNN"), and the line breaks NEL,
 * LS and PS ("\\N", "\\L", "\\P"), which would fold into a space or end a comment the
 * scalar sits in. TODO(issue 26): common/ has this once */
static void yaml_quote(struct wd_buf *b, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;

	wd_buf_puts(b, "\"");
	for (; *u; u++) {
		if (*u == '"' || *u == '\\') {
			wd_buf_puts(b, "\\");
			wd_buf_append(b, u, 1);
		} else if (*u < 0x20 || *u == 0x7f) {
			wd_buf_printf(b, "\\x%02x", *u);
		} else if (u[0] == 0xc2 && u[1] == 0x85) {
			wd_buf_puts(b, "\\N");
			u++;
		} else if (u[0] == 0xe2 && u[1] == 0x80 && (u[2] == 0xa8 || u[2] == 0xa9)) {
			wd_buf_puts(b, u[2] == 0xa8 ? "\\L" : "\\P");
			u += 2;
		} else {
			wd_buf_append(b, u, 1);
		}
	}
	wd_buf_puts(b, "\"");
}

/* @s as a comment may hold it: what a trace chose (a process name, a path, a refusal) ends
 * no comment and starts no YAML line (wd_esc(): every line break YAML knows, \\n \\r NEL LS
 * PS, becomes an escape); @scratch is the caller's, one per argument printed together */
static const char *said(struct wd_buf *scratch, const char *s)
{
	return wd_esc(scratch, s);
}

/* @line, a comment made of what a trace chose, onto @out escaped as said() does, then "\n";
 * @line is emptied */
static void said_line(struct wd_buf *out, struct wd_buf *line)
{
	wd_esc_append(out, line->data ? wd_buf_cstr(line) : "", 0);
	wd_buf_puts(out, "\n");
	wd_buf_free(line);
}

/* @p as the policy should say it: relative to its folder, ~/..., or absolute */
static void shown_path(const struct ctx *c, const char *p, char *out, size_t size)
{
	const char *pd = c->o->policy_dir;

	if (pd && within(p, pd) && strcmp(pd, "/"))
		snprintf(out, size, ".%s", p + strlen(pd));
	else if (c->home[0] && within(p, c->home) && strcmp(p, c->home))
		snprintf(out, size, "~%s", p + strlen(c->home));
	else
		snprintf(out, size, "%s", p);
	if (!strcmp(out, "."))
		snprintf(out, size, ".");
}

/* "read by node, sh: 412 files under ./node_modules" */
static void why_files(const struct ctx *c, const char *grant, bool writes, struct wd_buf *out)
{
	struct wd_buf line = WD_BUF_INIT, *b = &line;
	const char *comm[3] = {0};
	uint64_t ccount[3] = {0};
	size_t nfiles = 0, nops[TRACE_OP_N] = {0};
	char shown[PATH_MAX];

	for (size_t i = 0; i < c->t->nfiles; i++) {
		const struct trace_file_ev *e = &c->t->files[i];
		bool seen = false;

		if (trace_op_writes(e->op) != writes || e->op == TRACE_MISSING ||
		    !within(e->path, grant))
			continue;
		for (size_t k = 0; k < i && !seen; k++)
			seen = !strcmp(c->t->files[k].path, e->path) &&
			       trace_op_writes(c->t->files[k].op) == writes &&
			       c->t->files[k].op != TRACE_MISSING;
		nfiles += !seen;
		nops[e->op]++;
		for (size_t k = 0; e->comm[0] && k < 3; k++) {
			if (!comm[k] || !strcmp(comm[k], e->comm)) {
				comm[k] = e->comm;
				ccount[k] += e->count;
				break;
			}
		}
	}
	wd_buf_puts(b, writes ? "   # written by " : "   # read by ");
	wd_buf_puts(b, comm[0] ? comm[0] : "the program");
	for (size_t k = 1; k < 3 && comm[k]; k++)
		wd_buf_printf(b, ", %s", comm[k]);
	shown_path(c, grant, shown, sizeof(shown));
	if (nfiles == 1 && within(grant, grant) && !holds_events(c, grant))
		wd_buf_printf(b, ": %s", shown);
	else
		wd_buf_printf(b, ": %zu %s under %s", nfiles, nfiles == 1 ? "path" : "paths",
			      shown);
	if (writes) {
		const char *sep = " (";

		for (int op = 0; op < TRACE_OP_N; op++)
			if (nops[op] && trace_op_writes((enum trace_op)op)) {
				wd_buf_printf(b, "%s%s %zu", sep, trace_op_name((enum trace_op)op),
					      nops[op]);
				sep = ", ";
			}
		wd_buf_puts(b, ")");
	} else if (nops[TRACE_EXEC]) {
		wd_buf_printf(b, " (%zu executed)", nops[TRACE_EXEC]);
	}
	/* a grant never takes in a socket silently */
	for (size_t i = 0; i < c->t->nfiles; i++) {
		const struct trace_file_ev *e = &c->t->files[i];

		if (e->op == TRACE_CONNECT && !e->refused && within(e->path, grant)) {
			shown_path(c, e->path, shown, sizeof(shown));
			wd_buf_printf(b, "; it holds the unix socket %s, which %s connected to",
				      shown, e->comm[0] ? e->comm : "the program");
		}
	}
	said_line(out, b);
}

/* is @p itself a unix socket the program connected to (let through: named)? */
static bool is_socket(const struct ctx *c, const char *p)
{
	for (size_t i = 0; i < c->t->nfiles; i++) {
		const struct trace_file_ev *e = &c->t->files[i];
		char q[PATH_MAX];

		if (e->op != TRACE_CONNECT || e->refused || strlen(e->path) >= sizeof(q))
			continue;
		snprintf(q, sizeof(q), "%s", e->path);
		path_clean(q);
		if (!strcmp(q, p))
			return true;
	}
	return false;
}

/* "# a unix socket: connected to by curl (...)" for the grant of socket @p */
static void why_socket(const struct ctx *c, const char *p, struct wd_buf *out)
{
	struct wd_buf line = WD_BUF_INIT;
	const char *comm = NULL;

	for (size_t i = 0; i < c->t->nfiles && !comm; i++) {
		const struct trace_file_ev *e = &c->t->files[i];
		char q[PATH_MAX];

		if (e->op != TRACE_CONNECT || e->refused || strlen(e->path) >= sizeof(q))
			continue;
		snprintf(q, sizeof(q), "%s", e->path);
		path_clean(q);
		if (!strcmp(q, p) && e->comm[0])
			comm = e->comm;
	}
	wd_buf_printf(&line,
		      "   # a unix socket: connected to by %s (named with warden trace "
		      "--allow-socket): the service behind it acts for the program",
		      comm ? comm : "the program");
	said_line(out, &line);
}

/* ------------------------------------------------------------ files */

static bool own_path(const char *p)
{
	return !strcmp(p, "/") || within_any(p, own_prefixes) || equal_any(p, own_files);
}

struct cred_hit {
	char *path;
	const char *store;
	char comm[16];
};

struct files {
	struct leaves read, write;
	struct cred_hit *cred;
	size_t ncred;
	struct cred_hit *sock; /* unix sockets the trace refused (.store unused) */
	size_t nsock;
};

/* @path (once) in the list @v of @n hits, with the credential store it is in (or NULL) and
 * the program that used it. Return: 0, -ENOMEM. */
static int hit_add(struct cred_hit **v, size_t *n, const char *path, const char *store,
		   const char *comm)
{
	struct cred_hit *nv;

	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*v)[i].path, path))
			return 0;
	nv = realloc(*v, (*n + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	*v = nv;
	nv[*n].path = strdup(path);
	nv[*n].store = store;
	snprintf(nv[*n].comm, sizeof(nv[*n].comm), "%s", comm);
	if (!nv[*n].path)
		return -ENOMEM;
	(*n)++;
	return 0;
}

static int sock_add(struct files *f, const char *path, const char *comm)
{
	return hit_add(&f->sock, &f->nsock, path, NULL, comm);
}

static int cred_add(struct files *f, const char *path, const char *store, const char *comm)
{
	return hit_add(&f->cred, &f->ncred, path, store, comm);
}

/* one event: into the read or write leaves, the credential hits, or nowhere (with a reason) */
static int file_event(struct ctx *c, struct files *f, const struct trace_file_ev *e)
{
	char p[PATH_MAX], dir[PATH_MAX];
	const char *store;
	bool writes = trace_op_writes(e->op);

	if (e->op == TRACE_MISSING) {
		/* the learning sandbox masks the credential stores, so a program that reached for
		 * a key the host has saw it missing: that is a credential store read, said so */
		if (strlen(e->path) >= sizeof(p) || !printable_utf8(e->path))
			return 0;
		snprintf(p, sizeof(p), "%s", e->path);
		path_clean(p);
		if ((store = cred_of(c, p)) && exists(c, p))
			return cred_add(f, p, store, e->comm);
		return 0;
	}
	if (strlen(e->path) >= sizeof(p) || !printable_utf8(e->path)) {
		warn(c,
		     "not granted: a path with control characters or invalid UTF-8 (%s by %s): %s",
		     trace_op_name(e->op), e->comm[0] ? e->comm : "the program", e->path);
		return 0;
	}
	snprintf(p, sizeof(p), "%s", e->path);
	path_clean(p);
	/* a unix socket the learning sandbox refused: a service outside it, never granted */
	if (e->op == TRACE_CONNECT && e->refused)
		return own_path(p) ? 0 : sock_add(f, p, e->comm);
	if (own_path(p) || (within(p, SCRATCH) && (writes || made_here(c, p))))
		return 0;
	if ((store = cred_of(c, p)))
		return cred_add(f, p, store, e->comm);
	if (within_any(p, c->o->base_dirs) || equal_any(p, c->o->base_files)) {
		if (writes)
			warn(c,
			     "not granted: %s %s lies in the runtime base, which every sandbox "
			     "sees read-only",
			     trace_op_name(e->op), p);
		return 0;
	}
	for (size_t i = 0; c->o->protect && c->o->protect[i]; i++)
		if (within(p, c->o->protect[i])) {
			warn(c, "not granted: %s %s is Warden's own (%s)", trace_op_name(e->op), p,
			     c->o->protect[i]);
			return 0;
		}
	if (!writes) {
		if (!grantable_folder(c, p) && e->op != TRACE_READ && e->op != TRACE_EXEC &&
		    e->op != TRACE_CONNECT)
			return 0; /* a stat of a folder that holds grants: the tree answers it */
		return leaves_add(&f->read, p);
	}
	/* a write: the file itself when it was only written, a folder the program made and then
	 * used itself, else the folder it changed */
	if (e->op == TRACE_WRITE && exists(c, p))
		return leaves_add(&f->write, p);
	if (e->op == TRACE_CREATE && holds_events(c, p) && grantable_folder(c, p))
		return leaves_add(&f->write, p);
	parent_of(p, dir, sizeof(dir));
	if (!grantable_folder(c, dir) || within_any(dir, c->o->base_dirs)) {
		warn(c,
		     "not granted: %s %s needs the whole of %s writable (grant a folder of its "
		     "own for it, e.g. by an option of the program)",
		     trace_op_name(e->op), p, dir);
		return 0;
	}
	return leaves_add(&f->write, dir);
}

/* a write grant that is not there now: the nearest folder up whose parent is (the policy
 * accepts a missing write grant whose parent exists, and the launcher makes it) */
static void write_leaf_settle(struct ctx *c, struct leaf *l)
{
	char parent[PATH_MAX];

	for (;;) {
		parent_of(l->path, parent, sizeof(parent));
		if (exists(c, parent))
			return;
		if (!grantable_folder(c, parent)) {
			warn(c, "not granted: the write grant %s is missing and so is its parent",
			     l->path);
			l->dead = true;
			return;
		}
		snprintf(l->path, strlen(l->path) + 1, "%s", parent);
	}
}

static int emit_files(struct ctx *c, struct wd_buf *b)
{
	struct files f = {0};
	char shown[PATH_MAX];
	int rc = 0;
	bool any_r = false, any_w = false;

	rc = sorted_paths(c);
	if (!rc)
		rc = socket_paths(c);
	for (size_t i = 0; !rc && i < c->t->nfiles; i++)
		rc = file_event(c, &f, &c->t->files[i]);
	if (!rc)
		rc = fold(c, &f.write);
	for (size_t i = 0; !rc && i < f.write.n; i++)
		if (!f.write.v[i].dead)
			write_leaf_settle(c, &f.write.v[i]);
	if (!rc) {
		leaves_drop_covered(&f.write, &f.write);
		leaves_drop_covered(&f.read, &f.write);
		rc = fold(c, &f.read);
	}
	for (size_t i = 0; !rc && i < f.read.n; i++) {
		if (!f.read.v[i].dead && !exists(c, f.read.v[i].path)) {
			warn(c, "not granted: %s was read during the trace and is not there now",
			     f.read.v[i].path);
			f.read.v[i].dead = true;
		}
	}
	for (size_t i = 0; i < f.read.n; i++)
		any_r |= !f.read.v[i].dead;
	for (size_t i = 0; i < f.write.n; i++)
		any_w |= !f.write.v[i].dead;
	if (rc || (!any_r && !any_w && !f.ncred && !f.nsock))
		goto out;
	wd_buf_puts(b, "filesystem:\n");
	for (int w = 0; w < 2; w++) {
		struct leaves *l = w ? &f.write : &f.read;

		if (!(w ? any_w : any_r))
			continue;
		wd_buf_puts(b, w ? "  write:\n" : "  read:\n");
		for (size_t i = 0; i < l->n; i++) {
			if (l->v[i].dead)
				continue;
			shown_path(c, l->v[i].path, shown, sizeof(shown));
			wd_buf_puts(b, "    - ");
			yaml_quote(b, shown);
			if (!w && is_socket(c, l->v[i].path))
				why_socket(c, l->v[i].path, b);
			else
				why_files(c, l->v[i].path, w, b);
			if (w)
				c->res->nwrite++;
			else
				c->res->nread++;
		}
	}
	if (f.ncred) {
		wd_buf_puts(b,
			    "  # Credential stores the program read: NOT granted. Grant one only "
			    "if the program\n  # must have it, as a read grant with "
			    "`sensitive: true` (warden-policy(5)).\n");
		if (!any_r)
			wd_buf_puts(b, "  # read:\n");
		for (size_t i = 0; i < f.ncred; i++) {
			struct wd_buf e1 = WD_BUF_INIT, e2 = WD_BUF_INIT;
			char store[PATH_MAX];

			shown_path(c, f.cred[i].path, shown, sizeof(shown));
			shown_path(c, f.cred[i].store, store, sizeof(store));
			wd_buf_puts(b, "    # - { path: ");
			yaml_quote(b, shown);
			wd_buf_printf(b,
				      ", sensitive: true }   # read by %s (credential store %s)\n",
				      said(&e1, f.cred[i].comm[0] ? f.cred[i].comm : "the program"),
				      said(&e2, store));
			wd_buf_free(&e1);
			wd_buf_free(&e2);
			warn(c, "a credential store was read and is not granted: %s (by %s)",
			     f.cred[i].path, f.cred[i].comm[0] ? f.cred[i].comm : "the program");
		}
	}
	if (f.nsock) {
		wd_buf_puts(b,
			    "  # Unix sockets the program tried to connect to, which the learning "
			    "sandbox refused\n  # (a service outside the sandbox: whoever reaches "
			    "it can have it act for them).\n  # NOT granted. To let the program "
			    "reach one, trace it again with\n  # `warden trace --allow-socket "
			    "PATH` and read what the service can do first.\n");
		if (!any_r)
			wd_buf_puts(b, "  # read:\n");
		for (size_t i = 0; i < f.nsock; i++) {
			struct wd_buf e1 = WD_BUF_INIT;

			shown_path(c, f.sock[i].path, shown, sizeof(shown));
			wd_buf_puts(b, "    # - ");
			yaml_quote(b, shown);
			wd_buf_printf(
			    b,
			    "   # a unix socket %s tried to connect to: refused in the "
			    "trace, not granted\n",
			    said(&e1, f.sock[i].comm[0] ? f.sock[i].comm : "the program"));
			wd_buf_free(&e1);
			warn(c,
			     "a unix socket was refused in the trace and is not granted: %s (by "
			     "%s); name it with warden trace --allow-socket if the program must "
			     "reach its service",
			     f.sock[i].path, f.sock[i].comm[0] ? f.sock[i].comm : "the program");
		}
	}
out:
	leaves_free(&f.read);
	leaves_free(&f.write);
	for (size_t i = 0; i < f.ncred; i++)
		free(f.cred[i].path);
	free(f.cred);
	for (size_t i = 0; i < f.nsock; i++)
		free(f.sock[i].path);
	free(f.sock);
	return rc;
}

/* ------------------------------------------------------------ network */

struct host {
	const char *name;
	uint16_t ports[16];
	unsigned nports;
	uint64_t count;
	unsigned protos; /* bit per enum trace_proto */
	bool folded;
};

static bool host_name_ok(const char *s)
{
	bool digits_only_last = true;
	const char *last = strrchr(s, '.');

	if (!*s || strlen(s) > 253 || !last || last == s)
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' ||
		      *p == '_' || *p == '.'))
			return false;
	for (const char *p = last + 1; *p; p++)
		digits_only_last &= *p >= '0' && *p <= '9';
	return !digits_only_last; /* a last label of digits: an address */
}

static int labels(const char *s)
{
	int n = 1;

	for (; *s; s++)
		n += *s == '.';
	return n;
}

/* a parent a wildcard may sit on: two labels at least, three under a two-letter top label
 * (co.uk and the like; Warden has no public suffix list) */
static bool wildcard_parent_ok(const char *parent)
{
	const char *top = strrchr(parent, '.');
	int n = labels(parent);

	if (n < 2)
		return false;
	return !(top && strlen(top + 1) == 2 && n < 3);
}

static void add_port(struct host *h, uint16_t port)
{
	for (unsigned i = 0; i < h->nports; i++)
		if (h->ports[i] == port)
			return;
	if (h->nports < WD_ARRAY_SIZE(h->ports))
		h->ports[h->nports++] = port;
}

static int cmp_u16(const void *a, const void *b)
{
	return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b;
}

static void rule_text(struct wd_buf *b, const char *name, uint16_t *ports, unsigned n)
{
	qsort(ports, n, sizeof(*ports), cmp_u16);
	if (n == 2 && ports[0] == 80 && ports[1] == 443) {
		yaml_quote(b, name);
	} else if (n == 1) {
		wd_buf_printf(b, "\"%s:%u\"", name, ports[0]);
	} else {
		wd_buf_puts(b, "{ host: ");
		yaml_quote(b, name);
		wd_buf_puts(b, ", ports: [");
		for (unsigned i = 0; i < n; i++)
			wd_buf_printf(b, "%s%u", i ? ", " : "", ports[i]);
		wd_buf_puts(b, "] }");
	}
}

static const char *const proto_word[TRACE_PROTO_N] = {"TLS", "HTTP", "raw TCP", "DNS"};

static int emit_network(struct ctx *c, struct wd_buf *b)
{
	struct host *h = calloc(c->t->nnets + 1, sizeof(*h));
	struct wd_buf notes = {0};
	size_t nh = 0;
	bool header = false;

	if (!h)
		return -ENOMEM;
	for (size_t i = 0; i < c->t->nnets; i++) {
		const struct trace_net_ev *e = &c->t->nets[i];
		struct wd_buf e1 = WD_BUF_INIT, e2 = WD_BUF_INIT;
		size_t k = 0;

		if (e->refused) {
			wd_buf_printf(&notes, "  #   %s:%u (%s): refused during the trace\n",
				      said(&e1, printable_utf8(e->host) ? e->host : "?"), e->port,
				      said(&e2, e->refused));
			wd_buf_free(&e1);
			wd_buf_free(&e2);
			warn(c, "not granted: %s:%u was refused during the trace (%s)",
			     printable_utf8(e->host) ? e->host : "?", e->port, e->refused);
			continue;
		}
		if (!host_name_ok(e->host)) {
			wd_buf_printf(&notes,
				      "  #   %s:%u: an address or not a host name; write a "
				      "{ cidr: ..., ports: [...] } rule if it is meant\n",
				      said(&e1, printable_utf8(e->host) ? e->host : "?"), e->port);
			wd_buf_free(&e1);
			continue;
		}
		if (e->proto == TRACE_PROTO_DNS) {
			wd_buf_printf(&notes, "  #   %s: resolved, never connected to\n", e->host);
			continue;
		}
		while (k < nh && strcmp(h[k].name, e->host))
			k++;
		if (k == nh)
			h[nh++].name = e->host;
		add_port(&h[k], e->port);
		h[k].count += e->count;
		h[k].protos |= 1u << e->proto;
	}
	for (size_t i = 0; i < nh; i++) {
		const char *parent = strchr(h[i].name, '.') + 1;
		struct host w = {.name = parent};
		unsigned siblings = 0;
		char names[256] = "";

		if (h[i].folded || !wildcard_parent_ok(parent))
			continue;
		for (size_t k = i; k < nh; k++)
			siblings += !h[k].folded && !strcmp(strchr(h[k].name, '.') + 1, parent);
		if (siblings < INFER_WILDCARD_MIN)
			continue;
		for (size_t k = i; k < nh; k++) {
			if (h[k].folded || strcmp(strchr(h[k].name, '.') + 1, parent))
				continue;
			for (unsigned p = 0; p < h[k].nports; p++)
				add_port(&w, h[k].ports[p]);
			w.count += h[k].count;
			h[k].folded = true;
			if (strlen(names) + strlen(h[k].name) + 8 < sizeof(names))
				snprintf(names + strlen(names), sizeof(names) - strlen(names),
					 "%s%s", names[0] ? ", " : "", h[k].name);
		}
		if (!header)
			wd_buf_puts(b, "network:\n  allow:\n");
		header = true;
		wd_buf_printf(b, "    # *.%s: %u names below %s were reached (%s)\n", parent,
			      siblings, parent, names);
		wd_buf_puts(b, "    - ");
		if (w.nports == 1) {
			wd_buf_printf(b, "\"*.%s:%u\"", parent, w.ports[0]);
		} else {
			qsort(w.ports, w.nports, sizeof(*w.ports), cmp_u16);
			wd_buf_printf(b, "{ host: \"*.%s\", ports: [", parent);
			for (unsigned p = 0; p < w.nports; p++)
				wd_buf_printf(b, "%s%u", p ? ", " : "", w.ports[p]);
			wd_buf_puts(b, "] }");
		}
		wd_buf_printf(b, "   # %llu connections\n", (unsigned long long)w.count);
		c->res->nallow++;
	}
	for (size_t i = 0; i < nh; i++) {
		const char *sep = "";

		if (h[i].folded)
			continue;
		if (!header)
			wd_buf_puts(b, "network:\n  allow:\n");
		header = true;
		wd_buf_puts(b, "    - ");
		rule_text(b, h[i].name, h[i].ports, h[i].nports);
		wd_buf_puts(b, "   # ");
		for (int p = 0; p < TRACE_PROTO_N; p++)
			if (h[i].protos & (1u << p)) {
				wd_buf_printf(b, "%s%s", sep, proto_word[p]);
				sep = "/";
			}
		wd_buf_printf(b, ", %llu %s\n", (unsigned long long)h[i].count,
			      h[i].count == 1 ? "connection" : "connections");
		c->res->nallow++;
	}
	if (notes.len) {
		wd_buf_puts(b, header ? "" : "network:\n");
		wd_buf_puts(b, "  # Seen during the trace and not granted:\n");
		wd_buf_append(b, notes.data, notes.len);
		if (!header)
			wd_buf_puts(b, "  allow: []\n");
	}
	wd_buf_free(&notes);
	free(h);
	return 0;
}

/* ------------------------------------------------------------ the rest */

/* names that usually carry a secret: granted, but with a word */
static bool secretish(const char *s)
{
	static const char *const words[] = {"TOKEN", "SECRET",	   "PASSWORD", "PASSWD",
					    "KEY",   "CREDENTIAL", "AUTH"};

	for (size_t i = 0; i < WD_ARRAY_SIZE(words); i++)
		if (strstr(s, words[i]))
			return true;
	return false;
}

static int emit_env(struct ctx *c, struct wd_buf *b)
{
	const char **v;
	size_t n = 0;

	if (!c->t->nenv)
		return 0;
	v = calloc(c->t->nenv, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < c->t->nenv; i++)
		v[n++] = c->t->env[i];
	qsort(v, n, sizeof(*v), cmp_str);
	wd_buf_puts(b, "env:\n  allow:\n");
	for (size_t i = 0; i < n; i++) {
		if (i && !strcmp(v[i], v[i - 1]))
			continue;
		if (!policy_env_name_ok(v[i])) {
			wd_buf_puts(b, "    # (a variable whose name a policy cannot hold)\n");
			continue;
		}
		wd_buf_printf(b, "    - %s%s\n", v[i],
			      secretish(v[i]) ? "   # looks like a secret: keep it only if the "
						"program needs it"
					      : "");
	}
	free(v);
	return 0;
}

uint64_t infer_nice_up(uint64_t v)
{
	uint64_t p = 1;

	if (v <= 1)
		return 1;
	while (p <= UINT64_MAX / 10) {
		if (v <= p)
			return p;
		if (v <= 2 * p)
			return 2 * p;
		if (v <= 5 * p)
			return 5 * p;
		p *= 10;
	}
	return UINT64_MAX;
}

/* A value measured in one short trace, times @mul, rounded up, within [@floor, @cap]. */
static uint64_t limit_from(uint64_t measured, uint64_t mul, uint64_t floor, uint64_t cap)
{
	uint64_t v = infer_nice_up(measured > UINT64_MAX / mul ? UINT64_MAX : measured * mul);

	return v < floor ? floor : v > cap ? cap : v;
}

/*
 * The limits: what one trace measured is a lower bound, not a budget. Its memory peak is
 * sampled (a child that lived between two samples, curl's 11 MiB beside a shell's 2, is never
 * seen), and the same program on a loaded machine or with other input takes longer and more:
 * a limit cut close to one trace kills the program later (SIGKILL, exit 137). So each limit is
 * the measurement times a margin, and never under a floor (INFER_FLOOR_*); the comment keeps
 * what was measured.
 */
static void emit_limits(const struct ctx *c, struct wd_buf *b)
{
	const struct trace *t = c->t;

	if (!t->peak_memory_kib && !t->peak_pids && !t->wall_ms)
		return;
	wd_buf_puts(b, "limits:\n");
	if (t->peak_memory_kib) {
		uint64_t mib = (t->peak_memory_kib + 1023) / 1024;

		wd_buf_printf(
		    b,
		    "  memory_mb: %llu   # peak %llu MiB seen, times 2, rounded up, at "
		    "least %u\n",
		    (unsigned long long)limit_from(mib, 2, INFER_FLOOR_MEMORY_MB, 1048576),
		    (unsigned long long)mib, INFER_FLOOR_MEMORY_MB);
	}
	if (t->peak_pids)
		wd_buf_printf(
		    b,
		    "  pids: %llu   # %llu processes and threads at most, times 2, at "
		    "least %u\n",
		    (unsigned long long)limit_from(t->peak_pids, 2, INFER_FLOOR_PIDS, 4194304),
		    (unsigned long long)t->peak_pids, INFER_FLOOR_PIDS);
	if (t->wall_ms)
		wd_buf_printf(b,
			      "  timeout_s: %llu   # ran %llu.%01llu s, times 3, rounded up, at "
			      "least %u\n",
			      (unsigned long long)limit_from((t->wall_ms * 3 + 999) / 1000, 1,
							     INFER_FLOOR_TIMEOUT_S, 604800),
			      (unsigned long long)(t->wall_ms / 1000),
			      (unsigned long long)(t->wall_ms % 1000 / 100), INFER_FLOOR_TIMEOUT_S);
}

static int ctx_init(struct ctx *c, const struct trace *t, const struct infer_opts *o,
		    struct infer_result *res)
{
	const char *home = o->home && o->home[0] ? o->home : t->home;

	memset(c, 0, sizeof(*c));
	c->t = t;
	c->o = o;
	c->res = res;
	if (home && home[0] == '/' && strlen(home) < sizeof(c->home)) {
		snprintf(c->home, sizeof(c->home), "%s", home);
		path_clean(c->home);
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
		path_clean(p);
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

static void ctx_free(struct ctx *c)
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

int infer_policy(const struct trace *t, const struct infer_opts *o, struct infer_result *res)
{
	struct wd_buf *b = &res->yaml;
	struct ctx c;
	int rc;

	memset(res, 0, sizeof(*res));
	if (!o->policy_dir || o->policy_dir[0] != '/')
		return -EINVAL;
	rc = ctx_init(&c, t, o, res);
	if (rc)
		goto out;
	/* the header's comments quote the trace's path, command and folder escaped
	 * (wd_esc()): a control character is no YAML, a bidi control would hide text */
	wd_buf_puts(b, "# Made by `warden init` from ");
	wd_esc_append(b, o->source ? o->source : "a trace", 0);
	wd_buf_printf(b, "%s%s.\n", o->now ? " on " : "", o->now ? o->now : "");
	wd_buf_puts(b, "# The traced command:");
	for (size_t i = 0; i < t->ncommand; i++) {
		wd_buf_puts(b, " ");
		wd_esc_append(b, t->command[i], 0);
	}
	wd_buf_puts(b, "\n# It ran in ");
	wd_esc_append(b, t->cwd, 0);
	wd_buf_puts(b, ". Each entry says what used it; read them before you use this\n# policy "
		       "(its format: warden-policy(5)).\n");
	wd_buf_puts(b, "version: 1\n");
	if (t->ncommand) {
		bool ok = true;

		for (size_t i = 0; i < t->ncommand; i++)
			ok &= printable_utf8(t->command[i]);
		if (ok) {
			wd_buf_puts(b, "command: [");
			for (size_t i = 0; i < t->ncommand; i++) {
				wd_buf_puts(b, i ? ", " : "");
				yaml_quote(b, t->command[i]);
			}
			wd_buf_puts(b, "]\n");
		}
	}
	if ((rc = emit_files(&c, b)) || (rc = emit_network(&c, b)) || (rc = emit_env(&c, b)))
		goto out;
	emit_limits(&c, b);
	if (!b->data)
		rc = -ENOMEM;
out:
	ctx_free(&c);
	return rc;
}

int infer_starter(struct wd_buf *out, const char *now)
{
	return wd_buf_printf(
	    out,
	    "# A starter policy from `warden init`%s%s. Everything is denied that is not\n"
	    "# granted here; warden-policy(5) has every key. To start from what a program\n"
	    "# really does instead: warden trace -- COMMAND, then warden init --from TRACE.\n"
	    "version: 1\n"
	    "# The program to run when `warden run -p THIS-FILE` is given no command:\n"
	    "# command: [\"node\", \"server.js\"]\n"
	    "filesystem:\n"
	    "  # Folders and files the program may read (relative to this file's folder;\n"
	    "  # the system's /usr, /lib and CA certificates are always there, read-only).\n"
	    "  read:\n"
	    "    - .\n"
	    "  # Folders it may write (they are readable too):\n"
	    "  # write:\n"
	    "  #   - ./out\n"
	    "network:\n"
	    "  # Host names it may reach: a name is ports 80 and 443; \"name:port\" one port;\n"
	    "  # \"*.example.com\" every name below example.com. Nothing else gets out.\n"
	    "  allow: []\n"
	    "  #  - api.github.com\n"
	    "  #  - \"registry.npmjs.org:443\"\n"
	    "# env:\n"
	    "#   allow: [PATH, HOME, LANG]   # variables passed through; the rest are dropped\n"
	    "limits:\n"
	    "  memory_mb: 1024\n"
	    "  pids: 256\n"
	    "  timeout_s: 3600\n",
	    now ? " on " : "", now ? now : "");
}

void infer_result_free(struct infer_result *res)
{
	if (!res)
		return;
	wd_buf_free(&res->yaml);
	wd_buf_free(&res->warnings);
	memset(res, 0, sizeof(*res));
}

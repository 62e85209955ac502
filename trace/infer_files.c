/* infer_files.c - the trace's file events in, the policy's `filesystem:` section out: what is
 * granted read or write, what is never granted (the sandbox's own paths, the runtime base,
 * Warden's own, credential stores, refused sockets) and a comment on each grant. */
#include "trace/infer_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What every sandbox has of its own: never granted, never warned about. */
static const char *const own_prefixes[] = {"/proc", "/sys", "/dev", "/run/warden", NULL};
/* Every run has a /tmp of its own, writable. A learning sandbox shows the host's /tmp instead
 * (read-only; its scratch is /dev/shm, an own path), so a write recorded under /tmp went to the
 * host's, through the current folder's grant, and is granted as any other write; a read there
 * of what the program made (an older trace's scratch) needs no grant. */
#define SCRATCH "/tmp"
/* Files the launcher writes for every sandbox (bwrap.c's generated files). */
static const char *const own_files[] = {"/etc/resolv.conf", "/etc/hosts", "/etc/passwd",
					"/etc/group", NULL};

/* "read by node, sh: 412 files under ./node_modules" */
static void why_files(const struct infer_ctx *c, const char *grant, bool writes, struct wd_buf *out)
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
		    !infer_within(e->path, grant))
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
	infer_shown_path(c, grant, shown, sizeof(shown));
	if (nfiles == 1 && infer_within(grant, grant) && !infer_holds_events(c, grant))
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

		if (e->op == TRACE_CONNECT && !e->refused && infer_within(e->path, grant)) {
			infer_shown_path(c, e->path, shown, sizeof(shown));
			wd_buf_printf(b, "; it holds the unix socket %s, which %s connected to",
				      shown, e->comm[0] ? e->comm : "the program");
		}
	}
	infer_said_line(out, b);
}

/* the first connect of the program to the unix socket @p (let through: named), among those
 * with a process name when @named; NULL: none */
static const struct trace_file_ev *socket_ev(const struct infer_ctx *c, const char *p, bool named)
{
	for (size_t i = 0; i < c->t->nfiles; i++) {
		const struct trace_file_ev *e = &c->t->files[i];
		char q[PATH_MAX];

		if (e->op != TRACE_CONNECT || e->refused || strlen(e->path) >= sizeof(q) ||
		    (named && !e->comm[0]))
			continue;
		snprintf(q, sizeof(q), "%s", e->path);
		infer_path_clean(q);
		if (!strcmp(q, p))
			return e;
	}
	return NULL;
}

/* is @p itself a unix socket the program connected to (let through: named)? */
static bool is_socket(const struct infer_ctx *c, const char *p)
{
	return socket_ev(c, p, false) != NULL;
}

/* "# a unix socket: connected to by curl (...)" for the grant of socket @p */
static void why_socket(const struct infer_ctx *c, const char *p, struct wd_buf *out)
{
	const struct trace_file_ev *e = socket_ev(c, p, true);
	struct wd_buf line = WD_BUF_INIT;
	const char *comm = e ? e->comm : NULL;

	wd_buf_printf(&line,
		      "   # a unix socket: connected to by %s (named with warden trace "
		      "--allow-socket): the service behind it acts for the program",
		      comm ? comm : "the program");
	infer_said_line(out, &line);
}

/* ------------------------------------------------------------ files */

static bool own_path(const char *p)
{
	return !strcmp(p, "/") || infer_within_any(p, own_prefixes) ||
	       infer_equal_any(p, own_files);
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
static int file_event(struct infer_ctx *c, struct files *f, const struct trace_file_ev *e)
{
	char p[PATH_MAX], dir[PATH_MAX];
	const char *store;
	bool writes = trace_op_writes(e->op);

	if (e->op == TRACE_MISSING) {
		/* the learning sandbox masks the credential stores, so a program that reached for
		 * a key the host has saw it missing: that is a credential store read, said so */
		if (strlen(e->path) >= sizeof(p) || !infer_printable_utf8(e->path))
			return 0;
		snprintf(p, sizeof(p), "%s", e->path);
		infer_path_clean(p);
		if ((store = infer_cred_of(c, p)) && infer_exists(c, p))
			return cred_add(f, p, store, e->comm);
		return 0;
	}
	if (strlen(e->path) >= sizeof(p) || !infer_printable_utf8(e->path)) {
		infer_warn(
		    c,
		    "not granted: a path with control characters or invalid UTF-8 (%s by %s): %s",
		    trace_op_name(e->op), e->comm[0] ? e->comm : "the program", e->path);
		return 0;
	}
	snprintf(p, sizeof(p), "%s", e->path);
	infer_path_clean(p);
	/* a unix socket the learning sandbox refused: a service outside it, never granted */
	if (e->op == TRACE_CONNECT && e->refused)
		return own_path(p) ? 0 : sock_add(f, p, e->comm);
	if (own_path(p) || (infer_within(p, SCRATCH) && !writes && infer_made_here(c, p)))
		return 0;
	if ((store = infer_cred_of(c, p)))
		return cred_add(f, p, store, e->comm);
	if (infer_within_any(p, c->o->base_dirs) || infer_equal_any(p, c->o->base_files)) {
		if (writes)
			infer_warn(
			    c,
			    "not granted: %s %s lies in the runtime base, which every sandbox "
			    "sees read-only",
			    trace_op_name(e->op), p);
		return 0;
	}
	for (size_t i = 0; c->o->protect && c->o->protect[i]; i++)
		if (infer_within(p, c->o->protect[i])) {
			infer_warn(c, "not granted: %s %s is Warden's own (%s)",
				   trace_op_name(e->op), p, c->o->protect[i]);
			return 0;
		}
	if (!writes) {
		if (!infer_grantable_folder(c, p) && e->op != TRACE_READ && e->op != TRACE_EXEC &&
		    e->op != TRACE_CONNECT)
			return 0; /* a stat of a folder that holds grants: the tree answers it */
		return infer_leaves_add(&f->read, p);
	}
	/* a write: the file itself when it was only written, a folder the program made and then
	 * used itself, else the folder it changed */
	if (e->op == TRACE_WRITE && infer_exists(c, p))
		return infer_leaves_add(&f->write, p);
	if (e->op == TRACE_CREATE && infer_holds_events(c, p) && infer_grantable_folder(c, p))
		return infer_leaves_add(&f->write, p);
	infer_parent_of(p, dir, sizeof(dir));
	if (!infer_grantable_folder(c, dir) || infer_within_any(dir, c->o->base_dirs)) {
		infer_warn(
		    c,
		    "not granted: %s %s needs the whole of %s writable (grant a folder of its "
		    "own for it, e.g. by an option of the program)",
		    trace_op_name(e->op), p, dir);
		return 0;
	}
	return infer_leaves_add(&f->write, dir);
}

/* a write grant that is not there now: the nearest folder up whose parent is (the policy
 * accepts a missing write grant whose parent exists, and the launcher makes it) */
static void write_leaf_settle(struct infer_ctx *c, struct leaf *l)
{
	char parent[PATH_MAX];

	for (;;) {
		infer_parent_of(l->path, parent, sizeof(parent));
		if (infer_exists(c, parent))
			return;
		if (!infer_grantable_folder(c, parent)) {
			infer_warn(
			    c, "not granted: the write grant %s is missing and so is its parent",
			    l->path);
			l->dead = true;
			return;
		}
		snprintf(l->path, strlen(l->path) + 1, "%s", parent);
	}
}

int infer_emit_files(struct infer_ctx *c, struct wd_buf *b)
{
	struct files f = {0};
	char shown[PATH_MAX];
	int rc = 0;
	bool any_r = false, any_w = false;

	rc = infer_sorted_paths(c);
	if (!rc)
		rc = infer_socket_paths(c);
	for (size_t i = 0; !rc && i < c->t->nfiles; i++)
		rc = file_event(c, &f, &c->t->files[i]);
	if (!rc)
		rc = infer_fold(c, &f.write);
	for (size_t i = 0; !rc && i < f.write.n; i++)
		if (!f.write.v[i].dead)
			write_leaf_settle(c, &f.write.v[i]);
	if (!rc) {
		infer_leaves_drop_covered(&f.write, &f.write);
		infer_leaves_drop_covered(&f.read, &f.write);
		rc = infer_fold(c, &f.read);
	}
	for (size_t i = 0; !rc && i < f.read.n; i++) {
		if (!f.read.v[i].dead && !infer_exists(c, f.read.v[i].path)) {
			infer_warn(c,
				   "not granted: %s was read during the trace and is not there now",
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
	/* only commented entries (refused sockets, credential stores): no key with nothing below */
	wd_buf_puts(b, any_r || any_w ? "filesystem:\n" : "# filesystem:\n");
	for (int w = 0; w < 2; w++) {
		struct leaves *l = w ? &f.write : &f.read;

		if (!(w ? any_w : any_r))
			continue;
		wd_buf_puts(b, w ? "  write:\n" : "  read:\n");
		for (size_t i = 0; i < l->n; i++) {
			if (l->v[i].dead)
				continue;
			infer_shown_path(c, l->v[i].path, shown, sizeof(shown));
			/* a write grant of a folder (it holds what the program made or changed)
			 * says so with a trailing `/`: when it is missing at run time, the run
			 * makes a folder of it, never an empty file of that name, or the reverse */
			if (w && infer_holds_events(c, l->v[i].path) &&
			    shown[strlen(shown) - 1] != '/' && strlen(shown) + 1 < sizeof(shown))
				strcat(shown, "/");
			wd_buf_puts(b, "    - ");
			infer_yaml_quote(b, shown);
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

			infer_shown_path(c, f.cred[i].path, shown, sizeof(shown));
			infer_shown_path(c, f.cred[i].store, store, sizeof(store));
			wd_buf_puts(b, "    # - { path: ");
			infer_yaml_quote(b, shown);
			wd_buf_printf(
			    b, ", sensitive: true }   # read by %s (credential store %s)\n",
			    infer_said(&e1, f.cred[i].comm[0] ? f.cred[i].comm : "the program"),
			    infer_said(&e2, store));
			wd_buf_free(&e1);
			wd_buf_free(&e2);
			infer_warn(c, "a credential store was read and is not granted: %s (by %s)",
				   f.cred[i].path,
				   f.cred[i].comm[0] ? f.cred[i].comm : "the program");
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

			infer_shown_path(c, f.sock[i].path, shown, sizeof(shown));
			wd_buf_puts(b, "    # - ");
			infer_yaml_quote(b, shown);
			wd_buf_printf(
			    b,
			    "   # a unix socket %s tried to connect to: refused in the "
			    "trace, not granted\n",
			    infer_said(&e1, f.sock[i].comm[0] ? f.sock[i].comm : "the program"));
			wd_buf_free(&e1);
			infer_warn(
			    c,
			    "a unix socket was refused in the trace and is not granted: %s (by "
			    "%s); name it with warden trace --allow-socket if the program must "
			    "reach its service",
			    f.sock[i].path, f.sock[i].comm[0] ? f.sock[i].comm : "the program");
		}
	}
out:
	infer_leaves_free(&f.read);
	infer_leaves_free(&f.write);
	for (size_t i = 0; i < f.ncred; i++)
		free(f.cred[i].path);
	free(f.cred);
	for (size_t i = 0; i < f.nsock; i++)
		free(f.sock[i].path);
	free(f.sock);
	return rc;
}

/* validate.c - the filesystem side of a policy: grants made absolute, `~`
 * expanded, canonicalised, and checked against `/`, the runtime base, the
 * credential stores (credstores.c) and the folders the caller protects (the audit log's).
 *
 * Theory of operation, per grant:
 *   1. expand: `~` -> home, relative -> the policy file's folder;
 *   2. lexical form: `.`/`..`/`//` folded without touching the disk;
 *   3. real form: resolved component by component (walk()). Every symbolic
 *      link met on the way must be one only root can have put there (owned
 *      by root, in a folder that is root's and not writable by group or
 *      others, or sticky): a link a sandboxed program could have planted in a
 *      write grant is never followed, so one run cannot widen the next run's
 *      grants. A missing read grant is an error; a missing write grant whose
 *      parent exists is accepted with a warning and marked `missing` (the
 *      launcher creates it, step 7); otherwise an error;
 *   4. real != lexical -> a warning (a trusted symlink is in the way);
 *   5. refusals: `/`; a write grant on or inside the runtime base; a grant on
 *      or inside a credential store unless `sensitive: true`; a grant on or
 *      inside a protected folder, or a write grant that contains one;
 *   6. a grant that contains credential stores (credstores.c) is allowed;
 *      unless it is sensitive, or a sensitive grant holds the store too (the
 *      person opted that one back in), each store's real path is added to
 *      @mask (the launcher hides it), and ONE warning lists them; a read grant
 *      that contains a protected folder gets it masked the same way,
 *      sensitive or not.
 *   7. a missing write grant is made as an empty file or as a folder
 *      (policy_grant_make_file()): said in a warning, with the two spellings
 *      when the name does not say which; an existing path must be what the
 *      grant's `type:` or trailing `/` says.
 * The launcher binds the real path, opened without following any link
 * (openat2 RESOLVE_NO_SYMLINKS), so a link planted after this check fails the
 * run instead of redirecting it.
 */
#include "policy/policy_internal.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Folders the sandbox sees read-only as its runtime base; never writable. */
static const char *const runtime_base[] = {"/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc"};

/* @path equals @dir or lies below it */
static bool path_within(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (!strcmp(dir, "/"))
		return true;
	/* NOLINTNEXTLINE(clang-analyzer-core.UndefinedBinaryOperatorResult): strncmp read n */
	return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

/* "~/x" -> home/x, "x" -> base/x, then folded. On Windows a drive's path, "C:\\x" or "C:/x",
 * is taken as "/C:/x" (policy/'s paths are '/'-rooted; warden.exe hands home and the policy's
 * folder in that form, and common/win.c's stat calls take it) and every backslash is a '/'.
 * Return: 0 or -ENAMETOOLONG. */
static int expand(const char *written, const char *home, const char *base, char *out, size_t outlen)
{
	int n;

#ifdef _WIN32
	if (((written[0] >= 'A' && written[0] <= 'Z') ||
	     (written[0] >= 'a' && written[0] <= 'z')) &&
	    written[1] == ':' && (written[2] == '\\' || written[2] == '/'))
		n = snprintf(out, outlen, "/%s", written);
	else if (written[0] == '~')
#else
	if (written[0] == '~')
#endif
		n = snprintf(out, outlen, "%s/%s", home, written[1] ? written + 2 : "");
	else if (written[0] == '/')
		n = snprintf(out, outlen, "%s", written);
	else
		n = snprintf(out, outlen, "%s/%s", base, written);
	if (n < 0 || (size_t)n >= outlen)
		return -ENAMETOOLONG;
#ifdef _WIN32
	for (char *c = out; *c; c++)
		if (*c == '\\')
			*c = '/';
#endif
	/* absolute (home and base are, setup()) and short enough (above): the fold cannot fail */
	return wd_path_fold(out, out, outlen) ? -ENAMETOOLONG : 0;
}

struct vctx {
	struct wd_policy *p;
	struct policy_diags *d;
	const char *home;
	char base[PATH_MAX];
	/* the credential stores (credstores.c); each: its lexical path and (when it exists) its
	 * real path; whether a sensitive grant holds it (it is not hidden then); and, for the
	 * grant being checked, whether it hides it or could create it */
	const char *const *stores;
	size_t nstores;
	char (*store_lex)[PATH_MAX];
	char (*store_real)[PATH_MAX];
	bool *opted;
	bool *hides;
	bool *creates;
	/* the caller's protected folders: lexical and real (when they exist) */
	const struct policy_protect *prot;
	size_t nprot;
	char (*prot_lex)[PATH_MAX];
	char (*prot_real)[PATH_MAX];
	int oom;
};

static void add_mask(struct vctx *v, const char *path)
{
	char **m;

	for (size_t i = 0; i < v->p->nmask; i++)
		if (!strcmp(v->p->mask[i], path))
			return;
	m = realloc(v->p->mask, (v->p->nmask + 1) * sizeof(*m));
	if (!m) {
		v->oom = 1;
		return;
	}
	v->p->mask = m;
	m[v->p->nmask] = strdup(path);
	if (!m[v->p->nmask]) {
		v->oom = 1;
		return;
	}
	v->p->nmask++;
}

/* Where walk() stopped, for the messages. */
struct walk_info {
	char link[PATH_MAX];   /* an untrusted link: its path */
	char target[PATH_MAX]; /* ... and what it points to */
	uid_t owner;	       /* ... and its owner */
	bool folder_open;      /* ... (its folder is writable by others than root) */
	char at[PATH_MAX];     /* the component that does not exist or failed */
};

/*
 * May the symbolic link @link (lstat @st) be followed? Only when nobody but root can have
 * made or replaced it: the link is root's, and so is its folder @dir, which nobody else can
 * write to (or which is sticky, so nobody else can replace root's entries).
 */
static bool link_trusted(const char *dir, const struct stat *st, bool *ret_folder_open)
{
	struct stat ds;

	*ret_folder_open = false;
	if (st->st_uid != 0)
		return false;
	if (lstat(dir[0] ? dir : "/", &ds) < 0 || ds.st_uid != 0) {
		*ret_folder_open = true;
		return false;
	}
	if ((ds.st_mode & (S_IWGRP | S_IWOTH)) && !(ds.st_mode & S_ISVTX)) {
		*ret_folder_open = true;
		return false;
	}
	return true;
}

/*
 * Resolve the absolute path @lex to @real (PATH_MAX) component by component, the way
 * realpath(3) does, checking each symbolic link with link_trusted().
 * Return: 0; 1 when only the last component does not exist (@real is where it would be);
 * -EPERM for an untrusted link (@wi says which); -ENOENT (@wi->at), -ELOOP, -ENOTDIR,
 * -ENAMETOOLONG or another lstat/readlink error.
 */
static int walk(const char *lex, char *real, struct walk_info *wi)
{
	char rest[PATH_MAX], out[PATH_MAX], cand[PATH_MAX], target[PATH_MAX];
	unsigned links = 0;
	size_t olen = 0;
	struct stat st;

	if (snprintf(rest, sizeof(rest), "%s", lex) >= (int)sizeof(rest))
		return -ENAMETOOLONG;
	out[0] = '\0'; /* "" is "/" */
	for (char *p = rest;;) {
		char *comp, *next;
		ssize_t n;
		int len;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		comp = p;
		next = strchr(p, '/');
		if (next)
			*next++ = '\0';
		else
			next = p + strlen(p);
		p = next;
		if (!strcmp(comp, "."))
			continue;
		if (!strcmp(comp, "..")) {
			while (olen && out[olen - 1] != '/')
				olen--;
			if (olen)
				olen--;
			out[olen] = '\0';
			continue;
		}
		len = snprintf(cand, sizeof(cand), "%s/%s", out, comp);
		if (len < 0 || (size_t)len >= sizeof(cand))
			return -ENAMETOOLONG;
		if (lstat(cand, &st) < 0) {
			int e = errno;

			snprintf(wi->at, sizeof(wi->at), "%s", cand);
			while (*p == '/')
				p++;
			if (e == ENOENT && !*p) {
				snprintf(real, PATH_MAX, "%s", cand);
				return 1;
			}
			return -e;
		}
		if (S_ISLNK(st.st_mode)) {
			char tail[PATH_MAX];

			n = readlink(cand, target, sizeof(target) - 1);
			if (n < 0)
				return -errno;
			target[n] = '\0';
			if (!link_trusted(out, &st, &wi->folder_open)) {
				snprintf(wi->link, sizeof(wi->link), "%s", cand);
				snprintf(wi->target, sizeof(wi->target), "%s", target);
				wi->owner = st.st_uid;
				return -EPERM;
			}
			if (++links > 40)
				return -ELOOP;
			/* the target, then what was left after the link */
			snprintf(tail, sizeof(tail), "%s", p);
			len = snprintf(rest, sizeof(rest), "%s/%s", target, tail);
			if (len < 0 || (size_t)len >= sizeof(rest))
				return -ENAMETOOLONG;
			p = rest;
			if (target[0] == '/') {
				olen = 0;
				out[0] = '\0';
			}
			continue;
		}
		while (*p == '/')
			p++;
		if (!S_ISDIR(st.st_mode) && *p) {
			snprintf(wi->at, sizeof(wi->at), "%s", cand);
			return -ENOTDIR;
		}
		memcpy(out, cand, (size_t)len + 1);
		olen = (size_t)len;
	}
	snprintf(real, PATH_MAX, "%s", olen ? out : "/");
	return 0;
}

/* Resolve @g to its real path (step 3). Return: 0, or -EINVAL after reporting. */
static int resolve(struct vctx *v, struct policy_grant *g, const char *what, bool write,
		   const char *lex, char *real)
{
	struct walk_info wi = {0};
	int r = walk(lex, real, &wi);

	if (r == 0)
		return 0;
	if (r == -EPERM) {
		char whose[64];

		if (wi.owner)
			snprintf(whose, sizeof(whose), "owned by uid %u", (unsigned)wi.owner);
		else
			snprintf(whose, sizeof(whose), "in a folder others than root can change");
		policy_diag_add(
		    v->d, POLICY_DIAG_ERROR, g->line, g->col,
		    "%s: `%s` passes through the symbolic link %s (-> %s), %s: a link that "
		    "someone other than root could have made (a sandboxed program, for one) is "
		    "never followed; expected the real path, or a link owned by root in a "
		    "folder only root can change",
		    what, g->path, wi.link, wi.target, whose);
		return -EINVAL;
	}
	if (r == 1 && write) {
		g->missing = true;
		return 0;
	}
	if (r == 1 || r == -ENOENT) {
		policy_diag_add(
		    v->d, POLICY_DIAG_ERROR, g->line, g->col,
		    r == 1 ? "%s: `%s` (%s) does not exist; expected an existing path"
			   : "%s: `%s` (%s) does not exist and neither does its parent folder %s; "
			     "expected an existing folder",
		    what, g->path, lex, wi.at);
		return -EINVAL;
	}
	policy_diag_add(v->d, POLICY_DIAG_ERROR, g->line, g->col,
			"%s: `%s` (%s): %s%s%s; expected an "
			"existing path",
			what, g->path, lex, wi.at[0] ? wi.at : "", wi.at[0] ? ": " : "",
			strerror(-r));
	return -EINVAL;
}

/* @real (it exists) is what the grant's `type:` or trailing `/` says.
 * Return: 0, or -EINVAL after reporting. */
static int check_type(struct vctx *v, const struct policy_grant *g, const char *what,
		      const char *real)
{
	size_t n = strlen(g->path);
	bool slash = n > 1 && g->path[n - 1] == '/';
	struct stat st;

	if ((g->type == POLICY_GRANT_ANY && !slash) || stat(real, &st) < 0)
		return 0;
	if (g->type == POLICY_GRANT_FILE && !S_ISREG(st.st_mode)) {
		policy_diag_add(v->d, POLICY_DIAG_ERROR, g->line, g->col,
				"%s: `%s` (%s) is not a regular file; the grant says `type: "
				"file`",
				what, g->path, real);
		return -EINVAL;
	}
	if ((g->type == POLICY_GRANT_DIR || (slash && g->type == POLICY_GRANT_ANY)) &&
	    !S_ISDIR(st.st_mode)) {
		policy_diag_add(v->d, POLICY_DIAG_ERROR, g->line, g->col,
				"%s: `%s` (%s) is not a folder; the grant says %s", what, g->path,
				real, slash ? "so with its trailing `/`" : "`type: dir`");
		return -EINVAL;
	}
	return 0;
}

bool policy_grant_make_file(const char *written, enum policy_grant_type type, bool *ret_sure)
{
	size_t n = strlen(written);
	const char *last, *dot;

	*ret_sure = true;
	if (type != POLICY_GRANT_ANY)
		return type == POLICY_GRANT_FILE;
	if (n && written[n - 1] == '/')
		return false;
	last = strrchr(written, '/');
	last = last ? last + 1 : written;
	dot = strchr(last + (last[0] != '\0'), '.');
	/* `name.ext`: a dot after the first character, and something after it */
	if (dot && dot[1] && strcmp(last, "..") != 0)
		return true;
	*ret_sure = false;
	return false;
}

/* A write grant that does not exist yet: what will be made, said (step 3). */
static void say_missing(struct vctx *v, struct policy_grant *g, const char *what, const char *real)
{
	bool sure;

	g->make_file = policy_grant_make_file(g->path, g->type, &sure);
	if (sure) {
		policy_diag_add(v->d, POLICY_DIAG_WARNING, g->line, g->col,
				"%s: `%s` does not exist yet; it will be created as an empty %s "
				"(%s)",
				what, g->path, g->make_file ? "file" : "folder", real);
		return;
	}
	policy_diag_add(v->d, POLICY_DIAG_WARNING, g->line, g->col,
			"%s: `%s` does not exist yet; it will be created as an empty folder (%s): "
			"its name does not say file or folder, so write `%s/` for a folder or "
			"{ path: \"%s\", type: file } for an empty file",
			what, g->path, real, g->path, g->path);
}

/*
 * The names of the stores @on marks, ", "-separated, appended to @out as far as @room bytes
 * allow, then "and N more".
 */
static void store_list(const struct vctx *v, const bool *on, char *out, size_t room)
{
	size_t len = strlen(out), shown = 0, total = 0;

	for (size_t i = 0; i < v->nstores; i++)
		total += on[i];
	for (size_t i = 0; i < v->nstores; i++) {
		size_t need = strlen(v->stores[i]) + (shown ? 2 : 0);

		if (!on[i])
			continue;
		/* keep room for ", and NNN more" */
		if (len + need + 16 >= room && shown + 1 < total)
			break;
		if (len + need >= room)
			break;
		len += (size_t)snprintf(out + len, room - len, "%s%s", shown ? ", " : "",
					v->stores[i]);
		shown++;
	}
	if (shown < total)
		snprintf(out + len, room - len, ", and %zu more", total - shown);
}

/*
 * Step 5 and 6 for the credential stores: a grant on or inside one is refused unless
 * sensitive; one that holds some gets them hidden (but those a sensitive grant holds), said
 * in ONE warning that lists them; a write grant that holds where some would be says so in one
 * more. Return: 0, or -EINVAL after reporting.
 */
static int check_stores(struct vctx *v, const struct policy_grant *g, const char *what,
			const char *real, bool write)
{
	size_t nhides = 0, ncreates = 0;
	char head[256], list[512];

	for (size_t i = 0; i < v->nstores; i++) {
		const char *slex = v->store_lex[i], *sreal = v->store_real[i];
		bool on = path_within(real, slex) || (sreal[0] && path_within(real, sreal));
		bool holds = path_within(slex, real) || (sreal[0] && path_within(sreal, real));

		v->hides[i] = v->creates[i] = false;
		if (!slex[0] || g->sensitive)
			continue;
		if (on) {
			policy_diag_add(
			    v->d, POLICY_DIAG_ERROR, g->line, g->col,
			    "%s: `%s` (%s) is the "
			    "credential store %s or lies inside it; write { path: \"%s\", "
			    "sensitive: true } if the program really needs it",
			    what, g->path, real, v->stores[i], g->path);
			return -EINVAL;
		}
		if (holds && !sreal[0] && write) {
			v->creates[i] = true;
			ncreates++;
		} else if (holds && sreal[0] && !v->opted[i]) {
			add_mask(v, sreal);
			v->hides[i] = true;
			nhides++;
		}
	}
	if (nhides) {
		snprintf(head, sizeof(head),
			 "%s: `%s` contains %zu credential store%s, which will be hidden in the "
			 "sandbox: ",
			 what, g->path, nhides, nhides == 1 ? "" : "s");
		list[0] = '\0';
		store_list(v, v->hides, list,
			   sizeof(((struct policy_diag *)0)->msg) - strlen(head) - 60);
		policy_diag_add(v->d, POLICY_DIAG_WARNING, g->line, g->col,
				"%s%s (to expose one, add { path: STORE, sensitive: true })", head,
				list);
	}
	if (ncreates) {
		snprintf(
		    head, sizeof(head),
		    "%s: `%s` contains where %zu credential store%s would be; the program could "
		    "create %s: ",
		    what, g->path, ncreates, ncreates == 1 ? "" : "s",
		    ncreates == 1 ? "it" : "them");
		list[0] = '\0';
		store_list(v, v->creates, list,
			   sizeof(((struct policy_diag *)0)->msg) - strlen(head) - 1);
		policy_diag_add(v->d, POLICY_DIAG_WARNING, g->line, g->col, "%s%s", head, list);
	}
	return 0;
}

static void check_grant(struct vctx *v, struct policy_grant *g, bool write)
{
	const char *what = write ? "filesystem.write" : "filesystem.read";
	char lex[PATH_MAX], real[PATH_MAX];

	free(g->real);
	g->real = NULL;
	g->missing = false;
	if (expand(g->path, v->home, v->base, lex, sizeof(lex))) {
		policy_diag_add(v->d, POLICY_DIAG_ERROR, g->line, g->col, "%s: `%s` is too long",
				what, g->path);
		return;
	}
	if (resolve(v, g, what, write, lex, real))
		return;
	if (!g->missing && check_type(v, g, what, real))
		return;
	if (strcmp(lex, real) && !g->missing)
		policy_diag_add(v->d, POLICY_DIAG_WARNING, g->line, g->col,
				"%s: `%s` resolves to %s "
				"(through a symbolic link); the real path is what is granted",
				what, g->path, real);
	if (!strcmp(real, "/")) {
		policy_diag_add(v->d, POLICY_DIAG_ERROR, g->line, g->col,
				"%s: `%s` grants the whole "
				"filesystem (/); expected a narrower folder",
				what, g->path);
		return;
	}
	for (size_t i = 0; write && i < WD_ARRAY_SIZE(runtime_base); i++) {
		if (path_within(real, runtime_base[i]) || path_within(lex, runtime_base[i])) {
			policy_diag_add(
			    v->d, POLICY_DIAG_ERROR, g->line, g->col,
			    "%s: `%s` (%s) is inside "
			    "the runtime base %s, which stays read-only; expected a folder "
			    "outside /usr, /lib, /lib64, /bin, /sbin and /etc",
			    what, g->path, real, runtime_base[i]);
			return;
		}
	}
	if (check_stores(v, g, what, real, write))
		return;
	for (size_t i = 0; i < v->nprot; i++) {
		const char *plex = v->prot_lex[i], *preal = v->prot_real[i];
		const char *pp = preal[0] ? preal : plex;
		bool on = path_within(real, plex) || (preal[0] && path_within(real, preal));
		bool holds = path_within(plex, real) || (preal[0] && path_within(preal, real));
		char folder[PATH_MAX], *slash;

		if (on || (holds && write)) {
			policy_diag_add(
			    v->d, POLICY_DIAG_ERROR, g->line, g->col,
			    "%s: `%s` (%s) %s %s: the program could change or remove it; "
			    "expected a grant that %s it",
			    what, g->path, real, on ? "lies in" : "holds", v->prot[i].what,
			    on ? "lies outside" : "does not hold");
			return;
		}
		if (!holds)
			continue;
		/* a read grant: hide a protected file's whole folder when the grant holds more
		 * than that folder (rotated logs are its neighbours), else the file alone */
		snprintf(folder, sizeof(folder), "%s", pp);
		slash = strrchr(folder, '/');
		if (!v->prot[i].folder && slash && slash != folder) {
			*slash = '\0';
			if (strcmp(folder, real) && path_within(folder, real))
				pp = folder;
		}
		add_mask(v, pp);
		policy_diag_add(v->d, POLICY_DIAG_WARNING, g->line, g->col,
				"%s: `%s` holds %s; %s will be hidden in the sandbox", what,
				g->path, v->prot[i].what, pp);
	}
	if (g->missing)
		say_missing(v, g, what, real);
	g->real = strdup(real);
	if (!g->real)
		v->oom = 1;
}

static int setup_protected(struct vctx *v, const struct policy_ctx *ctx)
{
	if (!ctx || !ctx->nprotect)
		return 0;
	v->prot = ctx->protect;
	v->nprot = ctx->nprotect;
	v->prot_lex = calloc(v->nprot, sizeof(*v->prot_lex));
	v->prot_real = calloc(v->nprot, sizeof(*v->prot_real));
	if (!v->prot_lex || !v->prot_real)
		return -ENOMEM;
	for (size_t i = 0; i < v->nprot; i++) {
		const char *path = v->prot[i].path;
		char parent[PATH_MAX], *slash;

		if (!path || path[0] != '/' || strlen(path) >= PATH_MAX)
			return -EINVAL;
		snprintf(v->prot_lex[i], PATH_MAX, "%s", path);
		if (wd_path_fold(v->prot_lex[i], v->prot_lex[i], PATH_MAX))
			return -EINVAL;
		if (realpath(v->prot_lex[i], v->prot_real[i]))
			continue;
		/* not there yet (a log made at the first run): where it will be */
		v->prot_real[i][0] = '\0';
		snprintf(parent, sizeof(parent), "%s", v->prot_lex[i]);
		slash = strrchr(parent, '/');
		if (!slash || slash == parent)
			continue;
		*slash = '\0';
		if (realpath(parent, v->prot_real[i]) &&
		    strlen(v->prot_real[i]) + strlen(slash + 1) + 2 <= PATH_MAX) {
			strcat(v->prot_real[i], "/");
			strcat(v->prot_real[i], slash + 1);
		} else {
			v->prot_real[i][0] = '\0';
		}
	}
	return 0;
}

static int setup(struct vctx *v, const char *home)
{
	char cwd[PATH_MAX];
	const char *file = v->p->file ? v->p->file : "";
	const char *slash = strrchr(file, '/');
	int n;

	if (!home || home[0] != '/')
		home = getenv("HOME");
	if (!home || home[0] != '/') {
		struct passwd *pw = getpwuid(getuid());

		home = pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
	}
	if (!home) {
		policy_diag_add(
		    v->d, POLICY_DIAG_ERROR, 0, 0,
		    "cannot find the home folder (set HOME) to check the credential stores");
		return -EINVAL;
	}
	v->home = home;
	if (slash && slash == file)
		n = snprintf(v->base, sizeof(v->base), "/");
	else if (slash && file[0] == '/')
		n = snprintf(v->base, sizeof(v->base), "%.*s", (int)(slash - file), file);
	else {
		if (!getcwd(cwd, sizeof(cwd))) {
			n = -errno;
			policy_diag_add(v->d, POLICY_DIAG_ERROR, 0, 0,
					"cannot resolve relative paths: "
					"the current folder is unknown (%s)",
					strerror(-n));
			return n;
		}
		if (slash)
			n = snprintf(v->base, sizeof(v->base), "%s/%.*s", cwd, (int)(slash - file),
				     file);
		else
			n = snprintf(v->base, sizeof(v->base), "%s", cwd);
	}
	if (n < 0 || (size_t)n >= sizeof(v->base))
		return -ENAMETOOLONG;
	if (wd_path_fold(v->base, v->base, sizeof(v->base)))
		return -ENAMETOOLONG;
	v->stores = policy_credential_stores(&v->nstores);
	v->store_lex = calloc(v->nstores, sizeof(*v->store_lex));
	v->store_real = calloc(v->nstores, sizeof(*v->store_real));
	v->opted = calloc(v->nstores, sizeof(*v->opted));
	v->hides = calloc(v->nstores, sizeof(*v->hides));
	v->creates = calloc(v->nstores, sizeof(*v->creates));
	if (!v->store_lex || !v->store_real || !v->opted || !v->hides || !v->creates)
		return -ENOMEM;
	for (size_t i = 0; i < v->nstores; i++) {
		if (expand(v->stores[i], home, "/", v->store_lex[i], PATH_MAX))
			v->store_lex[i][0] = '\0';
		if (!v->store_lex[i][0] || !realpath(v->store_lex[i], v->store_real[i]))
			v->store_real[i][0] = '\0';
	}
	return 0;
}

/* The stores a `sensitive: true` grant holds (or is): the person opted them back in, so no
 * other grant hides them. The grant's own checks come later (check_grant()). */
static void setup_optin(struct vctx *v, const struct policy_grant *g, size_t n)
{
	char lex[PATH_MAX], real[PATH_MAX];

	for (size_t k = 0; k < n; k++) {
		struct walk_info wi = {0};
		int r;

		if (!g[k].sensitive || expand(g[k].path, v->home, v->base, lex, sizeof(lex)))
			continue;
		r = walk(lex, real, &wi);
		if (r < 0)
			continue;
		for (size_t i = 0; i < v->nstores; i++) {
			const char *slex = v->store_lex[i], *sreal = v->store_real[i];

			if (!slex[0])
				continue;
			if (path_within(slex, lex) || path_within(slex, real) ||
			    (sreal[0] && (path_within(sreal, real) || path_within(sreal, lex))))
				v->opted[i] = true;
		}
	}
}

/* HOME passed through while a read grant shows the whole home folder */
static void check_env(struct vctx *v)
{
	char home_real[PATH_MAX];

	if (!realpath(v->home, home_real))
		snprintf(home_real, sizeof(home_real), "%s", v->home);
	for (size_t i = 0; i < v->p->nenv_allow; i++) {
		if (strcmp(v->p->env_allow[i], "HOME"))
			continue;
		for (size_t k = 0; k < v->p->nread; k++) {
			const struct policy_grant *g = &v->p->read[k];

			if (g->real && path_within(home_real, g->real))
				policy_diag_add(
				    v->d, POLICY_DIAG_WARNING, g->line, g->col,
				    "filesystem.read: `%s` covers the home folder and env.allow "
				    "passes HOME: the program can find every dotfile there",
				    g->path);
		}
	}
}

int policy_validate(struct wd_policy *p, const struct policy_ctx *ctx, struct policy_diags *d)
{
	const char *home = ctx ? ctx->home : NULL;
	struct vctx *v = calloc(1, sizeof(*v));
	size_t errors = d->errors;
	int ret;

	if (!v)
		return -ENOMEM;
	v->p = p;
	v->d = d;
	for (size_t i = 0; i < p->nmask; i++)
		free(p->mask[i]);
	free(p->mask);
	p->mask = NULL;
	p->nmask = 0;
	p->validated = false;
	if (!d->file[0])
		snprintf(d->file, sizeof(d->file), "%s", p->file ? p->file : "<input>");
	ret = setup(v, home);
	if (!ret)
		ret = setup_protected(v, ctx);
	if (ret)
		goto out;
	setup_optin(v, p->read, p->nread);
	setup_optin(v, p->write, p->nwrite);
	for (size_t i = 0; i < p->nread; i++)
		check_grant(v, &p->read[i], false);
	for (size_t i = 0; i < p->nwrite; i++)
		check_grant(v, &p->write[i], true);
	check_env(v);
	ret = v->oom ? -ENOMEM : (d->errors > errors ? -EINVAL : 0);
	p->validated = ret == 0;
out:
	free(v->store_lex);
	free(v->store_real);
	free(v->opted);
	free(v->hides);
	free(v->creates);
	free(v->prot_lex);
	free(v->prot_real);
	free(v);
	return ret;
}

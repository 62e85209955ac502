/* validate.c - the filesystem side of a policy: grants made absolute, `~`
 * expanded, canonicalised, and checked against `/`, the runtime base and the
 * credential stores.
 *
 * Theory of operation, per grant:
 *   1. expand: `~` -> home, relative -> the policy file's folder;
 *   2. lexical form: `.`/`..`/`//` folded without touching the disk;
 *   3. real form: realpath(3). A missing read grant is an error; a missing
 *      write grant whose parent exists is accepted with a warning and marked
 *      `missing` (the launcher creates it); otherwise an error;
 *   4. real != lexical -> a warning (a symlink is in the way);
 *   5. refusals: `/`; a write grant on or inside the runtime base; a grant on
 *      or inside a credential store unless `sensitive: true`;
 *   6. a grant that contains a credential store is allowed, unless it is
 *      sensitive the store's real path is added to @mask (the launcher hides
 *      it) and a warning is reported.
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

/* Credential stores: under the home folder ("~/...") or absolute. */
static const char *const cred_stores[] = {
    "~/.ssh",
    "~/.gnupg",
    "~/.aws",
    "~/.azure",
    "~/.config/gcloud",
    "~/.config/gh",
    "~/.kube",
    "~/.docker",
    "~/.netrc",
    "~/.git-credentials",
    "~/.npmrc",
    "~/.pypirc",
    "~/.password-store",
    "~/.local/share/keyrings",
    "/var/run/docker.sock",
    "/run/docker.sock",
    "/run/containerd/containerd.sock",
    "/run/podman/podman.sock",
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/sudoers",
    "/etc/sudoers.d",
};

/* Folders the sandbox sees read-only as its runtime base; never writable. */
static const char *const runtime_base[] = {"/usr", "/lib", "/lib64", "/bin", "/sbin", "/etc"};

/* @path equals @dir or lies below it */
static bool path_within(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (!strcmp(dir, "/"))
		return true;
	return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

/* Fold "//", "/./", "/../" and a trailing "/" of an absolute path, in place. */
static void lexical_clean(char *path)
{
	char *out = path, *in = path;

	while (*in) {
		while (*in == '/')
			in++;
		if (!*in)
			break;
		if (in[0] == '.' && (in[1] == '/' || !in[1])) {
			in += 1;
			continue;
		}
		if (in[0] == '.' && in[1] == '.' && (in[2] == '/' || !in[2])) {
			in += 2;
			while (out > path && *--out != '/')
				;
			continue;
		}
		*out++ = '/';
		while (*in && *in != '/')
			*out++ = *in++;
	}
	if (out == path)
		*out++ = '/';
	*out = '\0';
}

/* "~/x" -> home/x, "x" -> base/x, then folded. Return: 0 or -ENAMETOOLONG. */
static int expand(const char *written, const char *home, const char *base, char *out, size_t outlen)
{
	int n;

	if (written[0] == '~')
		n = snprintf(out, outlen, "%s/%s", home, written[1] ? written + 2 : "");
	else if (written[0] == '/')
		n = snprintf(out, outlen, "%s", written);
	else
		n = snprintf(out, outlen, "%s/%s", base, written);
	if (n < 0 || (size_t)n >= outlen)
		return -ENAMETOOLONG;
	lexical_clean(out);
	return 0;
}

struct vctx {
	struct wd_policy *p;
	struct policy_diags *d;
	const char *home;
	char base[PATH_MAX];
	/* each store: its lexical path and (when it exists) its real path */
	char store_lex[WD_ARRAY_SIZE(cred_stores)][PATH_MAX];
	char store_real[WD_ARRAY_SIZE(cred_stores)][PATH_MAX];
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

/* Resolve @g to its real path (step 3). Return: 0, or -EINVAL after reporting. */
static int resolve(struct vctx *v, struct policy_grant *g, const char *what, bool write,
		   const char *lex, char *real)
{
	char parent[PATH_MAX], *slash;
	int err;

	if (realpath(lex, real))
		return 0;
	err = errno;
	if (err != ENOENT || !write) {
		diag_add(v->d, POLICY_DIAG_ERROR, g->line, g->col,
			 "%s: `%s` (%s) %s; expected an "
			 "existing path",
			 what, g->path, lex, err == ENOENT ? "does not exist" : strerror(err));
		return -EINVAL;
	}
	snprintf(parent, sizeof(parent), "%s", lex);
	slash = strrchr(parent, '/');
	if (!slash || !slash[1]) {
		diag_add(v->d, POLICY_DIAG_ERROR, g->line, g->col, "%s: `%s` does not exist", what,
			 g->path);
		return -EINVAL;
	}
	*slash = '\0';
	if (!realpath(parent[0] ? parent : "/", real)) {
		diag_add(v->d, POLICY_DIAG_ERROR, g->line, g->col,
			 "%s: `%s` does not exist and "
			 "neither does its parent folder %s; expected an existing folder",
			 what, g->path, parent[0] ? parent : "/");
		return -EINVAL;
	}
	if (strlen(real) + strlen(slash + 1) + 2 > PATH_MAX) {
		diag_add(v->d, POLICY_DIAG_ERROR, g->line, g->col, "%s: `%s` is too long", what,
			 g->path);
		return -EINVAL;
	}
	if (strcmp(real, "/"))
		strcat(real, "/");
	strcat(real, slash + 1);
	g->missing = true;
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
		diag_add(v->d, POLICY_DIAG_ERROR, g->line, g->col, "%s: `%s` is too long", what,
			 g->path);
		return;
	}
	if (resolve(v, g, what, write, lex, real))
		return;
	if (strcmp(lex, real) && !g->missing)
		diag_add(v->d, POLICY_DIAG_WARNING, g->line, g->col,
			 "%s: `%s` resolves to %s "
			 "(through a symbolic link); the real path is what is granted",
			 what, g->path, real);
	if (!strcmp(real, "/")) {
		diag_add(v->d, POLICY_DIAG_ERROR, g->line, g->col,
			 "%s: `%s` grants the whole "
			 "filesystem (/); expected a narrower folder",
			 what, g->path);
		return;
	}
	for (size_t i = 0; write && i < WD_ARRAY_SIZE(runtime_base); i++) {
		if (path_within(real, runtime_base[i]) || path_within(lex, runtime_base[i])) {
			diag_add(v->d, POLICY_DIAG_ERROR, g->line, g->col,
				 "%s: `%s` (%s) is inside "
				 "the runtime base %s, which stays read-only; expected a folder "
				 "outside /usr, /lib, /lib64, /bin, /sbin and /etc",
				 what, g->path, real, runtime_base[i]);
			return;
		}
	}
	for (size_t i = 0; i < WD_ARRAY_SIZE(cred_stores); i++) {
		const char *slex = v->store_lex[i], *sreal = v->store_real[i];
		bool on = path_within(real, slex) || (sreal[0] && path_within(real, sreal));
		bool holds = path_within(slex, real) || (sreal[0] && path_within(sreal, real));

		if (!slex[0] || g->sensitive)
			continue;
		if (on) {
			diag_add(v->d, POLICY_DIAG_ERROR, g->line, g->col,
				 "%s: `%s` (%s) is the "
				 "credential store %s or lies inside it; write { path: \"%s\", "
				 "sensitive: true } if the program really needs it",
				 what, g->path, real, cred_stores[i], g->path);
			return;
		}
		if (holds && !sreal[0] && write) {
			diag_add(v->d, POLICY_DIAG_WARNING, g->line, g->col,
				 "%s: `%s` contains where the credential store %s would be; the "
				 "program could create it",
				 what, g->path, cred_stores[i]);
			continue;
		}
		if (holds && sreal[0]) {
			add_mask(v, sreal);
			diag_add(v->d, POLICY_DIAG_WARNING, g->line, g->col,
				 "%s: `%s` contains the "
				 "credential store %s; it will be hidden in the sandbox (write "
				 "sensitive: true to expose it)",
				 what, g->path, cred_stores[i]);
		}
	}
	if (g->missing)
		diag_add(v->d, POLICY_DIAG_WARNING, g->line, g->col,
			 "%s: `%s` does not exist yet; "
			 "it will be created as an empty folder (%s)",
			 what, g->path, real);
	g->real = strdup(real);
	if (!g->real)
		v->oom = 1;
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
		diag_add(v->d, POLICY_DIAG_ERROR, 0, 0,
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
			diag_add(v->d, POLICY_DIAG_ERROR, 0, 0,
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
	lexical_clean(v->base);
	for (size_t i = 0; i < WD_ARRAY_SIZE(cred_stores); i++) {
		if (expand(cred_stores[i], home, "/", v->store_lex[i], PATH_MAX))
			v->store_lex[i][0] = '\0';
		if (!v->store_lex[i][0] || !realpath(v->store_lex[i], v->store_real[i]))
			v->store_real[i][0] = '\0';
	}
	return 0;
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
				diag_add(
				    v->d, POLICY_DIAG_WARNING, g->line, g->col,
				    "filesystem.read: `%s` covers the home folder and env.allow "
				    "passes HOME: the program can find every dotfile there",
				    g->path);
		}
	}
}

int policy_validate(struct wd_policy *p, const char *home, struct policy_diags *d)
{
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
	if (ret)
		goto out;
	for (size_t i = 0; i < p->nread; i++)
		check_grant(v, &p->read[i], false);
	for (size_t i = 0; i < p->nwrite; i++)
		check_grant(v, &p->write[i], true);
	check_env(v);
	ret = v->oom ? -ENOMEM : (d->errors > errors ? -EINVAL : 0);
	p->validated = ret == 0;
out:
	free(v);
	return ret;
}

/* newpolicy.c - `warden policy new --mcp`: a starting policy for an MCP server, made from its
 * command as it is installed here (newpolicy.h).
 *
 * Theory of operation:
 *   1. the command is found through PATH (run_resolve_command(), as `warden run` will) and
 *      followed to its real file: a bin shim is a link into its package;
 *   2. the real file's first line says what runs it: `#!/usr/bin/env node`, `#!/x/python3`,
 *      or nothing (a native program);
 *   3. the folders the program needs and the sandbox would not show are collected: the
 *      runtime base (sandbox_base_dirs) is never granted, everything else is a read grant
 *      with a comment saying why: a node package's outermost `node_modules` folder, a
 *      virtual environment, an interpreter's or a program's installation folder;
 *   4. the text is written: command, filesystem, network (none, or npm's registry for npx),
 *      env, limits for a long-lived server (no timeout).
 */
#include "run/newpolicy.h"
#include "run/run.h"
#include "sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NP_MAX_GRANTS 4
#define NP_DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"

/* one read grant and why it is there */
struct np_grant {
	char path[PATH_MAX];
	const char *why;
};

/* what the generation learns about the command */
struct np_facts {
	char exe[PATH_MAX];	/* the command as found (a shim stays a shim) */
	char real[PATH_MAX];	/* its real file */
	char interp[PATH_MAX];	/* the interpreter as its `#!` line names it, or "" */
	char ireal[PATH_MAX];	/* the interpreter's real file, or "" */
	char ibindir[PATH_MAX]; /* the folder `env` finds the interpreter in, when not standard */
	bool node, python, npx;
	struct np_grant g[NP_MAX_GRANTS];
	size_t ng;
};

static bool in_base(const char *real)
{
	for (size_t i = 0; sandbox_base_dirs[i]; i++)
		if (run_path_within(real, sandbox_base_dirs[i]))
			return true;
	return false;
}

/* @p without its last component, in @out ("/" for "/x") */
static void parent_of(const char *p, char *out, size_t n)
{
	const char *s = strrchr(p, '/');
	size_t len = s && s != p ? (size_t)(s - p) : 1;

	snprintf(out, n, "%.*s", (int)len, p);
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

/* add a read grant of @path unless the sandbox shows it already or one grant holds it; the
 * grants it holds go (nvm: node's folder holds the node_modules of its global packages) */
static void add_grant(struct np_facts *f, const char *path, const char *why)
{
	size_t kept = 0;

	if (in_base(path))
		return;
	for (size_t i = 0; i < f->ng; i++)
		if (run_path_within(path, f->g[i].path))
			return;
	for (size_t i = 0; i < f->ng; i++)
		if (!run_path_within(f->g[i].path, path))
			f->g[kept++] = f->g[i];
	f->ng = kept;
	if (f->ng == NP_MAX_GRANTS)
		return;
	snprintf(f->g[f->ng].path, sizeof(f->g[f->ng].path), "%s", path);
	f->g[f->ng++].why = why;
}

/*
 * The `#!` line of @file: the interpreter in @interp ("" when there is none), and for
 * `/usr/bin/env [-S] NAME` the NAME in @name. Return: 0, or -EIO.
 */
static int shebang(const char *file, char *interp, size_t ilen, char *name, size_t nlen)
{
	char line[512];
	char *p, *word, *save = NULL;
	ssize_t got;
	int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	interp[0] = name[0] = '\0';
	if (fd < 0)
		return -EIO;
	got = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (got < 0)
		return -EIO;
	line[got] = '\0';
	if (got < 2 || line[0] != '#' || line[1] != '!')
		return 0;
	p = strchr(line, '\n');
	if (p)
		*p = '\0';
	word = strtok_r(line + 2, " \t", &save);
	if (!word)
		return 0;
	snprintf(interp, ilen, "%s", word);
	if (strcmp(base_name(word), "env"))
		return 0;
	while ((word = strtok_r(NULL, " \t", &save)) && word[0] == '-')
		;
	if (word)
		snprintf(name, nlen, "%s", word);
	return 0;
}

/* node: the outermost `node_modules` above @real, else the nearest folder with a package.json */
static void node_grants(struct np_facts *f)
{
	char dir[PATH_MAX], up[PATH_MAX], probe[PATH_MAX + 16], top[PATH_MAX] = "",
								pkg[PATH_MAX] = "";

	parent_of(f->real, dir, sizeof(dir));
	for (;;) {
		if (!strcmp(base_name(dir), "node_modules"))
			snprintf(top, sizeof(top), "%s", dir);
		snprintf(probe, sizeof(probe), "%s/package.json", dir);
		if (!pkg[0] && !top[0] && !access(probe, F_OK))
			snprintf(pkg, sizeof(pkg), "%s", dir);
		if (!strcmp(dir, "/"))
			break;
		parent_of(dir, up, sizeof(up));
		memcpy(dir, up, sizeof(dir));
	}
	if (top[0]) {
		add_grant(f, top,
			  "the node_modules folder that holds the package and its dependencies");
	} else if (pkg[0]) {
		add_grant(f, pkg, "the package's folder (its package.json)");
	} else {
		parent_of(f->real, dir, sizeof(dir));
		add_grant(f, dir, "the script's folder");
	}
}

/* an installation's folder: PREFIX for PREFIX/bin/FILE, else FILE's folder */
static void install_dir(const char *real, char *out, size_t n)
{
	char dir[PATH_MAX];

	parent_of(real, dir, sizeof(dir));
	if (!strcmp(base_name(dir), "bin"))
		parent_of(dir, out, n);
	else
		snprintf(out, n, "%s", dir);
}

/* the interpreter and the script, or the native program: what the sandbox must see */
static int facts_of(int argc, char *const *argv, const char *path, struct np_facts *f,
		    struct wd_err *err)
{
	char name[NAME_MAX + 1], dir[PATH_MAX], venv[PATH_MAX], cfg[PATH_MAX + 16];
	int ret;

	ret = run_resolve_command(argv[0], path, f->exe, sizeof(f->exe));
	if (ret == -EACCES)
		return wd_err_set(err, ret, "%s: not an executable file", argv[0]);
	if (ret)
		return wd_err_set(err, ret, "%s: command not found%s", argv[0],
				  strchr(argv[0], '/') ? "" : " in PATH");
	if (!realpath(f->exe, f->real))
		return wd_err_set(err, -errno, "%s: %s", f->exe, strerror(errno));
	f->npx = !strcmp(base_name(argv[0]), "npx") ||
		 (!strcmp(base_name(argv[0]), "npm") && argc > 1 && !strcmp(argv[1], "exec"));
	ret = shebang(f->real, f->interp, sizeof(f->interp), name, sizeof(name));
	if (ret)
		return wd_err_set(err, ret, "%s: cannot read its first line", f->real);
	if (name[0]) {
		/* `#!/usr/bin/env NAME`: NAME as env will find it in the sandbox (PATH) */
		ret = run_resolve_command(name, path, f->interp, sizeof(f->interp));
		if (ret)
			return wd_err_set(err, ret,
					  "%s runs `%s` (its #! line), which is not found in PATH",
					  f->exe, name);
		parent_of(f->interp, dir, sizeof(dir));
		if (strcmp(dir, "/usr/local/bin") && strcmp(dir, "/usr/bin") && strcmp(dir, "/bin"))
			snprintf(f->ibindir, sizeof(f->ibindir), "%s", dir);
	}
	if (f->interp[0] && !realpath(f->interp, f->ireal))
		return wd_err_set(err, -ENOENT, "%s: its interpreter %s does not exist", f->exe,
				  f->interp);
	if (!f->interp[0] && !strncmp(base_name(f->real), "node", 4) && argc > 1 &&
	    argv[1][0] != '-') {
		/* `node SCRIPT ...`: the script is what needs its package */
		if (!realpath(argv[1], dir))
			return wd_err_set(err, -ENOENT, "%s: %s", argv[1], strerror(errno));
		snprintf(f->ireal, sizeof(f->ireal), "%s", f->real);
		snprintf(f->real, sizeof(f->real), "%s", dir);
	}
	f->node = f->ireal[0] && !strncmp(base_name(f->ireal), "node", 4);
	f->python = f->ireal[0] && !strncmp(base_name(f->ireal), "python", 6);
	if (f->python) {
		/* a virtual environment: the interpreter's bin/ folder sits in it beside pyvenv.cfg
		 */
		parent_of(f->interp, dir, sizeof(dir));
		parent_of(dir, venv, sizeof(venv));
		snprintf(cfg, sizeof(cfg), "%s/pyvenv.cfg", venv);
		if (!access(cfg, F_OK))
			add_grant(f, venv, "the Python virtual environment");
	}
	if (f->node) {
		node_grants(f);
	} else if (!in_base(f->real)) {
		install_dir(f->real, dir, sizeof(dir));
		add_grant(f, dir,
			  f->ireal[0] ? "the script's installation" : "the program's installation");
	}
	if (f->ireal[0] && !in_base(f->ireal)) {
		install_dir(f->ireal, dir, sizeof(dir));
		add_grant(f, dir, "the interpreter's installation");
	}
	return 0;
}

/* @s in a YAML comment: control characters become `?` */
static int put_comment_text(struct wd_buf *out, const char *s)
{
	int ret = 0;

	for (; *s && !ret; s++)
		ret = wd_buf_printf(out, "%c", (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s);
	return ret;
}

/* `["a", "b"]` */
static int put_list(struct wd_buf *out, const char *first, int argc, char *const *argv)
{
	int ret = wd_buf_puts(out, "[");

	ret |= wd_yaml_quote(out, first);
	for (int i = 1; i < argc; i++) {
		ret |= wd_buf_puts(out, ", ");
		ret |= wd_yaml_quote(out, argv[i]);
	}
	return ret | wd_buf_puts(out, "]\n");
}

/* an argument that names an existing absolute path: a hint for a write grant */
static bool path_arg(const char *a)
{
	return a[0] == '/' && !access(a, F_OK) && !strchr(a, '\n');
}

/* those arguments as a commented write grant; @top: there is no `filesystem:` key above */
static int put_path_hints(struct wd_buf *out, int argc, char *const *argv, bool top)
{
	int ret = 0;
	bool any = false;

	for (int i = 1; i < argc; i++) {
		if (!path_arg(argv[i]))
			continue;
		if (!any)
			ret |= wd_buf_printf(
			    out,
			    "%s# the command names these paths; grant what the server "
			    "should reach (write: read and write):\n%s",
			    top ? "" : "  ", top ? "# filesystem:\n#   write:\n" : "  # write:\n");
		any = true;
		ret |= wd_buf_puts(out, top ? "#     - " : "  #   - ");
		ret |= wd_yaml_quote(out, argv[i]);
		ret |= wd_buf_puts(out, "\n");
	}
	return ret;
}

static int render(const struct np_facts *f, int argc, char *const *argv, struct wd_buf *out)
{
	int ret = 0;

	ret |= wd_buf_puts(out, "# A starting policy for the MCP server `");
	for (int i = 0; i < argc; i++) {
		ret |= wd_buf_puts(out, i ? " " : "");
		ret |= put_comment_text(out, argv[i]);
	}
	ret |= wd_buf_puts(out, "` (warden policy new --mcp).\n"
				"# Check it after any change: warden policy check FILE\n"
				"version: 1\n");
	ret |= wd_buf_puts(out, "# ");
	ret |= put_comment_text(out, f->exe);
	if (strcmp(f->exe, f->real)) {
		ret |= wd_buf_puts(out, " is ");
		ret |= put_comment_text(out, f->real);
	}
	if (f->ireal[0]) {
		ret |= wd_buf_puts(out, ", run by ");
		ret |= put_comment_text(out, f->ireal);
	}
	ret |= wd_buf_puts(out, "\ncommand: ");
	ret |= put_list(out, f->exe, argc, argv);
	if (!f->ng && !f->npx) {
		ret |= wd_buf_puts(out, "# the runtime base (/usr, /lib, ...) holds the server: no "
					"read grant is needed\n");
		ret |= put_path_hints(out, argc, argv, true);
		goto network;
	}
	ret |= wd_buf_puts(out, "filesystem:\n");
	if (f->ng)
		ret |= wd_buf_puts(out, "  read:\n");
	for (size_t i = 0; i < f->ng; i++) {
		ret |= wd_buf_printf(out, "    # %s\n    - ", f->g[i].why); /* our own text */
		ret |= wd_yaml_quote(out, f->g[i].path);
		ret |= wd_buf_puts(out, "\n");
	}
	if (f->npx)
		ret |= wd_buf_puts(out, "  # npx keeps the packages it downloads in npm's cache\n"
					"  write:\n    - \"~/.npm\"\n");
	else
		ret |= put_path_hints(out, argc, argv, false);
network:
	if (f->npx)
		ret |= wd_buf_puts(
		    out,
		    "network:\n"
		    "  # npx fetches the package from npm's registry when its cache lacks it: the\n"
		    "  # server's sandbox may download and run any package, and a run writes code\n"
		    "  # the next one executes. `npm install -g` the server and drop npx (and "
		    "this\n"
		    "  # and the cache grant) to keep both out of the sandbox.\n"
		    "  allow:\n    - \"registry.npmjs.org:443\"\n");
	else
		ret |=
		    wd_buf_puts(out, "# No network. To let the server reach a host, add it with "
				     "its port:\n"
				     "# network:\n#   allow:\n#     - \"api.example.com:443\"\n");
	ret |= wd_buf_puts(out, "env:\n");
	if (f->npx)
		ret |= wd_buf_puts(out, "  # npm finds its cache under HOME\n"
					"  allow: [LANG, HOME]\n");
	else
		ret |=
		    wd_buf_puts(out, "  # HOME is the sandbox's own /tmp unless you add it here\n"
				     "  allow: [LANG]\n");
	if (f->ibindir[0]) {
		char pathvar[PATH_MAX + sizeof(NP_DEFAULT_PATH) + 1];

		snprintf(pathvar, sizeof(pathvar), "%s:" NP_DEFAULT_PATH, f->ibindir);
		ret |= wd_buf_puts(out, "  # the script's `#!/usr/bin/env` line finds its "
					"interpreter through PATH\n  set:\n    PATH: ");
		ret |= wd_yaml_quote(out, pathvar);
		ret |= wd_buf_puts(out, "\n");
	}
	ret |= wd_buf_puts(out,
			   "limits:\n"
			   "  # a long-lived server: no timeout_s (it ends when its client closes "
			   "stdin)\n"
			   "  memory_mb: 1024\n"
			   "  pids: 128\n");
	return ret ? -ENOMEM : 0;
}

int run_policy_new_mcp(int argc, char *const *argv, const char *path, struct wd_buf *out,
		       struct wd_err *err)
{
	struct np_facts *f;
	int ret;

	if (argc < 1 || !argv[0] || !argv[0][0])
		return wd_err_set(err, -EINVAL, "no command");
	f = calloc(1, sizeof(*f));
	if (!f)
		return wd_err_set(err, -ENOMEM, "out of memory");
	ret = facts_of(argc, argv, path ? path : NP_DEFAULT_PATH, f, err);
	if (!ret) {
		ret = render(f, argc, argv, out);
		if (ret)
			wd_err_set(err, ret, "out of memory");
	}
	free(f);
	return ret;
}

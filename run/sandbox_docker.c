/* sandbox_docker.c - the Docker backend (`--backend docker`, docs/run.md "Backends: Docker"):
 * the program runs in a locked-down container of a Docker engine, through the docker CLI, with
 * the run's network built inside the container by Warden's own first process
 * (warden-docker-init, docker_init.c) and handed to the run's gateway.
 *
 * Theory of operation. The verbs of sandbox.h, in the order the run calls them:
 *
 *   probe     the docker CLI ($WARDEN_DOCKER, else `docker` on PATH) reaches an engine
 *             (`docker version`), and warden-docker-init is installed
 *   network   (the network stage: the container is the network) the files of the run's
 *             folder (the init's socket, the seccomp profile, resolv.conf and hosts naming the
 *             gateway), `docker create` with every option below, `docker start -a -i` as the
 *             run's process with the program's stdio; the init connects, gets the plan (the
 *             run's addresses and table, the program's uid), builds the network and sends the
 *             gateway's sockets back; the program waits for go
 *   prepare   nothing left: the container exists, its init parked
 *   spawn     go: the init drops everything and starts the program
 *   signal    `docker kill --signal N NAME` (the init forwards it to the program); the kill:
 *             `docker kill NAME`, the container itself, whatever became of the client
 *   release   `docker rm -f NAME`, the run's files removed
 *
 * A launcher killed with SIGKILL leaves its container to the init, which ends it when the
 * launcher's connection closes; run_docker_gc() (`warden gc`) removes the stopped container: it
 * carries the labels warden.run (the run id) and warden.launcher (PID:START, the launcher's
 * start time in /proc, so a reused pid is not mistaken for it).
 *
 * The container: --network none, --user 0:0 for the init only (it becomes the program's uid,
 * never 0, with no capability left), --cap-drop ALL and the init's four (NET_ADMIN SETUID
 * SETGID SETPCAP, dropped from the bounding set before the program starts), no-new-privileges,
 * the seccomp profile made from Warden's rule table (sandbox_seccomp_docker_json()), a
 * read-only root, a tmpfs /tmp of limits.disk_mb, memory with no swap on top, pids, cpus, the
 * policy's grants as bind mounts of what the launcher opened without following a link, env
 * only from env.allow / env.set and the proxy variables, labels naming the run for `warden
 * gc`. Values of env.allow / env.set reach the CLI through its environment (`-e NAME`), never
 * its command line.
 */
#include "run/internal.h"
#include "run/bwrap.h"
#include "run/docker_proto.h"
#include "sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* How long a docker CLI call may take, and the container's start (an engine under load). */
#define DK_CALL_MS 60000
#define DK_START_MS 60000
/* The most bind mounts of the init's libraries. */
#define DK_MAXLIBS 24

/**
 * struct dk - one container
 * @docker:	the CLI
 * @init:	warden-docker-init
 * @loader:	its ELF interpreter ("" when it is static)
 * @libs:	the libraries it needs (bound into DOCKER_INIT_LIB), @nlibs of them
 * @name:	the container's name ("warden-" and the run id)
 * @dir:	the run's folder of files the container sees ("" until made)
 * @lfd:	the socket the init connects to, until it did
 * @conn:	the init's connection (held for the run: its end stops the container)
 * @created:	`docker create` succeeded: release removes it
 * @grant_fd:	the grants, opened without following a link (bound as /proc/PID/fd/N)
 * @ngrant:	how many
 */
struct dk {
	char docker[PATH_MAX];
	char init[PATH_MAX];
	char loader[PATH_MAX];
	char *libs[DK_MAXLIBS];
	size_t nlibs;
	char name[80];
	char dir[PATH_MAX];
	int lfd;
	int conn;
	bool created;
	int *grant_fd;
	size_t ngrant;
};

static int say(struct sandbox_err *e, int code, const char *step, const char *fix, const char *fmt,
	       ...) WD_PRINTF(5, 6);
static int say(struct sandbox_err *e, int code, const char *step, const char *fix, const char *fmt,
	       ...)
{
	va_list ap;

	e->step = step;
	e->fix = fix;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return code;
}

static bool executable(const char *p)
{
	struct stat st;

	return !stat(p, &st) && S_ISREG(st.st_mode) && !access(p, X_OK);
}

/* The docker CLI: $WARDEN_DOCKER, else `docker` on PATH. Return: 0 or -ENOENT. */
static int find_docker(char *out, size_t size)
{
	const char *env = getenv("WARDEN_DOCKER");

	if (env && *env) {
		if (!executable(env) || strlen(env) >= size)
			return -ENOENT;
		snprintf(out, size, "%s", env);
		return 0;
	}
	return run_resolve_command("docker",
				   getenv("PATH") ? getenv("PATH") : "/usr/local/bin:/usr/bin:/bin",
				   out, size)
		   ? -ENOENT
		   : 0;
}

/* warden-docker-init: $WARDEN_DOCKER_INIT, else beside warden (installed: libexec/warden;
 * built: run/). Return: 0 or -ENOENT. */
static int find_init(char *out, size_t size)
{
	static const char *const rel[] = {"../libexec/warden/warden-docker-init",
					  "../run/warden-docker-init", "warden-docker-init"};
	const char *env = getenv("WARDEN_DOCKER_INIT");
	char self[PATH_MAX], cand[PATH_MAX + 64];
	ssize_t n;
	char *slash;

	if (env && *env) {
		if (!executable(env) || !realpath(env, self) || strlen(self) >= size)
			return -ENOENT;
		snprintf(out, size, "%s", self);
		return 0;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -ENOENT;
	self[n] = '\0';
	slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	for (size_t i = 0; i < WD_ARRAY_SIZE(rel); i++) {
		snprintf(cand, sizeof(cand), "%s/%s", self, rel[i]);
		if (executable(cand) && realpath(cand, out) && strlen(out) < size)
			return 0;
	}
	return -ENOENT;
}

/*
 * Runs @argv (the CLI) with @envp, stdin /dev/null, its output in @out and its errors in @errs
 * (either may be NULL: discarded), for at most DK_CALL_MS (then killed).
 * Return: its exit status (0..255), or a negative errno when it could not run or was killed.
 */
static int call(char *const *argv, char *const *envp, struct wd_buf *out, struct wd_buf *errs)
{
	int po[2], pe[2], st, null;
	uint64_t end = wd_mono_ns() + (uint64_t)DK_CALL_MS * 1000000u;
	pid_t pid;

	if (pipe2(po, O_CLOEXEC))
		return -errno;
	if (pipe2(pe, O_CLOEXEC)) {
		close(po[0]);
		close(po[1]);
		return -errno;
	}
	pid = fork();
	if (pid == 0) {
		null = open("/dev/null", O_RDONLY);
		if (null < 0 || dup2(null, 0) < 0 || dup2(po[1], 1) < 0 || dup2(pe[1], 2) < 0)
			_exit(127);
		execve(argv[0], argv, envp);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	if (pid < 0) {
		close(po[0]);
		close(pe[0]);
		return -EAGAIN;
	}
	for (int open_n = 2; open_n > 0;) {
		struct pollfd p[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
		uint64_t now = wd_mono_ns();
		char buf[4096];

		if (now >= end || poll(p, 2, (int)((end - now) / 1000000u) + 1) < 0) {
			if (errno == EINTR && now < end)
				continue;
			kill(pid, SIGKILL);
			break;
		}
		for (int i = 0; i < 2; i++) {
			ssize_t n;

			if (!p[i].revents || p[i].fd < 0)
				continue;
			n = read(p[i].fd, buf, sizeof(buf));
			if (n > 0) {
				struct wd_buf *b = i ? errs : out;

				if (b && b->len < (1u << 20))
					wd_buf_append(b, buf, (size_t)n);
				continue;
			}
			close(i ? pe[0] : po[0]);
			if (i)
				pe[0] = -1;
			else
				po[0] = -1;
			open_n--;
		}
	}
	wd_closep(&po[0]);
	wd_closep(&pe[0]);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -EINTR;
}

/* The CLI's first line of errors, for a message (NUL-terminated, newline cut). */
static const char *first_line(struct wd_buf *b)
{
	char *nl;

	if (!b->len || wd_buf_append(b, "", 1))
		return "(no message)";
	nl = strchr(b->data, '\n');
	if (nl)
		*nl = '\0';
	return b->data;
}

/* `docker ARG...` with the launcher's environment; Return: as call(). */
static int docker(const struct dk *d, struct wd_buf *out, struct wd_buf *errs, ...)
{
	char *argv[16];
	size_t n = 0;
	va_list ap;

	argv[n++] = (char *)d->docker;
	va_start(ap, errs);
	while (n < WD_ARRAY_SIZE(argv) - 1) {
		char *a = va_arg(ap, char *);

		if (!a)
			break;
		argv[n++] = a;
	}
	va_end(ap);
	argv[n] = NULL;
	return call(argv, environ, out, errs);
}

static int docker_probe(struct sandbox *sb, struct sandbox_err *e)
{
	struct wd_buf out = WD_BUF_INIT, errs = WD_BUF_INIT;
	struct dk d = {0};
	int ret;

	(void)sb;
	if (find_docker(d.docker, sizeof(d.docker)))
		return say(
		    e, -ENOENT, "prerequisites",
		    "install the docker CLI (Debian: docker.io), or name it in $WARDEN_DOCKER",
		    "no docker CLI (%s)",
		    getenv("WARDEN_DOCKER") ? "$WARDEN_DOCKER is not an executable file"
					    : "`docker` is not on PATH");
	if (find_init(d.init, sizeof(d.init)))
		return say(e, -ENOENT, "prerequisites",
			   "reinstall warden (warden-docker-init belongs in libexec/warden), or "
			   "name it in $WARDEN_DOCKER_INIT",
			   "warden-docker-init, the container's first process, is not installed");
	ret = docker(&d, &out, &errs, "version", "--format", "{{.Server.Version}}", (char *)NULL);
	wd_buf_free(&out);
	if (ret) {
		say(e, -EHOSTDOWN, "prerequisites",
		    "start the Docker engine, or point DOCKER_HOST at one you may use",
		    "the docker CLI reaches no engine: %s", first_line(&errs));
		wd_buf_free(&errs);
		return -EHOSTDOWN;
	}
	wd_buf_free(&errs);
	return 0;
}

/* The image: sandbox.docker.image, else $WARDEN_DOCKER_IMAGE; NULL when neither. */
static const char *image_of(const struct sandbox_spec *s)
{
	const char *env = getenv("WARDEN_DOCKER_IMAGE");

	if (s->policy->docker_image)
		return s->policy->docker_image;
	return env && *env ? env : NULL;
}

static void docker_describe(const struct sandbox_spec *s, char *out, size_t size)
{
	const char *img = image_of(s);

	snprintf(out, size,
		 "docker(image=%s)+netns(own)+nft(own)+seccomp(profile)+caps(none)+"
		 "no-new-privs+read-only-root,uid=%u",
		 img ? img : "?", (unsigned)s->uid);
}

/*
 * The init's ELF interpreter and libraries, from the loader's own list (LD_TRACE_LOADED_OBJECTS:
 * the loader prints them and runs nothing). A static init needs none. Return: 0 or a negative
 * errno.
 */
static int init_libs(struct dk *d, struct sandbox_err *e)
{
	struct wd_buf out = WD_BUF_INIT;
	char *argv[] = {d->init, NULL};
	char *envp[] = {"LD_TRACE_LOADED_OBJECTS=1", NULL};
	char *line, *save = NULL;
	int ret = call(argv, envp, &out, NULL);

	if (ret < 0 || wd_buf_append(&out, "", 1)) {
		wd_buf_free(&out);
		return say(e, ret < 0 ? ret : -ENOMEM, "prerequisites", NULL,
			   "listing warden-docker-init's libraries failed");
	}
	/* each library's copy is kept in d->libs (free_libs()); the analyzer loses it in the loop */
	// NOLINTNEXTLINE(clang-analyzer-unix.Malloc)
	for (line = strtok_r(out.data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *arrow = strstr(line, "=> "), *p, *sp, *lib;

		/* "\tlibx.so.1 => /lib/.../libx.so.1 (0x...)" or "\t/lib64/ld-linux... (0x...)" */
		p = arrow ? arrow + 3 : line + strspn(line, " \t");
		if (*p != '/')
			continue;
		sp = strchr(p, ' ');
		if (sp)
			*sp = '\0';
		if (!arrow) {
			snprintf(d->loader, sizeof(d->loader), "%s", p);
			continue;
		}
		if (d->nlibs == DK_MAXLIBS) {
			wd_buf_free(&out);
			return say(e, -E2BIG, "prerequisites", NULL,
				   "warden-docker-init needs more than %d libraries", DK_MAXLIBS);
		}
		lib = strdup(p);
		if (!lib) {
			wd_buf_free(&out);
			return say(e, -ENOMEM, "prerequisites", NULL, "out of memory");
		}
		d->libs[d->nlibs++] = lib; /* freed by release (or print) */
	}
	wd_buf_free(&out);
	/* a dynamic init always names its interpreter; one with libraries and none is odd */
	if (d->nlibs && !d->loader[0])
		return say(e, -ENOEXEC, "prerequisites", NULL,
			   "warden-docker-init names libraries but no loader");
	return 0;
}

/* The library paths of init_libs(), freed. */
static void free_libs(struct dk *d)
{
	while (d->nlibs)
		free(d->libs[--d->nlibs]);
}

/* A file of the run's folder with @text, readable by all (bound into the container, where
 * the program reads resolv.conf and hosts as its own uid; the folder stays 0700). Return: 0 or
 * a negative errno. */
static int write_at(const char *dir, const char *name, const char *text, size_t len)
{
	char p[PATH_MAX + 32];
	int ret;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	ret = wd_write_file_atomic(AT_FDCWD, p, text, len, 0);
	return ret ? ret : chmod(p, 0644) < 0 ? -errno : 0;
}

/* The run's folder: the socket the init connects to, the seccomp profile, resolv.conf and
 * hosts naming the run's gateway (the bwrap backend's texts). */
static int make_files(struct dk *d, const struct sandbox_spec *s, struct sandbox_err *e)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct bwrap_spec bs = {.policy = s->policy, .host4 = s->host4, .host6 = s->host6};
	struct wd_buf b = WD_BUF_INIT;
	struct wd_err err;
	int ret;

	/* in the run's state folder (0700), where `warden gc` finds them with the rest */
	snprintf(d->dir, sizeof(d->dir), "%s", s->state_dir);
	/* the container's root reads them without CAP_DAC_OVERRIDE; the folder stays 0700 */
	wd_err_clear(&err);
	ret = sandbox_seccomp_docker_json(s->allow, &b, &err);
	if (!ret)
		ret = write_at(d->dir, "docker-seccomp.json", b.data, b.len);
	b.len = 0;
	if (!ret)
		ret = bwrap_file_text(0, &bs, s->uid, s->gid, &b);
	if (!ret)
		ret = write_at(d->dir, "docker-resolv.conf", b.data, b.len);
	b.len = 0;
	if (!ret)
		ret = bwrap_file_text(1, &bs, s->uid, s->gid, &b);
	if (!ret)
		ret = write_at(d->dir, "docker-hosts", b.data, b.len);
	if (!ret)
		ret = write_at(d->dir, "docker-empty", "", 0);
	wd_buf_free(&b);
	if (ret)
		return say(e, ret, "sandbox", NULL, "the container's files in %s: %s", d->dir,
			   err.msg[0] ? err.msg : strerror(-ret));
	if (snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/docker-ctl.sock", d->dir) >=
	    (int)sizeof(sa.sun_path))
		return say(e, -ENAMETOOLONG, "sandbox", NULL, "%s: path too long for a socket",
			   d->dir);
	d->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (d->lfd < 0 || bind(d->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(sa.sun_path, 0666) < 0 || listen(d->lfd, 1) < 0)
		return say(e, -errno, "sandbox", NULL, "the init's socket %s: %s", sa.sun_path,
			   strerror(errno));
	return 0;
}

/* argv being built: strings it owns */
struct dk_argv {
	char **v;
	size_t n, cap;
	bool oom;
};

static void add(struct dk_argv *a, const char *fmt, ...) WD_PRINTF(2, 3);
static void add(struct dk_argv *a, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	if (a->oom)
		return;
	if (a->n + 2 > a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 64;
		char **v = realloc(a->v, cap * sizeof(*v));

		if (!v) {
			a->oom = true;
			return;
		}
		a->v = v;
		a->cap = cap;
	}
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (!s) {
		a->oom = true;
		return;
	}
	a->v[a->n++] = s;
	a->v[a->n] = NULL;
}

static void argv_free(struct dk_argv *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
	memset(a, 0, sizeof(*a));
}

/* A path docker's --mount cannot take as is (its fields are comma-separated CSV). */
static bool mount_unsafe(const char *p)
{
	return strpbrk(p, ",\"\n\r") != NULL;
}

/* The grants, each opened O_PATH without following a link (the policy's real path, checked
 * again now). The engine mounts them by path; the init checks that what the container has at
 * each path is the file opened here (grants_check()). */
static int open_grants(struct dk *d, const struct sandbox_spec *s, struct sandbox_err *e)
{
	const struct wd_policy *p = s->policy;
	size_t n = p->nread + p->nwrite;

	d->grant_fd = calloc(n ? n : 1, sizeof(int));
	if (!d->grant_fd)
		return say(e, -ENOMEM, "filesystem", NULL, "out of memory");
	for (size_t i = 0; i < n; i++) {
		const struct policy_grant *g = i < p->nread ? &p->read[i] : &p->write[i - p->nread];
		int fd;

		d->grant_fd[d->ngrant++] = -1;
		if (!g->real)
			continue; /* absent and optional: nothing to bind */
		if (mount_unsafe(g->real))
			return say(e, -EINVAL, "filesystem",
				   "rename it, or leave it out of the policy",
				   "%s: a comma, quote or newline in a grant's path cannot be "
				   "given to docker --mount",
				   g->real);
		fd = wd_open_nofollow(g->real, O_PATH);
		if (fd < 0)
			return say(e, fd, "filesystem", NULL, "%s: %s", g->real,
				   fd == -ELOOP ? "a symbolic link is on the way now (refused)"
						: strerror(-fd));
		d->grant_fd[i] = fd;
	}
	return 0;
}

/*
 * What the dynamic loader reads before the init's own code runs, as root with NET_ADMIN in the
 * container: an image (its ENV) or a policy naming one of these could run its code there. They
 * are set empty for the whole container (the program loses an image's value too) and a policy
 * naming one is refused; /etc/ld.so.preload is an empty file. A static init needs none of it,
 * and gets it all the same.
 */
static const char *const loader_vars[] = {"LD_PRELOAD",	     "LD_AUDIT",   "LD_DEBUG",
					  "LD_DEBUG_OUTPUT", "LD_PROFILE", "LD_PROFILE_OUTPUT",
					  "GLIBC_TUNABLES"};

/* The policy's env.allow or env.set names one of loader_vars[]: that one, else NULL. */
static const char *loader_var_named(const struct wd_policy *p)
{
	for (size_t i = 0; i < WD_ARRAY_SIZE(loader_vars); i++) {
		for (size_t k = 0; k < p->nenv_allow; k++)
			if (!strcmp(p->env_allow[k], loader_vars[i]))
				return loader_vars[i];
		for (size_t k = 0; k < p->nenv_set; k++)
			if (!strcmp(p->env_set[k].name, loader_vars[i]))
				return loader_vars[i];
	}
	return NULL;
}

/* A variable the docker CLI reads itself (DOCKER_HOST, DOCKER_CONFIG, ...): env.set's value
 * goes on the command line instead, so that the CLI still talks to the launcher's engine. */
static bool cli_reads(const char *name)
{
	return !strncmp(name, "DOCKER_", 7);
}

/* The environment of `docker create`: the launcher's, with env.set's values (the CLI takes
 * them by name, `-e NAME`); NULL when out of memory. */
static char **create_env(const struct sandbox_spec *s)
{
	size_t n = 0, k = 0;
	char **v;

	while (s->environ && s->environ[n])
		n++;
	v = calloc(n + s->policy->nenv_set + 1, sizeof(char *));
	if (!v)
		return NULL;
	for (size_t i = 0; i < s->policy->nenv_set; i++)
		if (!cli_reads(s->policy->env_set[i].name) &&
		    asprintf(&v[k++], "%s=%s", s->policy->env_set[i].name,
			     s->policy->env_set[i].value) < 0)
			v[--k] = NULL;
	for (size_t i = 0; i < n; i++)
		v[k++] = strdup(s->environ[i]);
	return v;
}

static bool env_named(const struct wd_policy *p, const char *name)
{
	for (size_t i = 0; i < p->nenv_set; i++)
		if (!strcmp(p->env_set[i].name, name))
			return true;
	for (size_t i = 0; i < p->nenv_allow; i++)
		if (!strcmp(p->env_allow[i], name))
			return true;
	return false;
}

/* The `docker create` command line. */
static void create_argv(struct dk_argv *a, const struct dk *d, const struct sandbox_spec *s,
			const char *image)
{
	static const char *const proxy_vars[] = {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy",
						 "https_proxy"};
	const struct wd_policy *p = s->policy;
	const struct policy_limits *l = &p->limits;
	pid_t self = getpid();

	add(a, "%s", d->docker);
	add(a, "create");
	add(a, "--name=%s", d->name);
	add(a, "--label=warden.run=%s", s->run_id);
	add(a, "--label=warden.launcher=%d:%llu", (int)self, run_proc_start(self));
	add(a, "--network=none");
	add(a, "--user=0:0");
	add(a, "--cap-drop=ALL");
	add(a, "--cap-add=NET_ADMIN");
	add(a, "--cap-add=SETUID");
	add(a, "--cap-add=SETGID");
	add(a, "--cap-add=SETPCAP");
	add(a, "--security-opt=no-new-privileges");
	add(a, "--security-opt=seccomp=%s/docker-seccomp.json", d->dir);
	add(a, "--sysctl=net.ipv6.conf.all.disable_ipv6=0");
	add(a, "--sysctl=net.ipv6.conf.lo.disable_ipv6=0");
	add(a, "--read-only");
	add(a, "--tmpfs=/tmp:rw,nosuid,nodev,mode=1777,size=%llum",
	    (unsigned long long)(l->disk_mb ? l->disk_mb : 64));
	if (l->disk_mb)
		add(a, "--ulimit=fsize=%llu:%llu", (unsigned long long)l->disk_mb << 20,
		    (unsigned long long)l->disk_mb << 20);
	if (l->memory_mb) {
		add(a, "--memory=%llum", (unsigned long long)l->memory_mb);
		add(a, "--memory-swap=%llum", (unsigned long long)l->memory_mb);
	}
	if (l->pids)
		add(a, "--pids-limit=%u", l->pids);
	if (l->cpu_milli)
		add(a, "--cpus=%u.%03u", l->cpu_milli / 1000, l->cpu_milli % 1000);
	add(a, "--mount=type=bind,source=%s/docker-ctl.sock,target=%s", d->dir, DOCKER_INIT_SOCK);
	add(a, "--mount=type=bind,source=%s,target=%s,readonly", d->init, DOCKER_INIT_BIN);
	if (d->loader[0]) {
		const char *base = strrchr(d->loader, '/');

		add(a, "--mount=type=bind,source=%s,target=%s/%s,readonly", d->loader,
		    DOCKER_INIT_LIB, base + 1);
	}
	for (size_t i = 0; i < d->nlibs; i++)
		add(a, "--mount=type=bind,source=%s,target=%s/%s,readonly", d->libs[i],
		    DOCKER_INIT_LIB, strrchr(d->libs[i], '/') + 1);
	add(a, "--mount=type=bind,source=%s/docker-empty,target=/etc/ld.so.preload,readonly",
	    d->dir);
	for (size_t i = 0; i < WD_ARRAY_SIZE(loader_vars); i++)
		add(a, "--env=%s=", loader_vars[i]);
	add(a, "--mount=type=bind,source=%s/docker-resolv.conf,target=/etc/resolv.conf,readonly",
	    d->dir);
	add(a, "--mount=type=bind,source=%s/docker-hosts,target=/etc/hosts,readonly", d->dir);
	for (size_t i = 0; i < d->ngrant; i++) {
		const struct policy_grant *g = i < p->nread ? &p->read[i] : &p->write[i - p->nread];

		if (d->grant_fd[i] >= 0)
			add(a, "--mount=type=bind,source=%s,target=%s%s", g->real, g->real,
			    i < p->nread ? ",readonly" : "");
	}
	add(a, "--workdir=%s", s->cwd && *s->cwd ? s->cwd : "/");
	add(a, "--interactive");
	if (s->tty)
		add(a, "--tty");
	/* env: by name from the CLI's environment, never a value on its command line */
	for (size_t i = 0; i < p->nenv_allow; i++)
		add(a, "--env=%s", p->env_allow[i]);
	for (size_t i = 0; i < p->nenv_set; i++)
		if (cli_reads(p->env_set[i].name))
			add(a, "--env=%s=%s", p->env_set[i].name, p->env_set[i].value);
		else
			add(a, "--env=%s", p->env_set[i].name);
	if (!env_named(p, "HOME"))
		add(a, "--env=HOME=/tmp");
	for (size_t i = 0; (s->host4[0] || s->host6[0]) && i < WD_ARRAY_SIZE(proxy_vars); i++)
		add(a, "--env=%s=http://%s:%u", proxy_vars[i], BWRAP_PROXY_NAME, s->proxy_port);
	if (s->host4[0] || s->host6[0]) {
		add(a, "--env=NO_PROXY=localhost,127.0.0.1,::1");
		add(a, "--env=no_proxy=localhost,127.0.0.1,::1");
	}
	/* a dynamic init: the loader runs it with its own libraries (the program keeps the
	 * image's) */
	if (d->loader[0])
		add(a, "--entrypoint=%s/%s", DOCKER_INIT_LIB, strrchr(d->loader, '/') + 1);
	else
		add(a, "--entrypoint=%s", DOCKER_INIT_BIN);
	add(a, "%s", image);
	if (d->loader[0]) {
		add(a, "--library-path");
		add(a, "%s", DOCKER_INIT_LIB);
		add(a, "%s", DOCKER_INIT_BIN);
	}
	add(a, "%s", DOCKER_INIT_SOCK);
	add(a, "--");
	for (size_t i = 0; s->argv[i]; i++)
		add(a, "%s", s->argv[i]);
}

/* Waits for the init's connection while the client runs. Return: 0, or a negative errno. */
static int accept_init(struct dk *d, pid_t client, int *ret_status)
{
	uint64_t end = wd_mono_ns() + (uint64_t)DK_START_MS * 1000000u;

	*ret_status = -1;
	while (wd_mono_ns() < end) {
		struct pollfd p = {d->lfd, POLLIN, 0};
		int st;

		if (poll(&p, 1, 100) == 1) {
			d->conn = accept4(d->lfd, NULL, NULL, SOCK_CLOEXEC);
			return d->conn < 0 ? -errno : 0;
		}
		if (waitpid(client, &st, WNOHANG) == client) {
			*ret_status = st;
			return -ECHILD;
		}
	}
	return -ETIMEDOUT;
}

/* The plan sent, the reply and its descriptors taken. Return: 0, or a negative errno with @e
 * filled. */
static int handover(struct dk *d, const struct sandbox_spec *s, struct sandbox_net *n,
		    struct sandbox_err *e)
{
	struct docker_init_plan plan = {.magic = DOCKER_INIT_MAGIC,
					.uid = (uint32_t)s->uid,
					.gid = (uint32_t)s->gid,
					.addr = n->addr,
					.fc = n->fc};
	struct docker_init_reply m = {0};
	union {
		char buf[CMSG_SPACE(sizeof(int) * DOCKER_INIT_NFDS)];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = {&m, sizeof(m)};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = cbuf.buf,
			    .msg_controllen = sizeof(cbuf.buf)};
	struct timeval tv = {.tv_sec = 30};
	struct cmsghdr *cm;
	int fds[DOCKER_INIT_NFDS];
	ssize_t r;

	setsockopt(d->conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (send(d->conn, &plan, sizeof(plan), MSG_NOSIGNAL) != (ssize_t)sizeof(plan))
		return say(e, -errno, "network", NULL, "sending the container's init its plan: %s",
			   strerror(errno));
	do
		r = recvmsg(d->conn, &mh, MSG_CMSG_CLOEXEC);
	while (r < 0 && errno == EINTR);
	cm = r > 0 ? CMSG_FIRSTHDR(&mh) : NULL;
	if (r == (ssize_t)sizeof(m) && !m.err && m.nfds == DOCKER_INIT_NFDS && cm &&
	    cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
	    cm->cmsg_len == CMSG_LEN(sizeof(fds)) && !(mh.msg_flags & MSG_CTRUNC)) {
		memcpy(fds, CMSG_DATA(cm), sizeof(fds));
		for (int i = 0; i < FW_RUN_NLISTEN; i++)
			n->listen[i] = fds[DOCKER_INIT_LISTEN + i];
		n->nflog = fds[DOCKER_INIT_NFLOG];
		n->probe = fds[DOCKER_INIT_PROBE];
		return 0;
	}
	if (cm && cm->cmsg_type == SCM_RIGHTS)
		for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++)
			close(((int *)CMSG_DATA(cm))[i]);
	if (r == (ssize_t)sizeof(m) && m.err) {
		m.msg[sizeof(m.msg) - 1] = '\0';
		return say(e, -m.err, "network", NULL, "in the container: %s", m.msg);
	}
	return say(e, r < 0 ? -errno : -EPROTO, "network", NULL,
		   "the container's init did not hand over the network (%s)",
		   r < 0 ? strerror(errno) : "a malformed answer");
}

/* The grants sent for the init's check, its answer read. Return: 0, or a negative errno with
 * @e filled. */
static int grants_check(struct dk *d, const struct sandbox_spec *s, struct sandbox_err *e)
{
	const struct wd_policy *p = s->policy;
	struct docker_init_grants h = {.magic = DOCKER_INIT_GRANTS_MAGIC};
	struct docker_init_reply m = {0};
	struct wd_buf b = WD_BUF_INIT;
	ssize_t r;
	int ret = wd_buf_append(&b, &h, sizeof(h));

	for (size_t i = 0; !ret && i < d->ngrant; i++) {
		const struct policy_grant *g = i < p->nread ? &p->read[i] : &p->write[i - p->nread];
		struct docker_init_grant rec = {0};
		struct stat st;

		if (d->grant_fd[i] < 0)
			continue;
		if (fstat(d->grant_fd[i], &st) < 0) {
			ret = -errno;
			break;
		}
		rec.dev = (uint64_t)st.st_dev;
		rec.ino = (uint64_t)st.st_ino;
		rec.len = (uint32_t)strlen(g->real);
		h.n++;
		ret = wd_buf_append(&b, &rec, sizeof(rec));
		if (!ret)
			ret = wd_buf_append(&b, g->real, rec.len);
	}
	if (!ret && b.len > DOCKER_INIT_GRANTS_MAX)
		ret = -E2BIG;
	if (!ret) {
		memcpy(b.data, &h, sizeof(h));
		if (send(d->conn, b.data, b.len, MSG_NOSIGNAL) != (ssize_t)b.len)
			ret = -errno;
	}
	wd_buf_free(&b);
	if (ret)
		return say(e, ret, "filesystem", NULL, "the grants for the container's check: %s",
			   strerror(-ret));
	do
		r = recv(d->conn, &m, sizeof(m), 0);
	while (r < 0 && errno == EINTR);
	if (r != (ssize_t)sizeof(m))
		return say(e, r < 0 ? -errno : -EPROTO, "filesystem", NULL,
			   "the container's init did not check the grants");
	m.msg[sizeof(m.msg) - 1] = '\0';
	if (m.err)
		return say(e, -m.err, "filesystem", NULL, "in the container: %s", m.msg);
	return 0;
}

static int docker_network(struct sandbox *sb, const struct sandbox_spec *s, struct sandbox_net *n,
			  struct sandbox_err *e)
{
	struct wd_buf errs = WD_BUF_INIT;
	struct dk_argv a = {0};
	const char *image = image_of(s);
	char **env = NULL;
	struct dk *d;
	int ret, st;
	pid_t pid;

	for (int i = 0; i < FW_RUN_NLISTEN; i++)
		n->listen[i] = -1;
	n->nflog = n->probe = -1;
	if (!image)
		return say(e, -EINVAL, "prerequisites",
			   "name one: `sandbox: {docker: {image: NAME}}` in the policy, or "
			   "$WARDEN_DOCKER_IMAGE",
			   "the docker backend needs an image, and none is named");
	if (loader_var_named(s->policy))
		return say(e, -EPERM, "prerequisites",
			   "drop it from env.allow / env.set, or use the linux backend",
			   "env: %s would be read by the dynamic loader of the container's init, "
			   "which runs as root there: the docker backend refuses it",
			   loader_var_named(s->policy));
	if (s->files_start)
		return say(e, -EOPNOTSUPP, "prerequisites",
			   "drop audit.files from the policy, or use the linux backend",
			   "audit.files (the file-access recorder) needs the linux backend");
	d = calloc(1, sizeof(*d));
	if (!d)
		return say(e, -ENOMEM, "sandbox", NULL, "out of memory");
	d->lfd = d->conn = -1;
	sb->priv = d;
	snprintf(d->name, sizeof(d->name), "warden-%s", s->run_id);
	if (find_docker(d->docker, sizeof(d->docker)) || find_init(d->init, sizeof(d->init)))
		return say(e, -ENOENT, "prerequisites", "`warden doctor` says what is missing",
			   "the docker CLI or warden-docker-init went away");
	ret = init_libs(d, e);
	if (!ret)
		ret = make_files(d, s, e);
	if (!ret)
		ret = open_grants(d, s, e);
	if (ret)
		return ret;
	create_argv(&a, d, s, image);
	env = create_env(s);
	if (a.oom || !env) {
		argv_free(&a);
		run_strv_free(env);
		return say(e, -ENOMEM, "sandbox", NULL, "out of memory");
	}
	ret = call(a.v, env, NULL, &errs);
	argv_free(&a);
	run_strv_free(env);
	if (ret) {
		say(e, ret < 0 ? ret : -EIO, "sandbox",
		    "check the image (docker image ls) and `warden doctor`", "docker create: %s",
		    first_line(&errs));
		wd_buf_free(&errs);
		return e->msg[0] ? -EIO : ret;
	}
	wd_buf_free(&errs);
	d->created = true;
	/* the client: the run's process, with the program's stdio (the relay's pipes, or the
	 * terminal); the container's exit status is its own */
	pid = fork();
	if (pid < 0)
		return say(e, -errno, "sandbox", NULL, "fork: %s", strerror(errno));
	if (pid == 0) {
		char *argv[] = {d->docker, "start", "--attach", "--interactive", d->name, NULL};
		sigset_t none;

		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execve(d->docker, argv, environ);
		_exit(127);
	}
	sb->pid = pid;
	ret = accept_init(d, pid, &st);
	if (ret == -ECHILD) {
		sb->pid = 0;
		return say(e, -ECHILD, "sandbox", "docker's own message is above",
			   "the container did not start (docker start %s %d)",
			   WIFEXITED(st) ? "exited" : "was killed by signal",
			   WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	}
	if (ret)
		return say(e, ret, "sandbox", NULL, "the container's init did not connect: %s",
			   strerror(-ret));
	wd_closep(&d->lfd);
	ret = handover(d, s, n, e);
	return ret ? ret : grants_check(d, s, e);
}

static int docker_prepare(struct sandbox *sb, const struct sandbox_spec *s, struct sandbox_err *e)
{
	const struct dk *d = sb->priv;

	sb->spec = s;
	if (!d || d->conn < 0 || !sb->pid)
		return say(e, -EINVAL, "sandbox", NULL, "the container was not made");
	return 0;
}

static int docker_spawn(struct sandbox *sb, struct sandbox_err *e)
{
	struct dk *d = sb->priv;

	if (send(d->conn, "G", 1, MSG_NOSIGNAL) != 1)
		return say(e, -errno, "exec", NULL, "the container's init did not take go: %s",
			   strerror(errno));
	return 0;
}

/* `docker rm -f` of the container (it may run or not); its files removed. */
static void remove_container(struct dk *d)
{
	static const char *const files[] = {"docker-ctl.sock", "docker-empty",
					    "docker-seccomp.json", "docker-resolv.conf",
					    "docker-hosts"};
	char p[PATH_MAX + 32];

	wd_closep(&d->conn);
	wd_closep(&d->lfd);
	if (d->created)
		docker(d, NULL, NULL, "rm", "--force", "--volumes", d->name, (char *)NULL);
	d->created = false;
	for (size_t i = 0; d->dir[0] && i < WD_ARRAY_SIZE(files); i++) {
		snprintf(p, sizeof(p), "%s/%s", d->dir, files[i]);
		unlink(p);
	}
	d->dir[0] = '\0';
}

static void docker_cancel(struct sandbox *sb)
{
	struct dk *d = sb->priv;

	/* no go: the init exits 125 when its connection ends; the container goes */
	if (d)
		remove_container(d);
	if (sb->pid > 0) {
		kill(sb->pid, SIGKILL);
		while (waitpid(sb->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	sb->pid = 0;
}

static bool docker_event(struct sandbox *sb)
{
	(void)sb;
	return true;
}

static void docker_signal(struct sandbox *sb, enum sandbox_target to, int sig)
{
	struct dk *d = sb->priv;
	char s[32];

	if (!d || !d->created)
		return;
	/* the client is gone (reaped): so is the container, or release's rm ends it */
	if (to == SANDBOX_INSIDE && (sb->pid <= 0 || (kill(sb->pid, 0) < 0 && errno == ESRCH)))
		return;
	/* PID 1 of the container forwards it to the program (and the tree is the program's to
	 * end: the init has no other children than orphans); the kill ends the container */
	if (to == SANDBOX_INSIDE)
		sig = SIGKILL;
	snprintf(s, sizeof(s), "--signal=%d", sig);
	docker(d, NULL, NULL, "kill", s, d->name, (char *)NULL);
}

static void docker_release(struct sandbox *sb)
{
	struct dk *d = sb->priv;

	if (!d)
		return;
	remove_container(d);
	for (size_t i = 0; i < d->ngrant; i++)
		wd_closep(&d->grant_fd[i]);
	free(d->grant_fd);
	free_libs(d);
	free(d);
	sb->priv = NULL;
}

static int docker_print(struct sandbox *sb, const struct sandbox_spec *s, const char *dir,
			struct wd_buf *out, struct sandbox_err *e)
{
	struct dk d = {.lfd = -1, .conn = -1};
	struct dk_argv a = {0};
	const char *image = image_of(s);
	int ret = 0;

	(void)sb;
	if (find_docker(d.docker, sizeof(d.docker)))
		snprintf(d.docker, sizeof(d.docker), "docker");
	if (find_init(d.init, sizeof(d.init)))
		snprintf(d.init, sizeof(d.init), "warden-docker-init");
	else
		ret = init_libs(&d, e);
	snprintf(d.name, sizeof(d.name), "warden-%s", s->run_id);
	snprintf(d.dir, sizeof(d.dir), "%s", dir);
	if (!ret) {
		create_argv(&a, &d, s, image ? image : "IMAGE");
		for (size_t i = 0; !a.oom && i < a.n && !ret; i++) {
			ret = bwrap_shell_word(a.v[i], out);
			if (!ret && i + 1 < a.n)
				ret = wd_buf_append(out, " ", 1);
		}
		if (a.oom)
			ret = -ENOMEM;
	}
	argv_free(&a);
	free_libs(&d);
	return ret < 0 && !e->msg[0] ? say(e, ret, "sandbox", NULL, "%s", strerror(-ret)) : ret;
}

const struct sandbox_backend sandbox_backend_docker = {
    .name = "docker",
    .probe = docker_probe,
    .describe = docker_describe,
    .network = docker_network,
    .prepare = docker_prepare,
    .spawn = docker_spawn,
    .cancel = docker_cancel,
    .event = docker_event,
    .program = NULL,
    .signal = docker_signal,
    .release = docker_release,
    .print = docker_print,
};

/* "PID:START" of a label: the launcher is that process, still running. */
static bool launcher_alive(const char *label)
{
	unsigned long long start;
	char *end;
	long pid = strtol(label, &end, 10);

	if (pid <= 0 || *end != ':')
		return false;
	start = strtoull(end + 1, &end, 10);
	return !*end && start && run_proc_start((pid_t)pid) == start;
}

int run_docker_gc(unsigned *ret_n)
{
	struct wd_buf out = WD_BUF_INIT, errs = WD_BUF_INIT;
	struct dk d = {.lfd = -1, .conn = -1};
	char *line, *save = NULL;

	*ret_n = 0;
	if (find_docker(d.docker, sizeof(d.docker)))
		return 0; /* no CLI: no container of Warden's can be made here */
	if (!docker(&d, &out, &errs, "ps", "--all", "--filter", "label=warden.run", "--format",
		    "{{.Names}} {{.Label \"warden.launcher\"}}", (char *)NULL) &&
	    !wd_buf_append(&out, "", 1)) {
		for (line = strtok_r(out.data, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			char *sp = strchr(line, ' ');

			if (!sp || strncmp(line, "warden-", 7) || launcher_alive(sp + 1))
				continue;
			*sp = '\0';
			if (!docker(&d, NULL, NULL, "rm", "--force", "--volumes", line,
				    (char *)NULL))
				(*ret_n)++;
		}
	}
	/* no engine, or one this user may not use: it holds no container of theirs to remove */
	wd_buf_free(&out);
	wd_buf_free(&errs);
	return 0;
}

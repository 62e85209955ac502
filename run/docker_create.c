/* docker_create.c - the `docker create` command line of a Docker backend's run (docs/run.md
 * "Backends: Docker", the container's flags): what the container is (network none, the
 * init's capabilities only, the seccomp profile, read-only root, limits), the grants (opened
 * without following a link; the init checks them) and the masks, the loader's variables
 * emptied, and the environment (by name through the CLI's own, never a value on its command
 * line). */
#include "run/internal.h"
#include "run/bwrap.h"
#include "run/docker.h"
#include "run/docker_proto.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static void add(struct run_docker_argv *a, const char *fmt, ...) WD_PRINTF(2, 3);
static void add(struct run_docker_argv *a, const char *fmt, ...)
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

void run_docker_argv_free(struct run_docker_argv *a)
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
int run_docker_open_grants(struct run_docker *d, const struct sandbox_spec *s,
			   struct sandbox_err *e)
{
	const struct wd_policy *p = s->policy;
	size_t n = p->nread + p->nwrite;

	d->grant_fd = calloc(n ? n : 1, sizeof(int));
	if (!d->grant_fd)
		return run_docker_say(e, -ENOMEM, "filesystem", NULL, "out of memory");
	for (size_t i = 0; i < n; i++) {
		const struct policy_grant *g = i < p->nread ? &p->read[i] : &p->write[i - p->nread];
		int fd;

		d->grant_fd[d->ngrant++] = -1;
		if (!g->real)
			continue; /* absent and optional: nothing to bind */
		if (mount_unsafe(g->real))
			return run_docker_say(
			    e, -EINVAL, "filesystem", "rename it, or leave it out of the policy",
			    "%s: a comma, quote or newline in a grant's path cannot be "
			    "given to docker --mount",
			    g->real);
		fd = wd_open_nofollow(g->real, O_PATH);
		if (fd < 0)
			return run_docker_say(e, fd, "filesystem", NULL, "%s: %s", g->real,
					      fd == -ELOOP
						  ? "a symbolic link is on the way now (refused)"
						  : strerror(-fd));
		d->grant_fd[i] = fd;
	}
	for (size_t i = 0; i < p->nmask; i++)
		if (mount_unsafe(p->mask[i]))
			return run_docker_say(
			    e, -EINVAL, "filesystem",
			    "leave the folder that holds it out of the policy",
			    "%s: a comma, quote or newline in a masked path cannot "
			    "be given to docker --mount",
			    p->mask[i]);
	return 0;
}

bool run_docker_image_ok(const char *image)
{
	/* what the CLI would take as an option, or not as one word */
	if (!*image || *image == '-' || strlen(image) > 255)
		return false;
	for (const char *c = image; *c; c++)
		if ((unsigned char)*c <= ' ' || *c == 0x7f)
			return false;
	return true;
}

/* @path is the real path of one of the policy's grants (that grant is bound there) */
static bool granted_at(const struct wd_policy *p, const char *path)
{
	for (size_t i = 0; i < p->nread + p->nwrite; i++) {
		const struct policy_grant *g = i < p->nread ? &p->read[i] : &p->write[i - p->nread];

		if (g->real && !strcmp(g->real, path))
			return true;
	}
	return false;
}

/* @path lies in (or is) one of the policy's grants */
static bool within_grants(const struct wd_policy *p, const char *path)
{
	for (size_t i = 0; i < p->nread + p->nwrite; i++) {
		const struct policy_grant *g = i < p->nread ? &p->read[i] : &p->write[i - p->nread];

		if (g->real && run_path_within(path, g->real))
			return true;
	}
	return false;
}

/* A read grant of a path that a write grant also names: the write grant is bound there
 * (docker refuses two mounts at one place; bwrap's later write bind wins the same way). */
static bool written_too(const struct wd_policy *p, const char *path)
{
	for (size_t i = 0; i < p->nwrite; i++)
		if (p->write[i].real && !strcmp(p->write[i].real, path))
			return true;
	return false;
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
const char *run_docker_loader_var(const struct wd_policy *p)
{
	for (size_t i = 0; i < WD_ARRAY_SIZE(loader_vars); i++)
		if (policy_env_names(p, loader_vars[i]))
			return loader_vars[i];
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
char **run_docker_create_env(const struct sandbox_spec *s)
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

/* The `docker create` command line. */
void run_docker_create_argv(struct run_docker_argv *a, const struct run_docker *d,
			    const struct sandbox_spec *s, const char *image)
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

		if (d->grant_fd[i] >= 0 && !(i < p->nread && written_too(p, g->real)))
			add(a, "--mount=type=bind,source=%s,target=%s%s", g->real, g->real,
			    i < p->nread ? ",readonly" : "");
	}
	/* the masks (credential stores in a grant): an empty folder, an empty file; the engine
	 * mounts parents before children, so a `sensitive: true` grant inside one is bound over
	 * it, and a grant at the mask's own path is bound instead of it */
	for (size_t i = 0; i < p->nmask; i++) {
		struct stat st;

		if (lstat(p->mask[i], &st) < 0 || !within_grants(p, p->mask[i]) ||
		    granted_at(p, p->mask[i]))
			continue;
		if (S_ISDIR(st.st_mode))
			add(a, "--mount=type=tmpfs,target=%s,tmpfs-mode=0755", p->mask[i]);
		else
			add(a, "--mount=type=bind,source=%s/docker-empty,target=%s,readonly",
			    d->dir, p->mask[i]);
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
	if (!policy_env_names(p, "HOME"))
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

/* docker_cli.c - the Docker backend's tools (docs/run.md "Backends: Docker"): the docker CLI
 * and warden-docker-init found, a CLI call run with its output captured and a deadline, the
 * init's loader and libraries listed for their bind mounts, and `warden gc`'s removal of the
 * containers whose launcher is gone (run_docker_gc()). */
#include "run/internal.h"
#include "run/docker.h"

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

int run_docker_say(struct sandbox_err *e, int code, const char *step, const char *fix,
		   const char *fmt, ...)
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
int run_docker_find_cli(char *out, size_t size)
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
int run_docker_find_init(char *out, size_t size)
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
 * (either may be NULL: discarded), for at most RUN_DOCKER_CALL_MS (then killed).
 * Return: its exit status (0..255), or a negative errno when it could not run or was killed.
 */
int run_docker_call(char *const *argv, char *const *envp, struct wd_buf *out, struct wd_buf *errs)
{
	int po[2], pe[2], st, null;
	uint64_t end = wd_mono_ns() + (uint64_t)RUN_DOCKER_CALL_MS * 1000000u;
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
const char *run_docker_first_line(struct wd_buf *b)
{
	char *nl;

	if (!b->len || wd_buf_append(b, "", 1))
		return "(no message)";
	nl = strchr(b->data, '\n');
	if (nl)
		*nl = '\0';
	return b->data;
}

int run_docker_cli(const struct run_docker *d, struct wd_buf *out, struct wd_buf *errs, ...)
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
	return run_docker_call(argv, environ, out, errs);
}

/*
 * The init's ELF interpreter and libraries, from the loader's own list (LD_TRACE_LOADED_OBJECTS:
 * the loader prints them and runs nothing). A static init needs none. Return: 0 or a negative
 * errno.
 */
int run_docker_init_libs(struct run_docker *d, struct sandbox_err *e)
{
	struct wd_buf out = WD_BUF_INIT;
	char *argv[] = {d->init, NULL};
	char *envp[] = {"LD_TRACE_LOADED_OBJECTS=1", NULL};
	char *line, *save = NULL;
	int ret = run_docker_call(argv, envp, &out, NULL);

	if (ret < 0 || wd_buf_append(&out, "", 1)) {
		wd_buf_free(&out);
		return run_docker_say(e, ret < 0 ? ret : -ENOMEM, "prerequisites", NULL,
				      "listing warden-docker-init's libraries failed");
	}
	/* each library's copy is kept in d->libs (run_docker_free_libs()); the analyzer loses it in
	 * the loop */
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
		if (d->nlibs == RUN_DOCKER_MAXLIBS) {
			wd_buf_free(&out);
			return run_docker_say(e, -E2BIG, "prerequisites", NULL,
					      "warden-docker-init needs more than %d libraries",
					      RUN_DOCKER_MAXLIBS);
		}
		lib = strdup(p);
		if (!lib) {
			wd_buf_free(&out);
			return run_docker_say(e, -ENOMEM, "prerequisites", NULL, "out of memory");
		}
		d->libs[d->nlibs++] = lib; /* freed by release (or print) */
	}
	wd_buf_free(&out);
	/* a dynamic init always names its interpreter; one with libraries and none is odd */
	if (d->nlibs && !d->loader[0])
		return run_docker_say(e, -ENOEXEC, "prerequisites", NULL,
				      "warden-docker-init names libraries but no loader");
	return 0;
}

/* The library paths of run_docker_init_libs(), freed. */
void run_docker_free_libs(struct run_docker *d)
{
	while (d->nlibs)
		free(d->libs[--d->nlibs]);
}

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
	struct run_docker d = {.lfd = -1, .conn = -1};
	char *line, *save = NULL;

	*ret_n = 0;
	if (run_docker_find_cli(d.docker, sizeof(d.docker)))
		return 0; /* no CLI: no container of Warden's can be made here */
	if (!run_docker_cli(&d, &out, &errs, "ps", "--all", "--filter", "label=warden.run",
			    "--format", "{{.Names}} {{.Label \"warden.launcher\"}}",
			    (char *)NULL) &&
	    !wd_buf_append(&out, "", 1)) {
		for (line = strtok_r(out.data, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			char *sp = strchr(line, ' ');

			if (!sp || strncmp(line, "warden-", 7) || launcher_alive(sp + 1))
				continue;
			*sp = '\0';
			if (!run_docker_cli(&d, NULL, NULL, "rm", "--force", "--volumes", line,
					    (char *)NULL))
				(*ret_n)++;
		}
	}
	/* no engine, or one this user may not use: it holds no container of theirs to remove */
	wd_buf_free(&out);
	wd_buf_free(&errs);
	return 0;
}

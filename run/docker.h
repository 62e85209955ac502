/* docker.h - internal to run/: the Docker backend's parts shared by its files:
 * sandbox_docker.c (the verbs), docker_create.c (the `docker create` line), docker_cli.c (the
 * CLI, the init, gc). */
#ifndef WARDEN_RUN_DOCKER_H
#define WARDEN_RUN_DOCKER_H

#include "common/common.h"
#include "run/sandbox.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* How long a docker CLI call may take, and the container's start (an engine under load). */
#define RUN_DOCKER_CALL_MS 60000
#define RUN_DOCKER_START_MS 60000
/* The most bind mounts of the init's libraries. */
#define RUN_DOCKER_MAXLIBS 24

/**
 * struct run_docker - one container
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
struct run_docker {
	char docker[PATH_MAX];
	char init[PATH_MAX];
	char loader[PATH_MAX];
	char *libs[RUN_DOCKER_MAXLIBS];
	size_t nlibs;
	char name[80];
	char dir[PATH_MAX];
	int lfd;
	int conn;
	bool created;
	int *grant_fd;
	size_t ngrant;
};

/* argv being built: strings it owns */
struct run_docker_argv {
	char **v;
	size_t n, cap;
	bool oom;
};

/**
 * run_docker_say() - fill @e (the step, a fix or NULL, the message). Return: @code.
 */
int run_docker_say(struct sandbox_err *e, int code, const char *step, const char *fix,
		   const char *fmt, ...) WD_PRINTF(5, 6);

/* docker_cli.c */

/** run_docker_find_cli() - the docker CLI: $WARDEN_DOCKER, else `docker` on PATH. Return: 0
 * or -ENOENT. */
int run_docker_find_cli(char *out, size_t size);

/** run_docker_find_init() - warden-docker-init: $WARDEN_DOCKER_INIT, else beside warden
 * (installed: libexec/warden; built: run/). Return: 0 or -ENOENT. */
int run_docker_find_init(char *out, size_t size);

/**
 * run_docker_call() - @argv run with @envp, stdin /dev/null, its output in @out and its errors
 * in @errs (either may be NULL), for at most RUN_DOCKER_CALL_MS (then killed)
 * Return: its exit status (0..255), or a negative errno when it could not run or was killed.
 */
int run_docker_call(char *const *argv, char *const *envp, struct wd_buf *out, struct wd_buf *errs);

/** run_docker_first_line() - the first line of @b, NUL-terminated, for a message. */
const char *run_docker_first_line(struct wd_buf *b);

/** run_docker_cli() - `docker ARG...` (NULL-terminated) with the launcher's environment.
 * Return: as run_docker_call(). */
int run_docker_cli(const struct run_docker *d, struct wd_buf *out, struct wd_buf *errs, ...);

/** run_docker_init_libs() - @d's loader and libraries of its init (none when it is static).
 * Return: 0, or a negative errno with @e filled. */
int run_docker_init_libs(struct run_docker *d, struct sandbox_err *e);

/** run_docker_free_libs() - what run_docker_init_libs() listed, freed. */
void run_docker_free_libs(struct run_docker *d);

/* docker_create.c */

/** run_docker_argv_free() - @a's strings and array freed, @a zeroed. */
void run_docker_argv_free(struct run_docker_argv *a);

/** run_docker_open_grants() - the policy's grants opened O_PATH without following a link, in
 * d->grant_fd (read grants, then write grants). Return: 0, or a negative errno with @e filled. */
int run_docker_open_grants(struct run_docker *d, const struct sandbox_spec *s,
			   struct sandbox_err *e);

/** run_docker_image_ok() - @image can be given to the CLI as an image (not an option: no
 * leading '-', no blank or control character, at most 255 bytes). */
bool run_docker_image_ok(const char *image);

/** run_docker_loader_var() - a dynamic loader's variable the policy's env names, or NULL. */
const char *run_docker_loader_var(const struct wd_policy *p);

/** run_docker_create_env() - the environment of `docker create`, or NULL (out of memory). */
char **run_docker_create_env(const struct sandbox_spec *s);

/** run_docker_create_argv() - the `docker create` command line of @s in @a (a->oom on a
 * failure to allocate). */
void run_docker_create_argv(struct run_docker_argv *a, const struct run_docker *d,
			    const struct sandbox_spec *s, const char *image);

#endif /* WARDEN_RUN_DOCKER_H */

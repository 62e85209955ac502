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
 * The container is docker_create.c's command line (no network, no capability left to the
 * program, the seccomp profile, a read-only root, the engine's limits, the grants checked by
 * the init, the masks, env by name); the CLI, the init and gc are docker_cli.c's.
 */
#include "run/internal.h"
#include "run/bwrap.h"
#include "run/docker.h"
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

static int docker_probe(struct sandbox *sb, struct sandbox_err *e)
{
	struct wd_buf out = WD_BUF_INIT, errs = WD_BUF_INIT;
	struct run_docker d = {0};
	int ret;

	(void)sb;
	if (run_docker_find_cli(d.docker, sizeof(d.docker)))
		return run_docker_say(
		    e, -ENOENT, "prerequisites",
		    "install the docker CLI (Debian: docker.io), or name it in $WARDEN_DOCKER",
		    "no docker CLI (%s)",
		    getenv("WARDEN_DOCKER") ? "$WARDEN_DOCKER is not an executable file"
					    : "`docker` is not on PATH");
	if (run_docker_find_init(d.init, sizeof(d.init)))
		return run_docker_say(
		    e, -ENOENT, "prerequisites",
		    "reinstall warden (warden-docker-init belongs in libexec/warden), or "
		    "name it in $WARDEN_DOCKER_INIT",
		    "warden-docker-init, the container's first process, is not installed");
	ret = run_docker_cli(&d, &out, &errs, "version", "--format", "{{.Server.Version}}",
			     (char *)NULL);
	wd_buf_free(&out);
	if (ret) {
		run_docker_say(e, -EHOSTDOWN, "prerequisites",
			       "start the Docker engine, or point DOCKER_HOST at one you may use",
			       "the docker CLI reaches no engine: %s",
			       run_docker_first_line(&errs));
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
		 "no-new-privs+read-only-root",
		 img ? img : "?");
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
static int make_files(struct run_docker *d, const struct sandbox_spec *s, struct sandbox_err *e)
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
		return run_docker_say(e, ret, "sandbox", NULL, "the container's files in %s: %s",
				      d->dir, err.msg[0] ? err.msg : strerror(-ret));
	if (snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/docker-ctl.sock", d->dir) >=
	    (int)sizeof(sa.sun_path))
		return run_docker_say(e, -ENAMETOOLONG, "sandbox", NULL,
				      "%s: path too long for a socket", d->dir);
	d->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (d->lfd < 0 || bind(d->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(sa.sun_path, 0666) < 0 || listen(d->lfd, 1) < 0)
		return run_docker_say(e, -errno, "sandbox", NULL, "the init's socket %s: %s",
				      sa.sun_path, strerror(errno));
	return 0;
}

/* Waits for the init's connection while the client runs. Return: 0, or a negative errno. */
static int accept_init(struct run_docker *d, pid_t client, int *ret_status)
{
	uint64_t end = wd_mono_ns() + (uint64_t)RUN_DOCKER_START_MS * 1000000u;

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
static int handover(struct run_docker *d, const struct sandbox_spec *s, struct sandbox_net *n,
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
	int fds[DOCKER_INIT_NFDS],
	    want = n->fc.port_udp ? DOCKER_INIT_NFDS : DOCKER_INIT_NBASE; /* docker_proto.h */
	ssize_t r;

	setsockopt(d->conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (send(d->conn, &plan, sizeof(plan), MSG_NOSIGNAL) != (ssize_t)sizeof(plan))
		return run_docker_say(e, -errno, "network", NULL,
				      "sending the container's init its plan: %s", strerror(errno));
	do
		r = recvmsg(d->conn, &mh, MSG_CMSG_CLOEXEC);
	while (r < 0 && errno == EINTR);
	cm = r > 0 ? CMSG_FIRSTHDR(&mh) : NULL;
	if (r == (ssize_t)sizeof(m) && !m.err && m.nfds == want && cm &&
	    cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
	    cm->cmsg_len == CMSG_LEN(sizeof(int) * (size_t)want) && !(mh.msg_flags & MSG_CTRUNC)) {
		memcpy(fds, CMSG_DATA(cm), sizeof(int) * (size_t)want);
		for (int i = 0; i < FW_RUN_NLISTEN; i++)
			n->listen[i] = fds[DOCKER_INIT_LISTEN + i];
		n->nflog = fds[DOCKER_INIT_NFLOG];
		n->probe = fds[DOCKER_INIT_PROBE];
		for (int i = 0; want == DOCKER_INIT_NFDS && i < FW_RUN_NUDP; i++)
			n->udp[i] = fds[DOCKER_INIT_UDP4 + i];
		return 0;
	}
	if (cm && cm->cmsg_type == SCM_RIGHTS)
		for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++)
			close(((int *)CMSG_DATA(cm))[i]);
	if (r == (ssize_t)sizeof(m) && m.err) {
		m.msg[sizeof(m.msg) - 1] = '\0';
		return run_docker_say(e, -m.err, "network", NULL, "in the container: %s", m.msg);
	}
	return run_docker_say(e, r < 0 ? -errno : -EPROTO, "network", NULL,
			      "the container's init did not hand over the network (%s)",
			      r < 0 ? strerror(errno) : "a malformed answer");
}

/* The grants sent for the init's check, its answer read. Return: 0, or a negative errno with
 * @e filled. */
static int grants_check(struct run_docker *d, const struct sandbox_spec *s, struct sandbox_err *e)
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
		return run_docker_say(e, ret, "filesystem", NULL,
				      "the grants for the container's check: %s", strerror(-ret));
	do
		r = recv(d->conn, &m, sizeof(m), 0);
	while (r < 0 && errno == EINTR);
	if (r != (ssize_t)sizeof(m))
		return run_docker_say(e, r < 0 ? -errno : -EPROTO, "filesystem", NULL,
				      "the container's init did not check the grants");
	m.msg[sizeof(m.msg) - 1] = '\0';
	if (m.err)
		return run_docker_say(e, -m.err, "filesystem", NULL, "in the container: %s", m.msg);
	return 0;
}

static int docker_network(struct sandbox *sb, const struct sandbox_spec *s, struct sandbox_net *n,
			  struct sandbox_err *e)
{
	struct wd_buf errs = WD_BUF_INIT;
	struct run_docker_argv a = {0};
	const char *image = image_of(s);
	char **env = NULL;
	struct run_docker *d;
	int ret, st;
	pid_t pid;

	for (int i = 0; i < FW_RUN_NLISTEN; i++)
		n->listen[i] = -1;
	n->nflog = n->probe = -1;
	for (int i = 0; i < FW_RUN_NUDP; i++)
		n->udp[i] = -1;
	if (image && !run_docker_image_ok(image))
		return run_docker_say(e, -EINVAL, "prerequisites",
				      "name an image as docker does: NAME[:TAG] or NAME@DIGEST",
				      "the docker image `%s` is not an image reference", image);
	if (!image)
		return run_docker_say(
		    e, -EINVAL, "prerequisites",
		    "name one: `sandbox: {docker: {image: NAME}}` in the policy, or "
		    "$WARDEN_DOCKER_IMAGE",
		    "the docker backend needs an image, and none is named");
	if (run_docker_loader_var(s->policy))
		return run_docker_say(
		    e, -EPERM, "prerequisites",
		    "drop it from env.allow / env.set, or use the linux backend",
		    "env: %s would be read by the dynamic loader of the container's init, "
		    "which runs as root there: the docker backend refuses it",
		    run_docker_loader_var(s->policy));
	if (s->files_start)
		return run_docker_say(
		    e, -EOPNOTSUPP, "prerequisites",
		    "drop audit.files from the policy, or use the linux backend",
		    "audit.files (the file-access recorder) needs the linux backend");
	d = calloc(1, sizeof(*d));
	if (!d)
		return run_docker_say(e, -ENOMEM, "sandbox", NULL, "out of memory");
	d->lfd = d->conn = -1;
	sb->priv = d;
	snprintf(d->name, sizeof(d->name), "warden-%s", s->run_id);
	if (run_docker_find_cli(d->docker, sizeof(d->docker)) ||
	    run_docker_find_init(d->init, sizeof(d->init)))
		return run_docker_say(e, -ENOENT, "prerequisites",
				      "`warden doctor` says what is missing",
				      "the docker CLI or warden-docker-init went away");
	ret = run_docker_init_libs(d, e);
	if (!ret)
		ret = make_files(d, s, e);
	if (!ret)
		ret = run_docker_open_grants(d, s, e);
	if (ret)
		return ret;
	run_docker_create_argv(&a, d, s, image);
	env = run_docker_create_env(s);
	if (a.oom || !env) {
		run_docker_argv_free(&a);
		run_strv_free(env);
		return run_docker_say(e, -ENOMEM, "sandbox", NULL, "out of memory");
	}
	ret = run_docker_call(a.v, env, NULL, &errs);
	run_docker_argv_free(&a);
	run_strv_free(env);
	if (ret) {
		run_docker_say(e, ret < 0 ? ret : -EIO, "sandbox",
			       "check the image (docker image ls) and `warden doctor`",
			       "docker create: %s", run_docker_first_line(&errs));
		wd_buf_free(&errs);
		return e->msg[0] ? -EIO : ret;
	}
	wd_buf_free(&errs);
	d->created = true;
	/* the client: the run's process, with the program's stdio (the relay's pipes, or the
	 * terminal); the container's exit status is its own */
	pid = fork();
	if (pid < 0)
		return run_docker_say(e, -errno, "sandbox", NULL, "fork: %s", strerror(errno));
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
		return run_docker_say(e, -ECHILD, "sandbox", "docker's own message is above",
				      "the container did not start (docker start %s %d)",
				      WIFEXITED(st) ? "exited" : "was killed by signal",
				      WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	}
	if (ret)
		return run_docker_say(e, ret, "sandbox", NULL,
				      "the container's init did not connect: %s", strerror(-ret));
	wd_closep(&d->lfd);
	ret = handover(d, s, n, e);
	return ret ? ret : grants_check(d, s, e);
}

static int docker_prepare(struct sandbox *sb, const struct sandbox_spec *s, struct sandbox_err *e)
{
	const struct run_docker *d = sb->priv;

	sb->spec = s;
	if (!d || d->conn < 0 || !sb->pid)
		return run_docker_say(e, -EINVAL, "sandbox", NULL, "the container was not made");
	return 0;
}

static int docker_spawn(struct sandbox *sb, struct sandbox_err *e)
{
	struct run_docker *d = sb->priv;

	if (send(d->conn, "G", 1, MSG_NOSIGNAL) != 1)
		return run_docker_say(e, -errno, "exec", NULL,
				      "the container's init did not take go: %s", strerror(errno));
	return 0;
}

/* `docker rm -f` of the container (it may run or not); its files removed. */
static void remove_container(struct run_docker *d)
{
	static const char *const files[] = {"docker-ctl.sock", "docker-empty",
					    "docker-seccomp.json", "docker-resolv.conf",
					    "docker-hosts"};
	char p[PATH_MAX + 32];

	wd_closep(&d->conn);
	wd_closep(&d->lfd);
	if (d->created)
		run_docker_cli(d, NULL, NULL, "rm", "--force", "--volumes", d->name, (char *)NULL);
	d->created = false;
	for (size_t i = 0; d->dir[0] && i < WD_ARRAY_SIZE(files); i++) {
		snprintf(p, sizeof(p), "%s/%s", d->dir, files[i]);
		unlink(p);
	}
	d->dir[0] = '\0';
}

static void docker_cancel(struct sandbox *sb)
{
	struct run_docker *d = sb->priv;

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
	struct run_docker *d = sb->priv;
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
	run_docker_cli(d, NULL, NULL, "kill", s, d->name, (char *)NULL);
}

static void docker_release(struct sandbox *sb)
{
	struct run_docker *d = sb->priv;

	if (!d)
		return;
	remove_container(d);
	for (size_t i = 0; i < d->ngrant; i++)
		wd_closep(&d->grant_fd[i]);
	free(d->grant_fd);
	run_docker_free_libs(d);
	free(d);
	sb->priv = NULL;
}

static int docker_print(struct sandbox *sb, const struct sandbox_spec *s, const char *dir,
			struct wd_buf *out, struct sandbox_err *e)
{
	struct run_docker d = {.lfd = -1, .conn = -1};
	struct run_docker_argv a = {0};
	const char *image = image_of(s);
	int ret = 0;

	(void)sb;
	if (run_docker_find_cli(d.docker, sizeof(d.docker)))
		snprintf(d.docker, sizeof(d.docker), "docker");
	if (run_docker_find_init(d.init, sizeof(d.init)))
		snprintf(d.init, sizeof(d.init), "warden-docker-init");
	else
		ret = run_docker_init_libs(&d, e);
	snprintf(d.name, sizeof(d.name), "warden-%s",
		 s->run_id && *s->run_id ? s->run_id : "RUNID");
	snprintf(d.dir, sizeof(d.dir), "%s", dir);
	if (!ret)
		ret = run_docker_open_grants(&d, s, e);
	if (!ret) {
		run_docker_create_argv(&a, &d, s, image ? image : "IMAGE");
		for (size_t i = 0; !a.oom && i < a.n && !ret; i++) {
			ret = bwrap_shell_word(a.v[i], out);
			if (!ret && i + 1 < a.n)
				ret = wd_buf_append(out, " ", 1);
		}
		if (a.oom)
			ret = -ENOMEM;
	}
	run_docker_argv_free(&a);
	run_docker_free_libs(&d);
	for (size_t i = 0; i < d.ngrant; i++)
		wd_closep(&d.grant_fd[i]);
	free(d.grant_fd);
	return ret < 0 && !e->msg[0] ? run_docker_say(e, ret, "sandbox", NULL, "%s", strerror(-ret))
				     : ret;
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

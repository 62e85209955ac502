/* run_gw.c - `warden run`'s side of the gateway: the control-socket client (one request, one
 * answer line; JSON calls on top) and the embedded gateway (a `warden-gateway` child started
 * for one run with a generated config). run_gwclient.c says what a run asks. */
#include "run/run.h"
#include "run/gw.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int run_gw_request(const char *socket_path, const char *req, int timeout_ms, char **ret_answer)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
	struct wd_buf in = WD_BUF_INIT;
	char buf[65536];
	int fd, ret, werr;
	ssize_t n;

	if (strlen(socket_path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	strcpy(sun.sun_path, socket_path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		ret = -errno;
		goto out;
	}
	ret = wd_write_all(fd, req, strlen(req));
	if (!ret)
		ret = wd_write_all(fd, "\n", 1);
	/* a gateway that refuses a connection at once (a bound reached) says why in a line and
	 * closes it, maybe before the request was sent: that line is still read */
	if (ret && ret != -EPIPE && ret != -ECONNRESET)
		goto out;
	werr = ret;
	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = werr					? werr
			      : errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT
									: -errno;
			goto out;
		}
		if (n == 0) {
			ret = in.len ? 0 : werr ? werr : -ECONNRESET;
			break;
		}
		if (wd_buf_append(&in, buf, (size_t)n)) {
			ret = -ENOMEM;
			goto out;
		}
		if (memchr(buf, '\n', (size_t)n)) {
			ret = 0;
			break;
		}
	}
	if (!ret) {
		char *nl = memchr(in.data, '\n', in.len);

		if (nl)
			*nl = '\0';
		*ret_answer = in.data;
		in.data = NULL;
	}
out:
	wd_buf_free(&in);
	close(fd);
	return ret;
}

int run_gw_call(const char *socket_path, struct json_t *req, int timeout_ms,
		struct json_t **ret_ans, char *why, size_t wsize)
{
	char *line = json_dumps(req, JSON_COMPACT), *ans = NULL;
	json_t *j;
	int ret;

	if (!line)
		return -ENOMEM;
	ret = run_gw_request(socket_path, line, timeout_ms, &ans);
	free(line);
	if (ret) {
		snprintf(why, wsize, "%s: %s", socket_path, strerror(-ret));
		return ret;
	}
	j = json_loads(ans, 0, NULL);
	free(ans);
	if (!j) {
		snprintf(why, wsize, "%s: the answer is not JSON", socket_path);
		return -EBADMSG;
	}
	if (!json_is_true(json_object_get(j, "ok"))) {
		const char *e = json_string_value(json_object_get(j, "error"));

		snprintf(why, wsize, "%s", e ? e : "refused");
		json_decref(j);
		return -EPERM;
	}
	if (ret_ans)
		*ret_ans = j;
	else
		json_decref(j);
	return 0;
}

int run_gw_call_op(const char *socket_path, const char *op, int timeout_ms, struct json_t **ret_ans)
{
	json_t *req = json_pack("{s:s}", "op", op);
	char why[256];
	int ret;

	if (!req)
		return -ENOMEM;
	ret = run_gw_call(socket_path, req, timeout_ms, ret_ans, why, sizeof(why));
	json_decref(req);
	return ret;
}

static bool executable(const char *p)
{
	struct stat st;

	return !stat(p, &st) && S_ISREG(st.st_mode) && !access(p, X_OK);
}

int run_gw_find_binary(char *out, size_t outlen)
{
	static const char *const rel[] = {"warden-gateway", "../gateway/warden-gateway",
					  "../sbin/warden-gateway"};
	const char *env = getenv("WARDEN_GATEWAY_BIN");
	char self[PATH_MAX], cand[PATH_MAX + 64];
	ssize_t n;

	if (env && *env) {
		if (!executable(env) || strlen(env) >= outlen)
			return -ENOENT;
		strcpy(out, env);
		return 0;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		char *slash;

		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash)
			*slash = '\0';
		for (size_t i = 0; i < WD_ARRAY_SIZE(rel); i++) {
			snprintf(cand, sizeof(cand), "%s/%s", self, rel[i]);
			if (executable(cand) && realpath(cand, self) && strlen(self) < outlen) {
				strcpy(out, self);
				return 0;
			}
		}
	}
	return run_resolve_command("warden-gateway",
				   "/usr/local/sbin:/usr/sbin:/sbin:/usr/local/bin:/usr/bin:/bin",
				   out, outlen)
		   ? -ENOENT
		   : 0;
}

const char *run_gw_find_problem(char *why, size_t size)
{
	const char *env = getenv("WARDEN_GATEWAY_BIN");
	struct stat st;

	if (env && *env) {
		if (stat(env, &st))
			snprintf(why, size, "WARDEN_GATEWAY_BIN=%s: %s", env, strerror(errno));
		else if (!S_ISREG(st.st_mode) || access(env, X_OK))
			snprintf(why, size, "WARDEN_GATEWAY_BIN=%s is not an executable file", env);
		else
			snprintf(why, size, "WARDEN_GATEWAY_BIN=%s: the path is too long", env);
		return "point WARDEN_GATEWAY_BIN at the warden-gateway program, or unset it (then "
		       "the one next to warden, or in PATH, is used)";
	}
	snprintf(why, size, "no warden-gateway next to warden nor in PATH");
	return "install warden-gateway next to warden (the package and `cmake --install` do), "
	       "or point WARDEN_GATEWAY_BIN at it";
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/* The last line of the embedded gateway's output, for an error message. */
static void log_tail(const char *path, char *out, size_t size)
{
	char *data = NULL, *p;
	size_t len = 0;

	out[0] = '\0';
	if (wd_read_file(path, 1 << 20, &data, &len) || !len) {
		free(data);
		return;
	}
	while (len && data[len - 1] == '\n')
		data[--len] = '\0';
	p = strrchr(data, '\n');
	snprintf(out, size, "%s", p ? p + 1 : data);
	free(data);
}

/*
 * Readiness. warden-gateway tells a service manager it serves with one READY=1 datagram to
 * $NOTIFY_SOCKET (gateway/sdnotify.h), sent once every socket is bound and the worker holds
 * them. An embedded gateway gets a $NOTIFY_SOCKET of the run's own (gw.ready in the run's
 * 0700 state folder, SO_PASSCRED), so the launcher sleeps in poll(2) until that datagram or
 * the gateway's exit instead of asking the control socket in a loop. Only a datagram whose
 * sender is the gateway's pid (SCM_CREDENTIALS, which the kernel fills) counts.
 */

/* ready_open() - the readiness socket of @gw in @dir; on any failure none (the wait polls) */
static void ready_open(struct run_gw *gw, const char *dir)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int one = 1, fd;

	gw->ready_fd = -1;
	if (snprintf(gw->ready_path, sizeof(gw->ready_path), "%s/gw.ready", dir) >=
		(int)sizeof(gw->ready_path) ||
	    strlen(gw->ready_path) >= sizeof(sun.sun_path)) {
		gw->ready_path[0] = '\0';
		return;
	}
	strcpy(sun.sun_path, gw->ready_path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd >= 0)
		unlink(gw->ready_path); /* a stale one of this folder's earlier start */
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		if (fd >= 0)
			close(fd);
		gw->ready_path[0] = '\0';
		return;
	}
	gw->ready_fd = fd;
}

/* ready_close() - the readiness socket closed and its name removed */
static void ready_close(struct run_gw *gw)
{
	if (gw->ready_fd < 0)
		return;
	close(gw->ready_fd);
	gw->ready_fd = -1;
	if (gw->ready_path[0])
		unlink(gw->ready_path);
	gw->ready_path[0] = '\0';
}

/* has_ready() - whether one of the newline-separated assignments in @s is READY=1 */
static bool has_ready(const char *s)
{
	for (const char *p = s; p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, "READY=1", 7) && (p[7] == '\n' || p[7] == '\0'))
			return true;
	return false;
}

/* ready_read() - every datagram waiting on @gw's readiness socket read.
 * Return: true when one of them is the gateway's READY=1 */
static bool ready_read(const struct run_gw *gw)
{
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(sizeof(struct ucred))];
	} c;
	char buf[512];
	bool ready = false;

	for (;;) {
		struct iovec iov = {buf, sizeof(buf) - 1};
		struct msghdr m = {.msg_iov = &iov,
				   .msg_iovlen = 1,
				   .msg_control = c.b,
				   .msg_controllen = sizeof(c.b)};
		struct cmsghdr *h;
		struct ucred uc;
		ssize_t n = recvmsg(gw->ready_fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return ready;
		buf[n] = '\0';
		h = CMSG_FIRSTHDR(&m);
		if ((m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || !h || h->cmsg_level != SOL_SOCKET ||
		    h->cmsg_type != SCM_CREDENTIALS || h->cmsg_len != CMSG_LEN(sizeof(uc)))
			continue;
		memcpy(&uc, CMSG_DATA(h), sizeof(uc));
		if (uc.pid == gw->pid && has_ready(buf))
			ready = true;
	}
}

/* child_env() - the environment of the embedded gateway: ours, with $NOTIFY_SOCKET naming
 * @ready (a service manager's, if warden has one, is not the embedded gateway's to use); with
 * @ready "" ours unchanged. @var holds the new assignment. Return: the array (malloc'd; the
 * strings are environ's), or NULL (no memory) */
__attribute__((noinline)) /* not into run_gw_spawn(): its vfork() */
static char **
child_env(const char *ready, char *var, size_t size)
{
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + 2, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!ready[0] || strncmp(environ[i], "NOTIFY_SOCKET=", 14))
			env[k++] = environ[i];
	if (ready[0]) {
		snprintf(var, size, "NOTIFY_SOCKET=%s", ready);
		env[k++] = var;
	}
	env[k] = NULL;
	return env;
}

int run_gw_spawn(struct run_gw *gw, const char *dir, const struct wd_gwconf *conf,
		 const char *audit_path, const int *listen, int nlisten, struct wd_err *err)
{
	char bin[PATH_MAX], cfgpath[PATH_MAX], nfds[8], notify[sizeof(gw->ready_path) + 16];
	char *argv[] = {bin, "--config", cfgpath, NULL, NULL, NULL}, **envp;
	struct wd_gwconf c = *conf;
	struct wd_buf yaml = WD_BUF_INIT;
	int r, fd, null, high[16];
	sigset_t none;
	pid_t pid;

	memset(gw, 0, sizeof(*gw));
	gw->ready_fd = -1;
	if (nlisten < 0 || nlisten > (int)WD_ARRAY_SIZE(high))
		return wd_err_set(err, -EINVAL, "%d listening sockets for the gateway", nlisten);
	if (nlisten) {
		snprintf(nfds, sizeof(nfds), "%d", nlisten);
		argv[3] = "--listen-fds";
		argv[4] = nfds;
	}
	r = run_gw_find_binary(bin, sizeof(bin));
	if (r) {
		char why[PATH_MAX + 64];

		run_gw_find_problem(why, sizeof(why));
		return wd_err_set(err, r, "%s", why);
	}
	if (snprintf(gw->socket, sizeof(gw->socket), "%s/gw.sock", dir) >= (int)sizeof(gw->socket))
		return wd_err_set(err, -ENAMETOOLONG, "control socket path too long in %s", dir);
	snprintf(c.control_path, sizeof(c.control_path), "%s", gw->socket);
	snprintf(c.audit_path, sizeof(c.audit_path), "%s", audit_path);
	snprintf(cfgpath, sizeof(cfgpath), "%s/gateway.yaml", dir);
	snprintf(gw->log_path, sizeof(gw->log_path), "%s/gateway.log", dir);
	r = conf_render_yaml(&c, &yaml);
	if (r) {
		wd_buf_free(&yaml);
		return wd_err_set(err, r, "rendering the gateway config: %s", strerror(-r));
	}
	fd = open(cfgpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	r = fd < 0 ? -errno : wd_write_all(fd, yaml.data, yaml.len);
	if (fd >= 0)
		close(fd);
	wd_buf_free(&yaml);
	if (r)
		return wd_err_set(err, r, "writing %s: %s", cfgpath, strerror(-r));
	fd = open(gw->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return wd_err_set(err, -errno, "creating %s: %s", gw->log_path, strerror(errno));
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0) {
		r = -errno;
		close(fd);
		return wd_err_set(err, r, "opening /dev/null: %s", strerror(-r));
	}
	ready_open(gw, dir);
	envp = child_env(gw->ready_path, notify, sizeof(notify));
	if (!envp) {
		ready_close(gw);
		close(null);
		close(fd);
		return wd_err_set(err, -ENOMEM, "out of memory");
	}
	/* the sockets it adopts: above the range they are moved to (3..), so no dup2() below
	 * overwrites one that is still to be moved */
	for (int i = 0; i < nlisten; i++) {
		high[i] = fcntl(listen[i], F_DUPFD_CLOEXEC, 64);
		if (high[i] < 0) {
			r = -errno;
			while (i--)
				close(high[i]);
			free(envp);
			ready_close(gw);
			close(null);
			close(fd);
			return wd_err_set(err, r, "duplicating the gateway's sockets: %s",
					  strerror(-r));
		}
	}
	sigemptyset(&none);
	/* vfork: the launcher is large and the child only sets a few process attributes
	 * (plain system calls, no memory written) before exec; a copy would cost more */
	/* NOLINTBEGIN(clang-analyzer-unix.Vfork,clang-analyzer-security.insecureAPI.vfork) */
	pid = vfork(); // cppcheck-suppress vforkCalled ; the reason is above
	if (pid == 0) {
		/* SIGKILL, not SIGTERM: a launcher that dies must not leave a gateway that
		 * is slow to stop; its worker follows through its own PR_SET_PDEATHSIG */
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* its own process group: a terminal's ^C reaches the run, not the gateway */
		setpgid(0, 0);
		if (dup2(null, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(127);
		for (int i = 0; i < nlisten; i++)
			if (dup2(high[i], 3 + i) < 0) /* without FD_CLOEXEC: it is inherited */
				_exit(127);
		/* nothing the caller of `warden run` left open reaches the process that reads
		 * the sandbox's bytes (ours are CLOEXEC; a kernel without close_range has them
		 * closed at exec all the same) */
		syscall(SYS_close_range, 3U + (unsigned)nlisten, ~0U, 0U);
		execve(bin, argv, envp);
		_exit(127);
	}
	/* NOLINTEND(clang-analyzer-unix.Vfork,clang-analyzer-security.insecureAPI.vfork) */
	r = pid < 0 ? -errno : 0;
	free(envp);
	close(null);
	close(fd);
	for (int i = 0; i < nlisten; i++)
		close(high[i]);
	if (r) {
		ready_close(gw);
		return wd_err_set(err, r, "vfork: %s", strerror(-r));
	}
	gw->pid = pid;
	gw->embedded = true;
	return 0;
}

/* wait_notified() - until @gw's READY=1 arrives, it exits or @end (CLOCK_MONOTONIC ns) passes.
 * Return: 0 ready, -ECHILD it exited (reaped), -ETIMEDOUT, or a negative errno of poll(2) */
static int wait_notified(struct run_gw *gw, uint64_t end)
{
	/* its exit wakes the poll too (a pidfd is readable once the process exited); without
	 * pidfds (before Linux 5.3) a 10 ms turn looks for it */
	int pfd = (int)syscall(SYS_pidfd_open, gw->pid, 0), status, ret;
	struct pollfd p[2] = {{gw->ready_fd, POLLIN, 0}, {pfd, POLLIN, 0}};

	for (;;) {
		uint64_t now = wd_mono_ns();
		int ms, n;

		if (waitpid(gw->pid, &status, WNOHANG) == gw->pid) {
			gw->pid = 0;
			ret = -ECHILD;
			break;
		}
		if (now >= end) {
			ret = -ETIMEDOUT;
			break;
		}
		ms = (int)((end - now) / 1000000) + 1;
		if (pfd < 0 && ms > 10)
			ms = 10;
		n = poll(p, pfd >= 0 ? 2 : 1, ms);
		if (n < 0 && errno != EINTR) {
			ret = -errno;
			break;
		}
		if (n > 0 && (p[0].revents & POLLIN) && ready_read(gw)) {
			ret = 0;
			break;
		}
	}
	if (pfd >= 0)
		close(pfd);
	return ret;
}

/* wait_polled() - until @gw's control socket answers a request (the loop is running), it
 * exits or @end passes; asked often: the launcher has nothing else to do meanwhile.
 * Return: as wait_notified() */
static int wait_polled(struct run_gw *gw, uint64_t end)
{
	int status;

	while (wd_mono_ns() < end) {
		if (waitpid(gw->pid, &status, WNOHANG) == gw->pid) {
			gw->pid = 0;
			return -ECHILD;
		}
		if (!run_gw_call_op(gw->socket, "stats", 200, NULL))
			return 0;
		nanosleep(&(struct timespec){0, 200000L}, NULL);
	}
	return -ETIMEDOUT;
}

int run_gw_wait(struct run_gw *gw, struct wd_err *err)
{
	uint64_t end = wd_mono_ns() + 5000000000ull;
	char tail[512];
	int ret;

	if (!gw->embedded || gw->pid <= 0)
		return wd_err_set(err, -ECHILD, "no embedded gateway was started");
	ret = gw->ready_fd >= 0 ? wait_notified(gw, end) : wait_polled(gw, end);
	ready_close(gw);
	if (ret == 0)
		return 0;
	if (ret == -ECHILD) {
		log_tail(gw->log_path, tail, sizeof(tail));
		if (!tail[0])
			return wd_err_set(
			    err, -ENODATA,
			    "the embedded gateway exited at start without a word (%s)",
			    gw->log_path);
		return wd_err_set(err, -ECHILD, "the embedded gateway exited at start: %s", tail);
	}
	run_gw_stop(gw);
	if (ret == -ETIMEDOUT)
		return wd_err_set(err, -ETIMEDOUT,
				  "the embedded gateway was not ready within 5 s (%s)", gw->socket);
	return wd_err_set(err, ret, "waiting for the embedded gateway: %s", strerror(-ret));
}

int run_gw_start(struct run_gw *gw, const char *dir, const struct wd_gwconf *conf,
		 const char *audit_path, struct wd_err *err)
{
	int r = run_gw_spawn(gw, dir, conf, audit_path, NULL, 0, err);

	return r ? r : run_gw_wait(gw, err);
}

void run_gw_stop(struct run_gw *gw)
{
	int status, pfd;

	if (!gw || !gw->embedded)
		return;
	ready_close(gw);
	if (gw->pid <= 0)
		return;
	kill(gw->pid, SIGTERM);
	/* wait for its exit without polling (a pidfd is readable once it exited) */
	pfd = (int)syscall(SYS_pidfd_open, gw->pid, 0);
	if (pfd >= 0) {
		struct pollfd p = {pfd, POLLIN, 0};

		while (poll(&p, 1, 2000) < 0 && errno == EINTR)
			;
		close(pfd);
		if (waitpid(gw->pid, &status, WNOHANG) == gw->pid) {
			gw->pid = 0;
			return;
		}
	}
	for (int i = 0; pfd < 0 && i < 2000; i++) { /* no pidfd: poll every millisecond */
		if (waitpid(gw->pid, &status, WNOHANG) == gw->pid) {
			gw->pid = 0;
			return;
		}
		sleep_ms(1);
	}
	kill(gw->pid, SIGKILL);
	waitpid(gw->pid, &status, 0);
	gw->pid = 0;
}

/* proxyrun.c - the gateway's side of a proxy run (proxyrun.h; the program's side is
 * proxyproc.c): a run whose one network path is a proxy-mode gateway on loopback, the way
 * macOS's Seatbelt backend runs (mode_seatbelt.c).
 *
 * Theory of operation. Every piece a run makes is recorded in struct run_proxy as it is made,
 * and run_proxy_end() undoes whatever is recorded, in reverse, on every way out:
 *   1. begin: a private folder (mkdtemp, 0700) for the gateway's configuration, control
 *      socket and log, and the program's tmp folder; a listener on 127.0.0.1 (port 0: the
 *      kernel picks), made by warden so the port is known before the profile is written;
 *   2. gateway: the user's gateway configuration (or the defaults) with `mode: proxy`, the
 *      control socket in the folder and the run's audit log, written there; warden-gateway
 *      (gateway/main_proxy.c) forked with the listener at descriptor 3 (`--listen-fds 1`),
 *      ready when its control socket answers `stats`; a gateway that exits first fails the
 *      run with its last words;
 *   3. register: the run's id, 127.0.0.1 as its peer, the policy's text (the gateway decides
 *      by the same code, audit events and denial ids as on Linux);
 *   4. the caller starts the program (its own process group), then run_proxy_wait() (proxyproc.c):
 * one poll on the self-pipe the signal handlers write to; SIGCHLD reaps, SIGINT/SIGTERM/SIGHUP are
 * passed to the group, the watchdog's deadline sends SIGTERM, then SIGKILL;
 *   5. end: counters read, unregistered, the gateway stopped and reaped, the folder removed.
 * A stop signal before the program starts is seen by run_proxy_stop_asked(): the caller ends
 * the run there (nothing is started after it). No Linux header: builds for macOS. */
#include "run/proxyrun.h"
#include "run/run.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* how long the gateway may take to answer on its control socket, and a request's bound */
#define GW_READY_MS 10000
#define GW_CALL_MS 3000

int run_proxy_begin(struct run_proxy *px, const char *id, struct wd_err *err)
{
	const char *t = getenv("TMPDIR");
	static const uint8_t lo4[4] = {127, 0, 0, 1};
	struct sockaddr_in sin = {0};
	socklen_t len = sizeof(sin);
	char tmpl[PATH_MAX];
	int fd, ret;

	memset(px, 0, sizeof(*px));
	px->listen_fd = -1;
	snprintf(px->id, sizeof(px->id), "%s", id);
	if (!t || t[0] != '/' || strlen(t) > 256)
		t = "/tmp";
	/* the control socket's path must fit a sun_path (104 bytes on macOS) */
	snprintf(tmpl, sizeof(tmpl), "%s%swarden-run-%s-XXXXXX", t,
		 t[strlen(t) - 1] == '/' ? "" : "/", id);
	if (strlen(tmpl) + sizeof("/gw.sock") > 100)
		snprintf(tmpl, sizeof(tmpl), "/tmp/warden-run-%s-XXXXXX", id);
	if (!mkdtemp(tmpl))
		return wd_err_set(err, -errno, "a private folder %s: %s", tmpl, strerror(errno));
	/* Seatbelt matches real paths (/tmp is /private/tmp on macOS): the folder's own */
	if (!realpath(tmpl, px->dir)) {
		ret = -errno;
		rmdir(tmpl);
		return wd_err_set(err, ret, "%s: %s", tmpl, strerror(-ret));
	}
	memcpy(tmpl, px->dir, strlen(px->dir) + 1);
	if (snprintf(px->tmp, sizeof(px->tmp), "%s/tmp", tmpl) < 0 ||
	    snprintf(px->ctl, sizeof(px->ctl), "%s/gw.sock", tmpl) < 0 ||
	    snprintf(px->conf, sizeof(px->conf), "%s/gateway.yaml", tmpl) < 0 ||
	    snprintf(px->log, sizeof(px->log), "%s/gateway.log", tmpl) < 0)
		return wd_err_set(err, -EINVAL, "%s: a path too long", tmpl);
	if (mkdir(px->tmp, 0700) < 0)
		return wd_err_set(err, -errno, "%s: %s", px->tmp, strerror(errno));
	fd = wd_socket_bound(AF_INET, lo4, 0, SOCK_STREAM);
	if (fd < 0)
		return wd_err_set(err, fd, "a listener on 127.0.0.1: %s", strerror(-fd));
	px->listen_fd = fd;
	if (getsockname(fd, (struct sockaddr *)&sin, &len) < 0)
		return wd_err_set(err, -errno, "the listener's port: %s", strerror(errno));
	px->port = ntohs(sin.sin_port);
	return 0;
}

/* the gateway's configuration file, in the run's folder (0600, a new file) */
static int write_conf(struct run_proxy *px, const char *config, const char *audit_path,
		      struct wd_err *err)
{
	struct wd_buf yaml = WD_BUF_INIT;
	int ret = run_proxy_conf(config, px->port, px->ctl, audit_path, &yaml, err), fd;

	if (ret) {
		wd_buf_free(&yaml);
		return ret;
	}
	fd = open(px->conf, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	ret = fd < 0 ? -errno : wd_write_all(fd, yaml.data, yaml.len);
	if (fd >= 0 && close(fd) < 0 && !ret)
		ret = -errno;
	wd_buf_free(&yaml);
	if (ret)
		return wd_err_set(err, ret, "%s: %s", px->conf, strerror(-ret));
	return 0;
}

/* one request line to the gateway's control socket, its answer line in @ret_answer */
static int ctl_request(const char *path, const char *req, char **ret_answer)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct timeval tv = {GW_CALL_MS / 1000, (GW_CALL_MS % 1000) * 1000};
	struct wd_buf in = WD_BUF_INIT;
	char buf[8192];
	ssize_t n;
	int fd, ret;

	if (strlen(path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	memcpy(sun.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0)
		return -errno;
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	ret = connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ? -errno : 0;
	if (!ret)
		ret = wd_write_all(fd, req, strlen(req));
	if (!ret)
		ret = wd_write_all(fd, "\n", 1);
	while (!ret) {
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			ret = errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT : -errno;
		else if (n == 0)
			ret = in.len ? 1 : -ECONNRESET;
		else if (wd_buf_append(&in, buf, (size_t)n))
			ret = -ENOMEM;
		else if (memchr(buf, '\n', (size_t)n))
			ret = 1;
	}
	close(fd);
	if (ret < 0) {
		wd_buf_free(&in);
		return ret;
	}
	*ret_answer = strdup(wd_buf_cstr(&in));
	wd_buf_free(&in);
	return *ret_answer ? 0 : -ENOMEM;
}

/* a JSON request; its answer when "ok" is true (@ret_ans may be NULL), else -EPERM and why */
static int ctl_call(const char *path, json_t *req, json_t **ret_ans, char *why, size_t size)
{
	char *line = json_dumps(req, JSON_COMPACT), *ans = NULL;
	json_t *j;
	int ret;

	if (!line)
		return -ENOMEM;
	ret = ctl_request(path, line, &ans);
	free(line);
	if (ret) {
		snprintf(why, size, "%s", strerror(-ret));
		return ret;
	}
	j = json_loads(ans, 0, NULL);
	free(ans);
	if (!j) {
		snprintf(why, size, "the answer is not JSON");
		return -EBADMSG;
	}
	if (!json_is_true(json_object_get(j, "ok"))) {
		const char *e = json_string_value(json_object_get(j, "error"));

		snprintf(why, size, "%s", e ? e : "refused");
		json_decref(j);
		return -EPERM;
	}
	if (ret_ans)
		*ret_ans = j;
	else
		json_decref(j);
	return 0;
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* the gateway's child side: the listener at 3, stderr to its log, nothing else open */
static void gateway_child(const struct run_proxy *px, const char *gw_bin)
{
	char *argv[] = {(char *)gw_bin, "--config", (char *)px->conf, "--listen-fds", "1", NULL};
	int keep[] = {3};
	int lfd = open(px->log, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW, 0600);
	int nul = open("/dev/null", O_RDWR);

	/* its own process group: a Ctrl-C at the terminal does not stop it before the run ends */
	setpgid(0, 0);
	if (lfd < 0 || nul < 0 || dup2(nul, 0) < 0 || dup2(lfd, 1) < 0 || dup2(lfd, 2) < 0 ||
	    dup2(px->listen_fd, 3) < 0)
		_exit(127);
	wd_close_all_except(keep, 1);
	signal(SIGPIPE, SIG_DFL);
	execv(gw_bin, argv);
	_exit(127);
}

int run_proxy_gateway(struct run_proxy *px, const char *gw_bin, const char *config,
		      const char *audit_path, struct wd_err *err)
{
	char why[512], tail[512];
	json_t *req;
	uint64_t deadline;
	pid_t pid;
	int ret, st;

	ret = write_conf(px, config, audit_path, err);
	if (ret)
		return ret;
	pid = fork();
	if (pid < 0)
		return wd_err_set(err, -errno, "fork: %s", strerror(errno));
	if (pid == 0)
		gateway_child(px, gw_bin);
	px->gw_pid = pid;
	/* the gateway holds the listener now; warden's copy would keep the port open after it */
	close(px->listen_fd);
	px->listen_fd = -1;
	req = json_pack("{s:s}", "op", "stats");
	if (!req)
		return wd_err_set(err, -ENOMEM, "out of memory");
	deadline = wd_mono_ns() + (uint64_t)GW_READY_MS * 1000000u;
	for (;;) {
		if (run_proxy_stop_asked()) {
			ret =
			    wd_err_set(err, -EINTR, "stopped by signal %d", run_proxy_stop_asked());
			break;
		}
		if (waitpid(pid, &st, WNOHANG) == pid) {
			px->gw_pid = 0;
			run_proxy_log_tail(px->log, tail, sizeof(tail));
			ret =
			    wd_err_set(err, -ECHILD, "%s exited before it answered (status %d)%s%s",
				       gw_bin, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
				       tail[0] ? ": " : "", tail);
			break;
		}
		if (!ctl_call(px->ctl, req, NULL, why, sizeof(why))) {
			ret = 0;
			break;
		}
		if (wd_mono_ns() > deadline) {
			ret = wd_err_set(err, -ETIMEDOUT, "%s did not answer on %s within %d ms",
					 gw_bin, px->ctl, GW_READY_MS);
			break;
		}
		sleep_ms(20);
	}
	json_decref(req);
	return ret;
}

int run_proxy_register(struct run_proxy *px, const char *policy_name, const char *text, size_t len,
		       struct wd_err *err)
{
	/* a proxy run's connections come from loopback: the run is told apart by its gateway,
	 * which serves it alone */
	json_t *req = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s%}", "op", "register", "id",
				px->id, "if", "lo", "host_v4", "127.0.0.1", "sandbox_v4",
				"127.0.0.1", "policy_name", policy_name, "policy", text, len);
	char why[512];
	int ret;

	if (!req)
		return wd_err_set(err, -ENOMEM, "out of memory");
	ret = ctl_call(px->ctl, req, NULL, why, sizeof(why));
	json_decref(req);
	if (ret)
		return wd_err_set(err, ret, "registering run %s: %s", px->id, why);
	px->registered = true;
	return 0;
}

void run_proxy_counts(struct run_proxy *px, struct run_proxy_counts *ret)
{
	json_t *req = json_pack("{s:s}", "op", "list"), *ans = NULL, *it;
	char why[256];
	size_t i;

	*ret = (struct run_proxy_counts){-1, -1, -1};
	if (!req || !px->registered || ctl_call(px->ctl, req, &ans, why, sizeof(why))) {
		json_decref(req);
		return;
	}
	json_decref(req);
	json_array_foreach(json_object_get(ans, "runs"), i, it)
	{
		const char *rid = json_string_value(json_object_get(it, "id"));

		if (!rid || strcmp(rid, px->id))
			continue;
		ret->denied = json_integer_value(json_object_get(it, "denied"));
		ret->up = json_integer_value(json_object_get(it, "bytes_up"));
		ret->down = json_integer_value(json_object_get(it, "bytes_down"));
	}
	json_decref(ans);
}

/* a child reaped within @ms; Return: true when it was (or is gone) */
static bool reap_within(pid_t pid, long ms)
{
	uint64_t end = wd_mono_ns() + (uint64_t)ms * 1000000u;
	int st;

	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid || (r < 0 && errno == ECHILD))
			return true;
		if (wd_mono_ns() > end)
			return false;
		sleep_ms(10);
	}
}

/* how deep remove_below() goes: one descriptor per level (macOS's default limit is 256) */
#define REMOVE_DEPTH 64

/* everything in the folder @dfd (closed here), @depth levels down: each entry opened from its
 * folder's descriptor without following a link (the program may still be running and swap a
 * folder for a link: the link itself is what goes); Return: whether it is empty now */
/* NOLINTNEXTLINE(misc-no-recursion): REMOVE_DEPTH levels at most */
static bool remove_below(int dfd, int depth)
{
	DIR *d = fdopendir(dfd);
	struct dirent *e;
	bool empty = true;

	if (!d) {
		close(dfd);
		return false;
	}
	while ((e = readdir(d))) {
		int sub;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (!unlinkat(dirfd(d), e->d_name, 0))
			continue;
		sub = depth < REMOVE_DEPTH ? openat(dirfd(d), e->d_name,
						    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
					   : -1;
		if (sub < 0 || !remove_below(sub, depth + 1) ||
		    unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) < 0)
			empty = false;
	}
	closedir(d);
	return empty;
}

/* the run's folder @path and everything in it; what cannot go is named */
static void remove_tree(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd >= 0 && remove_below(fd, 0) && !rmdir(path))
		return;
	if (fd >= 0 || errno != ENOENT)
		wd_say(stderr, "warden run: %s: left behind (not empty, or deeper than %d folders)",
		       path, REMOVE_DEPTH);
}

void run_proxy_end(struct run_proxy *px)
{
	json_t *req;
	char why[256];

	if (px->registered) {
		req = json_pack("{s:s, s:s}", "op", "unregister", "id", px->id);
		if (req)
			ctl_call(px->ctl, req, NULL, why, sizeof(why));
		json_decref(req);
		px->registered = false;
	}
	if (px->gw_pid > 0) {
		kill(px->gw_pid, SIGTERM);
		if (!reap_within(px->gw_pid, 5000)) {
			kill(px->gw_pid, SIGKILL);
			reap_within(px->gw_pid, 5000);
		}
		px->gw_pid = 0;
	}
	if (px->listen_fd >= 0) {
		close(px->listen_fd);
		px->listen_fd = -1;
	}
	if (px->dir[0]) {
		remove_tree(px->dir);
		px->dir[0] = '\0';
	}
}

/* proxyrun.c - the portable part of a proxy run (proxyrun.h): a run whose one network path is
 * a proxy-mode gateway on loopback, the way macOS's Seatbelt backend runs (mode_seatbelt.c).
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
 *   4. the caller starts the program (its own process group), then run_proxy_wait(): one poll
 *      on the self-pipe the signal handlers write to; SIGCHLD reaps, SIGINT/SIGTERM/SIGHUP
 *      are passed to the group, the watchdog's deadline sends SIGTERM, then SIGKILL;
 *   5. end: counters read, unregistered, the gateway stopped and reaped, the folder removed.
 * A stop signal before the program starts is seen by run_proxy_stop_asked(): the caller ends
 * the run there (nothing is started after it). No Linux header: builds for macOS. */
#include "run/proxyrun.h"
#include "conf/conf.h"
#include "run/run.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* how long the gateway may take to answer on its control socket, and a request's bound */
#define GW_READY_MS 10000
#define GW_CALL_MS 3000

/* the self-pipe: [0] read by the wait, [1] written by the handlers */
static int sig_pipe[2] = {-1, -1};
static volatile sig_atomic_t stop_sig;

static void on_signal(int sig)
{
	int saved = errno;
	unsigned char c = (unsigned char)sig;

	if (sig != SIGCHLD && !stop_sig)
		stop_sig = sig;
	if (sig_pipe[1] >= 0 && write(sig_pipe[1], &c, 1) < 0) {
		/* full: the wait drains it and looks at the state anyway */
	}
	errno = saved;
}

static int set_flags(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
		return -errno;
	return 0;
}

int run_proxy_signals(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGCHLD};
	struct sigaction sa = {0};
	int ret;

	if (sig_pipe[0] < 0) {
		if (pipe(sig_pipe) < 0)
			return -errno;
		ret = set_flags(sig_pipe[0]);
		if (!ret)
			ret = set_flags(sig_pipe[1]);
		if (ret)
			return ret;
	}
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	for (size_t i = 0; i < WD_ARRAY_SIZE(sigs); i++)
		if (sigaction(sigs[i], &sa, NULL) < 0)
			return -errno;
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

int run_proxy_stop_asked(void)
{
	return stop_sig;
}

int run_proxy_id(char out[13])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char b[6];

	if (getentropy(b, sizeof(b)) < 0)
		return -errno;
	for (size_t i = 0; i < sizeof(b); i++) {
		out[2 * i] = hex[b[i] >> 4];
		out[2 * i + 1] = hex[b[i] & 15];
	}
	out[12] = '\0';
	return 0;
}

int run_proxy_begin(struct run_proxy *px, const char *id, struct wd_err *err)
{
	const char *t = getenv("TMPDIR");
	static const uint8_t lo4[4] = {127, 0, 0, 1};
	struct sockaddr_in sin;
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

/* the gateway's configuration: @config's (or the defaults) made proxy mode for this run */
static int write_conf(struct run_proxy *px, const char *config, const char *audit_path,
		      struct wd_err *err)
{
	struct wd_buf yaml = WD_BUF_INIT, msg = WD_BUF_INIT;
	struct wd_gwconf c;
	struct policy_diags d;
	int ret, fd;

	policy_diags_init(&d);
	if (config) {
		ret = conf_load(config, &c, &d);
		for (size_t i = 0; ret && i < d.n; i++) {
			policy_diag_format(&d, i, &msg);
			wd_buf_printf(&msg, "%s", i + 1 < d.n ? "; " : "");
		}
		policy_diags_free(&d);
		if (ret) {
			ret = wd_err_set(err, ret, "%s",
					 msg.len ? wd_buf_cstr(&msg) : strerror(-ret));
			wd_buf_free(&msg);
			return ret;
		}
	} else {
		policy_diags_free(&d);
		conf_defaults(&c);
	}
	c.mode = WD_GW_PROXY;
	/* the one listener warden hands in is on 127.0.0.1 */
	snprintf(c.listen_v4, sizeof(c.listen_v4), "127.0.0.1");
	c.listen_v6[0] = '\0';
	c.port_proxy = px->port;
	if (snprintf(c.control_path, sizeof(c.control_path), "%s", px->ctl) >=
	    (int)sizeof(c.control_path)) {
		conf_free(&c);
		return wd_err_set(err, -ENAMETOOLONG, "%s: too long for a socket", px->ctl);
	}
	if (snprintf(c.audit_path, sizeof(c.audit_path), "%s", audit_path) >=
	    (int)sizeof(c.audit_path)) {
		conf_free(&c);
		return wd_err_set(err, -ENAMETOOLONG, "the audit log's path is too long");
	}
	ret = conf_render_yaml(&c, &yaml);
	conf_free(&c);
	if (ret) {
		wd_buf_free(&yaml);
		return wd_err_set(err, ret, "the gateway's configuration: %s", strerror(-ret));
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

/* the last line the gateway wrote on stderr, for a gateway that did not start */
static void log_tail(const char *path, char *out, size_t size)
{
	char *data = NULL, *end, *start;
	size_t len = 0;

	out[0] = '\0';
	if (wd_read_file(path, 1 << 20, &data, &len) || !len) {
		free(data);
		return;
	}
	end = data + len;
	while (end > data && (end[-1] == '\n' || end[-1] == '\r'))
		end--;
	*end = '\0';
	start = strrchr(data, '\n');
	snprintf(out, size, "%s", start ? start + 1 : data);
	free(data);
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
			log_tail(px->log, tail, sizeof(tail));
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

/* everything below @path (a folder this run made: no link is followed), then @path */
static void remove_tree(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	char sub[PATH_MAX];
	struct stat st;

	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name) >= (int)sizeof(sub))
			continue;
		if (!lstat(sub, &st) && S_ISDIR(st.st_mode))
			remove_tree(sub);
		else
			unlink(sub);
	}
	if (d)
		closedir(d);
	rmdir(path);
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

void run_proxy_strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

static const char *env_get(char *const *env, const char *name)
{
	size_t n = strlen(name);

	for (; env && *env; env++)
		if (!strncmp(*env, name, n) && (*env)[n] == '=')
			return *env + n + 1;
	return NULL;
}

/* NAME=VALUE into @v (room made by the caller), replacing an earlier NAME */
static int env_put(char **v, size_t *n, const char *name, const char *value)
{
	size_t len = strlen(name);
	char *s = NULL;

	if (asprintf(&s, "%s=%s", name, value) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < *n; i++)
		if (!strncmp(v[i], name, len) && v[i][len] == '=') {
			free(v[i]);
			v[i] = s;
			return 0;
		}
	v[(*n)++] = s;
	return 0;
}

int run_proxy_env(const struct wd_policy *p, char *const *environ_in, const struct run_proxy *px,
		  char ***ret_env)
{
	static const char *const http_vars[] = {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy",
						"https_proxy"};
	static const char *const none_vars[] = {"NO_PROXY", "no_proxy"};
	size_t room = p->nenv_allow + p->nenv_set + 16, n = 0;
	char **v = calloc(room, sizeof(*v));
	char http[64], socks[64];
	int ret = v ? 0 : -ENOMEM;

	snprintf(http, sizeof(http), "http://127.0.0.1:%u", px->port);
	snprintf(socks, sizeof(socks), "socks5h://127.0.0.1:%u", px->port);
	if (!ret && !policy_env_names(p, "PATH"))
		ret = env_put(v, &n, "PATH", "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin");
	if (!ret && !policy_env_names(p, "HOME"))
		ret = env_put(v, &n, "HOME", px->tmp);
	if (!ret && !policy_env_names(p, "TMPDIR"))
		ret = env_put(v, &n, "TMPDIR", px->tmp);
	for (size_t i = 0; !ret && i < p->nenv_allow; i++) {
		const char *val = env_get(environ_in, p->env_allow[i]);

		if (val)
			ret = env_put(v, &n, p->env_allow[i], val);
	}
	for (size_t i = 0; !ret && i < p->nenv_set; i++)
		ret = env_put(v, &n, p->env_set[i].name, p->env_set[i].value);
	/* last: the one network path is the proxy, whatever the policy's env says */
	for (size_t i = 0; !ret && i < WD_ARRAY_SIZE(http_vars); i++)
		ret = env_put(v, &n, http_vars[i], http);
	if (!ret)
		ret = env_put(v, &n, "ALL_PROXY", socks);
	if (!ret)
		ret = env_put(v, &n, "all_proxy", socks);
	for (size_t i = 0; !ret && i < WD_ARRAY_SIZE(none_vars); i++)
		ret = env_put(v, &n, none_vars[i], "");
	if (!ret)
		ret = env_put(v, &n, "NODE_USE_ENV_PROXY", "1");
	if (ret) {
		run_proxy_strv_free(v);
		return ret;
	}
	*ret_env = v;
	return 0;
}

static int set_limit(int res, rlim_t v, const char *what, char *why, size_t size)
{
	struct rlimit rl;

	if (getrlimit(res, &rl) < 0)
		rl.rlim_max = RLIM_INFINITY;
	/* never above the hard limit the caller already has */
	if (rl.rlim_max != RLIM_INFINITY && v > rl.rlim_max)
		v = rl.rlim_max;
	rl.rlim_cur = v;
	rl.rlim_max = v;
	if (setrlimit(res, &rl) < 0) {
		int e = errno;

		snprintf(why, size, "%s: setrlimit: %s", what, strerror(e));
		return -e;
	}
	return 0;
}

const char *run_proxy_limits_refused(const struct policy_limits *l)
{
	if (l->memory_mb)
		return "limits.memory_mb: macOS enforces neither RLIMIT_AS nor RLIMIT_DATA and has "
		       "no cgroups, so no memory limit would hold";
	if (l->cpu_milli)
		return "limits.cpu: a share of CPU needs a cgroup; RLIMIT_CPU bounds CPU seconds, "
		       "not a rate";
	return NULL;
}

int run_proxy_rlimits(const struct policy_limits *l, char *why, size_t size)
{
	int ret = 0;

	if (l->disk_mb)
		ret = set_limit(RLIMIT_FSIZE, (rlim_t)l->disk_mb << 20,
				"limits.disk_mb (RLIMIT_FSIZE)", why, size);
	if (!ret && l->pids)
		ret = set_limit(RLIMIT_NPROC, (rlim_t)l->pids, "limits.pids (RLIMIT_NPROC)", why,
				size);
	return ret;
}

void run_proxy_describe_limits(const struct policy_limits *l, unsigned timeout_s, char *out,
			       size_t size)
{
	char disk[80] = "", pids[64] = "", t[64] = "";

	if (l->disk_mb)
		snprintf(disk, sizeof(disk), " largest file %llu MiB (RLIMIT_FSIZE);",
			 (unsigned long long)l->disk_mb);
	if (l->pids)
		snprintf(pids, sizeof(pids), " processes %u (RLIMIT_NPROC, per user);", l->pids);
	if (timeout_s)
		snprintf(t, sizeof(t), " wall time %u s (watchdog);", timeout_s);
	snprintf(out, size, "limits:%s%s%s%s", disk, pids, t,
		 disk[0] || pids[0] || t[0] ? " no cgroups" : " none");
}

static void drain(void)
{
	unsigned char b[64];

	while (read(sig_pipe[0], b, sizeof(b)) > 0)
		;
}

int run_proxy_wait(pid_t pid, unsigned timeout_s, bool *ret_timed_out, int *ret_signal)
{
	uint64_t now = wd_mono_ns(),
		 deadline = timeout_s ? now + (uint64_t)timeout_s * 1000000000u : 0, kill_at = 0;
	int forwarded = 0, st = 0;

	*ret_timed_out = false;
	*ret_signal = 0;
	for (;;) {
		struct pollfd pfd = {.fd = sig_pipe[0], .events = POLLIN};
		uint64_t next = kill_at ? kill_at : deadline;
		int wait_ms = -1;
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR) {
			st = 0;
			break;
		}
		if (stop_sig && forwarded != stop_sig) {
			/* passed on to the program's group; it decides how to end */
			forwarded = stop_sig;
			kill(-pid, forwarded);
		}
		now = wd_mono_ns();
		if (deadline && !kill_at && now >= deadline) {
			*ret_timed_out = true;
			kill(-pid, SIGTERM);
			kill_at = now + (uint64_t)RUN_KILL_GRACE_MS * 1000000u;
			continue;
		}
		if (kill_at && now >= kill_at) {
			kill(-pid, SIGKILL);
			kill_at = 0;
			deadline = 0;
			continue;
		}
		if (next)
			wait_ms = (int)((next - now) / 1000000u) + 1;
		if (poll(&pfd, 1, wait_ms) > 0)
			drain();
	}
	/* what the group left behind goes with it */
	kill(-pid, SIGKILL);
	if (WIFSIGNALED(st)) {
		*ret_signal = WTERMSIG(st);
		return *ret_timed_out ? RUN_EXIT_TIMEOUT : 128 + WTERMSIG(st);
	}
	if (*ret_timed_out)
		return RUN_EXIT_TIMEOUT;
	return WIFEXITED(st) ? WEXITSTATUS(st) : RUN_EXIT_WARDEN;
}

static int executable(const char *p)
{
	struct stat st;

	if (stat(p, &st) < 0)
		return -ENOENT;
	if (!S_ISREG(st.st_mode) || access(p, X_OK) < 0)
		return -EACCES;
	return 0;
}

int run_proxy_find(const char *name, const char *path, char *out, size_t size)
{
	const char *s, *e;
	char cand[PATH_MAX];
	int ret = -ENOENT, r;

	if (!*name)
		return -ENOENT;
	if (strchr(name, '/')) {
		if (strlen(name) >= size)
			return -ENAMETOOLONG;
		r = executable(name);
		if (!r)
			memcpy(out, name, strlen(name) + 1);
		return r;
	}
	if (!path || !*path)
		path = "/usr/bin:/bin";
	for (s = path; s; s = *e ? e + 1 : NULL) {
		e = strchr(s, ':');
		if (!e)
			e = s + strlen(s);
		/* an empty entry (the current folder) is not searched */
		if (e == s || snprintf(cand, sizeof(cand), "%.*s/%s", (int)(e - s), s, name) >=
				  (int)sizeof(cand))
			continue;
		r = executable(cand);
		if (!r) {
			if (strlen(cand) >= size)
				return -ENAMETOOLONG;
			memcpy(out, cand, strlen(cand) + 1);
			return 0;
		}
		if (r == -EACCES)
			ret = -EACCES;
	}
	return ret;
}

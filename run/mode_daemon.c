/* run_daemon.c - daemon mode (`warden run` as a user, through the host's warden-gateway): the
 * run's user and network namespaces are made as in rootless mode, but bare (no addresses, no
 * table of their own, no gateway sockets: a "bare" maker, run_rootless.c), and handed to the
 * daemon with `register` over its control socket: the namespace's descriptor (SCM_RIGHTS) and
 * the policy's text. The daemon checks that the namespace is the caller's, plumbs it (the veth,
 * addresses, routes, the host table's elements, a cgroup delegated to the caller) and answers
 * with the facts, which become the run's network. The connection stays open for the run's
 * life: the daemon unregisters the run when it closes (the launcher is gone), and its end tells
 * the launcher that the daemon is gone (run_wait.c ends the run with 125). */
#include "run/internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/* Longest wait for the daemon's answer to register (it plumbs a namespace meanwhile). */
#define DAEMON_REGISTER_MS 10000

enum run_daemon_found run_daemon_probe(const char *socket, char *why, size_t size)
{
	json_t *req = json_pack("{s:s}", "op", "stats"), *ans = NULL;
	char e[300] = "";
	bool plumbs;
	int ret;

	ret = req ? run_gw_call(socket, req, 1000, &ans, e, sizeof(e)) : -ENOMEM;
	json_decref(req);
	switch (-ret) {
	case 0:
		break;
	case ENOENT:
	case ENOTDIR:
	case ECONNREFUSED:
		/* no socket, or one nobody listens on (a stopped daemon's) */
		snprintf(why, size, "no gateway answers on %s (%s)", socket, strerror(-ret));
		return RUN_DAEMON_NONE;
	case EACCES:
		snprintf(why, size,
			 "a gateway daemon's socket %s is there, but you may not use it (not in "
			 "its group)",
			 socket);
		return RUN_DAEMON_DENIED;
	case EPERM:
		/* it answered "ok": false: its reason */
		snprintf(why, size, "the gateway daemon on %s refused: %s", socket, e);
		return RUN_DAEMON_FAILED;
	default:
		snprintf(why, size, "the gateway daemon on %s did not answer: %s", socket,
			 strerror(-ret));
		return RUN_DAEMON_FAILED;
	}
	plumbs = json_is_true(json_object_get(ans, "manage_nft"));
	json_decref(ans);
	if (plumbs)
		return RUN_DAEMON_OK;
	snprintf(why, size,
		 "the gateway on %s does not plumb runs (it was started without "
		 "--manage-nft, or not as root)",
		 socket);
	return RUN_DAEMON_NO_PLUMB;
}

bool run_daemon_answers(const char *socket, char *why, size_t size)
{
	return run_daemon_probe(socket, why, size) == RUN_DAEMON_OK;
}

static int addr_fact(const json_t *ans, const char *key, int family, char *out, size_t size)
{
	const char *s = json_string_value(json_object_get(ans, key));
	unsigned char b[16];

	if (!s || inet_pton(family, s, b) != 1 || strlen(s) >= size)
		return -EBADMSG;
	strcpy(out, s);
	return 0;
}

int run_daemon_facts(struct run *r, const json_t *ans)
{
	const char *ifname = json_string_value(json_object_get(ans, "if"));
	json_t *cg = json_object_get(ans, "cgroups"), *v;
	size_t i, n;

	if (!ifname || !ifname[0] || strlen(ifname) >= sizeof(r->network.net.ifname) ||
	    addr_fact(ans, "host_v4", AF_INET, r->network.host4, sizeof(r->network.host4)) ||
	    addr_fact(ans, "sandbox_v4", AF_INET, r->rec.sbx4, sizeof(r->rec.sbx4)) ||
	    addr_fact(ans, "host_v6", AF_INET6, r->network.host6, sizeof(r->network.host6)) ||
	    addr_fact(ans, "sandbox_v6", AF_INET6, r->rec.sbx6, sizeof(r->rec.sbx6)) ||
	    !json_is_array(cg))
		return -EBADMSG;
	snprintf(r->network.net.ifname, sizeof(r->network.net.ifname), "%s", ifname);
	memset(&r->limits.lim, 0, sizeof(r->limits.lim));
	r->limits.lim.lim = r->input.pol->limits;
	n = json_array_size(cg);
	if (n != 0 && n != 1 && n != LIMITS_V1_COUNT)
		return -EBADMSG;
	json_array_foreach(cg, i, v)
	{
		const char *d = json_string_value(v);

		if (!d || d[0] != '/' || strlen(d) >= sizeof(r->limits.lim.dir[i]))
			return -EBADMSG;
		snprintf(r->limits.lim.dir[i], sizeof(r->limits.lim.dir[i]), "%s", d);
	}
	r->limits.lim.kind = n == 1 ? LIMITS_CGROUP2 : n ? LIMITS_CGROUP1 : LIMITS_SAMPLING;
	r->limits.lkind = r->limits.lim.kind;
	return 0;
}

/* connect to @path; Return: the socket, or a negative errno */
static int connect_to(const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd, ret;

	if (strlen(path) >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

/* the answer line on @fd (up to DAEMON_REGISTER_MS); what came after its newline (the run's
 * first event lines) is left in @rest. Return: 0 or -errno; *@ret_ans malloc'd */
static int read_answer(int fd, char **ret_ans, struct wd_buf *rest)
{
	struct wd_buf in = WD_BUF_INIT;
	char buf[4096];
	ssize_t n;
	int ret = 0;

	for (;;) {
		struct pollfd p = {fd, POLLIN, 0};

		if (poll(&p, 1, DAEMON_REGISTER_MS) != 1) {
			ret = -ETIMEDOUT;
			break;
		}
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -ECONNRESET;
			break;
		}
		if (wd_buf_append(&in, buf, (size_t)n)) {
			ret = -ENOMEM;
			break;
		}
		if (memchr(buf, '\n', (size_t)n))
			break;
	}
	if (!ret && in.len) {
		char *nl = memchr(in.data, '\n', in.len);
		size_t k = nl ? (size_t)(nl - in.data) + 1 : in.len;

		if (k < in.len && wd_buf_append(rest, in.data + k, in.len - k))
			ret = -ENOMEM;
		in.data[k - 1 + !nl] = '\0';
		in.len = k;
		*ret_ans = in.data;
		in.data = NULL;
	} else if (!ret) {
		ret = -ECONNRESET;
	}
	wd_buf_free(&in);
	return ret;
}

/* the request line with @netns_fd attached to its bytes, then the answer line (read_answer());
 * Return: 0 or -errno; *@ret_ans malloc'd */
static int call_with_fd(int fd, const char *line, int netns_fd, char **ret_ans, struct wd_buf *rest)
{
	size_t len = strlen(line);
	ssize_t n = wd_send_fds(fd, line, len, &netns_fd, 1, 0);
	int ret = n < 0 ? (int)n : 0;

	if (!ret && (size_t)n < len)
		ret = wd_write_all(fd, line + n, len - (size_t)n);
	if (!ret)
		ret = wd_write_all(fd, "\n", 1);
	/* a daemon that refuses the connection at once (a bound reached) says why in a line and
	 * closes it, maybe before the request was sent: that line is the answer */
	if (ret == -EPIPE || ret == -ECONNRESET)
		return read_answer(fd, ret_ans, rest) ? ret : 0;
	if (ret)
		return ret;
	return read_answer(fd, ret_ans, rest);
}

int run_daemon_up(struct run *r)
{
	struct run_rootless_plan p = {.uid = getuid(), .gid = getgid(), .bare = true};
	const char *slash = strrchr(r->input.policy_abs, '/');
	char *line = NULL, *ans_text = NULL;
	json_t *req, *ans = NULL;
	struct wd_err err;
	int fd, ret;

	wd_err_clear(&err);
	ret = run_rootless_make(&r->network.rl, &p, &err);
	if (ret)
		return run_fail(r, "network", "`warden doctor` checks what a user's run needs",
				"%s", err.msg[0] ? err.msg : strerror(-ret));
	r->network.net.netns_fd = r->network.rl.netns_fd;
	/* recorded first: a crash from here on still gets the run unregistered (the daemon
	 * also does it when this connection closes) */
	snprintf(r->rec.gw_socket, sizeof(r->rec.gw_socket), "%s", r->gateway.gw.socket);
	run_state_save(r);
	/* "stream": the daemon sends the run's audit lines on this connection too, for the
	 * user's own log (run_daemon_events()); a daemon older than that refuses the key, and is
	 * asked once more without it */
	for (int stream = 1;; stream = 0) {
		const char *e;

		req =
		    json_pack("{s:s, s:s, s:s, s:s, s:s%}", "op", "register", "id", r->id, "netns",
			      "fd", "policy_name", slash ? slash + 1 : r->input.policy_abs,
			      "policy", r->input.policy_text, r->input.policy_len);
		if (req && stream)
			json_object_set_new(req, "stream", json_string("events"));
		if (req && r->learn)
			json_object_set_new(req, "learn", json_true());
		if (req && r->o.shadow)
			json_object_set_new(req, "shadow", json_true());
		if (req && run_ask_person(r))
			json_object_set_new(req, "asker", json_true());
		line = req ? json_dumps(req, JSON_COMPACT) : NULL;
		json_decref(req);
		if (!line)
			return run_fail(r, "network", NULL, "out of memory");
		fd = connect_to(r->gateway.gw.socket);
		if (fd < 0) {
			free(line);
			return run_fail(
			    r, "network",
			    "start warden-gateway (as root: warden-gateway --manage-nft), "
			    "or use --mode rootless",
			    "no gateway daemon answers on %s (%s)", r->gateway.gw.socket,
			    strerror(-fd));
		}
		wd_buf_reset(&r->gateway.gw_in);
		ret = call_with_fd(fd, line, r->network.rl.netns_fd, &ans_text, &r->gateway.gw_in);
		free(line);
		if (!ret) {
			ans = json_loads(ans_text, 0, NULL);
			ret = ans ? 0 : -EBADMSG;
		}
		free(ans_text);
		ans_text = NULL;
		if (ret) {
			close(fd);
			return run_fail(r, "network", "check the gateway daemon's log",
					"registering with the gateway daemon on %s: %s",
					r->gateway.gw.socket, strerror(-ret));
		}
		if (json_is_true(json_object_get(ans, "ok")))
			break;
		e = json_string_value(json_object_get(ans, "error"));
		if (stream && e && strstr(e, "unknown key `stream`")) {
			json_decref(ans);
			close(fd);
			if (!r->o.quiet)
				wd_say(stderr,
				       "warden run: the gateway daemon on %s is older than "
				       "this warden: its events of the run stay in its "
				       "central log only",
				       r->gateway.gw.socket);
			continue;
		}
		ret = run_fail(r, "network", "see the daemon's reason",
			       "the gateway daemon on %s refused the run: %s", r->gateway.gw.socket,
			       e ? e : "no reason given");
		json_decref(ans);
		close(fd);
		return ret;
	}
	r->gateway.gw_hold = fd;
	r->gateway.registered = true;
	ret = run_daemon_facts(r, ans);
	json_decref(ans);
	if (ret)
		return run_fail(r, "network", "check the gateway daemon's version",
				"the gateway daemon's answer lacks the run's facts");
	/* the interface and the cgroups are the daemon's to remove: not in the record */
	run_state_save(r);
	run_note(r, "network: %s, plumbed by the gateway daemon on %s (uid %u's namespace)",
		 r->network.net.ifname, r->gateway.gw.socket, (unsigned)p.uid);
	return 0;
}

/* one line of the held connection (no newline): an event of this run into the user's log, else
 * refused and counted. Return: 1 an event, 0 not one (an answer) */
static int event_line(struct run *r, const char *line, size_t len)
{
	static const char open[] = "{\"event\":";
	struct audit_event ev;
	struct wd_err err;
	int ret;

	if (len < sizeof(open) || memcmp(line, open, sizeof(open) - 1) || line[len - 1] != '}')
		return 0;
	wd_err_clear(&err);
	/* the daemon's line exactly, between the frame's braces: decoded (a line that is no
	 * event is refused), then written by the same writer as the launcher's own events */
	ret = audit_event_decode(line + sizeof(open) - 1, len - sizeof(open), &ev, &err);
	if (ret || strcmp(ev.run, r->id)) {
		r->gateway.gw_events_bad++;
		if (!ret)
			audit_event_clear(&ev);
		return 1;
	}
	if (r->audit.log) {
		ret = audit_log_write(r->audit.log, &ev, 0, &err);
		if (ret)
			wd_say(stderr, "warden run: audit: %s",
			       err.msg[0] ? err.msg : strerror(-ret));
	}
	r->gateway.gw_events++;
	audit_event_clear(&ev);
	return 1;
}

/* the whole lines in r->gateway.gw_in: events written; the first other line into *@ret_answer (or
 * refused when @ret_answer is NULL). Return: true when an answer was taken */
static bool take_lines(struct run *r, char **ret_answer)
{
	size_t off = 0;
	bool answered = false;
	char *nl;

	while (!answered && off < r->gateway.gw_in.len &&
	       (nl = memchr(r->gateway.gw_in.data + off, '\n', r->gateway.gw_in.len - off))) {
		size_t len = (size_t)(nl - (r->gateway.gw_in.data + off));
		const char *line = r->gateway.gw_in.data + off;

		if (!event_line(r, line, len)) {
			if (ret_answer) {
				*ret_answer = strndup(line, len);
				answered = true;
			} else {
				r->gateway.gw_events_bad++;
			}
		}
		off += len + 1;
	}
	memmove(r->gateway.gw_in.data, r->gateway.gw_in.data + off, r->gateway.gw_in.len - off);
	r->gateway.gw_in.len -= off;
	return answered;
}

int run_daemon_events(struct run *r, char **ret_answer)
{
	char buf[65536];

	for (;;) {
		ssize_t n;

		if (take_lines(r, ret_answer))
			return 0;
		n = recv(r->gateway.gw_hold, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? 0 : -errno;
		if (n == 0)
			return -ECONNRESET;
		/* an event line is at most an audit line and its frame */
		if (wd_buf_append(&r->gateway.gw_in, buf, (size_t)n) ||
		    r->gateway.gw_in.len > 2 * AUDIT_LINE_MAX)
			return -EBADMSG;
	}
}

/* the next answer line on the held connection, the event lines before it copied into the
 * user's log, until @end (wd_mono_ns()). Return: 0 (*@text malloc'd) or -errno */
static int await_answer(struct run *r, uint64_t end, char **text)
{
	int ret = 0;

	*text = NULL;
	while (!ret && !*text) {
		struct pollfd p = {r->gateway.gw_hold, POLLIN, 0};
		uint64_t now = wd_mono_ns();

		if (now >= end)
			return -ETIMEDOUT;
		ret = run_daemon_events(r, text);
		if (ret || *text)
			break;
		if (poll(&p, 1, (int)((end - now) / 1000000ull) + 1) < 0 && errno != EINTR)
			ret = -errno;
	}
	return ret;
}

int run_daemon_unregister(struct run *r, int timeout_ms, char *why, size_t size)
{
	json_t *req = json_pack("{s:s, s:s}", "op", "unregister", "id", r->id), *ans;
	char *line = req ? json_dumps(req, JSON_COMPACT) : NULL, *text = NULL;
	uint64_t end = wd_mono_ns() + (uint64_t)timeout_ms * 1000000ull;
	int ret = line ? 0 : -ENOMEM;

	json_decref(req);
	if (!ret && (wd_write_all(r->gateway.gw_hold, line, strlen(line)) ||
		     wd_write_all(r->gateway.gw_hold, "\n", 1)))
		ret = -EPIPE;
	free(line);
	if (!ret)
		ret = await_answer(r, end, &text);
	if (ret) {
		snprintf(why, size, "the daemon on %s: %s", r->gateway.gw.socket, strerror(-ret));
		return ret;
	}
	ans = json_loads(text, 0, NULL);
	free(text);
	if (!json_is_true(json_object_get(ans, "ok"))) {
		const char *e = json_string_value(json_object_get(ans, "error"));

		snprintf(why, size, "the daemon on %s: %s", r->gateway.gw.socket,
			 e ? e : "no answer");
		ret = -EPROTO;
	}
	json_decref(ans);
	return ret;
}

/* has @pid entered the namespace @netns_fd? */
static bool in_netns(pid_t pid, int netns_fd)
{
	struct stat want, got;
	char p[64];

	snprintf(p, sizeof(p), "/proc/%d/ns/net", (int)pid);
	return !fstat(netns_fd, &want) && !stat(p, &got) && want.st_dev == got.st_dev &&
	       want.st_ino == got.st_ino;
}

int run_daemon_join(struct run *r, pid_t pid)
{
	char line[160], *ans_text = NULL;
	json_t *ans = NULL;
	int ret = 0, i;

	/* the child enters the run's namespaces first thing; the daemon moves it only once it
	 * is there. A child that failed before has exited: its report is the spawn's to say */
	for (i = 0; i < 2000 && !in_netns(pid, r->network.net.netns_fd); i++) {
		siginfo_t si = {0};

		if (!waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) && si.si_pid)
			return 0;
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	}
	if (i == 2000)
		return run_fail(r, "limits", "check `warden doctor`",
				"the sandbox's first process did not enter the run's namespace");
	snprintf(line, sizeof(line), "{\"op\":\"cgroup_join\",\"id\":\"%s\",\"pid\":\"%d\"}\n",
		 r->id, (int)pid);
	if (wd_write_all(r->gateway.gw_hold, line, strlen(line)))
		ret = -EIO;
	/* the run's event lines may come first on this connection: copied, then the answer */
	if (!ret)
		ret = await_answer(r, wd_mono_ns() + (uint64_t)DAEMON_REGISTER_MS * 1000000ull,
				   &ans_text);
	if (!ret) {
		ans = json_loads(ans_text, 0, NULL);
		ret = ans ? 0 : -EBADMSG;
	}
	free(ans_text);
	if (ret)
		return run_fail(r, "limits", "check the gateway daemon's log",
				"asking the gateway daemon to move the sandbox into its cgroup: %s",
				strerror(-ret));
	if (!json_is_true(json_object_get(ans, "ok"))) {
		const char *e = json_string_value(json_object_get(ans, "error"));

		ret = run_fail(
		    r, "limits", "see the daemon's reason",
		    "the gateway daemon did not move the sandbox into the run's cgroup: %s",
		    e ? e : "no reason given");
		json_decref(ans);
		return ret;
	}
	json_decref(ans);
	run_note(r, "limits: the sandbox moved into %s by the gateway daemon",
		 r->limits.lim.dir[0]);
	return 0;
}

/* Until the daemon names the run's cgroup (the network stage): sampling. */
static int daemon_prereq(struct run *r)
{
	r->limits.lkind = LIMITS_SAMPLING;
	return 0;
}

/* The daemon made and delegated them (run_daemon_facts()), or none: sampling; not in the
 * record: they are the daemon's to remove. */
static int daemon_limits(struct run *r)
{
	if (r->limits.lim.kind != LIMITS_SAMPLING)
		run_note(r, "limits: the run's %s cgroup, made by the gateway daemon",
			 limits_kind_name(r->limits.lim.kind));
	return 0;
}

static void daemon_isolation(const struct run *r, const char *sb, char *out, size_t size)
{
	/* the daemon plumbs the network and makes the cgroup (when its mount namespace shows
	 * one: else memory sampling, as rootless; run.exit's limit events say which) */
	snprintf(out, size,
		 "userns+netns+veth(daemon)+nft(host),%s,uid=%u,limits=cgroup-by-daemon"
		 "|memory:pss-sampling+pids:rlimit-nproc(userns)+time:wall-clock",
		 sb, (unsigned)r->input.uid);
}

/* After the unregister (run.c): the held connection closed, the cgroups left to the daemon,
 * which removes them. */
static void daemon_finish(struct run *r, const struct run_outcome *o)
{
	(void)o;
	r->gateway.registered = false;
	wd_closep(&r->gateway.gw_hold);
	wd_buf_free(&r->gateway.gw_in);
	memset(&r->limits.lim, 0, sizeof(r->limits.lim));
}

const struct run_mode_ops run_mode_daemon = {
    .name = "daemon",
    .own_userns = true,
    .by_daemon = true,
    .gateway_inside = false,
    .prereq = daemon_prereq,
    .net_up = run_daemon_up,
    .net_down = run_rootless_down,
    .limits = daemon_limits,
    .isolation = daemon_isolation,
    .finish = daemon_finish,
};

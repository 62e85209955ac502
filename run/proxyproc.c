/* proxyproc.c - the program's side of a proxy run (proxyrun.h; the gateway's side is
 * proxyrun.c; its environment is proxyenv.c's): the signals warden takes into a self-pipe, the
 * rlimits the policy's limits map to (and the limits that cannot hold,
 * refused), the command found before anything starts, and the wait: one poll() on the
 * self-pipe, stop signals passed to the program's process group, the wall-time watchdog
 * (SIGTERM, then SIGKILL after RUN_KILL_GRACE_MS), the memory limit by sampling the group
 * (proxymem.c), what is left of the group killed once the program ends. No Linux header:
 * builds for macOS. */
#include "run/proxyrun.h"
#include "run/run.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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
	char disk[80] = "", pids[64] = "", t[64] = "", mem[120] = "";

	if (l->disk_mb)
		snprintf(disk, sizeof(disk), " largest file %llu MiB (RLIMIT_FSIZE);",
			 (unsigned long long)l->disk_mb);
	if (l->pids)
		snprintf(pids, sizeof(pids), " processes %u (RLIMIT_NPROC, per user);", l->pids);
	if (timeout_s)
		snprintf(t, sizeof(t), " wall time %u s (watchdog);", timeout_s);
	if (l->memory_mb)
		snprintf(mem, sizeof(mem),
			 " memory %llu MiB (the process group's, sampled every %d ms);",
			 (unsigned long long)l->memory_mb, RUN_PROXY_MEM_SAMPLE_MS);
	snprintf(out, size, "limits:%s%s%s%s%s", mem, disk, pids, t,
		 mem[0] || disk[0] || pids[0] || t[0] ? " no cgroups" : " none");
}

static void drain(void)
{
	unsigned char b[64];

	while (read(sig_pipe[0], b, sizeof(b)) > 0)
		;
}

int run_proxy_wait(pid_t pid, unsigned timeout_s, uint64_t mem_kb, struct run_proxy_waited *ret)
{
	uint64_t now = wd_mono_ns(),
		 deadline = timeout_s ? now + (uint64_t)timeout_s * 1000000000u : 0, kill_at = 0,
		 sample_at = mem_kb ? now : 0;
	int forwarded = 0, st = 0;

	*ret = (struct run_proxy_waited){0};
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
			ret->timed_out = true;
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
		if (sample_at && now >= sample_at) {
			uint64_t kb = 0;

			sample_at = now + (uint64_t)RUN_PROXY_MEM_SAMPLE_MS * 1000000u;
			if (!run_proxy_group_mem_kb(pid, &kb) && kb > ret->mem_peak_kb)
				ret->mem_peak_kb = kb;
			if (kb > mem_kb && !ret->mem_hit) {
				/* no grace: memory past the limit is what a cgroup refuses outright
				 */
				ret->mem_hit = true;
				kill(-pid, SIGKILL);
				sample_at = 0;
			}
		}
		if (sample_at && (!next || sample_at < next))
			next = sample_at;
		if (next)
			wait_ms = next > now ? (int)((next - now) / 1000000u) + 1 : 0;
		if (poll(&pfd, 1, wait_ms) > 0)
			drain();
	}
	/* what the group left behind goes with it */
	kill(-pid, SIGKILL);
	if (WIFSIGNALED(st)) {
		ret->signal = WTERMSIG(st);
		return ret->timed_out ? RUN_EXIT_TIMEOUT : 128 + WTERMSIG(st);
	}
	if (ret->timed_out)
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

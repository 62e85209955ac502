/* run_wait.c - the wait stage of `warden run`: one poll loop over the signalfd (SIGCHLD of the
 * sandbox and of an embedded gateway; SIGINT/SIGTERM/SIGHUP forwarded to the program), the
 * sandbox backend's descriptor, the timeout's two timers (SIGTERM to the program's tree, then
 * SIGKILL to everything RUN_KILL_GRACE_MS later), when no cgroup limits memory, the RSS
 * sampling timer, the run's cgroup v2 events files (limits_watch.c: the OOM kills and refused
 * forks as they happen), and the stdio relay's descriptors (run_stdio.c); once the program
 * ended, the relay delivers what it wrote. */
#include "run/internal.h"
#include "run/learn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* How often network.ask's requests are looked at (ask.c): the gateway's asks, the store */
#define RUN_ASK_TICK_MS 250

/* How often the memory of a run without a memory cgroup is sampled. */
#define RSS_SAMPLE_MS 100

/*
 * The memory sampling fallback's judge (docs/run.md, "memory sampling"): the resident sizes
 * summed (counters: cheap) bound the proportional set sizes from above, so under the limit
 * they settle it; over it the PSS are read, which makes the kernel walk every page table of
 * the run (about 3 ms for each process with 64 MiB mapped: 0.35 s for 120 forks of a 64 MiB
 * Python), so such a pass starts at most every four times as long as the last one took (the
 * launcher spends at most a fifth of a core on it, and the wait is never blocked longer than
 * one pass). Between two passes the run is not judged: a burst then is seen at the next pass.
 */
struct mem_sampler {
	uint64_t next_ns; /* no PSS pass before this (CLOCK_MONOTONIC) */
	uint64_t last_kb; /* the last figure judged */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The run's memory in KiB, in *@ret_kb; Return: whether it may be judged now. */
static bool mem_sample(struct mem_sampler *ms, pid_t pid, uint64_t limit_kb, uint64_t *ret_kb)
{
	uint64_t kb = limits_rss_kb(pid), t0, took;

	if (kb <= limit_kb) {
		ms->last_kb = kb;
		*ret_kb = kb;
		return true;
	}
	t0 = mono_ns();
	if (t0 < ms->next_ns) {
		*ret_kb = ms->last_kb;
		return false;
	}
	kb = limits_pss_kb(pid);
	took = mono_ns() - t0;
	ms->next_ns = t0 + (took * 4 > (uint64_t)RSS_SAMPLE_MS * 1000000u
				? took * 4
				: (uint64_t)RSS_SAMPLE_MS * 1000000u);
	ms->last_kb = kb;
	*ret_kb = kb;
	return true;
}

static void arm(int tfd, uint64_t ms, uint64_t interval_ms)
{
	struct itimerspec it = {
	    {(time_t)(interval_ms / 1000), (long)(interval_ms % 1000) * 1000000L},
	    {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L}};

	if (!ms && !interval_ms)
		it.it_value.tv_nsec = 0;
	timerfd_settime(tfd, 0, &it, NULL);
}

/* The watch's two files into @ev[0] (memory.events) and @ev[1] (pids.events), polled for the
 * kernel's change notification. */
static void watch_fds(const struct limits_watch *w, struct pollfd ev[2])
{
	ev[0] = (struct pollfd){w->mem_fd, POLLPRI, 0};
	ev[1] = (struct pollfd){w->pids_fd, POLLPRI, 0};
}

static void watch_open(struct limits_watch *w, const char *dir, struct pollfd ev[2])
{
	if (!limits_watch_open(w, dir))
		watch_fds(w, ev);
}

/* the rootless run's scope, once the sandbox's first process @pid is in it */
static void watch_scope(struct limits_watch *w, pid_t pid, const char *unit, struct pollfd ev[2])
{
	if (w->mem_fd < 0 && w->pids_fd < 0 && !limits_watch_scope(w, pid, unit))
		watch_fds(w, ev);
}

/* How often the wait asks the backend for the program's process until it has it. */
#define PROGRAM_FIND_MS 5

/* Field 52 of /proc/PID/stat in the folder @procfd: the wait status of a process that has
 * exited and is not reaped yet (a zombie). Return: 0, -ENOENT (reaped: gone), or -EIO. */
static int zombie_status(int procfd, int *ret)
{
	char buf[4096], *s, *end;
	ssize_t n;
	long v = 0;
	int fd = openat(procfd, "stat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return errno == ESRCH || errno == ENOENT ? -ENOENT : -EIO;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return errno == ESRCH ? -ENOENT : -EIO;
	if (n == 0)
		return -EIO;
	buf[n] = '\0';
	/* after the name (which may hold anything) come fields 3 (state) to 52 */
	s = strrchr(buf, ')');
	if (!s || s[1] != ' ' || s[2] != 'Z')
		return s && s[1] == ' ' && s[2] == 'X' ? -ENOENT : -EIO;
	s += 2;
	/* field 3 is the state; 4 to 52 are numbers (some unsigned and as large as 2^64 - 1,
	 * RLIM_INFINITY: skipped as text), 52 the exit code */
	s = strchr(s, ' ');
	for (int field = 4; s && field <= 52; field++) {
		s += strspn(s, " ");
		if (field == 52) {
			errno = 0;
			v = strtol(s, &end, 10);
			if (end == s || errno || (*end && *end != ' ' && *end != '\n'))
				return -EIO;
			break;
		}
		s = strchr(s, ' ');
	}
	if (!s || v < 0 || v > 0xffff)
		return -EIO;
	*ret = (int)v;
	return 0;
}

/* The program's pidfd is readable: it has ended. Its status, if its zombie is still there
 * (the sandbox's init did not reap it: a program that holds the init stopped would otherwise
 * hold the run), and the run ends now: the init killed, the kernel ends the pid namespace. */
static void program_ended(struct run *r, struct run_outcome *o, int procfd)
{
	int st, ret = zombie_status(procfd, &st);

	if (ret == -ENOENT)
		return; /* reaped: the init goes on to its own end, bwrap reports the status */
	o->prog_ended = true;
	/* a status that cannot be read is Warden's failure, not the program's: 125 */
	o->prog_wstatus = ret ? W_EXITCODE(RUN_EXIT_WARDEN, 0) : st;
	run_sandbox_signal(r, SANDBOX_INSIDE, SIGKILL);
}

void run_wait(struct run *r, struct run_outcome *o)
{
	enum {
		FD_SIG,
		FD_EVENT,
		FD_GW,
		FD_MEMEV, /* the watch's: closed by limits_watch_close() */
		FD_PIDSEV,
		FD_TIMEOUT,
		FD_KILL,
		FD_SAMPLE,
		FD_FIND,
		FD_PROG,
		FD_ASK, /* network.ask's turn (ask.c), when a person can answer */
		FD_N
	};
	struct pollfd pfd[FD_N + RUN_STDIO_NPOLL];
	unsigned timeout_s = r->o.timeout_s ? r->o.timeout_s : r->input.pol->limits.timeout_s;
	uint64_t mem_kb = r->input.pol->limits.memory_mb * 1024;
	bool tty = isatty(STDIN_FILENO);
	bool learn_samples = r->learner && r->learner->sample; /* a trace measures */
	pid_t pid = run_sandbox_pid(r);
	struct mem_sampler ms = {0, 0};
	struct limits_watch cw;
	char unit[64];
	int procfd = -1;

	for (int i = 0; i < FD_N; i++)
		pfd[i] = (struct pollfd){-1, POLLIN, 0};
	pfd[FD_SIG].fd = r->sigfd;
	pfd[FD_EVENT].fd = run_sandbox_event_fd(r);
	/* daemon mode: the connection the run is registered over ends when the daemon does */
	pfd[FD_GW].fd = r->gateway.gw_hold;
	pfd[FD_GW].events = POLLIN | POLLRDHUP;
	/* the run's cgroup v2 (root and daemon mode) is known now; a rootless run's systemd scope
	 * once its first process is in it (FD_FIND's ticks) */
	limits_watch_init(&cw);
	snprintf(unit, sizeof(unit), "warden-%s.scope", r->id);
	if (r->limits.lim.kind == LIMITS_CGROUP2 && r->limits.lim.dir[0][0])
		watch_open(&cw, r->limits.lim.dir[0], pfd + FD_MEMEV);
	pfd[FD_TIMEOUT].fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	pfd[FD_KILL].fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	/* a trace measures the peaks whatever limits the run */
	if ((r->limits.lkind == LIMITS_SAMPLING && mem_kb) || learn_samples) {
		pfd[FD_SAMPLE].fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
		arm(pfd[FD_SAMPLE].fd, learn_samples ? 10 : RSS_SAMPLE_MS, RSS_SAMPLE_MS);
	}
	if (timeout_s)
		arm(pfd[FD_TIMEOUT].fd, (uint64_t)timeout_s * 1000, 0);
	/* the program's own process, asked for until the backend has it; its end is the run's */
	pfd[FD_FIND].fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	arm(pfd[FD_FIND].fd, PROGRAM_FIND_MS, PROGRAM_FIND_MS);
	if (run_ask_person(r)) {
		pfd[FD_ASK].fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
		arm(pfd[FD_ASK].fd, RUN_ASK_TICK_MS, RUN_ASK_TICK_MS);
	}
	for (;;) {
		/* the stdio relay's descriptors (none when stdio is inherited) */
		run_stdio_poll(r, pfd + FD_N);
		if (poll(pfd, FD_N + RUN_STDIO_NPOLL, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		run_stdio_io(r, pfd + FD_N);
		if (pfd[FD_EVENT].revents && run_sandbox_event(r))
			pfd[FD_EVENT].fd = -1;
		if (pfd[FD_GW].revents && !o->gw_gone) {
			/* the run's audit lines into the user's log; its end: the daemon is gone */
			int n = run_daemon_events(r, NULL);

			if (n == -EBADMSG) {
				wd_say(stderr,
				       "warden run: the gateway daemon on %s sent a line "
				       "too long for an event; ending the run",
				       r->gateway.gw.socket);
			}
			if (n < 0) {
				/* fail closed: nothing routes around the daemon, and the program
				 * does not go on without it */
				wd_say(stderr,
				       "warden run: the gateway daemon on %s went away: "
				       "ending the run",
				       r->gateway.gw.socket);
				snprintf(
				    r->gateway.gw_lost_why, sizeof(r->gateway.gw_lost_why),
				    "the gateway daemon on %s went away during the run: the run "
				    "was ended (its traffic had stopped); connections open then "
				    "have no net.close and the counts are incomplete",
				    r->gateway.gw.socket);
				snprintf(r->audit.fail_reason, sizeof(r->audit.fail_reason),
					 "gateway: %s", r->gateway.gw_lost_why);
				r->gateway.gw_lost = true;
				o->gw_gone = true;
				pfd[FD_GW].fd = -1;
				run_sandbox_signal(r, SANDBOX_INSIDE, SIGKILL);
				limits_signal(&r->limits.lim, SIGKILL);
				kill(pid, SIGKILL);
			}
		}
		if ((pfd[FD_MEMEV].revents | pfd[FD_PIDSEV].revents) & (POLLPRI | POLLERR))
			limits_watch_read(&cw);
		if (pfd[FD_FIND].fd >= 0 && (pfd[FD_FIND].revents & POLLIN)) {
			uint64_t x;
			int ret;

			if (read(pfd[FD_FIND].fd, &x, sizeof(x)) > 0) {
				if (r->limits.scope)
					watch_scope(&cw, pid, unit, pfd + FD_MEMEV);
				ret = run_sandbox_program(r, &pfd[FD_PROG].fd, &procfd);
				if (ret != -EAGAIN)
					wd_closep(&pfd[FD_FIND].fd);
			}
		}
		if (pfd[FD_PROG].fd >= 0 && (pfd[FD_PROG].revents & POLLIN)) {
			program_ended(r, o, procfd);
			wd_closep(&pfd[FD_PROG].fd);
			wd_closep(&procfd);
		}
		if (pfd[FD_ASK].fd >= 0 && (pfd[FD_ASK].revents & POLLIN)) {
			uint64_t x;

			if (read(pfd[FD_ASK].fd, &x, sizeof(x)) > 0)
				run_ask_tick(r);
		}
		if (pfd[FD_TIMEOUT].revents & POLLIN) {
			uint64_t x;

			if (read(pfd[FD_TIMEOUT].fd, &x, sizeof(x)) > 0 && !o->timed_out) {
				o->timed_out = true;
				run_sandbox_signal(r, SANDBOX_TREE, SIGTERM);
				arm(pfd[FD_KILL].fd, RUN_KILL_GRACE_MS, 0);
			}
		}
		if (pfd[FD_KILL].revents & POLLIN) {
			uint64_t x;

			if (read(pfd[FD_KILL].fd, &x, sizeof(x)) > 0) {
				run_sandbox_signal(r, SANDBOX_INSIDE, SIGKILL);
				limits_signal(&r->limits.lim, SIGKILL);
				kill(pid, SIGKILL);
			}
		}
		if (pfd[FD_SAMPLE].fd >= 0 && (pfd[FD_SAMPLE].revents & POLLIN)) {
			uint64_t x, kb;
			bool judged;

			if (read(pfd[FD_SAMPLE].fd, &x, sizeof(x)) > 0) {
				if (learn_samples)
					r->learner->sample(r, pid);
				kb = 0;
				judged = r->limits.lkind == LIMITS_SAMPLING && mem_kb &&
					 mem_sample(&ms, pid, mem_kb, &kb);
				if (kb > o->rss_peak_kb)
					o->rss_peak_kb = kb;
				if (judged && kb > mem_kb && !o->rss_hit) {
					o->rss_hit = true;
					run_sandbox_signal(r, SANDBOX_INSIDE, SIGKILL);
					kill(pid, SIGKILL);
				}
			}
		}
		if (pfd[FD_SIG].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(r->sigfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGCHLD) {
					int gst;

					if (r->gateway.gw.pid > 0 &&
					    waitpid(r->gateway.gw.pid, &gst, WNOHANG) ==
						r->gateway.gw.pid) {
						fprintf(stderr,
							"warden run: the embedded gateway "
							"exited; the run's traffic is dropped\n");
						run_gwclient_died(r, gst);
						r->gateway.gw.pid = 0;
					}
					if (waitpid(pid, &o->wstatus, WNOHANG) == pid)
						goto done;
					continue;
				}
				/* `warden kill` (launcher/cmd_kill.c): end the run as a timeout
				 * does, audited with the sender the kernel names */
				if (si.ssi_signo == SIGTERM && si.ssi_code == SI_QUEUE &&
				    si.ssi_int == RUN_KILL_SIGVAL) {
					if (!o->killed) {
						o->killed = true;
						run_audit_kill(r, (uid_t)si.ssi_uid,
							       (pid_t)si.ssi_pid);
						run_sandbox_signal(r, SANDBOX_TREE, SIGTERM);
						arm(pfd[FD_KILL].fd, RUN_KILL_GRACE_MS, 0);
					}
					continue;
				}
				/* a terminal's ^C already reached the program (same group) */
				if (tty && si.ssi_code == SI_KERNEL)
					continue;
				run_sandbox_signal(r, SANDBOX_PROGRAM, (int)si.ssi_signo);
			}
		}
	}
done:
	/* the last counts (a scope that is gone already keeps what was read) */
	if (r->limits.scope)
		watch_scope(&cw, pid, unit, pfd + FD_MEMEV);
	limits_watch_read(&cw);
	o->oom_kills = cw.oom_kills;
	o->pids_refused = cw.pids_refused;
	limits_watch_close(&cw);
	for (int i = FD_TIMEOUT; i < FD_N; i++)
		if (pfd[i].fd >= 0)
			close(pfd[i].fd);
	wd_closep(&procfd);
	/* what the program wrote reaches the client before the run ends */
	run_stdio_drain(r);
}

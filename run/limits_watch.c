/* limits_watch.c - a run's cgroup v2 limit events as they happen: the OOM kills of its
 * memory.events and the refused forks of its pids.events, watched while the run lives.
 *
 * Theory of operation:
 *   - a cgroup v2 "events" file notifies a change to poll(2) as POLLPRI (with POLLERR); a read
 *     from its start returns the counters and re-arms the notification;
 *   - the wait stage (wait.c) opens both files of the run's cgroup as soon as it knows it
 *     (daemon and root mode: from the start; rootless under the user's systemd: once the
 *     sandbox's first process is in the `warden-<id>.scope` that systemd-run made, read from
 *     its /proc/PID/cgroup), polls them, and remembers the largest counts read;
 *   - the counts outlive the cgroup: a scope is removed by its manager as soon as it is empty,
 *     before run.exit could read it, so what the watch saw is what run.exit reports.
 */
#include "run/limits.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

uint64_t limits_events_value(const char *text, const char *key)
{
	size_t n = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, n) || p[n] != ' ')
			continue;
		/* NOLINTNEXTLINE(cert-err34-c): the kernel's counter; garbage reads as 0 */
		return strtoull(p + n + 1, NULL, 10);
	}
	return 0;
}

int limits_cgroup2_path(const char *text, const char *unit, char *out, size_t size)
{
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		size_t len = strcspn(p, "\n"), ulen = unit ? strlen(unit) : 0;

		if (strncmp(p, "0::/", 4))
			continue;
		p += 3;
		len -= 3;
		/* the cgroup's last component must be @unit: the scope, not where systemd-run
		 * started */
		if (ulen && (len <= ulen || p[len - ulen - 1] != '/' ||
			     strncmp(p + len - ulen, unit, ulen)))
			return -ENOENT;
		if (snprintf(out, size, "/sys/fs/cgroup%.*s", (int)len, p) >= (int)size)
			return -ENAMETOOLONG;
		return 0;
	}
	return -ENOENT;
}

void limits_watch_init(struct limits_watch *w)
{
	memset(w, 0, sizeof(*w));
	w->mem_fd = w->pids_fd = -1;
}

/* Reads one events file from its start (re-arming its notification): @key's count into
 * *@count when larger. */
static void watch_read(int fd, const char *key, uint64_t *count)
{
	char buf[1024];
	ssize_t n;
	uint64_t v;

	if (fd < 0)
		return;
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return;
	buf[n] = '\0';
	v = limits_events_value(buf, key);
	if (v > *count)
		*count = v;
}

int limits_watch_open(struct limits_watch *w, const char *dir)
{
	char p[PATH_MAX];

	if (w->mem_fd >= 0 || w->pids_fd >= 0)
		return 0;
	if (snprintf(p, sizeof(p), "%s/memory.events", dir) >= (int)sizeof(p))
		return -ENAMETOOLONG;
	w->mem_fd = open(p, O_RDONLY | O_CLOEXEC);
	snprintf(p, sizeof(p), "%s/pids.events", dir);
	w->pids_fd = open(p, O_RDONLY | O_CLOEXEC);
	if (w->mem_fd < 0 && w->pids_fd < 0)
		return -errno;
	snprintf(w->dir, sizeof(w->dir), "%s", dir);
	limits_watch_read(w);
	return 0;
}

void limits_watch_read(struct limits_watch *w)
{
	watch_read(w->mem_fd, "oom_kill", &w->oom_kills);
	watch_read(w->pids_fd, "max", &w->pids_refused);
}

void limits_watch_close(struct limits_watch *w)
{
	if (w->mem_fd >= 0)
		close(w->mem_fd);
	if (w->pids_fd >= 0)
		close(w->pids_fd);
	w->mem_fd = w->pids_fd = -1;
}

int limits_watch_scope(struct limits_watch *w, pid_t pid, const char *unit)
{
	char p[64], dir[PATH_MAX], text[4096];
	ssize_t n;
	int fd, r;

	if (w->mem_fd >= 0 || w->pids_fd >= 0)
		return 0;
	snprintf(p, sizeof(p), "/proc/%d/cgroup", (int)pid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, text, sizeof(text) - 1);
	r = n < 0 ? -errno : 0;
	close(fd);
	if (r)
		return r;
	text[n] = '\0';
	r = limits_cgroup2_path(text, unit, dir, sizeof(dir));
	return r ? r : limits_watch_open(w, dir);
}

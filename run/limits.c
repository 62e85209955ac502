/* limits.c - a run's resource limits and process tracking: cgroup v2 where it has the
 * controllers, else the cgroup v1 memory, pids and cpu hierarchies, else resident-memory
 * sampling (no pids or cpu limit then; the audit says so).
 *
 * Theory of operation:
 *   - the run gets one cgroup per hierarchy, "warden-<id>" below the launcher's own cgroup
 *     (v1; so limits that apply to the launcher still apply) or <root>/warden/<id> (v2, whose
 *     no-internal-process rule forbids nesting under a populated cgroup);
 *   - `ip netns exec` remounts /sys and so hides /sys/fs/cgroup: a hierarchy that is not
 *     mounted in the caller's mount namespace is mounted under /run/warden/cgroup/ (the same
 *     hierarchy; the mount stays in that namespace);
 *   - the child joins the cgroups before it execs bubblewrap, so every process of the run is
 *     in them from the start; killing "the whole tree" is signalling every pid they list,
 *     repeated until they are empty (v1 has no cgroup.kill), then rmdir.
 */
#include "run/limits.h"
#include "run/run.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#define CG_MOUNT_DIR "/run/warden/cgroup"
#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

static const char *const v1_names[LIMITS_V1_COUNT] = {"memory", "pids", "cpu"};

const char *limits_kind_name(enum limits_kind k)
{
	switch (k) {
	case LIMITS_NONE:
		return "none";
	case LIMITS_CGROUP2:
		return "cgroup2";
	case LIMITS_CGROUP1:
		return "cgroup1";
	case LIMITS_SAMPLING:
		return "pss-sampling";
	}
	return "?";
}

static int read_str(const char *dir, const char *file, char *buf, size_t size)
{
	char p[PATH_MAX];
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

/* "key N" from a flat keyed file (memory.events, pids.events, memory.oom_control). */
static uint64_t keyed(const char *dir, const char *file, const char *key)
{
	char buf[4096] = "", *p; /* "" even if read_str() failed with errno 0 */
	size_t n = strlen(key);

	if (read_str(dir, file, buf, sizeof(buf)))
		return 0;
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, n) && p[n] == ' ')
			return strtoull(p + n + 1, NULL, 10);
	return 0;
}

static uint64_t number(const char *dir, const char *file)
{
	char buf[64];

	return read_str(dir, file, buf, sizeof(buf)) ? 0 : strtoull(buf, NULL, 10);
}

/* Does the comma-separated @list contain @word? */
static bool list_has(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; p; p = strchr(p, ','), p = p ? p + 1 : NULL)
		if (!strncmp(p, word, n) &&
		    (p[n] == ',' || p[n] == '\0' || p[n] == ' ' || p[n] == '\n'))
			return true;
	return false;
}

/*
 * The caller's cgroup in the hierarchy that holds @ctrl (v1), or the v2 path when @ctrl is
 * "": its controller list into @ctrls and path into @path.
 */
static int self_cgroup(const char *ctrl, char *ctrls, size_t csize, char *path, size_t psize)
{
	char line[4096];
	FILE *f = fopen("/proc/self/cgroup", "re");
	int r = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;

		if (!b)
			continue;
		*b = '\0';
		b[strcspn(b + 1, "\n") + 1] = '\0';
		if (*ctrl ? !list_has(a + 1, ctrl) : a[1] != '\0')
			continue;
		snprintf(ctrls, csize, "%s", a + 1);
		snprintf(path, psize, "%s", b + 1);
		r = 0;
		break;
	}
	fclose(f);
	return r;
}

/* Where the hierarchy with controllers @ctrls (v1) or the v2 hierarchy (@ctrls "") is mounted. */
static int find_mount(const char *ctrls, char *mnt, size_t msize, char *root, size_t rsize)
{
	char line[8192];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int r = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - "), *fs, *opts, *fld[5];
		char *save = NULL, *tok;
		int i = 0;

		if (!sep)
			continue;
		*sep = '\0';
		fs = strtok_r(sep + 3, " ", &save);
		strtok_r(NULL, " ", &save);
		opts = strtok_r(NULL, " \n", &save);
		if (!fs || !opts)
			continue;
		if (*ctrls ? strcmp(fs, "cgroup") : strcmp(fs, "cgroup2"))
			continue;
		if (*ctrls) {
			bool all = true;
			char tmp[256];

			snprintf(tmp, sizeof(tmp), "%s", ctrls);
			for (char *s2 = NULL, *c = strtok_r(tmp, ",", &s2); c;
			     c = strtok_r(NULL, ",", &s2))
				all = all && list_has(opts, c);
			if (!all)
				continue;
		}
		save = NULL;
		for (tok = strtok_r(line, " ", &save); tok && i < 5;
		     tok = strtok_r(NULL, " ", &save))
			fld[i++] = tok;
		if (i < 5)
			continue;
		snprintf(root, rsize, "%s", fld[3]);
		snprintf(mnt, msize, "%s", fld[4]);
		r = 0;
		break;
	}
	fclose(f);
	return r;
}

/* The folder of the caller's own cgroup for v1 controller @ctrl, mounting it if needed. */
static int v1_self_dir(const char *ctrl, char *out, size_t outlen)
{
	char ctrls[256] = "", path[PATH_MAX] = "", mnt[PATH_MAX], root[PATH_MAX];
	const char *rel;
	int r = self_cgroup(ctrl, ctrls, sizeof(ctrls), path, sizeof(path));

	if (r)
		return r;
	if (find_mount(ctrls, mnt, sizeof(mnt), root, sizeof(root))) {
		snprintf(mnt, sizeof(mnt), "%s/%s", CG_MOUNT_DIR, ctrls);
		r = wd_mkdir_p(mnt, 0755);
		if (r)
			return r;
		if (mount("cgroup", mnt, "cgroup", MS_NOSUID | MS_NODEV | MS_NOEXEC, ctrls) < 0 &&
		    errno != EBUSY)
			return -errno;
		snprintf(root, sizeof(root), "/");
	}
	if (!run_path_within(path, root))
		return -ENOENT;
	rel = path + (strcmp(root, "/") ? strlen(root) : 0);
	if (snprintf(out, outlen, "%s%s", mnt, strcmp(rel, "/") ? rel : "") >= (int)outlen)
		return -ENAMETOOLONG;
	return 0;
}

/* The v2 hierarchy's mount point, when it has the memory and pids controllers. */
static int v2_root(char *out, size_t outlen)
{
	char ctrls[8], path[PATH_MAX], root[PATH_MAX], buf[512];
	struct statfs sf;

	if (self_cgroup("", ctrls, sizeof(ctrls), path, sizeof(path)))
		return -ENOENT;
	if (find_mount("", out, outlen, root, sizeof(root)) || strcmp(root, "/"))
		return -ENOENT;
	if (statfs(out, &sf) < 0 || sf.f_type != CGROUP2_SUPER_MAGIC)
		return -ENOENT;
	if (read_str(out, "cgroup.controllers", buf, sizeof(buf)))
		return -ENOENT;
	if (!strstr(buf, "memory") || !strstr(buf, "pids"))
		return -ENOENT;
	return 0;
}

/* WARDEN_LIMITS=sampling forces the last-resort mechanism (tests, odd hosts). */
static bool force_sampling(void)
{
	const char *e = getenv("WARDEN_LIMITS");

	return e && !strcmp(e, "sampling");
}

enum limits_kind limits_probe(void)
{
	char dir[PATH_MAX];

	if (force_sampling())
		return LIMITS_SAMPLING;
	if (!v2_root(dir, sizeof(dir)))
		return LIMITS_CGROUP2;
	for (int i = 0; i < LIMITS_V1_COUNT; i++)
		if (v1_self_dir(v1_names[i], dir, sizeof(dir)) || access(dir, W_OK))
			return LIMITS_SAMPLING;
	return LIMITS_CGROUP1;
}

static int set_v1(struct limits *l, struct wd_err *err)
{
	const struct policy_limits *lim = &l->lim;
	char val[64];
	int r;

	if (lim->memory_mb) {
		snprintf(val, sizeof(val), "%llu", (unsigned long long)lim->memory_mb << 20);
		r = wd_write_at(l->dir[LIMITS_V1_MEMORY], "memory.limit_in_bytes", val);
		if (r)
			return wd_err_set(err, r, "%s/memory.limit_in_bytes: %s",
					  l->dir[LIMITS_V1_MEMORY], strerror(-r));
		/* no swap: memory+swap capped at the same value (needs swap accounting) */
		wd_write_at(l->dir[LIMITS_V1_MEMORY], "memory.memsw.limit_in_bytes", val);
		wd_write_at(l->dir[LIMITS_V1_MEMORY], "memory.swappiness", "0");
	}
	if (lim->pids) {
		snprintf(val, sizeof(val), "%u", lim->pids);
		r = wd_write_at(l->dir[LIMITS_V1_PIDS], "pids.max", val);
		if (r)
			return wd_err_set(err, r, "%s/pids.max: %s", l->dir[LIMITS_V1_PIDS],
					  strerror(-r));
	}
	if (lim->cpu_milli) {
		wd_write_at(l->dir[LIMITS_V1_CPU], "cpu.cfs_period_us", "100000");
		snprintf(val, sizeof(val), "%u", lim->cpu_milli * 100);
		r = wd_write_at(l->dir[LIMITS_V1_CPU], "cpu.cfs_quota_us", val);
		if (r)
			return wd_err_set(err, r, "%s/cpu.cfs_quota_us: %s", l->dir[LIMITS_V1_CPU],
					  strerror(-r));
	}
	return 0;
}

static int set_v2(struct limits *l, struct wd_err *err)
{
	const struct policy_limits *lim = &l->lim;
	const char *d = l->dir[0];
	char val[64];
	int r;

	if (lim->memory_mb) {
		snprintf(val, sizeof(val), "%llu", (unsigned long long)lim->memory_mb << 20);
		r = wd_write_at(d, "memory.max", val);
		if (r)
			return wd_err_set(err, r, "%s/memory.max: %s", d, strerror(-r));
		wd_write_at(d, "memory.swap.max", "0");
	}
	if (lim->pids) {
		snprintf(val, sizeof(val), "%u", lim->pids);
		r = wd_write_at(d, "pids.max", val);
		if (r)
			return wd_err_set(err, r, "%s/pids.max: %s", d, strerror(-r));
	}
	if (lim->cpu_milli) {
		snprintf(val, sizeof(val), "%u 100000", lim->cpu_milli * 100);
		r = wd_write_at(d, "cpu.max", val);
		if (r)
			return wd_err_set(err, r, "%s/cpu.max: %s", d, strerror(-r));
	}
	return 0;
}

int limits_create(struct limits *l, const char *id, const struct policy_limits *lim,
		  struct wd_err *err)
{
	char base[PATH_MAX];
	int r = 0;

	memset(l, 0, sizeof(*l));
	l->lim = *lim;
	if (force_sampling()) {
		l->kind = LIMITS_SAMPLING;
		return 0;
	}
	if (!v2_root(base, sizeof(base))) {
		char parent[PATH_MAX];

		l->kind = LIMITS_CGROUP2;
		wd_write_at(base, "cgroup.subtree_control", "+memory +pids +cpu");
		if (snprintf(parent, sizeof(parent), "%s/warden", base) >= (int)sizeof(parent))
			return wd_err_set(err, -ENAMETOOLONG, "cgroup path too long: %s", base);
		if (mkdir(parent, 0755) < 0 && errno != EEXIST)
			return wd_err_set(err, -errno, "mkdir %s: %s", parent, strerror(errno));
		wd_write_at(parent, "cgroup.subtree_control", "+memory +pids +cpu");
		if (snprintf(l->dir[0], sizeof(l->dir[0]), "%s/%s", parent, id) >=
		    (int)sizeof(l->dir[0])) {
			l->dir[0][0] = '\0';
			return wd_err_set(err, -ENAMETOOLONG, "cgroup path too long: %s", parent);
		}
		if (mkdir(l->dir[0], 0755) < 0) {
			r = wd_err_set(err, -errno, "mkdir %s: %s", l->dir[0], strerror(errno));
			l->dir[0][0] = '\0';
			return r;
		}
		r = set_v2(l, err);
		goto out;
	}
	for (int i = 0; i < LIMITS_V1_COUNT; i++)
		if (v1_self_dir(v1_names[i], base, sizeof(base)) || access(base, W_OK)) {
			l->kind = LIMITS_SAMPLING;
			return 0;
		}
	l->kind = LIMITS_CGROUP1;
	for (int i = 0; i < LIMITS_V1_COUNT && !r; i++) {
		v1_self_dir(v1_names[i], base, sizeof(base));
		if (snprintf(l->dir[i], sizeof(l->dir[i]), "%s/warden-%s", base, id) >=
		    (int)sizeof(l->dir[i])) {
			l->dir[i][0] = '\0';
			r = wd_err_set(err, -ENAMETOOLONG, "cgroup path too long under %s", base);
			break;
		}
		if (mkdir(l->dir[i], 0755) < 0) {
			r = wd_err_set(err, -errno, "mkdir %s: %s", l->dir[i], strerror(errno));
			l->dir[i][0] = '\0';
		}
	}
	if (!r)
		r = set_v1(l, err);
out:
	if (r)
		limits_destroy(l);
	return r;
}

int limits_join(const struct limits *l)
{
	/* cgroup v1: the caller is single-threaded (a fresh child), so moving the thread (the
	 * `tasks` file) moves the process. Writing `cgroup.procs` would take the global
	 * threadgroup lock, whose writer waits for an RCU grace period (milliseconds, the
	 * largest cost of a launch on a busy machine); moving one thread by itself does not. */
	const char *file = l->kind == LIMITS_CGROUP1 ? "tasks" : "cgroup.procs";
	int r;

	for (int i = 0; i < LIMITS_V1_COUNT; i++) {
		if (!l->dir[i][0])
			continue;
		r = wd_write_at(l->dir[i], file, "0");
		if (r)
			return r;
	}
	return 0;
}

/* The folder whose cgroup.procs lists every process of the run. */
static const char *procs_dir(const struct limits *l)
{
	if (l->kind == LIMITS_CGROUP2)
		return l->dir[0];
	if (l->kind == LIMITS_CGROUP1)
		return l->dir[LIMITS_V1_PIDS];
	return NULL;
}

int limits_signal(const struct limits *l, int sig)
{
	const char *d = procs_dir(l);
	char p[PATH_MAX], line[32];
	FILE *f;
	int n = 0;

	if (!d || !*d)
		return 0;
	snprintf(p, sizeof(p), "%s/cgroup.procs", d);
	f = fopen(p, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		pid_t pid = (pid_t)strtol(line, NULL, 10);

		if (pid > 1 && !kill(pid, sig))
			n++;
	}
	fclose(f);
	return n;
}

int limits_reap(const struct limits *l, unsigned max_ms)
{
	struct timespec ts = {0, 1000 * 1000};

	if (!l)
		return 0;
	for (unsigned waited = 0; limits_signal(l, SIGKILL) > 0; waited++) {
		if (waited >= max_ms)
			return -ETIMEDOUT;
		nanosleep(&ts, NULL);
	}
	return 0;
}

void limits_breaches(const struct limits *l, bool *ret_mem, bool *ret_pids, uint64_t *ret_mem_peak)
{
	*ret_mem = *ret_pids = false;
	*ret_mem_peak = 0;
	if (l->kind == LIMITS_CGROUP2 && l->dir[0][0]) {
		*ret_mem = l->lim.memory_mb && keyed(l->dir[0], "memory.events", "oom_kill") > 0;
		*ret_pids = l->lim.pids && keyed(l->dir[0], "pids.events", "max") > 0;
		*ret_mem_peak = number(l->dir[0], "memory.peak");
	} else if (l->kind == LIMITS_CGROUP1) {
		const char *m = l->dir[LIMITS_V1_MEMORY];

		if (m[0] && l->lim.memory_mb)
			*ret_mem = keyed(m, "memory.oom_control", "oom_kill") > 0 ||
				   keyed(m, "memory.oom_control", "under_oom") > 0;
		if (l->dir[LIMITS_V1_PIDS][0] && l->lim.pids)
			*ret_pids = keyed(l->dir[LIMITS_V1_PIDS], "pids.events", "max") > 0;
		if (m[0])
			*ret_mem_peak = number(m, "memory.max_usage_in_bytes");
	}
}

int limits_destroy(struct limits *l)
{
	struct timespec ts = {0, 5 * 1000 * 1000};
	int r = 0;

	if (!l)
		return 0;
	for (int tries = 0; tries < 400; tries++) {
		bool left = false;

		limits_signal(l, SIGKILL);
		for (int i = 0; i < LIMITS_V1_COUNT; i++) {
			if (!l->dir[i][0])
				continue;
			if (rmdir(l->dir[i]) < 0 && errno != ENOENT)
				left = true;
			else
				l->dir[i][0] = '\0';
		}
		if (!left)
			break;
		nanosleep(&ts, NULL);
	}
	for (int i = 0; i < LIMITS_V1_COUNT; i++)
		if (l->dir[i][0])
			r = -EBUSY;
	return r;
}

/* The resident KiB of @pid (statm: counters, cheap): every page it maps counted in full, also
 * one it shares with its forks. */
static uint64_t rss_kb(pid_t pid)
{
	unsigned long long size = 0, res = 0;
	char p[64], buf[256];
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/statm", pid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* NOLINTNEXTLINE(cert-err34-c): the kernel's statm */
	if (sscanf(buf, "%llu %llu", &size, &res) != 2)
		return 0;
	return res * (uint64_t)sysconf(_SC_PAGESIZE) / 1024;
}

/* The proportional set size of @pid in KiB (smaps_rollup's `Pss:`: a page shared by N
 * processes counts 1/N in each, so that summed over a tree of forks it is counted once). The
 * kernel walks the process's page tables for it (about 3 ms for 64 MiB mapped). Where it cannot
 * be read (a kernel before 4.14, a process that is not dumpable) the resident size counts:
 * more, never less. */
static uint64_t pss_kb(pid_t pid)
{
	static const char key[] = "\nPss:";
	unsigned long long pss;
	char p[64], buf[4096];
	const char *at;
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/smaps_rollup", pid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0) {
			buf[n] = '\0';
			at = strstr(buf, key);
			/* NOLINTNEXTLINE(cert-err34-c): the kernel's smaps_rollup */
			if (at && sscanf(at + sizeof(key) - 1, "%llu kB", &pss) == 1)
				return pss;
		}
	}
	return rss_kb(pid);
}

/* @each of @pid plus that of its descendants (every thread's children), in KiB. */
/* NOLINTNEXTLINE(misc-no-recursion): at most 64 deep, the frame is 4 KiB */
static uint64_t mem_tree(pid_t pid, uint64_t (*each)(pid_t), int depth)
{
	char p[64], buf[4096];
	uint64_t kb;
	DIR *d;
	struct dirent *de;
	int fd;
	ssize_t n;

	if (depth > 64)
		return 0;
	kb = each(pid);
	snprintf(p, sizeof(p), "/proc/%d/task", pid);
	d = opendir(p);
	if (!d)
		return kb;
	while ((de = readdir(d))) {
		char cp[96];

		if (de->d_name[0] == '.')
			continue;
		snprintf(cp, sizeof(cp), "/proc/%d/task/%.16s/children", pid, de->d_name);
		fd = open(cp, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		for (char *s = buf, *e; *s; s = e) {
			long c = strtol(s, &e, 10);

			if (e == s)
				break;
			if (c > 0)
				kb += mem_tree((pid_t)c, each, depth + 1);
		}
	}
	closedir(d);
	return kb;
}

uint64_t limits_rss_kb(pid_t pid)
{
	return pid > 0 ? mem_tree(pid, rss_kb, 0) : 0;
}

uint64_t limits_pss_kb(pid_t pid)
{
	return pid > 0 ? mem_tree(pid, pss_kb, 0) : 0;
}

/* Tasks of @pid plus those of its descendants (every thread's children). */
/* NOLINTNEXTLINE(misc-no-recursion): at most 64 deep, the frame is 4 KiB */
static uint64_t tasks_tree(pid_t pid, int depth)
{
	char p[64], buf[4096];
	uint64_t n = 0;
	DIR *d;
	struct dirent *de;

	if (depth > 64)
		return 0;
	snprintf(p, sizeof(p), "/proc/%d/task", pid);
	d = opendir(p);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		char cp[96];
		ssize_t len;
		int fd;

		if (de->d_name[0] == '.')
			continue;
		n++;
		snprintf(cp, sizeof(cp), "/proc/%d/task/%.16s/children", pid, de->d_name);
		fd = open(cp, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		for (char *s = buf, *e; *s; s = e) {
			long c = strtol(s, &e, 10);

			if (e == s)
				break;
			if (c > 0)
				n += tasks_tree((pid_t)c, depth + 1);
		}
	}
	closedir(d);
	return n;
}

uint64_t limits_pids_now(const struct limits *l, pid_t pid)
{
	const char *d = NULL;

	if (l && l->kind == LIMITS_CGROUP2 && l->dir[0][0])
		d = l->dir[0];
	else if (l && l->kind == LIMITS_CGROUP1 && l->dir[LIMITS_V1_PIDS][0])
		d = l->dir[LIMITS_V1_PIDS];
	if (d) {
		char buf[64];

		if (!read_str(d, "pids.current", buf, sizeof(buf)))
			return strtoull(buf, NULL, 10);
	}
	return pid > 0 ? tasks_tree(pid, 0) : 0;
}

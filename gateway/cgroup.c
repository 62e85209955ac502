/* cgroup.c - a daemon-mode run's cgroup, made by the gateway's privileged parent: the policy's
 * limits written as root, the folder and the files that move processes chowned to the run's
 * user (delegation: the launcher, as that user, moves the sandbox's first process in; it
 * cannot change the limits, whose files stay root's), removed at unregister after whatever is
 * still in it is killed.
 *
 * cgroup v2 (/sys/fs/cgroup/cgroup.controllers): <root>/warden/<id>, the memory, pids and cpu
 * controllers enabled in <root>/warden. cgroup v1: "warden-<id>" below the gateway's own cgroup
 * in each of the memory, pids and cpu hierarchies, so limits on the gateway hold for its runs.
 * A hierarchy this mount namespace does not show (`ip netns exec` remounts /sys) is skipped:
 * no cgroup then, and the launcher limits by sampling, as a rootless run does. */
#include "gateway/cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#define CG_ROOT "/sys/fs/cgroup"
#ifndef CGROUP_SUPER_MAGIC
#define CGROUP_SUPER_MAGIC 0x27e0eb
#endif

static const char *const v1_ctrl[GW_CGROUP_MAX] = {"memory", "pids", "cpu"};

size_t gw_cgroup_limit_files(enum gw_cgroup_kind kind, int slot, const struct policy_limits *lim,
			     struct gw_cgroup_file out[GW_CGROUP_FILES])
{
	size_t n = 0;

#define PUT(nm, ...)                                                                               \
	do {                                                                                       \
		out[n].name = (nm);                                                                \
		snprintf(out[n].value, sizeof(out[n].value), __VA_ARGS__);                         \
		n++;                                                                               \
	} while (0)
	if (kind == GW_CGROUP_V2 && slot == 0) {
		if (lim->memory_mb) {
			PUT("memory.max", "%llu", (unsigned long long)lim->memory_mb << 20);
			PUT("memory.swap.max", "0");
		}
		if (lim->pids)
			PUT("pids.max", "%u", lim->pids);
		if (lim->cpu_milli)
			PUT("cpu.max", "%u 100000", lim->cpu_milli * 100);
	} else if (kind == GW_CGROUP_V1) {
		if (slot == 0 && lim->memory_mb)
			PUT("memory.limit_in_bytes", "%llu",
			    (unsigned long long)lim->memory_mb << 20);
		if (slot == 1 && lim->pids)
			PUT("pids.max", "%u", lim->pids);
		if (slot == 2 && lim->cpu_milli) {
			PUT("cpu.cfs_period_us", "100000");
			PUT("cpu.cfs_quota_us", "%u", lim->cpu_milli * 100);
		}
	}
#undef PUT
	return n;
}

const char *const *gw_cgroup_delegated(enum gw_cgroup_kind kind, size_t *ret_n)
{
	static const char *const v2[] = {"cgroup.procs", "cgroup.threads",
					 "cgroup.subtree_control"};
	static const char *const v1[] = {"cgroup.procs", "tasks"};

	*ret_n = kind == GW_CGROUP_V2 ? 3 : kind == GW_CGROUP_V1 ? 2 : 0;
	return kind == GW_CGROUP_V2 ? v2 : v1;
}

/* the gateway's own cgroup in v1 hierarchy @ctrl (from /proc/self/cgroup); Return: 0 or -errno */
static int self_v1(const char *ctrl, char *out, size_t size)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[1024];
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (ret && fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL, *tok, *save;

		if (!c2)
			continue;
		*c2 = '\0';
		line[strcspn(line, "\n")] = '\0';
		c2[1 + strcspn(c2 + 1, "\n")] = '\0';
		for (tok = strtok_r(c1 + 1, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
			if (!strcmp(tok, ctrl)) {
				snprintf(out, size, "%s", strcmp(c2 + 1, "/") ? c2 + 1 : "");
				ret = 0;
			}
	}
	fclose(f);
	return ret;
}

static bool is_cgroup_mount(const char *dir, long magic)
{
	struct statfs sf;

	return !statfs(dir, &sf) && (long)sf.f_type == magic;
}

/* the limit files and delegation of one folder; Return: 0 or -errno (@why) */
static int setup_dir(const char *dir, enum gw_cgroup_kind kind, int slot,
		     const struct policy_limits *lim, uid_t uid, gid_t gid, char *why, size_t size)
{
	struct gw_cgroup_file f[GW_CGROUP_FILES];
	size_t n = gw_cgroup_limit_files(kind, slot, lim, f), nd;
	const char *const *del = gw_cgroup_delegated(kind, &nd);
	char p[PATH_MAX];
	int r;

	for (size_t i = 0; i < n; i++) {
		r = wd_write_at(dir, f[i].name, f[i].value);
		if (r) {
			snprintf(why, size, "writing %s to %s/%s: %s", f[i].value, dir, f[i].name,
				 strerror(-r));
			return r;
		}
	}
	if (chown(dir, uid, gid) < 0)
		goto fail;
	for (size_t i = 0; i < nd; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, del[i]);
		if (chown(p, uid, gid) < 0 && errno != ENOENT)
			goto fail;
	}
	return 0;
fail:
	r = -errno;
	snprintf(why, size, "delegating %s to uid %u: %s", dir, (unsigned)uid, strerror(errno));
	return r;
}

/* mkdir @dir 0755 whatever the umask (the service's UMask=0027 made 0750 folders the run's user
 * could not enter to read its cgroup's files: its memory.events, pids.events and limits); an
 * existing one is chmod'ed too when @may_exist. Return: 0, or -1 with errno */
static int mkdir_open(const char *dir, bool may_exist)
{
	bool made = mkdir(dir, 0755) == 0;
	int e;

	if (!made && (!may_exist || errno != EEXIST))
		return -1;
	if (!chmod(dir, 0755))
		return 0;
	e = errno;
	if (made)
		rmdir(dir);
	errno = e;
	return -1;
}

int gw_cgroup_create(struct gw_cgroup *cg, const char *id, const struct policy_limits *lim,
		     uid_t uid, gid_t gid, char *why, size_t size)
{
	return gw_cgroup_create_in(cg, CG_ROOT, id, lim, uid, gid, why, size);
}

int gw_cgroup_create_in(struct gw_cgroup *cg, const char *root, const char *id,
			const struct policy_limits *lim, uid_t uid, gid_t gid, char *why,
			size_t size)
{
	char base[PATH_MAX], self[512];
	int r = 0;

	memset(cg, 0, sizeof(*cg));
	snprintf(base, sizeof(base), "%s/cgroup.controllers", root);
	if (!access(base, F_OK)) {
		snprintf(base, sizeof(base), "%s/warden", root);
		if (mkdir_open(base, true) < 0)
			return snprintf(why, size, "mkdir %s: %s", base, strerror(errno)), -errno;
		wd_write_at(root, "cgroup.subtree_control", "+memory +pids +cpu");
		wd_write_at(base, "cgroup.subtree_control", "+memory +pids +cpu");
		cg->kind = GW_CGROUP_V2;
		if (snprintf(cg->dir[0], GW_CGROUP_PATH, "%s/%s", base, id) >= GW_CGROUP_PATH)
			return snprintf(why, size, "cgroup path too long"), -ENAMETOOLONG;
		if (mkdir_open(cg->dir[0], false) < 0) {
			r = -errno;
			snprintf(why, size, "mkdir %s: %s", cg->dir[0], strerror(errno));
			cg->dir[0][0] = '\0';
			return r;
		}
		r = setup_dir(cg->dir[0], GW_CGROUP_V2, 0, lim, uid, gid, why, size);
		if (r)
			gw_cgroup_remove(cg);
		return r;
	}
	/* v1: the three hierarchies, or none (the launcher then samples) */
	for (int i = 0; i < GW_CGROUP_MAX; i++) {
		char mnt[PATH_MAX];

		snprintf(mnt, sizeof(mnt), "%s/%s", root, v1_ctrl[i]);
		if (!is_cgroup_mount(mnt, CGROUP_SUPER_MAGIC) ||
		    self_v1(v1_ctrl[i], self, sizeof(self)))
			return 0;
	}
	for (int i = 0; i < GW_CGROUP_MAX; i++) {
		char mnt[PATH_MAX];

		snprintf(mnt, sizeof(mnt), "%s/%s", root, v1_ctrl[i]);
		self_v1(v1_ctrl[i], self, sizeof(self));
		if (snprintf(cg->dir[i], GW_CGROUP_PATH, "%s%s/warden-%s", mnt, self, id) >=
		    GW_CGROUP_PATH) {
			cg->dir[i][0] = '\0';
			r = -ENAMETOOLONG;
			snprintf(why, size, "cgroup path too long below %s%s", mnt, self);
			break;
		}
		if (mkdir_open(cg->dir[i], false) < 0) {
			r = -errno;
			snprintf(why, size, "mkdir %s: %s", cg->dir[i], strerror(errno));
			cg->dir[i][0] = '\0';
			break;
		}
		cg->kind = GW_CGROUP_V1;
		r = setup_dir(cg->dir[i], GW_CGROUP_V1, i, lim, uid, gid, why, size);
		if (r)
			break;
	}
	if (r)
		gw_cgroup_remove(cg);
	return r;
}

/* the real and effective uid of the process whose /proc folder is @dir (its "Uid:" line, as this
 * process's user namespace sees them); Return: 0 or -errno */
static int proc_uids(int dir, uid_t *ruid, uid_t *euid)
{
	char buf[4096], *l, *save = NULL, *tr, *te;
	unsigned long long r, e;
	ssize_t n;
	int fd = openat(dir, "status", O_RDONLY | O_CLOEXEC), ret = -EINVAL;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		ret = -errno;
	close(fd);
	if (n < 0)
		return ret;
	buf[n] = '\0';
	l = strstr(buf, "\nUid:\t");
	if (!l)
		return -EINVAL;
	l[strcspn(l + 1, "\n") + 1] = '\0';
	tr = strtok_r(l + 6, "\t", &save);
	te = tr ? strtok_r(NULL, "\t", &save) : NULL;
	if (!te || wd_parse_uint(tr, UINT32_MAX, &r) || wd_parse_uint(te, UINT32_MAX, &e))
		return -EINVAL;
	*ruid = (uid_t)r;
	*euid = (uid_t)e;
	return 0;
}

/* is the process of /proc folder @dir of @uid, in the network namespace @netns_fd? Return: 0,
 * -EPERM (@why), another -errno */
static int join_check(int dir, pid_t pid, uid_t uid, int netns_fd, char *why, size_t size)
{
	struct stat want, got;
	uid_t ruid = (uid_t)-1, euid = (uid_t)-1;
	int r = proc_uids(dir, &ruid, &euid);

	if (r)
		return snprintf(why, size, "process %d: %s", (int)pid, strerror(-r)), r;
	if (ruid != uid || euid != uid)
		return snprintf(why, size, "process %d is not uid %u's (uid %u): refused", (int)pid,
				(unsigned)uid, (unsigned)ruid),
		       -EPERM;
	if (fstat(netns_fd, &want) < 0 || fstatat(dir, "ns/net", &got, 0) < 0)
		return r = -errno,
		       snprintf(why, size, "process %d's network namespace: %s", (int)pid,
				strerror(-r)),
		       r;
	if (want.st_dev != got.st_dev || want.st_ino != got.st_ino)
		return snprintf(why, size,
				"process %d is not in the run's network namespace: refused",
				(int)pid),
		       -EPERM;
	return 0;
}

int gw_cgroup_join(const struct gw_cgroup *cg, pid_t pid, uid_t uid, int netns_fd, char *why,
		   size_t size)
{
	char p[32], val[16];
	int dir, r = 0;

	if (pid <= 1)
		return snprintf(why, size, "pid %d: not a run's process", (int)pid), -EINVAL;
	if (cg->kind == GW_CGROUP_NONE || !cg->dir[0][0])
		return snprintf(why, size, "the run has no cgroup"), -ENOENT;
	/* the folder pins the process: if it ends meanwhile, what is read through it fails
	 * (ESRCH) rather than describe another that got its pid */
	snprintf(p, sizeof(p), "/proc/%d", (int)pid);
	dir = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return r = -errno, snprintf(why, size, "process %d: %s", (int)pid, strerror(-r)), r;
	r = join_check(dir, pid, uid, netns_fd, why, size);
	snprintf(val, sizeof(val), "%d", (int)pid);
	for (int i = 0; !r && i < GW_CGROUP_MAX; i++) {
		if (!cg->dir[i][0])
			continue;
		r = wd_write_at(cg->dir[i], "cgroup.procs", val);
		if (r)
			snprintf(why, size, "writing %s to %s/cgroup.procs: %s", val, cg->dir[i],
				 strerror(-r));
	}
	/* the same process still: the pid was not reused between the checks and the move */
	if (!r && faccessat(dir, "status", F_OK, 0) < 0) {
		r = -ESRCH;
		snprintf(why, size, "process %d ended while it was moved", (int)pid);
	}
	close(dir);
	return r;
}

/* SIGKILL to every process listed in @dir; Return: how many */
static int kill_all(const char *dir)
{
	char p[PATH_MAX], line[32];
	FILE *f;
	int n = 0;

	snprintf(p, sizeof(p), "%s/cgroup.procs", dir);
	f = fopen(p, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *end;
		long pid = strtol(line, &end, 10);

		if (end != line && pid > 1 && pid <= INT_MAX && !kill((pid_t)pid, SIGKILL))
			n++;
	}
	fclose(f);
	return n;
}

int gw_cgroup_remove(struct gw_cgroup *cg)
{
	int ret = 0;

	for (int i = 0; i < GW_CGROUP_MAX; i++) {
		int r = -EBUSY;

		if (!cg->dir[i][0])
			continue;
		/* what the run left (its launcher was killed) goes first; rmdir waits for the
		 * kernel to let go of the dead */
		for (int tries = 0; tries < 100 && r == -EBUSY; tries++) {
			kill_all(cg->dir[i]);
			r = rmdir(cg->dir[i]) < 0 ? -errno : 0;
			if (r == -EBUSY)
				nanosleep(&(struct timespec){0, 10000000}, NULL);
		}
		if (r == -ENOENT)
			r = 0;
		if (r && !ret)
			ret = r;
		cg->dir[i][0] = '\0';
	}
	cg->kind = GW_CGROUP_NONE;
	return ret;
}

/* alloc.c - the address-slot allocator that launchers running at the same
 * time share: a lock file and one small file per taken slot.
 *
 * Theory of operation. The state dir holds `lock` and, for every taken slot n,
 * a file named n (decimal) with one line: the owner's pid and start time, the
 * run id, the host interface and the namespace name (netns_slot_rec_format()).
 * Every change happens under flock(LOCK_EX) on `lock`, whose content is the
 * cursor: the slot after the last one handed out. A new allocation scans
 * round-robin from the cursor, so a freed slot (whose old veth the kernel may
 * still be removing) is the last one to be handed out again. A slot is free
 * when it has no file, or when its owner is gone (pid dead, or reused: the start
 * time differs, or a zombie) AND its interface no longer exists. Slots whose
 * owner is gone but whose interface (or bind-mounted namespace) survives stay
 * taken until netns_gc() removes them. netns_slot_set_owner() hands a slot to
 * another process (a run's teardown child, a pool's holder, a launcher leasing
 * a pooled network).
 */
#include "netns/netns_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

int netns_slot_rec_format(const struct netns_slot_rec *rec, char *out, size_t outlen)
{
	int n = snprintf(out, outlen, "pid=%d start=%llu id=%s ifname=%s netns=%s mounted=%d\n",
			 (int)rec->pid, rec->start, rec->id, rec->ifname, rec->name,
			 rec->mounted ? 1 : 0);

	if (n < 0 || (size_t)n >= outlen)
		return -ENOSPC;
	return n;
}

static bool is_name(const char *s, bool hex_only)
{
	if (!*s)
		return false;
	for (; *s; s++) {
		bool ok = (*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f');

		if (!hex_only)
			ok = ok || (*s >= 'g' && *s <= 'z') || *s == '-' || *s == '_';
		if (!ok)
			return false;
	}
	return true;
}

int netns_slot_rec_parse(const char *text, struct netns_slot_rec *ret)
{
	struct netns_slot_rec r;
	int pid, mounted, end = -1;

	memset(&r, 0, sizeof(r));
	/* NOLINTNEXTLINE(cert-err34-c): a slot record the launcher wrote in its root-owned dir */
	if (sscanf(text, "pid=%d start=%llu id=%12s ifname=%15s netns=%15s mounted=%d%n", &pid,
		   &r.start, r.id, r.ifname, r.name, &mounted, &end) != 6 ||
	    end < 0)
		return -EINVAL;
	if (strcmp(text + end, "\n") != 0 && text[end] != '\0')
		return -EINVAL;
	if (pid <= 0 || (mounted != 0 && mounted != 1) || !is_name(r.id, true) ||
	    !is_name(r.ifname, false) || !is_name(r.name, false))
		return -EINVAL;
	r.pid = pid;
	r.mounted = mounted;
	*ret = r;
	return 0;
}

bool netns_owner_alive(const struct netns_slot_rec *rec)
{
	unsigned long long start = 0;
	char state = '?';

	if (wd_proc_stat(rec->pid, &start, &state) < 0)
		return false;
	return start == rec->start && state != 'Z' && state != 'X';
}

/* Open the state dir's lock file, creating the dir, and take the lock. */
static int lock_state(const struct netns_pool_config *cfg, int *ret_fd, struct wd_err *err)
{
	char path[PATH_MAX];
	int fd, ret;

	ret = wd_mkdir_p(cfg->state_dir, 0700);
	if (ret < 0)
		return wd_err_set(err, ret, "creating allocation state dir %s: %s", cfg->state_dir,
				  strerror(-ret));
	if (snprintf(path, sizeof(path), "%s/lock", cfg->state_dir) >= (int)sizeof(path))
		return wd_err_set(err, -ENAMETOOLONG, "allocation state dir path too long");
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		ret = -errno;
		return wd_err_set(err, ret, "opening %s: %s", path, strerror(-ret));
	}
	while (flock(fd, LOCK_EX) < 0) {
		if (errno == EINTR)
			continue;
		ret = -errno;
		close(fd);
		return wd_err_set(err, ret, "locking %s: %s", path, strerror(-ret));
	}
	*ret_fd = fd;
	return 0;
}

static int slot_path(const struct netns_pool_config *cfg, uint32_t slot, char *out, size_t outlen)
{
	if (snprintf(out, outlen, "%s/%u", cfg->state_dir, slot) >= (int)outlen)
		return -ENAMETOOLONG;
	return 0;
}

/* Read slot @path's record: 0, -ENOENT (no file), -EINVAL (a torn or
 * unparsable record) or another negative errno (cannot read it). */
static int read_rec(const char *path, struct netns_slot_rec *ret)
{
	char buf[256];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		int e = -errno;

		close(fd);
		return e == -EINVAL ? -EIO : e; /* -EINVAL is kept for "torn record" */
	}
	close(fd);
	buf[n] = '\0';
	return netns_slot_rec_parse(buf, ret);
}

/* Whether a taken slot with record @rec (or an unreadable one, @rc < 0) is free again. */
static bool rec_reclaimable(int rc, const struct netns_slot_rec *rec)
{
	if (rc == -EINVAL)
		return true; /* written under the lock, so only a crash mid-write leaves this */
	if (rc < 0)
		return false;
	return !netns_owner_alive(rec) && if_nametoindex(rec->ifname) == 0;
}

static int write_rec(int fd, const struct netns_slot_rec *rec)
{
	char line[256];
	int n = netns_slot_rec_format(rec, line, sizeof(line));

	if (n < 0)
		return n;
	return wd_write_all(fd, line, (size_t)n);
}

static uint32_t read_cursor(int lockfd, uint32_t slots)
{
	char buf[32];
	ssize_t n = pread(lockfd, buf, sizeof(buf) - 1, 0);
	unsigned long v;
	char *end;

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (buf[0] < '0' || buf[0] > '9')
		return 0;
	errno = 0;
	v = strtoul(buf, &end, 10);
	if (errno || (*end && *end != '\n'))
		return 0;
	return (uint32_t)(v % slots);
}

/* The cursor is written fixed-width, in place: no ftruncate(), which on ext4
 * waits for writeback (milliseconds) when a file is cut to zero. */
static int write_cursor(int lockfd, uint32_t cursor)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%010u\n", cursor);

	if (pwrite(lockfd, buf, (size_t)n, 0) != n)
		return -EIO;
	return 0;
}

/* Try to take @slot for @rec: 0 when taken, -EBUSY when someone holds it. */
static int try_slot(const struct netns_pool_config *cfg, uint32_t slot,
		    const struct netns_slot_rec *rec)
{
	struct netns_slot_rec old = {0};
	char path[PATH_MAX];
	int fd, ret;

	ret = slot_path(cfg, slot, path, sizeof(path));
	if (ret < 0)
		return ret;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		if (errno != EEXIST)
			return -errno;
		if (!rec_reclaimable(read_rec(path, &old), &old))
			return -EBUSY;
		fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			return -errno;
	}
	ret = write_rec(fd, rec);
	if (close(fd) < 0 && ret == 0)
		ret = -errno;
	if (ret < 0)
		unlink(path);
	return ret;
}

int netns_slot_alloc(const struct netns_pool_config *cfg, const struct netns_slot_rec *rec,
		     uint32_t *ret_slot, struct wd_err *err)
{
	uint32_t slots, cursor, i;
	int lockfd = -1, ret;

	ret = netns_pool_check(cfg, &slots, err);
	if (ret < 0)
		return ret;
	ret = lock_state(cfg, &lockfd, err);
	if (ret < 0)
		return ret;
	cursor = read_cursor(lockfd, slots);
	for (i = 0; i < slots; i++) {
		uint32_t slot = (cursor + i) % slots;

		ret = try_slot(cfg, slot, rec);
		if (ret == -EBUSY)
			continue;
		if (ret < 0) {
			wd_err_set(err, ret, "claiming address slot %u in %s: %s", slot,
				   cfg->state_dir, strerror(-ret));
			goto out;
		}
		ret = write_cursor(lockfd, (slot + 1) % slots);
		if (ret < 0) {
			char path[PATH_MAX];

			if (slot_path(cfg, slot, path, sizeof(path)) == 0)
				unlink(path); /* we hold the lock: no netns_slot_release() */
			wd_err_set(err, ret, "updating %s/lock: %s", cfg->state_dir,
				   strerror(-ret));
			goto out;
		}
		*ret_slot = slot;
		goto out;
	}
	ret = wd_err_set(err, -ENOSPC, "address pool exhausted: all %u slots in %s are taken",
			 slots, cfg->state_dir);
out:
	wd_closep(&lockfd);
	return ret;
}

int netns_slot_release(const struct netns_pool_config *cfg, uint32_t slot, const char *id,
		       pid_t pid)
{
	struct netns_slot_rec rec = {0};
	char path[PATH_MAX];
	int lockfd = -1, ret;

	ret = slot_path(cfg, slot, path, sizeof(path));
	if (ret < 0)
		return ret;
	ret = lock_state(cfg, &lockfd, NULL);
	if (ret < 0)
		return ret;
	ret = read_rec(path, &rec);
	if (ret == -ENOENT || (ret == 0 && (strcmp(rec.id, id) != 0 || (pid && rec.pid != pid)))) {
		ret = 0; /* already free, or reclaimed and now someone else's */
		goto out;
	}
	if (ret < 0 && ret != -EINVAL)
		goto out; /* cannot tell whose it is: leave it */
	if (unlink(path) < 0)
		ret = errno == ENOENT ? 0 : -errno;
	else
		ret = 1;
out:
	wd_closep(&lockfd);
	return ret;
}

/* Parse a slot file name: decimal, no leading zeros. */
static bool parse_slot_name(const char *s, uint32_t *ret)
{
	unsigned long v = 0;

	if (!*s || (s[0] == '0' && s[1]) || strlen(s) > 9)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		v = v * 10 + (unsigned long)(*s - '0');
	}
	*ret = (uint32_t)v;
	return true;
}

/* Call @fn for every slot file in the state dir (which must be locked). */
static int for_each_slot(const struct netns_pool_config *cfg,
			 int (*fn)(uint32_t slot, const char *path, void *arg), void *arg)
{
	struct dirent *de;
	int ret = 0;
	DIR *d;

	d = opendir(cfg->state_dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		char path[PATH_MAX];
		uint32_t slot;

		if (!parse_slot_name(de->d_name, &slot))
			continue;
		ret = slot_path(cfg, slot, path, sizeof(path));
		if (ret < 0)
			break;
		ret = fn(slot, path, arg);
		if (ret < 0)
			break;
	}
	closedir(d);
	return ret;
}

static int count_one(uint32_t slot, const char *path, void *arg)
{
	(void)slot;
	(void)path;
	(*(unsigned *)arg)++;
	return 0;
}

int netns_slot_count(const struct netns_pool_config *cfg, unsigned *ret_used)
{
	unsigned n = 0;
	int ret = for_each_slot(cfg, count_one, &n);

	if (ret < 0)
		return ret;
	*ret_used = n;
	return 0;
}

struct stale_list {
	struct netns_stale *v;
	size_t n, cap;
};

static int add_if_stale(uint32_t slot, const char *path, void *arg)
{
	struct stale_list *l = arg;
	struct netns_slot_rec rec = {0};
	int rc = read_rec(path, &rec);

	if (rc < 0 && rc != -EINVAL)
		return 0; /* gone meanwhile, or unreadable: not ours to judge */
	if (rc == 0 && netns_owner_alive(&rec))
		return 0;
	if (rc < 0)
		memset(&rec, 0, sizeof(rec)); /* a torn record: nothing to undo, just free it */
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct netns_stale *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n].slot = slot;
	l->v[l->n].rec = rec;
	l->n++;
	return 0;
}

int netns_slot_list_stale(const struct netns_pool_config *cfg, struct netns_stale **ret_list,
			  size_t *ret_n)
{
	struct stale_list l = {NULL, 0, 0};
	int lockfd = -1, ret;

	ret = lock_state(cfg, &lockfd, NULL);
	if (ret < 0)
		return ret;
	ret = for_each_slot(cfg, add_if_stale, &l);
	wd_closep(&lockfd);
	if (ret < 0) {
		free(l.v);
		return ret;
	}
	*ret_list = l.v;
	*ret_n = l.n;
	return 0;
}

int netns_slot_set_owner(const struct netns_pool_config *cfg, uint32_t slot, const char *id,
			 pid_t pid)
{
	struct netns_slot_rec rec = {0};
	char path[PATH_MAX];
	int lockfd = -1, fd, ret;

	ret = slot_path(cfg, slot, path, sizeof(path));
	if (ret < 0)
		return ret;
	ret = lock_state(cfg, &lockfd, NULL);
	if (ret < 0)
		return ret;
	ret = read_rec(path, &rec);
	if (ret == -ENOENT || ret == -EINVAL || (ret == 0 && strcmp(rec.id, id) != 0)) {
		ret = -ESTALE; /* freed, torn, or someone else's now */
		goto out;
	}
	if (ret < 0)
		goto out;
	rec.pid = pid;
	ret = wd_proc_stat(pid, &rec.start, NULL);
	if (ret < 0)
		goto out;
	/* O_TRUNC then one short write, under the lock: a crash in between leaves a torn
	 * record, which only the allocator (under the same lock) reads as free */
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		ret = -errno;
		goto out;
	}
	ret = write_rec(fd, &rec);
	if (close(fd) < 0 && ret == 0)
		ret = -errno;
out:
	wd_closep(&lockfd);
	return ret;
}

int netns_slot_read(const struct netns_pool_config *cfg, uint32_t slot,
		    struct netns_slot_rec *ret_rec)
{
	char path[PATH_MAX];
	int lockfd = -1, ret = slot_path(cfg, slot, path, sizeof(path));

	if (ret < 0)
		return ret;
	ret = lock_state(cfg, &lockfd, NULL);
	if (ret < 0)
		return ret;
	ret = read_rec(path, ret_rec);
	wd_closep(&lockfd);
	return ret;
}

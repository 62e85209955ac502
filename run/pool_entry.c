/* pool_entry.c - a pooled network's entry file (pool.c's theory of operation): its one line
 * formatted and parsed, saved and loaded, the pool's lock, the fingerprint of the configuration
 * it was made for, its nft elements, whether its holder lives, and its undoing.
 */
#include "run/pool_internal.h"
#include "run/state.h"
#include "run/pool.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <net/if.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* What a pooled network depends on, as one word: the pools, names, table and the host
 * network namespace (its veth's host side lives there). */
void run_pool_fingerprint(const struct netns_pool_config *nc, const struct fw_config *fc, char *out,
			  size_t size)
{
	char p4[INET6_ADDRSTRLEN + 8] = "", p6[INET6_ADDRSTRLEN + 8] = "";
	struct stat st = {0};

	stat("/proc/thread-self/ns/net", &st);
	netns_format_prefix(&nc->pool4, p4, sizeof(p4));
	netns_format_prefix(&nc->pool6, p6, sizeof(p6));
	snprintf(out, size, "net:%lu,%s:%u,%s:%u,%s,%s,%s,%s", (unsigned long)st.st_ino, p4,
		 nc->run4_len, p6, nc->run6_len, nc->ifname_prefix, nc->state_dir, fc->table,
		 fc->if_prefix);
}

/* The host namespace part of a run_pool_fingerprint ("net:<inode>"). */
bool run_pool_same_host(const char *a, const char *b)
{
	size_t n = strcspn(a, ",");

	return n == strcspn(b, ",") && !strncmp(a, b, n);
}

static int entry_format(const struct run_pool_entry *e, char *out, size_t size)
{
	int n =
	    snprintf(out, size,
		     "state=%s pid=%d start=%llu id=%s slot=%u ifname=%s sbx4=%s sbx6=%s "
		     "table=%s prefix=%s cfg=%s ns=%llu gw4=%s gw6=%s\n",
		     e->state, (int)e->pid, e->start, e->id, e->slot, e->ifname,
		     e->sbx4[0] ? e->sbx4 : "-", e->sbx6[0] ? e->sbx6 : "-", e->table, e->prefix,
		     e->cfg, e->ns, e->gw4[0] ? e->gw4 : "-", e->gw6[0] ? e->gw6 : "-");

	return n < 0 || (size_t)n >= size ? -ENOSPC : n;
}

static int entry_parse(const char *text, struct run_pool_entry *e)
{
	int pid, end = -1;

	memset(e, 0, sizeof(*e));
	/* NOLINTNEXTLINE(cert-err34-c): an entry the launcher wrote, in its root-owned dir */
	if (sscanf(text,
		   "state=%7s pid=%d start=%llu id=%12s slot=%u ifname=%15s sbx4=%15s sbx6=%45s "
		   "table=%31s prefix=%7s cfg=%255s%n",
		   e->state, &pid, &e->start, e->id, &e->slot, e->ifname, e->sbx4, e->sbx6,
		   e->table, e->prefix, e->cfg, &end) != 11 ||
	    end < 0 || pid < 0)
		return -EINVAL;
	if (strcmp(e->state, "making") && strcmp(e->state, "ready"))
		return -EINVAL;
	/* an entry without them (older format) parses, but is never leased: gc reclaims it */
	/* NOLINTNEXTLINE(cert-err34-c): as above */
	if (sscanf(text + end, " ns=%llu gw4=%15s gw6=%45s", &e->ns, e->gw4, e->gw6) != 3) {
		e->ns = 0;
		e->gw4[0] = e->gw6[0] = '\0';
	}
	if (!strcmp(e->gw4, "-"))
		e->gw4[0] = '\0';
	if (!strcmp(e->gw6, "-"))
		e->gw6[0] = '\0';
	e->pid = pid;
	if (!strcmp(e->sbx4, "-"))
		e->sbx4[0] = '\0';
	if (!strcmp(e->sbx6, "-"))
		e->sbx6[0] = '\0';
	return 0;
}

static int entry_path(const char *dir, const char *id, char *out, size_t size)
{
	return snprintf(out, size, "%s/%s", dir, id) >= (int)size ? -ENAMETOOLONG : 0;
}

/* Write @e to its file, replacing it atomically. */
int run_pool_entry_save(const char *dir, const struct run_pool_entry *e)
{
	char line[640], path[PATH_MAX];
	int n;

	n = entry_format(e, line, sizeof(line));
	if (n < 0)
		return n;
	if (entry_path(dir, e->id, path, sizeof(path)))
		return -ENAMETOOLONG;
	return wd_write_file_atomic(AT_FDCWD, path, line, (size_t)n, 0);
}

static int entry_load(const char *path, struct run_pool_entry *e)
{
	char *text = NULL;
	size_t len;
	int ret = wd_read_file(path, 4096, &text, &len);

	if (ret)
		return ret;
	ret = entry_parse(text, e);
	free(text);
	return ret;
}

/* Take the pool's lock; with @nonblock, -EWOULDBLOCK when someone holds it. */
int run_pool_lock_how(const char *dir, int *ret_fd, bool nonblock)
{
	char path[PATH_MAX];
	int fd, ret = wd_mkdir_p(dir, 0700);

	if (ret)
		return ret;
	snprintf(path, sizeof(path), "%s/lock", dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	while (flock(fd, LOCK_EX | (nonblock ? LOCK_NB : 0)) < 0) {
		if (errno == EINTR)
			continue;
		ret = -errno;
		close(fd);
		return ret;
	}
	*ret_fd = fd;
	return 0;
}

int run_pool_lock(const char *dir, int *ret_fd)
{
	return run_pool_lock_how(dir, ret_fd, false);
}

/* The nft elements of @e. */
void run_pool_entry_fw(const struct run_pool_entry *e, struct fw_config *fc, struct fw_run *fr)
{
	fw_config_defaults(fc);
	snprintf(fc->table, sizeof(fc->table), "%s", e->table);
	snprintf(fc->if_prefix, sizeof(fc->if_prefix), "%s", e->prefix);
	memset(fr, 0, sizeof(*fr));
	snprintf(fr->ifname, sizeof(fr->ifname), "%s", e->ifname);
	fr->has_v4 = e->sbx4[0] && inet_pton(AF_INET, e->sbx4, &fr->sbx4) == 1;
	fr->has_v6 = e->sbx6[0] && inet_pton(AF_INET6, e->sbx6, &fr->sbx6) == 1;
	fr->has_gw4 = fr->has_v4 && e->gw4[0] && inet_pton(AF_INET, e->gw4, &fr->gw4) == 1;
	fr->has_gw6 = fr->has_v6 && e->gw6[0] && inet_pton(AF_INET6, e->gw6, &fr->gw6) == 1;
}

/* Is the process named by @e (maker or holder) alive? */
bool run_pool_holder_alive(const struct run_pool_entry *e)
{
	return e->pid > 0 && e->start && run_proc_start(e->pid) == e->start;
}

/* Undo a pooled network: its nft elements, its holder (the kernel then removes the namespace
 * and the veth), its slot, its entry file. Return: 0 or a negative errno. */
int run_pool_entry_undo(const char *dir, const struct run_pool_entry *e, enum run_pool_undo how,
			struct wd_err *err)
{
	struct fw_config fc;
	struct fw_run fr;
	char path[PATH_MAX];
	int ret = 0, x;

	if (how != RUN_POOL_UNDO_BY_HOLDER && !strcmp(e->state, "ready") &&
	    run_pool_holder_alive(e))
		kill(e->pid, SIGKILL);
	run_pool_entry_fw(e, &fc, &fr);
	if (how != RUN_POOL_UNDO_FOREIGN && (fr.has_v4 || fr.has_v6)) {
		x = fw_run_del(&fc, &fr, NULL);
		if (x && x != -ENOENT)
			ret = wd_err_set(err, x, "pool network %s: removing its nft elements: %s",
					 e->ifname, strerror(-x));
	}
	/* the slot: its owner is dead now (or a leaser's, who frees it); netns_gc() frees it */
	if (!ret && !entry_path(dir, e->id, path, sizeof(path)))
		unlink(path);
	return ret;
}

int run_pool_entry_reclaim(const char *dir, const struct netns_pool_config *nc,
			   const struct run_pool_entry *e, struct wd_err *err)
{
	(void)nc;
	return run_pool_entry_undo(dir, e, RUN_POOL_UNDO_ALL, err);
}

/* The host namespace inode an entry was made in ("net:<inode>,..." of its run_pool_fingerprint). */
unsigned long long run_pool_entry_host_ns(const struct run_pool_entry *e)
{
	unsigned long long ino = 0;

	/* NOLINTNEXTLINE(cert-err34-c): as in entry_parse() */
	return sscanf(e->cfg, "net:%llu,", &ino) == 1 ? ino : 0;
}

static bool is_holder(const char *pid)
{
	char p[PATH_MAX], comm[32] = "";
	ssize_t n;
	int fd;

	if (snprintf(p, sizeof(p), "/proc/%s/comm", pid) >= (int)sizeof(p))
		return false;
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, comm, sizeof(comm) - 1);
	close(fd);
	return n > 0 && !strncmp(comm, RUN_POOL_HOLDER_NAME "\n", n);
}

bool run_pool_netns_in_use(unsigned long long ino)
{
	static const char *const mounts[] = {"/run/netns", "/var/run/netns"};
	char p[PATH_MAX];
	struct dirent *de;
	struct stat st;
	bool used = false;
	DIR *d;

	if (!ino || (!stat("/proc/1/ns/net", &st) && st.st_ino == ino))
		return true; /* unknown (fail safe: keep it), or pid 1's: never goes */
	for (size_t i = 0; !used && i < WD_ARRAY_SIZE(mounts); i++) {
		d = opendir(mounts[i]);
		while (d && !used && (de = readdir(d)))
			if (de->d_name[0] != '.' &&
			    snprintf(p, sizeof(p), "%s/%s", mounts[i], de->d_name) <
				(int)sizeof(p) &&
			    !stat(p, &st) && st.st_ino == ino)
				used = true;
		if (d)
			closedir(d);
	}
	d = used ? NULL : opendir("/proc");
	while (d && !used && (de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9' || is_holder(de->d_name))
			continue;
		snprintf(p, sizeof(p), "/proc/%s/ns/net", de->d_name);
		used = !stat(p, &st) && st.st_ino == ino;
	}
	if (d)
		closedir(d);
	return used;
}

/* Is @e a ready entry of configuration @cfg whose holder lives and still owns the slot? */
bool run_pool_entry_usable(const struct netns_pool_config *nc, const struct run_pool_entry *e,
			   const char *cfg)
{
	pid_t owner = -1;

	return !strcmp(e->state, "ready") && e->ns && (e->gw4[0] || e->gw6[0]) &&
	       !strcmp(e->cfg, cfg) && run_pool_holder_alive(e) &&
	       !netns_slot_owner(nc, e->slot, e->id, &owner) && owner == e->pid;
}

/* Call @fn for each entry file of @dir (the caller holds the lock); an unparsable file is
 * passed with @e NULL. Stops at the first non-zero return. */
int run_pool_for_each(const char *dir,
		      int (*fn)(const char *path, const struct run_pool_entry *e, void *arg),
		      void *arg)
{
	char path[PATH_MAX];
	struct dirent *de;
	int ret = 0;
	DIR *d = opendir(dir);

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while (!ret && (de = readdir(d))) {
		struct run_pool_entry e;
		bool ok;

		if (de->d_name[0] == '.' || !strcmp(de->d_name, "lock"))
			continue;
		if (entry_path(dir, de->d_name, path, sizeof(path)))
			continue;
		ok = !entry_load(path, &e) && !strcmp(e.id, de->d_name);
		ret = fn(path, ok ? &e : NULL, arg);
	}
	closedir(d);
	return ret;
}

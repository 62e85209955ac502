/* run_pool.c - a small pool of ready-made run networks (namespace, veth, addresses, routes and
 * the run's nft set elements), so that `warden run` leases one instead of building it.
 *
 * Theory of operation. RUN_POOL_DIR holds `lock` (flock) and one file per pooled network,
 * named after its network id, with one line (entry_format()): its state, the pid and start
 * time of the process that holds it, the network (id, slot, interface, sandbox addresses),
 * the nft table and prefix its elements went to, the namespace's inode, and a fingerprint of the
 * configuration it was made for (pools, prefixes, table, and the host network namespace it lives
 * in).
 *
 *   making   the maker built the network (netns_run_create(), not bind-mounted: a mount
 *            would vanish with the maker's mount namespace, e.g. under `ip netns exec`)
 *            and is adding the nft elements; the slot is the maker's
 *   ready    a holder process (a child of the maker that execs this program as
 *            `warden-pool <netns>`, run_pool_holder()) keeps the namespace alive through
 *            one descriptor (fd 3) and otherwise sleeps, in the host's namespace: nothing
 *            runs inside the network. The slot is the holder's, so if the holder dies the
 *            kernel frees the namespace and netns_gc() the slot. Traffic from it reaches
 *            only the gateway's ports (its elements are in the sets), where no registered
 *            run has its addresses: a daemon denies it, and no embedded gateway listens
 *            there. Every RUN_POOL_CHECK_S the holder looks around and exits, removing its
 *            entry and nft elements first, when its veth is gone, when its host namespace
 *            is gone (deleted, and no process but holders left in it: it would otherwise
 *            keep that namespace alive forever), or when it has been idle for
 *            $WARDEN_POOL_IDLE seconds (RUN_POOL_IDLE_DEFAULT).
 *
 * Leasing (run_pool_lease()), under the lock (not waited for: when someone holds it, the
 * caller builds a fresh network): the first ready entry of the caller's
 * configuration whose holder lives is opened through /proc/<holder>/fd/3, its slot becomes
 * the caller's, the cheap health check passes (netns_run_healthy()), the caller records it
 * in its run state, and only then is the holder killed and the entry removed. A leased
 * network is never returned: the run tears it down, and names are never reused. A lease
 * that fails the health check is torn down and the next one tried; with none left the caller
 * builds a fresh network.
 *
 * Filling (run_pool_fill()) happens off the launch path, in the detached teardown child of
 * a finished run. run_pool_gc() (`warden gc`) keeps healthy ready entries of the caller's
 * configuration, leaves other live host namespaces' live entries alone, and reclaims the
 * rest (dead makers or holders, other configurations, holders of a host namespace that is
 * gone); with @drain every entry of this host namespace too.
 */
#include "run/run.h"
#include "netns/netns.h"
#include "nft/nft.h"

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

/* An entry as stored. */
struct entry {
	char state[8];
	pid_t pid;
	unsigned long long start;
	char id[NETNS_ID_MAX];
	uint32_t slot;
	char ifname[IFNAMSIZ];
	char sbx4[INET_ADDRSTRLEN];
	char sbx6[INET6_ADDRSTRLEN];
	char table[32];
	char prefix[8];
	char cfg[256];
	unsigned long long ns;	    /* inode of the network namespace (0: unknown, never leased) */
	char gw4[INET_ADDRSTRLEN];  /* the host side of the veth: the run's own gateway */
	char gw6[INET6_ADDRSTRLEN]; /* ("" in an older entry: never leased) */
};

unsigned run_pool_idle_s(void)
{
	const char *s = getenv("WARDEN_POOL_IDLE");
	char *end;
	unsigned long v;

	if (!s || !*s)
		return RUN_POOL_IDLE_DEFAULT;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < 1 || v > RUN_POOL_IDLE_MAX)
		return RUN_POOL_IDLE_DEFAULT;
	return (unsigned)v;
}

unsigned run_pool_size(void)
{
	const char *s = getenv("WARDEN_POOL");
	char *end;
	unsigned long v;

	if (!s || !*s)
		return RUN_POOL_DEFAULT;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > RUN_POOL_MAX)
		return RUN_POOL_DEFAULT;
	return (unsigned)v;
}

/* What a pooled network depends on, as one word: the pools, names, table and the host
 * network namespace (its veth's host side lives there). */
static void fingerprint(const struct netns_pool_config *nc, const struct fw_config *fc, char *out,
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

/* The host namespace part of a fingerprint ("net:<inode>"). */
static bool same_host(const char *a, const char *b)
{
	size_t n = strcspn(a, ",");

	return n == strcspn(b, ",") && !strncmp(a, b, n);
}

static int entry_format(const struct entry *e, char *out, size_t size)
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

static int entry_parse(const char *text, struct entry *e)
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
static int entry_save(const char *dir, const struct entry *e)
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

static int entry_load(const char *path, struct entry *e)
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
static int pool_lock_how(const char *dir, int *ret_fd, bool nonblock)
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

static int pool_lock(const char *dir, int *ret_fd)
{
	return pool_lock_how(dir, ret_fd, false);
}

/* The nft elements of @e. */
static void entry_fw(const struct entry *e, struct fw_config *fc, struct fw_run *fr)
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
static bool holder_alive(const struct entry *e)
{
	return e->pid > 0 && e->start && run_proc_start(e->pid) == e->start;
}

/* how entry_undo() treats the parts of an entry that are not the caller's to undo */
enum undo_how {
	UNDO_ALL,	/* the holder is killed, the elements deleted here */
	UNDO_BY_HOLDER, /* the caller is the holder: it does not kill itself */
	UNDO_FOREIGN,	/* another host namespace's, which is gone: its elements went with it */
};

/* Undo a pooled network: its nft elements, its holder (the kernel then removes the namespace
 * and the veth), its slot, its entry file. Return: 0 or a negative errno. */
static int entry_undo(const char *dir, const struct entry *e, enum undo_how how, struct wd_err *err)
{
	struct fw_config fc;
	struct fw_run fr;
	char path[PATH_MAX];
	int ret = 0, x;

	if (how != UNDO_BY_HOLDER && !strcmp(e->state, "ready") && holder_alive(e))
		kill(e->pid, SIGKILL);
	entry_fw(e, &fc, &fr);
	if (how != UNDO_FOREIGN && (fr.has_v4 || fr.has_v6)) {
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

static int entry_reclaim(const char *dir, const struct netns_pool_config *nc, const struct entry *e,
			 struct wd_err *err)
{
	(void)nc;
	return entry_undo(dir, e, UNDO_ALL, err);
}

/* The host namespace inode an entry was made in ("net:<inode>,..." of its fingerprint). */
static unsigned long long entry_host_ns(const struct entry *e)
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
static bool entry_usable(const struct netns_pool_config *nc, const struct entry *e, const char *cfg)
{
	pid_t owner = -1;

	return !strcmp(e->state, "ready") && e->ns && (e->gw4[0] || e->gw6[0]) &&
	       !strcmp(e->cfg, cfg) && holder_alive(e) &&
	       !netns_slot_owner(nc, e->slot, e->id, &owner) && owner == e->pid;
}

/* Call @fn for each entry file of @dir (the caller holds the lock); an unparsable file is
 * passed with @e NULL. Stops at the first non-zero return. */
static int for_each_entry(const char *dir,
			  int (*fn)(const char *path, const struct entry *e, void *arg), void *arg)
{
	char path[PATH_MAX];
	struct dirent *de;
	int ret = 0;
	DIR *d = opendir(dir);

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while (!ret && (de = readdir(d))) {
		struct entry e;
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

struct lease_ctx {
	const char *dir;
	const struct netns_pool_config *nc;
	const char *cfg;
	int (*record)(void *arg, const struct netns_run *net);
	void *arg;
	struct netns_run *out;
	struct wd_err *err;
	int ret;
	unsigned refused;
};

/* The holder's namespace descriptor, checked to still be the holder's and to be the pooled
 * namespace itself: the entry says ready as soon as the holder is forked, possibly before it
 * has moved the namespace to its fd 3 (until then fd 3 is whatever its maker had there). */
static int open_held(const struct entry *e)
{
	struct stat st;
	char p[64];
	int fd;

	if (!e->ns)
		return -ESTALE;
	snprintf(p, sizeof(p), "/proc/%d/fd/3", (int)e->pid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (!holder_alive(e)) { /* the pid was reused between the check and the open */
		close(fd);
		return -ESRCH;
	}
	if (fstat(fd, &st) < 0 || (unsigned long long)st.st_ino != e->ns) {
		close(fd); /* not (yet) the namespace the entry names */
		return -ESTALE;
	}
	return fd;
}

static int lease_one(const char *path, const struct entry *e, void *arg)
{
	struct lease_ctx *c = arg;
	int fd, ret;

	if (!e || !entry_usable(c->nc, e, c->cfg))
		return 0;
	fd = open_held(e);
	if (fd < 0)
		return 0;
	ret = netns_run_attach(c->nc, e->slot, e->id, fd, c->out, NULL);
	close(fd);
	if (ret)
		return 0;
	/* the caller's from here on: if it crashes, the ordinary gc of dead runs reclaims it */
	ret = netns_run_set_owner(c->nc, c->out, getpid());
	if (!ret)
		ret = netns_run_healthy(c->out, c->err);
	if (ret) {
		/* broken: torn down (never back into the pool), and the next one is tried */
		c->refused++;
		kill(e->pid, SIGKILL);
		unlink(path);
		entry_reclaim(c->dir, c->nc, e, NULL);
		netns_run_destroy(c->nc, c->out, NULL);
		return 0;
	}
	c->ret = c->record(c->arg, c->out); /* in the run's state before it leaves the pool */
	kill(e->pid, SIGKILL); /* the run's descriptor is the namespace's last reference now */
	unlink(path);
	if (c->ret) {
		entry_reclaim(c->dir, c->nc, e, NULL); /* its elements */
		netns_run_destroy(c->nc, c->out, NULL);
	}
	return 1;
}

int run_pool_lease(const char *dir, const struct netns_pool_config *nc, const struct fw_config *fc,
		   int (*record)(void *arg, const struct netns_run *net), void *arg,
		   struct netns_run *out, struct wd_err *err)
{
	char cfg[256];
	struct lease_ctx c = {dir, nc, cfg, record, arg, out, err, -ENOENT, 0};
	int lock = -1;

	memset(out, 0, sizeof(*out));
	out->netns_fd = -1;
	if (access(dir, F_OK))
		return -ENOENT;
	fingerprint(nc, fc, cfg, sizeof(cfg));
	/* never wait on the launch path: a busy pool (a gc, a filler) means a fresh network */
	if (pool_lock_how(dir, &lock, true))
		return -ENOENT;
	for_each_entry(dir, lease_one, &c);
	close(lock);
	if (c.ret == -ENOENT && c.refused)
		return -EAGAIN; /* @err says why the last one was refused */
	return c.ret;
}

struct count_ctx {
	const struct netns_pool_config *nc;
	const char *cfg;
	unsigned n;
};

static int count_one(const char *path, const struct entry *e, void *arg)
{
	struct count_ctx *c = arg;

	(void)path;
	if (e && !strcmp(e->cfg, c->cfg) &&
	    (entry_usable(c->nc, e, c->cfg) || (!strcmp(e->state, "making") && holder_alive(e))))
		c->n++;
	return 0;
}

/* The forked holder: the pooled namespace goes to fd 3, the adoption pipe to fd 4, and the
 * child becomes `warden-pool <netns>` (this program again, run_pool_holder()): a fresh small
 * process that names itself, with an environment of its idle time (and the sanitizers'
 * options) only. */
_Noreturn static void hold(int netns_fd, int adopted, const char *name)
{
	static const char *const keep[] = {"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"};
	char idle[48], *envp[WD_ARRAY_SIZE(keep) + 2];
	char *argv[] = {(char *)RUN_POOL_HOLDER_NAME, (char *)name, NULL};
	size_t n = 0;

	/* above 4 first, so that neither dup2() below closes the other */
	netns_fd = fcntl(netns_fd, F_DUPFD, 10);
	adopted = fcntl(adopted, F_DUPFD, 10);
	if (netns_fd < 0 || adopted < 0 || dup2(netns_fd, 3) < 0 || dup2(adopted, 4) < 0)
		_exit(1);
	close_range(5, ~0U, CLOSE_RANGE_CLOEXEC);
	snprintf(idle, sizeof(idle), "WARDEN_POOL_IDLE=%u", run_pool_idle_s());
	envp[n++] = idle;
	for (size_t i = 0; i < WD_ARRAY_SIZE(keep); i++)
		for (char **e = environ; e && *e; e++)
			if (!strncmp(*e, keep[i], strlen(keep[i])) && (*e)[strlen(keep[i])] == '=')
				envp[n++] = *e;
	envp[n] = NULL;
	execve("/proc/self/exe", argv, envp);
	_exit(1);
}

/* The holder's own entry, undone by the holder itself (it does not kill itself). */
static int undo_mine(const char *path, const struct entry *e, void *arg)
{
	(void)path;
	(void)arg;
	if (e && e->pid == getpid() && !strcmp(e->state, "ready"))
		entry_undo(RUN_POOL_DIR, e, UNDO_BY_HOLDER, NULL);
	return 0;
}

int run_pool_holder(int argc, char **argv)
{
	unsigned long long self_ns;
	char link[64] = "", c = 0;
	uint64_t end;
	struct stat st;
	sigset_t none;
	ssize_t n;
	int lock = -1;

	prctl(PR_SET_NAME, RUN_POOL_HOLDER_NAME, 0, 0, 0);
	if (argc != 2 || strlen(argv[1]) >= IFNAMSIZ ||
	    readlink("/proc/self/fd/3", link, sizeof(link) - 1) < 4 || strncmp(link, "net:", 4) ||
	    fstat(4, &st) < 0 || !S_ISFIFO(st.st_mode)) {
		wd_say(stderr, "%s: run only by warden, which hands it a network namespace",
		       RUN_POOL_HOLDER_NAME);
		return RUN_EXIT_USAGE;
	}
	/* until the maker recorded us as the entry's holder, we go when it goes (EOF) */
	do
		n = read(4, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1 || c != 'k')
		_exit(0);
	close(4);
	if (chdir("/") < 0)
		_exit(1);
	sigemptyset(&none);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	sigprocmask(SIG_SETMASK, &none, NULL);
	self_ns = stat("/proc/self/ns/net", &st) ? 0 : (unsigned long long)st.st_ino;
	end = wd_mono_ns() + (uint64_t)run_pool_idle_s() * 1000000000ull;
	for (;;) {
		uint64_t now = wd_mono_ns(), left = now < end ? end - now : 0;
		struct timespec ts = {.tv_sec = RUN_POOL_CHECK_S};

		if (left < (uint64_t)RUN_POOL_CHECK_S * 1000000000ull) {
			ts.tv_sec = (time_t)(left / 1000000000ull);
			ts.tv_nsec = (long)(left % 1000000000ull);
		}
		if (left)
			nanosleep(&ts, NULL);
		if (wd_mono_ns() >= end || !if_nametoindex(argv[1]) ||
		    !run_pool_netns_in_use(self_ns))
			break;
	}
	/* idle, its veth or its host namespace gone: its entry and elements go first, under
	 * the pool's lock (a leaser holding it kills us instead) */
	if (!pool_lock(RUN_POOL_DIR, &lock)) {
		for_each_entry(RUN_POOL_DIR, undo_mine, NULL);
		close(lock);
	}
	_exit(0);
}

/* Make one pooled network. Return: 0, or a negative errno (nothing left behind). */
static int make_one(const char *dir, const struct netns_pool_config *ncfg,
		    const struct fw_config *fc, const char *cfg, struct fw_conn **conn,
		    struct wd_err *err)
{
	struct netns_pool_config nc = *ncfg;
	struct netns_run net;
	struct fw_config efc;
	struct entry e;
	struct fw_run fr;
	struct stat st;
	int lock = -1, ret, adopt[2] = {-1, -1};
	pid_t holder = -1;

	nc.bind_mount = false; /* held by a process, not a mount (see above) */
	ret = netns_run_create(&nc, &net, err);
	if (ret)
		return ret;
	if (fstat(net.netns_fd, &st) < 0) {
		ret = -errno;
		netns_run_destroy(&nc, &net, NULL);
		return wd_err_set(err, ret, "fstat of a new network namespace: %s", strerror(-ret));
	}
	memset(&e, 0, sizeof(e));
	e.ns = (unsigned long long)st.st_ino;
	snprintf(e.state, sizeof(e.state), "making");
	e.pid = getpid();
	e.start = run_proc_start(e.pid);
	memcpy(e.id, net.id, sizeof(e.id));
	e.slot = net.slot;
	memcpy(e.ifname, net.ifname, sizeof(e.ifname));
	inet_ntop(AF_INET, &net.addr.sbx4, e.sbx4, sizeof(e.sbx4));
	inet_ntop(AF_INET6, &net.addr.sbx6, e.sbx6, sizeof(e.sbx6));
	inet_ntop(AF_INET, &net.addr.host4, e.gw4, sizeof(e.gw4));
	inet_ntop(AF_INET6, &net.addr.host6, e.gw6, sizeof(e.gw6));
	snprintf(e.table, sizeof(e.table), "%s", fc->table);
	snprintf(e.prefix, sizeof(e.prefix), "%s", fc->if_prefix);
	snprintf(e.cfg, sizeof(e.cfg), "%s", cfg);
	ret = pool_lock(dir, &lock);
	if (!ret) {
		ret = entry_save(dir, &e);
		close(lock);
	}
	if (ret) {
		netns_run_destroy(&nc, &net, NULL);
		return wd_err_set(err, ret, "recording a pool network in %s: %s", dir,
				  strerror(-ret));
	}
	entry_fw(&e, &efc, &fr);
	if (!*conn)
		ret = fw_conn_open(conn, err);
	if (!ret)
		ret = fw_conn_run_add(*conn, fc, &fr, err);
	if (!ret && pipe2(adopt, O_CLOEXEC) < 0)
		ret = wd_err_set(err, -errno, "pipe: %s", strerror(errno));
	if (!ret) {
		holder = fork();
		if (holder == 0)
			hold(net.netns_fd, adopt[0], net.name);
		if (holder < 0)
			ret = wd_err_set(err, -errno, "fork: %s", strerror(errno));
	}
	wd_closep(&adopt[0]);
	if (!ret)
		ret = pool_lock(dir, &lock);
	if (!ret) {
		/* the slot goes to the holder before the entry says ready */
		ret = netns_run_set_owner(&nc, &net, holder);
		if (!ret) {
			snprintf(e.state, sizeof(e.state), "ready");
			e.pid = holder;
			e.start = run_proc_start(holder);
			ret = e.start ? entry_save(dir, &e) : -ESRCH;
		}
		if (!ret && write(adopt[1], "k", 1) != 1)
			ret = -EPIPE; /* it is gone: the entry's holder is dead, gc removes it */
		close(lock);
	}
	wd_closep(&adopt[1]);
	if (ret) {
		if (holder > 0)
			kill(holder, SIGKILL);
		if (!pool_lock(dir, &lock)) {
			entry_reclaim(dir, &nc, &e, NULL);
			close(lock);
		}
		netns_run_destroy(&nc, &net, NULL);
		return ret;
	}
	wd_closep(&net.netns_fd); /* the holder keeps it */
	return 0;
}

int run_pool_fill(const char *dir, const struct netns_pool_config *nc, const struct fw_config *fc,
		  unsigned want, unsigned *ret_made, struct wd_err *err)
{
	struct fw_conn *conn = NULL;
	unsigned made = 0;
	char cfg[256];
	int ret = 0;

	if (ret_made)
		*ret_made = 0;
	if (!want)
		return 0;
	fingerprint(nc, fc, cfg, sizeof(cfg));
	while (made < want) {
		struct count_ctx c = {nc, cfg, 0};
		int lock = -1;

		ret = pool_lock(dir, &lock);
		if (ret) {
			wd_err_set(err, ret, "locking %s: %s", dir, strerror(-ret));
			break;
		}
		ret = for_each_entry(dir, count_one, &c);
		close(lock);
		if (ret || c.n >= want)
			break;
		ret = make_one(dir, nc, fc, cfg, &conn, err);
		if (ret)
			break;
		made++;
	}
	fw_conn_close(conn);
	if (ret_made)
		*ret_made = made;
	return ret;
}

struct gc_ctx {
	const char *dir;
	const struct netns_pool_config *nc;
	const char *cfg;
	bool drain;
	unsigned n;
	struct wd_err *err;
	int ret;
};

static int gc_one(const char *path, const struct entry *e, void *arg)
{
	struct gc_ctx *c = arg;
	int x;

	if (!e) {
		/* entries are renamed into place: only a foreign file gets here */
		unlink(path);
		return 0;
	}
	if (holder_alive(e)) {
		struct netns_run probe = {.live = true};

		if (!same_host(e->cfg, c->cfg)) {
			/* another host namespace's: not ours to judge while it lives; a holder
			 * would keep a deleted one alive forever */
			if (run_pool_netns_in_use(entry_host_ns(e)) || strcmp(e->state, "ready"))
				return 0;
			x = entry_undo(c->dir, e, UNDO_FOREIGN, c->err);
			if (x && !c->ret)
				c->ret = x;
			if (!x)
				c->n++;
			return 0;
		}
		memcpy(probe.ifname, e->ifname, sizeof(probe.ifname));
		if (!c->drain &&
		    (!strcmp(e->state, "making") ||
		     (entry_usable(c->nc, e, c->cfg) && !netns_run_healthy(&probe, NULL))))
			return 0;
		if (!strcmp(e->state, "making"))
			return 0; /* its maker is at work; drained next time */
	}
	x = entry_reclaim(c->dir, c->nc, e, c->err);
	if (x && !c->ret)
		c->ret = x;
	if (!x)
		c->n++;
	return 0;
}

int run_pool_gc(const char *dir, const struct netns_pool_config *nc, const struct fw_config *fc,
		bool drain, unsigned *ret_reclaimed, struct wd_err *err)
{
	char cfg[256];
	struct gc_ctx c = {dir, nc, cfg, drain, 0, err, 0};
	int lock = -1, ret;

	if (ret_reclaimed)
		*ret_reclaimed = 0;
	if (access(dir, F_OK))
		return 0;
	fingerprint(nc, fc, cfg, sizeof(cfg));
	ret = pool_lock(dir, &lock);
	if (ret)
		return wd_err_set(err, ret, "locking %s: %s", dir, strerror(-ret));
	ret = for_each_entry(dir, gc_one, &c);
	close(lock);
	if (ret_reclaimed)
		*ret_reclaimed = c.n;
	return ret ? ret : c.ret;
}

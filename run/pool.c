/* run_pool.c - a small pool of ready-made run networks (namespace, veth, addresses, routes and
 * the run's nft set elements), so that `warden run` leases one instead of building it.
 *
 * Theory of operation. RUN_POOL_DIR holds `lock` (flock) and one file per pooled network,
 * named after its network id, with one line (entry_format()): its state, the pid and start
 * time of the process that holds it, the network (id, slot, interface, sandbox addresses),
 * the nft table and prefix its elements went to, the namespace's inode, and a run_pool_fingerprint
 * of the configuration it was made for (pools, prefixes, table, and the host network namespace it
 * lives in).
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
static int open_held(const struct run_pool_entry *e)
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
	if (!run_pool_holder_alive(e)) { /* the pid was reused between the check and the open */
		close(fd);
		return -ESRCH;
	}
	if (fstat(fd, &st) < 0 || (unsigned long long)st.st_ino != e->ns) {
		close(fd); /* not (yet) the namespace the entry names */
		return -ESTALE;
	}
	return fd;
}

static int lease_one(const char *path, const struct run_pool_entry *e, void *arg)
{
	struct lease_ctx *c = arg;
	int fd, ret;

	if (!e || !run_pool_entry_usable(c->nc, e, c->cfg))
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
		run_pool_entry_reclaim(c->dir, c->nc, e, NULL);
		netns_run_destroy(c->nc, c->out, NULL);
		return 0;
	}
	c->ret = c->record(c->arg, c->out); /* in the run's state before it leaves the pool */
	kill(e->pid, SIGKILL); /* the run's descriptor is the namespace's last reference now */
	unlink(path);
	if (c->ret) {
		run_pool_entry_reclaim(c->dir, c->nc, e, NULL); /* its elements */
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
	run_pool_fingerprint(nc, fc, cfg, sizeof(cfg));
	/* never wait on the launch path: a busy pool (a gc, a filler) means a fresh network */
	if (run_pool_lock_how(dir, &lock, true))
		return -ENOENT;
	run_pool_for_each(dir, lease_one, &c);
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

static int count_one(const char *path, const struct run_pool_entry *e, void *arg)
{
	struct count_ctx *c = arg;

	(void)path;
	if (e && !strcmp(e->cfg, c->cfg) &&
	    (run_pool_entry_usable(c->nc, e, c->cfg) ||
	     (!strcmp(e->state, "making") && run_pool_holder_alive(e))))
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
static int undo_mine(const char *path, const struct run_pool_entry *e, void *arg)
{
	(void)path;
	(void)arg;
	if (e && e->pid == getpid() && !strcmp(e->state, "ready"))
		run_pool_entry_undo(RUN_POOL_DIR, e, RUN_POOL_UNDO_BY_HOLDER, NULL);
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
	if (!run_pool_lock(RUN_POOL_DIR, &lock)) {
		run_pool_for_each(RUN_POOL_DIR, undo_mine, NULL);
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
	struct run_pool_entry e;
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
	ret = run_pool_lock(dir, &lock);
	if (!ret) {
		ret = run_pool_entry_save(dir, &e);
		close(lock);
	}
	if (ret) {
		netns_run_destroy(&nc, &net, NULL);
		return wd_err_set(err, ret, "recording a pool network in %s: %s", dir,
				  strerror(-ret));
	}
	run_pool_entry_fw(&e, &efc, &fr);
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
		ret = run_pool_lock(dir, &lock);
	if (!ret) {
		/* the slot goes to the holder before the entry says ready */
		ret = netns_run_set_owner(&nc, &net, holder);
		if (!ret) {
			snprintf(e.state, sizeof(e.state), "ready");
			e.pid = holder;
			e.start = run_proc_start(holder);
			ret = e.start ? run_pool_entry_save(dir, &e) : -ESRCH;
		}
		if (!ret && write(adopt[1], "k", 1) != 1)
			ret = -EPIPE; /* it is gone: the entry's holder is dead, gc removes it */
		close(lock);
	}
	wd_closep(&adopt[1]);
	if (ret) {
		if (holder > 0)
			kill(holder, SIGKILL);
		if (!run_pool_lock(dir, &lock)) {
			run_pool_entry_reclaim(dir, &nc, &e, NULL);
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
	run_pool_fingerprint(nc, fc, cfg, sizeof(cfg));
	while (made < want) {
		struct count_ctx c = {nc, cfg, 0};
		int lock = -1;

		ret = run_pool_lock(dir, &lock);
		if (ret) {
			wd_err_set(err, ret, "locking %s: %s", dir, strerror(-ret));
			break;
		}
		ret = run_pool_for_each(dir, count_one, &c);
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

static int gc_one(const char *path, const struct run_pool_entry *e, void *arg)
{
	struct gc_ctx *c = arg;
	int x;

	if (!e) {
		/* entries are renamed into place: only a foreign file gets here */
		unlink(path);
		return 0;
	}
	if (run_pool_holder_alive(e)) {
		struct netns_run probe = {.live = true};

		if (!run_pool_same_host(e->cfg, c->cfg)) {
			/* another host namespace's: not ours to judge while it lives; a holder
			 * would keep a deleted one alive forever */
			if (run_pool_netns_in_use(run_pool_entry_host_ns(e)) ||
			    strcmp(e->state, "ready"))
				return 0;
			x = run_pool_entry_undo(c->dir, e, RUN_POOL_UNDO_FOREIGN, c->err);
			if (x && !c->ret)
				c->ret = x;
			if (!x)
				c->n++;
			return 0;
		}
		memcpy(probe.ifname, e->ifname, sizeof(probe.ifname));
		if (!c->drain &&
		    (!strcmp(e->state, "making") ||
		     (run_pool_entry_usable(c->nc, e, c->cfg) && !netns_run_healthy(&probe, NULL))))
			return 0;
		if (!strcmp(e->state, "making"))
			return 0; /* its maker is at work; drained next time */
	}
	x = run_pool_entry_reclaim(c->dir, c->nc, e, c->err);
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
	run_pool_fingerprint(nc, fc, cfg, sizeof(cfg));
	ret = run_pool_lock(dir, &lock);
	if (ret)
		return wd_err_set(err, ret, "locking %s: %s", dir, strerror(-ret));
	ret = run_pool_for_each(dir, gc_one, &c);
	close(lock);
	if (ret_reclaimed)
		*ret_reclaimed = c.n;
	return ret ? ret : c.ret;
}

struct list_ctx {
	struct run_pool_info *out;
	size_t max, n;
};

static int list_one(const char *path, const struct run_pool_entry *e, void *arg)
{
	struct list_ctx *c = arg;
	struct run_pool_info *i;

	(void)path;
	if (!e)
		return 0;
	if (c->n < c->max) {
		i = &c->out[c->n];
		snprintf(i->id, sizeof(i->id), "%s", e->id);
		snprintf(i->state, sizeof(i->state), "%s", e->state);
		i->pid = e->pid;
		i->alive = run_pool_holder_alive(e);
	}
	c->n++;
	return 0;
}

int run_pool_list(const char *dir, struct run_pool_info *out, size_t max, size_t *ret_n)
{
	struct list_ctx c = {out, max, 0};
	int ret = run_pool_for_each(dir, list_one, &c);

	*ret_n = c.n;
	return ret;
}

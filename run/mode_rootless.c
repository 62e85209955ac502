/* run_rootless.c - the network of a rootless run (`warden run --mode rootless`): a user
 * namespace and a network namespace of the caller's own, made without any privilege.
 *
 * Theory of operation (docs/run.md "Rootless mode"). A short-lived child (the "maker")
 * unshares a user and a network namespace, maps the caller's uid and gid onto themselves
 * (so it holds every capability over the new namespaces, and over nothing else), and in
 * the new network namespace:
 *
 *   net       lo up; the gateway's and the program's addresses (slot 0 of the pools) on lo;
 *             default routes via lo from the program's addresses     (netns_rootless_up())
 *   nft       the run's own table (FW_MODE_RUN: every TCP connection and DNS query DNATed
 *             to the gateway's address, the gateway's ports there, loopback; everything else
 *             dropped and logged), installed and audited clean       (nft/)
 *   sockets   the gateway's listening sockets (transparent, proxy, DNS over UDP and TCP,
 *             IPv4 and IPv6) bound to the gateway's address, the liveness probe's UDP
 *             socket bound to the program's IPv4 address, and the NFLOG socket of the
 *             table's group (what it drops, for the gateway's audit log)
 *   hand-off  those sockets and the two namespaces' descriptors sent to the launcher
 *             (SCM_RIGHTS), then the maker exits
 *
 * The namespaces live as long as something holds them: the launcher's descriptors, the
 * embedded gateway's listening sockets, the sandbox. Nothing of a rootless run exists on the
 * host: no veth, no host nft table, no mount; when the launcher dies (even SIGKILL) its
 * gateway and sandbox die with it (PR_SET_PDEATHSIG) and the kernel frees the namespaces.
 */
#include "run/internal.h"
#include "conf/host.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int run_rootless_fw_config(const struct wd_gwconf *g, struct fw_config *fc,
			   struct netns_addrs *ret_addrs)
{
	struct netns_pool_config nc;
	struct netns_addrs a;

	if (conf_pool_config(g, &nc) || netns_slot_addrs(&nc, 0, &a))
		return -EINVAL;
	conf_fw_config(g, fc);
	fw_config_rootless(fc, &a.host4, &a.host6);
	if (ret_addrs)
		*ret_addrs = a;
	return 0;
}

/* What the maker says besides its descriptors. */
struct maker_msg {
	int err; /* 0, or a positive errno */
	int nfds;
	char msg[sizeof(((struct wd_err *)0)->msg)];
};

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int ret;

	if (fd < 0)
		return -errno;
	ret = wd_write_all(fd, text, strlen(text));
	close(fd);
	return ret;
}

/* The caller's uid and gid mapped onto themselves: the maker holds every capability over the
 * new namespaces, and the program's files stay the caller's. */
static int map_ids(uid_t uid, gid_t gid, struct wd_err *err)
{
	char line[64];
	int ret = write_file("/proc/self/setgroups", "deny");

	if (!ret) {
		snprintf(line, sizeof(line), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
		ret = write_file("/proc/self/uid_map", line);
	}
	if (!ret) {
		snprintf(line, sizeof(line), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
		ret = write_file("/proc/self/gid_map", line);
	}
	if (ret)
		return wd_err_set(err, ret,
				  "mapping uid %u and gid %u in the run's user namespace: %s",
				  (unsigned)uid, (unsigned)gid, strerror(-ret));
	return 0;
}

/* One socket bound at @a:@port (@type), listening when a stream: CLOEXEC, blocking (the gateway
 * makes it non-blocking and tunes it). Return: the descriptor, or a negative errno. */
static int bound_socket(int family, const void *a, uint16_t port, int type, struct wd_err *err)
{
	char s[INET6_ADDRSTRLEN];
	int fd = wd_socket_bound(family, a, port, type);

	if (fd < 0)
		return wd_err_set(err, fd, "binding %s port %u in the run's namespace: %s",
				  inet_ntop(family, a, s, sizeof(s)) ? s : "?", port,
				  strerror(-fd));
	return fd;
}

_Static_assert(RUN_ROOTLESS_CT - RUN_ROOTLESS_UDP4 + 1 == FW_RUN_NUDP,
	       "the UDP relay's descriptors are fw_run_udp_sockets()'s, in its order");

/* how many descriptors the maker of @p hands over */
static int nfds_of(const struct run_rootless_plan *p)
{
	if (p->bare)
		return RUN_ROOTLESS_NBARE;
	return p->fc.port_udp ? RUN_ROOTLESS_NFDS : RUN_ROOTLESS_UDP4;
}

/* The run's table, installed and audited clean. */
static int table_up(const struct fw_config *fc, struct wd_err *err)
{
	struct fw_audit_report rep = {0};
	int ret = fw_install(fc, err);

	if (ret == -EOPNOTSUPP || ret == -ENOENT || ret == -EAFNOSUPPORT)
		return wd_err_set(
		    err, ret,
		    "the kernel refuses a NAT chain in the run's namespace (%s): nf_nat "
		    "is not loaded. fix: as root, once: modprobe nf_nat (and add "
		    "nf_nat to /etc/modules-load.d/warden.conf)",
		    strerror(-ret));
	run_stamp("ns.nft");
	if (ret)
		return ret;
	ret = fw_audit(fc, &rep, err);
	if (!ret && rep.violations) {
		size_t i = 0;

		while (i < rep.n && rep.items[i].level != FW_VIOLATION)
			i++;
		ret = wd_err_set(err, -EPROTO, "the run's nft table does not audit clean: %s: %s",
				 i < rep.n ? rep.items[i].object : "?",
				 i < rep.n ? rep.items[i].msg : "?");
	}
	fw_audit_report_free(&rep);
	return ret;
}

/* The maker: the stages of the theory of operation, then its descriptors sent on @sock. */
static _Noreturn void maker(int sock, const struct run_rootless_plan *p)
{
	struct maker_msg m = {0};
	union {
		char buf[CMSG_SPACE(sizeof(int) * RUN_ROOTLESS_NFDS)];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = {&m, sizeof(m)};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	const struct netns_addrs *a = &p->addr;
	int fds[RUN_ROOTLESS_NFDS], ret = 0;
	struct wd_err err;
	struct cmsghdr *cm;

	wd_err_clear(&err);
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0) {
		ret = wd_err_set(
		    &err, -errno,
		    "creating a user and a network namespace: %s (`warden doctor` checks "
		    "unprivileged user namespaces)",
		    strerror(errno));
		goto out;
	}
	/* WARDEN_TIMING: the network stage's parts (the fork counts into the first) */
	run_stamp("ns.unshare");
	ret = map_ids(p->uid, p->gid, &err);
	if (!ret && !p->bare)
		ret = netns_rootless_up(a, &err);
	run_stamp("ns.up");
	if (!ret && !p->bare)
		ret = table_up(&p->fc, &err);
	run_stamp("ns.audit");
	if (ret)
		goto out;
	fds[RUN_ROOTLESS_USERNS] = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
	fds[RUN_ROOTLESS_NETNS] = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (fds[RUN_ROOTLESS_USERNS] < 0 || fds[RUN_ROOTLESS_NETNS] < 0) {
		ret = wd_err_set(&err, -errno, "opening the run's namespaces: %s", strerror(errno));
		goto out;
	}
	/* the liveness probe asks from the program's own address, as the program would (bare:
	 * the address the daemon will give it, chosen by the route when the probe sends) */
	if (p->bare) {
		fds[RUN_ROOTLESS_PROBE] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fds[RUN_ROOTLESS_PROBE] < 0)
			wd_err_set(&err, -errno, "socket: %s", strerror(errno));
	} else {
		fds[RUN_ROOTLESS_PROBE] = bound_socket(AF_INET, &a->sbx4, 0, SOCK_DGRAM, &err);
	}
	ret = fds[RUN_ROOTLESS_PROBE] < 0 ? fds[RUN_ROOTLESS_PROBE] : 0;
	if (!ret && !p->bare)
		ret =
		    fw_run_listeners(&p->fc, &a->host4, &a->host6, fds + RUN_ROOTLESS_LISTEN, &err);
	if (!ret && !p->bare) {
		fds[RUN_ROOTLESS_NFLOG] = fw_nflog_bind(p->fc.nflog_group, &err);
		ret = fds[RUN_ROOTLESS_NFLOG] < 0 ? fds[RUN_ROOTLESS_NFLOG] : 0;
	}
	if (!ret && !p->bare && p->fc.port_udp)
		ret =
		    fw_run_udp_sockets(&p->fc, &a->host4, &a->host6, fds + RUN_ROOTLESS_UDP4, &err);
	run_stamp("ns.sockets");
	if (ret)
		goto out;
	m.nfds = nfds_of(p);
	memset(&cbuf, 0, sizeof(cbuf));
	mh.msg_control = cbuf.buf;
	mh.msg_controllen = sizeof(cbuf.buf);
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)m.nfds);
	mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)m.nfds);
	memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)m.nfds);
out:
	m.err = -ret;
	if (ret) {
		const char *t = err.msg[0] ? err.msg : strerror(-ret);
		size_t l = strnlen(t, sizeof(m.msg) - 1);

		memcpy(m.msg, t, l);
		m.msg[l] = '\0';
	}
	_exit(sendmsg(sock, &mh, MSG_NOSIGNAL) == (ssize_t)sizeof(m) && !ret ? 0 : 1);
}

void run_rootless_init(struct run_rootless *rl)
{
	rl->userns_fd = rl->netns_fd = rl->probe_fd = -1;
	for (int i = 0; i < RUN_ROOTLESS_NGW; i++)
		rl->listen[i] = -1;
}

void run_rootless_close(struct run_rootless *rl)
{
	wd_closep(&rl->userns_fd);
	wd_closep(&rl->netns_fd);
	wd_closep(&rl->probe_fd);
	for (int i = 0; i < RUN_ROOTLESS_NGW; i++)
		wd_closep(&rl->listen[i]);
}

int run_rootless_make(struct run_rootless *rl, const struct run_rootless_plan *p,
		      struct wd_err *err)
{
	struct maker_msg m = {0};
	union {
		char buf[CMSG_SPACE(sizeof(int) * RUN_ROOTLESS_NFDS)];
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = {&m, sizeof(m)};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = cbuf.buf,
			    .msg_controllen = sizeof(cbuf.buf)};
	struct timeval tv = {.tv_sec = 10};
	int sp[2], st, fds[RUN_ROOTLESS_NFDS], ret, want = nfds_of(p);
	struct cmsghdr *cm;
	ssize_t n;
	pid_t pid;

	run_rootless_init(rl);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return wd_err_set(err, -errno, "socketpair: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		ret = -errno;
		close(sp[0]);
		close(sp[1]);
		return wd_err_set(err, ret, "fork: %s", strerror(-ret));
	}
	if (pid == 0) {
		close(sp[0]);
		maker(sp[1], p);
	}
	close(sp[1]);
	setsockopt(sp[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	do
		n = recvmsg(sp[0], &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	ret = n < 0 ? -errno : 0;
	close(sp[0]);
	if (n < 0)
		kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	cm = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL;
	if (n == (ssize_t)sizeof(m) && !m.err && cm && cm->cmsg_level == SOL_SOCKET &&
	    cm->cmsg_type == SCM_RIGHTS && cm->cmsg_len == CMSG_LEN(sizeof(int) * (size_t)want) &&
	    m.nfds == want && !(mh.msg_flags & MSG_CTRUNC)) {
		memcpy(fds, CMSG_DATA(cm), sizeof(int) * (size_t)want);
		rl->userns_fd = fds[RUN_ROOTLESS_USERNS];
		rl->netns_fd = fds[RUN_ROOTLESS_NETNS];
		rl->probe_fd = fds[RUN_ROOTLESS_PROBE];
		for (int i = 0; !p->bare && i < RUN_ROOTLESS_NLISTEN; i++)
			rl->listen[i] = fds[RUN_ROOTLESS_LISTEN + i];
		if (!p->bare)
			rl->listen[RUN_ROOTLESS_NLISTEN] = fds[RUN_ROOTLESS_NFLOG];
		for (int i = 0; !p->bare && p->fc.port_udp && i < FW_RUN_NUDP; i++)
			rl->listen[RUN_ROOTLESS_NLISTEN + 1 + i] = fds[RUN_ROOTLESS_UDP4 + i];
		rl->addr = p->addr;
		return 0;
	}
	/* descriptors that came with a malformed message are closed */
	if (cm && cm->cmsg_type == SCM_RIGHTS)
		for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++)
			close(((int *)CMSG_DATA(cm))[i]);
	if (n == (ssize_t)sizeof(m) && m.err) {
		m.msg[sizeof(m.msg) - 1] = '\0';
		return wd_err_set(err, -m.err, "%s", m.msg);
	}
	return wd_err_set(
	    err, ret ? ret : -EPROTO, "the namespace maker %s without saying why (%s)",
	    WIFSIGNALED(st) ? "was killed" : "exited", ret ? strerror(-ret) : "no message");
}

int run_rootless_up(struct run *r)
{
	struct run_rootless_plan p = {.uid = getuid(), .gid = getgid()};
	struct wd_err err;
	int ret;

	if (run_rootless_fw_config(&r->input.gwc, &p.fc, &p.addr))
		return run_fail(r, "network", "correct pools.runs_v4 / runs_v6",
				"bad run pool %s or %s", r->input.gwc.pool_v4,
				r->input.gwc.pool_v6);
	r->network.fcfg = p.fc;
	wd_err_clear(&err);
	ret = run_rootless_make(&r->network.rl, &p, &err);
	if (ret)
		return run_fail(r, "network", "`warden doctor` checks what a rootless run needs",
				"%s", err.msg[0] ? err.msg : strerror(-ret));
	r->network.net.netns_fd = r->network.rl.netns_fd;
	snprintf(r->network.net.ifname, sizeof(r->network.net.ifname), "lo");
	inet_ntop(AF_INET, &p.addr.host4, r->network.host4, sizeof(r->network.host4));
	inet_ntop(AF_INET6, &p.addr.host6, r->network.host6, sizeof(r->network.host6));
	inet_ntop(AF_INET, &p.addr.sbx4, r->rec.sbx4, sizeof(r->rec.sbx4));
	inet_ntop(AF_INET6, &p.addr.sbx6, r->rec.sbx6, sizeof(r->rec.sbx6));
	/* no interface and no table in the record: nothing of the run's network is on the host
	 * for `warden gc` to remove */
	run_state_save(r);
	run_note(r, "network: a user and network namespace of uid %u's own (rootless)",
		 (unsigned)p.uid);
	return 0;
}

/* Appends a copy of @s to @v (@n used, room for it and the NULL checked by the caller). */
static int push_dup(char **v, size_t *n, const char *s)
{
	v[*n] = strdup(s);
	return v[*n] ? (int)++*n : -ENOMEM;
}

char **run_rootless_scope_argv(const char *id, const struct policy_limits *lim, char *const *cmd)
{
	char buf[96];
	size_t n = 0, ncmd = 0;
	char **v;
	int r = 0;

	/* the head, --unit, "-p" and a value for each of the OOM policy, MemoryMax,
	 * MemorySwapMax, TasksMax and CPUQuota, "--", the command and the NULL */
	static const char *const head[] = {"systemd-run", "--user", "--scope", "--quiet",
					   "--collect"};
	static const size_t fixed = WD_ARRAY_SIZE(head) + 1 + 2 * 5 + 1;

	while (cmd[ncmd])
		ncmd++;
	v = calloc(fixed + ncmd + 1, sizeof(*v));
	if (!v)
		return NULL;
	for (size_t i = 0; r >= 0 && i < WD_ARRAY_SIZE(head); i++)
		r = push_dup(v, &n, head[i]);
	snprintf(buf, sizeof(buf), "--unit=warden-%s", id);
	if (r >= 0)
		r = push_dup(v, &n, buf);
	/* a scope's default OOMPolicy=stop makes systemd SIGTERM the whole scope when the
	 * kernel's OOM killer ends one of its processes (the run then ends 143, not as the
	 * kernel killed it); the kernel's kill stands alone (docs/vm.md) */
	if (r >= 0) {
		r = push_dup(v, &n, "-p");
		r = r < 0 ? r : push_dup(v, &n, RUN_SCOPE_OOM_PROPERTY);
	}
	if (r >= 0 && lim->memory_mb) {
		snprintf(buf, sizeof(buf), "MemoryMax=%llu",
			 (unsigned long long)lim->memory_mb << 20);
		r = push_dup(v, &n, "-p");
		r = r < 0 ? r : push_dup(v, &n, buf);
		r = r < 0 ? r : push_dup(v, &n, "-p");
		r = r < 0 ? r : push_dup(v, &n, "MemorySwapMax=0");
	}
	if (r >= 0 && lim->pids) {
		snprintf(buf, sizeof(buf), "TasksMax=%u", lim->pids);
		r = push_dup(v, &n, "-p");
		r = r < 0 ? r : push_dup(v, &n, buf);
	}
	if (r >= 0 && lim->cpu_milli) {
		/* thousandths of a core -> percent of one core (CPUQuota=150% is 1.5 cores) */
		snprintf(buf, sizeof(buf), "CPUQuota=%u%%", (lim->cpu_milli + 9) / 10);
		r = push_dup(v, &n, "-p");
		r = r < 0 ? r : push_dup(v, &n, buf);
	}
	if (r >= 0)
		r = push_dup(v, &n, "--");
	for (size_t i = 0; r >= 0 && i < ncmd; i++)
		r = push_dup(v, &n, cmd[i]);
	if (r < 0) {
		run_strv_free(v);
		return NULL;
	}
	return v;
}

bool run_rootless_scope_usable(const char *runtime_dir, const char *systemd_run,
			       const char *cgroup_root)
{
	char p[PATH_MAX];
	struct stat st;

	if (!runtime_dir || runtime_dir[0] != '/' ||
	    snprintf(p, sizeof(p), "%s/systemd/private", runtime_dir) >= (int)sizeof(p) ||
	    lstat(p, &st) || !S_ISSOCK(st.st_mode) || st.st_uid != getuid())
		return false;
	if (stat(systemd_run, &st) || !S_ISREG(st.st_mode) || access(systemd_run, X_OK))
		return false;
	return snprintf(p, sizeof(p), "%s/cgroup.controllers", cgroup_root) < (int)sizeof(p) &&
	       !access(p, R_OK);
}

void run_rootless_scope_pick(struct run *r)
{
	const char *off = getenv("WARDEN_NO_SYSTEMD_SCOPE");

	r->limits.scope =
	    !(off && !strcmp(off, "1")) &&
	    run_rootless_scope_usable(getenv("XDG_RUNTIME_DIR"), RUN_SYSTEMD_RUN, "/sys/fs/cgroup");
}

int run_rootless_scope_prepare(struct run *r)
{
	static char *const env_i[] = {"/usr/bin/env", "-i", NULL};
	const char *bus = getenv("DBUS_SESSION_BUS_ADDRESS");
	const char *xdg = getenv("XDG_RUNTIME_DIR");

	run_rootless_scope_free(r);
	/* the scope's command: bwrap with an empty environment, as without a scope */
	r->limits.scope_argv = run_rootless_scope_argv(r->id, &r->input.pol->limits, env_i);
	if (asprintf(&r->limits.scope_env[0], "XDG_RUNTIME_DIR=%s", xdg ? xdg : "") < 0)
		r->limits.scope_env[0] = NULL;
	if (bus && asprintf(&r->limits.scope_env[1], "DBUS_SESSION_BUS_ADDRESS=%s", bus) < 0)
		r->limits.scope_env[1] = NULL;
	if (!r->limits.scope_argv || !r->limits.scope_env[0] || (bus && !r->limits.scope_env[1])) {
		run_rootless_scope_free(r);
		return -ENOMEM;
	}
	return 0;
}

void run_rootless_scope_free(struct run *r)
{
	run_strv_free(r->limits.scope_argv);
	r->limits.scope_argv = NULL;
	for (size_t i = 0; i < WD_ARRAY_SIZE(r->limits.scope_env); i++) {
		free(r->limits.scope_env[i]);
		r->limits.scope_env[i] = NULL;
	}
}

void run_strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

void run_rootless_down(struct run *r)
{
	/* the namespaces go once the gateway and the sandbox are gone too (daemon mode: the
	 * daemon let go of its own at unregister) */
	wd_closep(&r->gateway.gw_hold);
	wd_buf_free(&r->gateway.gw_in);
	run_rootless_close(&r->network.rl);
	r->network.net.netns_fd = -1;
}

/* No cgroup of the caller's: memory sampling, RLIMIT_NPROC in the run's user namespace, the
 * timeout; or the user's systemd scope where it delegates cgroup v2. */
static int rootless_prereq(struct run *r)
{
	r->limits.lkind = LIMITS_SAMPLING;
	run_rootless_scope_pick(r);
	return 0;
}

static int rootless_limits(struct run *r)
{
	memset(&r->limits.lim, 0, sizeof(r->limits.lim));
	r->limits.lim.kind = LIMITS_SAMPLING;
	r->limits.lim.lim = r->input.pol->limits;
	return 0;
}

static void rootless_isolation(const struct run *r, const char *sb, char *out, size_t size)
{
	if (r->limits.scope)
		/* the user's systemd scope (cgroup v2) holds them; the fallback's stay on */
		snprintf(out, size,
			 "userns+netns+nft(own),%s,uid=%u,limits=systemd-scope(memory:MemoryMax+"
			 "pids:TasksMax+cpu:CPUQuota)+memory:pss-sampling+pids:rlimit-nproc(userns)"
			 "+time:wall-clock",
			 sb, (unsigned)r->input.uid);
	else
		/* no cgroup of the user's: which mechanism holds each limit */
		snprintf(out, size,
			 "userns+netns+nft(own),%s,uid=%u,limits=memory:pss-sampling+"
			 "pids:rlimit-nproc(userns)+time:wall-clock",
			 sb, (unsigned)r->input.uid);
}

const struct run_mode_ops run_mode_rootless = {
    .name = "rootless",
    .own_userns = true,
    .by_daemon = false,
    .gateway_inside = true,
    .prereq = rootless_prereq,
    .net_up = run_rootless_up,
    .net_down = run_rootless_down,
    .limits = rootless_limits,
    .isolation = rootless_isolation,
    .finish = NULL,
};

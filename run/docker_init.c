/* docker_init.c - warden-docker-init, the first process of a Docker backend's container
 * (docs/run.md "Backends: Docker"): it builds the run's network inside the container, hands
 * the gateway its sockets, and becomes the program's PID 1 with nothing left to give.
 *
 * Theory of operation. The launcher (sandbox_docker.c; any user who may talk to dockerd: no
 * root, no setns) starts the container with `--network none --user 0:0 --cap-drop ALL
 * --cap-add NET_ADMIN --cap-add SETUID --cap-add SETGID --cap-add SETPCAP`, this binary (with
 * its loader and libraries when it is not static) bind-mounted read-only as the entrypoint and
 * a unix socket of the launcher's bind-mounted beside it. The protocol is docker_proto.h's.
 * Its stages:
 *
 *   plan      connect to the socket (argv[1]), read the launcher's plan: the run's addresses
 *             (slot 0 of the pools, as a rootless run), its table, the program's uid and gid
 *   net       lo up, the addresses and routes of a rootless run      (netns_rootless_up())
 *   nft       the run's own table (FW_MODE_RUN), installed and audited clean (nft/: the
 *             rootless mode's code, unchanged)
 *   sockets   the gateway's listening sockets, the NFLOG socket of the table's group, the
 *             liveness probe's socket and, when the table redirects UDP to a synthetic
 *             address (fc.port_udp), the UDP relay's two listeners and a conntrack socket,
 *             made in the container's namespace (nft/inside.c) and sent to the launcher
 *             (SCM_RIGHTS crosses the container boundary: one kernel)
 *   grants    the launcher's grants checked: the file at each path in the container is the
 *             one the launcher opened there without following a link (docker_proto.h)
 *   go        wait for the launcher's one-byte go ('G'); anything else, or EOF, and the
 *             program never starts (exit 125)
 *   drop      every capability from the bounding set (CAP_SETPCAP), no ambient ones, the
 *             program's gid, no supplementary groups, its uid (which clears the permitted
 *             and effective sets), checked empty with capget(); no_new_privs
 *   exec      the program (argv after "--") as PID 1's child: signals forwarded, orphans
 *             reaped, its exit status passed on (128+N for a signal); the launcher's
 *             connection watched: when it ends, so does everything in the container */
#include "common/common.h"
#include "run/docker_proto.h"

#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static _Noreturn void die(const char *stage, const char *msg)
{
	/* only our own text: nothing of the run's goes to the terminal from here */
	fprintf(stderr, "warden-docker-init: %s: %s\n", stage, msg);
	_exit(DOCKER_INIT_FAILED);
}

/* The stages net and nft. Return: 0, or a negative errno with @err set. */
static int network_up(const struct docker_init_plan *p, struct wd_err *err)
{
	struct fw_audit_report rep = {0};
	int ret;

	if (p->fc.mode != FW_MODE_RUN)
		return wd_err_set(err, -EPROTO, "the plan's table is not a run's own");
	ret = netns_rootless_up(&p->addr, err);
	if (!ret)
		ret = fw_install(&p->fc, err);
	if (!ret)
		ret = fw_audit(&p->fc, &rep, err);
	if (!ret && rep.violations)
		ret = wd_err_set(err, -EPROTO, "the container's nft table does not audit clean: %s",
				 rep.n ? rep.items[0].msg : "?");
	fw_audit_report_free(&rep);
	return ret;
}

_Static_assert(DOCKER_INIT_CT - DOCKER_INIT_UDP4 + 1 == FW_RUN_NUDP,
	       "the UDP relay's descriptors are fw_run_udp_sockets()'s, in its order");

/* how many descriptors the reply to @p carries */
static int nfds_of(const struct docker_init_plan *p)
{
	return p->fc.port_udp ? DOCKER_INIT_NFDS : DOCKER_INIT_NBASE;
}

/* The stage sockets: the listeners, the NFLOG socket, the probe's and the UDP relay's, made.
 * Return: 0, or a negative errno with @err set (none is left open). */
static int sockets_make(const struct docker_init_plan *p, int fds[DOCKER_INIT_NFDS],
			struct wd_err *err)
{
	int ret;

	for (int i = 0; i < DOCKER_INIT_NFDS; i++)
		fds[i] = -1;
	ret =
	    fw_run_listeners(&p->fc, &p->addr.host4, &p->addr.host6, fds + DOCKER_INIT_LISTEN, err);
	if (ret)
		return ret;
	fds[DOCKER_INIT_NFLOG] = fw_nflog_bind(p->fc.nflog_group, err);
	fds[DOCKER_INIT_PROBE] = wd_socket_bound(AF_INET, &p->addr.sbx4, 0, SOCK_DGRAM);
	ret = fds[DOCKER_INIT_NFLOG] < 0 ? fds[DOCKER_INIT_NFLOG] : 0;
	if (!ret && fds[DOCKER_INIT_PROBE] < 0)
		ret = wd_err_set(err, fds[DOCKER_INIT_PROBE],
				 "binding the liveness probe's socket: %s",
				 strerror(-fds[DOCKER_INIT_PROBE]));
	if (!ret && p->fc.port_udp)
		ret = fw_run_udp_sockets(&p->fc, &p->addr.host4, &p->addr.host6,
					 fds + DOCKER_INIT_UDP4, err);
	if (ret)
		for (int i = 0; i < DOCKER_INIT_NFDS; i++)
			wd_closep(&fds[i]);
	return ret;
}

/* The sockets sent on @sock with the reply (@nfds of them), and closed here. */
static void sockets_send(int sock, int fds[DOCKER_INIT_NFDS], int nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * DOCKER_INIT_NFDS)];
		struct cmsghdr align;
	} cbuf;
	struct docker_init_reply m = {.nfds = nfds};
	struct iovec iov = {&m, sizeof(m)};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = cbuf.buf,
			    .msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds)};
	struct cmsghdr *cm;

	memset(&cbuf, 0, sizeof(cbuf));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
	memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)nfds);
	if (sendmsg(sock, &mh, MSG_NOSIGNAL) != (ssize_t)sizeof(m))
		die("sockets", strerror(errno));
	for (int i = 0; i < DOCKER_INIT_NFDS; i++)
		wd_closep(&fds[i]);
}

/* The stage grants: what the container has at each grant's path is the file the launcher
 * opened there (docker mounts by path: a link swapped in on the way would show here). Return:
 * 0, or a negative errno with @err naming the path. */
static int grants_check(int sock, struct wd_err *err)
{
	static char buf[DOCKER_INIT_GRANTS_MAX];
	struct docker_init_grants h;
	size_t off = sizeof(h);
	ssize_t n = recv(sock, buf, sizeof(buf), MSG_TRUNC);

	if (n < (ssize_t)sizeof(h) || n > (ssize_t)sizeof(buf))
		return wd_err_set(err, -EPROTO, "malformed grants");
	memcpy(&h, buf, sizeof(h));
	if (h.magic != DOCKER_INIT_GRANTS_MAGIC)
		return wd_err_set(err, -EPROTO, "malformed grants");
	for (uint32_t i = 0; i < h.n; i++) {
		struct docker_init_grant g;
		char path[PATH_MAX];
		struct stat st;

		if ((size_t)n - off < sizeof(g))
			return wd_err_set(err, -EPROTO, "malformed grants");
		memcpy(&g, buf + off, sizeof(g));
		off += sizeof(g);
		if (!g.len || g.len >= sizeof(path) || (size_t)n - off < g.len)
			return wd_err_set(err, -EPROTO, "malformed grants");
		memcpy(path, buf + off, g.len);
		path[g.len] = '\0';
		off += g.len;
		if (stat(path, &st) < 0)
			return wd_err_set(err, -EXDEV, "the grant %s is not in the container: %s",
					  path, strerror(errno));
		if ((uint64_t)st.st_dev != g.dev || (uint64_t)st.st_ino != g.ino)
			return wd_err_set(err, -EXDEV,
					  "the grant %s in the container is not the file the "
					  "launcher opened there (replaced on the way?)",
					  path);
	}
	return 0;
}

/* Tells the launcher why the init stops (best effort), then stops. */
static _Noreturn void refuse(int sock, const char *stage, int ret, const char *msg)
{
	struct docker_init_reply m = {.err = -ret};

	snprintf(m.msg, sizeof(m.msg), "%s: %s", stage, msg);
	/* best effort: a launcher that cannot hear it sees EOF, which stops the run too */
	if (send(sock, &m, sizeof(m), MSG_NOSIGNAL) != (ssize_t)sizeof(m))
		fprintf(stderr, "warden-docker-init: the launcher did not hear why\n");
	die(stage, msg);
}

/* The stage drop. Return: 0, or a negative errno. */
static int drop_all(uid_t uid, gid_t gid)
{
	struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2] = {{0}};

	for (int c = 0; c <= 63; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
			return -errno;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
		return -errno;
	if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)
		return -errno;
	/* uid 0 keeps its sets across setresuid(): clear them, then check they are empty */
	if (syscall(SYS_capset, &h, d) < 0 || syscall(SYS_capget, &h, d) < 0)
		return -errno;
	if (d[0].permitted | d[0].effective | d[0].inheritable | d[1].permitted | d[1].effective |
	    d[1].inheritable)
		return -EPERM;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	return 0;
}

/* Signals PID 1 passes on to the program (the rest are its own). */
static const int forwarded[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGWINCH};

static void on_signal(int sig)
{
	(void)sig; /* never runs (the signals are blocked, read from a signalfd): PID 1 of a pid
		      namespace is sent only the signals it has a handler for */
}

/*
 * The stage exec, as the container's PID 1 (already the program's uid, no capability, so it
 * holds nothing the program could want): the program is its child; the signals above are
 * forwarded to it, every orphan is reaped, and the init exits with the program's status (128+N
 * when a signal N ended it). @sock is the launcher's connection: its end (the launcher died,
 * even by SIGKILL) ends every process of the container (kill(-1): all but PID 1) and the init
 * exits 137, so the container stops and `warden gc` only has to remove it.
 * Return: the program's status.
 */
static int pid1(int sock, char **cmd)
{
	struct sigaction sa = {.sa_handler = on_signal};
	sigset_t all, old;
	struct signalfd_siginfo si;
	pid_t pid, w;
	int st, sfd;

	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	for (size_t i = 0; i < WD_ARRAY_SIZE(forwarded); i++)
		sigaction(forwarded[i], &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	sfd = signalfd(-1, &all, SFD_CLOEXEC);
	if (sfd < 0)
		die("exec", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("exec", strerror(errno));
	if (pid == 0) {
		sa.sa_handler = SIG_DFL;
		for (size_t i = 0; i < WD_ARRAY_SIZE(forwarded); i++)
			sigaction(forwarded[i], &sa, NULL);
		sigaction(SIGCHLD, &sa, NULL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		execvp(cmd[0], cmd);
		fprintf(stderr, "warden-docker-init: %s: %s\n", cmd[0], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	for (;;) {
		struct pollfd pfd[2] = {{sfd, POLLIN, 0}, {sock, POLLIN, 0}};
		char c;

		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			die("exec", strerror(errno));
		if (pfd[1].revents) {
			ssize_t n = recv(sock, &c, 1, MSG_DONTWAIT);

			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
				/* the launcher is gone: nothing may run unwatched */
				kill(-1, SIGKILL);
				_exit(128 + SIGKILL);
			}
		}
		if (!(pfd[0].revents & POLLIN) || read(sfd, &si, sizeof(si)) != sizeof(si))
			continue;
		if (si.ssi_signo == SIGCHLD) {
			while ((w = waitpid(-1, &st, WNOHANG)) > 0)
				if (w == pid)
					return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			continue;
		}
		for (size_t i = 0; i < WD_ARRAY_SIZE(forwarded); i++)
			if ((int)si.ssi_signo == forwarded[i])
				kill(pid, (int)si.ssi_signo);
	}
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct docker_init_plan p;
	int fds[DOCKER_INIT_NFDS];
	struct wd_err err;
	char go = 0;
	ssize_t n;
	int sock, ret;

	if (argc < 4 || strcmp(argv[2], "--"))
		die("usage", "warden-docker-init SOCKET -- PROGRAM [ARG...]");
	if (strlen(argv[1]) >= sizeof(sa.sun_path))
		die("plan", "socket path too long");
	memcpy(sa.sun_path, argv[1], strlen(argv[1]));
	sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (sock < 0 || connect(sock, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		die("plan", strerror(errno));
	n = recv(sock, &p, sizeof(p), MSG_TRUNC);
	if (n != (ssize_t)sizeof(p) || p.magic != DOCKER_INIT_MAGIC || !p.uid)
		refuse(sock, "plan", -EPROTO, "malformed plan");
	wd_err_clear(&err);
	ret = network_up(&p, &err);
	if (!ret)
		ret = sockets_make(&p, fds, &err);
	if (ret)
		refuse(sock, "network", ret, err.msg[0] ? err.msg : strerror(-ret));
	sockets_send(sock, fds, nfds_of(&p));
	ret = grants_check(sock, &err);
	if (ret)
		refuse(sock, "grants", ret, err.msg);
	{
		struct docker_init_reply ok = {0};

		if (send(sock, &ok, sizeof(ok), MSG_NOSIGNAL) != (ssize_t)sizeof(ok))
			die("grants", strerror(errno));
	}
	do
		n = recv(sock, &go, 1, 0);
	while (n < 0 && errno == EINTR);
	if (n != 1 || go != 'G')
		die("go", "the launcher did not say go");
	ret = drop_all(p.uid, p.gid);
	if (ret)
		die("drop", strerror(-ret));
	return pid1(sock, argv + 3);
}

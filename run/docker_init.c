/* docker_init.c - PROTOTYPE of warden-docker-init, the first process of a Docker backend's
 * container (issue 28; docs/run.md "Backends: Docker's network (design)"). Not wired into
 * `warden run` yet: it exists to prove the design, stage by stage, against a real dockerd.
 *
 * Theory of operation. The launcher (any user who may talk to dockerd: no root, no setns)
 * starts the container with `--network none --user 0:0 --cap-drop ALL --cap-add NET_ADMIN
 * --cap-add SETUID --cap-add SETGID --cap-add SETPCAP`, this binary bind-mounted read-only as
 * the entrypoint and a unix socket of the launcher's bind-mounted beside it. Linked statically,
 * so that it runs in any image (busybox, distroless, debian). Its stages:
 *
 *   plan      connect to the socket (argv[1]), read the launcher's plan: the run's addresses
 *             (slot 0 of the pools, as a rootless run) and the program's uid and gid
 *   net       lo up, the addresses and routes of a rootless run      (netns_rootless_up())
 *   nft       the run's own table (FW_MODE_RUN), installed and audited clean (nft/: the
 *             rootless mode's code, unchanged)
 *   sockets   the gateway's listening sockets bound in the container's namespace, sent to
 *             the launcher (SCM_RIGHTS crosses the container boundary: it is one kernel)
 *   go        wait for the launcher's one-byte go ('G'); anything else, or EOF, and the
 *             program never starts (exit 125)
 *   drop      every capability from the bounding set (CAP_SETPCAP), no ambient ones, the
 *             program's gid, no supplementary groups, its uid (which clears the permitted
 *             and effective sets), checked empty with capget(); no_new_privs
 *   exec      the program (argv after "--") as PID 1's child: signals forwarded, orphans
 *             reaped, its exit status passed on (128+N for a signal)
 *
 * The prototype leaves out what the next engineer adds: the NFLOG socket (run/mode_rootless.c
 * nflog_socket(), to be shared), the liveness probe's socket, the full fw_config from the
 * launcher (here: fw_config_defaults() plus the plan's addresses).
 */
#include "common/common.h"
#include "netns/netns.h"
#include "nft/nft.h"

#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/* What the launcher sends first (host byte order: the same kernel on both sides). */
#define DOCKER_INIT_MAGIC 0x57444931u /* "WDI1" */
struct docker_init_plan {
	uint32_t magic;
	uint32_t uid;
	uint32_t gid;
	struct netns_addrs addr;
};

/* What the init answers, with its descriptors (the listeners, in the order of socks[]). */
struct docker_init_reply {
	/* both read by the launcher only, on the other side of the socket */
	// cppcheck-suppress unusedStructMember ; read by the launcher
	int32_t err; /* 0, or a positive errno */
	// cppcheck-suppress unusedStructMember ; read by the launcher
	int32_t nfds;
	char msg[256];
};

#define DOCKER_INIT_NLISTEN 8

/* The exit status when the program never started (as `docker run`'s own 125). */
#define DOCKER_INIT_FAILED 125

static _Noreturn void die(const char *stage, const char *msg)
{
	/* only our own text: nothing of the run's goes to the terminal from here */
	fprintf(stderr, "warden-docker-init: %s: %s\n", stage, msg);
	_exit(DOCKER_INIT_FAILED);
}

/* The stages net and nft. Return: 0, or a negative errno with @err set. */
static int network_up(const struct docker_init_plan *p, struct fw_config *fc, struct wd_err *err)
{
	struct fw_audit_report rep = {0};
	int ret;

	fw_config_defaults(fc);
	fw_config_rootless(fc, &p->addr.host4, &p->addr.host6);
	ret = netns_rootless_up(&p->addr, err);
	if (!ret)
		ret = fw_install(fc, err);
	if (!ret)
		ret = fw_audit(fc, &rep, err);
	if (!ret && rep.violations)
		ret = wd_err_set(err, -EPROTO, "the container's nft table does not audit clean: %s",
				 rep.n ? rep.items[0].msg : "?");
	fw_audit_report_free(&rep);
	return ret;
}

/* The stage sockets: the listeners made and sent on @sock with the reply. */
static void sockets_send(int sock, const struct docker_init_plan *p, const struct fw_config *fc)
{
	const struct netns_addrs *a = &p->addr;
	const struct {
		int family;
		const void *addr;
		uint16_t port;
		int type;
	} socks[DOCKER_INIT_NLISTEN] = {
	    {AF_INET, &a->host4, fc->port_transparent, SOCK_STREAM},
	    {AF_INET6, &a->host6, fc->port_transparent, SOCK_STREAM},
	    {AF_INET, &a->host4, fc->port_proxy, SOCK_STREAM},
	    {AF_INET6, &a->host6, fc->port_proxy, SOCK_STREAM},
	    {AF_INET, &a->host4, fc->port_dns, SOCK_DGRAM},
	    {AF_INET6, &a->host6, fc->port_dns, SOCK_DGRAM},
	    {AF_INET, &a->host4, fc->port_dns, SOCK_STREAM},
	    {AF_INET6, &a->host6, fc->port_dns, SOCK_STREAM},
	};
	union {
		char buf[CMSG_SPACE(sizeof(int) * DOCKER_INIT_NLISTEN)];
		struct cmsghdr align;
	} cbuf;
	struct docker_init_reply m = {.nfds = DOCKER_INIT_NLISTEN};
	struct iovec iov = {&m, sizeof(m)};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = cbuf.buf,
			    .msg_controllen = sizeof(cbuf.buf)};
	int fds[DOCKER_INIT_NLISTEN];
	struct cmsghdr *cm;

	for (int i = 0; i < DOCKER_INIT_NLISTEN; i++) {
		fds[i] =
		    wd_socket_bound(socks[i].family, socks[i].addr, socks[i].port, socks[i].type);
		if (fds[i] < 0)
			die("sockets", strerror(-fds[i]));
	}
	memset(&cbuf, 0, sizeof(cbuf));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(cm), fds, sizeof(fds));
	if (sendmsg(sock, &mh, MSG_NOSIGNAL) != (ssize_t)sizeof(m))
		die("sockets", strerror(errno));
	for (int i = 0; i < DOCKER_INIT_NLISTEN; i++)
		close(fds[i]);
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
	(void)sig; /* only so that PID 1 receives it: sigwaitinfo() takes it */
}

/*
 * The stage exec, as the container's PID 1 (already the program's uid, no capability, so it
 * holds nothing the program could want): the program is its child; the signals above are
 * forwarded to it, every orphan is reaped, and the init exits with the program's status (128+N
 * when a signal N ended it). PID 1 gets no signal it has no handler for, hence on_signal().
 * Return: the program's status.
 */
static int pid1(char **cmd)
{
	struct sigaction sa = {.sa_handler = on_signal};
	sigset_t all, old;
	siginfo_t si;
	pid_t pid, w;
	int st;

	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	for (size_t i = 0; i < WD_ARRAY_SIZE(forwarded); i++)
		sigaction(forwarded[i], &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
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
		fprintf(stderr, "warden-docker-init: exec: %s\n", strerror(errno));
		_exit(127);
	}
	for (;;) {
		int sig = sigwaitinfo(&all, &si);

		if (sig == SIGCHLD) {
			while ((w = waitpid(-1, &st, WNOHANG)) > 0)
				if (w == pid)
					return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		} else if (sig > 0) {
			for (size_t i = 0; i < WD_ARRAY_SIZE(forwarded); i++)
				if (sig == forwarded[i])
					kill(pid, sig);
		}
	}
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct docker_init_plan p;
	struct fw_config fc;
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
	if (n != (ssize_t)sizeof(p) || p.magic != DOCKER_INIT_MAGIC)
		refuse(sock, "plan", -EPROTO, "malformed plan");
	wd_err_clear(&err);
	ret = network_up(&p, &fc, &err);
	if (ret)
		refuse(sock, "network", ret, err.msg[0] ? err.msg : strerror(-ret));
	sockets_send(sock, &p, &fc);
	do
		n = recv(sock, &go, 1, 0);
	while (n < 0 && errno == EINTR);
	if (n != 1 || go != 'G')
		die("go", "the launcher did not say go");
	close(sock);
	ret = drop_all(p.uid, p.gid);
	if (ret)
		die("drop", strerror(-ret));
	return pid1(argv + 3);
}

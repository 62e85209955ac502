/* worker.c - `warden-gateway-worker`: the gateway's data plane, the process
 * that reads sandbox bytes. warden-gateway (main.c) execs it; it is never run
 * by hand and never looked up in $PATH (handoff.h: descriptors and argv).
 *
 * Its image links no libnftnl, libmnl or libnl (it is built without wd_nft
 * and wd_conf_host), so none of them is mapped in the process that parses what a
 * sandbox sends (ARCHITECTURE.md §1, tests/integration/gateway_privsep.sh).
 *
 * Stages, with privilege separation (--channel-fd):
 *   1. exec'd as root by the parent's fork; drop to --uid/--gid at once
 *      (setgroups, setresgid, setresuid: no capabilities remain, CapEff is 0;
 *      PR_SET_NO_NEW_PRIVS; not dumpable), before anything is read: the new
 *      image runs no code that parses input as root, and is never dumpable as
 *      the unprivileged user (the uid change itself makes it non-dumpable);
 *   2. die with the parent (PR_SET_PDEATHSIG, set after the uid change that
 *      clears it), read the configuration from the sealed memfd;
 *   3. receive the listening sockets, the audit log and the NFLOG socket over
 *      the channel (gw_priv_recv_fds(); anything malformed is fatal), adopt
 *      the log and run the event loop; run updates go back over the channel.
 * Without --channel-fd (warden-gateway run by a non-root user, or with
 * --no-privsep) the worker is the whole gateway: warden-gateway execs it in
 * its place, and it opens its sockets and audit log itself; with --listen-fds N
 * (a rootless run's embedded gateway) it adopts the N listeners handed in from
 * descriptor GW_WORKER_FD_LISTEN on and makes only its control socket. Both paths end in
 * start.c, which the proxy-only gateway of macOS (main_proxy.c) runs too.
 */
#include "audit/audit.h"
#include "common/common.h"
#include "gateway/gw.h"
#include "gateway/handoff.h"

#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/socket.h>
#include <unistd.h>

struct worker_args {
	int config_fd;
	int channel_fd; /* -1: no privilege separation */
	uid_t uid;
	gid_t gid;
	bool have_uid, have_gid;
	bool manage_nft;
	bool nflog;
	int listen_fds; /* without privsep: sockets handed in from GW_WORKER_FD_LISTEN on */
};

static void usage(void)
{
	fprintf(stderr,
		"usage: %s --config-fd 3 [--channel-fd 4 --uid UID --gid GID | --listen-fds N]\n"
		"       [--manage-nft] [--no-nflog] [--verbose]\n"
		"warden-gateway's data plane: started by warden-gateway(8), not by hand.\n",
		GW_WORKER_NAME);
}

/* a decimal number 0..max */
static int number(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*out = strtoul(s, &end, 10);
	return errno || *end || *out > max ? -EINVAL : 0;
}

static int parse_args(int argc, char **argv, struct worker_args *a)
{
	static const struct option opts[] = {
	    {"config-fd", required_argument, NULL, 'c'},
	    {"channel-fd", required_argument, NULL, 'p'},
	    {"uid", required_argument, NULL, 'u'},
	    {"gid", required_argument, NULL, 'g'},
	    {"manage-nft", no_argument, NULL, 'm'},
	    {"no-nflog", no_argument, NULL, 'N'},
	    {"listen-fds", required_argument, NULL, 'L'},
	    {"verbose", no_argument, NULL, 'v'},
	    {NULL, 0, NULL, 0},
	};
	unsigned long v;
	int c;

	*a = (struct worker_args){.config_fd = -1, .channel_fd = -1, .nflog = true};
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
		case 'p':
			if (number(optarg, 1023, &v) || v < 3)
				return -EINVAL;
			*(c == 'c' ? &a->config_fd : &a->channel_fd) = (int)v;
			break;
		case 'u':
			if (number(optarg, 0xfffffffe, &v))
				return -EINVAL;
			a->uid = (uid_t)v;
			a->have_uid = true;
			break;
		case 'g':
			if (number(optarg, 0xfffffffe, &v))
				return -EINVAL;
			a->gid = (gid_t)v;
			a->have_gid = true;
			break;
		case 'm':
			a->manage_nft = true;
			break;
		case 'N':
			a->nflog = false;
			break;
		case 'L':
			if (number(optarg, GW_WORKER_LISTEN_MAX, &v) || v < 1)
				return -EINVAL;
			a->listen_fds = (int)v;
			break;
		case 'v':
			wd_log_set_level(WD_LOG_DEBUG);
			break;
		default:
			return -EINVAL;
		}
	}
	if (optind != argc || a->config_fd < 0 || a->config_fd == a->channel_fd)
		return -EINVAL;
	/* the privsep parts come together or not at all */
	if ((a->channel_fd >= 0) != a->have_uid || a->have_uid != a->have_gid)
		return -EINVAL;
	if (a->manage_nft && a->channel_fd < 0)
		return -EINVAL;
	/* handed-in listeners only in one process: the parent would have made them */
	if (a->listen_fds && a->channel_fd >= 0)
		return -EINVAL;
	return 0;
}

#ifdef __linux__
static int drop_privileges(uid_t uid, gid_t gid)
{
	if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)
		return -errno;
	/* no way back: an exec can never regain privileges */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return -errno;
	if (setuid(0) == 0 && uid != 0)
		return -EPERM;
	return 0;
}
#else
/* privilege separation is Linux's (a root parent, nft, namespaces): elsewhere the worker runs
 * standalone as its user, and a channel is refused here */
static int drop_privileges(uid_t uid, gid_t gid)
{
	(void)uid;
	(void)gid;
	return -ENOTSUP;
}
#endif

/* the channel must be what the parent made: a SOCK_SEQPACKET unix socket */
static bool is_channel(int fd)
{
	struct sockaddr_storage ss = {0};
	socklen_t l1 = sizeof(int), sl = sizeof(ss);
	int type = 0;

	/* the family of its address (macOS has no SO_DOMAIN) */
	return !getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l1) &&
	       !getsockname(fd, (struct sockaddr *)&ss, &sl) && type == SOCK_SEQPACKET &&
	       ss.ss_family == AF_UNIX;
}

/* with privilege separation: everything comes from the parent over @chan */
static int separated(const struct wd_gwconf *conf, int chan, bool manage_nft)
{
	struct audit_log *log = NULL;
	struct wd_err err;
	struct gw_fds fds;
	int ret;

	wd_err_clear(&err);
	ret = gw_priv_recv_fds(chan, &fds, &err);
	if (ret) {
		/* -EPIPE: the parent failed first and its error is the one to read */
		if (ret != -EPIPE)
			wd_log(WD_LOG_ERR, "%s", err.msg);
		close(chan);
		return 1;
	}
	if (fds.audit < 0 || audit_log_from_fd(fds.audit, conf->audit_path, &log, &err)) {
		wd_log(WD_LOG_ERR, "%s", fds.audit < 0 ? "no audit log from the parent" : err.msg);
		gw_fds_close(&fds);
		close(chan);
		return 1;
	}
	fds.audit = -1; /* the log owns it now */
	audit_log_chain(log);
	if (gw_start_ship(conf, log)) {
		audit_log_close(log);
		gw_fds_close(&fds);
		close(chan);
		return 1;
	}
	ret = gw_start_serve(conf, &fds, log, chan, manage_nft, NULL);
	audit_log_close(log);
	return ret;
}

int main(int argc, char **argv)
{
	struct worker_args a;
	struct wd_gwconf conf;
	struct wd_err err;
	sigset_t mask;
	pid_t parent = getppid();
	int r;

	/* before any OpenSSL call: no openssl.cnf read (audit/audit.h) */
	audit_crypto_init();
	if (parse_args(argc, argv, &a)) {
		usage();
		return 2;
	}
	/* stage 1: privileges go before anything is read */
	if (a.channel_fd >= 0) {
		r = drop_privileges(a.uid, a.gid);
		if (r) {
			wd_log(WD_LOG_ERR, "dropping privileges to uid %u: %s", (unsigned)a.uid,
			       strerror(-r));
			return 1;
		}
		/* after the uid change, which clears it: die with the parent */
#ifdef __linux__
		prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
#endif
		if (getppid() != parent)
			return 1;
		if (!is_channel(a.channel_fd)) {
			wd_log(WD_LOG_ERR, "descriptor %d is not the channel to warden-gateway",
			       a.channel_fd);
			return 2;
		}
	}
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_SETMASK, &mask, NULL); /* the loop reads them from a signalfd */

	/* stage 2: the configuration, as the parent resolved it */
	wd_err_clear(&err);
	r = gw_handoff_conf_read(a.config_fd, &conf, &err);
	close(a.config_fd);
	if (r) {
		wd_log(WD_LOG_ERR, "%s", err.msg);
		return 2;
	}
	/* stage 3 */
	if (a.channel_fd < 0)
		r = gw_start_standalone(&conf, a.nflog, GW_WORKER_FD_LISTEN, a.listen_fds, NULL);
	else
		r = separated(&conf, a.channel_fd, a.manage_nft);
	conf_free(&conf);
	return r;
}

/* main.c - `warden-gateway`: the transparent egress gateway daemon (entry
 * point: the privileged parent) and its control client (`warden-gateway ctl ...`).
 *
 * Process model (privilege separation in named stages):
 *   1. as root: read the config, find and open the worker image
 *      (warden-gateway-worker: next to this program or in the libexec folder,
 *      never via $PATH; --worker PATH), put the effective config in a sealed
 *      memfd, check (and create) the audit log, raise RLIMIT_NOFILE, make a
 *      SOCK_SEQPACKET socketpair;
 *   2. fork and exec the worker, a separate image that links no libnftnl,
 *      libmnl or libnl (handoff.h: the config at descriptor 3, the channel at
 *      4, nothing else inherited). It drops to the configured user before it
 *      reads anything (setgroups, setresgid, setresuid: no capabilities
 *      remain, CapEff is 0; then PR_SET_NO_NEW_PRIVS), receives its listening
 *      sockets, the audit log's descriptor and the NFLOG socket from the
 *      parent in one typed, size-checked message (gw_priv_recv_fds();
 *      anything malformed is fatal), adopts the log (audit_log_from_fd()) and
 *      runs the event loop (worker.c);
 *   3. the parent creates and binds every listening socket and the control
 *      socket, opens the audit log for the worker and binds the NFLOG group,
 *      sends them and closes its copies; then it serves the worker's run
 *      updates (gw_parent_serve(), parent.c: with --manage-nft it adds and
 *      removes the runs' nft set elements), forwards SIGTERM / SIGINT,
 *      removes the control socket when the worker is gone, and exits with
 *      the worker's status.
 * Started by a non-root user (or with --no-privsep) the gateway runs as one
 * process: the worker image replaces this one (exec without fork) and opens
 * its sockets itself (no run updates to the nft table then: --manage-nft
 * needs privsep). With --listen-fds N the gateway does not bind its listening
 * sockets: it adopts the N sockets left open at descriptors 3.. by whoever
 * started warden-gateway (an embedded gateway of a rootless run, or of a
 * container run: the launcher got them from inside the run's own network
 * namespace, where the gateway itself cannot go) and makes only the control
 * socket; one process takes them over the exec (handoff.h says where), the
 * privsep parent sends them to its worker with the rest but keeps the UDP
 * relay's conntrack socket of that namespace, which it asks for the worker.
 */
#include "audit/audit.h"
#include "common/common.h"
#include "gateway/gw.h"
#include "gateway/handoff.h"
#include "gateway/parent.h"
#include "gateway/sdnotify.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEFAULT_AUDIT "/var/log/warden/audit.jsonl"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: warden-gateway [--config FILE] [--audit-log PATH] [--control PATH]\n"
		"                      [--user NAME] [--no-privsep] [--manage-nft] [--no-nflog]\n"
		"                      [--worker PATH] [--listen-fds N] [--control-group GROUP]\n"
		"                      [--verbose]\n"
		"       warden-gateway [--config FILE] --print-audit-key\n"
		"       warden-gateway ctl [--socket PATH] register --id ID --if IFNAME\n"
		"                      [--host-v4 A --sandbox-v4 B] [--host-v6 A --sandbox-v6 B]\n"
		"                      --policy FILE [--learn]\n"
		"       warden-gateway ctl [--socket PATH] replace --id ID --policy FILE\n"
		"       warden-gateway ctl [--socket PATH] learned --id ID\n"
		"       warden-gateway ctl [--socket PATH] unregister --id ID\n"
		"       warden-gateway ctl [--socket PATH] list|stats\n"
		"       warden-gateway ctl [--socket PATH] raw JSON\n"
		"       warden-gateway check-worker [--worker PATH]\n"
		"The transparent egress gateway; see warden-gateway(8).\n");
}

/* `warden-gateway check-worker [--worker PATH]`: the worker image this program would exec, found
 * and checked as at start (gw_handoff_find_worker()): its path on stdout and 0, or why not on
 * stderr and 1 (warden doctor asks) */
static int cmd_check_worker(int argc, char **argv)
{
	char path[PATH_MAX];
	struct wd_err err;
	int fd = -1;

	if (argc != 1 && (argc != 3 || strcmp(argv[1], "--worker"))) {
		usage(stderr);
		return 2;
	}
	wd_err_clear(&err);
	if (gw_handoff_find_worker(argc == 3 ? argv[2] : NULL, &fd, path, sizeof(path), &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	close(fd);
	printf("%s\n", path);
	return 0;
}

/* ------------------------------------------------------------ daemon */

/* load_audit_key() - the daemon's key for its signed run records (audit.key, else
 * $WARDEN_GATEWAY_AUDIT_KEY, else WD_GW_AUDIT_KEY_DEFAULT; made on first use, 0600).
 * Return: 0, or -errno (said on stderr) */
static int load_audit_key(const struct wd_gwconf *conf, struct audit_key **ret_key)
{
	const char *env = getenv("WARDEN_GATEWAY_AUDIT_KEY");
	const char *path = conf->audit_key[0]	  ? conf->audit_key
			   : env && env[0] == '/' ? env
						  : WD_GW_AUDIT_KEY_DEFAULT;
	struct wd_err err;
	int ret;

	wd_err_clear(&err);
	ret = audit_key_load(path, true, ret_key, &err);
	if (ret == 0 && !audit_key_can_sign(*ret_key)) {
		audit_key_free(*ret_key);
		*ret_key = NULL;
		ret = wd_err_set(&err, -EINVAL,
				 "%s holds a public key: run records cannot be signed", path);
	}
	if (ret)
		wd_log(WD_LOG_ERR, "audit key (audit.key): %s",
		       err.msg[0] ? err.msg : strerror(-ret));
	return ret;
}

/* `--print-audit-key`: the public half of the daemon's key, PEM, for `warden logs --verify
 * --key` (the key is made when there is none yet). Return: the exit status */
static int print_audit_key(const struct wd_gwconf *conf)
{
	struct audit_key *k = NULL;
	struct wd_buf pem = WD_BUF_INIT;
	int ret = 1;

	if (load_audit_key(conf, &k) == 0 && audit_key_public_pem(k, &pem) == 0 &&
	    fwrite(pem.data, 1, pem.len, stdout) == pem.len && fflush(stdout) == 0)
		ret = 0;
	audit_key_free(k);
	wd_buf_free(&pem);
	return ret;
}

/* the worker's copy of the audit log: the same file, opened by root for appending */
static int open_audit_for_worker(const char *path)
{
	int fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);

	if (fd < 0)
		wd_log(WD_LOG_ERR, "audit log %s: %s", path, strerror(errno));
	return fd;
}

#define STR_(x) #x
#define STR(x) STR_(x)

/* the worker's argv: privsep (@pw set) or standalone; strings live in @num */
static void worker_argv(char *argv[], char num[3][16], const struct passwd *pw, bool manage_nft,
			bool nflog, bool verbose, int listen_fds)
{
	size_t n = 0;

	argv[n++] = GW_WORKER_NAME;
	argv[n++] = "--config-fd";
	argv[n++] = STR(GW_WORKER_FD_CONFIG);
	if (pw) {
		snprintf(num[0], sizeof(num[0]), "%u", (unsigned)pw->pw_uid);
		snprintf(num[1], sizeof(num[1]), "%u", (unsigned)pw->pw_gid);
		argv[n++] = "--channel-fd";
		argv[n++] = STR(GW_WORKER_FD_CHANNEL);
		argv[n++] = "--uid";
		argv[n++] = num[0];
		argv[n++] = "--gid";
		argv[n++] = num[1];
	}
	if (listen_fds) {
		snprintf(num[2], sizeof(num[2]), "%d", listen_fds);
		argv[n++] = "--listen-fds";
		argv[n++] = num[2];
	}
	if (manage_nft)
		argv[n++] = "--manage-nft";
	if (!nflog)
		argv[n++] = "--no-nflog";
	if (verbose)
		argv[n++] = "--verbose";
	argv[n] = NULL;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"config", required_argument, NULL, 'c'},
	    {"audit-log", required_argument, NULL, 'a'},
	    {"control", required_argument, NULL, 's'},
	    {"user", required_argument, NULL, 'u'},
	    {"worker", required_argument, NULL, 'w'},
	    {"no-privsep", no_argument, NULL, 'n'},
	    {"manage-nft", no_argument, NULL, 'm'},
	    {"no-nflog", no_argument, NULL, 'N'},
	    {"listen-fds", required_argument, NULL, 'L'},
	    {"control-group", required_argument, NULL, 'G'},
	    {"print-audit-key", no_argument, NULL, 'P'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"version", no_argument, NULL, 'V'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *config = NULL, *audit_path = NULL, *ctl_path = NULL, *user = NULL;
	const char *worker_path = NULL, *ctl_group = NULL;
	struct group *grp = NULL, grp_buf;
	char grp_text[4096];
	char worker_bin[PATH_MAX], num[3][16], notify[GW_NOTIFY_MAX];
	char *wargv[16];
	struct wd_gwconf conf;
	struct policy_diags d;
	struct audit_log *log = NULL;
	struct audit_key *key = NULL;
	struct wd_err err;
	struct gw_fds fds;
	struct passwd *pw = NULL;
	struct rlimit rl;
	bool privsep = true, owns_ctl = false, manage_nft = false, nflog = true, verbose = false;
	bool print_key = false;
	sigset_t mask;
	pid_t child;
	int c, ret, sp[2], exe = -1, cfd = -1, listen_fds = 0, ct = -1;
	char *end;

	/* before any OpenSSL call: no openssl.cnf read (audit/audit.h) */
	audit_crypto_init();
	if (argc > 1 && !strcmp(argv[1], "ctl")) {
		conf_defaults(&conf);
		return gw_ctl_client(argc - 1, argv + 1, conf.control_path, usage);
	}
	if (argc > 1 && !strcmp(argv[1], "check-worker"))
		return cmd_check_worker(argc - 1, argv + 1);
	while ((c = getopt_long(argc, argv, "c:hv", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			config = optarg;
			break;
		case 'a':
			audit_path = optarg;
			break;
		case 's':
			ctl_path = optarg;
			break;
		case 'u':
			user = optarg;
			break;
		case 'w':
			worker_path = optarg;
			break;
		case 'G':
			ctl_group = optarg;
			break;
		case 'P':
			print_key = true;
			break;
		case 'n':
			privsep = false;
			break;
		case 'm':
			manage_nft = true;
			break;
		case 'N':
			nflog = false;
			break;
		case 'L':
			listen_fds = (int)strtol(optarg, &end, 10);
			if (*end || listen_fds < 1 || listen_fds > GW_WORKER_LISTEN_MAX) {
				wd_log(WD_LOG_ERR, "--listen-fds: 1 to 12 descriptors, from 3");
				return 2;
			}
			break;
		case 'v':
			wd_log_set_level(WD_LOG_DEBUG);
			verbose = true;
			break;
		case 'V':
			printf("warden-gateway %s\n", WARDEN_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	/* readiness goes to the service manager from this process alone (sdnotify.h) */
	if (gw_notify_take(notify, sizeof(notify)) < 0)
		wd_log(WD_LOG_WARN, "NOTIFY_SOCKET is not an AF_UNIX path or @name: no readiness "
				    "notification will be sent");
	policy_diags_init(&d);
	if (config) {
		ret = conf_load(config, &conf, &d);
		if (ret) {
			for (size_t i = 0; i < d.n; i++) {
				struct wd_buf b = WD_BUF_INIT;

				policy_diag_format(&d, i, &b);
				fprintf(stderr, "%s\n", wd_buf_cstr(&b));
				wd_buf_free(&b);
			}
			policy_diags_free(&d);
			return 2;
		}
	} else {
		conf_defaults(&conf);
	}
	policy_diags_free(&d);
	if (print_key) {
		ret = print_audit_key(&conf);
		goto out;
	}
	if (ctl_path)
		snprintf(conf.control_path, sizeof(conf.control_path), "%s", ctl_path);
	if (user)
		snprintf(conf.user, sizeof(conf.user), "%s", user);
	if (!audit_path)
		audit_path = conf.audit_path[0] ? conf.audit_path : DEFAULT_AUDIT;
	/* the worker reads the effective configuration: the overrides go into it */
	if (audit_path != conf.audit_path &&
	    snprintf(conf.audit_path, sizeof(conf.audit_path), "%s", audit_path) >=
		(int)sizeof(conf.audit_path)) {
		wd_log(WD_LOG_ERR, "--audit-log: path too long");
		ret = 2;
		goto out;
	}
	if (geteuid() != 0)
		privsep = false;
	if (manage_nft && !privsep) {
		wd_log(WD_LOG_ERR, "--manage-nft needs privilege separation (run as root, "
				   "without --no-privsep)");
		ret = 2;
		goto out;
	}
	if (manage_nft && conf.mode == WD_GW_PROXY) {
		wd_log(WD_LOG_ERR, "--manage-nft: a proxy-mode gateway (mode: proxy) has no nft "
				   "table to manage");
		ret = 2;
		goto out;
	}
	if (ctl_group && !privsep) {
		wd_log(WD_LOG_ERR, "--control-group needs privilege separation (run as root)");
		return 2;
	}
	if (ctl_group &&
	    (getgrnam_r(ctl_group, &grp_buf, grp_text, sizeof(grp_text), &grp) || !grp)) {
		wd_log(WD_LOG_ERR, "--control-group %s: no such group", ctl_group);
		return 2;
	}
	if (privsep) {
		pw = getpwnam(conf.user);
		if (!pw) {
			wd_log(WD_LOG_ERR, "user %s: no such user (config key `user`)", conf.user);
			ret = 2;
			goto out;
		}
	}

	/* stage 1: what needs privilege and reads nothing from a sandbox */
	wd_err_clear(&err);
	if (gw_handoff_find_worker(worker_path, &exe, worker_bin, sizeof(worker_bin), &err) ||
	    gw_handoff_conf_fd(&conf, &cfd, &err)) {
		wd_log(WD_LOG_ERR, "%s", err.msg);
		ret = 1;
		goto out;
	}
	if (audit_log_open(audit_path, &log, &err)) {
		wd_log(WD_LOG_ERR, "%s", err.msg);
		ret = 1;
		goto out;
	}
	/* the worker gets its own descriptor of the log (or opens it). With --manage-nft (daemon
	 * mode) the parent keeps a chained writer of its own and the key: it signs each plumbed
	 * run's record when the run ends. The key stays here, in the process that reads no
	 * sandbox bytes; a daemon that cannot sign does not start (fail closed). */
	if (manage_nft) {
		if (load_audit_key(&conf, &key)) {
			ret = 1;
			goto out;
		}
		audit_log_chain(log);
		/* a new central file it writes first (logrotate renamed the old one) begins
		 * with an anchor signed with the daemon's key (docs/audit.md) */
		if (audit_log_sign_anchors(log, key, &err)) {
			wd_log(WD_LOG_ERR, "%s", err.msg);
			ret = 1;
			goto out;
		}
	} else {
		audit_log_close(log);
		log = NULL;
	}
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max > 65536 ? 65536 : rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);

	if (!privsep) {
		/* one process: the worker image replaces this one and opens its sockets (or
		 * adopts the --listen-fds ones, moved up by one behind the config) */
		int pass[GW_HANDOFF_MAX_FDS];
		unsigned npass = 0;

		pass[npass++] = cfd;
		for (int i = 0; i < listen_fds; i++)
			pass[npass++] = 3 + i;
		worker_argv(wargv, num, NULL, false, nflog, verbose, listen_fds);
		/* the worker becomes this process, the service's main one: the readiness is
		 * its to send once its sockets listen (start.c) */
		if (notify[0])
			setenv("NOTIFY_SOCKET", notify, 1);
		ret = gw_handoff_exec(exe, pass, npass, wargv);
		wd_log(WD_LOG_ERR, "exec %s: %s", worker_bin, strerror(-ret));
		ret = 1;
		goto out;
	}
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
		wd_log(WD_LOG_ERR, "socketpair: %s", strerror(errno));
		ret = 1;
		goto out;
	}

	/* stage 2: the worker is a new image (no libnftnl mapped); it drops its privileges
	 * before it reads anything, then gets its descriptors */
	worker_argv(wargv, num, pw, manage_nft, nflog, verbose, 0);
	child = fork();
	if (child < 0) {
		wd_log(WD_LOG_ERR, "fork: %s", strerror(errno));
		close(sp[0]);
		close(sp[1]);
		ret = 1;
		goto out;
	}
	if (child == 0) {
		int pass[2] = {cfd, sp[1]};
		sigset_t keep;

		close(sp[0]);
		sigemptyset(&keep);
		sigaddset(&keep, SIGTERM);
		sigaddset(&keep, SIGINT);
		sigprocmask(SIG_SETMASK, &keep, NULL);
		/* the worker's image can gain nothing from its file; die with the parent
		 * until the worker sets this again after its uid change */
		prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
		prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
		ret = gw_handoff_exec(exe, pass, 2, wargv);
		wd_log(WD_LOG_ERR, "exec %s: %s", worker_bin, strerror(-ret));
		_exit(127);
	}
	wd_closep(&cfd);
	wd_closep(&exe);

	/* stage 3: the parent opens the descriptors, hands them over, then serves */
	close(sp[1]);
	{
		/* --listen-fds (a root launcher's container run): only the control socket is
		 * made here, the listeners (and NFLOG) are the ones handed in */
		struct wd_gwconf own = conf;

		if (listen_fds)
			own.listen_v4[0] = own.listen_v6[0] = '\0';
		ret = gw_fds_open(&own, conf.control_path, &fds, &err);
		owns_ctl = !ret;
		if (!ret && listen_fds)
			ret = gw_fds_inherit(&conf, 3, listen_fds, &fds, &err);
	}
	/* --control-group: only that group's members (and root) may connect, 0660 root:GROUP */
	if (!ret && grp &&
	    (chown(conf.control_path, 0, grp->gr_gid) < 0 || chmod(conf.control_path, 0660) < 0)) {
		ret = -errno;
		wd_log(WD_LOG_ERR, "control socket %s: group %s: %s", conf.control_path, ctl_group,
		       strerror(errno));
	} else if (ret) {
		wd_log(WD_LOG_ERR, "%s", err.msg);
	} else if ((fds.audit = open_audit_for_worker(audit_path)) < 0) {
		ret = -EIO;
	} else {
		if (nflog && conf.mode != WD_GW_PROXY && fds.nflog < 0 &&
		    gw_nflog_open(conf.nflog_group, &fds.nflog, &err))
			wd_log(WD_LOG_WARN, "%s: dropped UDP is not audited", err.msg);
		if ((ret = gw_priv_send_fds(sp[0], &fds)))
			wd_log(WD_LOG_ERR, "handing the sockets to the worker: %s", strerror(-ret));
	}
	/* a container run's conntrack socket (--listen-fds) stays here: the parent asks it */
	ct = fds.ct;
	fds.ct = -1;
	gw_fds_close(&fds);
	if (ret) {
		wd_closep(&ct);
		close(sp[0]);
		kill(child, SIGTERM);
		waitpid(child, NULL, 0);
		ret = 1;
		goto out;
	}
	/* ready: every socket is bound and listening and the worker has them (what arrives
	 * before its loop runs waits in the backlog) */
	if ((ret = gw_notify_send(notify, "READY=1\nSTATUS=serving")) < 0)
		wd_log(WD_LOG_WARN, "readiness notification to %s: %s", notify, strerror(-ret));
	ret = gw_parent_serve(sp[0], child, &conf, manage_nft, log, key, ct);
out:
	if (owns_ctl)
		unlink(conf.control_path);
	wd_closep(&cfd);
	wd_closep(&exe);
	audit_log_close(log);
	audit_key_free(key);
	conf_free(&conf);
	return ret;
}

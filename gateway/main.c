/* main.c - `warden-gateway`: the transparent egress gateway daemon (entry
 * point) and its control client (`warden-gateway ctl ...`).
 *
 * Process model (privilege separation in named stages):
 *   1. as root: read the config, check (and create) the audit log, raise
 *      RLIMIT_NOFILE, make a SOCK_SEQPACKET socketpair;
 *   2. fork the worker; it drops to the configured user at once (setgroups,
 *      setresgid, setresuid: no capabilities remain, CapEff is 0; then
 *      PR_SET_NO_NEW_PRIVS), receives its listening sockets, the audit log's
 *      descriptor and the NFLOG socket from the parent in one typed,
 *      size-checked message (gw_priv_recv_fds(); anything malformed is
 *      fatal), adopts the log (audit_log_from_fd()) and runs the event loop;
 *   3. the parent creates and binds every listening socket and the control
 *      socket, opens the audit log for the worker and binds the NFLOG group,
 *      sends them and closes its copies; then it serves the worker's run
 *      updates (gw_parent_serve(), parent.c: with --manage-nft it adds and
 *      removes the runs' nft set elements), forwards SIGTERM / SIGINT,
 *      removes the control socket when the worker is gone, and exits with
 *      the worker's status.
 * Started by a non-root user (or with --no-privsep) the gateway runs as one
 * process (no run updates to the nft table then: --manage-nft needs privsep).
 * With --listen-fds N (one process only) it does not bind its listening sockets:
 * it adopts the N sockets left open at descriptors 3.. by whoever started it (an
 * embedded gateway of a rootless run: the launcher made them inside the run's own
 * network namespace, where the gateway itself cannot go), and makes only the
 * control socket.
 */
#include "common/common.h"
#include "gateway/gw.h"
#include "gateway/parent.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <jansson.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEFAULT_AUDIT "/var/log/warden/audit.jsonl"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: warden-gateway [--config FILE] [--audit-log PATH] [--control PATH]\n"
		"                      [--user NAME] [--no-privsep] [--manage-nft] [--no-nflog]\n"
		"                      [--listen-fds N] [--verbose]\n"
		"       warden-gateway ctl [--socket PATH] register --id ID --if IFNAME\n"
		"                      [--host-v4 A --sandbox-v4 B] [--host-v6 A --sandbox-v6 B]\n"
		"                      --policy FILE\n"
		"       warden-gateway ctl [--socket PATH] replace --id ID --policy FILE\n"
		"       warden-gateway ctl [--socket PATH] unregister --id ID\n"
		"       warden-gateway ctl [--socket PATH] list|stats\n"
		"       warden-gateway ctl [--socket PATH] raw JSON\n"
		"The transparent egress gateway; see warden-gateway(8).\n");
}

/* ------------------------------------------------------------ ctl client */

static int ctl_send(const char *path, const char *line)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct wd_buf in = WD_BUF_INIT;
	char buf[65536];
	int fd, ret = 125;
	json_t *j;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "warden-gateway ctl: socket path too long\n");
		return 2;
	}
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		fprintf(stderr, "warden-gateway ctl: cannot connect to %s: %s\n", path,
			strerror(errno));
		goto out;
	}
	if (wd_write_all(fd, line, strlen(line)) || wd_write_all(fd, "\n", 1)) {
		fprintf(stderr, "warden-gateway ctl: write: %s\n", strerror(errno));
		goto out;
	}
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n <= 0)
			break;
		wd_buf_append(&in, buf, (size_t)n);
		if (memchr(buf, '\n', (size_t)n))
			break;
	}
	if (!in.len) {
		fprintf(stderr, "warden-gateway ctl: no answer\n");
		goto out;
	}
	fputs(in.data, stdout);
	if (in.data[in.len - 1] != '\n')
		fputc('\n', stdout);
	j = json_loads(in.data, 0, NULL);
	ret = j && json_is_true(json_object_get(j, "ok")) ? 0 : 1;
	json_decref(j);
out:
	if (fd >= 0)
		close(fd);
	wd_buf_free(&in);
	return ret;
}

static int cmd_ctl(int argc, char **argv, const char *sock)
{
	static const struct option opts[] = {
	    {"socket", required_argument, NULL, 's'},
	    {"id", required_argument, NULL, 'i'},
	    {"if", required_argument, NULL, 'f'},
	    {"host-v4", required_argument, NULL, '4'},
	    {"sandbox-v4", required_argument, NULL, 'a'},
	    {"host-v6", required_argument, NULL, '6'},
	    {"sandbox-v6", required_argument, NULL, 'b'},
	    {"policy", required_argument, NULL, 'p'},
	    {NULL, 0, NULL, 0},
	};
	static const char *const fields[] = {"",	   "id",      "if",	   "host_v4",
					     "sandbox_v4", "host_v6", "sandbox_v6"};
	const char *val[WD_ARRAY_SIZE(fields)] = {0};
	const char *policy = NULL, *op;
	json_t *req;
	char *line;
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			sock = optarg;
			break;
		case 'i':
			val[1] = optarg;
			break;
		case 'f':
			val[2] = optarg;
			break;
		case '4':
			val[3] = optarg;
			break;
		case 'a':
			val[4] = optarg;
			break;
		case '6':
			val[5] = optarg;
			break;
		case 'b':
			val[6] = optarg;
			break;
		case 'p':
			policy = optarg;
			break;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	op = argv[optind];
	if (!strcmp(op, "raw")) {
		if (optind + 1 >= argc) {
			usage(stderr);
			return 2;
		}
		return ctl_send(sock, argv[optind + 1]);
	}
	req = json_pack("{s:s}", "op", op);
	for (size_t i = 1; i < WD_ARRAY_SIZE(fields); i++)
		if (val[i])
			json_object_set_new(req, fields[i], json_string(val[i]));
	if (policy) {
		char *data = NULL;
		size_t len = 0;
		const char *base = strrchr(policy, '/');

		ret = wd_read_file(policy, POLICY_MAX_BYTES, &data, &len);
		if (ret) {
			fprintf(stderr, "warden-gateway ctl: %s: %s\n", policy, strerror(-ret));
			json_decref(req);
			return 2;
		}
		json_object_set_new(req, "policy", json_stringn(data, len));
		json_object_set_new(req, "policy_name", json_string(base ? base + 1 : policy));
		free(data);
	}
	line = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	if (!line)
		return 125;
	ret = ctl_send(sock, line);
	free(line);
	return ret;
}

/* ------------------------------------------------------------ daemon */

static int drop_privileges(const struct passwd *pw)
{
	if (setgroups(0, NULL) < 0 || setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) < 0 ||
	    setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) < 0)
		return -errno;
	/* no way back: an exec can never regain privileges */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return -errno;
	if (setuid(0) == 0 && pw->pw_uid != 0)
		return -EPERM;
	return 0;
}

static int worker(const struct wd_gwconf *conf, struct gw_fds *fds, struct audit_log *log, int priv,
		  bool manage_nft)
{
	struct wd_err err;
	struct gw *g = NULL;
	int r;

	wd_err_clear(&err);
	r = gw_new(conf, fds, log, &g, &err);
	if (r) {
		wd_log(WD_LOG_ERR, "%s", err.msg);
		if (priv >= 0)
			close(priv);
		return 1;
	}
	if (priv >= 0 && (r = gw_set_parent(g, priv, manage_nft))) {
		wd_log(WD_LOG_ERR, "the channel to the parent: %s", strerror(-r));
		close(priv);
		gw_free(g);
		return 1;
	}
	wd_log(WD_LOG_INFO, "serving: transparent :%u, dns :%u, proxy :%u, control %s%s",
	       conf->port_transparent, conf->port_dns, conf->port_proxy, conf->control_path,
	       manage_nft ? ", managing nft run elements" : "");
	r = gw_run_loop(g);
	gw_free(g);
	if (r == -EBADMSG || r == -EPIPE) {
		wd_log(WD_LOG_ERR, "the channel to the privileged parent failed (%s): stopping",
		       strerror(-r));
		return 1;
	}
	if (r) {
		wd_log(WD_LOG_ERR, "event loop: %s", strerror(-r));
		return 1;
	}
	return 0;
}

/* the worker's copy of the audit log: the same file, opened by root for appending */
static int open_audit_for_worker(const char *path)
{
	int fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);

	if (fd < 0)
		wd_log(WD_LOG_ERR, "audit log %s: %s", path, strerror(errno));
	return fd;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"config", required_argument, NULL, 'c'},
	    {"audit-log", required_argument, NULL, 'a'},
	    {"control", required_argument, NULL, 's'},
	    {"user", required_argument, NULL, 'u'},
	    {"no-privsep", no_argument, NULL, 'n'},
	    {"manage-nft", no_argument, NULL, 'm'},
	    {"no-nflog", no_argument, NULL, 'N'},
	    {"listen-fds", required_argument, NULL, 'L'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"version", no_argument, NULL, 'V'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const char *config = NULL, *audit_path = NULL, *ctl_path = NULL, *user = NULL;
	struct wd_gwconf conf;
	struct policy_diags d;
	struct audit_log *log = NULL;
	struct wd_err err;
	struct gw_fds fds;
	struct passwd *pw = NULL;
	struct rlimit rl;
	bool privsep = true, owns_ctl = false, manage_nft = false, nflog = true;
	sigset_t mask;
	pid_t child, parent;
	int c, ret, sp[2], listen_fds = 0;
	char *end;

	if (argc > 1 && !strcmp(argv[1], "ctl")) {
		policy_gwconf_defaults(&conf);
		return cmd_ctl(argc - 1, argv + 1, conf.control_path);
	}
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
			if (*end || listen_fds < 1 || listen_fds > 9) {
				wd_log(WD_LOG_ERR, "--listen-fds: 1 to 9 descriptors, from 3");
				return 2;
			}
			break;
		case 'v':
			wd_log_set_level(WD_LOG_DEBUG);
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
	policy_diags_init(&d);
	if (config) {
		ret = policy_gwconf_load(config, &conf, &d);
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
		policy_gwconf_defaults(&conf);
	}
	policy_diags_free(&d);
	if (ctl_path)
		snprintf(conf.control_path, sizeof(conf.control_path), "%s", ctl_path);
	if (user)
		snprintf(conf.user, sizeof(conf.user), "%s", user);
	if (!audit_path)
		audit_path = conf.audit_path[0] ? conf.audit_path : DEFAULT_AUDIT;
	if (geteuid() != 0)
		privsep = false;
	if (listen_fds && privsep) {
		wd_log(WD_LOG_ERR, "--listen-fds needs one process: start it as a user, or "
				   "with --no-privsep");
		return 2;
	}
	if (manage_nft && !privsep) {
		wd_log(WD_LOG_ERR, "--manage-nft needs privilege separation (run as root, "
				   "without --no-privsep)");
		return 2;
	}
	if (privsep) {
		pw = getpwnam(conf.user);
		if (!pw) {
			wd_log(WD_LOG_ERR, "user %s: no such user (config key `user`)", conf.user);
			return 2;
		}
	}

	/* stage 1: what needs privilege and reads nothing from a sandbox */
	wd_err_clear(&err);
	if (audit_log_open(audit_path, &log, &err)) {
		wd_log(WD_LOG_ERR, "%s", err.msg);
		return 1;
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
		struct wd_gwconf own = conf;

		/* inherited listeners: make only the control socket, then adopt them */
		if (listen_fds)
			own.listen_v4[0] = own.listen_v6[0] = '\0';
		ret = gw_fds_open(&own, conf.control_path, &fds, &err);
		if (!ret && listen_fds && (ret = gw_fds_inherit(&conf, 3, listen_fds, &fds, &err)))
			unlink(conf.control_path);
		if (ret) {
			gw_fds_close(&fds);
			wd_log(WD_LOG_ERR, "%s", err.msg);
			audit_log_close(log);
			return 1;
		}
		owns_ctl = true;
		if (nflog && geteuid() == 0 && fds.nflog < 0 &&
		    gw_nflog_open(conf.nflog_group, &fds.nflog, &err))
			wd_log(WD_LOG_WARN, "%s: dropped UDP is not audited", err.msg);
		ret = worker(&conf, &fds, log, -1, false);
		goto out;
	}
	/* the worker gets its own descriptor of the log; the parent writes nothing */
	audit_log_close(log);
	log = NULL;
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
		wd_log(WD_LOG_ERR, "socketpair: %s", strerror(errno));
		return 1;
	}

	/* stage 2: the worker drops its privileges first, then gets its descriptors */
	parent = getpid();
	child = fork();
	if (child < 0) {
		wd_log(WD_LOG_ERR, "fork: %s", strerror(errno));
		return 1;
	}
	if (child == 0) {
		sigset_t chld;

		close(sp[0]);
		sigemptyset(&chld);
		sigaddset(&chld, SIGCHLD);
		sigprocmask(SIG_UNBLOCK, &chld, NULL);
		ret = drop_privileges(pw);
		if (ret) {
			wd_log(WD_LOG_ERR, "dropping privileges to %s: %s", conf.user,
			       strerror(-ret));
			_exit(1);
		}
		/* after the uid change, which clears it: die with the parent */
		prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
		if (getppid() != parent)
			_exit(1);
		ret = gw_priv_recv_fds(sp[1], &fds, &err);
		if (ret) {
			/* -EPIPE: the parent failed first and its error is the one to read */
			if (ret != -EPIPE)
				wd_log(WD_LOG_ERR, "%s", err.msg);
			exit(1);
		}
		if (fds.audit < 0 || audit_log_from_fd(fds.audit, audit_path, &log, &err)) {
			wd_log(WD_LOG_ERR, "%s",
			       fds.audit < 0 ? "no audit log from the parent" : err.msg);
			gw_fds_close(&fds);
			exit(1);
		}
		fds.audit = -1; /* the log owns it now */
		ret = worker(&conf, &fds, log, sp[1], manage_nft);
		audit_log_close(log);
		exit(ret);
	}

	/* stage 3: the parent opens the descriptors, hands them over, then serves */
	close(sp[1]);
	ret = gw_fds_open(&conf, conf.control_path, &fds, &err);
	owns_ctl = !ret;
	if (ret) {
		wd_log(WD_LOG_ERR, "%s", err.msg);
	} else if ((fds.audit = open_audit_for_worker(audit_path)) < 0) {
		ret = -EIO;
	} else {
		if (nflog && gw_nflog_open(conf.nflog_group, &fds.nflog, &err))
			wd_log(WD_LOG_WARN, "%s: dropped UDP is not audited", err.msg);
		if ((ret = gw_priv_send_fds(sp[0], &fds)))
			wd_log(WD_LOG_ERR, "handing the sockets to the worker: %s", strerror(-ret));
	}
	gw_fds_close(&fds);
	if (ret) {
		close(sp[0]);
		kill(child, SIGTERM);
		waitpid(child, NULL, 0);
		ret = 1;
		goto out;
	}
	ret = gw_parent_serve(sp[0], child, &conf, manage_nft);
out:
	if (owns_ctl)
		unlink(conf.control_path);
	audit_log_close(log);
	return ret;
}

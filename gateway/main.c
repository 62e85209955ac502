/* main.c - `warden-gateway`: the transparent egress gateway daemon (entry
 * point) and its control client (`warden-gateway ctl ...`).
 *
 * Process model (privilege separation in named stages):
 *   1. as root: read the config, open the audit log, raise RLIMIT_NOFILE,
 *      make a SOCK_SEQPACKET socketpair;
 *   2. fork the worker; it drops to the configured user at once (setgroups,
 *      setresgid, setresuid: no capabilities remain, CapEff is 0; then
 *      PR_SET_NO_NEW_PRIVS), receives its listening sockets from the parent
 *      in one typed, size-checked message (gw_priv_recv_fds(); anything
 *      malformed is fatal) and runs the event loop;
 *   3. the parent creates and binds every listening socket and the control
 *      socket, sends them, closes its copies and keeps nothing but the
 *      worker's pid: it forwards SIGTERM / SIGINT, waits, removes the control
 *      socket, and exits with the worker's status.
 * Started by a non-root user (or with --no-privsep) the gateway runs as one
 * process.
 */
#include "common/common.h"
#include "gateway/gw.h"

#include <errno.h>
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
		"                      [--user NAME] [--no-privsep] [--verbose]\n"
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

static int worker(const struct wd_gwconf *conf, struct gw_fds *fds, struct audit_log *log)
{
	struct wd_err err;
	struct gw *g = NULL;
	int r;

	wd_err_clear(&err);
	r = gw_new(conf, fds, log, &g, &err);
	if (r) {
		wd_log(WD_LOG_ERR, "%s", err.msg);
		return 1;
	}
	wd_log(WD_LOG_INFO, "serving: transparent :%u, dns :%u, proxy :%u, control %s",
	       conf->port_transparent, conf->port_dns, conf->port_proxy, conf->control_path);
	r = gw_run_loop(g);
	gw_free(g);
	if (r) {
		wd_log(WD_LOG_ERR, "event loop: %s", strerror(-r));
		return 1;
	}
	return 0;
}

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"config", required_argument, NULL, 'c'},
	    {"audit-log", required_argument, NULL, 'a'},
	    {"control", required_argument, NULL, 's'},
	    {"user", required_argument, NULL, 'u'},
	    {"no-privsep", no_argument, NULL, 'n'},
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
	bool privsep = true, owns_ctl = false;
	sigset_t mask;
	pid_t child, parent;
	int c, status, ret, sp[2];

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
		if (gw_fds_open(&conf, conf.control_path, &fds, &err)) {
			wd_log(WD_LOG_ERR, "%s", err.msg);
			audit_log_close(log);
			return 1;
		}
		owns_ctl = true;
		ret = worker(&conf, &fds, log);
		goto out;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
		wd_log(WD_LOG_ERR, "socketpair: %s", strerror(errno));
		audit_log_close(log);
		return 1;
	}

	/* stage 2: the worker drops its privileges first, then gets its sockets */
	parent = getpid();
	child = fork();
	if (child < 0) {
		wd_log(WD_LOG_ERR, "fork: %s", strerror(errno));
		audit_log_close(log);
		return 1;
	}
	if (child == 0) {
		close(sp[0]);
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
		close(sp[1]);
		if (ret) {
			wd_log(WD_LOG_ERR, "%s", err.msg);
			exit(1);
		}
		exit(worker(&conf, &fds, log));
	}

	/* stage 3: the parent opens the sockets, hands them over, then only waits */
	close(sp[1]);
	ret = gw_fds_open(&conf, conf.control_path, &fds, &err);
	owns_ctl = !ret;
	if (ret)
		wd_log(WD_LOG_ERR, "%s", err.msg);
	else if ((ret = gw_priv_send_fds(sp[0], &fds)))
		wd_log(WD_LOG_ERR, "handing the sockets to the worker: %s", strerror(-ret));
	gw_fds_close(&fds);
	close(sp[0]);
	if (ret) {
		kill(child, SIGTERM);
		waitpid(child, NULL, 0);
		ret = 1;
		goto out;
	}
	{
		struct sigaction sa = {.sa_handler = on_signal};

		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);
		sigprocmask(SIG_UNBLOCK, &mask, NULL);
	}
	for (;;) {
		pid_t w = waitpid(child, &status, 0);

		if (w == child)
			break;
		if (w < 0 && errno == EINTR && got_signal) {
			kill(child, SIGTERM);
			got_signal = 0;
		}
	}
	ret = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
out:
	if (owns_ctl)
		unlink(conf.control_path);
	audit_log_close(log);
	return ret;
}

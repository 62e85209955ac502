/* main_proxy.c - `warden-gateway` where there is no nftables (macOS): the proxy-mode gateway
 * alone (`mode: proxy`, docs/gateway.md "Proxy mode"), and its control client
 * (`warden-gateway ctl ...`, ctlcli.c).
 *
 * The smallest honest shape of the gateway off Linux: one process, run as the user who starts
 * it. There is no privileged parent (no nft table to update, no namespaces to plumb, no root
 * needed to bind a loopback port above 1024), no NFLOG socket, no sd_notify, no cgroup, no worker
 * image to exec: the configuration is read here and the gateway served in this process by
 * gw_start_standalone() (start.c), the code the Linux worker runs without privilege separation.
 * A configuration whose mode is not proxy is refused, as are the options that only mean
 * something for the transparent gateway. With --listen-fds N the N listening sockets at
 * descriptors 3.. (made by whoever started it) are adopted instead of bound.
 *
 * On Linux it is built too (warden-gateway-proxy, not installed), so that this exact file runs
 * in the lab (tests/integration/gateway_proxy_only.sh); on macOS it is warden-gateway, linked for
 * Mach-O by tests/cross/run and never run on a Mac here; on Windows it is warden-gateway.exe, run
 * under wine by tests/cross/run-windows: Winsock started here, and no control channel (no peer
 * credentials, no passwd database).
 *
 * `--run FILE` registers one run before the gateway serves: FILE holds the `register` request
 * warden would send over the control socket (one JSON object, checked by the same parser), the
 * run owned by the gateway's own user. It is how warden.exe registers its run on Windows, where
 * there is no control channel; a file that is not such a request, or a run the gateway refuses
 * (an invalid policy, a ceiling), starts nothing (exit 2 / 1). Without it a Windows gateway has
 * no run: every connection is refused and audited (docs/platforms.md). `--counts FILE` writes
 * that run's denials and bytes when the gateway stops. On Windows `--ready-event HANDLE` names
 * an event warden.exe let it inherit, set once it serves, `--stop-event HANDLE` one that stops
 * it as Ctrl+Break would (so that the counts are written), and `--listen-info FILE` the proxy
 * listener warden made (WSADuplicateSocketW), adopted instead of bound. */
#include "audit/audit.h"
#include "common/common.h"
#include "gateway/ctl.h"
#include "gateway/gw.h"
#include "gateway/poller.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifndef _WIN32
#include <sys/resource.h>
#endif
#include <unistd.h>

#define DEFAULT_AUDIT "/var/log/warden/audit.jsonl"
/* the first handed-in listener (0, 1, 2 are stdio; nothing else comes before them here) */
#define LISTEN_FROM 3
#define LISTEN_MAX 9

static void usage(FILE *f)
{
	fprintf(f,
		"usage: warden-gateway --config FILE [--audit-log PATH] [--control PATH]\n"
		"                      [--listen-fds N] [--run FILE [--counts FILE]]\n"
		"                      [--ready-event HANDLE] [--stop-event HANDLE]\n"
		"                      [--listen-info FILE] [--verbose]\n"
		"       warden-gateway ctl [--socket PATH] register --id ID --if IFNAME\n"
		"                      [--host-v4 A --sandbox-v4 B] [--host-v6 A --sandbox-v6 B]\n"
		"                      --policy FILE [--learn]\n"
		"       warden-gateway ctl [--socket PATH] replace --id ID --policy FILE\n"
		"       warden-gateway ctl [--socket PATH] learned --id ID\n"
		"       warden-gateway ctl [--socket PATH] unregister --id ID\n"
		"       warden-gateway ctl [--socket PATH] list|stats\n"
		"       warden-gateway ctl [--socket PATH] raw JSON\n"
		"The egress gateway in proxy mode only (mode: proxy: HTTP proxy and SOCKS5 on "
		"loopback),\none process as the invoking user; see warden-gateway(8).\n");
}

/* an option of the Linux gateway that has no meaning here: refused by name, with why */
static int linux_only(const char *opt)
{
	wd_log(WD_LOG_ERR,
	       "--%s: this warden-gateway serves proxy mode only, in one process as its user "
	       "(no privilege separation, nft table, NFLOG or worker image: those are Linux's)",
	       opt);
	return 2;
}

/* --run FILE: the register request in @path, parsed into @req; 0, or the exit status (2) */
static int boot_run(const char *path, struct gw_ctl_req *req)
{
	char why[600];
	char *buf = NULL;
	size_t len = 0;
	int r = wd_read_file(path, GW_CTL_MAX, &buf, &len);

	if (r) {
		wd_log(WD_LOG_ERR, "--run %s: %s", path,
		       r == -EFBIG ? "larger than a control request may be" : strerror(-r));
		return 2;
	}
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		len--;
	r = gw_ctl_parse(buf, len, req, why, sizeof(why));
	free(buf);
	if (r) {
		wd_log(WD_LOG_ERR, "--run %s: not a register request: %s", path, why);
		return 2;
	}
	if (req->op != GW_CTL_REGISTER) {
		wd_log(WD_LOG_ERR,
		       "--run %s: the request is not a register (op \"register\", the "
		       "run's id, addresses and policy)",
		       path);
		gw_ctl_req_clear(req);
		return 2;
	}
	return 0;
}

/* --counts FILE: the --run run's denials and bytes, one JSON line written when the gateway
 * stops (gw_start_on_stop()): what warden.exe's run.exit reports, with no control channel to
 * ask. The id is gw_ctl_parse()'s: letters, digits, '-', '_' and '.', nothing to escape. */
static const char *counts_path;

static void counts_write(struct gw *g, void *arg)
{
	const char *id = arg;
	uint64_t c[3];
	FILE *f;

	if (gw_run_counts(g, id, c))
		return;
	f = fopen(counts_path, "w");
	if (!f) {
		wd_log(WD_LOG_WARN, "--counts %s: %s", counts_path, strerror(errno));
		return;
	}
	fprintf(f, "{\"id\":\"%s\",\"denied\":%llu,\"bytes_up\":%llu,\"bytes_down\":%llu}\n", id,
		(unsigned long long)c[0], (unsigned long long)c[1], (unsigned long long)c[2]);
	if (fclose(f))
		wd_log(WD_LOG_WARN, "--counts %s: %s", counts_path, strerror(errno));
}

#ifdef _WIN32
/* --ready-event and --stop-event: handles warden.exe let the gateway inherit */
static HANDLE ready_ev, stop_ev;

/* --stop-event: waited on by a thread of its own; set, it stops the loop as Ctrl+Break does */
static DWORD WINAPI stop_watch(void *h)
{
	if (WaitForSingleObject((HANDLE)h, INFINITE) == WAIT_OBJECT_0)
		gw_poller_win_stop();
	return 0;
}

/* the gateway serves (gw_start_on_ready()): the stop event watched, the ready event set */
static void on_ready(void *arg)
{
	HANDLE t = NULL;

	(void)arg;
	if (stop_ev && !(t = CreateThread(NULL, 0, stop_watch, stop_ev, 0, NULL)))
		wd_log(WD_LOG_WARN,
		       "--stop-event: no thread to watch it (Windows error %lu): "
		       "only the end of its job stops this gateway",
		       GetLastError());
	if (t)
		CloseHandle(t);
	if (ready_ev) {
		SetEvent(ready_ev);
		CloseHandle(ready_ev);
	}
}

/* --listen-info FILE: the proxy listener warden.exe made, bound and listening, handed over as
 * WSADuplicateSocketW() wrote it for this process (no port left free between warden and the
 * gateway); the socket, or the exit status's negation (-2) */
static int listen_take(const char *path)
{
	WSAPROTOCOL_INFOW info;
	size_t n = 0;
	FILE *f = fopen(path, "rb");
	SOCKET s;

	if (f) {
		n = fread(&info, 1, sizeof(info), f);
		fclose(f);
	}
	if (n != sizeof(info)) {
		wd_log(WD_LOG_ERR, "--listen-info %s: not a socket's protocol information (%s)",
		       path, f ? "short" : strerror(errno));
		return -2;
	}
	s = WSASocketW(FROM_PROTOCOL_INFO, FROM_PROTOCOL_INFO, FROM_PROTOCOL_INFO, &info, 0,
		       WSA_FLAG_NO_HANDLE_INHERIT);
	if (s == INVALID_SOCKET || s > INT_MAX) {
		wd_log(WD_LOG_ERR, "--listen-info %s: the socket cannot be made (Winsock error %d)",
		       path, WSAGetLastError());
		if (s != INVALID_SOCKET)
			closesocket(s);
		return -2;
	}
	return (int)s;
}

/* --ready-event/--stop-event HANDLE: an event handle inherited from warden.exe, its value in
 * decimal, into *@out; 0, or the exit status (2) */
static int event_take(const char *opt, const char *arg, HANDLE *out)
{
	unsigned long long v;
	DWORD flags;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (errno || *end || !v || v > UINTPTR_MAX ||
	    !GetHandleInformation((HANDLE)(uintptr_t)v, &flags)) {
		wd_log(WD_LOG_ERR, "--%s %s: not an event handle of this process", opt, arg);
		return 2;
	}
	/* NOLINTNEXTLINE(performance-no-int-to-ptr): a handle value warden passed in decimal */
	*out = (HANDLE)(uintptr_t)v;
	gw_start_on_ready(on_ready, NULL);
	return 0;
}
#endif

/* the configuration, with the overrides; 0, or the exit status */
static int load(const char *config, const char *audit_path, const char *ctl_path,
		struct wd_gwconf *conf)
{
	struct policy_diags d;
	int ret;

	if (!config) {
		wd_log(WD_LOG_ERR, "--config FILE is needed: a configuration with `mode: proxy`");
		return 2;
	}
	policy_diags_init(&d);
	ret = conf_load(config, conf, &d);
	for (size_t i = 0; ret && i < d.n; i++) {
		struct wd_buf b = WD_BUF_INIT;

		policy_diag_format(&d, i, &b);
		fprintf(stderr, "%s\n", wd_buf_cstr(&b));
		wd_buf_free(&b);
	}
	policy_diags_free(&d);
	if (ret)
		return 2;
	if (conf->mode != WD_GW_PROXY) {
		wd_log(WD_LOG_ERR,
		       "%s: the mode is transparent; this warden-gateway serves proxy mode only "
		       "(set `mode: proxy`: the transparent gateway needs Linux's nftables)",
		       config);
		conf_free(conf);
		return 2;
	}
	if (ctl_path)
		snprintf(conf->control_path, sizeof(conf->control_path), "%s", ctl_path);
	if (!audit_path)
		audit_path = conf->audit_path[0] ? conf->audit_path : DEFAULT_AUDIT;
	if (audit_path != conf->audit_path &&
	    snprintf(conf->audit_path, sizeof(conf->audit_path), "%s", audit_path) >=
		(int)sizeof(conf->audit_path)) {
		wd_log(WD_LOG_ERR, "--audit-log: path too long");
		conf_free(conf);
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"config", required_argument, NULL, 'c'},
	    {"audit-log", required_argument, NULL, 'a'},
	    {"control", required_argument, NULL, 's'},
	    {"listen-fds", required_argument, NULL, 'L'},
	    {"run", required_argument, NULL, 'r'},
	    {"ready-event", required_argument, NULL, 'R'},
	    {"stop-event", required_argument, NULL, 'S'},
	    {"counts", required_argument, NULL, 'C'},
	    {"listen-info", required_argument, NULL, 'I'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"version", no_argument, NULL, 'V'},
	    {"help", no_argument, NULL, 'h'},
	    /* the Linux gateway's, refused */
	    {"user", required_argument, NULL, 'u'},
	    {"worker", required_argument, NULL, 'w'},
	    {"no-privsep", no_argument, NULL, 'n'},
	    {"manage-nft", no_argument, NULL, 'm'},
	    {"no-nflog", no_argument, NULL, 'N'},
	    {"control-group", required_argument, NULL, 'G'},
	    {NULL, 0, NULL, 0},
	};
	const char *config = NULL, *audit_path = NULL, *ctl_path = NULL, *run_path = NULL;
	const char *ready_event = NULL, *stop_event = NULL, *listen_info = NULL;
	int listen_from = LISTEN_FROM;
	struct gw_ctl_req boot;
	struct wd_gwconf conf;
#ifndef _WIN32
	struct rlimit rl;
	sigset_t mask;
#else
	WSADATA wsa;
#endif
	int c, idx, ret, listen_fds = 0;
	char *end;

	/* before any OpenSSL call: no openssl.cnf read (audit/audit.h) */
	audit_crypto_init();
#ifdef _WIN32
	/* paths outside ASCII in a legacy code page would not be the ones given (common/win.h) */
	if (wd_win_utf8_args() < 0) {
		wd_say(stderr,
		       "warden-gateway: this Windows does not run it with UTF-8 as its code "
		       "page (Windows 10 1903 and later do): an argument outside ASCII would "
		       "reach it changed; refused");
		return 2;
	}
#endif
	if (argc > 1 && !strcmp(argv[1], "ctl")) {
		conf_defaults(&conf);
		ret = gw_ctl_client(argc - 1, argv + 1, conf.control_path, usage);
		conf_free(&conf);
		return ret;
	}
	while ((c = getopt_long(argc, argv, "c:hv", opts, &idx)) != -1) {
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
		case 'r':
			run_path = optarg;
			break;
		case 'R':
			ready_event = optarg;
			break;
		case 'S':
			stop_event = optarg;
			break;
		case 'C':
			counts_path = optarg;
			break;
		case 'I':
			listen_info = optarg;
			break;
		case 'L':
			listen_fds = (int)strtol(optarg, &end, 10);
			if (*end || listen_fds < 1 || listen_fds > LISTEN_MAX) {
				wd_log(WD_LOG_ERR, "--listen-fds: 1 to 12 descriptors, from 3");
				return 2;
			}
			break;
		case 'v':
			wd_log_set_level(WD_LOG_DEBUG);
			break;
		case 'V':
			printf("warden-gateway %s (proxy mode only)\n", WARDEN_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		case 'u':
		case 'w':
		case 'n':
		case 'm':
		case 'N':
		case 'G':
			return linux_only(opts[idx].name);
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
#ifdef _WIN32
	if (ready_event && (ret = event_take("ready-event", ready_event, &ready_ev)))
		return ret;
	if (stop_event && (ret = event_take("stop-event", stop_event, &stop_ev)))
		return ret;
	if (ctl_path || listen_fds) {
		wd_log(WD_LOG_ERR, "--%s: not on Windows (%s)", ctl_path ? "control" : "listen-fds",
		       ctl_path ? "no control channel: see below" : "no descriptors are inherited");
		return 2;
	}
#endif
#ifndef _WIN32
	if (ready_event || stop_event || listen_info) {
		wd_log(WD_LOG_ERR,
		       "--%s: Windows only (an inherited handle; elsewhere a listener is handed in "
		       "with --listen-fds, readiness is the port's or NOTIFY_SOCKET's, a stop is "
		       "SIGTERM)",
		       ready_event  ? "ready-event"
		       : stop_event ? "stop-event"
				    : "listen-info");
		return 2;
	}
#endif
	if (counts_path && !run_path) {
		wd_log(WD_LOG_ERR, "--counts: the counts are the --run run's; give --run FILE");
		return 2;
	}
	ret = load(config, audit_path, ctl_path, &conf);
	if (ret)
		return ret;
	if (run_path && (ret = boot_run(run_path, &boot))) {
		conf_free(&conf);
		return ret;
	}
	if (counts_path)
		gw_start_on_stop(counts_write, boot.id);
#ifdef _WIN32
	/* The control channel is an AF_UNIX socket whose every request is checked against the
	 * peer's uid (SO_PEERCRED), and a run's user is looked up in the passwd and group
	 * databases for the host's ceiling: Windows has neither, so no control socket is made.
	 * The one run is the --run file's (warden.exe writes it); without one, fail closed:
	 * every connection to the proxy port is refused (no run owns it) and audited with its
	 * denial id. A configuration with a ceiling refuses that run (no user to look up). */
	conf.control_path[0] = '\0';
	if (run_path)
		wd_log(WD_LOG_INFO, "no control channel on Windows: the one run is %s's", run_path);
	else
		wd_log(WD_LOG_WARN, "no control channel on Windows (no peer credentials, no passwd "
				    "database) and no --run: every connection is refused");
	if (WSAStartup(MAKEWORD(2, 2), &wsa)) {
		wd_log(WD_LOG_ERR, "WSAStartup: Winsock 2.2 is not there");
		if (run_path)
			gw_ctl_req_clear(&boot);
		conf_free(&conf);
		return 1;
	}
	if (listen_info) {
		listen_from = listen_take(listen_info);
		if (listen_from < 0) {
			if (run_path)
				gw_ctl_req_clear(&boot);
			conf_free(&conf);
			WSACleanup();
			return -listen_from;
		}
		listen_fds = 1;
	}
#endif
	if (geteuid() == 0)
		wd_log(WD_LOG_WARN, "running as root: proxy mode needs no privilege; run it as the "
				    "user whose runs it serves");
#ifndef _WIN32
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max > 65536 ? 65536 : rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	/* the loop takes SIGTERM and SIGINT as events (poller.h): blocked before it starts */
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
#endif
	/* Windows: no descriptor limit to raise, no SIGPIPE, no signal mask; the poller takes the
	 * console's control events in place of SIGTERM and SIGINT (poll_wsapoll.c, gw.c) */
	ret = gw_start_standalone(&conf, false, listen_from, listen_fds, run_path ? &boot : NULL);
	if (run_path)
		gw_ctl_req_clear(&boot);
	conf_free(&conf);
#ifdef _WIN32
	WSACleanup();
#endif
	return ret;
}

/* cmd_mcp.c - `warden mcp`: Warden as an MCP server over stdio (docs/mcp.md).
 *
 * Theory of operation. Start: the policy is loaded and validated once (it must keep the audit
 * log, the approval store and the server's own folder out of every grant), the audit log
 * opened, the approval store opened, the first derived policy written. Then one poll() loop:
 * stdin (the client's lines, to mcp_proto.c), each live run's pipes and pidfd (mcp_tools.c),
 * and a tick every 200 ms for progress notifications, the KILL after a cancelled run's grace
 * and the decisions a person made in the approval store. stdout carries only JSON-RPC lines.
 * At stdin's end, or on TERM/INT/HUP, every run is stopped and waited for, pending requests
 * are dropped (audited) and the server's folder removed.
 */
#include "launcher/cli.h"
#include "mcp/internal.h"
#include "mcp/pin.h"
#include "run/run.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: warden mcp [-p POLICY] [--config GATEWAY.yaml] [--audit-log PATH]\n"
	    "                  [--backend NAME]\n"
	    "       warden mcp pin -p POLICY [--accept] [-- SERVER ARGS...]\n"
	    "\n"
	    "Speak MCP (JSON-RPC 2.0, one message a line) on stdin and stdout: an MCP client\n"
	    "starts it as a server. Its tools run commands under POLICY exactly like\n"
	    "`warden run` (run_sandboxed), read the audit log (list_audit_log), list and stop\n"
	    "this server's runs (list_runs, kill_run), and change the network allowlist\n"
	    "(set_egress_allowlist): removals apply at once, an addition waits for a\n"
	    "person's approval (the client's elicitation, or `warden allowlist approve ID`).\n"
	    "\n"
	    "  -p, --policy FILE     the policy of every run (default: the empty policy)\n"
	    "      --config FILE     warden-gateway config given to each `warden run`\n"
	    "      --audit-log PATH  audit log (default: $WARDEN_AUDIT_LOG, else\n"
	    "                        ${XDG_STATE_HOME:-~/.local/state}/warden/audit.jsonl)\n"
	    "      --backend NAME    the sandbox backend of every run (warden run --backend:\n"
	    "                        linux, docker, ...; default: the policy's, else auto)\n"
	    "\n"
	    "Exit: 0 when the client closed stdin; 2 bad options or policy; 125 Warden failed.\n");
}

static int send_line(void *ctx, json_t *msg)
{
	char *text = json_dumps(msg, JSON_COMPACT);
	size_t len;
	int ret;

	(void)ctx;
	if (!text)
		return -ENOMEM;
	len = strlen(text);
	text[len] = '\n'; /* json_dumps' NUL becomes the frame's newline */
	ret = wd_write_all(STDOUT_FILENO, text, len + 1);
	free(text);
	return ret;
}

static char *absolute(const char *path)
{
	char cwd[PATH_MAX], *out;

	if (path[0] == '/')
		return strdup(path);
	if (!getcwd(cwd, sizeof(cwd)))
		return NULL;
	if (asprintf(&out, "%s/%s", cwd, path) < 0)
		return NULL;
	return out;
}

/* the server's own folder: ${XDG_STATE_HOME:-~/.local/state}/warden/mcp/<random> (0700) */
static int make_state_dir(struct mcp_server *m)
{
	char base[PATH_MAX - 32], *slash;
	uint8_t b[8];
	int n;

	n = snprintf(base, sizeof(base), "%s", m->approval_dir);
	if (n < 0 || (size_t)n + 4 >= sizeof(base))
		return -ENAMETOOLONG;
	slash = strrchr(base, '/');
	if (!slash)
		return -EINVAL;
	snprintf(slash, sizeof(base) - (size_t)(slash - base), "/mcp");
	if (wd_mkdir_p(base, 0700))
		return -errno;
	if (getrandom(b, sizeof(b), 0) != sizeof(b))
		return -EIO;
	n = snprintf(m->state_dir, sizeof(m->state_dir), "%s/%02x%02x%02x%02x%02x%02x%02x%02x",
		     base, b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]);
	if (n < 0 || (size_t)n >= sizeof(m->state_dir))
		return -ENAMETOOLONG;
	if (mkdir(m->state_dir, 0700) < 0) {
		m->state_dir[0] = '\0';
		return -errno;
	}
	return 0;
}

static int load_policy(struct mcp_server *m)
{
	struct policy_protect prot[RUN_PROTECT_MAX + 2];
	struct policy_ctx ctx = {0};
	struct policy_diags d;
	int ret;

	mcp_protect(m, prot, &ctx.nprotect, WD_ARRAY_SIZE(prot));
	ctx.protect = prot;
	policy_diags_init(&d);
	if (m->policy_path) {
		ret = policy_load(m->policy_path, &ctx, &m->base, &d);
	} else {
		static const char empty[] = "version: 1\n";

		ret = policy_parse(empty, sizeof(empty) - 1, "<empty policy>", &m->base, &d);
		if (!ret)
			ret = policy_validate(m->base, &ctx, &d);
	}
	policy_diags_sort(&d);
	for (size_t i = 0; i < d.n; i++) {
		struct wd_buf line = WD_BUF_INIT;

		if (!policy_diag_format(&d, i, &line))
			wd_say(stderr, "%s", wd_buf_cstr(&line));
		wd_buf_free(&line);
	}
	policy_diags_free(&d);
	return ret;
}

static int setup(struct mcp_server *m, const char *policy, const char *config, const char *audit)
{
	const char *ap = run_audit_path(audit);
	char why[1024];
	struct wd_err err;
	uint64_t max;
	ssize_t n;
	int ret;

	n = readlink("/proc/self/exe", m->self, sizeof(m->self) - 1);
	if (n <= 0) {
		wd_say(stderr, "warden mcp: cannot find this program: %s", strerror(errno));
		return WD_EXIT_INTERNAL;
	}
	m->self[n] = '\0';
	/* list_audit_log: the server's own events are those of its pid written since */
	clock_gettime(CLOCK_REALTIME, &m->started);
	if (!ap) {
		fprintf(stderr, "warden mcp: no audit log path: set HOME or give --audit-log\n");
		return WD_EXIT_USAGE;
	}
	{
		char *a = absolute(ap);

		if (!a)
			return WD_EXIT_INTERNAL;
		snprintf(m->audit_path, sizeof(m->audit_path), "%s", a);
		free(a);
	}
	m->policy_path = policy ? absolute(policy) : NULL;
	m->config = config ? absolute(config) : NULL;
	if ((policy && !m->policy_path) || (config && !m->config))
		return WD_EXIT_INTERNAL;
	if (run_approval_dir(m->approval_dir, sizeof(m->approval_dir))) {
		fprintf(stderr, "warden mcp: no state folder: set HOME or XDG_STATE_HOME\n");
		return WD_EXIT_USAGE;
	}
	wd_err_clear(&err);
	ret = run_approval_open(m->approval_dir, &m->approval_fd, &err);
	if (ret) {
		wd_say(stderr, "warden mcp: %s", err.msg);
		return WD_EXIT_INTERNAL;
	}
	ret = make_state_dir(m);
	if (ret) {
		wd_say(stderr, "warden mcp: cannot make its folder: %s", strerror(-ret));
		return WD_EXIT_INTERNAL;
	}
	if (load_policy(m)) {
		fprintf(stderr, "warden mcp: the policy is not valid (see above)\n");
		return WD_EXIT_USAGE;
	}
	wd_err_clear(&err);
	ret = audit_log_open(m->audit_path, &m->log, &err);
	if (ret) {
		wd_say(stderr, "warden mcp: audit log: %s", err.msg[0] ? err.msg : strerror(-ret));
		return WD_EXIT_INTERNAL;
	}
	audit_log_chain(m->log);
	if (run_audit_max_bytes(&max) < 0) {
		fprintf(stderr, "warden mcp: WARDEN_AUDIT_MAX_BYTES is not a whole number of "
				"bytes (0: never rotate)\n");
		return WD_EXIT_USAGE;
	}
	audit_log_set_max(m->log, max);
	/* it rotates the log too: the new file begins with an anchor signed with the person's
	 * key (docs/audit.md), so it needs the key as warden run does (fail closed) */
	wd_err_clear(&err);
	ret = run_audit_key_path()
		  ? audit_key_load(run_audit_key_path(), true, &m->key, &err)
		  : wd_err_set(&err, -ENOENT, "no place for the audit signing key");
	if (ret == 0)
		ret = audit_log_sign_anchors(m->log, m->key, &err);
	if (ret) {
		wd_say(stderr, "warden mcp: audit key: %s", err.msg[0] ? err.msg : strerror(-ret));
		return WD_EXIT_INTERNAL;
	}
	if (mcp_derive(m, why, sizeof(why))) {
		wd_say(stderr, "warden mcp: %s", why);
		return WD_EXIT_INTERNAL;
	}
	return 0;
}

/* the lines of what stdin gave; a partial line waits for the rest */
static int feed(struct mcp_server *m, struct wd_buf *in, bool *over)
{
	size_t start = 0;
	int ret = 0;

	for (size_t i = 0; i < in->len && !ret; i++) {
		if (in->data[i] != '\n')
			continue;
		if (*over) /* the end of a line over the limit: its error was sent */
			*over = false;
		else
			ret = mcp_handle_line(&m->s, in->data + start, i - start);
		start = i + 1;
	}
	if (start) {
		memmove(in->data, in->data + start, in->len - start);
		in->len -= start;
	}
	if (!*over && in->len > MCP_LINE_MAX) {
		/* mcp_handle_line() answers any line over the limit with -32600 */
		ret = mcp_reply_error(&m->s, NULL, MCP_ERR_INVALID_REQUEST,
				      "the message is longer than 4 MiB");
		*over = true;
	}
	if (*over)
		in->len = 0;
	return ret;
}

static int loop(struct mcp_server *m, int sigfd)
{
	struct pollfd pfd[2 + MCP_MAX_RUNS * 4];
	struct mcp_run *owner[2 + MCP_MAX_RUNS * 4];
	struct wd_buf in = WD_BUF_INIT;
	bool over = false;
	char buf[65536];
	int ret = 0;

	while (!m->eof) {
		size_t n = 0;
		ssize_t got;

		pfd[n] = (struct pollfd){.fd = STDIN_FILENO, .events = POLLIN};
		owner[n++] = NULL;
		pfd[n] = (struct pollfd){.fd = sigfd, .events = POLLIN};
		owner[n++] = NULL;
		for (size_t i = 0; i < MCP_MAX_RUNS; i++) {
			struct mcp_run *r = &m->runs[i];

			if (!r->used)
				continue;
			if (r->in_fd >= 0) {
				pfd[n] = (struct pollfd){.fd = r->in_fd, .events = POLLOUT};
				owner[n++] = r;
			}
			for (int k = 0; k < 2; k++)
				if (r->out[k].fd >= 0) {
					pfd[n] =
					    (struct pollfd){.fd = r->out[k].fd, .events = POLLIN};
					owner[n++] = r;
				}
			pfd[n] = (struct pollfd){.fd = r->pidfd, .events = POLLIN};
			owner[n++] = r;
		}
		if (poll(pfd, n, 200) < 0 && errno != EINTR) {
			ret = -errno;
			break;
		}
		if (pfd[1].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(sigfd, &si, sizeof(si)) == sizeof(si))
				if (si.ssi_signo != SIGCHLD)
					m->eof = true;
		}
		for (size_t i = 2; i < n; i++) {
			struct mcp_run *r = owner[i];

			if (!pfd[i].revents || !r->used)
				continue;
			if (pfd[i].fd == r->pidfd && !r->reaped)
				mcp_run_check(m, r);
			else if (pfd[i].fd == r->in_fd || pfd[i].fd == r->out[0].fd ||
				 pfd[i].fd == r->out[1].fd)
				mcp_run_io(m, r, pfd[i].fd);
			if (r->used)
				mcp_run_check(m, r);
		}
		/* a run whose pidfd could not be had is reaped by SIGCHLD's tick */
		for (size_t i = 0; i < MCP_MAX_RUNS; i++)
			if (m->runs[i].used && m->runs[i].pidfd < 0)
				mcp_run_check(m, &m->runs[i]);
		if (pfd[0].revents) {
			got = read(STDIN_FILENO, buf, sizeof(buf));
			if (got < 0 && (errno == EINTR || errno == EAGAIN)) {
				/* again on the next round */
			} else if (got <= 0) {
				m->eof = true;
				/* a last line without its newline still counts */
				if (in.len && !over)
					ret = mcp_handle_line(&m->s, in.data, in.len);
				in.len = 0;
			} else {
				if (wd_buf_append(&in, buf, (size_t)got)) {
					ret = -ENOMEM;
					break;
				}
				ret = feed(m, &in, &over);
			}
			if (ret == -EPIPE)
				m->eof = true;
		}
		mcp_tick(m, wd_mono_ns());
	}
	wd_buf_free(&in);
	return ret == -EPIPE ? 0 : ret;
}

int cmd_mcp(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"policy", required_argument, NULL, 'p'},
	    {"config", required_argument, NULL, 'c'},
	    {"audit-log", required_argument, NULL, 'a'},
	    {"backend", required_argument, NULL, 'b'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	static struct mcp_server m;
	const char *policy = NULL, *config = NULL, *audit = NULL, *backend = NULL;
	struct mcp_ops ops = {.ctx = &m,
			      .send = send_line,
			      .call = mcp_tool_call,
			      .cancelled = mcp_tool_cancelled,
			      .answer = mcp_tool_answer};
	sigset_t set;
	int c, ret, sigfd;

	if (argc > 1 && !strcmp(argv[1], "pin"))
		return mcp_pin_main(argc - 1, argv + 1);
	optind = 1;
	while ((c = getopt_long(argc, argv, "+p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			policy = optarg;
			break;
		case 'c':
			config = optarg;
			break;
		case 'a':
			audit = optarg;
			break;
		case 'b':
			if (!policy_backend_lookup(optarg)) {
				wd_say(stderr,
				       "warden mcp: --backend: expected one of: %s, not `%s`",
				       policy_backend_list(), optarg);
				return WD_EXIT_USAGE;
			}
			backend = optarg;
			break;
		case 'h':
			usage(stdout);
			return WD_EXIT_OK;
		default:
			usage(stderr);
			return WD_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		wd_say(stderr,
		       "warden mcp: unexpected argument '%s' (to wrap a server, use "
		       "`warden run -p POLICY -- SERVER ARGS...`)",
		       argv[optind]);
		return WD_EXIT_USAGE;
	}
	memset(&m, 0, sizeof(m));
	m.approval_fd = -1;
	m.backend = backend;
	for (size_t i = 0; i < MCP_MAX_RUNS; i++)
		m.runs[i].pidfd = -1;
	ret = setup(&m, policy, config, audit);
	if (ret)
		goto out;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sigfd < 0) {
		ret = WD_EXIT_INTERNAL;
		goto out;
	}
	mcp_session_init(&m.s, &ops, mcp_tools, mcp_ntools, "warden", WARDEN_VERSION);
	mcp_audit(&m, "mcp.start", "", m.policy_path ? m.policy_path : "", true,
		  "warden mcp started: runs use %s", m.derived);
	ret = loop(&m, sigfd);
	if (ret)
		wd_say(stderr, "warden mcp: %s", strerror(-ret));
	ret = ret ? WD_EXIT_INTERNAL : WD_EXIT_OK;
	mcp_shutdown(&m);
	mcp_audit(&m, "mcp.exit", "", m.policy_path ? m.policy_path : "", true, "warden mcp ended");
	close(sigfd);
out:
	if (ret && m.state_dir[0]) {
		if (m.derived[0])
			unlink(m.derived);
		rmdir(m.state_dir);
	}
	audit_log_close(m.log);
	audit_key_free(m.key);
	policy_free(m.base);
	for (size_t i = 0; i < m.nremoved; i++)
		policy_free(m.removed[i]);
	for (size_t i = 0; i < m.nadded; i++)
		policy_free(m.added[i]);
	free(m.removed);
	free(m.added);
	free(m.policy_path);
	free(m.config);
	if (m.approval_fd >= 0)
		close(m.approval_fd);
	return ret;
}

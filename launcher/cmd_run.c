/* cmd_run.c - `warden run`: one program in a sandbox that reaches only what its policy grants.
 *
 * Theory of operation (docs/run.md has the long form). A run goes through named stages; each
 * one that creates something records it in the run's state folder first, so a crash at any
 * point leaves enough behind for `warden gc` (or the next run) to undo it:
 *
 *   policy    load + validate the policy, resolve the command to an absolute path
 *   prereq    root, bubblewrap, the limits mechanism
 *   audit     a durable "run.start" event; if it cannot be written nothing runs
 *   state     /run/warden/runs/<id>/state with our pid and start time
 *   network   netns + veth (netns/), then the run's nft set elements (nft/; the table is
 *             installed first when it is missing)
 *   limits    cgroups (v2, else v1) with the policy's limits, else RSS sampling
 *   gateway   a daemon answering on the control socket, else an embedded warden-gateway
 *             child bound to this run's host-side addresses; the run is registered
 *   check     enforcement is live: the gateway lists the run and a DNS query sent from
 *             inside the run's namespace to port 53 is answered (which needs the nft
 *             redirect, the run's set elements and the gateway's DNS front)
 *   exec      fork; the child enters the netns and the cgroups, drops to the invoking user
 *             under sudo, and execs bwrap (its failure comes back over a CLOEXEC pipe)
 *   wait      signalfd loop: SIGINT/SIGTERM/SIGHUP forwarded to the program, the timeout
 *             (SIGTERM to the tree, SIGKILL 750 ms later), RSS sampling when needed
 *   teardown  limit events, the gateway's counters, unregister, nft elements, netns,
 *             cgroups, state folder; then "run.exit"
 * A failure before exec tears down what exists, writes run.exit (status 125) once run.start
 * was written, and exits 125 with the stage, the cause and a fix.
 */
#include "launcher/cli.h"
#include "launcher/run.h"
#include "audit/audit.h"
#include "common/common.h"
#include "netns/netns.h"
#include "nft/nft.h"
#include "plumb/plumb.h"
#include "policy/policy.h"
#include "sandbox/sandbox.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <jansson.h>
#include <limits.h>
#include <linux/keyctl.h>
#include <poll.h>
#include <pthread.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BWRAP_DEFAULT "/usr/bin/bwrap"
#define NFT_LOCK "/run/warden/nft.lock"
#define RSS_SAMPLE_MS 100

extern char **environ;

struct run_opts {
	const char *policy;
	const char *gateway;
	const char *config;
	const char *audit;
	const char *sandbox_user;
	unsigned timeout_s;
	bool quiet;
	bool print_seccomp;
};

struct run {
	struct run_opts o;
	struct wd_policy *pol;
	char *policy_text;
	size_t policy_len;
	char policy_hash[72];
	char policy_abs[PATH_MAX];
	char **argv; /* argv[0] resolved */
	char exe[PATH_MAX];
	char id[16];
	uid_t uid; /* the program's user (never 0) */
	gid_t gid;
	uid_t caller_uid; /* the person: the audit events' uid (SUDO_UID under sudo) */
	const char *user;
	gid_t groups[64];
	int ngroups;
	const char *bwrap;
	struct audit_log *log;
	bool started; /* run.start written */
	uint64_t t0;
	struct run_record rec;
	bool rec_saved;
	char state_dir[PATH_MAX];
	struct wd_gwconf gwc;
	struct netns_pool_config ncfg;
	struct netns_run net;
	char host4[INET_ADDRSTRLEN], host6[INET6_ADDRSTRLEN];
	struct fw_config fcfg;
	struct fw_conn *fw;
	struct fw_run fr;
	bool fw_added;
	enum limits_kind lkind;
	struct limits lim;
	struct run_gw gw;
	bool gw_daemon; /* gateway_pick() chose a daemon (else an embedded one was spawned) */
	bool registered;
	bool gw_lost;	       /* the gateway died or forgot the run: its counts are incomplete */
	char gw_lost_why[300]; /* ... and how, for run.exit */
	unsigned pool_size; /* ready networks to keep ($WARDEN_POOL) */
	bool pooled;	    /* the network came from the pool */
	int sigfd;
	pid_t child;
	pid_t ns_init;
	int info_fd, err_fd, go_fd; /* bwrap's info pipe, exec errors, the "go" pipe */
	char info[512];
	size_t info_len;
	struct bwrap_grant *grants; /* the grants in mount order (bwrap_grants()) */
	size_t ngrants;
	char fail_reason[1200];
	bool no_seccomp; /* WARDEN_UNSAFE_NO_SECCOMP=1: measurements only (docs/seccomp.md) */
};

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: warden run [-p POLICY] [--gateway SOCKET] [--config GATEWAY.yaml]\n"
	    "                  [--audit-log PATH] [--timeout SECONDS] [-q] [-- COMMAND ARGS...]\n"
	    "       warden run [-p POLICY] --print-seccomp\n"
	    "\n"
	    "Run COMMAND (else the policy's `command`) in a sandbox: its own network namespace\n"
	    "whose every DNS query and TCP connection goes to a gateway that decides by name,\n"
	    "under bubblewrap with only the runtime base and the policy's grants visible.\n"
	    "\n"
	    "  -p, --policy FILE     the policy (default: an empty policy: no files, no network)\n"
	    "      --gateway SOCKET  use the warden-gateway daemon answering on SOCKET\n"
	    "                        (default: %s if it answers, else an embedded\n"
	    "                        gateway started for this run)\n"
	    "      --config FILE     warden-gateway config: ports, nft table, pools\n"
	    "      --audit-log PATH  audit log (default: $WARDEN_AUDIT_LOG, else\n"
	    "                        ${XDG_STATE_HOME:-~/.local/state}/warden/audit.jsonl)\n"
	    "      --timeout SEC     wall-clock limit (overrides limits.timeout)\n"
	    "      --sandbox-user U  started by root (not through sudo): run the program as\n"
	    "                        user U (name or uid; default $WARDEN_SANDBOX_USER, else\n"
	    "                        nobody); the program never runs as root\n"
	    "  -q, --quiet           no progress messages\n"
	    "      --print-seccomp   print the seccomp filter the policy gives every process\n"
	    "                        of the run (no root needed, nothing runs) and exit 0\n"
	    "\n"
	    "Exit: the program's status; 128+N when it died of signal N; 124 timeout;\n"
	    "125 Warden failed before the program started (the message names the step);\n"
	    "126 the command is not executable; 127 it is not found or not visible.\n",
	    RUN_DAEMON_SOCKET);
}

/* ---------------------------------------------------------------- timing */

/* WARDEN_TIMING=1: print how long each stage took (for docs/run.md's measurements). */
static void stamp(const char *stage)
{
	static uint64_t last;
	static int on = -1;
	uint64_t now = wd_mono_ns();

	if (on < 0)
		on = getenv("WARDEN_TIMING") != NULL;
	if (on && last)
		fprintf(stderr, "warden run: timing: %-10s %7.2f ms\n", stage,
			(double)(now - last) / 1e6);
	last = now;
}

/* ---------------------------------------------------------------- failing */

/* Print "warden run: STEP: CAUSE" and a fix; remember it for run.exit. Return: 125. */
static int WD_PRINTF(4, 5)
    fail(struct run *r, const char *step, const char *fix, const char *fmt, ...)
{
	char cause[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cause, sizeof(cause), fmt, ap);
	va_end(ap);
	fprintf(stderr, "warden run: %s: %s\n", step, cause);
	if (fix)
		fprintf(stderr, "  fix: %s\n", fix);
	snprintf(r->fail_reason, sizeof(r->fail_reason), "%s: %s", step, cause);
	return RUN_EXIT_WARDEN;
}

static void note(const struct run *r, const char *fmt, ...) WD_PRINTF(2, 3);
static void note(const struct run *r, const char *fmt, ...)
{
	va_list ap;

	if (r->o.quiet)
		return;
	va_start(ap, fmt);
	fputs("warden run: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* ---------------------------------------------------------------- options, policy */

static int parse_opts(int argc, char **argv, struct run_opts *o, int *ret_optind)
{
	static const struct option opts[] = {
	    {"policy", required_argument, NULL, 'p'},
	    {"gateway", required_argument, NULL, 'g'},
	    {"config", required_argument, NULL, 'c'},
	    {"audit-log", required_argument, NULL, 'a'},
	    {"timeout", required_argument, NULL, 't'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"sandbox-user", required_argument, NULL, 'u'},
	    {"help", no_argument, NULL, 'h'},
	    {"print-seccomp", no_argument, NULL, 'S'},
	    {NULL, 0, NULL, 0},
	};
	char *end;
	long v;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+p:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			o->policy = optarg;
			break;
		case 'g':
			o->gateway = optarg;
			break;
		case 'c':
			o->config = optarg;
			break;
		case 'a':
			o->audit = optarg;
			break;
		case 'u':
			o->sandbox_user = optarg;
			break;
		case 't':
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || *end || v < 1 || v > 604800) {
				fprintf(stderr, "warden run: --timeout: 1 to 604800 seconds\n");
				return -EINVAL;
			}
			o->timeout_s = (unsigned)v;
			break;
		case 'q':
			o->quiet = true;
			break;
		case 'S':
			o->print_seccomp = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	*ret_optind = optind;
	return 0;
}

static void print_diags(struct policy_diags *d)
{
	struct wd_buf line = WD_BUF_INIT;

	policy_diags_sort(d);
	for (size_t i = 0; i < d->n; i++) {
		wd_buf_reset(&line);
		if (!policy_diag_format(d, i, &line))
			fprintf(stderr, "%s\n", wd_buf_cstr(&line));
	}
	wd_buf_free(&line);
}

/*
 * Who the program runs as, never uid 0: under sudo the invoking user (SUDO_UID/SUDO_GID, with
 * their groups, and their home for `~` and the credential stores); started by root directly,
 * the sandbox user (--sandbox-user, $WARDEN_SANDBOX_USER, else nobody) with no supplementary
 * groups, root's home still naming `~`. Return: 0, or 125 after saying why.
 */
static int invoking_user(struct run *r, const char **ret_home)
{
	const char *su = getenv("SUDO_UID"), *sg = getenv("SUDO_GID");
	const char *want = r->o.sandbox_user;
	struct passwd *pw;
	char name[64];
	int ret;

	r->uid = r->caller_uid = getuid();
	r->gid = getgid();
	*ret_home = NULL;
	if (r->uid != 0)
		return 0;
	if (su && sg && atoi(su) > 0 && atoi(sg) >= 0) {
		r->uid = r->caller_uid = (uid_t)atoi(su);
		r->gid = (gid_t)atoi(sg);
		pw = getpwuid(r->uid);
		if (pw) {
			int n = (int)WD_ARRAY_SIZE(r->groups);

			r->user = strdup(pw->pw_name);
			*ret_home = pw->pw_dir;
			if (getgrouplist(pw->pw_name, r->gid, r->groups, &n) >= 0)
				r->ngroups = n;
		}
		return 0;
	}
	ret = run_sandbox_user(want, &r->uid, &r->gid, name, sizeof(name));
	if (ret == -ENOENT)
		return fail(r, "user", "name an existing user, or a uid", "no sandbox user `%s`",
			    name);
	if (ret)
		return fail(r, "user", "pick an unprivileged user for --sandbox-user",
			    "the sandbox user `%s` is root: a program never runs as root", name);
	r->user = strdup(name);
	r->ngroups = 0;
	return 0;
}

static int load_policy(struct run *r)
{
	static const char empty[] = "version: 1\n";
	struct policy_diags d;
	struct policy_ctx ctx = {0};
	struct cli_protect pr;
	int ret;

	ret = invoking_user(r, &ctx.home);
	if (ret)
		return ret;
	cli_protect_init(&pr, cli_audit_path(r->o.audit), r->gwc.audit_path);
	ctx.protect = pr.v;
	ctx.nprotect = pr.n;
	policy_diags_init(&d);
	if (r->o.policy) {
		ret = policy_load(r->o.policy, &ctx, &r->pol, &d);
		if (ret) {
			print_diags(&d);
			policy_diags_free(&d);
			return fail(r, "policy", "correct the policy (warden policy check FILE)",
				    "%s is not valid (%s)", r->o.policy, strerror(-ret));
		}
		ret = wd_read_file(r->o.policy, POLICY_MAX_BYTES, &r->policy_text, &r->policy_len);
		if (ret) {
			policy_diags_free(&d);
			return fail(r, "policy", NULL, "%s: %s", r->o.policy, strerror(-ret));
		}
		if (!realpath(r->o.policy, r->policy_abs))
			snprintf(r->policy_abs, sizeof(r->policy_abs), "%s", r->o.policy);
	} else {
		ret = policy_parse(empty, sizeof(empty) - 1, "(empty policy)", &r->pol, &d);
		ret = ret ? ret : policy_validate(r->pol, &ctx, &d);
		r->policy_text = strdup(empty);
		r->policy_len = sizeof(empty) - 1;
		snprintf(r->policy_abs, sizeof(r->policy_abs), "(none)");
		if (ret || !r->policy_text) {
			policy_diags_free(&d);
			return fail(r, "policy", NULL, "the empty policy: %s", strerror(-ret));
		}
	}
	/* warnings are worth seeing */
	if (d.n && !r->o.quiet)
		print_diags(&d);
	policy_diags_free(&d);
	run_sha256_hex(r->policy_text, r->policy_len, r->policy_hash);
	return 0;
}

/* Is @path (canonical) visible inside the sandbox? */
static bool visible(const struct run *r, const char *path)
{
	static const char *const base[] = {"/usr",   "/bin",   "/sbin",	  "/lib",
					   "/lib32", "/lib64", "/libx32", "/etc/alternatives"};

	for (size_t i = 0; i < WD_ARRAY_SIZE(base); i++)
		if (run_path_within(path, base[i]))
			return true;
	for (size_t i = 0; i < r->pol->nread; i++)
		if (r->pol->read[i].real && run_path_within(path, r->pol->read[i].real))
			return true;
	for (size_t i = 0; i < r->pol->nwrite; i++)
		if (r->pol->write[i].real && run_path_within(path, r->pol->write[i].real))
			return true;
	return false;
}

static int resolve_command(struct run *r, int argc, char **argv)
{
	char real[PATH_MAX];
	size_t n;
	int ret;

	if (argc > 0) {
		n = (size_t)argc;
		r->argv = calloc(n + 1, sizeof(char *));
		for (size_t i = 0; r->argv && i < n; i++)
			r->argv[i] = argv[i];
	} else if (r->pol->command && r->pol->ncommand) {
		n = r->pol->ncommand;
		r->argv = calloc(n + 1, sizeof(char *));
		for (size_t i = 0; r->argv && i < n; i++)
			r->argv[i] = r->pol->command[i];
	} else {
		fprintf(stderr, "warden run: no command: give one after `--` or set `command` in "
				"the policy\n");
		usage(stderr);
		return RUN_EXIT_WARDEN;
	}
	if (!r->argv)
		return fail(r, "policy", NULL, "out of memory");
	ret = run_resolve_command(r->argv[0], getenv("PATH"), r->exe, sizeof(r->exe));
	if (ret == -EACCES) {
		fprintf(stderr, "warden run: %s: not an executable file\n", r->argv[0]);
		return RUN_EXIT_NOEXEC;
	}
	if (ret) {
		fprintf(stderr, "warden run: %s: command not found\n", r->argv[0]);
		return RUN_EXIT_NOTFOUND;
	}
	if (!realpath(r->exe, real) || !visible(r, real)) {
		fprintf(stderr,
			"warden run: %s (%s) is not visible inside the sandbox\n"
			"  fix: add its folder to filesystem.read in the policy\n",
			r->exe, realpath(r->exe, real) ? real : r->exe);
		return RUN_EXIT_NOTFOUND;
	}
	r->argv[0] = r->exe;
	return 0;
}

/* ---------------------------------------------------------------- audit */

static int write_event(struct run *r, struct audit_event *ev, unsigned flags)
{
	struct wd_err err;
	int ret;

	ev->run = r->id;
	ev->policy = r->policy_abs;
	ev->policy_hash = r->policy_hash;
	ev->has |= AUDIT_HAS_PID | AUDIT_HAS_UID;
	ev->pid = getpid();
	ev->uid = r->caller_uid;
	wd_err_clear(&err);
	ret = audit_log_write(r->log, ev, flags, &err);
	if (ret)
		fprintf(stderr, "warden run: audit: %s\n", err.msg[0] ? err.msg : strerror(-ret));
	return ret;
}

/* ---------------------------------------------------------------- the seccomp filter */

/* sandbox.allow words of the policy -> the sandbox module's bits */
static const struct {
	unsigned policy_bit, sandbox_bit;
} allow_map[] = {
    {POLICY_SANDBOX_USERNS, SANDBOX_ALLOW_USERNS},
};

static unsigned sandbox_allow(const struct wd_policy *p)
{
	unsigned bits = 0;

	for (size_t i = 0; i < WD_ARRAY_SIZE(allow_map); i++)
		if (p->sandbox_allow & allow_map[i].policy_bit)
			bits |= allow_map[i].sandbox_bit;
	return bits;
}

/*
 * WARDEN_UNSAFE_NO_SECCOMP=1 leaves the filter out, for the benchmark's "without" column only:
 * no policy can ask for it, it is said on stderr even with -q, and run.start records it.
 */
static bool unsafe_no_seccomp(void)
{
	const char *v = getenv("WARDEN_UNSAFE_NO_SECCOMP");

	return v && !strcmp(v, "1");
}

/* `warden run --print-seccomp`: the filter as text; Return: 0 or 125 */
static int print_seccomp(struct run *r)
{
	struct wd_buf b = WD_BUF_INIT;
	struct wd_err err;
	unsigned allow = sandbox_allow(r->pol);
	size_t insns = 0;
	int fd = -1, ret;

	wd_err_clear(&err);
	ret = sandbox_seccomp_fd(allow, &fd, &insns, &err);
	if (ret)
		return fail(r, "sandbox", "check `warden doctor`", "%s", err.msg);
	close(fd);
	ret = sandbox_describe(allow, &b);
	if (!ret)
		ret =
		    wd_buf_printf(&b, "# policy: %s; BPF: %zu instructions (libseccomp), x86_64\n",
				  r->policy_abs, insns);
	if (ret) {
		wd_buf_free(&b);
		return fail(r, "sandbox", NULL, "out of memory");
	}
	fputs(wd_buf_cstr(&b), stdout);
	wd_buf_free(&b);
	return fflush(stdout) ? RUN_EXIT_WARDEN : WD_EXIT_OK;
}

static void isolation_text(const struct run *r, char *out, size_t size)
{
	char allow[64], filter[96];
	unsigned bits = sandbox_allow(r->pol);

	sandbox_allow_text(bits, allow, sizeof(allow));
	if (r->no_seccomp)
		snprintf(filter, sizeof(filter), "off(WARDEN_UNSAFE_NO_SECCOMP)");
	else if (bits)
		snprintf(filter, sizeof(filter), "on(allow=%s)", allow);
	else
		snprintf(filter, sizeof(filter), "on");
	snprintf(out, size,
		 "netns+veth+nft,bwrap(user,pid,ipc,uts,cgroup,mount),seccomp=%s,userns=%s,"
		 "uid=%u,limits=%s",
		 filter, (bits & SANDBOX_ALLOW_USERNS) ? "allowed" : "refused", (unsigned)r->uid,
		 limits_kind_name(r->lkind));
}

static int audit_start(struct run *r)
{
	struct audit_event ev = {0};
	char iso[256], reason[256];
	struct wd_err err;
	const char *path = cli_audit_path(r->o.audit);
	int ret;

	if (!path)
		return fail(r, "audit", "set WARDEN_AUDIT_LOG or pass --audit-log PATH",
			    "no audit log path (no home folder)");
	wd_err_clear(&err);
	ret = audit_log_open(path, &r->log, &err);
	if (ret)
		return fail(r, "audit", "fix the audit log's path or permissions (see --audit-log)",
			    "%s", err.msg[0] ? err.msg : strerror(-ret));
	isolation_text(r, iso, sizeof(iso));
	snprintf(reason, sizeof(reason), "gateway: %s",
		 r->o.gateway ? r->o.gateway : "embedded unless a daemon answers");
	ev.type = AUDIT_TYPE_RUN;
	ev.action = "run.start";
	ev.resource = r->exe;
	ev.allowed = true;
	ev.reason = reason;
	ev.isolation = iso;
	ev.command = (const char *const *)r->argv;
	for (ev.command_len = 0; r->argv[ev.command_len]; ev.command_len++)
		;
	ret = write_event(r, &ev, AUDIT_WRITE_DURABLE);
	if (ret)
		return fail(r, "audit", "free space or fix permissions of the audit log",
			    "run.start could not be written durably to %s: %s", path,
			    strerror(-ret));
	r->started = true;
	return 0;
}

static void audit_limit(struct run *r, const char *action, const char *why, int64_t limit,
			int64_t usage)
{
	struct audit_event ev = {0};

	ev.type = AUDIT_TYPE_LIMIT;
	ev.action = action;
	ev.resource = r->exe;
	ev.allowed = false;
	ev.reason = why;
	if (limit >= 0) {
		ev.has |= AUDIT_HAS_LIMIT;
		ev.limit = limit;
	}
	if (usage >= 0) {
		ev.has |= AUDIT_HAS_USAGE;
		ev.usage = usage;
	}
	write_event(r, &ev, 0);
}

/* ---------------------------------------------------------------- state record */

static int save_state(struct run *r)
{
	int ret = run_record_save(RUN_STATE_DIR, &r->rec);

	if (!ret)
		r->rec_saved = true;
	return ret;
}

/* ---------------------------------------------------------------- the gateway */

static int gw_config(struct run *r)
{
	struct policy_diags d;
	int ret;

	policy_diags_init(&d);
	if (r->o.config) {
		ret = policy_gwconf_load(r->o.config, &r->gwc, &d);
		if (ret) {
			print_diags(&d);
			policy_diags_free(&d);
			return fail(r, "gateway", "correct the gateway config",
				    "%s is not valid (%s)", r->o.config, strerror(-ret));
		}
	} else {
		policy_gwconf_defaults(&r->gwc);
	}
	policy_diags_free(&d);
	plumb_fw_config(&r->gwc, &r->fcfg);
	if (run_netns_config(&r->gwc, &r->ncfg))
		return fail(r, "gateway", "correct pools.runs_v4 / runs_v6",
			    "bad run pool %s or %s", r->gwc.pool_v4, r->gwc.pool_v6);
	return 0;
}

/* Send @req; on "ok": true return the parsed answer. */
static int gw_call(const char *sock, json_t *req, json_t **ret_ans, char *why, size_t wsize)
{
	char *line = json_dumps(req, JSON_COMPACT), *ans = NULL;
	json_t *j;
	int ret;

	if (!line)
		return -ENOMEM;
	ret = run_gw_request(sock, line, 3000, &ans);
	free(line);
	if (ret) {
		snprintf(why, wsize, "%s: %s", sock, strerror(-ret));
		return ret;
	}
	j = json_loads(ans, 0, NULL);
	free(ans);
	if (!j) {
		snprintf(why, wsize, "%s: the answer is not JSON", sock);
		return -EBADMSG;
	}
	if (!json_is_true(json_object_get(j, "ok"))) {
		const char *e = json_string_value(json_object_get(j, "error"));

		snprintf(why, wsize, "%s", e ? e : "refused");
		json_decref(j);
		return -EPERM;
	}
	if (ret_ans)
		*ret_ans = j;
	else
		json_decref(j);
	return 0;
}

static int gw_simple(const char *sock, const char *op, json_t **ret_ans)
{
	json_t *req = json_pack("{s:s}", "op", op);
	char why[256];
	int ret;

	if (!req)
		return -ENOMEM;
	ret = gw_call(sock, req, ret_ans, why, sizeof(why));
	json_decref(req);
	return ret;
}

/* Which gateway: --gateway, else the daemon's socket if it answers, else an embedded one,
 * spawned now (it starts while the rest of the setup runs; gateway_ready() waits for it). */
static int gateway_pick(struct run *r)
{
	struct wd_gwconf c = r->gwc;
	struct wd_err err;
	const char *daemon = r->o.gateway;
	int ret;

	if (daemon) {
		/* --gateway: no "stats" round trip here, register is the first request and
		 * says the same when nobody answers */
	} else if (!gw_simple(r->gwc.control_path, "stats", NULL)) {
		daemon = r->gwc.control_path;
	}
	if (daemon) {
		snprintf(r->gw.socket, sizeof(r->gw.socket), "%s", daemon);
		r->gw_daemon = true;
		note(r, "gateway: the daemon on %s", daemon);
		return 0;
	}
	/* embedded: listen only on this run's host-side addresses, so embedded gateways of
	 * concurrent runs share the ports without clashing */
	snprintf(c.listen_v4, sizeof(c.listen_v4), "%s", r->host4);
	snprintf(c.listen_v6, sizeof(c.listen_v6), "%s", r->host6);
	wd_err_clear(&err);
	ret = run_gw_spawn(&r->gw, r->state_dir, &c, audit_log_path(r->log), &err);
	if (ret)
		return fail(r, "gateway", "check the gateway's message above; `warden doctor`",
			    "embedded gateway: %s", err.msg);
	r->rec.gw_pid = r->gw.pid;
	r->rec.gw_start = run_proc_start(r->gw.pid);
	save_state(r);
	return 0;
}

/* An embedded gateway answers (a daemon was checked by gateway_pick()). */
static int gateway_ready(struct run *r)
{
	struct wd_err err;
	int ret;

	if (r->gw_daemon)
		return 0;
	wd_err_clear(&err);
	ret = run_gw_wait(&r->gw, &err);
	if (ret)
		return fail(r, "gateway", "check the gateway's message above; `warden doctor`",
			    "embedded gateway: %s", err.msg);
	return 0;
}

static int gateway_register(struct run *r)
{
	const char *slash = strrchr(r->policy_abs, '/');
	json_t *req = json_pack("{s:s, s:s, s:s, s:s, s:s%}", "op", "register", "id", r->id, "if",
				r->net.ifname, "policy_name", slash ? slash + 1 : r->policy_abs,
				"policy", r->policy_text, r->policy_len);
	char why[512];
	int ret;

	if (!req)
		return fail(r, "gateway", NULL, "out of memory");
	if (r->host4[0]) {
		json_object_set_new(req, "host_v4", json_string(r->host4));
		json_object_set_new(req, "sandbox_v4", json_string(r->rec.sbx4));
	}
	if (r->host6[0]) {
		json_object_set_new(req, "host_v6", json_string(r->host6));
		json_object_set_new(req, "sandbox_v6", json_string(r->rec.sbx6));
	}
	/* record first: a crash between the two still gets the run unregistered */
	snprintf(r->rec.gw_socket, sizeof(r->rec.gw_socket), "%s", r->gw.socket);
	save_state(r);
	ret = gw_call(r->gw.socket, req, NULL, why, sizeof(why));
	json_decref(req);
	if (ret && r->o.gateway && ret != -EPERM && ret != -EBADMSG)
		return fail(r, "gateway",
			    "start warden-gateway, or drop --gateway to use an embedded one",
			    "no gateway answers on %s (%s)", r->o.gateway, strerror(-ret));
	if (ret)
		return fail(r, "gateway", "see the gateway's reason; pools.runs_* must match",
			    "registering run %s: %s", r->id, why);
	r->registered = true;
	return 0;
}

/* The gateway's counters for this run (denied, bytes); -1 when unknown. A registered run the
 * gateway does not answer for (it died, or a daemon restarted and forgot it) is recorded as
 * r->gw_lost: run.exit then says its counts are incomplete. */
static void gateway_counters(struct run *r, int64_t *denied, int64_t *up, int64_t *down)
{
	json_t *ans = NULL, *runs, *it;
	size_t i;
	int ret;

	*denied = *up = *down = -1;
	if (!r->registered)
		return;
	ret = gw_simple(r->gw.socket, "list", &ans);
	if (ret) {
		if (!r->gw_lost)
			snprintf(r->gw_lost_why, sizeof(r->gw_lost_why),
				 "the gateway on %s no longer answers (%s): it died during the "
				 "run, so connections open then have no net.close and the "
				 "denial and byte counts are incomplete",
				 r->gw.socket, strerror(-ret));
		r->gw_lost = true;
		return;
	}
	runs = json_object_get(ans, "runs");
	json_array_foreach(runs, i, it)
	{
		if (!json_is_string(json_object_get(it, "id")) ||
		    strcmp(json_string_value(json_object_get(it, "id")), r->id))
			continue;
		*denied = json_integer_value(json_object_get(it, "denied"));
		*up = json_integer_value(json_object_get(it, "bytes_up"));
		*down = json_integer_value(json_object_get(it, "bytes_down"));
	}
	json_decref(ans);
	if (*denied < 0 && !r->gw_lost) {
		snprintf(r->gw_lost_why, sizeof(r->gw_lost_why),
			 "the gateway on %s no longer lists the run (it restarted during it?): "
			 "the denial and byte counts are incomplete",
			 r->gw.socket);
		r->gw_lost = true;
	}
}

static bool gateway_lists(struct run *r)
{
	json_t *ans = NULL, *runs, *it;
	bool found = false;
	size_t i;

	if (gw_simple(r->gw.socket, "list", &ans))
		return false;
	runs = json_object_get(ans, "runs");
	json_array_foreach(runs, i, it)
	{
		const char *id = json_string_value(json_object_get(it, "id"));

		if (id && !strcmp(id, r->id))
			found = true;
	}
	json_decref(ans);
	return found;
}

/* ---------------------------------------------------------------- the liveness probe */

struct probe {
	int netns_fd;
	int family;
	int fd; /* out */
	int err;
};

/* A thread enters the run's netns and opens a UDP socket there (sockets keep their netns). */
static void *probe_thread(void *arg)
{
	struct probe *p = arg;

	if (setns(p->netns_fd, CLONE_NEWNET) < 0) {
		p->err = -errno;
		return NULL;
	}
	p->fd = socket(p->family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (p->fd < 0)
		p->err = -errno;
	return NULL;
}

/* One DNS query from inside the run to its host-side address, port 53. Return: 0 answered. */
static int dns_probe(struct run *r, char *why, size_t wsize)
{
	/* HTTPS (type 65): the gateway answers it empty for any name without asking upstream
	 * and without counting a denial; the audit shows it as the run's liveness check */
	static const char qname[] = "\x0f"
				    "warden-liveness"
				    "\x05"
				    "check"
				    "\x07"
				    "invalid";
	struct probe p = {r->net.netns_fd, r->host4[0] ? AF_INET : AF_INET6, -1, 0};
	struct sockaddr_storage ss = {0};
	uint8_t q[512], ans[1500];
	socklen_t sl;
	pthread_t t;
	uint16_t id;
	size_t qlen = 0;
	int ret = -ETIMEDOUT;

	if (pthread_create(&t, NULL, probe_thread, &p) || pthread_join(t, NULL)) {
		snprintf(why, wsize, "cannot start the probe thread");
		return -EAGAIN;
	}
	if (p.err) {
		snprintf(why, wsize, "socket in the run's namespace: %s", strerror(-p.err));
		return p.err;
	}
	if (getrandom(&id, sizeof(id), 0) != sizeof(id))
		id = (uint16_t)getpid();
	q[0] = (uint8_t)(id >> 8);
	q[1] = (uint8_t)id;
	q[2] = 0x01; /* RD */
	q[3] = 0;
	memset(q + 4, 0, 8);
	q[5] = 1; /* QDCOUNT */
	qlen = 12;
	memcpy(q + qlen, qname, sizeof(qname)); /* includes the root label's 0 */
	qlen += sizeof(qname);
	q[qlen++] = 0;
	q[qlen++] = 65; /* HTTPS */
	q[qlen++] = 0;
	q[qlen++] = 1; /* IN */
	if (p.family == AF_INET) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(53);
		inet_pton(AF_INET, r->host4, &s4->sin_addr);
		sl = sizeof(*s4);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(53);
		inet_pton(AF_INET6, r->host6, &s6->sin6_addr);
		sl = sizeof(*s6);
	}
	for (int attempt = 0; attempt < 4 && ret; attempt++) {
		struct pollfd pfd = {p.fd, POLLIN, 0};

		if (sendto(p.fd, q, qlen, 0, (struct sockaddr *)&ss, sl) < 0) {
			ret = -errno;
			snprintf(why, wsize, "sending a DNS query to port 53: %s", strerror(errno));
			continue;
		}
		while (poll(&pfd, 1, 250 << attempt) == 1) {
			ssize_t n = recv(p.fd, ans, sizeof(ans), 0);

			if (n >= 12 && ans[0] == q[0] && ans[1] == q[1] && (ans[2] & 0x80)) {
				ret = 0;
				break;
			}
			if (n < 0) {
				snprintf(why, wsize, "DNS probe: %s", strerror(errno));
				break;
			}
		}
		if (ret == -ETIMEDOUT)
			snprintf(why, wsize, "no DNS answer from inside the run (port 53 of %s)",
				 p.family == AF_INET ? r->host4 : r->host6);
	}
	close(p.fd);
	return ret;
}

/* ---------------------------------------------------------------- the network */

static int nft_add(struct run *r)
{
	struct wd_err err;
	int ret, lock = -1;

	wd_err_clear(&err);
	ret = fw_conn_open(&r->fw, &err);
	if (ret)
		return fail(r, "network", "run as root (CAP_NET_ADMIN); `warden doctor`",
			    "nftables: %s", err.msg);
	ret = fw_conn_run_add(r->fw, &r->fcfg, &r->fr, &err);
	if (ret == -ENOENT) {
		/* the table is missing: install it, under a lock so two launchers do not
		 * replace each other's fresh table (replacing drops every run's elements) */
		wd_mkdir_p("/run/warden", 0755);
		lock = open(NFT_LOCK, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (lock >= 0)
			flock(lock, LOCK_EX);
		wd_err_clear(&err);
		ret = fw_conn_run_add(r->fw, &r->fcfg, &r->fr, &err);
		if (ret == -ENOENT) {
			wd_err_clear(&err);
			ret = fw_install(&r->fcfg, &err);
			if (!ret)
				ret = fw_conn_run_add(r->fw, &r->fcfg, &r->fr, &err);
		}
		if (lock >= 0)
			close(lock);
	}
	if (ret)
		return fail(r, "network", "`warden nft audit` and `warden doctor`",
			    "adding the run's nft elements: %s",
			    err.msg[0] ? err.msg : strerror(-ret));
	r->fw_added = true;
	return 0;
}

/* The network is known: the addresses as text, the state record, the nft facts. */
static int network_known(struct run *r)
{
	inet_ntop(AF_INET, &r->net.addr.host4, r->host4, sizeof(r->host4));
	inet_ntop(AF_INET6, &r->net.addr.host6, r->host6, sizeof(r->host6));
	inet_ntop(AF_INET, &r->net.addr.sbx4, r->rec.sbx4, sizeof(r->rec.sbx4));
	inet_ntop(AF_INET6, &r->net.addr.sbx6, r->rec.sbx6, sizeof(r->rec.sbx6));
	snprintf(r->rec.ifname, sizeof(r->rec.ifname), "%s", r->net.ifname);
	memset(&r->fr, 0, sizeof(r->fr));
	snprintf(r->fr.ifname, sizeof(r->fr.ifname), "%s", r->net.ifname);
	r->fr.has_v4 = r->rec.sbx4[0] != '\0';
	r->fr.sbx4 = r->net.addr.sbx4;
	r->fr.has_v6 = r->rec.sbx6[0] != '\0';
	r->fr.sbx6 = r->net.addr.sbx6;
	/* the run reaches the host only at these: the gateway's ports there */
	snprintf(r->rec.host4, sizeof(r->rec.host4), "%s", r->host4);
	snprintf(r->rec.host6, sizeof(r->rec.host6), "%s", r->host6);
	r->fr.has_gw4 = r->fr.has_v4;
	r->fr.gw4 = r->net.addr.host4;
	r->fr.has_gw6 = r->fr.has_v6;
	r->fr.gw6 = r->net.addr.host6;
	return save_state(r);
}

/* run_pool_lease()'s callback: the leased network goes into the run's state before it
 * leaves the pool, so that a crash from here on is cleaned up like any dead run's. */
static int record_leased(void *arg, const struct netns_run *net)
{
	struct run *r = arg;

	(void)net; /* it is r->net */
	return network_known(r);
}

static int network_up(struct run *r)
{
	struct wd_err err;
	int ret;

	if (r->pool_size) {
		wd_err_clear(&err);
		ret = run_pool_lease(RUN_POOL_DIR, &r->ncfg, &r->fcfg, record_leased, r, &r->net,
				     &err);
		if (!ret) {
			/* its nft elements were added when it was made */
			r->pooled = true;
			r->fw_added = true;
			note(r, "network: %s, ready-made (from the pool)", r->net.ifname);
			return 0;
		}
		if (ret != -ENOENT)
			note(r, "network: a pooled network was refused (%s); building one",
			     err.msg[0] ? err.msg : strerror(-ret));
	}
	wd_err_clear(&err);
	ret = netns_run_create(&r->ncfg, &r->net, &err);
	if (ret)
		return fail(r, "network", "run as root; `warden doctor` checks namespaces and veth",
			    "%s", err.msg[0] ? err.msg : strerror(-ret));
	network_known(r);
	note(r, "network: %s, made for this run", r->net.ifname);
	return nft_add(r);
}

/* A pooled network failed the end-to-end check: its elements may be gone (the table was
 * replaced since it was made). Add them again (adding an existing element is no error);
 * the caller checks once more. Return: 0, or 125 (printed). */
static int refresh_pooled(struct run *r)
{
	note(r, "network: the pooled %s failed the check; adding its nft elements again",
	     r->net.ifname);
	r->pooled = false; /* once */
	return nft_add(r);
}

/* ---------------------------------------------------------------- teardown */

static void unregister(struct run *r)
{
	json_t *req;
	char why[256];

	if (!r->registered)
		return;
	req = json_pack("{s:s, s:s}", "op", "unregister", "id", r->id);
	if (req && gw_call(r->gw.socket, req, NULL, why, sizeof(why)))
		fprintf(stderr, "warden run: teardown: unregister: %s\n", why);
	json_decref(req);
	r->registered = false;
}

static void teardown(struct run *r)
{
	struct wd_err err;

	unregister(r);
	/* the embedded gateway stops while the rest is torn down; reaped below */
	if (r->gw.embedded && r->gw.pid > 0)
		kill(r->gw.pid, SIGTERM);
	stamp("t.unreg");
	limits_destroy(&r->lim);
	stamp("t.cgroups");
	if (r->fw_added) {
		wd_err_clear(&err);
		if (!r->fw && fw_conn_open(&r->fw, &err))
			fprintf(stderr, "warden run: teardown: nft: %s\n", err.msg);
		else if (fw_conn_run_del(r->fw, &r->fcfg, &r->fr, &err))
			fprintf(stderr, "warden run: teardown: nft: %s\n", err.msg);
		r->fw_added = false;
	}
	if (r->net.live) {
		wd_err_clear(&err);
		if (netns_run_destroy(&r->ncfg, &r->net, &err))
			fprintf(stderr, "warden run: teardown: network: %s\n", err.msg);
	}
	stamp("t.net");
	run_gw_stop(&r->gw);
	stamp("t.gateway");
	fw_conn_close(r->fw);
	r->fw = NULL;
	stamp("t.nftclose");
	if (r->rec_saved) {
		char p[PATH_MAX + 16];
		static const char *const files[] = {"state", "state.tmp", "gateway.yaml",
						    "gateway.log", "gw.sock"};

		for (size_t i = 0; i < WD_ARRAY_SIZE(files); i++) {
			snprintf(p, sizeof(p), "%s/%s", r->state_dir, files[i]);
			unlink(p);
		}
		rmdir(r->state_dir);
		r->rec_saved = false;
	}
}

static void audit_exit(struct run *r, int status, int sig, int64_t denied, int64_t up, int64_t down,
		       unsigned flags)
{
	struct audit_event ev = {0};

	if (!r->started)
		return;
	ev.type = AUDIT_TYPE_RUN;
	ev.action = "run.exit";
	ev.resource = r->exe;
	ev.allowed = status != RUN_EXIT_WARDEN || !r->fail_reason[0];
	ev.reason = r->fail_reason[0] ? r->fail_reason : NULL;
	ev.has = AUDIT_HAS_EXIT | AUDIT_HAS_DURATION;
	ev.exit = status;
	ev.duration_ms = (int64_t)((wd_mono_ns() - r->t0) / 1000000);
	if (sig) {
		ev.has |= AUDIT_HAS_SIGNAL;
		ev.signal = sig;
	}
	if (denied >= 0) {
		ev.has |= AUDIT_HAS_DENIALS;
		ev.denials = denied;
	}
	if (up >= 0) {
		ev.has |= AUDIT_HAS_BYTES_UP | AUDIT_HAS_BYTES_DOWN;
		ev.bytes_up = up;
		ev.bytes_down = down;
	}
	if (r->gw_lost) {
		ev.has |= AUDIT_HAS_COUNTS_INCOMPLETE;
		ev.counts_incomplete = true;
		if (!ev.reason)
			ev.reason = r->gw_lost_why;
	}
	write_event(r, &ev, flags);
}

/* fdatasync the audit log (run.exit was written without it), through the descriptor it was
 * written with: opening the path again could reach another file (renamed, replaced by a
 * FIFO that blocks the open) */
static void audit_sync(const struct run *r)
{
	if (r->log)
		audit_log_sync(r->log);
}

/* ---------------------------------------------------------------- teardown after the exit */

/* In the detached child: stdio on /dev/null, and every fd it inherited from the caller of
 * `warden run` closed (those are the ones without FD_CLOEXEC: ours all have it), so that
 * nobody waits for it; signals back to their defaults. */
static void detach_fds(void)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	sigset_t none;
	DIR *d;

	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		close(null);
	}
	d = opendir("/proc/self/fd");
	if (d) {
		struct dirent *de;

		while ((de = readdir(d))) {
			int fd = atoi(de->d_name), fl;

			if (de->d_name[0] == '.' || fd <= STDERR_FILENO || fd == dirfd(d))
				continue;
			fl = fcntl(fd, F_GETFD);
			if (fl >= 0 && !(fl & FD_CLOEXEC))
				close(fd);
		}
		closedir(d);
	}
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
}

/*
 * Hand the teardown to a detached child so that the caller gets the program's status now.
 * Right after the fork the launcher makes the child the owner of the run's state record and
 * of its address slot (so a `warden gc` meanwhile sees a live run, and one after the child
 * died reclaims everything), tells the child so, and returns. The child (setsid, stdio on
 * /dev/null, no fd of the caller) waits for that word, or for the launcher's end, before it
 * touches anything. If the records cannot be written the child is told to exit and the
 * launcher tears down itself. Return: true when the child took over.
 */
static bool teardown_detached(struct run *r)
{
	int go[2];
	pid_t pid;
	char c = 0;

	if (pipe2(go, O_CLOEXEC) < 0)
		return false;
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		close(go[0]);
		close(go[1]);
		return false;
	}
	if (pid == 0) {
		struct wd_err err;
		ssize_t n;

		close(go[1]);
		setsid();
		prctl(PR_SET_NAME, "warden-teardown", 0, 0, 0);
		detach_fds();
		do
			n = read(go[0], &c, 1);
		while (n < 0 && errno == EINTR);
		if (n == 1 && c == 'x')
			_exit(0); /* the launcher does it itself */
		close(go[0]);
		r->rec.pid = getpid(); /* what the launcher recorded */
		/* run.exit durable first: a teardown that hangs or dies must not keep it
		 * from the disk (the teardown writes no event of its own) */
		audit_sync(r);
		teardown(r);
		wd_err_clear(&err);
		if (r->pool_size)
			run_pool_fill(RUN_POOL_DIR, &r->ncfg, &r->fcfg, r->pool_size, NULL, &err);
		fw_conn_close(r->fw);
		_exit(0);
	}
	close(go[0]);
	r->rec.pid = pid;
	r->rec.start = run_proc_start(pid);
	r->rec.gw_pid = 0;
	r->rec.gw_start = 0;
	if (!r->rec.start || save_state(r) ||
	    (r->net.live && netns_run_set_owner(&r->ncfg, &r->net, pid))) {
		int st;

		if (write(go[1], "x", 1) != 1)
			kill(pid, SIGKILL);
		close(go[1]);
		waitpid(pid, &st, 0);
		r->rec.pid = getpid();
		r->rec.start = run_proc_start(r->rec.pid);
		save_state(r);
		if (r->net.live)
			netns_run_set_owner(&r->ncfg, &r->net, getpid());
		return false;
	}
	if (write(go[1], "k", 1) != 1) {
		/* cannot happen with the read end open; the child proceeds at our exit anyway */
	}
	close(go[1]);
	/* the child holds the run now: nothing of it is ours to undo. Our copy of the nft
	 * socket goes at once: the child's keeps it open, so this close waits for nothing */
	fw_conn_close(r->fw);
	r->fw = NULL;
	r->registered = false;
	r->fw_added = false;
	r->net.live = false;
	memset(&r->lim, 0, sizeof(r->lim));
	r->rec_saved = false;
	return true;
}

/* ---------------------------------------------------------------- the child */

static int memfd_text(const char *name, const struct wd_buf *b)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (wd_write_all(fd, b->data ? b->data : "", b->len) || lseek(fd, 0, SEEK_SET) < 0) {
		close(fd);
		return -EIO;
	}
	return fd;
}

/* Where the child failed, for the parent's message (struct child_report.stage). */
enum child_stage {
	CHILD_NETNS,
	CHILD_CGROUP,
	CHILD_USER,
	CHILD_KEYRING,
	CHILD_GRANT,	    /* opening grant @index without following links */
	CHILD_GRANT_ACCESS, /* grant @index is not readable/writable by the program's user */
	CHILD_ARGS,
	CHILD_FDS,
	CHILD_LIMIT,
	CHILD_EXEC,
};

/* What the child writes on its error pipe when it cannot exec bubblewrap. */
struct child_report {
	int err;
	int stage;
	int index;
};

/* What the child becomes bubblewrap with (prepared by the parent before the fork). */
struct child_plan {
	struct bwrap_spec spec;
	struct bwrap_grant *grants;
	size_t ngrants;
	int errfd;
	int gofd;
};

static _Noreturn void child_fail(int errfd, int stage, int index, int err)
{
	struct child_report rep = {err ? err : EIO, stage, index};

	if (write(errfd, &rep, sizeof(rep)) < 0)
		_exit(RUN_EXIT_WARDEN);
	_exit(RUN_EXIT_WARDEN);
}

/* Open grant @i as the program's user, without following links (the validator's real path
 * has none, so a link planted since is refused), and check that user may use it. */
static int child_open_grant(const struct bwrap_grant *g, int *ret_fd, int *ret_stage)
{
	struct stat st;
	int fd = wd_open_nofollow(g->path, O_PATH), mode;

	*ret_stage = CHILD_GRANT;
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return -errno;
	}
	mode = R_OK | (S_ISDIR(st.st_mode) ? X_OK : 0) | (g->rw ? W_OK : 0);
	if (faccessat(fd, "", mode, AT_EMPTY_PATH | AT_EACCESS) < 0) {
		int e = errno;

		close(fd);
		*ret_stage = CHILD_GRANT_ACCESS;
		return -e;
	}
	*ret_fd = fd;
	return 0;
}

/*
 * Runs in the child after fork and never returns. In named stages: the run's netns and
 * cgroups; the program's user (never root) and a fresh session keyring of its own; the
 * grants opened as that user without following links; bwrap's options written to a memfd
 * (--args), so no --setenv value is in a command line; every descriptor but those bwrap
 * needs closed (whatever the caller of `warden run` left open stays out); the disk limit;
 * then, on the parent's word, bwrap with an empty environment. A failure is reported on the
 * error pipe as a struct child_report.
 */
static _Noreturn void child_exec(struct run *r, struct child_plan *c)
{
	struct bwrap_argv av = {0};
	struct wd_buf text = WD_BUF_INIT;
	char **exec_argv, num[16];
	char *const no_env[] = {NULL};
	int *gfd, *keep, nkeep = 0, argsfd, e;
	size_t nexec = 0;
	sigset_t none;
	char go;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	if (setns(r->net.netns_fd, CLONE_NEWNET) < 0)
		child_fail(c->errfd, CHILD_NETNS, 0, errno);
	e = limits_join(&r->lim);
	if (e)
		child_fail(c->errfd, CHILD_CGROUP, 0, -e);
	if (setgroups((size_t)r->ngroups, r->groups) < 0 || setresgid(r->gid, r->gid, r->gid) < 0 ||
	    setresuid(r->uid, r->uid, r->uid) < 0)
		child_fail(c->errfd, CHILD_USER, 0, errno);
	/* a session keyring of the run's own: the caller's keys stay the caller's */
	if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0 && errno != ENOSYS)
		child_fail(c->errfd, CHILD_KEYRING, 0, errno);
	/* after the uid change, which clears it: bwrap dies with us */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		child_fail(c->errfd, CHILD_USER, 0, errno);
	if (getppid() == 1)
		_exit(RUN_EXIT_WARDEN);
	gfd = calloc(c->ngrants + 1, sizeof(*gfd));
	keep = calloc(c->ngrants + BWRAP_NDATA + 8, sizeof(*keep));
	if (!gfd || !keep)
		child_fail(c->errfd, CHILD_ARGS, 0, ENOMEM);
	for (size_t i = 0; i < c->ngrants; i++) {
		int stage;

		e = child_open_grant(&c->grants[i], &gfd[i], &stage);
		if (e)
			child_fail(c->errfd, stage, (int)i, -e);
		keep[nkeep++] = gfd[i];
	}
	c->spec.grants = c->grants;
	c->spec.ngrants = c->ngrants;
	c->spec.grant_fd = gfd;
	e = bwrap_build(r->bwrap, &c->spec, &av);
	if (!e)
		e = bwrap_args_text(&av, &text);
	argsfd = e ? e : memfd_text("bwrap-args", &text);
	if (argsfd < 0)
		child_fail(c->errfd, CHILD_ARGS, 0, -argsfd);
	if (getenv("WARDEN_DEBUG_BWRAP")) {
		for (size_t i = 0; i < av.n; i++)
			fprintf(stderr, "%s%s", i ? " " : "", av.v[i]);
		fputc('\n', stderr);
	}
	keep[nkeep++] = argsfd;
	keep[nkeep++] = c->spec.info_fd;
	keep[nkeep++] = c->spec.seccomp_fd;
	for (int i = 0; i < BWRAP_NDATA; i++)
		keep[nkeep++] = c->spec.data_fd[i];
	/* bwrap inherits these; the error and go pipes are CLOEXEC and go at exec */
	for (int i = 0; i < nkeep; i++)
		if (keep[i] >= 0 && fcntl(keep[i], F_SETFD, 0) < 0)
			child_fail(c->errfd, CHILD_FDS, 0, errno);
	keep[nkeep++] = c->errfd;
	keep[nkeep++] = c->gofd;
	e = wd_close_all_except(keep, (size_t)nkeep);
	if (e)
		child_fail(c->errfd, CHILD_FDS, 0, -e);
	if (r->pol->limits.disk_mb) {
		struct rlimit rl;

		rl.rlim_cur = rl.rlim_max = (rlim_t)(r->pol->limits.disk_mb << 20);
		if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
			child_fail(c->errfd, CHILD_LIMIT, 0, errno);
	}
	/* bwrap --args FD -- COMMAND...: the options come from the memfd */
	exec_argv = calloc(av.n + 4, sizeof(*exec_argv));
	if (!exec_argv)
		child_fail(c->errfd, CHILD_ARGS, 0, ENOMEM);
	snprintf(num, sizeof(num), "%d", argsfd);
	exec_argv[nexec++] = av.v[0];
	exec_argv[nexec++] = "--args";
	exec_argv[nexec++] = num;
	for (size_t i = av.opts_end; i < av.n; i++)
		exec_argv[nexec++] = av.v[i];
	exec_argv[nexec] = NULL;
	/* wait for the parent's checks; EOF means "do not run" */
	while ((e = (int)read(c->gofd, &go, 1)) < 0 && errno == EINTR)
		;
	if (e != 1)
		_exit(RUN_EXIT_WARDEN);
	/* bwrap's own process (pid 1 of the sandbox) keeps no variable of the caller's */
	execve(exec_argv[0], exec_argv, no_env);
	child_fail(c->errfd, CHILD_EXEC, 0, errno);
}

/* Children of @pid (all its threads'), up to @max. */
static size_t children_of(pid_t pid, pid_t *out, size_t max)
{
	char p[96], buf[4096];
	size_t n = 0;
	ssize_t len;
	int fd;

	snprintf(p, sizeof(p), "/proc/%d/task/%d/children", pid, pid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return 0;
	buf[len] = '\0';
	for (char *s = buf, *e; *s && n < max; s = e) {
		long c = strtol(s, &e, 10);

		if (e == s)
			break;
		out[n++] = (pid_t)c;
	}
	return n;
}

/* @sig to every descendant of @pid (not @pid itself), depth first. */
static void signal_tree(pid_t pid, int sig, int depth)
{
	pid_t kids[256];
	size_t n = children_of(pid, kids, WD_ARRAY_SIZE(kids));

	if (depth > 32)
		return;
	for (size_t i = 0; i < n; i++) {
		kill(kids[i], sig);
		signal_tree(kids[i], sig, depth + 1);
	}
}

/* The program: the first child of bwrap's pid-1 reaper inside the pid namespace. */
static pid_t program_pid(const struct run *r)
{
	pid_t kids[4];

	if (r->ns_init > 0 && children_of(r->ns_init, kids, 4) > 0)
		return kids[0];
	return 0;
}

/* bwrap's --info-fd: a JSON object with "child-pid", written in pieces, then closed.
 * Return: true when the fd is done with (EOF or error). */
static bool read_info(struct run *r, int fd)
{
	ssize_t n = read(fd, r->info + r->info_len, sizeof(r->info) - 1 - r->info_len);
	json_t *j;

	if (n < 0 && errno == EINTR)
		return false;
	if (n > 0) {
		r->info_len += (size_t)n;
		r->info[r->info_len] = '\0';
	}
	j = json_loads(r->info, JSON_DISABLE_EOF_CHECK, NULL);
	if (j && json_is_integer(json_object_get(j, "child-pid")))
		r->ns_init = (pid_t)json_integer_value(json_object_get(j, "child-pid"));
	json_decref(j);
	return n <= 0 || r->ns_init > 0 || r->info_len + 1 >= sizeof(r->info);
}

static void arm(int tfd, uint64_t ms, uint64_t interval_ms)
{
	struct itimerspec it = {
	    {(time_t)(interval_ms / 1000), (long)(interval_ms % 1000) * 1000000L},
	    {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L}};

	if (!ms && !interval_ms)
		it.it_value.tv_nsec = 0;
	timerfd_settime(tfd, 0, &it, NULL);
}

/* The embedded gateway ended during the run (wait status @st): what run.exit will say. */
static void gateway_died(struct run *r, int st)
{
	char how[64];

	if (WIFSIGNALED(st))
		snprintf(how, sizeof(how), "killed by signal %d", WTERMSIG(st));
	else
		snprintf(how, sizeof(how), "exit status %d", WEXITSTATUS(st));
	snprintf(r->gw_lost_why, sizeof(r->gw_lost_why),
		 "the embedded gateway (pid %d) died during the run (%s): connections open "
		 "then have no net.close, and the denial and byte counts are incomplete",
		 (int)r->gw.pid, how);
	r->gw_lost = true;
}

/* The wait loop. Return: the wait status of bwrap. */
static int wait_loop(struct run *r, int info_fd, bool *timed_out, bool *rss_hit,
		     uint64_t *rss_peak_kb)
{
	enum { FD_SIG, FD_INFO, FD_TIMEOUT, FD_KILL, FD_SAMPLE, FD_N };
	struct pollfd pfd[FD_N];
	unsigned timeout_s = r->o.timeout_s ? r->o.timeout_s : r->pol->limits.timeout_s;
	uint64_t mem_kb = r->pol->limits.memory_mb * 1024;
	bool tty = isatty(STDIN_FILENO);
	int status = 0;

	for (int i = 0; i < FD_N; i++)
		pfd[i] = (struct pollfd){-1, POLLIN, 0};
	pfd[FD_SIG].fd = r->sigfd;
	pfd[FD_INFO].fd = info_fd;
	pfd[FD_TIMEOUT].fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	pfd[FD_KILL].fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (r->lkind == LIMITS_SAMPLING && mem_kb) {
		pfd[FD_SAMPLE].fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
		arm(pfd[FD_SAMPLE].fd, RSS_SAMPLE_MS, RSS_SAMPLE_MS);
	}
	if (timeout_s)
		arm(pfd[FD_TIMEOUT].fd, (uint64_t)timeout_s * 1000, 0);
	for (;;) {
		if (poll(pfd, FD_N, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[FD_INFO].revents && read_info(r, info_fd))
			pfd[FD_INFO].fd = -1;
		if (pfd[FD_TIMEOUT].revents & POLLIN) {
			uint64_t x;

			if (read(pfd[FD_TIMEOUT].fd, &x, sizeof(x)) > 0 && !*timed_out) {
				*timed_out = true;
				signal_tree(r->ns_init, SIGTERM, 0);
				arm(pfd[FD_KILL].fd, RUN_KILL_GRACE_MS, 0);
			}
		}
		if (pfd[FD_KILL].revents & POLLIN) {
			uint64_t x;

			if (read(pfd[FD_KILL].fd, &x, sizeof(x)) > 0) {
				if (r->ns_init > 0)
					kill(r->ns_init, SIGKILL);
				limits_signal(&r->lim, SIGKILL);
				kill(r->child, SIGKILL);
			}
		}
		if (pfd[FD_SAMPLE].fd >= 0 && (pfd[FD_SAMPLE].revents & POLLIN)) {
			uint64_t x, kb;

			if (read(pfd[FD_SAMPLE].fd, &x, sizeof(x)) > 0) {
				kb = limits_rss_kb(r->child);
				if (kb > *rss_peak_kb)
					*rss_peak_kb = kb;
				if (kb > mem_kb && !*rss_hit) {
					*rss_hit = true;
					if (r->ns_init > 0)
						kill(r->ns_init, SIGKILL);
					kill(r->child, SIGKILL);
				}
			}
		}
		if (pfd[FD_SIG].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(r->sigfd, &si, sizeof(si)) == sizeof(si)) {
				pid_t prog;

				if (si.ssi_signo == SIGCHLD) {
					int gst;

					if (r->gw.pid > 0 &&
					    waitpid(r->gw.pid, &gst, WNOHANG) == r->gw.pid) {
						fprintf(stderr,
							"warden run: the embedded gateway "
							"exited; the run's traffic is dropped\n");
						gateway_died(r, gst);
						r->gw.pid = 0;
					}
					if (waitpid(r->child, &status, WNOHANG) == r->child)
						goto done;
					continue;
				}
				/* a terminal's ^C already reached the program (same group) */
				if (tty && si.ssi_code == SI_KERNEL)
					continue;
				prog = program_pid(r);
				kill(prog > 0 ? prog : r->child, (int)si.ssi_signo);
			}
		}
	}
done:
	for (int i = FD_TIMEOUT; i < FD_N; i++)
		if (pfd[i].fd >= 0)
			close(pfd[i].fd);
	return status;
}

/* ---------------------------------------------------------------- the run */

static int prereq(struct run *r)
{
	struct stat st;

	if (geteuid() != 0)
		return fail(r, "prerequisites", "run it as root: sudo warden run ...",
			    "building the run's network needs root (CAP_NET_ADMIN, CAP_SYS_ADMIN)");
	r->bwrap = getenv("WARDEN_BWRAP");
	if (!r->bwrap || !*r->bwrap)
		r->bwrap = BWRAP_DEFAULT;
	if (stat(r->bwrap, &st) < 0 || !S_ISREG(st.st_mode) || access(r->bwrap, X_OK))
		return fail(r, "prerequisites", "apt-get install bubblewrap",
			    "bubblewrap not found at %s", r->bwrap);
	r->lkind = limits_probe();
	return 0;
}

static int make_id(struct run *r)
{
	uint8_t b[6];

	if (getrandom(b, sizeof(b), 0) != sizeof(b))
		return -errno;
	snprintf(r->id, sizeof(r->id), "%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3], b[4],
		 b[5]);
	return 0;
}

static int setup_signals(struct run *r)
{
	sigset_t set;

	/* a signal ignored at entry (a background job's SIGINT) would never reach signalfd */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	r->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	signal(SIGPIPE, SIG_IGN);
	return r->sigfd < 0 ? -errno : 0;
}

/* A terminating signal that arrived during setup: 0 or the signal. */
static int pending_stop(struct run *r)
{
	struct signalfd_siginfo si;

	while (read(r->sigfd, &si, sizeof(si)) == sizeof(si))
		if (si.ssi_signo != SIGCHLD)
			return (int)si.ssi_signo;
	return 0;
}

/* The folder the program starts in: the current one when a grant makes it visible. */
static const char *inner_cwd(const struct run *r, char *buf, size_t size)
{
	if (!getcwd(buf, size))
		return "/";
	for (size_t i = 0; i < r->pol->nread; i++)
		if (r->pol->read[i].real && run_path_within(buf, r->pol->read[i].real))
			return buf;
	for (size_t i = 0; i < r->pol->nwrite; i++)
		if (r->pol->write[i].real && run_path_within(buf, r->pol->write[i].real))
			return buf;
	return "/";
}

/*
 * Write grants that do not exist yet are created, owned by the program's user. The folder is
 * made inside its parent opened without following links, and never through a link: a link
 * planted where the grant should be (after the validator looked) fails the run.
 */
static int make_missing(struct run *r)
{
	for (size_t i = 0; i < r->pol->nwrite; i++) {
		const struct policy_grant *g = &r->pol->write[i];
		char parent[PATH_MAX], *name;
		struct stat st;
		int pfd;

		if (!g->missing || !g->real)
			continue;
		snprintf(parent, sizeof(parent), "%s", g->real);
		name = strrchr(parent, '/');
		if (!name || !name[1])
			return fail(r, "filesystem", NULL, "write grant %s: no parent folder",
				    g->real);
		*name++ = '\0';
		pfd = wd_open_nofollow(parent[0] ? parent : "/", O_PATH | O_DIRECTORY);
		if (pfd < 0)
			return fail(r, "filesystem", "write the grant's real path in the policy",
				    "creating write grant %s: its parent %s: %s", g->real,
				    parent[0] ? parent : "/",
				    pfd == -ELOOP ? "a symbolic link is in the way"
						  : strerror(-pfd));
		if (mkdirat(pfd, name, 0755) < 0 && errno != EEXIST) {
			int e = errno;

			close(pfd);
			return fail(r, "filesystem", "create the folder's parent",
				    "creating write grant %s: %s", g->real, strerror(e));
		}
		if (fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
		    fchownat(pfd, name, r->uid, r->gid, AT_SYMLINK_NOFOLLOW) < 0) {
			int e = S_ISLNK(st.st_mode) ? ELOOP : errno ? errno : ENOTDIR;

			close(pfd);
			return fail(r, "filesystem", "write the grant's real path in the policy",
				    "creating write grant %s: %s", g->real,
				    e == ELOOP ? "a symbolic link is in the way" : strerror(e));
		}
		close(pfd);
	}
	return 0;
}

/*
 * Fork the child that becomes bubblewrap, early: it enters the netns and the cgroups (a
 * cgroup v1 attach waits for an RCU grace period, ~10 ms) while the parent starts and checks
 * the gateway, then waits on the "go" pipe. Closing that pipe instead makes it exit.
 */
static int prepare_program(struct run *r)
{
	static const char *const names[BWRAP_NDATA] = {"resolv.conf", "hosts", "passwd", "group",
						       "boot_id"};
	struct child_plan c = {0};
	struct bwrap_spec *s = &c.spec;
	int info[2] = {-1, -1}, errp[2] = {-1, -1}, go[2] = {-1, -1};
	char cwd[PATH_MAX];
	struct wd_err err;
	int ret = 0;

	s->policy = r->pol;
	s->argv = r->argv;
	s->environ = environ;
	s->host4 = r->host4;
	s->host6 = r->host6;
	s->proxy_port = r->gwc.port_proxy;
	s->new_session = !isatty(STDIN_FILENO);
	s->cwd = inner_cwd(r, cwd, sizeof(cwd));
	/* /etc in one mount when nothing of the policy lies under it; else file by file */
	if (run_etc_usable(r->pol) && !run_etc_base(RUN_ETC_DIR))
		s->etc_base = RUN_ETC_DIR;
	for (int i = 0; i < BWRAP_NDATA; i++)
		s->data_fd[i] = -1;
	s->seccomp_fd = -1;
	ret = run_empty_file(RUN_EMPTY_FILE);
	if (ret) {
		ret = fail(r, "exec", "remove what is at " RUN_EMPTY_FILE " and run again",
			   "preparing %s (bound over the /proc files a sandbox does not see): %s",
			   RUN_EMPTY_FILE, strerror(-ret));
		goto out;
	}
	s->empty_file = RUN_EMPTY_FILE;
	ret = bwrap_grants(r->pol, &r->grants, &r->ngrants);
	if (ret) {
		ret = fail(r, "exec", NULL, "listing the grants: %s", strerror(-ret));
		goto out;
	}
	c.grants = r->grants;
	c.ngrants = r->ngrants;
	/* the seccomp filter: without it nothing runs (fail closed) */
	wd_err_clear(&err);
	if (!r->no_seccomp) {
		ret = sandbox_seccomp_fd(sandbox_allow(r->pol), &s->seccomp_fd, NULL, &err);
		if (ret) {
			ret = fail(r, "sandbox", "check `warden doctor`", "%s", err.msg);
			goto out;
		}
	}
	if (pipe2(info, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0 || pipe2(go, O_CLOEXEC) < 0) {
		ret = fail(r, "exec", NULL, "pipe: %s", strerror(errno));
		goto out;
	}
	s->info_fd = info[1];
	for (int i = 0; i < BWRAP_NDATA; i++) {
		struct wd_buf b = WD_BUF_INIT;

		ret = bwrap_file_text(i, s, r->uid, r->gid, &b);
		s->data_fd[i] = ret ? ret : memfd_text(names[i], &b);
		wd_buf_free(&b);
		if (s->data_fd[i] < 0) {
			ret = fail(r, "exec", NULL, "generating %s: %s", names[i],
				   strerror(-s->data_fd[i]));
			goto out;
		}
	}
	r->child = fork();
	if (r->child < 0) {
		r->child = 0;
		ret = fail(r, "exec", NULL, "fork: %s", strerror(errno));
		goto out;
	}
	if (r->child == 0) {
		close(errp[0]);
		close(info[0]);
		close(go[1]);
		c.errfd = errp[1];
		c.gofd = go[0];
		child_exec(r, &c);
	}
	r->info_fd = info[0];
	r->err_fd = errp[0];
	r->go_fd = go[1];
	info[0] = errp[0] = go[1] = -1;
out:
	for (int i = 0; i < BWRAP_NDATA; i++)
		if (s->data_fd[i] >= 0)
			close(s->data_fd[i]);
	wd_closep(&s->seccomp_fd);
	wd_closep(&info[0]);
	wd_closep(&info[1]);
	wd_closep(&errp[0]);
	wd_closep(&errp[1]);
	wd_closep(&go[0]);
	wd_closep(&go[1]);
	return ret;
}

/* The failure the child reported, as `warden run` says it. Return: 125. */
static int child_failed(struct run *r, const struct child_report *rep)
{
	const struct bwrap_grant *g =
	    rep->index >= 0 && (size_t)rep->index < r->ngrants ? &r->grants[rep->index] : NULL;
	const char *who = r->user ? r->user : "the sandbox user";

	switch ((enum child_stage)rep->stage) {
	case CHILD_NETNS:
		return fail(r, "exec", "check `warden doctor`", "entering the run's namespace: %s",
			    strerror(rep->err));
	case CHILD_CGROUP:
		return fail(r, "exec", "check `warden doctor`", "joining the run's cgroups: %s",
			    strerror(rep->err));
	case CHILD_USER:
		return fail(r, "exec", NULL, "becoming uid %u (%s): %s", (unsigned)r->uid, who,
			    strerror(rep->err));
	case CHILD_KEYRING:
		return fail(r, "exec", NULL, "joining a session keyring of the run's own: %s",
			    strerror(rep->err));
	case CHILD_GRANT:
		if (g && rep->err == ELOOP)
			return fail(r, "filesystem", "check what replaced it, then run again",
				    "grant %s: a symbolic link appeared on its path after the "
				    "policy was checked; a grant is never bound through a link",
				    g->path);
		return fail(r, "filesystem", NULL, "opening grant %s as uid %u (%s): %s",
			    g ? g->path : "?", (unsigned)r->uid, who, strerror(rep->err));
	case CHILD_GRANT_ACCESS:
		return fail(r, "filesystem",
			    "make it so for that user (chown, chmod, or an ACL: see docs/run.md), "
			    "or run warden through sudo so the program runs as you",
			    "%s %s is not %s by uid %u (%s), whom the program runs as: %s",
			    g && g->rw ? "write grant" : "read grant", g ? g->path : "?",
			    g && g->rw ? "writable" : "readable", (unsigned)r->uid, who,
			    strerror(rep->err));
	case CHILD_ARGS:
	case CHILD_FDS:
		return fail(r, "exec", NULL, "preparing bwrap's arguments and descriptors: %s",
			    strerror(rep->err));
	case CHILD_LIMIT:
		return fail(r, "limits", NULL, "setting the file size limit: %s",
			    strerror(rep->err));
	case CHILD_EXEC:
		return fail(r, "exec", "check `warden doctor`", "starting %s: %s", r->bwrap,
			    strerror(rep->err));
	}
	return fail(r, "exec", NULL, "the child failed: %s", strerror(rep->err));
}

/* Let the prepared child exec bubblewrap and learn whether it could (its error pipe closes
 * at exec, or carries what went wrong before). Return: 0 or 125. */
static int release_program(struct run *r)
{
	struct child_report rep;
	ssize_t n;

	r->t0 = wd_mono_ns();
	/* a child that failed already has exited: its report waits in the pipe either way */
	(void)!wd_write_all(r->go_fd, "g", 1);
	wd_closep(&r->go_fd);
	do
		n = read(r->err_fd, &rep, sizeof(rep));
	while (n < 0 && errno == EINTR);
	wd_closep(&r->err_fd);
	if (n == 0)
		return 0;
	if (n != sizeof(rep))
		rep = (struct child_report){n < 0 ? errno : EPROTO, CHILD_EXEC, -1};
	waitpid(r->child, &(int){0}, 0);
	r->child = 0;
	return child_failed(r, &rep);
}

/* A prepared child that will not run: it exits when its "go" pipe closes. */
static void cancel_program(struct run *r)
{
	int st;

	wd_closep(&r->go_fd);
	wd_closep(&r->err_fd);
	wd_closep(&r->info_fd);
	if (r->child > 0)
		waitpid(r->child, &st, 0);
	r->child = 0;
}

/* Everything up to a started program. Return: 0 (*@ret_info is bwrap's info pipe), or the
 * exit status of a failure. */
static int setup(struct run *r, int argc, char **argv, int *ret_info)
{
	char why[512];
	int ret, sig;

	stamp("begin");
	/* the gateway config first: its audit log is one the policy must keep away from */
	ret = gw_config(r);
	if (!ret)
		ret = load_policy(r);
	if (!ret)
		ret = resolve_command(r, argc, argv);
	if (!ret)
		ret = prereq(r);
	if (ret)
		return ret;
	if (make_id(r))
		return fail(r, "prerequisites", NULL, "no randomness for the run id");
	{
		unsigned n = 0;
		struct wd_err err;

		wd_err_clear(&err);
		if (run_gc(RUN_STATE_DIR, &n, &err))
			fprintf(stderr, "warden run: gc: %s\n", err.msg);
		else if (n)
			note(r, "removed the leftovers of %u crashed run%s", n, n == 1 ? "" : "s");
	}
	stamp("policy");
	ret = audit_start(r);
	if (ret)
		return ret;
	stamp("audit");
	r->t0 = wd_mono_ns();
	snprintf(r->state_dir, sizeof(r->state_dir), "%s/%s", RUN_STATE_DIR, r->id);
	snprintf(r->rec.id, sizeof(r->rec.id), "%s", r->id);
	r->rec.pid = getpid();
	r->rec.start = run_proc_start(r->rec.pid);
	snprintf(r->rec.table, sizeof(r->rec.table), "%s", r->fcfg.table);
	snprintf(r->rec.if_prefix, sizeof(r->rec.if_prefix), "%s", r->fcfg.if_prefix);
	ret = save_state(r);
	if (ret)
		return fail(r, "state", "check that /run is writable",
			    "cannot record the run in %s: %s", r->state_dir, strerror(-ret));
	stamp("state");
	ret = network_up(r);
	stamp("network");
	if (!ret)
		ret = gateway_pick(r);
	stamp("gw.spawn");
	if (!ret) {
		struct wd_err err;

		wd_err_clear(&err);
		ret = limits_create(&r->lim, r->id, &r->pol->limits, &err);
		if (ret)
			ret = fail(r, "limits", "`warden doctor` checks cgroups", "%s", err.msg);
		else if (r->lim.kind != r->lkind)
			r->lkind = r->lim.kind;
		for (int i = 0; !ret && i < LIMITS_V1_COUNT; i++)
			snprintf(r->rec.cg[i], sizeof(r->rec.cg[i]), "%s", r->lim.dir[i]);
		if (!ret)
			save_state(r);
	}
	if (!ret)
		ret = make_missing(r);
	stamp("limits");
	if (!ret)
		ret = prepare_program(r);
	stamp("fork");
	if (!ret)
		ret = gateway_ready(r);
	stamp("gateway");
	if (!ret)
		ret = gateway_register(r);
	stamp("register");
	if (!ret && !gateway_lists(r))
		ret = fail(r, "check", "see the gateway's log",
			   "the gateway does not list run %s after registering it", r->id);
	if (!ret && dns_probe(r, why, sizeof(why)) &&
	    (!r->pooled || refresh_pooled(r) || dns_probe(r, why, sizeof(why))))
		ret = fail(r, "check", "`warden nft audit`; is the gateway's DNS port reachable?",
			   "enforcement is not live: %s", why);
	stamp("check");
	if (!ret && (sig = pending_stop(r)))
		ret = fail(r, "setup", NULL, "interrupted by signal %d before the program started",
			   sig);
	if (!ret)
		ret = release_program(r);
	stamp("exec");
	if (ret) {
		cancel_program(r);
		return ret;
	}
	*ret_info = r->info_fd;
	r->info_fd = -1;
	return 0;
}

int cmd_run(int argc, char **argv)
{
	struct run r;
	bool timed_out = false, rss_hit = false, mem_hit = false, pids_hit = false;
	uint64_t rss_peak = 0, mem_peak = 0;
	int64_t denied, up, down;
	int ret, first, status, sig = 0, wstatus, info_fd, null;

	memset(&r, 0, sizeof(r));
	r.net.netns_fd = -1;
	r.sigfd = -1;
	r.info_fd = r.err_fd = r.go_fd = -1;
	r.pool_size = run_pool_size();
	ret = parse_opts(argc, argv, &r.o, &first);
	if (ret)
		return ret > 0 ? WD_EXIT_OK : RUN_EXIT_WARDEN;
	if (r.o.print_seccomp) {
		status = load_policy(&r);
		if (!status)
			status = print_seccomp(&r);
		goto out;
	}
	r.no_seccomp = unsafe_no_seccomp();
	if (r.no_seccomp)
		fprintf(stderr,
			"warden run: WARDEN_UNSAFE_NO_SECCOMP=1: no seccomp filter for this "
			"run (measurements only; recorded in run.start)\n");
	if (setup_signals(&r))
		return fail(&r, "setup", NULL, "signals: %s", strerror(errno));
	r.t0 = wd_mono_ns();
	info_fd = -1;
	status = setup(&r, argc - first, argv + first, &info_fd);
	if (status || r.child <= 0) {
		/* failed before the program started */
		if (!status)
			status = RUN_EXIT_WARDEN;
		teardown(&r);
		audit_exit(&r, status, 0, -1, -1, -1, AUDIT_WRITE_DURABLE);
		goto out;
	}
	/* the program owns stdin/stdout now: ours must not hold a pipe open past its end */
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		close(null);
	}
	wstatus = wait_loop(&r, info_fd, &timed_out, &rss_hit, &rss_peak);
	stamp("program");
	close(info_fd);
	status = run_exit_status(wstatus, timed_out, &sig);
	/* bwrap reports a program killed by signal N as exit 128+N, which an exit(128+N)
	 * also gives: run.exit names a signal only when it is known (bwrap itself was
	 * signalled, or the memory limit killed the program) */
	if (r.ns_init > 0)
		kill(r.ns_init, SIGKILL);
	limits_breaches(&r.lim, &mem_hit, &pids_hit, &mem_peak);
	if ((mem_hit || rss_hit) && !sig && status == 128 + SIGKILL)
		sig = SIGKILL;
	if (mem_hit || rss_hit) {
		char why[128];

		snprintf(why, sizeof(why), "memory limit of %llu MiB reached (%s)",
			 (unsigned long long)r.pol->limits.memory_mb, limits_kind_name(r.lkind));
		audit_limit(&r, "limit.memory", why, (int64_t)(r.pol->limits.memory_mb << 20),
			    rss_hit ? (int64_t)rss_peak * 1024 : (int64_t)mem_peak);
		fprintf(stderr, "warden run: %s\n", why);
	}
	if (pids_hit) {
		char why[128];

		snprintf(why, sizeof(why), "process limit of %u reached: a fork was refused",
			 r.pol->limits.pids);
		audit_limit(&r, "limit.pids", why, r.pol->limits.pids, -1);
	}
	if (timed_out) {
		char why[128];
		unsigned t = r.o.timeout_s ? r.o.timeout_s : r.pol->limits.timeout_s;

		snprintf(why, sizeof(why), "timeout of %u s: SIGTERM, then SIGKILL after %d ms", t,
			 RUN_KILL_GRACE_MS);
		audit_limit(&r, "limit.time", why, (int64_t)t * 1000,
			    (int64_t)((wd_mono_ns() - r.t0) / 1000000));
		fprintf(stderr, "warden run: %s\n", why);
	}
	/* no process of the run outlives `warden run` (the cgroups go in the background) */
	if (limits_reap(&r.lim, 2000))
		fprintf(stderr, "warden run: processes of the run survived SIGKILL for 2 s\n");
	stamp("reap");
	gateway_counters(&r, &denied, &up, &down);
	stamp("counters");
	if (r.gw.embedded) {
		/* it dies with us (PR_SET_PDEATHSIG): stop it cleanly now, while run.exit is
		 * written, after its unregister event */
		unregister(&r);
		if (r.gw.pid > 0)
			kill(r.gw.pid, SIGTERM);
	}
	/* the status is known: record it now, durably once the teardown is done */
	audit_exit(&r, status, sig, denied, up, down, 0);
	stamp("run.exit");
	run_gw_stop(&r.gw);
	snprintf(r.rec.gw_socket, sizeof(r.rec.gw_socket), "%s", r.gw_daemon ? r.gw.socket : "");
	stamp("t.gateway");
	if (!teardown_detached(&r)) {
		teardown(&r);
		audit_sync(&r);
	}
	stamp("handoff");
out:
	audit_log_close(r.log);
	policy_free(r.pol);
	free(r.policy_text);
	free(r.argv);
	free(r.grants);
	free((void *)r.user);
	if (r.sigfd >= 0)
		close(r.sigfd);
	return status;
}

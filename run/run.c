/* run.c - the driver of a run: its stages in order (the table below), the program waited for,
 * the run ended. `warden run` (launcher/cmd_run.c) and `warden trace` (learn.c) call run_main()
 * with the options parsed; a trace adds its learn hooks (struct run_learn, learn.h), which the
 * stage table and the wait call without knowing what a trace is.
 *
 * Theory of operation (docs/run.md has the long form). The stages, each in its own file
 * (internal.h lists them), report through report.c and never call back into this file. Each stage
 * that creates something records it in the run's state folder first, so a crash at any point leaves
 * enough behind for `warden gc` (or the next run) to undo it:
 *
 *   config    the gateway config: ports, nft table, pools                 (policy.c)
 *   policy    the program's user; load + validate the policy; the command
 *             resolved to an absolute path, visible inside the sandbox     (policy.c)
 *   prereq    the sandbox backend chosen (backend.c), root, its tool, the limits mechanism;
 *             the run id, and the leftovers of crashed runs removed
 *   audit     a "run.start" event; if it cannot be written nothing runs; a helper process
 *             fdatasync()s it meanwhile                                     (audit.c)
 *   state     /run/warden/runs/<id>/state with our pid and start time
 *   network   netns + veth, leased from the pool or made, and the run's nft set elements
 *             (the table is installed first when it is missing)           (network.c)
 *   gw.spawn  a daemon answering on the control socket, else an embedded warden-gateway
 *             child bound to this run's host-side addresses, started now  (gwclient.c)
 *   limits    cgroups (v2, else v1) with the policy's limits, else memory sampling; missing
 *             write grants made (an empty file or a folder)               (sandbox.c)
 *   stdio     stdin and stdout not terminals: the program gets pipes, relayed byte for byte
 *             with the MCP tool calls in flight told to the gateway       (stdio_relay.c)
 *   fork      the sandbox prepared, its process parked: it enters the netns and the cgroups
 *             and becomes the program's user meanwhile         (sandbox.c, backend)
 *   gateway   the embedded gateway answers; register the run              (gwclient.c)
 *   check     enforcement is live: the gateway lists the run and a DNS query sent from
 *             inside the run's namespace is answered                      (liveness.c)
 *   durable   run.start's fdatasync is done (waited for); if it failed nothing runs (audit.c)
 *   exec      the sandbox's process goes on and execs the sandbox; its failure comes back
 *             over a CLOEXEC pipe                                          (sandbox.c)
 *   wait      signals forwarded, the timeout, memory sampling, the stdio relay (wait.c)
 *   exit      limit events, the gateway's counters, "run.exit"; the teardown (netns, nft
 *             elements, cgroups, unregister, state) handed to a detached child (teardown.c)
 * A failure before exec removes the write grants it made, tears down what exists, writes
 * run.exit (status 125) once run.start was written, and exits 125 with the stage, the cause
 * and a fix.
 */
#include "run/internal.h"
#include "run/learn.h"
#include "common/common.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

/* A user's run through the daemon on @socket, when it answers and plumbs runs: daemon mode. With
 * no daemon there (none, one this user may not use, a gateway that plumbs no runs) the run is
 * rootless; a daemon that is there and refuses or fails fails the run, unless rootless mode
 * was asked for (then this is not called): a run's mode, and with it the host's ceiling and
 * central log, never changes silently.
 * Return: 1 chosen, 0 not (rootless then), or 125 (said). */
static int pick_daemon(struct run *r, bool forced)
{
	const char *sock = r->o.gateway ? r->o.gateway : r->input.gwc.control_path;
	char why[600];

	switch (run_daemon_probe(sock, why, sizeof(why))) {
	case RUN_DAEMON_OK:
		break;
	case RUN_DAEMON_FAILED:
		if (forced)
			return run_fail(r, "prerequisites",
					"try again; if it goes on, the daemon's log says why (ask "
					"the operator)",
					"--mode daemon: %s", why);
		return run_fail(r, "prerequisites",
				"try again; if it goes on, the daemon's log says why (ask the "
				"operator), or run it without the daemon: --mode rootless",
				"%s; not falling back to rootless mode on its own (the host's "
				"ceiling and central log would not apply)",
				why);
	case RUN_DAEMON_NONE:
	case RUN_DAEMON_DENIED:
	case RUN_DAEMON_NO_PLUMB:
		if (forced)
			return run_fail(r, "prerequisites",
					"start the host's gateway (as root: warden-gateway "
					"--manage-nft; docs/deploy.md), or use --mode rootless",
					"--mode daemon: %s", why);
		return 0;
	}
	snprintf(r->gateway.gw.socket, sizeof(r->gateway.gw.socket), "%s", sock);
	r->gateway.gw_daemon = true;
	return 1;
}

/* The mode (--mode, else root as root; as a user the daemon when it answers, else rootless); a
 * forced mode that cannot be had fails closed with the fix. */
static int stage_mode(struct run *r)
{
	const char *m = r->o.mode;
	bool root = geteuid() == 0;
	char dir[200];
	struct wd_err err;
	int ret;

	if (m && !strcmp(m, "daemon") && root)
		return run_fail(r, "prerequisites",
				"drop --mode daemon: as root, runs use root mode (which registers "
				"with a daemon that answers, too)",
				"daemon mode is for a user who is not root");
	if (m && !strcmp(m, "root") && !root)
		return run_fail(
		    r, "prerequisites",
		    "run it as root (sudo warden run ...), or drop --mode root: a user's "
		    "runs are rootless",
		    "root mode builds the run's network on the host and needs root "
		    "(CAP_NET_ADMIN, CAP_SYS_ADMIN)");
	if (m && !strcmp(m, "rootless") && root)
		return run_fail(r, "prerequisites",
				"drop --mode rootless: as root, runs use root mode",
				"rootless mode is for a user who is not root");
	r->mode = root ? &run_mode_root : &run_mode_rootless;
	if (run_sandbox_brings_network(r)) {
		/* the container's own network, whoever the caller is */
		if (m || r->o.gateway)
			return run_fail(r, "prerequisites", "drop --mode and --gateway",
					"the %s backend builds the run's network in its container, "
					"with an embedded gateway",
					r->sandbox.sb.be->name);
		r->mode = &run_mode_docker;
	}
	if (root) {
		snprintf(r->runs_dir, sizeof(r->runs_dir), "%s", RUN_STATE_DIR);
		return 0;
	}
	if (m && !strcmp(m, "rootless") && r->o.gateway)
		return run_fail(r, "prerequisites",
				"drop --gateway: a rootless run starts its own embedded gateway",
				"--gateway names a daemon, and --mode rootless uses none");
	if (r->mode != &run_mode_docker && (!m || !strcmp(m, "daemon"))) {
		/* --gateway SOCKET as a user: that daemon, forced */
		ret = pick_daemon(r, (m && !strcmp(m, "daemon")) || r->o.gateway);
		if (ret > 1)
			return ret;
		if (ret == 1)
			r->mode = &run_mode_daemon;
	}
	r->network.pool_size = 0; /* a rootless network is cheap, and nothing of it is shared */
	wd_err_clear(&err);
	ret = run_rootless_dir(dir, sizeof(dir), &err);
	if (ret)
		return run_fail(r, "prerequisites", NULL, "run state folder: %s", err.msg);
	snprintf(r->runs_dir, sizeof(r->runs_dir), "%s/runs", dir);
	snprintf(r->empty_file, sizeof(r->empty_file), "%s/empty", dir);
	return 0;
}

static int stage_prereq(struct run *r)
{
	/* the backend first (its probe passed, or it was not chosen): one that cannot run stops
	 * the run before anything is made */
	int ret = run_sandbox_select(r);

	if (ret)
		return ret;
	ret = stage_mode(r);
	if (ret)
		return ret;
	return r->mode->prereq(r);
}

static int make_id(struct run *r)
{
	uint8_t b[6];

	if (r->o.run_id) {
		snprintf(r->id, sizeof(r->id), "%s", r->o.run_id);
		return 0;
	}
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

/* The run's id, and the leftovers of crashed runs removed (what `warden gc` does). */
static int stage_id(struct run *r)
{
	unsigned n = 0;
	struct wd_err err;

	if (make_id(r))
		return run_fail(r, "prerequisites", NULL, "no randomness for the run id");
	/* first the run.exit each dead launcher did not write (a long-lived `warden mcp` starts
	 * runs without passing launcher/main.c's check again) */
	wd_err_clear(&err);
	if (run_crashed_log(r->runs_dir, NULL, &err))
		wd_say(stderr, "warden run: crashed runs: %s", err.msg);
	wd_err_clear(&err);
	if (run_gc(r->runs_dir, &n, &err))
		wd_say(stderr, "warden run: gc: %s", err.msg);
	else if (n)
		run_note(r, "removed the leftovers of %u crashed run%s", n, n == 1 ? "" : "s");
	return 0;
}

/* The command after `--` (kept in the run by run_main()), resolved. */
static int stage_command(struct run *r)
{
	return run_command_resolve(r, r->cmd_argc, r->cmd_argv);
}

/* The command line for the record: a JSON array, cut to fit (then "..." last). */
static void record_command(struct run *r)
{
	json_t *a = json_array();
	char *s = NULL;

	for (size_t i = 0; a && r->input.argv[i]; i++) {
		json_t *w = json_string(r->input.argv[i]); /* NULL: not UTF-8 */

		json_array_append_new(a, w ? w : json_string("?"));
		free(s);
		s = json_dumps(a, JSON_COMPACT);
		if (!s || strlen(s) + 8 >= sizeof(r->rec.command)) {
			json_array_remove(a, json_array_size(a) - 1);
			json_array_append_new(a, json_string("..."));
			break;
		}
	}
	free(s);
	s = a ? json_dumps(a, JSON_COMPACT) : NULL;
	snprintf(r->rec.command, sizeof(r->rec.command), "%s",
		 s && strlen(s) < sizeof(r->rec.command) ? s : "[]");
	free(s);
	json_decref(a);
}

/* The run's policy text beside its record (0600): what `warden allowlist` changes live. */
static int save_policy_text(struct run *r)
{
	char p[PATH_MAX + 32];

	snprintf(p, sizeof(p), "%s/%s", r->state_dir, RUN_POLICY_FILE);
	return wd_write_file_atomic(AT_FDCWD, p, r->input.policy_text, r->input.policy_len, 0);
}

/* The run's state record: our pid and start time, the nft table it uses, and what the
 * live-run verbs show (mode, person, command, policy, audit log). */
static int stage_state(struct run *r)
{
	const char *slash = strrchr(r->input.policy_abs, '/');
	int ret;

	r->audit.t0 = wd_mono_ns();
	snprintf(r->state_dir, sizeof(r->state_dir), "%s/%s", r->runs_dir, r->id);
	snprintf(r->rec.id, sizeof(r->rec.id), "%s", r->id);
	if (r->o.started_by)
		snprintf(r->rec.started_by, sizeof(r->rec.started_by), "%s", r->o.started_by);
	r->rec.pid = getpid();
	r->rec.start = run_proc_start(r->rec.pid);
	snprintf(r->rec.mode, sizeof(r->rec.mode), "%s", r->mode->name);
	r->rec.uid = r->input.caller_uid;
	r->rec.created = (unsigned long long)time(NULL);
	snprintf(r->rec.policy, sizeof(r->rec.policy), "%s", r->input.policy_abs);
	snprintf(r->rec.policy_name, sizeof(r->rec.policy_name), "%.255s",
		 slash ? slash + 1 : r->input.policy_abs);
	snprintf(r->rec.audit, sizeof(r->rec.audit), "%s", audit_log_path(r->audit.log));
	record_command(r);
	/* rootless: the table lives in the run's own namespace and dies with it */
	if (!r->mode->own_userns) {
		snprintf(r->rec.table, sizeof(r->rec.table), "%s", r->network.fcfg.table);
		snprintf(r->rec.if_prefix, sizeof(r->rec.if_prefix), "%s",
			 r->network.fcfg.if_prefix);
	}
	ret = run_state_save(r);
	if (ret)
		return run_fail(r, "state", "check that /run is writable",
				"cannot record the run in %s: %s", r->state_dir, strerror(-ret));
	ret = save_policy_text(r);
	if (ret)
		return run_fail(r, "state", "check that /run is writable",
				"cannot keep the run's policy in %s: %s", r->state_dir,
				strerror(-ret));
	return 0;
}

/* The network stage, as the mode builds it (network.c for root mode). */
static int stage_network(struct run *r)
{
	return r->mode->net_up(r);
}

/* The limits stage, as the mode holds them: the run's cgroups (recorded for the teardown and
 * gc), the daemon's, or sampling. */
static int stage_limits(struct run *r)
{
	return r->mode->limits(r);
}

/* A trace's policy becomes the learning sandbox's (its learn hook); nothing for a run. */
static int stage_learn(struct run *r)
{
	return r->learner && r->learner->policy ? r->learner->policy(r) : 0;
}

/* A terminating signal that arrived during setup stops the run before the program starts. */
static int stage_interrupted(struct run *r)
{
	int sig = pending_stop(r);

	if (sig)
		return run_fail(r, "setup", NULL,
				"interrupted by signal %d before the program started", sig);
	return 0;
}

/*
 * The stages up to a started program, in order (ARCHITECTURE.md §2). @stamp names the time
 * since the previous stamp for WARDEN_TIMING (NULL: it counts into the next one).
 */
static const struct {
	const char *stamp;
	int (*fn)(struct run *r);
} stages[] = {
    /* the gateway config first: its audit log is one the policy must keep away from */
    {NULL, run_config_load},
    {NULL, run_policy_load},
    {NULL, stage_learn},
    {NULL, stage_command},
    {NULL, stage_prereq},
    {"policy", stage_id},
    {"audit", run_audit_start},
    {"state", stage_state},
    {"network", stage_network},
    {"gw.spawn", run_gwclient_pick},
    {NULL, stage_limits},
    {"limits", run_sandbox_grants},
    {NULL, run_stdio_setup},
    {"fork", run_sandbox_prepare},
    {"gateway", run_gwclient_ready},
    {"register", run_gwclient_register},
    {"check", run_liveness_check},
    /* run.start is on disk before the program runs: its sync overlapped the stages above */
    {"durable", run_audit_durable},
    {NULL, stage_interrupted},
    {"exec", run_sandbox_spawn},
};

/* Everything up to a started program. Return: 0, or the exit status of a failure (a prepared
 * sandbox is cancelled; the caller tears down the rest). */
static int setup(struct run *r)
{
	int ret = 0;

	run_stamp("begin");
	for (size_t i = 0; !ret && i < WD_ARRAY_SIZE(stages); i++) {
		ret = stages[i].fn(r);
		if (stages[i].stamp)
			run_stamp(stages[i].stamp);
	}
	if (ret)
		run_sandbox_cancel(r);
	return ret;
}

/* `warden run --print-bwrap`: the stages that say what the sandbox is, then its line. */
static int print_bwrap(struct run *r)
{
	int (*const steps[])(struct run * r) = {run_config_load, run_policy_load, stage_command,
						stage_prereq, run_sandbox_print_bwrap};
	int ret = 0;

	for (size_t i = 0; !ret && i < WD_ARRAY_SIZE(steps); i++)
		ret = steps[i](r);
	return ret;
}

/* The program ended: the status, the limit events, no process of the run left, the gateway's
 * counters, run.exit (durable once the teardown is done), the teardown handed off. */
static int finish(struct run *r, struct run_outcome *o)
{
	struct run_counts counts;

	/* the program's own status when the run was ended at its end (run_wait.c) */
	o->status =
	    run_exit_status(o->prog_ended ? o->prog_wstatus : o->wstatus, o->timed_out, &o->sig);
	if (o->gw_gone) {
		/* the daemon went away: the run was ended, not the program's own end */
		o->status = RUN_EXIT_WARDEN;
		o->sig = 0;
	}
	if (o->killed && !o->gw_gone) {
		/* `warden kill`: the status says so even when the program caught SIGTERM and
		 * exited on its own */
		if (o->status <= 128 || o->status > 128 + 64)
			o->status = 128 + SIGTERM;
		o->sig = o->status - 128;
	}
	/* the sandbox process (the linux backend's bwrap) reports a program killed by signal N
	 * as exit 128+N, which an exit(128+N) also gives: run.exit names a signal only when it
	 * is known (that process itself was signalled, or the memory limit killed the
	 * program) */
	run_sandbox_signal(r, SANDBOX_INSIDE, SIGKILL);
	run_sandbox_release(r);
	/* a trace's accesses go to the trace, not the audit log */
	if (!r->learner)
		run_audit_files(r);
	run_audit_limits(r, o);
	/* no process of the run outlives `warden run` (the cgroups go in the background) */
	if (limits_reap(&r->limits.lim, 2000))
		fprintf(stderr, "warden run: processes of the run survived SIGKILL for 2 s\n");
	run_stamp("reap");
	run_stdio_finish(r);
	/* before the gateway forgets the run: what it learned */
	if (r->learner && r->learner->collect)
		r->learner->collect(r, o);
	run_gwclient_counters(r, &counts);
	run_stamp("counters");
	if (r->gateway.gw.embedded) {
		/* it dies with us (PR_SET_PDEATHSIG): stop it cleanly now, while run.exit is
		 * written, after its unregister event */
		run_gwclient_unregister(r);
		if (r->gateway.gw.pid > 0)
			kill(r->gateway.gw.pid, SIGTERM);
	}
	/* daemon mode: the daemon would unregister the run when the held connection closes
	 * anyway: done now, in order */
	if (r->mode->by_daemon && !o->gw_gone)
		run_gwclient_unregister(r);
	if (r->mode->finish)
		r->mode->finish(r, o);
	/* the status is known: record it now, durably once the teardown is done */
	run_audit_exit(r, o->status, o->sig, &counts, 0);
	run_stamp("run.exit");
	run_gw_stop(&r->gateway.gw);
	snprintf(r->rec.gw_socket, sizeof(r->rec.gw_socket), "%s",
		 r->gateway.gw_daemon ? r->gateway.gw.socket : "");
	run_stamp("t.gateway");
	if (!run_teardown_detached(r)) {
		run_teardown(r);
		run_audit_sync(r);
	}
	run_stamp("handoff");
	run_denials_report(r, &counts);
	return o->status;
}

/* `warden run --print-policy`: the gateway config and the policy loaded as for a run (-p FILE
 * and the flags), the effective policy printed on stdout as YAML that `warden policy check`
 * accepts; nothing else happens. Return: 0, or 125 (said). */
static int print_policy(struct run *r)
{
	struct wd_buf text = WD_BUF_INIT;
	int ret;

	ret = run_config_load(r);
	if (!ret)
		ret = run_policy_load(r);
	if (ret)
		return ret;
	if (wd_buf_puts(&text, "# the effective policy of this `warden run` (warden run "
			       "--print-policy); nothing ran\n") ||
	    policy_render_yaml(r->input.pol, &text)) {
		wd_buf_free(&text);
		return run_fail(r, "policy", NULL, "out of memory");
	}
	ret = fwrite(text.data, 1, text.len, stdout) == text.len && fflush(stdout) == 0
		  ? 0
		  : run_fail(r, "policy", NULL, "writing the policy: %s", strerror(errno));
	wd_buf_free(&text);
	return ret;
}

int run_main(const struct run_opts *opts, int argc, char **argv, const struct run_learn *learner,
	     struct run_trace *trace)
{
	struct run r;
	struct run_outcome o = {0};
	int status, null;

	memset(&r, 0, sizeof(r));
	r.o = *opts;
	r.mode = &run_mode_root; /* until the prerequisites pick it (a zeroed run was root's) */
	r.learner = learner;
	r.trace = trace;
	r.network.net.netns_fd = -1;
	r.sigfd = -1;
	r.gateway.gw_hold = -1;
	r.asks.store = -1;
	run_rootless_init(&r.network.rl);
	run_stdio_plan(&r);
	run_sandbox_init(&r);
	r.network.pool_size = run_pool_size();
	if (r.o.print_policy) {
		status = print_policy(&r);
		goto out;
	}
	if (r.o.print_seccomp) {
		status = run_policy_load(&r);
		if (!status)
			status = run_sandbox_print_seccomp(&r);
		goto out;
	}
	r.input.no_seccomp = run_sandbox_unsafe();
	if (r.o.print_bwrap) {
		r.cmd_argc = argc;
		r.cmd_argv = argv;
		status = print_bwrap(&r);
		goto out;
	}
	if (r.input.no_seccomp)
		fprintf(stderr,
			"warden run: WARDEN_UNSAFE_NO_SECCOMP=1: no seccomp filter for this "
			"run (measurements only; recorded in run.start)\n");
	if (setup_signals(&r))
		return run_fail(&r, "setup", NULL, "signals: %s", strerror(errno));
	r.audit.t0 = wd_mono_ns();
	r.cmd_argc = argc;
	r.cmd_argv = argv;
	status = setup(&r);
	if (status || run_sandbox_pid(&r) <= 0) {
		/* failed before the program started */
		if (!status)
			status = RUN_EXIT_WARDEN;
		run_audit_durable_reap(&r);
		run_sandbox_grants_undo(&r);
		run_teardown(&r);
		run_audit_exit(&r, status, 0, NULL, AUDIT_WRITE_DURABLE);
		goto out;
	}
	/* the program owns stdin/stdout now: ours must not hold a pipe open past its end */
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		close(null);
	}
	run_wait(&r, &o);
	run_stamp("program");
	status = finish(&r, &o);
	if (r.learner && r.learner->finish)
		status = r.learner->finish(&r, status);
out:
	run_stdio_free(&r);
	run_sandbox_release(&r);
	recorder_free(r.sandbox.files);
	run_rootless_scope_free(&r);
	audit_log_close(r.audit.log);
	audit_key_free(r.audit.key);
	policy_free(r.input.pol);
	free(r.input.policy_text);
	free(r.input.argv);
	free((void *)r.input.user);
	if (r.sigfd >= 0)
		close(r.sigfd);
	return status;
}

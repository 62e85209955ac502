/* internal.h - internal to run/: the run's state (struct run) and the stages that run.c's
 * stage table calls in order, each in its own file (docs/run.md walks them), and report.c's
 * fail/note/stamp/state save that every stage may use:
 *
 *   policy.c         the gateway config, the program's user, the policy, the command
 *   audit.c          run.start, limit.*, run.exit
 *   network.c        netns + veth (leased from the pool, else made) and the nft elements;
 *                    mode_rootless.c and mode_daemon.c for the other two modes
 *   gwclient.c       which gateway, register, list, the run's counters, unregister
 *   liveness.c       the end-to-end check: a DNS query from inside the run is answered
 *   sandbox.c        the sandbox step: write grants made, the backend (sandbox.h) driven;
 *                    bubblewrap is sandbox_bwrap.c, its parked child child.c;
 *                    backend.c the registry of backends and which one a run uses
 *   wait.c           the wait: signals forwarded, the timeout, memory sampling
 *   stdio_relay.c    the stdio relay (not a terminal: pipes) and the MCP tool calls in flight
 *   teardown.c       undoing the stages, in the foreground or in a detached child
 *
 * A stage returns 0, or the exit status of a failure (125) after run_fail() said which step
 * failed, why and how to fix it; it never exits.
 */
#ifndef WARDEN_LAUNCHER_RUN_INTERNAL_H
#define WARDEN_LAUNCHER_RUN_INTERNAL_H

#include "run/run.h"
#include "run/gw.h"
#include "run/pool.h"
#include "run/state.h"
#include "recorder/recorder.h"
#include "run/sandbox.h"
#include "run/stdio_relay.h"
#include "run/mode_rootless.h"
#include "audit/audit.h"
#include "netns/netns.h"
#include "nft/nft.h"
#include "conf/conf.h"
#include "policy/policy.h"

#include <limits.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct run;
struct run_outcome;

/**
 * struct run_mode_ops - how a run is built (warden(1) --mode): one table per mode, as
 * struct sandbox_backend is for the sandbox step. The driver (run.c) picks the table in the
 * prerequisites stage and calls it; the stages read its facts instead of comparing modes.
 * @name:	"root", "rootless", "daemon" or "container" (the state record, run.start)
 * @own_userns:	the run has a user and network namespace of its own, made by a short-lived
 *		maker (mode_rootless.c): the sandbox joins it, the liveness probe's socket was made
 *		inside; false: root mode, the launcher is root, the run's network is on the host
 *		(veth, the host's nft table, the pool) and recorded for gc
 * @by_daemon:	the host's gateway daemon plumbs the network, registers the run with it and
 *		makes its cgroups (mode_daemon.c); they are the daemon's to undo
 * @gateway_inside: the run's gateway is always an embedded one, listening on sockets made
 *		inside the run's namespace (rootless)
 * @prereq:	the limits mechanism (r->limits.lkind) and what the mode needs besides; Return: 0
 * @net_up:	the network stage; Return: 0, or 125 (said)
 * @net_down:	the network undone (what exists)
 * @limits:	the limits stage: the run's cgroups, or sampling; Return: 0, or 125 (said)
 * @isolation:	run.start's `isolation` from the sandbox backend's words @sb
 * @finish:	the program ended, before run.exit: what the mode ends itself; may be NULL
 */
struct run_mode_ops {
	const char *name;
	bool own_userns;
	bool by_daemon;
	bool gateway_inside;
	int (*prereq)(struct run *r);
	int (*net_up)(struct run *r);
	void (*net_down)(struct run *r);
	int (*limits)(struct run *r);
	void (*isolation)(const struct run *r, const char *sb, char *out, size_t size);
	void (*finish)(struct run *r, const struct run_outcome *o);
};

/* The modes: mode_root.c, mode_rootless.c, mode_daemon.c; mode_docker.c for a backend that
 * brings its own network (a container). */
extern const struct run_mode_ops run_mode_root;
extern const struct run_mode_ops run_mode_rootless;
extern const struct run_mode_ops run_mode_daemon;
extern const struct run_mode_ops run_mode_docker;

/*
 * struct run - one run, from the options to the teardown. Each group of members belongs to the
 * stage that fills it; later stages read them. A member that says a thing exists (rec_saved,
 * fw_added, net.live, registered, ...) is what the teardown undoes.
 */
/* policy.c: the inputs */
struct run_input {
	struct wd_gwconf gwc;
	struct wd_policy *pol;
	char *policy_text;
	size_t policy_len;
	char policy_hash[72];
	char policy_abs[PATH_MAX];
	char **argv; /* argv[0] resolved */
	char *argv0; /* argv[0] as given (a container resolves it in its image) */
	char exe[PATH_MAX];
	uid_t uid; /* the program's user (never 0) */
	gid_t gid;
	uid_t caller_uid; /* the person: the audit events' uid (SUDO_UID under sudo) */
	const char *user;
	gid_t groups[64];
	int ngroups;
	bool no_seccomp; /* WARDEN_UNSAFE_NO_SECCOMP=1: measurements only (docs/seccomp.md) */
};

/* audit.c: the run's own events */
struct run_audit {
	struct audit_log *log;
	bool started;			    /* run.start written */
	bool has_pos;			    /* @start_pos is known */
	struct audit_log_pos start_pos;	    /* where run.start ended: the denial block reads on */
	struct audit_key *key;		    /* signs run.exit (run_audit_key_path()) */
	uint8_t start_hash[AUDIT_HASH_LEN]; /* run.start's line digest: the root's first leaf */
	bool has_start_hash;
	pid_t sync_pid; /* the helper making run.start durable (run_audit_durable() waits), or 0 */
	uint64_t t0;
	char fail_reason[1200];
};

/* network.c (root), mode_rootless.c, mode_daemon.c, pool.c: the run's network */
struct run_network {
	struct netns_pool_config ncfg;
	struct netns_run net;
	char host4[INET_ADDRSTRLEN], host6[INET6_ADDRSTRLEN];
	struct fw_config fcfg;
	struct fw_conn *fw;
	struct fw_run fr;
	bool fw_added;
	struct run_rootless rl; /* rootless: the namespaces and the sockets made inside */
	unsigned pool_size;	/* ready networks to keep ($WARDEN_POOL) */
	bool pooled;		/* the network came from the pool */
};

/* run.c's limits stage (limits.c) */
struct run_limits {
	enum limits_kind lkind;
	struct limits lim;
	/* rootless, where the user's systemd delegates cgroup v2 (mode_rootless.c): the limits in
	 * a `systemd-run --user --scope`, its command line ahead of the sandbox's and its
	 * environment (the user manager's socket); scope_argv is NULL until the fork stage */
	bool scope;
	char **scope_argv;
	char *scope_env[3];
};

/* gwclient.c, mode_daemon.c: the run's gateway */
struct run_gateway {
	struct run_gw gw;
	bool gw_daemon; /* run_gwclient_pick() chose a daemon (else an embedded one was spawned) */
	bool registered;
	/* daemon mode: the connection the run was registered over, held for the run's life (its
	 * end: the daemon is gone), -1: none */
	int gw_hold;
	char killed_by[200]; /* `warden kill` ended it: who, for run.exit ("" otherwise) */
	/* daemon mode: what came on gw_hold and is not a whole line yet (mode_daemon.c); the
	 * event lines copied into the user's log, and those refused (not of this run, not an
	 * event) */
	struct wd_buf gw_in;
	uint64_t gw_events, gw_events_bad;
	bool gw_lost;	       /* the gateway died or forgot the run: its counts are incomplete */
	char gw_lost_why[300]; /* ... and how, for run.exit */
};

/* sandbox.c, stdio_relay.c, the recorder: what confines and watches the program */
/* a write grant the run made (sandbox.c): removed again when the run fails before its program
 * starts, if it is still that very file or folder (and empty) */
struct run_made {
	const char *path; /* the grant's real path (the policy's) */
	bool dir;
	dev_t dev;
	ino_t ino;
};

struct run_box {
	unsigned backend;      /* enum policy_backend: run_sandbox_select()'s choice */
	char cwd[PATH_MAX];    /* the folder the program starts in */
	struct run_made *made; /* the write grants made, in order (run_sandbox_grants()) */
	bool granted;	       /* run_sandbox_grants() ran */
	size_t nmade;
	struct sandbox_spec spec;
	struct sandbox sb;
	struct run_stdio io;	/* the stdio relay and the MCP tool calls in flight */
	struct recorder *files; /* the file-access recorder (audit.files), NULL when off */
};

/* ask.c: network.ask's requests, one per name the gateway holds for the person (RUN_ASKS_MAX:
 * the gateway's GW_ASKS_MAX) */
#define RUN_ASKS_MAX 16

struct run_ask {
	unsigned gw_id;	    /* the gateway's number of the ask */
	unsigned timeout_s; /* its deadline, for the message when it passed */
	char req[33];	    /* the approval store's request id */
	char name[256];
	bool elicited; /* the MCP client was asked too (elicit.h) */
};

struct run_asks {
	int store;	 /* the approval store (run_approval_open_mine()), -1 until the first ask */
	bool store_said; /* it could not be opened, said once */
	size_t n;
	struct run_ask v[RUN_ASKS_MAX];
};

/*
 * struct run - one `warden run`, built from the parts each stage owns: the driver's own
 * fields (run.c) first, then one part a stage, in the stage table's order. A stage writes its
 * part and reads the parts of the stages before it.
 */
struct run {
	struct run_opts o;
	/* `warden trace` (learn.h): its hooks, called by the stage table, the wait and the end
	 * (NULL for a run), and the trace's own state */
	const struct run_learn *learner;
	struct run_trace *trace;
	/* warden trace: the run registers with "learn": true (gwclient.c, mode_daemon.c): its
	 * gateway allows any name on any port (the SSRF classes refused) and records what it
	 * reached (run_gw_learned()) */
	bool learn;
	/* run.c: the mode, where the run's state lives */
	const struct run_mode_ops *mode;
	char runs_dir[256];   /* RUN_STATE_DIR, or the caller's own (run_rootless_dir()) */
	char empty_file[256]; /* rootless: the caller's empty file for the sandbox's /proc */
	/* run.c: the command line after `--`, identity, state record, signals */
	int cmd_argc;
	char **cmd_argv;
	char id[16];
	struct run_record rec;
	bool rec_saved;
	char state_dir[PATH_MAX];
	int sigfd;
	/* the stages' parts */
	struct run_input input;
	struct run_audit audit;
	struct run_network network;
	struct run_limits limits;
	struct run_gateway gateway;
	struct run_box sandbox;
	struct run_asks asks;
};

/**
 * struct run_outcome - how the program ended, for run.exit and the limit events
 * @wstatus:	the sandbox process's wait status (sb->pid: bwrap for the linux backend)
 * @timed_out:	the timeout fired
 * @rss_hit:	memory sampling killed the run over the memory limit
 * @rss_peak_kb: the largest memory figure the sampling judged (wait.c mem_sample()), in KiB
 * @status:	what `warden run` exits with (run_exit_status())
 * @sig:	the signal that ended the program when known, else 0
 * @gw_gone:	the gateway daemon went away during the run: it was ended, the status is 125
 * @killed:	`warden kill` ended it (RUN_KILL_SIGVAL): the status is 128 + the signal
 * @prog_ended:	the program's own process ended while the sandbox's init had not reaped it:
 *		its wait status is @prog_wstatus (read from the zombie), and the run was ended
 *		then (the init may be held stopped: a run ends when its program does)
 * @prog_wstatus: that status (the run's, instead of the sandbox process's)
 */
struct run_outcome {
	int wstatus;
	bool prog_ended;
	int prog_wstatus;
	bool timed_out;
	bool killed;
	bool gw_gone;
	bool rss_hit;
	uint64_t rss_peak_kb;
	uint64_t oom_kills;    /* the run's cgroup v2 memory.events oom_kill, watched (wait.c) */
	uint64_t pids_refused; /* ... and its pids.events max */
	int status;
	int sig;
};

/**
 * struct run_counts - what the gateway counted of a run (-1: unknown)
 * @denied:	connections and queries denied
 * @up:		bytes from the sandbox
 * @down:	bytes to it
 */
struct run_counts {
	int64_t denied;
	int64_t up;
	int64_t down;
};

/* ------------------------------------------------------------ report.c: what every stage may use
 */

/**
 * run_fail() - say "warden run: STEP: CAUSE" and a fix on stderr; remember it for run.exit
 * @r:		the run
 * @step:	the step that failed (docs/run.md's stage names)
 * @fix:	one line telling the person what to do, or NULL
 * @fmt:	the cause
 *
 * Return: RUN_EXIT_WARDEN (125).
 */
int run_fail(struct run *r, const char *step, const char *fix, const char *fmt, ...)
    WD_PRINTF(4, 5);

/** run_note() - a progress message on stderr ("warden run: ..."), unless -q. */
void run_note(const struct run *r, const char *fmt, ...) WD_PRINTF(2, 3);

/** run_stamp() - with WARDEN_TIMING=1, print how long it was since the last stamp. */
void run_stamp(const char *stage);

/**
 * run_state_save() - write r->rec to the run's state folder (RUN_STATE_DIR/<id>/state)
 * Return: 0, or a negative errno.
 */
int run_state_save(struct run *r);

/* ------------------------------------------------------------ policy.c */

/**
 * run_config_load() - the gateway configuration (--config, else the defaults) and from it the
 * nft table's and the run networks' configuration
 * Return: 0, or 125 (said).
 */
int run_config_load(struct run *r);

/**
 * run_policy_load() - whom the program runs as, then the policy (-p, else the empty policy),
 * validated against what no grant may expose, with its text and hash for the audit events
 * Return: 0, or 125 (said).
 */
int run_policy_load(struct run *r);

/**
 * run_flags_policy_load() - the policy of a run with --allow/--read/--write (run/flags.c): the
 * flags' entries over -p FILE's (or alone), validated as one policy, errors naming the flag;
 * sets r->input.pol, its text (the effective policy as YAML) and r->input.policy_abs
 * @r:		the run (r->o.flags, r->o.nflags > 0)
 * @ctx:	as for policy_validate()
 * Return: 0, or 125 (said).
 */
int run_flags_policy_load(struct run *r, const struct policy_ctx *ctx);

/**
 * run_command_resolve() - the command (@argv, else the policy's `command`) with argv[0]
 * resolved through $PATH; it must be visible inside the sandbox
 * @r:		the run (r->input.argv, r->input.exe are set)
 * @argc:	number of words after `--`
 * @argv:	the words
 *
 * Return: 0; 125 no command; 126 not executable; 127 not found or not visible (said).
 */
int run_command_resolve(struct run *r, int argc, char **argv);

/* ------------------------------------------------------------ audit.c */

/**
 * run_audit_start() - open the audit log, write "run.start" and start making it durable: a
 * helper process fdatasync()s the log while the next stages build the run (nothing runs when
 * it cannot be written; run_audit_durable() waits for the sync before the program may start)
 * Return: 0, or 125 (said).
 */
int run_audit_start(struct run *r);

/**
 * run_audit_durable() - wait for run.start's fdatasync (the last stage before exec): a sync
 * that failed fails the run, so that no program runs whose start is not on disk
 * Return: 0 (durable, or no helper), or 125 (said).
 */
int run_audit_durable(struct run *r);

/**
 * run_audit_durable_reap() - a run that failed before exec: reap the sync helper, if any,
 * without judging its result (the run fails anyway; its run.exit is written durably)
 */
void run_audit_durable_reap(struct run *r);

/**
 * run_audit_limits() - the limit events of an ended run (limit.memory, limit.pids,
 * limit.time), said on stderr too for memory and time; sets @o->sig to SIGKILL when the memory
 * limit killed the program
 * @r:	the run
 * @o:	how it ended
 */
void run_audit_limits(struct run *r, struct run_outcome *o);

/**
 * run_audit_exit() - write "run.exit" (nothing when run.start was not written)
 * @r:		the run (its failure reason, the gateway's loss)
 * @status:	the exit status
 * @sig:	the signal that ended the program, or 0
 * @c:		the gateway's counters (-1: unknown), or NULL (all unknown)
 * @flags:	AUDIT_WRITE_DURABLE or 0
 */
void run_audit_exit(struct run *r, int status, int sig, const struct run_counts *c, unsigned flags);

/**
 * run_denials_report() - the end-of-run denial block on stderr (run/denials.c): the run's
 * denials read back from the audit log, grouped, each with the policy line that would allow
 * it; nothing with -q, in learn mode, or when nothing was denied
 * @r:	the run, its run.exit written and its gateway stopped (its events are in the log)
 * @c:	the gateway's counters (its denials count the ones a daemon wrote elsewhere); may be
 *	NULL
 */
void run_denials_report(struct run *r, const struct run_counts *c);

/**
 * run_audit_kill() - write "run.kill": `warden kill` asked the launcher to end the run
 * @r:		the run (r->gateway.killed_by is set: who asked)
 * @uid:	the sender's uid, as the kernel reported it
 * @pid:	the sender's pid
 */
void run_audit_kill(struct run *r, uid_t uid, pid_t pid);

/**
 * run_audit_sync() - fdatasync the audit log through the descriptor run.exit was written with
 * (opening the path again could reach another file)
 */
void run_audit_sync(const struct run *r);

/**
 * run_audit_files() - the `file` events of an ended run: one per (operation, path) the
 * recorder kept, with its count, and one summary of what it could not keep
 * @r:	the run (its recorder stopped; nothing when it has none)
 */
void run_audit_files(struct run *r);

/* ------------------------------------------------------------ network.c */

/**
 * run_network_up() - root mode's network stage (run_mode_root.net_up): a ready one leased from the
 * pool, else one made now and its nft elements added (the table installed first when it is missing)
 * Return: 0, or 125 (said).
 */
int run_network_up(struct run *r);

/**
 * run_network_facts() - the run's network is known (r->network.net): its addresses as text
 * (r->network.host4, r->network.host6 and the state record's), its nft elements (r->network.fr: the
 * interface, the sandbox addresses, and the veth's host side as the run's only gateway address per
 * family) (pure)
 */
void run_network_facts(struct run *r);

/**
 * run_network_refresh() - add a pooled network's nft elements again (the table may have been
 * replaced since it was made); once
 * Return: 0, or 125 (said).
 */
int run_network_refresh(struct run *r);

/**
 * run_network_down() - root mode's (run_mode_root.net_down): delete the run's nft elements and
 * destroy its network (what exists); failures are said on stderr
 */
void run_network_down(struct run *r);

/* ------------------------------------------------------------ gwclient.c */

/**
 * run_gwclient_pick() - which gateway: --gateway, else the daemon if it answers, else an
 * embedded one spawned now on the run's host-side addresses (run_gwclient_ready() waits)
 * Return: 0, or 125 (said).
 */
int run_gwclient_pick(struct run *r);

/**
 * run_gwclient_ready() - wait until an embedded gateway answers (a daemon was asked already)
 * Return: 0, or 125 (said).
 */
int run_gwclient_ready(struct run *r);

/**
 * run_gwclient_register() - register the run (id, interface, addresses, policy) with its
 * gateway, recorded in the state first so that a crash still gets it unregistered
 * Return: 0, or 125 (said).
 */
int run_gwclient_register(struct run *r);

/** run_gwclient_lists() - whether the gateway's `list` names the run. */
bool run_gwclient_lists(struct run *r);

/**
 * run_gwclient_counters() - the gateway's counters for the run; a gateway that no longer
 * answers for a registered run sets r->gateway.gw_lost (run.exit says the counts are incomplete)
 * @r:		the run
 * @ret:	filled in; all -1 when unknown
 */
void run_gwclient_counters(struct run *r, struct run_counts *ret);

struct json_t;

/**
 * run_gwclient_find() - look for run @id in the answer to `list` (pure)
 * @ans:	the answer ({"ok": true, "runs": [{"id", "denied", "bytes_up", "bytes_down"}]})
 * @id:		the run id
 * @ret:	its counters when found (a missing one is 0); may be NULL
 *
 * Return: whether the answer lists the run.
 */
bool run_gwclient_find(const struct json_t *ans, const char *id, struct run_counts *ret);

/**
 * run_gw_learned() - what the run reached, as its gateway recorded it in learn mode (the
 * control op `learned`; call it before run_gwclient_unregister())
 * @r:		a run registered with @r->learn set
 * @ret:	on success, the array of {"host", "port", "proto": "tls"|"http"|"raw"|"dns",
 *		"count"[, "refused"]} (port 0 for dns); the caller json_decref()s it
 *
 * Entries past the gateway's 4,096 are not in the array; how many attempts they stand for
 * is said on stderr (warden: ...) unless r->o.quiet.
 *
 * Return: 0; -ENOTCONN (the run is not registered); -EINVAL (not in learn mode, or an
 * answer without the array); the errors of run_gw_call().
 */
int run_gw_learned(struct run *r, struct json_t **ret);

/**
 * run_ask_wanted() - the run's policy has network.ask (and it is not a trace)
 */
bool run_ask_wanted(const struct run *r);

/**
 * run_ask_person() - network.ask with a person who may answer: stderr is a terminal, or stdio
 * is relayed (an MCP client may ask through elicitation); the run registers with "asker":
 * true (else its gateway denies asks at once), and an ask that finds neither is denied at once
 * by run_ask_tick()
 */
bool run_ask_person(const struct run *r);

/**
 * run_ask_tick() - the wait loop's network.ask turn (ask.c): the gateway's new asks made
 * requests of the approval store and said on stderr; decided requests answered to the
 * gateway (an approval adds the name to the run's policy first); those whose deadline passed
 * removed. Errors are said on stderr; the gateway's deadline answers what is left.
 */
void run_ask_tick(struct run *r);

/** run_ask_end() - the run's requests still pending removed from the store, the store closed */
void run_ask_end(struct run *r);

/** run_gwclient_unregister() - unregister a registered run (a failure is said on stderr). */
void run_gwclient_unregister(struct run *r);

/**
 * run_gwclient_died() - the embedded gateway ended during the run: record it for run.exit
 * @r:	the run
 * @st:	its wait status
 */
void run_gwclient_died(struct run *r, int st);

/* ------------------------------------------------------------ mode_daemon.c */

/* what a user's run finds on the daemon's control socket (run_daemon_probe()) */
enum run_daemon_found {
	RUN_DAEMON_OK,	     /* a daemon answers and plumbs users' runs: daemon mode */
	RUN_DAEMON_NONE,     /* no daemon there: no socket, or nobody listens on it */
	RUN_DAEMON_DENIED,   /* a socket this user may not connect to (not in its group) */
	RUN_DAEMON_NO_PLUMB, /* a gateway answers, but does not plumb runs (no --manage-nft) */
	RUN_DAEMON_FAILED,   /* a daemon is there and refused, failed or did not answer in time */
};

/**
 * run_daemon_probe() - what answers on @socket: its `stats`, asked once (1 s)
 * @socket:	the control socket
 * @why:	unless RUN_DAEMON_OK, why (the socket and the cause, or the daemon's own reason)
 * @size:	size of @why
 *
 * Only RUN_DAEMON_NONE, RUN_DAEMON_DENIED and RUN_DAEMON_NO_PLUMB mean that there is no daemon
 * for this user; RUN_DAEMON_FAILED means there is one that would not serve this run now.
 *
 * Return: what was found.
 */
enum run_daemon_found run_daemon_probe(const char *socket, char *why, size_t size);

/**
 * run_daemon_answers() - whether a gateway daemon answers on @socket and plumbs runs in users'
 * namespaces (run_daemon_probe() found RUN_DAEMON_OK)
 * @socket:	the control socket
 * @why:	when it does not, why (for a forced --mode daemon's message)
 * @size:	size of @why
 */
bool run_daemon_answers(const char *socket, char *why, size_t size);

/**
 * run_daemon_up() - the network stage of daemon mode: the run's user and network namespaces
 * (a bare maker), sent to the daemon with `register` (the descriptor, the policy); the daemon's
 * answer (interface, addresses, cgroup folders) recorded; the connection held in r->gateway.gw_hold
 * Return: 0, or 125 (said).
 */
int run_daemon_up(struct run *r);

/**
 * run_daemon_facts() - the daemon's answer to a register with netns, into the run (pure but for
 * @r): interface, addresses (r->network.host4, r->network.host6, the record's sandbox addresses),
 *cgroup folders (r->limits.lim: v1 memory/pids/cpu or one v2 folder)
 * @r:		the run
 * @ans:	the answer ({"ok": true, "if", "host_v4", "sandbox_v4", "host_v6", "sandbox_v6",
 *		"cgroups": [...]})
 * Return: 0, or -EBADMSG (a fact missing or malformed).
 */
int run_daemon_facts(struct run *r, const struct json_t *ans);

/**
 * run_daemon_events() - read what the daemon sent on the held connection (r->gateway.gw_hold)
 *without waiting, and append each whole event line (`{"event":LINE}`: one of the run's audit lines,
 * exactly as the daemon's log has it) to the user's log with audit_log_write()
 * @r:		the run (its log, its id: a line of another run is refused and counted)
 * @ret_answer:	NULL: any other line is refused and counted; else the first answer line (not an
 *		event) stops the reading, malloc'd into *@ret_answer (the bytes after it stay)
 *
 * Return: 0 (nothing more to read now, or an answer came), -ECONNRESET when the daemon closed
 * the connection, or another negative errno from recv().
 */
int run_daemon_events(struct run *r, char **ret_answer);

/**
 * run_daemon_unregister() - unregister the run on its held connection, copying the event
 * lines that come before the answer into the user's log (every event the daemon wrote for the
 * run before it unregistered it); waits at most @timeout_ms
 * @r:		the run
 * @why:	the error, for the caller's message
 * @size:	room in @why
 * Return: 0, or a negative errno (the daemon refused, went away, or did not answer in time).
 */
int run_daemon_unregister(struct run *r, int timeout_ms, char *why, size_t size);

/**
 * run_daemon_join() - daemon mode on cgroup v2: ask the daemon, on the held connection, to move
 * the sandbox's first process @pid into the run's cgroup (cgroup_join; a user may not move a
 * process across branches of the hierarchy, the common-ancestor rule), once @pid is in the
 * run's network namespace (the daemon checks that, and that it is the caller's)
 * @r:		the run (daemon mode, r->limits.lim a v2 folder)
 * @pid:	the launcher's child, before it is let go
 * Return: 0, or 125 (said).
 */
int run_daemon_join(struct run *r, pid_t pid);

/* ------------------------------------------------------------ liveness.c */

/**
 * run_liveness_check() - enforcement is live: the gateway lists the run, and a DNS query sent
 * from inside the run's namespace is answered (a pooled network gets its nft elements again
 * once if not)
 * Return: 0, or 125 (said).
 */
int run_liveness_check(struct run *r);

/* The DNS query of the check: HTTPS (type 65) for this reserved name, which the gateway answers
 * empty without asking upstream or counting a denial, and audits as "run.liveness"
 * (gateway/decide.h GW_LIVENESS_NAME; keep the two in step). */
#define RUN_LIVENESS_NAME "warden-liveness.check.invalid"

/**
 * run_liveness_query() - the check's DNS query (pure: gateway/proto's dns_query_compose())
 * @id:		the query id
 * @out:	where to write it
 * @size:	size of @out
 *
 * Return: its length, or -ENOSPC.
 */
int run_liveness_query(uint16_t id, uint8_t *out, size_t size);

/**
 * run_liveness_answers() - whether @ans (@len bytes) is a response to the query @q (pure)
 */
bool run_liveness_answers(const uint8_t *q, const uint8_t *ans, size_t len);

/* ------------------------------------------------------------ sandbox.c */

/** run_sandbox_allow() - the policy's sandbox.allow as sandbox/'s SANDBOX_ALLOW_* bits. */
unsigned run_sandbox_allow(const struct wd_policy *p);

/**
 * run_sandbox_unsafe() - WARDEN_UNSAFE_NO_SECCOMP=1: the filter is left out (the benchmark's
 * "without" column only; said on stderr even with -q, recorded in run.start)
 */
bool run_sandbox_unsafe(void);

/**
 * run_sandbox_print_seccomp() - `warden run --print-seccomp`: the policy's filter as text
 * Return: 0, or 125 (said).
 */
int run_sandbox_print_seccomp(struct run *r);

/**
 * run_sandbox_print_bwrap() - `warden run --print-bwrap`: the sandbox backend's command line
 * for this run as one shell line on stdout (its descriptors' contents in a new folder under
 * $TMPDIR, said on stderr); nothing runs. After the config, policy, command and prerequisites.
 * Return: 0, or 125 (said).
 */
int run_sandbox_print_bwrap(struct run *r);

/* ------------------------------------------------------------ backends (backend.c) */

/**
 * struct run_backend_probe - one backend's probe, as run_backend_choose() reads it
 * @probed:	it was asked (a backend not asked is never chosen)
 * @ok:		it can run here
 * @why:	when not: why (its probe's reason)
 * @fix:	when not: what to do, or NULL
 */
struct run_backend_probe {
	bool probed;
	bool ok;
	char why[1024];
	const char *fix;
};

/**
 * struct run_backend_ask - what chooses a run's backend (each an enum policy_backend)
 * @flag:	--backend, or POLICY_BACKEND_AUTO
 * @key:	the policy's sandbox.backend, or POLICY_BACKEND_AUTO
 * @fallback:	the policy's sandbox.fallback bits (1u << backend)
 * @native:	this OS's own backend (run_backend_native())
 */
struct run_backend_ask {
	unsigned flag;
	unsigned key;
	unsigned fallback;
	unsigned native;
};

/** run_backend_native() - this OS's own backend (Linux: POLICY_BACKEND_LINUX). */
unsigned run_backend_native(void);

/**
 * run_backend_own_root() - backend @id's sandbox has a root file system of its own (a
 * container's image): a command it runs is found there, not on the host
 */
bool run_backend_own_root(unsigned id);

/** run_backend_ops() - the operations of backend @id, or NULL when this build has none. */
const struct sandbox_backend *run_backend_ops(unsigned id);

/**
 * run_backend_probe() - whether backend @id can run here (another OS's, or one not in this
 * build, cannot; one of this build asks its probe verb, which makes nothing)
 * @id:		enum policy_backend
 * @out:	the result, probed set
 */
void run_backend_probe(unsigned id, struct run_backend_probe *out);

/**
 * run_backend_probe_keep() - run_backend_probe() into @keep: the sandbox the probe prepared
 * (SANDBOX_INIT of the backend, whatever the result), for the run to go on with or release
 */
void run_backend_probe_keep(unsigned id, struct run_backend_probe *out, struct sandbox *keep);

/**
 * run_backend_needed() - the backends whose probes run_backend_choose() reads for @a
 * Return: bits (1u << backend): the forced one, else the native one and the fallbacks.
 */
unsigned run_backend_needed(const struct run_backend_ask *a);

/**
 * run_backend_choose() - a run's backend (pure): --backend, else sandbox.backend, else the
 * native one, else the first fallback the policy names that can run (registry order); a
 * forced backend that cannot run is never replaced
 * @a:		what chooses
 * @probes:	POLICY_BACKEND_N results, indexed by backend (those not probed are not chosen)
 * @ret:	on success, the backend
 * @why:	on failure, the reason (every backend tried, with its probe's reason)
 * @size:	size of @why
 * @ret_fix:	on failure, what to do, or NULL
 *
 * Return: 0, -ENOENT (no backend that may be used can run), or -EINVAL (a bad backend in @a).
 */
int run_backend_choose(const struct run_backend_ask *a, const struct run_backend_probe *probes,
		       unsigned *ret, char *why, size_t size, const char **ret_fix);

/**
 * run_backend_doctor() - `warden doctor`'s line for the @i-th backend of the registry
 * @i:		0, 1, ... until -ENOENT
 * @out:	"NAME: works (...)" or "NAME: does not work here: WHY (...)"
 * @size:	size of @out
 * @ret_ok:	whether it can run here
 *
 * Return: 0, or -ENOENT past the last backend.
 */
int run_backend_doctor(size_t i, char *out, size_t size, bool *ret_ok);

/**
 * run_sandbox_select() - choose the run's backend (run_backend_choose() with --backend, the
 * policy and the probes it needs) before anything of the run exists; `warden trace` takes
 * only the linux backend (its recorder is bubblewrap's)
 * Return: 0, or 125 (said).
 */
int run_sandbox_select(struct run *r);

/** run_sandbox_init() - pick the sandbox backend (nothing is held yet). */
void run_sandbox_init(struct run *r);

/**
 * run_sandbox_describe() - the backend's part of run.start's `isolation`
 * @r:		the run
 * @out:	where to write it
 * @size:	size of @out
 */
void run_sandbox_describe(struct run *r, char *out, size_t size);

/**
 * run_sandbox_grants() - write grants that do not exist yet are made, owned by the program's
 * user, never through a link: an empty regular file or a folder, as the policy decided
 * (struct policy_grant.make_file); each one made is remembered
 * Return: 0, or 125 (said).
 */
int run_sandbox_grants(struct run *r);

/**
 * run_sandbox_grants_undo() - the run failed before its program started: what
 * run_sandbox_grants() made is removed again, each only if it is still the file or folder made
 * and empty (the newest first); what cannot be removed is said on stderr
 */
void run_sandbox_grants_undo(struct run *r);

/**
 * run_sandbox_brings_network() - the run's backend builds the network inside its sandbox (the
 * verb network: a container); the run's mode is then run_mode_docker
 */
bool run_sandbox_brings_network(const struct run *r);

/**
 * run_sandbox_network() - the backend's verb network with the run's spec: the sandbox made
 * and parked, the run's network built inside it, @n's descriptors filled
 * Return: 0, or 125 (said).
 */
int run_sandbox_network(struct run *r, struct sandbox_net *n);

/**
 * run_sandbox_prepare() - everything the sandbox needs before the program may start, its
 * process parked (run_sandbox_spawn() lets it go, run_sandbox_cancel() ends it)
 * Return: 0, or 125 (said).
 */
int run_sandbox_prepare(struct run *r);

/**
 * run_sandbox_spawn() - the program starts; whether it could is known on return
 * Return: 0, or 125 (said).
 */
int run_sandbox_spawn(struct run *r);

/** run_sandbox_cancel() - a prepared sandbox that will not run: its process goes away. */
void run_sandbox_cancel(struct run *r);

/** run_sandbox_release() - free what the backend holds (after the wait, or a failure). */
void run_sandbox_release(struct run *r);

/** run_sandbox_pid() - the process whose end is the run's end (0 before it was prepared). */
pid_t run_sandbox_pid(const struct run *r);

/** run_sandbox_event_fd() - a descriptor the wait polls for the backend, or -1. */
int run_sandbox_event_fd(const struct run *r);

/**
 * run_sandbox_event() - run_sandbox_event_fd() is readable: the backend reads it
 * Return: true when the wait need not poll it any more.
 */
bool run_sandbox_event(struct run *r);

/**
 * run_sandbox_program() - the program's own process (struct sandbox_backend.program)
 * @r:		the run
 * @ret_pidfd:	on success, a pidfd of it
 * @ret_procfd:	on success, its /proc folder
 *
 * Return: 0, -EAGAIN (not yet), or another negative errno (never).
 */
int run_sandbox_program(struct run *r, int *ret_pidfd, int *ret_procfd);

/**
 * run_sandbox_signal() - send @sig to a part of the sandbox (enum sandbox_target)
 * @r:		the run
 * @to:		which part
 * @sig:	the signal
 */
void run_sandbox_signal(struct run *r, enum sandbox_target to, int sig);

/* ------------------------------------------------------------ wait.c */

/**
 * run_wait() - wait for the program: signals forwarded, the timeout (SIGTERM to the tree,
 * SIGKILL RUN_KILL_GRACE_MS later), memory sampling when no cgroup limits memory, the embedded
 * gateway's death noticed
 * @r:	the run (its sandbox runs)
 * @o:	zeroed on entry; wstatus, timed_out, rss_hit, rss_peak_kb are filled in
 */
void run_wait(struct run *r, struct run_outcome *o);

/* ------------------------------------------------------------ teardown.c */

/**
 * run_teardown() - undo what the run made, in the foreground: unregister, cgroups, nft
 * elements, network, the embedded gateway, the state folder
 */
void run_teardown(struct run *r);

/**
 * run_teardown_detached() - hand the teardown to a detached child that owns the run from now
 * on, so that the caller gets the program's status at once
 * Return: true when the child took over (nothing of the run is this process's any more), false
 * when the caller must tear down itself.
 */
bool run_teardown_detached(struct run *r);

/* ------------------------------------------------------------ stdio_relay.c */

/**
 * run_stdio_plan() - whether stdio is relayed (r->sandbox.io.want): stdin and stdout open, neither
 * a terminal, WARDEN_STDIO_RELAY not "0"; else why not (r->sandbox.io.why). First thing of a run.
 */
void run_stdio_plan(struct run *r);

/**
 * run_stdio_setup() - the stage "stdio": when relayed, the program's stdin and stdout become
 * pipes (at 0 and 1 for the sandbox's child to inherit), the client's kept by the relay
 * Return: 0, or 125 (said).
 */
int run_stdio_setup(struct run *r);

/** run_stdio_poll() - the relay's RUN_STDIO_NPOLL pollfds for the wait loop (-1: none now). */
void run_stdio_poll(struct run *r, struct pollfd *p);

/** run_stdio_io() - relay what run_stdio_poll()'s descriptors are ready for. */
void run_stdio_io(struct run *r, const struct pollfd *p);

/**
 * run_stdio_drain() - the program ended: what it wrote reaches the client (at most 2 s
 * without progress), then the client's stdout is closed
 */
void run_stdio_drain(struct run *r);

/**
 * run_stdio_finish() - the end of the relay: the calls still in flight end (the gateway is
 * told, its answer has the denials per tool), r->sandbox.io.exit_mcp for run.exit
 */
void run_stdio_finish(struct run *r);

/** run_stdio_free() - release what the relay holds. */
void run_stdio_free(struct run *r);

/**
 * run_audit_mcp_filter() - an act of the MCP tool filter (mcpfilter.h): "mcp.call" (a tools/call
 * refused, with its denial id), "mcp.list" (a tool hidden from a tools/list answer), "mcp.drop"
 * (a line the filter could not read, dropped); type "mcp", allowed false
 */
void run_audit_mcp_filter(struct run *r, const struct run_mcpfilter_note *n);

/**
 * run_audit_mcp() - the "run.mcp" event: attribution went off for the run, and why (the
 * relay goes on)
 * @r:		the run
 * @reason:	why
 */
void run_audit_mcp(struct run *r, const char *reason);

#endif /* WARDEN_LAUNCHER_RUN_INTERNAL_H */

/* learn.h - `warden trace`'s part of a run (learn.c, learn_policy.c; the verbs are
 * launcher/cmd_trace.c and cmd_init.c). A trace is a run (run_main()) with learn hooks (struct
 * run_learn) and a struct run_trace:
 *
 *   policy    after the policy stage, the trace's folder (-o's, else the default one, made)
 *             opened and kept as the person who asked (outdir.h: the program can replace
 *             folders in its cwd during the run); BASE's policy becomes the learning
 *             sandbox's: no read grants (the host is visible read-only), the current folder
 *             as the one write
 *             grant, every credential store and Warden's own folders masked, BASE's env and
 *             limits kept, -e names added to env.allow, the recorder in trace mode
 *             (run_learn_policy())
 *   wait      peak memory and pids sampled in the wait loop (the sample hook)
 *   exit      before the gateway forgets the run: what it learned (names, ports, refusals),
 *             the recorder's entries, the measured peaks and wall time (the collect hook)
 *   after     the trace written (trace/write.c, outdir.c), the summary on stderr
 *             (the finish hook)
 *
 * The gateway runs in learn mode (r->learn, the `learn` register key): every name is allowed
 * and recorded but the SSRF classes, which stay refused and are recorded as such.
 */
#ifndef WARDEN_RUN_LEARN_H
#define WARDEN_RUN_LEARN_H

#include "run/outdir.h"
#include "trace/file.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

struct run;
struct run_opts;
struct run_outcome;

/**
 * struct run_trace - one `warden trace`
 * @out:	-o TRACE (absolute, its folder's real path), or NULL: the default folder
 *		(trace_default_dir())
 * @env:	the -e names
 * @nenv:	how many
 * @sockets:	the --allow-socket paths, absolute, without symbolic links
 * @nsockets:	how many
 * @sock_masks:	the host's other unix sockets under /run, found when the policy is made: the
 *		sandbox's first process covers each that still exists then (run_child_plan
 *		.premask; a socket gone by then is skipped, not an error); owned, freed by
 *		run_trace_main()
 * @nsock_masks: how many
 * @quiet:	-q: the summary is the warnings and the trace's path only
 * @init:	`warden init -- COMMAND`'s trace: no "next: warden init" hint (init goes on)
 * @not_started: set by the run: the program did not start (not found, not executable, the
 *		sandbox failed before it ran): no trace was written from it
 * @cwd:	the folder the program started in (real path)
 * @home:	the home folder of the person tracing
 * @cwd_rw:	@cwd is bound writable (else read-only, @why_ro says why)
 * @why_ro:	why the current folder stays read-only
 * @started:	when the program started (RFC 3339)
 * @started_t:	the same, for the file name
 * @peak_pids:	the most processes and threads seen at once (sampled)
 * @peak_rss_kib: the largest resident memory sampled (KiB)
 * @dir:	the folder the trace goes to, opened by run_learn_policy() (outdir_init()'d)
 * @t:		the trace, filled by the collect hook
 * @path:	where it was written ("" before)
 */
struct run_trace {
	const char *out;
	char *const *env;
	size_t nenv;
	char **sockets;
	size_t nsockets;
	char **sock_masks;
	size_t nsock_masks;
	bool quiet;
	bool init;
	bool not_started;
	char cwd[PATH_MAX];
	char home[PATH_MAX];
	bool cwd_rw;
	char why_ro[700];
	char started[40];
	time_t started_t;
	uint64_t peak_pids;
	uint64_t peak_rss_kib;
	struct outdir dir;
	struct trace t;
	char path[PATH_MAX];
};

/**
 * struct run_learn - the hooks that make a run learn (a trace): run.c's stage table, wait.c's
 * loop and run.c's end call them, each only when set, without knowing what they do
 * @policy:	after the policy stage: the learning sandbox's policy (Return: 0, or 125 said)
 * @sample:	in the wait loop, with the sandbox's process: measure the run now
 * @collect:	the program ended, the gateway still has the run: what it did
 * @finish:	after the run's end: the result written (Return: the status to exit with)
 */
struct run_learn {
	int (*policy)(struct run *r);
	void (*sample)(struct run *r, int pid);
	void (*collect)(struct run *r, const struct run_outcome *o);
	int (*finish)(struct run *r, int status);
};

/**
 * run_learn_policy() - a trace's policy hook (learn_policy.c): its policy becomes the learning
 * sandbox's (the theory of operation above)
 * @r:	the run (a trace)
 * Return: 0, or 125 (said).
 */
int run_learn_policy(struct run *r);

/**
 * run_learn_store_path() - a credential store's path (policy_credential_stores()) for the
 * person tracing: "~/x" in @home (an empty @home: under /nonexistent), else @store itself
 * @store:	the store
 * @home:	the person's home folder, or ""
 * @out:	where to write the path
 * @size:	size of @out
 */
void run_learn_store_path(const char *store, const char *home, char *out, size_t size);

/**
 * run_trace_main() - `warden trace`'s run of a command, also `warden init -- COMMAND`'s: the
 * run with the trace's learn hooks, the trace written and its summary said on stderr
 * @o:		the run's options (the verb's --policy, --mode, --audit-log, --timeout, -q)
 * @rt:		the trace's own options (@out, @env, @sockets, @quiet, @init), zeroed
 *		otherwise; on return @rt->path is where the trace was written ("" when it was
 *		not) and @rt->not_started says whether the program did not even start
 * @argc:	number of words of the command (at least one)
 * @argv:	the command
 *
 * Return: the exit status: the program's, or 125 Warden failed.
 */
int run_trace_main(const struct run_opts *o, struct run_trace *rt, int argc, char **argv);

#endif /* WARDEN_RUN_LEARN_H */

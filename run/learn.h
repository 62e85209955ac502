/* run_trace.h - internal to launcher/: `warden trace`'s part of a run (cmd_trace.c). A trace is
 * a `warden run` (cmd_run.c's stages, run_main()) whose struct run has a struct run_trace:
 *
 *   policy    after the policy stage, the trace's folder (-o's, else the default one, made)
 *             opened and kept as the person who asked (outdir.h: the program can replace
 *             folders in its cwd during the run); BASE's policy becomes the learning
 *             sandbox's: no read grants (the host is visible read-only), the current folder
 *             as the one write
 *             grant, every credential store and Warden's own folders masked, BASE's env and
 *             limits kept, -e names added to env.allow, the recorder in trace mode
 *             (run_trace_policy())
 *   wait      peak memory and pids sampled in the wait loop (run_trace_sample())
 *   exit      before the gateway forgets the run: what it learned (names, ports, refusals),
 *             the recorder's entries, the measured peaks and wall time (run_trace_collect())
 *   after     the trace written (trace_write.c, outdir.c), the summary on stderr
 *             (run_trace_finish())
 *
 * The gateway runs in learn mode (r->learn, the `learn` register key): every name is allowed
 * and recorded but the SSRF classes, which stay refused and are recorded as such.
 */
#ifndef WARDEN_LAUNCHER_RUN_TRACE_H
#define WARDEN_LAUNCHER_RUN_TRACE_H

#include "run/outdir.h"
#include "trace/file.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

struct run;
struct run_outcome;

/**
 * struct run_trace - one `warden trace`
 * @out:	-o TRACE (absolute, its folder's real path), or NULL: the default folder
 *		(trace_default_dir())
 * @env:	the -e names
 * @nenv:	how many
 * @sockets:	the --allow-socket paths, absolute, without symbolic links
 * @nsockets:	how many
 * @quiet:	-q: the summary is the warnings and the trace's path only
 * @cwd:	the folder the program started in (real path)
 * @home:	the home folder of the person tracing
 * @cwd_rw:	@cwd is bound writable (else read-only, @why_ro says why)
 * @why_ro:	why the current folder stays read-only
 * @started:	when the program started (RFC 3339)
 * @started_t:	the same, for the file name
 * @peak_pids:	the most processes and threads seen at once (sampled)
 * @peak_rss_kib: the largest resident memory sampled (KiB)
 * @dir:	the folder the trace goes to, opened by run_trace_policy() (outdir_init()'d)
 * @t:		the trace, filled by run_trace_collect()
 * @path:	where it was written ("" before)
 */
struct run_trace {
	const char *out;
	char *const *env;
	size_t nenv;
	char **sockets;
	size_t nsockets;
	bool quiet;
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
 * run_trace_policy() - the stage after the policy's: a trace's policy becomes the learning
 * sandbox's (the theory of operation above); nothing for a run that is no trace
 * @r:	the run
 * Return: 0, or 125 (said).
 */
int run_trace_policy(struct run *r);

/**
 * run_trace_sample() - the wait loop's sample: memory and pids of the run now, peaks kept
 * @r:		the run (a trace)
 * @pid:	the sandbox's process
 */
void run_trace_sample(struct run *r, int pid);

/**
 * run_trace_collect() - the program ended, the gateway still has the run: what it learned,
 * the recorder's entries, the peaks and the wall time into r->trace->t
 * @r:	the run (a trace; its recorder stopped)
 * @o:	how the program ended
 */
void run_trace_collect(struct run *r, const struct run_outcome *o);

/**
 * run_trace_finish() - write the trace and say the summary on stderr
 * @r:		the run (a trace, after run_trace_collect())
 * @status:	the run's exit status
 * Return: @status, or 125 when the trace could not be written.
 */
int run_trace_finish(struct run *r, int status);

/**
 * trace_command() - `warden trace [OPTIONS] -- COMMAND`, also for `warden init -- COMMAND`
 * @argc:	number of arguments
 * @argv:	argv[0] is the verb's name
 * @ret_path:	where the trace was written ("" when none); may be NULL
 * @size:	size of @ret_path
 *
 * Return: the exit status: the program's, 125 Warden failed, 2 a usage error.
 */
int trace_command(int argc, char **argv, char *ret_path, size_t size);

#endif /* WARDEN_LAUNCHER_RUN_TRACE_H */

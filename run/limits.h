/* limits.h - a run's resource limits (limits.c): cgroup v2, else v1, else memory sampling; the
 * run's processes killed, reaped and counted; the breaches read back for the limit events.
 * Used by the stages, `warden doctor` and the unit tests (through run.h).
 */
#ifndef WARDEN_RUN_LIMITS_H
#define WARDEN_RUN_LIMITS_H

#include "policy/policy.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

enum limits_kind {
	LIMITS_NONE,	 /* no limit asked for */
	LIMITS_CGROUP2,	 /* cgroup v2 */
	LIMITS_CGROUP1,	 /* cgroup v1: memory, pids, cpu hierarchies */
	LIMITS_SAMPLING, /* no usable cgroup: memory (PSS) sampled, no pids/cpu limit */
};

/* cgroup v1 controllers Warden uses, in this order everywhere. */
enum { LIMITS_V1_MEMORY, LIMITS_V1_PIDS, LIMITS_V1_CPU, LIMITS_V1_COUNT };

/**
 * struct limits - one run's cgroups
 * @kind:	mechanism in use
 * @dir:	cgroup folders (v2: dir[0] only), "" when absent
 * @lim:	the limits asked for
 */
struct limits {
	enum limits_kind kind;
	char dir[LIMITS_V1_COUNT][512];
	struct policy_limits lim;
};

/**
 * limits_probe() - which mechanism this machine offers (mounting cgroup v1 hierarchies under
 * /run/warden/cgroup when the caller's mount namespace lacks them)
 * Return: LIMITS_CGROUP2, LIMITS_CGROUP1 or LIMITS_SAMPLING.
 */
enum limits_kind limits_probe(void);

/** limits_kind_name() - "cgroup2", "cgroup1", "pss-sampling", "none". */
const char *limits_kind_name(enum limits_kind k);

/**
 * limits_create() - create the run's cgroups (one per controller) and write the limits
 * @l:		zeroed on entry; filled in
 * @id:		the run id (cgroup name "warden-<id>")
 * @lim:	the policy's limits (always create the cgroups: they also let teardown find
 *		every process of the run)
 * @err:	names the file that failed
 *
 * Return: 0 (with l->kind LIMITS_SAMPLING when no cgroup can be made), or a negative errno
 * when a cgroup exists but a limit cannot be written (nothing is left behind).
 */
int limits_create(struct limits *l, const char *id, const struct policy_limits *lim,
		  struct wd_err *err);

/**
 * limits_join() - move the calling process into @l's cgroups (called by the child)
 * Return: 0, or a negative errno.
 */
int limits_join(const struct limits *l);

/**
 * limits_signal() - send @sig to every process in @l's cgroups
 * Return: the number of processes signalled (0 when the cgroups are empty or absent).
 */
int limits_signal(const struct limits *l, int sig);

/**
 * limits_breaches() - which limits were hit
 * @l:		the cgroups
 * @ret_mem:	set when the memory limit was hit (OOM kill or failcnt)
 * @ret_pids:	set when pids.max refused a fork
 * @ret_mem_peak: peak memory in bytes (0 when unknown)
 */
void limits_breaches(const struct limits *l, bool *ret_mem, bool *ret_pids, uint64_t *ret_mem_peak);

/**
 * limits_reap() - kill what is left in @l's cgroups and wait until they are empty
 * @l:		the cgroups; NULL or without cgroups (sampling) is fine
 * @max_ms:	how long to wait at most
 *
 * Called before `warden run` returns the status, so that no process of the run outlives
 * it; removing the cgroups is left to limits_destroy() in the background teardown. An
 * empty cgroup costs one read of its cgroup.procs.
 *
 * Return: 0 when the cgroups are empty, -ETIMEDOUT when processes were left after @max_ms.
 */
int limits_reap(const struct limits *l, unsigned max_ms);

/**
 * limits_destroy() - kill what is left in @l's cgroups and remove them
 * @l:	the cgroups; NULL or empty is fine
 * Return: 0, or -EBUSY when a cgroup could not be removed.
 */
int limits_destroy(struct limits *l);

/**
 * limits_rss_kb() - the resident memory of @pid and all its descendants, in KiB (counters:
 * cheap); a page shared by several of them counts once in each, so it bounds limits_pss_kb()
 * from above
 */
uint64_t limits_rss_kb(pid_t pid);

/**
 * limits_pss_kb() - the proportional set sizes of @pid and all its descendants summed, in KiB
 * (the sampling fallback's measure: shared pages once); a process whose PSS cannot be read
 * counts with its resident size. Costly: the kernel walks every page table (about 3 ms for a
 * process with 64 MiB mapped)
 */
uint64_t limits_pss_kb(pid_t pid);

/**
 * limits_pids_now() - how many processes and threads the run has now: its pids cgroup's
 * pids.current (v2 or v1), else the tasks of @pid and all its descendants (sampling)
 * @l:		the run's cgroups; may be NULL
 * @pid:	the sandbox's process (when no pids cgroup counts)
 */
uint64_t limits_pids_now(const struct limits *l, pid_t pid);

/* ------------------------------------------------ limits_watch.c: the limit events as they happen
 */

/**
 * struct limits_watch - a run's cgroup v2 events files, watched while it lives
 * @mem_fd:	its memory.events (poll for POLLPRI), -1 when not open
 * @pids_fd:	its pids.events, -1 when not open
 * @oom_kills:	the largest `oom_kill` count read (kills by the cgroup's memory.max)
 * @pids_refused: the largest `max` count read (forks pids.max refused)
 * @dir:	the cgroup's folder ("" until open)
 */
struct limits_watch {
	int mem_fd, pids_fd;
	uint64_t oom_kills, pids_refused;
	char dir[512];
};

/**
 * limits_events_value() - the count of @key in the text of a flat keyed file ("KEY N" lines:
 * memory.events, pids.events) (pure)
 * Return: N, or 0 when @key is not there.
 */
uint64_t limits_events_value(const char *text, const char *key);

/**
 * limits_cgroup2_path() - the cgroup v2 folder of a process from the text of its
 * /proc/PID/cgroup (the "0::PATH" line; pure)
 * @text:	the file's text
 * @unit:	when not NULL, the folder's last component must be this (a systemd unit:
 *		"warden-ID.scope"), else -ENOENT (the process is not there yet)
 * @out:	"/sys/fs/cgroup" PATH
 * @size:	its size
 * Return: 0, -ENOENT, -ENAMETOOLONG.
 */
int limits_cgroup2_path(const char *text, const char *unit, char *out, size_t size);

/** limits_watch_init() - nothing open, no count. */
void limits_watch_init(struct limits_watch *w);

/**
 * limits_watch_open() - open the events files of the cgroup v2 folder @dir and read them
 * (nothing when already open)
 * Return: 0 when at least one is open, else a negative errno.
 */
int limits_watch_open(struct limits_watch *w, const char *dir);

/**
 * limits_watch_scope() - limits_watch_open() on the cgroup of process @pid once it is the
 * systemd unit @unit (its /proc/PID/cgroup)
 * Return: 0 (open now or before), -ENOENT (not in @unit yet), another negative errno.
 */
int limits_watch_scope(struct limits_watch *w, pid_t pid, const char *unit);

/** limits_watch_read() - read both files again (after POLLPRI): the counts only grow. */
void limits_watch_read(struct limits_watch *w);

/** limits_watch_close() - close the files; the counts stay. */
void limits_watch_close(struct limits_watch *w);

#endif /* WARDEN_RUN_LIMITS_H */

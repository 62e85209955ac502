/* live.h - internal to launcher/: the live runs of this machine as the caller may see them
 * (`warden status`, `kill`, `allowlist`; `warden mcp` lists and kills its own through it).
 *
 * A run is found by its state record (run_state.c): root mode's in RUN_STATE_DIR, a user's
 * rootless and daemon runs in that user's own folder (run_rootless_dir()). A record counts
 * only while its launcher (or its teardown child) lives: the pid's start time is the
 * recorded one and the process belongs to the folder's owner, so a record naming someone
 * else's process is ignored. A user finds only the runs in their own folder; root finds
 * root mode's and every user's (/tmp/warden-UID and /run/user/UID/warden, each checked to
 * be that uid's private folder). The run's gateway is the record's control socket: the
 * embedded gateway's in the state folder, or the daemon's.
 *
 * docs/run.md "Live runs" is the theory of operation.
 */
#ifndef WARDEN_LAUNCHER_LIVE_H
#define WARDEN_LAUNCHER_LIVE_H

#include "run/run.h"
#include "run/state.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct json_t;

/* What a live run is doing: setting up (not registered yet), running, or ending (the
 * program ended; its teardown child owns the record). */
enum live_state {
	LIVE_STARTING,
	LIVE_RUNNING,
	LIVE_ENDING,
};

/**
 * struct live_run - one live run
 * @rec:	its state record
 * @dir:	its state folder
 * @owner:	the uid the folder (and the launcher) belongs to: 0 for root mode's
 * @owner_gid:	the folder's group (whom to act as, with @owner)
 * @state:	what it is doing
 */
struct live_run {
	struct run_record rec;
	char dir[PATH_MAX];
	uid_t owner;
	gid_t owner_gid;
	enum live_state state;
};

/** live_state_name() - "starting", "running", "ending". */
const char *live_state_name(enum live_state s);

/**
 * live_runs_find() - the live runs the caller may see, oldest first
 * @ret:	on success, a malloc'd array (free())
 * @ret_n:	its length
 * @err:	what failed
 *
 * Return: 0 (also with none), or a negative errno (-ENOMEM; a folder that cannot be read is
 * skipped, not an error).
 */
int live_runs_find(struct live_run **ret, size_t *ret_n, struct wd_err *err);

/**
 * live_run_get() - the live run called @id (or the only one whose id starts with @id)
 * @id:		a run id or a prefix of at least 4 characters
 * @out:	filled in
 * @err:	why not: no such run (another user's run is not seen), an ambiguous prefix
 *
 * Return: 0; -ENOENT; -EINVAL ambiguous or malformed; -ENOMEM.
 */
int live_run_get(const char *id, struct live_run *out, struct wd_err *err);

/**
 * live_as_owner() - run @fn as the run's owner: directly when the caller is that uid, else (root
 * acting on a user's run) in a child that dropped to the owner's uid and gid first, so the
 * gateway (SO_PEERCRED), the run's audit log and its files see the owner, never root acting on
 * what a user's record names
 * @lr:		the run
 * @fn:		the work; appends its result to @out; returns 0 or a negative errno
 * @arg:	passed to @fn
 * @out:	@fn's output (from the child: copied back)
 *
 * Return: what @fn returned; -ECHILD when the child died; a negative errno of the fork.
 */
int live_as_owner(const struct live_run *lr,
		  int (*fn)(const struct live_run *lr, void *arg, struct wd_buf *out), void *arg,
		  struct wd_buf *out);

/**
 * live_gw_list() - the gateway's `list` entry of the run (as its owner)
 * @lr:		the run (not yet registered: -ENOENT)
 * @ret:	on success, the entry (json_decref())
 * @why:	on failure, why
 * @wsize:	size of @why
 *
 * Return: 0; -ENOENT the gateway does not list it; the errors of run_gw_call().
 */
int live_gw_list(const struct live_run *lr, struct json_t **ret, char *why, size_t wsize);

/**
 * live_policy_read() - the run's policy text as its gateway has it (RUN_POLICY_FILE)
 * @lr:		the run
 * @ret:	the text (malloc'd, NUL-terminated)
 * @ret_len:	its length
 *
 * Return: 0, or a negative errno.
 */
int live_policy_read(const struct live_run *lr, char **ret, size_t *ret_len);

/**
 * live_policy_write() - replace RUN_POLICY_FILE atomically with @text (0600, the owner's)
 * Return: 0, or a negative errno.
 */
int live_policy_write(const struct live_run *lr, const char *text, size_t len);

#endif /* WARDEN_LAUNCHER_LIVE_H */

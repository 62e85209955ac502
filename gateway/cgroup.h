/* cgroup.h - a daemon-mode run's cgroup (internal header; cgroup.c): made by the privileged
 * parent with the policy's limits, delegated to the run's user (its folder and the files that
 * move processes chowned), removed when the run is unregistered. cgroup v2 where the machine has
 * it, else the v1 memory, pids and cpu hierarchies. */
#ifndef WARDEN_GATEWAY_CGROUP_H
#define WARDEN_GATEWAY_CGROUP_H

#include "policy/policy.h"

#include <stddef.h>
#include <sys/types.h>

/* folders of one run's cgroup: one (v2), or one per v1 controller (memory, pids, cpu) */
#define GW_CGROUP_MAX 3
/* longest folder path, with its NUL (gateway/privsep.h GW_PRIV_CGROUP_SIZE) */
#define GW_CGROUP_PATH 128
/* files one controller's limits write, at most */
#define GW_CGROUP_FILES 4

/** enum gw_cgroup_kind - which cgroup interface */
enum gw_cgroup_kind {
	GW_CGROUP_NONE, /* no usable hierarchy: the launcher samples (docs/run.md) */
	GW_CGROUP_V2,
	GW_CGROUP_V1,
};

/**
 * struct gw_cgroup - a run's cgroup
 * @kind:	which interface made it
 * @dir:	its folders ("" when unused): v2 only @dir[0]; v1 memory, pids, cpu
 */
struct gw_cgroup {
	enum gw_cgroup_kind kind;
	char dir[GW_CGROUP_MAX][GW_CGROUP_PATH];
};

/**
 * struct gw_cgroup_file - one file a run's cgroup gets (pure plan)
 * @name:	the file, in the cgroup's folder
 * @value:	what is written to it
 */
struct gw_cgroup_file {
	const char *name;
	char value[32];
};

/**
 * gw_cgroup_limit_files() - the limit files of controller @slot of a @kind cgroup (pure)
 * @kind:	GW_CGROUP_V2 (@slot 0: memory.max, memory.swap.max, pids.max, cpu.max) or
 *		GW_CGROUP_V1 (@slot 0 memory: memory.limit_in_bytes; 1 pids: pids.max; 2 cpu:
 *		cpu.cfs_period_us, cpu.cfs_quota_us)
 * @slot:	the controller (v1), 0 for v2
 * @lim:	the policy's limits (0: none, nothing written for it)
 * @out:	filled in, in the order to write them
 *
 * Return: how many (0..GW_CGROUP_FILES).
 */
size_t gw_cgroup_limit_files(enum gw_cgroup_kind kind, int slot, const struct policy_limits *lim,
			     struct gw_cgroup_file out[GW_CGROUP_FILES]);

/**
 * gw_cgroup_delegated() - the files of a @kind cgroup chowned to its user besides the folder
 * (pure): v2 cgroup.procs, cgroup.threads, cgroup.subtree_control; v1 cgroup.procs, tasks
 * @kind:	the interface
 * @ret_n:	how many
 * Return: the names.
 */
const char *const *gw_cgroup_delegated(enum gw_cgroup_kind kind, size_t *ret_n);

/**
 * gw_cgroup_create() - a run's cgroup with @lim, delegated to @uid:@gid
 * @cg:		filled in (kind GW_CGROUP_NONE and no folder when the machine offers no
 *		hierarchy here: not an error)
 * @id:		the run id (folder "warden-<id>" below the gateway's own cgroup, v1; or
 *		<root>/warden/<id>, v2)
 * @lim:	the limits
 * @uid:	the run's user
 * @gid:	its group
 * @why:	on error, what failed
 * @size:	size of @why
 *
 * Return: 0, or a negative errno (nothing is left behind).
 */
int gw_cgroup_create(struct gw_cgroup *cg, const char *id, const struct policy_limits *lim,
		     uid_t uid, gid_t gid, char *why, size_t size);

/**
 * gw_cgroup_create_in() - gw_cgroup_create() below the cgroup root @root (the unit tests' fake
 * one; gw_cgroup_create() passes /sys/fs/cgroup)
 * @cg:		as gw_cgroup_create()
 * @root:	where the cgroup hierarchies are mounted: v2 when @root/cgroup.controllers is
 *		there, else v1's @root/memory, @root/pids, @root/cpu (cgroup mounts only)
 * @id:		as gw_cgroup_create()
 * @lim:	as gw_cgroup_create()
 * @uid:	as gw_cgroup_create()
 * @gid:	as gw_cgroup_create()
 * @why:	as gw_cgroup_create()
 * @size:	as gw_cgroup_create()
 *
 * Return: 0, or a negative errno (nothing is left behind).
 */
int gw_cgroup_create_in(struct gw_cgroup *cg, const char *root, const char *id,
			const struct policy_limits *lim, uid_t uid, gid_t gid, char *why,
			size_t size);

/**
 * gw_cgroup_join() - move process @pid into @cg for the run's user (the daemon's part of
 * delegation: on cgroup v2 the user may not move a process from the cgroup it is in to one below
 * another branch, whose common ancestor the user cannot write)
 * @cg:		the run's cgroup (v2: its folder; v1: each controller's)
 * @pid:	the process (the launcher's child that becomes the sandbox)
 * @uid:	the run's user (the uid the parent read off its control connection): the
 *		process's real and effective uid must be it
 * @netns_fd:	the run's network namespace: the process must be in it (/proc/@pid/ns/net)
 * @why:	on refusal, a reason for the client
 * @size:	size of @why
 *
 * @pid is written into each folder's cgroup.procs; /proc/@pid is held open from the checks to
 * the end, and a process that ended meanwhile fails the call (-ESRCH).
 *
 * Return: 0; -EPERM another user's process or one outside the run's namespace; -EINVAL pid 0
 * or 1; -ENOENT the run has no cgroup; another negative errno.
 */
int gw_cgroup_join(const struct gw_cgroup *cg, pid_t pid, uid_t uid, int netns_fd, char *why,
		   size_t size);

/**
 * gw_cgroup_remove() - kill what is left in @cg's folders, remove them
 * @cg:		the cgroup (its folders are cleared); empty: nothing to do
 * Return: 0, or the first negative errno.
 */
int gw_cgroup_remove(struct gw_cgroup *cg);

#endif /* WARDEN_GATEWAY_CGROUP_H */

/* netns_internal.h - what netns/'s own files share: the slot records of the
 * allocator (alloc.c) that the run lifecycle (lifecycle.c) and the unit tests use, and the
 * pieces of a run's network (link.c) that lifecycle.c's stages call. */
#ifndef WARDEN_NETNS_INTERNAL_H
#define WARDEN_NETNS_INTERNAL_H

#include <limits.h>
#include <sys/types.h>

#include "netns/netns.h"

/**
 * struct netns_slot_rec - what a slot file records about its owner
 * @pid:	owner process
 * @start:	owner's start time (field 22 of /proc/<pid>/stat), against pid reuse
 * @id:		run id
 * @ifname:	host-side interface
 * @name:	namespace name
 * @mounted:	the namespace was bind-mounted under the pool's netns_dir
 */
struct netns_slot_rec {
	pid_t pid;
	unsigned long long start;
	char id[NETNS_ID_MAX];
	char ifname[IFNAMSIZ];
	char name[IFNAMSIZ];
	bool mounted;
};

/**
 * struct netns_stale - a slot whose owner is gone, as netns_slot_list_stale() found it
 * @slot:	slot number
 * @rec:	its record
 */
struct netns_stale {
	uint32_t slot;
	struct netns_slot_rec rec;
};

/**
 * netns_slot_rec_format() - render @rec as one line of text ("pid=... mounted=1\n")
 * @rec:	record to render
 * @out:	buffer (256 bytes is always enough)
 * @outlen:	size of @out
 *
 * Return: the length written (without NUL), or -ENOSPC when @out is too small.
 */
int netns_slot_rec_format(const struct netns_slot_rec *rec, char *out, size_t outlen);

/**
 * netns_slot_rec_parse() - parse a line netns_slot_rec_format() wrote
 * @text:	NUL-terminated line (the trailing newline is optional)
 * @ret:	on success, the record
 *
 * Return: 0, or -EINVAL when @text is not a complete, valid record.
 */
int netns_slot_rec_parse(const char *text, struct netns_slot_rec *ret);

/**
 * netns_owner_alive() - whether the process that wrote @rec still runs
 * (same pid, same start time, not a zombie)
 * @rec:	slot record
 *
 * Return: true when the owner runs; false when it is gone or /proc cannot tell.
 */
bool netns_owner_alive(const struct netns_slot_rec *rec);

/**
 * netns_slot_alloc() - claim a free slot for @rec under the state dir's lock,
 * scanning round-robin from where the last allocation stopped, reclaiming a
 * slot whose owner is gone and whose interface no longer exists
 * @cfg:	pool configuration
 * @rec:	record to store in the slot
 * @ret_slot:	on success, the slot claimed
 * @err:	on failure, what went wrong; may be NULL
 *
 * Return: 0, -ENOSPC when every slot is taken, or another negative errno.
 */
int netns_slot_alloc(const struct netns_pool_config *cfg, const struct netns_slot_rec *rec,
		     uint32_t *ret_slot, struct wd_err *err);

/**
 * netns_slot_release() - free @slot if its record still names run @id (and,
 * when @pid is non-zero, owner @pid); an unreadable record is freed too
 * @cfg:	pool configuration
 * @slot:	slot to free
 * @id:		run id the record must name
 * @pid:	owner the record must name, or 0 for any
 *
 * Return: 1 when the slot was freed, 0 when it was already free or is now
 * someone else's, or a negative errno.
 */
int netns_slot_release(const struct netns_pool_config *cfg, uint32_t slot, const char *id,
		       pid_t pid);

/**
 * netns_slot_list_stale() - list the slots whose owner is gone
 * @cfg:	pool configuration
 * @ret_list:	on success, a malloc'd array (NULL when none); free() it
 * @ret_n:	on success, its length
 *
 * Return: 0, or a negative errno.
 */
int netns_slot_list_stale(const struct netns_pool_config *cfg, struct netns_stale **ret_list,
			  size_t *ret_n);

/**
 * netns_slot_set_owner() - under the lock, make @pid the owner of @slot if its
 * record still names run @id
 * @cfg:	pool configuration
 * @slot:	the slot
 * @id:		run id the record must name
 * @pid:	new owner (its start time is read from /proc)
 *
 * Return: 0; -ESTALE when the slot no longer holds run @id; -ENOENT when @pid
 * does not exist; another negative errno.
 */
int netns_slot_set_owner(const struct netns_pool_config *cfg, uint32_t slot, const char *id,
			 pid_t pid);

/**
 * netns_slot_read() - read the record of @slot under the state dir's lock
 * @cfg:	pool configuration
 * @slot:	the slot
 * @ret_rec:	on success, its record
 *
 * Return: 0, -ENOENT (free), -EINVAL (torn) or another negative errno.
 */
int netns_slot_read(const struct netns_pool_config *cfg, uint32_t slot,
		    struct netns_slot_rec *ret_rec);

/* ------------------------------------------------------------ link.c: the stages' pieces */

struct nl_sock;

/* What the birth thread is given (@adopt_fd) and hands back. */
struct netns_birth_arg {
	int adopt_fd; /* an existing namespace to enter, or -1 for a new one */
	int ns_fd;
	struct nl_sock *sk;
	int ret;
	const char *step;
	char detail[PATH_MAX];
};

int netns_birth(struct netns_birth_arg *b, int adopt_fd, struct wd_err *err);
int netns_bind(const char *dir, const char *name, int ns_fd, struct wd_err *err);
int netns_unbind(const char *dir, const char *name);
int netns_ifindex_in(struct nl_sock *sk, const char *ifname);
int netns_veth_create(struct nl_sock *sk, const char *ifname, int ns_fd, struct wd_err *err);
int netns_host_harden(const char *ifname, struct wd_err *err);
int netns_host_side(struct nl_sock *sk, const struct netns_run *run, struct wd_err *err);
int netns_sandbox_side(struct nl_sock *sk, const struct netns_run *run, struct wd_err *err);
int netns_link_delete_if_present(struct nl_sock *sk, const char *ifname);
int netns_delete_link(const char *ifname);

#endif /* WARDEN_NETNS_INTERNAL_H */

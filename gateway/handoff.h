/* handoff.h - the exec hand-off from `warden-gateway` (the privileged parent,
 * main.c) to `warden-gateway-worker` (the data plane, worker.c): where the
 * worker image is found, which descriptors it inherits at which numbers, and
 * how the configuration travels (internal header: only main.c, worker.c and
 * handoff.c include it).
 *
 * The worker is a separate executable so that the process that reads sandbox
 * bytes never has libnftnl, libmnl or libnl mapped (ARCHITECTURE.md §1): it
 * links wd_gateway, wd_policy, wd_audit and wd_common, never wd_nft or
 * wd_conf_host. The parent execs it with exactly these descriptors open besides
 * 0, 1 and 2 (everything else is close-on-exec):
 *
 *   GW_WORKER_FD_CONFIG (3)   a sealed memfd holding the effective gateway
 *                             configuration as YAML (conf_render_yaml)
 *   GW_WORKER_FD_CHANNEL (4)  with privilege separation: the worker's end of
 *                             the SOCK_SEQPACKET channel (privsep.c)
 *   GW_WORKER_FD_LISTEN (4..) without it, with --listen-fds N: the N listening
 *                             sockets a rootless run's launcher made inside the
 *                             run's network namespace (warden-gateway got them at
 *                             3.. and moves them up by one)
 *
 * and the argv `warden-gateway-worker --config-fd 3 [--channel-fd 4 --uid U
 * --gid G | --listen-fds N] [--manage-nft] [--no-nflog] [--verbose]`.
 */
#ifndef WARDEN_GATEWAY_HANDOFF_H
#define WARDEN_GATEWAY_HANDOFF_H

#include "common/common.h"
#include "conf/conf.h"
#include "policy/policy.h"

#include <stddef.h>

#define GW_WORKER_NAME "warden-gateway-worker"
#define GW_WORKER_FD_CONFIG 3
#define GW_WORKER_FD_CHANNEL 4
/* without privilege separation, `--listen-fds N`: N listening sockets from here on (the
 * channel's number is free then) */
#define GW_WORKER_FD_LISTEN 4
#define GW_WORKER_LISTEN_MAX 12
/* most descriptors gw_handoff_exec() places: the config and the channel, or the config and
 * the listeners */
#define GW_HANDOFF_MAX_FDS (1 + GW_WORKER_LISTEN_MAX)

/**
 * gw_handoff_find_worker() - open the worker executable for fexecve()
 * @explicit_path: the path given with --worker, or NULL: then the worker is
 *		looked for next to this program (/proc/self/exe, a build tree),
 *		then in ../libexec/warden from its folder (an install moved to
 *		another prefix), then in the compiled-in libexec folder; never
 *		in $PATH
 * @ret_fd:	on success an O_PATH, close-on-exec descriptor of it
 * @path:	on success the path that was opened (for messages)
 * @size:	bytes at @path
 * @err:	why none was usable
 *
 * A candidate must be a regular, executable file owned by root, by the
 * effective user or by the owner of this program, and writable by nobody
 * else (a root gateway must not run a binary another user can replace).
 * A found but unsafe candidate is refused, not skipped.
 *
 * Return: 0, -ENOENT (none found), -EPERM (unsafe), or another negative errno.
 */
int gw_handoff_find_worker(const char *explicit_path, int *ret_fd, char *path, size_t size,
			   struct wd_err *err);

/**
 * gw_handoff_conf_fd() - a sealed memfd holding @conf as YAML
 * @conf:	the effective configuration (command-line overrides applied)
 * @ret_fd:	on success the memfd (close-on-exec, positioned at 0, sealed
 *		against writing, growing and shrinking)
 * @err:	what failed
 *
 * Return: 0, or a negative errno.
 */
int gw_handoff_conf_fd(const struct wd_gwconf *conf, int *ret_fd, struct wd_err *err);

/**
 * gw_handoff_conf_read() - read the configuration the parent handed over
 * @fd:		the descriptor (GW_WORKER_FD_CONFIG); it must be a memfd sealed
 *		as gw_handoff_conf_fd() leaves it. Not closed.
 * @conf:	filled on success
 * @err:	what was wrong (not sealed, too large, a config error)
 *
 * Return: 0, -EBADF (not the parent's memfd), -EINVAL (not a valid
 * configuration), or another negative errno.
 */
int gw_handoff_conf_read(int fd, struct wd_gwconf *conf, struct wd_err *err);

/**
 * gw_handoff_exec() - exec the worker with descriptors at fixed numbers
 * @exe_fd:	from gw_handoff_find_worker()
 * @fds:	descriptors to pass; @fds[i] becomes descriptor 3 + i
 * @n:		how many (at most GW_HANDOFF_MAX_FDS)
 * @argv:	the worker's argv
 *
 * Every other descriptor above 2 is made close-on-exec first. Meant for the
 * single-threaded parent (in the child after fork(), or in place of the
 * process when there is no privilege separation).
 *
 * Return: only on failure: a negative errno (the descriptors may have moved).
 */
int gw_handoff_exec(int exe_fd, const int *fds, unsigned n, char *const argv[]);

#endif /* WARDEN_GATEWAY_HANDOFF_H */

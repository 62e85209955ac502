/* gw.h - the gateway module's API for warden-gateway's main: the worker (an
 * event loop over sockets a privileged parent opened: gw_new(), gw_serve(),
 * gw_free()), its channel to that parent (privsep.h), the listening sockets
 * (fds.h) and binding NFLOG. The rooms inside are described in
 * docs/gateway-house.md; each has its own internal header. */
#ifndef WARDEN_GATEWAY_GW_H
#define WARDEN_GATEWAY_GW_H

#include "audit/audit.h"
#include "common/common.h"
#include "gateway/addr.h"
#include "gateway/fds.h"
#include "gateway/nflog.h"
#include "gateway/privsep.h"
#include "conf/conf.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>

struct gw;
struct gw_ctl_req;

/**
 * gw_new() - a gateway over already-open sockets
 * @conf:	configuration (copied)
 * @fds:	listening sockets (owned by the gateway from now on, even on error)
 * @log:	audit log (borrowed; may be NULL: no events are written)
 * @ret:	the gateway
 * @err:	what failed
 *
 * Creates the epoll instance, c-ares channel (upstream resolvers: the
 * config's, else /etc/resolv.conf) and registers every socket.
 *
 * Return: 0, or a negative errno.
 */
int gw_new(const struct wd_gwconf *conf, struct gw_fds *fds, struct audit_log *log, struct gw **ret,
	   struct wd_err *err);

/**
 * gw_serve() - run the worker's event loop until gw_stop() or a fatal error
 * Return: 0 after a stop, or a negative errno when the loop itself failed.
 */
int gw_serve(struct gw *g);

/**
 * gw_register_boot() - register the run of @req (a `register` request) before the loop serves,
 * owned by @uid, audited as run.gateway-register: the proxy-mode gateway's `--run FILE`, where
 * a run cannot be registered over the control channel (Windows) or need not be
 * @g:		the gateway (proxy mode, no privileged parent)
 * @req:	the request, as gw_ctl_parse() made it
 * @uid:	its owner
 * @why:	on error, why
 * @why_size:	its size
 *
 * Return: 0, -EINVAL when @g is not a proxy-mode gateway of its own, or gw_run_register()'s.
 */
int gw_register_boot(struct gw *g, const struct gw_ctl_req *req, uid_t uid, char *why,
		     size_t why_size);

/**
 * gw_run_counts() - what the run called @id was counted at (a --run gateway's end, written for
 * warden.exe's run.exit)
 * @g:		the gateway
 * @id:		the run
 * @ret:	its denials, bytes up and bytes down
 * Return: 0, or -ENOENT when no such run is registered.
 */
int gw_run_counts(struct gw *g, const char *id, uint64_t ret[3]);

/** gw_stop() - ask the loop to return (async-signal-safe). */
void gw_stop(struct gw *g);

/** gw_free() - close every connection and socket and release @g. */
void gw_free(struct gw *g);

/**
 * gw_set_parent() - let @g send run updates to its privileged parent
 * @g:		the gateway
 * @fd:		the worker's end of the socketpair (owned by @g from now on)
 * @manage_nft:	true: register/unregister wait for the parent to add/remove
 *		the run's nft set elements; false: the channel only watches
 *		for the parent going away
 *
 * A malformed or unexpected message, or the parent closing the channel,
 * ends gw_serve() with -EBADMSG / -EPIPE (fail closed).
 *
 * Return: 0, or a negative errno.
 */
int gw_set_parent(struct gw *g, int fd, bool manage_nft);

/**
 * gw_ctl_client() - `warden-gateway ctl [--socket PATH] OP [options]`: one request to the control
 * socket, its answer line on stdout
 * @argc:	arguments from "ctl" on
 * @argv:	them
 * @sock:	the control socket when --socket is not given
 * @usage:	prints the program's usage (called on a usage error)
 *
 * Return: the exit status: 0 the answer was ok, 1 it was not, 2 a usage error or an unreadable
 * policy, 125 no answer (the socket unreachable).
 */
int gw_ctl_client(int argc, char **argv, const char *sock, void (*usage)(FILE *f));

/* start.c: the last stage of start, shared by the worker and the proxy-only gateway (macOS) */

/**
 * gw_start_ship() - copy the audit log's lines to @conf's audit.ship sink, if one is set
 * Return: 0, or -1 when the sink cannot be set up (logged).
 */
int gw_start_ship(const struct wd_gwconf *conf, struct audit_log *log);

/**
 * gw_start_serve() - compose the gateway over @fds and @log and serve until stopped
 * @conf:	the effective configuration
 * @fds:	its listening sockets (taken)
 * @log:	the audit log (not closed)
 * @priv:	the channel to the privileged parent, or -1 (taken)
 * @manage_nft:	the parent applies run updates to the nft table
 * @boot:	a register request to apply before serving (`--run FILE`, proxy mode), or NULL
 *
 * Return: the process's exit status: 0 after SIGTERM or SIGINT, 1 when the gateway could not
 * start, @boot was refused, or its loop or channel failed (logged).
 */
int gw_start_serve(const struct wd_gwconf *conf, struct gw_fds *fds, struct audit_log *log,
		   int priv, bool manage_nft, const struct gw_ctl_req *boot);

/**
 * gw_start_on_ready() - call @fn(@arg) once, when gw_start_serve() is about to serve: the
 * listeners bound, the --run run registered (the Windows gateway's readiness event: warden.exe
 * waits on it rather than probing the port, which would be a connection to audit)
 */
void gw_start_on_ready(void (*fn)(void *arg), void *arg);

/**
 * gw_start_on_stop() - call @fn(@g, @arg) once gw_start_serve()'s loop has returned, before the
 * gateway is freed (its runs still registered): the --run gateway's counts written
 */
void gw_start_on_stop(void (*fn)(struct gw *g, void *arg), void *arg);

/**
 * gw_start_standalone() - the whole gateway in this process: the audit log opened, its
 * listeners and control socket made (or, with @listen_fds, the listeners adopted from
 * descriptor @listen_from on), served until stopped, the control socket removed
 * @conf:	the effective configuration
 * @nflog:	bind the NFLOG group (Linux, transparent mode, as root; ignored elsewhere)
 * @listen_from: the first handed-in listener's descriptor
 * @listen_fds:	how many were handed in (0: open them from @conf)
 * @boot:	a run registered before serving (gw_start_serve()), or NULL
 *
 * Return: the process's exit status, as gw_start_serve().
 */
int gw_start_standalone(const struct wd_gwconf *conf, bool nflog, int listen_from, int listen_fds,
			const struct gw_ctl_req *boot);

#endif /* WARDEN_GATEWAY_GW_H */

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
#include <stdint.h>

struct gw;

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

#endif /* WARDEN_GATEWAY_GW_H */

/* parent.h - the privileged parent of warden-gateway after the handoff
 * (internal header: only main.c and parent.c include it; parent.c is linked
 * into the warden-gateway executable alone, never into wd_gateway). */
#ifndef WARDEN_GATEWAY_PARENT_H
#define WARDEN_GATEWAY_PARENT_H

#include "conf/conf.h"

#include <stdbool.h>
#include <sys/types.h>

/* Where the parent records the runs it plumbed in users' namespaces (daemon mode), one file
 * each, so that a parent started after one that died reclaims them. */
#define GW_PARENT_RUNS_DIR "/run/warden/gateway-runs"

/**
 * gw_parent_serve() - serve the worker's run updates until it exits
 * @sock:	the parent's end of the socketpair (closed on return)
 * @child:	the worker's pid
 * @conf:	the gateway configuration (nft table, prefix, pools)
 * @manage_nft:	apply run updates to the nft table; false: any run update
 *		is a protocol violation
 * @log:	the central log (chained; borrowed), or NULL: no signed run records
 * @key:	the daemon's private key for them (borrowed), or NULL
 * @ct:		a conntrack socket handed in (--listen-fds: the UDP relay's, made in the
 *		namespace of a container run's table; taken over), or -1: the parent opens
 *		one in its own namespace when the worker first asks
 *
 * SIGTERM, SIGINT and SIGCHLD must be blocked by the caller: they are read
 * from a signalfd. SIGTERM/SIGINT are passed on to the worker. A malformed
 * or unexpected message kills the worker (fail closed). When the worker is
 * gone, every set element the parent added is removed again. A daemon-mode
 * run that ends (its RUN_DEL, or the worker's end) gets a signed run.record
 * in the central log (audit_write_run_record()).
 *
 * Return: the exit status for the gateway: the worker's (128+N for a
 * signal), or 1 after a protocol violation or when serving failed.
 */
int gw_parent_serve(int sock, pid_t child, const struct wd_gwconf *conf, bool manage_nft,
		    struct audit_log *log, struct audit_key *key, int ct);

#endif /* WARDEN_GATEWAY_PARENT_H */

/* fds.h - the sockets the privileged parent opens for its worker (fds.c): the
 * transparent, proxy, DNS, UDP relay and control listeners, the audit log and NFLOG. */
#ifndef WARDEN_GATEWAY_FDS_H
#define WARDEN_GATEWAY_FDS_H

#include "common/common.h"
#include "conf/conf.h"

/**
 * struct gw_fds - the sockets a privileged parent opens for a worker
 * (-1 when absent)
 */
struct gw_fds {
	int transparent[2]; /* [0] v4, [1] v6 */
	int proxy[2];
	int dns_udp[2];
	int dns_tcp[2];
	int udp[2]; /* the UDP relay's port (ports.udp) */
	int ctl;
	int audit; /* the audit log (a regular file, O_APPEND), or -1 */
	int nflog; /* an NFLOG netlink socket bound to the config's group, or -1 */
	int ct;	   /* inherited only: a conntrack socket of a rootless run's namespace, or -1 */
};

/** gw_fds_init() - mark every slot of @fds absent (-1). */
void gw_fds_init(struct gw_fds *fds);

/**
 * gw_fds_open() - create and bind every listening socket of @conf
 * @conf:	the configuration
 * @ctl_path:	control socket path (its folder is created; the socket is
 *		made connectable by every user: requests are checked by uid)
 * @fds:	the sockets (all CLOEXEC, non-blocking)
 * @err:	what failed
 *
 * Return: 0, or a negative errno (nothing is left open).
 */
int gw_fds_open(const struct wd_gwconf *conf, const char *ctl_path, struct gw_fds *fds,
		struct wd_err *err);

/**
 * gw_fds_inherit() - adopt the listening sockets a launcher made for this gateway elsewhere (a
 * rootless run's own network namespace) and left open at descriptors @first..@first+@n-1
 * @conf:	the configuration: its ports say which slot each socket fills
 * @first:	the first descriptor
 * @n:		how many
 * @fds:	the slots to fill (gw_fds_init()ed, or holding the control socket); each socket
 *		becomes CLOEXEC, non-blocking and tuned like gw_fds_open()'s
 * @err:	what failed
 *
 * Each must be a bound IPv4 or IPv6 socket (TCP listening, or UDP; IPv6 with IPV6_V6ONLY)
 * whose local port is one of the config's, and fill a slot no other one fills; or a
 * NETLINK_NETFILTER socket: the first is the NFLOG group bound where the listeners live (the
 * NFLOG slot), a second one the UDP relay's conntrack socket of that namespace (the ct slot).
 *
 * Return: 0, or a negative errno (the caller closes @fds).
 */
int gw_fds_inherit(const struct wd_gwconf *conf, int first, int n, struct gw_fds *fds,
		   struct wd_err *err);

/** gw_fds_close() - close every socket in @fds. */
void gw_fds_close(struct gw_fds *fds);

#endif /* WARDEN_GATEWAY_FDS_H */

/* run_rootless.c - the network of a rootless run (`warden run --mode rootless`): a user
 * namespace and a network namespace of the caller's own, made without any privilege.
 *
 * Theory of operation (docs/run.md "Rootless mode"). A short-lived child (the "maker")
 * unshares a user and a network namespace, maps the caller's uid and gid onto themselves
 * (so it holds every capability over the new namespaces, and over nothing else), and in
 * the new network namespace:
 *
 *   net       lo up; the gateway's and the program's addresses (slot 0 of the pools) on lo;
 *             default routes via lo from the program's addresses     (netns_rootless_up())
 *   nft       the run's own table (FW_MODE_RUN: every TCP connection and DNS query DNATed
 *             to the gateway's address, the gateway's ports there, loopback; everything else
 *             dropped and logged), installed and audited clean       (nft/)
 *   sockets   the gateway's listening sockets (transparent, proxy, DNS over UDP and TCP,
 *             IPv4 and IPv6) bound to the gateway's address, and the liveness probe's UDP
 *             socket bound to the program's IPv4 address
 *   hand-off  those sockets and the two namespaces' descriptors sent to the launcher
 *             (SCM_RIGHTS), then the maker exits
 *
 * The namespaces live as long as something holds them: the launcher's descriptors, the
 * embedded gateway's listening sockets, the sandbox. Nothing of a rootless run exists on the
 * host: no veth, no host nft table, no mount; when the launcher dies (even SIGKILL) its
 * gateway and sandbox die with it (PR_SET_PDEATHSIG) and the kernel frees the namespaces.
 */
#include "launcher/run.h"
#include "netns/netns.h"
#include "nft/nft.h"
#include "plumb/plumb.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

int run_rootless_fw_config(const struct wd_gwconf *g, struct fw_config *fc,
			   struct netns_addrs *ret_addrs)
{
	struct netns_pool_config nc;
	struct netns_addrs a;

	if (run_netns_config(g, &nc) || netns_slot_addrs(&nc, 0, &a))
		return -EINVAL;
	plumb_fw_config(g, fc);
	fw_config_rootless(fc, &a.host4, &a.host6);
	if (ret_addrs)
		*ret_addrs = a;
	return 0;
}

/* mode_docker.c - the container mode's table (struct run_mode_ops, internal.h): the run of a
 * backend whose sandbox brings its own network namespace (the Docker backend,
 * sandbox_docker.c), which the launcher need not be able to enter.
 *
 * The network stage asks the backend (its verb network) to make the container, whose first
 * process (warden-docker-init) builds what a rootless run's maker builds (mode_rootless.c: lo
 * with slot 0's addresses, the run's own table, audited) in the container's namespace and
 * hands back the gateway's listening sockets, the NFLOG socket, the liveness probe's socket
 * and the UDP relay's (its two listeners, a conntrack socket: the table redirects UDP to a
 * synthetic address to it, docs/gateway.md "UDP by name"); from there on the run is a
 * rootless one's: an embedded gateway on those sockets (gateway_inside), the probe from
 * inside, nothing of the network on the host for gc. The container must exist before the
 * gateway starts, and it needs the write grants (its bind mounts) and the program's stdio (its
 * client's) at creation: those two stages run first, here, and do nothing when the stage table
 * reaches them. The limits are the engine's (--memory, --pids-limit, --cpus: the container's
 * cgroup), not Warden's.
 */
#include "run/internal.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

/* No cgroup of Warden's: the engine holds the limits; the timeout is the wait's. */
static int docker_prereq(struct run *r)
{
	r->limits.lkind = LIMITS_NONE;
	return 0;
}

static int docker_net_up(struct run *r)
{
	struct run_rootless *rl = &r->network.rl;
	struct sandbox_net n = {0};
	int ret;

	run_rootless_init(rl);
	for (int i = 0; i < FW_RUN_NLISTEN; i++)
		n.listen[i] = -1;
	n.nflog = n.probe = -1;
	for (int i = 0; i < FW_RUN_NUDP; i++)
		n.udp[i] = -1;
	if (run_rootless_fw_config(&r->input.gwc, &n.fc, &n.addr))
		return run_fail(r, "network", "correct pools.runs_v4 / runs_v6",
				"bad run pool %s or %s", r->input.gwc.pool_v4,
				r->input.gwc.pool_v6);
	r->network.fcfg = n.fc;
	inet_ntop(AF_INET, &n.addr.host4, r->network.host4, sizeof(r->network.host4));
	inet_ntop(AF_INET6, &n.addr.host6, r->network.host6, sizeof(r->network.host6));
	inet_ntop(AF_INET, &n.addr.sbx4, r->rec.sbx4, sizeof(r->rec.sbx4));
	inet_ntop(AF_INET6, &n.addr.sbx6, r->rec.sbx6, sizeof(r->rec.sbx6));
	r->input.argv[0] = r->input.argv0;
	ret = run_sandbox_grants(r);
	if (!ret)
		ret = run_stdio_setup(r);
	if (!ret)
		ret = run_sandbox_network(r, &n);
	/* what came, even with a failure after it: net_down closes it */
	for (int i = 0; i < RUN_ROOTLESS_NLISTEN; i++)
		rl->listen[i] = n.listen[i];
	rl->listen[RUN_ROOTLESS_NLISTEN] = n.nflog;
	for (int i = 0; i < FW_RUN_NUDP; i++)
		rl->listen[RUN_ROOTLESS_NLISTEN + 1 + i] = n.udp[i];
	rl->probe_fd = n.probe;
	if (ret)
		return ret;
	rl->addr = n.addr;
	r->network.net.netns_fd = -1;
	snprintf(r->network.net.ifname, sizeof(r->network.net.ifname), "lo");
	run_state_save(r);
	run_note(r, "network: the container's own namespace, built by its init");
	return 0;
}

static void docker_net_down(struct run *r)
{
	/* the namespace is the container's: it goes with the container (the sandbox's release) */
	run_rootless_close(&r->network.rl);
}

static int docker_limits(struct run *r)
{
	memset(&r->limits.lim, 0, sizeof(r->limits.lim));
	r->limits.lim.kind = LIMITS_NONE;
	r->limits.lim.lim = r->input.pol->limits;
	return 0;
}

static void docker_isolation(const struct run *r, const char *sb, char *out, size_t size)
{
	snprintf(out, size,
		 "%s,uid=%u,limits=engine(memory:--memory=--memory-swap+pids:--pids-limit+cpu:"
		 "--cpus+disk:tmpfs)+time:wall-clock",
		 sb, (unsigned)r->input.uid);
}

const struct run_mode_ops run_mode_docker = {
    .name = "container",
    .own_userns = true,
    .by_daemon = false,
    .gateway_inside = true,
    .prereq = docker_prereq,
    .net_up = docker_net_up,
    .net_down = docker_net_down,
    .limits = docker_limits,
    .isolation = docker_isolation,
    .finish = NULL,
};

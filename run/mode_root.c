/* mode_root.c - root mode's table (struct run_mode_ops, internal.h): the launcher is root, the
 * run's network is on the host (network.c: a pooled or new netns + veth, the host's nft
 * table's elements), its cgroups are the launcher's own (limits.c), recorded for gc.
 */
#include "run/internal.h"

#include <stdio.h>

/* The limits mechanism, probed so that run.start can name it. */
static int root_prereq(struct run *r)
{
	r->limits.lkind = limits_probe();
	return 0;
}

/* The run's cgroups with the policy's limits (recorded for the teardown and gc). */
static int root_limits(struct run *r)
{
	struct wd_err err;
	int ret;

	wd_err_clear(&err);
	ret = limits_create(&r->limits.lim, r->id, &r->input.pol->limits, &err);
	if (ret)
		return run_fail(r, "limits", "`warden doctor` checks cgroups", "%s", err.msg);
	if (r->limits.lim.kind != r->limits.lkind)
		r->limits.lkind = r->limits.lim.kind;
	for (int i = 0; i < LIMITS_V1_COUNT; i++)
		snprintf(r->rec.cg[i], sizeof(r->rec.cg[i]), "%s", r->limits.lim.dir[i]);
	run_state_save(r);
	return 0;
}

static void root_isolation(const struct run *r, const char *sb, char *out, size_t size)
{
	snprintf(out, size, "netns+veth+nft,%s,uid=%u,limits=%s", sb, (unsigned)r->input.uid,
		 limits_kind_name(r->limits.lkind));
}

const struct run_mode_ops run_mode_root = {
    .name = "root",
    .own_userns = false,
    .by_daemon = false,
    .gateway_inside = false,
    .prereq = root_prereq,
    .net_up = run_network_up,
    .net_down = run_network_down,
    .limits = root_limits,
    .isolation = root_isolation,
    .finish = NULL,
};

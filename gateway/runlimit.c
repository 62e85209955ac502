/* runlimit.c - the budgets of the run table: the worker's descriptors shared out between the
 * relays and the control socket, the connection limits a new connection meets (the worker's,
 * the run's, its user's under the host's ceiling) and the one text of their refusal, and a
 * user's DNS query rate. */
#include "gateway/run.h"

#include <limits.h>
#include <stdio.h>

bool gw_runs_room(const struct gw_runs *t)
{
	return t->nconns < t->fd_conns;
}

enum gw_conn_limit gw_runs_conn_limit(const struct gw_runs *t, const struct gw_run *r)
{
	if (t->nconns >= t->lim->conns_total)
		return GW_LIMIT_GATEWAY;
	if (r->conns >= t->lim->conns_per_run)
		return GW_LIMIT_RUN;
	if (r->user && r->policy && r->policy->caps[POLICY_CAP_CONNECTIONS] &&
	    r->user->conns >= r->policy->caps[POLICY_CAP_CONNECTIONS])
		return GW_LIMIT_USER;
	return GW_LIMIT_NONE;
}

const char *gw_runs_conn_refusal(const struct gw_runs *t, const struct gw_run *r, const char *via,
				 char *buf, size_t size)
{
	switch (gw_runs_conn_limit(t, r)) {
	case GW_LIMIT_GATEWAY:
		snprintf(buf, size, "gateway connection limit reached%s", via);
		return buf;
	case GW_LIMIT_RUN:
		snprintf(buf, size, "run connection limit reached%s", via);
		return buf;
	case GW_LIMIT_USER:
		snprintf(buf, size,
			 "user connection limit reached: uid %u has %u connections, the host's "
			 "ceiling %s allows %llu%s",
			 (unsigned)r->uid, r->user->conns,
			 r->policy->caps_from[POLICY_CAP_CONNECTIONS],
			 (unsigned long long)r->policy->caps[POLICY_CAP_CONNECTIONS], via);
		return buf;
	case GW_LIMIT_NONE:
		break;
	}
	return NULL;
}

const char *gw_runs_room_refusal(const struct gw_runs *t, const char *via, char *buf, size_t size)
{
	snprintf(buf, size,
		 "gateway descriptor limit reached: its share of RLIMIT_NOFILE holds %u "
		 "connections%s",
		 t->fd_conns, via);
	return buf;
}

bool gw_runs_dns_take(struct gw_runs *t, struct gw_run *r)
{
	uint64_t cap = r->policy ? r->policy->caps[POLICY_CAP_DNS_QUERIES_PER_S] : 0;
	unsigned rate;

	if (!cap || !r->user)
		return true;
	rate = (unsigned)(cap > 1000000u ? 1000000u : cap); /* the parser's bound */
	if (gw_bucket_take(&r->user->dns_bucket, t->ev->now, rate, rate))
		return true;
	r->dns_limited++;
	r->user->dns_limited++;
	t->ev->stats.dns_limited++;
	return false;
}

static unsigned min_u(uint64_t a, uint64_t b)
{
	return (unsigned)(a < b ? a : b);
}

void gw_fd_share(uint64_t nofile, const struct gw_limits *lim, struct gw_fd_share *out)
{
	uint64_t room, ctl;

	if (!nofile) {
		out->conns = lim->conns_total;
		out->ctl = lim->ctl_total;
		out->pipes = UINT_MAX;
	} else {
		room = nofile > GW_FD_BASE ? nofile - GW_FD_BASE : 0;
		/* control: at most a quarter of the room */
		ctl = min_u(lim->ctl_total, room / 4 / GW_FD_PER_CTL);
		out->ctl = ctl < 2 ? 2 : (unsigned)ctl;
		/* the relays: what control can never take */
		room = room > ctl * GW_FD_PER_CTL ? room - ctl * GW_FD_PER_CTL : 0;
		out->conns = min_u(lim->conns_total, room * GW_CONNS_PER_PIPE /
							 (GW_FD_PER_CONN * GW_CONNS_PER_PIPE + 2));
		room = room > (uint64_t)out->conns * GW_FD_PER_CONN
			   ? room - (uint64_t)out->conns * GW_FD_PER_CONN
			   : 0;
		out->pipes = min_u(UINT_MAX, room / 2);
	}
	if (!out->conns)
		out->conns = 1;
	/* one uid: at most half of the control connections */
	out->ctl_per_uid = min_u(lim->ctl_per_uid, out->ctl / 2);
	if (!out->ctl_per_uid)
		out->ctl_per_uid = 1;
}

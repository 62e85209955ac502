/* revoke.c - a run's policy was replaced: every connection of that run the gateway let
 * through (resolving, connecting, relaying) is decided again against the new policy
 * (gw_tcp_recheck()), and each one no longer allowed is audited ("net.revoke", a denial of the
 * run) and reset. Connections still waiting for their first bytes need nothing: their decision
 * reads the run's policy when it is made. The DNS front reads the policy per query, so a
 * removed name stops resolving at once, and a connection to a synthetic address handed out
 * before is decided by its name (conn.c). Wired by gw.c as the run table's policy hook. */
#include "gateway/decide.h"
#include "gateway/tcp.h"

#include <stdio.h>

/* what @c was allowed for, decided again against its run's policy now; Return: still allowed */
static bool still_allowed(struct gw_conn *c, char *why, size_t size)
{
	const struct gw_addr *dst = c->up.family ? &c->up : &c->orig;
	struct gw_tcp_verdict v;
	char reason[600];

	/* a learn-mode run's rules are not its policy's: a replace changes no decision of it; a
	 * shadow run's policy denies nothing on the network (its new policy's next decisions say
	 * what it would deny) */
	if (c->run->learn || c->run->shadow)
		return true;
	gw_tcp_recheck(c->run->policy, &c->run->mcp, c->name, dst, c->oport, &v);
	if (v.action != GW_TCP_DENY)
		return true;
	snprintf(why, size, "revoked: the run's policy was replaced (%s): %s", c->run->policy_name,
		 gw_tcp_reason_text(&v, c->run->policy_name, reason, sizeof(reason)));
	return false;
}

unsigned gw_tcp_revoke(struct gw_tcp *t, const struct gw_run *r)
{
	struct gw_conn *c, *next;
	unsigned n = 0;
	char why[900];

	/* every connection past PEEK was let through by a decision: the name it was bound to or
	 * named (c->name), else its address (a cidr rule) */
	for (c = t->conns; c; c = next) {
		next = c->next; /* closing takes @c off the list */
		if (c->run != r)
			continue;
		if (c->st != GW_C_RESOLVE && c->st != GW_C_CONNECT && c->st != GW_C_RELAY)
			continue;
		if (still_allowed(c, why, sizeof(why)))
			continue;
		if (!c->decided && c->st == GW_C_RELAY && c->ufd >= 0) {
			/* relayed before its client spoke (server-first): it was allowed */
			c->decided = true;
			gw_conn_audit(c, "net.connect", true, "allowed");
		}
		gw_conn_audit(c, "net.revoke", false, why);
		gw_conn_reset(c, why);
		n++;
	}
	return n;
}

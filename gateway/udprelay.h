/* udprelay.h - the UDP relay (internal header; udprelay.c): datagrams a run sent to a synthetic
 * address, redirected by the nft table to ports.udp, relayed per flow to an address the gateway
 * resolved for the name bound there, when a `proto: udp` rule allows the name and port. */
#ifndef WARDEN_GATEWAY_UDPRELAY_H
#define WARDEN_GATEWAY_UDPRELAY_H

#include "gateway/auditrl.h"
#include "gateway/ev.h"
#include "gateway/privchan.h"
#include "gateway/resolve.h"
#include "gateway/run.h"
#include "gateway/udpflow.h"

/* the sweep's period */
#define GW_UDP_SWEEP_MS 5000u
/* the most flows a run holds at once, and all runs together */
#define GW_UDP_FLOWS_PER_RUN 256u
#define GW_UDP_FLOWS_MAX 8192u

/**
 * struct gw_udprelay - the relay
 * @ev:		the loop
 * @runs:	the run table (attribution, policies, synthetic names)
 * @res:	the resolver
 * @audit:	the audit front
 * @priv:	the channel to the privileged parent (its conntrack lookups)
 * @l:		the listeners at ports.udp, [0] IPv4, [1] IPv6 (fd -1: none)
 * @flows:	the flows
 * @sweep:	GW_T_UDPRELAY
 * @idle_ms:	a flow without a datagram either way this long ends (limits.udp_idle_timeout_s)
 * @ct:		a rootless run's conntrack socket (gw_ct_lookup() without a parent), or -1
 * @ct_seq:	its last request's number
 * @on:		a listener is in the loop
 */
struct gw_udprelay {
	struct gw_ev *ev;
	struct gw_runs *runs;
	struct gw_resolver *res;
	struct gw_audit *audit;
	struct gw_privchan *priv;
	struct gw_listener l[2];
	struct gw_udpflows flows;
	struct gw_timer sweep;
	uint64_t idle_ms;
	int ct;
	uint32_t ct_seq;
	bool on;
};

/**
 * gw_udprelay_init() - the relay over its listeners
 * @u:		the relay
 * @ev:		the loop
 * @runs:	the run table
 * @res:	the resolver
 * @audit:	the audit front
 * @priv:	the parent's channel
 * @fds:	the listeners (taken; -1: none): without any the relay stays idle
 * @idle_s:	limits.udp_idle_timeout_s
 * @ct:		*@ct: a conntrack socket of a rootless run's namespace (taken; -1: none): the
 *		relay asks it itself when it has no privileged parent
 * Return: 0, or a negative errno.
 */
int gw_udprelay_init(struct gw_udprelay *u, struct gw_ev *ev, struct gw_runs *runs,
		     struct gw_resolver *res, struct gw_audit *audit, struct gw_privchan *priv,
		     unsigned idle_s, int fds[2], int *ct);

/** gw_udprelay_free() - end every flow (with its closing event) and close the listeners. */
void gw_udprelay_free(struct gw_udprelay *u);

/** gw_udprelay_ready() - datagrams wait on listener @l. */
void gw_udprelay_ready(struct gw_udprelay *u, struct gw_listener *l);

/** gw_udprelay_up_event() - an event on a flow's upstream socket (@p: GW_REF_UDP_UP's). */
void gw_udprelay_up_event(void *p, unsigned events);

/** gw_udprelay_sweep() - end the idle flows and those of ended runs (GW_T_UDPRELAY). */
void gw_udprelay_sweep(struct gw_udprelay *u);

#endif /* WARDEN_GATEWAY_UDPRELAY_H */

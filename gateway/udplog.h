/* udplog.h - audit events for what the nft table drops and logs to NFLOG
 * (internal header; udplog.c): the worker reads the NFLOG socket its parent
 * bound, attributes each packet to a run by its source address and writes one
 * rate-limited event for it. */
#ifndef WARDEN_GATEWAY_UDPLOG_H
#define WARDEN_GATEWAY_UDPLOG_H

#include "gateway/auditrl.h"
#include "gateway/ev.h"
#include "gateway/run.h"
#include "conf/conf.h"

#include <stdbool.h>
#include <stdint.h>

/**
 * struct gw_udplog - the NFLOG reader
 * @ev:		the loop
 * @runs:	the run table (attribution by source address)
 * @audit:	the audit front
 * @conf:	the configuration (the nft limits its reasons name)
 * @fd:		the NFLOG socket, -1: none
 * @buf:	its receive buffer (allocated on first use)
 * @drops:	what matched no run, per kind
 * @timer:	GW_T_UDPLOG: write the summaries of what was rate-limited
 */
struct gw_udplog {
	struct gw_ev *ev;
	struct gw_runs *runs;
	struct gw_audit *audit;
	const struct wd_gwconf *conf;
	int fd;
	uint8_t *buf;
	struct gw_droplog drops[GW_DROP_N];
	struct gw_timer timer;
};

/**
 * gw_udplog_init() - the reader over an NFLOG socket
 * @u:		the reader
 * @ev:		the loop
 * @runs:	the run table
 * @audit:	the audit front
 * @conf:	the configuration (borrowed)
 * @fd:		*@fd is the socket (taken: set to -1); -1: no NFLOG
 * Return: 0, or a negative errno (epoll_ctl).
 */
int gw_udplog_init(struct gw_udplog *u, struct gw_ev *ev, struct gw_runs *runs,
		   struct gw_audit *audit, const struct wd_gwconf *conf, int *fd);

/** gw_udplog_free() - write the pending summaries, close the socket. */
void gw_udplog_free(struct gw_udplog *u);

/** gw_udplog_active() - an NFLOG socket is read. */
bool gw_udplog_active(const struct gw_udplog *u);

/** gw_udplog_event() - read the NFLOG socket: one audit event per dropped packet (rate-limited). */
void gw_udplog_event(struct gw_udplog *u);

/**
 * gw_udplog_drain() - read everything the NFLOG socket holds now (bounded), so that a run's
 * last dropped packets are counted and audited before its counters are read or it leaves
 */
void gw_udplog_drain(struct gw_udplog *u);

/** gw_udplog_flush() - write the summary events of suppressed packets (timer). */
void gw_udplog_flush(struct gw_udplog *u);

/** gw_udplog_run_end() - write @r's pending summaries before it leaves the table. */
void gw_udplog_run_end(struct gw_udplog *u, struct gw_run *r);

#endif /* WARDEN_GATEWAY_UDPLOG_H */

/* udpflow.h - the UDP relay's flows (internal header; udpflow.c): one entry per client address
 * and port, its state while the relay finds and decides its destination, the datagrams it holds
 * meanwhile (a small bounded queue, dropped beyond it), its byte counts, and the idle sweep. No
 * sockets, no clock: the caller passes the time and owns each flow's upstream descriptor. */
#ifndef WARDEN_GATEWAY_UDPFLOW_H
#define WARDEN_GATEWAY_UDPFLOW_H

#include "common/common.h"
#include "gateway/addr.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* datagrams and bytes one flow holds while it is decided (a QUIC client's Initial may span two
 * datagrams of 1,200 bytes and more); one more is dropped and counted */
#define GW_UDP_HOLD_MAX 8u
#define GW_UDP_HOLD_BYTES 16384u
/* the longest datagram the relay carries (an IPv4 UDP payload's most) */
#define GW_UDP_DATAGRAM_MAX 65507u

enum gw_udpflow_state {
	GW_UF_LOOKUP = 0, /* asking conntrack for the original destination */
	GW_UF_DECIDE,	  /* waiting for what decides (a QUIC ClientHello's rest, the name's
			     addresses) */
	GW_UF_OPEN,	  /* allowed: datagrams are relayed both ways */
	GW_UF_DENIED,	  /* denied: datagrams are dropped until the flow is idle */
};

/**
 * struct gw_udp_held - one datagram a flow holds while it is decided
 * @next:	the next one (in the order they came)
 * @len:	bytes in @data
 * @data:	the datagram
 */
struct gw_udp_held {
	struct gw_udp_held *next;
	size_t len;
	uint8_t data[];
};

/**
 * struct gw_udpflow - one flow: the datagrams of one client address and port to the relay
 * @client:	the client's address
 * @cport:	its port
 * @run:	the run the client's address belongs to (the caller's; opaque here)
 * @state:	where the flow is
 * @dst:	the original destination (the synthetic address the client sent to), once known
 * @dport:	its port
 * @name:	the name bound to @dst ("" until known, or when none)
 * @fd:		the upstream socket (-1: none); the caller opens and closes it
 * @opened_ms:	when the flow was made
 * @last_ms:	when a datagram last went either way
 * @up:		bytes relayed upstream
 * @down:	bytes relayed back to the client
 * @dropped:	datagrams dropped (beyond the hold bounds, or on a denied flow)
 * @held:	the datagrams held, oldest first
 * @held_tail:	the newest
 * @nheld:	how many
 * @held_bytes:	their bytes
 * @ctx:	the relay's own state of the flow (udprelay.c; freed by it before the flow)
 * @hash:	the key's hash (internal)
 */
struct gw_udpflow {
	struct gw_addr client;
	uint16_t cport;
	void *run;
	enum gw_udpflow_state state;
	struct gw_addr dst;
	uint16_t dport;
	char name[256];
	int fd;
	uint64_t opened_ms, last_ms;
	uint64_t up, down, dropped;
	struct gw_udp_held *held, *held_tail;
	size_t nheld, held_bytes;
	void *ctx;
	uint64_t hash;
};

/**
 * struct gw_udpflows - the relay's flows, by client address and port
 * @index:	the table
 * @n:		flows open
 * @max:	the most flows open at once (all runs); one more is refused
 */
struct gw_udpflows {
	struct wd_htable index;
	size_t n;
	size_t max;
};

/**
 * gw_udpflows_init() - an empty table
 * @t:		the table
 * @max:	the most flows it holds (at least 1)
 * Return: 0, -EINVAL or -ENOMEM.
 */
int gw_udpflows_init(struct gw_udpflows *t, size_t max);

/**
 * gw_udpflow_find() - the flow of @client:@cport, or NULL
 * @t:		the table
 * @client:	the client's address
 * @cport:	its port
 * Return: the flow, or NULL.
 */
struct gw_udpflow *gw_udpflow_find(struct gw_udpflows *t, const struct gw_addr *client,
				   uint16_t cport);

/**
 * gw_udpflow_add() - a new flow for @client:@cport in state GW_UF_LOOKUP
 * @t:		the table
 * @client:	the client's address
 * @cport:	its port
 * @run:	its run (the caller's)
 * @run_flows:	the run's count of open flows (incremented here; gw_udpflow_del() is given it
 *		back to decrement)
 * @run_max:	the most flows the run may hold (0: no bound of its own)
 * @now_ms:	the time
 * @out:	the flow, on success
 * Return: 0; -EEXIST (there is one), -ENOSPC (the table's or the run's bound), -ENOMEM.
 */
int gw_udpflow_add(struct gw_udpflows *t, const struct gw_addr *client, uint16_t cport, void *run,
		   size_t *run_flows, size_t run_max, uint64_t now_ms, struct gw_udpflow **out);

/**
 * gw_udpflow_del() - remove @f and free it with what it holds (its @fd must be closed first)
 * @t:		the table
 * @f:		the flow
 * @run_flows:	its run's count (decremented), or NULL
 */
void gw_udpflow_del(struct gw_udpflows *t, struct gw_udpflow *f, size_t *run_flows);

/**
 * gw_udpflow_hold() - keep a copy of a datagram while @f is decided
 * @f:		the flow
 * @buf:	the datagram
 * @len:	its length (at most GW_UDP_DATAGRAM_MAX)
 * Return: 0 held; -ENOBUFS beyond GW_UDP_HOLD_MAX or GW_UDP_HOLD_BYTES (dropped and counted in
 * @f->dropped); -EMSGSIZE too long (dropped, counted); -ENOMEM (dropped, counted).
 */
int gw_udpflow_hold(struct gw_udpflow *f, const uint8_t *buf, size_t len);

/**
 * gw_udpflow_take() - the oldest datagram @f holds, now the caller's to free()
 * @f:		the flow
 * Return: the datagram, or NULL when it holds none.
 */
struct gw_udp_held *gw_udpflow_take(struct gw_udpflow *f);

/**
 * gw_udpflow_idle() - the flows idle for at least @idle_ms, for the caller to close
 * @t:		the table
 * @now_ms:	the time
 * @idle_ms:	how long without a datagram ends a flow
 * @out:	room for @max flows
 * @max:	how many at most (the rest wait for the next sweep)
 * Return: how many were put in @out (still in the table: the caller ends each with
 * gw_udpflow_del()).
 */
size_t gw_udpflow_idle(const struct gw_udpflows *t, uint64_t now_ms, uint64_t idle_ms,
		       struct gw_udpflow **out, size_t max);

/**
 * gw_udpflows_free() - release the table; each flow left is freed with what it holds (the
 * caller closed their descriptors)
 * @t:		the table
 */
void gw_udpflows_free(struct gw_udpflows *t);

#endif /* WARDEN_GATEWAY_UDPFLOW_H */

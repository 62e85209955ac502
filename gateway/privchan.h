/* privchan.h - the worker's side of the channel to its privileged parent
 * (internal header; privchan.c): run updates sent as fixed-size messages and the
 * parent's replies matched to them in order. Anything unexpected on the channel,
 * or its end, stops the worker (fail closed). The control server (ctlsrv.c) is
 * its one user. */
#ifndef WARDEN_GATEWAY_PRIVCHAN_H
#define WARDEN_GATEWAY_PRIVCHAN_H

#include "gateway/addr.h"
#include "gateway/ev.h"
#include "gateway/privsep.h"

#include <stdbool.h>
#include <stdint.h>

/**
 * struct gw_privreq - one run update waiting for the parent, embedded in its owner
 * @next:	the next one sent
 * @seq:	its request number
 * @netns:	a GW_PRIV_NETNS_ADD (its reply is a struct gw_priv_netns_reply)
 * @ct:		a GW_PRIV_CT_GET (its reply is a struct gw_priv_ct_reply)
 * @done:	called once: with the parent's (checked) reply, or with NULL when
 *		the channel goes away first
 * @done_netns:	the same for a GW_PRIV_NETNS_ADD
 * @done_ct:	the same for a GW_PRIV_CT_GET
 */
struct gw_privreq {
	struct gw_privreq *next;
	uint32_t seq;
	bool netns;
	bool ct;
	void (*done)(struct gw_privreq *q, const struct gw_priv_reply *rep);
	void (*done_netns)(struct gw_privreq *q, const struct gw_priv_netns_reply *rep);
	void (*done_ct)(struct gw_privreq *q, const struct gw_priv_ct_reply *rep);
};

/* a message waiting for room on the channel (privchan.c) */
struct gw_privout;

/**
 * struct gw_privchan - the channel
 * @ev:		the loop (a broken channel ends it)
 * @fd:		the worker's end of the socketpair, -1: none
 * @manage_nft:	register/unregister wait for the parent's nft elements
 * @seq:	the last request number sent
 * @head:	requests waiting, oldest first
 * @tail:	the newest
 * @out:	messages the channel had no room for yet (the parent is behind), oldest first: sent
 *		in order as it drains (GW_POLL_OUT), before any newer one
 * @out_tail:	the newest of them
 */
struct gw_privchan {
	struct gw_ev *ev;
	int fd;
	bool manage_nft;
	uint32_t seq;
	struct gw_privreq *head, *tail;
	struct gw_privout *out, *out_tail;
};

/** gw_privchan_init() - no channel yet (@p->fd -1). */
void gw_privchan_init(struct gw_privchan *p, struct gw_ev *ev);

/**
 * gw_privchan_open() - use @fd as the channel
 * @p:		the channel
 * @fd:		the worker's end of the socketpair (owned by @p from now on)
 * @manage_nft:	run updates go through the parent
 * Return: 0, or a negative errno.
 */
int gw_privchan_open(struct gw_privchan *p, int fd, bool manage_nft);

/** gw_privchan_free() - every waiting request's @done gets NULL; the channel is closed. */
void gw_privchan_free(struct gw_privchan *p);

/**
 * gw_privchan_send() - ask the parent to apply a run update
 * @p:		the channel
 * @q:		the request (its @done set; linked until it is called)
 * @type:	GW_PRIV_RUN_ADD or GW_PRIV_RUN_DEL
 * @ifname:	the run's interface
 * @sb4:	its sandbox addresses and own gateway addresses (family 0: none)
 * @sb6:	see @sb4
 * @h4:		see @sb4
 * @h6:		see @sb4
 * A channel without room keeps the message and sends it as it drains: the request is linked.
 * Return: 0, or a negative errno (-ENOTCONN: no channel; @q is not linked).
 */
int gw_privchan_send(struct gw_privchan *p, struct gw_privreq *q, enum gw_priv_type type,
		     const char *ifname, const struct gw_addr *sb4, const struct gw_addr *sb6,
		     const struct gw_addr *h4, const struct gw_addr *h6);

/**
 * gw_privchan_send_netns() - ask the parent to plumb a run in a user's network namespace
 * @p:		the channel
 * @q:		the request (its @done_netns set; linked until it is called)
 * @m:		the request's message (its seq is filled in here)
 * @fd:		the namespace (sent along; the caller keeps and closes its own)
 * @client:	the client's control connection the register came on (sent along: the parent
 *		reads its credentials itself; the caller keeps its own)
 * Return: 0, or a negative errno (-ENOTCONN: no channel; -EINVAL: @m is not what the parent
 * accepts; @q is not linked).
 */
int gw_privchan_send_netns(struct gw_privchan *p, struct gw_privreq *q, struct gw_priv_netns *m,
			   int fd, int client);

/**
 * gw_privchan_send_join() - ask the parent to move process @pid into the cgroup of the
 * daemon-mode run on @ifname (the reply is a struct gw_priv_reply, to @q->done)
 * @p:		the channel
 * @q:		the request (its @done set; linked until it is called)
 * @ifname:	the run's interface
 * @pid:	the process
 * Return: 0, or a negative errno (-ENOTCONN: no channel; -EINVAL: a pid below 2; @q is not
 * linked).
 */
int gw_privchan_send_join(struct gw_privchan *p, struct gw_privreq *q, const char *ifname,
			  pid_t pid);

/**
 * gw_privchan_send_ct() - ask the parent for the original destination of a redirected UDP flow
 * (the reply is a struct gw_priv_ct_reply, to @q->done_ct)
 * @p:		the channel
 * @q:		the request (its @done_ct set; linked until it is called)
 * @reply:	the flow's reply tuple (gw_priv_ct_encode())
 * Return: 0, or a negative errno (-ENOTCONN: no channel; -EINVAL: a tuple the parent would
 * refuse; @q is not linked).
 */
int gw_privchan_send_ct(struct gw_privchan *p, struct gw_privreq *q,
			const struct gw_ct_tuple *reply);

/** gw_privchan_event() - an epoll event on the channel (a reply, or its end). */
void gw_privchan_event(struct gw_privchan *p, unsigned events);

#endif /* WARDEN_GATEWAY_PRIVCHAN_H */

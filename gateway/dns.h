/* dns.h - the DNS front's internals (internal header): where an answer goes,
 * the UDP send queue, a forwarded query, and the functions the DNS files share:
 * dnsudp.c (the UDP sending side), dnsanswer.c (one query decided, answered and
 * audited), dnsfront.c (the UDP and TCP listeners). */
#ifndef WARDEN_GATEWAY_DNS_H
#define WARDEN_GATEWAY_DNS_H

#include "gateway/auditrl.h"
#include "gateway/ev.h"
#include "gateway/proto/proto.h"
#include "gateway/resolve.h"
#include "gateway/run.h"

#include <netinet/in.h>
#include <sys/socket.h>

#ifndef __linux__
/* the layout of Linux's batch of datagrams, so that this header is the same everywhere; the
 * DNS front that uses it (recvmmsg/sendmmsg) is built on Linux only (docs/platforms.md) */
struct mmsghdr {
	struct msghdr msg_hdr;
	unsigned int msg_len;
};
#endif

#define GW_DNS_TTL 300 /* the TTL of a synthetic answer */

/* where a reply goes */
struct gw_replyto {
	int fd; /* UDP socket, or -1 for TCP */
	struct sockaddr_storage peer;
	socklen_t plen;
	struct gw_addr local;
	struct gw_dnsconn *conn; /* TCP */
	struct udp_out *batch;	 /* UDP: queue the reply here (sent with sendmmsg) */
};

/*
 * UDP batching: gw_dns_udp_ready() takes up to UDP_BATCH datagrams with one
 * recvmmsg(), at most UDP_ROUNDS times per wake-up so that the rest of the
 * loop gets its turn (64 datagrams, as before batching); it answers each into
 * a struct udp_out and sends the queue with one sendmmsg() at the end (an
 * answer that does not fit sends the queue first). A denial's
 * audit event is written (gw_audit() writes denials at once) while its
 * answer is still queued, so the event is on disk before the client learns
 * of the denial; allowed events are written with the loop round's batch.
 */
#define UDP_BATCH 32
#define UDP_ROUNDS 2
#define UDP_OUT_MAX (UDP_BATCH * UDP_ROUNDS) /* answers queued before a send */
#define UDP_MSG_MAX 4096		     /* longest query taken and answer sent */

union pktinfo_buf {
	char buf[CMSG_SPACE(sizeof(struct in6_pktinfo))];
	struct cmsghdr align;
};

struct udp_out {
	int fd;
	unsigned n;  /* answers queued */
	size_t used; /* bytes of @arena they use */
	struct mmsghdr mm[UDP_OUT_MAX];
	struct iovec iov[UDP_OUT_MAX];
	struct sockaddr_storage peer[UDP_OUT_MAX];
	union pktinfo_buf cm[UDP_OUT_MAX];
	uint8_t arena[8 * UDP_MSG_MAX];
};

/* a query forwarded upstream, waiting for its answer */
struct gw_dnsq {
	struct gw_forward fwd; /* the resolver's callback */
	struct gw_dns *dns;
	struct gw_run *run; /* a reference */
	struct dns_query q;
	struct gw_replyto rt;
};

/* network.ask (dnsask.c): queries held while a person is asked */
#define GW_ASK_HELD_MAX 8 /* queries one ask holds (A, AAAA, a client's retries) */
#define GW_ASKS_MAX 16	  /* asks one run may have pending */

struct gw_conn;

/* one query held by an ask: answered when the ask ends */
struct gw_held {
	struct dns_query q;
	struct gw_replyto rt; /* UDP only (rt.batch NULL) */
};

/**
 * struct gw_ask - a name held for a person's answer
 * @next:	the DNS front's list
 * @dns:	the DNS front
 * @run:	the run (a reference)
 * @id:		its number, unique in this gateway (the `asks` and `answer` ops name it)
 * @name:	the name asked about
 * @rule:	the network.ask entry that matched, as text
 * @timeout_s:	how long it waits (network.ask_timeout)
 * @deadline:	when it ends unanswered (CLOCK_MONOTONIC ns)
 * @timer:	GW_T_ASK
 * @held:	the queries it holds, @nheld of them
 * @conns:	the proxy requests it holds (conn.c), @nconns of them
 */
struct gw_ask {
	struct gw_ask *next;
	struct gw_dns *dns;
	struct gw_run *run;
	unsigned id;
	char name[256];
	char rule[280];
	unsigned timeout_s;
	uint64_t deadline;
	struct gw_timer timer;
	unsigned nheld;
	struct gw_held held[GW_ASK_HELD_MAX];
	unsigned nconns;
	struct gw_conn *conns[GW_ASK_HELD_MAX];
};

/* how a held query ends: answered as allowed now (the name was added to the run's policy), or
 * denied with @why (dnsanswer.c's gw_dns_held_answer(), reached through struct gw_dns) */
typedef void gw_held_answer_fn(struct gw_dns *dns, struct gw_run *run, const struct gw_replyto *rt,
			       const struct dns_query *q, bool allow, const char *why);

/**
 * struct gw_dns - the DNS front
 * @ev:		the loop
 * @runs:	the run table (attribution)
 * @res:	the resolver (forwarding)
 * @audit:	the audit front
 * @lim:	the limits
 * @udp:	the UDP listeners ([0] v4, [1] v6)
 * @tcp:	the DNS-over-TCP listeners
 * @conns:	DNS-over-TCP connections
 * @asks:	the asks pending (network.ask), every run's
 * @ask_seq:	the last ask's number
 * @held_answer: how a held query is answered when its ask ends
 * @conn_answer: how a held proxy request goes on when its ask ends (conn.c's
 *		gw_conn_ask_answer(), wired by gw.c): decided again (@allow), or denied with @why
 */
struct gw_dns {
	struct gw_ev *ev;
	struct gw_runs *runs;
	struct gw_resolver *res;
	struct gw_audit *audit;
	const struct gw_limits *lim;
	struct gw_listener udp[2];
	struct gw_listener tcp[2];
	struct gw_dnsconn *conns;
	struct gw_ask *asks;
	unsigned ask_seq;
	gw_held_answer_fn *held_answer;
	void (*conn_answer)(struct gw_conn *c, bool allow, const char *why);
};

struct gw_dnsconn {
	struct gw_dns *dns;
	int fd;
	struct gw_dnsconn *next, *prev;
	struct gw_run *run; /* a reference: counted in its connections (and the gateway's) */
	struct gw_addr local, peer;
	uint8_t *in; /* what arrived and was not answered yet (heap, grown to need) */
	size_t inlen, incap;
	uint8_t *out;
	size_t outlen, outoff;
	struct gw_dnsq *pending;
	struct gw_timer timer;
	bool closing;
	bool busy;
	void (*resume)(struct gw_dnsconn *d); /* a forwarded answer came: go on with its input */
};

/**
 * gw_dns_init() - the DNS front over its listening sockets
 * @dns:	the component
 * @ev:		the loop
 * @runs:	the run table
 * @res:	the resolver
 * @audit:	the audit front
 * @lim:	the limits
 * @udp:	UDP sockets ([0] v4, [1] v6; taken, set to -1; -1: none)
 * @tcp:	DNS-over-TCP listeners (the same)
 * @err:	what failed
 * Return: 0, or a negative errno.
 */
int gw_dns_init(struct gw_dns *dns, struct gw_ev *ev, struct gw_runs *runs, struct gw_resolver *res,
		struct gw_audit *audit, const struct gw_limits *lim, int udp[2], int tcp[2],
		struct wd_err *err);

/** gw_dns_free() - close every DNS-over-TCP connection and listener. */
void gw_dns_free(struct gw_dns *dns);

/** gw_dns_udp_ready() - answer the queries waiting on a UDP DNS socket. */
void gw_dns_udp_ready(struct gw_dns *dns, struct gw_listener *l);
/**
 * gw_dns_drain() - answer every query already waiting on the UDP DNS sockets
 * (before a control answer that reports counters: the queries a run sent
 * before it ended are then counted in them)
 */
void gw_dns_drain(struct gw_dns *dns);
/** gw_dns_tcp_accept() - accept DNS-over-TCP connections. */
void gw_dns_tcp_accept(struct gw_dns *dns, struct gw_listener *l);
/** gw_dnsconn_event() - an epoll event on a DNS-over-TCP connection. */
void gw_dnsconn_event(struct gw_dnsconn *d, unsigned events);
/** gw_dnsconn_timeout() - a DNS-over-TCP connection was idle too long: close it. */
void gw_dnsconn_timeout(struct gw_dnsconn *d);
/** gw_dnsconn_close() - close and free @d (a pending forwarded answer is dropped). */
void gw_dnsconn_close(struct gw_dnsconn *d);

/**
 * gw_dns_query() - decide, answer and audit one query (gw_dns_decide())
 * @dns:	the DNS front
 * @msg:	the message (a UDP payload, or a TCP message without its length)
 * @len:	its length
 * @rt:		where the answer goes
 * @peer:	the client's address (attribution with @rt->local)
 */
void gw_dns_query(struct gw_dns *dns, const uint8_t *msg, size_t len, const struct gw_replyto *rt,
		  const struct gw_addr *peer);

/**
 * gw_udp_pktinfo() - the control message that makes an answer leave from
 * @local (the address the query was sent to: the redirect's target)
 * Return: its length in @cbuf.
 */
size_t gw_udp_pktinfo(const struct gw_addr *local, union pktinfo_buf *cbuf);

/** gw_udp_out_queue() - queue an answer of at most UDP_MSG_MAX bytes (a full queue is sent first).
 */
void gw_udp_out_queue(struct udp_out *o, const struct gw_replyto *rt, const uint8_t *msg,
		      size_t len);

/**
 * gw_udp_out_flush() - send the queued answers (best effort, like single sends:
 * an answer the kernel refuses is dropped and the rest still go)
 */
void gw_udp_out_flush(struct udp_out *o);

/**
 * gw_dns_held_answer() - answer a query an ask held: allowed (when the run's policy allows the
 * name now: the synthetic answer; else denied, the policy's reason said) or denied with @why
 * (NXDOMAIN with an Extended DNS Error and a denial id); audited as dns.query
 */
void gw_dns_held_answer(struct gw_dns *dns, struct gw_run *run, const struct gw_replyto *rt,
			const struct dns_query *q, bool allow, const char *why);

/**
 * gw_dns_ask_hold() - hold query @q of @run (a UDP one) for a person's answer: with the
 * pending ask of its name, else a new ask (audited as dns.ask, its timer armed)
 * @rule:	the network.ask entry that matched, as text
 * Return: 0 (held: the query is answered when the ask ends), -ENOSPC (the ask holds
 * GW_ASK_HELD_MAX queries), -EBUSY (the run has GW_ASKS_MAX asks pending), -ENOMEM.
 */
int gw_dns_ask_hold(struct gw_dns *dns, struct gw_run *run, const struct gw_replyto *rt,
		    const struct dns_query *q, const char *rule);

/**
 * gw_dns_ask_hold_conn() - hold proxy request @c of @run (to @name) for a person's answer, as
 * gw_dns_ask_hold() holds a query: @dns->conn_answer is called once when the ask ends, unless
 * gw_dns_ask_unhold() took it out first
 * Return: as gw_dns_ask_hold().
 */
int gw_dns_ask_hold_conn(struct gw_dns *dns, struct gw_run *run, const char *name, const char *rule,
			 struct gw_conn *c);

/** gw_dns_ask_unhold() - @c (held) closes: out of its ask (harmless when in none) */
void gw_dns_ask_unhold(struct gw_dns *dns, const struct gw_conn *c);

/**
 * gw_dns_ask_answer() - a person's answer to ask @id of @run: its held queries answered
 * (allowed: as the run's policy allows the name now; denied: NXDOMAIN), audited with @by
 * Return: 0, or -ENOENT (no such ask pending: answered, timed out, or another run's).
 */
int gw_dns_ask_answer(struct gw_dns *dns, struct gw_run *run, unsigned id, bool allow,
		      const char *by);

/** gw_dns_ask_expired() - GW_T_ASK: no answer in time: denied, audited */
void gw_dns_ask_expired(struct gw_ask *a);

/**
 * gw_dns_asks_json() - @run's pending asks: [{"ask": N, "name": NAME, "rule": RULE,
 * "timeout_s": T, "left_ms": L}, ...] (NULL: out of memory)
 */
struct json_t *gw_dns_asks_json(struct gw_dns *dns, const struct gw_run *run);

/** gw_dns_asks_free() - every pending ask freed, its queries unanswered (the gateway ends) */
void gw_dns_asks_free(struct gw_dns *dns);

#endif /* WARDEN_GATEWAY_DNS_H */

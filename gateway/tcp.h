/* tcp.h - the gateway's TCP path (internal header): the component's state
 * (struct gw_tcp: its listeners, connections and the relay's pools) and one
 * connection (struct gw_conn). Its files, from the top: tcp.c (listeners,
 * accept), conn.c (the state machine), relayconn.c (one connection's relay),
 * relayhttp.c (an HTTP connection's requests, each checked), socksconn.c (a SOCKS5 client on
 * the proxy port), connend.c (audit events,
 * throttling, denials, end), relay.c (the mechanism), decide.c (the verdicts). */
#ifndef WARDEN_GATEWAY_TCP_H
#define WARDEN_GATEWAY_TCP_H

#include "gateway/auditrl.h"
#include "gateway/ev.h"
#include "gateway/proto/proto.h"
#include "gateway/relay.h"
#include "gateway/resolve.h"
#include "gateway/run.h"

#include <stdbool.h>
#include <stdint.h>

/**
 * struct gw_tcp - the TCP path
 * @ev:		the loop
 * @runs:	the run table (attribution, connection budget)
 * @res:	the resolver
 * @audit:	the audit front
 * @lim:	the limits
 * @lis:	its listeners: transparent v4/v6, proxy v4/v6
 * @conns:	open connections
 * @zombies:	connections closed this loop round (freed by gw_conn_reap())
 * @again:	connections with more to relay without a new event
 * @hello:	scratch for the TLS parser
 * @pool:	the relay's pipes, peek buffers and copy buffer
 */
struct gw_dns;

struct gw_tcp {
	struct gw_ev *ev;
	struct gw_runs *runs;
	struct gw_resolver *res;
	struct gw_audit *audit;
	const struct gw_limits *lim;
	struct gw_listener lis[4];
	struct gw_conn *conns;
	struct gw_conn *zombies;
	struct gw_conn *again;
	struct tls_hello *hello;
	struct gw_pool pool;
	struct gw_dns *dns; /* network.ask's asks (dnsask.c), wired by gw.c */
};

enum gw_conn_state {
	GW_C_PEEK,    /* waiting for the client's first bytes to decide */
	GW_C_RESOLVE, /* allowed name, resolving it */
	GW_C_CONNECT, /* connecting upstream */
	GW_C_RELAY,   /* relaying (the client's first bytes may still be checked) */
	GW_C_DRAIN,   /* denied: answer sent, reading until the client closes */
	GW_C_CLOSED,
};

/* where a SOCKS5 client on the proxy port is (socksconn.c) */
enum gw_socks_stage {
	GW_SOCKS_NONE = 0, /* not SOCKS */
	GW_SOCKS_GREETING, /* its first byte was 5: waiting for the greeting */
	GW_SOCKS_REQUEST,  /* greeting answered: waiting for the request */
	GW_SOCKS_DECIDED,  /* the request is decided: resolving, connecting (or denied) */
	GW_SOCKS_TUNNEL,   /* the success reply went out */
};

enum gw_conn_kind {
	GW_K_TRANSPARENT,
	GW_K_PROXY,
};

/*
 * struct gw_conn - one TCP connection from a sandbox
 * Kept small (idle relayed connections are many): the names are heap strings
 * (NULL when empty), the candidates and a pending denial exist only while
 * they are needed, the peek buffer goes back to the pool once flushed.
 */
struct gw_conn {
	struct gw_tcp *t;
	struct gw_run *run;
	struct gw_conn *next, *prev;
	struct gw_conn *again; /* next on t->again (more to relay without a new event) */
	enum gw_conn_state st;
	enum gw_conn_kind kind;
	int cfd, ufd;
	struct gw_ready cr, ur; /* client, upstream */
	struct gw_addr orig, peer, up;
	uint16_t oport;
	uint16_t tls_version;
	char *name; /* the destination's name */
	char *sni;  /* the ClientHello's server name */
	char *host; /* the HTTP Host (or the CONNECT / absolute-form target) */
	char *rule; /* the allowing rule's text */
	const char *proto;
	bool synthetic;
	bool checked;	 /* the client's first bytes passed (or need no check) */
	bool flushed;	 /* the peeked bytes went upstream */
	bool tls;	 /* the client speaks TLS */
	bool http;	 /* the client speaks HTTP */
	bool connect_ok; /* proxy CONNECT: 200 sent */
	bool decided;	 /* the decision event was written */
	bool peek_armed; /* the deadline for an unchecked client's first bytes is set */
	bool queued;	 /* on t->again */
	bool http_track; /* the client's bytes are HTTP requests: every head is checked (c->hs) */
	bool hold;	 /* an Upgrade/CONNECT went upstream: its answer decides (tunnel or HTTP) */
	bool ech;	 /* the ClientHello carried an encrypted_client_hello extension */
	bool throttled;	 /* its run holds too many bytes: it reads lean (relay()) */
	bool asked;	 /* a proxy request held by a network.ask ask (dnsask.c) */
	bool up_peeked;	 /* the peeked bytes were charged to the upload budget (c2u.up) */
	uint8_t socks;	 /* enum gw_socks_stage */
	uint8_t socks_rep; /* SOCKS5: the reply code a denial answers with; 0: none */
	uint32_t acct;	   /* bytes of pipes and stashes counted in run->buffered */
	uint8_t *buf;
	size_t blen, boff;
	int64_t budget;	      /* client->upstream bytes left (absolute-form), -1 = no limit */
	struct gw_addr *cand; /* upstream addresses to try (heap; freed once connected) */
	uint8_t ncand, icand;
	int last_err; /* errno of the last failed upstream connect */
	struct gw_waiter waiter;
	struct gw_timer timer;
	struct gw_half c2u, u2c;
	uint64_t start_ns, last_ns;
	char denial_id[16];
	char *pending_deny;    /* decided to deny; waiting for the client's first bytes to
				  answer readably (heap) */
	char *late_deny;       /* a later request was denied: said (403) once the upstream
				  finished answering the earlier ones (heap) */
	struct http_stream hs; /* framing of the client's requests (http_track) */
	char *would;	       /* a shadow run: the policy's denial it let through, the reason
				  of its net.connect "would_deny" (heap; gw_conn_would()) */
};

/**
 * gw_tcp_init() - the TCP path over its listening sockets
 * @t:		the component
 * @ev:		the loop
 * @runs:	the run table
 * @res:	the resolver
 * @audit:	the audit front
 * @lim:	the limits
 * @transparent: the transparent listeners ([0] v4, [1] v6; taken, set to -1; -1: none)
 * @proxy:	the proxy listeners (the same)
 * @err:	what failed
 * Return: 0, or a negative errno.
 */
int gw_tcp_init(struct gw_tcp *t, struct gw_ev *ev, struct gw_runs *runs, struct gw_resolver *res,
		struct gw_audit *audit, const struct gw_limits *lim, int transparent[2],
		int proxy[2], struct wd_err *err);

/** gw_tcp_free() - close every connection ("gateway stopping") and listener, free the pools. */
void gw_tcp_free(struct gw_tcp *t);

/* a connection's sockets: registered once, edge-triggered, for both ways */
#define GW_EP_EVENTS (GW_POLL_IN | GW_POLL_OUT | GW_POLL_RDHUP | GW_POLL_ET)

/* tcp.c */
/** gw_tcp_accept() - accept on a transparent or proxy listener. */
void gw_tcp_accept(struct gw_tcp *t, struct gw_listener *l);
/**
 * gw_conn_again() - relay what the connections on t->again still have
 * (a wake-up's work is bounded; edge-triggered sockets send no new event)
 * Return: true when some connection is still queued (poll again at once).
 */
bool gw_conn_again(struct gw_tcp *t);

/* conn.c */
/**
 * gw_conn_start() - decide what a just-accepted connection waits for: its
 * name's addresses (a synthetic address), its upstream (a cidr rule), or its
 * first bytes (anything else, and the proxy port)
 */
void gw_conn_start(struct gw_conn *c);
/** gw_conn_event() - an epoll event on @c's client (@up false) or upstream socket. */
void gw_conn_event(struct gw_conn *c, bool up, unsigned events);
/** gw_conn_timeout() - @c's deadline passed (peek, resolve, connect, idle or drain). */
void gw_conn_timeout(struct gw_conn *c);
struct gw_tcp_verdict;

/**
 * gw_conn_ask_hold() - network.ask for a proxy request (CONNECT, absolute-form) @c denied by
 * @v because no rule names its host: held while a person is asked, when network.ask names the
 * host and the run has someone to ask (dnsask.c; its deadline the ask's)
 * Return: true when held (gw_conn_ask_answer() goes on), false: deny it as @v says.
 */
bool gw_conn_ask_hold(struct gw_conn *c, const struct gw_tcp_verdict *v);

/**
 * gw_conn_ask_answer() - the ask that held proxy request @c ended: decided again under the
 * run's policy (@allow: the name was added to it), or denied with @why
 */
void gw_conn_ask_answer(struct gw_conn *c, bool allow, const char *why);

/* connend.c */
/**
 * gw_str_set() - *@dst = a heap copy of @src (at most 255 bytes; NULL or "" -> NULL)
 * Return: 0, or -ENOMEM (*@dst unchanged).
 */
int gw_str_set(char **dst, const char *src);
/**
 * gw_conn_audit() - @c's audit event @action ("net.connect", "net.close"): a
 * denial goes through the run's denial rate limit
 */
void gw_conn_audit(struct gw_conn *c, const char *action, bool allowed, const char *reason);
struct gw_tcp_verdict;
/**
 * gw_conn_would() - a shadow run let @c through although its policy denied it (@would): the
 * connection's net.connect event says "would_deny" with @would's reason and a new denial id
 * Return: 0, or -ENOMEM (the caller denies: fail closed)
 */
int gw_conn_would(struct gw_conn *c, const struct gw_tcp_verdict *would);
/**
 * gw_conn_deny() - deny @c: audited, then a TLS alert or an HTTP 403 naming
 * @reason and a denial id and a drain of the client, else a reset
 */
void gw_conn_deny(struct gw_conn *c, const char *reason);
/**
 * gw_conn_late_deny() - deny a request after the first on an allowed HTTP connection: audited
 * now, the client no longer read, the upstream given end-of-stream; the 403 follows once it
 * answered what it has (gw_conn_late_deny_say()), within a bound
 */
void gw_conn_late_deny(struct gw_conn *c, const char *reason);
/** gw_conn_late_deny_say() - the 403 of a later request's denial, once the upstream finished. */
void gw_conn_late_deny_say(struct gw_conn *c);
/**
 * gw_conn_account() - bring the run's buffered bytes up to date with what @c
 * holds (@gone: it closes and holds nothing from now on)
 */
void gw_conn_account(struct gw_conn *c, bool gone);
/**
 * gw_conn_close() - close @c; an allowed connection gets its "net.close"
 * event with @end. The memory is freed by gw_conn_reap().
 */
void gw_conn_close(struct gw_conn *c, const char *end);
/** gw_conn_reset() - close @c with a TCP reset (SO_LINGER 0). */
void gw_conn_reset(struct gw_conn *c, const char *end);
/**
 * gw_conn_upload_check() - before @c connects: its account with the run's upload budgets (by its
 * name, else its address), kept in c->c2u.up for the relay to charge
 * @c:		the connection
 * @buf:	room for a refusal's reason
 * @size:	its size
 * Return: NULL (it may go: no budget, or some left), or the reason to refuse it (the budget is
 * spent, the run has too many names to count, out of memory).
 */
const char *gw_conn_upload_check(struct gw_conn *c, char *buf, size_t size);
/**
 * gw_conn_upload_cut() - @c has more to send upstream than its upload budget leaves: its
 * limit.upload event (with a denial id), then a reset of both sides
 */
void gw_conn_upload_cut(struct gw_conn *c);
/** gw_conn_reap() - free the connections closed during this loop round. */
void gw_conn_reap(struct gw_tcp *t);

/* relayhttp.c */
/**
 * gw_conn_pump_http() - move @c's client->upstream half request by request (@lean: the run
 * holds too much, read only what goes on at once)
 * Return: 1 when a round's budget ran out with more to move, 0, or a negative errno.
 */
int gw_conn_pump_http(struct gw_conn *c, bool lean);
/**
 * gw_conn_answer_peek() - @c holds its stream for the answer to an Upgrade or CONNECT: look at
 * the status line (a tunnel from now on, or framed as before)
 * Return: false while the status line is incomplete (wait for more).
 */
bool gw_conn_answer_peek(struct gw_conn *c);

/* socksconn.c */
struct gw_proxy_verdict;
struct gw_ssrf_env;

enum gw_socks_step {
	GW_SOCKS_WAIT,	  /* more of the client's bytes are needed */
	GW_SOCKS_VERDICT, /* a CONNECT request was decided: the verdict is the caller's */
	GW_SOCKS_DONE,	  /* refused (audited, answered) or closed */
};

/**
 * gw_conn_socks() - a SOCKS5 client's bytes in c->buf on the proxy port: its greeting
 * answered, its request read and decided (gw_socks_decide()), what it asks that the gateway
 * does not do refused with its reply code, what cannot be parsed closed without an answer
 * @c:		the connection (its first byte was 5, or c->socks is set)
 * @final:	no more bytes will come before a decision
 * @learn:	as gw_socks_decide()'s
 * @pv:		on GW_SOCKS_VERDICT, the verdict (c->host names the target)
 * @used:	on GW_SOCKS_VERDICT, the request's bytes at the start of c->buf (what follows
 *		is the tunnel's first bytes)
 * Return: GW_SOCKS_WAIT, GW_SOCKS_VERDICT or GW_SOCKS_DONE.
 */
enum gw_socks_step gw_conn_socks(struct gw_conn *c, bool final, const struct gw_ssrf_env *learn,
				 struct gw_proxy_verdict *pv, size_t *used);
/**
 * gw_socks_established() - @c's upstream is connected: the success reply into @out (@size at
 * least SOCKS5_REPLY_LEN); from now on a denial is the tunnel's
 * Return: its length, or -ENOSPC.
 */
int gw_socks_established(struct gw_conn *c, uint8_t *out, size_t size);

/* relayconn.c */
/** gw_conn_flush_peeked() - once connected and checked, write the peeked bytes upstream. */
void gw_conn_flush_peeked(struct gw_conn *c);
/** gw_conn_relay() - move what @c's sockets have, both ways (closes @c at its end). */
void gw_conn_relay(struct gw_conn *c);

/* revoke.c */
/**
 * gw_tcp_revoke() - @r's policy was replaced: decide again every connection of @r the gateway
 * let through (resolving, connecting, relaying) and reset, audited as "net.revoke", each one
 * the new policy no longer allows
 * Return: how many were closed.
 */
unsigned gw_tcp_revoke(struct gw_tcp *t, const struct gw_run *r);

#endif /* WARDEN_GATEWAY_TCP_H */

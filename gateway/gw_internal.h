/* gw_internal.h - the gateway's data-plane internals shared by its .c files
 * (internal header: only the gateway sources include it). */
#ifndef WARDEN_GATEWAY_GW_INTERNAL_H
#define WARDEN_GATEWAY_GW_INTERNAL_H

#include "gateway/gw.h"
#include "gateway/proto/proto.h"
#include "gateway/relay.h"

#include <ares.h>
#include <sys/epoll.h>
#include <sys/queue.h>

/* What an epoll event refers to: the type sits in the top 8 bits of
 * epoll_data.u64, a pointer (or an fd for c-ares) in the low 56. */
enum gw_ref {
	GW_REF_LISTEN = 1, /* struct gw_listener (TCP accept, UDP DNS, control) */
	GW_REF_CLIENT,	   /* struct gw_conn, the sandbox side */
	GW_REF_UP,	   /* struct gw_conn, the upstream side */
	GW_REF_DNS_TCP,	   /* struct gw_dnsconn */
	GW_REF_CTL,	   /* struct gw_ctlconn */
	GW_REF_ARES,	   /* a c-ares socket (fd) */
	GW_REF_SIGNAL,	   /* the signalfd */
	GW_REF_NFLOG,	   /* the NFLOG socket (what the nft table dropped and logged) */
	GW_REF_PRIV,	   /* the channel to the privileged parent */
};

#define GW_REF(type, p) (((uint64_t)(type) << 56) | (uint64_t)(uintptr_t)(p))
#define GW_REF_TYPE(u) ((enum gw_ref)((u) >> 56))
#define GW_REF_PTR(u) ((void *)(uintptr_t)((u) & ((1ull << 56) - 1)))

enum gw_listener_kind {
	GW_L_TRANSPARENT,
	GW_L_PROXY,
	GW_L_DNS_UDP,
	GW_L_DNS_TCP,
	GW_L_CTL,
};

/* timer kinds */
enum gw_timer_kind {
	GW_T_CONN,    /* a connection's deadline (peek, connect, idle, drain) */
	GW_T_RESUME,  /* a listener paused on EMFILE */
	GW_T_DNSCONN, /* a DNS-over-TCP connection's idle deadline */
	GW_T_CTLCONN, /* a control connection's deadline */
	GW_T_UDPLOG,  /* write the summaries of rate-limited NFLOG events */
	GW_T_FLOOD,   /* write the summaries of events not written one by one (auditrl.c) */
};

/* What the nft table dropped and logged to NFLOG, told apart by the log rule's prefix. */
enum gw_drop_kind {
	GW_DROP_UDP,   /* other UDP or UDP-lite (no prefix): "net.udp" */
	GW_DROP_HOST,  /* an address of this host other than the run's own gateway: "net.host" */
	GW_DROP_CONNS, /* a new flow over the run's conntrack limit: "limit.connections" */
	GW_DROP_N,
};

/**
 * struct gw_droplog - the audit of one kind of drop, for one run (or for no run)
 * @bucket:	events written one by one: GW_UDP_BURST, then GW_UDP_PER_S a second
 * @dropped:	packets seen on NFLOG
 * @suppressed:	of those, not audited one by one yet (the next summary counts them)
 */
struct gw_droplog {
	struct gw_bucket bucket;
	uint64_t dropped;
	uint64_t suppressed;
};

#define GW_FLOOD_SLOTS 8  /* kinds of event (action, decision) a summary counts apart */
#define GW_FLOOD_NAMES 16 /* names counted apart per kind; the rest are "other" */

/* one kind of event (action and decision) counted since the last summary */
struct gw_flood_slot {
	const char *action; /* the writer's string literal */
	enum audit_type type;
	bool allowed;
	uint64_t count;
	uint64_t other; /* events whose name did not fit in @names */
	unsigned nnames;
	struct gw_flood_name {
		char *name; /* heap, printable ASCII */
		uint64_t n;
	} names[GW_FLOOD_NAMES];
};

/* the events of a run (or of no run) not written one by one since the last
 * summary: allocated on the first one, freed by the summary */
struct gw_flood {
	unsigned nslots;
	struct gw_flood_slot slot[GW_FLOOD_SLOTS];
	uint64_t lost; /* events of a kind beyond GW_FLOOD_SLOTS */
};


struct gw_listener {
	struct gw *g;
	int fd;
	enum gw_listener_kind kind;
	bool paused;
	struct gw_timer resume;
};

/**
 * struct gw_run - one registered run
 */
struct gw_run {
	struct gw_run *next;
	char id[GW_RUN_ID_MAX + 1];
	uid_t uid;
	char ifname[16];
	struct gw_addr host4, sb4, host6, sb6;
	struct wd_policy *policy;
	char policy_name[256];
	struct gw_synth synth;
	unsigned refs;
	bool dead;
	unsigned conns;
	uint64_t conns_total, denied, dns_queries, bytes_up, bytes_down;
	struct gw_droplog drops[GW_DROP_N]; /* what the nft table dropped of this run */
	struct gw_bucket deny_bucket;	    /* denials audited one by one */
	uint64_t audit_bytes;		    /* bytes of audit log this run's events took */
	struct gw_flood *flood;		    /* events not written one by one, for the next summary */
	uint64_t buffered;		    /* bytes its connections hold in pipes and stashes */
	unsigned dnsconns;		    /* DNS-over-TCP connections (counted in @conns too) */
};

/* a run update waiting for the privileged parent's answer */
struct gw_privreq {
	struct gw_privreq *next;
	uint32_t seq;
	enum gw_priv_type type;
	struct gw_ctlconn *c; /* the client waiting (NULL once it went away) */
	struct gw_run *run;   /* a reference to the run concerned */
	uid_t uid;	      /* who asked */
};

/* a pending lookup's waiter, embedded in the waiting object */
struct gw_waiter {
	TAILQ_ENTRY(gw_waiter) link; /* on lk->waiters while @lk is set */
	struct gw_lookup *lk;
	void (*cb)(struct gw_waiter *w, const struct gw_cache_entry *e);
};

/* a name being resolved, in g->lookups, with everyone waiting for it */
struct gw_lookup {
	uint64_t hash; /* wd_hash_str(@name) */
	struct gw *g;
	char name[256];
	int pending;
	int rcode;
	uint32_t ttl;
	struct gw_addr addrs[GW_CACHE_ADDRS];
	size_t n;
	TAILQ_HEAD(, gw_waiter) waiters; /* in order of arrival */
};

enum gw_conn_state {
	GW_C_PEEK,    /* waiting for the client's first bytes to decide */
	GW_C_RESOLVE, /* allowed name, resolving it */
	GW_C_CONNECT, /* connecting upstream */
	GW_C_RELAY,   /* relaying (the client's first bytes may still be checked) */
	GW_C_DRAIN,   /* denied: answer sent, reading until the client closes */
	GW_C_CLOSED,
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
	struct gw *g;
	struct gw_run *run;
	struct gw_conn *next, *prev;
	struct gw_conn *again; /* next on g->again (more to relay without a new event) */
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
	bool queued;	 /* on g->again */
	bool http_track; /* the client's bytes are HTTP requests: every head is checked (c->hs) */
	bool hold;	 /* an Upgrade/CONNECT went upstream: its answer decides (tunnel or HTTP) */
	bool ech;	 /* the ClientHello carried an encrypted_client_hello extension */
	bool throttled;	 /* its run holds too many bytes: it reads lean (relay()) */
	uint32_t acct;	 /* bytes of pipes and stashes counted in run->buffered */
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
};

struct gw_dnsq;

struct gw_dnsconn {
	struct gw *g;
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

struct gw_ctlconn {
	struct gw *g;
	int fd;
	struct gw_ctlconn *next, *prev;
	uid_t uid;
	pid_t pid;
	struct wd_buf in;
	struct wd_buf out;
	size_t outoff;
	bool closing;
	struct gw_privreq *waiting; /* a register/unregister the parent has not answered yet */
	struct gw_timer timer;
};

struct gw_stats {
	uint64_t accepted, refused, denied, relayed, dns_queries, emfile, audit_errors,
	    upstream_failed, udp_dropped, udp_suppressed, nflog_lost, host_dropped, conns_dropped,
	    audit_suppressed;
};

struct gw {
	struct wd_gwconf conf;
	struct gw_limits lim;
	int ep;
	int sigfd;
	volatile int stop;
	struct gw_listener lis[9];
	size_t nlis;
	struct gw_timer_heap timers;
	uint64_t now;
	struct audit_log *log;
	ares_channel ares;
	bool ares_ok;
	struct gw_cache cache;
	struct wd_htable lookups; /* pending struct gw_lookup by name */
	struct gw_run *runs;
	unsigned nruns;
	struct wd_htable run_index[2]; /* runs by sandbox address: [0] v4, [1] v6 */
	int nflog_fd;		       /* -1: no NFLOG */
	uint8_t *nflog_buf;
	struct gw_droplog drops[GW_DROP_N];	  /* NFLOG events that match no run */
	struct gw_timer udp_timer;		  /* GW_T_UDPLOG */
	struct gw_bucket deny_bucket;		  /* denials of no run audited one by one */
	struct gw_flood *flood;			  /* events of no run not written one by one */
	struct gw_timer flood_timer;		  /* GW_T_FLOOD */
	int priv_fd;				  /* channel to the privileged parent, -1: none */
	bool manage_nft;			  /* run updates go through the parent */
	uint32_t priv_seq;			  /* last request number sent */
	struct gw_privreq *priv_head, *priv_tail; /* waiting for the parent, in order */
	int fatal;				  /* ends the loop with this error */
	struct gw_conn *conns;
	struct gw_conn *zombies;
	struct gw_conn *again; /* connections with more to relay this round (edge-triggered) */
	unsigned nconns;
	unsigned fd_conns; /* connections the descriptor limit leaves room for */
	struct gw_dnsconn *dnsconns;
	struct gw_ctlconn *ctlconns;
	struct tls_hello *hello;
	struct gw_pool pool; /* pipes, peek buffers and the copy buffer of the relay */
	struct gw_addr own_net[4];
	unsigned own_prefix[4];
	struct gw_addr *local;
	size_t nlocal;
	uint64_t local_at;
	struct gw_rng rng;
	struct gw_stats stats;
};

/* ------------------------------------------------------------ loop.c */

/** gw_ep_add() - add @fd to the loop with @events and reference @ref. Return: 0 or -errno. */
int gw_ep_add(struct gw *g, int fd, unsigned events, uint64_t ref);
/** gw_ep_mod() - change @fd's events and reference. Return: 0 or -errno (-ENOENT: not added). */
int gw_ep_mod(struct gw *g, int fd, unsigned events, uint64_t ref);
/** gw_ep_del() - remove @fd from the loop (harmless when absent or -1). */
void gw_ep_del(struct gw *g, int fd);
/** gw_arm() - arm @t for @when (monotonic ns); on -ENOMEM the timer stays as it was. */
void gw_arm(struct gw *g, struct gw_timer *t, uint64_t when);
/* ------------------------------------------------------------ auditrl.c */

/**
 * gw_audit() - write one event for @run (NULL: no run) to the audit log
 * Within the run's audit budget (limits.audit_kib_per_run) the event is
 * written (an allowed one deferred to the end of the loop round); past it,
 * only counted for the next summary -- except the run's lifecycle events and
 * summaries themselves. A failed write is counted in g->stats.audit_errors.
 */
void gw_audit(struct gw *g, struct gw_run *run, struct audit_event *ev);
/**
 * gw_audit_denial() - a denial of @run: counted in run->denied, written in
 * full while the run's rate allows (GW_DENY_BURST, then GW_DENY_PER_S a
 * second; see auditrl.c), else counted for the next summary
 */
void gw_audit_denial(struct gw *g, struct gw_run *run, struct audit_event *ev);
/** gw_auditrl_flush() - write the summaries of every run and of no run (timer). */
void gw_auditrl_flush(struct gw *g);
/** gw_auditrl_run_end() - write @r's pending summaries before it leaves the table. */
void gw_auditrl_run_end(struct gw *g, struct gw_run *r);
/** gw_new_denial_id() - a fresh "dn-<12 hex>" id into @out (at least 16 bytes). */
void gw_new_denial_id(struct gw *g, char *out, size_t size);
/** gw_pause_listener() - stop accepting on @l for 100 ms (out of descriptors). */
void gw_pause_listener(struct gw_listener *l);
/** gw_audit_flush() - write the events queued this round (one locked write). */
void gw_audit_flush(struct gw *g);

/* ------------------------------------------------------------ run.c */

/** gw_run_find_ingress() - the run whose link is @local (host side) and @peer (sandbox), or NULL.
 */
struct gw_run *gw_run_find_ingress(struct gw *g, const struct gw_addr *local,
				   const struct gw_addr *peer);
/** gw_run_find_sandbox() - the registered run whose sandbox address is @a, or NULL. */
struct gw_run *gw_run_find_sandbox(struct gw *g, const struct gw_addr *a);
/** gw_run_find_id() - the registered run called @id, or NULL. */
struct gw_run *gw_run_find_id(struct gw *g, const char *id);
/**
 * gw_run_register() - add a run from a register request, owned by @uid
 * @why:	on error, a reason for the client
 * Return: 0; -EEXIST (id, interface or an address already used), -EINVAL
 * (addresses outside the pools, invalid policy), -ENOMEM.
 */
int gw_run_register(struct gw *g, const struct gw_ctl_req *req, uid_t uid, char *why,
		    size_t why_size);
/**
 * gw_run_set_policy() - compile @req's policy and make it @r's (the old one is freed)
 * Return: 0; -EINVAL with the first diagnostic in @why (the old policy stays); -ENOMEM.
 */
int gw_run_set_policy(struct gw_run *r, const struct gw_ctl_req *req, char *why, size_t why_size);
/** gw_run_unregister() - remove @r from the table; it is freed with its last reference. */
void gw_run_unregister(struct gw *g, struct gw_run *r);
/** gw_run_put() - drop one reference to @r (NULL is fine). */
void gw_run_put(struct gw *g, struct gw_run *r);
struct gw_ssrf_env;
/**
 * gw_ssrf_env() - what the SSRF guard (gw_upstream_class()) needs besides the
 * special ranges: the gateway's pools and the host's own addresses (read at
 * most every 2 s)
 */
void gw_ssrf_env(struct gw *g, struct gw_ssrf_env *env);

/* ------------------------------------------------------------ resolve.c */

/** gw_resolve_init() - the c-ares channel in the loop (config resolvers or resolv.conf). Return: 0
 * or -errno. */
int gw_resolve_init(struct gw *g, struct wd_err *err);
/** gw_resolve_free() - destroy the channel; pending callbacks see ARES_EDESTRUCTION. */
void gw_resolve_free(struct gw *g);
/**
 * gw_resolve() - A and AAAA of @name: from the cache at once, else when
 * c-ares answers (@w->cb is called exactly once unless cancelled)
 */
void gw_resolve(struct gw *g, const char *name, struct gw_waiter *w);
/** gw_resolve_cancel() - forget @w (its callback will not run); harmless when idle. */
void gw_resolve_cancel(struct gw_waiter *w);
/** gw_ares_event() - an epoll event on a c-ares socket. */
void gw_ares_event(struct gw *g, int fd, unsigned events);
/** gw_ares_timeouts() - let c-ares handle its expired timeouts. */
void gw_ares_timeouts(struct gw *g);
/** gw_ares_next() - c-ares' next deadline (monotonic ns), or UINT64_MAX. */
uint64_t gw_ares_next(struct gw *g);

/* ------------------------------------------------------------ dnsfront.c */

/** gw_dns_udp_ready() - answer the queries waiting on a UDP DNS socket. */
void gw_dns_udp_ready(struct gw_listener *l);
/**
 * gw_dns_drain() - answer every query already waiting on the UDP DNS sockets
 * (before a control answer that reports counters: the queries a run sent
 * before it ended are then counted in them)
 */
void gw_dns_drain(struct gw *g);
/** gw_dns_tcp_accept() - accept DNS-over-TCP connections. */
void gw_dns_tcp_accept(struct gw_listener *l);
/** gw_dnsconn_event() - an epoll event on a DNS-over-TCP connection. */
void gw_dnsconn_event(struct gw_dnsconn *d, unsigned events);
/** gw_dnsconn_timeout() - a DNS-over-TCP connection was idle too long: close it. */
void gw_dnsconn_timeout(struct gw_dnsconn *d);
/** gw_dnsconn_close() - close and free @d (a pending forwarded answer is dropped). */
void gw_dnsconn_close(struct gw_dnsconn *d);

/* ------------------------------------------------------------ the TCP path */

/* a connection's sockets: registered once, edge-triggered, for both ways */
#define GW_EP_EVENTS (EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET)

/* tcp.c */
/** gw_tcp_accept() - accept on a transparent or proxy listener. */
void gw_tcp_accept(struct gw_listener *l);
/**
 * gw_conn_again() - relay what the connections on g->again still have
 * (a wake-up's work is bounded; edge-triggered sockets send no new event)
 * Return: true when some connection is still queued (poll again at once).
 */
bool gw_conn_again(struct gw *g);

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

/* relayconn.c */
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
/**
 * gw_conn_deny() - deny @c: audited, then a TLS alert or an HTTP 403 naming
 * @reason and a denial id and a drain of the client, else a reset
 */
void gw_conn_deny(struct gw_conn *c, const char *reason);
/** gw_conn_late_deny_say() - the 403 of a later request's denial, once the upstream finished. */
void gw_conn_late_deny_say(struct gw_conn *c);
/** gw_conn_flush_peeked() - once connected and checked, write the peeked bytes upstream. */
void gw_conn_flush_peeked(struct gw_conn *c);
/** gw_conn_relay() - move what @c's sockets have, both ways (closes @c at its end). */
void gw_conn_relay(struct gw_conn *c);
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
/** gw_conn_reap() - free the connections closed during this loop round. */
void gw_conn_reap(struct gw *g);

/* ------------------------------------------------------------ ctlsrv.c */

/** gw_ctl_accept() - accept control connections (SO_PEERCRED recorded). */
void gw_ctl_accept(struct gw_listener *l);
/** gw_ctlconn_event() - an epoll event on a control connection. */
void gw_ctlconn_event(struct gw_ctlconn *c, unsigned events);
/** gw_ctlconn_close() - close and free a control connection. */
void gw_ctlconn_close(struct gw_ctlconn *c);
/** gw_priv_event() - an epoll event on the channel to the parent (a reply, or its end). */
void gw_priv_event(struct gw *g, unsigned events);
/** gw_priv_free() - forget the requests still waiting for the parent. */
void gw_priv_free(struct gw *g);

/* ------------------------------------------------------------ udplog.c */

/** gw_nflog_event() - read the NFLOG socket: one audit event per dropped packet (rate-limited).
 */
void gw_nflog_event(struct gw *g);
/**
 * gw_nflog_drain() - read everything the NFLOG socket holds now (bounded), so that a run's
 * last dropped packets are counted and audited before its counters are read or it leaves
 */
void gw_nflog_drain(struct gw *g);
/** gw_udplog_flush() - write the summary events of suppressed packets (timer, run end). */
void gw_udplog_flush(struct gw *g);
/** gw_udplog_run_end() - write @r's pending summary before it leaves the table. */
void gw_udplog_run_end(struct gw *g, struct gw_run *r);

#endif /* WARDEN_GATEWAY_GW_INTERNAL_H */

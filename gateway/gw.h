/* gw.h - the gateway module: event loop, run table, synthetic addresses, name
 * cache, address classifier, control protocol, DNS front and TCP relay.
 *
 * The pure parts (timer heap, synthetic pool, address classifier, name cache,
 * control request parser) have no I/O and are unit-tested on their own; the
 * rest is the data plane driven by one epoll loop (gw_loop_run()). See
 * docs/gateway.md for the theory of operation.
 */
#ifndef WARDEN_GATEWAY_GW_H
#define WARDEN_GATEWAY_GW_H

#include "audit/audit.h"
#include "common/common.h"
#include "policy/policy.h"

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

/* ------------------------------------------------------------ timer heap */

/**
 * struct gw_timer - one deadline, embedded in its owner
 * @when:	monotonic deadline in nanoseconds
 * @pos:	index in the heap, or GW_TIMER_IDLE when not armed
 * @kind:	what fires (owner-defined)
 * @owner:	the object the timer belongs to
 */
struct gw_timer {
	uint64_t when;
	size_t pos;
	int kind;
	void *owner;
};

#define GW_TIMER_IDLE ((size_t)-1)

/**
 * struct gw_timer_heap - a binary min-heap of armed timers
 * @v:		the heap (pointers to embedded timers)
 * @n:		armed timers
 * @cap:	allocated slots
 */
struct gw_timer_heap {
	struct gw_timer **v;
	size_t n;
	size_t cap;
};

/** gw_timer_init() - an idle timer for @owner, of @kind. */
void gw_timer_init(struct gw_timer *t, int kind, void *owner);
/**
 * gw_timer_arm() - arm (or re-arm) @t to fire at @when
 * Return: 0, or -ENOMEM (the timer is then left as it was).
 */
int gw_timer_arm(struct gw_timer_heap *h, struct gw_timer *t, uint64_t when);
/** gw_timer_cancel() - disarm @t (harmless when idle). */
void gw_timer_cancel(struct gw_timer_heap *h, struct gw_timer *t);
/** gw_timer_next() - the earliest deadline, or UINT64_MAX when none is armed. */
uint64_t gw_timer_next(const struct gw_timer_heap *h);
/**
 * gw_timer_expired() - remove and return one timer due at @now
 * Return: the timer (now idle), or NULL when none is due.
 */
struct gw_timer *gw_timer_expired(struct gw_timer_heap *h, uint64_t now);
/** gw_timer_heap_free() - release the heap's memory (timers stay with their owners). */
void gw_timer_heap_free(struct gw_timer_heap *h);

/* ------------------------------------------------------- small helpers */

/**
 * struct gw_addr - an IPv4 or IPv6 address
 * @family:	AF_INET or AF_INET6 (0: none)
 * @a:		4 or 16 bytes, network order
 */
struct gw_addr {
	int family;
	uint8_t a[16];
};

/** gw_addr_len() - 4 for AF_INET, 16 for AF_INET6, 0 otherwise. */
size_t gw_addr_len(int family);
/** gw_addr_eq() - same family and bytes. */
bool gw_addr_eq(const struct gw_addr *x, const struct gw_addr *y);
/**
 * gw_addr_from_sa() - address and port of a sockaddr (v4-mapped v6 becomes v4)
 * Return: 0, or -EAFNOSUPPORT.
 */
int gw_addr_from_sa(const struct sockaddr_storage *ss, struct gw_addr *a, uint16_t *port);
/** gw_addr_to_sa() - the sockaddr for @a:@port; returns its length. */
socklen_t gw_addr_to_sa(const struct gw_addr *a, uint16_t port, struct sockaddr_storage *ss);
/** gw_addr_str() - @a as text into @out (at least INET6_ADDRSTRLEN bytes); returns @out. */
const char *gw_addr_str(const struct gw_addr *a, char *out, size_t size);
/**
 * gw_addr_parse() - parse an IPv4 or IPv6 literal
 * Return: 0, or -EINVAL.
 */
int gw_addr_parse(const char *s, struct gw_addr *a);

/**
 * struct gw_rng - a small xorshift generator (not for secrets)
 * @s:		state; never 0
 */
struct gw_rng {
	uint64_t s;
};

/** gw_rng_seed() - seed @r (0 is replaced by a fixed constant). */
void gw_rng_seed(struct gw_rng *r, uint64_t seed);
/** gw_rng_next() - the next 64 random bits. */
uint64_t gw_rng_next(struct gw_rng *r);

/* -------------------------------------------------- address classifier */

/**
 * enum gw_addr_class - why an upstream address is refused (SSRF guard)
 */
enum gw_addr_class {
	GW_ADDR_PUBLIC = 0,  /* nothing special: may be connected to */
	GW_ADDR_UNSPECIFIED, /* 0.0.0.0/8, :: */
	GW_ADDR_LOOPBACK,    /* 127/8, ::1 */
	GW_ADDR_PRIVATE,     /* RFC 1918, fec0::/10 */
	GW_ADDR_CGNAT,	     /* 100.64/10 */
	GW_ADDR_LINK_LOCAL,  /* 169.254/16 (metadata), fe80::/10 */
	GW_ADDR_MULTICAST,   /* 224/4, ff00::/8 */
	GW_ADDR_RESERVED,    /* 240/4 and broadcast, 192.0.0/24, 100::/64 */
	GW_ADDR_EMBEDDED_V4, /* ::ffff:0:0/96, ::/96, 64:ff9b::/96, 2002::/16, 2001::/32 */
	GW_ADDR_ULA,	     /* fc00::/7 */
	GW_ADDR_GATEWAY,     /* the gateway's own addresses and pools (set by the caller) */
};

/**
 * gw_addr_classify() - the special-purpose range @a is in
 * @a:		the address
 *
 * Pure. Documentation ranges (192.0.2/24, 198.51.100/24, 203.0.113/24,
 * 2001:db8::/32) are PUBLIC: the test lab lives there.
 *
 * Return: the class (GW_ADDR_PUBLIC when none applies).
 */
enum gw_addr_class gw_addr_classify(const struct gw_addr *a);

/** gw_addr_class_name() - short text for @c ("loopback", ...). */
const char *gw_addr_class_name(enum gw_addr_class c);

/**
 * gw_prefix_contains() - whether @a lies in @net/@prefix (same family)
 */
bool gw_prefix_contains(const struct gw_addr *net, unsigned prefix, const struct gw_addr *a);

/**
 * gw_cidr_parse() - parse "addr/prefix" strictly (wd_cidr_parse(): host bits must be zero)
 * Return: 0, or -EINVAL.
 */
int gw_cidr_parse(const char *s, struct gw_addr *net, unsigned *prefix);

/* -------------------------------------------------- synthetic addresses */

/**
 * struct gw_synth_entry - one bound synthetic address (one allocation)
 * @addr:	the address
 * @name:	the name it stands for
 */
struct gw_synth_entry {
	struct gw_addr addr;
	char name[];
};

/**
 * struct gw_synth - a run's synthetic addresses: name <-> address, per family
 * @net:	the pool of each family ([0] v4, [1] v6)
 * @prefix:	its prefix length
 * @n:		bound entries (never removed)
 * @by_addr:	struct gw_synth_entry by address (owns them)
 * @by_name:	the same entries by (family, name)
 * @limit:	most entries per family
 * @count:	entries per family
 * @rng:	allocation randomness
 */
struct gw_synth {
	struct gw_addr net[2];
	unsigned prefix[2];
	size_t n;
	struct wd_htable by_addr;
	struct wd_htable by_name;
	size_t limit;
	size_t count[2];
	struct gw_rng rng;
};

/**
 * gw_synth_init() - an empty pool pair
 * @s:		the pools
 * @net4:	IPv4 pool ("100.96.0.0/12"), prefix 8..30
 * @net6:	IPv6 pool, prefix 16..126
 * @limit:	most addresses handed out per family (also capped by the pool size)
 * @seed:	seed for the random allocation
 *
 * Return: 0, or -EINVAL for a bad pool.
 */
int gw_synth_init(struct gw_synth *s, const char *net4, const char *net6, size_t limit,
		  uint64_t seed);

/**
 * gw_synth_get() - the synthetic address for @name, allocating one if needed
 * @s:		the pools
 * @family:	AF_INET or AF_INET6
 * @name:	normalised name (lower case, no trailing dot)
 * @ret:	the address
 *
 * A new address is chosen at random among the free ones of the pool (not
 * the network address nor, for IPv4, the broadcast address) and stays bound
 * to @name for the life of @s.
 *
 * Return: 0 (bound before), 1 (newly bound), -ENOSPC when the pool or the
 * limit is exhausted, -EINVAL, -ENOMEM.
 */
int gw_synth_get(struct gw_synth *s, int family, const char *name, struct gw_addr *ret);

/**
 * gw_synth_name() - the name bound to @a
 * Return: the name (owned by @s), or NULL when @a is not bound.
 */
const char *gw_synth_name(struct gw_synth *s, const struct gw_addr *a);

/** gw_synth_in_pool() - @a lies inside one of the pools (bound or not). */
bool gw_synth_in_pool(const struct gw_synth *s, const struct gw_addr *a);

/** gw_synth_free() - release everything; @s may be zeroed. */
void gw_synth_free(struct gw_synth *s);

/* ------------------------------------------------------------ name cache */

#define GW_CACHE_ADDRS 16

/**
 * struct gw_cache_entry - one cached answer for a name
 * @name:	the name
 * @rcode:	DNS rcode of the answer (NOERROR with no addresses = no data)
 * @addrs:	addresses (A and AAAA together)
 * @n:		number of @addrs
 * @expires:	monotonic ns after which the entry is stale
 * @hash:	wd_hash_str(@name)
 */
struct gw_cache_entry {
	char name[256];
	int rcode;
	struct gw_addr addrs[GW_CACHE_ADDRS];
	size_t n;
	uint64_t expires;
	uint64_t hash;
};

/**
 * struct gw_cache - name -> addresses, by TTL clamped to [floor, ceiling]
 * @t:		struct gw_cache_entry by name (@t.n entries)
 * @max:	most entries
 * @ttl_floor:	shortest time an answer is kept (s)
 * @ttl_ceil:	longest (s)
 */
struct gw_cache {
	struct wd_htable t;
	size_t max;
	uint32_t ttl_floor;
	uint32_t ttl_ceil;
};

/**
 * gw_cache_init() - an empty cache
 * @c:		the cache
 * @max:	most entries kept
 * @ttl_floor:	shortest time (s) an answer is kept, also for negative answers
 * @ttl_ceil:	longest
 *
 * Return: 0, -EINVAL, -ENOMEM.
 */
int gw_cache_init(struct gw_cache *c, size_t max, uint32_t ttl_floor, uint32_t ttl_ceil);

/**
 * gw_cache_put() - remember an answer (replacing an older one)
 * @c:		the cache
 * @name:	the name
 * @rcode:	its rcode
 * @addrs:	addresses (up to GW_CACHE_ADDRS are kept)
 * @n:		how many
 * @ttl:	the answer's TTL in seconds (clamped)
 * @now:	monotonic ns
 *
 * When full, stale entries are dropped first; if still full the answer is
 * not cached.
 *
 * Return: 0, -ENOSPC (not cached), -ENOMEM.
 */
int gw_cache_put(struct gw_cache *c, const char *name, int rcode, const struct gw_addr *addrs,
		 size_t n, uint32_t ttl, uint64_t now);

/**
 * gw_cache_get() - a fresh answer for @name
 * Return: the entry (valid until the next put), or NULL.
 */
const struct gw_cache_entry *gw_cache_get(struct gw_cache *c, const char *name, uint64_t now);

/** gw_cache_free() - release everything. */
void gw_cache_free(struct gw_cache *c);

/* ------------------------------------------------------ control protocol */

/* Largest control request line (a policy is at most POLICY_MAX_BYTES). */
#define GW_CTL_MAX (POLICY_MAX_BYTES + 65536)
/* Longest run id. */
#define GW_RUN_ID_MAX 64

enum gw_ctl_op {
	GW_CTL_REGISTER = 0,
	GW_CTL_UNREGISTER,
	GW_CTL_REPLACE, /* replace a run's policy (allowlist) */
	GW_CTL_LIST,
	GW_CTL_STATS,
	GW_CTL_N,
};

/**
 * struct gw_ctl_req - one parsed control request
 * @op:		what is asked
 * @id:		run id (register, unregister, replace)
 * @ifname:	host-side interface (register)
 * @host4:	host-side IPv4 of the run's link (register; family 0 if none)
 * @sandbox4:	the sandbox's IPv4
 * @host6:	host-side IPv6
 * @sandbox6:	the sandbox's IPv6
 * @policy:	policy YAML (register, replace); points into @priv
 * @policy_len:	its length
 * @policy_name: name for messages and audit events (optional)
 * @priv:	storage owned by the request (gw_ctl_req_clear())
 */
struct gw_ctl_req {
	enum gw_ctl_op op;
	char id[GW_RUN_ID_MAX + 1];
	char ifname[16];
	struct gw_addr host4, sandbox4, host6, sandbox6;
	const char *policy;
	size_t policy_len;
	char policy_name[256];
	void *priv;
};

/**
 * gw_ctl_parse() - parse one request line strictly
 * @buf:	the line, without its newline
 * @len:	its length (at most GW_CTL_MAX)
 * @req:	the request (clear it with gw_ctl_req_clear() after a 0 return)
 * @why:	on error, a reason for the client
 * @why_size:	size of @why
 *
 * A request is one JSON object: "op" and exactly the keys that op takes,
 * each of the right type and form; duplicate keys, unknown keys, missing
 * keys, bad addresses and over-long values are refused.
 *
 * Return: 0, -EINVAL (malformed: the caller closes the connection), -E2BIG,
 * -ENOMEM.
 */
int gw_ctl_parse(const char *buf, size_t len, struct gw_ctl_req *req, char *why, size_t why_size);

/** gw_ctl_req_clear() - release what @req owns. */
void gw_ctl_req_clear(struct gw_ctl_req *req);

/** gw_ctl_op_name() - "register", ... */
const char *gw_ctl_op_name(enum gw_ctl_op op);

/* ------------------------------------------------------------ the gateway */

struct gw;
struct gw_run;

/**
 * struct gw_limits - resource limits of the data plane
 * @conns_total:	most relayed connections at once
 * @conns_per_run:	most per run
 * @peek_ms:		longest wait for a client's first bytes
 * @connect_ms:		longest wait for an upstream connect (per address)
 * @idle_ms:		a relayed connection idle this long is closed
 * @ttl_floor:		name cache TTL floor (s)
 * @ttl_ceil:		name cache TTL ceiling (s)
 * @synth_per_run:	most synthetic names per run and family
 * @audit_bytes:	audit bytes a run's events may take (then summaries only)
 * @sockbuf:		SO_RCVBUF / SO_SNDBUF of relayed sockets, bytes
 * @run_buffer:		bytes a run's connections may hold in pipes and stashes
 */
struct gw_limits {
	unsigned conns_total;
	unsigned conns_per_run;
	unsigned peek_ms;
	unsigned connect_ms;
	unsigned idle_ms;
	unsigned ttl_floor;
	unsigned ttl_ceil;
	unsigned synth_per_run;
	uint64_t audit_bytes;
	int sockbuf;
	uint64_t run_buffer;
};

/**
 * struct gw_fds - the sockets a privileged parent opens for a worker
 * (-1 when absent)
 */
struct gw_fds {
	int transparent[2]; /* [0] v4, [1] v6 */
	int proxy[2];
	int dns_udp[2];
	int dns_tcp[2];
	int ctl;
	int audit; /* the audit log (a regular file, O_APPEND), or -1 */
	int nflog; /* an NFLOG netlink socket bound to the config's group, or -1 */
};

/** gw_fds_init() - mark every slot of @fds absent (-1). */
void gw_fds_init(struct gw_fds *fds);

/**
 * gw_fds_open() - create and bind every listening socket of @conf
 * @conf:	the configuration
 * @ctl_path:	control socket path (its folder is created; the socket is
 *		made connectable by every user: requests are checked by uid)
 * @fds:	the sockets (all CLOEXEC, non-blocking)
 * @err:	what failed
 *
 * Return: 0, or a negative errno (nothing is left open).
 */
int gw_fds_open(const struct wd_gwconf *conf, const char *ctl_path, struct gw_fds *fds,
		struct wd_err *err);

/**
 * gw_fds_inherit() - adopt the listening sockets a launcher made for this gateway elsewhere (a
 * rootless run's own network namespace) and left open at descriptors @first..@first+@n-1
 * @conf:	the configuration: its ports say which slot each socket fills
 * @first:	the first descriptor (3)
 * @n:		how many
 * @fds:	the slots to fill (gw_fds_init()ed, or holding the control socket); each socket
 *		becomes CLOEXEC, non-blocking and tuned like gw_fds_open()'s
 * @err:	what failed
 *
 * Each must be a bound IPv4 or IPv6 socket (TCP listening, or UDP; IPv6 with IPV6_V6ONLY)
 * whose local port is one of the config's, and fill a slot no other one fills; or the one
 * NETLINK_NETFILTER socket, an NFLOG group bound where the listeners live (the NFLOG slot).
 *
 * Return: 0, or a negative errno (the caller closes @fds).
 */
int gw_fds_inherit(const struct wd_gwconf *conf, int first, int n, struct gw_fds *fds,
		   struct wd_err *err);

/** gw_fds_close() - close every socket in @fds. */
void gw_fds_close(struct gw_fds *fds);

/* ------------------------------------------------ parent <-> worker channel */

/*
 * The privileged parent and its worker share one SOCK_SEQPACKET socketpair.
 * Every message is one fixed-size struct, checked field by field by a pure
 * function below; anything malformed is fatal to the channel (both sides
 * exit: fail closed).
 *
 *   parent -> worker  GW_PRIV_LISTENERS  once, descriptors attached
 *   worker -> parent  GW_PRIV_RUN_ADD / GW_PRIV_RUN_DEL  (only with --manage-nft)
 *   parent -> worker  GW_PRIV_RUN_REPLY  one per request, in order
 */
#define GW_PRIV_MAGIC 0x57444757u /* "WDGW" */
#define GW_PRIV_VERSION 3
#define GW_PRIV_KINDS 11 /* slots of struct gw_fds */

enum gw_priv_type {
	GW_PRIV_LISTENERS = 1, /* the listening sockets etc., attached with SCM_RIGHTS */
	GW_PRIV_RUN_ADD = 2,   /* add a run's nft set elements */
	GW_PRIV_RUN_DEL = 3,   /* remove them */
	GW_PRIV_RUN_REPLY = 4, /* the outcome of one RUN_ADD / RUN_DEL */
};

/**
 * struct gw_priv_msg - the handoff: what the parent sends its worker first
 * @magic:	GW_PRIV_MAGIC
 * @version:	GW_PRIV_VERSION
 * @type:	GW_PRIV_LISTENERS
 * @count:	descriptors attached (1..GW_PRIV_KINDS)
 * @kinds:	the slot of each descriptor, in order (transparent v4/v6, proxy
 *		v4/v6, DNS UDP v4/v6, DNS TCP v4/v6, control, audit log, NFLOG);
 *		unused entries 0xff
 */
struct gw_priv_msg {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t count;
	uint8_t kinds[GW_PRIV_KINDS];
	uint8_t pad[1];
};

/**
 * gw_priv_check() - validate a received handoff message (pure)
 * @m:		the message
 * @len:	bytes received
 * @nfds:	descriptors that came with it
 *
 * Return: 0, or -EBADMSG (size, magic, version, type, count, a slot out of
 * range or repeated, unused slots not 0xff).
 */
int gw_priv_check(const struct gw_priv_msg *m, size_t len, unsigned nfds);

/**
 * gw_priv_send_fds() - send every open descriptor of @fds over @sock
 * @sock:	the parent's end of a SOCK_SEQPACKET socketpair
 * @fds:	the descriptors (the caller still owns and closes them)
 *
 * Return: 0, or a negative errno.
 */
int gw_priv_send_fds(int sock, struct gw_fds *fds);

/**
 * gw_priv_recv_fds() - receive and check the parent's descriptors
 * @sock:	the worker's end (waits up to 30 s)
 * @fds:	filled with the descriptors (CLOEXEC); the unset slots are -1
 * @err:	what went wrong
 *
 * Besides gw_priv_check(), each socket must be of the type and family its
 * slot says (NFLOG: a NETLINK_NETFILTER socket), and the audit slot a
 * regular file open for appending.
 *
 * Return: 0, or a negative errno (-EBADMSG for anything malformed: fatal; -EPIPE when
 * the parent closed the channel without a message: it reports its own error).
 */
int gw_priv_recv_fds(int sock, struct gw_fds *fds, struct wd_err *err);

#define GW_PRIV_HAS_V4 0x1
#define GW_PRIV_HAS_V6 0x2

/**
 * struct gw_priv_run - a run update the worker asks the parent to apply
 * @magic:	GW_PRIV_MAGIC
 * @version:	GW_PRIV_VERSION
 * @type:	GW_PRIV_RUN_ADD or GW_PRIV_RUN_DEL
 * @seq:	request number (the reply carries it back)
 * @flags:	GW_PRIV_HAS_V4 and/or GW_PRIV_HAS_V6 (at least one)
 * @pad:	zero
 * @ifname:	host-side interface, NUL-terminated, zero-filled after the NUL
 * @v4:		the sandbox's IPv4 address (zero without GW_PRIV_HAS_V4)
 * @v6:		the sandbox's IPv6 address (zero without GW_PRIV_HAS_V6)
 * @h4:		the run's own gateway IPv4 address, the host side of @ifname (zero
 *		without GW_PRIV_HAS_V4)
 * @h6:		the same for IPv6 (zero without GW_PRIV_HAS_V6)
 */
struct gw_priv_run {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t seq;
	uint8_t flags;
	uint8_t pad[3];
	char ifname[16];
	uint8_t v4[4];
	uint8_t v6[16];
	uint8_t h4[4];
	uint8_t h6[16];
};

/**
 * struct gw_priv_reply - the parent's answer to one struct gw_priv_run
 * @magic:	GW_PRIV_MAGIC
 * @version:	GW_PRIV_VERSION
 * @type:	GW_PRIV_RUN_REPLY
 * @seq:	the request's @seq
 * @status:	0, or a negative errno (-4095..-1)
 * @msg:	why it failed, for the control client; NUL-terminated, zero-filled
 */
struct gw_priv_reply {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t seq;
	int32_t status;
	char msg[240];
};

/**
 * gw_priv_run_encode() - fill @m (pure)
 * @m:		the message
 * @type:	GW_PRIV_RUN_ADD or GW_PRIV_RUN_DEL
 * @seq:	request number
 * @ifname:	host-side interface (1..15 bytes of [A-Za-z0-9_.-])
 * @sb4:	the sandbox's IPv4 (family 0: none)
 * @sb6:	the sandbox's IPv6 (family 0: none)
 * @h4:		the run's own gateway IPv4 (needed with @sb4)
 * @h6:		the run's own gateway IPv6 (needed with @sb6)
 *
 * Return: 0, or -EINVAL (what gw_priv_run_check() would refuse).
 */
int gw_priv_run_encode(struct gw_priv_run *m, enum gw_priv_type type, uint32_t seq,
		       const char *ifname, const struct gw_addr *sb4, const struct gw_addr *sb6,
		       const struct gw_addr *h4, const struct gw_addr *h6);

/**
 * gw_priv_run_check() - validate a received run update (pure; the parent's side)
 * @m:		the message
 * @len:	bytes received
 *
 * Return: 0, or -EBADMSG (size, magic, version, type, flags, non-zero
 * padding, an absent sandbox or gateway address of a named family, an
 * address of an unnamed one, an interface name that is empty, unterminated,
 * not zero-filled or has characters outside [A-Za-z0-9_.-]).
 */
int gw_priv_run_check(const struct gw_priv_run *m, size_t len);

/**
 * gw_priv_run_facts() - a checked @m as interface and addresses
 * @m:		a message gw_priv_run_check() accepted
 * @sb4:	the sandbox's IPv4 address (family 0 when absent)
 * @sb6:	the sandbox's IPv6 address (family 0 when absent)
 * @h4:		the run's own gateway IPv4 address (family 0 when absent)
 * @h6:		the run's own gateway IPv6 address (family 0 when absent)
 */
void gw_priv_run_facts(const struct gw_priv_run *m, struct gw_addr *sb4, struct gw_addr *sb6,
		       struct gw_addr *h4, struct gw_addr *h6);

/**
 * gw_priv_reply_encode() - fill @m (pure); @msg is cut to fit
 * Return: 0, or -EINVAL (@status not 0 or -4095..-1).
 */
int gw_priv_reply_encode(struct gw_priv_reply *m, uint32_t seq, int status, const char *msg);

/**
 * gw_priv_reply_check() - validate a received reply (pure; the worker's side)
 * @m:		the message
 * @len:	bytes received
 * @seq:	the request number the worker waits for
 *
 * Return: 0, or -EBADMSG (size, magic, version, type, another @seq, a
 * status out of range, @msg unterminated or not zero-filled).
 */
int gw_priv_reply_check(const struct gw_priv_reply *m, size_t len, uint32_t seq);

/**
 * gw_set_parent() - let @g send run updates to its privileged parent
 * @g:		the gateway
 * @fd:		the worker's end of the socketpair (owned by @g from now on)
 * @manage_nft:	true: register/unregister wait for the parent to add/remove
 *		the run's nft set elements; false: the channel only watches
 *		for the parent going away
 *
 * A malformed or unexpected message, or the parent closing the channel,
 * ends gw_run_loop() with -EBADMSG / -EPIPE (fail closed).
 *
 * Return: 0, or a negative errno.
 */
int gw_set_parent(struct gw *g, int fd, bool manage_nft);

/* ------------------------------------------------------------ NFLOG */

/**
 * struct gw_nflog_pkt - one packet the nft table logged to NFLOG
 * @group:	the NFLOG group (res_id)
 * @proto:	IP protocol (17 for UDP); 0 when the payload was not readable
 * @src:	source address (family 0 when the payload was not readable)
 * @dst:	destination address
 * @sport:	source port (UDP/TCP with @has_ports)
 * @dport:	destination port
 * @has_ports:	the transport header was there (not a later fragment, not cut):
 *		UDP, TCP and UDP-lite
 * @indev:	input interface index (0: absent)
 * @prefix:	the log rule's prefix (FW_NFLOG_PREFIX_* of nft/nft.h), "" when it has
 *		none; cut to fit, always NUL-terminated
 */
struct gw_nflog_pkt {
	uint16_t group;
	uint8_t proto;
	struct gw_addr src, dst;
	uint16_t sport, dport;
	bool has_ports;
	uint32_t indev;
	char prefix[32];
};

enum gw_nflog_result {
	GW_NFLOG_OK,	    /* @pkt is one logged packet */
	GW_NFLOG_ABSENT,    /* a message that is no packet (ack, other type): skipped */
	GW_NFLOG_END,	    /* no more messages in the buffer */
	GW_NFLOG_MALFORMED, /* stop: the rest of the buffer cannot be trusted */
};

/**
 * gw_nflog_next() - parse the next netlink message of an NFLOG datagram (pure)
 * @buf:	what recv() returned on the NFLOG socket
 * @len:	its length
 * @off:	where to start; advanced past the message
 * @pkt:	filled on GW_NFLOG_OK
 *
 * Every length (netlink header, attributes, IP and UDP headers) is checked
 * against what is there; nothing is read past @len.
 *
 * Return: a named outcome (enum gw_nflog_result).
 */
enum gw_nflog_result gw_nflog_next(const uint8_t *buf, size_t len, size_t *off,
				   struct gw_nflog_pkt *pkt);

/**
 * gw_nflog_open() - a netlink socket bound to NFLOG group @group (needs CAP_NET_ADMIN)
 * @group:	the group the nft table logs to (nft.nflog_group)
 * @ret_fd:	the socket (CLOEXEC, non-blocking), on success
 * @err:	what failed
 *
 * Only the privileged parent calls this; the worker only reads the socket.
 *
 * Return: 0, or a negative errno (-EBUSY: another process has the group).
 */
int gw_nflog_open(uint16_t group, int *ret_fd, struct wd_err *err);

/**
 * struct gw_bucket - a token bucket (pure): @burst events, then @per_s a second
 */
struct gw_bucket {
	uint64_t last_ns;
	uint32_t tokens_milli; /* thousandths of a token */
};

/**
 * gw_bucket_take() - may one more event pass at @now (monotonic ns)?
 * @b:		the bucket (all zero: full on first use)
 * @now:	monotonic ns
 * @burst:	tokens when full
 * @per_s:	tokens added per second
 *
 * Return: true (a token was taken) or false (rate-limited).
 */
bool gw_bucket_take(struct gw_bucket *b, uint64_t now, unsigned burst, unsigned per_s);

/**
 * gw_new() - a gateway over already-open sockets
 * @conf:	configuration (copied)
 * @fds:	listening sockets (owned by the gateway from now on, even on error)
 * @log:	audit log (borrowed; may be NULL: no events are written)
 * @ret:	the gateway
 * @err:	what failed
 *
 * Creates the epoll instance, c-ares channel (upstream resolvers: the
 * config's, else /etc/resolv.conf) and registers every socket.
 *
 * Return: 0, or a negative errno.
 */
int gw_new(const struct wd_gwconf *conf, struct gw_fds *fds, struct audit_log *log, struct gw **ret,
	   struct wd_err *err);

/**
 * gw_run_loop() - serve until gw_stop() or a fatal error
 * Return: 0 after a stop, or a negative errno when the loop itself failed.
 */
int gw_run_loop(struct gw *g);

/** gw_stop() - ask the loop to return (async-signal-safe). */
void gw_stop(struct gw *g);

/** gw_free() - close every connection and socket and release @g. */
void gw_free(struct gw *g);

/**
 * gw_limits_from_conf() - the limits a config asks for
 */
void gw_limits_from_conf(const struct wd_gwconf *conf, struct gw_limits *l);

#endif /* WARDEN_GATEWAY_GW_H */

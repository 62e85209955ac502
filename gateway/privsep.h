/* privsep.h - the privileged parent <-> worker channel's messages (internal
 * header; privsep.c the messages, privio.c their I/O): the descriptor handoff, run updates and
 * their replies, fixed-size structs each checked by a pure function. The worker's side of run
 * updates is privchan.c, the parent's parent.c. */
#ifndef WARDEN_GATEWAY_PRIVSEP_H
#define WARDEN_GATEWAY_PRIVSEP_H

#include "common/common.h"
#include "gateway/addr.h"
#include "gateway/ctmsg.h"
#include "gateway/fds.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

struct ucred; /* Linux's SO_PEERCRED answer (gw_priv_peer(): the parent, Linux only) */

/*
 * The privileged parent and its worker share one SOCK_SEQPACKET socketpair.
 * Every message is one fixed-size struct, checked field by field by a pure
 * function below; anything malformed is fatal to the channel (both sides
 * exit: fail closed).
 *
 *   parent -> worker  GW_PRIV_LISTENERS  once, descriptors attached
 *   worker -> parent  GW_PRIV_RUN_ADD / GW_PRIV_RUN_DEL  (only with --manage-nft)
 *   parent -> worker  GW_PRIV_RUN_REPLY  one per request, in order
 *   worker -> parent  GW_PRIV_NETNS_ADD  a user's network namespace and the client's
 *                                        connection attached (daemon mode)
 *   parent -> worker  GW_PRIV_NETNS_REPLY  its outcome and the run's facts, in order
 *   worker -> parent  GW_PRIV_CGROUP_JOIN  move a process into a daemon-mode run's cgroup
 *   parent -> worker  GW_PRIV_RUN_REPLY  its outcome, in order
 *   worker -> parent  GW_PRIV_CT_GET     the original destination of a redirected UDP flow
 *                                        (conntrack, by the flow's reply tuple)
 *   parent -> worker  GW_PRIV_CT_REPLY   its outcome and that destination, in order
 */
#define GW_PRIV_MAGIC 0x57444757u /* "WDGW" */
#define GW_PRIV_VERSION 5
#define GW_PRIV_KINDS 13 /* slots of struct gw_fds */

enum gw_priv_type {
	GW_PRIV_LISTENERS = 1,	 /* the listening sockets etc., attached with SCM_RIGHTS */
	GW_PRIV_RUN_ADD = 2,	 /* add a run's nft set elements */
	GW_PRIV_RUN_DEL = 3,	 /* remove them */
	GW_PRIV_RUN_REPLY = 4,	 /* the outcome of one RUN_ADD / RUN_DEL */
	GW_PRIV_NETNS_ADD = 5,	 /* plumb a run in the network namespace attached (SCM_RIGHTS) */
	GW_PRIV_NETNS_REPLY = 6, /* the outcome of one NETNS_ADD, with the run's facts */
	GW_PRIV_CGROUP_JOIN = 7, /* move a process into a plumbed run's cgroup (RUN_REPLY) */
	GW_PRIV_CT_GET = 8,	 /* a redirected UDP flow's original destination (conntrack) */
	GW_PRIV_CT_REPLY = 9,	 /* the outcome of one CT_GET */
};

/**
 * struct gw_priv_msg - the handoff: what the parent sends its worker first
 * @magic:	GW_PRIV_MAGIC
 * @version:	GW_PRIV_VERSION
 * @type:	GW_PRIV_LISTENERS
 * @count:	descriptors attached (1..GW_PRIV_KINDS)
 * @kinds:	the slot of each descriptor, in order (transparent v4/v6, proxy
 *		v4/v6, DNS UDP v4/v6, DNS TCP v4/v6, control, audit log, NFLOG, UDP
 *		relay v4/v6); unused entries 0xff
 * @pad:	zero
 */
struct gw_priv_msg {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t count;
	uint8_t kinds[GW_PRIV_KINDS];
	uint8_t pad[3];
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
 * gw_priv_take_fds() - the descriptors that came with a received message, into the free slots of
 * @fd (the one collector of SCM_RIGHTS: the worker's start, the parent's requests, a control
 * connection's register with a namespace)
 * @mh:		the message as recvmsg() filled it (with MSG_CMSG_CLOEXEC)
 * @fd:		@max slots, taken in order; a slot that is not -1 (a descriptor kept from an earlier
 *		message) is not free
 * @max:	how many slots (at most 64)
 *
 * Return: how many descriptors this message brought, or -EBADMSG when its control data was
 * truncated, was anything but SCM_RIGHTS, or brought more than the free slots: then every
 * descriptor it brought is closed (its slots -1 again), the earlier ones are kept; -EINVAL when
 * @max is too large.
 */
int gw_priv_take_fds(struct msghdr *mh, int *fd, size_t max);

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

/* Longest run id in a namespace request (gateway/ctl.h GW_RUN_ID_MAX), with its NUL. */
#define GW_PRIV_ID_SIZE 72
/* cgroup folders a namespace reply names (cgroup v1: memory, pids, cpu; v2: one) */
#define GW_PRIV_CGROUPS 3
/* longest such folder, with its NUL */
#define GW_PRIV_CGROUP_SIZE 128

/**
 * struct gw_priv_netns - plumb a run in a user's network namespace (two descriptors come with
 * the message, SCM_RIGHTS, in this order: the namespace, and the client's connection to the
 * control socket, whose SO_PEERCRED the parent reads itself)
 * @magic:	GW_PRIV_MAGIC
 * @version:	GW_PRIV_VERSION
 * @type:	GW_PRIV_NETNS_ADD
 * @seq:	request number
 * @uid:	the control client's uid as the worker read it (SO_PEERCRED); the parent reads the
 *		connection's credentials itself, refuses a request whose @uid or @gid differ from
 *		them (a worker that lies) and uses only its own reading
 * @gid:	its gid as the worker read it (the run's cgroup is delegated to the client's
 *		uid:gid)
 * @id:		the run id, NUL-terminated, zero-filled, printable ASCII without spaces
 * @memory_mb:	the run's memory limit for its cgroup (0: none)
 * @pids:	its pids limit (0: none)
 * @cpu_milli:	its CPU limit in thousandths of a core (0: none)
 */
struct gw_priv_netns {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t seq;
	uint32_t uid;
	uint32_t gid;
	char id[GW_PRIV_ID_SIZE];
	uint64_t memory_mb;
	uint32_t pids;
	uint32_t cpu_milli;
};

/**
 * struct gw_priv_netns_reply - the parent's answer to one struct gw_priv_netns
 * @magic:	GW_PRIV_MAGIC
 * @version:	GW_PRIV_VERSION
 * @type:	GW_PRIV_NETNS_REPLY
 * @seq:	the request's @seq
 * @status:	0, or a negative errno (-4095..-1); on error every fact below is zero
 * @msg:	why it failed; NUL-terminated, zero-filled
 * @ifname:	the host side of the run's veth (as in struct gw_priv_run)
 * @flags:	GW_PRIV_HAS_V4 and/or GW_PRIV_HAS_V6
 * @pad:	zero
 * @v4:		the sandbox's IPv4 address
 * @v6:		the sandbox's IPv6 address
 * @h4:		the run's own gateway IPv4 address
 * @h6:		the run's own gateway IPv6 address
 * @cgroup:	the run's cgroup folders, delegated to the user (empty strings: none),
 *		NUL-terminated and zero-filled
 */
/* its first six members are struct gw_priv_reply's, spelled out on purpose: each message is one
 * fixed wire layout, checked member by member, never a nesting of others */
struct gw_priv_netns_reply {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t seq;
	int32_t status;
	char msg[240];
	char ifname[16];
	uint8_t flags;
	uint8_t pad[3];
	uint8_t v4[4];
	uint8_t v6[16];
	uint8_t h4[4];
	uint8_t h6[16];
	char cgroup[GW_PRIV_CGROUPS][GW_PRIV_CGROUP_SIZE];
};

/**
 * gw_priv_id_ok() - whether @id may name a daemon-mode run (pure): 1..GW_PRIV_ID_SIZE-1 bytes of
 * [A-Za-z0-9_.-], not starting with a dot (it becomes a cgroup folder's name: no "/", no "..")
 * @id:		the run id, NUL-terminated
 * Return: true when it may.
 */
bool gw_priv_id_ok(const char *id);

/**
 * gw_priv_netns_check() - validate a received namespace request (pure; the parent's side)
 * @m:		the message
 * @len:	bytes received
 *
 * Return: 0, or -EBADMSG (size, magic, version, type, an id that is empty, unterminated,
 * not zero-filled or not what gw_priv_id_ok() accepts).
 */
int gw_priv_netns_check(const struct gw_priv_netns *m, size_t len);

/**
 * gw_priv_netns_reply_check() - validate a received namespace reply (pure; the worker's side)
 * @m:		the message
 * @len:	bytes received
 * @seq:	the request number the worker waits for
 *
 * Return: 0, or -EBADMSG (size, magic, version, type, another @seq, a status out of range,
 * strings unterminated or not zero-filled, facts with an error, or on success what
 * gw_priv_run_check() refuses of the interface and addresses).
 */
int gw_priv_netns_reply_check(const struct gw_priv_netns_reply *m, size_t len, uint32_t seq);

/**
 * gw_priv_send_netns() - send @m with the namespace @fd and the client's connection @client
 * attached
 * @sock:	the channel
 * @m:		the request
 * @fd:		the namespace
 * @client:	the control connection the register came on
 * Return: 0, or a negative errno.
 */
int gw_priv_send_netns(int sock, const struct gw_priv_netns *m, int fd, int client);

/**
 * struct gw_priv_join - move process @pid into the cgroup of the daemon-mode run on @ifname (the
 * parent checks that @pid is that run's user's and in that run's network namespace)
 * @magic:	GW_PRIV_MAGIC
 * @version:	GW_PRIV_VERSION
 * @type:	GW_PRIV_CGROUP_JOIN
 * @seq:	request number (a struct gw_priv_reply answers)
 * @pid:	the process (2..INT32_MAX)
 * @ifname:	the run's interface (as in struct gw_priv_run)
 */
struct gw_priv_join {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t seq;
	int32_t pid;
	char ifname[16];
};

/**
 * gw_priv_join_encode() - fill @m (pure)
 * @m:		the message
 * @seq:	request number
 * @ifname:	the run's interface
 * @pid:	the process
 * Return: 0, or -EINVAL (what gw_priv_join_check() would refuse).
 */
int gw_priv_join_encode(struct gw_priv_join *m, uint32_t seq, const char *ifname, pid_t pid);

/**
 * gw_priv_join_check() - validate a received join request (pure; the parent's side)
 * @m:		the message
 * @len:	bytes received
 * Return: 0, or -EBADMSG (size, magic, version, type, a pid below 2, an interface name as
 * gw_priv_run_check() refuses it).
 */
int gw_priv_join_check(const struct gw_priv_join *m, size_t len);

/**
 * struct gw_priv_ct - ask for the original destination of the redirected UDP flow whose reply
 * tuple is (@gw:@gw_port -> @client:@client_port): the parent asks conntrack (gw_ct_lookup()) and
 * answers only for a flow to its UDP relay's port from a run's address (never reading a datagram)
 * @magic:	GW_PRIV_MAGIC
 * @version:	GW_PRIV_VERSION
 * @type:	GW_PRIV_CT_GET
 * @seq:	request number (a struct gw_priv_ct_reply answers)
 * @family:	AF_INET or AF_INET6 (both addresses)
 * @pad:	zero
 * @client_port: the client's port (host order, not 0)
 * @gw_port:	the relay's port the flow was redirected to (host order, not 0)
 * @client:	the client's address (4 or 16 bytes; the rest zero)
 * @gw:		the address the flow was redirected to (likewise)
 */
struct gw_priv_ct {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t seq;
	uint8_t family;
	uint8_t pad[3];
	uint16_t client_port;
	uint16_t gw_port;
	uint8_t client[16];
	uint8_t gw[16];
};

/**
 * struct gw_priv_ct_reply - the parent's answer to one struct gw_priv_ct
 * @magic:	GW_PRIV_MAGIC
 * @version:	GW_PRIV_VERSION
 * @type:	GW_PRIV_CT_REPLY
 * @seq:	the request's @seq
 * @status:	0, or a negative errno (-4095..-1; -ENOENT: no such flow, -EPERM: refused); on
 *		error every field below is zero
 * @family:	AF_INET or AF_INET6: the family of @dst
 * @pad:	zero
 * @port:	the port the client sent to (host order, not 0)
 * @dst:	the address the client sent to (4 or 16 bytes; the rest zero)
 */
struct gw_priv_ct_reply {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t seq;
	int32_t status;
	uint8_t family;
	uint8_t pad[1];
	uint16_t port;
	uint8_t dst[16];
};

/**
 * gw_priv_ct_encode() - fill @m (pure)
 * @m:		the message
 * @seq:	request number
 * @reply:	the flow's reply tuple: source the relay's address and port, destination the
 *		client's
 * Return: 0, or -EINVAL (what gw_priv_ct_check() would refuse).
 */
int gw_priv_ct_encode(struct gw_priv_ct *m, uint32_t seq, const struct gw_ct_tuple *reply);

/**
 * gw_priv_ct_check() - validate a received conntrack request (pure; the parent's side)
 * @m:		the message
 * @len:	bytes received
 * @reply:	on success, the reply tuple it asks about
 * Return: 0, or -EBADMSG (size, magic, version, type, family, a port 0, non-zero padding or
 * address bytes past the family's length).
 */
int gw_priv_ct_check(const struct gw_priv_ct *m, size_t len, struct gw_ct_tuple *reply);

/**
 * gw_priv_ct_reply_encode() - fill @m (pure)
 * @m:		the message
 * @seq:	the request's number
 * @status:	0, or a negative errno (-4095..-1)
 * @dst:	with @status 0, the original destination's address (else NULL)
 * @port:	and port
 * Return: 0, or -EINVAL (what gw_priv_ct_reply_check() would refuse).
 */
int gw_priv_ct_reply_encode(struct gw_priv_ct_reply *m, uint32_t seq, int status,
			    const struct gw_addr *dst, uint16_t port);

/**
 * gw_priv_ct_reply_check() - validate a received conntrack reply (pure; the worker's side)
 * @m:		the message
 * @len:	bytes received
 * @seq:	the request number the worker waits for
 * Return: 0, or -EBADMSG (size, magic, version, type, another @seq, a status out of range, an
 * error with facts, a success without them, non-zero padding or bytes past the family's).
 */
int gw_priv_ct_reply_check(const struct gw_priv_ct_reply *m, size_t len, uint32_t seq);

/**
 * gw_priv_peer() - who is at the other end of @client, as the kernel says: the parent's own
 * reading of a daemon-mode register's credentials (never the worker's word)
 * @client:	the descriptor the worker attached as the client's connection
 * @ctl_path:	the control socket's path (the configuration's control.path)
 * @cred:	on success the peer's pid, uid and gid (SO_PEERCRED: fixed when it connected)
 * @why:	on refusal, a reason
 * @size:	size of @why
 *
 * @client must be a connected AF_UNIX stream socket accepted on the control socket: its own
 * address is @ctl_path. A socketpair, a socket the worker connected itself (its peer's
 * credentials would be those of whoever listens there) or a listener are refused.
 *
 * Return: 0; -EPERM not such a connection; another negative errno.
 */
int gw_priv_peer(int client, const char *ctl_path, struct ucred *cred, char *why, size_t size);

/**
 * gw_netns_check() - whether @fd is a network namespace that @uid may hand the gateway: of type
 * CLONE_NEWNET (NS_GET_NSTYPE), its owning user namespace (NS_GET_USERNS) owned by @uid
 * (NS_GET_OWNER_UID) and not the caller's own user namespace (the host's), for every @uid, 0 too
 * @fd:		the descriptor a client sent
 * @uid:	the client (SO_PEERCRED)
 * @why:	on refusal, a reason for the client
 * @size:	size of @why
 *
 * Return: 0; -EINVAL not a namespace, or not a network namespace; -EPERM a namespace of
 * someone else's (or the host's); another negative errno.
 */
int gw_netns_check(int fd, uid_t uid, char *why, size_t size);

#endif /* WARDEN_GATEWAY_PRIVSEP_H */

/* nft_internal.h - internal to nft/ (and its unit tests): the ruleset model, the libnftnl
 * builder and the netlink batch helpers.
 */
#ifndef WARDEN_NFT_INTERNAL_H
#define WARDEN_NFT_INTERNAL_H

#include "nft/nft.h"

#include <stdarg.h>

struct nftnl_obj;
struct nftnl_rule;
struct nftnl_set;
struct nftnl_chain;
struct nftnl_table;
struct mnl_socket;
struct mnl_nlmsg_batch;
struct nlmsghdr;

/* Fixed object names: the shape of the table never depends on the config. */
#define FW_SET_RUNS_IF "runs_if"
#define FW_SET_RUNS_V4 "runs_v4"
#define FW_SET_RUNS_V6 "runs_v6"
#define FW_SET_GW_V4 "gw_v4"
#define FW_SET_GW_V6 "gw_v6"
#define FW_SET_GW_TCP "gw_tcp"
#define FW_SET_GW_UDP "gw_udp"
#define FW_SET_RUN_CONNS "run_conns"
#define FW_SET_RUN_RATE "run_rate"
#define FW_OBJ_RUN_TCP "run_tcp"

/* The elements of one run, in the order fw_build_run() sends them. Adding a run sends the
 * first FW_ELEM_ADDED; the meters' elements are the packet path's, and deleting a run deletes
 * them too (the interface names are random per run and the table outlives the gateway). */
enum fw_run_elem {
	FW_ELEM_IF,    /* runs_if: ifname */
	FW_ELEM_V4,    /* runs_v4: ifname . sandbox IPv4 */
	FW_ELEM_V6,    /* runs_v6: ifname . sandbox IPv6 */
	FW_ELEM_GW4,   /* gw_v4: ifname . the run's own gateway IPv4 */
	FW_ELEM_GW6,   /* gw_v6: ifname . the run's own gateway IPv6 */
	FW_ELEM_CONNS, /* run_conns: ifname (its open flows), deleted only */
	FW_ELEM_RATE,  /* run_rate: ifname (its rate of new flows), deleted only */
	FW_ELEM_N,
};
#define FW_ELEM_ADDED FW_ELEM_CONNS

/* most elements of each meter set (run_conns, run_rate): runs at once */
#define FW_METER_SIZE 65535u

/**
 * enum fw_stmt_kind - the statements the model uses; each renders to one nft phrase and builds
 * to a fixed expression sequence (the one nft itself generates for that phrase)
 */
enum fw_stmt_kind {
	FW_IIF_NOT_PREFIX,    /* iifname != "wd-*" */
	FW_IIF_PREFIX,	      /* iifname "wd-*" */
	FW_OIF_PREFIX,	      /* oifname "wd-*" */
	FW_IIF_SADDR4_IN_SET, /* iifname . ip saddr @set */
	FW_IIF_SADDR6_IN_SET, /* iifname . ip6 saddr @set */
	FW_IIF_DADDR4_IN_SET, /* iifname . ip daddr @set */
	FW_IIF_DADDR6_IN_SET, /* iifname . ip6 daddr @set */
	FW_IIF_IN_SET,	      /* iifname @set */
	FW_IIF_NOT_IN_SET,    /* iifname != @set */
	FW_ICMPV6_TYPE,	      /* icmpv6 type <arg> */
	FW_IP6_HOPLIMIT,      /* ip6 hoplimit <arg> (after an IPv6 match) */
	FW_L4PROTO,	      /* meta l4proto <arg> */
	FW_TCP_DPORT,	      /* tcp dport <arg> */
	FW_UDP_DPORT,	      /* udp dport <arg> */
	FW_TCP_DPORT_IN_SET,  /* tcp dport @set */
	FW_UDP_DPORT_IN_SET,  /* udp dport @set */
	FW_FIB_DADDR_LOCAL,   /* fib daddr type local */
	FW_CT_EST_REL,	      /* ct state established,related */
	FW_CT_NEW,	      /* ct state new */
	FW_CT_COUNT_OVER,     /* add @set { iifname ct count over <arg> } */
	FW_RATE_OVER,	      /* add @set { iifname limit rate over <arg>/second burst 10x } */
	FW_CT_TIMEOUT_SET,    /* ct timeout set "<text>" */
	FW_LOG_GROUP,	      /* log [prefix "<text>"] group <arg> */
	FW_REDIRECT,	      /* redirect to :<arg> */
	FW_NFPROTO,	      /* meta nfproto ipv4|ipv6 (<arg>: NFPROTO_*) */
	FW_DADDR4_GW,	      /* ip daddr <cfg.gw4> */
	FW_DADDR6_GW,	      /* ip6 daddr <cfg.gw6> */
	FW_DADDR4_LOOPBACK,   /* ip daddr 127.0.0.0/8 */
	FW_DADDR4_SYNTH,      /* ip daddr <cfg.synth4>/<cfg.synth4_prefix> */
	FW_DADDR6_SYNTH,      /* ip6 daddr <cfg.synth6>/<cfg.synth6_prefix> */
	FW_DADDR6_LOOPBACK,   /* ip6 daddr ::1 */
	FW_DNAT4_GW,	      /* dnat ip to <cfg.gw4>:<arg> (after an IPv4 match) */
	FW_DNAT6_GW,	      /* dnat ip6 to [<cfg.gw6>]:<arg> (after an IPv6 match) */
	FW_ACCEPT,	      /* accept */
	FW_DROP,	      /* drop */
};

/**
 * struct fw_stmt - one statement of a rule
 * @kind:	what it is
 * @arg:	number it needs (port, type, protocol, group, limit), else 0
 * @set:	set name it looks up (or adds to), else NULL
 * @text:	text it carries (a log prefix), else NULL
 */
struct fw_stmt {
	enum fw_stmt_kind kind;
	uint32_t arg;
	const char *set;
	const char *text;
};

#define FW_RULE_MAX_STMTS 6
#define FW_CHAIN_MAX_RULES 16

/**
 * struct fw_rule - one rule: statements in order, and why it is there
 */
struct fw_rule {
	struct fw_stmt s[FW_RULE_MAX_STMTS];
	unsigned n;
	const char *why;
};

/** enum fw_key - the key types of the sets */
enum fw_key {
	FW_KEY_IFNAME,
	FW_KEY_IFNAME_IPV4,
	FW_KEY_IFNAME_IPV6,
	FW_KEY_PORT,
};

/**
 * struct fw_set_def - one named set
 * @name:	set name
 * @key:	key type
 * @elems:	constant elements (ports), for FW_KEY_PORT
 * @nelems:	number of @elems
 * @id:		NFTA_SET_ID used inside the install batch
 * @dynamic:	filled by the packet path (`flags dynamic`), e.g. a per-run counter
 * @size:	most elements (`size N`), 0: no bound given
 * @why:	comment
 */
struct fw_set_def {
	const char *name;
	enum fw_key key;
	uint16_t elems[3];
	unsigned nelems;
	uint32_t id;
	bool dynamic;
	uint32_t size;
	const char *why;
};

/**
 * struct fw_chain_def - one base chain
 * @name:	chain name
 * @type:	"filter" or "nat"
 * @hook:	NF_INET_* hook number
 * @prio:	priority
 * @prio_text:	priority as nft writes it ("raw", "dstnat + 10")
 * @why:	comment
 * @rules:	the rules in order
 * @nrules:	number of @rules
 */
struct fw_chain_def {
	const char *name;
	const char *type;
	uint32_t hook;
	int32_t prio;
	const char *prio_text;
	const char *why;
	struct fw_rule rules[FW_CHAIN_MAX_RULES];
	unsigned nrules;
};

/**
 * struct fw_obj_def - one stateful object: a conntrack timeout policy for TCP
 * @name:	object name
 * @time_wait:	seconds a flow stays in TIME_WAIT
 * @close:	seconds a flow stays in CLOSE
 * @why:	comment
 */
struct fw_obj_def {
	const char *name;
	uint32_t time_wait;
	uint32_t close;
	const char *why;
};

#define FW_NSETS 9
#define FW_NOBJS 1
#define FW_NCHAINS 5

/**
 * struct fw_model - the whole table for one config (FW_MODE_HOST fills every slot;
 * FW_MODE_RUN fewer: @nobjs, @nsets, @nchains say how many)
 */
struct fw_model {
	struct fw_config cfg;
	unsigned nobjs;
	unsigned nsets;
	unsigned nchains;
	struct fw_obj_def objs[FW_NOBJS];
	struct fw_set_def sets[FW_NSETS];
	struct fw_chain_def chains[FW_NCHAINS];
};

/* TCP conntrack states a timeout policy covers (libnftnl's NFTNL_CTTIMEOUT_TCP_MAX) */
#define FW_TCP_TIMEOUTS 11

/** fw_obj_timeouts() - the seconds per TCP state of @o: the kernel's defaults, and its own. */
void fw_obj_timeouts(const struct fw_obj_def *o, uint32_t t[FW_TCP_TIMEOUTS]);

/** fw_obj_build() - the libnftnl ct timeout object for @o. NULL on ENOMEM. */
struct nftnl_obj *fw_obj_build(const struct fw_model *m, const struct fw_obj_def *o);

/**
 * fw_model_build() - fill @m with the table for @c
 * Return: 0, or -EINVAL when @c fails fw_config_check() (then @err says why).
 */
int fw_model_build(const struct fw_config *c, struct fw_model *m, struct wd_err *err);

/** fw_hook_name() - "prerouting", "input", ... for an NF_INET_* hook; "?" when unknown */
const char *fw_hook_name(uint32_t hook);

/** fw_rule_text() - append the nft text of @r (without indentation or newline) to @out. */
int fw_rule_text(const struct fw_model *m, const struct fw_rule *r, struct wd_buf *out);

/**
 * fw_rule_build() - the libnftnl rule for model rule @r in chain @chain
 * @m:		the model
 * @chain:	chain the rule goes into
 * @r:		the rule
 *
 * Return: a new rule (free with nftnl_rule_free()), or NULL when out of memory.
 */
struct nftnl_rule *fw_rule_build(const struct fw_model *m, const struct fw_chain_def *chain,
				 const struct fw_rule *r);

/** fw_set_build() - the libnftnl set for @s (with its constant elements). NULL on ENOMEM. */
struct nftnl_set *fw_set_build(const struct fw_model *m, const struct fw_set_def *s);

/** fw_chain_build() - the libnftnl base chain for @ch. NULL on ENOMEM. */
struct nftnl_chain *fw_chain_build(const struct fw_model *m, const struct fw_chain_def *ch);

/**
 * fw_rule_signature() - a canonical text of a rule's expressions ("[ meta load iifname => reg
 * 1 ] [ cmp neq ... ]"), the same for a rule built here and the same rule read from the kernel
 * Return: 0 or -ENOMEM.
 */
int fw_rule_signature(const struct nftnl_rule *r, struct wd_buf *out);

/**
 * fw_rule_describe() - a short human summary of any rule ("iifname \"wd-*\" ... accept"),
 * decoded from its expressions; used for rules the model does not know
 * Return: 0 or -ENOMEM.
 */
int fw_rule_describe(const struct nftnl_rule *r, struct wd_buf *out);

/**
 * struct fw_batch - one netlink transaction being built
 * @buf:	message buffer
 * @cap:	size of @buf
 * @mb:		libmnl batch cursor over @buf
 * @seq0:	sequence number of the BATCH_BEGIN message; message i has seq0 + 1 + i
 * @n:		number of messages between BEGIN and END
 * @labels:	what each message does ("add set element wd-x to runs_v4"), for errors
 * @lcap:	allocated @labels
 * @closed:	BATCH_END was written
 */
struct fw_batch {
	char *buf;
	size_t cap;
	struct mnl_nlmsg_batch *mb;
	uint32_t seq0;
	unsigned n;
	char (*labels)[128];
	unsigned lcap;
	bool closed;
};

/** fw_batch_init() - start an empty batch (writes BATCH_BEGIN). Return: 0 or -ENOMEM. */
int fw_batch_init(struct fw_batch *b, uint32_t seq0);

/**
 * fw_batch_add() - start a message in @b; the caller fills its payload, nothing else to do
 * @b:		batch
 * @type:	NFT_MSG_* type
 * @family:	NFPROTO_*
 * @flags:	NLM_F_* flags besides NLM_F_REQUEST and NLM_F_ACK (always set)
 * @fmt:	label format
 *
 * Return: the message header (its payload is to be built at once), or NULL when the batch is
 * full or out of memory.
 */
struct nlmsghdr *fw_batch_add(struct fw_batch *b, uint16_t type, uint16_t family, uint16_t flags,
			      const char *fmt, ...) WD_PRINTF(5, 6);

/** fw_batch_close() - write BATCH_END. Return: 0 or -ENOSPC. */
int fw_batch_close(struct fw_batch *b);

/** fw_batch_len() - bytes of the whole batch so far. */
size_t fw_batch_len(const struct fw_batch *b);

/** fw_batch_free() - release @b; may be called on a zeroed batch. */
void fw_batch_free(struct fw_batch *b);

/**
 * fw_batch_send() - send @b (closing it if needed) and read every ack
 * @b:		batch
 * @errs:	when not NULL, array of @b->n ints receiving each message's result (0 / -errno)
 * @err:	the first failing message's label and error
 *
 * Return: 0 when every message was acked with success, else the first message's negative errno
 * (the kernel then applied nothing).
 */
int fw_batch_send(struct fw_batch *b, int *errs, struct wd_err *err);

/**
 * fw_batch_send_on() - fw_batch_send() on an already open socket (see fw_nl_open())
 * Return: as fw_batch_send().
 */
int fw_batch_send_on(struct mnl_socket *nl, struct fw_batch *b, int *errs, struct wd_err *err);

/**
 * fw_build_install() - append the messages that replace the table with @m to @b
 * Return: 0, or -ENOMEM / -ENOSPC.
 */
int fw_build_install(const struct fw_model *m, struct fw_batch *b);

/**
 * fw_build_uninstall() - append the messages that delete the table (absent is fine) to @b
 * Return: 0, or -ENOMEM / -ENOSPC.
 */
int fw_build_uninstall(const struct fw_model *m, struct fw_batch *b);

/**
 * fw_build_run() - append the element messages for one run to @b
 * @m:		model
 * @r:		run
 * @add:	true for NEWSETELEM, false for DELSETELEM
 * @skip:	when not NULL, skip[i] true drops element i (enum fw_run_elem)
 * @b:		batch
 *
 * Return: number of messages appended, or -ENOMEM / -ENOSPC.
 */
/** fw_run_has_elem() - whether run @r has element @e (its addresses decide). */
bool fw_run_has_elem(const struct fw_run *r, enum fw_run_elem e);

/**
 * fw_run_sends_elem() - whether fw_build_run() sends element @e of @r: one the run has, not
 * skipped (@skip may be NULL), and when adding, not a meter's
 */
bool fw_run_sends_elem(const struct fw_run *r, enum fw_run_elem e, bool add, const bool *skip);

int fw_build_run(const struct fw_model *m, const struct fw_run *r, bool add, const bool *skip,
		 struct fw_batch *b);

/**
 * fw_nl_open() - open and bind a NETLINK_NETFILTER socket (close with mnl_socket_close())
 * @ret_nl:	the socket, on success
 * @err:	may be NULL
 *
 * Return: 0, or a negative errno.
 */
int fw_nl_open(struct mnl_socket **ret_nl, struct wd_err *err);

/**
 * fw_nl_dump() - run one NLM_F_DUMP request and hand every reply message to @cb
 * @nl:		open socket
 * @nlh:	the request, built by the caller (its seq is overwritten)
 * @cb:		called for each reply message; returns MNL_CB_OK to go on
 * @data:	passed to @cb
 *
 * Return: 0, or a negative errno (-ENOENT when the object asked about does not exist).
 */
int fw_nl_dump(struct mnl_socket *nl, struct nlmsghdr *nlh,
	       int (*cb)(const struct nlmsghdr *nlh, void *data), void *data);

/** fw_seq() - a fresh netlink sequence base. */
uint32_t fw_seq(void);

/** fw_run_check() - validate @r against @c. Return: 0 or -EINVAL (with @err). */
int fw_run_check(const struct fw_config *c, const struct fw_run *r, struct wd_err *err);

/* ---- the live ruleset, read back (live.c; used by check.c) ---- */

/* a growable array of libnftnl objects of one kind */
struct fw_objv {
	void **v;
	size_t n, cap;
};

/* what fw_audit() read: every table, chain and rule; our table's sets and objects */
struct fw_live {
	struct fw_objv tables, chains, rules, sets, objs;
};

/** fw_live_read_ruleset() - dump every table, chain and rule into @l. Return: 0 or -errno. */
int fw_live_read_ruleset(struct mnl_socket *nl, struct fw_live *l);
/** fw_live_read_sets() - dump the sets of inet @table into @l->sets. Return: 0 or -errno. */
int fw_live_read_sets(struct mnl_socket *nl, const char *table, struct fw_live *l);
/** fw_live_read_objs() - dump the objects of inet @table into @l->objs. Return: 0 or -errno. */
int fw_live_read_objs(struct mnl_socket *nl, const char *table, struct fw_live *l);
/** fw_live_read_elems() - dump the elements of set @s into @s itself. Return: 0 or -errno. */
int fw_live_read_elems(struct mnl_socket *nl, struct nftnl_set *s);
/** fw_live_free() - release every object of @l and zero it. */
void fw_live_free(struct fw_live *l);

#endif /* WARDEN_NFT_INTERNAL_H */

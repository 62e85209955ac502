/* build.c - turns the ruleset model into libnftnl objects and netlink batch messages (the way
 * back, a rule's signature and summary, is describe.c).
 *
 * Each model statement becomes exactly the expression sequence nft 1.0 generates for the same
 * phrase (registers included), so a table loaded with `nft -f` from fw_render() and one created
 * by fw_install() are identical, and fw_audit() can compare expressions one for one.
 */
#include "nft/nft_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/object.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_nat.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* nft's datatype numbers (nftables include/datatype.h) and concatenation shift */
enum { FW_TYPE_IPADDR = 7, FW_TYPE_IP6ADDR = 8, FW_TYPE_INET_SERVICE = 13, FW_TYPE_IFNAME = 41 };
#define FW_TYPE_BITS 6
#define FW_IFNAMSIZ 16

static int add_expr(struct nftnl_rule *r, struct nftnl_expr *e)
{
	if (!e)
		return -ENOMEM;
	nftnl_rule_add_expr(r, e);
	return 0;
}

static int e_meta(struct nftnl_rule *r, uint32_t key, uint32_t dreg)
{
	struct nftnl_expr *e = nftnl_expr_alloc("meta");

	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_META_KEY, key);
		nftnl_expr_set_u32(e, NFTNL_EXPR_META_DREG, dreg);
	}
	return add_expr(r, e);
}

static int e_cmp(struct nftnl_rule *r, uint32_t op, const void *data, uint32_t len)
{
	struct nftnl_expr *e = nftnl_expr_alloc("cmp");

	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_SREG, NFT_REG_1);
		nftnl_expr_set_u32(e, NFTNL_EXPR_CMP_OP, op);
		if (nftnl_expr_set(e, NFTNL_EXPR_CMP_DATA, data, len) < 0) {
			nftnl_expr_free(e);
			e = NULL;
		}
	}
	return add_expr(r, e);
}

static int e_cmp_u8(struct nftnl_rule *r, uint8_t v)
{
	return e_cmp(r, NFT_CMP_EQ, &v, sizeof(v));
}

static int e_payload(struct nftnl_rule *r, uint32_t base, uint32_t off, uint32_t len, uint32_t dreg)
{
	struct nftnl_expr *e = nftnl_expr_alloc("payload");

	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_DREG, dreg);
		nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_BASE, base);
		nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET, off);
		nftnl_expr_set_u32(e, NFTNL_EXPR_PAYLOAD_LEN, len);
	}
	return add_expr(r, e);
}

static int e_lookup(struct nftnl_rule *r, const struct fw_model *m, const char *set)
{
	struct nftnl_expr *e = nftnl_expr_alloc("lookup");
	uint32_t id = 0;

	for (unsigned i = 0; i < m->nsets; i++)
		if (!strcmp(m->sets[i].name, set))
			id = m->sets[i].id;
	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SREG, NFT_REG_1);
		nftnl_expr_set_str(e, NFTNL_EXPR_LOOKUP_SET, set);
		nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_SET_ID, id);
	}
	return add_expr(r, e);
}

static int e_verdict(struct nftnl_rule *r, uint32_t verdict)
{
	struct nftnl_expr *e = nftnl_expr_alloc("immediate");

	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_DREG, NFT_REG_VERDICT);
		nftnl_expr_set_u32(e, NFTNL_EXPR_IMM_VERDICT, verdict);
	}
	return add_expr(r, e);
}

/* meta l4proto <proto> : the dependency of every tcp/udp match */
static int e_l4proto(struct nftnl_rule *r, uint8_t proto)
{
	int ret = e_meta(r, NFT_META_L4PROTO, NFT_REG_1);

	return ret ? ret : e_cmp_u8(r, proto);
}

static int e_nfproto(struct nftnl_rule *r, uint8_t proto)
{
	int ret = e_meta(r, NFT_META_NFPROTO, NFT_REG_1);

	return ret ? ret : e_cmp_u8(r, proto);
}

static int e_dport(struct nftnl_rule *r, uint8_t proto)
{
	int ret = e_l4proto(r, proto);

	return ret ? ret : e_payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, NFT_REG_1);
}

static int e_ifname_prefix(struct nftnl_rule *r, uint32_t key, uint32_t op, const char *pfx)
{
	int ret = e_meta(r, key, NFT_REG_1);

	return ret ? ret : e_cmp(r, op, pfx, (uint32_t)strlen(pfx));
}

/* iifname . ip[6] saddr|daddr @set */
static int e_addr_in_set(struct nftnl_rule *r, const struct fw_model *m, bool v6, bool dst,
			 const char *set)
{
	uint32_t off = v6 ? (dst ? 24 : 8) : (dst ? 16 : 12);
	int ret = e_nfproto(r, v6 ? NFPROTO_IPV6 : NFPROTO_IPV4);

	if (!ret)
		ret = e_meta(r, NFT_META_IIFNAME, NFT_REG_1);
	if (!ret)
		ret = e_payload(r, NFT_PAYLOAD_NETWORK_HEADER, off, v6 ? 16 : 4, NFT_REG_2);
	return ret ? ret : e_lookup(r, m, set);
}

static int e_fib_local(struct nftnl_rule *r)
{
	struct nftnl_expr *e = nftnl_expr_alloc("fib");
	uint32_t local = 2; /* RTN_LOCAL */
	int ret;

	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_DREG, NFT_REG_1);
		nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_RESULT, NFT_FIB_RESULT_ADDRTYPE);
		nftnl_expr_set_u32(e, NFTNL_EXPR_FIB_FLAGS, NFTA_FIB_F_DADDR);
	}
	ret = add_expr(r, e);
	return ret ? ret : e_cmp(r, NFT_CMP_EQ, &local, sizeof(local));
}

/* ct state <mask>: NF_CT_STATE_BIT(IP_CT_ESTABLISHED) = 1 << 1, RELATED 1 << 2, NEW 1 << 3 */
static int e_ct_state(struct nftnl_rule *r, uint32_t mask)
{
	struct nftnl_expr *ct = nftnl_expr_alloc("ct"), *bw;
	uint32_t zero = 0;
	int ret;

	if (ct) {
		nftnl_expr_set_u32(ct, NFTNL_EXPR_CT_KEY, NFT_CT_STATE);
		nftnl_expr_set_u32(ct, NFTNL_EXPR_CT_DREG, NFT_REG_1);
	}
	ret = add_expr(r, ct);
	if (ret)
		return ret;
	bw = nftnl_expr_alloc("bitwise");
	if (bw) {
		nftnl_expr_set_u32(bw, NFTNL_EXPR_BITWISE_SREG, NFT_REG_1);
		nftnl_expr_set_u32(bw, NFTNL_EXPR_BITWISE_DREG, NFT_REG_1);
		nftnl_expr_set_u32(bw, NFTNL_EXPR_BITWISE_LEN, sizeof(uint32_t));
		nftnl_expr_set(bw, NFTNL_EXPR_BITWISE_MASK, &mask, sizeof(mask));
		nftnl_expr_set(bw, NFTNL_EXPR_BITWISE_XOR, &zero, sizeof(zero));
	}
	ret = add_expr(r, bw);
	return ret ? ret : e_cmp(r, NFT_CMP_NEQ, &zero, sizeof(zero));
}

/* add @set { iifname <cl> }: a dynset keyed by the input interface whose element carries
 * the stateful expression @cl (owned from here on); the rule goes on (to its drop) only when
 * @cl matches (a count or rate over its limit) */
static int e_dynset_iif(struct nftnl_rule *r, const struct fw_model *m, const char *set,
			struct nftnl_expr *cl)
{
	struct nftnl_expr *e;
	uint32_t id = 0;
	int ret = cl ? e_meta(r, NFT_META_IIFNAME, NFT_REG_1) : -ENOMEM;

	if (ret) {
		nftnl_expr_free(cl);
		return ret;
	}
	for (unsigned i = 0; i < m->nsets; i++)
		if (!strcmp(m->sets[i].name, set))
			id = m->sets[i].id;
	e = nftnl_expr_alloc("dynset");
	if (!e) {
		nftnl_expr_free(cl);
		return -ENOMEM;
	}
	nftnl_expr_set_u32(e, NFTNL_EXPR_DYNSET_SREG_KEY, NFT_REG_1);
	nftnl_expr_set_u32(e, NFTNL_EXPR_DYNSET_OP, NFT_DYNSET_OP_ADD);
	nftnl_expr_set_str(e, NFTNL_EXPR_DYNSET_SET_NAME, set);
	nftnl_expr_set_u32(e, NFTNL_EXPR_DYNSET_SET_ID, id);
	nftnl_expr_set(e, NFTNL_EXPR_DYNSET_EXPR, cl, 0); /* owned by @e from here */
	return add_expr(r, e);
}

/* add @set { iifname ct count over <limit> }, or with no @set the rule's own count: ct count
 * over <limit> (a rootless run's table, whose namespace is the one run) */
static int e_ct_count_over(struct nftnl_rule *r, const struct fw_model *m, const char *set,
			   uint32_t limit)
{
	struct nftnl_expr *cl = nftnl_expr_alloc("connlimit");

	if (cl) {
		nftnl_expr_set_u32(cl, NFTNL_EXPR_CONNLIMIT_COUNT, limit);
		nftnl_expr_set_u32(cl, NFTNL_EXPR_CONNLIMIT_FLAGS, NFT_CONNLIMIT_F_INV);
	}
	if (!set)
		return add_expr(r, cl);
	return e_dynset_iif(r, m, set, cl);
}

/* add @set { iifname limit rate over <rate>/second burst <10 * rate> packets } */
static int e_rate_over(struct nftnl_rule *r, const struct fw_model *m, const char *set,
		       uint32_t rate)
{
	struct nftnl_expr *l = nftnl_expr_alloc("limit");

	if (l) {
		nftnl_expr_set_u64(l, NFTNL_EXPR_LIMIT_RATE, rate);
		nftnl_expr_set_u64(l, NFTNL_EXPR_LIMIT_UNIT, 1);
		nftnl_expr_set_u32(l, NFTNL_EXPR_LIMIT_BURST, rate * 10);
		nftnl_expr_set_u32(l, NFTNL_EXPR_LIMIT_TYPE, NFT_LIMIT_PKTS);
		nftnl_expr_set_u32(l, NFTNL_EXPR_LIMIT_FLAGS, NFT_LIMIT_F_INV);
	}
	if (!set)
		return add_expr(r, l);
	return e_dynset_iif(r, m, set, l);
}

/* ct timeout set "<name>" */
static int e_ct_timeout_set(struct nftnl_rule *r, const char *name)
{
	struct nftnl_expr *e = nftnl_expr_alloc("objref");

	if (e) {
		nftnl_expr_set_u32(e, NFTNL_EXPR_OBJREF_IMM_TYPE, NFT_OBJECT_CT_TIMEOUT);
		if (nftnl_expr_set_str(e, NFTNL_EXPR_OBJREF_IMM_NAME, name) < 0) {
			nftnl_expr_free(e);
			return -ENOMEM;
		}
	}
	return add_expr(r, e);
}

static int e_log_group(struct nftnl_rule *r, uint16_t group, const char *prefix)
{
	struct nftnl_expr *e = nftnl_expr_alloc("log");

	if (e) {
		if (prefix && nftnl_expr_set_str(e, NFTNL_EXPR_LOG_PREFIX, prefix) < 0) {
			nftnl_expr_free(e);
			return -ENOMEM;
		}
		nftnl_expr_set_u16(e, NFTNL_EXPR_LOG_GROUP, group);
	}
	return add_expr(r, e);
}

static int e_redirect(struct nftnl_rule *r, uint16_t port)
{
	struct nftnl_expr *imm = nftnl_expr_alloc("immediate"), *redir;
	uint16_t be = htons(port);
	int ret;

	if (imm) {
		nftnl_expr_set_u32(imm, NFTNL_EXPR_IMM_DREG, NFT_REG_1);
		nftnl_expr_set(imm, NFTNL_EXPR_IMM_DATA, &be, sizeof(be));
	}
	ret = add_expr(r, imm);
	if (ret)
		return ret;
	redir = nftnl_expr_alloc("redir");
	if (redir) {
		nftnl_expr_set_u32(redir, NFTNL_EXPR_REDIR_REG_PROTO_MIN, NFT_REG_1);
		nftnl_expr_set_u32(redir, NFTNL_EXPR_REDIR_FLAGS, NF_NAT_RANGE_PROTO_SPECIFIED);
	}
	return add_expr(r, redir);
}

/* dnat ip[6] to ADDR:PORT: both loaded into registers; the kernel fills in the max registers
 * and the MAP_IPS flag when they are absent and dumps them, so they are sent explicitly */
static int e_dnat(struct nftnl_rule *r, int family, const void *addr, uint16_t port)
{
	struct nftnl_expr *a = nftnl_expr_alloc("immediate"), *p, *nat;
	uint32_t alen = family == NFPROTO_IPV4 ? 4 : 16;
	uint16_t be = htons(port);
	int ret;

	if (a) {
		nftnl_expr_set_u32(a, NFTNL_EXPR_IMM_DREG, NFT_REG_1);
		nftnl_expr_set(a, NFTNL_EXPR_IMM_DATA, addr, alen);
	}
	ret = add_expr(r, a);
	if (ret)
		return ret;
	p = nftnl_expr_alloc("immediate");
	if (p) {
		nftnl_expr_set_u32(p, NFTNL_EXPR_IMM_DREG, NFT_REG_2);
		nftnl_expr_set(p, NFTNL_EXPR_IMM_DATA, &be, sizeof(be));
	}
	ret = add_expr(r, p);
	if (ret)
		return ret;
	nat = nftnl_expr_alloc("nat");
	if (nat) {
		nftnl_expr_set_u32(nat, NFTNL_EXPR_NAT_TYPE, NFT_NAT_DNAT);
		nftnl_expr_set_u32(nat, NFTNL_EXPR_NAT_FAMILY, (uint32_t)family);
		nftnl_expr_set_u32(nat, NFTNL_EXPR_NAT_REG_ADDR_MIN, NFT_REG_1);
		nftnl_expr_set_u32(nat, NFTNL_EXPR_NAT_REG_ADDR_MAX, NFT_REG_1);
		nftnl_expr_set_u32(nat, NFTNL_EXPR_NAT_REG_PROTO_MIN, NFT_REG_2);
		nftnl_expr_set_u32(nat, NFTNL_EXPR_NAT_REG_PROTO_MAX, NFT_REG_2);
		nftnl_expr_set_u32(nat, NFTNL_EXPR_NAT_FLAGS,
				   NF_NAT_RANGE_MAP_IPS | NF_NAT_RANGE_PROTO_SPECIFIED);
	}
	return add_expr(r, nat);
}

/* ip[6] daddr ADDR, or its first @len bytes (a byte-aligned prefix, as nft shortens it) */
static int e_daddr(struct nftnl_rule *r, bool v6, const void *addr, uint32_t len)
{
	int ret = e_nfproto(r, v6 ? NFPROTO_IPV6 : NFPROTO_IPV4);

	if (!ret)
		ret = e_payload(r, NFT_PAYLOAD_NETWORK_HEADER, v6 ? 24 : 16, len, NFT_REG_1);
	return ret ? ret : e_cmp(r, NFT_CMP_EQ, addr, len);
}

static int build_stmt(struct nftnl_rule *r, const struct fw_model *m, const struct fw_stmt *s)
{
	static const uint8_t lo4 = 127;
	const char *pfx = m->cfg.if_prefix;
	uint16_t port = htons((uint16_t)s->arg);
	int ret;

	switch (s->kind) {
	case FW_IIF_NOT_PREFIX:
		return e_ifname_prefix(r, NFT_META_IIFNAME, NFT_CMP_NEQ, pfx);
	case FW_IIF_PREFIX:
		return e_ifname_prefix(r, NFT_META_IIFNAME, NFT_CMP_EQ, pfx);
	case FW_OIF_PREFIX:
		return e_ifname_prefix(r, NFT_META_OIFNAME, NFT_CMP_EQ, pfx);
	case FW_IIF_SADDR4_IN_SET:
		return e_addr_in_set(r, m, false, false, s->set);
	case FW_IIF_SADDR6_IN_SET:
		return e_addr_in_set(r, m, true, false, s->set);
	case FW_IIF_DADDR4_IN_SET:
		return e_addr_in_set(r, m, false, true, s->set);
	case FW_IIF_DADDR6_IN_SET:
		return e_addr_in_set(r, m, true, true, s->set);
	case FW_IIF_IN_SET:
		ret = e_meta(r, NFT_META_IIFNAME, NFT_REG_1);
		return ret ? ret : e_lookup(r, m, s->set);
	case FW_ICMPV6_TYPE:
		ret = e_nfproto(r, NFPROTO_IPV6);
		if (!ret)
			ret = e_l4proto(r, IPPROTO_ICMPV6);
		if (!ret)
			ret = e_payload(r, NFT_PAYLOAD_TRANSPORT_HEADER, 0, 1, NFT_REG_1);
		return ret ? ret : e_cmp_u8(r, (uint8_t)s->arg);
	case FW_IP6_HOPLIMIT:
		ret = e_payload(r, NFT_PAYLOAD_NETWORK_HEADER, 7, 1, NFT_REG_1);
		return ret ? ret : e_cmp_u8(r, (uint8_t)s->arg);
	case FW_L4PROTO:
		return e_l4proto(r, (uint8_t)s->arg);
	case FW_TCP_DPORT:
	case FW_UDP_DPORT:
		ret = e_dport(r, s->kind == FW_TCP_DPORT ? IPPROTO_TCP : IPPROTO_UDP);
		return ret ? ret : e_cmp(r, NFT_CMP_EQ, &port, sizeof(port));
	case FW_TCP_DPORT_IN_SET:
	case FW_UDP_DPORT_IN_SET:
		ret = e_dport(r, s->kind == FW_TCP_DPORT_IN_SET ? IPPROTO_TCP : IPPROTO_UDP);
		return ret ? ret : e_lookup(r, m, s->set);
	case FW_FIB_DADDR_LOCAL:
		return e_fib_local(r);
	case FW_CT_EST_REL:
		return e_ct_state(r, 1u << 1 | 1u << 2);
	case FW_CT_NEW:
		return e_ct_state(r, 1u << 3);
	case FW_CT_COUNT_OVER:
		return e_ct_count_over(r, m, s->set, s->arg);
	case FW_RATE_OVER:
		return e_rate_over(r, m, s->set, s->arg);
	case FW_CT_TIMEOUT_SET:
		return e_ct_timeout_set(r, s->text);
	case FW_LOG_GROUP:
		return e_log_group(r, (uint16_t)s->arg, s->text);
	case FW_REDIRECT:
		return e_redirect(r, (uint16_t)s->arg);
	case FW_NFPROTO:
		return e_nfproto(r, (uint8_t)s->arg);
	case FW_DADDR4_GW:
		return e_daddr(r, false, &m->cfg.gw4, 4);
	case FW_DADDR6_GW:
		return e_daddr(r, true, &m->cfg.gw6, 16);
	case FW_DADDR4_LOOPBACK:
		return e_daddr(r, false, &lo4, 1);
	case FW_DADDR6_LOOPBACK:
		return e_daddr(r, true, &in6addr_loopback, 16);
	case FW_DNAT4_GW:
		return e_dnat(r, NFPROTO_IPV4, &m->cfg.gw4, (uint16_t)s->arg);
	case FW_DNAT6_GW:
		return e_dnat(r, NFPROTO_IPV6, &m->cfg.gw6, (uint16_t)s->arg);
	case FW_ACCEPT:
		return e_verdict(r, NF_ACCEPT);
	case FW_DROP:
		return e_verdict(r, NF_DROP);
	}
	return -EINVAL;
}

struct nftnl_rule *fw_rule_build(const struct fw_model *m, const struct fw_chain_def *chain,
				 const struct fw_rule *r)
{
	struct nftnl_rule *nr = nftnl_rule_alloc();

	if (!nr)
		return NULL;
	nftnl_rule_set_u32(nr, NFTNL_RULE_FAMILY, NFPROTO_INET);
	if (nftnl_rule_set_str(nr, NFTNL_RULE_TABLE, m->cfg.table) < 0 ||
	    nftnl_rule_set_str(nr, NFTNL_RULE_CHAIN, chain->name) < 0)
		goto fail;
	for (unsigned i = 0; i < r->n; i++)
		if (build_stmt(nr, m, &r->s[i]) < 0)
			goto fail;
	return nr;
fail:
	nftnl_rule_free(nr);
	return NULL;
}

static uint32_t key_type(enum fw_key k, uint32_t *len)
{
	switch (k) {
	case FW_KEY_IFNAME:
		*len = FW_IFNAMSIZ;
		return FW_TYPE_IFNAME;
	case FW_KEY_IFNAME_IPV4:
		*len = FW_IFNAMSIZ + 4;
		return FW_TYPE_IFNAME << FW_TYPE_BITS | FW_TYPE_IPADDR;
	case FW_KEY_IFNAME_IPV6:
		*len = FW_IFNAMSIZ + 16;
		return FW_TYPE_IFNAME << FW_TYPE_BITS | FW_TYPE_IP6ADDR;
	case FW_KEY_PORT:
		*len = 2;
		return FW_TYPE_INET_SERVICE;
	}
	*len = 0;
	return 0;
}

/*
 * The set's user data, byte for byte what nft 1.0 stores for `type ...`: the key byte order
 * (host for ifname, big endian for inet_service, "invalid" for a concatenation, which then
 * carries a nested typeof record). Without it `nft list` prints ifname elements as "".
 * Layout: TLVs of {u8 type, u8 len, value}, values in host byte order.
 */
static size_t set_udata(enum fw_key k, uint8_t *out)
{
	uint32_t v;
	size_t n = 0;

	out[n++] = 0; /* NFTNL_UDATA_SET_KEYBYTEORDER */
	out[n++] = 4;
	v = k == FW_KEY_IFNAME ? 1 : k == FW_KEY_PORT ? 2 : 0;
	memcpy(out + n, &v, 4);
	n += 4;
	if (k == FW_KEY_IFNAME_IPV4 || k == FW_KEY_IFNAME_IPV6) {
		out[n++] = 3; /* NFTNL_UDATA_SET_KEY_TYPEOF, nested */
		out[n++] = 8;
		out[n++] = 0;
		out[n++] = 4;
		v = 13;
		memcpy(out + n, &v, 4);
		n += 4;
		out[n++] = 1;
		out[n++] = 0;
	}
	return n;
}

struct nftnl_set *fw_set_build(const struct fw_model *m, const struct fw_set_def *s)
{
	struct nftnl_set *ns = nftnl_set_alloc();
	uint32_t len, type = key_type(s->key, &len);

	if (!ns)
		return NULL;
	nftnl_set_set_u32(ns, NFTNL_SET_FAMILY, NFPROTO_INET);
	if (nftnl_set_set_str(ns, NFTNL_SET_TABLE, m->cfg.table) < 0 ||
	    nftnl_set_set_str(ns, NFTNL_SET_NAME, s->name) < 0)
		goto fail;
	nftnl_set_set_u32(ns, NFTNL_SET_FLAGS, s->dynamic ? NFT_SET_EVAL : 0);
	if (s->size)
		nftnl_set_set_u32(ns, NFTNL_SET_DESC_SIZE, s->size);
	nftnl_set_set_u32(ns, NFTNL_SET_KEY_TYPE, type);
	nftnl_set_set_u32(ns, NFTNL_SET_KEY_LEN, len);
	nftnl_set_set_u32(ns, NFTNL_SET_ID, s->id);
	{
		uint8_t ud[32];
		size_t udlen = set_udata(s->key, ud);

		if (nftnl_set_set_data(ns, NFTNL_SET_USERDATA, ud, (uint32_t)udlen) < 0)
			goto fail;
	}
	for (unsigned i = 0; i < s->nelems; i++) {
		struct nftnl_set_elem *e = nftnl_set_elem_alloc();
		uint16_t be = htons(s->elems[i]);

		if (!e)
			goto fail;
		nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, &be, sizeof(be));
		nftnl_set_elem_add(ns, e);
	}
	return ns;
fail:
	nftnl_set_free(ns);
	return NULL;
}

_Static_assert(FW_TCP_TIMEOUTS == NFTNL_CTTIMEOUT_TCP_MAX, "TCP conntrack states");

void fw_obj_timeouts(const struct fw_obj_def *o, uint32_t t[FW_TCP_TIMEOUTS])
{
	/* the kernel's TCP defaults (nf_conntrack_proto_tcp.c), which nft also sends for the
	 * states a policy does not name: a 0 would be a timeout of 0 s */
	static const uint32_t dflt[FW_TCP_TIMEOUTS] = {
	    [NFTNL_CTTIMEOUT_TCP_SYN_SENT] = 120,	[NFTNL_CTTIMEOUT_TCP_SYN_RECV] = 60,
	    [NFTNL_CTTIMEOUT_TCP_ESTABLISHED] = 432000, [NFTNL_CTTIMEOUT_TCP_FIN_WAIT] = 120,
	    [NFTNL_CTTIMEOUT_TCP_CLOSE_WAIT] = 60,	[NFTNL_CTTIMEOUT_TCP_LAST_ACK] = 30,
	    [NFTNL_CTTIMEOUT_TCP_TIME_WAIT] = 120,	[NFTNL_CTTIMEOUT_TCP_CLOSE] = 10,
	    [NFTNL_CTTIMEOUT_TCP_SYN_SENT2] = 120,	[NFTNL_CTTIMEOUT_TCP_RETRANS] = 300,
	    [NFTNL_CTTIMEOUT_TCP_UNACK] = 300,
	};

	memcpy(t, dflt, sizeof(dflt));
	t[NFTNL_CTTIMEOUT_TCP_TIME_WAIT] = o->time_wait;
	t[NFTNL_CTTIMEOUT_TCP_CLOSE] = o->close;
}

struct nftnl_obj *fw_obj_build(const struct fw_model *m, const struct fw_obj_def *o)
{
	struct nftnl_obj *no = nftnl_obj_alloc();
	uint32_t t[FW_TCP_TIMEOUTS];

	if (!no)
		return NULL;
	nftnl_obj_set_u32(no, NFTNL_OBJ_FAMILY, NFPROTO_INET);
	nftnl_obj_set_str(no, NFTNL_OBJ_TABLE, m->cfg.table); /* void: check it took */
	nftnl_obj_set_str(no, NFTNL_OBJ_NAME, o->name);
	if (!nftnl_obj_is_set(no, NFTNL_OBJ_TABLE) || !nftnl_obj_is_set(no, NFTNL_OBJ_NAME)) {
		nftnl_obj_free(no);
		return NULL;
	}
	nftnl_obj_set_u32(no, NFTNL_OBJ_TYPE, NFT_OBJECT_CT_TIMEOUT);
	nftnl_obj_set_u16(no, NFTNL_OBJ_CT_TIMEOUT_L3PROTO, NFPROTO_INET);
	nftnl_obj_set_u8(no, NFTNL_OBJ_CT_TIMEOUT_L4PROTO, IPPROTO_TCP);
	fw_obj_timeouts(o, t);
	nftnl_obj_set_data(no, NFTNL_OBJ_CT_TIMEOUT_ARRAY, t, sizeof(t));
	return no;
}

struct nftnl_chain *fw_chain_build(const struct fw_model *m, const struct fw_chain_def *ch)
{
	struct nftnl_chain *nc = nftnl_chain_alloc();

	if (!nc)
		return NULL;
	nftnl_chain_set_u32(nc, NFTNL_CHAIN_FAMILY, NFPROTO_INET);
	if (nftnl_chain_set_str(nc, NFTNL_CHAIN_TABLE, m->cfg.table) < 0 ||
	    nftnl_chain_set_str(nc, NFTNL_CHAIN_NAME, ch->name) < 0 ||
	    nftnl_chain_set_str(nc, NFTNL_CHAIN_TYPE, ch->type) < 0) {
		nftnl_chain_free(nc);
		return NULL;
	}
	nftnl_chain_set_u32(nc, NFTNL_CHAIN_HOOKNUM, ch->hook);
	nftnl_chain_set_s32(nc, NFTNL_CHAIN_PRIO, ch->prio);
	nftnl_chain_set_u32(nc, NFTNL_CHAIN_POLICY, NF_ACCEPT);
	return nc;
}

static int add_table_msg(struct fw_batch *b, const struct fw_model *m, uint16_t type,
			 uint16_t flags, const char *verb)
{
	struct nftnl_table *t = nftnl_table_alloc();
	struct nlmsghdr *nlh;

	if (!t)
		return -ENOMEM;
	nftnl_table_set_u32(t, NFTNL_TABLE_FAMILY, NFPROTO_INET);
	if (nftnl_table_set_str(t, NFTNL_TABLE_NAME, m->cfg.table) < 0) {
		nftnl_table_free(t);
		return -ENOMEM;
	}
	nlh = fw_batch_add(b, type, NFPROTO_INET, flags, "%s table inet %s", verb, m->cfg.table);
	if (nlh)
		nftnl_table_nlmsg_build_payload(nlh, t);
	nftnl_table_free(t);
	return nlh ? 0 : -ENOSPC;
}

int fw_build_install(const struct fw_model *m, struct fw_batch *b)
{
	const char *tbl = m->cfg.table;
	struct wd_buf txt = WD_BUF_INIT;
	struct nlmsghdr *nlh;
	int ret;

	/* "table; delete table; table {...}": create-or-replace in one transaction. A rootless
	 * run's table goes into the namespace made for it a moment ago: created, never replaced
	 * (one already there fails the batch, EEXIST), and without the delete, whose commit
	 * waits for an RCU grace period (~12 ms of a rootless launch) */
	if (m->cfg.mode == FW_MODE_RUN)
		ret = add_table_msg(b, m, NFT_MSG_NEWTABLE, NLM_F_CREATE | NLM_F_EXCL, "create");
	else
		ret = add_table_msg(b, m, NFT_MSG_NEWTABLE, NLM_F_CREATE, "create");
	if (!ret && m->cfg.mode != FW_MODE_RUN)
		ret = add_table_msg(b, m, NFT_MSG_DELTABLE, 0, "delete");
	if (!ret && m->cfg.mode != FW_MODE_RUN)
		ret = add_table_msg(b, m, NFT_MSG_NEWTABLE, NLM_F_CREATE, "create");
	for (unsigned i = 0; !ret && i < m->nsets; i++) {
		const struct fw_set_def *sd = &m->sets[i];
		struct nftnl_set *s = fw_set_build(m, sd);

		if (!s) {
			ret = -ENOMEM;
			break;
		}
		nlh = fw_batch_add(b, NFT_MSG_NEWSET, NFPROTO_INET, NLM_F_CREATE,
				   "add set inet %s %s", tbl, sd->name);
		if (nlh)
			nftnl_set_nlmsg_build_payload(nlh, s);
		if (nlh && sd->nelems) {
			nlh =
			    fw_batch_add(b, NFT_MSG_NEWSETELEM, NFPROTO_INET, NLM_F_CREATE,
					 "add the gateway ports to set inet %s %s", tbl, sd->name);
			if (nlh)
				nftnl_set_elems_nlmsg_build_payload(nlh, s);
		}
		nftnl_set_free(s);
		if (!nlh)
			ret = -ENOSPC;
	}
	for (unsigned i = 0; !ret && i < m->nobjs; i++) {
		struct nftnl_obj *o = fw_obj_build(m, &m->objs[i]);

		if (!o) {
			ret = -ENOMEM;
			break;
		}
		nlh = fw_batch_add(b, NFT_MSG_NEWOBJ, NFPROTO_INET, NLM_F_CREATE,
				   "add ct timeout inet %s %s", tbl, m->objs[i].name);
		if (nlh)
			nftnl_obj_nlmsg_build_payload(nlh, o);
		nftnl_obj_free(o);
		if (!nlh)
			ret = -ENOSPC;
	}
	for (unsigned i = 0; !ret && i < m->nchains; i++) {
		const struct fw_chain_def *cd = &m->chains[i];
		struct nftnl_chain *c = fw_chain_build(m, cd);

		if (!c) {
			ret = -ENOMEM;
			break;
		}
		nlh = fw_batch_add(b, NFT_MSG_NEWCHAIN, NFPROTO_INET, NLM_F_CREATE,
				   "add chain inet %s %s (%s hook %s priority %d)", tbl, cd->name,
				   cd->type, fw_hook_name(cd->hook), cd->prio);
		if (nlh)
			nftnl_chain_nlmsg_build_payload(nlh, c);
		nftnl_chain_free(c);
		if (!nlh)
			ret = -ENOSPC;
		for (unsigned j = 0; !ret && j < cd->nrules; j++) {
			struct nftnl_rule *r = fw_rule_build(m, cd, &cd->rules[j]);

			wd_buf_reset(&txt);
			if (!r || fw_rule_text(m, &cd->rules[j], &txt) < 0) {
				nftnl_rule_free(r);
				ret = -ENOMEM;
				break;
			}
			nlh = fw_batch_add(b, NFT_MSG_NEWRULE, NFPROTO_INET,
					   NLM_F_CREATE | NLM_F_APPEND,
					   "add rule inet %s %s #%u (%s)", tbl, cd->name, j + 1,
					   wd_buf_cstr(&txt));
			if (nlh)
				nftnl_rule_nlmsg_build_payload(nlh, r);
			nftnl_rule_free(r);
			if (!nlh)
				ret = -ENOSPC;
		}
	}
	wd_buf_free(&txt);
	return ret;
}

int fw_build_uninstall(const struct fw_model *m, struct fw_batch *b)
{
	/* "table; delete table": deleting an absent table is then not an error */
	int ret = add_table_msg(b, m, NFT_MSG_NEWTABLE, NLM_F_CREATE, "create");

	return ret ? ret : add_table_msg(b, m, NFT_MSG_DELTABLE, 0, "delete");
}

int fw_run_check(const struct fw_config *c, const struct fw_run *r, struct wd_err *err)
{
	size_t n = strnlen(r->ifname, sizeof(r->ifname)), p = strlen(c->if_prefix);

	if (n == 0 || n >= sizeof(r->ifname))
		return wd_err_set(err, -EINVAL, "interface name must be 1-15 characters");
	if (n <= p || strncmp(r->ifname, c->if_prefix, p))
		return wd_err_set(err, -EINVAL,
				  "interface %s does not start with the run prefix \"%s\" "
				  "(the ruleset would not cover it)",
				  r->ifname, c->if_prefix);
	if (!r->has_v4 && !r->has_v6)
		return wd_err_set(err, -EINVAL, "run %s has neither an IPv4 nor an IPv6 address",
				  r->ifname);
	if ((r->has_gw4 && !r->has_v4) || (r->has_gw6 && !r->has_v6))
		return wd_err_set(err, -EINVAL,
				  "run %s: a gateway address needs a sandbox address of its family",
				  r->ifname);
	return 0;
}

bool fw_run_has_elem(const struct fw_run *r, enum fw_run_elem e)
{
	switch (e) {
	case FW_ELEM_IF:
		return true;
	case FW_ELEM_V4:
		return r->has_v4;
	case FW_ELEM_V6:
		return r->has_v6;
	case FW_ELEM_GW4:
		return r->has_v4 && r->has_gw4;
	case FW_ELEM_GW6:
		return r->has_v6 && r->has_gw6;
	case FW_ELEM_N:
		break;
	}
	return false;
}

int fw_build_run(const struct fw_model *m, const struct fw_run *r, bool add, const bool *skip,
		 struct fw_batch *b)
{
	static const char *const sets[FW_ELEM_N] = {FW_SET_RUNS_IF, FW_SET_RUNS_V4, FW_SET_RUNS_V6,
						    FW_SET_GW_V4, FW_SET_GW_V6};
	char key[FW_IFNAMSIZ + 16];
	int count = 0;

	for (unsigned i = 0; i < FW_ELEM_N; i++) {
		const void *a4 = i == FW_ELEM_V4 ? (const void *)&r->sbx4 : &r->gw4;
		const void *a6 = i == FW_ELEM_V6 ? (const void *)&r->sbx6 : &r->gw6;
		struct nftnl_set *s;
		struct nftnl_set_elem *e;
		struct nlmsghdr *nlh;
		char addr[INET6_ADDRSTRLEN] = "";
		uint32_t len = FW_IFNAMSIZ;

		if (!fw_run_has_elem(r, (enum fw_run_elem)i) || (skip && skip[i]))
			continue;
		memset(key, 0, sizeof(key));
		memcpy(key, r->ifname, strnlen(r->ifname, sizeof(r->ifname)));
		if (i == FW_ELEM_V4 || i == FW_ELEM_GW4) {
			memcpy(key + FW_IFNAMSIZ, a4, 4);
			len += 4;
			inet_ntop(AF_INET, a4, addr, sizeof(addr));
		} else if (i == FW_ELEM_V6 || i == FW_ELEM_GW6) {
			memcpy(key + FW_IFNAMSIZ, a6, 16);
			len += 16;
			inet_ntop(AF_INET6, a6, addr, sizeof(addr));
		}
		s = nftnl_set_alloc();
		e = nftnl_set_elem_alloc();
		if (!s || !e || nftnl_set_set_str(s, NFTNL_SET_TABLE, m->cfg.table) < 0 ||
		    nftnl_set_set_str(s, NFTNL_SET_NAME, sets[i]) < 0) {
			nftnl_set_elem_free(e);
			nftnl_set_free(s);
			return -ENOMEM;
		}
		nftnl_set_set_u32(s, NFTNL_SET_FAMILY, NFPROTO_INET);
		nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, key, len);
		nftnl_set_elem_add(s, e);
		nlh = fw_batch_add(b, add ? NFT_MSG_NEWSETELEM : NFT_MSG_DELSETELEM, NFPROTO_INET,
				   add ? NLM_F_CREATE : 0, "%s element %s%s%s %s set inet %s %s",
				   add ? "add" : "delete", r->ifname, *addr ? " . " : "", addr,
				   add ? "to" : "from", m->cfg.table, sets[i]);
		if (nlh)
			nftnl_set_elems_nlmsg_build_payload(nlh, s);
		nftnl_set_free(s);
		if (!nlh)
			return -ENOSPC;
		count++;
	}
	return count;
}

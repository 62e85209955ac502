/* build.c - turns the ruleset model's rules into libnftnl rules: one statement at a time, its
 * expressions (sets, objects, chains and the batches that install a table or a run are
 * batch.c; the way back, a rule's signature and summary, is describe.c).
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

static int e_lookup(struct nftnl_rule *r, const struct fw_model *m, const char *set, bool inv)
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
		if (inv)
			nftnl_expr_set_u32(e, NFTNL_EXPR_LOOKUP_FLAGS, NFT_LOOKUP_F_INV);
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
	return ret ? ret : e_lookup(r, m, set, false);
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

/* ip[6] daddr NET/PREFIX as nft generates it: a byte-aligned prefix loads and compares its bytes;
 * any other loads the whole address, masks it and compares the network address */
static int e_daddr_prefix(struct nftnl_rule *r, bool v6, const void *net, unsigned prefix)
{
	uint32_t alen = v6 ? 16 : 4;
	uint8_t mask[16] = {0}, zero[16] = {0};
	struct nftnl_expr *bw;
	int ret;

	if (prefix % 8 == 0)
		return e_daddr(r, v6, net, prefix / 8);
	ret = e_nfproto(r, v6 ? NFPROTO_IPV6 : NFPROTO_IPV4);
	if (!ret)
		ret = e_payload(r, NFT_PAYLOAD_NETWORK_HEADER, v6 ? 24 : 16, alen, NFT_REG_1);
	if (ret)
		return ret;
	for (unsigned i = 0; i < prefix / 8; i++)
		mask[i] = 0xff;
	mask[prefix / 8] = (uint8_t)(0xff << (8 - prefix % 8));
	bw = nftnl_expr_alloc("bitwise");
	if (bw) {
		nftnl_expr_set_u32(bw, NFTNL_EXPR_BITWISE_SREG, NFT_REG_1);
		nftnl_expr_set_u32(bw, NFTNL_EXPR_BITWISE_DREG, NFT_REG_1);
		nftnl_expr_set_u32(bw, NFTNL_EXPR_BITWISE_LEN, alen);
		nftnl_expr_set(bw, NFTNL_EXPR_BITWISE_MASK, mask, alen);
		nftnl_expr_set(bw, NFTNL_EXPR_BITWISE_XOR, zero, alen);
	}
	ret = add_expr(r, bw);
	return ret ? ret : e_cmp(r, NFT_CMP_EQ, net, alen);
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
	case FW_IIF_NOT_IN_SET:
		ret = e_meta(r, NFT_META_IIFNAME, NFT_REG_1);
		return ret ? ret : e_lookup(r, m, s->set, s->kind == FW_IIF_NOT_IN_SET);
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
		return ret ? ret : e_lookup(r, m, s->set, false);
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
	case FW_DADDR4_SYNTH:
		return e_daddr_prefix(r, false, &m->cfg.synth4, m->cfg.synth4_prefix);
	case FW_DADDR6_SYNTH:
		return e_daddr_prefix(r, true, &m->cfg.synth6, m->cfg.synth6_prefix);
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

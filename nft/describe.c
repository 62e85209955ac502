/* describe.c - rules read back: a rule's signature (the canonical text of its expressions,
 * which fw_audit() compares one for one with the model's) and a short human summary of any
 * rule, ours or another table's, for the audit's findings. Pure over libnftnl objects.
 */
#include "nft/nft_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h> /* before libnftnl: its headers use FILE */
#include <libnftnl/expr.h>
#include <libnftnl/rule.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <stdlib.h>
#include <string.h>

int fw_rule_signature(const struct nftnl_rule *r, struct wd_buf *out)
{
	struct nftnl_expr_iter *it = nftnl_expr_iter_create(r);
	struct nftnl_expr *e;
	char tmp[512];
	int ret = 0;

	if (!it)
		return -ENOMEM;
	while (!ret && (e = nftnl_expr_iter_next(it))) {
		const char *name = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);

		tmp[0] = '\0';
		/* the kernel echoes defaults we do not send (lookup flags 0, redirect
		 * proto_max == proto_min): spell those two so both forms read the same */
		if (!strcmp(name, "lookup"))
			snprintf(tmp, sizeof(tmp), "reg %u set %s dreg %u flags 0x%x ",
				 nftnl_expr_get_u32(e, NFTNL_EXPR_LOOKUP_SREG),
				 nftnl_expr_get_str(e, NFTNL_EXPR_LOOKUP_SET),
				 nftnl_expr_is_set(e, NFTNL_EXPR_LOOKUP_DREG)
				     ? nftnl_expr_get_u32(e, NFTNL_EXPR_LOOKUP_DREG)
				     : 0,
				 nftnl_expr_is_set(e, NFTNL_EXPR_LOOKUP_FLAGS)
				     ? nftnl_expr_get_u32(e, NFTNL_EXPR_LOOKUP_FLAGS)
				     : 0);
		else if (!strcmp(name, "redir"))
			snprintf(tmp, sizeof(tmp), "proto_min reg %u proto_max reg %u flags 0x%x ",
				 nftnl_expr_is_set(e, NFTNL_EXPR_REDIR_REG_PROTO_MIN)
				     ? nftnl_expr_get_u32(e, NFTNL_EXPR_REDIR_REG_PROTO_MIN)
				     : 0,
				 nftnl_expr_is_set(e, NFTNL_EXPR_REDIR_REG_PROTO_MAX)
				     ? nftnl_expr_get_u32(e, NFTNL_EXPR_REDIR_REG_PROTO_MAX)
				     : nftnl_expr_get_u32(e, NFTNL_EXPR_REDIR_REG_PROTO_MIN),
				 nftnl_expr_is_set(e, NFTNL_EXPR_REDIR_FLAGS)
				     ? nftnl_expr_get_u32(e, NFTNL_EXPR_REDIR_FLAGS)
				     : 0);
		else
			nftnl_expr_snprintf(tmp, sizeof(tmp), e, NFTNL_OUTPUT_DEFAULT, 0);
		/* ... and a dynset's timeout 0 (none), which the kernel dumps and we do not send */
		if (!strcmp(name, "dynset")) {
			char *t = strstr(tmp, "timeout 0ms ");

			if (t)
				memmove(t, t + 12, strlen(t + 12) + 1);
		}
		ret = wd_buf_printf(out, "[ %s %s] ", name, tmp);
	}
	nftnl_expr_iter_destroy(it);
	return ret;
}

/* --- decoding any rule into a short summary ------------------------------------------------ */

static const char *meta_key_name(uint32_t key)
{
	switch (key) {
	case NFT_META_IIFNAME:
		return "iifname";
	case NFT_META_OIFNAME:
		return "oifname";
	case NFT_META_IIF:
		return "iif";
	case NFT_META_OIF:
		return "oif";
	case NFT_META_NFPROTO:
		return "meta nfproto";
	case NFT_META_L4PROTO:
		return "meta l4proto";
	case NFT_META_MARK:
		return "meta mark";
	default:
		return "meta";
	}
}

static const char *verdict_name(int32_t v)
{
	switch (v) {
	case NF_ACCEPT:
		return "accept";
	case NF_DROP:
		return "drop";
	case NF_QUEUE:
		return "queue";
	case NFT_CONTINUE:
		return "continue";
	case NFT_BREAK:
		return "break";
	case NFT_JUMP:
		return "jump";
	case NFT_GOTO:
		return "goto";
	case NFT_RETURN:
		return "return";
	default:
		return "verdict?";
	}
}

static int describe_cmp(const struct nftnl_expr *e, const char *origin, struct wd_buf *out)
{
	static const char *const ops[] = {
	    [NFT_CMP_EQ] = "",	   [NFT_CMP_NEQ] = "!= ", [NFT_CMP_LT] = "< ",
	    [NFT_CMP_LTE] = "<= ", [NFT_CMP_GT] = "> ",	  [NFT_CMP_GTE] = ">= "};
	uint32_t op = nftnl_expr_get_u32(e, NFTNL_EXPR_CMP_OP), len = 0;
	const unsigned char *d = nftnl_expr_get(e, NFTNL_EXPR_CMP_DATA, &len);
	const char *ops_s = op < WD_ARRAY_SIZE(ops) && ops[op] ? ops[op] : "?? ";
	int ret;

	if (!d)
		return 0;
	if (!strcmp(origin, "iifname") || !strcmp(origin, "oifname")) {
		size_t n = strnlen((const char *)d, len);

		/* a compare shorter than the name (no NUL inside) is nft's "prefix*" */
		return wd_buf_printf(out, "%s %s\"%.*s%s\" ", origin, ops_s, (int)n,
				     (const char *)d, n == len ? "*" : "");
	}
	ret = wd_buf_printf(out, "%s %s0x", origin, ops_s);
	for (uint32_t i = 0; !ret && i < len; i++)
		ret = wd_buf_printf(out, "%02x", d[i]);
	return ret ? ret : wd_buf_puts(out, " ");
}

int fw_rule_describe(const struct nftnl_rule *r, struct wd_buf *out)
{
	struct nftnl_expr_iter *it = nftnl_expr_iter_create(r);
	char origin[NFT_REG32_15 + 1][32];
	struct nftnl_expr *e;
	int ret = 0;

	if (!it)
		return -ENOMEM;
	memset(origin, 0, sizeof(origin));
	while (!ret && (e = nftnl_expr_iter_next(it))) {
		const char *name = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);
		uint32_t reg;

		if (!strcmp(name, "meta") && nftnl_expr_is_set(e, NFTNL_EXPR_META_DREG)) {
			reg = nftnl_expr_get_u32(e, NFTNL_EXPR_META_DREG);
			if (reg < WD_ARRAY_SIZE(origin))
				snprintf(origin[reg], sizeof(origin[reg]), "%s",
					 meta_key_name(nftnl_expr_get_u32(e, NFTNL_EXPR_META_KEY)));
		} else if (!strcmp(name, "payload") &&
			   nftnl_expr_is_set(e, NFTNL_EXPR_PAYLOAD_DREG)) {
			reg = nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_DREG);
			if (reg < WD_ARRAY_SIZE(origin))
				snprintf(origin[reg], sizeof(origin[reg]), "@%s,%u,%u",
					 nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_BASE) ==
						 NFT_PAYLOAD_NETWORK_HEADER
					     ? "nh"
					     : "th",
					 nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET) * 8,
					 nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_LEN) * 8);
		} else if (!strcmp(name, "ct") && nftnl_expr_is_set(e, NFTNL_EXPR_CT_DREG)) {
			reg = nftnl_expr_get_u32(e, NFTNL_EXPR_CT_DREG);
			if (reg < WD_ARRAY_SIZE(origin))
				snprintf(origin[reg], sizeof(origin[reg]), "ct %s",
					 nftnl_expr_get_u32(e, NFTNL_EXPR_CT_KEY) == NFT_CT_STATE
					     ? "state"
					     : "key");
		} else if (!strcmp(name, "cmp")) {
			reg = nftnl_expr_get_u32(e, NFTNL_EXPR_CMP_SREG);
			ret = describe_cmp(
			    e, reg < WD_ARRAY_SIZE(origin) && origin[reg][0] ? origin[reg] : "reg",
			    out);
		} else if (!strcmp(name, "lookup")) {
			reg = nftnl_expr_get_u32(e, NFTNL_EXPR_LOOKUP_SREG);
			ret = wd_buf_printf(
			    out, "%s %s@%s ",
			    reg < WD_ARRAY_SIZE(origin) && origin[reg][0] ? origin[reg] : "reg",
			    nftnl_expr_is_set(e, NFTNL_EXPR_LOOKUP_FLAGS) &&
				    (nftnl_expr_get_u32(e, NFTNL_EXPR_LOOKUP_FLAGS) &
				     NFT_LOOKUP_F_INV)
				? "!= "
				: "",
			    nftnl_expr_get_str(e, NFTNL_EXPR_LOOKUP_SET));
		} else if (!strcmp(name, "immediate") &&
			   nftnl_expr_is_set(e, NFTNL_EXPR_IMM_VERDICT)) {
			int32_t v = (int32_t)nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_VERDICT);

			ret = wd_buf_printf(out, "%s", verdict_name(v));
			if (!ret && nftnl_expr_is_set(e, NFTNL_EXPR_IMM_CHAIN))
				ret = wd_buf_printf(out, " %s",
						    nftnl_expr_get_str(e, NFTNL_EXPR_IMM_CHAIN));
			if (!ret)
				ret = wd_buf_puts(out, " ");
		} else if (!strcmp(name, "redir")) {
			ret = wd_buf_puts(out, "redirect ");
		} else if (!strcmp(name, "nat")) {
			ret = wd_buf_puts(out,
					  nftnl_expr_get_u32(e, NFTNL_EXPR_NAT_TYPE) == NFT_NAT_DNAT
					      ? "dnat "
					      : "snat ");
		} else if (!strcmp(name, "fib") && nftnl_expr_is_set(e, NFTNL_EXPR_FIB_DREG)) {
			reg = nftnl_expr_get_u32(e, NFTNL_EXPR_FIB_DREG);
			if (reg < WD_ARRAY_SIZE(origin))
				snprintf(origin[reg], sizeof(origin[reg]), "fib");
		} else if (!strcmp(name, "immediate") || !strcmp(name, "bitwise")) {
			/* loads feeding a later statement: not worth a word */
		} else {
			ret = wd_buf_printf(out, "%s ", name);
		}
	}
	nftnl_expr_iter_destroy(it);
	if (!ret && out->len && out->data[out->len - 1] == ' ')
		out->data[--out->len] = '\0';
	return ret;
}

/* check.c - fw_audit() (`warden nft audit`): reads the live ruleset over netlink and checks it
 * against the model and against what other tables could do to traffic from run interfaces.
 *
 * Theory of operation: one socket, six dumps (live.c: tables, chains, rules, our sets, elements
 * of our sets, our objects), then pure checks over what came back:
 *  1. our table, its sets and base chains exist with the model's types, hooks, priorities and
 *     policies, and nothing else lives in it;
 *  2. each chain holds exactly the model's rules in order, compared expression by expression
 *     (fw_rule_signature()); an extra rule that accepts, jumps or redirects is named as such;
 *  3. the gateway port sets hold exactly the configured ports, the per-run counters are
 *     dynamic sets, the TCP timeout policy is the model's;
 *  4. base chains of other tables at prerouting/input/forward: a NAT chain at prerouting with a
 *     priority earlier than or equal to ours that may see run traffic would take the redirect
 *     away (violation). An accept elsewhere only ends that table's base chain; our drops still
 *     run (note). A foreign drop fails closed but may break the gateway (note).
 */
#include "nft/nft_internal.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/expr.h>
#include <libnftnl/object.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int report_add(struct fw_audit_report *rep, enum fw_finding_level level, const char *object,
		      const char *fmt, ...) WD_PRINTF(4, 5);

static int report_add(struct fw_audit_report *rep, enum fw_finding_level level, const char *object,
		      const char *fmt, ...)
{
	struct fw_finding *f;
	va_list ap;

	if (rep->n == rep->cap) {
		size_t ncap = rep->cap ? rep->cap * 2 : 16;
		struct fw_finding *ni = realloc(rep->items, ncap * sizeof(*ni));

		if (!ni)
			return -ENOMEM;
		rep->items = ni;
		rep->cap = ncap;
	}
	f = &rep->items[rep->n++];
	f->level = level;
	snprintf(f->object, sizeof(f->object), "%s", object);
	va_start(ap, fmt);
	vsnprintf(f->msg, sizeof(f->msg), fmt, ap);
	va_end(ap);
	if (level == FW_VIOLATION)
		rep->violations++;
	else
		rep->notes++;
	return 0;
}

void fw_audit_report_free(struct fw_audit_report *rep)
{
	if (!rep)
		return;
	free(rep->items);
	memset(rep, 0, sizeof(*rep));
}

static const char *family_name(uint32_t f)
{
	switch (f) {
	case NFPROTO_INET:
		return "inet";
	case NFPROTO_IPV4:
		return "ip";
	case NFPROTO_IPV6:
		return "ip6";
	case NFPROTO_ARP:
		return "arp";
	case NFPROTO_BRIDGE:
		return "bridge";
	case NFPROTO_NETDEV:
		return "netdev";
	default:
		return "?";
	}
}

static bool str_is(const void *obj, const char *(*get)(const void *, uint16_t), uint16_t attr,
		   const char *want)
{
	const char *s = get(obj, attr);

	return s && !strcmp(s, want);
}

static const char *chain_str(const void *o, uint16_t a)
{
	return nftnl_chain_is_set(o, a) ? nftnl_chain_get_str(o, a) : NULL;
}

static const char *rule_str(const void *o, uint16_t a)
{
	return nftnl_rule_is_set(o, a) ? nftnl_rule_get_str(o, a) : NULL;
}

static bool chain_in_table(const struct nftnl_chain *c, uint32_t family, const char *table)
{
	return nftnl_chain_get_u32(c, NFTNL_CHAIN_FAMILY) == family &&
	       str_is(c, chain_str, NFTNL_CHAIN_TABLE, table);
}

static bool rule_in_chain(const struct nftnl_rule *r, uint32_t family, const char *table,
			  const char *chain)
{
	return nftnl_rule_get_u32(r, NFTNL_RULE_FAMILY) == family &&
	       str_is(r, rule_str, NFTNL_RULE_TABLE, table) &&
	       str_is(r, rule_str, NFTNL_RULE_CHAIN, chain);
}

/* --- what a rule does --------------------------------------------------------------------- */

enum rule_effect {
	EFF_NONE = 0,
	EFF_ACCEPT = 1 << 0,
	EFF_DROP = 1 << 1,
	EFF_NAT = 1 << 2,  /* redirect, dnat, snat, masquerade */
	EFF_JUMP = 1 << 3, /* jump / goto (target in @jump) */
	EFF_QUEUE = 1 << 4,
};

struct rule_info {
	unsigned effect;
	bool can_see;  /* may match traffic from a run interface */
	bool dport;    /* compares a transport destination port */
	bool own_addr; /* looks the destination up in gw_v4 / gw_v6 (the run's own address) */
	char jump[256];
};

/* the register an expression writes to, or UINT32_MAX */
static uint32_t expr_dreg(const struct nftnl_expr *e, const char *name)
{
	static const struct {
		const char *name;
		uint16_t attr;
	} dregs[] = {
	    {"meta", NFTNL_EXPR_META_DREG},	{"payload", NFTNL_EXPR_PAYLOAD_DREG},
	    {"ct", NFTNL_EXPR_CT_DREG},		{"immediate", NFTNL_EXPR_IMM_DREG},
	    {"fib", NFTNL_EXPR_FIB_DREG},	{"bitwise", NFTNL_EXPR_BITWISE_DREG},
	    {"lookup", NFTNL_EXPR_LOOKUP_DREG},
	};

	for (size_t i = 0; i < WD_ARRAY_SIZE(dregs); i++)
		if (!strcmp(name, dregs[i].name) && nftnl_expr_is_set(e, dregs[i].attr))
			return nftnl_expr_get_u32(e, dregs[i].attr);
	return UINT32_MAX;
}

static void rule_analyse(const struct nftnl_rule *r, const char *pfx, struct rule_info *ri)
{
	struct nftnl_expr_iter *it = nftnl_expr_iter_create(r);
	uint32_t iifname_reg = UINT32_MAX, dport_reg = UINT32_MAX;
	size_t plen = strlen(pfx);
	struct nftnl_expr *e;

	memset(ri, 0, sizeof(*ri));
	ri->can_see = true;
	if (!it)
		return;
	while ((e = nftnl_expr_iter_next(it))) {
		const char *name = nftnl_expr_get_str(e, NFTNL_EXPR_NAME);
		uint32_t dreg = expr_dreg(e, name);

		/* a register overwritten by anything else no longer holds the name */
		if (dreg != UINT32_MAX && dreg == iifname_reg)
			iifname_reg = UINT32_MAX;
		if (dreg != UINT32_MAX && dreg == dport_reg)
			dport_reg = UINT32_MAX;
		if (!strcmp(name, "payload") && dreg != UINT32_MAX &&
		    nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_BASE) ==
			NFT_PAYLOAD_TRANSPORT_HEADER &&
		    nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_OFFSET) == 2 &&
		    nftnl_expr_get_u32(e, NFTNL_EXPR_PAYLOAD_LEN) == 2)
			dport_reg = dreg;
		if ((!strcmp(name, "cmp") &&
		     nftnl_expr_get_u32(e, NFTNL_EXPR_CMP_SREG) == dport_reg) ||
		    (!strcmp(name, "lookup") &&
		     nftnl_expr_get_u32(e, NFTNL_EXPR_LOOKUP_SREG) == dport_reg))
			ri->dport = true;
		if (!strcmp(name, "lookup") && nftnl_expr_is_set(e, NFTNL_EXPR_LOOKUP_SET) &&
		    (!strcmp(nftnl_expr_get_str(e, NFTNL_EXPR_LOOKUP_SET), FW_SET_GW_V4) ||
		     !strcmp(nftnl_expr_get_str(e, NFTNL_EXPR_LOOKUP_SET), FW_SET_GW_V6)))
			ri->own_addr = true;
		if (!strcmp(name, "meta") && nftnl_expr_is_set(e, NFTNL_EXPR_META_DREG)) {
			if (nftnl_expr_get_u32(e, NFTNL_EXPR_META_KEY) == NFT_META_IIFNAME)
				iifname_reg = dreg;
		} else if (!strcmp(name, "cmp") &&
			   nftnl_expr_get_u32(e, NFTNL_EXPR_CMP_SREG) == iifname_reg) {
			uint32_t len = 0, op = nftnl_expr_get_u32(e, NFTNL_EXPR_CMP_OP);
			const char *d = nftnl_expr_get(e, NFTNL_EXPR_CMP_DATA, &len);
			size_t n = d ? strnlen(d, len) : 0;
			bool wildcard = d && n == len;
			/* does the compared name (or wildcard) overlap "prefix*"? */
			bool overlap = d && (n >= plen ? !strncmp(d, pfx, plen)
						       : wildcard && !strncmp(d, pfx, n));

			if (op == NFT_CMP_EQ && !overlap)
				ri->can_see = false;
			/* "iifname != prefix*" (or a shorter wildcard) excludes every run */
			if (op == NFT_CMP_NEQ && wildcard && n <= plen && !strncmp(d, pfx, n))
				ri->can_see = false;
		} else if (!strcmp(name, "immediate") &&
			   nftnl_expr_is_set(e, NFTNL_EXPR_IMM_VERDICT)) {
			int32_t v = (int32_t)nftnl_expr_get_u32(e, NFTNL_EXPR_IMM_VERDICT);

			if (v == NF_ACCEPT)
				ri->effect |= EFF_ACCEPT;
			else if (v == NF_DROP)
				ri->effect |= EFF_DROP;
			else if (v == NF_QUEUE)
				ri->effect |= EFF_QUEUE;
			else if (v == NFT_JUMP || v == NFT_GOTO) {
				ri->effect |= EFF_JUMP;
				if (nftnl_expr_is_set(e, NFTNL_EXPR_IMM_CHAIN))
					snprintf(ri->jump, sizeof(ri->jump), "%s",
						 nftnl_expr_get_str(e, NFTNL_EXPR_IMM_CHAIN));
			}
		} else if (!strcmp(name, "redir") || !strcmp(name, "nat") ||
			   !strcmp(name, "masq")) {
			ri->effect |= EFF_NAT;
		} else if (!strcmp(name, "reject")) {
			ri->effect |= EFF_DROP;
		} else if (!strcmp(name, "queue")) {
			ri->effect |= EFF_QUEUE;
		}
	}
	nftnl_expr_iter_destroy(it);
}

/* --- our own table ------------------------------------------------------------------------ */

static struct nftnl_chain *find_chain(struct fw_live *l, uint32_t family, const char *table,
				      const char *name)
{
	for (size_t i = 0; i < l->chains.n; i++)
		if (chain_in_table(l->chains.v[i], family, table) &&
		    str_is(l->chains.v[i], chain_str, NFTNL_CHAIN_NAME, name))
			return l->chains.v[i];
	return NULL;
}

static int check_chain_rules(const struct fw_model *m, const struct fw_chain_def *cd,
			     struct fw_live *l, struct fw_audit_report *rep, const char *obj)
{
	struct wd_buf exp[FW_CHAIN_MAX_RULES], got = WD_BUF_INIT, txt = WD_BUF_INIT;
	bool used[FW_CHAIN_MAX_RULES] = {false};
	int last = -1, ret = 0;
	bool order_bad = false;

	for (unsigned j = 0; j < FW_CHAIN_MAX_RULES; j++)
		exp[j] = (struct wd_buf)WD_BUF_INIT;
	for (unsigned j = 0; !ret && j < cd->nrules; j++) {
		struct nftnl_rule *r = fw_rule_build(m, cd, &cd->rules[j]);

		ret = r ? fw_rule_signature(r, &exp[j]) : -ENOMEM;
		nftnl_rule_free(r);
	}
	for (size_t i = 0; !ret && i < l->rules.n; i++) {
		struct nftnl_rule *r = l->rules.v[i];
		uint64_t handle = nftnl_rule_get_u64(r, NFTNL_RULE_HANDLE);
		int match = -1;

		if (!rule_in_chain(r, NFPROTO_INET, m->cfg.table, cd->name))
			continue;
		wd_buf_reset(&got);
		ret = fw_rule_signature(r, &got);
		for (unsigned j = 0; !ret && j < cd->nrules && match < 0; j++)
			if (!used[j] && !strcmp(wd_buf_cstr(&exp[j]), wd_buf_cstr(&got)))
				match = (int)j;
		if (ret)
			break;
		if (match >= 0) {
			used[match] = true;
			if (match < last)
				order_bad = true;
			last = match;
			continue;
		}
		{
			struct rule_info ri;

			wd_buf_reset(&txt);
			ret = fw_rule_describe(r, &txt);
			if (ret)
				break;
			rule_analyse(r, m->cfg.if_prefix, &ri);
			if (ri.can_see && (ri.effect & EFF_ACCEPT) && ri.dport && !ri.own_addr)
				ret = report_add(
				    rep, FW_VIOLATION, obj,
				    "unexpected rule (handle %llu) accepts traffic from %s* "
				    "interfaces by port alone, at any address of this host (a run "
				    "may reach only its own gateway address, `iifname . ip daddr "
				    "@%s` / `ip6 daddr @%s`): %s",
				    (unsigned long long)handle, m->cfg.if_prefix, FW_SET_GW_V4,
				    FW_SET_GW_V6, wd_buf_cstr(&txt));
			else if (ri.can_see && (ri.effect & (EFF_ACCEPT | EFF_JUMP | EFF_QUEUE)))
				ret =
				    report_add(rep, FW_VIOLATION, obj,
					       "unexpected rule (handle %llu) accepts traffic from "
					       "%s* interfaces: %s",
					       (unsigned long long)handle, m->cfg.if_prefix,
					       wd_buf_cstr(&txt));
			else if (ri.can_see && (ri.effect & EFF_NAT))
				ret = report_add(
				    rep, FW_VIOLATION, obj,
				    "unexpected rule (handle %llu) redirects traffic from "
				    "%s* interfaces: %s",
				    (unsigned long long)handle, m->cfg.if_prefix,
				    wd_buf_cstr(&txt));
			else
				ret = report_add(rep, FW_VIOLATION, obj,
						 "unexpected rule (handle %llu): %s",
						 (unsigned long long)handle, wd_buf_cstr(&txt));
		}
	}
	for (unsigned j = 0; !ret && j < cd->nrules; j++) {
		if (used[j])
			continue;
		wd_buf_reset(&txt);
		ret = fw_rule_text(m, &cd->rules[j], &txt);
		if (!ret)
			ret = report_add(rep, FW_VIOLATION, obj, "missing rule #%u: %s", j + 1,
					 wd_buf_cstr(&txt));
	}
	if (!ret && order_bad)
		ret =
		    report_add(rep, FW_VIOLATION, obj,
			       "rules are not in the model's order (`warden nft render` shows it)");
	for (unsigned j = 0; j < FW_CHAIN_MAX_RULES; j++)
		wd_buf_free(&exp[j]);
	wd_buf_free(&got);
	wd_buf_free(&txt);
	return ret;
}

static int check_chains(const struct fw_model *m, struct fw_live *l, struct fw_audit_report *rep)
{
	const char *tbl = m->cfg.table;
	char obj[128];
	int ret = 0;

	for (unsigned i = 0; !ret && i < m->nchains; i++) {
		const struct fw_chain_def *cd = &m->chains[i];
		struct nftnl_chain *c = find_chain(l, NFPROTO_INET, tbl, cd->name);

		snprintf(obj, sizeof(obj), "chain inet %s %s", tbl, cd->name);
		if (!c) {
			ret = report_add(rep, FW_VIOLATION, obj,
					 "missing (expected type %s hook %s priority %d)", cd->type,
					 fw_hook_name(cd->hook), cd->prio);
			continue;
		}
		if (!nftnl_chain_is_set(c, NFTNL_CHAIN_HOOKNUM)) {
			ret = report_add(rep, FW_VIOLATION, obj,
					 "is not a base chain (expected type %s hook %s priority "
					 "%d)",
					 cd->type, fw_hook_name(cd->hook), cd->prio);
		} else {
			uint32_t hook = nftnl_chain_get_u32(c, NFTNL_CHAIN_HOOKNUM);
			int32_t prio = nftnl_chain_get_s32(c, NFTNL_CHAIN_PRIO);
			const char *type = chain_str(c, NFTNL_CHAIN_TYPE);
			uint32_t policy = nftnl_chain_get_u32(c, NFTNL_CHAIN_POLICY);

			if (hook != cd->hook)
				ret = report_add(rep, FW_VIOLATION, obj, "hook is %s, expected %s",
						 fw_hook_name(hook), fw_hook_name(cd->hook));
			if (!ret && prio != cd->prio)
				ret = report_add(rep, FW_VIOLATION, obj,
						 "priority is %d, expected %d (%s)", prio, cd->prio,
						 cd->prio_text);
			if (!ret && (!type || strcmp(type, cd->type)))
				ret = report_add(rep, FW_VIOLATION, obj, "type is %s, expected %s",
						 type ? type : "?", cd->type);
			if (!ret && policy != NF_ACCEPT)
				ret = report_add(
				    rep, FW_VIOLATION, obj,
				    "policy is not accept (the model drops with explicit "
				    "rules, so other interfaces stay untouched)");
		}
		if (!ret)
			ret = check_chain_rules(m, cd, l, rep, obj);
	}
	/* nothing else may live in our table */
	for (size_t i = 0; !ret && i < l->chains.n; i++) {
		struct nftnl_chain *c = l->chains.v[i];
		const char *name = chain_str(c, NFTNL_CHAIN_NAME);
		bool known = false;

		if (!chain_in_table(c, NFPROTO_INET, tbl) || !name)
			continue;
		for (unsigned j = 0; j < m->nchains; j++)
			known = known || !strcmp(name, m->chains[j].name);
		if (known)
			continue;
		snprintf(obj, sizeof(obj), "chain inet %s %s", tbl, name);
		ret = report_add(rep, FW_VIOLATION, obj, "not part of the model: %s",
				 nftnl_chain_is_set(c, NFTNL_CHAIN_HOOKNUM)
				     ? "an extra base chain"
				     : "an extra regular chain");
	}
	return ret;
}

static struct nftnl_set *find_set(struct fw_live *l, const char *name)
{
	for (size_t i = 0; i < l->sets.n; i++) {
		const char *n = nftnl_set_get_str(l->sets.v[i], NFTNL_SET_NAME);

		if (n && !strcmp(n, name))
			return l->sets.v[i];
	}
	return NULL;
}

static unsigned count_elems(struct nftnl_set *s, uint16_t *ports, unsigned max, unsigned *nports)
{
	struct nftnl_set_elems_iter *it = nftnl_set_elems_iter_create(s);
	struct nftnl_set_elem *e;
	unsigned n = 0;

	*nports = 0;
	if (!it)
		return 0;
	while ((e = nftnl_set_elems_iter_next(it))) {
		uint32_t len = 0;
		const uint8_t *k = nftnl_set_elem_get(e, NFTNL_SET_ELEM_KEY, &len);

		n++;
		if (ports && k && len == 2 && *nports < max)
			ports[(*nports)++] = (uint16_t)(k[0] << 8 | k[1]);
	}
	nftnl_set_elems_iter_destroy(it);
	return n;
}

static int check_sets(const struct fw_model *m, struct mnl_socket *nl, struct fw_live *l,
		      struct fw_audit_report *rep)
{
	char obj[128];
	int ret = 0;

	for (unsigned i = 0; !ret && i < m->nsets; i++) {
		const struct fw_set_def *sd = &m->sets[i];
		struct nftnl_set *want = fw_set_build(m, sd), *got = find_set(l, sd->name);
		uint16_t ports[8];
		unsigned nports, n;

		if (!want)
			return -ENOMEM;
		snprintf(obj, sizeof(obj), "set inet %s %s", m->cfg.table, sd->name);
		if (!got) {
			ret = report_add(rep, FW_VIOLATION, obj, "missing");
		} else if (nftnl_set_get_u32(got, NFTNL_SET_KEY_TYPE) !=
			       nftnl_set_get_u32(want, NFTNL_SET_KEY_TYPE) ||
			   nftnl_set_get_u32(got, NFTNL_SET_KEY_LEN) !=
			       nftnl_set_get_u32(want, NFTNL_SET_KEY_LEN)) {
			ret = report_add(rep, FW_VIOLATION, obj, "has the wrong key type");
		} else if (sd->dynamic &&
			   !(nftnl_set_get_u32(got, NFTNL_SET_FLAGS) & NFT_SET_EVAL)) {
			ret = report_add(rep, FW_VIOLATION, obj,
					 "is not dynamic: the per-run connection limit cannot "
					 "count");
		} else if (sd->dynamic) {
			/* filled by the packet path: its elements are not runs */
		} else {
			ret = fw_live_read_elems(nl, got);
			if (ret < 0) {
				nftnl_set_free(want);
				return ret;
			}
			n = count_elems(got, ports, WD_ARRAY_SIZE(ports), &nports);
			if (!strcmp(sd->name, FW_SET_RUNS_IF))
				rep->runs_if = n;
			else if (!strcmp(sd->name, FW_SET_RUNS_V4))
				rep->runs_v4 = n;
			else if (!strcmp(sd->name, FW_SET_RUNS_V6))
				rep->runs_v6 = n;
			else if (!strcmp(sd->name, FW_SET_GW_V4))
				rep->gw_v4 = n;
			else if (!strcmp(sd->name, FW_SET_GW_V6))
				rep->gw_v6 = n;
			if (sd->key == FW_KEY_PORT) {
				bool same = nports == sd->nelems;

				for (unsigned a = 0; same && a < sd->nelems; a++) {
					bool found = false;

					for (unsigned b = 0; b < nports; b++)
						found = found || ports[b] == sd->elems[a];
					same = found;
				}
				if (!same)
					ret =
					    report_add(rep, FW_VIOLATION, obj,
						       "holds %u ports, not exactly the gateway's "
						       "configured ones",
						       nports);
			}
		}
		nftnl_set_free(want);
	}
	for (size_t i = 0; !ret && i < l->sets.n; i++) {
		const char *name = nftnl_set_get_str(l->sets.v[i], NFTNL_SET_NAME);
		bool known = false;

		for (unsigned j = 0; name && j < m->nsets; j++)
			known = known || !strcmp(name, m->sets[j].name);
		if (!known && name && strncmp(name, "__", 2)) {
			snprintf(obj, sizeof(obj), "set inet %s %s", m->cfg.table, name);
			ret = report_add(rep, FW_NOTE, obj, "not part of the model");
		}
	}
	return ret;
}

static int check_objs(const struct fw_model *m, struct fw_live *l, struct fw_audit_report *rep)
{
	char obj[128];
	int ret = 0;

	for (unsigned i = 0; !ret && i < m->nobjs; i++) {
		const struct fw_obj_def *od = &m->objs[i];
		struct nftnl_obj *got = NULL;
		uint32_t want[FW_TCP_TIMEOUTS], len = 0;
		const void *t;

		for (size_t j = 0; j < l->objs.n; j++) {
			const char *t0 = nftnl_obj_get_str(l->objs.v[j], NFTNL_OBJ_TABLE);
			const char *n = nftnl_obj_get_str(l->objs.v[j], NFTNL_OBJ_NAME);

			if (t0 && n && !strcmp(t0, m->cfg.table) && !strcmp(n, od->name))
				got = l->objs.v[j];
		}
		snprintf(obj, sizeof(obj), "ct timeout inet %s %s", m->cfg.table, od->name);
		if (!got) {
			ret = report_add(rep, FW_VIOLATION, obj,
					 "missing: a run's closed TCP flows stay in conntrack for "
					 "minutes, outside its limits");
			continue;
		}
		fw_obj_timeouts(od, want);
		t = nftnl_obj_get_data(got, NFTNL_OBJ_CT_TIMEOUT_ARRAY, &len);
		if (nftnl_obj_get_u32(got, NFTNL_OBJ_TYPE) != NFT_OBJECT_CT_TIMEOUT ||
		    nftnl_obj_get_u8(got, NFTNL_OBJ_CT_TIMEOUT_L4PROTO) != IPPROTO_TCP || !t ||
		    len < sizeof(want) || memcmp(t, want, sizeof(want)))
			ret = report_add(rep, FW_VIOLATION, obj,
					 "is not the model's TCP timeout policy (time_wait %u s, "
					 "close %u s, the kernel's defaults otherwise)",
					 od->time_wait, od->close);
	}
	for (size_t j = 0; !ret && j < l->objs.n; j++) {
		const char *t0 = nftnl_obj_get_str(l->objs.v[j], NFTNL_OBJ_TABLE);
		const char *n = nftnl_obj_get_str(l->objs.v[j], NFTNL_OBJ_NAME);
		bool known = false;

		if (!t0 || !n || strcmp(t0, m->cfg.table))
			continue;
		for (unsigned i = 0; i < m->nobjs; i++)
			known = known || !strcmp(n, m->objs[i].name);
		if (!known) {
			snprintf(obj, sizeof(obj), "object inet %s %s", m->cfg.table, n);
			ret = report_add(rep, FW_NOTE, obj, "not part of the model");
		}
	}
	return ret;
}

/* --- other tables ------------------------------------------------------------------------- */

/* NOLINTNEXTLINE(misc-no-recursion): jumps are followed at most 8 deep */
static int foreign_rules(const struct fw_model *m, struct fw_live *l,
			 const struct nftnl_chain *base, const char *chain, int depth,
			 struct fw_audit_report *rep)
{
	uint32_t family = nftnl_chain_get_u32(base, NFTNL_CHAIN_FAMILY);
	const char *table = chain_str(base, NFTNL_CHAIN_TABLE);
	const char *type = chain_str(base, NFTNL_CHAIN_TYPE);
	uint32_t hook = nftnl_chain_get_u32(base, NFTNL_CHAIN_HOOKNUM);
	int32_t prio = nftnl_chain_get_s32(base, NFTNL_CHAIN_PRIO);
	const struct fw_chain_def *divert = &m->chains[1];
	struct wd_buf txt = WD_BUF_INIT;
	char obj[128];
	int ret = 0;

	if (!table || depth > 8)
		return 0;
	snprintf(obj, sizeof(obj), "chain %s %s %s", family_name(family), table, chain);
	for (size_t i = 0; !ret && i < l->rules.n; i++) {
		struct nftnl_rule *r = l->rules.v[i];
		unsigned long long handle = nftnl_rule_get_u64(r, NFTNL_RULE_HANDLE);
		struct rule_info ri;

		if (!rule_in_chain(r, family, table, chain))
			continue;
		rule_analyse(r, m->cfg.if_prefix, &ri);
		if (!ri.can_see)
			continue;
		wd_buf_reset(&txt);
		ret = fw_rule_describe(r, &txt);
		if (ret)
			break;
		if ((ri.effect & EFF_NAT) && type && !strcmp(type, "nat") &&
		    hook == NF_INET_PRE_ROUTING && prio <= divert->prio)
			ret = report_add(rep, FW_VIOLATION, obj,
					 "rule (handle %llu) may NAT traffic from %s* interfaces "
					 "before warden's redirect (nat prerouting priority %d <= "
					 "%d): %s",
					 handle, m->cfg.if_prefix, prio, divert->prio,
					 wd_buf_cstr(&txt));
		else if (ri.effect & EFF_NAT)
			ret = report_add(rep, FW_NOTE, obj,
					 "rule (handle %llu) may NAT traffic from %s* interfaces "
					 "after warden's redirect; warden's input/forward drops "
					 "still apply: %s",
					 handle, m->cfg.if_prefix, wd_buf_cstr(&txt));
		else if (ri.effect & (EFF_ACCEPT | EFF_QUEUE))
			ret =
			    report_add(rep, FW_NOTE, obj,
				       "rule (handle %llu) accepts traffic that may come from %s* "
				       "interfaces; harmless to the sandbox (an accept ends only "
				       "its own base chain, warden's drops still run): %s",
				       handle, m->cfg.if_prefix, wd_buf_cstr(&txt));
		else if (ri.effect & EFF_DROP)
			ret = report_add(rep, FW_NOTE, obj,
					 "rule (handle %llu) drops traffic that may come from %s* "
					 "interfaces; fails closed but may block the gateway: %s",
					 handle, m->cfg.if_prefix, wd_buf_cstr(&txt));
		if (!ret && (ri.effect & EFF_JUMP) && ri.jump[0])
			ret = foreign_rules(m, l, base, ri.jump, depth + 1, rep);
	}
	wd_buf_free(&txt);
	return ret;
}

static int check_foreign(const struct fw_model *m, struct fw_live *l, struct fw_audit_report *rep)
{
	int ret = 0;

	for (size_t i = 0; !ret && i < l->chains.n; i++) {
		struct nftnl_chain *c = l->chains.v[i];
		uint32_t family = nftnl_chain_get_u32(c, NFTNL_CHAIN_FAMILY);
		const char *table = chain_str(c, NFTNL_CHAIN_TABLE);
		const char *name = chain_str(c, NFTNL_CHAIN_NAME);
		uint32_t hook;
		char obj[128];

		if (!table || !name || !nftnl_chain_is_set(c, NFTNL_CHAIN_HOOKNUM))
			continue;
		if (family != NFPROTO_INET && family != NFPROTO_IPV4 && family != NFPROTO_IPV6)
			continue;
		if (family == NFPROTO_INET && !strcmp(table, m->cfg.table))
			continue;
		hook = nftnl_chain_get_u32(c, NFTNL_CHAIN_HOOKNUM);
		if (m->cfg.mode == FW_MODE_RUN) {
			/* a rootless run's namespace is its own: nothing but Warden's table */
			snprintf(obj, sizeof(obj), "chain %s %s %s", family_name(family), table,
				 name);
			ret = report_add(rep, FW_VIOLATION, obj,
					 "another table's base chain in the run's own namespace "
					 "(hook %s priority %d): only Warden's table belongs here",
					 fw_hook_name(hook),
					 nftnl_chain_get_s32(c, NFTNL_CHAIN_PRIO));
			continue;
		}
		if (hook != NF_INET_PRE_ROUTING && hook != NF_INET_LOCAL_IN &&
		    hook != NF_INET_FORWARD)
			continue;
		snprintf(obj, sizeof(obj), "chain %s %s %s", family_name(family), table, name);
		ret = report_add(
		    rep, FW_NOTE, obj,
		    "another table's %s chain sees traffic from %s* interfaces "
		    "(type %s hook %s priority %d, policy %s)",
		    family_name(family), m->cfg.if_prefix,
		    chain_str(c, NFTNL_CHAIN_TYPE) ? chain_str(c, NFTNL_CHAIN_TYPE) : "?",
		    fw_hook_name(hook), nftnl_chain_get_s32(c, NFTNL_CHAIN_PRIO),
		    nftnl_chain_get_u32(c, NFTNL_CHAIN_POLICY) == NF_DROP ? "drop" : "accept");
		if (!ret)
			ret = foreign_rules(m, l, c, name, 0, rep);
	}
	return ret;
}

int fw_table_present(const struct fw_config *c, struct wd_err *err)
{
	struct mnl_socket *nl = NULL;
	struct fw_live l;
	int ret;

	memset(&l, 0, sizeof(l));
	ret = fw_nl_open(&nl, err);
	if (ret < 0)
		return ret;
	ret = fw_live_read_ruleset(nl, &l);
	if (ret < 0)
		wd_err_set(err, ret, "reading the nftables ruleset: %s", strerror(-ret));
	for (size_t i = 0; ret >= 0 && i < l.tables.n; i++) {
		const char *name = nftnl_table_get_str(l.tables.v[i], NFTNL_TABLE_NAME);

		if (nftnl_table_get_u32(l.tables.v[i], NFTNL_TABLE_FAMILY) == NFPROTO_INET &&
		    name && !strcmp(name, c->table))
			ret = 1;
	}
	fw_live_free(&l);
	mnl_socket_close(nl);
	return ret < 0 ? ret : ret == 1;
}

int fw_audit(const struct fw_config *c, struct fw_audit_report *rep, struct wd_err *err)
{
	struct mnl_socket *nl = NULL;
	struct fw_live l;
	struct fw_model m;
	bool have_table = false;
	char obj[128];
	int ret = fw_model_build(c, &m, err);

	memset(&l, 0, sizeof(l));
	if (ret < 0)
		return ret;
	ret = fw_nl_open(&nl, err);
	if (ret < 0)
		return ret;
	ret = fw_live_read_ruleset(nl, &l);
	if (ret < 0) {
		wd_err_set(err, ret, "reading the nftables ruleset: %s", strerror(-ret));
		goto out;
	}
	for (size_t i = 0; i < l.tables.n; i++) {
		const char *name = nftnl_table_get_str(l.tables.v[i], NFTNL_TABLE_NAME);

		if (nftnl_table_get_u32(l.tables.v[i], NFTNL_TABLE_FAMILY) == NFPROTO_INET &&
		    name && !strcmp(name, c->table))
			have_table = true;
	}
	snprintf(obj, sizeof(obj), "table inet %s", c->table);
	if (!have_table) {
		ret = report_add(rep, FW_VIOLATION, obj,
				 "missing: traffic from %s* interfaces is not confined "
				 "(run `warden nft install`)",
				 c->if_prefix);
	} else {
		ret = fw_live_read_sets(nl, c->table, &l);
		if (ret < 0) {
			wd_err_set(err, ret, "reading the sets of table inet %s: %s", c->table,
				   strerror(-ret));
			goto out;
		}
		ret = fw_live_read_objs(nl, c->table, &l);
		if (ret < 0) {
			wd_err_set(err, ret, "reading the objects of table inet %s: %s", c->table,
				   strerror(-ret));
			goto out;
		}
		ret = check_sets(&m, nl, &l, rep);
		if (!ret)
			ret = check_objs(&m, &l, rep);
		if (!ret)
			ret = check_chains(&m, &l, rep);
	}
	if (!ret)
		ret = check_foreign(&m, &l, rep);
	if (ret < 0)
		wd_err_set(err, ret, "auditing table inet %s: %s", c->table, strerror(-ret));
out:
	fw_live_free(&l);
	mnl_socket_close(nl);
	return ret;
}

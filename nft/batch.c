/* batch.c - the ruleset model's sets, objects and chains as libnftnl objects, and the netlink
 * batches that install or remove the table (fw_build_install(), fw_build_uninstall()) and add
 * or remove one run's elements (fw_build_run()); the rules themselves are build.c's. */
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
	case FW_ELEM_CONNS:
	case FW_ELEM_RATE:
		return true;
	case FW_ELEM_N:
		break;
	}
	return false;
}

bool fw_run_sends_elem(const struct fw_run *r, enum fw_run_elem e, bool add, const bool *skip)
{
	return fw_run_has_elem(r, e) && !(skip && skip[e]) && !(add && e >= FW_ELEM_ADDED);
}

int fw_build_run(const struct fw_model *m, const struct fw_run *r, bool add, const bool *skip,
		 struct fw_batch *b)
{
	static const char *const sets[FW_ELEM_N] = {
	    FW_SET_RUNS_IF, FW_SET_RUNS_V4,   FW_SET_RUNS_V6, FW_SET_GW_V4,
	    FW_SET_GW_V6,   FW_SET_RUN_CONNS, FW_SET_RUN_RATE};
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

		if (!fw_run_sends_elem(r, (enum fw_run_elem)i, add, skip))
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

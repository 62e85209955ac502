/* live.c - the live ruleset read back over netlink for fw_audit() (check.c): every table,
 * chain and rule of the namespace, the sets and objects of one table, the elements of a set,
 * each kept as libnftnl objects in a struct fw_live. */
#include "nft/nft_internal.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/object.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <libnftnl/table.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <stdlib.h>
#include <string.h>

static int objv_push(struct fw_objv *o, void *p)
{
	if (o->n == o->cap) {
		size_t ncap = o->cap ? o->cap * 2 : 16;
		void **nv = realloc(o->v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		o->v = nv;
		o->cap = ncap;
	}
	o->v[o->n++] = p;
	return 0;
}

void fw_live_free(struct fw_live *l)
{
	for (size_t i = 0; i < l->tables.n; i++)
		nftnl_table_free(l->tables.v[i]);
	for (size_t i = 0; i < l->chains.n; i++)
		nftnl_chain_free(l->chains.v[i]);
	for (size_t i = 0; i < l->rules.n; i++)
		nftnl_rule_free(l->rules.v[i]);
	for (size_t i = 0; i < l->sets.n; i++)
		nftnl_set_free(l->sets.v[i]);
	for (size_t i = 0; i < l->objs.n; i++)
		nftnl_obj_free(l->objs.v[i]);
	free(l->objs.v);
	free(l->tables.v);
	free(l->chains.v);
	free(l->rules.v);
	free(l->sets.v);
	memset(l, 0, sizeof(*l));
}

#define PARSE_CB(kind)                                                                             \
	static int kind##_cb(const struct nlmsghdr *nlh, void *data)                               \
	{                                                                                          \
		struct nftnl_##kind *o = nftnl_##kind##_alloc();                                   \
                                                                                                   \
		if (!o || nftnl_##kind##_nlmsg_parse(nlh, o) < 0 || objv_push(data, o) < 0) {      \
			nftnl_##kind##_free(o);                                                    \
			errno = ENOMEM;                                                            \
			return MNL_CB_ERROR;                                                       \
		}                                                                                  \
		return MNL_CB_OK;                                                                  \
	}
PARSE_CB(table)
PARSE_CB(chain)
PARSE_CB(rule)
PARSE_CB(set)
PARSE_CB(obj)

static int elems_cb(const struct nlmsghdr *nlh, void *data)
{
	if (nftnl_set_elems_nlmsg_parse(nlh, data) < 0) {
		errno = ENOMEM;
		return MNL_CB_ERROR;
	}
	return MNL_CB_OK;
}

static int dump_all(struct mnl_socket *nl, uint16_t type, mnl_cb_t cb, struct fw_objv *out)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh = nftnl_nlmsg_build_hdr(buf, type, NFPROTO_UNSPEC, NLM_F_DUMP, 0);

	return fw_nl_dump(nl, nlh, cb, out);
}

static int dump_sets(struct mnl_socket *nl, const char *table, struct fw_objv *out)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nftnl_set *s = nftnl_set_alloc();
	struct nlmsghdr *nlh;
	int ret;

	if (!s)
		return -ENOMEM;
	nftnl_set_set_str(s, NFTNL_SET_TABLE, table);
	nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETSET, NFPROTO_INET, NLM_F_DUMP | NLM_F_ACK, 0);
	nftnl_set_nlmsg_build_payload(nlh, s);
	nftnl_set_free(s);
	ret = fw_nl_dump(nl, nlh, set_cb, out);
	return ret;
}

static int dump_objs(struct mnl_socket *nl, const char *table, struct fw_objv *out)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nftnl_obj *o = nftnl_obj_alloc();
	struct nlmsghdr *nlh;

	if (!o)
		return -ENOMEM;
	nftnl_obj_set_str(o, NFTNL_OBJ_TABLE, table);
	nlh = nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETOBJ, NFPROTO_INET, NLM_F_DUMP | NLM_F_ACK, 0);
	nftnl_obj_nlmsg_build_payload(nlh, o);
	nftnl_obj_free(o);
	return fw_nl_dump(nl, nlh, obj_cb, out);
}

int fw_live_read_elems(struct mnl_socket *nl, struct nftnl_set *s)
{
	char buf[MNL_SOCKET_BUFFER_SIZE];
	struct nlmsghdr *nlh =
	    nftnl_nlmsg_build_hdr(buf, NFT_MSG_GETSETELEM, NFPROTO_INET, NLM_F_DUMP | NLM_F_ACK, 0);

	nftnl_set_elems_nlmsg_build_payload(nlh, s);
	return fw_nl_dump(nl, nlh, elems_cb, s);
}

int fw_live_read_ruleset(struct mnl_socket *nl, struct fw_live *l)
{
	int ret = dump_all(nl, NFT_MSG_GETTABLE, table_cb, &l->tables);

	if (!ret)
		ret = dump_all(nl, NFT_MSG_GETCHAIN, chain_cb, &l->chains);
	if (!ret)
		ret = dump_all(nl, NFT_MSG_GETRULE, rule_cb, &l->rules);
	return ret;
}

int fw_live_read_sets(struct mnl_socket *nl, const char *table, struct fw_live *l)
{
	return dump_sets(nl, table, &l->sets);
}

int fw_live_read_objs(struct mnl_socket *nl, const char *table, struct fw_live *l)
{
	return dump_objs(nl, table, &l->objs);
}

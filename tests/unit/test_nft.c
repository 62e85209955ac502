/* test_nft.c - unit tests for nft/ without a kernel: config checks, the rendering against the
 * golden files in tests/nft/golden/, and the libnftnl batches (parsed back message by message).
 *
 * WD_UPDATE_GOLDEN=1 rewrites the golden files from the current code (then review the diff).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "nft/nft.h"
#include "nft/nft_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <libnftnl/chain.h>
#include <libnftnl/rule.h>
#include <libnftnl/set.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GOLDEN WD_SOURCE_DIR "/tests/nft/golden/"

/* the config tests/nft/golden/custom.yaml describes */
static void custom_config(struct fw_config *c)
{
	fw_config_defaults(c);
	snprintf(c->table, sizeof(c->table), "wdtest");
	snprintf(c->if_prefix, sizeof(c->if_prefix), "sbx-");
	c->port_transparent = 25001;
	c->port_dns = 25053;
	c->port_proxy = 25080;
	c->nflog_group = 42;
	c->conns_per_run = 512;
	c->new_per_s = 50;
}

static void compare_golden(const char *name, const char *got)
{
	char path[512], *want = NULL;
	size_t len = 0;
	int ret;

	snprintf(path, sizeof(path), "%s%s", GOLDEN, name);
	if (getenv("WD_UPDATE_GOLDEN")) {
		FILE *f = fopen(path, "w");

		assert_non_null(f);
		fputs(got, f);
		assert_int_equal(fclose(f), 0);
	}
	ret = wd_read_file(path, 1 << 20, &want, &len);
	assert_int_equal(ret, 0);
	if (strcmp(want, got)) {
		fprintf(stderr,
			"%s differs from the rendering; if the change is intended, rerun with "
			"WD_UPDATE_GOLDEN=1 and review the diff\n--- got:\n%s",
			path, got);
		fail();
	}
	free(want);
}

static void test_defaults(void **state)
{
	struct fw_config c;

	(void)state;
	fw_config_defaults(&c);
	assert_string_equal(c.table, "warden");
	assert_string_equal(c.if_prefix, "wd-");
	assert_int_equal(c.port_transparent, 15001);
	assert_int_equal(c.port_dns, 15053);
	assert_int_equal(c.port_proxy, 15080);
	assert_int_equal(c.nflog_group, 7000);
	assert_int_equal(c.conns_per_run, 4096);
	assert_int_equal(c.new_per_s, 200);
	assert_int_equal(fw_config_check(&c, NULL), 0);
}

static void test_config_check(void **state)
{
	static const struct {
		const char *table, *prefix;
		uint16_t t, d, p;
	} bad[] = {
	    {"", "wd-", 1, 2, 3},	{"war den", "wd-", 1, 2, 3}, {"9x", "wd-", 1, 2, 3},
	    {"t;x", "wd-", 1, 2, 3},	{"warden", "", 1, 2, 3},     {"warden", "w*", 1, 2, 3},
	    {"warden", "w\"", 1, 2, 3}, {"warden", "wd-", 0, 2, 3},  {"warden", "wd-", 1, 1, 3},
	    {"warden", "wd-", 1, 2, 2}, {"warden", "wd-", 1, 53, 3},
	};
	struct wd_err err;

	(void)state;
	for (size_t i = 0; i < WD_ARRAY_SIZE(bad); i++) {
		struct fw_config c;
		struct wd_buf out = WD_BUF_INIT;

		fw_config_defaults(&c);
		snprintf(c.table, sizeof(c.table), "%s", bad[i].table);
		snprintf(c.if_prefix, sizeof(c.if_prefix), "%s", bad[i].prefix);
		c.port_transparent = bad[i].t;
		c.port_dns = bad[i].d;
		c.port_proxy = bad[i].p;
		wd_err_clear(&err);
		assert_int_equal(fw_config_check(&c, &err), -EINVAL);
		assert_true(err.msg[0] != '\0');
		assert_int_equal(fw_render(&c, &out), -EINVAL);
		assert_int_equal(fw_install(&c, NULL), -EINVAL);
		wd_buf_free(&out);
	}
	/* the per-run connection limit is bounded both ways */
	for (uint32_t n = 0; n < 3; n++) {
		struct fw_config c;
		static const uint32_t limits[] = {0, FW_CONNS_PER_RUN_MIN - 1,
						  FW_CONNS_PER_RUN_MAX + 1};

		fw_config_defaults(&c);
		c.conns_per_run = limits[n];
		wd_err_clear(&err);
		assert_int_equal(fw_config_check(&c, &err), -EINVAL);
		assert_non_null(strstr(err.msg, "connections per run"));
	}
	for (uint32_t n = 0; n < 2; n++) {
		struct fw_config c;

		fw_config_defaults(&c);
		c.new_per_s = n ? FW_NEW_PER_S_MAX + 1 : 0;
		wd_err_clear(&err);
		assert_int_equal(fw_config_check(&c, &err), -EINVAL);
		assert_non_null(strstr(err.msg, "a second"));
	}
}

static void test_render_golden(void **state)
{
	struct wd_buf a = WD_BUF_INIT, b = WD_BUF_INIT;
	struct fw_config c;

	(void)state;
	fw_config_defaults(&c);
	assert_int_equal(fw_render(&c, &a), 0);
	assert_int_equal(fw_render(&c, &b), 0);
	assert_string_equal(wd_buf_cstr(&a), wd_buf_cstr(&b)); /* deterministic */
	assert_non_null(strstr(wd_buf_cstr(&a), "\ntable inet warden\ndelete table inet warden\n"));
	compare_golden("default.nft", wd_buf_cstr(&a));

	wd_buf_reset(&a);
	custom_config(&c);
	assert_int_equal(fw_render(&c, &a), 0);
	assert_non_null(strstr(wd_buf_cstr(&a), "iifname != \"sbx-*\" accept"));
	assert_non_null(strstr(wd_buf_cstr(&a), "log group 42 drop"));
	assert_null(strstr(wd_buf_cstr(&a), "wd-*"));
	compare_golden("custom.nft", wd_buf_cstr(&a));
	wd_buf_free(&a);
	wd_buf_free(&b);
}

/* one "# chain #n: text" header and one expression per line, like nftables' *.payload files */
static void payload_text(const struct fw_model *m, struct wd_buf *out)
{
	struct wd_buf sig = WD_BUF_INIT;

	for (unsigned i = 0; i < m->nchains; i++) {
		const struct fw_chain_def *cd = &m->chains[i];

		for (unsigned j = 0; j < cd->nrules; j++) {
			struct nftnl_rule *r = fw_rule_build(m, cd, &cd->rules[j]);
			char *p;

			assert_non_null(r);
			wd_buf_reset(&sig);
			assert_int_equal(fw_rule_signature(r, &sig), 0);
			assert_int_equal(wd_buf_printf(out, "# %s #%u: ", cd->name, j + 1), 0);
			assert_int_equal(fw_rule_text(m, &cd->rules[j], out), 0);
			assert_int_equal(wd_buf_puts(out, "\n"), 0);
			for (p = strtok(sig.data, "]"); p; p = strtok(NULL, "]")) {
				while (*p == ' ')
					p++;
				if (*p)
					assert_int_equal(wd_buf_printf(out, "  %s]\n", p), 0);
			}
			nftnl_rule_free(r);
		}
	}
	wd_buf_free(&sig);
}

static void test_payload_golden(void **state)
{
	struct wd_buf out = WD_BUF_INIT;
	struct fw_config c;
	struct fw_model m;

	(void)state;
	fw_config_defaults(&c);
	assert_int_equal(fw_model_build(&c, &m, NULL), 0);
	payload_text(&m, &out);
	compare_golden("default.payload", wd_buf_cstr(&out));
	wd_buf_free(&out);
}

/* the UDP relay's rules (in the defaults, so in default.nft and default.payload: the /12 masked
 * the way nft itself generates it, the /48 loaded by its six bytes); without port_udp none of
 * them; and the relay's configuration refused where it cannot hold */
static void test_udp_relay_golden(void **state)
{
	struct wd_buf out = WD_BUF_INIT;
	struct fw_config c;
	struct fw_model m;
	struct wd_err err;

	(void)state;
	fw_config_defaults(&c);
	assert_int_equal(fw_render(&c, &out), 0);
	assert_non_null(strstr(wd_buf_cstr(&out),
			       "ip daddr 100.96.0.0/12 meta l4proto udp redirect to :15054\n"));
	assert_non_null(
	    strstr(wd_buf_cstr(&out), "iifname . ip6 daddr @gw_v6 udp dport 15054 accept\n"));
	wd_buf_reset(&out);
	c.port_udp = 0;
	assert_int_equal(fw_render(&c, &out), 0);
	assert_null(strstr(wd_buf_cstr(&out), "15054"));
	assert_int_equal(fw_model_build(&c, &m, NULL), 0);
	wd_buf_free(&out);

	c.port_udp = c.port_dns;
	wd_err_clear(&err);
	assert_int_equal(fw_config_check(&c, &err), -EINVAL);
	c.port_udp = 53;
	assert_int_equal(fw_config_check(&c, &err), -EINVAL);
	c.port_udp = 15054;
	c.synth4_prefix = 8; /* 100.96.0.0 has host bits past /8 */
	assert_int_equal(fw_config_check(&c, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "synthetic pools"));
	c.synth4_prefix = 12;
	c.synth6_prefix = 0;
	assert_int_equal(fw_config_check(&c, &err), -EINVAL);
	c.synth6_prefix = 48;
	assert_int_equal(fw_config_check(&c, &err), 0);
}

struct walk {
	unsigned by_type[NFT_MSG_MAX + 1];
	unsigned begin, end, total, rules_checked;
	unsigned excl_tables; /* NEWTABLE with NLM_F_EXCL: created, never replaced */
	uint32_t last_seq;
	const struct fw_model *m;
};

/* walk a built batch message by message, checking headers and parsing payloads back */
static void walk_batch(const struct fw_batch *b, struct walk *w)
{
	const struct nlmsghdr *nlh = (const struct nlmsghdr *)b->buf;
	int left = (int)fw_batch_len(b);
	unsigned rule_idx = 0;

	for (; mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left)) {
		uint16_t type = nlh->nlmsg_type;

		if (w->total)
			assert_int_equal(nlh->nlmsg_seq, w->last_seq + 1);
		w->last_seq = nlh->nlmsg_seq;
		w->total++;
		if (type == NFNL_MSG_BATCH_BEGIN) {
			w->begin++;
			continue;
		}
		if (type == NFNL_MSG_BATCH_END) {
			w->end++;
			continue;
		}
		assert_int_equal(type >> 8, NFNL_SUBSYS_NFTABLES);
		assert_true(nlh->nlmsg_flags & NLM_F_ACK);
		assert_true(nlh->nlmsg_flags & NLM_F_REQUEST);
		w->by_type[type & 0xff]++;
		if ((type & 0xff) == NFT_MSG_NEWTABLE && (nlh->nlmsg_flags & NLM_F_EXCL))
			w->excl_tables++;
		if ((type & 0xff) == NFT_MSG_NEWRULE && w->m) {
			struct nftnl_rule *got = nftnl_rule_alloc(), *want = NULL;
			struct wd_buf sg = WD_BUF_INIT, sw = WD_BUF_INIT;
			const char *chain;
			unsigned seen = 0;

			assert_int_equal(nftnl_rule_nlmsg_parse(nlh, got), 0);
			chain = nftnl_rule_get_str(got, NFTNL_RULE_CHAIN);
			for (unsigned i = 0; i < w->m->nchains && !want; i++)
				for (unsigned j = 0; j < w->m->chains[i].nrules && !want; j++)
					if (seen++ == rule_idx) {
						assert_string_equal(chain, w->m->chains[i].name);
						want = fw_rule_build(w->m, &w->m->chains[i],
								     &w->m->chains[i].rules[j]);
					}
			assert_non_null(want);
			assert_int_equal(fw_rule_signature(got, &sg), 0);
			assert_int_equal(fw_rule_signature(want, &sw), 0);
			assert_string_equal(wd_buf_cstr(&sg), wd_buf_cstr(&sw));
			rule_idx++;
			w->rules_checked++;
			nftnl_rule_free(got);
			nftnl_rule_free(want);
			wd_buf_free(&sg);
			wd_buf_free(&sw);
		}
		if ((type & 0xff) == NFT_MSG_NEWCHAIN) {
			struct nftnl_chain *c = nftnl_chain_alloc();

			assert_int_equal(nftnl_chain_nlmsg_parse(nlh, c), 0);
			assert_true(nftnl_chain_is_set(c, NFTNL_CHAIN_HOOKNUM));
			assert_int_equal(nftnl_chain_get_u32(c, NFTNL_CHAIN_POLICY), NF_ACCEPT);
			nftnl_chain_free(c);
		}
	}
	assert_int_equal(left, 0);
}

static void test_install_batch(void **state)
{
	struct fw_config c;
	struct fw_model m;
	struct fw_batch b;
	struct walk w = {0};
	unsigned nrules = 0;

	(void)state;
	fw_config_defaults(&c);
	assert_int_equal(fw_model_build(&c, &m, NULL), 0);
	for (unsigned i = 0; i < FW_NCHAINS; i++)
		nrules += m.chains[i].nrules;
	assert_int_equal(fw_batch_init(&b, 1000), 0);
	assert_int_equal(fw_build_install(&m, &b), 0);
	assert_int_equal(fw_batch_close(&b), 0);
	w.m = &m;
	walk_batch(&b, &w);
	assert_int_equal(w.begin, 1);
	assert_int_equal(w.end, 1);
	assert_int_equal(w.by_type[NFT_MSG_NEWTABLE], 2);
	assert_int_equal(w.by_type[NFT_MSG_DELTABLE], 1);
	assert_int_equal(w.by_type[NFT_MSG_NEWSET], FW_NSETS);
	assert_int_equal(w.by_type[NFT_MSG_NEWSETELEM], 2);
	assert_int_equal(w.by_type[NFT_MSG_NEWOBJ], FW_NOBJS);
	assert_int_equal(w.by_type[NFT_MSG_NEWCHAIN], FW_NCHAINS);
	assert_int_equal(w.by_type[NFT_MSG_NEWRULE], nrules);
	assert_int_equal(w.rules_checked, nrules);
	assert_int_equal(b.n, 3 + FW_NSETS + 2 + FW_NOBJS + FW_NCHAINS + nrules);
	/* every message has a label naming its object, for error messages */
	assert_string_equal(b.labels[0], "create table inet warden");
	assert_string_equal(b.labels[1], "delete table inet warden");
	assert_non_null(strstr(b.labels[b.n - 1], "add rule inet warden forward #2"));
	fw_batch_free(&b);
}

/* the rootless config: the defaults, FW_MODE_RUN, slot 0 of the default pools */
static void rootless_config(struct fw_config *c)
{
	struct in_addr a4;
	struct in6_addr a6;

	fw_config_defaults(c);
	assert_int_equal(inet_pton(AF_INET, "10.213.0.1", &a4), 1);
	assert_int_equal(inet_pton(AF_INET6, "fd77:7764:6e00::1", &a6), 1);
	fw_config_rootless(c, &a4, &a6);
}

/* FW_MODE_RUN: its own golden text and expressions, an install batch of just its objects,
 * and no table without the gateway's addresses */
static void test_rootless(void **state)
{
	struct wd_buf out = WD_BUF_INIT;
	struct fw_config c;
	struct fw_model m;
	struct fw_batch b;
	struct walk w = {0};
	unsigned nrules = 0;

	(void)state;
	rootless_config(&c);
	assert_int_equal(fw_render(&c, &out), 0);
	assert_non_null(strstr(wd_buf_cstr(&out), "type nat hook output priority -100;"));
	assert_non_null(strstr(wd_buf_cstr(&out),
			       "meta nfproto ipv4 meta l4proto tcp dnat ip to 10.213.0.1:15001"));
	assert_null(strstr(wd_buf_cstr(&out), "wd-*"));
	/* the run's conntrack limits, as root mode's in the host table but for the whole table */
	assert_non_null(strstr(wd_buf_cstr(&out), "ct state new ct count over 4096 log prefix"));
	assert_non_null(strstr(wd_buf_cstr(&out), "ct state new limit rate over 200/second burst "
						  "2000 packets log prefix"));
	compare_golden("rootless.nft", wd_buf_cstr(&out));
	wd_buf_reset(&out);
	assert_int_equal(fw_model_build(&c, &m, NULL), 0);
	assert_int_equal(m.nchains, 2);
	assert_int_equal(m.nsets, 2);
	/* the closed TCP flows' timeout object of the run's conntrack limits */
	assert_int_equal(m.nobjs, 1);
	payload_text(&m, &out);
	compare_golden("rootless.payload", wd_buf_cstr(&out));
	for (unsigned i = 0; i < m.nchains; i++)
		nrules += m.chains[i].nrules;
	assert_int_equal(fw_batch_init(&b, 1000), 0);
	assert_int_equal(fw_build_install(&m, &b), 0);
	assert_int_equal(fw_batch_close(&b), 0);
	w.m = &m;
	walk_batch(&b, &w);
	assert_int_equal(w.by_type[NFT_MSG_NEWSET], 2);
	assert_int_equal(w.by_type[NFT_MSG_NEWOBJ], 1);
	/* the run's namespace is new: one exclusive create, no delete (its commit would wait
	 * for an RCU grace period) */
	assert_int_equal(w.by_type[NFT_MSG_NEWTABLE], 1);
	assert_int_equal(w.by_type[NFT_MSG_DELTABLE], 0);
	assert_int_equal(w.excl_tables, 1);
	assert_int_equal(w.by_type[NFT_MSG_NEWCHAIN], 2);
	assert_int_equal(w.rules_checked, nrules);
	fw_batch_free(&b);
	/* a table whose DNAT would go nowhere, or to loopback, is refused */
	c.gw4.s_addr = 0;
	assert_int_equal(fw_config_check(&c, NULL), -EINVAL);
	rootless_config(&c);
	assert_int_equal(inet_pton(AF_INET, "127.0.0.1", &c.gw4), 1);
	assert_int_equal(fw_config_check(&c, NULL), -EINVAL);
	rootless_config(&c);
	c.gw6 = in6addr_loopback;
	assert_int_equal(fw_config_check(&c, NULL), -EINVAL);
	wd_buf_free(&out);
}

static void test_uninstall_batch(void **state)
{
	struct fw_config c;
	struct fw_model m;
	struct fw_batch b;
	struct walk w = {0};

	(void)state;
	fw_config_defaults(&c);
	assert_int_equal(fw_model_build(&c, &m, NULL), 0);
	assert_int_equal(fw_batch_init(&b, 7), 0);
	assert_int_equal(fw_build_uninstall(&m, &b), 0);
	assert_int_equal(fw_batch_close(&b), 0);
	walk_batch(&b, &w);
	assert_int_equal(w.by_type[NFT_MSG_NEWTABLE], 1);
	assert_int_equal(w.by_type[NFT_MSG_DELTABLE], 1);
	assert_int_equal(b.n, 2);
	fw_batch_free(&b);
}

static void make_run(struct fw_run *r, unsigned i)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->ifname, sizeof(r->ifname), "wd-%010x", i);
	r->has_v4 = r->has_v6 = true;
	r->sbx4.s_addr = htonl(0x0ad50000u + i * 4 + 2);
	assert_int_equal(inet_pton(AF_INET6, "fd77:7764:6e00::2", &r->sbx6), 1);
	r->sbx6.s6_addr[10] = (uint8_t)(i >> 8);
	r->sbx6.s6_addr[11] = (uint8_t)i;
	r->has_gw4 = r->has_gw6 = true;
	r->gw4.s_addr = htonl(ntohl(r->sbx4.s_addr) - 1);
	r->gw6 = r->sbx6;
	r->gw6.s6_addr[15] = 1;
}

static int elem_cb(struct nftnl_set_elem *e, void *data)
{
	struct wd_buf *out = data;
	uint32_t len = 0;
	const uint8_t *k = nftnl_set_elem_get(e, NFTNL_SET_ELEM_KEY, &len);

	for (uint32_t i = 0; i < len; i++)
		if (wd_buf_printf(out, "%02x", k[i]))
			return -1;
	return 0;
}

static void test_run_batch(void **state)
{
	struct fw_config c;
	struct fw_model m;
	struct fw_batch b;
	struct fw_run r;
	const struct nlmsghdr *nlh;
	struct wd_buf keys = WD_BUF_INIT;
	bool skip[FW_ELEM_N] = {false, true, false, false, false, false, false};
	size_t size1;
	int left;

	(void)state;
	fw_config_defaults(&c);
	assert_int_equal(fw_model_build(&c, &m, NULL), 0);
	make_run(&r, 1);
	assert_int_equal(fw_run_check(&c, &r, NULL), 0);

	assert_int_equal(fw_batch_init(&b, 1), 0);
	assert_int_equal(fw_build_run(&m, &r, true, NULL, &b), FW_ELEM_ADDED);
	assert_int_equal(FW_ELEM_ADDED, 5);
	assert_int_equal(fw_batch_close(&b), 0);
	size1 = fw_batch_len(&b);
	assert_non_null(strstr(b.labels[1], "add element wd-0000000001 . 10.213.0.6 to set inet "
					    "warden runs_v4"));
	assert_non_null(strstr(b.labels[3], "add element wd-0000000001 . 10.213.0.5 to set inet "
					    "warden gw_v4"));
	assert_non_null(strstr(b.labels[4], "add element wd-0000000001 . fd77:7764:6e00::1:0:1 to "
					    "set inet warden gw_v6"));
	/* parse the five element messages back: ifname, ifname . v4, ifname . v6, and the
	 * gateway addresses ifname . v4, ifname . v6, all in one batch */
	nlh = (const struct nlmsghdr *)b.buf;
	left = (int)fw_batch_len(&b);
	for (; mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left)) {
		struct nftnl_set *s;

		if ((nlh->nlmsg_type & 0xff) != NFT_MSG_NEWSETELEM ||
		    nlh->nlmsg_type >> 8 != NFNL_SUBSYS_NFTABLES)
			continue;
		s = nftnl_set_alloc();
		assert_int_equal(nftnl_set_elems_nlmsg_parse(nlh, s), 0);
		assert_int_equal(nftnl_set_elem_foreach(s, elem_cb, &keys), 0);
		assert_int_equal(wd_buf_puts(&keys, "|"), 0);
		nftnl_set_free(s);
	}
	assert_string_equal(wd_buf_cstr(&keys), "77642d30303030303030303031000000|"
						"77642d303030303030303030310000000ad50006|"
						"77642d30303030303030303031000000"
						"fd7777646e0000000000000100000002|"
						"77642d303030303030303030310000000ad50005|"
						"77642d30303030303030303031000000"
						"fd7777646e0000000000000100000001|");
	fw_batch_free(&b);

	/* run 1000 costs what run 1 costs: same messages, same bytes */
	make_run(&r, 1000);
	assert_int_equal(fw_batch_init(&b, 1), 0);
	assert_int_equal(fw_build_run(&m, &r, true, NULL, &b), FW_ELEM_ADDED);
	assert_int_equal(fw_batch_close(&b), 0);
	assert_int_equal(fw_batch_len(&b), size1);
	fw_batch_free(&b);

	/* delete: the five, and the run's elements of the two meter sets (the packet path's,
	 * else they would stay after the run) */
	wd_buf_reset(&keys);
	assert_int_equal(fw_batch_init(&b, 1), 0);
	assert_int_equal(fw_build_run(&m, &r, false, NULL, &b), FW_ELEM_N);
	assert_int_equal(FW_ELEM_N, 7);
	assert_non_null(strstr(b.labels[5], "delete element wd-00000003e8 from set inet warden "
					    "run_conns"));
	assert_non_null(strstr(b.labels[6], "delete element wd-00000003e8 from set inet warden "
					    "run_rate"));
	nlh = (const struct nlmsghdr *)b.buf;
	left = (int)fw_batch_len(&b);
	for (; mnl_nlmsg_ok(nlh, left); nlh = mnl_nlmsg_next(nlh, &left)) {
		struct nftnl_set *s;

		if ((nlh->nlmsg_type & 0xff) != NFT_MSG_DELSETELEM ||
		    nlh->nlmsg_type >> 8 != NFNL_SUBSYS_NFTABLES)
			continue;
		s = nftnl_set_alloc();
		assert_int_equal(nftnl_set_elems_nlmsg_parse(nlh, s), 0);
		if (!strcmp(nftnl_set_get_str(s, NFTNL_SET_NAME), FW_SET_RUN_CONNS) ||
		    !strcmp(nftnl_set_get_str(s, NFTNL_SET_NAME), FW_SET_RUN_RATE)) {
			assert_int_equal(nftnl_set_elem_foreach(s, elem_cb, &keys), 0);
			assert_int_equal(wd_buf_puts(&keys, "|"), 0);
		}
		nftnl_set_free(s);
	}
	assert_string_equal(wd_buf_cstr(&keys), "77642d30303030303030336538000000|"
						"77642d30303030303030336538000000|");
	fw_batch_free(&b);

	/* delete, skipping the v4 element (the retry after "absent") */
	assert_int_equal(fw_batch_init(&b, 1), 0);
	assert_int_equal(fw_build_run(&m, &r, false, skip, &b), FW_ELEM_N - 1);
	assert_non_null(strstr(b.labels[0], "delete element wd-00000003e8 from set inet warden "
					    "runs_if"));
	assert_non_null(strstr(b.labels[1], "runs_v6"));
	fw_batch_free(&b);

	/* v4 only: its gateway address goes with it, the v6 one does not */
	r.has_v6 = false;
	assert_int_equal(fw_batch_init(&b, 1), 0);
	assert_int_equal(fw_build_run(&m, &r, true, NULL, &b), 3);
	assert_non_null(strstr(b.labels[2], "gw_v4"));
	fw_batch_free(&b);

	/* without gateway addresses (an old record being deleted): the other three, and the
	 * meters' two */
	make_run(&r, 1);
	r.has_gw4 = r.has_gw6 = false;
	assert_int_equal(fw_batch_init(&b, 1), 0);
	assert_int_equal(fw_build_run(&m, &r, false, NULL, &b), 5);
	fw_batch_free(&b);
	wd_buf_free(&keys);
}

static void test_run_check(void **state)
{
	struct fw_config c;
	struct fw_run r;
	struct wd_err err;

	(void)state;
	fw_config_defaults(&c);
	make_run(&r, 1);
	snprintf(r.ifname, sizeof(r.ifname), "eth0");
	wd_err_clear(&err);
	assert_int_equal(fw_run_check(&c, &r, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "prefix"));
	assert_int_equal(fw_run_add(&c, &r, NULL), -EINVAL); /* refused before any netlink */
	snprintf(r.ifname, sizeof(r.ifname), "wd-");
	assert_int_equal(fw_run_check(&c, &r, NULL), -EINVAL);
	make_run(&r, 1);
	r.has_v4 = r.has_v6 = false;
	assert_int_equal(fw_run_check(&c, &r, NULL), -EINVAL);
	r.has_v6 = true;
	/* a v4 gateway address without a v4 sandbox address */
	wd_err_clear(&err);
	assert_int_equal(fw_run_check(&c, &r, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "gateway address"));
	r.has_gw4 = false;
	assert_int_equal(fw_run_check(&c, &r, NULL), 0);
}

static void test_describe(void **state)
{
	struct fw_config c;
	struct fw_model m;
	struct wd_buf out = WD_BUF_INIT;
	struct nftnl_rule *r;

	(void)state;
	fw_config_defaults(&c);
	assert_int_equal(fw_model_build(&c, &m, NULL), 0);
	r = fw_rule_build(&m, &m.chains[0], &m.chains[0].rules[0]);
	assert_int_equal(fw_rule_describe(r, &out), 0);
	assert_string_equal(wd_buf_cstr(&out), "iifname != \"wd-*\" accept");
	nftnl_rule_free(r);
	wd_buf_reset(&out);
	r = fw_rule_build(&m, &m.chains[1], &m.chains[1].rules[8]);
	assert_int_equal(fw_rule_describe(r, &out), 0);
	assert_string_equal(wd_buf_cstr(&out), "meta l4proto 0x06 redirect");
	nftnl_rule_free(r);
	/* the UDP relay's redirect: the /12 loaded whole and masked */
	wd_buf_reset(&out);
	r = fw_rule_build(&m, &m.chains[1], &m.chains[1].rules[6]);
	assert_int_equal(fw_rule_describe(r, &out), 0);
	assert_string_equal(wd_buf_cstr(&out),
			    "meta nfproto 0x02 @nh,128,32 0x64600000 meta l4proto 0x11 redirect");
	nftnl_rule_free(r);
	/* the proxy exemption names the set of the runs' own gateway addresses */
	wd_buf_reset(&out);
	r = fw_rule_build(&m, &m.chains[1], &m.chains[1].rules[1]);
	assert_int_equal(fw_rule_describe(r, &out), 0);
	assert_non_null(strstr(wd_buf_cstr(&out), "@gw_v4"));
	nftnl_rule_free(r);
	wd_buf_free(&out);
}

static void test_batch_overflow_labels(void **state)
{
	struct fw_batch b;

	(void)state;
	/* many messages: the label array grows, seqs stay consecutive */
	assert_int_equal(fw_batch_init(&b, 10), 0);
	for (unsigned i = 0; i < 100; i++)
		assert_non_null(fw_batch_add(&b, NFT_MSG_GETGEN, NFPROTO_UNSPEC, 0, "msg %u", i));
	assert_int_equal(b.n, 100);
	assert_string_equal(b.labels[99], "msg 99");
	assert_int_equal(fw_batch_close(&b), 0);
	assert_int_equal(fw_batch_close(&b), 0);
	assert_null(fw_batch_add(&b, 0, 0, 0, "after close"));
	fw_batch_free(&b);
	fw_batch_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_config_check),
	    cmocka_unit_test(test_render_golden),
	    cmocka_unit_test(test_payload_golden),
	    cmocka_unit_test(test_udp_relay_golden),
	    cmocka_unit_test(test_install_batch),
	    cmocka_unit_test(test_uninstall_batch),
	    cmocka_unit_test(test_run_batch),
	    cmocka_unit_test(test_run_check),
	    cmocka_unit_test(test_describe),
	    cmocka_unit_test(test_batch_overflow_labels),
	    cmocka_unit_test(test_rootless),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

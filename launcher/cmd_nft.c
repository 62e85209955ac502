/* cmd_nft.c - `warden nft render|audit|install|uninstall|run-add|run-del|bench-runs`: the
 * nftables table as text, checked live, and the low-level admin/test tools around it. */
#include "launcher/cli.h"
#include "run/run.h"
#include "common/common.h"
#include "nft/nft.h"
#include "conf/host.h"
#include "policy/policy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: warden nft render [--config FILE] [--rootless]\n"
	    "       warden nft audit [--config FILE] [--json] [--rootless [--pid PID]]\n"
	    "       warden nft install [--config FILE]\n"
	    "       warden nft uninstall [--config FILE]\n"
	    "       warden nft run-add IFNAME [--v4 ADDR [--gw4 ADDR]] [--v6 ADDR [--gw6 ADDR]]\n"
	    "                          [--config FILE]\n"
	    "       warden nft run-del IFNAME [--v4 ADDR [--gw4 ADDR]] [--v6 ADDR [--gw6 ADDR]]\n"
	    "                          [--config FILE]\n"
	    "       warden nft bench-runs N [--config FILE]\n\n"
	    "render     print the ruleset as `nft -f` text (deterministic; diff it in CI)\n"
	    "audit      read the live ruleset and check Warden's invariants\n"
	    "install    create or replace the table in this network namespace\n"
	    "uninstall  delete the table (absent is fine)\n"
	    "run-add    low-level: register a run's interface, sandbox addresses (--v4,\n"
	    "           --v6) and own gateway addresses, the veth's host side (--gw4, --gw6)\n"
	    "run-del    low-level: unregister them (absent elements are fine)\n"
	    "bench-runs low-level: time N run-add + run-del pairs on dummy names\n\n"
	    "--config FILE is a warden-gateway config (table, interface prefix, ports,\n"
	    "NFLOG group); without it the defaults are used.\n"
	    "--rootless: the table of one rootless run, inside that run's own network\n"
	    "namespace, instead of the host's; with --pid PID, audit enters the user and\n"
	    "network namespaces of that process of a rootless run first (as the run's user).\n\n"
	    "exit status: 0 ok (audit: clean), 1 audit found violations,\n"
	    "2 usage error, bad config or netlink error, 125 internal error\n");
}

struct nft_opts {
	const char *config;
	const char *ifname;
	const char *v4;
	const char *v6;
	const char *gw4;
	const char *gw6;
	const char *count;
	const char *pid;
	bool json;
	bool rootless;
};

/* Parse the options every sub-verb shares; positional arguments fill @pos in order. */
static int parse_opts(int argc, char **argv, struct nft_opts *o, const char **pos, int npos)
{
	int got = 0;

	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		const char **dst = NULL;

		if (!strcmp(a, "--config"))
			dst = &o->config;
		else if (!strcmp(a, "--v4"))
			dst = &o->v4;
		else if (!strcmp(a, "--v6"))
			dst = &o->v6;
		else if (!strcmp(a, "--gw4"))
			dst = &o->gw4;
		else if (!strcmp(a, "--gw6"))
			dst = &o->gw6;
		else if (!strcmp(a, "--pid"))
			dst = &o->pid;
		else if (!strcmp(a, "--json")) {
			o->json = true;
			continue;
		} else if (!strcmp(a, "--rootless")) {
			o->rootless = true;
			continue;
		} else if (a[0] == '-') {
			wd_say(stderr, "warden nft %s: unknown option %s", argv[1], a);
			return -EINVAL;
		} else if (got < npos) {
			pos[got++] = a;
			continue;
		} else {
			wd_say(stderr, "warden nft %s: unexpected argument %s", argv[1], a);
			return -EINVAL;
		}
		if (i + 1 >= argc) {
			wd_say(stderr, "warden nft %s: %s needs a value", argv[1], a);
			return -EINVAL;
		}
		*dst = argv[++i];
	}
	if (got < npos) {
		wd_say(stderr, "warden nft %s: missing argument", argv[1]);
		return -EINVAL;
	}
	return 0;
}

static int load_config(const char *path, bool rootless, struct fw_config *c)
{
	struct policy_diags d;
	struct wd_gwconf g;
	struct wd_buf line = WD_BUF_INIT;
	struct wd_err err;
	int ret;

	fw_config_defaults(c);
	if (!path) {
		conf_defaults(&g);
		return rootless ? run_rootless_fw_config(&g, c, NULL) : 0;
	}
	policy_diags_init(&d);
	ret = conf_load(path, &g, &d);
	if (ret < 0) {
		policy_diags_sort(&d);
		for (size_t i = 0; i < d.n; i++) {
			wd_buf_reset(&line);
			if (!policy_diag_format(&d, i, &line))
				wd_say(stderr, "%s", wd_buf_cstr(&line));
		}
		if (!d.n)
			wd_say(stderr, "warden nft: %s: %s", path, strerror(-ret));
		wd_buf_free(&line);
		policy_diags_free(&d);
		return ret;
	}
	policy_diags_free(&d);
	conf_free(&g); /* the ruleset needs no ceiling */
	conf_fw_config(&g, c);
	if (rootless && run_rootless_fw_config(&g, c, NULL)) {
		wd_say(stderr, "warden nft: %s: bad pools.runs_v4 / runs_v6", path);
		return -EINVAL;
	}
	wd_err_clear(&err);
	ret = fw_config_check(c, &err);
	if (ret < 0)
		wd_say(stderr, "warden nft: %s: %s", path, err.msg);
	return ret;
}

static int fail(const char *what, const struct wd_err *err, int code)
{
	wd_say(stderr, "warden nft %s: %s", what, err->msg[0] ? err->msg : strerror(-code));
	return code == -ENOMEM ? WD_EXIT_INTERNAL : WD_EXIT_USAGE;
}

static int do_render(const struct fw_config *c)
{
	struct wd_buf out = WD_BUF_INIT;
	int ret = fw_render(c, &out);

	if (ret < 0) {
		wd_buf_free(&out);
		wd_say(stderr, "warden nft render: %s", strerror(-ret));
		return ret == -ENOMEM ? WD_EXIT_INTERNAL : WD_EXIT_USAGE;
	}
	fputs(wd_buf_cstr(&out), stdout);
	wd_buf_free(&out);
	return fflush(stdout) ? WD_EXIT_INTERNAL : WD_EXIT_OK;
}

static int audit_json(const struct fw_config *c, const struct fw_audit_report *rep)
{
	struct wd_buf out = WD_BUF_INIT;
	int ret = 0;

	ret |= wd_buf_puts(&out, "{\"table\":");
	ret |= policy_json_string(&out, c->table);
	ret |= wd_buf_printf(&out,
			     ",\"family\":\"inet\",\"ok\":%s,\"violations\":%zu,\"notes\":%zu,"
			     "\"runs\":{\"interfaces\":%u,\"v4\":%u,\"v6\":%u,\"gw_v4\":%u,"
			     "\"gw_v6\":%u},\"findings\":[",
			     rep->violations ? "false" : "true", rep->violations, rep->notes,
			     rep->runs_if, rep->runs_v4, rep->runs_v6, rep->gw_v4, rep->gw_v6);
	for (size_t i = 0; i < rep->n; i++) {
		ret |= wd_buf_printf(&out, "%s{\"level\":\"%s\",\"object\":", i ? "," : "",
				     rep->items[i].level == FW_VIOLATION ? "violation" : "note");
		ret |= policy_json_string(&out, rep->items[i].object);
		ret |= wd_buf_puts(&out, ",\"message\":");
		ret |= policy_json_string(&out, rep->items[i].msg);
		ret |= wd_buf_puts(&out, "}");
	}
	ret |= wd_buf_puts(&out, "]}\n");
	if (!ret)
		fputs(wd_buf_cstr(&out), stdout);
	wd_buf_free(&out);
	return ret ? -ENOMEM : 0;
}

/* Enter the user and then the network namespace of process @pid (a rootless run's): the
 * capabilities the user namespace gives its owner are what reading its netns's rules needs, and
 * they last until an exec, which this process does not do. Return: 0, or a negative errno. */
static int enter_run(const char *pid)
{
	static const struct {
		const char *ns;
		int type;
	} order[] = {{"user", CLONE_NEWUSER}, {"net", CLONE_NEWNET}};
	char path[64], *end;
	long p = strtol(pid, &end, 10);

	if (*end || p < 1 || p > INT32_MAX) {
		wd_say(stderr, "warden nft audit: --pid: not a process id: %s", pid);
		return -EINVAL;
	}
	for (size_t i = 0; i < WD_ARRAY_SIZE(order); i++) {
		int fd, ret = 0;

		snprintf(path, sizeof(path), "/proc/%ld/ns/%s", p, order[i].ns);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || setns(fd, order[i].type) < 0)
			ret = -errno;
		if (fd >= 0)
			close(fd);
		if (ret) {
			wd_say(stderr, "warden nft audit: entering the %s namespace of %ld: %s",
			       order[i].ns, p, strerror(-ret));
			return ret;
		}
	}
	return 0;
}

static int do_audit(const struct fw_config *c, bool json)
{
	struct fw_audit_report rep = {0};
	struct wd_err err;
	int ret;

	wd_err_clear(&err);
	ret = fw_audit(c, &rep, &err);
	if (ret < 0) {
		fw_audit_report_free(&rep);
		return fail("audit", &err, ret);
	}
	if (json) {
		if (audit_json(c, &rep) < 0) {
			fw_audit_report_free(&rep);
			return WD_EXIT_INTERNAL;
		}
	} else {
		for (size_t i = 0; i < rep.n; i++)
			wd_say(stdout, "%s: %s: %s",
			       rep.items[i].level == FW_VIOLATION ? "violation" : "note",
			       rep.items[i].object, rep.items[i].msg);
		wd_say(stdout,
		       "table inet %s: %zu violation%s, %zu note%s; runs: %u interfaces, %u v4, "
		       "%u v6 (gateway addresses: %u v4, %u v6)",
		       c->table, rep.violations, rep.violations == 1 ? "" : "s", rep.notes,
		       rep.notes == 1 ? "" : "s", rep.runs_if, rep.runs_v4, rep.runs_v6, rep.gw_v4,
		       rep.gw_v6);
	}
	ret = rep.violations ? WD_EXIT_FOUND : WD_EXIT_OK;
	fw_audit_report_free(&rep);
	return fflush(stdout) ? WD_EXIT_INTERNAL : ret;
}

static int parse_run(const struct nft_opts *o, struct fw_run *r)
{
	memset(r, 0, sizeof(*r));
	if (strlen(o->ifname) >= sizeof(r->ifname)) {
		wd_say(stderr, "warden nft: interface name %s is too long", o->ifname);
		return -EINVAL;
	}
	snprintf(r->ifname, sizeof(r->ifname), "%s", o->ifname);
	if (o->v4 && inet_pton(AF_INET, o->v4, &r->sbx4) != 1) {
		wd_say(stderr, "warden nft: %s is not an IPv4 address", o->v4);
		return -EINVAL;
	}
	if (o->v6 && inet_pton(AF_INET6, o->v6, &r->sbx6) != 1) {
		wd_say(stderr, "warden nft: %s is not an IPv6 address", o->v6);
		return -EINVAL;
	}
	if (o->gw4 && inet_pton(AF_INET, o->gw4, &r->gw4) != 1) {
		wd_say(stderr, "warden nft: %s is not an IPv4 address", o->gw4);
		return -EINVAL;
	}
	if (o->gw6 && inet_pton(AF_INET6, o->gw6, &r->gw6) != 1) {
		wd_say(stderr, "warden nft: %s is not an IPv6 address", o->gw6);
		return -EINVAL;
	}
	if ((o->gw4 && !o->v4) || (o->gw6 && !o->v6)) {
		fprintf(stderr, "warden nft: --gw4 needs --v4, --gw6 needs --v6\n");
		return -EINVAL;
	}
	r->has_v4 = o->v4 != NULL;
	r->has_v6 = o->v6 != NULL;
	r->has_gw4 = o->gw4 != NULL;
	r->has_gw6 = o->gw6 != NULL;
	return 0;
}

static void bench_run(const struct fw_config *c, unsigned long i, struct fw_run *r)
{
	memset(r, 0, sizeof(*r));
	r->has_v4 = r->has_v6 = true;
	snprintf(r->ifname, sizeof(r->ifname), "%sb%06lx", c->if_prefix, i);
	r->sbx4.s_addr = htonl(0x0a000000u | (uint32_t)(i * 4 + 2));
	r->sbx6.s6_addr[0] = 0xfd;
	r->sbx6.s6_addr[12] = (uint8_t)(i >> 24);
	r->sbx6.s6_addr[13] = (uint8_t)(i >> 16);
	r->sbx6.s6_addr[14] = (uint8_t)(i >> 8);
	r->sbx6.s6_addr[15] = (uint8_t)i;
	r->has_gw4 = r->has_gw6 = true;
	r->gw4.s_addr = htonl(ntohl(r->sbx4.s_addr) - 1);
	r->gw6 = r->sbx6;
	r->gw6.s6_addr[11] = 1;
}

/*
 * Time N add/del pairs in-process, the nft part of one run's setup and teardown: once with a
 * connection per call (fw_run_add/fw_run_del), once over one reused connection.
 */
static int do_bench(const struct fw_config *c, const char *count)
{
	char *end;
	unsigned long n = strtoul(count, &end, 10);
	struct fw_conn *conn = NULL;
	struct wd_err err;

	if (*end || n == 0 || n > 100000) {
		fprintf(stderr, "warden nft bench-runs: N must be 1..100000\n");
		return WD_EXIT_USAGE;
	}
	wd_err_clear(&err);
	for (int pass = 0; pass < 2; pass++) {
		uint64_t add_ns = 0, del_ns = 0, t0, t1, t2;
		int ret = pass ? fw_conn_open(&conn, &err) : 0;

		for (unsigned long i = 0; !ret && i < n; i++) {
			struct fw_run r;

			bench_run(c, i, &r);
			t0 = wd_mono_ns();
			ret = pass ? fw_conn_run_add(conn, c, &r, &err) : fw_run_add(c, &r, &err);
			t1 = wd_mono_ns();
			if (!ret)
				ret = pass ? fw_conn_run_del(conn, c, &r, &err)
					   : fw_run_del(c, &r, &err);
			t2 = wd_mono_ns();
			add_ns += t1 - t0;
			del_ns += t2 - t1;
		}
		t0 = wd_mono_ns();
		fw_conn_close(conn);
		conn = NULL;
		t1 = wd_mono_ns();
		if (ret < 0)
			return fail("bench-runs", &err, ret);
		printf("%lu runs, %s: run-add mean %.1f us, run-del mean %.1f us", n,
		       pass ? "one reused connection" : "a connection per call",
		       (double)add_ns / (double)n / 1000.0, (double)del_ns / (double)n / 1000.0);
		if (pass)
			printf(" (closing it: %.1f ms)", (double)(t1 - t0) / 1e6);
		printf("\n");
	}
	return WD_EXIT_OK;
}

enum nft_verb { V_RENDER, V_AUDIT, V_INSTALL, V_UNINSTALL, V_RUN_ADD, V_RUN_DEL, V_BENCH };

static const struct {
	const char *name;
	enum nft_verb verb;
	int npos;
} nft_verbs[] = {
    {"render", V_RENDER, 0},	   {"audit", V_AUDIT, 0},     {"install", V_INSTALL, 0},
    {"uninstall", V_UNINSTALL, 0}, {"run-add", V_RUN_ADD, 1}, {"run-del", V_RUN_DEL, 1},
    {"bench-runs", V_BENCH, 1},
};

int cmd_nft(int argc, char **argv)
{
	struct nft_opts o = {0};
	const char *pos[1] = {NULL};
	struct fw_config c;
	struct fw_run r;
	struct wd_err err;
	int idx = -1, ret;

	if (cli_wants_help(argc, argv)) {
		usage(stdout);
		return WD_EXIT_OK;
	}
	if (argc < 2) {
		usage(stderr);
		return WD_EXIT_USAGE;
	}
	for (size_t i = 0; i < WD_ARRAY_SIZE(nft_verbs); i++)
		if (!strcmp(argv[1], nft_verbs[i].name))
			idx = (int)i;
	if (idx < 0) {
		wd_say(stderr, "warden nft: unknown command %s", argv[1]);
		usage(stderr);
		return WD_EXIT_USAGE;
	}
	if (parse_opts(argc, argv, &o, pos, nft_verbs[idx].npos) < 0)
		return WD_EXIT_USAGE;
	o.ifname = o.count = pos[0];
	if ((o.v4 || o.v6 || o.gw4 || o.gw6) && nft_verbs[idx].verb != V_RUN_ADD &&
	    nft_verbs[idx].verb != V_RUN_DEL) {
		wd_say(stderr,
		       "warden nft %s: --v4/--v6/--gw4/--gw6 only apply to run-add and run-del",
		       argv[1]);
		return WD_EXIT_USAGE;
	}
	if (o.json && nft_verbs[idx].verb != V_AUDIT) {
		wd_say(stderr, "warden nft %s: --json only applies to audit", argv[1]);
		return WD_EXIT_USAGE;
	}
	if (o.rootless && nft_verbs[idx].verb != V_AUDIT && nft_verbs[idx].verb != V_RENDER) {
		wd_say(stderr,
		       "warden nft %s: --rootless only applies to render and audit "
		       "(`warden run` installs a rootless run's table itself)",
		       argv[1]);
		return WD_EXIT_USAGE;
	}
	if (o.pid && (!o.rootless || nft_verbs[idx].verb != V_AUDIT)) {
		wd_say(stderr, "warden nft %s: --pid only applies to audit --rootless", argv[1]);
		return WD_EXIT_USAGE;
	}
	ret = load_config(o.config, o.rootless, &c);
	if (ret < 0)
		return ret == -ENOMEM ? WD_EXIT_INTERNAL : WD_EXIT_USAGE;
	wd_err_clear(&err);
	switch (nft_verbs[idx].verb) {
	case V_RENDER:
		return do_render(&c);
	case V_AUDIT:
		if (o.pid && enter_run(o.pid) < 0)
			return WD_EXIT_USAGE;
		return do_audit(&c, o.json);
	case V_INSTALL:
		ret = fw_install(&c, &err);
		break;
	case V_UNINSTALL:
		ret = fw_uninstall(&c, &err);
		break;
	case V_RUN_ADD:
	case V_RUN_DEL:
		if (parse_run(&o, &r) < 0)
			return WD_EXIT_USAGE;
		if (nft_verbs[idx].verb == V_RUN_ADD)
			ret = fw_run_add(&c, &r, &err);
		else
			ret = fw_run_del(&c, &r, &err);
		break;
	case V_BENCH:
		return do_bench(&c, o.count);
	}
	return ret < 0 ? fail(argv[1], &err, ret) : WD_EXIT_OK;
}

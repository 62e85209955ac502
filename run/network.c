/* run_network.c - the network stage of `warden run`: the run's network namespace and veth pair
 * (leased ready-made from the pool, else made now, netns/) and its nft set elements (nft/);
 * the table is installed when it is missing. And its undoing. */
#include "run/internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

/* Two launchers that find the table missing install it one after the other. */
#define NFT_LOCK "/run/warden/nft.lock"

static int nft_add(struct run *r)
{
	struct wd_err err;
	int ret;

	wd_err_clear(&err);
	ret = fw_conn_open(&r->network.fw, &err);
	if (ret)
		return run_fail(r, "network", "run as root (CAP_NET_ADMIN); `warden doctor`",
				"nftables: %s", err.msg);
	ret = fw_conn_run_add(r->network.fw, &r->network.fcfg, &r->network.fr, &err);
	if (ret == -ENOENT) {
		/* the table is missing: install it, under a lock so two launchers do not
		 * replace each other's fresh table (replacing drops every run's elements) */
		int lock;

		wd_mkdir_p("/run/warden", 0755);
		lock = open(NFT_LOCK, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (lock >= 0)
			flock(lock, LOCK_EX);
		wd_err_clear(&err);
		ret = fw_conn_run_add(r->network.fw, &r->network.fcfg, &r->network.fr, &err);
		if (ret == -ENOENT) {
			wd_err_clear(&err);
			ret = fw_install(&r->network.fcfg, &err);
			if (!ret)
				ret = fw_conn_run_add(r->network.fw, &r->network.fcfg,
						      &r->network.fr, &err);
		}
		if (lock >= 0)
			close(lock);
	}
	if (ret)
		return run_fail(r, "network", "`warden nft audit` and `warden doctor`",
				"adding the run's nft elements: %s",
				err.msg[0] ? err.msg : strerror(-ret));
	r->network.fw_added = true;
	return 0;
}

void run_network_facts(struct run *r)
{
	inet_ntop(AF_INET, &r->network.net.addr.host4, r->network.host4, sizeof(r->network.host4));
	inet_ntop(AF_INET6, &r->network.net.addr.host6, r->network.host6, sizeof(r->network.host6));
	inet_ntop(AF_INET, &r->network.net.addr.sbx4, r->rec.sbx4, sizeof(r->rec.sbx4));
	inet_ntop(AF_INET6, &r->network.net.addr.sbx6, r->rec.sbx6, sizeof(r->rec.sbx6));
	snprintf(r->rec.ifname, sizeof(r->rec.ifname), "%s", r->network.net.ifname);
	memset(&r->network.fr, 0, sizeof(r->network.fr));
	snprintf(r->network.fr.ifname, sizeof(r->network.fr.ifname), "%s", r->network.net.ifname);
	r->network.fr.has_v4 = r->rec.sbx4[0] != '\0';
	r->network.fr.sbx4 = r->network.net.addr.sbx4;
	r->network.fr.has_v6 = r->rec.sbx6[0] != '\0';
	r->network.fr.sbx6 = r->network.net.addr.sbx6;
	/* the run reaches the host only at these: the gateway's ports there */
	snprintf(r->rec.host4, sizeof(r->rec.host4), "%s", r->network.host4);
	snprintf(r->rec.host6, sizeof(r->rec.host6), "%s", r->network.host6);
	r->network.fr.has_gw4 = r->network.fr.has_v4;
	r->network.fr.gw4 = r->network.net.addr.host4;
	r->network.fr.has_gw6 = r->network.fr.has_v6;
	r->network.fr.gw6 = r->network.net.addr.host6;
}

/* The network is known: its facts, recorded in the run's state. */
static int network_known(struct run *r)
{
	run_network_facts(r);
	return run_state_save(r);
}

/* run_pool_lease()'s callback: the leased network goes into the run's state before it
 * leaves the pool, so that a crash from here on is cleaned up like any dead run's. */
static int record_leased(void *arg, const struct netns_run *net)
{
	struct run *r = arg;

	(void)net; /* it is r->network.net */
	return network_known(r);
}

int run_network_up(struct run *r)
{
	struct wd_err err;
	int ret;

	if (r->network.pool_size) {
		wd_err_clear(&err);
		ret = run_pool_lease(RUN_POOL_DIR, &r->network.ncfg, &r->network.fcfg,
				     record_leased, r, &r->network.net, &err);
		if (!ret) {
			/* its nft elements were added when it was made */
			r->network.pooled = true;
			r->network.fw_added = true;
			run_note(r, "network: %s, ready-made (from the pool)",
				 r->network.net.ifname);
			return 0;
		}
		if (ret != -ENOENT)
			run_note(r, "network: a pooled network was refused (%s); building one",
				 err.msg[0] ? err.msg : strerror(-ret));
	}
	wd_err_clear(&err);
	ret = netns_run_create(&r->network.ncfg, &r->network.net, &err);
	if (ret)
		return run_fail(r, "network",
				"run as root; `warden doctor` checks namespaces and veth", "%s",
				err.msg[0] ? err.msg : strerror(-ret));
	network_known(r);
	run_note(r, "network: %s, made for this run", r->network.net.ifname);
	return nft_add(r);
}

/* A pooled network failed the end-to-end check: its elements may be gone (the table was
 * replaced since it was made). Add them again (adding an existing element is no error);
 * the caller checks once more. Return: 0, or 125 (printed). */
int run_network_refresh(struct run *r)
{
	run_note(r, "network: the pooled %s failed the check; adding its nft elements again",
		 r->network.net.ifname);
	r->network.pooled = false; /* once */
	return nft_add(r);
}

void run_network_down(struct run *r)
{
	struct wd_err err;

	if (r->network.fw_added) {
		wd_err_clear(&err);
		if ((!r->network.fw && fw_conn_open(&r->network.fw, &err)) ||
		    fw_conn_run_del(r->network.fw, &r->network.fcfg, &r->network.fr, &err))
			wd_say(stderr, "warden run: teardown: nft: %s", err.msg);
		r->network.fw_added = false;
	}
	if (r->network.net.live) {
		wd_err_clear(&err);
		if (netns_run_destroy(&r->network.ncfg, &r->network.net, &err))
			wd_say(stderr, "warden run: teardown: network: %s", err.msg);
	}
}

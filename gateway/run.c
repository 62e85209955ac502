/* run.c - the gateway's table of runs: registration from the control socket,
 * attribution of a connection or query by its ingress address pair, the
 * run's compiled policy and synthetic addresses, and the SSRF guard. Runs are
 * indexed by sandbox address (a hash of chains) for attribution. Runs are
 * reference-counted: an unregistered run lives on until its last connection
 * or pending query lets go of it. */
#include "gateway/gw_internal.h"

#include <errno.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* the address index: sandbox address -> run (FNV-1a over the address bytes) */
static size_t addr_bucket(const struct gw_addr *a)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < gw_addr_len(a->family); i++)
		h = (h ^ a->a[i]) * 16777619u;
	return h & (GW_RUN_HASH - 1);
}

static struct gw_addr *sb_of(struct gw_run *r, int fam)
{
	return fam ? &r->sb6 : &r->sb4;
}

static void index_add(struct gw *g, struct gw_run *r)
{
	for (int f = 0; f < 2; f++) {
		struct gw_run **head;

		if (!sb_of(r, f)->family)
			continue;
		head = &g->run_hash[f][addr_bucket(sb_of(r, f))];
		r->hnext[f] = *head;
		*head = r;
	}
}

static void index_del(struct gw *g, struct gw_run *r)
{
	for (int f = 0; f < 2; f++) {
		if (!sb_of(r, f)->family)
			continue;
		for (struct gw_run **pp = &g->run_hash[f][addr_bucket(sb_of(r, f))]; *pp;
		     pp = &(*pp)->hnext[f])
			if (*pp == r) {
				*pp = r->hnext[f];
				break;
			}
		r->hnext[f] = NULL;
	}
}

struct gw_run *gw_run_find_sandbox(struct gw *g, const struct gw_addr *a)
{
	int f;

	if (a->family != AF_INET && a->family != AF_INET6)
		return NULL;
	f = a->family == AF_INET6;
	for (struct gw_run *r = g->run_hash[f][addr_bucket(a)]; r; r = r->hnext[f])
		if (gw_addr_eq(sb_of(r, f), a))
			return r;
	return NULL;
}

struct gw_run *gw_run_find_ingress(struct gw *g, const struct gw_addr *local,
				   const struct gw_addr *peer)
{
	struct gw_run *r;

	if (local->family != peer->family)
		return NULL;
	r = gw_run_find_sandbox(g, peer);
	if (r && gw_addr_eq(local, local->family == AF_INET ? &r->host4 : &r->host6))
		return r;
	return NULL;
}

struct gw_run *gw_run_find_id(struct gw *g, const char *id)
{
	for (struct gw_run *r = g->runs; r; r = r->next)
		if (!strcmp(r->id, id))
			return r;
	return NULL;
}

int gw_run_set_policy(struct gw_run *r, const struct gw_ctl_req *req, char *why, size_t why_size)
{
	struct policy_diags d;
	struct wd_policy *p = NULL;
	const char *name = req->policy_name[0] ? req->policy_name : "policy";
	int ret;

	policy_diags_init(&d);
	ret = policy_parse(req->policy, req->policy_len, name, &p, &d);
	if (ret) {
		struct wd_buf b = WD_BUF_INIT;

		policy_diags_sort(&d);
		if (d.n && !policy_diag_format(&d, 0, &b))
			snprintf(why, why_size, "invalid policy: %s", wd_buf_cstr(&b));
		else
			snprintf(why, why_size, "invalid policy: %s", strerror(-ret));
		wd_buf_free(&b);
		policy_diags_free(&d);
		return ret;
	}
	policy_diags_free(&d);
	policy_free(r->policy);
	r->policy = p;
	snprintf(r->policy_name, sizeof(r->policy_name), "%s", name);
	return 0;
}

static bool in_pool(struct gw *g, int idx, const struct gw_addr *a)
{
	return gw_prefix_contains(&g->own_net[idx], g->own_prefix[idx], a);
}

int gw_run_register(struct gw *g, const struct gw_ctl_req *req, uid_t uid, char *why,
		    size_t why_size)
{
	struct gw_run *r;
	int ret;

	if (gw_run_find_id(g, req->id)) {
		snprintf(why, why_size, "run %s is already registered", req->id);
		return -EEXIST;
	}
	if ((req->host4.family &&
	     (!in_pool(g, 0, &req->host4) || !in_pool(g, 0, &req->sandbox4))) ||
	    (req->host6.family &&
	     (!in_pool(g, 1, &req->host6) || !in_pool(g, 1, &req->sandbox6)))) {
		snprintf(why, why_size, "addresses must lie in pools.runs_v4 (%s) / runs_v6 (%s)",
			 g->conf.pool_v4, g->conf.pool_v6);
		return -EINVAL;
	}
	for (r = g->runs; r; r = r->next) {
		if (!strcmp(r->ifname, req->ifname) ||
		    (req->sandbox4.family && gw_addr_eq(&r->sb4, &req->sandbox4)) ||
		    (req->host4.family && gw_addr_eq(&r->host4, &req->host4)) ||
		    (req->sandbox6.family && gw_addr_eq(&r->sb6, &req->sandbox6)) ||
		    (req->host6.family && gw_addr_eq(&r->host6, &req->host6))) {
			snprintf(why, why_size, "interface or addresses already belong to run %s",
				 r->id);
			return -EEXIST;
		}
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	strcpy(r->id, req->id);
	strcpy(r->ifname, req->ifname);
	r->uid = uid;
	r->host4 = req->host4;
	r->sb4 = req->sandbox4;
	r->host6 = req->host6;
	r->sb6 = req->sandbox6;
	r->refs = 1;
	ret = gw_synth_init(&r->synth, g->conf.synth_v4, g->conf.synth_v6, g->lim.synth_per_run,
			    gw_rng_next(&g->rng));
	if (ret) {
		snprintf(why, why_size, "bad synthetic pools");
		free(r);
		return ret;
	}
	ret = gw_run_set_policy(r, req, why, why_size);
	if (ret) {
		gw_synth_free(&r->synth);
		free(r);
		return ret;
	}
	r->next = g->runs;
	g->runs = r;
	g->nruns++;
	index_add(g, r);
	return 0;
}

static void run_free(struct gw_run *r)
{
	policy_free(r->policy);
	gw_synth_free(&r->synth);
	free(r);
}

void gw_run_put(struct gw *g, struct gw_run *r)
{
	if (r && --r->refs == 0) {
		gw_auditrl_run_end(g, r); /* what its last connections left uncounted */
		run_free(r);
	}
}

void gw_run_unregister(struct gw *g, struct gw_run *r)
{
	if (r->dead)
		return;
	gw_udplog_run_end(g, r);
	gw_auditrl_run_end(g, r);
	for (struct gw_run **pp = &g->runs; *pp; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			g->nruns--;
			break;
		}
	index_del(g, r);
	r->dead = true;
	r->next = NULL;
	gw_run_put(g, r);
}

int gw_run_name_allowed(const struct gw_run *r, const char *name)
{
	const struct wd_policy *p = r->policy;

	for (size_t i = 0; p && i < p->nrules; i++) {
		int m;

		if (p->rules[i].kind == POLICY_RULE_CIDR)
			continue;
		m = policy_match(p, name, p->rules[i].ports[0]);
		if (m >= 0)
			return m;
	}
	return -ENOENT;
}

/* the host's own addresses, refreshed at most every 2 s */
static void refresh_local(struct gw *g)
{
	struct ifaddrs *ifa = NULL;
	size_t n = 0;
	struct gw_addr *v;

	if (g->local && g->now - g->local_at < 2000000000ull)
		return;
	if (getifaddrs(&ifa))
		return;
	for (struct ifaddrs *i = ifa; i; i = i->ifa_next)
		n++;
	v = calloc(n ? n : 1, sizeof(*v));
	if (v) {
		size_t k = 0;

		for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
			if (!i->ifa_addr || (i->ifa_addr->sa_family != AF_INET &&
					     i->ifa_addr->sa_family != AF_INET6))
				continue;
			if (!gw_addr_from_sa((const struct sockaddr_storage *)(void *)i->ifa_addr,
					     &v[k], NULL))
				k++;
		}
		free(g->local);
		g->local = v;
		g->nlocal = k;
		g->local_at = g->now;
	}
	freeifaddrs(ifa);
}

bool gw_addr_refused(struct gw *g, const struct gw_run *r, const struct gw_addr *a, uint16_t port,
		     char *why, size_t why_size)
{
	enum gw_addr_class c = gw_addr_classify(a);
	char txt[INET6_ADDRSTRLEN];

	if (c == GW_ADDR_PUBLIC) {
		for (int i = 0; i < 4; i++)
			if (gw_prefix_contains(&g->own_net[i], g->own_prefix[i], a))
				c = GW_ADDR_GATEWAY;
	}
	if (c == GW_ADDR_PUBLIC) {
		refresh_local(g);
		for (size_t i = 0; i < g->nlocal; i++)
			if (gw_addr_eq(&g->local[i], a))
				c = GW_ADDR_GATEWAY;
	}
	if (c == GW_ADDR_PUBLIC)
		return false;
	if (r->policy && policy_match_addr(r->policy, a->family, a->a, port) >= 0)
		return false;
	snprintf(why, why_size, "%s is a %s address", gw_addr_str(a, txt, sizeof(txt)),
		 gw_addr_class_name(c));
	return true;
}

/* run.c - the gateway's table of runs: registration from the control socket,
 * attribution of a connection or query by its ingress address pair, the
 * run's compiled policy and synthetic addresses, and the SSRF guard. Runs are
 * indexed by sandbox address (a wd_htable per family, under the keyed hash) for
 * attribution. Runs are reference-counted: an unregistered run lives on until its
 * last connection or pending query lets go of it. */
#include "gateway/decide.h"
#include "gateway/gw_internal.h"

#include <errno.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct gw_addr *sb_of(struct gw_run *r, int fam)
{
	return fam ? &r->sb6 : &r->sb4;
}

static uint64_t addr_hash(const struct gw_addr *a)
{
	return wd_hash(a->a, gw_addr_len(a->family));
}

static bool run_has_sandbox(const void *item, const void *key)
{
	const struct gw_run *r = item;
	const struct gw_addr *a = key;

	return gw_addr_eq(a->family == AF_INET6 ? &r->sb6 : &r->sb4, a);
}

static void index_del(struct gw *g, struct gw_run *r)
{
	for (int f = 0; f < 2; f++)
		if (sb_of(r, f)->family)
			(void)wd_htable_remove(&g->run_index[f], addr_hash(sb_of(r, f)), r);
}

/* Return: 0, or -ENOMEM (then @r is in neither index). */
static int index_add(struct gw *g, struct gw_run *r)
{
	for (int f = 0; f < 2; f++) {
		if (!sb_of(r, f)->family)
			continue;
		if (wd_htable_insert(&g->run_index[f], addr_hash(sb_of(r, f)), r)) {
			index_del(g, r);
			return -ENOMEM;
		}
	}
	return 0;
}

struct gw_run *gw_run_find_sandbox(struct gw *g, const struct gw_addr *a)
{
	if (a->family != AF_INET && a->family != AF_INET6)
		return NULL;
	return wd_htable_find(&g->run_index[a->family == AF_INET6], addr_hash(a), run_has_sandbox,
			      a);
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
	if (!ret && index_add(g, r)) {
		snprintf(why, why_size, "out of memory");
		policy_free(r->policy);
		ret = -ENOMEM;
	}
	if (ret) {
		gw_synth_free(&r->synth);
		free(r);
		return ret;
	}
	r->next = g->runs;
	g->runs = r;
	g->nruns++;
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

void gw_ssrf_env(struct gw *g, struct gw_ssrf_env *env)
{
	refresh_local(g);
	memcpy(env->own_net, g->own_net, sizeof(env->own_net));
	memcpy(env->own_prefix, g->own_prefix, sizeof(env->own_prefix));
	env->local = g->local;
	env->nlocal = g->nlocal;
}

/* run.c - the gateway's table of runs: registration from the control socket,
 * attribution of a connection or query by its ingress address pair, the
 * run's synthetic addresses, its users' accounts, and what the SSRF guard (decide.c) needs
 * to know of this host. The run's policy under the host's ceiling is runpolicy.c's, the
 * budgets (connections, descriptors, DNS queries) runlimit.c's. Runs are
 * indexed by sandbox address (a wd_htable per family, under the keyed hash) for
 * attribution. Runs are reference-counted: an unregistered run lives on until its
 * last connection or pending query lets go of it. */
#include "gateway/run.h"
#include "gateway/decide.h"

#include <errno.h>
#include <grp.h>
#ifdef _WIN32
#include <iphlpapi.h>
#else
#include <ifaddrs.h>
#include <sys/resource.h>
#endif
#include <pwd.h>
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

static void index_del(struct gw_runs *t, struct gw_run *r)
{
	for (int f = 0; f < 2; f++)
		if (sb_of(r, f)->family)
			(void)wd_htable_remove(&t->index[f], addr_hash(sb_of(r, f)), r);
}

/* Return: 0, or -ENOMEM (then @r is in neither index). */
static int index_add(struct gw_runs *t, struct gw_run *r)
{
	for (int f = 0; f < 2; f++) {
		if (!sb_of(r, f)->family)
			continue;
		if (wd_htable_insert(&t->index[f], addr_hash(sb_of(r, f)), r)) {
			index_del(t, r);
			return -ENOMEM;
		}
	}
	return 0;
}

struct gw_run *gw_run_find_sandbox(struct gw_runs *t, const struct gw_addr *a)
{
	if (a->family != AF_INET && a->family != AF_INET6)
		return NULL;
	return wd_htable_find(&t->index[a->family == AF_INET6], addr_hash(a), run_has_sandbox, a);
}

struct gw_run *gw_run_find_ingress(struct gw_runs *t, const struct gw_addr *local,
				   const struct gw_addr *peer)
{
	struct gw_run *r;

	if (local->family != peer->family)
		return NULL;
	r = gw_run_find_sandbox(t, peer);
	if (r && gw_addr_eq(local, local->family == AF_INET ? &r->host4 : &r->host6))
		return r;
	return NULL;
}

struct gw_run *gw_run_find_id(struct gw_runs *t, const char *id)
{
	for (struct gw_run *r = t->list; r; r = r->next)
		if (!strcmp(r->id, id))
			return r;
	return NULL;
}

void gw_run_policy_changed(struct gw_runs *t, struct gw_run *r)
{
	if (t->on_policy)
		t->on_policy(t->on_policy_ctx, r);
}

/* @uid's account (made on first use), with one more reference; NULL: -ENOMEM */
static struct gw_user *user_get(struct gw_runs *t, uid_t uid)
{
	struct gw_user *u;

	for (u = t->users; u; u = u->next)
		if (u->uid == uid)
			break;
	if (!u) {
		u = calloc(1, sizeof(*u));
		if (!u)
			return NULL;
		u->uid = uid;
		u->next = t->users;
		t->users = u;
	}
	u->refs++;
	return u;
}

static void user_put(struct gw_runs *t, struct gw_user *u)
{
	if (!u || --u->refs)
		return;
	for (struct gw_user **pp = &t->users; *pp; pp = &(*pp)->next)
		if (*pp == u) {
			*pp = u->next;
			break;
		}
	free(u);
}

/* a register the ceiling's cap on runs refuses: audited, with the reason */
static void audit_refused(struct gw_runs *t, const struct gw_ctl_req *req, uid_t uid,
			  const char *why)
{
	struct gw_audit_acct acct = {.id = req->id, .policy = ""};
	struct audit_event ev = {
	    .type = AUDIT_TYPE_RUN,
	    .action = "run.gateway-register",
	    .resource = req->ifname,
	    .allowed = false,
	    .reason = why,
	    .has = AUDIT_HAS_UID,
	    .uid = uid,
	};

	gw_audit(t->audit, &acct, &ev);
}

static bool in_pool(struct gw_runs *t, int idx, const struct gw_addr *a)
{
	return gw_prefix_contains(&t->own_net[idx], t->own_prefix[idx], a);
}

/* a proxy-mode gateway's run (conf.h): its clients are this machine's loopback ones, so its
 * addresses are loopback ones, the gateway side the listen address; and it serves one run at
 * a time, since two runs' clients could not be told apart */
static int proxy_run_ok(struct gw_runs *t, const struct gw_ctl_req *req, char *why, size_t why_size)
{
	const char *listen[2] = {t->conf->listen_v4, t->conf->listen_v6};
	const struct gw_addr *host[2] = {&req->host4, &req->host6};
	const struct gw_addr *sb[2] = {&req->sandbox4, &req->sandbox6};

	if (t->list) {
		snprintf(why, why_size,
			 "a proxy-mode gateway serves one run at a time; run %s is registered",
			 t->list->id);
		return -EBUSY;
	}
	for (int i = 0; i < 2; i++) {
		struct gw_addr want = {0};

		if (!host[i]->family)
			continue;
		if (!listen[i][0] || gw_addr_parse(listen[i], &want) ||
		    !gw_addr_eq(host[i], &want) || gw_addr_classify(sb[i]) != GW_ADDR_LOOPBACK) {
			snprintf(why, why_size,
				 "in proxy mode a run's gateway address is the listen address (%s) "
				 "and its sandbox address a loopback one",
				 listen[i][0] ? listen[i] : "none of this family");
			return -EINVAL;
		}
	}
	return 0;
}

int gw_run_register(struct gw_runs *t, const struct gw_ctl_req *req, uid_t uid, char *why,
		    size_t why_size)
{
	struct gw_run *r;
	int ret;

	if (gw_run_find_id(t, req->id)) {
		snprintf(why, why_size, "run %s is already registered", req->id);
		return -EEXIST;
	}
	if (t->conf->mode == WD_GW_PROXY) {
		ret = proxy_run_ok(t, req, why, why_size);
		if (ret)
			return ret;
	} else if ((req->host4.family &&
		    (!in_pool(t, 0, &req->host4) || !in_pool(t, 0, &req->sandbox4))) ||
		   (req->host6.family &&
		    (!in_pool(t, 1, &req->host6) || !in_pool(t, 1, &req->sandbox6)))) {
		snprintf(why, why_size, "addresses must lie in pools.runs_v4 (%s) / runs_v6 (%s)",
			 t->conf->pool_v4, t->conf->pool_v6);
		return -EINVAL;
	}
	for (r = t->list; r; r = r->next) {
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
	r->acct.id = r->id;
	r->acct.policy = r->policy_name;
	r->acct.uid = (int64_t)uid;
	gw_run_user_name(uid, r->user_name, sizeof(r->user_name));
	r->acct.user = r->user_name[0] ? r->user_name : NULL;
	r->acct.mcp = &r->mcp;
	r->learn = req->learn;
	r->asker = req->asker;
	r->acct.learn = req->learn;
	r->shadow = req->shadow;
	r->acct.shadow = req->shadow;
	r->ceiling = t->conf->ceiling;
	ret = gw_synth_init(&r->synth, t->conf->synth_v4, t->conf->synth_v6, t->lim->synth_per_run,
			    gw_rng_next(&t->ev->rng));
	if (ret) {
		snprintf(why, why_size, "bad synthetic pools");
		free(r);
		return ret;
	}
	ret = gw_run_set_policy(r, req, why, why_size);
	if (!ret && !(r->user = user_get(t, uid))) {
		snprintf(why, why_size, "out of memory");
		ret = -ENOMEM;
	}
	if (!ret && r->policy->caps[POLICY_CAP_RUNS] &&
	    r->user->runs >= r->policy->caps[POLICY_CAP_RUNS]) {
		snprintf(why, why_size,
			 "uid %u has %u runs registered; the host's ceiling %s allows %llu at once",
			 (unsigned)uid, r->user->runs, r->policy->caps_from[POLICY_CAP_RUNS],
			 (unsigned long long)r->policy->caps[POLICY_CAP_RUNS]);
		audit_refused(t, req, uid, why);
		ret = -EUSERS;
	}
	if (!ret && index_add(t, r)) {
		snprintf(why, why_size, "out of memory");
		ret = -ENOMEM;
	}
	if (ret) {
		user_put(t, r->user);
		policy_free(r->policy);
		gw_synth_free(&r->synth);
		free(r);
		return ret;
	}
	r->user->runs++;
	r->next = t->list;
	t->list = r;
	t->n++;
	return 0;
}

static void run_free(struct gw_runs *t, struct gw_run *r)
{
	gw_toolcalls_free(&r->mcp);
	gw_learn_free(&r->learned);
	gw_uploads_free(&r->up);
	user_put(t, r->user);
	policy_free(r->policy);
	gw_synth_free(&r->synth);
	gw_dnsb_free(&r->dnsbudget);
	free(r);
}

void gw_run_put(struct gw_runs *t, struct gw_run *r)
{
	if (r && --r->refs == 0) {
		gw_audit_summaries(t->audit,
				   &r->acct); /* what its last connections left uncounted */
		run_free(t, r);
	}
}

void gw_run_unregister(struct gw_runs *t, struct gw_run *r)
{
	if (r->dead)
		return;
	if (t->on_end)
		t->on_end(t->on_end_ctx, r); /* the drop log's summaries (gw.c wires it) */
	gw_audit_summaries(t->audit, &r->acct);
	for (struct gw_run **pp = &t->list; *pp; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			t->n--;
			break;
		}
	index_del(t, r);
	if (r->user)
		r->user->runs--;
	r->dead = true;
	r->next = NULL;
	gw_run_put(t, r);
}

#ifdef _WIN32
/* the host's own addresses, refreshed at most every 2 s: every unicast address of every
 * adapter (GetAdaptersAddresses(), what getifaddrs() is elsewhere); when Windows says none the
 * last list stays */
static void refresh_local(struct gw_runs *t)
{
	ULONG len = 16384, r;
	IP_ADAPTER_ADDRESSES *all = NULL;
	size_t n = 0, k = 0;
	struct gw_addr *v;

	if (t->local && t->ev->now - t->local_at < 2000000000ull)
		return;
	for (int tries = 0; tries < 3; tries++) {
		free(all);
		all = malloc(len);
		if (!all)
			return;
		r = GetAdaptersAddresses(AF_UNSPEC,
					 GAA_FLAG_SKIP_ANYCAST | GAA_FLAG_SKIP_MULTICAST |
					     GAA_FLAG_SKIP_DNS_SERVER,
					 NULL, all, &len);
		if (r != ERROR_BUFFER_OVERFLOW)
			break;
	}
	if (r != NO_ERROR) {
		free(all);
		return;
	}
	for (IP_ADAPTER_ADDRESSES *a = all; a; a = a->Next)
		for (IP_ADAPTER_UNICAST_ADDRESS *u = a->FirstUnicastAddress; u; u = u->Next)
			n++;
	v = calloc(n ? n : 1, sizeof(*v));
	if (v) {
		for (IP_ADAPTER_ADDRESSES *a = all; a; a = a->Next)
			for (IP_ADAPTER_UNICAST_ADDRESS *u = a->FirstUnicastAddress; u;
			     u = u->Next) {
				struct sockaddr_storage ss = {0};
				const struct sockaddr *sa = u->Address.lpSockaddr;

				if (!sa ||
				    (sa->sa_family != AF_INET && sa->sa_family != AF_INET6) ||
				    u->Address.iSockaddrLength > (INT)sizeof(ss))
					continue;
				memcpy(&ss, sa, (size_t)u->Address.iSockaddrLength);
				if (!gw_addr_from_sa(&ss, &v[k], NULL))
					k++;
			}
		free(t->local);
		t->local = v;
		t->nlocal = k;
		t->local_at = t->ev->now;
	}
	free(all);
}
#else
/* the host's own addresses, refreshed at most every 2 s */
static void refresh_local(struct gw_runs *t)
{
	struct ifaddrs *ifa = NULL;
	size_t n = 0;
	struct gw_addr *v;

	if (t->local && t->ev->now - t->local_at < 2000000000ull)
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
		free(t->local);
		t->local = v;
		t->nlocal = k;
		t->local_at = t->ev->now;
	}
	freeifaddrs(ifa);
}
#endif

void gw_ssrf_env(struct gw_runs *t, struct gw_ssrf_env *env)
{
	refresh_local(t);
	memcpy(env->own_net, t->own_net, sizeof(env->own_net));
	memcpy(env->own_prefix, t->own_prefix, sizeof(env->own_prefix));
	env->local = t->local;
	env->nlocal = t->nlocal;
}

void gw_runs_audit_summaries(struct gw_runs *t)
{
	for (struct gw_run *r = t->list; r; r = r->next)
		gw_audit_summaries(t->audit, &r->acct);
	gw_audit_summaries(t->audit, NULL);
}

void gw_runs_conn_open(struct gw_runs *t, struct gw_run *r)
{
	r->refs++;
	r->conns++;
	t->nconns++;
	if (r->user)
		r->user->conns++;
}

void gw_runs_conn_close(struct gw_runs *t, struct gw_run *r)
{
	t->nconns--;
	r->conns--;
	if (r->user)
		r->user->conns--;
	gw_run_put(t, r);
}

int gw_runs_init(struct gw_runs *t, struct gw_ev *ev, struct gw_audit *audit,
		 const struct wd_gwconf *conf, const struct gw_limits *lim, struct wd_err *err)
{
	const char *pools[4] = {conf->pool_v4, conf->pool_v6, conf->synth_v4, conf->synth_v6};
	struct gw_fd_share share;
#ifndef _WIN32
	struct rlimit rl;
#endif
	uint64_t nofile;

	memset(t, 0, sizeof(*t));
	t->ev = ev;
	t->audit = audit;
	t->conf = conf;
	t->lim = lim;
	for (int i = 0; i < 4; i++)
		if (gw_cidr_parse(pools[i], &t->own_net[i], &t->own_prefix[i]))
			return wd_err_set(err, -EINVAL, "bad pool %s", pools[i]);
			/* the descriptors shared out: the relays' room, the control socket's bounds
			 */
#ifdef _WIN32
	nofile = 0; /* no descriptor limit to read: gw_fd_share()'s own bounds */
#else
	nofile = !getrlimit(RLIMIT_NOFILE, &rl) ? (uint64_t)rl.rlim_cur : 0;
	if (nofile == (uint64_t)RLIM_INFINITY)
		nofile = 0;
#endif
	gw_fd_share(nofile, lim, &share);
	t->fd_conns = share.conns;
	t->fd_pipes = share.pipes;
	t->ctl_max = share.ctl;
	t->ctl_per_uid = share.ctl_per_uid;
	return 0;
}

void gw_runs_free(struct gw_runs *t)
{
	while (t->list)
		gw_run_unregister(t, t->list);
	wd_htable_free(&t->index[0]);
	wd_htable_free(&t->index[1]);
	free(t->local);
	t->local = NULL;
}

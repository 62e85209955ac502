/* parent.c - warden-gateway's privileged parent after the handoff: it waits
 * for its worker, passes SIGTERM/SIGINT on, and applies the worker's run
 * updates to the nft table (one fixed-size struct gw_priv_run per request,
 * one struct gw_priv_reply per answer).
 *
 * Only this file calls nft/ (fw_conn_run_add/del over one reused netlink
 * connection); it is linked into the warden-gateway executable, never into
 * wd_gateway, and runs only in the parent, which keeps its privileges. The
 * worker is another image (warden-gateway-worker, exec'd by main.c) that does
 * not contain this code nor map libnftnl/libmnl at all.
 *
 * The worker is not trusted: every message is checked (gw_priv_run_check()),
 * anything malformed or unexpected kills the worker (fail closed), the
 * interface must carry the configured prefix and the addresses must lie in
 * the configured run pools, and a run may only be removed with exactly the
 * facts it was added with. Elements the parent added are removed again when
 * the worker is gone.
 *
 * Daemon mode (GW_PRIV_NETNS_ADD, docs/gateway.md "Runs in a user's namespace"): the worker
 * forwards a user's network namespace and the client's control connection (both descriptors
 * attached). The parent trusts no uid the worker names: it reads the connection's credentials
 * itself (gw_priv_peer(): a connection accepted on the control socket, SO_PEERCRED), refuses a
 * request whose claimed uid or gid differ (a worker that lies) or whose connection holds a run
 * already, checks the namespace against that uid (gw_netns_check()), adopts it (netns_run_adopt():
 * a slot of the shared allocator, the veth with its peer in that namespace, addresses and routes
 * inside), adds the run's nft elements, makes the run's cgroup delegated to the user
 * (cgroup.c), writes a record of it all under GW_PARENT_RUNS_DIR, and answers with the facts.
 * RUN_DEL of such a run undoes every part. GW_PRIV_CGROUP_JOIN moves a process into such a run's
 * cgroup (gw_cgroup_join(): the run's uid as read off its connection, the run's namespace). At
 * start the parent reclaims the records of an earlier parent that is gone (elements, cgroups;
 * netns_gc() the veths and slots).
 *
 * The UDP relay (GW_PRIV_CT_GET, with or without --manage-nft): the worker asks for the original
 * destination of a redirected UDP flow by its reply tuple; the parent asks conntrack in its own
 * namespace (gw_ct_lookup(), where the table redirected the flow), or in a container run's
 * through the conntrack socket made there and handed in with --listen-fds, and answers only for a
 * flow from a run pool's address to the configured ports.udp whose original destination lies in a
 * synthetic pool (-EPERM otherwise): a narrow question, never a read of the flow's datagrams.
 */
#include "gateway/parent.h"
#include "audit/record.h"
#include "gateway/cgroup.h"
#include "gateway/ctmsg.h"
#include "gateway/gw.h"
#include "gateway/privsep.h"
#include "gateway/runrec.h"
#include "netns/netns.h"
#include "nft/nft.h"
#include "conf/host.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

_Static_assert(GW_CGROUP_PATH == GW_PRIV_CGROUP_SIZE, "a cgroup folder fits the reply");

/* one run the parent added: its nft elements, and in daemon mode its network and cgroup */
struct pentry {
	struct fw_run fr;
	bool adopted; /* a user's namespace: @net and @cg are this run's too */
	struct netns_run net;
	struct gw_cgroup cg;
	ino_t client; /* daemon mode: the control connection the run was plumbed for (its inode) */
	uid_t uid;    /* daemon mode: its user, as read off that connection */
	char id[GW_PRIV_ID_SIZE];  /* daemon mode: the run's id (its signed record names it) */
	struct audit_log_pos from; /* where the central log ended before the run's first line */
	bool has_from;
};

struct parent {
	const struct wd_gwconf *conf;
	struct fw_config fc;
	struct fw_conn *nl;
	struct pentry *runs; /* what we added */
	size_t n, cap;
	struct gw_addr pool[2];
	unsigned prefix[2];
	struct gw_addr synth[2]; /* the synthetic pools (family 0: not parsed: refuse lookups) */
	unsigned synth_prefix[2];
	int ct; /* the conntrack socket of the UDP relay's lookups, opened on first use */
	uint32_t ct_seq;
	struct netns_pool_config ncfg;
	bool ncfg_ok;
	const char *runs_dir;  /* the records of daemon-mode runs */
	struct audit_log *log; /* daemon mode: the central log, for the signed run records */
	struct audit_key *key; /* and the daemon's key that signs them */
};

/* copy @s into @why, cut to fit */
static void say(char *why, size_t size, const char *s)
{
	size_t n = strnlen(s, size - 1);

	memcpy(why, s, n);
	why[n] = '\0';
}

static struct pentry *find(struct parent *p, const char *ifname)
{
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->runs[i].fr.ifname, ifname))
			return &p->runs[i];
	return NULL;
}

static bool same(const struct fw_run *a, const struct fw_run *b)
{
	return a->has_v4 == b->has_v4 && a->has_v6 == b->has_v6 &&
	       (!a->has_v4 || (!memcmp(&a->sbx4, &b->sbx4, sizeof(a->sbx4)) &&
			       !memcmp(&a->gw4, &b->gw4, sizeof(a->gw4)))) &&
	       (!a->has_v6 || (!memcmp(&a->sbx6, &b->sbx6, sizeof(a->sbx6)) &&
			       !memcmp(&a->gw6, &b->gw6, sizeof(a->gw6))));
}

/* a checked message's facts, refused (-EINVAL, @why) outside the configuration */
static int facts(struct parent *p, const struct gw_priv_run *m, struct fw_run *r, char *why,
		 size_t size)
{
	struct gw_addr a4, a6, h4, h6;

	gw_priv_run_facts(m, &a4, &a6, &h4, &h6);
	memset(r, 0, sizeof(*r));
	snprintf(r->ifname, sizeof(r->ifname), "%s", m->ifname);
	if (strncmp(r->ifname, p->conf->if_prefix, strlen(p->conf->if_prefix))) {
		snprintf(why, size, "interface %s lacks the prefix %s", r->ifname,
			 p->conf->if_prefix);
		return -EINVAL;
	}
	if ((a4.family && (!gw_prefix_contains(&p->pool[0], p->prefix[0], &a4) ||
			   !gw_prefix_contains(&p->pool[0], p->prefix[0], &h4))) ||
	    (a6.family && (!gw_prefix_contains(&p->pool[1], p->prefix[1], &a6) ||
			   !gw_prefix_contains(&p->pool[1], p->prefix[1], &h6)))) {
		snprintf(why, size, "sandbox or gateway addresses outside pools.runs_v4/runs_v6");
		return -EINVAL;
	}
	r->has_v4 = r->has_gw4 = a4.family;
	r->has_v6 = r->has_gw6 = a6.family;
	memcpy(&r->sbx4, a4.a, 4);
	memcpy(&r->sbx6, a6.a, 16);
	memcpy(&r->gw4, h4.a, 4);
	memcpy(&r->gw6, h6.a, 16);
	return 0;
}

/* room for one more entry; Return: 0 or -ENOMEM */
static int grow(struct parent *p)
{
	size_t cap = p->cap ? p->cap * 2 : 16;
	void *v;

	if (p->n < p->cap)
		return 0;
	v = realloc(p->runs, cap * sizeof(*p->runs));
	if (!v)
		return -ENOMEM;
	p->runs = v;
	p->cap = cap;
	return 0;
}

static int run_add(struct parent *p, const struct fw_run *r, char *why, size_t size)
{
	struct pentry *oe = find(p, r->ifname);
	struct fw_run *old = oe ? &oe->fr : NULL;
	struct wd_err err;
	int ret;

	if (oe && oe->adopted) {
		snprintf(why, size, "interface %s belongs to a run the gateway plumbed", r->ifname);
		return -EEXIST;
	}
	if (old && !same(old, r)) {
		snprintf(why, size, "interface %s is already registered with other addresses",
			 r->ifname);
		return -EEXIST;
	}
	if (!old && grow(p))
		return -ENOMEM;
	wd_err_clear(&err);
	if (!p->nl && (ret = fw_conn_open(&p->nl, &err))) {
		say(why, size, err.msg);
		return ret;
	}
	ret = fw_conn_run_add(p->nl, &p->fc, r, &err);
	if (ret) {
		say(why, size, err.msg[0] ? err.msg : strerror(-ret));
		return ret;
	}
	if (!old) {
		memset(&p->runs[p->n], 0, sizeof(p->runs[p->n]));
		p->runs[p->n++].fr = *r;
	}
	return 0;
}

/* the record of a daemon-mode run: where a later parent finds what to reclaim */
static void record_path(const struct parent *p, const char *ifname, char *out, size_t size)
{
	snprintf(out, size, "%s/%s", p->runs_dir, ifname);
}

/* a daemon-mode run's network, cgroup and record go (its elements went already); Return: 0 or
 * the first -errno (@why) */
static int undo_adopted(struct parent *p, struct pentry *e, char *why, size_t size)
{
	struct wd_err err;
	char path[PATH_MAX];
	int ret, r;

	wd_err_clear(&err);
	ret = netns_run_destroy(&p->ncfg, &e->net, &err);
	if (ret)
		say(why, size, err.msg);
	r = gw_cgroup_remove(&e->cg);
	if (r && !ret) {
		ret = r;
		snprintf(why, size, "removing the run's cgroup: %s", strerror(-r));
	}
	record_path(p, e->fr.ifname, path, sizeof(path));
	unlink(path);
	return ret;
}

/* sign_run() - a daemon-mode run that ended: its signed run.record into the central log
 * (audit_write_run_record(): its lines read back, rooted, signed). A record that cannot be
 * written is logged: the run is over, its lines stay chained. */
static void sign_run(struct parent *p, const struct pentry *e)
{
	struct audit_event ev = {0};
	struct wd_err err;

	if (!p->log || !p->key || !e->id[0])
		return;
	ev.run = e->id;
	ev.allowed = true;
	ev.mode = "daemon";
	ev.has = AUDIT_HAS_UID;
	ev.uid = e->uid;
	ev.resource = e->id;
	ev.reason = "the gateway daemon's signed record of the run's lines in its central log";
	clock_gettime(CLOCK_REALTIME, &ev.ts);
	wd_err_clear(&err);
	if (audit_write_run_record(p->log, &ev, p->key, e->has_from ? &e->from : NULL, &err))
		wd_log(WD_LOG_ERR, "run %s: no signed run record: %s", e->id, err.msg);
}

static int run_del(struct parent *p, const struct fw_run *r, char *why, size_t size)
{
	struct pentry *oe = find(p, r->ifname);
	struct wd_err err;
	int ret;

	if (!oe || !same(&oe->fr, r)) {
		snprintf(why, size, "no run on %s with these addresses was added", r->ifname);
		return -ENOENT;
	}
	wd_err_clear(&err);
	ret = fw_conn_run_del(p->nl, &p->fc, r, &err);
	if (ret) {
		say(why, size, err.msg[0] ? err.msg : strerror(-ret));
		if (!oe->adopted)
			return ret;
	}
	/* a plumbed run's network and cgroup go even when its elements could not */
	if (oe->adopted) {
		int r2 = undo_adopted(p, oe, why, size);

		ret = ret ? ret : r2;
		sign_run(p, oe);
	}
	*oe = p->runs[--p->n];
	return ret;
}

/* the facts of an adopted network as nft elements (the launcher's run_network_facts()) */
static void net_facts(const struct netns_run *net, struct fw_run *fr)
{
	memset(fr, 0, sizeof(*fr));
	snprintf(fr->ifname, sizeof(fr->ifname), "%s", net->ifname);
	fr->has_v4 = fr->has_gw4 = true;
	fr->sbx4 = net->addr.sbx4;
	fr->gw4 = net->addr.host4;
	fr->has_v6 = fr->has_gw6 = true;
	fr->sbx6 = net->addr.sbx6;
	fr->gw6 = net->addr.host6;
}

/* write the record of @e (owner: this process; runrec.h); Return: 0 or -errno */
static int record_write(const struct parent *p, const struct pentry *e)
{
	struct gw_runrec rec;
	int ret;

	memset(&rec, 0, sizeof(rec));
	ret = wd_proc_stat(0, &rec.start, NULL);
	if (ret)
		return ret;
	rec.pid = getpid();
	snprintf(rec.ifname, sizeof(rec.ifname), "%s", e->fr.ifname);
	rec.sbx4 = e->fr.sbx4;
	rec.gw4 = e->fr.gw4;
	rec.sbx6 = e->fr.sbx6;
	rec.gw6 = e->fr.gw6;
	memcpy(rec.cg, e->cg.dir, sizeof(rec.cg));
	return gw_runrec_save(p->runs_dir, &rec);
}

/* who asked for @m: the credentials of the client's connection @client as the kernel says, the
 * same the worker claims, and a connection that holds no run yet. Return: 0, or -EPERM (@why) */
static int netns_client(struct parent *p, const struct gw_priv_netns *m, int client,
			struct ucred *cred, ino_t *ino, char *why, size_t size)
{
	struct stat st;
	int ret = gw_priv_peer(client, p->conf->control_path, cred, why, size);

	if (ret)
		return ret;
	if (cred->uid != m->uid || cred->gid != m->gid) {
		snprintf(why, size,
			 "the worker named uid %u gid %u, but the client's connection is uid %u "
			 "gid %u: refused",
			 (unsigned)m->uid, (unsigned)m->gid, (unsigned)cred->uid,
			 (unsigned)cred->gid);
		wd_log(WD_LOG_WARN, "namespace request refused: %s", why);
		return -EPERM;
	}
	if (fstat(client, &st) < 0)
		return snprintf(why, size, "fstat: %s", strerror(errno)), -EPERM;
	for (size_t i = 0; i < p->n; i++)
		if (p->runs[i].adopted && p->runs[i].client == st.st_ino) {
			snprintf(why, size, "the client's connection holds run %s already",
				 p->runs[i].fr.ifname);
			return -EPERM;
		}
	*ino = st.st_ino;
	return 0;
}

/* a user's namespace plumbed: the checks, the network, the elements, the cgroup, the record;
 * @rep filled in. Return: 0, or a negative errno (@why; nothing is left) */
static int netns_add(struct parent *p, const struct gw_priv_netns *m, int fd, int client,
		     struct gw_priv_netns_reply *rep, char *why, size_t size)
{
	struct pentry e;
	struct policy_limits lim = {0};
	struct ucred cred;
	struct wd_err err;
	int ret;

	memset(&e, 0, sizeof(e));
	e.net.netns_fd = -1;
	e.adopted = true;
	if (!p->ncfg_ok) {
		snprintf(why, size, "bad pools.runs_v4 / runs_v6 in the gateway's configuration");
		return -EINVAL;
	}
	/* the uid is the kernel's word on the client's connection, never the worker's */
	ret = netns_client(p, m, client, &cred, &e.client, why, size);
	if (ret)
		return ret;
	/* the worker checked it; so does the side with the privilege */
	ret = gw_netns_check(fd, cred.uid, why, size);
	if (ret)
		return ret;
	if (grow(p))
		return -ENOMEM;
	wd_err_clear(&err);
	ret = netns_run_adopt(&p->ncfg, fd, &e.net, &err);
	if (ret) {
		snprintf(why, size, "plumbing the run's namespace: %.200s",
			 err.msg[0] ? err.msg : strerror(-ret));
		return ret;
	}
	net_facts(&e.net, &e.fr);
	if (!p->nl && (ret = fw_conn_open(&p->nl, &err))) {
		say(why, size, err.msg);
		goto fail_net;
	}
	ret = fw_conn_run_add(p->nl, &p->fc, &e.fr, &err);
	if (ret) {
		snprintf(why, size, "adding the run's nft elements: %.200s",
			 err.msg[0] ? err.msg : strerror(-ret));
		goto fail_net;
	}
	lim.memory_mb = m->memory_mb;
	lim.pids = m->pids;
	lim.cpu_milli = m->cpu_milli;
	e.uid = cred.uid;
	snprintf(e.id, sizeof(e.id), "%s", m->id);
	/* the run's lines come after this (its register is answered later): its record reads
	 * the log from here, not the whole of it (the central log is not capped) */
	e.has_from = p->log && audit_log_end(p->log, &e.from) == 0;
	ret = gw_cgroup_create(&e.cg, m->id, &lim, cred.uid, cred.gid, why, size);
	if (ret)
		goto fail_fw;
	ret = record_write(p, &e);
	if (ret) {
		snprintf(why, size, "recording the run in %s: %s", p->runs_dir, strerror(-ret));
		gw_cgroup_remove(&e.cg);
		goto fail_fw;
	}
	p->runs[p->n++] = e;
	snprintf(rep->ifname, sizeof(rep->ifname), "%s", e.fr.ifname);
	rep->flags = GW_PRIV_HAS_V4 | GW_PRIV_HAS_V6;
	memcpy(rep->v4, &e.fr.sbx4, 4);
	memcpy(rep->h4, &e.fr.gw4, 4);
	memcpy(rep->v6, &e.fr.sbx6, 16);
	memcpy(rep->h6, &e.fr.gw6, 16);
	for (int i = 0; i < GW_CGROUP_MAX && i < GW_PRIV_CGROUPS; i++)
		memcpy(rep->cgroup[i], e.cg.dir[i], sizeof(rep->cgroup[i])); /* zero-filled */
	return 0;
fail_fw:
	fw_conn_run_del(p->nl, &p->fc, &e.fr, &err);
fail_net:
	netns_run_destroy(&p->ncfg, &e.net, &err);
	return ret;
}

/* a process moved into a daemon-mode run's cgroup: the run's user's, in the run's namespace
 * (gw_cgroup_join()); Return: 0, or a negative errno (@why) */
static int cgroup_join(struct parent *p, const struct gw_priv_join *m, char *why, size_t size)
{
	struct pentry *e = find(p, m->ifname);

	if (!e || !e->adopted) {
		snprintf(why, size, "no run on %s was plumbed by the gateway", m->ifname);
		return -ENOENT;
	}
	return gw_cgroup_join(&e->cg, (pid_t)m->pid, e->uid, e->net.netns_fd, why, size);
}

/* one record of an earlier parent's: reclaimed when that parent is gone; a record that is not
 * whole and well-formed (gw_runrec_load()) is left alone, never reclaimed in part */
static void reclaim_one(struct parent *p, const char *name)
{
	char path[PATH_MAX];
	unsigned long long now = 0;
	struct gw_runrec rec;
	struct gw_cgroup cg;
	struct wd_err err;
	struct fw_run fr;
	int r;

	record_path(p, name, path, sizeof(path));
	r = gw_runrec_load(p->runs_dir, name, &rec);
	if (r == -EINVAL)
		wd_log(WD_LOG_WARN, "%s: not a run record; left alone", path);
	if (r)
		return;
	if (!wd_proc_stat(rec.pid, &now, NULL) && now == rec.start)
		return; /* its parent lives (another gateway): its own */
	memset(&fr, 0, sizeof(fr));
	snprintf(fr.ifname, sizeof(fr.ifname), "%s", rec.ifname);
	fr.has_v4 = fr.has_gw4 = fr.has_v6 = fr.has_gw6 = true;
	fr.sbx4 = rec.sbx4;
	fr.gw4 = rec.gw4;
	fr.sbx6 = rec.sbx6;
	fr.gw6 = rec.gw6;
	wd_err_clear(&err);
	if ((p->nl || !fw_conn_open(&p->nl, &err)) && fw_conn_run_del(p->nl, &p->fc, &fr, &err) &&
	    err.msg[0])
		wd_log(WD_LOG_DEBUG, "reclaiming %s: %s", rec.ifname, err.msg);
	memset(&cg, 0, sizeof(cg));
	memcpy(cg.dir, rec.cg, sizeof(cg.dir));
	gw_cgroup_remove(&cg);
	unlink(path);
	wd_log(WD_LOG_INFO, "reclaimed run %s of a gateway that is gone", rec.ifname);
}

/* at start: every record of a parent that is gone is reclaimed, then the stale slots
 * (netns_gc() deletes their veths) */
static void reclaim(struct parent *p)
{
	struct wd_err err;
	struct dirent *de;
	DIR *d;

	if (wd_mkdir_p(p->runs_dir, 0700))
		return;
	d = opendir(p->runs_dir);
	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			reclaim_one(p, de->d_name);
	if (d)
		closedir(d);
	wd_err_clear(&err);
	if (p->ncfg_ok && netns_gc(&p->ncfg, NULL, &err))
		wd_log(WD_LOG_WARN, "reclaiming the networks of runs that are gone: %s", err.msg);
}

/* in one of @net[2] / @prefix[2] (a family 0 entry holds nothing) */
static bool in_pools(const struct gw_addr *net, const unsigned *prefix, const struct gw_addr *a)
{
	for (int i = 0; i < 2; i++)
		if (net[i].family == a->family && gw_prefix_contains(&net[i], prefix[i], a))
			return true;
	return false;
}

/* GW_PRIV_CT_GET: the original destination of a redirected UDP flow (see the top of the file).
 * Return: 0 with *@dst and *@port, or a negative errno for the reply */
static int ct_get(struct parent *p, const struct gw_ct_tuple *reply, struct gw_addr *dst,
		  uint16_t *port)
{
	struct gw_ct_tuple orig;
	int r;

	if (reply->sport != p->conf->port_udp || !in_pools(p->pool, p->prefix, &reply->dst))
		return -EPERM;
	if (p->ct < 0) {
		p->ct = gw_ct_open();
		if (p->ct < 0) {
			r = p->ct;
			p->ct = -1;
			wd_log(WD_LOG_WARN, "conntrack socket: %s", strerror(-r));
			return r;
		}
	}
	r = gw_ct_lookup(p->ct, ++p->ct_seq, reply, &orig);
	if (r)
		return r;
	if (!gw_addr_eq(&orig.src, &reply->dst) || orig.sport != reply->dport ||
	    !in_pools(p->synth, p->synth_prefix, &orig.dst))
		return -EPERM;
	*dst = orig.dst;
	*port = orig.dport;
	return 0;
}

/* answer one GW_PRIV_CT_GET of @n bytes at @m. Return: 0, -EBADMSG, or the send's -errno */
static int serve_ct(struct parent *p, int sock, const struct gw_priv_ct *m, size_t n)
{
	struct gw_priv_ct_reply rep;
	struct gw_ct_tuple reply;
	struct gw_addr dst = {0};
	uint16_t port = 0;
	int ret;

	if (gw_priv_ct_check(m, n, &reply))
		return -EBADMSG;
	ret = ct_get(p, &reply, &dst, &port);
	if (ret < -4095 || ret > 0)
		ret = -EIO;
	if (gw_priv_ct_reply_encode(&rep, m->seq, ret, ret ? NULL : &dst, port))
		gw_priv_ct_reply_encode(&rep, m->seq, -EIO, NULL, 0);
	if (send(sock, &rep, sizeof(rep), MSG_NOSIGNAL) != (ssize_t)sizeof(rep))
		return errno ? -errno : -EIO;
	return 0;
}

static int serve_one(struct parent *p, int sock, bool manage)
{
	union {
		struct gw_priv_run run;
		struct gw_priv_netns ns;
		struct gw_priv_join join;
		struct gw_priv_ct ct;
		/* b is never read: it makes room past the message, so that a longer one
		 * shows as n > sizeof(its struct) and is refused */
		// cppcheck-suppress unusedStructMember ; read by no one on purpose (above)
		uint8_t b[sizeof(struct gw_priv_netns) + 64];
	} m;
	/* the msghdr is set up as in gw_priv_recv_fds() (privio.c) around other buffers: the
	 * request union and the room for descriptors differ; what came is collected by the same
	 * gw_priv_take_fds() */
	union {
		char buf[CMSG_SPACE(sizeof(int) * 3)]; /* room for one too many: refused */
		struct cmsghdr align;
	} cbuf;
	struct iovec iov = {.iov_base = &m, .iov_len = sizeof(m)};
	struct msghdr mh = {.msg_iov = &iov,
			    .msg_iovlen = 1,
			    .msg_control = cbuf.buf,
			    .msg_controllen = sizeof(cbuf.buf)};
	struct gw_priv_reply rep;
	struct gw_priv_netns_reply nrep;
	struct fw_run r;
	char why[sizeof(rep.msg)] = "";
	ssize_t n = recvmsg(sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	uint32_t seq;
	int ret, fd[2];

	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	if (n == 0)
		return -EPIPE;
	fd[0] = fd[1] = -1;
	if (gw_priv_take_fds(&mh, fd, 2) < 0)
		goto bad;
	if ((size_t)n >= 8 && m.run.type == GW_PRIV_CT_GET && fd[0] < 0)
		return serve_ct(p, sock, &m.ct, (size_t)n);
	if (!manage)
		goto bad;
	if ((size_t)n >= 8 && m.run.type == GW_PRIV_NETNS_ADD) {
		/* daemon mode: exactly two descriptors, the namespace and the client's connection
		 */
		if (fd[1] < 0 || gw_priv_netns_check(&m.ns, (size_t)n))
			goto bad;
		memset(&nrep, 0, sizeof(nrep));
		ret = netns_add(p, &m.ns, fd[0], fd[1], &nrep, why, sizeof(why));
		close(fd[0]);
		close(fd[1]);
		if (ret < -4095 || ret > 0)
			ret = -EIO;
		if (ret)
			memset(&nrep, 0, sizeof(nrep));
		nrep.magic = GW_PRIV_MAGIC;
		nrep.version = GW_PRIV_VERSION;
		nrep.type = GW_PRIV_NETNS_REPLY;
		nrep.seq = m.ns.seq;
		nrep.status = ret;
		snprintf(nrep.msg, sizeof(nrep.msg), "%s", ret ? why : "");
		if (send(sock, &nrep, sizeof(nrep), MSG_NOSIGNAL) != (ssize_t)sizeof(nrep))
			return errno ? -errno : -EIO;
		return 0;
	}
	if (fd[0] >= 0)
		goto bad;
	if ((size_t)n >= 8 && m.run.type == GW_PRIV_CGROUP_JOIN) {
		if (gw_priv_join_check(&m.join, (size_t)n))
			goto bad;
		ret = cgroup_join(p, &m.join, why, sizeof(why));
		seq = m.join.seq;
	} else {
		if (gw_priv_run_check(&m.run, (size_t)n))
			goto bad;
		ret = facts(p, &m.run, &r, why, sizeof(why));
		if (!ret)
			ret = m.run.type == GW_PRIV_RUN_ADD ? run_add(p, &r, why, sizeof(why))
							    : run_del(p, &r, why, sizeof(why));
		seq = m.run.seq;
	}
	if (ret < -4095)
		ret = -EIO;
	gw_priv_reply_encode(&rep, seq, ret, why);
	if (send(sock, &rep, sizeof(rep), MSG_NOSIGNAL) != (ssize_t)sizeof(rep))
		return errno ? -errno : -EIO;
	return 0;
bad:
	wd_closep(&fd[0]);
	wd_closep(&fd[1]);
	return -EBADMSG;
}

int gw_parent_serve(int sock, pid_t child, const struct wd_gwconf *conf, bool manage_nft,
		    struct audit_log *log, struct audit_key *key, int ct)
{
	struct parent p = {
	    .conf = conf, .runs_dir = GW_PARENT_RUNS_DIR, .log = log, .key = key, .ct = ct};
	sigset_t mask;
	int sfd, status = 0, ret = -1;
	bool fatal = false, alive = true;

	conf_fw_config(conf, &p.fc);
	if (gw_cidr_parse(conf->pool_v4, &p.pool[0], &p.prefix[0]) ||
	    gw_cidr_parse(conf->pool_v6, &p.pool[1], &p.prefix[1])) {
		manage_nft = false;		   /* cannot check addresses: refuse every update */
		memset(p.pool, 0, sizeof(p.pool)); /* and every conntrack lookup */
	}
	if (gw_cidr_parse(conf->synth_v4, &p.synth[0], &p.synth_prefix[0]) ||
	    gw_cidr_parse(conf->synth_v6, &p.synth[1], &p.synth_prefix[1]))
		memset(p.synth, 0, sizeof(p.synth)); /* refuse every conntrack lookup */
	/* the run networks the gateway plumbs: the launchers' allocator, no bind mount (the
	 * parent holds each namespace until the run is unregistered) */
	p.ncfg_ok = !conf_pool_config(conf, &p.ncfg);
	p.ncfg.bind_mount = false;
	p.ncfg_ok = p.ncfg_ok && !netns_pool_check(&p.ncfg, NULL, NULL);
	if (manage_nft)
		reclaim(&p);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGCHLD);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		wd_log(WD_LOG_ERR, "signalfd: %s", strerror(errno));
		kill(child, SIGTERM);
		fatal = true;
	}
	while (alive) {
		struct pollfd pf[2] = {{.fd = sfd, .events = POLLIN},
				       {.fd = sock, .events = POLLIN}};

		if (sfd < 0) {
			if (waitpid(child, &status, 0) == child)
				alive = false;
			continue;
		}
		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			wd_log(WD_LOG_ERR, "poll: %s", strerror(errno));
			break;
		}
		if (pf[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
				if (si.ssi_signo != SIGCHLD)
					kill(child, SIGTERM);
			if (waitpid(child, &status, WNOHANG) == child)
				alive = false;
		}
		if (sock >= 0 && (pf[1].revents & (POLLIN | POLLHUP | POLLERR))) {
			int r = serve_one(&p, sock, manage_nft);

			if (r == -EBADMSG) {
				wd_log(WD_LOG_ERR,
				       "malformed or unexpected message from the worker; "
				       "stopping it");
				kill(child, SIGKILL);
				fatal = true;
			}
			if (r < 0) {
				/* the channel is over: wait for the worker to go */
				close(sock);
				sock = -1;
			}
		}
	}
	if (sock >= 0)
		close(sock);
	if (sfd >= 0)
		close(sfd);
	/* the worker is gone: its runs' elements go too */
	while (p.n) {
		char why[256];
		struct fw_run last = p.runs[p.n - 1].fr;

		if (run_del(&p, &last, why, sizeof(why))) {
			wd_log(WD_LOG_WARN, "removing the nft elements of %s: %s", last.ifname,
			       why);
			if (p.n && !strcmp(p.runs[p.n - 1].fr.ifname, last.ifname))
				p.n--;
		}
	}
	fw_conn_close(p.nl);
	wd_closep(&p.ct);
	free(p.runs);
	if (alive)
		return 1;
	ret = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return fatal ? 1 : ret;
}

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
 */
#include "gateway/parent.h"
#include "gateway/gw.h"
#include "nft/nft.h"
#include "plumb/plumb.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

struct parent {
	const struct wd_gwconf *conf;
	struct fw_config fc;
	struct fw_conn *nl;
	struct fw_run *runs; /* what we added */
	size_t n, cap;
	struct gw_addr pool[2];
	unsigned prefix[2];
};

/* copy @s into @why, cut to fit */
static void say(char *why, size_t size, const char *s)
{
	size_t n = strnlen(s, size - 1);

	memcpy(why, s, n);
	why[n] = '\0';
}

static struct fw_run *find(struct parent *p, const char *ifname)
{
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->runs[i].ifname, ifname))
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

static int run_add(struct parent *p, const struct fw_run *r, char *why, size_t size)
{
	struct fw_run *old = find(p, r->ifname);
	struct wd_err err;
	int ret;

	if (old && !same(old, r)) {
		snprintf(why, size, "interface %s is already registered with other addresses",
			 r->ifname);
		return -EEXIST;
	}
	if (!old && p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		void *v = realloc(p->runs, cap * sizeof(*p->runs));

		if (!v)
			return -ENOMEM;
		p->runs = v;
		p->cap = cap;
	}
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
	if (!old)
		p->runs[p->n++] = *r;
	return 0;
}

static int run_del(struct parent *p, const struct fw_run *r, char *why, size_t size)
{
	struct fw_run *old = find(p, r->ifname);
	struct wd_err err;
	int ret;

	if (!old || !same(old, r)) {
		snprintf(why, size, "no run on %s with these addresses was added", r->ifname);
		return -ENOENT;
	}
	wd_err_clear(&err);
	ret = fw_conn_run_del(p->nl, &p->fc, r, &err);
	if (ret) {
		say(why, size, err.msg[0] ? err.msg : strerror(-ret));
		return ret;
	}
	*old = p->runs[--p->n];
	return 0;
}

/* one request from the worker; Return: 0, or -EBADMSG (fatal) / -errno (channel) */
static int serve_one(struct parent *p, int sock, bool manage)
{
	union {
		struct gw_priv_run run;
		/* b is never read: it makes room past the message, so that a longer one
		 * shows as n > sizeof(its struct) and is refused */
		// cppcheck-suppress unusedStructMember ; read by no one on purpose (above)
		uint8_t b[sizeof(struct gw_priv_run) + 64];
	} m;
	struct gw_priv_reply rep;
	struct fw_run r;
	char why[sizeof(rep.msg)] = "";
	ssize_t n = recv(sock, &m, sizeof(m), MSG_DONTWAIT);
	int ret;

	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	if (n == 0)
		return -EPIPE;
	if (!manage || gw_priv_run_check(&m.run, (size_t)n))
		return -EBADMSG;
	ret = facts(p, &m.run, &r, why, sizeof(why));
	if (!ret)
		ret = m.run.type == GW_PRIV_RUN_ADD ? run_add(p, &r, why, sizeof(why))
						    : run_del(p, &r, why, sizeof(why));
	if (ret < -4095)
		ret = -EIO;
	gw_priv_reply_encode(&rep, m.run.seq, ret, why);
	if (send(sock, &rep, sizeof(rep), MSG_NOSIGNAL) != (ssize_t)sizeof(rep))
		return errno ? -errno : -EIO;
	return 0;
}

int gw_parent_serve(int sock, pid_t child, const struct wd_gwconf *conf, bool manage_nft)
{
	struct parent p = {.conf = conf};
	sigset_t mask;
	int sfd, status = 0, ret = -1;
	bool fatal = false, alive = true;

	plumb_fw_config(conf, &p.fc);
	if (gw_cidr_parse(conf->pool_v4, &p.pool[0], &p.prefix[0]) ||
	    gw_cidr_parse(conf->pool_v6, &p.pool[1], &p.prefix[1]))
		manage_nft = false; /* cannot check addresses: refuse every update */
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

		if (run_del(&p, &p.runs[p.n - 1], why, sizeof(why))) {
			wd_log(WD_LOG_WARN, "removing the nft elements of %s: %s",
			       p.runs[p.n - 1].ifname, why);
			p.n--;
		}
	}
	fw_conn_close(p.nl);
	free(p.runs);
	if (alive)
		return 1;
	ret = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return fatal ? 1 : ret;
}

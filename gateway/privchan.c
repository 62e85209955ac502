/* privchan.c - the worker's side of the channel to its privileged parent: a
 * run update (struct gw_priv_run) goes out as one message, the parent's replies
 * (struct gw_priv_reply) come back in order and are matched by sequence number
 * to a FIFO of waiting requests. A message the channel has no room for (the parent
 * is behind) waits in order and goes out as it drains. A malformed or unexpected reply, a reply
 * that nobody waits for, or the parent closing the channel ends the worker's loop with -EBADMSG /
 * -EPIPE: fail closed. */
#include "gateway/privchan.h"
#include "gateway/sock.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct gw_privout {
	struct gw_privout *next;
	size_t len;
	uint8_t m[];
};

void gw_privchan_init(struct gw_privchan *p, struct gw_ev *ev)
{
	memset(p, 0, sizeof(*p));
	p->ev = ev;
	p->fd = -1;
}

int gw_privchan_open(struct gw_privchan *p, int fd, bool manage_nft)
{
	int r = gw_ev_add(p->ev, fd, GW_POLL_IN, GW_REF(GW_REF_PRIV, p));

	if (r)
		return r;
	p->fd = fd;
	p->manage_nft = manage_nft;
	return 0;
}

void gw_privchan_free(struct gw_privchan *p)
{
	while (p->head) {
		struct gw_privreq *q = p->head;

		p->head = q->next;
		if (q->netns)
			q->done_netns(q, NULL);
		else if (q->ct)
			q->done_ct(q, NULL);
		else
			q->done(q, NULL);
	}
	p->tail = NULL;
	while (p->out) {
		struct gw_privout *o = p->out;

		p->out = o->next;
		free(o);
	}
	p->out_tail = NULL;
	wd_closep(&p->fd);
}

/* @q waits for its reply, after the others */
static void link_req(struct gw_privchan *p, struct gw_privreq *q)
{
	q->next = NULL;
	if (p->tail)
		p->tail->next = q;
	else
		p->head = q;
	p->tail = q;
}

/* @m (@len bytes) out, @q waiting for its reply; without room on the channel (or behind
 * messages that had none) @m waits in @p->out, sent in order as the channel drains -- a lost
 * request would leave a run's plumbing behind. Return: 0 or -errno */
static int send_linked(struct gw_privchan *p, struct gw_privreq *q, const void *m, size_t len)
{
	ssize_t n = -1;

	errno = EAGAIN;
	if (!p->out)
		n = gw_sock_send(p->fd, m, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n != (ssize_t)len) {
		struct gw_privout *o;

		if (n >= 0 || errno != EAGAIN)
			return n < 0 ? -errno : -EIO;
		o = malloc(sizeof(*o) + len);
		if (!o)
			return -ENOMEM;
		o->next = NULL;
		o->len = len;
		memcpy(o->m, m, len);
		if (p->out_tail)
			p->out_tail->next = o;
		else
			p->out = o;
		p->out_tail = o;
		gw_ev_mod(p->ev, p->fd, GW_POLL_IN | GW_POLL_OUT, GW_REF(GW_REF_PRIV, p));
	}
	q->seq = ++p->seq;
	q->netns = false;
	q->ct = false;
	link_req(p, q);
	return 0;
}

int gw_privchan_send(struct gw_privchan *p, struct gw_privreq *q, enum gw_priv_type type,
		     const char *ifname, const struct gw_addr *sb4, const struct gw_addr *sb6,
		     const struct gw_addr *h4, const struct gw_addr *h6)
{
	struct gw_priv_run m;
	int r;

	if (p->fd < 0)
		return -ENOTCONN;
	r = gw_priv_run_encode(&m, type, p->seq + 1, ifname, sb4, sb6, h4, h6);
	return r ? r : send_linked(p, q, &m, sizeof(m));
}

int gw_privchan_send_netns(struct gw_privchan *p, struct gw_privreq *q, struct gw_priv_netns *m,
			   int fd, int client)
{
	int r;

	if (p->fd < 0)
		return -ENOTCONN;
	if (p->out)
		return -EAGAIN; /* behind waiting messages, and its descriptors are not kept */
	m->magic = GW_PRIV_MAGIC;
	m->version = GW_PRIV_VERSION;
	m->type = GW_PRIV_NETNS_ADD;
	m->seq = p->seq + 1;
	if (gw_priv_netns_check(m, sizeof(*m)))
		return -EINVAL;
	r = gw_priv_send_netns(p->fd, m, fd, client);
	if (r)
		return r;
	q->seq = ++p->seq;
	q->netns = true;
	q->ct = false;
	link_req(p, q);
	return 0;
}

int gw_privchan_send_join(struct gw_privchan *p, struct gw_privreq *q, const char *ifname,
			  pid_t pid)
{
	struct gw_priv_join m;
	int r;

	if (p->fd < 0)
		return -ENOTCONN;
	r = gw_priv_join_encode(&m, p->seq + 1, ifname, pid);
	return r ? r : send_linked(p, q, &m, sizeof(m));
}

int gw_privchan_send_ct(struct gw_privchan *p, struct gw_privreq *q,
			const struct gw_ct_tuple *reply)
{
	struct gw_priv_ct m;
	int r;

	if (p->fd < 0)
		return -ENOTCONN;
	r = gw_priv_ct_encode(&m, p->seq + 1, reply);
	if (!r)
		r = send_linked(p, q, &m, sizeof(m));
	if (!r)
		q->ct = true;
	return r;
}

/* the channel failed: the loop ends with @err (@what says why, for the reader) */
static void fatal(struct gw_privchan *p, int err, const char *what)
{
	(void)what;
	gw_ev_fail(p->ev, err);
	gw_ev_del(p->ev, p->fd);
}

/* the waiting messages out, oldest first, while the channel takes them */
static void flush_out(struct gw_privchan *p)
{
	while (p->out) {
		struct gw_privout *o = p->out;
		ssize_t n = gw_sock_send(p->fd, o->m, o->len, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0 && errno == EAGAIN)
			return;
		if (n != (ssize_t)o->len) {
			fatal(p, n < 0 ? -errno : -EIO, "send");
			return;
		}
		p->out = o->next;
		free(o);
	}
	p->out_tail = NULL;
	gw_ev_mod(p->ev, p->fd, GW_POLL_IN, GW_REF(GW_REF_PRIV, p));
}

void gw_privchan_event(struct gw_privchan *p, unsigned events)
{
	union {
		struct gw_priv_reply rep;
		struct gw_priv_netns_reply nrep;
		struct gw_priv_ct_reply crep;
		/* b is never read: it makes room past the message, so that a longer one
		 * shows as n > sizeof(its struct) and is refused */
		// cppcheck-suppress unusedStructMember ; read by no one on purpose (above)
		uint8_t b[sizeof(struct gw_priv_netns_reply) + 64];
	} m;

	if (p->out && (events & GW_POLL_OUT))
		flush_out(p);
	for (;;) {
		ssize_t n = gw_sock_recv(p->fd, &m, sizeof(m), MSG_DONTWAIT);
		struct gw_privreq *q = p->head;

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR) {
				if (events & (GW_POLL_HUP | GW_POLL_ERR))
					fatal(p, -EPIPE, "hung up");
				return;
			}
			fatal(p, -errno, strerror(errno));
			return;
		}
		if (n == 0) {
			fatal(p, -EPIPE, "the parent closed it");
			return;
		}
		if (!q || (q->netns ? gw_priv_netns_reply_check(&m.nrep, (size_t)n, q->seq)
			   : q->ct  ? gw_priv_ct_reply_check(&m.crep, (size_t)n, q->seq)
				    : gw_priv_reply_check(&m.rep, (size_t)n, q->seq))) {
			fatal(p, -EBADMSG, q ? "malformed reply" : "unexpected message");
			return;
		}
		p->head = q->next;
		if (!p->head)
			p->tail = NULL;
		if (q->netns)
			q->done_netns(q, &m.nrep);
		else if (q->ct)
			q->done_ct(q, &m.crep);
		else
			q->done(q, &m.rep);
	}
}

/* ctlconn.c - the control server's connections, their I/O: accept within the bounds, SO_PEERCRED,
 * reading (at most GW_CTL_MAX bytes a request, one request per line, at most one descriptor with
 * it), the deadline of each request, the answers queued and sent, closing. What a request does
 * is not this file's: each whole line goes to the server's handle hook (ctlsrv.c sets it:
 * ctlops.c, ctlnetns.c), and a closing connection's run to its release hook.
 *
 * Bounds (issue 25): every member of the socket's group may connect, so a connection is
 * accepted only within the control socket's share of the worker's descriptors (gw_fd_share():
 * the relays' share is kept apart, control can never take it) and within its owner's share of
 * that (SO_PEERCRED's uid; a run held in daemon mode counts). One past either bound is told
 * why in one line and closed at once (stats: control_refused). A connection has
 * ctl->request_ns to send each whole request, counted from its accept or from the end of the
 * request before; a byte that comes does not move that deadline, so a line that never ends
 * (one byte now and then) is closed when it is due (control_expired). No deadline runs while
 * the parent works on a request (it is ours to answer) nor while a connection holds a run (it
 * lives as long as its launcher). */
#include "gateway/ctlsrv.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

void gw_ctlconn_put_json(struct gw_ctlconn *c, json_t *j)
{
	char *s;

	/* the event lines this connection lost are told before its next answer */
	if (c->stream_lost)
		gw_ctlstream_notice(c);
	s = j ? json_dumps(j, JSON_COMPACT) : NULL;

	if (!s || wd_buf_puts(&c->out, s) || wd_buf_puts(&c->out, "\n"))
		c->closing = true;
	free(s);
	json_decref(j);
}

void gw_ctlconn_put_error(struct gw_ctlconn *c, int code, const char *why)
{
	gw_ctlconn_put_json(c, json_pack("{s:b, s:s, s:s}", "ok", 0, "error", why, "errno",
					 wd_errno_name(-code) ? wd_errno_name(-code) : "EINVAL"));
}

void gw_ctlconn_put_ok(struct gw_ctlconn *c)
{
	gw_ctlconn_put_json(c, json_pack("{s:b}", "ok", 1));
}

void gw_ctlconn_close(struct gw_ctlconn *c)
{
	struct gw_ctl *ctl = c->ctl;

	if (c->closed)
		return;
	c->closed = true;
	if (c->waiting)
		c->waiting->c = NULL; /* the parent's answer finds no client */
	c->closing = true;
	gw_ctlstream_detach(c);
	c->ctl->release(c); /* the run it holds leaves with it */
	wd_closep(&c->netns_fd);
	gw_disarm(ctl->ev, &c->timer);
	gw_ev_del(ctl->ev, c->fd);
	close(c->fd);
	ctl->nconns--;
	if (c->prev)
		c->prev->next = c->next;
	else
		ctl->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	wd_buf_free(&c->in);
	wd_buf_free(&c->out);
	/* freed after this round of events: one of them may still name it (the parent's answer
	 * that closed it came first in the same batch as its own hang-up) */
	c->next = ctl->zombies;
	ctl->zombies = c;
}

void gw_ctl_reap(struct gw_ctl *ctl)
{
	while (ctl->zombies) {
		struct gw_ctlconn *c = ctl->zombies;

		ctl->zombies = c->next;
		free(c);
	}
}

static void handle_lines(struct gw_ctlconn *c)
{
	char *nl;

	while (!c->closing && !c->waiting && c->in.len &&
	       (nl = memchr(c->in.data, '\n', c->in.len))) {
		size_t len = (size_t)(nl - c->in.data);
		struct gw_ctl_req req;
		char why[256];
		int r = gw_ctl_parse(c->in.data, len, &req, why, sizeof(why));

		if (r) {
			gw_ctlconn_put_error(c, r, why);
			c->closing = true; /* malformed: this connection ends */
			return;
		}
		if (c->netns_fd >= 0 && !(req.op == GW_CTL_REGISTER && req.netns)) {
			gw_ctlconn_put_error(c, -EBADMSG,
					     "a descriptor came with a request that takes none");
			gw_ctl_req_clear(&req);
			c->closing = true;
			return;
		}
		c->ctl->handle(c, &req);
		gw_ctl_req_clear(&req);
		memmove(c->in.data, nl + 1, c->in.len - len - 1);
		c->in.len -= len + 1;
		c->timed = false; /* read whole: the next request's time starts now */
	}
	if (!c->waiting && c->in.len > GW_CTL_MAX) {
		gw_ctlconn_put_error(c, -E2BIG, "request too long");
		c->closing = true;
	}
}

/* the deadline of @c's request: set once when its time starts (the accept, the end of the
 * request before, the parent's answer), never moved by the bytes that come; none while the
 * parent works on a request or while @c holds a run (it lives as long as its launcher) */
static void ctl_deadline(struct gw_ctlconn *c)
{
	if (c->owned || c->waiting) {
		gw_disarm(c->ctl->ev, &c->timer);
		c->timed = false;
		return;
	}
	if (c->timed)
		return;
	gw_arm(c->ctl->ev, &c->timer, c->ctl->ev->now + c->ctl->request_ns);
	c->timed = true;
}

/* send what is queued, close when done and asked to, set the epoll interest */
static void ctl_output(struct gw_ctlconn *c)
{
	/* the events of what is answered reach the log before the answer */
	gw_audit_flush(c->ctl->ev);
	while (c->outoff < c->out.len) {
		ssize_t n = send(c->fd, c->out.data + c->outoff, c->out.len - c->outoff,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EAGAIN)
				break;
			gw_ctlconn_close(c);
			return;
		}
		c->outoff += (size_t)n;
	}
	gw_ctlstream_sent(c);
	if (c->outoff == c->out.len) {
		wd_buf_reset(&c->out);
		c->outoff = 0;
		if (c->closing && !c->waiting) {
			gw_ctlconn_close(c);
			return;
		}
	}
	gw_ev_mod(c->ctl->ev, c->fd,
		  (c->closing || c->waiting ? 0 : GW_POLL_IN) | (c->out.len ? GW_POLL_OUT : 0),
		  GW_REF(GW_REF_CTL, c));
	ctl_deadline(c);
}

void gw_ctlconn_resume(struct gw_ctlconn *c)
{
	c->waiting = NULL;
	handle_lines(c); /* the lines that came meanwhile */
	ctl_output(c);
}

void gw_ctlconn_event(struct gw_ctlconn *c, unsigned events)
{
	char buf[65536];

	if (c->closed)
		return; /* closed earlier in this round: its event came with the same batch */
	if ((events & GW_POLL_ERR) || (c->waiting && (events & GW_POLL_HUP))) {
		gw_ctlconn_close(c); /* a parked request still completes, unanswered */
		return;
	}
	if (!c->closing && !c->waiting && (events & (GW_POLL_IN | GW_POLL_HUP))) {
		union {
			char b[CMSG_SPACE(sizeof(int) * 4)];
			struct cmsghdr align;
		} cbuf;
		struct iovec iov = {.iov_base = buf, .iov_len = sizeof(buf)};
		struct msghdr mh = {.msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = cbuf.b,
				    .msg_controllen = sizeof(cbuf.b)};
#ifdef MSG_CMSG_CLOEXEC
		ssize_t n = recvmsg(c->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
#else
		/* macOS: no flag; gw_priv_take_fds() sets FD_CLOEXEC on what it takes */
		ssize_t n = recvmsg(c->fd, &mh, MSG_DONTWAIT);
#endif

		if (n >= 0 && gw_priv_take_fds(&mh, &c->netns_fd, 1) < 0) {
			gw_ctlconn_put_error(
			    c, -EBADMSG,
			    "one namespace descriptor per register, and nothing else as "
			    "control data");
			c->closing = true;
		} else if (n == 0 || (n < 0 && errno != EAGAIN)) {
			c->closing = true;
		} else if (n > 0) {
			if (wd_buf_append(&c->in, buf, (size_t)n))
				c->closing = true;
			else
				handle_lines(c);
		}
	}
	ctl_output(c);
}

/* one JSON error line on a connection about to close, sent if its buffer takes it (a fresh or
 * idle connection's does) */
static void say_once(int fd, int code, const char *why)
{
	json_t *j = json_pack("{s:b, s:s, s:s}", "ok", 0, "error", why, "errno",
			      wd_errno_name(-code) ? wd_errno_name(-code) : "EINVAL");
	char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
	struct iovec iov[2] = {{s, s ? strlen(s) : 0}, {(void *)"\n", 1}};
	struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};

	if (s)
		(void)sendmsg(fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
	free(s);
	json_decref(j);
}

void gw_ctlconn_expired(struct gw_ctlconn *c)
{
	char why[160];

	c->ctl->ev->stats.ctl_expired++;
	if (!c->out.len) {
		snprintf(why, sizeof(why),
			 "request not whole within %llu ms (control.request_timeout_ms): closed",
			 (unsigned long long)(c->ctl->request_ns / 1000000));
		say_once(c->fd, -ETIMEDOUT, why);
	}
	gw_ctlconn_close(c);
}

/* the control connections @uid holds */
static unsigned uid_conns(const struct gw_ctl *ctl, uid_t uid)
{
	unsigned n = 0;

	for (const struct gw_ctlconn *o = ctl->conns; o; o = o->next)
		n += o->uid == uid;
	return n;
}

/* Refuse a connection past a bound: told why, closed at once, counted. Return: true refused */
static bool ctl_refuse(struct gw_ctl *ctl, int fd, uid_t uid)
{
	char why[300];
	unsigned held;

	if (ctl->nconns >= ctl->runs->ctl_max) {
		snprintf(why, sizeof(why),
			 "too many control connections: the gateway holds its bound of %u "
			 "(control.connections, within its descriptor limit); try again later",
			 ctl->runs->ctl_max);
		say_once(fd, -ENFILE, why);
	} else if ((held = uid_conns(ctl, uid)) >= ctl->runs->ctl_per_uid) {
		snprintf(why, sizeof(why),
			 "too many control connections: uid %u holds %u, its bound "
			 "(control.connections_per_user; each daemon-mode run holds one)",
			 (unsigned)uid, held);
		say_once(fd, -EUSERS, why);
	} else {
		return false;
	}
	ctl->ev->stats.ctl_refused++;
	close(fd);
	return true;
}

/* Not gw_listener_accept() (the data listeners' accept): the control socket is not in the runs'
 * descriptor room (its bounds are its own share, ctl_refuse()), and an accept that fails for
 * another reason than running out of descriptors ends this wake-up instead of trying again. */
void gw_ctl_accept(struct gw_ctl *ctl, struct gw_listener *l)
{
	for (int i = 0; i < 16; i++) {
		uid_t uid;
		gid_t gid;
		pid_t pid;
		int fd = wd_accept_nb(l->fd, NULL, NULL);
		struct gw_ctlconn *c;

		if (fd < 0) {
			if (fd == -EMFILE || fd == -ENFILE) {
				ctl->ev->stats.emfile++;
				gw_pause_listener(l);
			}
			return;
		}
		if (wd_peer_cred(fd, &uid, &gid, &pid) < 0) {
			close(fd);
			continue;
		}
		if (ctl_refuse(ctl, fd, uid))
			continue;
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		c->ctl = ctl;
		c->fd = fd;
		c->uid = uid;
		c->gid = gid;
		c->pid = pid;
		c->netns_fd = -1;
		gw_timer_init(&c->timer, GW_T_CTLCONN, c);
		if (gw_ev_add(ctl->ev, fd, GW_POLL_IN, GW_REF(GW_REF_CTL, c))) {
			free(c);
			close(fd);
			continue;
		}
		c->next = ctl->conns;
		if (ctl->conns)
			ctl->conns->prev = c;
		ctl->conns = c;
		ctl->nconns++;
		/* the first request's time starts now */
		ctl_deadline(c);
	}
}

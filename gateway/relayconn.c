/* relayconn.c - one TCP connection's relay: the peeked bytes written upstream first, then both
 * directions moved (relay.c), the client's half request by request when it speaks HTTP
 * (relayhttp.c), lean while the run holds too much (connend.c accounts it), and the connection
 * queued again while it has more to move than one round takes. Its audit events, denials and
 * end are connend.c's. */
#include "gateway/tcp.h"
#include "gateway/sock.h"

#include <errno.h>
#include <sys/socket.h>

/* start relaying once connected and checked: write the peeked bytes first */
void gw_conn_flush_peeked(struct gw_conn *c)
{
	if (c->flushed || !c->checked || c->st != GW_C_RELAY)
		return;
	if (c->http_track) {
		/* the peeked bytes are the start of the request stream: the
		 * relay frames them (gw_conn_pump_http()), the first head included */
		c->flushed = true;
		return;
	}
	if (c->budget >= 0 && (int64_t)c->blen > c->budget)
		c->blen = (size_t)c->budget; /* absolute-form: one request only */
	if (c->c2u.up && !c->boff && !c->up_peeked) {
		/* the upload budget: the first bytes go whole or not at all */
		if (!gw_upload_take(c->c2u.up, c->blen)) {
			gw_conn_upload_cut(c);
			return;
		}
		c->up_peeked = true;
	}
	while (c->boff < c->blen) {
		ssize_t n;

		if (!c->ur.wr)
			return; /* GW_POLL_OUT brings us back */
		n = gw_sock_send(c->ufd, c->buf + c->boff, c->blen - c->boff,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN) {
				c->ur.wr = false;
				return;
			}
			if (errno == EINTR)
				continue;
			gw_conn_close(c, "upstream write failed");
			return;
		}
		c->boff += (size_t)n;
		gw_half_count(&c->c2u, (uint64_t)n);
	}
	if (c->budget >= 0) {
		c->budget -= (int64_t)c->blen;
		if (c->budget <= 0)
			c->c2u.eof = true;
	}
	c->flushed = true;
	gw_buf_put(&c->t->pool, c->buf);
	c->buf = NULL;
	c->blen = c->boff = 0;
}

void gw_conn_relay(struct gw_conn *c)
{
	struct gw_tcp *t = c->t;
	int r, more = 0;
	bool lean;

	c->last_ns = t->ev->now;
	if (!c->flushed && c->checked)
		gw_conn_flush_peeked(c);
	if (c->st != GW_C_RELAY)
		return;
	/* a run whose connections hold limits.run_buffer_kib in the gateway reads
	 * lean until the destinations took some of it: a direction whose bytes
	 * wait (the side that is ahead) reads nothing, it waits in its own
	 * socket buffer (bounded, see fds.c); the others read only what their
	 * destination takes at once, never into a pipe -- so a run cannot stall
	 * itself (an echo's answer still flows back) and holds at most one copy
	 * read more per direction */
	lean = c->run && c->run->buffered >= t->lim->run_buffer;
	c->throttled = lean;
	if (c->flushed) {
		r = c->http_track ? gw_conn_pump_http(c, lean)
				  : gw_pump(&t->pool, &c->c2u, &c->u2c, c->cfd, &c->cr, c->ufd,
					    &c->ur, c->budget >= 0 ? &c->budget : NULL, lean);
		if (c->st != GW_C_RELAY)
			return;
		if (r == -EDQUOT) {
			gw_conn_upload_cut(c);
			return;
		}
		if (r < 0) {
			gw_conn_close(c, r == -EMFILE	? "out of descriptors for pipes"
					 : r == -ENOMEM ? "out of memory"
							: "client->upstream error");
			return;
		}
		more |= r;
	}
	if (c->hold && (c->ur.rd || c->ur.rdhup)) {
		if (!gw_conn_answer_peek(c))
			goto out; /* the status line is not all there: nothing relayed yet */
		if (c->st != GW_C_RELAY)
			return;
		more = 1; /* the client's half may move now */
	}
	r = gw_pump(&t->pool, &c->u2c, &c->c2u, c->ufd, &c->ur, c->cfd, &c->cr, NULL, lean);
	if (r < 0) {
		gw_conn_close(c, r == -EMFILE	? "out of descriptors for pipes"
				 : r == -ENOMEM ? "out of memory"
						: "upstream->client error");
		return;
	}
	more |= r;
	if (c->late_deny && c->u2c.shut) {
		gw_conn_late_deny_say(c); /* the upstream said all it had to */
		return;
	}
	if (c->c2u.shut && c->u2c.shut) {
		gw_conn_close(c, "closed by both sides");
		return;
	}
out:
	gw_conn_account(c, false);
	if (more && !c->queued) {
		/* no new edge will come for what is already there */
		c->queued = true;
		c->again = t->again;
		t->again = c;
	}
}

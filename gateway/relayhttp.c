/* relayhttp.c - the client->upstream half of a kept-alive HTTP connection, request by request:
 * every request head framed (proto/httpstream.c) and checked against the name the connection is
 * bound to (gw_tcp_decide_request()) before it goes upstream; a later request that names another
 * host, or a stream that cannot be framed, is denied once the upstream answered the earlier ones
 * (gw_conn_late_deny()). An Upgrade or CONNECT holds the stream until the server's status line
 * says whether the connection became a tunnel. The bytes move through relay.c. */
#include "gateway/decide.h"
#include "gateway/tcp.h"
#include "gateway/sock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* a request head on a connection bound to c->name: true when it may go upstream */
static bool request_ok(struct gw_conn *c, const struct http_request *req)
{
	struct gw_tcp_verdict v;
	char reason[600];

	gw_tcp_decide_request(c->name, req, c->hs.requests, &v);
	if (v.action != GW_TCP_DENY)
		return true;
	gw_str_set(&c->host, req->host); /* the event names what this request asked for */
	gw_conn_late_deny(c, gw_tcp_reason_text(&v, c->run->policy_name, reason, sizeof(reason)));
	return false;
}

/* read more of the client's bytes into c->buf (kept from the first bytes, or
 * from the pool). Return: bytes read, 0 at the end, -EAGAIN, or -errno */
static ssize_t read_more(struct gw_conn *c)
{
	size_t want;
	ssize_t n;

	if (!c->buf && !(c->buf = gw_buf_get(&c->t->pool)))
		return -ENOMEM;
	if (c->boff) {
		memmove(c->buf, c->buf + c->boff, c->blen - c->boff);
		c->blen -= c->boff;
		c->boff = 0;
	}
	want = GW_PEEK_MAX - c->blen;
	if (!want)
		return -E2BIG; /* cannot happen: heads, lines and trailers are bounded lower */
	n = gw_sock_recv(c->cfd, c->buf + c->blen, want, MSG_DONTWAIT);
	if (n < 0) {
		if (errno == EAGAIN)
			c->cr.rd = false;
		return -errno;
	}
	if (n == 0) {
		c->c2u.eof = true;
		return 0;
	}
	c->blen += (size_t)n;
	if ((size_t)n < want) {
		c->cr.rd = false;
		if (c->cr.rdhup)
			c->c2u.eof = true; /* the last bytes: frame them, then the end */
	}
	return n;
}

/*
 * gw_conn_pump_http() - the client->upstream half of a connection whose bytes are HTTP
 * requests (c->http_track): every head is framed and checked against the name
 * the connection is bound to before it goes upstream; bodies and chunk framing
 * pass as they are (a body that is not in the buffer moves straight from socket
 * to socket, never past its end, spliced when bulk). Stops at a denial (see
 * gw_conn_late_deny()) and at an Upgrade/CONNECT until the server answered (c->hold).
 * Return: as gw_pump().
 */
int gw_conn_pump_http(struct gw_conn *c, bool lean)
{
	struct gw_tcp *t = c->t;
	struct gw_half *h = &c->c2u;
	int round, r = 0;

	for (round = 0; round < GW_ROUNDS; round++) {
		struct http_step st;
		ssize_t n;

		r = gw_drain_half(h, c->ufd, &c->ur);
		if (r <= 0)
			break;
		r = 0;
		if (c->hs.state == HTTP_STREAM_WAIT)
			c->hold = true; /* nothing more until the server answered */
		if (c->late_deny || c->hold || !c->ur.wr)
			break;
		if (c->boff < c->blen) {
			enum http_stream_result fr =
			    http_stream_next(&c->hs, c->buf + c->boff, c->blen - c->boff, &st);

			if (fr == HTTP_STREAM_REQUEST && !request_ok(c, &st.req))
				break;
			if (fr == HTTP_STREAM_REQUEST || fr == HTTP_STREAM_PASS) {
				if (h->up && !gw_upload_take(h->up, st.len)) {
					r = -EDQUOT; /* nothing of it goes: the budget is spent */
					break;
				}
				r = gw_copy_out(h, c->ufd, &c->ur, c->buf + c->boff, st.len);
				if (r)
					break;
				c->boff += st.len;
				continue;
			}
			if (fr == HTTP_STREAM_HOLD) {
				c->hold = true;
				break;
			}
			if (fr == HTTP_STREAM_MALFORMED) {
				char reason[300];

				snprintf(
				    reason, sizeof(reason),
				    "HTTP request stream cannot be framed after request %u: %s",
				    c->hs.requests, st.why);
				gw_conn_late_deny(c, reason);
				break;
			}
			/* NEED_MORE: read more below */
		} else if ((c->hs.state == HTTP_STREAM_BODY ||
			    c->hs.state == HTTP_STREAM_CHUNK_DATA) &&
			   !h->eof && c->cr.rd) {
			size_t want = h->bulk ? GW_CHUNK : GW_COPY_MAX;

			if ((uint64_t)want > c->hs.left)
				want = (size_t)c->hs.left;
			/* gw_move_once()'s result is read as gw_pump() (relay.c) reads it; here
			 * each byte moved is also a body byte of the framed stream
			 * (http_stream_body()) */
			n = gw_move_once(&t->pool, h, c->cfd, &c->cr, c->ufd, &c->ur, want, lean);
			if (n == -EINTR)
				continue;
			if (n == -EAGAIN || n == 0)
				break;
			if (n < 0) {
				r = (int)n;
				break;
			}
			http_stream_body(&c->hs, (uint64_t)n);
			continue;
		}
		if (h->eof) {
			c->boff = c->blen; /* an unfinished head never goes upstream */
			break;
		}
		if (!c->cr.rd || (lean && h->slen))
			break;
		n = read_more(c);
		if (n == -EINTR)
			continue;
		if (n == -EAGAIN)
			break;
		if (n < 0) {
			r = (int)n;
			break;
		}
	}
	if (h->pipe[0] >= 0 && !h->inpipe)
		gw_pipe_put(&t->pool, h);
	if (c->boff == c->blen && c->buf) {
		/* nothing buffered: the buffer goes back to the pool (idle
		 * keep-alive connections hold none) */
		gw_buf_put(&t->pool, c->buf);
		c->buf = NULL;
		c->blen = c->boff = 0;
	}
	if (r < 0)
		return r;
	gw_pass_end(h, &c->u2c, c->ufd);
	return round == GW_ROUNDS;
}

/*
 * gw_conn_answer_peek() - the stream waits (c->hold) for the server's answer to an
 * Upgrade or CONNECT: look at the status line before relaying it. 101 to an
 * Upgrade, 2xx to a CONNECT: the connection is a tunnel from now on (what the
 * client sent after the request goes up unchecked, as on any tunnel); any
 * other answer, or one that is not HTTP: the next request is framed as before.
 * Return: false while the status line is incomplete (wait for more).
 */
bool gw_conn_answer_peek(struct gw_conn *c)
{
	uint8_t b[16];
	unsigned status = 0;
	ssize_t n = gw_sock_recv(c->ufd, b, sizeof(b), MSG_PEEK | MSG_DONTWAIT);
	enum http_result hr;

	if (n < 0) {
		if (errno == EAGAIN)
			c->ur.rd = false;
		return errno != EAGAIN && errno != EINTR;
	}
	hr = n ? http_response_status(b, (size_t)n, &status) : HTTP_MALFORMED;
	if (hr == HTTP_NEED_MORE && !c->ur.rdhup) {
		c->ur.rd = false; /* new bytes bring a new edge */
		return false;
	}
	c->hold = false;
	if (hr == HTTP_OK && http_stream_answered(&c->hs, status)) {
		c->http_track = false; /* a tunnel: the buffered rest goes first */
		if (c->boff < c->blen && c->c2u.up &&
		    !gw_upload_take(c->c2u.up, c->blen - c->boff)) {
			gw_conn_upload_cut(c);
			return true;
		}
		if (c->boff < c->blen &&
		    gw_copy_out(&c->c2u, c->ufd, &c->ur, c->buf + c->boff, c->blen - c->boff)) {
			gw_conn_close(c, "out of memory");
			return true;
		}
		gw_buf_put(&c->t->pool, c->buf);
		c->buf = NULL;
		c->blen = c->boff = 0;
	} else if (c->hs.state == HTTP_STREAM_WAIT) {
		http_stream_answered(&c->hs, 0); /* not HTTP: frame what follows as HTTP */
	}
	return true;
}

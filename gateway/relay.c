/* relay.c - the relay's mechanism: pools of pipes and peek buffers, and one
 * direction of a relayed connection moved -- small reads copied through one
 * buffer (recv/send), a read that fills it turning the direction to bulk, which
 * then moves through a pipe from the pool with splice(2). The pools follow
 * PERFORMANCE.md: pipes lazily and recycled (an idle connection holds none),
 * no more open at once than the worker's share for them (past it a bulk chunk is
 * copied), 64 KiB chunks, a bounded number per wake-up for fairness. */
#include "gateway/relay.h"
#include "gateway/upload.h"
#include "gateway/sock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int gw_pool_init(struct gw_pool *p)
{
	memset(p, 0, sizeof(*p));
	p->max_pipes = SIZE_MAX;
	p->copybuf = malloc(GW_COPY_MAX);
	return p->copybuf ? 0 : -ENOMEM;
}

void gw_pool_free(struct gw_pool *p)
{
	for (size_t i = 0; i < p->npipes; i++) {
		close(p->pipes[i][0]);
		close(p->pipes[i][1]);
	}
	free(p->pipes);
	for (size_t i = 0; i < p->nbufs; i++)
		free(p->bufs[i]);
	free(p->copybuf);
	memset(p, 0, sizeof(*p));
}

int gw_pipe_get(struct gw_pool *p, int fds[2])
{
	if (p->npipes) {
		p->npipes--;
		fds[0] = p->pipes[p->npipes][0];
		fds[1] = p->pipes[p->npipes][1];
		return 0;
	}
	if (p->live >= p->max_pipes)
		return -EMFILE;
#ifdef __linux__
	if (pipe2(fds, O_NONBLOCK | O_CLOEXEC))
		return -errno;
	p->live++;
	return 0;
#else
	(void)fds;
	return -ENOTSUP;		/* no splice: every byte is copied (gw_move_once()) */
#endif
}

void gw_pipe_put(struct gw_pool *p, struct gw_half *h)
{
	if (h->pipe[0] < 0)
		return;
	if (h->inpipe == 0 && p->npipes < GW_PIPE_POOL) {
		if (p->npipes == p->cap_pipes) {
			size_t cap = p->cap_pipes ? p->cap_pipes * 2 : 16;
			void *v = realloc(p->pipes, cap * sizeof(*p->pipes));

			if (!v)
				goto close;
			p->pipes = v;
			p->cap_pipes = cap;
		}
		p->pipes[p->npipes][0] = h->pipe[0];
		p->pipes[p->npipes][1] = h->pipe[1];
		p->npipes++;
		h->pipe[0] = h->pipe[1] = -1;
		return;
	}
close:
	close(h->pipe[0]);
	close(h->pipe[1]);
	h->pipe[0] = h->pipe[1] = -1;
	p->live--;
}

uint8_t *gw_buf_get(struct gw_pool *p)
{
	return p->nbufs ? p->bufs[--p->nbufs] : malloc(GW_PEEK_MAX);
}

void gw_buf_put(struct gw_pool *p, uint8_t *b)
{
	if (!b)
		return;
	if (p->nbufs < GW_BUF_POOL)
		p->bufs[p->nbufs++] = b;
	else
		free(b);
}

int gw_copy_out(struct gw_half *h, int dst, struct gw_ready *dr, const uint8_t *b, size_t n)
{
	size_t off = 0;

	while (off < n && dr->wr) {
		ssize_t k = gw_sock_send(dst, b + off, n - off, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (k < 0) {
			if (errno == EAGAIN) {
				dr->wr = false;
				break;
			}
			if (errno == EINTR)
				continue;
			return -errno;
		}
		off += (size_t)k;
		gw_half_count(h, (uint64_t)k);
	}
	if (off < n) {
		h->stash = malloc(n - off);
		if (!h->stash)
			return -ENOMEM;
		memcpy(h->stash, b + off, n - off);
		h->slen = (uint32_t)(n - off);
		h->soff = 0;
	}
	return 0;
}

int gw_drain_half(struct gw_half *h, int dst, struct gw_ready *dr)
{
	while (h->slen || h->inpipe) {
		ssize_t k;

		if (!dr->wr)
			return 0;
		if (h->slen)
			k = gw_sock_send(dst, h->stash + h->soff, h->slen - h->soff,
					 MSG_NOSIGNAL | MSG_DONTWAIT);
		else
#ifdef __linux__
			k = splice(h->pipe[0], NULL, dst, NULL, h->inpipe,
				   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
#else
			return -EINVAL; /* nothing is ever in a pipe without splice */
#endif
		if (k < 0) {
			if (errno == EAGAIN) {
				dr->wr = false;
				return 0;
			}
			if (errno == EINTR)
				continue;
			return -errno;
		}
		gw_half_count(h, (uint64_t)k);
		if (h->slen) {
			h->soff += (uint32_t)k;
			if (h->soff == h->slen) {
				free(h->stash);
				h->stash = NULL;
				h->slen = h->soff = 0;
			}
		} else {
			h->inpipe -= (uint32_t)k;
		}
	}
	return 1;
}

/* @h's upload budget is spent: does @src have a byte more (-EDQUOT), its end (0), or nothing
 * yet (-EAGAIN)? Peeked, never read: nothing of it goes anywhere */
static ssize_t upload_spent(struct gw_half *h, int src, struct gw_ready *sr)
{
	uint8_t b;
	ssize_t n = gw_sock_recv(src, &b, 1, MSG_PEEK | MSG_DONTWAIT);

	if (n > 0)
		return -EDQUOT;
	if (n == 0) {
		h->eof = true;
		return 0;
	}
	if (errno == EAGAIN)
		sr->rd = false;
	return -errno;
}

ssize_t gw_move_once(struct gw_pool *p, struct gw_half *h, int src, struct gw_ready *sr, int dst,
		     struct gw_ready *dr, size_t want, bool lean)
{
	ssize_t n;
	int r;

	if (h->up) {
		uint64_t room = gw_upload_room(h->up);

		if (!room)
			return upload_spent(h, src, sr);
		if (want > room)
			want = (size_t)room;
	}
	/* a bulk direction without a pipe when the pipes' share is used up (or no descriptor is
	 * left) copies this chunk through the buffer, as a small read is */
	if (h->bulk && !lean && h->pipe[0] < 0 && gw_pipe_get(p, h->pipe))
		lean = true;
	if (lean && want > GW_COPY_MAX)
		want = GW_COPY_MAX;
	if (h->bulk && !lean) {
#ifdef __linux__
		n = splice(src, NULL, h->pipe[1], NULL, want, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
#else
		return -EINVAL;		/* bulk is never set without splice */
#endif
	} else {
		n = gw_sock_recv(src, p->copybuf, want, MSG_DONTWAIT);
	}
	if (n < 0) {
		if (errno == EAGAIN)
			sr->rd = false;
		return -errno;
	}
	if (n == 0) {
		h->eof = true;
		return 0;
	}
	if (h->up)
		gw_upload_charge(h->up, (uint64_t)n); /* before any of it is written */
	if (h->bulk && !lean) {
		h->inpipe = (uint32_t)n;
		return n;
	}
	if ((size_t)n < want) {
		/* a short copy read drained the socket; after the peer's FIN that is
		 * its end, no read for the 0 needed */
		sr->rd = false;
		if (sr->rdhup)
			h->eof = true;
	} else if (want == GW_COPY_MAX) {
		/* a full buffer: bulk from now on -- on Linux, where splice(2) moves it; other
		 * systems copy every byte through the buffer */
#ifdef __linux__
		h->bulk = true;
#endif
	}
	r = gw_copy_out(h, dst, dr, p->copybuf, (size_t)n);
	return r ? r : n;
}

void gw_pass_end(struct gw_half *h, const struct gw_half *other, int dst)
{
	if (h->eof && !h->inpipe && !h->slen && !h->shut) {
		if (!other->shut && !h->keep_open)
			gw_sock_shutdown(dst, SHUT_WR);
		h->shut = true;
	}
}

int gw_pump(struct gw_pool *p, struct gw_half *h, const struct gw_half *other, int src,
	    struct gw_ready *sr, int dst, struct gw_ready *dr, int64_t *budget, bool lean)
{
	int round, r = 0;

	for (round = 0; round < GW_ROUNDS; round++) {
		size_t want = h->bulk ? GW_CHUNK : GW_COPY_MAX;
		ssize_t n;

		r = gw_drain_half(h, dst, dr);
		if (r <= 0)
			break;
		r = 0;
		if (h->eof || !sr->rd || !dr->wr)
			break;
		if (budget && *budget >= 0 && (int64_t)want > *budget)
			want = (size_t)*budget;
		if (!want) {
			h->eof = true; /* absolute-form: the one request went out */
			break;
		}
		n = gw_move_once(p, h, src, sr, dst, dr, want, lean);
		if (n == -EINTR)
			continue;
		if (n == -EAGAIN || n == 0)
			break;
		if (n < 0) {
			r = (int)n;
			break;
		}
		if (budget && *budget >= 0)
			*budget -= n;
		if (lean && h->slen)
			break; /* what did not go out waits: no more reads this round */
	}
	if (h->pipe[0] >= 0 && !h->inpipe)
		gw_pipe_put(p, h); /* back to the pool while empty */
	if (r < 0)
		return r;
	gw_pass_end(h, other, dst);
	return round == GW_ROUNDS;
}

/* relay.h - the relay's mechanism (internal header): pools of pipes and peek
 * buffers, and the movers of one direction of a relayed connection -- small reads
 * copied through one buffer, bulk spliced through a pipe (relay.c). Nothing here
 * knows a connection: the callers (relayconn.c) pass a direction, its sockets and
 * their readiness. */
#ifndef WARDEN_GATEWAY_RELAY_H
#define WARDEN_GATEWAY_RELAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct gw_upload;

#define GW_PEEK_MAX 32768 /* a peek buffer: the longest first bytes read before deciding */
#define GW_BUF_POOL 64	  /* peek buffers kept for reuse */
#define GW_COPY_MAX 16384 /* reads up to this size are copied; a full one turns to splice */
#define GW_PIPE_POOL 256  /* empty pipes kept for reuse (within @max_pipes) */
#define GW_CHUNK 65536	  /* a bulk read (splice) */
#define GW_ROUNDS 16	  /* chunks per direction and wake-up */

/* one direction of a relay */
struct gw_half {
	int pipe[2];	 /* a pipe from the pool while bytes wait in it, else -1 */
	uint32_t inpipe; /* bytes waiting in the pipe */
	bool bulk;	 /* a read filled the copy buffer: splice from now on */
	bool eof;	 /* the source ended (or its budget is spent) */
	bool shut;	 /* shutdown(SHUT_WR) sent to the destination */
	bool keep_open;	 /* at its end, do not pass it on (a late denial is still to be said) */
	uint8_t *stash;	 /* copied bytes the destination did not take yet (heap) */
	uint32_t slen, soff;
	uint64_t bytes;
	uint64_t *total;      /* the run's counter these bytes are added to as they pass, or NULL */
	struct gw_upload *up; /* the upload budget each read is charged to (upload.h), or NULL */
};

/* what the edge-triggered events said about one socket; a flag is cleared
 * only once a read or write found the socket drained or full */
struct gw_ready {
	bool rd;    /* may have bytes (or an end) to read */
	bool wr;    /* may take bytes */
	bool rdhup; /* the peer's FIN arrived: a short read reached the end */
};

/**
 * struct gw_pool - what the relay reuses across connections
 * @pipes:	empty pipes (both ends), @npipes of @cap_pipes slots used
 * @npipes:	how many
 * @cap_pipes:	slots allocated
 * @live:	pipes open now: in use and kept
 * @max_pipes:	at most this many open at once (the worker's descriptor share for pipes,
 *		gw_fd_share(); SIZE_MAX after gw_pool_init()): past it a direction copies
 * @bufs:	free peek buffers (GW_PEEK_MAX bytes each)
 * @nbufs:	how many
 * @copybuf:	GW_COPY_MAX bytes: every small transfer goes through it
 */
struct gw_pool {
	int (*pipes)[2];
	size_t npipes, cap_pipes;
	size_t live, max_pipes;
	uint8_t *bufs[GW_BUF_POOL];
	size_t nbufs;
	uint8_t *copybuf;
};

/**
 * gw_pool_init() - an empty pool with its copy buffer
 * Return: 0, or -ENOMEM.
 */
int gw_pool_init(struct gw_pool *p);

/** gw_pool_free() - close and free what @p keeps (a zeroed @p is fine). */
void gw_pool_free(struct gw_pool *p);

/**
 * gw_pipe_get() - a pipe for a direction that goes bulk: from the pool, else new
 * (non-blocking, CLOEXEC) while fewer than @p->max_pipes are open
 * Return: 0, or a negative errno (-EMFILE: the share is used up, or out of descriptors; the
 * caller copies instead).
 */
int gw_pipe_get(struct gw_pool *p, int fds[2]);

/** gw_pipe_put() - give @h's pipe back (kept when empty and there is room, else closed). */
void gw_pipe_put(struct gw_pool *p, struct gw_half *h);

/** gw_buf_get() - a peek buffer of GW_PEEK_MAX bytes, or NULL (out of memory). */
uint8_t *gw_buf_get(struct gw_pool *p);

/** gw_buf_put() - give a peek buffer back (NULL is fine). */
void gw_buf_put(struct gw_pool *p, uint8_t *b);

/* gw_half_count() - @n more bytes passed in direction @h (and in its run's total). */
static inline void gw_half_count(struct gw_half *h, uint64_t n)
{
	h->bytes += n;
	if (h->total)
		*h->total += n;
}

/**
 * gw_copy_out() - send @n bytes of @b to @dst for half @h
 * @h:		the direction (what @dst does not take now waits in its stash)
 * @dst:	the destination socket
 * @dr:		its readiness (@dr->wr cleared when it is full)
 * @b:		the bytes
 * @n:		how many
 * Return: 0, or a negative errno.
 */
int gw_copy_out(struct gw_half *h, int dst, struct gw_ready *dr, const uint8_t *b, size_t n);

/**
 * gw_drain_half() - write out what waits in @h (its stash or its pipe) to @dst
 * Return: 1 when all went out, 0 when @dst is full, or a negative errno.
 */
int gw_drain_half(struct gw_half *h, int dst, struct gw_ready *dr);

/**
 * gw_move_once() - one read of at most @want bytes from @src for half @h, passed on to @dst
 * @p:		the pools (the copy buffer, pipes)
 * @h:		the direction
 * @src:	the source socket, @sr its readiness
 * @sr:		see @src
 * @dst:	the destination socket, @dr its readiness
 * @dr:		see @dst
 * @want:	most bytes to read
 * @lean:	the run holds too much (see relayconn.c): a copy read of at most
 *		GW_COPY_MAX, never into a pipe
 *
 * A copy read goes through @p->copybuf (recv/send; what @dst does not take waits
 * in @h's stash); a full one turns the half to bulk. A bulk read splices into a
 * pipe from the pool; gw_drain_half() sends it on. Without a pipe to be had (the
 * pool's share is used up, or no descriptor is left) a bulk read is copied as a lean
 * one is: slower, the same bytes and ends. A short copy read clears
 * @sr->rd and, after the peer's FIN, ends the source.
 *
 * With an upload budget (@h->up) a read is at most what the budget has left, and is
 * charged to it before anything is written; once nothing is left, a source with a
 * byte more to send is over the budget (-EDQUOT), one at its end simply ends.
 *
 * Return: bytes read (> 0), 0 at the source's end (@h->eof set), -EAGAIN when the
 * source is drained, -EINTR, -EDQUOT (the upload budget is spent and the source has
 * more), or another negative errno.
 */
ssize_t gw_move_once(struct gw_pool *p, struct gw_half *h, int src, struct gw_ready *sr, int dst,
		     struct gw_ready *dr, size_t want, bool lean);

/**
 * gw_pass_end() - the end of @h's source, once everything went out:
 * shutdown(SHUT_WR) to @dst -- unless @other ended too (close() sends the FIN
 * then) or @h is to be kept open (a denial still to be said on it)
 */
void gw_pass_end(struct gw_half *h, const struct gw_half *other, int dst);

/**
 * gw_pump() - move bytes from @src to @dst for half @h, at most GW_ROUNDS chunks
 * @p:		the pools
 * @h:		the direction; @other the opposite one
 * @other:	see @h
 * @src:	source socket and readiness
 * @sr:		see @src
 * @dst:	destination socket and readiness
 * @dr:		see @dst
 * @budget:	absolute-form proxy requests: bytes left, the source ends once spent;
 *		NULL: no limit
 * @lean:	copy reads only, and none once a read left bytes waiting (the half
 *		adds at most GW_COPY_MAX to what the run holds)
 *
 * A source is read only when nothing of it waits and the destination takes
 * bytes (see gw_move_once()). Pipes go back to the pool whenever they are empty.
 *
 * Return: 1 when the half has more to do but its rounds ran out, 0, or a negative errno
 * (-EDQUOT: past @h's upload budget, see gw_move_once()).
 */
int gw_pump(struct gw_pool *p, struct gw_half *h, const struct gw_half *other, int src,
	    struct gw_ready *sr, int dst, struct gw_ready *dr, int64_t *budget, bool lean);

#endif /* WARDEN_GATEWAY_RELAY_H */

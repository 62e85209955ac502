/* timer.c - time for the event loop, pure: a binary min-heap of deadlines (each
 * timer is embedded in its owner and knows its heap position, so cancel is
 * O(log n)) and a token bucket for rates. */
#include "gateway/ev.h"

#include <errno.h>
#include <stdlib.h>

void gw_timer_init(struct gw_timer *t, int kind, void *owner)
{
	t->when = 0;
	t->pos = GW_TIMER_IDLE;
	t->kind = kind;
	t->owner = owner;
}

static void put(struct gw_timer_heap *h, size_t i, struct gw_timer *t)
{
	h->v[i] = t;
	t->pos = i;
}

static void sift_up(struct gw_timer_heap *h, size_t i)
{
	struct gw_timer *t = h->v[i];

	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (h->v[parent]->when <= t->when)
			break;
		put(h, i, h->v[parent]);
		i = parent;
	}
	put(h, i, t);
}

static void sift_down(struct gw_timer_heap *h, size_t i)
{
	struct gw_timer *t = h->v[i];

	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		uint64_t mw = t->when;

		if (l < h->n && h->v[l]->when < mw) {
			m = l;
			mw = h->v[l]->when;
		}
		if (r < h->n && h->v[r]->when < mw)
			m = r;
		if (m == i)
			break;
		put(h, i, h->v[m]);
		i = m;
	}
	put(h, i, t);
}

static void remove_at(struct gw_timer_heap *h, size_t i)
{
	struct gw_timer *t = h->v[i];

	h->n--;
	if (i != h->n) {
		put(h, i, h->v[h->n]);
		if (i > 0 && h->v[(i - 1) / 2]->when > h->v[i]->when)
			sift_up(h, i);
		else
			sift_down(h, i);
	}
	t->pos = GW_TIMER_IDLE;
}

int gw_timer_arm(struct gw_timer_heap *h, struct gw_timer *t, uint64_t when)
{
	if (t->pos != GW_TIMER_IDLE) {
		size_t i = t->pos;
		uint64_t old = t->when;

		t->when = when;
		if (when < old)
			sift_up(h, i);
		else
			sift_down(h, i);
		return 0;
	}
	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 64;
		/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
		struct gw_timer **v = realloc(h->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		h->v = v;
		h->cap = cap;
	}
	t->when = when;
	put(h, h->n++, t);
	sift_up(h, h->n - 1);
	return 0;
}

void gw_timer_cancel(struct gw_timer_heap *h, struct gw_timer *t)
{
	if (t->pos == GW_TIMER_IDLE || t->pos >= h->n || h->v[t->pos] != t)
		return;
	remove_at(h, t->pos);
}

uint64_t gw_timer_next(const struct gw_timer_heap *h)
{
	return h->n ? h->v[0]->when : UINT64_MAX;
}

struct gw_timer *gw_timer_expired(struct gw_timer_heap *h, uint64_t now)
{
	struct gw_timer *t;

	if (!h->n || h->v[0]->when > now)
		return NULL;
	t = h->v[0];
	remove_at(h, 0);
	return t;
}

void gw_timer_heap_free(struct gw_timer_heap *h)
{
	for (size_t i = 0; i < h->n; i++)
		h->v[i]->pos = GW_TIMER_IDLE;
	free(h->v);
	h->v = NULL;
	h->n = h->cap = 0;
}

bool gw_bucket_take(struct gw_bucket *b, uint64_t now, unsigned burst, unsigned per_s)
{
	uint64_t full = (uint64_t)burst * 1000u;

	if (b->last_ns == 0 && b->tokens_milli == 0) {
		b->tokens_milli = (uint32_t)full;
	} else if (now > b->last_ns) {
		uint64_t dt = now - b->last_ns, add;

		if (dt > 1000000000000ull)
			dt = 1000000000000ull; /* 1000 s fill any bucket */
		add = dt * per_s / 1000000u;
		add += b->tokens_milli;
		b->tokens_milli = (uint32_t)(add > full ? full : add);
	}
	b->last_ns = now;
	if (b->tokens_milli < 1000)
		return false;
	b->tokens_milli -= 1000;
	return true;
}

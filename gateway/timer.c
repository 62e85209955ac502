/* timer.c - a binary min-heap of deadlines for the event loop; each timer is
 * embedded in its owner and knows its heap position, so cancel is O(log n). */
#include "gateway/gw.h"

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

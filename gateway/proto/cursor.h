/* cursor.h - a bounds-checked read cursor over a byte span, the only way the
 * protocol parsers in gateway/proto/ read their input (internal header).
 *
 * A cursor never reads outside [p, p + len). Every getter checks the remaining
 * length first; a short read sets the sticky @err flag, returns 0 (or NULL) and
 * leaves the position where it was, so a parser can do a run of reads and test
 * cur_ok() once at the end. Sub-cursors (cur_sub()) bound a length-prefixed
 * field: a lying inner length then fails inside the field instead of reading
 * the bytes that follow it.
 */
#ifndef WARDEN_GATEWAY_PROTO_CURSOR_H
#define WARDEN_GATEWAY_PROTO_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/**
 * struct cur - a read position inside a byte span
 * @p:		first byte of the span
 * @len:	bytes in the span
 * @off:	bytes consumed so far (always <= @len)
 * @err:	set by the first read that did not fit; stays set
 */
struct cur {
	const uint8_t *p;
	size_t len;
	size_t off;
	bool err;
};

static inline void cur_init(struct cur *c, const uint8_t *p, size_t len)
{
	c->p = p;
	c->len = p ? len : 0;
	c->off = 0;
	c->err = false;
}

static inline size_t cur_remaining(const struct cur *c)
{
	return c->len - c->off;
}

static inline bool cur_ok(const struct cur *c)
{
	return !c->err;
}

/* true when @n more bytes can be read; sets the error flag otherwise */
static inline bool cur_want(struct cur *c, size_t n)
{
	if (c->err || n > c->len - c->off) {
		c->err = true;
		return false;
	}
	return true;
}

static inline uint8_t cur_u8(struct cur *c)
{
	if (!cur_want(c, 1))
		return 0;
	return c->p[c->off++];
}

static inline uint16_t cur_u16(struct cur *c)
{
	uint16_t v;

	if (!cur_want(c, 2))
		return 0;
	v = (uint16_t)((unsigned)c->p[c->off] << 8 | c->p[c->off + 1]);
	c->off += 2;
	return v;
}

static inline uint32_t cur_u24(struct cur *c)
{
	uint32_t v;

	if (!cur_want(c, 3))
		return 0;
	v = (uint32_t)c->p[c->off] << 16 | (uint32_t)c->p[c->off + 1] << 8 | c->p[c->off + 2];
	c->off += 3;
	return v;
}

static inline uint32_t cur_u32(struct cur *c)
{
	uint32_t v;

	if (!cur_want(c, 4))
		return 0;
	v = (uint32_t)c->p[c->off] << 24 | (uint32_t)c->p[c->off + 1] << 16 |
	    (uint32_t)c->p[c->off + 2] << 8 | c->p[c->off + 3];
	c->off += 4;
	return v;
}

/* the next @n bytes (consumed), or NULL when fewer remain (n == 0 on an
 * empty span also yields a valid non-NULL pointer to nothing) */
static inline const uint8_t *cur_bytes(struct cur *c, size_t n)
{
	static const uint8_t nothing[1] = {0};
	const uint8_t *q;

	if (!cur_want(c, n))
		return NULL;
	if (!c->p)
		return nothing;
	q = c->p + c->off;
	c->off += n;
	return q;
}

static inline bool cur_skip(struct cur *c, size_t n)
{
	if (!cur_want(c, n))
		return false;
	c->off += n;
	return true;
}

/* byte at @i past the position without consuming it; 0 and error if absent */
static inline uint8_t cur_peek(struct cur *c, size_t i)
{
	if (!cur_want(c, i + 1))
		return 0;
	return c->p[c->off + i];
}

/* carve the next @n bytes off as their own cursor @sub (consumed from @c) */
static inline bool cur_sub(struct cur *c, size_t n, struct cur *sub)
{
	if (!cur_want(c, n)) {
		cur_init(sub, NULL, 0);
		sub->err = true;
		return false;
	}
	cur_init(sub, c->p ? c->p + c->off : NULL, n);
	c->off += n;
	return true;
}

#endif /* WARDEN_GATEWAY_PROTO_CURSOR_H */

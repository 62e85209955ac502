/* hash.c - one keyed hash (SipHash-2-4) and one hash table for every module.
 *
 * Names and addresses a sandbox chooses are hashed here. An unkeyed hash (FNV-1a, as the
 * tables had) lets a sandbox pick names that all land in one bucket and turn a shared
 * gateway's lookups quadratic; SipHash with a key drawn from getrandom(2) once per process
 * makes the buckets unpredictable.
 *
 * Theory of operation of struct wd_htable: open addressing with linear probing over a
 * power-of-two array of {hash, item} slots, at most half full (it doubles before that). The
 * table stores the caller's item pointers and the full 64-bit hash of each; it never looks
 * inside an item: lookups compare the stored hash first and ask the caller's eq() only on a
 * match. Several items may share a key (the policy matcher keeps one entry per rule); a
 * cursor walks them. Removal shifts the following entries of the run back (no tombstones),
 * so a lookup stops at the first empty slot; a sweep removes while it walks. A zeroed table
 * (never initialised, or freed) is an empty one: lookups find nothing and the first insert
 * allocates. Every probe of a lookup is counted in @probes,
 * for tests that prove a flood of colliding keys stays cheap in probes, not in time.
 */
#include "common/common.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

/* SipHash's state; the key is folded in once (struct sip of a key = its initial state) */
struct sip {
	uint64_t v0, v1, v2, v3;
};

static uint64_t load64(const uint8_t *p)
{
	uint64_t v = 0;

	/* little-endian by bytes: no <endian.h> needed (macOS has none); compilers make it one load
	 */
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void sip_key(struct sip *s, const uint8_t key[16])
{
	uint64_t k0 = load64(key), k1 = load64(key + 8);

	*s = (struct sip){k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL,
			  k0 ^ 0x6c7967656e657261ULL, k1 ^ 0x7465646279746573ULL};
}

static inline void sipround(struct sip *s)
{
	s->v0 += s->v1;
	s->v1 = ROTL(s->v1, 13);
	s->v1 ^= s->v0;
	s->v0 = ROTL(s->v0, 32);
	s->v2 += s->v3;
	s->v3 = ROTL(s->v3, 16);
	s->v3 ^= s->v2;
	s->v0 += s->v3;
	s->v3 = ROTL(s->v3, 21);
	s->v3 ^= s->v0;
	s->v2 += s->v1;
	s->v1 = ROTL(s->v1, 17);
	s->v1 ^= s->v2;
	s->v2 = ROTL(s->v2, 32);
}

/* SipHash-2-4 from the keyed state @k: 8-byte words, then the last 0-7 bytes with the
 * length in the top byte, 2 rounds each; 4 rounds to finish */
static uint64_t siphash24(const struct sip *k, const void *data, size_t len)
{
	const uint8_t *in = data, *end = in + (len & ~(size_t)7);
	struct sip s = *k;
	uint64_t m, b = (uint64_t)len << 56;

	for (; in < end; in += 8) {
		m = load64(in);
		s.v3 ^= m;
		sipround(&s);
		sipround(&s);
		s.v0 ^= m;
	}
	switch (len & 7) {
	case 7:
		b |= (uint64_t)in[6] << 48;
		/* fall through */
	case 6:
		b |= (uint64_t)in[5] << 40;
		/* fall through */
	case 5:
		b |= (uint64_t)in[4] << 32;
		/* fall through */
	case 4:
		b |= (uint64_t)in[3] << 24;
		/* fall through */
	case 3:
		b |= (uint64_t)in[2] << 16;
		/* fall through */
	case 2:
		b |= (uint64_t)in[1] << 8;
		/* fall through */
	case 1:
		b |= in[0];
		break;
	default:
		break;
	}
	s.v3 ^= b;
	sipround(&s);
	sipround(&s);
	s.v0 ^= b;
	s.v2 ^= 0xff;
	for (int i = 0; i < 4; i++)
		sipround(&s);
	return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

uint64_t wd_siphash24(const uint8_t key[16], const void *data, size_t len)
{
	struct sip k;

	sip_key(&k, key);
	return siphash24(&k, data, len);
}

static struct sip process_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static atomic_bool key_ready;

static void key_init(void)
{
	uint8_t key[16];
	size_t got = 0;

	while (got < sizeof(key)) {
#ifdef __linux__
		ssize_t n = getrandom(key + got, sizeof(key) - got, 0);
#else
		/* macOS: getentropy(2) fills at most 256 bytes at once, all or nothing */
		ssize_t n = getentropy(key + got, sizeof(key) - got) == 0
				? (ssize_t)(sizeof(key) - got)
				: -1;
#endif

		if (n > 0)
			got += (size_t)n;
		else if (n < 0 && errno != EINTR)
			abort(); /* no randomness: a predictable table is a flaw, not a fallback */
	}
	sip_key(&process_key, key);
	atomic_store_explicit(&key_ready, true, memory_order_release);
}

uint64_t wd_hash(const void *data, size_t len)
{
	/* the flag spares each call pthread_once()'s function call once the key is drawn */
	if (!atomic_load_explicit(&key_ready, memory_order_acquire))
		pthread_once(&key_once, key_init);
	return siphash24(&process_key, data, len);
}

uint64_t wd_hash_str(const char *s)
{
	return wd_hash(s, strlen(s));
}

/* ------------------------------------------------------------------ the table */

struct wd_hslot {
	uint64_t hash;
	void *item; /* NULL: empty */
};

int wd_htable_init(struct wd_htable *t, size_t hint)
{
	size_t size = 16;

	memset(t, 0, sizeof(*t));
	while (size < hint * 2 && size < ((size_t)1 << 40))
		size *= 2;
	t->slots = calloc(size, sizeof(*t->slots));
	if (!t->slots)
		return -ENOMEM;
	t->mask = size - 1;
	return 0;
}

void wd_htable_free(struct wd_htable *t)
{
	if (!t)
		return;
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

static void place(struct wd_hslot *slots, size_t mask, uint64_t hash, void *item)
{
	size_t i = (size_t)hash & mask;

	while (slots[i].item)
		i = (i + 1) & mask;
	slots[i].hash = hash;
	slots[i].item = item;
}

static int grow(struct wd_htable *t)
{
	size_t size = t->slots ? (t->mask + 1) * 2 : 16;
	struct wd_hslot *s = calloc(size, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; t->slots && i <= t->mask; i++)
		if (t->slots[i].item)
			place(s, size - 1, t->slots[i].hash, t->slots[i].item);
	free(t->slots);
	t->slots = s;
	t->mask = size - 1;
	return 0;
}

int wd_htable_insert(struct wd_htable *t, uint64_t hash, void *item)
{
	if (!item)
		return -EINVAL;
	if (!t->slots || (t->n + 1) * 2 > t->mask + 1) {
		int r = grow(t);

		if (r)
			return r;
	}
	place(t->slots, t->mask, hash, item);
	t->n++;
	return 0;
}

void *wd_htable_next(struct wd_htable *t, size_t *cursor, uint64_t hash,
		     bool (*eq)(const void *item, const void *key), const void *key)
{
	size_t i = *cursor ? (*cursor - 1) & t->mask : (size_t)hash & t->mask;

	if (!t->slots)
		return NULL;
	for (; t->slots[i].item; i = (i + 1) & t->mask) {
		t->probes++;
		if (t->slots[i].hash == hash && (!eq || eq(t->slots[i].item, key))) {
			/* the next call resumes after this slot */
			*cursor = ((i + 1) & t->mask) + 1;
			return t->slots[i].item;
		}
	}
	*cursor = i + 1;
	return NULL;
}

void *wd_htable_find(struct wd_htable *t, uint64_t hash,
		     bool (*eq)(const void *item, const void *key), const void *key)
{
	size_t cursor = 0;

	return wd_htable_next(t, &cursor, hash, eq, key);
}

/* empty slot @i, then shift back each later entry of its run whose home slot does not lie
 * cyclically in (hole, entry]: only slots after @i move, each to an earlier one */
static void remove_at(struct wd_htable *t, size_t i)
{
	size_t j, home;

	t->slots[i].item = NULL;
	for (j = (i + 1) & t->mask; t->slots[j].item; j = (j + 1) & t->mask) {
		home = (size_t)t->slots[j].hash & t->mask;
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			t->slots[i] = t->slots[j];
			t->slots[j].item = NULL;
			i = j;
		}
	}
	t->n--;
}

int wd_htable_remove(struct wd_htable *t, uint64_t hash, const void *item)
{
	size_t i = (size_t)hash & t->mask;

	if (!t->slots)
		return -ENOENT;
	for (; t->slots[i].item != item; i = (i + 1) & t->mask)
		if (!t->slots[i].item)
			return -ENOENT;
	remove_at(t, i);
	return 0;
}

size_t wd_htable_sweep(struct wd_htable *t, bool (*drop)(void *item, void *ctx), void *ctx)
{
	size_t start = 0, removed = 0;

	if (!t->slots || !t->n)
		return 0;
	/* start after an empty slot (there is one: at most half full), so no run of entries
	 * wraps past the start; removal only moves entries of the current run from later
	 * slots to earlier ones at or after the hole, so re-examining the hole's slot visits
	 * every entry exactly once */
	while (t->slots[start].item)
		start++;
	for (size_t k = 1; k <= t->mask; k++) {
		size_t i = (start + k) & t->mask;

		while (t->slots[i].item && drop(t->slots[i].item, ctx)) {
			remove_at(t, i);
			removed++;
		}
	}
	return removed;
}

void *wd_htable_each(const struct wd_htable *t, size_t *cursor)
{
	for (size_t i = *cursor; t->slots && i <= t->mask; i++)
		if (t->slots[i].item) {
			*cursor = i + 1;
			return t->slots[i].item;
		}
	*cursor = t->mask + 1;
	return NULL;
}

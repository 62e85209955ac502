/* learn.c - a learn-mode run's table of what it reached (learn.h): entries kept in the order
 * first seen, found by a keyed hash of (host, port, proto); a second index by host alone
 * says which resolved names were also connected to (those are not reported as `dns`). Pure:
 * no I/O, no clock. */
#include "gateway/learn.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static const char *const proto_names[GW_LEARN_N] = {
    [GW_LEARN_TLS] = "tls",
    [GW_LEARN_HTTP] = "http",
    [GW_LEARN_RAW] = "raw",
    [GW_LEARN_DNS] = "dns",
};

const char *gw_learn_proto_name(enum gw_learn_proto p)
{
	return (unsigned)p < GW_LEARN_N ? proto_names[p] : NULL;
}

struct key {
	const char *host;
	uint16_t port;
	uint8_t proto;
};

static uint64_t key_hash(const char *host, uint16_t port, uint8_t proto)
{
	uint8_t tail[3] = {(uint8_t)(port >> 8), (uint8_t)port, proto};
	char buf[GW_LEARN_HOST_MAX + 3];
	size_t n = strlen(host);

	memcpy(buf, host, n);
	memcpy(buf + n, tail, sizeof(tail));
	return wd_hash(buf, n + sizeof(tail));
}

static bool entry_is(const void *item, const void *k)
{
	const struct gw_learn_entry *e = item;
	const struct key *key = k;

	return e->port == key->port && e->proto == key->proto && !strcmp(e->host, key->host);
}

static bool host_is(const void *item, const void *k)
{
	return !strcmp(((const struct gw_learn_entry *)item)->host, k);
}

/* @in lower-cased without one trailing dot into @out (GW_LEARN_HOST_MAX + 1 bytes).
 * Return: its length, or 0 (empty or too long) */
static size_t normal(const char *in, char *out)
{
	size_t n = in ? strnlen(in, GW_LEARN_HOST_MAX + 2) : 0;

	if (n && in[n - 1] == '.')
		n--;
	if (!n || n > GW_LEARN_HOST_MAX)
		return 0;
	for (size_t i = 0; i < n; i++)
		out[i] = (char)tolower((unsigned char)in[i]);
	out[n] = '\0';
	return n;
}

/* the latest refusal reason, cut to GW_LEARN_WHY_MAX bytes. Return: 0 or -ENOMEM */
static int set_refused(struct gw_learn_entry *e, const char *why)
{
	size_t n = strnlen(why, GW_LEARN_WHY_MAX);
	char *s = malloc(n + 1);

	if (!s)
		return -ENOMEM;
	memcpy(s, why, n);
	s[n] = '\0';
	free(e->refused);
	e->refused = s;
	return 0;
}

/* a new entry for @k, in both indexes. Return: it, or NULL (-ENOMEM) */
static struct gw_learn_entry *add(struct gw_learn *l, const struct key *k, size_t hlen, uint64_t h)
{
	struct gw_learn_entry *e;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct gw_learn_entry **v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		l->v = v;
		l->cap = cap;
	}
	e = calloc(1, sizeof(*e) + hlen + 1);
	if (!e)
		return NULL;
	memcpy(e->host, k->host, hlen + 1);
	e->port = k->port;
	e->proto = k->proto;
	if (wd_htable_insert(&l->idx, h, e)) {
		free(e);
		return NULL;
	}
	if (k->proto != GW_LEARN_DNS && wd_htable_insert(&l->hosts, wd_hash_str(e->host), e)) {
		(void)wd_htable_remove(&l->idx, h, e);
		free(e);
		return NULL;
	}
	l->v[l->n++] = e;
	return e;
}

int gw_learn_note(struct gw_learn *l, const char *host, uint16_t port, enum gw_learn_proto proto,
		  const char *refused)
{
	char name[GW_LEARN_HOST_MAX + 1];
	size_t hlen = normal(host, name);
	struct key k = {.host = name, .port = proto == GW_LEARN_DNS ? 0 : port, .proto = proto};
	struct gw_learn_entry *e;
	uint64_t h;

	if (!hlen || (unsigned)proto >= GW_LEARN_N)
		return -EINVAL;
	h = key_hash(name, k.port, k.proto);
	e = wd_htable_find(&l->idx, h, entry_is, &k);
	if (!e) {
		if (l->n >= GW_LEARN_MAX) {
			l->dropped++;
			return -E2BIG;
		}
		e = add(l, &k, hlen, h);
		if (!e) {
			l->dropped++;
			return -ENOMEM;
		}
	}
	e->count++;
	if (!refused)
		e->allowed++;
	else if (set_refused(e, refused))
		return -ENOMEM; /* counted; the older reason (if any) stays */
	return 0;
}

struct json_t *gw_learn_json(struct gw_learn *l)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < l->n; i++) {
		const struct gw_learn_entry *e = l->v[i];
		json_t *o;

		/* names resolved minus names connected to */
		if (e->proto == GW_LEARN_DNS &&
		    wd_htable_find(&l->hosts, wd_hash_str(e->host), host_is, e->host))
			continue;
		o = json_pack("{s:s, s:i, s:s, s:I}", "host", e->host, "port", (int)e->port,
			      "proto", proto_names[e->proto], "count", (json_int_t)e->count);
		if (o && !e->allowed && e->refused)
			json_object_set_new(o, "refused", json_string(e->refused));
		if (!o || json_array_append_new(a, o)) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

void gw_learn_free(struct gw_learn *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i]->refused);
		free(l->v[i]);
	}
	free(l->v);
	wd_htable_free(&l->idx);
	wd_htable_free(&l->hosts);
	memset(l, 0, sizeof(*l));
}

/* udpflow.c - the UDP relay's flows: a table keyed by the client's address and port (the keyed
 * hash: the keys come from the sandbox), bounded as a whole and per run, each flow holding a
 * few datagrams while its destination is found and decided, and the idle sweep.
 *
 * Theory of operation: a datagram from a client with no flow makes one (GW_UF_LOOKUP) if the
 * bounds allow; while conntrack names its destination and the policy, the resolver and (for
 * QUIC) the rest of the ClientHello decide it, its datagrams are held in order, at most
 * GW_UDP_HOLD_MAX of them and GW_UDP_HOLD_BYTES in all; more are dropped and counted. Once
 * allowed (GW_UF_OPEN) the held ones go upstream first; once denied (GW_UF_DENIED) the flow
 * stays, dropping what comes, until it is idle, so that a client repeating itself is audited
 * once. Every flow ends idle: the caller sweeps with gw_udpflow_idle() and writes the flow's
 * closing audit event with its byte counts. No sockets and no clock here.
 */
#include "gateway/udpflow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* the key: family, address and port */
struct fkey {
	const struct gw_addr *a;
	uint16_t port;
};

static uint64_t key_hash(const struct gw_addr *a, uint16_t port)
{
	uint8_t k[19];
	size_t n = gw_addr_len(a->family);

	k[0] = (uint8_t)a->family;
	k[1] = (uint8_t)(port >> 8);
	k[2] = (uint8_t)port;
	memcpy(k + 3, a->a, n);
	return wd_hash(k, 3 + n);
}

static bool flow_eq(const void *item, const void *key)
{
	const struct gw_udpflow *f = item;
	const struct fkey *k = key;

	return f->cport == k->port && gw_addr_eq(&f->client, k->a);
}

int gw_udpflows_init(struct gw_udpflows *t, size_t max)
{
	memset(t, 0, sizeof(*t));
	if (!max)
		return -EINVAL;
	t->max = max;
	return wd_htable_init(&t->index, max < 1024 ? max : 1024);
}

struct gw_udpflow *gw_udpflow_find(struct gw_udpflows *t, const struct gw_addr *client,
				   uint16_t cport)
{
	struct fkey k = {client, cport};

	if (!gw_addr_len(client->family))
		return NULL;
	return wd_htable_find(&t->index, key_hash(client, cport), flow_eq, &k);
}

int gw_udpflow_add(struct gw_udpflows *t, const struct gw_addr *client, uint16_t cport, void *run,
		   size_t *run_flows, size_t run_max, uint64_t now_ms, struct gw_udpflow **out)
{
	struct gw_udpflow *f;

	if (!gw_addr_len(client->family))
		return -EINVAL;
	if (gw_udpflow_find(t, client, cport))
		return -EEXIST;
	if (t->n >= t->max || (run_max && run_flows && *run_flows >= run_max))
		return -ENOSPC;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->client = *client;
	f->cport = cport;
	f->run = run;
	f->state = GW_UF_LOOKUP;
	f->fd = -1;
	f->opened_ms = f->last_ms = now_ms;
	f->hash = key_hash(client, cport);
	if (wd_htable_insert(&t->index, f->hash, f)) {
		free(f);
		return -ENOMEM;
	}
	t->n++;
	if (run_flows)
		(*run_flows)++;
	*out = f;
	return 0;
}

static void flow_free(struct gw_udpflow *f)
{
	struct gw_udp_held *h;

	while ((h = gw_udpflow_take(f)))
		free(h);
	free(f);
}

void gw_udpflow_del(struct gw_udpflows *t, struct gw_udpflow *f, size_t *run_flows)
{
	if (!f)
		return;
	if (!wd_htable_remove(&t->index, f->hash, f)) {
		t->n--;
		if (run_flows && *run_flows)
			(*run_flows)--;
	}
	flow_free(f);
}

int gw_udpflow_hold(struct gw_udpflow *f, const uint8_t *buf, size_t len)
{
	struct gw_udp_held *h;

	if (len > GW_UDP_DATAGRAM_MAX) {
		f->dropped++;
		return -EMSGSIZE;
	}
	if (f->nheld >= GW_UDP_HOLD_MAX || len > GW_UDP_HOLD_BYTES - f->held_bytes) {
		f->dropped++;
		return -ENOBUFS;
	}
	h = malloc(sizeof(*h) + len);
	if (!h) {
		f->dropped++;
		return -ENOMEM;
	}
	h->next = NULL;
	h->len = len;
	if (len)
		memcpy(h->data, buf, len);
	if (f->held_tail)
		f->held_tail->next = h;
	else
		f->held = h;
	f->held_tail = h;
	f->nheld++;
	f->held_bytes += len;
	return 0;
}

struct gw_udp_held *gw_udpflow_take(struct gw_udpflow *f)
{
	struct gw_udp_held *h = f->held;

	if (!h)
		return NULL;
	f->held = h->next;
	if (!f->held)
		f->held_tail = NULL;
	f->nheld--;
	f->held_bytes -= h->len;
	h->next = NULL;
	return h;
}

size_t gw_udpflow_idle(const struct gw_udpflows *t, uint64_t now_ms, uint64_t idle_ms,
		       struct gw_udpflow **out, size_t max)
{
	size_t cursor = 0, n = 0;
	struct gw_udpflow *f;

	while (n < max && (f = wd_htable_each(&t->index, &cursor)))
		if (now_ms >= f->last_ms && now_ms - f->last_ms >= idle_ms)
			out[n++] = f;
	return n;
}

static bool drop_all(void *item, void *ctx)
{
	(void)ctx;
	flow_free(item);
	return true;
}

void gw_udpflows_free(struct gw_udpflows *t)
{
	wd_htable_sweep(&t->index, drop_all, NULL);
	wd_htable_free(&t->index);
	t->n = 0;
}

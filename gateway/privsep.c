/* privsep.c - the parent <-> worker channel's messages, pure: a SOCK_SEQPACKET socketpair
 * carrying fixed-size typed messages. The parent hands the worker its listening sockets, the
 * audit log and the NFLOG socket in one message with the descriptors attached (SCM_RIGHTS);
 * afterwards the worker asks the parent to add or remove a run's nft set elements
 * (struct gw_priv_run), to plumb a user's namespace (daemon mode) or to move a process into a
 * run's cgroup, and the parent answers each. Every message is encoded and checked field by
 * field here, by pure functions; one that is not exactly right is fatal. Sending, receiving
 * and what only the kernel can say (a descriptor's kind, a namespace's owner, a peer's
 * credentials) are privio.c's. */
#include "gateway/privsep.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

int gw_priv_check(const struct gw_priv_msg *m, size_t len, unsigned nfds)
{
	unsigned seen = 0;

	if (len != sizeof(*m) || m->magic != GW_PRIV_MAGIC || m->version != GW_PRIV_VERSION ||
	    m->type != GW_PRIV_LISTENERS || m->count != nfds || m->count == 0 ||
	    m->count > GW_PRIV_KINDS || m->pad[0] || m->pad[1] || m->pad[2])
		return -EBADMSG;
	for (unsigned i = 0; i < m->count; i++) {
		if (m->kinds[i] >= GW_PRIV_KINDS || (seen & (1u << m->kinds[i])))
			return -EBADMSG;
		seen |= 1u << m->kinds[i];
	}
	for (unsigned i = m->count; i < GW_PRIV_KINDS; i++)
		if (m->kinds[i] != 0xff)
			return -EBADMSG;
	return 0;
}

/* ------------------------------------------------------------ run updates */

/* an interface name: 1..15 bytes of [A-Za-z0-9_.-], NUL-terminated, zero-filled */
static bool ifname_ok(const char *f, size_t size)
{
	size_t n = strnlen(f, size);

	if (n == 0 || n == size)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = f[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return false;
	}
	for (size_t i = n; i < size; i++)
		if (f[i])
			return false;
	return true;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

int gw_priv_run_encode(struct gw_priv_run *m, enum gw_priv_type type, uint32_t seq,
		       const char *ifname, const struct gw_addr *sb4, const struct gw_addr *sb6,
		       const struct gw_addr *h4, const struct gw_addr *h6)
{
	memset(m, 0, sizeof(*m));
	m->magic = GW_PRIV_MAGIC;
	m->version = GW_PRIV_VERSION;
	m->type = (uint16_t)type;
	m->seq = seq;
	if (strlen(ifname) >= sizeof(m->ifname))
		return -EINVAL;
	strcpy(m->ifname, ifname);
	if (sb4 && sb4->family == AF_INET) {
		m->flags |= GW_PRIV_HAS_V4;
		memcpy(m->v4, sb4->a, 4);
		if (h4 && h4->family == AF_INET)
			memcpy(m->h4, h4->a, 4);
	}
	if (sb6 && sb6->family == AF_INET6) {
		m->flags |= GW_PRIV_HAS_V6;
		memcpy(m->v6, sb6->a, 16);
		if (h6 && h6->family == AF_INET6)
			memcpy(m->h6, h6->a, 16);
	}
	return gw_priv_run_check(m, sizeof(*m)) ? -EINVAL : 0;
}

int gw_priv_run_check(const struct gw_priv_run *m, size_t len)
{
	if (len != sizeof(*m) || m->magic != GW_PRIV_MAGIC || m->version != GW_PRIV_VERSION ||
	    (m->type != GW_PRIV_RUN_ADD && m->type != GW_PRIV_RUN_DEL))
		return -EBADMSG;
	if (!m->flags || (m->flags & ~(GW_PRIV_HAS_V4 | GW_PRIV_HAS_V6)) ||
	    !all_zero(m->pad, sizeof(m->pad)))
		return -EBADMSG;
	if (!(m->flags & GW_PRIV_HAS_V4) ? !all_zero(m->v4, 4) || !all_zero(m->h4, 4)
					 : all_zero(m->v4, 4) || all_zero(m->h4, 4))
		return -EBADMSG;
	if (!(m->flags & GW_PRIV_HAS_V6) ? !all_zero(m->v6, 16) || !all_zero(m->h6, 16)
					 : all_zero(m->v6, 16) || all_zero(m->h6, 16))
		return -EBADMSG;
	return ifname_ok(m->ifname, sizeof(m->ifname)) ? 0 : -EBADMSG;
}

void gw_priv_run_facts(const struct gw_priv_run *m, struct gw_addr *sb4, struct gw_addr *sb6,
		       struct gw_addr *h4, struct gw_addr *h6)
{
	memset(sb4, 0, sizeof(*sb4));
	memset(sb6, 0, sizeof(*sb6));
	memset(h4, 0, sizeof(*h4));
	memset(h6, 0, sizeof(*h6));
	if (m->flags & GW_PRIV_HAS_V4) {
		sb4->family = h4->family = AF_INET;
		memcpy(sb4->a, m->v4, 4);
		memcpy(h4->a, m->h4, 4);
	}
	if (m->flags & GW_PRIV_HAS_V6) {
		sb6->family = h6->family = AF_INET6;
		memcpy(sb6->a, m->v6, 16);
		memcpy(h6->a, m->h6, 16);
	}
}

int gw_priv_reply_encode(struct gw_priv_reply *m, uint32_t seq, int status, const char *msg)
{
	memset(m, 0, sizeof(*m));
	if (status > 0 || status < -4095)
		return -EINVAL;
	m->magic = GW_PRIV_MAGIC;
	m->version = GW_PRIV_VERSION;
	m->type = GW_PRIV_RUN_REPLY;
	m->seq = seq;
	m->status = status;
	if (msg)
		snprintf(m->msg, sizeof(m->msg), "%s", msg);
	return 0;
}

int gw_priv_reply_check(const struct gw_priv_reply *m, size_t len, uint32_t seq)
{
	size_t n;

	if (len != sizeof(*m) || m->magic != GW_PRIV_MAGIC || m->version != GW_PRIV_VERSION ||
	    m->type != GW_PRIV_RUN_REPLY || m->seq != seq || m->status > 0 || m->status < -4095)
		return -EBADMSG;
	n = strnlen(m->msg, sizeof(m->msg));
	if (n == sizeof(m->msg) || !all_zero((const uint8_t *)m->msg + n, sizeof(m->msg) - n))
		return -EBADMSG;
	return 0;
}

/* ------------------------------------------------------------ namespaces (daemon mode) */

/* a token: printable ASCII without spaces, quotes or backslashes, NUL-terminated and
 * zero-filled within @size bytes */
static bool token_ok(const char *f, size_t size)
{
	size_t n = strnlen(f, size);

	if (n == 0 || n == size)
		return false;
	for (size_t i = 0; i < n; i++)
		if (f[i] <= ' ' || f[i] > '~' || f[i] == '"' || f[i] == '\\')
			return false;
	return all_zero((const uint8_t *)f + n, size - n);
}

/* a string of @size bytes: NUL-terminated, zero-filled after the NUL */
static bool cstr_ok(const char *f, size_t size)
{
	size_t n = strnlen(f, size);

	return n < size && all_zero((const uint8_t *)f + n, size - n);
}

bool gw_priv_id_ok(const char *id)
{
	size_t n = strnlen(id, GW_PRIV_ID_SIZE);

	if (n == 0 || n == GW_PRIV_ID_SIZE || id[0] == '.')
		return false;
	return strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

int gw_priv_netns_check(const struct gw_priv_netns *m, size_t len)
{
	if (len != sizeof(*m) || m->magic != GW_PRIV_MAGIC || m->version != GW_PRIV_VERSION ||
	    m->type != GW_PRIV_NETNS_ADD)
		return -EBADMSG;
	return token_ok(m->id, sizeof(m->id)) && gw_priv_id_ok(m->id) ? 0 : -EBADMSG;
}

int gw_priv_netns_reply_check(const struct gw_priv_netns_reply *m, size_t len, uint32_t seq)
{
	struct gw_priv_run run;

	if (len != sizeof(*m) || m->magic != GW_PRIV_MAGIC || m->version != GW_PRIV_VERSION ||
	    m->type != GW_PRIV_NETNS_REPLY || m->seq != seq || m->status > 0 || m->status < -4095 ||
	    !cstr_ok(m->msg, sizeof(m->msg)) || !all_zero(m->pad, 3))
		return -EBADMSG;
	for (int i = 0; i < GW_PRIV_CGROUPS; i++)
		if (!cstr_ok(m->cgroup[i], sizeof(m->cgroup[i])) || (m->status && m->cgroup[i][0]))
			return -EBADMSG;
	if (m->status)
		return all_zero((const uint8_t *)m->ifname, sizeof(m->ifname)) && !m->flags &&
			       all_zero(m->v4, 4) && all_zero(m->v6, 16) && all_zero(m->h4, 4) &&
			       all_zero(m->h6, 16)
			   ? 0
			   : -EBADMSG;
	/* the facts of a success are those of a run update */
	memset(&run, 0, sizeof(run));
	run.magic = GW_PRIV_MAGIC;
	run.version = GW_PRIV_VERSION;
	run.type = GW_PRIV_RUN_ADD;
	run.flags = m->flags;
	memcpy(run.ifname, m->ifname, sizeof(run.ifname));
	memcpy(run.v4, m->v4, 4);
	memcpy(run.v6, m->v6, 16);
	memcpy(run.h4, m->h4, 4);
	memcpy(run.h6, m->h6, 16);
	return gw_priv_run_check(&run, sizeof(run));
}

int gw_priv_join_encode(struct gw_priv_join *m, uint32_t seq, const char *ifname, pid_t pid)
{
	memset(m, 0, sizeof(*m));
	m->magic = GW_PRIV_MAGIC;
	m->version = GW_PRIV_VERSION;
	m->type = GW_PRIV_CGROUP_JOIN;
	m->seq = seq;
	m->pid = (int32_t)pid;
	if (strlen(ifname) >= sizeof(m->ifname))
		return -EINVAL;
	strcpy(m->ifname, ifname);
	return gw_priv_join_check(m, sizeof(*m)) ? -EINVAL : 0;
}

int gw_priv_join_check(const struct gw_priv_join *m, size_t len)
{
	if (len != sizeof(*m) || m->magic != GW_PRIV_MAGIC || m->version != GW_PRIV_VERSION ||
	    m->type != GW_PRIV_CGROUP_JOIN || m->pid < 2)
		return -EBADMSG;
	return ifname_ok(m->ifname, sizeof(m->ifname)) ? 0 : -EBADMSG;
}

/* ------------------------------------------------------------ conntrack (the UDP relay) */

/* @a: a family's address in 16 bytes, the ones past its length zero */
static bool addr16_ok(int family, const uint8_t *a)
{
	size_t n = gw_addr_len(family);

	return n && all_zero(a + n, 16 - n);
}

int gw_priv_ct_encode(struct gw_priv_ct *m, uint32_t seq, const struct gw_ct_tuple *reply)
{
	size_t n = gw_addr_len(reply->src.family);

	memset(m, 0, sizeof(*m));
	if (!n || reply->dst.family != reply->src.family)
		return -EINVAL;
	m->magic = GW_PRIV_MAGIC;
	m->version = GW_PRIV_VERSION;
	m->type = GW_PRIV_CT_GET;
	m->seq = seq;
	m->family = (uint8_t)reply->src.family;
	m->gw_port = reply->sport;
	m->client_port = reply->dport;
	memcpy(m->gw, reply->src.a, n);
	memcpy(m->client, reply->dst.a, n);
	return gw_priv_ct_check(m, sizeof(*m), NULL) ? -EINVAL : 0;
}

int gw_priv_ct_check(const struct gw_priv_ct *m, size_t len, struct gw_ct_tuple *reply)
{
	size_t n;

	if (len != sizeof(*m) || m->magic != GW_PRIV_MAGIC || m->version != GW_PRIV_VERSION ||
	    m->type != GW_PRIV_CT_GET || !all_zero(m->pad, sizeof(m->pad)) || !m->client_port ||
	    !m->gw_port || !addr16_ok(m->family, m->client) || !addr16_ok(m->family, m->gw))
		return -EBADMSG;
	if (reply) {
		n = gw_addr_len(m->family);
		memset(reply, 0, sizeof(*reply));
		reply->src.family = reply->dst.family = m->family;
		memcpy(reply->src.a, m->gw, n);
		memcpy(reply->dst.a, m->client, n);
		reply->sport = m->gw_port;
		reply->dport = m->client_port;
	}
	return 0;
}

int gw_priv_ct_reply_encode(struct gw_priv_ct_reply *m, uint32_t seq, int status,
			    const struct gw_addr *dst, uint16_t port)
{
	memset(m, 0, sizeof(*m));
	m->magic = GW_PRIV_MAGIC;
	m->version = GW_PRIV_VERSION;
	m->type = GW_PRIV_CT_REPLY;
	m->seq = seq;
	m->status = status;
	if (!status) {
		size_t n = dst ? gw_addr_len(dst->family) : 0;

		if (!n)
			return -EINVAL;
		m->family = (uint8_t)dst->family;
		m->port = port;
		memcpy(m->dst, dst->a, n);
	}
	return gw_priv_ct_reply_check(m, sizeof(*m), seq) ? -EINVAL : 0;
}

int gw_priv_ct_reply_check(const struct gw_priv_ct_reply *m, size_t len, uint32_t seq)
{
	if (len != sizeof(*m) || m->magic != GW_PRIV_MAGIC || m->version != GW_PRIV_VERSION ||
	    m->type != GW_PRIV_CT_REPLY || m->seq != seq || m->status > 0 || m->status < -4095 ||
	    m->pad[0])
		return -EBADMSG;
	if (m->status)
		return !m->family && !m->port && all_zero(m->dst, sizeof(m->dst)) ? 0 : -EBADMSG;
	return m->port && addr16_ok(m->family, m->dst) ? 0 : -EBADMSG;
}

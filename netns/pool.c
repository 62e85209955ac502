/* pool.c - the pure parts of netns/: prefixes (common/net.c's parser, as a
 * struct netns_prefix), carving a slot into addresses, run names, and libnl
 * error conversion. No I/O here. */
#include "netns/netns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netlink/errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

static const char *const stage_names[NETNS_STAGE_COUNT] = {
    [NETNS_STAGE_SLOT] = "slot",       [NETNS_STAGE_BIRTH] = "birth",
    [NETNS_STAGE_MOUNT] = "mount",     [NETNS_STAGE_VETH] = "veth",
    [NETNS_STAGE_HARDEN] = "harden",   [NETNS_STAGE_HOST] = "host",
    [NETNS_STAGE_SANDBOX] = "sandbox",
};

const char *netns_stage_name(enum netns_stage stage)
{
	if ((unsigned)stage >= NETNS_STAGE_COUNT)
		return "?";
	return stage_names[stage];
}

void netns_pool_config_defaults(struct netns_pool_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->pool4.family = AF_INET;
	cfg->pool4.v4.s_addr = htonl(0x0ad50000); /* 10.213.0.0 */
	cfg->pool4.len = 16;
	cfg->run4_len = 30;
	cfg->pool6.family = AF_INET6;
	cfg->pool6.v6 = (struct in6_addr){
	    .s6_addr = {0xfd, 0x77, 0x77, 0x64, 0x6e, 0x00}}; /* fd77:7764:6e00:: */
	cfg->pool6.len = 48;
	cfg->run6_len = 64;
	cfg->state_dir = "/run/warden/alloc";
	cfg->netns_dir = "/run/netns";
	cfg->bind_mount = true;
	snprintf(cfg->ifname_prefix, sizeof(cfg->ifname_prefix), "wd-");
}

int netns_parse_prefix(const char *text, struct netns_prefix *ret)
{
	struct netns_prefix p = {0};
	struct wd_cidr c;

	if (!text || wd_cidr_parse(text, 0, &c) != WD_CIDR_OK)
		return -EINVAL;
	p.family = c.family;
	memcpy(c.family == AF_INET ? (void *)&p.v4 : (void *)&p.v6, c.addr, wd_addr_len(c.family));
	p.len = c.prefix;
	*ret = p;
	return 0;
}

int netns_format_prefix(const struct netns_prefix *p, char *out, size_t outlen)
{
	const void *a = p->family == AF_INET ? (const void *)&p->v4 : (const void *)&p->v6;

	return wd_cidr_format(p->family, a, p->len, out, outlen);
}

/* 2^bits, capped at NETNS_MAX_SLOTS. */
static uint32_t slots_for(unsigned bits)
{
	return bits >= 20 ? NETNS_MAX_SLOTS : (uint32_t)1 << bits;
}

static bool prefix_char_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

static int check_ifname_prefix(const char *prefix)
{
	size_t n = strnlen(prefix, NETNS_PREFIX_MAX + 1);

	if (n == 0 || n > NETNS_PREFIX_MAX)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!prefix_char_ok(prefix[i]))
			return -EINVAL;
	return 0;
}

int netns_pool_check(const struct netns_pool_config *cfg, uint32_t *ret_slots, struct wd_err *err)
{
	uint32_t n4, n6;

	if (cfg->pool4.family != AF_INET || cfg->pool4.len > 32)
		return wd_err_set(err, -EINVAL, "IPv4 pool: not an IPv4 prefix");
	if (cfg->run4_len != 30 && cfg->run4_len != 31)
		return wd_err_set(err, -EINVAL, "IPv4 run prefix /%u: must be /30 or /31",
				  cfg->run4_len);
	if (cfg->pool4.len > cfg->run4_len)
		return wd_err_set(err, -EINVAL, "IPv4 pool /%u is smaller than one run's /%u",
				  cfg->pool4.len, cfg->run4_len);
	if (!wd_prefix_is_network(AF_INET, (const uint8_t *)&cfg->pool4.v4, cfg->pool4.len))
		return wd_err_set(err, -EINVAL, "IPv4 pool has host bits set");
	if (cfg->pool6.family != AF_INET6 || cfg->pool6.len > 128)
		return wd_err_set(err, -EINVAL, "IPv6 pool: not an IPv6 prefix");
	if (cfg->run6_len != 64 && cfg->run6_len != 127)
		return wd_err_set(err, -EINVAL, "IPv6 run prefix /%u: must be /64 or /127",
				  cfg->run6_len);
	if (cfg->pool6.len > cfg->run6_len)
		return wd_err_set(err, -EINVAL, "IPv6 pool /%u is smaller than one run's /%u",
				  cfg->pool6.len, cfg->run6_len);
	if (!wd_prefix_is_network(AF_INET6, cfg->pool6.v6.s6_addr, cfg->pool6.len))
		return wd_err_set(err, -EINVAL, "IPv6 pool has host bits set");
	if (check_ifname_prefix(cfg->ifname_prefix) < 0)
		return wd_err_set(err, -EINVAL,
				  "interface prefix \"%s\": need 1 to %d characters of [a-z0-9_-]",
				  cfg->ifname_prefix, NETNS_PREFIX_MAX);
	if (!cfg->state_dir || cfg->state_dir[0] != '/')
		return wd_err_set(err, -EINVAL, "allocation state dir must be an absolute path");
	if (cfg->bind_mount && (!cfg->netns_dir || cfg->netns_dir[0] != '/'))
		return wd_err_set(err, -EINVAL, "namespace dir must be an absolute path");
	n4 = slots_for(cfg->run4_len - cfg->pool4.len);
	n6 = slots_for(cfg->run6_len - cfg->pool6.len);
	if (ret_slots)
		*ret_slots = n4 < n6 ? n4 : n6;
	return 0;
}

/* Add @v shifted left by @shift bits to the 128-bit big-endian @a, with carry. */
static void add_shifted(struct in6_addr *a, uint64_t v, unsigned shift)
{
	unsigned carry = 0;

	for (int i = 15; i >= 0; i--) {
		unsigned bitpos = (unsigned)(15 - i) * 8; /* weight of byte i */
		unsigned byte = 0;

		if (bitpos + 8 > shift && bitpos < shift + 64) {
			int s = (int)bitpos - (int)shift;

			byte = (unsigned)((s >= 0 ? v >> s : v << -s) & 0xff);
		}
		byte += a->s6_addr[i] + carry;
		a->s6_addr[i] = (uint8_t)byte;
		carry = byte >> 8;
	}
}

int netns_slot_addrs(const struct netns_pool_config *cfg, uint32_t slot, struct netns_addrs *ret)
{
	uint32_t slots = 0, net4;
	struct netns_addrs a;

	if (netns_pool_check(cfg, &slots, NULL) < 0)
		return -EINVAL;
	if (slot >= slots)
		return -ERANGE;
	memset(&a, 0, sizeof(a));
	net4 = ntohl(cfg->pool4.v4.s_addr) + (slot << (32 - cfg->run4_len));
	a.host4.s_addr = htonl(net4 + (cfg->run4_len == 30 ? 1 : 0));
	a.sbx4.s_addr = htonl(net4 + (cfg->run4_len == 30 ? 2 : 1));
	a.len4 = cfg->run4_len;
	a.host6 = cfg->pool6.v6;
	add_shifted(&a.host6, slot, 128 - cfg->run6_len);
	if (cfg->run6_len == 64)
		add_shifted(&a.host6, 1, 0);
	a.sbx6 = a.host6;
	add_shifted(&a.sbx6, 1, 0);
	a.len6 = cfg->run6_len;
	*ret = a;
	return 0;
}

int netns_format_names(const char *prefix, const uint8_t *rnd, size_t nrnd,
		       char ret_id[NETNS_ID_MAX], char ret_ifname[IFNAMSIZ])
{
	static const char hex[] = "0123456789abcdef";
	char id[NETNS_ID_MAX];
	size_t plen, idlen;

	if (check_ifname_prefix(prefix) < 0 || nrnd < 4)
		return -EINVAL;
	plen = strlen(prefix);
	idlen = IFNAMSIZ - 1 - plen;
	if (idlen > NETNS_ID_MAX - 1)
		idlen = NETNS_ID_MAX - 1;
	if (idlen > nrnd * 2)
		idlen = nrnd * 2;
	for (size_t i = 0; i < idlen; i++)
		id[i] = hex[(rnd[i / 2] >> (i % 2 ? 0 : 4)) & 0xf];
	id[idlen] = '\0';
	memcpy(ret_id, id, idlen + 1);
	memcpy(ret_ifname, prefix, plen);
	memcpy(ret_ifname + plen, id, idlen + 1);
	return 0;
}

/* libnl error codes (NLE_*) to errno; every libnl 3.7 code is listed. */
static const int nl_errno_table[NLE_MAX + 1] = {
    [NLE_SUCCESS] = 0,
    [NLE_FAILURE] = EIO,
    [NLE_INTR] = EINTR,
    [NLE_BAD_SOCK] = EBADF,
    [NLE_AGAIN] = EAGAIN,
    [NLE_NOMEM] = ENOMEM,
    [NLE_EXIST] = EEXIST,
    [NLE_INVAL] = EINVAL,
    [NLE_RANGE] = ERANGE,
    [NLE_MSGSIZE] = EMSGSIZE,
    [NLE_OPNOTSUPP] = EOPNOTSUPP,
    [NLE_AF_NOSUPPORT] = EAFNOSUPPORT,
    [NLE_OBJ_NOTFOUND] = ENOENT,
    [NLE_NOATTR] = ENODATA,
    [NLE_MISSING_ATTR] = EINVAL,
    [NLE_AF_MISMATCH] = EAFNOSUPPORT,
    [NLE_SEQ_MISMATCH] = EPROTO,
    [NLE_MSG_OVERFLOW] = EOVERFLOW,
    [NLE_MSG_TRUNC] = EMSGSIZE,
    [NLE_NOADDR] = EADDRNOTAVAIL,
    [NLE_SRCRT_NOSUPPORT] = EOPNOTSUPP,
    [NLE_MSG_TOOSHORT] = EPROTO,
    [NLE_MSGTYPE_NOSUPPORT] = EOPNOTSUPP,
    [NLE_OBJ_MISMATCH] = EINVAL,
    [NLE_NOCACHE] = ENOENT,
    [NLE_BUSY] = EBUSY,
    [NLE_PROTO_MISMATCH] = EPROTONOSUPPORT,
    [NLE_NOACCESS] = EACCES,
    [NLE_PERM] = EPERM,
    [NLE_PKTLOC_FILE] = ENOENT,
    [NLE_PARSE_ERR] = EINVAL,
    [NLE_NODEV] = ENODEV,
    [NLE_IMMUTABLE] = EROFS,
    [NLE_DUMP_INTR] = EAGAIN,
    [NLE_ATTRSIZE] = EINVAL,
};

int netns_errno_from_nl(int nlerr)
{
	unsigned code;

	if (nlerr >= 0)
		return 0;
	code = (unsigned)-(long)nlerr;
	if (code >= WD_ARRAY_SIZE(nl_errno_table) || nl_errno_table[code] == 0)
		return -EIO;
	return -nl_errno_table[code];
}

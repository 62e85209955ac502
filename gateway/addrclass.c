/* addrclass.c - the SSRF guard's address classifier: which special-purpose
 * range an upstream address lies in (a const table, first match wins). */
#include "common/common.h"
#include "gateway/addr.h"

#include <errno.h>
#include <string.h>

bool gw_prefix_contains(const struct gw_addr *net, unsigned prefix, const struct gw_addr *a)
{
	return net->family == a->family && wd_prefix_contains(net->family, net->a, prefix, a->a);
}

int gw_cidr_parse(const char *s, struct gw_addr *net, unsigned *prefix)
{
	struct wd_cidr c;

	if (wd_cidr_parse(s, 0, &c) != WD_CIDR_OK)
		return -EINVAL;
	net->family = c.family;
	memcpy(net->a, c.addr, sizeof(net->a));
	*prefix = c.prefix;
	return 0;
}

/* the ranges as bytes (no text to parse per lookup); the comment is the range */
static const struct {
	int family;
	uint8_t net[16];
	unsigned prefix;
	enum gw_addr_class cls;
} ranges[] = {
    {AF_INET, {0}, 8, GW_ADDR_UNSPECIFIED},			      /* 0.0.0.0/8 */
    {AF_INET, {127}, 8, GW_ADDR_LOOPBACK},			      /* 127.0.0.0/8 */
    {AF_INET, {10}, 8, GW_ADDR_PRIVATE},			      /* 10.0.0.0/8 */
    {AF_INET, {172, 16}, 12, GW_ADDR_PRIVATE},			      /* 172.16.0.0/12 */
    {AF_INET, {192, 168}, 16, GW_ADDR_PRIVATE},			      /* 192.168.0.0/16 */
    {AF_INET, {100, 64}, 10, GW_ADDR_CGNAT},			      /* 100.64.0.0/10 */
    {AF_INET, {169, 254}, 16, GW_ADDR_LINK_LOCAL},		      /* 169.254.0.0/16 */
    {AF_INET, {224}, 4, GW_ADDR_MULTICAST},			      /* 224.0.0.0/4 */
    {AF_INET, {240}, 4, GW_ADDR_RESERVED},			      /* 240.0.0.0/4 */
    {AF_INET, {192, 0, 0}, 24, GW_ADDR_RESERVED},		      /* 192.0.0.0/24 */
    {AF_INET6, {0}, 128, GW_ADDR_UNSPECIFIED},			      /* ::/128 */
    {AF_INET6, {[15] = 1}, 128, GW_ADDR_LOOPBACK},		      /* ::1/128 */
    {AF_INET6, {[10] = 0xff, [11] = 0xff}, 96, GW_ADDR_EMBEDDED_V4},  /* ::ffff:0:0/96 */
    {AF_INET6, {0}, 96, GW_ADDR_EMBEDDED_V4},			      /* ::/96 */
    {AF_INET6, {0, 0x64, 0xff, 0x9b}, 96, GW_ADDR_EMBEDDED_V4},	      /* 64:ff9b::/96 */
    {AF_INET6, {0, 0x64, 0xff, 0x9b, 0, 1}, 48, GW_ADDR_EMBEDDED_V4}, /* 64:ff9b:1::/48 */
    {AF_INET6, {0x20, 0x02}, 16, GW_ADDR_EMBEDDED_V4},		      /* 2002::/16 */
    {AF_INET6, {0x20, 0x01}, 32, GW_ADDR_EMBEDDED_V4},		      /* 2001::/32 */
    {AF_INET6, {0xfc}, 7, GW_ADDR_ULA},				      /* fc00::/7 */
    {AF_INET6, {0xfe, 0x80}, 10, GW_ADDR_LINK_LOCAL},		      /* fe80::/10 */
    {AF_INET6, {0xfe, 0xc0}, 10, GW_ADDR_PRIVATE},		      /* fec0::/10 */
    {AF_INET6, {0xff}, 8, GW_ADDR_MULTICAST},			      /* ff00::/8 */
    {AF_INET6, {0x01, 0x00}, 64, GW_ADDR_RESERVED},		      /* 100::/64 */
};

enum gw_addr_class gw_addr_classify(const struct gw_addr *a)
{
	for (size_t i = 0; i < WD_ARRAY_SIZE(ranges); i++)
		if (a->family == ranges[i].family &&
		    wd_prefix_contains(a->family, ranges[i].net, ranges[i].prefix, a->a))
			return ranges[i].cls;
	return GW_ADDR_PUBLIC;
}

static const char *const class_names[] = {
    [GW_ADDR_PUBLIC] = "public",
    [GW_ADDR_UNSPECIFIED] = "unspecified",
    [GW_ADDR_LOOPBACK] = "loopback",
    [GW_ADDR_PRIVATE] = "private",
    [GW_ADDR_CGNAT] = "carrier-grade NAT",
    [GW_ADDR_LINK_LOCAL] = "link-local",
    [GW_ADDR_MULTICAST] = "multicast",
    [GW_ADDR_RESERVED] = "reserved",
    [GW_ADDR_EMBEDDED_V4] = "IPv4-embedded IPv6",
    [GW_ADDR_ULA] = "unique local",
    [GW_ADDR_GATEWAY] = "the gateway's own",
};

const char *gw_addr_class_name(enum gw_addr_class c)
{
	if ((size_t)c >= WD_ARRAY_SIZE(class_names) || !class_names[c])
		return "?";
	return class_names[c];
}

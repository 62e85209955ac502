/* host.c - the gateway configuration's translations into the host's plumbing: the nft table's
 * configuration and the run networks' (host.h says why this is a library of its own). */
#include "conf/host.h"

#include <errno.h>
#include <stdio.h>
#include <sys/socket.h>

void conf_fw_config(const struct wd_gwconf *conf, struct fw_config *ret)
{
	struct netns_prefix s4, s6;

	fw_config_defaults(ret);
	snprintf(ret->table, sizeof(ret->table), "%s", conf->nft_table);
	snprintf(ret->if_prefix, sizeof(ret->if_prefix), "%s", conf->if_prefix);
	ret->port_transparent = conf->port_transparent;
	ret->port_dns = conf->port_dns;
	ret->port_proxy = conf->port_proxy;
	ret->port_udp = conf->port_udp;
	/* the synthetic pools the UDP relay's redirect matches (conf_parse() checked them) */
	if (!netns_parse_prefix(conf->synth_v4, &s4) && s4.family == AF_INET &&
	    !netns_parse_prefix(conf->synth_v6, &s6) && s6.family == AF_INET6) {
		ret->synth4 = s4.v4;
		ret->synth4_prefix = (uint8_t)s4.len;
		ret->synth6 = s6.v6;
		ret->synth6_prefix = (uint8_t)s6.len;
	} else {
		ret->port_udp = 0; /* no pools to redirect to: no relay rules */
	}
	ret->nflog_group = conf->nflog_group;
	ret->conns_per_run = conf->nft_conns_per_run;
	ret->new_per_s = conf->nft_new_per_s;
}

int conf_pool_config(const struct wd_gwconf *conf, struct netns_pool_config *ret)
{
	netns_pool_config_defaults(ret);
	if (netns_parse_prefix(conf->pool_v4, &ret->pool4) ||
	    netns_parse_prefix(conf->pool_v6, &ret->pool6))
		return -EINVAL;
	snprintf(ret->ifname_prefix, sizeof(ret->ifname_prefix), "%s", conf->if_prefix);
	return 0;
}

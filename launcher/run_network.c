/* run_network.c - the network stage of `warden run`: the run's network configuration from the
 * gateway configuration. */
#include "launcher/run.h"
#include "netns/netns.h"

#include <errno.h>
#include <stdio.h>

int run_netns_config(const struct wd_gwconf *conf, struct netns_pool_config *ret)
{
	netns_pool_config_defaults(ret);
	if (netns_parse_prefix(conf->pool_v4, &ret->pool4) ||
	    netns_parse_prefix(conf->pool_v6, &ret->pool6))
		return -EINVAL;
	snprintf(ret->ifname_prefix, sizeof(ret->ifname_prefix), "%s", conf->if_prefix);
	return 0;
}

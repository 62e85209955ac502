/* plumb.c - the gateway configuration's fields that shape the nft table, copied into a
 * struct fw_config (plumb.h says why this is a module of its own). */
#include "plumb/plumb.h"

#include <stdio.h>

void plumb_fw_config(const struct wd_gwconf *conf, struct fw_config *ret)
{
	fw_config_defaults(ret);
	snprintf(ret->table, sizeof(ret->table), "%s", conf->nft_table);
	snprintf(ret->if_prefix, sizeof(ret->if_prefix), "%s", conf->if_prefix);
	ret->port_transparent = conf->port_transparent;
	ret->port_dns = conf->port_dns;
	ret->port_proxy = conf->port_proxy;
	ret->nflog_group = conf->nflog_group;
	ret->conns_per_run = conf->nft_conns_per_run;
	ret->new_per_s = conf->nft_new_per_s;
}

/* host.h - what the gateway configuration asks of the host's plumbing, written once for both
 * privileged sides that build it: the launcher (`warden run` in root and rootless mode,
 * `warden nft`, `warden gc`) and `warden-gateway`'s privileged parent. The nft table's
 * configuration (struct fw_config, nft/) and the run networks' (struct netns_pool_config,
 * netns/), each from a struct wd_gwconf.
 *
 * A library of its own (wd_conf_host: links wd_conf, wd_nft, wd_netns) beside wd_conf: the
 * gateway's worker parses the configuration (wd_conf) and must map neither libnftnl nor libnl.
 */
#ifndef WARDEN_CONF_HOST_H
#define WARDEN_CONF_HOST_H

#include "conf/conf.h"
#include "netns/netns.h"
#include "nft/nft.h"

/**
 * conf_fw_config() - the nft table's configuration for a gateway configuration (pure)
 * @conf:	the gateway configuration (conf_load() or conf_defaults())
 * @ret:	filled in: fw_config_defaults(), then @conf's table name (nft.table), interface
 *		prefix (nft.interface_prefix), ports (ports.transparent, .dns, .proxy), NFLOG group
 *		(nft.nflog_group) and per-run conntrack limits (nft.conntrack_per_run,
 *		nft.conntrack_new_per_s)
 *
 * Checking the result is fw_config_check()'s (the config parser bounds each value already).
 */
void conf_fw_config(const struct wd_gwconf *conf, struct fw_config *ret);

/**
 * conf_pool_config() - the run networks' configuration for a gateway configuration (pure)
 * @conf:	the gateway configuration
 * @ret:	filled in: netns_pool_config_defaults(), then @conf's pools.runs_v4 and
 *		pools.runs_v6 and nft.interface_prefix (the caller sets what else it needs, such
 *		as bind_mount)
 *
 * Return: 0, or -EINVAL when a pool is not a valid prefix (then the interface prefix is not
 * copied).
 */
int conf_pool_config(const struct wd_gwconf *conf, struct netns_pool_config *ret);

#endif /* WARDEN_CONF_HOST_H */

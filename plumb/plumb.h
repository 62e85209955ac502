/* plumb.h - what the gateway configuration asks of the host's plumbing: the configuration of
 * the nft table (struct fw_config) from a struct wd_gwconf, written once for both privileged
 * sides that install and change the table: the launcher (`warden run`, `warden nft`, `warden
 * gc`) and `warden-gateway`'s privileged parent.
 *
 * It is a module of its own because neither side of the translation may see the other: nft/
 * uses only common/, policy/ only common/ and libyaml (ARCHITECTURE.md §1). plumb/ sits above
 * both and below gateway/ and launcher/, and links nothing but them: no libnl, so the
 * gateway's image does not map it by linking this.
 */
#ifndef WARDEN_PLUMB_H
#define WARDEN_PLUMB_H

#include "nft/nft.h"
#include "policy/policy.h"

/**
 * plumb_fw_config() - the nft table's configuration for a gateway configuration (pure)
 * @conf:	the gateway configuration (policy_gwconf_load() or policy_gwconf_defaults())
 * @ret:	filled in: fw_config_defaults(), then @conf's table name (nft.table), interface
 *		prefix (nft.interface_prefix), ports (ports.transparent, .dns, .proxy), NFLOG group
 *		(nft.nflog_group) and per-run conntrack limits (nft.conntrack_per_run,
 *		nft.conntrack_new_per_s)
 *
 * Checking the result is fw_config_check()'s (the config parser bounds each value already).
 */
void plumb_fw_config(const struct wd_gwconf *conf, struct fw_config *ret);

#endif /* WARDEN_PLUMB_H */

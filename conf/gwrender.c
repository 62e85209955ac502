/* gwrender.c - the gateway configuration written back as YAML (conf_render_yaml()): the
 * launcher hands an embedded gateway its configuration this way, the privileged parent its
 * worker. Every key conf_parse() reads is written, so a rendered file parses to the same
 * struct wd_gwconf. */
#include "conf/conf.h"

#include <errno.h>
#include <stdio.h>

int conf_render_yaml(const struct wd_gwconf *c, struct wd_buf *out)
{
	int ret = 0;

	ret |= wd_buf_printf(out, "version: %d\nmode: %s\n", POLICY_VERSION,
			     c->mode == WD_GW_PROXY ? "proxy" : "transparent");
	ret |= wd_buf_printf(out,
			     "ports:\n  transparent: %u\n  dns: %u\n"
			     "  proxy: %u\n  udp: %u\n",
			     c->port_transparent, c->port_dns, c->port_proxy, c->port_udp);
	ret |= wd_buf_printf(out,
			     "nft:\n  table: %s\n  interface_prefix: \"%s\"\n"
			     "  nflog_group: %u\n  conntrack_per_run: %u\n"
			     "  conntrack_new_per_s: %u\n",
			     c->nft_table, c->if_prefix, c->nflog_group, c->nft_conns_per_run,
			     c->nft_new_per_s);
	ret |= wd_buf_printf(out,
			     "pools:\n  runs_v4: \"%s\"\n  runs_v6: \"%s\"\n"
			     "  synthetic_v4: \"%s\"\n  synthetic_v6: \"%s\"\n",
			     c->pool_v4, c->pool_v6, c->synth_v4, c->synth_v6);
	if (c->audit_path[0] || c->audit_key[0] || c->audit_ship.kind != AUDIT_SINK_NONE)
		ret |= wd_buf_printf(out, "audit:\n  facility: %s\n",
				     audit_sink_facility_name(c->audit_ship.facility));
	if (c->audit_path[0]) {
		ret |= wd_buf_puts(out, "  path: ");
		ret |= wd_yaml_quote(out, c->audit_path);
		ret |= wd_buf_puts(out, "\n");
	}
	if (c->audit_key[0]) {
		ret |= wd_buf_puts(out, "  key: ");
		ret |= wd_yaml_quote(out, c->audit_key);
		ret |= wd_buf_puts(out, "\n");
	}
	if (c->audit_ship.kind != AUDIT_SINK_NONE) {
		char ship[160];

		ret |= audit_sink_format(&c->audit_ship, ship, sizeof(ship));
		ret |= wd_buf_puts(out, "  ship: ");
		ret |= wd_yaml_quote(out, ship);
		ret |= wd_buf_puts(out, "\n");
	}
	ret |= wd_buf_printf(out, "user: \"%s\"\n", c->user);
	if (c->nresolvers) {
		ret |= wd_buf_puts(out, "resolvers:\n");
		for (uint32_t i = 0; i < c->nresolvers; i++)
			ret |= wd_buf_printf(out, "  - \"%s\"\n", c->resolvers[i]);
	}
	ret |= wd_buf_puts(out, "control:\n  path: ");
	ret |= wd_yaml_quote(out, c->control_path);
	ret |= wd_buf_printf(out,
			     "\n  connections: %u\n  connections_per_user: %u\n"
			     "  request_timeout_ms: %u",
			     c->ctl_conns, c->ctl_conns_per_user, c->ctl_request_ms);
	ret |= wd_buf_printf(out, "\nlisten:\n  v4: \"%s\"\n  v6: \"%s\"\n", c->listen_v4,
			     c->listen_v6);
	ret |= wd_buf_printf(out,
			     "limits:\n  connections: %u\n  connections_per_run: %u\n"
			     "  peek_timeout_ms: %u\n  connect_timeout_ms: %u\n"
			     "  idle_timeout_s: %u\n  dns_ttl_floor_s: %u\n"
			     "  dns_ttl_ceiling_s: %u\n  audit_kib_per_run: %u\n"
			     "  socket_buffer_kib: %u\n  run_buffer_kib: %u\n"
			     "  udp_idle_timeout_s: %u\n",
			     c->max_conns, c->max_conns_per_run, c->peek_timeout_ms,
			     c->connect_timeout_ms, c->idle_timeout_s, c->dns_ttl_floor_s,
			     c->dns_ttl_ceiling_s, c->audit_kib_per_run, c->socket_buffer_kib,
			     c->run_buffer_kib, c->udp_idle_timeout_s);
	ret |= policy_ceiling_render(c->ceiling, out);
	return ret ? -ENOMEM : 0;
}

/* start.c - the gateway's last stage of start, once its configuration is read: the audit log's
 * copy to a sink (audit.ship), the listeners opened or adopted, the loop composed and served.
 * Two executables share it: the worker (worker.c: after privilege separation's hand-off, or as
 * the whole gateway without it) and the proxy-only gateway of systems without nftables
 * (main_proxy.c: macOS), so that a Mac's gateway serves through the same code as the Linux
 * worker run without privilege separation. */
#include "common/common.h"
#include "gateway/ctl.h"
#include "gateway/gw.h"
#include "gateway/sdnotify.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* audit.ship: a copy of every line to syslog or journald (an unreachable sink is an outage the
 * log records, not a reason to stop) */
int gw_start_ship(const struct wd_gwconf *conf, struct audit_log *log)
{
	struct wd_err err;

	wd_err_clear(&err);
	if (conf->audit_ship.kind == AUDIT_SINK_NONE)
		return 0;
	if (audit_log_ship(log, &conf->audit_ship, "warden-gateway", &err)) {
		wd_log(WD_LOG_ERR, "%s", err.msg);
		return -1;
	}
	return 0;
}

/* gw_start_on_ready()'s and gw_start_on_stop()'s hooks */
static void (*ready_fn)(void *arg);
static void *ready_arg;
static void (*stop_fn)(struct gw *g, void *arg);
static void *stop_arg;

void gw_start_on_stop(void (*fn)(struct gw *g, void *arg), void *arg)
{
	stop_fn = fn;
	stop_arg = arg;
}

void gw_start_on_ready(void (*fn)(void *arg), void *arg)
{
	ready_fn = fn;
	ready_arg = arg;
}

int gw_start_serve(const struct wd_gwconf *conf, struct gw_fds *fds, struct audit_log *log,
		   int priv, bool manage_nft, const struct gw_ctl_req *boot)
{
	struct wd_err err;
	struct gw *g = NULL;
	char why[1200] = "";
	int r;

	wd_err_clear(&err);
	r = gw_new(conf, fds, log, &g, &err);
	if (r) {
		wd_log(WD_LOG_ERR, "%s", err.msg);
		if (priv >= 0)
			close(priv);
		return 1;
	}
	if (priv >= 0 && (r = gw_set_parent(g, priv, manage_nft))) {
		wd_log(WD_LOG_ERR, "the channel to the parent: %s", strerror(-r));
		close(priv);
		gw_free(g);
		return 1;
	}
	if (boot && (r = gw_register_boot(g, boot, geteuid(), why, sizeof(why)))) {
		wd_log(WD_LOG_ERR, "--run: run %s: %s", boot->id, why[0] ? why : strerror(-r));
		gw_free(g);
		return 1;
	}
	if (conf->mode == WD_GW_PROXY)
		wd_log(WD_LOG_INFO, "serving: proxy mode, proxy %s%s%s:%u, control %s",
		       conf->listen_v4, conf->listen_v4[0] && conf->listen_v6[0] ? " " : "",
		       conf->listen_v6, conf->port_proxy, conf->control_path);
	else
		wd_log(WD_LOG_INFO, "serving: transparent :%u, dns :%u, proxy :%u, control %s%s",
		       conf->port_transparent, conf->port_dns, conf->port_proxy, conf->control_path,
		       manage_nft ? ", managing nft run elements" : "");
	if (ready_fn)
		ready_fn(ready_arg);
	r = gw_serve(g);
	if (stop_fn)
		stop_fn(g, stop_arg);
	gw_free(g);
	if (r == -EBADMSG || r == -EPIPE) {
		wd_log(WD_LOG_ERR, "the channel to the privileged parent failed (%s): stopping",
		       strerror(-r));
		return 1;
	}
	if (r) {
		wd_log(WD_LOG_ERR, "event loop: %s", strerror(-r));
		return 1;
	}
	return 0;
}

int gw_start_standalone(const struct wd_gwconf *conf, bool nflog, int listen_from, int listen_fds,
			const struct gw_ctl_req *boot)
{
	struct wd_gwconf own = *conf;
	struct audit_log *log = NULL;
	struct wd_err err;
	struct gw_fds fds;
	int ret;

	wd_err_clear(&err);
	if (audit_log_open(conf->audit_path, &log, &err)) {
		wd_log(WD_LOG_ERR, "%s", err.msg);
		return 1;
	}
	audit_log_chain(log);
	if (gw_start_ship(conf, log)) {
		audit_log_close(log);
		return 1;
	}
	if (listen_fds)
		own.listen_v4[0] = own.listen_v6[0] = '\0';
	ret = gw_fds_open(&own, conf->control_path, &fds, &err);
	if (!ret && listen_fds) {
		ret = gw_fds_inherit(conf, listen_from, listen_fds, &fds, &err);
		if (ret) {
			gw_fds_close(&fds);
			unlink(conf->control_path);
		}
	}
	if (ret) {
		wd_log(WD_LOG_ERR, "%s", err.msg);
		audit_log_close(log);
		return 1;
	}
#ifdef __linux__
	if (nflog && conf->mode != WD_GW_PROXY && geteuid() == 0 && fds.nflog < 0 &&
	    gw_nflog_open(conf->nflog_group, &fds.nflog, &err))
		wd_log(WD_LOG_WARN, "%s: dropped UDP is not audited", err.msg);
	/* ready, as warden-gateway says it with privilege separation (main.c): every socket is
	 * bound and listening. Here this process is the service's main one (warden-gateway
	 * exec'd it in its place), so the readiness is its to send. */
	{
		char notify[GW_NOTIFY_MAX];

		if (gw_notify_take(notify, sizeof(notify)) < 0)
			wd_log(WD_LOG_WARN, "NOTIFY_SOCKET is not an AF_UNIX path or @name: no "
					    "readiness notification will be sent");
		else if ((ret = gw_notify_send(notify, "READY=1\nSTATUS=serving")) < 0)
			wd_log(WD_LOG_WARN, "readiness notification to %s: %s", notify,
			       strerror(-ret));
	}
#else
	(void)nflog; /* no NFLOG: proxy mode only */
#endif
	ret = gw_start_serve(conf, &fds, log, -1, false, boot);
	unlink(conf->control_path);
	audit_log_close(log);
	return ret;
}

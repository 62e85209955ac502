/* run_gwclient.c - what a run asks its gateway over the control socket (run_gw.c is the
 * client): which gateway it uses (a daemon, else an embedded one), register, whether the
 * gateway lists it, its counters at the end (denials, bytes), unregister; and what run.exit
 * says when the gateway died during the run. */
#include "run/internal.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

/* Longest wait for one control request of a run (connect + answer). */
#define GW_TIMEOUT_MS 3000

/* Which gateway: --gateway, else the daemon's socket if it answers, else an embedded one,
 * spawned now (it starts while the rest of the setup runs; run_gwclient_ready() waits for it). */
int run_gwclient_pick(struct run *r)
{
	struct wd_gwconf c = r->input.gwc;
	struct wd_err err;
	const char *daemon = r->o.gateway;
	int ret;

	if (r->mode->by_daemon)
		return 0; /* chosen by the mode, registered by the network stage */
	/* --gateway: no "stats" round trip, register is the first request and says the same when
	 * nobody answers; rootless: always embedded, on the sockets made inside the run's
	 * namespace; else the daemon when it answers */
	if (!daemon && !r->mode->gateway_inside &&
	    !run_gw_call_op(r->input.gwc.control_path, "stats", GW_TIMEOUT_MS, NULL))
		daemon = r->input.gwc.control_path;
	if (daemon) {
		snprintf(r->gateway.gw.socket, sizeof(r->gateway.gw.socket), "%s", daemon);
		r->gateway.gw_daemon = true;
		run_note(r, "gateway: the daemon on %s", daemon);
		return 0;
	}
	/* embedded: listen only on this run's host-side addresses, so embedded gateways of
	 * concurrent runs share the ports without clashing */
	snprintf(c.listen_v4, sizeof(c.listen_v4), "%s", r->network.host4);
	snprintf(c.listen_v6, sizeof(c.listen_v6), "%s", r->network.host6);
	wd_err_clear(&err);
	if (r->mode->gateway_inside) {
		/* the descriptors made (a Docker run's has no UDP relay's) */
		int lst[RUN_ROOTLESS_NGW], n = 0;

		for (int i = 0; i < RUN_ROOTLESS_NGW; i++)
			if (r->network.rl.listen[i] >= 0)
				lst[n++] = r->network.rl.listen[i];
		ret = run_gw_spawn(&r->gateway.gw, r->state_dir, &c, audit_log_path(r->audit.log),
				   lst, n, &err);
	} else
		ret = run_gw_spawn(&r->gateway.gw, r->state_dir, &c, audit_log_path(r->audit.log),
				   NULL, 0, &err);
	if (ret) {
		char why[PATH_MAX + 64], bin[PATH_MAX];
		bool none = ret == -ENOENT && run_gw_find_binary(bin, sizeof(bin));

		/* nothing ran, so the gateway said nothing: the fix is for the cause */
		return run_fail(r, "gateway",
				none ? run_gw_find_problem(why, sizeof(why))
				     : "`warden doctor` checks the gateway's installation",
				"embedded gateway: %s", err.msg);
	}
	r->rec.gw_pid = r->gateway.gw.pid;
	r->rec.gw_start = run_proc_start(r->gateway.gw.pid);
	run_state_save(r);
	return 0;
}

/* An embedded gateway answers (a daemon was checked by run_gwclient_pick()). */
int run_gwclient_ready(struct run *r)
{
	struct wd_err err;
	int ret;

	if (r->gateway.gw_daemon)
		return 0;
	wd_err_clear(&err);
	ret = run_gw_wait(&r->gateway.gw, &err);
	/* only an exit with output has the gateway's own words: quoted at the end of the line */
	if (ret)
		return run_fail(r, "gateway",
				ret == -ECHILD
				    ? "the gateway's own message ends the line above; "
				      "`warden doctor` checks its installation"
				    : "`warden doctor` checks the gateway's installation",
				"embedded gateway: %s", err.msg);
	return 0;
}

/* register with the interface and addresses the launcher made (root, rootless) */
static int register_made(struct run *r)
{
	const char *slash = strrchr(r->input.policy_abs, '/');
	json_t *req =
	    json_pack("{s:s, s:s, s:s, s:s, s:s%}", "op", "register", "id", r->id, "if",
		      r->network.net.ifname, "policy_name", slash ? slash + 1 : r->input.policy_abs,
		      "policy", r->input.policy_text, r->input.policy_len);
	json_t *ans = NULL, *narrowed, *it;
	char why[512];
	size_t i;
	int ret;

	if (!req)
		return run_fail(r, "gateway", NULL, "out of memory");
	if (r->network.host4[0]) {
		json_object_set_new(req, "host_v4", json_string(r->network.host4));
		json_object_set_new(req, "sandbox_v4", json_string(r->rec.sbx4));
	}
	if (r->network.host6[0]) {
		json_object_set_new(req, "host_v6", json_string(r->network.host6));
		json_object_set_new(req, "sandbox_v6", json_string(r->rec.sbx6));
	}
	if (r->learn)
		json_object_set_new(req, "learn", json_true());
	if (r->o.shadow)
		json_object_set_new(req, "shadow", json_true());
	/* network.ask: a person can answer (else the gateway denies asks at once) */
	if (run_ask_person(r))
		json_object_set_new(req, "asker", json_true());
	/* record first: a crash between the two still gets the run unregistered */
	snprintf(r->rec.gw_socket, sizeof(r->rec.gw_socket), "%s", r->gateway.gw.socket);
	run_state_save(r);
	ret = run_gw_call(r->gateway.gw.socket, req, GW_TIMEOUT_MS, &ans, why, sizeof(why));
	json_decref(req);
	/* what the host's ceiling changed in the policy (a gateway with a ceiling says) */
	narrowed = ans ? json_object_get(ans, "narrowed") : NULL;
	json_array_foreach(narrowed, i, it) if (!r->o.quiet && json_is_string(it))
	    wd_say(stderr, "warden run: the host's ceiling: %s", json_string_value(it));
	json_decref(ans);
	if (ret && r->o.gateway && ret != -EPERM && ret != -EBADMSG)
		return run_fail(r, "gateway",
				"start warden-gateway, or drop --gateway to use an embedded one",
				"no gateway answers on %s (%s)", r->o.gateway, strerror(-ret));
	if (ret)
		return run_fail(r, "gateway", "see the gateway's reason; pools.runs_* must match",
				"registering run %s: %s", r->id, why);
	r->gateway.registered = true;
	return 0;
}

int run_gwclient_register(struct run *r)
{
	if (r->mode->by_daemon)
		return 0; /* the network stage registered it with its namespace */
	return register_made(r);
}

bool run_gwclient_find(const struct json_t *ans, const char *id, struct run_counts *ret)
{
	json_t *it;
	bool found = false;
	size_t i;

	json_array_foreach(json_object_get(ans, "runs"), i, it)
	{
		const char *rid = json_string_value(json_object_get(it, "id"));

		if (!rid || strcmp(rid, id))
			continue;
		found = true;
		if (ret) {
			ret->denied = json_integer_value(json_object_get(it, "denied"));
			ret->up = json_integer_value(json_object_get(it, "bytes_up"));
			ret->down = json_integer_value(json_object_get(it, "bytes_down"));
		}
	}
	return found;
}

/* A registered run the gateway does not answer for (it died, or a daemon restarted and forgot
 * it) is recorded as r->gateway.gw_lost: run.exit then says its counts are incomplete. */
void run_gwclient_counters(struct run *r, struct run_counts *ret)
{
	json_t *ans = NULL;
	int err;

	*ret = (struct run_counts){-1, -1, -1};
	if (!r->gateway.registered)
		return;
	err = run_gw_call_op(r->gateway.gw.socket, "list", GW_TIMEOUT_MS, &ans);
	if (err) {
		if (!r->gateway.gw_lost)
			snprintf(r->gateway.gw_lost_why, sizeof(r->gateway.gw_lost_why),
				 "the gateway on %s no longer answers (%s): it died during the "
				 "run, so connections open then have no net.close and the "
				 "denial and byte counts are incomplete",
				 r->gateway.gw.socket, strerror(-err));
		r->gateway.gw_lost = true;
		return;
	}
	if (!run_gwclient_find(ans, r->id, ret) && !r->gateway.gw_lost) {
		snprintf(r->gateway.gw_lost_why, sizeof(r->gateway.gw_lost_why),
			 "the gateway on %s no longer lists the run (it restarted during it?): "
			 "the denial and byte counts are incomplete",
			 r->gateway.gw.socket);
		r->gateway.gw_lost = true;
	}
	json_decref(ans);
}

bool run_gwclient_lists(struct run *r)
{
	json_t *ans = NULL;
	bool found;

	if (run_gw_call_op(r->gateway.gw.socket, "list", GW_TIMEOUT_MS, &ans))
		return false;
	found = run_gwclient_find(ans, r->id, NULL);
	json_decref(ans);
	return found;
}

int run_gw_learned(struct run *r, json_t **ret)
{
	json_t *req, *ans = NULL, *arr;
	json_int_t dropped;
	char why[512];
	int err;

	if (!r->gateway.registered)
		return -ENOTCONN;
	if (!r->learn)
		return -EINVAL;
	/* a fresh connection, also in daemon mode: the daemon answers for its caller's own runs
	 * (SO_PEERCRED), and the held one carries event lines */
	req = json_pack("{s:s, s:s}", "op", "learned", "id", r->id);
	if (!req)
		return -ENOMEM;
	err = run_gw_call(r->gateway.gw.socket, req, GW_TIMEOUT_MS, &ans, why, sizeof(why));
	json_decref(req);
	if (err) {
		if (!r->o.quiet)
			wd_say(stderr, "warden: asking the gateway what the run reached: %s", why);
		return err;
	}
	arr = json_object_get(ans, "learned");
	if (!json_is_array(arr)) {
		json_decref(ans);
		return -EINVAL;
	}
	dropped = json_integer_value(json_object_get(ans, "dropped"));
	if (dropped > 0 && !r->o.quiet)
		wd_say(stderr,
		       "warden: the gateway recorded at most 4096 names and ports; %lld more "
		       "attempts are not in the trace",
		       (long long)dropped);
	*ret = json_incref(arr);
	json_decref(ans);
	return 0;
}

void run_gwclient_unregister(struct run *r)
{
	json_t *req;
	char why[256];

	if (!r->gateway.registered)
		return;
	if (r->gateway.gw_hold >= 0) {
		/* daemon mode: on the held connection, the run's last events drained before */
		if (run_daemon_unregister(r, GW_TIMEOUT_MS, why, sizeof(why)))
			wd_say(stderr, "warden run: teardown: unregister: %s", why);
		r->gateway.registered = false;
		return;
	}
	req = json_pack("{s:s, s:s}", "op", "unregister", "id", r->id);
	if (req && run_gw_call(r->gateway.gw.socket, req, GW_TIMEOUT_MS, NULL, why, sizeof(why)))
		wd_say(stderr, "warden run: teardown: unregister: %s", why);
	json_decref(req);
	r->gateway.registered = false;
}

/* The embedded gateway ended during the run (wait status @st): what run.exit will say. */
void run_gwclient_died(struct run *r, int st)
{
	char how[64];

	if (WIFSIGNALED(st))
		snprintf(how, sizeof(how), "killed by signal %d", WTERMSIG(st));
	else
		snprintf(how, sizeof(how), "exit status %d", WEXITSTATUS(st));
	snprintf(r->gateway.gw_lost_why, sizeof(r->gateway.gw_lost_why),
		 "the embedded gateway (pid %d) died during the run (%s): connections open "
		 "then have no net.close, and the denial and byte counts are incomplete",
		 (int)r->gateway.gw.pid, how);
	r->gateway.gw_lost = true;
}

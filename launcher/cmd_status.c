/* cmd_status.c - `warden status [--json]`: the caller's live runs (root: everyone's) with what
 * their gateway counts of them (its `list`); as root also what stays between runs by design
 * (the pool's networks and their holders, the `inet warden` table). The JSON keys are stable
 * (warden(1)).
 *
 * Every string of a row is the run's to choose (its command, its policy's name; a rootless
 * run's record is its user's file): the table prints each through wd_esc(), and the JSON
 * is ASCII with \u escapes, a string that is not UTF-8 mended (U+FFFD), never dropped. */
#include "launcher/cli.h"
#include "run/approval.h"
#include "run/live.h"
#include "run/pool.h"
#include "conf/host.h"
#include "nft/nft.h"

#include <jansson.h>
#include <pwd.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* bytes of the COMMAND column past which the words are left out (the old table cut there) */
#define STATUS_CMD_COLS 255

/* As root: the pool's networks (RUN_POOL_DIR) as [{id, state, pid, alive}], and the table's
 * name when it is installed in this network namespace (JSON null when not; a string "?"
 * when the ruleset cannot be read). Sets *@ret_pool and *@ret_table (new references). */
static void kept_json(json_t **ret_pool, json_t **ret_table)
{
	struct run_pool_info p[RUN_POOL_MAX * 4];
	struct wd_gwconf gwc;
	struct fw_config fc;
	json_t *a = json_array();
	size_t n = 0;
	int x;

	if (!run_pool_list(RUN_POOL_DIR, p, WD_ARRAY_SIZE(p), &n))
		for (size_t i = 0; a && i < n && i < WD_ARRAY_SIZE(p); i++)
			json_array_append_new(
			    a, json_pack("{s:s, s:s, s:I, s:b}", "id", p[i].id, "state", p[i].state,
					 "pid", (json_int_t)p[i].pid, "alive", p[i].alive));
	conf_defaults(&gwc);
	conf_fw_config(&gwc, &fc);
	x = fw_table_present(&fc, NULL);
	*ret_pool = a;
	*ret_table = x > 0 ? json_string(fc.table) : x == 0 ? json_null() : json_string("?");
}

/* the table view of kept_json()'s findings: a line each for the pool and the table */
static void print_kept(const json_t *pool, const json_t *table)
{
	size_t i, ready = 0;
	const json_t *e;
	struct wd_buf pids = WD_BUF_INIT;

	json_array_foreach(pool, i, e)
	{
		if (!json_is_true(json_object_get(e, "alive")))
			continue;
		ready++;
		wd_buf_printf(&pids, "%s%lld", pids.len ? " " : "",
			      (long long)json_integer_value(json_object_get(e, "pid")));
	}
	if (json_array_size(pool))
		printf("pool: %zu network%s, %zu held by %s processes (pid%s %s); warden gc --all "
		       "removes them\n",
		       json_array_size(pool), json_array_size(pool) == 1 ? "" : "s", ready,
		       RUN_POOL_HOLDER_NAME, ready == 1 ? "" : "s",
		       ready ? wd_buf_cstr(&pids) : "-");
	if (json_is_string(table))
		printf("nft: table inet %s %s (kept between runs); warden gc --all removes it\n",
		       json_string_value(table),
		       strcmp(json_string_value(table), "?") ? "installed" : "unknown");
	wd_buf_free(&pids);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: warden status [--json]\n"
		   "\n"
		   "List the live runs you may see (root: every run of this machine): id, user,\n"
		   "mode, state, age, open connections, bytes, denials, policy and command. With\n"
		   "--json, one JSON object {\"runs\": [...]} (keys in warden(1)).\n"
		   "As root, also what stays between runs by design: the pool's ready networks\n"
		   "and their holder processes, and the nft table inet warden (`warden gc --all`\n"
		   "removes them); in the JSON, \"pool\" and \"nft_table\".\n");
}

/* the counters of @lr from its gateway, or NULL (said in @why) */
static json_t *counters(const struct live_run *lr, char *why, size_t wsize)
{
	json_t *e = NULL;

	why[0] = '\0';
	if (lr->state != LIVE_RUNNING)
		return NULL;
	if (live_gw_list(lr, &e, why, wsize))
		return NULL;
	return e;
}

static json_t *num_or_null(const json_t *e, const char *key)
{
	const json_t *v = e ? json_object_get(e, key) : NULL;

	return json_is_integer(v) ? json_integer(json_integer_value(v)) : json_null();
}

/* @s as a JSON string; bytes that are not UTF-8 become U+FFFD (the run is listed still) */
static json_t *jstr(const char *s)
{
	struct wd_buf b = WD_BUF_INIT;
	json_t *j = json_string(s);
	size_t n = strlen(s);

	if (j)
		return j;
	for (size_t i = 0; i < n;) {
		int l = wd_utf8_seqlen(s + i, n - i);

		if (l > 0)
			wd_buf_append(&b, s + i, (size_t)l);
		else
			wd_buf_puts(&b, "\xef\xbf\xbd");
		i += l > 0 ? (size_t)l : 1;
	}
	j = json_string(wd_buf_cstr(&b));
	wd_buf_free(&b);
	return j;
}

/* one run as the JSON object warden(1) documents */
static json_t *run_json(const struct live_run *lr, const json_t *e, const char *why, time_t now)
{
	struct passwd pw, *pwr = NULL;
	char pwbuf[1024];
	json_t *cmd = json_loads(lr->rec.command, 0, NULL);
	json_t *o;

	if (cmd && !json_is_array(cmd)) { /* a record is its user's file: anything may be there */
		json_decref(cmd);
		cmd = NULL;
	}
	if (getpwuid_r(lr->rec.uid, &pw, pwbuf, sizeof(pwbuf), &pwr))
		pwr = NULL;
	o = json_pack("{s:o, s:I, s:o, s:o, s:s, s:I, s:I, s:I, s:o, s:o, s:o, s:o, s:o}", "id",
		      jstr(lr->rec.id), "uid", (json_int_t)lr->rec.uid, "user",
		      pwr ? jstr(pw.pw_name) : json_null(), "mode", jstr(lr->rec.mode), "state",
		      live_state_name(lr->state), "pid", (json_int_t)lr->rec.pid, "started",
		      (json_int_t)lr->rec.created, "age_s",
		      (json_int_t)(lr->rec.created && (unsigned long long)now >= lr->rec.created
				       ? (unsigned long long)now - lr->rec.created
				       : 0),
		      "command", cmd ? cmd : json_array(), "policy", jstr(lr->rec.policy),
		      "policy_name", jstr(lr->rec.policy_name), "gateway", jstr(lr->rec.gw_socket),
		      "started_by", jstr(lr->rec.started_by));
	if (!o)
		return NULL;
	json_object_set_new(o, "connections", num_or_null(e, "connections"));
	json_object_set_new(o, "connections_total", num_or_null(e, "connections_total"));
	json_object_set_new(o, "bytes_up", num_or_null(e, "bytes_up"));
	json_object_set_new(o, "bytes_down", num_or_null(e, "bytes_down"));
	json_object_set_new(o, "denied", num_or_null(e, "denied"));
	json_object_set_new(o, "dns_queries", num_or_null(e, "dns_queries"));
	json_object_set_new(o, "counts_error", why[0] ? json_string(why) : json_null());
	return o;
}

/* "1.2M" style byte counts for the table */
static void human(json_int_t v, char *out, size_t size)
{
	static const char units[] = "KMGTP";
	double d = (double)v / 1024;
	size_t u = 0;

	if (v < 1024) {
		snprintf(out, size, "%lld", (long long)v);
		return;
	}
	while (d >= 1024 && u + 1 < sizeof(units) - 1) {
		d /= 1024;
		u++;
	}
	snprintf(out, size, "%.1f%c", d, units[u]);
}

static void age_text(json_int_t s, char *out, size_t size)
{
	if (s < 120)
		snprintf(out, size, "%llds", (long long)s);
	else if (s < 7200)
		snprintf(out, size, "%lldm", (long long)(s / 60));
	else
		snprintf(out, size, "%lldh", (long long)(s / 3600));
}

/* one row of the table: @o's counters, @lr's own strings, each escaped (wd_esc()) */
static void print_row(const struct live_run *lr, const json_t *o)
{
	struct wd_buf id = WD_BUF_INIT, user = WD_BUF_INIT, mode = WD_BUF_INIT, pol = WD_BUF_INIT;
	struct wd_buf cmd = WD_BUF_INIT;
	char age[32], up[32], down[32], conns[32], den[32];
	const json_t *c = json_object_get(o, "command"), *w;
	const json_t *u = json_object_get(o, "user");
	size_t i;

	age_text(json_integer_value(json_object_get(o, "age_s")), age, sizeof(age));
	if (json_is_integer(json_object_get(o, "bytes_up"))) {
		human(json_integer_value(json_object_get(o, "bytes_up")), up, sizeof(up));
		human(json_integer_value(json_object_get(o, "bytes_down")), down, sizeof(down));
		snprintf(conns, sizeof(conns), "%lld",
			 (long long)json_integer_value(json_object_get(o, "connections")));
		snprintf(den, sizeof(den), "%lld",
			 (long long)json_integer_value(json_object_get(o, "denied")));
	} else {
		snprintf(up, sizeof(up), "-");
		snprintf(down, sizeof(down), "-");
		snprintf(conns, sizeof(conns), "-");
		snprintf(den, sizeof(den), "-");
	}
	/* the words as the run gave them, escaped one by one, cut at STATUS_CMD_COLS */
	json_array_foreach(c, i, w)
	{
		if (i)
			wd_buf_puts(&cmd, " ");
		if (wd_esc_append(&cmd, json_string_value(w) ? json_string_value(w) : "?", 0) < 0 ||
		    cmd.len > STATUS_CMD_COLS)
			break;
	}
	printf("%-12s %-10s %-8s %-8s %5s %5s %7s/%-7s %6s  %-16s %s\n", wd_esc(&id, lr->rec.id),
	       json_is_string(u) ? wd_esc(&user, json_string_value(u)) : "?",
	       wd_esc(&mode, lr->rec.mode), live_state_name(lr->state), age, conns, up, down, den,
	       wd_esc(&pol, lr->rec.policy_name), wd_buf_cstr(&cmd));
	wd_buf_free(&id);
	wd_buf_free(&user);
	wd_buf_free(&mode);
	wd_buf_free(&pol);
	wd_buf_free(&cmd);
}

static int pending_row(const struct run_approval_req *req, void *arg)
{
	unsigned *n = arg;

	if (req->state != RUN_APPROVAL_PENDING)
		return 0;
	if (!(*n)++)
		wd_say(stdout,
		       "\npending asks (warden approve ID, warden deny ID):\n%-32s  %-12s  %s",
		       "ID", "RUN", "NAME");
	wd_say(stdout, "%-32s  %-12s  %s", req->id, req->run[0] ? req->run : "(new runs)",
	       req->name);
	return 0;
}

/* the caller's approval store's pending requests: a run's asks (network.ask), warden mcp's */
static void print_pending(void)
{
	char why[400], dir[4096];
	struct stat st;
	unsigned n = 0;
	int fd = -1;

	/* no store, no asks: never made here (a status changes nothing) */
	if (run_approval_dir(dir, sizeof(dir)) || lstat(dir, &st) ||
	    run_approval_open_mine(&fd, why, sizeof(why)))
		return;
	(void)run_approval_list(fd, pending_row, &n);
	close(fd);
}

int cmd_status(int argc, char **argv)
{
	struct live_run *v = NULL;
	struct wd_err err;
	bool json = false;
	time_t now = time(NULL);
	json_t *runs, *pool = NULL, *table = NULL;
	size_t n;
	int ret;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			json = true;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return WD_EXIT_OK;
		} else {
			wd_say(stderr, "warden status: unknown argument '%s'", argv[i]);
			usage(stderr);
			return WD_EXIT_USAGE;
		}
	}
	wd_err_clear(&err);
	ret = live_runs_find(&v, &n, &err);
	if (ret) {
		wd_say(stderr, "warden status: %s", err.msg);
		return WD_EXIT_INTERNAL;
	}
	runs = json_array();
	for (size_t i = 0; runs && i < n; i++) {
		char why[400];
		json_t *e = counters(&v[i], why, sizeof(why));
		json_t *o = run_json(&v[i], e, why, now);

		json_decref(e);
		/* one object a run, in @v's order: a run left out would be a run hidden */
		if (!o || json_array_append_new(runs, o)) {
			json_decref(runs);
			runs = NULL;
		}
	}
	if (!runs) {
		free(v);
		fprintf(stderr, "warden status: out of memory\n");
		return WD_EXIT_INTERNAL;
	}
	if (geteuid() == 0)
		kept_json(&pool, &table);
	if (json) {
		json_t *doc = json_pack("{s:o}", "runs", runs);

		if (doc && pool) {
			json_object_set(doc, "pool", pool);
			json_object_set(doc, "nft_table", table);
		}
		char *s = doc ? json_dumps(doc, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;

		if (s)
			printf("%s\n", s);
		free(s);
		json_decref(doc);
		json_decref(pool);
		json_decref(table);
		free(v);
		return s ? WD_EXIT_OK : WD_EXIT_INTERNAL;
	}
	if (!n) {
		printf("no live runs\n");
	} else {
		wd_say(stdout, "%-12s %-10s %-8s %-8s %5s %5s %15s %6s  %-16s %s", "RUN", "USER",
		       "MODE", "STATE", "AGE", "CONNS", "BYTES UP/DOWN", "DENIED", "POLICY",
		       "COMMAND");
		for (size_t i = 0; i < n; i++)
			print_row(&v[i], json_array_get(runs, i));
		for (size_t i = 0; i < n; i++) {
			const json_t *w = json_object_get(json_array_get(runs, i), "counts_error");
			struct wd_buf id = WD_BUF_INIT, why = WD_BUF_INIT;

			if (json_is_string(w))
				fprintf(stderr, "warden status: run %s: %s\n",
					wd_esc(&id, v[i].rec.id),
					wd_esc(&why, json_string_value(w)));
			wd_buf_free(&id);
			wd_buf_free(&why);
		}
	}
	if (pool)
		print_kept(pool, table);
	print_pending();
	json_decref(pool);
	json_decref(table);
	json_decref(runs);
	free(v);
	return WD_EXIT_OK;
}

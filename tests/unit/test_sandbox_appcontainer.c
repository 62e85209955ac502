/* test_sandbox_appcontainer.c - sandbox/appcontainer.c over a thin layer that records every
 * call and can fail the Nth: the order of the calls of a run, every step failed in turn (all
 * that was applied before it undone, in reverse, nothing left), refusal when not elevated, a
 * program run through cmd.exe and a bad grant refused before any call, a timeout ending the
 * job. Portable: runs here (CTest unit) and under wine (tests/cross/run-windows). Nothing of
 * the real layer (winapi_win32.c) runs in it. */
#include "sandbox/appcontainer.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define ERR_ACCESS_DENIED 5u
#define MAXLIVE 64

/**
 * struct rec - the recording layer's state
 * @fail_at:	fail the apply call of this number (1-based; 0: none)
 * @applies:	apply calls so far
 * @elevated:	what elevated() says
 * @timeout:	wait() times out
 * @log:	one line per call
 * @live:	what is applied, in order: an undo must take the last one
 * @nlive:	how many
 * @bad_undo:	undo calls that were not of the last thing applied
 * @next:	the next fake handle
 */
struct rec {
	int fail_at;
	int applies;
	bool elevated;
	bool timeout;
	struct wd_buf log;
	char live[MAXLIVE][160];
	int nlive;
	int bad_undo;
	uintptr_t next;
};

/* an apply call: logged, failed when it is the chosen one, else @what is live */
static uint32_t apply(struct rec *r, const char *what)
{
	assert_int_equal(wd_buf_printf(&r->log, "%s\n", what), 0);
	if (++r->applies == r->fail_at)
		return ERR_ACCESS_DENIED;
	if (strncmp(what, "elevated", 8) != 0) {
		assert_true(r->nlive < MAXLIVE);
		snprintf(r->live[r->nlive++], sizeof(r->live[0]), "%s", what);
	}
	return 0;
}

/* an undo call of what @what applied: it must be the last thing still applied */
static uint32_t undo(struct rec *r, const char *call, const char *what)
{
	assert_int_equal(wd_buf_printf(&r->log, "%s\n", call), 0);
	if (r->nlive && !strcmp(r->live[r->nlive - 1], what))
		r->nlive--;
	else
		r->bad_undo++;
	return 0;
}

/* an undo of the last thing applied, which must begin with @prefix */
static uint32_t undo_last(struct rec *r, const char *call, const char *prefix)
{
	const char *last = r->nlive ? r->live[r->nlive - 1] : "";

	return undo(r, call, strncmp(last, prefix, strlen(prefix)) ? "(not the last)" : last);
}

/* a handle, SID or engine: a distinct pointer the engine passes back, never dereferenced */
static void *fake(struct rec *r)
{
	static char handles[4096];

	return &handles[++r->next % sizeof(handles)];
}

static uint32_t l_elevated(void *ctx, bool *ret)
{
	struct rec *r = ctx;

	*ret = r->elevated;
	return apply(r, "elevated");
}
static uint32_t l_profile_create(void *ctx, const char *name, void **sid)
{
	char what[160];

	snprintf(what, sizeof(what), "profile_create %s", name);
	*sid = fake(ctx);
	return apply(ctx, what);
}
static uint32_t l_profile_delete(void *ctx, const char *name, void *sid)
{
	char what[160];

	(void)sid;
	snprintf(what, sizeof(what), "profile_create %s", name);
	return undo(ctx, "profile_delete", what);
}
static uint32_t l_acl_add(void *ctx, const char *path, void *sid, const struct sandbox_win_ace *a,
			  void **saved)
{
	char what[160];

	(void)sid;
	snprintf(what, sizeof(what), "acl_add %s %s 0x%08x", path,
		 a->mode == SANDBOX_WIN_DENY ? "deny" : "grant", (unsigned)a->access);
	*saved = fake(ctx);
	return apply(ctx, what);
}
static uint32_t l_acl_restore(void *ctx, const char *path, void *saved)
{
	struct rec *r = ctx;
	char call[160];

	(void)saved;
	snprintf(call, sizeof(call), "acl_restore %s", path);
	/* the last ACE applied must be on @path */
	if (r->nlive && !strncmp(r->live[r->nlive - 1], "acl_add ", 8) &&
	    !strncmp(r->live[r->nlive - 1] + 8, path, strlen(path)))
		return undo(ctx, call, r->live[r->nlive - 1]);
	return undo(ctx, call, "(not the last ACE)");
}
static uint32_t l_wfp_open(void *ctx, uint32_t flags, void **engine)
{
	*engine = fake(ctx);
	return apply(ctx, flags & SANDBOX_WIN_FWPM_SESSION_FLAG_DYNAMIC ? "wfp_open dynamic"
									: "wfp_open static");
}
static uint32_t l_wfp_close(void *ctx, void *engine)
{
	(void)engine;
	return undo(ctx, "wfp_close", "wfp_open dynamic");
}
static uint32_t l_sublayer_add(void *ctx, void *engine, uint16_t weight,
			       struct sandbox_win_guid *key)
{
	char what[64];

	(void)engine;
	*key = (struct sandbox_win_guid){0x29, 1, 2, {3}};
	snprintf(what, sizeof(what), "sublayer_add 0x%04x", (unsigned)weight);
	return apply(ctx, what);
}
static uint32_t l_sublayer_delete(void *ctx, void *engine, const struct sandbox_win_guid *key)
{
	(void)engine;
	assert_int_equal(key->d1, 0x29);
	return undo(ctx, "sublayer_delete", "sublayer_add 0xffff");
}
static uint32_t l_filter_add(void *ctx, void *engine, const struct sandbox_win_guid *key,
			     const struct sandbox_win_filter *f, void *sid, uint64_t *id)
{
	struct rec *r = ctx;
	char what[160];

	(void)engine;
	assert_non_null(sid);
	assert_int_equal(key->d1, 0x29);
	*id = 1000 + r->next++;
	snprintf(what, sizeof(what), "filter_add %s id=%llu", f->name, (unsigned long long)*id);
	return apply(ctx, what);
}
static uint32_t l_filter_delete(void *ctx, void *engine, uint64_t id)
{
	struct rec *r = ctx;
	char call[64];
	const char *last = r->nlive ? r->live[r->nlive - 1] : "";
	const char *at = strstr(last, " id=");

	(void)engine;
	snprintf(call, sizeof(call), "filter_delete id=%llu", (unsigned long long)id);
	if (!strncmp(last, "filter_add ", 11) && at && strtoull(at + 4, NULL, 10) == id)
		return undo(ctx, call, last);
	return undo(ctx, call, "(not the last filter)");
}
static uint32_t l_loopback_add(void *ctx, void *sid)
{
	assert_non_null(sid);
	return apply(ctx, "loopback_add");
}
static uint32_t l_loopback_remove(void *ctx, void *sid)
{
	assert_non_null(sid);
	return undo_last(ctx, "loopback_remove", "loopback_add");
}
static uint32_t l_job_create(void *ctx, const struct sandbox_win_limits *lim, void **job)
{
	char what[128];

	*job = fake(ctx);
	snprintf(what, sizeof(what), "job_create memory=%llu cpu_ms=%llu processes=%u",
		 (unsigned long long)lim->memory_max, (unsigned long long)lim->cpu_ms,
		 (unsigned)lim->processes);
	return apply(ctx, what);
}
static uint32_t l_job_close(void *ctx, void *job)
{
	struct rec *r = ctx;

	(void)job;
	return undo_last(r, "job_close", "job_create ");
}
static uint32_t l_spawn(void *ctx, const char *program, const char *cmdline, const char *env,
			void *sid, void *job, void *const stdio[3], void **process)
{
	char what[160];

	/* the environment block is handed down as given, every entry */
	assert_non_null(env);
	assert_string_equal(env, "HTTP_PROXY=http://127.0.0.1:8080");
	assert_string_equal(env + strlen(env) + 1, "A=1");
	assert_non_null(sid);
	assert_non_null(job);
	assert_ptr_equal(stdio[1], (void *)0x10);
	*process = fake(ctx);
	snprintf(what, sizeof(what), "spawn %s [%s]", program, cmdline);
	return apply(ctx, what);
}
static uint32_t l_wait(void *ctx, void *process, uint32_t ms, uint32_t *code)
{
	struct rec *r = ctx;

	(void)process;
	assert_int_equal(wd_buf_printf(&r->log, "wait %u\n", (unsigned)ms), 0);
	*code = 7;
	return r->timeout ? SANDBOX_WIN_WAIT_TIMEOUT : 0;
}
static uint32_t l_kill(void *ctx, void *job, uint32_t code)
{
	struct rec *r = ctx;

	(void)job;
	assert_int_equal(wd_buf_printf(&r->log, "kill %u\n", (unsigned)code), 0);
	return 0;
}
static uint32_t l_process_close(void *ctx, void *process)
{
	struct rec *r = ctx;

	(void)process;
	return undo_last(r, "process_close", "spawn ");
}

static struct sandbox_win_api layer(struct rec *r)
{
	return (struct sandbox_win_api){r,
					l_elevated,
					l_profile_create,
					l_profile_delete,
					l_acl_add,
					l_acl_restore,
					l_wfp_open,
					l_wfp_close,
					l_sublayer_add,
					l_sublayer_delete,
					l_filter_add,
					l_filter_delete,
					l_loopback_add,
					l_loopback_remove,
					l_job_create,
					l_job_close,
					l_spawn,
					l_wait,
					l_kill,
					l_process_close};
}

static const char *const rd[] = {"C:\\proj\\vendor"};
static const char *const wr[] = {"C:\\proj"};
static const char *const mk[] = {"C:\\proj\\.ssh"};
static const struct sandbox_win_grants grants = {rd, 1, wr, 1, mk, 1, 41080};
static const char *const argv[] = {"C:\\Program Files\\node\\node.exe", "server.js", "a b"};

static struct sandbox_ac_spec spec(void)
{
	return (struct sandbox_ac_spec){&grants,
					argv,
					3,
					"warden.run.29",
					{512u << 20, 60000, 64},
					{(void *)0x8, (void *)0x10, (void *)0x18},
					"HTTP_PROXY=http://127.0.0.1:8080\0A=1\0"};
}

/* the calls of a run that works, in order (a..., then the undo in reverse) */
static const char golden[] =
    "elevated\n"
    "profile_create warden.run.29\n"
    "acl_add C:\\proj grant 0xe0010000\n"
    "acl_add C:\\proj\\.ssh deny 0x10000000\n"
    "acl_add C:\\proj\\vendor grant 0xa0000000\n"
    "acl_add C:\\proj\\vendor deny 0x000d0156\n"
    "wfp_open dynamic\n"
    "sublayer_add 0xffff\n"
    "filter_add warden: permit TCP to the loopback proxy (IPv4) id=1006\n"
    "filter_add warden: permit TCP to the loopback proxy (IPv6) id=1007\n"
    "filter_add warden: block every other connection (IPv4) id=1008\n"
    "filter_add warden: block every other connection (IPv6) id=1009\n"
    "filter_add warden: block every inbound connection (IPv4) id=1010\n"
    "filter_add warden: block every inbound connection (IPv6) id=1011\n"
    "loopback_add\n"
    "job_create memory=536870912 cpu_ms=60000 processes=64\n"
    "spawn C:\\Program Files\\node\\node.exe [\"C:\\Program Files\\node\\node.exe\" server.js "
    "\"a b\"]\n"
    "wait 5000\n"
    "process_close\n"
    "job_close\n"
    "loopback_remove\n"
    "filter_delete id=1011\n"
    "filter_delete id=1010\n"
    "filter_delete id=1009\n"
    "filter_delete id=1008\n"
    "filter_delete id=1007\n"
    "filter_delete id=1006\n"
    "sublayer_delete\n"
    "wfp_close\n"
    "acl_restore C:\\proj\\vendor\n"
    "acl_restore C:\\proj\\vendor\n"
    "acl_restore C:\\proj\\.ssh\n"
    "acl_restore C:\\proj\n"
    "profile_delete\n";

#define NAPPLIES 17 /* the apply calls of golden, elevated included */

static void test_order(void **state)
{
	struct rec r = {.elevated = true, .log = WD_BUF_INIT};
	struct sandbox_win_api api = layer(&r);
	struct sandbox_ac_spec s = spec();
	struct sandbox_ac ac;
	struct wd_err err;
	uint32_t code = 0;

	(void)state;
	wd_err_clear(&err);
	assert_int_equal(sandbox_ac_start(&s, &api, &ac, &err), 0);
	assert_int_equal(r.applies, NAPPLIES);
	assert_int_equal(r.nlive, NAPPLIES - 1);
	assert_int_equal(sandbox_ac_wait(&ac, 5000, &code, &err), 0);
	assert_int_equal(code, 7);
	assert_int_equal(sandbox_ac_stop(&ac, &err), 0);
	assert_string_equal(wd_buf_cstr(&r.log), golden);
	assert_int_equal(r.nlive, 0);
	assert_int_equal(r.bad_undo, 0);
	/* stopping again does nothing */
	assert_int_equal(sandbox_ac_stop(&ac, &err), 0);
	wd_buf_free(&r.log);
}

/* fail apply call N for every N: an error naming the call, all applied before it undone in
 * reverse (the recorder's stack), nothing left, nothing started after it */
static void test_fail_each_step(void **state)
{
	static const char *const calls[NAPPLIES + 1] = {
	    "",
	    "GetTokenInformation(TokenElevation)",
	    "CreateAppContainerProfile",
	    "C:\\proj: SetNamedSecurityInfoW",
	    "C:\\proj\\.ssh: SetNamedSecurityInfoW",
	    "C:\\proj\\vendor: SetNamedSecurityInfoW",
	    "C:\\proj\\vendor: SetNamedSecurityInfoW",
	    "FwpmEngineOpen0",
	    "FwpmSubLayerAdd0",
	    "FwpmFilterAdd0",
	    "FwpmFilterAdd0",
	    "FwpmFilterAdd0",
	    "FwpmFilterAdd0",
	    "FwpmFilterAdd0",
	    "FwpmFilterAdd0",
	    "NetworkIsolationSetAppContainerConfig",
	    "CreateJobObjectW",
	    "CreateProcessW",
	};

	(void)state;
	for (int n = 1; n <= NAPPLIES; n++) {
		struct rec r = {.elevated = true, .fail_at = n, .log = WD_BUF_INIT};
		struct sandbox_win_api api = layer(&r);
		struct sandbox_ac_spec s = spec();
		struct sandbox_ac ac;
		struct wd_err err;
		int undos = 0;

		wd_err_clear(&err);
		assert_int_equal(sandbox_ac_start(&s, &api, &ac, &err), -EIO);
		if (strncmp(err.msg, calls[n], strlen(calls[n])) ||
		    !strstr(err.msg, "Windows error 5 (0x00000005)"))
			fail_msg("step %d: \"%s\", want \"%s ...\"", n, err.msg, calls[n]);
		assert_int_equal(r.applies, n);
		assert_int_equal(r.nlive, 0);
		assert_int_equal(r.bad_undo, 0);
		/* the log: the n apply calls, then one undo per thing applied before step n
		 * (elevated applies nothing) */
		for (const char *p = wd_buf_cstr(&r.log); *p; p++)
			if (*p == '\n')
				undos++;
		assert_int_equal(undos - n, n > 1 ? n - 2 : 0);
		assert_null(ac.api);
		wd_buf_free(&r.log);
	}
}

static void test_not_elevated(void **state)
{
	struct rec r = {.elevated = false, .log = WD_BUF_INIT};
	struct sandbox_win_api api = layer(&r);
	struct sandbox_ac_spec s = spec();
	struct sandbox_ac ac;
	struct wd_err err;

	(void)state;
	wd_err_clear(&err);
	assert_int_equal(sandbox_ac_start(&s, &api, &ac, &err), -EPERM);
	assert_non_null(strstr(err.msg, "not elevated"));
	assert_string_equal(wd_buf_cstr(&r.log), "elevated\n");
	assert_int_equal(r.nlive, 0);
	/* the positive control: elevated, the same spec starts */
	r.elevated = true;
	assert_int_equal(sandbox_ac_start(&s, &api, &ac, &err), 0);
	assert_int_equal(sandbox_ac_stop(&ac, &err), 0);
	assert_int_equal(r.nlive, 0);
	wd_buf_free(&r.log);
}

/* refused before any call: a program run through cmd.exe, a relative grant, no proxy port */
static void test_refused_before_any_call(void **state)
{
	static const char *const bat[] = {"C:\\tools\\build.BAT. ", "x"};
	static const char *const rel[] = {"proj"};
	const struct sandbox_win_grants bad = {rel, 1, NULL, 0, NULL, 0, 41080};
	const struct sandbox_win_grants noport = {rd, 1, NULL, 0, NULL, 0, 0};
	struct rec r = {.elevated = true, .log = WD_BUF_INIT};
	struct sandbox_win_api api = layer(&r);
	struct sandbox_ac_spec s = spec();
	struct sandbox_ac ac;
	struct wd_err err;

	(void)state;
	wd_err_clear(&err);
	s.argv = bat;
	s.argc = 2;
	assert_int_equal(sandbox_ac_start(&s, &api, &ac, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "cmd.exe"));
	s = spec();
	s.grants = &bad;
	assert_int_equal(sandbox_ac_start(&s, &api, &ac, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "not an absolute path"));
	s.grants = &noport;
	assert_int_equal(sandbox_ac_start(&s, &api, &ac, &err), -EINVAL);
	s = spec();
	s.profile = "";
	assert_int_equal(sandbox_ac_start(&s, &api, &ac, &err), -EINVAL);
	assert_int_equal(r.applies, 0);
	assert_string_equal(wd_buf_cstr(&r.log), "");
	wd_buf_free(&r.log);
}

static void test_timeout_ends_the_job(void **state)
{
	struct rec r = {.elevated = true, .timeout = true, .log = WD_BUF_INIT};
	struct sandbox_win_api api = layer(&r);
	struct sandbox_ac_spec s = spec();
	struct sandbox_ac ac;
	struct wd_err err;
	uint32_t code;

	(void)state;
	wd_err_clear(&err);
	assert_int_equal(sandbox_ac_start(&s, &api, &ac, &err), 0);
	assert_int_equal(sandbox_ac_wait(&ac, 100, &code, &err), -ETIMEDOUT);
	assert_non_null(strstr(wd_buf_cstr(&r.log), "wait 100\nkill 1\n"));
	assert_int_equal(sandbox_ac_stop(&ac, &err), 0);
	assert_int_equal(r.nlive, 0);
	assert_int_equal(r.bad_undo, 0);
	wd_buf_free(&r.log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_order),
	    cmocka_unit_test(test_fail_each_step),
	    cmocka_unit_test(test_not_elevated),
	    cmocka_unit_test(test_refused_before_any_call),
	    cmocka_unit_test(test_timeout_ends_the_job),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

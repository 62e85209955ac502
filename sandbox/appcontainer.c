/* appcontainer.c - the AppContainer backend's engine: the plan applied through the thin layer,
 * each step undone in reverse when a later one fails; see appcontainer.h. */
#include "sandbox/appcontainer.h"

#include "sandbox/winargv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* a Windows call failed: -EIO with its name and code */
static int win_fail(struct wd_err *err, const char *call, uint32_t code)
{
	return wd_err_set(err, -EIO, "%s failed: Windows error %" PRIu32 " (0x%08" PRIx32 ")", call,
			  code, code);
}

/* record the first undo that failed */
static void undo_fail(int *first, struct wd_err *err, const char *call, uint32_t code)
{
	if (!code || *first)
		return;
	*first = win_fail(err, call, code);
}

/* the undo calls of what @ac applied, in reverse; Return: 0, or the first that failed */
static int undo_applied(struct sandbox_ac *ac, struct wd_err *err)
{
	const struct sandbox_win_api *api = ac->api;
	int first = 0;

	if (ac->process)
		undo_fail(&first, err, "CloseHandle(process)",
			  api->process_close(api->ctx, ac->process));
	if (ac->job)
		undo_fail(&first, err, "CloseHandle(job)", api->job_close(api->ctx, ac->job));
	if (ac->loopback)
		undo_fail(&first, err,
			  "NetworkIsolationSetAppContainerConfig (the exemption removed)",
			  api->loopback_remove(api->ctx, ac->sid));
	while (ac->nfilters)
		undo_fail(
		    &first, err, "FwpmFilterDeleteById0",
		    api->wfp_filter_delete(api->ctx, ac->engine, ac->filter_ids[--ac->nfilters]));
	if (ac->have_sublayer)
		undo_fail(&first, err, "FwpmSubLayerDeleteByKey0",
			  api->wfp_sublayer_delete(api->ctx, ac->engine, &ac->sublayer));
	if (ac->engine)
		undo_fail(&first, err, "FwpmEngineClose0", api->wfp_close(api->ctx, ac->engine));
	while (ac->nacl) {
		ac->nacl--;
		undo_fail(
		    &first, err, "SetNamedSecurityInfoW (restoring the DACL)",
		    api->acl_restore(api->ctx, ac->plan.aces[ac->nacl].path, ac->saved[ac->nacl]));
	}
	if (ac->sid)
		undo_fail(&first, err, "DeleteAppContainerProfile",
			  api->profile_delete(api->ctx, ac->profile, ac->sid));
	return first;
}

int sandbox_ac_stop(struct sandbox_ac *ac, struct wd_err *err)
{
	int first = ac->api ? undo_applied(ac, err) : 0;

	free(ac->saved);
	free(ac->profile);
	wd_buf_free(&ac->cmdline);
	sandbox_win_plan_free(&ac->plan);
	*ac = (struct sandbox_ac){0};
	return first;
}

/* steps 0 and 1: the plan, the command line, elevation; nothing applied yet */
static int prepare(const struct sandbox_ac_spec *spec, struct sandbox_ac *ac, struct wd_err *err)
{
	const struct sandbox_win_api *api = ac->api;
	bool elevated = false;
	uint32_t code;
	int r;

	if (!spec->argc || !spec->profile || !*spec->profile)
		return wd_err_set(err, -EINVAL, "no program or no profile name");
	if (sandbox_win_runs_cmd(spec->argv[0]))
		return wd_err_set(err, -EINVAL,
				  "%s would run through cmd.exe, whose quoting cannot be made "
				  "safe: refused",
				  spec->argv[0]);
	r = sandbox_win_cmdline(&ac->cmdline, spec->argv, NULL, spec->argc);
	if (r)
		return wd_err_set(err, r, "the command line: %s",
				  r == -E2BIG ? "longer than Windows takes"
					      : "an argument cannot be quoted");
	r = sandbox_win_plan_make(spec->grants, &ac->plan, err);
	if (!r)
		r = sandbox_win_plan_check(&ac->plan, spec->grants, err);
	if (r)
		return r;
	ac->profile = strdup(spec->profile);
	ac->saved = calloc(ac->plan.naces + 1, sizeof(*ac->saved));
	if (!ac->profile || !ac->saved)
		return -ENOMEM;
	code = api->elevated(api->ctx, &elevated);
	if (code)
		return win_fail(err, "GetTokenInformation(TokenElevation)", code);
	if (!elevated)
		return wd_err_set(err, -EPERM,
				  "not elevated: the AppContainer backend needs an administrator's "
				  "token for WFP filters and DACL grants (fail closed)");
	return 0;
}

/* step 4: the WFP session, sublayer and filters, then the loopback exemption */
static int apply_wfp(struct sandbox_ac *ac, struct wd_err *err)
{
	const struct sandbox_win_api *api = ac->api;
	uint32_t code = api->wfp_open(api->ctx, ac->plan.session_flags, &ac->engine);

	if (code) {
		ac->engine = NULL;
		return win_fail(err, "FwpmEngineOpen0", code);
	}
	code = api->wfp_sublayer_add(api->ctx, ac->engine, ac->plan.sublayer_weight, &ac->sublayer);
	if (code)
		return win_fail(err, "FwpmSubLayerAdd0", code);
	ac->have_sublayer = true;
	for (size_t i = 0; i < ac->plan.nfilters; i++) {
		code =
		    api->wfp_filter_add(api->ctx, ac->engine, &ac->sublayer, &ac->plan.filters[i],
					ac->sid, &ac->filter_ids[ac->nfilters]);
		if (code)
			return win_fail(err, "FwpmFilterAdd0", code);
		ac->nfilters++;
	}
	/* the filters first: the exemption opens loopback to every port, the filters then
	 * leave the proxy's alone */
	code = api->loopback_add(api->ctx, ac->sid);
	if (code)
		return win_fail(err, "NetworkIsolationSetAppContainerConfig", code);
	ac->loopback = true;
	return 0;
}

/* steps 2 to 6 */
static int apply(const struct sandbox_ac_spec *spec, struct sandbox_ac *ac, struct wd_err *err)
{
	const struct sandbox_win_api *api = ac->api;
	uint32_t code = api->profile_create(api->ctx, ac->profile, &ac->sid);
	int r;

	if (code) {
		ac->sid = NULL;
		return win_fail(err, "CreateAppContainerProfile", code);
	}
	for (size_t i = 0; i < ac->plan.naces; i++) {
		code = api->acl_add(api->ctx, ac->plan.aces[i].path, ac->sid, &ac->plan.aces[i],
				    &ac->saved[ac->nacl]);
		if (code) {
			win_fail(err, "SetNamedSecurityInfoW", code);
			wd_err_prefix(err, "%s: ", ac->plan.aces[i].path);
			return -EIO;
		}
		ac->nacl++;
	}
	r = apply_wfp(ac, err);
	if (r)
		return r;
	code = api->job_create(api->ctx, &spec->limits, &ac->job);
	if (code) {
		ac->job = NULL;
		return win_fail(err, "CreateJobObjectW", code);
	}
	code = api->spawn(api->ctx, spec->argv[0], wd_buf_cstr(&ac->cmdline), spec->env, ac->sid,
			  ac->job, spec->stdio, &ac->process);
	if (code) {
		ac->process = NULL;
		return win_fail(err, "CreateProcessW", code);
	}
	return 0;
}

int sandbox_ac_start(const struct sandbox_ac_spec *spec, const struct sandbox_win_api *api,
		     struct sandbox_ac *ret, struct wd_err *err)
{
	struct sandbox_ac ac = {.api = api, .cmdline = WD_BUF_INIT};
	int r = prepare(spec, &ac, err);

	if (!r)
		r = apply(spec, &ac, err);
	if (r) {
		sandbox_ac_stop(&ac, NULL); /* the first failure is the one to report */
		*ret = (struct sandbox_ac){0};
		return r;
	}
	*ret = ac;
	return 0;
}

int sandbox_ac_wait(struct sandbox_ac *ac, uint32_t timeout_ms, uint32_t *ret_code,
		    struct wd_err *err)
{
	const struct sandbox_win_api *api = ac->api;
	uint32_t code = api->wait(api->ctx, ac->process, timeout_ms, ret_code);

	if (code == SANDBOX_WIN_WAIT_TIMEOUT) {
		code = api->kill(api->ctx, ac->job, 1);
		if (code)
			return win_fail(err, "TerminateJobObject", code);
		return wd_err_set(err, -ETIMEDOUT, "the program ran longer than %" PRIu32 " ms",
				  timeout_ms);
	}
	return code ? win_fail(err, "WaitForSingleObject", code) : 0;
}

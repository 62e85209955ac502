/* appcontainer.h - the Windows AppContainer backend's engine: a run's plan (winplan.h)
 * applied through the thin layer (winapi.h) and undone, failing closed. Portable: every Windows
 * call goes through struct sandbox_win_api, so this file builds and is tested on Linux and
 * under wine with a layer that records the calls; only sandbox_win_api_real() touches Windows.
 *
 * sandbox_ac_start(), in this order, each step undone in reverse when a later one fails:
 *   0. no call: the plan made from the grants and checked (sandbox_win_plan_check), the
 *      program refused when Windows would run it through cmd.exe, the argv quoted;
 *   1. the process must be elevated (WFP and other users' DACLs need it), else -EPERM;
 *   2. the AppContainer profile (its SID);
 *   3. one DACL entry per ACE of the plan, each path's old DACL kept;
 *   4. a dynamic WFP session, the run's sublayer, the plan's filters for the SID, then the
 *      SID's loopback exemption (an AppContainer reaches no loopback address without it; the
 *      filters leave it the proxy's port alone);
 *   5. a Job Object with the limits and KILL_ON_JOB_CLOSE;
 *   6. the program, suspended, in the AppContainer and the job, then resumed.
 * sandbox_ac_stop() undoes all of it in reverse; nothing is left when it returns, whatever
 * failed on the way (the first failure is reported).
 */
#ifndef WARDEN_SANDBOX_APPCONTAINER_H
#define WARDEN_SANDBOX_APPCONTAINER_H

#include "common/common.h"
#include "sandbox/winapi.h"
#include "sandbox/winplan.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/**
 * struct sandbox_ac_spec - one run
 * @grants:	the grants, masks and proxy port (the plan is made from them)
 * @argv:	the program (argv[0]: its path) and its arguments, UTF-8
 * @argc:	how many, at least 1
 * @profile:	the AppContainer profile's name (unique per run: "warden.<run id>")
 * @limits:	the Job Object's limits
 * @stdio:	the handles the program gets as stdin, stdout, stderr (inheritable)
 * @env:	the program's environment block, UTF-8 "NAME=VALUE\0...\0\0" (NULL: warden's)
 */
struct sandbox_ac_spec {
	const struct sandbox_win_grants *grants;
	const char *const *argv;
	size_t argc;
	const char *profile;
	struct sandbox_win_limits limits;
	void *stdio[3];
	const char *env;
};

/**
 * struct sandbox_ac - what a run applied, for sandbox_ac_stop()
 * @api:	the layer
 * @plan:	the plan
 * @cmdline:	the quoted command line
 * @profile:	the profile's name (owned)
 * @sid:	the container's SID, or NULL
 * @saved:	the old DACL of each ACE applied, in order
 * @nacl:	how many ACEs are applied
 * @engine:	the WFP engine, or NULL
 * @sublayer:	the run's sublayer's key
 * @have_sublayer: it was added
 * @filter_ids:	the filters added, in order
 * @nfilters:	how many
 * @loopback:	the SID was exempted from loopback isolation
 * @job:	the Job Object, or NULL
 * @process:	the program's process, or NULL
 */
struct sandbox_ac {
	const struct sandbox_win_api *api;
	struct sandbox_win_plan plan;
	struct wd_buf cmdline;
	char *profile;
	void *sid;
	void **saved;
	size_t nacl;
	void *engine;
	struct sandbox_win_guid sublayer;
	bool have_sublayer;
	uint64_t filter_ids[SANDBOX_WIN_MAX_FILTERS];
	size_t nfilters;
	bool loopback;
	void *job;
	void *process;
};

/**
 * sandbox_ac_start() - apply the plan and start the program (the steps above)
 * @spec:	the run
 * @api:	the layer (sandbox_win_api_real() on Windows)
 * @ret:	on success what was applied; on failure it is left empty
 * @err:	what failed
 *
 * Return: 0; -EINVAL (a bad grant, a plan that fails its check, a program run through
 * cmd.exe, an argv that cannot be quoted); -EPERM (not elevated); -EIO (a Windows call failed:
 * @err names it and its error code; everything applied before it was undone); -ENOMEM.
 */
int sandbox_ac_start(const struct sandbox_ac_spec *spec, const struct sandbox_win_api *api,
		     struct sandbox_ac *ret, struct wd_err *err);

/**
 * sandbox_ac_wait() - wait for the program; when @timeout_ms passes, end the job
 * @ac:		a started run
 * @timeout_ms:	how long, in milliseconds (0xffffffff: no limit)
 * @ret_code:	its exit code
 * @err:	what failed
 *
 * Return: 0; -ETIMEDOUT (the job was ended); -EIO.
 */
int sandbox_ac_wait(struct sandbox_ac *ac, uint32_t timeout_ms, uint32_t *ret_code,
		    struct wd_err *err);

/**
 * sandbox_ac_stop() - undo everything @ac applied, in reverse; @ac is empty afterwards
 * @ac:		a run (started, or left empty by a failed start: then nothing is done)
 * @err:	the first undo that failed (the others are still tried)
 *
 * Return: 0, or -EIO.
 */
int sandbox_ac_stop(struct sandbox_ac *ac, struct wd_err *err);

#endif

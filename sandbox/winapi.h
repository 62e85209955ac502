/* winapi.h - the thin layer under the AppContainer backend (appcontainer.c): every Windows call
 * the backend makes, as a struct of function pointers with portable types (a handle, a SID,
 * a WFP engine are `void *`; a result is a Windows error code, 0 for success). The real layer,
 * sandbox_win_api_real() in winapi_win32.c, calls Windows and is built only for Windows
 * (tests/cross/windows); the tests pass one that records the calls and fails the Nth. Portable:
 * no Linux or Windows header.
 */
#ifndef WARDEN_SANDBOX_WINAPI_H
#define WARDEN_SANDBOX_WINAPI_H

#include "sandbox/winplan.h"

#include <stdbool.h>
#include <stdint.h>

/**
 * struct sandbox_win_limits - the Job Object's limits (0: none)
 * @memory_max:	bytes the job's processes may commit together (JOB_OBJECT_LIMIT_JOB_MEMORY)
 * @cpu_ms:	user CPU time of the job, in milliseconds (JOB_OBJECT_LIMIT_JOB_TIME)
 * @processes:	processes alive at once (JOB_OBJECT_LIMIT_ACTIVE_PROCESS)
 */
struct sandbox_win_limits {
	uint64_t memory_max;
	uint64_t cpu_ms;
	uint32_t processes;
};

/**
 * struct sandbox_win_api - the Windows calls; each returns 0 or a Windows error code
 * @ctx:		passed to every call (the test layer's record)
 * @elevated:		whether the process token is elevated (GetTokenInformation TokenElevation)
 * @profile_create:	CreateAppContainerProfile(@name), or when it exists
 *			DeriveAppContainerSidFromName(@name); *@ret_sid: its SID
 * @profile_delete:	FreeSid(@sid), DeleteAppContainerProfile(@name)
 * @acl_add:		GetNamedSecurityInfoW(@path) (the DACL kept in *@ret_saved),
 *			SetEntriesInAclW(@ace for @sid), SetNamedSecurityInfoW(@path)
 * @acl_restore:	SetNamedSecurityInfoW(@path, the DACL @saved kept), then @saved freed
 * @wfp_open:		FwpmEngineOpen0 with a session of @session_flags; *@ret_engine
 * @wfp_close:		FwpmEngineClose0
 * @wfp_sublayer_add:	UuidCreate into *@ret_key, FwpmSubLayerAdd0 with @weight
 * @wfp_sublayer_delete: FwpmSubLayerDeleteByKey0
 * @wfp_filter_add:	FwpmFilterAdd0 of @f in the sublayer @key, matching @sid's package
 *			id; *@ret_id: the filter's id
 * @wfp_filter_delete:	FwpmFilterDeleteById0
 * @loopback_add:	the AppContainer @sid exempted from loopback isolation (without it an
 *			AppContainer cannot reach 127.0.0.1 or ::1, where the proxy listens):
 *			under a machine-wide named mutex, NetworkIsolationGetAppContainerConfig,
 *			then NetworkIsolationSetAppContainerConfig with that list and @sid
 *			(FirewallAPI.dll, loaded at run time: mingw-w64 does not declare them)
 * @loopback_remove:	the same, setting the list without @sid
 * @job_create:		CreateJobObjectW, SetInformationJobObject (@limits and
 *			JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE); *@ret_job
 * @job_close:		CloseHandle(@job): with KILL_ON_JOB_CLOSE, every process in it ends
 * @spawn:		CreateProcessW(@program, @cmdline) suspended, with
 *			SECURITY_CAPABILITIES (@sid, no capability) and only @stdio[0..2]
 *			inherited (PROC_THREAD_ATTRIBUTE_HANDLE_LIST), @env its environment
 *			block (UTF-8 "NAME=VALUE\0...\0\0", made UTF-16; NULL: warden's own);
 *			AssignProcessToJobObject
 *			(@job), ResumeThread; a process it could not put in the job is terminated
 * @wait:		WaitForSingleObject(@process, @timeout_ms), GetExitCodeProcess: 0 with
 *			*@ret_code, or WAIT_TIMEOUT (258)
 * @kill:		TerminateJobObject(@job, @code)
 * @process_close:	CloseHandle(@process)
 */
struct sandbox_win_api {
	void *ctx;
	uint32_t (*elevated)(void *ctx, bool *ret);
	uint32_t (*profile_create)(void *ctx, const char *name, void **ret_sid);
	uint32_t (*profile_delete)(void *ctx, const char *name, void *sid);
	uint32_t (*acl_add)(void *ctx, const char *path, void *sid,
			    const struct sandbox_win_ace *ace, void **ret_saved);
	uint32_t (*acl_restore)(void *ctx, const char *path, void *saved);
	uint32_t (*wfp_open)(void *ctx, uint32_t session_flags, void **ret_engine);
	uint32_t (*wfp_close)(void *ctx, void *engine);
	uint32_t (*wfp_sublayer_add)(void *ctx, void *engine, uint16_t weight,
				     struct sandbox_win_guid *ret_key);
	uint32_t (*wfp_sublayer_delete)(void *ctx, void *engine,
					const struct sandbox_win_guid *key);
	uint32_t (*wfp_filter_add)(void *ctx, void *engine, const struct sandbox_win_guid *key,
				   const struct sandbox_win_filter *f, void *sid, uint64_t *ret_id);
	uint32_t (*wfp_filter_delete)(void *ctx, void *engine, uint64_t id);
	uint32_t (*loopback_add)(void *ctx, void *sid);
	uint32_t (*loopback_remove)(void *ctx, void *sid);
	uint32_t (*job_create)(void *ctx, const struct sandbox_win_limits *limits, void **ret_job);
	uint32_t (*job_close)(void *ctx, void *job);
	uint32_t (*spawn)(void *ctx, const char *program, const char *cmdline, const char *env,
			  void *sid, void *job, void *const stdio[3], void **ret_process);
	uint32_t (*wait)(void *ctx, void *process, uint32_t timeout_ms, uint32_t *ret_code);
	uint32_t (*kill)(void *ctx, void *job, uint32_t code);
	uint32_t (*process_close)(void *ctx, void *process);
};

/* winerror.h: what wait() returns when the time ran out */
#define SANDBOX_WIN_WAIT_TIMEOUT 258u

/**
 * sandbox_win_api_real() - the layer that calls Windows (winapi_win32.c: Windows builds only)
 * Return: a static layer; its @ctx is NULL.
 */
const struct sandbox_win_api *sandbox_win_api_real(void);

#endif

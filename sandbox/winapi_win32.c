/* winapi_win32.c - the thin layer that calls Windows (winapi.h): userenv for the AppContainer
 * profile, advapi32 for DACLs and the token, fwpuclnt for WFP, rpcrt4 for the sublayer's key,
 * FirewallAPI (loaded at run time) for the loopback exemption, kernel32 for the Job Object and
 * the process. Built only for Windows 10 and later
 * (_WIN32_WINNT 0x0A00; tests/cross/windows), never on Linux. Wine implements none of the
 * AppContainer or WFP calls, so nothing here has been seen to work (docs/platforms.md). */
#ifndef _WIN32
#error "winapi_win32.c is the Windows layer: build it for Windows only"
#endif

#include "sandbox/winapi.h"

#include <windows.h>

#include <aclapi.h>
#include <fwpmu.h>
#include <limits.h>
#include <rpc.h>
#include <stdlib.h>
#include <string.h>
#include <userenv.h>

_Static_assert(sizeof(struct sandbox_win_guid) == sizeof(GUID), "GUID layout");

/* @s (UTF-8) as UTF-16, or NULL */
static wchar_t *wide(const char *s)
{
	int n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, NULL, 0);
	wchar_t *w;

	if (n <= 0)
		return NULL;
	w = calloc((size_t)n, sizeof(*w));
	if (w && MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, w, n) != n) {
		free(w);
		w = NULL;
	}
	return w;
}

/* an environment block "A=B\0C=D\0\0" in UTF-8 as UTF-16, or NULL */
static wchar_t *wide_block(const char *s)
{
	size_t len = 0;
	int n;
	wchar_t *w;

	while (s[len])
		len += strlen(s + len) + 1;
	len++; /* the block's closing NUL */
	if (len > INT_MAX)
		return NULL;
	n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, (int)len, NULL, 0);
	if (n <= 0)
		return NULL;
	w = calloc((size_t)n, sizeof(*w));
	if (w && MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, (int)len, w, n) != n) {
		free(w);
		w = NULL;
	}
	return w;
}

/* @g as a Windows GUID */
static GUID guid(const struct sandbox_win_guid *g)
{
	GUID r;

	memcpy(&r, g, sizeof(r));
	return r;
}

static uint32_t r_elevated(void *ctx, bool *ret)
{
	TOKEN_ELEVATION e = {0};
	HANDLE tok;
	DWORD n = 0;
	BOOL ok;

	(void)ctx;
	if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &tok))
		return GetLastError();
	ok = GetTokenInformation(tok, TokenElevation, &e, sizeof(e), &n);
	CloseHandle(tok);
	if (!ok)
		return GetLastError();
	*ret = e.TokenIsElevated != 0;
	return 0;
}

static uint32_t r_profile_create(void *ctx, const char *name, void **ret_sid)
{
	wchar_t *w = wide(name);
	PSID sid = NULL;
	HRESULT hr;

	(void)ctx;
	if (!w)
		return ERROR_NO_UNICODE_TRANSLATION;
	hr = CreateAppContainerProfile(w, w, L"warden run", NULL, 0, &sid);
	if (hr == HRESULT_FROM_WIN32(ERROR_ALREADY_EXISTS))
		hr = DeriveAppContainerSidFromAppContainerName(w, &sid);
	free(w);
	if (FAILED(hr))
		return (uint32_t)hr;
	*ret_sid = sid;
	return 0;
}

static uint32_t r_profile_delete(void *ctx, const char *name, void *sid)
{
	wchar_t *w = wide(name);
	HRESULT hr;

	(void)ctx;
	FreeSid(sid);
	if (!w)
		return ERROR_NO_UNICODE_TRANSLATION;
	hr = DeleteAppContainerProfile(w);
	free(w);
	return FAILED(hr) ? (uint32_t)hr : 0;
}

/**
 * struct saved_dacl - a path's DACL before an ACE was added
 * @sd:		the security descriptor GetNamedSecurityInfoW returned (LocalFree)
 * @dacl:	its DACL (inside @sd; NULL for a NULL DACL)
 */
struct saved_dacl {
	PSECURITY_DESCRIPTOR sd;
	PACL dacl;
};

static uint32_t r_acl_add(void *ctx, const char *path, void *sid, const struct sandbox_win_ace *ace,
			  void **ret_saved)
{
	struct saved_dacl *s = calloc(1, sizeof(*s));
	wchar_t *w = wide(path);
	EXPLICIT_ACCESS_W ea = {0};
	PACL dacl = NULL;
	DWORD e;

	(void)ctx;
	if (!s || !w) {
		e = s && !w ? ERROR_NO_UNICODE_TRANSLATION : ERROR_NOT_ENOUGH_MEMORY;
		goto fail;
	}
	e = GetNamedSecurityInfoW(w, SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, NULL, NULL,
				  &s->dacl, NULL, &s->sd);
	if (e)
		goto fail;
	ea.grfAccessPermissions = ace->access;
	ea.grfAccessMode = ace->mode == SANDBOX_WIN_DENY ? DENY_ACCESS : GRANT_ACCESS;
	ea.grfInheritance = ace->inherit; /* OBJECT_INHERIT_ACE|CONTAINER_INHERIT_ACE */
	ea.Trustee.TrusteeForm = TRUSTEE_IS_SID;
	ea.Trustee.TrusteeType = TRUSTEE_IS_WELL_KNOWN_GROUP;
	ea.Trustee.ptstrName = (LPWSTR)sid;
	e = SetEntriesInAclW(1, &ea, s->dacl, &dacl);
	if (!e)
		e = SetNamedSecurityInfoW(w, SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, NULL, NULL,
					  dacl, NULL);
	LocalFree(dacl);
	if (e)
		goto fail;
	free(w);
	*ret_saved = s;
	return 0;
fail:
	if (s && s->sd)
		LocalFree(s->sd);
	free(s);
	free(w);
	return e;
}

static uint32_t r_acl_restore(void *ctx, const char *path, void *saved)
{
	struct saved_dacl *s = saved;
	wchar_t *w = wide(path);
	DWORD e = ERROR_NO_UNICODE_TRANSLATION;

	(void)ctx;
	if (w)
		e = SetNamedSecurityInfoW(w, SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, NULL, NULL,
					  s->dacl, NULL);
	free(w);
	LocalFree(s->sd);
	free(s);
	return e;
}

static uint32_t r_wfp_open(void *ctx, uint32_t session_flags, void **ret_engine)
{
	FWPM_SESSION0 session = {0};
	HANDLE engine = NULL;
	DWORD e;

	(void)ctx;
	session.flags = session_flags;
	session.displayData.name = L"warden run";
	e = FwpmEngineOpen0(NULL, RPC_C_AUTHN_WINNT, NULL, &session, &engine);
	if (!e)
		*ret_engine = engine;
	return e;
}

static uint32_t r_wfp_close(void *ctx, void *engine)
{
	(void)ctx;
	return FwpmEngineClose0(engine);
}

static uint32_t r_sublayer_add(void *ctx, void *engine, uint16_t weight,
			       struct sandbox_win_guid *ret_key)
{
	FWPM_SUBLAYER0 sl = {0};
	RPC_STATUS st = UuidCreate(&sl.subLayerKey);

	(void)ctx;
	if (st != RPC_S_OK)
		return (uint32_t)st;
	sl.displayData.name = L"warden run";
	sl.weight = weight;
	memcpy(ret_key, &sl.subLayerKey, sizeof(*ret_key));
	return FwpmSubLayerAdd0(engine, &sl, NULL);
}

static uint32_t r_sublayer_delete(void *ctx, void *engine, const struct sandbox_win_guid *key)
{
	GUID k = guid(key);

	(void)ctx;
	return FwpmSubLayerDeleteByKey0(engine, &k);
}

static uint32_t r_filter_add(void *ctx, void *engine, const struct sandbox_win_guid *key,
			     const struct sandbox_win_filter *f, void *sid, uint64_t *ret_id)
{
	static FWP_BYTE_ARRAY16 v6_loopback = {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}};
	bool v6 = f->layer == SANDBOX_WIN_CONNECT_V6 || f->layer == SANDBOX_WIN_ACCEPT_V6;
	FWPM_FILTER_CONDITION0 cond[4] = {0};
	FWPM_FILTER0 filter = {0};
	wchar_t *name = wide(f->name);
	UINT64 id = 0;
	DWORD e;

	(void)ctx;
	if (!name)
		return ERROR_NOT_ENOUGH_MEMORY;
	cond[0].fieldKey = guid(&sandbox_win_cond_package_id);
	cond[0].matchType = FWP_MATCH_EQUAL;
	cond[0].conditionValue.type = FWP_SID;
	cond[0].conditionValue.sid = sid;
	filter.numFilterConditions = 1;
	if (f->loopback) {
		cond[1].fieldKey = guid(&sandbox_win_cond_protocol);
		cond[1].matchType = FWP_MATCH_EQUAL;
		cond[1].conditionValue.type = FWP_UINT8;
		cond[1].conditionValue.uint8 = SANDBOX_WIN_IPPROTO_TCP;
		cond[2].fieldKey = guid(&sandbox_win_cond_remote_addr);
		cond[2].matchType = FWP_MATCH_EQUAL;
		if (v6) {
			cond[2].conditionValue.type = FWP_BYTE_ARRAY16_TYPE;
			cond[2].conditionValue.byteArray16 = &v6_loopback;
		} else {
			cond[2].conditionValue.type = FWP_UINT32;
			cond[2].conditionValue.uint32 = 0x7f000001u; /* host order */
		}
		cond[3].fieldKey = guid(&sandbox_win_cond_remote_port);
		cond[3].matchType = FWP_MATCH_EQUAL;
		cond[3].conditionValue.type = FWP_UINT16;
		cond[3].conditionValue.uint16 = f->port;
		filter.numFilterConditions = 4;
	}
	filter.filterCondition = cond;
	filter.displayData.name = name;
	filter.flags = f->flags;
	filter.layerKey = guid(&sandbox_win_layer_key[f->layer]);
	filter.subLayerKey = guid(key);
	filter.weight.type = FWP_UINT8;
	filter.weight.uint8 = f->weight;
	filter.action.type = f->action;
	e = FwpmFilterAdd0(engine, &filter, NULL, &id);
	free(name);
	if (!e)
		*ret_id = id;
	return e;
}

static uint32_t r_filter_delete(void *ctx, void *engine, uint64_t id)
{
	(void)ctx;
	return FwpmFilterDeleteById0(engine, id);
}

/* FirewallAPI.dll's loopback exemption list (networkisolation.h; not in mingw-w64) */
typedef DWORD(WINAPI *ni_get_fn)(DWORD *n, PSID_AND_ATTRIBUTES *sids);
typedef DWORD(WINAPI *ni_set_fn)(DWORD n, PSID_AND_ATTRIBUTES sids);

/* the list NetworkIsolationGetAppContainerConfig gave: its SIDs and itself, on the process heap */
static void ni_free(DWORD n, PSID_AND_ATTRIBUTES v)
{
	if (!v)
		return;
	for (DWORD i = 0; i < n; i++)
		HeapFree(GetProcessHeap(), 0, v[i].Sid);
	HeapFree(GetProcessHeap(), 0, v);
}

/* the exemption list set again with @sid in it (@add) or not: read, edited and written under a
 * machine-wide mutex, since the list is one for the machine and Set replaces all of it */
static uint32_t loopback_edit(void *sid, bool add)
{
	HMODULE fw = LoadLibraryW(L"FirewallAPI.dll");
	ni_get_fn get;
	ni_set_fn set;
	HANDLE mutex = NULL;
	PSID_AND_ATTRIBUTES cur = NULL, next = NULL;
	DWORD n = 0, k = 0, e;

	if (!fw)
		return GetLastError();
	get =
	    (ni_get_fn)(void (*)(void))GetProcAddress(fw, "NetworkIsolationGetAppContainerConfig");
	set =
	    (ni_set_fn)(void (*)(void))GetProcAddress(fw, "NetworkIsolationSetAppContainerConfig");
	if (!get || !set) {
		e = ERROR_PROC_NOT_FOUND;
		goto out;
	}
	mutex = CreateMutexW(NULL, FALSE, L"Global\\warden-loopback-exemption");
	if (!mutex) {
		e = GetLastError();
		goto out;
	}
	/* abandoned: its last owner died holding it; the list is whole (one Set call) */
	e = WaitForSingleObject(mutex, 30000);
	if (e != WAIT_OBJECT_0 && e != WAIT_ABANDONED) {
		e = e == WAIT_TIMEOUT ? ERROR_TIMEOUT : GetLastError();
		goto out;
	}
	e = get(&n, &cur);
	if (!e) {
		next = calloc((size_t)n + 1, sizeof(*next));
		if (!next)
			e = ERROR_NOT_ENOUGH_MEMORY;
	}
	if (!e) {
		for (DWORD i = 0; i < n; i++)
			if (!EqualSid(cur[i].Sid, sid))
				next[k++] = cur[i];
		if (add)
			next[k++] = (SID_AND_ATTRIBUTES){sid, 0};
		e = set(k, next);
	}
	ReleaseMutex(mutex);
out:
	free(next);
	ni_free(n, cur);
	if (mutex)
		CloseHandle(mutex);
	FreeLibrary(fw);
	return e;
}

static uint32_t r_loopback_add(void *ctx, void *sid)
{
	(void)ctx;
	return loopback_edit(sid, true);
}

static uint32_t r_loopback_remove(void *ctx, void *sid)
{
	(void)ctx;
	return loopback_edit(sid, false);
}

static uint32_t r_job_create(void *ctx, const struct sandbox_win_limits *lim, void **ret_job)
{
	JOBOBJECT_EXTENDED_LIMIT_INFORMATION li = {0};
	HANDLE job = CreateJobObjectW(NULL, NULL);
	DWORD e;

	(void)ctx;
	if (!job)
		return GetLastError();
	li.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
	if (lim->memory_max) {
		li.BasicLimitInformation.LimitFlags |= JOB_OBJECT_LIMIT_JOB_MEMORY;
		li.JobMemoryLimit = (SIZE_T)lim->memory_max;
	}
	if (lim->cpu_ms) {
		li.BasicLimitInformation.LimitFlags |= JOB_OBJECT_LIMIT_JOB_TIME;
		li.BasicLimitInformation.PerJobUserTimeLimit.QuadPart =
		    (LONGLONG)lim->cpu_ms * 10000;
	}
	if (lim->processes) {
		li.BasicLimitInformation.LimitFlags |= JOB_OBJECT_LIMIT_ACTIVE_PROCESS;
		li.BasicLimitInformation.ActiveProcessLimit = lim->processes;
	}
	if (!SetInformationJobObject(job, JobObjectExtendedLimitInformation, &li, sizeof(li))) {
		e = GetLastError();
		CloseHandle(job);
		return e;
	}
	*ret_job = job;
	return 0;
}

static uint32_t r_close(void *ctx, void *h)
{
	(void)ctx;
	return CloseHandle(h) ? 0 : GetLastError();
}

/* the attribute list: the AppContainer (@caps) and only @handles inherited */
static DWORD attributes(LPPROC_THREAD_ATTRIBUTE_LIST *ret, SECURITY_CAPABILITIES *caps,
			HANDLE *handles, size_t nhandles)
{
	LPPROC_THREAD_ATTRIBUTE_LIST a;
	SIZE_T size = 0;
	DWORD e = 0;

	InitializeProcThreadAttributeList(NULL, 2, 0, &size);
	a = malloc(size);
	if (!a)
		return ERROR_NOT_ENOUGH_MEMORY;
	if (!InitializeProcThreadAttributeList(a, 2, 0, &size)) {
		e = GetLastError();
		free(a);
		return e;
	}
	if (!UpdateProcThreadAttribute(a, 0, PROC_THREAD_ATTRIBUTE_SECURITY_CAPABILITIES, caps,
				       sizeof(*caps), NULL, NULL) ||
	    !UpdateProcThreadAttribute(a, 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, handles,
				       nhandles * sizeof(HANDLE), NULL, NULL)) {
		e = GetLastError();
		DeleteProcThreadAttributeList(a);
		free(a);
		return e;
	}
	*ret = a;
	return 0;
}

static uint32_t r_spawn(void *ctx, const char *program, const char *cmdline, const char *env,
			void *sid, void *job, void *const stdio[3], void **ret_process)
{
	SECURITY_CAPABILITIES caps = {0};
	STARTUPINFOEXW si = {0};
	PROCESS_INFORMATION pi = {0};
	LPPROC_THREAD_ATTRIBUTE_LIST attrs = NULL;
	HANDLE handles[3];
	size_t n = 0;
	wchar_t *wprog = wide(program), *wline = wide(cmdline),
		*wenv = env ? wide_block(env) : NULL;
	DWORD e = ERROR_NO_UNICODE_TRANSLATION;

	(void)ctx;
	if (!wprog || !wline || (env && !wenv))
		goto out;
	/* the handle list takes each handle once */
	for (size_t i = 0; i < 3; i++) {
		bool seen = false;

		for (size_t k = 0; k < n; k++)
			seen |= handles[k] == stdio[i];
		if (!seen && stdio[i])
			handles[n++] = stdio[i];
	}
	caps.AppContainerSid = sid;
	e = attributes(&attrs, &caps, handles, n);
	if (e)
		goto out;
	si.StartupInfo.cb = sizeof(si);
	si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
	si.StartupInfo.hStdInput = stdio[0];
	si.StartupInfo.hStdOutput = stdio[1];
	si.StartupInfo.hStdError = stdio[2];
	si.lpAttributeList = attrs;
	if (!CreateProcessW(wprog, wline, NULL, NULL, TRUE,
			    EXTENDED_STARTUPINFO_PRESENT | CREATE_SUSPENDED |
				CREATE_UNICODE_ENVIRONMENT,
			    wenv, NULL, &si.StartupInfo, &pi)) {
		e = GetLastError();
		goto out;
	}
	/* in the job before it runs a single instruction; else it never runs */
	if (!AssignProcessToJobObject(job, pi.hProcess) || ResumeThread(pi.hThread) == (DWORD)-1) {
		e = GetLastError();
		TerminateProcess(pi.hProcess, 1);
		CloseHandle(pi.hThread);
		CloseHandle(pi.hProcess);
		goto out;
	}
	CloseHandle(pi.hThread);
	*ret_process = pi.hProcess;
	e = 0;
out:
	if (attrs) {
		DeleteProcThreadAttributeList(attrs);
		free(attrs);
	}
	free(wprog);
	free(wline);
	free(wenv);
	return e;
}

static uint32_t r_wait(void *ctx, void *process, uint32_t timeout_ms, uint32_t *ret_code)
{
	DWORD w = WaitForSingleObject(process, timeout_ms), code = 0;

	(void)ctx;
	if (w == WAIT_TIMEOUT)
		return SANDBOX_WIN_WAIT_TIMEOUT;
	if (w != WAIT_OBJECT_0)
		return GetLastError();
	if (!GetExitCodeProcess(process, &code))
		return GetLastError();
	*ret_code = code;
	return 0;
}

static uint32_t r_kill(void *ctx, void *job, uint32_t code)
{
	(void)ctx;
	return TerminateJobObject(job, code) ? 0 : GetLastError();
}

static const struct sandbox_win_api real = {
    NULL,
    r_elevated,
    r_profile_create,
    r_profile_delete,
    r_acl_add,
    r_acl_restore,
    r_wfp_open,
    r_wfp_close,
    r_sublayer_add,
    r_sublayer_delete,
    r_filter_add,
    r_filter_delete,
    r_loopback_add,
    r_loopback_remove,
    r_job_create,
    r_close,
    r_spawn,
    r_wait,
    r_kill,
    r_close,
};

const struct sandbox_win_api *sandbox_win_api_real(void)
{
	return &real;
}

/* winapi_standin.c - test only, never the product: a stand-in for the AppContainer backend's
 * Windows layer (sandbox/winapi.h) in warden-wintest.exe, because wine implements no
 * AppContainer. It CONFINES NOTHING: every call is written, one line each, to the file
 * $WARDEN_WINTEST_LOG with the depth of what is applied ("stack N"), and the program is
 * started with a plain CreateProcessW (the environment block and the stdio handles as given;
 * no AppContainer, no DACL, no WFP filter, no Job Object). $WARDEN_WINTEST_ELEVATED=0 makes
 * it say "not elevated". tests/cross/run-windows reads the file (docs/platforms.md). */
#include "sandbox/winapi.h"

#include <windows.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* what is applied and not undone yet */
static int depth;
/* the one program started, for wait() and kill() */
static HANDLE program;

static void say(int delta, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* one line to the log: the call, then the depth after it */
static void say(int delta, const char *fmt, ...)
{
	const char *path = getenv("WARDEN_WINTEST_LOG");
	FILE *f = path ? fopen(path, "a") : NULL;
	va_list ap;

	depth += delta;
	if (!f)
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fprintf(f, " stack %d\n", depth);
	fclose(f);
}

/* a distinct non-NULL handle for what is not real here */
static void *token(void)
{
	static char tokens[64];
	static size_t n;

	return &tokens[n++ % sizeof(tokens)];
}

static uint32_t s_elevated(void *ctx, bool *ret)
{
	const char *e = getenv("WARDEN_WINTEST_ELEVATED");

	(void)ctx;
	*ret = !e || strcmp(e, "0");
	say(0, "elevated %s", *ret ? "yes" : "no");
	return 0;
}

static uint32_t s_profile_create(void *ctx, const char *name, void **ret_sid)
{
	(void)ctx;
	*ret_sid = token();
	say(1, "profile_create %s", name);
	return 0;
}

static uint32_t s_profile_delete(void *ctx, const char *name, void *sid)
{
	(void)ctx;
	(void)sid;
	say(-1, "profile_delete %s", name);
	return 0;
}

static uint32_t s_acl_add(void *ctx, const char *path, void *sid, const struct sandbox_win_ace *ace,
			  void **ret_saved)
{
	(void)ctx;
	(void)sid;
	*ret_saved = token();
	say(1, "acl_add %s mode %d access 0x%08lx", path, (int)ace->mode,
	    (unsigned long)ace->access);
	return 0;
}

static uint32_t s_acl_restore(void *ctx, const char *path, void *saved)
{
	(void)ctx;
	(void)saved;
	say(-1, "acl_restore %s", path);
	return 0;
}

static uint32_t s_wfp_open(void *ctx, uint32_t flags, void **ret_engine)
{
	(void)ctx;
	*ret_engine = token();
	say(1, "wfp_open 0x%lx", (unsigned long)flags);
	return 0;
}

static uint32_t s_wfp_close(void *ctx, void *engine)
{
	(void)ctx;
	(void)engine;
	say(-1, "wfp_close");
	return 0;
}

static uint32_t s_sublayer_add(void *ctx, void *engine, uint16_t weight,
			       struct sandbox_win_guid *ret_key)
{
	(void)ctx;
	(void)engine;
	memset(ret_key, 0x5a, sizeof(*ret_key));
	say(1, "wfp_sublayer_add weight %u", weight);
	return 0;
}

static uint32_t s_sublayer_delete(void *ctx, void *engine, const struct sandbox_win_guid *key)
{
	(void)ctx;
	(void)engine;
	(void)key;
	say(-1, "wfp_sublayer_delete");
	return 0;
}

static uint32_t s_filter_add(void *ctx, void *engine, const struct sandbox_win_guid *key,
			     const struct sandbox_win_filter *f, void *sid, uint64_t *ret_id)
{
	static uint64_t id;

	(void)ctx;
	(void)engine;
	(void)key;
	(void)sid;
	*ret_id = ++id;
	say(1, "wfp_filter_add %s action 0x%lx loopback %d port %u", f->name,
	    (unsigned long)f->action, f->loopback, f->port);
	return 0;
}

static uint32_t s_filter_delete(void *ctx, void *engine, uint64_t id)
{
	(void)ctx;
	(void)engine;
	say(-1, "wfp_filter_delete %llu", (unsigned long long)id);
	return 0;
}

static uint32_t s_loopback_add(void *ctx, void *sid)
{
	(void)ctx;
	(void)sid;
	say(1, "loopback_add");
	return 0;
}

static uint32_t s_loopback_remove(void *ctx, void *sid)
{
	(void)ctx;
	(void)sid;
	say(-1, "loopback_remove");
	return 0;
}

static uint32_t s_job_create(void *ctx, const struct sandbox_win_limits *l, void **ret_job)
{
	(void)ctx;
	*ret_job = token();
	say(1, "job_create memory %llu processes %lu", (unsigned long long)l->memory_max,
	    (unsigned long)l->processes);
	return 0;
}

static uint32_t s_job_close(void *ctx, void *job)
{
	(void)ctx;
	(void)job;
	say(-1, "job_close");
	return 0;
}

/* @s (UTF-8) as UTF-16, @len bytes with its NULs */
static wchar_t *wide(const char *s, int len)
{
	int n = MultiByteToWideChar(CP_UTF8, 0, s, len, NULL, 0);
	wchar_t *w = n > 0 ? calloc((size_t)n + 1, sizeof(*w)) : NULL;

	if (w)
		MultiByteToWideChar(CP_UTF8, 0, s, len, w, n);
	return w;
}

static uint32_t s_spawn(void *ctx, const char *prog, const char *cmdline, const char *env,
			void *sid, void *job, void *const stdio[3], void **ret_process)
{
	STARTUPINFOW si = {.cb = sizeof(si), .dwFlags = STARTF_USESTDHANDLES};
	PROCESS_INFORMATION pi = {0};
	size_t elen = 0;
	wchar_t *wp = wide(prog, -1), *wl = wide(cmdline, -1), *we;
	DWORD e = 0;

	(void)ctx;
	(void)sid;
	(void)job;
	while (env && env[elen])
		elen += strlen(env + elen) + 1;
	we = env ? wide(env, (int)elen + 1) : NULL;
	si.hStdInput = stdio[0];
	si.hStdOutput = stdio[1];
	si.hStdError = stdio[2];
	if (!wp || !wl || (env && !we) ||
	    !CreateProcessW(wp, wl, NULL, NULL, TRUE, CREATE_UNICODE_ENVIRONMENT, we, NULL, &si,
			    &pi))
		e = GetLastError() ? GetLastError() : ERROR_OUTOFMEMORY;
	free(wp);
	free(wl);
	free(we);
	if (e) {
		say(0, "spawn %s failed %lu", prog, (unsigned long)e);
		return e;
	}
	CloseHandle(pi.hThread);
	program = pi.hProcess;
	*ret_process = pi.hProcess;
	say(1, "spawn %s [%s]", prog, cmdline);
	return 0;
}

static uint32_t s_wait(void *ctx, void *process, uint32_t ms, uint32_t *ret_code)
{
	DWORD code = 0, w = WaitForSingleObject(process, ms);

	(void)ctx;
	if (w == WAIT_TIMEOUT)
		return SANDBOX_WIN_WAIT_TIMEOUT;
	if (w != WAIT_OBJECT_0 || !GetExitCodeProcess(process, &code))
		return GetLastError();
	*ret_code = code;
	say(0, "wait exit %lu", (unsigned long)code);
	return 0;
}

static uint32_t s_kill(void *ctx, void *job, uint32_t code)
{
	(void)ctx;
	(void)job;
	say(0, "kill %lu", (unsigned long)code);
	return program && TerminateProcess(program, code) ? 0 : GetLastError();
}

static uint32_t s_process_close(void *ctx, void *process)
{
	(void)ctx;
	if (process == program)
		program = NULL;
	CloseHandle(process);
	say(-1, "process_close");
	return 0;
}

static const struct sandbox_win_api standin = {
    NULL,
    s_elevated,
    s_profile_create,
    s_profile_delete,
    s_acl_add,
    s_acl_restore,
    s_wfp_open,
    s_wfp_close,
    s_sublayer_add,
    s_sublayer_delete,
    s_filter_add,
    s_filter_delete,
    s_loopback_add,
    s_loopback_remove,
    s_job_create,
    s_job_close,
    s_spawn,
    s_wait,
    s_kill,
    s_process_close,
};

/**
 * sandbox_win_api_standin() - the stand-in layer (test only: it confines nothing)
 * Return: a static layer.
 */
const struct sandbox_win_api *sandbox_win_api_standin(void);
const struct sandbox_win_api *sandbox_win_api_standin(void)
{
	return &standin;
}

/* ac_smoke.c - the AppContainer backend over the real layer (sandbox_win_api_real()): the
 * folder of this program granted read, a fresh folder under %TEMP% granted write with a
 * masked folder in it, argv_echo.exe started in the AppContainer and its job with a pipe as
 * stdout, its output read, the run stopped; the folders' DACLs (as SDDL) must be what they
 * were before, whatever happened. Exit status:
 *   0  the program ran in the AppContainer, printed its argv back, everything was undone;
 *   3  refused: not elevated (fail closed), nothing applied, the DACLs unchanged;
 *   4  a Windows call failed (fail closed: @err names it), the DACLs unchanged;
 *   1  anything else: a DACL not restored, wrong output, a failed undo.
 * .github/workflows/windows.yml wants 0 on an elevated runner. Under wine, which implements
 * no AppContainer and no WFP, tests/cross/run-windows wants 3 or 4 (fail closed), never 0. */
#include "sandbox/appcontainer.h"

#include <windows.h>

#include <aclapi.h>
#include <errno.h>
#include <sddl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* @path's DACL as SDDL (malloc'd UTF-8), or NULL */
static char *sddl(const char *path)
{
	wchar_t w[MAX_PATH];
	PSECURITY_DESCRIPTOR sd = NULL;
	PACL dacl = NULL;
	LPWSTR s = NULL;
	char *u = NULL;
	int n;

	if (!MultiByteToWideChar(CP_UTF8, 0, path, -1, w, MAX_PATH))
		return NULL;
	if (GetNamedSecurityInfoW(w, SE_FILE_OBJECT, DACL_SECURITY_INFORMATION, NULL, NULL, &dacl,
				  NULL, &sd))
		return NULL;
	if (ConvertSecurityDescriptorToStringSecurityDescriptorW(
		sd, SDDL_REVISION_1, DACL_SECURITY_INFORMATION, &s, NULL)) {
		n = WideCharToMultiByte(CP_UTF8, 0, s, -1, NULL, 0, NULL, NULL);
		u = n > 0 ? malloc((size_t)n) : NULL;
		if (u)
			WideCharToMultiByte(CP_UTF8, 0, s, -1, u, n, NULL, NULL);
		LocalFree(s);
	}
	LocalFree(sd);
	return u;
}

/* every path of @paths has the DACL it had (@before) */
static bool unchanged(const char *const *paths, char *const *before, size_t n)
{
	bool ok = true;

	for (size_t i = 0; i < n; i++) {
		char *now = sddl(paths[i]);

		if (!now || !before[i] || strcmp(now, before[i])) {
			printf("ac_smoke: the DACL of %s was %s, is %s\n", paths[i],
			       before[i] ? before[i] : "?", now ? now : "?");
			ok = false;
		}
		free(now);
	}
	return ok;
}

int main(void)
{
	char self[MAX_PATH], tmp[MAX_PATH], wdir[MAX_PATH + 32], mask[MAX_PATH + 48];
	char echo[MAX_PATH + 16], out[4096];
	char *before[3] = {NULL};
	SECURITY_ATTRIBUTES sa = {sizeof(sa), NULL, TRUE};
	HANDLE rd, wr;
	struct sandbox_ac ac;
	struct wd_err err;
	DWORD n, got = 0;
	uint32_t code = 0;
	int r, ret = 1;
	char *slash;

	if (!GetModuleFileNameA(NULL, self, sizeof(self)) || !(slash = strrchr(self, '\\')) ||
	    !GetTempPathA(sizeof(tmp), tmp))
		return 1;
	*slash = '\0';
	snprintf(echo, sizeof(echo), "%s\\argv_echo.exe", self);
	snprintf(wdir, sizeof(wdir), "%swarden-ac-smoke-%lu", tmp,
		 (unsigned long)GetCurrentProcessId());
	snprintf(mask, sizeof(mask), "%s\\masked", wdir);
	if (!CreateDirectoryA(wdir, NULL) || !CreateDirectoryA(mask, NULL))
		return 1;

	const char *rdl[] = {self}, *wrl[] = {wdir}, *mkl[] = {mask};
	const char *paths[] = {self, wdir, mask};
	const struct sandbox_win_grants g = {rdl, 1, wrl, 1, mkl, 1, 41080};
	const char *argv[] = {echo, "in the container", "\"quoted\""};

	if (!CreatePipe(&rd, &wr, &sa, 0))
		return 1;
	for (size_t i = 0; i < 3; i++)
		before[i] = sddl(paths[i]);
	SetHandleInformation(rd, HANDLE_FLAG_INHERIT, 0);
	struct sandbox_ac_spec spec = {&g,
				       argv,
				       3,
				       "warden.ac-smoke",
				       {256u << 20, 10000, 4},
				       {GetStdHandle(STD_INPUT_HANDLE), wr, wr},
				       NULL};

	wd_err_clear(&err);
	r = sandbox_ac_start(&spec, sandbox_win_api_real(), &ac, &err);
	CloseHandle(wr);
	if (r) {
		printf("ac_smoke: refused (%d): %s\n", r, err.msg);
		ret = r == -EPERM ? 3 : r == -EIO ? 4 : 1;
	} else {
		while (got < sizeof(out) - 1 &&
		       ReadFile(rd, out + got, sizeof(out) - 1 - got, &n, NULL) && n)
			got += n;
		out[got] = '\0';
		r = sandbox_ac_wait(&ac, 10000, &code, &err);
		printf("ac_smoke: ran in the AppContainer: wait %d, exit %u, output:\n%s", r,
		       (unsigned)code, out);
		ret = !r && code == 0 && !strncmp(out, "crt 3\n", 6) ? 0 : 1;
		if (sandbox_ac_stop(&ac, &err)) {
			printf("ac_smoke: undo failed: %s\n", err.msg);
			ret = 1;
		}
	}
	CloseHandle(rd);
	if (!unchanged(paths, before, 3))
		ret = 1;
	else
		printf("ac_smoke: the DACLs of the three folders are as before\n");
	for (size_t i = 0; i < 3; i++)
		free(before[i]);
	RemoveDirectoryA(mask);
	RemoveDirectoryA(wdir);
	printf("ac_smoke: exit %d\n", ret);
	return ret;
}

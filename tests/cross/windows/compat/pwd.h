/* compat/pwd.h - for the Windows build only (tests/cross/windows): Windows has no passwd
 * database. getpwuid() finds no one (NULL, ENOSYS), so policy/validate.c's fall-back for a
 * missing HOME finds no home folder and the policy check fails, as it says, closed;
 * getpwuid_r() is refused too (ENOSYS), so the gateway's lookup of a run's user for the host's
 * ceiling fails and the run is refused (gateway/runpolicy.c). */
#ifndef WARDEN_COMPAT_PWD_H
#define WARDEN_COMPAT_PWD_H
#include "common/win.h"
#include <errno.h>
#include <stddef.h>

struct passwd {
	char *pw_name;
	char *pw_dir;
	gid_t pw_gid;
};

static inline struct passwd *getpwuid(uid_t uid)
{
	(void)uid;
	errno = ENOSYS;
	return NULL;
}
/* getpwuid_r(3), refused: Return: ENOSYS, *@res NULL */
static inline int getpwuid_r(uid_t uid, struct passwd *pw, char *buf, size_t len,
			     struct passwd **res)
{
	(void)uid, (void)pw, (void)buf, (void)len;
	*res = NULL;
	return ENOSYS;
}
#endif
